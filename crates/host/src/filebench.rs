//! File-level Filebench personalities (`personality.level = "file"`):
//! varmail, fileserver, webserver, oltp and randomwrite as Filebench's own workload
//! files define them (workloads/*.f), on a file system ([`crate::fs`]).
//!
//! **The file set** (`define fileset`): `files` entries whose sizes are
//! drawn once from Filebench's `cvar-gamma` (gamma with shape 1.5 and the
//! personality's mean, at least one byte); `prealloc` percent of them exist
//! at the start, written whole (as Filebench's pre-allocation, before the
//! measured run). Webserver adds its one-entry log file set.
//!
//! **The flowops**, per thread, in Filebench's order (openfile and closefile
//! cost no I/O and are not calls; statfile reads metadata that is cached):
//! * varmail: deletefile, createfile, appendfilerand, fsync, closefile,
//!   openfile, readwholefile, appendfilerand, fsync, closefile, openfile,
//!   readwholefile, closefile;
//! * fileserver: createfile, writewholefile, closefile, openfile,
//!   appendfilerand, closefile, openfile, readwholefile, closefile,
//!   deletefile, statfile;
//! * webserver: ten times openfile, readwholefile, closefile; then
//!   appendfilerand to the log.
//! * oltp (oltp.f): ten 10 MiB data files and a 10 MiB log file, all
//!   pre-allocated, of one size; a log writer, `db_writers` database
//!   writers and `threads` shadows, tied by Filebench's semaphores and
//!   their high-water marks (`step_oltp`). Its aiowrites are O_DSYNC writes made in
//!   turn (Linux runs buffered AIO synchronously), and its `hog` flowops
//!   are CPU work in cycles ([`CallExtras::cpu_cycles`], one per loop
//!   iteration of the one-byte store), placed before the thread's next
//!   call.
//! * randomwrite (randomwrite.f): one file (`largefile1`, 5 GiB,
//!   pre-allocated) and one thread whose one flowop writes `iosize` (8 KiB)
//!   at a uniformly drawn multiple of it (`random`, `workingset=0`),
//!   buffered (`directio=0`).
//!
//! `readwholefile` and `writewholefile` move the file in `iosize` (1 MiB)
//! calls; `appendfilerand` appends a uniformly drawn size in [1, iosize)
//! (16 KiB), as `flowoplib_appendfilerand`, skipping a zero draw; createfile
//! picks an entry that does not exist, deletefile and openfile one that
//! does (a flowop with no such entry is skipped and counted).
//!
//! **The file system** (`[fs]`, [`crate::fs`]) places the files and adds
//! its metadata, journal or log traffic: the flowops call its `create`,
//! `unlink`, `write`, `read` and `fsync`, and its calls become the
//! personality's: data calls on the file's inode, metadata calls on
//! [`crate::pagecache::METADATA_INO`] (dirtied in the buffer cache at no cost
//! to the thread, written back like any page), and the file system's own
//! direct I/O on [`crate::pagecache::FS_INO`]. What the file system does in
//! the background (a journal's commit interval) runs as one more thread,
//! the file system's, told the time by the page cache
//! ([`AppSource::clock`]); an fsync's journal commit is asked for by the
//! page cache once the file's data is written ([`AppSource::fsync_io`]).
//! A deletefile's calls end with the file's unlink
//! ([`CallExtras::unlink`]): the page cache drops the file's pages, the
//! dirty ones unwritten; a thread still in a call sequence on the file (a
//! whole-file write of several calls) makes it after its last call.
//! Metadata and file-system calls and unlinks are not application calls:
//! they do not count against `calls`. The counts are reported (`notes`) and the file
//! system's own statistics in the report's `file_system` section.

use crate::cpu::Syscalls;
use crate::fs::{AnyFs, FileSystem, FsCall, FsConfig, FsyncIo};
use crate::pagecache::{file_page, FILE_PAGE_MAX_INO, FS_INO, METADATA_INO};
use crate::personality::{PersonalityConfig, PersonalityKind};
use crate::workload::{
    AppSource, CallExtras, HostRequest, IoOp, RequestSource, SourceError, Timing, SECTOR,
};
use rand::Rng;
use rand_distr::{Distribution, Gamma};
use ssd_core::error::{invalid, ConfigError};
use ssd_core::rng::{SimRng, SimRngExt};
use ssd_core::units::SimTime;
use std::collections::VecDeque;

const BLOCK: u64 = crate::fs::BLOCK;

/// Requests and, per request, whether more pieces of its application call
/// follow ([`AppSource::more_follow`]) and what else its call asks
/// ([`AppSource::call_extras`]).
type Out = VecDeque<(HostRequest, bool, CallExtras)>;
/// A thread's own memory (`memsize=10m`) in varmail.f, fileserver.f and
/// webserver.f.
const MEMSIZE: u64 = 10 << 20;
/// oltp.f's `$memperthread`, every thread's `memsize`.
const OLTP_MEMSIZE: u64 = 1 << 20;
/// randomwrite.f's `rand-thread` `memsize=5m`.
const RANDOMWRITE_MEMSIZE: u64 = 5 << 20;
/// Filebench's `cvar-gamma` shape (its default `gamma:1.5`).
const GAMMA_SHAPE: f64 = 1.5;
/// oltp.f: the log file's size (`logfilesize`) and the log writer's
/// `iosize`.
const OLTP_LOG_SIZE: u64 = 10 << 20;
const OLTP_LOG_IOSIZE: u64 = 256 << 10;
/// oltp.f: `lg-block`'s value and high-water mark.
const OLTP_LG_VALUE: u64 = 3_200;
const OLTP_LG_HIGHWATER: u64 = 1_000;
/// oltp.f: `dbwr-block`'s value and high-water mark, and `dbwrite-a`'s
/// `iters`.
const OLTP_DBWR_VALUE: u64 = 1_000;
const OLTP_DBWR_HIGHWATER: u64 = 2_000;
const OLTP_DBWR_ITERS: u32 = 100;
/// oltp.f: the `hog` flowops' values (`usermode` for the shadows): loop
/// iterations of a one-byte store, about a cycle each.
const OLTP_SHADOW_HOG: u64 = 200_000;
const OLTP_DBWR_HOG: u64 = 10_000;

