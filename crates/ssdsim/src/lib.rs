//! # ssdsim (application layer)
//!
//! Turns CLI flags and TOML files into a validated [`SsdConfig`], closes the
//! runtime choices (FTL, scheduler, workload source, observer) into enums and
//! runs simulations. The `ssdsim` program (the `ssdsim-cli` package) is a
//! shell over this crate, and other tools use it as a library: [`Ssd::builder`] sets a drive up in code
//! with the CLI's names and resolves it as the CLI resolves its flags, so
//! that its report is the one `ssdsim run --format json` prints for the same
//! settings.
//!
//! ```
//! use ssdsim::Ssd;
//!
//! let ssd = Ssd::builder()
//!     .nand("chip2")                  // --nand chip2
//!     .interface("nvme-gen3x4")       // --interface nvme-gen3x4
//!     .ftl("dftl")                    // --ftl dftl
//!     .sched("deadline")              // --sched deadline
//!     .set("ftl.op", "0.1")           // --set ftl.op=0.1 (any field)
//!     .set("rw", "randwrite")         // --rw randwrite (fio's names)
//!     .set("bs", "4KiB")
//!     .set("iodepth", 32)
//!     .number_ios(3_000)              // --number_ios 3000
//!     .seed(42)                       // --seed 42
//!     .build()?;                      // resolve and validate
//! assert_eq!(ssd.config().workload.iodepth, 32);
//! let out = ssd.run()?;               // precondition, simulate, report
//! assert_eq!(out.report.host.requests, 3_000);
//! assert!(out.report.flash.waf.is_some_and(|w| w >= 1.0));
//!
//! // A bad setting is refused at build(), the field named as by the CLI.
//! let err = Ssd::builder().ftl("nope").build().unwrap_err();
//! assert!(err.to_string().starts_with("ftl.kind: "));
//! # Ok::<(), ssdsim::RunError>(())
//! ```
//!
//! A configuration made by hand runs through [`run_config`]:
//!
//! ```
//! use ssdsim::{run_config, RunOptions};
//! use ssdsim_host::config::SsdConfig;
//! let mut cfg = SsdConfig::default();
//! cfg.workload.number_ios = Some(2_000);
//! let out = run_config(&cfg, &RunOptions::default()).unwrap();
//! assert_eq!(out.report.host.requests, 2_000);
//! ```
//!
//! ## Features
//!
//! None is on by default, so a tool that takes the library pulls no
//! progress bars. The `ssdsim` program (the `ssdsim-cli` package,
//! `crates/cli`) turns them all on.
//!
//! - `progress`: progress bars on stderr (indicatif). Without it
//!   [`RunOptions::progress`] is still there and every [`Progress`] mode
//!   draws nothing.
//! - `plots`: SVG files: `sweep::plot`, [`RunOptions::plot_power`] /
//!   [`RunOptions::plot_breakdown`] (without it a run that asks for one is
//!   refused before it starts) and `plots::mapping_size`; the charts of the
//!   HTML pages, drawn by hand, so the feature pulls no crate.
//! - `html`: the HTML pages of a run or a sweep (`html::run_page`,
//!   `html::sweep_page`); their charts are SVG written by hand, so the
//!   feature pulls no crate.
//!
//! Over 1,500 lines on purpose: the application layer's one path from a
//! configuration to a report (resolution, the source builders, the run and its
//! outputs), which the CLI, the builder, sweeps and the Python bindings share.

#![warn(missing_docs)]

pub mod calibrate;
#[cfg(any(feature = "html", feature = "plots"))]
mod chart;
pub mod custom;
pub mod fio;
pub mod fio_json;
pub mod flags;
#[cfg(feature = "html")]
pub mod html;
pub mod output;
#[cfg(feature = "plots")]
pub mod plots;
pub mod progress;
mod ssd;
pub mod state;
pub mod sweep;

pub use progress::Progress;
pub use ssd::{Ssd, SsdBuilder};

use ssd_core::observer::{NullObserver, Observer, Tee};
use ssd_core::outfile::PendingFile;
use ssd_core::stats::Report;
use ssd_core::{SimError, Simulation};
use ssdsim_host::config::{
    ConfigError, HostConfig, Interface, NandConfig, PowerConfig, Settings, SsdConfig,
};
use ssdsim_host::workload::{FioGen, RequestSource, SourceError, Timing};

/// The README's Rust code, compiled by `cargo test` (as doctests) so that the
/// library example it shows stays true.
#[cfg(doctest)]
#[doc = include_str!("../../../README.md")]
pub struct ReadmeDoctests;

