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
    /// Record one latency of `ns` nanoseconds (0 counts as 1 ns in the histogram, exactly in
    /// the sum).
    #[inline]
    pub fn record(&mut self, ns: u64) {
        let v = ns.max(1);
        if self.h.record(v).is_err() {
            self.h.saturating_record(v);
        }
        self.sum += ns as u128;
        self.max = self.max.max(ns);
    }
    /// Number of latencies recorded.
    pub fn count(&self) -> u64 {
        self.h.len()
    }
    /// Exact maximum in nanoseconds.
    pub fn max_ns(&self) -> u64 {
        self.max
    }
    /// Count, mean, percentiles and maximum in microseconds; all zero when empty.
    pub fn summary(&self) -> LatencySummary {
        let n = self.h.len();
        if n == 0 {
            return LatencySummary::default();
        }
        let q = |p: f64| self.at_quantile(p) as f64 / 1e3;
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
    /// Add another recorder's latencies to this one (exact: buckets, sums and maxima add).
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
        self.at_quantile(q)
    }
    /// The histogram's value at quantile `q`, never above the exact
    /// maximum: the histogram answers with the top of the value's bucket
    /// (`highest_equivalent_value`), which can lie above every latency
    /// recorded in it (a p99.9 of 3,823.6 us over a maximum of 3,822.2).
    fn at_quantile(&self, q: f64) -> u64 {
        self.h.value_at_quantile(q).min(self.max)
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
                (self.at_quantile(q) as f64 / 1e3, q)
            })
            .collect()
    }
}

/// One latency distribution as the report shows it, in microseconds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, serde::Deserialize)]
pub struct LatencySummary {
    /// Number of latencies.
    pub count: u64,
    /// Exact mean, microseconds.
    pub mean: f64,
    /// Median, microseconds (3 significant digits).
    pub p50: f64,
    /// 90th percentile, microseconds.
    pub p90: f64,
    /// 99th percentile, microseconds.
    pub p99: f64,
    /// 99.9th percentile, microseconds.
    pub p999: f64,
    /// Exact maximum, microseconds.
    pub max: f64,
}

/// Counters the engine keeps during the measured phase.
#[derive(Clone, Debug, Default)]
pub struct Counters {
    /// Host requests completed.
    pub requests: u64,
    /// Read requests completed.
    pub reads: u64,
    /// Write requests completed.
    pub writes: u64,
    /// Trim (discard) requests completed.
    pub trims: u64,
    /// Flush requests completed.
    pub flushes: u64,
    /// Bytes read by the host.
    pub bytes_read: u64,
    /// Bytes written by the host.
    pub bytes_written: u64,
    /// Bytes the host trimmed (discarded).
    pub bytes_trimmed: u64,
    /// Zone management commands completed (reset, finish, open, close).
    pub zone_mgmt: u64,
    /// Requests completed as failed (a zoned namespace's refusals).
    pub failed: u64,
    /// Logical pages the host wrote to the FTL (the denominator of WAF).
    pub host_pages_written: u64,
    /// `[kind][purpose]` flash operation counts (pages for read/program, blocks for erase).
    pub flash_ops: [[u64; 5]; 3],
    /// Requests merged into a queued command by the host scheduler.
    pub merged: u64,
    /// Programs/erases suspended for reads (`nand.suspend`).
    pub suspensions: u64,
    /// Commands the host scheduler dispatched to the device.
    pub dispatched: u64,
    /// Total time commands waited in the host scheduler, ns.
    pub queue_time_ns: u128,
    /// Longest time a command waited in the host scheduler, ns.
    pub max_queue_time_ns: u64,
    /// Per direction [read, write]: dispatched commands, total and max time queued in the scheduler.
    pub dispatched_dir: [u64; 2],
    /// Per direction [read, write]: total time queued in the scheduler, ns.
    pub queue_time_dir_ns: [u128; 2],
    /// Per direction [read, write]: longest time queued in the scheduler, ns.
    pub max_queue_time_dir_ns: [u64; 2],
    /// Host page writes that hit a page already in the DRAM write buffer.
    pub wbuf_hits: u64,
    /// Pages the write buffer evicted to the FTL to make room (evict-LRU policy).
    pub wbuf_evictions: u64,
    /// Host page reads served from the DRAM write buffer.
    pub read_buffer_hits: u64,
    /// Multi-plane operations: batches of same-kind operations run together on a die.
    pub multiplane_batches: u64,
    /// Translation-page reads that waited for a read of the same page already
    /// in flight instead of reading it again (not in `flash_ops`).
    pub joined_translation_reads: u64,
    /// Events the simulation loop processed.
    pub events: u64,
    /// Block layer: requests whose submitter slept on `sched.nr_requests`,
    /// their total and longest sleep.
    pub blocked: u64,
    /// Total sleep of blocked submitters, ns.
    pub blocked_ns: u128,
    /// Longest sleep of one blocked submitter, ns.
    pub max_blocked_ns: u64,
    /// Requests that went through a plug, and plug flushes.
    pub plugged: u64,
    /// Plug flushes (a plug's requests handed to the elevator).
    pub plug_flushes: u64,
    /// Writes that waited in a zone's write plug (zoned drives).
    pub zone_plugged: u64,
    /// Rounds in which the elevator handed the device at least one request,
    /// and the most it handed in one round.
    pub dispatch_batches: u64,
    /// Most requests handed to the device in one dispatch round.
    pub max_batch: u64,
    /// Elevator queue length over time: its integral (requests x ns), the
    /// time spent in each bucket (0, 1, 2-3, 4-7, ..., 256+) and its maximum.
    pub qd_area: u128,
    /// Time (ns) the queue length spent in each bucket of [`QD_BUCKETS`].
    pub qd_hist: [u64; QD_BUCKETS],
    /// Longest elevator queue seen.
    pub qd_max: u64,
}

