//! Trace replay: streaming readers of the standard block-trace formats, trace
//! statistics and format conversion.
//!
//! Every reader is an iterator over a [`BufRead`]: a trace is never loaded whole.
//! The hot loop reuses one line buffer and splits fields by hand over bytes, so a
//! parsed line costs no heap allocation (errors, which end or skip a line, may
//! allocate their message).
//!
//! Layers:
//! * [`TraceReader`] turns lines into [`Record`]s (absolute time in ns, byte
//!   offset and size, op, device, stream) and reports bad lines as
//!   [`SourceError`]s located `file:line`, or skips and counts them.
//! * [`Replay`] applies [`ReplayOptions`] (rebasing to t=0, speed, closed or open
//!   loop, device filter, capacity wrap/reject, limits) and implements
//!   [`RequestSource`].
//! * [`TraceSource`] closes the input choice (plain file or gzip) into an enum;
//!   [`open_trace`] detects the format from content when it is not forced.
//!
//! Formats (see [`TraceFormat`]): SPC (UMass), MSR Cambridge CSV, blkparse text,
//! DiskSim ASCII, MQSim ASCII, MSR windows as cut by Heimdall (`msr-cut`), FIU
//! IODedup blkparse-like records, CloudPhysics VSCSI CSV, and ssdsim's own CSV.
//!
//! Over 1,500 lines on purpose: the readers of every format share one line
//! loop, one error type, the replay's reorder window and the statistics; each
//! format's own line parser is a file of its own beside this one.

mod blkparse;
mod cloudphysics;
mod csv;
mod disksim;
mod fiu;
mod mqsim;
mod msr;
mod msrcut;
pub mod record;
mod replay;
pub use replay::{OutOfRange, Replay, ReplayOptions, DEFAULT_REORDER_WINDOW, MAX_REORDER_WINDOW};
mod spc;
mod summary;
pub mod synth;

pub use summary::{stats, stats_reader, stats_with, SizeBucket, TraceStats};

use crate::workload::{HostRequest, IoOp, RequestSource, SourceError, Timing, SECTOR};
use flate2::read::MultiGzDecoder;
use serde::{Deserialize, Serialize};
use ssd_core::error::{invalid, ConfigError};
use ssd_core::units::{Dur, SimTime, Size};
use std::fmt;
use std::fs::File;
use std::io::{self, BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::str::FromStr;

// ------------------------------------------------------------------ formats

/// A trace file format the crate reads (and writes).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum TraceFormat {
    /// UMass/SPC: `ASU,LBA(sectors),size(bytes),R|W,time(s)[,...]`.
    Spc,
    /// MSR Cambridge: `filetime(100ns),host,disk,Read|Write,offset(B),size(B),resp(100ns)`.
    Msr,
    /// blkparse default text output; one action (Q by default) is replayed.
    Blkparse,
    /// DiskSim ASCII: `time(ms) devno blkno(sectors) size(sectors) flags(bit0=read)`.
    Disksim,
    /// MQSim ASCII: `time(ns) device lba(sectors) size(sectors) type(1=read,0=write)`.
    Mqsim,
    /// MSR windows as cut by Heimdall: `time(ms) device offset(B) size(B) type(1=read)`.
    MsrCut,
    /// FIU IODedup: `time(ns) pid process lba(sectors) size(sectors) R|W major minor md5`.
    Fiu,
    /// CloudPhysics VSCSI CSV (libCacheSim): header `version,time,op,size,lbn`;
    /// time in s, op a SCSI opcode in hex, size in bytes, lbn in sectors.
    Cloudphysics,
    /// ssdsim's CSV: header `time_ns,op,offset_bytes,size_bytes[,stream]`.
    Csv,
}

impl TraceFormat {
    /// Every format, in the order detection tries them.
    pub const ALL: [TraceFormat; 9] = [
        TraceFormat::Spc,
        TraceFormat::Msr,
        TraceFormat::Blkparse,
        TraceFormat::Disksim,
        TraceFormat::Mqsim,
        TraceFormat::MsrCut,
        TraceFormat::Fiu,
        TraceFormat::Cloudphysics,
        TraceFormat::Csv,
    ];
    /// The format's name, as `--trace-format` takes it.
    pub fn name(self) -> &'static str {
        match self {
            TraceFormat::Spc => "spc",
            TraceFormat::Msr => "msr",
            TraceFormat::Blkparse => "blkparse",
            TraceFormat::Disksim => "disksim",
            TraceFormat::Mqsim => "mqsim",
            TraceFormat::MsrCut => "msr-cut",
            TraceFormat::Fiu => "fiu",
            TraceFormat::Cloudphysics => "cloudphysics",
            TraceFormat::Csv => "csv",
        }
    }
}
impl fmt::Display for TraceFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}
impl FromStr for TraceFormat {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        TraceFormat::ALL
            .into_iter()
            .find(|f| f.name().eq_ignore_ascii_case(s))
            .ok_or_else(|| {
                let known: Vec<&str> = TraceFormat::ALL.iter().map(|f| f.name()).collect();
                format!("unknown trace format {s:?} (known: {})", known.join(", "))
            })
    }
}

// ------------------------------------------------------------------ errors

/// Errors opening, detecting, converting or summarising a trace.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TraceError {
    /// Reading or writing a file failed.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// The I/O error.
        #[source]
        source: io::Error,
    },
    /// The format of a file could not be detected.
    #[error(
        "{path}: cannot detect the trace format: {reason} (force one with --trace-format: {known})"
    )]
    Detect {
        /// The file.
        path: String,
        /// Why detection failed.
        reason: String,
        /// The known format names, for the message.
        known: &'static str,
    },
    /// A record could not be parsed (the error names the line).
    #[error(transparent)]
    Source(#[from] SourceError),
    /// The output format has no way to express a record (a trim in a format without trims, ...).
    #[error("{format} cannot represent {what}")]
    Unrepresentable {
        /// The output format.
        format: TraceFormat,
        /// What it cannot represent.
        what: String,
    },
    /// The replay options are invalid.
    #[error("replay options: {0}")]
    Options(#[from] ConfigError),
}

const KNOWN: &str = "spc, msr, blkparse, disksim, mqsim, msr-cut, fiu, cloudphysics, csv";

fn io_err(path: &Path) -> impl FnOnce(io::Error) -> TraceError + '_ {
    move |source| TraceError::Io {
        path: path.display().to_string(),
        source,
    }
}

