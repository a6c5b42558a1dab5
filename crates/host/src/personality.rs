//! Filebench-like workload personalities at block level: varmail, fileserver,
//! webserver (Sun et al. table 2, spec/host.md) and an OLTP-like mix.
//!
//! The file set is laid out contiguously from `offset`: file `i` owns a slot of
//! twice its nominal size (room for appends), aligned to 4 KiB. Threads are
//! streams; the source is closed loop with `threads * depth_per_thread`
//! outstanding requests and hands out requests round robin over the threads, so
//! each thread's flow (whole-file reads in `read_size` chunks, appends, rewrites,
//! fsyncs) stays in order. Everything is drawn from one seeded [`SimRng`] stream,
//! so a personality is a pure function of its config and seed.
//!
//! Flows (per thread, one operation at a time):
//! * varmail: read a whole file (read_fraction), else append `io_size` (mean;
//!   uniform 4 KiB steps in [io/2, 3io/2]) to a file and fsync (a Flush request).
//!   A file whose slot is full is deleted (Trim of its slot) and recreated.
//! * fileserver: read a whole file, else half of the writes append `io_size`,
//!   half rewrite a whole file (Trim, then `file_size` written in `read_size`
//!   chunks, as filebench's createfile + writewholefile).
//! * webserver: read a whole file, else append `io_size` to a shared log region
//!   placed after the file set (sequential, wrapping).
//! * oltp: `io_size` (8 KiB) requests at aligned random places of one table
//!   space of `files * file_size`; `hot_access` of them fall in the first
//!   `hot_fraction` of it; reads with `read_fraction`.
//!
//! With `prealloc` (default) the stream starts with the writes that create the
//! file set (filebench preallocates its file set too), so later reads hit
//! written flash; they count as requests of the run.

use crate::workload::{AppSource, HostRequest, IoOp, RequestSource, SourceError, Timing, SECTOR};
use rand::Rng;
use serde::{Deserialize, Serialize};
use ssd_core::error::{invalid, ConfigError};
use ssd_core::rng::{SimRng, SimRngExt};
use ssd_core::units::{SimTime, Size};

/// Which personality.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PersonalityKind {
    /// Mail server: whole-file reads, appends with fsync, delete and recreate (Filebench's
    /// varmail).
    Varmail,
    /// File server: whole-file reads, appends and whole-file rewrites (Filebench's fileserver).
    Fileserver,
    /// Web server: whole-file reads and appends to a shared log (Filebench's webserver).
    Webserver,
    /// Database-like: small aligned random reads and writes over one table space with a hot set.
    Oltp,
    /// Random overwrites of one pre-allocated file: aligned `io_size` writes at uniformly
    /// drawn places (Filebench's randomwrite).
    Randomwrite,
}

impl PersonalityKind {
    /// The personalities' names, as `[personality] kind` takes them.
    pub const NAMES: &'static [&'static str] =
        &["varmail", "fileserver", "webserver", "oltp", "randomwrite"];
    /// Parse a personality's name (see [`PersonalityKind::NAMES`]); an error lists them.
    pub fn parse(s: &str) -> Result<PersonalityKind, String> {
        Ok(match s {
            "varmail" => PersonalityKind::Varmail,
            "fileserver" => PersonalityKind::Fileserver,
            "webserver" => PersonalityKind::Webserver,
            "oltp" => PersonalityKind::Oltp,
            "randomwrite" => PersonalityKind::Randomwrite,
            _ => {
                return Err(format!(
                    "unknown personality {s:?} (known: {})",
                    Self::NAMES.join(", ")
                ))
            }
        })
    }
}

