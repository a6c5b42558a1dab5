//! The page cache and writeback on the real engine, checked by what the
//! device sees: writeback waits for its thresholds and for expiry, writers
//! are throttled to the device's pace, fsync and O_SYNC write and flush
//! before they return, readahead turns a sequential stream of small reads
//! into few large ones (and leaves random reads alone), every application
//! call completes exactly once, and an unlinked file's pages leave the
//! cache unwritten.
//!
//! Over 1,500 lines on purpose: one test per rule of mm/'s writeback,
//! readahead and fsync paths, each with the device-side log it checks; the
//! shared rig is `tests/common`.

mod common;
use common::{pages_written, Logged, Sent};
use serde_json::Value;
use ssd_core::observer::Observer;
use ssd_core::stats::Report;
use ssd_core::units::{SimTime, Size};
use ssd_core::Simulation;
use ssdsim_host::config::SsdConfig;
use ssdsim_host::cpu::{CpuConfig, Syscalls};
use ssdsim_host::fs::Kernel;
use ssdsim_host::pagecache::{file_page, AppIo, PageCache, PageCacheConfig, PAGE};
use ssdsim_host::scheds::build_sched;
use ssdsim_host::workload::{
    AppSource, CallExtras, FilePiece, FioGen, HostRequest, IoOp, RequestSource, RwMode, Timing,
    WorkloadConfig,
};
use std::cell::RefCell;
use std::rc::Rc;

/// Block requests the device completed: (op, bytes, arrival, done).
type Log = Rc<RefCell<Vec<(IoOp, u64, SimTime, SimTime)>>>;

struct Record(Log);
impl Observer for Record {
    fn request_done(&mut self, op: IoOp, bytes: u64, arrival: SimTime, done: SimTime) {
        self.0.borrow_mut().push((op, bytes, arrival, done));
    }
}

fn device() -> SsdConfig {
    let mut c = SsdConfig::default();
    c.nand.blocks_per_plane = 256;
    c
}

fn cache(size_mib: u64) -> PageCacheConfig {
    PageCacheConfig {
        size: Size::mib(size_mib),
        ..Default::default()
    }
}

fn workload(rw: RwMode, bs: u64, n: u64) -> WorkloadConfig {
    WorkloadConfig {
        rw,
        bs: Size(bs),
        number_ios: Some(n),
        iodepth: 1,
        direct: false,
        ..Default::default()
    }
}

fn run(
    c: &SsdConfig,
    w: &WorkloadConfig,
    pc: &PageCacheConfig,
    io: AppIo,
) -> (Report, Vec<(IoOp, u64, SimTime, SimTime)>) {
    let s = c.validate().unwrap();
    let ftl = ftl::build(&s.config.ftl, &s.shape()).unwrap();
    let sched = build_sched(&c.sched, s.logical_bytes() / 512, c.host.queue_depth).unwrap();
    let app = FioGen::new(w, s.logical_bytes(), 7);
    let src = PageCache::new(app, pc, io, s.logical_bytes(), c.sched.max_request.0).unwrap();
    let log: Log = Rc::default();
    let mut sim = Simulation::new(s, ftl, src, sched, Record(log.clone()));
    let r = sim.run().unwrap();
    let l = log.borrow().clone();
    (r, l)
}

fn get(r: &Report, path: &[&str]) -> f64 {
    let mut v: &Value = &r.extra[path[0]];
    for k in &path[1..] {
        v = &v[*k];
    }
    v.as_f64()
        .unwrap_or_else(|| panic!("{path:?} missing in {:?}", r.extra))
}

/// Writes that dirty less than the background threshold leave nothing for
/// background writeback; the dirty data stays in the cache while it is
/// younger than dirty_expire_centisecs. Above the threshold, background
/// writeback starts, and dirty data never exceeds the dirty threshold.
#[test]
fn writeback_waits_for_its_thresholds() {
    let c = device();
    let pc = cache(64); // background 1,638 pages, dirty 3,276
    let (bg, dirty) = pc.thresholds();
    assert_eq!((bg, dirty), (16384 * 10 / 100, 16384 * 20 / 100));
    // 1,000 pages: under the background threshold, all done in well under
    // the 30 s expiry.
    let (r, log) = run(
        &c,
        &workload(RwMode::Write, PAGE, 1000),
        &pc,
        AppIo::default(),
    );
    assert_eq!(get(&r, &["app", "writes"]), 1000.0);
    assert!(log.is_empty(), "no block I/O expected: {log:?}");
    assert_eq!(
        get(&r, &["page_cache", "dirty_at_end_bytes"]),
        1000.0 * PAGE as f64
    );
    // 20,000 pages: background writeback, from the background threshold on.
    let (r, log) = run(
        &c,
        &workload(RwMode::Write, PAGE, 20_000),
        &pc,
        AppIo::default(),
    );
    assert_eq!(get(&r, &["app", "writes"]), 20_000.0);
    let bgp = get(
        &r,
        &["page_cache", "writeback", "pages_by_reason", "background"],
    );
    assert!(bgp > 0.0);
    let written: u64 = log.iter().map(|e| e.1).sum();
    assert_eq!(written as f64, bgp * PAGE as f64);
    assert!(get(&r, &["page_cache", "dirty_max_pages"]) <= dirty as f64);
    // The first writeback is submitted at the writer's first check of the
    // dirty limits after the background threshold is crossed
    // (`balance_dirty_pages`, every `dirty_poll_interval` pages: 32 here,
    // 2^(log2(dirty - bg) / 2)): at the end of a write in bg + 1 ..= bg + 32,
    // each write's CPU its entry, its VFS path and its copy, one after the
    // other (one thread).
    let first = log.iter().map(|e| e.2).min().unwrap();
    let cpu = CpuConfig::default();
    let write_ns = cpu.syscall + cpu.write + cpu.copy(PAGE, 1).0;
    assert_eq!(first.0 % write_ns, 0, "first writeback at {first:?}");
    assert!(
        (bg + 1..=bg + 32).contains(&(first.0 / write_ns)),
        "first writeback after write {}",
        first.0 / write_ns
    );
    // Writeback is sorted and merged into max_sectors_kb requests.
    let max = c.sched.max_request.0;
    assert!(log.iter().all(|e| e.1 <= max));
    assert!(log.iter().filter(|e| e.1 == max).count() * 2 > log.len());
}

/// Dirty data older than dirty_expire_centisecs is written by the periodic
/// flusher, and not before.
#[test]
fn dirty_data_expires() {
    let c = device();
    let mut pc = cache(64);
    pc.dirty_expire_centisecs = 5; // 50 ms
    pc.dirty_writeback_centisecs = 1; // the flusher wakes every 10 ms
                                      // Mixed reads and writes over 1 GiB: slow enough (reads miss and go
                                      // to flash) to last longer than the expiry, with few dirty pages.
    let mut w = workload(RwMode::RandRw, PAGE, 40_000);
    w.size = Some(Size::gib(1));
    w.rwmixread = 99;
    let (r, log) = run(&c, &w, &pc, AppIo::default());
    let t = get(&r, &["app", "time_s"]);
    assert!(t > 0.2, "the run must outlast the expiry: {t} s");
    let periodic = get(
        &r,
        &["page_cache", "writeback", "pages_by_reason", "periodic"],
    );
    assert!(periodic > 0.0);
    assert_eq!(
        get(
            &r,
            &["page_cache", "writeback", "pages_by_reason", "background"]
        ),
        0.0
    );
    // The first write reaches the device no earlier than 50 ms after the
    // first dirtying (which is at most a few ms into the run) and no later
    // than one flusher period after it expired.
    let first = log
        .iter()
        .filter(|e| e.0 == IoOp::Write)
        .map(|e| e.2)
        .min()
        .unwrap();
    assert!(
        (50_000_000..=80_000_000).contains(&first.0),
        "first writeback at {first:?}"
    );
}

/// A writer that outruns the device is throttled at dirty_ratio: over a
/// long sequential write, the application writes at the device's write
/// bandwidth, not at memory speed.
#[test]
fn writers_are_throttled_to_the_device() {
    let c = device();
    let pc = cache(64);
    let n = 60_000u64;
    let (r, log) = run(&c, &workload(RwMode::Write, PAGE, n), &pc, AppIo::default());
    assert!(get(&r, &["page_cache", "throttled", "count"]) > 0.0);
    let app_mbps = get(&r, &["app", "mbps"]);
    let dev_bytes: u64 = log.iter().map(|e| e.1).sum();
    let span = log.iter().map(|e| e.3).max().unwrap().0 as f64 * 1e-9;
    let dev_mbps = dev_bytes as f64 / span / 1e6;
    assert!(
        app_mbps < 1.25 * dev_mbps && app_mbps > 0.75 * dev_mbps,
        "application {app_mbps} MB/s, device {dev_mbps} MB/s"
    );
    // Memory speed would be 4,000 MB/s.
    assert!(app_mbps < 1000.0, "{app_mbps}");
}