fn io_err_fn(path: &Path) -> impl Fn(io::Error) -> TraceError + '_ {
    move |source| TraceError::Io {
        path: path.display().to_string(),
        source,
    }
}

// ------------------------------------------------------------------ records

/// One trace record in the trace's own terms, converted to common units.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Record {
    /// Absolute timestamp in ns as the trace gives it (not rebased).
    pub time_ns: u64,
    /// What the record asks for.
    pub op: Op,
    /// Start in bytes.
    pub offset: u64,
    /// Length in bytes.
    pub size: u64,
    /// Device / ASU / disk number (0 when the format has none).
    pub device: u32,
    /// Stream id the trace suggests (ASU, disk or host, pid, ...).
    pub stream: u32,
    /// The request was marked `REQ_SYNC` (blkparse's `S`); false in the
    /// formats that do not record it.
    pub sync: bool,
}

/// Record operation; `Default` only so a record can be reused as scratch.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Op {
    /// A read.
    #[default]
    Read,
    /// A write.
    Write,
    /// A trim (discard) of the range.
    Trim,
    /// A cache flush (no range).
    Flush,
    /// A zone append to the zone starting at the offset (ssdsim's CSV only).
    ZoneAppend,
    /// A zone reset of the zone starting at the offset (no range; CSV only).
    ZoneReset,
    /// A zone finish (no range; CSV only).
    ZoneFinish,
    /// A zone open (no range; CSV only).
    ZoneOpen,
    /// A zone close (no range; CSV only).
    ZoneClose,
}
impl From<Op> for IoOp {
    fn from(o: Op) -> IoOp {
        match o {
            Op::Read => IoOp::Read,
            Op::Write => IoOp::Write,
            Op::Trim => IoOp::Trim,
            Op::Flush => IoOp::Flush,
            Op::ZoneAppend => IoOp::ZoneAppend,
            Op::ZoneReset => IoOp::ZoneReset,
            Op::ZoneFinish => IoOp::ZoneFinish,
            Op::ZoneOpen => IoOp::ZoneOpen,
            Op::ZoneClose => IoOp::ZoneClose,
        }
    }
}
impl From<IoOp> for Op {
    fn from(o: IoOp) -> Op {
        match o {
            IoOp::Read => Op::Read,
            IoOp::Write => Op::Write,
            IoOp::Trim => Op::Trim,
            IoOp::Flush => Op::Flush,
            IoOp::ZoneAppend => Op::ZoneAppend,
            IoOp::ZoneReset => Op::ZoneReset,
            IoOp::ZoneFinish => Op::ZoneFinish,
            IoOp::ZoneOpen => Op::ZoneOpen,
            IoOp::ZoneClose => Op::ZoneClose,
        }
    }
}
impl Op {
    /// A command without a range: a flush or a zone management command.
    pub fn no_range(self) -> bool {
        IoOp::from(self) == IoOp::Flush || IoOp::from(self).is_zone_mgmt()
    }
}

// ------------------------------------------------------------------ field helpers

/// Space/tab separated fields (runs of separators count as one).
#[inline]
pub(crate) fn ws_fields(line: &[u8]) -> WsFields<'_> {
    WsFields { s: line, i: 0 }
}

/// Iterator of [`ws_fields`]: one pass over the bytes, no per-field closure.
pub(crate) struct WsFields<'a> {
    s: &'a [u8],
    i: usize,
}

impl<'a> Iterator for WsFields<'a> {
    type Item = &'a [u8];
    #[inline]
    fn next(&mut self) -> Option<&'a [u8]> {
        let s = self.s;
        let mut i = self.i;
        while i < s.len() && (s[i] == b' ' || s[i] == b'\t') {
            i += 1;
        }
        if i == s.len() {
            self.i = i;
            return None;
        }
        let start = i;
        while i < s.len() && s[i] != b' ' && s[i] != b'\t' {
            i += 1;
        }
        self.i = i;
        Some(&s[start..i])
    }
}

/// Comma separated fields (empty fields kept), each trimmed of spaces.
#[inline]
pub(crate) fn csv_fields(line: &[u8]) -> CsvFields<'_> {
    CsvFields {
        s: line,
        i: 0,
        done: false,
    }
}

/// Iterator of [`csv_fields`].
pub(crate) struct CsvFields<'a> {
    s: &'a [u8],
    i: usize,
    done: bool,
}

impl<'a> Iterator for CsvFields<'a> {
    type Item = &'a [u8];
    #[inline]
    fn next(&mut self) -> Option<&'a [u8]> {
        if self.done {
            return None;
        }
        let s = self.s;
        let start = self.i;
        let mut i = start;
        while i < s.len() && s[i] != b',' {
            i += 1;
        }
        if i == s.len() {
            self.done = true;
        }
        self.i = i + 1;
        Some(trim(&s[start..i]))
    }
}

#[inline]
pub(crate) fn trim(mut f: &[u8]) -> &[u8] {
    while let [b' ' | b'\t', rest @ ..] = f {
        f = rest;
    }
    while let [rest @ .., b' ' | b'\t'] = f {
        f = rest;
    }
    f
}

/// The most bytes of a field or line an error message quotes.
pub(crate) const SHOW_MAX: usize = 200;

/// A field or line for an error message: at most [`SHOW_MAX`] bytes of it (a
/// corrupt trace may have a line of megabytes), with its length when cut.
pub(crate) fn show(f: &[u8]) -> String {
    if f.len() <= SHOW_MAX {
        return String::from_utf8_lossy(f).into_owned();
    }
    format!(
        "{}... ({} bytes in all)",
        String::from_utf8_lossy(&f[..SHOW_MAX]),
        f.len()
    )
}

