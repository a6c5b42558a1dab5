//! The host's CPU (`[cpu]`): its cores at a clock, and the CPU time each
//! piece of host work costs, so that a buffered workload's threads queue
//! for cores as a real host's do.
//!
//! **What costs time** (every figure a setting; the defaults are for the
//! host of Sun et al., an Intel dual-core at 2.50 GHz under Linux 2.6.35,
//! each from a published measurement cited on its field):
//! * an application's system call: entry and exit ([`CpuConfig::syscall`]),
//!   then the kernel's work for it: the VFS and file system's path of a
//!   `read` or `write` ([`CpuConfig::read`], [`CpuConfig::write`]), per
//!   page looked up in or added to the page cache ([`CpuConfig::page`]),
//!   the copy to or from the application ([`CpuConfig::copy_mbps`]);
//!   `fsync`'s own code ([`CpuConfig::fsync`]); `open`, `close`, `stat`,
//!   `creat` and `unlink`, path walk and the file system's allocation and
//!   journalling in memory included ([`CpuConfig::open`] and on);
//! * each block request the host submits (`submit_bio` through the
//!   elevator to the driver, [`CpuConfig::submit`]) and completes (the
//!   interrupt, the softirq's `blk_complete_request` and `end_bio`,
//!   [`CpuConfig::complete`], and the switch to each thread it wakes,
//!   [`CpuConfig::wakeup`]);
//! * the benchmark's own work per operation: Filebench's per-flowop
//!   overhead ([`CpuConfig::flowop`]) and its `hog` flowops (cycles at
//!   [`CpuConfig::ghz`]).
//!
//! **How it is spent** ([`Cores`]): a piece of work runs on the first core
//! free (the lowest numbered on a tie) from the instant it is asked for, to
//! its end; a thread that asked for it moves on at that end. So threads
//! that together ask for more than the cores give queue for them, in the
//! order they asked. A completion's interrupt and the switch to the thread
//! it wakes do not queue: they preempt what runs (the preempted work is
//! not delayed by them, so the report counts them apart, as
//! `preempting_s`; a few microseconds each).
//!
//! **Not modelled yet: CFS's order.** The cores serve work in the order
//! it was asked for, booked ahead, not by virtual runtime: CFS would run a
//! thread that mostly sleeps on I/O at once among threads that compute
//! (`place_entity`, `check_preempt_wakeup`), where here it waits behind
//! the work they booked before it. Workloads whose threads all do alike
//! (Filebench's varmail, fileserver, webserver; fio) are not affected;
//! oltp's I/O threads among its computing shadows are, on a host whose
//! cores are saturated. A completion's
//! interrupt runs on a core, then the switch to each thread it wakes; a
//! woken thread moves on when its switch ends. A submission's cost
//! is the submitting thread's: it moves on once it has paid it, though its
//! request reaches the block layer at the instant it was made.
//!
//! Only buffered workloads run on the host's cores: a direct (block-level)
//! workload is the device's, timed from the block layer down, as before.

use serde::{Deserialize, Serialize};
use ssd_core::error::{invalid, ConfigError};
use ssd_core::units::{Dur, SimTime};

