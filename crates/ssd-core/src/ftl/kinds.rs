//! The FTLs by name (`ftl.kind`) and each one's own section: what a kind
//! implies (block mapping, a log area, how GC is scheduled by default), the
//! fields only some FTLs read, their defaults and their rules, and
//! [`FtlSection`], the chosen FTL with its section, which the FTLs are built
//! from.
//!
//! They live in the core, beside [`FtlConfig`](super::FtlConfig), and not in
//! the FTL crate, because the core and the host crate read them and depend
//! on no FTL: the drive's validation derives the logical capacity every
//! component is built from (`DriveShape`) from the kind and its section, the
//! engine schedules GC and the drain's merges by them, and the host crate's
//! `SsdConfig` parses `[ftl]` before any FTL is chosen.

use crate::addr::Geometry;
use crate::error::{invalid, ConfigError};
use crate::units::Size;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// Which FTL (`ftl.kind`, `--ftl`): the names the configuration accepts.
/// Ordered as [`FtlKind::ALL`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum FtlKind {
    /// `page`: page-level mapping, the whole table in DRAM (the default).
    #[default]
    Page,
    /// `block`: block-level mapping.
    Block,
    /// `bast`: hybrid mapping, a log block per data block.
    Bast,
    /// `fast`: hybrid mapping, log blocks shared by all data blocks.
    Fast,
    /// `last`: hybrid mapping with sequential and hot/cold random logs.
    Last,
    /// `dftl`: page-level mapping cached from flash (demand-based).
    Dftl,
    /// `zns`: a zoned namespace (NVMe ZNS): zones written sequentially at
    /// their write pointers, reset by the host; no device GC.
    Zns,
}

impl FtlKind {
    /// Every FTL, in the order `--help` and errors list them.
    pub const ALL: [FtlKind; 7] = [
        FtlKind::Page,
        FtlKind::Block,
        FtlKind::Bast,
        FtlKind::Fast,
        FtlKind::Last,
        FtlKind::Dftl,
        FtlKind::Zns,
    ];
    /// Their names, as `ftl.kind` and `--ftl` take them.
    pub const NAMES: &'static [&'static str] =
        &["page", "block", "bast", "fast", "last", "dftl", "zns"];

    /// The name (`"dftl"`).
    pub fn name(self) -> &'static str {
        FtlKind::NAMES[self as usize]
    }
    /// The FTL named `s`; an error lists the names.
    pub fn parse(s: &str) -> Result<FtlKind, String> {
        FtlKind::NAMES
            .iter()
            .position(|n| *n == s)
            .map(|i| FtlKind::ALL[i])
            .ok_or_else(|| format!("unknown FTL {s:?} (known: {})", FtlKind::NAMES.join(", ")))
    }
    /// FTLs that map whole logical blocks (their capacity is whole blocks,
    /// super-blocks with `ftl.superblock`).
    pub fn maps_blocks(self) -> bool {
        !matches!(self, FtlKind::Page | FtlKind::Dftl | FtlKind::Zns)
    }
    /// A zoned namespace: zones the host writes sequentially and resets,
    /// no over-provisioning and no device GC.
    pub fn is_zoned(self) -> bool {
        self == FtlKind::Zns
    }
    /// FTLs that keep a log area (`ftl.log_area`, `ftl.drain_merge`).
    pub fn has_log_area(self) -> bool {
        matches!(self, FtlKind::Bast | FtlKind::Fast | FtlKind::Last)
    }
}

impl std::str::FromStr for FtlKind {
    type Err = String;
    fn from_str(s: &str) -> Result<FtlKind, String> {
        FtlKind::parse(s)
    }
}

impl PartialEq<&str> for FtlKind {
    /// Whether `s` is this FTL's name.
    fn eq(&self, s: &&str) -> bool {
        self.name() == *s
    }
}

