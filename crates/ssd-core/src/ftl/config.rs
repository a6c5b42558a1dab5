//! `[ftl]`: the FTL's section: which FTL, its over-provisioning, GC,
//! allocation and wear-levelling knobs, the FTLs' own sections
//! ([`super::kinds`]), and the capacity each leaves.

use super::kinds::{
    self, BlockConfig, CmtGranularity, CmtPolicy, DftlConfig, FdpConfig, FdpIsolation, FtlKind,
    FtlSection, LastConfig, LogConfig, ZnsConfig,
};
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

/// Where the page FTL keeps the LPNs of its full blocks' pages, the
/// physical-to-logical map GC reads to find each valid page's logical
/// address (`ftl.p2l_store`). A drive keeps them in each page's spare
/// (out-of-band) area on the flash and reads them when it collects the
/// block; the simulator keeps them in memory, or, like the drive, off it,
/// in an unnamed temporary file (in `$TMPDIR`, else `/tmp`) that it reads
/// back when a block is collected. Results are the same byte for byte
/// either way: only the simulator's memory and time change.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum P2lStore {
    /// A file when the map could exceed [`P2lStore::AUTO_FILE_BYTES`] (4
    /// bytes a physical page), else memory (the default).
    #[default]
    Auto,
    /// In memory.
    Memory,
    /// In a temporary file.
    File,
}

impl P2lStore {
    /// `auto` keeps the map in a file above this many bytes of it (4 bytes
    /// a physical page: a drive of more than 2^27 pages, 512 GiB of 4 KiB
    /// pages).
    pub const AUTO_FILE_BYTES: u64 = 512 << 20;
    /// The default (what `skip_serializing_if` leaves out of a report).
    pub fn is_auto(&self) -> bool {
        *self == P2lStore::Auto
    }
    /// Whether a drive of `physical_pages` keeps its full blocks' LPNs in
    /// a file (the one rule `auto` follows).
    pub fn in_file(&self, physical_pages: u64) -> bool {
        match self {
            P2lStore::Auto => physical_pages.saturating_mul(4) > Self::AUTO_FILE_BYTES,
            P2lStore::Memory => false,
            P2lStore::File => true,
        }
    }
    /// The store's name (`auto`, `memory`, `file`).
    pub fn name(&self) -> &'static str {
        match self {
            P2lStore::Auto => "auto",
            P2lStore::Memory => "memory",
            P2lStore::File => "file",
        }
    }
}

