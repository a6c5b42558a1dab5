//! The fio-style synthetic workload generator, and the page cache's protocol
//! with the application whose calls it runs ([`AppSource`]). The engine's
//! request protocol ([`RequestSource`], [`HostRequest`], ...) is
//! `ssd_core::workload`, re-exported here.
//!
//! Options follow fio's names and meanings: `rw`, `bs`, `rwmixread`, `iodepth`,
//! `rate_iops` with `rate_process`, `number_ios`, `size`, `offset`,
//! `random_distribution`, `randseed`. Sources are iterators: nothing is
//! materialised up front, so a billion-request run uses constant memory.

use rand::Rng;
use serde::{Deserialize, Serialize};
use ssd_core::error::{invalid, ConfigError};
use ssd_core::rng::{SimRng, SimRngExt};
use ssd_core::units::{Dur, SimTime, Size};
pub use ssd_core::workload::*;
use std::fmt;

mod config;
mod fio_gen;
pub mod flow_control;
pub mod pattern;
pub mod placement;
pub mod zbd;
pub use config::*;
pub use fio_gen::FioGen;
pub use flow_control::FlowGroups;
pub use pattern::{BlockSizes, BsDraw, RandomMap};
pub use zbd::{ZbdDevice, ZbdOptions};

/// What a page cache asks of the application whose calls it runs (a
/// closed-loop source of file-level calls: Filebench over a file system, a
/// buffered fio job), beside the requests themselves: how the pieces of a
/// call belong together, what a call asks beyond its bytes, the time, and
/// what an fsync writes after the file's data. A source the engine runs
/// directly needs none of it; each method's default is "nothing".
pub trait AppSource: RequestSource {
    /// Whether the request the last `next_request` returned is followed,
    /// on its stream, by more pieces of the same application call (one read
    /// or write whose bytes lie in several places on the device, as a
    /// file's extents): the page cache counts and times the pieces as one
    /// call, from the first piece's start to the last one's end.
    fn more_follow(&self) -> bool {
        false
    }
    /// What the call of the request the last `next_request` returned asks
    /// of the page cache beside its bytes: an O_DSYNC write, CPU work
    /// before it (see [`CallExtras`]).
    fn call_extras(&self) -> CallExtras {
        CallExtras::default()
    }
    /// A closed-loop source run by the page cache is told the simulated
    /// time before it is asked for calls (a file system's timers: a
    /// journal's commit interval).
    fn clock(&mut self, _now: SimTime) {}
    /// What an fsync of file `ino` writes after the file's data is written
    /// and before the device flush (a file system's journal commit), in the
    /// device's 4 KiB pages and the source's inode numbers.
    fn fsync_io(&mut self, _ino: u32, _now: SimTime) -> FsyncIo {
        FsyncIo::default()
    }
    /// The file system's thread runs a journal commit (a call marked
    /// [`CallExtras::commit`]): what it writes, as an fsync's steps are
    /// given (the ordered data, the log, the commit block), or nothing. The
    /// running transaction closes now (jbd2's `jbd2_journal_commit_transaction`
    /// in kjournald2).
    fn commit_io(&mut self, _now: SimTime) -> Option<FsyncIo> {
        None
    }
    /// The commit [`AppSource::commit_io`] started has reached the device.
    fn commit_done(&mut self, _now: SimTime) {}
    /// Whether transaction `tid` has committed (an fsync waiting for it,
    /// [`CommitWait`], may return).
    fn committed(&self, _tid: u64) -> bool {
        true
    }
    /// The stream of the file system's thread (kjournald2), which runs
    /// the commits asked for ([`AppSource::take_commit`]).
    fn journal_stream(&self) -> u32 {
        0
    }
    /// Whether the file system asked its thread for a commit since the
    /// last call (its timer, a full transaction, an fsync's
    /// [`CommitWait::start`]): the page cache hands that thread a commit
    /// call ([`CallExtras::commit`]).
    fn take_commit(&mut self) -> bool {
        false
    }
    /// Bytes of anonymous memory the application's threads hold for the
    /// whole run, which the page cache cannot use (Filebench's per-thread
    /// `memsize`, fio's I/O buffers).
    fn memory(&self) -> u64 {
        0
    }
    /// Report sections the application makes of what the host measured of
    /// its calls (Filebench's IO Summary), beside its own
    /// (`RequestSource::report_sections`).
    fn host_report(&self, _host: &HostRun) -> Vec<(String, serde_json::Value)> {
        Vec::new()
    }
    /// Where the file system writes `n` dirty pages of file `ino` from
    /// page `index`, which the page cache is about to write back: a file
    /// system that places data at writeback (F2FS's
    /// `f2fs_outplace_write_data`, called from `f2fs_write_data_pages`)
    /// hands the cache its files' pages as file pages
    /// ([`crate::pagecache::file_page`]), not device pages, and chooses
    /// their device blocks here, in the order the cache writes them. It
    /// pushes the placed pages as runs on `out`, in file order; a page no
    /// run covers has nothing to write (its file was deleted since).
    fn place(&mut self, _ino: u32, _index: u64, _n: u32, _now: SimTime, _out: &mut Vec<FilePiece>) {
    }
    /// What the write of `pages` device pages from page `dev`, which the
    /// page cache is about to submit (writeback, a file system's own
    /// writes, O_DIRECT), carries beside its bytes ([`WriteTag`]): its
    /// data placement directive, and the file system's log that orders
    /// it on a zoned drive. Nothing by default.
    fn write_tag(&self, _dev: u64, _pages: u32) -> WriteTag {
        WriteTag::default()
    }
    /// Where `n` pages of file `ino` from page `index` are on the device,
    /// for a read of file pages: runs on `out`, in file order; a page no
    /// run covers is a hole (a block reserved, not written yet), read as
    /// zeros without I/O.
    fn locate(&mut self, _ino: u32, _index: u64, _n: u32, _out: &mut Vec<FilePiece>) {}
    /// The pages of file `ino` up to its end (its size rounded up): a
    /// read of file pages, readahead included, stops there
    /// (`page_cache_ra_unbounded` and `filemap_get_pages` stop at
    /// `i_size`).
    fn file_pages(&self, _ino: u32) -> u64 {
        0
    }
    /// Whether background writeback (the flusher, and 2.6.35's writers in
    /// `balance_dirty_pages`: `WB_SYNC_NONE`) writes file `ino`'s dirty
    /// pages; a file system that writes its data only in its own
    /// constructions (NILFS2's `nilfs_writepages`) says no, and they stay
    /// dirty until it does.
    fn background_writeback(&self, _ino: u32) -> bool {
        true
    }
}

