//! BFQ, budget fair queueing (Valente & Checconi; Linux block/bfq-iosched.c), in a
//! simplified but faithful form.
//!
//! Each process (request `stream`) has a sync queue for its reads and
//! `REQ_SYNC` writes; async writes and trims of all processes share one
//! async queue, which is charged three times the sectors it is served
//! (`bfq_serv_to_charge` with `bfq_async_charge_factor`). A queue in service owns the
//! device until it has received its *budget* (in sectors), until it runs empty,
//! or until `bfq_timeout` has passed. Queues are scheduled by B-WF2Q+ on sector
//! service: every backlogged queue has a virtual start S and finish F = S +
//! budget / weight; the scheduler serves the eligible queue (S <= V) with the
//! smallest F, and the system virtual time V advances by service / (sum of the
//! weights of backlogged queues). When a queue's service ends it is charged
//! what it received (F = S + served / weight); a queue that stays backlogged
//! starts its next budget at its old F, one that became backlogged again starts
//! at max(V, F). Inside a queue requests go out in ascending sector order from
//! the last position (wrapping), an expired FIFO head (125 ms sync, 250 ms async:
//! `bfq_fifo_expire`) once per budget first.
//!
//! Budget feedback (`__bfq_bfqq_recalc_budget`, sync queues): budget exhausted
//! -> x4, timed out -> x2 (both capped at `bfq_max_budget`), emptied -> what was
//! served (at least `bfq_max_budget / 32`). New sync queues start at 2/3 of the
//! maximum; the async queue always gets the maximum.
//!
//! Not modelled: weight raising (`bfq_bfqq_handle_idle_busy_switch`: a sync
//! queue that was idle 2 s or is new gets 30 x weight for about 3 s on an
//! SSD, and then idling does apply to it), and with it idling: on a
//! non-rotational device with queueing and equal weights BFQ idles an
//! emptied sync queue only when it is the only busy one
//! (`idling_needed_for_service_guarantees`), which delays nobody; cgroups,
//! I/O priority classes, injection, queue merging, and the depth limits on
//! async and sync-write requests (`bfq_limit_depth`).

use super::SchedConfig;
use super::{max_sectors, Added, DirQueue, Slots};
use crate::workload::IoOp;
use ssd_core::sched::{IoScheduler, SchedReq};
use ssd_core::units::{Dur, SimTime};
use std::collections::{BTreeMap, VecDeque};

use super::cfq::{fifo_deadline, key_of, ASYNC};
/// Default ioprio weight of every queue (BFQ_DEFAULT_QUEUE_IOPRIO maps to 100).
const WEIGHT: u64 = 100;
/// `bfq_async_charge_factor`: the service an async request is charged, per
/// sector (no queue is weight-raised and weights are equal here, the
/// cases where BFQ charges async I/O its plain size).
const ASYNC_CHARGE: u32 = 3;
/// Virtual-time fixed point: sectors << VT_SHIFT.
const VT_SHIFT: u32 = 16;

#[derive(Debug)]
struct BfqQueue {
    q: DirQueue,
    pos: u64,
    budget: u32,
    start: u64,
    finish: u64,
    backlogged: bool,
}

#[derive(Clone, Copy, Debug)]
struct InService {
    key: u64,
    served: u32,
    timeout: SimTime,
    fifo_checked: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Expiry {
    Exhausted,
    Timeout,
    Empty,
}

/// The BFQ scheduler.
#[derive(Debug)]
pub struct Bfq {
    slots: Slots,
    queues: BTreeMap<u64, BfqQueue>,
    /// Backlogged queues not in service, by (finish, key), and their starts.
    vtime: u64,
    active: Option<InService>,
    pass: VecDeque<SchedReq>,
    max_budget: u32,
    timeout: Dur,
    max: u32,
    merge: bool,
}

impl Bfq {
    /// A BFQ scheduler with the tunables of `cfg` (`sched.*`); `cfg` must be valid.
    pub fn new(cfg: &SchedConfig) -> Bfq {
        Bfq {
            slots: Slots::default(),
            queues: BTreeMap::new(),
            vtime: 0,
            active: None,
            pass: VecDeque::new(),
            max_budget: cfg.bfq_max_budget,
            timeout: cfg.bfq_timeout,
            max: max_sectors(cfg),
            merge: cfg.merge,
        }
    }

