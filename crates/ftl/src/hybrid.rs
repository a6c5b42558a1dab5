//! Shared machinery of the block-mapped FTLs (block, BAST, FAST, LAST): the
//! block map, an exact page-level view of where every logical page lives (for
//! reads, invariant checks and merges; the *reported* table size is the FTL's own
//! scheme), the three merges, static wear levelling, and a per-call stage tracker
//! that orders flash operations inside one job.
//!
//! **Stage tracking.** Everything an FTL call plans goes into one job (job 0 for
//! host calls: the host waits for the merges its write needs; a fresh non-gating
//! job for idle-time merging). Each operation gets the earliest stage that keeps
//! the physical order: a read of a block after this call's programs to it, a
//! program after this call's erase of its block, an erase after every read and
//! program of its block, every copy's program after its read, and a merge's
//! erases after its copies. Independent work shares a stage, so host pages
//! striped over dies still run in parallel. Stages saturate at 255; past that,
//! operations keep their plan order on each die (FIFO) but lose cross-die order.
//!
//! **Super-blocks** (`ftl.superblock = K > 1`). The FTL works on a folded
//! geometry ([`unit_geometry`]) whose blocks are super-blocks of K erase
//! blocks and whose planes are groups of K planes; every page number it
//! keeps (maps, free lists, valid counts, wear) is in that folded space.
//! Only the flash operations it plans and [`Core::lookup`] translate to the
//! drive's pages ([`Fold`]): page i of a super-block is page i / K of its
//! member i mod K, so consecutive pages land on different planes at the
//! same page offset, and erasing a super-block erases its K blocks.

use crate::blocks::{BlockState, Blocks};
use crate::page::entry_bytes;
use crate::stripe::striping_order;
use crate::wear::WearPolicy;
use ssd_core::config::{invalid, ConfigError, FtlConfig, GcPolicy, WearLeveling};
use ssd_core::ftl::{FtlCtx, FtlStats, JobId, Purpose};
use ssd_core::DriveShape;
use ssd_core::{BlockId, Geometry, Lpn, PlaneId, Ppn};
use std::ops::Range;

/// "No entry": an unmapped page or block, or a block no logical block owns.
pub const NONE: u32 = u32::MAX;

/// The geometry a block-mapped FTL maps: the drive's, or with
/// `ftl.superblock = K > 1` the folded one whose blocks are super-blocks of
/// K times the pages and whose planes are the groups of K planes (each
/// group one plane on a channel of its own: the FTL reads only plane and
/// block numbers of this geometry, never its channels or dies).
pub fn unit_geometry(c: &FtlConfig, d: &DriveShape) -> Geometry {
    let g = d.geometry;
    let k = c.block.superblock.max(1);
    if k == 1 {
        return g;
    }
    Geometry {
        channels: g.total_planes() / k,
        ways: 1,
        dies: 1,
        planes: 1,
        blocks_per_plane: g.blocks_per_plane,
        pages_per_block: g.pages_per_block * k,
        page_size: g.page_size,
    }
}

/// From a super-block page to the drive's page (see the module docs): the
/// planes in groups of K (a die's planes together, then dies channel
/// first), super-block b of group j made of block b of each of the group's
/// planes, its page i on member i mod K at page i / K.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct Fold {
    k: u32,
    unit_ppb: u32,
    ppb: u32,
    bpp: u32,
    /// Physical plane ids, group after group.
    planes: Vec<u32>,
}

impl Fold {
    fn new(g: &Geometry, k: u32) -> Fold {
        let mut planes = Vec::with_capacity(g.total_planes() as usize);
        for die in 0..g.dies {
            for way in 0..g.ways {
                for ch in 0..g.channels {
                    for pl in 0..g.planes {
                        planes.push(g.plane_id(ch, way, die, pl).0);
                    }
                }
            }
        }
        Fold {
            k,
            unit_ppb: g.pages_per_block * k,
            ppb: g.pages_per_block,
            bpp: g.blocks_per_plane,
            planes,
        }
    }

