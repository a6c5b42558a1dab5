//! Host I/O schedulers, end to end and against a model device.
//!
//! * every scheduler, on the real engine with the page-mapping FTL: every host
//!   request (merged or not, flushes and trims included) completes exactly once;
//! * the schedulers that promise deadlines (deadline, mq-deadline, anticipatory,
//!   pardispatcher), on a model device: once a request is the oldest of its FIFO
//!   and expired, it is dispatched within the batches the algorithm allows.
//!
//! Case counts are moderate by default; set PROPTEST_CASES for a deep run.

use proptest::prelude::*;
use ssd_core::observer::Observer;
use ssd_core::sched::{IoScheduler, SchedReq};
use ssd_core::units::{Dur, SimTime, Size};
use ssd_core::Simulation;
use ssdsim_host::config::{Precondition, SchedConfig, SsdConfig};
use ssdsim_host::scheds::{build_sched, SCHED_NAMES};
use ssdsim_host::workload::{HostRequest, IoOp, Timing, VecSource};
use std::collections::{BTreeMap, BTreeSet};

fn cases(default: u32) -> ProptestConfig {
    let n = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default);
    ProptestConfig::with_cases(n)
}

/// Counts completed host requests by (arrival, op, bytes): requests of one
/// instant (a burst) share an arrival, so a request is known by all three,
/// and the counts must equal what was submitted.
type Key = (u64, u8, u64);
#[derive(Default)]
struct Done {
    seen: BTreeMap<Key, u32>,
}
impl Observer for Done {
    fn request_done(&mut self, op: IoOp, bytes: u64, arrival: SimTime, _done: SimTime) {
        *self.seen.entry((arrival.0, op as u8, bytes)).or_insert(0) += 1;
    }
}

#[derive(Clone, Debug)]
struct Spec {
    op: u8,
    lba: u64,
    sectors: u32,
    gap_ns: u64,
    stream: u32,
}

fn spec() -> impl Strategy<Value = Spec> {
    (0u8..20, 0u64..512, 1u32..33, 1u64..400_000, 0u32..5).prop_map(
        |(op, lba, sectors, gap_ns, stream)| Spec {
            op,
            // 8-sector grid in a 4096-sector window (plus some unaligned): many
            // contiguous neighbours, so merges happen.
            lba: lba * 8 + matches!(op % 3, 0) as u64 * 3,
            sectors,
            gap_ns,
            stream,
        },
    )
}

fn device() -> SsdConfig {
    let mut c = SsdConfig::default();
    c.nand.blocks_per_plane = 32;
    c.ftl.op = 0.2;
    c.sim.precondition = Precondition::Fill;
    c
}

fn sched_cfg(kind: &str) -> SchedConfig {
    SchedConfig {
        kind: kind.into(),
        // Small enough to make expiry, slices and subqueues matter in short runs.
        read_expire: Dur::from_ms(2),
        write_expire: Dur::from_ms(8),
        slice_sync: Dur::from_ms(3),
        slice_async: Dur::from_ms(1),
        subregion: Size::kib(512),
        bfq_max_budget: 256,
        bfq_timeout: Dur::from_ms(4),
        ..Default::default()
    }
}

