//! `[ftl]`: the FTL's section: which FTL, its over-provisioning, GC,
//! allocation and wear-levelling knobs, and the capacity each leaves.

use crate::addr::Geometry;
use crate::error::{invalid, ConfigError};
use crate::units::{Dur, Size};
use serde::{Deserialize, Serialize};

/// GC victim selection policy.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum GcPolicy {
    /// The full block with the fewest valid pages (the default).
    Greedy,
    /// The full block opened first (first in, first out).
    Fifo,
    /// A uniformly random full block.
    Random,
    /// Cost-benefit (Rosenblum & Ousterhout): age x (1 - u) / 2u over full blocks, with age the
    /// time since the block's last invalidation.
    CostBenefit,
    /// Greedy over a random window of this fraction of the candidates (d-choices).
    Windowed(f64),
}

impl GcPolicy {
    /// Parse `greedy`, `fifo`, `random`, `cost-benefit` (or `cb`), `windowed:F` with F in (0,
    /// 1]; an error names the accepted forms.
    pub fn parse(s: &str) -> Result<GcPolicy, String> {
        let s = s.trim();
        Ok(match s {
            "greedy" => GcPolicy::Greedy,
            "fifo" => GcPolicy::Fifo,
            "random" => GcPolicy::Random,
            "cost-benefit" | "cb" => GcPolicy::CostBenefit,
            _ => {
                if let Some(f) = s
                    .strip_prefix("windowed:")
                    .or_else(|| s.strip_prefix("window:"))
                {
                    let f: f64 = f
                        .parse()
                        .map_err(|_| format!("bad window fraction in {s:?}"))?;
                    if !(f > 0.0 && f <= 1.0) {
                        return Err(format!("window fraction must be in (0, 1], got {f}"));
                    }
                    GcPolicy::Windowed(f)
                } else {
                    return Err(format!(
                        "unknown GC policy {s:?} (greedy, fifo, random, cost-benefit, windowed:F)"
                    ));
                }
            }
        })
    }
}

/// Page allocation order of the page-mapping FTL.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Allocation {
    /// Stripe consecutive writes channel first, then way, die, plane.
    Cwdp,
    /// Stripe plane first, then die, way, channel.
    Pdwc,
    /// Stripe way first, then channel, die, plane.
    Wcdp,
    /// Send each write to the die with the fewest queued operations.
    LeastBusy,
}

/// Whether a host page's plane follows the order writes arrive in or its
/// logical address (`ftl.plane_allocation`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PlaneAllocation {
    /// Consecutive writes go to consecutive planes of the striping order,
    /// whatever their addresses.
    #[default]
    Dynamic,
    /// Logical page `l` goes to plane `order[l mod planes]` of the striping
    /// order (MQSim's `Plane_Allocation_Scheme`: CWDP puts `l` on channel
    /// `l mod C`, way `(l / C) mod W`, ...), whatever order writes arrive in.
    Static,
}

impl PlaneAllocation {
    /// The default (what `skip_serializing_if` leaves out of a report).
    pub fn is_dynamic(&self) -> bool {
        *self == PlaneAllocation::Dynamic
    }
}