impl std::fmt::Display for FtlKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl Serialize for FtlKind {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

impl<'de> Deserialize<'de> for FtlKind {
    /// A name of [`FtlKind::NAMES`]; another is refused with the list.
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        FtlKind::parse(&s).map_err(serde::de::Error::custom)
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

/// DFTL's section: its Cached Mapping Table (`ftl.cmt_*`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DftlConfig {
    /// `ftl.cmt_size`: size of the Cached Mapping Table (Park et al. fix it at 32 KB).
    pub cmt_size: Size,
    /// `ftl.cmt_entry_bytes`: bytes per cached entry (lpn + ppn).
    pub cmt_entry_bytes: u32,
    /// `ftl.cmt_policy`: the CMT's replacement policy.
    pub cmt_policy: CmtPolicy,
    /// `ftl.cmt_granularity`: what a CMT miss loads and an eviction drops:
    /// the one entry (Gupta et al.'s DFTL, the default) or its whole
    /// translation page (page-level caches in the manner of TPFTL and CDFTL).
    pub cmt_granularity: CmtGranularity,
}

impl Default for DftlConfig {
    /// Park et al.'s 32 KB SLRU cache of 8-byte entries, entry by entry.
    fn default() -> DftlConfig {
        DftlConfig {
            cmt_size: Size::kib(32),
            cmt_entry_bytes: 8,
            cmt_policy: CmtPolicy::Slru,
            cmt_granularity: CmtGranularity::Entry,
        }
    }
}

impl DftlConfig {
    /// The cache holds at least one entry.
    pub fn check(&self) -> Result<(), ConfigError> {
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
        Ok(())
    }
    fn changed(&self, out: &mut Vec<(&'static str, String)>) {
        let d = DftlConfig::default();
        changed(out, "cmt_size", &self.cmt_size, &d.cmt_size);
        changed(
            out,
            "cmt_entry_bytes",
            &self.cmt_entry_bytes,
            &d.cmt_entry_bytes,
        );
        changed(out, "cmt_policy", &self.cmt_policy, &d.cmt_policy);
        changed(
            out,
            "cmt_granularity",
            &self.cmt_granularity,
            &d.cmt_granularity,
        );
    }
}

/// The block-mapped FTLs' section (block, bast, fast, last): the unit they map.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BlockConfig {
    /// `ftl.superblock`: physical blocks per logical block (default 1).
    /// Above 1, every data and log block is a super-block of this many
    /// erase blocks, one in each of as many planes (a die's planes
    /// together, then dies channel first; the same block index in each),
    /// its pages striped over them page by page, so a block's consecutive
    /// pages program in parallel on different dies and as multi-plane pairs
    /// (Kang et al. 2006's super-block). It must divide the drive's planes.
    pub superblock: u32,
}

impl Default for BlockConfig {
    /// One erase block per logical block.
    fn default() -> BlockConfig {
        BlockConfig { superblock: 1 }
    }
}

impl BlockConfig {
    /// Pages of one logical block: the erase block's pages times `superblock`.
    pub fn unit_pages(&self, pages_per_block: u32) -> u64 {
        pages_per_block as u64 * self.superblock.max(1) as u64
    }
    /// Super-blocks tile the drive's planes and fit a block's page numbers.
    pub fn check(&self, geometry: &Geometry) -> Result<(), ConfigError> {
        let sb = self.superblock;
        if sb == 0 {
            return Err(invalid("ftl.superblock", "must be at least 1"));
        }
        if sb > 1 {
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
        Ok(())
    }
    fn changed(&self, out: &mut Vec<(&'static str, String)>) {
        changed(
            out,
            "superblock",
            &self.superblock,
            &BlockConfig::default().superblock,
        );
    }
}

/// The hybrid FTLs' section (bast, fast, last): their log area.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LogConfig {
    /// `ftl.log_area`: fraction of the physical blocks kept as log blocks,
    /// taken out of the physical space along with `op` (default 0.05).
    pub log_area: f64,
    /// `ftl.drain_merge`: in the drain after the workload (`sim.drain`,
    /// which it needs), merge every log block until none holds data: the
    /// garbage collection after the workload that Park et al. count in an
    /// FTL's energy. Idle time during the workload merges only as
    /// `background_gc_blocks` asks.
    pub drain_merge: bool,
}

impl Default for LogConfig {
    /// 5 % of the blocks as log blocks, no merge in the drain.
    fn default() -> LogConfig {
        LogConfig {
            log_area: 0.05,
            drain_merge: false,
        }
    }
}

impl LogConfig {
    /// Log blocks on a drive of `total_blocks` (at least 2).
    pub fn log_blocks(&self, total_blocks: u64) -> u64 {
        ((self.log_area * total_blocks as f64).ceil() as u64).max(2)
    }
    /// The log area is a fraction below one half.
    pub fn check(&self) -> Result<(), ConfigError> {
        let la = self.log_area;
        if !(la.is_finite() && (0.0..0.5).contains(&la)) {
            return Err(invalid(
                "ftl.log_area",
                format!("must be a fraction in [0, 0.5), got {la}"),
            ));
        }
        Ok(())
    }
    fn changed(&self, out: &mut Vec<(&'static str, String)>) {
        let d = LogConfig::default();
        changed(out, "log_area", &self.log_area, &d.log_area);
        changed(out, "drain_merge", &self.drain_merge, &d.drain_merge);
    }
}

/// LAST's own section.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LastConfig {
    /// `ftl.last_seq_threshold`: writes larger than this are sequential,
    /// the rest random (default 4 KiB).
    pub seq_threshold: Size,
}

impl Default for LastConfig {
    /// Writes above 4 KiB are sequential.
    fn default() -> LastConfig {
        LastConfig {
            seq_threshold: Size::kib(4),
        }
    }
}

impl LastConfig {
    /// The threshold is at least a byte.
    pub fn check(&self) -> Result<(), ConfigError> {
        if self.seq_threshold.0 == 0 {
            return Err(invalid("ftl.last_seq_threshold", "must be at least 1 byte"));
        }
        Ok(())
    }
    fn changed(&self, out: &mut Vec<(&'static str, String)>) {
        let d = LastConfig::default();
        changed(
            out,
            "last_seq_threshold",
            &self.seq_threshold,
            &d.seq_threshold,
        );
    }
}

/// The zoned namespace's section (`ftl.kind = "zns"`): how zones map onto
/// the flash, and the open and active zone limits.
///
/// A zone is `zone_blocks` erase blocks in each of `zone_planes` planes
/// (taken in the order of `ftl.allocation`, channel first by default), its
/// pages striped over those planes page by page, so a zone's sequential
/// writes keep all its planes' dies busy. Zone `z` lies on plane group
/// `z mod groups`, so consecutive zones use disjoint planes where the drive
/// has more than one group. This is the layout ConfZNS makes configurable
/// (a zone over a set of chips) and the one of FEMU's ZNS mode when a zone
/// spans every die; the zone's writable capacity is its blocks' pages, and
/// its size (the address space it spans) that capacity rounded up to a
/// power of two, as Linux requires of a zoned block device
/// (`blk_revalidate_zone_cb`) and drives such as WD's ZN540 report (2 GiB
/// zones of 1,077 MiB capacity).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ZnsConfig {
    /// `ftl.zone_planes`: planes a zone spans (0, the default: every plane).
    pub zone_planes: u32,
    /// `ftl.zone_blocks`: erase blocks a zone takes in each of its planes
    /// (default 1).
    pub zone_blocks: u32,
    /// `ftl.max_open_zones`: zones open at once, implicitly or explicitly
    /// (the NVMe Maximum Open Resources plus one; 0, the default: no limit).
    pub max_open_zones: u32,
    /// `ftl.max_active_zones`: zones open or closed at once (Maximum Active
    /// Resources plus one; 0, the default: no limit).
    pub max_active_zones: u32,
    /// `ftl.conventional_zones`: zones at the start of the address space
    /// that are conventional (randomly writable, no write pointer, as
    /// `null_blk`'s `zone_nr_conv` and SMR drives have them): a page-mapped
    /// area with its own GC and over-provisioning (`ftl.op`), on whole zone
    /// slots of every plane taken from the sequential zones (default 0).
    pub conventional_zones: u32,
}

impl Default for ZnsConfig {
    /// Zones over every plane, one block in each; no zone limits.
    fn default() -> ZnsConfig {
        ZnsConfig {
            zone_planes: 0,
            zone_blocks: 1,
            max_open_zones: 0,
            max_active_zones: 0,
            conventional_zones: 0,
        }
    }
}

/// A zoned namespace's zones on a drive ([`ZnsConfig::layout`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ZoneLayout {
    /// Planes a zone spans.
    pub planes: u32,
    /// Erase blocks a zone takes in each of its planes.
    pub blocks: u32,
    /// Zones, conventional and sequential.
    pub zones: u64,
    /// Writable pages of a sequential zone (ZCAP).
    pub capacity: u64,
    /// Logical pages a zone spans (the zone size, a power of two).
    pub size: u64,
    /// The first zones, conventional.
    pub conventional: u64,
    /// Zone slots (a zone's blocks in every plane) the conventional zones
    /// take, their over-provisioning and GC room included.
    pub conventional_slots: u64,
}

impl ZnsConfig {
    /// The zones this section makes of `geometry`. Conventional zones need
    /// `op` over-provisioning and `spare_blocks` free blocks a plane beside
    /// their data (`FtlConfig::spare_blocks_needed`); they take whole zone
    /// slots of every plane, the first ones, and the sequential zones the
    /// slots left (zones spanning every plane: [`ZnsConfig::check`]).
    pub fn layout(&self, geometry: &Geometry, op: f64, spare_blocks: u64) -> ZoneLayout {
        let planes = if self.zone_planes == 0 {
            geometry.total_planes()
        } else {
            self.zone_planes
        };
        let blocks = self.zone_blocks.max(1);
        let groups = (geometry.total_planes() / planes.max(1)) as u64;
        let slots = (geometry.blocks_per_plane / blocks) as u64;
        let ppb = geometry.pages_per_block as u64;
        let capacity = planes as u64 * blocks as u64 * ppb;
        let size = capacity.next_power_of_two();
        let conventional = self.conventional_zones as u64;
        let conventional_slots = if conventional == 0 {
            0
        } else {
            // Data over (1 + op), and the free blocks GC needs in each plane.
            let data = conventional * size;
            let slot_pages = capacity.max(1);
            let with_op = (data as f64 * (1.0 + op)).ceil() as u64;
            let with_spare = data + spare_blocks * ppb * geometry.total_planes() as u64;
            with_op.max(with_spare).div_ceil(slot_pages)
        };
        let sequential = (groups * slots).saturating_sub(conventional_slots);
        ZoneLayout {
            planes,
            blocks,
            zones: conventional + sequential,
            capacity,
            size,
            conventional,
            conventional_slots,
        }
    }
    /// Zones tile the drive's planes and blocks; the open limit is within
    /// the active one.
    pub fn check(&self, geometry: &Geometry) -> Result<(), ConfigError> {
        let planes = geometry.total_planes();
        if self.zone_planes > 0 && !planes.is_multiple_of(self.zone_planes) {
            return Err(invalid(
                "ftl.zone_planes",
                format!(
                    "{} planes a zone do not divide the drive's {planes} planes",
                    self.zone_planes
                ),
            ));
        }
        if self.zone_blocks == 0 {
            return Err(invalid("ftl.zone_blocks", "must be at least 1"));
        }
        if !geometry.blocks_per_plane.is_multiple_of(self.zone_blocks) {
            return Err(invalid(
                "ftl.zone_blocks",
                format!(
                    "{} blocks a plane do not divide the planes' {} blocks",
                    self.zone_blocks, geometry.blocks_per_plane
                ),
            ));
        }
        if self.conventional_zones > 0 && self.zone_planes != 0 && self.zone_planes != planes {
            return Err(invalid(
                "ftl.conventional_zones",
                format!(
                    "conventional zones take whole zone slots of every plane: zones must span every plane (ftl.zone_planes = 0 or {planes}, not {})",
                    self.zone_planes
                ),
            ));
        }
        if self.max_active_zones > 0 && self.max_open_zones > self.max_active_zones {
            return Err(invalid(
                "ftl.max_open_zones",
                format!(
                    "{} open zones exceed the {} active ones (ftl.max_active_zones): an open zone is active",
                    self.max_open_zones, self.max_active_zones
                ),
            ));
        }
        Ok(())
    }
    fn changed(&self, out: &mut Vec<(&'static str, String)>) {
        let d = ZnsConfig::default();
        changed(out, "zone_planes", &self.zone_planes, &d.zone_planes);
        changed(out, "zone_blocks", &self.zone_blocks, &d.zone_blocks);
        changed(
            out,
            "max_open_zones",
            &self.max_open_zones,
            &d.max_open_zones,
        );
        changed(
            out,
            "max_active_zones",
            &self.max_active_zones,
            &d.max_active_zones,
        );
        changed(
            out,
            "conventional_zones",
            &self.conventional_zones,
            &d.conventional_zones,
        );
    }
}

/// The reclaim unit handle type of a drive with Flexible Data Placement
/// (`ftl.fdp_isolation`; the FDP configuration descriptor's RUHT, NVMe 2.0
/// base specification, "Flexible Data Placement"): what garbage collection
/// may do with the data of different handles.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FdpIsolation {
    /// Initially Isolated (RUHT 1h): data written through different handles
    /// goes to different reclaim units, but GC may move the valid data of
    /// several handles into one reclaim unit (here: one GC frontier a plane
    /// for every handle's data, as the conventional FTL's).
    #[default]
    Initial,
    /// Persistently Isolated (RUHT 2h): GC moves a handle's valid data only
    /// into reclaim units of the same handle (here: a GC frontier a plane for
    /// each handle), so its data never shares an erase block with another's.
    Persistent,
}

/// Flexible Data Placement on the page-mapping FTL (`ftl.fdp = true`; NVMe
/// TP4146, now the NVMe 2.0 base specification's "Flexible Data
/// Placement"): the FDP configuration the drive reports in its FDP
/// Configurations log page.
///
/// The dies are cut into `groups` reclaim groups (NRG), each the dies of a
/// consecutive run of the striping order of `ftl.allocation` (channel first
/// by default, so a group spans the channels). Each of the `handles`
/// reclaim unit handles (NRUH) references, in every group, a reclaim unit
/// (RU): `ru_blocks` erase blocks in each plane of the group (RUNS, the
/// nominal size, is those blocks' bytes), written in the page FTL's plane
/// order, one open block a plane at a time. A write's placement identifier
/// (PID) names the group (its high RGIF bits) and the placement handle; a
/// write without the directive goes to placement handle 0 in the groups in
/// turn (the device's choice), and a PID naming no handle or group fails
/// with Invalid Field in Command.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FdpConfig {
    /// `ftl.fdp`: Flexible Data Placement on (default off: a conventional
    /// namespace with one write frontier).
    pub enabled: bool,
    /// `ftl.fdp_groups`: reclaim groups (NRG, default 1). They must divide
    /// the drive's dies.
    pub groups: u32,
    /// `ftl.fdp_handles`: reclaim unit handles, one placement handle each
    /// (NRUH, default 8; at most 128, fio's `FIO_MAX_DP_IDS`).
    pub handles: u32,
    /// `ftl.fdp_ru_blocks`: erase blocks a reclaim unit takes in each plane
    /// of its group (default 1).
    pub ru_blocks: u32,
    /// `ftl.fdp_isolation`: the handles' type (RUHT), `"initial"` (default)
    /// or `"persistent"`.
    pub isolation: FdpIsolation,
}

