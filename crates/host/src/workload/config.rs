//! The `[workload]` section: fio's options for a generated workload
//! (direction, sizes, distribution, rate, files and zones) and their rules.

use super::*;

/// fio's `rw=`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RwMode {
    /// Sequential reads.
    Read,
    /// Sequential writes.
    Write,
    /// Random reads.
    RandRead,
    /// Random writes.
    RandWrite,
    /// Sequential mixed (`rw` / `readwrite`).
    Rw,
    /// Random mixed reads and writes (`rwmixread` percent reads).
    RandRw,
    /// Sequential trims.
    Trim,
    /// Random trims.
    RandTrim,
    /// fio's `trimwrite`: each block trimmed, then written, in order.
    TrimWrite,
    /// fio's `randtrimwrite`: a random block trimmed, then written.
    RandTrimWrite,
}

impl RwMode {
    /// Parse fio's name (`read`, `write`, `randread`, `randwrite`, `rw`/`readwrite`, `randrw`,
    /// `trim`, `randtrim`); an error lists them.
    pub fn parse(s: &str) -> Result<RwMode, String> {
        Ok(match s {
            "read" => RwMode::Read,
            "write" => RwMode::Write,
            "randread" => RwMode::RandRead,
            "randwrite" => RwMode::RandWrite,
            "rw" | "readwrite" => RwMode::Rw,
            "randrw" => RwMode::RandRw,
            "trim" => RwMode::Trim,
            "randtrim" => RwMode::RandTrim,
            "trimwrite" => RwMode::TrimWrite,
            "randtrimwrite" => RwMode::RandTrimWrite,
            _ => return Err(format!("unknown rw mode {:?} (read, write, randread, randwrite, rw, randrw, trim, randtrim)", ssd_core::units::clip(s))),
        })
    }
    /// Whether the mode picks random addresses (the `rand*` modes).
    pub fn is_random(self) -> bool {
        matches!(
            self,
            RwMode::RandRead
                | RwMode::RandWrite
                | RwMode::RandRw
                | RwMode::RandTrim
                | RwMode::RandTrimWrite
        )
    }
}

/// fio's `random_distribution=`.
#[derive(Clone, Debug, PartialEq)]
pub enum Distribution {
    /// Uniform over the span (fio's `random`).
    Uniform,
    /// Zipf with exponent theta (positive, not 1), as fio's `zipf:THETA`.
    Zipf(f64),
    /// Pareto with shape h in (0, 1), as fio's `pareto:H`.
    Pareto(f64),
    /// fio's `zoned:ACCESS/RANGE:...`: each zone takes ACCESS percent of
    /// the requests, uniformly over the next RANGE percent of the span
    /// (`__get_next_rand_offset_zoned`); both add up to 100.
    Zoned(Vec<(u32, u32)>),
}

impl Distribution {
    /// Parse `random`/`uniform`, `zipf:THETA` or `pareto:H`; an error says which values are
    /// allowed.
    pub fn parse(s: &str) -> Result<Distribution, String> {
        let s = s.trim();
        if s == "random" || s == "uniform" {
            return Ok(Distribution::Uniform);
        }
        let q = || ssd_core::units::clip(s);
        if let Some(z) = s.strip_prefix("zoned:") {
            return Self::zoned(z).map_err(|m| format!("random_distribution {:?}: {m}", q()));
        }
        let (name, arg) = s.split_once(':').ok_or_else(|| {
            format!(
                "unknown random_distribution {:?} (uniform, zipf:THETA, pareto:H)",
                q()
            )
        })?;
        let v: f64 = arg
            .parse()
            .map_err(|_| format!("bad parameter in random_distribution {:?}", q()))?;
        match name {
            "zipf" if v > 0.0 && v != 1.0 && v.is_finite() => Ok(Distribution::Zipf(v)),
            "zipf" => Err(format!(
                "zipf theta must be positive and not 1.0 (as in fio), got {v}"
            )),
            "pareto" if v > 0.0 && v < 1.0 => Ok(Distribution::Pareto(v)),
            "pareto" => Err(format!("pareto h must be in (0, 1), got {v}")),
            _ => Err(format!(
                "unknown random_distribution {:?} (uniform, zipf:THETA, pareto:H, \
                 zoned:ACCESS/RANGE:...)",
                q()
            )),
        }
    }

