//! XFS as a layout model: allocation groups, B+trees of free space and
//! inodes, extent maps, and the metadata log with delayed logging (or,
//! as Linux before 2.6.39 ran it by default, without).
//!
//! **Layout (mkfs.xfs's defaults, v5 format: CRCs, 512-byte inodes,
//! `finobt=1`).** The device is cut into `agcount` allocation groups (AGs)
//! of equal size (the last one smaller): mkfs's default for a single device
//! without a stripe is 4 AGs up to 4 TiB, AGs of 1 TiB above
//! (`calc_default_ag_geometry`; knob `fs.agcount`); an AG is at least
//! 16 MiB (`XFS_AG_MIN_BYTES`), and a last AG smaller than that is left out.
//! An AG's first block holds its superblock, AGF, AGI and AGFL sectors; the
//! next four the roots of its free-space B+trees (by block, `bnobt`, and by
//! size, `cntbt`), its inode B+tree (`inobt`) and its free-inode B+tree
//! (`finobt`); the rest is free space. The B+trees grow and shrink with
//! their records (505 free-extent records of 8 bytes per 4 KiB leaf after
//! the 56-byte CRC block header, 252 inode-chunk records of 16 bytes; node
//! levels above): a split takes a block from the AG's free space (through
//! the AGFL, whose refill is not modelled apart), a shrink gives one back,
//! with a hysteresis of one block. Inodes are allocated in chunks of 64
//! (8 blocks, aligned to 8 blocks in the AG: `sb_inoalignmt`) on demand in
//! the AG (`xfs_ialloc_ag_alloc`, goal the AG's last new chunk,
//! `agi_newino`); a chunk whose 64 inodes are all free is freed (`ikeep`
//! off). mkfs's root, realtime-bitmap and realtime-summary inodes take the
//! first three inodes of AG 0's first chunk; the root directory one block.
//!
//! **The internal log** is in the middle AG (`agcount / 2`), at its first
//! free block. Its default size is mkfs.xfs's (`calculate_log_size`,
//! xfsprogs 5.15 and later, [`default_log_blocks`]): a 2048:1 ratio of the
//! file system's size, at least 64 MiB (`XFS_MIN_REALISTIC_LOG_BLOCKS`),
//! except on a file system under 512 MiB, which gets the minimum size (here
//! 10 MiB, `XFS_MIN_LOG_BYTES`, standing for mkfs's minimum computed from
//! the transaction reservations); at most 2 GiB - 10 MiB
//! (`XFS_MAX_LOG_BYTES`) and at most the AG's free space. Knob
//! `fs.log_size` (mkfs.xfs `-l size=`).
//!
//! **Directories and placement.** The file set's entries live in
//! Filebench's directory tree ([`super::tree::DirTree`]), made at mkfs
//! time; new directories, at every level, rotate over the AGs (inode64's `m_agirotor`), a
//! file's inode goes in its directory's AG (else the next AG with a free
//! inode or room for a chunk: `xfs_dialloc`). A directory of up to 125
//! entries (24-byte entries of ~10-character names, their 8-byte hash
//! entries and the block tail) is one block (block form); a larger one has
//! data blocks of 168 entries and leaf blocks of ~500 hash entries, plus a
//! node block and a free-index block when there is more than one leaf
//! (node form). A file's data goes in its inode's AG: a growing file right
//! after its last extent when free (the exact allocation at the goal),
//! else the best-fit free extent of the request's whole length
//! (`xfs_alloc_ag_vextent_size`: the by-size B+tree's lookup), from the
//! inode's AG on, else the largest free extents piece by piece. Delayed
//! allocation is modelled by allocating each application write in one
//! request at write time. Speculative EOF preallocation is not modelled.
//!
//! **Extent maps.** Extents of up to 2^21 - 1 blocks (`XFS_MAX_BMBT_EXTLEN`)
//! in the inode's data fork: 21 records of 16 bytes fit its literal area
//! ((512 - 176) / 16); beyond, the fork is a B+tree (`bmbt`) of leaves of
//! 251 records ((4096 - 72) / 16, the CRC long-form header), with a node
//! level when the inode's root holds more than 20 leaf pointers. bmbt blocks
//! are allocated best-fit (a hole, not the file's goal).
//!
//! **Metadata and delayed logging.** Every change dirties its metadata
//! block in the buffer cache (a `Meta` call: AG header block, free-space
//! and inode B+tree blocks, the inode's cluster block, bmbt and directory
//! blocks) and joins the committed item list (CIL) as a *logged region*:
//! an inode item logs its inode log format (56 bytes) and core (176 bytes),
//! plus its data fork (16 bytes per extent in the inode, or the bmbt root)
//! when the extents changed; a buffer item its buf log format (24 bytes)
//! and each contiguous run of its dirty 128-byte chunks (`XFS_BLF_CHUNK`:
//! a B+tree record change logs the block header chunk and the record's
//! chunk, a directory entry change the entry's and the header's chunks,
//! an AGF or AGI change its sector's first chunk); a new inode chunk an
//! icreate item (28 bytes); a freed extent an EFI and an EFD (16 + 16 bytes
//! each); every region and format behind a 12-byte log op header. An item
//! relogged before the next checkpoint is counted once, with the union of
//! its dirty ranges. A checkpoint (CIL push) writes the CIL, a start
//! record, a transaction header and a commit record (52 bytes) as log
//! records in 32 KiB iclogs (`logbsize`, each with a 512-byte record
//! header), at the log's head, circularly, as `Direct` writes of whole
//! 4 KiB blocks, with a flush before the checkpoint's last block and after
//! it (the commit iclog's `REQ_PREFLUSH | REQ_FUA`). Checkpoints happen when an fsync finds
//! its file's inode in the CIL (`xfs_file_fsync`'s log force to the
//! inode's sequence; the whole CIL goes: everybody's changes so far), when
//! the CIL reaches an eighth of the log (`XLOG_CIL_SPACE_LIMIT`: pushed on
//! the next tick) and every `xfssyncd_centisecs` (default 3000: 30 s; the
//! log worker's `xfs_log_force`); `commits_fsync` counts the first,
//! `commits_timer` the others. The logged metadata blocks stay dirty in
//! the buffer cache and are written in place by the page cache's flusher,
//! which stands for xfsaild's tail pushing.
//!
//! **Without delayed logging** (`fs.delaylog = false`, or `fs.kernel =
//! "2.6.35"`: `delaylog` came in 2.6.35 as an experimental mount option,
//! off by default, and became the default in 2.6.39, commit "xfs: enable
//! delaylog by default"; `nodelaylog` was removed in 3.3), modelled as
//! Linux 2.6.35's `fs/xfs` ran it:
//!
//! * *Transactions.* Each model call (create, unlink, a write that
//!   allocates) is one transaction; its items and their regions are the
//!   ones above, with the union of what *this* transaction dirtied in an
//!   item, and nothing is aggregated across transactions: an item two
//!   transactions touch is logged twice. `xfs_trans_commit` ->
//!   `xfs_log_write`/`xlog_write` copies the transaction into the in-core
//!   log: a start record (an op header, 12 bytes), the transaction header
//!   (12 + 16, `xfs_trans_header`), every region behind its op header, and
//!   `xlog_commit_record`'s commit record (12): 52 bytes of its own
//!   ([`TRANS_OVERHEAD`]).
//! * *In-core log buffers.* `logbsize` 32 KiB (the default for v2 logs),
//!   each with a 512-byte record header, so 32,256 bytes of records
//!   (`ic_size`). As `xlog_state_get_iclog_space` and `xlog_write` do, an
//!   iclog with less room than two op headers is switched out before a
//!   write, a record that does not fit fills it and goes on in the next
//!   behind a continuation op header (12 bytes), and an iclog left with at
//!   most one op header's room is switched out. A switched-out iclog is
//!   written at once (`xlog_state_release_iclog` -> `xlog_sync`), here by
//!   the file system's thread at the same time: its header and bytes
//!   rounded up to 512-byte basic blocks (mkfs.xfs sets `sb_logsunit` to 1
//!   without a log stripe, so `xlog_sync` rounds to `BBSIZE`) at the log's
//!   head, which moves by those basic blocks.
//! * *When iclogs are written.* When switched out full; when an fsync
//!   forces the log; every `xfssyncd_centisecs` (`xfs_sync_worker`'s
//!   `xfs_log_force`, the active iclog if it holds anything).
//! * *fsync* (`xfs_fsync`, 2.6.3x): an inode with changes not logged
//!   (`i_update_core`: timestamps and size, which 2.6.35 changed without a
//!   transaction, at `write()` and at I/O completion) gets a synchronous
//!   transaction of its own logging the inode core (308 bytes with the
//!   records), which forces the log up to it; an inode without such
//!   changes whose last transaction is not on disk yet (pinned) forces the
//!   log up to that transaction's iclog (`_xfs_log_force_lsn`); else
//!   nothing is written. A write that allocates is a transaction logging
//!   the allocation and the inode (core and data fork); a write that does
//!   not allocate logs nothing and dirties the inode in the buffer cache.
//! * *Barriers* (`barrier`, XFS's default since 2.6.17; `fs.barrier`):
//!   `xlog_sync` writes every iclog ordered (`XFS_BUF_ORDERED`, a
//!   `WRITE_BARRIER`: a flush before it and after it), so each iclog write
//!   is a flush and the write, the fsync's flush closing the last;
//!   `nobarrier` drops every flush, the fsync's own too.
//!
//! Sources: Linux 2.6.33-2.6.35 `fs/xfs/xfs_log.c` (`xlog_write`,
//! `xlog_state_get_iclog_space`, `xlog_state_switch_iclogs`, `xlog_sync`),
//! `xfs_vnodeops.c` (`xfs_fsync`), xfsprogs `mkfs/xfs_mkfs.c`
//! (`sb_logsunit`), Documentation/filesystems/xfs.txt (`logbsize`,
//! `logbufs`, `barrier`, `delaylog`). *Approximated:* one transaction per
//! model call (Linux splits some: `xfs_remove`, then inactivation's
//! truncate, EFDs and `xfs_ifree`; delayed allocation's conversion at
//! writeback is one transaction per extent); the continuation header is
//! one per split record, not per split region; a write touching part of a
//! 4 KiB log block is a write of the whole block (the next iclog rewrites
//! it); a wrapped iclog's two writes are each a barrier write (Linux skips
//! the first's); the on-disk format stays the one above (v5: 512-byte
//! inodes, CRCs, the finobt; 2010's mkfs made v4 with 256-byte inodes and
//! logged new inode chunks' buffers instead of an icreate item); the
//! eight iclogs (`logbufs`) never all being in flight, so a committer never
//! waits for one.
//!
//! **Not modelled:** speculative EOF preallocation (`xfs_iomap_prealloc_size`;
//! without close calls its trimming at the first dirty close could not be
//! modelled, and files under 64 KiB get none), busy extents (a freed
//! extent is reusable at once), near-goal allocation by the by-block tree
//! (`xfs_alloc_ag_vextent_near`: the best fit by size is used), the AGFL as
//! a separate list, the rmap and refcount B+trees, records shifted by a
//! B+tree insert (one record chunk is logged per change), atime updates,
//! the log's tail (a log wrapping onto items not yet written back does not
//! stall: wraps are counted), unlinked-list inode updates beyond the AGI,
//! and inode-size updates at I/O completion (the size is logged at write).
//!
//! Over 1,500 lines on purpose: the allocation groups, the free-space and inode
//! B+trees, the extent maps and the log are one allocator's state that every
//! call updates together; its tests are `xfs/tests.rs`.

