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
//! **Workload service trees** (2.6.33+). A busy queue sits on one of three
//! trees by its type (`cfqq_type`, `cfq_service_tree_add`): the async queue on
//! the async tree, a sync queue with its idle window on the sync(-idle) tree,
//! one without on the sync-noidle tree. Inside a tree queues are ordered by
//! key `now + (busy queues - 1) x (180 ms - base slice)` (`cfq_slice_offset`:
//! the priority-0 sync slice against the queue's own, so async queues sort
//! later; `slice_resid` is always 0 here, as `cfq_idle_slice_timer` expires
//! with `timed_out` cleared); a queue stays on its tree while it is served
//! and is re-keyed when its slice ends with requests left. CFQ serves one tree at a
//! time (`serving_type`) for a *workload slice*, `300 ms x queues in the tree
//! / busy queues` (`choose_service_tree`; for the async tree further scaled
//! by `slice_async / slice_sync`, for a sync tree at least `2 x slice_idle`,
//! and at least 2 ms); when it has run out or the tree has emptied, the tree
//! whose first queue has the smallest key is served next (`cfq_choose_wl`).
//! The workload slice left when a queue's slice ends is kept for the next
//! selection (`cfq_group_served`, `cfq_choose_cfqg`) and dropped when no
//! queue is busy (`cfq_group_service_tree_del`).
//!
//! **The idle window** (`cfq_update_idle_window`, at every request queued):
//! on for a new sync queue; off when the queue is seeky and has never had 4
//! requests queued at once (`deep`), or once the process's mean think time
//! (`cfq_update_io_thinktime`: the time from its last sync completion to its
//! next request, at most `2 x slice_idle`, averaged 7/8 old to 1/8 new, valid
//! after 3 samples) exceeds `slice_idle`; on again when neither holds. On a
//! non-rotational device a request is seeky when it is smaller than 64
//! sectors (`cfq_update_io_seektime`), and a queue when more than 4 of its
//! last 32 requests were (`CFQQ_SEEKY`). `slice_idle` 0 turns every window
//! off. A queue changes tree when it is next added or re-keyed.
//!
//! **Service.** The queue in service owns the device for its slice or until it
//! runs empty (`cfq_select_queue`). A slice starts when the queue's first
//! request completes (`cfq_completed_request` -> `cfq_set_prio_slice`):
//! `slice_sync` (100 ms) or `slice_async` (40 ms), and, with `cfq_latency` on
//! (its default), scaled down so that every busy queue gets its turn within
//! the 300 ms target latency, to no less than `2 x slice_idle` (scaled for
//! async). An async queue also ends its turn after `cfq_prio_to_maxrq` (16)
//! requests when other queues are busy (`cfq_dispatch_requests`). Inside a
//! queue requests go out in ascending sector order from where the last one
//! ended (wrapping to the lowest), except that once per slice an expired FIFO
//! head is served first (`cfq_check_fifo`; `cfq_fifo_expire`: 125 ms sync,
//! 250 ms async).
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
//! **Idling.** `cfq_should_idle` holds for a sync queue with its idle window
//! on a device without command queueing, and for a sync queue that is the
//! last one on its service tree. Such a queue, once empty, keeps the device
//! while its own requests are in it (`cfq_select_queue`). The idle timer
//! proper (`cfq_arm_slice_timer`, waiting up to `slice_idle` for the
//! process's next request, unless its mean think time exceeds what is left
//! of the slice) is never armed on a non-rotational device with command
//! queueing, which a simulated drive is when its `host.queue_depth` reaches
//! `CFQ_HW_QUEUE_MIN` (5: `cfq_update_hw_tag`); with a shallower queue it is.
//!
//! The slice scaling and the workload slice count the busy queues averaged
//! (`busy_queues_avg`, updated at each slice start: 3/4 of the larger of it
//! and the current count plus 1/4 of the smaller), so a count that dips
//! for an instant does not lengthen them.
//!
//! Not modelled: I/O priority classes and levels (all best effort, level 4),
//! cgroups, close-cooperator queue
//! merging, back-seek penalties, and `REQ_NOIDLE` (a sync write that asks
//! for no idling; every sync request here leaves the idle window to the
//! history).