    /// fio's zones (`options.c`, `zone_split_ddir`): `ACCESS/RANGE`
    /// percentages; a blank range shares what the others leave of 100.
    fn zoned(z: &str) -> Result<Distribution, String> {
        if z.contains(',') {
            return Err("zones by direction are not supported; give one set".into());
        }
        let pct = |t: &str| {
            t.trim()
                .parse::<u32>()
                .ok()
                .filter(|&p| p <= 100)
                .ok_or_else(|| format!("{t:?}: a percentage is 0..=100"))
        };
        let mut zones: Vec<(u32, Option<u32>)> = Vec::new();
        for e in z.split(':') {
            let (a, r) = e
                .split_once('/')
                .ok_or_else(|| format!("{e:?}: expected ACCESS/RANGE"))?;
            let r = if r.trim().is_empty() {
                None
            } else {
                Some(pct(r)?)
            };
            zones.push((pct(a)?, r));
        }
        if zones.len() > 256 {
            return Err("at most 256 zones, as in fio".into());
        }
        let access: u32 = zones.iter().map(|z| z.0).sum();
        let given: u32 = zones.iter().filter_map(|z| z.1).sum();
        let blank = zones.iter().filter(|z| z.1.is_none()).count() as u32;
        if access != 100 || given > 100 {
            return Err(format!(
                "accesses must add up to 100 (got {access}) and ranges to at most 100 (got {given})"
            ));
        }
        let share = (100 - given).checked_div(blank).unwrap_or(0);
        let mut out: Vec<(u32, u32)> = zones.iter().map(|z| (z.0, z.1.unwrap_or(share))).collect();
        let ranges: u32 = out.iter().map(|z| z.1).sum();
        if ranges != 100 {
            match zones.iter().rposition(|z| z.1.is_none()) {
                Some(i) => out[i].1 += 100 - ranges,
                None => return Err(format!("ranges must add up to 100, got {ranges}")),
            }
        }
        Ok(Distribution::Zoned(out))
    }
}
impl fmt::Display for Distribution {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        match self {
            Distribution::Uniform => f.write_str("random"),
            Distribution::Zipf(t) => write!(f, "zipf:{t}"),
            Distribution::Pareto(h) => write!(f, "pareto:{h}"),
            Distribution::Zoned(z) => {
                f.write_str("zoned:")?;
                for (i, (a, r)) in z.iter().enumerate() {
                    if i > 0 {
                        f.write_str(":")?;
                    }
                    write!(f, "{a}/{r}")?;
                }
                Ok(())
            }
        }
    }
}
impl Serialize for Distribution {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.to_string())
    }
}
impl<'de> Deserialize<'de> for Distribution {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Distribution::parse(&String::deserialize(d)?).map_err(serde::de::Error::custom)
    }
}

/// fio's `rate_process=`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RateProcess {
    /// Fixed inter-arrival time 1/rate_iops.
    Linear,
    /// Exponential inter-arrival times with mean 1/rate_iops.
    Poisson,
}