    /// The drive's page of super-block page `p`.
    #[inline]
    pub fn page(&self, p: Ppn) -> Ppn {
        let (vb, i) = (p.0 / self.unit_ppb, p.0 % self.unit_ppb);
        let (group, b) = (vb / self.bpp, vb % self.bpp);
        let plane = self.planes[(group * self.k + i % self.k) as usize];
        Ppn((plane * self.bpp + b) * self.ppb + i / self.k)
    }

    /// The first page of each erase block of super-block `vb`.
    pub fn blocks(&self, vb: u32) -> impl Iterator<Item = Ppn> + '_ {
        let (group, b) = (vb / self.bpp, vb % self.bpp);
        (0..self.k).map(move |m| {
            let plane = self.planes[(group * self.k + m) as usize];
            Ppn((plane * self.bpp + b) * self.ppb)
        })
    }
}

/// The [`Ftl`](ssd_core::ftl::Ftl) methods every block-mapped FTL delegates
/// unchanged to its `core: Core` field (reads, TRIM, lookups, statistics, table
/// size); use inside `impl Ftl for X { hybrid_core_methods!(); ... }`, which
/// then only adds what differs: `name`, `write`, `background`, invariants.
///
/// `hybrid_core_methods!(write_page)` also defines `write` as: one map lookup
/// and one clock tick per page, `self.write_page(lpn, cx)` for each, then static
/// wear levelling.
macro_rules! hybrid_core_methods {
    (write_page) => {
        hybrid_core_methods!();
        fn write(&mut self, lpn: ssd_core::Lpn, n: u32, cx: &mut ssd_core::ftl::FtlCtx) {
            self.core.begin(0, cx);
            for l in lpn.0..lpn.0 + n as u64 {
                cx.work.map_lookups += 1;
                self.core.blocks.clock += 1;
                self.write_page(l, cx);
            }
            self.core.static_wear_level(cx);
        }
    };
    () => {
        fn logical_pages(&self) -> u64 {
            self.core.logical
        }
        fn read(&mut self, lpn: ssd_core::Lpn, n: u32, cx: &mut ssd_core::ftl::FtlCtx) {
            self.core.begin(0, cx);
            self.core.read_host(lpn, n, cx);
        }
        fn trim(&mut self, lpn: ssd_core::Lpn, n: u32, cx: &mut ssd_core::ftl::FtlCtx) {
            self.core.trim(lpn, n, cx);
        }
        fn lookup(&self, lpn: ssd_core::Lpn) -> Option<ssd_core::Ppn> {
            self.core.lookup(lpn)
        }
        fn stats(&self) -> ssd_core::ftl::FtlStats {
            self.core.stats.clone()
        }
        fn mapping_table_bytes(&self) -> u64 {
            self.core.table_bytes()
        }
    };
}
pub(crate) use hybrid_core_methods;

/// Per-call stage tracker (see the module docs). Values are stage + 1, 0 = none.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct Seq {
    epoch: u32,
    seen: Vec<u32>,
    rd: Vec<u16>,
    pg: Vec<u16>,
    er: Vec<u16>,
    /// The job the tracked stages belong to.
    pub job: JobId,
}

impl Seq {
    fn new(blocks: usize) -> Seq {
        Seq {
            epoch: 1,
            seen: vec![0; blocks],
            rd: vec![0; blocks],
            pg: vec![0; blocks],
            er: vec![0; blocks],
            job: 0,
        }
    }
    fn begin(&mut self, job: JobId) {
        self.epoch = self.epoch.wrapping_add(1).max(1);
        self.job = job;
    }
    #[inline]
    fn touch(&mut self, b: usize) {
        if self.seen[b] != self.epoch {
            self.seen[b] = self.epoch;
            self.rd[b] = 0;
            self.pg[b] = 0;
            self.er[b] = 0;
        }
    }
}

#[inline]
fn st(s: u16) -> u8 {
    s.min(255) as u8
}

/// Result of [`Core::fill`].
#[derive(Clone, Copy, Debug, Default, serde::Serialize, serde::Deserialize)]
pub struct Fill {
    /// Valid pages copied.
    pub copies: u64,
    /// Filler pages programmed.
    pub pads: u64,
    /// Stage after the last program (a following erase goes here or later).
    pub next: u16,
}

