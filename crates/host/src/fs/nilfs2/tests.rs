//! Tests of `nilfs2`.

use super::*;
use rand::{Rng, SeedableRng};
use ssd_core::rng::SimRng;
use ssd_core::units::Size;

const S: u64 = 1_000_000_000;

fn fs_with(bps: u64, nsegs: u64, protection: Dur) -> Nilfs2 {
    let cfg = FsConfig {
        kind: FsKind::Nilfs2,
        segment_size: Some(Size(bps * BLOCK)),
        protection_period: Some(protection),
        ..FsConfig::default()
    };
    cfg.validate().unwrap();
    Nilfs2::new(&cfg, nsegs * bps + 7, DirTree::flat(64, 16)).unwrap()
}

fn t(s: u64) -> SimTime {
    SimTime(s * S)
}

/// The page cache writes file `k`'s dirty pages (an fsync's first part, an
/// O_DIRECT write): runs of them, in file order.
fn wb(f: &mut Nilfs2, k: u32, now: SimTime) -> Vec<(u64, u64, u32)> {
    let dirty: Vec<u64> = f.files[k as usize]
        .dirty
        .iter()
        .enumerate()
        .filter(|(_, d)| **d)
        .map(|(i, _)| i as u64)
        .collect();
    let mut out = Vec::new();
    for (i, n) in runs(&dirty) {
        f.place(k, i, n as u32, now, &mut out);
    }
    out
}

/// The page cache writes a construction's data: every page of its files
/// that the construction placed.
fn write_ordered(f: &mut Nilfs2, io: &FsyncIo, now: SimTime) {
    for &k in &io.ordered {
        let n = f.files[k as usize].place.len() as u32;
        let mut out = Vec::new();
        f.place(k, 0, n, now, &mut out);
    }
    assert!(f.staged.is_empty(), "{:?}", f.staged);
}

/// An fsync as the page cache runs it: the file's data, the file
/// system's part, the other files' data the construction placed.
fn fsync(f: &mut Nilfs2, k: u32, now: SimTime) -> FsyncIo {
    wb(f, k, now);
    let io = f.fsync(k, now);
    write_ordered(f, &io, now);
    io
}

/// segctord's construction, as the page cache runs it on its thread.
fn commit(f: &mut Nilfs2, now: SimTime) -> Option<FsyncIo> {
    let io = f.commit_io(now)?;
    write_ordered(f, &io, now);
    Some(io)
}

#[test]
fn mkfs_makes_one_log_and_b_tree_arithmetic() {
    let f = fs_with(2048, 64, Dur(0));
    f.check().unwrap();
    assert_eq!(f.nrsvsegs, 8);
    assert_eq!((f.min_clean, f.max_clean), (7, 13));
    assert_eq!(f.free_segments(), 63);
    assert!(f.superroot.is_some() && f.pending_blocks() == 0);
    // The directories' blocks and inodes, cpfile, sufile, DAT, the
    // super root and the log's summary: nothing at block 0.
    assert_eq!(f.seg_start(0), 1);
    assert_eq!(*f.owner.keys().next().unwrap(), 1);
    assert_eq!(f.owner[&1], Owner::Summary);
    assert_eq!(SS_ENTRIES, 253);
    assert_eq!(BTREE_NODE_CHILDREN, 255);
    assert_eq!(btree_nodes(7), 0);
    assert_eq!(btree_nodes(8), 1);
    assert_eq!(btree_nodes(3 * 255), 3);
    // Four leaves do not fit the inode's root of 3: a level above.
    assert_eq!(btree_nodes(3 * 255 + 1), 5);
    let mut p = Vec::new();
    btree_path(3 * 255 + 1, 3 * 255, &mut p);
    assert_eq!(p, vec![(1, 3), (2, 0)]);
}

