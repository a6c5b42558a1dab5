//! A subset of fio job files: `[global]` sections and job sections, `key=value` lines,
//! `;`/`#` comments. Options that shape the simulated workload are applied;
//! options that only concern the host (ioengine, filename, ...) are accepted
//! and listed; anything else is an error that names the option, the file and
//! the line. As in fio, a job is buffered unless it says `direct=1`: it then
//! runs through the page cache (`[page_cache]`) with `sync`, `fsync` and
//! `end_fsync` as fio has them.

use ssd_core::units::{clip, parse_dur};
use ssdsim_host::workload::{
    BlockSizes, BsDraw, Distribution, RateProcess, RwMode, WorkloadConfig,
};
use std::path::Path;

mod dp;
mod options;
pub use options::{HOST_ONLY, SUPPORTED};
use options::{NO_BLOCK_IO, REFUSED};

/// An error in a fio job file: where and why.
#[derive(Debug, thiserror::Error, PartialEq)]
#[error("{file}:{line}: {reason}")]
pub struct FioError {
    /// The job file.
    pub file: String,
    /// The line (1-based; 0 when the file could not be read).
    pub line: usize,
    /// What is wrong.
    pub reason: String,
}

/// What a job file sets besides the workload.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct FioJob {
    /// The job's section name (`[name]`).
    pub name: String,
    /// `runtime=` (`timeout=`): the job ends after this much time once the
    /// ramp is over, or when its `size=` is done, whichever comes first
    /// (with `time_based`, only at this time).
    pub runtime: Option<ssd_core::Dur>,
    /// `ramp_time=`: I/O before this instant is run but left out of every
    /// statistic (`sim.ramp_time`).
    pub ramp_time: Option<ssd_core::Dur>,
    /// `time_based`: run until `runtime`, going over `size` again as often
    /// as it takes.
    pub time_based: bool,
    /// Host-only options that were accepted without effect.
    pub ignored: Vec<String>,
    /// `numjobs=`: clones of this job running at once (and its line).
    pub numjobs: u32,
    /// The line of `numjobs=` (0 if absent).
    pub numjobs_line: usize,
    /// `stonewall`: the job waits for every job before it to finish (and
    /// starts a new reporting group).
    pub stonewall: bool,
    /// `new_group`: the job starts a new reporting group (without waiting).
    pub new_group: bool,
    /// `startdelay=`: the job starts this long after its group does.
    pub start_delay: Option<ssd_core::Dur>,
    /// `group_reporting`: fio's output sums the job with the jobs before it
    /// in its group, as one entry.
    pub group_reporting: bool,
    /// The line of the job's section header (0 for a file of globals only).
    pub line: usize,
    /// `offset=N%`: the span starts at this percentage of the device.
    pub offset_percent: Option<u64>,
    /// `size=N%`: the span is this percentage of the device.
    pub size_percent: Option<u64>,
    /// `offset_increment=`: clone `k` of the job (`numjobs`) starts this
    /// many bytes further.
    pub offset_increment: u64,
    /// `offset_increment=N%`: the increment as a percentage of the device.
    pub offset_increment_percent: Option<u64>,
    /// `wait_for=`: the job starts once every job of this name has
    /// finished (fio's `waitee_running`).
    pub wait_for: Option<String>,
    /// Sizes given in zones (`offset=524z`, `size=8z`; fio's `_nz`
    /// options), resolved with the zone size ([`FioJob::resolve_zones`]):
    /// offset, size, io_size and offset_increment, in that order.
    pub in_zones: [Option<u64>; 4],
}

impl FioJob {
    /// fio's `zbd_recalc_options_with_zone_granularity`: sizes given in
    /// zones become bytes, with the device's zone size on a zoned drive
    /// (`device_zone`), else the job's `zonesize`; then a `zonemode=zbd`
    /// job's range is whole zones, as `zbd_zone_align_file_sizes` makes it
    /// (the offset rounded up and the end down; a reading job's end only),
    /// each rounding said in the notes returned (fio's `log_info`). Call it
    /// before [`FioJob::resolve_end`], with the device's logical bytes.
    pub fn resolve_zones(
        &mut self,
        w: &mut WorkloadConfig,
        device_zone: Option<u64>,
        logical_bytes: u64,
    ) -> Result<Vec<String>, String> {
        self.zones_to_bytes(w, device_zone)?;
        let Some(z) = &w.zbd else {
            return Ok(Vec::new());
        };
        let zone = match device_zone {
            Some(d) => d,
            None if z.zonesize.0 > 0 => z.zonesize.0,
            // The run refuses it with the reason (`workload.zbd`).
            None => return Ok(Vec::new()),
        };
        let mut notes = Vec::new();
        // Percentages are the device's share: resolve them first.
        let mut probe = w.clone();
        self.resolve_clone(&mut probe, logical_bytes, 0);
        let (off, size) = (probe.offset.0, probe.span(logical_bytes));
        if off >= logical_bytes {
            return Ok(notes);
        }
        let end = off + size;
        let writes = !matches!(w.rw, RwMode::Read | RwMode::RandRead);
        let new_off = if writes {
            off.div_ceil(zone) * zone
        } else {
            off
        };
        let new_end = end / zone * zone;
        if new_end <= new_off {
            return Err(format!(
                "zonemode=zbd: io_size must be at least one zone ({zone} bytes) from offset {off}"
            ));
        }
        if new_off != off {
            notes.push(format!(
                "zonemode=zbd: rounded up offset from {off} to {new_off}"
            ));
            w.offset = ssd_core::Size(new_off);
            self.offset_percent = None;
        }
        if new_end != end || new_off != off {
            notes.push(format!(
                "zonemode=zbd: rounded down io_size from {size} to {}",
                new_end - new_off
            ));
            w.size = Some(ssd_core::Size(new_end - new_off));
            self.size_percent = None;
        }
        Ok(notes)
    }

    /// Sizes given in zones, in bytes.
    fn zones_to_bytes(
        &mut self,
        w: &mut WorkloadConfig,
        device_zone: Option<u64>,
    ) -> Result<(), String> {
        if self.in_zones.iter().all(Option::is_none) {
            return Ok(());
        }
        let own = w.zbd.as_ref().map_or(w.zonesize.0, |z| z.zonesize.0);
        let zone = match (&w.zbd, device_zone) {
            (Some(_), Some(d)) => d,
            _ if own > 0 => own,
            _ => {
                return Err(
                    "a size in zones (a `z` suffix) needs the zone size: zonemode=zbd on a                      zoned drive (--ftl zns), or zonesize"
                        .into(),
                )
            }
        };
        let [off, size, io, inc] = self.in_zones;
        let bytes = |n: u64| n.saturating_mul(zone);
        if let Some(n) = off {
            w.offset = ssd_core::Size(bytes(n));
        }
        if let Some(n) = size {
            w.size = Some(ssd_core::Size(bytes(n)));
        }
        if let Some(n) = io {
            w.io_size = Some(ssd_core::Size(bytes(n)));
        }
        if let Some(n) = inc {
            self.offset_increment = bytes(n);
        }
        Ok(())
    }

