//! BFQ, budget fair queueing (Valente & Checconi; Linux block/bfq-iosched.c
//! and bfq-wf2q.c as of 6.12), in a simplified but faithful form.
//!
//! **Queues and B-WF2Q+.** Each process (request `stream`) has a sync queue
//! for its reads and `REQ_SYNC` writes; async writes and trims of all
//! processes share one async queue. A queue in service owns the device until
//! it has received its *budget* (in sectors), until it runs empty, or until
//! `bfq_timeout` has passed. Queues are scheduled by B-WF2Q+ on sector
//! service: every backlogged queue has a virtual start S and finish F = S +
//! budget / weight; the scheduler serves the eligible queue (S <= V) with the
//! smallest F, and the system virtual time V advances by service / (sum of
//! the weights of backlogged queues). When a queue's service ends it is
//! charged what it received (F = S + served / weight); a queue that stays
//! backlogged starts its next budget at its old F, one that became
//! backlogged again starts at max(V, F). Inside a queue requests go out in
//! ascending sector order from the last position (wrapping), an expired FIFO
//! head (125 ms sync, 250 ms async: `bfq_fifo_expire`) once per budget first.
//!
//! **Charge** (`bfq_serv_to_charge`): a request costs its queue its sectors,
//! and an async one `bfq_async_charge_factor` (3) times its sectors unless
//! its queue is weight-raised or the scenario is asymmetric for it
//! (`bfq_asymmetric_scenario`: busy queues' weights differ and its own is
//! not the smallest).
//!
//! **Budget feedback** (`__bfq_bfqq_recalc_budget`, sync queues not
//! raised): budget exhausted -> x4, timed out -> x2 (both capped at
//! `bfq_max_budget`), emptied -> what was served (at least `bfq_max_budget
//! / 32`), idle timer expired -> x2 if requests are still in the device,
//! else 4 x min lower (at least the minimum); preempted -> unchanged. New
//! sync queues start at 2/3 of the maximum; the async queue always gets the
//! maximum; a weight-raised queue gets 2 x the minimum.
//!
//! **Interactive weight raising** (`low_latency`, on by default). A sync
//! queue that becomes busy after having been idle (nothing queued, nothing
//! in the device) for `bfq_wr_min_idle_time` (2 s), or that is new, is
//! *interactive* (`bfq_bfqq_idle_for_long_time`,
//! `bfq_bfqq_handle_idle_busy_switch`) and gets `bfq_wr_coeff` (30) times
//! its weight, with its budget cut to 2 x the minimum
//! (`bfq_update_bfqq_wr_on_rq_arrival`). Raising ends at a dispatch of the
//! queue once `bfq_wr_duration` has passed since it started, or once the
//! queue received `max_service_from_wr` (120000 sectors) raised
//! (`bfq_update_wr_data`, `bfq_bfqq_end_wr`). `bfq_wr_duration` is
//! `rate_dur_prod / peak_rate` clamped to 3..25 s; this model has no
//! peak-rate estimator, so it uses the kernel's initial estimate for a
//! non-rotational device (`peak_rate = ref_rate[1] * 2 / 3`), which gives
//! `ref_wr_duration[1] * 3 / 2` = 3.75 s. A busy non-raised queue that gets
//! an async request 500 ms (`bfq_wr_min_inter_arr_async`) after its
//! previous one is raised too (`bfq_add_request`). Queues created in a
//! *large burst* (the 8th and later of queues created less than 180 ms
//! apart: `bfq_handle_burst`, `bfq_add_to_burst`) are not raised, and lose
//! the mark after 10 s idle. A queue that becomes busy preempts the one in
//! service when it has a higher weight or when the one in service would not
//! be worth idling for (`bfq_bfqq_handle_idle_busy_switch`'s last test).
//!
//! **Idling.** When the in-service sync queue runs empty, BFQ keeps the
//! device for it while `bfq_better_to_idle` holds: while its requests are in
//! the device (`bfq_select_queue`), and after the last completes, for
//! `bfq_slice_idle` (`sched.slice_idle`, 8 ms on every device) waiting for
//! the process's next request (`bfq_completed_request` ->
//! `bfq_arm_slice_timer`: at least 20 ms for a raised queue, at most 2 ms
//! for a seeky queue in a symmetric scenario). A request of the queue ends
//! the wait; the timer's expiry ends its service (`BFQQE_TOO_IDLE`).
//! `bfq_better_to_idle` = `idling_boosts_thr_without_issues` (only without
//! command queueing, `hw_tag`: the device holds more than 3 requests, here
//! `host.queue_depth` > 3, and for a non-seeky queue while no queue is
//! raised) or `idling_needed_for_service_guarantees`: the queue is raised
//! and some busy queue is not (or 4 more requests than its own are in the
//! device), or the scenario is asymmetric for it, or it is the only busy
//! queue. So on a queueing SSD with equal weights BFQ idles only for a lone
//! queue; a raised queue among others makes it idle for the raised one.
//! Seekiness is the kernel's (`bfq_update_io_seektime`: more than 19 of the
//! last 32 requests began over 800 sectors from the previous one's end and
//! were smaller than 64 sectors).
//!
//! **Soft real-time raising.** When a sync queue is expired empty, BFQ
//! computes when it may next become busy and still have received no more
//! than `bfq_wr_max_softrt_rate` (7,000 sectors a second) since it last
//! became busy (`bfq_bfqq_softrt_next_start`: at least `slice_idle` and
//! 4 ms from now; once its requests in the device complete, if some are).
//! A queue that becomes busy after that time, with nothing in the device,
//! not totally seeky and not in a large burst, is soft real-time: raised
//! 30 x 100 (`BFQ_SOFTRT_WEIGHT_FACTOR`) for 300 ms (`bfq_wr_rt_max_time`),
//! recharged at each such arrival; an interactive raising it interrupts
//! resumes if its period is not over (`switch_back_to_interactive_wr`).
//!
//! Not modelled: the peak-rate estimator (see above), think time (an
//! idle window is open for every non-seeky queue), the service a
//! preempted queue that was waiting keeps (`bfqq_wants_to_preempt`, the
//! `non_blocking_wait_rq` budget carry-over), cgroups, I/O priority classes,
//! injection, queue merging, and the per-queue tag cap of
//! `bfqq_request_over_limit` (a queue holding more tags than its weight's
//! share is cut to one).
//!
//! **Depth limits** (`bfq_limit_depth`, `bfq_update_depths`): sync reads may
//! take every scheduler tag; async requests only while fewer than half of
//! `nr_requests` are taken, sync writes three quarters; while some queue is
//! weight-raised, 3/16 and 6/16 (the word depths' share of each sbitmap
//! word, here of the whole).

