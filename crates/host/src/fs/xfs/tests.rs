//! Tests of `xfs`.

use super::*;

const S: u64 = 1_000_000_000;

/// 4 GiB, 1,000 files in directories of 100.
fn fs() -> Xfs {
    fs_with(FsConfig {
        kind: FsKind::Xfs,
        ..FsConfig::default()
    })
}

fn fs_with(cfg: FsConfig) -> Xfs {
    Xfs::new(&cfg, 1 << 20, DirTree::flat(1000, 100)).unwrap()
}

fn blocks_of(runs: &[(u64, u32)]) -> u64 {
    runs.iter().map(|r| r.1 as u64).sum()
}

#[test]
fn mkfs_layout_is_consistent() {
    let f = fs();
    f.check().unwrap();
    assert_eq!(f.ags.len(), 4);
    assert_eq!(f.agblocks, 1 << 18);
    // 64 MiB of log (the 2048:1 ratio gives 2 MiB: the floor wins), in
    // the middle AG right after its headers and B+tree roots.
    assert_eq!(f.log, (2 * (1 << 18) + AG_FIXED, 16_384));
    assert_eq!(default_log_blocks(1 << 28, 1 << 26), (1 << 28) / 2048);
    assert_eq!(default_log_blocks(1 << 30, 1 << 28), MAX_LOG_BYTES / BLOCK);
    assert_eq!(default_log_blocks(100_000, 25_000), 2560);
    assert_eq!(default_agcount(1 << 20), 4);
    assert_eq!(default_agcount(5 << 28), 5);
    // mkfs's inodes and the directories: 10 directories rotating over
    // the AGs, each a block-form directory of one block.
    assert_eq!(f.dirs.len(), 10);
    let ags: Vec<usize> = f.dirs.iter().map(|d| d.ag).collect();
    assert_eq!(ags, vec![0, 1, 2, 3, 0, 1, 2, 3, 0, 1]);
    assert!(f.dirs.iter().all(|d| d.blocks.len() == 1));
    assert_eq!(f.cil_bytes(), 0);
    let st = f.stats();
    assert_eq!(st.metadata_dirtied, 0);
    assert!(st.used_blocks > 16_384 && st.used_blocks < 16_384 + 100);
    // The per-AG knobs.
    let g = fs_with(FsConfig {
        kind: FsKind::Xfs,
        agcount: Some(8),
        log_size: Some(ssd_core::units::Size(8 << 20)),
        ..FsConfig::default()
    });
    g.check().unwrap();
    assert_eq!((g.ags.len(), g.log.1), (8, 2048));
    assert_eq!(g.log.0, 4 * (1 << 17) + AG_FIXED);
    let bad = FsConfig {
        kind: FsKind::Ext4,
        agcount: Some(8),
        ..FsConfig::default()
    };
    assert!(bad
        .validate()
        .unwrap_err()
        .to_string()
        .contains("fs.agcount"));
    // The [fs] section's XFS knobs, and their bounds.
    let c: FsConfig = toml::from_str(
        "kind = \"xfs\"\nagcount = 8\nlog_size = \"8MiB\"\nxfssyncd_centisecs = 500\n",
    )
    .unwrap();
    c.validate().unwrap();
    assert_eq!(c.log_size, Some(ssd_core::units::Size(8 << 20)));
    for (toml, field) in [
        ("xfssyncd_centisecs = 50", "fs.xfssyncd_centisecs"),
        ("log_size = \"1MiB\"", "fs.log_size"),
        ("agcount = 0", "fs.agcount"),
    ] {
        let c: FsConfig = toml::from_str(&format!("kind = \"xfs\"\n{toml}\n")).unwrap();
        assert!(
            c.validate().unwrap_err().to_string().contains(field),
            "{toml}"
        );
    }
    let ext: FsConfig = toml::from_str("kind = \"ext4\"\nxfssyncd_centisecs = 500\n").unwrap();
    assert!(ext.validate().is_err());
    let too_many = FsConfig {
        kind: FsKind::Xfs,
        agcount: Some(1024),
        ..FsConfig::default()
    };
    assert!(Xfs::new(&too_many, 1 << 20, DirTree::flat(10, 10)).is_err());
    // AGs of 16,385 blocks: 65,535 asked, 65,533 fit, and the last
    // one, of 4 blocks, is left out (mkfs recomputes the count from the
    // AG size).
    let odd = FsConfig {
        kind: FsKind::Xfs,
        agcount: Some(65_535),
        ..FsConfig::default()
    };
    assert_eq!(default_agcount(1 << 30), 4);
    let ags = |b: u64, c: &FsConfig| Xfs::new(c, b, DirTree::flat(10, 10)).map(|f| f.ags.len());
    assert_eq!(ags(1 << 30, &odd).unwrap(), 65_532);
}