/// A `type` field of 1 (read) or 0 (write), as MQSim and the MSR cuts spell it.
#[inline]
pub(crate) fn read_write_flag(ty: &[u8]) -> Result<Op, String> {
    match ty {
        b"1" => Ok(Op::Read),
        b"0" => Ok(Op::Write),
        _ => Err(format!(
            "field \"type\": unknown type {:?} (1 = read, 0 = write)",
            show(ty)
        )),
    }
}

#[inline]
pub(crate) fn next_field<'a>(
    it: &mut impl Iterator<Item = &'a [u8]>,
    name: &str,
) -> Result<&'a [u8], String> {
    it.next().ok_or_else(|| format!("missing field {name:?}"))
}

/// The decimal digits of `line` from `*i`: their value and how many; `*i`
/// moves past them. For the formats' one-pass readers (`one_pass`), which
/// refuse a field of 20 digits or more, so the value wraps past 19 instead
/// of overflowing.
#[inline(always)]
pub(crate) fn digits_at(line: &[u8], i: &mut usize) -> (u64, usize) {
    let start = *i;
    let mut x: u64 = 0;
    while *i < line.len() {
        let d = line[*i].wrapping_sub(b'0');
        if d > 9 {
            break;
        }
        x = x.wrapping_mul(10).wrapping_add(d as u64);
        *i += 1;
    }
    (x, *i - start)
}

/// Spaces or tabs, then a field of 1-19 digits that ends at a space, a tab
/// or the line's end, from `*i` (which moves past it): its value and how
/// many digits; `None` for anything else (the whitespace-separated formats'
/// one-pass readers).
#[inline(always)]
pub(crate) fn ws_uint_at(line: &[u8], i: &mut usize) -> Option<(u64, usize)> {
    while *i < line.len() && (line[*i] == b' ' || line[*i] == b'\t') {
        *i += 1;
    }
    let (x, len) = digits_at(line, i);
    let ends = *i == line.len() || line[*i] == b' ' || line[*i] == b'\t';
    (len > 0 && len <= 19 && ends).then_some((x, len))
}

/// [`digits_at`], at most `max` digits (a time's parts).
#[inline(always)]
pub(crate) fn digits_at_most(line: &[u8], i: &mut usize, max: usize) -> (u64, usize) {
    let end = line.len().min(i.saturating_add(max));
    digits_at(&line[..end], i)
}

/// A non-negative decimal integer.
#[inline]
pub(crate) fn uint(f: &[u8], name: &str) -> Result<u64, String> {
    if f.is_empty() {
        return Err(format!("field {name:?} is empty"));
    }
    if f.len() <= 19 {
        // At most 19 digits: below 10^19 < 2^64, no overflow check needed.
        let mut v: u64 = 0;
        for &b in f {
            let d = b.wrapping_sub(b'0');
            if d > 9 {
                return Err(bad_number(f, name, "a non-negative integer"));
            }
            v = v * 10 + d as u64;
        }
        return Ok(v);
    }
    uint_checked(f, name)
}

#[cold]
fn uint_checked(f: &[u8], name: &str) -> Result<u64, String> {
    let mut v: u64 = 0;
    for &b in f {
        let d = b.wrapping_sub(b'0');
        if d > 9 {
            return Err(bad_number(f, name, "a non-negative integer"));
        }
        v = v
            .checked_mul(10)
            .and_then(|v| v.checked_add(d as u64))
            .ok_or_else(|| format!("field {name:?}: {} overflows 64 bits", show(f)))?;
    }
    Ok(v)
}

#[inline]
pub(crate) fn uint32(f: &[u8], name: &str) -> Result<u32, String> {
    let v = uint(f, name)?;
    u32::try_from(v).map_err(|_| format!("field {name:?}: {v} does not fit in 32 bits"))
}

const POW10: [u64; 20] = {
    let mut t = [1u64; 20];
    let mut i = 1;
    while i < 20 {
        t[i] = t[i - 1] * 10;
        i += 1;
    }
    t
};

/// A non-negative decimal `int[.frac]` scaled by 10^`pow` (extra digits truncated),
/// e.g. seconds to ns with pow = 9. No floating point: exact for the digits given.
#[inline]
pub(crate) fn decimal(f: &[u8], pow: u32, name: &str) -> Result<u64, String> {
    // Fast path: integer digits plus `pow` fraction digits fit in 19 digits, so
    // the scaled value is below 10^19 < 2^64 and cannot overflow.
    let mut v: u64 = 0;
    let mut i = 0;
    while i < f.len() {
        let d = f[i].wrapping_sub(b'0');
        if d > 9 {
            break;
        }
        v = v.wrapping_mul(10).wrapping_add(d as u64);
        i += 1;
    }
    if i + pow as usize > 19 {
        return decimal_checked(f, pow, name);
    }
    let int_len = i;
    let mut scale = 0u32;
    if i < f.len() {
        if f[i] != b'.' {
            return Err(bad_number(f, name, "a non-negative decimal number"));
        }
        i += 1;
        while i < f.len() {
            let d = f[i].wrapping_sub(b'0');
            if d > 9 {
                return Err(bad_number(f, name, "a non-negative decimal number"));
            }
            if scale < pow {
                v = v * 10 + d as u64;
                scale += 1;
            }
            i += 1;
        }
        if int_len == 0 && f.len() == 1 {
            return Err(format!("field {name:?} is empty"));
        }
    } else if int_len == 0 {
        return Err(format!("field {name:?} is empty"));
    }
    Ok(v * POW10[(pow - scale) as usize])
}

