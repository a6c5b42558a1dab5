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

pub mod pattern;
pub use pattern::{BlockSizes, BsDraw, RandomMap};

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
}

/// fio's `rw=`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RwMode {
    /// Sequential reads.
    Read,
    /// Sequential writes.
    Write,
    /// Random reads.
    RandRead,
    /// Random writes.
    RandWrite,
    /// Sequential mixed (`rw` / `readwrite`).
    Rw,
    /// Random mixed reads and writes (`rwmixread` percent reads).
    RandRw,
    /// Sequential trims.
    Trim,
    /// Random trims.
    RandTrim,
    /// fio's `trimwrite`: each block trimmed, then written, in order.
    TrimWrite,
    /// fio's `randtrimwrite`: a random block trimmed, then written.
    RandTrimWrite,
}

impl RwMode {
    /// Parse fio's name (`read`, `write`, `randread`, `randwrite`, `rw`/`readwrite`, `randrw`,
    /// `trim`, `randtrim`); an error lists them.
    pub fn parse(s: &str) -> Result<RwMode, String> {
        Ok(match s {
            "read" => RwMode::Read,
            "write" => RwMode::Write,
            "randread" => RwMode::RandRead,
            "randwrite" => RwMode::RandWrite,
            "rw" | "readwrite" => RwMode::Rw,
            "randrw" => RwMode::RandRw,
            "trim" => RwMode::Trim,
            "randtrim" => RwMode::RandTrim,
            "trimwrite" => RwMode::TrimWrite,
            "randtrimwrite" => RwMode::RandTrimWrite,
            _ => return Err(format!("unknown rw mode {:?} (read, write, randread, randwrite, rw, randrw, trim, randtrim)", ssd_core::units::clip(s))),
        })
    }
    /// Whether the mode picks random addresses (the `rand*` modes).
    pub fn is_random(self) -> bool {
        matches!(
            self,
            RwMode::RandRead
                | RwMode::RandWrite
                | RwMode::RandRw
                | RwMode::RandTrim
                | RwMode::RandTrimWrite
        )
    }
}

/// fio's `random_distribution=`.
#[derive(Clone, Debug, PartialEq)]
pub enum Distribution {
    /// Uniform over the span (fio's `random`).
    Uniform,
    /// Zipf with exponent theta (positive, not 1), as fio's `zipf:THETA`.
    Zipf(f64),
    /// Pareto with shape h in (0, 1), as fio's `pareto:H`.
    Pareto(f64),
    /// fio's `zoned:ACCESS/RANGE:...`: each zone takes ACCESS percent of
    /// the requests, uniformly over the next RANGE percent of the span
    /// (`__get_next_rand_offset_zoned`); both add up to 100.
    Zoned(Vec<(u32, u32)>),
}

impl Distribution {
    /// Parse `random`/`uniform`, `zipf:THETA` or `pareto:H`; an error says which values are
    /// allowed.
    pub fn parse(s: &str) -> Result<Distribution, String> {
        let s = s.trim();
        if s == "random" || s == "uniform" {
            return Ok(Distribution::Uniform);
        }
        let q = || ssd_core::units::clip(s);
        if let Some(z) = s.strip_prefix("zoned:") {
            return Self::zoned(z).map_err(|m| format!("random_distribution {:?}: {m}", q()));
        }
        let (name, arg) = s.split_once(':').ok_or_else(|| {
            format!(
                "unknown random_distribution {:?} (uniform, zipf:THETA, pareto:H)",
                q()
            )
        })?;
        let v: f64 = arg
            .parse()
            .map_err(|_| format!("bad parameter in random_distribution {:?}", q()))?;
        match name {
            "zipf" if v > 0.0 && v != 1.0 && v.is_finite() => Ok(Distribution::Zipf(v)),
            "zipf" => Err(format!(
                "zipf theta must be positive and not 1.0 (as in fio), got {v}"
            )),
            "pareto" if v > 0.0 && v < 1.0 => Ok(Distribution::Pareto(v)),
            "pareto" => Err(format!("pareto h must be in (0, 1), got {v}")),
            _ => Err(format!(
                "unknown random_distribution {:?} (uniform, zipf:THETA, pareto:H, \
                 zoned:ACCESS/RANGE:...)",
                q()
            )),
        }
    }

    /// fio's zones (`options.c`, `zone_split_ddir`): `ACCESS/RANGE`
    /// percentages; a blank range shares what the others leave of 100.
    fn zoned(z: &str) -> Result<Distribution, String> {
        if z.contains(',') {
            return Err("zones by direction are not supported; give one set".into());
        }
        let pct = |t: &str| {
            t.trim()
                .parse::<u32>()
                .ok()
                .filter(|&p| p <= 100)
                .ok_or_else(|| format!("{t:?}: a percentage is 0..=100"))
        };
        let mut zones: Vec<(u32, Option<u32>)> = Vec::new();
        for e in z.split(':') {
            let (a, r) = e
                .split_once('/')
                .ok_or_else(|| format!("{e:?}: expected ACCESS/RANGE"))?;
            let r = if r.trim().is_empty() {
                None
            } else {
                Some(pct(r)?)
            };
            zones.push((pct(a)?, r));
        }
        if zones.len() > 256 {
            return Err("at most 256 zones, as in fio".into());
        }
        let access: u32 = zones.iter().map(|z| z.0).sum();
        let given: u32 = zones.iter().filter_map(|z| z.1).sum();
        let blank = zones.iter().filter(|z| z.1.is_none()).count() as u32;
        if access != 100 || given > 100 {
            return Err(format!(
                "accesses must add up to 100 (got {access}) and ranges to at most 100 (got {given})"
            ));
        }
        let share = (100 - given).checked_div(blank).unwrap_or(0);
        let mut out: Vec<(u32, u32)> = zones.iter().map(|z| (z.0, z.1.unwrap_or(share))).collect();
        let ranges: u32 = out.iter().map(|z| z.1).sum();
        if ranges != 100 {
            match zones.iter().rposition(|z| z.1.is_none()) {
                Some(i) => out[i].1 += 100 - ranges,
                None => return Err(format!("ranges must add up to 100, got {ranges}")),
            }
        }
        Ok(Distribution::Zoned(out))
    }
}
impl fmt::Display for Distribution {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        match self {
            Distribution::Uniform => f.write_str("random"),
            Distribution::Zipf(t) => write!(f, "zipf:{t}"),
            Distribution::Pareto(h) => write!(f, "pareto:{h}"),
            Distribution::Zoned(z) => {
                f.write_str("zoned:")?;
                for (i, (a, r)) in z.iter().enumerate() {
                    if i > 0 {
                        f.write_str(":")?;
                    }
                    write!(f, "{a}/{r}")?;
                }
                Ok(())
            }
        }
    }
}
impl Serialize for Distribution {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.to_string())
    }
}
impl<'de> Deserialize<'de> for Distribution {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Distribution::parse(&String::deserialize(d)?).map_err(serde::de::Error::custom)
    }
}

/// fio's `rate_process=`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RateProcess {
    /// Fixed inter-arrival time 1/rate_iops.
    Linear,
    /// Exponential inter-arrival times with mean 1/rate_iops.
    Poisson,
}

