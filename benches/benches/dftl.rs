//! DFTL through the full `Simulation`: steady-state uniform random writes and a
//! zipf(1.2) random write workload on a 256 MiB drive (4 channels of chip2 with 64
//! blocks per plane) with the default 32 KiB CMT. The drive is preconditioned once
//! (fill + random writes to steady state); each iteration replays the workload on a
//! clone of that state. Throughput is in simulated requests per wall second.
//!
//! Run: cargo bench -p ssdsim-benches --bench dftl -- --measurement-time 5

use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use ftl::AnyFtl;
use ssd_core::ftl::{FlashArray, Ftl};
use ssd_core::observer::NullObserver;
use ssd_core::sched::Noop;
use ssd_core::Simulation;
use ssdsim_host::config::{Precondition, Settings, SsdConfig};
use ssdsim_host::workload::{Distribution, FioGen, RwMode, WorkloadConfig};

const IOS: u64 = 20_000;

fn settings(dist: Distribution) -> (Settings, WorkloadConfig) {
    let mut c = SsdConfig::default();
    c.layout.channels = 4;
    c.nand.blocks_per_plane = 64;
    c.ftl.kind = ssd_core::config::FtlKind::Dftl;
    c.ftl.op = 0.15;
    c.sim.precondition = Precondition::Steady;
    c.workload = WorkloadConfig {
        rw: RwMode::RandWrite,
        random_distribution: dist,
        number_ios: Some(IOS),
        ..Default::default()
    };
    (c.validate().expect("bench config"), c.workload)
}

type Sim = Simulation<AnyFtl, FioGen, Noop, NullObserver>;

fn sim_from(s: &Settings, w: &WorkloadConfig, ftl: AnyFtl, flash: Option<FlashArray>) -> Sim {
    let src = FioGen::new(w, s.logical_bytes(), s.config.sim.seed);
    let mut sim = Simulation::new(s.clone(), ftl, src, Noop::new(1024, true), NullObserver);
    if let Some(f) = flash {
        sim.flash = f;
    }
    sim
}

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("dftl");
    g.sample_size(10);
    g.throughput(Throughput::Elements(IOS));
    for (name, dist) in [
        ("randwrite_uniform_steady", Distribution::Uniform),
        ("randwrite_zipf1.2", Distribution::Zipf(1.2)),
    ] {
        let (s, w) = settings(dist);
        let mut base = sim_from(&s, &w, ftl::build(&s.config.ftl, &s.shape()).unwrap(), None);
        base.precondition();
        let (f0, a0) = (base.ftl.clone(), base.flash.clone());
        // One run outside the timing to report what the workload does to the CMT.
        let mut probe = sim_from(&s, &w, f0.clone(), Some(a0.clone()));
        let r = probe.run().unwrap();
        let st = &r.ftl.stats;
        eprintln!(
            "{name}: CMT hit ratio {:.4} (hits {} misses {} dirty evictions {}), translation reads {} writes {}, waf {:.3}, simulated iops {:.0}",
            st.cmt_hits as f64 / (st.cmt_hits + st.cmt_misses).max(1) as f64,
            st.cmt_hits,
            st.cmt_misses,
            st.cmt_dirty_evictions,
            st.translation_reads,
            st.translation_writes,
            r.flash.waf.unwrap_or(f64::NAN),
            r.host.iops
        );
        probe.ftl.check_invariants().unwrap();
        g.bench_function(name, |b| {
            b.iter_batched(
                || sim_from(&s, &w, f0.clone(), Some(a0.clone())),
                |mut sim| sim.run().unwrap().host.requests,
                BatchSize::LargeInput,
            )
        });
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
