//! NILFS2 as a log-structured layout model.
//!
//! **Segments (mkfs.nilfs2's defaults).** The device is cut into segments of
//! `segment_size` (`-B`, 2,048 blocks = 8 MiB); the first segment starts
//! after the superblock (block 0), and blocks past the last whole segment
//! (where the secondary superblock sits) are not used. The log head fills
//! one segment at a time and moves to the next free one after it (wrapping,
//! as `nilfs_sufile_alloc` searches from the last allocated segment).
//!
//! **Logs (partial segments).** A log is its segment summary block followed
//! by its payload; a summary block describes [`SS_ENTRIES`] blocks
//! (`(4096 - 48) / 16`: the summary header, then one 16-byte entry per
//! block), so a log closes when its summary is full or its segment ends and
//! the next one starts with a new summary. The summary's place is taken
//! when its log opens; it is written (direct) when the log is constructed.
//!
//! **Data placed by segment construction.** A `write()` places nothing: its
//! new blocks enter the file's bmap (the B-tree grows, `nilfs_bmap_insert`)
//! and its bytes go to the page cache as the file's pages
//! ([`FsCall::Buffered`]), dirty. The flusher does not write them
//! (`nilfs_writepages` does nothing for `WB_SYNC_NONE`:
//! [`FileSystem::writes_in_background`]); segctord does, in its logs. A
//! construction collects every file's dirty blocks (`nilfs_segctor_scan_file`,
//! files in order) and gives each the log head's next block and a new
//! virtual block number (its DAT entry, the one after the last allocated), the
//! old place dying (its segment's live count drops) and its DAT entry freed
//! at once, a DAT block left with no live entry being deleted at the next
//! construction (`nilfs_palloc_delete_entry_block`); the page cache writes
//! those pages ([`FsyncIo::ordered`]) before the log's metadata. An fsync
//! first writes its own file's dirty pages, which take the log head then,
//! and its construction collects the other files' (group commit). A block
//! rewritten while dirty is placed once; a file deleted with dirty blocks
//! has none placed. A write keeps room in the log for every block dirty and
//! not placed yet, and one that leaves more than [`WATERMARK`] such blocks
//! wakes segctord for a construction at once (`nilfs_transaction_commit` ->
//! `nilfs_segctor_do_flush`).
//!
//! **Segment construction (segctord).** On `fsync` (with a barrier before the
//! log's last block), every `commit_interval` (segctord's `sc_interval`, 5 s,
//! `NILFS_SC_DEFAULT_TIMEOUT`) when anything is dirty, and at the watermark,
//! a construction (the timer's and the watermark's on the file system's
//! thread, [`FileSystem::commit_io`]) places the dirty data as above, then
//! writes, as direct writes at the log head and in Linux's order, new copies
//! of what changed since the last one: the files' B-tree node blocks (a file
//! of more than 7 blocks, the inode's direct bmap, has a B-tree of nodes of
//! [`BTREE_NODE_CHILDREN`] children under a root of 3 in the inode; a write
//! dirties the path from its leaf up), the directories' blocks (256 entries
//! per block), the ifile blocks of the changed inodes (128-byte inodes), the
//! cpfile block of the new checkpoint and the cpfile header block (192-byte
//! checkpoints), the sufile blocks of every segment whose usage changed
//! (16-byte entries; this includes the segments the construction itself
//! writes and empties: the set is closed under that), the DAT blocks of every
//! changed virtual block number (32-byte entries; the B-tree, ifile, cpfile
//! and sufile blocks are virtually addressed too, so their new copies change
//! DAT entries; the DAT itself is not), then the super root. Each new copy
//! kills the previous one. The summaries of the constructed logs are
//! written with them.
//!
//! **The cleaner (nilfs_cleanerd).** Every `cleaning_interval` (5 s), when
//! fewer than `min_clean_segments` (10 %) segments are free, and then until
//! `max_clean_segments` (20 %) are, it cleans `nsegments_per_clean` (2)
//! segments per pass, chosen by the `timestamp` policy: the least recently
//! written first, never one written within `protection_period` (3600 s),
//! the current one or one with a log not yet constructed. Cleaning reads the
//! segment's live blocks (direct), appends the live data blocks to the log
//! (direct writes; their virtual numbers stay, only their DAT entries
//! change), marks its live metadata blocks dirty, runs a construction (the
//! GC's log) and frees the segment. Checkpoints older than the protection
//! period (but the latest) are deleted at each pass, freeing emptied cpfile
//! blocks. Application writes leave `nrsvsegs` segments (5 %, at least 8,
//! `nilfs_nrsvsegs`) to constructions and the cleaner; a write that does not
//! fit fails with `NoSpace`.
//!
//! **Counts.** `journal_blocks_written` counts the log's non-data blocks
//! (summaries, metadata-file and B-tree copies, super roots), the GC's
//! constructions included; `cleaner_blocks_read`/`written` the blocks the
//! cleaner read and moved (a moved metadata block counts as written by the
//! cleaner and in `journal_blocks_written`); `commits_fsync`/`commits_timer`
//! the constructions (the GC's are in neither); `used_blocks` the blocks of
//! the segments not free (dead blocks take room until cleaned), plus the
//! superblock.
//!
//! **Not modelled.** Linux's `su_nblocks` counts the blocks a segment was
//! written with and the cleaner finds liveness through the DAT; here the
//! segment's count is its live blocks (what the cleaner would find), and a
//! dead block's DAT entry is freed at once, whereas Linux ends it and keeps
//! it (and the block) while a checkpoint within the protection period
//! refers to it, freeing it when the cleaner deletes that checkpoint.
//! Snapshots. `nilfs_construct_dsync_segment`: an fsync here always
//! constructs everything dirty, with a super root (one construction serves
//! every file: group commit), and restarts the timer; the watermark's
//! construction is a whole one too (Linux's `SC_FLUSH_FILE` writes the data
//! files' blocks without a super root). `sc_mjcp_freq`; a log's data blocks
//! go out as requests of the page cache's own, per file, before the
//! summaries and metadata (Linux writes the segment's buffers in one
//! sequence, summaries first). cleanerd's
//! `mc_nsegments_per_clean` (4) and `mc_cleaning_interval` (1 s), used below
//! `min_clean_segments`, its `clean_check_interval` (10 s) while idle (the
//! model checks every `cleaning_interval`) and its `cost-benefit` policy.
//! The DAT's and ifile's allocator bitmap and group descriptor blocks;
//! directories' own B-trees; holes (a write past the end fills the gap); the
//! superblock's periodic in-place update.

use super::tree::DirTree;
use super::{FileSystem, FsCall, FsConfig, FsKind, FsStats, FsyncIo, NoSpace, BLOCK};
use crate::workload::CommitSync;
use crate::workload::IoOp;
use ssd_core::error::{invalid, ConfigError};
use ssd_core::units::{Dur, SimTime};
use std::collections::{BTreeMap, BTreeSet, VecDeque};

