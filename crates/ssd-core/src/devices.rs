//! Device presets: whole drives of the published studies (`device = "NAME"`
//! in a configuration, `--device NAME`, a sweep axis `device`).
//!
//! A device preset is a configuration fragment (TOML, as a user would
//! write it) applied before everything else a configuration or the flags
//! say, so any of its fields can still be changed. Each preset states what
//! comes from a datasheet or the paper and what is fitted, and how:
//!
//! - **Capacity, cell type, vendor read/write throughput, idle power** are
//!   the paper's (Park et al. 2011, Tables 3 and 4).
//! - **NAND timings** are datasheet-typical for the cell type and year
//!   (Samsung large-block parts of the time: SLC tR 25 us, tPROG 200 us,
//!   tBERS 1.5 ms; MLC tR 60 us, tPROG 800 us, tBERS 1.5 ms; two planes
//!   with multi-plane commands; an asynchronous 8-bit bus at 40 MB/s). The
//!   drives' own parts are not published.
//! - **Chips** are the capacity divided by the chip size of the time (2 GiB;
//!   4 GiB for the 2010 drive).
//! - **Channels** were fitted by hand: of the channel counts that divide the
//!   chips, the one whose closed-form sequential ceilings, `min(link, channels
//!   x min(bus, ways x planes x page / (tR + planes x transfer)))` for reads
//!   and the same with `planes x transfer + tPROG` for writes, come closest
//!   to the vendor's read and write figures (least sum of squared log
//!   ratios). `ssdsim reproduce park2011` sets the simulated throughput next
//!   to the vendor's.
//! - **Bus rate and tPROG of MLC, SLC (MTron) and TGN** are then fitted by
//!   `ssdsim calibrate` to Table 3's vendor read/write figures, with Table
//!   3's capacity and Table 4's idle power as checks, tPROG held within a
//!   factor of two of the typical time above
//!   (`examples/calibrate/studies/park-*.toml`; nothing is held out: the
//!   paper's block-level figures are plots without printed values). OLD
//!   keeps its hand fit: its 60/45 MB/s need a write ceiling under the read
//!   one, which its 16 ways of SLC reach only with tPROG at 695 us, outside
//!   those bounds (the calibrate report: read -14 %, write +18 % at the
//!   closest point inside them).
//! - **Idle power** is fitted: the controller CPU's idle power is Table 4's
//!   idle power less the DRAM's standby and the chips' idle power (the
//!   lee2011 figures); its active power keeps lee2011's active-over-idle
//!   margin (135 mW).
//! - **Sun et al. 2014's drives** are fitted by `ssdsim calibrate` to the
//!   paper's Table 1 (capacity, vendor sequential read/write, idle power, and
//!   the work power as the drive's rated maximum, `max_power_w`), with the
//!   targets files `examples/calibrate/studies/sun-ssd-{i,s,k}.toml`; the
//!   work power as a mean power is held out (predicted and reported), as
//!   the model cannot reach it under its own rated bound (the bound counts
//!   every die at its highest current). 34 nm MLC (4 KiB pages, tR 50 us,
//!   tBERS 2 ms, tPROG 900 us where not fitted); the geometry stays the
//!   hand-fitted one (SSD-I's 10 channels are Intel's published design; the
//!   others' chips are the capacity over 4 GiB parts). Fitted: the bus rate
//!   (read ceiling), tPROG (write ceiling; not for SSD-S, whose bus bounds
//!   both), the controller's idle power (idle target) and its active power
//!   (what the rated power leaves, "held by max_power_w" in the calibrate
//!   report). Their FTLs are not published (Intel's is known to map pages):
//!   page mapping for all three.
//! - **Wang et al. 2013's drive** is the one their erase counts came from:
//!   a 60 GB SSD in FlashSim. The paper gives its capacity and 3 %
//!   over-provisioning only, so the part is FlashSim's default package
//!   (its `ssd.conf`) and the package count makes the capacity; the
//!   Kingston drive they measured throughput on is not described.
//! - **FTL**: Park found the SLC drive to run a page-mapping variant with a
//!   16 MB write buffer and the MLC drive a hybrid FTL with almost no write
//!   buffer; the FTLs of OLD (2006) and TGN are not published: BAST and FAST,
//!   the hybrid FTLs of their years, are this file's assumption. The MLC
//!   and TGN drives' FAST maps super-blocks of one block in every plane
//!   (`ftl.superblock`), also an assumption, made for consistency with the
//!   fitted channels: their write ceilings count every die programming two
//!   planes at once, which a block-mapped FTL reaches only by striping a
//!   logical block over the dies and planes (with one block per logical
//!   block, FAST fills one block at a time: 38 MB/s on MLC against the
//!   hand fit's closed form of 72.6). OLD's ceiling is its one channel's bus either way.

