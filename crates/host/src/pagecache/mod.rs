//! The Linux page cache and writeback between an application and the block
//! layer, in simulated time (`[page_cache]`; buffered I/O, `direct = false`).
//!
//! An application workload (the fio-style generator or a personality) is a
//! closed-loop source of application calls; each of its streams is one
//! application thread making synchronous calls (`read`, `write`, `fsync`,
//! `BLKDISCARD`). A buffered fio job is one thread whatever its `iodepth`, as
//! in Linux, where `io_submit` of buffered I/O returns only after the copy.
//! The cache turns the calls into block requests the way Linux's mm/ does,
//! and hands them to the engine's block layer as a reactive source
//! ([`Timing::Reactive`]), with their submitter as the request's stream:
//!
//! * **Pages** of 4 KiB, kept in one LRU list. A page is up to date, dirty,
//!   under writeback (both, when redirtied during its writeback) or locked
//!   (being read). Reclaim evicts the least recently used clean idle page and
//!   rotates dirty, writeback and locked pages to the head, as
//!   `shrink_page_list` does; a thread that finds nothing to evict waits for
//!   the next completion.
//! * **Reads** copy from the cache on the host's cores (`cpu.copy_mbps`,
//!   [`crate::cpu`]); a miss is read from the device with Linux's on-demand
//!   readahead (mm/readahead.c,
//!   `ondemand_readahead`): the initial window is `get_init_ra_size` of the
//!   request, a sequential stream ramps it by `get_next_ra_size` up to
//!   `read_ahead_kb`, a hit on the `PG_readahead` page starts the next window
//!   asynchronously, and a small random read reads just its pages; a
//!   missing page the window left out is read alone
//!   (`filemap_create_folio`). The state is the open file's, as Linux
//!   keeps it in the `struct file` (`file->f_ra`): a thread keeps one per
//!   file descriptor it reads through ([`CallExtras::fd`]), and a new open
//!   of the descriptor ([`CallExtras::open`]) starts a fresh one
//!   (`file_ra_state_init` in `do_dentry_open`: no window, no previous
//!   read). That is the whole of Linux's rule a source can ask for: the
//!   descriptor says which `struct file`, the open's number when it was
//!   replaced; a thread reading two files in turn keeps a window for each.
//!   The window runs in the pages' keys: a file's page indices (below),
//!   the block device's pages for a block-level workload (one open file,
//!   descriptor 0).
//! * **Writes** copy into the cache and dirty its pages (a partial page not
//!   in the cache is read first). Then the kernel profile's
//!   `balance_dirty_pages` ([`crate::dirty`]), which starts the flusher
//!   above the background threshold: on current kernels a writer past the
//!   free-run ceiling is paused at a rate paced to the device's estimated
//!   write bandwidth ([`IoLess`]); on 2.6.35 a writer over its limit writes
//!   back up to a chunk of pages itself and pauses a jiffy, doubling
//!   ([`Bdp`]). The pauses are reported as throttling. Thresholds follow
//!   `dirty_background_ratio`/`dirty_ratio` of the cache size (Linux's
//!   "available memory"), or `dirty_background_bytes`/`dirty_bytes`; a
//!   background threshold at or above the dirty threshold is halved, as
//!   `domain_dirty_limits` does.
//! * **The flusher** (one per device, its own stream: CFQ and BFQ give it an
//!   async queue of its own) writes back in background mode while dirty
//!   pages exceed the background threshold, and every
//!   `dirty_writeback_centisecs` (kupdate) writes the inode whose dirty data
//!   is older than `dirty_expire_centisecs`. It writes an inode in chunks of
//!   `MAX_WRITEBACK_PAGES` (1,024 pages) from a cyclic cursor (the mapping's
//!   `writeback_index`), skipping pages already under writeback, as
//!   contiguous runs split at `sched.max_request` (max_sectors_kb), all
//!   submitted in one instant (one plug). Like any submitter it sleeps when
//!   `nr_requests` are taken.
//! * **fsync** (a workload's Flush, fio's `fsync=N` and `end_fsync`) writes
//!   the inode's dirty pages from the calling thread, waits for them and for
//!   every page already under writeback (a page redirtied while under
//!   writeback is written again after it), then issues a cache flush to the
//!   device and waits for it. **O_SYNC** writes (`sync`) do the same for the
//!   pages they wrote. A discard drops the range's pages (waiting for their
//!   I/O) and sends the trim.
//! * **Unlink** (a file's last reference going, [`CallExtras::unlink`]):
//!   every page of the file leaves the cache, as `evict` ->
//!   `truncate_inode_pages_final` does: a dirty page is cancelled without
//!   being written (`folio_cancel_dirty`, `folio_account_cleaned`: the dirty
//!   count the flusher and `balance_dirty_pages` go by drops), a page under
//!   writeback or being read is waited for first (`folio_wait_writeback`,
//!   the folio lock, in `truncate_inode_pages_range`). It comes after the
//!   calls on the file that came before it. The cache knows a file's pages
//!   as Linux's `address_space` does: each page carries its file, and each
//!   file keeps the list of its pages in the cache.
//!
//! * **File pages.** A page's key is its device page (the block device's,
//!   metadata and a file system's own blocks), but for a file on a file
//!   system ([`AppSource::place`]: every model, F2FS and NILFS2 placing
//!   data at writeback or log construction, the others giving the blocks
//!   their write allocated): there it is the
//!   file's page ([`file_page`]: the inode and the page's index, as Linux
//!   keys a page by its `address_space` and index). Writing such pages back,
//!   the cache asks the file system where each run of them goes now
//!   ([`AppSource::place`]) and sends a request per placed run; reading
//!   them, where they are ([`AppSource::locate`]; a hole, or a block
//!   allocated and not written back yet, is zero-filled without I/O), a
//!   request per contiguous run of blocks, as `mpage_readahead` and
//!   `iomap_readahead` build a bio per run; readahead of them stops at the file's end
//!   ([`AppSource::file_pages`], as `page_cache_ra_unbounded` stops at
//!   `i_size`), and a file's first page starts a readahead window
//!   (`ondemand_readahead`'s `index == 0`). The flusher skips a file whose
//!   data its file system writes only in its own constructions
//!   ([`AppSource::background_writeback`]: NILFS2's `nilfs_writepages`
//!   ignores `WB_SYNC_NONE`); its pages stay dirty until then.
//!
//! A block-level workload writes one file: the block device, whose inode is
//! the device (fsync writes back every dirty page, as `blkdev_fsync` does).
//! What is dirty when the application's last call returns stays in the cache
//! (`dirty_at_end_bytes`): the run ends there, unless `end_fsync` writes it.
//!
//! The state machine is one struct, [`PageCache`], whose private state its
//! child modules share (Rust's privacy lets a child module see its parent's
//! private fields): `stages` holds each stage of an application thread's
//! call, `pages` the LRU and the dirty lists, `io` the block requests and
//! readahead, `fsync` the file systems' own I/O and unlink, `writeback` the
//! flusher and `balance_dirty_pages`, `report` the report's sections and
//! `config` the `[page_cache]` section.

