//! DFTL (Gupta, Kim and Urgaonkar, ASPLOS 2009): page-level mapping kept on flash
//! in translation pages, a Global Translation Directory (GTD: translation page id ->
//! physical page) in controller memory and a small Cached Mapping Table (CMT).
//!
//! * A CMT miss reads the translation page that holds the entry (a flash read,
//!   purpose `Translation`) before the data read it enables: in the gating job the
//!   translation read is in stage `s`, the data read in stage `s + 1`. A write miss
//!   reads the entry too (the old page must be invalidated) but its data program
//!   does not wait for it. A translation page that was never written holds only
//!   unmapped entries, so a miss on it costs no flash read.
//! * Evicting a dirty entry rewrites its translation page (read-modify-write: read
//!   the current version, program a new one, invalidate the old) and writes back
//!   every dirty cached entry of that page at once (they become clean). The
//!   write-back is a job of its own that the host request does not wait for, as
//!   in MQSim (`generate_flash_writeback_request_for_mapping_data`); a flush's
//!   write-backs are part of the flush.
//! * Translation pages live in their own blocks with their own write frontier (one
//!   for the drive; dead translation blocks are erased without copies). A GC
//!   victim is a translation block or a data block of the plane (Gupta et al.
//!   section 3.4.3): its emptiest full translation block if at most half of it
//!   is valid, else the configured policy's choice among its data blocks (a
//!   translation block only if it has none; translation blocks are also
//!   collected when the translation frontiers run short of room: see
//!   `DftlFtl::data_victim` for why translation blocks are not left to the data
//!   policy). A translation victim's valid pages are copied and the GTD updated; a
//!   data victim's pages are copied and their mappings updated: entries in the CMT
//!   in place (they become dirty), the others batched per translation page, one
//!   translation-page rewrite per touched page (which also writes back that page's
//!   dirty cached entries). That batch update is a job of its own: the victim's
//!   erase waits for its copies only (MQSim's erase waits for the page movements;
//!   its mapping updates go through the CMT).
//! * Data placement, host and GC frontiers and GC triggering mirror [`PageFtl`]
//!   exactly, so with a CMT that holds the whole map DFTL issues the page FTL's data
//!   operations and no translation traffic.
//!
//! Plan ordering. The engine applies a plan's operations sorted by (job, stage), so
//! the DFTL keeps that order consistent with the flash rules: once a GC job has been
//! opened, the host request's later operations go to a new gating job; inside a
//! gating job, translation programs never go back in stage and a translation page
//! rewritten in the job is read again only in a later stage. (Across jobs there is
//! no timing dependency in the engine: a host job that reads a translation page a
//! GC job just rewrote is not delayed by that program, an approximation.)
//!
//! [`PageFtl`]: crate::PageFtl
//!
//! Over 1,500 lines on purpose: the translation pages, the GTD, the CMT's
//! write-backs and GC's translation updates keep one mapping's invariants
//! together (`check_invariants`); the CMT's replacement policies are `cmt.rs`.

use crate::blocks::{BlockState, Blocks};
use crate::cmt::Cmt;
use crate::page::entry_bytes;
use crate::stripe::{HostFrontier, PlanePicker};
use crate::wear::WearPolicy;
use ssd_core::config::{invalid, CmtGranularity, ConfigError, FtlConfig, GcMode, GcPolicy};
use ssd_core::ftl::{Ftl, FtlCtx, FtlStats, JobId, Purpose, NO_LPN};
use ssd_core::DriveShape;
use ssd_core::{BlockId, Geometry, Lpn, PlaneId, Ppn};

const NONE: u32 = u32::MAX;
/// A gating job is closed and a new one opened once its stages reach this.
const STAGE_LIMIT: u8 = 200;
/// Free blocks a plane keeps from the translation frontier: its own GC frontier
/// may need one to copy a victim's valid pages before the victim is erased.
const KEEP: u32 = 1;
/// The least GC threshold DFTL runs with: a plane's host frontier must leave
/// one block above [`KEEP`] for the translation frontiers, or a translation
/// write could find no plane with a block to spare. A configured threshold
/// below it is raised, and the report says so (`Ftl::notes`).
const MIN_THRESHOLD: u32 = KEEP + 1;

/// The DFTL FTL (see the module docs).
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct DftlFtl {
    g: Geometry,
    logical: u64,
    /// Page-mapping entries per translation page.
    ept: u64,
    /// Bytes of a page-mapping entry (byte-aligned, addressing every physical page).
    entry: u64,
    cmt_bytes: u64,
    n_tp: u32,
    /// The mapping as the current translation pages on flash hold it, per lpn.
    fmap: Vec<u32>,
    /// Global Translation Directory: translation page id -> ppn (NONE: never written).
    gtd: Vec<u32>,
    /// Writes of each translation page so far (its newest version).
    tver: Vec<u32>,
    /// Dirty cached entries per translation page.
    tp_dirty: Vec<u32>,
    /// The dirty CMT slots of each translation page, as singly linked lists
    /// (`dirty_head` per page, `dirty_next` per slot): a write-back visits its
    /// dirty entries only, not every entry the page maps.
    dirty_head: Vec<u32>,
    dirty_next: Vec<u32>,
    /// Per physical page: the lpn (data block) or translation page id (translation
    /// block) it holds while valid, NONE otherwise.
    p2l: Vec<u32>,
    /// Per physical page, kept until erase (the spare area): id written and, for
    /// translation pages, the version.
    oob: Vec<u32>,
    oob_ver: Vec<u32>,
    is_trans: Vec<bool>,
    /// Translation blocks not free (open or full), in allocation order.
    tlist: Vec<u32>,
    /// Block states, valid counts, erase counts and free pools of the drive.
    pub blocks: Blocks,
    host_open: Vec<u32>,
    gc_open: Vec<u32>,
    /// Translation write frontier per plane.
    trans_open: Vec<u32>,
    picker: PlanePicker,
    policy: GcPolicy,
    threshold: u32,
    /// `ftl.gc_threshold_blocks` as configured (`threshold` is at least [`MIN_THRESHOLD`]).
    threshold_given: u32,
    /// Paced GC's soft threshold in pages of free space per plane (0: the
    /// blocking model, DFTL's default); at least one block above
    /// `threshold`.
    soft_pages: u64,
    /// A victim is being collected for the soft threshold (`pace`): like
    /// idle-time GC, it never moves a fully valid block (MQSim's
    /// `GC_and_WL_Unit_Page_Level::Check_gc_required`: "No invalid page to
    /// erase").
    pacing: bool,
    bg_target: u32,
    bg_cursor: u32,
    /// Host write and trim calls so far (`bg_futile`'s clock).
    bg_epoch: u64,
    /// Per plane, `bg_epoch` + 1 when an idle-time job there reclaimed
    /// nothing (see `background`): idle-time GC skips the plane until the
    /// host writes or trims again, which moves the clock past the mark.
    bg_futile: Vec<u64>,
    cmt: Cmt,
    /// `ftl.cmt_granularity = page`: the CMT loads and evicts whole
    /// translation pages.
    page_mode: bool,
    stats: FtlStats,
    // Planning state of the current call.
    hjob: JobId,
    new_hjob: bool,
    hepoch: u32,
    last_tprog: u8,
    tready_epoch: Vec<u32>,
    tready_stage: Vec<u8>,
    /// Translation pages whose entries the current gating job knows
    /// (`tread_epoch == hepoch`), from the stage in `tread_stage` on.
    tread_epoch: Vec<u32>,
    tread_stage: Vec<u8>,
    gc_pending: Vec<u32>,
    gc_flag: Vec<bool>,
    /// Translation blocks whose last valid page died (erased at the next safe point).
    dead: Vec<u32>,
    scratch: Vec<u32>,
    wear: WearPolicy,
    /// Static levelling is under way: a GC its translation writes run (to
    /// make room) does not check again (see [`DftlFtl::static_wear_level`]).
    levelling: bool,
    /// A static-levelling move is copying: a GC frontier that needs a block
    /// takes its plane's most-worn free one.
    wl_dest: bool,
}