/// Entries a segment summary block describes: `(4096 - 48) / 16`.
pub const SS_ENTRIES: u32 = (4096 - 48) / 16;
/// DAT entries (`struct nilfs_dat_entry`, 32 bytes) per block.
const DAT_PER_BLOCK: u64 = BLOCK / 32;
/// Inodes (`struct nilfs_inode`, 128 bytes) per ifile block.
const INODES_PER_BLOCK: u64 = BLOCK / 128;
/// Segment usages (`struct nilfs_segment_usage`, 16 bytes) per sufile block.
const SU_PER_BLOCK: u64 = BLOCK / 16;
/// Checkpoints (`struct nilfs_checkpoint`, 192 bytes) per cpfile block.
const CP_PER_BLOCK: u64 = BLOCK / 192;
/// Pointers in the inode's bmap (`NILFS_INODE_BMAP_SIZE`).
const DIRECT: u64 = 7;
/// Children of a B-tree root in the inode.
const ROOT_CHILDREN: u64 = 3;
/// Children of a B-tree node block: 16 bytes each after an 8-byte header.
pub const BTREE_NODE_CHILDREN: u64 = (BLOCK - 8) / 16;
/// Directory entries per block (as ext's model).
const DIRENTS_PER_BLOCK: u64 = 256;
/// `NILFS_USER_INO`: the first inode number of a file.
const FIRST_INO: u64 = 11;
/// nilfs_cleanerd's `min_clean_segments` / `max_clean_segments` defaults.
pub const MIN_CLEAN_PERCENT: u64 = 10;
/// nilfs_cleanerd's `max_clean_segments` default, in percent of the segments: once cleaning,
/// the cleaner goes on until this many are free.
pub const MAX_CLEAN_PERCENT: u64 = 20;
/// The default segment: 2,048 blocks.
pub const DEFAULT_BLOCKS_PER_SEGMENT: u64 = 2048;
/// No virtual block number (the DAT's own blocks).
const NO_VBLK: u64 = u64::MAX;
/// A file block written by the application, not placed in a log yet.
const UNPLACED: u64 = u64::MAX - 1;
/// segctord's watermark (`NILFS_SC_DEFAULT_WATERMARK`): a transaction
/// that leaves more dirty blocks asks for a construction
/// (`nilfs_transaction_commit` -> `nilfs_segctor_do_flush`).
pub const WATERMARK: u64 = 3600;

/// A metadata block, in construction order (files' B-tree nodes, directory
/// blocks, ifile, cpfile, sufile, DAT).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Meta {
    Node { file: u32, level: u8, idx: u64 },
    Dir { dir: u32, blk: u32 },
    Ifile(u64),
    Cpfile(u64),
    Sufile(u64),
    Dat(u64),
}

/// What a block in use holds (the reverse map).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Owner {
    Data {
        file: u32,
        fblock: u64,
        version: u32,
    },
    Meta(Meta),
    SuperRoot,
    Summary,
}

#[derive(Clone, Debug, Default)]
struct File {
    exists: bool,
    size: u64,
    ino: u64,
    /// Per file block: its place ([`UNPLACED`] before its first
    /// construction), virtual block number and version.
    place: Vec<u64>,
    vblk: Vec<u64>,
    version: Vec<u32>,
    /// Per file block: dirty in the page cache, to be placed by the next
    /// construction.
    dirty: Vec<bool>,
}

#[derive(Clone, Copy, Debug, Default)]
struct Seg {
    /// Blocks in use: live payload and the summaries of its logs.
    live: u32,
    used: bool,
    /// Time of its last write (`su_lastmod`).
    lastmod: SimTime,
}

/// NILFS2 (see the module docs).
pub struct Nilfs2 {
    /// Which of its journal or log writes are `REQ_SYNC` on the kernel profile.
    commit_sync: CommitSync,
    blocks: u64,
    bps: u64,
    nsegs: u64,
    files: Vec<File>,
    /// The file set's directory tree.
    tree: DirTree,
    /// Per directory: its inode.
    dirs: Vec<u64>,
    owner: BTreeMap<u64, Owner>,
    /// Current copy of each metadata block: (place, virtual block number).
    meta: BTreeMap<Meta, (u64, u64)>,
    dirty: BTreeSet<Meta>,
    /// Segments whose usage changed since the last construction.
    seg_dirty: BTreeSet<u64>,
    segs: Vec<Seg>,
    free_segs: BTreeSet<u64>,
    /// Segments left by the head, by (lastmod, segment): the cleaner's
    /// candidates.
    by_age: BTreeSet<(SimTime, u64)>,
    cur: Option<u64>,
    head: u64,
    log_open: bool,
    log_entries: u32,
    /// Blocks appended since the last construction (not yet in a
    /// constructed log), their segments, and the summaries to write.
    pending: BTreeSet<u64>,
    pending_segs: BTreeSet<u64>,
    pending_summaries: Vec<(u64, u64)>,
    seq: u64,
    superroot: Option<u64>,
    /// The next virtual block number (allocated in sequence), live entries
    /// per DAT block, and DAT blocks emptied (deleted at the next
    /// construction).
    vnext: u64,
    dat_live: BTreeMap<u64, u32>,
    dat_empty: BTreeSet<u64>,
    ifree: BTreeSet<u64>,
    inext: u64,
    cno: u64,
    checkpoints: VecDeque<(u64, SimTime)>,
    /// First checkpoint not deleted.
    cp_first: u64,
    nrsvsegs: u64,
    min_clean: u64,
    max_clean: u64,
    per_clean: u32,
    cleaning_interval: Dur,
    protection: Dur,
    interval: Dur,
    last_construct: SimTime,
    last_clean: SimTime,
    cleaning: bool,
    /// Files' blocks dirty in the page cache, not placed yet.
    unplaced: u64,
    /// Blocks a construction placed whose pages the page cache has not
    /// written yet: (file, block) -> (place, the place before it or
    /// [`UNPLACED`]: where the device holds the block's data until then).
    staged: BTreeMap<(u32, u64), (u64, u64)>,
    stats: FsStats,
}

/// `nilfs_nrsvsegs`: 5 % of the segments, at least 8.
fn nrsvsegs(nsegs: u64) -> u64 {
    (nsegs * 5).div_ceil(100).max(8)
}

