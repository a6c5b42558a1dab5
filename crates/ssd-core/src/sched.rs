//! Host I/O schedulers: the block layer between the workload and the device queue.
//!
//! A scheduler receives requests (`add`), may merge contiguous ones (reported
//! through `merged` so every original request still completes exactly once), and
//! hands them to the device (`dispatch`) when the device has a free queue slot.
//! Schedulers that wait on purpose (anticipation, time slices) say when to ask
//! again through `wake_at`. Concrete schedulers beyond `noop` live in
//! the host crate's `scheds`; the application closes the choice with its `AnySched`.

use crate::hash::FastMap;
use crate::units::SimTime;
use crate::workload::IoOp;
use std::collections::hash_map::Entry;

/// What the engine's block-layer front end takes from the host stack's
/// configuration (`[sched]`, `[[flow]]`): it is set by the host's
/// validation, and a drive validated alone gets the defaults.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BlockQueue {
    /// Requests the queue holds (in the elevator, in a plug or in the
    /// device) before a submitter sleeps: `sched.nr_requests`, or no bound
    /// where each flow's NVMe submission queue bounds its own (`u32::MAX`).
    pub nr_requests: u32,
    /// An open- or reactive-loop submitter's requests of one instant are
    /// plugged and inserted together (`sched.plug`).
    pub plug: bool,
    /// Flows whose streams ([`crate::workload::flow_of`]) the engine
    /// accounts apart; 0 without `[[flow]]`s.
    pub flows: usize,
}

impl Default for BlockQueue {
    /// Linux's single-queue default of 128 requests (`BLKDEV_MAX_RQ`,
    /// include/linux/blkdev.h), plugging on, no flows.
    fn default() -> BlockQueue {
        BlockQueue {
            nr_requests: 128,
            plug: true,
            flows: 0,
        }
    }
}

/// A request as the scheduler sees it. `id` is the engine's handle of the first
/// host request it stands for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SchedReq {
    /// The engine's handle of the first host request it stands for.
    pub id: u32,
    /// Read, write, trim or flush.
    pub op: IoOp,
    /// First sector (512 bytes).
    pub lba: u64,
    /// Length in sectors.
    pub sectors: u32,
    /// Arrival time of its earliest request (merges keep the earliest).
    pub arrival: SimTime,
    /// Stream (process) id of the submitter.
    pub stream: u32,
    /// Marked `REQ_SYNC` ([`crate::workload::HostRequest::sync`]); a merged
    /// request keeps the flag of the request it was built on, as a bio
    /// merged into a Linux request leaves the request's flags alone.
    pub sync: bool,
    /// The write's data placement directive
    /// ([`crate::workload::HostRequest::placement`]).
    pub placement: crate::workload::Placement,
}

impl SchedReq {
    /// Synchronous as Linux's `rq_is_sync` has it: a read, or marked
    /// `REQ_SYNC`. CFQ, BFQ, the anticipatory scheduler and Kyber sort by it.
    #[inline]
    pub fn is_sync(&self) -> bool {
        crate::workload::op_is_sync(self.op, self.sync)
    }

    /// The sector after the request's last.
    #[inline]
    pub fn end(&self) -> u64 {
        self.lba + self.sectors as u64
    }
}

