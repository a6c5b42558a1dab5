//! The block layer between the workload and the elevator, end to end on the
//! real engine: `sched.nr_requests` puts submitters to sleep once the block
//! layer holds that many requests, a submitter's plug batches what it submits
//! at one instant (sorted, merged, at most 16 at a time), and the report's
//! queue-depth and dispatch statistics say what the elevator held.

use ssd_core::observer::NullObserver;
use ssd_core::sched::IoScheduler;
use ssd_core::stats::Report;
use ssd_core::units::SimTime;
use ssd_core::Simulation;
use ssdsim_host::config::{Precondition, SsdConfig};
use ssdsim_host::scheds::build_sched;
use ssdsim_host::workload::{HostRequest, IoOp, Timing, VecSource};

fn device() -> SsdConfig {
    let mut c = SsdConfig::default();
    c.nand.blocks_per_plane = 64;
    c.sim.precondition = Precondition::Fill;
    c
}

fn run(c: &SsdConfig, reqs: Vec<HostRequest>, timing: Timing) -> Report {
    let s = c.validate().unwrap();
    let ftl = ftl::build(&s.config.ftl, &s.shape()).unwrap();
    let sched = build_sched(&c.sched, s.logical_bytes() / 512, c.host.queue_depth).unwrap();
    let mut sim = Simulation::new(s, ftl, VecSource::new(reqs, timing), sched, NullObserver);
    sim.precondition();
    let r = sim.run().unwrap();
    assert!(sim.sched.is_empty());
    r
}

fn req(t: u64, op: IoOp, lba: u64, sectors: u32, stream: u32) -> HostRequest {
    HostRequest {
        arrival: SimTime(t),
        op,
        lba,
        sectors,
        stream,
        tag: 0,
        sync: false,
        placement: ssd_core::workload::Placement::NONE,
    }
}

/// A burst of `n` reads, one nanosecond apart, at places that never merge.
fn burst(n: u64) -> Vec<HostRequest> {
    (0..n).map(|i| req(i, IoOp::Read, i * 64, 8, 0)).collect()
}

/// 300 requests arrive before the first completes. The block layer takes
/// `nr_requests` of them (32 to the device, the rest queued in the
/// elevator); every later submitter sleeps until a completion frees a
/// request. The elevator holds at most nr_requests - 32, and one more for
/// the instant between a completion (which frees a device slot and wakes a
/// sleeper) and the dispatch that refills the slot.
#[test]
fn nr_requests_puts_submitters_to_sleep() {
    for nr in [128u32, 64, 1_000_000] {
        let mut c = device();
        c.sched.kind = "deadline".into();
        c.sched.nr_requests = nr;
        let r = run(&c, burst(300), Timing::OpenLoop);
        assert_eq!(r.host.requests, 300);
        let qd = c.host.queue_depth as u64;
        let taken = (nr as u64).min(300);
        assert_eq!(r.sched.blocked.count, 300 - taken, "nr_requests {nr}");
        let woke = u64::from(taken < 300);
        assert_eq!(
            r.sched.queue_depth.max,
            taken - qd + woke,
            "nr_requests {nr}"
        );
        if taken < 300 {
            // A sleeper's latency counts its sleep.
            assert!(r.sched.blocked.mean_us > 0.0);
            assert!(r.latency_us.all.max >= r.sched.blocked.max_us);
        }
    }
}

/// A closed loop of depth 64 over a device queue of 32: the elevator holds
/// the 32 that do not fit, all the time; at depth 32 it holds nothing.
#[test]
fn the_elevator_holds_what_the_device_cannot_take() {
    for (depth, lo, hi) in [(64u32, 30.0, 32.0), (32, 0.0, 0.05)] {
        let c = device();
        let reqs: Vec<HostRequest> = (0..4000u64)
            .map(|i| req(0, IoOp::Read, (i * 7919 % 4000) * 64, 8, 0))
            .collect();
        let r = run(&c, reqs, Timing::ClosedLoop { depth });
        let m = r.sched.queue_depth.mean;
        assert!(
            (lo..=hi).contains(&m),
            "depth {depth}: mean queue depth {m}"
        );
        assert_eq!(
            r.sched.plugged, 0,
            "a closed loop submits one request at a time"
        );
    }
}

/// Eight contiguous 4 KiB writes submitted by one stream at one instant, in
/// descending order. Plugged, they reach the elevator sorted and leave as
/// one command; unplugged, each goes to the device as it comes (it has free
/// slots), so none merges: plugging is what lets a device with command
/// queueing see merged requests.
#[test]
fn a_plug_batches_a_submitters_burst() {
    let reqs: Vec<HostRequest> = (0..8u64)
        .rev()
        .map(|i| req(1000, IoOp::Write, 4096 + i * 8, 8, 3))
        .collect();
    for (plug, commands) in [(true, 1u64), (false, 8)] {
        let mut c = device();
        c.sched.plug = plug;
        let r = run(&c, reqs.clone(), Timing::OpenLoop);
        assert_eq!(r.host.requests, 8);
        assert_eq!(r.sched.dispatched, commands, "plug {plug}");
        assert_eq!(r.sched.merged, 8 - commands, "plug {plug}");
        assert_eq!(r.sched.plugged, if plug { 8 } else { 0 });
    }
}