/// The host's cores and what host work costs on them (`[cpu]`).
///
/// The defaults of the kernel's costs are one machine's lmbench figures,
/// the published table nearest Sun et al.'s host (a 2.50 GHz dual-core
/// under 2.6.35) that could be found: an i686 at 2,400 MHz under Linux
/// 2.6.10 (I. Pratt, LKML, 17 March 2005, "Re: 2.6.11 vs 2.6.10 slowdown
/// on i686": null call 0.49 us, null I/O 0.57, stat 2.06, open+close 3.06,
/// 2p/0K context switch 7.58, 0K file create 39.3 and delete 16.2, file
/// reread 1,552 MB/s). Costs without a published figure are 0 (not
/// modelled unless set): `page` (in the file reread rate), `fsync`,
/// `close` (lmbench times it with `open`, which pays the pair) and
/// `complete`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct CpuConfig {
    /// Cores. Default 2, Sun et al.'s dual-core host.
    pub cores: u32,
    /// The cores' clock, GHz: times CPU work given in cycles (Filebench's
    /// `hog`). Default 2.5 (Sun et al.'s host).
    pub ghz: f64,
    /// Copy bandwidth between the application and the page cache on one
    /// core, MB/s (`copy_to_user` / `copy_from_user` and the pages'
    /// lookup). Default 1,552: lmbench's file reread rate (`bw_file_rd`,
    /// a cached file read in 64 KiB calls).
    pub copy_mbps: f64,
    /// A system call's entry and exit, ns (lmbench `lat_syscall null`,
    /// `getppid`: 490). Also what each system call without work of its
    /// own costs (`lseek`, a `read` at end of file).
    pub syscall: u64,
    /// A `read`'s VFS path beyond its entry, its pages and its copy
    /// (`vfs_read`), ns: lmbench's null I/O (a one-byte read and write)
    /// less its null call, 80.
    pub read: u64,
    /// A `write`'s VFS path beyond its entry, its pages and its copy
    /// (`vfs_write`), ns: as `read`, 80.
    pub write: u64,
    /// Per page a `read` or `write` looks up in or adds to the page cache
    /// (`find_get_page`, `write_begin` / `write_end`), ns. Default 0: in
    /// `copy_mbps`.
    pub page: u64,
    /// `fsync`'s own code, its writeback and journal waits aside, ns.
    /// Default 0 (no published figure).
    pub fsync: u64,
    /// `open` of an existing file (path walk, `struct file`) beyond the
    /// system call's entry, ns: lmbench's open+close less two entries,
    /// 2,080 (the pair's cost).
    pub open: u64,
    /// `close` beyond the system call's entry, ns. Default 0: lmbench
    /// times it with `open`, which pays the pair.
    pub close: u64,
    /// `stat` of a cached inode beyond the system call's entry, ns:
    /// lmbench's 2,060 less the entry, 1,570.
    pub stat: u64,
    /// `creat` of a new file (path walk, inode and directory entry
    /// allocation, journal handle) beyond the system call's entry, ns:
    /// lmbench `lat_fs`'s 0 KB file create less the entry, 38,810.
    pub create: u64,
    /// `unlink` (directory entry removal, inode and blocks freed) beyond
    /// the system call's entry, ns: `lat_fs`'s 0 KB delete less the entry,
    /// 15,710.
    pub unlink: u64,
    /// Per block request submitted, ns: the I/O scheduler's hooks (insert,
    /// dispatch, completion), 1,900, as the kernel's BFQ documentation
    /// measures them (Documentation/block/bfq-iosched.rst: 1.9 us on an
    /// Intel Core i7-2760QM at 2.40 GHz; 0.7 us for mq-deadline).
    pub submit: u64,
    /// Per block request completed: the interrupt and softirq
    /// (`blk_done_softirq`, `end_bio`), ns. Default 0 (no published
    /// per-request figure).
    pub complete: u64,
    /// Per thread a completion wakes: the switch to it, ns (lmbench
    /// `lat_ctx` 2p/0K, 7,580).
    pub wakeup: u64,
    /// The benchmark's own CPU per Filebench flowop, ns: the system calls
    /// Filebench 1.4.9 makes around every flowop on Linux (`flowop_beginop`
    /// and `flowop_endop`: each a `gettid`, a clock read and an open, read
    /// and close of `/proc/<tid>/stat`), priced as above: twice 3,060 and
    /// 570 and two entries of 490, 9,220. Its parsing and the kernel's
    /// walk of the process's threads for that file are not counted (no
    /// figure).
    pub flowop: u64,
}

impl Default for CpuConfig {
    fn default() -> Self {
        CpuConfig {
            cores: 2,
            ghz: 2.5,
            copy_mbps: 1552.0,
            syscall: 490,
            read: 80,
            write: 80,
            page: 0,
            fsync: 0,
            open: 2_080,
            close: 0,
            stat: 1_570,
            create: 38_810,
            unlink: 15_710,
            submit: 1_900,
            complete: 0,
            wakeup: 7_580,
            flowop: 9_220,
        }
    }
}

