//! A run's results in fio's JSON output format (`--output-format json`), so
//! that tools that read fio's output read ssdsim's: the fields and their
//! units are fio 3.x's (`stat.c`: `show_thread_status_json`,
//! `add_ddir_status_json`, `add_ddir_lat_json`).
//!
//! What is simulated and what is not:
//! - `read`, `write`, `trim` (and `sync`, a buffered job's fsyncs) carry the
//!   application's calls in a buffered run (the report's `app` section: what
//!   fio measures, the system calls) and the block requests otherwise (the
//!   report's `host` and `latency_us`).
//! - A run of several jobs (flows) has an entry per job clone with its
//!   flow's own figures, summed per reporting group under
//!   `group_reporting` as `stat.c`'s `__show_run_stats` sums them.
//! - `clat_ns` and `lat_ns` are the same latency (arrival to completion, the
//!   block layer's queueing included); `slat_ns` has no samples, as fio
//!   writes it for a synchronous engine: submission is not timed apart.
//! - Percentiles are fio's default list, read from the run's latency
//!   histogram (3 significant digits); `mean` is exact; `min` and `stddev`
//!   come from the histogram too.
//! - `bw` and `iops` divide by the exact simulated time, not by `runtime`
//!   rounded to milliseconds as fio does.
//! - The sampled series (`bw_min` ... `iops_samples`) have no samples, as
//!   fio writes them for a job shorter than its sampling interval; host CPU
//!   figures (`usr_cpu`, `sys_cpu`, `ctx`, `majf`, `minf`), `job options`,
//!   the I/O depth and latency distributions and `disk_util` are left out.
//! - `trim`'s bytes are the trims' own (the report's `host.bytes_trimmed`,
//!   a flow's or the application's `bytes_trimmed`).

use serde_json::{json, Map, Value};
use ssd_core::stats::{LatencyHist, Report};

/// fio's default `percentile_list` (options.c).
pub const PERCENTILES: [f64; 17] = [
    1.0, 5.0, 10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 95.0, 99.0, 99.5, 99.9, 99.95,
    99.99,
];

/// A latency object (`clat_ns`, `lat_ns`): min, max, mean, stddev, N and,
/// when there are samples, the percentiles keyed as fio keys them
/// (`"99.900000"`).
pub fn lat_object(h: &LatencyHist) -> Value {
    let mut o = Map::new();
    o.insert("min".into(), json!(h.min_ns()));
    o.insert("max".into(), json!(h.max_ns()));
    o.insert("mean".into(), json!(h.mean_ns()));
    o.insert("stddev".into(), json!(h.stddev_ns()));
    o.insert("N".into(), json!(h.count()));
    if h.count() > 0 {
        let p: Map<String, Value> = PERCENTILES
            .iter()
            .map(|&p| (format!("{p:.6}"), json!(h.quantile_ns(p / 100.0))))
            .collect();
        o.insert("percentile".into(), Value::Object(p));
    }
    Value::Object(o)
}

/// What fio writes for a latency it did not measure.
fn unmeasured() -> Value {
    json!({"min": 0, "max": 0, "mean": 0.0, "stddev": 0.0, "N": 0})
}

/// One direction (`read`, `write`, `trim`): `ios` requests of `b` bytes
/// in `secs` simulated seconds.
fn ddir(ios: u64, b: u64, secs: f64, h: &LatencyHist) -> Value {
    let per_s = |n: u64| if secs > 0.0 { n as f64 / secs } else { 0.0 };
    let mut o = Map::new();
    let bw_bytes = per_s(b).floor() as u64;
    o.insert("io_bytes".into(), json!(b));
    o.insert("io_kbytes".into(), json!(b >> 10));
    o.insert("bw_bytes".into(), json!(bw_bytes));
    o.insert("bw".into(), json!(bw_bytes / 1024));
    o.insert("iops".into(), json!(per_s(ios)));
    let runtime_ms = if ios > 0 {
        (secs * 1e3).round() as u64
    } else {
        0
    };
    o.insert("runtime".into(), json!(runtime_ms));
    o.insert("total_ios".into(), json!(ios));
    o.insert("short_ios".into(), json!(0));
    o.insert("drop_ios".into(), json!(0));
    o.insert("slat_ns".into(), unmeasured());
    let lat = lat_object(h);
    o.insert("clat_ns".into(), lat.clone());
    o.insert("lat_ns".into(), lat);
    for k in ["bw_min", "bw_max"] {
        o.insert(k.into(), json!(0));
    }
    for k in ["bw_agg", "bw_mean", "bw_dev"] {
        o.insert(k.into(), json!(0.0));
    }
    o.insert("bw_samples".into(), json!(0));
    for k in ["iops_min", "iops_max"] {
        o.insert(k.into(), json!(0));
    }
    for k in ["iops_mean", "iops_stddev"] {
        o.insert(k.into(), json!(0.0));
    }
    o.insert("iops_samples".into(), json!(0));
    Value::Object(o)
}

