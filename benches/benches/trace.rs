//! Trace parsing throughput per format (lines/s) and end-to-end replay speed.
//! Run: cargo bench -p ssdsim-benches --bench trace

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use ssd_core::observer::NullObserver;
use ssd_core::sched::Noop;
use ssd_core::Simulation;
use ssdsim_host::config::{Precondition, SsdConfig};
use ssdsim_host::trace::{synth, ParseOptions, Replay, ReplayOptions, TraceFormat, TraceReader};
use std::time::Duration;

const LINES: u64 = 100_000;

fn parse(c: &mut Criterion) {
    let mut g = c.benchmark_group("trace_parse");
    g.measurement_time(Duration::from_secs(3)).sample_size(10);
    g.throughput(Throughput::Elements(LINES));
    for fmt in TraceFormat::ALL {
        let mut data = Vec::new();
        synth::write(
            &mut data,
            fmt,
            synth::SynthSpec {
                requests: LINES,
                ..Default::default()
            },
        )
        .unwrap();
        g.bench_function(fmt.name(), |b| {
            b.iter(|| {
                let mut r = TraceReader::new(&data[..], fmt, "bench", ParseOptions::default());
                let mut sum = 0u64;
                while let Some(rec) = r.next_record() {
                    sum = sum.wrapping_add(rec.unwrap().offset);
                }
                std::hint::black_box(sum)
            })
        });
    }
    g.finish();
}

fn replay(c: &mut Criterion) {
    const N: u64 = 20_000;
    let mut data = Vec::new();
    synth::write(
        &mut data,
        TraceFormat::Spc,
        synth::SynthSpec {
            requests: N,
            ..Default::default()
        },
    )
    .unwrap();
    let mut cfg = SsdConfig::default();
    cfg.nand.blocks_per_plane = 64;
    cfg.sim.precondition = Precondition::None;
    let s = cfg.validate().unwrap();
    let mut g = c.benchmark_group("trace_replay");
    g.measurement_time(Duration::from_secs(5)).sample_size(10);
    g.throughput(Throughput::Elements(N));
    for (name, depth) in [("spc_open_loop", None), ("spc_closed_qd32", Some(32))] {
        g.bench_function(name, |b| {
            b.iter(|| {
                let opts = ReplayOptions {
                    closed_loop_depth: depth,
                    ..Default::default()
                }
                .with_capacity(s.logical_bytes());
                let src = Replay::new(&data[..], TraceFormat::Spc, "bench", opts);
                let ftl = ftl::build(&s.config.ftl, &s.shape()).unwrap();
                let mut sim =
                    Simulation::new(s.clone(), ftl, src, Noop::new(1024, true), NullObserver);
                std::hint::black_box(sim.run().unwrap().host.requests)
            })
        });
    }
    g.finish();
}

criterion_group!(benches, parse, replay);
criterion_main!(benches);
