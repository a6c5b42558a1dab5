//! Helpers shared by the fuzz targets: reading a whole trace, the properties a
//! parsed record must have, what a record becomes after `trace convert`, and
//! an exact (big-integer) oracle for the unit parsers.

use num_bigint::BigUint;
use num_integer::Integer;
use num_traits::{ToPrimitive, Zero};
use ssdsim_host::trace::{Op, ParseOptions, Record, TraceFormat, TraceReader};
use std::io::{BufReader, Cursor};

pub const SECTOR: u64 = 512;

/// Everything a strict or lenient read of a trace gives.
#[derive(Debug, PartialEq)]
pub struct Read {
    pub records: Vec<Record>,
    /// (location, reason) of the error that ended the stream.
    pub error: Option<(String, String)>,
    pub bad_lines: u64,
    pub non_io_lines: u64,
    pub lines: u64,
}

/// Read `text` to the end (or its first error) through a `BufReader` of
/// `capacity` bytes: a small one makes lines straddle the buffer's end.
pub fn read_all(
    text: &[u8],
    fmt: TraceFormat,
    po: ParseOptions,
    skip_bad: bool,
    capacity: usize,
) -> Read {
    let input = BufReader::with_capacity(capacity, Cursor::new(text));
    let mut rdr = TraceReader::new(input, fmt, "fuzz.trace", po).skip_bad_lines(skip_bad);
    let mut records = Vec::new();
    let mut error = None;
    while let Some(r) = rdr.next_record() {
        match r {
            Ok(rec) => records.push(rec),
            Err(e) => {
                error = Some((e.location, e.reason));
                // An error ends the stream.
                assert!(rdr.next_record().is_none(), "the stream goes on after an error");
                break;
            }
        }
    }
    Read {
        records,
        error,
        bad_lines: rdr.bad_lines(),
        non_io_lines: rdr.non_io_lines(),
        lines: rdr.lines(),
    }
}

/// Lines of `text` as the reader counts them (a last line without `\n` counts).
pub fn line_count(text: &[u8]) -> u64 {
    let n = text.iter().filter(|&&b| b == b'\n').count() as u64;
    n + u64::from(!text.is_empty() && !text.ends_with(b"\n"))
}

/// An error of the reader names `fuzz.trace:LINE` with a line of the input,
/// and a reason of bounded length (a corrupt line is quoted in part).
pub fn check_error(fmt: TraceFormat, text: &[u8], loc: &str, reason: &str) {
    assert!(!reason.is_empty(), "empty error reason at {loc}");
    // A field or line is quoted up to SHOW_MAX (200) bytes, which escaping
    // may widen (`\u{12}` is six characters): bounded, whatever the line's
    // length.
    assert!(
        reason.len() <= 3000,
        "{fmt}: an error quotes {} bytes: {loc}: {}...",
        reason.len(),
        reason.chars().take(200).collect::<String>()
    );
    if loc == "fuzz.trace" {
        // The one error of the whole file: a blkparse trace without the
        // replayed action.
        assert_eq!(fmt, TraceFormat::Blkparse, "{loc}: {reason}");
        return;
    }
    let line: u64 = loc
        .strip_prefix("fuzz.trace:")
        .and_then(|l| l.parse().ok())
        .unwrap_or_else(|| panic!("error location {loc:?} names no line"));
    assert!(
        line >= 1 && line <= line_count(text),
        "{fmt}: error at line {line} of a {}-line input: {reason}",
        line_count(text)
    );
}

/// What every record of `fmt` must look like.
pub fn check_record(fmt: TraceFormat, po: &ParseOptions, r: &Record) {
    use TraceFormat::*;
    assert!(r.size > 0 || r.op.no_range(), "{fmt}: empty record {r:?}");
    assert!(
        r.offset.checked_add(r.size).is_some(),
        "{fmt}: range overflows {r:?}"
    );
    let sector_offset = matches!(fmt, Spc | Blkparse | Disksim | Mqsim | Fiu | Cloudphysics);
    let sector_size = matches!(fmt, Blkparse | Disksim | Mqsim | Fiu);
    if sector_offset {
        assert_eq!(r.offset % SECTOR, 0, "{fmt}: offset not in sectors {r:?}");
    }
    if sector_size {
        assert_eq!(r.size % SECTOR, 0, "{fmt}: size not in sectors {r:?}");
    }
    match r.op {
        Op::Flush => assert_eq!(fmt, Csv, "{fmt}: flush {r:?}"),
        Op::Trim => assert!(matches!(fmt, Csv | Blkparse), "{fmt}: trim {r:?}"),
        Op::Read | Op::Write => {}
        Op::ZoneAppend | Op::ZoneReset | Op::ZoneFinish | Op::ZoneOpen | Op::ZoneClose => {
            assert_eq!(fmt, Csv, "{fmt}: zone command {r:?}")
        }
    }
    match fmt {
        Disksim | Mqsim | MsrCut | Spc => assert_eq!(r.stream, r.device, "{fmt}: {r:?}"),
        Msr if !po.msr_stream_by_host => assert_eq!(r.stream, r.device, "{fmt}: {r:?}"),
        Csv => assert_eq!(r.device, 0, "{fmt}: {r:?}"),
        Cloudphysics => {
            assert_eq!((r.device, r.stream), (0, 0), "{fmt}: {r:?}");
            assert_eq!(r.time_ns % 1_000_000_000, 0, "{fmt}: {r:?}");
        }
        _ => {}
    }
    if fmt == Msr {
        assert_eq!(r.time_ns % 100, 0, "{fmt}: {r:?}");
    }
}

