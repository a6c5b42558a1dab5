//! An FTL and a request source of one's own, written outside the
//! simulator's crates against its traits, and plugged in through the typed
//! builder (`ssdsim::Ssd::custom`): see `main.rs`.
//!
//! - [`LogFtl`]: a log-structured page-mapping FTL. Every plane appends to
//!   one open block, host writes and GC copies alike (no hot/cold
//!   separation); a logical page's plane is fixed by its number, striped
//!   channel first (static allocation, as MQSim's CWDP), so every plane
//!   holds its share of the logical space; a plane whose free blocks fall to `ftl.gc_threshold_blocks` collects
//!   the full block with the fewest valid pages (greedy) until it has that
//!   many again.
//! - [`Overwrite`]: a closed-loop source of page writes, either
//!   sequential passes over the logical space or a hot/cold mix (a share of
//!   the writes to a small hot range, the rest uniform over the others).

use ssdsim::ssd_core::addr::{BlockId, DriveShape, Geometry, Lpn, PlaneId, Ppn};
use ssdsim::ssd_core::ftl::{Ftl, FtlConfig, FtlCtx, FtlStats, Purpose};
use ssdsim::ssd_core::workload::{HostRequest, IoOp, RequestSource, SourceError, Timing};
use ssdsim::ssd_core::SimTime;

/// No page, block or logical page.
const NONE: u32 = u32::MAX;

/// A log-structured page-mapping FTL with greedy GC; see the crate's docs.
pub struct LogFtl {
    g: Geometry,
    logical: u64,
    /// Logical page -> physical page (`NONE`: unmapped).
    l2p: Vec<u32>,
    /// Physical page -> the logical page it holds while valid (`NONE`: free
    /// or stale).
    p2l: Vec<u32>,
    /// Valid pages per block.
    valid: Vec<u32>,
    /// Pages programmed per block since its erase.
    written: Vec<u32>,
    /// Free blocks per plane.
    free: Vec<Vec<u32>>,
    /// The open block per plane (`NONE` until the first write).
    open: Vec<u32>,
    /// The planes in striping order, channel first: logical page `l`
    /// lives in plane `order[l % order.len()]`.
    order: Vec<u32>,
    /// Free blocks a plane keeps: GC runs when it has fewer.
    keep: usize,
    stats: FtlStats,
}

impl LogFtl {
    /// An FTL for `shape`, keeping `cfg.gc_threshold_blocks` free blocks per
    /// plane (at least one). The configuration's capacity rule
    /// (`FtlConfig::capacity`) leaves every plane that many spare blocks
    /// plus one open block and one block's worth to reclaim, which is what
    /// this FTL needs: one frontier.
    pub fn new(cfg: &FtlConfig, shape: &DriveShape) -> LogFtl {
        let g = shape.geometry;
        let free = (0..g.total_planes())
            .map(|p| {
                let first = g.first_block_of_plane(PlaneId(p)).0;
                // Popped from the back: the plane's first block first.
                (first..first + g.blocks_per_plane).rev().collect()
            })
            .collect();
        let mut order = Vec::new();
        for plane in 0..g.planes {
            for die in 0..g.dies {
                for way in 0..g.ways {
                    for ch in 0..g.channels {
                        order.push(g.plane_id(ch, way, die, plane).0);
                    }
                }
            }
        }
        LogFtl {
            g,
            logical: shape.logical_pages,
            l2p: vec![NONE; shape.logical_pages as usize],
            p2l: vec![NONE; g.total_pages() as usize],
            valid: vec![0; g.total_blocks() as usize],
            written: vec![0; g.total_blocks() as usize],
            free,
            open: vec![NONE; g.total_planes() as usize],
            order,
            keep: cfg.gc_threshold_blocks.max(1) as usize,
            stats: FtlStats::default(),
        }
    }

    /// Unmap logical page `l` (its old copy becomes stale).
    fn unmap(&mut self, l: u64) {
        let old = self.l2p[l as usize];
        if old != NONE {
            self.p2l[old as usize] = NONE;
            self.valid[self.g.block_of(Ppn(old)).0 as usize] -= 1;
            self.l2p[l as usize] = NONE;
        }
    }

