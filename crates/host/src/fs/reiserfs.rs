//! ReiserFS 3.6 as a layout model: one balanced tree (S+tree) of formatted
//! nodes holding every file's metadata and small files' tails, unformatted
//! data blocks, bitmaps, and a block journal at the start of the disk.
//!
//! **Layout (mkreiserfs's defaults, 4 KiB blocks).** The first 64 KiB are
//! skipped (`REISERFS_DISK_OFFSET_IN_BYTES`, room for a boot loader): the
//! superblock is block 16, the first bitmap block 17, then the journal:
//! 8,192 blocks (`JOURNAL_DEFAULT_SIZE`) and its header block, blocks 18 to
//! 8,210. Knob `fs.journal_size` (mkreiserfs `-s`, without the header
//! block), from 512 blocks (`JOURNAL_MIN_SIZE`) to 32,749 (the journal must
//! end inside the first bitmap's 32,768 blocks). Every further span of
//! 32,768 blocks starts with its bitmap block. mkreiserfs's tree root, a
//! leaf, is the first block after the journal's header.
//!
//! **The tree.** Formatted nodes of 4 KiB with a 24-byte block head. Leaves
//! hold items keyed by (directory id, object id, offset), each behind a
//! 24-byte item head: stat data (the inode, 44 bytes in the 3.6 format)
//! at offset 0; a directory's entries (16-byte entry heads and names padded
//! to 8 bytes: 24 bytes for Filebench's names; the item heads of a
//! directory split over several leaves are not counted apart) at the
//! offset of their name's hash (r5 in Linux; a fixed mixing of the file's
//! number here); a file's indirect items (4-byte pointers to its
//! unformatted blocks, at most 1,012 per item) and its direct item (the
//! tail, padded to 8 bytes) at the offset of the first byte they map.
//! The key's directory id is the parent directory's object id, so a
//! directory's files are adjacent in key order (and their creates dirty
//! the same leaves); a directory's own entries sort among its parent's
//! children, spread over its leaves by hash. Object ids are the lowest free
//! (the superblock's objectid map). The Filebench file set's directory tree
//! ([`super::tree::DirTree`]) hangs from the root directory, made at mkfs
//! time, each directory keyed under its parent.
//!
//! Leaves are key ranges with a byte fill: an item inserted or grown past a
//! leaf's 4,096 bytes splits the leaf at the byte midpoint of its items
//! (into three when no two-way split fits), the new leaf allocated near the
//! old one and its parent internal node dirtied; internal nodes hold 169
//! keys and 170 children ((4096 - 24 - 8) / (16 + 8)), split in halves, and
//! a split root makes a new root. After a delete or a shrink, a node whose
//! items (children) fit into its left neighbour goes into it, else it takes
//! its right neighbour's when they fit (the neighbour dirtied, the freed
//! node's parent dirtied and merged in turn), and the tree loses a level
//! when the root has one child. Balancing's partial shifts of items into
//! the neighbours on insert are not modelled (so leaves filled by appends
//! are about half full).
//!
//! **Tails (`tails=on`, the default; knob `fs.tails`, `notail` is false).**
//! A file's last partial block is a direct item in its leaf unless
//! `STORE_TAIL_IN_UNFM_S2` says otherwise: the tail goes to an unformatted
//! block when it is longer than 3,976 bytes (`MAX_DIRECT_ITEM_LEN`), or the
//! file is 16 KiB or more, or 12 KiB with a tail of a quarter of that
//! maximum, 8 KiB with half, 4 KiB with three quarters. A write whose bytes
//! land in the tail dirties the tail's leaf (a metadata call), not a data
//! block; a write that takes the file past the rule converts the tail into
//! an unformatted block (the old tail's bytes are written with the new
//! data; `direct2indirect`). So a small file has no data block of its own.
//! Reads of a tail are served from memory (the model keeps metadata
//! resident). Placement happens when the application's write reaches the
//! file system (at `write()`), as for the other models. Linux writes new
//! bytes through an unformatted block and packs the tail back into the
//! tree when the file is closed (`reiserfs_file_release` truncating it,
//! `indirect2direct`); for Filebench's append-then-close files the end is
//! the same, and the short-lived block in between is not modelled.
//!
//! **Block allocation (Linux's defaults since 2.6: `skip_busy`,
//! `dirid_groups`; `border` and the hashed relocations off).** A formatted
//! node is searched for from its left neighbour's block forward (a split
//! node's new sibling after it, a new root after the old one), so the tree
//! grows after the journal at the start of the disk; the first 10 % is not
//! reserved for it (`border` is off). A file's unformatted blocks go after
//! its previous block when free, else at the first free block on; a file's
//! first block is searched for from its directory's bitmap group (a hash of
//! the directory's id over the groups, never group 0 unless it is the only
//! one, 2,048 blocks into the group: `dirid_groups` leaves the group's
//! start to formatted nodes), so a directory's files are packed together.
//! Each application write's blocks are allocated in one request (the
//! allocator's preallocation of 17 blocks is not modelled apart, nor
//! `skip_busy`'s passing over nearly full bitmap groups, nor
//! `packing_groups`' grouping of small files by their packing locality;
//! the free-space search wraps to the start as Linux's does). Every
//! allocation or free dirties its bitmap block(s) and the superblock (its
//! free count); a create or unlink the superblock (its objectid map).
//!
//! **The journal (metadata journaling; `data=ordered` as in Linux 2.6.6
//! and later, `fs.journal` also takes `writeback` and `journal`).** Every
//! metadata block dirtied (leaf, internal node, bitmap, superblock) joins
//! the running transaction; `data=journal` adds the data blocks written. A
//! commit writes, at the journal's head and circularly, a description
//! block (the block numbers of the first 1,018 logged blocks), the blocks,
//! then after a device flush the commit block (which holds the next 1,018
//! numbers), then a flush (the barrier's `REQ_PREFLUSH | REQ_FUA`). An
//! fsync commits the running transaction when the file was changed in it
//! (`reiserfs_commit_for_inode`: one commit serves every thread's changes
//! so far; a file whose changes are already committed commits nothing).
//! Background commits happen every `fs.commit_interval` (5 s: the period
//! at which `sync_supers` called `reiserfs_write_super` to end the running
//! transaction; the transaction age limit `JOURNAL_MAX_TRANS_AGE`, 30 s,
//! is not the binding one) and when a transaction reaches `j_max_batch`
//! blocks (900 of `JOURNAL_TRANS_MAX` 1,024, scaled down for a smaller
//! journal): Linux hands that commit to its workqueue. Both are written by
//! the file system's thread ([`FsCall::Commit`], [`FileSystem::commit_io`])
//! and count as `commits_timer`; an fsync of a file whose transaction that
//! thread is writing waits for it (`reiserfs_commit_for_inode` ->
//! `flush_commit_list(sb, jl, 1)`). In ordered mode every commit, the
//! fsync's and the background one, first writes the dirty data of every
//! file with new blocks in the transaction (`write_ordered_buffers`). The
//! journaled blocks stay dirty in the buffer cache and the flusher writes
//! them in place (the checkpoint). Not modelled: the journal header
//! block's updates and the check that old transactions are flushed before
//! the journal's space is reused (wraps are counted).
//!
//! `FsStats::index_blocks` counts the tree's formatted nodes (leaves and
//! internal nodes); `extents` the files' runs of contiguous unformatted
//! blocks.

