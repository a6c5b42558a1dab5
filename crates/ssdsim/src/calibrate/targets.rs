//! The targets file: the base drive, the free parameters and their bounds,
//! the run settings, and the targets (fio JSON outputs with the job that
//! defines their test, datasheet figures, or power traces with their job),
//! each read and checked with
//! errors that name the file, the target and the field.

use super::params::{self, FreeParam};
use crate::RunError;
use serde::Deserialize;
use serde_json::Value;
use ssdsim_host::config::SsdConfig;
use ssdsim_host::workload::RwMode;
use std::path::{Path, PathBuf};

/// What a target's simulated value is read from.
#[derive(Clone, Debug, PartialEq)]
pub enum Probe {
    /// A run of a fio job: `metric` read from its fio JSON output (or the
    /// report's mean power, `power_w.mean`), times `scale`.
    Run {
        /// The fio job file's text.
        job: String,
        /// Preconditioning before the run (`none`, `fill`, `steady`).
        precondition: String,
        /// A path into the job's fio JSON entry (`read.iops`).
        metric: String,
        /// Factor from the metric's unit to the target's.
        scale: f64,
        /// The entry of the run's fio output the metric is read from, by
        /// its job name, when the job file reports several (a run of
        /// several jobs, fio's one entry per job); `None`: the only one.
        entry: Option<String>,
    },
    /// The drive's idle power, W: the controller's idle power, the DRAM's
    /// standby, every die's idle current and the link's idle power.
    IdlePower,
    /// The logical capacity the host sees, GB (1e9 bytes).
    Capacity,
}

/// One measurement to fit or to predict.
#[derive(Clone, Debug)]
pub struct Target {
    /// Its name in the report.
    pub name: String,
    /// The measured value (in the metric's unit; datasheet figures in MB/s,
    /// IOPS, us, W or GB).
    pub measured: f64,
    /// Relative error it should be fitted within.
    pub tolerance: f64,
    /// Its weight in the objective.
    pub weight: f64,
    /// Predicted and reported only, not fitted.
    pub holdout: bool,
    /// How its simulated value is obtained.
    pub probe: Probe,
    /// Bytes per second it stands for, with its direction and whether it is
    /// random (for the consistency check): a throughput target only.
    pub throughput: Option<(char, bool, f64)>,
}

/// A whole calibration as the targets file gives it.
#[derive(Clone, Debug)]
pub struct Spec {
    /// The targets file (its directory resolves relative paths).
    pub file: PathBuf,
    /// The base drive.
    pub base: SsdConfig,
    /// What the base was named by (`chip2`, `sun-ssd-i`, a file).
    pub base_name: String,
    /// The free parameters, in the file's order.
    pub free: Vec<FreeParam>,
    /// Targets, fitted and held out, in the file's order.
    pub targets: Vec<Target>,
    /// The drive's stated maximum power, W: no workload may exceed it.
    pub max_power_w: Option<f64>,
    /// The seed of every candidate run.
    pub seed: u64,
    /// Requests per candidate run (the run length).
    pub number_ios: u64,
    /// The most iterations of each continuous (Levenberg–Marquardt) fit.
    pub max_iterations: u32,
    /// A parameter that moves no fitted target by more than this relative
    /// change (for a 5 % or one-unit step) is reported not identifiable.
    pub sensitivity: f64,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FileToml {
    base: Option<String>,
    config: Option<String>,
    free: Vec<String>,
    #[serde(default)]
    bounds: toml::Table,
    seed: Option<u64>,
    number_ios: Option<u64>,
    max_iterations: Option<u32>,
    sensitivity: Option<f64>,
    #[serde(default)]
    target: Vec<toml::Table>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TargetToml {
    name: Option<String>,
    fio: Option<String>,
    job: Option<String>,
    jobname: Option<String>,
    metric: Option<String>,
    datasheet: Option<String>,
    power_trace: Option<String>,
    column: Option<String>,
    value: Option<f64>,
    tolerance: Option<f64>,
    weight: Option<f64>,
    #[serde(default)]
    holdout: bool,
    precondition: Option<String>,
}

/// The datasheet figures a target may give: (name, fio job, metric, scale,
/// default preconditioning). The jobs are the usual datasheet tests.
const DATASHEET: &[(&str, &str, &str, f64, &str)] = &[
    (
        "seq_read_mbps",
        "[seq-read]\nrw=read\nbs=128k\niodepth=32\ndirect=1\n",
        "read.bw_bytes",
        1e-6,
        "fill",
    ),
    (
        "seq_write_mbps",
        "[seq-write]\nrw=write\nbs=128k\niodepth=32\ndirect=1\n",
        "write.bw_bytes",
        1e-6,
        "none",
    ),
    (
        "rand_read_iops",
        "[rand-read]\nrw=randread\nbs=4k\niodepth=32\ndirect=1\n",
        "read.iops",
        1.0,
        "fill",
    ),
    (
        "rand_write_iops",
        "[rand-write]\nrw=randwrite\nbs=4k\niodepth=32\ndirect=1\n",
        "write.iops",
        1.0,
        "steady",
    ),
    (
        "read_latency_us",
        "[qd1-read]\nrw=randread\nbs=4k\niodepth=1\ndirect=1\n",
        "read.clat_ns.mean",
        1e-3,
        "fill",
    ),
    (
        "active_power_w",
        "[seq-write]\nrw=write\nbs=128k\niodepth=32\ndirect=1\n",
        "power_w.mean",
        1.0,
        "none",
    ),
];

/// The datasheet names, for errors.
fn datasheet_names() -> String {
    let mut n: Vec<&str> = DATASHEET.iter().map(|d| d.0).collect();
    n.extend(["idle_power_w", "capacity_gb", "max_power_w"]);
    n.join(", ")
}

fn input(msg: String) -> RunError {
    RunError::Input(msg)
}

/// Read and check a targets file.
pub fn load(path: &Path) -> Result<Spec, RunError> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| input(format!("{}: cannot read: {e}", path.display())))?;
    parse(&text, path)
}