/// A file-level personality's parameters (Filebench's defaults, which are
/// the ones of Sun et al.'s Table 1, unless the config overrides them).
#[derive(Clone, Debug, PartialEq)]
pub struct FileParams {
    /// Which personality (varmail, fileserver, webserver or oltp).
    pub kind: PersonalityKind,
    /// Entries of the file set (Filebench's `nfiles`).
    pub files: u64,
    /// Mean file size, bytes (sizes drawn from Filebench's gamma).
    pub mean_size: u64,
    /// Threads, each an application thread making synchronous calls.
    pub threads: u32,
    /// `iosize` of readwholefile / writewholefile.
    pub iosize: u64,
    /// `meanappendsize` (appendfilerand's `iosize`).
    pub append: u64,
    /// Percent of the entries that exist at the start.
    pub prealloc: u32,
    /// Application calls to make after the pre-allocation.
    pub calls: u64,
    /// Start of the file system on the device, bytes.
    pub offset: u64,
    /// oltp: database writer threads (`ndbwriters`); `threads` are the
    /// shadows (`nshadows`), and one log writer runs beside them.
    pub db_writers: u32,
    /// Filebench's `directio`: every read and write flowop opens its file
    /// `O_DIRECT` ([`CallExtras::direct`]); the file set's preallocation
    /// stays buffered (`fileset_alloc_file` writes through the cache).
    pub direct: bool,
}

impl FileParams {
    /// The parameters of `c` with Filebench's defaults filled in; an error
    /// names a field that is zero or out of range, or a knob of the
    /// block-level flows.
    pub fn from_config(c: &PersonalityConfig) -> Result<FileParams, ConfigError> {
        use PersonalityKind::*;
        let (files, mean, threads, prealloc, append) = match c.kind {
            Varmail => (1_000, 16 << 10, 16, 80, 16 << 10),
            Fileserver => (10_000, 128 << 10, 50, 80, 16 << 10),
            Webserver => (1_000, 16 << 10, 100, 100, 16 << 10),
            // oltp.f: nfiles, filesize, nshadows, prealloc, iosize.
            Oltp => (10, 10 << 20, 200, 100, 2 << 10),
            // randomwrite.f (Filebench 1.4.9 and 1.5, workloads/randomwrite.f):
            // `largefile1`, `$filesize` 5g, `prealloc`; `$nthreads` 1;
            // `$iosize` 8k; `$workingset` 0; `$directio` 0.
            Randomwrite => (1, 5 << 30, 1, 100, 8 << 10),
        };
        // Knobs of the block-level flows that Filebench's flowops do not
        // have: refused rather than ignored.
        let block_only = [
            (c.read_fraction.is_some(), "personality.read_fraction"),
            (c.hot_fraction.is_some(), "personality.hot_fraction"),
            (c.hot_access.is_some(), "personality.hot_access"),
            (c.fsync.is_some(), "personality.fsync"),
            (c.depth_per_thread != 1, "personality.depth_per_thread"),
            (!c.prealloc, "personality.prealloc"),
        ];
        for (set, f) in block_only {
            if set {
                return Err(invalid(
                    f,
                    "a knob of the block-level flows (level = \"block\"); Filebench's flowops take their mix from its workload file (for the file set that exists at the start, use personality.prealloc_percent)",
                ));
            }
        }
        if c.db_writers.is_some() && c.kind != Oltp {
            return Err(invalid(
                "personality.db_writers",
                "only oltp has database writers",
            ));
        }
        if c.kind == Randomwrite && c.files.is_some_and(|n| n != 1) {
            return Err(invalid(
                "personality.files",
                "randomwrite.f writes one file (largefile1)",
            ));
        }
        let p = FileParams {
            kind: c.kind,
            files: c.files.unwrap_or(files),
            mean_size: c.file_size.map_or(mean, |s| s.0),
            threads: c.threads.unwrap_or(threads),
            iosize: c.read_size.map_or(1 << 20, |s| s.0),
            append: c.io_size.map_or(append, |s| s.0),
            prealloc: c.prealloc_percent.unwrap_or(prealloc),
            calls: c.requests,
            offset: c.offset.0,
            db_writers: c.db_writers.unwrap_or(10),
            direct: c.is_direct(),
        };
        let fields = [
            (p.files, "personality.files"),
            (p.mean_size, "personality.file_size"),
            (p.threads as u64, "personality.threads"),
            (p.iosize, "personality.read_size"),
            (p.append, "personality.io_size"),
        ];
        for (v, f) in fields {
            if v == 0 {
                return Err(invalid(f, "must be positive"));
            }
        }
        if p.files > 1 << 24 {
            return Err(invalid("personality.files", "at most 16,777,216 files"));
        }
        if !p.iosize.is_multiple_of(SECTOR) || p.iosize > 1 << 30 {
            return Err(invalid(
                "personality.read_size",
                "must be a multiple of 512 bytes, at most 1 GiB",
            ));
        }
        if p.append > 1 << 30 {
            return Err(invalid(
                "personality.io_size",
                format!("{} bytes is too large (at most 1 GiB)", p.append),
            ));
        }
        if p.mean_size > 1 << 40 {
            return Err(invalid(
                "personality.file_size",
                format!("{} bytes is too large (at most 1 TiB)", p.mean_size),
            ));
        }
        if p.prealloc > 100 {
            return Err(invalid("personality.prealloc_percent", "must be 0..=100"));
        }
        if !p.offset.is_multiple_of(BLOCK) {
            return Err(invalid("personality.offset", "must be a multiple of 4 KiB"));
        }
        if p.threads > 1 << 16 {
            return Err(invalid("personality.threads", "at most 65,536"));
        }
        if p.kind == Randomwrite && (!p.append.is_multiple_of(SECTOR) || p.append > p.mean_size) {
            return Err(invalid(
                "personality.io_size",
                format!(
                    "randomwrite's iosize must be a multiple of 512 bytes and fit in its file ({} bytes)",
                    p.mean_size
                ),
            ));
        }
        if p.kind == Oltp {
            if p.db_writers == 0 || p.db_writers > 1 << 12 {
                return Err(invalid("personality.db_writers", "must be 1..=4096"));
            }
            if !p.append.is_multiple_of(SECTOR) || p.append > p.mean_size {
                return Err(invalid(
                    "personality.io_size",
                    format!(
                        "oltp's iosize must be a multiple of 512 bytes and fit in a data file ({} bytes)",
                        p.mean_size
                    ),
                ));
            }
        }
        Ok(p)
    }
}

/// An entry of the file set: the size it is created with (drawn once, as
/// Filebench's). Where its bytes are is the file system's.
#[derive(Clone, Debug, Default)]
struct File {
    nominal: u64,
}

/// A step of a thread's flow, expanded into calls as it runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Step {
    Delete,
    Create,
    Append,
    Fsync,
    Open,
    ReadWhole,
    WriteWhole,
    Stat,
    OpenLog,
}

