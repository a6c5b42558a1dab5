//! `zns`: a zoned namespace (NVMe Zoned Namespace Command Set 1.1).
//!
//! The logical space is zones of one size (a power of two of pages), each
//! with a writable capacity ([`ZnsConfig`] says how zones lie on the flash:
//! `zone_blocks` erase blocks in each of `zone_planes` planes, the pages
//! striped over the planes page by page). The host writes a zone only at
//! its write pointer, with writes or zone appends; a reset erases the
//! zone's written blocks and starts it again. Nothing is ever copied: the
//! sequential zones have no GC, every page programmed there is a host page,
//! and their write amplification is 1 by construction (the host's own
//! cleaning, an F2FS on ZNS, is the host's writes).
//!
//! Conventional zones (`ftl.conventional_zones`, the first zones; Linux's
//! `BLK_ZONE_COND_NOT_WP`, `null_blk`'s `zone_nr_conv`) take any write at
//! any time: they are a [`PageFtl`] over the first zone slots of every
//! plane (a geometry of those blocks, whose pages map one to one onto the
//! drive's), with its own over-provisioning (`ftl.op`) and GC.
//!
//! The zone state machine and its resource limits follow ZNS 1.1 §2.1.1 as
//! Linux's `null_blk` implements them (drivers/block/null_blk/zoned.c):
//! - a write or append at the write pointer implicitly opens an empty or
//!   closed zone (`null_zone_write`), which needs an active resource for an
//!   empty zone (`null_check_active`) and an open resource; at the open
//!   limit the device closes an implicitly opened zone, round robin from
//!   the last one it closed, if the active limit allows
//!   (`null_check_open`, `null_close_imp_open_zone`); a zone written to its
//!   capacity is full and gives its resources back;
//! - open (`null_open_zone`): empty, implicitly open or closed zones become
//!   explicitly open (an open zone is not an error; a full one is);
//! - close (`null_close_zone`): an open zone becomes closed, or empty if
//!   nothing was written (a closed zone is not an error);
//! - finish (`null_finish_zone`): full, from any state but read-only and
//!   offline (empty and closed zones need the resources an open would);
//! - reset (`null_reset_zone`): empty, the write pointer at the start;
//! - read-only and offline zones (the device's conditions,
//!   `null_set_zone_cond`) refuse every write and action.
//!
//! Each refusal is the NVMe status ZNS defines ([`ZoneError`]), counted in
//! the report's `zns` section by status; the engine completes the command
//! as failed. Where `null_blk` returns a bare I/O error, the status is the
//! spec's: a write to a full zone is Zone Is Full, one not at the write
//! pointer Zone Invalid Write, one past the capacity Zone Boundary Error,
//! an action the state does not allow Invalid Zone State Transition.
//!
//! Two choices the spec leaves to the drive: a reset waits for its erases
//! (its latency is theirs; blocks never written since the last reset are
//! not erased), and finish programs nothing (the unwritten rest of the
//! zone stays erased until the reset; a drive that pads would program it).
//! Reads of pages not written since the zone's reset plan no flash read
//! (they return the deallocated pattern). A discard is refused (Invalid
//! Command Opcode): zoned namespaces reclaim by reset.

use crate::page::PageFtl;
use crate::stripe::striping_order;
use serde::{Deserialize, Serialize};
use ssd_core::config::{ConfigError, FtlConfig, FtlSection, P2lStore, ZnsConfig};
use ssd_core::ftl::{
    Ftl, FtlCtx, FtlStats, Purpose, ZoneAction, ZoneDescriptor, ZoneError, ZoneLayout, ZoneState,
    NO_PPN,
};
use ssd_core::{BlockId, DriveShape, Geometry, Lpn, PlaneId, Ppn};

/// The conventional zones: a page-mapped FTL over the first
/// `conventional_slots` zone slots of every plane (a geometry of that many
/// blocks a plane, whose pages map one to one onto the drive's), addressed
/// by the conventional zones' logical pages.
#[derive(Clone, Debug, Serialize, Deserialize)]
struct Conventional {
    ftl: PageFtl,
    sub: Geometry,
}