use super::SchedConfig;
use super::{max_sectors, Added, DirQueue, Slots};
use crate::workload::IoOp;
use ssd_core::sched::{IoScheduler, SchedReq};
use ssd_core::units::{Dur, SimTime};
use std::collections::{BTreeMap, VecDeque};

use super::cfq::{fifo_deadline, key_of, ASYNC};
/// Weight of every queue at the default I/O priority (best effort, level
/// 4). Only ratios matter; raising multiplies it.
const WEIGHT: u64 = 100;
/// `bfq_async_charge_factor`: the service an async request is charged,
/// per sector, in a symmetric scenario with its queue not raised.
const ASYNC_CHARGE: u32 = 3;
/// Virtual-time fixed point: sectors << VT_SHIFT.
const VT_SHIFT: u32 = 16;
/// `bfq_wr_coeff`: the weight factor of a raised queue.
const WR_COEFF: u64 = 30;
/// `bfq_wr_min_idle_time`: idle this long, a queue is interactive again.
const WR_MIN_IDLE: Dur = Dur::from_ms(2000);
/// `bfq_wr_min_inter_arr_async`.
const WR_MIN_INTER_ARR_ASYNC: Dur = Dur::from_ms(500);
/// `max_service_from_wr`: sectors a queue may receive raised.
const MAX_SERVICE_FROM_WR: u64 = 120_000;
/// `bfq_wr_duration` with the initial peak rate of a non-rotational device
/// (`ref_rate[1] * ref_wr_duration[1] / (ref_rate[1] * 2 / 3)`, within the
/// 3..25 s clamp).
const WR_DURATION: Dur = Dur::from_ms(2500 * 33_000 / (33_000 * 2 / 3));
/// `BFQ_SOFTRT_WEIGHT_FACTOR`: a soft real-time queue's weight is
/// `bfq_wr_coeff` times this times its own.
const SOFTRT_WEIGHT_FACTOR: u64 = 100;
/// `bfq_wr_rt_max_time`: how long soft real-time raising lasts from its
/// last (re)start.
const WR_RT_MAX_TIME: Dur = Dur::from_ms(300);
/// `bfq_wr_max_softrt_rate` (sectors a second): a queue that receives at
/// most this much from when it becomes busy is soft real-time.
const WR_MAX_SOFTRT_RATE: u64 = 7000;
/// The few jiffies `bfq_bfqq_softrt_next_start` adds after `slice_idle`
/// (4 at HZ = 1000).
const SOFTRT_JIFFIES: Dur = Dur::from_ms(4);
/// `bfq_burst_interval` and `bfq_large_burst_thresh`.
const BURST_INTERVAL: Dur = Dur::from_ms(180);
const LARGE_BURST_THRESH: u32 = 8;
/// A large-burst queue idle this long loses the mark.
const BURST_FORGET: Dur = Dur::from_ms(10_000);
/// `BFQ_HW_QUEUE_THRESHOLD`: a device holding more has command queueing.
const HW_QUEUE_THRESHOLD: u32 = 3;
/// `BFQ_MIN_TT`: the idle time of a seeky queue in a symmetric scenario.
const MIN_TT: Dur = Dur::from_ms(2);
/// The least idle time of a raised queue (`bfq_arm_slice_timer`).
const WR_MIN_IDLE_SLICE: Dur = Dur::from_ms(20);
/// `BFQQ_SEEK_THR` and `BFQQ_SECT_THR_NONROT` (sectors).
const SEEK_THR: u64 = 800;
const SECT_THR_NONROT: u32 = 64;

#[derive(Debug)]
struct BfqQueue {
    q: DirQueue,
    pos: u64,
    budget: u32,
    start: u64,
    finish: u64,
    /// Busy (`bfq_bfqq_busy`): backlogged, or in service.
    backlogged: bool,
    /// 1, or `WR_COEFF` while weight-raised.
    wr_coeff: u64,
    /// `last_wr_start_finish`: when raising started (or ended), or a
    /// non-raised queue's last request arrived.
    wr_start: SimTime,
    /// `service_from_wr`.
    wr_service: u64,
    /// `wr_cur_max_time`: `WR_DURATION` (interactive) or `WR_RT_MAX_TIME`
    /// (soft real-time).
    wr_max_time: Dur,
    /// `wr_start_at_switch_to_srt`: when the interactive raising a soft
    /// real-time one interrupted started (None: none, "minus infinity").
    wr_start_at_switch_to_srt: Option<SimTime>,
    /// `soft_rt_next_start`: the queue is soft real-time if it becomes
    /// busy after this.
    soft_rt_next_start: SimTime,
    /// `last_idle_bklogged` and `service_from_backlogged`: when it last
    /// became busy, and the sectors served since.
    last_idle_bklogged: SimTime,
    service_from_backlogged: u64,
    /// `softrt_update`: compute `soft_rt_next_start` once its requests in
    /// the device complete.
    softrt_update: bool,
    /// `budget_timeout` where the kernel overloads it: when the queue last
    /// had nothing queued and nothing in the device (None: never, a new
    /// queue, `bfq_smallest_from_now`).
    idle_since: Option<SimTime>,
    /// Requests of the queue in the device (`dispatched`).
    dispatched: u32,
    in_large_burst: bool,
    just_created: bool,
    /// `seek_history` and `last_request_pos`.
    seek_history: u32,
    last_pos: u64,
}