#[test]
fn placement_by_allocation_group() {
    let mut f = fs();
    let mut io = Vec::new();
    let ag_of_file = |f: &Xfs, k: u32| f.ag_of(f.files[k as usize].ino / INODES_PER_BLOCK);
    // Files of one directory in its AG, their data near their inodes.
    for k in 0..5 {
        f.create(k, SimTime::ZERO, &mut io).unwrap();
        f.write(k, 0, 3 * BLOCK, SimTime::ZERO, &mut io).unwrap();
        assert_eq!(ag_of_file(&f, k), 0);
        assert_eq!(f.ag_of(f.files[k as usize].extents[0].0), 0);
    }
    // Small files packed one after the other (best fit from one free
    // extent).
    let e = |f: &Xfs, k: usize| f.files[k].extents[0];
    assert_eq!(e(&f, 0).0 + 3, e(&f, 1).0);
    // New directories in other AGs: files of directories 1, 2, 3.
    for (k, want) in [(100u32, 1usize), (200, 2), (300, 3)] {
        f.create(k, SimTime::ZERO, &mut io).unwrap();
        assert_eq!(ag_of_file(&f, k), want);
        f.write(k, 0, BLOCK, SimTime::ZERO, &mut io).unwrap();
        assert_eq!(f.ag_of(e(&f, k as usize).0), want);
    }
    // A large file written in 1 MiB calls is one extent.
    f.create(7, SimTime::ZERO, &mut io).unwrap();
    for k in 0..64 {
        f.write(7, k << 20, 1 << 20, SimTime::ZERO, &mut io)
            .unwrap();
    }
    assert_eq!(f.files[7].extents.len(), 1, "{:?}", f.files[7].extents);
    f.check().unwrap();
    // Freed space is reused best-fit: a 3-block hole takes a 3-block
    // file.
    let hole = e(&f, 2).0;
    f.unlink(2, SimTime::ZERO, &mut io);
    f.check().unwrap();
    f.create(8, SimTime::ZERO, &mut io).unwrap();
    f.write(8, 0, 3 * BLOCK, SimTime::ZERO, &mut io).unwrap();
    assert_eq!(e(&f, 8).0, hole);
    f.check().unwrap();
}

