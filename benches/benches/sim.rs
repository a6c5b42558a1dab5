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
use ssdsim_benches::{default_device, restart};
use ssdsim_host::config::Precondition;
use ssdsim_host::workload::RwMode;
use std::time::{Duration, Instant};

const BATCH: u64 = 200_000;

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
        let (mut sim, cfg) = default_device(rw, pre, BATCH);
        let mut seed = 1;
        g.bench_function(name, |b| {
            b.iter_custom(|iters| {
                let mut total = Duration::ZERO;
                for _ in 0..iters {
                    seed += 1;
                    restart(&mut sim, &cfg, seed);
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