/// What a write carries beside its bytes ([`AppSource::write_tag`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WriteTag {
    /// Its data placement directive (a drive with Flexible Data
    /// Placement), or none.
    pub placement: Placement,
    /// The file system's log the write goes through when the log's next
    /// write waits for the one that fills a zone (F2FS's zoned mode,
    /// `zone_pending_bio` in `f2fs_submit_page_write`): the log's number,
    /// and whether this write holds the zone's last block. The page cache
    /// holds a log's writes while such a write of it is on the device.
    pub zone_log: Option<(u8, bool)>,
}

/// A run of a file's pages on the device ([`AppSource::place`],
/// [`AppSource::locate`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FilePiece {
    /// The run's first page in the file.
    pub index: u64,
    /// Its first device page (4 KiB).
    pub dev: u64,
    /// Pages in the run.
    pub pages: u32,
    /// The run may share a request with the run before it when it follows
    /// it on the device (a file system's bio of pages placed one after
    /// another, `f2fs_submit_page_write`); false where the block layer
    /// splits, at a zone's start (`chunk_sectors`).
    pub joins: bool,
}

/// What the host measured of an application's calls over the measured
/// span (after a ramp), for [`AppSource::host_report`].
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct HostRun {
    /// The measured span: from its start to the last call's end, seconds.
    pub secs: f64,
    /// The calls' latencies summed (each from its entry to its return),
    /// with those of the system calls without I/O made before them
    /// ([`CallExtras::syscalls`]), ns.
    pub latency_ns: u128,
    /// The host's CPU time but the application's own computing and the
    /// interrupts: what Linux counts as user, nice and system time, ns.
    pub cpu_ns: u128,
}