use crate::error::{invalid, ConfigError};
use crate::hw::{HostConfig, LayoutConfig, NandConfig};

/// A whole drive as a configuration fragment.
#[derive(Clone, Copy, Debug)]
pub struct DevicePreset {
    /// The name `device = "..."` and `--device` take.
    pub name: &'static str,
    /// The drive it models and where its figures come from.
    pub about: &'static str,
    /// The configuration fragment (TOML).
    pub toml: &'static str,
}

/// The built-in drives, in the order `ssdsim presets` lists them.
pub const DEVICE_PRESETS: &[DevicePreset] = &[
    DevicePreset {
        name: "park-old",
        about: "Park et al. 2011 OLD: Super Talent FSD32GB25M (2006), SLC, 32 GB, vendor 60/45 MB/s read/write, idle 1.075 W; 16 chips, 1 channel fitted (closed form 40/40 MB/s), BAST assumed",
        toml: r#"
interface = "sata3g"
[nand]
name = "slc-2006"
cell = "SLC"
page_size = "2KiB"
pages_per_block = 64
blocks_per_plane = 8192
planes_per_die = 2
dies_per_chip = 1
t_r = "25us"
t_prog = "200us"
t_bers = "1500us"
bus = "40MB/s"
multiplane = true
[layout]
channels = 1
ways = 16
[ftl]
kind = "bast"
[power]
name = "park-old"
cpu_idle_power = "942.2mW"
cpu_normal_power = "1077.2mW"
"#,
    },
    DevicePreset {
        name: "park-mlc",
        about: "Park et al. 2011 MLC: OCZ 1C32G (2008), MLC, 32 GB, vendor 143/93 MB/s, idle 0.519 W, hybrid FTL, no write buffer; 16 chips, 4 channels (closed form 164.8/93.1 MB/s), FAST over super-blocks of every plane (assumed: the two-plane closed form needs them); bus and tPROG calibrated (examples/calibrate/studies/park-mlc.toml) to Tables 3-4 within 5 %",
        toml: r#"
interface = "sata3g"
[nand]
name = "mlc-2008"
cell = "MLC"
page_size = "2KiB"
pages_per_block = 128
blocks_per_plane = 4096
planes_per_die = 2
dies_per_chip = 1
t_r = "60us"
t_prog = "604410ns"
t_bers = "1500us"
bus = "41.204MB/s"
multiplane = true
[layout]
channels = 4
ways = 4
[ftl]
kind = "fast"
superblock = 32
[power]
name = "park-mlc"
cpu_idle_power = "386.2mW"
cpu_normal_power = "521.2mW"
"#,
    },
    DevicePreset {
        name: "park-mtron",
        about: "Park et al. 2011 SLC: MTron MSP7000 (2008), SLC, 16 GB, vendor 120/90 MB/s, idle 0.937 W, page-mapping FTL with a 16 MB write buffer; 8 chips, 4 channels (closed form 132.3/86.0 MB/s); bus and tPROG calibrated (examples/calibrate/studies/park-mtron.toml) to Tables 3-4 within 5 %",
        toml: r#"
interface = "sata3g"
[nand]
name = "slc-2008"
cell = "SLC"
page_size = "2KiB"
pages_per_block = 64
blocks_per_plane = 8192
planes_per_die = 2
dies_per_chip = 1
t_r = "25us"
t_prog = "257189ns"
t_bers = "1500us"
bus = "33.084MB/s"
multiplane = true
[layout]
channels = 4
ways = 2
[ftl]
kind = "page"
[dram]
write_buffer = "16MiB"
[power]
name = "park-mtron"
cpu_idle_power = "830.6mW"
cpu_normal_power = "965.6mW"
"#,
    },
    DevicePreset {
        name: "park-tgn",
        about: "Park et al. 2011 TGN: Samsung MMCRE28G5 (2010), MLC, 128 GB, vendor 220/200 MB/s, idle 0.210 W; 32 chips of 4 GiB, 4 channels (closed form 232.1/200.6 MB/s), FAST over super-blocks of every plane assumed; bus and tPROG calibrated (examples/calibrate/studies/park-tgn.toml) to Tables 3-4 within 5 %",
        toml: r#"
interface = "sata3g"
[nand]
name = "mlc-2010"
cell = "MLC"
page_size = "4KiB"
pages_per_block = 128
blocks_per_plane = 4096
planes_per_die = 2
dies_per_chip = 1
t_r = "60us"
t_prog = "1165426ns"
t_bers = "1500us"
bus = "58.02MB/s"
multiplane = true
[layout]
channels = 4
ways = 8
[ftl]
kind = "fast"
superblock = 64
[power]
name = "park-tgn"
cpu_idle_power = "24.4mW"
cpu_normal_power = "159.4mW"
"#,
    },
    DevicePreset {
        name: "sun-ssd-i",
        about: "Sun et al. 2014 SSD-I: Intel X25-M G2 80 GB, MLC, 16 MB DRAM, vendor 201.3/73.8 MB/s, work/idle 2.6/0.15 W; Intel's 10 channels x 2 chips, page mapping; calibrated (examples/calibrate/studies/sun-ssd-i.toml) to capacity, sequential read/write and idle power within 0.4 %, power bound 2.6 W (max_power_w); work power predicted (held out)",
        toml: r#"
interface = "sata3g"
[nand]
name = "mlc-34nm"
cell = "MLC"
page_size = "4KiB"
pages_per_block = 128
blocks_per_plane = 8192
planes_per_die = 1
dies_per_chip = 1
t_r = "50us"
t_prog = "931056ns"
t_bers = "2ms"
bus = "23.006MB/s"
multiplane = false
[layout]
channels = 10
ways = 2
[ftl]
kind = "page"
[dram]
capacity = "16MiB"
[power]
name = "sun-ssd-i"
cpu_idle_power = "4mW"
cpu_normal_power = "392.35mW"
"#,
    },
    DevicePreset {
        name: "sun-ssd-s",
        about: "Sun et al. 2014 SSD-S: SoliWare 64 GB (FPGA controller), MLC, 128 MB DRAM, vendor 98.8/103.6 MB/s, work/idle 4.1/1.5 W; 16 chips on 2 channels, page mapping assumed; calibrated (examples/calibrate/studies/sun-ssd-s.toml) to capacity, sequential read/write and idle power within 0.6 %, power bound 4.1 W (max_power_w); work power predicted (held out)",
        toml: r#"
interface = "sata3g"
[nand]
name = "mlc-34nm-2p"
cell = "MLC"
page_size = "4KiB"
pages_per_block = 128
blocks_per_plane = 4096
planes_per_die = 2
dies_per_chip = 1
t_r = "50us"
t_prog = "900us"
t_bers = "2ms"
bus = "51.656MB/s"
multiplane = true
[layout]
channels = 2
ways = 8
[ftl]
kind = "page"
[dram]
capacity = "128MiB"
[power]
name = "sun-ssd-s"
cpu_idle_power = "1367.2mW"
cpu_normal_power = "1510.868mW"
"#,
    },
    DevicePreset {
        name: "sun-ssd-k",
        about: "Sun et al. 2014 SSD-K: Kingston 64 GB (Toshiba T6UG1XBG), MLC, 128 MB DRAM, vendor 220/140 MB/s, work/idle 5.9/3.3 W; 16 chips on 8 channels, page mapping assumed; calibrated (examples/calibrate/studies/sun-ssd-k.toml) to capacity, sequential read/write and idle power within 0.4 %, power bound 5.9 W (max_power_w); work power predicted (held out)",
        toml: r#"
interface = "sata3g"
[nand]
name = "mlc-34nm-2p"
cell = "MLC"
page_size = "4KiB"
pages_per_block = 128
blocks_per_plane = 4096
planes_per_die = 2
dies_per_chip = 1
t_r = "50us"
t_prog = "662310ns"
t_bers = "2ms"
bus = "30.084MB/s"
multiplane = true
[layout]
channels = 8
ways = 2
[ftl]
kind = "page"
[dram]
capacity = "128MiB"
[power]
name = "sun-ssd-k"
cpu_idle_power = "3167.2mW"
cpu_normal_power = "3309.877mW"
"#,
    },
    DevicePreset {
        name: "samsung-980pro",
        about: "Samsung 980 PRO 1 TB (MZ-V8P1T0; 2020): a current NVMe TLC drive, PCIe 4.0 x4, 128-layer V-NAND TLC, 1 GB LPDDR4; Samsung's figures (\"Samsung NVMe SSD 980 PRO Data Sheet\", as restated from Samsung's product page): 7,000 / 5,000 MB/s, 1,000,000 / 1,000,000 IOPS (4 KiB QD32), idle / average / maximum 35 mW / 6.2 W / 8.9 W; 16 dies of 64 GiB on 8 channels x 2 ways (assumed), 16 KiB pages in two planes (the 64-layer TLC preset's geometry and tBERS), modern-tlc power, page mapping, 9.7 % over-provisioning for 1,000 GB; calibrated (examples/calibrate/studies/samsung-980pro.toml) to capacity, sequential read/write and average power within 0.01 % (tR 33.1 us, bus 1,578 MB/s, tPROG 83.7 us: the SLC cache's rate Samsung's write figure is within), power bound 8.43 W under 8.9 W (max_power_w); random IOPS and idle power predicted (held out: -82 % / -95 % / +936 %)",
        toml: r#"
nand_preset = "tlc-64l"
power_preset = "modern-tlc"
interface = "nvme-gen4x4"
[nand]
blocks_per_plane = 3641
t_r = "33119ns"
t_prog = "83699ns"
bus = "1578.226MB/s"
[layout]
channels = 8
ways = 2
[ftl]
kind = "page"
op = 0.097
[dram]
capacity = "1GiB"
[power]
name = "samsung-980pro"
cpu_normal_power = "3416.504mW"
"#,
    },
    DevicePreset {
        name: "wang-60gb",
        about: "Wang et al. 2013: the 60 GB SSD they replayed their traces on in FlashSim, 3 % over-provisioning (set by the experiment files); FlashSim's default package (ssd.conf: 2 dies x 2 planes x 2,048 blocks x 64 pages of 4 KiB, SLC 25/200/1500 us: 2 GiB), 30 packages each on its own channel as FlashSim gives each package its bus; the bus rate and interface are ssdsim's reference drive's (FlashSim's bus delays are not the study's question)",
        toml: r#"
[nand]
name = "flashsim-slc"
cell = "SLC"
page_size = "4KiB"
pages_per_block = 64
blocks_per_plane = 2048
planes_per_die = 2
dies_per_chip = 2
t_r = "25us"
t_prog = "200us"
t_bers = "1500us"
[layout]
channels = 30
ways = 1
"#,
    },
];

