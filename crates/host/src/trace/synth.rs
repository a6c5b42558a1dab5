//! The project's own small trace generator: deterministic synthetic records that
//! every writer can express (reads and writes, sector-aligned, microsecond times),
//! used for the committed test traces under `traces/` and for benchmarks.

use super::{write_records, Op, Record, TraceError, TraceFormat};
use rand::Rng;
use ssd_core::rng::{SimRng, SimRngExt};
use std::io::Write;

/// Parameters of the synthetic trace.
#[derive(Clone, Copy, Debug)]
pub struct SynthSpec {
    /// Records to generate.
    pub requests: u64,
    /// Seed of the generator.
    pub seed: u64,
    /// Share of reads, 0..=1.
    pub read_fraction: f64,
    /// Chance that a request continues where the previous one ended.
    pub sequential: f64,
    /// Address space in bytes (requests stay inside).
    pub span_bytes: u64,
    /// Mean inter-arrival time in ns (exponential).
    pub mean_gap_ns: u64,
    /// Devices (and streams) the records are spread over.
    pub devices: u32,
}

impl Default for SynthSpec {
    fn default() -> Self {
        SynthSpec {
            requests: 200,
            seed: 42,
            read_fraction: 0.6,
            sequential: 0.3,
            span_bytes: 1 << 30,
            mean_gap_ns: 200_000,
            devices: 2,
        }
    }
}

/// Deterministic records: sizes 4-64 KiB in 4 KiB steps (1/8 of them 512 B-1 KiB),
/// times in whole microseconds so every format's resolution but CloudPhysics's
/// (1 s) keeps them exactly.
pub fn records(spec: SynthSpec) -> impl Iterator<Item = Record> {
    let mut rng = SimRng::from_seed_label(spec.seed, "trace-synth");
    let mut t_us = 1_000u64;
    let mut next_off = 0u64;
    (0..spec.requests).map(move |_| {
        let size = if rng.gen_range(0..8) == 0 {
            512 * rng.gen_range(1..=2u64)
        } else {
            4096 * rng.gen_range(1..=16u64)
        };
        let offset = if rng.gen::<f64>() < spec.sequential && next_off + size <= spec.span_bytes {
            next_off
        } else {
            rng.gen_range(0..(spec.span_bytes - size) / 512) * 512
        };
        next_off = offset + size;
        let op = if rng.gen::<f64>() < spec.read_fraction {
            Op::Read
        } else {
            Op::Write
        };
        let u: f64 = rng.gen();
        t_us += (-(1.0 - u).ln() * spec.mean_gap_ns as f64 / 1000.0).round() as u64;
        let device = rng.gen_range(0..spec.devices.max(1));
        Record {
            time_ns: t_us * 1000,
            op,
            offset,
            size,
            device,
            stream: device,
            sync: false,
        }
    })
}

/// Write a synthetic trace in `fmt` to `w`; returns the record count.
pub fn write(w: &mut impl Write, fmt: TraceFormat, spec: SynthSpec) -> Result<u64, TraceError> {
    let recs: Vec<Record> = records(spec).collect();
    write_records(w, fmt, &recs)
}