impl DftlFtl {
    /// DFTL over the drive of `s`; an error if the logical space is too large, `ftl.op` leaves
    /// too little room for the translation blocks, or the CMT cannot hold `ftl.cmt_size`.
    pub fn new(c: &FtlConfig, d: &DriveShape) -> Result<DftlFtl, ConfigError> {
        let g = d.geometry;
        let logical = d.logical_pages;
        if logical >= NONE as u64 {
            return Err(invalid("ftl.op", "too many logical pages for DFTL"));
        }
        let entry = entry_bytes(g.total_pages());
        let ept = (g.page_size as u64 / entry).max(1);
        let n_tp = logical.div_ceil(ept);
        let planes = g.total_planes() as usize;
        // Translation pages live in the over-provisioned space: beside what the GC
        // threshold and the frontiers (host, GC, translation) need, room for
        // every translation page twice.
        let spare = g.total_pages() - logical;
        let ppb = g.pages_per_block as u64;
        // Three frontiers: host, GC and translation writes.
        let need = planes as u64 * c.spare_blocks_needed(3) * ppb + 2 * n_tp;
        if spare < need {
            return Err(invalid(
                "ftl.op",
                format!(
                    "DFTL needs {need} spare pages ({n_tp} translation pages twice plus gc_threshold_blocks + 4 blocks per plane) but over-provisioning leaves {spare}: raise op"
                ),
            ));
        }
        let cap = (c.dftl.cmt_size.0 / c.dftl.cmt_entry_bytes as u64).clamp(1, logical.max(1));
        let page_mode = c.dftl.cmt_granularity == CmtGranularity::Page;
        if page_mode && cap < ept.min(logical) {
            return Err(invalid(
                "ftl.cmt_size",
                format!(
                    "a page-granular CMT must hold one translation page ({} entries of {} bytes = {} bytes) but holds {cap} entries",
                    ept,
                    c.dftl.cmt_entry_bytes,
                    ept * c.dftl.cmt_entry_bytes as u64
                ),
            ));
        }
        let nb = g.total_blocks() as usize;
        let np = g.total_pages() as usize;
        let wear = WearPolicy::from_config(c);
        let mut blocks = Blocks::new(g);
        blocks.set_pick(wear.free_pick());
        blocks.track_policy(c.gc_policy);
        Ok(DftlFtl {
            g,
            logical,
            ept,
            entry,
            cmt_bytes: c.dftl.cmt_size.0,
            n_tp: n_tp as u32,
            fmap: vec![NONE; logical as usize],
            gtd: vec![NONE; n_tp as usize],
            tver: vec![0; n_tp as usize],
            tp_dirty: vec![0; n_tp as usize],
            dirty_head: vec![NONE; n_tp as usize],
            dirty_next: vec![NONE; cap as usize],
            p2l: vec![NONE; np],
            oob: vec![NONE; np],
            oob_ver: vec![0; np],
            is_trans: vec![false; nb],
            tlist: Vec::with_capacity(nb),
            blocks,
            host_open: vec![NONE; planes],
            gc_open: vec![NONE; planes],
            trans_open: vec![NONE; planes],
            picker: PlanePicker::new(&g, c.allocation, c.plane_allocation),
            policy: c.gc_policy,
            threshold: c.gc_threshold_blocks.max(MIN_THRESHOLD),
            threshold_given: c.gc_threshold_blocks,
            pacing: false,
            soft_pages: match c.gc_mode() {
                GcMode::Paced => {
                    let soft = c
                        .soft_threshold_blocks()
                        .max(c.gc_threshold_blocks.max(MIN_THRESHOLD) + 1);
                    soft as u64 * g.pages_per_block as u64
                }
                GcMode::Blocking => 0,
            },
            bg_target: c.background_gc_blocks,
            bg_cursor: 0,
            bg_epoch: 0,
            bg_futile: vec![0; planes],
            cmt: Cmt::new(cap as u32, logical, c.dftl.cmt_policy),
            page_mode,
            stats: FtlStats::default(),
            hjob: 0,
            new_hjob: false,
            hepoch: 0,
            last_tprog: 0,
            tready_epoch: vec![0; n_tp as usize],
            tready_stage: vec![0; n_tp as usize],
            tread_epoch: vec![0; n_tp as usize],
            tread_stage: vec![0; n_tp as usize],
            gc_pending: Vec::with_capacity(planes),
            gc_flag: vec![false; planes],
            dead: Vec::with_capacity(planes),
            scratch: Vec::with_capacity(g.pages_per_block as usize + 1),
            wear,
            levelling: false,
            wl_dest: false,
        })
    }

    /// Entries the CMT holds.
    pub fn cmt_capacity(&self) -> u32 {
        self.cmt.capacity()
    }
    /// Entries cached now.
    pub fn cmt_len(&self) -> u32 {
        self.cmt.len()
    }
    /// Number of translation pages (GTD entries).
    pub fn translation_pages(&self) -> u32 {
        self.n_tp
    }
    /// Page-mapping entries per translation page.
    pub fn entries_per_translation_page(&self) -> u64 {
        self.ept
    }
    /// Where translation page `t` lives now.
    pub fn gtd(&self, t: u32) -> Option<Ppn> {
        let p = *self.gtd.get(t as usize)?;
        (p != NONE).then_some(Ppn(p))
    }
    /// Cached entry of `lpn`: (ppn, dirty).
    pub fn cached(&self, lpn: Lpn) -> Option<(Option<Ppn>, bool)> {
        let s = self.cmt.slot(lpn.0)? as usize;
        let p = self.cmt.ppn[s];
        Some(((p != NONE).then_some(Ppn(p)), self.cmt.dirty[s]))
    }
    /// Dirty entries in the CMT.
    pub fn dirty_entries(&self) -> u64 {
        self.tp_dirty.iter().map(|&d| d as u64).sum()
    }

    /// Per-plane space summary for panic messages: free blocks, translation blocks
    /// (valid pages in them), data blocks (valid pages in them).
    pub fn space_summary(&self) -> String {
        let g = &self.g;
        let mut out = String::new();
        for pl in 0..g.total_planes() {
            let first = g.first_block_of_plane(PlaneId(pl)).0;
            let (mut tb, mut tv, mut db, mut dv) = (0, 0u32, 0, 0u32);
            for b in first..first + g.blocks_per_plane {
                let bi = b as usize;
                if self.blocks.state(bi) == BlockState::Free {
                    continue;
                }
                if self.is_trans[bi] {
                    tb += 1;
                    tv += self.blocks.valid(bi) as u32;
                } else {
                    db += 1;
                    dv += self.blocks.valid(bi) as u32;
                }
            }
            out += &format!(
                "plane {pl}: free {} trans {tb} ({tv} valid) data {db} ({dv} valid); ",
                self.blocks.free_count(PlaneId(pl))
            );
        }
        out
    }

    // ------------------------------------------------------------ call state

    /// Start a call. One that adds to a plan already holding operations (the
    /// engine plans each write-buffer eviction of a command, and a flush's
    /// drain, as calls of their own) goes on in that plan's gating job and
    /// stages: restarted, it read at stage 0 a translation page an earlier
    /// call of the same job rewrote at a later stage, and the command never
    /// completed.
    fn begin_call(&mut self, cx: &FtlCtx) {
        if !cx.plan.ops.is_empty() {
            return;
        }
        self.hjob = 0;
        self.new_hjob = false;
        self.hepoch = self.hepoch.wrapping_add(1);
        self.last_tprog = 0;
    }

    /// The gating job host operations go to now.
    #[inline]
    fn hjob(&mut self, cx: &mut FtlCtx) -> JobId {
        if self.new_hjob {
            self.new_hjob = false;
            self.hjob = cx.new_job(true);
            self.hepoch = self.hepoch.wrapping_add(1);
            self.last_tprog = 0;
        }
        self.hjob
    }

    /// Before each page of a host call: keep stage numbers bounded.
    #[inline]
    fn page_start(&mut self) {
        if self.last_tprog >= STAGE_LIMIT {
            self.new_hjob = true;
        }
    }

    /// First stage of the current gating job at which translation page `t` may be read.
    #[inline]
    fn ready(&self, t: u32) -> u8 {
        if self.tready_epoch[t as usize] == self.hepoch {
            self.tready_stage[t as usize]
        } else {
            0
        }
    }

