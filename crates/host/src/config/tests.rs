//! The configuration's own tests: defaults, presets, TOML, and the
//! refusals of each section.

use super::*;
use ssd_core::config::{FtlKind, FtlSection};
use ssd_core::devices::{device_preset, sequential_ceilings};
use ssd_core::units::{Dur, Size};
#[test]
fn default_is_lee_won() {
    let s = SsdConfig::default().validate().unwrap();
    assert_eq!(s.geometry.channels, 8);
    assert_eq!(s.geometry.page_size, 4096);
    assert_eq!(s.geometry.physical_bytes(), 16 << 30);
    assert_eq!(s.page_xfer_time(), Dur::from_us(100));
}
/// An integer the TOML echo cannot hold is named by its dotted path,
/// inside an array of tables too; of two, the first in sorted key order
/// (`sim` before `workload`), as the JSON tree it was found in orders
/// them.
#[test]
fn check_writable_names_the_first_integer_beyond_i64() {
    let mut c = SsdConfig::default();
    c.check_writable().unwrap();
    c.workload.number_ios = Some(u64::MAX);
    let e = c.check_writable().unwrap_err().to_string();
    assert_eq!(
        e,
        "workload.number_ios: 18446744073709551615 is out of range: the configuration \
         is written as TOML, whose integers are at most 9223372036854775807"
    );
    c.sim.seed = i64::MAX as u64 + 1;
    let e = c.check_writable().unwrap_err().to_string();
    assert!(
        e.starts_with("sim.seed: 9223372036854775808 is out of range"),
        "{e}"
    );
    let mut c = SsdConfig::default();
    let mut w = c.workload.clone();
    w.number_ios = Some(u64::MAX);
    c.flows = vec![
        crate::flows::FlowConfig::workload("a", c.workload.clone()),
        crate::flows::FlowConfig::workload("b", w),
    ];
    let e = c.check_writable().unwrap_err().to_string();
    assert!(e.starts_with("flow.1.workload.number_ios: 1844"), "{e}");
}
#[test]
fn more_planes_than_the_engine_tracks_are_refused() {
    let mut c = SsdConfig::default();
    c.nand.planes_per_die = 17;
    let e = c.validate().unwrap_err().to_string();
    assert!(
        e.contains("nand.planes_per_die") && e.contains("at most 16"),
        "{e}"
    );
    c.nand.planes_per_die = 16;
    c.nand.blocks_per_plane = 64;
    c.validate().unwrap();
}
/// Found with the config_toml fuzz target's echo property: TOML reads
/// `nan`, `inf` and negative floats for power values, which validated and
/// were echoed as text that does not read back ("NaNnV", "infW", "-3.3V")
/// and would give NaN or negative energies. They are refused, by field.
#[test]
fn power_values_are_finite_and_not_negative() {
    for (text, field) in [
        ("[power]\nvoltage = nan\n", "power.voltage"),
        ("[power]\nvoltage = -3.3\n", "power.voltage"),
        (
            "[power]\ndram_active_power = inf\n",
            "power.dram_active_power",
        ),
        (
            "[power]\nflash_read_energy = -1e-6\n",
            "power.flash_read_energy",
        ),
    ] {
        let c = SsdConfig::from_toml_over(None, text, "p.toml").unwrap();
        let e = c.validate().unwrap_err().to_string();
        assert!(e.starts_with(field) && e.contains("finite"), "{text}: {e}");
    }
    for p in PowerConfig::presets() {
        p.validate().unwrap();
    }
}
#[test]
fn every_chip_preset_is_2gib_for_lee_won() {
    for n in ["chip1", "chip2", "chip3"] {
        assert_eq!(NandConfig::preset(n).unwrap().chip_bytes(), 2 << 30, "{n}");
    }
}
#[test]
fn toml_roundtrip_and_unknown_fields() {
    let c = SsdConfig::default();
    let back = SsdConfig::from_toml_over(None, &c.to_toml(), "x.toml").unwrap();
    assert_eq!(back, c);
    let e =
        SsdConfig::from_toml_over(None, "[nand]\npage_sise = \"4KiB\"\n", "x.toml").unwrap_err();
    assert!(e.to_string().contains("nand.page_sise"), "{e}");
    // A bad value names its field too (the merged table has no line).
    for (text, field) in [
        ("[nand]\nt_r = \"abc\"\n", "nand.t_r: "),
        ("[layout]\nchannels = -1\n", "layout.channels: "),
        ("[ftl]\nop = \"x\"\n", "ftl.op: "),
    ] {
        let e = SsdConfig::from_toml_over(None, text, "x.toml").unwrap_err();
        assert!(e.to_string().contains(field), "{text}: {e}");
    }
    let c = SsdConfig::from_toml_over(
        None,
        "nand_preset = \"chip3\"\n[layout]\nchannels = 4\n",
        "x.toml",
    )
    .unwrap();
    assert_eq!(c.nand.name, "chip3");
    assert_eq!(c.layout.channels, 4);
}
#[test]
fn zoo_fields_default_validate_and_name_themselves() {
    // Files written before these fields existed still load.
    let c = SsdConfig::from_toml_over(None, "[ftl]\nkind = \"bast\"\n", "x.toml").unwrap();
    assert_eq!(c.ftl.log.log_area, 0.05);
    assert_eq!(c.ftl.wear_leveling, WearLeveling::None);
    let s = c.validate().unwrap();
    // Hybrids expose whole data blocks, with the log area carved out first.
    let g = s.geometry;
    let ppb = g.pages_per_block as u64;
    assert_eq!(s.logical_pages % ppb, 0);
    let logs = c.ftl.log.log_blocks(g.total_blocks() as u64) * ppb;
    assert!(s.logical_pages as f64 <= (g.total_pages() - logs) as f64 / 1.07);
    let mut bad = c.clone();
    bad.ftl.log.log_area = 0.7;
    assert!(bad
        .validate()
        .unwrap_err()
        .to_string()
        .contains("ftl.log_area"));
    let mut bad = c.clone();
    bad.ftl.last.seq_threshold = Size(0);
    // BAST does not read LAST's threshold: accepted, and named as unread.
    bad.validate().unwrap();
    assert_eq!(
        bad.ftl.unread_fields().len(),
        1,
        "{:?}",
        bad.ftl.unread_fields()
    );
    assert!(bad.ftl.unread_fields()[0].starts_with("ftl.last_seq_threshold = \"0B\""));
    bad.ftl.kind = FtlKind::Last;
    let e = bad.validate().unwrap_err().to_string();
    assert!(e.contains("ftl.last_seq_threshold"), "{e}");
    let e = SsdConfig::from_toml_over(None, "[ftl]\nwear_leveling = \"sometimes\"\n", "x.toml")
        .unwrap_err()
        .to_string();
    assert!(e.contains("x.toml") && e.contains("sometimes"), "{e}");
}
#[test]
fn other_ftls_fields_are_accepted_and_named() {
    // A file (or a sweep's base) may set fields of several FTLs; the
    // chosen one's are read and checked, the others' named as unread.
    let text = "[ftl]\nkind = \"page\"\ncmt_size = \"64KiB\"\nlog_area = 0.1\ndrain_merge = true\n";
    let c = SsdConfig::from_toml_over(None, text, "x.toml").unwrap();
    assert_eq!(c.ftl.section(), FtlSection::Page);
    c.validate().unwrap();
    let notes = c.ftl.unread_fields();
    assert_eq!(notes.len(), 3, "{notes:?}");
    assert!(
        notes[0].starts_with("ftl.log_area = 0.1 is not read"),
        "{notes:?}"
    );
    assert!(
        notes[2].starts_with("ftl.cmt_size = \"64KiB\""),
        "{notes:?}"
    );
    // The values stay (the echo keeps them), so a later layer may pick the
    // FTL that reads them.
    let mut d = c.clone();
    d.ftl.kind = FtlKind::Dftl;
    assert_eq!(d.ftl.unread_fields().len(), 2);
    assert!(matches!(d.ftl.section(), FtlSection::Dftl(t) if t.cmt_size == Size::kib(64)));
    let mut f = c.clone();
    f.ftl.kind = FtlKind::Fast;
    assert!(f.ftl.drain_merge() && !c.ftl.drain_merge());
    // The default configuration has nothing unread; an unknown FTL is refused
    // with the list of names.
    assert!(SsdConfig::default().ftl.unread_fields().is_empty());
    let e = SsdConfig::from_toml_over(None, "[ftl]\nkind = \"nosuch\"\n", "x.toml")
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("ftl.kind: unknown FTL \"nosuch\" (known: page, block"),
        "{e}"
    );
}
#[test]
fn gc_mode_settings_checked() {
    let mut c = SsdConfig::default();
    assert_eq!(c.ftl.gc_mode(), GcMode::Paced);
    let mut fast = c.clone();
    fast.ftl.kind = FtlKind::Fast;
    assert_eq!(fast.ftl.gc_mode(), GcMode::Blocking);
    c.ftl.gc_mode = Some(GcMode::Paced);
    assert_eq!(c.ftl.soft_threshold_blocks(), 3);
    c.validate().unwrap();
    let mut bad = c.clone();
    bad.ftl.kind = FtlKind::Fast;
    let e = bad.validate().unwrap_err().to_string();
    assert!(e.contains("ftl.gc_mode") && e.contains("fast"), "{e}");
    let mut bad = c.clone();
    bad.ftl.gc_soft_threshold_blocks = Some(2);
    let e = bad.validate().unwrap_err().to_string();
    assert!(
        e.contains("ftl.gc_soft_threshold_blocks") && e.contains("above"),
        "{e}"
    );
    let mut bad = c.clone();
    bad.ftl.gc_soft_threshold_blocks = Some(100_000);
    let e = bad.validate().unwrap_err().to_string();
    assert!(e.contains("spare blocks per plane"), "{e}");
}
#[test]
fn impossible_geometry_refused() {
    let mut c = SsdConfig::default();
    c.layout.channels = 0;
    assert!(c
        .validate()
        .unwrap_err()
        .to_string()
        .contains("layout.channels"));
    let mut c = SsdConfig::default();
    c.ftl.op = 0.0001;
    assert!(c.validate().unwrap_err().to_string().contains("ftl.op"));
    let mut c = SsdConfig::default();
    c.ftl.kind = FtlKind::Dftl;
    c.ftl.dftl.cmt_size = Size(4);
    assert!(c
        .validate()
        .unwrap_err()
        .to_string()
        .contains("ftl.cmt_size"));
    let mut c = SsdConfig::default();
    c.ftl.kind = FtlKind::Dftl;
    c.ftl.dftl.cmt_entry_bytes = 0;
    let e = c.validate().unwrap_err().to_string();
    assert!(e.contains("ftl.cmt_entry_bytes"), "{e}");
    let e = SsdConfig::from_toml_over(None, "[ftl]\ncmt_policy = \"lfu\"\n", "x.toml")
        .unwrap_err()
        .to_string();
    assert!(e.contains("x.toml") && e.contains("lfu"), "{e}");
}

