//! Trace readers against the committed synthetic traces (traces/) and, when
//! present, the real traces of ../shared/traces.

use ssdsim_host::trace::{self, synth, OutOfRange, ReplayOptions, TraceFormat};
use ssdsim_host::workload::{IoOp, RequestSource, Timing};
use std::path::{Path, PathBuf};

fn repo_traces() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../traces")
}

fn shared() -> Option<PathBuf> {
    let d = trace::shared_traces_dir(env!("CARGO_MANIFEST_DIR"));
    if d.is_none() {
        println!("skipped: ../shared/traces not found (set SSDSIM_TRACES)");
    }
    d
}

/// (file, format, records, read fraction, mean size KiB, span GiB, duration s) from
/// the traces README (rounded as printed there).
const REAL: &[(&str, TraceFormat, u64, f64, f64, f64, f64)] = &[
    (
        "umass_WebSearch1_first10.spc",
        TraceFormat::Spc,
        10,
        1.0,
        13.6,
        16.2,
        0.023,
    ),
    (
        "umass_WebSearch1_first24783.reconstructed.spc",
        TraceFormat::Spc,
        24783,
        1.0,
        15.1,
        16.7,
        60.06,
    ),
    (
        "mqsim_wsrch-small.trace",
        TraceFormat::Mqsim,
        24783,
        1.0,
        15.1,
        16.7,
        60.06,
    ),
    (
        "mqsim_tpcc-small.trace",
        TraceFormat::Mqsim,
        6999,
        0.626,
        8.3,
        216.4,
        0.136,
    ),
    (
        "msnfs_30s_ms.disksim.txt",
        TraceFormat::Disksim,
        149999,
        0.870,
        17.1,
        169.6,
        143.07,
    ),
    (
        "msr_hm_0_sample1000.csv",
        TraceFormat::Msr,
        1000,
        0.508,
        9.5,
        12.6,
        127.23,
    ),
    (
        "msr_cut10k_rw_20_80.105.trace",
        TraceFormat::MsrCut,
        10000,
        0.202,
        5.4,
        13.9,
        242.9,
    ),
    (
        "msr_cut10k_rw_40_60.1370.trace",
        TraceFormat::MsrCut,
        10000,
        0.405,
        4.8,
        13.8,
        85.9,
    ),
    (
        "msr_cut10k_most_thpt_rand_iops.1006.trace",
        TraceFormat::MsrCut,
        10000,
        0.832,
        12.7,
        11.8,
        1.02,
    ),
    (
        "fiu_mail_cheetah-110108-113008.2_first9998.blkparse",
        TraceFormat::Fiu,
        9998,
        0.890,
        4.0,
        277.1,
        23.57,
    ),
    (
        "cloudphysics_vscsi_sample.csv",
        TraceFormat::Cloudphysics,
        113872,
        0.413,
        36.1,
        31.3,
        7200.0,
    ),
    (
        "blkparse_hadoop_java_sdb.txt",
        TraceFormat::Blkparse,
        15524,
        0.005,
        4.6,
        1.2 * 1024.0,
        9.38,
    ),
];

/// Equal up to `rel` or to the README's rounding (3 decimals).
fn close(a: f64, b: f64, rel: f64) -> bool {
    (a - b).abs() <= (rel * b.abs()).max(0.0006)
}

#[test]
fn real_traces_detect_and_match_readme_statistics() {
    let Some(dir) = shared() else { return };
    for &(file, fmt, n, rf, kib, gib, dur) in REAL {
        let p = dir.join(file);
        assert_eq!(trace::detect_file(&p).unwrap(), fmt, "{file}");
        let s = trace::stats(&p, None).unwrap();
        println!("{file}: {s:?}");
        assert_eq!(s.requests, n, "{file}");
        assert!(
            (s.read_fraction - rf).abs() < 0.0015,
            "{file}: reads {}",
            s.read_fraction
        );
        assert!(
            close(s.mean_size_bytes / 1024.0, kib, 0.01),
            "{file}: size {}",
            s.mean_size_bytes
        );
        // spans are printed with one decimal (GiB, or TiB for the hadoop capture)
        let unit = if gib > 1024.0 { 1024.0 } else { 1.0 };
        let span_gib = s.span_bytes as f64 / (1u64 << 30) as f64;
        assert!(
            (span_gib - gib).abs() <= 0.05 * unit,
            "{file}: span {}",
            s.span_bytes
        );
        assert!(
            close(s.duration_s, dur, 0.01),
            "{file}: duration {}",
            s.duration_s
        );
    }
}

#[test]
fn real_blkparse_d_events_match_readme() {
    let Some(dir) = shared() else { return };
    let opts = ReplayOptions {
        blkparse_action: "D".into(),
        ..Default::default()
    };
    for (file, n, rf) in [
        ("blkparse_hadoop_java_sdb.txt", 170, 0.459),
        ("blkparse_ycsb_ext4.txt", 9887, 0.914),
    ] {
        let mut src = trace::open_trace(&dir.join(file), None, &opts).unwrap();
        let mut count = 0u64;
        let mut reads = 0u64;
        while let Some(r) = src.next_request() {
            let r = r.unwrap();
            count += 1;
            reads += (r.op == IoOp::Read) as u64;
        }
        assert_eq!(count, n, "{file}");
        assert!((reads as f64 / n as f64 - rf).abs() < 0.001, "{file}");
    }
}

/// The committed small traces under traces/ are exactly what the generator
/// writes (regenerate with SSDSIM_BLESS=1), and each replays through open_trace
/// with its format detected.
#[test]
fn committed_synthetic_traces() {
    let spec = synth::SynthSpec::default();
    for fmt in TraceFormat::ALL {
        let p = repo_traces().join(format!("synth.{fmt}"));
        let mut want = Vec::new();
        synth::write(&mut want, fmt, spec).unwrap();
        if std::env::var_os("SSDSIM_BLESS").is_some() {
            std::fs::write(&p, &want).unwrap();
        }
        let have = std::fs::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
        assert!(
            have == want,
            "{} is stale (SSDSIM_BLESS=1 regenerates it)",
            p.display()
        );
        let opts = ReplayOptions {
            out_of_range: OutOfRange::Reject,
            ..ReplayOptions::default().with_capacity(1 << 30)
        };
        let mut src = trace::open_trace(&p, None, &opts).unwrap();
        assert_eq!(src.format(), fmt);
        let mut n = 0;
        let mut last = 0;
        while let Some(r) = src.next_request() {
            let r = r.unwrap();
            assert!(r.arrival.0 >= last);
            last = r.arrival.0;
            n += 1;
        }
        assert_eq!(n, spec.requests, "{fmt}");
        assert!(matches!(src.timing(), Timing::OpenLoop));
    }
}
