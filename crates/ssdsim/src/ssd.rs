//! [`Ssd::builder`]: a configuration set up in code, resolved as the CLI
//! resolves its flags and run as `ssdsim run` runs it.
//!
//! The builder keeps what it is told (a base configuration, TOML text or a
//! file, then settings in call order) and resolves it at [`SsdBuilder::build`]
//! through the CLI's own code ([`crate::resolve_config_text`]'s, with
//! [`crate::apply_flag`] and [`crate::set_field`] for each setting), then
//! validates it. The same settings give the same configuration, hence the
//! same report, as the same flags on the command line.

use crate::{
    apply_fio_jobs, check_runnable, fio, resolve_settings, run_config, Progress, RunError,
    RunOptions, RunOutput, Setting,
};
use ssdsim_host::config::{
    ConfigError, ControllerConfig, DramConfig, FtlConfig, HostConfig, LayoutConfig, NandConfig,
    PowerConfig, SchedConfig, SsdConfig,
};
use ssdsim_host::cpu::CpuConfig;
use ssdsim_host::fs::FsConfig;
use ssdsim_host::pagecache::PageCacheConfig;
use ssdsim_host::workload::WorkloadConfig;
use std::path::PathBuf;

/// A simulated SSD and its workload: a validated configuration and the
/// options of its runs. Made by [`Ssd::builder`]; [`Ssd::run`] simulates it.
///
/// ```
/// let ssd = ssdsim::Ssd::builder()
///     .nand("chip2")
///     .ftl("dftl")
///     .set("rw", "randwrite")
///     .number_ios(2_000)
///     .build()?;
/// assert_eq!(ssd.config().ftl.kind, "dftl");
/// let out = ssd.run()?;
/// assert_eq!(out.report.host.requests, 2_000);
/// # Ok::<(), ssdsim::RunError>(())
/// ```
#[derive(Clone, Debug)]
pub struct Ssd {
    config: SsdConfig,
    options: RunOptions,
    warnings: Vec<String>,
}

impl Ssd {
    /// A builder over the default configuration (the CLI's, with no flag).
    pub fn builder() -> SsdBuilder {
        SsdBuilder::default()
    }

    /// The resolved configuration (what `ssdsim run --print-config` prints
    /// for the same settings, as [`SsdConfig::to_toml`]).
    pub fn config(&self) -> &SsdConfig {
        &self.config
    }

    /// The options of its runs (power model, progress bars, plots).
    pub fn options(&self) -> &RunOptions {
        &self.options
    }

    /// What the CLI would say on stderr while resolving the same settings:
    /// a fio job's host-side options accepted without effect, then the
    /// configuration's notes (`note: ...`, [`SsdConfig::notes`]).
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }

    /// Precondition, simulate and report: [`run_config`] of the
    /// configuration. Runs are deterministic: the same `Ssd` gives the same
    /// report every time, but for the wall-clock fields `run.wall_s` and
    /// `run.precondition_wall_s`.
    pub fn run(&self) -> Result<RunOutput, RunError> {
        run_config(&self.config, &self.options)
    }
}

/// Where configuration or job text comes from, as the CLI's `--config` or
/// `--fio`.
#[derive(Clone, Debug)]
enum Source {
    File(PathBuf),
    Text(String),
}

/// Sets up an [`Ssd`]; see [`Ssd::builder`].
///
/// Setters take text as the CLI's flags do (units included: `"4KiB"`,
/// `"10ms"`) and are checked at [`build`](SsdBuilder::build), whose error
/// names the field (`ftl.kind: unknown FTL ...`), as the CLI's does.
/// The order is the CLI's: the base ([`config`](SsdBuilder::config) or the
/// defaults), then the presets ([`nand`](SsdBuilder::nand),
/// [`interface`](SsdBuilder::interface), [`power`](SsdBuilder::power)),
/// then the TOML ([`toml`](SsdBuilder::toml) or
/// [`config_file`](SsdBuilder::config_file), as `--config`), then every
/// other setting in call order (a later one wins), and last a fio job
/// ([`fio`](SsdBuilder::fio), as `--fio`).
#[derive(Clone, Debug, Default)]
#[must_use = "a builder does nothing until `build()`"]
pub struct SsdBuilder {
    base: Option<SsdConfig>,
    source: Option<Source>,
    settings: Vec<Setting>,
    /// The settings made by name (not [`set`](SsdBuilder::set)): the CLI's
    /// flags, which a fio job's workload does not override.
    flags: Vec<(&'static str, String)>,
    fio: Option<Source>,
    /// A section that could not be written as TOML, reported by `build()`.
    error: Option<ConfigError>,
    options: RunOptions,
}

impl SsdBuilder {
    /// Start from this configuration instead of the defaults.
    pub fn config(mut self, cfg: SsdConfig) -> Self {
        self.base = Some(cfg);
        self
    }