impl BfqQueue {
    fn weight(&self) -> u64 {
        WEIGHT * self.wr_coeff
    }
    /// In `queue_weights_tree`: busy, or with requests in the device.
    fn weighed(&self) -> bool {
        self.backlogged || self.dispatched > 0
    }
    /// `BFQQ_SEEKY`.
    fn seeky(&self) -> bool {
        self.seek_history.count_ones() > 19
    }
    /// `BFQQ_TOTALLY_SEEKY`: every one of the last 32 requests seeky.
    fn totally_seeky(&self) -> bool {
        self.seek_history == u32::MAX
    }
    /// `bfq_bfqq_softrt_next_start`: the earliest time at which the queue,
    /// becoming busy again, has received no more than
    /// `bfq_wr_max_softrt_rate` since it last became busy; never earlier
    /// than the current value, nor than `slice_idle` and a few jiffies
    /// from now.
    fn softrt_next_start(&self, now: SimTime, slice_idle: Dur) -> SimTime {
        let by_rate = self.last_idle_bklogged
            + Dur(self.service_from_backlogged * 1_000_000_000 / WR_MAX_SOFTRT_RATE);
        self.soft_rt_next_start
            .max(by_rate)
            .max(now + slice_idle + SOFTRT_JIFFIES)
    }
}

#[derive(Clone, Copy, Debug)]
struct InService {
    key: u64,
    served: u32,
    timeout: SimTime,
    fifo_checked: bool,
    /// The idle timer (`wait_request`): the device is held for the queue
    /// until then.
    idle_until: Option<SimTime>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Expiry {
    Exhausted,
    Timeout,
    Empty,
    TooIdle,
    Preempted,
}

/// The burst of queue creations (`bfq_handle_burst`).
#[derive(Debug, Default)]
struct Burst {
    last_ins: Option<SimTime>,
    size: u32,
    large: bool,
    members: Vec<u64>,
}

/// The BFQ scheduler.
#[derive(Debug)]
pub struct Bfq {
    slots: Slots,
    queues: BTreeMap<u64, BfqQueue>,
    vtime: u64,
    active: Option<InService>,
    pass: VecDeque<SchedReq>,
    max_budget: u32,
    timeout: Dur,
    slice_idle: Dur,
    /// Command queueing (`hw_tag`).
    hw_tag: bool,
    /// Requests in the device (`tot_rq_in_driver`).
    in_driver: u32,
    burst: Burst,
    /// The scheduler tags (`nr_requests`) the depth limits divide.
    tags: u32,
    /// `low_latency`: weight raising on.
    low_latency: bool,
    max: u32,
    merge: bool,
}

impl Bfq {
    /// A BFQ scheduler with the tunables of `cfg` (`sched.*`) for a device
    /// holding `device_depth` requests; `cfg` must be valid.
    pub fn new(cfg: &SchedConfig, device_depth: u32) -> Bfq {
        Bfq {
            slots: Slots::default(),
            queues: BTreeMap::new(),
            vtime: 0,
            active: None,
            pass: VecDeque::new(),
            max_budget: cfg.bfq_max_budget,
            timeout: cfg.bfq_timeout,
            slice_idle: cfg.slice_idle,
            hw_tag: device_depth > HW_QUEUE_THRESHOLD,
            in_driver: 0,
            burst: Burst::default(),
            tags: cfg.nr_requests_for(device_depth),
            low_latency: cfg.bfq_low_latency,
            max: max_sectors(cfg),
            merge: cfg.merge,
        }
    }

    fn min_budget(&self) -> u32 {
        self.max_budget / 32
    }

    fn vt(sectors: u64, weight: u64) -> u64 {
        (sectors << VT_SHIFT) / weight
    }

    /// Busy queues (`bfq_tot_busy_queues`) and, of them, the raised ones
    /// (`wr_busy_queues`).
    fn busy(&self) -> (u32, u32) {
        let (mut all, mut wr) = (0, 0);
        for q in self.queues.values().filter(|q| q.backlogged) {
            all += 1;
            wr += (q.wr_coeff > 1) as u32;
        }
        (all, wr)
    }

    /// `bfq_asymmetric_scenario` for queue `key`: the weights of the
    /// queues in the weights tree differ and `key`'s is not the smallest
    /// (one class, no groups here).
    fn asymmetric(&self, key: u64) -> bool {
        let w = self.queues[&key].weight();
        let mut min = u64::MAX;
        let mut max = 0;
        for q in self.queues.values().filter(|q| q.weighed()) {
            min = min.min(q.weight());
            max = max.max(q.weight());
        }
        min < max && w > min
    }

    /// `bfq_better_to_idle` for sync queue `key`.
    fn better_to_idle(&self, key: u64) -> bool {
        if self.slice_idle.0 == 0 || key == ASYNC {
            return false;
        }
        let q = &self.queues[&key];
        let (busy, wr_busy) = self.busy();
        // `idling_boosts_thr_without_issues` on a non-rotational device:
        // only without command queueing, for a sequential queue.
        let boosts = !self.hw_tag && !q.seeky() && wr_busy == 0;
        // `idling_needed_for_service_guarantees`.
        let needed = (q.wr_coeff > 1 && (wr_busy < busy || self.in_driver >= q.dispatched + 4))
            || self.asymmetric(key)
            || busy == 1;
        boosts || needed
    }

    /// The budget a queue is given, at least the size of its next request.
    fn fit_budget(&mut self, key: u64) {
        let q = self.queues.get_mut(&key).expect("queue exists");
        if let Some(id) = q.q.clook(q.pos) {
            let need = self.slots.get(id).r.sectors;
            q.budget = q.budget.max(need);
        }
    }

