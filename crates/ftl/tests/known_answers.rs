//! Known-answer tests of the zoo's merge accounting: block mapping's
//! read-modify-write, BAST's switch and partial merges, FAST's full merges, none
//! for page mapping; and the mapping tables' sizes.

use ssd_core::ftl::{FlashArray, Ftl, FtlCtx};
use ssd_core::rng::{SimRng, SimRngExt};
use ssd_core::{Lpn, Size};
use ssdsim_host::config::{GcPolicy, SsdConfig};

const PPB: u64 = 8;

fn setup(kind: &str, log_area: f64) -> (ftl::AnyFtl, FtlCtx, FlashArray) {
    setup_with(kind, log_area, GcPolicy::Greedy)
}

fn setup_with(kind: &str, log_area: f64, policy: GcPolicy) -> (ftl::AnyFtl, FtlCtx, FlashArray) {
    let mut c = SsdConfig::default();
    c.ftl.gc_policy = policy;
    c.layout.channels = 2;
    c.nand.planes_per_die = 1;
    c.nand.blocks_per_plane = 32;
    c.nand.pages_per_block = PPB as u32;
    c.nand.page_size = Size::kib(4);
    c.ftl.kind = kind.parse().unwrap();
    c.ftl.op = 0.3;
    c.ftl.log.log_area = log_area;
    let s = c.validate().unwrap();
    let f = ftl::build(&s.config.ftl, &s.shape()).unwrap();
    let cx = FtlCtx::new(SimRng::from_seed_label(1, "ftl"), 2);
    (f, cx, FlashArray::new(s.geometry))
}

fn write(f: &mut ftl::AnyFtl, cx: &mut FtlCtx, fa: &mut FlashArray, lpn: u64, n: u32) {
    cx.plan.clear();
    f.write(Lpn(lpn), n, cx);
    let ops = std::mem::take(&mut cx.plan.ops);
    for o in &ops {
        fa.apply(o);
    }
    f.check_invariants().unwrap();
}

#[test]
fn block_mapping_overwrite_of_one_page_copies_the_rest_and_erases_once() {
    let (mut f, mut cx, mut fa) = setup("block", 0.05);
    write(&mut f, &mut cx, &mut fa, 0, PPB as u32);
    let before = f.stats();
    write(&mut f, &mut cx, &mut fa, 3, 1);
    let d = f.stats().minus(&before);
    assert_eq!(d.merge_page_copies, PPB - 1);
    assert_eq!(d.merge_erases, 1);
    assert_eq!(fa.erase_counts().iter().sum::<u32>(), 1);
}

#[test]
fn bast_rewriting_a_whole_block_in_order_is_one_switch_merge() {
    let (mut f, mut cx, mut fa) = setup("bast", 0.05);
    write(&mut f, &mut cx, &mut fa, 0, PPB as u32);
    let before = f.stats();
    for l in 0..PPB {
        write(&mut f, &mut cx, &mut fa, l, 1);
    }
    let d = f.stats().minus(&before);
    assert_eq!(
        (d.merges_switch, d.merges_partial, d.merges_full),
        (1, 0, 0)
    );
    assert_eq!(d.merge_page_copies, 0);
    assert_eq!(d.merge_erases, 1, "only the old data block is erased");
}

#[test]
fn bast_rewriting_a_prefix_then_merging_is_a_partial_merge() {
    // FIFO victim choice: the oldest log (lbn 0's) is merged first.
    let (mut f, mut cx, mut fa) = setup_with("bast", 0.05, GcPolicy::Fifo);
    write(&mut f, &mut cx, &mut fa, 0, PPB as u32);
    for l in 0..3 {
        write(&mut f, &mut cx, &mut fa, l, 1);
    }
    // Idle-time merging is off; force the merge by claiming every log block.
    let before = f.stats();
    let lbns = f.logical_pages() / PPB;
    for lbn in 1..lbns {
        write(&mut f, &mut cx, &mut fa, lbn * PPB + 1, 1);
    }
    let d = f.stats().minus(&before);
    assert_eq!(d.merges_partial, 1, "{d:?}");
    // The partial merge copied offsets 3..8 from the data block, erased it once.
    assert!(d.merge_page_copies >= PPB - 3, "{d:?}");
}

#[test]
fn fast_full_random_log_spanning_k_blocks_costs_k_full_merges() {
    // 64 blocks x 0.02 -> 2 log blocks: one SW log and ONE RW log.
    let (mut f, mut cx, mut fa) = setup("fast", 0.02);
    let k = 4u64;
    for lbn in 0..k + 1 {
        write(&mut f, &mut cx, &mut fa, lbn * PPB, PPB as u32);
    }
    // 2 pages into each of k data blocks fill the RW log (8 pages).
    for lbn in 0..k {
        write(&mut f, &mut cx, &mut fa, lbn * PPB + 1, 1);
        write(&mut f, &mut cx, &mut fa, lbn * PPB + 2, 1);
    }
    let before = f.stats();
    write(&mut f, &mut cx, &mut fa, k * PPB + 5, 1);
    let d = f.stats().minus(&before);
    assert_eq!(d.merges_full, k);
    assert_eq!(d.merge_page_copies, k * PPB);
    assert_eq!(
        d.merge_erases,
        k + 1,
        "k old data blocks and the victim log"
    );
}

#[test]
fn page_mapping_never_merges() {
    let (mut f, mut cx, mut fa) = setup("page", 0.05);
    let lp = f.logical_pages();
    let mut x = 7u64;
    for _ in 0..lp * 6 {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        write(&mut f, &mut cx, &mut fa, (x >> 33) % lp, 1);
    }
    let s = f.stats();
    assert!(s.gc_runs > 0);
    assert_eq!(
        (
            s.merges_switch,
            s.merges_partial,
            s.merges_full,
            s.merge_erases
        ),
        (0, 0, 0, 0)
    );
}

#[test]
fn mapping_tables_are_byte_aligned_per_scheme() {
    // 64 blocks (1-byte block entries), 512 pages (2-byte page entries).
    let (f, _, _) = setup("block", 0.05);
    assert_eq!(f.mapping_table_bytes(), f.logical_pages() / PPB);
    let (f, _, _) = setup("bast", 0.05);
    // 64 x 0.05 -> 4 log blocks of 8 pages, 2 bytes a page entry.
    assert_eq!(
        f.mapping_table_bytes(),
        f.logical_pages() / PPB + 4 * PPB * 2
    );
    let (f, _, _) = setup("page", 0.05);
    assert_eq!(f.mapping_table_bytes(), f.logical_pages() * 2);
}