/// The synthetic workload, spelled as fio spells it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WorkloadConfig {
    /// Access pattern (fio's `rw`); default randread.
    pub rw: RwMode,
    /// Request size (fio's `bs`), a multiple of 512 bytes; default 4 KiB.
    pub bs: Size,
    /// Percentage of reads in mixed modes.
    pub rwmixread: u32,
    /// Outstanding requests (closed loop) when rate_iops is not set.
    pub iodepth: u32,
    /// Open loop at this many requests per second.
    pub rate_iops: Option<u64>,
    /// Inter-arrival process of the open loop (`rate_iops`); default linear.
    pub rate_process: RateProcess,
    /// fio's `number_ios`: the job ends after this many requests (counted
    /// from the ramp's end). None (written `0`, fio's "no count"): it ends
    /// after one pass over `size` (or `io_size` bytes), `loops` times, as
    /// fio's does; `[workload]`'s default is 200,000 requests.
    #[serde(default = "default_count", with = "no_count_is_zero")]
    pub number_ios: Option<u64>,
    /// Address span; default the whole logical capacity (minus offset).
    pub size: Option<Size>,
    /// Start of the address span, bytes (fio's `offset`); default 0.
    pub offset: Size,
    /// Distribution of random addresses over the span; default uniform.
    pub random_distribution: Distribution,
    /// fio's `percentage_random`: of a random workload's requests, this
    /// percentage go to a random block and the rest continue sequentially
    /// from where the last request of the same direction ended (100, the
    /// default: all random; 0: all sequential). Ignored by sequential modes.
    #[serde(default = "hundred")]
    pub percentage_random: u32,
    /// Seed of the address/mix generator; default derived from sim.seed.
    pub randseed: Option<u64>,
    /// fio's data placement (`fdp=1`, `plids`, `plid_select`): the job's
    /// writes carry placement identifiers for a drive with Flexible Data
    /// Placement (`[workload.fdp]`; see [`super::placement`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fdp: Option<super::placement::DataPlacement>,
    /// fio's `direct`: bypass the page cache (O_DIRECT). True by default in
    /// ssdsim's `[workload]` (block-level runs); a fio job file follows fio,
    /// whose default is buffered (`direct=0`). False runs the workload
    /// through `[page_cache]` as one application thread making
    /// synchronous calls.
    #[serde(default = "yes")]
    pub direct: bool,
    /// fio's `sync`: buffered writes are O_SYNC (each waits for its pages
    /// and a cache flush).
    #[serde(default)]
    pub sync: bool,
    /// fio's `fsync`: fsync after every this many writes (0: never).
    #[serde(default)]
    pub fsync: u64,
    /// fio's `end_fsync`: fsync once the last call is done.
    #[serde(default)]
    pub end_fsync: bool,
    /// fio's `norandommap`: random addresses are drawn independently, so a
    /// pass may touch a block twice and miss another. True by default in
    /// `[workload]` (as MQSim's generator and the analytic models draw); a
    /// fio job file follows fio, whose default keeps the random map: each
    /// block once per pass (uniform random addresses only, as in fio).
    #[serde(default = "yes", skip_serializing_if = "is_true")]
    pub norandommap: bool,
    /// fio's `io_size`: the bytes the job does, counted from its start (the
    /// ramp included), going over `size` as often as it takes. None: one
    /// pass over `size` when `number_ios` is not set either.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub io_size: Option<Size>,
    /// fio's `loops`: the job is done this many times (each a new pass,
    /// with a fresh random map).
    #[serde(default = "one", skip_serializing_if = "is_one")]
    pub loops: u32,
    /// fio's sizes by direction (`bs=4k,64k`, `bsrange`, `bssplit`), as
    /// `"READ,WRITE,TRIM"` in bytes (see [`BlockSizes`]); None: `bs` for
    /// every request.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub block_sizes: Option<BlockSizes>,
    /// fio's `rw=write:SIZE` (`ddir_seq_add`): bytes skipped after each
    /// sequential request (sequential I/O with holes).
    #[serde(default, skip_serializing_if = "is_zero_size")]
    pub ddir_seq_add: Size,
    /// fio's negative `ddir_seq_add` (`rw=read:-8k`): each sequential
    /// request starts that far before the end of the one before (reading
    /// backwards), wrapping to the span's end.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub ddir_seq_back: bool,
    /// fio's `rw=randread:N` (`ddir_seq_nr`): a random workload takes a new
    /// random offset every N requests and goes on sequentially between.
    #[serde(default = "one", skip_serializing_if = "is_one")]
    pub ddir_seq_nr: u32,
    /// fio's `blockalign`: random offsets are multiples of this (0: of the
    /// direction's smallest size). An alignment other than that turns the
    /// random map off, as in fio (`fixup_options`).
    #[serde(default, skip_serializing_if = "is_zero_size")]
    pub blockalign: Size,
    /// fio's `thinktime`: once `thinktime_blocks` requests have completed,
    /// the job lets its requests in flight complete and pauses this long
    /// before the next (`handle_thinktime` in fio's backend.c). Direct,
    /// closed-loop jobs only. Zero: no pause.
    #[serde(default, skip_serializing_if = "Dur::is_zero")]
    pub thinktime: Dur,
    /// fio's `thinktime_blocks`: requests between pauses (default 1).
    #[serde(default = "one_u64", skip_serializing_if = "is_one_u64")]
    pub thinktime_blocks: u64,
    /// fio's `thinktime_blocks_type=issue`: count the requests issued, not
    /// completed, towards `thinktime_blocks`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub thinktime_on_issue: bool,
    /// fio's `verify` (with `do_verify`, its default): once the job's
    /// writes are done, it reads back what it wrote (`log_io_piece`,
    /// `get_next_verify`): in the order written under the random map, else
    /// each range's last write in offset order.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub verify: bool,
    /// fio's `nrfiles`: the job's span is this many files, laid one after
    /// the other from `offset` (a block-level job's files as address
    /// ranges), each with its own sequential position and random map.
    #[serde(default = "one", skip_serializing_if = "is_one")]
    pub nrfiles: u32,
    /// fio's `filesize`: each file's size (None: the span divided among
    /// the files, in whole smallest blocks).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub filesize: Option<Size>,
    /// fio's `file_service_type`: which file each request goes to.
    #[serde(default, skip_serializing_if = "FileService::is_default")]
    pub file_service_type: FileService,
    /// A mixed workload (`rw`/`randrw`) as fio runs it: the direction holds
    /// for a stretch (`get_rw_ddir` draws a new one only once the current
    /// direction's requests reach the other's times its share,
    /// `set_rwmix_bytes`), and each direction has its own sequential
    /// position (`last_pos[ddir]`). False, `[workload]`'s default (as
    /// MQSim's generator draws): each request's direction is drawn on its
    /// own, and a sequential mix shares one position. A fio job file sets it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub rwmix_cycle: bool,
    /// fio's `time_based` (a job file's, with a runtime): a sequential
    /// direction at the end of `size` starts again from the start on its
    /// own (`get_next_seq_offset`), where the pass would otherwise end.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub time_based: bool,
    /// fio's strided zones (`zonemode=strided`, `zonesize`): the job does
    /// this many bytes in a zone of `zonerange` bytes, then moves on by
    /// `zonerange + zoneskip` (wrapping to `offset` at the device's end, or
    /// at the end of the file when `filesize` is given), as
    /// `setup_strided_zone_mode` does. Zero: no zones.
    #[serde(default, skip_serializing_if = "is_zero_size")]
    pub zonesize: Size,
    /// fio's `zonerange`: a zone's size (zero: `zonesize`).
    #[serde(default, skip_serializing_if = "is_zero_size")]
    pub zonerange: Size,
    /// fio's `zoneskip`: bytes skipped between zones.
    #[serde(default, skip_serializing_if = "is_zero_size")]
    pub zoneskip: Size,
    /// fio's `zonemode=zbd` (`[workload.zbd]`): the job writes zones at
    /// their write pointers ([`super::zbd`]). Direct, closed-loop jobs of
    /// one file; None: no zoned mode.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub zbd: Option<ZbdOptions>,
    /// fio's `flow`: the job's weight in its flow group's control
    /// ([`super::flow_control`]; 0, the default: none). Direct, closed-loop
    /// jobs only.
    #[serde(default, skip_serializing_if = "is_zero_u32")]
    pub flow: u32,
    /// fio's `flow_id`: the flow group (default 0).
    #[serde(default, skip_serializing_if = "is_zero_u32")]
    pub flow_id: u32,
    /// fio's `flow_sleep`: a job held back waits for its requests in flight,
    /// then sleeps this long before it tries again (0: it tries at once).
    #[serde(default, skip_serializing_if = "Dur::is_zero")]
    pub flow_sleep: Dur,
}