    /// End the in-service queue's turn (`bfq_bfqq_expire`): charge, adapt
    /// the budget, re-queue.
    fn expire(&mut self, why: Expiry, now: SimTime) {
        let Some(a) = self.active.take() else { return };
        let min_budget = self.min_budget();
        let max_budget = self.max_budget;
        let backlogged_weight: u64 = self
            .queues
            .values()
            .filter(|q| q.backlogged)
            .map(BfqQueue::weight)
            .sum::<u64>()
            .max(1);
        let slice_idle = self.slice_idle;
        let low_latency = self.low_latency;
        let q = self.queues.get_mut(&a.key).expect("queue exists");
        // `bfq_bfqq_served`.
        q.service_from_backlogged += a.served as u64;
        q.finish = q.start + Self::vt(a.served as u64, q.weight());
        self.vtime += ((a.served as u64) << VT_SHIFT) / backlogged_weight;
        if q.wr_coeff == 1 {
            q.wr_start = now;
        }
        q.budget = if a.key == ASYNC {
            max_budget
        } else if q.wr_coeff > 1 {
            2 * min_budget
        } else {
            match why {
                Expiry::Exhausted => q.budget.saturating_mul(4).min(max_budget),
                Expiry::Timeout => q.budget.saturating_mul(2).min(max_budget),
                Expiry::Empty => a.served.max(min_budget),
                Expiry::TooIdle if q.dispatched > 0 => q.budget.saturating_mul(2).min(max_budget),
                Expiry::TooIdle if q.budget > 5 * min_budget => q.budget - 4 * min_budget,
                Expiry::TooIdle => min_budget,
                Expiry::Preempted => q.budget,
            }
        };
        // Emptied, its request pattern may be isochronous: when it may next
        // become busy and be soft real-time, now or once its requests in
        // the device complete (`bfq_bfqq_expire`).
        if low_latency && q.q.is_empty() && a.key != ASYNC {
            if q.dispatched == 0 {
                q.soft_rt_next_start = q.softrt_next_start(now, slice_idle);
            } else {
                q.softrt_update = true;
            }
        }
        if q.q.is_empty() {
            q.backlogged = false;
            if q.dispatched == 0 {
                q.idle_since = Some(now);
            }
        } else {
            q.start = q.finish;
            q.finish = q.start + Self::vt(q.budget as u64, q.weight());
        }
    }

    /// B-WF2Q+: the eligible backlogged queue with the smallest finish time.
    fn select(&mut self, now: SimTime) -> Option<u64> {
        let min_start = self
            .queues
            .values()
            .filter(|q| q.backlogged)
            .map(|q| q.start)
            .min()?;
        if min_start > self.vtime {
            self.vtime = min_start;
        }
        let v = self.vtime;
        let key = self
            .queues
            .iter()
            .filter(|(_, q)| q.backlogged && q.start <= v)
            .min_by_key(|(k, q)| (q.finish, **k))
            .map(|(k, _)| *k)?;
        self.fit_budget(key);
        self.active = Some(InService {
            key,
            served: 0,
            timeout: now + self.timeout,
            fifo_checked: false,
            idle_until: None,
        });
        Some(key)
    }

    /// `bfq_handle_burst` for a sync queue created at `now`, called when
    /// a burst is running or no queue is busy.
    fn handle_burst(&mut self, key: u64, now: SimTime) {
        let b = &mut self.burst;
        let q = self.queues.get_mut(&key).expect("queue exists");
        if b.last_ins.is_none_or(|t| now > t + BURST_INTERVAL) {
            b.large = false;
            b.size = 1;
            b.members.clear();
            b.members.push(key);
        } else if b.large {
            q.in_large_burst = true;
        } else {
            b.size += 1;
            if b.size == LARGE_BURST_THRESH {
                b.large = true;
                q.in_large_burst = true;
                for k in std::mem::take(&mut b.members) {
                    self.queues
                        .get_mut(&k)
                        .expect("burst member")
                        .in_large_burst = true;
                }
                self.burst.members.push(key);
            } else {
                b.members.push(key);
            }
        }
        self.burst.last_ins = Some(now);
    }

    /// `bfq_bfqq_handle_idle_busy_switch` with
    /// `bfq_update_bfqq_wr_on_rq_arrival` (interactive raising only).
    fn idle_busy_switch(&mut self, key: u64, now: SimTime) {
        let min_budget = self.min_budget();
        let vtime = self.vtime;
        let q = self.queues.get_mut(&key).expect("queue exists");
        let idle_long = q.dispatched == 0 && q.idle_since.is_none_or(|t| now > t + WR_MIN_IDLE);
        let interactive = !q.in_large_burst && idle_long;
        // Soft real-time: not totally seeky, not in a large burst, nothing
        // in the device, and it has received little enough since it last
        // became busy (`soft_rt_next_start` passed).
        let soft_rt = key != ASYNC
            && !q.totally_seeky()
            && !q.in_large_burst
            && now > q.soft_rt_next_start
            && q.dispatched == 0;
        if !q.just_created && idle_long && q.idle_since.is_some_and(|t| now > t + BURST_FORGET) {
            q.in_large_burst = false;
        }
        q.just_created = false;
        let old = q.wr_coeff;
        // `bfq_update_bfqq_wr_on_rq_arrival`.
        if !self.low_latency {
            // No raising; the rest of the activation as below.
        } else if old == 1 && key != ASYNC && (interactive || soft_rt) {
            if interactive {
                q.wr_service = 0;
                q.wr_coeff = WR_COEFF;
                q.wr_max_time = WR_DURATION;
            } else {
                q.wr_start_at_switch_to_srt = None;
                q.wr_coeff = WR_COEFF * SOFTRT_WEIGHT_FACTOR;
                q.wr_max_time = WR_RT_MAX_TIME;
            }
            q.budget = q.budget.min(2 * min_budget);
        } else if old > 1 {
            if interactive {
                q.wr_coeff = WR_COEFF;
                q.wr_max_time = WR_DURATION;
            } else if q.in_large_burst {
                q.wr_coeff = 1;
            } else if soft_rt {
                // (Re)charged as soft real-time: an interactive raising
                // in progress resumes once this one ends.
                if q.wr_max_time != WR_RT_MAX_TIME {
                    q.wr_start_at_switch_to_srt = Some(q.wr_start);
                    q.wr_max_time = WR_RT_MAX_TIME;
                    q.wr_coeff = WR_COEFF * SOFTRT_WEIGHT_FACTOR;
                }
                q.wr_start = now;
            }
        }
        if old == 1 || q.wr_coeff == 1 || interactive {
            q.wr_start = now;
        }
        q.last_idle_bklogged = now;
        q.service_from_backlogged = 0;
        q.softrt_update = false;
        q.backlogged = true;
        q.start = q.finish.max(vtime);
        q.finish = q.start + Self::vt(q.budget as u64, q.weight());
        // Preempt the queue in service if this one weighs more, or if the
        // one in service is no longer worth idling for.
        if let Some(a) = self.active.filter(|a| a.key != key) {
            let w = self.queues[&key].weight();
            if w > self.queues[&a.key].weight() || !self.better_to_idle(a.key) {
                self.expire(Expiry::Preempted, now);
            }
        }
    }