/// One entry of fio's `jobs` array: what it counts and its latencies.
struct Entry {
    name: String,
    groupid: u32,
    reads: u64,
    writes: u64,
    trims: u64,
    bytes_read: u64,
    bytes_written: u64,
    bytes_trimmed: u64,
    secs: f64,
    lat: crate::RunLatencies,
}

impl Entry {
    /// fio's `sum_thread_stats` for `group_reporting`: counts and bytes
    /// add, latencies merge, the runtime is the longest.
    fn absorb(&mut self, o: Entry) {
        self.reads += o.reads;
        self.writes += o.writes;
        self.trims += o.trims;
        self.bytes_read += o.bytes_read;
        self.bytes_written += o.bytes_written;
        self.bytes_trimmed += o.bytes_trimmed;
        self.secs = self.secs.max(o.secs);
        self.lat.read.merge(&o.lat.read);
        self.lat.write.merge(&o.lat.write);
        self.lat.trim.merge(&o.lat.trim);
        self.lat.sync.merge(&o.lat.sync);
    }

    fn to_json(&self) -> Value {
        let mut job = Map::new();
        job.insert("jobname".into(), json!(self.name));
        job.insert("groupid".into(), json!(self.groupid));
        job.insert("error".into(), json!(0));
        job.insert("eta".into(), json!(0));
        job.insert("elapsed".into(), json!(self.secs.round() as u64));
        job.insert(
            "read".into(),
            ddir(self.reads, self.bytes_read, self.secs, &self.lat.read),
        );
        job.insert(
            "write".into(),
            ddir(self.writes, self.bytes_written, self.secs, &self.lat.write),
        );
        job.insert(
            "trim".into(),
            ddir(self.trims, self.bytes_trimmed, self.secs, &self.lat.trim),
        );
        job.insert(
            "sync".into(),
            json!({"total_ios": self.lat.sync.count(), "lat_ns": lat_object(&self.lat.sync)}),
        );
        job.insert(
            "job_runtime".into(),
            json!((self.secs * 1e3).round() as u64),
        );
        Value::Object(job)
    }
}

/// The counts of a report section (`app` or a flow, as JSON): reads,
/// writes, trims, bytes read, written and trimmed, seconds.
fn counts(v: &Value) -> (u64, u64, u64, u64, u64, u64, f64) {
    let u = |k: &str| v.get(k).and_then(Value::as_u64).unwrap_or(0);
    (
        u("reads"),
        u("writes"),
        u("trims"),
        u("bytes_read"),
        u("bytes_written"),
        u("bytes_trimmed"),
        v.get("time_s").and_then(Value::as_f64).unwrap_or(0.0),
    )
}

/// The output jobs of a run of `[[flow]]`s given without a fio job file:
/// one per flow, under its name, grouped as fio groups a stonewall.
pub fn flow_jobs(cfg: &ssdsim_host::config::SsdConfig) -> Vec<crate::fio::OutputJob> {
    let mut groupid = 0;
    cfg.flows
        .iter()
        .enumerate()
        .map(|(i, f)| {
            if f.stonewall && i > 0 {
                groupid += 1;
            }
            crate::fio::OutputJob {
                name: f.name.clone(),
                groupid,
                group_reporting: false,
            }
        })
        .collect()
}