#[test]
fn many_extents_go_to_a_bmbt_and_inode_chunks_come_and_go() {
    let mut f = fs();
    let mut io = Vec::new();
    // Interleave two files block by block: each extent one block.
    f.create(0, SimTime::ZERO, &mut io).unwrap();
    f.create(1, SimTime::ZERO, &mut io).unwrap();
    for k in 0..600 {
        for g in 0..2 {
            f.write(g, k * BLOCK, BLOCK, SimTime::ZERO, &mut io)
                .unwrap();
        }
    }
    assert_eq!(f.files[0].extents.len(), 600);
    assert_eq!(f.files[0].bmbt.len(), 3);
    // The blocks of a range found by the extent lookup are those of the
    // whole map walked from the start, new blocks (not written back)
    // left out until placed.
    let mut placed = Vec::new();
    for (index, n) in [(0, 1), (300, 4), (599, 1)] {
        let (mut a, mut b) = (Vec::new(), Vec::new());
        f.locate(0, index, n, &mut a);
        assert!(a.is_empty(), "{a:?}");
        f.place(0, index, n, SimTime::ZERO, &mut placed);
        f.locate(0, index, n, &mut a);
        crate::fs::filemap::runs_of(&f.files[0].extents, 0, index, n, None, &mut b);
        assert_eq!(a, b);
        assert_eq!(a.iter().map(|r| r.2).sum::<u32>(), n);
    }
    assert_eq!(f.stats().index_blocks, 6);
    f.check().unwrap();
    // 200 files in one AG: a few chunks, freed when emptied.
    for k in 2..100 {
        f.create(k, SimTime::ZERO, &mut io).unwrap();
    }
    let chunks = |f: &Xfs| f.ags[0].chunks.len();
    assert_eq!(chunks(&f), 2);
    f.check().unwrap();
    for k in 0..100 {
        f.unlink(k, SimTime::ZERO, &mut io);
    }
    assert_eq!(f.stats().index_blocks, 0);
    // The root chunk (mkfs's inodes, directories 0, 4 and 8) stays.
    assert_eq!(chunks(&f), 1);
    f.check().unwrap();
}

#[test]
fn free_space_btrees_split_and_shrink_with_their_records() {
    let cfg = FsConfig {
        kind: FsKind::Xfs,
        ..FsConfig::default()
    };
    let mut f = Xfs::new(&cfg, 1 << 20, DirTree::flat(2000, 2000)).unwrap();
    let mut io = Vec::new();
    for k in 0..2000 {
        f.create(k, SimTime::ZERO, &mut io).unwrap();
        f.write(k, 0, BLOCK, SimTime::ZERO, &mut io).unwrap();
    }
    assert_eq!(f.ags[0].trees[INO].len(), 1);
    assert_eq!(f.ags[0].chunks.len(), 32);
    // Every other file removed: 1,000 one-block holes, two leaves of
    // 505 records and a root in each free-space tree.
    for k in (0..2000).step_by(2) {
        f.unlink(k, SimTime::ZERO, &mut io);
    }
    let recs = f.ags[0].bno.len() as u64;
    assert!(recs > 900, "{recs}");
    assert_eq!(f.ags[0].trees[BNO].len(), 3);
    assert_eq!(f.ags[0].trees[CNT].len(), 3);
    f.check().unwrap();
    // The new blocks were logged whole and the AGFL sector dirtied.
    assert_eq!(
        f.cil[&Item::Buf(f.ags[0].trees[BNO][1] * 8)],
        Region::Buf { mask: u32::MAX }
    );
    assert!(f.cil.contains_key(&Item::Buf(3)));
    for k in (1..2000).step_by(2) {
        f.unlink(k, SimTime::ZERO, &mut io);
    }
    assert!(f.ags[0].trees[BNO].len() <= 2);
    f.check().unwrap();
}

#[test]
fn a_full_file_system_refuses_writes_and_stays_consistent() {
    let cfg = FsConfig {
        kind: FsKind::Xfs,
        ..FsConfig::default()
    };
    // 64 MiB: AGs of 16 MiB, the minimum log.
    let mut f = Xfs::new(&cfg, 16_384, DirTree::flat(400, 20)).unwrap();
    assert_eq!((f.ags.len(), f.log.1), (4, 2560));
    f.check().unwrap();
    let empty = f.stats().used_blocks;
    let mut io = Vec::new();
    let mut refused = 0;
    for k in 0..400u32 {
        f.create(k, SimTime::ZERO, &mut io).unwrap();
        // Odd files interleave small appends with the even ones' large
        // writes: fragmented free space, then none.
        let len = if k % 2 == 0 { 300 * BLOCK } else { 5000 };
        for _ in 0..3 {
            let sz = f.size(k);
            if f.write(k, sz, len, SimTime::ZERO, &mut io).is_err() {
                refused += 1;
            }
        }
    }
    assert!(refused > 0);
    f.check().unwrap();
    for k in (0..400).step_by(2) {
        f.unlink(k, SimTime::ZERO, &mut io);
    }
    f.check().unwrap();
    for k in (1..400).step_by(2) {
        f.unlink(k, SimTime::ZERO, &mut io);
    }
    f.check().unwrap();
    assert_eq!(f.stats().used_blocks, empty);
}