use super::SchedConfig;
use super::{max_sectors, Added, DirQueue, Slots};
use crate::workload::IoOp;
use ssd_core::sched::{IoScheduler, SchedReq};
use ssd_core::units::{Dur, SimTime};
use std::collections::{BTreeMap, BTreeSet, VecDeque};

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
/// `CFQ_MIN_TT`: the shortest workload slice (2 jiffies at HZ 1000).
const MIN_TT: Dur = Dur::from_ms(2);
/// `CFQQ_SECT_THR_NONROT`: on a non-rotational device a smaller request is
/// seeky.
const SECT_THR_NONROT: u32 = 64;
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

/// The workload service trees (`enum wl_type_t`), in `cfq_choose_wl`'s
/// order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Wl {
    Async = 0,
    SyncNoidle = 1,
    Sync = 2,
}

const WLS: [Wl; 3] = [Wl::Async, Wl::SyncNoidle, Wl::Sync];

#[derive(Debug)]
struct CfqQueue {
    q: DirQueue,
    pos: u64,
    /// Requests of the queue in the device (`cfqq->dispatched`).
    dispatched: u32,
    /// Its tree and key (with the tree's insertion sequence) while busy
    /// (`on_rr`, `service_tree`, `rb_key`).
    on: Option<(Wl, i64, u64)>,
    /// `idle_window`, `deep`, `seek_history`.
    idle_window: bool,
    deep: bool,
    seek_history: u32,
    /// The process's think time (`cic->ttime_*`, ns) and its last sync
    /// completion (`last_end_request`).
    ttime_samples: u64,
    ttime_total: u64,
    ttime_mean: u64,
    last_end: SimTime,
}

impl CfqQueue {
    fn new(key: u64, now: SimTime) -> CfqQueue {
        CfqQueue {
            q: DirQueue::default(),
            pos: 0,
            dispatched: 0,
            on: None,
            idle_window: key != ASYNC,
            deep: false,
            seek_history: 0,
            ttime_samples: 0,
            ttime_total: 0,
            ttime_mean: 0,
            last_end: now,
        }
    }
    /// `cfqq_type`.
    fn wl(&self, key: u64) -> Wl {
        if key == ASYNC {
            Wl::Async
        } else if self.idle_window {
            Wl::Sync
        } else {
            Wl::SyncNoidle
        }
    }
    /// `sample_valid(ttime_samples)`.
    fn ttime_valid(&self) -> bool {
        self.ttime_samples > 80
    }
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
    /// The service trees: (key, insertion sequence, queue).
    trees: [BTreeSet<(i64, u64, u64)>; 3],
    tree_seq: u64,
    /// The tree served (`serving_type`), until when (`workload_expires`),
    /// and what was left of it when the last queue's slice ended
    /// (`saved_workload_slice`).
    serving: Wl,
    workload_end: Option<SimTime>,
    /// `busy_queues_avg`: the count of busy queues, averaged so that it
    /// follows a rise at once and a fall slowly (`cfq_group_get_avg_queues`).
    busy_avg: u32,
    saved_workload: Dur,
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
            trees: Default::default(),
            tree_seq: 0,
            serving: Wl::SyncNoidle,
            workload_end: None,
            busy_avg: 0,
            saved_workload: Dur::ZERO,
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

    /// Queues on the service trees (`busy_queues`, one group), and of them
    /// the sync ones.
    fn busy(&self) -> (u32, u32) {
        let async_ = self.trees[Wl::Async as usize].len() as u32;
        let all = async_
            + self.trees[Wl::SyncNoidle as usize].len() as u32
            + self.trees[Wl::Sync as usize].len() as u32;
        (all, all - async_)
    }

