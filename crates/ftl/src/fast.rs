//! FAST (Lee et al. 2007): log blocks shared by all data blocks. One sequential
//! (SW) log takes writes that start at offset 0 of a block and continue in order;
//! it is switch-merged when full, and merged (partial if it still holds a valid
//! in-order prefix, else full) when a new sequence starts. Every other update is
//! appended to the random (RW) logs, filled in append order. When the RW logs are
//! all taken, the oldest is the victim: a full merge of EVERY data block with a
//! valid page in it, then its erase (victim choice is fixed by the algorithm: one
//! candidate examined). A write whose offset is its data block's next free page
//! goes in place.

use crate::hybrid::{hybrid_core_methods, Core, NONE};
use ssd_core::config::{invalid, ConfigError, FtlConfig};
use ssd_core::ftl::{Ftl, FtlCtx, Purpose};
use ssd_core::DriveShape;
use ssd_core::{BlockId, PlaneId};
use std::collections::VecDeque;

/// The FAST FTL (see the module docs).
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct Fast {
    /// The block map, page view, merges and counters shared with the other block-mapped FTLs.
    pub core: Core,
    sw: u32,
    sw_lbn: u32,
    /// RW logs, oldest first; the newest may still be open.
    rw: VecDeque<u32>,
    max_rw: usize,
    rw_cursor: u32,
}

impl Fast {
    /// FAST with `ftl.log_area`'s log blocks (at least 2: one sequential, one random); an error
    /// otherwise or when the physical blocks cannot hold the data and log blocks.
    pub fn new(c: &FtlConfig, d: &DriveShape) -> Result<Fast, ConfigError> {
        let lb = c
            .log
            .log_blocks(crate::hybrid::unit_geometry(c, d).total_blocks() as u64)
            as u32;
        if lb < 2 {
            return Err(invalid(
                "ftl.log_area",
                "FAST needs at least 2 log blocks (one sequential, one random)",
            ));
        }
        Ok(Fast {
            core: Core::new(c, d, lb)?,
            sw: NONE,
            sw_lbn: NONE,
            rw: VecDeque::new(),
            max_rw: lb as usize - 1,
            rw_cursor: 0,
        })
    }

    fn merge_sw(&mut self, cx: &mut FtlCtx) {
        let (sw, lbn) = (self.sw, self.sw_lbn);
        let c = &mut self.core;
        if c.try_switch_partial(cx, lbn, sw, 0).is_none() {
            let next = c.full_merge(cx, lbn, 0);
            c.erase(cx, sw, Purpose::Merge, next);
            c.stats.merge_erases += 1;
        }
        self.sw = NONE;
        self.sw_lbn = NONE;
    }

    /// Evict the oldest RW log: full-merge every logical block with a valid page
    /// in it, then erase it.
    fn evict_rw(&mut self, cx: &mut FtlCtx) -> bool {
        let Some(v) = self.rw.pop_front() else {
            return false;
        };
        cx.work.gc_candidates += 1;
        self.core.stats.gc_victims_examined += 1;
        self.core.stats.gc_runs += 1;
        let mut next = 0;
        for lbn in self.core.lbns_in(v) {
            next = next.max(self.core.full_merge(cx, lbn, 0));
            if self.sw != NONE && self.sw_lbn == lbn {
                // The merge took the SW log's pages too: it is empty of valid data.
                let s = self.core.erase(cx, self.sw, Purpose::Merge, next);
                next = next.max(s);
                self.core.stats.merge_erases += 1;
                self.sw = NONE;
                self.sw_lbn = NONE;
            }
        }
        self.core.erase(cx, v, Purpose::Merge, next);
        self.core.stats.merge_erases += 1;
        true
    }

    fn write_page(&mut self, lpn: u64, cx: &mut FtlCtx) {
        let (lbn, off) = self.core.lbn_off(lpn);
        if self.core.try_in_place(cx, lbn, off, off + 1) {
            return;
        }
        if off == 0 {
            if self.sw != NONE {
                self.merge_sw(cx);
            }
            self.sw = self.core.new_log(self.core.plane_of_lbn(lbn));
            self.sw_lbn = lbn;
        }
        if self.sw != NONE && self.sw_lbn == lbn && self.core.wp(self.sw) == off {
            self.core
                .program(cx, self.sw, Some(lpn), Purpose::Host, None, 0);
            if self.core.is_full(self.sw) {
                self.merge_sw(cx);
            }
            return;
        }
        let open = self.rw.back().copied().filter(|&b| !self.core.is_full(b));
        let b = match open {
            Some(b) => b,
            None => {
                if self.rw.len() >= self.max_rw {
                    self.evict_rw(cx);
                }
                let np = self.core.g.total_planes();
                let pref = PlaneId(self.rw_cursor % np);
                self.rw_cursor = (self.rw_cursor + 1) % np;
                let b = self.core.new_log(pref);
                self.rw.push_back(b);
                b
            }
        };
        self.core.program(cx, b, Some(lpn), Purpose::Host, None, 0);
    }

    fn logs(&self) -> Vec<u32> {
        let mut v: Vec<u32> = self.rw.iter().copied().collect();
        if self.sw != NONE {
            v.push(self.sw);
        }
        v
    }
}

impl Ftl for Fast {
    hybrid_core_methods!(write_page);
    fn name(&self) -> &'static str {
        "fast"
    }
    fn background(&mut self, cx: &mut FtlCtx) -> bool {
        if self.core.merge_all(cx) {
            // The oldest RW log, open or full, then the SW log.
            if self.rw.is_empty() && self.sw == NONE {
                return false;
            }
            self.core.begin_background(cx);
            if !self.rw.is_empty() {
                self.evict_rw(cx);
            } else {
                self.merge_sw(cx);
            }
            return self.core.background_done(true);
        }
        let t = self.core.bg_target as usize;
        // Only full RW logs are merged ahead of need.
        if t == 0 || self.rw.len() < 2 || self.rw.len() + t <= self.max_rw {
            return false;
        }
        self.core.begin_background(cx);
        let did = self.evict_rw(cx);
        self.core.background_done(did)
    }
    fn check_invariants(&self) -> Result<(), String> {
        let c = &self.core;
        c.check(&self.logs())?;
        if self.sw != NONE {
            let first = c.g.first_page(BlockId(self.sw)).0 as usize;
            let base = self.sw_lbn * c.ppb;
            for (i, &l) in c.p2l[first..first + c.wp(self.sw) as usize]
                .iter()
                .enumerate()
            {
                if l != NONE && l != base + i as u32 {
                    return Err(format!(
                        "SW log {} of lbn {} holds lpn {l} at page {i}",
                        self.sw, self.sw_lbn
                    ));
                }
            }
        }
        for (i, &b) in self.rw.iter().enumerate() {
            if i + 1 < self.rw.len() && !c.is_full(b) {
                return Err(format!("RW log {b} is not the newest but is not full"));
            }
        }
        if self.rw.len() > self.max_rw {
            return Err(format!("{} RW logs, limit {}", self.rw.len(), self.max_rw));
        }
        Ok(())
    }
}