#[test]
fn relogged_items_are_logged_once_per_checkpoint() {
    let mut f = fs();
    let mut io = Vec::new();
    f.create(0, SimTime::ZERO, &mut io).unwrap();
    f.write(0, 0, BLOCK, SimTime::ZERO, &mut io).unwrap();
    let before = f.cil_bytes();
    let items = f.cil.len();
    // Ten more appends within the allocated block change only the
    // inode core (size), already in the CIL with its fork.
    for k in 1..10 {
        f.write(0, 0, 100 * k, SimTime::ZERO, &mut io).unwrap();
    }
    assert_eq!((f.cil_bytes(), f.cil.len()), (before, items));
    let ino = f.files[0].ino;
    assert_eq!(
        f.cil[&Item::Inode(ino)].bytes(),
        OPHDR + INODE_LOG_FORMAT + OPHDR + DINODE_CORE + OPHDR + 16
    );
    // A force writes the checkpoint's blocks at the head, then a second
    // force writes nothing.
    let ((ls, _), head) = f.log_area();
    assert_eq!(head, ls);
    let want = checkpoint_blocks(before);
    assert_eq!(
        want,
        (before + CHECKPOINT_OVERHEAD + REC_HEADER).div_ceil(BLOCK)
    );
    let s = f.fsync(0, SimTime::ZERO);
    assert!(s.barrier && s.metadata.is_empty() && s.ordered.is_empty());
    assert_eq!(s.direct, vec![(ls, want as u32)]);
    assert_eq!(f.log_area().1, ls + want);
    assert_eq!(f.fsync(0, SimTime::ZERO), FsyncIo::default());
    let st = f.stats();
    assert_eq!((st.commits_fsync, st.journal_blocks_written), (1, want));
    // Only pure overwrites without metadata change would skip the inode;
    // here each write logs it again in the next checkpoint.
    f.write(0, 0, 10, SimTime::ZERO, &mut io).unwrap();
    assert_eq!(f.cil.len(), 1);
    f.check().unwrap();
}

/// After fsync(f) returns, every change made before it (by any file)
/// is in a written checkpoint: the CIL is empty and the checkpoint
/// holds the file's inode, its directory's block and inode, the AG's
/// headers and B+tree blocks, the other file's changes.
#[test]
fn after_fsync_the_log_holds_what_recovery_needs() {
    let mut f = fs();
    let mut io = Vec::new();
    f.create(0, SimTime::ZERO, &mut io).unwrap();
    f.create(1, SimTime::ZERO, &mut io).unwrap();
    f.write(1, 0, 5 * BLOCK, SimTime::ZERO, &mut io).unwrap();
    f.write(0, 0, 2 * BLOCK, SimTime::ZERO, &mut io).unwrap();
    let logged: BTreeSet<Item> = f.cil.keys().copied().collect();
    // Every Meta call's block is logged (inode cluster blocks through
    // their inode items).
    for c in &io {
        if let FsCall::Meta { block } = c {
            assert!(
                logged.iter().any(|i| match *i {
                    Item::Buf(s) => s / 8 == *block,
                    Item::Inode(ino) => ino / INODES_PER_BLOCK == *block,
                    _ => false,
                }),
                "block {block} dirtied but not logged"
            );
        }
    }
    let s = f.fsync(0, SimTime::ZERO);
    assert!(!s.direct.is_empty());
    assert_eq!(f.cil_bytes(), 0);
    assert!(f.cil.is_empty());
    let written: BTreeSet<Item> = f.last_checkpoint.keys().copied().collect();
    assert_eq!(written, logged);
    for item in [
        Item::Inode(f.files[0].ino),
        Item::Inode(f.files[1].ino),
        Item::Inode(f.dirs[0].ino),
        Item::Buf(f.dirs[0].blocks[0] * 8),
        // AG 0's AGF and AGI sectors, its bnobt and inobt roots.
        Item::Buf(1),
        Item::Buf(2),
        Item::Buf(8),
        Item::Buf(3 * 8),
    ] {
        assert!(written.contains(&item), "{item:?} not in the checkpoint");
    }
    // fsync of a file with nothing in the CIL writes nothing, even with
    // other files' changes pending (a force to the inode's sequence).
    f.create(2, SimTime::ZERO, &mut io).unwrap();
    assert_eq!(f.fsync(1, SimTime::ZERO), FsyncIo::default());
    assert!(!f.cil.is_empty());
    f.check().unwrap();
}