use crate::cpu::{Cores, CpuConfig, Syscalls, Work};
use crate::dirty::{Balance, Bdp, Decision, IoLess, Pace};
use crate::fs::Kernel;
use crate::idset::IdSet;
use crate::workload::{
    AppSource, CallExtras, FsyncIo, HostEvent, HostRequest, HostRun, IoOp, RequestSource,
    SourceError, Timing,
};
use serde::{Deserialize, Serialize};
use ssd_core::error::{invalid, ConfigError};
use ssd_core::hash::FastMap;
use ssd_core::stats::{LatencyHist, LatencySummary};
use ssd_core::units::{Dur, SimTime, Size};
use std::collections::{BTreeMap, BTreeSet, VecDeque};

mod config;
mod fsync;
mod io;
mod pages;
mod report;
mod stages;
mod tenants;
mod writeback;

/// The cache's page size (x86's).
pub const PAGE: u64 = 4096;
const SPP: u64 = PAGE / 512;
/// Pages the flusher writes of one inode per pass (Linux's
/// `MAX_WRITEBACK_PAGES`, the floor of `writeback_chunk_size`).
pub const MAX_WRITEBACK_PAGES: usize = 1024;
/// The flusher's stream (process) id.
pub const FLUSHER_STREAM: u32 = u32::MAX;
/// The inode of a file system's metadata (inode tables, directories,
/// bitmaps): a write call on it dirties its pages without a copy and is not
/// an application call (`page_cache.metadata_pages`).
pub const METADATA_INO: u32 = u32::MAX - 1;
/// A file system's own I/O (a journal commit, a log write, the cleaner): a
/// read, write or flush call on it is submitted at once, bypassing the
/// cache, and waited for by the calling thread; not an application call.
pub const FS_INO: u32 = u32::MAX - 2;
const NONE: u32 = u32::MAX;

/// Whether `ino`, as an application numbers it, is a file's (not the
/// block device's, 0, nor the metadata's or the file system's own I/O's):
/// a file's pages are kept in its list, which its unlink drops.
pub fn is_file(ino: u32) -> bool {
    ino != 0 && ino != METADATA_INO && ino != FS_INO
}

/// The mark of a file page: the cache's key of a page of a file whose
/// file system places data at writeback ([`AppSource::place`]) is the file
/// and the page's index in it, as Linux keys a page by its `address_space`
/// and index, not a device page. Device pages stay below it.
pub const FILE_SPACE: u64 = 1 << 59;
/// Inode numbers a file page can carry (27 bits).
pub const FILE_PAGE_MAX_INO: u32 = (1 << 27) - 1;

/// The cache's key of page `index` of file `ino` ([`FILE_SPACE`]); `ino`
/// at most [`FILE_PAGE_MAX_INO`], `index` below 2^32 (16 TiB files).
pub fn file_page(ino: u32, index: u64) -> u64 {
    debug_assert!(ino <= FILE_PAGE_MAX_INO && index < 1 << 32);
    FILE_SPACE | (ino as u64) << 32 | index
}

/// The file and index of a file page, or `None` for a device page.
pub fn file_of(lpn: u64) -> Option<(u32, u64)> {
    (lpn & FILE_SPACE != 0).then_some((((lpn >> 32) as u32) & FILE_PAGE_MAX_INO, lpn & 0xffff_ffff))
}

const UPTODATE: u8 = 1;
const DIRTY: u8 = 2;
const WRITEBACK: u8 = 4;
const LOCKED: u8 = 8;
/// `PG_readahead`: a hit here starts the next readahead window.
const RA_MARK: u8 = 16;

pub use config::{MemoryPlan, PageCacheConfig};
use stages::Next;
use tenants::{AppStats, Tenant};
pub use tenants::{TenantSpec, TenantView};

/// How the application calls: fio's `sync`, `fsync` and `end_fsync`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AppIo {
    /// O_SYNC writes.
    pub sync: bool,
    /// fsync after every this many writes of a thread (0: never).
    pub fsync: u64,
    /// fsync when a thread's last call is done.
    pub end_fsync: bool,
}

#[derive(Clone, Copy, Debug)]
struct Page {
    lpn: u64,
    /// The file (inode) the page belongs to.
    ino: u32,
    flags: u8,
    /// The I/O in flight on the page (its tag), NONE if idle.
    io: u32,
    /// The LRU list's neighbours.
    prev: u32,
    next: u32,
    /// The neighbours in its file's list of pages ([`Inode::first`]).
    fprev: u32,
    fnext: u32,
}

/// A file's pages and dirty state: its pages in the cache (the mapping's
/// `i_pages`: what an unlink drops), its dirty pages, when it was dirtied
/// (from clean), and where its next writeback starts (the mapping's
/// `writeback_index`). The block device's and the metadata's pages are in
/// no list ([`is_file`]).
#[derive(Debug)]
struct Inode {
    /// The first of the file's pages in the cache (NONE: none), a list
    /// through the pages' `fprev`/`fnext`: joining and leaving it cost no
    /// search, on every page brought in or evicted.
    first: u32,
    dirty: BTreeSet<u64>,
    dirtied_when: SimTime,
    cursor: u64,
}