    /// `bfq_update_wr_data` after a dispatch of the queue in service.
    fn update_wr_data(&mut self, key: u64, now: SimTime) {
        let q = self.queues.get_mut(&key).expect("queue exists");
        if q.wr_coeff == 1 {
            return;
        }
        let end = |q: &mut BfqQueue| {
            // `bfq_bfqq_end_wr`: after interactive raising the queue may
            // be soft real-time at once.
            if q.wr_max_time != WR_RT_MAX_TIME {
                q.soft_rt_next_start = now;
            }
            q.wr_coeff = 1;
            q.wr_start = now;
        };
        if q.in_large_burst {
            end(q);
        } else if now > q.wr_start + q.wr_max_time {
            match q.wr_start_at_switch_to_srt {
                // Soft real-time ending within the interactive period it
                // interrupted: back to that (`switch_back_to_interactive_wr`).
                Some(t) if q.wr_max_time == WR_RT_MAX_TIME && now <= t + WR_DURATION => {
                    q.wr_coeff = WR_COEFF;
                    q.wr_max_time = WR_DURATION;
                    q.wr_start = t;
                }
                _ => end(q),
            }
        }
        if q.wr_coeff > 1 && q.wr_max_time != WR_RT_MAX_TIME && q.wr_service > MAX_SERVICE_FROM_WR {
            end(q);
        }
    }
}

impl IoScheduler for Bfq {
    fn name(&self) -> &'static str {
        "bfq"
    }
    fn add(&mut self, r: SchedReq, now: SimTime, merged: &mut Vec<(u32, u32)>) {
        if r.op == IoOp::Flush {
            self.pass.push_back(r);
            return;
        }
        let key = key_of(&r);
        let deadline = fifo_deadline(key, now);
        let init_budget = if key == ASYNC {
            self.max_budget
        } else {
            2 * self.max_budget / 3
        };
        let mut created = false;
        let q = self.queues.entry(key).or_insert_with(|| {
            created = key != ASYNC;
            BfqQueue {
                q: DirQueue::default(),
                pos: 0,
                budget: init_budget,
                start: 0,
                finish: 0,
                backlogged: false,
                wr_coeff: 1,
                wr_start: now,
                wr_service: 0,
                wr_max_time: WR_DURATION,
                wr_start_at_switch_to_srt: None,
                // `bfq_init_bfqq`: no bandwidth consumed so far.
                soft_rt_next_start: now,
                last_idle_bklogged: now,
                service_from_backlogged: 0,
                softrt_update: false,
                idle_since: None,
                dispatched: 0,
                in_large_burst: false,
                just_created: created,
                seek_history: 1,
                last_pos: 0,
            }
        });
        let merge = self.merge.then_some(self.max);
        if let Added::Merged(_) = q.q.add(&mut self.slots, r, deadline, key, merge, merged) {
            return;
        }
        // `bfq_update_io_seektime`, then `last_request_pos`.
        let dist = r.lba.abs_diff(q.last_pos);
        q.seek_history =
            (q.seek_history << 1) | (dist > SEEK_THR && r.sectors < SECT_THR_NONROT) as u32;
        q.last_pos = r.end();
        if created && (self.burst.size > 0 || self.busy().0 == 0) {
            self.handle_burst(key, now);
        }
        let q = self.queues.get_mut(&key).expect("queue exists");
        if !q.backlogged {
            self.idle_busy_switch(key, now);
        } else {
            if self.low_latency
                && q.wr_coeff == 1
                && !r.is_sync()
                && now > q.wr_start + WR_MIN_INTER_ARR_ASYNC
            {
                q.wr_coeff = WR_COEFF;
                q.wr_service = 0;
            }
            if q.wr_coeff == 1 {
                q.wr_start = now;
            }
        }
        if let Some(a) = self.active.as_mut().filter(|a| a.key == key) {
            // A request of the queue it waits for ends the wait
            // (`bfq_rq_enqueued`).
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
            let q = &self.queues[&a.key];
            if q.q.is_empty() {
                // `bfq_select_queue`: the device is held for an emptied
                // queue while its timer runs, or while its requests are
                // in the device and idling is better.
                match a.idle_until {
                    Some(t) if now < t => return None,
                    Some(_) => self.expire(Expiry::TooIdle, now),
                    None if q.dispatched > 0 && self.better_to_idle(a.key) => return None,
                    None => self.expire(Expiry::Empty, now),
                }
                continue;
            }
            if now >= a.timeout {
                self.expire(Expiry::Timeout, now);
                continue;
            }
            let q = self.queues.get_mut(&a.key).expect("queue exists");
            let id = match q.q.expired(now) {
                Some(e) if !a.fifo_checked => {
                    a.fifo_checked = true;
                    e
                }
                _ => q.q.clook(q.pos).expect("non-empty"),
            };
            // `bfq_serv_to_charge`.
            let mut sectors = self.slots.get(id).r.sectors;
            if a.key == ASYNC && q.wr_coeff == 1 && !self.asymmetric(a.key) {
                sectors = sectors.saturating_mul(ASYNC_CHARGE);
            }
            let q = self.queues.get_mut(&a.key).expect("queue exists");
            if a.served > 0 && a.served as u64 + sectors as u64 > q.budget as u64 {
                self.active = Some(a);
                self.expire(Expiry::Exhausted, now);
                continue;
            }
            let s = self.slots.remove(id);
            q.q.remove(&s);
            q.pos = s.r.end();
            q.dispatched += 1;
            if q.wr_coeff > 1 {
                q.wr_service += sectors as u64;
            }
            self.in_driver += 1;
            a.served = a.served.saturating_add(sectors);
            self.active = Some(a);
            self.update_wr_data(a.key, now);
            return Some(s.r);
        }
    }

