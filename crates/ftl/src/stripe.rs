//! Where the next page goes: the plane-allocation policies shared by the
//! page-mapped FTLs (page mapping and DFTL). Static striping walks the planes
//! in channel/way/die/plane order as configured (CWDP, PDWC, WCDP), in the
//! order writes arrive (`ftl.plane_allocation = "dynamic"`) or by logical
//! page (`"static"`, MQSim's: page `l` on plane `order[l mod planes]`);
//! least-busy takes the die with the fewest queued operations (ties: round
//! robin from the last choice) and rotates over its planes.

use ssd_core::config::{Allocation, PlaneAllocation};
use ssd_core::ftl::FtlCtx;
use ssd_core::{Geometry, PlaneId};

/// Plane ids in striping order for a CWDP-style allocation.
pub fn striping_order(g: &Geometry, alloc: Allocation) -> Vec<u32> {
    let (c, w, d, p) = (g.channels, g.ways, g.dies, g.planes);
    let mut v = Vec::with_capacity(g.total_planes() as usize);
    for k in 0..g.total_planes() {
        let (ch, way, die, pl) = match alloc {
            Allocation::Cwdp | Allocation::LeastBusy => {
                (k % c, (k / c) % w, (k / (c * w)) % d, k / (c * w * d))
            }
            Allocation::Pdwc => {
                let pl = k % p;
                let die = (k / p) % d;
                let way = (k / (p * d)) % w;
                (k / (p * d * w), way, die, pl)
            }
            Allocation::Wcdp => {
                let way = k % w;
                let ch = (k / w) % c;
                let die = (k / (w * c)) % d;
                (ch, way, die, k / (w * c * d))
            }
        };
        v.push(g.plane_id(ch, way, die, pl).0);
    }
    v
}

/// The allocation cursor of one write stream.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct PlanePicker {
    alloc: Allocation,
    /// Planes by logical page, not by arrival.
    by_address: bool,
    /// Planes in striping order.
    pub order: Vec<u32>,
    cursor: usize,
    die_rr: Vec<u32>,
    die_cursor: u32,
    planes: u32,
}

impl PlanePicker {
    /// A picker over the planes of `g` in the order of `alloc`.
    pub fn new(g: &Geometry, alloc: Allocation, plane: PlaneAllocation) -> PlanePicker {
        PlanePicker {
            alloc,
            by_address: plane == PlaneAllocation::Static,
            order: striping_order(g, alloc),
            cursor: 0,
            die_rr: vec![0; g.total_dies() as usize],
            die_cursor: 0,
            planes: g.planes,
        }
    }

    /// The plane of the next page, logical page `lpn`; `die_load` is the
    /// engine's per-die queue length.
    #[inline]
    pub fn next(&mut self, lpn: u64, die_load: &[u32]) -> PlaneId {
        if self.by_address {
            return PlaneId(self.order[(lpn % self.order.len() as u64) as usize]);
        }
        match self.alloc {
            Allocation::LeastBusy => {
                let nd = self.die_rr.len() as u32;
                let start = self.die_cursor;
                let mut best = start % nd;
                let mut bl = u32::MAX;
                for k in 0..nd {
                    let d = (start + k) % nd;
                    let l = die_load[d as usize];
                    if l < bl {
                        bl = l;
                        best = d;
                    }
                }
                self.die_cursor = (best + 1) % nd;
                let pl = self.die_rr[best as usize];
                self.die_rr[best as usize] = (pl + 1) % self.planes;
                PlaneId(best * self.planes + pl)
            }
            _ => {
                let p = self.order[self.cursor];
                self.cursor = (self.cursor + 1) % self.order.len();
                PlaneId(p)
            }
        }
    }

    /// The plane to offer a page that `tried` cannot take (it is at its GC
    /// threshold with nothing worth collecting). Striping by arrival goes on
    /// in its order, as [`PlanePicker::next`]; by address, the plane after
    /// `tried` in the striping order (MQSim would wait for the plane;
    /// the page is lent instead, as a dynamic allocator would place it);
    /// least-busy takes the plane after
    /// `tried` in plane order: its load-driven choice can name `tried` again
    /// and again (the loads do not change while one call plans), so the page
    /// would take the GC reserve of a full plane, and GC then find no block
    /// to copy into.
    pub fn after(&mut self, tried: PlaneId, die_load: &[u32]) -> PlaneId {
        if self.by_address {
            let i = self.order.iter().position(|&p| p == tried.0).unwrap_or(0);
            return PlaneId(self.order[(i + 1) % self.order.len()]);
        }
        match self.alloc {
            Allocation::LeastBusy => PlaneId((tried.0 + 1) % self.order.len() as u32),
            _ => self.next(0, die_load),
        }
    }
}

/// The host write frontier of a page-mapped FTL (page mapping, DFTL): what
/// [`HostFrontier::host_plane`] needs to place a host page.
pub trait HostFrontier {
    /// The plane of logical page `lpn` in allocation order.
    fn next_plane(&mut self, lpn: u64, cx: &FtlCtx) -> PlaneId;
    /// The plane to try when `tried` cannot take the page
    /// ([`PlanePicker::after`]); `total_planes` calls in a row visit every plane.
    fn fallback_plane(&mut self, tried: PlaneId, cx: &FtlCtx) -> PlaneId;
    /// The host frontier of `plane` has no open block.
    fn host_needs_block(&self, plane: PlaneId) -> bool;
    /// Foreground GC before the host frontier of `plane` takes a new block:
    /// collect until more than the threshold of blocks are free, or nothing is
    /// worth collecting.
    fn gc_for_host(&mut self, plane: PlaneId, cx: &mut FtlCtx);
    /// `plane` has no more than the GC threshold of free blocks.
    fn at_threshold(&self, plane: PlaneId) -> bool;
    /// Planes of the drive.
    fn total_planes(&self) -> u32;
    /// Paced GC (`ftl.gc_mode = "paced"`): a host page goes to `plane`;
    /// collect one victim there if its free space (free blocks and the room
    /// left in its frontiers) is below the soft threshold. One victim per
    /// host page at most, so that GC keeps pace with the plane's host
    /// writes: a victim with `v` valid pages of `P` gives back `P - v`
    /// pages, so in steady state a plane collects one victim every `P - v`
    /// host pages (Tiny-Tail Flash's and MQSim's per-allocation trigger:
    /// `GC_and_WL_Unit_Page_Level::Check_gc_required`, called at each block
    /// allocation, starts one victim while the pool is below
    /// `GC_Exec_Threshold`; here the trigger is per page, so that the
    /// victims of a frontier block are spread over its pages instead of
    /// planned at once).
    fn pace(&mut self, _plane: PlaneId, _cx: &mut FtlCtx) {}

    /// The plane of the next host page: the next in allocation order, cleaned
    /// first if its frontier needs a new block; a plane that cannot be cleaned
    /// (all its data valid) hands the write to the next plane, each plane tried
    /// at most once. Inlined into each FTL's write loop, where it runs once
    /// a host page.
    #[inline(always)]
    fn host_plane(&mut self, lpn: u64, cx: &mut FtlCtx) -> PlaneId {
        let mut plane = self.next_plane(lpn, cx);
        if self.host_needs_block(plane) {
            self.gc_for_host(plane, cx);
            let mut tries = self.total_planes();
            while self.host_needs_block(plane) && self.at_threshold(plane) && tries > 0 {
                plane = self.fallback_plane(plane, cx);
                if self.host_needs_block(plane) {
                    self.gc_for_host(plane, cx);
                }
                tries -= 1;
            }
        }
        self.pace(plane, cx);
        plane
    }
}