#[cold]
fn decimal_checked(f: &[u8], pow: u32, name: &str) -> Result<u64, String> {
    let (int, frac) = match f.iter().position(|&b| b == b'.') {
        Some(i) => (&f[..i], &f[i + 1..]),
        None => (f, &[][..]),
    };
    if int.is_empty() && frac.is_empty() {
        return Err(format!("field {name:?} is empty"));
    }
    let mut v: u64 = 0;
    for &b in int {
        let d = b.wrapping_sub(b'0');
        if d > 9 {
            return Err(bad_number(f, name, "a non-negative decimal number"));
        }
        v = v
            .checked_mul(10)
            .and_then(|v| v.checked_add(d as u64))
            .ok_or_else(|| format!("field {name:?}: {} overflows", show(f)))?;
    }
    let mut scale = 0;
    for &b in frac {
        let d = b.wrapping_sub(b'0');
        if d > 9 {
            return Err(bad_number(f, name, "a non-negative decimal number"));
        }
        if scale < pow {
            v = v
                .checked_mul(10)
                .and_then(|v| v.checked_add(d as u64))
                .ok_or_else(|| format!("field {name:?}: {} overflows", show(f)))?;
            scale += 1;
        }
    }
    while scale < pow {
        v = v
            .checked_mul(10)
            .ok_or_else(|| format!("field {name:?}: {} overflows", show(f)))?;
        scale += 1;
    }
    Ok(v)
}

#[cold]
fn bad_number(f: &[u8], name: &str, what: &str) -> String {
    if f.first() == Some(&b'-') {
        format!("field {name:?}: negative value {}", show(f))
    } else {
        format!("field {name:?}: expected {what}, got {:?}", show(f))
    }
}

#[inline]
pub(crate) fn sectors_to_bytes(s: u64, name: &str) -> Result<u64, String> {
    s.checked_mul(SECTOR)
        .ok_or_else(|| format!("field {name:?}: {s} sectors overflow a byte address"))
}

#[inline]
pub(crate) fn end_of_fields<'a>(
    it: &mut impl Iterator<Item = &'a [u8]>,
    fmt: &str,
    n: usize,
) -> Result<(), String> {
    match it.next() {
        None => Ok(()),
        Some(_) => Err(format!("too many fields for {fmt} (expected {n})")),
    }
}

// ------------------------------------------------------------------ parse context

/// Format-specific parse settings.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ParseOptions {
    /// blkparse action to replay (`Q` queue, `D` issue, `C` complete, ...).
    pub blkparse_action: u8,
    /// MSR: stream id from the hostname (FNV hash) instead of the disk number.
    pub msr_stream_by_host: bool,
}
impl Default for ParseOptions {
    fn default() -> Self {
        ParseOptions {
            blkparse_action: b'Q',
            msr_stream_by_host: false,
        }
    }
}

/// Parse one non-empty line. `Ok(true)`: `rec` holds a record; `Ok(false)`: the
/// line carries no I/O (header, comment, other blkparse action, summary).
#[inline]
fn parse_line(
    fmt: TraceFormat,
    line: &[u8],
    po: &ParseOptions,
    rec: &mut Record,
) -> Result<bool, String> {
    match fmt {
        TraceFormat::Spc => spc::parse(line, rec),
        TraceFormat::Msr => msr::parse(line, po, rec),
        TraceFormat::Blkparse => blkparse::parse(line, po, rec),
        TraceFormat::Disksim => disksim::parse(line, rec),
        TraceFormat::Mqsim => mqsim::parse(line, rec),
        TraceFormat::MsrCut => msrcut::parse(line, rec),
        TraceFormat::Fiu => fiu::parse(line, rec),
        TraceFormat::Cloudphysics => cloudphysics::parse(line, rec),
        TraceFormat::Csv => csv::parse(line, rec),
    }
}

// ------------------------------------------------------------------ raw reader

/// Streaming line reader: lines in, [`Record`]s out.
pub struct TraceReader<R> {
    input: R,
    buf: Vec<u8>,
    line: u64,
    label: String,
    format: TraceFormat,
    po: ParseOptions,
    skip_bad: bool,
    bad_lines: u64,
    non_io_lines: u64,
    records: u64,
    /// blkparse: the actions of the event lines seen before the first record
    /// (bit `letter - 'A'`), to say why a trace gave none.
    actions_seen: u32,
    done: bool,
}

impl<R: BufRead> TraceReader<R> {
    /// `label` names the input in error locations (`label:line`).
    pub fn new(input: R, format: TraceFormat, label: &str, po: ParseOptions) -> Self {
        TraceReader {
            input,
            buf: Vec::with_capacity(256),
            line: 0,
            label: label.to_string(),
            format,
            po,
            skip_bad: false,
            bad_lines: 0,
            non_io_lines: 0,
            records: 0,
            actions_seen: 0,
            done: false,
        }
    }
    /// Skip and count malformed lines instead of failing on the first.
    pub fn skip_bad_lines(mut self, yes: bool) -> Self {
        self.skip_bad = yes;
        self
    }
    /// The trace format being read.
    pub fn format(&self) -> TraceFormat {
        self.format
    }
    /// Lines read so far.
    pub fn lines(&self) -> u64 {
        self.line
    }
    /// Malformed lines skipped (with `skip_bad_lines`).
    pub fn bad_lines(&self) -> u64 {
        self.bad_lines
    }
    /// Well-formed lines that are no I/O (blkparse events of other actions, headers, ...), skipped.
    pub fn non_io_lines(&self) -> u64 {
        self.non_io_lines
    }

    fn err(&self, reason: String) -> SourceError {
        self.err_at(self.line, reason)
    }

    /// An error located at line `line` of the input.
    fn err_at(&self, line: u64, reason: String) -> SourceError {
        SourceError {
            location: format!("{}:{line}", self.label),
            reason,
        }
    }

