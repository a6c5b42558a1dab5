//! Host I/O schedulers: the block layer between the workload and the device queue.
//!
//! A scheduler receives requests (`add`), may merge contiguous ones (reported
//! through `merged` so every original request still completes exactly once), and
//! hands them to the device (`dispatch`) when the device has a free queue slot.
//! Schedulers that wait on purpose (anticipation, time slices) say when to ask
//! again through `wake_at`. Concrete schedulers beyond `noop` live in
//! [`crate::scheds`]; the application closes the choice with [`AnySched`](crate::scheds::AnySched).

use crate::units::SimTime;
use crate::workload::IoOp;

/// A request as the scheduler sees it. `id` is the engine's handle of the first
/// host request it stands for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SchedReq {
    pub id: u32,
    pub op: IoOp,
    pub lba: u64,
    pub sectors: u32,
    pub arrival: SimTime,
    pub stream: u32,
}

impl SchedReq {
    #[inline]
    pub fn end(&self) -> u64 {
        self.lba + self.sectors as u64
    }
}

/// Try to merge `b` into `a` (back merge: `b` starts where `a` ends; front merge:
/// `b` ends where `a` starts). Same direction, reads and writes only, and the
/// result may not exceed `max_sectors`. On success `a` grows and keeps the earlier
/// arrival; the caller records that `b.id` rides on `a.id`.
#[inline]
pub fn try_merge(a: &mut SchedReq, b: &SchedReq, max_sectors: u32) -> bool {
    if a.op != b.op || !matches!(a.op, IoOp::Read | IoOp::Write) {
        return false;
    }
    if a.sectors as u64 + b.sectors as u64 > max_sectors as u64 {
        return false;
    }
    if a.end() == b.lba {
        a.sectors += b.sectors;
    } else if b.end() == a.lba {
        a.lba = b.lba;
        a.sectors += b.sectors;
    } else {
        return false;
    }
    a.arrival = a.arrival.min(b.arrival);
    true
}

pub trait IoScheduler {
    fn name(&self) -> &'static str;
    /// Queue `r`. If it was merged into a queued request, push `(kept_id, r.id)`
    /// to `merged` (and do not queue `r` separately).
    fn add(&mut self, r: SchedReq, now: SimTime, merged: &mut Vec<(u32, u32)>);
    /// The next request for the device, or None (empty, or deliberately waiting).
    fn dispatch(&mut self, now: SimTime) -> Option<SchedReq>;
    /// A dispatched request completed (anticipation uses it).
    fn completed(&mut self, _r: &SchedReq, _now: SimTime) {}
    /// When `dispatch` may return something although it returned None now.
    fn wake_at(&self) -> Option<SimTime> {
        None
    }
    /// Requests queued (after merging).
    fn len(&self) -> usize;
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Linux noop / none: one FIFO, back and front merges with the queued requests.
#[derive(Debug)]
pub struct Noop {
    q: std::collections::VecDeque<SchedReq>,
    max_sectors: u32,
    merge: bool,
}

impl Noop {
    pub fn new(max_sectors: u32, merge: bool) -> Noop {
        Noop {
            q: Default::default(),
            max_sectors,
            merge,
        }
    }
}

impl IoScheduler for Noop {
    fn name(&self) -> &'static str {
        "noop"
    }
    fn add(&mut self, r: SchedReq, _now: SimTime, merged: &mut Vec<(u32, u32)>) {
        if self.merge {
            // Like the Linux plug/elevator merge hash, look for a contiguous queued request.
            for q in self.q.iter_mut().rev() {
                if try_merge(q, &r, self.max_sectors) {
                    merged.push((q.id, r.id));
                    return;
                }
            }
        }
        self.q.push_back(r);
    }
    fn dispatch(&mut self, _now: SimTime) -> Option<SchedReq> {
        self.q.pop_front()
    }
    fn len(&self) -> usize {
        self.q.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    fn r(id: u32, lba: u64, op: IoOp) -> SchedReq {
        SchedReq {
            id,
            op,
            lba,
            sectors: 8,
            arrival: SimTime(id as u64),
            stream: 0,
        }
    }
    #[test]
    fn noop_keeps_arrival_order_and_merges() {
        let mut s = Noop::new(1024, true);
        let mut m = vec![];
        s.add(r(1, 100, IoOp::Read), SimTime(0), &mut m);
        s.add(r(2, 0, IoOp::Read), SimTime(0), &mut m);
        s.add(r(3, 108, IoOp::Read), SimTime(0), &mut m);
        s.add(r(4, 92, IoOp::Write), SimTime(0), &mut m);
        assert_eq!(m, vec![(1, 3)]);
        let ids: Vec<u32> = std::iter::from_fn(|| s.dispatch(SimTime(0)))
            .map(|q| q.id)
            .collect();
        assert_eq!(ids, vec![1, 2, 4]);
    }
}