/// The B-tree nodes `(level, index)` on the path to file block `i` of a file
/// of `n` blocks (none while the inode's direct bmap holds it).
fn btree_path(n: u64, i: u64, out: &mut Vec<(u8, u64)>) {
    if n <= DIRECT {
        return;
    }
    let mut count = n;
    let mut span = 1u64;
    let mut level = 1u8;
    loop {
        span = span.saturating_mul(BTREE_NODE_CHILDREN);
        count = count.div_ceil(BTREE_NODE_CHILDREN);
        out.push((level, i / span));
        if count <= ROOT_CHILDREN {
            return;
        }
        level += 1;
    }
}

/// Node blocks of a file of `n` blocks.
fn btree_nodes(n: u64) -> u64 {
    if n <= DIRECT {
        return 0;
    }
    let mut count = n;
    let mut total = 0;
    loop {
        count = count.div_ceil(BTREE_NODE_CHILDREN);
        total += count;
        if count <= ROOT_CHILDREN {
            return total;
        }
    }
}

impl Nilfs2 {
    /// mkfs.nilfs2 over `blocks` blocks for the file set's directory tree
    /// `tree`; an error names a bad option or says the device is too small.
    pub fn new(cfg: &FsConfig, blocks: u64, tree: DirTree) -> Result<Nilfs2, ConfigError> {
        let files = tree.files();
        let bps = cfg
            .segment_size
            .map_or(DEFAULT_BLOCKS_PER_SEGMENT, |s| s.0 / BLOCK);
        let nsegs = blocks / bps;
        let rsv = nrsvsegs(nsegs);
        if nsegs < rsv + 4 {
            return Err(invalid(
                "fs.kind",
                format!(
                    "{blocks} blocks is too small for nilfs2 ({nsegs} segments of {bps} blocks, {rsv} reserved)"
                ),
            ));
        }
        let pct = |p: u64| (nsegs * p).div_ceil(100);
        let mut fs = Nilfs2 {
            commit_sync: cfg.commit_sync(),
            blocks,
            bps,
            nsegs,
            files: vec![File::default(); files as usize],
            tree: DirTree::default(),
            dirs: Vec::new(),
            owner: BTreeMap::new(),
            meta: BTreeMap::new(),
            dirty: BTreeSet::new(),
            seg_dirty: BTreeSet::new(),
            segs: vec![Seg::default(); nsegs as usize],
            free_segs: (0..nsegs).collect(),
            by_age: BTreeSet::new(),
            cur: None,
            head: 0,
            log_open: false,
            log_entries: 0,
            pending: BTreeSet::new(),
            pending_segs: BTreeSet::new(),
            pending_summaries: Vec::new(),
            seq: 0,
            superroot: None,
            vnext: 0,
            dat_live: BTreeMap::new(),
            dat_empty: BTreeSet::new(),
            ifree: BTreeSet::new(),
            inext: FIRST_INO,
            cno: 0,
            checkpoints: VecDeque::new(),
            cp_first: 1,
            nrsvsegs: rsv,
            min_clean: pct(cfg.min_clean_segments.unwrap_or(MIN_CLEAN_PERCENT)),
            max_clean: pct(cfg.max_clean_segments.unwrap_or(MAX_CLEAN_PERCENT)),
            per_clean: cfg.nsegments_per_clean.unwrap_or(2),
            cleaning_interval: cfg.cleaning_interval.unwrap_or(Dur::from_ms(5_000)),
            protection: cfg.protection_period.unwrap_or(Dur::from_ms(3_600_000)),
            interval: cfg.commit_interval.unwrap_or(Dur::from_ms(5_000)),
            last_construct: SimTime::ZERO,
            last_clean: SimTime::ZERO,
            cleaning: false,
            unplaced: 0,
            staged: BTreeMap::new(),
            stats: FsStats {
                kind: FsKind::Nilfs2.name().into(),
                ..FsStats::default()
            },
        };
        // mkfs: the directories (the file set's tree), in the first log.
        for d in 0..tree.dirs() {
            let ino = fs.ialloc();
            fs.dirs.push(ino);
            fs.dirty.insert(Meta::Ifile(ino / INODES_PER_BLOCK));
            for b in 0..tree.entries(d).div_ceil(DIRENTS_PER_BLOCK).max(1) {
                fs.dirty.insert(Meta::Dir {
                    dir: d as u32,
                    blk: b as u32,
                });
            }
        }
        fs.tree = tree;
        if fs.construct(SimTime::ZERO).is_none() {
            return Err(invalid("personality.files", "no room for the directories"));
        }
        fs.stats = FsStats {
            kind: FsKind::Nilfs2.name().into(),
            ..FsStats::default()
        };
        Ok(fs)
    }

    fn seg_start(&self, s: u64) -> u64 {
        (s * self.bps).max(1)
    }
    fn seg_end(&self, s: u64) -> u64 {
        (s + 1) * self.bps
    }
    fn seg_of(&self, b: u64) -> u64 {
        b / self.bps
    }

    fn ialloc(&mut self) -> u64 {
        self.ifree.pop_first().unwrap_or_else(|| {
            self.inext += 1;
            self.inext - 1
        })
    }

    /// A new virtual block number: the one after the last (the bmap's
    /// target is the last allocated + 1).
    fn valloc(&mut self) -> u64 {
        let v = self.vnext;
        self.vnext += 1;
        let d = v / DAT_PER_BLOCK;
        *self.dat_live.entry(d).or_insert(0) += 1;
        self.dat_empty.remove(&d);
        self.dirty.insert(Meta::Dat(d));
        v
    }

    /// Free `v`'s DAT entry (its block is dirtied).
    fn vfree(&mut self, v: u64) {
        if v != NO_VBLK {
            self.vrelease(v);
            self.dirty.insert(Meta::Dat(v / DAT_PER_BLOCK));
        }
    }

    /// Drop `v`'s entry from its DAT block's count; an emptied block is
    /// deleted at the next construction.
    fn vrelease(&mut self, v: u64) {
        let d = v / DAT_PER_BLOCK;
        let n = self.dat_live.get_mut(&d).expect("a live DAT entry");
        *n -= 1;
        if *n == 0 {
            self.dat_live.remove(&d);
            self.dat_empty.insert(d);
        }
    }

    /// The block at `b` dies.
    fn kill(&mut self, b: u64) {
        let o = self.owner.remove(&b);
        debug_assert!(o.is_some(), "killing free block {b}");
        let s = self.seg_of(b);
        self.segs[s as usize].live -= 1;
        self.seg_dirty.insert(s);
        self.pending.remove(&b);
    }

    /// The next free segment after the current one (wrapping).
    fn next_free_seg(&self, after: Option<u64>) -> Option<u64> {
        let from = after.map_or(0, |c| c + 1);
        self.free_segs
            .range(from..)
            .next()
            .or_else(|| self.free_segs.iter().next())
            .copied()
    }