    /// `bfq_completed_request`.
    fn completed(&mut self, r: &SchedReq, now: SimTime) {
        if r.op == IoOp::Flush {
            return;
        }
        let key = key_of(r);
        self.in_driver = self.in_driver.saturating_sub(1);
        let Some(q) = self.queues.get_mut(&key) else {
            return;
        };
        q.dispatched = q.dispatched.saturating_sub(1);
        if q.dispatched == 0 && !q.backlogged {
            q.idle_since = Some(now);
        }
        // The update `bfq_bfqq_expire` deferred until the queue's requests
        // completed, unless it is in interactive raising.
        if q.softrt_update && q.dispatched == 0 && q.q.is_empty() && q.wr_coeff != WR_COEFF {
            q.soft_rt_next_start = q.softrt_next_start(now, self.slice_idle);
            q.softrt_update = false;
        }
        let Some(a) = self.active.filter(|a| a.key == key) else {
            return;
        };
        let q = &self.queues[&key];
        let (empty, dispatched, seeky, wr) =
            (q.q.is_empty(), q.dispatched, q.seeky(), q.wr_coeff > 1);
        if empty && self.better_to_idle(key) {
            if dispatched == 0 {
                // `bfq_arm_slice_timer`.
                let mut sl = self.slice_idle;
                if seeky && !wr && !self.asymmetric(key) {
                    sl = sl.min(MIN_TT);
                } else if wr {
                    sl = sl.max(WR_MIN_IDLE_SLICE);
                }
                self.active = Some(InService {
                    idle_until: Some(now + sl),
                    ..a
                });
            }
        } else if now >= a.timeout {
            self.expire(Expiry::Timeout, now);
        } else if empty {
            self.expire(Expiry::Empty, now);
        }
    }

    fn wake_at(&self) -> Option<SimTime> {
        self.active.and_then(|a| a.idle_until)
    }

