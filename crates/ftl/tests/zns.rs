//! A zoned namespace run by the engine: zone appends outstanding together
//! land at distinct addresses, a refused write completes failed and moves
//! no data, and a reset costs its erases' time.

use ssd_core::ftl::{Ftl, ZoneState};
use ssd_core::observer::NullObserver;
use ssd_core::sched::Noop;
use ssd_core::{Lpn, SimTime, Simulation};
use ssdsim_host::config::SsdConfig;
use ssdsim_host::workload::{HostRequest, IoOp, Timing, VecSource};
use std::collections::HashSet;

/// 2 channels x 2 ways x 1 die x 2 planes (8 planes), 16 blocks of 16
/// pages; zones of 4 planes x 1 block: 64 pages, 32 zones.
fn config() -> SsdConfig {
    let mut c = SsdConfig::default();
    c.layout.channels = 2;
    c.layout.ways = 2;
    c.nand.dies_per_chip = 1;
    c.nand.planes_per_die = 2;
    c.nand.blocks_per_plane = 16;
    c.nand.pages_per_block = 16;
    c.ftl.kind = "zns".parse().unwrap();
    c.ftl.zns.zone_planes = 4;
    c
}

const ZONE: u64 = 64;
const SPP: u64 = 8; // sectors a 4 KiB page

fn req(op: IoOp, page: u64, pages: u64, tag: u32) -> HostRequest {
    HostRequest {
        arrival: SimTime::ZERO,
        op,
        lba: page * SPP,
        sectors: (pages * SPP) as u32,
        stream: 0,
        tag,
        sync: false,
        placement: ssd_core::workload::Placement::NONE,
    }
}

fn run(
    reqs: Vec<HostRequest>,
    depth: u32,
) -> (
    ssd_core::stats::Report,
    Simulation<ftl::AnyFtl, VecSource, Noop, NullObserver>,
) {
    let s = config().validate().unwrap();
    let f = ftl::build(&s.config.ftl, &s.shape()).unwrap();
    let src = VecSource::new(reqs, Timing::ClosedLoop { depth });
    let mut sim = Simulation::new(s, f, src, Noop::new(1024, true), NullObserver);
    let r = sim.run().unwrap();
    sim.ftl.check_invariants().unwrap();
    (r, sim)
}

#[test]
fn zone_appends_outstanding_together_get_distinct_addresses() {
    // 32 one-page appends to zone 0 and 16 two-page appends to zone 1, all
    // queued at once, 32 outstanding at a time.
    let mut reqs = Vec::new();
    for i in 0..32 {
        reqs.push(req(IoOp::ZoneAppend, 0, 1, i));
        if i < 16 {
            reqs.push(req(IoOp::ZoneAppend, ZONE, 2, 100 + i));
        }
    }
    let (r, sim) = run(reqs, 32);
    assert_eq!(r.host.writes, 48);
    assert_eq!(r.host.bytes_written, 64 * 4096);
    assert_eq!(r.host.failed, 0);
    let zns = &r.extra["zns"];
    assert_eq!(zns["append_commands"], 48);
    assert_eq!(zns["pages_written"], 64);
    // Every page of each zone's written range holds data, each on its own
    // physical page: no two appends were given the same address.
    let mut ppns = HashSet::new();
    for zone in 0..2 {
        let (state, wp) = sim.ftl_zone(zone);
        assert_eq!((state, wp), (ZoneState::ImplicitOpen, 32));
        for k in 0..wp {
            let p = sim
                .ftl
                .lookup(Lpn(zone as u64 * ZONE + k))
                .expect("written");
            assert!(ppns.insert(p), "page {k} of zone {zone} shares {p:?}");
        }
        assert_eq!(sim.ftl.lookup(Lpn(zone as u64 * ZONE + wp)), None);
    }
}

#[test]
fn a_refused_write_completes_failed_and_moves_no_data() {
    let reqs = vec![
        req(IoOp::Write, 0, 4, 0),
        // Not at the write pointer (4): Zone Invalid Write.
        req(IoOp::Write, 8, 4, 1),
        req(IoOp::Write, 4, 4, 2),
        // A discard: Invalid Command Opcode.
        req(IoOp::Trim, 0, 4, 3),
    ];
    let (r, _) = run(reqs, 1);
    assert_eq!(r.host.requests, 4);
    assert_eq!(r.host.writes, 3);
    assert_eq!(r.host.failed, 2);
    assert_eq!(
        r.host.bytes_written,
        8 * 4096,
        "the refused write's bytes moved nowhere"
    );
    assert_eq!(r.host.bytes_trimmed, 0);
    assert_eq!(r.flash.page_programs, 8);
    assert_eq!(r.flash.waf, Some(1.0));
    let e = &r.extra["zns"]["errors"];
    assert_eq!(e["invalid_write"], 1);
    assert_eq!(e["invalid_opcode"], 1);
}

#[test]
fn a_reset_erases_the_written_blocks_and_takes_their_time() {
    let t_bers = config().nand.t_bers.0;
    let reqs = vec![
        req(IoOp::Write, 0, 8, 0),
        req(IoOp::ZoneReset, 0, 0, 1),
        req(IoOp::Write, 0, 8, 2),
        req(IoOp::ZoneFinish, 0, 0, 3),
        req(IoOp::ZoneOpen, ZONE, 0, 4),
        req(IoOp::ZoneClose, ZONE, 0, 5),
    ];
    let (r, sim) = run(reqs, 1);
    assert_eq!(r.host.zone_mgmt, 4);
    assert_eq!(r.host.failed, 0);
    // 8 pages over 4 planes: one block in each.
    assert_eq!(r.flash.block_erases, 4);
    assert_eq!(r.flash.by_purpose["erase"]["host"], 4);
    assert_eq!(r.extra["zns"]["resets"], 1);
    assert_eq!(r.extra["zns"]["finish_unwritten_pages"], ZONE - 8);
    // The reset waited for its erases (four, one on each of the zone's four
    // dies, in parallel): at least one erase time.
    assert!(
        r.latency_us.all.max * 1e3 >= t_bers as f64,
        "max latency {} us, tBERS {} ns",
        r.latency_us.all.max,
        t_bers
    );
    assert_eq!(sim.ftl_zone(0).0, ZoneState::Full);
    assert_eq!(
        sim.ftl_zone(1).0,
        ZoneState::Empty,
        "closed unwritten: empty"
    );
}

/// The zone's state and write pointer through the FTL's zone report.
trait ZoneOf {
    fn ftl_zone(&self, zone: usize) -> (ZoneState, u64);
}
impl ZoneOf for Simulation<ftl::AnyFtl, VecSource, Noop, NullObserver> {
    fn ftl_zone(&self, zone: usize) -> (ZoneState, u64) {
        let d = self.ftl.report_zones()[zone];
        (d.state, d.wp - d.start)
    }
}