#[test]
fn segment_usage_follows_writes_rewrites_and_unlinks() {
    let mut f = fs_with(64, 40, Dur(0));
    let mut io = Vec::new();
    f.create(0, t(0), &mut io).unwrap();
    f.write(0, 0, 10 * BLOCK, t(0), &mut io).unwrap();
    // Nothing placed at the write: the blocks wait, dirty, for a
    // construction; a rewrite while dirty is still one block each.
    assert!(f.files[0].place.iter().all(|&b| b == UNPLACED));
    assert_eq!(f.pending_blocks(), 0);
    f.write(0, 0, 4 * BLOCK, t(0), &mut io).unwrap();
    assert_eq!(f.unplaced, 10);
    f.check().unwrap();
    fsync(&mut f, 0, t(1));
    assert_eq!(f.unplaced, 0);
    assert_eq!(f.files[0].version, vec![1; 10]);
    f.check().unwrap();
    // A rewrite leaves the block where it is until its next construction,
    // which moves it: its old segment loses a live block, the new place
    // is at the head.
    let live_before: u32 = f.segs.iter().map(|s| s.live).sum();
    let old = f.files[0].place[2];
    let old_seg = f.seg_of(old);
    let l0 = f.segs[old_seg as usize].live;
    f.write(0, 2 * BLOCK, BLOCK, t(2), &mut io).unwrap();
    assert_eq!(f.files[0].place[2], old);
    wb(&mut f, 0, t(2));
    assert_ne!(f.files[0].place[2], old);
    assert!(!f.owner.contains_key(&old));
    let moved = f.seg_of(f.files[0].place[2]) != old_seg;
    let l1 = f.segs[old_seg as usize].live;
    // Same segment: -1 (old) +1 (new) and maybe +1 (a new log's summary).
    assert!(if moved {
        l1 == l0 - 1
    } else {
        l1 == l0 || l1 == l0 + 1
    });
    let live_after: u32 = f.segs.iter().map(|s| s.live).sum();
    assert!(live_after == live_before || live_after == live_before + 1);
    f.check().unwrap();
    // A file deleted with dirty blocks: none is ever placed.
    f.write(0, 0, 3 * BLOCK, t(3), &mut io).unwrap();
    f.unlink(0, t(3), &mut io);
    assert_eq!(f.unplaced, 0);
    f.check().unwrap();
    fsync(&mut f, 1, t(3));
    f.check().unwrap();
    let live: u32 = f.segs.iter().map(|s| s.live).sum();
    assert_eq!(live as usize, f.owner.len());
    assert!(f.files[0].place.is_empty());
}

#[test]
fn after_fsync_the_log_holds_what_recovery_needs() {
    let mut f = fs_with(64, 40, Dur(0));
    let mut io = Vec::new();
    f.create(3, t(0), &mut io).unwrap();
    f.write(3, 0, 20 * BLOCK, t(0), &mut io).unwrap();
    f.create(4, t(0), &mut io).unwrap();
    f.write(4, 0, 3 * BLOCK, t(0), &mut io).unwrap();
    // The fsync writes its file's data first: it takes the log head.
    wb(&mut f, 3, t(1));
    assert!(f.pending_blocks() > 20);
    let s = f.fsync(3, t(1));
    assert!(s.barrier && !s.direct.is_empty());
    // The construction collects every dirty file (one construction for
    // all: group commit): file 4's data is placed in the log before its
    // metadata, and the page cache writes it first.
    assert_eq!(s.ordered, vec![4]);
    let sr = f.superroot.unwrap();
    assert!(f.files[4].place.iter().all(|&b| b < sr));
    write_ordered(&mut f, &s, t(1));
    assert_eq!(f.pending_blocks(), 0);
    assert!(f.dirty.is_empty() && f.seg_dirty.is_empty());
    // What reaches the file's blocks is in a constructed log: its inode's
    // ifile block, its B-tree nodes, the DAT blocks of its blocks, the
    // sufile blocks of its segments, the checkpoint, the super root; and
    // the fsync's direct writes are exactly those copies and summaries.
    let file = &f.files[3];
    assert!(f
        .meta
        .contains_key(&Meta::Ifile(file.ino / INODES_PER_BLOCK)));
    assert_eq!(
        f.meta.range(Nilfs2::node_range(3)).count() as u64,
        btree_nodes(20)
    );
    for (&b, &v) in file.place.iter().zip(&file.vblk) {
        assert!(f.meta.contains_key(&Meta::Dat(v / DAT_PER_BLOCK)));
        assert!(f
            .meta
            .contains_key(&Meta::Sufile(f.seg_of(b) / SU_PER_BLOCK)));
    }
    assert!(f.meta.contains_key(&Meta::Cpfile(f.cno / CP_PER_BLOCK)));
    let written: BTreeSet<u64> = s
        .direct
        .iter()
        .flat_map(|&(b, n)| b..b + n as u64)
        .collect();
    let sr = f.superroot.unwrap();
    assert_eq!(s.direct.last().map(|&(b, n)| b + n as u64 - 1), Some(sr));
    for &b in &written {
        assert!(
            matches!(
                f.owner.get(&b),
                Some(Owner::Meta(_) | Owner::Summary | Owner::SuperRoot)
            ),
            "{b}: {:?}",
            f.owner.get(&b)
        );
    }
    assert_eq!(f.stats().journal_blocks_written, written.len() as u64);
    // Nothing changed: nothing to construct.
    assert_eq!(f.fsync(3, t(2)), FsyncIo::default());
    f.check().unwrap();
}