    /// `bfq_limit_depth` with `word_depths[raised][sync]`.
    fn limit_depth(&self, op: IoOp, sync: bool) -> u32 {
        if op == IoOp::Read {
            return u32::MAX;
        }
        let raised = self.busy().1 > 0;
        let sync = crate::workload::op_is_sync(op, sync);
        let sixteenths = match (raised, sync) {
            (false, false) => 8,
            (false, true) => 12,
            (true, false) => 3,
            (true, true) => 6,
        };
        (self.tags as u64 * sixteenths / 16).max(1) as u32
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
    fn equal_weights_share_sectors_fairly() {
        let cfg = SchedConfig {
            bfq_max_budget: 64,
            ..Default::default()
        };
        let mut s = Bfq::new(&cfg, 32);
        let mut m = vec![];
        // Process 1 issues big (32-sector) reads, process 2 small (8-sector) ones.
        let mut id = 0;
        for i in 0..40u64 {
            id += 1;
            s.add(
                req(id, IoOp::Read, 100_000 + 64 * i, 32, 0, 1),
                SimTime(0),
                &mut m,
            );
            id += 1;
            s.add(req(id, IoOp::Read, 64 * i, 8, 0, 2), SimTime(0), &mut m);
        }
        let mut sect = [0u64; 3];
        for _ in 0..40 {
            let r = s.dispatch(SimTime(0)).unwrap();
            sect[r.stream as usize] += r.sectors as u64;
        }
        // Fair in sectors (not in requests): within one budget of each other.
        let diff = sect[1].abs_diff(sect[2]);
        assert!(diff <= 64, "{sect:?}");
        assert!(sect[1] > 0 && sect[2] > 0);
    }

    const MS: u64 = 1_000_000;

    /// Dispatch one request at `now` and complete it at once.
    fn step(s: &mut Bfq, now: SimTime) -> Option<SchedReq> {
        let r = s.dispatch(now)?;
        s.completed(&r, now);
        Some(r)
    }

    /// Queue A (stream 1) has been served past its raising period, so it
    /// runs at its plain weight; at 4 s process B (stream 2) starts.
    fn old_a_new_b(n: u64) -> (Bfq, SimTime) {
        let cfg = SchedConfig {
            bfq_max_budget: 2048,
            ..Default::default()
        };
        let mut s = Bfq::new(&cfg, 32);
        let mut m = vec![];
        let mut id = 0;
        for i in 0..n {
            id += 1;
            s.add(req(id, IoOp::Read, 128 * i, 64, 0, 1), SimTime(0), &mut m);
        }
        assert_eq!(s.queues[&1].wr_coeff, WR_COEFF, "a new queue is raised");
        let t = SimTime(4000 * MS);
        step(&mut s, t).unwrap();
        assert_eq!(s.queues[&1].wr_coeff, 1, "raised for 3.75 s only");
        for i in 0..n {
            id += 1;
            s.add(
                req(id, IoOp::Read, 10_000_000 + 128 * i, 64, 0, 2),
                t,
                &mut m,
            );
        }
        (s, t)
    }

    /// `bfq_update_bfqq_wr_on_rq_arrival`: a new sync queue gets 30 x the
    /// weight and preempts the queue in service; while both are
    /// backlogged it receives about 30/31 of the sectors.
    #[test]
    fn a_new_queue_is_raised_and_served_in_proportion() {
        let (mut s, t) = old_a_new_b(4000);
        let b = &s.queues[&2];
        assert_eq!(b.wr_coeff, WR_COEFF);
        assert_eq!(b.budget, 2 * s.min_budget(), "raised budget");
        assert_eq!(s.active.map(|a| a.key), None, "A was preempted");
        // 1800 x 64 sectors: B stays under `max_service_from_wr`.
        let mut sect = [0u64; 3];
        for _ in 0..1800 {
            let r = step(&mut s, t).unwrap();
            sect[r.stream as usize] += r.sectors as u64;
        }
        let share = sect[2] as f64 / (sect[1] + sect[2]) as f64;
        assert!(
            sect[1] > 0 && (0.94..0.99).contains(&share),
            "{sect:?} {share}"
        );
        assert_eq!(s.queues[&2].wr_coeff, WR_COEFF);
        // The same start without raising (B in a large burst) shares equally.
        let (mut s, t) = old_a_new_b(4000);
        let b = s.queues.get_mut(&2).unwrap();
        b.wr_coeff = 1;
        b.in_large_burst = true;
        let mut sect = [0u64; 3];
        for _ in 0..1800 {
            let r = step(&mut s, t).unwrap();
            sect[r.stream as usize] += r.sectors as u64;
        }
        let share = sect[2] as f64 / (sect[1] + sect[2]) as f64;
        assert!((0.4..0.6).contains(&share), "{sect:?} {share}");
    }

    /// `bfq_update_wr_data`: raising ends at the first dispatch after
    /// `bfq_wr_duration`, or after `max_service_from_wr` sectors; a queue
    /// idle for 2 s is raised again when it becomes busy.
    #[test]
    fn raising_ends_after_its_duration_or_its_service() {
        // No idling, so that an emptied queue is expired at once.
        let cfg = SchedConfig {
            slice_idle: Dur::ZERO,
            ..Default::default()
        };
        let mut s = Bfq::new(&cfg, 32);
        let mut m = vec![];
        s.add(req(1, IoOp::Read, 0, 8, 0, 1), SimTime(0), &mut m);
        s.add(req(2, IoOp::Read, 800, 8, 0, 1), SimTime(0), &mut m);
        step(&mut s, SimTime(0)).unwrap();
        assert_eq!(s.queues[&1].wr_coeff, WR_COEFF);
        assert_eq!(WR_DURATION, Dur::from_ms(3750));
        step(&mut s, SimTime(3750 * MS)).unwrap();
        assert_eq!(s.queues[&1].wr_coeff, WR_COEFF, "not yet");
        s.add(
            req(3, IoOp::Read, 1600, 8, 0, 1),
            SimTime(3750 * MS),
            &mut m,
        );
        step(&mut s, SimTime(3750 * MS + 1)).unwrap();
        assert_eq!(s.queues[&1].wr_coeff, 1, "ended");
        // Idle (nothing queued, nothing in the device) for 2 s: raised again.
        let t = SimTime(3750 * MS + 1);
        assert_eq!(s.queues[&1].idle_since, Some(t));
        s.add(
            req(4, IoOp::Read, 0, 8, 0, 1),
            t + Dur::from_ms(1999),
            &mut m,
        );
        // Idle less than 2 s: not interactive, but soft real-time (it
        // received 8 sectors in 2 s).
        assert_eq!(
            s.queues[&1].wr_coeff,
            WR_COEFF * SOFTRT_WEIGHT_FACTOR,
            "idle less than 2 s"
        );
        let t2 = t + Dur::from_ms(1999);
        step(&mut s, t2).unwrap();
        s.add(
            req(5, IoOp::Read, 0, 8, 0, 1),
            t2 + Dur::from_ms(2001),
            &mut m,
        );
        assert_eq!(s.queues[&1].wr_coeff, WR_COEFF, "idle 2 s: interactive");
        // Service: 120000 raised sectors end it whatever the time.
        let mut s = Bfq::new(&cfg, 32);
        for i in 0..300u32 {
            s.add(
                req(i, IoOp::Read, 1024 * i as u64, 512, 0, 1),
                SimTime(0),
                &mut m,
            );
        }
        let mut got = 0u64;
        while s.queues[&1].wr_coeff > 1 {
            got += step(&mut s, SimTime(0)).unwrap().sectors as u64;
        }
        assert_eq!(got, (MAX_SERVICE_FROM_WR / 512 + 1) * 512);
    }

    /// Soft real-time raising (`bfq_bfqq_softrt_next_start`,
    /// `bfq_update_bfqq_wr_on_rq_arrival`): a process reading 8 sectors
    /// every 20 ms (400 sectors a second, under `bfq_wr_max_softrt_rate`'s
    /// 7,000) becomes busy after its `soft_rt_next_start` every time and is
    /// raised 30 x 100, recharged at each request, and keeps it past the
    /// interactive period; one reading 512 sectors every 20 ms (25,600 a
    /// second) is not, and is back to its weight once the interactive
    /// raising ends. Stopped, the soft real-time raising ends 300 ms after
    /// its last recharge (`bfq_wr_rt_max_time`).
    #[test]
    fn a_low_rate_periodic_reader_is_soft_real_time() {
        let cfg = SchedConfig {
            slice_idle: Dur::ZERO,
            ..Default::default()
        };
        let run = |sectors: u32| {
            let mut s = Bfq::new(&cfg, 32);
            let mut m = vec![];
            let mut t = SimTime(0);
            for i in 0..250u32 {
                t = SimTime(i as u64 * 20 * MS);
                // Sequential: a totally seeky queue is never soft real-time.
                let lba = sectors as u64 * i as u64;
                s.add(req(i, IoOp::Read, lba, sectors, 0, 1), t, &mut m);
                step(&mut s, t).unwrap();
            }
            (s, t)
        };
        let (mut s, t) = run(8);
        assert_eq!(t, SimTime(4980 * MS), "past the 3.75 s interactive period");
        assert_eq!(s.queues[&1].wr_coeff, WR_COEFF * SOFTRT_WEIGHT_FACTOR);
        assert_eq!(s.queues[&1].wr_max_time, WR_RT_MAX_TIME);
        let (fast, _) = run(512);
        assert_eq!(fast.queues[&1].wr_coeff, 1);
        // It reads 4,096 sectors at once: recharged on arrival, but at
        // 7,000 sectors a second that is 585 ms of its rate, so 301 ms
        // later it is not soft real-time, and the dispatch then, 300 ms
        // after the last recharge, ends the raising (the interactive
        // period it interrupted is over).
        let mut m = vec![];
        let late = t + Dur::from_ms(20);
        s.add(req(999, IoOp::Read, 2000, 4096, 0, 1), late, &mut m);
        assert_eq!(
            s.queues[&1].wr_coeff,
            WR_COEFF * SOFTRT_WEIGHT_FACTOR,
            "recharged"
        );
        step(&mut s, late).unwrap();
        let later = late + Dur::from_ms(301);
        s.add(req(1000, IoOp::Read, 6096, 8, 0, 1), later, &mut m);
        step(&mut s, later).unwrap();
        assert_eq!(s.queues[&1].wr_coeff, 1, "ended");
    }

    /// `bfq_handle_burst`: of queues created within 180 ms of each other,
    /// the 8th marks the burst large: none of them is raised from then on.
    #[test]
    fn queues_created_in_a_large_burst_are_not_raised() {
        let mut s = Bfq::new(&SchedConfig::default(), 32);
        let mut m = vec![];
        for k in 1..=9u32 {
            s.add(
                req(k, IoOp::Read, 1000 * k as u64, 8, 0, k),
                SimTime(k as u64 * 10 * MS),
                &mut m,
            );
        }
        for k in 1..=9u64 {
            assert!(s.queues[&k].in_large_burst, "queue {k}");
        }
        // Their raising ends at their first dispatch.
        for _ in 0..9 {
            step(&mut s, SimTime(100 * MS)).unwrap();
        }
        assert!(s.queues.values().all(|q| q.wr_coeff == 1));
        // Seven created together are not a large burst: all raised.
        let mut s = Bfq::new(&SchedConfig::default(), 32);
        for k in 1..=7u32 {
            s.add(
                req(k, IoOp::Read, 1000 * k as u64, 8, 0, k),
                SimTime(0),
                &mut m,
            );
        }
        assert!(s
            .queues
            .values()
            .all(|q| q.wr_coeff == WR_COEFF && !q.in_large_burst));
    }

    /// `bfq_better_to_idle` on a queueing SSD: with equal weights an
    /// emptied queue gives the device up at once when another is busy;
    /// a raised queue among non-raised ones keeps it (20 ms at least,
    /// `bfq_arm_slice_timer`), and its next request is served at once.
    #[test]
    fn idling_for_a_raised_queue_only() {
        let (mut s, t) = old_a_new_b(100);
        // Drain B down to its last request while A stays backlogged.
        let b = s.queues.get_mut(&2).unwrap();
        let ids: Vec<u32> = (0..99).map(|i| 101 + i as u32).collect();
        for id in ids {
            let slot = s.slots.remove(id);
            b.q.remove(&slot);
        }
        let r = s.dispatch(t).unwrap();
        assert_eq!(r.stream, 2, "B first (it preempted A)");
        assert!(
            s.dispatch(t).is_none(),
            "held for B while its read is in the device"
        );
        s.completed(&r, t + Dur::from_ms(1));
        assert_eq!(
            s.wake_at(),
            Some(t + Dur::from_ms(21)),
            "20 ms for a raised queue"
        );
        assert!(s.dispatch(t + Dur::from_ms(10)).is_none(), "idling");
        let mut m = vec![];
        s.add(
            req(9999, IoOp::Read, 12_000_000, 64, 0, 2),
            t + Dur::from_ms(10),
            &mut m,
        );
        assert_eq!(s.dispatch(t + Dur::from_ms(10)).unwrap().id, 9999);
        // Equal weights (B's raising ended): no idling for B while A is
        // busy, A goes on at once; A, alone then, is idled for (8 ms).
        let (mut s, t) = old_a_new_b(2);
        s.queues.get_mut(&2).unwrap().wr_coeff = 1;
        let mut streams = vec![];
        while let Some(r) = s.dispatch(t) {
            assert_eq!(s.wake_at(), None);
            streams.push(r.stream);
            s.completed(&r, t);
        }
        assert_eq!(streams, vec![2, 2, 1]);
        assert_eq!(s.wake_at(), Some(t + Dur::from_ms(8)));
    }

    /// `bfq_serv_to_charge`: the async queue pays 3 x its sectors; raised
    /// (a busy async queue's request arriving 500 ms after its previous
    /// one, `bfq_add_request`) it pays its sectors.
    #[test]
    fn async_charge_unless_raised() {
        let mut s = Bfq::new(&SchedConfig::default(), 32);
        let mut m = vec![];
        for i in 0..3u32 {
            s.add(
                req(i, IoOp::Write, 100 * i as u64, 8, 0, 9),
                SimTime(0),
                &mut m,
            );
        }
        s.dispatch(SimTime(0)).unwrap();
        assert_eq!(s.active.unwrap().served, 24);
        s.add(
            req(7, IoOp::Write, 5000, 8, 0, 9),
            SimTime(501 * MS),
            &mut m,
        );
        assert_eq!(s.queues[&ASYNC].wr_coeff, WR_COEFF);
        // (Its budget timed out meanwhile: a new turn.)
        s.dispatch(SimTime(501 * MS)).unwrap();
        assert_eq!(s.active.unwrap().served, 8);
    }

    /// `bfq_limit_depth`: async requests may find half the tags taken,
    /// sync writes three quarters, reads all; while a queue is raised,
    /// 3/16 and 6/16.
    #[test]
    fn depth_limits_by_kind_and_raising() {
        let cfg = SchedConfig {
            kind: "bfq".into(),
            ..Default::default()
        };
        let mut s = Bfq::new(&cfg, 32);
        assert_eq!(s.tags, 64, "2 x the device's 32 tags");
        assert_eq!(s.limit_depth(IoOp::Read, false), u32::MAX);
        assert_eq!(s.limit_depth(IoOp::Write, false), 32);
        assert_eq!(s.limit_depth(IoOp::Trim, false), 32);
        assert_eq!(s.limit_depth(IoOp::Write, true), 48);
        let mut m = vec![];
        s.add(req(1, IoOp::Read, 0, 8, 0, 1), SimTime(0), &mut m);
        assert_eq!(s.busy().1, 1, "a new queue is raised");
        assert_eq!(s.limit_depth(IoOp::Write, false), 12);
        assert_eq!(s.limit_depth(IoOp::Write, true), 24);
    }
}
