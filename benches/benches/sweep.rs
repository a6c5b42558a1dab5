//! Sweep scaling: a 16-configuration sweep on 1 thread vs 2 threads (issue 8's
//! target: at least 1.8x). Results are identical for both (tested); only wall time
//! differs.

use criterion::{criterion_group, criterion_main, Criterion};
use ssdsim::sweep::{expand, run_points, Axis};
use ssdsim::RunOptions;
use ssdsim_host::config::{Precondition, SsdConfig};
use std::collections::BTreeMap;
use std::time::Duration;

fn points() -> Vec<ssdsim::sweep::Point> {
    let mut base = SsdConfig::default();
    base.nand.blocks_per_plane = 128;
    base.sim.precondition = Precondition::Fill;
    base.workload.number_ios = Some(20_000);
    let axes = vec![
        Axis {
            key: "ftl".into(),
            values: vec!["page".into(), "dftl".into()],
        },
        Axis {
            key: "sched".into(),
            values: vec!["noop".into(), "deadline".into()],
        },
        Axis {
            key: "rw".into(),
            values: vec![
                "randread".into(),
                "randwrite".into(),
                "randrw".into(),
                "write".into(),
            ],
        },
    ];
    expand(&base, &axes, &[], &BTreeMap::new())
}

fn bench(c: &mut Criterion) {
    let pts = points();
    assert_eq!(pts.len(), 16);
    let opts = RunOptions::default();
    let mut g = c.benchmark_group("sweep16");
    g.sample_size(10).measurement_time(Duration::from_secs(20));
    for threads in [1usize, 2] {
        g.bench_function(format!("threads{threads}"), |b| {
            b.iter(|| run_points(&pts, threads, &opts, |_, _, _| {}).unwrap())
        });
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