#[test]
fn the_cil_threshold_and_the_timer_push_in_tick() {
    let mut f = fs_with(FsConfig {
        kind: FsKind::Xfs,
        log_size: Some(ssd_core::units::Size(2 << 20)),
        xfssyncd_centisecs: Some(1000),
        ..FsConfig::default()
    });
    assert_eq!(f.push_limit, 512 * BLOCK / 8);
    assert_eq!(f.next_tick(), Some(SimTime(10 * S)));
    let mut io = Vec::new();
    // Nothing due before the interval.
    f.create(0, SimTime::ZERO, &mut io).unwrap();
    io.clear();
    f.tick(SimTime(S), &mut io);
    assert!(io.is_empty());
    // The timer pushes what there is: the last block after a flush.
    f.tick(SimTime(10 * S), &mut io);
    assert_eq!(io.iter().filter(|c| **c == FsCall::Flush).count(), 2);
    assert_eq!(io.last(), Some(&FsCall::Flush));
    assert_eq!(f.stats().commits_timer, 1);
    assert_eq!(f.next_tick(), Some(SimTime(20 * S)));
    // Creating files until the CIL passes 256 KiB makes the push due
    // at once.
    let mut k = 1;
    while f.cil_bytes() < f.push_limit {
        f.create(k, SimTime(11 * S), &mut io).unwrap();
        f.write(k, 0, BLOCK, SimTime(11 * S), &mut io).unwrap();
        k += 1;
    }
    assert_eq!(f.next_tick(), Some(SimTime(11 * S)));
    io.clear();
    let bytes = f.cil_bytes();
    f.tick(SimTime(12 * S), &mut io);
    let written: u64 = io
        .iter()
        .map(|c| match c {
            FsCall::Direct { blocks, .. } => *blocks as u64,
            _ => 0,
        })
        .sum();
    assert_eq!(written, checkpoint_blocks(bytes));
    assert_eq!(f.stats().commits_timer, 2);
    assert_eq!(f.cil_bytes(), 0);
    // Each iclog at most 32 KiB.
    assert!(io.iter().all(|c| match c {
        FsCall::Direct { blocks, .. } => *blocks <= 8,
        _ => true,
    }));
    f.check().unwrap();
}

#[test]
fn the_log_wraps_within_its_area() {
    let mut f = fs_with(FsConfig {
        kind: FsKind::Xfs,
        log_size: Some(ssd_core::units::Size(2 << 20)),
        ..FsConfig::default()
    });
    let ((ls, ln), _) = f.log_area();
    let mut io = Vec::new();
    let mut total = 0;
    for k in 0..400u32 {
        f.create(k, SimTime::ZERO, &mut io).unwrap();
        f.write(k, 0, 3 * BLOCK, SimTime::ZERO, &mut io).unwrap();
        let s = f.fsync(k, SimTime::ZERO);
        for &(b, n) in &s.direct {
            assert!(b >= ls && b + n as u64 <= ls + ln, "{b}+{n}");
        }
        total += blocks_of(&s.direct);
    }
    let st = f.stats();
    assert_eq!(st.journal_blocks_written, total);
    assert_eq!(st.commits_fsync, 400);
    assert_eq!(st.journal_wraps, total / ln);
    assert_eq!(f.log_area().1, ls + total % ln);
    f.check().unwrap();
}

