//! NVMe submission-queue arbitration: the controller's side of a multi-queue
//! host interface.
//!
//! With several flows (`[[flow]]`) on an NVMe interface, each flow has its
//! own submission queue (SQ), as blk-mq gives each hardware context its own
//! queue pair, and the host puts requests in it without an elevator (Linux's
//! `none`; each SQ merges like [`Noop`]). The controller holds at most
//! `host.queue_depth` commands; when a slot frees it fetches the next command
//! by the arbitration the NVMe specification defines (NVMe Base
//! Specification 2.0, section 3.4.4):
//!
//! - **Round robin** (`host.arbitration = "rr"`): the SQs take turns; each
//!   turn fetches up to `host.arbitration_burst` commands from one SQ.
//!   Priority classes are ignored, as the specification has them.
//! - **Weighted round robin with urgent priority class**
//!   (`host.arbitration = "wrr"`): SQs of the urgent class are served first,
//!   round robin among themselves (strict priority); then the high, medium and
//!   low classes share what is left in rounds in which each class may fetch
//!   its weight (`host.wrr_weights`, commands per round: NVMe's HPW, MPW and
//!   LPW plus one), round robin with the burst among the SQs of a class.
//!
//! A flow's slot (its index among the `[[flow]]`s) is carried in the high
//! bits of each request's stream ([`crate::flows::flow_of`]).

use crate::flows::{flow_of, FlowPriority};
use ssd_core::hw::Arbitration;
use ssd_core::sched::{IoScheduler, Noop, SchedReq};
use ssd_core::units::SimTime;

const URGENT: usize = 0;

/// Per-flow submission queues and the controller's arbitration over them.
#[derive(Debug)]
pub struct NvmeQueues {
    sqs: Vec<Noop>,
    arbitration: Arbitration,
    burst: u32,
    /// Commands per round of the high, medium and low classes.
    weights: [u32; 3],
    /// What each of them has left in the current round.
    credits: [u32; 3],
    /// The SQs of each class (urgent, high, medium, low); under round robin
    /// every SQ is in class 0.
    members: [Vec<usize>; 4],
    /// Per class: the SQ whose turn it is (an index into `members`) and the
    /// commands it may still fetch in this turn.
    pos: [usize; 4],
    left: [u32; 4],
    n: usize,
    /// Commands fetched from each SQ.
    fetched: Vec<u64>,
}

impl NvmeQueues {
    /// Queues for flows of the given priority classes (by slot).
    pub fn new(
        classes: &[FlowPriority],
        arbitration: Arbitration,
        burst: u32,
        weights: [u32; 3],
        max_sectors: u32,
        merge: bool,
    ) -> NvmeQueues {
        let mut members: [Vec<usize>; 4] = Default::default();
        for (i, c) in classes.iter().enumerate() {
            let class = match arbitration {
                Arbitration::Rr => 0,
                Arbitration::Wrr => *c as usize,
            };
            members[class].push(i);
        }
        let burst = burst.max(1);
        NvmeQueues {
            sqs: classes
                .iter()
                .map(|_| Noop::new(max_sectors, merge))
                .collect(),
            arbitration,
            burst,
            weights,
            credits: weights,
            members,
            pos: [0; 4],
            left: [burst; 4],
            n: 0,
            fetched: vec![0; classes.len()],
        }
    }

    /// Commands fetched from each SQ so far (by flow slot).
    pub fn fetched(&self) -> &[u64] {
        &self.fetched
    }

    /// Round robin among the SQs of class `c`, each turn at most `burst`.
    fn take_rr(&mut self, c: usize, now: SimTime) -> Option<SchedReq> {
        let m = self.members[c].len();
        if m == 0 {
            return None;
        }
        for _ in 0..=m {
            let s = self.members[c][self.pos[c]];
            if self.left[c] > 0 {
                if let Some(r) = self.sqs[s].dispatch(now) {
                    self.left[c] -= 1;
                    self.fetched[s] += 1;
                    return Some(r);
                }
            }
            self.pos[c] = (self.pos[c] + 1) % m;
            self.left[c] = self.burst;
        }
        None
    }

    fn class_has_work(&self, c: usize) -> bool {
        self.members[c].iter().any(|&s| !self.sqs[s].is_empty())
    }
}

