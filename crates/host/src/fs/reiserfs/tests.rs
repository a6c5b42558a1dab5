//! Tests of `reiserfs`.

use super::*;
use ssd_core::units::Size;

const S: u64 = 1_000_000_000;

fn fs_with(cfg: FsConfig, files: u64, dirwidth: u64) -> Reiserfs {
    Reiserfs::new(&cfg, 1 << 20, DirTree::flat(files, dirwidth)).unwrap()
}

/// 4 GiB, 1,000 files in directories of 100.
fn fs() -> Reiserfs {
    fs_with(
        FsConfig {
            kind: FsKind::Reiserfs,
            ..FsConfig::default()
        },
        1000,
        100,
    )
}

fn metas(io: &[FsCall]) -> BTreeSet<u64> {
    io.iter()
        .filter_map(|c| match c {
            FsCall::Meta { block } => Some(*block),
            _ => None,
        })
        .collect()
}

fn data_bytes(io: &[FsCall]) -> u64 {
    io.iter()
        .map(|c| match c {
            FsCall::Data { bytes, .. } | FsCall::Buffered { bytes, .. } => *bytes,
            _ => 0,
        })
        .sum()
}

#[test]
fn mkfs_layout_is_consistent() {
    let f = fs();
    f.check().unwrap();
    // 64 KiB skipped, the superblock, bitmap 0, 8,192 journal blocks
    // and the header, then the root leaf.
    assert_eq!(f.jsize, JOURNAL_DEFAULT_SIZE);
    assert_eq!(f.levels[0][&KEY_MIN].block, 18 + 8192 + 1);
    assert_eq!(f.ngroups, 32);
    // The root directory and ten directories: 2 + 3 x 10 items, one leaf.
    assert_eq!(f.items.len(), 32);
    assert_eq!((f.height(), f.formatted_nodes()), (1, 1));
    let st = f.stats();
    assert_eq!(st.used_blocks, 16 + 1 + 1 + 8193 + 31 + 1);
    assert_eq!(st.index_blocks, 1);
    assert_eq!((st.metadata_dirtied, st.journal_blocks_written), (0, 0));
    assert_eq!(f.running_transaction_blocks(), 0);
    assert_eq!(f.max_batch, JOURNAL_MAX_BATCH);
    // The tail rule (STORE_TAIL_IN_UNFM_S2).
    assert!(!tail_in_unformatted(3072) && tail_in_unformatted(4096));
    assert!(!tail_in_unformatted(5000) && tail_in_unformatted(4096 + 3000));
    assert!(tail_in_unformatted(16 * 1024 + 100) && tail_in_unformatted(4000));
}

/// The [fs] knobs: a smaller journal moves the tree's root and scales
/// the batch; bad sizes, and reiserfs knobs on ext4, are refused.
#[test]
fn journal_size_and_tails_knobs() {
    let cfg = FsConfig {
        kind: FsKind::Reiserfs,
        journal_size: Some(Size(1024 * BLOCK)),
        commit_interval: Some(Dur::from_ms(1000)),
        tails: Some(false),
        ..FsConfig::default()
    };
    cfg.validate().unwrap();
    let f = fs_with(cfg.clone(), 10, 10);
    assert_eq!(f.levels[0][&KEY_MIN].block, 18 + 1024 + 1);
    assert_eq!(f.max_batch, 256 * JOURNAL_MAX_BATCH / JOURNAL_TRANS_MAX);
    f.check().unwrap();
    for b in [100, 40_000] {
        let bad = FsConfig {
            journal_size: Some(Size(b * BLOCK)),
            ..cfg.clone()
        };
        let e = bad.validate().unwrap_err().to_string();
        assert!(e.contains("fs.journal_size"), "{e}");
    }
    let ext = FsConfig {
        kind: FsKind::Ext4,
        tails: Some(true),
        ..FsConfig::default()
    };
    assert!(ext.validate().unwrap_err().to_string().contains("fs.tails"));
    assert!(FsConfig {
        kind: FsKind::Reiserfs,
        journal: Some(JournalMode::Writeback),
        ..FsConfig::default()
    }
    .validate()
    .is_ok());
}

