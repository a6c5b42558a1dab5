//! Linux deadline (block/deadline-iosched.c) and the core it shares with
//! mq-deadline and anticipatory.
//!
//! Per direction a tree sorted by sector and a FIFO by arrival; every request
//! expires `read_expire` / `write_expire` after it arrived. Requests go out in
//! batches of up to `fifo_batch` in ascending sector order. When a batch ends the
//! scheduler picks a direction, reads first, but writes are served once reads
//! have been preferred `writes_starved` times while writes waited. A new batch
//! starts at the FIFO head if that has expired (or if the sweep reached the end
//! of the sorted tree), else at the next request in sector order.

use super::SchedConfig;
use super::{dir_of, max_sectors, DirQueue, Slots};
use crate::workload::IoOp;
use ssd_core::sched::{IoScheduler, SchedReq};
use ssd_core::units::{Dur, SimTime};
use std::collections::VecDeque;

/// How the next request in sector order is found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum NextMode {
    /// Legacy deadline: `next_rq[dir]` is the successor of the last dispatched
    /// request, fixed at dispatch time; dispatching one direction forgets the
    /// other's (deadline_move_request).
    Successor,
    /// mq-deadline (Linux 5.x/6.x): the first request at or after the end of the
    /// last one dispatched in that direction (`latest_pos`), looked up afresh.
    Position,
}

#[derive(Debug)]
pub(crate) struct DeadlineCore {
    pub slots: Slots,
    pub q: [DirQueue; 2],
    pub pass: VecDeque<SchedReq>,
    expire: [Dur; 2],
    fifo_batch: u32,
    writes_starved: u32,
    max: u32,
    merge: bool,
    mode: NextMode,
    /// Queue index by `rq_is_sync` (the anticipatory scheduler's
    /// `REQ_SYNC`/`REQ_ASYNC` lists) instead of by direction.
    by_sync: bool,
    next_rq: [Option<u32>; 2],
    latest_pos: [Option<u64>; 2],
    last_dir: usize,
    batching: u32,
    starved: u32,
}

impl DeadlineCore {
    pub fn new(cfg: &SchedConfig, mode: NextMode) -> DeadlineCore {
        DeadlineCore {
            slots: Slots::default(),
            q: Default::default(),
            pass: VecDeque::new(),
            expire: [cfg.read_expire, cfg.write_expire],
            fifo_batch: cfg.fifo_batch,
            writes_starved: cfg.writes_starved,
            max: max_sectors(cfg),
            merge: cfg.merge,
            mode,
            by_sync: false,
            next_rq: [None; 2],
            latest_pos: [None; 2],
            last_dir: 0,
            batching: 0,
            starved: 0,
        }
    }

    pub fn add(&mut self, r: SchedReq, now: SimTime, merged: &mut Vec<(u32, u32)>) {
        if r.op == IoOp::Flush {
            self.pass.push_back(r);
            return;
        }
        let d = if self.by_sync {
            !r.is_sync() as usize
        } else {
            dir_of(r.op)
        };
        let deadline = now + self.expire[d];
        let merge = self.merge.then_some(self.max);
        self.q[d].add(&mut self.slots, r, deadline, d as u64, merge, merged);
    }

    /// Index the queues by sync and async instead of read and write (the
    /// anticipatory scheduler's `as_add_request`: `data_dir =
    /// rq_is_sync(rq)`).
    pub fn by_sync(self) -> DeadlineCore {
        DeadlineCore {
            by_sync: true,
            ..self
        }
    }

    fn next_in_order(&self, d: usize) -> Option<u32> {
        match self.mode {
            NextMode::Successor => self.next_rq[d],
            NextMode::Position => self.latest_pos[d].and_then(|p| self.q[d].at_or_after(p)),
        }
    }

    /// The direction the next batch serves, updating the starvation counter
    /// exactly as deadline_dispatch_requests does.
    fn choose_dir(&mut self) -> Option<usize> {
        let reads = !self.q[0].is_empty();
        let writes = !self.q[1].is_empty();
        if reads {
            if writes {
                let s = self.starved;
                self.starved += 1;
                if s >= self.writes_starved {
                    self.starved = 0;
                    return Some(1);
                }
            }
            Some(0)
        } else if writes {
            self.starved = 0;
            Some(1)
        } else {
            None
        }
    }

    /// Remove `id` (of direction `d`) and hand it out, continuing or starting a batch.
    pub fn take(&mut self, id: u32, d: usize) -> SchedReq {
        let s = self.slots.remove(id);
        self.q[d].remove(&s);
        self.batching += 1;
        self.last_dir = d;
        self.next_rq[d] = self.q[d].after(s.key());
        self.next_rq[1 - d] = None;
        self.latest_pos[d] = Some(s.r.end());
        s.r
    }

    /// Start a new batch (resets the batch counter).
    pub fn begin_batch(&mut self) {
        self.batching = 0;
    }

    /// Whether the current batch may go on (and with which request).
    pub fn continue_batch(&self) -> Option<(u32, usize)> {
        let d = self.last_dir;
        if self.batching < self.fifo_batch {
            self.next_in_order(d).map(|id| (id, d))
        } else {
            None
        }
    }

    /// Pick the first request of a new batch; updates direction state.
    pub fn start_batch(&mut self, now: SimTime) -> Option<(u32, usize)> {
        let d = self.choose_dir()?;
        let next = self.next_in_order(d);
        let id = match (self.q[d].expired(now), next) {
            (Some(e), _) => e,
            (None, Some(n)) => n,
            (None, None) => self.q[d].fifo_head().expect("direction chosen non-empty").1,
        };
        self.begin_batch();
        Some((id, d))
    }