/// The synthetic workload, spelled as fio spells it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WorkloadConfig {
    /// Access pattern (fio's `rw`); default randread.
    pub rw: RwMode,
    /// Request size (fio's `bs`), a multiple of 512 bytes; default 4 KiB.
    pub bs: Size,
    /// Percentage of reads in mixed modes.
    pub rwmixread: u32,
    /// Outstanding requests (closed loop) when rate_iops is not set.
    pub iodepth: u32,
    /// Open loop at this many requests per second.
    pub rate_iops: Option<u64>,
    /// Inter-arrival process of the open loop (`rate_iops`); default linear.
    pub rate_process: RateProcess,
    /// fio's `number_ios`: the job ends after this many requests (counted
    /// from the ramp's end). None (written `0`, fio's "no count"): it ends
    /// after one pass over `size` (or `io_size` bytes), `loops` times, as
    /// fio's does; `[workload]`'s default is 200,000 requests.
    #[serde(default = "default_count", with = "no_count_is_zero")]
    pub number_ios: Option<u64>,
    /// Address span; default the whole logical capacity (minus offset).
    pub size: Option<Size>,
    /// Start of the address span, bytes (fio's `offset`); default 0.
    pub offset: Size,
    /// Distribution of random addresses over the span; default uniform.
    pub random_distribution: Distribution,
    /// fio's `percentage_random`: of a random workload's requests, this
    /// percentage go to a random block and the rest continue sequentially
    /// from where the last request of the same direction ended (100, the
    /// default: all random; 0: all sequential). Ignored by sequential modes.
    #[serde(default = "hundred")]
    pub percentage_random: u32,
    /// Seed of the address/mix generator; default derived from sim.seed.
    pub randseed: Option<u64>,
    /// fio's `direct`: bypass the page cache (O_DIRECT). True by default in
    /// ssdsim's `[workload]` (block-level runs); a fio job file follows fio,
    /// whose default is buffered (`direct=0`). False runs the workload
    /// through `[page_cache]` as one application thread making
    /// synchronous calls.
    #[serde(default = "yes")]
    pub direct: bool,
    /// fio's `sync`: buffered writes are O_SYNC (each waits for its pages
    /// and a cache flush).
    #[serde(default)]
    pub sync: bool,
    /// fio's `fsync`: fsync after every this many writes (0: never).
    #[serde(default)]
    pub fsync: u64,
    /// fio's `end_fsync`: fsync once the last call is done.
    #[serde(default)]
    pub end_fsync: bool,
    /// fio's `norandommap`: random addresses are drawn independently, so a
    /// pass may touch a block twice and miss another. True by default in
    /// `[workload]` (as MQSim's generator and the analytic models draw); a
    /// fio job file follows fio, whose default keeps the random map: each
    /// block once per pass (uniform random addresses only, as in fio).
    #[serde(default = "yes", skip_serializing_if = "is_true")]
    pub norandommap: bool,
    /// fio's `io_size`: the bytes the job does, counted from its start (the
    /// ramp included), going over `size` as often as it takes. None: one
    /// pass over `size` when `number_ios` is not set either.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub io_size: Option<Size>,
    /// fio's `loops`: the job is done this many times (each a new pass,
    /// with a fresh random map).
    #[serde(default = "one", skip_serializing_if = "is_one")]
    pub loops: u32,
    /// fio's sizes by direction (`bs=4k,64k`, `bsrange`, `bssplit`), as
    /// `"READ,WRITE,TRIM"` in bytes (see [`BlockSizes`]); None: `bs` for
    /// every request.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub block_sizes: Option<BlockSizes>,
    /// fio's `rw=write:SIZE` (`ddir_seq_add`): bytes skipped after each
    /// sequential request (sequential I/O with holes).
    #[serde(default, skip_serializing_if = "is_zero_size")]
    pub ddir_seq_add: Size,
    /// fio's negative `ddir_seq_add` (`rw=read:-8k`): each sequential
    /// request starts that far before the end of the one before (reading
    /// backwards), wrapping to the span's end.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub ddir_seq_back: bool,
    /// fio's `rw=randread:N` (`ddir_seq_nr`): a random workload takes a new
    /// random offset every N requests and goes on sequentially between.
    #[serde(default = "one", skip_serializing_if = "is_one")]
    pub ddir_seq_nr: u32,
    /// fio's `blockalign`: random offsets are multiples of this (0: of the
    /// direction's smallest size). An alignment other than that turns the
    /// random map off, as in fio (`fixup_options`).
    #[serde(default, skip_serializing_if = "is_zero_size")]
    pub blockalign: Size,
    /// fio's `thinktime`: once `thinktime_blocks` requests have completed,
    /// the job lets its requests in flight complete and pauses this long
    /// before the next (`handle_thinktime` in fio's backend.c). Direct,
    /// closed-loop jobs only. Zero: no pause.
    #[serde(default, skip_serializing_if = "Dur::is_zero")]
    pub thinktime: Dur,
    /// fio's `thinktime_blocks`: requests between pauses (default 1).
    #[serde(default = "one_u64", skip_serializing_if = "is_one_u64")]
    pub thinktime_blocks: u64,
    /// fio's `thinktime_blocks_type=issue`: count the requests issued, not
    /// completed, towards `thinktime_blocks`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub thinktime_on_issue: bool,
    /// fio's `verify` (with `do_verify`, its default): once the job's
    /// writes are done, it reads back what it wrote (`log_io_piece`,
    /// `get_next_verify`): in the order written under the random map, else
    /// each range's last write in offset order.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub verify: bool,
    /// fio's `nrfiles`: the job's span is this many files, laid one after
    /// the other from `offset` (a block-level job's files as address
    /// ranges), each with its own sequential position and random map.
    #[serde(default = "one", skip_serializing_if = "is_one")]
    pub nrfiles: u32,
    /// fio's `filesize`: each file's size (None: the span divided among
    /// the files, in whole smallest blocks).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub filesize: Option<Size>,
    /// fio's `file_service_type`: which file each request goes to.
    #[serde(default, skip_serializing_if = "FileService::is_default")]
    pub file_service_type: FileService,
    /// A mixed workload (`rw`/`randrw`) as fio runs it: the direction holds
    /// for a stretch (`get_rw_ddir` draws a new one only once the current
    /// direction's requests reach the other's times its share,
    /// `set_rwmix_bytes`), and each direction has its own sequential
    /// position (`last_pos[ddir]`). False, `[workload]`'s default (as
    /// MQSim's generator draws): each request's direction is drawn on its
    /// own, and a sequential mix shares one position. A fio job file sets it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub rwmix_cycle: bool,
    /// fio's `time_based` (a job file's, with a runtime): a sequential
    /// direction at the end of `size` starts again from the start on its
    /// own (`get_next_seq_offset`), where the pass would otherwise end.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub time_based: bool,
    /// fio's strided zones (`zonemode=strided`, `zonesize`): the job does
    /// this many bytes in a zone of `zonerange` bytes, then moves on by
    /// `zonerange + zoneskip` (wrapping to `offset` at the device's end, or
    /// at the end of the file when `filesize` is given), as
    /// `setup_strided_zone_mode` does. Zero: no zones.
    #[serde(default, skip_serializing_if = "is_zero_size")]
    pub zonesize: Size,
    /// fio's `zonerange`: a zone's size (zero: `zonesize`).
    #[serde(default, skip_serializing_if = "is_zero_size")]
    pub zonerange: Size,
    /// fio's `zoneskip`: bytes skipped between zones.
    #[serde(default, skip_serializing_if = "is_zero_size")]
    pub zoneskip: Size,
}

/// fio's `file_service_type` (`get_next_file` in io_u.c): which of a
/// job's files the next request goes to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FileService {
    /// The next file after every N requests (`roundrobin`, fio's default,
    /// N = 1).
    RoundRobin(u32),
    /// A random file after every N requests (`random`).
    Random(u32),
    /// One file until it is done, then the next (`sequential`).
    Sequential,
}

impl Default for FileService {
    fn default() -> Self {
        FileService::RoundRobin(1)
    }
}

impl FileService {
    fn is_default(&self) -> bool {
        *self == FileService::default()
    }
    /// Parse fio's `roundrobin[:N]`, `random[:N]` or `sequential`.
    pub fn parse(s: &str) -> Result<FileService, String> {
        let (name, n) = match s.split_once(':') {
            Some((a, b)) => (
                a.trim(),
                Some(
                    b.trim()
                        .parse::<u32>()
                        .ok()
                        .filter(|&n| n > 0)
                        .ok_or_else(|| {
                            format!("{:?}: N must be a positive count", ssd_core::units::clip(s))
                        })?,
                ),
            ),
            None => (s.trim(), None),
        };
        match name {
            "roundrobin" => Ok(FileService::RoundRobin(n.unwrap_or(1))),
            "random" => Ok(FileService::Random(n.unwrap_or(1))),
            "sequential" if n.is_none() => Ok(FileService::Sequential),
            _ => Err(format!(
                "{:?}: expected roundrobin[:N], random[:N] or sequential (fio's zipf, pareto, \
                 normal and gauss file choices are not modelled)",
                ssd_core::units::clip(s)
            )),
        }
    }
}
impl fmt::Display for FileService {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        match self {
            FileService::RoundRobin(n) => write!(f, "roundrobin:{n}"),
            FileService::Random(n) => write!(f, "random:{n}"),
            FileService::Sequential => f.write_str("sequential"),
        }
    }
}
impl Serialize for FileService {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.to_string())
    }
}
impl<'de> Deserialize<'de> for FileService {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        FileService::parse(&String::deserialize(d)?).map_err(serde::de::Error::custom)
    }
}

