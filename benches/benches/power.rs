//! Overhead of the power model: the same simulation with NullObserver and with
//! PowerObserver (1 ms samples). Target: < 10% overhead.
//!
//! cargo bench -p ssdsim-benches --bench power -- --measurement-time 5

use criterion::{criterion_group, criterion_main, Criterion};
use power::PowerObserver;
use ssd_core::observer::{NullObserver, Observer};
use ssd_core::sched::Noop;
use ssd_core::units::Dur;
use ssd_core::Simulation;
use ssdsim_host::config::{Precondition, SsdConfig};
use ssdsim_host::workload::{FioGen, RwMode, WorkloadConfig};
use std::time::{Duration, Instant};

fn config() -> SsdConfig {
    let mut c = SsdConfig::default();
    c.nand.blocks_per_plane = 64;
    c.sim.precondition = Precondition::Fill;
    c.workload = WorkloadConfig {
        rw: RwMode::RandRw,
        number_ios: Some(200_000),
        ..Default::default()
    };
    c
}

type Sim<O> = Simulation<ftl::PageFtl, FioGen, Noop, O>;

/// A preconditioned simulation ready to run (setup, not timed).
fn setup<O: Observer>(c: &SsdConfig, make: impl Fn(&ssd_core::Settings) -> O) -> Sim<O> {
    let s = c.validate().unwrap();
    let ftl = ftl::PageFtl::new(&s.config.ftl, &s.shape());
    let src = FioGen::new(&c.workload, s.logical_bytes(), c.sim.seed);
    let obs = make(&s);
    let mut sim = Simulation::new(s, ftl, src, Noop::new(1024, true), obs);
    sim.precondition();
    sim
}

/// Time `run()` only: setup (preconditioning) and teardown stay outside the
/// measurement, so the figure is the observer's cost per simulated event. The
/// report (`finish_report`, O(samples + chips), once per run) is timed apart.
fn timed_runs<O: Observer>(
    iters: u64,
    c: &SsdConfig,
    make: impl Fn(&ssd_core::Settings) -> O + Copy,
    mut after: impl FnMut(&mut Sim<O>, &ssd_core::stats::Report),
) -> Duration {
    let mut total = Duration::ZERO;
    for _ in 0..iters {
        let mut sim = setup(c, make);
        let t = Instant::now();
        let r = sim.run().unwrap();
        total += t.elapsed();
        after(&mut sim, &r);
    }
    total
}

fn bench(cr: &mut Criterion) {
    let c = config();
    let mut g = cr.benchmark_group("power_overhead");
    g.sample_size(10);
    g.bench_function("null_observer", |b| {
        b.iter_custom(|n| timed_runs(n, &c, |_| NullObserver, |_, _| {}))
    });
    g.bench_function("power_observer", |b| {
        b.iter_custom(|n| {
            timed_runs(
                n,
                &c,
                |s| PowerObserver::new(s, Dur::from_ms(1)).unwrap(),
                |_, _| {},
            )
        })
    });
    g.bench_function("power_report", |b| {
        b.iter_custom(|n| {
            let mut total = Duration::ZERO;
            timed_runs(
                n,
                &c,
                |s| PowerObserver::new(s, Dur::from_ms(1)).unwrap(),
                |sim, r| {
                    let t = Instant::now();
                    std::hint::black_box(sim.obs.finish_report(r).unwrap().len());
                    total += t.elapsed();
                },
            );
            total
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
