//! Overhead of the power model: the same simulation with NullObserver and with
//! PowerObserver (1 ms samples). Target: < 10% overhead.
//!
//! cargo bench -p ssdsim-benches --bench power -- --measurement-time 5

use criterion::{criterion_group, criterion_main, BatchSize, Criterion};
use power::PowerObserver;
use ssd_core::config::{Precondition, SsdConfig};
use ssd_core::observer::{NullObserver, Observer};
use ssd_core::sched::Noop;
use ssd_core::units::Dur;
use ssd_core::workload::{FioGen, RwMode, WorkloadConfig};
use ssd_core::Simulation;

fn config() -> SsdConfig {
    let mut c = SsdConfig::default();
    c.nand.blocks_per_plane = 64;
    c.sim.precondition = Precondition::Fill;
    c.workload = WorkloadConfig {
        rw: RwMode::RandRw,
        number_ios: Some(20_000),
        ..Default::default()
    };
    c
}

type Sim<O> = Simulation<ftl::PageFtl, FioGen, Noop, O>;

/// A preconditioned simulation ready to run (setup, not timed).
fn setup<O: Observer>(c: &SsdConfig, make: impl Fn(&ssd_core::Settings) -> O) -> Sim<O> {
    let s = c.validate().unwrap();
    let ftl = ftl::PageFtl::new(&s);
    let src = FioGen::new(&c.workload, s.logical_bytes(), c.sim.seed);
    let obs = make(&s);
    let mut sim = Simulation::new(s, ftl, src, Noop::new(1024, true), obs);
    sim.precondition();
    sim
}

fn bench(cr: &mut Criterion) {
    let c = config();
    let mut g = cr.benchmark_group("power_overhead");
    g.sample_size(10);
    g.bench_function("null_observer", |b| {
        b.iter_batched(
            || setup(&c, |_| NullObserver),
            |mut sim| sim.run().unwrap().host.requests,
            BatchSize::LargeInput,
        )
    });
    g.bench_function("power_observer", |b| {
        b.iter_batched(
            || setup(&c, |s| PowerObserver::new(s, Dur::from_ms(1)).unwrap()),
            |mut sim| {
                let r = sim.run().unwrap();
                sim.obs.finish_report(&r).unwrap().len()
            },
            BatchSize::LargeInput,
        )
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