/// The FTL (`[ftl]`): which one (`kind`), the knobs every FTL reads
/// (over-provisioning, GC, allocation, wear levelling) and the sections only
/// some FTLs read ([`FtlSection`]: DFTL's cache, the block-mapped FTLs'
/// mapping unit, the hybrid FTLs' log area, LAST's threshold).
///
/// Every section is kept whatever the kind, so that the configuration's
/// layers (preset, file, `--set`, a sweep's axes) may set a section's fields
/// and the kind in any order; [`FtlConfig::section`] gives the chosen FTL's,
/// and only it is checked and read. A field of another FTL's section that
/// differs from its default is accepted and named by
/// [`FtlConfig::unread_fields`] (the CLI prints it as a note). On the wire
/// (TOML, the report's echo, the drive's shape) the section is one flat
/// table, field names as before (`ftl.cmt_size`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(from = "FtlToml", into = "FtlToml")]
pub struct FtlConfig {
    /// Which FTL (`ftl.kind`).
    pub kind: FtlKind,
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
    pub gc_mode: Option<GcMode>,
    /// `gc_mode = "paced"`: the soft threshold, in blocks of free space per
    /// plane (free blocks plus the room left in the plane's write
    /// frontiers). Each host page placed in a plane with less free space
    /// than this collects one victim, in the background. Default
    /// `gc_threshold_blocks + 1`.
    pub gc_soft_threshold_blocks: Option<u32>,
    /// Page allocation order of page-mapping FTLs (default cwdp).
    pub allocation: Allocation,
    /// Page-mapping FTLs (page, DFTL): a host page's plane by arrival
    /// (`dynamic`, default) or by logical address (`static`, MQSim's), in
    /// the order of `allocation`.
    pub plane_allocation: PlaneAllocation,
    /// The page FTL: where its full blocks' LPNs are kept, in memory or in
    /// a temporary file ([`P2lStore`]); it changes no result. Not part of
    /// the drive's shape (a saved state loads under either).
    pub p2l_store: P2lStore,
    /// Run GC in idle time until this many free blocks per plane exist (0 = off).
    /// Hybrid FTLs: merge in idle time until this many log blocks are free.
    pub background_gc_blocks: u32,
    /// The idle detector of idle-time GC (`background_gc_blocks`): the device
    /// must have had no request for this long before idle-time work starts
    /// (Golding et al., "Idleness is not sloth", USENIX 1995: a fixed
    /// wait-time detector). Default 0: at once.
    pub gc_idle_after: Dur,
    /// Wear levelling: none, dynamic (least-worn free block) or static (dynamic plus
    /// moving cold data off blocks that lag the most worn).
    pub wear_leveling: WearLeveling,
    /// Static wear levelling: after an erase in a plane (other than
    /// levelling's own), if the plane's erase counts spread by more than this,
    /// move the data of its least-worn full block (one move per erase).
    pub static_wl_threshold: u32,
    /// DFTL's section (`ftl.cmt_*`).
    pub dftl: DftlConfig,
    /// The block-mapped FTLs' section (`ftl.superblock`).
    pub block: BlockConfig,
    /// The hybrid FTLs' section (`ftl.log_area`, `ftl.drain_merge`).
    pub log: LogConfig,
    /// LAST's section (`ftl.last_seq_threshold`).
    pub last: LastConfig,
    /// The zoned namespace's section (`ftl.zone_planes`, `ftl.zone_blocks`,
    /// `ftl.max_open_zones`, `ftl.max_active_zones`).
    pub zns: ZnsConfig,
    /// Flexible Data Placement on the page FTL (`ftl.fdp`, `ftl.fdp_groups`,
    /// `ftl.fdp_handles`, `ftl.fdp_ru_blocks`, `ftl.fdp_isolation`).
    pub fdp: FdpConfig,
}

/// `[ftl]` on the wire: one flat table, in the order reports have always
/// echoed it (the echo, its hash and the drive's shape, from which a sweep
/// derives its preconditioning seeds, stay byte for byte what they were).
#[derive(Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct FtlToml {
    kind: FtlKind,
    op: f64,
    gc_policy: GcPolicy,
    gc_threshold_blocks: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    gc_mode: Option<GcMode>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    gc_soft_threshold_blocks: Option<u32>,
    allocation: Allocation,
    #[serde(default, skip_serializing_if = "PlaneAllocation::is_dynamic")]
    plane_allocation: PlaneAllocation,
    #[serde(default, skip_serializing_if = "P2lStore::is_auto")]
    p2l_store: P2lStore,
    background_gc_blocks: u32,
    #[serde(default, skip_serializing_if = "Dur::is_zero")]
    gc_idle_after: Dur,
    #[serde(default = "FtlToml::default_log_area")]
    log_area: f64,
    #[serde(default = "FtlToml::default_last_seq_threshold")]
    last_seq_threshold: Size,
    #[serde(default)]
    wear_leveling: WearLeveling,
    #[serde(default = "FtlToml::default_static_wl_threshold")]
    static_wl_threshold: u32,
    cmt_size: Size,
    cmt_entry_bytes: u32,
    cmt_policy: CmtPolicy,
    #[serde(default)]
    cmt_granularity: CmtGranularity,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    drain_merge: bool,
    #[serde(
        default = "FtlToml::default_superblock",
        skip_serializing_if = "FtlToml::is_single_block"
    )]
    superblock: u32,
    #[serde(default, skip_serializing_if = "FtlToml::is_zero")]
    zone_planes: u32,
    #[serde(
        default = "FtlToml::default_zone_blocks",
        skip_serializing_if = "FtlToml::is_single_block"
    )]
    zone_blocks: u32,
    #[serde(default, skip_serializing_if = "FtlToml::is_zero")]
    max_open_zones: u32,
    #[serde(default, skip_serializing_if = "FtlToml::is_zero")]
    max_active_zones: u32,
    #[serde(default, skip_serializing_if = "FtlToml::is_zero")]
    conventional_zones: u32,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    fdp: bool,
    #[serde(
        default = "FtlToml::default_single",
        skip_serializing_if = "FtlToml::is_single_block"
    )]
    fdp_groups: u32,
    #[serde(
        default = "FtlToml::default_fdp_handles",
        skip_serializing_if = "FtlToml::is_default_fdp_handles"
    )]
    fdp_handles: u32,
    #[serde(
        default = "FtlToml::default_single",
        skip_serializing_if = "FtlToml::is_single_block"
    )]
    fdp_ru_blocks: u32,
    #[serde(default, skip_serializing_if = "FtlToml::is_initial")]
    fdp_isolation: FdpIsolation,
}

