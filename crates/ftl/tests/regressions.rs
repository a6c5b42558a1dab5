//! Focused regression tests, at the FTL boundary, for the failures the
//! combinations property test (`tests/combos.rs`) found; the exact failing
//! runs are replayed there.

use ssd_core::ftl::{FlashArray, FlashOp, Ftl, FtlCtx, OpKind};
use ssd_core::observer::NullObserver;
use ssd_core::rng::{SimRng, SimRngExt};
use ssd_core::sched::Noop;
use ssd_core::{Lpn, Simulation, Size};
use ssdsim_host::config::{
    Allocation, CmtGranularity, GcPolicy, Precondition, Settings, SsdConfig, WearLeveling,
};
use ssdsim_host::workload::{Timing, VecSource};

/// A drive of `planes` planes (one per die) of blocks of `ppb` 4 KiB pages.
fn config(kind: &str, planes: u32, ppb: u32, op: f64) -> SsdConfig {
    let mut c = SsdConfig::default();
    c.layout.channels = planes;
    c.layout.ways = 1;
    c.nand.dies_per_chip = 1;
    c.nand.planes_per_die = 1;
    c.nand.pages_per_block = ppb;
    c.nand.blocks_per_plane = 64;
    c.ftl.kind = kind.parse().unwrap();
    c.ftl.op = op;
    c
}

fn settings(c: &SsdConfig) -> Settings {
    c.validate().expect("a valid test drive")
}

/// An FTL with its context and flash array, plans applied as the engine
/// applies them functionally.
struct Rig {
    f: ftl::AnyFtl,
    cx: FtlCtx,
    flash: FlashArray,
}

impl Rig {
    fn new(s: &Settings) -> Rig {
        let g = s.geometry;
        Rig {
            f: ftl::build(&s.config.ftl, &s.shape()).expect("the FTL takes the drive"),
            cx: FtlCtx::new(SimRng::from_seed_label(1, "ftl"), g.total_dies() as usize),
            flash: FlashArray::new(g),
        }
    }
    /// Apply and clear the plan; returns its operations.
    fn apply(&mut self) -> Vec<FlashOp> {
        let ops = std::mem::take(&mut self.cx.plan.ops);
        for o in &ops {
            self.flash.apply(o);
        }
        self.cx.plan.clear();
        ops
    }
    fn write(&mut self, l: u64, n: u32) {
        self.f.write(Lpn(l), n, &mut self.cx);
    }
    fn fill(&mut self) {
        let lp = self.f.logical_pages();
        let mut l = 0;
        while l < lp {
            let n = 16.min(lp - l) as u32;
            self.write(l, n);
            self.apply();
            l += n as u64;
        }
    }
}

/// Inside each job of a plan, a page is read at a later stage than the
/// program that wrote it, and a block erased at a later stage than the reads
/// and programs of it planned before (else the job waits on itself).
fn check_stage_order(ops: &[FlashOp], g: &ssd_core::Geometry) -> Result<(), String> {
    for (i, o) in ops.iter().enumerate() {
        for e in &ops[..i] {
            if e.job != o.job {
                continue;
            }
            let late = match (e.kind, o.kind) {
                (OpKind::Program, OpKind::Read) => e.ppn == o.ppn && e.stage >= o.stage,
                (OpKind::Read | OpKind::Program, OpKind::Erase) => {
                    g.block_of(e.ppn) == g.block_of(o.ppn) && e.stage >= o.stage
                }
                _ => false,
            };
            if late {
                return Err(format!("op {i} {o:?} is not after {e:?}"));
            }
        }
    }
    Ok(())
}

/// The engine plans several FTL calls into one command (each write-buffer
/// eviction of a write; a flush draining the buffer). The hybrids' stage
/// tracker and DFTL's call state restarted per call, so a later call could
/// read, at stage 0, a page an earlier call of the same job programs at
/// stage 1 (the block FTL merging a block merged a moment before; DFTL
/// reading a translation page it has just rewritten), and the command never
/// completed.
#[test]
fn calls_that_share_a_plan_keep_its_stage_order() {
    for &kind in ftl::CONVENTIONAL_FTL_NAMES {
        let mut c = config(kind, 1, 4, 0.3);
        // One CMT entry: every DFTL page write evicts, and writes back, the last.
        c.ftl.dftl.cmt_size = Size(8);
        let s = settings(&c);
        let mut r = Rig::new(&s);
        r.fill();
        // Pages of one logical block, written backwards one call each, then
        // again: every call after the first rewrites what the plan wrote.
        for round in 0..2 {
            for l in [3u64, 2, 1, 0, 7, 5, 3, 0] {
                r.write(l + round * 4, 1);
            }
        }
        let ops = r.apply();
        check_stage_order(&ops, &s.geometry).unwrap_or_else(|e| panic!("{kind}: {e}"));
        r.f.check_invariants()
            .unwrap_or_else(|e| panic!("{kind}: {e}"));
    }
}

/// Least-busy allocation follows the dies' loads, which do not change while
/// one call plans: its choice of a plane that could not be cleaned named the
/// same plane again on every retry, so the page took that plane's GC reserve
/// and GC then found no block to copy into ("plane 0 has no free block").
/// The retries now walk the planes.
#[test]
fn least_busy_hands_pages_on_from_a_full_plane() {
    for kind in ["page", "dftl"] {
        let mut c = config(kind, 2, 4, 0.1);
        c.nand.blocks_per_plane = 128;
        c.ftl.allocation = Allocation::LeastBusy;
        let s = settings(&c);
        let mut r = Rig::new(&s);
        // Die 1 always looks busy: plane 0 takes every page it can.
        r.cx.die_load[1] = 1_000;
        r.fill();
        let lp = r.f.logical_pages();
        let mut rng = SimRng::from_seed_label(3, "test");
        for _ in 0..4 * lp {
            use rand::Rng;
            r.write(rng.gen_range(0..lp), 1);
            r.apply();
        }
        r.f.check_invariants()
            .unwrap_or_else(|e| panic!("{kind}: {e}"));
    }
}

