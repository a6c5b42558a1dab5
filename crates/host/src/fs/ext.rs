//! ext2, ext3 and ext4 as layout models.
//!
//! **Layout (mke2fs's defaults).** Block groups of 32,768 blocks. Each group
//! has a block bitmap, an inode bitmap and an inode table of
//! `32768 * 4096 / inode_ratio` inodes of 256 bytes (mke2fs `-i 16384`:
//! 8,192 inodes, 512 blocks); groups 0, 1 and the powers of 3, 5 and 7 also
//! keep a superblock and group-descriptor copy (`sparse_super`). ext4 packs
//! the bitmaps and inode tables of 16 groups at the start of the first
//! (`flex_bg`). A last group too small for its own metadata is left out,
//! as mke2fs does.
//!
//! **Directories.** The file set's entries live in Filebench's directory
//! tree ([`super::tree::DirTree`]), made at mkfs time, each directory with
//! its inode and its entry blocks (256 entries of 16 bytes per block) in
//! its group. The Orlov allocator (`find_group_orlov`) places them: the
//! file set's root, a top-level directory, in a random group among those
//! with the fewest directories and at least the average free inodes and
//! blocks; every directory below it near its parent, in the first group
//! from the parent's on that has fewer than `ndirs / groups +
//! inodes_per_group / 16` directories and not much less than the average
//! free inodes and blocks (ext4: per flex group of 16). So a file set's
//! directories cluster in a few groups, not over the disk. A file's inode
//! goes in its directory's group (`find_group_other`), at the group's
//! first free inode.
//!
//! **Data placement.** ext2 and ext3 allocate at the block after the file's
//! last one when free (the goal), else the first free block from the goal in
//! its group, else the next free block on; a file's first block is aimed at
//! its group's data at a colour of one sixteenth of the group (Linux colours
//! by the writer's pid; here by the inode number). Blocks past the 12th are
//! mapped by indirect blocks (one indirect block per 1,024 blocks, a
//! double-indirect block above the first 1,036), each allocated just before
//! the data it maps, as `ext2_alloc_branch` does. ext4 maps a file by
//! extents of up to 32,768 blocks, four in the inode and 340 per extent-tree
//! leaf beyond; its multi-block allocator serves a small file (under 16
//! blocks, `mb_stream_req`) from the locality group's stream, packing small
//! files of all writers together, and a larger one first-fit with the whole
//! request's length from its goal. Delayed allocation is modelled by
//! allocating each write in one request.
//!
//! **Metadata.** Allocating or freeing blocks dirties the group's block
//! bitmap and the group descriptor block; creating or removing a file its
//! inode bitmap, its inode-table block, its directory block and the group
//! descriptor; a write that grows a file (size, mtime) its inode-table
//! block; a new indirect pointer its indirect block, a new extent its
//! leaf. Metadata reads are served from memory (the models keep metadata
//! resident).
//!
//! **The journal (ext3, ext4: jbd2).** `journal_size` blocks (mke2fs's
//! default for the file system's size) from the middle group on, in one run
//! where free space allows (ext3's group metadata splits a journal larger
//! than a group). Every metadata block dirtied joins the running transaction;
//! `data=journal` adds the data blocks written. A commit writes, at the
//! journal's head, a descriptor block per 254 tags (ext4's 16-byte tags; 511
//! for ext3's 8), the transaction's blocks, then a device flush and the
//! commit block, then a flush (jbd2's `REQ_PREFLUSH | REQ_FUA` commit
//! block).
//!
//! **Who commits, and who waits** (jbd2's `transaction.c`, `journal.c`,
//! `commit.c`; ext4's `ext4_sync_file`). Transactions are numbered
//! (`t_tid`); each file remembers the transaction of its last change
//! (`i_sync_tid`). The file system's thread (kjournald2) writes the
//! commits ([`FileSystem::commit_io`], on its own stream), one at a time,
//! each of the running transaction once a commit of it is asked for
//! (`j_commit_request`): by the timer every `commit_interval` or a
//! transaction reaching a quarter of the journal (`tick` returns
//! [`FsCall::Commit`]), or by an fsync. While one commits, the next
//! transaction runs. An fsync of a file whose transaction is committed
//! already has nothing to wait for (the device flush alone, with
//! barriers); otherwise it asks for its commit if nobody has
//! (`jbd2_log_start_commit`) and waits for it ([`CommitWait`];
//! `jbd2_complete_transaction` -> `jbd2_log_wait_commit`), so one commit
//! serves every fsync whose changes it holds (group commit), and issues
//! no flush of its own (`jbd2_trans_will_send_data_barrier`; the case
//! where the commit it waits for had already sent its commit block is not
//! told apart). Linux 2.6.35 waited only for a commit its own
//! `log_start_commit` asked for: an fsync finding the commit asked for
//! already (by another fsync or the timer) returned after the flush
//! alone, its changes perhaps not yet on disk (ext3's and ext4's
//! `*_sync_file` of that kernel). In `data=ordered` mode ext3's commits
//! first write the dirty data of every file with blocks allocated in the
//! transaction (`journal_submit_data_buffers`, waited for before the log
//! here; jbd overlaps the two); ext4's delayed allocation leaves that list
//! empty (its blocks are allocated at writeback), so an ext4 fsync writes
//! only its own file's data. The journaled blocks stay dirty
//! in the buffer cache and the flusher writes them in place (the
//! checkpoint). Not modelled: revoke records, and jbd2 forcing a checkpoint
//! when the journal wraps before the flusher has written its blocks (wraps
//! are counted).
//!
//! **Barriers** (`fs.barrier`, default on; off for ext3 under
//! `fs.kernel = "2.6.35"`, ext3's `barrier=0` default until Linux 3.1,
//! commit 00eacd66cd8a "ext3: make ext3 mount default to barrier=1"):
//! without them a commit's blocks and commit block are plain writes, and an
//! fsync issues no device flush (`ext3_sync_file` flushes only
//! `if (test_opt(sb, BARRIER))`; jbd writes the commit block ordered only
//! with `JFS_BARRIER`).

use super::alloc::FreeRuns;
use super::filemap::{buffered, place_allocated, runs_of, NewBlocks};
use super::tree::DirTree;
use super::{FileSystem, FsCall, FsConfig, FsKind, FsStats, FsyncIo, JournalMode, NoSpace, BLOCK};
use crate::workload::IoOp;
use crate::workload::{CommitSync, CommitWait};
use ssd_core::error::{invalid, ConfigError};
use ssd_core::units::{Dur, SimTime};
use std::collections::BTreeSet;

/// Blocks per group (one 4 KiB bitmap block's bits).
pub const BLOCKS_PER_GROUP: u64 = 32_768;
const INODE_SIZE: u64 = 256;
const FLEX: u64 = 16;
const DIRENTS_PER_BLOCK: u64 = 256;
const DIRECT: u64 = 12;
const PTRS: u64 = 1024;
const EXTENT_MAX: u64 = 32_768;
const INODE_EXTENTS: u64 = 4;
const LEAF_EXTENTS: u64 = 340;
/// ext4's `mb_stream_req`: smaller requests use the locality group.
const STREAM_REQ: u64 = 16;
/// ext4's `mb_group_prealloc`: the locality group's preallocation.
const GROUP_PREALLOC: u64 = 512;

