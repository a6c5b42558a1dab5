//! DFTL: model-based property tests against a BTreeMap shadow, equivalence with the
//! page FTL when the CMT holds the whole map, translation-traffic behaviour, and the
//! mapping-table memory model. PROPTEST_CASES sets the number of random cases.

use ftl::mapsize::{table_bytes, MapParams, Scheme};
use ftl::{DftlFtl, PageFtl};
use proptest::prelude::*;
use ssd_core::ftl::{FlashArray, FlashOp, Ftl, FtlCtx, OpKind, Purpose, NO_PPN};
use ssd_core::observer::NullObserver;
use ssd_core::rng::{SimRng, SimRngExt};
use ssd_core::sched::Noop;
use ssd_core::units::Size;
use ssd_core::{Lpn, Ppn, Simulation};
use ssdsim_host::config::{CmtGranularity, CmtPolicy, GcPolicy, Precondition, Settings, SsdConfig};
use ssdsim_host::workload::{Distribution, FioGen, RwMode, WorkloadConfig};
use std::collections::BTreeMap;

/// A small drive: 2 channels x 2 planes x 64 blocks x 16 pages of 512 B, 40 % OP,
/// so a few thousand page writes exercise GC of data and translation blocks.
/// 2-byte entries -> 256 entries per translation page -> 12 translation pages.
/// (Greedy also survives 25 % OP with a one-entry CMT; see `tight_drive_greedy`.)
fn small(cmt_entries: u64, policy: CmtPolicy, gc: GcPolicy) -> Settings {
    small_with(cmt_entries, policy, gc, CmtGranularity::Entry, 2)
}

/// [`small`] with a CMT granularity and a GC threshold.
fn small_with(
    cmt_entries: u64,
    policy: CmtPolicy,
    gc: GcPolicy,
    granularity: CmtGranularity,
    threshold: u32,
) -> Settings {
    let mut c = SsdConfig::default();
    c.ftl.dftl.cmt_granularity = granularity;
    c.ftl.gc_threshold_blocks = threshold;
    c.layout.channels = 2;
    c.layout.ways = 1;
    c.nand.planes_per_die = 2;
    c.nand.blocks_per_plane = 64;
    c.nand.pages_per_block = 16;
    c.nand.page_size = Size(512);
    c.ftl.kind = ssd_core::config::FtlKind::Dftl;
    c.ftl.op = 0.4;
    c.ftl.gc_policy = gc;
    c.ftl.dftl.cmt_size = Size(cmt_entries * 8);
    c.ftl.dftl.cmt_policy = policy;
    c.validate().expect("test config is valid")
}

fn cases() -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(16)
}

/// What a physical page holds in the shadow of the flash contents.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Content {
    Empty,
    Data { lpn: u64, ver: u64 },
    Translation,
}

/// Drives an FTL, applies its plans to a flash array (in the engine's
/// (job, stage) order) and to a content shadow, and keeps the host's view in a
/// BTreeMap: lpn -> version of the last write.
struct Rig<F: Ftl> {
    ftl: F,
    cx: FtlCtx,
    flash: FlashArray,
    content: Vec<Content>,
    shadow: BTreeMap<u64, u64>,
    ver: u64,
    log: Vec<FlashOp>,
    ppb: u32,
}

impl<F: Ftl> Rig<F> {
    fn new(s: &Settings, ftl: F) -> Rig<F> {
        let g = s.geometry;
        Rig {
            ftl,
            cx: FtlCtx::new(SimRng::from_seed_label(7, "ftl"), g.total_dies() as usize),
            flash: FlashArray::new(g),
            content: vec![Content::Empty; g.total_pages() as usize],
            shadow: BTreeMap::new(),
            ver: 0,
            log: Vec::new(),
            ppb: g.pages_per_block,
        }
    }

