//! `ssdsim`: simulate flash SSDs. A thin shell over the `ssdsim` library crate.
//!
//! Over 1,500 lines on purpose: the command line's subcommands, each with its
//! flags' handling and its dispatch; the library does the work.

use ssdsim::sweep;

use clap::{Parser, Subcommand, ValueEnum};
use ssdsim::html;
use ssdsim::{resolve_config, run_config, RunError, RunOptions};
use ssdsim_cli::args::ConfigArgs;
use ssdsim_cli::{mqsim, reproduce};
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

/// `ssdsim --version`: the package version and the git commit it was built
/// from ("unknown" outside a git checkout; see build.rs).
const VERSION: &str = concat!(
    env!("CARGO_PKG_VERSION"),
    " (commit ",
    env!("SSDSIM_GIT_COMMIT"),
    ")"
);

#[derive(Parser)]
#[command(
    name = "ssdsim",
    version = VERSION,
    about = "Cycle-approximate flash SSD simulator: timing, FTLs, host schedulers, energy"
)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Clone, Copy, ValueEnum, PartialEq, Eq)]
enum Format {
    Text,
    Json,
}

/// fio's `--output-format` values ssdsim writes.
#[derive(Clone, Copy, ValueEnum, PartialEq, Eq)]
enum FioFormat {
    /// The text report (as --format text)
    Normal,
    /// fio's JSON schema: "fio version", jobs[].read/write/trim.{io_bytes, bw, iops,
    /// runtime, total_ios, clat_ns, lat_ns}
    Json,
}

#[derive(Subcommand)]
#[allow(clippy::large_enum_variant)] // parsed once
enum TraceCmd {
    /// Requests, read/write mix, sizes, randomness, inter-arrival, span, duration
    Stats {
        /// Trace file (.gz accepted)
        file: PathBuf,
        /// Force the trace format instead of detecting it
        #[arg(long = "trace-format")]
        trace_format: Option<String>,
        /// blkparse action to count (Q or D)
        #[arg(long = "blkparse-action", default_value = "Q")]
        blkparse_action: String,
        /// Output format
        #[arg(long, value_enum, default_value = "text")]
        format: Format,
    },
    /// Convert between trace formats
    Convert {
        /// Trace to read (.gz accepted)
        input: PathBuf,
        /// File to write
        output: PathBuf,
        /// Output format (csv, spc, msr, disksim, mqsim, ...)
        #[arg(long)]
        to: String,
        /// Input format (detected when omitted)
        #[arg(long)]
        from: Option<String>,
        /// Skip and count malformed lines instead of failing
        #[arg(long = "skip-bad-lines")]
        skip_bad_lines: bool,
        /// blkparse action to keep (Q or D)
        #[arg(long = "blkparse-action", default_value = "Q")]
        blkparse_action: String,
    },
    /// Run a configuration and write the block stream it sends the device as a
    /// trace (`run --record-trace OUT --record-format FORMAT`; the report on stdout):
    /// a file-level personality's requests after its file system and page cache,
    /// to replay elsewhere
    Record {
        /// File to write
        output: PathBuf,
        /// Trace format (msr, spc, blkparse, disksim, csv, ...)
        #[arg(long, default_value = "msr")]
        to: String,
        #[command(flatten)]
        cfg: ConfigArgs,
        /// TOML configuration (merged over the preset; flags override it)
        #[arg(long)]
        config: Option<PathBuf>,
        /// Set any configuration field (repeatable)
        #[arg(long = "set", value_name = "FIELD=VALUE")]
        set: Vec<String>,
    },
}

#[derive(Subcommand)]
enum ImportCmd {
    /// MQSim's device configuration (ssdconfig.xml) -> ssdsim TOML; what ssdsim
    /// approximates or cannot represent is listed at the top and printed as warnings
    Mqsim {
        /// MQSim device configuration (Execution_Parameter_Set XML)
        file: PathBuf,
        /// Write the TOML here instead of stdout
        #[arg(short = 'o', long = "out")]
        out: Option<PathBuf>,
    },
}

/// Progress bars: on stderr when it is an interactive terminal, unless turned off.
#[derive(clap::Args, Clone, Copy)]
struct ProgressArgs {
    /// Draw no progress bar on stderr (drawn only when stderr is an interactive terminal)
    #[arg(long = "no-progress")]
    no_progress: bool,
    /// Draw the progress bars into nothing, whatever stderr is (for tests: the
    /// progress code runs and changes nothing)
    #[arg(long = "progress-sink", hide = true)]
    progress_sink: bool,
}

impl ProgressArgs {
    fn mode(self) -> ssdsim::Progress {
        if self.no_progress {
            ssdsim::Progress::Off
        } else if self.progress_sink {
            ssdsim::Progress::Sink
        } else {
            ssdsim::Progress::Terminal
        }
    }
}

