//! blk-mq mq-deadline (block/mq-deadline.c): deadline's tunables and batching,
//! but the next request in sector order is looked up afresh from the end of the
//! last request dispatched in that direction (`latest_pos`), per direction, so
//! requests that arrive ahead of the sweep join the running batch. Flushes go
//! to the dispatch list first.
//!
//! **Depth limit** (`dd_limit_depth`): every request but a sync read (async
//! writes, sync writes, trims) may be given a scheduler tag only while fewer
//! than `async_depth` of the `nr_requests` tags are taken, so the rest stay
//! free for reads. The kernel sets `async_depth` to `nr_requests` when the
//! tags are sized (`dd_depth_updated`), which limits nothing; it is a sysfs
//! tunable (`sched.async_depth`). The kernel applies it per sbitmap word
//! (`dd_to_word_depth`, rounding up); here the tags are one word, taken
//! lowest first, so the first `async_depth` are free only while fewer than
//! that are taken.
//!
//! Not modelled: I/O priority classes (every request is best effort).

use super::deadline::{DeadlineCore, NextMode};
use super::SchedConfig;
use ssd_core::sched::{IoScheduler, SchedReq};
use ssd_core::units::SimTime;
use ssd_core::workload::IoOp;

/// blk-mq mq-deadline.
#[derive(Debug)]
pub struct MqDeadline {
    core: DeadlineCore,
    /// `async_depth`.
    async_depth: u32,
}

impl MqDeadline {
    /// An mq-deadline scheduler with the tunables of `cfg` (`sched.*`) on a
    /// queue of `nr_requests` tags; `cfg` must be valid.
    pub fn new(cfg: &SchedConfig, nr_requests: u32) -> MqDeadline {
        MqDeadline {
            core: DeadlineCore::new(cfg, NextMode::Position),
            async_depth: if cfg.async_depth == 0 {
                nr_requests
            } else {
                cfg.async_depth
            },
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
    /// `dd_limit_depth`: sync reads are not throttled.
    fn limit_depth(&self, op: IoOp, _sync: bool) -> u32 {
        if op == IoOp::Read {
            u32::MAX
        } else {
            self.async_depth
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::testutil::*;
    use super::super::Deadline;
    use super::*;

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
                order(&mut MqDeadline::new(&cfg, 64))
            } else {
                order(&mut Deadline::new(&cfg))
            }
        };
        assert_eq!(order(true), vec![1, 3, 2]);
        assert_eq!(order(false), vec![1, 2, 3]);
    }

    /// `dd_depth_updated` / `dd_limit_depth`: by default (`async_depth` =
    /// `nr_requests`) nothing is limited; set lower, writes and trims are
    /// limited to it and reads never.
    #[test]
    fn async_depth_limits_writes_not_reads() {
        let s = MqDeadline::new(&SchedConfig::default(), 64);
        for op in [IoOp::Read, IoOp::Write, IoOp::Trim] {
            assert!(s.limit_depth(op, false) >= 64, "{op:?}");
        }
        let cfg = SchedConfig {
            async_depth: 48,
            ..Default::default()
        };
        let s = MqDeadline::new(&cfg, 64);
        assert_eq!(s.limit_depth(IoOp::Read, true), u32::MAX);
        assert_eq!(s.limit_depth(IoOp::Write, true), 48);
        assert_eq!(s.limit_depth(IoOp::Write, false), 48);
        assert_eq!(s.limit_depth(IoOp::Trim, false), 48);
    }
}