impl IoScheduler for NvmeQueues {
    fn name(&self) -> &'static str {
        match self.arbitration {
            Arbitration::Rr => "nvme-rr",
            Arbitration::Wrr => "nvme-wrr",
        }
    }

    fn add(&mut self, r: SchedReq, now: SimTime, merged: &mut Vec<(u32, u32)>) {
        let s = flow_of(r.stream);
        debug_assert!(s < self.sqs.len(), "request of flow {s} without an SQ");
        let s = s.min(self.sqs.len() - 1);
        let before = self.sqs[s].len();
        self.sqs[s].add(r, now, merged);
        // A merge leaves the queue's length as it was.
        self.n += self.sqs[s].len() - before;
    }

    fn dispatch(&mut self, now: SimTime) -> Option<SchedReq> {
        if self.n == 0 {
            return None;
        }
        let r = match self.arbitration {
            Arbitration::Rr => self.take_rr(0, now),
            Arbitration::Wrr => self.take_rr(URGENT, now).or_else(|| {
                for _ in 0..2 {
                    for k in 0..3 {
                        if self.credits[k] > 0 {
                            if let Some(r) = self.take_rr(k + 1, now) {
                                self.credits[k] -= 1;
                                return Some(r);
                            }
                        }
                    }
                    // The round is over: every class has used its weight or
                    // has nothing to fetch.
                    if !(1..4).any(|c| self.class_has_work(c)) {
                        return None;
                    }
                    self.credits = self.weights;
                }
                None
            }),
        };
        if r.is_some() {
            self.n -= 1;
        }
        r
    }

    fn len(&self) -> usize {
        self.n
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::flows::FLOW_SHIFT;
    use crate::workload::IoOp;

    fn req(id: u32, flow: u32, lba: u64) -> SchedReq {
        SchedReq {
            id,
            op: IoOp::Read,
            lba,
            sectors: 8,
            arrival: SimTime::ZERO,
            stream: flow << FLOW_SHIFT,
            sync: false,
            placement: ssd_core::workload::Placement::NONE,
        }
    }

    /// Fill every flow's SQ with `n` non-contiguous requests, then fetch
    /// `take` commands: the flow of each.
    fn order(q: &mut NvmeQueues, flows: u32, n: u32, take: usize) -> Vec<usize> {
        let mut m = vec![];
        let mut id = 0;
        for f in 0..flows {
            for i in 0..n {
                q.add(
                    req(id, f, (i as u64) * 1000 + f as u64 * 100_000),
                    SimTime::ZERO,
                    &mut m,
                );
                id += 1;
            }
        }
        assert!(m.is_empty());
        (0..take)
            .map(|_| flow_of(q.dispatch(SimTime::ZERO).unwrap().stream))
            .collect()
    }

    #[test]
    fn round_robin_alternates_with_its_burst() {
        let c = [FlowPriority::Medium; 3];
        let mut q = NvmeQueues::new(&c, Arbitration::Rr, 1, [4, 2, 1], 256, true);
        assert_eq!(order(&mut q, 3, 4, 6), [0, 1, 2, 0, 1, 2]);
        let mut q = NvmeQueues::new(&c, Arbitration::Rr, 2, [4, 2, 1], 256, true);
        assert_eq!(order(&mut q, 3, 4, 6), [0, 0, 1, 1, 2, 2]);
    }

    #[test]
    fn round_robin_ignores_priority_classes() {
        let c = [FlowPriority::Urgent, FlowPriority::Low];
        let mut q = NvmeQueues::new(&c, Arbitration::Rr, 1, [4, 2, 1], 256, true);
        assert_eq!(order(&mut q, 2, 3, 4), [0, 1, 0, 1]);
    }

    #[test]
    fn weighted_rounds_follow_the_weights() {
        let c = [FlowPriority::High, FlowPriority::Medium, FlowPriority::Low];
        let mut q = NvmeQueues::new(&c, Arbitration::Wrr, 1, [4, 2, 1], 256, true);
        let o = order(&mut q, 3, 100, 140);
        // Every round of 7 fetches: 4 high, 2 medium, 1 low.
        for round in o.chunks(7) {
            assert_eq!(round, [0, 0, 0, 0, 1, 1, 2]);
        }
        assert_eq!(q.fetched(), &[80, 40, 20]);
    }

    #[test]
    fn urgent_is_strict_priority() {
        let c = [FlowPriority::Low, FlowPriority::Urgent];
        let mut q = NvmeQueues::new(&c, Arbitration::Wrr, 1, [4, 2, 1], 256, true);
        let o = order(&mut q, 2, 5, 10);
        assert_eq!(o, [1, 1, 1, 1, 1, 0, 0, 0, 0, 0]);
    }

    #[test]
    fn an_idle_class_gives_its_share_away() {
        // Only medium and low have work: they share 2:1.
        let c = [FlowPriority::High, FlowPriority::Medium, FlowPriority::Low];
        let mut q = NvmeQueues::new(&c, Arbitration::Wrr, 1, [4, 2, 1], 256, true);
        let mut m = vec![];
        for i in 0..30u32 {
            q.add(req(i, 1 + (i % 2), i as u64 * 1000), SimTime::ZERO, &mut m);
        }
        let o: Vec<usize> = (0..9)
            .map(|_| flow_of(q.dispatch(SimTime::ZERO).unwrap().stream))
            .collect();
        assert_eq!(o, [1, 1, 2, 1, 1, 2, 1, 1, 2]);
        // Everything queued comes out exactly once.
        let rest = std::iter::from_fn(|| q.dispatch(SimTime::ZERO)).count();
        assert_eq!(rest, 21);
        assert_eq!(q.len(), 0);
    }

    #[test]
    fn each_queue_merges_only_its_own_requests() {
        let c = [FlowPriority::Medium; 2];
        let mut q = NvmeQueues::new(&c, Arbitration::Rr, 1, [4, 2, 1], 256, true);
        let mut m = vec![];
        q.add(req(0, 0, 0), SimTime::ZERO, &mut m);
        q.add(req(1, 1, 8), SimTime::ZERO, &mut m);
        assert!(m.is_empty(), "requests of two flows merged");
        q.add(req(2, 0, 8), SimTime::ZERO, &mut m);
        assert_eq!(m, [(0, 2)]);
        assert_eq!(q.len(), 2);
    }
}
