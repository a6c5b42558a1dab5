//! Simulator speed per FTL: simulated host requests per second of wall time
//! through the full `Simulation`, on a small drive (2 channels x chip2 with 64
//! blocks per plane: 128 MiB, 4 KiB pages, 64 pages per block), after a
//! sequential fill. Two workloads: steady-state 4 KiB random writes, and an
//! OLTP-like 70/30 random read/write mix of 8 KiB requests with zipf(0.9)
//! addresses. Criterion's "elements/s" is simulated requests per second.
//!
//! `cargo bench -p ssdsim-benches --bench ftl -- --measurement-time 3`

use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use ssd_core::observer::NullObserver;
use ssd_core::sched::Noop;
use ssd_core::{Simulation, Size};
use ssdsim_host::config::{Precondition, SsdConfig};
use ssdsim_host::workload::{Distribution, FioGen, RwMode, WorkloadConfig};

const IOS: u64 = 4000;

fn config(kind: &str, w: WorkloadConfig) -> SsdConfig {
    let mut c = SsdConfig::default();
    c.layout.channels = 2;
    c.nand.blocks_per_plane = 64;
    c.ftl.kind = kind.parse().unwrap();
    c.ftl.op = 0.15;
    c.sim.precondition = Precondition::Fill;
    c.workload = w;
    c
}

fn workloads() -> Vec<(&'static str, WorkloadConfig)> {
    vec![
        (
            "randwrite-4k",
            WorkloadConfig {
                rw: RwMode::RandWrite,
                bs: Size::kib(4),
                number_ios: Some(IOS),
                ..Default::default()
            },
        ),
        (
            "oltp-70-30-8k-zipf",
            WorkloadConfig {
                rw: RwMode::RandRw,
                rwmixread: 70,
                bs: Size::kib(8),
                random_distribution: Distribution::Zipf(0.9),
                number_ios: Some(IOS),
                ..Default::default()
            },
        ),
    ]
}

fn bench(c: &mut Criterion) {
    for (wname, w) in workloads() {
        let mut g = c.benchmark_group(format!("ftl/{wname}"));
        g.sample_size(10);
        g.throughput(Throughput::Elements(IOS));
        for &kind in ftl::FTL_NAMES {
            let cfg = config(kind, w.clone());
            g.bench_function(kind, |b| {
                b.iter_batched(
                    || {
                        let s = cfg.validate().expect("valid bench config");
                        let f = ftl::build(&s.config.ftl, &s.shape()).expect("ftl");
                        let src = FioGen::new(&cfg.workload, s.logical_bytes(), 1);
                        let mut sim =
                            Simulation::new(s, f, src, Noop::new(1024, true), NullObserver);
                        sim.precondition();
                        sim
                    },
                    |mut sim| {
                        let r = sim.run().expect("run");
                        assert_eq!(r.host.requests, IOS);
                        r
                    },
                    BatchSize::LargeInput,
                );
            });
        }
        g.finish();
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
