//! The power summary (`power_w`) agrees with the series it summarises and
//! with the energy report: min <= mean <= max, whatever the run (time-limit
//! cuts, a window shorter than one sample, huge operation times, a slow host
//! link, a drain, open-loop arrivals).

use power::PowerObserver;
use ssd_core::sched::Noop;
use ssd_core::units::Dur;
use ssd_core::Simulation;
use ssdsim_host::config::{Precondition, SsdConfig};
use ssdsim_host::workload::{FioGen, RwMode, WorkloadConfig};

#[derive(Clone, Debug)]
struct Case {
    rw: RwMode,
    n: u64,
    iodepth: u32,
    rate_iops: Option<u64>,
    sample_ns: u64,
    time_limit_ns: Option<u64>,
    t_r_ns: Option<u64>,
    link_mbps: Option<f64>,
    drain: bool,
}

fn run(c: &Case) -> PowerObserver {
    let mut cfg = SsdConfig::default();
    cfg.nand.blocks_per_plane = 64;
    cfg.sim.precondition = Precondition::None;
    cfg.sim.drain = c.drain;
    cfg.sim.time_limit = c.time_limit_ns.map(Dur);
    if let Some(t) = c.t_r_ns {
        cfg.nand.t_r = Dur(t);
    }
    if let Some(l) = c.link_mbps {
        cfg.host.link_mbps = l;
    }
    cfg.workload = WorkloadConfig {
        rw: c.rw,
        number_ios: Some(c.n),
        iodepth: c.iodepth,
        rate_iops: c.rate_iops,
        ..Default::default()
    };
    let s = cfg.validate().unwrap();
    let ftl = ftl::build(&s.config.ftl, &s.shape()).unwrap();
    let src = FioGen::new(&cfg.workload, s.logical_bytes(), 7);
    let obs = PowerObserver::new(&s, Dur(c.sample_ns)).unwrap();
    let mut sim = Simulation::new(s, ftl, src, Noop::new(1024, true), obs);
    sim.precondition();
    let _ = sim.run().unwrap();
    sim.obs
}

fn check(c: &Case) -> Result<(), String> {
    let o = run(c);
    let e = o.energy().unwrap();
    let p = o.power_stats().unwrap();
    let smp = o.samples();
    let series_j: f64 = smp.iter().map(|s| s.total_w * s.len_s).sum();
    let rel = (series_j - e.total).abs() / e.total.abs().max(1e-300);
    if rel > 1e-9 {
        return Err(format!(
            "series energy {series_j} vs total {} (rel {rel:e}) {p:?}",
            e.total
        ));
    }
    if !(p.min <= p.mean && p.mean <= p.max) {
        return Err(format!(
            "min {} mean {} max {}: {p:?}",
            p.min, p.mean, p.max
        ));
    }
    Ok(())
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(
        std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(48)
    ))]
    #[test]
    fn min_le_mean_le_max(
        rw in proptest::sample::select(vec![RwMode::RandRead, RwMode::RandWrite, RwMode::Write, RwMode::RandRw]),
        n in 1u64..400,
        iodepth in 1u32..16,
        rate in proptest::option::of(1u64..200_000),
        sample_ns in proptest::sample::select(vec![1u64, 7, 1000, 33_333, 1_000_000, 7_000_000, 1_000_000_000]),
        limit in proptest::option::of(1u64..50_000_000),
        t_r in proptest::option::of(proptest::sample::select(vec![1u64, 1_000, 100_000_000, 1_000_000_000])),
        link in proptest::option::of(proptest::sample::select(vec![0.001f64, 0.5, 50.0, 1e9])),
        drain in proptest::bool::ANY,
    ) {
        let c = Case { rw, n, iodepth, rate_iops: rate, sample_ns, time_limit_ns: limit, t_r_ns: t_r, link_mbps: link, drain };
        if let Err(m) = check(&c) {
            return Err(proptest::test_runner::TestCaseError::fail(format!("{c:?}: {m}")));
        }
    }
}

/// Where the power is flat the mean and the samples are the same number
/// computed two ways: an idle window of any length and sampling interval
/// (one sample or many, a short last one) summarises as that number.
#[test]
fn flat_power_summarises_without_rounding_inversions() {
    let s = SsdConfig::default().validate().unwrap();
    let mut bad = Vec::new();
    for end in [1u64, 7, 999, 1_000, 1_001, 2_500_000, 10_314_656, 1 << 40] {
        for sample in [1u64, 3, 1_000, 33_333, 1_000_000, 1_000_000_000] {
            let mut o = PowerObserver::new(&s, Dur(sample)).unwrap();
            ssd_core::observer::Observer::finish(&mut o, ssd_core::units::SimTime(end));
            let p = o.power_stats().unwrap();
            if !(p.min <= p.mean && p.mean <= p.max) {
                bad.push(format!("end {end} sample {sample}: {p:?}"));
            }
            if p.samples == 1 {
                assert_eq!((p.min, p.max, p.std), (p.mean, p.mean, 0.0), "{p:?}");
            }
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

/// The cases that showed the inversion: a run cut by its time limit inside
/// the first sample (mean one rounding step above the max), and a run whose
/// window is one sample (mean below the min).
#[test]
fn reported_inversions_are_gone() {
    let base = Case {
        rw: RwMode::RandRead,
        n: 2000,
        iodepth: 8,
        rate_iops: None,
        sample_ns: 1_000_000,
        time_limit_ns: Some(1_000_000),
        t_r_ns: None,
        link_mbps: None,
        drain: false,
    };
    check(&base).unwrap();
    check(&Case {
        rw: RwMode::Write,
        n: 3,
        time_limit_ns: None,
        sample_ns: 1_000_000_000,
        ..base.clone()
    })
    .unwrap();
    check(&Case {
        rw: RwMode::RandWrite,
        n: 1,
        iodepth: 1,
        sample_ns: 33_333,
        time_limit_ns: Some(10_314_656),
        link_mbps: Some(0.001),
        ..base
    })
    .unwrap();
}