/// fsync=1: every write is written back and flushed before the next call;
/// O_SYNC the same, inside the write.
#[test]
fn fsync_and_o_sync_write_and_flush() {
    let c = device();
    let pc = cache(64);
    let w = workload(RwMode::RandWrite, PAGE, 500);
    for io in [
        AppIo {
            fsync: 1,
            ..Default::default()
        },
        AppIo {
            sync: true,
            ..Default::default()
        },
    ] {
        let (r, log) = run(&c, &w, &pc, io);
        let writes = log.iter().filter(|e| e.0 == IoOp::Write).count();
        let flushes = log.iter().filter(|e| e.0 == IoOp::Flush).count();
        assert_eq!((writes, flushes), (500, 500), "{io:?}");
        assert_eq!(get(&r, &["page_cache", "dirty_at_end_bytes"]), 0.0);
        // Each call waited for its write and flush: the device never had
        // two requests at once.
        let mut ev: Vec<(u64, i32)> = log
            .iter()
            .flat_map(|e| [(e.2 .0, 1), (e.3 .0, -1)])
            .collect();
        ev.sort_by_key(|&(t, d)| (t, d));
        let mut depth = 0;
        for (_, d) in ev {
            depth += d;
            assert!(depth <= 1, "{io:?}: overlapping requests");
        }
        if io.fsync > 0 {
            assert_eq!(get(&r, &["app", "fsyncs"]), 500.0);
            // The write itself is a memory copy.
            assert!(get(&r, &["app", "latency_us", "write", "max"]) < 5.0);
        } else {
            assert!(get(&r, &["app", "latency_us", "write", "mean"]) > 10.0);
        }
    }
}

/// Sequential 4 KiB reads leave as read_ahead_kb requests (the window
/// ramps 16, 32 pages; later windows are 128 KiB); random 4 KiB reads are
/// read as they are.
#[test]
fn readahead_follows_sequential_reads_only() {
    let c = device();
    let pc = cache(64);
    let n = 4096u64; // 16 MiB
    let (r, log) = run(&c, &workload(RwMode::Read, PAGE, n), &pc, AppIo::default());
    assert_eq!(get(&r, &["app", "reads"]), n as f64);
    let bytes: u64 = log.iter().map(|e| e.1).sum();
    assert!(
        bytes >= n * PAGE && bytes <= n * PAGE + 2 * 128 * 1024,
        "{bytes}"
    );
    let big = log.iter().filter(|e| e.1 == 128 * 1024).count();
    assert!(
        big * 10 >= log.len() * 9,
        "{} of {} requests are 128 KiB",
        big,
        log.len()
    );
    assert!(get(&r, &["page_cache", "hit_ratio"]) > 0.95);

    let mut w = workload(RwMode::RandRead, PAGE, 2000);
    w.size = Some(Size::gib(1));
    let (r, log) = run(&c, &w, &pc, AppIo::default());
    assert!(log.iter().all(|e| e.1 == PAGE), "random reads read no more");
    assert_eq!(get(&r, &["page_cache", "readahead_pages"]), 0.0);
    assert_eq!(
        log.len() as f64,
        get(&r, &["page_cache", "misses"]),
        "one block read per miss"
    );
}

/// With read_ahead_kb = 0 a sequential read is read page by page.
#[test]
fn no_readahead_reads_what_is_asked() {
    let c = device();
    let mut pc = cache(64);
    pc.read_ahead_kb = 0;
    let (_, log) = run(
        &c,
        &workload(RwMode::Read, PAGE, 500),
        &pc,
        AppIo::default(),
    );
    assert_eq!(log.len(), 500);
}

/// Every call of a mixed workload through a small cache completes exactly
/// once, whatever the scheduler, and what the flusher and fsyncs wrote plus
/// what is left dirty accounts for every page the application dirtied at
/// least once.
#[test]
fn every_call_completes_through_every_scheduler() {
    for sched in ssdsim_host::scheds::SCHED_NAMES {
        let mut c = device();
        c.sched.kind = sched.to_string();
        let mut pc = cache(16);
        pc.dirty_expire_centisecs = 2;
        pc.dirty_writeback_centisecs = 1;
        let mut w = workload(RwMode::RandRw, 16 * 1024, 3000);
        w.size = Some(Size::mib(64));
        let io = AppIo {
            fsync: 37,
            end_fsync: true,
            ..Default::default()
        };
        let (r, log) = run(&c, &w, &pc, io);
        assert_eq!(
            get(&r, &["app", "reads"]) + get(&r, &["app", "writes"]),
            3000.0,
            "{sched}"
        );
        // end_fsync leaves nothing dirty.
        assert_eq!(
            get(&r, &["page_cache", "dirty_at_end_bytes"]),
            0.0,
            "{sched}"
        );
        let wb = get(&r, &["page_cache", "writeback", "pages"]);
        let written: u64 = log.iter().filter(|e| e.0 == IoOp::Write).map(|e| e.1).sum();
        assert_eq!(written as f64, wb * PAGE as f64, "{sched}");
        assert_eq!(r.host.requests as usize, log.len(), "{sched}");
    }
}

/// fsync writes back its own file: thread 0 dirties 100 pages of file 1
/// while thread 1 writes 200 pages of file 2 and then fsyncs it. The fsync
/// writes 200 pages; file 1 stays dirty. On the block device (every call
/// on file 0) the same fsync writes all 300 pages.
#[test]
fn fsync_writes_back_one_file() {
    use ssdsim_host::workload::VecSource;
    let c = device();
    let s = c.validate().unwrap();
    let call = |op, lba: u64, stream, tag| HostRequest {
        arrival: SimTime::ZERO,
        op,
        lba,
        sectors: if op == IoOp::Flush { 0 } else { 8 },
        stream,
        tag,
        sync: false,
        placement: ssd_core::workload::Placement::NONE,
    };
    for (files, fsynced, left) in [(true, 200.0, 100.0), (false, 300.0, 0.0)] {
        let ino = |f: u32| if files { f } else { 0 };
        let mut calls: Vec<HostRequest> = (0..100)
            .map(|k| call(IoOp::Write, k * 8, 0, ino(1)))
            .collect();
        // Both threads start at once; thread 1's fsync comes after thread
        // 0's last write (each write is a 1 us copy).
        calls.extend((0..200).map(|k| call(IoOp::Write, (1 << 20) + k * 8, 1, ino(2))));
        calls.push(call(IoOp::Flush, 0, 1, ino(2)));
        let app = VecSource::new(calls, Timing::ClosedLoop { depth: 400 });
        let src = PageCache::new(
            app,
            &cache(64),
            AppIo::default(),
            s.logical_bytes(),
            c.sched.max_request.0,
        )
        .unwrap();
        let ftl = ftl::build(&s.config.ftl, &s.shape()).unwrap();
        let sched = build_sched(&c.sched, s.logical_bytes() / 512, c.host.queue_depth).unwrap();
        let log: Log = Rc::default();
        let mut sim = Simulation::new(s.clone(), ftl, src, sched, Record(log.clone()));
        let r = sim.run().unwrap();
        assert_eq!(get(&r, &["app", "fsyncs"]), 1.0);
        assert_eq!(
            get(&r, &["page_cache", "writeback", "pages_by_reason", "fsync"]),
            fsynced,
            "files {files}"
        );
        assert_eq!(
            get(&r, &["page_cache", "dirty_at_end_bytes"]),
            left * PAGE as f64,
            "files {files}"
        );
    }
}

/// Host work shares the host's cores: four threads writing 1,000 cached
/// pages each take 4,000 times a write's CPU (its entry, its own path, its
/// copy and its page) on one core, 2,000 on two, 1,000 on four.
#[test]
fn host_work_shares_the_host_cores() {
    use ssdsim_host::workload::VecSource;
    let c = device();
    let s = c.validate().unwrap();
    for cores in [1u32, 2, 4] {
        let cpu = CpuConfig {
            cores,
            ..CpuConfig::default()
        };
        let copy_ns = (PAGE as f64 * 1000.0 / cpu.copy_mbps).round()
            + (cpu.page + cpu.syscall + cpu.write) as f64;
        let calls: Vec<HostRequest> = (0..4000u64)
            .map(|k| HostRequest {
                arrival: SimTime::ZERO,
                op: IoOp::Write,
                lba: k * 8,
                sectors: 8,
                stream: (k % 4) as u32,
                tag: 0,
                sync: false,
                placement: ssd_core::workload::Placement::NONE,
            })
            .collect();
        let app = VecSource::new(calls, Timing::ClosedLoop { depth: 8 });
        // 16 MiB written: under the background threshold of 256 MiB.
        let pc = cache(256);
        let src = PageCache::on_host(
            app,
            &pc,
            &cpu,
            Kernel::Current,
            AppIo::default(),
            s.logical_bytes(),
            1 << 19,
        )
        .unwrap();
        let ftl = ftl::build(&s.config.ftl, &s.shape()).unwrap();
        let sched = build_sched(&c.sched, s.logical_bytes() / 512, c.host.queue_depth).unwrap();
        let mut sim = Simulation::new(s.clone(), ftl, src, sched, Record(Rc::default()));
        let r = sim.run().unwrap();
        let t = get(&r, &["app", "time_s"]) * 1e9;
        let want = 4000.0 / cores as f64 * copy_ns;
        assert!(
            (t - want).abs() <= copy_ns,
            "{cores} cores: {t} ns, want {want}"
        );
        let busy = get(&r, &["host_cpu", "busy_s"]) * 1e9;
        assert!(
            (busy - 4000.0 * copy_ns).abs() < 1.0,
            "{cores} cores: busy {busy} ns"
        );
        let u = get(&r, &["host_cpu", "utilisation"]);
        assert!(
            u > 0.99 && u <= 1.0 + 1e-9,
            "{cores} cores: utilisation {u}"
        );
    }
}

