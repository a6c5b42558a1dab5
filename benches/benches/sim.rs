//! Simulator speed: simulated host requests per wall-clock second on the default
//! device (Lee & Won: 8 channels x 1 chip2, page mapping).
//!
//! * 4 KiB random reads at QD 32 on a filled drive;
//! * 4 KiB random writes at QD 32 with greedy GC at op 0.07, after SNIA-style
//!   steady-state preconditioning.
//!
//! Each sample runs `BATCH` requests on the same preconditioned drive
//! (`Simulation::restart`), so the figure is the steady-state speed.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use ssd_core::config::{GcPolicy, Precondition, SsdConfig};
use ssd_core::observer::NullObserver;
use ssd_core::sched::Noop;
use ssd_core::workload::{FioGen, RwMode, WorkloadConfig};
use ssd_core::Simulation;
use std::time::{Duration, Instant};

const BATCH: u64 = 200_000;

fn drive(
    rw: RwMode,
    precondition: Precondition,
) -> (
    Simulation<ftl::AnyFtl, FioGen, Noop, NullObserver>,
    SsdConfig,
) {
    let mut cfg = SsdConfig::default();
    cfg.ftl.op = 0.07;
    cfg.ftl.gc_policy = GcPolicy::Greedy;
    cfg.sim.precondition = precondition;
    cfg.workload = WorkloadConfig {
        rw,
        bs: ssd_core::Size::kib(4),
        iodepth: 32,
        number_ios: Some(BATCH),
        ..Default::default()
    };
    let s = cfg.validate().unwrap();
    let f = ftl::build(&s).unwrap();
    let src = FioGen::new(&cfg.workload, s.logical_bytes(), 1);
    let mut sim = Simulation::new(s, f, src, Noop::new(1024, true), NullObserver);
    sim.precondition();
    (sim, cfg)
}

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("default_device");
    g.sample_size(10)
        .measurement_time(Duration::from_secs(10))
        .throughput(Throughput::Elements(BATCH));
    for (name, rw, pre) in [
        ("randread_4k_qd32", RwMode::RandRead, Precondition::Fill),
        (
            "randwrite_4k_qd32_steady_greedy_op0.07",
            RwMode::RandWrite,
            Precondition::Steady,
        ),
    ] {
        let (mut sim, cfg) = drive(rw, pre);
        let mut seed = 1;
        g.bench_function(name, |b| {
            b.iter_custom(|iters| {
                let mut total = Duration::ZERO;
                for _ in 0..iters {
                    seed += 1;
                    sim.restart(FioGen::new(
                        &cfg.workload,
                        sim.settings.logical_bytes(),
                        seed,
                    ));
                    let t = Instant::now();
                    let r = sim.run().unwrap();
                    total += t.elapsed();
                    assert_eq!(r.host.requests, BATCH);
                }
                total
            })
        });
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