/// A 3 KiB file is a direct item in its leaf: no data block, its write
/// a metadata call on the leaf; at 5,000 bytes one block and a 904-byte
/// tail; past 16 KiB the tail is converted into an unformatted block
/// (its bytes written with the new data). With `notail` the same 3 KiB
/// file takes a block.
#[test]
fn small_files_are_packed_into_their_leaf() {
    let mut f = fs();
    let mut io = Vec::new();
    f.create(0, SimTime::ZERO, &mut io).unwrap();
    let data = |f: &Reiserfs| f.stats().used_blocks - f.stats().index_blocks;
    let used = data(&f);
    io.clear();
    f.write(0, 0, 3072, SimTime::ZERO, &mut io).unwrap();
    let (d, o) = (f.files[0].dirid, f.files[0].oid);
    assert_eq!(data_bytes(&io), 0);
    assert_eq!(f.stats().data_blocks_allocated, 0);
    // Only tree space (here the mkfs leaf overflows and splits).
    assert_eq!(data(&f), used);
    assert_eq!(f.items[&(d, o, 1)], IH + 3072);
    let leaf = f.node_key(0, (d, o, 1));
    assert!(f.levels[0][&leaf].fill >= BLKH + IH + 3072);
    assert!(metas(&io).contains(&f.leaf_block((d, o, 1))));
    assert_eq!((f.files[0].nblocks, f.files[0].tail), (0, 3072));
    f.check().unwrap();
    // 5,000 bytes: the first 4 KiB go to a block (old tail and new
    // bytes), 904 bytes stay a tail.
    io.clear();
    f.write(0, 3072, 5000 - 3072, SimTime::ZERO, &mut io)
        .unwrap();
    assert_eq!((f.files[0].nblocks, f.files[0].tail), (1, 904));
    assert_eq!(data_bytes(&io), BLOCK);
    // The item at offset 1 is now the indirect item: one pointer.
    assert_eq!(f.items[&(d, o, 1)], IH + 4);
    assert_eq!(f.items[&(d, o, 1 + BLOCK)], direct_item(904));
    f.check().unwrap();
    // 20 KiB: five blocks, no tail; the 904 bytes are written again.
    io.clear();
    f.write(0, 5000, 20_480 - 5000, SimTime::ZERO, &mut io)
        .unwrap();
    assert_eq!((f.files[0].nblocks, f.files[0].tail), (5, 0));
    assert_eq!(data_bytes(&io), 4 * BLOCK);
    assert_eq!(f.items[&(d, o, 1)], IH + 5 * 4);
    assert_eq!(f.stats().data_blocks_allocated, 5);
    assert_eq!(f.stats().extents, 1);
    f.check().unwrap();
    // notail: a block of its own.
    let mut g = fs_with(
        FsConfig {
            kind: FsKind::Reiserfs,
            tails: Some(false),
            ..FsConfig::default()
        },
        10,
        10,
    );
    io.clear();
    g.create(0, SimTime::ZERO, &mut io).unwrap();
    g.write(0, 0, 3072, SimTime::ZERO, &mut io).unwrap();
    assert_eq!(data_bytes(&io), 3072);
    assert_eq!(g.stats().data_blocks_allocated, 1);
    g.check().unwrap();
}