/// Errors of the application layer. `exit_code()` maps them to the CLI's codes:
/// 2 for bad input (configuration, workload, trace), 130 for an interrupted
/// sweep, 1 for anything else.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RunError {
    /// An invalid configuration (exit code 2).
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// The simulation stopped on bad input found while running (exit code 2).
    #[error(transparent)]
    Sim(#[from] SimError),
    /// A fio job file could not be read or has an unsupported option (exit code 2).
    #[error(transparent)]
    Fio(#[from] fio::FioError),
    /// Other bad input: a trace, a record format, a flag combination (exit code 2).
    #[error("{0}")]
    Input(String),
    /// An output could not be written (exit code 1).
    #[error("{0}")]
    Io(String),
    /// Stopped by SIGINT or SIGTERM (exit code 130).
    #[error("{0}")]
    Interrupted(String),
}

impl RunError {
    /// The CLI's exit code for the error: 1 for output failures, 130 for an interruption, 2 for
    /// bad input.
    pub fn exit_code(&self) -> i32 {
        match self {
            RunError::Io(_) => 1,
            RunError::Interrupted(_) => 130,
            _ => 2,
        }
    }
}

/// The workload sources a run can use, statically dispatched.
pub enum AnySource {
    /// The fio-style generator (`[workload]`, `--rw`, a fio job file).
    Fio(FioGen),
    /// A block trace replay (`[trace]`, `--trace`).
    Trace(ssdsim_host::trace::TraceSource),
    /// A block-level personality (`[personality]`, level block).
    Personality(ssdsim_host::personality::Personality),
    /// A file-level Filebench personality (through the page cache).
    FileBench(Box<ssdsim_host::filebench::FileBench>),
    /// An application workload through the page cache (buffered I/O).
    Buffered(Box<ssdsim_host::pagecache::PageCache<AnySource>>),
    /// Several flows (tenants) at once, each one of the above.
    Flows(Box<ssdsim_host::flows::Flows<AnySource>>),
    /// One of the above, its requests written as a trace (`--record-trace`).
    Recorded(Box<ssdsim_host::trace::record::Recorder<AnySource>>),
}

impl RequestSource for AnySource {
    fn timing(&self) -> Timing {
        match self {
            AnySource::Fio(s) => s.timing(),
            AnySource::Trace(s) => s.timing(),
            AnySource::Personality(s) => s.timing(),
            AnySource::FileBench(s) => s.timing(),
            AnySource::Buffered(s) => s.timing(),
            AnySource::Flows(s) => s.timing(),
            AnySource::Recorded(s) => s.timing(),
        }
    }
    #[inline]
    fn next_request(&mut self) -> Option<Result<ssdsim_host::workload::HostRequest, SourceError>> {
        match self {
            AnySource::Fio(s) => s.next_request(),
            AnySource::Trace(s) => s.next_request(),
            AnySource::Personality(s) => s.next_request(),
            AnySource::FileBench(s) => s.next_request(),
            AnySource::Buffered(s) => s.next_request(),
            AnySource::Flows(s) => s.next_request(),
            AnySource::Recorded(s) => s.next_request(),
        }
    }
    #[inline]
    fn submitted(&mut self, r: &ssdsim_host::workload::HostRequest) {
        match self {
            AnySource::Fio(s) => s.submitted(r),
            AnySource::Trace(s) => s.submitted(r),
            AnySource::Personality(s) => s.submitted(r),
            AnySource::FileBench(s) => s.submitted(r),
            AnySource::Buffered(s) => s.submitted(r),
            AnySource::Flows(s) => s.submitted(r),
            AnySource::Recorded(s) => s.submitted(r),
        }
    }
    fn notes(&self) -> Vec<(String, u64)> {
        match self {
            AnySource::Fio(s) => s.notes(),
            AnySource::Trace(s) => s.notes(),
            AnySource::Personality(s) => s.notes(),
            AnySource::FileBench(s) => s.notes(),
            AnySource::Buffered(s) => s.notes(),
            AnySource::Flows(s) => s.notes(),
            AnySource::Recorded(s) => s.notes(),
        }
    }
    fn poll(
        &mut self,
        now: ssd_core::SimTime,
    ) -> Option<Result<ssdsim_host::workload::HostRequest, SourceError>> {
        match self {
            // A fio job with pauses (thinktime) reacts to completions.
            AnySource::Fio(s) => s.poll(now),
            AnySource::Buffered(s) => s.poll(now),
            AnySource::Flows(s) => s.poll(now),
            AnySource::Recorded(s) => s.poll(now),
            _ => None,
        }
    }
    fn event(&mut self, ev: ssdsim_host::workload::HostEvent, now: ssd_core::SimTime) {
        match self {
            AnySource::Fio(s) => s.event(ev, now),
            AnySource::Buffered(s) => s.event(ev, now),
            AnySource::Flows(s) => s.event(ev, now),
            AnySource::Recorded(s) => s.event(ev, now),
            _ => {}
        }
    }
    fn wake_at(&self) -> Option<ssd_core::SimTime> {
        match self {
            AnySource::Fio(s) => s.wake_at(),
            AnySource::Buffered(s) => s.wake_at(),
            AnySource::Flows(s) => s.wake_at(),
            AnySource::Recorded(s) => s.wake_at(),
            _ => None,
        }
    }
    fn finished(&self) -> bool {
        match self {
            AnySource::Fio(s) => s.finished(),
            AnySource::Buffered(s) => s.finished(),
            AnySource::Flows(s) => s.finished(),
            AnySource::Recorded(s) => s.finished(),
            _ => true,
        }
    }
    fn report_sections(&self, end: ssd_core::SimTime) -> Vec<(String, serde_json::Value)> {
        match self {
            AnySource::Buffered(s) => s.report_sections(end),
            AnySource::Flows(s) => s.report_sections(end),
            AnySource::Recorded(s) => s.report_sections(end),
            AnySource::FileBench(s) => s.report_sections(end),
            _ => Vec::new(),
        }
    }
    fn ramp_over(&mut self, now: ssd_core::SimTime, in_flight: u64) {
        match self {
            AnySource::Fio(s) => s.ramp_over(now, in_flight),
            AnySource::Trace(s) => s.ramp_over(now, in_flight),
            AnySource::Personality(s) => s.ramp_over(now, in_flight),
            AnySource::FileBench(s) => s.ramp_over(now, in_flight),
            AnySource::Buffered(s) => s.ramp_over(now, in_flight),
            AnySource::Flows(s) => s.ramp_over(now, in_flight),
            AnySource::Recorded(s) => s.ramp_over(now, in_flight),
        }
    }
    fn stop(&mut self, now: ssd_core::SimTime) {
        match self {
            AnySource::Fio(s) => s.stop(now),
            AnySource::Trace(s) => s.stop(now),
            AnySource::Personality(s) => s.stop(now),
            AnySource::FileBench(s) => s.stop(now),
            AnySource::Buffered(s) => s.stop(now),
            AnySource::Flows(s) => s.stop(now),
            AnySource::Recorded(s) => s.stop(now),
        }
    }
}

/// The page cache's hooks reach the file-level application (Filebench) and a
/// recorder around one; the other sources keep the defaults.
impl ssdsim_host::workload::AppSource for AnySource {
    fn more_follow(&self) -> bool {
        match self {
            AnySource::FileBench(s) => s.more_follow(),
            AnySource::Recorded(s) => s.more_follow(),
            _ => false,
        }
    }
    fn call_extras(&self) -> ssdsim_host::workload::CallExtras {
        match self {
            AnySource::FileBench(s) => s.call_extras(),
            AnySource::Recorded(s) => s.call_extras(),
            _ => Default::default(),
        }
    }
    fn clock(&mut self, now: ssd_core::SimTime) {
        match self {
            AnySource::FileBench(s) => s.clock(now),
            AnySource::Recorded(s) => s.clock(now),
            _ => {}
        }
    }
    fn fsync_io(&mut self, ino: u32, now: ssd_core::SimTime) -> ssdsim_host::workload::FsyncIo {
        match self {
            AnySource::FileBench(s) => s.fsync_io(ino, now),
            AnySource::Recorded(s) => s.fsync_io(ino, now),
            _ => ssdsim_host::workload::FsyncIo::default(),
        }
    }
    fn commit_io(&mut self, now: ssd_core::SimTime) -> Option<ssdsim_host::workload::FsyncIo> {
        match self {
            AnySource::FileBench(s) => s.commit_io(now),
            AnySource::Recorded(s) => s.commit_io(now),
            _ => None,
        }
    }
    fn commit_done(&mut self, now: ssd_core::SimTime) {
        match self {
            AnySource::FileBench(s) => s.commit_done(now),
            AnySource::Recorded(s) => s.commit_done(now),
            _ => {}
        }
    }
    fn committed(&self, tid: u64) -> bool {
        match self {
            AnySource::FileBench(s) => s.committed(tid),
            AnySource::Recorded(s) => s.committed(tid),
            _ => true,
        }
    }
    fn journal_stream(&self) -> u32 {
        match self {
            AnySource::FileBench(s) => s.journal_stream(),
            AnySource::Recorded(s) => s.journal_stream(),
            _ => 0,
        }
    }
    fn take_commit(&mut self) -> bool {
        match self {
            AnySource::FileBench(s) => s.take_commit(),
            AnySource::Recorded(s) => s.take_commit(),
            _ => false,
        }
    }
    fn memory(&self) -> u64 {
        match self {
            AnySource::FileBench(s) => s.memory(),
            AnySource::Fio(s) => s.memory(),
            AnySource::Recorded(s) => s.memory(),
            _ => 0,
        }
    }
    fn host_report(
        &self,
        host: &ssdsim_host::workload::HostRun,
    ) -> Vec<(String, serde_json::Value)> {
        match self {
            AnySource::FileBench(s) => s.host_report(host),
            AnySource::Recorded(s) => s.host_report(host),
            _ => Vec::new(),
        }
    }
}

/// Build the workload source a configuration names: its `[[flow]]`s, or
/// `[trace]`, `[personality]` or the fio-style `[workload]`.
pub fn build_source(cfg: &SsdConfig, settings: &Settings) -> Result<AnySource, RunError> {
    if !cfg.flows.is_empty() {
        return build_flows(cfg, settings, None);
    }
    build_one(
        cfg,
        &cfg.workload,
        cfg.personality.as_ref(),
        cfg.trace.as_ref(),
        settings.logical_bytes(),
        cfg.sim.seed,
    )
}

/// The flows of `cfg` as one source; `only`: just that flow (by slot), in
/// its own range and queue, as a baseline run alone.
pub fn build_flows(
    cfg: &SsdConfig,
    settings: &Settings,
    only: Option<usize>,
) -> Result<AnySource, RunError> {
    use ssdsim_host::flows::{flow_range, Flow, Flows};
    let n = cfg.flows.len();
    let mut flows = Vec::new();
    for (i, f) in cfg.flows.iter().enumerate() {
        if only.is_some_and(|o| o != i) {
            continue;
        }
        let range = flow_range(
            cfg.sim.flow_space,
            i,
            n,
            settings.logical_bytes(),
            cfg.nand.page_size.0,
        );
        let w = f.workload.clone().unwrap_or_default();
        // Each flow draws from its own generator (one flow's seed, whether
        // it runs with the others or alone).
        let seed = cfg
            .sim
            .seed
            .wrapping_add((i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15));
        let src = build_one(
            cfg,
            &w,
            f.personality.as_ref(),
            f.trace.as_ref(),
            (range.1 - range.0) * ssdsim_host::workload::SECTOR,
            seed,
        )
        .map_err(|e| match e {
            RunError::Input(m) => RunError::Input(format!("flow {}: {m}", f.name)),
            e => e,
        })?;
        flows.push(Flow {
            slot: i,
            name: f.name.clone(),
            priority: f.priority,
            range,
            depth: if cfg.host.interface.is_nvme() {
                cfg.host.sq_depth
            } else {
                u32::MAX
            },
            // A flow run alone (a baseline) starts with the run: it has no
            // group to wait for.
            schedule: match only {
                Some(_) => ssdsim_host::flows::FlowSchedule {
                    stonewall: false,
                    start_delay: None,
                    ..f.schedule()
                },
                None => f.schedule(),
            },
            src,
        });
    }
    Ok(AnySource::Flows(Box::new(Flows::new(flows))))
}

/// One workload source on a drive (or flow range) of `logical` bytes.
fn build_one(
    cfg: &SsdConfig,
    w: &ssdsim_host::workload::WorkloadConfig,
    personality: Option<&ssdsim_host::personality::PersonalityConfig>,
    trace: Option<&ssdsim_host::config::TraceSpec>,
    logical: u64,
    seed: u64,
) -> Result<AnySource, RunError> {
    if let Some(t) = trace {
        let fmt = match &t.format {
            Some(f) => Some(
                f.parse::<ssdsim_host::trace::TraceFormat>()
                    .map_err(|e| RunError::Input(format!("trace.format: {e}")))?,
            ),
            None => None,
        };
        let opts = cfg.replay.clone().with_capacity(logical);
        let src = ssdsim_host::trace::open_trace(std::path::Path::new(&t.path), fmt, &opts)
            .map_err(|e| RunError::Input(e.to_string()))?;
        return Ok(AnySource::Trace(src));
    }
    let app = if let Some(p) = personality {
        if p.level == ssdsim_host::personality::PersonalityLevel::File {
            AnySource::FileBench(Box::new(ssdsim_host::filebench::FileBench::new(
                p, &cfg.fs, logical, seed,
            )?))
        } else {
            AnySource::Personality(ssdsim_host::personality::Personality::new(
                p, logical, seed,
            )?)
        }
    } else {
        AnySource::Fio(FioGen::new(w, logical, seed))
    };
    let buffered = match personality {
        Some(p) => p.uses_page_cache(),
        None => !w.direct,
    };
    if !buffered {
        return Ok(app);
    }
    let io = match personality {
        // A personality's fsyncs are its own Flush calls.
        Some(_) => ssdsim_host::pagecache::AppIo::default(),
        None => ssdsim_host::pagecache::AppIo {
            sync: w.sync,
            fsync: w.fsync,
            end_fsync: w.end_fsync,
        },
    };
    let cache = ssdsim_host::pagecache::PageCache::on_host(
        app,
        &cfg.page_cache,
        &cfg.cpu,
        cfg.fs.kernel(),
        io,
        logical,
        cfg.sched.max_request.0,
    )?;
    Ok(AnySource::Buffered(Box::new(cache)))
}

/// Scheduler names accepted by `--sched`.
pub use ssdsim_host::scheds::SCHED_NAMES;

/// Options of one run that are not part of the simulated system.
#[derive(Clone, Debug)]
pub struct RunOptions {
    /// Check the FTL's invariants after the run (slow on big drives).
    pub check_invariants: bool,
    /// Attach the power model (energy_j, power_w, efficiency in the report).
    pub power: bool,
    /// Power time-series sampling interval.
    pub power_sample: ssd_core::Dur,
    /// Write the power time series as CSV here.
    pub power_trace: Option<std::path::PathBuf>,
    /// Plot power over time (SVG) here. Needs the `plots` feature: without
    /// it [`run_config`] refuses a run that asks for a plot, before
    /// simulating.
    pub plot_power: Option<std::path::PathBuf>,
    /// Plot the energy breakdown (SVG) here (the `plots` feature, as
    /// `plot_power`).
    pub plot_breakdown: Option<std::path::PathBuf>,
    /// Keep the power model's time series in [`RunOutput::power_series`]
    /// (what [`html::run_page`] draws as power over time). Off by default:
    /// the series is sampled whenever the power model runs, but a long run
    /// has up to 262,144 samples, which most callers do not want copied.
    pub keep_power_series: bool,
    /// Progress bars (preconditioning, then the measured phase): none, on
    /// stderr when it is an interactive terminal, or into a sink (tests).
    /// They change no result. Without the `progress` feature the field is
    /// still here and every mode draws nothing.
    pub progress: Progress,
    /// Write the block requests the run hands the block layer as a trace
    /// (`--record-trace`): what a buffered or file-level run's page cache
    /// and file system sent the device. The file appears (or replaces an
    /// old one) only once the run succeeded.
    pub record_trace: Option<RecordTrace>,
    /// Where the preconditioned drive comes from and goes to: saved to a
    /// file, loaded from one instead of preconditioning, or shared with
    /// other runs of the same drive ([`state`]).
    pub drive_state: state::DriveStateOpts,
}

/// Where and in which format [`RunOptions::record_trace`] writes.
#[derive(Clone, Debug)]
pub struct RecordTrace {
    /// File to write the trace to (`.gz` is compressed).
    pub path: std::path::PathBuf,
    /// The trace format to write.
    pub format: ssdsim_host::trace::TraceFormat,
}

impl Default for RunOptions {
    fn default() -> Self {
        RunOptions {
            check_invariants: false,
            power: true,
            power_sample: power::DEFAULT_SAMPLE,
            power_trace: None,
            plot_power: None,
            plot_breakdown: None,
            keep_power_series: false,
            progress: Progress::Off,
            record_trace: None,
            drive_state: state::DriveStateOpts::default(),
        }
    }
}

/// What a run produces.
pub struct RunOutput {
    /// The report, as `ssdsim run --format json` prints it.
    pub report: Report,
    /// Latency CDF of all requests: (microseconds, cumulative fraction), 100 points.
    pub cdf: Vec<(f64, f64)>,
    /// The latency histograms the report summarises, for outputs that need
    /// more of them (fio's JSON percentiles).
    pub latency: RunLatencies,
    /// The power model's time series (watts per component, IOPS, MB/s per
    /// sample) with [`RunOptions::keep_power_series`] and the power model;
    /// empty otherwise.
    pub power_series: Vec<power::Sample>,
}

/// The latency histograms of the measured phase, by direction: the
/// application's calls in a buffered run (the report's `app.latency_us`),
/// else the block requests (`latency_us`).
#[derive(Clone, Debug, Default)]
pub struct RunLatencies {
    /// Read latencies.
    pub read: ssd_core::stats::LatencyHist,
    /// Write latencies.
    pub write: ssd_core::stats::LatencyHist,
    /// Trims (at the block level, flushes too).
    pub trim: ssd_core::stats::LatencyHist,
    /// fsync calls (buffered runs only).
    pub sync: ssd_core::stats::LatencyHist,
    /// Application calls (a buffered run), not block requests.
    pub app: bool,
    /// A run of `[[flow]]`s: each flow's own, in slot order (a buffered
    /// flow's application calls; another flow's requests from their arrival
    /// at the flow). Empty otherwise.
    pub flows: Vec<RunLatencies>,
}

impl RunLatencies {
    /// The block requests' histograms (trims and flushes as `trim`).
    pub fn of_requests(l: &ssd_core::stats::Latencies) -> RunLatencies {
        RunLatencies {
            read: l.read.clone(),
            write: l.write.clone(),
            trim: l.other.clone(),
            ..RunLatencies::default()
        }
    }
}

fn latencies<O: Observer>(sim: &Sim<O>) -> RunLatencies {
    match &sim.src {
        AnySource::Flows(f) => RunLatencies {
            flows: (0..f.len())
                .map(|i| match f.source(i) {
                    AnySource::Buffered(pc) => app_latencies(pc),
                    _ => RunLatencies::of_requests(f.latencies(i)),
                })
                .collect(),
            ..RunLatencies::of_requests(&sim.lat)
        },
        AnySource::Buffered(pc) => app_latencies(pc),
        _ => RunLatencies::of_requests(&sim.lat),
    }
}

/// A page cache's application calls' latencies.
fn app_latencies<S: ssdsim_host::workload::AppSource>(
    pc: &ssdsim_host::pagecache::PageCache<S>,
) -> RunLatencies {
    let [read, write, trim, sync] = pc.app_latencies().clone();
    RunLatencies {
        read,
        write,
        trim,
        sync,
        app: true,
        flows: Vec::new(),
    }
}

/// A simulation of the CLI's choices; beside its observer `O`, the progress
/// meter of the measured phase (empty unless a bar is drawn).
pub(crate) type Sim<O> =
    Simulation<ftl::AnyFtl, AnySource, ssdsim_host::scheds::AnySched, Tee<O, progress::RunMeter>>;

/// The simulation of `cfg`; its observer is made by `obs` from the settings
/// once the FTL is built (`dram.capacity = "fit"` is resolved by then).
fn build<O: Observer>(
    cfg: &SsdConfig,
    mut settings: Settings,
    obs: impl FnOnce(&Settings) -> Result<O, RunError>,
    only: Option<usize>,
    record: Option<(&RecordTrace, &PendingFile)>,
) -> Result<Sim<O>, RunError> {
    let ftl = ftl::build(&settings.config.ftl, &settings.shape())?;
    settings.fit_dram(ssd_core::ftl::Ftl::mapping_table_bytes(&ftl));
    let obs = obs(&settings)?;
    let sched = ssdsim_host::scheds::build_host_queues(
        &cfg.sched,
        &cfg.host,
        &cfg.flows,
        settings.logical_bytes() / 512,
    )?;
    let mut src = match only {
        Some(_) => build_flows(cfg, &settings, only)?,
        None => build_source(cfg, &settings)?,
    };
    if let Some((r, pending)) = record {
        let label = r.path.display().to_string();
        let file = pending
            .writer()
            .map_err(|e| RunError::Io(format!("{label}: cannot write: {e}")))?;
        let file = std::io::BufWriter::new(file);
        let gz = r.path.extension().is_some_and(|e| e == "gz");
        let out: Box<dyn std::io::Write + Send> = if gz {
            Box::new(GzTrace(flate2::write::GzEncoder::new(
                file,
                flate2::Compression::default(),
            )))
        } else {
            Box::new(file)
        };
        src = AnySource::Recorded(Box::new(
            ssdsim_host::trace::record::Recorder::new(src, out, r.format, &label)
                .map_err(RunError::Input)?,
        ));
    }
    let obs = Tee(obs, progress::RunMeter::off());
    Ok(Simulation::new(settings, ftl, src, sched, obs))
}

/// A `.gz` recorded trace: the recorder flushes its output once, at the
/// run's end ([`ssdsim_host::trace::record::Recorder::finish`]), and that flush
/// ends the gzip stream (its trailer), as `trace convert` ends one, before
/// the file is renamed into place.
struct GzTrace<W: std::io::Write>(flate2::write::GzEncoder<W>);

impl<W: std::io::Write> std::io::Write for GzTrace<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.write(buf)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.0.try_finish()?;
        self.0.get_mut().flush()
    }
}