/// Try to merge `b` into `a` (back merge: `b` starts where `a` ends; front merge:
/// `b` ends where `a` starts). Same direction, reads and writes only, and the
/// result may not exceed `max_sectors`. On success `a` grows and keeps the earlier
/// arrival; the caller records that `b.id` rides on `a.id`. Requests with
/// different placement directives never merge.
#[inline]
pub fn try_merge(a: &mut SchedReq, b: &SchedReq, max_sectors: u32) -> bool {
    if a.op != b.op || !matches!(a.op, IoOp::Read | IoOp::Write) {
        return false;
    }
    // Linux's `blk_rq_merge_ok` (block/blk-merge.c): "Don't merge
    // requests with different write hints": one command carries one
    // placement directive.
    if a.placement != b.placement {
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

/// A host I/O scheduler (elevator): queues requests, may merge them, hands them to the device
/// in its order (see the module docs).
pub trait IoScheduler {
    /// Short name (`noop`, `deadline`, ...), as `--sched` takes it and the report shows it.
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
    /// The block layer's tags (`nr_requests`) a request of this kind may
    /// find taken and still be given one: Linux's `limit_depth` hook,
    /// through which a blk-mq scheduler keeps the last tags for sync reads
    /// (the engine caps it at `nr_requests`; flushes are never limited).
    /// Default: no limit of the scheduler's own.
    fn limit_depth(&self, _op: IoOp, _sync: bool) -> u32 {
        u32::MAX
    }
    /// Requests queued (after merging).
    fn len(&self) -> usize;
    /// No request queued.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Linux noop / none: one FIFO, back and front merges with the queued requests.
///
/// A new read or write merges into the most recently queued request it is
/// contiguous with (same direction, within `max_sectors`), found as Linux's
/// elevator finds it: a hash keyed by end sector for back merges (the
/// `rqhash` of block/elevator.c, `elv_rqhash_find`) and one keyed by start
/// sector for front merges, so an arrival costs O(1) whatever the queue's
/// length. Requests sharing a key (overlapping I/O) are chained newest
/// first, so the newest candidate is tried first.
#[derive(Debug)]
pub struct Noop {
    /// The queue, each request with its chain links (see [`Link`]).
    q: std::collections::VecDeque<(SchedReq, [u64; 2])>,
    /// Sequence number of `q[0]`: the request at `q[i]` has number `head + i`.
    head: u64,
    /// (is write, end sector) and (is write, start sector) of the queued
    /// reads and writes: the sequence number of the newest request with that
    /// key, whose link names the next older one.
    index: [FastMap<(bool, u64), u64>; 2],
    /// The queued requests below this sequence number are in the index; the
    /// ones from it on are put there when an arrival looks for a merge
    /// (`catch_up`), so that a request dispatched before the next arrival
    /// (a queue that drains between arrivals, as a device with free slots
    /// keeps it) never enters the index. The chains are ordered by sequence
    /// number, so they are the same whenever a request enters them.
    indexed: u64,
    max_sectors: u32,
    merge: bool,
}

/// The chains of [`Noop`]'s index: by end sector (back merges) and by start
/// sector (front merges). A link holds the next older request's sequence
/// number with the same key, or `END`.
#[derive(Clone, Copy)]
enum Link {
    ByEnd = 0,
    ByStart = 1,
}
const END: u64 = u64::MAX;

/// The merge direction of a request (writes true), or None if it never merges.
#[inline]
fn merge_dir(op: IoOp) -> Option<bool> {
    match op {
        IoOp::Read => Some(false),
        IoOp::Write => Some(true),
        _ => None,
    }
}

impl Noop {
    /// A noop queue that merges requests up to `max_sectors` (when `merge` is set).
    pub fn new(max_sectors: u32, merge: bool) -> Noop {
        Noop {
            q: Default::default(),
            head: 0,
            index: Default::default(),
            indexed: 0,
            max_sectors,
            merge,
        }
    }

    /// The key of `r` in chain `k`.
    #[inline]
    fn key(r: &SchedReq, w: bool, k: Link) -> (bool, u64) {
        match k {
            Link::ByEnd => (w, r.end()),
            Link::ByStart => (w, r.lba),
        }
    }

    /// The link of queued request `seq` in chain `k`.
    #[inline]
    fn link(&mut self, seq: u64, k: Link) -> &mut u64 {
        &mut self.q[(seq - self.head) as usize].1[k as usize]
    }

    /// Put queued request `seq` (holding `r`) in both chains, in order of
    /// sequence number (a merged request keeps its number, which may be
    /// older than others' with its new key).
    fn index(&mut self, r: &SchedReq, seq: u64) {
        let (true, Some(w)) = (self.merge, merge_dir(r.op)) else {
            return;
        };
        for k in [Link::ByEnd, Link::ByStart] {
            let newest = match self.index[k as usize].entry(Noop::key(r, w, k)) {
                Entry::Vacant(e) => {
                    e.insert(seq);
                    END
                }
                Entry::Occupied(mut e) => {
                    let n = *e.get();
                    if n < seq {
                        e.insert(seq);
                    }
                    n
                }
            };
            if newest == END || newest < seq {
                *self.link(seq, k) = newest;
                continue;
            }
            let mut at = newest;
            loop {
                let next = *self.link(at, k);
                if next == END || next < seq {
                    *self.link(seq, k) = next;
                    *self.link(at, k) = seq;
                    break;
                }
                at = next;
            }
        }
    }

    /// Put every queued request not yet in the index there.
    fn catch_up(&mut self) {
        let end = self.head + self.q.len() as u64;
        while self.indexed < end {
            let seq = self.indexed;
            let r = self.q[(seq - self.head) as usize].0;
            self.index(&r, seq);
            self.indexed += 1;
        }
    }

    /// Take queued request `seq` (holding `r`) out of both chains.
    fn unindex(&mut self, r: &SchedReq, seq: u64) {
        let (true, Some(w)) = (self.merge, merge_dir(r.op)) else {
            return;
        };
        for k in [Link::ByEnd, Link::ByStart] {
            let next = *self.link(seq, k);
            let Entry::Occupied(mut e) = self.index[k as usize].entry(Noop::key(r, w, k)) else {
                panic!("noop: request {} missing from the merge index", r.id);
            };
            let newest = *e.get();
            if newest == seq {
                if next == END {
                    e.remove();
                } else {
                    e.insert(next);
                }
                continue;
            }
            let mut at = newest;
            loop {
                let l = *self.link(at, k);
                assert!(
                    l != END,
                    "noop: request {} missing from the merge index",
                    r.id
                );
                if l == seq {
                    *self.link(at, k) = next;
                    break;
                }
                at = l;
            }
        }
    }

    /// The queued request `r` merges into: the newest one that ends where
    /// `r` starts or starts where `r` ends, in `r`'s direction, whose merge
    /// stays within `max_sectors` (the first a scan from the back of the
    /// queue would find).
    fn merge_target(&self, r: &SchedReq) -> Option<u64> {
        let w = merge_dir(r.op)?;
        let first = |k: Link, key: (bool, u64)| *self.index[k as usize].get(&key).unwrap_or(&END);
        let next = |k: Link, seq: u64| self.q[(seq - self.head) as usize].1[k as usize];
        let mut back = first(Link::ByEnd, (w, r.lba));
        let mut front = first(Link::ByStart, (w, r.end()));
        loop {
            // The newer of the two chains' heads (END is u64::MAX: none).
            let seq = match (back, front) {
                (END, END) => return None,
                (b, END) => {
                    back = next(Link::ByEnd, b);
                    b
                }
                (END, f) => {
                    front = next(Link::ByStart, f);
                    f
                }
                (b, f) => {
                    if b >= f {
                        back = next(Link::ByEnd, b);
                    }
                    if f >= b {
                        front = next(Link::ByStart, f);
                    }
                    b.max(f)
                }
            };
            let q = &self.q[(seq - self.head) as usize].0;
            if q.sectors as u64 + r.sectors as u64 <= self.max_sectors as u64
                && q.placement == r.placement
            {
                return Some(seq);
            }
        }
    }
}

impl IoScheduler for Noop {
    fn name(&self) -> &'static str {
        "noop"
    }
    fn add(&mut self, r: SchedReq, _now: SimTime, merged: &mut Vec<(u32, u32)>) {
        if self.merge && merge_dir(r.op).is_some() {
            self.catch_up();
            if let Some(seq) = self.merge_target(&r) {
                let i = (seq - self.head) as usize;
                let old = self.q[i].0;
                let mut a = old;
                let ok = try_merge(&mut a, &r, self.max_sectors);
                debug_assert!(
                    ok,
                    "noop: the merge index named a request that cannot merge"
                );
                if ok {
                    self.unindex(&old, seq);
                    self.q[i].0 = a;
                    self.index(&a, seq);
                    merged.push((a.id, r.id));
                    return;
                }
            }
        }
        // Indexed when the next arrival looks for a merge (`catch_up`).
        self.q.push_back((r, [END; 2]));
    }
    fn dispatch(&mut self, _now: SimTime) -> Option<SchedReq> {
        let &(r, _) = self.q.front()?;
        if self.head < self.indexed {
            self.unindex(&r, self.head);
        }
        self.q.pop_front();
        self.head += 1;
        self.indexed = self.indexed.max(self.head);
        Some(r)
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
            sync: false,
            placement: crate::workload::Placement::NONE,
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

    /// Contiguous writes with different placement directives stay two
    /// commands (Linux's `blk_rq_merge_ok` on write hints); the same
    /// directive merges.
    #[test]
    fn writes_of_different_placements_do_not_merge() {
        use crate::workload::Placement;
        let mut s = Noop::new(1024, true);
        let mut m = Vec::new();
        let w = |id, lba, p| SchedReq {
            placement: p,
            ..r(id, lba, IoOp::Write)
        };
        s.add(w(1, 0, Placement::pid(0)), SimTime(0), &mut m);
        s.add(w(2, 8, Placement::pid(1)), SimTime(0), &mut m);
        s.add(w(3, 16, Placement::pid(1)), SimTime(0), &mut m);
        s.add(w(4, 24, Placement::NONE), SimTime(0), &mut m);
        assert_eq!(m, vec![(2, 3)]);
        assert_eq!(s.len(), 3);
    }

    /// A host request stays 32 bytes with its placement directive.
    #[test]
    fn a_host_request_stays_32_bytes() {
        assert_eq!(std::mem::size_of::<crate::workload::HostRequest>(), 32);
        assert_eq!(std::mem::size_of::<SchedReq>(), 32);
    }

    /// The merge index picks exactly what a scan of the queue from the back
    /// picks (the scheduler before the index), over random arrivals and
    /// dispatches with many contiguous, overlapping and oversized requests.
    #[test]
    fn noop_index_matches_a_scan_from_the_back() {
        struct Scan {
            q: std::collections::VecDeque<SchedReq>,
            max: u32,
        }
        impl Scan {
            fn add(&mut self, r: SchedReq, merged: &mut Vec<(u32, u32)>) {
                for q in self.q.iter_mut().rev() {
                    if try_merge(q, &r, self.max) {
                        merged.push((q.id, r.id));
                        return;
                    }
                }
                self.q.push_back(r);
            }
        }
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        let mut next = move |n: u64| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % n
        };
        for round in 0..20 {
            let max = [16, 64, 256][round % 3];
            let mut a = Noop::new(max, true);
            let mut b = Scan {
                q: Default::default(),
                max,
            };
            let (mut ma, mut mb) = (vec![], vec![]);
            for id in 0..3000u32 {
                if next(4) == 0 {
                    assert_eq!(a.dispatch(SimTime(0)), b.q.pop_front());
                    continue;
                }
                let op = match next(10) {
                    0 => IoOp::Trim,
                    1..=4 => IoOp::Read,
                    _ => IoOp::Write,
                };
                let r = SchedReq {
                    id,
                    op,
                    lba: next(40) * 8,
                    sectors: 8 * (1 + next(3) as u32),
                    arrival: SimTime(id as u64),
                    stream: 0,
                    sync: false,
                    placement: crate::workload::Placement::NONE,
                };
                a.add(r, SimTime(0), &mut ma);
                b.add(r, &mut mb);
                assert_eq!(ma, mb, "round {round}, request {id}");
                assert_eq!(a.len(), b.q.len());
            }
            let rest: Vec<SchedReq> = std::iter::from_fn(|| a.dispatch(SimTime(0))).collect();
            assert_eq!(rest, Vec::from(b.q));
            assert!(a.index.iter().all(|m| m.is_empty()));
        }
    }
}
