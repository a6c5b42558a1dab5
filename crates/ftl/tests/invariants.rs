//! Model-based property tests for every FTL of the zoo.
//!
//! One generic harness, [`check_ftl`], drives any FTL (built by name through
//! `ftl::build` on a small drive) with random write/read/trim/flush/idle
//! sequences and a random GC policy, wear-levelling mode and background setting,
//! against a shadow model (`BTreeMap<lpn, version>`). It applies every planned
//! flash op, in the order the engine applies them (by job, then stage), to a
//! `FlashArray` (physics: in-order programs, no read of unwritten pages) and to
//! a content model (`ppn -> (lpn, version)`), so a GC or merge that copies stale
//! data, loses a page or resurrects a trimmed one is caught. After every step:
//! `check_invariants()`, every written page maps to the page that holds its
//! latest version, unwritten/trimmed pages read as unmapped, host reads fetch
//! exactly the latest copies, and erase counts never shrink.
//!
//! Default 48 cases per FTL; `PROPTEST_CASES=2000 cargo test -p ssdsim-ftl
//! --test invariants --release` for a deep run.

use proptest::prelude::*;
use ssd_core::ftl::{FlashArray, FlashOp, Ftl, FtlCtx, OpKind, Purpose, NO_LPN, NO_PPN};
use ssd_core::rng::{SimRng, SimRngExt};
use ssd_core::{Lpn, Ppn, Size};
use ssdsim_host::config::{GcPolicy, SsdConfig, WearLeveling};
use std::collections::BTreeMap;

#[derive(Clone, Debug)]
enum Op {
    /// Write `n` pages from `at` (both taken modulo the logical space).
    Write {
        at: u64,
        n: u32,
    },
    Read {
        at: u64,
        n: u32,
    },
    Trim {
        at: u64,
        n: u32,
    },
    Flush,
    /// Idle time: let the FTL do background work (up to 3 rounds).
    Idle,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        6 => (any::<u64>(), 1u32..20).prop_map(|(at, n)| Op::Write { at, n }),
        3 => (any::<u64>(), 1u32..6).prop_map(|(at, n)| Op::Write { at, n }),
        2 => (any::<u64>(), 1u32..24).prop_map(|(at, n)| Op::Read { at, n }),
        1 => (any::<u64>(), 1u32..12).prop_map(|(at, n)| Op::Trim { at, n }),
        1 => Just(Op::Flush),
        1 => Just(Op::Idle),
    ]
}

#[derive(Clone, Debug)]
struct Knobs {
    policy: GcPolicy,
    wear: WearLeveling,
    background: u32,
    seed: u64,
}

fn knobs() -> impl Strategy<Value = Knobs> {
    (
        prop_oneof![
            Just(GcPolicy::Greedy),
            Just(GcPolicy::Fifo),
            Just(GcPolicy::Random),
            Just(GcPolicy::CostBenefit),
            // The smallest window: one random candidate (max(1, round(F x n))).
            Just(GcPolicy::Windowed(0.001)),
            Just(GcPolicy::Windowed(0.5)),
        ],
        prop_oneof![
            Just(WearLeveling::None),
            Just(WearLeveling::Dynamic),
            Just(WearLeveling::Static)
        ],
        prop_oneof![Just(0u32), Just(2u32)],
        0u64..1000,
    )
        .prop_map(|(policy, wear, background, seed)| Knobs {
            policy,
            wear,
            background,
            seed,
        })
}

/// A small drive: 2 channels x 1 plane x 32 blocks x 8 pages of 4 KiB.
fn config(kind: &str, k: &Knobs) -> SsdConfig {
    let mut c = SsdConfig::default();
    c.layout.channels = 2;
    c.layout.ways = 1;
    c.nand.dies_per_chip = 1;
    c.nand.planes_per_die = 1;
    c.nand.blocks_per_plane = 32;
    c.nand.pages_per_block = 8;
    c.nand.page_size = Size::kib(4);
    c.ftl.kind = kind.parse().unwrap();
    c.ftl.op = 0.3;
    c.ftl.log.log_area = 0.1;
    c.ftl.gc_threshold_blocks = 2;
    c.ftl.gc_policy = k.policy;
    c.ftl.wear_leveling = k.wear;
    c.ftl.static_wl_threshold = 2;
    c.ftl.background_gc_blocks = k.background;
    c.sim.seed = k.seed;
    c
}