fn nodelaylog() -> Xfs {
    fs_with(FsConfig {
        kind: FsKind::Xfs,
        kernel: Some(super::super::Kernel::V2_6_35),
        ..FsConfig::default()
    })
}

/// Linux 2.6.35's XFS: an fsync after an overwrite logs the inode core
/// in a transaction of its own and forces the log, one small iclog per
/// fsync; the head moves by basic blocks, so four fsyncs share a block.
#[test]
fn nodelaylog_each_fsync_writes_its_transaction() {
    let mut f = nodelaylog();
    assert!(!f.delaylog && f.barrier);
    let mut io = Vec::new();
    f.create(0, SimTime::ZERO, &mut io).unwrap();
    f.write(0, 0, BLOCK, SimTime::ZERO, &mut io).unwrap();
    // Two transactions (create, the allocating write), still in the
    // active iclog; the CIL is not used.
    assert_eq!(f.in_core_log().0, 2);
    assert!(f.cil.is_empty() && f.cil_bytes() == 0);
    f.settle();
    let ((ls, _), _) = f.log_area();
    assert_eq!(f.in_core_log(), (0, 0, 0));
    for k in 0..5u64 {
        // An overwrite within the block: no transaction, the inode's
        // timestamps unlogged (i_update_core).
        io.clear();
        f.write(0, 0, 100, SimTime::ZERO, &mut io).unwrap();
        assert_eq!(f.in_core_log().0, k);
        assert!(io.contains(&FsCall::Meta {
            block: f.files[0].ino / INODES_PER_BLOCK
        }));
        // fsync: a transaction of the inode core: start record (12),
        // transaction header (12 + 16), inode log format (12 + 56),
        // core (12 + 176), commit record (12) = 308 bytes; with the
        // 512-byte record header 820 bytes, two basic blocks.
        let s = f.fsync(0, SimTime::ZERO);
        assert_eq!(f.in_core_log().0, k + 1);
        assert!(s.barrier_each && !s.barrier && !s.no_flush);
        // Basic blocks 2k, 2k + 1: block 0 of the log four times, then
        // block 1.
        assert_eq!(s.direct, vec![(ls + 2 * k / 8, 1)], "fsync {k}");
        assert_eq!(f.in_core_log().2, 2 * (k + 1));
    }
    assert_eq!(12 + 12 + 16 + 12 + 56 + 12 + 176 + 12, 308);
    assert_eq!(TRANS_OVERHEAD + Region::Inode { fork: 0 }.bytes(), 308);
    let st = f.stats();
    assert_eq!((st.commits_fsync, st.journal_blocks_written), (5, 5));
    // Nothing changed since: the inode is neither pinned nor dirty.
    assert_eq!(f.fsync(0, SimTime::ZERO), FsyncIo::default());
    f.check().unwrap();
}

/// Without the CIL, two transactions touching the same items log them
/// twice (the directory's block and inode, the AGI, the inode B+tree
/// leaves); delayed logging counts them once per checkpoint.
#[test]
fn nodelaylog_relogs_every_transaction_in_full() {
    let mut n = nodelaylog();
    let mut d = fs();
    let mut io = Vec::new();
    n.create(0, SimTime::ZERO, &mut io).unwrap();
    d.create(0, SimTime::ZERO, &mut io).unwrap();
    let (b1, c1) = (n.in_core_log().1, d.cil_bytes());
    // One transaction: the same regions as the CIL, plus its records.
    assert_eq!(b1, c1 + TRANS_OVERHEAD);
    n.create(1, SimTime::ZERO, &mut io).unwrap();
    d.create(1, SimTime::ZERO, &mut io).unwrap();
    let (b2, c2) = (n.in_core_log().1 - b1, d.cil_bytes() - c1);
    // The second create relogs the directory's inode core (256 bytes
    // with its headers) and block, the AGI and the B+tree leaves,
    // which the CIL already holds.
    let dir_inode = Region::Inode { fork: 0 }.bytes();
    assert!(b2 - TRANS_OVERHEAD >= c2 + dir_inode, "{b2} {c2}");
    assert_eq!(n.in_core_log().0, 2);
}

