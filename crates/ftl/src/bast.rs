//! BAST (Kim et al. 2002): block-mapped data blocks plus a pool of page-mapped
//! log blocks, each dedicated to one data block. A write that cannot go in place
//! (its offset is not the data block's next free page) is appended to the
//! logical block's log. A log that fills up is merged at once: a switch merge if
//! it holds the whole block in order, a partial merge if it holds an in-order
//! prefix (the rest is copied in, then it becomes the data block), else a full
//! merge. When every log block is taken, a victim log is chosen by the GC policy
//! (greedy = fewest valid pages, cost-benefit, FIFO, random, windowed) and merged.
//! Idle time (background_gc_blocks > 0) merges logs until that many are free.

use crate::hybrid::{hybrid_core_methods, Core, NONE};
use ssd_core::config::{ConfigError, FtlConfig};
use ssd_core::ftl::{Ftl, FtlCtx, Purpose};
use ssd_core::DriveShape;

/// The BAST FTL (see the module docs).
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct Bast {
    /// The block map, page view, merges and counters shared with the other block-mapped FTLs.
    pub core: Core,
    /// Logical block -> its log block.
    logmap: Vec<u32>,
    /// Log blocks in use, in allocation order.
    logs: Vec<u32>,
    /// Physical log block -> the logical block it serves.
    log_owner: Vec<u32>,
}

impl Bast {
    /// BAST with `ftl.log_area`'s log blocks; an error if the capacity is not whole blocks or
    /// the physical blocks cannot hold the data and log blocks.
    pub fn new(c: &FtlConfig, d: &DriveShape) -> Result<Bast, ConfigError> {
        let units = crate::hybrid::unit_geometry(c, d).total_blocks();
        let lb = c.log.log_blocks(units as u64) as u32;
        let core = Core::new(c, d, lb)?;
        Ok(Bast {
            logmap: vec![NONE; core.nlb as usize],
            logs: Vec::new(),
            log_owner: vec![NONE; units as usize],
            core,
        })
    }

    /// Merge the log of `lbn` into its data block.
    fn merge_log(&mut self, lbn: u32, cx: &mut FtlCtx) {
        let log = self.logmap[lbn as usize];
        let c = &mut self.core;
        if c.try_switch_partial(cx, lbn, log, 0).is_none() {
            let next = c.full_merge(cx, lbn, 0);
            c.erase(cx, log, Purpose::Merge, next);
            c.stats.merge_erases += 1;
        }
        self.logmap[lbn as usize] = NONE;
        self.log_owner[log as usize] = NONE;
        self.logs.retain(|&b| b != log);
    }

    fn merge_victim(&mut self, cx: &mut FtlCtx) -> bool {
        let cands = self.logs.clone();
        let Some(v) = self.core.pick_victim(&cands, cx) else {
            return false;
        };
        let lbn = self.log_owner[v as usize];
        self.merge_log(lbn, cx);
        true
    }

    fn write_page(&mut self, lpn: u64, cx: &mut FtlCtx) {
        let (lbn, off) = self.core.lbn_off(lpn);
        if self.core.try_in_place(cx, lbn, off, off + 1) {
            return;
        }
        if self.logmap[lbn as usize] == NONE {
            if self.logs.len() >= self.core.log_limit as usize {
                self.merge_victim(cx);
            }
            let c = &mut self.core;
            let b = c.new_log(c.plane_of_lbn(lbn));
            self.logmap[lbn as usize] = b;
            self.log_owner[b as usize] = lbn;
            self.logs.push(b);
        }
        let log = self.logmap[lbn as usize];
        self.core
            .program(cx, log, Some(lpn), Purpose::Host, None, 0);
        if self.core.is_full(log) {
            self.merge_log(lbn, cx);
        }
    }
}

impl Ftl for Bast {
    hybrid_core_methods!(write_page);
    fn name(&self) -> &'static str {
        "bast"
    }
    fn background(&mut self, cx: &mut FtlCtx) -> bool {
        let c = &self.core;
        if c.merge_all(cx) && !self.logs.is_empty() {
            self.core.begin_background(cx);
            let did = self.merge_victim(cx);
            return self.core.background_done(did);
        }
        if c.bg_target == 0
            || self.logs.is_empty()
            || self.logs.len() + (c.bg_target as usize) <= c.log_limit as usize
        {
            return false;
        }
        self.core.begin_background(cx);
        let did = self.merge_victim(cx);
        self.core.background_done(did)
    }
    fn check_invariants(&self) -> Result<(), String> {
        self.core.check(&self.logs)?;
        let c = &self.core;
        for (lbn, &log) in self.logmap.iter().enumerate() {
            if log == NONE {
                continue;
            }
            if !self.logs.contains(&log) || self.log_owner[log as usize] != lbn as u32 {
                return Err(format!("lbn {lbn}: log {log} not in the log list"));
            }
            let first = c.g.first_page(ssd_core::BlockId(log)).0 as usize;
            for &l in &c.p2l[first..first + c.wp(log) as usize] {
                if l != NONE && l / c.ppb != lbn as u32 {
                    return Err(format!("log {log} of lbn {lbn} holds lpn {l}"));
                }
            }
        }
        if self.logmap.iter().filter(|&&b| b != NONE).count() != self.logs.len() {
            return Err("log list and log map disagree".into());
        }
        Ok(())
    }
}