/// Check a targets file's text; `path` names it in errors and resolves its
/// relative paths.
pub fn parse(text: &str, path: &Path) -> Result<Spec, RunError> {
    let f = path.display().to_string();
    let top: FileToml = toml::from_str(text).map_err(|e| input(format!("{f}: {}", e.message())))?;
    let dir = path.parent().unwrap_or(Path::new("")).to_path_buf();
    let (base, base_name) = base_config(&top, &dir, &f)?;
    let free = free_params(&top, &f)?;
    let mut targets = Vec::new();
    let mut max_power_w = None;
    for (i, t) in top.target.iter().enumerate() {
        let t: TargetToml = t.clone().try_into().map_err(|e: toml::de::Error| {
            input(format!("{f}: target {}: {}", i + 1, e.message()))
        })?;
        let name = t
            .name
            .clone()
            .unwrap_or_else(|| format!("target-{}", i + 1));
        let at = format!("{f}: target \"{name}\"");
        if t.datasheet.as_deref() == Some("max_power_w") {
            max_power_w = Some(positive(t.value, &at, "value")?);
            continue;
        }
        targets.push(target(t, name, &at, &dir, &base)?);
    }
    if !targets.iter().any(|t| !t.holdout) {
        return Err(input(format!(
            "{f}: target: no target to fit (each is a holdout, or there is none)"
        )));
    }
    let spec = Spec {
        file: path.to_path_buf(),
        base,
        base_name,
        free,
        targets,
        max_power_w,
        seed: top.seed.unwrap_or(1),
        number_ios: top.number_ios.unwrap_or(3_000),
        max_iterations: top.max_iterations.unwrap_or(40),
        sensitivity: top.sensitivity.unwrap_or(0.01),
    };
    if spec.number_ios == 0 {
        return Err(input(format!("{f}: number_ios: must be at least 1")));
    }
    if !(spec.sensitivity > 0.0 && spec.sensitivity < 1.0) {
        return Err(input(format!(
            "{f}: sensitivity: must be between 0 and 1 (a relative change), got {}",
            spec.sensitivity
        )));
    }
    check_consistent(&spec)?;
    Ok(spec)
}