/// Precondition as configured, with its progress bar.
fn precondition<O: Observer>(sim: &mut Sim<O>, opts: &RunOptions) {
    #[cfg(feature = "progress")]
    match progress::bar(
        opts.progress,
        0,
        "precondition {prefix} [{bar:24}] {percent:>3}% {msg} ({elapsed})",
    ) {
        Some(bar) => precondition_with_bar(sim, bar),
        None => {
            sim.precondition();
        }
    }
    #[cfg(not(feature = "progress"))]
    {
        let _ = opts;
        sim.precondition();
    }
}

/// Bring the drive to its preconditioned state: loaded from a file, taken
/// from the runs sharing it, or preconditioned here; then saved if asked.
fn prepare_drive<O: Observer>(
    cfg: &SsdConfig,
    sim: &mut Sim<O>,
    opts: &RunOptions,
) -> Result<(), RunError> {
    let ds = &opts.drive_state;
    let started = std::time::Instant::now();
    let restore = |sim: &mut Sim<O>, s: state::State, what: &str| {
        sim.restore_drive_state(s, started.elapsed().as_secs_f64())
            .map_err(|e| RunError::Input(format!("{what}: {e}")))
    };
    if let Some(path) = &ds.load {
        let s = state::load(path, cfg)?;
        let what = format!("--load-state {}", path.display());
        restore(sim, s, &what)?;
        // A file whose checksum holds but whose maps do not (written by
        // hand, or by a broken build) is refused here, not met mid-run.
        // (A map that points outside its tables may panic the check.)
        let checked = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            ssd_core::ftl::Ftl::check_invariants(&sim.ftl)
        }))
        .unwrap_or_else(|_| Err("its tables do not fit the drive".into()));
        checked
            .map_err(|e| RunError::Input(format!("{what}: the saved FTL is inconsistent: {e}")))?;
    } else {
        let shared = match ds
            .shared
            .as_ref()
            .and_then(|c| Some((c, state::shape_of(cfg)?)))
        {
            Some((cache, shape)) => cache.take(&shape, || {
                precondition(sim, opts);
                Some(sim.drive_state())
            }),
            None => None,
        };
        match shared {
            Some((_, true)) => {}
            Some((Some(s), false)) => restore(sim, (*s).clone(), "a shared preconditioned drive")?,
            // Not shared, or the run that was to make it failed first.
            Some((None, false)) | None => precondition(sim, opts),
        }
    }
    if let Some(path) = &ds.save {
        state::save(path, cfg, sim)?;
    }
    Ok(())
}

