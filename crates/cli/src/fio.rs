//! A subset of fio job files: `[global]` plus one job section, `key=value` lines,
//! `;`/`#` comments. Options that shape the simulated workload are applied;
//! options that only concern the host (ioengine, direct, filename, ...) are
//! accepted and listed; anything else is an error that names the option, the
//! file and the line.

use ssd_core::units::{parse_dur, parse_size};
use ssd_core::workload::{Distribution, RateProcess, RwMode, WorkloadConfig};
use std::path::Path;

#[derive(Debug, thiserror::Error, PartialEq)]
#[error("{file}:{line}: {reason}")]
pub struct FioError {
    pub file: String,
    pub line: usize,
    pub reason: String,
}

/// What a job file sets besides the workload.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct FioJob {
    pub name: String,
    /// `runtime=` (with or without time_based): a simulated time limit.
    pub runtime: Option<ssd_core::Dur>,
    /// Host-only options that were accepted without effect.
    pub ignored: Vec<String>,
}

/// Options accepted without effect on the simulation (they concern the host OS).
const HOST_ONLY: &[&str] = &[
    "ioengine",
    "direct",
    "filename",
    "group_reporting",
    "thread",
    "buffered",
    "time_based",
    "name",
    "description",
    "invalidate",
    "norandommap",
    "randrepeat",
    "stonewall",
    "new_group",
    "ramp_time",
];

/// Options this subset supports (applied to the workload).
pub const SUPPORTED: &[&str] = &[
    "rw",
    "readwrite",
    "bs",
    "blocksize",
    "rwmixread",
    "rwmixwrite",
    "iodepth",
    "rate_iops",
    "rate_process",
    "number_ios",
    "size",
    "offset",
    "random_distribution",
    "randseed",
    "runtime",
    "numjobs",
];

pub fn parse_file(
    path: &Path,
    base: &WorkloadConfig,
) -> Result<(WorkloadConfig, FioJob), FioError> {
    let text = std::fs::read_to_string(path).map_err(|e| FioError {
        file: path.display().to_string(),
        line: 0,
        reason: format!("cannot read: {e}"),
    })?;
    parse_str(&text, &path.display().to_string(), base)
}

