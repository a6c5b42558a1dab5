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
mod settings;
mod source;
mod ssd;
pub mod state;
pub mod sweep;

/// The crates under the facade, for what it does not name itself: the
/// drive's core (`ssd_core`: the parts' traits, units, the engine), the
/// host stack (`host`), the FTLs (`ftl`) and the power model (`power`).
/// A program that depends on `ssdsim` alone reaches all of them.
pub use ftl;
pub use power;
pub use ssd_core;
pub use ssdsim_host as host;

/// The configuration as typed values: [`SsdConfig`] and
/// each of its sections (the drive's, the FTL's, the scheduler's, the power
/// model's, the host stack's and the workload's), as the builder's setters
/// take them ([`SsdBuilder::ftl_config`], [`SsdBuilder::workload`], ...).
pub mod config {
    pub use ssdsim_host::config::*;
    pub use ssdsim_host::cpu::CpuConfig;
    pub use ssdsim_host::fs::{FsConfig, FsKind};
    pub use ssdsim_host::pagecache::PageCacheConfig;
    pub use ssdsim_host::personality::PersonalityConfig;
    pub use ssdsim_host::workload::{Distribution, RwMode, WorkloadConfig};
}

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

pub use source::*;

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

/// A file-level run that skipped flowops measured less than its workload
/// file asks: the warning `ssdsim run` prints on stderr and a sweep row
/// carries ([`sweep::Row::warnings`]): the count, its share and why, from
/// the report's notes. Filebench itself ends its run at the first flowop
/// that finds no file or no room (`flowop_start`: `FILEBENCH_NORSC` and
/// `FILEBENCH_ERROR` stop the run); ssdsim counts such a flowop as skipped
/// and goes on, so the figures after it are not Filebench's.
pub fn skipped_flowops_warning(notes: &std::collections::BTreeMap<String, u64>) -> Option<String> {
    let n = |k: &str| notes.get(k).copied().unwrap_or(0);
    let skipped = n("filebench_flowops_skipped");
    if skipped == 0 {
        return None;
    }
    let total = n("filebench_flowops").max(skipped);
    let why: Vec<String> = [
        (
            "filebench_flowops_skipped_no_space",
            "the file system had no room for a create or a write",
        ),
        (
            "filebench_flowops_skipped_no_file",
            "no file to pick (none to delete, or no free entry to create)",
        ),
        (
            "filebench_flowops_skipped_no_open_file",
            "no open file to append to, write, read or sync (its create or open failed, or \
             another thread deleted it: Linux would serve those calls on the unlinked file)",
        ),
    ]
    .iter()
    .filter(|(k, _)| n(k) > 0)
    .map(|(k, what)| format!("{} {what}", n(k)))
    .collect();
    Some(format!(
        "WARNING: the file-level flows skipped {skipped} of {total} flowops ({:.1}%): {}; the \
         run measured less than the workload asks (a larger drive, fewer or smaller files, or \
         another personality.prealloc_percent)",
        100.0 * skipped as f64 / total as f64,
        why.join("; ")
    ))
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
                    AnySource::Buffered(pc) => app_latencies(pc.app_latencies().clone()),
                    AnySource::Tenant(v) => app_latencies(v.app_latencies()),
                    AnySource::Placed(p) => match p.inner() {
                        AnySource::Tenant(v) => app_latencies(v.app_latencies()),
                        _ => RunLatencies::of_requests(f.latencies(i)),
                    },
                    _ => RunLatencies::of_requests(f.latencies(i)),
                })
                .collect(),
            ..RunLatencies::of_requests(&sim.lat)
        },
        AnySource::Buffered(pc) => app_latencies(pc.app_latencies().clone()),
        _ => RunLatencies::of_requests(&sim.lat),
    }
}

/// A page cache's application calls' latencies (read, write, trim, fsync).
fn app_latencies(lat: [ssd_core::stats::LatencyHist; 4]) -> RunLatencies {
    let [read, write, trim, sync] = lat;
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
        settings.zone_layout().is_some(),
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
        // The drive built for this run is replaced: its tables go first.
        sim.shed_drive();
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
            Some((Some(s), false)) => {
                sim.shed_drive();
                restore(sim, (*s).clone(), "a shared preconditioned drive")?
            }
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

pub use settings::*;

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
