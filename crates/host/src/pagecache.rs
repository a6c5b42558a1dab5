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
//!   asynchronously, and a small random read reads just its pages.
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
//! A block-level workload writes one file: the block device, whose inode is
//! the device (fsync writes back every dirty page, as `blkdev_fsync` does).
//! What is dirty when the application's last call returns stays in the cache
//! (`dirty_at_end_bytes`): the run ends there, unless `end_fsync` writes it.
//!
//! Over 1,500 lines on purpose: the application threads, the flusher, the per-
//! file dirty lists and fsync are one state machine over `PageCache`'s private
//! state; a split would hand that state to sibling modules field by field.

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

/// Whether `ino` is a file's (not the block device's, 0, nor the
/// metadata's or the file system's own I/O's): a file's pages are kept in
/// its list, which its unlink drops.
pub fn is_file(ino: u32) -> bool {
    ino != 0 && ino != METADATA_INO && ino != FS_INO
}

const UPTODATE: u8 = 1;
const DIRTY: u8 = 2;
const WRITEBACK: u8 = 4;
const LOCKED: u8 = 8;
/// `PG_readahead`: a hit here starts the next readahead window.
const RA_MARK: u8 = 16;

/// The page cache's size and Linux's writeback and readahead knobs, with
/// their sysctl names and defaults.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct PageCacheConfig {
    /// The host's memory (RAM). Default 2 GiB, the memory of Sun et al.'s
    /// host. The page cache gets what the kernel and the application leave
    /// of it (see [`PageCacheConfig::plan`]).
    pub memory: Size,
    /// Memory the kernel holds beyond its page descriptors and its free-page
    /// reserve, which are computed from `memory`: its image, slab caches,
    /// page tables. Default 0 (not modelled unless set).
    pub kernel_memory: Size,
    /// Whether the host has swap space. Linux 2.6.35 counts the
    /// application's anonymous memory as dirtyable only with swap
    /// (`global_reclaimable_pages`); current kernels never do. Default true
    /// (Ubuntu's installer makes a swap partition).
    pub swap: bool,
    /// The page cache's memory, pinned: also the "available memory" the
    /// dirty ratios are taken of, whatever the kernel and the application
    /// hold. Default 0: computed from `memory` (see
    /// [`PageCacheConfig::plan`]).
    pub size: Size,
    /// `vm.dirty_background_ratio`: percent of `size` dirty at which the
    /// flusher starts background writeback.
    pub dirty_background_ratio: u32,
    /// `vm.dirty_ratio`: percent of `size` dirty (plus under writeback) at
    /// which writers are throttled.
    pub dirty_ratio: u32,
    /// `vm.dirty_background_bytes`: overrides the ratio when non-zero.
    pub dirty_background_bytes: Size,
    /// `vm.dirty_bytes`: overrides the ratio when non-zero.
    pub dirty_bytes: Size,
    /// `vm.dirty_expire_centisecs`: dirty data older than this is written by
    /// the periodic (kupdate) writeback.
    pub dirty_expire_centisecs: u32,
    /// `vm.dirty_writeback_centisecs`: the flusher's period (0: no periodic
    /// writeback).
    pub dirty_writeback_centisecs: u32,
    /// `/sys/block/*/queue/read_ahead_kb` (0: no readahead).
    pub read_ahead_kb: u32,
}

impl Default for PageCacheConfig {
    fn default() -> Self {
        PageCacheConfig {
            memory: Size::gib(2),
            kernel_memory: Size(0),
            swap: true,
            size: Size(0),
            dirty_background_ratio: 10,
            dirty_ratio: 20,
            dirty_background_bytes: Size(0),
            dirty_bytes: Size(0),
            dirty_expire_centisecs: 3000,
            dirty_writeback_centisecs: 500,
            read_ahead_kb: 128,
        }
    }
}

impl PageCacheConfig {
    /// Refuse what Linux refuses or what cannot run.
    pub fn validate(&self) -> Result<(), ConfigError> {
        let min = MIN_CACHE;
        if self.memory.0 < min {
            return Err(invalid(
                "page_cache.memory",
                format!(
                    "{} bytes is too small: at least 16 MiB (readahead windows and dirty pages must fit)",
                    self.memory.0
                ),
            ));
        }
        if self.memory.0 > 1 << 44 {
            return Err(invalid("page_cache.memory", "more than 16 TiB"));
        }
        if self.kernel_memory.0 >= self.memory.0 {
            return Err(invalid(
                "page_cache.kernel_memory",
                format!(
                    "{} bytes leaves nothing of the host's memory ({} bytes)",
                    self.kernel_memory.0, self.memory.0
                ),
            ));
        }
        if self.size.0 != 0 && self.size.0 < min {
            return Err(invalid(
                "page_cache.size",
                format!(
                    "{} bytes is too small: at least 16 MiB (readahead windows and dirty pages must fit)",
                    self.size.0
                ),
            ));
        }
        if self.size.0 > self.memory.0 {
            return Err(invalid(
                "page_cache.size",
                format!(
                    "{} bytes is more than the host's memory (page_cache.memory, {} bytes)",
                    self.size.0, self.memory.0
                ),
            ));
        }
        for (f, v) in [
            (
                "page_cache.dirty_background_ratio",
                self.dirty_background_ratio,
            ),
            ("page_cache.dirty_ratio", self.dirty_ratio),
        ] {
            if v > 100 {
                return Err(invalid(f, format!("{v} is not a percentage (0..=100)")));
            }
        }
        if self.dirty_bytes.0 == 0 && self.dirty_ratio == 0 {
            return Err(invalid(
                "page_cache.dirty_ratio",
                "0 with dirty_bytes 0 leaves no room for a dirty page (Linux refuses it too)",
            ));
        }
        for (f, v) in [
            ("page_cache.dirty_bytes", self.dirty_bytes.0),
            (
                "page_cache.dirty_background_bytes",
                self.dirty_background_bytes.0,
            ),
        ] {
            if v > self.memory.0 {
                return Err(invalid(
                    f,
                    format!(
                        "{v} bytes is more than the host's memory ({} bytes)",
                        self.memory.0
                    ),
                ));
            }
            if v != 0 && v < 2 * PAGE {
                return Err(invalid(
                    f,
                    format!("{v} bytes is less than two pages (Linux's minimum is 2 pages)"),
                ));
            }
        }
        if self.dirty_expire_centisecs as u64 * 10_000_000 > Dur::MAX.0
            || self.dirty_writeback_centisecs as u64 * 10_000_000 > Dur::MAX.0
        {
            return Err(invalid("page_cache.dirty_expire_centisecs", "too long"));
        }
        Ok(())
    }

    /// (background, dirty) thresholds in pages of `dirtyable` bytes of
    /// dirtyable memory, as `domain_dirty_limits` (mm/page-writeback.c;
    /// 2.6.35's `get_dirty_limits`) takes them: `dirty_bytes` rounded up
    /// to pages, else `dirty_ratio` percent of it; the same for the
    /// background threshold, halved when it is not below the dirty one.
    pub fn thresholds_of(&self, dirtyable: u64) -> (u64, u64) {
        let pages = dirtyable / PAGE;
        let dirty = if self.dirty_bytes.0 > 0 {
            self.dirty_bytes.0.div_ceil(PAGE)
        } else {
            pages * self.dirty_ratio as u64 / 100
        }
        .max(1);
        let mut bg = if self.dirty_background_bytes.0 > 0 {
            self.dirty_background_bytes.0.div_ceil(PAGE)
        } else {
            pages * self.dirty_background_ratio as u64 / 100
        };
        if bg >= dirty {
            bg = dirty / 2;
        }
        (bg, dirty)
    }

    /// (background, dirty) thresholds in pages on the current kernel with
    /// no application memory (see [`PageCacheConfig::plan`]).
    ///
    /// # Panics
    /// If the configuration leaves no page cache (`validate` refuses it).
    pub fn thresholds(&self) -> (u64, u64) {
        let p = self
            .plan(Kernel::Current, 0)
            .expect("a valid page cache configuration");
        (p.background_pages, p.dirty_pages)
    }

    /// How the host's memory divides between the kernel, the application
    /// (`app_bytes` of anonymous memory: Filebench's per-thread `memsize`,
    /// fio's I/O buffers) and the page cache, and the dirty thresholds, on
    /// `kernel`:
    ///
    /// * **The kernel** keeps a page descriptor (`struct page`) for every
    ///   4 KiB page of RAM, allocated at boot: 56 bytes in 2.6.35's layout
    ///   (flags, `_count`, `_mapcount`, `private`, `mapping`, `index`,
    ///   `lru`), 64 in current kernels; plus `kernel_memory`.
    /// * **The free-page reserve**: `min_free_kbytes` is
    ///   `int_sqrt(lowmem_kbytes * 16)`, clamped to [128, 65536] KiB
    ///   (262144 in current kernels; `init_per_zone_wmark_min`, taking all
    ///   of RAM as one zone); the high watermark is `min + min / 2` on
    ///   2.6.35 and `min + 2 * max(min / 4, 0.1 % of RAM)` on current
    ///   kernels (`__setup_per_zone_wmarks`, `watermark_scale_factor` 10).
    ///   kswapd keeps that many pages free, so the cache cannot use them
    ///   (`calculate_totalreserve_pages`; one zone, no `lowmem_reserve`).
    /// * **The page cache** gets the rest: RAM less the kernel, the
    ///   reserve and the application.
    /// * **Dirtyable memory** (what the dirty ratios are taken of): on
    ///   2.6.35 free plus reclaimable pages, `determine_dirtyable_memory`:
    ///   `NR_FREE_PAGES + global_reclaimable_pages()`, the latter counting
    ///   anonymous pages only with swap, and no reserve taken off; on
    ///   current kernels free plus file pages less the reserve
    ///   (`global_dirtyable_memory`; anonymous memory left out since 3.14),
    ///   which is the cache's share.
    ///
    /// A pinned `size` is both the cache and the dirtyable memory. Refused,
    /// naming the fields, when the kernel and the application leave less
    /// than 16 MiB, or when a pinned size or `read_ahead_kb` does not fit.
    pub fn plan(&self, kernel: Kernel, app_bytes: u64) -> Result<MemoryPlan, ConfigError> {
        let ram = self.memory.0;
        let pages = ram / PAGE;
        let (struct_page, max_min_kb) = match kernel {
            Kernel::V2_6_35 => (56, 65_536),
            Kernel::Current => (64, 262_144),
        };
        let kernel_bytes = (pages * struct_page).saturating_add(self.kernel_memory.0);
        let min_kb = isqrt(ram / 1024 * 16).clamp(128, max_min_kb);
        let min = min_kb * 1024 / PAGE;
        let high = match kernel {
            Kernel::V2_6_35 => min + min / 2,
            Kernel::Current => min + 2 * (min / 4).max(pages * 10 / 10_000),
        };
        let reserve = high * PAGE;
        let left = ram.saturating_sub(
            kernel_bytes
                .saturating_add(reserve)
                .saturating_add(app_bytes),
        );
        let (cache, dirtyable) = if self.size.0 != 0 {
            if self.size.0 > left {
                return Err(invalid(
                    "page_cache.size",
                    format!(
                        "{} bytes is more than the memory the kernel and the application leave ({left} bytes of page_cache.memory's {ram}: kernel {kernel_bytes}, free-page reserve {reserve}, application {app_bytes})",
                        self.size.0
                    ),
                ));
            }
            (self.size.0, self.size.0)
        } else {
            if left < MIN_CACHE {
                return Err(invalid(
                    "page_cache.memory",
                    format!(
                        "{ram} bytes leave {left} bytes for the page cache (at least 16 MiB) after the kernel ({kernel_bytes}), the free-page reserve ({reserve}) and the application's memory ({app_bytes} bytes: Filebench's memsize per thread, fio's I/O buffers)"
                    ),
                ));
            }
            let dirtyable = match kernel {
                Kernel::V2_6_35 if self.swap => ram - kernel_bytes,
                Kernel::V2_6_35 => ram - kernel_bytes - app_bytes,
                Kernel::Current => left,
            };
            (left, dirtyable)
        };
        if self.read_ahead_kb as u64 * 1024 * 4 > cache {
            return Err(invalid(
                "page_cache.read_ahead_kb",
                format!(
                    "{} KiB is more than a quarter of the page cache ({cache} bytes)",
                    self.read_ahead_kb
                ),
            ));
        }
        let (background_pages, dirty_pages) = self.thresholds_of(dirtyable);
        Ok(MemoryPlan {
            ram,
            kernel: kernel_bytes,
            reserve,
            application: app_bytes,
            cache,
            dirtyable,
            background_pages,
            dirty_pages,
        })
    }
}

