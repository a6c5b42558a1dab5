//! Run statistics and the report (stable field names; documented in README.md).

use crate::ftl::{FtlStats, OpKind, Purpose};
use crate::units::Dur;
use crate::workload::IoOp;
use hdrhistogram::Histogram;
use serde::Serialize;
use std::collections::BTreeMap;

/// Latency recorder: an HDR histogram in nanoseconds (3 significant digits) plus
/// an exact sum and max.
#[derive(Clone, Debug)]
pub struct LatencyHist {
    h: Histogram<u64>,
    sum: u128,
    max: u64,
}

impl Default for LatencyHist {
    fn default() -> Self {
        LatencyHist {
            // 1 ns .. u64::MAX ns at 3 significant digits (~450 KB): no latency
            // a run can produce saturates (it once capped at 2^44 ns, 4.9 hours,
            // and an overloaded multi-hour replay's percentiles stuck there).
            h: Histogram::new_with_bounds(1, u64::MAX, 3).expect("histogram"),
            sum: 0,
            max: 0,
        }
    }
}

impl LatencyHist {
    #[inline]
    pub fn record(&mut self, ns: u64) {
        let v = ns.max(1);
        if self.h.record(v).is_err() {
            self.h.saturating_record(v);
        }
        self.sum += ns as u128;
        self.max = self.max.max(ns);
    }
    pub fn count(&self) -> u64 {
        self.h.len()
    }
    /// Exact maximum in nanoseconds.
    pub fn max_ns(&self) -> u64 {
        self.max
    }
    pub fn summary(&self) -> LatencySummary {
        let n = self.h.len();
        if n == 0 {
            return LatencySummary::default();
        }
        let q = |p: f64| self.h.value_at_quantile(p) as f64 / 1e3;
        LatencySummary {
            count: n,
            mean: self.sum as f64 / n as f64 / 1e3,
            p50: q(0.5),
            p90: q(0.9),
            p99: q(0.99),
            p999: q(0.999),
            max: self.max as f64 / 1e3,
        }
    }
    pub fn merge(&mut self, o: &LatencyHist) {
        self.h.add(&o.h).expect("same bounds");
        self.sum += o.sum;
        self.max = self.max.max(o.max);
    }
    /// The latency at quantile `q` (0..=1) in nanoseconds, from the
    /// histogram (3 significant digits); 0 when empty.
    pub fn quantile_ns(&self, q: f64) -> u64 {
        if self.h.is_empty() {
            return 0;
        }
        self.h.value_at_quantile(q)
    }
    /// The least latency in nanoseconds, from the histogram (3 significant
    /// digits); 0 when empty.
    pub fn min_ns(&self) -> u64 {
        if self.h.is_empty() {
            return 0;
        }
        self.h.min()
    }
    /// Exact mean in nanoseconds; 0 when empty.
    pub fn mean_ns(&self) -> f64 {
        match self.h.len() {
            0 => 0.0,
            n => self.sum as f64 / n as f64,
        }
    }
    /// Standard deviation in nanoseconds, from the histogram (3
    /// significant digits); 0 when empty.
    pub fn stddev_ns(&self) -> f64 {
        if self.h.is_empty() {
            return 0.0;
        }
        self.h.stdev()
    }
    /// (latency_us, cumulative fraction) points for a CDF plot.
    pub fn cdf(&self, points: usize) -> Vec<(f64, f64)> {
        if self.h.is_empty() {
            return vec![];
        }
        (1..=points)
            .map(|i| {
                let q = i as f64 / points as f64;
                (self.h.value_at_quantile(q) as f64 / 1e3, q)
            })
            .collect()
    }
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, serde::Deserialize)]
pub struct LatencySummary {
    pub count: u64,
    pub mean: f64,
    pub p50: f64,
    pub p90: f64,
    pub p99: f64,
    pub p999: f64,
    pub max: f64,
}