    /// The simulated time at which the job ends, if it has a runtime: fio's
    /// ramp is lead-in time, so the runtime counts from its end.
    pub fn time_limit(&self) -> Option<ssd_core::Dur> {
        self.runtime
            .map(|r| r + self.ramp_time.unwrap_or(ssd_core::Dur::ZERO))
    }

    /// When the job ends, as fio ends it (`backend.c`, `keep_running` and
    /// `io_bytes_exceeded`): with `time_based`, only at the runtime (the
    /// job goes over its size as often as it takes); otherwise once `size`
    /// bytes are done (the whole device from `offset` when no size is
    /// given), or after `number_ios` requests if that comes first, or at
    /// the runtime. Call it once the workload flags given beside the job
    /// file are applied to `w`, with the device's logical capacity.
    pub fn resolve_end(&self, w: &mut WorkloadConfig, logical_bytes: u64) {
        self.resolve_clone(w, logical_bytes, 0)
    }

    /// [`FioJob::resolve_end`] for clone `k` of the job (`numjobs`), which
    /// also places the span as fio's `get_start_offset` and `setup_files`
    /// do: a percentage offset (plus `k` increments) is rounded up to the
    /// smallest block size, a percentage size is of the whole device, at
    /// most what lies past the offset, rounded down to the smallest block
    /// size.
    pub fn resolve_clone(&self, w: &mut WorkloadConfig, logical_bytes: u64, k: u32) {
        let min_bs = w.block_sizes.as_ref().map_or(w.bs.0, |b| b.min()).max(1);
        let increment = match self.offset_increment_percent {
            Some(p) => (logical_bytes as u128 * p as u128 / 100) as u64,
            None => self.offset_increment,
        };
        let mut align = self.offset_increment_percent.is_some();
        let base = match self.offset_percent {
            Some(p) => {
                align = true;
                (logical_bytes as u128 * p as u128 / 100) as u64
            }
            None => w.offset.0,
        };
        let mut offset = base.saturating_add(increment.saturating_mul(k as u64));
        if align {
            offset = offset.div_ceil(min_bs).saturating_mul(min_bs);
        }
        w.offset = ssd_core::Size(offset);
        if let Some(p) = self.size_percent {
            let left = logical_bytes.saturating_sub(offset);
            let s = ((logical_bytes as u128 * p as u128 / 100) as u64).min(left);
            w.size = Some(ssd_core::Size(s - s % min_bs));
        }
        if self.time_based {
            // 2^63 - 1 requests is as good as unbounded, and (unlike
            // u64::MAX) the report's TOML echo of the configuration can
            // hold it.
            w.number_ios = Some(i64::MAX as u64);
            w.io_size = None;
            w.time_based = true;
            return;
        }
        // fio's job does `size` bytes (or `io_size`), `loops` times, unless
        // `number_ios` comes first; the generator counts the bytes from the
        // start (`io_issue_bytes`) and the requests from the ramp's end.
        // Without a count the generator runs `loops` passes over the span
        // (a pass that runs out of offsets ends the job, as fio's
        // `keep_running` has it without io_size); with one, the size bounds
        // it as bytes.
        if w.number_ios.is_some() && w.io_size.is_none() {
            w.io_size = Some(ssd_core::Size(w.span(logical_bytes)));
        }
    }
}

/// Parse the job file at `path` of one job, over `base` (see [`parse_str`]); an error names the
/// file, the line and the option.
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

/// A count of zones as fio reads one (`str_size_cb`, `str_offset_cb`: a
/// number with a `z` suffix).
fn zone_count(v: &str) -> Option<u64> {
    v.trim()
        .strip_suffix(['z', 'Z'])
        .and_then(|n| n.trim().parse::<u64>().ok())
}

/// A size as fio reads it (`parse.c`, `__get_mult_bytes`): the suffix is
/// case-insensitive and an optional trailing `b` changes nothing, so `4k`,
/// `4kb`, `4K` and `4KB` are all 4 * `kb_base` (1024 unless `kb_base=1000`);
/// the IEC suffixes `kib`, `mib`, `gib`, `tib`, `pib` take the other base
/// (1000 by default, as fio's compatibility mode has it). No suffix (or `b`)
/// is bytes.
pub fn fio_size(text: &str, kb_base: u64) -> Result<ssd_core::Size, String> {
    // Kept hand-written because this is fio's own grammar: `kb_base` swaps
    // which suffixes are 1000- and 1024-based (`4k` is 4096 by default,
    // `4kib` 4000), which no size crate (parse-size, bytesize) implements
    // (issue 29).
    let t = text.trim();
    let (n, suffix) = ssd_core::units::Decimal::split(t, false).map_err(|why| match why {
        "expected a number" => format!("{:?}: expected a size such as 4k or 1g", clip(text)),
        other => format!("{:?}: {other}", clip(text)),
    })?;
    let suffix = suffix.trim().to_ascii_lowercase();
    let other = if kb_base == 1000 { 1024 } else { 1000 };
    let (pow, mult) = match suffix.as_str() {
        "" | "b" => (0, 1),
        "k" | "kb" => (1, kb_base),
        "m" | "mb" => (2, kb_base),
        "g" | "gb" => (3, kb_base),
        "t" | "tb" => (4, kb_base),
        "p" | "pb" => (5, kb_base),
        "kib" => (1, other),
        "mib" => (2, other),
        "gib" => (3, other),
        "tib" => (4, other),
        "pib" => (5, other),
        u => {
            return Err(format!(
                "{:?}: unknown size suffix {:?} (k, m, g, t, p with an optional b; kib, mib, gib, tib, pib)",
                clip(text),
                clip(u)
            ))
        }
    };
    // Exact: `1.1k` with kb_base=1000 is 1100 bytes (in f64 it is not whole).
    let (v, rem, _) = n.scaled(mult.pow(pow), 1);
    if rem != 0 {
        return Err(format!("{:?}: not a whole number of bytes", clip(text)));
    }
    if v > i64::MAX as u128 {
        return Err(format!(
            "{:?}: out of range: at most {} bytes",
            clip(text),
            i64::MAX
        ));
    }
    Ok(ssd_core::Size(v as u64))
}

/// One `key=value` line of a job file.
struct Opt<'a> {
    line: usize,
    key: &'a str,
    value: std::borrow::Cow<'a, str>,
    /// An environment variable the value names (`${NAME}`) that is not
    /// set: fio reads it as empty.
    unset: Option<String>,
}

/// Parse a job file of one job (with `numjobs=1`); a file of several is an
/// error at its second job ([`parse_jobs_str`] reads those).
pub fn parse_str(
    text: &str,
    file: &str,
    base: &WorkloadConfig,
) -> Result<(WorkloadConfig, FioJob), FioError> {
    let mut jobs = parse_jobs_str(text, file, base)?;
    if jobs.len() > 1 || jobs[0].1.numjobs > 1 {
        let line = jobs.get(1).map_or(jobs[0].1.numjobs_line, |j| j.1.line);
        return Err(FioError {
            file: file.to_string(),
            line,
            reason: "one job is expected here; `ssdsim run --fio` runs several at once".into(),
        });
    }
    Ok(jobs.remove(0))
}