/// Overrides of a personality's parameters (None = the table's value).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PersonalityConfig {
    /// Which personality.
    pub kind: PersonalityKind,
    /// Files in the file set (default: varmail, webserver 1,000; fileserver 10,000; oltp 1
    /// table space).
    #[serde(default)]
    pub files: Option<u64>,
    /// Nominal file size (default: 16 KiB; fileserver 128 KiB; oltp 1 GiB).
    #[serde(default)]
    pub file_size: Option<Size>,
    /// Threads, each a stream (default: varmail 16, fileserver 50, webserver 100, oltp 32).
    #[serde(default)]
    pub threads: Option<u32>,
    /// Mean write (append) size; the request size for oltp.
    #[serde(default)]
    pub io_size: Option<Size>,
    /// Largest read (and whole-file write) request.
    #[serde(default)]
    pub read_size: Option<Size>,
    /// Share of operations that are reads, 0..=1.
    #[serde(default)]
    pub read_fraction: Option<f64>,
    /// Outstanding requests per thread.
    #[serde(default = "one")]
    pub depth_per_thread: u32,
    /// Requests to generate (after preallocation).
    #[serde(default = "default_requests")]
    pub requests: u64,
    /// Where the file set starts on the device.
    #[serde(default)]
    pub offset: Size,
    /// oltp: share of the table space that is hot.
    #[serde(default)]
    pub hot_fraction: Option<f64>,
    /// oltp: share of requests that go to the hot set.
    #[serde(default)]
    pub hot_access: Option<f64>,
    /// varmail: fsync (Flush) after each append.
    #[serde(default)]
    pub fsync: Option<bool>,
    /// Write the file set first.
    #[serde(default = "yes")]
    pub prealloc: bool,
    /// Seed of the personality's stream; default derived from sim.seed.
    #[serde(default)]
    pub seed: Option<u64>,
    /// Filebench's `directio`: bypass the page cache. Default: true at
    /// block level, false (Filebench's default) at file level. False runs
    /// the personality through `[page_cache]` (each thread a synchronous
    /// application thread, its Flush an fsync); at file level, true opens
    /// every read and write flowop's file `O_DIRECT` (the file system's
    /// metadata and the preallocation still go through the cache).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub direct: Option<bool>,
    /// `block`: the block-level flows of this module; `file`: Filebench's
    /// own flowops on files (`crate::filebench`), buffered.
    #[serde(default)]
    pub level: PersonalityLevel,
    /// File level: percent of the file set that exists at the start
    /// (Filebench's `prealloc`; default 80, webserver 100).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prealloc_percent: Option<u32>,
    /// File-level oltp: database writer threads (Filebench's `ndbwriters`,
    /// default 10); `threads` is its `nshadows`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub db_writers: Option<u32>,
}

/// How a personality is modelled.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PersonalityLevel {
    /// Block-level flows on a fixed per-file layout.
    #[default]
    Block,
    /// Filebench's flowops on files, on an extent allocator.
    File,
}

impl PersonalityConfig {
    /// Does the personality bypass the page cache?
    pub fn is_direct(&self) -> bool {
        self.direct.unwrap_or(self.level == PersonalityLevel::Block)
    }

    /// Whether the personality runs through a page cache: at file level
    /// always (its metadata and the file system's own I/O go through it,
    /// and with `direct` its data calls bypass it one by one), at block
    /// level unless it is direct.
    pub fn uses_page_cache(&self) -> bool {
        self.level == PersonalityLevel::File || !self.is_direct()
    }
}

fn one() -> u32 {
    1
}
fn yes() -> bool {
    true
}
fn default_requests() -> u64 {
    200_000
}

impl PersonalityConfig {
    /// The personality `kind` with every parameter at its default (block level, 200,000
    /// requests, preallocation on).
    pub fn new(kind: PersonalityKind) -> Self {
        PersonalityConfig {
            kind,
            files: None,
            file_size: None,
            threads: None,
            io_size: None,
            read_size: None,
            read_fraction: None,
            depth_per_thread: 1,
            requests: default_requests(),
            offset: Size(0),
            hot_fraction: None,
            hot_access: None,
            fsync: None,
            prealloc: true,
            seed: None,
            direct: None,
            level: PersonalityLevel::Block,
            prealloc_percent: None,
            db_writers: None,
        }
    }

