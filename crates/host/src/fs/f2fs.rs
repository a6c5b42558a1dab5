//! F2FS as a log-structured layout model.
//!
//! **Layout (mkfs.f2fs's defaults).** Segments of [`BLKS_PER_SEG`] blocks (2
//! MiB), one segment per section and per zone. Segment 0 holds the two
//! superblock copies (blocks 0 and 1; mkfs aligns the next area to 2 MiB); then
//! the metadata area, in whole segments: the checkpoint area (2 segments, one
//! checkpoint pack in each, used in turn), the SIT (segment information table:
//! [`SIT_ENTRY_PER_BLOCK`] 74-byte entries per block, one per segment, two
//! copies), the NAT (node address table: [`NAT_ENTRY_PER_BLOCK`] 9-byte entries
//! per block, an entry per block of the device at most, two copies) and the SSA
//! (segment summary area: one summary block per segment); then the main area of
//! segments, where every file and node block lives. Overprovisioning (mkfs
//! `-o`, `overprovision`): mkfs's `get_best_overprovision` (the ratio, from
//! 0.01 % to 10 % by 0.01, or from 10 % to 95 % by 5 below 256 main segments,
//! that leaves the most user space), its reserved segments
//! `2 * (100 / ovp + 1) + 6` (kept free for the cleaner) and overprovision
//! segments `(main - reserved) * ovp / 100 + reserved`, which the user cannot
//! fill: a write that would make the valid blocks exceed
//! `user_block_count = (main - ovp segments) * 512` fails with `NoSpace`
//! (`inc_valid_block_count`).
//!
//! **Multi-head logging.** Six active logs (`CURSEG_*`), each appending to its
//! current segment and, when that is full, taking a new free one: with
//! `no_heap` (Linux's default, `__get_next_segno`) the hot data and node logs
//! the first free segment of the main area, the warm and cold data logs the
//! next free one after their current segment (wrapping): hot data (directories'
//! dentry blocks), warm data (files' data), cold data (data moved by the
//! cleaner), hot node (direct nodes and inodes of directories), warm node
//! (direct nodes and inodes of files), cold node (indirect and double-indirect
//! nodes). Linux's `__get_segment_type_6` with no cold-file extensions.
//!
//! **Files and nodes.** A file (or directory) has an inode block, a node, with
//! [`ADDRS_PER_INODE`] data pointers inline; then 2 direct nodes of
//! [`ADDRS_PER_BLOCK`] pointers, 2 indirect nodes of [`NIDS_PER_BLOCK`] nids,
//! one double-indirect node. A node is named by its nid; where it is lives in
//! its NAT entry only, so writing a node anywhere changes its NAT entry, never
//! its parent (the wandering tree's end). Directories hold [`DENTRY_PER_BLOCK`]
//! entries per dentry block, in a fixed block per file (the file set's
//! directory tree, [`super::tree::DirTree`]; the hashed multi-level dentry is
//! not modelled); the file set's directories are made at mkfs.
//!
//! **Out-of-place updates, placed at writeback.** A `write()` reserves the
//! file's new blocks (`f2fs_reserve_block`: `NEW_ADDR` in the block's
//! dnode, which is dirtied, counted in the valid blocks by
//! `inc_valid_block_count`) and hands the bytes to the page cache as the
//! file's pages ([`FsCall::Buffered`]); a rewrite of a block already placed
//! changes nothing on disk yet. When the page cache writes pages back (the
//! flusher, an fsync, an O_SYNC write, `balance_dirty_pages`), it asks
//! [`FileSystem::place`]: each page goes to the warm data log's next block in
//! the order the cache writes them (`f2fs_write_data_pages` ->
//! `f2fs_do_write_data_page` -> `f2fs_outplace_write_data` ->
//! `f2fs_allocate_data_block`), its old block is invalidated (its segment's
//! SIT valid count drops) and its dnode dirtied (`f2fs_update_data_blkaddr`).
//! So files written in turn, or by several threads at once, reach the
//! device each in one run, in writeback order. A page rewritten while dirty
//! is placed once, at its writeback; a file deleted with dirty pages frees
//! their reservations and none is placed. Before a write, the foreground
//! cleaner makes room for every block dirty and not placed yet
//! (`f2fs_balance_fs`; the model counts the dirty data pages with the dirty
//! nodes, as it has no slack-space recycling to fall back on when the logs
//! run out at writeback). O_DIRECT writes are placed at the call
//! (`f2fs_map_blocks` with `F2FS_GET_BLOCK_DIO`). Creating or removing a
//! file rewrites its dentry block in the hot data log at once (a metadata
//! block dirtied in the buffer cache, written by the flusher:
//! [`FsCall::Meta`]; a dentry block rewritten while dirty keeps its place)
//! and dirties the directory's inode. Dirty nodes stay in the node cache:
//! they are written (direct, to their node log) by fsync and by the
//! checkpoint. Dirty NAT and SIT entries stay in memory (Linux's NAT cache
//! and dirty SIT entries) and are written only by the checkpoint, so F2FS
//! makes no buffer-cache writeback but dentry blocks.
//!
//! **fsync (roll-forward).** `f2fs_do_sync_file`: the page cache writes the
//! file's data, then the file's dirty *direct* nodes and inode are written
//! (direct writes in the warm node log), each with the fsync mark (Linux marks
//! every dnode of a non-atomic fsync, `f2fs_fsync_node_pages`), the inode last
//! and with the dentry mark if the file was created since the last checkpoint
//! (`f2fs_need_dentry_mark`: recovery re-creates its entry), then the device
//! flush (`f2fs_issue_flush`; no flush before the node writes in Linux's
//! default `fsync_mode=posix`, so no barrier). Indirect nodes are left to the
//! checkpoint (recovery does not need them). No checkpoint unless
//! `need_do_checkpoint` says so; of its reasons the model has
//! `!f2fs_space_for_roll_forward` (the valid blocks at the last checkpoint plus
//! the blocks allocated since exceed `user_block_count`); the parent directory
//! is always checkpointed (the file set's directories are made at mkfs), and no
//! hard links, renames or non-regular files are modelled. Then the fsync is a
//! checkpoint (with its barrier).
//!
//! **Checkpoint (`f2fs_write_checkpoint`).** Every `cp_interval` (60 s) when
//! anything changed, when free segments run low (before the foreground cleaner)
//! and when fsync needs one: the dirty nodes are written to their logs
//! (`block_operations`), then, as direct writes, the dirty NAT blocks and SIT
//! blocks (each into its other copy, as the NAT/SIT bitmaps flip; none when the
//! changed entries all fit the summaries' journals, [`NAT_JOURNAL_ENTRIES`] NAT
//! and [`SIT_JOURNAL_ENTRIES`] SIT entries), the SSA blocks of the segments
//! written since the last checkpoint, and the checkpoint pack in the other
//! checkpoint segment: a fixed [`CP_PACK_BLOCKS`] blocks (the checkpoint block,
//! three compacted data summary blocks with the NAT and SIT journals, the
//! closing checkpoint block), with a flush before the last block (the commit)
//! and after. Segments emptied since the last checkpoint (prefree) only become
//! free then, and a dentry block dirty in the buffer cache is taken as written
//! by then (the flusher's 30 s expiry is shorter than the interval). Files'
//! dirty data is not the checkpoint's (Linux's `block_operations` writes
//! dentry pages and nodes): a dnode it writes holds a reserved block as
//! `NEW_ADDR`, or a rewritten one at its last written place.
//!
//! **The cleaner (GC).** Background GC every `gc_sleep_time` (Linux's
//! `gc_min_sleep_time`, 30 s; the model uses one interval and runs whether or
//! not the device is idle, where Linux waits for idle), when Linux's
//! `has_enough_invalid_blocks` holds (fewer than 60 % of the user blocks valid
//! and fewer than 40 % of them in free segments past the overprovision
//! segments): one victim a pass, chosen by cost-benefit (`get_cb_cost`: the
//! most `(1 - u) * age / (1 + u)`, in percent, `u` the valid ratio, `age` the
//! segment's modification time scaled from 100 for the oldest candidate to 0
//! for the newest; the modification time is Linux's mean of its blocks' write
//! times). Foreground GC, in the writer's context, when an application write
//! would leave fewer free segments than the reserved ones plus what it and the
//! dirty nodes need (`has_not_enough_free_secs`): a checkpoint first if
//! segments are prefree, else a greedy victim (fewest valid blocks), until
//! there is room. Moving a segment reads its valid blocks (direct reads),
//! writes data blocks to the cold data log (dirtying their direct nodes) and
//! node blocks to their own node log (dirtying their NAT entries), direct
//! writes; the victim is prefree until the next checkpoint. A segment holding
//! a dentry block still dirty in the buffer cache is not a victim (a
//! checkpoint clears them when the foreground cleaner needs it); a file's
//! block whose page is dirty is moved like any other (Linux marks the cached
//! page dirty and cold instead, `move_data_page`), and its writeback then
//! places it anew. If nothing can be freed, writes
//! fail with `NoSpace`.
//!
//! **Counts.** `journal_blocks_written`: the checkpoint packs and the NAT, SIT
//! and SSA blocks the file system writes (not the node blocks);
//! `metadata_dirtied`: node blocks made dirty plus dentry blocks dirtied;
//! `commits_fsync`: fsyncs that wrote nodes for roll-forward (an fsync that
//! checkpoints counts as a checkpoint); `commits_timer`: checkpoints (of every
//! cause: the interval, low free space, fsync, mkfs's and aging's excepted as
//! the counters start after them); `cleaner_blocks_read`/`written`: the blocks
//! GC read and moved (data and nodes); `used_blocks`: the metadata area plus
//! the main area's segments not free (invalid blocks take room until cleaned);
//! `index_blocks`: node blocks other than inodes; `free_extents`: runs of free
//! segments.
//!
//! **Not modelled.** Slack space recycling (SSR) and in-place updates (IPU):
//! the logs are always appended (LFS mode), as Linux does while free segments
//! are plentiful. `heap` allocation and `alloc_mode=reuse`. The journals'
//! entries carried over from one checkpoint to the next (each checkpoint's
//! journal holds its own changes only); orphan blocks, `cp_payload`, the
//! superblock's updates. The flusher writing node pages between checkpoints;
//! inline data and inline dentries; extent cache; multi-level hashed
//! directories and the root directory; the cleaner waiting for an idle device,
//! its `gc_max_sleep_time` and `gc_no_gc_sleep_time` back-off, and victim
//! search limits. Holes (a write past the end fills the gap).