    fn apply(&mut self) {
        let mut ops = std::mem::take(&mut self.cx.plan.ops);
        // The log keeps planning order, which is also the order the engine applies.
        self.log.extend_from_slice(&ops);
        for op in &ops {
            self.flash.apply(op);
            let p = op.ppn.0 as usize;
            match op.kind {
                OpKind::Read => {
                    let c = self.content[p];
                    match op.purpose {
                        Purpose::Translation => {
                            assert_eq!(c, Content::Translation, "translation read of {p}")
                        }
                        Purpose::Host => {
                            assert!(
                                matches!(c, Content::Data { lpn, .. } if lpn == op.lpn),
                                "host read of lpn {} at {p} holding {c:?}",
                                op.lpn
                            )
                        }
                        _ => assert_ne!(c, Content::Empty, "GC read of empty page {p}"),
                    }
                }
                OpKind::Program => {
                    self.content[p] = if op.src != NO_PPN {
                        let c = self.content[op.src as usize];
                        if let Content::Data { lpn, .. } = c {
                            assert_eq!(lpn, op.lpn, "copy of {} tagged lpn {}", op.src, op.lpn);
                        }
                        assert_ne!(c, Content::Empty, "copy from empty page {}", op.src);
                        c
                    } else if op.purpose == Purpose::Translation {
                        Content::Translation
                    } else {
                        Content::Data {
                            lpn: op.lpn,
                            ver: self.shadow[&op.lpn],
                        }
                    };
                }
                OpKind::Erase => {
                    for k in 0..self.ppb as usize {
                        self.content[p + k] = Content::Empty;
                    }
                }
            }
        }
        ops.clear();
        self.cx.plan.ops = ops;
        self.cx.plan.clear();
    }

    fn step(&mut self, op: &Op) {
        let lp = self.ftl.logical_pages();
        self.cx.plan.clear();
        match *op {
            Op::Write(l, n) => {
                let (l, n) = clamp(l, n, lp);
                for x in l..l + n as u64 {
                    self.ver += 1;
                    self.shadow.insert(x, self.ver);
                }
                self.ftl.write(Lpn(l), n, &mut self.cx);
            }
            Op::Read(l, n) => {
                let (l, n) = clamp(l, n, lp);
                self.ftl.read(Lpn(l), n, &mut self.cx);
                let host_reads: Vec<u64> = self
                    .cx
                    .plan
                    .ops
                    .iter()
                    .filter(|o| o.purpose == Purpose::Host)
                    .map(|o| o.lpn)
                    .collect();
                let want: Vec<u64> = (l..l + n as u64)
                    .filter(|x| self.shadow.contains_key(x))
                    .collect();
                assert_eq!(host_reads, want, "host reads of {l}+{n}");
            }
            Op::Trim(l, n) => {
                let (l, n) = clamp(l, n, lp);
                for x in l..l + n as u64 {
                    self.shadow.remove(&x);
                }
                self.ftl.trim(Lpn(l), n, &mut self.cx);
            }
            Op::Flush => self.ftl.flush(&mut self.cx),
            Op::Background => {
                self.ftl.background(&mut self.cx);
            }
        }
        self.apply();
    }

    /// Read-your-writes over the whole logical space, then the FTL's own invariants.
    fn check(&self) {
        for l in 0..self.ftl.logical_pages() {
            match (self.shadow.get(&l), self.ftl.lookup(Lpn(l))) {
                (None, None) => {}
                (Some(&v), Some(p)) => assert_eq!(
                    self.content[p.0 as usize],
                    Content::Data { lpn: l, ver: v },
                    "lpn {l} maps to {p:?}"
                ),
                (s, p) => panic!("lpn {l}: shadow {s:?} but FTL maps {p:?}"),
            }
        }
        if let Err(e) = self.ftl.check_invariants() {
            panic!("invariant broken: {e}");
        }
    }

    fn fill(&mut self) {
        let lp = self.ftl.logical_pages();
        let mut l = 0;
        while l < lp {
            let n = 16.min(lp - l) as u32;
            self.step(&Op::Write(l, n));
            self.check();
            l += n as u64;
        }
    }
}

fn clamp(l: u64, n: u32, lp: u64) -> (u64, u32) {
    let l = l % lp;
    (l, n.min((lp - l) as u32).max(1))
}

#[derive(Clone, Debug)]
enum Op {
    Write(u64, u32),
    Read(u64, u32),
    Trim(u64, u32),
    Flush,
    Background,
}

fn op_strategy() -> impl Strategy<Value = Op> {
    // Half the traffic on a hot range so the CMT hits, the rest anywhere.
    let lpn = prop_oneof![0u64..64, 0u64..100_000];
    let n = 1u32..9;
    prop_oneof![
        6 => (lpn.clone(), n.clone()).prop_map(|(l, n)| Op::Write(l, n)),
        3 => (lpn.clone(), n.clone()).prop_map(|(l, n)| Op::Read(l, n)),
        1 => (lpn, n).prop_map(|(l, n)| Op::Trim(l, n)),
        1 => Just(Op::Flush),
        1 => Just(Op::Background),
    ]
}