#[derive(Subcommand)]
#[allow(clippy::large_enum_variant)] // parsed once
enum Cmd {
    /// Simulate one configuration and report latency, throughput, WAF, wear, ...
    Run {
        #[command(flatten)]
        cfg: ConfigArgs,
        /// TOML configuration (merged over the preset; flags override it)
        #[arg(long)]
        config: Option<PathBuf>,
        /// fio job file (a subset; unsupported options are named)
        #[arg(long)]
        fio: Option<PathBuf>,
        /// Set any configuration field: --set ftl.gc_threshold_blocks=4 (repeatable)
        #[arg(long = "set", value_name = "FIELD=VALUE")]
        set: Vec<String>,
        /// Output format: ssdsim's report as text or JSON
        #[arg(long, value_enum, default_value = "text")]
        format: Format,
        /// fio's output format: json writes fio's JSON schema (for tools that read fio's
        /// output), normal the text report
        #[arg(long = "output-format", value_enum, conflicts_with = "format")]
        output_format: Option<FioFormat>,
        /// Write the report here instead of stdout
        #[arg(long)]
        out: Option<PathBuf>,
        /// Print the fully resolved configuration as TOML and exit
        #[arg(long)]
        print_config: bool,
        /// Check the FTL invariants after the run
        #[arg(long)]
        check: bool,
        /// Do not attach the power model
        #[arg(long)]
        no_power: bool,
        /// Power time-series sampling interval; the unit is required: ns, us, ms, s
        /// (e.g. 1ms, 100us)
        #[arg(long = "power-sample", default_value = "1ms")]
        power_sample: String,
        /// Write the power time series (time, total and per-component W, IOPS, MB/s) as CSV
        #[arg(long = "power-trace")]
        power_trace: Option<PathBuf>,
        /// Plot power over time (SVG)
        #[arg(long = "plot-power")]
        plot_power: Option<PathBuf>,
        /// Plot the energy breakdown (SVG)
        #[arg(long = "plot-breakdown")]
        plot_breakdown: Option<PathBuf>,
        /// Write a single-file HTML report (tables, latency CDF, power over time,
        /// energy breakdown, configuration; readable offline)
        #[arg(long)]
        html: Option<PathBuf>,
        /// Write the block requests the run sends the device as a trace here, each at
        /// its submission time (a buffered or file-level run: what its page cache and
        /// file system wrote; a closed loop: when a slot of its iodepth was free)
        #[arg(long = "record-trace")]
        record_trace: Option<PathBuf>,
        /// Format of --record-trace (msr, spc, blkparse, disksim, csv, ...)
        #[arg(
            long = "record-format",
            default_value = "msr",
            requires = "record_trace"
        )]
        record_format: String,
        /// Write the drive as preconditioning left it (FTL maps, block states,
        /// wear, DFTL's mapping cache) to this file, before the measured phase
        #[arg(long = "save-state", value_name = "FILE")]
        save_state: Option<PathBuf>,
        /// Start from the drive saved in this file (--save-state) instead of
        /// preconditioning; refused unless --precondition, the seed, the NAND, the
        /// layout and the FTL are as when it was saved
        #[arg(long = "load-state", value_name = "FILE")]
        load_state: Option<PathBuf>,
        #[command(flatten)]
        progress: ProgressArgs,
    },
    /// Trace tools: statistics, format conversion and recording
    Trace {
        #[command(subcommand)]
        cmd: TraceCmd,
    },
    /// Mapping-table memory per FTL against capacity (Park et al. section 3.3)
    MappingSize {
        /// Capacities: a comma list of sizes, bytes or with a unit (512MiB, 1GiB; KB, MB
        /// and GB are 1000-based)
        #[arg(long, default_value = "512MiB,1GiB,2GiB,4GiB,8GiB,16GiB,32GiB")]
        capacity: String,
        /// Flash page size: bytes, or with a unit (2KiB, 4096)
        #[arg(long = "page-size", default_value = "2KiB")]
        page_size: String,
        /// Pages per block (a count)
        #[arg(long = "pages-per-block", default_value_t = 64)]
        pages_per_block: u32,
        /// page, block, bast, fast, last, dftl or all (comma list)
        #[arg(long, default_value = "all")]
        ftl: String,
        /// Entry size: byte (ceil(log2 N / 8) bytes) or 32bit
        #[arg(long, default_value = "byte")]
        entry: String,
        /// Log area of the hybrid FTLs, a fraction of the capacity (0.05 = 5 %)
        #[arg(long = "log-area", default_value_t = 0.05)]
        log_area: f64,
        /// Write the table as CSV
        #[arg(long)]
        csv: Option<PathBuf>,
        /// Plot table size against capacity (SVG)
        #[arg(long)]
        plot: Option<PathBuf>,
        /// Output format
        #[arg(long, value_enum, default_value = "text")]
        format: Format,
    },
    /// Run the cartesian product of comma-separated flag values (and/or a --grid
    /// file) in parallel; one row per configuration
    Sweep(SweepArgs),
    /// Join sweep shards (JSON lines from --jsonl) into the files a single run writes
    Merge {
        /// Shard files written with `sweep --jsonl`
        #[arg(required = true)]
        inputs: Vec<PathBuf>,
        /// Write the merged rows as CSV
        #[arg(long)]
        csv: Option<PathBuf>,
        /// Write the merged rows as JSON lines
        #[arg(long)]
        jsonl: Option<PathBuf>,
        /// Write the merged table as Markdown
        #[arg(long)]
        md: Option<PathBuf>,
        /// Write comparison charts (SVG) into this directory
        #[arg(long)]
        plot: Option<PathBuf>,
        /// Write a single-file HTML report of the merged sweep (table and charts)
        #[arg(long)]
        html: Option<PathBuf>,
        /// Merge even if points are missing, a shard is empty or a point is
        /// given twice with the same result (warning loudly); shards of another
        /// sweep are always refused
        #[arg(long = "allow-partial")]
        allow_partial: bool,
    },
    /// Reproduce a published study from its experiment files: the paper's figures as
    /// tables, and for each its value or trend next to ssdsim's and whether the
    /// conclusion holds (a report directory with README.md, CSV, JSON lines and HTML)
    Reproduce {
        /// The study (lee-won, park2011, wang2013, sun2014), or all
        #[arg(required_unless_present = "list")]
        study: Option<String>,
        /// List the studies and their experiment files
        #[arg(long)]
        list: bool,
        /// Run each experiment file's quick form (minutes on two cores), not the paper's scale
        #[arg(long)]
        quick: bool,
        /// Write the report directories here, one per study
        #[arg(long, default_value = "reproduce")]
        out: PathBuf,
        /// Worker threads, 0..=1024 (0, the default: one per core); results do not depend on it
        #[arg(long, default_value_t = 0)]
        threads: usize,
    },
    /// Import a drive configuration from another simulator as ssdsim TOML
    Import {
        #[command(subcommand)]
        cmd: ImportCmd,
    },
    /// Fit a drive to a real drive's measurements (fio JSON outputs, datasheet figures):
    /// a configuration file, its fit table with a hold-out check, and what each target pins down
    Calibrate {
        /// The targets file (TOML): the base drive, the free parameters and the targets
        targets: PathBuf,
        /// Write the fitted drive here, a configuration file for `ssdsim run --config`
        #[arg(short = 'o', long)]
        out: Option<PathBuf>,
        /// Format of the fit report (on stdout, or --report)
        #[arg(long, value_enum, default_value = "text")]
        format: Format,
        /// Write the fit report here instead of stdout
        #[arg(long)]
        report: Option<PathBuf>,
        /// Worker threads for the candidate simulations (default: one per core); the result
        /// is the same for any number
        #[arg(long)]
        threads: Option<usize>,
        /// No progress lines on stderr
        #[arg(long)]
        quiet: bool,
    },
    /// List the built-in presets with their parameters
    Presets {
        /// Output format
        #[arg(long, value_enum, default_value = "text")]
        format: Format,
    },
    /// Shell completions for ssdsim, generated from its flags (to stdout, or a file in --out)
    Completions {
        /// The shell
        #[arg(value_enum)]
        shell: clap_complete::Shell,
        /// Write the completion file (named as the shell expects) into this directory
        #[arg(long)]
        out: Option<PathBuf>,
    },
    /// The manual page, generated from ssdsim's flags (ssdsim.1 to stdout, or every
    /// page, ssdsim.1 and ssdsim-SUBCOMMAND.1, into --out)
    Man {
        /// Write the pages into this directory
        #[arg(long)]
        out: Option<PathBuf>,
    },
}

/// Whether standard output was closed when ssdsim started (`>&-`): Rust's
/// runtime puts /dev/null on it, so every write would succeed and the
/// output be lost with exit 0; it is refused here instead, as coreutils
/// refuse it (`echo hi >&-`: "write error: Bad file descriptor", exit 1).
static STDOUT_CLOSED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Note a closed standard output before Rust's runtime starts: the runtime
/// then opens /dev/null on it (so that no file the run opens takes
/// descriptor 1), which hides that it was closed. An ELF constructor runs
/// before `main` and the runtime's start; it only calls fcntl and stores a
/// flag.
#[cfg(target_os = "linux")]
#[used]
#[link_section = ".init_array"]
static NOTE_CLOSED_STDOUT: extern "C" fn() = {
    extern "C" fn note() {
        // SAFETY: fcntl(F_GETFD) on a descriptor reads its flags only.
        if unsafe { libc::fcntl(1, libc::F_GETFD) } == -1 {
            STDOUT_CLOSED.store(true, std::sync::atomic::Ordering::Relaxed);
        }
    }
    note
};

/// The error for output to a standard output that is closed, if it is.
fn stdout_closed() -> Result<(), RunError> {
    if STDOUT_CLOSED.load(std::sync::atomic::Ordering::Relaxed) {
        return Err(RunError::Io(
            "writing to standard output: Bad file descriptor (standard output is closed; \
             redirect it, or name an output file with --out)"
                .into(),
        ));
    }
    Ok(())
}

fn main() -> ExitCode {
    // A write past the file-size limit (ulimit -f) then fails with EFBIG and
    // is reported like any other write error, instead of killing the process.
    #[cfg(unix)]
    // SAFETY: setting a signal's disposition to SIG_IGN installs no handler.
    unsafe {
        libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
    }

    let cli = Cli::parse();
    match real_main(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            let code = e
                .downcast_ref::<RunError>()
                .map(|r| r.exit_code())
                .unwrap_or(1);
            eprintln!("error: {e:#}");
            ExitCode::from(code as u8)
        }
    }
}

fn split_set(set: &[String]) -> Result<Vec<(String, String)>, RunError> {
    set.iter()
        .map(|s| {
            s.split_once('=')
                .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
                .ok_or_else(|| RunError::Input(format!("--set {s:?}: expected FIELD=VALUE")))
        })
        .collect()
}

/// Fail now, before any simulation, if an output file cannot be written
/// (a missing directory, a directory in its place, no permission): a long
/// sweep must not end in an error after its runs. The output itself is
/// neither created nor changed: a file that is there is opened to append
/// (nothing written), and the directory it goes to takes a temporary file
/// beside it, removed at once, as the atomic write will (a refused run then
/// leaves no empty file, also through a dangling symbolic link).
fn check_writable(files: &[Option<&std::path::Path>]) -> Result<(), RunError> {
    for p in files.iter().flatten() {
        let cannot =
            |e: std::io::Error| RunError::Io(format!("{}: cannot write: {e}", p.display()));
        if std::fs::metadata(p).is_ok_and(|m| m.is_file()) {
            std::fs::OpenOptions::new()
                .append(true)
                .open(p)
                .map_err(cannot)?;
        }
        ssd_core::outfile::PendingFile::create(p).map_err(cannot)?;
    }
    Ok(())
}

/// Write `bytes` to the file `p` through a temporary file renamed into place
/// (`ssd_core::outfile::write_atomic`): a failed write is an error and leaves
/// the old file, never a truncated one.
fn write_file(p: &std::path::Path, bytes: &[u8]) -> Result<(), RunError> {
    ssd_core::outfile::write_bytes_atomic(p, bytes)
        .map_err(|e| RunError::Io(format!("{}: cannot write: {e}", p.display())))
}

fn write_out(out: Option<&PathBuf>, text: &str) -> anyhow::Result<()> {
    match out {
        Some(p) => write_file(p, text.as_bytes())?,
        None => {
            stdout_closed()?;
            let mut so = std::io::stdout().lock();
            so.write_all(text.as_bytes())
                .and_then(|()| so.flush())
                .map_err(|e| RunError::Io(format!("writing to standard output: {e}")))?;
        }
    }
    Ok(())
}

