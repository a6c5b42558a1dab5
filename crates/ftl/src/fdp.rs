//! Flexible Data Placement on the page-mapping FTL (`ftl.fdp = true`; NVMe
//! TP4146, now the NVMe 2.0 base specification's "Flexible Data
//! Placement"): reclaim groups, reclaim unit handles and their reclaim
//! units, the placement identifier a write carries, and the FDP Statistics
//! log page's counters.
//!
//! FDP is a conventional namespace whose write frontiers are per handle, so
//! it is a mode of [`PageFtl`](crate::PageFtl), not an FTL of its own: the
//! page FTL keeps a host frontier per (handle, plane) and GC frontiers per
//! plane (one shared by every handle's data when the handles are initially
//! isolated, one per handle when they are persistently isolated), and this
//! module keeps what FDP adds: which handle each block and each logical
//! page belong to, the reclaim groups' plane pickers, the reclaim units in
//! progress, and the counters.
//!
//! Mapping onto the flash: reclaim group `g` is the dies of the `g`-th
//! equal run of the dies in `ftl.allocation`'s striping order (channel
//! first by default, so a group spans the channels). A reclaim unit is
//! `ftl.fdp_ru_blocks` erase blocks in each plane of its group: the handle's
//! frontier block in a plane, and the next ones it opens there, until the
//! RU's pages are written; the handle then starts a new RU. GC picks its
//! victim in a plane among every handle's blocks (greedy, as the
//! conventional FTL) and moves the valid pages by the isolation the handles
//! have (`ftl.fdp_isolation`).
//!
//! Placement identifiers (PIDs) are decoded as QEMU's FDP emulation does
//! (hw/nvme/ctrl.c, `nvme_parse_pid`: the reclaim group in the high RGIF
//! bits). A write without the directive goes to placement handle 0, in the
//! groups in turn (the spec leaves that group to the controller); a PID
//! whose group or handle does not exist fails with Invalid Field in
//! Command and is counted (QEMU's emulation instead writes such a command
//! through handle 0: ssdsim never places data where the host did not ask).

use crate::stripe::{striping_order, PlanePicker};
use serde::{Deserialize, Serialize};
use ssd_core::config::{FdpConfig, FdpIsolation, FtlConfig};
use ssd_core::ftl::ZoneError;
use ssd_core::{BlockId, Geometry, PlaneId};

/// The owner of a block written by GC under initially isolated handles:
/// every handle's data may share it.
pub const SHARED: u8 = u8::MAX;

/// The FDP Statistics log page's counters (in pages) and the per-handle
/// counters the report adds.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct FdpCounters {
    /// Pages the host wrote, by placement handle (HBMW by handle).
    pub host_pages: Vec<u64>,
    /// Pages programmed into the handle's reclaim units: its host writes,
    /// and GC's copies of its data under persistent isolation.
    pub media_pages: Vec<u64>,
    /// Valid pages of the handle's data that GC (or wear levelling) moved,
    /// by the handle that wrote them.
    pub moved_pages: Vec<u64>,
    /// Reclaim units the handle started, over every reclaim group.
    pub rus_started: Vec<u64>,
    /// Pages GC programmed into the shared GC reclaim units (initially
    /// isolated handles).
    pub shared_pages: u64,
    /// Blocks erased (MBE, in blocks).
    pub erases: u64,
    /// Writes whose placement identifier named no handle or group (failed,
    /// Invalid Field in Command).
    pub invalid_pid: u64,
}

impl FdpCounters {
    fn new(handles: usize) -> FdpCounters {
        FdpCounters {
            host_pages: vec![0; handles],
            media_pages: vec![0; handles],
            moved_pages: vec![0; handles],
            rus_started: vec![0; handles],
            ..FdpCounters::default()
        }
    }
    fn minus(&self, b: &FdpCounters) -> FdpCounters {
        let d = |x: &[u64], y: &[u64]| -> Vec<u64> {
            x.iter().zip(y).map(|(a, b)| a.saturating_sub(*b)).collect()
        };
        FdpCounters {
            host_pages: d(&self.host_pages, &b.host_pages),
            media_pages: d(&self.media_pages, &b.media_pages),
            moved_pages: d(&self.moved_pages, &b.moved_pages),
            rus_started: d(&self.rus_started, &b.rus_started),
            shared_pages: self.shared_pages - b.shared_pages,
            erases: self.erases - b.erases,
            invalid_pid: self.invalid_pid - b.invalid_pid,
        }
    }
}