/// Buckets of the elevator queue-length distribution (see `Counters::qd_hist`).
pub const QD_BUCKETS: usize = 10;

impl Counters {
    /// Count one flash operation of `kind` for `p`.
    #[inline]
    pub fn flash(&mut self, kind: OpKind, p: Purpose) {
        self.flash_ops[kind as usize][p.index()] += 1;
    }
    /// Flash operations of `kind`, all purposes together.
    pub fn flash_total(&self, kind: OpKind) -> u64 {
        self.flash_ops[kind as usize].iter().sum()
    }
}

/// Latencies of the measured phase by direction; `all` is merged on demand
/// (histogram buckets, sums and maxima add exactly), so each completion records
/// into one histogram only.
#[derive(Clone, Debug, Default)]
pub struct Latencies {
    /// Read requests.
    pub read: LatencyHist,
    /// Write requests.
    pub write: LatencyHist,
    /// Trims and flushes.
    pub other: LatencyHist,
}

impl Latencies {
    /// Record a completion of `op` after `ns` nanoseconds in its direction's histogram (trims
    /// and flushes in `other`).
    #[inline]
    pub fn record(&mut self, op: IoOp, ns: u64) {
        match op {
            IoOp::Read => self.read.record(ns),
            IoOp::Write | IoOp::ZoneAppend => self.write.record(ns),
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

/// The `host` section of the report: what the host asked for and the throughput it got.
#[derive(Clone, Debug, Default, Serialize)]
pub struct HostReport {
    /// Requests completed in the measured phase.
    pub requests: u64,
    /// Reads completed.
    pub reads: u64,
    /// Writes completed.
    pub writes: u64,
    /// Trims completed.
    pub trims: u64,
    /// Flushes (of the device's write cache) completed: with the reads,
    /// writes and trims, every request.
    pub flushes: u64,
    /// Bytes read.
    pub bytes_read: u64,
    /// Bytes written.
    pub bytes_written: u64,
    /// Bytes trimmed (discarded).
    pub bytes_trimmed: u64,
    /// Zone management commands completed (reset, finish, open, close): with
    /// the reads (zone appends among the writes), writes, trims and flushes,
    /// every request. Zoned drives only (absent when 0).
    #[serde(skip_serializing_if = "is_zero")]
    pub zone_mgmt: u64,
    /// Requests the drive failed (a zoned namespace's refusals, by status in
    /// the `zns` section), counted among their kind's; their bytes are not
    /// counted. Absent when 0.
    #[serde(skip_serializing_if = "is_zero")]
    pub failed: u64,
    /// Simulated seconds of the measured phase.
    pub sim_time_s: f64,
    /// Requests per simulated second.
    pub iops: f64,
    /// Bytes read and written per simulated second, in MB/s (10^6 bytes).
    pub mbps: f64,
}

/// The `latency_us` section: request latencies in microseconds, all requests and per direction.
#[derive(Clone, Debug, Default, Serialize)]
pub struct LatencyReport {
    /// All requests (reads, writes, trims, flushes).
    pub all: LatencySummary,
    /// Reads only.
    pub read: LatencySummary,
    /// Writes only.
    pub write: LatencySummary,
}

/// The `flash` section: flash operations, write amplification and wear.
#[derive(Clone, Debug, Default, Serialize)]
pub struct FlashReport {
    /// Page reads on the flash (all purposes).
    pub page_reads: u64,
    /// Page programs on the flash (all purposes).
    pub page_programs: u64,
    /// Block erases.
    pub block_erases: u64,
    /// Page programs by garbage collection (valid-page copies).
    pub gc_page_copies: u64,
    /// Flash page programs / host pages written; `None` (JSON `null`) when
    /// the host wrote nothing, where the ratio has no meaning.
    pub waf: Option<f64>,
    /// Fewest erases of any block.
    pub erase_count_min: u32,
    /// Most erases of any block.
    pub erase_count_max: u32,
    /// Mean erases per block.
    pub erase_count_mean: f64,
    /// Standard deviation of erases per block.
    pub erase_count_std: f64,
    /// Operation counts by purpose: {read, program, erase} x {host, gc, merge, translation, wear_level}.
    pub by_purpose: BTreeMap<String, BTreeMap<String, u64>>,
    /// Multi-plane batches (operations run together on the planes of a die).
    pub multiplane_batches: u64,
    /// Translation-page reads that waited for a read of the same page already
    /// in flight instead of reading it again (not counted in `page_reads`).
    pub joined_translation_reads: u64,
}

/// The `utilization` section: busy fraction of each resource over the measured phase (0..1).
#[derive(Clone, Debug, Default, Serialize)]
pub struct UtilizationReport {
    /// Mean busy fraction of the channels (transfers).
    pub channels: f64,
    /// Mean busy fraction of the dies (array operations).
    pub dies: f64,
    /// Busy fraction of the controller CPU.
    pub cpu: f64,
    /// Busy fraction of the host link.
    pub host_link: f64,
}

/// The `sched` section: the host I/O scheduler's work and queueing.
#[derive(Clone, Debug, Default, Serialize)]
pub struct SchedReport {
    /// The scheduler's name (`--sched`).
    pub kind: String,
    /// Requests merged into a queued command.
    pub merged: u64,
    /// Commands dispatched to the device.
    pub dispatched: u64,
    /// Mean time a command waited in the scheduler, microseconds.
    pub mean_queue_time_us: f64,
    /// Longest time a command waited in the scheduler, microseconds.
    pub max_queue_time_us: f64,
    /// Time commands spent in the host scheduler, reads only / writes only
    /// (a merged command counts from its earliest request's arrival).
    pub read_queue_time_us: QueueTimeSummary,
    /// Writes only (see `read_queue_time_us`).
    pub write_queue_time_us: QueueTimeSummary,
    /// Requests whose submitter slept because the block layer held
    /// `sched.nr_requests` requests, and how long they slept.
    pub blocked: SleepSummary,
    /// Requests that went through a submitter's plug, and plug flushes.
    pub plugged: u64,
    /// Plug flushes.
    pub plug_flushes: u64,
    /// Writes that waited in their zone's write plug for the write before
    /// them to complete (zone write plugging, zoned drives only; absent
    /// when 0).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub zone_plugged: u64,
    /// Rounds in which the elevator handed the device requests, and the
    /// requests per round (mean, max).
    pub dispatch_batches: u64,
    /// Mean requests handed to the device per dispatch round.
    pub requests_per_batch_mean: f64,
    /// Most requests handed to the device in one round.
    pub requests_per_batch_max: u64,
    /// Requests queued in the elevator (after merging) over the measured
    /// phase, weighted by time.
    pub queue_depth: QueueDepthSummary,
}

/// Submitters that slept on `sched.nr_requests`: how many, and their sleep
/// in microseconds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct SleepSummary {
    /// Submitters that slept.
    pub count: u64,
    /// Mean sleep, microseconds.
    pub mean_us: f64,
    /// Longest sleep, microseconds.
    pub max_us: f64,
}

/// Time-weighted distribution of the elevator's queue length.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct QueueDepthSummary {
    /// Mean queue length (requests), time-weighted.
    pub mean: f64,
    /// Longest queue (requests).
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

/// Commands of one direction dispatched by the scheduler and their time queued in it, microseconds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct QueueTimeSummary {
    /// Commands dispatched.
    pub dispatched: u64,
    /// Mean time queued, microseconds (0 when none was dispatched).
    pub mean: f64,
    /// Longest time queued, microseconds.
    pub max: f64,
}

impl QueueTimeSummary {
    /// From `dispatched` commands' total and longest time queued in nanoseconds.
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

/// The `run` section: how the run went (events, wall time, preconditioning, seed, version).
#[derive(Clone, Debug, Default, Serialize)]
pub struct RunReport {
    /// Events the simulation loop processed.
    pub events: u64,
    /// Wall-clock seconds of the measured phase.
    pub wall_s: f64,
    /// Wall-clock seconds of preconditioning.
    pub precondition_wall_s: f64,
    /// The preconditioning mode (`sim.precondition`, lower case).
    pub precondition: String,
    /// Random writes done by steady-state preconditioning (pages), and its final WAF.
    pub precondition_pages: u64,
    /// Write amplification at the end of steady-state preconditioning.
    pub precondition_waf: f64,
    /// Whether steady-state preconditioning reached its steady state (WAF settled).
    pub precondition_steady: bool,
    /// The random seed (`sim.seed`).
    pub seed: u64,
    /// The seed preconditioning drew from (`sim.precondition_seed`, by
    /// default `sim.seed`).
    pub precondition_seed: u64,
    /// FNV-1a hash of the resolved configuration's TOML.
    pub config_hash: String,
    /// Simulated seconds after the last request spent finishing GC (sim.drain).
    pub drain_s: f64,
    /// The ssdsim version that produced the report.
    pub version: String,
}

/// The `ftl` section: the FTL, its mapping table and its counters.
#[derive(Clone, Debug, Default, Serialize)]
pub struct FtlReport {
    /// The FTL's name (`--ftl`).
    pub kind: String,
    /// Bytes of the mapping table the FTL keeps in DRAM.
    pub mapping_table_bytes: u64,
    /// Logical pages the FTL exports (the host-visible capacity in pages).
    pub logical_pages: u64,
    /// The FTL's own counters (GC, merges, translation), measured phase only.
    pub stats: FtlStats,
    /// CPU time spent on FTL work (map lookups, victim search, GC bookkeeping), seconds.
    pub cpu_s: f64,
    /// DRAM accesses: map lookups, one per GC candidate examined (its
    /// valid-page count), the FTL's others and the write buffer's.
    pub dram_accesses: u64,
    /// Host page writes that hit a page already in the write buffer.
    pub write_buffer_hits: u64,
    /// Pages the write buffer evicted to the FTL.
    pub write_buffer_evictions: u64,
    /// Host page reads served from the write buffer.
    pub read_buffer_hits: u64,
}

/// The report of one run. `extra` holds sections other crates add (energy_j,
/// power_w, ...), keyed by section name, so ssd-core needs no power model.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Report {
    /// What the host asked for and got.
    pub host: HostReport,
    /// Request latencies, microseconds.
    pub latency_us: LatencyReport,
    /// Flash operations, WAF and wear.
    pub flash: FlashReport,
    /// The FTL and its counters.
    pub ftl: FtlReport,
    /// The host I/O scheduler.
    pub sched: SchedReport,
    /// Busy fractions of channels, dies, CPU and host link.
    pub utilization: UtilizationReport,
    /// Run metadata.
    pub run: RunReport,
    /// Notes about the input: skipped lines, wrapped addresses, ... (name -> count).
    pub notes: BTreeMap<String, u64>,
    /// Sections added by other crates and sources (power, flows, file system, ...), flattened
    /// into the report's top level.
    #[serde(flatten)]
    pub extra: BTreeMap<String, serde_json::Value>,
    /// The resolved configuration, as its serialized form.
    pub config: serde_json::Value,
}

/// Minimum, maximum, mean and (population) standard deviation of per-block erase counts; all
/// zero for an empty slice.
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

/// FNV-1a 64-bit hash of `s`, as 16 lower-case hex digits.
pub fn fnv1a(s: &str) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in s.bytes() {
        h ^= b as u64;
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    format!("{h:016x}")
}

/// Seconds of a duration, as f64.
pub fn secs(d: Dur) -> f64 {
    d.secs_f64()
}

/// Whether a counter is zero (a report field left out when so).
fn is_zero(v: &u64) -> bool {
    *v == 0
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

    proptest::proptest! {
        /// No percentile and no CDF point exceeds the exact maximum, over
        /// random latencies of any spread; they stay in order.
        #[test]
        fn percentiles_never_exceed_the_maximum(
            v in proptest::collection::vec(0u64..u64::MAX / 4, 1..200),
            scale in 0u32..40,
        ) {
            let mut h = LatencyHist::default();
            for x in &v {
                h.record(x >> scale);
            }
            let s = h.summary();
            proptest::prop_assert!(s.p50 <= s.p90 && s.p90 <= s.p99 && s.p99 <= s.p999);
            proptest::prop_assert!(s.p999 <= s.max, "{:?}", s);
            proptest::prop_assert!(h.quantile_ns(1.0) <= h.max_ns());
            proptest::prop_assert!(h.cdf(50).iter().all(|&(us, _)| us <= s.max));
        }
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