/// The base drive: a NAND preset or a device preset by `base`, or a
/// configuration file by `config` (relative to the targets file).
fn base_config(top: &FileToml, dir: &Path, f: &str) -> Result<(SsdConfig, String), RunError> {
    match (&top.base, &top.config) {
        (Some(_), Some(_)) => Err(input(format!(
            "{f}: base, config: give one (a preset name, or a configuration file)"
        ))),
        (None, None) => Err(input(format!(
            "{f}: base: missing (a NAND or device preset name, or `config = \"FILE.toml\"`)"
        ))),
        (Some(name), None) => {
            // A device file (a fitted drive, `base = "fitted.toml"`) is
            // found beside the targets file.
            let (flag, value) = if ssdsim_host::config::is_device_file(name) {
                ("device", dir.join(name).display().to_string())
            } else if ssd_core::devices::DEVICE_PRESETS
                .iter()
                .any(|d| d.name == name)
            {
                ("device", name.clone())
            } else {
                ("nand", name.clone())
            };
            let flags = [(flag.to_string(), value)];
            let cfg = crate::resolve_config_text(None, "", &flags)
                .map_err(|e| input(format!("{f}: base: {e}")))?;
            Ok((cfg, name.clone()))
        }
        (None, Some(file)) => {
            let p = dir.join(file);
            let cfg = crate::resolve_config(Some(&p), &[])
                .map_err(|e| input(format!("{f}: config: {e}")))?;
            Ok((cfg, p.display().to_string()))
        }
    }
}

/// The `free` list with its `[bounds]`.
fn free_params(top: &FileToml, f: &str) -> Result<Vec<FreeParam>, RunError> {
    let mut free: Vec<FreeParam> = Vec::new();
    for n in &top.free {
        let def = params::find(n).ok_or_else(|| {
            input(format!(
                "{f}: free: unknown parameter \"{n}\" (one of {})",
                params::names()
            ))
        })?;
        if free.iter().any(|p| p.def.name == n) {
            return Err(input(format!("{f}: free: \"{n}\" is given twice")));
        }
        free.push(FreeParam {
            def,
            min: def.min,
            max: def.max,
        });
    }
    for (k, v) in &top.bounds {
        let at = format!("{f}: bounds.{k}");
        let p = free
            .iter_mut()
            .find(|p| p.def.name == k)
            .ok_or_else(|| input(format!("{at}: not a free parameter (list it in `free`)")))?;
        let pair: Vec<f64> = match v.as_array() {
            Some(a) if a.len() == 2 => a
                .iter()
                .map(|x| x.as_float().or(x.as_integer().map(|i| i as f64)))
                .collect::<Option<_>>()
                .ok_or_else(|| input(format!("{at}: must be [MIN, MAX] numbers")))?,
            _ => return Err(input(format!("{at}: must be [MIN, MAX] in {}", unit(p)))),
        };
        let (lo, hi) = (pair[0], pair[1]);
        let floor = if p.def.kind == params::Kind::Integer {
            1.0
        } else {
            f64::MIN_POSITIVE
        };
        if !(lo.is_finite() && hi.is_finite() && lo >= floor && lo <= hi) {
            return Err(input(format!(
                "{at}: must be positive with MIN <= MAX, got [{lo}, {hi}]"
            )));
        }
        if lo < p.def.min || hi > p.def.max {
            return Err(input(format!(
                "{at}: [{lo}, {hi}] is outside the range calibrate searches for {}, [{}, {}] {}",
                p.def.name,
                p.def.min,
                p.def.max,
                unit(p)
            )));
        }
        p.min = lo;
        p.max = hi;
    }
    if free.is_empty() {
        return Err(input(format!(
            "{f}: free: empty (name the parameters to fit: {})",
            params::names()
        )));
    }
    Ok(free)
}

fn unit(p: &FreeParam) -> &'static str {
    if p.def.unit.is_empty() {
        "its unit"
    } else {
        p.def.unit
    }
}

fn positive(v: Option<f64>, at: &str, field: &str) -> Result<f64, RunError> {
    match v {
        Some(x) if x.is_finite() && x > 0.0 => Ok(x),
        Some(x) => Err(input(format!("{at}: {field}: must be positive, got {x}"))),
        None => Err(input(format!("{at}: {field}: missing"))),
    }
}