fn one_u64() -> u64 {
    1
}
fn is_one_u64(n: &u64) -> bool {
    *n == 1
}

fn default_count() -> Option<u64> {
    WorkloadConfig::default().number_ios
}

/// `number_ios` in a configuration: `0` is fio's "no count" (None), so that
/// the echo of a job that ends by its size reads back as that job.
mod no_count_is_zero {
    use serde::{Deserialize, Deserializer, Serializer};
    pub fn serialize<S: Serializer>(v: &Option<u64>, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_u64(v.unwrap_or(0))
    }
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u64>, D::Error> {
        Ok(Some(u64::deserialize(d)?).filter(|&n| n > 0))
    }
}

fn is_true(b: &bool) -> bool {
    *b
}
fn one() -> u32 {
    1
}
fn is_one(n: &u32) -> bool {
    *n == 1
}
fn is_zero_size(s: &Size) -> bool {
    s.0 == 0
}

fn yes() -> bool {
    true
}

fn hundred() -> u32 {
    100
}

impl Default for WorkloadConfig {
    fn default() -> Self {
        WorkloadConfig {
            rw: RwMode::RandRead,
            bs: Size::kib(4),
            rwmixread: 50,
            iodepth: 32,
            rate_iops: None,
            rate_process: RateProcess::Linear,
            number_ios: Some(200_000),
            size: None,
            offset: Size(0),
            random_distribution: Distribution::Uniform,
            percentage_random: 100,
            randseed: None,
            direct: true,
            sync: false,
            fsync: 0,
            end_fsync: false,
            norandommap: true,
            io_size: None,
            loops: 1,
            block_sizes: None,
            ddir_seq_add: Size(0),
            ddir_seq_back: false,
            ddir_seq_nr: 1,
            blockalign: Size(0),
            thinktime: Dur::ZERO,
            thinktime_blocks: 1,
            thinktime_on_issue: false,
            verify: false,
            nrfiles: 1,
            filesize: None,
            file_service_type: FileService::RoundRobin(1),
            rwmix_cycle: false,
            time_based: false,
            zonesize: Size(0),
            zonerange: Size(0),
            zoneskip: Size(0),
        }
    }
}

/// The most memory a workload's random map may take (1 GiB: a map of
/// 512-byte blocks over 4 TiB).
pub const MAX_RANDOM_MAP_BYTES: u64 = 1 << 30;

fn min_bs_of(w: &WorkloadConfig) -> u64 {
    w.block_sizes.as_ref().map_or(w.bs.0, |b| b.min())
}

/// The deepest closed loop a workload may keep (`workload.iodepth`,
/// `replay.closed_loop_depth`): every outstanding request is held by the host.
pub const MAX_IODEPTH: u32 = 65_536;