fn is_zero_u32(v: &u32) -> bool {
    *v == 0
}

/// fio's `file_service_type` (`get_next_file` in io_u.c): which of a
/// job's files the next request goes to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FileService {
    /// The next file after every N requests (`roundrobin`, fio's default,
    /// N = 1).
    RoundRobin(u32),
    /// A random file after every N requests (`random`).
    Random(u32),
    /// One file until it is done, then the next (`sequential`).
    Sequential,
}

impl Default for FileService {
    fn default() -> Self {
        FileService::RoundRobin(1)
    }
}

impl FileService {
    fn is_default(&self) -> bool {
        *self == FileService::default()
    }
    /// Parse fio's `roundrobin[:N]`, `random[:N]` or `sequential`.
    pub fn parse(s: &str) -> Result<FileService, String> {
        let (name, n) = match s.split_once(':') {
            Some((a, b)) => (
                a.trim(),
                Some(
                    b.trim()
                        .parse::<u32>()
                        .ok()
                        .filter(|&n| n > 0)
                        .ok_or_else(|| {
                            format!("{:?}: N must be a positive count", ssd_core::units::clip(s))
                        })?,
                ),
            ),
            None => (s.trim(), None),
        };
        match name {
            "roundrobin" => Ok(FileService::RoundRobin(n.unwrap_or(1))),
            "random" => Ok(FileService::Random(n.unwrap_or(1))),
            "sequential" if n.is_none() => Ok(FileService::Sequential),
            _ => Err(format!(
                "{:?}: expected roundrobin[:N], random[:N] or sequential (fio's zipf, pareto, \
                 normal and gauss file choices are not modelled)",
                ssd_core::units::clip(s)
            )),
        }
    }
}
impl fmt::Display for FileService {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        match self {
            FileService::RoundRobin(n) => write!(f, "roundrobin:{n}"),
            FileService::Random(n) => write!(f, "random:{n}"),
            FileService::Sequential => f.write_str("sequential"),
        }
    }
}
impl Serialize for FileService {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.to_string())
    }
}
impl<'de> Deserialize<'de> for FileService {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        FileService::parse(&String::deserialize(d)?).map_err(serde::de::Error::custom)
    }
}

fn one_u64() -> u64 {
    1
}
fn is_one_u64(n: &u64) -> bool {
    *n == 1
}

fn default_count() -> Option<u64> {
    WorkloadConfig::default().number_ios
}