use super::alloc::FreeRuns;
use super::filemap::{buffered, runs_of, NewBlocks};
use super::tree::DirTree;
use super::{FileSystem, FsCall, FsConfig, FsKind, FsStats, FsyncIo, JournalMode, NoSpace, BLOCK};
use crate::workload::IoOp;
use crate::workload::{CommitSync, CommitWait};
use ssd_core::error::{invalid, ConfigError};
use ssd_core::units::{Dur, SimTime};
use std::collections::{BTreeMap, BTreeSet};
use std::ops::Bound::{Excluded, Unbounded};

/// The superblock's block (the first 64 KiB are skipped).
pub const SUPERBLOCK: u64 = 16;
/// The first bitmap block, right after the superblock.
pub const FIRST_BITMAP: u64 = 17;
/// The journal's first block, after the first bitmap.
pub const JOURNAL_START: u64 = 18;
/// mkreiserfs's journal: 8,192 blocks (plus its header block).
pub const JOURNAL_DEFAULT_SIZE: u64 = 8192;
/// The smallest journal (`JOURNAL_MIN_SIZE`).
pub const JOURNAL_MIN_SIZE: u64 = 512;
/// The largest journal that ends inside the first bitmap's span.
pub const JOURNAL_MAX_SIZE: u64 = BITS_PER_BITMAP - JOURNAL_START - 1;
/// Blocks one bitmap block maps.
pub const BITS_PER_BITMAP: u64 = 32_768;
/// Block head, item head.
const BLKH: u32 = 24;
const IH: u32 = 24;
/// Stat data of the 3.6 format.
const SD_V2: u32 = 44;
/// A directory entry: its 16-byte head and an 8-byte (padded) name.
const DIRENT: u32 = 16 + 8;
/// "." and ".." in a directory's first item.
const DOT_ITEM: u32 = IH + 2 * DIRENT;
/// A formatted node's room for items.
const LEAF_ROOM: u32 = BLOCK as u32 - BLKH;
/// Pointers per indirect item: (4096 - 24 - 24) / 4.
pub const MAX_PTRS: u64 = 1012;
/// Children per internal node: (4096 - 24 - 8) / (16 + 8) keys, plus one.
pub const MAX_CHILDREN: u32 = 170;
/// `MAX_DIRECT_ITEM_LEN`: 4096 - block head - 2 item heads - stat data -
/// a pointer.
pub const MAX_DIRECT_ITEM_LEN: u64 = 4096 - 24 - 48 - 44 - 4;
/// Block numbers in a description (and in a commit) block.
const TRANS_HALF: u64 = 1018;
/// `JOURNAL_TRANS_MAX_DEFAULT` and `JOURNAL_MAX_BATCH_DEFAULT`.
pub const JOURNAL_TRANS_MAX: u64 = 1024;
/// `JOURNAL_MAX_BATCH_DEFAULT`: a running transaction that reaches this many blocks is
/// committed (scaled down for a journal smaller than the default).
pub const JOURNAL_MAX_BATCH: u64 = 900;
/// The root directory's key: (1, 2); its children's directory id is 2.
const ROOT_DIRID: u32 = 1;
const ROOT_OID: u32 = 2;

/// An item's key: (directory id, object id, offset).
type Key = (u32, u32, u64);
const KEY_MIN: Key = (0, 0, 0);

/// A formatted node: a leaf's fill in bytes (with its block head), an
/// internal node's children.
#[derive(Clone, Copy, Debug)]
struct Node {
    block: u64,
    fill: u32,
}

#[derive(Clone, Debug, Default)]
struct File {
    exists: bool,
    /// Its directory's object id, and its own.
    dirid: u32,
    oid: u32,
    size: u64,
    /// Unformatted blocks, in file order, and the file block each extent
    /// starts at (for a binary search).
    extents: Vec<(u64, u64)>,
    ext_start: Vec<u64>,
    nblocks: u64,
    /// Bytes in the tail's direct item (0: none).
    tail: u64,
    /// Unformatted blocks that hold none of its data yet (written back
    /// since: [`FileSystem::place`]).
    new: NewBlocks,
    /// The transaction that last changed it.
    trans: u64,
}

/// The running transaction.
#[derive(Clone, Debug, Default)]
struct Transaction {
    id: u64,
    blocks: BTreeSet<u64>,
    /// Data blocks logged (`data=journal`).
    data: u64,
    /// Files with blocks allocated in the transaction (ordered mode).
    ordered: BTreeSet<u32>,
}