impl WorkloadConfig {
    /// Check the workload against a drive of `logical_bytes`; an error names the field
    /// (`workload.NAME`).
    pub fn validate(&self, logical_bytes: u64) -> Result<(), ConfigError> {
        if self.bs.0 == 0 || !self.bs.0.is_multiple_of(SECTOR) {
            return Err(invalid(
                "workload.bs",
                format!(
                    "must be a positive multiple of 512 bytes, got {}",
                    self.bs.0
                ),
            ));
        }
        if self.bs.0 > u32::MAX as u64 * SECTOR / 2 {
            return Err(invalid("workload.bs", "too large"));
        }
        if self.percentage_random > 100 {
            return Err(invalid(
                "workload.percentage_random",
                format!("must be 0..=100, got {}", self.percentage_random),
            ));
        }
        if self.rwmixread > 100 {
            return Err(invalid(
                "workload.rwmixread",
                format!("must be 0..=100, got {}", self.rwmixread),
            ));
        }
        if self.iodepth == 0 || self.iodepth > MAX_IODEPTH {
            return Err(invalid(
                "workload.iodepth",
                format!("must be in 1..={MAX_IODEPTH}, got {}", self.iodepth),
            ));
        }
        if self.number_ios == Some(0) {
            return Err(invalid(
                "workload.number_ios",
                "must be at least 1 (0 would simulate nothing)",
            ));
        }
        if self.rate_iops == Some(0) {
            return Err(invalid("workload.rate_iops", "must be positive"));
        }
        if !self.offset.0.is_multiple_of(SECTOR) {
            return Err(invalid(
                "workload.offset",
                "must be a multiple of 512 bytes",
            ));
        }
        if self.offset.0 >= logical_bytes {
            return Err(invalid(
                "workload.offset",
                format!(
                    "{} is beyond the logical capacity {}",
                    self.offset.0, logical_bytes
                ),
            ));
        }
        let span = self.span(logical_bytes);
        if self.offset.0 + span > logical_bytes {
            return Err(invalid(
                "workload.size",
                format!(
                    "offset + size = {} exceeds the logical capacity of {} bytes",
                    self.offset.0 + span,
                    logical_bytes
                ),
            ));
        }
        if span < self.bs.0 {
            return Err(invalid(
                "workload.size",
                format!("span {span} is smaller than bs {}", self.bs.0),
            ));
        }
        if let Some(b) = &self.block_sizes {
            for (d, name) in b.0.iter().zip(["read", "write", "trim"]) {
                d.check()
                    .map_err(|m| invalid("workload.block_sizes", format!("{name}: {m}")))?;
            }
            if span < b.min() {
                return Err(invalid(
                    "workload.size",
                    format!(
                        "span {span} is smaller than the smallest block size {}",
                        b.min()
                    ),
                ));
            }
        }
        if self.loops == 0 {
            return Err(invalid("workload.loops", "must be at least 1"));
        }
        if self
            .io_size
            .is_some_and(|s| s.0 == 0 || s.0 > i64::MAX as u64)
        {
            return Err(invalid(
                "workload.io_size",
                format!("must be in 1..={} bytes", i64::MAX),
            ));
        }
        if !self.blockalign.0.is_multiple_of(SECTOR) || self.blockalign.0 > span {
            return Err(invalid(
                "workload.blockalign",
                "must be a multiple of 512 bytes, at most the span",
            ));
        }
        let zone = self.zone_range();
        if zone > 0 {
            for (name, v) in [
                ("zonesize", self.zonesize),
                ("zonerange", self.zonerange),
                ("zoneskip", self.zoneskip),
            ] {
                if !v.0.is_multiple_of(SECTOR) {
                    return Err(invalid(
                        &format!("workload.{name}"),
                        "must be a multiple of 512 bytes",
                    ));
                }
            }
            // The zones walk the device from `offset`, or the file.
            let room = match self.filesize {
                Some(_) => self.file_span(logical_bytes),
                None => logical_bytes - self.offset.0,
            };
            if zone < min_bs_of(self) || zone > room {
                return Err(invalid(
                    "workload.zonerange",
                    format!(
                        "a zone of {zone} bytes must hold a block ({}) and fit in the {room} \
                         bytes the zones walk (the device from offset, or filesize)",
                        min_bs_of(self),
                    ),
                ));
            }
            if self.nrfiles > 1 {
                return Err(invalid(
                    "workload.zonesize",
                    "strided zones work with one file (fio turns them off for several)",
                ));
            }
        } else if self.zonerange.0 > 0 || self.zoneskip.0 > 0 {
            return Err(invalid(
                "workload.zonesize",
                "zonerange and zoneskip need zonesize (the bytes done in each zone)",
            ));
        }
        if self.random_map() {
            // One bit a block of the smallest size (fio allocates the same),
            // over one zone when there are zones.
            let bits = if zone > 0 { zone } else { span } / min_bs_of(self).max(1);
            if bits / 8 > MAX_RANDOM_MAP_BYTES {
                return Err(invalid(
                    "workload.norandommap",
                    format!(
                        "the random map of {bits} blocks would take {} MiB (at most {} MiB): \
                         set norandommap, a larger block size or a smaller size",
                        (bits / 8) >> 20,
                        MAX_RANDOM_MAP_BYTES >> 20
                    ),
                ));
            }
        }
        if self.nrfiles == 0 || self.nrfiles > 1 << 20 {
            return Err(invalid("workload.nrfiles", "must be in 1..=1048576"));
        }
        if self
            .filesize
            .is_some_and(|f| f.0 == 0 || !f.0.is_multiple_of(SECTOR))
        {
            return Err(invalid(
                "workload.filesize",
                "must be a positive multiple of 512 bytes",
            ));
        }
        let min = self.block_sizes.as_ref().map_or(self.bs.0, |b| b.min());
        if self.file_span(logical_bytes) < min {
            return Err(invalid(
                "workload.nrfiles",
                format!(
                    "{} files of the span leave each less than a block of {min} bytes",
                    self.nrfiles
                ),
            ));
        }
        if !self.thinktime.is_zero() {
            if !self.direct || self.rate_iops.is_some() {
                return Err(invalid(
                    "workload.thinktime",
                    "pauses are modelled for direct closed-loop jobs (direct, no rate_iops)",
                ));
            }
            if self.thinktime_blocks == 0 {
                return Err(invalid("workload.thinktime_blocks", "must be at least 1"));
            }
        }
        if self.ddir_seq_nr == 0 {
            return Err(invalid("workload.ddir_seq_nr", "must be at least 1"));
        }
        if !self.ddir_seq_add.0.is_multiple_of(SECTOR) || self.ddir_seq_add.0 > i64::MAX as u64 {
            return Err(invalid(
                "workload.ddir_seq_add",
                "must be a multiple of 512 bytes",
            ));
        }
        Ok(())
    }
    /// Whether requests need fio's pattern beyond one size over one range
    /// ([`pattern`]): the random map, sizes by direction, holes or random
    /// offsets every N requests.
    pub fn extended(&self) -> bool {
        self.random_map()
            || self.block_sizes.is_some()
            || self.ddir_seq_add.0 > 0
            || self.ddir_seq_nr > 1
            || self.blockalign.0 > 0
            || self.verify
            || self.nrfiles > 1
            || matches!(self.rw, RwMode::TrimWrite | RwMode::RandTrimWrite)
            || (self.rwmix_cycle && matches!(self.rw, RwMode::Rw | RwMode::RandRw))
            || self.zonesize.0 > 0
    }
    /// Whether fio keeps its random map for this workload: uniform random
    /// addresses, `norandommap` unset and no alignment other than the
    /// smallest size.
    fn random_map(&self) -> bool {
        let min = self.block_sizes.as_ref().map_or(self.bs.0, |b| b.min());
        !self.norandommap
            && self.rw.is_random()
            && self.random_distribution == Distribution::Uniform
            && (self.blockalign.0 == 0 || self.blockalign.0 == min)
    }
    /// The bytes the job may issue from its start (fio's `io_size`, else
    /// `size` once when `number_ios` is unset, times `loops`), and whether
    /// it is bounded by passes (`loops` passes when `io_size` is unset) or
    /// by bytes alone; None: no byte bound.
    fn budget(&self, pass_bytes: u64) -> (u64, Option<u64>) {
        let loops = self.loops.max(1) as u64;
        match (self.io_size, self.number_ios) {
            (Some(s), _) => (s.0.saturating_mul(loops), None),
            (None, None) => (pass_bytes.saturating_mul(loops), Some(loops)),
            (None, Some(_)) => (u64::MAX, None),
        }
    }
    /// The extent of a strided zone (fio's `zonerange`, else `zonesize`:
    /// `fixup_options`); 0 without zones.
    pub fn zone_range(&self) -> u64 {
        if self.zonesize.0 == 0 {
            0
        } else if self.zonerange.0 > 0 {
            self.zonerange.0
        } else {
            self.zonesize.0
        }
    }
    /// Address span in bytes (a job of files: all of them).
    pub fn span(&self, logical_bytes: u64) -> u64 {
        if let Some(f) = self.filesize {
            return f.0.saturating_mul(self.nrfiles.max(1) as u64);
        }
        self.size
            .map(|s| s.0)
            .unwrap_or(logical_bytes.saturating_sub(self.offset.0))
    }
    /// Each file's span: `filesize`, or the span divided among the files
    /// in whole smallest blocks.
    pub fn file_span(&self, logical_bytes: u64) -> u64 {
        let min = self
            .block_sizes
            .as_ref()
            .map_or(self.bs.0, |b| b.min())
            .max(1);
        match self.filesize {
            Some(f) => f.0,
            None => {
                let each = self.span(logical_bytes) / self.nrfiles.max(1) as u64;
                each - each % min
            }
        }
    }
    /// Closed loop at `iodepth`, or open loop when `rate_iops` is set; a
    /// job that pauses (`thinktime`) reacts to its completions.
    pub fn timing(&self) -> Timing {
        if !self.thinktime.is_zero() {
            Timing::Reactive
        } else if self.rate_iops.is_some() {
            Timing::OpenLoop
        } else {
            Timing::ClosedLoop {
                depth: self.iodepth,
            }
        }
    }
}

/// The fio-style generator.
pub struct FioGen {
    rw: RwMode,
    bs_sectors: u32,
    mix: u32,
    base_sector: u64,
    blocks: u64,
    next_seq: u64,
    remaining: u64,
    /// The request count the workload ends at (`remaining` at the start).
    count: u64,
    rng: SimRng,
    dist: DistSampler,
    timing: Timing,
    interarrival_ns: f64,
    poisson: bool,
    t: f64,
    /// `percentage_random` (100: every random-mode request is random).
    perc_random: u32,
    /// The block after the last request of each direction (read, write,
    /// trim): where a sequential request of a partly random workload goes.
    next_by_dir: [u64; 3],
    /// The bytes the job may still issue (fio's `size`/`io_size` times
    /// `loops`): counted from the start, the ramp included, as fio counts
    /// them (`io_issue_bytes`).
    budget: u64,
    /// Passes left when the job is `loops` passes (None: bounded by bytes
    /// or requests alone).
    passes: Option<u64>,
    /// fio's pattern beyond one size over one range, when the workload asks
    /// for it ([`WorkloadConfig::extended`]).
    ext: Option<Box<Ext>>,
    /// fio's `thinktime`: the closed loop with pauses, run as a reactive
    /// source.
    think: Option<Think>,
}

/// The state of a job with pauses (see [`WorkloadConfig::thinktime`]).
struct Think {
    pause: Dur,
    blocks: u64,
    on_issue: bool,
    depth: u32,
    outstanding: u32,
    /// Requests completed (or issued, `on_issue`) so far, and at the last
    /// pause (fio's `last_thinktime_blocks`).
    counted: u64,
    last: u64,
    /// Waiting for the requests in flight before pausing (`io_u_quiesce`).
    draining: bool,
    /// Paused until then.
    until: Option<SimTime>,
    /// The generator has no more requests.
    done: bool,
    next_tag: u32,
}

impl Think {
    /// A pause is due: count reached (`handle_thinktime`).
    fn check(&mut self) {
        if !self.draining && self.counted >= self.last + self.blocks {
            self.draining = true;
            self.last = self.counted;
        }
    }
    /// Drained at `now`: the pause starts.
    fn drained(&mut self, now: SimTime) {
        if self.draining && self.outstanding == 0 {
            self.draining = false;
            self.until = Some(now + self.pause);
        }
    }
}