/// `number_ios` in a configuration: `0` is fio's "no count" (None), so that
/// the echo of a job that ends by its size reads back as that job.
mod no_count_is_zero {
    use serde::{Deserialize, Deserializer, Serializer};
    pub fn serialize<S: Serializer>(v: &Option<u64>, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_u64(v.unwrap_or(0))
    }
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u64>, D::Error> {
        Ok(Some(u64::deserialize(d)?).filter(|&n| n > 0))
    }
}

fn is_true(b: &bool) -> bool {
    *b
}
fn one() -> u32 {
    1
}
fn is_one(n: &u32) -> bool {
    *n == 1
}
fn is_zero_size(s: &Size) -> bool {
    s.0 == 0
}

fn yes() -> bool {
    true
}

fn hundred() -> u32 {
    100
}

impl Default for WorkloadConfig {
    fn default() -> Self {
        WorkloadConfig {
            rw: RwMode::RandRead,
            bs: Size::kib(4),
            rwmixread: 50,
            iodepth: 32,
            rate_iops: None,
            rate_process: RateProcess::Linear,
            number_ios: Some(200_000),
            size: None,
            offset: Size(0),
            random_distribution: Distribution::Uniform,
            percentage_random: 100,
            randseed: None,
            fdp: None,
            direct: true,
            sync: false,
            fsync: 0,
            end_fsync: false,
            norandommap: true,
            io_size: None,
            loops: 1,
            block_sizes: None,
            ddir_seq_add: Size(0),
            ddir_seq_back: false,
            ddir_seq_nr: 1,
            blockalign: Size(0),
            thinktime: Dur::ZERO,
            thinktime_blocks: 1,
            thinktime_on_issue: false,
            verify: false,
            nrfiles: 1,
            filesize: None,
            file_service_type: FileService::RoundRobin(1),
            rwmix_cycle: false,
            time_based: false,
            zonesize: Size(0),
            zonerange: Size(0),
            zoneskip: Size(0),
            zbd: None,
            flow: 0,
            flow_id: 0,
            flow_sleep: Dur::ZERO,
        }
    }
}

/// The most memory a workload's random map may take (1 GiB: a map of
/// 512-byte blocks over 4 TiB).
pub const MAX_RANDOM_MAP_BYTES: u64 = 1 << 30;

fn min_bs_of(w: &WorkloadConfig) -> u64 {
    w.block_sizes.as_ref().map_or(w.bs.0, |b| b.min())
}

/// The deepest closed loop a workload may keep (`workload.iodepth`,
/// `replay.closed_loop_depth`): every outstanding request is held by the host.
pub const MAX_IODEPTH: u32 = 65_536;