    /// Configuration TOML over the base, as a `--config` file holds it
    /// (`nand_preset = "chip3"`, `[ftl]`, `[[flow]]`, ...). Replaces an
    /// earlier [`toml`](SsdBuilder::toml) or
    /// [`config_file`](SsdBuilder::config_file).
    pub fn toml(mut self, text: impl Into<String>) -> Self {
        self.source = Some(Source::Text(text.into()));
        self
    }

    /// A configuration file, read at [`build`](SsdBuilder::build), as
    /// `--config FILE`.
    pub fn config_file(mut self, path: impl Into<PathBuf>) -> Self {
        self.source = Some(Source::File(path.into()));
        self
    }

    /// A setting made by name, as the CLI's flag `--FLAG` (one of
    /// [`crate::flags::FLAGS`]).
    fn flag(mut self, flag: &'static str, value: impl ToString) -> Self {
        debug_assert!(crate::flags::find(flag).is_some(), "{flag}: no such flag");
        self.flags.push((flag, value.to_string()));
        self.set(flag, value)
    }

    /// A NAND preset (`chip1`, `chip2`, `chip3`, `park-slc`, ...; see
    /// [`crate::nand_presets`]), as `--nand`: the chip's geometry and timing,
    /// and its power preset unless one was chosen.
    pub fn nand(self, preset: &str) -> Self {
        self.flag("nand", preset)
    }

    /// A chip of its own: the whole `[nand]` section (a setting in call
    /// order, after the presets and the TOML).
    pub fn nand_config(self, nand: NandConfig) -> Self {
        self.section("nand", &nand)
    }

    /// A host interface preset (`sata3g`, `sata6g`, `nvme-gen3x4`,
    /// `nvme-gen4x4`), as `--interface`.
    pub fn interface(self, name: &str) -> Self {
        self.flag("interface", name)
    }

    /// A power preset (`lee2011`, `park-slc`), as `--power`.
    pub fn power(self, preset: &str) -> Self {
        self.flag("power", preset)
    }

    /// The FTL (`page`, `dftl`, `fast`, ...; [`ftl::FTL_NAMES`]), as `--ftl`.
    pub fn ftl(self, kind: &str) -> Self {
        self.flag("ftl", kind)
    }

    /// The host I/O scheduler (`noop`, `deadline`, ...; [`crate::SCHED_NAMES`]),
    /// as `--sched`.
    pub fn sched(self, kind: &str) -> Self {
        self.flag("sched", kind)
    }

    /// Preconditioning before the measured phase (`none`, `fill`, `steady`),
    /// as `--precondition`.
    pub fn precondition(self, mode: &str) -> Self {
        self.flag("precondition", mode)
    }

    /// The run's seed (`sim.seed`), as `--seed`.
    pub fn seed(self, seed: u64) -> Self {
        self.flag("seed", seed)
    }

    /// End after this many requests, as `--number_ios`: the fio-style
    /// workload's `number_ios`, a personality's request count, or a trace's
    /// replay limit.
    pub fn number_ios(self, n: u64) -> Self {
        self.flag("number_ios", n)
    }

    /// Stop at this simulated time (`sim.time_limit`; the unit is required:
    /// `"10ms"`), as `--time-limit`.
    pub fn time_limit(self, limit: &str) -> Self {
        self.flag("time-limit", limit)
    }

    /// The fio-style workload: the whole `[workload]` section (a setting in
    /// call order; later [`set`](SsdBuilder::set)s of `rw`, `bs`, ... change
    /// it field by field).
    pub fn workload(self, workload: WorkloadConfig) -> Self {
        self.section("workload", &workload)
    }

    /// The flash layout: the whole `[layout]` section (channels, chips per
    /// channel, the bus), a setting in call order.
    pub fn layout(self, layout: LayoutConfig) -> Self {
        self.section("layout", &layout)
    }

    /// The controller: the whole `[controller]` section (its CPU, the
    /// firmware's costs, the write buffer), a setting in call order.
    pub fn controller(self, controller: ControllerConfig) -> Self {
        self.section("controller", &controller)
    }

    /// The drive's DRAM: the whole `[dram]` section, a setting in call order.
    pub fn dram(self, dram: DramConfig) -> Self {
        self.section("dram", &dram)
    }

    /// The host link: the whole `[host]` section (what
    /// [`interface`](SsdBuilder::interface) picks by name), a setting in
    /// call order.
    pub fn host_link(self, host: HostConfig) -> Self {
        self.section("host", &host)
    }

    /// The FTL as a value: the whole `[ftl]` section (its
    /// [`FtlKind`](ssdsim_host::config::FtlKind), over-provisioning, GC and
    /// the chosen FTL's own fields), a setting in call order.
    pub fn ftl_config(self, ftl: FtlConfig) -> Self {
        self.section("ftl", &ftl)
    }

    /// The host I/O scheduler as a value: the whole `[sched]` section (its
    /// kind, queue depths and tunables), a setting in call order.
    pub fn sched_config(self, sched: SchedConfig) -> Self {
        self.section("sched", &sched)
    }

