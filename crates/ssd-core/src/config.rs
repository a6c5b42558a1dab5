//! The drive's configuration: its sections (each defined, defaulted and
//! checked by the component that reads it, and re-exported here), the run
//! control (`[sim]`), and validation into the checked [`Settings`] the engine,
//! the FTLs and the power model run on. The whole run's configuration, with
//! the host stack's sections and the TOML file format, is the host crate's
//! `SsdConfig`, which validates its drive through [`DriveConfig::validate`].

use crate::addr::Geometry;
pub use crate::error::{invalid, ConfigError};
pub use crate::ftl::{
    Allocation, BlockConfig, CmtGranularity, CmtPolicy, DftlConfig, FdpConfig, FdpIsolation,
    FtlCapacity, FtlConfig, FtlKind, FtlSection, GcMode, GcPolicy, LastConfig, LogConfig, P2lStore,
    PlaneAllocation, WearLeveling, ZnsConfig, ZoneLayout,
};
pub use crate::hw::{
    BusSpeed, ControllerConfig, DramCapacity, DramConfig, FlushPolicy, HostConfig, Interface,
    LayoutConfig, NandConfig, PowerConfig,
};
pub use crate::sched::BlockQueue;
use crate::units::{Dur, Rate};
pub use crate::units::{MAX_CYCLES, MAX_OP_TIME, MAX_RATE_MBPS, MIN_RATE_MBPS};
use serde::{Deserialize, Serialize};

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
    /// the host crate's `SsdConfig::drive_shape`).
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
    pub flow_space: crate::workload::FlowSpace,
    /// With two or more flows: also run each flow alone (same drive, same
    /// preconditioning, same seed) to report its slowdown and the run's
    /// fairness.
    #[serde(default = "yes")]
    pub alone_runs: bool,
}

fn yes() -> bool {
    true
}

impl Default for SimConfig {
    /// Seed 1, no preconditioning, no time limit or ramp, no drain.
    fn default() -> SimConfig {
        SimConfig {
            seed: 1,
            precondition: Precondition::None,
            precondition_seed: None,
            time_limit: None,
            ramp_time: None,
            drain: false,
            flow_space: Default::default(),
            alone_runs: true,
        }
    }
}

impl SimConfig {
    /// A seed TOML can hold, a positive time limit, a positive ramp that
    /// ends before the time limit.
    pub fn check(&self) -> Result<(), ConfigError> {
        if self.seed > i64::MAX as u64 {
            return Err(invalid(
                "sim.seed",
                "must be below 2^63 (TOML integers are signed 64-bit)",
            ));
        }
        if self.time_limit.is_some_and(|t| t.0 == 0) {
            return Err(invalid(
                "sim.time_limit",
                "must be positive (leave it out for no limit)",
            ));
        }
        if let Some(r) = self.ramp_time {
            if r.0 == 0 {
                return Err(invalid(
                    "sim.ramp_time",
                    "must be positive (leave it out for no ramp)",
                ));
            }
            if let Some(t) = self.time_limit.filter(|t| *t <= r) {
                return Err(invalid(
                    "sim.ramp_time",
                    format!(
                        "{r} is not before sim.time_limit {t}: nothing would be measured \
                         (the time limit counts from the start of the run, ramp included)"
                    ),
                ));
            }
        }
        Ok(())
    }

    /// The seed preconditioning draws from (`precondition_seed`, else `seed`).
    pub fn precondition_seed(&self) -> u64 {
        self.precondition_seed.unwrap_or(self.seed)
    }
}

/// The drive and the run's control: the sections the engine, the hardware
/// models, the FTL and the power model read.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct DriveConfig {
    /// The NAND chips (`[nand]`).
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
    /// Power parameters (`[power]`).
    pub power: PowerConfig,
    /// Simulation control (`[sim]`).
    pub sim: SimConfig,
}