    /// The parameters with the table's defaults filled in.
    pub fn resolve(&self) -> Params {
        use PersonalityKind::*;
        let (files, fsize, threads, io, rf) = match self.kind {
            Varmail => (1_000, Size::kib(16), 16, Size::kib(16), 0.5),
            Fileserver => (10_000, Size::kib(128), 50, Size::kib(16), 1.0 / 3.0),
            Webserver => (1_000, Size::kib(16), 100, Size::kib(16), 10.0 / 11.0),
            Oltp => (1, Size::gib(1), 32, Size::kib(8), 0.7),
            // randomwrite.f: one 5 GiB file, one thread, 8 KiB writes.
            Randomwrite => (1, Size::gib(5), 1, Size::kib(8), 0.0),
        };
        Params {
            kind: self.kind,
            files: self.files.unwrap_or(files),
            file_size: self.file_size.unwrap_or(fsize).0,
            threads: self.threads.unwrap_or(threads),
            io_size: self.io_size.unwrap_or(io).0,
            read_size: self.read_size.unwrap_or(Size::mib(1)).0,
            read_fraction: self.read_fraction.unwrap_or(rf),
            depth_per_thread: self.depth_per_thread,
            requests: self.requests,
            offset: self.offset.0,
            hot_fraction: self.hot_fraction.unwrap_or(0.2),
            hot_access: self.hot_access.unwrap_or(0.8),
            fsync: self.fsync.unwrap_or(self.kind == Varmail),
            prealloc: self.prealloc,
        }
    }
}

/// Resolved personality parameters (bytes).
#[derive(Clone, Debug, PartialEq)]
pub struct Params {
    /// Which personality.
    pub kind: PersonalityKind,
    /// Files in the file set.
    pub files: u64,
    /// Nominal file size, bytes.
    pub file_size: u64,
    /// Threads (streams).
    pub threads: u32,
    /// Mean append size, or the oltp request size, bytes.
    pub io_size: u64,
    /// Largest read request, bytes.
    pub read_size: u64,
    /// Share of operations that are reads, 0..=1.
    pub read_fraction: f64,
    /// Outstanding requests per thread.
    pub depth_per_thread: u32,
    /// Requests to generate after preallocation.
    pub requests: u64,
    /// Start of the file set on the device, bytes.
    pub offset: u64,
    /// oltp: share of the table space that is hot, 0..=1.
    pub hot_fraction: f64,
    /// oltp: share of requests that go to the hot set, 0..=1.
    pub hot_access: f64,
    /// Whether each append is followed by an fsync (Flush request).
    pub fsync: bool,
    /// Whether the stream starts by writing the file set.
    pub prealloc: bool,
}

const ALIGN: u64 = 4096;
const LOG_BYTES: u64 = 64 << 20;

fn round_up(x: u64, a: u64) -> u64 {
    x.div_ceil(a) * a
}

impl Params {
    /// Bytes one file's slot takes.
    pub fn slot(&self) -> u64 {
        if matches!(
            self.kind,
            PersonalityKind::Oltp | PersonalityKind::Randomwrite
        ) {
            round_up(self.file_size, ALIGN)
        } else {
            round_up(self.file_size * 2, ALIGN)
        }
    }
    /// Bytes the layout needs from `offset` on.
    pub fn footprint(&self) -> u64 {
        let log = if self.kind == PersonalityKind::Webserver {
            LOG_BYTES
        } else {
            0
        };
        self.files.saturating_mul(self.slot()).saturating_add(log)
    }

    /// Check the parameters against a drive of `logical_bytes`: sizes whole sectors, shares in
    /// 0..=1, the layout within the device; an error names the field.
    pub fn validate(&self, logical_bytes: u64) -> Result<(), ConfigError> {
        let sec = |v: u64, f: &str| {
            if v == 0 || v / SECTOR * SECTOR != v {
                Err(invalid(
                    f,
                    format!("must be a positive multiple of 512 bytes, got {v}"),
                ))
            } else {
                Ok(())
            }
        };
        sec(self.file_size, "personality.file_size")?;
        sec(self.io_size, "personality.io_size")?;
        sec(self.read_size, "personality.read_size")?;
        if self.offset / ALIGN * ALIGN != self.offset {
            return Err(invalid("personality.offset", "must be a multiple of 4 KiB"));
        }
        if self.files == 0 {
            return Err(invalid("personality.files", "must be at least 1"));
        }
        if self.threads == 0 {
            return Err(invalid("personality.threads", "must be at least 1"));
        }
        if self.depth_per_thread == 0 {
            return Err(invalid(
                "personality.depth_per_thread",
                "must be at least 1",
            ));
        }
        for (v, f) in [
            (self.read_fraction, "personality.read_fraction"),
            (self.hot_fraction, "personality.hot_fraction"),
            (self.hot_access, "personality.hot_access"),
        ] {
            if !(0.0..=1.0).contains(&v) {
                return Err(invalid(f, format!("must be in 0..=1, got {v}")));
            }
        }
        if self.io_size > u32::MAX as u64 * SECTOR / 2 || self.read_size > 1 << 30 {
            return Err(invalid("personality.io_size", "too large"));
        }
        if matches!(
            self.kind,
            PersonalityKind::Oltp | PersonalityKind::Randomwrite
        ) && self.file_size < self.io_size
        {
            return Err(invalid(
                "personality.file_size",
                "the oltp table space (randomwrite's file) must hold at least one io_size request",
            ));
        }
        let need = self.offset.saturating_add(self.footprint());
        if need > logical_bytes {
            return Err(invalid(
                "personality.files",
                format!(
                    "the file set needs {need} bytes from the device start (files x 2 x file_size, plus offset{}), more than the logical capacity of {logical_bytes} bytes",
                    if self.kind == PersonalityKind::Webserver { " and a 64 MiB log" } else { "" }
                ),
            ));
        }
        Ok(())
    }
}