/// One zone: its state and write pointer (pages written since its reset).
#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize)]
struct Zone {
    state: ZoneState,
    /// Pages written (the write pointer, from the zone's start).
    wp: u64,
}

/// The counters of the report's `zns` section.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
struct ZnsStats {
    writes: u64,
    appends: u64,
    pages_written: u64,
    resets: u64,
    reset_erases: u64,
    finishes: u64,
    /// Pages a finish left unwritten (capacity less the write pointer).
    finish_unwritten_pages: u64,
    explicit_opens: u64,
    implicit_opens: u64,
    closes: u64,
    /// Implicitly opened zones the device closed to open another.
    implicit_closes: u64,
    max_open: u32,
    max_active: u32,
    errors: [u64; ZoneError::COUNT],
}

/// The zoned FTL.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ZnsFtl {
    g: Geometry,
    layout: ZoneLayout,
    cfg_open: u32,
    cfg_active: u32,
    /// Planes in the order of `ftl.allocation`; group `j` is
    /// `planes[j * layout.planes ..][.. layout.planes]`.
    planes: Vec<u32>,
    groups: u64,
    zones: Vec<Zone>,
    nr_imp_open: u32,
    nr_exp_open: u32,
    nr_closed: u32,
    /// Where the search for an implicitly open zone to close starts.
    imp_close_next: usize,
    stats: ZnsStats,
    conv: Option<Conventional>,
}

impl ZnsFtl {
    /// Zones over the drive of shape `d`, all empty.
    pub fn new(c: &FtlConfig, d: &DriveShape) -> Result<ZnsFtl, ConfigError> {
        let FtlSection::Zns(z) = c.section() else {
            unreachable!("ZnsFtl::new is built for ftl.kind = \"zns\"");
        };
        let g = d.geometry;
        z.check(&g)?;
        let layout = c.zone_layout(&g).expect("zoned");
        let mut f = ZnsFtl::with(layout, z, &g, striping_order(&g, c.allocation));
        if layout.conventional > 0 {
            let sub = Geometry {
                blocks_per_plane: (layout.conventional_slots * layout.blocks as u64) as u32,
                ..g
            };
            let shape = DriveShape {
                geometry: sub,
                logical_pages: layout.conventional * layout.size,
            };
            // Its P2L stays in memory: `ftl.p2l_store` is the page FTL's.
            let page = FtlConfig {
                p2l_store: P2lStore::Memory,
                ..c.clone()
            };
            f.conv = Some(Conventional {
                ftl: PageFtl::new(&page, &shape),
                sub,
            });
        }
        Ok(f)
    }

    fn with(layout: ZoneLayout, z: ZnsConfig, g: &Geometry, planes: Vec<u32>) -> ZnsFtl {
        let mut zones = vec![Zone::default(); layout.zones as usize];
        for zone in &mut zones[..layout.conventional as usize] {
            zone.state = ZoneState::NotWritePointer;
        }
        ZnsFtl {
            g: *g,
            layout,
            cfg_open: z.max_open_zones,
            cfg_active: z.max_active_zones,
            groups: (g.total_planes() / layout.planes) as u64,
            planes,
            zones,
            nr_imp_open: 0,
            nr_exp_open: 0,
            nr_closed: 0,
            imp_close_next: 0,
            stats: ZnsStats::default(),
            conv: None,
        }
    }

    /// The zones' layout.
    pub fn layout(&self) -> ZoneLayout {
        self.layout
    }

    /// The physical page of a sequential zone's `k`-th page: plane
    /// `k mod planes` of the zone's group, then the zone's blocks in that
    /// plane in order (after the conventional zones' slots).
    fn ppn(&self, zone: usize, k: u64) -> Ppn {
        let l = &self.layout;
        let pz = zone as u64 - l.conventional + l.conventional_slots;
        let group = pz % self.groups;
        let slot = pz / self.groups;
        let i = k % l.planes as u64;
        let run = k / l.planes as u64;
        let ppb = self.g.pages_per_block as u64;
        let plane = self.planes[(group * l.planes as u64 + i) as usize];
        let block = self.g.first_block_of_plane(PlaneId(plane)).0 as u64
            + slot * l.blocks as u64
            + run / ppb;
        Ppn(self.g.first_page(BlockId(block as u32)).0 + (run % ppb) as u32)
    }