/// The FTL (`[ftl]`): which one, over-provisioning, GC, allocation, wear levelling and DFTL's
/// cache.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FtlConfig {
    /// FTL name: page (more come with the FTL zoo).
    pub kind: String,
    /// Over-provisioning: (physical - logical) / logical.
    pub op: f64,
    /// GC victim selection (default greedy).
    pub gc_policy: GcPolicy,
    /// The hard threshold: a host page that needs a new frontier block in a
    /// plane with no more free blocks than this waits for foreground GC,
    /// which collects until more are free (in both `gc_mode`s).
    pub gc_threshold_blocks: u32,
    /// How GC is scheduled against host writes: see [`GcMode`]. Default
    /// (none given): `paced` for page and DFTL, `blocking` for the
    /// block-mapped FTLs ([`FtlConfig::gc_mode`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gc_mode: Option<GcMode>,
    /// `gc_mode = "paced"`: the soft threshold, in blocks of free space per
    /// plane (free blocks plus the room left in the plane's write
    /// frontiers). Each host page placed in a plane with less free space
    /// than this collects one victim, in the background. Default
    /// `gc_threshold_blocks + 1`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gc_soft_threshold_blocks: Option<u32>,
    /// Page allocation order of page-mapping FTLs (default cwdp).
    pub allocation: Allocation,
    /// Page-mapping FTLs (page, DFTL): a host page's plane by arrival
    /// (`dynamic`, default) or by logical address (`static`, MQSim's), in
    /// the order of `allocation`.
    #[serde(default, skip_serializing_if = "PlaneAllocation::is_dynamic")]
    pub plane_allocation: PlaneAllocation,
    /// Run GC in idle time until this many free blocks per plane exist (0 = off).
    /// Hybrid FTLs: merge in idle time until this many log blocks are free.
    pub background_gc_blocks: u32,
    /// The idle detector of idle-time GC (`background_gc_blocks`): the device
    /// must have had no request for this long before idle-time work starts
    /// (Golding et al., "Idleness is not sloth", USENIX 1995: a fixed
    /// wait-time detector). Default 0: at once.
    #[serde(default, skip_serializing_if = "Dur::is_zero")]
    pub gc_idle_after: Dur,
    /// Hybrid FTLs (bast, fast, last): fraction of the physical blocks kept as log
    /// blocks, taken out of the physical space along with `op`.
    #[serde(default = "FtlConfig::default_log_area")]
    pub log_area: f64,
    /// LAST: writes larger than this are sequential, the rest random.
    #[serde(default = "FtlConfig::default_last_seq_threshold")]
    pub last_seq_threshold: Size,
    /// Wear levelling: none, dynamic (least-worn free block) or static (dynamic plus
    /// moving cold data off blocks that lag the most worn).
    #[serde(default)]
    pub wear_leveling: WearLeveling,
    /// Static wear levelling: after an erase in a plane (other than
    /// levelling's own), if the plane's erase counts spread by more than this,
    /// move the data of its least-worn full block (one move per erase).
    #[serde(default = "FtlConfig::default_static_wl_threshold")]
    pub static_wl_threshold: u32,
    /// DFTL: size of the Cached Mapping Table (Park et al. fix it at 32 KB).
    pub cmt_size: Size,
    /// DFTL: bytes per cached entry (lpn + ppn).
    pub cmt_entry_bytes: u32,
    /// DFTL: CMT replacement policy.
    pub cmt_policy: CmtPolicy,
    /// DFTL: what a CMT miss loads and an eviction drops: the one entry
    /// (Gupta et al.'s DFTL, the default) or its whole translation page
    /// (page-level caches in the manner of TPFTL and CDFTL).
    #[serde(default)]
    pub cmt_granularity: CmtGranularity,
    /// Hybrid FTLs (bast, fast, last): in the drain after the workload
    /// (`sim.drain`, which it needs), merge every log block until none holds
    /// data: the garbage collection after the workload that Park et al.
    /// count in an FTL's energy. Idle time during the workload merges only
    /// as `background_gc_blocks` asks. Page-mapping FTLs have no log blocks
    /// and do not read it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub drain_merge: bool,
    /// Block-mapped FTLs (block, bast, fast, last): physical blocks per
    /// logical block (default 1). Above 1, every data and log block is a
    /// super-block of this many erase blocks, one in each of as many planes
    /// (a die's planes together, then dies channel first; the same block
    /// index in each), its pages striped over them page by page, so a
    /// block's consecutive pages program in parallel on different dies and
    /// as multi-plane pairs (Kang et al. 2006's super-block). It must
    /// divide the drive's planes. Page-mapping FTLs stripe by `allocation`
    /// and do not read it.
    #[serde(
        default = "FtlConfig::default_superblock",
        skip_serializing_if = "FtlConfig::is_single_block"
    )]
    pub superblock: u32,
}

