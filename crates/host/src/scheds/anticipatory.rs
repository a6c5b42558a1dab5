//! Anticipatory scheduler (Iyer & Druschel 2001; Linux as-iosched.c until 2.6.33),
//! on the deadline core.
//!
//! Requests are ordered as by [`Deadline`](super::Deadline). In addition, when the
//! last outstanding read of a process completes, the scheduler *anticipates*: for
//! up to `antic_expire` it dispatches nothing, waiting for that process's next
//! read (which is then served at once, nearest to where the previous read ended).
//! Anticipation ends early when any FIFO head expires. As in AS, a process whose
//! mean think time (completion of its read to arrival of its next one; a decaying
//! average with weight 7/8 on the past, as `as_update_thinktime`) exceeds
//! `antic_expire` is not waited for.
//!
//! As in AS, "read" here means synchronous (`rq_is_sync`: reads and
//! `REQ_SYNC` writes such as O_DIRECT ones): its two queues are sync and
//! async, not read and write (`as_add_request`), and it anticipates after
//! any sync request of a process.
//!
//! Simplifications: batches are `fifo_batch` requests (AS used time-based batches
//! of 125 ms reads / 5 ms writes); the "close request from another process" and
//! seek-distance heuristics are not modelled (on flash, seek distance is moot).

use super::deadline::{DeadlineCore, NextMode};
use super::SchedConfig;
use ssd_core::sched::{IoScheduler, SchedReq};
use ssd_core::units::{Dur, SimTime};
use std::collections::{BTreeMap, BTreeSet};

#[derive(Clone, Copy, Debug)]
struct Antic {
    stream: u32,
    pos: u64,
    until: SimTime,
}

#[derive(Clone, Copy, Debug, Default)]
struct Think {
    last_done: Option<SimTime>,
    /// Fixed point as in AS: samples and total scaled by 256.
    samples: u64,
    total: u64,
}

impl Think {
    fn mean_ns(&self) -> Option<u64> {
        (self.total + 128).checked_div(self.samples)
    }
}

/// The anticipatory I/O scheduler.
#[derive(Debug)]
pub struct Anticipatory {
    core: DeadlineCore,
    antic_expire: Dur,
    antic: Option<Antic>,
    /// Queued reads per process, by (lba, id).
    reads_of: BTreeMap<u32, BTreeSet<(u64, u32)>>,
    think: BTreeMap<u32, Think>,
    inflight_reads: BTreeMap<u32, u32>,
}

impl Anticipatory {
    /// An anticipatory scheduler with the tunables of `cfg` (`sched.*`); `cfg` must be valid.
    pub fn new(cfg: &SchedConfig) -> Anticipatory {
        Anticipatory {
            core: DeadlineCore::new(cfg, NextMode::Successor).by_sync(),
            antic_expire: cfg.antic_expire,
            antic: None,
            reads_of: BTreeMap::new(),
            think: BTreeMap::new(),
            inflight_reads: BTreeMap::new(),
        }
    }

    fn forget_read(&mut self, r: &SchedReq) {
        if r.is_sync() {
            if let Some(set) = self.reads_of.get_mut(&r.stream) {
                set.remove(&(r.lba, r.id));
                if set.is_empty() {
                    self.reads_of.remove(&r.stream);
                }
            }
        }
    }

    fn out(&mut self, id: u32) -> SchedReq {
        let d = self.core.slots.get(id).owner as usize;
        let r = self.core.take(id, d);
        self.forget_read(&r);
        if r.is_sync() {
            *self.inflight_reads.entry(r.stream).or_insert(0) += 1;
        }
        r
    }
}