proptest! {
    #![proptest_config(cases(12))]

    #[test]
    fn every_request_completes_exactly_once(
        specs in prop::collection::vec(spec(), 1..400),
        idle in any::<bool>(),
        nr_requests in prop_oneof![Just(4u32), Just(16), Just(128)],
        plug in any::<bool>(),
        burst in any::<bool>(),
    ) {
        let mut t = 0u64;
        let reqs: Vec<HostRequest> = specs
            .iter()
            .map(|s| {
                // Bursts: requests of one instant (plugged together), kept
                // apart by stream and place only.
                if !burst || s.gap_ns % 4 == 0 {
                    t += s.gap_ns;
                }
                let op = match s.op {
                    0..=9 => IoOp::Read,
                    10..=17 => IoOp::Write,
                    18 => IoOp::Trim,
                    _ => IoOp::Flush,
                };
                HostRequest {
                    arrival: SimTime(t),
                    op,
                    lba: if op == IoOp::Flush { 0 } else { s.lba },
                    sectors: if op == IoOp::Flush { 0 } else { s.sectors },
                    stream: s.stream,
                    tag: 0,
                    sync: false,
                    placement: ssd_core::workload::Placement::NONE,
                }
            })
            .collect();
        let mut want: BTreeMap<Key, u32> = BTreeMap::new();
        for r in &reqs {
            *want.entry((r.arrival.0, r.op as u8, r.bytes())).or_insert(0) += 1;
        }
        for name in SCHED_NAMES {
            let mut c = device();
            c.sched = sched_cfg(name);
            c.sched.nr_requests = nr_requests;
            c.sched.plug = plug;
            if idle {
                c.sched.slice_idle = Dur::from_ms(1);
                c.sched.antic_expire = Dur::from_ms(1);
            }
            let s = c.validate().unwrap();
            let ftl = ftl::build(&s.config.ftl, &s.shape()).unwrap();
            let sched = build_sched(&c.sched, s.logical_bytes() / 512, c.host.queue_depth).unwrap();
            let src = VecSource::new(reqs.clone(), Timing::OpenLoop);
            let mut sim = Simulation::new(s, ftl, src, sched, Done::default());
            sim.precondition();
            let r = sim.run().unwrap();
            prop_assert_eq!(&sim.obs.seen, &want, "{}", name);
            prop_assert_eq!(r.host.requests, reqs.len() as u64, "{}", name);
            prop_assert!(sim.sched.is_empty(), "{name}: requests left queued");
            prop_assert_eq!(r.sched.kind.as_str(), *name);
        }
    }
}

// ------------------------------------------------------------ model device

/// A device with `qd` slots and a fixed service time: drives a scheduler through
/// arrivals, completions and wake-ups, and checks the deadline promise.
struct Model {
    /// Dispatch index at which each queued request was first seen as its FIFO's
    /// expired head.
    marked: BTreeMap<u32, u64>,
    /// The model's FIFOs: (deadline, seq, id) per FIFO key.
    fifos: BTreeMap<u64, BTreeSet<(SimTime, u64, u32)>>,
    fifo_of: BTreeMap<u32, (u64, (SimTime, u64, u32))>,
    worst: u64,
}

#[derive(Clone, Copy)]
struct Bounds {
    read: u64,
    write: u64,
    /// One global FIFO (ParDispatcher) instead of one per direction.
    global: bool,
    /// The FIFOs are sync and async, not read and write (anticipatory);
    /// `read` bounds the sync one.
    by_sync: bool,
}

fn run_model<S: IoScheduler>(
    s: &mut S,
    arrivals: &[SchedReq],
    expire: [Dur; 2],
    qd: usize,
    svc: Dur,
    b: Bounds,
) -> Result<u64, TestCaseError> {
    let mut m = Model {
        marked: BTreeMap::new(),
        fifos: BTreeMap::new(),
        fifo_of: BTreeMap::new(),
        worst: 0,
    };
    let mut inflight: Vec<(SimTime, SchedReq)> = Vec::new();
    let mut i = 0;
    let mut now = SimTime(0);
    let mut dispatches = 0u64;
    let mut merged = Vec::new();
    let mut seq = 0u64;
    let mut done = 0usize;
    let mut riders: BTreeMap<u32, u32> = BTreeMap::new();
    for _ in 0..1_000_000 {
        // Completions, then arrivals at `now`.
        inflight.sort_by_key(|(t, r)| (*t, r.id));
        while let Some(&(t, r)) = inflight.first() {
            if t > now {
                break;
            }
            inflight.remove(0);
            s.completed(&r, now);
            done += 1 + riders.remove(&r.id).unwrap_or(0) as usize;
        }
        while i < arrivals.len() && arrivals[i].arrival <= now {
            let r = arrivals[i];
            i += 1;
            merged.clear();
            s.add(r, now, &mut merged);
            if let Some(&(kept, _)) = merged.first() {
                *riders.entry(kept).or_insert(0) += 1;
            } else {
                seq += 1;
                let d = if b.by_sync {
                    !r.is_sync() as usize
                } else {
                    (r.op != IoOp::Read) as usize
                };
                let key = if b.global { 0 } else { d as u64 };
                let e = (now + expire[d], seq, r.id);
                m.fifos.entry(key).or_default().insert(e);
                m.fifo_of.insert(r.id, (key, e));
            }
        }
        while inflight.len() < qd {
            for set in m.fifos.values() {
                if let Some(&(d, _, id)) = set.first() {
                    if d <= now {
                        m.marked.entry(id).or_insert(dispatches);
                    }
                }
            }
            let Some(r) = s.dispatch(now) else { break };
            if let Some(mark) = m.marked.remove(&r.id) {
                let waited = dispatches - mark;
                let first = if b.by_sync {
                    r.is_sync()
                } else {
                    r.op == IoOp::Read
                };
                let bound = if first { b.read } else { b.write };
                prop_assert!(
                    waited <= bound,
                    "request {} ({:?}) went out {} dispatches after it was the expired head (bound {})",
                    r.id, r.op, waited, bound
                );
                m.worst = m.worst.max(waited);
            }
            let (key, e) = m
                .fifo_of
                .remove(&r.id)
                .expect("dispatched a queued request");
            m.fifos.get_mut(&key).unwrap().remove(&e);
            dispatches += 1;
            inflight.push((now + svc, r));
        }
        // Next event.
        let next_arr = arrivals.get(i).map(|r| r.arrival);
        let next_done = inflight.iter().map(|(t, _)| *t).min();
        let wake = if inflight.len() < qd && !s.is_empty() {
            s.wake_at().map(|t| t.max(SimTime(now.0 + 1)))
        } else {
            None
        };
        let Some(t) = [next_arr, next_done, wake].into_iter().flatten().min() else {
            break;
        };
        now = t;
    }
    prop_assert_eq!(
        done,
        arrivals.len(),
        "every request dispatched and completed"
    );
    prop_assert!(s.is_empty());
    Ok(m.worst)
}

