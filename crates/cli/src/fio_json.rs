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
//! - A trim's bytes are known for the fio-style workload (every request is
//!   `bs` bytes); for a trace or a personality, `trim` has no `io_bytes`,
//!   `io_kbytes`, `bw` or `bw_bytes`.

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

/// One direction (`read`, `write`, `trim`): `ios` requests of `bytes` bytes
/// (None: unknown) in `secs` simulated seconds.
fn ddir(ios: u64, bytes: Option<u64>, secs: f64, h: &LatencyHist) -> Value {
    let per_s = |n: u64| if secs > 0.0 { n as f64 / secs } else { 0.0 };
    let mut o = Map::new();
    if let Some(b) = bytes {
        let bw_bytes = per_s(b).floor() as u64;
        o.insert("io_bytes".into(), json!(b));
        o.insert("io_kbytes".into(), json!(b >> 10));
        o.insert("bw_bytes".into(), json!(bw_bytes));
        o.insert("bw".into(), json!(bw_bytes / 1024));
    }
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

/// fio's JSON output for one run: `jobname` (the job section's name),
/// the report and the histograms it summarises, and the bytes of one trim
/// when every request has the same size (the fio-style workload's `bs`).
pub fn fio_json(
    jobname: &str,
    report: &Report,
    lat: &crate::RunLatencies,
    trim_bs: Option<u64>,
) -> Value {
    let u = |v: &Value, k: &str| v.get(k).and_then(Value::as_u64).unwrap_or(0);
    let (reads, writes, trims, bytes_read, bytes_written, secs) = match report.extra.get("app") {
        Some(app) if lat.app => (
            u(app, "reads"),
            u(app, "writes"),
            u(app, "trims"),
            u(app, "bytes_read"),
            u(app, "bytes_written"),
            app.get("time_s").and_then(Value::as_f64).unwrap_or(0.0),
        ),
        _ => {
            let h = &report.host;
            (
                h.reads,
                h.writes,
                h.trims,
                h.bytes_read,
                h.bytes_written,
                h.sim_time_s,
            )
        }
    };
    let mut job = Map::new();
    job.insert("jobname".into(), json!(jobname));
    job.insert("groupid".into(), json!(0));
    job.insert("error".into(), json!(0));
    job.insert("eta".into(), json!(0));
    job.insert("elapsed".into(), json!(secs.round() as u64));
    job.insert(
        "read".into(),
        ddir(reads, Some(bytes_read), secs, &lat.read),
    );
    job.insert(
        "write".into(),
        ddir(writes, Some(bytes_written), secs, &lat.write),
    );
    job.insert(
        "trim".into(),
        ddir(trims, trim_bs.map(|b| b * trims), secs, &lat.trim),
    );
    job.insert(
        "sync".into(),
        json!({"total_ios": lat.sync.count(), "lat_ns": lat_object(&lat.sync)}),
    );
    job.insert("job_runtime".into(), json!((secs * 1e3).round() as u64));
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    json!({
        "fio version": format!("ssdsim-{}", env!("CARGO_PKG_VERSION")),
        "timestamp": now.as_secs(),
        "timestamp_ms": now.as_millis() as u64,
        "jobs": [Value::Object(job)],
    })
}