impl Default for FdpConfig {
    /// Off; when on, one reclaim group, 8 initially isolated handles, RUs of
    /// one block a plane.
    fn default() -> FdpConfig {
        FdpConfig {
            enabled: false,
            groups: 1,
            handles: 8,
            ru_blocks: 1,
            isolation: FdpIsolation::Initial,
        }
    }
}

impl FdpConfig {
    /// The most handles a drive may have (fio's `FIO_MAX_DP_IDS`, the
    /// placement IDs a job can name).
    pub const MAX_HANDLES: u32 = 128;

    /// Bits of a placement identifier that name the reclaim group (RGIF):
    /// enough for `groups - 1`, 0 with one group.
    pub fn rgif(&self) -> u32 {
        32 - (self.groups.max(1) - 1).leading_zeros()
    }
    /// The placement identifier of handle `ph` in group `rg` (the RG in the
    /// high RGIF bits, QEMU's `nvme_make_pid`).
    pub fn make_pid(&self, rg: u32, ph: u32) -> u16 {
        let rgif = self.rgif();
        if rgif == 0 {
            ph as u16
        } else {
            ((rg << (16 - rgif)) | ph) as u16
        }
    }
    /// The (group, handle) a placement identifier names, if both exist.
    pub fn parse_pid(&self, pid: u16) -> Option<(u32, u32)> {
        let rgif = self.rgif();
        let (rg, ph) = if rgif == 0 {
            (0, pid as u32)
        } else {
            (
                pid as u32 >> (16 - rgif),
                pid as u32 & ((1 << (16 - rgif)) - 1),
            )
        };
        (rg < self.groups && ph < self.handles).then_some((rg, ph))
    }
    /// The placement identifiers in the order the Reclaim Unit Handle
    /// Status (I/O Management Receive) lists them, which fio's `plids`
    /// index: by placement handle, then by reclaim group (QEMU's
    /// `nvme_io_mgmt_recv_ruhs`).
    pub fn pid_list(&self) -> Vec<u16> {
        let mut v = Vec::with_capacity((self.handles * self.groups) as usize);
        for ph in 0..self.handles {
            for rg in 0..self.groups {
                v.push(self.make_pid(rg, ph));
            }
        }
        v
    }
    /// Write frontiers a plane holds open: a host frontier for each handle,
    /// and GC's: one for every handle's data (initially isolated) or one
    /// for each (persistently isolated).
    pub fn frontiers(&self) -> u32 {
        self.handles
            + match self.isolation {
                FdpIsolation::Initial => 1,
                FdpIsolation::Persistent => self.handles,
            }
    }
    /// The section's own rules on `geometry` (the spare blocks the handles'
    /// frontiers need are [`FtlConfig::capacity`](super::FtlConfig::capacity)'s).
    pub fn check(&self, geometry: &Geometry) -> Result<(), ConfigError> {
        let dies = geometry.total_dies();
        if self.groups == 0 || !dies.is_multiple_of(self.groups) {
            return Err(invalid(
                "ftl.fdp_groups",
                format!(
                    "{} reclaim groups must be at least 1 and divide the drive's {dies} dies",
                    self.groups
                ),
            ));
        }
        if self.handles == 0 || self.handles > FdpConfig::MAX_HANDLES {
            return Err(invalid(
                "ftl.fdp_handles",
                format!(
                    "must be from 1 to {} reclaim unit handles, got {}",
                    FdpConfig::MAX_HANDLES,
                    self.handles
                ),
            ));
        }
        let handle_bits = 16 - self.rgif();
        if (self.handles as u64) >= 1u64 << handle_bits {
            return Err(invalid(
                "ftl.fdp_handles",
                format!(
                    "{} handles do not fit the {handle_bits} bits a placement identifier leaves them beside {} reclaim groups",
                    self.handles, self.groups
                ),
            ));
        }
        if self.ru_blocks == 0 || self.ru_blocks > geometry.blocks_per_plane {
            return Err(invalid(
                "ftl.fdp_ru_blocks",
                format!(
                    "a reclaim unit of {} blocks a plane does not fit the planes' {} blocks (at least 1)",
                    self.ru_blocks, geometry.blocks_per_plane
                ),
            ));
        }
        Ok(())
    }
    fn changed(&self, out: &mut Vec<(&'static str, String)>) {
        let d = FdpConfig::default();
        changed(out, "fdp_groups", &self.groups, &d.groups);
        changed(out, "fdp_handles", &self.handles, &d.handles);
        changed(out, "fdp_ru_blocks", &self.ru_blocks, &d.ru_blocks);
        changed(out, "fdp_isolation", &self.isolation, &d.isolation);
    }
}

/// The chosen FTL with the section it reads ([`FtlConfig::section`](super::FtlConfig::section)):
/// what an FTL is built from beside the common knobs of
/// [`FtlConfig`](super::FtlConfig).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum FtlSection {
    /// `page`: no section of its own.
    Page,
    /// `dftl`: its Cached Mapping Table.
    Dftl(DftlConfig),
    /// `block`: its mapping unit.
    Block(BlockConfig),
    /// `bast`: its mapping unit and log area.
    Bast(BlockConfig, LogConfig),
    /// `fast`: its mapping unit and log area.
    Fast(BlockConfig, LogConfig),
    /// `last`: its mapping unit, log area and sequential threshold.
    Last(BlockConfig, LogConfig, LastConfig),
    /// `zns`: its zones.
    Zns(ZnsConfig),
}

