//! Static wear levelling bounds the erase-count spread. A hot/cold workload
//! (random writes to a tenth of the drive after a fill) erases the hot blocks
//! over and over while the cold data never moves: without levelling the spread
//! grows with the run; with static levelling it stays within the threshold
//! plus the few erases a plane can gain before its next GC checks it.

use ssd_core::config::{Precondition, SsdConfig, WearLeveling};
use ssd_core::ftl::Ftl;
use ssd_core::observer::NullObserver;
use ssd_core::sched::Noop;
use ssd_core::workload::{FioGen, RwMode, WorkloadConfig};
use ssd_core::{Simulation, Size};

/// (erase-count spread, erases, wear-levelling page moves) for every FTL that
/// levels wear through the shared block manager.
fn run(kind: &str, wl: WearLeveling, threshold: u32, n: u64) -> (u32, u64, u64) {
    let mut c = SsdConfig::default();
    c.layout.channels = 1;
    c.nand.blocks_per_plane = if kind == "dftl" { 128 } else { 64 };
    c.ftl.kind = kind.into();
    c.ftl.op = 0.15;
    c.ftl.wear_leveling = wl;
    c.ftl.static_wl_threshold = threshold;
    c.sim.precondition = Precondition::Fill;
    let s0 = c.validate().unwrap();
    c.workload = WorkloadConfig {
        rw: RwMode::RandWrite,
        number_ios: Some(n),
        size: Some(Size(s0.logical_bytes() / 10 / 4096 * 4096)),
        ..Default::default()
    };
    let s = c.validate().unwrap();
    let f = ftl::build(&s).unwrap();
    let src = FioGen::new(&c.workload, s.logical_bytes(), 7);
    let mut sim = Simulation::new(s, f, src, Noop::new(1024, true), NullObserver);
    sim.precondition();
    let r = sim.run().unwrap();
    sim.ftl.check_invariants().unwrap();
    let moves = sim.ftl.stats().wear_level_moves;
    (
        r.flash.erase_count_max - r.flash.erase_count_min,
        r.flash.block_erases,
        moves,
    )
}

const T: u32 = 4;

/// FTLs whose relocation keeps pace with their erases: the spread stays within
/// the threshold plus the few erases a plane gains between levelling checks,
/// at any run length, while without levelling it grows with the run.
#[test]
fn static_levelling_bounds_the_erase_count_spread() {
    for kind in ["page", "dftl", "fast", "last"] {
        let (mut last_none, mut all_moves) = (0, 0u64);
        for n in [20_000, 80_000] {
            let (none, _, m0) = run(kind, WearLeveling::None, T, n);
            let (stat, _, moves) = run(kind, WearLeveling::Static, T, n);
            assert_eq!(m0, 0, "{kind}: levelling moves with levelling off");
            all_moves += moves;
            assert!(
                stat <= T + 4,
                "{kind} n {n}: spread {stat} at threshold {T}"
            );
            last_none = none;
        }
        assert!(all_moves > 0, "{kind}: static levelling never acted");
        assert!(
            last_none > T + 4,
            "{kind}: the workload must skew wear (spread {last_none})"
        );
    }
}

/// Block-mapped FTLs erase on almost every small write; levelling once per call
/// cannot bound their spread, but it still cuts it several-fold.
#[test]
fn static_levelling_narrows_block_mapped_spread() {
    for kind in ["block", "bast"] {
        let (none, _, _) = run(kind, WearLeveling::None, T, 20_000);
        let (stat, _, moves) = run(kind, WearLeveling::Static, T, 20_000);
        assert!(moves > 0, "{kind}: static levelling never acted");
        assert!(
            stat * 5 < none,
            "{kind}: spread {stat} with levelling, {none} without"
        );
    }
}