/// Every preset resolves to a valid configuration with the paper's
/// capacity (within the GB-versus-GiB and over-provisioning margin) and
/// its fitted idle power adding up to Table 4's.
#[test]
fn every_device_resolves_with_its_capacity_and_idle_power() {
    let table4 = [
        ("park-old", 32.0, 1.075),
        ("park-mlc", 32.0, 0.519),
        ("park-mtron", 16.0, 0.937),
        ("park-tgn", 128.0, 0.210),
        ("sun-ssd-i", 80.0, 0.15),
        ("sun-ssd-s", 64.0, 1.5),
        ("sun-ssd-k", 64.0, 3.3),
    ];
    for (name, gb, idle) in table4 {
        let c = SsdConfig::from_toml_over(None, &format!("device = \"{name}\""), "t")
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        c.validate().unwrap_or_else(|e| panic!("{name}: {e}"));
        let n = &c.nand;
        let chip = n.page_size.0
            * n.pages_per_block as u64
            * n.blocks_per_plane as u64
            * n.planes_per_die as u64
            * n.dies_per_chip as u64;
        let raw = chip * (c.layout.channels * c.layout.ways) as u64;
        let ratio = raw as f64 / (gb * 1e9);
        assert!((1.0..1.2).contains(&ratio), "{name}: raw {raw} for {gb} GB");
        let chips = (c.layout.channels * c.layout.ways) as f64;
        let p = &c.power;
        let sum = p.cpu_idle_power.0
            + p.dram_standby_power.0
            + chips * p.flash_idle_current.0 * p.voltage.0
            + p.link_idle_power.0;
        assert!(
            (sum - idle).abs() < 1e-3,
            "{name}: idle {sum} W, Table 4 {idle} W"
        );
    }
    // The closed forms each preset's `about` quotes (the calibrated presets'
    // after `ssdsim calibrate` fitted their bus rate and tPROG).
    for (name, r, w) in [
        ("park-old", 40.0, 40.0),
        ("park-mlc", 164.8, 93.1),
        ("park-mtron", 132.3, 86.0),
        ("park-tgn", 232.1, 200.6),
        ("sun-ssd-i", 230.1, 73.9),
        ("sun-ssd-s", 103.3, 103.3),
        ("sun-ssd-k", 240.7, 140.2),
    ] {
        let c = SsdConfig::default().with_device(name).unwrap();
        let (cr, cw) = sequential_ceilings(&c.nand, &c.layout, &c.host);
        assert!(
            (cr - r).abs() < 0.1 && (cw - w).abs() < 0.1,
            "{name}: {cr} / {cw}"
        );
    }
    let err = device_preset("nope").unwrap_err().to_string();
    assert!(
        err.contains("device: unknown device preset \"nope\""),
        "{err}"
    );
}