/// A thread's operation in progress: `left` bytes still to issue from `at`.
#[derive(Clone, Copy, Debug, Default)]
struct Flow {
    op: Option<IoOp>,
    at: u64,
    left: u64,
    chunk: u64,
    /// Flush to issue after the last chunk.
    then_flush: bool,
    /// The file (its inode number, see [`Personality::ino`]).
    ino: u32,
}

/// The personality as a closed-loop [`RequestSource`].
pub struct Personality {
    p: Params,
    rng: SimRng,
    flows: Vec<Flow>,
    /// Current length of each file (bytes).
    len: Vec<u64>,
    log_at: u64,
    next_thread: u32,
    emitted: u64,
    prealloc_file: u64,
    pre_at: u64,
    pre_left: u64,
    prealloc_requests: u64,
}

impl Personality {
    /// Build from a config; `seed` is used unless the config sets one.
    pub fn new(
        cfg: &PersonalityConfig,
        logical_bytes: u64,
        seed: u64,
    ) -> Result<Personality, ConfigError> {
        let p = cfg.resolve();
        p.validate(logical_bytes)?;
        let rng = SimRng::from_seed_label(cfg.seed.unwrap_or(seed), "personality");
        let files = if matches!(p.kind, PersonalityKind::Oltp | PersonalityKind::Randomwrite) {
            0
        } else {
            p.files
        };
        Ok(Personality {
            flows: vec![Flow::default(); p.threads as usize],
            len: vec![p.file_size; files as usize],
            log_at: 0,
            next_thread: 0,
            emitted: 0,
            prealloc_file: if p.prealloc { 0 } else { p.files },
            pre_at: 0,
            pre_left: 0,
            prealloc_requests: 0,
            rng,
            p,
        })
    }
    /// The resolved parameters.
    pub fn params(&self) -> &Params {
        &self.p
    }

    fn file_start(&self, f: u64) -> u64 {
        self.p.offset + f * self.p.slot()
    }

    /// The request's `tag` names the file it is a call on (its inode
    /// number): file `i` is `i + 1`, the webserver log `files + 1`, the oltp
    /// table space 1; the page cache writes back and fsyncs per file.
    fn req(op: IoOp, at: u64, bytes: u64, stream: u32, ino: u32) -> HostRequest {
        HostRequest {
            arrival: SimTime::ZERO,
            op,
            lba: at / SECTOR,
            sectors: (bytes / SECTOR) as u32,
            stream,
            tag: ino,
            // At block level with `direct`, an O_DIRECT write: REQ_SYNC
            // (as fio's, [`crate::workload::FioGen`]). Through the page
            // cache the cache marks its own writes.
            sync: op == IoOp::Write,
            placement: ssd_core::workload::Placement::NONE,
        }
    }

    /// The inode number of file `f`.
    fn ino(f: u64) -> u32 {
        (f + 1).min(u32::MAX as u64 - 1) as u32
    }

    /// Preallocation: the file set written file by file in `read_size`
    /// chunks; file `i` is written by stream `i % threads`.
    fn next_prealloc(&mut self) -> Option<HostRequest> {
        if self.pre_left == 0 {
            if self.prealloc_file >= self.p.files {
                return None;
            }
            self.pre_at = self.file_start(self.prealloc_file);
            self.pre_left = self.p.file_size;
            self.prealloc_file += 1;
        }
        let n = self.pre_left.min(self.p.read_size);
        let stream = ((self.prealloc_file - 1) % self.p.threads as u64) as u32;
        let r = Self::req(
            IoOp::Write,
            self.pre_at,
            n,
            stream,
            Self::ino(self.prealloc_file - 1),
        );
        self.pre_at += n;
        self.pre_left -= n;
        Some(r)
    }