    /// The power model's parameters: the whole `[power]` section (what
    /// [`power`](SsdBuilder::power) picks by name), a setting in call order.
    pub fn power_config(self, power: PowerConfig) -> Self {
        self.section("power", &power)
    }

    /// The host's page cache: the whole `[page_cache]` section (memory,
    /// Linux's writeback and readahead knobs), a setting in call order.
    pub fn page_cache(self, page_cache: PageCacheConfig) -> Self {
        self.section("page_cache", &page_cache)
    }

    /// The host's CPU: the whole `[cpu]` section, a setting in call order.
    pub fn cpu(self, cpu: CpuConfig) -> Self {
        self.section("cpu", &cpu)
    }

    /// The file system: the whole `[fs]` section, a setting in call order.
    pub fn fs(self, fs: FsConfig) -> Self {
        self.section("fs", &fs)
    }

    /// Any configuration field or flag, as `--set KEY=VALUE`: a dotted field
    /// (`ftl.op`, `nand.t_r`, `flow.0.workload.iodepth`) or a flag's name
    /// (`rw`, `bs`, `iodepth`, `op`, `channels`, `trace`, `personality`,
    /// ...). The value is text as on the command line.
    pub fn set(mut self, key: &str, value: impl ToString) -> Self {
        self.settings
            .push(Setting::Flag(key.to_string(), value.to_string()));
        self
    }

    /// A fio job file's text (`[global]`, `[job]` sections, `key=value`
    /// lines; see [`crate::fio`]), applied after every other setting as
    /// `ssdsim run --fio` applies its file: one job is the workload (its
    /// `size`, `runtime`, `ramp_time`, `time_based` end it as fio does; the
    /// [`number_ios`](SsdBuilder::number_ios) and
    /// [`time_limit`](SsdBuilder::time_limit) setters still win), several
    /// jobs run at once as flows. Host-side options (`ioengine`, ...) are
    /// accepted and listed in [`Ssd::warnings`].
    pub fn fio(mut self, job: impl Into<String>) -> Self {
        self.fio = Some(Source::Text(job.into()));
        self
    }

    /// A fio job file, read at [`build`](SsdBuilder::build), as `--fio FILE`.
    pub fn fio_file(mut self, path: impl Into<PathBuf>) -> Self {
        self.fio = Some(Source::File(path.into()));
        self
    }

    fn section(mut self, name: &'static str, value: &impl serde::Serialize) -> Self {
        match toml::Value::try_from(value) {
            Ok(v) => self.settings.push(Setting::Section(name, v.to_string())),
            Err(e) => {
                self.error
                    .get_or_insert(ssdsim_host::config::invalid(name, e.to_string()));
            }
        }
        self
    }

    /// All the options of its runs at once.
    pub fn options(mut self, options: RunOptions) -> Self {
        self.options = options;
        self
    }

    /// Attach the power model (on by default; `ssdsim run --no-power` is
    /// off): `energy_j`, `power_w` and `efficiency` in the report.
    pub fn power_model(mut self, on: bool) -> Self {
        self.options.power = on;
        self
    }

    /// Progress bars ([`Progress`]; off by default).
    pub fn progress(mut self, progress: Progress) -> Self {
        self.options.progress = progress;
        self
    }

    /// Resolve and validate the configuration: the first bad setting is an
    /// error that names its field (as the CLI's), and so is a configuration
    /// that cannot be simulated: everything [`run_config`] checks before it
    /// simulates is checked here (validation, the power model's parameters,
    /// the FTL, host queues and workload source built once and dropped; a
    /// trace file is opened), so that [`Ssd::run`] fails only on what the
    /// simulation itself meets.
    pub fn build(self) -> Result<Ssd, RunError> {
        if let Some(e) = self.error {
            return Err(e.into());
        }
        let (text, name) = match &self.source {
            None => (None, String::new()),
            Some(Source::Text(t)) => (Some(t.clone()), "<toml>".to_string()),
            Some(Source::File(path)) => (
                Some(std::fs::read_to_string(path).map_err(|e| {
                    RunError::Input(format!("{}: cannot read: {e}", path.display()))
                })?),
                path.display().to_string(),
            ),
        };
        let mut config = resolve_settings(
            self.base.unwrap_or_default(),
            text.as_deref(),
            &name,
            &self.settings,
        )?;
        let mut warnings = Vec::new();
        if let Some(job) = &self.fio {
            let (jobs, name) = match job {
                Source::Text(t) => (
                    fio::parse_jobs_str(t, "<fio>", &config.workload)?,
                    "<fio>".to_string(),
                ),
                Source::File(path) => (
                    fio::parse_jobs_file(path, &config.workload)?,
                    path.display().to_string(),
                ),
            };
            let mut warn = |w| warnings.push(w);
            apply_fio_jobs(&mut config, jobs, &name, &self.flags, &mut warn)?;
        }
        check_runnable(&config, &self.options)?;
        warnings.extend(config.notes().into_iter().map(|n| format!("note: {n}")));
        Ok(Ssd {
            config,
            options: self.options,
            warnings,
        })
    }
}