/// Counters the engine keeps during the measured phase.
#[derive(Clone, Debug, Default)]
pub struct Counters {
    pub requests: u64,
    pub reads: u64,
    pub writes: u64,
    pub trims: u64,
    pub flushes: u64,
    pub bytes_read: u64,
    pub bytes_written: u64,
    pub host_pages_written: u64,
    /// `[kind][purpose]` flash operation counts (pages for read/program, blocks for erase).
    pub flash_ops: [[u64; 5]; 3],
    pub merged: u64,
    /// Programs/erases suspended for reads (`nand.suspend`).
    pub suspensions: u64,
    pub dispatched: u64,
    pub queue_time_ns: u128,
    pub max_queue_time_ns: u64,
    /// Per direction [read, write]: dispatched commands, total and max time queued in the scheduler.
    pub dispatched_dir: [u64; 2],
    pub queue_time_dir_ns: [u128; 2],
    pub max_queue_time_dir_ns: [u64; 2],
    pub wbuf_hits: u64,
    pub wbuf_evictions: u64,
    pub read_buffer_hits: u64,
    pub multiplane_batches: u64,
    /// Translation-page reads that waited for a read of the same page already
    /// in flight instead of reading it again (not in `flash_ops`).
    pub joined_translation_reads: u64,
    pub events: u64,
    /// Block layer: requests whose submitter slept on `sched.nr_requests`,
    /// their total and longest sleep.
    pub blocked: u64,
    pub blocked_ns: u128,
    pub max_blocked_ns: u64,
    /// Requests that went through a plug, and plug flushes.
    pub plugged: u64,
    pub plug_flushes: u64,
    /// Rounds in which the elevator handed the device at least one request,
    /// and the most it handed in one round.
    pub dispatch_batches: u64,
    pub max_batch: u64,
    /// Elevator queue length over time: its integral (requests x ns), the
    /// time spent in each bucket (0, 1, 2-3, 4-7, ..., 256+) and its maximum.
    pub qd_area: u128,
    pub qd_hist: [u64; QD_BUCKETS],
    pub qd_max: u64,
}

/// Buckets of the elevator queue-length distribution (see `Counters::qd_hist`).
pub const QD_BUCKETS: usize = 10;

impl Counters {
    #[inline]
    pub fn flash(&mut self, kind: OpKind, p: Purpose) {
        self.flash_ops[kind as usize][p.index()] += 1;
    }
    pub fn flash_total(&self, kind: OpKind) -> u64 {
        self.flash_ops[kind as usize].iter().sum()
    }
}

/// Latencies of the measured phase by direction; `all` is merged on demand
/// (histogram buckets, sums and maxima add exactly), so each completion records
/// into one histogram only.
#[derive(Clone, Debug, Default)]
pub struct Latencies {
    pub read: LatencyHist,
    pub write: LatencyHist,
    /// Trims and flushes.
    pub other: LatencyHist,
}

impl Latencies {
    #[inline]
    pub fn record(&mut self, op: IoOp, ns: u64) {
        match op {
            IoOp::Read => self.read.record(ns),
            IoOp::Write => self.write.record(ns),
            _ => self.other.record(ns),
        }
    }
    /// Every request's latency in one histogram.
    pub fn all(&self) -> LatencyHist {
        let mut a = self.read.clone();
        a.merge(&self.write);
        a.merge(&self.other);
        a
    }
}

// ---------------------------------------------------------------- report

#[derive(Clone, Debug, Default, Serialize)]
pub struct HostReport {
    pub requests: u64,
    pub reads: u64,
    pub writes: u64,
    pub trims: u64,
    pub bytes_read: u64,
    pub bytes_written: u64,
    pub sim_time_s: f64,
    pub iops: f64,
    pub mbps: f64,
}

#[derive(Clone, Debug, Default, Serialize)]
pub struct LatencyReport {
    pub all: LatencySummary,
    pub read: LatencySummary,
    pub write: LatencySummary,
}

