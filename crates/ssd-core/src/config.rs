//! Configuration: serde structs (stage one, `deny_unknown_fields`, human units) and
//! validation into a checked [`Settings`] (stage two). Presets are plain
//! constructors; a TOML file is deep-merged over the preset it names, then CLI
//! flags are applied on top, so the precedence is flag > file > preset > default.

use crate::addr::Geometry;
pub use crate::error::{invalid, ConfigError};
pub use crate::sched::SchedConfig;
pub use crate::trace::TraceSpec;
use crate::units::{Amps, Dur, Joules, Rate, Size, Volts, Watts};
use serde::{Deserialize, Serialize};
use std::fmt;

mod toml_range;

/// NAND bus speed: either the time to move one page ("100us/page"), a transfer
/// rate in MT/s times the bus width ("800MT/s"), or a byte rate ("40.96MB/s").
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum BusSpeed {
    /// Time to move one page over the bus ("100us/page").
    PageTime(Dur),
    /// Transfers per microsecond (MT/s); bytes per second follow from the bus width.
    MegaTransfers(f64),
    /// A byte rate in MB/s (10^6 bytes per second).
    MegaBytes(f64),
}

impl BusSpeed {
    /// The bus rate for pages of `page_size` on a bus of `width_bits` bits.
    pub fn rate(&self, page_size: Size, width_bits: u32) -> Rate {
        match *self {
            BusSpeed::PageTime(t) => Rate::per_page(page_size, t),
            BusSpeed::MegaTransfers(mt) => Rate::from_mb_per_s(mt * width_bits as f64 / 8.0),
            BusSpeed::MegaBytes(mb) => Rate::from_mb_per_s(mb),
        }
    }
    fn parse(s: &str) -> Result<BusSpeed, String> {
        let t = s.trim();
        if let Some(p) = t.strip_suffix("/page") {
            return crate::units::parse_dur(p)
                .map(BusSpeed::PageTime)
                .map_err(|e| e.to_string());
        }
        let num = |x: &str| {
            x.trim()
                .parse::<f64>()
                .map_err(|_| format!("cannot parse {s:?} as a bus speed"))
        };
        if let Some(p) = t.strip_suffix("MT/s") {
            return num(p).map(BusSpeed::MegaTransfers);
        }
        if let Some(p) = t.strip_suffix("MB/s") {
            return num(p).map(BusSpeed::MegaBytes);
        }
        Err(format!(
            "cannot parse {s:?} as a bus speed (use \"100us/page\", \"800MT/s\" or \"40MB/s\")"
        ))
    }
}
impl fmt::Display for BusSpeed {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        match self {
            BusSpeed::PageTime(t) => write!(f, "{t}/page"),
            BusSpeed::MegaTransfers(m) => write!(f, "{m}MT/s"),
            BusSpeed::MegaBytes(m) => write!(f, "{m}MB/s"),
        }
    }
}
impl Serialize for BusSpeed {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.to_string())
    }
}
impl<'de> Deserialize<'de> for BusSpeed {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        BusSpeed::parse(&s).map_err(serde::de::Error::custom)
    }
}

/// One NAND chip type: timing, bus and the chip's internal geometry.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NandConfig {
    /// Preset this chip came from ("custom" otherwise); informational.
    pub name: String,
    /// Cell type (SLC, MLC, TLC, QLC); informational.
    pub cell: String,
    /// Bytes per page (the unit of read and program).
    pub page_size: Size,
    /// Pages per erase block.
    pub pages_per_block: u32,
    /// Erase blocks per plane.
    pub blocks_per_plane: u32,
    /// Planes per die (a multi-plane operation runs on several of them at once).
    pub planes_per_die: u32,
    /// Dies per chip (each runs one array operation at a time).
    pub dies_per_chip: u32,
    /// Array read into the page register.
    pub t_r: Dur,
    /// Program from the page register into the array.
    pub t_prog: Dur,
    /// Block erase.
    pub t_bers: Dur,
    /// Channel (serial data bus) speed.
    pub bus: BusSpeed,
    /// Data bus width in bits; converts MT/s to bytes per second.
    pub bus_width_bits: u32,
    /// Command + address + confirm cycles per operation, clocked at the bus rate.
    pub cmd_addr_bytes: u32,
    /// Which waiting die a channel serves next: `"fifo"` (the default) or
    /// `"reads-first"` (see [`crate::hw::BusArbitration`]).
    #[serde(default, skip_serializing_if = "crate::hw::BusArbitration::is_fifo")]
    pub bus_arbitration: crate::hw::BusArbitration,
    /// Run the same operation on one page offset of several planes of a die at once.
    pub multiplane: bool,
    /// Per-page-type latencies (MLC/TLC/QLC): see [`crate::hw::nand::PageTypeConfig`].
    /// Absent: every page reads in `t_r` and programs in `t_prog`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub page_types: Option<crate::hw::nand::PageTypeConfig>,
    /// Read retry: see [`crate::hw::nand::RetryConfig`]. Absent: every read
    /// decodes at its first sensing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry: Option<crate::hw::nand::RetryConfig>,
    /// Program/erase suspension for reads: see
    /// [`crate::hw::nand::SuspendConfig`]. Absent: a read waits for the
    /// die's running operation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub suspend: Option<crate::hw::nand::SuspendConfig>,
    /// The part's multi-plane rule: see [`crate::hw::nand::MultiplaneConfig`].
    /// Absent: partners share the page offset, a batch may span every plane,
    /// no per-plane gap.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub multiplane_rule: Option<crate::hw::nand::MultiplaneConfig>,
    /// The part's cache read and cache program commands: see
    /// [`crate::hw::nand::CacheConfig`]. Absent: neither.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache: Option<crate::hw::nand::CacheConfig>,
}

/// The preset called `name` among `presets`, or an error naming the known ones.
fn find_preset<T>(
    kind: &'static str,
    name: &str,
    presets: Vec<T>,
    name_of: impl Fn(&T) -> &String,
) -> Result<T, ConfigError> {
    let known = presets
        .iter()
        .map(|p| name_of(p).as_str())
        .collect::<Vec<_>>()
        .join(", ");
    presets
        .into_iter()
        .find(|p| name_of(p) == name)
        .ok_or_else(|| ConfigError::UnknownPreset {
            kind,
            name: name.to_string(),
            known,
        })
}

impl NandConfig {
    /// The channel's transfer rate from `bus` and `bus_width_bits`.
    pub fn bus_rate(&self) -> Rate {
        self.bus.rate(self.page_size, self.bus_width_bits)
    }
    /// Capacity of one chip in bytes (page size x pages x blocks x planes x dies).
    pub fn chip_bytes(&self) -> u64 {
        self.page_size.0
            * self.pages_per_block as u64
            * self.blocks_per_plane as u64
            * self.planes_per_die as u64
            * self.dies_per_chip as u64
    }

    /// Lee & Won table 2 chips (chip1..chip3): 2 GiB each, 64 pages per block,
    /// 4 planes, 25 us / 200 us / 1.5 ms, one page serial access of 50/100/200 us.
    fn lee_won(name: &str, page_kib: u64, blocks: u32, page_xfer_us: u64) -> NandConfig {
        NandConfig {
            name: name.into(),
            cell: "SLC".into(),
            page_size: Size::kib(page_kib),
            pages_per_block: 64,
            blocks_per_plane: blocks,
            planes_per_die: 4,
            dies_per_chip: 1,
            t_r: Dur::from_us(25),
            t_prog: Dur::from_us(200),
            t_bers: Dur::from_us(1500),
            bus: BusSpeed::PageTime(Dur::from_us(page_xfer_us)),
            bus_width_bits: 8,
            // ONFI: 1 command cycle, 5 address cycles, 1 confirm cycle.
            cmd_addr_bytes: 7,
            multiplane: true,
            page_types: None,
            retry: None,
            suspend: None,
            multiplane_rule: None,
            cache: None,
            bus_arbitration: Default::default(),
        }
    }

    /// All NAND presets, in the order `ssdsim presets` lists them.
    /// The built-in chips (`--nand NAME`).
    pub fn presets() -> Vec<NandConfig> {
        let mut v = Self::single_type_presets();
        v.extend(Self::page_type_presets());
        v
    }