use super::filemap::{buffered, runs_of, NewBlocks};
use super::tree::DirTree;
use super::{FileSystem, FsCall, FsConfig, FsKind, FsStats, FsyncIo, NoSpace, BLOCK};
use crate::workload::CommitSync;
use crate::workload::IoOp;
use ssd_core::error::{invalid, ConfigError};
use ssd_core::units::{Dur, SimTime};
use std::collections::{BTreeMap, BTreeSet, VecDeque};

/// `XFS_MIN_LOG_BLOCKS`.
pub const MIN_LOG_BLOCKS: u64 = 512;
/// `XFS_MAX_LOG_BYTES`: 2 GiB less `XFS_MIN_LOG_BYTES`.
pub const MAX_LOG_BYTES: u64 = (2 << 30) - MIN_LOG_BYTES_DEFAULT;
/// `XFS_MIN_LOG_BYTES`: 10 MiB.
const MIN_LOG_BYTES_DEFAULT: u64 = 10 << 20;
/// `XFS_MIN_REALISTIC_LOG_BLOCKS`: 64 MiB.
const REALISTIC_LOG_BYTES: u64 = 64 << 20;
/// `XFS_AG_MIN_BYTES` in blocks (16 MiB).
const AG_MIN_BLOCKS: u64 = (16 << 20) / BLOCK;
/// `XFS_AG_MAX_BYTES` in blocks (1 TiB).
const AG_MAX_BLOCKS: u64 = (1 << 40) / BLOCK;
/// An AG's own blocks: headers, bnobt, cntbt, inobt and finobt roots.
const AG_FIXED: u64 = 5;
const INODES_PER_BLOCK: u64 = BLOCK / 512;
const CHUNK_BLOCKS: u64 = 8;
/// Data-fork extent records in the inode's literal area.
const INODE_EXTENTS: u64 = (512 - 176) / 16;
/// bmbt records per leaf and pointers in the inode's root.
const BMBT_LEAF: u64 = (4096 - 72) / 16;
const BMBT_ROOT_PTRS: u64 = 20;
const MAX_EXTLEN: u64 = (1 << 21) - 1;
/// The AG B+trees: by block, by size, inodes, free inodes.
const BNO: usize = 0;
const CNT: usize = 1;
const INO: usize = 2;
const FINO: usize = 3;
const TREE_NAMES: [&str; 4] = ["bnobt", "cntbt", "inobt", "finobt"];
const TREE_LEAF: [u64; 4] = [505, 505, 252, 252];
const TREE_NODE: [u64; 4] = [336, 336, 505, 505];
const TREE_REC: [u64; 4] = [8, 8, 16, 16];
const SHORT_HDR: u64 = 56;
/// Directory geometry (see the module docs).
const DIR_BLOCK_FORM: u64 = 125;
const DIR_DATA_ENTRIES: u64 = 168;
const DIR_LEAF_ENTRIES: u64 = 500;
const DIR_HDR: u64 = 64;
const DIRENT: u64 = 24;
/// Log item sizes (bytes; `xfs_log_format.h`).
const OPHDR: u64 = 12;
const INODE_LOG_FORMAT: u64 = 56;
const DINODE_CORE: u64 = 176;
const BUF_LOG_FORMAT: u64 = 24;
const BLF_CHUNK: u64 = 128;
const ICREATE_BYTES: u64 = OPHDR + 28;
/// An EFI and its EFD for one extent.
const EFI_EFD_BYTES: u64 = 2 * (OPHDR + 16 + 16);
/// Start record, transaction header, commit record.
const CHECKPOINT_OVERHEAD: u64 = OPHDR + (OPHDR + 16) + OPHDR;
/// `logbsize` and the log record header of an iclog.
const ICLOG: u64 = 32 * 1024;
const REC_HEADER: u64 = 512;
/// nodelaylog: a transaction's own records, as a checkpoint's (start
/// record, transaction header, commit record).
pub const TRANS_OVERHEAD: u64 = CHECKPOINT_OVERHEAD;
/// An iclog's data area (`ic_size`: `logbsize` less the record header).
const ICLOG_DATA: u64 = ICLOG - REC_HEADER;
/// A basic block (`BBSIZE`): the unit an iclog write is rounded to.
const BB: u64 = 512;
const BB_PER_BLOCK: u64 = BLOCK / BB;

/// mkfs.xfs's default AG count for a single device of `blocks` blocks.
pub fn default_agcount(blocks: u64) -> u64 {
    if blocks >= 4 * AG_MAX_BLOCKS {
        blocks.div_ceil(AG_MAX_BLOCKS)
    } else {
        4
    }
}

/// mkfs.xfs's default internal log size (blocks) for a file system of
/// `blocks` blocks in AGs of `agblocks` (see the module docs).
pub fn default_log_blocks(blocks: u64, agblocks: u64) -> u64 {
    let l = if blocks < (512 << 20) / BLOCK {
        MIN_LOG_BYTES_DEFAULT / BLOCK
    } else {
        (blocks / 2048).max(REALISTIC_LOG_BYTES / BLOCK)
    };
    l.min(MAX_LOG_BYTES / BLOCK)
        .min(agblocks.saturating_sub(AG_FIXED + 64))
        .max(MIN_LOG_BLOCKS)
}

/// Blocks a B+tree of `records` needs: leaves, then node levels.
fn tree_need(records: u64, leaf: u64, node: u64) -> u64 {
    let mut level = records.div_ceil(leaf).max(1);
    let mut total = level;
    while level > 1 {
        level = level.div_ceil(node);
        total += level;
    }
    total
}