    fn append_size(&mut self) -> u64 {
        let io = self.p.io_size;
        if io < 2 * ALIGN {
            return io;
        }
        let lo = (io / 2).div_ceil(ALIGN);
        let hi = (io + io / 2) / ALIGN;
        self.rng.gen_range(lo..=hi) * ALIGN
    }

    /// Start the next operation of thread `th`; may leave the flow empty only
    /// if nothing is to be done (never, for these personalities).
    fn start_op(&mut self, th: u32) -> Option<HostRequest> {
        use PersonalityKind::*;
        let p = &self.p;
        let read = self.rng.gen::<f64>() < p.read_fraction;
        if p.kind == Randomwrite {
            // Uniform over the file (Filebench's `random`, `workingset=0`).
            let b = self.rng.gen_range(0..(p.file_size / p.io_size).max(1));
            let op = if read { IoOp::Read } else { IoOp::Write };
            return Some(Self::req(op, p.offset + b * p.io_size, p.io_size, th, 1));
        }
        if p.kind == Oltp {
            let blocks = p.file_size / p.io_size;
            let hot = ((blocks as f64 * p.hot_fraction) as u64).max(1);
            let b = if self.rng.gen::<f64>() < p.hot_access || hot >= blocks {
                self.rng.gen_range(0..hot)
            } else {
                self.rng.gen_range(hot..blocks)
            };
            let op = if read { IoOp::Read } else { IoOp::Write };
            return Some(Self::req(op, p.offset + b * p.io_size, p.io_size, th, 1));
        }
        let file = self.rng.gen_range(0..p.files);
        let start = self.file_start(file);
        let slot = p.slot();
        let (read_size, file_size, fsync) = (p.read_size, p.file_size, p.fsync);
        let kind = p.kind;
        let flow;
        if read {
            flow = Flow {
                op: Some(IoOp::Read),
                at: start,
                left: self.len[file as usize].max(SECTOR),
                chunk: read_size,
                then_flush: false,
                ino: Self::ino(file),
            };
        } else {
            match kind {
                Webserver => {
                    let n = self.append_size().min(LOG_BYTES);
                    let log0 = self.p.offset + self.p.files * slot;
                    if self.log_at + n > LOG_BYTES {
                        self.log_at = 0;
                    }
                    let at = log0 + self.log_at;
                    self.log_at += n;
                    flow = Flow {
                        op: Some(IoOp::Write),
                        at,
                        left: n,
                        chunk: read_size,
                        then_flush: false,
                        ino: Self::ino(self.p.files),
                    };
                }
                Varmail | Fileserver => {
                    let rewrite = kind == Fileserver && self.rng.gen::<bool>();
                    let n = self.append_size();
                    let cur = self.len[file as usize];
                    if rewrite || cur + n > slot {
                        // delete + create + write whole file
                        self.len[file as usize] = file_size;
                        let f = &mut self.flows[th as usize];
                        *f = Flow {
                            op: Some(IoOp::Write),
                            at: start,
                            left: file_size,
                            chunk: read_size,
                            then_flush: fsync,
                            ino: Self::ino(file),
                        };
                        return Some(Self::req(IoOp::Trim, start, slot, th, Self::ino(file)));
                    }
                    self.len[file as usize] = cur + n;
                    flow = Flow {
                        op: Some(IoOp::Write),
                        at: start + cur,
                        left: n,
                        chunk: read_size,
                        then_flush: fsync,
                        ino: Self::ino(file),
                    };
                }
                Oltp | Randomwrite => unreachable!(),
            }
        }
        self.flows[th as usize] = flow;
        self.continue_op(th)
    }

    fn continue_op(&mut self, th: u32) -> Option<HostRequest> {
        let f = &mut self.flows[th as usize];
        let op = f.op?;
        if f.left == 0 {
            f.op = None;
            if f.then_flush {
                f.then_flush = false;
                return Some(HostRequest {
                    arrival: SimTime::ZERO,
                    op: IoOp::Flush,
                    lba: 0,
                    sectors: 0,
                    stream: th,
                    tag: f.ino,
                    sync: false,
                    placement: ssd_core::workload::Placement::NONE,
                });
            }
            return None;
        }
        let n = f.left.min(f.chunk);
        let r = Self::req(op, f.at, n, th, f.ino);
        f.at += n;
        f.left -= n;
        Some(r)
    }
}