    #[inline]
    fn tpage_of(&self, lpn: u64) -> u32 {
        (lpn / self.ept) as u32
    }

    // ------------------------------------------------------------ allocation

    fn next_plane(&mut self, lpn: u64, cx: &FtlCtx) -> PlaneId {
        self.picker.next(lpn, &cx.die_load)
    }

    #[inline]
    fn open_ok(&self, b: u32) -> bool {
        b != NONE && self.blocks.state(b as usize) == BlockState::Open
    }

    fn host_needs_block(&self, plane: PlaneId) -> bool {
        !self.open_ok(self.host_open[plane.0 as usize])
    }

    /// Foreground GC before the host frontier of `plane` takes a new block.
    fn gc_before_host_block(&mut self, plane: PlaneId, cx: &mut FtlCtx) {
        let mut guard = self.g.blocks_per_plane;
        while self.blocks.free_count(plane) <= self.threshold && guard > 0 {
            guard -= 1;
            self.reclaim_dead(cx);
            if self.blocks.free_count(plane) > self.threshold {
                break;
            }
            if !self.gc_one(plane, cx, false) {
                break;
            }
        }
    }

    /// Program the next page of a data frontier (host or GC) of `plane`.
    fn alloc_page(&mut self, plane: PlaneId, host: bool) -> Ppn {
        let cur = if host {
            self.host_open[plane.0 as usize]
        } else {
            self.gc_open[plane.0 as usize]
        };
        let b = if self.open_ok(cur) {
            cur
        } else {
            let b = if self.wl_dest && !host {
                self.blocks.alloc_most_worn_in(plane)
            } else {
                self.blocks.alloc(plane)
            };
            let b = b.unwrap_or_else(|| {
                panic!(
                    "plane {} has no free block: over-provisioning too small for this workload (gc threshold {}); {}",
                    plane.0, self.threshold, self.space_summary()
                )
            });
            self.is_trans[b.0 as usize] = false;
            b.0
        };
        let p = self.blocks.program_next(BlockId(b));
        let keep = if self.blocks.state(b as usize) == BlockState::Full {
            NONE
        } else {
            b
        };
        if host {
            self.host_open[plane.0 as usize] = keep;
        } else {
            self.gc_open[plane.0 as usize] = keep;
        }
        p
    }

    /// The plane translation page `t` belongs on: the same allocation order
    /// as data, by translation page number (MQSim places a mapping page by
    /// its MVPN as it places data by LPA), so consecutive translation pages
    /// land on consecutive channels.
    #[inline]
    fn home(&self, t: u32) -> PlaneId {
        let o = &self.picker.order;
        PlaneId(o[t as usize % o.len()])
    }

    /// Program the next page of a translation frontier for translation page
    /// `t`: its home plane's (see [`DftlFtl::home`]), which takes a new block
    /// while the plane has more than the [`KEEP`] reserve free. A home plane
    /// at its reserve with its frontier full lends the page to another plane:
    /// one whose frontier has room, else the one with the most free blocks
    /// above the reserve. Callers make room first
    /// ([`DftlFtl::ensure_trans_room`]), so the reserve itself is taken only as
    /// a last resort, when no translation garbage is left to collect.
    fn alloc_tpage(&mut self, t: u32) -> Ppn {
        let home = self.home(t);
        let plane = if self.open_ok(self.trans_open[home.0 as usize])
            || self.blocks.free_count(home) > KEEP
        {
            home
        } else {
            self.lend_plane(home)
        };
        let pi = plane.0 as usize;
        if !self.open_ok(self.trans_open[pi]) {
            let b = self.blocks.alloc(plane).unwrap_or_else(|| {
                panic!(
                    "no plane has a free block for a translation page: over-provisioning too small; {}",
                    self.space_summary()
                )
            });
            self.is_trans[b.0 as usize] = true;
            self.tlist.push(b.0);
            self.trans_open[pi] = b.0;
            if !self.gc_flag[pi] {
                self.gc_flag[pi] = true;
                self.gc_pending.push(plane.0);
            }
        }
        let b = self.trans_open[pi];
        let ppn = self.blocks.program_next(BlockId(b));
        if self.blocks.state(b as usize) == BlockState::Full {
            self.trans_open[pi] = NONE;
        }
        ppn
    }

    /// The plane that takes a translation page whose home plane `home` has
    /// no room above its reserve (see [`DftlFtl::alloc_tpage`]).
    fn lend_plane(&self, home: PlaneId) -> PlaneId {
        let np = self.g.total_planes();
        let order = |k: u32| PlaneId((home.0 + k) % np);
        if let Some(p) = (1..np)
            .map(order)
            .find(|&p| self.open_ok(self.trans_open[p.0 as usize]))
        {
            return p;
        }
        let mut best = (0, home);
        for k in 0..np {
            let p = order(k);
            let fc = self.blocks.free_count(p);
            if fc > best.0 {
                best = (fc, p);
            }
        }
        best.1
    }

    /// Translation pages that can be programmed without taking a plane below
    /// [`KEEP`] free blocks: what is left in the translation frontier plus the free
    /// blocks above the reserve. `uses`: a plane whose GC frontier may take one of
    /// its free blocks first.
    fn trans_room(&self, uses: Option<PlaneId>) -> u64 {
        self.trans_room_keeping(uses, KEEP)
    }

    /// [`DftlFtl::trans_room`] with `keep` free blocks kept on each plane
    /// (plus the one `uses` takes).
    fn trans_room_keeping(&self, uses: Option<PlaneId>, keep: u32) -> u64 {
        let ppb = self.g.pages_per_block as u64;
        let mut room = 0;
        for &b in &self.trans_open {
            if self.open_ok(b) {
                room += ppb - self.blocks.wp(b as usize) as u64;
            }
        }
        for p in 0..self.g.total_planes() {
            let fc = self.blocks.free_count(PlaneId(p));
            let keep = keep + u32::from(uses == Some(PlaneId(p)));
            room += fc.saturating_sub(keep) as u64 * ppb;
        }
        room
    }

    /// Before a run that will program up to `need` translation pages: collect
    /// translation garbage (dead blocks, then the emptiest full translation block of
    /// the drive) until that many pages fit above every plane's reserve. Each
    /// collection is its own job, so this is called only between jobs (never while
    /// a GC run is being planned). Returns false if the room cannot be made.
    fn ensure_trans_room(&mut self, need: u64, uses: Option<PlaneId>, cx: &mut FtlCtx) -> bool {
        if need == 0 {
            return true;
        }
        let mut guard = self.g.total_blocks();
        while self.trans_room(uses) < need {
            if !self.dead.is_empty() {
                self.reclaim_dead(cx);
                continue;
            }
            let ex = self.tlist.len() as u64;
            self.stats.gc_victims_examined += ex;
            cx.work.gc_candidates += ex;
            let ppb = self.g.pages_per_block as u16;
            let mut best = None;
            let mut bv = ppb;
            for &b in &self.tlist {
                let bi = b as usize;
                if self.blocks.state(bi) == BlockState::Full && self.blocks.valid(bi) < bv {
                    bv = self.blocks.valid(bi);
                    best = Some(b);
                }
            }
            let Some(v) = best else {
                return false;
            };
            if guard == 0 {
                return false;
            }
            guard -= 1;
            self.stats.gc_runs += 1;
            self.collect_trans(BlockId(v), cx);
        }
        true
    }

    /// Make translation page `t` live at `p` (the old version becomes invalid).
    fn install_tpage(&mut self, t: u32, p: Ppn) {
        let old = self.gtd[t as usize];
        if old != NONE {
            self.blocks.invalidate(Ppn(old));
            self.p2l[old as usize] = NONE;
            let b = self.g.block_of(Ppn(old)).0;
            if self.blocks.valid(b as usize) == 0
                && self.blocks.state(b as usize) == BlockState::Full
            {
                self.dead.push(b);
            }
        }
        self.gtd[t as usize] = p.0;
        self.p2l[p.0 as usize] = t;
        self.tver[t as usize] += 1;
        self.oob[p.0 as usize] = t;
        self.oob_ver[p.0 as usize] = self.tver[t as usize];
    }