    /// Blocks of payload that surely fit, keeping `reserve` free segments.
    fn room(&self, reserve: u64) -> u64 {
        let per_seg = |r: u64| r.saturating_sub(r.div_ceil(SS_ENTRIES as u64) + 1);
        let here = self.cur.map_or(0, |c| per_seg(self.seg_end(c) - self.head));
        let free = (self.free_segs.len() as u64).saturating_sub(reserve);
        here + free * per_seg(self.bps)
    }

    /// Append one block at the log head (opening a log, and moving to a new
    /// segment, as needed).
    fn append(&mut self, o: Owner, now: SimTime) -> Option<u64> {
        let full = self.cur.is_none_or(|c| self.head >= self.seg_end(c));
        if !self.log_open || self.log_entries >= SS_ENTRIES || full {
            // A log needs its summary and one block.
            if self.cur.is_none_or(|c| self.head + 2 > self.seg_end(c)) {
                let s = self.next_free_seg(self.cur)?;
                if let Some(c) = self.cur {
                    self.by_age.insert((self.segs[c as usize].lastmod, c));
                }
                self.free_segs.remove(&s);
                self.segs[s as usize].used = true;
                self.cur = Some(s);
                self.head = self.seg_start(s);
            }
            let sb = self.head;
            self.put(sb, Owner::Summary, now);
            self.seq += 1;
            self.pending_summaries.push((self.seq, sb));
            self.log_open = true;
            self.log_entries = 0;
        }
        let b = self.head;
        self.put(b, o, now);
        self.log_entries += 1;
        Some(b)
    }

    fn put(&mut self, b: u64, o: Owner, now: SimTime) {
        let s = self.cur.expect("a current segment");
        debug_assert!(b < self.seg_end(s) && !self.owner.contains_key(&b));
        self.head = b + 1;
        self.owner.insert(b, o);
        let seg = &mut self.segs[s as usize];
        seg.live += 1;
        seg.lastmod = now;
        self.seg_dirty.insert(s);
        self.pending.insert(b);
        self.pending_segs.insert(s);
    }

    fn is_dirty(&self) -> bool {
        !self.dirty.is_empty() || !self.seg_dirty.is_empty() || !self.pending.is_empty()
    }

    /// Segments `n` more appends would touch (without appending).
    fn landing(&self, n: u64, out: &mut BTreeSet<u64>) {
        let (mut cur, mut head, mut open, mut entries) =
            (self.cur, self.head, self.log_open, self.log_entries);
        let mut taken: Vec<u64> = Vec::new();
        for _ in 0..n {
            let full = cur.is_none_or(|c| head >= self.seg_end(c));
            if !open || entries >= SS_ENTRIES || full {
                if cur.is_none_or(|c| head + 2 > self.seg_end(c)) {
                    let from = cur.map_or(0, |c| c + 1);
                    let next = self
                        .free_segs
                        .range(from..)
                        .chain(self.free_segs.range(..from))
                        .find(|s| !taken.contains(s))
                        .copied();
                    let Some(s) = next else { return };
                    taken.push(s);
                    cur = Some(s);
                    head = self.seg_start(s);
                }
                head += 1;
                open = true;
                entries = 0;
            }
            head += 1;
            entries += 1;
            if let Some(c) = cur {
                out.insert(c);
            }
        }
    }

    /// A segment construction of everything dirty: its direct writes in
    /// write order (pending summaries, metadata copies, the super root), as
    /// runs. `None` if nothing is dirty or it does not fit.
    fn construct(&mut self, now: SimTime) -> Option<Vec<(u64, u32)>> {
        if !self.is_dirty() {
            return None;
        }
        // DAT blocks emptied since the last construction are deleted
        // (`nilfs_palloc_delete_entry_block`): their copies die.
        for d in std::mem::take(&mut self.dat_empty) {
            self.dirty.remove(&Meta::Dat(d));
            if let Some((b, _)) = self.meta.remove(&Meta::Dat(d)) {
                self.kill(b);
            }
        }
        let saved_dirty = self.dirty.clone();
        self.cno += 1;
        self.dirty.insert(Meta::Cpfile(self.cno / CP_PER_BLOCK));
        self.dirty.insert(Meta::Cpfile(0));
        // The blocks to write, closed under what writing them changes.
        let mut newv: BTreeMap<Meta, u64> = BTreeMap::new();
        let mut segs: BTreeSet<u64> = self.seg_dirty.clone();
        if let Some(sr) = self.superroot {
            segs.insert(self.seg_of(sr));
        }
        loop {
            let before = self.dirty.len();
            let keys: Vec<Meta> = self.dirty.iter().copied().collect();
            for k in keys {
                if let Some(&(b, v)) = self.meta.get(&k) {
                    segs.insert(self.seg_of(b));
                    if v != NO_VBLK {
                        self.dirty.insert(Meta::Dat(v / DAT_PER_BLOCK));
                    }
                }
                if !matches!(k, Meta::Dat(_)) && !newv.contains_key(&k) {
                    let v = self.valloc();
                    newv.insert(k, v);
                }
            }
            self.landing(self.dirty.len() as u64 + 1, &mut segs);
            for &s in &segs {
                self.dirty.insert(Meta::Sufile(s / SU_PER_BLOCK));
            }
            if self.dirty.len() == before {
                break;
            }
        }
        let write: Vec<Meta> = std::mem::take(&mut self.dirty).into_iter().collect();
        if self.room(0) < write.len() as u64 + 1 {
            // Does not fit: undo and keep the state dirty.
            for (_, v) in newv {
                self.vrelease(v);
            }
            self.cno -= 1;
            self.dirty = saved_dirty;
            return None;
        }
        let mut out: Vec<(u64, u64)> = Vec::new();
        let mut old_v: Vec<u64> = Vec::new();
        for &k in &write {
            if let Some((b, v)) = self.meta.remove(&k) {
                self.kill(b);
                if v != NO_VBLK {
                    old_v.push(v);
                }
            }
            let b = self.append(Owner::Meta(k), now)?;
            self.seq += 1;
            out.push((self.seq, b));
            self.meta
                .insert(k, (b, newv.get(&k).copied().unwrap_or(NO_VBLK)));
        }
        if let Some(sr) = self.superroot.take() {
            self.kill(sr);
        }
        let sr = self.append(Owner::SuperRoot, now)?;
        self.seq += 1;
        out.push((self.seq, sr));
        self.superroot = Some(sr);
        for v in old_v {
            self.vrelease(v);
        }
        debug_assert!(
            self.dirty.iter().all(|k| write.contains(k)),
            "construction left {:?} dirty",
            self.dirty
        );
        debug_assert!(
            self.seg_dirty
                .iter()
                .all(|s| write.binary_search(&Meta::Sufile(s / SU_PER_BLOCK)).is_ok()),
            "a segment's usage changed without its sufile block"
        );
        self.dirty.clear();
        self.seg_dirty.clear();
        out.append(&mut self.pending_summaries);
        out.sort_unstable();
        self.pending.clear();
        self.pending_segs.clear();
        self.log_open = false;
        self.checkpoints.push_back((self.cno, now));
        self.stats.journal_blocks_written += out.len() as u64;
        let mut runs: Vec<(u64, u32)> = Vec::new();
        for (_, b) in out {
            match runs.last_mut() {
                Some((s, n)) if *s + *n as u64 == b => *n += 1,
                _ => runs.push((b, 1)),
            }
        }
        Some(runs)
    }