    /// `cfq_service_tree_add` (not `add_front`): put busy queue `key` on
    /// the tree of its type with key `now + cfq_slice_offset`.
    fn tree_add(&mut self, key: u64, now: SimTime) {
        let nr = self.busy().0 as i64 - self.queues[&key].on.is_some() as i64;
        let prio0 = self.slice[0].0 + self.slice[0].0 / 5 * 4;
        let own = self.slice[(key == ASYNC) as usize].0;
        let q = self.queues.get_mut(&key).expect("queue exists");
        let rb_key = now.0 as i64 + (nr - 1) * (prio0 as i64 - own as i64);
        let wl = q.wl(key);
        if let Some((w, k, seq)) = q.on.take() {
            self.trees[w as usize].remove(&(k, seq, key));
        }
        self.tree_seq += 1;
        self.trees[wl as usize].insert((rb_key, self.tree_seq, key));
        q.on = Some((wl, rb_key, self.tree_seq));
    }

    /// `cfq_del_cfqq_rr`.
    fn tree_del(&mut self, key: u64) {
        let q = self.queues.get_mut(&key).expect("queue exists");
        if let Some((w, k, seq)) = q.on.take() {
            self.trees[w as usize].remove(&(k, seq, key));
        }
        if self.busy().0 == 0 {
            self.saved_workload = Dur::ZERO;
        }
    }

    /// `cfq_should_idle` for queue `key`: a sync queue with its idle
    /// window on a device without command queueing, or the last busy one
    /// on its service tree.
    fn should_idle(&self, key: u64) -> bool {
        if key == ASYNC {
            return false;
        }
        let q = &self.queues[&key];
        if q.idle_window && self.arm_idle {
            return true;
        }
        q.on.is_some_and(|(w, _, _)| self.trees[w as usize].len() == 1)
    }

    /// `choose_service_tree` for one group and the best-effort class.
    fn choose_service_tree(&mut self, now: SimTime) {
        let count = self.trees[self.serving as usize].len() as u64;
        if count > 0 && self.workload_end.is_some_and(|e| now <= e) {
            return;
        }
        // `cfq_choose_wl`: the tree whose first queue has the lowest key.
        let mut best: Option<(i64, Wl)> = None;
        for wl in WLS {
            if let Some(&(k, _, _)) = self.trees[wl as usize].first() {
                if best.is_none_or(|(b, _)| k < b) {
                    best = Some((k, wl));
                }
            }
        }
        self.serving = best.map_or(Wl::SyncNoidle, |(_, w)| w);
        let count = self.trees[self.serving as usize].len() as u64;
        let busy = self.busy().0.max(self.busy_avg).max(1) as u64;
        let mut slice = TARGET_LATENCY.0 * count / busy;
        if self.serving == Wl::Async {
            slice = slice * self.slice[1].0 / self.slice[0].0.max(1);
        } else {
            slice = slice.max(2 * self.slice_idle.0);
        }
        self.workload_end = Some(now + Dur(slice.max(MIN_TT.0)));
    }

    /// `cfq_select_queue`'s new-queue path: `cfq_choose_cfqg` (restore the
    /// workload slice left), `choose_service_tree`, and the first queue of
    /// the served tree.
    fn select(&mut self, now: SimTime) -> Option<u64> {
        self.workload_end = if self.saved_workload.0 > 0 {
            Some(now + self.saved_workload)
        } else {
            None
        };
        self.choose_service_tree(now);
        let &(_, _, key) = self.trees[self.serving as usize].first()?;
        self.active = Some(Active {
            key,
            slice_end: None,
            slice_dispatch: 0,
            fifo_checked: false,
            idle_until: None,
        });
        Some(key)
    }

