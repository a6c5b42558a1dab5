//! Wear levelling. Dynamic: free blocks are taken least-worn first
//! ([`FreePick::LeastWorn`]). Static: per plane, as MQSim's
//! `GC_and_WL_Unit_Base::check_static_wl_required` and
//! `run_static_wearleveling` (src/ssd/GC_and_WL_Unit_Base.cpp): after an erase
//! in a plane, if the plane's largest erase count exceeds its smallest by more
//! than the threshold, the plane's coldest (least-erased) movable block has its
//! data moved off and is erased (ops tagged `Purpose::WearLevel`), so that the
//! young block returns to circulation. Each FTL does the move itself (it owns
//! the mapping); this module says when and picks the block.
//!
//! One move per erase, and a levelling erase checks nothing: MQSim checks
//! on every erase completion, its levelling's own included, but a chain of
//! moves that feeds itself is what made the earlier rule's work quadratic.
//! That rule compared every movable block with the drive's largest count
//! and moved all that lagged, after every erase; DFTL's translation blocks,
//! hot and never moved, drove that count up, and on small drives at 3 %
//! over-provisioning each growth rewrote the whole drive (tens of millions
//! of moves in one case of the FTL property test). Now levelling erases at
//! most one block per erase of something else (GC, merge, translation GC),
//! so its page copies are at most `pages_per_block` per such erase: total
//! work linear in the GC's, whatever the drive's size.
//!
//! The moved data goes to the most-worn free block of the plane whenever a
//! new block takes it (as UBI and Chang's dual pool do): the block that has
//! just reached the plane's maximum rests under data that is not rewritten,
//! and the young block returns to the pool, where least-worn allocation
//! gives it to hot data. The page FTL and DFTL copy through their GC
//! frontier, which takes the most-worn free block when it needs one during
//! a move; the hybrids fill a most-worn block with the logical block's data.
//!
//! The bound (tested in tests/wear.rs, whose docs give the argument): each
//! plane's spread stays within the threshold plus 4 for workloads that ask
//! at most one levelling move per GC erase. No rule with bounded work per
//! erase can bound it for every workload. Planes are levelled apart.
//! Finding the victim scans the plane once per erase, only when the check
//! holds, and stops at a block of the plane's smallest count.
use crate::blocks::{BlockState, Blocks, FreePick};
use ssd_core::config::{FtlConfig, WearLeveling};
use ssd_core::{BlockId, PlaneId};

/// The wear-levelling settings of an FTL (see the module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
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

    /// Static levelling's check after an erase in `plane` (MQSim's
    /// `check_static_wl_required`): whether the plane's largest erase count
    /// exceeds its smallest, over all its blocks, by more than the threshold.
    /// O(1) (the plane's extremes are kept by [`Blocks::erase`]). False when
    /// static levelling is off.
    #[inline]
    pub fn due(&self, b: &Blocks, plane: PlaneId) -> bool {
        self.mode == WearLeveling::Static
            && b.plane_max(plane) - b.plane_min(plane) > self.threshold
    }

    /// Static levelling's victim (MQSim's `Get_coldest_block_id`, among the
    /// blocks it is safe to move): the least-worn block of `plane` among those
    /// `eligible` (full blocks holding data the FTL can move), if it lags the
    /// plane's most worn block by more than the threshold. None when static
    /// levelling is off or the check ([`WearPolicy::due`]) does not hold.
    /// A scan of the plane's blocks, ended early by a block at the plane's
    /// least count; an FTL calls it at most once per erase.
    pub fn static_victim(
        &self,
        b: &Blocks,
        plane: PlaneId,
        eligible: impl Fn(usize) -> bool,
    ) -> Option<BlockId> {
        if !self.due(b, plane) {
            return None;
        }
        let (lo, hi) = (b.plane_min(plane), b.plane_max(plane));
        let first = b.g.first_block_of_plane(plane).0 as usize;
        let mut best: Option<(u32, usize)> = None;
        for i in first..first + b.g.blocks_per_plane as usize {
            let c = b.erase_count[i];
            if best.is_some_and(|(m, _)| c >= m)
                || b.state(i) != BlockState::Full
                || b.valid(i) == 0
                || !eligible(i)
            {
                continue;
            }
            best = Some((c, i));
            if c == lo {
                break;
            }
        }
        let (min, victim) = best?;
        (hi - min > self.threshold).then_some(BlockId(victim as u32))
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