    pub fn dispatch(&mut self, now: SimTime) -> Option<SchedReq> {
        if let Some(r) = self.pass.pop_front() {
            return Some(r);
        }
        let (id, d) = match self.continue_batch() {
            Some(x) => x,
            None => self.start_batch(now)?,
        };
        Some(self.take(id, d))
    }

    pub fn len(&self) -> usize {
        self.slots.len() + self.pass.len()
    }
}

/// Legacy Linux deadline I/O scheduler.
#[derive(Debug)]
pub struct Deadline {
    core: DeadlineCore,
}

impl Deadline {
    /// A deadline scheduler with the tunables of `cfg` (`sched.*`); `cfg` must be valid.
    pub fn new(cfg: &SchedConfig) -> Deadline {
        Deadline {
            core: DeadlineCore::new(cfg, NextMode::Successor),
        }
    }
}

impl IoScheduler for Deadline {
    fn name(&self) -> &'static str {
        "deadline"
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
    use super::*;

    fn cfg() -> SchedConfig {
        SchedConfig {
            kind: "deadline".into(),
            ..Default::default()
        }
    }

    #[test]
    fn dispatches_in_sector_order_in_batches() {
        let mut s = Deadline::new(&cfg());
        let mut m = vec![];
        let lbas = [900u64, 100, 500, 300, 700];
        for (i, &l) in lbas.iter().enumerate() {
            s.add(req(i as u32, IoOp::Read, l, 8, 0, 0), SimTime(0), &mut m);
        }
        assert!(m.is_empty());
        // First batch: no expired head, no position yet -> FIFO head (900), then
        // the sweep ends; the next batch starts again at the FIFO head (100, the
        // oldest left) and goes up in sector order.
        let got: Vec<u64> = std::iter::from_fn(|| s.dispatch(SimTime(0)))
            .map(|r| r.lba)
            .collect();
        assert_eq!(got, vec![900, 100, 300, 500, 700]);
    }

    #[test]
    fn sorted_sweep_continues_from_last_position() {
        let mut s = Deadline::new(&cfg());
        let mut m = vec![];
        s.add(req(0, IoOp::Read, 100, 8, 0, 0), SimTime(0), &mut m);
        assert_eq!(s.dispatch(SimTime(0)).unwrap().lba, 100);
        for (i, l) in [50u64, 400, 200, 300].iter().enumerate() {
            s.add(
                req(i as u32 + 1, IoOp::Read, *l, 8, 0, 0),
                SimTime(0),
                &mut m,
            );
        }
        // next_rq was fixed (none) when 100 went out, so the new batch starts at the
        // FIFO head 50 and sweeps up.
        let got: Vec<u64> = std::iter::from_fn(|| s.dispatch(SimTime(0)))
            .map(|r| r.lba)
            .collect();
        assert_eq!(got, vec![50, 200, 300, 400]);
    }

    #[test]
    fn expired_fifo_head_is_served_first() {
        // B(100) A(9000) C(200) D(300) arrive in that order at t=0. After B the
        // sweep's next request is C; once A (the FIFO head) has expired, the next
        // batch starts with A instead.
        let run = |now: SimTime| {
            let mut c = cfg();
            c.fifo_batch = 1;
            let mut s = Deadline::new(&c);
            let mut m = vec![];
            for (id, lba) in [(1u32, 100u64), (2, 9000), (3, 200), (4, 300)] {
                s.add(req(id, IoOp::Read, lba, 8, 0, 0), SimTime(0), &mut m);
            }
            assert_eq!(s.dispatch(SimTime(0)).unwrap().id, 1);
            drain(&mut s, now)
        };
        assert_eq!(
            run(SimTime(400_000_000)),
            vec![3, 4, 2],
            "not expired: sector order"
        );
        assert_eq!(
            run(SimTime(500_000_000)),
            vec![2, 3, 4],
            "expired head first"
        );
    }

    #[test]
    fn writes_are_starved_at_most_writes_starved_batches() {
        let mut c = cfg();
        c.fifo_batch = 1;
        let mut s = Deadline::new(&c);
        let mut m = vec![];
        for i in 0..10u32 {
            s.add(
                req(i, IoOp::Read, 1000 * i as u64, 8, 0, 0),
                SimTime(0),
                &mut m,
            );
        }
        s.add(req(100, IoOp::Write, 123, 8, 0, 0), SimTime(0), &mut m);
        let ops: Vec<IoOp> = (0..4).map(|_| s.dispatch(SimTime(0)).unwrap().op).collect();
        assert_eq!(ops, vec![IoOp::Read, IoOp::Read, IoOp::Write, IoOp::Read]);
    }

    #[test]
    fn front_and_back_merges() {
        let mut s = Deadline::new(&cfg());
        let mut m = vec![];
        s.add(req(1, IoOp::Write, 100, 8, 0, 0), SimTime(0), &mut m);
        s.add(req(2, IoOp::Write, 108, 8, 0, 0), SimTime(0), &mut m);
        s.add(req(3, IoOp::Write, 92, 8, 0, 0), SimTime(0), &mut m);
        s.add(req(4, IoOp::Read, 116, 8, 0, 0), SimTime(0), &mut m);
        s.add(req(5, IoOp::Trim, 116, 8, 0, 0), SimTime(0), &mut m);
        assert_eq!(m, vec![(1, 2), (1, 3)]);
        let w: Vec<SchedReq> = std::iter::from_fn(|| s.dispatch(SimTime(0))).collect();
        assert_eq!(w.len(), 3);
        let big = w.iter().find(|r| r.id == 1).unwrap();
        assert_eq!((big.lba, big.sectors), (92, 24));
    }
}