/// A plug holds at most 16 requests (BLK_MAX_REQUEST_COUNT): 20 contiguous
/// writes at one instant leave in two flushes; two streams at one instant
/// have plugs of their own and do not merge with each other.
#[test]
fn a_plug_holds_sixteen_requests_per_submitter() {
    let mut c = device();
    c.sched.kind = "noop".into();
    let one: Vec<HostRequest> = (0..20u64)
        .map(|i| req(1000, IoOp::Write, 8192 + i * 8, 8, 0))
        .collect();
    let r = run(&c, one, Timing::OpenLoop);
    assert_eq!(r.sched.plug_flushes, 2);
    assert_eq!(r.sched.dispatched, 2);
    // Streams 1 and 2 write alternate halves of one range at the same instant.
    let two: Vec<HostRequest> = (0..8u64)
        .map(|i| req(1000, IoOp::Write, 8192 + i * 8, 8, 1 + (i % 2) as u32))
        .collect();
    let r = run(&c, two, Timing::OpenLoop);
    assert_eq!(r.sched.plug_flushes, 1);
    assert_eq!(r.sched.plugged, 8);
    assert_eq!(r.host.requests, 8);
}

/// `nr_requests` by queue type when not set: 128 for the single-queue
/// elevators (`BLKDEV_MAX_RQ`, set by `blk_queue_make_request`), twice the
/// device's tag depth up to 256 for the blk-mq schedulers
/// (`blk_mq_init_sched`); what the engine's block layer is given.
#[test]
fn nr_requests_is_the_kernels_for_each_queue_type() {
    let mut c = device();
    for (kind, sata, nvme) in [
        ("noop", 128, 128),
        ("deadline", 128, 128),
        ("cfq", 128, 128),
        ("anticipatory", 128, 128),
        ("pardispatcher", 128, 128),
        ("mq-deadline", 64, 256),
        ("kyber", 64, 256),
        ("bfq", 64, 256),
    ] {
        c.sched.kind = kind.into();
        assert_eq!(c.sched.nr_requests_for(32), sata, "{kind} on NCQ 32");
        assert_eq!(c.sched.nr_requests_for(1024), nvme, "{kind} on 1,024 tags");
        assert_eq!(c.sched.nr_requests_for(1), if sata == 64 { 2 } else { 128 });
        c.host.queue_depth = 32;
        assert_eq!(c.validate().unwrap().block.nr_requests, sata, "{kind}");
    }
    // Set, it wins.
    c.sched.nr_requests = 8;
    assert_eq!(c.sched.nr_requests_for(1024), 8);
    assert_eq!(c.validate().unwrap().block.nr_requests, 8);
}

/// Per-kind depth limits (the elevator's `limit_depth`): mq-deadline with
/// `async_depth` 4 of 16 tags lets writes take a tag only while fewer than
/// 4 are taken, so of 10 writes then 10 reads arriving at once 6 writes
/// sleep and every read gets a tag past them; without it the 16 tags go
/// in arrival order and 4 reads sleep. BFQ's async writes may take half
/// of its 64 tags (`bfq_limit_depth`).
#[test]
fn a_scheduler_limits_the_tags_a_kind_may_take() {
    let mixed: Vec<HostRequest> = (0..20u64)
        .map(|i| {
            let op = if i < 10 { IoOp::Write } else { IoOp::Read };
            req(i, op, i * 64, 8, 0)
        })
        .collect();
    for (async_depth, blocked, reads_slept) in [(4, 6, false), (0, 4, true)] {
        let mut c = device();
        c.sched.kind = "mq-deadline".into();
        c.sched.nr_requests = 16;
        c.sched.async_depth = async_depth;
        c.sched.plug = false;
        let r = run(&c, mixed.clone(), Timing::OpenLoop);
        assert_eq!(r.host.requests, 20);
        assert_eq!(r.sched.blocked.count, blocked, "async_depth {async_depth}");
        // A sleeper's wait is in its latency: reads that slept wait for a
        // completion, far longer than a read served at once.
        let read_max = r.latency_us.read.max;
        assert_eq!(
            read_max >= r.sched.blocked.max_us,
            reads_slept,
            "{read_max}"
        );
    }
    let writes: Vec<HostRequest> = (0..100u64)
        .map(|i| req(i, IoOp::Write, i * 64, 8, 9))
        .collect();
    for (kind, blocked) in [("bfq", 100 - 32), ("mq-deadline", 100 - 64)] {
        let mut c = device();
        c.sched.kind = kind.into();
        c.sched.plug = false;
        let r = run(&c, writes.clone(), Timing::OpenLoop);
        assert_eq!(r.sched.blocked.count, blocked, "{kind}");
    }
}