fn finish<O: Observer>(
    cfg: &SsdConfig,
    sim: &mut Sim<O>,
    opts: &RunOptions,
) -> Result<Report, RunError> {
    prepare_drive(cfg, sim, opts)?;
    // The measured phase's bar, from here (the preconditioning bar is gone).
    let trace = match &sim.src {
        AnySource::Trace(t) => t.file_handle().ok(),
        _ => None,
    };
    let logical = sim.settings.logical_bytes();
    sim.obs.1 = progress::RunMeter::new(opts.progress, cfg, logical, trace);
    let report = sim.run();
    sim.obs.1 = progress::RunMeter::off();
    let mut report = report?;
    if let AnySource::Trace(t) = &sim.src {
        // Which format the replay read, and whether it was detected.
        report.extra.insert(
            "trace".into(),
            serde_json::json!({
                "path": cfg.trace.as_ref().map(|t| t.path.clone()).unwrap_or_default(),
                "format": t.format().name(),
                "detected": !matches!(&cfg.trace, Some(t) if t.format.is_some()),
            }),
        );
    }
    check_measured(
        cfg,
        report,
        sim.in_ramp(),
        sim.now(),
        || ssd_core::ftl::Ftl::check_invariants(&sim.ftl),
        opts,
    )
}

/// What a finished run must be to report: the ramp over and something
/// completed; with [`RunOptions::check_invariants`], the FTL's invariants
/// (`invariants`) hold. A run of the built-in parts and one of
/// [`custom`] parts check the same.
pub(crate) fn check_measured(
    cfg: &SsdConfig,
    mut report: Report,
    in_ramp: bool,
    now: ssd_core::SimTime,
    invariants: impl FnOnce() -> Result<(), String>,
    opts: &RunOptions,
) -> Result<Report, RunError> {
    if report.run.precondition == "none" && report.host.reads > 0 && report.flash.page_reads == 0 {
        // Reads of pages never written cost no flash read: a newcomer's
        // first run on defaults measures an empty drive.
        report
            .notes
            .insert("empty_drive_reads".into(), report.host.reads);
    }
    if in_ramp {
        let ramp = cfg.sim.ramp_time.unwrap_or_default();
        return Err(RunError::Input(format!(
            "the run ended at {:.9} s of simulated time, before the end of the ramp \
             (sim.ramp_time {ramp}): nothing was measured (shorten the ramp, or give the \
             workload more requests or time)",
            now.secs_f64()
        )));
    }
    let calls = |v: &serde_json::Value| {
        v.get("app")
            .and_then(|a| a.get("calls"))
            .and_then(|c| c.as_u64())
            .unwrap_or(0)
    };
    // The application's calls: the run's, or its flows' (buffered fio jobs
    // run as flows).
    let flow_calls: u64 = report
        .extra
        .get("flows")
        .and_then(|f| f.as_array())
        .map_or(0, |f| f.iter().map(calls).sum());
    let app_calls = report
        .extra
        .get("app")
        .and_then(|a| a.get("calls"))
        .and_then(|c| c.as_u64())
        .unwrap_or(0)
        + flow_calls;
    // A buffered run whose calls all hit the cache is a result (the device
    // saw nothing); a run that completed nothing at all is not.
    if report.host.requests == 0 && app_calls == 0 {
        // Latencies, IOPS and energy per request of nothing: a report of
        // zeros would read as a result.
        let unfinished = report
            .notes
            .get("time_limit_requests_unfinished")
            .map(|n| format!(" ({n} requests were still in flight at the time limit)"))
            .unwrap_or_default();
        return Err(RunError::Input(format!(
            "the run completed no request in {:.9} s of simulated time{unfinished}: \
             nothing to report (raise sim.time_limit, or check the workload)",
            report.host.sim_time_s
        )));
    }
    if opts.check_invariants {
        invariants().map_err(|e| RunError::Input(format!("FTL invariant broken: {e}")))?;
    }
    Ok(report)
}

/// Precondition with a progress bar on stderr: a large or slow-to-converge
/// drive (a hybrid FTL's merges) can take minutes before the measured phase.
#[cfg(feature = "progress")]
fn precondition_with_bar<O: Observer>(sim: &mut Sim<O>, bar: indicatif::ProgressBar) {
    use ssd_core::engine::PreconditionProgress as P;
    sim.precondition_with(|p| {
        let (len, pos, prefix, msg) = match p {
            P::Fill { done, total } => (total, done, "fill".to_string(), String::new()),
            P::Steady {
                round,
                max_rounds,
                done,
                round_pages,
                last_waf,
            } => (
                round_pages,
                done,
                format!("steady {round}/{max_rounds}"),
                last_waf.map_or(String::new(), |w| format!("WAF {w:.3}")),
            ),
        };
        bar.set_length(len);
        bar.set_position(pos);
        bar.set_prefix(prefix);
        bar.set_message(msg);
    });
    bar.finish_and_clear();
}

/// Validate `cfg`, build everything, precondition, run, report. With two
/// or more flows and `sim.alone_runs`, each flow is also run alone to report
/// its slowdown and the run's fairness.
///
/// [`RunOptions::record_trace`] is written to a temporary file beside it,
/// which replaces it only once the whole run succeeded: a refused or failed
/// run leaves no empty or partial trace behind, and a file that was there
/// before is neither truncated nor removed.
pub fn run_config(cfg: &SsdConfig, opts: &RunOptions) -> Result<RunOutput, RunError> {
    check_options(opts)?;
    if let Some(p) = &opts.drive_state.save {
        // Before a preconditioning that may take minutes: can it be written?
        PendingFile::create(p).map_err(|e| {
            RunError::Io(format!("--save-state {}: cannot write: {e}", p.display()))
        })?;
    }
    let cannot_write = |r: &RecordTrace, e: std::io::Error| {
        RunError::Io(format!("{}: cannot write: {e}", r.path.display()))
    };
    let pending = match &opts.record_trace {
        Some(r) => Some((
            r,
            PendingFile::create(&r.path).map_err(|e| cannot_write(r, e))?,
        )),
        None => None,
    };
    // With alone runs, the shared run and each flow's alone run start from
    // one preconditioning (the same drive: the same configuration).
    let alone = cfg.flows.len() >= 2 && cfg.sim.alone_runs;
    let with_cache;
    let own = alone && opts.drive_state.load.is_none() && opts.drive_state.shared.is_none();
    let opts = match own.then(|| state::shape_of(cfg)).flatten() {
        Some(shape) => {
            let key = state::shape_key(&shape);
            let runs = std::iter::repeat_n(key, cfg.flows.len() + 1);
            with_cache = RunOptions {
                drive_state: state::DriveStateOpts {
                    shared: Some(std::sync::Arc::new(state::StateCache::new(runs))),
                    ..opts.drive_state.clone()
                },
                ..opts.clone()
            };
            &with_cache
        }
        _ => opts,
    };
    let mut out = run_shared(cfg, opts, pending.as_ref().map(|(r, p)| (*r, p)))?;
    if alone {
        add_slowdowns(cfg, opts, &mut out.report)?;
    }
    if let Some((r, p)) = pending {
        p.commit().map_err(|e| cannot_write(r, e))?;
    }
    Ok(out)
}

