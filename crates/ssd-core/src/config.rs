//! Configuration: serde structs (stage one, `deny_unknown_fields`, human units) and
//! validation into a checked [`Settings`] (stage two). Presets are plain
//! constructors; a TOML file is deep-merged over the preset it names, then CLI
//! flags are applied on top, so the precedence is flag > file > preset > default.

use crate::addr::Geometry;
pub use crate::error::{invalid, ConfigError};
pub use crate::ftl::{
    Allocation, CmtGranularity, CmtPolicy, FtlConfig, GcMode, GcPolicy, PlaneAllocation,
    WearLeveling,
};
pub use crate::hw::{
    BusSpeed, ControllerConfig, DramCapacity, DramConfig, FlushPolicy, HostConfig, Interface,
    LayoutConfig, NandConfig, PowerConfig,
};
pub use crate::scheds::SchedConfig;
pub use crate::trace::TraceSpec;
use crate::units::{Dur, Rate};
pub use crate::units::{MAX_CYCLES, MAX_OP_TIME, MAX_RATE_MBPS, MIN_RATE_MBPS};
use serde::{Deserialize, Serialize};

mod toml_range;

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
            layout: LayoutConfig::default(),
            controller: ControllerConfig::default(),
            dram: DramConfig::default(),
            host: HostConfig::preset(Interface::Sata6g),
            ftl: FtlConfig::default(),
            sched: SchedConfig::default(),
            power: PowerConfig::lee2011(),
            workload: crate::workload::WorkloadConfig::default(),
            sim: SimConfig::default(),
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
    /// What the engine's block-layer front end takes from `[sched]` and the
    /// flows.
    pub block: crate::sched::BlockQueue,
    /// `dram.capacity` in bytes; for `"fit"`, None until [`Settings::fit_dram`].
    dram_bytes: Option<u64>,
}

impl Settings {
    fn from_config(c: &SsdConfig) -> Result<Settings, ConfigError> {
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
        c.sched.validate()?;
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
        if c.ftl.drain_merge && !c.sim.drain {
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
        let logical_pages = cap.logical_pages;
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
            crate::flows::check_source(
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
            // Flows on NVMe: each flow's submission queue bounds what it
            // holds (`host.sq_depth`, kept by the flows' source), as blk-mq
            // gives each hardware queue its own tags.
            block: crate::sched::BlockQueue {
                nr_requests: if !c.flows.is_empty() && c.host.interface.is_nvme() {
                    u32::MAX
                } else {
                    c.sched.nr_requests
                },
                plug: c.sched.plug,
                flows: c.flows.len(),
            },
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
    h.check_queues()?;
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
        crate::flows::check_source(
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
mod tests;