    /// The next page of `plane`'s open block for logical page `l`, opening
    /// a free block when the open one is full. With `gc`, a plane that
    /// opened a block and has fewer than `keep` free blocks left collects
    /// victims first (GC's own copies pass `gc = false`).
    fn append(&mut self, plane: u32, l: u64, gc: bool, cx: &mut FtlCtx) -> Ppn {
        let ppb = self.g.pages_per_block;
        let full = |f: &Self| {
            let b = f.open[plane as usize];
            b == NONE || f.written[b as usize] == ppb
        };
        if full(self) && gc {
            while self.free[plane as usize].len() <= self.keep {
                if !self.collect(plane, cx) {
                    break;
                }
            }
        }
        // GC's copies may have opened a block that still has room.
        if full(self) {
            let next = self.free[plane as usize]
                .pop()
                .expect("a free block: the spare blocks cover the open block and GC");
            self.open[plane as usize] = next;
        }
        let b = self.open[plane as usize];
        let p = self.g.first_page(BlockId(b)).0 + self.written[b as usize];
        self.written[b as usize] += 1;
        self.valid[b as usize] += 1;
        self.p2l[p as usize] = l as u32;
        self.l2p[l as usize] = p;
        Ppn(p)
    }

    /// Collect the full block of `plane` with the fewest valid pages: its
    /// valid pages are read (stage 0) and appended to the plane's open
    /// block (stage 1), then it is erased (stage 2), in a job of its own
    /// that the host write does not wait for (the engine keeps a block's
    /// programs and erase in the order they were planned). False if no
    /// block can give space back.
    fn collect(&mut self, plane: u32, cx: &mut FtlCtx) -> bool {
        let ppb = self.g.pages_per_block;
        let first = self.g.first_block_of_plane(PlaneId(plane)).0;
        let open = self.open[plane as usize];
        let victim = (first..first + self.g.blocks_per_plane)
            .filter(|&b| b != open && self.written[b as usize] == ppb)
            .min_by_key(|&b| (self.valid[b as usize], b));
        cx.work.gc_candidates += self.g.blocks_per_plane as u64;
        self.stats.gc_victims_examined += self.g.blocks_per_plane as u64;
        let Some(v) = victim.filter(|&v| self.valid[v as usize] < ppb) else {
            return false;
        };
        let job = cx.new_job(false);
        let base = self.g.first_page(BlockId(v)).0;
        cx.work.gc_page_checks += ppb as u64;
        for p in base..base + ppb {
            let l = self.p2l[p as usize];
            if l == NONE {
                continue;
            }
            cx.read(job, 0, Ppn(p), Purpose::Gc, l as u64);
            self.p2l[p as usize] = NONE;
            self.valid[v as usize] -= 1;
            let dst = self.append(plane, l as u64, false, cx);
            cx.program(job, 1, dst, Purpose::Gc, l as u64, Some(Ppn(p)));
            cx.work.gc_pages += 1;
            self.stats.gc_page_copies += 1;
        }
        cx.erase(job, 2, Ppn(base), Purpose::Gc);
        self.written[v as usize] = 0;
        self.free[plane as usize].insert(0, v);
        self.stats.gc_runs += 1;
        true
    }
}