/// Parse a job file into its jobs, in file order. As in fio, a `[global]`
/// section sets defaults for the jobs that follow it, not for a job before
/// it (whose options it is still checked against); `kb_base=` applies to
/// every size of the job wherever it is given. A file of globals only is
/// one job.
pub fn parse_jobs_str(
    text: &str,
    file: &str,
    base: &WorkloadConfig,
) -> Result<Vec<(WorkloadConfig, FioJob)>, FioError> {
    // Sections in file order: (name, line, options); lines before any
    // section are global.
    let mut sections: Vec<(String, usize, Vec<Opt>)> = vec![("global".into(), 0, vec![])];
    for (i, raw) in text.lines().enumerate() {
        let line = i + 1;
        // fio's `strip_blank_end` (parse.c): a `;` or `#` anywhere starts a
        // comment that runs to the end of the line.
        let l = raw.split([';', '#']).next().unwrap_or("").trim();
        if l.is_empty() {
            continue;
        }
        if l.starts_with('[') {
            let name = l
                .trim_start_matches('[')
                .trim_end_matches(']')
                .trim()
                .to_string();
            sections.push((name, line, vec![]));
            continue;
        }
        let (key, value) = match l.split_once('=') {
            Some((k, v)) => (k.trim(), v.trim()),
            None => (l, ""),
        };
        let (value, unset) = expand_env(value);
        sections.last_mut().expect("starts with one").2.push(Opt {
            line,
            key,
            value,
            unset,
        });
    }
    let mut globals: Vec<&Opt> = Vec::new();
    // The globals after the last job (they apply to no job).
    let mut trailing: Vec<&Opt> = Vec::new();
    let mut jobs = Vec::new();
    for (name, line, opts) in &sections {
        if name == "global" {
            globals.extend(opts.iter());
            trailing.extend(opts.iter());
            continue;
        }
        trailing.clear();
        let all: Vec<&Opt> = globals.iter().copied().chain(opts.iter()).collect();
        let job = FioJob {
            name: name.clone(),
            line: *line,
            ..FioJob::default()
        };
        let (w, mut job) = apply(&all, file, base, job)?;
        job.numjobs = job.numjobs.max(1);
        jobs.push((w, job));
    }
    // A [global] after the last job changes no job, but its options must
    // still be ones this subset knows (and a file of globals is one job).
    if jobs.is_empty() {
        let (w, mut job) = apply(&globals, file, base, FioJob::default())?;
        job.numjobs = job.numjobs.max(1);
        jobs.push((w, job));
    } else {
        apply(&trailing, file, base, FioJob::default())?;
    }
    Ok(jobs)
}

/// Read and parse a job file of one or several jobs.
pub fn parse_jobs_file(
    path: &Path,
    base: &WorkloadConfig,
) -> Result<Vec<(WorkloadConfig, FioJob)>, FioError> {
    let text = std::fs::read_to_string(path).map_err(|e| FioError {
        file: path.display().to_string(),
        line: 0,
        reason: format!("cannot read: {e}"),
    })?;
    parse_jobs_str(&text, &path.display().to_string(), base)
}