const VARMAIL: &[Step] = &[
    Step::Delete,
    Step::Create,
    Step::Append,
    Step::Fsync,
    Step::Open,
    Step::ReadWhole,
    Step::Append,
    Step::Fsync,
    Step::Open,
    Step::ReadWhole,
];
/// The closefile flowops a thread makes before step `pc` of its flow: one
/// before each openfile but a cycle's first (webserver), before varmail's
/// and fileserver's openfiles, varmail's deletefile (after the last
/// readwholefile) and fileserver's deletefile (after its readwholefile),
/// and before webserver's log append (after its tenth readwholefile).
fn closes_before(kind: PersonalityKind, pc: usize) -> u32 {
    let closes = match kind {
        PersonalityKind::Varmail => matches!(VARMAIL[pc], Step::Open | Step::Delete),
        PersonalityKind::Fileserver => matches!(FILESERVER[pc], Step::Open | Step::Delete),
        PersonalityKind::Webserver => pc > 0 && pc.is_multiple_of(2),
        _ => false,
    };
    u32::from(closes)
}

const FILESERVER: &[Step] = &[
    Step::Create,
    Step::WriteWhole,
    Step::Open,
    Step::Append,
    Step::Open,
    Step::ReadWhole,
    Step::Delete,
    Step::Stat,
];

#[derive(Clone, Debug, Default)]
struct Thread {
    pc: usize,
    /// The open file (fd=1), and how many times fd 1 was opened (which
    /// open its calls are made through: [`CallExtras::open`]).
    fd: Option<u64>,
    opens: u64,
    /// Calls of the current step not handed out yet.
    pending: Out,
    /// System calls and flowops made since the thread's last call was
    /// handed out: paid before its next one ([`CallExtras::syscalls`]).
    debt: Syscalls,
    /// oltp: the next data file (`opennext`), the writes left of a
    /// database writer's batch, and the semaphore waits it entered.
    cursor: u64,
    left: u32,
    entered: u64,
}

/// Counts of what the flows did (reported as notes).
#[derive(Clone, Debug, Default)]
pub struct FileStats {
    /// Files created.
    pub creates: u64,
    /// Files deleted.
    pub deletes: u64,
    /// Appends.
    pub appends: u64,
    /// Whole-file reads.
    pub whole_reads: u64,
    /// Whole-file writes.
    pub whole_writes: u64,
    /// fsync calls.
    pub fsyncs: u64,
    /// `stat` calls (statfile).
    pub stats: u64,
    /// Flowops run (each step of a thread's flow, skipped ones included).
    pub flowops: u64,
    /// Flowops skipped: no file to pick, or no space left for a create or write.
    pub skipped: u64,
    /// Of `skipped`: the file system had no room for a create or a write.
    pub skipped_no_space: u64,
    /// Of `skipped`: no file to pick (none exists to delete, or every entry
    /// exists and none is free to create).
    pub skipped_no_file: u64,
    /// Of `skipped`: the thread has no open file (its create or open found
    /// none, or another thread deleted it) to append to, write, read or sync.
    pub skipped_no_open_file: u64,
    /// Metadata blocks the file system dirtied.
    pub metadata_writes: u64,
    /// Calls of the pre-allocation (creating the file set), made before the measured calls.
    pub prealloc_calls: u64,
    /// Direct calls of the file system (journal commits, log writes).
    pub fs_calls: u64,
    /// oltp: the shadows' reads handed out.
    pub shadow_reads: u64,
    /// oltp: the database writers' writes handed out.
    pub db_writes: u64,
    /// oltp: the log writer's writes handed out.
    pub log_writes: u64,
    /// oltp: turns a thread passed because it waited on a semaphore.
    pub sem_waits: u64,
}

/// A file-level Filebench personality as a closed-loop source of
/// application calls (each tagged with its file's inode number), on a
/// file system.
pub struct FileBench {
    p: FileParams,
    rng: SimRng,
    files: Vec<File>,
    fs: AnyFs,
    existing: Vec<u64>,
    free_entries: Vec<u64>,
    /// Position of each entry in `existing` or `free_entries`.
    slot: Vec<usize>,
    /// The file system's first block on the device.
    base: u64,
    log: u64,
    threads: Vec<Thread>,
    next_thread: usize,
    /// Pre-allocation calls, then the flows'.
    pre: Out,
    /// The file system's thread's calls (its background work).
    daemon: Out,
    /// The file system asked its thread for a commit
    /// ([`AppSource::take_commit`]).
    commit_asked: bool,
    now: SimTime,
    issued: u64,
    calls: Vec<FsCall>,
    /// Aging: files created and deleted, blocks the aging files hold.
    aged: (u64, u64, u64),
    /// Whether more pieces follow the request handed out last, and what
    /// else its call asks.
    last_more: bool,
    last_extras: CallExtras,
    /// oltp: the shadows' posts so far (to every semaphore at once).
    posts: u64,
    /// Flowops in a row with no request handed out but unlinks (which
    /// take no time): the flows are stuck past 100,000 (a semaphore no
    /// one posts, a device full).
    quiet: u32,
    /// What the flows did so far.
    pub stats: FileStats,
    /// Filebench's IO Summary counts, and where they stood at the ramp's
    /// end.
    io: IoCounts,
    io_at_ramp: IoCounts,
}

/// What Filebench's IO Summary counts (`stats_snap`): its I/O flowops
/// (`FLOW_TYPE_IO` and `FLOW_TYPE_AIO`: openfile, closefile, createfile,
/// deletefile, statfile, fsync, the reads and the writes; not hog nor the
/// semaphores), those of them that read and write, and their bytes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct IoCounts {
    ops: u64,
    reads: u64,
    writes: u64,
    bytes: u64,
}

/// `bytes` to one decimal in the largest binary unit under it ("31.8 MiB").
fn approx_bytes(bytes: u64) -> String {
    for (unit, m) in [
        ("TiB", 1u64 << 40),
        ("GiB", 1 << 30),
        ("MiB", 1 << 20),
        ("KiB", 1 << 10),
    ] {
        if bytes >= m {
            return format!("{:.1} {unit}", bytes as f64 / m as f64);
        }
    }
    format!("{bytes} bytes")
}

/// `blocks` of 4 KiB, approximately in bytes and exactly in blocks.
fn blocks_str(blocks: u64) -> String {
    format!("{} ({blocks} blocks)", approx_bytes(blocks * BLOCK))
}

