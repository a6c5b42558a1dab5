//! Every FTL of the zoo through the full engine: runs complete, keep their
//! invariants, are deterministic, and rank as the literature says under small
//! random writes (block mapping worst, page mapping best).

use ssd_core::ftl::Ftl;
use ssd_core::observer::NullObserver;
use ssd_core::sched::Noop;
use ssd_core::Simulation;
use ssdsim_host::config::{Precondition, SsdConfig};
use ssdsim_host::workload::{FioGen, RwMode, WorkloadConfig};

fn run(kind: &str, rw: RwMode) -> (Option<f64>, u64, f64) {
    let mut c = SsdConfig::default();
    c.layout.channels = 2;
    // DFTL keeps translation blocks and needs more spare room on a tiny drive.
    c.nand.blocks_per_plane = if kind == "dftl" { 128 } else { 32 };
    c.ftl.kind = kind.parse().unwrap();
    c.ftl.op = 0.15;
    c.sim.precondition = Precondition::Fill;
    c.workload = WorkloadConfig {
        rw,
        number_ios: Some(3000),
        ..Default::default()
    };
    let s = c.validate().unwrap();
    let f = ftl::build(&s.config.ftl, &s.shape()).unwrap();
    let src = FioGen::new(&c.workload, s.logical_bytes(), 1);
    let mut sim = Simulation::new(s, f, src, Noop::new(1024, true), NullObserver);
    sim.precondition();
    let r = sim.run().unwrap();
    assert_eq!(r.host.requests, 3000, "{kind}");
    sim.ftl.check_invariants().unwrap();
    (r.flash.waf, r.flash.block_erases, r.latency_us.all.mean)
}

#[test]
fn every_ftl_runs_deterministically_through_the_engine() {
    for &kind in ftl::CONVENTIONAL_FTL_NAMES {
        for rw in [RwMode::RandWrite, RwMode::RandRw, RwMode::Write] {
            let a = run(kind, rw);
            assert_eq!(a, run(kind, rw), "{kind} {rw:?} not deterministic");
        }
    }
}

#[test]
fn small_random_writes_rank_block_worst_page_best() {
    let waf = |k| {
        run(k, RwMode::RandWrite)
            .0
            .expect("random writes have a WAF")
    };
    let (page, block, bast) = (waf("page"), waf("block"), waf("bast"));
    assert!(
        page < bast && bast < block,
        "page {page} bast {bast} block {block}"
    );
}