    /// The cleaner's victims now: the least recently written segments, not
    /// current, not pending, out of the protection period.
    fn victims(&self, now: SimTime, n: usize) -> Vec<u64> {
        let mut v = Vec::new();
        for &(t, s) in &self.by_age {
            if v.len() >= n || t + self.protection > now {
                break;
            }
            let staged = || self.staged.values().any(|&(b, _)| self.seg_of(b) == s);
            if Some(s) != self.cur && !self.pending_segs.contains(&s) && !staged() {
                v.push(s);
            }
        }
        v
    }

    /// Delete the checkpoints older than the protection period but the
    /// latest, freeing emptied cpfile blocks.
    fn delete_checkpoints(&mut self, now: SimTime) {
        let old = self.cp_first;
        while self.checkpoints.len() > 1 && self.checkpoints[0].1 + self.protection <= now {
            self.checkpoints.pop_front();
        }
        let Some(&(first, _)) = self.checkpoints.front() else {
            return;
        };
        if first == old {
            return;
        }
        self.cp_first = first;
        for blk in (old / CP_PER_BLOCK).max(1)..first / CP_PER_BLOCK {
            self.dirty.remove(&Meta::Cpfile(blk));
            if let Some((b, v)) = self.meta.remove(&Meta::Cpfile(blk)) {
                self.kill(b);
                self.vfree(v);
            }
        }
        self.dirty.insert(Meta::Cpfile(first / CP_PER_BLOCK));
        self.dirty.insert(Meta::Cpfile(0));
    }

    /// Clean segment `s` into the log: its direct reads and writes. False
    /// if its live blocks do not fit.
    fn clean(&mut self, s: u64, now: SimTime, io: &mut Vec<FsCall>) -> bool {
        let live: Vec<(u64, Owner)> = self
            .owner
            .range(self.seg_start(s)..self.seg_end(s))
            .filter(|(_, o)| !matches!(o, Owner::Summary | Owner::SuperRoot))
            .map(|(&b, &o)| (b, o))
            .collect();
        // The moved blocks, then a construction of at most the metadata
        // there is and its sufile/DAT blocks.
        let need = 2 * live.len() as u64 + self.meta.len() as u64 / 8 + 64;
        if self.room(0) < need {
            return false;
        }
        let mut reads: Vec<(u64, u32)> = Vec::new();
        let mut writes: Vec<(u64, u32)> = Vec::new();
        let push = |v: &mut Vec<(u64, u32)>, b: u64| match v.last_mut() {
            Some((s, n)) if *s + *n as u64 == b => *n += 1,
            _ => v.push((b, 1)),
        };
        for (b, o) in live {
            push(&mut reads, b);
            self.stats.cleaner_blocks_read += 1;
            self.stats.cleaner_blocks_written += 1;
            match o {
                Owner::Data {
                    file,
                    fblock,
                    version,
                } => {
                    self.kill(b);
                    let Some(nb) = self.append(
                        Owner::Data {
                            file,
                            fblock,
                            version,
                        },
                        now,
                    ) else {
                        debug_assert!(false, "room() promised space");
                        return false;
                    };
                    push(&mut writes, nb);
                    let f = &mut self.files[file as usize];
                    f.place[fblock as usize] = nb;
                    let v = f.vblk[fblock as usize];
                    self.dirty.insert(Meta::Dat(v / DAT_PER_BLOCK));
                }
                Owner::Meta(k) => {
                    self.dirty.insert(k);
                }
                Owner::SuperRoot | Owner::Summary => {}
            }
        }
        for (block, blocks) in reads {
            io.push(FsCall::Direct {
                op: IoOp::Read,
                block,
                blocks,
                sync: false,
            });
        }
        for (block, blocks) in writes {
            // The cleaner's moved blocks: a segment's bios other than
            // its last are plain writes (`nilfs_segbuf_write`).
            io.push(FsCall::Direct {
                op: IoOp::Write,
                block,
                blocks,
                sync: false,
            });
        }
        self.seg_dirty.insert(s);
        true
    }

    /// Free a cleaned segment (only summaries left in it).
    fn free_segment(&mut self, s: u64) {
        let left: Vec<u64> = self
            .owner
            .range(self.seg_start(s)..self.seg_end(s))
            .map(|(&b, _)| b)
            .collect();
        for b in left {
            debug_assert_eq!(self.owner.get(&b), Some(&Owner::Summary));
            self.owner.remove(&b);
        }
        let seg = &mut self.segs[s as usize];
        self.by_age.remove(&(seg.lastmod, s));
        *seg = Seg::default();
        self.free_segs.insert(s);
    }

    /// One cleaner pass (nilfs_cleanerd).
    fn cleaner_pass(&mut self, now: SimTime, io: &mut Vec<FsCall>) {
        let free = self.free_segs.len() as u64;
        if free < self.min_clean || (self.cleaning && free < self.max_clean) {
            self.cleaning = true;
        } else {
            self.cleaning = false;
            return;
        }
        self.delete_checkpoints(now);
        let want = (self.per_clean as u64).min(self.max_clean - free) as usize;
        let mut cleaned = Vec::new();
        for s in self.victims(now, want) {
            if !self.clean(s, now, io) {
                break;
            }
            cleaned.push(s);
        }
        if cleaned.is_empty() && !self.is_dirty() {
            return;
        }
        // If the GC's log does not fit (`clean` checks room for it, so only
        // if the metadata grew past the estimate), the moved blocks stay
        // pending and the victims in use until a later pass.
        if let Some(runs) = self.construct(now) {
            super::push_commit(runs, self.commit_sync, io);
            for s in cleaned {
                self.free_segment(s);
            }
        }
    }