/// How garbage collection is scheduled against host work (`ftl.gc_mode`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum GcMode {
    /// Paced and preemptible, as controllers schedule GC (MQSim's
    /// `Preemptible_GC_Enabled` with its soft `GC_Exec_Threshold` and
    /// `GC_Hard_Threshold`; Lee et al., "Preemptible I/O scheduling of
    /// garbage collection", ISCA 2011; Tiny-Tail Flash, FAST 2017). The
    /// page-mapped FTLs collect one victim per host page placed in a plane
    /// below the soft threshold (`gc_soft_threshold_blocks`), so GC keeps
    /// pace with host writes plane by plane instead of collecting victims
    /// in a row when a frontier fills; the engine queues GC's page
    /// operations behind every host and mapping operation of their die, so
    /// a host request waits for at most the one GC operation running,
    /// unless a host page waits for a block whose erase GC has not run yet
    /// (the die then serves GC first, as MQSim's urgent mode does). Below
    /// the hard threshold (`gc_threshold_blocks`) collection blocks as in
    /// `blocking`. Hybrid (block-mapped) FTLs merge as before.
    Paced,
    /// Foreground and blocking: when a plane's host frontier needs a block
    /// and the plane is at the hard threshold, victims are collected one
    /// after another until it is above it, and their operations share the
    /// die's queue with host writes in the order planned (the default).
    Blocking,
}

/// Unit of DFTL's Cached Mapping Table (`ftl.cmt_granularity`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CmtGranularity {
    /// A miss reads the translation page and caches the entry it needs;
    /// replacement evicts single entries (a dirty one writes back its page
    /// with every dirty cached entry of that page).
    #[default]
    Entry,
    /// A miss reads the translation page and caches all its entries;
    /// replacement evicts whole pages (a dirty page is written back without
    /// being read again, the controller holding all of it). Exploits spatial
    /// locality; the cache holds `cmt_size / cmt_entry_bytes` entries, whole
    /// pages of them.
    Page,
}

/// Wear-levelling mode.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum WearLeveling {
    /// No wear levelling (the default).
    #[default]
    None,
    /// Dynamic: allocate the least-worn free block.
    Dynamic,
    /// Static: dynamic, plus moving cold data off the least-worn blocks when the erase-count
    /// spread exceeds `static_wl_threshold`.
    Static,
}

impl Default for FtlConfig {
    /// Page mapping, 7 % over-provisioning, greedy GC at 2 free blocks a
    /// plane, CWDP striping with dynamic plane allocation, no wear levelling.
    fn default() -> FtlConfig {
        FtlConfig {
            kind: "page".into(),
            op: 0.07,
            gc_policy: GcPolicy::Greedy,
            gc_threshold_blocks: 2,
            gc_mode: None,
            gc_soft_threshold_blocks: None,
            allocation: Allocation::Cwdp,
            plane_allocation: PlaneAllocation::Dynamic,
            background_gc_blocks: 0,
            gc_idle_after: Dur::ZERO,
            log_area: FtlConfig::default_log_area(),
            last_seq_threshold: FtlConfig::default_last_seq_threshold(),
            wear_leveling: WearLeveling::None,
            static_wl_threshold: FtlConfig::default_static_wl_threshold(),
            cmt_size: Size::kib(32),
            cmt_entry_bytes: 8,
            cmt_policy: CmtPolicy::Slru,
            cmt_granularity: CmtGranularity::Entry,
            drain_merge: false,
            superblock: 1,
        }
    }
}

impl FtlConfig {
    /// How GC is scheduled: `gc_mode` as given; else `paced` for the
    /// page-mapped FTLs (page, DFTL), as controllers schedule it, and
    /// `blocking` for the block-mapped ones, whose merges are not paced.
    pub fn gc_mode(&self) -> GcMode {
        self.gc_mode.unwrap_or(if self.maps_blocks() {
            GcMode::Blocking
        } else {
            GcMode::Paced
        })
    }
    /// The soft GC threshold of `gc_mode = "paced"`, in blocks of free space
    /// per plane (`gc_soft_threshold_blocks`, or the hard threshold plus one).
    pub fn soft_threshold_blocks(&self) -> u32 {
        self.gc_soft_threshold_blocks
            .unwrap_or(self.gc_threshold_blocks + 1)
    }
    fn default_log_area() -> f64 {
        0.05
    }
    fn default_last_seq_threshold() -> Size {
        Size::kib(4)
    }
    fn default_static_wl_threshold() -> u32 {
        100
    }
    fn default_superblock() -> u32 {
        1
    }
    fn is_single_block(v: &u32) -> bool {
        *v == 1
    }
    /// Pages of one logical block of a block-mapped FTL: the erase block's
    /// pages times `superblock` (1 for page-mapping FTLs).
    pub fn unit_pages(&self, pages_per_block: u32) -> u64 {
        if self.maps_blocks() {
            pages_per_block as u64 * self.superblock.max(1) as u64
        } else {
            pages_per_block as u64
        }
    }
    /// FTLs that map whole logical blocks (their capacity is whole blocks).
    pub fn maps_blocks(&self) -> bool {
        matches!(self.kind.as_str(), "block" | "bast" | "fast" | "last")
    }
    /// FTLs that keep a log area (see `log_area`).
    pub fn has_log_area(&self) -> bool {
        matches!(self.kind.as_str(), "bast" | "fast" | "last")
    }
    /// Free blocks a plane needs beside its logical data: the GC threshold,
    /// `frontiers` blocks open for writing, and one block's worth of space
    /// to reclaim. The configuration asks for one frontier of every FTL;
    /// an FTL that opens more (DFTL's host, GC and translation frontiers)
    /// asks for its own count when it is built.
    pub fn spare_blocks_needed(&self, frontiers: u32) -> u64 {
        self.gc_threshold_blocks as u64 + frontiers as u64 + 1
    }