/// The closed-form sequential ceilings, (read, write) in MB/s, a preset's
/// channel count (or bus rate) was fitted by: `min(link, channels x min(bus,
/// ways x planes x page / (tR + planes x transfer)))` for reads, the same
/// with `planes x transfer + tPROG` for writes; `planes` is the die's planes
/// when multi-plane commands are on, else 1.
pub fn sequential_ceilings(n: &NandConfig, layout: &LayoutConfig, host: &HostConfig) -> (f64, f64) {
    let planes = if n.multiplane { n.planes_per_die } else { 1 } as f64;
    let page = n.page_size.0 as f64;
    let bus = n.bus.rate(n.page_size, n.bus_width_bits).mb_per_s();
    let xfer_us = page / bus;
    let ways = (layout.ways * n.dies_per_chip) as f64;
    let channels = layout.channels as f64;
    let ceiling = |busy_us: f64| {
        let per_channel = bus.min(ways * planes * page / busy_us);
        (channels * per_channel).min(host.link_mbps)
    };
    (
        ceiling(n.t_r.0 as f64 / 1e3 + planes * xfer_us),
        ceiling(planes * xfer_us + n.t_prog.0 as f64 / 1e3),
    )
}

/// The device preset named `name`; an error listing the known ones.
pub fn device_preset(name: &str) -> Result<&'static DevicePreset, ConfigError> {
    DEVICE_PRESETS
        .iter()
        .find(|d| d.name == name)
        .ok_or_else(|| {
            invalid(
                "device",
                format!(
                    "unknown device preset {name:?} (known: {}; or a device file, FILE.toml)",
                    DEVICE_PRESETS
                        .iter()
                        .map(|d| d.name)
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            )
        })
}
