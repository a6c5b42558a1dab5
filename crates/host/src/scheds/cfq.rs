//! CFQ, complete fairness queueing (Linux block/cfq-iosched.c, before blk-mq).
//!
//! Each process (request `stream`) has a sync queue for its reads; writes (and
//! trims) of all processes share one async queue, as CFQ shares async queues per
//! I/O priority. Busy queues are served round robin; the queue in service owns
//! the device for its time slice (`slice_sync` 100 ms, `slice_async` 40 ms) or
//! until it runs empty. Inside a queue requests go out in ascending sector order
//! from where the last one ended (wrapping to the lowest), except that once per
//! slice an expired FIFO head is served first (CFQ's `cfq_fifo_expire`: 125 ms
//! sync, 250 ms async).
//!
//! Idling: with `slice_idle` > 0, an emptied sync queue keeps the device until
//! its in-flight requests complete and then for up to `slice_idle` more, waiting
//! for the process's next request. Linux's sysfs default is 8 ms, but CFQ does not
//! arm the idle timer on non-rotational devices with command queueing
//! (`cfq_arm_slice_timer`), which every simulated SSD is, so the default here is 0.
//!
//! Not modelled: I/O priority classes and levels (all best effort, one level),
//! cgroups, `cfq_quantum` (in-flight limit per queue), back-seek penalties.

use super::SchedConfig;
use super::{dir_of, max_sectors, Added, DirQueue, Slots};
use crate::workload::IoOp;
use ssd_core::sched::{IoScheduler, SchedReq};
use ssd_core::units::{Dur, SimTime};
use std::collections::{BTreeMap, VecDeque};

/// cfq_fifo_expire: async 250 ms, sync 125 ms (HZ/4, HZ/8).
const FIFO_EXPIRE_SYNC: Dur = Dur::from_ms(125);
const FIFO_EXPIRE_ASYNC: Dur = Dur::from_ms(250);
/// The async queue shared by every process.
pub(super) const ASYNC: u64 = u64::MAX;

/// The queue of a request under CFQ and BFQ: reads (synchronous) queue per
/// process (`stream`), writes (asynchronous) share [`ASYNC`].
pub(super) fn key_of(r: &SchedReq) -> u64 {
    match dir_of(r.op) {
        0 => r.stream as u64,
        _ => ASYNC,
    }
}

/// A request's FIFO expiry under CFQ and BFQ (`cfq_fifo_expire`).
pub(super) fn fifo_deadline(key: u64, now: SimTime) -> SimTime {
    now + if key == ASYNC {
        FIFO_EXPIRE_ASYNC
    } else {
        FIFO_EXPIRE_SYNC
    }
}

#[derive(Debug, Default)]
struct CfqQueue {
    q: DirQueue,
    pos: u64,
    inflight: u32,
    on_rr: bool,
}

#[derive(Clone, Copy, Debug)]
struct Active {
    key: u64,
    slice_end: SimTime,
    fifo_checked: bool,
    idle_until: Option<SimTime>,
}

/// The CFQ scheduler.
#[derive(Debug)]
pub struct Cfq {
    slots: Slots,
    queues: BTreeMap<u64, CfqQueue>,
    rr: VecDeque<u64>,
    active: Option<Active>,
    pass: VecDeque<SchedReq>,
    slice: [Dur; 2],
    slice_idle: Dur,
    max: u32,
    merge: bool,
}

impl Cfq {
    /// A CFQ scheduler with the tunables of `cfg` (`sched.*`); `cfg` must be valid.
    pub fn new(cfg: &SchedConfig) -> Cfq {
        Cfq {
            slots: Slots::default(),
            queues: BTreeMap::new(),
            rr: VecDeque::new(),
            active: None,
            pass: VecDeque::new(),
            slice: [cfg.slice_sync, cfg.slice_async],
            slice_idle: cfg.slice_idle,
            max: max_sectors(cfg),
            merge: cfg.merge,
        }
    }

    fn expire_active(&mut self) {
        if let Some(a) = self.active.take() {
            let q = self.queues.get_mut(&a.key).expect("active queue exists");
            if !q.q.is_empty() {
                q.on_rr = true;
                self.rr.push_back(a.key);
            }
        }
    }
}