/// Options this build cannot honour: a plot without the `plots` feature.
fn check_options(opts: &RunOptions) -> Result<(), RunError> {
    #[cfg(not(feature = "plots"))]
    if opts.plot_power.is_some() || opts.plot_breakdown.is_some() {
        return Err(RunError::Input(
            "plot_power/plot_breakdown: this build of the ssdsim library has no plots \
             (its `plots` feature is off)"
                .into(),
        ));
    }
    #[cfg(feature = "plots")]
    let _ = opts;
    Ok(())
}

/// What [`run_config`] checks before it simulates: the options, the
/// configuration's validation, the power model's parameters, and the
/// construction of the FTL, the host queues and the workload source (a
/// trace file is opened), all dropped unused. [`SsdBuilder::build`] refuses
/// with these errors.
pub(crate) fn check_runnable(cfg: &SsdConfig, opts: &RunOptions) -> Result<(), RunError> {
    check_options(opts)?;
    let settings = cfg.validate()?;
    if opts.power {
        build(cfg, settings, power_observer(opts), None, None)?;
    } else {
        build(cfg, settings, no_observer, None, None)?;
    }
    Ok(())
}

/// Run flow `slot` of `cfg` alone (its range, queue, priority and seed as in
/// the shared run; the other flows idle) and return its `flows` entry.
pub fn run_flow_alone(
    cfg: &SsdConfig,
    slot: usize,
    opts: &RunOptions,
) -> Result<serde_json::Value, RunError> {
    let settings = cfg.validate()?;
    let mut sim = build(cfg, settings, no_observer, Some(slot), None)?;
    let quiet = RunOptions {
        check_invariants: false,
        power: false,
        power_trace: None,
        plot_power: None,
        plot_breakdown: None,
        keep_power_series: false,
        progress: Progress::Off,
        record_trace: None,
        // The alone runs start from the shared run's drive; they save nothing.
        drive_state: state::DriveStateOpts {
            save: None,
            ..opts.drive_state.clone()
        },
        ..opts.clone()
    };
    let report = finish(cfg, &mut sim, &quiet)?;
    report
        .extra
        .get("flows")
        .and_then(|f| f.get(0))
        .cloned()
        .ok_or_else(|| RunError::Input(format!("flow {slot} alone reported no flow")))
}

/// MQSim's slowdown (a flow's mean end-to-end latency with the others over
/// alone) per flow, and fairness (the smallest slowdown over the largest).
fn add_slowdowns(cfg: &SsdConfig, opts: &RunOptions, report: &mut Report) -> Result<(), RunError> {
    let mean = |v: &serde_json::Value| v["latency_us"]["mean"].as_f64().unwrap_or(0.0);
    let mut slow = Vec::new();
    for i in 0..cfg.flows.len() {
        let alone = run_flow_alone(cfg, i, opts)?;
        let Some(shared) = report.extra.get_mut("flows").and_then(|f| f.get_mut(i)) else {
            return Err(RunError::Input("the shared run reported no flows".into()));
        };
        let s = if mean(&alone) > 0.0 && mean(shared) > 0.0 {
            Some(mean(shared) / mean(&alone))
        } else {
            None
        };
        shared["alone"] = serde_json::json!({
            "requests": alone["requests"],
            "iops": alone["iops"],
            "bandwidth_mbps": alone["bandwidth_mbps"],
            "latency_us": alone["latency_us"],
            "device_response_us": alone["device_response_us"],
        });
        shared["slowdown"] = serde_json::json!(s);
        slow.extend(s);
    }
    if slow.len() == cfg.flows.len() {
        let lo = slow.iter().cloned().fold(f64::INFINITY, f64::min);
        let hi = slow.iter().cloned().fold(0.0, f64::max);
        report.extra.insert(
            "fairness".to_string(),
            serde_json::json!({
                "fairness": lo / hi,
                "slowdown_min": lo,
                "slowdown_max": hi,
            }),
        );
    } else {
        // A flow that completed nothing, with the others or alone, has no
        // slowdown: the fairness of the run is not defined.
        report.notes.insert(
            "fairness_undefined_flows_without_latency".to_string(),
            (cfg.flows.len() - slow.len()) as u64,
        );
    }
    Ok(())
}

/// No observer (for [`build`]).
fn no_observer(_: &Settings) -> Result<NullObserver, RunError> {
    Ok(NullObserver)
}

/// The power model of `opts` (for [`build`]).
fn power_observer(
    opts: &RunOptions,
) -> impl FnOnce(&Settings) -> Result<power::PowerObserver, RunError> + '_ {
    |s| power::PowerObserver::new(s, opts.power_sample).map_err(|e| RunError::Input(e.to_string()))
}

/// The recorded trace's last bytes written, and its first error.
fn finish_record<O: Observer>(sim: &mut Sim<O>) -> Result<(), RunError> {
    if let AnySource::Recorded(r) = &mut sim.src {
        r.finish().map_err(RunError::Io)?;
    }
    Ok(())
}

/// The power model's part of a finished run: its sections added to the
/// report, and the time series, CSV and plots [`RunOptions`] asks for.
pub(crate) fn power_outputs(
    obs: &mut power::PowerObserver,
    mut report: Report,
    opts: &RunOptions,
) -> Result<(Report, Vec<power::Sample>), RunError> {
    let extra = obs
        .finish_report(&report)
        .map_err(|e| RunError::Input(e.to_string()))?;
    report.extra.extend(extra);
    if let Some(p) = &opts.power_trace {
        obs.write_csv(p).map_err(|e| RunError::Io(e.to_string()))?;
    }
    #[cfg(feature = "plots")]
    if let Some(p) = &opts.plot_power {
        plots::write_power(p, &obs.samples(), report.extra.get("power_w")).map_err(RunError::Io)?;
    }
    #[cfg(feature = "plots")]
    if let Some(p) = &opts.plot_breakdown {
        let e = report
            .extra
            .get("energy_j")
            .ok_or_else(|| RunError::Io(format!("{}: the report has no energy", p.display())))?;
        plots::write_breakdown(p, e).map_err(RunError::Io)?;
    }
    let series = if opts.keep_power_series {
        obs.samples()
    } else {
        Vec::new()
    };
    Ok((report, series))
}

fn run_shared(
    cfg: &SsdConfig,
    opts: &RunOptions,
    record: Option<(&RecordTrace, &PendingFile)>,
) -> Result<RunOutput, RunError> {
    let settings = cfg.validate()?;
    if opts.power {
        let mut sim = build(cfg, settings, power_observer(opts), None, record)?;
        let report = finish(cfg, &mut sim, opts)?;
        finish_record(&mut sim)?;
        let (report, power_series) = power_outputs(&mut sim.obs.0, report, opts)?;
        let cdf = sim.lat.all().cdf(100);
        let latency = latencies(&sim);
        Ok(RunOutput {
            report,
            cdf,
            latency,
            power_series,
        })
    } else {
        let mut sim = build(cfg, settings, no_observer, None, record)?;
        let report = finish(cfg, &mut sim, opts)?;
        finish_record(&mut sim)?;
        let cdf = sim.lat.all().cdf(100);
        let latency = latencies(&sim);
        Ok(RunOutput {
            report,
            cdf,
            latency,
            power_series: Vec::new(),
        })
    }
}

// ------------------------------------------------------------------ config resolution