/// What the block-mapped FTLs share (see the module docs): the block map, an exact page-level
/// view, block states, counters and the stage tracker.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct Core {
    /// The drive's geometry.
    pub g: Geometry,
    /// Pages per block.
    pub ppb: u32,
    /// Logical blocks (data blocks).
    pub nlb: u32,
    /// Logical pages the host sees.
    pub logical: u64,
    /// Logical page -> physical page (`NONE`: unmapped).
    pub l2p: Vec<u32>,
    /// Physical page -> logical page it holds the live copy of (`NONE`: none).
    pub p2l: Vec<u32>,
    /// Logical block -> physical data block.
    pub dmap: Vec<u32>,
    /// Physical block -> logical block it is the data block of.
    pub owner: Vec<u32>,
    /// Physical block is a log block.
    pub is_log: Vec<bool>,
    /// Block states, valid counts, erase counts and free pools.
    pub blocks: Blocks,
    /// The FTL's counters.
    pub stats: FtlStats,
    /// The per-call stage tracker.
    pub seq: Seq,
    /// Wear-levelling settings.
    pub wear: WearPolicy,
    /// GC victim policy for log blocks (`ftl.gc_policy`).
    pub policy: GcPolicy,
    /// Log blocks the FTL may hold (0 for pure block mapping).
    pub log_limit: u32,
    /// Idle time merges until this many log blocks are free (`ftl.background_gc_blocks`).
    pub bg_target: u32,
    /// Merge every log block in the drain (`ftl.drain_merge`).
    pub drain_merge: bool,
    order: Vec<u32>,
    /// The plane this call last erased in (a call that erased pays one
    /// levelling check).
    last_erased: Option<PlaneId>,
    /// Static levelling: per plane, erases other than levelling's own since
    /// its last check (each allows one move), and whether any plane has one
    /// (see [`Core::static_wear_level`]).
    wl_due: Vec<u32>,
    wl_any: bool,
    /// Super-block pages to the drive's (None: blocks are erase blocks).
    fold: Option<Fold>,
}

impl Core {
    /// The shared state for a drive of `s` with `log_limit` log blocks; an error if the logical
    /// capacity is not whole blocks or the physical blocks cannot hold the data blocks, the log
    /// blocks and 2 spares.
    pub fn new(c: &FtlConfig, d: &DriveShape, log_limit: u32) -> Result<Core, ConfigError> {
        let g = unit_geometry(c, d);
        let fold = (c.block.superblock > 1).then(|| Fold::new(&d.geometry, c.block.superblock));
        let ppb = g.pages_per_block;
        if d.logical_pages / ppb as u64 * ppb as u64 != d.logical_pages {
            return Err(invalid(
                "ftl.kind",
                format!(
                    "{} maps whole blocks but the logical capacity ({} pages) is not a multiple of {ppb} pages per block",
                    c.kind, d.logical_pages
                ),
            ));
        }
        let nlb = (d.logical_pages / ppb as u64) as u32;
        let total = g.total_blocks() as u64;
        // Data blocks + log blocks + one block a merge allocates before it frees
        // + one for static wear levelling: free space can never run out.
        if total < nlb as u64 + log_limit as u64 + 2 {
            return Err(invalid(
                "ftl.op",
                format!(
                    "{total} physical blocks cannot hold {nlb} data blocks, {log_limit} log blocks and 2 spare blocks: raise op or lower log_area"
                ),
            ));
        }
        let nb = total as usize;
        let wear = WearPolicy::from_config(c);
        let mut blocks = Blocks::new(g);
        blocks.set_pick(wear.free_pick());
        blocks.track_policy(c.gc_policy);
        Ok(Core {
            g,
            ppb,
            nlb,
            logical: d.logical_pages,
            l2p: vec![NONE; d.logical_pages as usize],
            p2l: vec![NONE; g.total_pages() as usize],
            dmap: vec![NONE; nlb as usize],
            owner: vec![NONE; nb],
            is_log: vec![false; nb],
            blocks,
            stats: FtlStats::default(),
            seq: Seq::new(nb),
            wear,
            policy: c.gc_policy,
            log_limit,
            bg_target: c.background_gc_blocks,
            drain_merge: c.drain_merge(),
            order: striping_order(&g, ssd_core::config::Allocation::Cwdp),
            last_erased: None,
            wl_due: vec![0; g.total_planes() as usize],
            wl_any: false,
            fold,
        })
    }