    /// The chips described by one latency per operation.
    fn single_type_presets() -> Vec<NandConfig> {
        vec![
            Self::lee_won("chip1", 2, 4096, 50),
            Self::lee_won("chip2", 4, 2048, 100),
            Self::lee_won("chip3", 8, 1024, 200),
            // Park et al. 2011, table 1 (from Lee & Chang 2005): 2 KiB page, 64 pages per
            // block, read 130.9 us/page and write 405.9 us/page *including* the bus
            // transfer, erase 1.5 ms. The split is not published; we take the bus of
            // chip1 (50 us per 2 KiB page, ~41 MB/s) so that tR + transfer = 130.9 us and
            // transfer + tPROG = 405.9 us exactly. 1 GiB = 8 chips of 128 MiB, 1 plane.
            NandConfig {
                name: "park-slc".into(),
                cell: "SLC".into(),
                page_size: Size::kib(2),
                pages_per_block: 64,
                blocks_per_plane: 1024,
                planes_per_die: 1,
                dies_per_chip: 1,
                t_r: Dur(80_900),
                t_prog: Dur(355_900),
                t_bers: Dur::from_us(1500),
                bus: BusSpeed::PageTime(Dur::from_us(50)),
                bus_width_bits: 8,
                cmd_addr_bytes: 0,
                multiplane: false,
                page_types: None,
                retry: None,
                suspend: None,
                multiplane_rule: None,
                cache: None,
                bus_arbitration: Default::default(),
            },
            // Modern MLC: the default device of MQSim (Tavakkol et al., FAST 2018),
            // ssdconfig.xml: 8 KiB page, 256 pages/block, 2048 blocks/plane, 2 planes,
            // 2 dies/chip, tR 75 us, tPROG 750 us, tBERS 3.8 ms, 333 MT/s x 8 bit.
            NandConfig {
                name: "mlc-mqsim".into(),
                cell: "MLC".into(),
                page_size: Size::kib(8),
                pages_per_block: 256,
                blocks_per_plane: 2048,
                planes_per_die: 2,
                dies_per_chip: 2,
                t_r: Dur::from_us(75),
                t_prog: Dur::from_us(750),
                t_bers: Dur::from_us(3800),
                bus: BusSpeed::MegaTransfers(333.0),
                bus_width_bits: 8,
                cmd_addr_bytes: 7,
                multiplane: true,
                page_types: None,
                retry: None,
                suspend: None,
                multiplane_rule: None,
                cache: None,
                bus_arbitration: Default::default(),
            },
            // Modern TLC: 64-layer 512 Gb 3b/cell 3D V-NAND (Kim et al., "A 512Gb 3b/cell
            // 64-stacked WL 3D V-NAND flash memory", ISSCC 2017, paper 11.1; JSSC 53(1)
            // 2018): 16 KiB pages, 2 planes, tR ~60 us, tPROG ~700 us (one-shot TLC
            // program), 800 Mb/s/pin Toggle DDR. Block size (576 pages: 192 WL x 3 bits)
            // and tBERS 3.5 ms are typical values for this generation, not from the paper.
            NandConfig {
                name: "tlc-64l".into(),
                cell: "TLC".into(),
                page_size: Size::kib(16),
                pages_per_block: 576,
                blocks_per_plane: 1456,
                planes_per_die: 2,
                dies_per_chip: 1,
                t_r: Dur::from_us(60),
                t_prog: Dur::from_us(700),
                t_bers: Dur::from_us(3500),
                bus: BusSpeed::MegaTransfers(800.0),
                bus_width_bits: 8,
                cmd_addr_bytes: 7,
                multiplane: true,
                page_types: None,
                retry: None,
                suspend: None,
                multiplane_rule: None,
                cache: None,
                bus_arbitration: Default::default(),
            },
            // Modern QLC: 1 Tb 4b/cell 96-layer 3D NAND (Lee et al., ISSCC 2020, paper
            // 13.2): 30 MB/s program throughput over 4 planes of 16 KiB pages gives
            // tPROG = 4 x 16 KiB / 30 MB/s ~ 2.2 ms; tR ~ 150 us and 1.2 GT/s I/O are
            // representative of the generation (not from the paper).
            NandConfig {
                name: "qlc-96l".into(),
                cell: "QLC".into(),
                page_size: Size::kib(16),
                pages_per_block: 1536,
                blocks_per_plane: 1024,
                planes_per_die: 4,
                dies_per_chip: 1,
                t_r: Dur::from_us(150),
                t_prog: Dur::from_us(2200),
                t_bers: Dur::from_us(10_000),
                bus: BusSpeed::MegaTransfers(1200.0),
                bus_width_bits: 8,
                cmd_addr_bytes: 7,
                multiplane: true,
                page_types: None,
                retry: None,
                suspend: None,
                multiplane_rule: None,
                cache: None,
                bus_arbitration: Default::default(),
            },
        ]
    }

    /// The chips with a latency per page type (`[nand.page_types]`).
    fn page_type_presets() -> Vec<NandConfig> {
        vec![
            NandConfig::tlc_multipass("tlc-multipass", None),
            // The same part at the end of its life: 3000 P/E cycles and data
            // kept a year, with read retry (illustrative parameters of the
            // model in `hw::nand::RetryConfig`, not a datasheet's).
            NandConfig::tlc_multipass(
                "tlc-multipass-worn",
                Some(crate::hw::nand::RetryConfig {
                    max_steps: 7,
                    t_step: Dur::from_us(5),
                    base_steps: 0.0,
                    steps_per_kpe: 1.0,
                    steps_per_decade: 0.5,
                    pe_offset: 3000,
                    data_age: Dur::from_ms(8760 * 3_600_000),
                }),
            ),
            // qlc-96l programmed one shot: a word line's four pages are loaded
            // into the latches (5 us each, a representative tCBSY) and programmed
            // together. The paper's 30 MB/s over 4 planes x 4 pages of 16 KiB
            // gives the word line's tPROG: 256 KiB / 30 MB/s = 8.738 ms (so a
            // page's mean, 2.188 ms, is qlc-96l's). The paper gives no read time
            // per page type: all four read in qlc-96l's 150 us.
            {
                let mut n = NandConfig::preset_with_types(
                    NandConfig {
                        name: "qlc-96l-oneshot".into(),
                        ..NandConfig::presets_base("qlc-96l")
                    },
                    crate::hw::nand::PageTypeConfig {
                        t_r: vec![Dur::from_us(150); 4],
                        t_prog: vec![Dur::from_us(8738)],
                        program: crate::hw::nand::ProgramScheme::OneShot,
                        t_load: Dur::from_us(5),
                        map: crate::hw::nand::PageMap::Wordline,
                    },
                );
                n.retry = None;
                n
            },
        ]
    }

    /// A 2D TLC part programmed in passes, with SimpleSSD's `LatencyTLC`
    /// table (tR 58/78/107 us, tPROG 558/2201/5001 us for LSB/CSB/MSB pages,
    /// tBERS 2274 us) and its shared-word-line page order. Geometry and bus
    /// (16 KiB pages, 384 pages per block, 2 planes, 400 MT/s) are typical of
    /// such parts, not SimpleSSD's.
    fn tlc_multipass(name: &str, retry: Option<crate::hw::nand::RetryConfig>) -> NandConfig {
        let mut n = NandConfig::preset_with_types(
            NandConfig {
                name: name.into(),
                cell: "TLC".into(),
                page_size: Size::kib(16),
                pages_per_block: 384,
                blocks_per_plane: 1024,
                planes_per_die: 2,
                dies_per_chip: 1,
                t_r: Dur::ZERO,
                t_prog: Dur::ZERO,
                t_bers: Dur::from_us(2274),
                bus: BusSpeed::MegaTransfers(400.0),
                bus_width_bits: 8,
                cmd_addr_bytes: 7,
                multiplane: true,
                page_types: None,
                retry: None,
                suspend: None,
                multiplane_rule: None,
                cache: None,
                bus_arbitration: Default::default(),
            },
            crate::hw::nand::PageTypeConfig {
                t_r: vec![Dur::from_us(58), Dur::from_us(78), Dur::from_us(107)],
                t_prog: vec![Dur::from_us(558), Dur::from_us(2201), Dur::from_us(5001)],
                program: crate::hw::nand::ProgramScheme::MultiPass,
                t_load: Dur::ZERO,
                map: crate::hw::nand::PageMap::SharedWl,
            },
        );
        n.retry = retry;
        n
    }

    /// `n` with page types `p`; its `t_r`/`t_prog` become their means.
    fn preset_with_types(mut n: NandConfig, p: crate::hw::nand::PageTypeConfig) -> NandConfig {
        (n.t_r, n.t_prog) = p.means(n.pages_per_block);
        n.page_types = Some(p);
        n
    }

    /// One of the presets defined before this point, by name (for presets
    /// that vary one).
    fn presets_base(name: &str) -> NandConfig {
        Self::single_type_presets()
            .into_iter()
            .find(|p| p.name == name)
            .expect("base preset exists")
    }

    /// The built-in chip preset `name` (chip1..chip3, park-slc, ...); an error lists the known
    /// names.
    pub fn preset(name: &str) -> Result<NandConfig, ConfigError> {
        find_preset("nand", name, Self::presets(), |p| &p.name)
    }
}

/// How chips hang off the controller.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LayoutConfig {
    /// Independent channels (buses) from the controller to the chips. Default 8.
    pub channels: u32,
    /// Chips (ways) per channel.
    pub ways: u32,
}

/// Controller: embedded CPU and its per-operation costs, and the flash transaction scheduler.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ControllerConfig {
    /// Controller CPU clock in MHz; converts cycle costs to time. Default 200.
    pub cpu_mhz: u32,
    /// Cycles to decode and set up one host command.
    pub cycles_per_command: u64,
    /// Cycles per mapping-table lookup/update (per page).
    pub cycles_per_map_lookup: u64,
    /// Cycles per candidate block examined during GC victim search.
    pub cycles_per_gc_candidate: u64,
    /// Cycles of bookkeeping per page moved by GC or a merge.
    pub cycles_per_gc_page: u64,
    /// Transaction scheduler: serve host reads before programs and erases.
    pub prioritize_reads: bool,
}

/// Write-buffer flush policy.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FlushPolicy {
    /// Writes complete once in DRAM; when the buffer is full the least recently
    /// used pages are written to flash behind them. While a page a plane is
    /// on its way to flash, further writes wait for room (MQSim's write
    /// cache and its back-pressure buffer).
    EvictLru,
    /// Writes go to flash before completing; the buffer only serves reads of
    /// recently written pages.
    WriteThrough,
}

/// `dram.capacity`: a size, or `"fit"`: what the FTL needs (see
/// [`Settings::fit_dram`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DramCapacity {
    /// A fixed capacity.
    Bytes(Size),
    /// The FTL's mapping-table bytes plus the write buffer, rounded up to a
    /// whole number of `dram.device_size` devices.
    Fit,
}

impl DramCapacity {
    /// The bytes of a fixed capacity (None for `"fit"`, known once the FTL is
    /// built: [`Settings::dram_bytes`]).
    pub fn bytes(self) -> Option<u64> {
        match self {
            DramCapacity::Bytes(s) => Some(s.0),
            DramCapacity::Fit => None,
        }
    }
}

impl From<Size> for DramCapacity {
    fn from(s: Size) -> DramCapacity {
        DramCapacity::Bytes(s)
    }
}

impl Serialize for DramCapacity {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            DramCapacity::Bytes(b) => b.serialize(s),
            DramCapacity::Fit => s.serialize_str("fit"),
        }
    }
}

impl<'de> Deserialize<'de> for DramCapacity {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            Text(String),
            Bytes(u64),
        }
        match Raw::deserialize(d)? {
            Raw::Bytes(b) => Ok(DramCapacity::Bytes(Size(b))),
            Raw::Text(t) if t.trim().eq_ignore_ascii_case("fit") => Ok(DramCapacity::Fit),
            Raw::Text(t) => crate::units::parse_size(&t)
                .map(DramCapacity::Bytes)
                .map_err(|e| {
                    serde::de::Error::custom(format!("{e} (a size such as \"64MiB\", or \"fit\")"))
                }),
        }
    }
}

/// The controller's DRAM (`[dram]`): capacity, access latency, write buffer and refresh.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DramConfig {
    /// A size, or `"fit"`: the FTL's mapping-table bytes plus the write
    /// buffer, rounded up to whole `device_size` devices.
    pub capacity: DramCapacity,
    /// Bytes of one DRAM device (a 4 Gb part: "512MiB"): `"fit"` rounds up to
    /// whole devices, and `power.dram_device_standby_power` is per device.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device_size: Option<Size>,
    /// Latency of one DRAM access (a mapping-table lookup, a buffer hit).
    pub access_latency: Dur,
    /// Write buffer size; 0 disables it.
    pub write_buffer: Size,
    /// How the write buffer handles writes (default evict-lru).
    pub flush: FlushPolicy,
    /// Refresh: see [`crate::hw::RefreshConfig`]. Absent: accesses take
    /// `access_latency` each.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refresh: Option<crate::hw::RefreshConfig>,
}