/// Apply a configuration flag ([`flags::FLAGS`]) by its rule: a preset
/// replaces whole sections; a field flag sets one dotted field, so errors
/// name that field. A name that is no flag is taken as a dotted field
/// (`--set`'s keys go through here too).
pub fn apply_flag(cfg: &mut SsdConfig, flag: &str, value: &str) -> Result<(), ConfigError> {
    use flags::Rule;
    let v = value.trim();
    let Some(f) = flags::find(flag) else {
        return set_field(cfg, flag, v);
    };
    match f.rule {
        Rule::Field(field) => set_field(cfg, field, v),
        Rule::FioSize(field) => {
            // fio's suffixes, but an IEC one (`KiB`) means 1024 as IEC has
            // it: fio's kb_base=1000 reading, not its compatibility mode's.
            let iec = v.to_ascii_lowercase().ends_with("ib");
            let b = fio::fio_size(v, if iec { 1000 } else { 1024 })
                .map_err(|m| ssdsim_host::config::invalid(field, m))?;
            set_field(cfg, field, &b.0.to_string())
        }
        Rule::Duration(field) => {
            require_unit(f.name, v)?;
            set_field(cfg, field, v)
        }
        Rule::Nand => {
            let base = SsdConfig::with_nand(v)?;
            let keep_power =
                cfg.power.name != PowerConfig::lee2011().name && cfg.power.name != "park-slc";
            cfg.nand = base.nand;
            if !keep_power {
                cfg.power = base.power;
            }
            Ok(())
        }
        Rule::Device => {
            *cfg = cfg.clone().with_device(v)?;
            Ok(())
        }
        Rule::Interface => {
            let i: Interface = serde_json::from_value(serde_json::Value::String(v.to_string()))
                .map_err(|_| {
                    ssdsim_host::config::invalid(
                        "host.interface",
                        format!(
                            "unknown interface {v:?} (sata3g, sata6g, nvme-gen3x4, nvme-gen4x4)"
                        ),
                    )
                })?;
            cfg.host = HostConfig::preset(i);
            Ok(())
        }
        Rule::Power => {
            cfg.power = PowerConfig::preset(v)?;
            Ok(())
        }
        Rule::GcPolicy => {
            let p = ssdsim_host::config::GcPolicy::parse(v)
                .map_err(|m| ssdsim_host::config::invalid("ftl.gc_policy", m))?;
            cfg.ftl.gc_policy = p;
            Ok(())
        }
        Rule::Trace => {
            if v.is_empty() || v == "none" {
                cfg.trace = None;
            } else {
                let format = cfg.trace.as_ref().and_then(|t| t.format.clone());
                cfg.trace = Some(ssdsim_host::config::TraceSpec {
                    path: v.to_string(),
                    format,
                });
            }
            Ok(())
        }
        Rule::TraceFormat => {
            let t = cfg.trace.get_or_insert(ssdsim_host::config::TraceSpec {
                path: String::new(),
                format: None,
            });
            t.format = Some(v.to_string());
            Ok(())
        }
        Rule::Personality => {
            if v.is_empty() || v == "none" {
                cfg.personality = None;
            } else {
                let k = ssdsim_host::personality::PersonalityKind::parse(v)
                    .map_err(|m| ssdsim_host::config::invalid("personality.kind", m))?;
                cfg.personality = Some(ssdsim_host::personality::PersonalityConfig::new(k));
            }
            Ok(())
        }
        Rule::Runtime => {
            let d = fio::fio_dur(v)
                .map_err(|e| ssdsim_host::config::invalid("--runtime", e.to_string()))?;
            if d.0 == 0 {
                return Err(ssdsim_host::config::invalid(
                    "--runtime",
                    "must be positive",
                ));
            }
            // fio's runtime counts from the end of the ramp.
            let limit = d.0 + cfg.sim.ramp_time.map_or(0, |r| r.0);
            if limit > ssd_core::Dur::MAX.0 {
                return Err(ssdsim_host::config::invalid(
                    "--runtime",
                    format!(
                        "with sim.ramp_time, at most {} ns in all (2^62 ns)",
                        ssd_core::Dur::MAX.0
                    ),
                ));
            }
            cfg.sim.time_limit = Some(ssd_core::Dur(limit));
            Ok(())
        }
    }
}

/// A duration flag's value must say its unit: a bare number would be read as
/// nanoseconds (the configuration's unit), which no one means by
/// `--time-limit 1`.
pub fn require_unit(flag: &str, value: &str) -> Result<(), ConfigError> {
    let v = value.trim();
    if !v.is_empty()
        && v.bytes()
            .all(|b| b.is_ascii_digit() || b == b'.' || b == b'_')
    {
        return Err(ssdsim_host::config::invalid(
            &format!("--{flag}"),
            format!(
                "{:?} has no unit: give one of ns, us, ms, s, min, h (e.g. {}s or {}ms)",
                ssd_core::units::clip(v),
                ssd_core::units::clip(v),
                ssd_core::units::clip(v)
            ),
        ));
    }
    Ok(())
}

/// The trace files `cfg` reads: its trace's and its flows' (outputs must
/// not replace them).
pub fn trace_paths(cfg: &SsdConfig) -> Vec<std::path::PathBuf> {
    cfg.trace
        .iter()
        .chain(cfg.flows.iter().filter_map(|f| f.trace.as_ref()))
        .map(|t| std::path::PathBuf::from(&t.path))
        .collect()
}

/// Set a dotted config field (`ftl.op`, `nand.t_r`, ...) from text. The value is
/// read as a TOML literal when it is one (numbers, booleans), else as a string.
pub fn set_field(cfg: &mut SsdConfig, field: &str, value: &str) -> Result<(), ConfigError> {
    // A value set earlier (by a fio job) that TOML cannot hold is named here,
    // not blamed on `field`: before each early return below, and where the
    // echo further down fails (it does for every such value), so that a
    // valid configuration is not serialized an extra time per key.
    // The optional sections exist once a workload selects them: naming the
    // personality's kind (or the trace's path) selects it.
    let bare = value.trim().trim_matches('"');
    match field {
        "personality.kind" if cfg.personality.is_none() => {
            cfg.check_writable()?;
            return apply_flag(cfg, "personality", bare);
        }
        "trace.path" if cfg.trace.is_none() => {
            cfg.check_writable()?;
            return apply_flag(cfg, "trace", bare);
        }
        f if f.starts_with("personality.") && cfg.personality.is_none() => {
            cfg.check_writable()?;
            return Err(ssdsim_host::config::invalid(
                field,
                "no personality is selected: give --personality NAME (or \
                 personality.kind=NAME) before setting its fields",
            ));
        }
        f if f.starts_with("trace.") && cfg.trace.is_none() => {
            cfg.check_writable()?;
            return Err(ssdsim_host::config::invalid(
                field,
                "no trace is selected: give --trace FILE (or trace.path=FILE) before \
                 setting its fields",
            ));
        }
        _ => {}
    }
    let parsed = parse_value(value);
    let parts: Vec<&str> = field.split('.').collect();
    // A field inside one section: only that section is echoed and read
    // back (a configuration's sections are read independently), unless
    // anything is out of the ordinary, when the whole configuration is.
    if set_in_section(cfg, &parts, &parsed).is_some() {
        return Ok(());
    }
    count_whole_echo();
    let mut root = match toml::Value::try_from(&*cfg) {
        Ok(root) => root,
        Err(e) => {
            cfg.check_writable()?;
            return Err(ssdsim_host::config::invalid(field, e.to_string()));
        }
    };
    let (last, sections) = parts.split_last().expect("split yields one part");
    // Sections by name; the entries of an array of tables (`flow.1.priority`)
    // by index. A section absent from the echo is an optional one not set
    // (`nand.retry`): it is created, and reading the configuration back
    // tells whether it is one (and which of its fields are still missing).
    let mut at = &mut root;
    let mut created: Option<&str> = None;
    for p in sections {
        at = match at {
            toml::Value::Table(t) => {
                if !t.contains_key(*p) && created.is_none() {
                    created = Some(p);
                }
                Some(
                    t.entry(p.to_string())
                        .or_insert_with(|| toml::Value::Table(toml::Table::new())),
                )
            }
            toml::Value::Array(a) => p.parse::<usize>().ok().and_then(|i| a.get_mut(i)),
            _ => None,
        }
        .ok_or_else(|| ssdsim_host::config::invalid(field, format!("unknown section {p:?}")))?;
    }
    let cur = at
        .as_table_mut()
        .ok_or_else(|| ssdsim_host::config::invalid(field, "not a section"))?;
    // A field absent from the echo is an unset optional one (None is not
    // written) or not a field at all: every section refuses unknown fields,
    // so reading the configuration back tells which.
    let known = cur.contains_key(*last);
    cur.insert(last.to_string(), parsed);
    // Read the edited tree back directly; only when that fails is it
    // written out as text and parsed, for the error message as it always
    // was (the text round trip reads a tree the same way, at several times
    // the cost).
    if let Ok(c) = root.clone().try_into::<SsdConfig>() {
        *cfg = c;
        return Ok(());
    }
    text_trip(cfg, field, value, root, created, known)
}

/// A `--set` value as TOML reads it when it is a TOML literal (numbers,
/// booleans, arrays), else as a string.
fn parse_value(value: &str) -> toml::Value {
    if let Some(v) = parse_value_plain(value) {
        return v;
    }
    match format!("v = {value}").parse::<toml::Table>() {
        Ok(mut t) => t
            .remove("v")
            .unwrap_or(toml::Value::String(value.to_string())),
        Err(_) => toml::Value::String(value.to_string()),
    }
}

/// [`parse_value`] of the plainest values without a TOML parser (a sweep
/// sets several per point): a word TOML does not read (`randread`), a
/// number with a unit (`4KiB`, `100ms`), a decimal integer or fraction of at
/// most 18 digits each side. `None` for anything else, which TOML reads.
fn parse_value_plain(value: &str) -> Option<toml::Value> {
    let b = value.as_bytes();
    let first = *b.first()?;
    if first.is_ascii_alphabetic() {
        if matches!(value, "true" | "false" | "inf" | "nan")
            || !b
                .iter()
                .all(|&c| c.is_ascii_alphanumeric() || c == b'_' || c == b'-')
        {
            return None;
        }
        return Some(toml::Value::String(value.to_string()));
    }
    let digits = b.strip_prefix(b"-").unwrap_or(b);
    let n = digits.iter().take_while(|c| c.is_ascii_digit()).count();
    if n == 0 || n > 18 || (digits[0] == b'0' && n > 1) {
        return None;
    }
    let rest = &digits[n..];
    if rest.is_empty() {
        return value.parse::<i64>().ok().map(toml::Value::Integer);
    }
    if let Some(frac) = rest.strip_prefix(b".") {
        let decimal = !frac.is_empty() && frac.len() <= 18 && frac.iter().all(u8::is_ascii_digit);
        return decimal.then(|| value.parse::<f64>().ok().map(toml::Value::Float))?;
    }
    // Digits, then letters with no exponent's `e` first: not a TOML value.
    let unit = first != b'-'
        && !matches!(rest[0], b'e' | b'E')
        && rest.iter().all(|c| c.is_ascii_alphabetic());
    unit.then(|| toml::Value::String(value.to_string()))
}