/// What an fsync writes after the file's data is written and before the
/// device flush.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FsyncIo {
    /// Other files whose dirty data goes first (ext3's ordered mode: the
    /// files with new blocks in the committing transaction), by index.
    pub ordered: Vec<u32>,
    /// Metadata blocks to write back from the buffer cache if dirty (ext2's
    /// inode and indirect blocks of the file).
    pub metadata: Vec<u64>,
    /// Direct writes (a journal commit), as runs of (block, blocks).
    pub direct: Vec<(u64, u32)>,
    /// Flush the device cache before the direct writes' last block (a
    /// journal commit block's barrier) as well as after.
    pub barrier: bool,
    /// Every direct run is a barrier write of its own (XFS without delayed
    /// logging: each in-core log buffer is written ordered): a flush before
    /// each run; the fsync's own flush follows the last.
    pub barrier_each: bool,
    /// No device flush after the fsync (`barrier=0`/`nobarrier`: the file
    /// system issues none).
    pub no_flush: bool,
    /// Which of the direct writes are `REQ_SYNC`: the log blocks, and
    /// the last block (the commit block).
    pub sync: CommitSync,
    /// The fsync waits, after the steps above and before its flush, for
    /// the journal's commit of a transaction that the file system's thread
    /// writes (jbd2's `jbd2_log_wait_commit`).
    pub wait: Option<CommitWait>,
    /// Direct reads submitted at once and waited for before anything else
    /// (a cleaner reading its victim's valid blocks), as runs of (block,
    /// blocks).
    pub reads: Vec<(u64, u32)>,
    /// Zone resets (Zone Management Send, `REQ_OP_ZONE_RESET`) of the
    /// zones starting at these blocks, submitted at once after everything
    /// else (a commit's flush included) and waited for: the zones a log
    /// file system emptied, reset before it writes them again.
    pub resets: Vec<u64>,
}

/// An fsync's wait for a journal commit that the file system's thread
/// writes ([`FsyncIo::wait`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CommitWait {
    /// The transaction the file's changes are in.
    pub tid: u64,
    /// The fsync asked for the commit (`jbd2_log_start_commit` woke
    /// kjournald2): the file system's thread gets a commit call
    /// ([`AppSource::take_commit`]).
    pub start: bool,
}

/// Which of a journal's or log's writes the kernel marks `REQ_SYNC`
/// (`FsConfig::commit_sync` in the file systems): its log blocks, and its last block (the
/// commit block, super root or last log block). The block layer's
/// schedulers queue them apart from the flusher's writes when they are.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CommitSync {
    /// The log blocks before the last.
    pub log: bool,
    /// The last block.
    pub commit: bool,
    /// The other files' data an ordered-mode commit writes first
    /// ([`FsyncIo::ordered`]).
    pub ordered: bool,
}

impl Default for CommitSync {
    /// A current kernel's jbd2 and XFS: every block `REQ_SYNC`.
    fn default() -> CommitSync {
        CommitSync {
            log: true,
            commit: true,
            ordered: true,
        }
    }
}

impl FsyncIo {
    /// Nothing to write but the fsync's device flush, which a file system
    /// mounted without barriers (`barriers` false) does not issue.
    pub fn flush_only(barriers: bool) -> FsyncIo {
        FsyncIo {
            no_flush: !barriers,
            ..FsyncIo::default()
        }
    }

    /// A journal or log commit of the runs `direct`: with barriers, a flush
    /// before its last block and after it; without, neither.
    pub fn commit(direct: Vec<(u64, u32)>, barriers: bool) -> FsyncIo {
        FsyncIo {
            direct,
            barrier: barriers,
            ..FsyncIo::flush_only(barriers)
        }
    }
}