impl Ftl for LogFtl {
    fn name(&self) -> &'static str {
        "log"
    }
    fn logical_pages(&self) -> u64 {
        self.logical
    }
    fn read(&mut self, lpn: Lpn, n: u32, cx: &mut FtlCtx) {
        for l in lpn.0..lpn.0 + n as u64 {
            cx.work.map_lookups += 1;
            let p = self.l2p[l as usize];
            if p != NONE {
                cx.read(0, 0, Ppn(p), Purpose::Host, l);
            }
        }
    }
    fn write(&mut self, lpn: Lpn, n: u32, cx: &mut FtlCtx) {
        for l in lpn.0..lpn.0 + n as u64 {
            cx.work.map_lookups += 1;
            self.unmap(l);
            let plane = self.order[(l % self.order.len() as u64) as usize];
            let p = self.append(plane, l, true, cx);
            cx.program(0, 0, p, Purpose::Host, l, None);
        }
    }
    fn trim(&mut self, lpn: Lpn, n: u32, cx: &mut FtlCtx) {
        for l in lpn.0..lpn.0 + n as u64 {
            cx.work.map_lookups += 1;
            self.unmap(l);
        }
    }
    fn lookup(&self, lpn: Lpn) -> Option<Ppn> {
        match self.l2p.get(lpn.0 as usize) {
            Some(&p) if p != NONE => Some(Ppn(p)),
            _ => None,
        }
    }
    fn check_invariants(&self) -> Result<(), String> {
        let ppb = self.g.pages_per_block;
        let mut valid = vec![0u32; self.valid.len()];
        for (l, &p) in self.l2p.iter().enumerate() {
            if p == NONE {
                continue;
            }
            if self.p2l[p as usize] != l as u32 {
                return Err(format!("lpn {l} maps to ppn {p}, which holds another page"));
            }
            let b = self.g.block_of(Ppn(p)).0;
            if p - self.g.first_page(BlockId(b)).0 >= self.written[b as usize] {
                return Err(format!("lpn {l} maps to ppn {p}, past its block's writes"));
            }
            valid[b as usize] += 1;
        }
        if valid != self.valid {
            return Err("a block's valid count is not its mapped pages".into());
        }
        for (p, &l) in self.p2l.iter().enumerate() {
            if l != NONE && self.l2p[l as usize] != p as u32 {
                return Err(format!("ppn {p} holds lpn {l}, which maps elsewhere"));
            }
        }
        for (plane, free) in self.free.iter().enumerate() {
            for &b in free {
                if self.written[b as usize] != 0
                    || self.g.plane_of_block(BlockId(b)).0 as usize != plane
                {
                    return Err(format!(
                        "free block {b} of plane {plane} is written or elsewhere"
                    ));
                }
            }
        }
        if self.written.iter().any(|&w| w > ppb) {
            return Err("a block has more pages written than it has".into());
        }
        Ok(())
    }
    fn stats(&self) -> FtlStats {
        self.stats.clone()
    }
    fn mapping_table_bytes(&self) -> u64 {
        self.logical * 4
    }
    fn free_blocks(&self, plane: PlaneId) -> u32 {
        self.free[plane.0 as usize].len() as u32
    }
}

/// Where [`Overwrite`] writes.
#[derive(Clone, Copy, Debug)]
pub enum Pattern {
    /// Logical pages 0, 1, 2, ... in order, from the start again at the end.
    Sequential,
    /// `hot_percent` of the writes to the first `hot_share_percent` of the
    /// logical pages, the rest to the others, uniformly within each.
    HotCold {
        /// Percentage of the writes that go to the hot range.
        hot_percent: u64,
        /// The hot range, in percent of the logical pages.
        hot_share_percent: u64,
    },
}

/// A closed-loop source of one-page writes; see the crate's docs.
pub struct Overwrite {
    pattern: Pattern,
    pages: u64,
    sectors_per_page: u32,
    left: u64,
    next: u64,
    depth: u32,
    state: u64,
}

impl Overwrite {
    /// `writes` one-page writes over `pages` logical pages of
    /// `page_size` bytes, `depth` outstanding, drawn from `seed`.
    pub fn new(
        pattern: Pattern,
        pages: u64,
        page_size: u32,
        writes: u64,
        depth: u32,
        seed: u64,
    ) -> Self {
        Overwrite {
            pattern,
            pages,
            sectors_per_page: page_size / 512,
            left: writes,
            next: 0,
            depth,
            state: seed,
        }
    }

    /// splitmix64: a small, well-mixed generator, so that the source
    /// depends on nothing but the simulator.
    fn random(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
}

impl RequestSource for Overwrite {
    fn timing(&self) -> Timing {
        Timing::ClosedLoop { depth: self.depth }
    }
    fn next_request(&mut self) -> Option<Result<HostRequest, SourceError>> {
        if self.left == 0 {
            return None;
        }
        self.left -= 1;
        let lpn = match self.pattern {
            Pattern::Sequential => {
                let l = self.next;
                self.next = (self.next + 1) % self.pages;
                l
            }
            Pattern::HotCold {
                hot_percent,
                hot_share_percent,
            } => {
                let hot = (self.pages * hot_share_percent / 100).max(1);
                if self.random() % 100 < hot_percent {
                    self.random() % hot
                } else {
                    hot + self.random() % (self.pages - hot)
                }
            }
        };
        Some(Ok(HostRequest {
            arrival: SimTime::ZERO,
            op: IoOp::Write,
            lba: lpn * self.sectors_per_page as u64,
            sectors: self.sectors_per_page,
            stream: 0,
            tag: 0,
            sync: false,
            placement: ssdsim::ssd_core::workload::Placement::NONE,
        }))
    }
}