/// Apply options in order to `base`.
fn apply(
    opts: &[&Opt],
    file: &str,
    base: &WorkloadConfig,
    mut job: FioJob,
) -> Result<(WorkloadConfig, FioJob), FioError> {
    let mut w = base.clone();
    // fio's defaults for what the job leaves unset (fio's options.c), where
    // ssdsim's `[workload]` has others: buffered I/O (`direct=0`, through
    // the page cache), `rw=read` and `iodepth=1`.
    w.direct = false;
    w.rw = RwMode::Read;
    w.iodepth = 1;
    // fio keeps a random map unless `norandommap` is given, and runs a
    // mixed job by its direction cycle with a position per direction.
    w.norandommap = false;
    w.rwmix_cycle = true;
    // `zonemode` as given (fio's ZONE_MODE_NOT_SPECIFIED: None).
    let mut zonemode: Option<(&str, usize)> = None;
    // zonemode=zbd's options as given, and the line of the first.
    let mut zbd = ssdsim_host::workload::ZbdOptions::default();
    let mut zbd_given: Option<usize> = None;
    // The data placement options (`dp.rs`).
    let mut dp = dp::DpOpts::default();
    // Sizes by direction (read, write, trim) as the options give them, in
    // order; `bs` alone leaves them all the same.
    let mut dirs: [BsDraw; 3] = std::array::from_fn(|_| BsDraw::Fixed(w.bs.0));
    let (mut verify_method, mut do_verify) = (false, true);
    // `rate=` (bytes a second) and its line.
    let mut rate_bytes: Option<(u64, usize)> = None;
    // The job's own end conditions (size, number_ios, runtime) decide when
    // it ends, as in fio; the base's request count does not.
    w.number_ios = None;
    let err = |line: usize, reason: String| FioError {
        file: file.to_string(),
        line,
        reason,
    };
    let mut kb_base = 1024;
    for o in opts.iter().filter(|o| o.key == "kb_base") {
        kb_base = match &*o.value {
            "1024" => 1024,
            "1000" => 1000,
            v => {
                return Err(err(
                    o.line,
                    format!("kb_base: must be 1024 or 1000, got {:?}", clip(v)),
                ))
            }
        };
    }
    for o in opts {
        let (line, k, v) = (o.line, o.key, &*o.value);
        if let Some(name) = o.unset.as_ref().filter(|_| !HOST_ONLY.contains(&k)) {
            return Err(err(
                line,
                format!(
                    "{k}: ${{{}}} is not set in the environment (fio reads it as empty)",
                    clip(name)
                ),
            ));
        }
        let e = |reason: String| err(line, reason);
        let size = |v: &str| fio_size(v, kb_base).map_err(|x| e(format!("{k}: {x}")));
        // The configuration is echoed as TOML, whose integers are signed 64-bit.
        let num = |v: &str| {
            v.parse::<u64>()
                .ok()
                .filter(|&n| n <= i64::MAX as u64)
                .ok_or_else(|| {
                    e(format!(
                        "{}: expected a whole number from 0 to {}, got {:?}",
                        clip(k),
                        i64::MAX,
                        clip(v)
                    ))
                })
        };
        match k {
            "rw" | "readwrite" => {
                // fio's `str_rw_cb`: `rw=randread:8` takes a new random
                // offset every 8 requests; `rw=write:4k` skips 4k after
                // each sequential request.
                let (mode, suffix) = match v.split_once(':') {
                    Some((m, x)) => (m.trim(), Some(x.trim())),
                    None => (v, None),
                };
                w.rw = RwMode::parse(mode).map_err(|m| e(format!("{k}: {m}")))?;
                w.ddir_seq_nr = 1;
                w.ddir_seq_add = ssd_core::Size(0);
                w.ddir_seq_back = false;
                if let Some(x) = suffix {
                    if w.rw.is_random() {
                        let n = num(x)?;
                        if n == 0 || n > u32::MAX as u64 {
                            return Err(e(format!(
                                "{k}: the suffix of a random mode is the requests between new \
                                 offsets, 1..={}, got {n}",
                                u32::MAX
                            )));
                        }
                        w.ddir_seq_nr = n as u32;
                    } else {
                        // A negative skip reads backwards.
                        let (back, x) = match x.strip_prefix('-') {
                            Some(m) => (true, m),
                            None => (false, x),
                        };
                        w.ddir_seq_back = back;
                        let b = size(x)?;
                        if !b.0.is_multiple_of(512) {
                            return Err(e(format!(
                                "{k}: the skip must be a multiple of 512 bytes, got {}",
                                b.0
                            )));
                        }
                        w.ddir_seq_add = b;
                    }
                }
            }
            "bs" | "blocksize" | "bsrange" | "blocksize_range" | "bssplit" => {
                let parts = by_direction(v);
                if parts.iter().all(Option::is_none) {
                    if k == "bssplit" {
                        // fio takes an empty split and keeps its sizes.
                        job.ignored.push(format!("{k} (empty, line {line})"));
                        continue;
                    }
                    // fio: "failed parsing bs=" (an empty direction keeps
                    // its default, `bs=,8k`; no direction at all is none).
                    return Err(e(format!("{k}: no size given ({k}={:?})", clip(v))));
                }
                for (d, part) in parts.into_iter().enumerate() {
                    let Some(part) = part else { continue };
                    let draw = match k {
                        "bs" | "blocksize" => BsDraw::Fixed(size(part)?.0),
                        "bsrange" | "blocksize_range" => {
                            let (a, b) = part.split_once('-').ok_or_else(|| {
                                e(format!("{k}: expected MIN-MAX, got {:?}", clip(part)))
                            })?;
                            let (a, b) = (size(a)?.0, size(b)?.0);
                            if a == b {
                                BsDraw::Fixed(a)
                            } else {
                                BsDraw::Range {
                                    min: a.min(b),
                                    max: a.max(b),
                                }
                            }
                        }
                        _ => bssplit(part, kb_base).map_err(|m| e(format!("{k}: {m}")))?,
                    };
                    draw.check().map_err(|m| e(format!("{k}: {m}")))?;
                    dirs[d] = draw;
                }
            }
            "thinktime" => {
                // fio's `is_time` option: a bare number is microseconds.
                let t = if v.chars().all(|c| c.is_ascii_digit()) {
                    format!("{v}us")
                } else {
                    v.to_string()
                };
                w.thinktime = fio_dur(&t).map_err(|x| e(format!("{k}: {x}")))?;
            }
            "thinktime_blocks" => {
                let n = num(v)?;
                if n == 0 {
                    return Err(e(format!("{k}: must be at least 1")));
                }
                w.thinktime_blocks = n
            }
            "thinktime_blocks_type" => {
                w.thinktime_on_issue = match v {
                    "complete" => false,
                    "issue" => true,
                    _ => {
                        return Err(e(format!(
                            "{k}: expected complete or issue, got {:?}",
                            clip(v)
                        )))
                    }
                }
            }
            // Spinning is part of the pause (fio sleeps `thinktime` minus
            // the spin): the drive sees the same gap.
            "thinktime_spin" => job.ignored.push(k.to_string()),
            // fio's `fill_device`: on a block device the size is what lies
            // past the offset (`setup_files`), ssdsim's default.
            "fill_device" | "fill_fs" => {
                if fio_bool(v).map_err(|m| e(format!("{k}: {m}")))? {
                    w.size = None;
                }
            }
            "nrfiles" => {
                let n = num(v)?;
                if n == 0 || n > 1 << 20 {
                    return Err(e(format!("{k}: must be in 1..=1048576")));
                }
                w.nrfiles = n as u32
            }
            "filesize" => {
                if v.contains('-') || v.contains(':') {
                    return Err(e(format!(
                        "{k}: a range ({}) draws each file's size at random; give one size",
                        clip(v)
                    )));
                }
                let n = size(v)?;
                if n.0 == 0 || !n.0.is_multiple_of(512) {
                    return Err(e(format!(
                        "{k}: must be a positive multiple of 512 bytes, got {}",
                        n.0
                    )));
                }
                w.filesize = Some(n)
            }
            "file_service_type" => {
                w.file_service_type = ssdsim_host::workload::FileService::parse(v)
                    .map_err(|m| e(format!("{k}: {m}")))?
            }
            "norandommap" => w.norandommap = fio_bool(v).map_err(|m| e(format!("{k}: {m}")))?,
            "io_size" | "io_limit" if zone_count(v).is_some() => {
                job.in_zones[2] = zone_count(v);
            }
            "io_size" | "io_limit" => {
                job.in_zones[2] = None;
                if v.ends_with('%') {
                    return Err(e(format!(
                        "{k}: a percentage of size is not supported; give a size"
                    )));
                }
                let n = size(v)?;
                if n.0 == 0 {
                    return Err(e(format!("{k}: must be positive")));
                }
                w.io_size = Some(n)
            }
            "loops" => {
                let n = num(v)?;
                if n == 0 || n > u32::MAX as u64 {
                    return Err(e(format!("{k}: must be in 1..={}", u32::MAX)));
                }
                w.loops = n as u32
            }
            "offset_increment" if zone_count(v).is_some() => {
                job.in_zones[3] = zone_count(v);
                job.offset_increment_percent = None;
            }
            "offset_increment" => {
                job.in_zones[3] = None;
                if let Some(p) = v.strip_suffix('%') {
                    job.offset_increment_percent =
                        Some(percent(p).map_err(|m| e(format!("{k}: {m}")))?);
                    job.offset_increment = 0;
                } else {
                    job.offset_increment = size(v)?.0;
                    job.offset_increment_percent = None;
                }
            }
            "percentage_random" | "percentage_sequential" => {
                if v.contains(',') {
                    return Err(e(format!(
                        "{k}: separate read/write/trim percentages ({v}) are not supported"
                    )));
                }
                let pct = num(v)?;
                if pct > 100 {
                    return Err(e(format!("{k}: must be 0..=100, got {pct}")));
                }
                let pct = pct as u32;
                w.percentage_random = if k == "percentage_random" {
                    pct
                } else {
                    100 - pct
                };
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
                let max = ssdsim_host::workload::MAX_IODEPTH;
                if d == 0 || d > max as u64 {
                    return Err(e(format!("{k}: must be in 1..={max}, got {d}")));
                }
                w.iodepth = d as u32
            }
            "rate_iops" => {
                let n = num(v)?;
                if n == 0 {
                    return Err(e(format!("{k}: must be positive")));
                }
                w.rate_iops = Some(n)
            }
            "rate_process" => {
                w.rate_process = match v {
                    "linear" => RateProcess::Linear,
                    "poisson" => RateProcess::Poisson,
                    _ => {
                        return Err(e(format!(
                            "rate_process: unknown value {:?} (linear, poisson)",
                            clip(v)
                        )))
                    }
                }
            }
            // fio's default 0 is no count.
            "number_ios" => w.number_ios = Some(num(v)?).filter(|&n| n > 0),
            "size" if zone_count(v).is_some() => {
                job.in_zones[1] = zone_count(v);
                job.size_percent = None;
            }
            "size" => {
                job.in_zones[1] = None;
                if let Some(p) = v.strip_suffix('%') {
                    job.size_percent = Some(percent(p).map_err(|m| e(format!("{k}: {m}")))?);
                    w.size = None;
                    continue;
                }
                job.size_percent = None;
                let n = size(v)?;
                if n.0 == 0 {
                    return Err(e("size: must be positive".into()));
                }
                w.size = Some(n)
            }
            "offset" if zone_count(v).is_some() => {
                job.in_zones[0] = zone_count(v);
                job.offset_percent = None;
            }
            "offset" => {
                job.in_zones[0] = None;
                if let Some(p) = v.strip_suffix('%') {
                    job.offset_percent = Some(percent(p).map_err(|m| e(format!("{k}: {m}")))?);
                    continue;
                }
                job.offset_percent = None;
                let n = size(v)?;
                if !n.0.is_multiple_of(512) {
                    return Err(e(format!(
                        "offset: must be a multiple of 512 bytes, got {}",
                        n.0
                    )));
                }
                w.offset = n
            }
            "random_distribution" => {
                w.random_distribution =
                    Distribution::parse(v).map_err(|m| e(format!("{k}: {m}")))?
            }
            "randseed" => w.randseed = Some(num(v)?),
            "runtime" | "timeout" => {
                let d = fio_dur(v).map_err(|x| e(format!("{k}: {x}")))?;
                if d.0 == 0 {
                    return Err(e(format!("{k}: must be positive")));
                }
                job.runtime = Some(d)
            }
            "time_based" => {
                job.time_based = fio_bool(v).map_err(|m| e(format!("time_based: {m}")))?
            }
            "kb_base" => {}
            "direct" => w.direct = fio_bool(v).map_err(|m| e(format!("direct: {m}")))?,
            "buffered" => w.direct = !fio_bool(v).map_err(|m| e(format!("buffered: {m}")))?,
            "sync" => {
                w.sync = match v {
                    "" | "1" | "sync" | "dsync" => true,
                    "0" | "none" => false,
                    _ => {
                        return Err(e(format!(
                            "sync: expected 0, 1, none, sync or dsync, got {:?}",
                            clip(v)
                        )))
                    }
                }
            }
            "fsync" => w.fsync = num(v)?,
            "end_fsync" => w.end_fsync = fio_bool(v).map_err(|m| e(format!("end_fsync: {m}")))?,
            "numjobs" => {
                let n = num(v)?;
                if n == 0 || n > ssdsim_host::flows::MAX_FLOWS as u64 {
                    return Err(e(format!(
                        "numjobs: must be in 1..={} (each clone is a flow of the run)",
                        ssdsim_host::flows::MAX_FLOWS
                    )));
                }
                job.numjobs = n as u32;
                job.numjobs_line = o.line;
            }
            "wait_for" => job.wait_for = Some(v.trim().to_string()).filter(|v| !v.is_empty()),
            "flow" => {
                let n = num(v)?;
                if n > ssdsim_host::workload::flow_control::FLOW_MAX_WEIGHT as u64 {
                    return Err(e(format!(
                        "flow: at most {}, as in fio",
                        ssdsim_host::workload::flow_control::FLOW_MAX_WEIGHT
                    )));
                }
                w.flow = n as u32
            }
            "flow_id" => {
                let n = num(v)?;
                if n > u32::MAX as u64 {
                    return Err(e(format!("flow_id: at most {}", u32::MAX)));
                }
                w.flow_id = n as u32
            }
            // Microseconds (fio's usleep).
            "flow_sleep" => w.flow_sleep = ssd_core::Dur(num(v)?.saturating_mul(1000)),
            "stonewall" => job.stonewall = fio_bool(v).map_err(|m| e(format!("stonewall: {m}")))?,
            "new_group" => job.new_group = fio_bool(v).map_err(|m| e(format!("new_group: {m}")))?,
            "group_reporting" => {
                job.group_reporting = fio_bool(v).map_err(|m| e(format!("group_reporting: {m}")))?
            }
            "startdelay" => {
                if v.contains('-') || v.contains(':') {
                    return Err(e(format!(
                        "startdelay: a range ({}) draws a random delay in fio; give one time",
                        clip(v)
                    )));
                }
                let d = fio_dur(v).map_err(|x| e(format!("startdelay: {x}")))?;
                job.start_delay = (d.0 > 0).then_some(d)
            }
            "ramp_time" => {
                let d = fio_dur(v).map_err(|x| e(format!("ramp_time: {x}")))?;
                job.ramp_time = (d.0 > 0).then_some(d)
            }
            "ioengine" => {
                // Engines that do block I/O on the target (or none, as
                // null) run as the drive's requests; the others do no I/O
                // on a drive.
                let name = v.split(':').next().unwrap_or("").trim();
                if let Some((_, why)) = NO_BLOCK_IO.iter().find(|(n, _)| *n == name) {
                    return Err(e(format!(
                        "ioengine={}: {why}; ssdsim simulates a drive's block requests",
                        clip(v)
                    )));
                }
                job.ignored.push(k.to_string())
            }
            "rate" => {
                // fio's bandwidth limit: one value for every direction.
                let parts = by_direction(v);
                if parts.iter().any(|p| *p != parts[0]) || parts[0].is_none() {
                    return Err(e(format!(
                        "rate: a limit by direction ({}) is not supported; give one value, or \
                         rate_iops",
                        clip(v)
                    )));
                }
                let b = size(parts[0].expect("checked"))?;
                if b.0 == 0 {
                    return Err(e("rate: must be positive".into()));
                }
                rate_bytes = Some((b.0, line));
            }
            "blockalign" | "ba" => {
                if by_direction(v).iter().any(|p| *p != by_direction(v)[0]) {
                    return Err(e(format!(
                        "{k}: an alignment by direction ({}) is not supported",
                        clip(v)
                    )));
                }
                let b = size(by_direction(v)[0].unwrap_or("0"))?;
                if b.0 == 0 || !b.0.is_multiple_of(512) {
                    return Err(e(format!(
                        "{k}: must be a positive multiple of 512 bytes, got {}",
                        b.0
                    )));
                }
                w.blockalign = b;
            }
            "zonemode" => match v {
                "none" | "strided" => {
                    zonemode = Some((if v == "none" { "none" } else { "strided" }, line))
                }
                "zbd" => zonemode = Some(("zbd", line)),
                _ => {
                    return Err(e(format!(
                        "zonemode: none, strided or zbd, got {}",
                        clip(v)
                    )))
                }
            },
            "zonesize" => w.zonesize = size(v)?,
            "zonerange" => w.zonerange = size(v)?,
            "zoneskip" => {
                if v.trim_end().ends_with(['z', 'Z']) {
                    return Err(e(format!(
                        "zoneskip: a count of zones ({}) skips zones of zonemode=zbd, where \
                         zoneskip must be 0; give bytes for zonemode=strided",
                        clip(v)
                    )));
                }
                w.zoneskip = size(v)?
            }
            // zonemode=zbd's own options (fio's options.c, group
            // FIO_OPT_G_ZONE), applied once the job's zonemode is known.
            "zonecapacity" => zbd.zonecapacity = size(v)?,
            "max_open_zones" | "job_max_open_zones" => {
                let n = num(v)?;
                if n > ssdsim_host::workload::zbd::ZBD_MAX_WRITE_ZONES as u64 {
                    return Err(e(format!(
                        "{k}: at most {}, as in fio",
                        ssdsim_host::workload::zbd::ZBD_MAX_WRITE_ZONES
                    )));
                }
                if k == "max_open_zones" {
                    zbd.max_open_zones = n as u32
                } else {
                    zbd.job_max_open_zones = n as u32
                }
                zbd_given.get_or_insert(line);
            }
            "ignore_zone_limits" | "read_beyond_wp" => {
                let b = fio_bool(v).map_err(|m| e(format!("{k}: {m}")))?;
                if k == "read_beyond_wp" {
                    zbd.read_beyond_wp = b
                } else {
                    zbd.ignore_zone_limits = b
                }
                zbd_given.get_or_insert(line);
            }
            "zone_reset_threshold" | "zone_reset_frequency" => {
                let f: f64 = v
                    .trim()
                    .parse()
                    .ok()
                    .filter(|f: &f64| (0.0..=1.0).contains(f))
                    .ok_or_else(|| e(format!("{k}: a number from 0 to 1, got {:?}", clip(v))))?;
                if k == "zone_reset_threshold" {
                    zbd.zone_reset_threshold = f
                } else {
                    zbd.zone_reset_frequency = f
                }
                zbd_given.get_or_insert(line);
            }
            // fio's `verify`: any method but 0 reads back what the job
            // wrote (the data's check is the host's; the reads are the
            // drive's), unless `do_verify=0`.
            "verify" => verify_method = v != "0" && v != "none",
            "do_verify" => do_verify = fio_bool(v).map_err(|m| e(format!("{k}: {m}")))?,
            k if dp::KEYS.contains(&k) => dp.take(k, v, line).map_err(e)?,
            k if HOST_ONLY.contains(&k) => job.ignored.push(k.to_string()),
            k if REFUSED.iter().any(|(n, _)| *n == k) => {
                let why = REFUSED.iter().find(|(n, _)| *n == k).expect("found").1;
                return Err(e(format!("{k}: {why}")));
            }
            other => {
                return Err(e(format!(
                    "unsupported fio option {:?}: not one ssdsim reads (such as rw, bs, bsrange, \
                     bssplit, size, io_size, offset, nrfiles, iodepth, rate_iops, thinktime, \
                     verify, numjobs, runtime), nor one that only chooses the host's engine, \
                     files, logging or CPUs (ioengine, directory, thread, write_lat_log, ...), \
                     which are accepted without effect; docs/fio.md lists both",
                    clip(other)
                )))
            }
        }
    }
    w.verify = verify_method && do_verify;
    dp.finish(&mut w).map_err(|(l, m)| err(l, m))?;
    // fio's `size` with `filesize`: the files are `filesize` each, and
    // `size` is how much the job does.
    if w.filesize.is_some() {
        if let Some(s) = w.size.take() {
            w.io_size.get_or_insert(s);
        }
    }
    if let Some((bytes, line)) = rate_bytes {
        // For requests of one size, fio's bandwidth limit is a request rate.
        let one = dirs.iter().all(|d| *d == BsDraw::Fixed(dirs[0].min()));
        if !one || !bytes.is_multiple_of(dirs[0].min()) {
            return Err(err(
                line,
                format!(
                    "rate: {bytes} bytes/s is not a whole number of requests of one size a \
                     second; give rate_iops"
                ),
            ));
        }
        w.rate_iops = Some(bytes / dirs[0].min());
    }
    if dirs.iter().all(|d| *d == BsDraw::Fixed(dirs[0].min())) {
        w.bs = ssd_core::Size(dirs[0].min());
        w.block_sizes = None;
    } else {
        w.bs = ssd_core::Size(dirs[0].min());
        w.block_sizes = Some(BlockSizes(dirs));
    }
    // What the page cache model cannot run, named where the job says it.
    let last = |keys: &[&str]| {
        opts.iter()
            .rev()
            .find(|o| keys.contains(&o.key))
            .map(|o| o.line)
    };
    if !w.direct && w.rate_iops.is_some() {
        return Err(err(
            last(&["rate_iops"]).unwrap_or(0),
            "rate_iops: a buffered job (fio's default direct=0) is made by a thread's \
             synchronous calls; ssdsim rates direct I/O only: add direct=1"
                .into(),
        ));
    }
    if !w.thinktime.is_zero() && (!w.direct || w.rate_iops.is_some()) {
        return Err(err(
            last(&["thinktime"]).unwrap_or(0),
            "thinktime: pauses are modelled for direct closed-loop jobs (direct=1, no rate); \
             a buffered job's pauses between its calls are not"
                .into(),
        ));
    }
    if w.direct && (w.sync || w.fsync > 0 || w.end_fsync) {
        let line = last(&["sync", "fsync", "end_fsync"]).unwrap_or(0);
        return Err(err(
            line,
            "sync, fsync and end_fsync act on the page cache: ssdsim runs them on buffered \
             jobs only (direct=0)"
                .into(),
        ));
    }
    // fio's `fixup_options` on zones: zonemode's default is none, which a
    // zonesize contradicts; strided needs a zonesize; strided is turned off
    // for several files; zonerange defaults to zonesize
    // (`WorkloadConfig::zone_range`).
    if let Some(("zbd", line)) = zonemode {
        // fio's zbd mode: zonesize is the zone's size (zonerange is
        // ignored), zoneskip must be 0, and the zones are the device's.
        if w.zoneskip.0 > 0 {
            return Err(err(
                last(&["zoneskip"]).unwrap_or(line),
                "zoneskip must be 0 with zonemode=zbd (as in fio)".into(),
            ));
        }
        zbd.zonesize = w.zonesize;
        w.zonesize = ssd_core::Size(0);
        w.zonerange = ssd_core::Size(0);
        w.zbd = Some(zbd);
        if !w.direct
            && matches!(
                w.rw,
                RwMode::Write
                    | RwMode::RandWrite
                    | RwMode::Rw
                    | RwMode::RandRw
                    | RwMode::Trim
                    | RwMode::RandTrim
            )
        {
            return Err(err(
                line,
                "zonemode=zbd: writing to a zoned device needs direct=1 (fio: \"Using direct I/O \
                 is mandatory for writing to ZBD drives\")"
                    .into(),
            ));
        }
    } else {
        if let Some(l) = zbd_given {
            job.ignored.push(format!(
                "zonemode=zbd's options without zonemode=zbd (line {l})"
            ));
        }
        if zbd.zonecapacity.0 > 0 {
            job.ignored.push("zonecapacity (zonemode=zbd only)".into());
        }
    }
    match zonemode {
        None | Some(("none", _)) if w.zonesize.0 > 0 => {
            return Err(err(
                zonemode.map_or_else(|| last(&["zonesize"]).unwrap_or(0), |z| z.1),
                "zonesize needs zonemode=strided (fio: zonemode=none, its default, and \
                 zonesize are not compatible)"
                    .into(),
            ))
        }
        Some(("strided", line)) if w.zonesize.0 == 0 => {
            return Err(err(
                line,
                "zonemode=strided needs zonesize (as in fio)".into(),
            ))
        }
        _ => {}
    }
    if w.zonesize.0 == 0 {
        for (k, v) in [
            ("zonerange", &mut w.zonerange),
            ("zoneskip", &mut w.zoneskip),
        ] {
            if v.0 > 0 {
                v.0 = 0;
                job.ignored.push(format!("{k} (no zones without zonesize)"));
            }
        }
    } else if w.nrfiles > 1 {
        w.zonesize.0 = 0;
        w.zonerange.0 = 0;
        w.zoneskip.0 = 0;
        job.ignored
            .push("zonesize (fio's strided zones work with one file: off for nrfiles > 1)".into());
    }
    if job.time_based && job.runtime.is_none() {
        // fio ignores time_based without a runtime (`keep_running` has no
        // time to keep to): the job ends by its size, and the note says so.
        job.time_based = false;
        job.ignored
            .push("time_based (without runtime= fio ignores it)".into());
    }
    if w.verify && job.time_based {
        return Err(err(
            last(&["verify"]).unwrap_or(0),
            "verify: a time_based job's read-back after its runtime is not modelled".into(),
        ));
    }
    // Each at most 2^62 ns: the sum must stay a valid duration.
    let total: u128 = [job.runtime, job.ramp_time, job.start_delay]
        .iter()
        .map(|d| d.map_or(0, |d| d.0 as u128))
        .sum();
    if total > ssd_core::Dur::MAX.0 as u128 {
        return Err(err(
            last(&["runtime", "timeout", "ramp_time", "startdelay"]).unwrap_or(0),
            format!(
                "startdelay + ramp_time + runtime: at most {} ns (2^62 ns, about 146 years)",
                ssd_core::Dur::MAX.0
            ),
        ));
    }
    Ok((w, job))
}