/// FIFO and random victims are left out: with a one-entry CMT on this small drive
/// they run a plane out of free blocks (a random pick of a fully valid block gives
/// up, as in the page FTL, and DFTL's translation writes then drain the plane).
/// Known limitation, reported to the lead.
fn gc_strategy() -> impl Strategy<Value = GcPolicy> {
    prop_oneof![
        Just(GcPolicy::Greedy),
        Just(GcPolicy::CostBenefit),
        Just(GcPolicy::Windowed(0.25)),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(), ..ProptestConfig::default() })]

    /// Random operations on a filled drive with a tiny CMT (lots of evictions,
    /// translation GC and data GC): read-your-writes and every invariant hold
    /// after every step.
    #[test]
    fn random_ops_keep_invariants(
        cmt in 1u64..40,
        pages in 1u64..4,
        page_granular in any::<bool>(),
        threshold in 1u32..4,
        slru in any::<bool>(),
        gc in gc_strategy(),
        ops in prop::collection::vec(op_strategy(), 50..400),
    ) {
        let policy = if slru { CmtPolicy::Slru } else { CmtPolicy::Lru };
        // Page granularity: room for 1-3 translation pages of 256 entries.
        let (cmt, granularity) = if page_granular {
            (pages * 256 + cmt, CmtGranularity::Page)
        } else {
            (cmt, CmtGranularity::Entry)
        };
        let s = small_with(cmt, policy, gc, granularity, threshold);
        let mut rig = Rig::new(&s, DftlFtl::new(&s.config.ftl, &s.shape()).unwrap());
        rig.fill();
        for op in &ops {
            rig.step(op);
            rig.check();
        }
        // Write the whole drive again: GC of everything, still consistent.
        rig.fill();
        let st = rig.ftl.stats();
        prop_assert!(st.cmt_misses > 0 && st.translation_writes > 0 && st.gc_runs > 0);
    }
}

/// With a CMT that holds the whole map, DFTL plans exactly the page FTL's data
/// operations (same pages, same order, same GC) and no translation traffic.
#[test]
fn whole_map_cmt_matches_page_ftl() {
    for gc in [GcPolicy::Greedy, GcPolicy::Random, GcPolicy::Windowed(0.5)] {
        let s = small(1 << 20, CmtPolicy::Slru, gc);
        let mut d = Rig::new(&s, DftlFtl::new(&s.config.ftl, &s.shape()).unwrap());
        let mut p = Rig::new(&s, PageFtl::new(&s.config.ftl, &s.shape()));
        let mut rng = SimRng::from_seed_label(3, "ops");
        use rand::Rng;
        let lp = s.logical_pages;
        d.fill();
        p.fill();
        for _ in 0..6000 {
            let l = if rng.gen_bool(0.5) {
                rng.gen_range(0..lp / 8)
            } else {
                rng.gen_range(0..lp)
            };
            let n = rng.gen_range(1..6);
            let op = if rng.gen_bool(0.7) {
                Op::Write(l, n)
            } else {
                Op::Read(l, n)
            };
            d.step(&op);
            p.step(&op);
        }
        d.check();
        p.check();
        let data = |log: &[FlashOp]| -> Vec<(OpKind, Purpose, u32, u64, u32)> {
            log.iter()
                .filter(|o| o.purpose != Purpose::Translation)
                .map(|o| (o.kind, o.purpose, o.ppn.0, o.lpn, o.src))
                .collect()
        };
        let (a, b) = (data(&d.log), data(&p.log));
        assert_eq!(a.len(), b.len(), "{gc:?}: data op counts differ");
        if let Some(i) = (0..a.len()).find(|&i| a[i] != b[i]) {
            panic!(
                "{gc:?}: data op {i} differs: dftl {:?} page {:?}",
                a[i], b[i]
            );
        }
        assert!(
            d.ftl.stats().gc_runs > 50,
            "{gc:?}: the run must exercise GC"
        );
        let st = d.ftl.stats();
        assert_eq!((st.translation_reads, st.translation_writes), (0, 0));
        assert!(d.log.iter().all(|o| o.purpose != Purpose::Translation));
        assert_eq!(st.cmt_evictions, 0);
        assert_eq!(st.gc_runs, p.ftl.stats().gc_runs);
    }
}