/// What an application call asks of the page cache beside its request
/// ([`AppSource::call_extras`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CallExtras {
    /// An O_DSYNC write: its pages are written back and the device cache
    /// flushed before the call returns (`generic_write_sync` of the range),
    /// as fio's `sync` does for every write of a job.
    pub dsync: bool,
    /// CPU cycles the thread computes before the call (Filebench's `hog`
    /// flowop), on one of the host's cores (`cpu.cores`) at `cpu.ghz`; not
    /// part of the call's latency.
    pub cpu_cycles: u64,
    /// System calls without I/O of their own and benchmark operations the
    /// thread made before the call (Filebench's open, close, stat, create
    /// and delete flowops, and its per-flowop work): their CPU
    /// ([`crate::cpu::CpuConfig::calls`]) is paid before the call, not part
    /// of its latency.
    pub syscalls: crate::cpu::Syscalls,
    /// Not a call but the end of a file the application deleted: its
    /// unlink has dropped the last reference (`iput` -> `evict`), and every
    /// page of the file (the request's tag) leaves the cache, the dirty ones
    /// unwritten, each after the I/O in flight on it
    /// (`truncate_inode_pages_final`). It comes after every call on the
    /// file that came before it (each held the file) and before the writes
    /// that came after it (a new file of the same number: the file's
    /// lock); the request's op, address and length are not used, and
    /// nothing reaches the device.
    pub unlink: bool,
    /// Not a call but a journal commit the file system's thread runs (its
    /// timer, or an fsync's request): the page cache asks
    /// [`AppSource::commit_io`] what it writes when the thread gets to it,
    /// writes that, then tells [`AppSource::commit_done`] and wakes the
    /// fsyncs waiting for it. The request's op, address and length are not
    /// used.
    pub commit: bool,
    /// An O_DIRECT read or write of a file (Filebench's `directio`): the
    /// page cache writes back and waits for the range's dirty pages
    /// (`filemap_write_and_wait_range`), a write then drops the range's
    /// clean pages (`kiocb_invalidate_pages`), and the request goes to the
    /// device as it is (split at `max_sectors_kb`, a write `REQ_SYNC`:
    /// `iomap_dio_bio_opflags`), the thread waiting for it; no copy.
    pub direct: bool,
    /// Not a call but a wait (non-zero): the calling thread waits until
    /// the file system's thread has done work `await_commit`
    /// ([`AppSource::committed`]), as a writer waits for the cleaning
    /// that makes room for its data. The request's op, address and length
    /// are not used, and nothing reaches the device.
    pub await_commit: u64,
    /// The thread's file descriptor the call is made through (Filebench's
    /// `fd=`; 0 for a source whose thread has one file, fio's job file or
    /// the block device), and which open of it (a number the source gives
    /// each `open`, 0 for the one before the first call). The page cache
    /// keeps readahead state per open file as Linux keeps it in the
    /// `struct file` (`file->f_ra`): a new open of the descriptor starts
    /// a fresh state (`file_ra_state_init`).
    pub fd: u32,
    /// See [`CallExtras::fd`].
    pub open: u64,
}

/// Requests of a closed-loop source, pre-built (tests, small experiments).
pub struct VecSource {
    reqs: std::vec::IntoIter<HostRequest>,
    timing: Timing,
}
impl VecSource {
    /// A source yielding `reqs` in order with `timing`.
    pub fn new(reqs: Vec<HostRequest>, timing: Timing) -> VecSource {
        VecSource {
            reqs: reqs.into_iter(),
            timing,
        }
    }
}
impl AppSource for VecSource {}

impl RequestSource for VecSource {
    fn timing(&self) -> Timing {
        self.timing
    }
    fn next_request(&mut self) -> Option<Result<HostRequest, SourceError>> {
        self.reqs.next().map(Ok)
    }
}

