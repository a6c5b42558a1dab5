//! Kyber (Linux block/kyber-iosched.c, 4.18+ form): token-based latency targets.
//!
//! Requests fall into scheduling domains by operation, as
//! `kyber_sched_domain` has done since 4.19: reads, writes (sync or not) and
//! discards (its fourth domain, other, holds flushes, which pass every
//! scheduler here). Each domain has a token pool; a
//! request needs a token to be dispatched and returns it on completion, so a
//! domain's pool size is its dispatch depth (initially 256 reads, 128 writes, 64
//! other; never below 1 or above the initial size). Dispatch serves the domains
//! round robin in batches (16 reads, 8 writes, 1 other), FIFO inside a domain.
//!
//! Completions feed two latency histograms per domain: I/O latency (dispatch to
//! completion) and total latency (arrival to completion), in 8 buckets of a
//! quarter of the domain's target each (read `kyber_read_target` 2 ms, write
//! `kyber_write_target` 10 ms, other 5 s). Every 100 ms (evaluated at the first
//! dispatch or completion after the timer is due; Linux uses a kernel timer) a
//! domain's percentile is taken once it has 500 samples or its window is 1 s old:
//! if any domain's p90 I/O latency is over target the device is congested and
//! every domain with a p99 total latency is resized to depth x (p99 bucket + 1) /
//! 4, i.e. throttled when its own latency is good and relieved when it is bad;
//! without congestion only domains over their target are resized (upward). When
//! reads miss their target, writes' depth therefore shrinks. Merges use the last
//! 8 queued requests of the domain (as `blk_bio_list_merge`).

use super::dir_of;
use super::SchedConfig;
use crate::workload::IoOp;
use ssd_core::sched::{try_merge, IoScheduler, SchedReq};
use ssd_core::units::{Dur, SimTime};
use std::collections::VecDeque;

const DOMAINS: usize = 3;
const DEPTH: [u32; DOMAINS] = [256, 128, 64];
const BATCH: [u32; DOMAINS] = [16, 8, 1];
const OTHER_TARGET: Dur = Dur::from_ms(5000);
const BUCKETS: usize = 8;
const GOOD_BUCKETS: usize = 4;
const LATENCY_SHIFT: u32 = 2;
const TIMER: Dur = Dur::from_ms(100);
const MIN_SAMPLES: u64 = 500;
const WINDOW: Dur = Dur::from_ms(1000);
const MERGE_SCAN: usize = 8;

#[derive(Clone, Copy, Debug, Default)]
struct Hist {
    b: [u64; BUCKETS],
}

/// The Kyber scheduler.
#[derive(Debug)]
pub struct Kyber {
    q: [VecDeque<SchedReq>; DOMAINS],
    pass: VecDeque<SchedReq>,
    target: [Dur; DOMAINS],
    depth: [u32; DOMAINS],
    inflight: [u32; DOMAINS],
    cur: usize,
    batching: u32,
    /// [domain][0 = I/O latency, 1 = total latency]
    hist: [[Hist; 2]; DOMAINS],
    window_end: [Option<SimTime>; DOMAINS],
    domain_p99: [Option<usize>; DOMAINS],
    timer_at: Option<SimTime>,
    /// Dispatch time by request id (ids are small slab indices).
    dispatched_at: Vec<SimTime>,
    max: u32,
    merge: bool,
    len: usize,
}

fn domain_of(op: IoOp) -> usize {
    match op {
        IoOp::Trim => 2,
        op => dir_of(op),
    }
}

impl Kyber {
    /// A Kyber scheduler with the tunables of `cfg` (`sched.*`); `cfg` must be valid.
    pub fn new(cfg: &SchedConfig) -> Kyber {
        Kyber {
            q: Default::default(),
            pass: VecDeque::new(),
            target: [cfg.kyber_read_target, cfg.kyber_write_target, OTHER_TARGET],
            depth: DEPTH,
            inflight: [0; DOMAINS],
            cur: 0,
            batching: 0,
            hist: Default::default(),
            window_end: [None; DOMAINS],
            domain_p99: [None; DOMAINS],
            timer_at: None,
            dispatched_at: Vec::new(),
            max: super::max_sectors(cfg),
            merge: cfg.merge,
            len: 0,
        }
    }

    /// Current dispatch depth (token pool size) of reads, writes and other.
    pub fn depths(&self) -> [u32; DOMAINS] {
        self.depth
    }

    fn bucket(&self, d: usize, lat: u64) -> usize {
        let divisor = (self.target[d].0 >> LATENCY_SHIFT).max(1);
        ((lat.saturating_sub(1) / divisor) as usize).min(BUCKETS - 1)
    }

    /// calculate_percentile: None until 500 samples or a 1 s window; clears the histogram.
    fn percentile(&mut self, d: usize, kind: usize, pct: u64, now: SimTime) -> Option<usize> {
        let h = &mut self.hist[d][kind];
        let samples: u64 = h.b.iter().sum();
        if samples == 0 {
            return None;
        }
        let end = *self.window_end[d].get_or_insert(now + WINDOW);
        if samples < MIN_SAMPLES && now < end {
            return None;
        }
        self.window_end[d] = None;
        let mut left = (samples * pct).div_ceil(100);
        let mut bucket = 0;
        while bucket < BUCKETS - 1 {
            if h.b[bucket] >= left {
                break;
            }
            left -= h.b[bucket];
            bucket += 1;
        }
        *h = Hist::default();
        Some(bucket)
    }