use super::tree::DirTree;
use super::{
    FileSystem, FsCall, FsConfig, FsKind, FsStats, FsyncIo, NoSpace, WriteHints, ZonedDev, BLOCK,
};
use crate::workload::CommitSync;
use crate::workload::{IoOp, Placement, WriteTag};
use ssd_core::error::{invalid, ConfigError};
use ssd_core::units::{Dur, SimTime};
use std::collections::{BTreeMap, BTreeSet};

/// Blocks per segment (`log_blocks_per_seg` 9: 2 MiB).
pub const BLKS_PER_SEG: u64 = 512;
/// SIT entries (74 bytes) per block: `4096 / 74`.
pub const SIT_ENTRY_PER_BLOCK: u64 = 55;
/// NAT entries (9 bytes) per block.
pub const NAT_ENTRY_PER_BLOCK: u64 = 455;
/// Data pointers in an inode (`DEF_ADDRS_PER_INODE`).
pub const ADDRS_PER_INODE: u64 = 923;
/// Data pointers in a direct node (`DEF_ADDRS_PER_BLOCK`).
pub const ADDRS_PER_BLOCK: u64 = 1018;
/// Nids in an indirect node (`NIDS_PER_BLOCK`).
pub const NIDS_PER_BLOCK: u64 = 1018;
/// Dentries per dentry block (`NR_DENTRY_IN_BLOCK`).
pub const DENTRY_PER_BLOCK: u64 = 214;
/// NAT and SIT entries the checkpoint's summary journals hold
/// (`NAT_JOURNAL_ENTRIES`, `SIT_JOURNAL_ENTRIES`).
pub const NAT_JOURNAL_ENTRIES: u64 = 38;
/// SIT entries the checkpoint's summary journal holds (`SIT_JOURNAL_ENTRIES`).
pub const SIT_JOURNAL_ENTRIES: u64 = 6;
/// Blocks of a checkpoint pack (simplified: see the module docs).
pub const CP_PACK_BLOCKS: u64 = 5;
/// The first nid of the model's inodes (0-2 are Linux's reserved nids and
/// 3 the root directory).
const FIRST_NID: u32 = 4;
/// No address (`NULL_ADDR`): a node not written yet.
const NULL_ADDR: u64 = u64::MAX;
/// A data block reserved, not written yet (`NEW_ADDR`): `f2fs_reserve_block`
/// at `write()` takes it from the valid block count, writeback places it.
const NEW_ADDR: u64 = u64::MAX - 1;
/// sysfs `cp_interval` and `gc_min_sleep_time` defaults.
pub const DEFAULT_CP_INTERVAL: Dur = Dur::from_ms(60_000);
/// Background GC's sleep between runs (sysfs `gc_min_sleep_time` default, 30 s).
pub const DEFAULT_GC_SLEEP: Dur = Dur::from_ms(30_000);
/// `LIMIT_INVALID_BLOCK` and `LIMIT_FREE_BLOCK`: background GC's limits.
const LIMIT_INVALID_PERCENT: u64 = 40;
const LIMIT_FREE_PERCENT: u64 = 40;

/// The six logs (`CURSEG_*`).
const HOT_DATA: usize = 0;
const WARM_DATA: usize = 1;
const COLD_DATA: usize = 2;
const HOT_NODE: usize = 3;
const WARM_NODE: usize = 4;
const COLD_NODE: usize = 5;

/// Linux's `enum rw_hint` values (include/linux/rw_hint.h).
const WRITE_LIFE_NOT_SET: usize = 0;
const WRITE_LIFE_NONE: usize = 1;
const WRITE_LIFE_SHORT: usize = 2;
const WRITE_LIFE_MEDIUM: usize = 3;
const WRITE_LIFE_LONG: usize = 4;
const WRITE_LIFE_EXTREME: usize = 5;

/// `f2fs_io_type_to_rw_hint` (segment.c): the write hint of each log's
/// bios; the metadata area's (META) is `WRITE_LIFE_NONE`.
const LOG_HINT: [usize; 6] = [
    WRITE_LIFE_SHORT,   // hot data
    WRITE_LIFE_NOT_SET, // warm data
    WRITE_LIFE_EXTREME, // cold data
    WRITE_LIFE_NONE,    // hot node
    WRITE_LIFE_MEDIUM,  // warm node
    WRITE_LIFE_LONG,    // cold node
];

/// A node of a file, by its place in the file's tree.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum NodeKind {
    Inode,
    /// The d-th direct node, in file order.
    Direct(u32),
    /// The j-th indirect node (0, 1 under the inode, the rest under the
    /// double-indirect node).
    Indirect(u32),
    Dind,
}

/// Direct nodes under the inode, and under both indirect nodes.
const DIRECT_IN_INODE: u64 = 2;
const DIRECT_UNDER_IND: u64 = DIRECT_IN_INODE + 2 * NIDS_PER_BLOCK;

impl NodeKind {
    /// The node holding file block `i`'s pointer.
    fn holder(i: u64) -> NodeKind {
        if i < ADDRS_PER_INODE {
            NodeKind::Inode
        } else {
            NodeKind::Direct(((i - ADDRS_PER_INODE) / ADDRS_PER_BLOCK) as u32)
        }
    }
    /// The node holding this one's nid (the inode's is itself).
    fn parent(self) -> NodeKind {
        match self {
            NodeKind::Inode | NodeKind::Dind => NodeKind::Inode,
            NodeKind::Direct(d) => {
                let d = d as u64;
                if d < DIRECT_IN_INODE {
                    NodeKind::Inode
                } else if d < DIRECT_UNDER_IND {
                    NodeKind::Indirect(((d - DIRECT_IN_INODE) / NIDS_PER_BLOCK) as u32)
                } else {
                    NodeKind::Indirect((2 + (d - DIRECT_UNDER_IND) / NIDS_PER_BLOCK) as u32)
                }
            }
            NodeKind::Indirect(j) if j < 2 => NodeKind::Inode,
            NodeKind::Indirect(_) => NodeKind::Dind,
        }
    }
    /// A dnode (inode or direct node), which fsync writes.
    fn is_dnode(self) -> bool {
        matches!(self, NodeKind::Inode | NodeKind::Direct(_))
    }
}

/// Direct nodes, indirect nodes and whether there is a double-indirect node
/// for a file of `n` blocks.
fn node_shape(n: u64) -> (u64, u64, bool) {
    if n <= ADDRS_PER_INODE {
        return (0, 0, false);
    }
    let d = (n - ADDRS_PER_INODE).div_ceil(ADDRS_PER_BLOCK);
    let mut ind = 0;
    if d > DIRECT_IN_INODE {
        ind += (d.min(DIRECT_UNDER_IND) - DIRECT_IN_INODE).div_ceil(NIDS_PER_BLOCK);
    }
    let dind = d > DIRECT_UNDER_IND;
    if dind {
        ind += (d - DIRECT_UNDER_IND).div_ceil(NIDS_PER_BLOCK);
    }
    (d, ind, dind)
}

/// Node blocks besides the inode for a file of `n` blocks.
fn extra_nodes(n: u64) -> u64 {
    let (d, i, dd) = node_shape(n);
    d + i + u64::from(dd)
}

/// What a valid main-area block holds (the reverse map, Linux's SSA).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Owner {
    /// A data block of inode `ino` (a file, or a directory's dentry block).
    Data {
        ino: u32,
        fblock: u32,
        version: u32,
    },
    Node {
        nid: u32,
    },
}

/// A NAT entry and the node cache's state of the node.
#[derive(Clone, Copy, Debug)]
struct Nat {
    used: bool,
    ino: u32,
    kind: NodeKind,
    addr: u64,
    dirty: bool,
    fsync_mark: bool,
    dentry_mark: bool,
}

impl Default for Nat {
    fn default() -> Self {
        Nat {
            used: false,
            ino: 0,
            kind: NodeKind::Inode,
            addr: NULL_ADDR,
            dirty: false,
            fsync_mark: false,
            dentry_mark: false,
        }
    }
}

#[derive(Clone, Debug, Default)]
struct Inode {
    exists: bool,
    size: u64,
    /// Per block: its place (or [`NEW_ADDR`]) and version.
    place: Vec<u64>,
    version: Vec<u32>,
    /// Per block: dirty in the page cache, to be placed at its writeback
    /// (a file's data; directories' dentry blocks are placed at once).
    dirty: Vec<bool>,
    nodes: BTreeMap<NodeKind, u32>,
    /// Blocks placed while dirty in the page cache (may hold stale ones).
    pend: Vec<u64>,
    /// The checkpoint count at creation (a dentry mark while unchanged).
    born_cp: u64,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
enum SegState {
    #[default]
    Free,
    /// A log's current segment.
    Cur,
    /// Written, holding valid blocks (a victim candidate).
    InUse,
    /// Emptied since the last checkpoint.
    Prefree,
    /// Zoned: emptied by a checkpoint, its zone's reset not done yet
    /// (`__queue_zone_reset_cmd`); free once it is.
    Resetting,
}

#[derive(Clone, Copy, Debug, Default)]
struct Seg {
    valid: u32,
    state: SegState,
    /// Blocks still dirty in the page cache.
    pending: u32,
    mtime: SimTime,
    /// The log that took it (its blocks' write hint and, zoned, the log
    /// whose writes wait for its zone's last one).
    log: u8,
}

#[derive(Clone, Copy, Debug, Default)]
struct Curseg {
    seg: Option<u64>,
    off: u64,
}

/// mkfs's layout: areas' first blocks and sizes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Layout {
    cp_start: u64,
    sit_start: u64,
    /// SIT blocks (one copy), and the blocks a copy's segments span.
    sit_blocks: u64,
    sit_copy_span: u64,
    nat_start: u64,
    nat_blocks: u64,
    nat_copy_span: u64,
    ssa_start: u64,
    main_start: u64,
    main_segs: u64,
}