impl WorkloadConfig {
    /// Check the workload against a drive of `logical_bytes`; an error names the field
    /// (`workload.NAME`).
    pub fn validate(&self, logical_bytes: u64) -> Result<(), ConfigError> {
        self.validate_placement()?;
        if self.bs.0 == 0 || !self.bs.0.is_multiple_of(SECTOR) {
            return Err(invalid(
                "workload.bs",
                format!(
                    "must be a positive multiple of 512 bytes, got {}",
                    self.bs.0
                ),
            ));
        }
        if self.bs.0 > u32::MAX as u64 * SECTOR / 2 {
            return Err(invalid("workload.bs", "too large"));
        }
        if self.percentage_random > 100 {
            return Err(invalid(
                "workload.percentage_random",
                format!("must be 0..=100, got {}", self.percentage_random),
            ));
        }
        if self.rwmixread > 100 {
            return Err(invalid(
                "workload.rwmixread",
                format!("must be 0..=100, got {}", self.rwmixread),
            ));
        }
        if self.iodepth == 0 || self.iodepth > MAX_IODEPTH {
            return Err(invalid(
                "workload.iodepth",
                format!("must be in 1..={MAX_IODEPTH}, got {}", self.iodepth),
            ));
        }
        if self.number_ios == Some(0) {
            return Err(invalid(
                "workload.number_ios",
                "must be at least 1 (0 would simulate nothing)",
            ));
        }
        if self.rate_iops == Some(0) {
            return Err(invalid("workload.rate_iops", "must be positive"));
        }
        if !self.offset.0.is_multiple_of(SECTOR) {
            return Err(invalid(
                "workload.offset",
                "must be a multiple of 512 bytes",
            ));
        }
        if self.offset.0 >= logical_bytes {
            return Err(invalid(
                "workload.offset",
                format!(
                    "{} is beyond the logical capacity {}",
                    self.offset.0, logical_bytes
                ),
            ));
        }
        let span = self.span(logical_bytes);
        if self.offset.0 + span > logical_bytes {
            return Err(invalid(
                "workload.size",
                format!(
                    "offset + size = {} exceeds the logical capacity of {} bytes",
                    self.offset.0 + span,
                    logical_bytes
                ),
            ));
        }
        if span < self.bs.0 {
            return Err(invalid(
                "workload.size",
                format!("span {span} is smaller than bs {}", self.bs.0),
            ));
        }
        if let Some(b) = &self.block_sizes {
            for (d, name) in b.0.iter().zip(["read", "write", "trim"]) {
                d.check()
                    .map_err(|m| invalid("workload.block_sizes", format!("{name}: {m}")))?;
            }
            if span < b.min() {
                return Err(invalid(
                    "workload.size",
                    format!(
                        "span {span} is smaller than the smallest block size {}",
                        b.min()
                    ),
                ));
            }
        }
        if self.loops == 0 {
            return Err(invalid("workload.loops", "must be at least 1"));
        }
        if self
            .io_size
            .is_some_and(|s| s.0 == 0 || s.0 > i64::MAX as u64)
        {
            return Err(invalid(
                "workload.io_size",
                format!("must be in 1..={} bytes", i64::MAX),
            ));
        }
        if !self.blockalign.0.is_multiple_of(SECTOR) || self.blockalign.0 > span {
            return Err(invalid(
                "workload.blockalign",
                "must be a multiple of 512 bytes, at most the span",
            ));
        }
        let zone = self.zone_range();
        if zone > 0 {
            for (name, v) in [
                ("zonesize", self.zonesize),
                ("zonerange", self.zonerange),
                ("zoneskip", self.zoneskip),
            ] {
                if !v.0.is_multiple_of(SECTOR) {
                    return Err(invalid(
                        &format!("workload.{name}"),
                        "must be a multiple of 512 bytes",
                    ));
                }
            }
            // The zones walk the device from `offset`, or the file.
            let room = match self.filesize {
                Some(_) => self.file_span(logical_bytes),
                None => logical_bytes - self.offset.0,
            };
            if zone < min_bs_of(self) || zone > room {
                return Err(invalid(
                    "workload.zonerange",
                    format!(
                        "a zone of {zone} bytes must hold a block ({}) and fit in the {room} \
                         bytes the zones walk (the device from offset, or filesize)",
                        min_bs_of(self),
                    ),
                ));
            }
            if self.nrfiles > 1 {
                return Err(invalid(
                    "workload.zonesize",
                    "strided zones work with one file (fio turns them off for several)",
                ));
            }
        } else if self.zonerange.0 > 0 || self.zoneskip.0 > 0 {
            return Err(invalid(
                "workload.zonesize",
                "zonerange and zoneskip need zonesize (the bytes done in each zone)",
            ));
        }
        if self.flow > super::flow_control::FLOW_MAX_WEIGHT {
            return Err(invalid(
                "workload.flow",
                format!(
                    "at most {}, as in fio",
                    super::flow_control::FLOW_MAX_WEIGHT
                ),
            ));
        }
        if self.flow > 0 && (!self.direct || self.rate_iops.is_some()) {
            return Err(invalid(
                "workload.flow",
                "flow control is modelled for direct closed-loop jobs (direct, no rate_iops)",
            ));
        }
        if let Some(z) = &self.zbd {
            z.validate()?;
            let refuse = |field: &str, why: &str| {
                Err(invalid(
                    &format!("workload.{field}"),
                    format!("zonemode=zbd: {why}"),
                ))
            };
            if zone > 0 || self.zoneskip.0 > 0 {
                return refuse(
                    "zonesize",
                    "strided zones and zoneskip do not apply (fio: zoneskip must be 0)",
                );
            }
            if !self.direct {
                return refuse(
                    "direct",
                    "jobs are modelled direct (fio: direct I/O is mandatory for writes)",
                );
            }
            if self.rate_iops.is_some() || !self.thinktime.is_zero() {
                return refuse(
                    "rate_iops",
                    "modelled for closed-loop jobs without rate or thinktime",
                );
            }
            if self.verify || self.nrfiles > 1 {
                return refuse("verify", "verify and several files are not modelled");
            }
            if matches!(self.rw, RwMode::TrimWrite | RwMode::RandTrimWrite) {
                return refuse("rw", "trim+write jobs are not modelled");
            }
            if matches!(self.rw, RwMode::Trim | RwMode::RandTrim)
                && self
                    .block_sizes
                    .as_ref()
                    .is_some_and(|b| b.0[2].min() != b.0[2].max())
            {
                return refuse("bs", "bsrange and bssplit are not allowed for trim");
            }
        }
        if self.random_map() {
            // One bit a block of the smallest size (fio allocates the same),
            // over one zone when there are zones.
            let bits = if zone > 0 { zone } else { span } / min_bs_of(self).max(1);
            if bits / 8 > MAX_RANDOM_MAP_BYTES {
                return Err(invalid(
                    "workload.norandommap",
                    format!(
                        "the random map of {bits} blocks would take {} MiB (at most {} MiB): \
                         set norandommap, a larger block size or a smaller size",
                        (bits / 8) >> 20,
                        MAX_RANDOM_MAP_BYTES >> 20
                    ),
                ));
            }
        }
        if self.nrfiles == 0 || self.nrfiles > 1 << 20 {
            return Err(invalid("workload.nrfiles", "must be in 1..=1048576"));
        }
        if self
            .filesize
            .is_some_and(|f| f.0 == 0 || !f.0.is_multiple_of(SECTOR))
        {
            return Err(invalid(
                "workload.filesize",
                "must be a positive multiple of 512 bytes",
            ));
        }
        let min = self.block_sizes.as_ref().map_or(self.bs.0, |b| b.min());
        if self.file_span(logical_bytes) < min {
            return Err(invalid(
                "workload.nrfiles",
                format!(
                    "{} files of the span leave each less than a block of {min} bytes",
                    self.nrfiles
                ),
            ));
        }
        if !self.thinktime.is_zero() {
            if !self.direct || self.rate_iops.is_some() {
                return Err(invalid(
                    "workload.thinktime",
                    "pauses are modelled for direct closed-loop jobs (direct, no rate_iops)",
                ));
            }
            if self.thinktime_blocks == 0 {
                return Err(invalid("workload.thinktime_blocks", "must be at least 1"));
            }
        }
        if self.ddir_seq_nr == 0 {
            return Err(invalid("workload.ddir_seq_nr", "must be at least 1"));
        }
        if !self.ddir_seq_add.0.is_multiple_of(SECTOR) || self.ddir_seq_add.0 > i64::MAX as u64 {
            return Err(invalid(
                "workload.ddir_seq_add",
                "must be a multiple of 512 bytes",
            ));
        }
        Ok(())
    }
    /// Whether requests need fio's pattern beyond one size over one range
    /// ([`pattern`]): the random map, sizes by direction, holes or random
    /// offsets every N requests.
    pub fn extended(&self) -> bool {
        self.random_map()
            || self.block_sizes.is_some()
            || self.ddir_seq_add.0 > 0
            || self.ddir_seq_nr > 1
            || self.blockalign.0 > 0
            || self.verify
            || self.nrfiles > 1
            || matches!(self.rw, RwMode::TrimWrite | RwMode::RandTrimWrite)
            || (self.rwmix_cycle && matches!(self.rw, RwMode::Rw | RwMode::RandRw))
            || self.zonesize.0 > 0
            || self.zbd.is_some()
    }
    /// Whether fio keeps its random map for this workload: uniform random
    /// addresses, `norandommap` unset and no alignment other than the
    /// smallest size.
    pub(super) fn random_map(&self) -> bool {
        let min = self.block_sizes.as_ref().map_or(self.bs.0, |b| b.min());
        !self.norandommap
            && self.rw.is_random()
            && self.random_distribution == Distribution::Uniform
            && (self.blockalign.0 == 0 || self.blockalign.0 == min)
    }
    /// The bytes the job may issue from its start (fio's `io_size`, else
    /// `size` once when `number_ios` is unset, times `loops`), and whether
    /// it is bounded by passes (`loops` passes when `io_size` is unset) or
    /// by bytes alone; None: no byte bound.
    pub(super) fn budget(&self, pass_bytes: u64) -> (u64, Option<u64>) {
        let loops = self.loops.max(1) as u64;
        match (self.io_size, self.number_ios) {
            (Some(s), _) => (s.0.saturating_mul(loops), None),
            (None, None) => (pass_bytes.saturating_mul(loops), Some(loops)),
            (None, Some(_)) => (u64::MAX, None),
        }
    }
    /// The extent of a strided zone (fio's `zonerange`, else `zonesize`:
    /// `fixup_options`); 0 without zones.
    pub fn zone_range(&self) -> u64 {
        if self.zonesize.0 == 0 {
            0
        } else if self.zonerange.0 > 0 {
            self.zonerange.0
        } else {
            self.zonesize.0
        }
    }
    /// Address span in bytes (a job of files: all of them).
    pub fn span(&self, logical_bytes: u64) -> u64 {
        if let Some(f) = self.filesize {
            return f.0.saturating_mul(self.nrfiles.max(1) as u64);
        }
        self.size
            .map(|s| s.0)
            .unwrap_or(logical_bytes.saturating_sub(self.offset.0))
    }
    /// Each file's span: `filesize`, or the span divided among the files
    /// in whole smallest blocks.
    pub fn file_span(&self, logical_bytes: u64) -> u64 {
        let min = self
            .block_sizes
            .as_ref()
            .map_or(self.bs.0, |b| b.min())
            .max(1);
        match self.filesize {
            Some(f) => f.0,
            None => {
                let each = self.span(logical_bytes) / self.nrfiles.max(1) as u64;
                each - each % min
            }
        }
    }
    /// Closed loop at `iodepth`, or open loop when `rate_iops` is set; a
    /// job that pauses (`thinktime`), writes zones (`zbd`: it waits for
    /// its requests before a zone reset) or is held back by its flow group
    /// (`flow`) reacts to its completions.
    pub fn timing(&self) -> Timing {
        if !self.thinktime.is_zero() || self.zbd.is_some() || self.flow > 0 {
            Timing::Reactive
        } else if self.rate_iops.is_some() {
            Timing::OpenLoop
        } else {
            Timing::ClosedLoop {
                depth: self.iodepth,
            }
        }
    }
}