/// Host link kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Interface {
    /// SATA 3 Gb/s (300 MB/s, NCQ depth 32).
    Sata3g,
    /// SATA 6 Gb/s (600 MB/s, NCQ depth 32); the default.
    Sata6g,
    /// NVMe over PCIe 3.0 x4 (3938 MB/s).
    NvmeGen3x4,
    /// NVMe over PCIe 4.0 x4 (7877 MB/s).
    NvmeGen4x4,
}

/// The host interface (`[host]`): link kind and speed, device queue depth and NVMe queue
/// arbitration. [`HostConfig::preset`] fills it per interface.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HostConfig {
    /// Link kind; informational once the preset has set the figures below.
    pub interface: Interface,
    /// Device queue depth (NCQ 32 for SATA, up to 65535 for NVMe).
    pub queue_depth: u32,
    /// Link payload bandwidth in MB/s (after line coding).
    pub link_mbps: f64,
    /// Per-command protocol overhead on the link (command, setup and status frames).
    pub command_overhead: Dur,
    /// NVMe with several flows (`[[flow]]`): how the controller picks the
    /// submission queue it fetches the next command from (`rr`, or `wrr`:
    /// weighted round robin with urgent priority class).
    #[serde(default)]
    pub arbitration: crate::scheds::Arbitration,
    /// NVMe: commands fetched from one submission queue per turn (the
    /// Arbitration Burst).
    #[serde(default = "one_u32")]
    pub arbitration_burst: u32,
    /// NVMe `wrr`: commands per round of the high, medium and low priority
    /// classes (MQSim's 4, 2, 1).
    #[serde(default = "default_wrr_weights")]
    pub wrr_weights: [u32; 3],
    /// NVMe with flows: entries of each flow's submission queue (Linux's
    /// `nvme.io_queue_depth`, 1024): a flow holds at most this many requests
    /// in the block layer and the device.
    #[serde(default = "default_sq_depth")]
    pub sq_depth: u32,
}

fn one_u32() -> u32 {
    1
}
fn default_wrr_weights() -> [u32; 3] {
    [4, 2, 1]
}
fn default_sq_depth() -> u32 {
    1024
}

impl Interface {
    /// An NVMe link (several submission queues) rather than SATA (one NCQ queue).
    pub fn is_nvme(self) -> bool {
        matches!(self, Interface::NvmeGen3x4 | Interface::NvmeGen4x4)
    }
}

impl HostConfig {
    /// SATA: 8b/10b coding, so 3 Gb/s = 300 MB/s and 6 Gb/s = 600 MB/s; a command
    /// costs a Register FIS (20 B), a DMA Setup FIS (28 B) and a Set Device Bits /
    /// status FIS (20 B) plus SOF/CRC/EOF framing, ~80 B on the wire; NCQ depth 32.
    /// NVMe: PCIe gen3 8 GT/s and gen4 16 GT/s per lane, 128b/130b, x4, so 3938 and
    /// 7877 MB/s raw; a command is a 64 B submission entry fetch and a 16 B
    /// completion entry plus TLP headers (~24 B each) and doorbell writes; we charge
    /// 1 us per command for the round trips (a typical figure for an NVMe command
    /// submission-to-fetch on a host CPU), queue depth 1024 by default.
    pub fn preset(interface: Interface) -> HostConfig {
        match interface {
            Interface::Sata3g => HostConfig {
                interface,
                queue_depth: 32,
                link_mbps: 300.0,
                command_overhead: Dur(267),
                ..HostConfig::queues()
            },
            Interface::Sata6g => HostConfig {
                interface,
                queue_depth: 32,
                link_mbps: 600.0,
                command_overhead: Dur(134),
                ..HostConfig::queues()
            },
            Interface::NvmeGen3x4 => HostConfig {
                interface,
                queue_depth: 1024,
                link_mbps: 3938.0,
                command_overhead: Dur(1000),
                ..HostConfig::queues()
            },
            Interface::NvmeGen4x4 => HostConfig {
                interface,
                queue_depth: 1024,
                link_mbps: 7877.0,
                command_overhead: Dur(1000),
                ..HostConfig::queues()
            },
        }
    }
    /// The multi-queue defaults every preset shares (filled in by `preset`).
    fn queues() -> HostConfig {
        HostConfig {
            interface: Interface::Sata6g,
            queue_depth: 0,
            link_mbps: 0.0,
            command_overhead: Dur(0),
            arbitration: Default::default(),
            arbitration_burst: one_u32(),
            wrr_weights: default_wrr_weights(),
            sq_depth: default_sq_depth(),
        }
    }
    /// The link's transfer rate from `link_mbps`.
    pub fn link_rate(&self) -> Rate {
        Rate::from_mb_per_s(self.link_mbps)
    }
}

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

/// Power parameters (Lee & Won form: per-state currents at a supply voltage, and/or
/// Park et al.'s per-operation flash energies). The power crate consumes these.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PowerConfig {
    /// Name of the preset the parameters came from (`lee2011`, `park-slc`, `modern-tlc`);
    /// informational.
    pub name: String,
    /// Supply voltage of the flash chips, volts.
    pub voltage: Volts,
    /// Chip current during an array read, amperes.
    pub flash_read_current: Amps,
    /// Chip current during a program, amperes.
    pub flash_program_current: Amps,
    /// Chip current during an erase, amperes.
    pub flash_erase_current: Amps,
    /// Chip (per-die) standby current, amperes.
    pub flash_idle_current: Amps,
    /// Current of a channel's bus while it transfers, amperes (nothing when idle).
    pub flash_bus_current: Amps,
    /// Chip current while its data (or command) is clocked over the channel. None:
    /// the current of the operation the transfer serves (read current for command
    /// and data-out cycles, program current for data-in), as in Samsung K9 datasheets
    /// where ICC1 is "page read with serial access". Optional so configs may omit it.
    #[serde(default)]
    pub flash_transfer_current: Option<Amps>,
    /// Per-operation energies; when set they replace current x voltage x time for that op.
    pub flash_read_energy: Option<Joules>,
    /// Energy of one page program, joules (replaces current x voltage x time).
    pub flash_program_energy: Option<Joules>,
    /// Energy of one block erase, joules (replaces current x voltage x time).
    pub flash_erase_energy: Option<Joules>,
    /// DRAM background (standby) power, fixed. Replaced by a figure that
    /// scales with `dram.capacity` when one of the two below is set.
    pub dram_standby_power: Watts,
    /// DRAM standby power per GiB of `dram.capacity` (a device's background
    /// power over its density): standby = this x capacity / 2^30.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dram_standby_power_per_gib: Option<Watts>,
    /// DRAM standby power per device of `dram.device_size` (Micron's DDR power
    /// calculator: background power per device): standby = this x
    /// ceil(capacity / device_size).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dram_device_standby_power: Option<Watts>,
    /// DRAM power while accessed, watts.
    pub dram_active_power: Watts,
    /// Controller CPU power while busy, watts.
    pub cpu_normal_power: Watts,
    /// Controller CPU power while idle, watts.
    pub cpu_idle_power: Watts,
    /// Controller CPU power in its slow (low-power) mode, watts; see `cpu_slow_after`.
    pub cpu_slow_power: Watts,
    /// Host link PHY power while transferring and while idle.
    pub link_active_power: Watts,
    /// Host link power while idle, watts (see `link_active_power`).
    pub link_idle_power: Watts,
    /// CPU enters slow mode after this long idle (None = never).
    pub cpu_slow_after: Option<Dur>,
    /// Time the CPU takes to leave slow mode before it can work (0 in the presets).
    pub cpu_wakeup_latency: Dur,
}