impl FtlToml {
    fn is_zero(v: &u32) -> bool {
        *v == 0
    }
    fn default_zone_blocks() -> u32 {
        ZnsConfig::default().zone_blocks
    }
    fn default_log_area() -> f64 {
        LogConfig::default().log_area
    }
    fn default_last_seq_threshold() -> Size {
        LastConfig::default().seq_threshold
    }
    fn default_static_wl_threshold() -> u32 {
        FtlConfig::default().static_wl_threshold
    }
    fn default_superblock() -> u32 {
        BlockConfig::default().superblock
    }
    fn is_single_block(v: &u32) -> bool {
        *v == 1
    }
    fn default_single() -> u32 {
        1
    }
    fn default_fdp_handles() -> u32 {
        FdpConfig::default().handles
    }
    fn is_default_fdp_handles(v: &u32) -> bool {
        *v == FdpConfig::default().handles
    }
    fn is_initial(v: &FdpIsolation) -> bool {
        *v == FdpIsolation::Initial
    }
}

impl From<FtlToml> for FtlConfig {
    fn from(t: FtlToml) -> FtlConfig {
        FtlConfig {
            kind: t.kind,
            op: t.op,
            gc_policy: t.gc_policy,
            gc_threshold_blocks: t.gc_threshold_blocks,
            gc_mode: t.gc_mode,
            gc_soft_threshold_blocks: t.gc_soft_threshold_blocks,
            allocation: t.allocation,
            plane_allocation: t.plane_allocation,
            p2l_store: t.p2l_store,
            background_gc_blocks: t.background_gc_blocks,
            gc_idle_after: t.gc_idle_after,
            wear_leveling: t.wear_leveling,
            static_wl_threshold: t.static_wl_threshold,
            dftl: DftlConfig {
                cmt_size: t.cmt_size,
                cmt_entry_bytes: t.cmt_entry_bytes,
                cmt_policy: t.cmt_policy,
                cmt_granularity: t.cmt_granularity,
            },
            block: BlockConfig {
                superblock: t.superblock,
            },
            log: LogConfig {
                log_area: t.log_area,
                drain_merge: t.drain_merge,
            },
            last: LastConfig {
                seq_threshold: t.last_seq_threshold,
            },
            zns: ZnsConfig {
                zone_planes: t.zone_planes,
                zone_blocks: t.zone_blocks,
                max_open_zones: t.max_open_zones,
                max_active_zones: t.max_active_zones,
                conventional_zones: t.conventional_zones,
            },
            fdp: FdpConfig {
                enabled: t.fdp,
                groups: t.fdp_groups,
                handles: t.fdp_handles,
                ru_blocks: t.fdp_ru_blocks,
                isolation: t.fdp_isolation,
            },
        }
    }
}

