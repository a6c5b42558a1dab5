//! ParDispatcher (Wang et al. 2013, "An SSD-aware I/O scheduler"), as the paper
//! describes it.
//!
//! The logical space of C sectors is split into subregions of S sectors, giving
//! (C+S-1)/S subqueues; a request starting at sector A belongs to subqueue A/S.
//! Each subqueue keeps, per direction, a FIFO (arrival order, with a deadline of
//! `read_expire` / `write_expire`) and a tree sorted by address (a `BTreeSet`
//! keyed by (lba, id)). A new request is merged with a contiguous queued request
//! of the same direction in the same subqueue when it can be.
//!
//! Dispatch serves the non-empty subqueues round robin. A subqueue's turn uses the
//! direction opposite to the one of its previous turn, or the other one if that
//! direction is empty, and dispatches in address order up to a batch
//! (`read_batch` 16 reads, `write_batch` 8 writes) or until the direction is
//! empty; then the next subqueue's turn comes. Expired requests go first: when a
//! batch ends and the oldest queued request (over all subqueues) is past its
//! deadline, the next turn is that request's subqueue and direction, and the batch
//! starts at it (continuing upward in address order, then from the lowest).

use super::SchedConfig;
use super::{dir_of, max_sectors, Added, DirQueue, Slots};
use crate::workload::{IoOp, SECTOR};
use ssd_core::error::{invalid, ConfigError};
use ssd_core::sched::{IoScheduler, SchedReq};
use ssd_core::units::{Dur, SimTime};
use std::collections::{BTreeSet, VecDeque};

#[derive(Debug, Default)]
struct Sub {
    q: [DirQueue; 2],
    /// Direction of this subqueue's previous turn.
    last_dir: Option<usize>,
}

#[derive(Clone, Copy, Debug)]
struct Batch {
    sub: usize,
    dir: usize,
    left: u32,
    last: (u64, u32),
}

/// The ParDispatcher scheduler.
#[derive(Debug)]
pub struct ParDispatcher {
    slots: Slots,
    subs: Vec<Sub>,
    /// Subqueues with queued requests (round-robin order = index order).
    busy: BTreeSet<usize>,
    /// All queued requests by (deadline, seq, id), for "expired first".
    fifo: BTreeSet<(SimTime, u64, u32)>,
    pass: VecDeque<SchedReq>,
    sub_sectors: u64,
    expire: [Dur; 2],
    batch_size: [u32; 2],
    max: u32,
    merge: bool,
    batch: Option<Batch>,
    /// Subqueue whose turn came last.
    rr: usize,
}

impl ParDispatcher {
    /// `capacity_sectors`: the logical capacity C. The subregion size is clamped
    /// to C (one subqueue) when larger.
    pub fn new(cfg: &SchedConfig, capacity_sectors: u64) -> Result<ParDispatcher, ConfigError> {
        if capacity_sectors == 0 {
            return Err(invalid(
                "sched.subregion",
                "device capacity is zero sectors",
            ));
        }
        let s = (cfg.subregion.0 / SECTOR).clamp(1, capacity_sectors);
        let n = capacity_sectors.div_ceil(s);
        if n > 1 << 24 {
            return Err(invalid(
                "sched.subregion",
                format!(
                    "{} bytes gives {n} subqueues for {capacity_sectors} sectors; use a larger subregion",
                    cfg.subregion.0
                ),
            ));
        }
        Ok(ParDispatcher {
            slots: Slots::default(),
            subs: (0..n).map(|_| Sub::default()).collect(),
            busy: BTreeSet::new(),
            fifo: BTreeSet::new(),
            pass: VecDeque::new(),
            sub_sectors: s,
            expire: [cfg.read_expire, cfg.write_expire],
            batch_size: [cfg.read_batch, cfg.write_batch],
            max: max_sectors(cfg),
            merge: cfg.merge,
            batch: None,
            rr: usize::MAX,
        })
    }