/// The file set does not fit what the file system `fs` leaves for data
/// (`room` blocks, `reserve` blocks kept for itself at mkfs) on the
/// device's `dev_blocks`: an error naming the personality's fields, the
/// file system and what it keeps. `after` says when `room` was measured,
/// `what` how much the file set needs.
fn no_room(
    p: &FileParams,
    fs: &AnyFs,
    dev_blocks: u64,
    reserve: u64,
    room: u64,
    after: &str,
    what: &str,
) -> ConfigError {
    let dev = if p.offset == 0 {
        format!("this {} device", approx_bytes(dev_blocks * BLOCK))
    } else {
        format!(
            "the {} of the device after personality.offset",
            approx_bytes(dev_blocks * BLOCK)
        )
    };
    invalid(
        "personality.files",
        format!(
            "the file set ({} files of mean {} bytes, {}% pre-allocated) {what}, but {} on {dev}{after} leaves {} for data ({} take {}); lower personality.files, personality.file_size or personality.prealloc_percent",
            p.files,
            p.mean_size,
            p.prealloc,
            fs.kind(),
            blocks_str(room),
            fs.own_areas(),
            approx_bytes(reserve * BLOCK),
        ),
    )
}

impl FileBench {
    /// The personality `cfg` on the file system `fs` made (mkfs) on the
    /// device's `logical_bytes` after `personality.offset`.
    pub fn new(
        cfg: &PersonalityConfig,
        fs: &FsConfig,
        logical_bytes: u64,
        seed: u64,
    ) -> Result<FileBench, ConfigError> {
        let p = FileParams::from_config(cfg)?;
        let mut rng = SimRng::from_seed_label(cfg.seed.unwrap_or(seed), "filebench");
        // Webserver's and oltp's log file is one more entry.
        let with_log = matches!(p.kind, PersonalityKind::Webserver | PersonalityKind::Oltp);
        let entries = p.files + u64::from(with_log);
        let dev_blocks = logical_bytes.saturating_sub(p.offset) / BLOCK;
        let gamma = Gamma::new(GAMMA_SHAPE, p.mean_size as f64 / GAMMA_SHAPE)
            .map_err(|e| invalid("personality.file_size", e.to_string()))?;
        let mut files: Vec<File> = (0..entries)
            .map(|_| File {
                nominal: if matches!(p.kind, PersonalityKind::Oltp | PersonalityKind::Randomwrite) {
                    // oltp.f's file sets have one size (no cvar), and
                    // randomwrite.f's file (`define file`) its `size`.
                    p.mean_size
                } else {
                    (gamma.sample(&mut rng).round() as u64).max(1)
                },
            })
            .collect();
        let log = p.files;
        match p.kind {
            // The log file set: one entry, created empty, grown by appends.
            PersonalityKind::Webserver => files[log as usize].nominal = 0,
            // oltp's log file (`logfilesize`), pre-allocated whole.
            PersonalityKind::Oltp => files[log as usize].nominal = OLTP_LOG_SIZE,
            _ => {}
        }
        let existing_n = p.files * p.prealloc as u64 / 100;
        // The data the pre-allocated files need must fit, with room to grow.
        let logged = existing_n as usize + usize::from(p.kind == PersonalityKind::Oltp);
        let need: u64 = files[..logged]
            .iter()
            .map(|f| f.nominal.div_ceil(BLOCK))
            .sum::<u64>();
        if need.saturating_mul(2) > dev_blocks {
            return Err(invalid(
                "personality.files",
                format!(
                    "the file set ({} files of mean {} bytes, {}% pre-allocated: {} blocks) needs twice that room on the device ({} blocks after the offset)",
                    p.files, p.mean_size, p.prealloc, need, dev_blocks
                ),
            ));
        }
        // Filebench's `meandirwidth`: varmail keeps its files in one
        // directory, fileserver and webserver in directories of 20, oltp
        // in directories of 1,024.
        let dirwidth = match p.kind {
            PersonalityKind::Varmail => 1_000_000,
            PersonalityKind::Oltp => 1_024,
            _ => 20,
        };
        // oltp: the log writer, the database writers, then the shadows.
        let nthreads = match p.kind {
            PersonalityKind::Oltp => 1 + p.db_writers as usize + p.threads as usize,
            _ => p.threads as usize,
        };
        // Aging files take the entries after the file set's.
        let age_mean = fs.age_file_size.map_or(64 << 10, |s| s.0);
        let age_target = (fs.age_fullness * dev_blocks as f64) as u64;
        let age_slots = if age_target > 0 {
            age_target / age_mean.div_ceil(BLOCK) * 2 + 64
        } else {
            0
        };
        // The directory tree is the file set's, drawn from the personality's
        // seed (the same under every scheduler and file system).
        let fsys = fs.build(
            dev_blocks,
            entries + age_slots,
            dirwidth,
            cfg.seed.unwrap_or(seed),
        )?;
        // A file system that places data at writeback has its files' pages
        // cached as file pages, whose key holds the inode number.
        if fsys.places_at_writeback() && entries >= u64::from(FILE_PAGE_MAX_INO) {
            return Err(invalid(
                "personality.files",
                format!(
                    "{entries} files: the page cache keys a {}'s file pages by inode number, up to {FILE_PAGE_MAX_INO}",
                    fs.kind
                ),
            ));
        }
        // The file set must also fit what the file system leaves for data
        // after its own areas (ReiserFS's journal takes half of a 64 MiB
        // device), with the same estimate as the device's check above.
        let fs_room = fsys.data_room();
        let fs_reserve = fsys.blocks().saturating_sub(fs_room);
        if need > fs_room {
            let what = format!("preallocates {}", blocks_str(need));
            return Err(no_room(
                &p, &fsys, dev_blocks, fs_reserve, fs_room, "", &what,
            ));
        }
        let mut fb = FileBench {
            rng,
            files,
            fs: fsys,
            existing: Vec::new(),
            free_entries: Vec::new(),
            slot: vec![0; entries as usize],
            base: p.offset / BLOCK,
            log,
            threads: vec![Thread::default(); nthreads],
            next_thread: 0,
            pre: VecDeque::new(),
            daemon: VecDeque::new(),
            commit_asked: false,
            now: SimTime::ZERO,
            issued: 0,
            calls: Vec::new(),
            aged: (0, 0, 0),
            last_more: false,
            last_extras: CallExtras::default(),
            posts: 0,
            quiet: 0,
            stats: FileStats::default(),
            io: IoCounts::default(),
            io_at_ramp: IoCounts::default(),
            p,
        };
        for f in 0..fb.p.files {
            fb.slot[f as usize] = fb.free_entries.len();
            fb.free_entries.push(f);
        }
        let mut room = fs_room;
        let mut aged = String::new();
        if age_target > 0 {
            fb.age(fs, entries, age_slots, age_target, age_mean, seed)?;
            room = fb.fs.data_room();
            aged = format!(" after aging (fs.age_fullness = {})", fs.age_fullness);
            if need > room {
                let what = format!("preallocates {}", blocks_str(need));
                return Err(no_room(
                    &fb.p, &fb.fs, dev_blocks, fs_reserve, room, &aged, &what,
                ));
            }
        }
        // Pre-allocation: entries 0.. written whole by stream 0 (before the
        // measured run in Filebench; here they are calls of the run, counted
        // apart as `prealloc_calls`).
        let mut pre = VecDeque::new();
        for f in 0..existing_n {
            if !fb.create(f, &mut pre, 0) || {
                let n = fb.files[f as usize].nominal;
                fb.write_at_end(f, n, &mut pre, 0);
                fb.stats.skipped_no_space > 0
            } {
                // The estimate fits, but not with the files' own metadata
                // (inodes, tree, index or node blocks): refused rather than
                // run with files cut short.
                let what = format!(
                    "needs {} for its data, and more for its files' metadata: file {} of {} found no space",
                    blocks_str(need),
                    f + 1,
                    existing_n
                );
                return Err(no_room(
                    &fb.p, &fb.fs, dev_blocks, fs_reserve, room, &aged, &what,
                ));
            }
        }
        if fb.p.kind == PersonalityKind::Webserver && !fb.create_quiet(log, &mut pre) {
            return Err(invalid("personality.files", "no room for the log file"));
        }
        if fb.p.kind == PersonalityKind::Oltp {
            if !fb.create_quiet(log, &mut pre) {
                return Err(invalid("personality.files", "no room for the log file"));
            }
            fb.write_at_end(log, OLTP_LOG_SIZE, &mut pre, 0);
            if fb.stats.skipped_no_space > 0 {
                let what = format!(
                    "needs {} for its data and log file, and more for its files' metadata: the log file found no space",
                    blocks_str(need)
                );
                return Err(no_room(
                    &fb.p, &fb.fs, dev_blocks, fs_reserve, room, &aged, &what,
                ));
            }
            // Each thread opens the data files in turn from its own.
            let n = fb.p.files;
            for (t, th) in fb.threads.iter_mut().enumerate() {
                th.cursor = t as u64 % n;
            }
        }
        fb.stats.prealloc_calls = pre.len() as u64;
        fb.pre = pre;
        Ok(fb)
    }