    fn timer(&mut self, now: SimTime) {
        match self.timer_at {
            Some(t) if now >= t => self.timer_at = None,
            _ => return,
        }
        let mut bad = false;
        for d in 0..DOMAINS - 1 {
            if self
                .percentile(d, 0, 90, now)
                .is_some_and(|b| b >= GOOD_BUCKETS)
            {
                bad = true;
            }
        }
        for (d, &max_depth) in DEPTH.iter().enumerate().take(DOMAINS - 1) {
            let mut p99 = self.percentile(d, 1, 99, now);
            if bad {
                if p99.is_none() {
                    p99 = self.domain_p99[d];
                }
                self.domain_p99[d] = None;
            } else if p99.is_some() {
                self.domain_p99[d] = p99;
            }
            let Some(p) = p99 else { continue };
            if bad || p >= GOOD_BUCKETS {
                let depth = (self.depth[d] as u64 * (p as u64 + 1)) >> LATENCY_SHIFT;
                self.depth[d] = (depth as u32).clamp(1, max_depth);
            }
        }
    }

    fn take_from(&mut self, d: usize) -> Option<SchedReq> {
        if self.q[d].is_empty() || self.inflight[d] >= self.depth[d] {
            return None;
        }
        let r = self.q[d].pop_front().expect("non-empty");
        self.inflight[d] += 1;
        self.batching += 1;
        Some(r)
    }
}

impl IoScheduler for Kyber {
    fn name(&self) -> &'static str {
        "kyber"
    }
    fn add(&mut self, r: SchedReq, _now: SimTime, merged: &mut Vec<(u32, u32)>) {
        if r.op == IoOp::Flush {
            self.pass.push_back(r);
            return;
        }
        let d = domain_of(r.op);
        if self.merge {
            for q in self.q[d].iter_mut().rev().take(MERGE_SCAN) {
                if try_merge(q, &r, self.max) {
                    merged.push((q.id, r.id));
                    return;
                }
            }
        }
        self.q[d].push_back(r);
        self.len += 1;
    }
    fn dispatch(&mut self, now: SimTime) -> Option<SchedReq> {
        self.timer(now);
        let r = if let Some(r) = self.pass.pop_front() {
            Some(r)
        } else {
            let mut got = None;
            if self.batching < BATCH[self.cur] {
                got = self.take_from(self.cur);
            }
            if got.is_none() {
                self.batching = 0;
                for _ in 0..DOMAINS {
                    self.cur = (self.cur + 1) % DOMAINS;
                    got = self.take_from(self.cur);
                    if got.is_some() {
                        break;
                    }
                }
            }
            if got.is_some() {
                self.len -= 1;
            }
            got
        };
        let r = r?;
        let i = r.id as usize;
        if i >= self.dispatched_at.len() {
            self.dispatched_at.resize(i + 1, SimTime::ZERO);
        }
        self.dispatched_at[i] = now;
        Some(r)
    }
    fn completed(&mut self, r: &SchedReq, now: SimTime) {
        self.timer(now);
        if r.op == IoOp::Flush {
            return;
        }
        let d = domain_of(r.op);
        self.inflight[d] -= 1;
        let io = now.0 - self.dispatched_at[r.id as usize].0;
        let total = now.0 - r.arrival.0;
        let (bi, bt) = (self.bucket(d, io), self.bucket(d, total));
        self.hist[d][0].b[bi] += 1;
        self.hist[d][1].b[bt] += 1;
        if self.timer_at.is_none() {
            self.timer_at = Some(now + TIMER);
        }
    }
    fn len(&self) -> usize {
        self.len + self.pass.len()
    }
}

#[cfg(test)]
mod tests {
    use super::super::testutil::*;
    use super::*;

    #[test]
    fn slow_reads_throttle_writes() {
        let cfg = SchedConfig::default();
        let mut k = Kyber::new(&cfg);
        let mut m = vec![];
        let mut id = 0u32;
        let mut t = 0u64;
        // 600 reads that each take 5 ms (over the 2 ms target) and 600 fast writes.
        for _ in 0..600 {
            for op in [IoOp::Read, IoOp::Write] {
                id += 1;
                let r = req(id, op, 16 * id as u64, 8, t, 0);
                k.add(r, SimTime(t), &mut m);
                let d = k.dispatch(SimTime(t)).unwrap();
                let lat = if op == IoOp::Read {
                    5_000_000
                } else {
                    1_000_000
                };
                k.completed(&d, SimTime(t + lat));
            }
            t += 10_000;
        }
        // Past the 100 ms timer: congestion is seen, writes (good latency,
        // p99 bucket 0) shrink to a quarter, reads (bad) grow but are capped.
        k.dispatch(SimTime(t + 200_000_000));
        let [r, w, _] = k.depths();
        assert_eq!(w, 32, "writes throttled to 128 * 1/4");
        assert_eq!(r, 256);
    }

    #[test]
    fn depth_limits_dispatch() {
        let cfg = SchedConfig::default();
        let mut k = Kyber::new(&cfg);
        k.depth[1] = 2;
        let mut m = vec![];
        for i in 0..4 {
            k.add(
                req(i, IoOp::Write, 100 * i as u64, 8, 0, 0),
                SimTime(0),
                &mut m,
            );
        }
        let a = k.dispatch(SimTime(0)).unwrap();
        assert!(k.dispatch(SimTime(0)).is_some());
        assert!(k.dispatch(SimTime(0)).is_none(), "no write token left");
        k.completed(&a, SimTime(10));
        assert!(k.dispatch(SimTime(10)).is_some());
        let _ = drain(&mut k, SimTime(10));
    }
}