/// fio's `${NAME}` in a value (options.c, `option_dup_subs`): the
/// environment variable's value, or nothing when it is not set (the first
/// such name is returned beside the value).
fn expand_env(v: &str) -> (std::borrow::Cow<'_, str>, Option<String>) {
    if !v.contains("${") {
        return (std::borrow::Cow::Borrowed(v), None);
    }
    let mut out = String::new();
    let mut unset = None;
    let mut rest = v;
    while let Some(i) = rest.find("${") {
        out.push_str(&rest[..i]);
        let Some(j) = rest[i..].find('}').filter(|&j| j > 2) else {
            break;
        };
        let name = &rest[i + 2..i + j];
        match std::env::var(name) {
            Ok(val) => out.push_str(&val),
            Err(_) => {
                unset.get_or_insert_with(|| name.to_string());
            }
        }
        rest = &rest[i + j + 1..];
    }
    out.push_str(rest);
    (std::borrow::Cow::Owned(out), unset)
}

/// fio's values by direction (`bs=8k,32k`): one applies to reads, writes
/// and trims; with commas, the first is the reads', the second the
/// writes' (and the trims' unless a third is given); an empty one leaves
/// that direction as it was.
fn by_direction(v: &str) -> [Option<&str>; 3] {
    let p: Vec<&str> = v.split(',').map(str::trim).collect();
    fn some(s: &str) -> Option<&str> {
        (!s.is_empty()).then_some(s)
    }
    match p.as_slice() {
        [a] => [some(a), some(a), some(a)],
        [a, b] => [some(a), some(b), some(b)],
        [a, b, c, ..] => [some(a), some(b), some(c)],
        [] => [None, None, None],
    }
}