/// A 64-bit mixing (splitmix64's finaliser): the model's name hash and
/// directory-to-group hash.
fn mix(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// The offset of entry `n`'s name in its directory: a hash, unique per
/// entry, after "." (1) and ".." (2).
fn entry_offset(n: u64) -> u64 {
    ((mix(n) >> 40) << 32) + n + 3
}

/// `STORE_TAIL_IN_UNFM_S2`: does a file of `size` bytes keep its last
/// partial block in an unformatted node?
pub fn tail_in_unformatted(size: u64) -> bool {
    let tail = size % BLOCK;
    let max = MAX_DIRECT_ITEM_LEN;
    tail == 0
        || tail > max
        || size >= 4 * BLOCK
        || (size >= 3 * BLOCK && tail >= max / 4)
        || (size >= 2 * BLOCK && tail >= max / 2)
        || (size >= BLOCK && tail >= max * 3 / 4)
}

/// A direct item's bytes for a tail of `tail` bytes (padded to 8).
fn direct_item(tail: u64) -> u32 {
    IH + tail.div_ceil(8) as u32 * 8
}

/// Where item sizes `sizes` (in key order) are cut to fit leaves: the
/// start of every piece after the first. Two pieces cut at the byte
/// midpoint when they fit, else greedy.
fn partition(sizes: &[u32]) -> Vec<usize> {
    let total: u32 = sizes.iter().sum();
    let mut best: Option<(u32, usize)> = None;
    let mut left = 0;
    for i in 1..sizes.len() {
        left += sizes[i - 1];
        let right = total - left;
        if left <= LEAF_ROOM && right <= LEAF_ROOM {
            let worst = left.max(right);
            if best.is_none_or(|(w, _)| worst < w) {
                best = Some((worst, i));
            }
        }
    }
    if let Some((_, i)) = best {
        return vec![i];
    }
    let mut cuts = Vec::new();
    let mut cur = 0;
    for (i, &s) in sizes.iter().enumerate() {
        if cur + s > LEAF_ROOM && i > 0 {
            cuts.push(i);
            cur = 0;
        }
        cur += s;
    }
    cuts
}

/// The unformatted blocks of file blocks `[index, index + n)` of `file`,
/// from the extent holding `index` (found by binary search), the new ones
/// left out when `new`.
fn file_runs(file: &File, index: u64, n: u32, new: bool, out: &mut Vec<(u64, u64, u32)>) {
    let i = file
        .ext_start
        .partition_point(|&b| b <= index)
        .saturating_sub(1);
    let Some(&base) = file.ext_start.get(i) else {
        return;
    };
    runs_of(
        &file.extents[i..],
        base,
        index,
        n,
        new.then_some(&file.new),
        out,
    );
}

/// ReiserFS 3.6 (see the module docs).
pub struct Reiserfs {
    /// Which of its journal or log writes are `REQ_SYNC` on the kernel profile.
    commit_sync: CommitSync,
    blocks: u64,
    ngroups: u64,
    /// Journal blocks (without the header).
    jsize: u64,
    free: FreeRuns,
    /// The tree: level 0 the leaves, the last level the root alone; each
    /// node keyed by the lowest key of its range.
    levels: Vec<BTreeMap<Key, Node>>,
    /// Every item's bytes (with its item head).
    items: BTreeMap<Key, u32>,
    files: Vec<File>,
    /// The file set's directory tree.
    tree: DirTree,
    /// The file set's directories' object ids, and their parents'.
    dirs: Vec<u32>,
    dir_up: Vec<u32>,
    next_oid: u32,
    free_oids: BTreeSet<u32>,
    tails: bool,
    mode: JournalMode,
    commit_interval: Dur,
    max_batch: u64,
    head: u64,
    tx: Transaction,
    last_commit: SimTime,
    /// A background commit is asked of the file system's thread and has
    /// not started yet.
    commit_asked: bool,
    /// The transaction the file system's thread is writing, and the
    /// latest one written.
    committing: Option<u64>,
    committed: u64,
    stats: FsStats,
}

impl Reiserfs {
    /// mkreiserfs over `blocks` blocks for the file set's directory tree
    /// `tree`; an error names a bad option (journal size, ...) or says the
    /// device is too small.
    pub fn new(cfg: &FsConfig, blocks: u64, tree: DirTree) -> Result<Reiserfs, ConfigError> {
        let files = tree.files();
        let jsize = cfg
            .journal_size
            .map_or(JOURNAL_DEFAULT_SIZE, |s| s.0 / BLOCK);
        let reserved = JOURNAL_START + jsize + 1;
        if blocks < reserved + 1024 || blocks > u32::MAX as u64 {
            return Err(invalid(
                "fs.kind",
                format!("{blocks} blocks is too small (or too large) for reiserfs"),
            ));
        }
        let ngroups = blocks.div_ceil(BITS_PER_BITMAP);
        let mut free = FreeRuns::new();
        free.free(reserved, BITS_PER_BITMAP.min(blocks) - reserved);
        for g in 1..ngroups {
            let s = g * BITS_PER_BITMAP + 1;
            let e = ((g + 1) * BITS_PER_BITMAP).min(blocks);
            if e > s {
                free.free(s, e - s);
            }
        }
        // j_trans_max and j_max_batch, scaled down for a small journal.
        let trans_max = if jsize >= JOURNAL_DEFAULT_SIZE {
            JOURNAL_TRANS_MAX
        } else {
            (JOURNAL_TRANS_MAX / (JOURNAL_DEFAULT_SIZE / jsize)).max(256)
        };
        let root = free.take_at(reserved, 1).expect("free after the journal");
        let mut levels = vec![BTreeMap::new()];
        levels[0].insert(
            KEY_MIN,
            Node {
                block: root.0,
                fill: BLKH,
            },
        );
        let mut fs = Reiserfs {
            commit_sync: cfg.commit_sync(),
            blocks,
            ngroups,
            jsize,
            free,
            levels,
            items: BTreeMap::new(),
            files: vec![File::default(); files as usize],
            tree: DirTree::default(),
            dirs: Vec::new(),
            dir_up: Vec::new(),
            next_oid: ROOT_OID + 1,
            free_oids: BTreeSet::new(),
            tails: cfg.tails.unwrap_or(true),
            mode: cfg.journal.unwrap_or_default(),
            commit_interval: cfg.commit_interval.unwrap_or(Dur::from_ms(5000)),
            max_batch: trans_max * JOURNAL_MAX_BATCH / JOURNAL_TRANS_MAX,
            head: 0,
            tx: Transaction {
                id: 1,
                ..Transaction::default()
            },
            last_commit: SimTime::ZERO,
            commit_asked: false,
            committing: None,
            committed: 0,
            stats: FsStats {
                kind: FsKind::Reiserfs.name().into(),
                ..FsStats::default()
            },
        };
        // mkfs: the root directory and the file set's directories.
        let mut io = Vec::new();
        fs.set_item((ROOT_DIRID, ROOT_OID, 0), Some(IH + SD_V2), &mut io);
        fs.set_item((ROOT_DIRID, ROOT_OID, 1), Some(DOT_ITEM), &mut io);
        for d in 0..tree.dirs() {
            if fs.free.free_blocks() < 16 {
                return Err(invalid("personality.files", "no room for the directories"));
            }
            let oid = fs.take_oid();
            // The file set's root is an entry of the file system's root.
            let (up, upup) = match tree.parent(d) {
                None => (ROOT_OID, ROOT_DIRID),
                Some(p) => (fs.dirs[p], fs.dir_up[p]),
            };
            fs.dirs.push(oid);
            fs.dir_up.push(up);
            fs.set_item((up, oid, 0), Some(IH + SD_V2), &mut io);
            fs.set_item((up, oid, 1), Some(DOT_ITEM), &mut io);
            fs.set_item(
                (upup, up, entry_offset(tree.slot_of_dir(d))),
                Some(DIRENT),
                &mut io,
            );
        }
        fs.tree = tree;
        fs.settle();
        Ok(fs)
    }

    fn take_oid(&mut self) -> u32 {
        if let Some(o) = self.free_oids.pop_first() {
            return o;
        }
        self.next_oid += 1;
        self.next_oid - 1
    }

    fn meta(&mut self, block: u64, io: &mut Vec<FsCall>) {
        self.stats.metadata_dirtied += 1;
        io.push(FsCall::Meta { block });
        self.tx.blocks.insert(block);
    }

    fn bitmap_of(b: u64) -> u64 {
        if b < BITS_PER_BITMAP {
            FIRST_BITMAP
        } else {
            b / BITS_PER_BITMAP * BITS_PER_BITMAP
        }
    }

    /// An allocation or free of `[s, s + n)`: its bitmap blocks and the
    /// superblock's free count.
    fn note_alloc(&mut self, s: u64, n: u64, io: &mut Vec<FsCall>) {
        for g in s / BITS_PER_BITMAP..=(s + n - 1) / BITS_PER_BITMAP {
            self.meta(Self::bitmap_of(g * BITS_PER_BITMAP), io);
        }
        self.meta(SUPERBLOCK, io);
    }

    fn free_blocks(&mut self, s: u64, n: u64, io: &mut Vec<FsCall>) {
        self.free.free(s, n);
        self.note_alloc(s, n, io);
    }

    /// A formatted node, searched for from `goal` (its left neighbour) on.
    /// The callers checked that room is left.
    fn alloc_node(&mut self, goal: u64, io: &mut Vec<FsCall>) -> u64 {
        let s = self.free.next_free(goal).expect("room checked before");
        self.free.take_at(s, 1);
        self.note_alloc(s, 1, io);
        s
    }

    /// The key of the node at `level` whose range holds `k`.
    fn node_key(&self, level: usize, k: Key) -> Key {
        *self.levels[level]
            .range(..=k)
            .next_back()
            .expect("the first node's key is the lowest")
            .0
    }

    /// The block of the leaf holding `k`.
    fn leaf_block(&self, k: Key) -> u64 {
        self.levels[0][&self.node_key(0, k)].block
    }

    /// Insert, resize (`Some`) or remove (`None`) the item at `k`: its leaf
    /// is dirtied, split when overfull, freed when emptied.
    fn set_item(&mut self, k: Key, size: Option<u32>, io: &mut Vec<FsCall>) {
        let old = match size {
            Some(s) => self.items.insert(k, s),
            None => self.items.remove(&k),
        }
        .unwrap_or(0);
        let lk = self.node_key(0, k);
        let node = self.levels[0].get_mut(&lk).expect("a leaf");
        node.fill = node.fill + size.unwrap_or(0) - old;
        let (block, fill) = (node.block, node.fill);
        self.meta(block, io);
        if fill > BLOCK as u32 {
            self.split_leaf(lk, io);
        } else if size.unwrap_or(0) < old {
            self.try_merge(0, lk, io);
            self.shrink_root(io);
        }
    }

    /// After a delete: node `k` at `level` goes into its left neighbour
    /// when its items (children) fit there, else takes its right
    /// neighbour's when they fit in it; the freed node's parent may merge
    /// in turn.
    fn try_merge(&mut self, level: usize, k: Key, io: &mut Vec<FsCall>) {
        let (cap, base) = if level == 0 {
            (LEAF_ROOM, BLKH)
        } else {
            (MAX_CHILDREN, 0)
        };
        let used = self.levels[level][&k].fill - base;
        if let Some((&lk, &left)) = self.levels[level].range(..k).next_back() {
            if left.fill - base + used <= cap {
                self.levels[level].get_mut(&lk).expect("the left node").fill += used;
                self.meta(left.block, io);
                self.remove_node(level, k, io);
                return;
            }
        }
        if let Some(rk) = self.next_key(level, k) {
            let right = self.levels[level][&rk];
            if used + right.fill - base <= cap {
                let n = self.levels[level].get_mut(&k).expect("the node");
                n.fill += right.fill - base;
                let b = n.block;
                self.meta(b, io);
                self.remove_node(level, rk, io);
            }
        }
    }

    /// The key after `k`'s node at `level`, if any.
    fn next_key(&self, level: usize, k: Key) -> Option<Key> {
        self.levels[level]
            .range((Excluded(k), Unbounded))
            .next()
            .map(|(k, _)| *k)
    }

    fn split_leaf(&mut self, lk: Key, io: &mut Vec<FsCall>) {
        let items: Vec<(Key, u32)> = match self.next_key(0, lk) {
            Some(e) => self.items.range(lk..e).map(|(k, s)| (*k, *s)).collect(),
            None => self.items.range(lk..).map(|(k, s)| (*k, *s)).collect(),
        };
        let sizes: Vec<u32> = items.iter().map(|i| i.1).collect();
        let cuts = partition(&sizes);
        let mut bounds = vec![0];
        bounds.extend(&cuts);
        bounds.push(items.len());
        let fill = |a: usize, b: usize| BLKH + sizes[a..b].iter().sum::<u32>();
        let first = self.levels[0].get_mut(&lk).expect("the leaf");
        first.fill = fill(0, bounds[1]);
        let mut goal = first.block;
        for w in bounds[1..].windows(2) {
            let key = items[w[0]].0;
            let block = self.alloc_node(goal, io);
            goal = block;
            self.levels[0].insert(
                key,
                Node {
                    block,
                    fill: fill(w[0], w[1]),
                },
            );
            self.meta(block, io);
            self.add_child(1, key, io);
        }
    }

    /// A new node keyed `child` at `level - 1`: its parent gains a child
    /// (a new root when `level - 1` was the root's).
    fn add_child(&mut self, level: usize, child: Key, io: &mut Vec<FsCall>) {
        if level == self.levels.len() {
            let old_root = self.levels[level - 1][&KEY_MIN].block;
            let block = self.alloc_node(old_root, io);
            let fill = self.levels[level - 1].len() as u32;
            self.levels
                .push(BTreeMap::from([(KEY_MIN, Node { block, fill })]));
            self.meta(block, io);
            return;
        }
        let pk = self.node_key(level, child);
        let p = self.levels[level].get_mut(&pk).expect("a parent");
        p.fill += 1;
        let (block, fill) = (p.block, p.fill);
        self.meta(block, io);
        if fill > MAX_CHILDREN {
            let children: Vec<Key> = match self.next_key(level, pk) {
                Some(e) => self.levels[level - 1].range(pk..e).map(|c| *c.0).collect(),
                None => self.levels[level - 1].range(pk..).map(|c| *c.0).collect(),
            };
            let half = children.len() / 2;
            let nk = children[half];
            self.levels[level].get_mut(&pk).expect("the node").fill = half as u32;
            let nb = self.alloc_node(block, io);
            self.levels[level].insert(
                nk,
                Node {
                    block: nb,
                    fill: (children.len() - half) as u32,
                },
            );
            self.meta(nb, io);
            self.add_child(level + 1, nk, io);
        }
    }

    /// Free node `k` at `level` (emptied, or merged into its left
    /// neighbour), not the first of its level: its parent loses a child
    /// (and is freed when emptied, takes its next child's key when `k` was
    /// its first, and may merge with a neighbour).
    fn remove_node(&mut self, level: usize, k: Key, io: &mut Vec<FsCall>) {
        let node = self.levels[level].remove(&k).expect("the node");
        self.free_blocks(node.block, 1, io);
        let pk = self.node_key(level + 1, k);
        let p = self.levels[level + 1].get_mut(&pk).expect("a parent");
        p.fill -= 1;
        let (block, fill) = (p.block, p.fill);
        self.meta(block, io);
        if fill == 0 {
            debug_assert_eq!(pk, k);
            self.remove_node(level + 1, pk, io);
        } else {
            let mut pk = pk;
            if pk == k {
                let next = *self.levels[level]
                    .range(k..)
                    .next()
                    .expect("the parent's next child")
                    .0;
                self.rekey(level + 1, k, next);
                pk = next;
            }
            self.try_merge(level + 1, pk, io);
        }
    }

    /// Node `old` at `level` now starts at `new` (and so do its ancestors
    /// that started with it).
    fn rekey(&mut self, level: usize, old: Key, new: Key) {
        let n = self.levels[level].remove(&old).expect("the node");
        self.levels[level].insert(new, n);
        if level + 1 < self.levels.len() && self.node_key(level + 1, old) == old {
            self.rekey(level + 1, old, new);
        }
    }

    /// A root with one child is freed (the tree loses a level).
    fn shrink_root(&mut self, io: &mut Vec<FsCall>) {
        while self.levels.len() > 1 && self.levels.last().expect("a root")[&KEY_MIN].fill == 1 {
            let root = self.levels.pop().expect("a root")[&KEY_MIN];
            self.free_blocks(root.block, 1, io);
        }
    }

    fn tail_packed(&self, size: u64) -> bool {
        self.tails && !tail_in_unformatted(size)
    }

    /// Unformatted blocks and tail bytes of a file of `size` bytes.
    fn shape(&self, size: u64) -> (u64, u64) {
        if self.tail_packed(size) {
            (size / BLOCK, size % BLOCK)
        } else {
            (size.div_ceil(BLOCK), 0)
        }
    }

    fn indirect_key(dirid: u32, oid: u32, i: u64) -> Key {
        (dirid, oid, 1 + i * MAX_PTRS * BLOCK)
    }

    fn direct_key(dirid: u32, oid: u32, nblocks: u64) -> Key {
        (dirid, oid, 1 + nblocks * BLOCK)
    }

    /// Indirect item `i`'s bytes for a file of `nblocks` blocks.
    fn indirect_item(nblocks: u64, i: u64) -> u32 {
        IH + 4 * (nblocks - i * MAX_PTRS).min(MAX_PTRS) as u32
    }

    /// Allocate `want` unformatted blocks at the end of `f`.
    fn grow(&mut self, f: u32, want: u64, io: &mut Vec<FsCall>) {
        let file = &self.files[f as usize];
        let mut goal = match file.extents.last() {
            Some(&(s, n)) => s + n,
            None => {
                // dirid_groups: the directory's bitmap group, past the
                // part left to formatted nodes.
                let mut bm = mix(u64::from(file.dirid)) % self.ngroups;
                if bm == 0 && self.ngroups > 1 {
                    bm = 1;
                }
                (bm * BITS_PER_BITMAP + BLOCK / 2).min(self.blocks - 1)
            }
        };
        let mut left = want;
        while left > 0 {
            let s = self.free.next_free(goal).expect("room checked before");
            let (s, n) = self.free.take_at(s, left).expect("a free block");
            self.note_alloc(s, n, io);
            let file = &mut self.files[f as usize];
            match file.extents.last_mut() {
                Some(e) if e.0 + e.1 == s => e.1 += n,
                _ => {
                    file.extents.push((s, n));
                    file.ext_start.push(file.nblocks);
                }
            }
            file.nblocks += n;
            self.stats.data_blocks_allocated += n;
            goal = s + n;
            left -= n;
        }
        self.tx.ordered.insert(f);
    }

    /// A transaction that reached `j_max_batch` is handed to the commit
    /// workqueue (`do_journal_end` -> `queue_delayed_work` of
    /// `reiserfs_async_progress_wu`): the file system's thread writes it.
    fn commit_if_full(&mut self, io: &mut Vec<FsCall>) {
        if self.running_transaction_blocks() >= self.max_batch {
            self.background_commit(io);
        }
    }

    /// Ask the file system's thread for a commit of the running
    /// transaction ([`FileSystem::commit_io`] writes it).
    fn background_commit(&mut self, io: &mut Vec<FsCall>) {
        if !self.commit_asked && self.running_transaction_blocks() > 0 {
            self.commit_asked = true;
            io.push(FsCall::Commit);
        }
    }

    /// A journal commit of the running transaction: (runs, commit block).
    fn commit(&mut self) -> Option<(Vec<(u64, u32)>, u64)> {
        let body = self.running_transaction_blocks();
        if body == 0 {
            return None;
        }
        // A description and a commit block per 2 x 1,018 logged blocks.
        let total = body + 2 * body.div_ceil(2 * TRANS_HALF);
        self.tx = Transaction {
            id: self.tx.id + 1,
            ..Transaction::default()
        };
        let mut runs: Vec<(u64, u32)> = Vec::new();
        let mut left = total;
        while left > 0 {
            let n = left.min(self.jsize - self.head);
            runs.push((JOURNAL_START + self.head, n as u32));
            self.head += n;
            left -= n;
            if self.head == self.jsize {
                self.head = 0;
                self.stats.journal_wraps += 1;
            }
        }
        self.stats.journal_blocks_written += total;
        let last = runs.last_mut().expect("a commit writes blocks");
        let cb = last.0 + last.1 as u64 - 1;
        last.1 -= 1;
        if last.1 == 0 {
            runs.pop();
        }
        Some((runs, cb))
    }

    /// Blocks in the running transaction (0 after an fsync's commit).
    pub fn running_transaction_blocks(&self) -> u64 {
        self.tx.blocks.len() as u64 + self.tx.data
    }

    /// The tree's height (1: the root is a leaf).
    pub fn height(&self) -> usize {
        self.levels.len()
    }

    fn formatted_nodes(&self) -> u64 {
        self.levels.iter().map(|l| l.len() as u64).sum()
    }
}

impl FileSystem for Reiserfs {
    fn kind(&self) -> FsKind {
        FsKind::Reiserfs
    }
    fn blocks(&self) -> u64 {
        self.blocks
    }
    fn data_room(&self) -> u64 {
        self.free.free_blocks()
    }
    fn own_areas(&self) -> String {
        "its journal, super block, bitmaps and root node".into()
    }
    fn create(&mut self, f: u32, _now: SimTime, io: &mut Vec<FsCall>) -> Result<(), NoSpace> {
        if self.free.free_blocks() < 16 {
            return Err(NoSpace);
        }
        debug_assert!(!self.files[f as usize].exists);
        let oid = self.take_oid();
        let (dir, _) = self.tree.dir_of(f);
        let (dirid, up) = (self.dirs[dir], self.dir_up[dir]);
        self.files[f as usize] = File {
            exists: true,
            dirid,
            oid,
            trans: self.tx.id,
            ..File::default()
        };
        self.set_item((dirid, oid, 0), Some(IH + SD_V2), io);
        self.set_item((up, dirid, entry_offset(f as u64)), Some(DIRENT), io);
        // The directory's stat data (size, mtime), the objectid map.
        let b = self.leaf_block((up, dirid, 0));
        self.meta(b, io);
        self.meta(SUPERBLOCK, io);
        self.commit_if_full(io);
        Ok(())
    }
    fn unlink(&mut self, f: u32, _now: SimTime, io: &mut Vec<FsCall>) {
        let file = std::mem::take(&mut self.files[f as usize]);
        if !file.exists {
            return;
        }
        let (d, o) = (file.dirid, file.oid);
        self.set_item((d, o, 0), None, io);
        for i in 0..file.nblocks.div_ceil(MAX_PTRS) {
            self.set_item(Self::indirect_key(d, o, i), None, io);
        }
        if file.tail > 0 {
            self.set_item(Self::direct_key(d, o, file.nblocks), None, io);
        }
        for &(s, n) in &file.extents {
            self.free_blocks(s, n, io);
        }
        let up = self.dir_up[self.tree.dir_of(f).0];
        self.set_item((up, d, entry_offset(f as u64)), None, io);
        let b = self.leaf_block((up, d, 0));
        self.meta(b, io);
        self.meta(SUPERBLOCK, io);
        self.free_oids.insert(o);
        self.tx.ordered.remove(&f);
        self.commit_if_full(io);
    }
    fn write(
        &mut self,
        f: u32,
        off: u64,
        len: u64,
        _now: SimTime,
        io: &mut Vec<FsCall>,
    ) -> Result<(), NoSpace> {
        let file = &self.files[f as usize];
        let (d, o) = (file.dirid, file.oid);
        let (nb0, tail0) = (file.nblocks, file.tail);
        let size = file.size.max(off + len);
        let (nb, tail) = self.shape(size);
        debug_assert!(nb >= nb0, "a file's blocks only grow");
        let need = nb - nb0;
        if need + 16 + 2 * need.div_ceil(MAX_PTRS) > self.free.free_blocks() {
            return Err(NoSpace);
        }
        // The old tail leaves its direct item when the item moves or goes.
        if tail0 > 0 && (nb != nb0 || tail == 0) {
            self.set_item(Self::direct_key(d, o, nb0), None, io);
        }
        if need > 0 {
            self.grow(f, need, io);
            self.files[f as usize].new.add(nb0, nb);
            for i in nb0 / MAX_PTRS..nb.div_ceil(MAX_PTRS) {
                let sz = Self::indirect_item(nb, i);
                self.set_item(Self::indirect_key(d, o, i), Some(sz), io);
            }
        }
        if tail > 0 {
            // The tail's bytes: its leaf is dirtied (inserted, resized or
            // written in place).
            self.set_item(Self::direct_key(d, o, nb), Some(direct_item(tail)), io);
        }
        let file = &mut self.files[f as usize];
        file.size = size;
        file.tail = tail;
        file.trans = self.tx.id;
        // The stat data (size, mtime).
        let b = self.leaf_block((d, o, 0));
        self.meta(b, io);
        // The data in unformatted blocks, with a converted tail's bytes.
        let converted = tail0 > 0 && nb > nb0;
        let lo = if converted { off.min(nb0 * BLOCK) } else { off };
        let hi = (off + len).min(nb * BLOCK);
        if hi > lo {
            // The file's pages, written back to the blocks just
            // allocated (`place`).
            buffered(IoOp::Write, lo, hi - lo, io);
            if self.mode == JournalMode::Journal {
                self.tx.data += hi.div_ceil(BLOCK) - lo / BLOCK;
            }
        }
        self.commit_if_full(io);
        Ok(())
    }
    fn read(&mut self, f: u32, off: u64, len: u64, _now: SimTime, io: &mut Vec<FsCall>) {
        // A tail is read from its leaf, in memory.
        let file = &self.files[f as usize];
        let hi = (off + len).min(file.nblocks * BLOCK);
        if hi > off {
            buffered(IoOp::Read, off, hi - off, io);
        }
    }
    /// The unformatted blocks `write` allocated, now holding the data
    /// written back (`reiserfs_writepage`; the tail stays in its leaf).
    fn place(&mut self, f: u32, index: u64, n: u32, _now: SimTime, out: &mut Vec<(u64, u64, u32)>) {
        let file = &mut self.files[f as usize];
        if !file.exists {
            return;
        }
        file_runs(file, index, n, false, out);
        file.new.remove(index, index + n as u64);
    }
    fn locate(&self, f: u32, index: u64, n: u32, out: &mut Vec<(u64, u64, u32)>) {
        file_runs(&self.files[f as usize], index, n, true, out);
    }
    fn places_at_writeback(&self) -> bool {
        true
    }
    fn fsync(&mut self, f: u32, _now: SimTime) -> FsyncIo {
        // reiserfs_commit_for_inode: only a file changed in the running
        // transaction commits it.
        let tid = self.files[f as usize].trans;
        if tid != self.tx.id {
            // Its transaction is being written by the file system's
            // thread: the fsync waits for it; or it is on disk.
            return FsyncIo {
                wait: (self.committing == Some(tid)).then_some(CommitWait { tid, start: false }),
                ..FsyncIo::default()
            };
        }
        let ordered: Vec<u32> = if self.mode == JournalMode::Ordered {
            self.tx
                .ordered
                .iter()
                .copied()
                .filter(|&o| o != f)
                .collect()
        } else {
            Vec::new()
        };
        match self.commit() {
            Some((mut runs, cb)) => {
                self.stats.commits_fsync += 1;
                runs.push((cb, 1));
                FsyncIo {
                    ordered,
                    metadata: Vec::new(),
                    direct: runs,
                    barrier: true,
                    sync: self.commit_sync,
                    ..FsyncIo::default()
                }
            }
            None => FsyncIo::default(),
        }
    }
    /// A background commit (the timer's or a full transaction's):
    /// `flush_commit_list` writes the ordered data first
    /// (`write_ordered_buffers` of the list's `j_bh_list`) in ordered mode,
    /// then the log and the commit block with its barrier.
    fn commit_io(&mut self, _now: SimTime) -> Option<FsyncIo> {
        self.commit_asked = false;
        let ordered: Vec<u32> = if self.mode == JournalMode::Ordered {
            self.tx.ordered.iter().copied().collect()
        } else {
            Vec::new()
        };
        let tid = self.tx.id;
        let (mut runs, cb) = self.commit()?;
        self.committing = Some(tid);
        self.stats.commits_timer += 1;
        runs.push((cb, 1));
        Some(FsyncIo {
            ordered,
            direct: runs,
            barrier: true,
            sync: self.commit_sync,
            ..FsyncIo::default()
        })
    }
    fn commit_done(&mut self, _now: SimTime) {
        if let Some(tid) = self.committing.take() {
            self.committed = tid;
        }
    }
    fn committed(&self, tid: u64) -> bool {
        tid <= self.committed
    }
    fn tick(&mut self, now: SimTime, io: &mut Vec<FsCall>) {
        if now < self.last_commit + self.commit_interval {
            return;
        }
        self.last_commit = now;
        self.background_commit(io);
    }
    fn next_tick(&self) -> Option<SimTime> {
        Some(self.last_commit + self.commit_interval)
    }
    fn settle(&mut self) {
        self.committed = self.tx.id;
        self.committing = None;
        self.commit_asked = false;
        self.tx = Transaction {
            id: self.tx.id + 1,
            ..Transaction::default()
        };
        self.stats = FsStats {
            kind: FsKind::Reiserfs.name().into(),
            ..FsStats::default()
        };
    }
    fn size(&self, f: u32) -> u64 {
        self.files[f as usize].size
    }
    fn exists(&self, f: u32) -> bool {
        self.files[f as usize].exists
    }
    fn check(&self) -> Result<(), String> {
        let mut owned: Vec<(u64, u64, String)> = vec![
            (0, SUPERBLOCK, "the first 64 KiB".into()),
            (SUPERBLOCK, 1, "the superblock".into()),
            (FIRST_BITMAP, 1, "bitmap 0".into()),
            (JOURNAL_START, self.jsize + 1, "the journal".into()),
        ];
        for g in 1..self.ngroups {
            owned.push((g * BITS_PER_BITMAP, 1, format!("bitmap {g}")));
        }
        // The tree: every level starts at the lowest key, the root alone;
        // an internal node's children are the nodes in its range, the first
        // at its key; a leaf's fill is its items'.
        let top = self.levels.len() - 1;
        if self.levels[top].len() != 1 {
            return Err(format!("{} roots", self.levels[top].len()));
        }
        for (l, level) in self.levels.iter().enumerate() {
            if level.keys().next() != Some(&KEY_MIN) {
                return Err(format!("level {l} does not start at the lowest key"));
            }
            for (&k, n) in level {
                owned.push((n.block, 1, format!("level {l} node {k:?}")));
                let end = self.next_key(l, k);
                if l == 0 {
                    let items: u32 = match end {
                        Some(e) => self.items.range(k..e).map(|i| *i.1).sum(),
                        None => self.items.range(k..).map(|i| *i.1).sum(),
                    };
                    if n.fill != BLKH + items || n.fill > BLOCK as u32 {
                        return Err(format!(
                            "leaf {k:?}: fill {} for {items} bytes of items",
                            n.fill
                        ));
                    }
                } else {
                    let below = &self.levels[l - 1];
                    let kids: Vec<&Key> = match end {
                        Some(e) => below.range(k..e).map(|c| c.0).collect(),
                        None => below.range(k..).map(|c| c.0).collect(),
                    };
                    if kids.len() as u32 != n.fill
                        || n.fill > MAX_CHILDREN
                        || kids.first() != Some(&&k)
                    {
                        return Err(format!(
                            "level {l} node {k:?}: {} children, fill {}",
                            kids.len(),
                            n.fill
                        ));
                    }
                }
            }
        }
        let mut oids = BTreeSet::from([ROOT_OID]);
        for (d, &oid) in self.dirs.iter().enumerate() {
            oids.insert(oid);
            let up = self.dir_up[d];
            let upup = self.tree.parent(d).map_or(ROOT_DIRID, |p| self.dir_up[p]);
            for k in [
                (up, oid, 0),
                (up, oid, 1),
                (upup, up, entry_offset(self.tree.slot_of_dir(d))),
            ] {
                if !self.items.contains_key(&k) {
                    return Err(format!("directory {d}: no item {k:?}"));
                }
            }
        }
        let mut nitems = 2 + 3 * self.dirs.len();
        for (i, f) in self.files.iter().enumerate() {
            if !f.exists {
                if !f.extents.is_empty() || f.nblocks > 0 {
                    return Err(format!("deleted file {i} keeps blocks"));
                }
                continue;
            }
            if !oids.insert(f.oid) || self.free_oids.contains(&f.oid) || f.oid >= self.next_oid {
                return Err(format!("file {i}'s object id {} is not its own", f.oid));
            }
            let (d, o) = (f.dirid, f.oid);
            if self.items.get(&(d, o, 0)) != Some(&(IH + SD_V2)) {
                return Err(format!("file {i}: no stat data"));
            }
            let up = self.dir_up[self.tree.dir_of(i as u32).0];
            if self.dirs[self.tree.dir_of(i as u32).0] != d
                || !self.items.contains_key(&(up, d, entry_offset(i as u64)))
            {
                return Err(format!("file {i}: no directory entry"));
            }
            nitems += 2;
            let mut blocks = 0;
            for (j, &(_, n)) in f.extents.iter().enumerate() {
                if f.ext_start.get(j) != Some(&blocks) {
                    return Err(format!(
                        "file {i}: extent {j} does not start at block {blocks}"
                    ));
                }
                blocks += n;
            }
            if f.ext_start.len() != f.extents.len() {
                return Err(format!("file {i}: extent index out of step"));
            }
            if blocks != f.nblocks || self.shape(f.size) != (f.nblocks, f.tail) {
                return Err(format!(
                    "file {i}: {} bytes in {blocks} blocks ({}) and a {}-byte tail",
                    f.size, f.nblocks, f.tail
                ));
            }
            for j in 0..f.nblocks.div_ceil(MAX_PTRS) {
                let want = Self::indirect_item(f.nblocks, j);
                if self.items.get(&Self::indirect_key(d, o, j)) != Some(&want) {
                    return Err(format!("file {i}: indirect item {j} is not {want} bytes"));
                }
                nitems += 1;
            }
            if f.tail > 0 {
                let k = Self::direct_key(d, o, f.nblocks);
                if self.items.get(&k) != Some(&direct_item(f.tail)) {
                    return Err(format!("file {i}: no direct item for its tail"));
                }
                nitems += 1;
            }
            for &(s, n) in &f.extents {
                owned.push((s, n, format!("file {i}")));
            }
        }
        if nitems != self.items.len() {
            return Err(format!(
                "{} items in the tree, {nitems} reachable",
                self.items.len()
            ));
        }
        for (s, n) in self.free.runs() {
            owned.push((s, n, "free".into()));
        }
        super::check_partition(owned, self.blocks)?;
        Ok(())
    }
    fn stats(&self) -> FsStats {
        let (free_extents, free_extent_mean_blocks) = self.free.fragmentation();
        FsStats {
            blocks: self.blocks,
            used_blocks: self.blocks - self.free.free_blocks(),
            extents: self.files.iter().map(|f| f.extents.len() as u64).sum(),
            index_blocks: self.formatted_nodes(),
            free_extents,
            free_extent_mean_blocks,
            ..self.stats.clone()
        }
    }
}

#[cfg(test)]
mod tests;