    /// The zone `lpn` starts, if it starts one.
    fn zone_at(&self, lpn: Lpn) -> Result<usize, ZoneError> {
        let z = lpn.0 / self.layout.size;
        if !lpn.0.is_multiple_of(self.layout.size) || z >= self.layout.zones {
            return Err(ZoneError::InvalidField);
        }
        Ok(z as usize)
    }

    fn fail(&mut self, cx: &mut FtlCtx, e: ZoneError) -> ZoneError {
        self.stats.errors[e.index()] += 1;
        cx.status = Some(e);
        e
    }

    fn note_levels(&mut self) {
        let open = self.nr_imp_open + self.nr_exp_open;
        self.stats.max_open = self.stats.max_open.max(open);
        self.stats.max_active = self.stats.max_active.max(open + self.nr_closed);
    }

    /// `null_check_active`: room for one more active zone.
    fn check_active(&self) -> Result<(), ZoneError> {
        if self.cfg_active == 0
            || self.nr_exp_open + self.nr_imp_open + self.nr_closed < self.cfg_active
        {
            Ok(())
        } else {
            Err(ZoneError::TooManyActive)
        }
    }

    /// `null_check_open`: room for one more open zone, closing an
    /// implicitly opened one if the active limit allows.
    fn check_open(&mut self) -> Result<(), ZoneError> {
        if self.cfg_open == 0 || self.nr_exp_open + self.nr_imp_open < self.cfg_open {
            return Ok(());
        }
        if self.nr_imp_open > 0 && self.check_active().is_ok() {
            self.close_imp_open_zone();
            return Ok(());
        }
        Err(ZoneError::TooManyOpen)
    }

    /// `null_check_zone_resources` of an empty or closed zone.
    fn check_resources(&mut self, state: ZoneState) -> Result<(), ZoneError> {
        if state == ZoneState::Empty {
            self.check_active()?;
        }
        self.check_open()
    }

    /// `null_close_imp_open_zone`: the next implicitly open zone from the
    /// last one closed becomes closed (empty if unwritten).
    fn close_imp_open_zone(&mut self) {
        let n = self.zones.len();
        for i in 0..n {
            let z = (self.imp_close_next + i) % n;
            if self.zones[z].state == ZoneState::ImplicitOpen {
                self.nr_imp_open -= 1;
                self.zones[z].state = if self.zones[z].wp == 0 {
                    ZoneState::Empty
                } else {
                    self.nr_closed += 1;
                    ZoneState::Closed
                };
                self.stats.implicit_closes += 1;
                self.imp_close_next = (z + 1) % n;
                return;
            }
        }
    }

    /// Write `n` pages at `zone`'s write pointer, which must be at `off`
    /// (`null_zone_write`). Plans the programs.
    fn write_at(
        &mut self,
        zone: usize,
        off: u64,
        n: u32,
        cx: &mut FtlCtx,
    ) -> Result<(), ZoneError> {
        let z = self.zones[zone];
        match z.state {
            ZoneState::ReadOnly => return Err(ZoneError::ReadOnly),
            ZoneState::Offline => return Err(ZoneError::Offline),
            ZoneState::Full => return Err(ZoneError::Full),
            // A conventional zone takes no zone append (`null_zone_write`).
            ZoneState::NotWritePointer => return Err(ZoneError::InvalidField),
            _ => {}
        }
        if off != z.wp {
            return Err(ZoneError::InvalidWrite);
        }
        if z.wp + n as u64 > self.layout.capacity {
            return Err(ZoneError::Boundary);
        }
        if matches!(z.state, ZoneState::Empty | ZoneState::Closed) {
            self.check_resources(z.state)?;
            if z.state == ZoneState::Closed {
                self.nr_closed -= 1;
            }
            self.nr_imp_open += 1;
            self.zones[zone].state = ZoneState::ImplicitOpen;
            self.stats.implicit_opens += 1;
            self.note_levels();
        }
        let start = zone as u64 * self.layout.size;
        for k in z.wp..z.wp + n as u64 {
            cx.work.map_lookups += 1;
            let p = self.ppn(zone, k);
            cx.program(0, 0, p, Purpose::Host, start + k, None);
        }
        self.stats.pages_written += n as u64;
        let zr = &mut self.zones[zone];
        zr.wp += n as u64;
        if zr.wp == self.layout.capacity {
            match zr.state {
                ZoneState::ExplicitOpen => self.nr_exp_open -= 1,
                ZoneState::ImplicitOpen => self.nr_imp_open -= 1,
                _ => {}
            }
            zr.state = ZoneState::Full;
        }
        Ok(())
    }