/// The state of [`pattern`]'s requests (see [`FioGen::next_ext`]).
struct Ext {
    sizes: [BsDraw; 3],
    /// Each direction's smallest size: the random map's unit.
    min_bs: [u64; 3],
    /// Each direction's alignment of random offsets (fio's `ba`).
    align: [u64; 3],
    /// The largest size of any direction.
    max_bs: u64,
    span: u64,
    map: Option<RandomMap>,
    seq_add: u64,
    seq_back: bool,
    seq_nr: u32,
    seq_left: u32,
    /// Where each direction's next sequential request starts (fio's
    /// `last_pos`), in bytes from the span's start.
    last_pos: [u64; 3],
    /// Requests issued in this pass.
    in_pass: u64,
    /// fio's verify log, when the job verifies.
    verify: Option<VerifyLog>,
    /// A job of several files: the others' state, the current one's start
    /// (its state is `last_pos` and `map` above) and the file service.
    files: Vec<FileSlot>,
    cur: usize,
    file_start: u64,
    service: FileService,
    service_left: u32,
    /// A trim+write job's write, due after its trim (`td_trimwrite`).
    pending_write: Option<(u64, u64)>,
    /// Where offsets end, from the span's start: the span, or with strided
    /// zones the device's end (fio's `real_file_size`).
    end: u64,
    /// fio's strided zones, when the job has them.
    zone: Option<Strided>,
    /// fio's read/write cycle of a mixed job (`workload.rwmix_cycle`).
    cycle: Option<RwCycle>,
    /// A time-based job of one file: each sequential direction wraps alone.
    wrap_alone: bool,
}

/// fio's strided zones (`setup_strided_zone_mode`): offsets from the
/// span's start.
struct Strided {
    /// Bytes per zone before the next (`zone_size`).
    size: u64,
    /// A zone's extent (`zone_range`) and the gap after it (`zone_skip`).
    range: u64,
    skip: u64,
    /// Bytes done in the current zone (`td->zone_bytes`).
    bytes: u64,
    /// The current zone's start (fio's `file_offset`).
    start: u64,
}

/// fio's direction cycle of a mixed job (`get_rw_ddir`, `set_rwmix_bytes`):
/// the direction holds until its requests reach `until`, then a new one is
/// drawn; a switch sets `until` to the requests of the direction left times
/// the new one's share.
struct RwCycle {
    /// Current direction (0 read, 1 write; fio starts at read).
    ddir: usize,
    /// `rwmix_issues`.
    until: u64,
    /// Requests issued in each direction since the ramp's end (`io_issues`).
    issues: [u64; 2],
    /// `rwmix[ddir]`: each direction's share.
    share: [u64; 2],
}

/// A file's own state while another is current (fio's `fio_file`).
#[derive(Default)]
struct FileSlot {
    last_pos: [u64; 3],
    map: Option<RandomMap>,
    /// Its offsets ran out in this pass (`fio_file_done`).
    done: bool,
}

/// The writes a verifying job reads back (fio's `io_hist_list` or its
/// rb-tree), then the read-back's place.
#[derive(Default)]
struct VerifyLog {
    /// Under the random map: every write, in order.
    list: Vec<(u64, u64)>,
    /// Otherwise: the last write of each range, by offset (a write that
    /// overlaps earlier ones replaces them, as `log_io_piece` does).
    tree: std::collections::BTreeMap<u64, u64>,
    in_order: bool,
    /// The read-back has begun: what is left of it.
    reading: Option<std::vec::IntoIter<(u64, u64)>>,
}

impl VerifyLog {
    fn log(&mut self, off: u64, len: u64) {
        if self.in_order {
            self.list.push((off, len));
            return;
        }
        // Remove every logged range that overlaps [off, off + len).
        let end = off + len;
        let first = self
            .tree
            .range(..off)
            .next_back()
            .filter(|(&o, &l)| o + l > off)
            .map(|(&o, _)| o);
        let over: Vec<u64> = first
            .into_iter()
            .chain(self.tree.range(off..end).map(|(&o, _)| o))
            .collect();
        for o in over {
            self.tree.remove(&o);
        }
        self.tree.insert(off, len);
    }
    /// The next range to read back, starting the read-back if need be.
    fn next(&mut self) -> Option<(u64, u64)> {
        if self.reading.is_none() {
            let all: Vec<(u64, u64)> = if self.in_order {
                std::mem::take(&mut self.list)
            } else {
                std::mem::take(&mut self.tree).into_iter().collect()
            };
            self.reading = Some(all.into_iter());
        }
        self.reading.as_mut().and_then(|r| r.next())
    }
}

enum DistSampler {
    Uniform,
    Zipf {
        zipf: rand_distr::Zipf<f64>,
        scatter: u64,
    },
    Pareto {
        pow: f64,
        scatter: u64,
    },
    /// fio's zoned distribution: for a draw in 1..=100, the zone's first
    /// block and its blocks.
    Zoned(Box<[(u64, u64)]>),
}

impl FioGen {
    /// Build from a validated workload config. `seed` is used unless `randseed` is set.
    pub fn new(cfg: &WorkloadConfig, logical_bytes: u64, seed: u64) -> FioGen {
        let span = cfg.span(logical_bytes);
        let blocks = (span / cfg.bs.0).max(1);
        let rng = SimRng::from_seed_label(cfg.randseed.unwrap_or(seed), "workload");
        let scatter = coprime_multiplier(blocks);
        let dist = match &cfg.random_distribution {
            Distribution::Uniform => DistSampler::Uniform,
            Distribution::Zipf(t) => DistSampler::Zipf {
                zipf: rand_distr::Zipf::new(blocks, *t).expect("validated zipf"),
                scatter,
            },
            Distribution::Pareto(h) => DistSampler::Pareto {
                pow: h.ln() / (1.0 - h).ln(),
                scatter,
            },
            Distribution::Zoned(z) => {
                // For each draw 1..=100, the zone's first block and its
                // blocks (fio's `zone_state_index`).
                let mut by_draw = Vec::with_capacity(100);
                let mut start = 0u64;
                for &(access, range) in z {
                    let first = blocks * start / 100;
                    let n = (blocks * range as u64 / 100).max(1);
                    for _ in 0..access {
                        by_draw
                            .push((first.min(blocks - 1), n.min(blocks - first.min(blocks - 1))));
                    }
                    start += range as u64;
                }
                DistSampler::Zoned(by_draw.into_boxed_slice())
            }
        };
        let loops = cfg.loops.max(1) as u64;
        let ext = cfg.extended().then(|| {
            let sizes = cfg
                .block_sizes
                .clone()
                .map_or_else(|| std::array::from_fn(|_| BsDraw::Fixed(cfg.bs.0)), |b| b.0);
            let min_bs: [u64; 3] = std::array::from_fn(|d| sizes[d].min());
            let unit = *min_bs.iter().min().expect("three");
            let file_span = cfg.file_span(logical_bytes);
            // With strided zones the map covers one zone (`init_random_map`).
            let zone_range = cfg.zone_range();
            let map_span = if zone_range > 0 {
                zone_range
            } else {
                file_span
            };
            let map = cfg
                .random_map()
                .then(|| RandomMap::new((map_span / unit).max(1)));
            let nrfiles = cfg.nrfiles.max(1) as usize;
            // The other files' state (the current one's is in `Ext`).
            let files = (0..nrfiles)
                .map(|i| FileSlot {
                    map: if i > 0 { map.clone() } else { None },
                    ..FileSlot::default()
                })
                .collect();
            Box::new(Ext {
                align: std::array::from_fn(|d| {
                    if cfg.blockalign.0 > 0 {
                        cfg.blockalign.0
                    } else {
                        min_bs[d]
                    }
                }),
                max_bs: sizes.iter().map(BsDraw::max).max().expect("three"),
                sizes,
                min_bs,
                span: file_span,
                map,
                seq_add: cfg.ddir_seq_add.0,
                seq_back: cfg.ddir_seq_back,
                seq_nr: cfg.ddir_seq_nr.max(1),
                seq_left: cfg.ddir_seq_nr.max(1),
                last_pos: [0; 3],
                in_pass: 0,
                verify: cfg.verify.then(|| VerifyLog {
                    in_order: cfg.random_map(),
                    ..Default::default()
                }),
                files,
                cur: 0,
                file_start: 0,
                pending_write: None,
                // fio's `real_file_size`: a file's size, or the device's
                // from `offset` (the zones of a block device job walk it
                // all; `size` is how much the job does).
                end: if zone_range > 0 && cfg.filesize.is_none() {
                    logical_bytes - cfg.offset.0
                } else {
                    file_span
                },
                zone: (zone_range > 0).then_some(Strided {
                    size: cfg.zonesize.0,
                    range: zone_range,
                    skip: cfg.zoneskip.0,
                    bytes: 0,
                    start: 0,
                }),
                wrap_alone: cfg.time_based && cfg.nrfiles <= 1,
                cycle: (cfg.rwmix_cycle && matches!(cfg.rw, RwMode::Rw | RwMode::RandRw)).then(
                    || RwCycle {
                        ddir: 0,
                        until: 0,
                        issues: [0; 2],
                        share: [cfg.rwmixread as u64, 100 - cfg.rwmixread as u64],
                    },
                ),
                service: cfg.file_service_type,
                service_left: match cfg.file_service_type {
                    FileService::RoundRobin(n) | FileService::Random(n) => n,
                    FileService::Sequential => u32::MAX,
                },
            })
        });
        // A pass's bytes are the span's (fio's `size`): a sequential pass
        // ends at its last whole block (`fill_io_u` refuses a request past
        // the end), a random one without the map when its bytes are done.
        let (budget, passes) = cfg.budget(span);
        let remaining = cfg.number_ios.map_or(u64::MAX, |n| n.saturating_mul(loops));
        let (interarrival_ns, poisson) = match cfg.rate_iops {
            Some(r) => (1e9 / r as f64, cfg.rate_process == RateProcess::Poisson),
            None => (0.0, false),
        };
        FioGen {
            rw: cfg.rw,
            bs_sectors: (cfg.bs.0 / SECTOR) as u32,
            mix: cfg.rwmixread,
            base_sector: cfg.offset.0 / SECTOR,
            blocks,
            next_seq: 0,
            remaining,
            count: remaining,
            rng,
            dist,
            timing: cfg.timing(),
            interarrival_ns,
            poisson,
            t: 0.0,
            perc_random: cfg.percentage_random,
            next_by_dir: [0; 3],
            budget,
            passes,
            ext,
            think: (!cfg.thinktime.is_zero()).then(|| Think {
                pause: cfg.thinktime,
                blocks: cfg.thinktime_blocks.max(1),
                on_issue: cfg.thinktime_on_issue,
                depth: cfg.iodepth.max(1),
                outstanding: 0,
                counted: 0,
                last: 0,
                draining: false,
                until: None,
                done: false,
                next_tag: 0,
            }),
        }
    }