    /// Start planning a call into `job`. A call that adds to a plan already
    /// holding operations of `job` keeps the stages that plan gave each block:
    /// the engine plans several calls into one command (a write that evicts
    /// buffered pages writes each of them; a flush drains the buffer), and a
    /// tracker restarted per call let a later call read, at stage 0, a page an
    /// earlier call of the same job programs at stage 1 (a merge of a block
    /// merged a moment before): the read waited for the program and the
    /// program for the read's stage, so the command never completed.
    pub fn begin(&mut self, job: JobId, cx: &FtlCtx) {
        if cx.plan.ops.is_empty() || job != self.seq.job {
            self.seq.begin(job);
        }
        self.blocks.begin_call();
        self.last_erased = None;
    }

    /// Start an idle-time merge: its operations go to a fresh non-gating job.
    pub fn begin_background(&mut self, cx: &mut FtlCtx) {
        let job = cx.new_job(false);
        self.begin(job, cx);
    }

    /// Allocate a fresh log block, preferably in plane `pref`.
    pub fn new_log(&mut self, pref: PlaneId) -> u32 {
        let b = self.alloc(pref);
        self.is_log[b as usize] = true;
        b
    }

    /// Whether idle time now merges every log block (`ftl.drain_merge` in
    /// the drain), not only down to `bg_target` free ones.
    pub fn merge_all(&self, cx: &FtlCtx) -> bool {
        self.drain_merge && cx.draining
    }

    /// Count a background run that did work; returns `did`.
    pub fn background_done(&mut self, did: bool) -> bool {
        self.stats.background_runs += did as u64;
        did
    }

    /// The plane a logical block's blocks are preferably allocated in (logical
    /// blocks striped channel first, so consecutive blocks use different dies).
    #[inline]
    pub fn plane_of_lbn(&self, lbn: u32) -> PlaneId {
        PlaneId(self.order[lbn as usize % self.order.len()])
    }

    /// (logical block, offset in it) of logical page `lpn`.
    #[inline]
    pub fn lbn_off(&self, lpn: u64) -> (u32, u32) {
        (
            (lpn / self.ppb as u64) as u32,
            (lpn % self.ppb as u64) as u32,
        )
    }

    /// The next page to program in block `b`.
    #[inline]
    pub fn wp(&self, b: u32) -> u32 {
        self.blocks.wp(b as usize) as u32
    }

    /// Whether every page of block `b` is written.
    pub fn is_full(&self, b: u32) -> bool {
        self.blocks.state(b as usize) == BlockState::Full
    }

    /// A free block near `plane`. Never fails while the capacity bound checked in
    /// [`Core::new`] holds.
    pub fn alloc(&mut self, plane: PlaneId) -> u32 {
        match self.blocks.alloc_near(plane) {
            Some(b) => b.0,
            None => panic!(
                "no free block anywhere ({} data blocks mapped, {} log blocks allowed): block accounting broken",
                self.dmap.iter().filter(|&&d| d != NONE).count(),
                self.log_limit
            ),
        }
    }

    /// Plan host reads of `n` logical pages from `lpn` (unmapped pages read nothing).
    pub fn read_host(&mut self, lpn: Lpn, n: u32, cx: &mut FtlCtx) {
        for l in lpn.0..lpn.0 + n as u64 {
            cx.work.map_lookups += 1;
            let p = self.l2p[l as usize];
            if p != NONE {
                self.read(cx, Ppn(p), Purpose::Host, l, 0);
            }
        }
    }

    /// Unmap `n` logical pages from `lpn`, invalidating their pages.
    pub fn trim(&mut self, lpn: Lpn, n: u32, cx: &mut FtlCtx) {
        for l in lpn.0..lpn.0 + n as u64 {
            cx.work.map_lookups += 1;
            let old = self.l2p[l as usize];
            if old != NONE {
                self.blocks.invalidate(Ppn(old));
                self.p2l[old as usize] = NONE;
                self.l2p[l as usize] = NONE;
            }
        }
    }