    /// The resolved parameters.
    pub fn params(&self) -> &FileParams {
        &self.p
    }

    /// The file system.
    pub fn fs(&self) -> &AnyFs {
        &self.fs
    }

    fn ino(f: u64) -> u32 {
        (f + 1) as u32
    }

    /// The request of file system call `c` on a file system whose block 0
    /// is device block `base`, made by `stream`; a data call's `tag` is its
    /// file's inode, the file system's own calls carry theirs.
    fn request_of(base: u64, c: FsCall, stream: u32, tag: u32) -> HostRequest {
        let (op, lba, sectors, tag, sync) = match c {
            FsCall::Data { op, at, bytes } => (
                op,
                base * (BLOCK / SECTOR) + at / SECTOR,
                (bytes / SECTOR) as u32,
                tag,
                false,
            ),
            // File pages: where they go is the file system's to say at
            // writeback (`AppSource::place`).
            FsCall::Buffered { op, off, bytes } => (
                op,
                file_page(tag, 0) * (BLOCK / SECTOR) + off / SECTOR,
                (bytes / SECTOR) as u32,
                tag,
                false,
            ),
            FsCall::Meta { block } => (
                IoOp::Write,
                (base + block) * (BLOCK / SECTOR),
                (BLOCK / SECTOR) as u32,
                METADATA_INO,
                false,
            ),
            FsCall::Direct {
                op,
                block,
                blocks,
                sync,
            } => (
                op,
                (base + block) * (BLOCK / SECTOR),
                blocks * (BLOCK / SECTOR) as u32,
                FS_INO,
                sync,
            ),
            FsCall::Flush | FsCall::Commit | FsCall::Wait { .. } => {
                (IoOp::Flush, 0, 0, FS_INO, false)
            }
        };
        HostRequest {
            arrival: SimTime::ZERO,
            op,
            lba,
            sectors,
            stream,
            tag,
            sync,
            placement: ssd_core::workload::Placement::NONE,
        }
    }

    /// The file system's calls of this operation (in `self.calls`) as
    /// requests of `stream` for file `f`.
    fn emit(&mut self, f: u64, out: &mut Out, stream: u32) {
        let base = self.base;
        // The data pieces of one operation are one application call: all
        // but the last are followed by more.
        let last_data = self.calls.iter().rposition(|c| c.is_data());
        for (i, c) in self.calls.drain(..).enumerate() {
            let more = c.is_data() && last_data.is_some_and(|l| i < l);
            match c {
                FsCall::Meta { .. } => self.stats.metadata_writes += 1,
                FsCall::Direct { .. } | FsCall::Flush => self.stats.fs_calls += 1,
                FsCall::Data { .. } | FsCall::Buffered { .. } => {}
                FsCall::Commit => {
                    // A commit the call hands to the file system's thread
                    // (a full transaction): that thread writes it.
                    self.commit_asked = true;
                    continue;
                }
                FsCall::Wait { tid } => {
                    // The thread waits for the file system's thread.
                    let r = Self::request_of(base, c, stream, Self::ino(f));
                    let extras = CallExtras {
                        await_commit: tid,
                        ..CallExtras::default()
                    };
                    out.push_back((r, false, extras));
                    continue;
                }
            }
            let r = Self::request_of(base, c, stream, Self::ino(f));
            out.push_back((r, more, CallExtras::default()));
        }
    }

    fn create_quiet(&mut self, f: u64, out: &mut Out) -> bool {
        let now = self.now;
        let ok = self.fs.create(f as u32, now, &mut self.calls).is_ok();
        self.emit(f, out, 0);
        ok
    }

    fn create(&mut self, f: u64, out: &mut Out, stream: u32) -> bool {
        let now = self.now;
        if self.fs.create(f as u32, now, &mut self.calls).is_err() {
            self.calls.clear();
            return false;
        }
        self.emit(f, out, stream);
        // Entry f moves from free to existing.
        let i = self.slot[f as usize];
        self.free_entries.swap_remove(i);
        if let Some(&m) = self.free_entries.get(i) {
            self.slot[m as usize] = i;
        }
        self.slot[f as usize] = self.existing.len();
        self.existing.push(f);
        true
    }