/// Creates in one directory land in the same leaf (their keys are
/// adjacent) until it overflows; the split allocates a leaf near it and
/// makes a root above; a later split dirties that parent.
#[test]
fn one_directorys_creates_share_a_leaf_until_it_splits() {
    let mut f = fs_with(
        FsConfig {
            kind: FsKind::Reiserfs,
            ..FsConfig::default()
        },
        2000,
        2000,
    );
    let root_leaf = f.levels[0][&KEY_MIN].block;
    let mut io = Vec::new();
    let mut k = 0;
    loop {
        io.clear();
        f.create(k, SimTime::ZERO, &mut io).unwrap();
        k += 1;
        if f.height() > 1 {
            break;
        }
        // The leaf and the superblock, nothing allocated.
        assert_eq!(metas(&io), BTreeSet::from([root_leaf, SUPERBLOCK]));
    }
    // Stat data (68) and an entry (24) per file: ~40 files fit.
    assert!((38..=42).contains(&k), "{k}");
    let new_leaf = *f.levels[0].values().map(|n| &n.block).max().unwrap();
    let root = f.levels[1][&KEY_MIN].block;
    assert_eq!(new_leaf, root_leaf + 1);
    let m = metas(&io);
    assert!(m.contains(&new_leaf) && m.contains(&root) && m.contains(&FIRST_BITMAP));
    f.check().unwrap();
    // The next split: a third leaf, the root (its parent) dirtied, no
    // new level.
    let leaves = f.levels[0].len();
    loop {
        io.clear();
        f.create(k, SimTime::ZERO, &mut io).unwrap();
        k += 1;
        if f.levels[0].len() > leaves {
            break;
        }
        assert!(!metas(&io).contains(&root));
    }
    assert_eq!(f.height(), 2);
    assert!(metas(&io).contains(&root));
    assert_eq!(f.levels[1][&KEY_MIN].fill, leaves as u32 + 1);
    f.check().unwrap();
    // Deleting them all frees the emptied leaves and the root.
    for j in 0..k {
        f.unlink(j, SimTime::ZERO, &mut io);
    }
    f.check().unwrap();
    assert_eq!(f.height(), 1);
}

/// Every block dirtied is in the running transaction; an fsync commits
/// it (description, the blocks, commit block) in the journal, with the
/// ordered files first, and leaves it empty; a second fsync writes
/// nothing (group commit).
#[test]
fn an_fsync_commits_the_running_transaction_once() {
    let mut f = fs();
    let mut io = Vec::new();
    for k in 0..4 {
        f.create(k, SimTime::ZERO, &mut io).unwrap();
        f.write(k, 0, 10_000, SimTime::ZERO, &mut io).unwrap();
    }
    let dirty = metas(&io);
    // What recovery needs: every block dirtied so far.
    assert_eq!(f.tx.blocks, dirty);
    assert_eq!(f.running_transaction_blocks(), dirty.len() as u64);
    let before = f.stats().journal_blocks_written;
    let s = f.fsync(0, SimTime::ZERO);
    let n: u64 = s.direct.iter().map(|r| r.1 as u64).sum();
    assert_eq!(n, dirty.len() as u64 + 2);
    assert_eq!(f.stats().journal_blocks_written - before, n);
    let inside = |b: u64| (JOURNAL_START..JOURNAL_START + JOURNAL_DEFAULT_SIZE).contains(&b);
    assert!(s
        .direct
        .iter()
        .all(|&(b, k)| inside(b) && inside(b + k as u64 - 1)));
    assert_eq!(s.direct[0].0, JOURNAL_START);
    assert!(s.barrier);
    assert_eq!(s.ordered, vec![1, 2, 3]);
    assert_eq!(f.running_transaction_blocks(), 0);
    assert_eq!(f.stats().commits_fsync, 1);
    assert_eq!(f.fsync(1, SimTime::ZERO), FsyncIo::default());
    // The next commit starts at the journal's head.
    io.clear();
    f.write(1, 10_000, 100, SimTime::ZERO, &mut io).unwrap();
    let s = f.fsync(1, SimTime::ZERO);
    assert_eq!(s.direct[0].0, JOURNAL_START + n);
    f.check().unwrap();
}

/// A small journal wraps; commits stay inside it; data=journal logs
/// the data blocks too.
#[test]
fn the_journal_wraps_and_data_journal_logs_data() {
    let mut f = fs_with(
        FsConfig {
            kind: FsKind::Reiserfs,
            journal_size: Some(Size(512 * BLOCK)),
            journal: Some(JournalMode::Journal),
            ..FsConfig::default()
        },
        100,
        10,
    );
    let mut io = Vec::new();
    f.create(0, SimTime::ZERO, &mut io).unwrap();
    f.write(0, 0, 64 * BLOCK, SimTime::ZERO, &mut io).unwrap();
    assert!(f.running_transaction_blocks() >= 64);
    let inside = |b: u64| (JOURNAL_START..JOURNAL_START + 512).contains(&b);
    for k in 1..40 {
        f.create(k, SimTime::ZERO, &mut io).unwrap();
        f.write(k, 0, 40 * BLOCK, SimTime::ZERO, &mut io).unwrap();
        let s = f.fsync(k, SimTime::ZERO);
        assert!(s.ordered.is_empty());
        for &(b, n) in &s.direct {
            assert!(inside(b) && inside(b + n as u64 - 1));
        }
    }
    assert!(f.stats().journal_wraps > 0);
    f.check().unwrap();
}