#[derive(Clone, Debug, Default)]
struct File {
    exists: bool,
    size: u64,
    /// Inode number (0-based, over the groups).
    inode: u64,
    extents: Vec<(u64, u64)>,
    /// Indirect (ext2/3) or extent-tree (ext4) blocks.
    index: Vec<u64>,
    /// Blocks allocated to it that hold none of its data yet (written
    /// back since: [`FileSystem::place`]).
    new: NewBlocks,
    /// The transaction of the inode's last change (`i_sync_tid`, set by
    /// `ext4_update_inode_fsync_trans` / ext3's `ext3_mark_inode_dirty`).
    sync_tid: u64,
}

impl File {
    fn blocks(&self) -> u64 {
        self.extents.iter().map(|e| e.1).sum()
    }
}

#[derive(Clone, Debug)]
struct Group {
    end: u64,
    block_bitmap: u64,
    inode_bitmap: u64,
    inode_table: u64,
    /// First block after the group's own metadata.
    data: u64,
    free_inodes: Vec<u64>,
}

/// The running transaction.
#[derive(Clone, Debug, Default)]
struct Transaction {
    blocks: BTreeSet<u64>,
    /// Data blocks logged (`data=journal`).
    data: u64,
    /// Files with blocks allocated in the transaction (ordered mode).
    ordered: BTreeSet<u32>,
}

impl Transaction {
    fn is_empty(&self) -> bool {
        self.blocks.is_empty() && self.data == 0
    }
}

/// ext2, ext3 or ext4 (see the module docs).
pub struct Ext {
    /// Which of its journal or log writes are `REQ_SYNC` on the kernel profile.
    commit_sync: CommitSync,
    kind: FsKind,
    blocks: u64,
    groups: Vec<Group>,
    inodes_per_group: u64,
    itable_blocks: u64,
    gdt_blocks: u64,
    /// Static metadata: (start, blocks) of superblocks, descriptors,
    /// bitmaps and inode tables.
    fixed: Vec<(u64, u64)>,
    free: FreeRuns,
    files: Vec<File>,
    /// The file set's directory tree.
    tree: DirTree,
    /// Per directory: its group, inode and entry blocks.
    dirs: Vec<(usize, u64, Vec<u64>)>,
    /// ext4's locality-group stream cursor.
    lg_cursor: u64,
    lg_left: u64,
    /// The journal's length in blocks, and its blocks on the device in
    /// journal order (one run when free space allows; ext3's groups split
    /// a large journal at their metadata).
    journal: Option<u64>,
    jruns: Vec<(u64, u64)>,
    mode: JournalMode,
    commit_interval: Dur,
    /// `barrier` (ext3, ext4): commits and fsyncs flush the device cache.
    barrier: bool,
    head: u64,
    tx: Transaction,
    /// The running transaction's id (`t_tid`).
    tid: u64,
    /// The latest transaction a commit was asked for (`j_commit_request`),
    /// and the latest an fsync asked for (its commit counts as an fsync's).
    commit_request: u64,
    fsync_request: u64,
    /// The transaction being written by the file system's thread
    /// (`j_committing_transaction`): one at a time.
    committing: Option<u64>,
    /// The latest transaction committed (`j_commit_sequence`).
    committed: u64,
    /// Linux 2.6.35's fsync: it waits for the commit only when its own
    /// `log_start_commit` asked for it (see [`FileSystem::fsync`]).
    wait_only_own_request: bool,
    last_commit: SimTime,
    stats: FsStats,
}

/// mke2fs's default journal size for a file system of `blocks` blocks
/// (`ext2fs_default_journal_size`, e2fsprogs 1.43 and later).
pub fn default_journal_blocks(blocks: u64) -> u64 {
    match blocks {
        b if b < 2048 => 0,
        b if b < 32_768 => 1024,
        b if b < 256 * 1024 => 4096,
        b if b < 512 * 1024 => 8192,
        b if b < 4096 * 1024 => 16_384,
        b if b < 8192 * 1024 => 32_768,
        b if b < 16_384 * 1024 => 65_536,
        b if b < 32_768 * 1024 => 131_072,
        _ => 262_144,
    }
}

fn backup_group(g: u64) -> bool {
    if g <= 1 {
        return true;
    }
    for p in [3u64, 5, 7] {
        let mut x = p;
        while x < g {
            x *= p;
        }
        if x == g {
            return true;
        }
    }
    false
}