    /// The next record, an error (which ends the stream), or `None` at the end.
    ///
    /// Lines are parsed straight out of the reader's buffer; only a line that
    /// straddles the end of the buffer is copied (into `self.buf`) first.
    pub fn next_record(&mut self) -> Option<Result<Record, SourceError>> {
        let mut rec = Record::default();
        loop {
            if self.done {
                return None;
            }
            let avail = match self.input.fill_buf() {
                Ok(b) => b,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Some(Err(self.read_error(e))),
            };
            if avail.is_empty() {
                self.done = true;
                if self.records == 0 && self.actions_seen != 0 {
                    return Some(Err(self.no_blkparse_records()));
                }
                return None;
            }
            let (outcome, used) = match find_newline(avail) {
                Some(i) => {
                    self.line += 1;
                    let l = &avail[..i];
                    let outcome = classify_line(self.format, l, &self.po, &mut rec);
                    if self.records == 0 && matches!(outcome, Line::NonIo) {
                        self.actions_seen |= blkparse_action_bit(self.format, l);
                    }
                    (outcome, i + 1)
                }
                None => {
                    // The line straddles the buffer end: gather it whole.
                    self.buf.clear();
                    self.buf.extend_from_slice(avail);
                    let n = avail.len();
                    self.input.consume(n);
                    if let Err(e) = self.input.read_until(b'\n', &mut self.buf) {
                        return Some(Err(self.read_error(e)));
                    }
                    self.line += 1;
                    let outcome = classify_line(self.format, &self.buf, &self.po, &mut rec);
                    if self.records == 0 && matches!(outcome, Line::NonIo) {
                        self.actions_seen |= blkparse_action_bit(self.format, &self.buf);
                    }
                    (outcome, 0)
                }
            };
            self.input.consume(used);
            match outcome {
                Line::Record => {
                    self.records += 1;
                    return Some(Ok(rec));
                }
                Line::Blank => {}
                Line::NonIo => self.non_io_lines += 1,
                Line::Bad(reason) => {
                    if self.skip_bad {
                        self.bad_lines += 1;
                    } else {
                        self.done = true;
                        return Some(Err(self.err(reason)));
                    }
                }
            }
        }
    }

    /// A blkparse trace whose event lines are all of other actions than the
    /// one replayed (e.g. a capture with I/D/C but no Q events): an error that
    /// says which actions it has, rather than an empty workload.
    #[cold]
    fn no_blkparse_records(&self) -> SourceError {
        let seen: Vec<String> = (0..26u8)
            .filter(|i| self.actions_seen & (1 << i) != 0)
            .map(|i| ((b'A' + i) as char).to_string())
            .collect();
        let want = self.po.blkparse_action;
        // Suggest an action the trace has: D (issued to the device) first, then
        // Q (queued: the per-request view), else the first one seen.
        let has = |a: u8| self.actions_seen & (1 << (a - b'A')) != 0;
        let suggest = [b'D', b'Q']
            .into_iter()
            .chain(b'A'..=b'Z')
            .find(|&a| a != want && has(a));
        let hint = match suggest {
            Some(a) => {
                let a = a as char;
                format!(
                    "; replay another one with `--set replay.blkparse_action={a}` \
                     (`trace stats` and `trace convert`: `--blkparse-action {a}`; D is what \
                     was issued to the device, Q what was queued)"
                )
            }
            None => String::new(),
        };
        SourceError {
            location: self.label.clone(),
            reason: format!(
                "no blkparse `{}` events with data in {} lines (the trace has actions {}){hint}",
                want as char,
                self.line,
                seen.join(", ")
            ),
        }
    }

    #[cold]
    fn read_error(&mut self, e: io::Error) -> SourceError {
        self.done = true;
        self.line += 1;
        let hint = if e.kind() == io::ErrorKind::UnexpectedEof
            || e.kind() == io::ErrorKind::InvalidInput
        {
            " (truncated or corrupt gzip?)"
        } else {
            ""
        };
        self.err(format!("read error: {e}{hint}"))
    }
}

/// For a blkparse event line, its action's bit (see `TraceReader::actions_seen`).
#[cold]
fn blkparse_action_bit(fmt: TraceFormat, raw: &[u8]) -> u32 {
    if fmt != TraceFormat::Blkparse {
        return 0;
    }
    // Trimmed as `classify_line` trims: a line gathered across the buffer's
    // end keeps its `\n`, and a CRLF line its `\r`, which would glue onto a
    // last field (`Q\n`) and hide the action.
    match blkparse::action_of(trim_line(raw)) {
        Some(a @ b'A'..=b'Z') => 1 << (a - b'A'),
        _ => 0,
    }
}

/// What one input line turned out to be.
enum Line {
    Record,
    /// Empty or `#` comment: skipped without counting.
    Blank,
    /// Carries no I/O (header, other blkparse action, summary).
    NonIo,
    Bad(String),
}

/// A raw line (its `\n` included or not) without its line end and the spaces
/// and tabs around it.
#[inline]
fn trim_line(raw: &[u8]) -> &[u8] {
    let mut l = raw;
    while let [rest @ .., b'\n' | b'\r' | b' ' | b'\t'] = l {
        l = rest;
    }
    while let [b' ' | b'\t', rest @ ..] = l {
        l = rest;
    }
    l
}

/// Trim a raw line (its `\n` included or not) and parse it into `rec`.
#[inline]
fn classify_line(fmt: TraceFormat, raw: &[u8], po: &ParseOptions, rec: &mut Record) -> Line {
    let l = trim_line(raw);
    if l.is_empty() || l[0] == b'#' {
        return Line::Blank;
    }
    match parse_line(fmt, l, po, rec) {
        Ok(true) => {
            if rec.size == 0 && !rec.op.no_range() {
                Line::Bad("field \"size\": zero-length request".to_string())
            } else if rec.offset.checked_add(rec.size).is_none() {
                Line::Bad("offset + size overflows 64 bits".to_string())
            } else {
                Line::Record
            }
        }
        Ok(false) => Line::NonIo,
        Err(reason) => Line::Bad(reason),
    }
}