impl Default for DriveConfig {
    /// The Lee & Won reference SSD: 8 channels x 1 chip of chip2, page mapping,
    /// a 200 MHz controller CPU (the ARM920T of their power table), SATA 6 Gb/s.
    fn default() -> Self {
        DriveConfig {
            nand: NandConfig::preset("chip2").expect("chip2 preset"),
            layout: LayoutConfig::default(),
            controller: ControllerConfig::default(),
            dram: DramConfig::default(),
            host: HostConfig::preset(Interface::Sata6g),
            ftl: FtlConfig::default(),
            power: PowerConfig::lee2011(),
            sim: SimConfig::default(),
        }
    }
}

impl DriveConfig {
    /// Check the drive's sections and the rules between them, and derive the
    /// settings the engine runs on (with the block layer's defaults,
    /// [`BlockQueue::default`], which the host stack's validation replaces).
    pub fn validate(&self) -> Result<Settings, ConfigError> {
        Settings::new(self.clone(), std::sync::Arc::new(DriveOnly))
    }
}

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
    /// The drive these settings were derived from.
    pub config: DriveConfig,
    /// What the engine's block-layer front end takes from the host stack
    /// (`[sched]`, the flows): set by its validation.
    pub block: BlockQueue,
    /// The configuration a report echoes, serialised only when a report is
    /// made: the host stack's validation puts the whole run's here; a drive
    /// validated alone echoes its drive.
    pub echo: std::sync::Arc<dyn Echo>,
    /// `dram.capacity` in bytes; for `"fit"`, None until [`Settings::fit_dram`].
    dram_bytes: Option<u64>,
}

impl Settings {
    /// Check the drive `c` and derive its settings; `echo` is the whole
    /// configuration its reports echo (the host's `SsdConfig`, or `c`).
    pub fn new(c: DriveConfig, echo: std::sync::Arc<dyn Echo>) -> Result<Settings, ConfigError> {
        let (geometry, logical_pages) = Settings::check(&c)?;
        let n = &c.nand;
        Ok(Settings {
            geometry,
            logical_pages,
            bus: n.bus_rate(),
            link: c.host.link_rate(),
            block: BlockQueue::default(),
            echo,
            dram_bytes: c.dram.capacity.bytes(),
            config: c,
        })
    }

    /// The sections' own rules, then the rules between them; the drive's
    /// geometry and logical pages.
    fn check(c: &DriveConfig) -> Result<(Geometry, u64), ConfigError> {
        let n = &c.nand;
        // Each section's own rules, then the rules between sections.
        n.check()?;
        let geometry = c.layout.geometry(n)?;
        c.controller.check()?;
        c.dram.check(n.page_size.0)?;
        c.host.check()?;
        c.power.validate()?;
        c.sim.check()?;
        let cap = c.ftl.capacity(&geometry)?;
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
        if c.ftl.kind.is_zoned() {
            // A zoned namespace's writes are the host's, at the zones' write
            // pointers: a buffer would reorder them or keep refused pages,
            // and steady state is the host's to reach (it resets zones).
            if c.dram.write_buffer.0 > 0 {
                return Err(invalid(
                    "dram.write_buffer",
                    "a zoned namespace (ftl.kind = \"zns\") writes each zone in order at its write pointer and may refuse a write; a write buffer would write pages back out of order, or hold pages the zones refused: set dram.write_buffer = 0",
                ));
            }
            if c.sim.precondition == Precondition::Steady {
                return Err(invalid(
                    "sim.precondition",
                    "a zoned namespace has no device GC to bring to steady state (the host resets zones): use \"fill\" (every zone written full) or \"none\"",
                ));
            }
        }
        if c.ftl.fdp.enabled && c.dram.write_buffer.0 > 0 && c.dram.flush == FlushPolicy::EvictLru {
            // The buffer evicts pages long after their write, and keeps no
            // placement directive with them.
            return Err(invalid(
                "dram.write_buffer",
                "Flexible Data Placement (ftl.fdp) places each write by its placement identifier, which a write-back buffer (dram.flush = \"evict-lru\") does not keep with the pages it evicts later: set dram.write_buffer = 0 or dram.flush = \"write-through\"",
            ));
        }
        if c.ftl.drain_merge() && !c.sim.drain {
            return Err(invalid(
                "ftl.drain_merge",
                "merges the log blocks in the drain, but sim.drain is off: set sim.drain = true",
            ));
        }
        if c.power.dram_device_standby_power.is_some() && c.dram.device_size.is_none() {
            return Err(invalid(
                "power.dram_device_standby_power",
                "is per DRAM device: set dram.device_size (the bytes of one device)",
            ));
        }
        Ok((geometry, cap.logical_pages))
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

    /// The sections the built-in hardware models are built from
    /// ([`crate::hw::Parts::new`]).
    pub fn hw(&self) -> crate::hw::HwConfig<'_> {
        let c = &self.config;
        crate::hw::HwConfig {
            nand: &c.nand,
            controller: &c.controller,
            dram: &c.dram,
            host: &c.host,
            power: &c.power,
            blocks: self.geometry.total_blocks() as usize,
            seed: c.sim.seed,
        }
    }

