//! CFQ, complete fairness queueing (Linux block/cfq-iosched.c, as of 2.6.35,
//! the kernel of the studies that ran it; CFQ left Linux in 5.0).
//!
//! **Queues.** A request is synchronous when it is a read or marked `REQ_SYNC`
//! (`cfq_bio_sync`, `rq_is_sync`): O_DIRECT writes, fsync's and O_SYNC's
//! writeback, the journal writes a kernel marks. Each process (request
//! `stream`) has one sync queue for its reads and sync writes; async writes
//! (and trims) of every process share one async queue, as CFQ shares async
//! queues per I/O priority (`cfq_get_queue`). A request merges only with one
//! of its own queue, so a sync request never joins an async one
//! (`cfq_allow_merge`).
//!
//! **Service.** Busy queues are served round robin in the order they became
//! busy; the queue in service owns the device for its slice or until it runs
//! empty (`cfq_select_queue`). A slice starts when the queue's first request
//! completes (`cfq_completed_request` -> `cfq_set_prio_slice`): `slice_sync`
//! (100 ms) or `slice_async` (40 ms), and, with `cfq_latency` on (its
//! default), scaled down so that every busy queue gets its turn within the
//! 300 ms target latency, to no less than `2 x slice_idle` (scaled for async).
//! An async queue also ends its turn after `cfq_prio_to_maxrq` (16) requests
//! when other queues are busy (`cfq_dispatch_requests`). Inside a queue
//! requests go out in ascending sector order from where the last one ended
//! (wrapping to the lowest), except that once per slice an expired FIFO head
//! is served first (`cfq_check_fifo`; `cfq_fifo_expire`: 125 ms sync, 250 ms
//! async).
//!
//! **Dispatch limits** (`cfq_may_dispatch`), applied before every request:
//! - sync before async: the async queue dispatches nothing while a sync
//!   request is in the device, and a sync queue that should idle
//!   (`cfq_should_idle`) waits for the async requests in the device to drain;
//! - the quantum: a queue with `quantum / 2` (4) requests in the device stops
//!   when others are busy and its slice will be used soon
//!   (`cfq_slice_used_soon`), and stops at `quantum` (8) in any case unless it
//!   is the only busy queue;
//! - the async ramp: the async queue may have at most one request in the
//!   device per `slice_sync` elapsed since a sync request last completed
//!   later than its FIFO expiry (`last_delayed_sync`), so async writes ramp up
//!   only while sync requests are served on time.
//!
//! **Idling.** `cfq_should_idle` holds for a sync queue that is the last one
//! of its kind busy. Such a queue, once empty, keeps the device while its own
//! requests are in it (`cfq_select_queue`). The idle timer proper
//! (`cfq_arm_slice_timer`, waiting up to `slice_idle` for the process's next
//! request) is never armed on a non-rotational device with command queueing,
//! which a simulated drive is when its `host.queue_depth` reaches
//! `CFQ_HW_QUEUE_MIN` (5: `cfq_update_hw_tag`); with a shallower queue it is.
//!
//! Not modelled: I/O priority classes and levels (all best effort, level 4),
//! cgroups, the three workload service trees of 2.6.33+ (sync-idle,
//! sync-noidle, async; here one round robin, so `cfq_should_idle`'s "last of
//! its kind" counts every busy sync queue), the averaged count of busy queues
//! behind the slice scaling (the current count is used), close-cooperator
//! queue merging, back-seek penalties, and the think-time and seekiness
//! history that turns a queue's idle window off.

use super::SchedConfig;
use super::{max_sectors, Added, DirQueue, Slots};
use crate::workload::IoOp;
use ssd_core::sched::{IoScheduler, SchedReq};
use ssd_core::units::{Dur, SimTime};
use std::collections::{BTreeMap, VecDeque};

/// cfq_fifo_expire: async 250 ms, sync 125 ms (HZ/4, HZ/8).
const FIFO_EXPIRE_SYNC: Dur = Dur::from_ms(125);
const FIFO_EXPIRE_ASYNC: Dur = Dur::from_ms(250);
/// `cfq_quantum`: requests a queue may have in the device (8 from 2.6.33).
const QUANTUM: u32 = 8;
/// `cfq_target_latency`: every busy queue served within it (300 ms).
const TARGET_LATENCY: Dur = Dur::from_ms(300);
/// `cfq_prio_to_maxrq` at the default priority (4): `2 * (base + base * (8
/// - 1 - 4))` with `cfq_slice_async_rq` 2.
const ASYNC_MAXRQ: u32 = 16;
/// `CFQ_HW_QUEUE_MIN`: a device holding at least this many requests has
/// command queueing (`cfq_update_hw_tag`).
const HW_QUEUE_MIN: u32 = 5;
/// The async queue shared by every process.
pub(super) const ASYNC: u64 = u64::MAX;

