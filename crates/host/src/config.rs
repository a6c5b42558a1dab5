//! The whole run's configuration: the drive's sections (`ssd_core::config`,
//! re-exported here) and the host stack's (`[sched]`, `[workload]`,
//! `[trace]`, `[replay]`, `[personality]`, `[page_cache]`, `[cpu]`, `[fs]`,
//! `[[flow]]`), read from TOML (a preset, then the file, then flags: flag >
//! file > preset > default) and validated into `Settings`.

pub use crate::scheds::SchedConfig;
pub use crate::trace::TraceSpec;
use serde::{Deserialize, Serialize};
pub use ssd_core::config::*;

mod toml_range;

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
    /// The host's CPU, which buffered workloads' threads run on (`[cpu]`).
    #[serde(default)]
    pub cpu: crate::cpu::CpuConfig,
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
    /// other ([`ssd_core::engine::DriveState`]).
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
        // Where the page FTL keeps its P2L changes no state (`P2lStore`).
        let ftl = FtlConfig {
            p2l_store: Default::default(),
            ..self.ftl.clone()
        };
        serde_json::to_string(&Shape {
            nand: &self.nand,
            layout: &self.layout,
            ftl: &ftl,
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
            Some(p) => p.uses_page_cache(),
            None => !self.workload.direct,
        }
    }
}

/// The top-level keys of a device file ([`SsdConfig::with_device_in`]):
/// the drive's sections and the presets they may start from.
pub const DEVICE_FILE_KEYS: &[&str] = &[
    "device",
    "nand_preset",
    "power_preset",
    "interface",
    "nand",
    "layout",
    "controller",
    "dram",
    "host",
    "ftl",
    "power",
];

/// Does `name` (given where a device preset is named) name a device file
/// rather than a built-in preset? A built-in name never does; a name that
/// ends in `.toml` or has a path separator does.
pub fn is_device_file(name: &str) -> bool {
    !ssd_core::devices::DEVICE_PRESETS
        .iter()
        .any(|d| d.name == name)
        && (name.ends_with(".toml") || name.contains('/') || name.contains('\\'))
}