    /// Plan a read; returns its stage.
    pub fn read(&mut self, cx: &mut FtlCtx, p: Ppn, purpose: Purpose, lpn: u64, min: u16) -> u16 {
        let b = self.g.block_of(p).0 as usize;
        self.seq.touch(b);
        let s = min.max(self.seq.pg[b]);
        self.seq.rd[b] = self.seq.rd[b].max(s + 1);
        cx.read(self.seq.job, st(s), self.phys(p), purpose, lpn);
        s
    }

    /// The drive's page of page `p` of the FTL's (folded) space.
    #[inline]
    pub fn phys(&self, p: Ppn) -> Ppn {
        match &self.fold {
            None => p,
            Some(f) => f.page(p),
        }
    }

    /// Program the next page of block `b` with `lpn` (None: a filler page that
    /// holds no data); the page becomes `lpn`'s newest copy. Returns (page, stage).
    pub fn program(
        &mut self,
        cx: &mut FtlCtx,
        b: u32,
        lpn: Option<u64>,
        purpose: Purpose,
        src: Option<Ppn>,
        min: u16,
    ) -> (Ppn, u16) {
        let bi = b as usize;
        self.seq.touch(bi);
        // After this call's erase of the block, and never before an earlier
        // program of it (ops are applied in (job, stage) order).
        let s = min
            .max(self.seq.er[bi])
            .max(self.seq.pg[bi].saturating_sub(1));
        self.seq.pg[bi] = self.seq.pg[bi].max(s + 1);
        if let Some(sp) = src {
            // The source block's erase must wait for this copy's program.
            let sb = self.g.block_of(sp).0 as usize;
            self.seq.touch(sb);
            self.seq.rd[sb] = self.seq.rd[sb].max(s + 1);
        }
        let p = self.blocks.program_next(BlockId(b));
        match lpn {
            Some(l) => {
                let old = self.l2p[l as usize];
                if old != NONE {
                    self.blocks.invalidate(Ppn(old));
                    self.p2l[old as usize] = NONE;
                }
                self.l2p[l as usize] = p.0;
                self.p2l[p.0 as usize] = l as u32;
                let src = src.map(|q| self.phys(q));
                cx.program(self.seq.job, st(s), self.phys(p), purpose, l, src);
            }
            None => {
                self.blocks.invalidate(p);
                self.stats.pad_programs += 1;
                let pp = self.phys(p);
                cx.program(
                    self.seq.job,
                    st(s),
                    pp,
                    purpose,
                    ssd_core::ftl::NO_LPN,
                    None,
                );
            }
        }
        (p, s)
    }

    /// Erase block `b` (it must hold no valid page); returns the stage after it.
    pub fn erase(&mut self, cx: &mut FtlCtx, b: u32, purpose: Purpose, min: u16) -> u16 {
        let bi = b as usize;
        self.seq.touch(bi);
        let s = min.max(self.seq.rd[bi]).max(self.seq.pg[bi]);
        self.seq.er[bi] = s + 1;
        self.blocks.erase(BlockId(b));
        if self.owner[bi] != NONE {
            self.dmap[self.owner[bi] as usize] = NONE;
            self.owner[bi] = NONE;
        }
        self.is_log[bi] = false;
        match &self.fold {
            None => cx.erase(self.seq.job, st(s), self.g.first_page(BlockId(b)), purpose),
            Some(f) => {
                for first in f.blocks(b) {
                    cx.erase(self.seq.job, st(s), first, purpose);
                }
            }
        }
        let plane = self.g.plane_of_block(BlockId(b));
        self.last_erased = Some(plane);
        if self.wear.mode == WearLeveling::Static && purpose != Purpose::WearLevel {
            self.wl_due[plane.0 as usize] += 1;
            self.wl_any = true;
        }
        s + 1
    }

    /// Make `b` the data block of `lbn`.
    pub fn set_data(&mut self, lbn: u32, b: u32) {
        debug_assert_eq!(self.dmap[lbn as usize], NONE);
        self.dmap[lbn as usize] = b;
        self.owner[b as usize] = lbn;
        self.is_log[b as usize] = false;
    }