impl Layout {
    fn new(blocks: u64) -> Layout {
        let total = blocks / BLKS_PER_SEG;
        let segs = |b: u64| b.div_ceil(BLKS_PER_SEG);
        let sit_blocks = total.div_ceil(SIT_ENTRY_PER_BLOCK).max(1);
        let nat_blocks = (total * BLKS_PER_SEG).div_ceil(NAT_ENTRY_PER_BLOCK).max(1);
        let sit_segs = segs(sit_blocks);
        let nat_segs = segs(nat_blocks);
        let ssa_segs = segs(total).max(1);
        let cp_start = BLKS_PER_SEG;
        let sit_start = cp_start + 2 * BLKS_PER_SEG;
        let nat_start = sit_start + 2 * sit_segs * BLKS_PER_SEG;
        let ssa_start = nat_start + 2 * nat_segs * BLKS_PER_SEG;
        let main_start = ssa_start + ssa_segs * BLKS_PER_SEG;
        Layout {
            cp_start,
            sit_start,
            sit_blocks,
            sit_copy_span: sit_segs * BLKS_PER_SEG,
            nat_start,
            nat_blocks,
            nat_copy_span: nat_segs * BLKS_PER_SEG,
            ssa_start,
            main_start,
            main_segs: total.saturating_sub(main_start / BLKS_PER_SEG),
        }
    }
}

/// mkfs.f2fs's `get_best_overprovision`: the ratio (percent) leaving the
/// most user space for `main` segments.
pub fn best_overprovision(main: u64) -> f64 {
    let (mut c, end, diff) = if main < 256 {
        (10.0, 95.0, 5.0)
    } else {
        (0.01, 10.0, 0.01)
    };
    let (mut best, mut best_space) = (c, 0.0f64);
    let m = main as f64;
    while c <= end + 1e-9 {
        let reserved = 2.0 * (100.0 / c + 1.0) + 6.0;
        let ovp = (m - reserved) * c / 100.0;
        let space = m - reserved - ovp;
        if space > best_space {
            best_space = space;
            best = c;
        }
        c += diff;
    }
    best
}

/// Reserved and overprovision segments for `main` segments at `ovp` %.
pub fn reserved_and_ovp(main: u64, ovp: f64) -> (u64, u64) {
    let reserved = (2.0 * (100.0 / ovp + 1.0) + 6.0) as u64;
    let ovp_segs = ((main.saturating_sub(reserved)) as f64 * ovp / 100.0) as u64 + reserved;
    (reserved, ovp_segs)
}

/// F2FS (see the module docs).
pub struct F2fs {
    /// Which of its journal or log writes are `REQ_SYNC` on the kernel profile.
    commit_sync: CommitSync,
    blocks: u64,
    lay: Layout,
    nfiles: u32,
    /// The file set's directory tree.
    tree: DirTree,
    /// Files `0..nfiles`, then the directories.
    inodes: Vec<Inode>,
    nat: Vec<Nat>,
    free_nids: BTreeSet<u32>,
    max_nid: u32,
    owner: BTreeMap<u64, Owner>,
    segs: Vec<Seg>,
    free_segs: BTreeSet<u64>,
    prefree: BTreeSet<u64>,
    /// In-use (not current) segments by (valid blocks, segment).
    by_valid: BTreeSet<(u32, u64)>,
    logs: [Curseg; 6],
    pending: BTreeSet<u64>,
    pend_files: BTreeSet<u32>,
    dirty_nodes: BTreeSet<u32>,
    /// NAT entries (nids) and SIT entries (segments) changed since the
    /// last checkpoint.
    nat_dirty: BTreeSet<u32>,
    sit_dirty: BTreeSet<u64>,
    ssa_dirty: BTreeSet<u64>,
    nat_copy: Vec<bool>,
    sit_copy: Vec<bool>,
    valid_total: u64,
    /// Data blocks reserved ([`NEW_ADDR`]), not placed yet: with
    /// `valid_total`, Linux's `valid_block_count`.
    new_blocks: u64,
    /// Files' blocks dirty in the page cache, not placed yet.
    unplaced: u64,
    valid_at_cp: u64,
    alloc_since_cp: u64,
    cp_count: u64,
    reserved: u64,
    ovp_segs: u64,
    user_blocks: u64,
    cp_interval: Dur,
    gc_sleep: Dur,
    last_cp: SimTime,
    last_gc: SimTime,
    stats: FsStats,
    /// Blocks a section spans: one segment, or a zone in zoned mode (the
    /// model's allocation and cleaning unit, Linux's section).
    sec: u64,
    /// Zoned mode (mkfs on a host-managed zoned drive).
    zoned: Option<Zoned>,
    /// Zoned: dentry blocks dirty, placed by the next checkpoint.
    dentry_dirty: BTreeSet<(u32, u64)>,
    /// Zoned: sections whose zone resets are queued, and those whose
    /// resets the file system's thread has in flight.
    to_reset: Vec<u64>,
    in_reset: Vec<u64>,
    /// Zoned: the file system's thread's work.
    work: Work,
    /// `discard` (not zoned): free segments whose discards are queued,
    /// issued by the file system's thread at its next tick.
    discard: Option<BTreeSet<u64>>,
    /// `fs.write_hints = "placement"`: the drive's placement identifiers,
    /// the `h`-th carried by a write of hint `h` ([`WriteHints`]).
    hint_pids: Option<Vec<u16>>,
}

/// Zoned mode: what mkfs read of the drive's zones.
#[derive(Clone, Copy, Debug)]
struct Zoned {
    /// The first main-area section in a sequential zone (those before are
    /// conventional zones past the metadata).
    first_seq: u64,
    /// Writable blocks of a sequential zone (its capacity).
    cap: u64,
}

/// Zoned mode: the cleaning, checkpoints and zone resets the file
/// system's thread runs, a round per commit call.
#[derive(Clone, Copy, Debug, Default)]
struct Work {
    /// A victim whose valid blocks the last round read: this one moves them.
    reading: Option<u64>,
    /// The checkpoint timer is due.
    cp_due: bool,
    /// Background cleaning is due.
    bg_gc: bool,
    /// Writers' requests for room, and how many are answered.
    asked: u64,
    done: u64,
}

fn push_run(v: &mut Vec<(u64, u32)>, b: u64) {
    match v.last_mut() {
        Some((s, n)) if *s + *n as u64 == b => *n += 1,
        _ => v.push((b, 1)),
    }
}

impl F2fs {
    /// mkfs.f2fs over `blocks` blocks for the file set's directory tree
    /// `tree`; an error if the device is too small or the NAT cannot hold
    /// the files.
    pub fn new(cfg: &FsConfig, blocks: u64, tree: DirTree) -> Result<F2fs, ConfigError> {
        let files = tree.files();
        let (lay, sec, zoned) = match cfg.zoned {
            None => (Layout::new(blocks), BLKS_PER_SEG, None),
            Some(z) => {
                let (lay, zoned) = Self::zoned_layout(&z, blocks)?;
                (lay, z.zone_blocks, Some(zoned))
            }
        };
        // Sections: segments, or zones in zoned mode.
        let main = lay.main_segs;
        let ovp = cfg
            .overprovision
            .unwrap_or_else(|| best_overprovision(main));
        let (reserved, ovp_segs) = reserved_and_ovp(main, ovp);
        if main < ovp_segs + 12 || main < reserved + 12 {
            return Err(invalid(
                "fs.kind",
                format!(
                    "{blocks} blocks is too small for f2fs ({main} main segments, {ovp_segs} overprovisioned, {reserved} reserved)"
                ),
            ));
        }
        let ndirs = tree.dirs() as u64;
        let nids = lay.nat_blocks * NAT_ENTRY_PER_BLOCK;
        if (files + ndirs) * 2 + FIRST_NID as u64 > nids || files + ndirs > u32::MAX as u64 / 2 {
            return Err(invalid(
                "personality.files",
                "more files than f2fs's NAT holds",
            ));
        }
        let mut fs = F2fs {
            commit_sync: cfg.commit_sync(),
            blocks,
            lay,
            nfiles: files as u32,
            tree: DirTree::default(),
            inodes: vec![Inode::default(); (files + ndirs) as usize],
            nat: vec![Nat::default(); FIRST_NID as usize],
            free_nids: BTreeSet::new(),
            max_nid: nids.min(u32::MAX as u64) as u32,
            owner: BTreeMap::new(),
            segs: vec![Seg::default(); main as usize],
            free_segs: (0..main).collect(),
            prefree: BTreeSet::new(),
            by_valid: BTreeSet::new(),
            logs: [Curseg::default(); 6],
            pending: BTreeSet::new(),
            pend_files: BTreeSet::new(),
            dirty_nodes: BTreeSet::new(),
            nat_dirty: BTreeSet::new(),
            sit_dirty: BTreeSet::new(),
            ssa_dirty: BTreeSet::new(),
            nat_copy: vec![false; lay.nat_blocks as usize],
            sit_copy: vec![false; lay.sit_blocks as usize],
            valid_total: 0,
            new_blocks: 0,
            unplaced: 0,
            valid_at_cp: 0,
            alloc_since_cp: 0,
            cp_count: 0,
            reserved,
            ovp_segs,
            user_blocks: (main - ovp_segs) * zoned.map_or(sec, |z| z.cap),
            cp_interval: cfg.cp_interval.unwrap_or(DEFAULT_CP_INTERVAL),
            gc_sleep: cfg.gc_sleep_time.unwrap_or(DEFAULT_GC_SLEEP),
            last_cp: SimTime::ZERO,
            last_gc: SimTime::ZERO,
            stats: FsStats::default(),
            sec,
            zoned,
            dentry_dirty: BTreeSet::new(),
            to_reset: Vec::new(),
            in_reset: Vec::new(),
            work: Work::default(),
            discard: (cfg.discard != Some(false) && zoned.is_none()).then(BTreeSet::new),
            hint_pids: match cfg.write_hints {
                Some(WriteHints::Placement) => cfg.fdp_plids.clone(),
                _ => None,
            },
        };
        // mkfs: the file set's directories and their dentry blocks.
        for d in 0..ndirs as u32 {
            let ino = fs.nfiles + d;
            let dir_blocks = Self::dir_blocks_of(&tree, d as usize);
            fs.inodes[ino as usize].exists = true;
            fs.ensure_node(ino, NodeKind::Inode)
                .ok_or_else(|| invalid("personality.files", "no nid for the directories"))?;
            for i in 0..dir_blocks {
                let b = fs
                    .alloc(
                        HOT_DATA,
                        Owner::Data {
                            ino,
                            fblock: i as u32,
                            version: 0,
                        },
                        SimTime::ZERO,
                    )
                    .ok_or_else(|| invalid("personality.files", "no room for the directories"))?;
                let node = NodeKind::holder(i);
                fs.ensure_node(ino, node)
                    .ok_or_else(|| invalid("personality.files", "no nid for the directories"))?;
                let dir = &mut fs.inodes[ino as usize];
                dir.place.push(b);
                dir.version.push(0);
                dir.dirty.push(false);
            }
            fs.inodes[ino as usize].size = dir_blocks * BLOCK;
        }
        fs.tree = tree;
        let _ = fs.checkpoint(SimTime::ZERO);
        if fs.zoned.is_some() {
            // mkfs's blocks are not written to the drive here: the logs
            // start at fresh sections, as the mount moves a log whose
            // position is not its zone's write pointer
            // (`fix_curseg_write_pointer`), so that every zone is written
            // from its start.
            for log in 0..fs.logs.len() {
                if let Some(s) = fs.logs[log].seg.take() {
                    fs.retire(s);
                }
            }
        }
        fs.stats = FsStats {
            kind: FsKind::F2fs.name().into(),
            ..FsStats::default()
        };
        Ok(fs)
    }