/// [`set_field`] for a dotted field `parts` inside one of the sections
/// every configuration has (or a selected personality or trace): that
/// section echoed as a TOML tree, the value set on it and the section read
/// back. `None` (the caller then goes through the whole configuration,
/// for its error messages) when the section cannot be echoed, a section
/// on the way is missing or not a table, or the result does not read back.
/// A configuration's sections are read independently of each other, so a
/// section read back here is the section the whole configuration's reading
/// back would give.
fn set_in_section(cfg: &mut SsdConfig, parts: &[&str], value: &toml::Value) -> Option<()> {
    fn edit<T: serde::Serialize + serde::de::DeserializeOwned>(
        sec: &T,
        parts: &[&str],
        value: &toml::Value,
    ) -> Option<T> {
        let (last, sections) = parts.split_last()?;
        let mut root = toml::Value::try_from(sec).ok()?;
        let mut at = &mut root;
        for p in sections {
            at = at.as_table_mut()?.get_mut(*p)?;
        }
        // A field not in the echo (an unset optional one, or an unknown one,
        // which the reading back refuses) is inserted as the whole
        // configuration's path does.
        at.as_table_mut()?.insert(last.to_string(), value.clone());
        root.try_into().ok()
    }
    let (sec, rest) = parts.split_first()?;
    if rest.is_empty() {
        return None;
    }
    let c = cfg;
    match *sec {
        "nand" => c.nand = edit(&c.nand, rest, value)?,
        "layout" => c.layout = edit(&c.layout, rest, value)?,
        "controller" => c.controller = edit(&c.controller, rest, value)?,
        "dram" => c.dram = edit(&c.dram, rest, value)?,
        "host" => c.host = edit(&c.host, rest, value)?,
        "ftl" => c.ftl = edit(&c.ftl, rest, value)?,
        "sched" => c.sched = edit(&c.sched, rest, value)?,
        "power" => c.power = edit(&c.power, rest, value)?,
        "workload" => c.workload = edit(&c.workload, rest, value)?,
        "sim" => c.sim = edit(&c.sim, rest, value)?,
        "replay" => c.replay = edit(&c.replay, rest, value)?,
        "page_cache" => c.page_cache = edit(&c.page_cache, rest, value)?,
        "cpu" => c.cpu = edit(&c.cpu, rest, value)?,
        "fs" => c.fs = edit(&c.fs, rest, value)?,
        "personality" => c.personality = Some(edit(c.personality.as_ref()?, rest, value)?),
        "trace" => c.trace = Some(edit(c.trace.as_ref()?, rest, value)?),
        _ => return None,
    }
    Some(())
}

thread_local! {
    static WHOLE_ECHOES: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

fn count_whole_echo() {
    WHOLE_ECHOES.with(|n| n.set(n.get() + 1));
}

/// How many times [`set_field`] on this thread echoed the whole
/// configuration as TOML (for a field outside the sections it edits alone,
/// or an error's message): a test hook, so that a sweep's cost per point is
/// checked without timing it.
#[doc(hidden)]
pub fn set_field_whole_echoes() -> u64 {
    WHOLE_ECHOES.with(|n| n.get())
}

/// [`set_field`]'s reading back of the edited tree `root` through TOML
/// text, whose errors name `field` and say why.
fn text_trip(
    cfg: &mut SsdConfig,
    field: &str,
    value: &str,
    root: toml::Value,
    created: Option<&str>,
    known: bool,
) -> Result<(), ConfigError> {
    let text =
        toml::to_string(&root).map_err(|e| ssdsim_host::config::invalid(field, e.to_string()))?;
    *cfg = toml::from_str(&text).map_err(|e: toml::de::Error| {
        // All digits but beyond TOML's signed 64-bit integers: it was kept as
        // text, and "invalid type: string" would not say why.
        let m = if let Some(p) = created.filter(|_| e.message().starts_with("unknown field")) {
            format!("unknown section {p:?}")
        } else if !known && e.message().starts_with("unknown field") {
            "unknown configuration field".to_string()
        } else if is_integer_text(value) && value.parse::<i64>().is_err() {
            format!(
                "{value} is out of range: configuration integers are TOML's, from {} to {}",
                i64::MIN,
                i64::MAX
            )
        } else {
            e.message().to_string()
        };
        ssdsim_host::config::invalid(field, m)
    })?;
    Ok(())
}

/// `text` is a decimal integer (an optional sign, then digits).
fn is_integer_text(text: &str) -> bool {
    let digits = text.strip_prefix(['+', '-']).unwrap_or(text);
    !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit())
}

/// Build a configuration: preset flags, then the TOML file, then the other flags
/// (flag > file > preset > default).
pub fn resolve_config(
    file: Option<&std::path::Path>,
    flags: &[(String, String)],
) -> Result<SsdConfig, RunError> {
    let text = match file {
        Some(path) => Some(
            std::fs::read_to_string(path)
                .map_err(|e| RunError::Input(format!("{}: cannot read: {e}", path.display())))?,
        ),
        None => None,
    };
    let name = file.map(|p| p.display().to_string()).unwrap_or_default();
    resolve_config_text(text.as_deref(), &name, flags)
}

/// [`resolve_config`] over configuration text instead of a file (`source_name`,
/// such as a path, prefixes its parse errors): what the Python bindings and
/// other embedders use to resolve a configuration exactly as the CLI does.
pub fn resolve_config_text(
    text: Option<&str>,
    source_name: &str,
    flags: &[(String, String)],
) -> Result<SsdConfig, RunError> {
    let settings: Vec<Setting> = flags
        .iter()
        .map(|(f, v)| Setting::Flag(f.clone(), v.clone()))
        .collect();
    resolve_settings(SsdConfig::default(), text, source_name, &settings)
}

/// One setting of a configuration's resolution: a flag as [`apply_flag`]
/// takes it (the CLI's flags and `--set`), or a whole section (`nand`,
/// `workload`, ...) as inline TOML, set by [`set_field`] in the flags' turn.
#[derive(Clone, Debug)]
pub(crate) enum Setting {
    Flag(String, String),
    Section(&'static str, String),
}

impl Setting {
    /// The flag's name, or the section's.
    fn key(&self) -> &str {
        match self {
            Setting::Flag(f, _) => f,
            Setting::Section(s, _) => s,
        }
    }

    /// The flag of this name (a section is no flag).
    fn flag(&self, name: &str) -> bool {
        matches!(self, Setting::Flag(f, _) if f == name)
    }

    fn apply(&self, cfg: &mut SsdConfig) -> Result<(), ConfigError> {
        match self {
            Setting::Flag(f, v) => apply_flag(cfg, f, v),
            Setting::Section(s, v) => set_field(cfg, s, v),
        }
    }
}

/// [`resolve_config_text`] from `base` instead of the defaults, over
/// `settings` (what [`Ssd::builder`] resolves; the CLI's flags are all
/// [`Setting::Flag`]s): the preset flags, then the text, then the other
/// settings in order.
pub(crate) fn resolve_settings(
    base: SsdConfig,
    text: Option<&str>,
    source_name: &str,
    settings: &[Setting],
) -> Result<SsdConfig, RunError> {
    let mut cfg = base;
    let is_preset = |s: &Setting| s.flag("nand") || s.flag("interface") || s.flag("power");
    for s in settings.iter().filter(|s| is_preset(s)) {
        s.apply(&mut cfg)?;
    }
    if let Some(text) = text {
        let mut text = std::borrow::Cow::Borrowed(text);
        if settings.iter().any(|s| s.flag("nand")) {
            // The --nand flag wins over the file's nand_preset.
            let mut t: toml::Table = text.parse().map_err(|e: toml::de::Error| {
                RunError::Input(format!("{source_name}: {}", e.message()))
            })?;
            t.remove("nand_preset");
            text = std::borrow::Cow::Owned(toml::to_string(&t).expect("table serializes"));
        }
        cfg = SsdConfig::from_toml_over(Some(cfg), &text, source_name)?;
    }
    for s in settings.iter().filter(|s| !is_preset(s)) {
        s.apply(&mut cfg)?;
    }
    // --runtime counts from the end of the ramp, wherever the ramp was set.
    for s in settings.iter().filter(|s| s.flag("runtime")) {
        s.apply(&mut cfg)?;
    }
    check_flow_keys(&cfg, settings.iter().map(Setting::key))?;
    if settings.iter().any(|s| s.flag("number_ios")) {
        number_ios_to_source(&mut cfg, settings.iter().any(|s| s.flag("max-requests")))?;
    }
    fs_implies_file_level(&mut cfg, settings.iter().map(Setting::key));
    // fio's `size=` ends the job after its bytes (number_ios first if it
    // comes first), where `[workload]`'s own default ends it after
    // `number_ios` requests.
    if settings.iter().any(|s| s.flag("size")) {
        size_ends_the_job(&mut cfg, settings.iter().any(|s| s.flag("number_ios")));
    }
    Ok(cfg)
}

/// With `[[flow]]`s the top-level workload is not run: a key that sets it
/// (a workload flag, `workload`, `workload.*`, `personality*`, `trace*`) is
/// refused rather than dropped.
pub fn check_flow_keys<'a>(
    cfg: &SsdConfig,
    keys: impl IntoIterator<Item = &'a str>,
) -> Result<(), RunError> {
    if cfg.flows.is_empty() {
        return Ok(());
    }
    for k in keys {
        let top = flags::is_workload(k)
            || matches!(k, "workload" | "personality" | "trace" | "max-requests")
            || ["workload.", "personality.", "trace.", "replay."]
                .iter()
                .any(|p| k.starts_with(p));
        if top {
            return Err(RunError::Input(format!(
                "{k}: the configuration has [[flow]]s, each with its own workload; \
                 the top-level workload is not run (set flow.N.workload.*, e.g. \
                 --set flow.0.workload.iodepth=8)"
            )));
        }
    }
    Ok(())
}