fn arrivals(specs: &[Spec]) -> Vec<SchedReq> {
    let mut t = 0u64;
    specs
        .iter()
        .enumerate()
        .map(|(i, s)| {
            // Bursts: most gaps tiny, some long.
            t += if matches!(s.gap_ns % 7, 0) {
                s.gap_ns * 10
            } else {
                s.gap_ns / 50
            };
            SchedReq {
                id: i as u32,
                op: if s.op < 12 { IoOp::Read } else { IoOp::Write },
                lba: s.lba * 4,
                sectors: s.sectors,
                arrival: SimTime(t),
                stream: s.stream,
                sync: s.op % 3 == 0,
                placement: ssd_core::workload::Placement::NONE,
            }
        })
        .collect()
}

proptest! {
    #![proptest_config(cases(64))]

    #[test]
    fn expired_heads_go_out_within_the_promised_batches(
        specs in prop::collection::vec(spec(), 1..600),
        fifo_batch in 1u32..17,
        // writes_starved = 0 means writes always win while any are queued, so
        // reads have no bound then (as in Linux); the promise needs >= 1.
        writes_starved in 1u32..4,
        read_batch in 1u32..17,
        write_batch in 1u32..9,
        qd in 1usize..5,
        svc_us in 20u64..600,
    ) {
        let arr = arrivals(&specs);
        let svc = Dur::from_us(svc_us);
        for name in ["deadline", "mq-deadline", "anticipatory", "pardispatcher"] {
            let mut cfg = sched_cfg(name);
            cfg.fifo_batch = fifo_batch;
            cfg.writes_starved = writes_starved;
            cfg.read_batch = read_batch;
            cfg.write_batch = write_batch;
            cfg.subregion = Size::kib(256);
            let expire = [cfg.read_expire, cfg.write_expire];
            let mut s = build_sched(&cfg, 1 << 16, 32).unwrap();
            let (fb, ws) = (fifo_batch as u64, writes_starved as u64);
            let b = if name == "pardispatcher" {
                // The running batch ends, then the next turn starts with the
                // oldest expired request.
                let m = read_batch.max(write_batch) as u64;
                Bounds { read: m, write: m, global: true, by_sync: false }
            } else {
                // Reads: the running batch, then at most one forced write batch.
                // Writes: the running batch, then at most writes_starved read batches.
                Bounds { read: 2 * fb, write: (1 + ws) * fb, global: false, by_sync: name == "anticipatory" }
            };
            run_model(&mut s, &arr, expire, qd, svc, b)?;
        }
    }
}