    /// mkfs.f2fs on a host-managed zoned drive (`f2fs_prepare_super_block`
    /// with `c.zoned_mode`): sections of a zone (`segs_per_sec` = the
    /// zone's segments), the metadata area padded to whole zones (the SSA
    /// takes the rest, as mkfs pads it) and kept in conventional zones, the
    /// main area the zones after it. The mount checks the drive's open
    /// zones against the six active logs (`init_blkz_info`).
    fn zoned_layout(z: &ZonedDev, blocks: u64) -> Result<(Layout, Zoned), ConfigError> {
        let zb = z.zone_blocks;
        if zb == 0 || !zb.is_multiple_of(BLKS_PER_SEG) || z.cap_blocks == 0 {
            return Err(invalid(
                "ftl.zone_blocks",
                format!(
                    "f2fs needs zones of whole 2 MiB segments; the drive's are {} KiB",
                    zb * BLOCK / 1024
                ),
            ));
        }
        for (field, limit) in [
            ("ftl.max_open_zones", z.max_open),
            ("ftl.max_active_zones", z.max_active),
        ] {
            if limit != 0 && limit < 6 {
                return Err(invalid(
                    field,
                    format!("f2fs writes six logs at once and needs at least 6 zones open and active; the drive allows {limit} (init_blkz_info)"),
                ));
            }
        }
        let mut lay = Layout::new(blocks.min(z.zones * zb));
        let meta_zones = lay.main_start.div_ceil(zb);
        if meta_zones > z.conventional {
            return Err(invalid(
                "ftl.conventional_zones",
                format!(
                    "f2fs keeps its metadata (superblock, checkpoints, SIT, NAT, SSA: {} blocks) in conventional zones: it needs {meta_zones} of the drive's zones of {} blocks, the drive has {} conventional",
                    lay.main_start, zb, z.conventional
                ),
            ));
        }
        lay.main_start = meta_zones * zb;
        lay.main_segs = z.zones.saturating_sub(meta_zones);
        let zoned = Zoned {
            first_seq: z.conventional - meta_zones,
            cap: z.cap_blocks.min(zb),
        };
        Ok((lay, zoned))
    }

    fn seg_start(&self, s: u64) -> u64 {
        self.lay.main_start + s * self.sec
    }
    fn seg_of(&self, b: u64) -> u64 {
        (b - self.lay.main_start) / self.sec
    }
    /// The 2 MiB segment of main-area block `b` (its SIT entry and SSA
    /// block).
    fn seg2m(&self, b: u64) -> u64 {
        (b - self.lay.main_start) / BLKS_PER_SEG
    }
    /// Blocks section `s` can hold: a sequential zone's capacity
    /// (`f2fs_usable_blks_in_seg`), else the whole section.
    fn usable(&self, s: u64) -> u64 {
        match self.zoned {
            Some(z) if s >= z.first_seq => z.cap,
            _ => self.sec,
        }
    }
    /// The fewest blocks a section holds (room is counted in these).
    fn usable_min(&self) -> u64 {
        self.zoned.map_or(self.sec, |z| z.cap.min(self.sec))
    }
    /// Push block `b` on runs of (block, blocks): a run never crosses a
    /// zone's start in zoned mode (the block layer splits a bio there,
    /// `chunk_sectors`).
    fn push_blk(&self, v: &mut Vec<(u64, u32)>, b: u64) {
        if self.zone_start(b) || self.log_starts(b) {
            v.push((b, 1));
        } else {
            push_run(v, b);
        }
    }
    /// Whether block `b` starts a section of another log than the one
    /// before it, when the logs' writes carry placement identifiers: two
    /// logs never share a bio (`f2fs_submit_page_write` builds one per
    /// log, `sbi->write_io[type][temp]`), so a run stops there.
    fn log_starts(&self, b: u64) -> bool {
        if self.hint_pids.is_none() || b <= self.lay.main_start {
            return false;
        }
        let off = b - self.lay.main_start;
        off.is_multiple_of(self.sec)
            && off / self.sec < self.lay.main_segs
            && self.segs[(off / self.sec) as usize].log
                != self.segs[(off / self.sec - 1) as usize].log
    }
    /// The log whose section holds block `b`, if `b` is in the main area.
    fn log_of(&self, b: u64) -> Option<usize> {
        let off = b.checked_sub(self.lay.main_start)?;
        let s = off / self.sec;
        (s < self.lay.main_segs).then(|| self.segs[s as usize].log as usize)
    }
    /// Whether block `b` starts a zone (zoned mode).
    fn zone_start(&self, b: u64) -> bool {
        self.zoned.is_some() && b.is_multiple_of(self.sec)
    }
    /// A section in a sequential zone (written at its write pointer,
    /// reset when emptied).
    fn sequential(&self, s: u64) -> bool {
        self.zoned.is_some_and(|z| s >= z.first_seq)
    }

    fn nid_alloc(&mut self) -> Option<u32> {
        if let Some(n) = self.free_nids.pop_first() {
            return Some(n);
        }
        let n = self.nat.len() as u32;
        if n >= self.max_nid {
            return None;
        }
        self.nat.push(Nat::default());
        Some(n)
    }

    /// Make node `nid` dirty in the node cache.
    fn dirty_node(&mut self, nid: u32) {
        let e = &mut self.nat[nid as usize];
        if !e.dirty {
            e.dirty = true;
            self.dirty_nodes.insert(nid);
            self.stats.metadata_dirtied += 1;
        }
    }

    /// Make `ino`'s node `k` exist (and its parents), dirty.
    fn ensure_node(&mut self, ino: u32, k: NodeKind) -> Option<u32> {
        if let Some(&nid) = self.inodes[ino as usize].nodes.get(&k) {
            self.dirty_node(nid);
            return Some(nid);
        }
        if k != NodeKind::Inode {
            // The parent gets the new nid: it is dirtied.
            self.ensure_node(ino, k.parent())?;
        }
        let nid = self.nid_alloc()?;
        self.nat[nid as usize] = Nat {
            used: true,
            ino,
            kind: k,
            ..Nat::default()
        };
        self.inodes[ino as usize].nodes.insert(k, nid);
        self.dirty_node(nid);
        Some(nid)
    }

    /// Dentry blocks of directory `d`: one per [`DENTRY_PER_BLOCK`]
    /// entries (files or subdirectories).
    fn dir_blocks_of(tree: &DirTree, d: usize) -> u64 {
        tree.entries(d).div_ceil(DENTRY_PER_BLOCK).max(1)
    }

    fn is_dir(&self, ino: u32) -> bool {
        ino >= self.nfiles
    }

    /// The log a node is written to.
    fn node_log(&self, nid: u32) -> usize {
        let e = &self.nat[nid as usize];
        match (e.kind.is_dnode(), self.is_dir(e.ino)) {
            (true, true) => HOT_NODE,
            (true, false) => WARM_NODE,
            (false, _) => COLD_NODE,
        }
    }

    /// The next free segment after `after` (wrapping).
    fn next_free(&self, after: Option<u64>) -> Option<u64> {
        let from = after.map_or(0, |c| c + 1);
        if let Some(z) = self.zoned {
            // `get_new_segment` with `BLKZONE_ALLOC_PRIOR_SEQ` (the
            // default): from the first sequential zone's section on, then
            // any (the conventional ones past the metadata).
            return self
                .free_segs
                .range(from.max(z.first_seq)..)
                .next()
                .or_else(|| self.free_segs.iter().next())
                .copied();
        }
        self.free_segs
            .range(from..)
            .next()
            .or_else(|| self.free_segs.iter().next())
            .copied()
    }

    /// A log's full segment leaves it.
    fn retire(&mut self, s: u64) {
        let seg = &mut self.segs[s as usize];
        debug_assert_eq!(seg.state, SegState::Cur);
        if seg.valid == 0 {
            seg.state = SegState::Prefree;
            self.prefree.insert(s);
        } else {
            seg.state = SegState::InUse;
            self.by_valid.insert((seg.valid, s));
        }
    }

    /// Append one block to `log` (taking a new segment when its is full).
    fn alloc(&mut self, log: usize, o: Owner, now: SimTime) -> Option<u64> {
        let cur = self.logs[log];
        if cur.seg.is_none_or(|s| cur.off >= self.usable(s)) {
            // `__get_next_segno` with `no_heap` (the default): hot data and
            // node logs search from the main area's start, warm and cold
            // data from after their current segment.
            let hint = if log == HOT_DATA || log >= HOT_NODE {
                None
            } else {
                cur.seg
            };
            let s = self.next_free(hint)?;
            if let Some(old) = cur.seg {
                self.retire(old);
            }
            self.free_segs.remove(&s);
            if let Some(q) = self.discard.as_mut() {
                // Taken again before its discard was issued: the discard
                // is dropped (`__punch_discard_cmd`).
                q.remove(&s);
            }
            self.segs[s as usize] = Seg {
                state: SegState::Cur,
                mtime: now,
                log: log as u8,
                ..Seg::default()
            };
            self.logs[log] = Curseg {
                seg: Some(s),
                off: 0,
            };
        }
        let c = &mut self.logs[log];
        let s = c.seg.expect("a current segment");
        let b = self.lay.main_start + s * self.sec + c.off;
        c.off += 1;
        debug_assert!(!self.owner.contains_key(&b));
        self.owner.insert(b, o);
        let seg = &mut self.segs[s as usize];
        // `update_segment_mtime`: the mean of the blocks' write times.
        let v = seg.valid as u128;
        seg.mtime = SimTime(((seg.mtime.0 as u128 * v + now.0 as u128) / (v + 1)) as u64);
        seg.valid += 1;
        let m = self.seg2m(b);
        self.sit_dirty.insert(m);
        self.ssa_dirty.insert(m);
        self.valid_total += 1;
        self.alloc_since_cp += 1;
        Some(b)
    }