#[derive(Clone, Debug, Default, Serialize)]
pub struct FlashReport {
    pub page_reads: u64,
    pub page_programs: u64,
    pub block_erases: u64,
    pub gc_page_copies: u64,
    /// Flash page programs / host pages written.
    pub waf: f64,
    pub erase_count_min: u32,
    pub erase_count_max: u32,
    pub erase_count_mean: f64,
    pub erase_count_std: f64,
    /// Operation counts by purpose: {read, program, erase} x {host, gc, merge, translation, wear_level}.
    pub by_purpose: BTreeMap<String, BTreeMap<String, u64>>,
    pub multiplane_batches: u64,
    /// Translation-page reads that waited for a read of the same page already
    /// in flight instead of reading it again (not counted in `page_reads`).
    pub joined_translation_reads: u64,
}

#[derive(Clone, Debug, Default, Serialize)]
pub struct UtilizationReport {
    /// Mean busy fraction of the channels (transfers).
    pub channels: f64,
    /// Mean busy fraction of the dies (array operations).
    pub dies: f64,
    pub cpu: f64,
    pub host_link: f64,
}

#[derive(Clone, Debug, Default, Serialize)]
pub struct SchedReport {
    pub kind: String,
    pub merged: u64,
    pub dispatched: u64,
    pub mean_queue_time_us: f64,
    pub max_queue_time_us: f64,
    /// Time commands spent in the host scheduler, reads only / writes only
    /// (a merged command counts from its earliest request's arrival).
    pub read_queue_time_us: QueueTimeSummary,
    pub write_queue_time_us: QueueTimeSummary,
    /// Requests whose submitter slept because the block layer held
    /// `sched.nr_requests` requests, and how long they slept.
    pub blocked: SleepSummary,
    /// Requests that went through a submitter's plug, and plug flushes.
    pub plugged: u64,
    pub plug_flushes: u64,
    /// Rounds in which the elevator handed the device requests, and the
    /// requests per round (mean, max).
    pub dispatch_batches: u64,
    pub requests_per_batch_mean: f64,
    pub requests_per_batch_max: u64,
    /// Requests queued in the elevator (after merging) over the measured
    /// phase, weighted by time.
    pub queue_depth: QueueDepthSummary,
}

/// Submitters that slept on `sched.nr_requests`: how many, and their sleep
/// in microseconds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct SleepSummary {
    pub count: u64,
    pub mean_us: f64,
    pub max_us: f64,
}

/// Time-weighted distribution of the elevator's queue length.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct QueueDepthSummary {
    pub mean: f64,
    pub max: u64,
    /// Share of the measured phase at each queue length ("0", "1", "2-3",
    /// "4-7", ..., "256+"); buckets never reached are left out.
    pub time_share: BTreeMap<String, f64>,
}