/// Convert the time of a wall-clock-free `Dur` to requests/s for reports.
pub fn per_second(count: u64, span: Dur) -> f64 {
    if span.0 == 0 {
        0.0
    } else {
        count as f64 / span.secs_f64()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    fn collect(cfg: &WorkloadConfig, n: usize) -> Vec<HostRequest> {
        let mut g = FioGen::new(cfg, 1 << 30, 7);
        (0..n).map(|_| g.next_request().unwrap().unwrap()).collect()
    }

    /// fio's percentage_random: of a random job's requests, that share go to
    /// a random block; the others continue where the last request of their
    /// direction ended. With 1 GiB of 4 KiB blocks a random block follows
    /// its direction's last one by chance 1/262,144, so the share of
    /// requests that continue a run is (100 - p) % within sampling error.
    #[test]
    fn percentage_random_splits_random_and_sequential_requests() {
        for (p, rw) in [
            (100u32, RwMode::RandWrite),
            (70, RwMode::RandWrite),
            (20, RwMode::RandRw),
            (0, RwMode::RandRead),
        ] {
            let cfg = WorkloadConfig {
                rw,
                percentage_random: p,
                number_ios: Some(20_000),
                ..Default::default()
            };
            let reqs = collect(&cfg, 20_000);
            let mut last: [Option<u64>; 2] = [None, None];
            let mut continued = 0usize;
            for r in &reqs {
                let d = (r.op == IoOp::Write) as usize;
                if last[d] == Some(r.lba) {
                    continued += 1;
                }
                last[d] = Some(r.lba + r.sectors as u64);
            }
            let share = continued as f64 / reqs.len() as f64;
            let want = (100 - p) as f64 / 100.0;
            // Binomial sd at n = 20,000 is at most 0.0036: 5 sd.
            assert!(
                (share - want).abs() < 0.018,
                "p={p}: {share} continued, want {want}"
            );
        }
        let bad = WorkloadConfig {
            percentage_random: 101,
            ..Default::default()
        };
        let err = bad.validate(1 << 30).unwrap_err().to_string();
        assert!(err.contains("workload.percentage_random"), "{err}");
    }
    #[test]
    fn sequential_wraps_in_span() {
        let cfg = WorkloadConfig {
            rw: RwMode::Write,
            size: Some(Size::kib(16)),
            number_ios: Some(6),
            ..Default::default()
        };
        let r = collect(&cfg, 6);
        let lbas: Vec<u64> = r.iter().map(|r| r.lba).collect();
        assert_eq!(lbas, vec![0, 8, 16, 24, 0, 8]);
    }
    #[test]
    fn mix_ratio_and_alignment() {
        let cfg = WorkloadConfig {
            rw: RwMode::RandRw,
            rwmixread: 70,
            number_ios: Some(20000),
            ..Default::default()
        };
        let r = collect(&cfg, 20000);
        let reads = r.iter().filter(|r| r.op == IoOp::Read).count() as f64 / 20000.0;
        assert!((reads - 0.7).abs() < 0.02, "{reads}");
        assert!(r
            .iter()
            .all(|r| r.lba % 8 == 0 && r.lba + 8 <= (1 << 30) / 512));
    }
    #[test]
    fn zipf_is_skewed_and_in_range() {
        let cfg = WorkloadConfig {
            rw: RwMode::RandRead,
            random_distribution: Distribution::Zipf(1.2),
            ..Default::default()
        };
        let r = collect(&cfg, 20000);
        let mut counts = std::collections::BTreeMap::new();
        for q in &r {
            *counts.entry(q.lba).or_insert(0u32) += 1;
        }
        let max = *counts.values().max().unwrap();
        assert!(max > 1000, "hottest block only {max} hits");
        assert!(r.iter().all(|q| q.lba + 8 <= (1 << 30) / 512));
    }
    #[test]
    fn poisson_mean_interarrival() {
        let cfg = WorkloadConfig {
            rate_iops: Some(1000),
            rate_process: RateProcess::Poisson,
            ..Default::default()
        };
        let r = collect(&cfg, 20000);
        let mean = r.last().unwrap().arrival.0 as f64 / 19999.0;
        assert!((mean - 1e6).abs() < 3e4, "{mean}");
    }
}