    /// The block at `b` is invalidated.
    fn kill(&mut self, b: u64) {
        let o = self.owner.remove(&b);
        debug_assert!(o.is_some(), "invalidating free block {b}");
        let s = self.seg_of(b);
        self.valid_total -= 1;
        self.sit_dirty.insert(self.seg2m(b));
        let pend = self.pending.remove(&b);
        let seg = &mut self.segs[s as usize];
        if pend {
            seg.pending -= 1;
        }
        let was = seg.valid;
        seg.valid -= 1;
        if seg.state == SegState::InUse {
            self.by_valid.remove(&(was, s));
            if seg.valid == 0 {
                seg.state = SegState::Prefree;
                self.prefree.insert(s);
            } else {
                self.by_valid.insert((seg.valid, s));
            }
        }
    }

    fn set_pending(&mut self, ino: u32, b: u64) {
        if self.pending.insert(b) {
            let s = self.seg_of(b);
            self.segs[s as usize].pending += 1;
            if !self.is_dir(ino) {
                self.inodes[ino as usize].pend.push(b);
                self.pend_files.insert(ino);
            }
        }
    }

    /// The page cache wrote `ino`'s dirty data (its fsync).
    fn clear_pending_of(&mut self, ino: u32) {
        let pend = std::mem::take(&mut self.inodes[ino as usize].pend);
        self.pend_files.remove(&ino);
        for b in pend {
            if matches!(self.owner.get(&b), Some(Owner::Data { ino: i, .. }) if *i == ino)
                && self.pending.remove(&b)
            {
                let s = self.seg_of(b);
                self.segs[s as usize].pending -= 1;
            }
        }
    }

    /// Write node `nid` to its log (its old copy invalidated, its NAT entry
    /// dirtied).
    fn write_node(&mut self, nid: u32, now: SimTime, fsync: bool, dentry: bool) -> Option<u64> {
        let log = self.node_log(nid);
        let b = self.alloc(log, Owner::Node { nid }, now)?;
        let old = self.nat[nid as usize].addr;
        if old != NULL_ADDR {
            self.kill(old);
        }
        let e = &mut self.nat[nid as usize];
        e.addr = b;
        e.dirty = false;
        e.fsync_mark = fsync;
        e.dentry_mark = dentry;
        self.dirty_nodes.remove(&nid);
        self.nat_dirty.insert(nid);
        Some(b)
    }

    fn anything_dirty(&self) -> bool {
        !self.dirty_nodes.is_empty()
            || !self.nat_dirty.is_empty()
            || !self.sit_dirty.is_empty()
            || !self.ssa_dirty.is_empty()
            || !self.pending.is_empty()
            || !self.prefree.is_empty()
            || !self.dentry_dirty.is_empty()
    }

    /// `f2fs_write_checkpoint`: its direct writes, in order.
    fn checkpoint(&mut self, now: SimTime) -> Vec<(u64, u32)> {
        let mut w: Vec<(u64, u32)> = Vec::new();
        // Zoned: the dirty dentry blocks first, placed now in the hot data
        // log (`block_operations` -> `f2fs_sync_dirty_inodes(DIR_INODE)`
        // writes dentry pages out of place before the nodes).
        for (ino, blk) in std::mem::take(&mut self.dentry_dirty) {
            let dir = &self.inodes[ino as usize];
            let (old, version) = (dir.place[blk as usize], dir.version[blk as usize] + 1);
            let o = Owner::Data {
                ino,
                fblock: blk as u32,
                version,
            };
            let Some(b) = self.alloc(HOT_DATA, o, now) else {
                // No section left: the block stays where it is (its
                // changes wait for room).
                self.dentry_dirty.insert((ino, blk));
                continue;
            };
            self.kill(old);
            let dir = &mut self.inodes[ino as usize];
            dir.place[blk as usize] = b;
            dir.version[blk as usize] = version;
            self.push_blk(&mut w, b);
        }
        let nids: Vec<u32> = self.dirty_nodes.iter().copied().collect();
        for nid in nids {
            match self.write_node(nid, now, false, false) {
                Some(b) => self.push_blk(&mut w, b),
                None => break,
            }
        }
        let mut meta = 0u64;
        // The dirty entries go into the checkpoint's summary journals when
        // they all fit (`__has_cursum_space`), else into their blocks.
        let nat = std::mem::take(&mut self.nat_dirty);
        let nat_blocks: BTreeSet<u64> = if nat.len() as u64 <= NAT_JOURNAL_ENTRIES {
            BTreeSet::new()
        } else {
            nat.iter()
                .map(|&n| n as u64 / NAT_ENTRY_PER_BLOCK)
                .collect()
        };
        let sit = std::mem::take(&mut self.sit_dirty);
        let sit_blocks: BTreeSet<u64> = if sit.len() as u64 <= SIT_JOURNAL_ENTRIES {
            BTreeSet::new()
        } else {
            sit.iter().map(|&s| s / SIT_ENTRY_PER_BLOCK).collect()
        };
        for k in nat_blocks {
            let c = &mut self.nat_copy[k as usize];
            *c = !*c;
            let b = self.lay.nat_start + u64::from(*c) * self.lay.nat_copy_span + k;
            self.push_blk(&mut w, b);
            meta += 1;
        }
        for k in sit_blocks {
            let c = &mut self.sit_copy[k as usize];
            *c = !*c;
            let b = self.lay.sit_start + u64::from(*c) * self.lay.sit_copy_span + k;
            self.push_blk(&mut w, b);
            meta += 1;
        }
        for s in std::mem::take(&mut self.ssa_dirty) {
            self.push_blk(&mut w, self.lay.ssa_start + s);
            meta += 1;
        }
        let pack = self.lay.cp_start + (self.cp_count % 2) * BLKS_PER_SEG;
        for i in 0..CP_PACK_BLOCKS {
            self.push_blk(&mut w, pack + i);
        }
        meta += CP_PACK_BLOCKS;
        self.stats.journal_blocks_written += meta;
        self.stats.commits_timer += 1;
        self.cp_count += 1;
        // The page cache's dirty data is written by now.
        for b in std::mem::take(&mut self.pending) {
            let s = self.seg_of(b);
            self.segs[s as usize].pending -= 1;
        }
        for f in std::mem::take(&mut self.pend_files) {
            self.inodes[f as usize].pend.clear();
        }
        for s in std::mem::take(&mut self.prefree) {
            debug_assert_eq!(self.segs[s as usize].valid, 0);
            self.segs[s as usize] = Seg::default();
            if self.sequential(s) {
                // Its zone is reset before it is written again
                // (`f2fs_clear_prefree_segments` -> `__f2fs_issue_discard_zone`
                // queues the reset; the allocator waits for it,
                // `f2fs_wait_discard_bio`): the section is free once done.
                self.segs[s as usize].state = SegState::Resetting;
                self.to_reset.push(s);
            } else {
                self.free_segs.insert(s);
                // `f2fs_clear_prefree_segments` queues its discard.
                if let Some(q) = self.discard.as_mut() {
                    q.insert(s);
                }
            }
        }
        self.valid_at_cp = self.valid_total;
        self.alloc_since_cp = 0;
        self.last_cp = now;
        w
    }

    /// Greedy victim: the fewest valid blocks, none dirty in the cache.
    fn greedy_victim(&self) -> Option<u64> {
        self.by_valid
            .iter()
            .find(|&&(v, s)| (v as u64) < self.usable(s) && self.segs[s as usize].pending == 0)
            .map(|&(_, s)| s)
    }

    /// Cost-benefit victim (`get_cb_cost`): the most `100 * (100 - u) *
    /// age / (100 + u)`, `u` the valid blocks in percent of the segment,
    /// `age` from 100 (the oldest modification time of the candidates) to
    /// 0 (the newest), 0 for all when they are equal; ties go to fewer valid
    /// blocks, then the lower segment (Linux: the first from its last
    /// victim).
    fn cb_victim(&self) -> Option<u64> {
        let cands = || {
            self.by_valid.iter().filter(|&&(v, s)| {
                (v as u64) < self.usable(s) && self.segs[s as usize].pending == 0
            })
        };
        let (mut lo, mut hi) = (u64::MAX, 0u64);
        for &(_, s) in cands() {
            let m = self.segs[s as usize].mtime.0;
            lo = lo.min(m);
            hi = hi.max(m);
        }
        let mut best: Option<(u64, u64)> = None;
        for &(v, s) in cands() {
            let m = self.segs[s as usize].mtime.0;
            let u = v as u64 * 100 / self.usable(s);
            let age = if hi > lo {
                100 - (100 * (m - lo) as u128 / (hi - lo) as u128) as u64
            } else {
                0
            };
            let benefit = 100 * (100 - u) * age / (100 + u);
            if best.is_none_or(|(b, _)| benefit > b) {
                best = Some((benefit, s));
            }
        }
        best.map(|(_, s)| s)
    }

    /// Section `s`'s valid blocks and what they hold.
    fn live_of(&self, s: u64) -> Vec<(u64, Owner)> {
        let start = self.seg_start(s);
        self.owner
            .range(start..start + self.sec)
            .map(|(&b, &o)| (b, o))
            .collect()
    }

    /// Whether the cold data and node logs have room for `live` moved
    /// blocks.
    fn room_to_move(&self, live: u64) -> bool {
        self.free_segs.len() as u64 >= 3 + live.div_ceil(self.usable_min())
    }

    /// Move the valid block `b` holding `o` (GC): a data block to the cold
    /// data log (its dnode dirtied), a node to its node log; its new place,
    /// or None with no room.
    fn move_block(&mut self, b: u64, o: Owner, now: SimTime) -> Option<u64> {
        match o {
            Owner::Data { ino, fblock, .. } => {
                let nb = self.alloc(COLD_DATA, o, now)?;
                self.kill(b);
                self.inodes[ino as usize].place[fblock as usize] = nb;
                let holder = NodeKind::holder(fblock as u64);
                let nid = self.inodes[ino as usize].nodes[&holder];
                self.dirty_node(nid);
                Some(nb)
            }
            Owner::Node { nid } => {
                let (f, d) = {
                    let e = &self.nat[nid as usize];
                    (e.fsync_mark, e.dentry_mark)
                };
                self.write_node(nid, now, f, d)
            }
        }
    }