    /// Number of subqueues, (C+S-1)/S.
    pub fn subqueues(&self) -> usize {
        self.subs.len()
    }

    fn sub_of(&self, lba: u64) -> usize {
        ((lba / self.sub_sectors) as usize).min(self.subs.len() - 1)
    }

    fn take(&mut self, id: u32) -> SchedReq {
        let s = self.slots.remove(id);
        let sub = s.owner as usize;
        let d = dir_of(s.r.op);
        self.subs[sub].q[d].remove(&s);
        self.fifo.remove(&s.fifo_key());
        if self.subs[sub].q[0].is_empty() && self.subs[sub].q[1].is_empty() {
            self.busy.remove(&sub);
        }
        if let Some(b) = self.batch.as_mut() {
            b.left -= 1;
            b.last = s.key();
        }
        s.r
    }

    /// Open a turn of subqueue `sub` in direction `dir`, starting at `first`.
    fn open(&mut self, sub: usize, dir: usize, first: u32) -> SchedReq {
        self.subs[sub].last_dir = Some(dir);
        self.rr = sub;
        self.batch = Some(Batch {
            sub,
            dir,
            left: self.batch_size[dir],
            last: (0, 0),
        });
        self.take(first)
    }
}

impl IoScheduler for ParDispatcher {
    fn name(&self) -> &'static str {
        "pardispatcher"
    }
    fn add(&mut self, r: SchedReq, now: SimTime, merged: &mut Vec<(u32, u32)>) {
        if r.op == IoOp::Flush {
            self.pass.push_back(r);
            return;
        }
        let d = dir_of(r.op);
        let sub = self.sub_of(r.lba);
        let deadline = now + self.expire[d];
        let merge = self.merge.then_some(self.max);
        let q = &mut self.subs[sub].q[d];
        match q.add(&mut self.slots, r, deadline, sub as u64, merge, merged) {
            Added::Merged(old) => {
                // The kept request's expiry may have moved earlier: keep the global
                // FIFO in step.
                let new = self.slots.get(old.r.id).fifo_key();
                if new != old.fifo_key() {
                    self.fifo.remove(&old.fifo_key());
                    self.fifo.insert(new);
                }
            }
            Added::Queued(s) => {
                self.fifo.insert(s.fifo_key());
                self.busy.insert(sub);
            }
        }
    }

    fn dispatch(&mut self, now: SimTime) -> Option<SchedReq> {
        if let Some(r) = self.pass.pop_front() {
            return Some(r);
        }
        // Continue the running turn: next in address order (wrapping to the
        // lowest), while the batch lasts and the direction is not empty.
        if let Some(b) = self.batch {
            if b.left > 0 {
                let q = &self.subs[b.sub].q[b.dir];
                if let Some(id) = q.after(b.last).or_else(|| q.first()) {
                    return Some(self.take(id));
                }
            }
            self.batch = None;
        }
        // Expired requests first.
        if let Some(&(d, _, id)) = self.fifo.first() {
            if d <= now {
                let s = self.slots.get(id);
                let (sub, dir) = (s.owner as usize, dir_of(s.r.op));
                return Some(self.open(sub, dir, id));
            }
        }
        // Round robin over non-empty subqueues.
        let sub = *self
            .busy
            .range(self.rr.wrapping_add(1)..)
            .next()
            .or_else(|| self.busy.first())?;
        let sq = &self.subs[sub];
        let want = match sq.last_dir {
            Some(d) => 1 - d,
            None => 0,
        };
        let dir = if sq.q[want].is_empty() {
            1 - want
        } else {
            want
        };
        let first = sq.q[dir].first().expect("busy subqueue has requests");
        Some(self.open(sub, dir, first))
    }

    fn len(&self) -> usize {
        self.slots.len() + self.pass.len()
    }
}

#[cfg(test)]
mod tests {
    use super::super::testutil::*;
    use super::*;
    use ssd_core::units::Size;