/// `--fs` with a personality: a user who names a file system means the
/// personality's file level (every personality has one), unless a key
/// among `keys` sets `personality.level` itself.
pub fn fs_implies_file_level<'a>(cfg: &mut SsdConfig, keys: impl IntoIterator<Item = &'a str>) {
    let mut fs = false;
    for k in keys {
        if k == "personality.level" {
            return;
        }
        fs |= k == "fs";
    }
    if let Some(p) = cfg.personality.as_mut().filter(|_| fs) {
        p.level = ssdsim_host::personality::PersonalityLevel::File;
    }
}

/// `--size` given: the workload ends as fio's does, after `size` bytes, or
/// after `number_ios` requests if those were given too and come first.
pub fn size_ends_the_job(cfg: &mut SsdConfig, number_ios_given: bool) {
    let w = &mut cfg.workload;
    if number_ios_given {
        if w.io_size.is_none() {
            w.io_size = w.size;
        }
    } else {
        w.number_ios = None;
    }
}

/// An explicit `number_ios` (fio: end after that many requests) applied to a
/// personality (its request count) or a trace (its replay limit, unless
/// `max_requests` was given too); otherwise the flag would be dropped without
/// a word, since only the fio-style generator reads `workload.number_ios`.
///
/// `number_ios = 0` is fio's "no count": the fio-style generator then ends by
/// its size; a personality or a trace has no size to end by, so it is
/// refused for them.
pub fn number_ios_to_source(
    cfg: &mut SsdConfig,
    max_requests_given: bool,
) -> Result<(), ConfigError> {
    let n = cfg.workload.number_ios;
    if n.is_none() && (cfg.personality.is_some() || cfg.trace.is_some()) {
        return Err(ssdsim_host::config::invalid(
            "workload.number_ios",
            "0 is fio's \"no count\" (a fio-style job then ends by its size); a personality \
             or a trace needs a count of at least 1",
        ));
    }
    if let Some(p) = cfg.personality.as_mut() {
        p.requests = n.unwrap_or(p.requests);
    } else if cfg.trace.is_some() && !max_requests_given {
        cfg.replay.max_requests = n;
    }
    Ok(())
}

/// Apply the jobs of a fio job file to `c` as `ssdsim run --fio` does
/// (`source` names the file in messages). One job becomes the workload: its
/// ramp and runtime become the run's, the workload and time flags among
/// `flags` (the CLI's flags, not `--set`) still win over the file, then the
/// job ends as fio ends it (size, `number_ios`, runtime, `time_based`)
/// unless `number_ios` was among them. Several jobs (or `numjobs`) become
/// flows ([`fio::jobs_to_flows`]); a workload flag beside them is refused.
/// `warn` gets a line for each job's host-side options accepted without
/// effect. Returns what fio's output needs of the jobs: one for one job,
/// else one per flow.
pub fn apply_fio_jobs(
    c: &mut SsdConfig,
    jobs: Vec<(ssdsim_host::workload::WorkloadConfig, fio::FioJob)>,
    source: &str,
    flags: &[(&str, String)],
    warn: &mut dyn FnMut(String),
) -> Result<Vec<fio::OutputJob>, RunError> {
    let several = jobs.len() > 1 || jobs.first().is_some_and(|j| j.1.numjobs > 1);
    if several {
        if let Some((f, _)) = flags
            .iter()
            .find(|(f, _)| flags::is_workload(f) || matches!(*f, "trace" | "personality"))
        {
            return Err(RunError::Input(format!(
                "--{f}: {source} has several jobs, each its own workload (set flow.N.workload.* with --set)"
            )));
        }
        for (_, j) in &jobs {
            if !j.ignored.is_empty() {
                warn(format!(
                    "{source}: job [{}]: accepted without effect on the simulation (host-side fio options): {}",
                    j.name,
                    j.ignored.join(", ")
                ));
            }
        }
        let out = fio::jobs_to_flows(c, jobs, source)?;
        for (f, v) in flags {
            if matches!(*f, "time-limit" | "runtime") {
                apply_flag(c, f, v)?;
            }
        }
        return Ok(out);
    }
    let (w, job) = jobs.into_iter().next().expect("one job");
    c.workload = w;
    if !job.ignored.is_empty() {
        warn(format!(
            "{source}: accepted without effect on the simulation (host-side fio options): {}",
            job.ignored.join(", ")
        ));
    }
    if job.ramp_time.is_some() {
        c.sim.ramp_time = job.ramp_time;
    }
    if let Some(t) = job.time_limit() {
        c.sim.time_limit = Some(t);
    }
    // Workload and time flags given on the command line still win over the
    // job file.
    let mut number_ios_flag = false;
    for (f, v) in flags {
        if flags::is_workload(f) || matches!(*f, "time-limit" | "runtime") {
            apply_flag(c, f, v)?;
            number_ios_flag |= *f == "number_ios";
        }
    }
    // The job ends as fio ends it (size, number_ios, runtime, time_based); a
    // --number_ios flag says it outright.
    if !number_ios_flag {
        let logical = c.validate()?.logical_bytes();
        job.resolve_end(&mut c.workload, logical);
    }
    Ok(vec![fio::OutputJob {
        name: job.name,
        groupid: 0,
        group_reporting: job.group_reporting,
    }])
}

/// All NAND presets with their derived figures (for `ssdsim presets`).
pub fn nand_presets() -> Vec<NandConfig> {
    NandConfig::presets()
}

/// The host interface names `--interface` accepts.
pub const INTERFACE_NAMES: &[&str] = &["sata3g", "sata6g", "nvme-gen3x4", "nvme-gen4x4"];

/// The host interface presets, in [`INTERFACE_NAMES`] order.
pub fn interface_presets() -> Vec<HostConfig> {
    INTERFACE_NAMES
        .iter()
        .map(|n| {
            let i: Interface = serde_json::from_value(serde_json::Value::String(n.to_string()))
                .expect("a known interface name");
            HostConfig::preset(i)
        })
        .collect()
}

/// Every built-in preset (`ssdsim presets --format json`): NAND, power and
/// host interface presets, and the FTL and scheduler names.
pub fn presets_json() -> serde_json::Value {
    serde_json::json!({
        "nand": nand_presets(),
        "power": PowerConfig::presets(),
        "interface": interface_presets(),
        "device": ssd_core::devices::DEVICE_PRESETS
            .iter()
            .map(|d| serde_json::json!({"name": d.name, "about": d.about, "toml": d.toml}))
            .collect::<Vec<_>>(),
        "ftl": ftl::FTL_NAMES,
        "sched": SCHED_NAMES,
    })
}

/// The version of ssdsim (written in every sweep's identity).
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

#[cfg(test)]
mod tests {
    /// The values read without TOML's parser are read as TOML reads them.
    #[test]
    fn plain_values_read_as_toml_reads_them() {
        let toml = |v: &str| match format!("v = {v}").parse::<toml::Table>() {
            Ok(mut t) => t.remove("v").unwrap(),
            Err(_) => toml::Value::String(v.to_string()),
        };
        let mut plain = 0;
        for v in [
            "randread",
            "rand_read",
            "rand-read",
            "Randread",
            "x",
            "true",
            "false",
            "inf",
            "nan",
            "True",
            "nan-x",
            "infinity",
            "0",
            "7",
            "-3",
            "+3",
            "-0",
            "07",
            "00",
            "-07",
            "123456789012345678",
            "-123456789012345678",
            "1234567890123456789",
            "9223372036854775808",
            "1.5",
            "-1.5",
            "4KiB",
            "4kib",
            "100ms",
            "1s",
            "2GiB",
            "1.5GiB",
            "1e3",
            "1E3",
            "1e",
            "0x10",
            "0o7",
            "0b1",
            "1_000",
            "2024-01-01",
            "07:32:00",
            "a b",
            "\"q\"",
            "'q'",
            "[1, 2]",
            "1 # c",
            "-4KiB",
            "4K iB",
            "",
            " ",
            "é",
            "4é",
            "0.07",
            "-0.5",
            "0.1",
            "123.456",
            "3.14159265358979323",
            "1.",
            ".5",
            "1.5.2",
            "1.5e3",
            "0.30000000000000004",
            "-0.0",
        ] {
            if let Some(p) = super::parse_value_plain(v) {
                plain += 1;
                assert_eq!(format!("{p:?}"), format!("{:?}", toml(v)), "{v:?}");
            }
            let (a, b) = (super::parse_value(v), toml(v));
            assert_eq!(format!("{a:?}"), format!("{b:?}"), "{v:?}");
        }
        assert_eq!(plain, 28);
    }
}