/// bmbt blocks for `extents` extents (none while they fit the inode).
fn bmbt_need(extents: u64) -> u64 {
    if extents <= INODE_EXTENTS {
        return 0;
    }
    let leaves = extents.div_ceil(BMBT_LEAF);
    leaves
        + if leaves > BMBT_ROOT_PTRS {
            leaves.div_ceil(BMBT_LEAF)
        } else {
            0
        }
}

/// Directory blocks for `n` entries: (data, leaf, node and free-index).
fn dir_geometry(n: u64) -> (u64, u64, u64) {
    if n <= DIR_BLOCK_FORM {
        return (1, 0, 0);
    }
    let leaves = n.div_ceil(DIR_LEAF_ENTRIES);
    (
        n.div_ceil(DIR_DATA_ENTRIES),
        leaves,
        if leaves > 1 { 2 } else { 0 },
    )
}

fn chunk_mask(offset: u64) -> u32 {
    1u32 << (offset / BLF_CHUNK).min(31)
}

fn hash(k: u64) -> u64 {
    k.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 40
}

/// A logged item of the CIL.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Item {
    /// A buffer, by sector address (block * 8 + sector).
    Buf(u64),
    Inode(u64),
    /// An inode chunk's creation, by its first block.
    Icreate(u64),
    /// Extent-free intents and their done items, one per freed extent.
    Intent(u64),
}

/// What an item logs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Region {
    /// The inode core, and `fork` bytes of its data fork.
    Inode {
        fork: u64,
    },
    /// The dirty 128-byte chunks of a buffer.
    Buf {
        mask: u32,
    },
    Fixed(u64),
}

impl Region {
    fn bytes(self) -> u64 {
        match self {
            Region::Inode { fork } => {
                OPHDR
                    + INODE_LOG_FORMAT
                    + OPHDR
                    + DINODE_CORE
                    + if fork > 0 { OPHDR + fork } else { 0 }
            }
            Region::Buf { mask } => {
                let runs = (mask & !(mask << 1)).count_ones() as u64;
                OPHDR + BUF_LOG_FORMAT + runs * OPHDR + mask.count_ones() as u64 * BLF_CHUNK
            }
            Region::Fixed(b) => b,
        }
    }

    fn union(self, other: Region) -> Region {
        match (self, other) {
            (Region::Inode { fork: a }, Region::Inode { fork: b }) => {
                Region::Inode { fork: a.max(b) }
            }
            (Region::Buf { mask: a }, Region::Buf { mask: b }) => Region::Buf { mask: a | b },
            (_, r) => r,
        }
    }
}

#[derive(Clone, Debug)]
struct Ag {
    start: u64,
    len: u64,
    /// Free extents by block (the bnobt's records) and by size (cntbt's).
    bno: BTreeMap<u64, u64>,
    cnt: BTreeSet<(u64, u64)>,
    /// The AGF's free-block count.
    freeblks: u64,
    /// Blocks of the bnobt, cntbt, inobt and finobt (the root first).
    trees: [Vec<u64>; 4],
    /// Inode chunks: first block -> mask of free inodes.
    chunks: BTreeMap<u64, u64>,
    /// Chunks with a free inode (the finobt's records).
    free_chunks: BTreeSet<u64>,
    /// The next chunk's goal (`agi_newino`).
    newino: u64,
}

impl Ag {
    fn end(&self) -> u64 {
        self.start + self.len
    }

    fn insert_run(&mut self, s: u64, n: u64) {
        self.bno.insert(s, n);
        self.cnt.insert((n, s));
    }

    fn remove_run(&mut self, s: u64, n: u64) {
        self.bno.remove(&s);
        self.cnt.remove(&(n, s));
    }

    /// Take up to `want` blocks starting exactly at `at`, if free.
    fn take_exact(&mut self, at: u64, want: u64) -> Option<(u64, u64)> {
        let (&s, &n) = self.bno.range(..=at).next_back()?;
        if at >= s + n || want == 0 {
            return None;
        }
        let got = want.min(s + n - at);
        self.remove_run(s, n);
        if at > s {
            self.insert_run(s, at - s);
        }
        if at + got < s + n {
            self.insert_run(at + got, s + n - at - got);
        }
        self.freeblks -= got;
        Some((at, got))
    }

    /// The smallest free extent of at least `want` blocks (its start).
    fn best_fit(&self, want: u64) -> Option<u64> {
        self.cnt.range((want, 0)..).next().map(|&(_, s)| s)
    }

    fn put(&mut self, s: u64, n: u64) {
        debug_assert!(s >= self.start && s + n <= self.end());
        let (mut s, mut n) = (s, n);
        self.freeblks += n;
        if let Some((&ps, &pn)) = self.bno.range(..s).next_back() {
            debug_assert!(ps + pn <= s, "double free of {s}+{n}");
            if ps + pn == s {
                self.remove_run(ps, pn);
                s = ps;
                n += pn;
            }
        }
        if let Some(&nn) = self.bno.get(&(s + n)) {
            self.remove_run(s + n, nn);
            n += nn;
        }
        self.insert_run(s, n);
    }

    /// The first free run from `goal` (wrapping to the AG's start) holding
    /// `len` blocks aligned to `align` from the AG's start.
    fn aligned_fit(&self, goal: u64, len: u64, align: u64) -> Option<u64> {
        let fit = |s: u64, n: u64, from: u64| {
            let lo = s.max(from);
            let a = self.start + (lo - self.start).div_ceil(align) * align;
            (a + len <= s + n).then_some(a)
        };
        let first = self
            .bno
            .range(..=goal)
            .next_back()
            .map_or(goal, |(&s, _)| s);
        self.bno
            .range(first..)
            .find_map(|(&s, &n)| fit(s, n, goal))
            .or_else(|| {
                self.bno
                    .range(..first)
                    .find_map(|(&s, &n)| fit(s, n, self.start))
            })
    }

    fn records(&self, t: usize) -> u64 {
        match t {
            BNO | CNT => self.bno.len() as u64,
            INO => self.chunks.len() as u64,
            _ => self.free_chunks.len() as u64,
        }
    }
}

#[derive(Clone, Debug)]
struct File {
    exists: bool,
    size: u64,
    ino: u64,
    extents: Vec<(u64, u64)>,
    /// The file block each extent starts at, and the blocks mapped (the
    /// extent lookup by offset is a binary search, as the bmbt's).
    starts: Vec<u64>,
    nblocks: u64,
    bmbt: Vec<u64>,
    /// Blocks allocated to it that hold none of its data yet (written
    /// back since: [`FileSystem::place`]).
    new: NewBlocks,
    /// The CIL sequence the inode was last logged in.
    seq: u64,
    /// nodelaylog: the in-core log buffer holding the commit record of the
    /// last transaction that logged the inode (0: none), and whether the
    /// inode has unlogged changes (timestamps, size: `i_update_core`).
    lsn: u64,
    update_core: bool,
}

impl Default for File {
    fn default() -> Self {
        File {
            exists: false,
            size: 0,
            ino: 0,
            extents: Vec::new(),
            starts: Vec::new(),
            nblocks: 0,
            bmbt: Vec::new(),
            new: NewBlocks::default(),
            seq: u64::MAX,
            lsn: 0,
            update_core: false,
        }
    }
}

impl File {
    fn blocks(&self) -> u64 {
        self.nblocks
    }

    /// Append `[s, s + n)` to the map, merged with the last extent when
    /// contiguous.
    fn append(&mut self, s: u64, n: u64) {
        match self.extents.last_mut() {
            Some(e) if e.0 + e.1 == s && e.1 + n <= MAX_EXTLEN => e.1 += n,
            _ => {
                self.extents.push((s, n));
                self.starts.push(self.nblocks);
            }
        }
        self.nblocks += n;
    }

    /// The blocks of file blocks `[index, index + n)`, from the extent
    /// holding `index` on (the new ones left out when `new`).
    fn runs(&self, index: u64, n: u32, new: bool, out: &mut Vec<(u64, u64, u32)>) {
        let i = self
            .starts
            .partition_point(|&b| b <= index)
            .saturating_sub(1);
        let base = self.starts.get(i).map_or(0, |&b| b);
        let new = new.then_some(&self.new);
        runs_of(
            &self.extents[i.min(self.extents.len())..],
            base,
            index,
            n,
            new,
            out,
        );
    }

