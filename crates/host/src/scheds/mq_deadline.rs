//! blk-mq mq-deadline (block/mq-deadline.c): deadline's tunables and batching,
//! but the next request in sector order is looked up afresh from the end of the
//! last request dispatched in that direction (`latest_pos`), per direction, so
//! requests that arrive ahead of the sweep join the running batch. Flushes go
//! to the dispatch list first. I/O priority classes and `async_depth` are not
//! modelled: every request has the same (best-effort) class.

use super::deadline::{DeadlineCore, NextMode};
use super::SchedConfig;
use ssd_core::sched::{IoScheduler, SchedReq};
use ssd_core::units::SimTime;

/// blk-mq mq-deadline.
#[derive(Debug)]
pub struct MqDeadline {
    core: DeadlineCore,
}

impl MqDeadline {
    /// An mq-deadline scheduler with the tunables of `cfg` (`sched.*`); `cfg` must be valid.
    pub fn new(cfg: &SchedConfig) -> MqDeadline {
        MqDeadline {
            core: DeadlineCore::new(cfg, NextMode::Position),
        }
    }
}

impl IoScheduler for MqDeadline {
    fn name(&self) -> &'static str {
        "mq-deadline"
    }
    fn add(&mut self, r: SchedReq, now: SimTime, merged: &mut Vec<(u32, u32)>) {
        self.core.add(r, now, merged)
    }
    fn dispatch(&mut self, now: SimTime) -> Option<SchedReq> {
        self.core.dispatch(now)
    }
    fn len(&self) -> usize {
        self.core.len()
    }
}

#[cfg(test)]
mod tests {
    use super::super::testutil::*;
    use super::super::Deadline;
    use super::*;
    use crate::workload::IoOp;

    #[test]
    fn late_arrivals_ahead_of_the_sweep_join_the_batch() {
        // 100 goes out with 900 queued; then 500 arrives. Legacy deadline fixed its
        // successor (900) at dispatch time; mq-deadline looks up from position 108.
        fn order(s: &mut dyn IoScheduler) -> Vec<u32> {
            let mut m = vec![];
            s.add(req(1, IoOp::Read, 100, 8, 0, 0), SimTime(0), &mut m);
            s.add(req(2, IoOp::Read, 900, 8, 0, 0), SimTime(0), &mut m);
            let first = s.dispatch(SimTime(0)).unwrap().id;
            s.add(req(3, IoOp::Read, 500, 8, 0, 0), SimTime(0), &mut m);
            let mut v = vec![first];
            v.extend(drain(s, SimTime(0)));
            v
        }
        let cfg = SchedConfig::default();
        let order = |mq: bool| {
            if mq {
                order(&mut MqDeadline::new(&cfg))
            } else {
                order(&mut Deadline::new(&cfg))
            }
        };
        assert_eq!(order(true), vec![1, 3, 2]);
        assert_eq!(order(false), vec![1, 2, 3]);
    }
}