impl Ext {
    /// mke2fs over `blocks` blocks (ext2, ext3 or ext4 by `cfg.kind`) for
    /// the file set's directory tree `tree`; an error names a bad option or
    /// says the device is too small.
    pub fn new(cfg: &FsConfig, blocks: u64, tree: DirTree) -> Result<Ext, ConfigError> {
        let kind = cfg.kind;
        let files = tree.files();
        let ratio = cfg.inode_ratio.map_or(16_384, |r| r.0);
        let inodes_per_group = (BLOCKS_PER_GROUP * BLOCK / ratio).clamp(16, BLOCKS_PER_GROUP);
        let itable_blocks = (inodes_per_group * INODE_SIZE).div_ceil(BLOCK);
        let mut ngroups = blocks.div_ceil(BLOCKS_PER_GROUP);
        let desc = if kind == FsKind::Ext4 { 64 } else { 32 };
        let gdt_blocks = (ngroups * desc).div_ceil(BLOCK);
        let own = 2 + itable_blocks;
        // A last group too small for its metadata and some data is dropped.
        let last = blocks - (ngroups - 1) * BLOCKS_PER_GROUP;
        if ngroups > 1 && last < own + 1 + gdt_blocks + 50 {
            ngroups -= 1;
        }
        let blocks = blocks.min(ngroups * BLOCKS_PER_GROUP);
        if ngroups == 0 || blocks < own + gdt_blocks + 64 {
            return Err(invalid(
                "fs.kind",
                format!("{blocks} blocks is too small for {kind}"),
            ));
        }
        let mut groups = Vec::new();
        let mut fixed = Vec::new();
        for g in 0..ngroups {
            let start = g * BLOCKS_PER_GROUP;
            let end = (start + BLOCKS_PER_GROUP).min(blocks);
            let mut at = start;
            if backup_group(g) {
                fixed.push((at, 1 + gdt_blocks));
                at += 1 + gdt_blocks;
            }
            groups.push(Group {
                end,
                block_bitmap: 0,
                inode_bitmap: 0,
                inode_table: 0,
                data: at,
                free_inodes: Vec::new(),
            });
        }
        if kind == FsKind::Ext4 {
            // flex_bg: the first group of each 16 holds their bitmaps and
            // inode tables, in that order.
            for f0 in (0..ngroups).step_by(FLEX as usize) {
                let members = f0..(f0 + FLEX).min(ngroups);
                let n = members.end - members.start;
                let base = groups[f0 as usize].data;
                for (k, g) in members.clone().enumerate() {
                    let gr = &mut groups[g as usize];
                    gr.block_bitmap = base + k as u64;
                    gr.inode_bitmap = base + n + k as u64;
                    gr.inode_table = base + 2 * n + k as u64 * itable_blocks;
                }
                let len = 2 * n + n * itable_blocks;
                if base + len > groups[f0 as usize].end {
                    return Err(invalid("fs.kind", "too small for ext4's flex_bg"));
                }
                fixed.push((base, len));
                groups[f0 as usize].data = base + len;
            }
        } else {
            for gr in &mut groups {
                gr.block_bitmap = gr.data;
                gr.inode_bitmap = gr.data + 1;
                gr.inode_table = gr.data + 2;
                fixed.push((gr.data, own));
                gr.data += own;
                if gr.data >= gr.end {
                    return Err(invalid("fs.kind", "a group too small for its metadata"));
                }
            }
        }
        for (g, gr) in groups.iter_mut().enumerate() {
            // Inodes 1-10 of group 0 are reserved (root, journal, ...).
            let first = if g == 0 { 11 } else { 0 };
            gr.free_inodes = (first..inodes_per_group).rev().collect();
        }
        let mut free = FreeRuns::new();
        for gr in &groups {
            if gr.end > gr.data {
                free.free(gr.data, gr.end - gr.data);
            }
        }
        let mut fs = Ext {
            commit_sync: cfg.commit_sync(),
            kind,
            blocks,
            groups,
            inodes_per_group,
            itable_blocks,
            gdt_blocks,
            fixed,
            free,
            files: vec![File::default(); files as usize],
            tree: DirTree::default(),
            dirs: Vec::new(),
            lg_cursor: 0,
            lg_left: 0,
            journal: None,
            jruns: Vec::new(),
            mode: cfg.journal.unwrap_or_default(),
            commit_interval: cfg.commit_interval.unwrap_or(Dur::from_ms(5000)),
            barrier: cfg.barrier(),
            head: 0,
            tx: Transaction::default(),
            tid: 1,
            commit_request: 0,
            fsync_request: 0,
            committing: None,
            committed: 0,
            wait_only_own_request: cfg.kernel == Some(super::Kernel::V2_6_35),
            last_commit: SimTime::ZERO,
            stats: FsStats {
                kind: kind.name().into(),
                ..FsStats::default()
            },
        };
        if kind.journaled() {
            let jb = cfg
                .journal_size
                .map_or(default_journal_blocks(blocks), |s| s.0 / BLOCK);
            if jb == 0 || jb * 4 > fs.free.free_blocks() {
                return Err(invalid(
                    "fs.journal_size",
                    format!(
                        "{jb} blocks: more than a quarter of the {} free blocks, or none",
                        fs.free.free_blocks()
                    ),
                ));
            }
            // From the middle group on, in one run where free space allows.
            let mid = fs.groups[fs.groups.len() / 2].data;
            let mut at = fs.free.first_fit_in(mid, u64::MAX, jb).unwrap_or(mid);
            let mut left = jb;
            while left > 0 {
                let st = fs.free.next_free(at).expect("room checked above");
                let (b, n) = fs.free.take_at(st, left).expect("a free block");
                fs.jruns.push((b, n));
                at = b + n;
                left -= n;
            }
            fs.journal = Some(jb);
            fs.head = 0;
        }
        // The directories (mkfs-time population of the file set's tree),
        // each with its inode and entry blocks, placed by the Orlov
        // allocator.
        let mut dirs_in = vec![0u64; fs.groups.len()];
        // The file system's root and lost+found.
        dirs_in[0] = 2;
        for d in 0..tree.dirs() {
            let g = fs.orlov(&tree, d, &dirs_in, dirs_in.iter().sum::<u64>());
            dirs_in[g] += 1;
            let inode = fs
                .take_inode(g)
                .ok_or_else(|| invalid("personality.files", "more directories than inodes"))?;
            let g = (inode / fs.inodes_per_group) as usize;
            let mut v = Vec::new();
            for _ in 0..tree.entries(d).div_ceil(DIRENTS_PER_BLOCK).max(1) {
                let goal = fs.groups[g].data;
                let b = fs
                    .free
                    .next_free(goal)
                    .and_then(|s| fs.free.take_at(s, 1))
                    .ok_or_else(|| invalid("personality.files", "no room for the directories"))?;
                v.push(b.0);
            }
            fs.dirs.push((g, inode, v));
        }
        fs.tree = tree;
        Ok(fs)
    }

    /// The group of directory `d`'s inode, as `find_group_orlov` picks it
    /// on a file system with `dirs_in` directories per group (`ndirs` in
    /// all). ext4 looks at flex groups of 16, ext2/ext3 at groups.
    ///
    /// * The file set's root is a top-level directory (its parent is the
    ///   file system's root): spread. From a random group on, the one
    ///   with the fewest directories among those with at least the
    ///   average free inodes and free blocks.
    /// * Any other directory goes near its parent: from the parent's
    ///   group on, the first with fewer than `ndirs / groups +
    ///   inodes_per_group / 16` directories, at least `average -
    ///   inodes_per_group / 4` free inodes and `average - blocks_per_group
    ///   / 4` free blocks (all per flex group for ext4); else the parent's.
    ///
    /// Within the chosen flex group, its first group with a free inode.
    fn orlov(&self, tree: &DirTree, d: usize, dirs_in: &[u64], ndirs: u64) -> usize {
        let unit = if self.kind == FsKind::Ext4 { FLEX } else { 1 } as usize;
        let ngroups = self.groups.len();
        let nunits = ngroups.div_ceil(unit);
        let members = |u: usize| u * unit..((u + 1) * unit).min(ngroups);
        let stats = |u: usize| {
            let r = members(u);
            let free_i: u64 = r
                .clone()
                .map(|g| self.groups[g].free_inodes.len() as u64)
                .sum();
            let lo = r.start as u64 * BLOCKS_PER_GROUP;
            let hi = self.groups[r.end - 1].end;
            let free_b = self.free.free_in(lo, hi);
            let dirs: u64 = dirs_in[r].iter().sum();
            (free_i, free_b, dirs)
        };
        let all: Vec<(u64, u64, u64)> = (0..nunits).map(stats).collect();
        let avg_i = all.iter().map(|s| s.0).sum::<u64>() / nunits as u64;
        let avg_b = all.iter().map(|s| s.1).sum::<u64>() / nunits as u64;
        let first_free = |u: usize| {
            members(u)
                .find(|&g| !self.groups[g].free_inodes.is_empty())
                .unwrap_or(u * unit)
        };
        let ipg = self.inodes_per_group * unit as u64;
        match tree.parent(d) {
            None => {
                let start = (tree.salt() % nunits as u64) as usize;
                let mut best: Option<(usize, u64)> = None;
                for i in 0..nunits {
                    let u = (start + i) % nunits;
                    let (fi, fb, nd) = all[u];
                    if fi == 0 || fi < avg_i || fb < avg_b {
                        continue;
                    }
                    if best.is_none_or(|(_, b)| nd < b) {
                        best = Some((u, nd));
                    }
                }
                first_free(best.map_or(start, |b| b.0))
            }
            Some(p) => {
                let pg = self.dirs[p].0 / unit;
                let max_dirs = ndirs / nunits as u64 + ipg / 16;
                let min_i = avg_i.saturating_sub(ipg / 4).max(1);
                let min_b = avg_b.saturating_sub(BLOCKS_PER_GROUP * unit as u64 / 4);
                (0..nunits)
                    .map(|i| (pg + i) % nunits)
                    .find(|&u| all[u].2 < max_dirs && all[u].0 >= min_i && all[u].1 >= min_b)
                    .map_or(self.dirs[p].0, first_free)
            }
        }
    }

    fn take_inode(&mut self, g: usize) -> Option<u64> {
        let n = self.groups.len();
        for k in 0..n {
            let gi = (g + k) % n;
            if let Some(i) = self.groups[gi].free_inodes.pop() {
                return Some(gi as u64 * self.inodes_per_group + i);
            }
        }
        None
    }