#[test]
fn a_small_change_constructs_a_small_log() {
    let mut f = fs_with(2048, 64, Dur(0));
    let mut io = Vec::new();
    f.create(0, t(0), &mut io).unwrap();
    f.write(0, 0, 8 * BLOCK, t(0), &mut io).unwrap();
    fsync(&mut f, 0, t(1));
    f.write(0, 8 * BLOCK, 100, t(2), &mut io).unwrap();
    let s = fsync(&mut f, 0, t(2));
    let n: u64 = s.direct.iter().map(|r| r.1 as u64).sum();
    // Summary, leaf, ifile, cpfile (checkpoints 1-20 share the header's
    // block), sufile, DAT, super root.
    assert_eq!(n, 7, "{s:?}");
    assert_eq!(f.stats().commits_fsync, 2);
}

#[test]
fn the_timer_constructs_when_dirty() {
    let mut f = fs_with(2048, 64, Dur(0));
    let mut io = Vec::new();
    assert_eq!(f.next_tick(), Some(t(5)));
    f.tick(t(5), &mut io);
    assert!(io.is_empty(), "nothing dirty: {io:?}");
    f.create(0, t(6), &mut io).unwrap();
    f.write(0, 0, 5 * BLOCK, t(6), &mut io).unwrap();
    io.clear();
    f.tick(t(7), &mut io);
    assert!(io.is_empty());
    // segctord's timer: its thread constructs, data and all.
    f.tick(t(10), &mut io);
    assert_eq!(io, vec![FsCall::Commit]);
    let c = commit(&mut f, t(10)).unwrap();
    assert_eq!(c.ordered, vec![0]);
    assert!(c.barrier && !c.direct.is_empty());
    assert_eq!(f.stats().commits_timer, 1);
    assert_eq!(f.stats().data_blocks_allocated, 5);
    assert_eq!(f.next_tick(), Some(t(15)));
    assert!(f.commit_io(t(11)).is_none());
    f.check().unwrap();
    // Past the watermark, a write asks for a construction at once.
    io.clear();
    f.write(0, 0, WATERMARK * BLOCK, t(12), &mut io).unwrap();
    assert!(!io.contains(&FsCall::Commit));
    f.write(0, WATERMARK * BLOCK, BLOCK, t(12), &mut io)
        .unwrap();
    assert_eq!(io.last(), Some(&FsCall::Commit));
    let c = commit(&mut f, t(12)).unwrap();
    assert_eq!(c.ordered, vec![0]);
    assert_eq!(f.unplaced, 0);
    f.check().unwrap();
}