struct Model {
    flash: FlashArray,
    content: Vec<Option<(u64, u64)>>,
    shadow: BTreeMap<u64, u64>,
    version: u64,
}

impl Model {
    /// Apply a plan in the order the FTL planned it (the order the engine applies it to the flash array). `host_ver` gives the version a host
    /// program writes.
    fn apply(&mut self, cx: &mut FtlCtx) -> Result<Vec<FlashOp>, String> {
        let ops = std::mem::take(&mut cx.plan.ops);
        let g = *self.flash.geometry();
        for o in &ops {
            if o.job as usize >= cx.plan.gating.len() {
                return Err(format!("op in job {} that was never opened: {o:?}", o.job));
            }
            self.flash.apply(o);
            let p = o.ppn.0 as usize;
            match o.kind {
                OpKind::Read => {
                    let c = self.content[p];
                    if o.lpn != NO_LPN && c.map(|x| x.0) != Some(o.lpn) {
                        return Err(format!(
                            "read of lpn {} at ppn {p} which holds {c:?}",
                            o.lpn
                        ));
                    }
                }
                // Mapping pages (DFTL) carry no logical data: their content is not
                // modelled here (DFTL's own tests check its translation pages).
                OpKind::Program if o.purpose == Purpose::Translation || o.lpn == NO_LPN => {
                    self.content[p] = None
                }
                OpKind::Program => {
                    self.content[p] = if o.src != NO_PPN {
                        let c = self.content[o.src as usize];
                        if c.map(|x| x.0) != Some(o.lpn) {
                            if std::env::var("DUMP").is_ok() {
                                for o in &ops {
                                    eprintln!(
                                        "{:?} {:?} j{} s{} ppn{} lpn{} src{}",
                                        o.kind,
                                        o.purpose,
                                        o.job,
                                        o.stage,
                                        o.ppn.0,
                                        o.lpn as i64,
                                        o.src as i32
                                    );
                                }
                            }
                            return Err(format!(
                                "copy of lpn {} from ppn {} which holds {c:?}",
                                o.lpn, o.src
                            ));
                        }
                        c
                    } else if o.lpn == NO_LPN {
                        None
                    } else {
                        if o.purpose != Purpose::Host {
                            return Err(format!("non-host program without a source: {o:?}"));
                        }
                        let v = *self
                            .shadow
                            .get(&o.lpn)
                            .ok_or_else(|| format!("host program of unwritten lpn: {o:?}"))?;
                        Some((o.lpn, v))
                    };
                }
                OpKind::Erase => {
                    let b = g.block_of(o.ppn);
                    let first = g.first_page(b).0 as usize;
                    for c in &mut self.content[first..first + g.pages_per_block as usize] {
                        *c = None;
                    }
                }
            }
        }
        cx.plan.clear();
        Ok(ops)
    }
}

