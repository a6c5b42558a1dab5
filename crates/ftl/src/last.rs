//! LAST (Lee et al. 2008): a locality detector on request size sends writes
//! larger than `ftl.last_seq_threshold` to sequential log blocks (several, one
//! per stream, FIFO-replaced, switch-merged when complete) and the rest to
//! random log blocks, which are split into a hot and a cold partition. A page
//! rewritten while its previous copy still sits in the random log area is hot
//! (temporal locality): hot pages die in place in the hot partition, so a victim
//! there is often entirely invalid and is reclaimed by a bare erase. When the
//! random logs are all taken: a dead log (no valid page) is erased if there is
//! one, else a victim is chosen by the GC policy in the cold partition (the hot
//! one if the cold is empty) and every data block with a valid page in it is
//! full-merged, then it is erased.
//!
//! Sequential logs take `ceil(L / 4)` of the L log blocks (at least 1, leaving at
//! least 2 random ones): the paper leaves the split to configuration.
//! A sequential write that does not start at a block's first page (and does not
//! continue an open sequential log) is treated as random, the paper's known
//! weakness.

use crate::hybrid::{hybrid_core_methods, Core, NONE};
use ssd_core::config::{invalid, ConfigError, FtlConfig};
use ssd_core::ftl::{Ftl, FtlCtx, Purpose};
use ssd_core::DriveShape;
use ssd_core::{BlockId, Lpn, PlaneId, Ppn};

/// The LAST FTL (see the module docs).
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct Last {
    /// The block map, page view, merges and counters shared with the other block-mapped FTLs.
    pub core: Core,
    /// Requests of more than this many pages are sequential.
    seq_pages: u64,
    /// Sequential logs (block, lbn), oldest first.
    seq: Vec<(u32, u32)>,
    max_seq: usize,
    /// Random logs per partition, in append order; the last may be open.
    hot: Vec<u32>,
    cold: Vec<u32>,
    max_rand: usize,
    /// Block is a random log.
    in_rand: Vec<bool>,
    rr: u32,
}

impl Last {
    /// LAST with `ftl.log_area`'s log blocks (at least 3: sequential, hot and cold random); an
    /// error otherwise or when the physical blocks cannot hold the data and log blocks.
    pub fn new(c: &FtlConfig, d: &DriveShape) -> Result<Last, ConfigError> {
        let lb = c
            .log
            .log_blocks(crate::hybrid::unit_geometry(c, d).total_blocks() as u64)
            as usize;
        if lb < 3 {
            return Err(invalid(
                "ftl.log_area",
                "LAST needs at least 3 log blocks (sequential, hot and cold random)",
            ));
        }
        let max_seq = lb.div_ceil(4).clamp(1, lb - 2);
        let t = c.last.seq_threshold.0;
        let page = d.geometry.page_size as u64;
        Ok(Last {
            core: Core::new(c, d, lb as u32)?,
            // size > t bytes  <=>  pages * page > t  <=>  pages > floor(t / page)
            seq_pages: t / page,
            seq: Vec::new(),
            max_seq,
            hot: Vec::new(),
            cold: Vec::new(),
            max_rand: lb - max_seq,
            in_rand: vec![false; crate::hybrid::unit_geometry(c, d).total_blocks() as usize],
            rr: 0,
        })
    }

    fn merge_seq(&mut self, i: usize, cx: &mut FtlCtx) {
        let (b, lbn) = self.seq.remove(i);
        let c = &mut self.core;
        if c.try_switch_partial(cx, lbn, b, 0).is_none() {
            let next = c.full_merge(cx, lbn, 0);
            c.erase(cx, b, Purpose::Merge, next);
            c.stats.merge_erases += 1;
        }
    }

    /// Full merge of `lbn`, erasing its sequential log if it has one.
    fn full_merge(&mut self, lbn: u32, cx: &mut FtlCtx) -> u16 {
        let mut next = self.core.full_merge(cx, lbn, 0);
        if let Some(i) = self.seq.iter().position(|&(_, l)| l == lbn) {
            let (b, _) = self.seq.remove(i);
            next = next.max(self.core.erase(cx, b, Purpose::Merge, next));
            self.core.stats.merge_erases += 1;
        }
        next
    }

    /// Free one random log slot.
    fn evict_rand(&mut self, cx: &mut FtlCtx) -> bool {
        let all: Vec<u32> = self.hot.iter().chain(&self.cold).copied().collect();
        if all.is_empty() {
            return false;
        }
        // Dead-block scan over the random area: it stops at the first block
        // with no valid page; every block looked at until then is a candidate
        // examined (its valid count read).
        let pos = all
            .iter()
            .position(|&b| self.core.blocks.valid(b as usize) == 0);
        let scanned = pos.map_or(all.len(), |i| i + 1) as u64;
        cx.work.gc_candidates += scanned;
        self.core.stats.gc_victims_examined += scanned;
        let dead = pos.map(|i| all[i]);
        let v = match dead {
            Some(b) => b,
            None => {
                let part = if self.cold.is_empty() {
                    self.hot.clone()
                } else {
                    self.cold.clone()
                };
                match self.core.pick_victim(&part, cx) {
                    Some(v) => v,
                    None => return false,
                }
            }
        };
        self.hot.retain(|&b| b != v);
        self.cold.retain(|&b| b != v);
        self.in_rand[v as usize] = false;
        let mut next = 0;
        for lbn in self.core.lbns_in(v) {
            next = next.max(self.full_merge(lbn, cx));
        }
        self.core.erase(cx, v, Purpose::Merge, next);
        self.core.stats.merge_erases += 1;
        true
    }