    /// Move segment `s`'s valid blocks (GC): direct reads, then writes.
    fn gc_segment(&mut self, s: u64, now: SimTime, io: &mut Vec<FsCall>) -> bool {
        let live = self.live_of(s);
        // Room for the moved blocks in the cold data and node logs.
        if !self.room_to_move(live.len() as u64) {
            return false;
        }
        let mut reads = Vec::new();
        let mut writes = Vec::new();
        for (b, o) in live {
            self.push_blk(&mut reads, b);
            let Some(nb) = self.move_block(b, o, now) else {
                break;
            };
            self.push_blk(&mut writes, nb);
            self.stats.cleaner_blocks_read += 1;
            self.stats.cleaner_blocks_written += 1;
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
            // Cleaning's moves, taken as plain writes (the foreground
            // cleaner's flags were not checked against gc.c).
            io.push(FsCall::Direct {
                op: IoOp::Write,
                block,
                blocks,
                sync: false,
            });
        }
        self.segs[s as usize].valid == 0
    }

    /// `has_not_enough_free_secs`: would `n` more blocks (and the dirty
    /// nodes) leave fewer free segments than the reserved ones?
    fn enough_free(&self, n: u64) -> bool {
        let need = self.reserved
            + (n + self.unplaced + self.dentry_dirty.len() as u64).div_ceil(self.usable_min())
            + (self.dirty_nodes.len() as u64 + 8).div_ceil(self.usable_min());
        self.free_segs.len() as u64 >= need
    }

    /// Foreground GC until `n` blocks fit: false if nothing can be freed.
    fn make_room(&mut self, n: u64, now: SimTime, io: &mut Vec<FsCall>) -> bool {
        let mut guard = 0u64;
        while !self.enough_free(n) {
            guard += 1;
            if guard > 2 * self.lay.main_segs + 16 {
                return false;
            }
            if !self.prefree.is_empty() {
                let w = self.checkpoint(now);
                super::push_commit(w, self.commit_sync, io);
                continue;
            }
            match self.greedy_victim() {
                Some(s) => {
                    if !self.gc_segment(s, now, io) {
                        return false;
                    }
                }
                None if !self.pending.is_empty() => {
                    let w = self.checkpoint(now);
                    super::push_commit(w, self.commit_sync, io);
                }
                None => return false,
            }
        }
        true
    }

    /// Room for `n` more blocks before an operation (`f2fs_balance_fs`):
    /// false if none can be made. Zoned, the cleaning and checkpoints run
    /// on the file system's thread, which allocates when it writes (so that
    /// every zone is written in the order its blocks were placed): the
    /// caller asks it ([`FsCall::Commit`]) and waits for it
    /// ([`FsCall::Wait`]), as a writer waits in `f2fs_balance_fs` for the
    /// foreground cleaning.
    fn room(&mut self, n: u64, now: SimTime, io: &mut Vec<FsCall>) -> bool {
        if self.zoned.is_none() {
            return self.make_room(n, now, io);
        }
        if self.enough_free(n) {
            return true;
        }
        if !self.can_reclaim() {
            return false;
        }
        self.work.asked += 1;
        io.push(FsCall::Commit);
        io.push(FsCall::Wait {
            tid: self.work.asked,
        });
        true
    }

    /// Whether cleaning or a checkpoint can free a section: one emptied
    /// or being reset, or one with an invalid block.
    fn can_reclaim(&self) -> bool {
        !self.prefree.is_empty()
            || !self.to_reset.is_empty()
            || !self.in_reset.is_empty()
            || self.work.reading.is_some()
            || self.greedy_victim().is_some()
    }

    /// Zoned: one round of the file system's thread (a commit call): the
    /// moves of the victim the last round read; else a checkpoint when
    /// the timer is due or a writer waits and sections are emptied; else,
    /// for a writer waiting, the reads of the greedy victim (for the
    /// background cleaner, of the cost-benefit one), its moves placed in
    /// the next round once they are read (`move_data_page` places at its
    /// write). The zone resets queued since go with it, after the rest.
    fn zoned_round(&mut self, now: SimTime) -> Option<FsyncIo> {
        let sync = self.commit_sync;
        let waiting = self.work.asked > self.work.done;
        let low = waiting && !self.enough_free(0);
        let mut io = if let Some(v) = self.work.reading.take() {
            let mut writes = Vec::new();
            for (b, o) in self.live_of(v) {
                let Some(nb) = self.move_block(b, o, now) else {
                    break;
                };
                self.push_blk(&mut writes, nb);
                self.stats.cleaner_blocks_written += 1;
            }
            FsyncIo {
                direct: writes,
                no_flush: true,
                sync,
                ..FsyncIo::default()
            }
        } else if (self.work.cp_due && self.anything_dirty()) || (low && !self.prefree.is_empty()) {
            self.work.cp_due = false;
            let direct = self.checkpoint(now);
            FsyncIo {
                direct,
                barrier: true,
                sync,
                ..FsyncIo::default()
            }
        } else {
            self.work.cp_due = false;
            let victim = if low {
                self.greedy_victim()
            } else if std::mem::take(&mut self.work.bg_gc) {
                self.cb_victim()
            } else {
                None
            };
            match victim {
                Some(v) if self.room_to_move(self.segs[v as usize].valid as u64) => {
                    let mut reads = Vec::new();
                    for (b, _) in self.live_of(v) {
                        self.push_blk(&mut reads, b);
                        self.stats.cleaner_blocks_read += 1;
                    }
                    self.work.reading = Some(v);
                    FsyncIo {
                        reads,
                        no_flush: true,
                        sync,
                        ..FsyncIo::default()
                    }
                }
                _ => {
                    // Nothing to clean (or no room to move it): the writers
                    // waiting go on with what there is.
                    if waiting && self.in_reset.is_empty() && self.to_reset.is_empty() {
                        self.work.done = self.work.asked;
                    }
                    FsyncIo {
                        no_flush: true,
                        ..FsyncIo::default()
                    }
                }
            }
        };
        let resets = std::mem::take(&mut self.to_reset);
        io.resets = resets.iter().map(|&s| self.seg_start(s)).collect();
        self.in_reset.extend(resets);
        if io.direct.is_empty() && io.reads.is_empty() && io.resets.is_empty() {
            return None;
        }
        Some(io)
    }

    /// Rewrite `f`'s dentry block (create, unlink): Meta, and the
    /// directory's inode dirtied.
    fn dentry_update(&mut self, f: u32, now: SimTime, io: &mut Vec<FsCall>) {
        let (d, k) = self.tree.dir_of(f);
        let blk = k / DENTRY_PER_BLOCK;
        let ino = self.nfiles + d as u32;
        if self.zoned.is_some() {
            // Zoned: the dirty dentry page is placed when it is written,
            // by the next checkpoint (a block placed now could reach its
            // zone after blocks placed after it: the flusher writes the
            // buffer cache in its own order).
            self.dentry_dirty.insert((ino, blk));
            self.stats.metadata_dirtied += 1;
            let nid = self.inodes[ino as usize].nodes[&NodeKind::holder(blk)];
            self.dirty_node(nid);
            return;
        }
        let old = self.inodes[ino as usize].place[blk as usize];
        let dir = &mut self.inodes[ino as usize];
        dir.version[blk as usize] += 1;
        let o = Owner::Data {
            ino,
            fblock: blk as u32,
            version: dir.version[blk as usize],
        };
        let b = if self.pending.contains(&old) {
            self.owner.insert(old, o);
            old
        } else if let Some(b) = self.alloc(HOT_DATA, o, now) {
            self.kill(old);
            self.inodes[ino as usize].place[blk as usize] = b;
            self.set_pending(ino, b);
            b
        } else {
            // No segment at all: rewritten in place (IPU).
            self.owner.insert(old, o);
            old
        };
        io.push(FsCall::Meta { block: b });
        self.stats.metadata_dirtied += 1;
        let nid = self.inodes[ino as usize].nodes[&NodeKind::holder(blk)];
        self.dirty_node(nid);
    }

    /// `has_enough_invalid_blocks`: background cleaning is worth it.
    fn enough_invalid(&self) -> bool {
        let invalid = self
            .user_blocks
            .saturating_sub(self.valid_total + self.new_blocks);
        let free_user =
            (self.free_segs.len() as u64).saturating_sub(self.ovp_segs) * self.usable_min();
        invalid * 100 > self.user_blocks * LIMIT_INVALID_PERCENT
            && free_user * 100 < self.user_blocks * LIMIT_FREE_PERCENT
    }

    /// `f2fs_space_for_roll_forward`.
    fn space_for_roll_forward(&self) -> bool {
        self.valid_at_cp + self.alloc_since_cp <= self.user_blocks
    }

    /// The cleaner never loses data: every block of every file and
    /// directory is where it is mapped, holding its latest version.
    pub fn check_versions(&self) -> Result<(), String> {
        for (i, f) in self.inodes.iter().enumerate() {
            for (k, (&b, &ver)) in f.place.iter().zip(&f.version).enumerate() {
                if b == NEW_ADDR {
                    continue;
                }
                let want = Owner::Data {
                    ino: i as u32,
                    fblock: k as u32,
                    version: ver,
                };
                if self.owner.get(&b) != Some(&want) {
                    return Err(format!(
                        "inode {i} block {k} (version {ver}) at {b} holds {:?}",
                        self.owner.get(&b)
                    ));
                }
            }
        }
        Ok(())
    }

    /// Free segments now.
    pub fn free_segments(&self) -> u64 {
        self.free_segs.len() as u64
    }
}