impl PowerConfig {
    /// Every voltage, current, power and energy is finite and not negative
    /// (TOML takes `nan`, `inf` and `-3.3` as floats): errors name the field
    /// (`power.NAME`).
    pub fn validate(&self) -> Result<(), ConfigError> {
        let opt = |v: Option<f64>| v.unwrap_or(0.0);
        for (f, v) in [
            ("power.voltage", self.voltage.0),
            ("power.flash_read_current", self.flash_read_current.0),
            ("power.flash_program_current", self.flash_program_current.0),
            ("power.flash_erase_current", self.flash_erase_current.0),
            ("power.flash_idle_current", self.flash_idle_current.0),
            ("power.flash_bus_current", self.flash_bus_current.0),
            (
                "power.flash_transfer_current",
                opt(self.flash_transfer_current.map(|a| a.0)),
            ),
            (
                "power.flash_read_energy",
                opt(self.flash_read_energy.map(|j| j.0)),
            ),
            (
                "power.flash_program_energy",
                opt(self.flash_program_energy.map(|j| j.0)),
            ),
            (
                "power.flash_erase_energy",
                opt(self.flash_erase_energy.map(|j| j.0)),
            ),
            ("power.dram_standby_power", self.dram_standby_power.0),
            (
                "power.dram_standby_power_per_gib",
                opt(self.dram_standby_power_per_gib.map(|w| w.0)),
            ),
            (
                "power.dram_device_standby_power",
                opt(self.dram_device_standby_power.map(|w| w.0)),
            ),
            ("power.dram_active_power", self.dram_active_power.0),
            ("power.cpu_normal_power", self.cpu_normal_power.0),
            ("power.cpu_idle_power", self.cpu_idle_power.0),
            ("power.cpu_slow_power", self.cpu_slow_power.0),
            ("power.link_active_power", self.link_active_power.0),
            ("power.link_idle_power", self.link_idle_power.0),
        ] {
            if !(v.is_finite() && v >= 0.0) {
                return Err(invalid(
                    f,
                    format!("must be a finite number, not negative, got {v}"),
                ));
            }
        }
        if self.dram_standby_power_per_gib.is_some() && self.dram_device_standby_power.is_some() {
            return Err(invalid(
                "power.dram_device_standby_power",
                "give the DRAM's standby power per GiB or per device, not both \
                 (power.dram_standby_power_per_gib is set too)",
            ));
        }
        Ok(())
    }
    /// Lee & Won table 1. DRAM: the table prints "idle 878 mW, active 80 mW", which
    /// looks swapped; in every run the paper reports, DRAM energy = 80 mW x elapsed
    /// time, so standby is 80 mW here (and active 80 mW: the paper's accesses add
    /// nothing measurable). Both stay configurable.
    pub fn lee2011() -> PowerConfig {
        PowerConfig {
            name: "lee2011".into(),
            voltage: Volts(3.3),
            flash_read_current: Amps(0.015),
            flash_program_current: Amps(0.015),
            flash_erase_current: Amps(0.015),
            flash_idle_current: Amps(0.001),
            flash_bus_current: Amps(0.000_05),
            flash_transfer_current: None,
            flash_read_energy: None,
            flash_program_energy: None,
            flash_erase_energy: None,
            dram_standby_power: Watts(0.080),
            dram_standby_power_per_gib: None,
            dram_device_standby_power: None,
            dram_active_power: Watts(0.080),
            cpu_normal_power: Watts(0.259),
            cpu_idle_power: Watts(0.124),
            cpu_slow_power: Watts(0.033),
            link_active_power: Watts(0.0),
            link_idle_power: Watts(0.0),
            cpu_slow_after: None,
            cpu_wakeup_latency: Dur::ZERO,
        }
    }
    /// Park et al. table 1 flash energies per operation (read 4.72 uJ/page, program
    /// 38.04 uJ/page, erase 527.68 uJ/block); the rest as lee2011.
    pub fn park_slc() -> PowerConfig {
        PowerConfig {
            name: "park-slc".into(),
            flash_read_energy: Some(Joules(4.72e-6)),
            flash_program_energy: Some(Joules(38.04e-6)),
            flash_erase_energy: Some(Joules(527.68e-6)),
            ..Self::lee2011()
        }
    }
    /// A modern NVMe TLC drive, component by component. Representative datasheet
    /// figures of the class, to be calibrated against a real drive before drawing
    /// absolute conclusions:
    /// * flash: 3D TLC NAND datasheets (e.g. Micron's B27A/B47R ONFI 4 parts) give
    ///   VCC = 2.5-3.6 V and typical array read / program / erase currents (ICC1 /
    ///   ICC2 / ICC3) of about 25 mA, standby ISB of tens of uA; I/O at VCCQ 1.2 V
    ///   draws ~10 mA while toggling (bus current below, per channel);
    /// * controller: multi-core Cortex-R class NVMe controllers draw ~1.2 W busy and
    ///   ~0.3 W idle, ~50 mW in a low-power state (PS3/PS4 figures of consumer NVMe
    ///   drives' power-state tables);
    /// * DRAM: 1 GiB LPDDR4 ~ 40 mW self-refresh/standby, ~350 mW active;
    /// * host link: a PCIe gen3 x4 PHY ~ 0.4 W active, ~20 mW in L1.
    pub fn modern_tlc() -> PowerConfig {
        PowerConfig {
            name: "modern-tlc".into(),
            voltage: Volts(3.3),
            flash_read_current: Amps(0.025),
            flash_program_current: Amps(0.025),
            flash_erase_current: Amps(0.025),
            flash_idle_current: Amps(0.000_05),
            flash_bus_current: Amps(0.010),
            flash_read_energy: None,
            flash_program_energy: None,
            flash_erase_energy: None,
            dram_standby_power: Watts(0.040),
            dram_active_power: Watts(0.350),
            cpu_normal_power: Watts(1.2),
            cpu_idle_power: Watts(0.3),
            cpu_slow_power: Watts(0.05),
            link_active_power: Watts(0.4),
            link_idle_power: Watts(0.02),
            cpu_slow_after: None,
            cpu_wakeup_latency: Dur::ZERO,
            ..Self::lee2011()
        }
    }
    /// Every built-in power preset: lee2011, park-slc, modern-tlc.
    pub fn presets() -> Vec<PowerConfig> {
        vec![Self::lee2011(), Self::park_slc(), Self::modern_tlc()]
    }
    /// The built-in power preset `name`; an error lists the known names.
    pub fn preset(name: &str) -> Result<PowerConfig, ConfigError> {
        find_preset("power", name, Self::presets(), |p| &p.name)
    }
}

/// Preconditioning before the measured phase.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Precondition {
    /// No preconditioning: the drive starts empty (the default).
    None,
    /// Write the whole logical space sequentially once.
    Fill,
    /// Fill, then uniform random page writes until write amplification is steady
    /// (SNIA PTS-style steady-state window).
    Steady,
}

/// Simulation control (`[sim]`): seed, preconditioning, time limit, ramp time, drain, flows.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SimConfig {
    /// Seed of every random choice of the run (workload, GC, ...); default 1. The same seed
    /// gives the same report.
    pub seed: u64,
    /// Preconditioning before the measured phase (default none).
    pub precondition: Precondition,
    /// Seed of preconditioning's random writes and of the FTL's random
    /// choices while it runs (default: `seed`). The measured phase draws from
    /// `seed` alone, so runs that differ only in it start from the same
    /// preconditioned drive (a sweep sets it per drive: see
    /// [`SsdConfig::drive_shape`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub precondition_seed: Option<u64>,
    /// Stop the measured phase at this simulated time (None = when the workload ends).
    pub time_limit: Option<Dur>,
    /// fio's `ramp_time`: the workload runs from time 0, but every statistic
    /// of the report (host, latency, flash, FTL, scheduler, utilization,
    /// page cache, application) starts at this simulated time; requests in
    /// flight then count when they complete. A fio-style workload's
    /// `number_ios` (its `size`) counts from here, as fio's does. The power
    /// model's energy and power still cover the whole run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ramp_time: Option<Dur>,
    /// After the last request, keep simulating until in-flight and idle-time GC is
    /// done; that tail is reported separately (run.drain_s, and by the power model).
    pub drain: bool,
    /// With `[[flow]]`s: how the flows divide the logical space.
    #[serde(default)]
    pub flow_space: crate::flows::FlowSpace,
    /// With two or more flows: also run each flow alone (same drive, same
    /// preconditioning, same seed) to report its slowdown and the run's
    /// fairness.
    #[serde(default = "yes")]
    pub alone_runs: bool,
}

fn yes() -> bool {
    true
}

impl SimConfig {
    /// The seed preconditioning draws from (`precondition_seed`, else `seed`).
    pub fn precondition_seed(&self) -> u64 {
        self.precondition_seed.unwrap_or(self.seed)
    }
}

/// The whole simulated system and its workload: what `ssdsim run` resolves.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SsdConfig {
    /// The NAND chips (`[nand]`, or a preset by `nand_preset`).
    pub nand: NandConfig,
    /// Channels and ways (`[layout]`).
    pub layout: LayoutConfig,
    /// The controller CPU and flash scheduler (`[controller]`).
    pub controller: ControllerConfig,
    /// The controller's DRAM and write buffer (`[dram]`).
    pub dram: DramConfig,
    /// The host interface (`[host]`).
    pub host: HostConfig,
    /// The FTL (`[ftl]`).
    pub ftl: FtlConfig,
    /// The host I/O scheduler (`[sched]`).
    pub sched: SchedConfig,
    /// Power parameters (`[power]`).
    pub power: PowerConfig,
    /// The fio-style workload generator (`[workload]`).
    pub workload: crate::workload::WorkloadConfig,
    /// Simulation control (`[sim]`).
    pub sim: SimConfig,
    /// Replay a block trace instead of the fio-style generator (`[trace]`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace: Option<TraceSpec>,
    /// How a trace is replayed (`[replay]`).
    #[serde(default)]
    pub replay: crate::trace::ReplayOptions,
    /// Use a workload personality instead of the fio-style generator (`[personality]`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub personality: Option<crate::personality::PersonalityConfig>,
    /// The host's page cache and writeback, used by buffered workloads
    /// (`workload.direct = false`, `personality.direct = false`).
    #[serde(default)]
    pub page_cache: crate::pagecache::PageCacheConfig,
    /// The file system of file-level personalities (`[fs]`, `--fs`).
    #[serde(default)]
    pub fs: crate::fs::FsConfig,
    /// Tenants (`[[flow]]`): several workloads at once, each with its own
    /// queue and statistics (see [`crate::flows`]). Empty: the one workload
    /// above.
    #[serde(default, rename = "flow", skip_serializing_if = "Vec::is_empty")]
    pub flows: Vec<crate::flows::FlowConfig>,
}

impl SsdConfig {
    /// The fields that shape the drive's state after preconditioning, as
    /// one line of JSON: [`SsdConfig::drive_shape`] and the seed
    /// preconditioning draws from (`sim.precondition_seed`, by default
    /// `sim.seed`). Two configurations of one shape precondition to the same
    /// state (the engine's functional preconditioning reads nothing else), so
    /// a state saved under one may stand in for preconditioning under the
    /// other ([`crate::engine::DriveState`]).
    pub fn state_shape(&self) -> String {
        self.shape(Some(self.sim.precondition_seed()))
    }

    /// The drive and its preconditioning, without a seed: the NAND and its
    /// array (`[nand]`, `[layout]`), the FTL and everything it is built from
    /// (`[ftl]`), and `sim.precondition`. The sections it leaves out
    /// (controller, DRAM, host link, scheduler, power, workload, file
    /// system, flows) only time or drive the measured phase.
    pub fn drive_shape(&self) -> String {
        self.shape(None)
    }

    fn shape(&self, seed: Option<u64>) -> String {
        #[derive(Serialize)]
        struct Sim {
            precondition: Precondition,
            #[serde(skip_serializing_if = "Option::is_none")]
            precondition_seed: Option<u64>,
        }
        #[derive(Serialize)]
        struct Shape<'a> {
            nand: &'a NandConfig,
            layout: &'a LayoutConfig,
            ftl: &'a FtlConfig,
            sim: Sim,
        }
        serde_json::to_string(&Shape {
            nand: &self.nand,
            layout: &self.layout,
            ftl: &self.ftl,
            sim: Sim {
                precondition: self.sim.precondition,
                precondition_seed: seed,
            },
        })
        .expect("a configuration serialises to JSON")
    }

    /// Does the workload go through the page cache?
    pub fn buffered(&self) -> bool {
        if self.trace.is_some() {
            return false;
        }
        match &self.personality {
            Some(p) => !p.is_direct(),
            None => !self.workload.direct,
        }
    }
}

