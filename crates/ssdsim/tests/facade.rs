//! The facade's builder: `Ssd::builder()` resolves settings as the CLI
//! resolves its flags, so that the same settings give the same report, byte
//! for byte but for the wall-clock fields, as `run_config` over
//! `resolve_config_text` and as the `ssdsim` binary itself; bad settings are
//! refused at `build()` with the field named.

mod common;
use common::{builder, flags, normalized, report_json, ONE_JOB, TWO_JOBS};
use ssdsim::{resolve_config_text, run_config, RunOptions, Ssd, SsdBuilder};
use ssdsim_host::config::{NandConfig, SsdConfig};

#[test]
fn the_builder_reports_as_run_config_over_the_cli_resolution() {
    let ssd = builder().build().unwrap();
    let cfg = resolve_config_text(None, "", &flags()).unwrap();
    assert_eq!(ssd.config(), &cfg);
    assert_eq!(ssd.config().to_toml(), cfg.to_toml());
    let direct = run_config(&cfg, &RunOptions::default()).unwrap();
    let direct = normalized(&(serde_json::to_string_pretty(&direct.report).unwrap() + "\n"));
    assert_eq!(report_json(&ssd), direct);
    // Deterministic: the same Ssd runs to the same report.
    assert_eq!(report_json(&ssd), direct);
}

#[test]
fn a_fio_job_ends_as_fio_ends_it_unless_number_ios_is_set() {
    let ssd = Ssd::builder().fio(ONE_JOB).build().unwrap();
    // One pass over size=16m (fio's end by bytes): no request count.
    assert_eq!(ssd.config().workload.number_ios, None);
    assert_eq!(ssd.config().workload.size, Some(ssd_core::Size(16 << 20)));
    assert_eq!(ssd.config().workload.iodepth, 8);
    assert_eq!(
        ssd.warnings(),
        ["<fio>: accepted without effect on the simulation (host-side fio options): ioengine"]
    );
    let ssd = Ssd::builder().fio(ONE_JOB).number_ios(100).build().unwrap();
    assert_eq!(ssd.config().workload.number_ios, Some(100));
    // Several jobs are flows; a workload setting beside them is refused.
    let ssd = Ssd::builder().fio(TWO_JOBS).build().unwrap();
    assert_eq!(ssd.config().flows.len(), 2);
    let e = Ssd::builder()
        .fio(TWO_JOBS)
        .number_ios(100)
        .build()
        .unwrap_err();
    assert!(
        e.to_string()
            .starts_with("--number_ios: <fio> has several jobs"),
        "{e}"
    );
    // A bad option names its line.
    let e = Ssd::builder()
        .fio("[j]\nrw=sideways\n")
        .build()
        .unwrap_err();
    assert!(e.to_string().starts_with("<fio>:2: "), "{e}");
}

#[test]
fn bad_settings_are_refused_at_build_with_the_field_named() {
    let err = |b: SsdBuilder| b.build().unwrap_err().to_string();
    let e = err(Ssd::builder().ftl("nope"));
    assert!(e.starts_with("ftl.kind: "), "{e}");
    let e = err(Ssd::builder().sched("nope"));
    assert!(e.starts_with("sched.kind: "), "{e}");
    let e = err(Ssd::builder().set("ftl.op", "-1"));
    assert!(e.starts_with("ftl.op: "), "{e}");
    let e = err(Ssd::builder().set("ftl.no_such_field", "1"));
    assert_eq!(e, "ftl.no_such_field: unknown configuration field");
    let e = err(Ssd::builder().nand("chip9"));
    assert!(e.contains("unknown nand preset \"chip9\""), "{e}");
    let e = err(Ssd::builder().time_limit("10"));
    assert!(e.starts_with("--time-limit: \"10\" has no unit"), "{e}");
    let e = err(Ssd::builder().interface("usb"));
    assert!(e.starts_with("host.interface: "), "{e}");
    // Each error is the one the CLI's resolution gives for the same flag.
    let cli = |f: &str, v: &str| {
        let flags = [(f.to_string(), v.to_string())];
        match resolve_config_text(None, "", &flags) {
            Ok(c) => run_config(&c, &RunOptions::default())
                .err()
                .expect("refused")
                .to_string(),
            Err(e) => e.to_string(),
        }
    };
    assert_eq!(err(Ssd::builder().set("ftl.op", "-1")), cli("ftl.op", "-1"));
    assert_eq!(err(Ssd::builder().ftl("nope")), cli("ftl", "nope"));
    // What only building the FTL or opening the trace finds is found at
    // build() too, as run_config finds it before simulating.
    let e = err(Ssd::builder().set("trace", "/no/such/ssdsim.trace"));
    assert_eq!(e, cli("trace", "/no/such/ssdsim.trace"));
    let e = err(Ssd::builder().ftl("dftl").set("nand.blocks_per_plane", 64));
    assert!(e.starts_with("ftl.op: DFTL needs"), "{e}");
    // A configuration that parses but cannot be simulated: validation's error.
    let mut c = SsdConfig::default();
    c.nand.pages_per_block = 0;
    let e = err(Ssd::builder().config(c.clone()));
    assert_eq!(e, c.validate().unwrap_err().to_string());
    assert!(e.starts_with("nand.pages_per_block"), "{e}");
    // TOML text: its errors are prefixed as a file's are.
    let e = err(Ssd::builder().toml("[ftl]\nkind = 3\n"));
    assert!(e.starts_with("<toml>: "), "{e}");
    let e = err(Ssd::builder().config_file("/no/such/ssdsim.toml"));
    assert!(e.starts_with("/no/such/ssdsim.toml: cannot read"), "{e}");
}