    /// Bytes of the data fork logged when the extents change.
    fn fork_bytes(&self) -> u64 {
        let ne = self.extents.len() as u64;
        if ne <= INODE_EXTENTS {
            ne * 16
        } else {
            4 + (self.bmbt.len() as u64).min(BMBT_ROOT_PTRS) * 16
        }
    }
}

#[derive(Clone, Debug)]
struct Dir {
    ag: usize,
    ino: u64,
    /// Data blocks, then leaf blocks, then node and free-index blocks.
    blocks: Vec<u64>,
    data: u64,
    leaves: u64,
}

/// XFS (see the module docs).
pub struct Xfs {
    /// Which of its journal or log writes are `REQ_SYNC` on the kernel profile.
    commit_sync: CommitSync,
    blocks: u64,
    agblocks: u64,
    ags: Vec<Ag>,
    /// The internal log (start, blocks) and its head.
    log: (u64, u64),
    head: u64,
    files: Vec<File>,
    /// The file set's directory tree.
    tree: DirTree,
    dirs: Vec<Dir>,
    /// mkfs's inodes (root, realtime bitmap and summary) and the root
    /// directory's block.
    mkfs_inodes: Vec<u64>,
    root_block: u64,
    cil: BTreeMap<Item, Region>,
    cil_bytes: u64,
    /// The CIL's checkpoint sequence (one more per push).
    cil_seq: u64,
    /// The items of the last checkpoint written.
    last_checkpoint: BTreeMap<Item, Region>,
    intents: u64,
    /// `delaylog` (the CIL) or not (transactions into the in-core log), and
    /// `barrier`.
    delaylog: bool,
    barrier: bool,
    /// nodelaylog: the running transaction's items (one model call).
    tx: BTreeMap<Item, Region>,
    /// nodelaylog: the active in-core log buffer (iclog): its number and
    /// the bytes after its record header; iclogs switched out and not yet
    /// written (number, bytes); the first iclog not yet on disk; the log's
    /// head in 512-byte basic blocks; when the written-out iclogs are due.
    iclog_seq: u64,
    iclog_fill: u64,
    want_sync: VecDeque<(u64, u64)>,
    synced_seq: u64,
    head_bb: u64,
    sync_due: Option<SimTime>,
    /// nodelaylog: transactions committed to the in-core log.
    transactions: u64,
    push_limit: u64,
    interval: Dur,
    last_push: SimTime,
    size_due: Option<SimTime>,
    now: SimTime,
    stats: FsStats,
}

impl Xfs {
    /// mkfs.xfs over `blocks` blocks for the file set's directory tree `tree`;
    /// an error names a bad option (agcount, log size, ...) or says the device is too small.
    pub fn new(cfg: &FsConfig, blocks: u64, tree: DirTree) -> Result<Xfs, ConfigError> {
        let files = tree.files();
        let mut agcount = cfg.agcount.unwrap_or_else(|| default_agcount(blocks));
        let agblocks = blocks.div_ceil(agcount.max(1));
        if !(AG_MIN_BLOCKS..=AG_MAX_BLOCKS).contains(&agblocks) {
            return Err(invalid(
                "fs.agcount",
                format!("AGs of {agblocks} blocks: must be 16 MiB to 1 TiB ({blocks} blocks)"),
            ));
        }
        // mkfs recomputes the count from the AG size; a last AG under the
        // minimum is left out.
        agcount = blocks.div_ceil(agblocks);
        let last = blocks - (agcount - 1) * agblocks;
        if agcount > 1 && last < AG_MIN_BLOCKS {
            agcount -= 1;
        }
        let blocks = blocks.min(agcount * agblocks);
        let mut ags = Vec::new();
        for a in 0..agcount {
            let start = a * agblocks;
            let len = agblocks.min(blocks - start);
            let mut ag = Ag {
                start,
                len,
                bno: BTreeMap::new(),
                cnt: BTreeSet::new(),
                freeblks: 0,
                trees: [
                    vec![start + 1],
                    vec![start + 2],
                    vec![start + 3],
                    vec![start + 4],
                ],
                chunks: BTreeMap::new(),
                free_chunks: BTreeSet::new(),
                newino: start + AG_FIXED,
            };
            ag.put(start + AG_FIXED, len - AG_FIXED);
            ags.push(ag);
        }
        let logblocks = cfg
            .log_size
            .map_or(default_log_blocks(blocks, agblocks), |s| s.0 / BLOCK);
        let la = ags.len() / 2;
        let ls = ags[la].start + AG_FIXED;
        if ags[la].take_exact(ls, logblocks) != Some((ls, logblocks)) {
            return Err(invalid(
                "fs.log_size",
                format!("{logblocks} blocks do not fit in an AG of {agblocks}"),
            ));
        }
        ags[la].newino = ls + logblocks;
        let interval = Dur::from_ms(cfg.xfssyncd_centisecs.unwrap_or(3000) * 10);
        let mut fs = Xfs {
            commit_sync: cfg.commit_sync(),
            blocks,
            agblocks,
            ags,
            log: (ls, logblocks),
            head: ls,
            files: vec![File::default(); files as usize],
            tree: DirTree::default(),
            dirs: Vec::new(),
            mkfs_inodes: Vec::new(),
            root_block: 0,
            cil: BTreeMap::new(),
            cil_bytes: 0,
            cil_seq: 0,
            last_checkpoint: BTreeMap::new(),
            intents: 0,
            delaylog: cfg.delaylog(),
            barrier: cfg.barrier(),
            tx: BTreeMap::new(),
            iclog_seq: 1,
            iclog_fill: 0,
            want_sync: VecDeque::new(),
            synced_seq: 1,
            head_bb: 0,
            sync_due: None,
            transactions: 0,
            push_limit: logblocks * BLOCK / 8,
            interval,
            last_push: SimTime::ZERO,
            size_due: None,
            now: SimTime::ZERO,
            stats: FsStats {
                kind: FsKind::Xfs.name().into(),
                ..FsStats::default()
            },
        };
        // mkfs: the root inode chunk, the root directory, then the file
        // set's directories (its tree made before the run), unlogged.
        let mut io = Vec::new();
        let too_small = || invalid("fs.kind", format!("{blocks} blocks is too small for xfs"));
        for _ in 0..3 {
            let ino = fs.alloc_inode(0, &mut io).ok_or_else(too_small)?;
            fs.mkfs_inodes.push(ino);
        }
        fs.root_block = fs
            .alloc_extent(0, None, 1, &mut io)
            .ok_or_else(too_small)?
            .0;
        for d in 0..tree.dirs() {
            let (data, leaves, extra) = dir_geometry(tree.entries(d).max(1));
            let ag = d % fs.ags.len();
            let ino = fs.alloc_inode(ag, &mut io).ok_or_else(|| {
                invalid("personality.files", "no room for the directories' inodes")
            })?;
            let mut blocks = Vec::new();
            let mut left = data + leaves + extra;
            while left > 0 {
                let goal = blocks.last().map(|b| b + 1);
                let (s, n) = fs
                    .alloc_extent(ag, goal, left, &mut io)
                    .ok_or_else(|| invalid("personality.files", "no room for the directories"))?;
                blocks.extend(s..s + n);
                left -= n;
            }
            fs.dirs.push(Dir {
                ag,
                ino,
                blocks,
                data,
                leaves,
            });
        }
        fs.tree = tree;
        fs.cil.clear();
        fs.tx.clear();
        fs.cil_bytes = 0;
        fs.size_due = None;
        fs.stats.metadata_dirtied = 0;
        Ok(fs)
    }

    fn ag_of(&self, block: u64) -> usize {
        ((block / self.agblocks) as usize).min(self.ags.len() - 1)
    }

    /// The first block of the chunk holding inode `ino`.
    fn chunk_of(&self, ino: u64) -> (usize, u64) {
        let b = ino / INODES_PER_BLOCK;
        let a = self.ag_of(b);
        let s = self.ags[a].start;
        (a, s + (b - s) / CHUNK_BLOCKS * CHUNK_BLOCKS)
    }

    fn cil_add(&mut self, item: Item, r: Region) {
        if !self.delaylog {
            // nodelaylog: the item joins the running transaction, with the
            // union of what this transaction dirtied in it.
            let new = self.tx.get(&item).map_or(r, |o| o.union(r));
            self.tx.insert(item, new);
            return;
        }
        let old = self.cil.get(&item).copied();
        let new = old.map_or(r, |o| o.union(r));
        self.cil_bytes = self.cil_bytes + new.bytes() - old.map_or(0, Region::bytes);
        self.cil.insert(item, new);
        if self.cil_bytes >= self.push_limit && self.size_due.is_none() {
            self.size_due = Some(self.now);
        }
    }