impl FileSystem for F2fs {
    fn kind(&self) -> FsKind {
        FsKind::F2fs
    }
    fn blocks(&self) -> u64 {
        self.blocks
    }
    fn data_room(&self) -> u64 {
        self.user_blocks.saturating_sub(self.valid_total)
    }
    fn own_areas(&self) -> String {
        format!(
            "its metadata area (checkpoints, SIT, NAT, SSA) and {} over-provisioned segments of which {} reserved (fs.overprovision)",
            self.ovp_segs, self.reserved
        )
    }
    fn create(&mut self, f: u32, now: SimTime, io: &mut Vec<FsCall>) -> Result<(), NoSpace> {
        debug_assert!(!self.inodes[f as usize].exists);
        if self.valid_total + self.new_blocks + 2 > self.user_blocks
            || (self.free_nids.is_empty() && self.nat.len() as u32 >= self.max_nid)
        {
            return Err(NoSpace);
        }
        if !self.room(2, now, io) {
            return Err(NoSpace);
        }
        self.inodes[f as usize] = Inode {
            exists: true,
            born_cp: self.cp_count,
            ..Inode::default()
        };
        self.ensure_node(f, NodeKind::Inode).ok_or(NoSpace)?;
        self.dentry_update(f, now, io);
        Ok(())
    }
    fn unlink(&mut self, f: u32, now: SimTime, io: &mut Vec<FsCall>) {
        if !self.inodes[f as usize].exists {
            return;
        }
        let file = std::mem::take(&mut self.inodes[f as usize]);
        self.pend_files.remove(&f);
        for &b in &file.place {
            if b == NEW_ADDR {
                self.new_blocks -= 1;
            } else {
                self.kill(b);
            }
        }
        // Its dirty pages leave the page cache unwritten.
        self.unplaced -= file.dirty.iter().filter(|&&d| d).count() as u64;
        for (_, nid) in file.nodes {
            let e = std::mem::take(&mut self.nat[nid as usize]);
            if e.addr != NULL_ADDR {
                self.kill(e.addr);
            }
            self.dirty_nodes.remove(&nid);
            self.nat_dirty.insert(nid);
            self.free_nids.insert(nid);
        }
        self.dentry_update(f, now, io);
    }
    fn write(
        &mut self,
        f: u32,
        off: u64,
        len: u64,
        now: SimTime,
        io: &mut Vec<FsCall>,
    ) -> Result<(), NoSpace> {
        if len == 0 {
            return Ok(());
        }
        let have = self.inodes[f as usize].place.len() as u64;
        let first = (off / BLOCK).min(have);
        let last = (off + len).div_ceil(BLOCK);
        let n = last.max(have);
        let new_nodes = extra_nodes(n) - extra_nodes(have);
        // `f2fs_reserve_block` -> `inc_valid_block_count` for new blocks.
        if self.valid_total + self.new_blocks + (n - have) + new_nodes > self.user_blocks {
            return Err(NoSpace);
        }
        let free_nids = self.free_nids.len() as u64 + (self.max_nid as u64 - self.nat.len() as u64);
        if free_nids < new_nodes {
            return Err(NoSpace);
        }
        // `f2fs_balance_fs` before the write: room for what is dirty and
        // will be placed at writeback (the model has no slack-space
        // recycling to fall back on when the logs run out then).
        let file = &self.inodes[f as usize];
        let newly_dirty = (first..last)
            .filter(|&i| i >= have || !file.dirty[i as usize])
            .count() as u64;
        if !self.room(newly_dirty + new_nodes, now, io) {
            return Err(NoSpace);
        }
        for i in first..last {
            let idx = i as usize;
            if i >= have {
                // A new block: reserved (`NEW_ADDR` in its dnode, which
                // is dirtied: `f2fs_reserve_block`), placed at writeback.
                let file = &mut self.inodes[f as usize];
                file.place.push(NEW_ADDR);
                file.version.push(0);
                file.dirty.push(false);
                self.new_blocks += 1;
                self.ensure_node(f, NodeKind::holder(i)).ok_or(NoSpace)?;
            }
            let file = &mut self.inodes[f as usize];
            if !file.dirty[idx] {
                file.dirty[idx] = true;
                self.unplaced += 1;
            }
        }
        let file = &mut self.inodes[f as usize];
        file.size = file.size.max(off + len);
        // i_size, i_mtime: the inode.
        let nid = file.nodes[&NodeKind::Inode];
        self.dirty_node(nid);
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
        Ok(())
    }
    fn read(&mut self, f: u32, off: u64, len: u64, _now: SimTime, io: &mut Vec<FsCall>) {
        let end = (off + len).min(self.inodes[f as usize].size);
        if off >= end {
            return;
        }
        io.push(FsCall::Buffered {
            op: IoOp::Read,
            off,
            bytes: end - off,
        });
    }
    /// Writeback of the file's dirty pages (`f2fs_write_data_pages` ->
    /// `f2fs_do_write_data_page` -> `f2fs_outplace_write_data`): each
    /// block goes to the warm data log's next block in the order the
    /// cache writes them (`f2fs_allocate_data_block`), its old place is
    /// invalidated and its dnode dirtied (`f2fs_update_data_blkaddr`).
    /// With no segment left (never, with the room `write` keeps), a block
    /// that has a place is rewritten there (in-place update).
    fn place(&mut self, f: u32, index: u64, n: u32, now: SimTime, out: &mut Vec<(u64, u64, u32)>) {
        if !self.inodes[f as usize].exists || self.is_dir(f) {
            return;
        }
        let have = self.inodes[f as usize].place.len() as u64;
        for i in index..(index + n as u64).min(have) {
            let idx = i as usize;
            let file = &mut self.inodes[f as usize];
            if std::mem::take(&mut file.dirty[idx]) {
                self.unplaced -= 1;
            }
            let old = file.place[idx];
            let version = file.version[idx] + 1;
            let o = Owner::Data {
                ino: f,
                fblock: i as u32,
                version,
            };
            let b = match self.alloc(WARM_DATA, o, now) {
                Some(b) => {
                    if old == NEW_ADDR {
                        self.new_blocks -= 1;
                    } else {
                        self.kill(old);
                    }
                    self.stats.data_blocks_allocated += 1;
                    b
                }
                None if old != NEW_ADDR => {
                    self.owner.insert(old, o);
                    old
                }
                None => {
                    debug_assert!(false, "no segment for a reserved block");
                    continue;
                }
            };
            let file = &mut self.inodes[f as usize];
            file.place[idx] = b;
            file.version[idx] = version;
            let nid = file.nodes[&NodeKind::holder(i)];
            self.dirty_node(nid);
            if self.zone_start(b) {
                out.push((i, b, 1));
            } else {
                super::push_placed(out, i, b);
            }
        }
    }
    fn locate(&self, f: u32, index: u64, n: u32, out: &mut Vec<(u64, u64, u32)>) {
        super::locate_in(&self.inodes[f as usize].place, NEW_ADDR, index, n, out);
    }
    fn places_at_writeback(&self) -> bool {
        true
    }
    /// Zoned: a round of the file system's thread (`F2fs::zoned_round`).
    fn commit_io(&mut self, now: SimTime) -> Option<FsyncIo> {
        self.zoned?;
        self.zoned_round(now)
    }
    /// Zoned: the round is on the device: the zones it reset are free
    /// sections, and the writers waiting for room go on once there is.
    fn commit_done(&mut self, _now: SimTime) {
        if self.zoned.is_none() {
            return;
        }
        for s in std::mem::take(&mut self.in_reset) {
            self.segs[s as usize].state = SegState::Free;
            self.free_segs.insert(s);
        }
        if self.work.asked > self.work.done && self.enough_free(0) {
            self.work.done = self.work.asked;
        }
    }
    fn committed(&self, tid: u64) -> bool {
        self.work.done >= tid
    }
    /// Zoned: `f2fs_force_buffered_io` ("for blkzoned device, fallback
    /// direct IO to buffered IO, so all IOs can be serialized by
    /// log-structured write").
    fn buffers_direct_writes(&self) -> bool {
        self.zoned.is_some()
    }
    fn splits_at(&self, block: u64) -> bool {
        self.zone_start(block)
    }
    /// The write's placement identifier, from its log's write hint
    /// (`f2fs_io_type_to_rw_hint`, META's for the metadata area) as
    /// `fs.write_hints` maps it; zoned, the log a write in the main area
    /// goes through and whether it holds its zone's last block
    /// (`is_end_zone_blkaddr`: the block before the zone *size*'s end, so
    /// a zone whose capacity is smaller never ends one), for the wait
    /// `f2fs_submit_page_write` makes on it (`zone_pending_bio`).
    fn write_tag(&self, block: u64, blocks: u32) -> WriteTag {
        let log = self.log_of(block);
        let placement = match &self.hint_pids {
            Some(pids) => {
                let hint = log.map_or(WRITE_LIFE_NONE, |l| LOG_HINT[l]);
                pids.get(hint)
                    .map_or(Placement::NONE, |&p| Placement::pid(p))
            }
            None => Placement::NONE,
        };
        let zone_log = match (self.zoned, log) {
            (Some(_), Some(l)) => {
                let last = block + blocks.max(1) as u64 - 1;
                let off = last - self.lay.main_start;
                let ends = self.sequential(off / self.sec) && off % self.sec == self.sec - 1;
                Some((l as u8, ends))
            }
            _ => None,
        };
        WriteTag {
            placement,
            zone_log,
        }
    }
    fn work_pending(&self) -> bool {
        self.zoned.is_some()
            && (self.work.reading.is_some()
                || self.work.cp_due
                || self.work.bg_gc
                || self.work.asked > self.work.done
                || !self.to_reset.is_empty())
    }
    fn fsync(&mut self, f: u32, now: SimTime) -> FsyncIo {
        if !self.inodes[f as usize].exists {
            return FsyncIo::default();
        }
        self.clear_pending_of(f);
        if !self.space_for_roll_forward() {
            // `need_do_checkpoint`: the fsync is a checkpoint.
            let direct = self.checkpoint(now);
            return FsyncIo {
                direct,
                barrier: true,
                sync: self.commit_sync,
                ..FsyncIo::default()
            };
        }
        let nodes: Vec<(NodeKind, u32)> = self.inodes[f as usize]
            .nodes
            .iter()
            .filter(|(k, nid)| k.is_dnode() && self.nat[**nid as usize].dirty)
            .map(|(&k, &nid)| (k, nid))
            .collect();
        if nodes.is_empty() {
            return FsyncIo::default();
        }
        // Direct nodes first, the inode last (with the dentry mark).
        let mut order: Vec<u32> = nodes
            .iter()
            .filter(|(k, _)| *k != NodeKind::Inode)
            .map(|&(_, nid)| nid)
            .collect();
        order.extend(
            nodes
                .iter()
                .filter(|(k, _)| *k == NodeKind::Inode)
                .map(|&(_, nid)| nid),
        );
        let dentry = self.inodes[f as usize].born_cp == self.cp_count;
        let mut direct = Vec::new();
        let n = order.len();
        for (i, nid) in order.into_iter().enumerate() {
            let last = i + 1 == n;
            let is_inode = self.nat[nid as usize].kind == NodeKind::Inode;
            match self.write_node(nid, now, true, last && is_inode && dentry) {
                Some(b) => self.push_blk(&mut direct, b),
                None => {
                    // No segment for the node: a checkpoint instead (it
                    // writes what it can).
                    let mut w = direct;
                    w.extend(self.checkpoint(now));
                    return FsyncIo {
                        direct: w,
                        barrier: true,
                        sync: self.commit_sync,
                        ..FsyncIo::default()
                    };
                }
            }
        }
        self.stats.commits_fsync += 1;
        FsyncIo {
            direct,
            barrier: false,
            sync: self.commit_sync,
            ..FsyncIo::default()
        }
    }
    fn tick(&mut self, now: SimTime, io: &mut Vec<FsCall>) {
        if self.zoned.is_some() {
            // Zoned: the thread's rounds do the work (`zoned_round`).
            if now >= self.last_gc + self.gc_sleep {
                self.last_gc = now;
                self.work.bg_gc |= self.enough_invalid();
            }
            if now >= self.last_cp + self.cp_interval {
                self.last_cp = now;
                self.work.cp_due |= self.anything_dirty();
            }
            if self.work_pending() {
                io.push(FsCall::Commit);
            }
            return;
        }
        if now >= self.last_gc + self.gc_sleep {
            self.last_gc = now;
            if self.enough_invalid() {
                if let Some(s) = self.cb_victim() {
                    self.gc_segment(s, now, io);
                }
            }
        }
        if now >= self.last_cp + self.cp_interval {
            if self.anything_dirty() {
                let w = self.checkpoint(now);
                super::push_commit(w, self.commit_sync, io);
            } else {
                self.last_cp = now;
            }
        }
        // The discard thread (`issue_discard_thread`) sends the queued
        // discards of whole free segments, contiguous ones as one.
        let queued = self
            .discard
            .as_mut()
            .map(std::mem::take)
            .unwrap_or_default();
        let mut runs: Vec<(u64, u64)> = Vec::new();
        for s in queued {
            match runs.last_mut() {
                Some((a, n)) if *a + *n == s => *n += 1,
                _ => runs.push((s, 1)),
            }
        }
        for (s, n) in runs {
            io.push(FsCall::Direct {
                op: IoOp::Trim,
                block: self.seg_start(s),
                blocks: (n * self.sec) as u32,
                sync: false,
            });
        }
    }
    fn next_tick(&self) -> Option<SimTime> {
        Some((self.last_cp + self.cp_interval).min(self.last_gc + self.gc_sleep))
    }
    fn settle(&mut self) {
        // The aging history is checkpointed (its calls dropped) and the
        // counters start again.
        let _ = self.checkpoint(SimTime::ZERO);
        // Its discards were sent then (the drive's state is
        // `sim.precondition`'s).
        if let Some(q) = self.discard.as_mut() {
            q.clear();
        }
        self.last_cp = SimTime::ZERO;
        self.stats = FsStats {
            kind: FsKind::F2fs.name().into(),
            ..FsStats::default()
        };
    }
    fn size(&self, f: u32) -> u64 {
        self.inodes[f as usize].size
    }
    fn exists(&self, f: u32) -> bool {
        self.inodes[f as usize].exists
    }
    fn check(&self) -> Result<(), String> {
        let mut reach = 0u64;
        let mut nids_used = 0u64;
        let (mut news, mut dirty) = (0u64, 0u64);
        for (i, f) in self.inodes.iter().enumerate() {
            let ino = i as u32;
            if !f.exists {
                if !f.place.is_empty() || !f.nodes.is_empty() {
                    return Err(format!("deleted inode {i} keeps blocks or nodes"));
                }
                continue;
            }
            let n = f.place.len() as u64;
            if n != f.size.div_ceil(BLOCK)
                || f.version.len() as u64 != n
                || f.dirty.len() as u64 != n
            {
                return Err(format!("inode {i}: {} bytes in {n} blocks", f.size));
            }
            if self.is_dir(ino) && f.dirty.iter().any(|&d| d) {
                return Err(format!("directory {i} has blocks left to place"));
            }
            news += f.place.iter().filter(|&&b| b == NEW_ADDR).count() as u64;
            dirty += f.dirty.iter().filter(|&&d| d).count() as u64;
            if self.is_dir(ino)
                && n != Self::dir_blocks_of(&self.tree, (ino - self.nfiles) as usize)
            {
                return Err(format!("directory {i}: {n} dentry blocks"));
            }
            for (k, &b) in f.place.iter().enumerate() {
                if b == NEW_ADDR {
                    if !f.dirty[k] {
                        return Err(format!("inode {i} block {k}: reserved, not dirty"));
                    }
                    continue;
                }
                match self.owner.get(&b) {
                    Some(Owner::Data { ino: o, fblock, .. })
                        if *o == ino && *fblock as usize == k => {}
                    o => return Err(format!("inode {i} block {k} at {b} is {o:?}")),
                }
                reach += 1;
            }
            // The node tree: exactly the nodes `n` blocks need.
            let (d, ind, dind) = node_shape(n);
            let mut want: BTreeSet<NodeKind> = BTreeSet::new();
            want.insert(NodeKind::Inode);
            want.extend((0..d).map(|x| NodeKind::Direct(x as u32)));
            want.extend((0..ind).map(|x| NodeKind::Indirect(x as u32)));
            if dind {
                want.insert(NodeKind::Dind);
            }
            let have: BTreeSet<NodeKind> = f.nodes.keys().copied().collect();
            if have != want {
                return Err(format!("inode {i}: nodes {have:?} for {n} blocks"));
            }
            for (&k, &nid) in &f.nodes {
                let e = self.nat.get(nid as usize).ok_or("nid past the NAT")?;
                if !e.used || e.ino != ino || e.kind != k {
                    return Err(format!("inode {i} node {k:?}: NAT entry {nid} is {e:?}"));
                }
                nids_used += 1;
                if e.addr == NULL_ADDR {
                    if !e.dirty {
                        return Err(format!("node {nid} never written and not dirty"));
                    }
                } else {
                    if self.owner.get(&e.addr) != Some(&Owner::Node { nid }) {
                        return Err(format!(
                            "node {nid} at {} is {:?}",
                            e.addr,
                            self.owner.get(&e.addr)
                        ));
                    }
                    reach += 1;
                }
                if e.dirty != self.dirty_nodes.contains(&nid) {
                    return Err(format!("node {nid}'s dirty state"));
                }
            }
        }
        if news != self.new_blocks || dirty != self.unplaced {
            return Err(format!(
                "{news} reserved and {dirty} dirty blocks, counted {} and {}",
                self.new_blocks, self.unplaced
            ));
        }
        let used = self.nat.iter().filter(|e| e.used).count() as u64;
        if used != nids_used {
            return Err(format!("{used} NAT entries in use, {nids_used} reachable"));
        }
        if reach != self.owner.len() as u64 || reach != self.valid_total {
            return Err(format!(
                "{} valid blocks ({} counted), {reach} reachable",
                self.owner.len(),
                self.valid_total
            ));
        }
        if let Some((&b, _)) = self.owner.iter().next() {
            if b < self.lay.main_start {
                return Err(format!("block {b} in the metadata area"));
            }
        }
        let cur: BTreeSet<u64> = self.logs.iter().filter_map(|c| c.seg).collect();
        if cur.len() != self.logs.iter().filter(|c| c.seg.is_some()).count() {
            return Err("two logs share a segment".into());
        }
        for s in 0..self.lay.main_segs {
            let seg = &self.segs[s as usize];
            let start = self.seg_start(s);
            let n = self.owner.range(start..start + self.sec).count() as u32;
            if n != seg.valid {
                return Err(format!(
                    "segment {s}: {n} valid blocks, SIT says {}",
                    seg.valid
                ));
            }
            let p = self.pending.range(start..start + self.sec).count() as u32;
            if p != seg.pending {
                return Err(format!(
                    "segment {s}: {p} pending blocks, {} counted",
                    seg.pending
                ));
            }
            let ok = match seg.state {
                SegState::Free => self.free_segs.contains(&s) && n == 0,
                SegState::Prefree => self.prefree.contains(&s) && n == 0,
                SegState::Resetting => {
                    (self.to_reset.contains(&s) || self.in_reset.contains(&s)) && n == 0
                }
                SegState::Cur => cur.contains(&s),
                SegState::InUse => n > 0 && self.by_valid.contains(&(n, s)),
            };
            if !ok || (seg.state != SegState::Free) == self.free_segs.contains(&s) {
                return Err(format!("segment {s}: state {:?} with {n} valid", seg.state));
            }
        }
        if self.by_valid.len()
            != self
                .segs
                .iter()
                .filter(|s| s.state == SegState::InUse)
                .count()
        {
            return Err("the victim index holds segments not in use".into());
        }
        if !self.pending.iter().all(|b| self.owner.contains_key(b)) {
            return Err("a pending block is not valid".into());
        }
        Ok(())
    }
    fn stats(&self) -> FsStats {
        let main_used = self.lay.main_segs - self.free_segs.len() as u64;
        let index = self
            .nat
            .iter()
            .filter(|e| e.used && e.kind != NodeKind::Inode)
            .count() as u64;
        let mut free_runs = 0u64;
        let mut prev: Option<u64> = None;
        for &s in &self.free_segs {
            if prev.is_none_or(|p| p + 1 != s) {
                free_runs += 1;
            }
            prev = Some(s);
        }
        let free_blocks = self.free_segs.len() as u64 * self.sec;
        FsStats {
            blocks: self.blocks,
            used_blocks: self.lay.main_start + main_used * self.sec,
            extents: self.inodes[..self.nfiles as usize]
                .iter()
                .map(|f| {
                    let placed: Vec<u64> =
                        f.place.iter().copied().filter(|&b| b != NEW_ADDR).collect();
                    runs(&placed).len() as u64
                })
                .sum(),
            index_blocks: index,
            free_extents: free_runs,
            free_extent_mean_blocks: if free_runs > 0 {
                free_blocks as f64 / free_runs as f64
            } else {
                0.0
            },
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