/// One `[[target]]`.
fn target(
    t: TargetToml,
    name: String,
    at: &str,
    dir: &Path,
    base: &SsdConfig,
) -> Result<Target, RunError> {
    let tolerance = match t.tolerance {
        None => 0.05,
        Some(_) => positive(t.tolerance, at, "tolerance")?,
    };
    let weight = match t.weight {
        None => 1.0,
        Some(_) => positive(t.weight, at, "weight")?,
    };
    let pre = t.precondition.clone();
    if let Some(p) = &pre {
        if !matches!(p.as_str(), "none" | "fill" | "steady") {
            return Err(input(format!(
                "{at}: precondition: \"{p}\" is not none, fill or steady"
            )));
        }
    }
    if t.column.is_some() && t.power_trace.is_none() {
        return Err(input(format!(
            "{at}: column: only for a power_trace target"
        )));
    }
    let given = [&t.fio, &t.datasheet, &t.power_trace]
        .iter()
        .filter(|v| v.is_some())
        .count();
    if given > 1 {
        return Err(input(format!(
            "{at}: fio, datasheet, power_trace: give one (a fio JSON output, a datasheet figure or a power trace)"
        )));
    }
    if let Some(trace) = &t.power_trace {
        return power_trace_target(&t, trace, name, tolerance, weight, at, dir, pre, base);
    }
    let (measured, probe) = match (&t.fio, &t.datasheet) {
        (None, None) => {
            return Err(input(format!(
                "{at}: fio: missing (a fio JSON output file, a `datasheet = NAME` or a `power_trace = FILE`)"
            )))
        }
        (Some(json), _) => fio_target(&t, json, at, dir, pre, base)?,
        (None, Some(d)) => {
            for (k, v) in [
                ("job", &t.job),
                ("metric", &t.metric),
                ("jobname", &t.jobname),
            ] {
                if v.is_some() {
                    return Err(input(format!("{at}: {k}: only for a fio target")));
                }
            }
            (positive(t.value, at, "value")?, datasheet(d, at, pre)?)
        }
    };
    if t.fio.is_some() && t.value.is_some() {
        return Err(input(format!(
            "{at}: value: a fio target's value is its file's (`metric`)"
        )));
    }
    let throughput = throughput_of(&probe, measured);
    Ok(Target {
        name,
        measured,
        tolerance,
        weight,
        holdout: t.holdout,
        probe,
        throughput,
    })
}

/// A measured power trace (CSV with a header: time and watts columns, as
/// `--power-trace` writes one) under the job that ran while it was taken:
/// its mean power, the mean of its samples (taken as equally spaced),
/// against the simulated run's mean power.
#[allow(clippy::too_many_arguments)]
fn power_trace_target(
    t: &TargetToml,
    trace: &str,
    name: String,
    tolerance: f64,
    weight: f64,
    at: &str,
    dir: &Path,
    pre: Option<String>,
    base: &SsdConfig,
) -> Result<Target, RunError> {
    for (k, v) in [("metric", &t.metric), ("jobname", &t.jobname)] {
        if v.is_some() {
            return Err(input(format!("{at}: {k}: not for a power_trace target")));
        }
    }
    if t.value.is_some() {
        return Err(input(format!(
            "{at}: value: a power trace's value is its mean power"
        )));
    }
    let path = dir.join(trace);
    let p = path.display();
    let text = std::fs::read_to_string(&path)
        .map_err(|e| input(format!("{at}: power_trace: {p}: cannot read: {e}")))?;
    let measured = trace_mean(&text, t.column.as_deref())
        .map_err(|e| input(format!("{at}: power_trace: {p}: {e}")))?;
    let jp = match &t.job {
        Some(j) => dir.join(j),
        None => {
            return Err(input(format!(
                "{at}: job: missing (the fio job that ran while the trace was taken)"
            )))
        }
    };
    let job = std::fs::read_to_string(&jp)
        .map_err(|e| input(format!("{at}: job: {}: cannot read: {e}", jp.display())))?;
    // The trace is the whole drive's power: its job is one entry.
    let entries = entries_of(&job, base, at)?;
    if entries.len() != 1 {
        return Err(input(format!(
            "{at}: job: {} reports {} entries ({}): a power trace is the drive's power under one \
             job (its numjobs clones summed with group_reporting)",
            jp.display(),
            entries.len(),
            entries.join(", ")
        )));
    }
    Ok(Target {
        name,
        measured,
        tolerance,
        weight,
        holdout: t.holdout,
        probe: Probe::Run {
            job,
            precondition: pre.unwrap_or_else(|| "fill".into()),
            metric: "power_w.mean".into(),
            scale: 1.0,
            entry: None,
        },
        throughput: None,
    })
}