mod property {
    //! Any cache, writeback knobs, scheduler, block-layer limits and
    //! buffered workload (every fio mode, partial pages, O_SYNC, fsync=N,
    //! end_fsync; personalities): the run ends (the engine panics on a
    //! stall), every application call completes once, every block write is
    //! writeback the cache counted, and end_fsync leaves nothing dirty.
    use super::*;
    use proptest::prelude::*;
    use ssdsim_host::personality::{Personality, PersonalityConfig, PersonalityKind};
    use ssdsim_host::workload::RequestSource;

    fn cases() -> ProptestConfig {
        let n = std::env::var("PROPTEST_CASES")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(48);
        ProptestConfig::with_cases(n)
    }

    #[derive(Debug, Clone)]
    struct Case {
        size_mib: u64,
        bg: u32,
        dirty: u32,
        expire: u32,
        interval: u32,
        ra_kb: u32,
        cpus: u32,
        sched: usize,
        nr_requests: u32,
        plug: bool,
        max_kib: u64,
        app: App,
        io: (bool, u64, bool),
    }

    #[derive(Debug, Clone)]
    enum App {
        Fio {
            rw: usize,
            bs: u64,
            n: u64,
            span_mib: u64,
            depth: u32,
        },
        Personality {
            kind: usize,
            files: u64,
            threads: u32,
            n: u64,
            file_level: bool,
            /// The file system of a file-level run (`FsKind::ALL`).
            fs: usize,
        },
    }

    fn app() -> impl Strategy<Value = App> {
        prop_oneof![
            (
                0usize..8,
                prop_oneof![
                    Just(512u64),
                    Just(4096),
                    Just(6144),
                    Just(16384),
                    Just(65536)
                ],
                20u64..400,
                1u64..64,
                1u32..6,
            )
                .prop_map(|(rw, bs, n, span_mib, depth)| App::Fio {
                    rw,
                    bs,
                    n,
                    span_mib,
                    depth
                }),
            (
                0usize..3,
                1u64..40,
                1u32..8,
                20u64..400,
                any::<bool>(),
                0..ssdsim_host::fs::FsKind::ALL.len()
            )
                .prop_map(|(kind, files, threads, n, file_level, fs)| {
                    App::Personality {
                        kind,
                        files,
                        threads,
                        n,
                        file_level,
                        fs,
                    }
                }),
        ]
    }

    fn case() -> impl Strategy<Value = Case> {
        (
            (16u64..48, 0u32..40, 1u32..60, 0u32..20, 0u32..10),
            (prop_oneof![Just(0u32), Just(16), Just(128)], 1u32..4),
            (
                0usize..8,
                prop_oneof![Just(4u32), Just(16), Just(128)],
                any::<bool>(),
                prop_oneof![Just(4u64), Just(64), Just(512)],
            ),
            app(),
            (
                any::<bool>(),
                prop_oneof![Just(0u64), Just(1), Just(7)],
                any::<bool>(),
            ),
        )
            .prop_map(
                |(
                    (size_mib, bg, dirty, expire, interval),
                    (ra_kb, cpus),
                    (sched, nr_requests, plug, max_kib),
                    app,
                    io,
                )| Case {
                    size_mib,
                    bg,
                    dirty,
                    expire,
                    interval,
                    ra_kb,
                    cpus,
                    sched,
                    nr_requests,
                    plug,
                    max_kib,
                    app,
                    io,
                },
            )
    }

    const MODES: [RwMode; 8] = [
        RwMode::Read,
        RwMode::Write,
        RwMode::RandRead,
        RwMode::RandWrite,
        RwMode::Rw,
        RwMode::RandRw,
        RwMode::Trim,
        RwMode::RandTrim,
    ];

    /// A source that counts the calls it hands out.
    struct Counting(Box<dyn AppSource>, Rc<RefCell<u64>>);
    impl RequestSource for Counting {
        fn timing(&self) -> ssdsim_host::workload::Timing {
            self.0.timing()
        }
        fn next_request(
            &mut self,
        ) -> Option<Result<ssdsim_host::workload::HostRequest, ssdsim_host::workload::SourceError>>
        {
            let r = self.0.next_request();
            // A file system's metadata updates and own I/O, and a file's
            // unlink, are not application calls.
            // A call in pieces counts once, as its last piece.
            if matches!(r, Some(Ok(q)) if q.tag != ssdsim_host::pagecache::METADATA_INO
                && q.tag != ssdsim_host::pagecache::FS_INO)
                && !self.0.call_extras().unlink
                && !self.0.more_follow()
            {
                *self.1.borrow_mut() += 1;
            }
            r
        }
    }
    impl AppSource for Counting {
        fn clock(&mut self, now: ssd_core::SimTime) {
            self.0.clock(now)
        }
        fn more_follow(&self) -> bool {
            self.0.more_follow()
        }
        fn call_extras(&self) -> ssdsim_host::workload::CallExtras {
            self.0.call_extras()
        }
        fn fsync_io(&mut self, ino: u32, now: ssd_core::SimTime) -> ssdsim_host::workload::FsyncIo {
            self.0.fsync_io(ino, now)
        }
    }

    fn run_case(c: &Case) -> Result<(), TestCaseError> {
        let mut d = device();
        d.nand.blocks_per_plane = 64;
        d.sched.kind = ssdsim_host::scheds::SCHED_NAMES[c.sched].into();
        d.sched.nr_requests = c.nr_requests;
        d.sched.plug = c.plug;
        d.sched.max_request = Size::kib(c.max_kib);
        let s = d.validate().unwrap();
        let pc = PageCacheConfig {
            size: Size::mib(c.size_mib),
            dirty_background_ratio: c.bg,
            dirty_ratio: c.dirty,
            dirty_expire_centisecs: c.expire,
            dirty_writeback_centisecs: c.interval,
            read_ahead_kb: c.ra_kb,
            ..Default::default()
        };
        let cpu = CpuConfig {
            cores: c.cpus,
            ..CpuConfig::default()
        };
        let calls = Rc::new(RefCell::new(0u64));
        let (app, io): (Box<dyn AppSource>, AppIo) = match &c.app {
            App::Fio {
                rw,
                bs,
                n,
                span_mib,
                depth,
            } => {
                let w = WorkloadConfig {
                    rw: MODES[*rw],
                    bs: Size(*bs),
                    number_ios: Some(*n),
                    size: Some(Size::mib(*span_mib)),
                    iodepth: *depth,
                    direct: false,
                    ..Default::default()
                };
                let io = AppIo {
                    sync: c.io.0,
                    fsync: c.io.1,
                    end_fsync: c.io.2,
                };
                (Box::new(FioGen::new(&w, s.logical_bytes(), 5)), io)
            }
            App::Personality {
                kind,
                files,
                threads,
                n,
                file_level,
                fs,
            } => {
                let k = [
                    PersonalityKind::Varmail,
                    PersonalityKind::Fileserver,
                    PersonalityKind::Webserver,
                ][*kind];
                let p = PersonalityConfig {
                    files: Some(*files),
                    threads: Some(*threads),
                    file_size: Some(Size::kib(16)),
                    requests: *n,
                    direct: Some(false),
                    ..PersonalityConfig::new(k)
                };
                let src: Box<dyn AppSource> = if *file_level {
                    let p = PersonalityConfig {
                        level: ssdsim_host::personality::PersonalityLevel::File,
                        ..p
                    };
                    Box::new(
                        ssdsim_host::filebench::FileBench::new(
                            &p,
                            &ssdsim_host::fs::FsConfig {
                                kind: ssdsim_host::fs::FsKind::ALL[*fs],
                                ..Default::default()
                            },
                            s.logical_bytes(),
                            5,
                        )
                        .unwrap(),
                    )
                } else {
                    Box::new(Personality::new(&p, s.logical_bytes(), 5).unwrap())
                };
                (src, AppIo::default())
            }
        };
        let app = Counting(app, calls.clone());
        let src = PageCache::on_host(
            app,
            &pc,
            &cpu,
            Kernel::Current,
            io,
            s.logical_bytes(),
            d.sched.max_request.0,
        )
        .unwrap();
        let ftl = ftl::build(&s.config.ftl, &s.shape()).unwrap();
        let sched = build_sched(&d.sched, s.logical_bytes() / 512, d.host.queue_depth).unwrap();
        let log: Log = Rc::default();
        let mut sim = Simulation::new(s, ftl, src, sched, Record(log.clone()));
        let r = sim.run().map_err(|e| TestCaseError::fail(e.to_string()))?;
        let n = *calls.borrow() as f64;
        let done =
            get(&r, &["app", "reads"]) + get(&r, &["app", "writes"]) + get(&r, &["app", "trims"]);
        let fsyncs = get(&r, &["app", "fsyncs"]);
        let own = if matches!(c.app, App::Fio { .. }) {
            fsyncs
        } else {
            0.0
        };
        // Calls the source gave (a personality's Flush is an fsync call).
        prop_assert_eq!(done + fsyncs - own, n, "calls completed vs given");
        let log = log.borrow();
        let written: u64 = log.iter().filter(|e| e.0 == IoOp::Write).map(|e| e.1).sum();
        // Pages written back, plus a file system's own writes (journal).
        prop_assert_eq!(
            written as f64,
            (get(&r, &["page_cache", "writeback", "pages"])
                + get(&r, &["page_cache", "fs_direct_pages_written"]))
                * PAGE as f64
        );
        prop_assert_eq!(r.host.requests as usize, log.len());
        if io.end_fsync && matches!(c.app, App::Fio { .. }) {
            prop_assert_eq!(get(&r, &["page_cache", "dirty_at_end_bytes"]), 0.0);
        }
        prop_assert_eq!(get(&r, &["page_cache", "writeback_at_end_bytes"]), 0.0);
        // The cache's counts and lists are its pages, unlinks and all.
        sim.src.check().map_err(TestCaseError::fail)?;
        // An unlink sends nothing to the device: every trim is a call's.
        let trims = log.iter().filter(|e| e.0 == IoOp::Trim).count() as f64;
        prop_assert_eq!(trims, get(&r, &["page_cache", "trims"]));
        Ok(())
    }