/// Refuse outputs that would replace an input (`run --trace F --out F`, a
/// symbolic link or another spelling of it) or another output.
fn refuse_overwrite(
    inputs: &[(&str, Option<&std::path::Path>)],
    outputs: &[(&str, Option<&std::path::Path>)],
) -> Result<(), RunError> {
    let outs: Vec<(&str, &std::path::Path)> = outputs
        .iter()
        .filter_map(|(n, p)| Some((*n, (*p)?)))
        .collect();
    for (i, (on, op)) in outs.iter().enumerate() {
        for (inn, ip) in inputs.iter().filter_map(|(n, p)| Some((*n, (*p)?))) {
            if ssd_core::outfile::same_file(ip, op) {
                return Err(RunError::Input(format!(
                    "{on} {}: is the input {inn} {}; refusing to overwrite an input",
                    op.display(),
                    ip.display()
                )));
            }
        }
        for (on2, op2) in &outs[..i] {
            if ssd_core::outfile::same_file(op, op2) {
                return Err(RunError::Input(format!(
                    "{on} {} and {on2} {} name the same file",
                    op.display(),
                    op2.display()
                )));
            }
        }
    }
    Ok(())
}

/// Read and check sweep shards for `merge`: every row must belong to one
/// sweep (the identity in each row), no file may be empty, no point may be
/// missing or appear twice. With `allow_partial`, missing points, empty files
/// and duplicates with the same result are merged anyway, with a warning;
/// shards of another sweep and conflicting duplicates never are.
fn merge_shards(inputs: &[PathBuf], allow_partial: bool) -> Result<Vec<sweep::Row>, RunError> {
    let mut problems: Vec<String> = Vec::new();
    // (row, file it came from)
    let mut rows: Vec<(sweep::Row, usize)> = Vec::new();
    let mut identity: Option<(String, usize, usize)> = None; // (sweep, points, file)
                                                             // Rows without a checksum (an older ssdsim's): their parameters cannot
                                                             // be checked against their index.
    let mut unchecked = 0usize;
    for (fi, p) in inputs.iter().enumerate() {
        let file_rows = sweep::read_jsonl(p).map_err(RunError::Input)?;
        if file_rows.is_empty() {
            problems.push(format!("{}: no rows (an empty shard)", p.display()));
        }
        for r in file_rows {
            if r.sweep.is_empty() || r.points == 0 {
                return Err(RunError::Input(format!(
                    "{}: point {} carries no sweep identity (written by an older ssdsim?): \
                     rerun the shard to merge it",
                    p.display(),
                    r.index
                )));
            }
            match &identity {
                None => identity = Some((r.sweep.clone(), r.points, fi)),
                Some((id, n, f0)) if *f0 == fi && (*id != r.sweep || *n != r.points) => {
                    return Err(RunError::Input(format!(
                        "{}: point {} belongs to another sweep than the file's first row \
                         (sweep {} of {} points against {id} of {n}): a damaged or mixed shard",
                        p.display(),
                        r.index,
                        r.sweep,
                        r.points
                    )));
                }
                Some((id, n, f0)) if *id != r.sweep || *n != r.points => {
                    return Err(RunError::Input(format!(
                        "{} is a shard of another sweep than {} (sweep {} of {} points against \
                         {id} of {n}: the grid, base configuration, seed or ssdsim version differ)",
                        p.display(),
                        inputs[*f0].display(),
                        r.sweep,
                        r.points
                    )));
                }
                Some(_) => {}
            }
            if r.index >= r.points {
                // Never merged, not even partially: no point of the sweep
                // has this index.
                return Err(RunError::Input(format!(
                    "{}: point {} is outside the sweep's {} points (a damaged row)",
                    p.display(),
                    r.index,
                    r.points
                )));
            }
            if r.check.is_empty() {
                unchecked += 1;
            } else if r.check != sweep::row_check(&r.sweep, r.points, r.index, &r.params) {
                // Never merged, not even partially: the row's parameters
                // (or its index) are not those it was written with.
                let label: Vec<String> = r.params.iter().map(|(k, v)| format!("{k}={v}")).collect();
                return Err(RunError::Input(format!(
                    "{}: point {} ({}) does not match its checksum: the row's index or \
                     parameters were edited or damaged (its results may be another point's); \
                     refusing to merge",
                    p.display(),
                    r.index,
                    label.join(" ")
                )));
            }
            rows.push((r, fi));
        }
    }
    if unchecked > 0 {
        eprintln!(
            "warning: {unchecked} row(s) carry no checksum (written by an older ssdsim): \
             their parameters are not checked against their index"
        );
    }
    rows.sort_by_key(|(r, _)| r.index);
    // wall_s differs between machines; everything else must agree.
    let same = |a: &sweep::Row, b: &sweep::Row| {
        sweep::Row {
            wall_s: 0.0,
            ..a.clone()
        } == sweep::Row {
            wall_s: 0.0,
            ..b.clone()
        }
    };
    for w in rows.windows(2) {
        let ((a, fa), (b, fb)) = (&w[0], &w[1]);
        if a.index != b.index {
            continue;
        }
        let (na, nb) = (inputs[*fa].display(), inputs[*fb].display());
        if !same(a, b) {
            return Err(RunError::Input(format!(
                "point {} is in {na} and in {nb} with different results",
                a.index
            )));
        }
        problems.push(if fa == fb {
            format!("point {} appears twice in {na}", a.index)
        } else {
            format!(
                "point {} is in both {na} and {nb} (a shard given twice?)",
                a.index
            )
        });
    }
    // Points of one grid differ in at least one axis value: two indices with
    // the same parameters mean a damaged or edited row carrying one point's
    // parameters with another's results (never merged, not even partially).
    let mut seen: std::collections::HashMap<&[(String, String)], (usize, usize)> =
        std::collections::HashMap::with_capacity(rows.len());
    for (r, f) in &rows {
        if let Some(&(i0, f0)) = seen.get(r.params.as_slice()) {
            if i0 != r.index {
                let label: Vec<String> = r.params.iter().map(|(k, v)| format!("{k}={v}")).collect();
                return Err(RunError::Input(format!(
                    "points {i0} ({}) and {} ({}) have the same parameters {:?}: one of the rows \
                     is damaged or edited (its results are another point's); refusing to merge",
                    inputs[f0].display(),
                    r.index,
                    inputs[*f].display(),
                    label.join(" ")
                )));
            }
        } else {
            seen.insert(r.params.as_slice(), (r.index, *f));
        }
    }
    drop(seen);
    let mut rows: Vec<sweep::Row> = rows.into_iter().map(|(r, _)| r).collect();
    rows.dedup_by_key(|r| r.index);
    let mut missing = 0usize;
    if let Some((_, n, _)) = identity {
        // Counted, the first 20 named: a grid has up to a million points.
        let mut have = rows.iter().map(|r| r.index).peekable();
        let mut shown = Vec::new();
        for i in 0..n {
            if have.peek() == Some(&i) {
                have.next();
            } else {
                missing += 1;
                if shown.len() < 20 {
                    shown.push(i.to_string());
                }
            }
        }
        if missing > 0 {
            problems.push(format!(
                "{missing} of the sweep's {n} points are missing (indices {}{})",
                shown.join(", "),
                if missing > 20 { ", ..." } else { "" }
            ));
        }
    }
    if !problems.is_empty() {
        if !allow_partial {
            return Err(RunError::Input(format!(
                "refusing to merge: {} (--allow-partial merges anyway)",
                problems.join("; ")
            )));
        }
        for p in &problems {
            eprintln!("WARNING: {p}");
        }
        if missing > 0 {
            eprintln!(
                "WARNING: --allow-partial: the merged tables are NOT the whole sweep ({} rows)",
                rows.len()
            );
        } else {
            eprintln!(
                "note: every point of the sweep is there ({} rows; duplicates merged once)",
                rows.len()
            );
        }
    }
    Ok(rows)
}

/// SIGINT and SIGTERM: the first asks a running sweep to stop starting
/// points (it then writes what finished and exits 130); a second one ends
/// the process at once, as the default action does.
#[cfg(unix)]
fn install_stop_handler() {
    extern "C" fn on_signal(sig: libc::c_int) {
        if sweep::stop_requested() {
            // SAFETY: signal and raise are async-signal-safe.
            unsafe {
                libc::signal(sig, libc::SIG_DFL);
                libc::raise(sig);
            }
        }
        sweep::request_stop();
    }
    // SAFETY: the handler only touches an atomic and calls async-signal-safe
    // functions.
    unsafe {
        let h = on_signal as extern "C" fn(libc::c_int) as libc::sighandler_t;
        libc::signal(libc::SIGINT, h);
        libc::signal(libc::SIGTERM, h);
    }
}

#[cfg(not(unix))]
fn install_stop_handler() {}