/// One direction of fio's `bssplit` (`options.c`, `bssplit_ddir`):
/// `SIZE/PERCENT:SIZE/PERCENT...`; sizes without a percentage share what
/// the others leave of 100 evenly.
fn bssplit(v: &str, kb_base: u64) -> Result<BsDraw, String> {
    let mut out: Vec<(u64, Option<u32>)> = Vec::new();
    for e in v.split(':') {
        let (b, p) = match e.split_once('/') {
            Some((b, p)) => (b, Some(p.trim())),
            None => (e, None),
        };
        let b = fio_size(b, kb_base)?.0;
        let p = match p.filter(|p| !p.is_empty()) {
            Some(p) => Some(
                p.parse::<u32>()
                    .ok()
                    .filter(|&p| p <= 100)
                    .ok_or_else(|| format!("{:?}: a percentage is 0..=100", clip(p)))?,
            ),
            None => None,
        };
        out.push((b, p));
    }
    if out.len() > 64 {
        return Err("at most 64 sizes a direction, as in fio".into());
    }
    let given: u32 = out.iter().filter_map(|e| e.1).sum();
    let missing = out.iter().filter(|e| e.1.is_none()).count() as u32;
    if given > 100 {
        return Err(format!("percentages add up to {given}, more than 100"));
    }
    let share = (100 - given).checked_div(missing).unwrap_or(0);
    let mut split: Vec<(u64, u32)> = out.iter().map(|e| (e.0, e.1.unwrap_or(share))).collect();
    // fio gives what integer division leaves over to no one; ssdsim gives
    // it to the last size without a percentage, so that they add up.
    let sum: u32 = split.iter().map(|e| e.1).sum();
    if sum != 100 {
        match out.iter().rposition(|e| e.1.is_none()) {
            Some(i) => split[i].1 += 100 - sum,
            None => return Err(format!("percentages add up to {sum}, not 100")),
        }
    }
    if split.len() == 1 {
        return Ok(BsDraw::Fixed(split[0].0));
    }
    Ok(BsDraw::Split(split))
}