/// A transaction reaching j_max_batch is handed to the file system's
/// thread (Linux's commit workqueue), asked once, and written there.
#[test]
fn a_full_transaction_commits() {
    let mut f = fs_with(
        FsConfig {
            kind: FsKind::Reiserfs,
            ..FsConfig::default()
        },
        100_000,
        20,
    );
    let mut io = Vec::new();
    let mut k = 0;
    // Creates in directories of 20 dirty mostly the same leaves: it
    // takes thousands to dirty 900 blocks.
    while !io.contains(&FsCall::Commit) {
        f.create(k, SimTime::ZERO, &mut io).unwrap();
        k += 1;
        assert!(f.running_transaction_blocks() <= JOURNAL_MAX_BATCH + 20);
    }
    // Asked once while it waits for the thread.
    f.create(k, SimTime::ZERO, &mut io).unwrap();
    assert_eq!(io.iter().filter(|c| **c == FsCall::Commit).count(), 1);
    let c = f.commit_io(SimTime::ZERO).expect("the full transaction");
    assert!(c.barrier && c.direct.len() >= 2, "{c:?}");
    assert_eq!(f.stats.commits_timer, 1);
    assert_eq!(f.running_transaction_blocks(), 0);
    f.check().unwrap();
}

/// The timer asks the file system's thread for a commit; written there,
/// in ordered mode after the data of the files with new blocks in it, and
/// an fsync of a file in the transaction being written waits for it.
#[test]
fn the_timer_commits_every_interval() {
    let mut f = fs();
    let mut io = Vec::new();
    f.create(0, SimTime::ZERO, &mut io).unwrap();
    f.write(0, 0, 10_000, SimTime::ZERO, &mut io).unwrap();
    io.clear();
    f.tick(SimTime(S), &mut io);
    assert!(io.is_empty());
    f.tick(SimTime(5 * S), &mut io);
    assert_eq!(io, vec![FsCall::Commit]);
    let c = f.commit_io(SimTime(5 * S)).expect("the timer's commit");
    assert_eq!(c.ordered, vec![0]);
    assert!(c.barrier && !c.no_flush);
    assert_eq!(f.stats().commits_timer, 1);
    assert_eq!(f.running_transaction_blocks(), 0);
    assert_eq!(f.next_tick(), Some(SimTime(10 * S)));
    let w = f
        .fsync(0, SimTime(5 * S))
        .wait
        .expect("a wait for the commit");
    assert!(!w.start && !f.committed(w.tid));
    f.commit_done(SimTime(6 * S));
    assert!(f.committed(w.tid));
    // The file's changes are committed: its fsync writes nothing.
    assert_eq!(f.fsync(0, SimTime(6 * S)), FsyncIo::default());
}

/// settle() drops the running transaction (the aging history counts
/// as written) and zeroes the counters; the tree stays.
#[test]
fn settle_empties_the_transaction() {
    let mut f = fs();
    let mut io = Vec::new();
    for k in 0..10 {
        f.create(k, SimTime::ZERO, &mut io).unwrap();
        f.write(k, 0, 50_000, SimTime::ZERO, &mut io).unwrap();
    }
    assert!(f.running_transaction_blocks() > 0);
    let used = f.stats().used_blocks;
    f.settle();
    assert_eq!(f.running_transaction_blocks(), 0);
    let st = f.stats();
    assert_eq!(
        (
            st.metadata_dirtied,
            st.data_blocks_allocated,
            st.commits_fsync
        ),
        (0, 0, 0)
    );
    assert_eq!(st.used_blocks, used);
    assert!(st.index_blocks >= 1 && st.extents >= 10);
    assert_eq!(f.fsync(3, SimTime::ZERO), FsyncIo::default());
    f.check().unwrap();
}