impl Default for SsdConfig {
    /// The Lee & Won reference SSD: 8 channels x 1 chip of chip2, page mapping,
    /// a 200 MHz controller CPU (the ARM920T of their power table), SATA 6 Gb/s.
    fn default() -> Self {
        SsdConfig {
            nand: NandConfig::preset("chip2").expect("chip2 preset"),
            layout: LayoutConfig {
                channels: 8,
                ways: 1,
            },
            controller: ControllerConfig {
                cpu_mhz: 200,
                cycles_per_command: 1000,
                cycles_per_map_lookup: 100,
                cycles_per_gc_candidate: 20,
                cycles_per_gc_page: 200,
                prioritize_reads: true,
            },
            dram: DramConfig {
                capacity: DramCapacity::Bytes(Size::mib(64)),
                device_size: None,
                access_latency: Dur(50),
                write_buffer: Size(0),
                flush: FlushPolicy::EvictLru,
                refresh: None,
            },
            host: HostConfig::preset(Interface::Sata6g),
            ftl: FtlConfig {
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
            },
            sched: SchedConfig::default(),
            power: PowerConfig::lee2011(),
            workload: crate::workload::WorkloadConfig::default(),
            sim: SimConfig {
                seed: 1,
                precondition: Precondition::None,
                precondition_seed: None,
                time_limit: None,
                ramp_time: None,
                drain: false,
                flow_space: Default::default(),
                alone_runs: true,
            },
            trace: None,
            replay: crate::trace::ReplayOptions::default(),
            personality: None,
            page_cache: Default::default(),
            fs: Default::default(),
            flows: Vec::new(),
        }
    }
}

impl SsdConfig {
    /// Default device with the NAND preset `name`. park-slc gives Park et al.'s
    /// 1 GiB drive (8 channels x 1 chip) and its per-operation power preset.
    pub fn with_nand(name: &str) -> Result<SsdConfig, ConfigError> {
        let mut c = SsdConfig {
            nand: NandConfig::preset(name)?,
            ..SsdConfig::default()
        };
        if name == "park-slc" {
            c.power = PowerConfig::park_slc();
        }
        Ok(c)
    }

    /// This configuration with device preset `name` applied over it
    /// ([`crate::devices`]): the fields the preset sets replace these.
    pub fn with_device(self, name: &str) -> Result<SsdConfig, ConfigError> {
        let d = crate::devices::device_preset(name)?;
        SsdConfig::from_toml_over(Some(self), d.toml, &format!("device preset {name}"))
    }

    /// Parse TOML text and merge it over the preset it names (`nand_preset = "..."`
    /// at top level, default chip2) or over `base`. Unknown fields are errors that
    /// name the field; `source_name` (a path) prefixes every message.
    pub fn from_toml_over(
        base: Option<SsdConfig>,
        text: &str,
        source_name: &str,
    ) -> Result<SsdConfig, ConfigError> {
        // Kept hand-written rather than figment or config: the layers are
        // already preset -> this TOML -> `--set`/flags (`ssdsim::set_field`),
        // the presets named inside the file (`device`, `nand_preset`, ...)
        // reorder the layers, a flow's workload defaults field by field, and
        // every error names the file and the field (`nand.t_r: ...`) through
        // serde_path_to_error; neither crate reads presets named in the data,
        // and their errors would replace these messages (issue 29).
        let perr = |m: String| ConfigError::Parse {
            source_name: source_name.to_string(),
            message: m,
        };
        let mut file: toml::Table = text
            .parse::<toml::Table>()
            .map_err(|e| perr(e.to_string()))?;
        let mut base = base.unwrap_or_default();
        // A device preset first: everything else the text says goes over it.
        if let Some(v) = file.remove("device") {
            let name = v
                .as_str()
                .ok_or_else(|| perr("device: expected a string".into()))?;
            base = base.with_device(name)?;
        }
        if let Some(v) = file.remove("nand_preset") {
            let name = v
                .as_str()
                .ok_or_else(|| perr("nand_preset: expected a string".into()))?;
            base = SsdConfig {
                nand: NandConfig::preset(name)?,
                ..base
            };
        }
        if let Some(v) = file.remove("power_preset") {
            let name = v
                .as_str()
                .ok_or_else(|| perr("power_preset: expected a string".into()))?;
            base.power = PowerConfig::preset(name)?;
        }
        if let Some(v) = file.remove("interface") {
            let name = v
                .as_str()
                .ok_or_else(|| perr("interface: expected a string".into()))?;
            let i: Interface = Interface::deserialize(toml::Value::String(name.into()))
                .map_err(|e| perr(format!("interface: {e}")))?;
            base.host = HostConfig::preset(i);
        }
        let mut merged = toml::Value::try_from(&base).map_err(|e| perr(e.to_string()))?;
        deep_merge(&mut merged, toml::Value::Table(file));
        // A flow's workload defaults field by field, as `[workload]` does.
        if let Some(toml::Value::Array(flows)) = merged.get_mut("flow") {
            let w = toml::Value::try_from(crate::workload::WorkloadConfig::default())
                .map_err(|e| perr(e.to_string()))?;
            for f in flows {
                if let Some(fw) = f.get_mut("workload").filter(|v| v.is_table()) {
                    let mut full = w.clone();
                    deep_merge(&mut full, fw.clone());
                    *fw = full;
                }
            }
        }
        // The merged value has no place in the file, so an error names the
        // field it is in (`nand.t_r: ...`) instead.
        serde_path_to_error::deserialize::<_, SsdConfig>(merged).map_err(|e| {
            let path = e.path().to_string();
            let m = e.into_inner().message().to_string();
            perr(if path == "." {
                m
            } else {
                format!("{path}: {m}")
            })
        })
    }

    /// Serialize the fully resolved configuration to TOML (`validate` has
    /// checked that it can be).
    pub fn to_toml(&self) -> String {
        toml::to_string_pretty(self).expect("config serializes")
    }

    /// Check the configuration and derive the settings the engine runs on.
    pub fn validate(&self) -> Result<Settings, ConfigError> {
        self.check_writable()?;
        Settings::from_config(self)
    }

    /// The report echoes the configuration as TOML, whose integers are signed
    /// 64-bit: a value set from the library or a fio job beyond that range is
    /// refused here, naming its field, rather than failing at report time.
    pub fn check_writable(&self) -> Result<(), ConfigError> {
        // Almost every configuration: walked once, nothing built. The rest is
        // looked at again as a JSON tree, for the dotted path of the first
        // integer out of range (in sorted key order), as it always was named.
        if toml_range::fits(self) {
            return Ok(());
        }
        /// The dotted path of the first integer beyond `i64::MAX` in `v`.
        fn too_big(v: &serde_json::Value, path: &mut Vec<String>) -> Option<(String, u64)> {
            match v {
                serde_json::Value::Number(n) => match n.as_u64() {
                    Some(x) if x > i64::MAX as u64 => Some((path.join("."), x)),
                    _ => None,
                },
                serde_json::Value::Object(m) => m.iter().find_map(|(k, v)| {
                    path.push(k.clone());
                    let r = too_big(v, path);
                    path.pop();
                    r
                }),
                serde_json::Value::Array(a) => a.iter().enumerate().find_map(|(i, v)| {
                    path.push(i.to_string());
                    let r = too_big(v, path);
                    path.pop();
                    r
                }),
                _ => None,
            }
        }
        let v = serde_json::to_value(self).map_err(|e| invalid("config", e.to_string()))?;
        if let Some((field, x)) = too_big(&v, &mut Vec::new()) {
            return Err(invalid(
                &field,
                format!(
                    "{x} is out of range: the configuration is written as TOML, \
                     whose integers are at most {}",
                    i64::MAX
                ),
            ));
        }
        Ok(())
    }
}

/// Merge `over` into `base`: tables recursively, everything else replaced.
pub fn deep_merge(base: &mut toml::Value, over: toml::Value) {
    match (base, over) {
        (toml::Value::Table(b), toml::Value::Table(o)) => {
            for (k, v) in o {
                match b.get_mut(&k) {
                    Some(bv) if bv.is_table() && v.is_table() => deep_merge(bv, v),
                    _ => {
                        b.insert(k, v);
                    }
                }
            }
        }
        (b, o) => *b = o,
    }
}

/// The longest single operation (flash read, program, erase, page transfer,
/// DRAM access, command overhead, CPU wake-up) a configuration may give.
pub const MAX_OP_TIME: Dur = Dur(1_000_000_000);
/// The range of a transfer rate (host link, NAND bus) in MB/s: rates are kept
/// in bytes per millisecond, so a slower one would round to zero.
pub const MIN_RATE_MBPS: f64 = 0.001;
/// Upper end of the transfer-rate range in MB/s (see [`MIN_RATE_MBPS`]).
pub const MAX_RATE_MBPS: f64 = 1e9;
/// The most controller cycles one step of work may take.
pub const MAX_CYCLES: u64 = 1_000_000_000;

/// Validated, derived settings the engine and FTLs run on.
#[derive(Clone, Debug)]
pub struct Settings {
    /// The drive's shape: channels, ways, dies, planes, blocks, pages.
    pub geometry: Geometry,
    /// Logical pages the host sees: physical pages minus the log area, over (1 + `ftl.op`);
    /// whole blocks for block-mapping FTLs.
    pub logical_pages: u64,
    /// The NAND channel's transfer rate.
    pub bus: Rate,
    /// The host link's transfer rate.
    pub link: Rate,
    /// The configuration these settings were derived from.
    pub config: SsdConfig,
    /// `dram.capacity` in bytes; for `"fit"`, None until [`Settings::fit_dram`].
    dram_bytes: Option<u64>,
}