    /// A pass over the span has ended (a sequential workload is back at its
    /// start, or fio's offset generation failed): fio's `keep_running` runs
    /// another while `loops` are left, or, for `io_size`, while at least the
    /// largest block size is left to do. Whether the job goes on.
    #[cold]
    fn pass_over(&mut self, max_bs: u64) -> bool {
        let more = match &mut self.passes {
            Some(n) => {
                *n = n.saturating_sub(1);
                *n > 0
            }
            None => self.budget >= max_bs,
        };
        if !more {
            self.budget = 0;
        }
        more
    }

    /// The direction of the next request (a mixed workload draws it with
    /// `rwmixread`).
    #[inline(always)]
    fn draw_op(&mut self) -> IoOp {
        match self.rw {
            RwMode::Read | RwMode::RandRead => IoOp::Read,
            RwMode::Write | RwMode::RandWrite => IoOp::Write,
            RwMode::Trim | RwMode::RandTrim => IoOp::Trim,
            // The write of a trim+write pair is made in `next_ext`.
            RwMode::TrimWrite | RwMode::RandTrimWrite => IoOp::Trim,
            RwMode::Rw | RwMode::RandRw => {
                if self.rng.gen_range(0..100) < self.mix {
                    IoOp::Read
                } else {
                    IoOp::Write
                }
            }
        }
    }

    /// The direction of the next request of fio's pattern: a mixed job
    /// with fio's cycle (`get_rw_ddir`) draws a new direction only once the
    /// current one's requests reach `until`; a switch sets `until` to the
    /// requests of the direction left times the new one's share
    /// (`set_rwmix_bytes`).
    fn ext_draw_op(&mut self) -> IoOp {
        let Some(c) = self.ext.as_mut().and_then(|e| e.cycle.as_mut()) else {
            return self.draw_op();
        };
        if c.issues[c.ddir] >= c.until {
            let d = if self.rng.gen_range(0..100) < c.share[0] {
                0
            } else {
                1
            };
            if d != c.ddir {
                c.until = c.issues[c.ddir] * c.share[d] / 100;
            }
            c.ddir = d;
        }
        if c.ddir == 0 {
            IoOp::Read
        } else {
            IoOp::Write
        }
    }

    /// The arrival time of the next request of an open loop (zero in a
    /// closed loop).
    #[inline(always)]
    fn next_arrival(&mut self) -> SimTime {
        if self.interarrival_ns > 0.0 {
            let now = self.t;
            let gap = if self.poisson {
                let u: f64 = self.rng.gen::<f64>();
                -(1.0 - u).ln() * self.interarrival_ns
            } else {
                self.interarrival_ns
            };
            self.t += gap;
            SimTime(now.round() as u64)
        } else {
            SimTime::ZERO
        }
    }

    /// The next request of fio's pattern beyond one size over one range
    /// (`fill_io_u` in fio's `io_u.c`): the direction, then the offset
    /// (`get_next_offset`), the size (`get_next_buflen`) and the random
    /// map's mark (`mark_random_map`, which cuts a request at the first
    /// block taken already). When no offset can be made the pass is over
    /// and the next one starts afresh, if the job goes on.
    #[inline(never)]
    fn next_ext(&mut self) -> Option<Result<HostRequest, SourceError>> {
        loop {
            if self.remaining == 0 || self.budget == 0 {
                // The job's I/O is done: a verifying job reads it back.
                let (off, len) = self.ext.as_mut()?.verify.as_mut()?.next()?;
                return Some(Ok(self.ext_request(IoOp::Read, off, len)));
            }
            // A trim+write job writes the blocks it just trimmed (fio's
            // `get_next_block` for randtrimwrite: the trim's offset and
            // length); its bytes are the writes' (`__io_bytes_exceeded`
            // counts a writing job's writes).
            if let Some((off, len)) = self.ext.as_mut().and_then(|e| e.pending_write.take()) {
                self.remaining -= 1;
                self.budget = self.budget.saturating_sub(len);
                let e = self.ext.as_mut().expect("extended");
                if let Some(v) = e.verify.as_mut() {
                    v.log(off, len);
                }
                return Some(Ok(self.ext_request(IoOp::Write, off, len)));
            }
            let op = self.ext_draw_op();
            let pair = matches!(self.rw, RwMode::TrimWrite | RwMode::RandTrimWrite);
            if let Some((off, len)) = self.ext_offset_len(op) {
                self.remaining -= 1;
                if let Some(c) = self.ext.as_mut().and_then(|e| e.cycle.as_mut()) {
                    c.issues[(op == IoOp::Write) as usize] += 1;
                }
                if !pair {
                    self.budget = self.budget.saturating_sub(len);
                }
                let e = self.ext.as_mut().expect("extended");
                e.in_pass += 1;
                let off = off + e.file_start;
                if pair {
                    e.pending_write = Some((off, len));
                }
                if e.files.len() > 1 {
                    e.service_left = e.service_left.saturating_sub(1);
                    if e.service_left == 0 {
                        self.next_file(false);
                    }
                }
                let e = self.ext.as_mut().expect("extended");
                if op == IoOp::Write {
                    if let Some(v) = e.verify.as_mut() {
                        v.log(off, len);
                    }
                }
                return Some(Ok(self.ext_request(op, off, len)));
            }
            // This file's offsets ran out: the next one not done, if any.
            if self.ext.as_ref().is_some_and(|e| e.files.len() > 1) && self.next_file(true) {
                continue;
            }
            let e = self.ext.as_mut().expect("extended");
            let (max_bs, empty) = (e.max_bs, e.in_pass == 0);
            // A pass that could not make one request would fail again.
            if empty || !self.pass_over(max_bs) {
                self.budget = 0;
                continue;
            }
            let e = self.ext.as_mut().expect("extended");
            e.in_pass = 0;
            e.last_pos = [0; 3];
            e.seq_left = e.seq_nr;
            // fio's `clear_io_state` before each pass: the zones from the
            // start, and the cycle's `rwmix_issues` zeroed.
            if let Some(z) = e.zone.as_mut() {
                z.bytes = 0;
                z.start = 0;
            }
            if let Some(c) = e.cycle.as_mut() {
                c.until = 0;
            }
            if let Some(m) = e.map.as_mut() {
                m.reset();
            }
            // A new pass: every file afresh, from the first.
            for f in &mut e.files {
                f.last_pos = [0; 3];
                f.done = false;
                if let Some(m) = f.map.as_mut() {
                    m.reset();
                }
            }
            if e.files.len() > 1 {
                Self::switch_file(e, 0);
            }
        }
    }