    /// Dirty metadata block `block` and log chunks `mask` of its buffer
    /// (sector `sector` of the block for the AG headers).
    fn buf(&mut self, block: u64, sector: u64, mask: u32, io: &mut Vec<FsCall>) {
        self.stats.metadata_dirtied += 1;
        io.push(FsCall::Meta { block });
        self.cil_add(Item::Buf(block * 8 + sector), Region::Buf { mask });
    }

    fn agf(&mut self, a: usize, io: &mut Vec<FsCall>) {
        self.buf(self.ags[a].start, 1, 1, io);
    }

    fn agi(&mut self, a: usize, io: &mut Vec<FsCall>) {
        self.buf(self.ags[a].start, 2, 1, io);
    }

    /// Log inode `ino`'s core (and `fork` bytes of its data fork).
    fn log_inode(&mut self, ino: u64, fork: u64, io: &mut Vec<FsCall>) {
        self.stats.metadata_dirtied += 1;
        io.push(FsCall::Meta {
            block: ino / INODES_PER_BLOCK,
        });
        self.cil_add(Item::Inode(ino), Region::Inode { fork });
    }

    /// A record change in B+tree `t` of AG `a`, at the fraction `num / den`
    /// of its key space: the leaf's header and the record's chunk.
    fn touch_tree(&mut self, a: usize, t: usize, num: u64, den: u64, io: &mut Vec<FsCall>) {
        let blocks = &self.ags[a].trees[t];
        let n = blocks.len() as u128;
        let x = (num as u128 * n * TREE_LEAF[t] as u128) / den.max(1) as u128;
        let leaf = ((x / TREE_LEAF[t] as u128) as usize).min(blocks.len() - 1);
        let pos = (x % TREE_LEAF[t] as u128) as u64;
        let b = blocks[leaf];
        self.buf(b, 0, 1 | chunk_mask(SHORT_HDR + pos * TREE_REC[t]), io);
    }

    /// A free extent `[s, s + n)` of AG `a` changed (taken or freed).
    fn note_space(&mut self, a: usize, s: u64, n: u64, io: &mut Vec<FsCall>) {
        self.agf(a, io);
        let (start, len) = (self.ags[a].start, self.ags[a].len);
        self.touch_tree(a, BNO, s - start, len, io);
        self.touch_tree(a, CNT, n.ilog2() as u64, len.ilog2() as u64 + 1, io);
    }

    /// Grow or shrink AG `a`'s B+trees to their records (see the docs).
    fn fix_trees(&mut self, a: usize, io: &mut Vec<FsCall>) {
        for _ in 0..64 {
            let mut changed = false;
            for t in 0..4 {
                let ag = &self.ags[a];
                let need = tree_need(ag.records(t), TREE_LEAF[t], TREE_NODE[t]) as usize;
                let have = ag.trees[t].len();
                if have < need {
                    let Some((&s, _)) = ag.bno.iter().next() else {
                        continue;
                    };
                    self.ags[a].take_exact(s, 1);
                    self.ags[a].trees[t].push(s);
                    self.note_space(a, s, 1, io);
                    self.buf(s, 0, u32::MAX, io);
                    let root = self.ags[a].trees[t][0];
                    self.buf(root, 0, 1, io);
                    self.buf(self.ags[a].start, 3, 1, io);
                    changed = true;
                } else if have > need + 1 {
                    let b = self.ags[a].trees[t].pop().expect("more than one block");
                    self.ags[a].put(b, 1);
                    self.note_space(a, b, 1, io);
                    self.cil_add(Item::Buf(b * 8), Region::Buf { mask: 0 });
                    self.buf(self.ags[a].start, 3, 1, io);
                    changed = true;
                }
            }
            if !changed {
                return;
            }
        }
    }

    /// Take `[s, s + n)` of AG `a` already removed from its free space:
    /// log the free-space change.
    fn took(&mut self, a: usize, s: u64, n: u64, io: &mut Vec<FsCall>) {
        self.note_space(a, s, n, io);
        self.fix_trees(a, io);
    }

    /// One free extent of up to `want` blocks: at `goal` exactly, else the
    /// best fit of the whole length from AG `a0` on, else the largest.
    fn alloc_extent(
        &mut self,
        a0: usize,
        goal: Option<u64>,
        want: u64,
        io: &mut Vec<FsCall>,
    ) -> Option<(u64, u64)> {
        let n = self.ags.len();
        if let Some(g) = goal.filter(|&g| g < self.blocks) {
            let a = self.ag_of(g);
            if let Some((s, got)) = self.ags[a].take_exact(g, want) {
                self.took(a, s, got, io);
                return Some((s, got));
            }
        }
        for k in 0..n {
            let a = (a0 + k) % n;
            if let Some(s) = self.ags[a].best_fit(want) {
                let r = self.ags[a].take_exact(s, want)?;
                self.took(a, r.0, r.1, io);
                return Some(r);
            }
        }
        for k in 0..n {
            let a = (a0 + k) % n;
            if let Some(&(l, s)) = self.ags[a].cnt.last() {
                let r = self.ags[a].take_exact(s, want.min(l))?;
                self.took(a, r.0, r.1, io);
                return Some(r);
            }
        }
        None
    }

    /// A new inode chunk in AG `a`, if room.
    fn new_chunk(&mut self, a: usize, io: &mut Vec<FsCall>) -> Option<u64> {
        let goal = self.ags[a].newino;
        let s = self.ags[a].aligned_fit(goal, CHUNK_BLOCKS, CHUNK_BLOCKS)?;
        self.ags[a].take_exact(s, CHUNK_BLOCKS);
        let ag = &mut self.ags[a];
        ag.chunks.insert(s, u64::MAX);
        ag.free_chunks.insert(s);
        ag.newino = s + CHUNK_BLOCKS;
        self.cil_add(Item::Icreate(s), Region::Fixed(ICREATE_BYTES));
        self.agi(a, io);
        let (start, len) = (self.ags[a].start, self.ags[a].len);
        self.touch_tree(a, INO, s - start, len, io);
        self.touch_tree(a, FINO, s - start, len, io);
        self.took(a, s, CHUNK_BLOCKS, io);
        Some(s)
    }

    /// A free inode, in AG `a0` first (`xfs_dialloc`).
    fn alloc_inode(&mut self, a0: usize, io: &mut Vec<FsCall>) -> Option<u64> {
        let n = self.ags.len();
        for k in 0..n {
            let a = (a0 + k) % n;
            let c = match self.ags[a].free_chunks.first() {
                Some(&c) => c,
                None => match self.new_chunk(a, io) {
                    Some(c) => c,
                    None => continue,
                },
            };
            let ag = &mut self.ags[a];
            let mask = ag.chunks.get_mut(&c).expect("a chunk");
            let slot = mask.trailing_zeros() as u64;
            *mask &= !(1u64 << slot);
            if *mask == 0 {
                ag.free_chunks.remove(&c);
            }
            self.agi(a, io);
            let (start, len) = (self.ags[a].start, self.ags[a].len);
            self.touch_tree(a, INO, c - start, len, io);
            self.touch_tree(a, FINO, c - start, len, io);
            self.fix_trees(a, io);
            return Some(c * INODES_PER_BLOCK + slot);
        }
        None
    }

    fn free_inode(&mut self, ino: u64, io: &mut Vec<FsCall>) {
        let (a, c) = self.chunk_of(ino);
        let slot = ino - c * INODES_PER_BLOCK;
        let ag = &mut self.ags[a];
        let mask = ag.chunks.get_mut(&c).expect("the inode's chunk");
        debug_assert!(*mask & (1 << slot) == 0, "inode {ino} freed twice");
        *mask |= 1 << slot;
        let empty = *mask == u64::MAX;
        ag.free_chunks.insert(c);
        self.agi(a, io);
        let (start, len) = (self.ags[a].start, self.ags[a].len);
        self.touch_tree(a, INO, c - start, len, io);
        self.touch_tree(a, FINO, c - start, len, io);
        if empty {
            // xfs_ifree_cluster: the chunk goes back to free space, its
            // cluster buffers (8 KiB each) are logged stale.
            let ag = &mut self.ags[a];
            ag.chunks.remove(&c);
            ag.free_chunks.remove(&c);
            ag.put(c, CHUNK_BLOCKS);
            for k in (0..CHUNK_BLOCKS).step_by(2) {
                self.cil_add(Item::Buf((c + k) * 8), Region::Buf { mask: 0 });
            }
            self.note_space(a, c, CHUNK_BLOCKS, io);
        }
        self.fix_trees(a, io);
    }

