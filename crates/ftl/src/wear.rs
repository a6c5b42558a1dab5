//! Wear levelling. Dynamic: free blocks are taken least-worn first
//! ([`FreePick::LeastWorn`]). Static: cold data is moved off every block whose
//! erase count lags the drive's maximum by more than a threshold (ops tagged
//! `Purpose::WearLevel`), so that the young block returns to circulation. The
//! rule is checked after every erase, levelling's own included (as MQSim's
//! `GC_and_WL_Unit_Base` does on each erase completion), in the plane erased
//! in, and in every plane when the drive's maximum grows: so after each FTL
//! call no movable block lags the maximum by more than the threshold. (A check
//! once per GC moving one block fell behind whenever more blocks lagged than
//! GCs came, and a plane's own maximum let planes that wear at different rates
//! drift apart without bound.) Each FTL does the move itself (it owns the
//! mapping); this module picks the block.

use crate::blocks::{BlockState, Blocks, FreePick};
use ssd_core::config::{FtlConfig, WearLeveling};
use ssd_core::{BlockId, PlaneId};
use std::ops::Range;

/// The wear-levelling settings of an FTL (see the module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WearPolicy {
    /// None, dynamic or static (`ftl.wear_leveling`).
    pub mode: WearLeveling,
    /// Static levelling acts when a plane's erase-count spread exceeds this
    /// (`ftl.static_wl_threshold`).
    pub threshold: u32,
}

impl WearPolicy {
    /// The settings of `ftl.wear_leveling` and `ftl.static_wl_threshold`.
    pub fn from_config(c: &FtlConfig) -> WearPolicy {
        WearPolicy {
            mode: c.wear_leveling,
            threshold: c.static_wl_threshold,
        }
    }
    /// How free blocks are taken: least-worn for dynamic and static levelling.
    pub fn free_pick(&self) -> FreePick {
        match self.mode {
            WearLeveling::None => FreePick::Fifo,
            WearLeveling::Dynamic | WearLeveling::Static => FreePick::LeastWorn,
        }
    }

    /// Static levelling: the least-worn block of `plane` among those `eligible`
    /// (full blocks holding data the FTL can move), if it lags the drive's most
    /// worn block by more than the threshold. None when static levelling is off.
    /// Moving and erasing it never raises the maximum, so calling this until it
    /// answers None ends.
    pub fn static_victim(
        &self,
        b: &Blocks,
        plane: PlaneId,
        eligible: impl Fn(usize) -> bool,
    ) -> Option<BlockId> {
        if self.mode != WearLeveling::Static {
            return None;
        }
        let first = b.g.first_block_of_plane(plane).0 as usize;
        let range = first..first + b.g.blocks_per_plane as usize;
        let (min, victim) = range
            .filter(|&i| b.state(i) == BlockState::Full && b.valid(i) > 0 && eligible(i))
            .map(|i| (b.erase_count[i], i))
            .min()?;
        (b.erase_max() - min > self.threshold).then_some(BlockId(victim as u32))
    }

    /// The planes (ids) static levelling must check after an erase in `plane`:
    /// that plane, or every plane if the drive's maximum grew past `swept` (the
    /// maximum at the last check of every plane, updated here). Empty when
    /// static levelling is off.
    pub fn planes_to_check(&self, b: &Blocks, plane: PlaneId, swept: &mut u32) -> Range<u32> {
        if self.mode != WearLeveling::Static {
            return 0..0;
        }
        if b.erase_max() > *swept {
            *swept = b.erase_max();
            0..b.g.total_planes()
        } else {
            plane.0..plane.0 + 1
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ssd_core::Geometry;

    fn geo() -> Geometry {
        Geometry {
            channels: 1,
            ways: 1,
            dies: 1,
            planes: 1,
            blocks_per_plane: 4,
            pages_per_block: 2,
            page_size: 4096,
        }
    }

    #[test]
    fn static_victim_is_the_coldest_full_block_past_the_threshold() {
        let mut b = Blocks::new(geo());
        let p = PlaneId(0);
        // Block 0: full of data, never erased. Blocks 1-3 erased 5 times each.
        let b0 = b.alloc(p).unwrap();
        b.program_next(b0);
        b.program_next(b0);
        for _ in 0..5 {
            for _ in 0..3 {
                let x = b.alloc(p).unwrap();
                b.program_next(x);
                b.invalidate(b.g.first_page(x));
                b.program_next(x);
                b.invalidate(ssd_core::Ppn(b.g.first_page(x).0 + 1));
                b.erase(x);
            }
        }
        let w = WearPolicy {
            mode: WearLeveling::Static,
            threshold: 4,
        };
        assert_eq!(w.static_victim(&b, p, |_| true), Some(b0));
        let w5 = WearPolicy { threshold: 5, ..w };
        assert_eq!(w5.static_victim(&b, p, |_| true), None);
        let off = WearPolicy {
            mode: WearLeveling::Dynamic,
            ..w
        };
        assert_eq!(off.static_victim(&b, p, |_| true), None);
        assert_eq!(off.free_pick(), FreePick::LeastWorn);
    }
}