impl Default for SsdConfig {
    /// The drive of [`DriveConfig::default`] (Lee & Won's reference SSD)
    /// under a fio-style workload, no file system, no flows.
    fn default() -> Self {
        HostSections::default().join(DriveConfig::default())
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
    /// ([`ssd_core::devices`]), or with the device file `name` (a path, as
    /// [`is_device_file`] tells them apart, relative to the working
    /// directory): the fields the preset or file sets replace these.
    pub fn with_device(self, name: &str) -> Result<SsdConfig, ConfigError> {
        self.with_device_in(name, None)
    }

    /// [`SsdConfig::with_device`], with a relative device file's path taken
    /// from `dir` (the directory of the configuration file that names it).
    ///
    /// A device file is a drive as a configuration file: what `ssdsim
    /// calibrate` writes, or any file of the drive's sections
    /// ([`DEVICE_FILE_KEYS`]). A section that is not the drive's (a
    /// workload, `[sim]`, flows) is refused, naming the file and the
    /// section, rather than dropped; so is a `device` inside it that names
    /// another file (a device file starts from a built-in preset at most,
    /// so files cannot name each other in a circle).
    pub fn with_device_in(
        self,
        name: &str,
        dir: Option<&std::path::Path>,
    ) -> Result<SsdConfig, ConfigError> {
        if !is_device_file(name) {
            let d = ssd_core::devices::device_preset(name)?;
            return SsdConfig::from_toml_over(Some(self), d.toml, &format!("device preset {name}"));
        }
        let path = match dir {
            Some(d) if std::path::Path::new(name).is_relative() => d.join(name),
            _ => std::path::PathBuf::from(name),
        };
        let p = path.display().to_string();
        let text = std::fs::read_to_string(&path)
            .map_err(|e| invalid("device", format!("device file {p}: cannot read: {e}")))?;
        let table: toml::Table = text
            .parse()
            .map_err(|e: toml::de::Error| ConfigError::Parse {
                source_name: p.clone(),
                message: e.to_string(),
            })?;
        if let Some(k) = table
            .keys()
            .find(|k| !DEVICE_FILE_KEYS.contains(&k.as_str()))
        {
            return Err(invalid(
                "device",
                format!(
                    "device file {p}: `{k}` is not a drive's section (a device file holds {}; \
                     run a whole configuration with --config)",
                    DEVICE_FILE_KEYS.join(", ")
                ),
            ));
        }
        if let Some(inner) = table.get("device").and_then(toml::Value::as_str) {
            if is_device_file(inner) {
                return Err(invalid(
                    "device",
                    format!(
                        "device file {p}: device = {inner:?}: a device file starts from a \
                         built-in device preset, not from another file"
                    ),
                ));
            }
        }
        SsdConfig::from_toml_over(Some(self), &text, &p)
    }

    /// The drive's sections as TOML ([`DEVICE_FILE_KEYS`]: NAND, layout,
    /// controller, DRAM, host link, FTL and power), without the workload,
    /// the simulation's settings or the host stack: a file that both
    /// `--device` and `--config` take.
    pub fn drive_toml(&self) -> String {
        #[derive(Serialize)]
        struct Drive<'a> {
            nand: &'a NandConfig,
            layout: &'a LayoutConfig,
            controller: &'a ControllerConfig,
            dram: &'a DramConfig,
            host: &'a HostConfig,
            ftl: &'a FtlConfig,
            power: &'a PowerConfig,
        }
        toml::to_string_pretty(&Drive {
            nand: &self.nand,
            layout: &self.layout,
            controller: &self.controller,
            dram: &self.dram,
            host: &self.host,
            ftl: &self.ftl,
            power: &self.power,
        })
        .expect("config serializes")
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
            // A relative device file is found beside the file naming it.
            let src = std::path::Path::new(source_name);
            let dir = src.is_file().then(|| src.parent()).flatten();
            base = base.with_device_in(name, dir)?;
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

    /// The drive's sections and the host stack's, apart.
    fn split(self) -> (DriveConfig, HostSections) {
        let SsdConfig {
            nand,
            layout,
            controller,
            dram,
            host,
            ftl,
            sched,
            power,
            workload,
            sim,
            trace,
            replay,
            personality,
            page_cache,
            cpu,
            fs,
            flows,
        } = self;
        (
            DriveConfig {
                nand,
                layout,
                controller,
                dram,
                host,
                ftl,
                power,
                sim,
            },
            HostSections {
                sched,
                workload,
                trace,
                replay,
                personality,
                page_cache,
                cpu,
                fs,
                flows,
            },
        )
    }

    /// What a run of this configuration does that the user may not expect,
    /// as notes for stderr (each a sentence, without the `note: ` prefix):
    /// the fields of other FTLs' sections that the chosen FTL does not read
    /// ([`ssd_core::config::FtlConfig::unread_fields`]), and a page FTL
    /// whose P2L `ftl.p2l_store = "auto"` puts in a temporary file.
    pub fn notes(&self) -> Vec<String> {
        let mut notes = self.ftl.unread_fields();
        let pages = self.physical_pages();
        if self.ftl.p2l_store.is_auto() && self.p2l_in_file() {
            notes.push(format!(
                "ftl.p2l_store = \"auto\": the page FTL's P2L (the LPN of each of {pages} pages, up to {} MiB) goes to a temporary file in {}, as a drive keeps it in its pages' spare area; the results are the same (\"memory\" keeps it in RAM)",
                (pages * 4) >> 20,
                std::env::temp_dir().display()
            ));
        }
        notes
    }

    /// The drive's physical pages (0 when its layout does not fit the NAND).
    fn physical_pages(&self) -> u64 {
        self.layout
            .geometry(&self.nand)
            .map_or(0, |g| g.total_pages())
    }

    /// Whether the run's FTL is the page FTL with its P2L in a temporary
    /// file (`ftl.p2l_store`, [`ssd_core::config::P2lStore::in_file`]).
    pub fn p2l_in_file(&self) -> bool {
        self.ftl.kind == ssd_core::config::FtlKind::Page
            && self.ftl.p2l_store.in_file(self.physical_pages())
    }

    /// Check the configuration and derive the settings the engine runs on:
    /// the drive (`Settings::new`, with this configuration as what its
    /// reports echo), then the host stack's sections and the block layer's
    /// queue they set.
    pub fn validate(&self) -> Result<Settings, ConfigError> {
        self.check_writable()?;
        let (drive, host) = self.clone().split();
        let mut s = Settings::new(drive, std::sync::Arc::new(host))?;
        let c = self;
        c.sched.validate()?;
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
        let logical = s.logical_bytes();
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
                c.cpu.validate()?;
            }
        } else {
            c.workload.validate(logical)?;
            check_flows(c, logical)?;
        }
        check_placement(c)?;
        // Flows on NVMe: each flow's submission queue bounds what it holds
        // (`host.sq_depth`, kept by the flows' source), as blk-mq gives each
        // hardware queue its own tags.
        s.block = BlockQueue {
            nr_requests: if !c.flows.is_empty() && c.host.interface.is_nvme() {
                u32::MAX
            } else {
                c.sched.nr_requests_for(c.host.queue_depth)
            },
            plug: c.sched.plug,
            flows: c.flows.len(),
        };
        Ok(s)
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

/// The host stack's sections of a validated configuration: what its
/// reports echo beyond the drive (`Settings::echo`).
#[derive(Clone, Debug, Default)]
struct HostSections {
    sched: SchedConfig,
    workload: crate::workload::WorkloadConfig,
    trace: Option<TraceSpec>,
    replay: crate::trace::ReplayOptions,
    personality: Option<crate::personality::PersonalityConfig>,
    page_cache: crate::pagecache::PageCacheConfig,
    cpu: crate::cpu::CpuConfig,
    fs: crate::fs::FsConfig,
    flows: Vec<crate::flows::FlowConfig>,
}

impl HostSections {
    /// The whole configuration of `drive` with these host sections.
    fn join(self, d: DriveConfig) -> SsdConfig {
        SsdConfig {
            nand: d.nand,
            layout: d.layout,
            controller: d.controller,
            dram: d.dram,
            host: d.host,
            ftl: d.ftl,
            sched: self.sched,
            power: d.power,
            workload: self.workload,
            sim: d.sim,
            trace: self.trace,
            replay: self.replay,
            personality: self.personality,
            page_cache: self.page_cache,
            cpu: self.cpu,
            fs: self.fs,
            flows: self.flows,
        }
    }
}

impl Echo for HostSections {
    fn echo(&self, drive: &DriveConfig) -> ConfigEcho {
        ConfigEcho::of(&self.clone().join(drive.clone()))
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

/// Check the `[[flow]]`s of `c` and the multi-queue settings they use.
/// The sources' placement identifiers against the drive: a fio-style
/// job's `workload.fdp` (the run's, or a flow's) and a tenant's
/// `flow.N.placement` need a drive with Flexible Data Placement and indices
/// in its placement ID list; a flow places its writes one way.
fn check_placement(c: &SsdConfig) -> Result<(), ConfigError> {
    use crate::workload::placement::check_indices;
    let fdp = &c.ftl.fdp;
    let job = |prefix: &str, w: &crate::workload::WorkloadConfig, other: bool| {
        let Some(dp) = &w.fdp else {
            return Ok(());
        };
        if other {
            return Err(invalid(
                &format!("{prefix}workload.fdp"),
                "places the writes of the fio-style workload, but this source is a trace or personality: give the placement to the flow (flow.N.placement)",
            ));
        }
        check_indices(&format!("{prefix}workload.fdp"), &dp.plids, fdp)
    };
    if c.flows.is_empty() {
        job(
            "",
            &c.workload,
            c.trace.is_some() || c.personality.is_some(),
        )?;
    }
    for (i, fl) in c.flows.iter().enumerate() {
        let prefix = format!("flow.{i}.");
        let w = fl.workload.clone().unwrap_or_default();
        job(&prefix, &w, fl.trace.is_some() || fl.personality.is_some())?;
        if let Some(n) = fl.placement {
            if w.fdp.is_some() {
                return Err(invalid(
                    &format!("{prefix}placement"),
                    "the flow's workload places its writes itself (workload.fdp): give one of the two",
                ));
            }
            check_indices(&format!("{prefix}placement"), &[n], fdp)?;
        }
    }
    Ok(())
}

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
        // fio's init.c: "wait_for=%s does not exist".
        if let Some(w) = fl
            .wait_for
            .iter()
            .find(|w| **w == fl.name || !c.flows.iter().any(|g| g.name == **w))
        {
            return Err(invalid(
                &format!("{field}.wait_for"),
                format!("{:?} names no other flow", ssd_core::units::clip(w)),
            ));
        }
        let (s, e) = flow_range(c.sim.flow_space, i, n, logical_bytes, page);
        if e <= s {
            return Err(invalid(
                &field,
                format!("the drive is too small to give {n} flows a page each"),
            ));
        }
        // A buffered flow's pages are the host's 4 KiB pages: its share
        // must start on one (NAND pages under 4 KiB split the drive finer).
        let spp = crate::pagecache::PAGE / crate::workload::SECTOR;
        if fl.buffered() && s % spp != 0 {
            return Err(invalid(
                &field,
                format!(
                    "a buffered flow's share of the drive starts at sector {s}, not on a 4 KiB page of the host's page cache: use sim.flow_space = \"shared\" or a NAND page of 4 KiB or more"
                ),
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
    let buffered = c.flows.iter().filter(|f| f.buffered()).count();
    if buffered > 0 {
        c.page_cache.validate()?;
        c.cpu.validate()?;
    }
    // They are tenants of one host's page cache, which numbers each one's
    // inodes in its own range of 27 bits.
    if buffered > 32 {
        return Err(invalid(
            "flow",
            format!("{buffered} buffered flows: a host's page cache serves at most 32"),
        ));
    }
    // Each file-level flow makes its own file system on its share; in
    // shared space every share is the whole drive, and two file systems
    // would be made on the same sectors.
    if c.sim.flow_space == crate::flows::FlowSpace::Shared {
        let mut fs = c.flows.iter().enumerate().filter(|(_, f)| {
            f.personality
                .as_ref()
                .is_some_and(|p| p.level == crate::personality::PersonalityLevel::File)
        });
        if let (Some((i, _)), Some((j, _))) = (fs.next(), fs.next()) {
            return Err(invalid(
                &format!("flow.{j}.personality"),
                format!(
                    "a file-level flow makes a file system on its share of the drive, and with sim.flow_space = \"shared\" flow.{i}'s is the same whole drive: two file systems cannot be made on the same sectors (use \"split\", or one file-level flow)"
                ),
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests;