    /// A directory entry of file `f` added or removed.
    fn dir_entry(&mut self, f: u32, io: &mut Vec<FsCall>) {
        let (d, k) = self.tree.dir_of(f);
        let dir = &self.dirs[d];
        let (dino, data, leaves) = (dir.ino, dir.data, dir.leaves);
        let h = hash(k);
        let mut bufs: Vec<(u64, u32)> = Vec::new();
        if leaves == 0 {
            // Block form: the entry, the bestfree header, the hash entry
            // and the tail.
            let leaf_pos = h % DIR_BLOCK_FORM;
            let mask = 1
                | chunk_mask(DIR_HDR + k % DIR_BLOCK_FORM * DIRENT)
                | chunk_mask(BLOCK - 8 - (DIR_BLOCK_FORM - leaf_pos) * 8)
                | 1 << 31;
            bufs.push((dir.blocks[0], mask));
        } else {
            let db = ((k / DIR_DATA_ENTRIES) % data) as usize;
            bufs.push((
                dir.blocks[db],
                1 | chunk_mask(DIR_HDR + k % DIR_DATA_ENTRIES * DIRENT),
            ));
            let lb = data as usize + (h % leaves) as usize;
            bufs.push((
                dir.blocks[lb],
                1 | chunk_mask(DIR_HDR + (h / leaves) % DIR_LEAF_ENTRIES * 8),
            ));
            if dir.blocks.len() as u64 > data + leaves {
                // The free index's best-free entry.
                let fb = *dir.blocks.last().expect("a free index");
                bufs.push((fb, 1 | chunk_mask(DIR_HDR + db as u64 * 2)));
            }
        }
        for (b, m) in bufs {
            self.buf(b, 0, m, io);
        }
        self.log_inode(dino, 0, io);
    }

    /// Append `want` blocks to `f`.
    fn grow(&mut self, f: u32, want: u64, io: &mut Vec<FsCall>) -> Result<(), NoSpace> {
        if want == 0 {
            return Ok(());
        }
        let free: u64 = self.ags.iter().map(|a| a.freeblks).sum();
        if want + want / BMBT_LEAF + 16 * self.ags.len() as u64 > free {
            return Err(NoSpace);
        }
        let ino = self.files[f as usize].ino;
        let a0 = self.ag_of(ino / INODES_PER_BLOCK);
        let mut left = want;
        while left > 0 {
            let goal = self.files[f as usize].extents.last().map(|&(s, n)| s + n);
            let (s, n) = self
                .alloc_extent(a0, goal, left.min(MAX_EXTLEN), io)
                .ok_or(NoSpace)?;
            self.stats.data_blocks_allocated += n;
            left -= n;
            let file = &mut self.files[f as usize];
            file.append(s, n);
            let ne = file.extents.len() as u64;
            while (self.files[f as usize].bmbt.len() as u64) < bmbt_need(ne) {
                let (b, _) = self.alloc_extent(a0, None, 1, io).ok_or(NoSpace)?;
                self.files[f as usize].bmbt.push(b);
                self.stats.index_blocks += 1;
                self.buf(b, 0, u32::MAX, io);
            }
            if ne > INODE_EXTENTS {
                let leaf = ((ne - 1) / BMBT_LEAF) as usize;
                let b = self.files[f as usize].bmbt[leaf];
                let pos = (ne - 1) % BMBT_LEAF;
                self.buf(b, 0, 1 | chunk_mask(72 + pos * 16), io);
            }
        }
        Ok(())
    }

    /// A checkpoint: the CIL written at the log's head, as runs of
    /// (block, blocks), one per iclog; `None` if the CIL is empty.
    fn push(&mut self) -> Option<Vec<(u64, u32)>> {
        if self.cil.is_empty() {
            return None;
        }
        let blocks = checkpoint_blocks(self.cil_bytes);
        let (ls, ln) = self.log;
        let mut runs = Vec::new();
        let mut left = blocks;
        while left > 0 {
            let n = left.min(ICLOG / BLOCK).min(ls + ln - self.head);
            runs.push((self.head, n as u32));
            self.head += n;
            left -= n;
            if self.head == ls + ln {
                self.head = ls;
                self.stats.journal_wraps += 1;
            }
        }
        self.stats.journal_blocks_written += blocks;
        self.last_checkpoint = std::mem::take(&mut self.cil);
        self.cil_bytes = 0;
        self.cil_seq += 1;
        self.size_due = None;
        Some(runs)
    }

    /// Bytes in the CIL now (its logged regions and their headers).
    pub fn cil_bytes(&self) -> u64 {
        self.cil_bytes
    }

    /// The internal log's place (start, blocks) and its head.
    pub fn log_area(&self) -> ((u64, u64), u64) {
        (self.log, self.head)
    }

    /// nodelaylog: commit the running transaction (`xfs_trans_commit`):
    /// its start record, transaction header, every item's logged regions
    /// and commit record go into the in-core log (`xlog_write`). Returns the
    /// number of the iclog holding the commit record; `None` if the
    /// transaction logged nothing.
    fn commit_tx(&mut self) -> Option<u64> {
        if self.tx.is_empty() {
            return None;
        }
        let bytes = TRANS_OVERHEAD + self.tx.values().map(|r| r.bytes()).sum::<u64>();
        self.tx.clear();
        self.transactions += 1;
        Some(self.log_write(bytes))
    }

    /// Copy `len` bytes of log records into the in-core log
    /// (`xlog_state_get_iclog_space`, `xlog_write`): an iclog with less than
    /// two op headers' room is switched out first; a record that does not fit
    /// fills the iclog and goes on in the next behind a continuation op
    /// header; an iclog left with at most one op header's room is switched
    /// out. Returns the number of the iclog holding the last byte.
    fn log_write(&mut self, mut len: u64) -> u64 {
        loop {
            if ICLOG_DATA - self.iclog_fill < 2 * OPHDR {
                self.switch_iclog();
            }
            let room = ICLOG_DATA - self.iclog_fill;
            if len <= room {
                self.iclog_fill += len;
                let seq = self.iclog_seq;
                if ICLOG_DATA - self.iclog_fill <= OPHDR {
                    self.switch_iclog();
                }
                return seq;
            }
            self.iclog_fill = ICLOG_DATA;
            len = len - room + OPHDR;
            self.switch_iclog();
        }
    }

    /// Switch out the active iclog (`xlog_state_switch_iclogs`): it is
    /// written at once (by the file system's thread, or by a log force).
    fn switch_iclog(&mut self) {
        self.want_sync.push_back((self.iclog_seq, self.iclog_fill));
        self.iclog_seq += 1;
        self.iclog_fill = 0;
        if self.sync_due.is_none() {
            self.sync_due = Some(self.now);
        }
    }

    /// Write the switched-out iclogs up to number `upto` at the log's head
    /// (`xlog_sync`): each its record header and bytes rounded up to basic
    /// blocks, as the 4 KiB blocks they touch (a run per iclog, two where it
    /// wraps); the head moves by the basic blocks, so the next iclog may
    /// rewrite the last block.
    fn sync_iclogs(&mut self, upto: u64) -> Vec<(u64, u32)> {
        let (ls, ln) = self.log;
        let log_bb = ln * BB_PER_BLOCK;
        let mut runs = Vec::new();
        while let Some(&(seq, fill)) = self.want_sync.front() {
            if seq > upto {
                break;
            }
            self.want_sync.pop_front();
            self.synced_seq = seq + 1;
            let mut left = (REC_HEADER + fill).div_ceil(BB);
            while left > 0 {
                let n = left.min(log_bb - self.head_bb);
                let (b0, b1) = (
                    self.head_bb / BB_PER_BLOCK,
                    (self.head_bb + n).div_ceil(BB_PER_BLOCK),
                );
                runs.push((ls + b0, (b1 - b0) as u32));
                self.stats.journal_blocks_written += b1 - b0;
                self.head_bb += n;
                left -= n;
                if self.head_bb == log_bb {
                    self.head_bb = 0;
                    self.stats.journal_wraps += 1;
                }
            }
        }
        if self.want_sync.is_empty() {
            self.sync_due = None;
        }
        runs
    }