    fn group_of(&self, b: u64) -> usize {
        ((b / BLOCKS_PER_GROUP) as usize).min(self.groups.len() - 1)
    }

    fn meta(&mut self, block: u64, io: &mut Vec<FsCall>) {
        self.stats.metadata_dirtied += 1;
        io.push(FsCall::Meta { block });
        if self.journal.is_some() {
            self.tx.blocks.insert(block);
        }
    }

    fn gdt_block(&self, g: usize) -> u64 {
        let desc = if self.kind == FsKind::Ext4 { 64 } else { 32 };
        1 + (g as u64 * desc) / BLOCK
    }

    fn inode_block(&self, inode: u64) -> u64 {
        let g = (inode / self.inodes_per_group) as usize;
        let i = inode % self.inodes_per_group;
        self.groups[g].inode_table + i * INODE_SIZE / BLOCK
    }

    fn dir_of(&self, f: u32) -> (usize, u64) {
        let (d, k) = self.tree.dir_of(f);
        (d, self.dirs[d].2[(k / DIRENTS_PER_BLOCK) as usize])
    }

    /// One run of at most `want` blocks near `goal`.
    fn take_near(&mut self, goal: u64, want: u64, whole: bool) -> Option<(u64, u64)> {
        if let Some(r) = self.free.take_at(goal, want) {
            return Some(r);
        }
        let g = self.group_of(goal);
        let end = self.groups[g].end;
        if whole {
            // mballoc: a free extent of the request's whole length, from the
            // goal's group on.
            if let Some(s) = self
                .free
                .first_fit_in(goal, u64::MAX, want)
                .or_else(|| self.free.first_fit_in(0, goal, want))
            {
                return self.free.take_at(s, want);
            }
        }
        let s = self
            .free
            .next_free_in(goal, end)
            .or_else(|| self.free.next_free(goal))?;
        self.free.take_at(s, want)
    }

    fn note_alloc(&mut self, s: u64, n: u64, io: &mut Vec<FsCall>) {
        let g = self.group_of(s);
        let gl = self.group_of(s + n - 1);
        for gg in g..=gl {
            let bb = self.groups[gg].block_bitmap;
            self.meta(bb, io);
            let gd = self.gdt_block(gg);
            self.meta(gd, io);
        }
    }

    fn alloc_blocks(
        &mut self,
        goal: u64,
        want: u64,
        whole: bool,
        io: &mut Vec<FsCall>,
    ) -> Result<(u64, u64), NoSpace> {
        let (s, n) = self.take_near(goal, want, whole).ok_or(NoSpace)?;
        self.note_alloc(s, n, io);
        Ok((s, n))
    }

    fn free_blocks(&mut self, s: u64, n: u64, io: &mut Vec<FsCall>) {
        self.free.free(s, n);
        self.note_alloc(s, n, io);
    }

    /// Indirect blocks file block `i` needs beyond those of `i - 1`
    /// (ext2/3): an indirect block at every 1,024 blocks past the 12 direct
    /// ones, the double-indirect block at the first of those.
    fn index_needed(i: u64) -> u64 {
        if i < DIRECT {
            return 0;
        }
        let j = i - DIRECT;
        if j == 0 {
            return 1;
        }
        if j < PTRS {
            return 0;
        }
        let k = j - PTRS;
        if k == 0 {
            return 2;
        }
        u64::from(k.is_multiple_of(PTRS))
    }

    /// The indirect block holding file block `i`'s pointer (ext2/3).
    fn index_for(file: &File, i: u64) -> Option<u64> {
        if i < DIRECT {
            return None;
        }
        let j = i - DIRECT;
        if j < PTRS {
            return file.index.first().copied();
        }
        // index[1] is the double-indirect block, then one per 1,024.
        file.index.get(2 + ((j - PTRS) / PTRS) as usize).copied()
    }

    fn push_extent(&mut self, f: u32, s: u64, n: u64, io: &mut Vec<FsCall>) -> Result<(), NoSpace> {
        let file = &mut self.files[f as usize];
        match file.extents.last_mut() {
            Some(e) if e.0 + e.1 == s && (self.kind != FsKind::Ext4 || e.1 + n <= EXTENT_MAX) => {
                e.1 += n
            }
            _ => file.extents.push((s, n)),
        }
        if self.kind == FsKind::Ext4 {
            let ne = self.files[f as usize].extents.len() as u64;
            let leaves = if ne > INODE_EXTENTS {
                ne.div_ceil(LEAF_EXTENTS)
            } else {
                0
            };
            while (self.files[f as usize].index.len() as u64) < leaves {
                let goal = s;
                let (b, _) = self.alloc_blocks(goal, 1, false, io)?;
                self.files[f as usize].index.push(b);
                self.stats.index_blocks += 1;
            }
            if let Some(&leaf) = self.files[f as usize].index.last() {
                self.meta(leaf, io);
            }
        }
        Ok(())
    }

    /// Allocate `want` blocks at the end of `f`.
    fn grow(&mut self, f: u32, want: u64, io: &mut Vec<FsCall>) -> Result<(), NoSpace> {
        if want == 0 {
            return Ok(());
        }
        if want + 2 + want / PTRS > self.free.free_blocks() {
            return Err(NoSpace);
        }
        let inode = self.files[f as usize].inode;
        let group = (inode / self.inodes_per_group) as usize;
        let ext4 = self.kind == FsKind::Ext4;
        let mut left = want;
        while left > 0 {
            let file = &self.files[f as usize];
            let have = file.blocks();
            let last = file.extents.last().map(|&(s, n)| s + n);
            if ext4 {
                let small = have + left < STREAM_REQ && last.is_none();
                let (s, n) = if small {
                    // The locality group's stream: small files packed.
                    if self.lg_left == 0 || !self.free.is_free(self.lg_cursor) {
                        let (s, n) = self
                            .take_near(self.lg_cursor, GROUP_PREALLOC, true)
                            .ok_or(NoSpace)?;
                        self.free.free(s, n);
                        self.lg_cursor = s;
                        self.lg_left = n;
                    }
                    let r = self.alloc_blocks(self.lg_cursor, left, false, io)?;
                    self.lg_cursor = r.0 + r.1;
                    self.lg_left = self.lg_left.saturating_sub(r.1);
                    r
                } else {
                    let goal = last.unwrap_or(self.groups[group].data);
                    self.alloc_blocks(goal, left, true, io)?
                };
                self.push_extent(f, s, n, io)?;
                self.stats.data_blocks_allocated += n;
                self.tx.ordered.insert(f);
                left -= n;
            } else {
                // ext2/ext3: block by block through the indirect tree (runs
                // of data between indirect blocks).
                let i = have;
                let need = Self::index_needed(i);
                let goal = last.unwrap_or_else(|| {
                    let gr = &self.groups[group];
                    let colour = (inode % 16) * (BLOCKS_PER_GROUP / 16);
                    (gr.data + colour).min(gr.end - 1)
                });
                let mut goal = goal;
                for _ in 0..need {
                    let (b, _) = self.alloc_blocks(goal, 1, false, io)?;
                    self.files[f as usize].index.push(b);
                    self.stats.index_blocks += 1;
                    self.meta(b, io);
                    goal = b + 1;
                }
                // Data up to the next indirect boundary.
                let span = if i < DIRECT {
                    DIRECT - i
                } else {
                    PTRS - (i - DIRECT) % PTRS
                };
                let (s, n) = self.alloc_blocks(goal, left.min(span), false, io)?;
                self.push_extent(f, s, n, io)?;
                self.stats.data_blocks_allocated += n;
                self.tx.ordered.insert(f);
                if let Some(ib) = Self::index_for(&self.files[f as usize], i) {
                    self.meta(ib, io);
                }
                left -= n;
            }
        }
        Ok(())
    }