/// A construction that runs between a write() and the page cache's
/// dirtying of its pages places blocks the device does not hold yet:
/// `locate` reports where the data is until the cache writes them (the
/// old place, or nowhere for a new block, whose page is zero-filled, not
/// read: `block_write_begin`).
#[test]
fn a_block_placed_before_its_page_is_written_holds_its_old_data() {
    let mut f = fs_with(2048, 64, Dur(0));
    let mut io = Vec::new();
    f.create(0, t(0), &mut io).unwrap();
    f.write(0, 0, 2 * BLOCK, t(0), &mut io).unwrap();
    fsync(&mut f, 0, t(1));
    let mut at = Vec::new();
    f.locate(0, 0, 2, &mut at);
    assert_eq!(at.iter().map(|r| r.2).sum::<u32>(), 2, "{at:?}");
    let old = at.clone();
    // Block 1 rewritten, block 2 appended; segctord constructs before the
    // cache has written either page.
    f.write(0, BLOCK + 100, BLOCK, t(2), &mut io).unwrap();
    let c = f.commit_io(t(2)).unwrap();
    assert_eq!(c.ordered, vec![0]);
    assert_eq!(f.staged.len(), 2);
    at.clear();
    f.locate(0, 0, 3, &mut at);
    assert_eq!(at, old, "the old places, the new block nowhere");
    // The cache writes the pages: they go where the construction put them,
    // and hold the data there.
    write_ordered(&mut f, &c, t(2));
    at.clear();
    f.locate(0, 0, 3, &mut at);
    assert_eq!(at.iter().map(|r| r.2).sum::<u32>(), 3, "{at:?}");
    assert_ne!(at, old);
    f.check().unwrap();
}

/// Fill segments at known times: the victims are the oldest first,
/// none within the protection period.
#[test]
fn the_cleaner_picks_the_oldest_segments_out_of_protection() {
    let mut f = fs_with(64, 40, Dur(100 * S));
    let mut io = Vec::new();
    f.create(0, t(0), &mut io).unwrap();
    let mut segs = Vec::new();
    for k in 0..6u64 {
        let now = t(10 + 50 * k);
        let at = f.files[0].size;
        f.write(0, at, 100 * BLOCK, now, &mut io).unwrap();
        fsync(&mut f, 0, now);
        segs.push(f.cur.unwrap());
    }
    f.check().unwrap();
    let ages: Vec<(SimTime, u64)> = f.by_age.iter().copied().collect();
    assert!(ages.windows(2).all(|w| w[0] < w[1]));
    // At 300 s, segments last written before 200 s are out of
    // protection, oldest first, never the current one.
    let v = f.victims(t(300), 100);
    assert!(!v.is_empty());
    for s in &v {
        assert!(f.segs[*s as usize].lastmod + Dur(100 * S) <= t(300));
        assert_ne!(Some(*s), f.cur);
    }
    let lm: Vec<SimTime> = v.iter().map(|&s| f.segs[s as usize].lastmod).collect();
    assert!(lm.windows(2).all(|w| w[0] <= w[1]));
    assert_eq!(v[0], f.by_age.iter().next().unwrap().1);
    let young = f
        .by_age
        .iter()
        .filter(|a| a.0 + Dur(100 * S) > t(300))
        .count();
    assert!(young > 0);
    assert_eq!(v.len(), f.by_age.len() - young);
    assert_eq!(f.victims(t(300), 2).len(), 2);
    assert!(f.victims(t(10), 100).is_empty());
}

