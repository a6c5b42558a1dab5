//! Flexible Data Placement on the page FTL run by the engine: placement
//! identifiers route writes to their handle's blocks and their group's
//! dies, GC keeps to the isolation the handles have, an invalid PID fails
//! and is counted, the FDP Statistics counters equal the engine's, and the
//! configurations FDP cannot run are refused with the field named.

use ssd_core::ftl::{Ftl, FtlKind};
use ssd_core::observer::NullObserver;
use ssd_core::sched::Noop;
use ssd_core::workload::Placement;
use ssd_core::{SimTime, Simulation};
use ssdsim_host::config::SsdConfig;
use ssdsim_host::workload::{HostRequest, IoOp, Timing, VecSource};

/// 2 channels x 2 ways x 1 die x 2 planes (4 dies, 8 planes), 32 blocks of
/// 16 pages a plane; 2 handles.
fn config(persistent: bool) -> SsdConfig {
    let mut c = SsdConfig::default();
    c.layout.channels = 2;
    c.layout.ways = 2;
    c.nand.dies_per_chip = 1;
    c.nand.planes_per_die = 2;
    c.nand.blocks_per_plane = 32;
    c.nand.pages_per_block = 16;
    c.ftl.op = 0.3;
    c.ftl.fdp.enabled = true;
    c.ftl.fdp.handles = 2;
    if persistent {
        c.ftl.fdp.isolation = ssd_core::ftl::FdpIsolation::Persistent;
    }
    c
}

const SPP: u64 = 8; // sectors a 4 KiB page

fn write(page: u64, pid: Option<u16>) -> HostRequest {
    HostRequest {
        arrival: SimTime::ZERO,
        op: IoOp::Write,
        lba: page * SPP,
        sectors: SPP as u32,
        stream: 0,
        tag: 0,
        sync: false,
        placement: pid.map_or(Placement::NONE, Placement::pid),
    }
}

type Sim = Simulation<ftl::AnyFtl, VecSource, Noop, NullObserver>;

fn run(c: &SsdConfig, reqs: Vec<HostRequest>) -> (ssd_core::stats::Report, Sim) {
    let s = c.validate().unwrap();
    let f = ftl::build(&s.config.ftl, &s.shape()).unwrap();
    let src = VecSource::new(reqs, Timing::ClosedLoop { depth: 8 });
    let mut sim = Simulation::new(s, f, src, Noop::new(1024, true), NullObserver);
    let r = sim.run().unwrap();
    sim.ftl.check_invariants().unwrap();
    (r, sim)
}

fn page_ftl(sim: &Sim) -> &ftl::PageFtl {
    match &sim.ftl {
        ftl::AnyFtl::Page(p) => p,
        _ => panic!("not the page FTL"),
    }
}

/// Two streams of different lifetimes, each on its own handle: a hot one
/// overwriting a small range at random (PID 0) and a cold one writing a
/// large range in order, again and again (PID 1), interleaved, enough to
/// make GC run many times. `directive` false: the same writes without one.
fn hot_cold(logical: u64, n: usize, directive: bool) -> Vec<HostRequest> {
    let hot = logical / 8;
    let mut x: u64 = 12345;
    let mut cold = 0;
    let mut v = Vec::new();
    for i in 0..n {
        if i % 2 == 0 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            v.push(write(x % hot, directive.then_some(0)));
        } else {
            v.push(write(hot + cold, directive.then_some(1)));
            cold = (cold + 1) % (logical - hot);
        }
    }
    v
}

#[test]
fn persistent_isolation_never_shares_an_erase_block_between_handles() {
    let c = config(true);
    let logical = c.validate().unwrap().logical_pages;
    let (r, sim) = run(&c, hot_cold(logical, 6 * logical as usize, true));
    assert!(r.ftl.stats.gc_runs > 50, "GC ran {}", r.ftl.stats.gc_runs);
    let f = page_ftl(&sim);
    let blocks = f.live_handles_by_block();
    assert!(blocks.len() > 10);
    for (b, hs) in &blocks {
        assert_eq!(
            hs.len(),
            1,
            "block {} holds the data of handles {hs:?}",
            b.0
        );
    }
    // Both handles' data was moved by GC, each into its own blocks.
    let fdp = &r.extra["fdp"];
    assert_eq!(fdp["ruh_type"], "persistently_isolated");
    for h in 0..2 {
        assert!(fdp["handles"][h]["gc_moved_bytes"].as_u64().unwrap() > 0);
    }
    assert_eq!(fdp["shared_gc_bytes"], 0);
}