    /// A journal commit of the running transaction: (runs, commit block).
    fn commit(&mut self) -> Option<(Vec<(u64, u32)>, u64)> {
        let jn = self.journal?;
        if self.tx.is_empty() {
            return None;
        }
        let tags = if self.kind == FsKind::Ext4 { 254 } else { 511 };
        let body = self.tx.blocks.len() as u64 + self.tx.data;
        let total = body + body.div_ceil(tags) + 1;
        self.tx = Transaction::default();
        self.tid += 1;
        // Written at the head, wrapping at the journal's end.
        let mut runs: Vec<(u64, u32)> = Vec::new();
        let mut head = self.head;
        let mut left = total;
        while left > 0 {
            let n = left.min(jn - head);
            self.phys(head, n, &mut runs);
            head += n;
            left -= n;
            if head == jn {
                head = 0;
                self.stats.journal_wraps += 1;
            }
        }
        self.head = head;
        self.stats.journal_blocks_written += total;
        // The commit block is the last one, written after a flush.
        let last = runs.last_mut().expect("a commit writes blocks");
        let cb = last.0 + last.1 as u64 - 1;
        last.1 -= 1;
        if last.1 == 0 {
            runs.pop();
        }
        Some((runs, cb))
    }

    /// The device runs of journal blocks `[l, l + n)`.
    fn phys(&self, mut l: u64, mut n: u64, out: &mut Vec<(u64, u32)>) {
        let mut base = 0;
        for &(s, k) in &self.jruns {
            if n == 0 {
                break;
            }
            if l < base + k {
                let off = l - base;
                let m = n.min(k - off);
                match out.last_mut() {
                    Some(r) if r.0 + r.1 as u64 == s + off && r.1 as u64 + m <= u32::MAX as u64 => {
                        r.1 += m as u32
                    }
                    _ => out.push((s + off, m as u32)),
                }
                l += m;
                n -= m;
            }
            base += k;
        }
    }

    /// Blocks in the running transaction (0 after an fsync's commit).
    pub fn running_transaction_blocks(&self) -> u64 {
        self.tx.blocks.len() as u64 + self.tx.data
    }

    /// The journal's blocks on the device, in journal order.
    pub fn journal_runs(&self) -> &[(u64, u64)] {
        &self.jruns
    }
}