/// A large file's blocks are contiguous in its directory's bitmap
/// group (not group 0: the tree's), mapped by indirect items of 1,012
/// pointers; unlinking it gives every data block back.
#[test]
fn large_files_go_to_their_directorys_group() {
    let mut f = fs();
    let mut io = Vec::new();
    let base = f.stats();
    f.create(0, SimTime::ZERO, &mut io).unwrap();
    for k in 0..8 {
        f.write(0, k << 20, 1 << 20, SimTime::ZERO, &mut io)
            .unwrap();
    }
    let file = &f.files[0];
    assert_eq!((file.nblocks, file.extents.len()), (2048, 1));
    let start = file.extents[0].0;
    // dirid_groups: 2,048 blocks into the directory's group.
    assert!(
        start >= BITS_PER_BITMAP && start % BITS_PER_BITMAP == BLOCK / 2,
        "{start}"
    );
    let (d, o) = (file.dirid, file.oid);
    for i in 0..3 {
        assert!(f.items.contains_key(&Reiserfs::indirect_key(d, o, i)));
    }
    f.check().unwrap();
    io.clear();
    f.read(0, 0, 8 << 20, SimTime::ZERO, &mut io);
    assert_eq!(io.len(), 1);
    f.unlink(0, SimTime::ZERO, &mut io);
    f.check().unwrap();
    let st = f.stats();
    assert_eq!(
        st.used_blocks - st.index_blocks,
        base.used_blocks - base.index_blocks
    );
}

/// Random creates, appends of up to 64 KiB and unlinks over 20,000
/// files grow the tree to three levels and back (merging); fsck passes
/// throughout and reads cover exactly the unformatted part of a file.
#[test]
fn random_churn_keeps_the_tree_consistent() {
    let mut f = fs_with(
        FsConfig {
            kind: FsKind::Reiserfs,
            ..FsConfig::default()
        },
        20_000,
        50,
    );
    let mut io = Vec::new();
    let mut tallest = 0;
    for n in 0..120_000u64 {
        let r = mix(n);
        let k = (r % 20_000) as u32;
        if !f.exists(k) {
            f.create(k, SimTime::ZERO, &mut io).unwrap();
        } else if r >> 60 < 3 {
            f.unlink(k, SimTime::ZERO, &mut io);
        } else {
            let len = 1 + (r >> 20) % 65_536;
            f.write(k, f.size(k), len, SimTime::ZERO, &mut io).unwrap();
            io.clear();
            f.read(k, 0, f.size(k), SimTime::ZERO, &mut io);
            let file = &f.files[k as usize];
            let unformatted = file.size.min(file.nblocks * BLOCK);
            assert_eq!(data_bytes(&io), unformatted.div_ceil(512) * 512);
        }
        io.clear();
        tallest = tallest.max(f.height());
        if n % 30_000 == 0 {
            f.check().unwrap_or_else(|e| panic!("after {n}: {e}"));
        }
    }
    assert!(tallest >= 3, "{tallest}");
    f.check().unwrap();
    for k in 0..20_000 {
        f.unlink(k, SimTime::ZERO, &mut io);
    }
    f.check().unwrap();
    // Merging left the directories' items in at most twice the leaves
    // they fill.
    assert!(f.height() < tallest);
    let bytes: u32 = f.items.values().sum();
    assert!(f.levels[0].len() as u32 <= 2 * bytes.div_ceil(LEAF_ROOM));
}

/// A full file system refuses a write whole and stays consistent.
#[test]
fn a_full_file_system_refuses_writes() {
    let cfg = FsConfig {
        kind: FsKind::Reiserfs,
        ..FsConfig::default()
    };
    let mut f = Reiserfs::new(&cfg, 12_000, DirTree::flat(10, 10)).unwrap();
    let mut io = Vec::new();
    f.create(0, SimTime::ZERO, &mut io).unwrap();
    let mut off = 0;
    while f.write(0, off, 1 << 20, SimTime::ZERO, &mut io).is_ok() {
        off += 1 << 20;
    }
    assert_eq!(f.size(0), off);
    f.check().unwrap();
    f.unlink(0, SimTime::ZERO, &mut io);
    f.check().unwrap();
}