    fn delete(&mut self, f: u64, out: &mut Out, stream: u32) {
        let i = self.slot[f as usize];
        self.existing.swap_remove(i);
        if let Some(&m) = self.existing.get(i) {
            self.slot[m as usize] = i;
        }
        self.slot[f as usize] = self.free_entries.len();
        self.free_entries.push(f);
        let now = self.now;
        self.fs.unlink(f as u32, now, &mut self.calls);
        self.emit(f, out, stream);
        // The file's pages leave the page cache when its last reference
        // goes (`iput_final` -> `evict` -> `truncate_inode_pages_final`):
        // at the unlink, or, if another thread is still in a call sequence
        // on it (a whole-file write or read of several calls, made on its
        // open file), after that thread's last call (its close: `__fput`
        // drops the last reference). The page cache serves the calls on
        // the file handed out before it first.
        let unlink = (
            HostRequest {
                arrival: SimTime::ZERO,
                op: IoOp::Trim,
                lba: 0,
                sectors: 0,
                stream,
                tag: Self::ino(f),
                sync: false,
                placement: ssd_core::workload::Placement::NONE,
            },
            false,
            CallExtras {
                unlink: true,
                ..CallExtras::default()
            },
        );
        // A thread with writes on it left, else the first with reads.
        let ino = Self::ino(f);
        let (mut writer, mut reader) = (None, None);
        for (h, th) in self.threads.iter().enumerate() {
            for (r, _, x) in &th.pending {
                if r.tag == ino && !x.unlink {
                    if r.op == IoOp::Write {
                        writer = Some(h);
                    }
                    reader = reader.or(Some(h));
                }
            }
            if writer.is_some() {
                break;
            }
        }
        let holder = writer.or(reader);
        match holder {
            Some(h) => {
                let mut u = unlink;
                u.0.stream = h as u32;
                self.threads[h].pending.push_back(u);
            }
            None => out.push_back(unlink),
        }
    }

    /// Write `bytes` at the end of file `f`, in application calls of at
    /// most `iosize`.
    fn write_at_end(&mut self, f: u64, bytes: u64, out: &mut Out, stream: u32) {
        let mut off = self.fs.size(f as u32);
        let end = off + bytes;
        while off < end {
            let n = (end - off).min(self.p.iosize);
            let now = self.now;
            if self
                .fs
                .write(f as u32, off, n, now, &mut self.calls)
                .is_err()
            {
                self.calls.clear();
                self.stats.skipped += 1;
                self.stats.skipped_no_space += 1;
                return;
            }
            self.emit(f, out, stream);
            off += n;
        }
    }

    fn read_whole(&mut self, f: u64, out: &mut Out, stream: u32) {
        let size = self.fs.size(f as u32);
        let mut off = 0;
        while off < size {
            let n = (size - off).min(self.p.iosize);
            let now = self.now;
            self.fs.read(f as u32, off, n, now, &mut self.calls);
            self.emit(f, out, stream);
            off += n;
        }
    }

    fn exists(&self, f: u64) -> bool {
        self.fs.exists(f as u32)
    }

    fn pick(&mut self, existing: bool) -> Option<u64> {
        let v = if existing {
            &self.existing
        } else {
            &self.free_entries
        };
        if v.is_empty() {
            return None;
        }
        let i = self.rng.gen_range(0..v.len());
        Some(v[i])
    }