    /// Make file `i` the current one: its state in, the current one's out.
    fn switch_file(e: &mut Ext, i: usize) {
        if i == e.cur {
            return;
        }
        let cur = e.cur;
        std::mem::swap(&mut e.files[cur].last_pos, &mut e.last_pos);
        std::mem::swap(&mut e.files[cur].map, &mut e.map);
        std::mem::swap(&mut e.files[i].last_pos, &mut e.last_pos);
        std::mem::swap(&mut e.files[i].map, &mut e.map);
        e.cur = i;
        e.file_start = i as u64 * e.span;
    }

    /// fio's `get_next_file`: the file the next request goes to, by the
    /// file service (`done`: the current file's offsets ran out). False
    /// when every file is done.
    fn next_file(&mut self, done: bool) -> bool {
        let n = self.ext.as_ref().expect("extended").files.len();
        let pick = {
            let e = self.ext.as_mut().expect("extended");
            if done {
                let cur = e.cur;
                e.files[cur].done = true;
            }
            e.service_left = match e.service {
                FileService::RoundRobin(k) | FileService::Random(k) => k,
                FileService::Sequential => u32::MAX,
            };
            if e.files.iter().all(|f| f.done) {
                return false;
            }
            e.service
        };
        let e = self.ext.as_ref().expect("extended");
        let next = match pick {
            FileService::Random(_) => {
                let open: Vec<usize> = (0..n).filter(|&i| !e.files[i].done).collect();
                open[self.rng.gen_range(0..open.len())]
            }
            _ => (1..=n)
                .map(|k| (e.cur + k) % n)
                .find(|&i| !e.files[i].done)
                .expect("one is not done"),
        };
        Self::switch_file(self.ext.as_mut().expect("extended"), next);
        true
    }

    /// A request of fio's pattern: `len` bytes at `off` from the span's
    /// start (a write `REQ_SYNC`, as the common path's).
    fn ext_request(&mut self, op: IoOp, off: u64, len: u64) -> HostRequest {
        HostRequest {
            arrival: self.next_arrival(),
            op,
            lba: self.base_sector + off / SECTOR,
            sectors: (len / SECTOR) as u32,
            stream: 0,
            tag: 0,
            sync: op == IoOp::Write,
        }
    }

    /// fio's `get_next_seq_offset`: where direction `d`'s next sequential
    /// request goes, after a hole of `seq_add` bytes (wrapping to the start
    /// past the end); None at the end of the span.
    /// With strided zones the position is taken from the zone's start.
    fn seq_offset(e: &Ext, d: usize) -> Option<u64> {
        if e.last_pos[d] >= e.end {
            return None;
        }
        let mut pos = e.last_pos[d] - e.zone.as_ref().map_or(0, |z| z.start.min(e.last_pos[d]));
        if pos != 0 && e.seq_add != 0 {
            if e.seq_back {
                // Before the start: from the end, as fio's wrap of a
                // negative skip (`io_size + ddir_seq_add`).
                pos = pos
                    .checked_sub(e.seq_add)
                    .unwrap_or_else(|| e.span.saturating_sub(e.seq_add));
            } else {
                pos += e.seq_add;
                if pos >= e.end {
                    pos = 0;
                }
            }
        }
        Some(pos)
    }

    /// fio's `setup_strided_zone_mode`, before direction `d`'s offset: the
    /// next zone once `size` bytes are done in this one (wrapping to the
    /// start past the device's end), a sequential position kept inside the
    /// zone, and the positions and map afresh each `range` bytes
    /// (`fio_file_reset`).
    fn next_zone(e: &mut Ext, d: usize) {
        let Some(z) = e.zone.as_mut() else { return };
        if z.bytes >= z.size {
            z.bytes = 0;
            z.start += z.range + z.skip;
            if z.start >= e.end {
                z.start = 0;
            }
            e.last_pos[d] = z.start;
        }
        if e.last_pos[d] >= z.start + z.range {
            e.last_pos[d] = z.start;
        }
        if z.bytes % z.range == 0 {
            e.last_pos = [z.start; 3];
            if let Some(m) = e.map.as_mut() {
                m.reset();
            }
        }
    }

    /// The offset and length of the next request of direction `op`, or
    /// None when the pass is over.
    fn ext_offset_len(&mut self, op: IoOp) -> Option<(u64, u64)> {
        let d = match op {
            IoOp::Read => 0,
            IoOp::Write => 1,
            _ => 2,
        };
        let random = self.rw.is_random();
        Self::next_zone(self.ext.as_mut().expect("extended"), d);
        // fio's `ddir_seq_nr`: a new offset every N requests.
        let hit = {
            let e = self.ext.as_mut().expect("extended");
            if e.seq_nr > 1 {
                e.seq_left -= 1;
                if e.seq_left == 0 {
                    e.seq_left = e.seq_nr;
                    true
                } else {
                    false
                }
            } else {
                true
            }
        };
        let do_random = random
            && hit
            && (self.perc_random >= 100 || self.rng.gen_range(1..=100u32) <= self.perc_random);
        let mut mark = false;
        let off = if do_random {
            mark = true;
            self.ext_random_offset(d)?
        } else {
            let e = self.ext.as_mut().expect("extended");
            // fio's `get_next_seq_offset` for a time-based job of one file:
            // a direction past `size` starts again at the start alone.
            if e.wrap_alone && e.last_pos[d] >= e.span {
                e.last_pos[d] = e.zone.as_ref().map_or(0, |z| z.start);
            }
            match Self::seq_offset(e, d) {
                Some(o) => o,
                // A random workload's sequential stretch at the end of the
                // span takes a random block instead (fio's `get_next_block`).
                None if random => self.ext_random_offset(d)?,
                None => return None,
            }
        };
        // `off` is from the zone's start (fio's offset before
        // `get_next_offset` adds `file_offset`); past the job's size or the
        // device's end the pass is over.
        let e = self.ext.as_ref().expect("extended");
        let start = e.zone.as_ref().map_or(0, |z| z.start);
        if off >= e.span {
            return None;
        }
        let (rel, off) = (off, off + start);
        let (end, min) = (e.end, e.min_bs[d]);
        if off + min > end {
            return None;
        }
        let mut len = match &e.sizes[d] {
            BsDraw::Fixed(b) => *b,
            sizes => {
                let sizes = sizes.clone();
                self.draw_len(&sizes, off, end)
            }
        };
        if off + len > end {
            return None;
        }
        let e = self.ext.as_mut().expect("extended");
        if mark {
            if let Some(m) = e.map.as_mut() {
                let set = m.set_nr(rel / min, len.div_ceil(min));
                if set > 0 && set * min < len {
                    len = set * min;
                }
            }
        }
        e.last_pos[d] = off + len;
        if let Some(z) = e.zone.as_mut() {
            z.bytes += len;
        }
        Some((off, len))
    }