fn real_main(cli: Cli) -> anyhow::Result<()> {
    match cli.cmd {
        Cmd::Run {
            cfg,
            config,
            fio,
            set,
            format,
            output_format,
            out,
            print_config,
            check,
            no_power,
            power_sample,
            power_trace,
            plot_power,
            plot_breakdown,
            html,
            record_trace,
            record_format,
            save_state,
            load_state,
            progress,
        } => {
            let record_trace = match record_trace {
                Some(path) => Some(ssdsim::RecordTrace {
                    format: record_format
                        .parse()
                        .map_err(|e| RunError::Input(format!("--record-format: {e}")))?,
                    path,
                }),
                None => None,
            };
            let mut flags: Vec<(String, String)> = Vec::new();
            for (f, v) in cfg.pairs() {
                if v.contains(',') && f != "random_distribution" {
                    return Err(RunError::Input(format!(
                        "--{f} {v}: `run` takes one value; use `ssdsim sweep` for lists"
                    ))
                    .into());
                }
                flags.push((f.to_string(), v));
            }
            flags.extend(split_set(&set)?);
            let mut c = resolve_config(config.as_deref(), &flags)?;
            let fio_path = fio.clone();
            let mut fio_jobs = Vec::new();
            if let Some(path) = &fio {
                let jobs =
                    ssdsim::fio::parse_jobs_file(path, &c.workload).map_err(RunError::from)?;
                fio_jobs = ssdsim::apply_fio_jobs(
                    &mut c,
                    jobs,
                    &path.display().to_string(),
                    &cfg.pairs(),
                    &mut |w| eprintln!("{w}"),
                )?;
            }
            c.validate().map_err(RunError::from)?;
            for n in c.notes() {
                eprintln!("note: {n}");
            }
            if print_config {
                return write_out(out.as_ref(), &c.to_toml());
            }
            ssdsim::require_unit("power-sample", &power_sample).map_err(RunError::from)?;
            let power_sample = ssd_core::units::parse_dur(&power_sample)
                .map_err(|e| RunError::Input(format!("--power-sample: {e}")))?;
            let traces = ssdsim::trace_paths(&c);
            let mut inputs = vec![
                ("--config", config.as_deref()),
                ("--fio", fio_path.as_deref()),
                ("--load-state", load_state.as_deref()),
            ];
            inputs.extend(traces.iter().map(|p| ("--trace", Some(p.as_path()))));
            refuse_overwrite(
                &inputs,
                &[
                    ("--out", out.as_deref()),
                    ("--power-trace", power_trace.as_deref()),
                    ("--plot-power", plot_power.as_deref()),
                    ("--plot-breakdown", plot_breakdown.as_deref()),
                    ("--html", html.as_deref()),
                    (
                        "--record-trace",
                        record_trace.as_ref().map(|r| r.path.as_path()),
                    ),
                    ("--save-state", save_state.as_deref()),
                ],
            )?;
            check_writable(&[
                record_trace.as_ref().map(|r| r.path.as_path()),
                save_state.as_deref(),
                out.as_deref(),
                power_trace.as_deref(),
                plot_power.as_deref(),
                plot_breakdown.as_deref(),
                html.as_deref(),
            ])?;
            if no_power
                && (power_trace.is_some() || plot_power.is_some() || plot_breakdown.is_some())
            {
                return Err(RunError::Input("--power-trace/--plot-power/--plot-breakdown need the power model (drop --no-power)".into()).into());
            }
            let res = run_config(
                &c,
                &RunOptions {
                    check_invariants: check,
                    power: !no_power,
                    power_sample,
                    power_trace,
                    plot_power,
                    plot_breakdown,
                    // The HTML report draws power over time.
                    keep_power_series: html.is_some(),
                    progress: progress.mode(),
                    record_trace,
                    drive_state: ssdsim::state::DriveStateOpts {
                        load: load_state,
                        save: save_state,
                        shared: None,
                    },
                },
            )?;
            if let Some(w) = ssdsim::skipped_flowops_warning(&res.report.notes) {
                eprintln!("{w}");
            }
            if let Some(p) = &html {
                write_file(p, html::run_page(&res, &page_info(None)).as_bytes())?;
            }
            let text = match (output_format, format) {
                (Some(FioFormat::Json), _) => {
                    let v =
                        ssdsim::fio_json::fio_json_run(&fio_jobs, &c, &res.report, &res.latency);
                    serde_json::to_string_pretty(&v)? + "\n"
                }
                (Some(FioFormat::Normal), _) | (None, Format::Text) => {
                    ssdsim::output::text(&res.report)
                }
                (None, Format::Json) => serde_json::to_string_pretty(&res.report)? + "\n",
            };
            write_out(out.as_ref(), &text)
        }
        Cmd::Sweep(a) => sweep_cmd(a),
        Cmd::Completions { shell, out } => {
            let mut cmd = <Cli as clap::CommandFactory>::command();
            match out {
                Some(dir) => {
                    let p = clap_complete::generate_to(shell, &mut cmd, "ssdsim", &dir).map_err(
                        |e| RunError::Io(format!("{}: cannot write: {e}", dir.display())),
                    )?;
                    eprintln!("wrote {}", p.display());
                    Ok(())
                }
                None => {
                    let mut buf = Vec::new();
                    clap_complete::generate(shell, &mut cmd, "ssdsim", &mut buf);
                    write_out(None, &String::from_utf8_lossy(&buf))
                }
            }
        }
        Cmd::Man { out } => {
            let cmd = <Cli as clap::CommandFactory>::command();
            match out {
                Some(dir) => {
                    clap_mangen::generate_to(cmd, &dir).map_err(|e| {
                        RunError::Io(format!("{}: cannot write: {e}", dir.display()))
                    })?;
                    eprintln!("wrote the manual pages into {}", dir.display());
                    Ok(())
                }
                None => {
                    let mut buf = Vec::new();
                    clap_mangen::Man::new(cmd)
                        .render(&mut buf)
                        .map_err(|e| RunError::Io(format!("rendering the manual page: {e}")))?;
                    write_out(None, &String::from_utf8_lossy(&buf))
                }
            }
        }
        Cmd::Trace {
            cmd:
                TraceCmd::Record {
                    output,
                    to,
                    cfg,
                    config,
                    set,
                },
        } => real_main(Cli {
            cmd: Cmd::Run {
                cfg,
                config,
                fio: None,
                set,
                format: Format::Text,
                output_format: None,
                out: None,
                print_config: false,
                check: false,
                no_power: false,
                power_sample: "1ms".into(),
                power_trace: None,
                plot_power: None,
                plot_breakdown: None,
                html: None,
                record_trace: Some(output),
                record_format: to,
                save_state: None,
                load_state: None,
                progress: ProgressArgs {
                    no_progress: false,
                    progress_sink: false,
                },
            },
        }),
        Cmd::Trace { cmd } => trace_cmd(cmd),
        Cmd::Reproduce {
            study,
            list,
            quick,
            out,
            threads,
        } => reproduce_cmd(study.as_deref(), list, quick, &out, threads),
        Cmd::MappingSize {
            capacity,
            page_size,
            pages_per_block,
            ftl,
            entry,
            log_area,
            csv,
            plot,
            format,
        } => {
            let caps = capacity
                .split(',')
                .map(|c| {
                    ssd_core::units::parse_size(c.trim())
                        .map(|s| s.0)
                        .map_err(|e| RunError::Input(format!("--capacity: {e}")))
                })
                .collect::<Result<Vec<u64>, _>>()?;
            let page = ssd_core::units::parse_size(&page_size)
                .map_err(|e| RunError::Input(format!("--page-size: {e}")))?;
            let schemes = ftl::mapsize::parse_schemes(&ftl)
                .map_err(|e| RunError::Input(format!("--ftl: {e}")))?;
            let mut base = ftl::mapsize::MapParams::new(0, page.0);
            base.entry = ftl::mapsize::EntryMode::parse(&entry)
                .map_err(|e| RunError::Input(format!("--entry: {e}")))?;
            base.pages_per_block = pages_per_block as u64;
            base.log_fraction = log_area;
            let rows = ftl::mapsize::table_rows(&caps, &schemes, &base).map_err(RunError::Input)?;
            if let Some(p) = &csv {
                let mut t = String::from(ftl::mapsize::MapSizeRow::HEADER);
                t.push('\n');
                for r in &rows {
                    t.push_str(&r.csv_line());
                    t.push('\n');
                }
                write_file(p, t.as_bytes())?;
            }
            if let Some(p) = &plot {
                write_file(p, ssdsim::plots::mapping_size(&rows).as_bytes())?;
            }
            if format == Format::Json {
                return write_out(None, &(serde_json::to_string_pretty(&rows)? + "\n"));
            }
            let mut o = format!(
                "{:<6} {:>14} {:>10} {:>6} {:>8} {:>16} {:>12}\n",
                "ftl", "capacity", "page", "entry", "bytes/e", "table bytes", "table KiB"
            );
            for r in &rows {
                o.push_str(&format!(
                    "{:<6} {:>14} {:>10} {:>6} {:>8} {:>16} {:>12.1}\n",
                    r.scheme,
                    ssd_core::units::fmt_size(ssd_core::Size(r.capacity_bytes)),
                    ssd_core::units::fmt_size(ssd_core::Size(r.page_size)),
                    r.entry_mode,
                    r.entry_bytes,
                    r.table_bytes,
                    r.table_kib
                ));
            }
            write_out(None, &o)
        }
        Cmd::Merge {
            inputs,
            csv,
            jsonl,
            md,
            plot,
            html,
            allow_partial,
        } => {
            let ins: Vec<(&str, Option<&std::path::Path>)> = inputs
                .iter()
                .map(|p| ("shard", Some(p.as_path())))
                .collect();
            refuse_overwrite(
                &ins,
                &[
                    ("--csv", csv.as_deref()),
                    ("--jsonl", jsonl.as_deref()),
                    ("--md", md.as_deref()),
                    ("--html", html.as_deref()),
                ],
            )?;
            let rows = merge_shards(&inputs, allow_partial)?;
            write_outputs(
                &rows,
                &Outputs {
                    csv: csv.as_deref(),
                    jsonl: jsonl.as_deref(),
                    md: md.as_deref(),
                    plot: plot.as_deref(),
                    html: html.as_deref(),
                },
                &page_info(None),
            )?;
            eprintln!("merged {} rows from {} files", rows.len(), inputs.len());
            write_out(None, &sweep::table(&rows))
        }
        Cmd::Import {
            cmd: ImportCmd::Mqsim { file, out },
        } => {
            refuse_overwrite(&[("input", Some(&file))], &[("-o", out.as_deref())])?;
            let bytes = std::fs::read(&file)
                .map_err(|e| RunError::Input(format!("{}: cannot read: {e}", file.display())))?;
            let text = String::from_utf8(bytes).map_err(|e| {
                RunError::Input(format!(
                    "{}: not UTF-8 (or ASCII) text: invalid byte at offset {}",
                    file.display(),
                    e.utf8_error().valid_up_to()
                ))
            })?;
            let imp = mqsim::import(&text, &file.display().to_string()).map_err(RunError::Input)?;
            for w in &imp.warnings {
                eprintln!("warning: {w}");
            }
            write_out(out.as_ref(), &imp.toml)?;
            // import() has validated it.
            let s = imp.config.validate().map_err(RunError::from)?;
            eprintln!(
                "{}: {} channels x {} chips x {} dies x {} planes, {:.1} GiB ({} B) logical, ftl {}; {} warnings{}",
                file.display(),
                s.geometry.channels,
                s.geometry.ways,
                s.geometry.dies,
                s.geometry.planes,
                s.logical_bytes() as f64 / (1u64 << 30) as f64,
                s.logical_bytes(),
                imp.config.ftl.kind,
                imp.warnings.len(),
                match &out {
                    Some(o) => format!("; run it with: ssdsim run --config {}", o.display()),
                    None => String::new(),
                }
            );
            Ok(())
        }
        Cmd::Calibrate {
            targets,
            out,
            format,
            report,
            threads,
            quiet,
        } => calibrate_cmd(
            &targets,
            out.as_deref(),
            format,
            report.as_deref(),
            threads,
            quiet,
        ),
        Cmd::Presets { format } => {
            let nands = ssdsim::nand_presets();
            if format == Format::Json {
                let v = ssdsim::presets_json();
                return write_out(None, &(serde_json::to_string_pretty(&v)? + "\n"));
            }
            let mut o = String::new();
            o.push_str("NAND presets\n");
            o.push_str(&format!(
                "  {:<18} {:<4} {:>6} {:>6} {:>7} {:>6} {:>5} {:>8} {:>9} {:>8} {:>12} {:>9}\n",
                "name",
                "cell",
                "page",
                "pg/blk",
                "blk/pl",
                "planes",
                "dies",
                "tR",
                "tPROG",
                "tBERS",
                "bus",
                "chip"
            ));
            for n in &nands {
                o.push_str(&format!(
                    "  {:<18} {:<4} {:>6} {:>6} {:>7} {:>6} {:>5} {:>8} {:>9} {:>8} {:>12} {:>9}\n",
                    n.name,
                    n.cell,
                    n.page_size.to_string(),
                    n.pages_per_block,
                    n.blocks_per_plane,
                    n.planes_per_die,
                    n.dies_per_chip,
                    short_us(n.t_r),
                    short_us(n.t_prog),
                    short_us(n.t_bers),
                    format!("{:.1}MB/s", n.bus_rate().mb_per_s()),
                    ssd_core::units::fmt_size(ssd_core::Size(n.chip_bytes())),
                ));
                if let Some(p) = &n.page_types {
                    let list = |v: &[ssd_core::Dur]| {
                        v.iter().map(|d| short_us(*d)).collect::<Vec<_>>().join("/")
                    };
                    o.push_str(&format!(
                        "  {:<18} page types: tR {}, tPROG {}, {}{}, page map {} (tR/tPROG above: means over a block)\n",
                        "",
                        list(&p.t_r),
                        list(&p.t_prog),
                        match p.program {
                            ssd_core::hw::nand::ProgramScheme::MultiPass => "multi-pass".to_string(),
                            ssd_core::hw::nand::ProgramScheme::OneShot => "one-shot".to_string(),
                        },
                        match p.program {
                            ssd_core::hw::nand::ProgramScheme::OneShot =>
                                format!(" (pages before a word line's last load in {})", short_us(p.t_load)),
                            _ => String::new(),
                        },
                        match p.map {
                            ssd_core::hw::nand::PageMap::Wordline => "wordline",
                            ssd_core::hw::nand::PageMap::SharedWl => "shared-wl",
                        },
                    ));
                }
                if let Some(r) = &n.retry {
                    o.push_str(&format!(
                        "  {:<18} read retry: {} + {}/1000 P/E + {}/decade of hours retention steps, at most {}, {} each besides tR; {} P/E before the run, data {:.0}h old\n",
                        "",
                        r.base_steps,
                        r.steps_per_kpe,
                        r.steps_per_decade,
                        r.max_steps,
                        short_us(r.t_step),
                        r.pe_offset,
                        r.data_age.0 as f64 / 3.6e12,
                    ));
                }
            }
            o.push_str("\nPower presets\n");
            for p in ssdsim_host::config::PowerConfig::presets() {
                o.push_str(&format!(
                    "  {}: {}\n",
                    p.name,
                    toml::to_string(&p)?.replace('\n', "  ")
                ));
            }
            o.push_str("\nHost interfaces\n");
            for n in ["sata3g", "sata6g", "nvme-gen3x4", "nvme-gen4x4"] {
                let i: ssdsim_host::config::Interface =
                    serde_json::from_value(serde_json::Value::String(n.to_string()))?;
                let h = ssdsim_host::config::HostConfig::preset(i);
                o.push_str(&format!(
                    "  {:<12} {:>7.0} MB/s  queue depth {:>5}  command overhead {}\n",
                    n, h.link_mbps, h.queue_depth, h.command_overhead
                ));
            }
            o.push_str("\nDevice presets (whole drives; --device NAME, device = \"NAME\")\n");
            for d in ssd_core::devices::DEVICE_PRESETS {
                o.push_str(&format!("  {:<12} {}\n", d.name, d.about));
            }
            o.push_str(&format!(
                "\nFTLs: {}\nSchedulers: {}\n",
                ftl::FTL_NAMES.join(", "),
                ssdsim::SCHED_NAMES.join(", ")
            ));
            o.push_str("\nDefault device: Lee & Won's reference SSD, 8 channels x 1 chip of chip2, page mapping, op 0.07, SATA 6 Gb/s.\n");
            write_out(None, &o)
        }
    }
}