    /// File `f`'s dirty block `i` takes the log head (`nilfs_segctor_
    /// apply_buffers` after `nilfs_segctor_assign`): a new place and a new
    /// virtual block number, the old ones dead, the B-tree path to it
    /// dirtied (`nilfs_bmap_propagate`).
    fn place_block(&mut self, f: u32, i: u64, now: SimTime) -> Option<u64> {
        let idx = i as usize;
        let file = &self.files[f as usize];
        let (old, oldv, version) = (file.place[idx], file.vblk[idx], file.version[idx] + 1);
        let b = self.append(
            Owner::Data {
                file: f,
                fblock: i,
                version,
            },
            now,
        )?;
        if old != UNPLACED {
            self.kill(old);
            self.vfree(oldv);
        }
        let v = self.valloc();
        let file = &mut self.files[f as usize];
        if std::mem::take(&mut file.dirty[idx]) {
            self.unplaced -= 1;
        }
        file.place[idx] = b;
        file.vblk[idx] = v;
        file.version[idx] = version;
        let n = file.place.len() as u64;
        self.stats.data_blocks_allocated += 1;
        self.mark_path(f, n, i);
        Some(b)
    }

    /// A construction collects every file's dirty data blocks
    /// (`nilfs_segctor_scan_file` -> `nilfs_lookup_dirty_data_buffers`,
    /// files in order) and places them at the log head before the log's
    /// metadata; the page cache then writes them ([`FsyncIo::ordered`]).
    /// Returns the files.
    fn stage_dirty(&mut self, now: SimTime) -> Vec<u32> {
        let mut files = Vec::new();
        for f in 0..self.files.len() as u32 {
            if self.unplaced == 0 {
                break;
            }
            let dirty: Vec<u64> = self.files[f as usize]
                .dirty
                .iter()
                .enumerate()
                .filter(|(_, &d)| d)
                .map(|(i, _)| i as u64)
                .collect();
            if dirty.is_empty() {
                continue;
            }
            for i in dirty {
                let before = self.files[f as usize].place[i as usize];
                let Some(b) = self.place_block(f, i, now) else {
                    debug_assert!(false, "write() kept room for its blocks");
                    return files;
                };
                self.staged.insert((f, i), (b, before));
            }
            files.push(f);
        }
        files
    }

    /// A construction with the dirty data: the data placed first, then the
    /// log (see [`Nilfs2::construct`]), as an fsync's or commit's writes.
    fn construct_with_data(&mut self, now: SimTime) -> Option<FsyncIo> {
        let mut ordered = self.stage_dirty(now);
        // Pages an earlier construction placed that the cache could not
        // write then (under writeback from before, redirtied): written now.
        ordered.extend(self.staged.keys().map(|&(f, _)| f));
        ordered.sort_unstable();
        ordered.dedup();
        let direct = self.construct(now);
        if direct.is_none() && ordered.is_empty() {
            return None;
        }
        Some(FsyncIo {
            ordered,
            direct: direct.unwrap_or_default(),
            barrier: true,
            sync: self.commit_sync,
            ..FsyncIo::default()
        })
    }

    /// The file's B-tree nodes (level, index) of a file of `n` blocks.
    fn mark_path(&mut self, f: u32, n: u64, i: u64) {
        let mut path = Vec::new();
        btree_path(n, i, &mut path);
        for (level, idx) in path {
            self.dirty.insert(Meta::Node {
                file: f,
                level,
                idx,
            });
        }
    }

    fn node_range(f: u32) -> std::ops::Range<Meta> {
        Meta::Node {
            file: f,
            level: 0,
            idx: 0,
        }..Meta::Node {
            file: f + 1,
            level: 0,
            idx: 0,
        }
    }

    fn dir_of(&self, f: u32) -> (u32, Meta) {
        let (d, k) = self.tree.dir_of(f);
        (
            d as u32,
            Meta::Dir {
                dir: d as u32,
                blk: (k / DIRENTS_PER_BLOCK) as u32,
            },
        )
    }

    /// Blocks written to a log and not yet in a constructed one (after an
    /// fsync: none).
    pub fn pending_blocks(&self) -> usize {
        self.pending.len()
    }

    /// The cleaner never loses data: every block of every file is where
    /// its file maps it, holding its latest version.
    pub fn check_versions(&self) -> Result<(), String> {
        for (i, f) in self.files.iter().enumerate() {
            for (k, (&b, &ver)) in f.place.iter().zip(&f.version).enumerate() {
                if b == UNPLACED {
                    continue;
                }
                let want = Owner::Data {
                    file: i as u32,
                    fblock: k as u64,
                    version: ver,
                };
                if self.owner.get(&b) != Some(&want) {
                    return Err(format!(
                        "file {i} block {k} (version {ver}) at {b} holds {:?}",
                        self.owner.get(&b)
                    ));
                }
            }
        }
        Ok(())
    }

    /// Free (clean) segments now.
    pub fn free_segments(&self) -> u64 {
        self.free_segs.len() as u64
    }
}