/// Position of the first `\n`, eight bytes at a time (SWAR zero-byte test).
#[inline]
fn find_newline(s: &[u8]) -> Option<usize> {
    const LO: u64 = 0x0101_0101_0101_0101;
    const HI: u64 = 0x8080_8080_8080_8080;
    const NL: u64 = LO * b'\n' as u64;
    let mut i = 0;
    while i + 8 <= s.len() {
        let mut w = [0u8; 8];
        w.copy_from_slice(&s[i..i + 8]);
        let x = u64::from_le_bytes(w) ^ NL;
        // The lowest set bit marks the first zero byte exactly (borrows only
        // produce false positives above a true zero).
        let z = x.wrapping_sub(LO) & !x & HI;
        if z != 0 {
            return Some(i + (z.trailing_zeros() / 8) as usize);
        }
        i += 8;
    }
    s[i..].iter().position(|&b| b == b'\n').map(|p| i + p)
}

impl<R: BufRead> Iterator for TraceReader<R> {
    type Item = Result<Record, SourceError>;
    fn next(&mut self) -> Option<Self::Item> {
        self.next_record()
    }
}

// ------------------------------------------------------------------ inputs

/// A plain trace file read line by line.
pub type PlainInput = BufReader<CrLines<File>>;
/// A gzip-compressed trace file read line by line.
pub type GzipInput = BufReader<CrLines<MultiGzDecoder<BufReader<File>>>>;

/// A reader that, for a file whose lines end in a lone CR (classic Mac
/// line ends, as some FIU traces have), turns each CR into LF; otherwise it
/// passes the bytes through untouched.
pub struct CrLines<R> {
    inner: R,
    cr_only: bool,
}

impl<R: Read> Read for CrLines<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        if self.cr_only {
            for b in &mut buf[..n] {
                if *b == b'\r' {
                    *b = b'\n';
                }
            }
        }
        Ok(n)
    }
}

/// Whether the first 64 KiB of `r` have a CR and no LF: lines end in CR alone.
/// A read error ends the sample: the replay meets it again, at its line.
fn cr_only(r: impl Read) -> bool {
    let mut sample = Vec::with_capacity(1 << 16);
    let _ = r.take(1 << 16).read_to_end(&mut sample);
    sample.contains(&b'\r') && !sample.contains(&b'\n')
}

/// A trace file opened for replay: the input kind closed into an enum, so the
/// replay loop is statically dispatched. (Built once per run; the gzip variant
/// is boxed because the inflater state is large.)
#[allow(clippy::large_enum_variant)]
pub enum TraceSource {
    /// A plain trace file.
    Plain(Replay<PlainInput>),
    /// A `.gz` trace file.
    Gzip(Box<Replay<GzipInput>>),
}

impl TraceSource {
    /// The trace format being replayed.
    pub fn format(&self) -> TraceFormat {
        match self {
            TraceSource::Plain(r) => r.format(),
            TraceSource::Gzip(r) => r.format(),
        }
    }

    /// A second handle on the trace file that shares the replay's position
    /// in it (a duplicated descriptor): its `stream_position()` is how far
    /// the replay has read (in compressed bytes for gzip), for a progress
    /// display, which cannot reach the source while the simulation runs.
    pub fn file_handle(&self) -> io::Result<File> {
        match self {
            TraceSource::Plain(r) => r.rdr.input.get_ref().inner.try_clone(),
            TraceSource::Gzip(r) => r.rdr.input.get_ref().inner.get_ref().get_ref().try_clone(),
        }
    }
}

impl RequestSource for TraceSource {
    fn timing(&self) -> Timing {
        match self {
            TraceSource::Plain(r) => r.timing(),
            TraceSource::Gzip(r) => r.timing(),
        }
    }
    #[inline]
    fn next_request(&mut self) -> Option<Result<HostRequest, SourceError>> {
        match self {
            TraceSource::Plain(r) => r.next_req(),
            TraceSource::Gzip(r) => r.next_req(),
        }
    }
    fn notes(&self) -> Vec<(String, u64)> {
        match self {
            TraceSource::Plain(r) => r.notes_list(),
            TraceSource::Gzip(r) => r.notes_list(),
        }
    }
}

/// Is the file gzip-compressed (by magic bytes)?
fn is_gzip(path: &Path) -> Result<bool, TraceError> {
    let mut f = File::open(path).map_err(io_err(path))?;
    let mut magic = [0u8; 2];
    let mut n = 0;
    while n < 2 {
        match f.read(&mut magic[n..]).map_err(io_err(path))? {
            0 => break,
            k => n += k,
        }
    }
    Ok(n == 2 && magic == [0x1f, 0x8b])
}

/// An opened (maybe decompressed) input.
pub(crate) enum Input {
    Plain(PlainInput),
    Gzip(Box<GzipInput>),
}

pub(crate) fn open_input(path: &Path) -> Result<Input, TraceError> {
    let gz = is_gzip(path)?;
    let open = || File::open(path).map_err(io_err(path));
    let unzip = |f: File| MultiGzDecoder::new(BufReader::new(f));
    // A first look decides whether lines end in a lone CR; the input is then
    // opened again from its start.
    let cr_only = if gz {
        cr_only(unzip(open()?))
    } else {
        cr_only(open()?)
    };
    Ok(if gz {
        Input::Gzip(Box::new(BufReader::with_capacity(
            1 << 16,
            CrLines {
                inner: unzip(open()?),
                cr_only,
            },
        )))
    } else {
        Input::Plain(BufReader::with_capacity(
            1 << 16,
            CrLines {
                inner: open()?,
                cr_only,
            },
        ))
    })
}

fn label(path: &Path) -> String {
    path.display().to_string()
}

/// Open a trace for replay. The format is detected from the first lines when not
/// forced; gzip input (magic bytes) is decompressed on the fly.
pub fn open_trace(
    path: &Path,
    format: Option<TraceFormat>,
    opts: &ReplayOptions,
) -> Result<TraceSource, TraceError> {
    opts.validate()?;
    let format = match format {
        Some(f) => f,
        None => detect_file(path)?,
    };
    let l = label(path);
    Ok(match open_input(path)? {
        Input::Plain(r) => TraceSource::Plain(Replay::new(r, format, &l, opts.clone())),
        Input::Gzip(r) => TraceSource::Gzip(Box::new(Replay::new(*r, format, &l, opts.clone()))),
    })
}

