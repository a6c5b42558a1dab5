//! End-to-end replay of real traces (../shared/traces) and of the workload
//! personalities through the engine with a real FTL.

use ssd_core::observer::NullObserver;
use ssd_core::sched::Noop;
use ssd_core::stats::Report;
use ssd_core::Simulation;
use ssdsim_host::config::{Precondition, SsdConfig};
use ssdsim_host::personality::{Personality, PersonalityConfig, PersonalityKind};
use ssdsim_host::trace::{self, ReplayOptions, TraceFormat};
use ssdsim_host::workload::RequestSource;

fn small_ssd() -> SsdConfig {
    let mut c = SsdConfig::default();
    c.nand.blocks_per_plane = 64;
    c.sim.precondition = Precondition::Fill; // reads must find written pages
    c
}

fn run<S: RequestSource>(c: &SsdConfig, src: impl FnOnce(u64) -> S) -> Report {
    let s = c.clone().validate().unwrap();
    let ftl = ftl::build(&s.config.ftl, &s.shape()).unwrap();
    let source = src(s.logical_bytes());
    let mut sim = Simulation::new(s, ftl, source, Noop::new(1024, true), NullObserver);
    sim.precondition();
    let r = sim.run().unwrap();
    use ssd_core::ftl::Ftl;
    sim.ftl.check_invariants().unwrap();
    r
}

const PREFIX: u64 = 3000;

#[test]
fn real_trace_prefixes_replay_end_to_end() {
    let Some(dir) = trace::shared_traces_dir(env!("CARGO_MANIFEST_DIR")) else {
        println!("skipped: ../shared/traces not found (set SSDSIM_TRACES)");
        return;
    };
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.file_name().is_some_and(|n| n != "README.md"))
        .collect();
    files.sort();
    assert!(files.len() >= 10);
    let c = small_ssd();
    for p in &files {
        let fmt = trace::detect_file(p).unwrap();
        // the YCSB capture has no Q events: replay its D (issue) events
        let action = if p.to_string_lossy().contains("ycsb") {
            "D"
        } else {
            "Q"
        };
        let po = ReplayOptions {
            blkparse_action: action.into(),
            ..Default::default()
        }
        .parse_options();
        let total = trace::stats_with(p, Some(fmt), &po).unwrap().requests;
        assert!(total > 0, "{}", p.display());
        let want = total.min(PREFIX);
        for closed in [None, Some(8)] {
            let opts = ReplayOptions {
                closed_loop_depth: closed,
                max_requests: Some(PREFIX),
                blkparse_action: action.into(),
                // the CloudPhysics sample has 1 s resolution and a 2 h span
                speed: if fmt == TraceFormat::Cloudphysics {
                    1000.0
                } else {
                    1.0
                },
                ..Default::default()
            };
            let r = run(&c, |cap| {
                trace::open_trace(p, None, &opts.clone().with_capacity(cap)).unwrap()
            });
            println!(
                "{} [{fmt}, {}]: {} req, {:.0} IOPS, mean {:.1} us, wrapped {:?}",
                p.file_name().unwrap().to_string_lossy(),
                if closed.is_some() {
                    "closed qd8"
                } else {
                    "timestamps"
                },
                r.host.requests,
                r.host.iops,
                r.latency_us.all.mean,
                r.notes.get("trace_addresses_wrapped")
            );
            assert_eq!(r.host.requests, want, "{}", p.display());
            assert!(r.notes.contains_key("trace_addresses_wrapped"));
        }
    }
}

#[test]
fn replay_is_deterministic_and_speed_shortens_open_loop_runs() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../traces/synth.spc");
    let c = small_ssd();
    let go = |speed: f64| {
        let o = ReplayOptions {
            speed,
            ..Default::default()
        };
        run(&c, |cap| {
            trace::open_trace(&path, None, &o.with_capacity(cap)).unwrap()
        })
    };
    let a = go(1.0);
    let b = go(1.0);
    assert_eq!(format!("{:?}", a.host), format!("{:?}", b.host));
    assert_eq!(a.latency_us.all.mean, b.latency_us.all.mean);
    let fast = go(2.0);
    assert_eq!(fast.host.requests, a.host.requests);
    assert!(
        fast.host.sim_time_s < a.host.sim_time_s * 0.75,
        "{} vs {}",
        fast.host.sim_time_s,
        a.host.sim_time_s
    );
}

#[test]
fn personalities_run_end_to_end() {
    let c = small_ssd();
    for kind in [
        PersonalityKind::Varmail,
        PersonalityKind::Fileserver,
        PersonalityKind::Webserver,
        PersonalityKind::Oltp,
    ] {
        let mut pc = PersonalityConfig::new(kind);
        pc.requests = 5000;
        if kind == PersonalityKind::Fileserver {
            pc.files = Some(1000); // the small test SSD holds 256 MiB of file slots
        }
        if kind == PersonalityKind::Oltp {
            pc.file_size = Some(ssd_core::Size::mib(256));
        }
        let r = run(&c, |cap| Personality::new(&pc, cap, 9).unwrap());
        let pre = r.notes["personality_prealloc_requests"];
        println!(
            "{kind:?}: {} req ({pre} prealloc), {:.0} IOPS, mean {:.1} us, waf {:.2}",
            r.host.requests,
            r.host.iops,
            r.latency_us.all.mean,
            r.flash.waf.unwrap_or(f64::NAN)
        );
        assert_eq!(r.host.requests, 5000 + pre, "{kind:?}");
    }
}