    fn open(&mut self, zone: usize) -> Result<(), ZoneError> {
        let state = self.zones[zone].state;
        match state {
            ZoneState::ExplicitOpen => return Ok(()),
            ZoneState::Empty | ZoneState::Closed => {
                self.check_resources(state)?;
                if state == ZoneState::Closed {
                    self.nr_closed -= 1;
                }
            }
            ZoneState::ImplicitOpen => self.nr_imp_open -= 1,
            _ => return Err(ZoneError::InvalidTransition),
        }
        self.nr_exp_open += 1;
        self.zones[zone].state = ZoneState::ExplicitOpen;
        self.stats.explicit_opens += 1;
        self.note_levels();
        Ok(())
    }

    fn close(&mut self, zone: usize) -> Result<(), ZoneError> {
        match self.zones[zone].state {
            ZoneState::Closed => return Ok(()),
            ZoneState::ImplicitOpen => self.nr_imp_open -= 1,
            ZoneState::ExplicitOpen => self.nr_exp_open -= 1,
            _ => return Err(ZoneError::InvalidTransition),
        }
        let z = &mut self.zones[zone];
        z.state = if z.wp == 0 {
            ZoneState::Empty
        } else {
            self.nr_closed += 1;
            ZoneState::Closed
        };
        self.stats.closes += 1;
        Ok(())
    }

    fn finish(&mut self, zone: usize) -> Result<(), ZoneError> {
        let state = self.zones[zone].state;
        match state {
            ZoneState::Full => return Ok(()),
            ZoneState::Empty | ZoneState::Closed => {
                self.check_resources(state)?;
                if state == ZoneState::Closed {
                    self.nr_closed -= 1;
                }
            }
            ZoneState::ImplicitOpen => self.nr_imp_open -= 1,
            ZoneState::ExplicitOpen => self.nr_exp_open -= 1,
            _ => return Err(ZoneError::InvalidTransition),
        }
        let z = &mut self.zones[zone];
        self.stats.finishes += 1;
        self.stats.finish_unwritten_pages += self.layout.capacity - z.wp;
        z.state = ZoneState::Full;
        Ok(())
    }

    /// Reset: the zone's written blocks erased (each plane's blocks that
    /// hold a page below the write pointer), the zone empty.
    fn reset(&mut self, zone: usize, cx: &mut FtlCtx) -> Result<(), ZoneError> {
        match self.zones[zone].state {
            ZoneState::ImplicitOpen => self.nr_imp_open -= 1,
            ZoneState::ExplicitOpen => self.nr_exp_open -= 1,
            ZoneState::Closed => self.nr_closed -= 1,
            ZoneState::Empty | ZoneState::Full => {}
            _ => return Err(ZoneError::InvalidTransition),
        }
        let wp = self.zones[zone].wp;
        let (planes, ppb) = (self.layout.planes as u64, self.g.pages_per_block as u64);
        for j in 0..self.layout.blocks as u64 {
            for i in 0..planes {
                // The block's first page in zone order is (j * ppb) * planes + i.
                let k = j * ppb * planes + i;
                if k < wp {
                    let first = self.ppn(zone, k);
                    cx.erase(0, 0, first, Purpose::Host);
                    self.stats.reset_erases += 1;
                }
            }
        }
        self.zones[zone] = Zone::default();
        self.stats.resets += 1;
        Ok(())
    }