    /// Write every dirty cached entry of translation page `t` into the flash image
    /// (the caller programs the new page); they become clean.
    fn clean_tpage(&mut self, t: u32, cx: &mut FtlCtx) {
        let mut left = self.tp_dirty[t as usize];
        if left == 0 {
            return;
        }
        cx.work.dram_accesses += left as u64;
        let mut s = std::mem::replace(&mut self.dirty_head[t as usize], NONE);
        while s != NONE {
            let si = s as usize;
            debug_assert!(self.cmt.dirty[si]);
            self.fmap[self.cmt.lpn[si] as usize] = self.cmt.ppn[si];
            self.cmt.dirty[si] = false;
            left -= 1;
            s = self.dirty_next[si];
        }
        assert_eq!(left, 0, "translation page {t}: dirty count out of step");
        self.tp_dirty[t as usize] = 0;
    }

    /// Rewrite translation page `t` inside the current gating job: the
    /// write-back a flush must wait for.
    fn writeback_host(&mut self, t: u32, cx: &mut FtlCtx) {
        // Translation garbage is collected here, between jobs, when the write-back
        // would otherwise eat into a plane's reserve (if none is left, the frontier
        // takes the reserve: the write-back cannot wait).
        self.ensure_trans_room(1, None, cx);
        // Read-modify-write: the current version is read first, unless this
        // job has read (or written) it already, or the CMT holds the whole
        // page (page granularity).
        let s = if self.page_mode {
            0
        } else {
            self.load_tpage(t, cx)
        };
        let j = self.hjob(cx);
        let ps = s.max(self.ready(t)).max(self.last_tprog);
        self.clean_tpage(t, cx);
        let p = self.alloc_tpage(t);
        cx.program(j, ps, p, Purpose::Translation, NO_LPN, None);
        self.stats.translation_writes += 1;
        self.install_tpage(t, p);
        self.last_tprog = ps;
        self.tready_epoch[t as usize] = self.hepoch;
        self.tready_stage[t as usize] = ps + 1;
        // The controller holds what it just wrote: later misses on `t` in
        // this job need no read of it.
        self.tread_epoch[t as usize] = self.hepoch;
        self.tread_stage[t as usize] = s;
    }

    /// Write translation page `t` back for a CMT eviction, in a job of its
    /// own that the host request does not wait for. MQSim does the same
    /// (`generate_flash_writeback_request_for_mapping_data`: the mapping
    /// read and write carry no user request): the evicted entries are
    /// written into the flash image at once and the page's new version is
    /// programmed in the background. The read of the read-modify-write is
    /// the job's first stage (it joins a read of the same version in
    /// flight, such as the host request's own miss); it is skipped when the
    /// controller already holds the page: under page granularity, or when
    /// this host job wrote `t` back already. Until the next gating job, the
    /// page's entries are served from controller memory (MQSim's
    /// `DepartingMappingEntries`).
    fn writeback_evicted(&mut self, t: u32, cx: &mut FtlCtx) {
        self.ensure_trans_room(1, None, cx);
        let ti = t as usize;
        let held =
            self.page_mode || (self.tread_epoch[ti] == self.hepoch && self.tread_stage[ti] == 0);
        let j = cx.new_job(false);
        let old = self.gtd[ti];
        let ps = if held || old == NONE {
            0
        } else {
            cx.read(j, 0, Ppn(old), Purpose::Translation, NO_LPN);
            self.stats.translation_reads += 1;
            1
        };
        self.clean_tpage(t, cx);
        let p = self.alloc_tpage(t);
        cx.program(j, ps, p, Purpose::Translation, NO_LPN, None);
        self.stats.translation_writes += 1;
        self.install_tpage(t, p);
        self.tread_epoch[ti] = self.hepoch;
        self.tread_stage[ti] = 0;
    }

    #[inline]
    fn mark_dirty(&mut self, s: u32) {
        let si = s as usize;
        if !self.cmt.dirty[si] {
            self.cmt.dirty[si] = true;
            let t = self.tpage_of(self.cmt.lpn[si] as u64) as usize;
            self.tp_dirty[t] += 1;
            self.dirty_next[si] = self.dirty_head[t];
            self.dirty_head[t] = s;
        }
    }

    /// Read translation page `t` in the current gating job, unless this job
    /// has it already (read, or rewritten, in an earlier page of the call:
    /// one host request reads each translation page it needs once). Returns
    /// the first stage at which its entries are known.
    fn load_tpage(&mut self, t: u32, cx: &mut FtlCtx) -> u8 {
        let ti = t as usize;
        if self.tread_epoch[ti] == self.hepoch {
            return self.tread_stage[ti];
        }
        let tp = self.gtd[ti];
        if tp == NONE {
            return 0;
        }
        let j = self.hjob(cx);
        let s = self.ready(t);
        cx.read(j, s, Ppn(tp), Purpose::Translation, NO_LPN);
        self.stats.translation_reads += 1;
        self.tread_epoch[ti] = self.hepoch;
        self.tread_stage[ti] = s + 1;
        s + 1
    }

    /// Find (or load) the CMT entry of `lpn`. Returns its slot and the first stage
    /// of the current gating job at which the entry is known.
    fn lookup_entry(&mut self, lpn: u64, cx: &mut FtlCtx) -> (u32, u8) {
        cx.work.map_lookups += 1;
        if let Some(s) = self.cmt.slot(lpn) {
            self.stats.cmt_hits += 1;
            self.cmt.touch(s);
            return (s, 0);
        }
        self.stats.cmt_misses += 1;
        if self.page_mode {
            return self.load_page_entries(lpn, cx);
        }
        if self.cmt.is_full() {
            let v = self.cmt.victim().expect("full CMT has a victim");
            self.stats.cmt_evictions += 1;
            cx.work.dram_accesses += 1;
            if self.cmt.dirty[v as usize] {
                self.stats.cmt_dirty_evictions += 1;
                let t = self.tpage_of(self.cmt.lpn[v as usize] as u64);
                self.writeback_evicted(t, cx);
            }
            self.cmt.remove(v);
        }
        let t = self.tpage_of(lpn);
        cx.work.dram_accesses += 1; // GTD lookup
        let after = self.load_tpage(t, cx);
        let s = self.cmt.insert(lpn, self.fmap[lpn as usize], false);
        (s, after)
    }

    /// Logical pages mapped by translation page `t`.
    fn tpage_range(&self, t: u32) -> std::ops::Range<u64> {
        let lo = t as u64 * self.ept;
        lo..(lo + self.ept).min(self.logical)
    }

    /// A miss on `lpn` under page granularity: make room for its translation
    /// page by evicting whole pages (least recently used first), read the
    /// page and cache all its entries, `lpn`'s last (most recently used).
    fn load_page_entries(&mut self, lpn: u64, cx: &mut FtlCtx) -> (u32, u8) {
        let t = self.tpage_of(lpn);
        let r = self.tpage_range(t);
        loop {
            let need = r.clone().filter(|&l| self.cmt.slot(l).is_none()).count() as u32;
            if self.cmt.capacity() - self.cmt.len() >= need {
                break;
            }
            let v = self.cmt.victim().expect("a CMT short of room has a victim");
            let u = self.tpage_of(self.cmt.lpn[v as usize] as u64);
            self.evict_page(u, cx);
        }
        // The GTD lookup, and the page's copy into the cache (one transfer).
        cx.work.dram_accesses += 2;
        let after = self.load_tpage(t, cx);
        for l in r {
            if l != lpn && self.cmt.slot(l).is_none() {
                self.cmt.insert(l, self.fmap[l as usize], false);
            }
        }
        let s = self.cmt.insert(lpn, self.fmap[lpn as usize], false);
        (s, after)
    }

    /// Drop translation page `u`'s entries from a page-granular CMT, writing
    /// the page back first if any of them is dirty. Counts one eviction (and
    /// one dirty eviction) per page.
    fn evict_page(&mut self, u: u32, cx: &mut FtlCtx) {
        self.stats.cmt_evictions += 1;
        if self.tp_dirty[u as usize] > 0 {
            self.stats.cmt_dirty_evictions += 1;
            self.writeback_evicted(u, cx);
        }
        cx.work.dram_accesses += 1;
        for l in self.tpage_range(u) {
            if let Some(s) = self.cmt.slot(l) {
                self.cmt.remove(s);
            }
        }
    }