/// Full iclogs are written by the file system's thread at once, each a
/// barrier write of 32 KiB (its record header and data rounded to
/// basic blocks); the timer forces the active one.
#[test]
fn nodelaylog_iclogs_fill_and_are_forced() {
    let mut f = nodelaylog();
    f.settle();
    let ((ls, _), _) = f.log_area();
    let mut io = Vec::new();
    let t = SimTime(S);
    let mut k = 0;
    while f.want_sync.is_empty() {
        f.create(k, t, &mut io).unwrap();
        f.write(k, 0, BLOCK, t, &mut io).unwrap();
        k += 1;
    }
    // The iclog was switched with less than two op headers' room.
    let (_, full) = f.want_sync[0];
    assert!(
        full > ICLOG_DATA - 2 * OPHDR && full <= ICLOG_DATA,
        "{full}"
    );
    assert_eq!(f.next_tick(), Some(t));
    io.clear();
    f.tick(t, &mut io);
    assert_eq!(
        io,
        vec![
            FsCall::Flush,
            FsCall::Direct {
                op: IoOp::Write,
                block: ls,
                // 2.6.35's barrier iclog write: WRITE_BARRIER, no
                // BIO_RW_SYNCIO (`_xfs_buf_ioapply`).
                blocks: 8,
                sync: false,
            },
            FsCall::Flush,
        ]
    );
    assert_eq!(f.in_core_log().2, 64);
    assert_eq!(f.stats().commits_timer, 1);
    // Nothing due until the interval (30 s), which forces the active
    // iclog: its header and bytes in basic blocks.
    assert_eq!(f.next_tick(), Some(SimTime(30 * S)));
    let fill = f.iclog_fill;
    assert!(fill > 0);
    io.clear();
    f.tick(SimTime(30 * S), &mut io);
    let bbs = (REC_HEADER + fill).div_ceil(BB);
    assert_eq!(f.in_core_log(), (f.transactions, 0, 64 + bbs));
    assert_eq!(
        io[1],
        FsCall::Direct {
            op: IoOp::Write,
            block: ls + 8,
            blocks: bbs.div_ceil(8) as u32,
            sync: false,
        }
    );
    assert_eq!(f.stats().commits_timer, 2);
    // A file whose transaction is on disk: its fsync writes nothing new
    // but the fsync transaction of its unlogged timestamps.
    let s = f.fsync(0, SimTime(31 * S));
    assert_eq!(blocks_of(&s.direct), 1);
    f.check().unwrap();
}

/// `nobarrier`: no flush around the log writes nor after the fsync.
#[test]
fn nobarrier_drops_the_flushes() {
    for delaylog in [true, false] {
        let mut f = fs_with(FsConfig {
            kind: FsKind::Xfs,
            delaylog: Some(delaylog),
            barrier: Some(false),
            ..FsConfig::default()
        });
        let mut io = Vec::new();
        f.create(0, SimTime::ZERO, &mut io).unwrap();
        let s = f.fsync(0, SimTime::ZERO);
        assert!(!s.direct.is_empty() && s.no_flush && !s.barrier && !s.barrier_each);
        f.create(1, SimTime::ZERO, &mut io).unwrap();
        io.clear();
        f.tick(SimTime(30 * S), &mut io);
        assert!(!io.is_empty() && !io.contains(&FsCall::Flush), "{io:?}");
    }
}