#[derive(clap::Args)]
struct SweepArgs {
    #[command(flatten)]
    cfg: ConfigArgs,
    /// Base TOML configuration
    #[arg(long)]
    config: Option<PathBuf>,
    /// Grid file: [base] overrides, [grid] "key" = [values], [workloads.NAME] tables
    #[arg(long)]
    grid: Option<PathBuf>,
    /// Run the grid file's quick form (its [quick] section: the same grid at a scale
    /// that finishes in minutes)
    #[arg(long, requires = "grid")]
    quick: bool,
    /// Named workloads (seq-read, seq-write, rand-read, rand-write, mix-70-30, oltp, or [workloads] of the grid file)
    #[arg(long)]
    workload: Option<String>,
    /// Write sweep.csv, sweep.jsonl, sweep.md, sweep.html and plots/*.svg here (the
    /// default, sweep-results, when no other output is named and the sweep is not sharded)
    #[arg(long = "out-dir")]
    out_dir: Option<PathBuf>,
    /// Set a configuration field for every point: --set ftl.gc_threshold_blocks=4
    #[arg(long = "set", value_name = "FIELD=VALUE")]
    set: Vec<String>,
    /// Worker threads, 0..=1024 (0, the default: one per core); results do not depend on it
    #[arg(long, default_value_t = 0)]
    threads: usize,
    /// Run only shard I of N (I in 0..N): points whose index mod N == I; `auto`
    /// reads I and N from a Slurm array (SLURM_ARRAY_TASK_ID/COUNT or MIN/MAX)
    /// or a Kubernetes indexed Job (JOB_COMPLETION_INDEX, SSDSIM_SHARD_COUNT)
    #[arg(long, value_name = "I/N|auto")]
    shard: Option<String>,
    /// Write one row per point as CSV
    #[arg(long)]
    csv: Option<PathBuf>,
    /// Write one row per point as JSON lines (what `merge` joins)
    #[arg(long)]
    jsonl: Option<PathBuf>,
    /// Write the table as Markdown
    #[arg(long)]
    md: Option<PathBuf>,
    /// Write comparison charts (SVG) into this directory
    #[arg(long)]
    plot: Option<PathBuf>,
    /// Write a single-file HTML report (the table and the charts; readable offline)
    #[arg(long)]
    html: Option<PathBuf>,
    /// List the points and exit
    #[arg(long)]
    dry_run: bool,
    /// Skip the points already in the --jsonl output (of an interrupted run of
    /// the same sweep) and run the rest; the outputs are then those of a whole run
    #[arg(long)]
    resume: bool,
    /// Power sampling interval of every point (min_power_w, max_power_w and
    /// power_std_w are over these samples); the unit is required: ns, us, ms, s
    /// (e.g. 1s, as a power analyser reporting once a second)
    #[arg(long = "power-sample", default_value = "1ms")]
    power_sample: String,
    #[command(flatten)]
    progress: ProgressArgs,
}