/// The options of fio's `zonemode=zbd` (`[workload.zbd]`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ZbdOptions {
    /// fio's `zonesize`: on a zoned drive, the drive's zone size (0: take
    /// it; another value is refused, as `zbd_zone_align_file_sizes` does);
    /// on a drive without zones, the size of the zones fio emulates (then
    /// needed, `init_zone_info`).
    #[serde(default, skip_serializing_if = "is_zero_size")]
    pub zonesize: Size,
    /// fio's `zonecapacity`: an emulated zone's writable bytes (0: the zone
    /// size); ignored on a zoned drive, whose zones say theirs.
    #[serde(default, skip_serializing_if = "is_zero_size")]
    pub zonecapacity: Size,
    /// fio's `max_open_zones`: the zones all jobs on the device write at
    /// once (0: the device's limit, or none).
    #[serde(default, skip_serializing_if = "is_zero_u32")]
    pub max_open_zones: u32,
    /// fio's `job_max_open_zones`: the zones this job writes at once (0: no
    /// limit of its own).
    #[serde(default, skip_serializing_if = "is_zero_u32")]
    pub job_max_open_zones: u32,
    /// fio's `ignore_zone_limits`: `max_open_zones` may exceed the
    /// device's.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub ignore_zone_limits: bool,
    /// fio's `zone_reset_threshold`: past this share of the job's range
    /// written, zones are reset as `zone_reset_frequency` says (0: never).
    #[serde(default, skip_serializing_if = "is_zero_f64")]
    pub zone_reset_threshold: f64,
    /// fio's `zone_reset_frequency`: past the threshold, the zone of every
    /// `1 / frequency`-th write is reset first (0: never).
    #[serde(default, skip_serializing_if = "is_zero_f64")]
    pub zone_reset_frequency: f64,
    /// fio's `read_beyond_wp`: reads may go past a zone's write pointer.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub read_beyond_wp: bool,
}