pub fn parse_str(
    text: &str,
    file: &str,
    base: &WorkloadConfig,
) -> Result<(WorkloadConfig, FioJob), FioError> {
    let mut w = base.clone();
    let mut job = FioJob::default();
    let mut jobs = 0;
    let mut section = String::new();
    for (i, raw) in text.lines().enumerate() {
        let line = i + 1;
        let e = |reason: String| FioError {
            file: file.to_string(),
            line,
            reason,
        };
        let l = raw.trim();
        if l.is_empty() || l.starts_with(';') || l.starts_with('#') {
            continue;
        }
        if l.starts_with('[') {
            let name = l
                .trim_start_matches('[')
                .trim_end_matches(']')
                .trim()
                .to_string();
            if name != "global" {
                jobs += 1;
                if jobs > 1 {
                    return Err(e(format!("job [{name}]: only one job section is supported (simulate jobs separately or use a trace)")));
                }
                job.name = name.clone();
            }
            section = name;
            continue;
        }
        let _ = &section;
        let (k, v) = match l.split_once('=') {
            Some((k, v)) => (k.trim(), v.trim()),
            None => (l, ""),
        };
        let size = |v: &str| parse_size(v).map_err(|x| e(format!("{k}: {x}")));
        let num = |v: &str| {
            v.parse::<u64>()
                .map_err(|_| e(format!("{k}: expected a whole number, got {v:?}")))
        };
        match k {
            "rw" | "readwrite" => {
                // fio allows "randread:8" style suffixes for sequential skips; not supported.
                w.rw = RwMode::parse(v).map_err(|m| e(format!("{k}: {m}")))?
            }
            "bs" | "blocksize" => {
                if v.contains(',') {
                    return Err(e(format!(
                        "{k}: separate read/write block sizes ({v}) are not supported"
                    )));
                }
                w.bs = size(v)?
            }
            "rwmixread" | "rwmixwrite" => {
                let pct = num(v)?;
                if pct > 100 {
                    return Err(e(format!("{k}: must be 0..=100, got {pct}")));
                }
                let pct = pct as u32;
                w.rwmixread = if k == "rwmixread" { pct } else { 100 - pct };
            }
            "iodepth" => {
                let d = num(v)?;
                let max = ssd_core::workload::MAX_IODEPTH;
                if d == 0 || d > max as u64 {
                    return Err(e(format!("{k}: must be in 1..={max}, got {d}")));
                }
                w.iodepth = d as u32
            }
            "rate_iops" => w.rate_iops = Some(num(v)?),
            "rate_process" => {
                w.rate_process = match v {
                    "linear" => RateProcess::Linear,
                    "poisson" => RateProcess::Poisson,
                    _ => {
                        return Err(e(format!(
                            "rate_process: unknown value {v:?} (linear, poisson)"
                        )))
                    }
                }
            }
            "number_ios" => {
                let n = num(v)?;
                if n == 0 {
                    return Err(e(format!(
                        "{k}: must be at least 1 (0 would simulate nothing)"
                    )));
                }
                w.number_ios = Some(n)
            }
            "size" => {
                if v.ends_with('%') {
                    return Err(e("size: percentages are not supported; give a size".into()));
                }
                w.size = Some(size(v)?)
            }
            "offset" => w.offset = size(v)?,
            "random_distribution" => {
                w.random_distribution =
                    Distribution::parse(v).map_err(|m| e(format!("{k}: {m}")))?
            }
            "randseed" => w.randseed = Some(num(v)?),
            "runtime" => {
                let d = if v.chars().all(|c| c.is_ascii_digit()) {
                    parse_dur(&format!("{v}s"))
                } else {
                    parse_dur(v)
                };
                job.runtime = Some(d.map_err(|x| e(format!("runtime: {x}")))?)
            }
            "numjobs" => {
                if num(v)? != 1 {
                    return Err(e(
                        "numjobs: only numjobs=1 is supported (raise iodepth instead)".into(),
                    ));
                }
            }
            k if HOST_ONLY.contains(&k) => job.ignored.push(k.to_string()),
            other => {
                return Err(e(format!(
                    "unsupported fio option {other:?} (supported: {}; accepted without effect: {})",
                    SUPPORTED.join(", "),
                    HOST_ONLY.join(", ")
                )))
            }
        }
    }
    if w.number_ios.is_some() && base.number_ios == w.number_ios && job.runtime.is_some() {
        // runtime without number_ios: run until the time limit. 2^63 - 1
        // requests is as good as unbounded, and (unlike u64::MAX) the
        // report's TOML echo of the configuration can hold it.
        w.number_ios = Some(i64::MAX as u64);
    }
    Ok((w, job))
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn parses_a_job() {
        let text = "; comment\n[global]\nioengine=libaio\ndirect=1\n[job1]\nrw=randrw\nrwmixread=70\nbs=8k\niodepth=16\nnumber_ios=1000\nrandom_distribution=zipf:1.1\n";
        let (w, j) = parse_str(text, "t.fio", &WorkloadConfig::default()).unwrap();
        assert_eq!(w.rw, RwMode::RandRw);
        assert_eq!(w.rwmixread, 70);
        assert_eq!(w.bs.0, 8192);
        assert_eq!(w.iodepth, 16);
        assert_eq!(w.number_ios, Some(1000));
        assert_eq!(j.ignored, vec!["ioengine", "direct"]);
    }
    #[test]
    fn names_unsupported_option_and_line() {
        let e = parse_str(
            "[j]\nrw=read\nverify=crc32c\n",
            "t.fio",
            &WorkloadConfig::default(),
        )
        .unwrap_err();
        assert_eq!(e.line, 3);
        assert!(
            e.to_string().contains("t.fio:3") && e.to_string().contains("verify"),
            "{e}"
        );
    }
}