impl QueueDepthSummary {
    /// From the integral (requests x ns), the time per bucket and the
    /// maximum, over `span_ns`.
    pub fn new(area: u128, hist: &[u64; QD_BUCKETS], max: u64, span_ns: u64) -> Self {
        let mut time_share = BTreeMap::new();
        if span_ns > 0 {
            for (i, &t) in hist.iter().enumerate() {
                if t == 0 {
                    continue;
                }
                let name = match i {
                    0 => "0".to_string(),
                    1 => "1".to_string(),
                    _ if i == QD_BUCKETS - 1 => format!("{}+", 1u64 << (i - 1)),
                    _ => format!("{}-{}", 1u64 << (i - 1), (1u64 << i) - 1),
                };
                time_share.insert(name, t as f64 / span_ns as f64);
            }
        }
        QueueDepthSummary {
            mean: if span_ns > 0 {
                area as f64 / span_ns as f64
            } else {
                0.0
            },
            max,
            time_share,
        }
    }
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct QueueTimeSummary {
    pub dispatched: u64,
    pub mean: f64,
    pub max: f64,
}

impl QueueTimeSummary {
    pub fn new(dispatched: u64, total_ns: u128, max_ns: u64) -> QueueTimeSummary {
        QueueTimeSummary {
            dispatched,
            mean: if dispatched > 0 {
                total_ns as f64 / dispatched as f64 / 1e3
            } else {
                0.0
            },
            max: max_ns as f64 / 1e3,
        }
    }
}

#[derive(Clone, Debug, Default, Serialize)]
pub struct RunReport {
    pub events: u64,
    /// Wall-clock seconds of the measured phase.
    pub wall_s: f64,
    pub precondition_wall_s: f64,
    pub precondition: String,
    /// Random writes done by steady-state preconditioning (pages), and its final WAF.
    pub precondition_pages: u64,
    pub precondition_waf: f64,
    pub precondition_steady: bool,
    pub seed: u64,
    /// FNV-1a hash of the resolved configuration's TOML.
    pub config_hash: String,
    /// Simulated seconds after the last request spent finishing GC (sim.drain).
    pub drain_s: f64,
    pub version: String,
}

#[derive(Clone, Debug, Default, Serialize)]
pub struct FtlReport {
    pub kind: String,
    pub mapping_table_bytes: u64,
    pub logical_pages: u64,
    pub stats: FtlStats,
    /// CPU time spent on FTL work (map lookups, victim search, GC bookkeeping), seconds.
    pub cpu_s: f64,
    /// DRAM accesses: map lookups, one per GC candidate examined (its
    /// valid-page count), the FTL's others and the write buffer's.
    pub dram_accesses: u64,
    pub write_buffer_hits: u64,
    pub write_buffer_evictions: u64,
    pub read_buffer_hits: u64,
}

/// The report of one run. `extra` holds sections other crates add (energy_j,
/// power_w, ...), keyed by section name, so ssd-core needs no power model.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Report {
    pub host: HostReport,
    pub latency_us: LatencyReport,
    pub flash: FlashReport,
    pub ftl: FtlReport,
    pub sched: SchedReport,
    pub utilization: UtilizationReport,
    pub run: RunReport,
    /// Notes about the input: skipped lines, wrapped addresses, ... (name -> count).
    pub notes: BTreeMap<String, u64>,
    #[serde(flatten)]
    pub extra: BTreeMap<String, serde_json::Value>,
    pub config: serde_json::Value,
}

pub fn erase_stats(counts: &[u32]) -> (u32, u32, f64, f64) {
    if counts.is_empty() {
        return (0, 0, 0.0, 0.0);
    }
    let min = *counts.iter().min().unwrap();
    let max = *counts.iter().max().unwrap();
    let n = counts.len() as f64;
    let mean = counts.iter().map(|&c| c as f64).sum::<f64>() / n;
    let var = counts
        .iter()
        .map(|&c| (c as f64 - mean).powi(2))
        .sum::<f64>()
        / n;
    (min, max, mean, var.sqrt())
}

pub fn fnv1a(s: &str) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in s.bytes() {
        h ^= b as u64;
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    format!("{h:016x}")
}

pub fn secs(d: Dur) -> f64 {
    d.secs_f64()
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn percentiles_track_recorded_values() {
        let mut h = LatencyHist::default();
        for us in 1..=1000u64 {
            h.record(us * 1000);
        }
        let s = h.summary();
        assert!((s.p50 - 500.0).abs() < 1.0, "{s:?}");
        assert!((s.p99 - 990.0).abs() < 1.0, "{s:?}");
        assert!((s.max - 1000.0).abs() < 1e-9, "{s:?}");
    }

    /// Latencies of days (an overloaded replay) keep their percentiles.
    #[test]
    fn very_long_latencies_do_not_saturate() {
        let mut h = LatencyHist::default();
        let day = 86_400 * 1_000_000_000u64;
        for d in 1..=10 {
            h.record(d * day);
        }
        let s = h.summary();
        let days = |us: f64| us / 1e6 / 86_400.0;
        assert!((days(s.p50) - 5.0).abs() < 0.01, "{s:?}");
        assert!((days(s.p99) - 10.0).abs() < 0.01, "{s:?}");
    }
}