/// Write, rewrite and delete on a small device with no protection: the
/// cleaner runs, and every file block is where its file says, holding
/// its latest version.
#[test]
fn the_cleaner_never_loses_live_data() {
    // 200 segments: 10 reserved, the cleaner from 20 free to 40.
    let mut f = fs_with(64, 200, Dur(0));
    let mut io = Vec::new();
    let mut rng = SimRng::seed_from_u64(5);
    let mut exists = [false; 64];
    let mut failed = 0;
    let mut cleaner_reads = 0;
    for step in 0..4000u64 {
        // One operation a second: the cleaner's 2 segments per 5 s keep
        // up with it.
        let now = t(step);
        let k = rng.gen_range(0..24usize);
        let r = rng.gen_range(0..10);
        if !exists[k] {
            f.create(k as u32, now, &mut io).unwrap();
            exists[k] = true;
        } else if r == 0 {
            f.unlink(k as u32, now, &mut io);
            exists[k] = false;
        } else if r < 5 {
            let size = f.size(k as u32);
            let len = rng.gen_range(1..30 * BLOCK);
            if f.write(k as u32, size, len, now, &mut io).is_err() {
                failed += 1;
            }
        } else if f.size(k as u32) > 0 {
            // Rewrite a range inside the file.
            let size = f.size(k as u32);
            let off = rng.gen_range(0..size);
            let len = rng.gen_range(1..=size - off).min(8 * BLOCK);
            if f.write(k as u32, off, len, now, &mut io).is_err() {
                failed += 1;
            }
        }
        if r == 9 {
            fsync(&mut f, k as u32, now);
        }
        if io.contains(&FsCall::Commit) {
            commit(&mut f, now);
        }
        if f.next_tick().is_some_and(|t| t <= now) {
            let from = io.len();
            f.tick(now, &mut io);
            // The file system's thread: never data, reads only the
            // cleaner's.
            for c in &io[from..] {
                match c {
                    FsCall::Data { .. } | FsCall::Buffered { .. } | FsCall::Meta { .. } => {
                        panic!("{c:?} from tick")
                    }
                    FsCall::Commit => {
                        commit(&mut f, now);
                    }
                    FsCall::Direct {
                        op: IoOp::Read,
                        blocks,
                        ..
                    } => cleaner_reads += *blocks as u64,
                    _ => {}
                }
            }
        }
        if step % 50 == 0 {
            f.check().unwrap_or_else(|e| panic!("step {step}: {e}"));
            f.check_versions()
                .unwrap_or_else(|e| panic!("step {step}: {e}"));
        }
        io.clear();
    }
    f.check().unwrap();
    f.check_versions().unwrap();
    let st = f.stats();
    assert!(
        st.cleaner_blocks_read > 100 && st.cleaner_blocks_written >= st.cleaner_blocks_read,
        "{st:?}"
    );
    assert_eq!(cleaner_reads, st.cleaner_blocks_read);
    assert!(f.free_segments() >= f.nrsvsegs, "{}", f.free_segments());
    let live: usize = f.files.iter().map(|x| x.place.len()).sum();
    assert!(
        failed < 100,
        "{failed} writes refused, {live} live data blocks, {st:?}"
    );
}

#[test]
fn a_full_log_refuses_writes_without_panicking() {
    // The default protection period: nothing can be cleaned.
    let mut f = fs_with(64, 20, Dur::from_ms(3_600_000));
    let mut io = Vec::new();
    f.create(0, t(0), &mut io).unwrap();
    let mut n = 0;
    let mut now = 0;
    while f.write(0, f.size(0), 16 * BLOCK, t(now), &mut io).is_ok() {
        n += 1;
        now += 1;
        f.tick(t(now), &mut io);
        if io.contains(&FsCall::Commit) {
            commit(&mut f, t(now));
        }
        io.clear();
        assert!(n < 10_000);
    }
    f.check().unwrap();
    assert!(f.free_segments() >= f.nrsvsegs.saturating_sub(1));
    // Constructions and the cleaner's passes still work.
    fsync(&mut f, 0, t(now + 1));
    f.tick(t(now + 100), &mut io);
    if io.contains(&FsCall::Commit) {
        commit(&mut f, t(now + 100));
    }
    f.check().unwrap();
    f.check_versions().unwrap();
    assert_eq!(f.stats().cleaner_blocks_read, 0);
}

#[test]
fn knobs_are_checked_and_refused_for_other_kinds() {
    let c = FsConfig {
        kind: FsKind::Ext4,
        protection_period: Some(Dur(0)),
        ..FsConfig::default()
    };
    let e = c.validate().unwrap_err().to_string();
    assert!(e.contains("fs.protection_period"), "{e}");
    let c = FsConfig {
        kind: FsKind::Nilfs2,
        segment_size: Some(Size(8 * BLOCK)),
        ..FsConfig::default()
    };
    assert!(c
        .validate()
        .unwrap_err()
        .to_string()
        .contains("fs.segment_size"));
    let c = FsConfig {
        kind: FsKind::Nilfs2,
        min_clean_segments: Some(30),
        ..FsConfig::default()
    };
    assert!(c.validate().is_err());
    let c = FsConfig {
        kind: FsKind::Nilfs2,
        commit_interval: Some(Dur::from_ms(1000)),
        ..FsConfig::default()
    };
    c.validate().unwrap();
    assert!(matches!(
        c.build(1 << 18, 100, 10, 1).unwrap(),
        super::super::AnyFs::Nilfs2(_)
    ));
}