/// Does output job `j` sum into the entry before it (fio's `stat.c`:
/// `group_reporting` and the same `groupid` as the job before, `last`)?
fn joins_previous(j: &crate::fio::OutputJob, last: Option<u32>) -> bool {
    j.group_reporting && last == Some(j.groupid)
}

/// The names of the entries fio's JSON output has for `jobs`, in order:
/// one per job clone, but clones and jobs summed by `group_reporting`
/// ([`fio_json_run`]'s entries).
pub fn entry_names(jobs: &[crate::fio::OutputJob]) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    let mut last = None;
    for j in jobs {
        if names.is_empty() || !joins_previous(j, last) {
            names.push(j.name.clone());
        }
        last = Some(j.groupid);
    }
    names
}

/// fio's JSON output for a run of `cfg` (after [`crate::apply_fio_jobs`]
/// gave `jobs`): one entry per job, or, for a run of `[[flow]]`s, per flow
/// (a fio file's `numjobs` clones each), summed into one entry per
/// reporting group where `group_reporting` says so, as fio's `stat.c`
/// does (a job joins the entry before it if it has `group_reporting` and
/// the same `groupid`). A flow's figures are its own (the report's `flows`
/// section: a buffered flow's application calls, else its requests from
/// their arrival at the flow), over its measured phase. `report` and `lat`
/// are the run's.
pub fn fio_json_run(
    jobs: &[crate::fio::OutputJob],
    cfg: &ssdsim_host::config::SsdConfig,
    report: &Report,
    lat: &crate::RunLatencies,
) -> Value {
    let flows = report.extra.get("flows").and_then(Value::as_array);
    let mut entries: Vec<Entry> = Vec::new();
    match flows {
        Some(flows) if !lat.flows.is_empty() => {
            let derived;
            let jobs = if jobs.len() == flows.len() {
                jobs
            } else {
                derived = flow_jobs(cfg);
                &derived
            };
            let mut last: Option<u32> = None;
            for (i, f) in flows.iter().enumerate() {
                let l = &lat.flows[i];
                let (reads, writes, trims, bytes_read, bytes_written, bytes_trimmed, secs) =
                    match f.get("app") {
                        Some(app) if l.app => counts(app),
                        _ => counts(f),
                    };
                let j = &jobs[i];
                let e = Entry {
                    name: j.name.clone(),
                    groupid: j.groupid,
                    reads,
                    writes,
                    trims,
                    bytes_read,
                    bytes_written,
                    bytes_trimmed,
                    secs,
                    lat: l.clone(),
                };
                match entries.last_mut() {
                    Some(prev) if joins_previous(j, last) => prev.absorb(e),
                    _ => entries.push(e),
                }
                last = Some(j.groupid);
            }
        }
        _ => {
            let (reads, writes, trims, bytes_read, bytes_written, bytes_trimmed, secs) =
                match report.extra.get("app") {
                    Some(app) if lat.app => counts(app),
                    _ => {
                        let h = &report.host;
                        (
                            h.reads,
                            h.writes,
                            h.trims,
                            h.bytes_read,
                            h.bytes_written,
                            h.bytes_trimmed,
                            h.sim_time_s,
                        )
                    }
                };
            let (name, groupid) = jobs
                .first()
                .map_or(("ssdsim".to_string(), 0), |j| (j.name.clone(), j.groupid));
            entries.push(Entry {
                name,
                groupid,
                reads,
                writes,
                trims,
                bytes_read,
                bytes_written,
                bytes_trimmed,
                secs,
                lat: lat.clone(),
            });
        }
    }
    document(entries.iter().map(Entry::to_json).collect())
}

/// fio's top level around its `jobs`.
fn document(jobs: Vec<Value>) -> Value {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    json!({
        "fio version": format!("ssdsim-{}", env!("CARGO_PKG_VERSION")),
        "timestamp": now.as_secs(),
        "timestamp_ms": now.as_millis() as u64,
        "jobs": jobs,
    })
}