    proptest! {
        #![proptest_config(cases())]
        #[test]
        fn any_buffered_run_ends_with_every_call_done(c in case()) {
            run_case(&c)?;
        }
    }
}

/// File-level webserver: 100 threads append to one log. The appends run in
/// the order their places were computed (the file's writer order), and a
/// log page that holds none of the file's data is zero-filled: no append
/// reads from the device (without both, most of them did).
#[test]
fn appends_to_a_shared_log_read_nothing() {
    use ssdsim_host::personality::{PersonalityConfig, PersonalityKind, PersonalityLevel};
    let p = PersonalityConfig {
        requests: 20_000,
        files: Some(200),
        level: PersonalityLevel::File,
        ..PersonalityConfig::new(PersonalityKind::Webserver)
    };
    let (r, _) = file_level(&p);
    assert!(r.notes["filebench_appends"] > 1000, "{:?}", r.notes);
    assert_eq!(get(&r, &["page_cache", "rmw_reads"]), 0.0);
}

/// A file-level personality's cost per call does not grow with its thread
/// count: the cache's steps look at the threads that can move (woken by a
/// completion, the end of a copy, a lock or the dirty limit), not at every
/// thread on every event. Walking every thread looked at about as many
/// threads per call as there are threads (4,096 here).
#[test]
fn thread_visits_per_call_do_not_grow_with_threads() {
    use ssdsim_host::personality::{PersonalityConfig, PersonalityKind, PersonalityLevel};
    let per_call = |threads: u32| {
        let p = PersonalityConfig {
            requests: 20_000,
            files: Some(200),
            threads: Some(threads),
            level: PersonalityLevel::File,
            ..PersonalityConfig::new(PersonalityKind::Webserver)
        };
        let (r, visits) = file_level(&p);
        let calls = get(&r, &["app", "reads"]) + get(&r, &["app", "writes"]);
        assert!(calls >= 20_000.0, "{calls} calls");
        visits as f64 / calls
    };
    let (few, many) = (per_call(16), per_call(4096));
    eprintln!("visits per call: {few} (16 threads), {many} (4,096)");
    assert!(few > 0.5, "{few} visits per call with 16 threads");
    assert!(
        many < 3.0 * few,
        "{many} visits per call with 4,096 threads against {few} with 16"
    );
}

/// A file-level personality `p` on ext4 through a 64 MiB cache on the test
/// device (of a 64 GiB host): its report, and the threads the cache's steps looked at.
fn file_level(p: &ssdsim_host::personality::PersonalityConfig) -> (Report, u64) {
    use ssdsim_host::filebench::FileBench;
    let c = device();
    let s = c.validate().unwrap();
    let app = FileBench::new(
        p,
        &ssdsim_host::fs::FsConfig::default(),
        s.logical_bytes(),
        4,
    )
    .unwrap();
    // A host with memory for 4,096 threads' memsize (40 GiB).
    let pc = PageCacheConfig {
        memory: Size::gib(64),
        ..cache(64)
    };
    let src = PageCache::new(app, &pc, AppIo::default(), s.logical_bytes(), 1 << 19).unwrap();
    let ftl = ftl::build(&s.config.ftl, &s.shape()).unwrap();
    let sched = build_sched(&c.sched, s.logical_bytes() / 512, c.host.queue_depth).unwrap();
    let mut sim = Simulation::new(s, ftl, src, sched, Record(Rc::default()));
    let r = sim.run().unwrap();
    (r, sim.src.thread_visits())
}

/// How a 2 GiB host's memory divides, figured by hand from the kernel's
/// rules ([`PageCacheConfig::plan`]): page descriptors of 64 bytes (56 on
/// 2.6.35) per 4 KiB page; `min_free_kbytes` = `int_sqrt(2,097,152 x 16)`
/// = 5,792 KiB = 1,448 pages (`init_per_zone_wmark_min`); the high
/// watermark `min + 2 x max(min / 4, 0.1 % of 524,288 pages)` = 1,448 + 2 x
/// 524 = 2,496 pages now, `min + min / 2` = 2,172 pages on 2.6.35
/// (`__setup_per_zone_wmarks`); the application's memory off the cache;
/// dirtyable memory without it now (`global_dirtyable_memory`), with it on
/// 2.6.35 with swap (`determine_dirtyable_memory`), without it on 2.6.35
/// without swap.
#[test]
fn the_hosts_memory_divides_as_the_kernel_divides_it() {
    use ssdsim_host::fs::Kernel;
    let pc = PageCacheConfig::default();
    let ram = 2u64 << 30;
    let app = 1000u64 << 20; // webserver: 100 threads x memsize 10m
    let now = pc.plan(Kernel::Current, app).unwrap();
    assert_eq!(now.kernel, 524_288 * 64);
    assert_eq!(now.reserve, 2_496 * PAGE);
    assert_eq!(now.cache, ram - 524_288 * 64 - 2_496 * PAGE - app);
    assert_eq!(now.dirtyable, now.cache);
    assert_eq!(now.dirty_pages, now.dirtyable / PAGE * 20 / 100);
    assert_eq!(now.background_pages, now.dirtyable / PAGE * 10 / 100);
    let old = pc.plan(Kernel::V2_6_35, app).unwrap();
    assert_eq!(old.kernel, 524_288 * 56);
    assert_eq!(old.reserve, 2_172 * PAGE);
    assert_eq!(old.cache, ram - 524_288 * 56 - 2_172 * PAGE - app);
    assert_eq!(old.dirtyable, ram - 524_288 * 56);
    let no_swap = PageCacheConfig {
        swap: false,
        ..pc.clone()
    };
    let old = no_swap.plan(Kernel::V2_6_35, app).unwrap();
    assert_eq!(old.dirtyable, ram - 524_288 * 56 - app);
    // kernel_memory comes off the cache too.
    let k = PageCacheConfig {
        kernel_memory: Size::mib(100),
        ..pc.clone()
    };
    assert_eq!(
        k.plan(Kernel::Current, app).unwrap().cache,
        now.cache - (100 << 20)
    );
    // A pinned size is the cache and the dirtyable memory both.
    let pinned = cache(64).plan(Kernel::V2_6_35, app).unwrap();
    assert_eq!((pinned.cache, pinned.dirtyable), (64 << 20, 64 << 20));
}

/// An application whose memory leaves the page cache less than 16 MiB is
/// refused before the run, naming the field; so is a pinned cache larger
/// than what is left.
#[test]
fn an_application_that_leaves_no_cache_is_refused() {
    use ssdsim_host::fs::Kernel;
    let pc = PageCacheConfig {
        memory: Size::gib(1),
        ..Default::default()
    };
    let e = pc
        .plan(Kernel::Current, 1000 << 20)
        .unwrap_err()
        .to_string();
    assert!(e.contains("page_cache.memory"), "{e}");
    assert!(e.contains("application"), "{e}");
    let e = PageCacheConfig {
        size: Size::mib(1900),
        ..Default::default()
    }
    .plan(Kernel::Current, 500 << 20)
    .unwrap_err()
    .to_string();
    assert!(e.contains("page_cache.size"), "{e}");
}