    /// The geometry and logical pages the components share.
    pub fn shape(&self) -> crate::addr::DriveShape {
        crate::addr::DriveShape {
            geometry: self.geometry,
            logical_pages: self.logical_pages,
        }
    }

    /// The zones of a zoned namespace (`ftl.kind = "zns"`), None on any
    /// other drive.
    pub fn zone_layout(&self) -> Option<crate::ftl::ZoneLayout> {
        self.config.ftl.zone_layout(&self.geometry)
    }

    /// Host-visible capacity in bytes (`logical_pages` x page size).
    pub fn logical_bytes(&self) -> u64 {
        self.logical_pages * self.geometry.page_size as u64
    }
    /// Time to clock the command/address cycles of one operation on the channel.
    pub fn cmd_time(&self) -> Dur {
        self.config.nand.cmd_time()
    }
    /// Time to move one page over a channel.
    pub fn page_xfer_time(&self) -> Dur {
        self.config.nand.page_xfer_time()
    }
    /// Time `cycles` controller cycles take at `controller.cpu_mhz`, rounded up to whole ns.
    pub fn cycles(&self, cycles: u64) -> Dur {
        // ns = cycles * 1000 / MHz, rounded up.
        Dur((cycles * 1000).div_ceil(self.config.controller.cpu_mhz as u64))
    }
}

/// A configuration as a report echoes it: its fields (`config`) and the
/// FNV-1a hash of its TOML (`run.config_hash`).
#[derive(Clone, Debug, PartialEq)]
pub struct ConfigEcho {
    /// The configuration as JSON.
    pub json: serde_json::Value,
    /// FNV-1a of its TOML text, in hex.
    pub toml_hash: String,
}

/// A configuration a report echoes ([`Settings::echo`]): serialised when
/// the report is made, not at validation, which a sweep runs for every point
/// of its grid before running any.
/// It holds what the configuration has beyond the drive, which the settings
/// keep already (`Settings::config`).
pub trait Echo: std::fmt::Debug + Send + Sync {
    /// The whole configuration of `drive` as a report echoes it.
    fn echo(&self, drive: &DriveConfig) -> ConfigEcho;
}

/// Nothing beyond the drive: a drive validated alone echoes itself.
#[derive(Clone, Copy, Debug)]
pub struct DriveOnly;

impl Echo for DriveOnly {
    fn echo(&self, drive: &DriveConfig) -> ConfigEcho {
        ConfigEcho::of(drive)
    }
}

impl ConfigEcho {
    /// `config` as JSON and the FNV-1a hash of its TOML text.
    pub fn of<T: Serialize>(config: &T) -> ConfigEcho {
        let json = serde_json::to_value(config).expect("a configuration serialises to JSON");
        // The host's configuration is checked to be writable as TOML at
        // validation (`check_writable`); a drive validated alone through the
        // library is not, and one TOML cannot write (an integer beyond
        // 2^63) is hashed by its JSON text instead.
        let text = toml::to_string_pretty(config).unwrap_or_else(|_| json.to_string());
        ConfigEcho {
            toml_hash: crate::stats::fnv1a(&text),
            json,
        }
    }
}