    fn pd(sub_sectors: u64, cap: u64) -> ParDispatcher {
        let cfg = SchedConfig {
            kind: "pardispatcher".into(),
            subregion: Size(sub_sectors * 512),
            read_batch: 2,
            write_batch: 1,
            ..Default::default()
        };
        ParDispatcher::new(&cfg, cap).unwrap()
    }

    #[test]
    fn subqueue_count_is_ceiling() {
        assert_eq!(pd(1000, 10_000).subqueues(), 10);
        assert_eq!(pd(1000, 10_001).subqueues(), 11);
        assert_eq!(pd(1 << 40, 10_001).subqueues(), 1, "clamped to capacity");
        let cfg = SchedConfig::default();
        // The paper's setup: 60 GB, 4 GB subregions -> 15 subqueues.
        let cap = 60_000_000_000u64 / 512;
        assert_eq!(ParDispatcher::new(&cfg, cap).unwrap().subqueues(), 14);
        assert_eq!(ParDispatcher::new(&cfg, 60 << 21).unwrap().subqueues(), 15);
    }

    #[test]
    fn round_robin_with_unidirectional_batches() {
        // 3 subqueues of 1000 sectors. Subqueue 0: reads 10, 20, 30 and writes 40,
        // 50; subqueue 2: reads 2010, 2020. Batches: 2 reads, 1 write.
        let mut s = pd(1000, 3000);
        let mut m = vec![];
        let mut id = 0;
        let mut add = |s: &mut ParDispatcher, op, lba| {
            id += 1;
            s.add(req(id, op, lba, 8, 0, 0), SimTime(0), &mut m);
        };
        add(&mut s, IoOp::Read, 30);
        add(&mut s, IoOp::Write, 50);
        add(&mut s, IoOp::Read, 2020);
        add(&mut s, IoOp::Read, 10);
        add(&mut s, IoOp::Write, 40);
        add(&mut s, IoOp::Read, 20);
        add(&mut s, IoOp::Read, 2010);
        let got: Vec<(IoOp, u64)> = std::iter::from_fn(|| s.dispatch(SimTime(0)))
            .map(|r| (r.op, r.lba))
            .collect();
        use IoOp::{Read as R, Write as W};
        assert_eq!(
            got,
            vec![
                (R, 10), // sub 0, first turn: reads, address order, batch of 2
                (R, 20),
                (R, 2010), // sub 2 (sub 1 is empty), reads
                (R, 2020),
                (W, 40), // sub 0 again: opposite direction (writes), batch of 1
                (R, 30), // sub 0 (only busy one): opposite again -> reads
                (W, 50),
            ]
        );
    }

    #[test]
    fn merges_only_within_a_subqueue() {
        let mut s = pd(1000, 3000);
        let mut m = vec![];
        s.add(req(1, IoOp::Write, 992, 8, 0, 0), SimTime(0), &mut m);
        s.add(req(2, IoOp::Write, 1000, 8, 0, 0), SimTime(0), &mut m);
        s.add(req(3, IoOp::Write, 984, 8, 0, 0), SimTime(0), &mut m);
        assert_eq!(m, vec![(1, 3)], "1000 is in subqueue 1, 984 joins 992 in 0");
        assert_eq!(s.len(), 2);
    }

    #[test]
    fn expired_request_jumps_the_round_robin() {
        let mut s = pd(1000, 3000);
        let mut m = vec![];
        s.add(req(1, IoOp::Write, 2500, 8, 0, 0), SimTime(0), &mut m);
        for i in 0..4u32 {
            s.add(
                req(10 + i, IoOp::Read, 100 + 8 * i as u64, 8, 0, 0),
                SimTime(4_800_000_000),
                &mut m,
            );
        }
        // At 5 s the write (deadline 5 s) is expired: it goes before subqueue 0's reads.
        assert_eq!(s.dispatch(SimTime(5_000_000_000)).unwrap().id, 1);
    }
}