#[test]
fn settings_apply_in_the_clis_order() {
    // Presets first, then the TOML, then the other settings in call order.
    let ssd = Ssd::builder()
        .toml("[ftl]\nkind = \"fast\"\nop = 0.2\n")
        .ftl("dftl")
        .nand("chip3")
        .build()
        .unwrap();
    assert_eq!(ssd.config().ftl.kind, "dftl");
    assert_eq!(ssd.config().ftl.op, 0.2);
    assert_eq!(ssd.config().nand.name, "chip3");
    // A later setting wins over an earlier one.
    let ssd = Ssd::builder().ftl("fast").ftl("page").build().unwrap();
    assert_eq!(ssd.config().ftl.kind, "page");
    // A base configuration is where the presets start from.
    let mut base = SsdConfig::default();
    base.ftl.kind = ssd_core::config::FtlKind::Bast;
    base.layout.channels = 2;
    let ssd = Ssd::builder().config(base).nand("chip1").build().unwrap();
    assert_eq!(ssd.config().ftl.kind, "bast");
    assert_eq!(ssd.config().layout.channels, 2);
    assert_eq!(ssd.config().nand, NandConfig::preset("chip1").unwrap());
    // A file's nand_preset loses to the nand setting, as to --nand.
    let ssd = Ssd::builder()
        .toml("nand_preset = \"chip3\"\n")
        .nand("chip1")
        .build()
        .unwrap();
    assert_eq!(ssd.config().nand.name, "chip1");
}

#[test]
fn whole_sections_equal_their_fields_set_one_by_one() {
    let mut nand = NandConfig::preset("chip3").unwrap();
    nand.blocks_per_plane = 128;
    let w = ssdsim_host::workload::WorkloadConfig {
        rw: ssdsim_host::workload::RwMode::RandWrite,
        iodepth: 4,
        number_ios: Some(1_000),
        ..Default::default()
    };
    let typed = Ssd::builder()
        .nand_config(nand.clone())
        .workload(w.clone())
        .build()
        .unwrap();
    let by_text = Ssd::builder()
        .nand("chip3")
        .set("nand.blocks_per_plane", 128)
        .set("rw", "randwrite")
        .set("iodepth", 4)
        .number_ios(1_000)
        .build()
        .unwrap();
    assert_eq!(typed.config().nand, nand);
    assert_eq!(typed.config().workload, w);
    assert_eq!(typed.config().nand, by_text.config().nand);
    assert_eq!(typed.config().workload, by_text.config().workload);
    // A section replaces the whole of it: a field set before is gone.
    let ssd = Ssd::builder()
        .set("iodepth", 9)
        .workload(w.clone())
        .build()
        .unwrap();
    assert_eq!(ssd.config().workload.iodepth, 4);
    // A section that cannot be simulated is refused with its field.
    let mut bad = nand;
    bad.dies_per_chip = 0;
    let e = Ssd::builder().nand_config(bad).build().unwrap_err();
    assert!(e.to_string().starts_with("nand.dies_per_chip"), "{e}");
}