impl IoScheduler for Cfq {
    fn name(&self) -> &'static str {
        "cfq"
    }
    fn add(&mut self, r: SchedReq, now: SimTime, merged: &mut Vec<(u32, u32)>) {
        if r.op == IoOp::Flush {
            self.pass.push_back(r);
            return;
        }
        let key = key_of(&r);
        let deadline = fifo_deadline(key, now);
        let q = self.queues.entry(key).or_default();
        let merge = self.merge.then_some(self.max);
        if let Added::Merged(_) = q.q.add(&mut self.slots, r, deadline, key, merge, merged) {
            return;
        }
        let is_active = self.active.is_some_and(|a| a.key == key);
        if !q.on_rr && !is_active {
            q.on_rr = true;
            self.rr.push_back(key);
        }
    }

    fn dispatch(&mut self, now: SimTime) -> Option<SchedReq> {
        if let Some(r) = self.pass.pop_front() {
            return Some(r);
        }
        loop {
            let mut a = match self.active {
                Some(a) => a,
                None => {
                    let key = self.rr.pop_front()?;
                    let q = self.queues.get_mut(&key).expect("queued key exists");
                    q.on_rr = false;
                    let slice = self.slice[(key == ASYNC) as usize];
                    let a = Active {
                        key,
                        slice_end: now + slice,
                        fifo_checked: false,
                        idle_until: None,
                    };
                    self.active = Some(a);
                    a
                }
            };
            if now >= a.slice_end {
                self.expire_active();
                continue;
            }
            let q = self.queues.get_mut(&a.key).expect("active queue exists");
            if !q.q.is_empty() {
                let id = match q.q.expired(now) {
                    Some(e) if !a.fifo_checked => {
                        a.fifo_checked = true;
                        e
                    }
                    _ => q.q.clook(q.pos).expect("non-empty"),
                };
                let s = self.slots.remove(id);
                q.q.remove(&s);
                q.pos = s.r.end();
                q.inflight += 1;
                a.idle_until = None;
                self.active = Some(a);
                return Some(s.r);
            }
            // Empty active queue: idle on sync queues if configured, else move on.
            if a.key != ASYNC && self.slice_idle.0 > 0 {
                if q.inflight > 0 {
                    return None; // wait for its requests to complete first
                }
                let until = *a.idle_until.get_or_insert(now + self.slice_idle);
                self.active = Some(a);
                if now < until {
                    return None;
                }
            }
            self.expire_active();
            if self.rr.is_empty() {
                return None;
            }
        }
    }

    fn completed(&mut self, r: &SchedReq, _now: SimTime) {
        if r.op == IoOp::Flush {
            return;
        }
        if let Some(q) = self.queues.get_mut(&key_of(r)) {
            q.inflight = q.inflight.saturating_sub(1);
        }
    }

    fn wake_at(&self) -> Option<SimTime> {
        let a = self.active?;
        Some(a.idle_until.map_or(a.slice_end, |t| t.min(a.slice_end)))
    }

    fn len(&self) -> usize {
        self.slots.len() + self.pass.len()
    }
}

#[cfg(test)]
mod tests {
    use super::super::testutil::*;
    use super::*;

    #[test]
    fn round_robin_slices_and_sorted_inside_a_queue() {
        let cfg = SchedConfig::default();
        let mut s = Cfq::new(&cfg);
        let mut m = vec![];
        // Process 1: reads at 300, 100, 200; process 2: reads at 50, 60.
        s.add(req(1, IoOp::Read, 300, 8, 0, 1), SimTime(0), &mut m);
        s.add(req(2, IoOp::Read, 50, 8, 0, 2), SimTime(0), &mut m);
        s.add(req(3, IoOp::Read, 100, 8, 0, 1), SimTime(0), &mut m);
        s.add(req(4, IoOp::Read, 200, 8, 0, 1), SimTime(0), &mut m);
        s.add(req(5, IoOp::Read, 70, 8, 0, 2), SimTime(0), &mut m);
        // Process 1's queue first (it became busy first), whole queue in sector order.
        assert_eq!(drain(&mut s, SimTime(0)), vec![3, 4, 1, 2, 5]);
    }

    #[test]
    fn slice_expiry_moves_to_the_next_queue() {
        let cfg = SchedConfig::default();
        let mut s = Cfq::new(&cfg);
        let mut m = vec![];
        for i in 0..3u32 {
            s.add(
                req(i, IoOp::Read, 16 * i as u64, 8, 0, 1),
                SimTime(0),
                &mut m,
            );
        }
        s.add(req(10, IoOp::Write, 5000, 8, 0, 1), SimTime(0), &mut m);
        assert_eq!(s.dispatch(SimTime(0)).unwrap().id, 0);
        // 100 ms later the sync slice is over: the async queue gets its turn.
        assert_eq!(s.dispatch(SimTime(100_000_000)).unwrap().id, 10);
        assert_eq!(drain(&mut s, SimTime(100_000_001)), vec![1, 2]);
    }

    #[test]
    fn idling_waits_for_the_same_process() {
        let cfg = SchedConfig {
            slice_idle: Dur::from_ms(8),
            ..Default::default()
        };
        let mut s = Cfq::new(&cfg);
        let mut m = vec![];
        s.add(req(1, IoOp::Read, 0, 8, 0, 1), SimTime(0), &mut m);
        s.add(req(2, IoOp::Read, 800, 8, 0, 2), SimTime(0), &mut m);
        let r1 = s.dispatch(SimTime(0)).unwrap();
        assert!(
            s.dispatch(SimTime(0)).is_none(),
            "waits for process 1's read"
        );
        s.completed(&r1, SimTime(50_000));
        assert!(s.dispatch(SimTime(50_000)).is_none(), "idles");
        assert_eq!(s.wake_at(), Some(SimTime(8_050_000)));
        assert_eq!(s.dispatch(SimTime(8_050_000)).unwrap().id, 2);
    }
}