/// Drive the FTL named `kind` through `ops` and check it after every step.
fn check_ftl(kind: &str, k: &Knobs, ops: &[Op]) -> Result<(), TestCaseError> {
    let c = config(kind, k);
    let s = c
        .validate()
        .map_err(|e| TestCaseError::fail(e.to_string()))?;
    let mut f =
        ftl::build(&s.config.ftl, &s.shape()).map_err(|e| TestCaseError::fail(e.to_string()))?;
    let lp = f.logical_pages();
    prop_assert_eq!(lp, s.logical_pages, "FTL and settings disagree on capacity");
    let g = s.geometry;
    let mut cx = FtlCtx::new(
        SimRng::from_seed_label(k.seed, "ftl"),
        g.total_dies() as usize,
    );
    let mut m = Model {
        flash: FlashArray::new(g),
        content: vec![None; g.total_pages() as usize],
        shadow: BTreeMap::new(),
        version: 0,
    };
    let mut erases = m.flash.erase_counts().to_vec();
    let range = |at: u64, n: u32| {
        let a = at % lp;
        (a, (n as u64).min(lp - a) as u32)
    };
    for (step, op) in ops.iter().enumerate() {
        let ctx = |e: String| TestCaseError::fail(format!("step {step} {op:?}: {e}"));
        cx.plan.clear();
        match *op {
            Op::Write { at, n } => {
                let (a, n) = range(at, n);
                for l in a..a + n as u64 {
                    m.version += 1;
                    m.shadow.insert(l, m.version);
                }
                f.write(Lpn(a), n, &mut cx);
                let planned = m.apply(&mut cx).map_err(ctx)?;
                let host = planned
                    .iter()
                    .filter(|o| {
                        o.purpose == Purpose::Host && o.kind == OpKind::Program && o.lpn != NO_LPN
                    })
                    .count();
                prop_assert_eq!(host, n as usize, "step {}: host programs", step);
            }
            Op::Read { at, n } => {
                let (a, n) = range(at, n);
                f.read(Lpn(a), n, &mut cx);
                let planned = m.apply(&mut cx).map_err(ctx)?;
                let mut got: Vec<(u64, u32)> = planned
                    .iter()
                    .filter(|o| o.kind == OpKind::Read && o.purpose == Purpose::Host)
                    .map(|o| (o.lpn, o.ppn.0))
                    .collect();
                got.sort();
                let mut want: Vec<(u64, u32)> = (a..a + n as u64)
                    .filter(|l| m.shadow.contains_key(l))
                    .map(|l| (l, f.lookup(Lpn(l)).map_or(u32::MAX, |p| p.0)))
                    .collect();
                want.sort();
                prop_assert_eq!(got, want, "step {}: host reads", step);
            }
            Op::Trim { at, n } => {
                let (a, n) = range(at, n);
                for l in a..a + n as u64 {
                    m.shadow.remove(&l);
                }
                f.trim(Lpn(a), n, &mut cx);
                m.apply(&mut cx).map_err(ctx)?;
            }
            Op::Flush => {
                f.flush(&mut cx);
                m.apply(&mut cx).map_err(ctx)?;
            }
            Op::Idle => {
                for _ in 0..3 {
                    let did = f.background(&mut cx);
                    let planned = m.apply(&mut cx).map_err(ctx)?;
                    prop_assert!(
                        did || planned.is_empty(),
                        "step {}: background planned ops but said it did not",
                        step
                    );
                    if !did {
                        break;
                    }
                }
            }
        }
        f.check_invariants().map_err(ctx)?;
        for l in 0..lp {
            let at = f.lookup(Lpn(l));
            match m.shadow.get(&l) {
                Some(&v) => {
                    let p = at.ok_or_else(|| ctx(format!("lpn {l} (version {v}) is unmapped")))?;
                    let held = m.content[p.0 as usize];
                    prop_assert_eq!(
                        held,
                        Some((l, v)),
                        "step {}: lpn {} maps to ppn {}",
                        step,
                        l,
                        p.0
                    );
                }
                None => prop_assert_eq!(
                    at,
                    None::<Ppn>,
                    "step {}: lpn {} never written/trimmed but mapped",
                    step,
                    l
                ),
            }
        }
        let now = m.flash.erase_counts();
        prop_assert!(
            now.iter().zip(&erases).all(|(a, b)| a >= b),
            "erase counts shrank"
        );
        erases = now.to_vec();
    }
    Ok(())
}

fn cases() -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(48)
}

macro_rules! ftl_props {
    ($($name:ident => $kind:literal),* $(,)?) => {
        proptest! {
            #![proptest_config(ProptestConfig { cases: cases(), ..ProptestConfig::default() })]
            $(
                #[test]
                fn $name(k in knobs(), ops in proptest::collection::vec(op(), 1..300)) {
                    check_ftl($kind, &k, &ops)?;
                }
            )*
        }
    };
}

ftl_props!(
    page => "page",
    block => "block",
    bast => "bast",
    fast => "fast",
    last => "last",
    dftl => "dftl",
);