    // ------------------------------------------------------------ GC

    /// Erase translation blocks that hold no valid page any more (no copies needed:
    /// translation pages are rewritten often, so their blocks die whole). One
    /// non-gating job, planned after every operation that read those blocks.
    fn reclaim_dead(&mut self, cx: &mut FtlCtx) {
        if self.dead.is_empty() {
            return;
        }
        let mut job = None;
        // Each block on the list is a candidate looked at (one table read).
        self.stats.gc_victims_examined += self.dead.len() as u64;
        cx.work.gc_candidates += self.dead.len() as u64;
        for i in 0..self.dead.len() {
            let b = self.dead[i];
            let bi = b as usize;
            if !self.is_trans[bi]
                || self.blocks.valid(bi) != 0
                || self.blocks.state(bi) != BlockState::Full
            {
                continue;
            }
            let j = *job.get_or_insert_with(|| cx.new_job(false));
            self.new_hjob = true;
            self.stats.gc_runs += 1;
            self.erase_block(BlockId(b));
            cx.erase(j, 0, self.g.first_page(BlockId(b)), Purpose::Gc);
        }
        self.dead.clear();
    }

    fn erase_block(&mut self, b: BlockId) {
        self.blocks.erase(b);
        if self.is_trans[b.0 as usize] {
            self.is_trans[b.0 as usize] = false;
            let i = self
                .tlist
                .iter()
                .position(|&x| x == b.0)
                .expect("translation block on the list");
            self.tlist.swap_remove(i);
        }
        let first = self.g.first_page(b).0;
        for off in 0..self.g.pages_per_block {
            self.oob[(first + off) as usize] = NONE;
            self.oob_ver[(first + off) as usize] = 0;
        }
    }

    fn gc_if_needed(&mut self, plane: PlaneId, cx: &mut FtlCtx) {
        let mut guard = self.g.blocks_per_plane;
        while self.blocks.free_count(plane) < self.threshold && guard > 0 {
            guard -= 1;
            self.reclaim_dead(cx);
            if self.blocks.free_count(plane) >= self.threshold {
                break;
            }
            if !self.gc_one(plane, cx, false) {
                break;
            }
        }
    }

    /// GC of planes that handed out translation blocks during this page's work.
    fn run_pending_gc(&mut self, cx: &mut FtlCtx) {
        self.reclaim_dead(cx);
        let mut i = 0;
        while i < self.gc_pending.len() {
            let p = self.gc_pending[i];
            self.gc_flag[p as usize] = false;
            self.gc_if_needed(PlaneId(p), cx);
            i += 1;
        }
        self.gc_pending.clear();
    }

    /// The emptiest full translation block of `plane` if at most half of it is
    /// valid, and the number of translation blocks looked at.
    fn trans_victim(&self, plane: PlaneId) -> (Option<BlockId>, u64) {
        let mut best = None;
        let mut bv = (self.g.pages_per_block / 2 + 1) as u16;
        let mut ex = 0;
        for &b in &self.tlist {
            let bi = b as usize;
            if self.g.plane_of_block(BlockId(b)) != plane {
                continue;
            }
            ex += 1;
            if self.blocks.state(bi) == BlockState::Full && self.blocks.valid(bi) < bv {
                bv = self.blocks.valid(bi);
                best = Some(BlockId(b));
            }
        }
        (best, ex)
    }

    /// The victim the configured policy takes among the data blocks of
    /// `plane`, given `v`, its choice among all full blocks: a translation
    /// block (more than half valid, or `trans_victim` would have taken it)
    /// is passed over for the plane's data blocks, and taken only if the
    /// plane has none. Translation pages are the drive's hottest data: each
    /// data victim rewrites the translation pages of its uncached entries and
    /// every dirty eviction one more, so a translation block's pages die many
    /// times faster than a data block's. Greedy over both kinds takes a
    /// translation block as soon as it is emptier than the best data block
    /// and copies pages that would have died soon after (the hot/cold
    /// weakness of greedy cleaning: Rosenblum & Ousterhout, ACM TOCS 1992,
    /// the cleaning simulations under hot-and-cold access; Desnoyers,
    /// SYSTOR 2012, on greedy under hot/cold traffic). Translation blocks
    /// are collected when at most half valid (`trans_victim`), dead
    /// (`reclaim_dead`) or when the translation frontiers run short of room
    /// (`ensure_trans_room`). On chip2 at steady state (50,000 random 4 KiB
    /// writes at QD 32) greedy over both kinds copied 8.0 translation pages
    /// per host write in the blocking model and 13.4 paced (WAF 21.2 and
    /// 26.9), this rule 3.4 and 4.4 (WAF 17.0 and 17.8).
    fn data_victim(&mut self, plane: PlaneId, v: BlockId, cx: &mut FtlCtx) -> BlockId {
        if !self.is_trans[v.0 as usize] {
            return v;
        }
        let found = if self.policy == GcPolicy::Greedy {
            // The next blocks in greedy order; a plane holds few translation
            // blocks, so this walk is short.
            let mut w = v;
            let mut ex = 0;
            while self.is_trans[w.0 as usize] {
                match self.blocks.greedy_next(plane, w) {
                    Some(n) => w = n,
                    None => break,
                }
                ex += 1;
            }
            self.stats.gc_victims_examined += ex;
            cx.work.gc_candidates += ex;
            (!self.is_trans[w.0 as usize]).then_some(w)
        } else {
            let first = self.g.first_block_of_plane(plane).0;
            let mut cands = std::mem::take(&mut self.scratch);
            cands.clear();
            cands.extend((first..first + self.g.blocks_per_plane).filter(|&b| {
                !self.is_trans[b as usize] && self.blocks.state(b as usize) == BlockState::Full
            }));
            let r = self
                .blocks
                .select_among(&cands, self.policy, &mut cx.rng, &mut cx.work);
            self.scratch = cands;
            r.map(|(b, ex)| {
                self.stats.gc_victims_examined += ex;
                b
            })
        };
        found.unwrap_or(v)
    }

    /// Copy the valid pages of translation block `victim` to the translation
    /// frontier and erase it, in a job of its own.
    fn collect_trans(&mut self, victim: BlockId, cx: &mut FtlCtx) {
        let job = cx.new_job(false);
        self.new_hjob = true;
        let first = self.g.first_page(victim).0;
        // Every page's state is read (its reverse-map entry), live or not.
        cx.work.gc_page_checks += self.g.pages_per_block as u64;
        for off in 0..self.g.pages_per_block {
            let src = first + off;
            let t = self.p2l[src as usize];
            if t == NONE {
                continue;
            }
            cx.read(job, 0, Ppn(src), Purpose::Gc, NO_LPN);
            let dst = self.alloc_tpage(t);
            cx.program(job, 1, dst, Purpose::Gc, NO_LPN, Some(Ppn(src)));
            self.install_tpage(t, dst);
            cx.work.gc_pages += 1;
            cx.work.dram_accesses += 1;
            self.stats.gc_page_copies += 1;
            self.stats.translation_gc_copies += 1;
        }
        self.erase_block(victim);
        cx.erase(job, 2, Ppn(first), Purpose::Gc);
    }