// ------------------------------------------------------------------ detection

/// Detect the format of a trace file from its first lines.
pub fn detect_file(path: &Path) -> Result<TraceFormat, TraceError> {
    let mut sample = Vec::with_capacity(1 << 14);
    let read = match open_input(path)? {
        Input::Plain(r) => r.take(1 << 14).read_to_end(&mut sample),
        Input::Gzip(r) => r.take(1 << 14).read_to_end(&mut sample),
    };
    read.map_err(io_err(path))?;
    detect(&sample).map_err(|reason| TraceError::Detect {
        path: label(path),
        reason,
        known: KNOWN,
    })
}

/// Detect a format from the first bytes of a trace (up to ~20 lines are used).
///
/// Each format's parser is tried on the sample, in an order that puts the
/// stricter formats first; the first that parses every line and finds a record
/// wins. Whitespace-separated five-field traces are ambiguous by shape: integer
/// times mean MQSim (ns); decimal times mean DiskSim (ms) unless every offset and
/// size is a multiple of 512, which means byte units (`msr-cut`). Force the format
/// when a trace defeats these rules.
pub fn detect(sample: &[u8]) -> Result<TraceFormat, String> {
    let mut lines: Vec<&[u8]> = sample.split(|b| *b == b'\n').collect();
    if lines.len() > 1 && !sample.ends_with(b"\n") && sample.len() >= (1 << 14) {
        lines.pop(); // partial last line
    }
    let lines: Vec<&[u8]> = lines
        .into_iter()
        .map(|l| {
            let mut l = l;
            while let [rest @ .., b'\r' | b' ' | b'\t'] = l {
                l = rest;
            }
            trim(l)
        })
        .filter(|l| !l.is_empty() && l[0] != b'#')
        .take(20)
        .collect();
    if lines.is_empty() {
        return Err("the file has no data lines".into());
    }
    let po = ParseOptions::default();
    let order = [
        TraceFormat::Csv,
        TraceFormat::Cloudphysics,
        TraceFormat::Msr,
        TraceFormat::Spc,
        TraceFormat::Blkparse,
        TraceFormat::Fiu,
        TraceFormat::Mqsim,
        TraceFormat::Disksim,
    ];
    let mut first_errors = Vec::new();
    for fmt in order {
        let mut recs = 0;
        let mut all_512 = true;
        let mut failed = None;
        for l in &lines {
            let mut rec = Record::default();
            if fmt == TraceFormat::Blkparse {
                // any action counts: the chosen one may not appear in the first lines
                if blkparse::is_event(l) {
                    recs += 1;
                }
                continue;
            }
            match parse_line(fmt, l, &po, &mut rec) {
                Ok(true) => {
                    recs += 1;
                    all_512 &=
                        rec.offset % (SECTOR * SECTOR) == 0 && rec.size % (SECTOR * SECTOR) == 0;
                }
                Ok(false) => {}
                Err(e) => {
                    failed = Some(e);
                    break;
                }
            }
        }
        if let Some(e) = failed {
            first_errors.push(format!("{fmt}: {e}"));
            continue;
        }
        if recs == 0 {
            first_errors.push(format!("{fmt}: no records in the first lines"));
            continue;
        }
        // Byte units only if the lines read as msr-cut too: its type field
        // is 0 or 1, where DiskSim's flags may be any number.
        if fmt == TraceFormat::Disksim
            && all_512
            && lines
                .iter()
                .all(|l| msrcut::parse(l, &mut Record::default()).is_ok())
        {
            return Ok(TraceFormat::MsrCut);
        }
        return Ok(fmt);
    }
    Err(format!(
        "no known format parses the first lines ({})",
        first_errors.join("; ")
    ))
}

// ------------------------------------------------------------------ writing

/// Per-output state of a trace writer (sequence numbers, base times).
#[derive(Debug, Default)]
pub(crate) struct WriteState {
    pub seq: u64,
}

/// Write the header line a format needs (if any).
pub(crate) fn write_header(fmt: TraceFormat, w: &mut impl Write) -> io::Result<()> {
    match fmt {
        TraceFormat::Csv => csv::header(w),
        TraceFormat::Cloudphysics => cloudphysics::header(w),
        _ => Ok(()),
    }
}

/// Write one record (time rebased by the caller) in `fmt`.
pub(crate) fn write_record(
    fmt: TraceFormat,
    w: &mut impl Write,
    r: &Record,
    st: &mut WriteState,
) -> Result<(), WriteError> {
    st.seq += 1;
    match fmt {
        TraceFormat::Spc => spc::write(w, r),
        TraceFormat::Msr => msr::write(w, r),
        TraceFormat::Blkparse => blkparse::write(w, r, st.seq),
        TraceFormat::Disksim => disksim::write(w, r),
        TraceFormat::Mqsim => mqsim::write(w, r),
        TraceFormat::MsrCut => msrcut::write(w, r),
        TraceFormat::Fiu => fiu::write(w, r),
        TraceFormat::Cloudphysics => cloudphysics::write(w, r),
        TraceFormat::Csv => csv::write(w, r),
    }
}

/// Why a record could not be written.
#[derive(Debug)]
pub(crate) enum WriteError {
    Io(io::Error),
    /// The format cannot express this record (e.g. trim in SPC).
    Unrepresentable(String),
}
impl From<io::Error> for WriteError {
    fn from(e: io::Error) -> Self {
        WriteError::Io(e)
    }
}

pub(crate) fn op_rw(r: &Record, fmt: &str) -> Result<bool, WriteError> {
    match r.op {
        Op::Read => Ok(true),
        Op::Write => Ok(false),
        other => Err(WriteError::Unrepresentable(format!(
            "{fmt} has no {other:?} operation"
        ))),
    }
}