/// A block-level personality run buffered: one piece a call, nothing beyond its bytes.
impl AppSource for Personality {}

impl RequestSource for Personality {
    fn timing(&self) -> Timing {
        Timing::ClosedLoop {
            depth: self.p.threads.saturating_mul(self.p.depth_per_thread),
        }
    }
    fn next_request(&mut self) -> Option<Result<HostRequest, SourceError>> {
        if let Some(r) = self.next_prealloc() {
            self.prealloc_requests += 1;
            return Some(Ok(r));
        }
        let th = self.next_thread;
        self.next_thread = (self.next_thread + 1) % self.p.threads;
        if self.emitted >= self.p.requests {
            return None;
        }
        self.emitted += 1;
        let r = match self.continue_op(th) {
            Some(r) => r,
            None => self
                .start_op(th)
                .expect("every personality op issues a request"),
        };
        Some(Ok(r))
    }
    fn notes(&self) -> Vec<(String, u64)> {
        vec![(
            "personality_prealloc_requests".to_string(),
            self.prealloc_requests,
        )]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const CAP: u64 = 16 << 30;

    fn run(cfg: &PersonalityConfig, seed: u64) -> (Personality, Vec<HostRequest>) {
        let mut g = Personality::new(cfg, CAP, seed).unwrap();
        let mut v = Vec::new();
        while let Some(r) = g.next_request() {
            v.push(r.unwrap());
        }
        (g, v)
    }

    fn measured(g: &Personality, v: &[HostRequest]) -> Vec<HostRequest> {
        v[g.prealloc_requests as usize..].to_vec()
    }

    fn cfg(kind: PersonalityKind, n: u64) -> PersonalityConfig {
        PersonalityConfig {
            requests: n,
            ..PersonalityConfig::new(kind)
        }
    }

    /// randomwrite at block level: the file written once, then 8 KiB
    /// writes at uniformly drawn 8 KiB-aligned places in its range.
    #[test]
    fn randomwrite_overwrites_one_files_range_uniformly() {
        let (g, v) = run(&cfg(PersonalityKind::Randomwrite, 20_000), 2);
        let file = 5u64 << 30;
        let pre = &v[..g.prealloc_requests as usize];
        let pre_bytes: u64 = pre.iter().map(|r| r.sectors as u64 * SECTOR).sum();
        assert_eq!(pre_bytes, file);
        let m = measured(&g, &v);
        assert_eq!(m.len(), 20_000);
        let mut halves = [0u32; 2];
        for r in &m {
            assert_eq!((r.op, r.sectors as u64 * SECTOR), (IoOp::Write, 8 << 10));
            let at = r.lba * SECTOR;
            assert!(at.is_multiple_of(8 << 10) && at + (8 << 10) <= file, "{at}");
            halves[(at >= file / 2) as usize] += 1;
        }
        assert!(halves[0].abs_diff(halves[1]) < 600, "{halves:?}");
    }

    #[test]
    fn deterministic_per_seed() {
        for kind in [
            PersonalityKind::Varmail,
            PersonalityKind::Fileserver,
            PersonalityKind::Webserver,
            PersonalityKind::Oltp,
            PersonalityKind::Randomwrite,
        ] {
            let c = cfg(kind, 3000);
            let (_, a) = run(&c, 5);
            let (_, b) = run(&c, 5);
            let (_, d) = run(&c, 6);
            assert_eq!(a, b, "{kind:?}");
            assert_ne!(a, d, "{kind:?}: seed must matter");
        }
    }

    #[test]
    fn read_write_ratios_follow_the_table() {
        // (kind, expected reads / (reads + writes) over data requests, tolerance)
        for (kind, want) in [
            (PersonalityKind::Varmail, 0.5),
            (PersonalityKind::Webserver, 10.0 / 11.0),
            (PersonalityKind::Oltp, 0.7),
        ] {
            let (g, v) = run(&cfg(kind, 40_000), 1);
            let m = measured(&g, &v);
            let r = m.iter().filter(|q| q.op == IoOp::Read).count() as f64;
            let w = m.iter().filter(|q| q.op == IoOp::Write).count() as f64;
            let got = r / (r + w);
            assert!((got - want).abs() < 0.02, "{kind:?}: {got} vs {want}");
        }
        // fileserver: 1:2 by operation; a rewrite is a trim plus one 128 KiB write
        // (128 KiB < read_size), an append one write, so writes count operations.
        let (g, v) = run(&cfg(PersonalityKind::Fileserver, 40_000), 1);
        let m = measured(&g, &v);
        let reads = m.iter().filter(|q| q.op == IoOp::Read).count() as f64;
        let trims = m.iter().filter(|q| q.op == IoOp::Trim).count() as f64;
        let writes = m.iter().filter(|q| q.op == IoOp::Write).count() as f64;
        assert!(
            trims > 0.4 * writes && trims < 0.6 * writes,
            "half the writes rewrite"
        );
        let got = reads / (reads + writes);
        assert!((got - 1.0 / 3.0).abs() < 0.02, "fileserver {got}");
    }

    #[test]
    fn requests_stay_in_the_layout_and_are_aligned() {
        for kind in [
            PersonalityKind::Varmail,
            PersonalityKind::Fileserver,
            PersonalityKind::Webserver,
            PersonalityKind::Oltp,
        ] {
            let c = PersonalityConfig {
                offset: Size::mib(4),
                ..cfg(kind, 20_000)
            };
            let (g, v) = run(&c, 2);
            let lo = c.offset.0 / SECTOR;
            let hi = (c.offset.0 + g.params().footprint()) / SECTOR;
            for q in &v {
                if q.op == IoOp::Flush {
                    assert_eq!(q.sectors, 0);
                    continue;
                }
                assert!(
                    q.sectors > 0 && q.lba >= lo && q.lba + q.sectors as u64 <= hi,
                    "{kind:?} {q:?}"
                );
                assert_eq!(q.lba % 8, 0, "{kind:?}: 4 KiB aligned");
                assert!(q.stream < g.params().threads);
            }
        }
    }

    #[test]
    fn varmail_fsyncs_and_reads_whole_files() {
        let (g, v) = run(&cfg(PersonalityKind::Varmail, 10_000), 3);
        let m = measured(&g, &v);
        let flushes = m.iter().filter(|q| q.op == IoOp::Flush).count();
        let writes = m.iter().filter(|q| q.op == IoOp::Write).count();
        assert!(flushes > 0 && flushes <= writes);
        assert_eq!(g.prealloc_requests, 1000, "one 16 KiB write per file");
        // appends: 8..24 KiB in 4 KiB steps
        assert!(m
            .iter()
            .filter(|q| q.op == IoOp::Write)
            .all(|q| q.bytes() % 4096 == 0 && q.bytes() <= 32 << 10));
    }

    #[test]
    fn oltp_hot_set_takes_most_accesses() {
        let (g, v) = run(&cfg(PersonalityKind::Oltp, 50_000), 4);
        let m = measured(&g, &v);
        let hot_end = (g.params().file_size as f64 * 0.2) as u64 / SECTOR;
        let hot = m.iter().filter(|q| q.lba < hot_end).count() as f64 / m.len() as f64;
        assert!((hot - 0.8).abs() < 0.01, "{hot}");
        assert!(m.iter().all(|q| q.bytes() == 8192));
        assert_eq!(g.timing(), Timing::ClosedLoop { depth: 32 });
    }

    #[test]
    fn too_large_file_set_is_an_error_naming_the_field() {
        let c = PersonalityConfig {
            files: Some(1_000_000),
            ..PersonalityConfig::new(PersonalityKind::Fileserver)
        };
        let e = Personality::new(&c, CAP, 1).err().unwrap().to_string();
        assert!(e.starts_with("personality.files:"), "{e}");
        let bad: Result<PersonalityConfig, _> = toml::from_str("kind = \"varmail\"\nthreadz = 3\n");
        assert!(bad.unwrap_err().to_string().contains("threadz"));
        let ok: PersonalityConfig =
            toml::from_str("kind = \"oltp\"\nio_size = \"16KiB\"\n").unwrap();
        assert_eq!(ok.resolve().io_size, 16384);
    }
}