impl CpuConfig {
    /// Refuse what cannot run.
    pub fn validate(&self) -> Result<(), ConfigError> {
        if self.cores == 0 || self.cores > 4096 {
            return Err(invalid(
                "cpu.cores",
                format!("{} is not a core count (1..=4096)", self.cores),
            ));
        }
        if !(self.ghz.is_finite() && self.ghz > 0.0 && self.ghz <= 1000.0) {
            return Err(invalid(
                "cpu.ghz",
                format!("{} is not a clock in GHz (0 < ghz <= 1000)", self.ghz),
            ));
        }
        if !(self.copy_mbps.is_finite() && self.copy_mbps > 0.0) {
            return Err(invalid(
                "cpu.copy_mbps",
                format!("{} is not a positive bandwidth", self.copy_mbps),
            ));
        }
        // A second per piece of work is no host.
        for (f, v) in self.costs() {
            if v > 1_000_000_000 {
                return Err(invalid(
                    &format!("cpu.{f}"),
                    format!("{v} ns is more than a second of CPU for one piece of work"),
                ));
            }
        }
        Ok(())
    }

    fn costs(&self) -> [(&'static str, u64); 14] {
        [
            ("syscall", self.syscall),
            ("read", self.read),
            ("write", self.write),
            ("page", self.page),
            ("fsync", self.fsync),
            ("open", self.open),
            ("close", self.close),
            ("stat", self.stat),
            ("create", self.create),
            ("unlink", self.unlink),
            ("submit", self.submit),
            ("complete", self.complete),
            ("wakeup", self.wakeup),
            ("flowop", self.flowop),
        ]
    }

    /// The CPU time of `cycles` at the cores' clock.
    pub fn cycles(&self, cycles: u64) -> Dur {
        Dur((cycles as f64 / self.ghz).round() as u64)
    }

    /// The copy of `bytes` between the application and `pages` pages of
    /// the cache, each looked up or added.
    pub fn copy(&self, bytes: u64, pages: u64) -> Dur {
        let copy = (bytes as f64 * 1000.0 / self.copy_mbps).round() as u64;
        Dur(copy + pages * self.page)
    }

    /// The kernel's CPU for system calls other than a call's own read,
    /// write or fsync: each pays its entry and its own work.
    pub fn calls(&self, c: &Syscalls) -> Dur {
        let n = c.open + c.close + c.stat + c.create + c.unlink + c.other;
        Dur(n as u64 * self.syscall
            + c.open as u64 * self.open
            + c.close as u64 * self.close
            + c.stat as u64 * self.stat
            + c.create as u64 * self.create
            + c.unlink as u64 * self.unlink)
    }
}

/// System calls and benchmark operations a thread made before a call,
/// which cost no I/O of their own (or whose I/O is the file system's
/// metadata, dirtied in memory): their CPU is paid before the call.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Syscalls {
    /// `open` of an existing file.
    pub open: u32,
    /// `close`.
    pub close: u32,
    /// `stat`.
    pub stat: u32,
    /// `creat` (`open` with `O_CREAT` of a new file).
    pub create: u32,
    /// `unlink`.
    pub unlink: u32,
    /// System calls with no work of their own but their entry (`lseek`,
    /// a `read` at end of file, Filebench's `/dev/urandom` reads).
    pub other: u32,
    /// The benchmark's own operations (Filebench flowops, this call's
    /// included), each paying [`CpuConfig::flowop`].
    pub flowops: u32,
}

impl Syscalls {
    /// Both lots.
    pub fn add(&mut self, o: &Syscalls) {
        self.open += o.open;
        self.close += o.close;
        self.stat += o.stat;
        self.create += o.create;
        self.unlink += o.unlink;
        self.other += o.other;
        self.flowops += o.flowops;
    }
}

/// What host CPU time went to: the report's `host_cpu.busy_s` parts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Work {
    /// System calls' entry, exit and kernel work (VFS, file system).
    Kernel,
    /// Copies between the application and the cache (pages included).
    Copy,
    /// Block requests' submission.
    Submit,
    /// Block requests' completion (interrupts).
    Complete,
    /// The switches to the threads completions wake.
    Wakeup,
    /// The benchmark's own per-operation work.
    Benchmark,
    /// The application's computing (Filebench's `hog`).
    App,
}

const WORKS: usize = 7;

/// The host's cores: when each is free of the work booked on it, and the
/// work booked.
#[derive(Clone, Debug)]
pub struct Cores {
    free: Vec<SimTime>,
    busy: [u128; WORKS],
    /// Work that preempted booked work (see [`Cores::preempt`]), ns.
    preempted: u128,
}