/// Filebench's threads hold their `memsize` (10 MiB in webserver.f, 1 MiB
/// in oltp.f) and a buffered fio job its `iodepth` buffers of `bs`: the
/// page cache of a run is the host's memory less that.
#[test]
fn the_applications_memory_is_filebenchs_and_fios() {
    use ssdsim_host::filebench::FileBench;
    use ssdsim_host::personality::{PersonalityConfig, PersonalityKind, PersonalityLevel};
    let c = device();
    let s = c.validate().unwrap();
    let mut p = PersonalityConfig {
        level: PersonalityLevel::File,
        files: Some(100),
        requests: 2_000,
        ..PersonalityConfig::new(PersonalityKind::Webserver)
    };
    let fs = ssdsim_host::fs::FsConfig::default();
    let web = FileBench::new(&p, &fs, s.logical_bytes(), 4).unwrap();
    assert_eq!(web.memory(), 100 * (10 << 20));
    p = PersonalityConfig {
        level: PersonalityLevel::File,
        files: Some(100),
        ..PersonalityConfig::new(PersonalityKind::Varmail)
    };
    let var = FileBench::new(&p, &fs, s.logical_bytes(), 4).unwrap();
    assert_eq!(var.memory(), 16 * (10 << 20));
    let mut w = workload(RwMode::RandWrite, 16384, 10);
    w.iodepth = 8;
    let fio = FioGen::new(&w, s.logical_bytes(), 1);
    assert_eq!(fio.memory(), 8 * 16384);
    // The cache a webserver run gets: 2 GiB less the kernel, the reserve
    // and 1,000 MiB, reported.
    let src = PageCache::new(
        web,
        &PageCacheConfig::default(),
        AppIo::default(),
        s.logical_bytes(),
        1 << 19,
    )
    .unwrap();
    let want = (2u64 << 30) - 524_288 * 64 - 2_496 * PAGE - 100 * (10 << 20);
    let ftl = ftl::build(&s.config.ftl, &s.shape()).unwrap();
    let sched = build_sched(&c.sched, s.logical_bytes() / 512, c.host.queue_depth).unwrap();
    let mut sim = Simulation::new(s, ftl, src, sched, Record(Rc::default()));
    let r = sim.run().unwrap();
    assert_eq!(get(&r, &["page_cache", "size_bytes"]), want as f64);
    assert_eq!(
        get(&r, &["page_cache", "memory", "application_bytes"]),
        (100 * (10 << 20)) as f64
    );
}

/// An application whose calls are given, each with what it asks beside
/// its bytes ([`CallExtras`]), up to 8 of them outstanding (each stream is
/// a thread making its calls in order).
struct Script {
    calls: std::collections::VecDeque<(HostRequest, CallExtras)>,
    last: CallExtras,
    /// Files whose pages are keyed by file ([`FileLayout`]).
    files: Vec<FileLayout>,
}

/// A file on a file system that keys its pages by file: its inode, its
/// pages, and where they are on the device (runs of (first page, first
/// device page, pages)).
#[derive(Clone)]
struct FileLayout {
    ino: u32,
    pages: u64,
    runs: Vec<(u64, u64, u32)>,
}

impl Script {
    /// The device runs of pages `[index, index + n)` of `ino`.
    fn runs_of(&self, ino: u32, index: u64, n: u32, out: &mut Vec<FilePiece>) {
        let Some(f) = self.files.iter().find(|f| f.ino == ino) else {
            return;
        };
        let end = index + n as u64;
        for &(i, dev, k) in &f.runs {
            let (lo, hi) = (i.max(index), (i + k as u64).min(end));
            if lo < hi {
                out.push(FilePiece {
                    index: lo,
                    dev: dev + (lo - i),
                    pages: (hi - lo) as u32,
                    joins: true,
                });
            }
        }
    }
}

impl RequestSource for Script {
    fn timing(&self) -> Timing {
        Timing::ClosedLoop { depth: 8 }
    }
    fn next_request(&mut self) -> Option<Result<HostRequest, ssdsim_host::workload::SourceError>> {
        let (r, x) = self.calls.pop_front()?;
        self.last = x;
        Some(Ok(r))
    }
}
impl AppSource for Script {
    fn call_extras(&self) -> CallExtras {
        self.last
    }
    fn place(&mut self, ino: u32, index: u64, n: u32, _now: SimTime, out: &mut Vec<FilePiece>) {
        self.runs_of(ino, index, n, out);
    }
    fn locate(&mut self, ino: u32, index: u64, n: u32, out: &mut Vec<FilePiece>) {
        self.runs_of(ino, index, n, out);
    }
    fn file_pages(&self, ino: u32) -> u64 {
        self.files
            .iter()
            .find(|f| f.ino == ino)
            .map_or(0, |f| f.pages)
    }
}

/// Writes of `pages` pages of file `ino` from page `lpn`, in calls of at
/// most 256 pages (1 MiB).
fn file_writes(ino: u32, lpn: u64, pages: u64) -> Vec<(HostRequest, CallExtras)> {
    (0..pages.div_ceil(256))
        .map(|k| {
            let n = (pages - k * 256).min(256);
            let r = HostRequest {
                arrival: SimTime::ZERO,
                op: IoOp::Write,
                lba: (lpn + k * 256) * 8,
                sectors: (n * 8) as u32,
                stream: 0,
                tag: ino,
                sync: false,
                placement: ssd_core::workload::Placement::NONE,
            };
            (r, CallExtras::default())
        })
        .collect()
}

/// File `ino`'s unlink (its last reference going).
fn unlink(ino: u32) -> (HostRequest, CallExtras) {
    let r = HostRequest {
        arrival: SimTime::ZERO,
        op: IoOp::Trim,
        lba: 0,
        sectors: 0,
        stream: 0,
        tag: ino,
        sync: false,
        placement: ssd_core::workload::Placement::NONE,
    };
    let x = CallExtras {
        unlink: true,
        ..CallExtras::default()
    };
    (r, x)
}

/// `calls` through a cache `pc` on the test device: the report, the
/// requests the device got, the device's completions, and the cache.
fn scripted(
    calls: Vec<(HostRequest, CallExtras)>,
    pc: &PageCacheConfig,
) -> (Report, Sent, Log, PageCache<Script>) {
    scripted_on(calls, pc, &CpuConfig::default())
}

/// As [`scripted`], on a host of `cpu`.
fn scripted_on(
    calls: Vec<(HostRequest, CallExtras)>,
    pc: &PageCacheConfig,
    cpu: &CpuConfig,
) -> (Report, Sent, Log, PageCache<Script>) {
    scripted_kernel(calls, pc, cpu, Kernel::Current)
}

/// As [`scripted_on`], the host running `kernel`.
fn scripted_kernel(
    calls: Vec<(HostRequest, CallExtras)>,
    pc: &PageCacheConfig,
    cpu: &CpuConfig,
    kernel: Kernel,
) -> (Report, Sent, Log, PageCache<Script>) {
    scripted_files(calls, Vec::new(), pc, cpu, kernel)
}

/// As [`scripted_kernel`], with files whose pages are keyed by file.
fn scripted_files(
    calls: Vec<(HostRequest, CallExtras)>,
    files: Vec<FileLayout>,
    pc: &PageCacheConfig,
    cpu: &CpuConfig,
    kernel: Kernel,
) -> (Report, Sent, Log, PageCache<Script>) {
    let c = device();
    let s = c.validate().unwrap();
    let app = Script {
        calls: calls.into(),
        last: CallExtras::default(),
        files,
    };
    let cache = PageCache::on_host(
        app,
        pc,
        cpu,
        kernel,
        AppIo::default(),
        s.logical_bytes(),
        1 << 19,
    )
    .unwrap();
    let sent: Sent = Rc::default();
    let ftl = ftl::build(&s.config.ftl, &s.shape()).unwrap();
    let sched = build_sched(&c.sched, s.logical_bytes() / 512, c.host.queue_depth).unwrap();
    let log: Log = Rc::default();
    let mut sim = Simulation::new(
        s,
        ftl,
        Logged(cache, sent.clone()),
        sched,
        Record(log.clone()),
    );
    let r = sim.run().unwrap();
    sim.src.0.check().unwrap();
    (r, sent, log, sim.src.0)
}

