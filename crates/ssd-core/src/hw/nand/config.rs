//! `[nand]`: one NAND chip type's timing, bus and internal geometry, the
//! chip presets (`--nand NAME`) and the rules a chip section must keep.

use crate::error::{
    check_nonzero, check_op_time, check_rate_mbps, find_preset, invalid, ConfigError,
};
use crate::units::{Dur, Rate, Size, MAX_OP_TIME};
use serde::{Deserialize, Serialize};
use std::fmt;

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
    /// Per-page-type latencies (MLC/TLC/QLC): see [`super::PageTypeConfig`].
    /// Absent: every page reads in `t_r` and programs in `t_prog`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub page_types: Option<super::PageTypeConfig>,
    /// Read retry: see [`super::RetryConfig`]. Absent: every read
    /// decodes at its first sensing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry: Option<super::RetryConfig>,
    /// Program/erase suspension for reads: see
    /// [`super::SuspendConfig`]. Absent: a read waits for the
    /// die's running operation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub suspend: Option<super::SuspendConfig>,
    /// The part's multi-plane rule: see [`super::MultiplaneConfig`].
    /// Absent: partners share the page offset, a batch may span every plane,
    /// no per-plane gap.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub multiplane_rule: Option<super::MultiplaneConfig>,
    /// The part's cache read and cache program commands: see
    /// [`super::CacheConfig`]. Absent: neither.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache: Option<super::CacheConfig>,
}

impl NandConfig {
    /// The channel's transfer rate from `bus` and `bus_width_bits`.
    pub fn bus_rate(&self) -> Rate {
        self.bus.rate(self.page_size, self.bus_width_bits)
    }
    /// The rules a chip section keeps on its own; errors name the field.
    pub fn check(&self) -> Result<(), ConfigError> {
        check_nonzero("nand.dies_per_chip", self.dies_per_chip)?;
        check_nonzero("nand.planes_per_die", self.planes_per_die)?;
        check_nonzero("nand.blocks_per_plane", self.blocks_per_plane)?;
        check_nonzero("nand.pages_per_block", self.pages_per_block)?;
        check_nonzero("nand.bus_width_bits", self.bus_width_bits)?;
        if self.page_size.0 < 512 || !self.page_size.0.is_multiple_of(512) {
            return Err(invalid(
                "nand.page_size",
                format!("must be a multiple of 512 bytes, got {}", self.page_size.0),
            ));
        }
        if self.page_size.0 > u32::MAX as u64 {
            return Err(invalid("nand.page_size", "too large"));
        }
        if self.planes_per_die > 16 {
            return Err(invalid(
                "nand.planes_per_die",
                format!(
                    "at most 16 (multi-plane batches are tracked per die in a 16-bit set), got {}",
                    self.planes_per_die
                ),
            ));
        }
        if self.pages_per_block > 65_535 {
            return Err(invalid("nand.pages_per_block", "at most 65535"));
        }
        super::check_models(self)?;
        if self.t_r.0 == 0 || self.t_prog.0 == 0 || self.t_bers.0 == 0 {
            return Err(invalid(
                "nand.t_r/t_prog/t_bers",
                "flash operation times must be non-zero",
            ));
        }
        check_op_time("nand.t_r", self.t_r)?;
        check_op_time("nand.t_prog", self.t_prog)?;
        check_op_time("nand.t_bers", self.t_bers)?;
        match self.bus {
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
        check_rate_mbps("nand.bus", self.bus_rate().mb_per_s())
    }

    /// Time to clock the command/address cycles of one operation on the channel.
    pub fn cmd_time(&self) -> Dur {
        self.bus_rate().time_for(self.cmd_addr_bytes as u64)
    }
    /// Time to move one page over a channel.
    pub fn page_xfer_time(&self) -> Dur {
        self.bus_rate().time_for(self.page_size.0)
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
                Some(super::RetryConfig {
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
                    super::PageTypeConfig {
                        t_r: vec![Dur::from_us(150); 4],
                        t_prog: vec![Dur::from_us(8738)],
                        program: super::ProgramScheme::OneShot,
                        t_load: Dur::from_us(5),
                        map: super::PageMap::Wordline,
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
    fn tlc_multipass(name: &str, retry: Option<super::RetryConfig>) -> NandConfig {
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
            super::PageTypeConfig {
                t_r: vec![Dur::from_us(58), Dur::from_us(78), Dur::from_us(107)],
                t_prog: vec![Dur::from_us(558), Dur::from_us(2201), Dur::from_us(5001)],
                program: super::ProgramScheme::MultiPass,
                t_load: Dur::ZERO,
                map: super::PageMap::SharedWl,
            },
        );
        n.retry = retry;
        n
    }

    /// `n` with page types `p`; its `t_r`/`t_prog` become their means.
    fn preset_with_types(mut n: NandConfig, p: super::PageTypeConfig) -> NandConfig {
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