impl Cores {
    /// `n` idle cores.
    pub fn new(n: u32) -> Cores {
        Cores {
            free: vec![SimTime::ZERO; n.max(1) as usize],
            busy: [0; WORKS],
            preempted: 0,
        }
    }

    /// The core free first from `now` (the lowest numbered on a tie), and
    /// when it is free of what is booked on it.
    fn first_free(&self, now: SimTime) -> (usize, SimTime) {
        let (k, &free) = self
            .free
            .iter()
            .enumerate()
            .min_by_key(|&(k, &f)| (f.max(now), k))
            .expect("at least one core");
        (k, free)
    }

    /// `d` of `work` asked for at `now`, on the first core free (lowest
    /// number on a tie): when it ends. Nothing is booked for no time.
    pub fn run(&mut self, now: SimTime, d: Dur, work: Work) -> SimTime {
        self.run_all(now, [(d, work)])[0]
    }

    /// Pieces of work one thread asks for at `now`, one after the other on
    /// the first core free (so no other work runs between them): when
    /// each ends.
    pub fn run_all<const N: usize>(
        &mut self,
        now: SimTime,
        parts: [(Dur, Work); N],
    ) -> [SimTime; N] {
        let (k, free) = self.first_free(now);
        let mut at = free.max(now);
        let mut ends = [now; N];
        let mut busy = false;
        for (i, (d, work)) in parts.into_iter().enumerate() {
            at += d;
            ends[i] = at;
            self.busy[work as usize] += d.0 as u128;
            busy |= d.0 > 0;
        }
        if busy {
            self.free[k] = at;
        } else {
            ends = [now; N];
        }
        ends
    }

    /// `d` of `work` asked for at `now` that preempts what runs (an
    /// interrupt; a thread woken with CFS's sleeper credit): it runs at
    /// once on the core free first, whose booked work ends `d` later
    /// (the threads that booked it are not told: they move on at the ends
    /// they were given, so a preempting piece's own time is all the
    /// error). When it ends.
    pub fn preempt(&mut self, now: SimTime, d: Dur, work: Work) -> SimTime {
        if d.0 == 0 {
            return now;
        }
        let (k, free) = self.first_free(now);
        self.free[k] = free.max(now) + d;
        self.busy[work as usize] += d.0 as u128;
        if free > now {
            self.preempted += d.0 as u128;
        }
        now + d
    }

    /// The counts start again (a ramp's end); the cores keep what is
    /// booked on them.
    pub fn restart(&mut self) {
        self.busy = [0; WORKS];
        self.preempted = 0;
    }

    /// CPU time booked for `work`, ns.
    pub fn busy(&self, work: Work) -> u128 {
        self.busy[work as usize]
    }

    /// The report's `host_cpu` section over `[start, end]` (the run's
    /// measured span): cores, busy seconds by work and utilisation (busy
    /// time over the cores' time, work booked past `end` included), and
    /// the time of work that preempted booked work (`preempting_s`): the
    /// threads it preempted were not delayed by it, so utilisation may
    /// exceed the cores' by up to that share.
    pub fn report(&self, cfg: &CpuConfig, start: SimTime, end: SimTime) -> serde_json::Value {
        let s = |w: Work| self.busy(w) as f64 * 1e-9;
        let total: u128 = self.busy.iter().sum();
        let span = end.0.saturating_sub(start.0) as f64 * 1e-9;
        let cores = self.free.len() as f64;
        serde_json::json!({
            "cores": self.free.len(),
            "ghz": cfg.ghz,
            "busy_s": total as f64 * 1e-9,
            "preempting_s": self.preempted as f64 * 1e-9,
            "utilisation": if span > 0.0 { total as f64 * 1e-9 / (span * cores) } else { 0.0 },
            "busy_by_work_s": {
                "kernel": s(Work::Kernel),
                "copy": s(Work::Copy),
                "submit": s(Work::Submit),
                "complete": s(Work::Complete),
                "wakeup": s(Work::Wakeup),
                "benchmark": s(Work::Benchmark),
                "application": s(Work::App),
            },
        })
    }
}