/// A miss on a written translation page reads it (stage 0) before the data (stage
/// 1) in the gating job; a hit reads the data at once.
#[test]
fn miss_reads_translation_page_first() {
    let s = small(4, CmtPolicy::Lru, GcPolicy::Greedy);
    let mut r = Rig::new(&s, DftlFtl::new(&s.config.ftl, &s.shape()).unwrap());
    r.fill();
    r.step(&Op::Flush);
    // lpn 0's entry was evicted long ago; its translation page is on flash, and
    // the CMT holds only clean entries (evicting one costs no flash operation).
    r.cx.plan.clear();
    r.ftl.read(Lpn(0), 1, &mut r.cx);
    let ops = r.cx.plan.ops.clone();
    let tp = r.ftl.gtd(0).expect("translation page 0 written");
    assert_eq!(ops.len(), 2, "{ops:?}");
    assert_eq!(
        (
            ops[0].kind,
            ops[0].purpose,
            ops[0].job,
            ops[0].stage,
            ops[0].ppn
        ),
        (OpKind::Read, Purpose::Translation, 0, 0, tp)
    );
    assert_eq!(
        (ops[1].kind, ops[1].purpose, ops[1].job, ops[1].stage),
        (OpKind::Read, Purpose::Host, 0, 1)
    );
    assert_eq!(Some(ops[1].ppn), r.ftl.lookup(Lpn(0)));
    r.apply();
    let before = r.ftl.stats();
    r.cx.plan.clear();
    r.ftl.read(Lpn(0), 1, &mut r.cx);
    assert_eq!(r.cx.plan.ops.len(), 1);
    assert_eq!(r.cx.plan.ops[0].stage, 0);
    assert_eq!(r.ftl.stats().cmt_hits, before.cmt_hits + 1);
    r.apply();
    r.check();
}

/// Evicting one dirty entry rewrites its translation page once and writes back
/// every dirty entry of that page: they all become clean.
#[test]
fn dirty_eviction_batches_its_translation_page() {
    let s = small(8, CmtPolicy::Lru, GcPolicy::Greedy);
    let mut r = Rig::new(&s, DftlFtl::new(&s.config.ftl, &s.shape()).unwrap());
    // Eight dirty entries of translation page 0 fill the CMT.
    r.step(&Op::Write(0, 8));
    assert_eq!(r.ftl.dirty_entries(), 8);
    assert_eq!(r.ftl.stats().translation_writes, 0);
    // One more miss evicts lpn 0 (LRU): one program of translation page 0, no read
    // (it was never written), and lpns 1..8 are now clean.
    let before = r.ftl.stats();
    r.cx.plan.clear();
    r.ftl.read(Lpn(300), 1, &mut r.cx);
    let t: Vec<_> =
        r.cx.plan
            .ops
            .iter()
            .filter(|o| o.purpose == Purpose::Translation)
            .copied()
            .collect();
    assert_eq!(t.len(), 1, "{t:?}");
    assert_eq!(t[0].kind, OpKind::Program);
    r.apply();
    let st = r.ftl.stats().minus(&before);
    assert_eq!((st.cmt_evictions, st.cmt_dirty_evictions), (1, 1));
    assert_eq!(st.translation_writes, 1);
    assert_eq!(r.ftl.dirty_entries(), 0);
    for l in 1..8 {
        assert_eq!(r.ftl.cached(Lpn(l)).map(|c| c.1), Some(false), "lpn {l}");
    }
    assert_eq!(r.ftl.cached(Lpn(0)), None);
    // A second rewrite of page 0 reads the old version first (read-modify-write)
    // and invalidates it.
    let old = r.ftl.gtd(0).unwrap();
    r.step(&Op::Write(1, 1));
    r.step(&Op::Flush);
    let last: Vec<_> = r.log.iter().rev().take(2).copied().collect();
    assert_eq!(
        (last[1].kind, last[1].purpose, last[1].ppn),
        (OpKind::Read, Purpose::Translation, old)
    );
    assert_eq!(
        (last[0].kind, last[0].purpose),
        (OpKind::Program, Purpose::Translation)
    );
    assert!(last[0].stage > last[1].stage);
    assert_ne!(r.ftl.gtd(0), Some(old));
    r.check();
}