    /// Write `lbn`'s pages into `dst` at their own offsets, from `dst`'s write
    /// pointer on: offsets in `host` get new host data, the others the newest copy
    /// of the page if it is mapped (a copy: read, then program), and gaps before a
    /// later page get filler programs. Copies and fillers are tagged `purpose`.
    pub fn fill(
        &mut self,
        cx: &mut FtlCtx,
        lbn: u32,
        dst: u32,
        host: Range<u32>,
        purpose: Purpose,
        min: u16,
    ) -> Fill {
        let base = lbn as u64 * self.ppb as u64;
        let start = self.wp(dst);
        debug_assert!(host.is_empty() || host.start >= start);
        let mut last = if host.is_empty() {
            None
        } else {
            Some(host.end - 1)
        };
        let mut copies: Vec<(u32, Ppn)> = Vec::new();
        let mut rmax = min;
        for o in start..self.ppb {
            if host.contains(&o) {
                continue;
            }
            let p = self.l2p[(base + o as u64) as usize];
            if p != NONE {
                let s = self.read(cx, Ppn(p), purpose, base + o as u64, min);
                rmax = rmax.max(s + 1);
                copies.push((o, Ppn(p)));
                last = Some(last.map_or(o, |x| x.max(o)));
            }
        }
        let mut out = Fill {
            next: min,
            ..Fill::default()
        };
        let Some(last) = last else {
            return out;
        };
        let mut ci = 0;
        for o in start..=last {
            let lpn = base + o as u64;
            let (_, s) = if host.contains(&o) {
                self.program(cx, dst, Some(lpn), Purpose::Host, None, rmax)
            } else if ci < copies.len() && copies[ci].0 == o {
                let src = copies[ci].1;
                ci += 1;
                out.copies += 1;
                cx.work.gc_pages += 1;
                cx.work.map_lookups += 1;
                self.program(cx, dst, Some(lpn), purpose, Some(src), rmax)
            } else {
                out.pads += 1;
                self.program(cx, dst, None, purpose, None, rmax)
            };
            out.next = out.next.max(s + 1);
        }
        out
    }

    /// Does logical block `lbn` have any mapped page?
    pub fn has_data(&self, lbn: u32) -> bool {
        let base = lbn as usize * self.ppb as usize;
        self.l2p[base..base + self.ppb as usize]
            .iter()
            .any(|&p| p != NONE)
    }

    /// Full merge: gather the newest copy of every page of `lbn` into a fresh
    /// block, which becomes the data block; erase the old data block. Log blocks
    /// dedicated to `lbn` are left empty of valid data for the caller to erase.
    /// Returns the stage after the merge.
    pub fn full_merge(&mut self, cx: &mut FtlCtx, lbn: u32, min: u16) -> u16 {
        let old = self.dmap[lbn as usize];
        let mut next = min;
        let mut copies = 0;
        if self.has_data(lbn) {
            let nb = self.alloc(self.plane_of_lbn(lbn));
            let f = self.fill(cx, lbn, nb, 0..0, Purpose::Merge, min);
            copies = f.copies;
            next = f.next;
            if old != NONE {
                self.dmap[lbn as usize] = NONE;
                self.owner[old as usize] = NONE;
            }
            self.set_data(lbn, nb);
        }
        if old != NONE {
            next = self.erase(cx, old, Purpose::Merge, next);
            self.stats.merge_erases += 1;
        }
        self.stats.merges_full += 1;
        self.stats.merge_page_copies += copies;
        next
    }

    /// Switch or partial merge of `log` into `lbn` if the log holds a valid
    /// in-order prefix of the block (page i = offset i); None otherwise (the
    /// caller then does a full merge). Returns the stage after the merge.
    pub fn try_switch_partial(
        &mut self,
        cx: &mut FtlCtx,
        lbn: u32,
        log: u32,
        min: u16,
    ) -> Option<u16> {
        let base = lbn as u64 * self.ppb as u64;
        let first = self.g.first_page(BlockId(log)).0;
        let w = self.wp(log);
        for i in 0..w {
            if self.p2l[(first + i) as usize] as u64 != base + i as u64 {
                return None;
            }
        }
        let old = self.dmap[lbn as usize];
        let mut next = min;
        if w == self.ppb {
            self.stats.merges_switch += 1;
        } else {
            let f = self.fill(cx, lbn, log, 0..0, Purpose::Merge, min);
            next = f.next;
            self.stats.merges_partial += 1;
            self.stats.merge_page_copies += f.copies;
        }
        if old != NONE {
            self.dmap[lbn as usize] = NONE;
            self.owner[old as usize] = NONE;
            next = self.erase(cx, old, Purpose::Merge, next);
            self.stats.merge_erases += 1;
        }
        self.set_data(lbn, log);
        Some(next)
    }