    /// Collect one victim of `plane`. Returns false if no block is worth collecting.
    fn gc_one(&mut self, plane: PlaneId, cx: &mut FtlCtx, background: bool) -> bool {
        // Translation blocks are collected on their own, greedily: the emptiest
        // full translation block of the plane goes first when at most half of it
        // is valid (translation pages die fast, and a data policy such as FIFO
        // would leave their garbage in place). Otherwise the configured policy
        // picks among the plane's data blocks (see `data_victim`).
        let (tv, tex) = self.trans_victim(plane);
        self.stats.gc_victims_examined += tex;
        cx.work.gc_candidates += tex;
        let victim = match tv {
            Some(v) => v,
            None => match self
                .blocks
                .select_victim(plane, self.policy, &mut cx.rng, &mut cx.work)
            {
                Some((v, ex)) => {
                    self.stats.gc_victims_examined += ex;
                    self.data_victim(plane, v, cx)
                }
                None => return false,
            },
        };
        let ppb = self.g.pages_per_block;
        let mut victim = victim;
        if self.blocks.valid(victim.0 as usize) as u32 == ppb
            && !matches!(self.policy, GcPolicy::Fifo | GcPolicy::Greedy)
        {
            // As in the page FTL: a random or windowed draw that hit a block with
            // nothing to reclaim falls back to a greedy search.
            if let Some((v, ex)) =
                self.blocks
                    .select_victim(plane, GcPolicy::Greedy, &mut cx.rng, &mut cx.work)
            {
                self.stats.gc_victims_examined += ex;
                victim = v;
                if self.is_trans[v.0 as usize] {
                    // Greedy's walk past the translation blocks.
                    let policy = std::mem::replace(&mut self.policy, GcPolicy::Greedy);
                    victim = self.data_victim(plane, v, cx);
                    self.policy = policy;
                }
            }
        }
        let vi = victim.0 as usize;
        // As in the page FTL: idle-time GC never moves a fully valid block,
        // nor does FIFO in a plane without garbage (here each such move also
        // rewrites the translation pages of its data).
        if self.blocks.valid(vi) as u32 == ppb
            && (self.policy != GcPolicy::Fifo
                || background
                || self.pacing
                || !self.blocks.reclaimable(plane))
        {
            return false;
        }
        if self.is_trans[vi] {
            // Copying c valid translation pages needs c pages of translation room.
            // Making it may collect this very block (it is the drive's emptiest);
            // if the room cannot be made, go on: collecting a translation block
            // frees more than it takes.
            let erased = self.blocks.erase_count[vi];
            self.ensure_trans_room(self.blocks.valid(vi) as u64, None, cx);
            if self.blocks.erase_count[vi] != erased {
                self.static_wear_level(plane, cx);
                return true;
            }
            self.stats.gc_runs += 1;
            if background {
                self.stats.background_runs += 1;
            } else if !self.pacing {
                self.stats.foreground_runs += 1;
            }
            self.collect_trans(victim, cx);
            self.static_wear_level(plane, cx);
            return true;
        }
        if !self.relocate_data(victim, plane, Purpose::Gc, background, cx) {
            // FIFO's fully valid oldest block could not move now (its
            // translation writes found no room outside the reserves, which
            // only a move that frees space may use): collect the plane's
            // emptiest data block instead, or FIFO spent the room on moves
            // that free nothing until a write-back found no block.
            if self.blocks.valid(vi) as u32 != ppb {
                return false;
            }
            let Some((v, ex)) =
                self.blocks
                    .select_victim(plane, GcPolicy::Greedy, &mut cx.rng, &mut cx.work)
            else {
                return false;
            };
            self.stats.gc_victims_examined += ex;
            let v_i = v.0 as usize;
            if self.is_trans[v_i]
                || self.blocks.valid(v_i) as u32 == ppb
                || !self.relocate_data(v, plane, Purpose::Gc, background, cx)
            {
                return false;
            }
        }
        self.static_wear_level(plane, cx);
        true
    }

    /// Static wear levelling after a GC's erase in `plane`, as in the page FTL
    /// (see the `wear` module): if the plane's erase counts spread by more
    /// than the threshold, move its least-worn full data block to the GC
    /// frontier (the most-worn free block when the frontier needs one) and
    /// erase it. One move per GC erase; the move's own erase, and those of the
    /// GCs its translation writes run to make room (`levelling`), check
    /// nothing, so no chain of moves can feed itself and levelling's work is
    /// linear in the GC's: at most a block's copies per GC erase. Translation
    /// blocks are not moved: translation pages of cold data are rewritten
    /// whenever that data moves. (Against the drive's largest count, which
    /// translation blocks drive up, and checking after every erase, a small
    /// drive at 3 % over-provisioning rewrote the whole drive each time that
    /// count grew: total work quadratic in the drive's size.)
    fn static_wear_level(&mut self, plane: PlaneId, cx: &mut FtlCtx) {
        if self.levelling {
            return;
        }
        let (h, gc, tr) = (&self.host_open, &self.gc_open, &self.is_trans);
        let Some(v) = self.wear.static_victim(&self.blocks, plane, |i| {
            let b = i as u32;
            !tr[i] && !h.contains(&b) && !gc.contains(&b)
        }) else {
            return;
        };
        self.levelling = true;
        cx.work.dram_accesses += 1;
        self.relocate_data(v, plane, Purpose::WearLevel, false, cx);
        self.levelling = false;
    }

    /// Move the valid pages of data block `victim` to the plane's GC frontier,
    /// update their mappings (in the CMT, or through their translation pages),
    /// and erase it. False if the translation room could not be made.
    fn relocate_data(
        &mut self,
        victim: BlockId,
        plane: PlaneId,
        purpose: Purpose,
        background: bool,
        cx: &mut FtlCtx,
    ) -> bool {
        let ppb = self.g.pages_per_block;
        let vi = victim.0 as usize;
        // Its valid pages not cached in the CMT need one translation
        // write per translation page they map through; make room for them first
        // (the GC frontier of this plane may take one of its free blocks).
        let first = self.g.first_page(victim).0;
        // One random CMT index (and, if uncached, map) entry per live page: ask
        // for them all first so that the cache misses overlap.
        for off in 0..ppb {
            let l = self.p2l[(first + off) as usize];
            if l != NONE {
                self.cmt.prefetch(l as u64);
                ssd_core::ftl::prefetch_read(&self.fmap[l as usize]);
            }
        }
        self.scratch.clear();
        for off in 0..ppb {
            let l = self.p2l[(first + off) as usize];
            if l != NONE && self.cmt.slot(l as u64).is_none() {
                let t = self.tpage_of(l as u64);
                self.scratch.push(t);
            }
        }
        self.scratch.sort_unstable();
        self.scratch.dedup();
        let need = self.scratch.len() as u64;
        let gc_b = self.gc_open[plane.0 as usize];
        let copies = self.blocks.valid(vi) as u32;
        let takes_block =
            !self.open_ok(gc_b) || ppb - (self.blocks.wp(gc_b as usize) as u32) < copies;
        // A victim with garbage gives its plane a block back once its pages
        // are copied, so their translation writes may use the reserves
        // meanwhile: those are kept for write-backs, which cannot wait, and
        // only such a GC refills them. Without it GC at the threshold, with
        // the translation frontiers nearly full and their garbage not yet
        // collectable, never ran; write-backs then took the reserves, and
        // the next translation page found no block. (A move that frees
        // nothing, such as static wear levelling's, keeps them.)
        let uses = takes_block.then_some(plane);
        if !self.ensure_trans_room(need, uses, cx)
            && (copies == ppb || self.trans_room_keeping(uses, 0) < need)
        {
            return false;
        }
        // The copies need a new GC frontier block and the plane has none left
        // (making translation room can take it): no move now. Static wear
        // levelling after a GC moves a whole block, and found none.
        if takes_block && self.blocks.free_count(plane) == 0 {
            return false;
        }
        if purpose == Purpose::Gc {
            self.stats.gc_runs += 1;
            if background {
                self.stats.background_runs += 1;
            } else if !self.pacing {
                self.stats.foreground_runs += 1;
            }
        }
        let job = cx.new_job(false);
        self.new_hjob = true;
        // Every page's state is read (its reverse-map entry), live or not.
        cx.work.gc_page_checks += ppb as u64;
        self.wl_dest = purpose == Purpose::WearLevel;
        {
            self.scratch.clear();
            let mut moved = 0u16;
            for off in 0..self.g.pages_per_block {
                let src = first + off;
                let l = self.p2l[src as usize];
                if l == NONE {
                    continue;
                }
                cx.read(job, 0, Ppn(src), purpose, l as u64);
                moved += 1;
                self.p2l[src as usize] = NONE;
                let dst = self.alloc_page(plane, false);
                self.p2l[dst.0 as usize] = l;
                self.oob[dst.0 as usize] = l;
                cx.program(job, 1, dst, purpose, l as u64, Some(Ppn(src)));
                cx.work.gc_pages += 1;
                cx.work.map_lookups += 1;
                if purpose == Purpose::Gc {
                    self.stats.gc_page_copies += 1;
                } else {
                    self.stats.wear_level_moves += 1;
                }
                match self.cmt.slot(l as u64) {
                    Some(s) => {
                        self.cmt.ppn[s as usize] = dst.0;
                        self.mark_dirty(s);
                    }
                    None => {
                        self.fmap[l as usize] = dst.0;
                        let t = self.tpage_of(l as u64);
                        self.scratch.push(t);
                    }
                }
            }
            self.wl_dest = false;
            // Every moved page dies at once (one victim-index move, same end state:
            // nothing above reads the victim's count).
            self.blocks.invalidate_n(victim, moved);
            self.scratch.sort_unstable();
            self.scratch.dedup();
            // The batch update of the moved pages' translation pages is a job
            // of its own: the victim's erase waits for its copies only, as in
            // MQSim, whose erase waits for the page movements and whose mapping
            // updates go through the CMT's write-back.
            let tjob = if self.scratch.is_empty() {
                job
            } else {
                cx.new_job(false)
            };
            for i in 0..self.scratch.len() {
                let t = self.scratch[i];
                let old = self.gtd[t as usize];
                assert!(
                    old != NONE,
                    "GC moved a page mapped through translation page {t}, which was never written"
                );
                cx.read(tjob, 0, Ppn(old), Purpose::Translation, NO_LPN);
                self.stats.translation_reads += 1;
                self.clean_tpage(t, cx);
                let p = self.alloc_tpage(t);
                cx.program(tjob, 1, p, Purpose::Translation, NO_LPN, None);
                self.stats.translation_writes += 1;
                self.install_tpage(t, p);
            }
        }
        self.erase_block(victim);
        cx.erase(job, 2, Ppn(first), purpose);
        true
    }