impl Settings {
    fn from_config(c: &SsdConfig) -> Result<Settings, ConfigError> {
        let n = &c.nand;
        let nz = |v: u32, f: &str| {
            if v == 0 {
                Err(invalid(f, "must be at least 1"))
            } else {
                Ok(())
            }
        };
        nz(c.layout.channels, "layout.channels")?;
        nz(c.layout.ways, "layout.ways")?;
        nz(n.dies_per_chip, "nand.dies_per_chip")?;
        nz(n.planes_per_die, "nand.planes_per_die")?;
        nz(n.blocks_per_plane, "nand.blocks_per_plane")?;
        nz(n.pages_per_block, "nand.pages_per_block")?;
        nz(n.bus_width_bits, "nand.bus_width_bits")?;
        if n.page_size.0 < 512 || !n.page_size.0.is_multiple_of(512) {
            return Err(invalid(
                "nand.page_size",
                format!("must be a multiple of 512 bytes, got {}", n.page_size.0),
            ));
        }
        if n.page_size.0 > u32::MAX as u64 {
            return Err(invalid("nand.page_size", "too large"));
        }
        if n.planes_per_die > 16 {
            return Err(invalid(
                "nand.planes_per_die",
                format!(
                    "at most 16 (multi-plane batches are tracked per die in a 16-bit set), got {}",
                    n.planes_per_die
                ),
            ));
        }
        if n.pages_per_block > 65_535 {
            return Err(invalid("nand.pages_per_block", "at most 65535"));
        }
        crate::hw::nand::check_models(n)?;
        if let Some(r) = &c.dram.refresh {
            r.check()?;
        }
        if n.suspend.is_some() {
            if !c.controller.prioritize_reads {
                return Err(invalid(
                    "nand.suspend",
                    "suspension serves reads first; it needs controller.prioritize_reads = true",
                ));
            }
            if c.power.flash_program_energy.is_some() || c.power.flash_erase_energy.is_some() {
                return Err(invalid(
                    "nand.suspend",
                    format!(
                        "the power preset {:?} charges programs and erases per operation \
                         (power.flash_program_energy/flash_erase_energy), which would count a \
                         suspended operation's two pieces twice: use a current-based power preset",
                        c.power.name
                    ),
                ));
            }
        }
        if n.t_r.0 == 0 || n.t_prog.0 == 0 || n.t_bers.0 == 0 {
            return Err(invalid(
                "nand.t_r/t_prog/t_bers",
                "flash operation times must be non-zero",
            ));
        }
        // Each operation time is booked on a busy-until clock: beyond a second
        // it is no device that was meant, and far beyond it sums wrap.
        for (f, d) in [
            ("nand.t_r", n.t_r),
            ("nand.t_prog", n.t_prog),
            ("nand.t_bers", n.t_bers),
            ("dram.access_latency", c.dram.access_latency),
            ("host.command_overhead", c.host.command_overhead),
            ("power.cpu_wakeup_latency", c.power.cpu_wakeup_latency),
        ] {
            if d > MAX_OP_TIME {
                return Err(invalid(
                    f,
                    format!("{d} is out of range: an operation time is at most {MAX_OP_TIME}"),
                ));
            }
        }
        match n.bus {
            BusSpeed::PageTime(t) if t.0 == 0 => {
                return Err(invalid("nand.bus", "page transfer time must be non-zero"))
            }
            BusSpeed::PageTime(t) if t > MAX_OP_TIME => {
                return Err(invalid(
                    "nand.bus",
                    format!("page transfer time {t} is out of range: at most {MAX_OP_TIME}"),
                ))
            }
            BusSpeed::MegaBytes(x) | BusSpeed::MegaTransfers(x) if !(x > 0.0 && x.is_finite()) => {
                return Err(invalid("nand.bus", "rate must be positive"))
            }
            _ => {}
        }
        let bus = n.bus_rate();
        if !(MIN_RATE_MBPS..=MAX_RATE_MBPS).contains(&bus.mb_per_s()) {
            return Err(invalid(
                "nand.bus",
                format!(
                    "a rate of {} MB/s is out of range: {MIN_RATE_MBPS}..={MAX_RATE_MBPS} MB/s \
                     (rates are kept to 0.001 MB/s: a slower one would be infinitely fast)",
                    bus.mb_per_s()
                ),
            ));
        }
        for (f, v) in [
            (
                "controller.cycles_per_command",
                c.controller.cycles_per_command,
            ),
            (
                "controller.cycles_per_map_lookup",
                c.controller.cycles_per_map_lookup,
            ),
            (
                "controller.cycles_per_gc_candidate",
                c.controller.cycles_per_gc_candidate,
            ),
            (
                "controller.cycles_per_gc_page",
                c.controller.cycles_per_gc_page,
            ),
        ] {
            if v > MAX_CYCLES {
                return Err(invalid(
                    f,
                    format!("{v} is out of range: at most {MAX_CYCLES} cycles"),
                ));
            }
        }
        let geometry = Geometry {
            channels: c.layout.channels,
            ways: c.layout.ways,
            dies: n.dies_per_chip,
            planes: n.planes_per_die,
            blocks_per_plane: n.blocks_per_plane,
            pages_per_block: n.pages_per_block,
            page_size: n.page_size.0 as u32,
        };
        let total = c.layout.channels as u128
            * c.layout.ways as u128
            * n.dies_per_chip as u128
            * n.planes_per_die as u128
            * n.blocks_per_plane as u128
            * n.pages_per_block as u128;
        if total >= u32::MAX as u128 {
            return Err(invalid(
                "geometry",
                format!("{total} physical pages exceed the 2^32-1 a page number can address; use larger pages or fewer blocks"),
            ));
        }
        if c.sim.seed > i64::MAX as u64 {
            return Err(invalid(
                "sim.seed",
                "must be below 2^63 (TOML integers are signed 64-bit)",
            ));
        }
        if c.controller.cpu_mhz == 0 {
            return Err(invalid("controller.cpu_mhz", "must be at least 1"));
        }
        if c.host.queue_depth == 0 || c.host.queue_depth > 65_535 {
            return Err(invalid(
                "host.queue_depth",
                format!("must be in 1..=65535, got {}", c.host.queue_depth),
            ));
        }
        if !(c.host.link_mbps > 0.0 && c.host.link_mbps.is_finite()) {
            return Err(invalid("host.link_mbps", "must be positive"));
        }
        if !(MIN_RATE_MBPS..=MAX_RATE_MBPS).contains(&c.host.link_mbps) {
            return Err(invalid(
                "host.link_mbps",
                format!(
                    "{} is out of range: {MIN_RATE_MBPS}..={MAX_RATE_MBPS} MB/s \
                     (rates are kept to 0.001 MB/s: a slower one would be infinitely fast)",
                    c.host.link_mbps
                ),
            ));
        }
        let op = c.ftl.op;
        if !(op.is_finite() && op > 0.0) {
            return Err(invalid(
                "ftl.op",
                format!("over-provisioning must be positive, got {op}"),
            ));
        }
        let la = c.ftl.log_area;
        if !(la.is_finite() && (0.0..0.5).contains(&la)) {
            return Err(invalid(
                "ftl.log_area",
                format!("must be a fraction in [0, 0.5), got {la}"),
            ));
        }
        if c.ftl.drain_merge && !c.sim.drain {
            return Err(invalid(
                "ftl.drain_merge",
                "merges the log blocks in the drain, but sim.drain is off: set sim.drain = true",
            ));
        }
        let sb = c.ftl.superblock;
        if sb == 0 {
            return Err(invalid("ftl.superblock", "must be at least 1"));
        }
        if c.ftl.maps_blocks() && sb > 1 {
            let planes = geometry.total_planes();
            if !planes.is_multiple_of(sb) {
                return Err(invalid(
                    "ftl.superblock",
                    format!(
                        "{sb} blocks per super-block do not divide the drive's {planes} planes"
                    ),
                ));
            }
            if n.pages_per_block as u64 * sb as u64 > u16::MAX as u64 {
                return Err(invalid(
                    "ftl.superblock",
                    format!(
                        "{sb} blocks of {} pages make a super-block of more than {} pages",
                        n.pages_per_block,
                        u16::MAX
                    ),
                ));
            }
        }
        // The unit a block-mapped FTL maps: a block, or a super-block.
        let ppb = c.ftl.unit_pages(n.pages_per_block);
        let units = geometry.total_pages() / ppb;
        // Hybrid FTLs: the log blocks come out of the physical space first, the rest
        // is data + over-provisioning; block-mapped FTLs expose whole blocks.
        let log_pages = if c.ftl.has_log_area() {
            c.ftl.log_blocks(units) * ppb
        } else {
            0
        };
        let mut logical_pages =
            (geometry.total_pages().saturating_sub(log_pages) as f64 / (1.0 + op)).floor() as u64;
        if c.ftl.maps_blocks() {
            logical_pages = logical_pages / ppb * ppb;
        }
        if logical_pages == 0 {
            // Name what the user set: the over-provisioning alone leaves no
            // logical page (ftl.op = 1e300), or the log area with it.
            let op_alone = (geometry.total_pages() as f64 / (1.0 + op)).floor() as u64;
            let op_alone = if c.ftl.maps_blocks() {
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
                        if c.ftl.maps_blocks() {
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
        if c.ftl.last_seq_threshold.0 == 0 {
            return Err(invalid("ftl.last_seq_threshold", "must be at least 1 byte"));
        }
        // The FTL needs, per plane, room for its GC threshold plus an open block and
        // at least one block's worth of reclaimable space.
        let spare_blocks_per_plane = (geometry.total_pages() - log_pages - logical_pages)
            / n.pages_per_block as u64
            / geometry.total_planes() as u64;
        let need = c.ftl.gc_threshold_blocks as u64 + 2;
        if spare_blocks_per_plane < need {
            return Err(invalid(
                "ftl.op",
                format!(
                    "over-provisioning {op} leaves {spare_blocks_per_plane} spare blocks per plane; the FTL needs at least {need} (gc_threshold_blocks + 2): raise op or blocks_per_plane"
                ),
            ));
        }
        if c.ftl.plane_allocation == PlaneAllocation::Static
            && c.ftl.allocation == Allocation::LeastBusy
        {
            return Err(invalid(
                "ftl.plane_allocation",
                "\"static\" fixes a page's plane by its address, \"least-busy\" chooses it by the dies' queues: pick one (a striping order such as \"cwdp\" with static)",
            ));
        }
        if c.ftl.gc_threshold_blocks == 0 {
            return Err(invalid("ftl.gc_threshold_blocks", "must be at least 1"));
        }
        if c.ftl.gc_mode == Some(GcMode::Paced) && c.ftl.maps_blocks() {
            return Err(invalid(
                "ftl.gc_mode",
                format!(
                    "\"paced\" paces the page-mapped FTLs' GC (page, dftl); {} merges log blocks, which are not paced: use \"blocking\"",
                    c.ftl.kind
                ),
            ));
        }
        if let Some(soft) = c.ftl.gc_soft_threshold_blocks {
            if soft <= c.ftl.gc_threshold_blocks {
                return Err(invalid(
                    "ftl.gc_soft_threshold_blocks",
                    format!(
                        "{soft} must be above the hard threshold ftl.gc_threshold_blocks ({})",
                        c.ftl.gc_threshold_blocks
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
        if let GcPolicy::Windowed(f) = c.ftl.gc_policy {
            if !(f > 0.0 && f <= 1.0) {
                return Err(invalid(
                    "ftl.gc_policy",
                    format!("window fraction must be in (0, 1] (a window of no candidates chooses nothing), got {f}"),
                ));
            }
        }
        if c.ftl.cmt_entry_bytes == 0 {
            return Err(invalid("ftl.cmt_entry_bytes", "must be at least 1"));
        }
        if c.ftl.cmt_size.0 < c.ftl.cmt_entry_bytes as u64 {
            return Err(invalid(
                "ftl.cmt_size",
                format!(
                    "{} bytes cannot hold one {}-byte entry (ftl.cmt_entry_bytes)",
                    c.ftl.cmt_size.0, c.ftl.cmt_entry_bytes
                ),
            ));
        }
        c.sched.validate()?;
        c.power.validate()?;
        if c.dram.device_size.is_some_and(|d| d.0 == 0) {
            return Err(invalid("dram.device_size", "must be at least 1 byte"));
        }
        if c.dram.capacity == DramCapacity::Fit && c.dram.device_size.is_none() {
            return Err(invalid(
                "dram.capacity",
                "\"fit\" rounds the FTL's need up to whole DRAM devices: \
                 set dram.device_size (the bytes of one device, e.g. \"512MiB\" for a 4 Gb part)",
            ));
        }
        if c.power.dram_device_standby_power.is_some() && c.dram.device_size.is_none() {
            return Err(invalid(
                "power.dram_device_standby_power",
                "is per DRAM device: set dram.device_size (the bytes of one device)",
            ));
        }
        if let Some(cap) = c.dram.capacity.bytes() {
            if c.dram.write_buffer.0 > cap {
                return Err(invalid("dram.write_buffer", "larger than dram.capacity"));
            }
        }
        // The buffer holds whole logical pages: a size that is not a multiple
        // of the page would be rounded down without a word (to nothing, below
        // one page).
        if !c.dram.write_buffer.0.is_multiple_of(n.page_size.0) {
            return Err(invalid(
                "dram.write_buffer",
                format!(
                    "must be a whole number of pages ({} B each), got {} B",
                    n.page_size.0, c.dram.write_buffer.0
                ),
            ));
        }
        if c.sim.time_limit.is_some_and(|t| t.0 == 0) {
            return Err(invalid(
                "sim.time_limit",
                "must be positive (leave it out for no limit)",
            ));
        }
        if let Some(r) = c.sim.ramp_time {
            if r.0 == 0 {
                return Err(invalid(
                    "sim.ramp_time",
                    "must be positive (leave it out for no ramp)",
                ));
            }
            if let Some(t) = c.sim.time_limit.filter(|t| *t <= r) {
                return Err(invalid(
                    "sim.ramp_time",
                    format!(
                        "{r} is not before sim.time_limit {t}: nothing would be measured \
                         (the time limit counts from the start of the run, ramp included)"
                    ),
                ));
            }
        }
        c.replay.validate()?;
        c.fs.validate()?;
        let file_level = |p: Option<&crate::personality::PersonalityConfig>| {
            p.is_some_and(|p| p.level == crate::personality::PersonalityLevel::File)
        };
        let any_file_level = file_level(c.personality.as_ref()) && c.trace.is_none()
            || c.flows.iter().any(|f| file_level(f.personality.as_ref()));
        if !any_file_level && c.fs != crate::fs::FsConfig::default() {
            return Err(invalid(
                "fs",
                "a file system is laid out by file-level personalities (personality.level = \"file\"); this workload addresses the block device",
            ));
        }
        let logical = logical_pages * n.page_size.0;
        if c.flows.is_empty() {
            check_source(
                "",
                &c.workload,
                c.personality.as_ref(),
                c.trace.as_ref(),
                logical,
            )?;
            if c.buffered() {
                c.page_cache.validate()?;
            }
        } else {
            c.workload.validate(logical)?;
            check_flows(c, logical)?;
        }
        Ok(Settings {
            geometry,
            logical_pages,
            bus: n.bus_rate(),
            link: c.host.link_rate(),
            config: c.clone(),
            dram_bytes: c.dram.capacity.bytes(),
        })
    }

    /// The DRAM's capacity in bytes: `dram.capacity`, or for `"fit"` what
    /// [`Settings::fit_dram`] resolved (None before).
    pub fn dram_bytes(&self) -> Option<u64> {
        self.dram_bytes
    }

    /// Resolve `dram.capacity = "fit"` once the FTL is built: the FTL's
    /// mapping tables (`Ftl::mapping_table_bytes`) plus the write buffer,
    /// rounded up to a whole number of `dram.device_size` devices (at least
    /// one). A fixed capacity stays as it is; calling it again changes nothing.
    pub fn fit_dram(&mut self, mapping_table_bytes: u64) {
        let d = &self.config.dram;
        if d.capacity != DramCapacity::Fit || self.dram_bytes.is_some() {
            return;
        }
        let dev = d.device_size.map_or(1, |s| s.0.max(1));
        let need = mapping_table_bytes.saturating_add(d.write_buffer.0);
        let devices = need.div_ceil(dev).max(1);
        self.dram_bytes = Some(devices.saturating_mul(dev));
    }

    /// DRAM devices: the capacity over `dram.device_size`, rounded up (None
    /// without a device size or before `"fit"` is resolved).
    pub fn dram_devices(&self) -> Option<u64> {
        let dev = self.config.dram.device_size?.0.max(1);
        Some(self.dram_bytes?.div_ceil(dev))
    }

    /// The DRAM's standby (background) power in watts: per GiB or per device
    /// of the capacity when the power configuration gives one of those, else
    /// the fixed `power.dram_standby_power`; plus, with `[dram.refresh]`,
    /// the mean refresh power `dram.refresh.power * t_rfc / t_refi`. An
    /// error naming `dram.capacity` when it scales with a `"fit"` capacity
    /// not resolved yet.
    pub fn dram_standby_power(&self) -> Result<f64, ConfigError> {
        let alone = self.dram_standby_power_alone()?;
        Ok(match &self.config.dram.refresh {
            None => alone,
            Some(r) => alone + r.power.0 * r.busy_fraction(),
        })
    }

    /// [`Settings::dram_standby_power`] without refresh.
    fn dram_standby_power_alone(&self) -> Result<f64, ConfigError> {
        let p = &self.config.power;
        if p.dram_standby_power_per_gib.is_none() && p.dram_device_standby_power.is_none() {
            return Ok(p.dram_standby_power.0);
        }
        let unresolved = || {
            invalid(
                "dram.capacity",
                "\"fit\" is known once the FTL is built (Settings::fit_dram): \
                 the DRAM's standby power scales with it",
            )
        };
        let bytes = self.dram_bytes.ok_or_else(unresolved)?;
        Ok(
            match (p.dram_standby_power_per_gib, p.dram_device_standby_power) {
                (Some(w), _) => w.0 * bytes as f64 / (1u64 << 30) as f64,
                (None, Some(w)) => w.0 * self.dram_devices().ok_or_else(unresolved)? as f64,
                (None, None) => unreachable!("checked above"),
            },
        )
    }

    /// Host-visible capacity in bytes (`logical_pages` x page size).
    pub fn logical_bytes(&self) -> u64 {
        self.logical_pages * self.geometry.page_size as u64
    }
    /// Time to clock the command/address cycles of one operation on the channel.
    pub fn cmd_time(&self) -> Dur {
        self.bus.time_for(self.config.nand.cmd_addr_bytes as u64)
    }
    /// Time to move one page over a channel.
    pub fn page_xfer_time(&self) -> Dur {
        self.bus.time_for(self.geometry.page_size as u64)
    }
    /// Time `cycles` controller cycles take at `controller.cpu_mhz`, rounded up to whole ns.
    pub fn cycles(&self, cycles: u64) -> Dur {
        // ns = cycles * 1000 / MHz, rounded up.
        Dur((cycles * 1000).div_ceil(self.config.controller.cpu_mhz as u64))
    }
}

/// Check one workload source: the fio-style `w` (used when neither a
/// personality nor a trace is given), `p` or `t`. `prefix` is prepended to
/// the field names of errors (`""` at the top level, `"flow.1."` in a flow).
fn check_source(
    prefix: &str,
    w: &crate::workload::WorkloadConfig,
    p: Option<&crate::personality::PersonalityConfig>,
    t: Option<&TraceSpec>,
    logical_bytes: u64,
) -> Result<(), ConfigError> {
    let f = |x: &str| format!("{prefix}{x}");
    w.validate(logical_bytes).map_err(|e| match e {
        ConfigError::Invalid { field, reason } if !prefix.is_empty() => ConfigError::Invalid {
            field: f(&field),
            reason,
        },
        e => e,
    })?;
    if let Some(t) = t {
        if let Some(fmt) = &t.format {
            fmt.parse::<crate::trace::TraceFormat>()
                .map_err(|e| invalid(&f("trace.format"), e.to_string()))?;
        }
        if t.path.is_empty() {
            return Err(invalid(&f("trace.path"), "empty path"));
        }
    }
    if let Some(p) = p {
        if p.level == crate::personality::PersonalityLevel::File {
            if p.is_direct() {
                return Err(invalid(
                    &f("personality.direct"),
                    "a file-level personality runs buffered: its data and its metadata go through the page cache (Filebench's default directio=0)",
                ));
            }
            crate::filebench::FileParams::from_config(p)?;
        } else {
            // Knobs of Filebench's file-level flowops: refused rather
            // than ignored.
            for (set, x) in [
                (p.prealloc_percent.is_some(), "personality.prealloc_percent"),
                (p.db_writers.is_some(), "personality.db_writers"),
            ] {
                if set {
                    return Err(invalid(
                        &f(x),
                        "a knob of the file-level personalities (personality.level = \"file\")",
                    ));
                }
            }
        }
    }
    if t.is_some() && p.is_some() {
        return Err(invalid(
            &f("personality"),
            "a run replays a trace or runs a personality, not both",
        ));
    }
    if p.is_none() && t.is_none() {
        if w.direct && (w.sync || w.fsync > 0 || w.end_fsync) {
            let x = if w.sync {
                "workload.sync"
            } else if w.fsync > 0 {
                "workload.fsync"
            } else {
                "workload.end_fsync"
            };
            return Err(invalid(
                &f(x),
                format!(
                    "acts on the page cache: it needs buffered I/O ({} = false)",
                    f("workload.direct")
                ),
            ));
        }
        if !w.direct && w.rate_iops.is_some() {
            return Err(invalid(
                &f("workload.direct"),
                "buffered I/O is made by application threads (closed loop); rate_iops needs direct = true",
            ));
        }
    }
    Ok(())
}

/// Check the `[[flow]]`s of `c` and the multi-queue settings they use.
fn check_flows(c: &SsdConfig, logical_bytes: u64) -> Result<(), ConfigError> {
    use crate::flows::{flow_range, MAX_FLOWS};
    let n = c.flows.len();
    if n > MAX_FLOWS {
        return Err(invalid(
            "flow",
            format!("at most {MAX_FLOWS} flows, got {n}"),
        ));
    }
    if c.trace.is_some() || c.personality.is_some() {
        return Err(invalid(
            if c.trace.is_some() {
                "trace"
            } else {
                "personality"
            },
            "with [[flow]]s each flow names its own workload: move it into a flow",
        ));
    }
    let h = &c.host;
    if h.arbitration_burst == 0 || h.arbitration_burst > 65_536 {
        return Err(invalid(
            "host.arbitration_burst",
            format!("must be in 1..=65536, got {}", h.arbitration_burst),
        ));
    }
    if let Some(w) = h.wrr_weights.iter().find(|&&w| w == 0 || w > 256) {
        return Err(invalid(
            "host.wrr_weights",
            format!("each weight is 1..=256 commands per round (NVMe's HPW, MPW, LPW plus one), got {w}"),
        ));
    }
    if h.sq_depth < 2 || h.sq_depth > 65_536 {
        return Err(invalid(
            "host.sq_depth",
            format!(
                "must be in 2..=65536 (NVMe's queue sizes), got {}",
                h.sq_depth
            ),
        ));
    }
    if h.interface.is_nvme() && c.sched.kind != "noop" {
        return Err(invalid(
            "sched.kind",
            format!(
                "{:?}: with [[flow]]s on NVMe each flow has its own submission queue, which Linux runs without an elevator (`none`): use sched.kind = \"noop\" (its merging), or a SATA interface for one shared queue behind an elevator",
                c.sched.kind
            ),
        ));
    }
    let page = c.nand.page_size.0;
    for (i, fl) in c.flows.iter().enumerate() {
        let field = format!("flow.{i}");
        fl.validate(&field)?;
        if let Some(j) = c.flows[..i].iter().position(|g| g.name == fl.name) {
            return Err(invalid(
                &format!("{field}.name"),
                format!("{:?} is also the name of flow.{j}", fl.name),
            ));
        }
        let (s, e) = flow_range(c.sim.flow_space, i, n, logical_bytes, page);
        if e <= s {
            return Err(invalid(
                &field,
                format!("the drive is too small to give {n} flows a page each"),
            ));
        }
        let w = fl.workload.clone().unwrap_or_default();
        check_source(
            &format!("{field}."),
            &w,
            fl.personality.as_ref(),
            fl.trace.as_ref(),
            (e - s) * crate::workload::SECTOR,
        )?;
    }
    if c.flows.iter().any(|f| f.buffered()) {
        c.page_cache.validate()?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn default_is_lee_won() {
        let s = SsdConfig::default().validate().unwrap();
        assert_eq!(s.geometry.channels, 8);
        assert_eq!(s.geometry.page_size, 4096);
        assert_eq!(s.geometry.physical_bytes(), 16 << 30);
        assert_eq!(s.page_xfer_time(), Dur::from_us(100));
    }
    /// An integer the TOML echo cannot hold is named by its dotted path,
    /// inside an array of tables too; of two, the first in sorted key order
    /// (`sim` before `workload`), as the JSON tree it was found in orders
    /// them.
    #[test]
    fn check_writable_names_the_first_integer_beyond_i64() {
        let mut c = SsdConfig::default();
        c.check_writable().unwrap();
        c.workload.number_ios = Some(u64::MAX);
        let e = c.check_writable().unwrap_err().to_string();
        assert_eq!(
            e,
            "workload.number_ios: 18446744073709551615 is out of range: the configuration \
             is written as TOML, whose integers are at most 9223372036854775807"
        );
        c.sim.seed = i64::MAX as u64 + 1;
        let e = c.check_writable().unwrap_err().to_string();
        assert!(
            e.starts_with("sim.seed: 9223372036854775808 is out of range"),
            "{e}"
        );
        let mut c = SsdConfig::default();
        let mut w = c.workload.clone();
        w.number_ios = Some(u64::MAX);
        c.flows = vec![
            crate::flows::FlowConfig::workload("a", c.workload.clone()),
            crate::flows::FlowConfig::workload("b", w),
        ];
        let e = c.check_writable().unwrap_err().to_string();
        assert!(e.starts_with("flow.1.workload.number_ios: 1844"), "{e}");
    }
    #[test]
    fn more_planes_than_the_engine_tracks_are_refused() {
        let mut c = SsdConfig::default();
        c.nand.planes_per_die = 17;
        let e = c.validate().unwrap_err().to_string();
        assert!(
            e.contains("nand.planes_per_die") && e.contains("at most 16"),
            "{e}"
        );
        c.nand.planes_per_die = 16;
        c.nand.blocks_per_plane = 64;
        c.validate().unwrap();
    }
    /// Found with the config_toml fuzz target's echo property: TOML reads
    /// `nan`, `inf` and negative floats for power values, which validated and
    /// were echoed as text that does not read back ("NaNnV", "infW", "-3.3V")
    /// and would give NaN or negative energies. They are refused, by field.
    #[test]
    fn power_values_are_finite_and_not_negative() {
        for (text, field) in [
            ("[power]\nvoltage = nan\n", "power.voltage"),
            ("[power]\nvoltage = -3.3\n", "power.voltage"),
            (
                "[power]\ndram_active_power = inf\n",
                "power.dram_active_power",
            ),
            (
                "[power]\nflash_read_energy = -1e-6\n",
                "power.flash_read_energy",
            ),
        ] {
            let c = SsdConfig::from_toml_over(None, text, "p.toml").unwrap();
            let e = c.validate().unwrap_err().to_string();
            assert!(e.starts_with(field) && e.contains("finite"), "{text}: {e}");
        }
        for p in PowerConfig::presets() {
            p.validate().unwrap();
        }
    }
    #[test]
    fn every_chip_preset_is_2gib_for_lee_won() {
        for n in ["chip1", "chip2", "chip3"] {
            assert_eq!(NandConfig::preset(n).unwrap().chip_bytes(), 2 << 30, "{n}");
        }
    }
    #[test]
    fn toml_roundtrip_and_unknown_fields() {
        let c = SsdConfig::default();
        let back = SsdConfig::from_toml_over(None, &c.to_toml(), "x.toml").unwrap();
        assert_eq!(back, c);
        let e = SsdConfig::from_toml_over(None, "[nand]\npage_sise = \"4KiB\"\n", "x.toml")
            .unwrap_err();
        assert!(e.to_string().contains("nand.page_sise"), "{e}");
        // A bad value names its field too (the merged table has no line).
        for (text, field) in [
            ("[nand]\nt_r = \"abc\"\n", "nand.t_r: "),
            ("[layout]\nchannels = -1\n", "layout.channels: "),
            ("[ftl]\nop = \"x\"\n", "ftl.op: "),
        ] {
            let e = SsdConfig::from_toml_over(None, text, "x.toml").unwrap_err();
            assert!(e.to_string().contains(field), "{text}: {e}");
        }
        let c = SsdConfig::from_toml_over(
            None,
            "nand_preset = \"chip3\"\n[layout]\nchannels = 4\n",
            "x.toml",
        )
        .unwrap();
        assert_eq!(c.nand.name, "chip3");
        assert_eq!(c.layout.channels, 4);
    }
    #[test]
    fn zoo_fields_default_validate_and_name_themselves() {
        // Files written before these fields existed still load.
        let c = SsdConfig::from_toml_over(None, "[ftl]\nkind = \"bast\"\n", "x.toml").unwrap();
        assert_eq!(c.ftl.log_area, 0.05);
        assert_eq!(c.ftl.wear_leveling, WearLeveling::None);
        let s = c.validate().unwrap();
        // Hybrids expose whole data blocks, with the log area carved out first.
        let g = s.geometry;
        let ppb = g.pages_per_block as u64;
        assert_eq!(s.logical_pages % ppb, 0);
        let logs = c.ftl.log_blocks(g.total_blocks() as u64) * ppb;
        assert!(s.logical_pages as f64 <= (g.total_pages() - logs) as f64 / 1.07);
        let mut bad = c.clone();
        bad.ftl.log_area = 0.7;
        assert!(bad
            .validate()
            .unwrap_err()
            .to_string()
            .contains("ftl.log_area"));
        let mut bad = c.clone();
        bad.ftl.last_seq_threshold = Size(0);
        let e = bad.validate().unwrap_err().to_string();
        assert!(e.contains("ftl.last_seq_threshold"), "{e}");
        let e = SsdConfig::from_toml_over(None, "[ftl]\nwear_leveling = \"sometimes\"\n", "x.toml")
            .unwrap_err()
            .to_string();
        assert!(e.contains("x.toml") && e.contains("sometimes"), "{e}");
    }
    #[test]
    fn gc_mode_settings_checked() {
        let mut c = SsdConfig::default();
        assert_eq!(c.ftl.gc_mode(), GcMode::Paced);
        let mut fast = c.clone();
        fast.ftl.kind = "fast".into();
        assert_eq!(fast.ftl.gc_mode(), GcMode::Blocking);
        c.ftl.gc_mode = Some(GcMode::Paced);
        assert_eq!(c.ftl.soft_threshold_blocks(), 3);
        c.validate().unwrap();
        let mut bad = c.clone();
        bad.ftl.kind = "fast".into();
        let e = bad.validate().unwrap_err().to_string();
        assert!(e.contains("ftl.gc_mode") && e.contains("fast"), "{e}");
        let mut bad = c.clone();
        bad.ftl.gc_soft_threshold_blocks = Some(2);
        let e = bad.validate().unwrap_err().to_string();
        assert!(
            e.contains("ftl.gc_soft_threshold_blocks") && e.contains("above"),
            "{e}"
        );
        let mut bad = c.clone();
        bad.ftl.gc_soft_threshold_blocks = Some(100_000);
        let e = bad.validate().unwrap_err().to_string();
        assert!(e.contains("spare blocks per plane"), "{e}");
    }
    #[test]
    fn impossible_geometry_refused() {
        let mut c = SsdConfig::default();
        c.layout.channels = 0;
        assert!(c
            .validate()
            .unwrap_err()
            .to_string()
            .contains("layout.channels"));
        let mut c = SsdConfig::default();
        c.ftl.op = 0.0001;
        assert!(c.validate().unwrap_err().to_string().contains("ftl.op"));
        let mut c = SsdConfig::default();
        c.ftl.cmt_size = Size(4);
        assert!(c
            .validate()
            .unwrap_err()
            .to_string()
            .contains("ftl.cmt_size"));
        let mut c = SsdConfig::default();
        c.ftl.cmt_entry_bytes = 0;
        let e = c.validate().unwrap_err().to_string();
        assert!(e.contains("ftl.cmt_entry_bytes"), "{e}");
        let e = SsdConfig::from_toml_over(None, "[ftl]\ncmt_policy = \"lfu\"\n", "x.toml")
            .unwrap_err()
            .to_string();
        assert!(e.contains("x.toml") && e.contains("lfu"), "{e}");
    }
}