/// The mean of a CSV column (`column`, or the second one), named in the
/// header line.
fn trace_mean(text: &str, column: Option<&str>) -> Result<f64, String> {
    let mut lines = text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty());
    let (_, header) = lines.next().ok_or("empty (a header line, then samples)")?;
    let names: Vec<&str> = header.split(',').map(str::trim).collect();
    let col = match column {
        Some(c) => names
            .iter()
            .position(|n| *n == c)
            .ok_or_else(|| format!("no column \"{c}\" in the header ({header})"))?,
        None if names.len() >= 2 => 1,
        None => {
            return Err(format!(
                "the header ({header}) has no second column (the watts)"
            ))
        }
    };
    let (mut sum, mut n) = (0.0, 0u64);
    for (i, line) in lines {
        let cell = line.split(',').nth(col).map(str::trim).unwrap_or("");
        let w: f64 = cell
            .parse()
            .map_err(|_| format!("line {}: \"{cell}\" is not a number of watts", i + 1))?;
        if !(w.is_finite() && w >= 0.0) {
            return Err(format!("line {}: {w} W is not a power", i + 1));
        }
        sum += w;
        n += 1;
    }
    if n == 0 || sum <= 0.0 {
        return Err("no sample with power in it".into());
    }
    Ok(sum / n as f64)
}

/// The names of the entries fio's JSON output has for the job file `job`
/// (one per job clone, clones and jobs summed by `group_reporting` into
/// one), as the run of it reports them ([`crate::fio_json::entry_names`]).
fn entries_of(job: &str, base: &SsdConfig, at: &str) -> Result<Vec<String>, RunError> {
    let mut c = base.clone();
    let jobs = crate::fio::parse_jobs_str(job, at, &c.workload)
        .map_err(|e| input(format!("{at}: job: {e}")))?;
    let only = jobs.first().map(|j| j.1.name.clone()).unwrap_or_default();
    let out = crate::apply_fio_jobs(&mut c, jobs, at, &[], &mut |_| {})
        .map_err(|e| input(format!("{at}: job: {e}")))?;
    if out.is_empty() {
        return Ok(vec![only]);
    }
    Ok(crate::fio_json::entry_names(&out))
}

fn datasheet(d: &str, at: &str, pre: Option<String>) -> Result<Probe, RunError> {
    match d {
        "idle_power_w" => return Ok(Probe::IdlePower),
        "capacity_gb" => return Ok(Probe::Capacity),
        _ => {}
    }
    let (_, job, metric, scale, p) = DATASHEET.iter().find(|x| x.0 == d).ok_or_else(|| {
        input(format!(
            "{at}: datasheet: unknown figure \"{d}\" (one of {})",
            datasheet_names()
        ))
    })?;
    Ok(Probe::Run {
        job: job.to_string(),
        precondition: pre.unwrap_or_else(|| p.to_string()),
        metric: metric.to_string(),
        scale: *scale,
        entry: None,
    })
}