impl FtlSection {
    /// The FTL's name.
    pub fn kind(&self) -> FtlKind {
        match self {
            FtlSection::Page => FtlKind::Page,
            FtlSection::Dftl(_) => FtlKind::Dftl,
            FtlSection::Block(_) => FtlKind::Block,
            FtlSection::Bast(..) => FtlKind::Bast,
            FtlSection::Fast(..) => FtlKind::Fast,
            FtlSection::Last(..) => FtlKind::Last,
            FtlSection::Zns(_) => FtlKind::Zns,
        }
    }
    /// The mapping unit of a block-mapped FTL.
    pub fn block(&self) -> Option<&BlockConfig> {
        match self {
            FtlSection::Block(b)
            | FtlSection::Bast(b, _)
            | FtlSection::Fast(b, _)
            | FtlSection::Last(b, ..) => Some(b),
            FtlSection::Page | FtlSection::Dftl(_) | FtlSection::Zns(_) => None,
        }
    }
    /// The log area of a hybrid FTL.
    pub fn log(&self) -> Option<&LogConfig> {
        match self {
            FtlSection::Bast(_, l) | FtlSection::Fast(_, l) | FtlSection::Last(_, l, _) => Some(l),
            _ => None,
        }
    }
    /// The section's own rules (each section's `check`), in field order.
    pub fn check(&self, geometry: &Geometry) -> Result<(), ConfigError> {
        if let Some(l) = self.log() {
            l.check()?;
        }
        if let Some(b) = self.block() {
            b.check(geometry)?;
        }
        match self {
            FtlSection::Dftl(d) => d.check(),
            FtlSection::Last(_, _, l) => l.check(),
            FtlSection::Zns(z) => z.check(geometry),
            _ => Ok(()),
        }
    }
}