/// A file written (buffered) and deleted before the flusher runs reaches
/// no device: file 7's 64 dirty pages are dropped by its unlink, while
/// file 8's, kept, are written by the periodic writeback once they are 30 s
/// old (the thread computes for 40 s). Without the unlink both files are
/// written. Nothing of the unlink itself reaches the device.
#[test]
fn a_deleted_files_dirty_pages_reach_no_device() {
    let (f7, f8) = (1024u64, 8192u64);
    for delete in [true, false] {
        let mut calls = file_writes(7, f7, 64);
        calls.extend(file_writes(8, f8, 64));
        if delete {
            calls.push(unlink(7));
        }
        // 40 s of CPU work before a read of file 8 (a hit).
        let mut hog = file_writes(8, f8, 1).remove(0);
        hog.0.op = IoOp::Read;
        hog.1.cpu_cycles = 100_000_000_000;
        calls.push(hog);
        let (r, sent, _, cache) = scripted(calls, &cache(64));
        let periodic = get(
            &r,
            &["page_cache", "writeback", "pages_by_reason", "periodic"],
        );
        assert_eq!(pages_written(&sent, f8, f8 + 64), 64, "delete {delete}");
        if delete {
            assert_eq!(pages_written(&sent, f7, f7 + 64), 0);
            assert_eq!(periodic, 64.0);
            assert_eq!(get(&r, &["page_cache", "unlinks"]), 1.0);
            assert_eq!(get(&r, &["page_cache", "unlink_pages_dropped"]), 64.0);
            assert_eq!(get(&r, &["page_cache", "unlink_dirty_pages_dropped"]), 64.0);
            // File 8's pages stay cached, file 7's are gone.
            assert_eq!(cache.resident(), 64);
        } else {
            assert_eq!(pages_written(&sent, f7, f7 + 64), 64);
            assert_eq!(periodic, 128.0);
            assert_eq!(get(&r, &["page_cache", "unlink_dirty_pages_dropped"]), 0.0);
            assert_eq!(cache.resident(), 128);
        }
        assert_eq!(get(&r, &["app", "calls"]), 3.0, "the unlink is no call");
        assert!(sent.borrow().iter().all(|e| e.op == IoOp::Write));
        assert_eq!(get(&r, &["page_cache", "dirty_at_end_bytes"]), 0.0);
    }
}

/// REQ_SYNC as the kernel sets it on writeback (`wbc_to_write_flags`):
/// file 7's pages, written by its fsync (WB_SYNC_ALL), go out sync; file
/// 8's, left to the periodic writeback (WB_SYNC_NONE) while the thread
/// computes for 40 s, go out async.
#[test]
fn fsync_writeback_is_sync_and_the_flushers_is_not() {
    let (f7, f8) = (1024u64, 8192u64);
    let mut calls = file_writes(7, f7, 64);
    calls.extend(file_writes(8, f8, 64));
    let mut fsync = unlink(7).0;
    fsync.op = IoOp::Flush;
    calls.push((fsync, CallExtras::default()));
    let mut hog = file_writes(8, f8, 1).remove(0);
    hog.0.op = IoOp::Read;
    hog.1.cpu_cycles = 100_000_000_000;
    calls.push(hog);
    let (_, sent, _, _) = scripted(calls, &cache(64));
    let sent = sent.borrow();
    let writes = |lo: u64, hi: u64| {
        sent.iter()
            .filter(|e| e.op == IoOp::Write && e.lba / 8 >= lo && e.lba / 8 < hi)
            .map(|e| e.sync)
            .collect::<Vec<bool>>()
    };
    let (w7, w8) = (writes(f7, f7 + 64), writes(f8, f8 + 64));
    assert!(
        !w7.is_empty() && w7.iter().all(|&s| s),
        "fsync's writeback: {w7:?}"
    );
    assert!(
        !w8.is_empty() && w8.iter().all(|&s| !s),
        "the flusher's: {w8:?}"
    );
    assert!(
        sent.iter().any(|e| e.op == IoOp::Flush),
        "the fsync's flush"
    );
}

/// An unlink takes its file's dirty pages off the dirty count that drives
/// writeback and throttling (dirty limit 8 MiB, background 6 MiB): 5 MiB
/// of file 1, unlinked, then 5 MiB of file 2 stay under the background
/// threshold, so nothing is written back and no writer waits; without the
/// unlink the same writes pass both thresholds.
#[test]
fn an_unlinks_dirty_pages_leave_the_dirty_count() {
    let pc = PageCacheConfig {
        dirty_bytes: Size::mib(8),
        dirty_background_bytes: Size::mib(6),
        ..cache(64)
    };
    for delete in [true, false] {
        let mut calls = file_writes(1, 0, 1280);
        if delete {
            calls.push(unlink(1));
        }
        calls.extend(file_writes(2, 4096, 1280));
        let (r, sent, _, cache) = scripted(calls, &pc);
        let pc_ = |k: &str| get(&r, &["page_cache", k]);
        let throttled = get(&r, &["page_cache", "throttled", "count"]);
        let wb = get(&r, &["page_cache", "writeback", "pages"]);
        if delete {
            assert_eq!(pc_("unlink_dirty_pages_dropped"), 1280.0);
            assert_eq!(cache.nr_dirty(), 1280);
            assert_eq!(pc_("dirty_at_end_bytes"), 5.0 * (1 << 20) as f64);
            assert_eq!(pc_("dirty_max_pages"), 1280.0);
            assert_eq!((wb, throttled), (0.0, 0.0));
            assert!(sent.borrow().is_empty());
        } else {
            assert!(pc_("dirty_max_pages") > 1536.0);
            assert!(
                wb > 0.0 && throttled > 0.0,
                "{wb} pages written, {throttled} throttled"
            );
        }
        assert_eq!(cache.nr_writeback(), 0);
    }
}

/// An unlink waits for its file's pages under writeback, as
/// truncate_inode_pages_range does, and drops the rest unwritten: 8 MiB of
/// file 1 pass the background threshold, the flusher writes a chunk, and
/// the unlink right after it drops what is still dirty. Every page is
/// written once or dropped, none after its unlink; the thread's next call
/// waits for the writeback, and no page under writeback is lost (none is
/// left at the end).
#[test]
fn an_unlink_waits_for_its_pages_under_writeback() {
    let mut calls = file_writes(1, 0, 2048);
    calls.push(unlink(1));
    calls.extend(file_writes(2, 4096, 1));
    let (r, sent, log, cache) = scripted(calls, &cache(64));
    let pc = |k: &str| get(&r, &["page_cache", k]);
    let written = pages_written(&sent, 0, 2048);
    let waited = pc("unlink_pages_waited_for");
    assert!(waited > 0.0, "no page was under writeback at the unlink");
    assert!(written > 0 && written < 2048, "{written} pages written");
    assert_eq!(
        written as f64,
        get(&r, &["page_cache", "writeback", "pages"])
    );
    assert_eq!(written as f64 + pc("unlink_dirty_pages_dropped"), 2048.0);
    assert_eq!(pc("unlink_pages_dropped"), 2048.0);
    assert_eq!(pc("writeback_at_end_bytes"), 0.0);
    assert_eq!(cache.nr_dirty(), 1, "file 2's page");
    assert_eq!(cache.resident(), 1);
    // The write after the unlink returned after the last writeback.
    let last = log.borrow().iter().map(|e| e.3).max().unwrap();
    assert!(
        get(&r, &["app", "time_s"]) * 1e9 >= last.0 as f64,
        "the app ended at {} s, the writeback at {last:?}",
        get(&r, &["app", "time_s"])
    );
}

/// The calls on a file that came before its unlink are served before its
/// pages go, as in Linux, where a call in progress holds the file (the
/// eviction waits for the last reference): thread 1's read of file 5,
/// which starts after 1 ms of CPU work, hits the pages thread 0 wrote,
/// and thread 2's fsync writes them; thread 3's unlink, which came after
/// both, drops nothing dirty. Without the fsync, the unlink drops the 64
/// dirty pages and the device sees nothing but the read's absence.
#[test]
fn calls_before_an_unlink_are_served_first() {
    for fsync in [true, false] {
        let mut calls = file_writes(5, 2048, 64);
        let mut read = file_writes(5, 2048, 64).remove(0);
        read.0.op = IoOp::Read;
        read.0.stream = 1;
        read.1.cpu_cycles = 2_500_000;
        calls.push(read);
        if fsync {
            let mut f = file_writes(5, 2048, 1).remove(0);
            (f.0.op, f.0.sectors, f.0.stream) = (IoOp::Flush, 0, 2);
            f.1.cpu_cycles = 5_000_000;
            calls.push(f);
        }
        let mut u = unlink(5);
        u.0.stream = 3;
        calls.push(u);
        let (r, sent, _, cache) = scripted(calls, &cache(64));
        let pc = |k: &str| get(&r, &["page_cache", k]);
        assert_eq!((pc("hits"), pc("misses")), (64.0, 0.0), "fsync {fsync}");
        assert_eq!(pc("unlink_pages_dropped"), 64.0);
        let written = pages_written(&sent, 2048, 2048 + 64);
        if fsync {
            assert_eq!(written, 64);
            assert_eq!(pc("unlink_dirty_pages_dropped"), 0.0);
        } else {
            assert_eq!(written, 0);
            assert_eq!(pc("unlink_dirty_pages_dropped"), 64.0);
            assert!(sent.borrow().is_empty());
        }
        assert_eq!(cache.resident(), 0);
    }
}