    fn write_random(&mut self, lpn: u64, cx: &mut FtlCtx) {
        let old = self.core.l2p[lpn as usize];
        let hot = old != NONE && self.in_rand[self.core.g.block_of(Ppn(old)).0 as usize];
        let part = if hot { &self.hot } else { &self.cold };
        let open = part.last().copied().filter(|&b| !self.core.is_full(b));
        let b = match open {
            Some(b) => b,
            None => {
                if self.hot.len() + self.cold.len() >= self.max_rand {
                    self.evict_rand(cx);
                }
                let np = self.core.g.total_planes();
                let pref = PlaneId(self.rr % np);
                self.rr = (self.rr + 1) % np;
                let b = self.core.new_log(pref);
                self.in_rand[b as usize] = true;
                if hot {
                    self.hot.push(b);
                } else {
                    self.cold.push(b);
                }
                b
            }
        };
        self.core.program(cx, b, Some(lpn), Purpose::Host, None, 0);
    }

    fn write_page(&mut self, lpn: u64, sequential: bool, cx: &mut FtlCtx) {
        let (lbn, off) = self.core.lbn_off(lpn);
        if self.core.try_in_place(cx, lbn, off, off + 1) {
            return;
        }
        if sequential {
            let cur = self.seq.iter().position(|&(_, l)| l == lbn);
            let target = match cur {
                Some(i) if self.core.wp(self.seq[i].0) == off => Some(self.seq[i].0),
                _ if off == 0 => {
                    if let Some(i) = cur {
                        self.merge_seq(i, cx);
                    }
                    if self.seq.len() >= self.max_seq {
                        self.merge_seq(0, cx);
                    }
                    let b = self.core.new_log(self.core.plane_of_lbn(lbn));
                    self.seq.push((b, lbn));
                    Some(b)
                }
                _ => None,
            };
            if let Some(b) = target {
                self.core.program(cx, b, Some(lpn), Purpose::Host, None, 0);
                if self.core.is_full(b) {
                    let i = self.seq.iter().position(|&(x, _)| x == b).expect("seq log");
                    self.merge_seq(i, cx);
                }
                return;
            }
        }
        self.write_random(lpn, cx);
    }

    fn logs(&self) -> Vec<u32> {
        self.seq
            .iter()
            .map(|&(b, _)| b)
            .chain(self.hot.iter().copied())
            .chain(self.cold.iter().copied())
            .collect()
    }
}

impl Ftl for Last {
    hybrid_core_methods!();
    fn name(&self) -> &'static str {
        "last"
    }
    fn write(&mut self, lpn: Lpn, n: u32, cx: &mut FtlCtx) {
        self.core.begin(0, cx);
        let sequential = n as u64 > self.seq_pages;
        for l in lpn.0..lpn.0 + n as u64 {
            cx.work.map_lookups += 1;
            self.core.blocks.clock += 1;
            self.write_page(l, sequential, cx);
        }
        self.core.static_wear_level(cx);
    }
    fn background(&mut self, cx: &mut FtlCtx) -> bool {
        if self.core.merge_all(cx) {
            // Random logs first (their merges may take sequential logs with
            // them), then the sequential logs.
            if self.hot.is_empty() && self.cold.is_empty() && self.seq.is_empty() {
                return false;
            }
            self.core.begin_background(cx);
            let mut did = self.evict_rand(cx);
            if !did && !self.seq.is_empty() {
                self.merge_seq(0, cx);
                did = true;
            }
            return self.core.background_done(did);
        }
        let t = self.core.bg_target as usize;
        let used = self.hot.len() + self.cold.len();
        if t == 0 || used < 2 || used + t <= self.max_rand {
            return false;
        }
        self.core.begin_background(cx);
        let did = self.evict_rand(cx);
        self.core.background_done(did)
    }
    fn check_invariants(&self) -> Result<(), String> {
        let c = &self.core;
        c.check(&self.logs())?;
        for &(b, lbn) in &self.seq {
            let first = c.g.first_page(BlockId(b)).0 as usize;
            for (i, &l) in c.p2l[first..first + c.wp(b) as usize].iter().enumerate() {
                if l != NONE && l != lbn * c.ppb + i as u32 {
                    return Err(format!(
                        "sequential log {b} of lbn {lbn} holds lpn {l} at page {i}"
                    ));
                }
            }
        }
        if self.seq.len() > self.max_seq || self.hot.len() + self.cold.len() > self.max_rand {
            return Err("more logs than the partition limits".into());
        }
        for (b, &r) in self.in_rand.iter().enumerate() {
            if r != (self.hot.contains(&(b as u32)) || self.cold.contains(&(b as u32))) {
                return Err(format!(
                    "block {b}: random-log flag disagrees with the partitions"
                ));
            }
        }
        Ok(())
    }
}