/// The queue of a request under CFQ and BFQ: synchronous requests (reads
/// and `REQ_SYNC` writes) queue per process (`stream`), the rest share
/// [`ASYNC`] (`cfq_get_queue` / `bfq_get_queue` with `is_sync`).
pub(super) fn key_of(r: &SchedReq) -> u64 {
    if r.is_sync() {
        r.stream as u64
    } else {
        ASYNC
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
    /// Requests of the queue in the device (`cfqq->dispatched`).
    dispatched: u32,
    on_rr: bool,
}

#[derive(Clone, Copy, Debug)]
struct Active {
    key: u64,
    /// None until the slice's first request completes (`slice_new`).
    slice_end: Option<SimTime>,
    /// Requests dispatched in this slice (`slice_dispatch`).
    slice_dispatch: u32,
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
    /// The idle timer may be armed: the device is rotational or has no
    /// command queueing (never the first here; see the module docs).
    arm_idle: bool,
    /// Requests in the device: [async, sync] (`rq_in_flight`).
    in_flight: [u32; 2],
    /// When a sync request last completed after its FIFO expiry (None:
    /// never; `cfq_init_queue` starts it a second before the start).
    last_delayed_sync: Option<SimTime>,
    max: u32,
    merge: bool,
}

impl Cfq {
    /// A CFQ scheduler with the tunables of `cfg` (`sched.*`) for a device
    /// holding `device_depth` requests; `cfg` must be valid.
    pub fn new(cfg: &SchedConfig, device_depth: u32) -> Cfq {
        Cfq {
            slots: Slots::default(),
            queues: BTreeMap::new(),
            rr: VecDeque::new(),
            active: None,
            pass: VecDeque::new(),
            slice: [cfg.slice_sync, cfg.slice_async],
            slice_idle: cfg.slice_idle,
            arm_idle: device_depth < HW_QUEUE_MIN,
            in_flight: [0; 2],
            last_delayed_sync: None,
            max: max_sectors(cfg),
            merge: cfg.merge,
        }
    }

    /// Queues with requests waiting (`busy_queues`), and of them the sync ones.
    fn busy(&self) -> (u32, u32) {
        let mut all = 0;
        let mut sync = 0;
        for (&k, q) in &self.queues {
            if !q.q.is_empty() || self.active.is_some_and(|a| a.key == k) {
                all += 1;
                sync += (k != ASYNC) as u32;
            }
        }
        (all, sync)
    }

    /// `cfq_should_idle` for queue `key`: a sync queue whose idle window
    /// counts (every sync queue's starts on, and this model keeps it on)
    /// unless the device is non-rotational with queueing, else the last
    /// busy one of its kind.
    fn should_idle(&self, key: u64) -> bool {
        self.should_idle_with(key, self.busy().1)
    }

    /// [`should_idle`](Self::should_idle) with the busy sync queues counted.
    fn should_idle_with(&self, key: u64, busy_sync: u32) -> bool {
        key != ASYNC && (self.arm_idle || busy_sync == 1)
    }

    /// The slice a queue gets at its first completion (`cfq_set_prio_slice`
    /// with `cfq_latency`).
    fn slice_of(&self, key: u64) -> Dur {
        let sync_slice = self.slice[0].0;
        let slice = self.slice[(key == ASYNC) as usize].0;
        let iq = self.busy().0.max(1) as u64;
        let expect = sync_slice * iq;
        let group = TARGET_LATENCY.0;
        if expect <= group {
            return Dur(slice);
        }
        let low = slice.min(2 * self.slice_idle.0 * slice / sync_slice.max(1));
        Dur((slice as u128 * group as u128 / expect as u128) as u64).max(Dur(low))
    }

    /// `cfq_slice_used_soon`: no request of the slice completed yet, or the
    /// requests in the device would take it to its end at `slice_idle` each.
    fn slice_used_soon(&self, a: &Active, dispatched: u32, now: SimTime) -> bool {
        match a.slice_end {
            None => true,
            Some(end) => now.0 + self.slice_idle.0 * dispatched as u64 > end.0,
        }
    }

    /// `cfq_may_dispatch` for the queue in service.
    fn may_dispatch(&self, a: &Active, now: SimTime) -> bool {
        let q = &self.queues[&a.key];
        let sync = a.key != ASYNC;
        let (busy, busy_sync) = self.busy();
        if self.should_idle_with(a.key, busy_sync) && self.in_flight[0] > 0 {
            return false; // drain async requests before sync I/O
        }
        if self.in_flight[1] > 0 && !sync {
            return false; // async waits while sync I/O is in the device
        }
        let mut max = (QUANTUM / 2).max(1);
        if q.dispatched >= max {
            if busy > 1 && self.slice_used_soon(a, q.dispatched, now) {
                return false;
            }
            max = if busy == 1 { u32::MAX } else { QUANTUM };
        }
        if !sync {
            let since = match self.last_delayed_sync {
                Some(t) => now.0.saturating_sub(t.0),
                None => now.0 + 1_000_000_000,
            };
            let mut depth = (since / self.slice[0].0.max(1)).min(u32::MAX as u64) as u32;
            if depth == 0 && q.dispatched == 0 {
                depth = 1;
            }
            max = max.min(depth);
        }
        q.dispatched < max
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
        if let Some(a) = self.active.as_mut().filter(|a| a.key == key) {
            // A request for the queue it waits on ends the wait
            // (`cfq_rq_enqueued`).
            a.idle_until = None;
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
                    let a = Active {
                        key,
                        slice_end: None,
                        slice_dispatch: 0,
                        fifo_checked: false,
                        idle_until: None,
                    };
                    self.active = Some(a);
                    a
                }
            };
            if a.slice_end.is_some_and(|end| now >= end) {
                let q = &self.queues[&a.key];
                // Slice used up: a queue alone on the service tree, empty,
                // waits for its requests in the device before it goes.
                let alone = self.busy().0 == 1;
                if !(alone && q.q.is_empty() && q.dispatched > 0 && self.should_idle(a.key)) {
                    self.expire_active();
                    continue;
                }
                return None;
            }
            let q = &self.queues[&a.key];
            if !q.q.is_empty() {
                if !self.may_dispatch(&a, now) {
                    return None;
                }
                let q = self.queues.get_mut(&a.key).expect("active queue exists");
                let id = match q.q.expired(now) {
                    Some(e) if !a.fifo_checked => e,
                    _ => q.q.clook(q.pos).expect("non-empty"),
                };
                a.fifo_checked = true;
                let s = self.slots.remove(id);
                q.q.remove(&s);
                q.pos = s.r.end();
                q.dispatched += 1;
                self.in_flight[(a.key != ASYNC) as usize] += 1;
                a.slice_dispatch += 1;
                a.idle_until = None;
                self.active = Some(a);
                if a.key == ASYNC && a.slice_dispatch >= ASYNC_MAXRQ && self.busy().0 > 1 {
                    self.expire_active();
                }
                return Some(s.r);
            }
            // Empty: the last busy sync queue keeps the device while its
            // requests are in it; the idle timer after that only without
            // command queueing.
            if q.dispatched > 0 && self.should_idle(a.key) {
                return None;
            }
            if a.key != ASYNC && self.arm_idle && self.slice_idle.0 > 0 && a.slice_end.is_some() {
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

    fn completed(&mut self, r: &SchedReq, now: SimTime) {
        if r.op == IoOp::Flush {
            return;
        }
        let key = key_of(r);
        let sync = key != ASYNC;
        self.in_flight[sync as usize] = self.in_flight[sync as usize].saturating_sub(1);
        if sync && now >= fifo_deadline(key, r.arrival) {
            self.last_delayed_sync = Some(now);
        }
        if let Some(q) = self.queues.get_mut(&key) {
            q.dispatched = q.dispatched.saturating_sub(1);
        }
        if let Some(a) = self
            .active
            .filter(|a| a.key == key && a.slice_end.is_none())
        {
            let end = now + self.slice_of(key);
            self.active = Some(Active {
                slice_end: Some(end),
                ..a
            });
        }
    }

    fn wake_at(&self) -> Option<SimTime> {
        let a = self.active?;
        match (a.idle_until, a.slice_end) {
            (Some(i), Some(e)) => Some(i.min(e)),
            (i, e) => i.or(e),
        }
    }

    fn len(&self) -> usize {
        self.slots.len() + self.pass.len()
    }
}

#[cfg(test)]
mod tests {
    use super::super::testutil::*;
    use super::*;

    const MS: u64 = 1_000_000;

    fn sync_write(id: u32, lba: u64, stream: u32) -> SchedReq {
        SchedReq {
            sync: true,
            ..req(id, IoOp::Write, lba, 8, 0, stream)
        }
    }

    #[test]
    fn round_robin_and_sorted_inside_a_queue() {
        let cfg = SchedConfig::default();
        let mut s = Cfq::new(&cfg, 32);
        let mut m = vec![];
        // Process 1: reads at 300, 100, 200; process 2: reads at 50, 70.
        s.add(req(1, IoOp::Read, 300, 8, 0, 1), SimTime(0), &mut m);
        s.add(req(2, IoOp::Read, 50, 8, 0, 2), SimTime(0), &mut m);
        s.add(req(3, IoOp::Read, 100, 8, 0, 1), SimTime(0), &mut m);
        s.add(req(4, IoOp::Read, 200, 8, 0, 1), SimTime(0), &mut m);
        s.add(req(5, IoOp::Read, 70, 8, 0, 2), SimTime(0), &mut m);
        // Process 1's queue first (it became busy first), whole queue in
        // sector order (its FIFO head has not expired).
        assert_eq!(drain(&mut s, SimTime(0)), vec![3, 4, 1, 2, 5]);
    }

    /// The rule the block layer's sync/async split exists for
    /// (`cfq_may_dispatch`): async writes wait while a sync request is in
    /// the device, a sync write queues with its process's reads and not
    /// with the async writes, and the two never merge.
    #[test]
    fn sync_and_async_requests_are_held_apart() {
        let cfg = SchedConfig::default();
        let mut s = Cfq::new(&cfg, 32);
        let mut m = vec![];
        // Process 1: an O_DIRECT (sync) write at 0; the flusher (process
        // 9): async writes at 8 (contiguous with it) and 100.
        s.add(sync_write(1, 0, 1), SimTime(0), &mut m);
        s.add(req(2, IoOp::Write, 8, 8, 0, 9), SimTime(0), &mut m);
        s.add(req(3, IoOp::Write, 100, 8, 0, 9), SimTime(0), &mut m);
        assert!(m.is_empty(), "a sync and an async write never merge: {m:?}");
        assert_eq!(
            s.queues.len(),
            2,
            "process 1's sync queue and the async queue"
        );
        assert!(s.queues.contains_key(&1) && s.queues.contains_key(&ASYNC));
        let r1 = s.dispatch(SimTime(0)).unwrap();
        assert_eq!((r1.id, r1.sync), (1, true));
        assert!(
            s.dispatch(SimTime(0)).is_none(),
            "the async queue waits while a sync write is in the device"
        );
        s.completed(&r1, SimTime(MS));
        assert_eq!(drain(&mut s, SimTime(MS)), vec![2, 3]);
        // Now the other way round: async writes in the device hold back a
        // sync queue that is the last of its kind (it drains them first).
        let mut s = Cfq::new(&cfg, 32);
        s.add(req(1, IoOp::Write, 0, 8, 0, 9), SimTime(0), &mut m);
        let w = s.dispatch(SimTime(0)).unwrap();
        s.add(req(2, IoOp::Read, 800, 8, 0, 1), SimTime(0), &mut m);
        assert!(
            s.dispatch(SimTime(0)).is_none(),
            "a read waits for the write to drain"
        );
        s.completed(&w, SimTime(MS));
        assert_eq!(s.dispatch(SimTime(MS)).unwrap().id, 2);
    }

    /// `cfq_quantum`: with other queues busy, a queue stops at quantum/2
    /// in the device while its slice has not started; alone it has no cap.
    #[test]
    fn the_quantum_caps_a_queue_with_company() {
        let cfg = SchedConfig::default();
        let mut s = Cfq::new(&cfg, 32);
        let mut m = vec![];
        for i in 0..10u32 {
            s.add(
                req(i, IoOp::Read, 16 * i as u64, 8, 0, 1),
                SimTime(0),
                &mut m,
            );
        }
        s.add(req(20, IoOp::Read, 5000, 8, 0, 2), SimTime(0), &mut m);
        assert_eq!(drain(&mut s, SimTime(0)), vec![0, 1, 2, 3]);
        let mut alone = Cfq::new(&cfg, 32);
        for i in 0..10u32 {
            alone.add(
                req(i, IoOp::Read, 16 * i as u64, 8, 0, 1),
                SimTime(0),
                &mut m,
            );
        }
        assert_eq!(drain(&mut alone, SimTime(0)).len(), 10);
    }

    /// The slice starts at the queue's first completion and, with three
    /// busy queues (300 ms expected against the 300 ms target), keeps its
    /// full 100 ms; once used, the next queue gets the device.
    #[test]
    fn the_slice_starts_at_the_first_completion() {
        let cfg = SchedConfig::default();
        let mut s = Cfq::new(&cfg, 32);
        let mut m = vec![];
        for i in 0..3u32 {
            s.add(
                req(i, IoOp::Read, 16 * i as u64, 8, 0, 1),
                SimTime(0),
                &mut m,
            );
        }
        s.add(req(10, IoOp::Read, 5000, 8, 0, 2), SimTime(0), &mut m);
        let r0 = s.dispatch(SimTime(0)).unwrap();
        assert_eq!(s.wake_at(), None, "no slice before a completion");
        s.completed(&r0, SimTime(MS));
        assert_eq!(s.wake_at(), Some(SimTime(101 * MS)));
        assert_eq!(s.dispatch(SimTime(101 * MS)).unwrap().id, 10);
        assert_eq!(drain(&mut s, SimTime(101 * MS + 1)), vec![1, 2]);
    }

    /// The idle timer: never on a queueing SSD, where an emptied sync
    /// queue with another sync queue busy gives the device up at once;
    /// without command queueing (`host.queue_depth` < 5) it keeps the
    /// device while its read is in it and then `slice_idle` longer for
    /// its process's next request.
    #[test]
    fn idling_only_without_command_queueing() {
        let cfg = SchedConfig {
            slice_idle: Dur::from_ms(8),
            ..Default::default()
        };
        let mut m = vec![];
        let mut s = Cfq::new(&cfg, 32);
        s.add(req(1, IoOp::Read, 0, 8, 0, 1), SimTime(0), &mut m);
        s.add(req(2, IoOp::Read, 800, 8, 0, 2), SimTime(0), &mut m);
        assert_eq!(drain(&mut s, SimTime(0)), vec![1, 2]);
        let mut s = Cfq::new(&cfg, 1);
        s.add(req(1, IoOp::Read, 0, 8, 0, 1), SimTime(0), &mut m);
        s.add(req(2, IoOp::Read, 800, 8, 0, 2), SimTime(0), &mut m);
        let r1 = s.dispatch(SimTime(0)).unwrap();
        assert!(s.dispatch(SimTime(0)).is_none(), "waits for its own read");
        s.completed(&r1, SimTime(50_000));
        assert!(s.dispatch(SimTime(50_000)).is_none(), "idles");
        assert_eq!(s.wake_at(), Some(SimTime(8_050_000)));
        assert_eq!(s.dispatch(SimTime(8_050_000)).unwrap().id, 2);
    }

    /// `cfq_latency`'s async ramp: after a sync request completed late
    /// (past its 125 ms FIFO expiry), the async queue may keep only one
    /// request in the device until `slice_sync` has passed.
    #[test]
    fn a_late_sync_request_throttles_async_writes() {
        let cfg = SchedConfig::default();
        let mut s = Cfq::new(&cfg, 32);
        let mut m = vec![];
        s.add(req(1, IoOp::Read, 0, 8, 0, 1), SimTime(0), &mut m);
        let r = s.dispatch(SimTime(0)).unwrap();
        s.completed(&r, SimTime(200 * MS));
        for i in 0..4u32 {
            s.add(
                req(10 + i, IoOp::Write, 100 + 16 * i as u64, 8, 0, 9),
                SimTime(200 * MS),
                &mut m,
            );
        }
        let now = SimTime(200 * MS);
        let w = s.dispatch(now).unwrap();
        assert!(s.dispatch(now).is_none(), "one async request at a time");
        s.completed(&w, SimTime(201 * MS));
        assert!(s.dispatch(SimTime(201 * MS)).is_some());
        // A slice_sync later the ramp allows more than one.
        let later = SimTime(400 * MS);
        assert!(s.dispatch(later).is_some(), "two in the device now");
        assert!(s.dispatch(later).is_none(), "but not three");
    }
}