fn is_zero_f64(v: &f64) -> bool {
    *v == 0.0
}

/// fio's `ZBD_MAX_WRITE_ZONES`: the most zones the write-zone table holds.
pub const ZBD_MAX_WRITE_ZONES: u32 = 4096;

impl ZbdOptions {
    /// The options' own rules (the device's are checked when the run
    /// starts). Errors name the field.
    pub fn validate(&self) -> Result<(), ConfigError> {
        for (f, v) in [
            ("zone_reset_threshold", self.zone_reset_threshold),
            ("zone_reset_frequency", self.zone_reset_frequency),
        ] {
            if !(0.0..=1.0).contains(&v) {
                return Err(invalid(
                    &format!("workload.zbd.{f}"),
                    format!("must be between 0 and 1, got {v}"),
                ));
            }
        }
        if self.max_open_zones > ZBD_MAX_WRITE_ZONES {
            return Err(invalid(
                "workload.zbd.max_open_zones",
                format!("at most {ZBD_MAX_WRITE_ZONES}, as in fio"),
            ));
        }
        if self.job_max_open_zones > ZBD_MAX_WRITE_ZONES {
            return Err(invalid(
                "workload.zbd.job_max_open_zones",
                format!("at most {ZBD_MAX_WRITE_ZONES}, as in fio"),
            ));
        }
        if !self.zonesize.0.is_multiple_of(SECTOR) || !self.zonecapacity.0.is_multiple_of(SECTOR) {
            return Err(invalid(
                "workload.zbd.zonesize",
                "zonesize and zonecapacity must be multiples of 512 bytes",
            ));
        }
        if self.zonecapacity.0 > 0 && self.zonesize.0 > 0 && self.zonecapacity > self.zonesize {
            return Err(invalid(
                "workload.zbd.zonecapacity",
                format!(
                    "zonecapacity {} is larger than zonesize {}",
                    self.zonecapacity.0, self.zonesize.0
                ),
            ));
        }
        Ok(())
    }
}