    /// Write host pages `[a, b)` of `lbn` in place if its data block (allocated
    /// if absent and `a == 0`) can take them without filler (its write pointer is
    /// `a`). Returns false if the pages must go elsewhere.
    pub fn try_in_place(&mut self, cx: &mut FtlCtx, lbn: u32, a: u32, b: u32) -> bool {
        let d = self.dmap[lbn as usize];
        let d = if d == NONE {
            if a != 0 {
                return false;
            }
            let nb = self.alloc(self.plane_of_lbn(lbn));
            self.set_data(lbn, nb);
            nb
        } else {
            if self.wp(d) != a || self.is_full(d) {
                return false;
            }
            d
        };
        let base = lbn as u64 * self.ppb as u64;
        for o in a..b {
            self.program(cx, d, Some(base + o as u64), Purpose::Host, None, 0);
        }
        true
    }

    /// Static wear levelling after a call, per plane as in the page FTL (see
    /// the `wear` module): for each erase other than levelling's own the call
    /// made in a plane, one check of that plane and, if its erase counts
    /// spread by more than the threshold, one move of its least-worn data
    /// block to the most-worn free block (the old block rests under cold data,
    /// the young one returns to circulation, as in Chang's dual pool), whose
    /// erase checks nothing. So levelling moves at most one block per erase
    /// of the merges and GCs: its total work is linear in theirs.
    pub fn static_wear_level(&mut self, cx: &mut FtlCtx) {
        if self.last_erased.take().is_some() {
            cx.work.dram_accesses += 1;
        }
        if !self.wl_any {
            return;
        }
        for p in 0..self.wl_due.len() {
            let due = std::mem::take(&mut self.wl_due[p]);
            for _ in 0..due {
                if !self.level_one(PlaneId(p as u32), cx) {
                    break;
                }
            }
        }
        self.wl_any = false;
        self.last_erased = None;
    }

    /// One levelling move in `plane` (see [`Core::static_wear_level`]); false
    /// if none is due or no free block can take the data.
    fn level_one(&mut self, plane: PlaneId, cx: &mut FtlCtx) -> bool {
        let owner = &self.owner;
        let Some(v) = self
            .wear
            .static_victim(&self.blocks, plane, |i| owner[i] != NONE)
        else {
            return false;
        };
        let lbn = self.owner[v.0 as usize];
        let Some(nb) = self.blocks.alloc_most_worn(plane) else {
            return false;
        };
        cx.work.dram_accesses += 1;
        let f = self.fill(cx, lbn, nb.0, 0..0, Purpose::WearLevel, 0);
        self.stats.wear_level_moves += f.copies;
        self.dmap[lbn as usize] = NONE;
        self.owner[v.0 as usize] = NONE;
        self.set_data(lbn, nb.0);
        self.erase(cx, v.0, Purpose::WearLevel, f.next);
        true
    }

    /// Pick a victim among `cands` by the configured policy, counting the search.
    pub fn pick_victim(&mut self, cands: &[u32], cx: &mut FtlCtx) -> Option<u32> {
        let (v, ex) = self
            .blocks
            .select_among(cands, self.policy, &mut cx.rng, &mut cx.work)?;
        self.stats.gc_victims_examined += ex;
        self.stats.gc_runs += 1;
        Some(v.0)
    }

    /// Distinct logical blocks with a valid page in block `b`, in page order of
    /// first appearance.
    pub fn lbns_in(&self, b: u32) -> Vec<u32> {
        let first = self.g.first_page(BlockId(b)).0 as usize;
        let mut v: Vec<u32> = Vec::new();
        for &l in &self.p2l[first..first + self.wp(b) as usize] {
            if l != NONE {
                let lbn = l / self.ppb;
                if !v.contains(&lbn) {
                    v.push(lbn);
                }
            }
        }
        v
    }