/// The drive's parts as typed values (`ftl_config`, `sched_config`,
/// `layout`, `page_cache`) set what the CLI's names and fields set, and
/// run to the same report.
#[test]
fn typed_parts_equal_their_names() {
    use ssdsim_host::config::{FtlConfig, FtlKind, SchedConfig};
    let base = Ssd::builder().build().unwrap().config().clone();
    let ftl = FtlConfig {
        kind: FtlKind::Dftl,
        op: 0.2,
        ..base.ftl.clone()
    };
    let sched = SchedConfig {
        kind: "deadline".into(),
        ..base.sched.clone()
    };
    let mut layout = base.layout.clone();
    layout.channels = 4;
    let mut cache = base.page_cache.clone();
    cache.dirty_ratio = 10;
    let typed = Ssd::builder()
        .ftl_config(ftl.clone())
        .sched_config(sched.clone())
        .layout(layout.clone())
        .page_cache(cache.clone())
        .set("rw", "randwrite")
        .number_ios(2_000)
        .build()
        .unwrap();
    let named = Ssd::builder()
        .ftl("dftl")
        .set("ftl.op", 0.2)
        .sched("deadline")
        .set("layout.channels", 4)
        .set("page_cache.dirty_ratio", 10)
        .set("rw", "randwrite")
        .number_ios(2_000)
        .build()
        .unwrap();
    assert_eq!(typed.config().ftl, ftl);
    assert_eq!(typed.config().sched, sched);
    assert_eq!(typed.config().layout, layout);
    assert_eq!(typed.config().page_cache, cache);
    assert_eq!(typed.config(), named.config());
    let (mut a, mut b) = (typed.run().unwrap().report, named.run().unwrap().report);
    (a.run.wall_s, b.run.wall_s) = (0.0, 0.0);
    assert_eq!(a.ftl.kind, "dftl");
    assert_eq!(
        serde_json::to_string(&a).unwrap(),
        serde_json::to_string(&b).unwrap()
    );
    // A typed part that cannot be simulated is refused naming its field.
    let bad = FtlConfig {
        op: -1.0,
        ..base.ftl.clone()
    };
    let e = Ssd::builder().ftl_config(bad).build().unwrap_err();
    assert!(e.to_string().starts_with("ftl.op"), "{e}");
}

#[test]
fn run_options_are_the_ssds() {
    let ssd = Ssd::builder()
        .number_ios(500)
        .power_model(false)
        .build()
        .unwrap();
    assert!(!ssd.options().power);
    let r = ssd.run().unwrap().report;
    assert_eq!(r.host.requests, 500);
    assert!(!r.extra.contains_key("energy_j"));
    let r = Ssd::builder()
        .number_ios(500)
        .build()
        .unwrap()
        .run()
        .unwrap()
        .report;
    assert!(r.extra.contains_key("energy_j"));
}

/// Without the `plots` feature a plot is refused before anything runs: by
/// `build()`, and by `run_config`.
#[cfg(not(feature = "plots"))]
#[test]
fn a_plot_without_the_plots_feature_is_refused() {
    let opts = RunOptions {
        plot_power: Some(std::env::temp_dir().join("ssdsim-no-plots.svg")),
        ..RunOptions::default()
    };
    let ssd = Ssd::builder().number_ios(100).options(opts.clone()).build();
    let e = ssd.expect_err("refused").to_string();
    assert!(e.contains("`plots` feature"), "{e}");
    let cfg = Ssd::builder()
        .number_ios(100)
        .build()
        .unwrap()
        .config()
        .clone();
    let e = run_config(&cfg, &opts).err().expect("refused").to_string();
    assert!(e.contains("`plots` feature"), "{e}");
}

/// `Ssd::custom()` with no part replaced runs the configured parts: the
/// report of `Ssd::run`, byte for byte but for the wall-clock fields, with
/// the power model and without.
#[test]
fn custom_parts_left_as_configured_report_as_run() {
    for power in [true, false] {
        let ssd = builder().power_model(power).build().unwrap();
        let custom = ssd.custom().run().unwrap();
        let custom = normalized(&(serde_json::to_string_pretty(&custom.report).unwrap() + "\n"));
        assert_eq!(custom, report_json(&ssd), "power model {power}");
    }
}

/// A part of one's own replaces the configured one (its name is reported),
/// and what needs the built-in parts is refused before the run, naming it.
#[test]
fn custom_parts_replace_the_configured_ones_and_refuse_what_needs_them() {
    use ssd_core::sched::Noop;
    use ssdsim::custom::Settings;
    use ssdsim_host::workload::{HostRequest, IoOp, Timing, VecSource};
    let ssd = builder().build().unwrap();
    let out = ssd
        .custom()
        .scheduler(|_: &Settings| Noop::new(256, false))
        .source(|s: &Settings| {
            let sectors = s.geometry.page_size / 512;
            let reqs = (0..500u64)
                .map(|i| HostRequest {
                    arrival: ssd_core::SimTime::ZERO,
                    op: IoOp::Write,
                    lba: i * sectors as u64,
                    sectors,
                    stream: 0,
                    tag: 0,
                    sync: false,
                    placement: ssd_core::workload::Placement::NONE,
                })
                .collect();
            VecSource::new(reqs, Timing::ClosedLoop { depth: 4 })
        })
        .run()
        .unwrap();
    assert_eq!(out.report.sched.kind, "noop");
    assert_eq!(out.report.host.writes, 500);
    assert_eq!(out.report.host.reads, 0);
    let saving = RunOptions {
        drive_state: ssdsim::state::DriveStateOpts {
            save: Some(std::env::temp_dir().join("ssdsim-never-written.state")),
            ..Default::default()
        },
        ..RunOptions::default()
    };
    let e = builder()
        .options(saving)
        .build()
        .unwrap()
        .custom()
        .run()
        .err()
        .expect("refused");
    assert!(
        e.to_string().starts_with(
            "a saved or shared drive state (RunOptions::drive_state) needs the built-in parts"
        ),
        "{e}"
    );
}