    /// nodelaylog fsync (`xfs_fsync`, 2.6.35): an inode with unlogged
    /// changes gets a synchronous transaction logging its core, which
    /// forces the log; else an inode whose last transaction is not on disk
    /// yet (pinned) forces the log up to that transaction's iclog
    /// (`_xfs_log_force_lsn`); else nothing is written.
    fn fsync_nodelaylog(&mut self, f: u32) -> FsyncIo {
        let file = &self.files[f as usize];
        let ino = file.ino;
        if file.update_core {
            self.cil_add(Item::Inode(ino), Region::Inode { fork: 0 });
            let lsn = self.commit_tx().expect("the inode core is logged");
            let file = &mut self.files[f as usize];
            file.lsn = lsn;
            file.update_core = false;
        } else if file.lsn < self.synced_seq {
            return FsyncIo::flush_only(self.barrier);
        }
        let lsn = self.files[f as usize].lsn;
        if lsn == self.iclog_seq {
            self.switch_iclog();
        }
        let runs = self.sync_iclogs(lsn);
        self.stats.commits_fsync += 1;
        FsyncIo {
            direct: runs,
            barrier_each: self.barrier,
            sync: self.commit_sync,
            ..FsyncIo::flush_only(self.barrier)
        }
    }

    /// nodelaylog: the file system thread's log writes: the switched-out
    /// iclogs, and every `xfssyncd_centisecs` the active one
    /// (`xfs_sync_worker`'s `xfs_log_force`); each iclog a barrier write.
    fn tick_nodelaylog(&mut self, now: SimTime, io: &mut Vec<FsCall>) {
        let timer = now >= self.last_push + self.interval;
        let due = self.sync_due.is_some_and(|t| t <= now);
        if !timer && !due {
            return;
        }
        if timer {
            self.last_push = now;
            if self.iclog_fill > 0 {
                self.switch_iclog();
            }
        }
        let runs = self.sync_iclogs(self.iclog_seq);
        if runs.is_empty() {
            return;
        }
        self.stats.commits_timer += 1;
        for (block, blocks) in runs {
            if self.barrier {
                io.push(FsCall::Flush);
            }
            io.push(FsCall::Direct {
                op: IoOp::Write,
                block,
                blocks,
                sync: self.commit_sync.commit,
            });
        }
        if self.barrier {
            io.push(FsCall::Flush);
        }
    }

    /// nodelaylog: transactions committed to the in-core log so far, the
    /// active iclog's bytes, and the log's head in basic blocks.
    pub fn in_core_log(&self) -> (u64, u64, u64) {
        (self.transactions, self.iclog_fill, self.head_bb)
    }
}

/// Log blocks a checkpoint of `cil_bytes` writes: the CIL, the checkpoint's
/// records, a record header per 32 KiB iclog, in whole 4 KiB blocks.
pub fn checkpoint_blocks(cil_bytes: u64) -> u64 {
    let payload = cil_bytes + CHECKPOINT_OVERHEAD;
    let iclogs = payload.div_ceil(ICLOG - REC_HEADER);
    (payload + iclogs * REC_HEADER).div_ceil(BLOCK)
}