    /// The slice a queue gets at its first completion (`cfq_set_prio_slice`
    /// with `cfq_latency`), which updates the averaged busy count
    /// (`cfq_group_get_avg_queues`, `cfq_hist_divisor` 4).
    fn slice_of(&mut self, key: u64) -> Dur {
        let busy = self.busy().0;
        let (lo, hi) = (busy.min(self.busy_avg), busy.max(self.busy_avg));
        self.busy_avg = (3 * hi + lo + 2) / 4;
        let sync_slice = self.slice[0].0;
        let slice = self.slice[(key == ASYNC) as usize].0;
        let iq = self.busy_avg.max(1) as u64;
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
        let busy = self.busy().0;
        if self.should_idle(a.key) && self.in_flight[0] > 0 {
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

    /// `__cfq_slice_expired`: keep the workload slice left
    /// (`cfq_group_served`), take an emptied queue off its tree, re-key a
    /// busy one.
    fn expire_active(&mut self, now: SimTime) {
        let Some(a) = self.active.take() else { return };
        self.saved_workload = match self.workload_end {
            Some(e) if e > now => Dur(e.0 - now.0),
            _ => Dur::ZERO,
        };
        if self.queues[&a.key].q.is_empty() {
            self.tree_del(a.key);
        } else {
            self.tree_add(a.key, now);
        }
    }

    /// `cfq_rq_enqueued`'s history updates for a request of sync queue
    /// `key`: `cfq_update_io_thinktime`, `cfq_update_io_seektime`,
    /// `cfq_update_idle_window`.
    fn update_history(&mut self, key: u64, r: &SchedReq, now: SimTime) {
        let slice_idle = self.slice_idle.0;
        let q = self.queues.get_mut(&key).expect("queue exists");
        let ttime = now.0.saturating_sub(q.last_end.0).min(2 * slice_idle);
        q.ttime_samples = (7 * q.ttime_samples + 256) / 8;
        q.ttime_total = (7 * q.ttime_total + 256 * ttime) / 8;
        q.ttime_mean = (q.ttime_total + 128) / q.ttime_samples;
        q.seek_history = (q.seek_history << 1) | (r.sectors < SECT_THR_NONROT) as u32;
        if key == ASYNC {
            return;
        }
        if q.q.len() >= 4 {
            q.deep = true;
        }
        let seeky = q.seek_history.count_ones() > 32 / 8;
        if slice_idle == 0 || (!q.deep && seeky) {
            q.idle_window = false;
        } else if q.ttime_valid() {
            q.idle_window = q.ttime_mean <= slice_idle;
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
        let q = self
            .queues
            .entry(key)
            .or_insert_with(|| CfqQueue::new(key, now));
        let merge = self.merge.then_some(self.max);
        if let Added::Merged(_) = q.q.add(&mut self.slots, r, deadline, key, merge, merged) {
            return;
        }
        if q.on.is_none() {
            // `cfq_add_cfqq_rr`.
            self.tree_add(key, now);
        }
        self.update_history(key, &r, now);
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
                    self.select(now)?;
                    self.active.expect("selected")
                }
            };
            if a.slice_end.is_some_and(|end| now >= end) {
                let q = &self.queues[&a.key];
                // Slice used up: a queue alone on the service trees, empty,
                // waits for its requests in the device before it goes.
                let alone = self.busy().0 == 1;
                if !(alone && q.q.is_empty() && q.dispatched > 0 && self.should_idle(a.key)) {
                    self.expire_active(now);
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
                    self.expire_active(now);
                }
                return Some(s.r);
            }
            // Empty: a queue that should idle keeps the device while its
            // requests are in it; the idle timer after that only without
            // command queueing (`cfq_arm_slice_timer`), and not when the
            // process's think time exceeds the slice left.
            if q.dispatched > 0 && self.should_idle(a.key) {
                return None;
            }
            if let Some(until) = a.idle_until {
                if now < until {
                    return None;
                }
                // The timer ran out with no request: the queue's depth
                // flag is reset (`cfq_idle_slice_timer`).
                self.queues
                    .get_mut(&a.key)
                    .expect("active queue exists")
                    .deep = false;
                self.expire_active(now);
                continue;
            }
            if let Some(end) = a.slice_end.filter(|_| {
                a.key != ASYNC && self.arm_idle && self.slice_idle.0 > 0 && self.should_idle(a.key)
            }) {
                let think_long = q.ttime_valid() && end.0.saturating_sub(now.0) < q.ttime_mean;
                if !think_long {
                    self.active = Some(Active {
                        idle_until: Some(now + self.slice_idle),
                        ..a
                    });
                    return None;
                }
            }
            self.expire_active(now);
            if self.busy().0 == 0 {
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
            if sync {
                q.last_end = now;
            }
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

    /// Drive `s` on a device that completes a request `svc` after its
    /// dispatch and holds 32: processes 1 and 2 read 8 sectors at a time,
    /// one request each (psync); process 3 keeps 16 reads of 128 sectors
    /// queued. Returns (time, stream) of every dispatch until `end`.
    fn three_readers(s: &mut Cfq, svc: u64, end: u64) -> Vec<(u64, u32)> {
        let mut m = vec![];
        let mut id = 0u32;
        let mut lba = [0u64, 0, 1 << 20, 1 << 24];
        let mut queued3 = 0u32;
        let mut inflight: Vec<(u64, SchedReq)> = vec![];
        let mut out = vec![];
        let mut issue = |s: &mut Cfq, st: u32, sectors: u32, t: u64| {
            id += 1;
            let i = st as usize;
            // Random-looking for 1 and 2, sequential for 3.
            lba[i] = if st == 3 {
                lba[i] + sectors as u64
            } else {
                (lba[i] * 7 + 4099 + st as u64 * 13) % (1 << 19)
            };
            s.add(
                req(id, IoOp::Read, lba[i] * 8, sectors, t, st),
                SimTime(t),
                &mut m,
            );
        };
        issue(s, 1, 8, 0);
        issue(s, 2, 8, 0);
        let step = svc / 2;
        let mut t = 0;
        while t < end {
            let mut done = vec![];
            inflight.retain(|&(at, r)| {
                let d = at <= t;
                if d {
                    done.push(r);
                }
                !d
            });
            for r in done {
                s.completed(&r, SimTime(t));
                if r.stream == 3 {
                    queued3 -= 1;
                } else {
                    issue(s, r.stream, 8, t);
                }
            }
            while queued3 < 16 {
                issue(s, 3, 128, t);
                queued3 += 1;
            }
            while inflight.len() < 32 {
                let Some(r) = s.dispatch(SimTime(t)) else {
                    break;
                };
                out.push((t, r.stream));
                inflight.push((t + svc, r));
            }
            t += step;
        }
        out
    }

    /// `cfq_update_idle_window` / `cfq_update_io_seektime` on a queueing
    /// SSD: a process reading small requests one at a time becomes seeky
    /// and loses its idle window (sync-noidle tree); one that keeps 4 or
    /// more queued is `deep` and keeps it (sync tree); the async queue is
    /// on the async tree.
    #[test]
    fn queues_join_the_tree_of_their_type() {
        let cfg = SchedConfig::default();
        let mut s = Cfq::new(&cfg, 32);
        let out = three_readers(&mut s, 100_000, 700 * MS);
        assert!(out.iter().any(|&(_, st)| st == 1));
        let wl = |s: &Cfq, k: u64| s.queues[&k].on.map(|(w, _, _)| w);
        assert!(!s.queues[&1].idle_window && !s.queues[&2].idle_window);
        assert!(s.queues[&3].idle_window && s.queues[&3].deep);
        assert_eq!(wl(&s, 3), Some(Wl::Sync));
        for k in [1, 2] {
            assert!(matches!(wl(&s, k), Some(Wl::SyncNoidle) | None), "{k}");
        }
        let mut m = vec![];
        s.add(
            req(999_999, IoOp::Write, 77, 8, 0, 9),
            SimTime(20 * MS),
            &mut m,
        );
        assert_eq!(wl(&s, ASYNC), Some(Wl::Async));
        // Think time: a process whose next request comes 20 ms after its
        // last completion (more than slice_idle) loses its window after
        // three samples, large requests and all.
        let mut s = Cfq::new(&cfg, 32);
        let mut t = 0;
        for i in 0..4u32 {
            s.add(
                req(i, IoOp::Read, 1000 * i as u64, 256, t, 1),
                SimTime(t),
                &mut m,
            );
            let r = s.dispatch(SimTime(t)).unwrap();
            s.completed(&r, SimTime(t + MS));
            t += 21 * MS;
        }
        assert!(s.queues[&1].ttime_valid());
        // Samples 0, 16, 16, 16 ms (20 ms capped at 2 x slice_idle):
        // samples 32, 60, 84, 105; totals 0, 512, 960, 1352 ms.
        assert_eq!(s.queues[&1].ttime_mean, (1352 * MS + 128) / 105);
        assert!(!s.queues[&1].idle_window);
    }

    /// `choose_service_tree`: two psync readers on the sync-noidle tree and
    /// a deep reader on the sync tree. The noidle tree is served for its
    /// workload slice, 300 ms x 2 / 3 = 200 ms, its two queues in turn,
    /// while the deep reader waits; then the sync tree for 100 ms.
    #[test]
    fn a_tree_is_served_for_its_workload_slice() {
        let cfg = SchedConfig::default();
        let mut s = Cfq::new(&cfg, 32);
        let out = three_readers(&mut s, 100_000, 1600 * MS);
        // Runs of dispatches from one tree after the first 600 ms (all
        // three start on the sync tree, which is served for 300 ms).
        let mut runs: Vec<(bool, u64, u64, [u32; 4])> = vec![];
        for &(t, st) in out.iter().filter(|&&(t, _)| t >= 600 * MS) {
            let noidle = st != 3;
            match runs.last_mut() {
                Some(r) if r.0 == noidle => {
                    r.2 = t;
                    r.3[st as usize] += 1;
                }
                _ => {
                    let mut c = [0; 4];
                    c[st as usize] = 1;
                    runs.push((noidle, t, t, c));
                }
            }
        }
        let whole = &runs[1..runs.len() - 1];
        assert!(whole.len() >= 4, "{runs:?}");
        for &(noidle, from, to, c) in whole {
            let span = (to - from) / MS;
            if noidle {
                assert!((190..=201).contains(&span), "{runs:?}");
                assert!(c[1] > 100 && c[2] > 100, "both noidle queues: {c:?}");
            } else {
                assert!((90..=101).contains(&span), "{runs:?}");
            }
        }
    }

    /// `cfq_should_idle` counts the queue's own tree: on a queueing SSD
    /// the last sync-noidle queue keeps the device while its request is
    /// in it though a sync-tree queue is busy; with another noidle queue
    /// busy it gives the device up at once.
    #[test]
    fn the_last_queue_of_its_tree_idles() {
        let cfg = SchedConfig::default();
        let mut m = vec![];
        for company in [false, true] {
            let mut s = Cfq::new(&cfg, 32);
            for (k, on) in [(1u64, false), (2, true), (3, false)] {
                let mut q = CfqQueue::new(k, SimTime(0));
                q.idle_window = on;
                s.queues.insert(k, q);
            }
            s.add(req(1, IoOp::Read, 0, 8, 0, 1), SimTime(0), &mut m);
            s.add(req(2, IoOp::Read, 5000, 8, 0, 2), SimTime(0), &mut m);
            if company {
                s.add(req(3, IoOp::Read, 9000, 8, 0, 3), SimTime(0), &mut m);
            }
            assert_eq!(s.queues[&1].on.map(|o| o.0), Some(Wl::SyncNoidle));
            assert_eq!(s.queues[&2].on.map(|o| o.0), Some(Wl::Sync));
            let r = s.dispatch(SimTime(0)).unwrap();
            assert_eq!(r.stream, 1);
            let next = s.dispatch(SimTime(0)).map(|r| r.stream);
            assert_eq!(next, company.then_some(3), "company {company}");
        }
    }
}