/// The record's range widened to whole sectors: (first sector, sectors). A
/// range ending in the last sector of the 2^64-byte space cannot be widened
/// (its end, in bytes, would not fit), nor read back: it is refused.
pub(crate) fn sector_span(r: &Record) -> Result<(u64, u64), WriteError> {
    let lba = r.offset / SECTOR;
    let end = (r.offset + r.size).div_ceil(SECTOR);
    if end.checked_mul(SECTOR).is_none() {
        return Err(WriteError::Unrepresentable(format!(
            "a range of whole sectors for bytes {}..{} (its end passes 2^64 bytes)",
            r.offset,
            r.offset as u128 + r.size as u128
        )));
    }
    Ok((lba, end - lba))
}

/// Summary of a conversion.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct ConvertReport {
    /// Records written.
    pub records: u64,
    /// Lines skipped as bad (only with `skip_bad_lines`).
    pub bad_lines_skipped: u64,
}

/// Convert a trace file to another format. Times are rebased to start at 0;
/// unaligned byte ranges written to a sector-based format are widened to whole
/// sectors. `in_fmt` None detects the input format. A `.gz` output path is
/// gzip-compressed.
pub fn convert(
    input: &Path,
    in_fmt: Option<TraceFormat>,
    output: &Path,
    out_fmt: TraceFormat,
    skip_bad_lines: bool,
) -> Result<ConvertReport, TraceError> {
    let po = ParseOptions::default();
    convert_with(input, in_fmt, output, out_fmt, skip_bad_lines, &po)
}

/// [`convert`] with parse options (the blkparse action to keep, MSR streams).
pub fn convert_with(
    input: &Path,
    in_fmt: Option<TraceFormat>,
    output: &Path,
    out_fmt: TraceFormat,
    skip_bad_lines: bool,
    po: &ParseOptions,
) -> Result<ConvertReport, TraceError> {
    let po = *po;
    let in_fmt = match in_fmt {
        Some(f) => f,
        None => detect_file(input)?,
    };
    if ssd_core::outfile::same_file(input, output) {
        return Err(io_err(output)(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!(
                "is the input trace ({}); refusing to overwrite it",
                input.display()
            ),
        )));
    }
    let l = label(input);
    let input = open_input(input)?;
    let gz = output.extension().is_some_and(|e| e == "gz");
    // Written beside the output and renamed into place: a failed conversion
    // leaves the old file (if any), never a truncated one.
    ssd_core::outfile::write_atomic_with(output, io_err_fn(output), |w| {
        let finish = |mut w: &mut dyn Write| -> Result<ConvertReport, TraceError> {
            match input {
                Input::Plain(r) => convert_stream(
                    TraceReader::new(r, in_fmt, &l, po).skip_bad_lines(skip_bad_lines),
                    &mut w,
                    out_fmt,
                    output,
                ),
                Input::Gzip(r) => convert_stream(
                    TraceReader::new(r, in_fmt, &l, po).skip_bad_lines(skip_bad_lines),
                    &mut w,
                    out_fmt,
                    output,
                ),
            }
        };
        if gz {
            let mut enc = flate2::write::GzEncoder::new(w, flate2::Compression::default());
            let rep = finish(&mut enc)?;
            enc.try_finish().map_err(io_err(output))?;
            Ok(rep)
        } else {
            finish(w)
        }
    })
}

/// Convert records from a reader into `out_fmt` on `w` (times rebased to 0).
pub fn convert_stream<R: BufRead, W: Write>(
    mut rdr: TraceReader<R>,
    w: &mut W,
    out_fmt: TraceFormat,
    out_label: &Path,
) -> Result<ConvertReport, TraceError> {
    write_header(out_fmt, w).map_err(io_err(out_label))?;
    let mut st = WriteState::default();
    let mut base = None;
    let mut last = 0;
    let mut n = 0;
    while let Some(r) = rdr.next_record() {
        let mut r = r?;
        let b = *base.get_or_insert(r.time_ns);
        let t = r.time_ns.max(last);
        last = t;
        r.time_ns = t - b;
        match write_record(out_fmt, w, &r, &mut st) {
            Ok(()) => n += 1,
            Err(WriteError::Io(e)) => return Err(io_err(out_label)(e)),
            Err(WriteError::Unrepresentable(what)) => {
                return Err(TraceError::Unrepresentable {
                    format: out_fmt,
                    what: format!("{what} ({}:{})", rdr.label, rdr.line),
                })
            }
        }
    }
    Ok(ConvertReport {
        records: n,
        bad_lines_skipped: rdr.bad_lines,
    })
}

/// Write records to `w` in `fmt` (header included), times as given.
pub fn write_records<'a, W: Write>(
    w: &mut W,
    fmt: TraceFormat,
    records: impl IntoIterator<Item = &'a Record>,
) -> Result<u64, TraceError> {
    let p = PathBuf::from("<output>");
    write_header(fmt, w).map_err(io_err(&p))?;
    let mut st = WriteState::default();
    let mut n = 0;
    for r in records {
        match write_record(fmt, w, r, &mut st) {
            Ok(()) => n += 1,
            Err(WriteError::Io(e)) => return Err(io_err(&p)(e)),
            Err(WriteError::Unrepresentable(what)) => {
                return Err(TraceError::Unrepresentable { format: fmt, what })
            }
        }
    }
    Ok(n)
}

/// Where the real traces of `../shared/traces` are: `$SSDSIM_TRACES`, else
/// `<manifest>/../../../shared/traces`. None when absent.
pub fn shared_traces_dir(manifest_dir: &str) -> Option<PathBuf> {
    let p = match std::env::var_os("SSDSIM_TRACES") {
        Some(v) => PathBuf::from(v),
        None => Path::new(manifest_dir).join("../../../shared/traces"),
    };
    p.is_dir().then_some(p)
}

#[cfg(test)]
mod tests;

/// A trace to replay: its path and, optionally, its format (detected otherwise).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TraceSpec {
    /// Path of the trace file (`.gz` is decompressed).
    pub path: String,
    /// Its format name (see [`TraceFormat::name`]); None: detected from the file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub format: Option<String>,
}