    /// Whether `lpn` lies in the conventional zones.
    fn in_conventional(&self, lpn: u64) -> bool {
        lpn < self.layout.conventional * self.layout.size
    }

    /// The conventional FTL's planned operations from `from` on, moved
    /// from its geometry to the drive's.
    fn translate(&self, cx: &mut FtlCtx, from: usize) {
        let sub = self.conv.as_ref().expect("conventional zones").sub;
        let g = self.g;
        for op in &mut cx.plan.ops[from..] {
            op.ppn = g.compose(sub.decompose(op.ppn));
            if op.src != NO_PPN {
                op.src = g.compose(sub.decompose(Ppn(op.src))).0;
            }
        }
    }

    /// Run `f` on the conventional FTL and move what it planned onto the
    /// drive's pages.
    fn on_conventional<R>(
        &mut self,
        cx: &mut FtlCtx,
        f: impl FnOnce(&mut PageFtl, &mut FtlCtx) -> R,
    ) -> R {
        let from = cx.plan.ops.len();
        let conv = self.conv.as_mut().expect("conventional zones");
        let r = f(&mut conv.ftl, cx);
        self.translate(cx, from);
        r
    }

    /// The device sets `zone` read-only or offline, as a drive does when its
    /// media fails (`null_set_zone_cond`): an active zone is finished first
    /// to give its resources back. Setting a zone to the condition it is in
    /// restores it, empty.
    pub fn set_condition(&mut self, zone: usize, cond: ZoneState) {
        assert!(
            matches!(cond, ZoneState::ReadOnly | ZoneState::Offline),
            "a zone's condition is read-only or offline"
        );
        let state = self.zones[zone].state;
        if state == cond {
            self.zones[zone] = Zone::default();
            return;
        }
        if !matches!(state, ZoneState::ReadOnly | ZoneState::Offline) {
            match state {
                ZoneState::ImplicitOpen => self.nr_imp_open -= 1,
                ZoneState::ExplicitOpen => self.nr_exp_open -= 1,
                ZoneState::Closed => self.nr_closed -= 1,
                _ => {}
            }
        }
        self.zones[zone].state = cond;
    }

    /// A zone's state and write pointer (pages from its start).
    pub fn zone(&self, zone: usize) -> (ZoneState, u64) {
        (self.zones[zone].state, self.zones[zone].wp)
    }
}