    /// Run thread `t`'s next flowop, queueing its calls; true if the
    /// thread waits on a semaphore instead (oltp).
    fn step(&mut self, t: usize) -> bool {
        if self.p.kind == PersonalityKind::Oltp {
            return self.step_oltp(t);
        }
        if self.p.kind == PersonalityKind::Randomwrite {
            // randomwrite.f's one flowop: `write` of `iosize` at a random
            // place of largefile1 (buffered, `directio=0`).
            let io = self.p.append;
            let off = self.random_offset(0, io);
            self.oltp_io(0, IoOp::Write, off, io, CallExtras::default(), t);
            return false;
        }
        let stream = t as u32;
        let mut out = VecDeque::new();
        let th = &self.threads[t];
        let (step, len) = match self.p.kind {
            PersonalityKind::Varmail => (VARMAIL[th.pc % VARMAIL.len()], VARMAIL.len()),
            PersonalityKind::Fileserver => (FILESERVER[th.pc % FILESERVER.len()], FILESERVER.len()),
            _ => {
                // webserver: 10 x (open, readwhole), then the log append.
                let k = th.pc % 22;
                let s = match k {
                    20 => Step::OpenLog,
                    21 => Step::Append,
                    k if k % 2 == 0 => Step::Open,
                    _ => Step::ReadWhole,
                };
                (s, 22)
            }
        };
        let open = self.threads[t].fd.filter(|&f| self.exists(f));
        // The flowop's system calls without I/O of their own, and the
        // closefile flowops before it (the workload files' closefile
        // follows a file's last use; here it is made before the next
        // openfile, or deletefile in varmail and fileserver, or the log's
        // appendfilerand in webserver: see `closes_before`).
        let closes = closes_before(self.p.kind, self.threads[t].pc);
        let mut calls = Syscalls {
            close: closes,
            flowops: closes + u32::from(step != Step::OpenLog),
            ..Syscalls::default()
        };
        // Whether the flowop ran (Filebench counts no flowop that found no
        // file), and the bytes it read or wrote.
        let skipped = self.stats.skipped;
        let mut ran = step != Step::OpenLog;
        let (mut read, mut written) = (None, None);
        match step {
            Step::Delete => match self.pick(true) {
                Some(f) => {
                    calls.unlink = 1;
                    self.stats.deletes += 1;
                    self.delete(f, &mut out, stream);
                }
                None => {
                    self.stats.skipped += 1;
                    self.stats.skipped_no_file += 1;
                }
            },
            Step::Create => match self.pick(false) {
                Some(f) if self.create(f, &mut out, stream) => {
                    // fileset_openfile stats the parent directory first.
                    calls.create = 1;
                    calls.stat = 1;
                    self.stats.creates += 1;
                    self.threads[t].fd = Some(f);
                    self.threads[t].opens += 1;
                }
                picked => {
                    self.stats.skipped += 1;
                    if picked.is_some() {
                        self.stats.skipped_no_space += 1;
                    } else {
                        self.stats.skipped_no_file += 1;
                    }
                    self.threads[t].fd = None;
                }
            },
            Step::Open => {
                self.threads[t].fd = self.pick(true);
                ran = self.threads[t].fd.is_some();
                if let Some(f) = self.threads[t].fd {
                    calls.open = 1;
                    self.threads[t].opens += 1;
                    let now = self.now;
                    self.fs.stat(f as u32, now, &mut self.calls);
                    self.emit(f, &mut out, stream);
                }
            }
            Step::OpenLog => self.threads[t].fd = Some(self.log),
            Step::Append => {
                if let Some(f) = open {
                    // flowoplib_appendfilerand: the size from /dev/urandom
                    // (fb_urandom64), an lseek to the end, the write.
                    calls.other = 1;
                    let n = self.rng.gen_range(0..self.p.append);
                    ran = n > 0;
                    if n > 0 {
                        written = Some(n);
                        calls.other += 1;
                        self.stats.appends += 1;
                        self.write_at_end(f, n, &mut out, stream);
                    }
                } else {
                    self.stats.skipped += 1;
                    self.stats.skipped_no_open_file += 1;
                }
                if self.p.kind == PersonalityKind::Webserver {
                    self.threads[t].fd = None;
                }
            }
            Step::WriteWhole => {
                if let Some(f) = open {
                    self.stats.whole_writes += 1;
                    let n = self.files[f as usize].nominal;
                    written = Some(n);
                    self.write_at_end(f, n, &mut out, stream);
                } else {
                    self.stats.skipped += 1;
                    self.stats.skipped_no_open_file += 1;
                }
            }
            Step::ReadWhole => {
                if let Some(f) = open {
                    // flowoplib_readwholefile: an lseek to 0, the reads,
                    // and the read that meets the end of the file.
                    calls.other = 2;
                    read = Some(self.fs.size(f as u32));
                    self.stats.whole_reads += 1;
                    self.read_whole(f, &mut out, stream);
                } else {
                    self.stats.skipped += 1;
                    self.stats.skipped_no_open_file += 1;
                }
            }
            Step::Fsync => {
                if let Some(f) = open {
                    self.stats.fsyncs += 1;
                    out.push_back((
                        HostRequest {
                            arrival: SimTime::ZERO,
                            op: IoOp::Flush,
                            lba: 0,
                            sectors: 0,
                            stream,
                            tag: Self::ino(f),
                            sync: false,
                            placement: ssd_core::workload::Placement::NONE,
                        },
                        false,
                        CallExtras::default(),
                    ));
                } else {
                    self.stats.skipped += 1;
                    self.stats.skipped_no_open_file += 1;
                }
            }
            Step::Stat => {
                self.stats.stats += 1;
                let picked = self.pick(true);
                ran = picked.is_some();
                if let Some(f) = picked {
                    calls.stat = 1;
                    let now = self.now;
                    self.fs.stat(f as u32, now, &mut self.calls);
                    self.emit(f, &mut out, stream);
                }
            }
        }
        if ran && self.stats.skipped == skipped {
            self.io.ops += 1;
            if let Some(n) = read {
                self.io.reads += 1;
                self.io.bytes += n;
            }
            if let Some(n) = written {
                self.io.writes += 1;
                self.io.bytes += n;
            }
        }
        self.io.ops += closes as u64;
        let th = &mut self.threads[t];
        // The data calls are made through the open file: fd 1, opened by
        // the thread's last openfile or createfile; webserver's log is fd
        // 2, opened once (its first appendfilerand).
        if let (Some(f), Step::ReadWhole | Step::WriteWhole | Step::Append) = (open, step) {
            let (fd, n) = match (self.p.kind, step) {
                (PersonalityKind::Webserver, Step::Append) => (2, 0),
                _ => (1, th.opens),
            };
            for (r, _, x) in out.iter_mut() {
                if r.tag == Self::ino(f) {
                    (x.fd, x.open) = (fd, n);
                }
            }
        }
        th.pc = (th.pc + 1) % len;
        th.debt.add(&calls);
        if let Some(first) = out.front_mut() {
            first.2.syscalls = std::mem::take(&mut th.debt);
        }
        th.pending = out;
        false
    }

    /// A uniformly drawn multiple of `io` with `io` bytes of file `f`
    /// after it (Filebench's `random` offset, `workingset=0`).
    fn random_offset(&mut self, f: u64, io: u64) -> u64 {
        let size = self.fs.size(f as u32);
        self.rng.gen_range(0..(size / io).max(1)) * io
    }

    /// The calls of one oltp (or randomwrite) read or write of `io` bytes at `off` of `f`,
    /// the data pieces carrying `extras`.
    fn oltp_io(&mut self, f: u64, op: IoOp, off: u64, io: u64, extras: CallExtras, t: usize) {
        let now = self.now;
        let mut out = VecDeque::new();
        let ok = match op {
            IoOp::Read => {
                self.fs.read(f as u32, off, io, now, &mut self.calls);
                true
            }
            _ => self
                .fs
                .write(f as u32, off, io, now, &mut self.calls)
                .is_ok(),
        };
        if !ok {
            self.calls.clear();
            self.stats.skipped += 1;
            self.stats.skipped_no_space += 1;
            return;
        }
        self.emit(f, &mut out, t as u32);
        self.io.ops += 1;
        self.io.bytes += io;
        if op == IoOp::Read {
            self.io.reads += 1;
        } else {
            self.io.writes += 1;
        }
        let mut first = true;
        for (r, _, x) in out.iter_mut() {
            if r.tag == Self::ino(f) {
                x.dsync = extras.dsync;
                if first {
                    x.cpu_cycles = extras.cpu_cycles;
                    // The I/O flowop, and the hog before it.
                    x.syscalls.flowops = 1 + u32::from(extras.cpu_cycles > 0);
                    first = false;
                }
            }
        }
        self.threads[t].pending = out;
    }

