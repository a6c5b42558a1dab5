//! The FTL work counters follow the work (issue 27): each victim candidate
//! examined is counted once (and costs a DRAM read of its valid count in the
//! engine), a windowed search over W candidates counts W, every page of a
//! collected victim has its validity checked, and every mapping entry a host
//! page or a copy touches is a map lookup.

use rand::Rng;
use ssd_core::ftl::{FlashArray, Ftl, FtlCtx, FtlStats, FtlWork};
use ssd_core::rng::{SimRng, SimRngExt};
use ssd_core::{Lpn, Size};
use ssdsim_host::config::{GcPolicy, Settings, SsdConfig};

const PPB: u32 = 8;

fn settings(kind: &str, policy: GcPolicy) -> Settings {
    let mut c = SsdConfig::default();
    c.ftl.gc_policy = policy;
    c.layout.channels = 2;
    c.nand.planes_per_die = 1;
    c.nand.blocks_per_plane = 32;
    c.nand.pages_per_block = PPB;
    c.nand.page_size = Size::kib(4);
    c.ftl.kind = kind.parse().unwrap();
    c.ftl.op = 0.3;
    c.ftl.log.log_area = 0.1;
    c.validate().unwrap()
}

/// `n` single-page random writes (after a sequential fill); the work and
/// stats of those writes, and the host pages written.
fn random_writes(s: &Settings, n: u32) -> (ftl::AnyFtl, FtlWork, FtlStats, u64) {
    let mut f = ftl::build(&s.config.ftl, &s.shape()).unwrap();
    let mut cx = FtlCtx::new(SimRng::from_seed_label(1, "ftl"), 2);
    let mut fa = FlashArray::new(s.geometry);
    let logical = f.logical_pages();
    let mut run = |f: &mut ftl::AnyFtl, cx: &mut FtlCtx, lpn: u64| {
        cx.plan.clear();
        f.write(Lpn(lpn), 1, cx);
        for o in &std::mem::take(&mut cx.plan.ops) {
            fa.apply(o);
        }
    };
    for l in 0..logical {
        run(&mut f, &mut cx, l);
    }
    let before = f.stats();
    cx.work = FtlWork::default();
    let mut rng = SimRng::from_seed_label(2, "writes");
    for _ in 0..n {
        let l = rng.gen_range(0..logical);
        run(&mut f, &mut cx, l);
    }
    f.check_invariants().unwrap();
    let st = f.stats().minus(&before);
    (f, cx.work, st, n as u64)
}

const ALL_POLICIES: [GcPolicy; 5] = [
    GcPolicy::Greedy,
    GcPolicy::Fifo,
    GcPolicy::Random,
    GcPolicy::CostBenefit,
    GcPolicy::Windowed(0.5),
];

#[test]
fn every_candidate_examined_is_counted_once_as_work() {
    for kind in ["page", "dftl", "bast", "fast", "last"] {
        for policy in ALL_POLICIES {
            let s = settings(kind, policy);
            let (_, w, st, _) = random_writes(&s, 3000);
            assert!(st.gc_runs > 0, "{kind} {policy:?}: no GC ran");
            assert_eq!(
                w.gc_candidates, st.gc_victims_examined,
                "{kind} {policy:?}: candidates counted as work and as examined differ"
            );
            assert!(
                w.gc_candidates >= st.gc_runs,
                "{kind} {policy:?}: fewer candidates than victims"
            );
        }
    }
}

#[test]
fn a_windowed_search_over_the_log_blocks_examines_the_window() {
    // BAST merges a victim log when every log block is taken: the search runs
    // over all `log_limit` logs, so a window F examines round(F x log_limit).
    for f in [0.1, 0.25, 0.5, 1.0] {
        let s = settings("bast", GcPolicy::Windowed(f));
        let (ftl, w, st, _) = random_writes(&s, 3000);
        let ftl::AnyFtl::Bast(b) = &ftl else {
            unreachable!()
        };
        let logs = b.core.log_limit as u64;
        let window = ((f * logs as f64).round() as u64).clamp(1, logs);
        assert!(st.gc_runs > 10, "window {f}: only {} merges", st.gc_runs);
        assert_eq!(w.gc_candidates, st.gc_runs * window, "window {f}");
    }
}

#[test]
fn page_mapping_checks_every_page_of_a_victim_and_looks_up_every_entry() {
    for policy in ALL_POLICIES {
        let s = settings("page", policy);
        let (_, w, st, host) = random_writes(&s, 3000);
        assert!(st.gc_runs > 0);
        // The validity scan reads each of a victim's pages' state.
        assert_eq!(w.gc_page_checks, st.gc_runs * PPB as u64, "{policy:?}");
        // One mapping entry per host page and per copy.
        assert_eq!(w.map_lookups, host + st.gc_page_copies, "{policy:?}");
        assert_eq!(w.gc_pages, st.gc_page_copies, "{policy:?}");
    }
}

#[test]
fn dftl_checks_every_page_of_a_victim() {
    for policy in ALL_POLICIES {
        let s = settings("dftl", policy);
        let (_, w, st, host) = random_writes(&s, 3000);
        assert!(st.gc_runs > 0);
        // Data and translation victims alike.
        assert_eq!(w.gc_page_checks, st.gc_runs * PPB as u64, "{policy:?}");
        // A host page's entry is looked up in the CMT; a data copy updates
        // its entry (a translation page's copy updates the directory, one
        // other DRAM access).
        assert_eq!(
            w.map_lookups,
            host + st.gc_page_copies - st.translation_gc_copies,
            "{policy:?}"
        );
        assert_eq!(w.gc_pages, st.gc_page_copies, "{policy:?}");
    }
}

#[test]
fn the_dram_accesses_follow_the_work() {
    // One DRAM access per map lookup, per candidate examined (its valid
    // count), per victim page checked, plus the FTL's others.
    let w = FtlWork {
        map_lookups: 3,
        gc_candidates: 5,
        gc_pages: 7,
        gc_page_checks: 11,
        dram_accesses: 13,
    };
    assert_eq!(w.dram_total(), 3 + 5 + 11 + 13);
    assert_eq!(w.dram_by_activity(2), [2, 3, 5, 11, 13]);
}