impl Ftl for ZnsFtl {
    fn name(&self) -> &'static str {
        "zns"
    }
    fn logical_pages(&self) -> u64 {
        self.layout.zones * self.layout.size
    }
    fn read(&mut self, lpn: Lpn, n: u32, cx: &mut FtlCtx) {
        if self.in_conventional(lpn.0) {
            let end = (lpn.0 + n as u64).min(self.layout.conventional * self.layout.size);
            let k = (end - lpn.0) as u32;
            self.on_conventional(cx, |f, cx| f.read(lpn, k, cx));
            if k < n {
                self.read(Lpn(end), n - k, cx);
            }
            return;
        }
        for l in lpn.0..lpn.0 + n as u64 {
            cx.work.map_lookups += 1;
            if let Some(p) = self.lookup(Lpn(l)) {
                cx.read(0, 0, p, Purpose::Host, l);
            }
        }
    }
    fn write(&mut self, lpn: Lpn, n: u32, cx: &mut FtlCtx) {
        if self.in_conventional(lpn.0) {
            // Randomly writable; not across into the sequential zones.
            if self.in_conventional(lpn.0 + (n as u64).max(1) - 1) {
                self.on_conventional(cx, |f, cx| f.write(lpn, n, cx));
            } else {
                self.fail(cx, ZoneError::Boundary);
            }
            return;
        }
        let zone = (lpn.0 / self.layout.size) as usize;
        let off = lpn.0 % self.layout.size;
        self.stats.writes += 1;
        if let Err(e) = self.write_at(zone, off, n, cx) {
            self.fail(cx, e);
        }
    }
    fn trim(&mut self, lpn: Lpn, n: u32, cx: &mut FtlCtx) {
        // Conventional zones discard as a conventional drive does.
        if self.in_conventional(lpn.0) && self.in_conventional(lpn.0 + (n as u64).max(1) - 1) {
            self.on_conventional(cx, |f, cx| f.trim(lpn, n, cx));
        } else {
            self.fail(cx, ZoneError::InvalidOpcode);
        }
    }
    fn background(&mut self, cx: &mut FtlCtx) -> bool {
        if self.conv.is_none() {
            return false;
        }
        self.on_conventional(cx, |f, cx| f.background(cx))
    }
    fn free_blocks(&self, plane: PlaneId) -> u32 {
        // Only the conventional zones have a free pool (and GC).
        self.conv
            .as_ref()
            .map_or(u32::MAX, |c| c.ftl.free_blocks(plane))
    }
    fn notes(&self) -> Vec<(&'static str, u64)> {
        self.conv.as_ref().map_or(Vec::new(), |c| c.ftl.notes())
    }
    fn lookup(&self, lpn: Lpn) -> Option<Ppn> {
        if self.in_conventional(lpn.0) {
            let c = self.conv.as_ref()?;
            return c
                .ftl
                .lookup(lpn)
                .map(|p| self.g.compose(c.sub.decompose(p)));
        }
        let zone = (lpn.0 / self.layout.size) as usize;
        let k = lpn.0 % self.layout.size;
        let z = self.zones.get(zone)?;
        (k < z.wp && z.state != ZoneState::Offline).then(|| self.ppn(zone, k))
    }
    fn check_invariants(&self) -> Result<(), String> {
        if let Some(c) = &self.conv {
            c.ftl
                .check_invariants()
                .map_err(|e| format!("conventional zones: {e}"))?;
        }
        let count =
            |f: &dyn Fn(ZoneState) -> bool| self.zones.iter().filter(|z| f(z.state)).count() as u32;
        let imp = count(&|s| s == ZoneState::ImplicitOpen);
        let exp = count(&|s| s == ZoneState::ExplicitOpen);
        let closed = count(&|s| s == ZoneState::Closed);
        if (imp, exp, closed) != (self.nr_imp_open, self.nr_exp_open, self.nr_closed) {
            return Err(format!(
                "zone counts (implicit open, explicit open, closed) are {:?}, the states say {:?}",
                (self.nr_imp_open, self.nr_exp_open, self.nr_closed),
                (imp, exp, closed)
            ));
        }
        if self.cfg_open > 0 && imp + exp > self.cfg_open {
            return Err(format!(
                "{} open zones, the limit is {}",
                imp + exp,
                self.cfg_open
            ));
        }
        if self.cfg_active > 0 && imp + exp + closed > self.cfg_active {
            return Err(format!(
                "{} active zones, the limit is {}",
                imp + exp + closed,
                self.cfg_active
            ));
        }
        for (i, z) in self.zones.iter().enumerate() {
            if z.wp > self.layout.capacity {
                return Err(format!(
                    "zone {i}: write pointer {} past its capacity",
                    z.wp
                ));
            }
            if z.state == ZoneState::Empty && z.wp != 0 {
                return Err(format!("zone {i}: empty with {} pages written", z.wp));
            }
            if z.state == ZoneState::Closed && z.wp == 0 {
                return Err(format!("zone {i}: closed with nothing written"));
            }
            if z.wp == self.layout.capacity
                && !matches!(
                    z.state,
                    ZoneState::Full | ZoneState::ReadOnly | ZoneState::Offline
                )
            {
                return Err(format!("zone {i}: written to capacity, {:?}", z.state));
            }
        }
        Ok(())
    }
    fn stats(&self) -> FtlStats {
        // The conventional zones' GC.
        self.conv
            .as_ref()
            .map_or(FtlStats::default(), |c| c.ftl.stats())
    }
    fn mapping_table_bytes(&self) -> u64 {
        // A zone's descriptor (state, write pointer, capacity): 16 bytes;
        // and the conventional zones' page map.
        self.zones.len() as u64 * 16
            + self
                .conv
                .as_ref()
                .map_or(0, |c| c.ftl.mapping_table_bytes())
    }
    fn zone_pages(&self) -> Option<u64> {
        Some(self.layout.size)
    }
    fn zone_append(&mut self, zone: Lpn, n: u32, cx: &mut FtlCtx) -> Result<Lpn, ZoneError> {
        self.stats.appends += 1;
        let z = match self.zone_at(zone) {
            Ok(z) => z,
            Err(e) => return Err(self.fail(cx, e)),
        };
        let wp = self.zones[z].wp;
        match self.write_at(z, wp, n, cx) {
            Ok(()) => Ok(Lpn(zone.0 + wp)),
            Err(e) => Err(self.fail(cx, e)),
        }
    }
    fn zone_mgmt(
        &mut self,
        action: ZoneAction,
        zone: Lpn,
        cx: &mut FtlCtx,
    ) -> Result<(), ZoneError> {
        let r = self.zone_at(zone).and_then(|z| {
            match self.zones[z].state {
                ZoneState::ReadOnly | ZoneState::Offline => {
                    return Err(ZoneError::InvalidTransition)
                }
                // A conventional zone has no state to change.
                ZoneState::NotWritePointer => return Err(ZoneError::InvalidField),
                _ => {}
            }
            match action {
                ZoneAction::Open => self.open(z),
                ZoneAction::Close => self.close(z),
                ZoneAction::Finish => self.finish(z),
                ZoneAction::Reset => self.reset(z, cx),
            }
        });
        r.map_err(|e| self.fail(cx, e))
    }
    fn report_zones(&self) -> Vec<ZoneDescriptor> {
        self.zones
            .iter()
            .enumerate()
            .map(|(i, z)| {
                let start = i as u64 * self.layout.size;
                let conventional = z.state == ZoneState::NotWritePointer;
                ZoneDescriptor {
                    start,
                    // A conventional zone is writable to its size.
                    capacity: if conventional {
                        self.layout.size
                    } else {
                        self.layout.capacity
                    },
                    wp: start + z.wp,
                    state: z.state,
                }
            })
            .collect()
    }
    fn report_section(&self) -> Option<(&'static str, serde_json::Value)> {
        let s = &self.stats;
        let mut states = serde_json::Map::new();
        for st in ZoneState::ALL {
            let n = self.zones.iter().filter(|z| z.state == st).count();
            states.insert(st.name().to_string(), n.into());
        }
        let mut errors = serde_json::Map::new();
        for e in ZoneError::ALL {
            errors.insert(e.name().to_string(), s.errors[e.index()].into());
        }
        let page = self.g.page_size as u64;
        Some((
            "zns",
            serde_json::json!({
                "zones": self.layout.zones,
                "zone_size_bytes": self.layout.size * page,
                "zone_capacity_bytes": self.layout.capacity * page,
                "zone_planes": self.layout.planes,
                "zone_blocks": self.layout.blocks,
                "max_open_zones": self.cfg_open,
                "max_active_zones": self.cfg_active,
                "conventional_zones": self.layout.conventional,
                "conventional_slots": self.layout.conventional_slots,
                "write_commands": s.writes,
                "append_commands": s.appends,
                "pages_written": s.pages_written,
                "resets": s.resets,
                "reset_erases": s.reset_erases,
                "finishes": s.finishes,
                "finish_unwritten_pages": s.finish_unwritten_pages,
                "explicit_opens": s.explicit_opens,
                "implicit_opens": s.implicit_opens,
                "closes": s.closes,
                "implicit_closes": s.implicit_closes,
                "max_open": s.max_open,
                "max_active": s.max_active,
                "zones_by_state": states,
                "errors": errors,
            }),
        ))
    }
}

#[cfg(test)]
mod tests;