impl FileSystem for Nilfs2 {
    fn kind(&self) -> FsKind {
        FsKind::Nilfs2
    }
    fn blocks(&self) -> u64 {
        self.blocks
    }
    fn data_room(&self) -> u64 {
        self.room(self.nrsvsegs)
    }
    fn own_areas(&self) -> String {
        format!(
            "its {} reserved segments of {} blocks (nilfs_nrsvsegs: 5 %, at least 8), the blocks past the last whole segment and each segment's summary",
            self.nrsvsegs, self.bps
        )
    }
    fn create(&mut self, f: u32, _now: SimTime, _io: &mut Vec<FsCall>) -> Result<(), NoSpace> {
        debug_assert!(!self.files[f as usize].exists);
        let ino = self.ialloc();
        self.files[f as usize] = File {
            exists: true,
            ino,
            ..File::default()
        };
        let (d, dir_block) = self.dir_of(f);
        self.dirty.insert(Meta::Ifile(ino / INODES_PER_BLOCK));
        self.dirty.insert(dir_block);
        self.dirty
            .insert(Meta::Ifile(self.dirs[d as usize] / INODES_PER_BLOCK));
        self.stats.metadata_dirtied += 3;
        Ok(())
    }
    fn unlink(&mut self, f: u32, _now: SimTime, _io: &mut Vec<FsCall>) {
        let file = std::mem::take(&mut self.files[f as usize]);
        if !file.exists {
            return;
        }
        for (&b, &v) in file.place.iter().zip(&file.vblk) {
            if b != UNPLACED {
                self.kill(b);
                self.vfree(v);
            }
        }
        // Its dirty pages leave the page cache unwritten.
        self.unplaced -= file.dirty.iter().filter(|&&d| d).count() as u64;
        let staged: Vec<(u32, u64)> = self
            .staged
            .range((f, 0)..(f + 1, 0))
            .map(|(&k, _)| k)
            .collect();
        for k in staged {
            self.staged.remove(&k);
        }
        let nodes: Vec<Meta> = self
            .meta
            .range(Self::node_range(f))
            .map(|(&k, _)| k)
            .collect();
        for k in nodes {
            let (b, v) = self.meta.remove(&k).expect("listed");
            self.kill(b);
            self.vfree(v);
        }
        let dirty_nodes: Vec<Meta> = self.dirty.range(Self::node_range(f)).copied().collect();
        for k in dirty_nodes {
            self.dirty.remove(&k);
        }
        self.ifree.insert(file.ino);
        let (d, dir_block) = self.dir_of(f);
        self.dirty.insert(Meta::Ifile(file.ino / INODES_PER_BLOCK));
        self.dirty.insert(dir_block);
        self.dirty
            .insert(Meta::Ifile(self.dirs[d as usize] / INODES_PER_BLOCK));
        self.stats.metadata_dirtied += 3;
    }
    fn write(
        &mut self,
        f: u32,
        off: u64,
        len: u64,
        _now: SimTime,
        io: &mut Vec<FsCall>,
    ) -> Result<(), NoSpace> {
        if len == 0 {
            return Ok(());
        }
        let have = self.files[f as usize].place.len() as u64;
        let first = (off / BLOCK).min(have);
        let last = (off + len).div_ceil(BLOCK);
        let file = &self.files[f as usize];
        let newly_dirty = (first..last)
            .filter(|&i| i >= have || !file.dirty[i as usize])
            .count() as u64;
        // Room in the log for every block dirty and not placed yet.
        if self.room(self.nrsvsegs) < self.unplaced + newly_dirty {
            return Err(NoSpace);
        }
        for i in first..last {
            let file = &mut self.files[f as usize];
            if i >= have {
                file.place.push(UNPLACED);
                file.vblk.push(NO_VBLK);
                file.version.push(0);
                file.dirty.push(false);
            }
            if !std::mem::replace(&mut file.dirty[i as usize], true) {
                self.unplaced += 1;
            }
            if i >= have {
                // A new block enters the bmap at the write
                // (`nilfs_bmap_insert`): the B-tree grows now.
                self.mark_path(f, last.max(have), i);
            }
        }
        let file = &mut self.files[f as usize];
        file.size = file.size.max(off + len);
        let ino = file.ino;
        self.dirty.insert(Meta::Ifile(ino / INODES_PER_BLOCK));
        self.stats.metadata_dirtied += 1;
        // From `off`, or from the old end when the write leaves a gap.
        let lo = if first < off / BLOCK {
            first * BLOCK
        } else {
            off
        };
        io.push(FsCall::Buffered {
            op: IoOp::Write,
            off: lo,
            bytes: off + len - lo,
        });
        if self.unplaced > WATERMARK {
            // `nilfs_transaction_commit`: past the watermark, segctord is
            // woken for a construction now.
            io.push(FsCall::Commit);
        }
        Ok(())
    }
    fn read(&mut self, f: u32, off: u64, len: u64, _now: SimTime, io: &mut Vec<FsCall>) {
        let end = (off + len).min(self.files[f as usize].size);
        if off >= end {
            return;
        }
        io.push(FsCall::Buffered {
            op: IoOp::Read,
            off,
            bytes: end - off,
        });
    }
    /// The page cache writes pages of `f`: those a construction placed go
    /// where it put them; others (an fsync writing its file's data before
    /// its construction, an O_DIRECT write) take the log head now. The
    /// flusher never asks ([`FileSystem::writes_in_background`]).
    fn place(&mut self, f: u32, index: u64, n: u32, now: SimTime, out: &mut Vec<(u64, u64, u32)>) {
        if !self.files[f as usize].exists {
            return;
        }
        let end = (index + n as u64).min(self.files[f as usize].place.len() as u64);
        for i in index..end {
            let b = match self.staged.remove(&(f, i)) {
                Some((b, _)) => b,
                None if self.files[f as usize].dirty[i as usize] => {
                    match self.place_block(f, i, now) {
                        Some(b) => b,
                        None => {
                            debug_assert!(false, "write() kept room for its blocks");
                            continue;
                        }
                    }
                }
                None => continue,
            };
            super::push_placed(out, i, b);
        }
    }
    /// Where the device holds the blocks' data. A block a construction
    /// placed before the page cache wrote it (the writer's page not
    /// dirtied yet when segctord ran) holds its data where it was before,
    /// or none: a page of it the cache must fill is zeroed, not read
    /// (`block_write_begin`).
    fn locate(&self, f: u32, index: u64, n: u32, out: &mut Vec<(u64, u64, u32)>) {
        let place = &self.files[f as usize].place;
        if self.staged.is_empty() {
            return super::locate_in(place, UNPLACED, index, n, out);
        }
        let end = (index + n as u64).min(place.len() as u64);
        for i in index..end {
            let b = match self.staged.get(&(f, i)) {
                Some(&(_, before)) => before,
                None => place[i as usize],
            };
            if b != UNPLACED {
                super::push_placed(out, i, b);
            }
        }
    }
    fn places_at_writeback(&self) -> bool {
        true
    }
    fn writes_in_background(&self) -> bool {
        false
    }
    fn fsync(&mut self, _f: u32, now: SimTime) -> FsyncIo {
        match self.construct_with_data(now) {
            Some(io) => {
                if !io.direct.is_empty() {
                    self.stats.commits_fsync += 1;
                    self.last_construct = now;
                }
                io
            }
            None => FsyncIo::default(),
        }
    }
    /// segctord's timer or watermark construction, on its thread: the
    /// dirty data, then the log.
    fn commit_io(&mut self, now: SimTime) -> Option<FsyncIo> {
        let io = self.construct_with_data(now)?;
        if !io.direct.is_empty() {
            self.stats.commits_timer += 1;
            self.last_construct = now;
        }
        Some(io)
    }
    fn tick(&mut self, now: SimTime, io: &mut Vec<FsCall>) {
        if now >= self.last_construct + self.interval {
            self.last_construct = now;
            if self.is_dirty() || self.unplaced > 0 || !self.staged.is_empty() {
                // segctord's timer (`sc_interval`): a construction of
                // everything dirty, data included, on its thread. Blocks
                // an earlier construction placed whose pages the cache
                // had not dirtied yet (the file set's pre-allocation is
                // made before the run and reaches the cache during it;
                // a call the cache fetched ahead) are written by the next
                // one that finds them dirty.
                io.push(FsCall::Commit);
            }
        }
        if now >= self.last_clean + self.cleaning_interval {
            self.last_clean = now;
            self.cleaner_pass(now, io);
        }
    }
    fn next_tick(&self) -> Option<SimTime> {
        let t = self.last_construct + self.interval;
        let free = self.free_segs.len() as u64;
        if free < self.min_clean || self.cleaning {
            Some(t.min(self.last_clean + self.cleaning_interval))
        } else {
            Some(t)
        }
    }
    fn size(&self, f: u32) -> u64 {
        self.files[f as usize].size
    }
    fn exists(&self, f: u32) -> bool {
        self.files[f as usize].exists
    }
    fn check(&self) -> Result<(), String> {
        let mut reach: u64 = 0;
        let mut vblks: BTreeSet<u64> = BTreeSet::new();
        let mut inos: BTreeSet<u64> = BTreeSet::new();
        let mut dirty = 0u64;
        let mut use_v = |v: u64, who: &str| -> Result<(), String> {
            if v == NO_VBLK {
                return Ok(());
            }
            if v >= self.vnext || !vblks.insert(v) {
                return Err(format!("{who}'s virtual block {v} is free or used twice"));
            }
            Ok(())
        };
        for (i, f) in self.files.iter().enumerate() {
            if !f.exists {
                if !f.place.is_empty() {
                    return Err(format!("deleted file {i} keeps blocks"));
                }
                if self.meta.range(Self::node_range(i as u32)).next().is_some() {
                    return Err(format!("deleted file {i} keeps B-tree nodes"));
                }
                continue;
            }
            if !inos.insert(f.ino) {
                return Err(format!("file {i}'s inode {} is used twice", f.ino));
            }
            let n = f.place.len() as u64;
            if n != f.size.div_ceil(BLOCK)
                || f.vblk.len() as u64 != n
                || f.version.len() as u64 != n
                || f.dirty.len() as u64 != n
            {
                return Err(format!("file {i}: {} bytes in {n} blocks", f.size));
            }
            dirty += f.dirty.iter().filter(|&&d| d).count() as u64;
            for (k, (&b, &v)) in f.place.iter().zip(&f.vblk).enumerate() {
                if b == UNPLACED {
                    if v != NO_VBLK || !f.dirty[k] {
                        return Err(format!("file {i} block {k}: unplaced, clean or numbered"));
                    }
                    continue;
                }
                match self.owner.get(&b) {
                    Some(Owner::Data { file, fblock, .. })
                        if *file == i as u32 && *fblock == k as u64 => {}
                    o => return Err(format!("file {i} block {k} at {b} is {o:?}")),
                }
                use_v(v, &format!("file {i}"))?;
                reach += 1;
            }
            let nodes = self.meta.range(Self::node_range(i as u32)).count() as u64;
            let dirty_new = self
                .dirty
                .range(Self::node_range(i as u32))
                .filter(|k| !self.meta.contains_key(k))
                .count() as u64;
            if nodes + dirty_new != btree_nodes(n) {
                return Err(format!(
                    "file {i}: {nodes} B-tree nodes (+{dirty_new} new) for {n} blocks, want {}",
                    btree_nodes(n)
                ));
            }
        }
        if dirty != self.unplaced {
            return Err(format!("{dirty} dirty blocks, {} counted", self.unplaced));
        }
        for (&(f, i), &(b, _)) in &self.staged {
            if self.files[f as usize].place.get(i as usize) != Some(&b) {
                return Err(format!("file {f} block {i} staged at {b}, not its place"));
            }
        }
        for &d in &self.dirs {
            if !inos.insert(d) {
                return Err(format!("directory inode {d} used twice"));
            }
        }
        for (k, &(b, v)) in &self.meta {
            if self.owner.get(&b) != Some(&Owner::Meta(*k)) {
                return Err(format!("{k:?} at {b} is {:?}", self.owner.get(&b)));
            }
            if matches!(k, Meta::Dat(_)) != (v == NO_VBLK) {
                return Err(format!("{k:?}: virtual block {v}"));
            }
            use_v(v, &format!("{k:?}"))?;
            reach += 1;
        }
        if let Some(sr) = self.superroot {
            if self.owner.get(&sr) != Some(&Owner::SuperRoot) {
                return Err(format!(
                    "the super root at {sr} is {:?}",
                    self.owner.get(&sr)
                ));
            }
            reach += 1;
        }
        let mut dat: BTreeMap<u64, u32> = BTreeMap::new();
        for v in &vblks {
            *dat.entry(v / DAT_PER_BLOCK).or_insert(0) += 1;
        }
        if dat != self.dat_live {
            return Err("the DAT's live entries differ from the virtual blocks in use".into());
        }
        for k in self.meta.keys() {
            if let Meta::Dat(d) = k {
                if !dat.contains_key(d) && !self.dat_empty.contains(d) {
                    return Err(format!("DAT block {d} has no live entry"));
                }
            }
        }
        let summaries = self
            .owner
            .values()
            .filter(|o| **o == Owner::Summary)
            .count() as u64;
        if reach + summaries != self.owner.len() as u64 {
            return Err(format!(
                "{} blocks in use, {reach} reachable and {summaries} summaries",
                self.owner.len()
            ));
        }
        if self.owner.contains_key(&0) {
            return Err("the superblock is in use".into());
        }
        for s in 0..self.nsegs {
            let seg = &self.segs[s as usize];
            let n = self.owner.range(self.seg_start(s)..self.seg_end(s)).count() as u32;
            if n != seg.live {
                return Err(format!(
                    "segment {s}: {n} blocks in use, usage {}",
                    seg.live
                ));
            }
            if self.free_segs.contains(&s) == seg.used {
                return Err(format!("segment {s} is both free and in use, or neither"));
            }
            if !seg.used && n > 0 {
                return Err(format!("free segment {s} holds {n} live blocks"));
            }
        }
        if let Some(&b) = self.owner.keys().next_back() {
            if b >= self.nsegs * self.bps {
                return Err(format!("block {b} past the last segment"));
            }
        }
        Ok(())
    }
    fn settle(&mut self) {
        // The aging history is constructed (its log's calls dropped) and
        // the counters start again. Its deleted blocks stay dead in their
        // segments until the cleaner reclaims them, under its protection
        // period like any others.
        let _ = self.construct(SimTime::ZERO);
        self.stats = FsStats {
            kind: self.stats.kind.clone(),
            ..FsStats::default()
        };
    }
    fn stats(&self) -> FsStats {
        let used_segs = self.nsegs - self.free_segs.len() as u64;
        let nodes = self
            .meta
            .keys()
            .filter(|k| matches!(k, Meta::Node { .. }))
            .count() as u64;
        FsStats {
            blocks: self.blocks,
            used_blocks: used_segs * self.bps + 1,
            extents: self
                .files
                .iter()
                .map(|f| {
                    let placed: Vec<u64> =
                        f.place.iter().copied().filter(|&b| b != UNPLACED).collect();
                    runs(&placed).len() as u64
                })
                .sum(),
            index_blocks: nodes,
            ..self.stats.clone()
        }
    }
}

/// Places as runs (first block, blocks).
fn runs(places: &[u64]) -> Vec<(u64, u64)> {
    let mut v: Vec<(u64, u64)> = Vec::new();
    for &b in places {
        match v.last_mut() {
            Some((s, n)) if *s + *n == b => *n += 1,
            _ => v.push((b, 1)),
        }
    }
    v
}

#[cfg(test)]
mod tests;