    /// fio's random offset (`get_next_rand_offset`): a block of the
    /// direction's smallest size, drawn from the distribution; with the
    /// random map, the next free block when it is taken. None when the map
    /// is full or the block lies past the span (the pass is over).
    fn ext_random_offset(&mut self, d: usize) -> Option<u64> {
        // With strided zones, a block of the zone (`last_block`).
        let (min, ba, span) = {
            let e = self.ext.as_ref().expect("extended");
            (
                e.min_bs[d],
                e.align[d],
                e.zone.as_ref().map_or(e.span, |z| z.range),
            )
        };
        // fio's `last_block`: the last start at which the smallest size
        // still fits, in units of the alignment.
        let last = (span.saturating_sub(min.saturating_sub(ba)) / ba).max(1);
        let mut b = if matches!(self.dist, DistSampler::Uniform) {
            self.rng.gen_range(0..last)
        } else {
            self.random_block().min(last - 1)
        };
        let e = self.ext.as_ref().expect("extended");
        if let Some(m) = &e.map {
            if m.is_set(b) {
                b = m.next_free(b)?;
            }
        }
        let off = b * ba;
        (off < span).then_some(off)
    }

    /// fio's `get_next_buflen` for a range or a split: drawn until it fits
    /// before the span's end, a multiple of the smallest size, at most the
    /// largest.
    fn draw_len(&mut self, sizes: &BsDraw, off: u64, span: u64) -> u64 {
        let (min, max) = (sizes.min(), sizes.max());
        let fits = |b: u64| off + b <= span;
        for _ in 0..64 {
            let u: f64 = self.rng.gen();
            let mut len = match sizes {
                BsDraw::Range { min, max } => min + (*max as f64 * u) as u64,
                BsDraw::Split(v) => {
                    let mut perc = 0;
                    let mut len = min;
                    for &(b, p) in v {
                        if p == 0 {
                            continue;
                        }
                        len = b;
                        perc += p;
                        if u * 100.0 < perc as f64 && fits(b) {
                            break;
                        }
                    }
                    len
                }
                BsDraw::Fixed(b) => *b,
            };
            len -= len % min;
            len = len.min(max);
            if fits(len) {
                return len;
            }
        }
        min
    }

    /// A block of a partly random workload (`percentage_random` < 100),
    /// kept out of line so the common fully random path stays small: fio's
    /// should_do_random, a draw in 1..=100 against the percentage, else the
    /// block after the direction's last one.
    #[inline(never)]
    fn partly_random_block(&mut self, op: IoOp) -> u64 {
        let dir = match op {
            IoOp::Read => 0,
            IoOp::Write => 1,
            _ => 2,
        };
        let b = if self.rng.gen_range(1..=100u32) <= self.perc_random {
            self.random_block()
        } else {
            self.next_by_dir[dir]
        };
        self.next_by_dir[dir] = (b + 1) % self.blocks;
        b
    }

    // Always inlined: with two callers the compiler would otherwise keep it
    // out of line, which costs the fully random path a call per request.
    #[inline(always)]
    fn random_block(&mut self) -> u64 {
        match &self.dist {
            DistSampler::Uniform => self.rng.gen_range(0..self.blocks),
            DistSampler::Zipf { zipf, scatter } => {
                let rank =
                    rand::distributions::Distribution::sample(zipf, &mut self.rng) as u64 - 1;
                scatter_rank(rank.min(self.blocks - 1), *scatter, self.blocks)
            }
            DistSampler::Pareto { pow, scatter } => {
                // fio lib/zipf.c pareto_next: n = (nranges - 1) * rand^pow.
                let u: f64 = self.rng.gen();
                let rank = ((self.blocks - 1) as f64 * u.powf(*pow)) as u64;
                scatter_rank(rank.min(self.blocks - 1), *scatter, self.blocks)
            }
            DistSampler::Zoned(z) => {
                let (first, n) = z[self.rng.gen_range(0..100usize)];
                first + self.rng.gen_range(0..n)
            }
        }
    }
}

/// Spread hot ranks over the span (fio hashes ranks for the same reason) with a
/// bijection: rank * m mod n where gcd(m, n) = 1.
fn scatter_rank(rank: u64, m: u64, n: u64) -> u64 {
    ((rank as u128 * m as u128) % n as u128) as u64
}

fn coprime_multiplier(n: u64) -> u64 {
    fn gcd(a: u64, b: u64) -> u64 {
        if b == 0 {
            a
        } else {
            gcd(b, a % b)
        }
    }
    let mut m = (0x9E37_79B9_7F4A_7C15u64 % n.max(2)) | 1;
    while gcd(m, n) != 1 {
        m += 2;
    }
    m
}

/// A buffered fio job's calls: one piece each, nothing beyond their bytes.
/// A buffered job's buffers: fio allocates `iodepth` I/O units of the
/// largest block size per job (`init_io_u`: `max_bs * iodepth`) and
/// touches them.
impl AppSource for FioGen {
    fn memory(&self) -> u64 {
        let depth = match self.timing {
            Timing::ClosedLoop { depth } => depth.max(1) as u64,
            _ => 1,
        };
        depth.saturating_mul(self.bs_sectors as u64 * SECTOR)
    }
}

impl RequestSource for FioGen {
    fn timing(&self) -> Timing {
        self.timing
    }
    fn poll(&mut self, now: SimTime) -> Option<Result<HostRequest, SourceError>> {
        let t = self.think.as_mut()?;
        if t.done || t.draining || t.outstanding >= t.depth || t.until.is_some_and(|u| now < u) {
            return None;
        }
        t.until = None;
        let r = self.next_request();
        let t = self.think.as_mut().expect("think");
        match r {
            None => {
                t.done = true;
                None
            }
            Some(Ok(mut r)) => {
                r.tag = t.next_tag;
                t.next_tag = t.next_tag.wrapping_add(1);
                t.outstanding += 1;
                if t.on_issue {
                    t.counted += 1;
                    t.check();
                }
                Some(Ok(r))
            }
            Some(Err(e)) => Some(Err(e)),
        }
    }
    fn event(&mut self, ev: HostEvent, now: SimTime) {
        let Some(t) = self.think.as_mut() else {
            return;
        };
        if let HostEvent::Completed(_) = ev {
            t.outstanding = t.outstanding.saturating_sub(1);
            if !t.on_issue {
                t.counted += 1;
                t.check();
            }
            t.drained(now);
        }
    }
    fn wake_at(&self) -> Option<SimTime> {
        self.think.as_ref().and_then(|t| t.until)
    }
    fn finished(&self) -> bool {
        self.think.as_ref().is_none_or(|t| t.done)
    }
    fn ramp_over(&mut self, _now: SimTime, in_flight: u64) {
        // fio resets its request count when the ramp ends (`reset_all_stats`
        // zeroes `io_blocks`, which `exceeds_number_ios` counts with the
        // requests in flight), not the bytes it issued (`io_issue_bytes`):
        // `number_ios` counts from the ramp's end, `size` from the start.
        self.remaining = self.count.saturating_sub(in_flight);
        // `reset_all_stats` also zeroes `io_issues` and `rwmix_issues`.
        if let Some(c) = self.ext.as_mut().and_then(|e| e.cycle.as_mut()) {
            c.issues = [0; 2];
            c.until = 0;
        }
    }
    #[inline]
    fn next_request(&mut self) -> Option<Result<HostRequest, SourceError>> {
        if self.ext.is_some() {
            return self.next_ext();
        }
        if self.remaining == 0 || self.budget == 0 {
            return None;
        }
        self.remaining -= 1;
        let bytes = self.bs_sectors as u64 * SECTOR;
        self.budget = self.budget.saturating_sub(bytes);
        let op = self.draw_op();
        let block = if self.rw.is_random() {
            if self.perc_random >= 100 {
                self.random_block()
            } else {
                self.partly_random_block(op)
            }
        } else {
            let b = self.next_seq;
            self.next_seq += 1;
            if self.next_seq == self.blocks {
                self.next_seq = 0;
                self.pass_over(bytes);
            }
            b
        };
        let arrival = self.next_arrival();
        Some(Ok(HostRequest {
            arrival,
            op,
            lba: self.base_sector + block * self.bs_sectors as u64,
            sectors: self.bs_sectors,
            stream: 0,
            tag: 0,
            // fio's direct=1: an O_DIRECT write is REQ_SYNC (2.6.35
            // `__blockdev_direct_IO_newtrunc`: WRITE_ODIRECT_PLUG; current
            // `dio_bio_write_op` in block/fops.c: REQ_SYNC | REQ_IDLE).
            sync: op == IoOp::Write,
        }))
    }
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