/// A fio target: the measured value from its JSON file, the job that
/// defines the test from `job` or the JSON's own options.
///
/// A JSON file of several entries (a job file of several jobs, or
/// `numjobs` clones without `group_reporting`: fio reports each apart) is
/// read as fio wrote it: `jobname` names the entry, which must be the only
/// one of that name, and the test is the whole job file run as fio ran it
/// (its jobs one after another at a `stonewall`, or side by side), the
/// simulated run's entry of that name read back. The job file must report
/// the entries the JSON has, in its order: it is the file that ran.
fn fio_target(
    t: &TargetToml,
    json: &str,
    at: &str,
    dir: &Path,
    pre: Option<String>,
    base: &SsdConfig,
) -> Result<(f64, Probe), RunError> {
    let path = dir.join(json);
    let p = path.display();
    let text = std::fs::read_to_string(&path)
        .map_err(|e| input(format!("{at}: fio: {p}: cannot read: {e}")))?;
    let doc: Value = serde_json::from_str(&text)
        .map_err(|e| input(format!("{at}: fio: {p}: not fio JSON output: {e}")))?;
    let (names, entry) = pick_job(&doc, t.jobname.as_deref())
        .map_err(|(field, e)| input(format!("{at}: {field}: {p}: {e}")))?;
    let metric = t
        .metric
        .clone()
        .ok_or_else(|| input(format!("{at}: metric: missing (such as read.iops)")))?;
    let measured =
        metric_value(entry, &metric).map_err(|e| input(format!("{at}: metric: {p}: {e}")))?;
    if !(measured.is_finite() && measured > 0.0) {
        return Err(input(format!(
            "{at}: metric: {p}: {metric} is {measured}, not a positive measurement"
        )));
    }
    let (job, source) = match &t.job {
        Some(j) => {
            let jp = dir.join(j);
            let text = std::fs::read_to_string(&jp)
                .map_err(|e| input(format!("{at}: job: {}: cannot read: {e}", jp.display())))?;
            (text, jp.display().to_string())
        }
        None => (
            job_from_json(&doc).ok_or_else(|| {
                input(format!(
                    "{at}: job: missing, and {p} has no `job options` (give the fio job file)"
                ))
            })?,
            format!("{p}'s job options"),
        ),
    };
    let reported = entries_of(&job, base, at)?;
    let name = entry
        .get("jobname")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let several = names.len() > 1 || reported.len() > 1;
    if reported_clones(&job) > 1 {
        return Err(input(format!(
            "{at}: job: {source}: numjobs={} without group_reporting: fio reports each clone \
             apart; a target's test is one entry (add group_reporting, or numjobs=1)",
            reported_clones(&job)
        )));
    }
    if several && reported != names {
        return Err(input(format!(
            "{at}: job: {source} reports the entries [{}] but {p} has [{}]: \
             give the job file that ran",
            reported.join(", "),
            names.join(", ")
        )));
    }
    let probe = Probe::Run {
        job,
        precondition: pre.unwrap_or_else(|| "fill".into()),
        metric,
        scale: 1.0,
        entry: several.then(|| name.to_string()),
    };
    Ok((measured, probe))
}

/// A one-section job file's `numjobs` when its clones are reported apart
/// (no `group_reporting`), else 1.
fn reported_clones(job: &str) -> u32 {
    match crate::fio::parse_jobs_str(job, "", &Default::default()).as_deref() {
        Ok([(_, j)]) if !j.group_reporting => j.numjobs.max(1),
        _ => 1,
    }
}

/// The entries of a fio JSON document (their job names, in order) and the
/// one a target reads: the one named (which must be the only one of its
/// name), or the only one. An error names the field it is about.
fn pick_job<'a>(
    doc: &'a Value,
    name: Option<&str>,
) -> Result<(Vec<String>, &'a Value), (&'static str, String)> {
    let jobs = doc.get("jobs").and_then(Value::as_array).ok_or((
        "fio",
        "no `jobs` array (not fio's --output-format=json)".to_string(),
    ))?;
    let names: Vec<String> = jobs
        .iter()
        .map(|j| {
            j.get("jobname")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string()
        })
        .collect();
    let entry = match name {
        Some(n) => {
            let hits: Vec<usize> = (0..jobs.len()).filter(|&i| names[i] == n).collect();
            match hits.as_slice() {
                [i] => &jobs[*i],
                [] => {
                    return Err((
                        "jobname",
                        format!("no job named \"{n}\" (its jobs: {})", names.join(", ")),
                    ))
                }
                _ => {
                    return Err((
                        "jobname",
                        format!(
                            "{} entries are named \"{n}\" (numjobs clones reported apart, without \
                             group_reporting): a target reads one entry; measure with group_reporting",
                            hits.len()
                        ),
                    ))
                }
            }
        }
        None if jobs.len() == 1 => &jobs[0],
        None => {
            return Err((
                "jobname",
                format!(
                    "{} jobs ({}): name the one to take with `jobname`",
                    jobs.len(),
                    names.join(", ")
                ),
            ))
        }
    };
    Ok((names, entry))
}

/// A metric of a fio JSON job entry: `DIR.KEY[.KEY...]`, where a
/// percentile is `DIR.clat_ns.percentile.99.000000` (any spelling of the
/// number: `percentile.99`).
pub fn metric_value(entry: &Value, metric: &str) -> Result<f64, String> {
    let missing = || format!("no field {metric}");
    for lat in ["clat_ns", "lat_ns", "slat_ns"] {
        if let Some((dir, p)) = metric.split_once(&format!(".{lat}.percentile.")) {
            let want: f64 = p
                .parse()
                .map_err(|_| format!("{metric}: \"{p}\" is not a percentile"))?;
            let table = entry
                .get(dir)
                .and_then(|d| d.get(lat))
                .and_then(|l| l.get("percentile"))
                .and_then(Value::as_object)
                .ok_or_else(missing)?;
            return table
                .iter()
                .find(|(k, _)| k.parse::<f64>().ok() == Some(want))
                .and_then(|(_, v)| v.as_f64())
                .ok_or_else(missing);
        }
    }
    let mut v = entry;
    for k in metric.split('.') {
        v = v.get(k).ok_or_else(missing)?;
    }
    v.as_f64()
        .ok_or_else(|| format!("{metric} is not a number"))
}