/// One page of file `ino` at page `lpn`, read or written by thread 0.
fn one_page(op: IoOp, ino: u32, lpn: u64) -> HostRequest {
    HostRequest {
        arrival: SimTime::ZERO,
        op,
        lba: lpn * 8,
        sectors: 8,
        stream: 0,
        tag: ino,
        sync: false,
        placement: ssd_core::workload::Placement::NONE,
    }
}

/// The system calls a thread makes without I/O before a call (Filebench's
/// open, close, stat, creat, unlink, lseek and its own per-flowop work)
/// are CPU on a core before the call, not part of its latency; the call
/// pays its entry, its own path and its copy. One thread on one core
/// writing 100 cached pages: each call's time is all of it, one after
/// the other, and the report's CPU parts are those sums.
#[test]
fn calls_without_io_cost_cpu_before_the_call() {
    let cpu = CpuConfig {
        cores: 1,
        ..CpuConfig::default()
    };
    let before = Syscalls {
        open: 1,
        close: 1,
        stat: 1,
        create: 1,
        unlink: 1,
        other: 2,
        flowops: 3,
    };
    let calls: Vec<_> = (0..100)
        .map(|k| {
            let x = CallExtras {
                syscalls: before,
                ..CallExtras::default()
            };
            (one_page(IoOp::Write, 5, k), x)
        })
        .collect();
    let (r, ..) = scripted_on(calls, &cache(256), &cpu);
    // The kernel's part before a call: seven entries and the five calls'
    // own work.
    let pre = 7 * cpu.syscall + cpu.open + cpu.close + cpu.stat + cpu.create + cpu.unlink;
    assert_eq!(cpu.calls(&before).0, pre);
    let bench = 3 * cpu.flowop;
    let entry = cpu.syscall + cpu.write;
    let copy = cpu.copy(PAGE, 1).0;
    let ns = |path: &[&str]| (get(&r, path) * 1e9).round() as u64;
    assert_eq!(
        ns(&["host_cpu", "busy_by_work_s", "kernel"]),
        100 * (pre + entry)
    );
    assert_eq!(
        ns(&["host_cpu", "busy_by_work_s", "benchmark"]),
        100 * bench
    );
    assert_eq!(ns(&["host_cpu", "busy_by_work_s", "copy"]), 100 * copy);
    // One core, one thread: the calls follow each other; the first's
    // system calls start the measured span.
    let t = ns(&["app", "time_s"]);
    assert_eq!(t, 100 * (pre + bench + entry + copy));
    // A write's latency is its entry and its copy.
    let mean = get(&r, &["app", "latency_us", "write", "mean"]) * 1e3;
    assert!(
        (mean - (entry + copy) as f64).abs() < 1.0,
        "write latency {mean} ns, want {}",
        entry + copy
    );
}

/// A completion wakes its waiter after the interrupt and the switch to it
/// (`CpuConfig::complete`, `CpuConfig::wakeup`): reads of pages not
/// cached, one at a time on an idle device, each take the switch longer
/// than with a free one; the device's part is the same.
#[test]
fn a_completion_wakes_its_waiter_after_the_switch() {
    let pc = PageCacheConfig {
        read_ahead_kb: 0,
        ..cache(256)
    };
    let calls: Vec<_> = (0..50)
        .map(|k| (one_page(IoOp::Read, 5, k * 1_000), CallExtras::default()))
        .collect();
    let run = |cpu: &CpuConfig| {
        let (r, ..) = scripted_on(calls.clone(), &pc, cpu);
        assert_eq!(get(&r, &["app", "reads"]), 50.0);
        get(&r, &["app", "latency_us", "read", "mean"]) * 1e3
    };
    let cpu = CpuConfig {
        complete: 3_000,
        ..CpuConfig::default()
    };
    let free = CpuConfig {
        complete: 0,
        wakeup: 0,
        ..cpu.clone()
    };
    let (paid, unpaid) = (run(&cpu), run(&free));
    let want = (cpu.complete + cpu.wakeup) as f64;
    assert!(
        (paid - unpaid - want).abs() < 1.0,
        "read latency {paid} ns against {unpaid} ns: {} ns more, want {want}",
        paid - unpaid
    );
}

/// O_DIRECT calls ([`CallExtras::direct`]) as `iomap_dio_rw` makes them:
/// the range's dirty cached pages are written back first
/// (`filemap_write_and_wait_range`), the request goes to the device
/// sector-exact and waited for (a write `REQ_SYNC`), a write drops the
/// range's cached pages (`kiocb_invalidate_pages`), and nothing is copied
/// into or read from the cache. File 7's 16 pages are written buffered;
/// a direct write of its first 8 pages writes those back, then itself;
/// a direct read of all 16 writes back the other 8, then reads.
#[test]
fn o_direct_calls_bypass_the_cache() {
    let f7 = 1024u64;
    let mut calls = file_writes(7, f7, 16);
    let direct = CallExtras {
        direct: true,
        ..CallExtras::default()
    };
    let mut w = file_writes(7, f7, 8).remove(0);
    w.1 = direct;
    let mut r = file_writes(7, f7, 16).remove(0);
    r.0.op = IoOp::Read;
    r.1 = direct;
    calls.extend([w, r]);
    let (rep, sent, _, cache) = scripted(calls, &cache(64));
    let sent = sent.borrow();
    let writes: Vec<&HostRequest> = sent.iter().filter(|q| q.op == IoOp::Write).collect();
    // Writeback of pages 0-7 (fsync-like, REQ_SYNC), the direct write, then
    // the writeback of pages 8-15 before the read.
    assert_eq!(writes.len(), 3, "{writes:?}");
    assert_eq!((writes[0].lba, writes[0].sectors), (f7 * 8, 64));
    assert_eq!((writes[1].lba, writes[1].sectors), (f7 * 8, 64));
    assert!(writes[1].sync);
    assert_eq!((writes[2].lba, writes[2].sectors), ((f7 + 8) * 8, 64));
    let reads: Vec<&HostRequest> = sent.iter().filter(|q| q.op == IoOp::Read).collect();
    assert_eq!(reads.len(), 1);
    assert_eq!((reads[0].lba, reads[0].sectors), (f7 * 8, 128));
    assert_eq!(
        get(&rep, &["page_cache", "direct_io_bytes_written"]),
        32768.0
    );
    assert_eq!(get(&rep, &["page_cache", "direct_io_bytes_read"]), 65536.0);
    // The direct read is no cache hit or miss; the write dropped pages 0-7.
    assert_eq!(get(&rep, &["page_cache", "hits"]), 0.0);
    assert_eq!(get(&rep, &["page_cache", "misses"]), 0.0);
    assert_eq!(cache.resident(), 8);
    assert_eq!(cache.nr_dirty(), 0);
}

/// 2.6.35's `balance_dirty_pages` (mm/page-writeback.c): a writer over the
/// dirty limit writes back pages itself, on its own stream, at most its
/// chunk (1.5 x what it dirtied since the last check, at least
/// `ratelimit_pages`) a call, then pauses (1 jiffy, doubling) until under
/// the limit or its chunk is written; the current kernel's writers only
/// sleep while the flusher writes. 32 MiB written into a dirty limit of
/// 8 MiB: on 2.6.35 some of the writeback is the writer's, on the current
/// kernel none is, and every page reaches the device once either way.
#[test]
fn on_2_6_35_a_writer_over_the_limit_writes_back_itself() {
    let pc = PageCacheConfig {
        dirty_bytes: Size::mib(8),
        dirty_background_bytes: Size::mib(6),
        ..cache(64)
    };
    for kernel in [Kernel::V2_6_35, Kernel::Current] {
        let (r, sent, _, cache) =
            scripted_kernel(file_writes(1, 0, 8192), &pc, &CpuConfig::default(), kernel);
        let by = |k: &str| get(&r, &["page_cache", "writeback", "pages_by_reason", k]);
        let own: u64 = sent
            .borrow()
            .iter()
            .filter(|q| q.op == IoOp::Write && q.stream != ssdsim_host::pagecache::FLUSHER_STREAM)
            .map(|q| q.sectors as u64 / 8)
            .sum();
        assert_eq!(pages_written(&sent, 0, 8192), 8192 - cache.nr_dirty());
        if kernel == Kernel::V2_6_35 {
            assert!(own > 0, "the writer wrote back nothing itself");
            assert_eq!(by("balance_dirty_pages"), own as f64);
            assert!(get(&r, &["page_cache", "throttled", "count"]) > 0.0);
        } else {
            assert_eq!(own, 0);
            assert!(r.extra["page_cache"]["writeback"]["pages_by_reason"]
                .get("balance_dirty_pages")
                .is_none());
        }
    }
}