impl Default for Inode {
    fn default() -> Inode {
        Inode {
            first: NONE,
            dirty: BTreeSet::new(),
            dirtied_when: SimTime::ZERO,
            cursor: 0,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum IoKind {
    Read,
    Write,
    Flush,
    Trim,
    /// A zone command (append or management), submitted at once.
    Zone(IoOp),
}

/// A write request of file pages being built ([`PageCache::write_runs`]):
/// device pages from `dev`, holding the cache's pages `[lpn, lpn + n)`
/// and then the runs `more`.
#[derive(Debug)]
struct Bio {
    dev: u64,
    pages: u32,
    lpn: u64,
    n: u32,
    more: Vec<(u64, u32)>,
}

/// A file system's log whose next write waits for the bio that fills a
/// zone: F2FS on a zoned drive keeps, per log (`sbi->write_io[type][temp]`,
/// data and node), the bio holding a zone's last block
/// (`io->zone_pending_bio`) and makes the log's next write wait for its
/// completion (`f2fs_submit_page_write`, Linux 6.8-6.12: "f2fs: maintain
/// six open zones for zoned devices"), so that a log has one zone open at
/// a time. Linux's submitter sleeps there holding the log's lock, so
/// every writer of the log waits; here the log's writes wait in order,
/// and the flusher starts no pass while writes of its are held (it has
/// placed no more pages meanwhile, as Linux's, asleep in the log, has
/// not); a thread waiting for its writes waits for them all the same.
#[derive(Debug, Default)]
struct ZoneLog {
    /// The write filling the log's zone, on the device.
    pending: Option<u32>,
    /// The log's writes held since (submitter, request, whether it fills
    /// its zone), in submission order.
    held: VecDeque<(u32, HostRequest, bool)>,
}

#[derive(Debug)]
struct Io {
    kind: IoKind,
    ino: u32,
    lpn: u64,
    n: u32,
    /// The request's other runs of pages (a file system's bio of file
    /// pages that are not contiguous in the file but are on the device).
    more: Vec<(u64, u32)>,
    submitter: u32,
    waiters: Vec<u32>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Stage {
    Idle,
    ReadStart,
    ReadCopy,
    WriteStart,
    WriteDirty,
    WriteCopied,
    /// `balance_dirty_pages` ([`crate::dirty`]): checks, pauses, and on
    /// 2.6.35 writes back.
    Balance,
    /// The write is done with the dirty limits.
    WriteBalanced,
    SyncStart,
    SyncWait,
    /// An O_DIRECT call ([`CallExtras::direct`]): the range's cached dirty
    /// pages are written back and waited for, then the request is sent.
    DioStart,
    DioSubmit,
    /// An fsync waits for the journal commit of its transaction
    /// ([`FsyncIo::wait`](crate::fs::FsyncIo::wait)).
    CommitWait,
    /// The file system's thread writes a journal commit
    /// ([`CallExtras::commit`]): its steps, then the commit is done.
    CommitRun,
    /// A file system's direct call ([`FS_INO`]): submitted, then done.
    DirectStart,
    DirectDone,
    TrimStart,
    TrimDrop,
    /// A file's unlink ([`CallExtras::unlink`]): its pages leave the cache,
    /// then those that had I/O in flight once it is done.
    Unlink,
    UnlinkWait,
    Complete,
    Done,
}

/// Linux's `struct file_ra_state`, one per open file (`file->f_ra`):
/// a thread keeps one per file descriptor it reads through
/// ([`CallExtras::fd`]), fresh at each open of it.
#[derive(Clone, Copy, Debug, Default)]
struct Ra {
    start: u64,
    size: u64,
    async_size: u64,
    /// Last page read + 1 (`prev_pos`), 0 for none.
    prev: u64,
}

#[derive(Debug)]
struct Thread {
    stream: u32,
    /// The tenant whose application the thread runs.
    tenant: u32,
    queue: VecDeque<HostRequest>,
    /// Per queued request, whether more pieces of its call follow
    /// ([`AppSource::more_follow`]), what else its call asks
    /// ([`AppSource::call_extras`]) and its place in the order the calls
    /// came.
    more: VecDeque<(bool, CallExtras, u64)>,
    /// The current request's place in the order the calls came.
    seq: u64,
    /// The current call is an O_DSYNC write.
    dsync: bool,
    /// The current request is a piece of a call more pieces follow, and
    /// when the call began.
    in_call: bool,
    call_started: SimTime,
    op: Option<HostRequest>,
    /// The call is an fsync the thread makes on its own (fio's fsync=N or
    /// end_fsync), after `op`.
    own_fsync: bool,
    stage: Stage,
    waits: u32,
    until: SimTime,
    started: SimTime,
    throttled_since: SimTime,
    /// The thread's `balance_dirty_pages`; its pacing on a current
    /// kernel; on 2.6.35 its share of the pages newly dirtied
    /// (`task->dirties`: events, period).
    bal: Balance,
    pace: Pace,
    dirties: (u64, u64),
    /// fsync / O_SYNC: pages to write again once their writeback ends;
    /// an unlink: pages to drop once their I/O ends.
    deferred: Vec<u64>,
    /// The readahead state of each file descriptor the thread reads
    /// through: (fd, which open of it, its state), the last read's first
    /// ([`Thread::use_file`]).
    ras: Vec<(u32, u64, Ra)>,
    writes: u64,
    ended: bool,
    /// The file of the current (or last) call: the inode an fsync of the
    /// thread's own writes back.
    ino: u32,
    /// fsync: the file system was asked what it writes after the data, and
    /// the steps of that left to do.
    fs_asked: bool,
    fs_steps: VecDeque<FsStep>,
    /// The journal transaction an fsync waits for (0: none).
    commit_wait: u64,
    /// The thread's call is only a wait for the file system's thread
    /// ([`CallExtras::await_commit`]).
    await_only: bool,
    /// The file system asked for no device flush after the fsync
    /// ([`FsyncIo::no_flush`](crate::fs::FsyncIo::no_flush)).
    fs_no_flush: bool,
}

/// A step of what a file system writes in an fsync after the file's data
/// ([`AppSource::fsync_io`]), each waited for before the next.
#[derive(Debug)]
enum FsStep {
    /// Write other files' dirty data (`REQ_SYNC` or not), all submitted
    /// at once, and wait for their writeback.
    Ordered(Vec<u32>, bool),
    /// Write these metadata pages if dirty.
    Metadata(Vec<u64>),
    /// Direct writes (page runs, each `REQ_SYNC` or not).
    Direct(Vec<(u64, u32, bool)>),
    /// Direct reads (page runs), all submitted at once.
    Read(Vec<(u64, u32)>),
    /// Zone resets of the zones starting at these pages, all at once.
    Reset(Vec<u64>),
    Flush,
}

/// Statistics of the page cache and of the application's calls.
#[derive(Clone, Debug, Default)]
struct Stats {
    hits: u64,
    misses: u64,
    readahead_pages: u64,
    read_requests: u64,
    read_pages: u64,
    evictions: u64,
    rmw_reads: u64,
    wb_pages: [u64; 5],
    wb_requests: [u64; 5],
    flushes: u64,
    trims: u64,
    throttled: u64,
    throttle_ns: u128,
    throttle_max_ns: u64,
    dirty_max: u64,
    reclaim_waits: u64,
    metadata_pages: u64,
    /// Pages written back of metadata, and a file system's direct pages
    /// written and read and its flushes (also counted in `flushes`).
    metadata_written: u64,
    fs_written: u64,
    fs_read: u64,
    fs_flushes: u64,
    /// fsyncs that waited for a journal commit the file system's thread
    /// wrote, and the commits that thread wrote.
    commit_waits: u64,
    commits: u64,
    /// Unlinks, and the pages they dropped: all, the dirty ones (never
    /// written), and those waited for (I/O in flight).
    unlinks: u64,
    unlink_pages: u64,
    unlink_dirty_pages: u64,
    unlink_waited_pages: u64,
    /// The last call's end, of any tenant.
    last_end: SimTime,
}

/// Why pages were written back.
const WB_BACKGROUND: usize = 0;
const WB_PERIODIC: usize = 1;
const WB_FSYNC: usize = 2;
const WB_SYNC_WRITE: usize = 3;
/// A writer's own writeback in 2.6.35's `balance_dirty_pages`.
const WB_BALANCE: usize = 4;

/// Whether writeback of `reason` is `REQ_SYNC`: for fsync and O_SYNC it is
/// WB_SYNC_ALL, whose writes are (`wbc_to_write_flags`,
/// include/linux/writeback.h; 2.6.35's `__block_write_full_page` picks
/// WRITE_SYNC_PLUG for it); the flusher's WB_SYNC_NONE writes are not.
fn wb_sync(reason: usize) -> bool {
    matches!(reason, WB_FSYNC | WB_SYNC_WRITE)
}

/// The page cache in front of an application source (see the module docs),
/// or of several: the tenants of one host ([`TenantView`]).
pub struct PageCache<S: AppSource> {
    /// The applications it serves (one, but on a host shared by flows).
    tenants: Vec<Tenant<S>>,
    /// An inode number's tenant is above bit `shift`; `mask` keeps its own
    /// part (all bits with one tenant).
    shift: u32,
    mask: u32,
    /// An error met in a hook (kept to end the run at the next step).
    error: Option<SourceError>,
    cfg: PageCacheConfig,
    cap: u64,
    /// How the host's memory divides (the cache's share is `cap`).
    plan: MemoryPlan,
    /// The host's CPU: what work costs, and the cores it runs on.
    cpu: CpuConfig,
    cores: Cores,
    max_req_pages: u64,
    dev_pages: u64,
    ra_max: u64,
    pages: Vec<Page>,
    free: Vec<u32>,
    map: FastMap<u64, u32>,
    lru_head: u32,
    lru_tail: u32,
    /// Files with pages in the cache or dirty pages (never iterated), and
    /// the dirtying order of those with dirty pages (Linux's `b_dirty`: by
    /// `dirtied_when`, then inode number).
    inodes: FastMap<u32, Inode>,
    b_dirty: BTreeSet<(SimTime, u32)>,
    nr_dirty: u64,
    nr_wb: u64,
    ios: FastMap<u32, Io>,
    /// Write bios of file pages closed by a writeback pass, submitted at
    /// its end ([`PageCache::write_runs`]).
    pending_bios: Vec<Bio>,
    next_tag: u32,
    threads: Vec<Thread>,
    by_stream: FastMap<u32, usize>,
    /// Writers of a file in the order their calls came (the file's lock,
    /// `i_rwsem`, taken in that order): the source computed each write's
    /// place (an append's end of file) in that order, so they run in it.
    /// The block device and the metadata are not locked.
    writers: FastMap<u32, VecDeque<u32>>,
    /// Per file, the calls on it not done (their places in the order the
    /// calls came; a few, kept with their room once the file has had
    /// calls): a file's unlink waits for those that came before it.
    users: FastMap<u32, Vec<u64>>,
    /// The next call's place in that order.
    next_seq: u64,
    /// Per device page, the file whose data it last held (empty until a
    /// file is written).
    owners: Vec<u32>,
    /// Per submitter (thread index; the flusher is the last), requests to
    /// submit and whether it sleeps on `nr_requests`.
    outbox: Vec<VecDeque<HostRequest>>,
    asleep: Vec<bool>,
    flusher_bg: bool,
    /// The kernel's dirty throttling: 2.6.35's, where writers write back,
    /// or the IO-less pacing of later kernels.
    bdp: Option<Bdp>,
    ioless: Option<IoLess>,
    kupdate: bool,
    /// The flusher found nothing it may write (all under writeback) and
    /// waits for a completion.
    flusher_stalled: bool,
    /// Threads waiting for any completion to reclaim a page.
    reclaim_waiters: Vec<u32>,
    /// Threads that may be able to move: every thread that
    /// [`runnable`](Self::runnable) would pass is here (waiting for a call
    /// with none queued does not count), so that a step visits these, in
    /// index order, and not every thread.
    ready: IdSet,
    /// Threads busy until a time (`until` after the instant they were
    /// booked), by that time: the step wakes them, `wake_at` reports the
    /// first.
    timers: BTreeSet<(SimTime, u32)>,
    /// Submitters with requests queued that are not asleep, in index order
    /// (the order `poll` hands requests out in), and requests queued.
    out_ready: IdSet,
    out_queued: usize,
    /// A file system's logs whose writes wait for the write that fills
    /// their zone ([`ZoneLog`]; F2FS's zoned mode), by log, and the
    /// writes held in them.
    zone_logs: Vec<ZoneLog>,
    zone_held: usize,
    /// Of them, the flusher's: it starts no pass while it has one, as
    /// Linux's flusher sleeps in `f2fs_submit_page_write` until the log's
    /// zone is written.
    zone_held_flusher: usize,
    /// Threads the steps looked at (see [`PageCache::thread_visits`]).
    visits: u64,
    next_periodic: Option<SimTime>,
    now: SimTime,
    /// The instant of the last step, and whether an event came since.
    stepped: Option<SimTime>,
    changed: bool,
    start: Option<SimTime>,
    /// The instant the run's ramp restarted the cache's statistics.
    ramped: Option<SimTime>,
    stats: Stats,
}

impl<S: AppSource> PageCache<S> {
    /// A cache of `cfg` in front of `app` (a closed-loop source) on a device
    /// of `dev_bytes`, whose block layer splits requests at `max_request`
    /// bytes.
    ///
    /// The host runs the current kernel on the default CPU (see
    /// [`PageCache::on_host`]).
    pub fn new(
        app: S,
        cfg: &PageCacheConfig,
        io: AppIo,
        dev_bytes: u64,
        max_request: u64,
    ) -> Result<Self, ConfigError> {
        Self::on_host(
            app,
            cfg,
            &CpuConfig::default(),
            Kernel::Current,
            io,
            dev_bytes,
            max_request,
        )
    }

    /// As [`PageCache::new`], on a host of `cpu` running `kernel` (what its
    /// memory rules follow: [`PageCacheConfig::plan`]). The application's
    /// memory is what `app` says it holds ([`AppSource::memory`]).
    pub fn on_host(
        app: S,
        cfg: &PageCacheConfig,
        cpu: &CpuConfig,
        kernel: Kernel,
        io: AppIo,
        dev_bytes: u64,
        max_request: u64,
    ) -> Result<Self, ConfigError> {
        let one = TenantSpec {
            app,
            io,
            first_page: 0,
            pages: dev_bytes / PAGE,
            slot: None,
        };
        Self::with_tenants(vec![one], cfg, cpu, kernel, max_request)
    }

    /// A cache of `cfg` on a host of `cpu` running `kernel`, serving the
    /// applications of `tenants` (see [`TenantView`]): one memory
    /// plan (their memory summed), one LRU, one dirty count and flusher,
    /// one set of cores.
    pub fn with_tenants(
        tenants: Vec<TenantSpec<S>>,
        cfg: &PageCacheConfig,
        cpu: &CpuConfig,
        kernel: Kernel,
        max_request: u64,
    ) -> Result<Self, ConfigError> {
        cfg.validate()?;
        cpu.validate()?;
        let n = tenants.len();
        if n == 0 || n > 32 {
            return Err(invalid(
                "flow",
                format!("{n} buffered flows: a host's page cache serves 1 to 32"),
            ));
        }
        let memory = tenants.iter().map(|t| t.app.memory()).sum::<u64>();
        let plan = cfg.plan(kernel, memory)?;
        // Inode numbers carry their tenant above the bits its own need.
        let bits = (n as u32).next_power_of_two().trailing_zeros();
        let (shift, mask) = if n == 1 {
            (32, u32::MAX)
        } else {
            (27 - bits, (1u32 << (27 - bits)) - 1)
        };
        let mut dev_pages = 0;
        let mut ts = Vec::with_capacity(n);
        for (k, t) in tenants.into_iter().enumerate() {
            let depth = match t.app.timing() {
                Timing::ClosedLoop { depth } => depth.max(1),
                _ => {
                    return Err(invalid(
                        "page_cache",
                        "buffered I/O needs an application workload (the fio-style generator or a personality); a block trace was recorded below the page cache and replays direct",
                    ))
                }
            };
            dev_pages = u64::max(dev_pages, t.first_page + t.pages);
            ts.push(Tenant {
                app: t.app,
                io: t.io,
                done: false,
                // A flow's tenant starts with its flow.
                started: t.slot.is_none(),
                depth,
                outstanding: 0,
                threads: 0,
                idle_empty: 0,
                ended: 0,
                queued: 0,
                base: t.first_page,
                pages: t.pages,
                slot: t.slot,
                tag: if n == 1 { 0 } else { (k as u32) << shift },
                stats: AppStats::default(),
                start: None,
                zone_waits: 0,
            });
        }
        let flusher = Thread::new(FLUSHER_STREAM, 0);
        Ok(PageCache {
            tenants: ts,
            shift,
            mask,
            error: None,
            cap: plan.cache / PAGE,
            plan,
            cores: Cores::new(cpu.cores),
            cpu: cpu.clone(),
            max_req_pages: (max_request / PAGE).max(1),
            dev_pages,
            ra_max: cfg.read_ahead_kb as u64 / 4,
            cfg: cfg.clone(),
            pages: Vec::new(),
            free: Vec::new(),
            map: FastMap::default(),
            lru_head: NONE,
            lru_tail: NONE,
            inodes: FastMap::default(),
            b_dirty: BTreeSet::new(),
            nr_dirty: 0,
            nr_wb: 0,
            ios: FastMap::default(),
            pending_bios: Vec::new(),
            next_tag: 0,
            threads: vec![flusher],
            by_stream: FastMap::default(),
            writers: FastMap::default(),
            users: FastMap::default(),
            next_seq: 0,
            owners: Vec::new(),
            outbox: vec![VecDeque::new()],
            asleep: vec![false],
            flusher_bg: false,
            bdp: (kernel == Kernel::V2_6_35)
                .then(|| Bdp::new(plan.ram / PAGE, cpu.cores as u64, plan.dirty_pages)),
            ioless: (kernel != Kernel::V2_6_35).then(IoLess::default),
            kupdate: false,
            flusher_stalled: false,
            reclaim_waiters: Vec::new(),
            ready: IdSet::default(),
            timers: BTreeSet::new(),
            out_ready: IdSet::default(),
            out_queued: 0,
            zone_logs: Vec::new(),
            zone_held: 0,
            zone_held_flusher: 0,
            visits: 0,
            next_periodic: None,
            now: SimTime::ZERO,
            stepped: None,
            changed: false,
            start: None,
            ramped: None,
            stats: Stats::default(),
        })
    }

    /// Dirty pages now.
    pub fn nr_dirty(&self) -> u64 {
        self.nr_dirty
    }
    /// Pages under writeback now.
    pub fn nr_writeback(&self) -> u64 {
        self.nr_wb
    }
    /// (background, dirty) thresholds in pages.
    pub fn thresholds(&self) -> (u64, u64) {
        (self.plan.background_pages, self.plan.dirty_pages)
    }
    /// Pages resident now.
    pub fn resident(&self) -> u64 {
        self.map.len() as u64
    }

    // ------------------------------------------------------------ pages

    /// The thread of `stream` (the cache's), tenant `k`'s when new.
    fn thread_for(&mut self, stream: u32, k: usize) -> usize {
        if let Some(&t) = self.by_stream.get(&stream) {
            return t;
        }
        let t = self.threads.len();
        self.threads.push(Thread::new(stream, k as u32));
        self.outbox.push(VecDeque::new());
        self.asleep.push(false);
        self.by_stream.insert(stream, t);
        self.tenants[k].threads += 1;
        self.idle_changed(t, false, true);
        t
    }

    /// Fetch application calls while fewer than `depth` are outstanding;
    /// true if any came (or the source ended).
    ///
    /// A source hands its calls out in its own order (a personality: one
    /// per thread, round robin), not in the order its threads finish: a
    /// thread that is idle with nothing queued lets the cache read further
    /// ahead (up to four times the depth), so that no thread waits for its
    /// turn in the source's rotation.
    ///
    /// Each tenant's application, in order, as far as its own depth goes.
    fn fetch(&mut self) -> Result<bool, SourceError> {
        let mut got = false;
        for k in 0..self.tenants.len() {
            if !self.tenants[k].started {
                continue;
            }
            let te = &mut self.tenants[k];
            te.app.clock(self.now);
            let cap = te.depth.saturating_mul(4).saturating_add(64);
            loop {
                let te = &mut self.tenants[k];
                if te.done
                    || !(te.outstanding < te.depth || te.outstanding < cap && te.idle_empty > 0)
                {
                    break;
                }
                got = true;
                match te.app.next_request() {
                    Some(Ok(r)) => {
                        let (more, extras) = (te.app.more_follow(), te.app.call_extras());
                        let r = self.call_in(k, r)?;
                        self.enqueue(k, r, more, extras);
                    }
                    Some(Err(e)) => return Err(e),
                    None => {
                        // Idle threads end (or make their end_fsync).
                        te.done = true;
                        self.ready_all(Some(k));
                    }
                }
            }
            // The timer's commits and those the calls asked for.
            got |= self.poll_commit(k);
        }
        match self.error.take() {
            Some(e) => Err(e),
            None => Ok(got),
        }
    }

    /// Queue call `r` (with whether more pieces follow it and its extras)
    /// on its stream's thread (tenant `k`'s).
    fn enqueue(&mut self, k: usize, mut r: HostRequest, more: bool, extras: CallExtras) {
        if r.stream == FLUSHER_STREAM {
            r.stream = FLUSHER_STREAM - 1;
        }
        let t = self.thread_for(r.stream, k);
        let seq = self.next_seq;
        self.next_seq += 1;
        if self.locks_file(&r, &extras) {
            self.writers.entry(r.tag).or_default().push_back(t as u32);
        }
        if self.is_file(r.tag) && !extras.unlink {
            self.users.entry(r.tag).or_default().push(seq);
        }
        if self.threads[t].stage == Stage::Done {
            // A thread that had ended (the file system's, once the
            // application was done) is woken for a commit.
            self.threads[t].stage = Stage::Idle;
            self.ended_changed(t, false);
        } else if self.idle_and_empty(t) {
            self.idle_changed(t, true, false);
        }
        self.threads[t].queue.push_back(r);
        self.threads[t].more.push_back((more, extras, seq));
        self.tenants[k].outstanding += 1;
        self.ready.insert(t);
    }

    /// Thread `t` (not the flusher) is idle with no call queued.
    fn idle_and_empty(&self, t: usize) -> bool {
        let th = &self.threads[t];
        t > 0 && th.stage == Stage::Idle && th.queue.is_empty()
    }

    /// Thread `t` can move now: [`runnable`](Self::runnable), and not
    /// waiting for a call that has not come (`run_thread` would return at
    /// once).
    fn live(&self, t: usize) -> bool {
        (self.tenants[self.threads[t].tenant as usize].done || !self.idle_and_empty(t))
            && self.runnable(t)
    }

    /// Every thread (of tenant `k`, if given) may move (the source ended,
    /// or the run stops).
    fn ready_all(&mut self, k: Option<usize>) {
        for t in 1..self.threads.len() {
            if k.is_none_or(|k| self.threads[t].tenant as usize == k) {
                self.ready.insert(t);
            }
        }
    }

    /// Queue write `r` from submitter `k` for the device through its
    /// file system's log, if the write names one (`zone_log`, see
    /// [`ZoneLog`]): held while the log has a write that fills a zone on
    /// the device, or writes held before it; else queued, and the log's
    /// next writes held from now if this one fills its zone.
    pub(super) fn out_push_logged(
        &mut self,
        k: usize,
        r: HostRequest,
        zone_log: Option<(u8, bool)>,
    ) {
        let Some((g, ends)) = zone_log else {
            return self.out_push(k, r);
        };
        let g = g as usize;
        if self.zone_logs.len() <= g {
            self.zone_logs.resize_with(g + 1, ZoneLog::default);
        }
        let log = &mut self.zone_logs[g];
        if log.pending.is_some() || !log.held.is_empty() {
            log.held.push_back((k as u32, r, ends));
            self.zone_held += 1;
            self.zone_held_flusher += usize::from(k == 0);
            let te = self.tenant_of_request(k, &r);
            self.tenants[te].zone_waits += 1;
            return;
        }
        if ends {
            log.pending = Some(r.tag);
        }
        self.out_push(k, r);
    }

    /// Write `tag` completed: if it filled a log's zone, the log's held
    /// writes go to the device in order, up to the next that fills one.
    fn zone_log_done(&mut self, tag: u32) {
        for g in 0..self.zone_logs.len() {
            if self.zone_logs[g].pending != Some(tag) {
                continue;
            }
            self.zone_logs[g].pending = None;
            while let Some((k, r, ends)) = self.zone_logs[g].held.pop_front() {
                self.zone_held -= 1;
                self.zone_held_flusher -= usize::from(k == 0);
                self.out_push(k as usize, r);
                if ends {
                    self.zone_logs[g].pending = Some(r.tag);
                    break;
                }
            }
        }
    }

    /// Queue `r` for the device from submitter `k`.
    fn out_push(&mut self, k: usize, r: HostRequest) {
        let te = self.tenant_of_request(k, &r);
        self.tenants[te].queued += 1;
        self.outbox[k].push_back(r);
        self.out_queued += 1;
        if !self.asleep[k] {
            self.out_ready.insert(k);
        }
    }

    /// Hand out submitter `k`'s next request.
    fn pop_out(&mut self, k: usize) -> Option<HostRequest> {
        let r = self.outbox[k].pop_front()?;
        let te = self.tenant_of_request(k, &r);
        self.tenants[te].queued -= 1;
        self.out_queued -= 1;
        if self.outbox[k].is_empty() {
            self.out_ready.remove(k);
        }
        Some(r)
    }

    fn runnable(&self, t: usize) -> bool {
        let th = &self.threads[t];
        th.waits == 0
            && th.until <= self.now
            && match th.stage {
                Stage::Done => false,
                Stage::WriteStart | Stage::DioStart => th.op.is_none_or(|r| {
                    !self.locked_write(&r)
                        || self.writers.get(&r.tag).and_then(|q| q.front()) == Some(&(t as u32))
                }),
                Stage::CommitWait => self.tenants[th.tenant as usize]
                    .app
                    .committed(th.commit_wait),
                Stage::Unlink => th.op.is_none_or(|r| {
                    !self.is_file(r.tag)
                        || self.writers.get(&r.tag).and_then(|q| q.front()) == Some(&(t as u32))
                            && self
                                .users
                                .get(&r.tag)
                                .is_none_or(|u| u.iter().all(|&s| s > th.seq))
                }),
                _ => true,
            }
    }

    /// A write on a file (not the block device, not metadata): it holds the
    /// file's lock from its start to the end of its copy.
    fn locked_write(&self, r: &HostRequest) -> bool {
        r.op == IoOp::Write && self.is_file(r.tag)
    }
    /// A call that takes its file's lock, in the order the calls came: a
    /// write, and an unlink, whose pages go after the writes before it and
    /// before any write after it (a new file of the same number). It also
    /// waits for the file's other calls that came before it (`users`): in
    /// Linux `evict` runs at the last `iput`, once every call in progress
    /// on the file is done and it is closed.
    fn locks_file(&self, r: &HostRequest, x: &CallExtras) -> bool {
        if x.unlink {
            self.is_file(r.tag)
        } else {
            self.locked_write(r)
        }
    }

    /// Thread `t` is done with its write on `ino`: the next writer goes.
    fn unlock(&mut self, ino: u32, t: usize) {
        if let Some(q) = self.writers.get_mut(&ino) {
            debug_assert_eq!(q.front(), Some(&(t as u32)));
            q.pop_front();
            match q.front() {
                // The next writer may take the lock.
                Some(&w) => {
                    self.ready.insert(w as usize);
                }
                None => {
                    self.writers.remove(&ino);
                }
            }
        }
    }

    /// Pages of a request: [lo, hi).
    fn span(r: &HostRequest) -> (u64, u64) {
        let lo = r.lba / SPP;
        let hi = (r.lba + r.sectors as u64).div_ceil(SPP);
        (lo, hi)
    }

    /// Make the thread wait for the I/O on page `lpn`, if any.
    fn wait_page_io(&mut self, t: usize, lpn: u64) {
        if let Some(&i) = self.map.get(&lpn) {
            let tag = self.pages[i as usize].io;
            if tag != NONE {
                if let Some(io) = self.ios.get_mut(&tag) {
                    if !io.waiters.contains(&(t as u32)) {
                        io.waiters.push(t as u32);
                        self.threads[t].waits += 1;
                    }
                }
            }
        }
    }

    /// Advance thread `t` as far as it goes now.
    fn run_thread(&mut self, t: usize) {
        while self.runnable(t) {
            let next = match self.threads[t].stage {
                Stage::Idle => self.idle(t),
                Stage::ReadStart => self.read_start(t),
                Stage::ReadCopy => self.read_copy(t),
                Stage::WriteStart => self.write_start(t),
                Stage::WriteDirty => self.write_dirty(t),
                Stage::WriteCopied if self.bdp.is_some() => self.write_copied_2635(t),
                Stage::Balance => self.balance(t),
                Stage::WriteCopied => self.write_copied(t),
                Stage::WriteBalanced => self.write_balanced(t),
                Stage::SyncStart => self.sync_start(t),
                Stage::SyncWait => self.sync_wait(t),
                Stage::DioStart => self.dio_start(t),
                Stage::DioSubmit => self.dio_submit(t),
                Stage::CommitWait => self.commit_wait(t),
                Stage::CommitRun => self.commit_run(t),
                Stage::DirectStart => self.direct_start(t),
                Stage::DirectDone => self.direct_done(t),
                Stage::TrimStart => self.trim_start(t),
                Stage::TrimDrop => self.trim_drop(t),
                Stage::Unlink => self.unlink(t),
                Stage::UnlinkWait => self.unlink_wait(t),
                Stage::Complete => self.complete(t),
                Stage::Done => Next::Sleep,
            };
            if next == Next::Sleep {
                return;
            }
        }
    }

    /// The call `seq` on file `ino` is done (or dropped): an unlink of the
    /// file that waits for the calls before it may go.
    fn call_done(&mut self, ino: u32, seq: u64) {
        if !self.is_file(ino) {
            return;
        }
        if let Some(u) = self.users.get_mut(&ino) {
            if let Some(k) = u.iter().position(|&s| s == seq) {
                u.swap_remove(k);
            }
        }
        if let Some(&w) = self.writers.get(&ino).and_then(|q| q.front()) {
            if self.threads[w as usize].stage == Stage::Unlink {
                self.ready.insert(w as usize);
            }
        }
    }

    /// Every tenant's application is done: its source ended, its calls
    /// returned, its threads ended.
    fn app_finished(&self) -> bool {
        self.tenants
            .iter()
            .all(|t| t.done && t.outstanding == 0 && t.ended == t.threads)
    }

    /// Step at `now` unless nothing has happened since the last step at
    /// this instant (handing out what is queued changes no thread).
    fn step_at(&mut self, now: SimTime) -> Result<(), SourceError> {
        self.now = now;
        if self.changed || self.stepped != Some(now) {
            self.changed = false;
            self.stepped = Some(now);
            self.step()?;
        }
        Ok(())
    }

    /// Run every thread and the flusher until nothing moves.
    fn step(&mut self) -> Result<(), SourceError> {
        if self.start.is_none() {
            self.start = Some(self.now);
        }
        // Threads whose copy or computation has ended.
        while let Some(&(at, t)) = self.timers.first() {
            if at > self.now {
                break;
            }
            self.timers.pop_first();
            self.ready.insert(t as usize);
        }
        loop {
            let mut moved = self.fetch()?;
            // The threads in index order, as a walk over all of them would
            // meet them: one made ready by a thread before it in this pass
            // runs in this pass, one after it in the next.
            let mut from = 1;
            while let Some(t) = self.ready.next_from(from) {
                from = t + 1;
                self.ready.remove(t);
                self.visits += 1;
                if !self.runnable(t) {
                    continue;
                }
                let th = &self.threads[t];
                let before = (th.stage, th.until, th.waits, th.queue.len());
                let was_idle = self.idle_and_empty(t);
                self.run_thread(t);
                let th = &self.threads[t];
                let after = (th.stage, th.until, th.waits, th.queue.len());
                moved |= before != after;
                if after.1 != before.1 {
                    self.timers.remove(&(before.1, t as u32));
                    if after.1 > self.now {
                        self.timers.insert((after.1, t as u32));
                    }
                }
                let idle = self.idle_and_empty(t);
                self.idle_changed(t, was_idle, idle);
                if before.0 != Stage::Done && after.0 == Stage::Done {
                    self.ended_changed(t, true);
                }
                if self.live(t) {
                    // It stopped still able to move (a wait it did not
                    // register): the next pass tries again, as before.
                    self.ready.insert(t);
                }
            }
            let queued = self.outbox[0].len();
            self.flusher_step();
            moved |= self.outbox[0].len() != queued;
            if !moved {
                return Ok(());
            }
        }
    }

    /// The cache's bookkeeping against its pages (the property tests call
    /// it after a run): the dirty and writeback counts are the pages so
    /// marked, each file's list of pages and dirty list are its pages
    /// (dirty ones) in the cache, `b_dirty` holds the files with dirty
    /// pages.
    pub fn check(&self) -> Result<(), String> {
        let (mut dirty, mut wb) = (0u64, 0u64);
        let mut sets: BTreeMap<u32, (BTreeSet<u64>, BTreeSet<u64>)> = BTreeMap::new();
        for (&lpn, &i) in self.map.iter() {
            let p = &self.pages[i as usize];
            if p.lpn != lpn {
                return Err(format!(
                    "page {i} is at {lpn} in the map but holds {}",
                    p.lpn
                ));
            }
            dirty += u64::from(p.flags & DIRTY != 0);
            wb += u64::from(p.flags & WRITEBACK != 0);
            let e = sets.entry(p.ino).or_default();
            if self.is_file(p.ino) {
                e.0.insert(lpn);
            }
            if p.flags & DIRTY != 0 {
                e.1.insert(lpn);
            }
        }
        if (dirty, wb) != (self.nr_dirty, self.nr_wb) {
            return Err(format!(
                "{dirty} dirty and {wb} writeback pages, counted {} and {}",
                self.nr_dirty, self.nr_wb
            ));
        }
        let mut inos: Vec<u32> = self.inodes.keys().copied().collect();
        inos.sort_unstable();
        for ino in inos {
            let n = &self.inodes[&ino];
            let (pages, dirty) = sets.remove(&ino).unwrap_or_default();
            let mut listed = BTreeSet::new();
            let (mut at, mut prev) = (n.first, NONE);
            while at != NONE {
                let p = &self.pages[at as usize];
                if p.fprev != prev
                    || p.ino != ino
                    || self.map.get(&p.lpn) != Some(&at)
                    || !listed.insert(p.lpn)
                {
                    return Err(format!("file {ino}'s list is broken at page {at}"));
                }
                (prev, at) = (at, p.fnext);
            }
            if listed != pages {
                return Err(format!("file {ino}'s list is not its pages"));
            }
            if n.dirty != dirty {
                return Err(format!("file {ino}'s dirty list is not its dirty pages"));
            }
            if n.dirty.is_empty() == self.b_dirty.contains(&(n.dirtied_when, ino)) {
                return Err(format!(
                    "file {ino} is on b_dirty or not as it is dirty or not"
                ));
            }
        }
        if let Some((ino, _)) = sets
            .iter()
            .find(|(_, (p, d))| !p.is_empty() || !d.is_empty())
        {
            return Err(format!("file {ino} has pages but no inode"));
        }
        if self.b_dirty.len() != self.inodes.values().filter(|n| !n.dirty.is_empty()).count() {
            return Err("b_dirty holds a file with no dirty page".into());
        }
        Ok(())
    }

    /// Threads the cache's steps have looked at so far: the work per event
    /// that grows with the thread count, were the steps to walk every
    /// thread (tests bound it per call).
    pub fn thread_visits(&self) -> u64 {
        self.visits
    }

    /// The application's call latencies of the measured phase: read,
    /// write, trim, fsync (what the report's `app.latency_us` summarises).
    pub fn app_latencies(&self) -> &[LatencyHist; 4] {
        &self.tenants[0].stats.lat
    }
}

impl<S: AppSource> PageCache<S> {
    /// The applications (tenant `k`'s, or every one) make no new call:
    /// what their threads have queued and not begun is dropped (it was
    /// read ahead of them, not made), and each thread ends as a source's
    /// end ends it (its end_fsync included). The pieces of a call under way
    /// are part of it.
    fn stop_calls(&mut self, k: Option<usize>) {
        for (i, te) in self.tenants.iter_mut().enumerate() {
            if k.is_none_or(|k| k == i) {
                te.done = true;
            }
        }
        self.ready_all(k);
        for t in 1..self.threads.len() {
            if k.is_some_and(|k| self.threads[t].tenant as usize != k) {
                continue;
            }
            let was_idle = self.idle_and_empty(t);
            let th = &self.threads[t];
            let keep = if th.in_call {
                th.more
                    .iter()
                    .position(|(more, _, _)| !more)
                    .map_or(th.queue.len(), |p| p + 1)
            } else {
                0
            };
            while self.threads[t].queue.len() > keep {
                let Some(r) = self.threads[t].queue.pop_back() else {
                    break;
                };
                let (_, x, seq) = self.threads[t].more.pop_back().unwrap_or_default();
                self.returned(t);
                if !x.unlink {
                    self.call_done(r.tag, seq);
                }
                if self.locks_file(&r, &x) {
                    // Its place in the file's writer order, the thread's
                    // last (a thread's writes queue in its order).
                    if let Some(q) = self.writers.get_mut(&r.tag) {
                        if let Some(p) = q.iter().rposition(|&w| w == t as u32) {
                            q.remove(p);
                        }
                        if q.is_empty() {
                            self.writers.remove(&r.tag);
                        }
                    }
                }
            }
            let idle = self.idle_and_empty(t);
            self.idle_changed(t, was_idle, idle);
        }
    }

    /// The cache's own statistics and the host's CPU's start again at
    /// `now` (the run's ramp; once however many tenants say so).
    pub fn shared_ramp_over(&mut self, now: SimTime) {
        if self.ramped == Some(now) {
            return;
        }
        self.ramped = Some(now);
        self.stats = Stats {
            dirty_max: self.nr_dirty,
            last_end: now,
            ..Stats::default()
        };
        self.start = Some(now);
        self.cores.restart();
    }

    /// What tenant `k`'s application makes of the host's run: its calls'
    /// time and latency, the host's CPU time.
    fn host_run(&self, k: usize) -> HostRun {
        let s = &self.tenants[k].stats;
        let start = self.tenants[k]
            .start
            .or(self.start)
            .unwrap_or(SimTime::ZERO);
        let busy = |w: Work| self.cores.busy(w);
        HostRun {
            secs: s.last_end.max(start).since(start).secs_f64(),
            latency_ns: s.calls_ns + s.syscalls_ns,
            cpu_ns: busy(Work::Kernel)
                + busy(Work::Copy)
                + busy(Work::Submit)
                + busy(Work::Wakeup)
                + busy(Work::Benchmark),
        }
    }
}

impl Thread {
    fn new(stream: u32, tenant: u32) -> Thread {
        Thread {
            stream,
            tenant,
            queue: VecDeque::new(),
            more: VecDeque::new(),
            seq: 0,
            dsync: false,
            in_call: false,
            call_started: SimTime::ZERO,
            op: None,
            own_fsync: false,
            stage: Stage::Idle,
            waits: 0,
            until: SimTime::ZERO,
            started: SimTime::ZERO,
            throttled_since: SimTime::ZERO,
            bal: Balance::default(),
            pace: Pace::default(),
            dirties: (0, 0),
            deferred: Vec::new(),
            ras: vec![(0, 0, Ra::default())],
            writes: 0,
            ended: false,
            ino: 0,
            fs_asked: false,
            fs_steps: VecDeque::new(),
            commit_wait: 0,
            await_only: false,
            fs_no_flush: false,
        }
    }
}

impl Thread {
    /// The readahead state of the open file the thread reads through.
    fn ra(&self) -> &Ra {
        &self.ras[0].2
    }
    fn ra_mut(&mut self) -> &mut Ra {
        &mut self.ras[0].2
    }
    /// The thread reads through descriptor `fd`, opened for the `open`th
    /// time: its state comes first; a descriptor opened anew since its
    /// last read starts a fresh one, as `do_dentry_open` ->
    /// `file_ra_state_init` does for every `struct file` (no window, no
    /// previous read: `prev_pos = -1`).
    fn use_file(&mut self, fd: u32, open: u64) {
        if self.ras[0].0 == fd && self.ras[0].1 == open {
            return;
        }
        let e = match self.ras.iter().position(|e| e.0 == fd) {
            Some(k) if self.ras[k].1 == open => self.ras.remove(k),
            Some(k) => {
                self.ras.remove(k);
                (fd, open, Ra::default())
            }
            None => (fd, open, Ra::default()),
        };
        self.ras.insert(0, e);
    }
}

impl<S: AppSource> RequestSource for PageCache<S> {
    fn timing(&self) -> Timing {
        Timing::Reactive
    }
    fn next_request(&mut self) -> Option<Result<HostRequest, SourceError>> {
        None
    }
    fn notes(&self) -> Vec<(String, u64)> {
        let mut n = self.tenants[0].app.notes();
        if self.tenants[0].done && self.nr_dirty > 0 {
            n.push(("page_cache_dirty_pages_left_at_end".into(), self.nr_dirty()));
        }
        if self.tenants[0].zone_waits > 0 {
            n.push(("zone_log_waits".into(), self.tenants[0].zone_waits));
        }
        n
    }
    fn poll(&mut self, now: SimTime) -> Option<Result<HostRequest, SourceError>> {
        if let Err(e) = self.step_at(now) {
            return Some(Err(e));
        }
        // The first submitter, in index order, with a request and room.
        let k = self.out_ready.next_from(0)?;
        self.pop_out(k).map(Ok)
    }
    fn event(&mut self, ev: HostEvent, now: SimTime) {
        self.now = now;
        self.changed = true;
        match ev {
            HostEvent::Blocked(tag) => {
                if let Some(io) = self.ios.get(&tag) {
                    let k = io.submitter as usize;
                    self.asleep[k] = true;
                    self.out_ready.remove(k);
                }
            }
            HostEvent::Admitted(tag) => {
                if let Some(io) = self.ios.get(&tag) {
                    let k = io.submitter as usize;
                    self.asleep[k] = false;
                    if !self.outbox[k].is_empty() {
                        self.out_ready.insert(k);
                    }
                }
            }
            HostEvent::Completed(tag) => {
                if !self.zone_logs.is_empty() {
                    self.zone_log_done(tag);
                }
                let Some(io) = self.ios.remove(&tag) else {
                    return;
                };
                self.flusher_stalled = false;
                let runs = std::iter::once((io.lpn, io.n)).chain(io.more.iter().copied());
                for lpn in runs.flat_map(|(l, n)| l..l + n as u64) {
                    if let Some(&i) = self.map.get(&lpn) {
                        let p = &mut self.pages[i as usize];
                        if p.io != tag {
                            continue;
                        }
                        p.io = NONE;
                        match io.kind {
                            IoKind::Read => {
                                p.flags = (p.flags & !LOCKED) | UPTODATE;
                            }
                            IoKind::Write => {
                                p.flags &= !WRITEBACK;
                                self.nr_wb -= 1;
                                if let Some(w) = self.ioless.as_mut() {
                                    w.written += 1;
                                }
                            }
                            _ => {}
                        }
                    }
                }
                if io.kind == IoKind::Write {
                    if let Some(w) = self.ioless.as_mut() {
                        w.written_back(now);
                    }
                }
                // The completion's interrupt and softirq run on a core,
                // then the switch to each thread it wakes (one waiting for
                // nothing else), which moves on when its switch ends.
                let irq = self
                    .cores
                    .preempt(now, Dur(self.cpu.complete), Work::Complete);
                for w in io.waiters.into_iter().chain(self.reclaim_waiters.drain(..)) {
                    self.threads[w as usize].waits -= 1;
                    if w == 0 {
                        continue;
                    }
                    if self.threads[w as usize].waits == 0 {
                        let woken = self.cores.preempt(irq, Dur(self.cpu.wakeup), Work::Wakeup);
                        let th = &mut self.threads[w as usize];
                        if th.until < woken {
                            let before = th.until;
                            th.until = woken;
                            self.timers.remove(&(before, w));
                            if woken > now {
                                self.timers.insert((woken, w));
                            }
                        }
                    }
                    self.ready.insert(w as usize);
                }
            }
        }
    }
    fn wake_at(&self) -> Option<SimTime> {
        let after_now = (SimTime(self.now.0.saturating_add(1)), 0);
        let threads = self
            .timers
            .range(after_now..)
            .find(|&&(_, t)| self.threads[t as usize].waits == 0)
            .map(|&(at, _)| at);
        let periodic = if self.app_finished() {
            None
        } else {
            self.next_periodic
        };
        match (threads, periodic) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }
    fn finished(&self) -> bool {
        self.app_finished() && self.out_queued == 0 && self.zone_held == 0
    }
    fn report_sections(&self, end: SimTime) -> Vec<(String, serde_json::Value)> {
        let mut v = vec![("app".to_string(), self.app_section(0))];
        v.extend(self.sections());
        let app = &self.tenants[0].app;
        v.extend(app.report_sections(end));
        v.extend(app.host_report(&self.host_run(0)));
        v
    }
    fn stop(&mut self, _now: SimTime) {
        self.stop_calls(None);
    }
    fn ramp_over(&mut self, now: SimTime, _in_flight: u64) {
        // The cache's and the application's statistics start again; the
        // calls in flight count when they return.
        self.shared_ramp_over(now);
        self.tenant_ramp_over(0, now);
    }
}