/// A device file is a drive's sections over a built-in preset at most: its
/// fields replace the configuration's as a preset's do, found beside the
/// configuration that names it; a file naming another file is refused.
#[test]
fn a_device_file_is_a_drive() {
    let dir = std::env::temp_dir().join(format!("ssdsim-devfile-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let drive = SsdConfig::default()
        .with_device("sun-ssd-i")
        .unwrap()
        .drive_toml();
    std::fs::write(dir.join("fitted.toml"), &drive).unwrap();
    let by_file = SsdConfig::default()
        .with_device(&dir.join("fitted.toml").display().to_string())
        .unwrap();
    assert_eq!(
        by_file,
        SsdConfig::default().with_device("sun-ssd-i").unwrap()
    );
    let cfg = dir.join("run.toml");
    std::fs::write(&cfg, "device = \"fitted.toml\"\n[layout]\nchannels = 4\n").unwrap();
    let c = SsdConfig::from_toml_over(
        None,
        "device = \"fitted.toml\"\n",
        &cfg.display().to_string(),
    )
    .unwrap();
    assert_eq!(c.nand, by_file.nand, "relative to the naming file");
    std::fs::write(dir.join("loop.toml"), "device = \"fitted.toml\"\n").unwrap();
    let err = SsdConfig::default()
        .with_device(&dir.join("loop.toml").display().to_string())
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("starts from a built-in device preset"),
        "{err}"
    );
    assert!(is_device_file("a/b") && is_device_file("x.toml") && !is_device_file("sun-ssd-i"));
    let _ = std::fs::remove_dir_all(&dir);
}

/// `ftl.p2l_store = "auto"` puts the page FTL's P2L in a file above 2^27
/// physical pages, says so, and leaves the drive's shape as it is.
#[test]
fn the_p2l_store_is_noted_where_auto_picks_a_file_and_shapes_no_drive() {
    use ssd_core::config::P2lStore;
    let spill_note = |c: &SsdConfig| c.notes().iter().any(|n| n.contains("p2l_store"));
    let mut big = SsdConfig::default();
    big.layout.channels = 16;
    big.layout.ways = 4;
    big.nand.blocks_per_plane = 16384;
    let pages = big.layout.geometry(&big.nand).unwrap().total_pages();
    assert_eq!(pages, 1 << 28);
    assert!(P2lStore::Auto.in_file(pages) && !P2lStore::Auto.in_file(1 << 27));
    assert!(spill_note(&big));
    assert!(!spill_note(&SsdConfig::default()));
    let mut memory = big.clone();
    memory.ftl.p2l_store = P2lStore::Memory;
    assert!(!spill_note(&memory));
    assert_eq!(memory.state_shape(), big.state_shape());
    let mut dftl = big.clone();
    dftl.ftl.kind = FtlKind::Dftl;
    assert!(!spill_note(&dftl));
}