/// Field `name` with `value` into `out`, written as the configuration
/// writes it (`"64KiB"`, `true`), unless it is the default `default`.
fn changed<T: PartialEq + Serialize>(
    out: &mut Vec<(&'static str, String)>,
    name: &'static str,
    value: &T,
    default: &T,
) {
    if value != default {
        out.push((
            name,
            serde_json::to_string(value).expect("a field serialises"),
        ));
    }
}

/// The fields of the sections `kind` does not read that differ from their
/// defaults, as (field, value, the FTLs that read it): `cmt_size` under
/// `kind = "page"`.
pub(super) fn unread(
    kind: FtlKind,
    dftl: &DftlConfig,
    block: &BlockConfig,
    log: &LogConfig,
    last: &LastConfig,
    zns: &ZnsConfig,
    fdp: &FdpConfig,
) -> Vec<(&'static str, String, &'static str)> {
    let mut out = Vec::new();
    let mut section = |reads: bool, owners: &'static str, changed: &dyn Fn(&mut Vec<_>)| {
        if !reads {
            let mut fields = Vec::new();
            changed(&mut fields);
            out.extend(fields.into_iter().map(|(f, v)| (f, v, owners)));
        }
    };
    section(
        kind.has_log_area(),
        "the hybrid FTLs (bast, fast, last)",
        &|o| log.changed(o),
    );
    section(kind == FtlKind::Last, "last", &|o| last.changed(o));
    section(kind == FtlKind::Dftl, "dftl", &|o| dftl.changed(o));
    section(kind == FtlKind::Zns, "zns", &|o| zns.changed(o));
    section(
        kind == FtlKind::Page && fdp.enabled,
        "the page FTL with ftl.fdp = true",
        &|o| fdp.changed(o),
    );
    section(
        kind.maps_blocks(),
        "the block-mapped FTLs (block, bast, fast, last)",
        &|o| block.changed(o),
    );
    out
}