/// A fio job file from the JSON's `global options` and each entry's `job
/// options` (what fio writes with the results): a section per entry, but
/// one for consecutive entries of one name (a job's `numjobs` clones, each
/// reported apart, carry its options each).
fn job_from_json(doc: &Value) -> Option<String> {
    let mut text = String::new();
    let lines = |m: &serde_json::Map<String, Value>, text: &mut String| {
        for (k, v) in m {
            match v.as_str() {
                Some("") => text.push_str(&format!("{k}\n")),
                Some(s) => text.push_str(&format!("{k}={s}\n")),
                None => text.push_str(&format!("{k}={v}\n")),
            }
        }
    };
    if let Some(g) = doc.get("global options").and_then(Value::as_object) {
        text.push_str("[global]\n");
        lines(g, &mut text);
    }
    let mut last: Option<&str> = None;
    for entry in doc.get("jobs")?.as_array()? {
        let opts = entry.get("job options")?.as_object()?;
        let name = entry
            .get("jobname")
            .and_then(Value::as_str)
            .unwrap_or("job");
        if last == Some(name) {
            continue;
        }
        last = Some(name);
        text.push_str(&format!("[{name}]\n"));
        lines(opts, &mut text);
    }
    Some(text)
}

/// The bytes per second a throughput target stands for: (direction,
/// random, bytes/s), from its job's `rw` and `bs`.
fn throughput_of(probe: &Probe, measured: f64) -> Option<(char, bool, f64)> {
    let Probe::Run {
        job,
        metric,
        scale,
        entry,
        ..
    } = probe
    else {
        return None;
    };
    let jobs = crate::fio::parse_jobs_str(job, "", &Default::default()).ok()?;
    let w = match entry {
        Some(n) => &jobs.iter().find(|j| &j.1.name == n)?.0,
        None => &jobs.first()?.0,
    };
    let dir = match (w.rw, metric.split('.').next()?) {
        (RwMode::Read | RwMode::RandRead, "read") => 'r',
        (RwMode::Write | RwMode::RandWrite, "write") => 'w',
        _ => return None,
    };
    let raw = measured / scale;
    let bytes = match metric.split_once('.')?.1 {
        "iops" => raw * w.bs.0 as f64,
        "bw_bytes" => raw,
        "bw" => raw * 1024.0,
        _ => return None,
    };
    Some((dir, w.rw.is_random(), bytes))
}

/// Refuse a contradictory set: random throughput far above the sequential
/// throughput of the same direction (twice or more), or an idle power above
/// the stated maximum.
fn check_consistent(spec: &Spec) -> Result<(), RunError> {
    let f = spec.file.display();
    for r in &spec.targets {
        let Some((dir, true, rbytes)) = r.throughput else {
            continue;
        };
        for s in &spec.targets {
            if let Some((d, false, sbytes)) = s.throughput {
                if d == dir && rbytes > 2.0 * sbytes {
                    return Err(input(format!(
                        "{f}: target \"{}\": contradicts target \"{}\": random {:.1} MB/s is over twice the sequential {:.1} MB/s of the same direction",
                        r.name,
                        s.name,
                        rbytes / 1e6,
                        sbytes / 1e6
                    )));
                }
            }
        }
    }
    if let Some(max) = spec.max_power_w {
        for t in &spec.targets {
            let is_power = matches!(&t.probe, Probe::IdlePower)
                || matches!(&t.probe, Probe::Run { metric, .. } if metric == "power_w.mean");
            if is_power && t.measured > max {
                return Err(input(format!(
                    "{f}: target \"{}\": {} W is above the stated maximum power (max_power_w) of {max} W",
                    t.name, t.measured
                )));
            }
        }
    }
    Ok(())
}