impl FileSystem for Xfs {
    fn kind(&self) -> FsKind {
        FsKind::Xfs
    }
    fn blocks(&self) -> u64 {
        self.blocks
    }
    fn data_room(&self) -> u64 {
        self.ags.iter().map(|a| a.freeblks).sum()
    }
    fn own_areas(&self) -> String {
        "its log and allocation group headers and B+trees".into()
    }
    fn create(&mut self, f: u32, now: SimTime, io: &mut Vec<FsCall>) -> Result<(), NoSpace> {
        self.now = now;
        debug_assert!(!self.files[f as usize].exists);
        let (d, _) = self.tree.dir_of(f);
        let ag = self.dirs[d].ag;
        let ino = self.alloc_inode(ag, io).ok_or(NoSpace)?;
        self.log_inode(ino, 0, io);
        self.files[f as usize] = File {
            exists: true,
            ino,
            seq: self.cil_seq,
            ..File::default()
        };
        self.dir_entry(f, io);
        if let Some(lsn) = self.commit_tx() {
            self.files[f as usize].lsn = lsn;
        }
        Ok(())
    }
    fn unlink(&mut self, f: u32, now: SimTime, io: &mut Vec<FsCall>) {
        self.now = now;
        let file = std::mem::take(&mut self.files[f as usize]);
        if !file.exists {
            return;
        }
        self.dir_entry(f, io);
        // xfs_remove puts the inode on the AGI's unlinked list; inactivation
        // frees its extents (through EFIs) and then the inode.
        let (a, _) = self.chunk_of(file.ino);
        self.agi(a, io);
        for (s, n) in file
            .extents
            .iter()
            .copied()
            .chain(file.bmbt.iter().map(|&b| (b, 1)))
        {
            let ea = self.ag_of(s);
            self.ags[ea].put(s, n);
            self.intents += 1;
            self.cil_add(Item::Intent(self.intents), Region::Fixed(EFI_EFD_BYTES));
            self.note_space(ea, s, n, io);
            self.fix_trees(ea, io);
        }
        self.stats.index_blocks -= file.bmbt.len() as u64;
        self.log_inode(file.ino, 0, io);
        self.free_inode(file.ino, io);
        self.commit_tx();
    }
    fn write(
        &mut self,
        f: u32,
        off: u64,
        len: u64,
        now: SimTime,
        io: &mut Vec<FsCall>,
    ) -> Result<(), NoSpace> {
        self.now = now;
        let file = &self.files[f as usize];
        let ne = file.extents.len();
        let have = file.blocks();
        let need = (off + len).div_ceil(BLOCK).saturating_sub(have);
        // Blocks a failed allocation kept are new too.
        let grown = self.grow(f, need, io);
        let file = &mut self.files[f as usize];
        file.new.add(have, file.blocks());
        grown?;
        file.size = file.size.max(off + len);
        let fork = if file.extents.len() != ne {
            file.fork_bytes()
        } else {
            0
        };
        let ino = file.ino;
        // The bytes go to the file's pages, written back to the blocks
        // just allocated (`place`).
        buffered(IoOp::Write, off, len, io);
        if self.delaylog {
            self.log_inode(ino, fork, io);
            self.files[f as usize].seq = self.cil_seq;
            return Ok(());
        }
        // nodelaylog: an allocation is a transaction that logs the inode
        // (core and data fork); timestamps and size change unlogged
        // (`i_update_core`), the inode dirty in the buffer cache.
        if self.tx.is_empty() {
            self.stats.metadata_dirtied += 1;
            io.push(FsCall::Meta {
                block: ino / INODES_PER_BLOCK,
            });
        } else {
            self.log_inode(ino, fork, io);
            let lsn = self.commit_tx().expect("the allocation is logged");
            self.files[f as usize].lsn = lsn;
        }
        self.files[f as usize].update_core = true;
        Ok(())
    }
    fn read(&mut self, f: u32, off: u64, len: u64, _now: SimTime, io: &mut Vec<FsCall>) {
        let end = (off + len).min(self.files[f as usize].size);
        buffered(IoOp::Read, off, end.saturating_sub(off), io);
    }
    /// The blocks `write` allocated, now holding the data written back
    /// (`xfs_vm_writepages` -> `xfs_map_blocks`, which finds them mapped).
    fn place(&mut self, f: u32, index: u64, n: u32, _now: SimTime, out: &mut Vec<(u64, u64, u32)>) {
        let file = &mut self.files[f as usize];
        if !file.exists {
            return;
        }
        file.runs(index, n, false, out);
        file.new.remove(index, index + n as u64);
    }
    fn locate(&self, f: u32, index: u64, n: u32, out: &mut Vec<(u64, u64, u32)>) {
        self.files[f as usize].runs(index, n, true, out);
    }
    fn places_at_writeback(&self) -> bool {
        true
    }
    /// iomap's writeback adds a page to the ioend only if it follows it in
    /// the file as well as on the device (`iomap_can_add_to_ioend`).
    fn bios_by_block(&self) -> bool {
        false
    }
    fn fsync(&mut self, f: u32, now: SimTime) -> FsyncIo {
        self.now = now;
        if !self.delaylog {
            return self.fsync_nodelaylog(f);
        }
        // A log force up to the inode's sequence: nothing if its changes
        // are already in a written checkpoint.
        if self.files[f as usize].seq != self.cil_seq {
            return FsyncIo::default();
        }
        match self.push() {
            Some(runs) => {
                self.stats.commits_fsync += 1;
                FsyncIo {
                    sync: self.commit_sync,
                    ..FsyncIo::commit(runs, self.barrier)
                }
            }
            None => FsyncIo::flush_only(self.barrier),
        }
    }
    fn tick(&mut self, now: SimTime, io: &mut Vec<FsCall>) {
        self.now = now;
        if !self.delaylog {
            self.tick_nodelaylog(now, io);
            return;
        }
        let timer = now >= self.last_push + self.interval;
        let size = self.size_due.is_some_and(|t| t <= now);
        if !timer && !size {
            return;
        }
        if timer {
            self.last_push = now;
        }
        let Some(runs) = self.push() else {
            return;
        };
        self.stats.commits_timer += 1;
        if self.barrier {
            // The last iclog's last block after a flush (REQ_PREFLUSH | FUA).
            super::push_commit(runs, self.commit_sync, io);
        } else {
            super::push_plain(runs, self.commit_sync, io);
        }
    }
    fn next_tick(&self) -> Option<SimTime> {
        let timer = self.last_push + self.interval;
        let due = if self.delaylog {
            self.size_due
        } else {
            self.sync_due
        };
        Some(due.map_or(timer, |t| t.min(timer)))
    }
    fn size(&self, f: u32) -> u64 {
        self.files[f as usize].size
    }
    fn exists(&self, f: u32) -> bool {
        self.files[f as usize].exists
    }
    fn check(&self) -> Result<(), String> {
        let mut owned: Vec<(u64, u64, String)> = Vec::new();
        for (a, ag) in self.ags.iter().enumerate() {
            owned.push((ag.start, 1, format!("AG {a}'s headers")));
            let inside = |s: u64, n: u64| s >= ag.start && s + n <= ag.end();
            for t in 0..4 {
                let need = tree_need(ag.records(t), TREE_LEAF[t], TREE_NODE[t]) as usize;
                let have = ag.trees[t].len();
                // (A tree that could not split in a full AG is short.)
                if (have < need && ag.freeblks > 0) || have > need + 1 {
                    return Err(format!(
                        "AG {a}'s {}: {have} blocks for {} records",
                        TREE_NAMES[t],
                        ag.records(t)
                    ));
                }
                for &b in &ag.trees[t] {
                    if !inside(b, 1) {
                        return Err(format!("AG {a}'s {} block {b} outside", TREE_NAMES[t]));
                    }
                    owned.push((b, 1, format!("AG {a}'s {}", TREE_NAMES[t])));
                }
            }
            let mut sum = 0;
            let mut prev_end = None;
            for (&s, &n) in &ag.bno {
                if !inside(s, n) || n == 0 {
                    return Err(format!("AG {a}: free extent {s}+{n} outside"));
                }
                if prev_end == Some(s) {
                    return Err(format!("AG {a}: free extents not merged at {s}"));
                }
                if !ag.cnt.contains(&(n, s)) {
                    return Err(format!("AG {a}: free extent {s}+{n} not in the cntbt"));
                }
                prev_end = Some(s + n);
                sum += n;
                owned.push((s, n, "free".into()));
            }
            if ag.cnt.len() != ag.bno.len() || sum != ag.freeblks {
                return Err(format!(
                    "AG {a}: AGF counts {} free blocks, the bnobt {sum}, the cntbt {} records for {}",
                    ag.freeblks,
                    ag.cnt.len(),
                    ag.bno.len()
                ));
            }
            for (&c, &mask) in &ag.chunks {
                if !inside(c, CHUNK_BLOCKS) || (c - ag.start) % CHUNK_BLOCKS != 0 {
                    return Err(format!("AG {a}: inode chunk {c} misplaced"));
                }
                if (mask != 0) != ag.free_chunks.contains(&c) || mask == u64::MAX {
                    return Err(format!("AG {a}: chunk {c}'s finobt record is wrong"));
                }
                owned.push((c, CHUNK_BLOCKS, format!("AG {a}'s inode chunk")));
            }
            if ag.free_chunks.iter().any(|c| !ag.chunks.contains_key(c)) {
                return Err(format!("AG {a}: a finobt record without its chunk"));
            }
        }
        owned.push((self.log.0, self.log.1, "the log".into()));
        owned.push((self.root_block, 1, "the root directory".into()));
        // Inodes: every used one allocated in its chunk, once.
        let mut used = BTreeSet::new();
        let mut inodes: Vec<(u64, String)> = self
            .mkfs_inodes
            .iter()
            .map(|&i| (i, "mkfs's".to_string()))
            .collect();
        for (d, dir) in self.dirs.iter().enumerate() {
            inodes.push((dir.ino, format!("directory {d}")));
            let extra = if dir.leaves > 1 { 2 } else { 0 };
            if dir.blocks.len() as u64 != dir.data + dir.leaves + extra {
                return Err(format!("directory {d}: {} blocks", dir.blocks.len()));
            }
            for &b in &dir.blocks {
                owned.push((b, 1, format!("directory {d}")));
            }
        }
        for (i, f) in self.files.iter().enumerate() {
            if !f.exists {
                if !f.extents.is_empty() || !f.bmbt.is_empty() {
                    return Err(format!("deleted file {i} keeps blocks"));
                }
                continue;
            }
            inodes.push((f.ino, format!("file {i}")));
            let mut at = 0;
            for (k, &(_, n)) in f.extents.iter().enumerate() {
                if f.starts.get(k) != Some(&at) {
                    return Err(format!("file {i}: extent {k} mapped at the wrong offset"));
                }
                at += n;
            }
            if at != f.nblocks || f.starts.len() != f.extents.len() {
                return Err(format!(
                    "file {i}: {} blocks counted, {at} mapped",
                    f.nblocks
                ));
            }
            if f.blocks() != f.size.div_ceil(BLOCK) {
                return Err(format!(
                    "file {i}: {} bytes in {} blocks",
                    f.size,
                    f.blocks()
                ));
            }
            let want = bmbt_need(f.extents.len() as u64);
            if f.bmbt.len() as u64 != want {
                return Err(format!(
                    "file {i}: {} bmbt blocks for {} extents (want {want})",
                    f.bmbt.len(),
                    f.extents.len()
                ));
            }
            for &(s, n) in &f.extents {
                if n == 0 || n > MAX_EXTLEN {
                    return Err(format!("file {i}: an extent of {n} blocks"));
                }
                owned.push((s, n, format!("file {i}")));
            }
            for &b in &f.bmbt {
                owned.push((b, 1, format!("file {i}'s bmbt")));
            }
        }
        for (ino, who) in &inodes {
            if !used.insert(*ino) {
                return Err(format!("inode {ino} ({who}) is used twice"));
            }
            let (a, c) = self.chunk_of(*ino);
            let slot = ino - c * INODES_PER_BLOCK;
            match self.ags[a].chunks.get(&c) {
                Some(m) if m & (1 << slot) == 0 => {}
                _ => return Err(format!("inode {ino} ({who}) is not allocated")),
            }
        }
        let allocated: u64 = self
            .ags
            .iter()
            .flat_map(|ag| ag.chunks.values())
            .map(|m| m.count_zeros() as u64)
            .sum();
        if allocated != used.len() as u64 {
            return Err(format!(
                "{allocated} inodes allocated in the chunks, {} in use",
                used.len()
            ));
        }
        super::check_partition(owned, self.blocks)?;
        Ok(())
    }
    fn settle(&mut self) {
        // The aging history is checkpointed: the CIL is empty and the
        // counters start again.
        self.cil.clear();
        self.cil_bytes = 0;
        self.size_due = None;
        // nodelaylog: the in-core log is on disk, the inodes clean.
        self.tx.clear();
        self.want_sync.clear();
        self.iclog_fill = 0;
        self.iclog_seq += 1;
        self.synced_seq = self.iclog_seq;
        self.sync_due = None;
        self.transactions = 0;
        for file in &mut self.files {
            file.update_core = false;
        }
        let index_blocks = self.stats.index_blocks;
        self.stats = FsStats {
            kind: self.stats.kind.clone(),
            index_blocks,
            ..FsStats::default()
        };
    }
    fn stats(&self) -> FsStats {
        let free: u64 = self.ags.iter().map(|a| a.freeblks).sum();
        let runs: u64 = self.ags.iter().map(|a| a.bno.len() as u64).sum();
        FsStats {
            blocks: self.blocks,
            used_blocks: self.blocks - free,
            extents: self.files.iter().map(|f| f.extents.len() as u64).sum(),
            free_extents: runs,
            free_extent_mean_blocks: if runs > 0 {
                free as f64 / runs as f64
            } else {
                0.0
            },
            ..self.stats.clone()
        }
    }
}

#[cfg(test)]
mod tests;
