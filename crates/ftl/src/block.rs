//! Block mapping (Shinohara; Ban): one entry per logical block, the page offset
//! fixed inside the block. A write at or past the data block's write pointer
//! goes in place (filler pages keep the block in program order); overwriting a
//! written page is copy-on-overwrite: a fresh block gets every other valid page
//! at its own offset plus the new data, and the old block is erased. That copy
//! is counted as a full merge (`merges_full`, `merge_page_copies`,
//! `merge_erases`) and the host write waits for it. No log blocks, no GC.

use crate::hybrid::{hybrid_core_methods, Core, NONE};
use ssd_core::config::{ConfigError, FtlConfig};
use ssd_core::ftl::{Ftl, FtlCtx, Purpose};
use ssd_core::DriveShape;
use ssd_core::Lpn;

/// The block-mapping FTL (see the module docs).
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct BlockFtl {
    /// The block map, page view, merges and counters shared with the other block-mapped FTLs.
    pub core: Core,
}

impl BlockFtl {
    /// Block mapping without log blocks; an error if the capacity is not whole blocks or the
    /// physical blocks cannot hold them with 2 spares.
    pub fn new(c: &FtlConfig, d: &DriveShape) -> Result<BlockFtl, ConfigError> {
        Ok(BlockFtl {
            core: Core::new(c, d, 0)?,
        })
    }

    /// Write offsets `[a, b)` of logical block `lbn`.
    fn write_run(&mut self, lbn: u32, a: u32, b: u32, cx: &mut FtlCtx) {
        let c = &mut self.core;
        let d = c.dmap[lbn as usize];
        if d == NONE {
            let nb = c.alloc(c.plane_of_lbn(lbn));
            c.set_data(lbn, nb);
            c.fill(cx, lbn, nb, a..b, Purpose::Host, 0);
        } else if c.wp(d) <= a {
            c.fill(cx, lbn, d, a..b, Purpose::Host, 0);
        } else {
            let nb = c.alloc(c.plane_of_lbn(lbn));
            let f = c.fill(cx, lbn, nb, a..b, Purpose::Merge, 0);
            c.dmap[lbn as usize] = NONE;
            c.owner[d as usize] = NONE;
            c.set_data(lbn, nb);
            c.erase(cx, d, Purpose::Merge, f.next);
            c.stats.merges_full += 1;
            c.stats.merge_page_copies += f.copies;
            c.stats.merge_erases += 1;
        }
    }
}

impl Ftl for BlockFtl {
    hybrid_core_methods!();
    fn name(&self) -> &'static str {
        "block"
    }
    fn write(&mut self, lpn: Lpn, n: u32, cx: &mut FtlCtx) {
        self.core.begin(0, cx);
        let ppb = self.core.ppb as u64;
        let end = lpn.0 + n as u64;
        let mut l = lpn.0;
        while l < end {
            let lbn = (l / ppb) as u32;
            let a = (l % ppb) as u32;
            let b = ((end - lbn as u64 * ppb).min(ppb)) as u32;
            cx.work.map_lookups += (b - a) as u64;
            self.core.blocks.clock += (b - a) as u64;
            self.write_run(lbn, a, b, cx);
            l = lbn as u64 * ppb + b as u64;
        }
        self.core.static_wear_level(cx);
    }
    fn check_invariants(&self) -> Result<(), String> {
        self.core.check(&[])
    }
}