    /// The capacity this FTL leaves on `geometry`, and the section's rules:
    /// the over-provisioning and log area leave logical space and the spare
    /// blocks GC needs; super-blocks tile the planes; the GC, allocation and
    /// CMT knobs are consistent. Errors name the field.
    pub fn capacity(&self, geometry: &Geometry) -> Result<FtlCapacity, ConfigError> {
        let op = self.op;
        if !(op.is_finite() && op > 0.0) {
            return Err(invalid(
                "ftl.op",
                format!("over-provisioning must be positive, got {op}"),
            ));
        }
        let la = self.log_area;
        if !(la.is_finite() && (0.0..0.5).contains(&la)) {
            return Err(invalid(
                "ftl.log_area",
                format!("must be a fraction in [0, 0.5), got {la}"),
            ));
        }
        let sb = self.superblock;
        if sb == 0 {
            return Err(invalid("ftl.superblock", "must be at least 1"));
        }
        if self.maps_blocks() && sb > 1 {
            let planes = geometry.total_planes();
            if !planes.is_multiple_of(sb) {
                return Err(invalid(
                    "ftl.superblock",
                    format!(
                        "{sb} blocks per super-block do not divide the drive's {planes} planes"
                    ),
                ));
            }
            if geometry.pages_per_block as u64 * sb as u64 > u16::MAX as u64 {
                return Err(invalid(
                    "ftl.superblock",
                    format!(
                        "{sb} blocks of {} pages make a super-block of more than {} pages",
                        geometry.pages_per_block,
                        u16::MAX
                    ),
                ));
            }
        }
        // The unit a block-mapped FTL maps: a block, or a super-block.
        let ppb = self.unit_pages(geometry.pages_per_block);
        let units = geometry.total_pages() / ppb;
        // Hybrid FTLs: the log blocks come out of the physical space first, the rest
        // is data + over-provisioning; block-mapped FTLs expose whole blocks.
        let log_pages = if self.has_log_area() {
            self.log_blocks(units) * ppb
        } else {
            0
        };
        let mut logical_pages =
            (geometry.total_pages().saturating_sub(log_pages) as f64 / (1.0 + op)).floor() as u64;
        if self.maps_blocks() {
            logical_pages = logical_pages / ppb * ppb;
        }
        if logical_pages == 0 {
            // Name what the user set: the over-provisioning alone leaves no
            // logical page (ftl.op = 1e300), or the log area with it.
            let op_alone = (geometry.total_pages() as f64 / (1.0 + op)).floor() as u64;
            let op_alone = if self.maps_blocks() {
                op_alone / ppb * ppb
            } else {
                op_alone
            };
            if log_pages == 0 || op_alone == 0 {
                return Err(invalid(
                    "ftl.op",
                    format!(
                        "over-provisioning {op} leaves no logical capacity ({} physical \
                         pages / (1 + op) is less than one{}): lower op, or add blocks",
                        geometry.total_pages(),
                        if self.maps_blocks() {
                            " block"
                        } else {
                            " page"
                        }
                    ),
                ));
            }
            return Err(invalid(
                "ftl.log_area",
                "leaves no logical capacity: lower log_area or op, or add blocks",
            ));
        }
        if self.last_seq_threshold.0 == 0 {
            return Err(invalid("ftl.last_seq_threshold", "must be at least 1 byte"));
        }
        // The FTL needs, per plane, room for its GC threshold plus an open block and
        // at least one block's worth of reclaimable space.
        let spare_blocks_per_plane = (geometry.total_pages() - log_pages - logical_pages)
            / geometry.pages_per_block as u64
            / geometry.total_planes() as u64;
        let need = self.spare_blocks_needed(1);
        if spare_blocks_per_plane < need {
            return Err(invalid(
                "ftl.op",
                format!(
                    "over-provisioning {op} leaves {spare_blocks_per_plane} spare blocks per plane; the FTL needs at least {need} (gc_threshold_blocks + 2: an open block and one to reclaim): raise op or blocks_per_plane"
                ),
            ));
        }
        if self.plane_allocation == PlaneAllocation::Static
            && self.allocation == Allocation::LeastBusy
        {
            return Err(invalid(
                "ftl.plane_allocation",
                "\"static\" fixes a page's plane by its address, \"least-busy\" chooses it by the dies' queues: pick one (a striping order such as \"cwdp\" with static)",
            ));
        }
        if self.gc_threshold_blocks == 0 {
            return Err(invalid("ftl.gc_threshold_blocks", "must be at least 1"));
        }
        if self.gc_mode == Some(GcMode::Paced) && self.maps_blocks() {
            return Err(invalid(
                "ftl.gc_mode",
                format!(
                    "\"paced\" paces the page-mapped FTLs' GC (page, dftl); {} merges log blocks, which are not paced: use \"blocking\"",
                    self.kind
                ),
            ));
        }
        if let Some(soft) = self.gc_soft_threshold_blocks {
            if soft <= self.gc_threshold_blocks {
                return Err(invalid(
                    "ftl.gc_soft_threshold_blocks",
                    format!(
                        "{soft} must be above the hard threshold ftl.gc_threshold_blocks ({})",
                        self.gc_threshold_blocks
                    ),
                ));
            }
            if soft as u64 >= spare_blocks_per_plane {
                return Err(invalid(
                    "ftl.gc_soft_threshold_blocks",
                    format!(
                        "{soft} blocks of free space per plane would keep all of the {spare_blocks_per_plane} spare blocks per plane free: lower it or raise op"
                    ),
                ));
            }
        }
        if let GcPolicy::Windowed(f) = self.gc_policy {
            if !(f > 0.0 && f <= 1.0) {
                return Err(invalid(
                    "ftl.gc_policy",
                    format!("window fraction must be in (0, 1] (a window of no candidates chooses nothing), got {f}"),
                ));
            }
        }
        if self.cmt_entry_bytes == 0 {
            return Err(invalid("ftl.cmt_entry_bytes", "must be at least 1"));
        }
        if self.cmt_size.0 < self.cmt_entry_bytes as u64 {
            return Err(invalid(
                "ftl.cmt_size",
                format!(
                    "{} bytes cannot hold one {}-byte entry (ftl.cmt_entry_bytes)",
                    self.cmt_size.0, self.cmt_entry_bytes
                ),
            ));
        }
        Ok(FtlCapacity {
            logical_pages,
            spare_blocks_per_plane,
        })
    }

    /// Log blocks of a hybrid FTL on a drive of `total_blocks` (at least 2).
    pub fn log_blocks(&self, total_blocks: u64) -> u64 {
        ((self.log_area * total_blocks as f64).ceil() as u64).max(2)
    }
}

/// Replacement policy of DFTL's Cached Mapping Table.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CmtPolicy {
    /// Segmented LRU (Karedla et al. 1994): a probationary and a protected segment,
    /// as in Gupta et al.'s DFTL.
    Slru,
    /// Plain least-recently-used.
    Lru,
}

/// What an FTL's section leaves of a drive ([`FtlConfig::capacity`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FtlCapacity {
    /// The pages the host addresses: the physical pages less the log area,
    /// over (1 + `ftl.op`); whole blocks (super-blocks) for block-mapped FTLs.
    pub logical_pages: u64,
    /// Free blocks per plane beyond the logical data and the log area.
    pub spare_blocks_per_plane: u64,
}