/// Where `sweep` writes its tables and plots when no output is named.
const DEFAULT_SWEEP_DIR: &str = "sweep-results";

/// The files a sweep (or `merge`) writes its rows to.
struct Outputs<'a> {
    csv: Option<&'a std::path::Path>,
    jsonl: Option<&'a std::path::Path>,
    md: Option<&'a std::path::Path>,
    plot: Option<&'a std::path::Path>,
    html: Option<&'a std::path::Path>,
}

/// What an HTML report says about where it came from: this program's
/// version and command line, and `config` (TOML) if given.
fn page_info(config: Option<String>) -> html::PageInfo {
    html::PageInfo {
        command: html::shell_join(std::env::args_os().map(|a| a.to_string_lossy().into_owned())),
        version: VERSION.to_string(),
        config_toml: config,
    }
}

fn write_outputs(rows: &[sweep::Row], out: &Outputs, info: &html::PageInfo) -> anyhow::Result<()> {
    let Outputs {
        csv,
        jsonl,
        md,
        plot,
        html,
    } = *out;
    if let Some(p) = csv {
        sweep::write_csv(rows, p).map_err(RunError::Io)?;
    }
    if let Some(p) = jsonl {
        sweep::write_jsonl(rows, p).map_err(RunError::Io)?;
    }
    if let Some(p) = md {
        write_file(p, sweep::markdown(rows).as_bytes())?;
    }
    if let Some(p) = html {
        write_file(p, html::sweep_page(rows, info).as_bytes())?;
    }
    let tables: Vec<String> = [csv, jsonl, md, html]
        .into_iter()
        .flatten()
        .map(|p| p.display().to_string())
        .collect();
    if !tables.is_empty() {
        eprintln!("tables: {}", tables.join(", "));
    }
    if let Some(d) = plot {
        let files = sweep::plot(rows, d).map_err(RunError::Io)?;
        eprintln!(
            "plots: {}",
            files
                .iter()
                .map(|f| f.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    Ok(())
}

/// The points' notes (`SsdConfig::notes`: fields of
/// other FTLs' sections that points set to other values than their
/// defaults, a base shared by an `ftl.kind` axis), each printed once with
/// the number of points; the
/// first 256 points of the shard are looked at.
fn print_points_notes(grid: &sweep::Grid, shard: (usize, usize)) {
    let mut notes = std::collections::BTreeMap::<String, usize>::new();
    for i in grid.shard_indices(shard.0, shard.1).take(256) {
        if let Ok(c) = grid.point(i).cfg {
            for n in c.notes() {
                *notes.entry(n).or_default() += 1;
            }
        }
    }
    for (n, k) in notes {
        eprintln!("note: {n} ({k} point{})", if k == 1 { "" } else { "s" });
    }
}

/// `sweep --dry-run`: list the points of `shard` (I, N) with their
/// configuration's verdict, in grid order, building them in parallel a chunk
/// at a time and writing each chunk as it is done (memory stays that of a
/// chunk, whatever the grid's size).
fn list_points(grid: &sweep::Grid, shard: (usize, usize), threads: usize) -> anyhow::Result<()> {
    use rayon::prelude::*;
    const CHUNK: usize = 1024;
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .map_err(|e| RunError::Io(format!("cannot start {threads} worker threads: {e}")))?;
    stdout_closed()?;
    let mut indices: Vec<usize> = Vec::with_capacity(CHUNK);
    let mut it = grid.shard_indices(shard.0, shard.1).peekable();
    let mut so = std::io::stdout().lock();
    while it.peek().is_some() {
        indices.clear();
        indices.extend(it.by_ref().take(CHUNK));
        let lines: Vec<String> = pool.install(|| {
            indices
                .par_iter()
                .map(|&i| {
                    let p = grid.point(i);
                    let label: Vec<String> =
                        p.params.iter().map(|(k, v)| format!("{k}={v}")).collect();
                    format!(
                        "{:>5}  {}{}\n",
                        p.index,
                        label.join("  "),
                        p.cfg
                            .as_ref()
                            .err()
                            .map(|e| format!("  INVALID: {e}"))
                            .unwrap_or_default()
                    )
                })
                .collect()
        });
        so.write_all(lines.concat().as_bytes())
            .map_err(|e| RunError::Io(format!("writing to standard output: {e}")))?;
    }
    so.flush()
        .map_err(|e| RunError::Io(format!("writing to standard output: {e}")))?;
    Ok(())
}

fn sweep_cmd(mut a: SweepArgs) -> anyhow::Result<()> {
    // Base configuration: the file, with the grid file's [base] over it.
    let base = resolve_config(a.config.as_deref(), &[])?;
    let grid_file = match &a.grid {
        Some(g) => {
            let mut gf = sweep::GridFile::load(g).map_err(RunError::Input)?;
            if a.quick {
                gf = gf
                    .quick_form(&g.display().to_string())
                    .map_err(RunError::Input)?;
            }
            Some((gf, g.display().to_string()))
        }
        None => None,
    };
    let plan = sweep::plan(sweep::SweepSpec {
        base,
        base_given: a.config.is_some(),
        grid: grid_file,
        flags: a
            .cfg
            .pairs()
            .into_iter()
            .map(|(f, v)| (f.to_string(), v))
            .collect(),
        workload: a.workload.clone(),
        set: split_set(&a.set)?,
    })?;
    let (base, axes) = (&plan.base, &plan.axes);
    if a.threads > sweep::MAX_THREADS {
        return Err(RunError::Input(format!(
            "--threads {}: at most {} (0 = one per core)",
            a.threads,
            sweep::MAX_THREADS
        ))
        .into());
    }
    ssdsim::require_unit("power-sample", &a.power_sample).map_err(RunError::from)?;
    let power_sample = ssd_core::units::parse_dur(&a.power_sample)
        .map_err(|e| RunError::Input(format!("--power-sample: {e}")))?;
    // Points are built as they run (or are listed), never all at once.
    let mut grid = plan.grid();
    if power_sample != RunOptions::default().power_sample {
        grid = grid.with_option(&format!("power-sample {}", power_sample.0));
    }
    let total = grid.len();
    let mut shard = (0, 1);
    if let Some(s) = a.shard.as_deref().filter(|s| s.trim() == "auto") {
        let (i, n, from) = sweep::shard_from_env(|k| std::env::var(k).ok())
            .map_err(|e| RunError::Input(format!("--shard {s}: {e}")))?;
        eprintln!("--shard auto: shard {i}/{n} (from {from})");
        shard = (i, n);
    } else if let Some(s) = &a.shard {
        let (i, n) = s
            .split_once('/')
            .and_then(|(i, n)| {
                Some((
                    i.trim().parse::<usize>().ok()?,
                    n.trim().parse::<usize>().ok()?,
                ))
            })
            .filter(|(i, n)| *n > 0 && i < n)
            .ok_or_else(|| {
                RunError::Input(format!("--shard {s:?}: expected I/N with 0 <= I < N"))
            })?;
        shard = (i, n);
    }
    if a.dry_run {
        // A listing holds no rows: any grid within MAX_GRID_POINTS.
        return list_points(&grid, shard, a.threads);
    }
    sweep::check_shard_size(axes, total, shard.0, shard.1).map_err(RunError::Input)?;
    // The tables and plots go to files as well as the table to stdout: into
    // --out-dir, or sweep-results when no output was named at all (a shard
    // names its own, --jsonl, for `merge`).
    let named = a.csv.is_some()
        || a.jsonl.is_some()
        || a.md.is_some()
        || a.plot.is_some()
        || a.html.is_some();
    let out_dir = match (&a.out_dir, named || a.shard.is_some()) {
        (Some(d), _) => Some(d.clone()),
        (None, false) => Some(PathBuf::from(DEFAULT_SWEEP_DIR)),
        (None, true) => None,
    };
    if let Some(d) = &out_dir {
        std::fs::create_dir_all(d)
            .map_err(|e| RunError::Io(format!("{}: cannot create: {e}", d.display())))?;
        let or = |given: &mut Option<PathBuf>, name: &str| {
            given.get_or_insert_with(|| d.join(name));
        };
        or(&mut a.csv, "sweep.csv");
        or(&mut a.jsonl, "sweep.jsonl");
        or(&mut a.md, "sweep.md");
        or(&mut a.html, "sweep.html");
        or(&mut a.plot, "plots");
    }
    let traces = plan.trace_paths();
    let mut inputs = vec![
        ("--config", a.config.as_deref()),
        ("--grid", a.grid.as_deref()),
    ];
    inputs.extend(traces.iter().map(|p| ("the trace", Some(p.as_path()))));
    refuse_overwrite(
        &inputs,
        &[
            ("--csv", a.csv.as_deref()),
            ("--jsonl", a.jsonl.as_deref()),
            ("--md", a.md.as_deref()),
            ("--html", a.html.as_deref()),
        ],
    )?;
    check_writable(&[
        a.csv.as_deref(),
        a.jsonl.as_deref(),
        a.md.as_deref(),
        a.html.as_deref(),
    ])?;
    if let Some(d) = &a.plot {
        std::fs::create_dir_all(d)
            .map_err(|e| RunError::Io(format!("{}: cannot create: {e}", d.display())))?;
    }
    // Rows already in the --jsonl output of an interrupted run of this sweep,
    // and their indices.
    let mut rows: Vec<sweep::Row> = Vec::new();
    let mut done = std::collections::BTreeSet::new();
    if a.resume {
        let Some(j) = a.jsonl.as_deref() else {
            return Err(RunError::Input(
                "--resume needs the --jsonl output (or --out-dir) of the interrupted sweep".into(),
            )
            .into());
        };
        if j.exists() {
            let (old, dropped) = sweep::read_jsonl_partial(j).map_err(RunError::Input)?;
            // Every kept row must be this grid's point at its index: a row
            // whose parameters or point count disagree would be merged as
            // that point with another point's results.
            for r in &old {
                if let Err(e) = grid.check_row(r) {
                    return Err(RunError::Input(format!(
                        "{}: the row of point {} {e}; refusing to resume (remove that row to \
                         run the point again)",
                        j.display(),
                        r.index
                    ))
                    .into());
                }
            }
            let (i, n) = shard;
            if let Some(r) = old.iter().find(|r| r.index >= total || r.index % n != i) {
                // Resuming rewrites the file with this shard's rows only:
                // another shard's rows would be lost.
                return Err(RunError::Input(format!(
                    "{}: point {} is not a point of shard {i}/{n} of this sweep ({total} points): \
                     the file holds another shard's rows; give each shard its own --jsonl; \
                     refusing to resume",
                    j.display(),
                    r.index
                ))
                .into());
            }
            rows = old
                .into_iter()
                .filter(|r| r.index < total && r.index % n == i && done.insert(r.index))
                .collect();
            eprintln!(
                "resuming: {} points already in {}{}, {} to run",
                rows.len(),
                j.display(),
                if dropped {
                    " (a last line cut short was dropped)"
                } else {
                    ""
                },
                grid.shard_len(shard.0, shard.1) - done.len()
            );
        }
    }
    print_points_notes(&grid, shard);
    let to_run = grid.shard_len(shard.0, shard.1) - done.len();
    // Finished rows are appended to --jsonl as they come (a killed sweep keeps
    // them); at the end the file is rewritten whole, in grid order.
    let append = match a.jsonl.as_deref() {
        Some(j) if std::fs::metadata(j).map_or(true, |m| m.is_file()) => {
            let mut f = std::fs::OpenOptions::new()
                .create(true)
                .write(true)
                .truncate(true)
                .open(j)
                .map_err(|e| RunError::Io(format!("{}: cannot write: {e}", j.display())))?;
            let mut text = String::new();
            for r in &rows {
                text.push_str(&serde_json::to_string(r)?);
                text.push('\n');
            }
            f.write_all(text.as_bytes())
                .map_err(|e| RunError::Io(format!("{}: cannot write: {e}", j.display())))?;
            Some((j.to_path_buf(), std::sync::Mutex::new(f)))
        }
        _ => None,
    };
    let append_error = std::sync::Mutex::new(None::<String>);
    install_stop_handler();
    let bar = ssdsim::progress::bar(
        a.progress.mode(),
        to_run as u64,
        "sweep [{bar:30}] {pos}/{len} points ({elapsed}, eta {eta})",
    );
    let started = std::time::Instant::now();
    let new_rows = sweep::run_grid(
        &grid,
        shard,
        &done,
        a.threads,
        &RunOptions {
            power_sample,
            ..RunOptions::default()
        },
        |done, _, row| {
            if let Some((path, f)) = &append {
                let line = serde_json::to_string(row).map(|l| l + "\n");
                let res = match line {
                    Ok(l) => f
                        .lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .write_all(l.as_bytes())
                        .map_err(|e| e.to_string()),
                    Err(e) => Err(e.to_string()),
                };
                if let Err(e) = res {
                    append_error
                        .lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .get_or_insert_with(|| format!("{}: cannot write: {e}", path.display()));
                }
            }
            if let Some(b) = &bar {
                b.set_position(done as u64);
            }
        },
    )
    .map_err(RunError::Io)?;
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    drop(append);
    let wall = started.elapsed().as_secs_f64();
    let ran = new_rows.len();
    // What a point's run warned of, as `ssdsim run` would say it.
    for r in &new_rows {
        for w in &r.warnings {
            let label: Vec<String> = r.params.iter().map(|(k, v)| format!("{k}={v}")).collect();
            eprintln!("point {} ({}): {w}", r.index, label.join(","));
        }
    }
    rows.extend(new_rows);
    rows.sort_by_key(|r| r.index);
    if let Some(e) = append_error.into_inner().unwrap_or_else(|e| e.into_inner()) {
        return Err(RunError::Io(e).into());
    }
    if sweep::stop_requested() {
        // Only the finished rows, in grid order; the other tables and the
        // plots would look like the sweep's result.
        if let Some(j) = a.jsonl.as_deref() {
            sweep::write_jsonl(&rows, j).map_err(RunError::Io)?;
        }
        let shard_total = rows.len() + to_run - ran;
        return Err(RunError::Interrupted(format!(
            "interrupted: {} of {shard_total} points finished{}; run the same command with \
             --resume to finish the rest",
            rows.len(),
            a.jsonl
                .as_deref()
                .map(|j| format!(" and are in {}", j.display()))
                .unwrap_or_else(|| " (none kept: name a --jsonl output to keep them)".into())
        ))
        .into());
    }
    write_outputs(
        &rows,
        &Outputs {
            csv: a.csv.as_deref(),
            jsonl: a.jsonl.as_deref(),
            md: a.md.as_deref(),
            plot: a.plot.as_deref(),
            html: a.html.as_deref(),
        },
        &page_info(Some(base.to_toml())),
    )?;
    write_out(None, &sweep::table(&rows))?;
    let reqs: u64 = rows.iter().map(|r| r.requests).sum();
    let failed = rows.iter().filter(|r| r.error.is_some()).count();
    eprintln!(
        "{} of {} configurations ({} failed) in {:.1} s wall; {} simulated requests, {:.0} requests/s",
        rows.len(),
        total,
        failed,
        wall,
        reqs,
        reqs as f64 / wall.max(1e-9)
    );
    if failed > 0 {
        // The outputs are written (each failed row says why in `error`), but a
        // script or a cluster job must not take the sweep for a success.
        return Err(RunError::Input(format!(
            "{failed} of {} configurations failed (see the error column)",
            rows.len()
        ))
        .into());
    }
    Ok(())
}

fn trace_cmd(cmd: TraceCmd) -> anyhow::Result<()> {
    use ssdsim_host::trace::TraceFormat;
    let fmt = |f: &Option<String>| -> Result<Option<TraceFormat>, RunError> {
        f.as_deref()
            .map(|s| {
                s.parse::<TraceFormat>()
                    .map_err(|e| RunError::Input(format!("--trace-format: {e}")))
            })
            .transpose()
    };
    // `--blkparse-action`, checked as `replay.blkparse_action` is.
    let parse_opts = |action: String| -> Result<ssdsim_host::trace::ParseOptions, RunError> {
        let opts = ssdsim_host::trace::ReplayOptions {
            blkparse_action: action,
            ..Default::default()
        };
        opts.validate().map_err(|e| match e {
            ssdsim_host::config::ConfigError::Invalid { reason, .. } => {
                RunError::Input(format!("--blkparse-action: {reason}"))
            }
            other => RunError::Input(other.to_string()),
        })?;
        Ok(opts.parse_options())
    };
    match cmd {
        TraceCmd::Record { .. } => unreachable!("trace record runs as `run --record-trace`"),
        TraceCmd::Stats {
            file,
            trace_format,
            blkparse_action,
            format,
        } => {
            let po = parse_opts(blkparse_action)?;
            let st = ssdsim_host::trace::stats_with(&file, fmt(&trace_format)?, &po)
                .map_err(|e| RunError::Input(e.to_string()))?;
            if format == Format::Json {
                return write_out(None, &(serde_json::to_string_pretty(&st)? + "\n"));
            }
            let mut o = format!("{}\n", file.display());
            o.push_str(&format!("  requests            {}\n", st.requests));
            o.push_str(&format!(
                "  reads / writes      {} / {} (read fraction {:.3})\n",
                st.reads, st.writes, st.read_fraction
            ));
            o.push_str(&format!(
                "  mean size           {:.0} bytes\n",
                st.mean_size_bytes
            ));
            o.push_str(&format!("  randomness          {:.3}\n", st.randomness));
            o.push_str(&format!(
                "  mean inter-arrival  {:.6} s\n",
                st.mean_interarrival_s
            ));
            o.push_str(&format!(
                "  longest gap         {:.6} s\n",
                st.max_interarrival_s
            ));
            o.push_str(&format!("  address span        {} bytes\n", st.span_bytes));
            o.push_str(&format!("  duration            {:.3} s\n", st.duration_s));
            // The size histogram as a table: each row the requests above the
            // row before's bound, up to its own.
            o.push_str("  request sizes       up to        requests    share\n");
            for b in &st.size_histogram {
                let share = if st.requests > 0 {
                    100.0 * b.count as f64 / st.requests as f64
                } else {
                    0.0
                };
                o.push_str(&format!(
                    "                      {:<10} {:>10}  {:>5.1} %\n",
                    binary_size(b.max_bytes),
                    b.count,
                    share
                ));
            }
            write_out(None, &o)
        }
        TraceCmd::Convert {
            input,
            output,
            to,
            from,
            skip_bad_lines,
            blkparse_action,
        } => {
            if ssd_core::outfile::same_file(&input, &output) {
                return Err(RunError::Input(format!(
                    "{}: is the input {}; refusing to overwrite it (write elsewhere)",
                    output.display(),
                    input.display()
                ))
                .into());
            }
            let to: TraceFormat = to
                .parse()
                .map_err(|e| RunError::Input(format!("--to: {e}")))?;
            let po = parse_opts(blkparse_action)?;
            let r = ssdsim_host::trace::convert_with(
                &input,
                fmt(&from)?,
                &output,
                to,
                skip_bad_lines,
                &po,
            )
            .map_err(|e| RunError::Input(e.to_string()))?;
            eprintln!(
                "{} records written to {} ({} bad lines skipped)",
                r.records,
                output.display(),
                r.bad_lines_skipped
            );
            Ok(())
        }
    }
}

/// A duration for the presets table: whole microseconds as `ssd_core` writes
/// them, others in microseconds to 0.1.
fn short_us(d: ssd_core::Dur) -> String {
    if d.0.is_multiple_of(1000) {
        d.to_string()
    } else {
        format!("{:.1}us", d.0 as f64 / 1e3)
    }
}

fn reproduce_cmd(
    study: Option<&str>,
    list: bool,
    quick: bool,
    out: &std::path::Path,
    threads: usize,
) -> anyhow::Result<()> {
    if list {
        let mut o = String::new();
        for s in reproduce::studies() {
            o.push_str(&format!("{:<10} {}\n", s.name, s.paper));
            o.push_str(&format!("{:<10} {}\n", "", s.about));
            for e in s.files() {
                let n = reproduce::points(e, false).map(|p| p.len()).unwrap_or(0);
                let q = reproduce::points(e, true).map(|p| p.len()).unwrap_or(0);
                o.push_str(&format!(
                    "{:<10}   experiments/{}.toml: {n} points ({q} in --quick)\n",
                    "", e.name
                ));
            }
        }
        return write_out(None, &o);
    }
    if threads > sweep::MAX_THREADS {
        return Err(RunError::Input(format!(
            "--threads {threads}: at most {} (0 = one per core)",
            sweep::MAX_THREADS
        ))
        .into());
    }
    let name = study.unwrap_or("all");
    let chosen: Vec<&reproduce::Study> = if name == "all" {
        reproduce::studies().iter().collect()
    } else {
        vec![reproduce::find(name).ok_or_else(|| {
            RunError::Input(format!(
                "unknown study {name:?} ({}, or all; --list shows them)",
                reproduce::studies()
                    .iter()
                    .map(|s| s.name)
                    .collect::<Vec<_>>()
                    .join(", ")
            ))
        })?]
    };
    let opts = ssdsim::RunOptions::default();
    let mut failed = 0usize;
    for s in chosen {
        let started = std::time::Instant::now();
        let tty = std::io::IsTerminal::is_terminal(&std::io::stderr());
        let outcome = reproduce::run_study(s, quick, threads, &opts, |done, total| {
            if tty {
                eprint!("\r{}: {done}/{total} points", s.name);
            }
        })?;
        if tty {
            eprintln!();
        }
        let sections = s.analyse(&outcome);
        let dir = out.join(s.name);
        let written = reproduce::write_dir(s, &outcome, &sections, &dir)?;
        let fails = reproduce::failures(&outcome);
        failed += fails.len();
        for f in &fails {
            eprintln!("failed: {f}");
        }
        for w in reproduce::warnings(&outcome) {
            eprintln!("{w}");
        }
        let checks: Vec<&reproduce::Check> = sections.iter().flat_map(|x| &x.checks).collect();
        let holds = checks
            .iter()
            .filter(|c| c.verdict == reproduce::Verdict::Holds)
            .count();
        let not = checks
            .iter()
            .filter(|c| c.verdict == reproduce::Verdict::DoesNotHold)
            .count();
        println!(
            "{}: {} points in {:.1} s; {holds} conclusions hold, {not} do not; {}",
            s.name,
            outcome
                .experiments
                .iter()
                .map(|e| e.points.len())
                .sum::<usize>(),
            started.elapsed().as_secs_f64(),
            written[0].display()
        );
    }
    if failed > 0 {
        anyhow::bail!("{failed} points failed (listed above)");
    }
    Ok(())
}

/// A power-of-two byte count in the largest binary unit it is a whole
/// number of (`512 B`, `4 KiB`, `1 MiB`).
fn binary_size(b: u64) -> String {
    const UNITS: [(&str, u64); 4] = [
        ("GiB", 1 << 30),
        ("MiB", 1 << 20),
        ("KiB", 1 << 10),
        ("B", 1),
    ];
    for (u, n) in UNITS {
        if b >= n && b.is_multiple_of(n) {
            return format!("{} {u}", b / n);
        }
    }
    format!("{b} B")
}

/// `ssdsim calibrate`: fit, write the fitted drive and the report; refuse
/// (exit 2, naming the targets) a fit that leaves a fitted target outside
/// its tolerance or the power bound above the stated maximum, after
/// printing the report that shows it.
fn calibrate_cmd(
    targets: &std::path::Path,
    out: Option<&std::path::Path>,
    format: Format,
    report: Option<&std::path::Path>,
    threads: Option<usize>,
    quiet: bool,
) -> anyhow::Result<()> {
    refuse_overwrite(
        &[("targets", Some(targets))],
        &[("-o", out), ("--report", report)],
    )?;
    check_writable(&[out, report])?;
    let spec = ssdsim::calibrate::load(targets)?;
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads.unwrap_or(0))
        .build()
        .map_err(|e| RunError::Input(format!("--threads: {e}")))?;
    let progress = |line: &str| {
        if !quiet {
            eprintln!("{line}");
        }
    };
    let fit = pool.install(|| ssdsim::calibrate::calibrate(&spec, &progress))?;
    let text = match format {
        Format::Text => fit.text(),
        Format::Json => serde_json::to_string_pretty(&fit.json())? + "\n",
    };
    write_out(report.map(std::path::Path::to_path_buf).as_ref(), &text)?;
    for w in fit.warnings() {
        eprintln!("{w}");
    }
    let unmet = fit.unmet();
    if !unmet.is_empty() {
        return Err(RunError::Input(format!(
            "{}: refused: {}",
            targets.display(),
            unmet.join("; ")
        ))
        .into());
    }
    if let Some(o) = out {
        write_file(o, fit.preset_toml().as_bytes())?;
        eprintln!(
            "wrote {}; run it with: ssdsim run --device {}",
            o.display(),
            o.display()
        );
    }
    Ok(())
}