    fn min_budget(&self) -> u32 {
        self.max_budget / 32
    }

    fn vt(sectors: u64) -> u64 {
        (sectors << VT_SHIFT) / WEIGHT
    }

    /// The budget a queue is given, at least the size of its next request.
    fn fit_budget(&mut self, key: u64) {
        let q = self.queues.get_mut(&key).expect("queue exists");
        if let Some(id) = q.q.clook(q.pos) {
            let need = self.slots.get(id).r.sectors;
            q.budget = q.budget.max(need);
        }
    }

    /// End the in-service queue's turn: charge, adapt the budget, re-queue.
    fn expire(&mut self, why: Expiry) {
        let Some(a) = self.active.take() else { return };
        let min_budget = self.min_budget();
        let max_budget = self.max_budget;
        let backlogged_weight: u64 =
            self.queues.values().filter(|q| q.backlogged).count().max(1) as u64 * WEIGHT;
        let q = self.queues.get_mut(&a.key).expect("queue exists");
        q.finish = q.start + Self::vt(a.served as u64);
        self.vtime += ((a.served as u64) << VT_SHIFT) / backlogged_weight;
        q.budget = if a.key == ASYNC {
            max_budget
        } else {
            match why {
                Expiry::Exhausted => q.budget.saturating_mul(4).min(max_budget),
                Expiry::Timeout => q.budget.saturating_mul(2).min(max_budget),
                Expiry::Empty => a.served.max(min_budget),
            }
        };
        if q.q.is_empty() {
            q.backlogged = false;
        } else {
            q.start = q.finish;
            q.finish = q.start + Self::vt(q.budget as u64);
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
        });
        Some(key)
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
        let q = self.queues.entry(key).or_insert_with(|| BfqQueue {
            q: DirQueue::default(),
            pos: 0,
            budget: init_budget,
            start: 0,
            finish: 0,
            backlogged: false,
        });
        let merge = self.merge.then_some(self.max);
        if let Added::Merged(_) = q.q.add(&mut self.slots, r, deadline, key, merge, merged) {
            return;
        }
        if !q.backlogged {
            q.backlogged = true;
            q.start = q.finish.max(self.vtime);
            q.finish = q.start + Self::vt(q.budget as u64);
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
            let q = self.queues.get_mut(&a.key).expect("queue exists");
            if q.q.is_empty() {
                self.expire(Expiry::Empty);
                continue;
            }
            if now >= a.timeout {
                self.expire(Expiry::Timeout);
                continue;
            }
            let id = match q.q.expired(now) {
                Some(e) if !a.fifo_checked => {
                    a.fifo_checked = true;
                    e
                }
                _ => q.q.clook(q.pos).expect("non-empty"),
            };
            // `bfq_serv_to_charge`: an async request costs its queue
            // `bfq_async_charge_factor` (3) times its sectors.
            let mut sectors = self.slots.get(id).r.sectors;
            if a.key == ASYNC {
                sectors = sectors.saturating_mul(ASYNC_CHARGE);
            }
            if a.served > 0 && a.served as u64 + sectors as u64 > q.budget as u64 {
                self.active = Some(a);
                self.expire(Expiry::Exhausted);
                continue;
            }
            let s = self.slots.remove(id);
            q.q.remove(&s);
            q.pos = s.r.end();
            a.served = a.served.saturating_add(sectors);
            self.active = Some(a);
            return Some(s.r);
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

    #[test]
    fn equal_weights_share_sectors_fairly() {
        let cfg = SchedConfig {
            bfq_max_budget: 64,
            ..Default::default()
        };
        let mut s = Bfq::new(&cfg);
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
}