    /// Filebench's oltp.f, one flowop of thread `t`; true if it waits on
    /// a semaphore. Thread 0 is the log writer (`lgwr`), threads
    /// `1..=db_writers` the database writers (`dbwr`), the rest the
    /// shadows. Each shadow's iteration posts once to the log writer's
    /// semaphore and once to every database writer's; with Filebench's
    /// values and high-water marks:
    /// * the log writer writes 256 KiB at a random place of the log file
    ///   (O_DSYNC) once per 3,200 posts;
    /// * a database writer writes `iosize` at random places of the data
    ///   files in turn (O_DSYNC), 100 of them per 1,000 posts;
    /// * a shadow reads `iosize` at a random place of a data file, and
    ///   waits while it is 1,000 posts ahead of the log writer's waits or
    ///   2,000 ahead of the slowest database writer's.
    ///
    /// A semaphore counts calls as they are handed out, not as they
    /// complete: the page cache runs each thread's calls in order, and the
    /// database writer's `aiowait` is its next batch's wait.
    fn step_oltp(&mut self, t: usize) -> bool {
        let w = self.p.db_writers as usize;
        let io = self.p.append;
        if t == 0 {
            if self.posts < OLTP_LG_VALUE * self.threads[0].entered {
                return true;
            }
            let f = self.log;
            let off = self.random_offset(f, OLTP_LOG_IOSIZE);
            let extras = CallExtras {
                dsync: true,
                ..CallExtras::default()
            };
            self.oltp_io(f, IoOp::Write, off, OLTP_LOG_IOSIZE, extras, 0);
            self.threads[0].entered += 1;
            self.stats.log_writes += 1;
        } else if t <= w {
            let mut cpu = 0;
            if self.threads[t].left == 0 {
                if self.posts < OLTP_DBWR_VALUE * self.threads[t].entered {
                    return true;
                }
                self.threads[t].left = OLTP_DBWR_ITERS;
                if self.threads[t].entered > 0 {
                    cpu = OLTP_DBWR_HOG;
                }
            }
            let f = self.threads[t].cursor;
            self.threads[t].cursor = (f + 1) % self.p.files;
            let off = self.random_offset(f, io);
            let extras = CallExtras {
                dsync: true,
                cpu_cycles: cpu,
                ..CallExtras::default()
            };
            self.oltp_io(f, IoOp::Write, off, io, extras, t);
            let th = &mut self.threads[t];
            th.left -= 1;
            if th.left == 0 {
                th.entered += 1;
            }
            self.stats.db_writes += 1;
        } else {
            let slowest = self.threads[1..=w]
                .iter()
                .map(|th| th.entered)
                .min()
                .unwrap_or(0);
            if self.posts >= OLTP_LG_HIGHWATER + OLTP_LG_VALUE * self.threads[0].entered
                || self.posts >= OLTP_DBWR_HIGHWATER + OLTP_DBWR_VALUE * slowest
            {
                return true;
            }
            let f = self.threads[t].cursor;
            self.threads[t].cursor = (f + 1) % self.p.files;
            let off = self.random_offset(f, io);
            // The hog of the previous iteration comes first.
            let extras = CallExtras {
                dsync: false,
                cpu_cycles: if self.threads[t].pc > 0 {
                    OLTP_SHADOW_HOG
                } else {
                    0
                },
                ..CallExtras::default()
            };
            self.threads[t].pc = 1;
            self.oltp_io(f, IoOp::Read, off, io, extras, t);
            self.posts += 1;
            self.stats.shadow_reads += 1;
        }
        false
    }

    /// Blocks of the file system in use.
    pub fn used_blocks(&self) -> u64 {
        self.fs.stats().used_blocks
    }
    /// The file system's consistency check (fsck).
    pub fn check(&self) -> Result<(), String> {
        self.fs.check()
    }

    /// Age the file system before the file set is created (`fs.age_*`):
    /// eight writers create files of gamma-drawn sizes (mean `age_mean`),
    /// appending 64 KiB at a time in turn, so that their blocks interleave
    /// as concurrent writers' do, until the aging files hold `target + churn
    /// x (blocks - target)` blocks; then random aging files are deleted
    /// until they hold `target`, leaving free space in file-sized holes all
    /// over the device. It is the file system's history, not simulated I/O:
    /// its calls are dropped, and the file system settles (journal empty,
    /// counters zero). The drive's own state is `sim.precondition`'s.
    fn age(
        &mut self,
        fs: &FsConfig,
        first: u64,
        slots: u64,
        target: u64,
        mean: u64,
        seed: u64,
    ) -> Result<(), ConfigError> {
        const WRITERS: usize = 8;
        const CHUNK: u64 = 64 << 10;
        let mut rng = SimRng::from_seed_label(seed, "fs-aging");
        let gamma = Gamma::new(GAMMA_SHAPE, mean as f64 / GAMMA_SHAPE)
            .map_err(|e| invalid("fs.age_file_size", e.to_string()))?;
        let blocks = self.fs.blocks();
        let peak = target + (fs.age_churn * blocks.saturating_sub(target) as f64) as u64;
        let mut free: Vec<u64> = (first..first + slots).rev().collect();
        let mut files: Vec<u64> = Vec::new();
        let mut open: [Option<(u64, u64)>; WRITERS] = [None; WRITERS];
        let (mut used, mut created, mut deleted) = (0u64, 0u64, 0u64);
        let now = SimTime::ZERO;
        let mut w = 0;
        while used < peak.max(target) {
            w = (w + 1) % WRITERS;
            let (f, left) = match open[w] {
                Some(x) => x,
                None => {
                    let Some(f) = free.pop() else {
                        break;
                    };
                    if self.fs.create(f as u32, now, &mut self.calls).is_err() {
                        free.push(f);
                        break;
                    }
                    created += 1;
                    files.push(f);
                    let size = (gamma.sample(&mut rng).round() as u64).max(1);
                    (f, size)
                }
            };
            let n = left.min(CHUNK);
            let off = self.fs.size(f as u32);
            let before = off.div_ceil(BLOCK);
            let ok = self
                .fs
                .write(f as u32, off, n, now, &mut self.calls)
                .is_ok();
            self.calls.clear();
            if !ok {
                break;
            }
            // Aging's history is on disk as it is made: a file system that
            // places data at writeback places each write at once.
            let (first, last) = (off / BLOCK, (off + n).div_ceil(BLOCK));
            let mut placed = Vec::new();
            self.fs
                .place(f as u32, first, (last - first) as u32, now, &mut placed);
            used += (off + n).div_ceil(BLOCK) - before;
            open[w] = (left > n).then_some((f, left - n));
        }
        while used > target && !files.is_empty() {
            let i = rng.gen_range(0..files.len());
            let f = files.swap_remove(i);
            used -= self.fs.size(f as u32).div_ceil(BLOCK);
            self.fs.unlink(f as u32, now, &mut self.calls);
            self.calls.clear();
            deleted += 1;
        }
        self.calls.clear();
        self.fs.settle();
        self.aged = (created, deleted, used);
        Ok(())
    }

    /// The file system's thread's stream.
    fn daemon_stream(&self) -> u32 {
        self.threads.len() as u32
    }

    /// What a file system's fsync or commit writes, in the device's pages
    /// and the page cache's inode numbers.
    fn in_pages(&self, mut io: FsyncIo) -> FsyncIo {
        let pages = BLOCK / crate::pagecache::PAGE;
        let base = self.base * pages;
        for f in &mut io.ordered {
            *f = Self::ino(*f as u64);
        }
        for b in &mut io.metadata {
            *b = base + *b * pages;
        }
        for r in io.direct.iter_mut().chain(&mut io.reads) {
            r.0 = base + r.0 * pages;
            r.1 *= pages as u32;
        }
        for z in &mut io.resets {
            *z = base + *z * pages;
        }
        io
    }
}

mod source;

#[cfg(test)]
mod tests;