#[test]
fn initial_isolation_lets_gc_mix_the_handles_data() {
    let c = config(false);
    let logical = c.validate().unwrap().logical_pages;
    let (r, sim) = run(&c, hot_cold(logical, 6 * logical as usize, true));
    let f = page_ftl(&sim);
    let fd = f.fdp().unwrap();
    let mut mixed = 0;
    for (b, hs) in f.live_handles_by_block() {
        if hs.len() > 1 {
            // Only GC's shared reclaim units mix handles; a host block
            // holds its handle's writes alone (check_invariants too).
            assert_eq!(fd.owner(b), ftl::fdp::SHARED);
            mixed += 1;
        }
    }
    assert!(mixed > 0, "no GC block mixes the handles' data");
    let fdp = &r.extra["fdp"];
    assert_eq!(fdp["ruh_type"], "initially_isolated");
    assert!(fdp["shared_gc_bytes"].as_u64().unwrap() > 0);
    // Under initial isolation GC's copies go to the shared units, not to
    // the handles' own.
    for h in 0..2 {
        assert_eq!(
            fdp["handles"][h]["media_bytes"],
            fdp["handles"][h]["host_bytes"]
        );
    }
}

#[test]
fn the_statistics_log_page_counters_equal_the_engines() {
    for persistent in [false, true] {
        let c = config(persistent);
        let logical = c.validate().unwrap().logical_pages;
        let (r, _) = run(&c, hot_cold(logical, 4 * logical as usize, true));
        let fdp = &r.extra["fdp"];
        let page = 4096;
        assert_eq!(fdp["hbmw"], r.host.bytes_written);
        let host_pages = r.host.bytes_written / page;
        assert_eq!(
            Some(fdp["mbmw"].as_f64().unwrap() / fdp["hbmw"].as_f64().unwrap()),
            r.flash.waf
        );
        assert_eq!(fdp["mbmw"].as_u64().unwrap(), r.flash.page_programs * page);
        assert_eq!(
            fdp["mbmw"].as_u64().unwrap(),
            (host_pages + r.flash.gc_page_copies) * page
        );
        assert_eq!(
            fdp["mbe"].as_u64().unwrap(),
            r.flash.block_erases * 16 * page
        );
        let per_handle: u64 = (0..2)
            .map(|h| fdp["handles"][h]["host_bytes"].as_u64().unwrap())
            .sum();
        assert_eq!(fdp["hbmw"].as_u64().unwrap(), per_handle);
        let moved: u64 = (0..2)
            .map(|h| fdp["handles"][h]["gc_moved_bytes"].as_u64().unwrap())
            .sum();
        assert_eq!(moved, r.flash.gc_page_copies * page);
    }
}

#[test]
fn a_write_without_a_directive_goes_to_placement_handle_0() {
    let c = config(true);
    let (r, sim) = run(&c, (0..64).map(|p| write(p, None)).collect());
    let fdp = &r.extra["fdp"];
    assert_eq!(fdp["handles"][0]["host_bytes"], 64 * 4096);
    assert_eq!(fdp["handles"][1]["host_bytes"], 0);
    let f = page_ftl(&sim);
    for (b, hs) in f.live_handles_by_block() {
        assert_eq!(hs, vec![0]);
        assert_eq!(f.fdp().unwrap().owner(b), 0);
    }
}

#[test]
fn an_invalid_placement_identifier_fails_the_write_and_is_counted() {
    let c = config(false);
    // PID 2 names no handle (2 handles, one group); PID 1 is valid.
    let (r, sim) = run(&c, vec![write(0, Some(2)), write(1, Some(1))]);
    assert_eq!(r.host.failed, 1);
    assert_eq!(r.host.bytes_written, 4096);
    assert_eq!(r.extra["fdp"]["events"]["invalid_placement_identifier"], 1);
    assert_eq!(r.extra["fdp"]["hbmw"], 4096);
    assert!(sim.ftl.lookup(ssd_core::Lpn(0)).is_none());
    assert!(sim.ftl.lookup(ssd_core::Lpn(1)).is_some());
}