impl From<FtlConfig> for FtlToml {
    fn from(c: FtlConfig) -> FtlToml {
        FtlToml {
            kind: c.kind,
            op: c.op,
            gc_policy: c.gc_policy,
            gc_threshold_blocks: c.gc_threshold_blocks,
            gc_mode: c.gc_mode,
            gc_soft_threshold_blocks: c.gc_soft_threshold_blocks,
            allocation: c.allocation,
            plane_allocation: c.plane_allocation,
            p2l_store: c.p2l_store,
            background_gc_blocks: c.background_gc_blocks,
            gc_idle_after: c.gc_idle_after,
            log_area: c.log.log_area,
            last_seq_threshold: c.last.seq_threshold,
            wear_leveling: c.wear_leveling,
            static_wl_threshold: c.static_wl_threshold,
            cmt_size: c.dftl.cmt_size,
            cmt_entry_bytes: c.dftl.cmt_entry_bytes,
            cmt_policy: c.dftl.cmt_policy,
            cmt_granularity: c.dftl.cmt_granularity,
            drain_merge: c.log.drain_merge,
            superblock: c.block.superblock,
            zone_planes: c.zns.zone_planes,
            zone_blocks: c.zns.zone_blocks,
            max_open_zones: c.zns.max_open_zones,
            max_active_zones: c.zns.max_active_zones,
            conventional_zones: c.zns.conventional_zones,
            fdp: c.fdp.enabled,
            fdp_groups: c.fdp.groups,
            fdp_handles: c.fdp.handles,
            fdp_ru_blocks: c.fdp.ru_blocks,
            fdp_isolation: c.fdp.isolation,
        }
    }
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
    /// plane, CWDP striping with dynamic plane allocation, no wear levelling;
    /// every section at its defaults.
    fn default() -> FtlConfig {
        FtlConfig {
            kind: FtlKind::Page,
            op: 0.07,
            gc_policy: GcPolicy::Greedy,
            gc_threshold_blocks: 2,
            gc_mode: None,
            gc_soft_threshold_blocks: None,
            allocation: Allocation::Cwdp,
            plane_allocation: PlaneAllocation::Dynamic,
            p2l_store: P2lStore::Auto,
            background_gc_blocks: 0,
            gc_idle_after: Dur::ZERO,
            wear_leveling: WearLeveling::None,
            static_wl_threshold: 100,
            dftl: DftlConfig::default(),
            block: BlockConfig::default(),
            log: LogConfig::default(),
            last: LastConfig::default(),
            zns: ZnsConfig::default(),
            fdp: FdpConfig::default(),
        }
    }
}