/// FIFO GC moves a fully valid oldest block on in the foreground; in idle
/// time that frees nothing, and with a background target above what a plane
/// can free it collected for ever (with `sim.drain` the run never ended).
#[test]
fn idle_time_fifo_gc_moves_no_fully_valid_block() {
    for kind in ["page", "dftl"] {
        let mut c = config(kind, 1, 8, 0.1);
        c.nand.blocks_per_plane = 128;
        c.ftl.gc_policy = GcPolicy::Fifo;
        c.ftl.background_gc_blocks = 100;
        let s = settings(&c);
        let mut r = Rig::new(&s);
        r.fill();
        let mut runs = 0;
        while r.f.background(&mut r.cx) {
            r.apply();
            runs += 1;
            assert!(runs <= 128, "{kind}: background GC does not stop");
        }
        r.apply();
        if kind == "page" {
            assert_eq!(runs, 0, "a filled drive has nothing to collect");
        }
    }
}

/// FIFO GC moves a fully valid oldest block on in the foreground, to reach
/// the garbage behind it; a plane with no garbage at all had every host page
/// that chose it rotate all its blocks (up to the GC guard) before the page
/// went to the next plane. Here plane 0 holds only valid data, and the
/// writes overwrite pages of plane 1.
#[test]
fn fifo_gc_leaves_a_plane_without_garbage_alone() {
    for kind in ["page", "dftl"] {
        let mut c = config(kind, 2, 4, 0.1);
        c.nand.blocks_per_plane = 128;
        c.ftl.allocation = Allocation::LeastBusy;
        c.ftl.gc_policy = GcPolicy::Fifo;
        let s = settings(&c);
        let mut r = Rig::new(&s);
        r.cx.die_load[1] = 1_000;
        r.fill();
        let g = s.geometry;
        let on_plane_1: Vec<u64> = (0..r.f.logical_pages())
            .filter(|&l| r.f.lookup(Lpn(l)).is_some_and(|p| g.plane_of(p).0 == 1))
            .take(64)
            .collect();
        assert!(!on_plane_1.is_empty(), "{kind}: the fill reached plane 1");
        let before = r.f.stats().gc_page_copies;
        for &l in &on_plane_1 {
            r.write(l, 1);
            r.apply();
        }
        let copies = r.f.stats().gc_page_copies - before;
        assert!(
            copies <= 64,
            "{kind}: {copies} GC copies for 64 page writes"
        );
        r.f.check_invariants()
            .unwrap_or_else(|e| panic!("{kind}: {e}"));
    }
}

/// DFTL at 3-4 % over-provisioning on small blocks, under steady-state
/// preconditioning (random single-page overwrites): GC at its threshold with
/// the translation frontiers nearly full and their garbage not collectable
/// yet could not make translation room above the reserves, so it never ran,
/// write-backs took the reserves, and the next translation page found no
/// block; static wear levelling after a GC, moving a whole block, found no
/// block for its copies; and FIFO GC spent the translation room on moves of
/// fully valid blocks until a write-back found no block.
#[test]
fn dftl_at_three_percent_op_survives_steady_state() {
    // (channels, pages per block, blocks per plane, op, wear levelling, GC
    // policy, CMT: entries, or whole translation pages of 1024 entries).
    #[rustfmt::skip]
    let drives = [
        (1, 4, 567, 0.03, WearLeveling::None, GcPolicy::Greedy, Ok(1)),
        (1, 4, 567, 0.03, WearLeveling::Static, GcPolicy::Greedy, Ok(1)),
        (2, 16, 147, 0.04, WearLeveling::Static, GcPolicy::Fifo, Err(1)),
        (2, 16, 184, 0.03, WearLeveling::Static, GcPolicy::Greedy, Ok(64)),
        (1, 16, 184, 0.03, WearLeveling::None, GcPolicy::Fifo, Ok(1)),
    ];
    for (channels, ppb, bpp, op, wear, policy, cmt) in drives {
        let mut c = config("dftl", channels, ppb, op);
        c.nand.page_size = Size::kib(2);
        c.nand.blocks_per_plane = bpp;
        match cmt {
            Ok(entries) => c.ftl.dftl.cmt_size = Size(8 * entries),
            Err(pages) => {
                c.ftl.dftl.cmt_granularity = CmtGranularity::Page;
                c.ftl.dftl.cmt_size = Size::kib(8 * pages);
            }
        }
        c.ftl.gc_threshold_blocks = 1;
        c.ftl.wear_leveling = wear;
        c.ftl.static_wl_threshold = 4;
        c.ftl.gc_policy = policy;
        c.sim.precondition = Precondition::Steady;
        let s = settings(&c);
        let f = ftl::build(&s.config.ftl, &s.shape()).unwrap();
        let src = VecSource::new(Vec::new(), Timing::ClosedLoop { depth: 1 });
        let mut sim = Simulation::new(s, f, src, Noop::new(1024, true), NullObserver);
        sim.precondition();
        sim.ftl
            .check_invariants()
            .unwrap_or_else(|e| panic!("{channels} x {ppb} x {bpp} {wear:?} {policy:?}: {e}"));
    }
}