impl IoScheduler for Anticipatory {
    fn name(&self) -> &'static str {
        "anticipatory"
    }
    fn add(&mut self, r: SchedReq, now: SimTime, merged: &mut Vec<(u32, u32)>) {
        if r.is_sync() {
            let t = self.think.entry(r.stream).or_default();
            if let Some(done) = t.last_done.take() {
                let ttime = now.0.saturating_sub(done.0);
                t.samples = (7 * t.samples + 256) / 8;
                t.total = (7 * t.total + 256 * ttime) / 8;
            }
        }
        let n = merged.len();
        let queued_before = self.core.slots.len();
        self.core.add(r, now, merged);
        if r.is_sync() && merged.len() == n && self.core.slots.len() > queued_before {
            self.reads_of
                .entry(r.stream)
                .or_default()
                .insert((r.lba, r.id));
        } else if merged.len() > n {
            // A merge may have moved the kept read's start (front merge): re-key it.
            let kept = merged[n].0;
            let s = *self.core.slots.get(kept);
            if s.r.is_sync() {
                let set = self.reads_of.entry(s.r.stream).or_default();
                set.retain(|&(_, id)| id != kept);
                set.insert((s.r.lba, kept));
            }
        }
    }
    fn dispatch(&mut self, now: SimTime) -> Option<SchedReq> {
        if let Some(r) = self.core.pass.pop_front() {
            return Some(r);
        }
        if let Some(a) = self.antic {
            let expired =
                self.core.q[0].expired(now).is_some() || self.core.q[1].expired(now).is_some();
            if now >= a.until || expired {
                self.antic = None;
            } else if let Some(set) = self.reads_of.get(&a.stream) {
                // The anticipated process issued a read: serve the one nearest
                // (at or after) where its last read ended, continuing the batch.
                let id = set
                    .range((a.pos, 0)..)
                    .next()
                    .or_else(|| set.first())
                    .map(|&(_, id)| id)
                    .expect("non-empty set");
                self.antic = None;
                return Some(self.out(id));
            } else {
                return None;
            }
        }
        let (id, _) = match self.core.continue_batch() {
            Some(x) => x,
            None => self.core.start_batch(now)?,
        };
        Some(self.out(id))
    }
    fn completed(&mut self, r: &SchedReq, now: SimTime) {
        if !r.is_sync() {
            return;
        }
        let n = self
            .inflight_reads
            .get_mut(&r.stream)
            .expect("read in flight");
        *n -= 1;
        if *n > 0 {
            return;
        }
        self.inflight_reads.remove(&r.stream);
        let t = self.think.entry(r.stream).or_default();
        t.last_done = Some(now);
        let slow = t.mean_ns().is_some_and(|m| m > self.antic_expire.0);
        if !slow && self.antic_expire.0 > 0 {
            self.antic = Some(Antic {
                stream: r.stream,
                pos: r.end(),
                until: now + self.antic_expire,
            });
        }
    }
    fn wake_at(&self) -> Option<SimTime> {
        let a = self.antic?;
        // Wake at the end of anticipation or when a FIFO head expires, whichever first.
        let heads = [self.core.q[0].fifo_head(), self.core.q[1].fifo_head()];
        Some(
            heads
                .iter()
                .flatten()
                .map(|&(d, _)| d)
                .fold(a.until, SimTime::min),
        )
    }
    fn len(&self) -> usize {
        self.core.len()
    }
}

#[cfg(test)]
mod tests {
    use super::super::testutil::*;
    use super::*;
    use crate::workload::IoOp;

    #[test]
    fn waits_for_the_same_process_after_a_read() {
        let cfg = SchedConfig::default();
        let mut s = Anticipatory::new(&cfg);
        let mut m = vec![];
        s.add(req(1, IoOp::Read, 100, 8, 0, 7), SimTime(0), &mut m);
        let r1 = s.dispatch(SimTime(0)).unwrap();
        // Another process's read is queued meanwhile.
        s.add(req(2, IoOp::Read, 5000, 8, 0, 9), SimTime(0), &mut m);
        s.completed(&r1, SimTime(100_000));
        // Anticipating process 7: nothing goes out, wake at +6 ms.
        assert!(s.dispatch(SimTime(100_000)).is_none());
        assert_eq!(s.wake_at(), Some(SimTime(6_100_000)));
        // Process 7's next read arrives 1 ms later and is served first.
        s.add(
            req(3, IoOp::Read, 108, 8, 1_100_000, 7),
            SimTime(1_100_000),
            &mut m,
        );
        assert_eq!(s.dispatch(SimTime(1_100_000)).unwrap().id, 3);
        assert_eq!(s.dispatch(SimTime(1_100_000)).unwrap().id, 2);
    }

    #[test]
    fn gives_up_after_antic_expire() {
        let cfg = SchedConfig::default();
        let mut s = Anticipatory::new(&cfg);
        let mut m = vec![];
        s.add(req(1, IoOp::Read, 100, 8, 0, 7), SimTime(0), &mut m);
        let r1 = s.dispatch(SimTime(0)).unwrap();
        s.add(req(2, IoOp::Read, 5000, 8, 0, 9), SimTime(0), &mut m);
        s.completed(&r1, SimTime(0));
        assert!(s.dispatch(SimTime(5_999_999)).is_none());
        assert_eq!(s.dispatch(SimTime(6_000_000)).unwrap().id, 2);
    }
}