/// What Flexible Data Placement adds to the page FTL (see the module docs).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Fdp {
    /// The FDP configuration.
    pub cfg: FdpConfig,
    planes: u32,
    pages_per_block: u32,
    page_size: u64,
    /// Reclaim group of each plane.
    group_of_plane: Vec<u16>,
    /// Each group's plane picker (groups > 1): a host page of a PID naming
    /// group `g` goes to a plane of `g` only.
    pub pickers: Vec<PlanePicker>,
    /// Per block, the handle whose data it holds ([`SHARED`]: GC's shared
    /// reclaim unit); meaningful while the block is written.
    owner: Vec<u8>,
    /// Per logical page, the handle of the write that wrote it last.
    lpn_handle: Vec<u8>,
    /// Pages of one reclaim unit.
    ru_pages: u64,
    /// Per (handle, group), pages left in the handle's current RU there.
    ru_left: Vec<u64>,
    /// The handle the write being planned goes through.
    pub cur_handle: u8,
    /// The host frontiers (a block a plane) of each handle but the one in
    /// the page FTL's `host_open` (`host_in`), whose slot here holds an
    /// empty placeholder: the FTL swaps a handle's in when a write of it
    /// comes, so its per-page path reads one vector as without FDP.
    pub host_open: Vec<Vec<u32>>,
    /// The handle whose host frontiers are in the page FTL.
    pub host_in: u8,
    /// Under persistent isolation, each handle's GC frontiers, swapped in
    /// the same way for a relocation (`gc_in`); empty otherwise.
    pub gc_open: Vec<Vec<u32>>,
    /// The handle whose GC frontiers are in the page FTL (persistent).
    pub gc_in: u8,
    /// The owner of the GC frontier a relocation writes to now.
    pub gc_owner: u8,
    /// Counters since the FTL was built, and at the measured phase's start.
    pub lifetime: FdpCounters,
    at_start: FdpCounters,
}

impl Fdp {
    /// FDP state for a page FTL of `logical` pages on `g` (`c.fdp` on and
    /// validated).
    pub fn new(c: &FtlConfig, g: &Geometry, logical: u64) -> Fdp {
        let f = c.fdp;
        let groups = f.groups.max(1);
        // Dies by first appearance in the striping order, cut into groups.
        let order = striping_order(g, c.allocation);
        let mut die_rank = vec![u32::MAX; g.total_dies() as usize];
        let mut next = 0;
        for &p in &order {
            let d = (p / g.planes) as usize;
            if die_rank[d] == u32::MAX {
                die_rank[d] = next;
                next += 1;
            }
        }
        let per_group = g.total_dies() / groups;
        let group_of_plane: Vec<u16> = (0..g.total_planes())
            .map(|p| (die_rank[(p / g.planes) as usize] / per_group) as u16)
            .collect();
        let pickers = if groups > 1 {
            (0..groups)
                .map(|rg| {
                    let mut pk = PlanePicker::new(g, c.allocation, c.plane_allocation);
                    pk.order
                        .retain(|&p| group_of_plane[p as usize] as u32 == rg);
                    pk
                })
                .collect()
        } else {
            Vec::new()
        };
        let planes_per_group = g.total_planes() / groups;
        Fdp {
            cfg: f,
            planes: g.total_planes(),
            pages_per_block: g.pages_per_block,
            page_size: g.page_size as u64,
            group_of_plane,
            pickers,
            owner: vec![0; g.total_blocks() as usize],
            lpn_handle: vec![0; logical as usize],
            ru_pages: f.ru_blocks as u64 * planes_per_group as u64 * g.pages_per_block as u64,
            ru_left: vec![0; (f.handles * groups) as usize],
            cur_handle: 0,
            host_open: (0..f.handles)
                .map(|h| {
                    if h == 0 {
                        Vec::new()
                    } else {
                        vec![u32::MAX; g.total_planes() as usize]
                    }
                })
                .collect(),
            host_in: 0,
            gc_open: match f.isolation {
                FdpIsolation::Initial => Vec::new(),
                FdpIsolation::Persistent => (0..f.handles)
                    .map(|h| {
                        if h == 0 {
                            Vec::new()
                        } else {
                            vec![u32::MAX; g.total_planes() as usize]
                        }
                    })
                    .collect(),
            },
            gc_in: 0,
            gc_owner: SHARED,
            lifetime: FdpCounters::new(f.handles as usize),
            at_start: FdpCounters::new(f.handles as usize),
        }
    }

