//! Trace statistics: the columns of Park et al.'s table 2 and a size histogram.

use super::{
    detect_file, label, open_input, Input, Op, ParseOptions, TraceError, TraceFormat, TraceReader,
};
use serde::Serialize;
use std::io::BufRead;
use std::path::Path;

/// One power-of-two size bucket: requests with `max_bytes / 2 < size <= max_bytes`
/// (the first bucket, 512, holds everything up to 512 bytes).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct SizeBucket {
    /// Upper bound of the bucket, bytes.
    pub max_bytes: u64,
    /// Requests in the bucket.
    pub count: u64,
}

/// Summary of a trace (every record, all devices pooled).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TraceStats {
    /// Requests (reads, writes, trims and flushes).
    pub requests: u64,
    /// Read requests.
    pub reads: u64,
    /// Write requests.
    pub writes: u64,
    /// reads / requests.
    pub read_fraction: f64,
    /// Mean request size, bytes.
    pub mean_size_bytes: f64,
    /// Non-empty power-of-two buckets in increasing size.
    pub size_histogram: Vec<SizeBucket>,
    /// Share of requests (after the first) not starting where the previous one ended.
    pub randomness: f64,
    /// duration_s / (requests - 1).
    pub mean_interarrival_s: f64,
    /// The longest gap between consecutive arrivals: an idle period, or a
    /// corrupt timestamp (a replay can cap gaps with `replay.max_gap`).
    pub max_interarrival_s: f64,
    /// max(offset + size) - min(offset), bytes.
    pub span_bytes: u64,
    /// Last arrival - first arrival (timestamps clamped to be non-decreasing).
    pub duration_s: f64,
}

/// Statistics of a trace file (format detected when `format` is None).
pub fn stats(path: &Path, format: Option<TraceFormat>) -> Result<TraceStats, TraceError> {
    stats_with(path, format, &ParseOptions::default())
}

/// [`stats`] with format options (blkparse action, MSR stream choice).
pub fn stats_with(
    path: &Path,
    format: Option<TraceFormat>,
    po: &ParseOptions,
) -> Result<TraceStats, TraceError> {
    let fmt = match format {
        Some(f) => f,
        None => detect_file(path)?,
    };
    let l = label(path);
    let po = *po;
    match open_input(path)? {
        Input::Plain(r) => stats_reader(TraceReader::new(r, fmt, &l, po)),
        Input::Gzip(r) => stats_reader(TraceReader::new(r, fmt, &l, po)),
    }
}

/// Statistics of the records a reader yields.
pub fn stats_reader<R: BufRead>(mut rdr: TraceReader<R>) -> Result<TraceStats, TraceError> {
    let mut n = 0u64;
    let (mut reads, mut writes) = (0u64, 0u64);
    let mut bytes: u128 = 0;
    let mut hist = [0u64; 64];
    let mut random = 0u64;
    let mut prev_end: Option<u64> = None;
    let (mut lo, mut hi) = (u64::MAX, 0u64);
    let (mut first, mut last) = (None, 0u64);
    let mut max_gap = 0u64;
    while let Some(r) = rdr.next_record() {
        let r = r?;
        n += 1;
        match r.op {
            Op::Read => reads += 1,
            Op::Write => writes += 1,
            _ => {}
        }
        bytes += r.size as u128;
        let b = if r.size <= 512 {
            9
        } else {
            64 - (r.size - 1).leading_zeros() as usize
        };
        hist[b.min(63)] += 1;
        if let Some(e) = prev_end {
            if e != r.offset {
                random += 1;
            }
        }
        prev_end = Some(r.offset + r.size);
        lo = lo.min(r.offset);
        hi = hi.max(r.offset + r.size);
        let t = r.time_ns.max(last);
        if first.is_some() {
            max_gap = max_gap.max(t - last);
        }
        first.get_or_insert(t);
        last = t;
    }
    let duration_ns = first.map_or(0, |f| last - f);
    let duration_s = duration_ns as f64 * 1e-9;
    let frac = |a: u64, b: u64| if b == 0 { 0.0 } else { a as f64 / b as f64 };
    Ok(TraceStats {
        requests: n,
        reads,
        writes,
        read_fraction: frac(reads, n),
        mean_size_bytes: if n == 0 { 0.0 } else { bytes as f64 / n as f64 },
        size_histogram: hist
            .iter()
            .enumerate()
            .filter(|(_, &c)| c > 0)
            .map(|(i, &c)| SizeBucket {
                max_bytes: 1u64 << i,
                count: c,
            })
            .collect(),
        randomness: frac(random, n.saturating_sub(1)),
        mean_interarrival_s: if n > 1 {
            duration_s / (n - 1) as f64
        } else {
            0.0
        },
        max_interarrival_s: max_gap as f64 * 1e-9,
        span_bytes: if n == 0 { 0 } else { hi - lo },
        duration_s,
    })
}