/// Can `out` express the record's operation?
pub fn op_representable(out: TraceFormat, op: Op) -> bool {
    match op {
        Op::Read | Op::Write => true,
        Op::Trim => matches!(out, TraceFormat::Csv | TraceFormat::Blkparse),
        Op::Flush
        | Op::ZoneAppend
        | Op::ZoneReset
        | Op::ZoneFinish
        | Op::ZoneOpen
        | Op::ZoneClose => out == TraceFormat::Csv,
    }
}

/// Does `out` keep byte ranges (no widening to whole sectors)?
pub fn byte_ranges(out: TraceFormat) -> bool {
    matches!(
        out,
        TraceFormat::Csv | TraceFormat::Msr | TraceFormat::MsrCut
    )
}

/// The record that reading back a conversion of `r` (time already rebased)
/// to `out` must give.
pub fn after_convert(out: TraceFormat, r: &Record) -> Record {
    use TraceFormat::*;
    let mut e = *r;
    e.time_ns = match out {
        Msr => r.time_ns / 100 * 100,
        Spc => r.time_ns / 1_000 * 1_000,
        Cloudphysics => r.time_ns / 1_000_000_000 * 1_000_000_000,
        _ => r.time_ns,
    };
    if !byte_ranges(out) {
        let lba = r.offset / SECTOR;
        let end = (r.offset as u128 + r.size as u128).div_ceil(SECTOR as u128);
        e.offset = lba * SECTOR;
        e.size = ((end - lba as u128) * SECTOR as u128) as u64;
    }
    e.device = match out {
        Csv | Cloudphysics => 0,
        _ => r.device,
    };
    e.stream = match out {
        Csv | Blkparse | Fiu => r.stream,
        Cloudphysics => 0,
        _ => e.device,
    };
    // Only blkparse's RWBS records REQ_SYNC (`WS`, `DS`; a read is written
    // `R`, sync by its op); the other formats read back async.
    e.sync = out == Blkparse && r.sync && r.op != Op::Read;
    e
}

/// Does the range of `r`, widened to whole sectors, still end within 2^64?
pub fn widened_fits(r: &Record) -> bool {
    let end = (r.offset as u128 + r.size as u128).div_ceil(SECTOR as u128) * SECTOR as u128;
    end <= u64::MAX as u128
}

// ------------------------------------------------------------------ units oracle

/// A number as the unit parsers read it: digits with at most one `.` (and,
/// where allowed, `_` separators), at least one digit. Returns the digits as
/// an integer N, the count d of digits after the point (value N / 10^d), the
/// count of significant digits (leading and trailing zeros aside), and the
/// rest of the text.
pub fn split_number(s: &str, underscores: bool) -> Option<(BigUint, u32, usize, &str)> {
    let end = s
        .char_indices()
        .find(|&(_, c)| !(c.is_ascii_digit() || c == '.' || (underscores && c == '_')))
        .map_or(s.len(), |(i, _)| i);
    let num: String = s[..end].chars().filter(|&c| c != '_').collect();
    if num.matches('.').count() > 1 || !num.chars().any(|c| c.is_ascii_digit()) {
        return None;
    }
    let (int, frac) = num.split_once('.').unwrap_or((&num, ""));
    let frac = frac.trim_end_matches('0');
    let all: String = format!("{int}{frac}");
    let n = BigUint::parse_bytes(all.as_bytes(), 10).unwrap_or_default();
    let sig = int.trim_start_matches('0').len() + frac.len();
    Some((n, frac.len() as u32, sig, &s[end..]))
}

/// The exact value N / 10^d * num / den as (floor, remainder is zero,
/// rounded half up).
pub fn scale(n: &BigUint, d: u32, num: u64, den: u64) -> (BigUint, bool, BigUint) {
    let top = n * BigUint::from(num);
    let bottom = BigUint::from(10u32).pow(d) * BigUint::from(den);
    let (q, r) = top.div_rem(&bottom);
    let half_up = if (&r * 2u32) >= bottom {
        &q + 1u32
    } else {
        q.clone()
    };
    (q, r.is_zero(), half_up)
}

pub fn to_u64(b: &BigUint) -> Option<u64> {
    b.to_u64()
}