    /// The mapping of `l` right now (cache first, then the flash image).
    #[inline]
    fn current(&self, l: u64) -> u32 {
        match self.cmt.slot(l) {
            Some(s) => self.cmt.ppn[s as usize],
            None => self.fmap[l as usize],
        }
    }
}

impl HostFrontier for DftlFtl {
    fn next_plane(&mut self, lpn: u64, cx: &FtlCtx) -> PlaneId {
        DftlFtl::next_plane(self, lpn, cx)
    }
    fn fallback_plane(&mut self, tried: PlaneId, cx: &FtlCtx) -> PlaneId {
        self.picker.after(tried, &cx.die_load)
    }
    fn host_needs_block(&self, plane: PlaneId) -> bool {
        DftlFtl::host_needs_block(self, plane)
    }
    fn gc_for_host(&mut self, plane: PlaneId, cx: &mut FtlCtx) {
        self.gc_before_host_block(plane, cx)
    }
    fn at_threshold(&self, plane: PlaneId) -> bool {
        self.blocks.free_count(plane) <= self.threshold
    }
    fn total_planes(&self) -> u32 {
        self.g.total_planes()
    }
    fn pace(&mut self, plane: PlaneId, cx: &mut FtlCtx) {
        let p = plane.0 as usize;
        let frontiers = [self.host_open[p], self.gc_open[p]];
        if self.soft_pages == 0 || !self.blocks.space_below(plane, &frontiers, self.soft_pages) {
            return;
        }
        // Dead translation blocks first: they cost an erase and no copies.
        self.reclaim_dead(cx);
        if self.free_space(plane) < self.soft_pages {
            self.pacing = true;
            self.gc_one(plane, cx, false);
            self.pacing = false;
        }
    }
}

impl DftlFtl {
    /// Pages the whole drive can still take without GC: every plane's free
    /// blocks and the room left in its data and translation frontiers.
    fn drive_free_pages(&self) -> u64 {
        (0..self.host_open.len())
            .map(|p| {
                let open = [self.host_open[p], self.gc_open[p], self.trans_open[p]];
                self.blocks.free_space(PlaneId(p as u32), &open)
            })
            .sum()
    }

    /// Pages `plane` can still take for data without GC (`Blocks::free_space`
    /// over its host and GC frontiers).
    fn free_space(&self, plane: PlaneId) -> u64 {
        let p = plane.0 as usize;
        self.blocks
            .free_space(plane, &[self.host_open[p], self.gc_open[p]])
    }
}