    /// The physical page holding `lpn`'s data, None if unmapped.
    pub fn lookup(&self, lpn: Lpn) -> Option<Ppn> {
        let p = *self.l2p.get(lpn.0 as usize)?;
        (p != NONE).then(|| self.phys(Ppn(p)))
    }

    /// Block table + a page table over the log area, byte-aligned entries (Park
    /// et al. 3.3).
    pub fn table_bytes(&self) -> u64 {
        self.nlb as u64 * entry_bytes(self.g.total_blocks() as u64)
            + self.log_limit as u64 * self.ppb as u64 * entry_bytes(self.g.total_pages())
    }

    /// Invariants shared by every block-mapped FTL. `logs` are the FTL's own log
    /// block lists (they must be exactly the blocks flagged as logs).
    pub fn check(&self, logs: &[u32]) -> Result<(), String> {
        self.blocks.check()?;
        let mut valid = vec![0u32; self.blocks.count()];
        let ppb = self.ppb as u64;
        for (l, &p) in self.l2p.iter().enumerate() {
            if p == NONE {
                continue;
            }
            if self.p2l[p as usize] != l as u32 {
                return Err(format!(
                    "lpn {l} maps to ppn {p} whose reverse entry is {}",
                    self.p2l[p as usize]
                ));
            }
            let b = self.g.block_of(Ppn(p));
            if self.g.page_in_block(Ppn(p)) >= self.wp(b.0) {
                return Err(format!("lpn {l} maps to unwritten page {p}"));
            }
            let lbn = (l as u64 / ppb) as u32;
            let in_data = self.dmap[lbn as usize] == b.0
                && self.g.page_in_block(Ppn(p)) as u64 == l as u64 % ppb;
            if !in_data && !self.is_log[b.0 as usize] {
                return Err(format!(
                    "lpn {l} lives in block {} page {}, neither its data block ({}) at its offset nor a log block",
                    b.0,
                    self.g.page_in_block(Ppn(p)),
                    self.dmap[lbn as usize] as i64
                ));
            }
            valid[b.0 as usize] += 1;
        }
        for (p, &l) in self.p2l.iter().enumerate() {
            if l != NONE && self.l2p[l as usize] != p as u32 {
                return Err(format!("ppn {p} claims lpn {l}, which maps elsewhere"));
            }
        }
        for (b, &c) in valid.iter().enumerate() {
            let v = self.blocks.valid(b);
            if v as u32 != c {
                return Err(format!("block {b}: valid count {v} but {c} mapped pages"));
            }
        }
        for (lbn, &d) in self.dmap.iter().enumerate() {
            if d != NONE && self.owner[d as usize] != lbn as u32 {
                return Err(format!(
                    "lbn {lbn} -> block {d} owned by {}",
                    self.owner[d as usize]
                ));
            }
        }
        let mut flagged = 0usize;
        for b in 0..self.owner.len() {
            let free = self.blocks.state(b) == BlockState::Free;
            let data = self.owner[b] != NONE;
            let log = self.is_log[b];
            if data && self.dmap[self.owner[b] as usize] != b as u32 {
                return Err(format!(
                    "block {b} claims lbn {} which maps elsewhere",
                    self.owner[b]
                ));
            }
            if (data as u8 + log as u8 + free as u8) != 1 {
                return Err(format!(
                    "block {b} is not exactly one of free/data/log (data {data}, log {log}, free {free})"
                ));
            }
            flagged += log as usize;
            if data {
                let first = self.g.first_page(BlockId(b as u32)).0 as usize;
                let base = self.owner[b] as u64 * ppb;
                for o in 0..self.ppb as usize {
                    let l = self.p2l[first + o];
                    if l != NONE && l as u64 != base + o as u64 {
                        return Err(format!(
                            "data block {b} of lbn {} holds lpn {l} at offset {o}",
                            self.owner[b]
                        ));
                    }
                }
            }
        }
        if flagged != logs.len() || logs.iter().any(|&b| !self.is_log[b as usize]) {
            return Err(format!(
                "{flagged} blocks flagged as logs but the FTL lists {:?}",
                logs
            ));
        }
        if logs.len() > self.log_limit as usize {
            return Err(format!(
                "{} log blocks in use, limit {}",
                logs.len(),
                self.log_limit
            ));
        }
        Ok(())
    }
}