impl FileSystem for Ext {
    fn kind(&self) -> FsKind {
        self.kind
    }
    fn blocks(&self) -> u64 {
        self.blocks
    }
    fn data_room(&self) -> u64 {
        self.free.free_blocks()
    }
    fn own_areas(&self) -> String {
        if self.kind == FsKind::Ext2 {
            "its super block copies, group descriptors, bitmaps and inode tables".into()
        } else {
            "its journal, super block copies, group descriptors, bitmaps and inode tables".into()
        }
    }
    fn create(&mut self, f: u32, _now: SimTime, io: &mut Vec<FsCall>) -> Result<(), NoSpace> {
        let (d, dir_block) = self.dir_of(f);
        let g = self.dirs[d].0;
        let inode = self.take_inode(g).ok_or(NoSpace)?;
        let file = &mut self.files[f as usize];
        debug_assert!(!file.exists);
        *file = File {
            exists: true,
            inode,
            sync_tid: self.tid,
            ..File::default()
        };
        let ig = (inode / self.inodes_per_group) as usize;
        let ib = self.groups[ig].inode_bitmap;
        self.meta(ib, io);
        let it = self.inode_block(inode);
        self.meta(it, io);
        self.meta(dir_block, io);
        let dir_inode = self.dirs[d].1;
        let di = self.inode_block(dir_inode);
        self.meta(di, io);
        let gd = self.gdt_block(ig);
        self.meta(gd, io);
        Ok(())
    }
    fn unlink(&mut self, f: u32, _now: SimTime, io: &mut Vec<FsCall>) {
        let file = std::mem::take(&mut self.files[f as usize]);
        if !file.exists {
            return;
        }
        for (s, n) in file.extents {
            self.free_blocks(s, n, io);
        }
        for b in file.index {
            self.free_blocks(b, 1, io);
            self.stats.index_blocks -= 1;
        }
        let ig = (file.inode / self.inodes_per_group) as usize;
        self.groups[ig]
            .free_inodes
            .push(file.inode % self.inodes_per_group);
        let ib = self.groups[ig].inode_bitmap;
        self.meta(ib, io);
        let it = self.inode_block(file.inode);
        self.meta(it, io);
        let (d, dir_block) = self.dir_of(f);
        self.meta(dir_block, io);
        let di = self.inode_block(self.dirs[d].1);
        self.meta(di, io);
        self.tx.ordered.remove(&f);
    }
    fn write(
        &mut self,
        f: u32,
        off: u64,
        len: u64,
        _now: SimTime,
        io: &mut Vec<FsCall>,
    ) -> Result<(), NoSpace> {
        let have = self.files[f as usize].blocks();
        let need = (off + len).div_ceil(BLOCK).saturating_sub(have);
        // Blocks a failed allocation kept are new too.
        let grown = self.grow(f, need, io);
        let file = &mut self.files[f as usize];
        file.new.add(have, file.blocks());
        grown?;
        file.size = file.size.max(off + len);
        // The write's size or mtime change dirties the inode in the
        // running transaction.
        file.sync_tid = self.tid;
        let inode = file.inode;
        // The bytes go to the file's pages; the cache writes them back
        // to the blocks just allocated (`place`).
        buffered(IoOp::Write, off, len, io);
        let it = self.inode_block(inode);
        self.meta(it, io);
        if self.mode == JournalMode::Journal && self.journal.is_some() {
            let blocks = (off + len).div_ceil(BLOCK) - off / BLOCK;
            self.tx.data += blocks;
        }
        Ok(())
    }
    fn read(&mut self, f: u32, off: u64, len: u64, _now: SimTime, io: &mut Vec<FsCall>) {
        let end = (off + len).min(self.files[f as usize].size);
        buffered(IoOp::Read, off, end.saturating_sub(off), io);
    }
    /// The blocks `write` allocated (`ext4_map_blocks` with create, or
    /// `ext3_get_blocks_handle`), now holding the data written back
    /// (`ext4_writepages` -> `mpage_map_and_submit_buffers`,
    /// `block_write_full_page`).
    fn place(&mut self, f: u32, index: u64, n: u32, _now: SimTime, out: &mut Vec<(u64, u64, u32)>) {
        let file = &mut self.files[f as usize];
        if file.exists {
            place_allocated(&file.extents, &mut file.new, index, n, out);
        }
    }
    fn locate(&self, f: u32, index: u64, n: u32, out: &mut Vec<(u64, u64, u32)>) {
        let file = &self.files[f as usize];
        runs_of(&file.extents, 0, index, n, Some(&file.new), out);
    }
    fn places_at_writeback(&self) -> bool {
        true
    }
    fn fsync(&mut self, f: u32, _now: SimTime) -> FsyncIo {
        if self.journal.is_none() {
            // ext2: generic_file_fsync writes the inode and the mapping's
            // buffers (its indirect blocks), not the directory.
            let file = &self.files[f as usize];
            let mut metadata = vec![self.inode_block(file.inode)];
            metadata.extend(file.index.iter().copied());
            return FsyncIo {
                metadata,
                ..FsyncIo::default()
            };
        }
        // The transaction the fsync needs: the file's last change's
        // (`i_sync_tid`); data=journal forces a commit of the running one
        // (`ext3_force_commit`).
        let tid = if self.mode == JournalMode::Journal && !self.tx.is_empty() {
            self.tid
        } else {
            self.files[f as usize].sync_tid
        };
        if tid <= self.committed {
            // Committed already: the device flush only, with barriers
            // (`needs_barrier` in ext4_sync_file; ext3_sync_file's
            // `blkdev_issue_flush` under BARRIER).
            return FsyncIo::flush_only(self.barrier);
        }
        // `jbd2_log_start_commit`: a transaction no commit was asked for
        // yet is asked for, and kjournald2 woken.
        let start = tid > self.commit_request;
        if start {
            self.commit_request = tid;
            self.fsync_request = tid;
        } else if self.wait_only_own_request {
            // Linux 2.6.35: `if (log_start_commit(journal, commit_tid))
            // log_wait_commit(...)`, else the flush alone:
            // `__log_start_commit` returns 0 when a commit of the
            // transaction was asked for already (by another fsync or the
            // timer), and the fsync returns without waiting for it.
            return FsyncIo::flush_only(self.barrier);
        }
        // Current kernels wait for a transaction that is running or
        // committing (`jbd2_complete_transaction` ->
        // `jbd2_log_wait_commit`). The commit's own flushes make the
        // fsync's needless (`jbd2_trans_will_send_data_barrier`).
        FsyncIo {
            wait: Some(CommitWait { tid, start }),
            no_flush: true,
            ..FsyncIo::default()
        }
    }
    fn commit_io(&mut self, _now: SimTime) -> Option<FsyncIo> {
        self.journal?;
        // kjournald2 commits the running transaction once a commit of it
        // is asked for (`j_commit_request`), one at a time.
        if self.commit_request < self.tid || self.committing.is_some() {
            return None;
        }
        let tid = self.tid;
        // data=ordered (ext3): the data of every file with blocks
        // allocated in the transaction is written first
        // (`journal_submit_data_buffers`); ext4's delayed allocation
        // leaves that list empty.
        let ordered: Vec<u32> = if self.kind == FsKind::Ext3 && self.mode == JournalMode::Ordered {
            self.tx.ordered.iter().copied().collect()
        } else {
            Vec::new()
        };
        match self.commit() {
            Some((mut runs, cb)) => {
                if self.fsync_request >= tid {
                    self.stats.commits_fsync += 1;
                } else {
                    self.stats.commits_timer += 1;
                }
                self.committing = Some(tid);
                runs.push((cb, 1));
                Some(FsyncIo {
                    ordered,
                    sync: self.commit_sync,
                    ..FsyncIo::commit(runs, self.barrier)
                })
            }
            None => {
                // An empty transaction closes with nothing to write.
                self.tid += 1;
                self.committed = tid;
                None
            }
        }
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
        let Some(jn) = self.journal else {
            return;
        };
        // kjournald2 commits at the interval, or when the transaction
        // reaches a quarter of the journal (`j_max_transaction_buffers`):
        // it asks for a commit of the running transaction and commits it
        // (with its ordered data) on its own thread.
        let full = self.running_transaction_blocks() >= jn / 4;
        if !full && now < self.last_commit + self.commit_interval {
            return;
        }
        self.last_commit = now;
        if !self.tx.is_empty() && self.commit_request < self.tid {
            self.commit_request = self.tid;
            io.push(FsCall::Commit);
        }
    }
    fn next_tick(&self) -> Option<SimTime> {
        self.journal
            .map(|_| self.last_commit + self.commit_interval)
    }
    fn settle(&mut self) {
        // Everything so far counts as committed.
        self.tx = Transaction::default();
        self.committed = self.tid;
        self.commit_request = self.tid;
        self.fsync_request = self.tid;
        self.committing = None;
        self.tid += 1;
        let index_blocks = self.stats.index_blocks;
        self.stats = FsStats {
            kind: self.kind.name().into(),
            index_blocks,
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
        let mut owned: Vec<(u64, u64, String)> = Vec::new();
        for &(s, n) in &self.fixed {
            owned.push((s, n, "static metadata".into()));
        }
        for &(s, n) in &self.jruns {
            owned.push((s, n, "the journal".into()));
        }
        for (d, (_, _, v)) in self.dirs.iter().enumerate() {
            for &b in v {
                owned.push((b, 1, format!("directory {d}")));
            }
        }
        let mut inodes = BTreeSet::new();
        for (d, (_, ino, _)) in self.dirs.iter().enumerate() {
            if !inodes.insert(*ino) {
                return Err(format!("directory {d}'s inode {ino} is used twice"));
            }
        }
        for (i, f) in self.files.iter().enumerate() {
            if !f.exists {
                if !f.extents.is_empty() || !f.index.is_empty() {
                    return Err(format!("deleted file {i} keeps blocks"));
                }
                continue;
            }
            if !inodes.insert(f.inode) {
                return Err(format!("file {i}'s inode {} is used twice", f.inode));
            }
            if f.blocks() != f.size.div_ceil(BLOCK) {
                return Err(format!(
                    "file {i}: {} bytes in {} blocks",
                    f.size,
                    f.blocks()
                ));
            }
            let want_index = if self.kind == FsKind::Ext4 {
                let ne = f.extents.len() as u64;
                if ne > INODE_EXTENTS {
                    ne.div_ceil(LEAF_EXTENTS)
                } else {
                    0
                }
            } else {
                (0..f.blocks()).map(Self::index_needed).sum()
            };
            if f.index.len() as u64 != want_index {
                return Err(format!(
                    "file {i}: {} index blocks for {} blocks in {} extents (want {want_index})",
                    f.index.len(),
                    f.blocks(),
                    f.extents.len()
                ));
            }
            for &(s, n) in &f.extents {
                owned.push((s, n, format!("file {i}")));
            }
            for &b in &f.index {
                owned.push((b, 1, format!("file {i}'s index")));
            }
        }
        // Inode bitmaps: every used inode is not free, every other is.
        for (g, gr) in self.groups.iter().enumerate() {
            let used = inodes
                .range(g as u64 * self.inodes_per_group..(g as u64 + 1) * self.inodes_per_group)
                .count() as u64;
            let reserved = if g == 0 { 11 } else { 0 };
            if used + gr.free_inodes.len() as u64 + reserved != self.inodes_per_group {
                return Err(format!(
                    "group {g}: {used} inodes used + {} free != {}",
                    gr.free_inodes.len(),
                    self.inodes_per_group - reserved
                ));
            }
        }
        for (s, n) in self.free.runs() {
            owned.push((s, n, "free".into()));
        }
        super::check_partition(owned, self.blocks)?;
        let _ = (self.itable_blocks, self.gdt_blocks);
        Ok(())
    }
    fn stats(&self) -> FsStats {
        FsStats {
            blocks: self.blocks,
            used_blocks: self.blocks - self.free.free_blocks(),
            extents: self.files.iter().map(|f| f.extents.len() as u64).sum(),
            free_extents: self.free.fragmentation().0,
            free_extent_mean_blocks: self.free.fragmentation().1,
            ..self.stats.clone()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ssd_core::units::Size;

    fn fs(kind: FsKind) -> Ext {
        let cfg = FsConfig {
            kind,
            ..FsConfig::default()
        };
        Ext::new(&cfg, 1 << 20, DirTree::flat(1000, 100)).unwrap()
    }

    /// Fileserver's tree (10,000 files, width 20) on 8 GiB (64 groups):
    /// the Orlov allocator puts the file set's root in some group and its
    /// ~550 directories from there on, at most `ndirs / groups +
    /// inodes_per_group / 16` per group (ext2/ext3: a second group takes
    /// the rest), or per flex group of 16 (ext4: the root's flex group
    /// takes them all, in its first group with free inodes); not spread
    /// over the disk. A file's inode goes in its directory's group.
    #[test]
    fn orlov_keeps_a_file_sets_directories_near_its_root() {
        for k in [FsKind::Ext2, FsKind::Ext4] {
            let cfg = FsConfig {
                kind: k,
                ..FsConfig::default()
            };
            let crate::fs::AnyFs::Ext(mut f) = cfg.build(1 << 21, 10_000, 20, 5).unwrap() else {
                unreachable!()
            };
            f.check().unwrap();
            let n = f.dirs.len();
            assert!((400..800).contains(&n), "{n} directories");
            let root = f.dirs[0].0;
            let mut groups: Vec<usize> = f.dirs.iter().map(|d| d.0).collect();
            groups.sort_unstable();
            groups.dedup();
            match k {
                FsKind::Ext2 => {
                    // 2 (root, lost+found) + up to n in a group holding at
                    // most n / 64 + 512.
                    assert_eq!(groups.len(), 2, "{groups:?}");
                    assert!(groups.contains(&root) && groups.contains(&((root + 1) % 64)));
                }
                _ => {
                    assert_eq!(root % 16, 0, "the first group of a flex group");
                    assert_eq!(groups, vec![root]);
                }
            }
            let mut io = Vec::new();
            f.create(0, SimTime::ZERO, &mut io).unwrap();
            let (d, _) = f.tree.dir_of(0);
            assert_eq!(
                (f.files[0].inode / f.inodes_per_group) as usize,
                f.dirs[d].0
            );
        }
    }

    #[test]
    fn mkfs_layout_is_consistent() {
        for k in [FsKind::Ext2, FsKind::Ext3, FsKind::Ext4] {
            let f = fs(k);
            f.check().unwrap();
            assert_eq!(f.groups.len(), 32);
            assert_eq!(f.inodes_per_group, 8192);
            assert_eq!(f.itable_blocks, 512);
            assert_eq!(f.journal, k.journaled().then_some(16_384));
        }
        assert_eq!(default_journal_blocks(2 << 20), 16_384);
        assert_eq!(default_journal_blocks(5 << 20), 32_768);
        assert!(backup_group(25) && backup_group(49) && !backup_group(10));
    }

    /// A 64 GiB ext3's 512 MiB journal spans groups (their metadata splits
    /// it); commits map onto its runs in order and stay inside them.
    #[test]
    fn a_journal_larger_than_a_group_spans_groups() {
        let cfg = FsConfig {
            kind: FsKind::Ext3,
            ..FsConfig::default()
        };
        let mut f = Ext::new(&cfg, 16 << 20, DirTree::flat(100, 20)).unwrap();
        assert_eq!(f.journal, Some(131_072));
        assert!(f.jruns.len() > 2, "{:?}", f.jruns);
        f.check().unwrap();
        let mut io = Vec::new();
        let mut written = 0;
        for k in 0..100 {
            f.create(k, SimTime::ZERO, &mut io).unwrap();
            f.write(k, 0, 40 << 10, SimTime::ZERO, &mut io).unwrap();
            let s = f.fsync(k, SimTime::ZERO);
            let inside = |b: u64| f.jruns.iter().any(|&(s, n)| b >= s && b < s + n);
            for &(b, n) in &s.direct {
                assert!(inside(b) && inside(b + n as u64 - 1));
                written += n as u64;
            }
        }
        assert_eq!(written, f.stats().journal_blocks_written);
        f.check().unwrap();
    }

    #[test]
    fn indirect_blocks_follow_ext2s_tree() {
        let mut f = fs(FsKind::Ext2);
        let mut io = Vec::new();
        f.create(0, SimTime::ZERO, &mut io).unwrap();
        f.write(0, 0, 2000 * BLOCK, SimTime::ZERO, &mut io).unwrap();
        // 12 direct, then the indirect block, then 1,024 more, then the
        // double-indirect and its first indirect block.
        assert_eq!(f.files[0].index.len(), 3);
        f.check().unwrap();
        // The indirect block sits right before the data it maps.
        let ind = f.files[0].index[0];
        assert_eq!(f.files[0].extents[0].0 + 12, ind);
        f.unlink(0, SimTime::ZERO, &mut io);
        f.check().unwrap();
        assert_eq!(f.stats().index_blocks, 0);
    }

    /// An fsync asks kjournald2 for the commit of its file's transaction
    /// and waits for it (`jbd2_complete_transaction`); the commit, written
    /// by the file system's thread, serves every thread's changes so far.
    #[test]
    fn an_fsync_waits_for_the_commit_of_its_transaction() {
        let mut f = fs(FsKind::Ext4);
        let mut io = Vec::new();
        for k in 0..4 {
            f.create(k, SimTime::ZERO, &mut io).unwrap();
            f.write(k, 0, 10_000, SimTime::ZERO, &mut io).unwrap();
        }
        let dirty: BTreeSet<u64> = io
            .iter()
            .filter_map(|c| match c {
                FsCall::Meta { block } => Some(*block),
                _ => None,
            })
            .collect();
        assert_eq!(f.running_transaction_blocks(), dirty.len() as u64);
        let s = f.fsync(0, SimTime::ZERO);
        assert_eq!(
            s.wait,
            Some(CommitWait {
                tid: 1,
                start: true
            })
        );
        assert!(s.direct.is_empty() && s.no_flush, "{s:?}");
        assert!(!f.committed(1));
        // Another file's fsync before the thread has started: it waits
        // for the same commit, without asking again.
        let s1 = f.fsync(1, SimTime::ZERO);
        assert_eq!(
            s1.wait,
            Some(CommitWait {
                tid: 1,
                start: false
            })
        );
        // The file system's thread writes the transaction: descriptor,
        // the blocks and the commit block, in the journal.
        let c = f.commit_io(SimTime::ZERO).expect("a commit");
        let n: u64 = c.direct.iter().map(|r| r.1 as u64).sum();
        assert_eq!(n, dirty.len() as u64 + 2);
        let inside = |b: u64| f.jruns.iter().any(|&(s, n)| b >= s && b < s + n);
        assert!(c
            .direct
            .iter()
            .all(|&(b, k)| inside(b) && inside(b + k as u64 - 1)));
        assert!(c.barrier && c.ordered.is_empty() && !c.no_flush);
        assert_eq!(f.running_transaction_blocks(), 0);
        // While it is written, a third fsync of a file changed in it waits
        // too; a change after it is in the next transaction.
        assert_eq!(
            f.fsync(2, SimTime::ZERO).wait,
            Some(CommitWait {
                tid: 1,
                start: false
            })
        );
        f.write(3, 10_000, 100, SimTime::ZERO, &mut io).unwrap();
        assert!(f.commit_io(SimTime::ZERO).is_none(), "one commit at a time");
        f.commit_done(SimTime::ZERO);
        assert!(f.committed(1) && !f.committed(2));
        // Committed already: the flush alone.
        assert_eq!(f.fsync(0, SimTime::ZERO), FsyncIo::flush_only(true));
        assert_eq!(
            f.fsync(3, SimTime::ZERO).wait,
            Some(CommitWait {
                tid: 2,
                start: true
            })
        );
        assert_eq!(f.stats().commits_fsync, 1);
        f.check().unwrap();
    }

    /// Linux 2.6.35: an fsync waits only for a commit its own
    /// `log_start_commit` asked for; one another fsync or the timer asked
    /// for already leaves it the flush alone (`__log_start_commit` returns
    /// 0).
    #[test]
    fn on_2_6_35_an_fsync_waits_only_for_a_commit_it_asked_for() {
        let cfg = FsConfig {
            kind: FsKind::Ext4,
            kernel: Some(crate::fs::Kernel::V2_6_35),
            ..FsConfig::default()
        };
        let mut f = Ext::new(&cfg, 1 << 20, DirTree::flat(1000, 100)).unwrap();
        let mut io = Vec::new();
        for k in 0..2 {
            f.create(k, SimTime::ZERO, &mut io).unwrap();
            f.write(k, 0, 5000, SimTime::ZERO, &mut io).unwrap();
        }
        assert_eq!(
            f.fsync(0, SimTime::ZERO).wait,
            Some(CommitWait {
                tid: 1,
                start: true
            })
        );
        assert_eq!(f.fsync(1, SimTime::ZERO), FsyncIo::flush_only(true));
        // The timer's request counts the same.
        let _ = f.commit_io(SimTime::ZERO).unwrap();
        f.commit_done(SimTime::ZERO);
        f.write(0, 5000, 100, SimTime::ZERO, &mut io).unwrap();
        io.clear();
        f.tick(SimTime(5 * 1_000_000_000), &mut io);
        assert_eq!(io, vec![FsCall::Commit]);
        assert_eq!(f.fsync(0, SimTime::ZERO), FsyncIo::flush_only(true));
    }

    #[test]
    fn ext3_ordered_commits_write_the_files_data_first() {
        let mut f = fs(FsKind::Ext3);
        let mut io = Vec::new();
        for k in 0..3 {
            f.create(k, SimTime::ZERO, &mut io).unwrap();
            f.write(k, 0, 5000, SimTime::ZERO, &mut io).unwrap();
        }
        let _ = f.fsync(1, SimTime::ZERO);
        assert_eq!(f.commit_io(SimTime::ZERO).unwrap().ordered, vec![0, 1, 2]);
        // The timer's commit too (`journal_submit_data_buffers` runs in
        // every commit).
        f.commit_done(SimTime::ZERO);
        f.write(2, 5000, 5000, SimTime::ZERO, &mut io).unwrap();
        io.clear();
        f.tick(SimTime(5 * 1_000_000_000), &mut io);
        assert_eq!(io, vec![FsCall::Commit]);
        let c = f.commit_io(SimTime::ZERO).unwrap();
        assert_eq!(c.ordered, vec![2]);
        assert_eq!(f.stats().commits_timer, 1);
    }

    /// ext3 on Linux 2.6.35 (`barrier=0`, its default before 3.1): the
    /// same commits, without a flush before the commit block, after it, or
    /// after an fsync; ext4 keeps its barriers on that kernel.
    #[test]
    fn ext3_on_2_6_35_commits_without_barriers() {
        let cfg = |kind| FsConfig {
            kind,
            kernel: Some(crate::fs::Kernel::V2_6_35),
            ..FsConfig::default()
        };
        let mut old = Ext::new(&cfg(FsKind::Ext3), 1 << 20, DirTree::flat(1000, 100)).unwrap();
        let mut now = fs(FsKind::Ext3);
        let mut io = Vec::new();
        for f in [&mut old, &mut now] {
            f.create(0, SimTime::ZERO, &mut io).unwrap();
            f.write(0, 0, 5000, SimTime::ZERO, &mut io).unwrap();
            let s = f.fsync(0, SimTime::ZERO);
            assert!(s.wait.is_some() && s.no_flush);
        }
        let (a, b) = (
            old.commit_io(SimTime::ZERO).unwrap(),
            now.commit_io(SimTime::ZERO).unwrap(),
        );
        assert_eq!(a.direct, b.direct);
        assert!(!a.barrier && a.no_flush && b.barrier && !b.no_flush);
        old.commit_done(SimTime::ZERO);
        now.commit_done(SimTime::ZERO);
        // Nothing to commit: no flush either.
        assert!(old.fsync(0, SimTime::ZERO).no_flush);
        assert_eq!(now.fsync(0, SimTime::ZERO), FsyncIo::default());
        // jbd's `write_op = WRITE` for the log blocks, the commit block by
        // `sync_dirty_buffer` (REQ_SYNC); a current jbd2 marks them all.
        assert_eq!(
            a.sync,
            crate::workload::CommitSync {
                log: false,
                commit: true,
                ordered: false
            }
        );
        assert_eq!(b.sync, crate::workload::CommitSync::default());
        let e4 = Ext::new(&cfg(FsKind::Ext4), 1 << 20, DirTree::flat(1000, 100)).unwrap();
        assert!(e4.barrier);
    }

    #[test]
    fn ext4_packs_small_files_and_keeps_large_ones_contiguous() {
        let mut f = fs(FsKind::Ext4);
        let mut io = Vec::new();
        for k in 0..3 {
            f.create(k, SimTime::ZERO, &mut io).unwrap();
            f.write(k, 0, 8192, SimTime::ZERO, &mut io).unwrap();
        }
        let e = |k: usize| f.files[k].extents.clone();
        assert_eq!(e(0)[0].0 + 2, e(1)[0].0);
        assert_eq!(e(1)[0].0 + 2, e(2)[0].0);
        f.create(3, SimTime::ZERO, &mut io).unwrap();
        for k in 0..8 {
            f.write(3, k * (1 << 20), 1 << 20, SimTime::ZERO, &mut io)
                .unwrap();
        }
        assert_eq!(f.files[3].extents.len(), 1, "{:?}", f.files[3].extents);
        f.check().unwrap();
        let _ = Size(0);
    }

    #[test]
    fn the_timer_commits_every_interval() {
        let mut f = fs(FsKind::Ext3);
        let mut io = Vec::new();
        f.create(0, SimTime::ZERO, &mut io).unwrap();
        io.clear();
        f.tick(SimTime(1_000_000_000), &mut io);
        assert!(io.is_empty());
        f.tick(SimTime(5 * 1_000_000_000), &mut io);
        // kjournald2 is asked for the commit, and writes it with its
        // barrier (a flush before the commit block, the page cache adds
        // the FUA's after it).
        assert_eq!(io, vec![FsCall::Commit]);
        let c = f.commit_io(SimTime(5 * 1_000_000_000)).unwrap();
        assert!(c.barrier && !c.no_flush && !c.direct.is_empty());
        assert_eq!(f.stats().commits_timer, 1);
        assert_eq!(f.next_tick(), Some(SimTime(10 * 1_000_000_000)));
    }
}