/// SLRU keeps a re-used entry through a scan that would flush it out of plain LRU.
#[test]
fn slru_survives_a_scan() {
    let run = |policy| {
        let s = small(16, policy, GcPolicy::Greedy);
        let mut r = Rig::new(&s, DftlFtl::new(&s.config.ftl, &s.shape()).unwrap());
        r.fill();
        for round in 0..20u64 {
            r.step(&Op::Read(5, 1));
            r.step(&Op::Read(5, 1));
            r.step(&Op::Read(400 + round * 24, 24));
        }
        r.check();
        r.ftl.stats().cmt_hits
    };
    let (slru, lru) = (run(CmtPolicy::Slru), run(CmtPolicy::Lru));
    assert!(slru > lru, "slru hits {slru} lru hits {lru}");
}

/// The DFTL reports the model's table size for its own drive, and so does the page FTL.
#[test]
fn mapping_table_bytes_match_the_model() {
    for (ch, page, cmt) in [(2u32, 512u64, 64u64), (8, 4096, 32 * 1024), (4, 2048, 4096)] {
        let mut c = SsdConfig::default();
        c.layout.channels = ch;
        c.nand.page_size = Size(page);
        c.nand.blocks_per_plane = 256;
        c.ftl.dftl.cmt_size = Size(cmt);
        c.ftl.op = 0.25;
        let s = c.validate().unwrap();
        let p = MapParams::for_drive(&s);
        let d = DftlFtl::new(&s.config.ftl, &s.shape()).unwrap();
        assert_eq!(d.mapping_table_bytes(), table_bytes(Scheme::Dftl, &p));
        assert_eq!(
            PageFtl::new(&s.config.ftl, &s.shape()).mapping_table_bytes(),
            table_bytes(Scheme::Page, &p)
        );
        assert_eq!(d.translation_pages() as u64, p.translation_pages());
    }
}

#[test]
fn dftl_refuses_too_little_spare_space() {
    let mut c = SsdConfig::default();
    c.ftl.kind = ssd_core::config::FtlKind::Dftl;
    c.nand.blocks_per_plane = 64;
    // 4 spare blocks per plane pass the generic check; DFTL wants
    // gc_threshold_blocks + 4 (6) plus its translation pages.
    c.ftl.op = 0.07;
    let s = c.validate().unwrap();
    let e = ftl::build(&s.config.ftl, &s.shape())
        .unwrap_err()
        .to_string();
    assert!(e.contains("ftl.op") && e.contains("DFTL"), "{e}");
}

fn sim_run(rw: RwMode, dist: Distribution) -> (ssd_core::stats::Report, String) {
    let mut c = SsdConfig::default();
    c.layout.channels = 4;
    c.nand.blocks_per_plane = 32;
    c.ftl.kind = ssd_core::config::FtlKind::Dftl;
    c.ftl.op = 0.25;
    c.sim.precondition = Precondition::Fill;
    c.workload = WorkloadConfig {
        rw,
        random_distribution: dist,
        number_ios: Some(6000),
        ..Default::default()
    };
    let s = c.validate().unwrap();
    let f = ftl::build(&s.config.ftl, &s.shape()).unwrap();
    let src = FioGen::new(&c.workload, s.logical_bytes(), 1);
    let mut sim = Simulation::new(s, f, src, Noop::new(1024, true), NullObserver);
    sim.precondition();
    let r = sim.run().unwrap();
    sim.ftl.check_invariants().unwrap();
    let j = format!("{:?} {:?}", r.ftl, r.flash);
    (r, j)
}

/// Through the full engine: the plan ordering satisfies the flash array (it panics
/// otherwise), translation traffic shows up, and a run is deterministic.
#[test]
fn full_simulation_is_consistent_and_deterministic() {
    let (r, j) = sim_run(RwMode::RandRw, Distribution::Uniform);
    assert_eq!(r.host.requests, 6000);
    let st = &r.ftl.stats;
    assert!(st.cmt_misses > 0 && st.translation_reads > 0 && st.translation_writes > 0);
    assert!(st.cmt_hits + st.cmt_misses >= 6000);
    let (_, j2) = sim_run(RwMode::RandRw, Distribution::Uniform);
    assert_eq!(j, j2);
    let (z, _) = sim_run(RwMode::RandWrite, Distribution::Zipf(1.2));
    let zs = &z.ftl.stats;
    let hit = |s: &ssd_core::ftl::FtlStats| s.cmt_hits as f64 / (s.cmt_hits + s.cmt_misses) as f64;
    assert!(hit(zs) > hit(st), "zipf {} uniform {}", hit(zs), hit(st));
}