#[test]
fn a_placement_identifier_keeps_its_writes_on_its_reclaim_groups_dies() {
    let mut c = config(false);
    c.ftl.fdp.groups = 2;
    let s = c.validate().unwrap();
    let fdpc = s.config.ftl.fdp;
    assert_eq!(fdpc.rgif(), 1);
    // Placement handle 1 in group 1, handle 0 in group 0.
    let (p11, p00) = (fdpc.make_pid(1, 1), fdpc.make_pid(0, 0));
    assert_eq!(p11, 0x8001);
    assert_eq!(fdpc.pid_list(), vec![0, 0x8000, 1, 0x8001]);
    let mut reqs = Vec::new();
    for p in 0..256 {
        reqs.push(write(p, Some(if p < 128 { p11 } else { p00 })));
    }
    let (r, sim) = run(&c, reqs);
    assert_eq!(r.host.failed, 0);
    let g = s.geometry;
    let dies = |range: std::ops::Range<u64>| -> std::collections::BTreeSet<u32> {
        range
            .map(|l| g.die_of(sim.ftl.lookup(ssd_core::Lpn(l)).unwrap()).0)
            .collect()
    };
    let (d1, d0) = (dies(0..128), dies(128..256));
    // Two dies each (4 dies, 2 groups), disjoint; channel-first striping
    // puts each group on both channels.
    assert_eq!(d1.len(), 2);
    assert_eq!(d0.len(), 2);
    assert!(d1.is_disjoint(&d0), "{d1:?} {d0:?}");
    let chans = |ds: &std::collections::BTreeSet<u32>| -> std::collections::BTreeSet<u32> {
        ds.iter()
            .map(|&d| g.channel_of_die(ssd_core::DieId(d)).0)
            .collect()
    };
    assert_eq!(chans(&d1).len(), 2, "{d1:?}");
    // An RU is a block in each of the group's 4 planes: 64 pages, so the
    // 128 pages of handle 1 filled two.
    assert_eq!(r.extra["fdp"]["reclaim_unit_bytes"], 64 * 4096);
    assert_eq!(r.extra["fdp"]["handles"][1]["reclaim_units_started"], 2);
}

#[test]
fn the_same_run_twice_gives_the_same_report() {
    let c = config(true);
    let logical = c.validate().unwrap().logical_pages;
    let a = run(&c, hot_cold(logical, logical as usize, true)).0;
    let b = run(&c, hot_cold(logical, logical as usize, true)).0;
    assert_eq!(a.extra["fdp"], b.extra["fdp"]);
    assert_eq!(a.flash.page_programs, b.flash.page_programs);
}

/// The configuration error's field.
fn refused(c: &SsdConfig) -> String {
    c.validate().unwrap_err().to_string()
}

#[test]
fn configurations_fdp_cannot_run_are_refused_with_the_field() {
    // On a zoned namespace, and on another FTL than page mapping.
    let mut c = config(false);
    c.ftl.kind = FtlKind::Zns;
    let e = refused(&c);
    assert!(
        e.contains("ftl.fdp") && e.contains("zoned namespace"),
        "{e}"
    );
    c.ftl.kind = FtlKind::Dftl;
    assert!(refused(&c).contains("ftl.fdp"));
    // More handles than the spare blocks can keep open.
    let mut c = config(true);
    c.ftl.fdp.handles = 8;
    let e = refused(&c);
    assert!(
        e.contains("ftl.fdp_handles") && e.contains("write frontiers"),
        "{e}"
    );
    // Too many or no handles.
    c.ftl.fdp.handles = 129;
    assert!(refused(&c).contains("ftl.fdp_handles"));
    c.ftl.fdp.handles = 0;
    assert!(refused(&c).contains("ftl.fdp_handles"));
    // Groups that do not divide the dies.
    let mut c = config(false);
    c.ftl.fdp.groups = 3;
    assert!(refused(&c).contains("ftl.fdp_groups"));
    c.ftl.fdp.groups = 0;
    assert!(refused(&c).contains("ftl.fdp_groups"));
    // Least-busy allocation cannot keep a group's writes on its dies.
    c.ftl.fdp.groups = 2;
    c.ftl.allocation = ssd_core::config::Allocation::LeastBusy;
    assert!(refused(&c).contains("ftl.fdp_groups"));
    // A reclaim unit larger than its planes.
    let mut c = config(false);
    c.ftl.fdp.ru_blocks = 33;
    assert!(refused(&c).contains("ftl.fdp_ru_blocks"));
    c.ftl.fdp.ru_blocks = 0;
    assert!(refused(&c).contains("ftl.fdp_ru_blocks"));
    // A write-back buffer loses the placement of the pages it evicts.
    let mut c = config(false);
    c.dram.write_buffer = ssd_core::Size::kib(64);
    c.dram.flush = ssd_core::config::FlushPolicy::EvictLru;
    assert!(refused(&c).contains("dram.write_buffer"));
    c.dram.flush = ssd_core::config::FlushPolicy::WriteThrough;
    assert!(c.validate().is_ok());
}

#[test]
fn fdp_fields_without_fdp_are_named_as_unread() {
    let mut c = config(false);
    c.ftl.fdp.enabled = false;
    c.ftl.fdp.handles = 4;
    let notes = c.ftl.unread_fields();
    assert_eq!(notes.len(), 1, "{notes:?}");
    assert!(
        notes[0].starts_with("ftl.fdp_handles = 4 is not read"),
        "{notes:?}"
    );
}