/// The smallest page cache (readahead windows and dirty pages must fit).
const MIN_CACHE: u64 = 16 * 1024 * 1024;

/// `int_sqrt`: the integer square root, rounded down.
fn isqrt(x: u64) -> u64 {
    let mut r = (x as f64).sqrt() as u64;
    while r * r > x {
        r -= 1;
    }
    while (r + 1) * (r + 1) <= x {
        r += 1;
    }
    r
}

/// How the host's memory divides ([`PageCacheConfig::plan`]), in bytes,
/// and the dirty thresholds in pages.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MemoryPlan {
    /// The host's memory.
    pub ram: u64,
    /// The kernel's own: page descriptors and `kernel_memory`.
    pub kernel: u64,
    /// The free pages kswapd keeps (the high watermark).
    pub reserve: u64,
    /// The application's anonymous memory.
    pub application: u64,
    /// What the page cache may hold.
    pub cache: u64,
    /// What the dirty ratios are taken of.
    pub dirtyable: u64,
    /// Dirty pages at which the flusher starts background writeback.
    pub background_pages: u64,
    /// Dirty plus writeback pages at which writers are throttled.
    pub dirty_pages: u64,
}

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
}

#[derive(Debug)]
struct Io {
    kind: IoKind,
    ino: u32,
    lpn: u64,
    n: u32,
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

/// Linux's `struct file_ra_state`, per thread (per open file).
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
    ra: Ra,
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
    /// The application's CPU work ([`CallExtras::cpu_cycles`]), summed
    /// over threads.
    cpu_ns: u128,
    /// The calls' latencies summed, and those of the system calls without
    /// I/O made before them ([`CallExtras::syscalls`]).
    calls_ns: u128,
    syscalls_ns: u128,
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
    lat: [LatencyHist; 4],
    bytes_read: u64,
    bytes_written: u64,
    bytes_trimmed: u64,
    /// Of those, the O_DIRECT calls' bytes ([`CallExtras::direct`]).
    dio_read: u64,
    dio_written: u64,
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

/// The page cache in front of an application source (see the module docs).
pub struct PageCache<S: AppSource> {
    app: S,
    app_done: bool,
    /// Calls the application may have outstanding (its closed-loop depth).
    depth: u32,
    outstanding: u32,
    io: AppIo,
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
    /// Threads (the flusher aside) idle with no call queued, and ended.
    idle_empty: usize,
    done: usize,
    /// Submitters with requests queued that are not asleep, in index order
    /// (the order `poll` hands requests out in), and requests queued.
    out_ready: IdSet,
    out_queued: usize,
    /// Threads the steps looked at (see [`PageCache::thread_visits`]).
    visits: u64,
    next_periodic: Option<SimTime>,
    now: SimTime,
    /// The instant of the last step, and whether an event came since.
    stepped: Option<SimTime>,
    changed: bool,
    start: Option<SimTime>,
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
        cfg.validate()?;
        cpu.validate()?;
        let plan = cfg.plan(kernel, app.memory())?;
        let depth = match app.timing() {
            Timing::ClosedLoop { depth } => depth.max(1),
            _ => {
                return Err(invalid(
                    "page_cache",
                    "buffered I/O needs an application workload (the fio-style generator or a personality); a block trace was recorded below the page cache and replays direct",
                ))
            }
        };
        let flusher = Thread::new(FLUSHER_STREAM);
        Ok(PageCache {
            app,
            app_done: false,
            depth,
            outstanding: 0,
            io,
            cap: plan.cache / PAGE,
            plan,
            cores: Cores::new(cpu.cores),
            cpu: cpu.clone(),
            max_req_pages: (max_request / PAGE).max(1),
            dev_pages: dev_bytes / PAGE,
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
            idle_empty: 0,
            done: 0,
            out_ready: IdSet::default(),
            out_queued: 0,
            visits: 0,
            next_periodic: None,
            now: SimTime::ZERO,
            stepped: None,
            changed: false,
            start: None,
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

    fn lru_unlink(&mut self, i: u32) {
        let (p, n) = (self.pages[i as usize].prev, self.pages[i as usize].next);
        if p == NONE {
            self.lru_head = n;
        } else {
            self.pages[p as usize].next = n;
        }
        if n == NONE {
            self.lru_tail = p;
        } else {
            self.pages[n as usize].prev = p;
        }
    }
    fn lru_push_head(&mut self, i: u32) {
        let h = self.lru_head;
        self.pages[i as usize].prev = NONE;
        self.pages[i as usize].next = h;
        if h == NONE {
            self.lru_tail = i;
        } else {
            self.pages[h as usize].prev = i;
        }
        self.lru_head = i;
    }
    fn touch(&mut self, i: u32) {
        if self.lru_head != i {
            self.lru_unlink(i);
            self.lru_push_head(i);
        }
    }

    /// Evict the least recently used clean idle page; pages that cannot go
    /// are rotated to the head. False if a whole pass found none.
    fn evict_one(&mut self) -> bool {
        let mut left = self.map.len();
        while left > 0 {
            let i = self.lru_tail;
            let p = self.pages[i as usize];
            if p.flags & (DIRTY | WRITEBACK | LOCKED) == 0 && p.io == NONE {
                self.remove_page(i);
                self.stats.evictions += 1;
                return true;
            }
            self.touch(i);
            left -= 1;
        }
        false
    }

    /// The page of `lpn`, inserted (empty) if absent; None if the cache is
    /// full of pages that cannot be evicted.
    fn get_or_insert(&mut self, lpn: u64, ino: u32) -> Option<u32> {
        if let Some(&i) = self.map.get(&lpn) {
            return Some(i);
        }
        if self.map.len() as u64 >= self.cap && !self.evict_one() {
            return None;
        }
        let page = Page {
            lpn,
            ino,
            flags: 0,
            io: NONE,
            prev: NONE,
            next: NONE,
            fprev: NONE,
            fnext: NONE,
        };
        let i = match self.free.pop() {
            Some(i) => {
                self.pages[i as usize] = page;
                i
            }
            None => {
                self.pages.push(page);
                (self.pages.len() - 1) as u32
            }
        };
        self.map.insert(lpn, i);
        self.lru_push_head(i);
        self.page_joins(i);
        Some(i)
    }

    /// Page `i` leaves the cache (its file's list too).
    fn remove_page(&mut self, i: u32) {
        self.map.remove(&self.pages[i as usize].lpn);
        self.lru_unlink(i);
        self.page_leaves(i);
        self.free.push(i);
    }
    /// Page `i` joins the list of its file (`ino`; the block device and
    /// the metadata keep none).
    fn page_joins(&mut self, i: u32) {
        let ino = self.pages[i as usize].ino;
        if !is_file(ino) {
            return;
        }
        let node = self.inodes.entry(ino).or_default();
        let first = std::mem::replace(&mut node.first, i);
        let p = &mut self.pages[i as usize];
        (p.fprev, p.fnext) = (NONE, first);
        if first != NONE {
            self.pages[first as usize].fprev = i;
        }
    }
    /// Page `i` leaves the list of its file.
    fn page_leaves(&mut self, i: u32) {
        let p = self.pages[i as usize];
        if !is_file(p.ino) {
            return;
        }
        if p.fprev == NONE {
            if let Some(n) = self.inodes.get_mut(&p.ino) {
                n.first = p.fnext;
            }
        } else {
            self.pages[p.fprev as usize].fnext = p.fnext;
        }
        if p.fnext != NONE {
            self.pages[p.fnext as usize].fprev = p.fprev;
        }
    }

    /// Dirty page `i` for file `ino` (`__mark_inode_dirty`: a file that was
    /// clean is queued on `b_dirty` now, and the flusher's periodic wakeup
    /// is armed if it was not).
    fn set_dirty(&mut self, i: u32, ino: u32) {
        let p = &mut self.pages[i as usize];
        if p.flags & DIRTY != 0 && p.ino == ino {
            return;
        }
        if p.flags & DIRTY != 0 {
            // Another file's dirty page (a slot reused after a delete whose
            // trim did not cover it): it changes hands.
            self.clear_dirty(i);
        }
        if self.pages[i as usize].ino != ino {
            // Written by another file than the one that brought it in:
            // the page is the writer's now.
            self.page_leaves(i);
            self.pages[i as usize].ino = ino;
            self.page_joins(i);
        }
        let p = &mut self.pages[i as usize];
        p.flags |= DIRTY;
        let lpn = p.lpn;
        let now = self.now;
        let period = self.period();
        let node = self.inodes.entry(ino).or_default();
        if node.dirty.is_empty() {
            node.dirtied_when = now;
            self.b_dirty.insert((now, ino));
            if self.next_periodic.is_none() && self.cfg.dirty_writeback_centisecs > 0 {
                self.next_periodic = Some(now + period);
            }
        }
        node.dirty.insert(lpn);
        self.nr_dirty += 1;
        self.stats.dirty_max = self.stats.dirty_max.max(self.nr_dirty);
    }
    fn clear_dirty(&mut self, i: u32) {
        let p = &mut self.pages[i as usize];
        if p.flags & DIRTY == 0 {
            return;
        }
        p.flags &= !DIRTY;
        let (lpn, ino) = (p.lpn, p.ino);
        self.nr_dirty -= 1;
        let node = self
            .inodes
            .get_mut(&ino)
            .expect("a dirty page's file is known");
        node.dirty.remove(&lpn);
        if node.dirty.is_empty() {
            self.b_dirty.remove(&(node.dirtied_when, ino));
        }
    }

    fn period(&self) -> Dur {
        Dur(self.cfg.dirty_writeback_centisecs as u64 * 10_000_000)
    }
    fn expire(&self) -> Dur {
        Dur(self.cfg.dirty_expire_centisecs as u64 * 10_000_000)
    }
    /// The copy of request `r`'s bytes between the application and its
    /// pages, from now on the first core free: when it ends.
    fn copy(&mut self, r: &HostRequest) -> SimTime {
        let (lo, hi) = Self::span(r);
        let d = self.cpu.copy(r.bytes(), hi - lo);
        self.cores.run(self.now, d, Work::Copy)
    }
    /// What a thread does before its call: the application's computing
    /// (`cycles`, a hog flowop), then the system calls and benchmark
    /// operations it made since its last call, then the call's entry
    /// (`entry`, [`PageCache::entry_cost`]), one after the other on one
    /// core: when the call starts and when its entry ends.
    fn before_call(&mut self, cycles: u64, calls: &Syscalls, entry: Dur) -> (SimTime, SimTime) {
        let d = self.cpu.cycles(cycles);
        self.stats.cpu_ns += d.0 as u128;
        let bench = Dur(calls.flowops as u64 * self.cpu.flowop);
        let [computed, called, start, entered] = self.cores.run_all(
            self.now,
            [
                (d, Work::App),
                (self.cpu.calls(calls), Work::Kernel),
                (bench, Work::Benchmark),
                (entry, Work::Kernel),
            ],
        );
        // The system calls' latency, their wait for a core included.
        self.stats.syscalls_ns += (called.0 - computed.0) as u128;
        (start, entered)
    }
    /// A call of the thread's own (fio's fsync=N, end_fsync) entering the
    /// kernel now: when its entry ends.
    fn call_entry(&mut self, op: IoOp) -> SimTime {
        let d = self.entry_cost(op);
        self.cores.run(self.now, d, Work::Kernel)
    }
    /// An application call's entry into the kernel and its own path
    /// (`read`, `write` or `fsync`; its pages are paid with its copy).
    fn entry_cost(&self, op: IoOp) -> Dur {
        let own = match op {
            IoOp::Read => self.cpu.read,
            IoOp::Write => self.cpu.write,
            IoOp::Flush => self.cpu.fsync,
            IoOp::Trim => 0,
        };
        Dur(self.cpu.syscall + own)
    }

    // ------------------------------------------------------------ I/O

    fn new_tag(&mut self) -> u32 {
        loop {
            let t = self.next_tag;
            self.next_tag = self.next_tag.wrapping_add(1);
            if !self.ios.contains_key(&t) {
                return t;
            }
        }
    }

    /// Queue a request of submitter `sub` (thread index) over `n` pages from
    /// `lpn`; `waiter` waits for it; `sync` marks a write `REQ_SYNC`.
    #[allow(clippy::too_many_arguments)]
    fn submit(
        &mut self,
        sub: usize,
        kind: IoKind,
        ino: u32,
        lpn: u64,
        n: u32,
        waiter: Option<usize>,
        sync: bool,
    ) -> u32 {
        let tag = self.new_tag();
        let (op, lba, sectors) = match kind {
            IoKind::Read => (IoOp::Read, lpn * SPP, n as u64 * SPP),
            IoKind::Write => (IoOp::Write, lpn * SPP, n as u64 * SPP),
            IoKind::Trim => (IoOp::Trim, lpn * SPP, n as u64 * SPP),
            IoKind::Flush => (IoOp::Flush, 0, 0),
        };
        match (kind, ino) {
            (IoKind::Write, METADATA_INO) => self.stats.metadata_written += n as u64,
            (IoKind::Write, FS_INO) => self.stats.fs_written += n as u64,
            (IoKind::Read, FS_INO) => self.stats.fs_read += n as u64,
            _ => {}
        }
        // A file system's direct I/O leaves the cache's pages alone.
        let pages = if ino == FS_INO { 0 } else { n as u64 };
        for k in 0..pages {
            if let Some(&i) = self.map.get(&(lpn + k)) {
                match kind {
                    IoKind::Read => {
                        let p = &mut self.pages[i as usize];
                        p.flags |= LOCKED;
                        p.io = tag;
                    }
                    IoKind::Write => {
                        self.clear_dirty(i);
                        let p = &mut self.pages[i as usize];
                        p.flags |= WRITEBACK;
                        p.io = tag;
                        self.nr_wb += 1;
                    }
                    _ => {}
                }
            }
        }
        let mut waiters = Vec::new();
        if let Some(w) = waiter {
            waiters.push(w as u32);
            self.threads[w].waits += 1;
        }
        self.ios.insert(
            tag,
            Io {
                kind,
                ino,
                lpn,
                n,
                submitter: sub as u32,
                waiters,
            },
        );
        let r = HostRequest {
            arrival: self.now,
            op,
            lba,
            sectors: sectors as u32,
            stream: self.threads[sub].stream,
            tag,
            sync,
        };
        self.out_push(sub, r);
        self.pay_submit(sub);
        tag
    }

    /// The submitter pays a request's way through the block layer (an
    /// application thread moves on once it has; the flusher's CPU is
    /// booked, its own pace is the device's).
    fn pay_submit(&mut self, sub: usize) {
        let from = self.threads[sub].until.max(self.now);
        let end = self.cores.run(from, Dur(self.cpu.submit), Work::Submit);
        if sub > 0 {
            self.threads[sub].until = end;
        }
    }

    /// Submit the pages of `lpns` (sorted) as writes in contiguous runs of
    /// at most `max_req_pages`, `REQ_SYNC` when `sync` ([`wb_sync`] for
    /// writeback of `reason`); returns the pages submitted.
    fn write_runs(
        &mut self,
        sub: usize,
        ino: u32,
        lpns: &[u64],
        reason: usize,
        waiter: Option<usize>,
        sync: bool,
    ) -> u64 {
        if let Some(w) = self.ioless.as_mut() {
            w.writeback_starts(self.now, self.nr_wb);
        }
        let mut k = 0;
        let mut total = 0;
        while k < lpns.len() {
            let s = lpns[k];
            let mut e = k + 1;
            while e < lpns.len()
                && lpns[e] == lpns[e - 1] + 1
                && ((e - k) as u64) < self.max_req_pages
            {
                e += 1;
            }
            let n = (e - k) as u32;
            self.submit(sub, IoKind::Write, ino, s, n, waiter, sync);
            self.stats.wb_pages[reason] += n as u64;
            self.stats.wb_requests[reason] += 1;
            total += n as u64;
            k = e;
        }
        total
    }

    /// Submit reads of the pages in [from, from+n) that are not in the
    /// cache (contiguous runs), marking `mark` as `PG_readahead`; the pages
    /// of the caller's request are waited for by the caller separately.
    fn read_missing(&mut self, sub: usize, from: u64, n: u64, mark: Option<u64>) -> bool {
        let ino = self.threads[sub].ino;
        let end = (from + n).min(self.dev_pages);
        let mut run: Option<(u64, u32)> = None;
        let mut ok = true;
        let mut lpn = from;
        while lpn < end {
            let absent = !self.map.contains_key(&lpn);
            if absent {
                if self.get_or_insert(lpn, ino).is_none() {
                    ok = false;
                    break;
                }
                if mark == Some(lpn) {
                    let i = self.map[&lpn];
                    self.pages[i as usize].flags |= RA_MARK;
                }
                match &mut run {
                    Some((_, c)) if (*c as u64) < self.max_req_pages => *c += 1,
                    _ => {
                        if let Some((s, c)) = run.take() {
                            self.submit(sub, IoKind::Read, ino, s, c, None, false);
                            self.stats.read_requests += 1;
                            self.stats.read_pages += c as u64;
                        }
                        run = Some((lpn, 1));
                    }
                }
            } else if let Some((s, c)) = run.take() {
                self.submit(sub, IoKind::Read, ino, s, c, None, false);
                self.stats.read_requests += 1;
                self.stats.read_pages += c as u64;
            }
            lpn += 1;
        }
        if let Some((s, c)) = run.take() {
            self.submit(sub, IoKind::Read, ino, s, c, None, false);
            self.stats.read_requests += 1;
            self.stats.read_pages += c as u64;
        }
        ok
    }

    /// Readahead window `[ra.start, ra.start + ra.size)` with the marker at
    /// `size - async_size` (mm/readahead.c, `ra_submit`).
    fn ra_submit(&mut self, t: usize, req_lo: u64, req_hi: u64) -> bool {
        let ra = self.threads[t].ra;
        let mark = ra.start + ra.size - ra.async_size;
        let before = self.stats.read_pages;
        let ok = self.read_missing(t, ra.start, ra.size, Some(mark));
        // Pages read beyond the request are readahead.
        let read = self.stats.read_pages - before;
        let in_req = (req_hi.min(ra.start + ra.size)).saturating_sub(req_lo.max(ra.start));
        self.stats.readahead_pages += read.saturating_sub(in_req);
        ok
    }

    fn next_ra_size(cur: u64, max: u64) -> u64 {
        if cur < max / 16 {
            4 * cur
        } else if cur <= max / 2 {
            2 * cur
        } else {
            max
        }
    }
    fn init_ra_size(size: u64, max: u64) -> u64 {
        let n = size.next_power_of_two();
        if n <= max / 32 {
            n * 4
        } else if n <= max / 4 {
            n * 2
        } else {
            max
        }
    }

    /// `ondemand_readahead` for a miss (`hit_marker` false) or a hit on the
    /// readahead marker at page `index`, with `req` pages of the call left.
    fn ondemand(
        &mut self,
        t: usize,
        index: u64,
        req: u64,
        hit_marker: bool,
        req_lo: u64,
        req_hi: u64,
    ) -> bool {
        let max = self.ra_max.max(req.min(self.max_req_pages));
        let mut ra = self.threads[t].ra;
        let initial = |ra: &mut Ra| {
            ra.start = index;
            ra.size = Self::init_ra_size(req, max);
            ra.async_size = if ra.size > req {
                ra.size - req
            } else {
                ra.size
            };
        };
        if index == 0 {
            initial(&mut ra);
        } else if ra.size > 0
            && (index == ra.start + ra.size - ra.async_size || index == ra.start + ra.size)
        {
            ra.start += ra.size;
            ra.size = Self::next_ra_size(ra.size, max);
            ra.async_size = ra.size;
        } else if hit_marker {
            // The next page not in the cache after `index`.
            let mut start = index + 1;
            while start < index + max && self.map.contains_key(&start) {
                start += 1;
            }
            if start - index > max {
                self.threads[t].ra = ra;
                return true;
            }
            ra.start = start;
            ra.size = start - index + req;
            ra.size = Self::next_ra_size(ra.size, max);
            ra.async_size = ra.size;
        } else if req > max || ra.prev > 0 && index >= ra.prev - 1 && index - (ra.prev - 1) <= 1 {
            initial(&mut ra);
        } else {
            // A small random read: just its pages.
            self.threads[t].ra = ra;
            return self.read_missing(t, index, req, None);
        }
        if !hit_marker && index == ra.start && ra.size == ra.async_size {
            let add = Self::next_ra_size(ra.size, max);
            if ra.size + add <= max {
                ra.async_size = add;
                ra.size += add;
            } else {
                ra.size = max;
                ra.async_size = max >> 1;
            }
        }
        self.threads[t].ra = ra;
        self.ra_submit(t, req_lo, req_hi)
    }

    // ------------------------------------------------------------ threads

    fn thread_for(&mut self, stream: u32) -> usize {
        if let Some(&t) = self.by_stream.get(&stream) {
            return t;
        }
        let t = self.threads.len();
        self.threads.push(Thread::new(stream));
        self.outbox.push(VecDeque::new());
        self.asleep.push(false);
        self.by_stream.insert(stream, t);
        self.idle_empty += 1;
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
    fn fetch(&mut self) -> Result<bool, SourceError> {
        let mut got = false;
        self.app.clock(self.now);
        let cap = self.depth.saturating_mul(4).saturating_add(64);
        while !self.app_done
            && (self.outstanding < self.depth || self.outstanding < cap && self.idle_empty > 0)
        {
            got = true;
            match self.app.next_request() {
                Some(Ok(r)) => {
                    let (more, extras) = (self.app.more_follow(), self.app.call_extras());
                    self.enqueue(r, more, extras);
                }
                Some(Err(e)) => return Err(e),
                None => {
                    // Idle threads end (or make their end_fsync).
                    self.app_done = true;
                    self.ready_all();
                }
            }
        }
        // The timer's commits and those the calls asked for.
        got |= self.poll_commit();
        Ok(got)
    }

    /// Queue call `r` (with whether more pieces follow it and its extras)
    /// on its stream's thread.
    fn enqueue(&mut self, mut r: HostRequest, more: bool, extras: CallExtras) {
        if r.stream == FLUSHER_STREAM {
            r.stream = FLUSHER_STREAM - 1;
        }
        let t = self.thread_for(r.stream);
        let seq = self.next_seq;
        self.next_seq += 1;
        if Self::locks_file(&r, &extras) {
            self.writers.entry(r.tag).or_default().push_back(t as u32);
        }
        if is_file(r.tag) && !extras.unlink {
            self.users.entry(r.tag).or_default().push(seq);
        }
        if self.threads[t].stage == Stage::Done {
            // A thread that had ended (the file system's, once the
            // application was done) is woken for a commit.
            self.threads[t].stage = Stage::Idle;
            self.done -= 1;
        } else if self.idle_and_empty(t) {
            self.idle_empty -= 1;
        }
        self.threads[t].queue.push_back(r);
        self.threads[t].more.push_back((more, extras, seq));
        self.outstanding += 1;
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
        (self.app_done || !self.idle_and_empty(t)) && self.runnable(t)
    }

    /// Every thread may move (the source ended, or the run stops).
    fn ready_all(&mut self) {
        for t in 1..self.threads.len() {
            self.ready.insert(t);
        }
    }

    /// Queue `r` for the device from submitter `k`.
    fn out_push(&mut self, k: usize, r: HostRequest) {
        self.outbox[k].push_back(r);
        self.out_queued += 1;
        if !self.asleep[k] {
            self.out_ready.insert(k);
        }
    }

    fn runnable(&self, t: usize) -> bool {
        let th = &self.threads[t];
        th.waits == 0
            && th.until <= self.now
            && match th.stage {
                Stage::Done => false,
                Stage::WriteStart | Stage::DioStart => th.op.is_none_or(|r| {
                    !Self::locked_write(&r)
                        || self.writers.get(&r.tag).and_then(|q| q.front()) == Some(&(t as u32))
                }),
                Stage::CommitWait => self.app.committed(th.commit_wait),
                Stage::Unlink => th.op.is_none_or(|r| {
                    !is_file(r.tag)
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
    fn locked_write(r: &HostRequest) -> bool {
        r.op == IoOp::Write && is_file(r.tag)
    }
    /// A call that takes its file's lock, in the order the calls came: a
    /// write, and an unlink, whose pages go after the writes before it and
    /// before any write after it (a new file of the same number). It also
    /// waits for the file's other calls that came before it (`users`): in
    /// Linux `evict` runs at the last `iput`, once every call in progress
    /// on the file is done and it is closed.
    fn locks_file(r: &HostRequest, x: &CallExtras) -> bool {
        if x.unlink {
            is_file(r.tag)
        } else {
            Self::locked_write(r)
        }
    }

    /// The file whose data device page `lpn` last held (0: none known).
    fn owner(&self, lpn: u64) -> u32 {
        self.owners.get(lpn as usize).copied().unwrap_or(0)
    }
    fn set_owner(&mut self, lpn: u64, ino: u32) {
        if self.owners.is_empty() {
            // Allocated on the first file write: block-level runs never do.
            self.owners = vec![0; self.dev_pages as usize];
        }
        if let Some(o) = self.owners.get_mut(lpn as usize) {
            *o = ino;
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
            let stage = self.threads[t].stage;
            match stage {
                Stage::Idle => {
                    let th = &mut self.threads[t];
                    match th.queue.pop_front() {
                        Some(r) => {
                            let (more, extras, seq) = th.more.pop_front().unwrap_or_default();
                            th.dsync = extras.dsync;
                            let first_piece = !th.in_call;
                            // An application call enters the kernel (a
                            // file system's own I/O and metadata are the
                            // call's that made them, an unlink its
                            // deletefile's).
                            let app_call =
                                r.tag != METADATA_INO && r.tag != FS_INO && !extras.unlink;
                            let entry = if app_call && first_piece {
                                self.entry_cost(r.op)
                            } else {
                                Dur(0)
                            };
                            // The thread computes first (a hog flowop) and
                            // makes its calls without I/O: the call starts
                            // when they end, then enters the kernel.
                            let (start, entered) = if first_piece {
                                self.before_call(extras.cpu_cycles, &extras.syscalls, entry)
                            } else {
                                (self.now, self.now)
                            };
                            let th = &mut self.threads[t];
                            if first_piece {
                                th.call_started = start;
                            }
                            th.in_call = more;
                            th.seq = seq;
                            th.op = Some(r);
                            th.ino = r.tag;
                            th.own_fsync = false;
                            th.started = start;
                            th.deferred.clear();
                            th.stage = match r.op {
                                _ if extras.unlink => Stage::Unlink,
                                _ if extras.commit => Stage::CommitRun,
                                IoOp::Read | IoOp::Write if extras.direct => Stage::DioStart,
                                _ if r.tag == FS_INO => Stage::DirectStart,
                                IoOp::Read => Stage::ReadStart,
                                IoOp::Write => Stage::WriteStart,
                                IoOp::Flush => Stage::SyncStart,
                                IoOp::Trim => Stage::TrimStart,
                            };
                            self.threads[t].until = entered;
                        }
                        None => {
                            // The source is exhausted: no call will come.
                            if !self.app_done {
                                return;
                            }
                            if self.io.end_fsync && !th.ended && th.writes > 0 {
                                th.ended = true;
                                th.own_fsync = true;
                                th.op = None;
                                th.started = self.now;
                                th.stage = Stage::SyncStart;
                                self.threads[t].until = self.call_entry(IoOp::Flush);
                            } else {
                                th.stage = Stage::Done;
                                return;
                            }
                        }
                    }
                }
                Stage::ReadStart => {
                    let r = self.threads[t].op.unwrap();
                    let (lo, hi) = Self::span(&r);
                    let mut lpn = lo;
                    let mut ok = true;
                    while lpn < hi {
                        match self.map.get(&lpn).copied() {
                            Some(i) if self.pages[i as usize].flags & (UPTODATE | LOCKED) != 0 => {
                                let f = self.pages[i as usize].flags;
                                if f & RA_MARK != 0 && self.ra_max > 0 {
                                    self.pages[i as usize].flags &= !RA_MARK;
                                    ok &= self.ondemand(t, lpn, hi - lpn, true, lo, hi);
                                }
                                self.stats.hits += (f & UPTODATE != 0) as u64;
                                self.stats.misses += (f & UPTODATE == 0) as u64;
                            }
                            _ => {
                                self.stats.misses += 1;
                                ok &= if self.ra_max > 0 {
                                    self.ondemand(t, lpn, hi - lpn, false, lo, hi)
                                } else {
                                    self.read_missing(t, lpn, hi - lpn, None)
                                };
                            }
                        }
                        if !ok {
                            break;
                        }
                        lpn += 1;
                    }
                    self.threads[t].ra.prev = hi;
                    for lpn in lo..hi {
                        self.wait_page_io(t, lpn);
                    }
                    if !ok {
                        return self.reclaim_stall(t);
                    }
                    self.threads[t].stage = Stage::ReadCopy;
                }
                Stage::ReadCopy => {
                    let r = self.threads[t].op.unwrap();
                    let (lo, hi) = Self::span(&r);
                    let mut missing = false;
                    for lpn in lo..hi {
                        match self.map.get(&lpn).copied() {
                            Some(i) if self.pages[i as usize].flags & UPTODATE != 0 => {
                                self.touch(i)
                            }
                            _ => missing = true,
                        }
                    }
                    if missing {
                        // Evicted before the thread ran again: read it anew.
                        self.threads[t].stage = Stage::ReadStart;
                        continue;
                    }
                    self.stats.bytes_read += r.bytes();
                    self.threads[t].until = self.copy(&r);
                    self.threads[t].stage = Stage::Complete;
                }
                Stage::WriteStart => {
                    let r = self.threads[t].op.unwrap();
                    let (lo, hi) = Self::span(&r);
                    // A partial first or last page not in the cache is read
                    // first (write_begin).
                    let mut edges = vec![];
                    if !r.lba.is_multiple_of(SPP) {
                        edges.push(lo);
                    }
                    if !(r.lba + r.sectors as u64).is_multiple_of(SPP)
                        && (edges.is_empty() || hi - 1 != lo)
                    {
                        edges.push(hi - 1);
                    }
                    let mut ok = true;
                    let ino = r.tag;
                    for lpn in edges {
                        let up = self.map.get(&lpn).is_some_and(|&i| {
                            self.pages[i as usize].flags & (UPTODATE | LOCKED) != 0
                        });
                        // A file's page that holds none of its data (a block
                        // just allocated to it) is zero-filled, not read
                        // (`block_write_begin`); the block device's pages
                        // always hold data.
                        let holds_data = ino == 0 || self.owner(lpn) == ino;
                        if !up && holds_data {
                            ok &= self.read_missing(t, lpn, 1, None);
                            self.stats.rmw_reads += 1;
                        }
                        self.wait_page_io_read(t, lpn);
                    }
                    if !ok {
                        return self.reclaim_stall(t);
                    }
                    self.threads[t].stage = Stage::WriteDirty;
                }
                Stage::WriteDirty => {
                    let r = self.threads[t].op.unwrap();
                    let (lo, hi) = Self::span(&r);
                    for lpn in lo..hi {
                        let ino = self.threads[t].ino;
                        let Some(i) = self.get_or_insert(lpn, ino) else {
                            return self.reclaim_stall(t);
                        };
                        if self.pages[i as usize].flags & LOCKED != 0 {
                            // A read of the page is in flight: wait for it.
                            self.wait_page_io(t, lpn);
                            return;
                        }
                        self.pages[i as usize].flags |= UPTODATE;
                        self.touch(i);
                        // `account_page_dirtied`: a page newly dirty counts
                        // for the task (`task_dirty_inc` on 2.6.35;
                        // `current->nr_dirtied` and `WB_DIRTIED` later).
                        let p = &self.pages[i as usize];
                        if p.flags & DIRTY == 0 || p.ino != ino {
                            let th = &mut self.threads[t];
                            if let Some(b) = self.bdp.as_mut() {
                                b.dirtied(&mut th.dirties);
                            }
                            if let Some(w) = self.ioless.as_mut() {
                                w.dirtied += 1;
                                th.pace.nr_dirtied += 1;
                            }
                        }
                        self.set_dirty(i, ino);
                        if ino != 0 && ino != METADATA_INO {
                            self.set_owner(lpn, ino);
                        }
                    }
                    if r.tag == METADATA_INO {
                        // A file system's metadata update: dirtied in
                        // memory by the call that made it, at no cost to
                        // the thread, and not an application call.
                        self.stats.metadata_pages += hi - lo;
                        self.outstanding -= 1;
                        let th = &mut self.threads[t];
                        th.op = None;
                        th.stage = Stage::Idle;
                        continue;
                    }
                    self.stats.bytes_written += r.bytes();
                    self.threads[t].until = self.copy(&r);
                    self.threads[t].stage = Stage::WriteCopied;
                }
                Stage::WriteCopied if self.bdp.is_some() => {
                    // 2.6.35's balance_dirty_pages_ratelimited_nr, once for
                    // the call's pages (the kernel checks after each).
                    let r = self.threads[t].op.unwrap();
                    let (lo, hi) = Self::span(&r);
                    let b = self.bdp.as_mut().expect("2.6.35");
                    b.since += hi - lo;
                    let limit = if b.exceeded { 8 } else { b.ratelimit };
                    let th = &mut self.threads[t];
                    if b.since >= limit {
                        th.bal = Balance {
                            chunk: b.since.max(b.ratelimit) * 3 / 2,
                            pause: Bdp::first_pause(),
                            ..Balance::default()
                        };
                        b.since = 0;
                        th.stage = Stage::Balance;
                        th.throttled_since = self.now;
                    } else {
                        th.stage = Stage::WriteBalanced;
                    }
                }
                Stage::Balance => {
                    let done = if self.bdp.is_some() {
                        self.balance_dirty_pages(t)
                    } else {
                        self.balance_io_less(t)
                    };
                    if done {
                        let th = &mut self.threads[t];
                        if th.bal.over {
                            let w = self.now.0 - th.throttled_since.0;
                            self.stats.throttled += 1;
                            self.stats.throttle_ns += w as u128;
                            self.stats.throttle_max_ns = self.stats.throttle_max_ns.max(w);
                        }
                        th.stage = Stage::WriteBalanced;
                    }
                }
                Stage::WriteCopied => {
                    // `balance_dirty_pages_ratelimited_flags`: checked once
                    // the thread has dirtied `nr_dirtied_pause` pages (at
                    // most 32 KiB of them while the limit is exceeded).
                    let exceeded = self.ioless.as_ref().is_some_and(|w| w.exceeded);
                    let th = &mut self.threads[t];
                    let limit = if exceeded {
                        th.pace.nr_dirtied_pause.min(8)
                    } else {
                        th.pace.nr_dirtied_pause
                    };
                    if th.pace.nr_dirtied >= limit {
                        th.bal = Balance::default();
                        th.stage = Stage::Balance;
                        th.throttled_since = self.now;
                    } else {
                        th.stage = Stage::WriteBalanced;
                    }
                }
                Stage::WriteBalanced => {
                    if let Some(r) = self.threads[t].op.filter(Self::locked_write) {
                        self.unlock(r.tag, t);
                    }
                    let th = &mut self.threads[t];
                    th.writes += 1;
                    th.stage = if self.io.sync || th.dsync {
                        Stage::SyncStart
                    } else {
                        Stage::Complete
                    };
                }
                Stage::SyncStart => {
                    // fsync of the inode (a Flush call, fsync=N, end_fsync)
                    // or O_SYNC of the pages just written.
                    self.threads[t].fs_asked = false;
                    self.threads[t].fs_steps.clear();
                    self.threads[t].fs_no_flush = false;
                    let th = &self.threads[t];
                    let ino = th.ino;
                    let whole = th.own_fsync || th.op.is_none_or(|r| r.op == IoOp::Flush);
                    let reason = if whole { WB_FSYNC } else { WB_SYNC_WRITE };
                    let candidates: Vec<u64> = if whole {
                        self.inodes
                            .get(&ino)
                            .map(|n| n.dirty.iter().copied().collect())
                            .unwrap_or_default()
                    } else {
                        let (lo, hi) = Self::span(&th.op.unwrap());
                        (lo..hi).collect()
                    };
                    let mut now_w = Vec::new();
                    let mut deferred = Vec::new();
                    for &lpn in &candidates {
                        if let Some(&i) = self.map.get(&lpn) {
                            let f = self.pages[i as usize].flags;
                            if f & DIRTY != 0 && f & WRITEBACK == 0 {
                                now_w.push(lpn);
                            } else if f & DIRTY != 0 {
                                deferred.push(lpn);
                            }
                        }
                    }
                    // Wait for every page under writeback (of the inode, or
                    // of the range).
                    if whole {
                        self.wait_inode_writes(t, ino);
                    } else {
                        for &lpn in &candidates {
                            self.wait_page_io_write(t, lpn);
                        }
                    }
                    self.write_runs(t, ino, &now_w, reason, Some(t), wb_sync(reason));
                    self.threads[t].deferred = deferred;
                    self.threads[t].stage = Stage::SyncWait;
                }
                Stage::SyncWait => {
                    let deferred = std::mem::take(&mut self.threads[t].deferred);
                    if deferred.is_empty() {
                        let th = &self.threads[t];
                        let whole = th.own_fsync || th.op.is_none_or(|r| r.op == IoOp::Flush);
                        if whole && !th.fs_asked {
                            // The file's data is written: what the file
                            // system writes before the flush.
                            let ino = th.ino;
                            self.threads[t].fs_asked = true;
                            let io = self.app.fsync_io(ino, self.now);
                            self.threads[t].fs_no_flush = io.no_flush;
                            let wait = io.wait;
                            self.threads[t].fs_steps = Self::fs_steps_of(io);
                            if let Some(w) = wait {
                                self.threads[t].commit_wait = w.tid;
                                self.stats.commit_waits += 1;
                            }
                            let _ = self.poll_commit();
                        }
                        if let Some(step) = self.threads[t].fs_steps.pop_front() {
                            self.fs_step(t, step);
                            continue;
                        }
                        if self.threads[t].commit_wait != 0 {
                            // jbd2_log_wait_commit: until the file system's
                            // thread has written the transaction.
                            self.threads[t].stage = Stage::CommitWait;
                            continue;
                        }
                        if self.threads[t].fs_no_flush {
                            // barrier=0: the file system issues no flush.
                            self.threads[t].stage = Stage::Complete;
                            continue;
                        }
                        let ino = self.threads[t].ino;
                        self.submit(t, IoKind::Flush, ino, 0, 0, Some(t), false);
                        self.stats.flushes += 1;
                        self.threads[t].stage = Stage::Complete;
                        continue;
                    }
                    let th = &self.threads[t];
                    let whole = th.own_fsync || th.op.is_none_or(|r| r.op == IoOp::Flush);
                    let reason = if whole { WB_FSYNC } else { WB_SYNC_WRITE };
                    let mut now_w = Vec::new();
                    let mut again = Vec::new();
                    for lpn in deferred {
                        if let Some(&i) = self.map.get(&lpn) {
                            let f = self.pages[i as usize].flags;
                            if f & DIRTY != 0 && f & WRITEBACK == 0 {
                                now_w.push(lpn);
                            } else if f & DIRTY != 0 {
                                again.push(lpn);
                                self.wait_page_io_write(t, lpn);
                            }
                        }
                    }
                    let ino = self.threads[t].ino;
                    self.write_runs(t, ino, &now_w, reason, Some(t), wb_sync(reason));
                    self.threads[t].deferred = again;
                }
                Stage::DioStart => {
                    // filemap_write_and_wait_range (iomap_dio_rw,
                    // 2.6.35's generic_file_aio_write / _read): the
                    // range's dirty pages written back, those under I/O
                    // waited for.
                    let r = self.threads[t].op.unwrap();
                    let (lo, hi) = Self::span(&r);
                    let now_w = self.dirty_to_write(t, lo..hi, true);
                    self.write_runs(t, r.tag, &now_w, WB_SYNC_WRITE, Some(t), true);
                    self.threads[t].stage = Stage::DioSubmit;
                }
                Stage::DioSubmit => {
                    let r = self.threads[t].op.unwrap();
                    let (lo, hi) = Self::span(&r);
                    if r.op == IoOp::Write {
                        // kiocb_invalidate_pages: the cached copies of the
                        // range leave the cache, the device's are newer.
                        for lpn in lo..hi {
                            if let Some(&i) = self.map.get(&lpn) {
                                if self.pages[i as usize].flags & (DIRTY | WRITEBACK | LOCKED) == 0
                                {
                                    self.remove_page(i);
                                }
                            }
                        }
                        self.stats.bytes_written += r.bytes();
                        self.stats.dio_written += r.bytes();
                        if Self::locked_write(&r) {
                            self.unlock(r.tag, t);
                        }
                        self.threads[t].writes += 1;
                    } else {
                        self.stats.bytes_read += r.bytes();
                        self.stats.dio_read += r.bytes();
                    }
                    self.submit_direct(t, &r);
                    // O_DSYNC as well (oltp's log writes): once the write
                    // is done, generic_write_sync of the range, the
                    // device flush.
                    let th = &mut self.threads[t];
                    th.stage = if r.op == IoOp::Write && (self.io.sync || th.dsync) {
                        Stage::SyncStart
                    } else {
                        Stage::Complete
                    };
                }
                Stage::CommitWait => {
                    // The transaction is on disk: the fsync ends as it
                    // would have after a commit of its own.
                    self.threads[t].commit_wait = 0;
                    self.threads[t].stage = Stage::SyncWait;
                }
                Stage::CommitRun => {
                    if !self.threads[t].fs_asked {
                        // kjournald2 takes the transaction asked for and
                        // writes it: its ordered data, log and commit block,
                        // then the commit block's flush (FUA) with barriers.
                        self.threads[t].fs_asked = true;
                        if let Some(io) = self.app.commit_io(self.now) {
                            let no_flush = io.no_flush;
                            let mut steps = Self::fs_steps_of(io);
                            if !no_flush {
                                steps.push_back(FsStep::Flush);
                            }
                            self.threads[t].fs_steps = steps;
                        }
                    }
                    if let Some(step) = self.threads[t].fs_steps.pop_front() {
                        self.fs_step(t, step);
                        continue;
                    }
                    // The commit is on disk: the fsyncs waiting for it go
                    // on (`wake_up(&journal->j_wait_done_commit)`).
                    self.app.commit_done(self.now);
                    self.stats.commits += 1;
                    for u in 1..self.threads.len() {
                        if self.threads[u].stage == Stage::CommitWait {
                            self.ready.insert(u);
                        }
                    }
                    self.outstanding -= 1;
                    let th = &mut self.threads[t];
                    th.fs_asked = false;
                    th.op = None;
                    th.stage = Stage::Idle;
                }
                Stage::DirectStart => {
                    let r = self.threads[t].op.unwrap();
                    let (lo, hi) = Self::span(&r);
                    let kind = match r.op {
                        IoOp::Read => IoKind::Read,
                        IoOp::Write => IoKind::Write,
                        IoOp::Trim => IoKind::Trim,
                        IoOp::Flush => {
                            self.stats.fs_flushes += 1;
                            self.stats.flushes += 1;
                            IoKind::Flush
                        }
                    };
                    self.submit(t, kind, FS_INO, lo, (hi - lo) as u32, Some(t), r.sync);
                    self.threads[t].stage = Stage::DirectDone;
                }
                Stage::DirectDone => {
                    // Not an application call: no latency recorded.
                    self.outstanding -= 1;
                    let th = &mut self.threads[t];
                    th.op = None;
                    th.stage = Stage::Idle;
                }
                Stage::TrimStart => {
                    let r = self.threads[t].op.unwrap();
                    self.stats.bytes_trimmed += r.bytes();
                    let (lo, hi) = Self::span(&r);
                    for lpn in lo..hi {
                        self.wait_page_io(t, lpn);
                    }
                    self.threads[t].stage = Stage::TrimDrop;
                }
                Stage::TrimDrop => {
                    let r = self.threads[t].op.unwrap();
                    let (lo, hi) = Self::span(&r);
                    if self.pages_busy(lo, hi) {
                        for lpn in lo..hi {
                            self.wait_page_io(t, lpn);
                        }
                        continue;
                    }
                    // Whole pages only leave the cache; partial ones keep
                    // their (stale) data, as truncate_inode_pages_range zeroes
                    // them.
                    let (flo, fhi) = (r.lba.div_ceil(SPP), (r.lba + r.sectors as u64) / SPP);
                    for lpn in flo..fhi {
                        if let Some(&i) = self.map.get(&lpn) {
                            self.clear_dirty(i);
                            self.remove_page(i);
                        }
                    }
                    // The trim itself, sector-exact, as the call gave it.
                    let tag = self.new_tag();
                    self.ios.insert(
                        tag,
                        Io {
                            kind: IoKind::Trim,
                            ino: r.tag,
                            lpn: lo,
                            n: 0,
                            submitter: t as u32,
                            waiters: vec![t as u32],
                        },
                    );
                    self.threads[t].waits += 1;
                    let stream = self.threads[t].stream;
                    let trim = HostRequest {
                        arrival: self.now,
                        tag,
                        stream,
                        ..r
                    };
                    self.out_push(t, trim);
                    self.stats.trims += 1;
                    self.threads[t].stage = Stage::Complete;
                }
                Stage::Unlink => {
                    // evict -> truncate_inode_pages_final (mm/truncate.c):
                    // the file's last reference is gone, and every page of
                    // its mapping leaves the cache. Taken with the file's
                    // lock once the calls on it that came before are done
                    // (`runnable`): the writes before the unlink have
                    // dirtied their pages, none after it has begun.
                    let ino = self.threads[t].op.unwrap().tag;
                    self.stats.unlinks += 1;
                    let busy = self.unlink_pages(t, ino);
                    self.stats.unlink_waited_pages += busy.len() as u64;
                    self.threads[t].deferred = busy;
                    self.threads[t].stage = Stage::UnlinkWait;
                }
                Stage::UnlinkWait => {
                    let ino = self.threads[t].op.unwrap().tag;
                    let mut again = Vec::new();
                    for lpn in std::mem::take(&mut self.threads[t].deferred) {
                        // A page written meanwhile by another file (a block
                        // the file system gave it) is that file's now.
                        let Some(&i) = self.map.get(&lpn) else {
                            continue;
                        };
                        if self.pages[i as usize].ino == ino && !self.unlink_page(t, i) {
                            again.push(lpn);
                        }
                    }
                    if !again.is_empty() {
                        self.threads[t].deferred = again;
                        continue;
                    }
                    if is_file(ino) {
                        self.unlock(ino, t);
                        // The inode is gone: a new file of the same number
                        // starts writeback from its first page.
                        if self
                            .inodes
                            .get(&ino)
                            .is_some_and(|n| n.first == NONE && n.dirty.is_empty())
                        {
                            self.inodes.remove(&ino);
                        }
                    }
                    // Not an application call: no latency recorded.
                    self.outstanding -= 1;
                    let th = &mut self.threads[t];
                    th.op = None;
                    th.stage = Stage::Idle;
                }
                Stage::Complete => {
                    let th = &mut self.threads[t];
                    // A call in pieces is timed from its first piece's start.
                    let since = if th.op.is_some() {
                        th.call_started
                    } else {
                        th.started
                    };
                    let lat = self.now.0 - since.0;
                    let kind = match th.op {
                        Some(r) => match r.op {
                            IoOp::Read => 0,
                            IoOp::Write => 1,
                            IoOp::Trim => 2,
                            IoOp::Flush => 3,
                        },
                        // fio's fsync=N or end_fsync: a call of the thread's own.
                        None => 3,
                    };
                    // A piece more pieces of its call follow is not a call.
                    if !(th.op.is_some() && th.in_call) {
                        self.stats.lat[kind].record(lat);
                        self.stats.calls_ns += lat as u128;
                    }
                    if th.op.is_some() {
                        self.outstanding -= 1;
                    }
                    let done = th.op.map(|r| (r.tag, th.seq));
                    self.stats.last_end = self.now;
                    let fsync_due = kind == 1
                        && self.io.fsync > 0
                        && !self.io.sync
                        && th.writes.is_multiple_of(self.io.fsync);
                    th.op = None;
                    th.own_fsync = fsync_due;
                    if fsync_due {
                        th.started = self.now;
                        th.deferred.clear();
                        th.stage = Stage::SyncStart;
                        self.threads[t].until = self.call_entry(IoOp::Flush);
                    } else {
                        th.stage = Stage::Idle;
                    }
                    if let Some((ino, seq)) = done {
                        self.call_done(ino, seq);
                    }
                }
                Stage::Done => return,
            }
        }
    }

    /// The call `seq` on file `ino` is done (or dropped): an unlink of the
    /// file that waits for the calls before it may go.
    fn call_done(&mut self, ino: u32, seq: u64) {
        if !is_file(ino) {
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

    /// The steps of what a file system writes in an fsync after the file's
    /// data, or in a journal commit, each waited for before the next: the
    /// ordered data, the metadata, then the log with its commit block as
    /// the file system flags and orders them.
    fn fs_steps_of(io: FsyncIo) -> VecDeque<FsStep> {
        let mut steps = VecDeque::new();
        // jbd's `journal_submit_data_buffers` (jbd2: per inode,
        // `jbd2_journal_submit_inode_data_buffers`) submits all of it, and
        // the commit waits for it before its commit block; ReiserFS's
        // `write_ordered_buffers` before its log. Here the log follows the
        // data's writeback in both.
        if !io.ordered.is_empty() {
            steps.push_back(FsStep::Ordered(io.ordered, io.sync.ordered));
        }
        if !io.metadata.is_empty() {
            steps.push_back(FsStep::Metadata(io.metadata));
        }
        // The log blocks and the commit block with their REQ_SYNC as the
        // file system marks them.
        let sync = io.sync;
        let mut direct: Vec<(u64, u32, bool)> =
            io.direct.iter().map(|&(l, n)| (l, n, sync.log)).collect();
        if io.barrier_each {
            // Each run a barrier write of its own: a flush before it.
            for (l, n, _) in direct {
                steps.push_back(FsStep::Flush);
                steps.push_back(FsStep::Direct(vec![(l, n, sync.commit)]));
            }
        } else if !io.barrier && sync.log == sync.commit {
            // One submission, the runs as they are.
            if !direct.is_empty() {
                steps.push_back(FsStep::Direct(direct));
            }
        } else if let Some(last) = direct.last_mut() {
            // The commit block a request of its own: after a flush with
            // barriers, or in the same submission with its own flag.
            let cb = (last.0 + last.1 as u64 - 1, 1, sync.commit);
            last.1 -= 1;
            if last.1 == 0 {
                direct.pop();
            }
            if io.barrier {
                if !direct.is_empty() {
                    steps.push_back(FsStep::Direct(direct));
                }
                steps.push_back(FsStep::Flush);
                steps.push_back(FsStep::Direct(vec![cb]));
            } else {
                direct.push(cb);
                steps.push_back(FsStep::Direct(direct));
            }
        }
        steps
    }

    /// kjournald2 is woken for a commit the file system asked for (an
    /// fsync's `jbd2_log_start_commit`, the commit timer, a full
    /// transaction): the file system's thread gets a commit call, after
    /// what it has queued (the file system counts it as asked for, so an
    /// fsync may wait for it, also after the application's last call).
    fn poll_commit(&mut self) -> bool {
        if !self.app.take_commit() {
            return false;
        }
        let stream = self.app.journal_stream();
        let r = HostRequest {
            arrival: self.now,
            op: IoOp::Flush,
            lba: 0,
            sectors: 0,
            stream,
            tag: FS_INO,
            sync: false,
        };
        let extras = CallExtras {
            commit: true,
            ..CallExtras::default()
        };
        self.enqueue(r, false, extras);
        true
    }

    /// An O_DIRECT call's request, sector-exact, in pieces of at most
    /// `max_sectors_kb` (the block layer's split), each waited for by `t`;
    /// a write is `REQ_SYNC` (`iomap_dio_bio_opflags`, 2.6.35's
    /// `WRITE_ODIRECT_PLUG`). No page of the cache is touched.
    fn submit_direct(&mut self, t: usize, r: &HostRequest) {
        let kind = if r.op == IoOp::Write {
            IoKind::Write
        } else {
            IoKind::Read
        };
        let max = self.max_req_pages * SPP;
        let (mut at, end) = (r.lba, r.lba + r.sectors as u64);
        while at < end {
            let k = (end - at).min(max);
            let tag = self.new_tag();
            self.ios.insert(
                tag,
                Io {
                    kind,
                    ino: r.tag,
                    lpn: at / SPP,
                    n: 0,
                    submitter: t as u32,
                    waiters: vec![t as u32],
                },
            );
            self.threads[t].waits += 1;
            let req = HostRequest {
                arrival: self.now,
                op: r.op,
                lba: at,
                sectors: k as u32,
                stream: self.threads[t].stream,
                tag,
                sync: r.op == IoOp::Write,
            };
            self.out_push(t, req);
            self.pay_submit(t);
            at += k;
        }
    }

    /// Of the cached pages among `lpns`, those dirty and not under
    /// writeback, to write now; thread `t` waits for those under writeback
    /// (and, with `reads`, for those being read).
    fn dirty_to_write(
        &mut self,
        t: usize,
        lpns: impl IntoIterator<Item = u64>,
        reads: bool,
    ) -> Vec<u64> {
        let mut now_w = Vec::new();
        for lpn in lpns {
            if let Some(&i) = self.map.get(&lpn) {
                let f = self.pages[i as usize].flags;
                if f & DIRTY != 0 && f & WRITEBACK == 0 {
                    now_w.push(lpn);
                } else if f & WRITEBACK != 0 || reads && f & LOCKED != 0 {
                    self.wait_page_io(t, lpn);
                }
            }
        }
        now_w
    }

    /// Thread `t` waits for every write of file `ino` in flight.
    fn wait_inode_writes(&mut self, t: usize, ino: u32) {
        let mut n = 0;
        for io in self.ios.values_mut() {
            if io.kind == IoKind::Write && io.ino == ino && !io.waiters.contains(&(t as u32)) {
                io.waiters.push(t as u32);
                n += 1;
            }
        }
        self.threads[t].waits += n;
    }

    /// Submit a step of an fsync's file-system writes; the thread waits
    /// for it.
    fn fs_step(&mut self, t: usize, step: FsStep) {
        match step {
            FsStep::Ordered(inos, sync) => {
                for ino in inos {
                    let dirty: Vec<u64> = self
                        .inodes
                        .get(&ino)
                        .map(|n| n.dirty.iter().copied().collect())
                        .unwrap_or_default();
                    let now_w = self.dirty_to_write(t, dirty, false);
                    self.wait_inode_writes(t, ino);
                    self.write_runs(t, ino, &now_w, WB_FSYNC, Some(t), sync);
                }
            }
            FsStep::Metadata(mut lpns) => {
                lpns.sort_unstable();
                lpns.dedup();
                let now_w = self.dirty_to_write(t, lpns, false);
                self.write_runs(
                    t,
                    METADATA_INO,
                    &now_w,
                    WB_FSYNC,
                    Some(t),
                    wb_sync(WB_FSYNC),
                );
            }
            FsStep::Direct(runs) => {
                for (lpn, n, sync) in runs {
                    // At most max_sectors_kb per request, as any submitter.
                    let mut at = lpn;
                    let end = lpn + n as u64;
                    while at < end {
                        let k = (end - at).min(self.max_req_pages);
                        self.submit(t, IoKind::Write, FS_INO, at, k as u32, Some(t), sync);
                        at += k;
                    }
                }
            }
            FsStep::Flush => {
                self.submit(t, IoKind::Flush, FS_INO, 0, 0, Some(t), false);
                self.stats.flushes += 1;
                self.stats.fs_flushes += 1;
            }
        }
    }

    /// Every page of file `ino` leaves the cache, its dirty pages cleaned
    /// unwritten; the pages with I/O in flight, which thread `t` then
    /// waits for, stay (the file's) and are returned.
    fn unlink_pages(&mut self, t: usize, ino: u32) -> Vec<u64> {
        let Some(node) = self.inodes.get_mut(&ino) else {
            return Vec::new();
        };
        let mut at = std::mem::replace(&mut node.first, NONE);
        let dirty = std::mem::take(&mut node.dirty);
        if !dirty.is_empty() {
            // truncate_cleanup_folio -> folio_cancel_dirty ->
            // folio_account_cleaned, for each dirty page (here at once):
            // the pages leave the dirty count that balance_dirty_pages and
            // the flusher go by, and the file leaves b_dirty. A page under
            // writeback is cleaned too: nothing can write it any more (the
            // inode is unreachable; Linux cancels its dirty bit once the
            // wait below is over, to the same effect).
            self.b_dirty.remove(&(node.dirtied_when, ino));
            self.nr_dirty -= dirty.len() as u64;
            self.stats.unlink_dirty_pages += dirty.len() as u64;
            for lpn in &dirty {
                let i = self.map[lpn];
                self.pages[i as usize].flags &= !DIRTY;
            }
        }
        // The list is taken whole: the pages that stay join it again.
        let mut busy = Vec::new();
        while at != NONE {
            let i = at;
            let p = self.pages[i as usize];
            at = p.fnext;
            if p.io != NONE {
                // truncate_inode_pages_range: folio_wait_writeback, or the
                // folio lock of a read in flight; the page goes after.
                self.wait_page_io(t, p.lpn);
                self.page_joins(i);
                busy.push(p.lpn);
            } else {
                self.map.remove(&p.lpn);
                self.lru_unlink(i);
                self.free.push(i);
                self.stats.unlink_pages += 1;
            }
        }
        busy
    }

    /// Page `i` of a file being unlinked, whose I/O thread `t` waited for,
    /// leaves the cache; false if it has I/O in flight (again), which the
    /// thread then waits for.
    fn unlink_page(&mut self, t: usize, i: u32) -> bool {
        let p = self.pages[i as usize];
        if p.flags & DIRTY != 0 {
            // Cleaned unwritten, as in `unlink_pages` (none should be: the
            // file's writers wait for its lock).
            self.clear_dirty(i);
            self.stats.unlink_dirty_pages += 1;
        }
        if p.io != NONE {
            // truncate_inode_pages_range: folio_wait_writeback, or the
            // folio lock of a read in flight.
            self.wait_page_io(t, p.lpn);
            return false;
        }
        self.remove_page(i);
        self.stats.unlink_pages += 1;
        true
    }

    fn pages_busy(&self, lo: u64, hi: u64) -> bool {
        (lo..hi).any(|lpn| {
            self.map
                .get(&lpn)
                .is_some_and(|&i| self.pages[i as usize].io != NONE)
        })
    }

    /// Wait for a read in flight on `lpn` (not for a writeback).
    fn wait_page_io_read(&mut self, t: usize, lpn: u64) {
        if let Some(&i) = self.map.get(&lpn) {
            if self.pages[i as usize].flags & LOCKED != 0 {
                self.wait_page_io(t, lpn);
            }
        }
    }
    /// Wait for a writeback in flight on `lpn`.
    fn wait_page_io_write(&mut self, t: usize, lpn: u64) {
        if let Some(&i) = self.map.get(&lpn) {
            if self.pages[i as usize].flags & WRITEBACK != 0 {
                self.wait_page_io(t, lpn);
            }
        }
    }
    /// Reclaim found nothing to evict: the thread waits for its I/O, or for
    /// the next completion if it has none in flight.
    fn reclaim_stall(&mut self, t: usize) {
        self.stats.reclaim_waits += 1;
        if self.threads[t].waits == 0 {
            self.wait_any(t);
        }
    }

    /// Wait for the next completion (reclaim found nothing to evict); the
    /// flusher writes meanwhile, so that dirty pages become evictable.
    fn wait_any(&mut self, t: usize) {
        self.reclaim_waiters.push(t as u32);
        self.threads[t].waits += 1;
        self.flusher_bg = true;
    }

    // ------------------------------------------------------------ flusher

    /// The flusher's next chunk, if it is awake, has nothing queued and has
    /// work.
    fn flusher_step(&mut self) {
        // The periodic wakeup is taken when due, busy or not (a busy
        // flusher does the kupdate pass after its current work).
        if let Some(t) = self.next_periodic {
            if t <= self.now {
                self.kupdate = true;
                self.next_periodic = if self.nr_dirty == 0 {
                    None
                } else {
                    Some(self.now + self.period())
                };
            }
        }
        if self.asleep[0] || !self.outbox[0].is_empty() || self.flusher_stalled {
            return;
        }
        if self.app_finished() {
            return;
        }
        let reclaim = !self.reclaim_waiters.is_empty() && self.nr_dirty > 0;
        let expire = self.expire();
        let reason = if self.flusher_bg && (self.nr_dirty > self.plan.background_pages || reclaim) {
            WB_BACKGROUND
        } else {
            self.flusher_bg = false;
            let expired = self
                .b_dirty
                .first()
                .is_some_and(|&(w, _)| w + expire <= self.now);
            if self.kupdate && expired {
                WB_PERIODIC
            } else {
                self.kupdate = false;
                return;
            }
        };
        if self.writeback_pass(0, reason, MAX_WRITEBACK_PAGES) == 0 {
            self.flusher_stalled = true;
        }
    }

    /// One writeback pass (one plug) from submitter `sub` (the flusher, or
    /// a writer in 2.6.35's `balance_dirty_pages`): files oldest-dirtied
    /// first, each from its cursor (wrapping, skipping pages under
    /// writeback), until `limit` pages are written; a kupdate pass takes
    /// expired files only. A file left dirty keeps its place (its
    /// dirtied_when). Returns the pages written.
    fn writeback_pass(&mut self, sub: usize, reason: usize, limit: usize) -> usize {
        let expire = self.expire();
        let files: Vec<(SimTime, u32)> = self.b_dirty.iter().take(limit).copied().collect();
        let mut total = 0;
        for (w, ino) in files {
            if reason == WB_PERIODIC && w + expire > self.now {
                break;
            }
            let node = &self.inodes[&ino];
            let from = node.cursor;
            let room = limit - total;
            let mut chunk = Vec::new();
            for &lpn in node.dirty.range(from..).chain(node.dirty.range(..from)) {
                if chunk.len() >= room {
                    break;
                }
                let i = self.map[&lpn];
                if self.pages[i as usize].flags & WRITEBACK == 0 {
                    chunk.push(lpn);
                }
            }
            if chunk.is_empty() {
                continue;
            }
            // Ascending from the cursor: the part before the wrap, then
            // the part after it.
            let last = *chunk.last().unwrap();
            let split = chunk.iter().position(|&l| l < from).unwrap_or(chunk.len());
            let (a, b) = chunk.split_at(split);
            self.write_runs(sub, ino, a, reason, None, wb_sync(reason));
            self.write_runs(sub, ino, b, reason, None, wb_sync(reason));
            if let Some(n) = self.inodes.get_mut(&ino) {
                n.cursor = last + 1;
            }
            total += chunk.len();
            if total >= limit {
                break;
            }
        }
        total
    }

    /// One round of a current kernel's `balance_dirty_pages` for writer
    /// `t` ([`IoLess::balance`]); true when it returns, false when it
    /// pauses (`until`). A writer that woke from a pause returns, unless its
    /// rate was 0 (over the limit), when it checks again.
    fn balance_io_less(&mut self, t: usize) -> bool {
        let bal = self.threads[t].bal;
        if bal.paused && !bal.again {
            return true;
        }
        let (nr_dirty, used) = (self.nr_dirty(), self.nr_dirty() + self.nr_wb);
        let (thresh, bg) = (self.plan.dirty_pages, self.plan.background_pages);
        let w = self.ioless.as_mut().expect("a current kernel");
        let th = &mut self.threads[t];
        let (d, start_bg) = w.balance(&mut th.pace, self.now, nr_dirty, used, thresh, bg);
        if start_bg {
            self.flusher_bg = true;
        }
        match d {
            Decision::Return => true,
            Decision::Pause { pause, again } => {
                th.bal = Balance {
                    over: true,
                    paused: true,
                    again,
                    ..th.bal
                };
                th.until = th.until.max(self.now) + pause;
                false
            }
        }
    }

    /// One round of 2.6.35's `balance_dirty_pages` for writer `t` (see
    /// [`Bdp`]); true when it returns, false when it pauses (`until`).
    ///
    /// The limit is the device's share of the dirty threshold (all of it:
    /// one device writes) less up to an eighth by the task's share of the
    /// pages dirtied lately (`get_dirty_limits`, `task_dirty_limit`). Under
    /// it, or under the midpoint of the two thresholds globally, it
    /// returns; otherwise it marks the limit exceeded, writes back up to
    /// its chunk itself while dirty pages exceed the limit
    /// (`writeback_inodes_wb`, WB_SYNC_NONE), and returns once under the
    /// limit or its chunk is written, else pauses 1 jiffy, doubling to
    /// 100 ms. On the way out it clears the exceeded mark when under the
    /// limit and starts background writeback above that threshold.
    fn balance_dirty_pages(&mut self, t: usize) -> bool {
        let (dirty, bg) = (self.plan.dirty_pages, self.plan.background_pages);
        let b = self.bdp.as_ref().expect("2.6.35");
        let limit = b.task_limit(&mut self.threads[t].dirties, dirty);
        let used = |s: &Self| s.nr_dirty() + s.nr_wb;
        let mut done = used(self) <= limit || used(self) < (bg + dirty) / 2;
        if !done {
            self.bdp.as_mut().expect("2.6.35").exceeded = true;
            self.threads[t].bal.over = true;
            let bal = self.threads[t].bal;
            if self.nr_dirty() > limit && bal.written < bal.chunk {
                let n = self.writeback_pass(t, WB_BALANCE, (bal.chunk - bal.written) as usize);
                self.threads[t].bal.written += n as u64;
            }
            let bal = self.threads[t].bal;
            done = used(self) <= limit || bal.written >= bal.chunk;
            if !done {
                // The pause follows the writeback it submitted.
                let th = &mut self.threads[t];
                th.until = th.until.max(self.now) + bal.pause;
                th.bal.pause = Bdp::next_pause(bal.pause);
                return false;
            }
        }
        if used(self) < limit {
            self.bdp.as_mut().expect("2.6.35").exceeded = false;
        }
        if self.nr_dirty() > bg {
            self.flusher_bg = true;
        }
        true
    }

    fn app_finished(&self) -> bool {
        self.app_done && self.outstanding == 0 && self.done + 1 == self.threads.len()
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
                self.idle_empty =
                    self.idle_empty + self.idle_and_empty(t) as usize - was_idle as usize;
                self.done += (before.0 != Stage::Done && after.0 == Stage::Done) as usize;
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
            if is_file(p.ino) {
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
        &self.stats.lat
    }

    /// The report's `page_cache` and `app` sections.
    fn sections(&self) -> Vec<(String, serde_json::Value)> {
        let s = &self.stats;
        let start = self.start.unwrap_or(SimTime::ZERO);
        let app_end = s.last_end.max(start);
        let secs = app_end.since(start).secs_f64();
        let lat: Vec<LatencySummary> = s.lat.iter().map(|h| h.summary()).collect();
        let calls: u64 = lat.iter().map(|l| l.count).sum();
        let per_s = |n: u64| if secs > 0.0 { n as f64 / secs } else { 0.0 };
        let reasons = |a: &[u64; 5]| {
            let mut v = serde_json::json!({
                "background": a[WB_BACKGROUND],
                "periodic": a[WB_PERIODIC],
                "fsync": a[WB_FSYNC],
                "sync_write": a[WB_SYNC_WRITE],
            });
            if self.bdp.is_some() {
                v["balance_dirty_pages"] = a[WB_BALANCE].into();
            }
            v
        };
        let wb_pages: u64 = s.wb_pages.iter().sum();
        let wb_reqs: u64 = s.wb_requests.iter().sum();
        let looked = s.hits + s.misses;
        vec![
            (
                "app".to_string(),
                serde_json::json!({
                    "calls": calls,
                    "reads": lat[0].count,
                    "writes": lat[1].count,
                    "trims": lat[2].count,
                    "fsyncs": lat[3].count,
                    "bytes_read": s.bytes_read,
                    "bytes_written": s.bytes_written,
                    "bytes_trimmed": s.bytes_trimmed,
                    "time_s": secs,
                    "cpu_s": s.cpu_ns as f64 * 1e-9,
                    "iops": per_s(calls - lat[3].count),
                    "mbps": if secs > 0.0 { (s.bytes_read + s.bytes_written) as f64 / secs / 1e6 } else { 0.0 },
                    "latency_us": {
                        "read": lat[0],
                        "write": lat[1],
                        "trim": lat[2],
                        "fsync": lat[3],
                    },
                }),
            ),
            (
                "page_cache".to_string(),
                serde_json::json!({
                    "size_bytes": self.plan.cache,
                    "memory": {
                        "ram_bytes": self.plan.ram,
                        "kernel_bytes": self.plan.kernel,
                        "free_reserve_bytes": self.plan.reserve,
                        "application_bytes": self.plan.application,
                        "dirtyable_bytes": self.plan.dirtyable,
                    },
                    "background_thresh_pages": self.plan.background_pages,
                    "dirty_thresh_pages": self.plan.dirty_pages,
                    "hits": s.hits,
                    "misses": s.misses,
                    "hit_ratio": if looked > 0 { s.hits as f64 / looked as f64 } else { 0.0 },
                    "read_requests": s.read_requests,
                    "read_pages": s.read_pages,
                    "readahead_pages": s.readahead_pages,
                    "rmw_reads": s.rmw_reads,
                    "evictions": s.evictions,
                    "dirty_max_pages": s.dirty_max,
                    "writeback": {
                        "pages": wb_pages,
                        "requests": wb_reqs,
                        "pages_per_request": if wb_reqs > 0 { wb_pages as f64 / wb_reqs as f64 } else { 0.0 },
                        "pages_by_reason": reasons(&s.wb_pages),
                        "requests_by_reason": reasons(&s.wb_requests),
                    },
                    "flushes": s.flushes,
                    "trims": s.trims,
                    "throttled": {
                        "count": s.throttled,
                        "total_s": s.throttle_ns as f64 * 1e-9,
                        "mean_us": if s.throttled > 0 { s.throttle_ns as f64 / s.throttled as f64 / 1e3 } else { 0.0 },
                        "max_us": s.throttle_max_ns as f64 / 1e3,
                        // A current kernel's estimates at the end (MB/s):
                        // the device's write bandwidth and its dirty rate
                        // limit (null on 2.6.35).
                        "write_bandwidth_mbps": self.ioless.as_ref().map(|w| w.avg_write_bandwidth() as f64 * PAGE as f64 / 1e6),
                        "dirty_ratelimit_mbps": self.ioless.as_ref().map(|w| w.dirty_ratelimit() as f64 * PAGE as f64 / 1e6),
                    },
                    "reclaim_waits": s.reclaim_waits,
                    // What unlinks dropped: pages, of which dirty (never
                    // written) and waited for (I/O in flight).
                    "unlinks": s.unlinks,
                    "unlink_pages_dropped": s.unlink_pages,
                    "unlink_dirty_pages_dropped": s.unlink_dirty_pages,
                    "unlink_pages_waited_for": s.unlink_waited_pages,
                    "metadata_pages_dirtied": s.metadata_pages,
                    "metadata_pages_written": s.metadata_written,
                    "fs_direct_pages_written": s.fs_written,
                    "fs_direct_pages_read": s.fs_read,
                    "fs_flushes": s.fs_flushes,
                    "fs_thread_commits": s.commits,
                    "fsync_commit_waits": s.commit_waits,
                    // Bytes the host wrote to the device (writeback and a
                    // file system's own writes) per byte the application
                    // wrote: what the file system and the cache add.
                    "direct_io_bytes_read": s.dio_read,
                    "direct_io_bytes_written": s.dio_written,
                    "host_write_amplification": if s.bytes_written > 0 {
                        ((wb_pages + s.fs_written) * PAGE + s.dio_written) as f64
                            / s.bytes_written as f64
                    } else {
                        0.0
                    },
                    "dirty_at_end_bytes": self.nr_dirty() * PAGE,
                    "writeback_at_end_bytes": self.nr_wb * PAGE,
                }),
            ),
            (
                "host_cpu".to_string(),
                self.cores.report(&self.cpu, start, app_end),
            ),
        ]
    }
}

impl Thread {
    fn new(stream: u32) -> Thread {
        Thread {
            stream,
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
            ra: Ra::default(),
            writes: 0,
            ended: false,
            ino: 0,
            fs_asked: false,
            fs_steps: VecDeque::new(),
            commit_wait: 0,
            fs_no_flush: false,
        }
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
        let mut n = self.app.notes();
        if self.app_done && self.nr_dirty > 0 {
            n.push(("page_cache_dirty_pages_left_at_end".into(), self.nr_dirty()));
        }
        n
    }
    fn poll(&mut self, now: SimTime) -> Option<Result<HostRequest, SourceError>> {
        self.now = now;
        // Nothing has happened since the last step at this instant: handing
        // out what is queued changes no thread.
        if self.changed || self.stepped != Some(now) {
            self.changed = false;
            self.stepped = Some(now);
            if let Err(e) = self.step() {
                return Some(Err(e));
            }
        }
        // The first submitter, in index order, with a request and room.
        let k = self.out_ready.next_from(0)?;
        let r = self.outbox[k].pop_front()?;
        self.out_queued -= 1;
        if self.outbox[k].is_empty() {
            self.out_ready.remove(k);
        }
        Some(Ok(r))
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
                let Some(io) = self.ios.remove(&tag) else {
                    return;
                };
                self.flusher_stalled = false;
                for k in 0..io.n as u64 {
                    if let Some(&i) = self.map.get(&(io.lpn + k)) {
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
        self.app_finished() && self.out_queued == 0
    }
    fn report_sections(&self, end: SimTime) -> Vec<(String, serde_json::Value)> {
        let mut v = self.sections();
        v.extend(self.app.report_sections(end));
        let s = &self.stats;
        let start = self.start.unwrap_or(SimTime::ZERO);
        let busy = |w: Work| self.cores.busy(w);
        let host = HostRun {
            secs: s.last_end.max(start).since(start).secs_f64(),
            latency_ns: s.calls_ns + s.syscalls_ns,
            cpu_ns: busy(Work::Kernel)
                + busy(Work::Copy)
                + busy(Work::Submit)
                + busy(Work::Wakeup)
                + busy(Work::Benchmark),
        };
        v.extend(self.app.host_report(&host));
        v
    }
    fn stop(&mut self, _now: SimTime) {
        // The application makes no new call: what its threads have queued
        // and not begun is dropped (it was read ahead of them, not made),
        // and each thread ends as a source's end ends it (its end_fsync
        // included). The pieces of a call under way are part of it.
        self.app_done = true;
        self.ready_all();
        for t in 1..self.threads.len() {
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
                self.outstanding -= 1;
                if !x.unlink {
                    self.call_done(r.tag, seq);
                }
                if Self::locks_file(&r, &x) {
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
            self.idle_empty = self.idle_empty + self.idle_and_empty(t) as usize - was_idle as usize;
        }
    }
    fn ramp_over(&mut self, now: SimTime, _in_flight: u64) {
        // The cache's and the application's statistics start again; the
        // calls in flight count when they return.
        self.stats = Stats {
            dirty_max: self.nr_dirty,
            last_end: now,
            ..Stats::default()
        };
        self.start = Some(now);
        self.cores.restart();
        self.app.ramp_over(now, self.outstanding as u64);
    }
}