impl FtlConfig {
    /// The chosen FTL with the section it reads.
    pub fn section(&self) -> FtlSection {
        match self.kind {
            FtlKind::Page => FtlSection::Page,
            FtlKind::Dftl => FtlSection::Dftl(self.dftl),
            FtlKind::Block => FtlSection::Block(self.block),
            FtlKind::Bast => FtlSection::Bast(self.block, self.log),
            FtlKind::Fast => FtlSection::Fast(self.block, self.log),
            FtlKind::Last => FtlSection::Last(self.block, self.log, self.last),
            FtlKind::Zns => FtlSection::Zns(self.zns),
        }
    }
    /// The fields of other FTLs' sections set to other values than their
    /// defaults, which the chosen FTL does not read, as notes
    /// (`ftl.cmt_size = "64KiB" is not read: ...`). They are accepted, so
    /// that one configuration may serve several FTLs (a sweep over
    /// `ftl.kind`), and kept in the echo.
    pub fn unread_fields(&self) -> Vec<String> {
        kinds::unread(
            self.kind,
            &self.dftl,
            &self.block,
            &self.log,
            &self.last,
            &self.zns,
            &self.fdp,
        )
        .into_iter()
        .chain(
            (self.kind != FtlKind::Page && !self.p2l_store.is_auto()).then(|| {
                (
                    "p2l_store",
                    format!("{:?}", self.p2l_store.name()),
                    "the page FTL",
                )
            }),
        )
        .map(|(field, v, owners)| {
            format!(
                "ftl.{field} = {v} is not read: it is a field of {owners}, and ftl.kind is {:?}",
                self.kind.name(),
            )
        })
        .collect()
    }
    /// How GC is scheduled: `gc_mode` as given; else `paced` for the
    /// page-mapped FTLs (page, DFTL), as controllers schedule it, and
    /// `blocking` for the block-mapped ones, whose merges are not paced.
    pub fn gc_mode(&self) -> GcMode {
        self.gc_mode.unwrap_or(if self.kind.maps_blocks() {
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
    /// Whether the drain merges every log block (`ftl.drain_merge` of a
    /// hybrid FTL).
    pub fn drain_merge(&self) -> bool {
        self.section().log().is_some_and(|l| l.drain_merge)
    }
    /// Pages of one logical block of a block-mapped FTL: the erase block's
    /// pages times `superblock` (the erase block's for page-mapping FTLs).
    pub fn unit_pages(&self, pages_per_block: u32) -> u64 {
        match self.section().block() {
            Some(b) => b.unit_pages(pages_per_block),
            None => pages_per_block as u64,
        }
    }
    /// Free blocks a plane needs beside its logical data: the GC threshold,
    /// `frontiers` blocks open for writing, and one block's worth of space
    /// to reclaim. The configuration asks for one frontier of every FTL;
    /// an FTL that opens more (DFTL's host, GC and translation frontiers)
    /// asks for its own count when it is built.
    pub fn spare_blocks_needed(&self, frontiers: u32) -> u64 {
        self.gc_threshold_blocks as u64 + frontiers as u64 + 1
    }

    /// A zoned namespace's zones on `geometry` (`ftl.kind = "zns"`), None
    /// for any other FTL.
    pub fn zone_layout(&self, geometry: &Geometry) -> Option<super::ZoneLayout> {
        match self.section() {
            FtlSection::Zns(z) => Some(z.layout(geometry, self.op, self.spare_blocks_needed(1))),
            _ => None,
        }
    }

    /// The capacity this FTL leaves on `geometry`, and the section's rules:
    /// the over-provisioning and log area leave logical space and the spare
    /// blocks GC needs; super-blocks tile the planes; the GC, allocation and
    /// the chosen FTL's own knobs ([`FtlSection::check`]) are consistent.
    /// Errors name the field.
    pub fn capacity(&self, geometry: &Geometry) -> Result<FtlCapacity, ConfigError> {
        if self.fdp.enabled && self.kind != FtlKind::Page {
            return Err(invalid(
                "ftl.fdp",
                format!(
                    "Flexible Data Placement is a conventional namespace with per-handle write frontiers, modelled on the page-mapping FTL (ftl.kind = \"page\"), not {:?}{}",
                    self.kind.name(),
                    if self.kind.is_zoned() {
                        ": a zoned namespace places data by zones, not placement handles"
                    } else {
                        ""
                    }
                ),
            ));
        }
        if let FtlSection::Zns(z) = self.section() {
            // Every block is in a zone: the sequential zones have no
            // over-provisioning, no spare blocks and no GC; `ftl.op` and the
            // GC knobs are the conventional zones' (read only with some).
            z.check(geometry)?;
            if z.conventional_zones > 0 && !(op_ok(self.op) && self.gc_threshold_blocks > 0) {
                return Err(invalid(
                    "ftl.op",
                    format!(
                        "conventional zones need a positive over-provisioning and GC threshold (ftl.op = {}, ftl.gc_threshold_blocks = {})",
                        self.op, self.gc_threshold_blocks
                    ),
                ));
            }
            let l = self.zone_layout(geometry).expect("zoned");
            let slots = (geometry.blocks_per_plane / l.blocks) as u64;
            if l.conventional_slots > slots {
                return Err(invalid(
                    "ftl.conventional_zones",
                    format!(
                        "{} conventional zones with over-provisioning {} and their GC room need {} of the drive's {slots} zone slots",
                        l.conventional, self.op, l.conventional_slots
                    ),
                ));
            }
            return Ok(FtlCapacity {
                logical_pages: l.zones * l.size,
                spare_blocks_per_plane: 0,
            });
        }
        let op = self.op;
        if !(op.is_finite() && op > 0.0) {
            return Err(invalid(
                "ftl.op",
                format!("over-provisioning must be positive, got {op}"),
            ));
        }
        let section = self.section();
        section.check(geometry)?;
        let maps_blocks = self.kind.maps_blocks();
        // The unit a block-mapped FTL maps: a block, or a super-block.
        let ppb = self.unit_pages(geometry.pages_per_block);
        let units = geometry.total_pages() / ppb;
        // Hybrid FTLs: the log blocks come out of the physical space first, the rest
        // is data + over-provisioning; block-mapped FTLs expose whole blocks.
        let log_pages = section.log().map_or(0, |l| l.log_blocks(units) * ppb);
        let whole = |pages: u64| {
            if maps_blocks {
                pages / ppb * ppb
            } else {
                pages
            }
        };
        let logical_pages = whole(
            (geometry.total_pages().saturating_sub(log_pages) as f64 / (1.0 + op)).floor() as u64,
        );
        if logical_pages == 0 {
            // Name what the user set: the over-provisioning alone leaves no
            // logical page (ftl.op = 1e300), or the log area with it.
            let op_alone = whole((geometry.total_pages() as f64 / (1.0 + op)).floor() as u64);
            if log_pages == 0 || op_alone == 0 {
                return Err(invalid(
                    "ftl.op",
                    format!(
                        "over-provisioning {op} leaves no logical capacity ({} physical \
                         pages / (1 + op) is less than one{}): lower op, or add blocks",
                        geometry.total_pages(),
                        if maps_blocks { " block" } else { " page" }
                    ),
                ));
            }
            return Err(invalid(
                "ftl.log_area",
                "leaves no logical capacity: lower log_area or op, or add blocks",
            ));
        }
        // The FTL needs, per plane, room for its GC threshold plus an open block and
        // at least one block's worth of reclaimable space.
        let spare_blocks_per_plane = (geometry.total_pages() - log_pages - logical_pages)
            / geometry.pages_per_block as u64
            / geometry.total_planes() as u64;
        if self.fdp.enabled {
            self.check_fdp(geometry, spare_blocks_per_plane)?;
        }
        let need = self.spare_blocks_needed(1);
        if spare_blocks_per_plane < need {
            return Err(invalid(
                "ftl.op",
                format!(
                    "over-provisioning {op} leaves {spare_blocks_per_plane} spare blocks per plane; the FTL needs at least {need} (gc_threshold_blocks + 2: an open block and one to reclaim): raise ftl.op or nand.blocks_per_plane"
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
        if self.gc_mode == Some(GcMode::Paced) && maps_blocks {
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
        Ok(FtlCapacity {
            logical_pages,
            spare_blocks_per_plane,
        })
    }
}

impl FtlConfig {
    /// Flexible Data Placement's rules (`ftl.fdp = true`, on the page FTL:
    /// [`FtlConfig::capacity`] refuses it on another): its section's own ([`FdpConfig::check`]), reclaim groups that
    /// the plane allocation can keep a handle's writes in, and the spare
    /// blocks a plane needs for every handle's open frontiers.
    fn check_fdp(
        &self,
        geometry: &Geometry,
        spare_blocks_per_plane: u64,
    ) -> Result<(), ConfigError> {
        let f = &self.fdp;
        f.check(geometry)?;
        if f.groups > 1 && self.allocation == Allocation::LeastBusy {
            return Err(invalid(
                "ftl.fdp_groups",
                "\"least-busy\" allocation picks any die, but a reclaim group keeps a placement handle's writes on its own dies: use one group or a striping order (cwdp, pdwc, wcdp)",
            ));
        }
        let need = self.spare_blocks_needed(f.frontiers());
        if spare_blocks_per_plane < need {
            return Err(invalid(
                "ftl.fdp_handles",
                format!(
                    "{} {} handles keep {} write frontiers open in every plane; with the GC threshold and a block to reclaim that needs {need} spare blocks a plane, but over-provisioning {} leaves {spare_blocks_per_plane}: lower ftl.fdp_handles or raise ftl.op",
                    f.handles,
                    match f.isolation {
                        FdpIsolation::Initial => "initially isolated",
                        FdpIsolation::Persistent => "persistently isolated",
                    },
                    f.frontiers(),
                    self.op
                ),
            ));
        }
        Ok(())
    }
}

/// A finite, positive over-provisioning.
fn op_ok(op: f64) -> bool {
    op.is_finite() && op > 0.0
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