/// A percentage of the device (`offset=20%`, `size=50%`): 1..=100.
fn percent(p: &str) -> Result<u64, String> {
    p.trim()
        .parse::<u64>()
        .ok()
        .filter(|p| (1..=100).contains(p))
        .ok_or_else(|| format!("{:?}%: a percentage is 1..=100", clip(p)))
}

/// A fio boolean: 1 or 0 (a bare option is 1).
fn fio_bool(v: &str) -> Result<bool, String> {
    match v {
        "" | "1" => Ok(true),
        "0" => Ok(false),
        _ => Err(format!("expected 0 or 1, got {:?}", clip(v))),
    }
}

/// A fio time (`parse.c`, `get_mult_time` for `is_seconds` options such as
/// `runtime` and `ramp_time`): a bare number is seconds; the suffixes are
/// `us`/`usec`, `ms`/`msec`, `s`, `m` (minutes), `h` and `d`, in any case.
/// Unlike fio, which reads an unknown suffix as microseconds, an unknown
/// suffix is refused.
pub fn fio_dur(v: &str) -> Result<ssd_core::units::Dur, ssd_core::units::UnitError> {
    // Kept hand-written because fio's times are fio's: a bare number is
    // seconds, `m` is minutes and `d` days; humantime refuses a bare number
    // (issue 29).
    let t = v.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let unit = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "s" => "s",
        "us" | "usec" => "us",
        "ms" | "msec" => "ms",
        "m" => "min",
        "h" => "h",
        "d" => {
            // parse_dur has no days: 24 h, within the same range.
            let h = parse_dur(&format!("{num}h"))?;
            return h
                .0
                .checked_mul(24)
                .filter(|&ns| ns <= ssd_core::Dur::MAX.0)
                .map(ssd_core::Dur)
                .ok_or_else(|| ssd_core::units::UnitError {
                    text: clip(v),
                    what: "a fio time",
                    reason: format!(
                        "out of range: at most {} ns (2^62 ns, about 146 years)",
                        ssd_core::Dur::MAX.0
                    ),
                });
        }
        u => {
            return Err(ssd_core::units::UnitError {
                text: clip(v),
                what: "a fio time",
                reason: format!(
                    "unknown unit {:?} (a bare number is seconds; or us, ms, s, m, h, d)",
                    clip(u)
                ),
            })
        }
    };
    parse_dur(&format!("{num}{unit}"))
}