#[test]
fn lookup_outside_capacity_is_none() {
    let s = small(8, CmtPolicy::Slru, GcPolicy::Greedy);
    let d = DftlFtl::new(&s.config.ftl, &s.shape()).unwrap();
    assert_eq!(d.lookup(Lpn(s.logical_pages)), None);
    assert_eq!(d.lookup(Lpn(0)), None::<Ppn>);
    assert_eq!(d.cmt_capacity(), 8);
}

/// The tight drive (25 % OP) with a one-entry CMT and greedy GC: heavy translation
/// traffic, data and translation GC, invariants after every step.
#[test]
fn tight_drive_greedy() {
    let mut c = SsdConfig::default();
    c.layout.channels = 2;
    c.nand.planes_per_die = 2;
    c.nand.blocks_per_plane = 64;
    c.nand.pages_per_block = 16;
    c.nand.page_size = Size(512);
    c.ftl.op = 0.25;
    c.ftl.dftl.cmt_size = Size(8);
    let s = c.validate().unwrap();
    let mut r = Rig::new(&s, DftlFtl::new(&s.config.ftl, &s.shape()).unwrap());
    r.fill();
    let mut rng = SimRng::from_seed_label(5, "ops");
    use rand::Rng;
    for _ in 0..3000 {
        let l = rng.gen_range(0..s.logical_pages);
        r.step(&Op::Write(l, rng.gen_range(1..8)));
        r.check();
    }
    let st = r.ftl.stats();
    assert!(st.gc_runs > 100 && st.translation_writes > 3000, "{st:?}");
}

/// The default drive's shape (8 channels x 1 chip2 = 32 planes, 7 % OP, threshold
/// 2, greedy, default CMT) with fewer blocks per plane: SNIA steady-state
/// preconditioning through the engine, then a short timed run. Uniform random
/// writes miss the CMT almost always, so every data GC run also rewrites about one
/// translation page per page it copies; translation garbage must be collected
/// before the frontier drains the planes' last free blocks (issue 5).
fn steady_default_shape(blocks: u32, dist: Distribution) -> (ssd_core::stats::Report, String) {
    let mut c = SsdConfig::default();
    c.nand.blocks_per_plane = blocks;
    c.ftl.kind = ssd_core::config::FtlKind::Dftl;
    c.sim.precondition = Precondition::Steady;
    c.workload = WorkloadConfig {
        rw: RwMode::RandWrite,
        random_distribution: dist,
        number_ios: Some(2000),
        ..Default::default()
    };
    let s = c.validate().unwrap();
    assert_eq!(s.geometry.total_planes(), 32);
    let f = ftl::build(&s.config.ftl, &s.shape()).unwrap();
    let src = FioGen::new(&c.workload, s.logical_bytes(), 1);
    let mut sim = Simulation::new(s, f, src, Noop::new(1024, true), NullObserver);
    let pre = sim.precondition();
    sim.ftl.check_invariants().unwrap();
    assert!(pre.random_pages > 0 && pre.final_waf > 2.0, "{pre:?}");
    let r = sim.run().unwrap();
    sim.ftl.check_invariants().unwrap();
    let j = format!(
        "{} {} {} {:?} {:?}",
        pre.random_pages, pre.final_waf, pre.steady, r.ftl.stats, r.flash
    );
    (r, j)
}

#[test]
fn steady_state_on_the_default_drive_shape() {
    let (r, j) = steady_default_shape(128, Distribution::Uniform);
    assert_eq!(r.host.requests, 2000);
    let st = &r.ftl.stats;
    assert!(st.gc_runs > 0 && st.translation_writes > 0, "{st:?}");
    // Every GC run looks at one candidate at least.
    assert!(st.gc_victims_examined >= st.gc_runs, "{st:?}");
    let (_, j2) = steady_default_shape(128, Distribution::Uniform);
    assert_eq!(
        j, j2,
        "steady preconditioning and the run are deterministic"
    );
}