    /// The frontier blocks of the handles not swapped in (for the checks
    /// that must see every open frontier).
    pub fn stored_frontiers(&self) -> impl Iterator<Item = u32> + '_ {
        self.host_open
            .iter()
            .chain(&self.gc_open)
            .flatten()
            .copied()
    }

    /// The handle block `b` holds the data of ([`SHARED`] for GC's shared
    /// reclaim units).
    #[inline]
    pub fn owner(&self, b: BlockId) -> u8 {
        self.owner[b.0 as usize]
    }

    /// The handle of the write that last wrote logical page `l`.
    #[inline]
    pub fn handle_of(&self, l: u64) -> u8 {
        self.lpn_handle[l as usize]
    }

    /// A frontier opened block `b`: it holds the data of the host write's
    /// handle (`host`) or of the relocation's GC frontier owner.
    #[inline]
    pub fn opened(&mut self, b: BlockId, host: bool) {
        self.owner[b.0 as usize] = if host { self.cur_handle } else { self.gc_owner };
    }

    /// The owner of the GC frontier a victim's data goes to: the victim's
    /// handle under persistent isolation (a shared GC block never exists
    /// then), the shared one otherwise.
    #[inline]
    pub fn gc_owner_of(&self, victim: BlockId) -> u8 {
        match self.cfg.isolation {
            FdpIsolation::Initial => SHARED,
            FdpIsolation::Persistent => self.owner(victim),
        }
    }

    /// Decode a write's placement identifier: `Ok(Some(group))` and the
    /// handle in [`Fdp::cur_handle`], `Ok(None)` without a directive
    /// (handle 0, the device's choice of group), or the status a PID naming
    /// no group or handle fails with (counted).
    pub fn place(&mut self, pid: Option<u16>) -> Result<Option<u32>, ZoneError> {
        match pid {
            None => {
                self.cur_handle = 0;
                Ok(None)
            }
            Some(p) => match self.cfg.parse_pid(p) {
                Some((rg, ph)) => {
                    self.cur_handle = ph as u8;
                    Ok(Some(rg))
                }
                None => {
                    self.lifetime.invalid_pid += 1;
                    Err(ZoneError::InvalidField)
                }
            },
        }
    }

    /// A host page of the current handle, logical page `l`, went to `plane`:
    /// tag the page and count it against the handle's RU in the plane's group.
    #[inline]
    pub fn host_page(&mut self, l: u64, plane: PlaneId) {
        let h = self.cur_handle as usize;
        self.lpn_handle[l as usize] = h as u8;
        self.lifetime.host_pages[h] += 1;
        self.lifetime.media_pages[h] += 1;
        let rg = self.group_of_plane[plane.0 as usize] as usize;
        let k = h * self.cfg.groups as usize + rg;
        if self.ru_left[k] == 0 {
            self.ru_left[k] = self.ru_pages;
            self.lifetime.rus_started[h] += 1;
        }
        self.ru_left[k] -= 1;
    }

    /// GC moved logical page `l` into the current GC frontier.
    #[inline]
    pub fn moved(&mut self, l: u64) {
        let h = self.lpn_handle[l as usize] as usize;
        self.lifetime.moved_pages[h] += 1;
        if self.gc_owner == SHARED {
            self.lifetime.shared_pages += 1;
        } else {
            self.lifetime.media_pages[self.gc_owner as usize] += 1;
        }
    }

    /// A block was erased.
    #[inline]
    pub fn erased(&mut self) {
        self.lifetime.erases += 1;
    }

    /// The measured phase starts here.
    pub fn measure_start(&mut self) {
        self.at_start = self.lifetime.clone();
    }

    /// The measured phase's counters.
    pub fn phase(&self) -> FdpCounters {
        self.lifetime.minus(&self.at_start)
    }

    /// Total planes of the drive.
    pub fn planes(&self) -> u32 {
        self.planes
    }

    /// The `fdp` report section: the FDP configuration as the FDP
    /// Configurations log page describes it, the FDP Statistics log page's
    /// counters over the measured phase (HBMW, MBMW, MBE, in bytes), the
    /// events, and per handle the host and media bytes, the bytes of its
    /// data GC moved, and the reclaim units it started.
    pub fn report(&self) -> serde_json::Value {
        let c = self.phase();
        let ps = self.page_size;
        let hbmw: u64 = c.host_pages.iter().sum::<u64>() * ps;
        let moved: u64 = c.moved_pages.iter().sum::<u64>();
        let mbmw = hbmw + moved * ps;
        let handles: Vec<serde_json::Value> = (0..self.cfg.handles as usize)
            .map(|h| {
                serde_json::json!({
                    "handle": h,
                    "host_bytes": c.host_pages[h] * ps,
                    "media_bytes": c.media_pages[h] * ps,
                    "gc_moved_bytes": c.moved_pages[h] * ps,
                    "reclaim_units_started": c.rus_started[h],
                })
            })
            .collect();
        let groups = self.cfg.groups.max(1);
        serde_json::json!({
            "reclaim_groups": groups,
            "reclaim_unit_handles": self.cfg.handles,
            "ruh_type": match self.cfg.isolation {
                FdpIsolation::Initial => "initially_isolated",
                FdpIsolation::Persistent => "persistently_isolated",
            },
            "reclaim_unit_bytes": self.ru_pages * ps,
            "rgif": self.cfg.rgif(),
            "placement_ids": self.cfg.pid_list(),
            "hbmw": hbmw,
            "mbmw": mbmw,
            "mbe": c.erases * self.pages_per_block as u64 * ps,
            "waf": if hbmw > 0 { serde_json::json!(mbmw as f64 / hbmw as f64) } else { serde_json::Value::Null },
            "shared_gc_bytes": c.shared_pages * ps,
            "events": {
                "invalid_placement_identifier": c.invalid_pid,
            },
            "handles": handles,
        })
    }
}