/// A current kernel's IO-less throttling (`balance_dirty_pages` since
/// 3.2, as in 6.12) paces a writer that outruns the device to the device's
/// write bandwidth, which it estimates from the pages written back
/// (`wb_update_write_bandwidth`, a ~3 s window, from 100 MB/s): 3 GiB
/// written in 1 MiB calls through a 64 MiB cache, with the device writing at
/// about 200 MB/s, end with the estimate within a tenth of what the device
/// did; the writer
/// is paused many times, each at most `MAX_PAUSE` (200 ms), and dirty plus
/// writeback pages never pass the dirty limit by more than the calls in
/// flight.
#[test]
fn a_current_kernel_paces_a_writer_to_the_estimated_bandwidth() {
    let pc = cache(64);
    // 1 GiB over and over (about 15 s of writing).
    let calls: Vec<_> = (0..3).flat_map(|_| file_writes(1, 0, 262_144)).collect();
    let (r, _, _, _) = scripted(calls, &pc);
    let thr = &r.extra["page_cache"]["throttled"];
    let est = thr["write_bandwidth_mbps"].as_f64().unwrap();
    let dev = r.host.mbps;
    assert!(
        (est - dev).abs() < dev / 10.0,
        "estimate {est} MB/s, device {dev} MB/s"
    );
    assert!(thr["count"].as_f64().unwrap() > 50.0, "{thr}");
    assert!(thr["max_us"].as_f64().unwrap() <= 200_000.0, "{thr}");
    let (_, dirty) = pc.thresholds();
    assert!(get(&r, &["page_cache", "dirty_max_pages"]) <= (dirty + 256) as f64);
}

/// A read of `pages` pages of file `ino` from its page `index`, through
/// descriptor `fd`'s `open`th open, by thread 0.
fn file_read(ino: u32, index: u64, pages: u64, fd: u32, open: u64) -> (HostRequest, CallExtras) {
    let r = HostRequest {
        arrival: SimTime::ZERO,
        op: IoOp::Read,
        lba: (file_page(ino, 0) + index) * 8,
        sectors: (pages * 8) as u32,
        stream: 0,
        tag: ino,
        sync: false,
        placement: ssd_core::workload::Placement::NONE,
    };
    let x = CallExtras {
        fd,
        open,
        ..CallExtras::default()
    };
    (r, x)
}

/// The device pages each read request covered: [lo, hi).
fn reads(sent: &Sent) -> Vec<(u64, u64)> {
    sent.borrow()
        .iter()
        .filter(|e| e.op == IoOp::Read)
        .map(|e| (e.lba / 8, (e.lba + e.sectors as u64).div_ceil(8)))
        .collect()
}

/// A read of a file's last pages reads nothing past its end, though the
/// device holds another file's blocks right after it: readahead of a
/// file stops at `i_size` (6.12's `page_cache_ra_unbounded`, through
/// `do_page_cache_ra`, which clips the window at the file's last page;
/// 2.6.35's `__do_page_cache_readahead`: `end_index = (isize - 1) >>
/// PAGE_CACHE_SHIFT`). File 5 is 10 pages at device page 1,000; file 6
/// follows it (1,010 on). A 4 KiB read of each of file 5's pages ramps
/// the window past 10 pages, yet no request reaches 1,010.
#[test]
fn readahead_stops_at_the_files_end_not_the_next_files_blocks() {
    let files = vec![
        FileLayout {
            ino: 5,
            pages: 10,
            runs: vec![(0, 1000, 10)],
        },
        FileLayout {
            ino: 6,
            pages: 100,
            runs: vec![(0, 1010, 100)],
        },
    ];
    let calls: Vec<_> = (0..10).map(|i| file_read(5, i, 1, 1, 1)).collect();
    let (r, sent, _, _) = scripted_files(
        calls,
        files,
        &cache(64),
        &CpuConfig::default(),
        Kernel::Current,
    );
    let rd = reads(&sent);
    assert!(!rd.is_empty());
    assert!(
        rd.iter().all(|&(a, b)| a >= 1000 && b <= 1010),
        "{rd:?}: a read past file 5's end"
    );
    // Every page of the file read once, the first's window ramped over
    // the rest: the pages beyond the first call's are readahead.
    assert_eq!(get(&r, &["page_cache", "read_pages"]), 10.0);
    assert_eq!(get(&r, &["page_cache", "readahead_pages"]), 9.0);
    assert_eq!(get(&r, &["app", "reads"]), 10.0);
}

/// Readahead state is the open file's (`struct file`'s `f_ra`, set up by
/// `file_ra_state_init` at open), not the thread's: one thread reading
/// two files in turn, 16 KiB at a time from their page 64 on, each
/// through its own descriptor, sees each file's reads as sequential
/// (`ondemand_readahead`'s `prev_pos` test, then `get_next_ra_size` on
/// every hit of the `PG_readahead` mark), so both windows ramp to
/// `read_ahead_kb` (128 KiB); had they shared one state, each read would
/// look random to it (its previous read was the other file's) and be
/// read alone. Opening file 5 again starts a fresh state: the next read,
/// though it follows the last, is read alone (no previous read,
/// `prev_pos = -1`).
#[test]
fn each_open_file_has_its_own_readahead_window() {
    let files = vec![
        FileLayout {
            ino: 5,
            pages: 1024,
            runs: vec![(0, 10_000, 1024)],
        },
        FileLayout {
            ino: 6,
            pages: 1024,
            runs: vec![(0, 20_000, 1024)],
        },
    ];
    let mut calls = Vec::new();
    for k in 0..32 {
        calls.push(file_read(5, 64 + 4 * k, 4, 1, 1));
        calls.push(file_read(6, 64 + 4 * k, 4, 2, 1));
    }
    let (r, sent, _, _) = scripted_files(
        calls.clone(),
        files.clone(),
        &cache(64),
        &CpuConfig::default(),
        Kernel::Current,
    );
    let rd = reads(&sent);
    for base in [10_000u64, 20_000] {
        let of: Vec<_> = rd
            .iter()
            .filter(|&&(a, _)| a >= base && a < base + 1024)
            .collect();
        assert!(
            of.iter().any(|&&(a, b)| b - a == 32),
            "file at {base}: no 128 KiB window in {of:?}"
        );
        // The first read alone (no previous read), then windows: far
        // fewer requests than reads.
        assert!(of.len() <= 8, "file at {base}: {} requests", of.len());
    }
    assert!(get(&r, &["page_cache", "readahead_pages"]) > 0.0);
    // File 5 opened again (open 2 of fd 1), then read on from where it
    // was: a fresh state reads just the call's pages.
    let next = 64 + 4 * 32 + 64;
    calls.push(file_read(5, next, 4, 1, 2));
    let (_, sent, _, _) = scripted_files(
        calls,
        files,
        &cache(64),
        &CpuConfig::default(),
        Kernel::Current,
    );
    let last = *reads(&sent).last().unwrap();
    assert_eq!(
        last,
        (10_000 + next, 10_000 + next + 4),
        "a fresh state reads the call alone"
    );
}

/// A file whose blocks are in two extents is read ahead by its page
/// indices across the gap, and the window leaves as one request per
/// contiguous run of blocks: `mpage_readahead` -> `do_mpage_readpage`
/// submits its bio when the next block does not follow the last
/// (`last_block_in_bio`), as `iomap_readahead` starts a new bio where the
/// mapping's extent ends. File 5's pages 0-19 are at device page 1,000,
/// 20-63 at 5,000; it is read 16 KiB at a time from its start.
#[test]
fn readahead_crosses_a_files_extents_by_index_one_request_per_run() {
    let files = vec![FileLayout {
        ino: 5,
        pages: 64,
        runs: vec![(0, 1000, 20), (20, 5000, 44)],
    }];
    let calls: Vec<_> = (0..16).map(|k| file_read(5, 4 * k, 4, 1, 1)).collect();
    let (r, sent, _, _) = scripted_files(
        calls,
        files,
        &cache(64),
        &CpuConfig::default(),
        Kernel::Current,
    );
    let rd = reads(&sent);
    // Every request inside one extent, the file's 64 pages read once.
    assert!(
        rd.iter()
            .all(|&(a, b)| (a >= 1000 && b <= 1020) || (a >= 5000 && b <= 5044)),
        "{rd:?}"
    );
    assert_eq!(rd.iter().map(|&(a, b)| b - a).sum::<u64>(), 64);
    assert_eq!(get(&r, &["page_cache", "read_pages"]), 64.0);
    // The window over the gap leaves as two requests at one instant: the
    // first extent's end, the second's start.
    let sent = sent.borrow();
    let at = |dev: u64, end: bool| {
        sent.iter()
            .find(|e| {
                e.op == IoOp::Read
                    && if end {
                        (e.lba + e.sectors as u64) / 8 == dev
                    } else {
                        e.lba / 8 == dev
                    }
            })
            .map(|e| e.arrival)
    };
    let (a, b) = (at(1020, true), at(5000, false));
    assert!(a.is_some() && a == b, "{a:?} {b:?}: {rd:?}");
    // Fewer requests than calls: the reads were read ahead.
    assert!(rd.len() < 16, "{rd:?}");
}