impl Ftl for DftlFtl {
    fn name(&self) -> &'static str {
        "dftl"
    }
    /// The per-page tables (the flash's map, the reverse map, the spare
    /// areas) and the blocks' tables.
    fn shed(&mut self) {
        self.fmap = Vec::new();
        self.p2l = Vec::new();
        self.oob = Vec::new();
        self.oob_ver = Vec::new();
        self.is_trans = Vec::new();
        self.blocks.shed();
    }
    fn logical_pages(&self) -> u64 {
        self.logical
    }
    fn read(&mut self, lpn: Lpn, n: u32, cx: &mut FtlCtx) {
        self.begin_call(cx);
        for l in lpn.0..lpn.0 + n as u64 {
            self.page_start();
            let (s, after) = self.lookup_entry(l, cx);
            let p = self.cmt.ppn[s as usize];
            if p != NONE {
                let j = self.hjob(cx);
                cx.read(j, after, Ppn(p), Purpose::Host, l);
            }
            self.run_pending_gc(cx);
        }
    }
    fn write(&mut self, lpn: Lpn, n: u32, cx: &mut FtlCtx) {
        self.begin_call(cx);
        self.bg_epoch += 1;
        for l in lpn.0..lpn.0 + n as u64 {
            self.page_start();
            self.blocks.clock += 1;
            let (s, _) = self.lookup_entry(l, cx);
            // A write-back may have taken a plane's free block: restore the GC
            // reserve before the data page is placed.
            self.run_pending_gc(cx);
            let old = self.cmt.ppn[s as usize];
            if old != NONE {
                self.blocks.invalidate(Ppn(old));
                self.p2l[old as usize] = NONE;
            }
            // As in the page FTL: before the host frontier takes a new block, GC
            // until more than `threshold` blocks are free; a plane that cannot be
            // cleaned hands the write to the next plane.
            let plane = self.host_plane(l, cx);
            let p = self.alloc_page(plane, true);
            self.p2l[p.0 as usize] = l as u32;
            self.oob[p.0 as usize] = l as u32;
            // GC above never evicts, so slot s still caches l.
            self.cmt.ppn[s as usize] = p.0;
            self.mark_dirty(s);
            let j = self.hjob(cx);
            cx.program(j, 0, p, Purpose::Host, l, None);
            self.run_pending_gc(cx);
        }
    }
    fn trim(&mut self, lpn: Lpn, n: u32, cx: &mut FtlCtx) {
        self.begin_call(cx);
        self.bg_epoch += 1;
        for l in lpn.0..lpn.0 + n as u64 {
            self.page_start();
            let (s, _) = self.lookup_entry(l, cx);
            let old = self.cmt.ppn[s as usize];
            if old != NONE {
                self.blocks.invalidate(Ppn(old));
                self.p2l[old as usize] = NONE;
                self.cmt.ppn[s as usize] = NONE;
                self.mark_dirty(s);
            }
            self.run_pending_gc(cx);
        }
    }
    fn flush(&mut self, cx: &mut FtlCtx) {
        self.begin_call(cx);
        let mut ts = std::mem::take(&mut self.scratch);
        ts.clear();
        for (t, &d) in self.tp_dirty.iter().enumerate() {
            if d > 0 {
                ts.push(t as u32);
            }
        }
        for &t in &ts {
            self.page_start();
            self.writeback_host(t, cx);
        }
        self.scratch = ts;
        self.run_pending_gc(cx);
    }
    fn background(&mut self, cx: &mut FtlCtx) -> bool {
        self.begin_call(cx);
        // Planes in striping order (channel first), so that successive
        // background jobs land on different dies.
        let np = self.g.total_planes();
        for k in 0..np {
            let i = (self.bg_cursor + k) % np;
            let p = PlaneId(self.picker.order[i as usize]);
            if self.bg_futile[p.0 as usize] == self.bg_epoch + 1
                || self.blocks.free_count(p) >= self.bg_target
            {
                continue;
            }
            let before = self.drive_free_pages();
            if self.gc_one(p, cx, true) {
                self.bg_cursor = (i + 1) % np;
                self.run_pending_gc(cx);
                // A job moves a victim's valid pages and rewrites their
                // translation pages: with little garbage it can take as much
                // room as it frees, and the next job collects the garbage it
                // made, for ever. Idle-time GC exists to reclaim space, so a
                // plane where a job reclaimed none is left alone until the
                // host writes or trims again.
                if self.drive_free_pages() <= before {
                    self.bg_futile[p.0 as usize] = self.bg_epoch + 1;
                }
                return true;
            }
        }
        false
    }
    /// Step 2: the CMT index entry and the full map entry of `lpn` (which
    /// one the request reads depends on whether it is cached).
    #[inline]
    fn prefetch(&self, lpn: Lpn, _write: bool, step: u8) {
        if step == 2 {
            self.cmt.prefetch(lpn.0);
            if let Some(e) = self.fmap.get(lpn.0 as usize) {
                ssd_core::ftl::prefetch_read(e);
            }
        }
    }
    fn lookup(&self, lpn: Lpn) -> Option<Ppn> {
        if lpn.0 >= self.logical {
            return None;
        }
        let p = self.current(lpn.0);
        (p != NONE).then_some(Ppn(p))
    }
    fn check_invariants(&self) -> Result<(), String> {
        self.blocks.check()?;
        self.cmt.check()?;
        let g = &self.g;
        let ppb = g.pages_per_block;
        // Valid pages per block, and nothing valid beyond a block's write pointer.
        for b in 0..g.total_blocks() {
            let first = g.first_page(BlockId(b)).0;
            let wp = self.blocks.wp(b as usize) as u32;
            let mut valid = 0u32;
            for off in 0..ppb {
                let p = (first + off) as usize;
                if off >= wp && (self.p2l[p] != NONE || self.oob[p] != NONE) {
                    return Err(format!("block {b}: unwritten page {off} holds state"));
                }
                if self.p2l[p] != NONE {
                    valid += 1;
                }
            }
            if valid != self.blocks.valid(b as usize) as u32 {
                return Err(format!(
                    "block {b}: valid count {} but {valid} valid pages",
                    self.blocks.valid(b as usize)
                ));
            }
        }
        // Data: every mapping targets a valid data page that names it back, and
        // every valid data page is the target of its lpn's mapping (so of exactly one).
        for l in 0..self.logical {
            let p = self.current(l);
            if p == NONE {
                continue;
            }
            let b = g.block_of(Ppn(p)).0 as usize;
            if self.is_trans[b] || self.p2l[p as usize] != l as u32 {
                return Err(format!(
                    "lpn {l} maps to ppn {p} (translation block: {}, holds {})",
                    self.is_trans[b], self.p2l[p as usize]
                ));
            }
        }
        for (p, &x) in self.p2l.iter().enumerate() {
            if x == NONE {
                continue;
            }
            let b = g.block_of(Ppn(p as u32)).0 as usize;
            if self.is_trans[b] {
                if self.gtd.get(x as usize) != Some(&(p as u32)) {
                    return Err(format!(
                        "valid translation page {p} (id {x}) is not in the GTD"
                    ));
                }
            } else if self.current(x as u64) != p as u32 {
                return Err(format!(
                    "valid data page {p} holds lpn {x}, which maps to {}",
                    self.current(x as u64)
                ));
            }
            if self.oob[p] != x {
                return Err(format!(
                    "page {p}: spare area names {} not {x}",
                    self.oob[p]
                ));
            }
        }
        // GTD: each entry is the newest version of its translation page.
        for (t, &p) in self.gtd.iter().enumerate() {
            if p == NONE {
                if self.tver[t] != 0 {
                    return Err(format!(
                        "translation page {t} was written but has no GTD entry"
                    ));
                }
                let lo = t as u64 * self.ept;
                let hi = (lo + self.ept).min(self.logical);
                if let Some(l) = (lo..hi).find(|&l| self.fmap[l as usize] != NONE) {
                    return Err(format!(
                        "lpn {l} has an on-flash mapping but its translation page {t} was never written"
                    ));
                }
                continue;
            }
            let b = g.block_of(Ppn(p)).0 as usize;
            if !self.is_trans[b] || self.p2l[p as usize] != t as u32 {
                return Err(format!(
                    "GTD entry {t} -> {p} is not a valid translation page"
                ));
            }
            if self.oob_ver[p as usize] != self.tver[t] {
                return Err(format!(
                    "GTD entry {t} -> {p} holds version {} but the newest is {}",
                    self.oob_ver[p as usize], self.tver[t]
                ));
            }
        }
        for b in 0..g.total_blocks() {
            if !self.is_trans[b as usize] || self.blocks.state(b as usize) == BlockState::Free {
                continue;
            }
            let first = g.first_page(BlockId(b)).0;
            for off in 0..self.blocks.wp(b as usize) as u32 {
                let p = (first + off) as usize;
                let t = self.oob[p] as usize;
                if t >= self.gtd.len() || self.oob_ver[p] > self.tver[t] {
                    return Err(format!("translation block {b} page {off}: bad spare area"));
                }
                if self.oob_ver[p] == self.tver[t] && self.gtd[t] != p as u32 {
                    return Err(format!(
                        "translation page {t}: newest version at {p} but the GTD says {}",
                        self.gtd[t]
                    ));
                }
            }
        }
        // CMT: clean entries equal the flash image; dirty counts per translation page.
        let mut dirty = vec![0u32; self.n_tp as usize];
        for s in self.cmt.slots() {
            let si = s as usize;
            let l = self.cmt.lpn[si] as usize;
            if l as u64 >= self.logical {
                return Err(format!("CMT slot {s} caches lpn {l} beyond capacity"));
            }
            if self.cmt.dirty[si] {
                dirty[self.tpage_of(l as u64) as usize] += 1;
            } else if self.cmt.ppn[si] != self.fmap[l] {
                return Err(format!(
                    "clean CMT entry of lpn {l} says {} but its translation page says {}",
                    self.cmt.ppn[si], self.fmap[l]
                ));
            }
        }
        if let Some(t) = (0..self.n_tp as usize).find(|&t| dirty[t] != self.tp_dirty[t]) {
            return Err(format!(
                "translation page {t}: {} dirty cached entries counted, {} found",
                self.tp_dirty[t], dirty[t]
            ));
        }
        // Each page's dirty list holds exactly its dirty entries.
        for t in 0..self.n_tp as usize {
            let (mut s, mut n) = (self.dirty_head[t], 0u32);
            while s != NONE && n <= self.tp_dirty[t] {
                let si = s as usize;
                if !self.cmt.dirty[si] || self.tpage_of(self.cmt.lpn[si] as u64) as usize != t {
                    return Err(format!("translation page {t}: dirty list holds slot {s}, which is not one of its dirty entries"));
                }
                n += 1;
                s = self.dirty_next[si];
            }
            if n != self.tp_dirty[t] {
                return Err(format!(
                    "translation page {t}: dirty list has {n}+ slots, {} dirty entries",
                    self.tp_dirty[t]
                ));
            }
        }
        // Frontiers are open blocks of the right kind.
        for pl in 0..g.total_planes() as usize {
            for (b, trans) in [
                (self.host_open[pl], false),
                (self.gc_open[pl], false),
                (self.trans_open[pl], true),
            ] {
                if b != NONE
                    && (self.blocks.state(b as usize) != BlockState::Open
                        || self.is_trans[b as usize] != trans)
                {
                    return Err(format!(
                        "plane {pl}: frontier block {b} is not an open block of its kind"
                    ));
                }
            }
        }
        Ok(())
    }
    fn stats(&self) -> FtlStats {
        self.stats.clone()
    }
    fn notes(&self) -> Vec<(&'static str, u64)> {
        if self.threshold != self.threshold_given {
            vec![("dftl_gc_threshold_blocks_raised_to", self.threshold as u64)]
        } else {
            vec![]
        }
    }
    fn mapping_table_bytes(&self) -> u64 {
        self.n_tp as u64 * self.entry + self.cmt_bytes
    }
    #[inline]
    fn free_blocks(&self, plane: PlaneId) -> u32 {
        self.blocks.free_count(plane)
    }
}