/// A job of fio's output: the name it is reported under, its reporting
/// group (fio's `groupid`) and whether it sums with the job before it in
/// the group (`group_reporting`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OutputJob {
    /// The job section's name.
    pub name: String,
    /// fio's reporting group: it goes up at a `stonewall` or `new_group`
    /// that follows a job of the group before.
    pub groupid: u32,
    /// fio's `group_reporting`.
    pub group_reporting: bool,
}

/// The zone size of a zoned drive in bytes (None on any other).
pub fn device_zone_bytes(s: &ssd_core::config::Settings) -> Option<u64> {
    s.zone_layout()
        .map(|l| l.size * s.geometry.page_size as u64)
}

/// Several jobs of one file as flows of one run (`numjobs` clones each),
/// over the whole device, as fio runs a file's jobs against one target.
///
/// fio's time frames are kept ([`ssdsim_host::flows::FlowConfig`]'s fields):
/// jobs start as fio's `run_threads` starts them, a job with `stonewall`
/// once every job started before it has finished and one with `startdelay`
/// no sooner than that long after the run's start; each job has its own
/// `ramp_time` and `runtime`, counted from its start. When the jobs all
/// start at once and share one ramp and runtime, these are the run's
/// (`sim.ramp_time`, `sim.time_limit`), as for one job. Otherwise the
/// device-level figures start when the first ramp of the jobs before the
/// first stonewall ends (none if one of them has neither ramp nor delay),
/// and each job's own statistics (the `flows` section, fio's output)
/// exclude its own ramp.
///
/// Returns the output job of each flow, in slot order.
pub fn jobs_to_flows(
    c: &mut ssdsim_host::config::SsdConfig,
    jobs: Vec<(WorkloadConfig, FioJob)>,
    file: &str,
    warn: &mut dyn FnMut(String),
) -> Result<Vec<OutputJob>, FioError> {
    let err = |line: usize, reason: String| FioError {
        file: file.to_string(),
        line,
        reason,
    };
    let first = jobs[0].1.clone();
    // A stonewall on the first job waits for nothing.
    // fio's init.c: a job waited for must exist.
    for (_, j) in &jobs {
        if let Some(w) = &j.wait_for {
            if *w == j.name || !jobs.iter().any(|(_, o)| o.name == *w) {
                return Err(err(
                    j.line,
                    format!("wait_for={}: no other job has that name", clip(w)),
                ));
            }
        }
    }
    let one_frame = jobs.iter().enumerate().all(|(i, (_, j))| {
        (i == 0 || !j.stonewall)
            && j.wait_for.is_none()
            && j.start_delay.is_none()
            && (j.runtime, j.ramp_time) == (first.runtime, first.ramp_time)
    });
    if one_frame {
        c.sim.ramp_time = first.ramp_time;
        if let Some(t) = first.time_limit() {
            c.sim.time_limit = Some(t);
        }
    } else {
        // The jobs that start with the run: up to the first stonewall.
        let group0 = jobs[1..]
            .iter()
            .position(|(_, j)| j.stonewall)
            .map_or(jobs.len(), |p| p + 1);
        let lead = jobs[..group0]
            .iter()
            .map(|(_, j)| j.start_delay.map_or(0, |d| d.0) + j.ramp_time.map_or(0, |d| d.0))
            .min()
            .unwrap_or(0);
        c.sim.ramp_time = (lead > 0).then_some(ssd_core::Dur(lead));
    }
    let settings = c.validate().map_err(|e| err(0, e.to_string()))?;
    let logical = settings.logical_bytes();
    let device_zone = device_zone_bytes(&settings);
    let mut flows: Vec<ssdsim_host::flows::FlowConfig> = Vec::new();
    let mut out = Vec::new();
    // Each flow's job name and flow name, and the job it waits for.
    let mut out_names: Vec<(String, String)> = Vec::new();
    let mut waits: Vec<Option<String>> = Vec::new();
    // fio's init.c: the group id goes up at a stonewall or new_group that
    // follows a job of the current group.
    let (mut groupid, mut group_jobs) = (0u32, 0u32);
    for (mut w, mut j) in jobs {
        for n in j
            .resolve_zones(&mut w, device_zone, logical)
            .map_err(|m| err(j.line, m))?
        {
            warn(format!("{file}: job [{}]: {n}", j.name));
        }
        if (j.stonewall || j.new_group) && group_jobs > 0 {
            groupid += 1;
            group_jobs = 0;
        }
        let base: String = j
            .name
            .chars()
            .map(|ch| {
                if ch.is_ascii_alphanumeric() || ch == '-' || ch == '_' {
                    ch
                } else {
                    '_'
                }
            })
            .collect();
        let base = if base.is_empty() {
            "job".to_string()
        } else {
            base
        };
        for k in 0..j.numjobs {
            group_jobs += 1;
            let mut name = if j.numjobs > 1 {
                format!("{base}-{k}")
            } else {
                base.clone()
            };
            if flows.iter().any(|f| f.name == name) {
                name = format!("{name}-{}", flows.len());
            }
            let mut wk = w.clone();
            j.resolve_clone(&mut wk, logical, k);
            let mut f = ssdsim_host::flows::FlowConfig::workload(&name, wk);
            if !one_frame {
                // Clones start together: only the first waits.
                f.stonewall = j.stonewall && k == 0;
                f.start_delay = j.start_delay;
                f.ramp_time = j.ramp_time;
                f.runtime = j.runtime;
            }
            out_names.push((j.name.clone(), f.name.clone()));
            waits.push(j.wait_for.clone());
            flows.push(f);
            out.push(OutputJob {
                name: j.name.clone(),
                groupid,
                group_reporting: j.group_reporting,
            });
        }
    }
    if flows.len() > ssdsim_host::flows::MAX_FLOWS {
        return Err(err(
            0,
            format!(
                "{} jobs (numjobs included): at most {}",
                flows.len(),
                ssdsim_host::flows::MAX_FLOWS
            ),
        ));
    }
    // wait_for names a job: every flow (clone) of it.
    for (f, w) in flows.iter_mut().zip(&waits) {
        if let Some(w) = w {
            f.wait_for = out_names
                .iter()
                .filter(|(job, _)| job == w)
                .map(|(_, flow)| flow.clone())
                .collect();
        }
    }
    c.flows = flows;
    // fio's jobs address the same target, and fio runs nothing alone.
    c.sim.flow_space = ssdsim_host::flows::FlowSpace::Shared;
    c.sim.alone_runs = false;
    Ok(out)
}

#[cfg(test)]
mod tests;
