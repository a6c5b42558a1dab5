//! blkparse default text output:
//! `maj,min cpu seq time_s pid action RWBS sector + nsectors [process]`.
//!
//! Only event lines of the chosen action (Q by default, configurable: D, C, ...)
//! with a data direction (RWBS holding R, W or D = discard) and a `+ N` sector
//! count are records; every other line (other actions, plugs, flushes without
//! data, the per-CPU summary blkparse prints at the end) is skipped as non-I/O.
//! A data request of `+ 0` sectors (without F or B, a flush or barrier) is a
//! zero-length request, an error as in every format, and so is a line with
//! control characters that is no event line (binary damage, not a summary).
//! The pid is the stream, the major number the device.

use super::{
    decimal, next_field, op_rw, sector_span, sectors_to_bytes, show, uint, uint32, ws_fields, Op,
    ParseOptions, Record, WriteError,
};
use std::io::Write;

#[inline]
fn is_dev(f: &[u8]) -> Option<(&[u8], &[u8])> {
    let i = f.iter().position(|&b| b == b',')?;
    let (a, b) = (&f[..i], &f[i + 1..]);
    let digits = |x: &[u8]| !x.is_empty() && x.iter().all(u8::is_ascii_digit);
    (digits(a) && digits(b)).then_some((a, b))
}

/// Does the line look like a blkparse event line (any action)? Used by detection.
pub(super) fn is_event(line: &[u8]) -> bool {
    let mut it = ws_fields(line);
    let dev_ok = it.next().and_then(is_dev).is_some();
    let nums = (0..2).all(|_| it.next().is_some_and(|f| uint(f, "").is_ok()));
    let time_ok = it.next().is_some_and(|f| decimal(f, 9, "").is_ok());
    let pid_ok = it.next().is_some_and(|f| uint(f, "").is_ok());
    let act_ok = it
        .next()
        .is_some_and(|f| f.len() <= 2 && f.iter().all(u8::is_ascii_alphabetic));
    dev_ok && nums && time_ok && pid_ok && act_ok
}

/// The action letter of a blkparse event line (`Q`, `D`, `C`, ...), if it is one.
pub(super) fn action_of(line: &[u8]) -> Option<u8> {
    if !is_event(line) {
        return None;
    }
    let f = ws_fields(line).nth(5)?;
    (f.len() == 1).then(|| f[0].to_ascii_uppercase())
}

/// The data direction of an RWBS field (blktrace's `fill_rwbs`): D
/// (discard) before W before R; none for a request without data (N, FN).
#[inline]
fn data_direction(rwbs: &[u8]) -> Option<Op> {
    if rwbs.contains(&b'D') {
        Some(Op::Trim)
    } else if rwbs.contains(&b'W') {
        Some(Op::Write)
    } else if rwbs.contains(&b'R') {
        Some(Op::Read)
    } else {
        None
    }
}

/// What [`one_pass`] read of an event line.
enum OnePass {
    /// Not a record (another action, no data direction, no data): `Ok(false)`.
    Skip,
    /// A request: time (ns), op, sector, sectors, pid, major number, REQ_SYNC.
    Rec(u64, Op, u64, u64, u32, u32, bool),
}

/// An event line read in one pass, each byte once, as blkparse writes it:
/// `maj,min cpu seq sec.nnnnnnnnn pid action rwbs [sector + n] [process]`.
/// `None` for any line the field-by-field parse must decide, so that every
/// error and every skip is the one it gives: a line that is no event line
/// (the summary), a time not of 1-10 digits and nine after the point, a
/// number of 20 digits or more, a pid or major number over 32 bits, a data
/// request cut short or of no sectors, a sector count whose bytes overflow.
#[inline]
fn one_pass(line: &[u8], action: u8) -> Option<OnePass> {
    let n = line.len();
    let mut i = 0;
    let ws = |i: &mut usize| {
        while *i < n && (line[*i] == b' ' || line[*i] == b'\t') {
            *i += 1;
        }
    };
    // 1-19 digits up to `stop` (at the field's end: whitespace, or the
    // line's end when `stop` is a space).
    let num = |i: &mut usize, stop: u8| -> Option<u64> {
        let (x, len) = super::digits_at(line, i);
        if len == 0 || len > 19 {
            return None;
        }
        let end = *i == n || line[*i] == b' ' || line[*i] == b'\t';
        if stop == b' ' {
            end.then_some(x)
        } else if *i < n && line[*i] == stop {
            *i += 1;
            Some(x)
        } else {
            None
        }
    };
    // A field: up to whitespace or the line's end.
    let field = |i: &mut usize| -> &[u8] {
        let start = *i;
        while *i < n && line[*i] != b' ' && line[*i] != b'\t' {
            *i += 1;
        }
        &line[start..*i]
    };
    ws(&mut i);
    let maj = u32::try_from(num(&mut i, b',')?).ok()?;
    num(&mut i, b' ')?; // minor
    super::ws_uint_at(line, &mut i)?; // cpu
    super::ws_uint_at(line, &mut i)?; // sequence
    ws(&mut i);
    let secs = num(&mut i, b'.')?;
    let t0 = i;
    let frac = num(&mut i, b' ')?;
    if i - t0 != 9 || secs >= 10_000_000_000 {
        return None;
    }
    let time_ns = secs * 1_000_000_000 + frac;
    let pid = u32::try_from(super::ws_uint_at(line, &mut i)?.0).ok()?;
    ws(&mut i);
    let act = field(&mut i);
    if act.is_empty() {
        return None;
    }
    if act.len() != 1 || act[0] != action {
        return Some(OnePass::Skip);
    }
    ws(&mut i);
    let rwbs = field(&mut i);
    if rwbs.is_empty() {
        return None;
    }
    let Some(op) = data_direction(rwbs) else {
        return Some(OnePass::Skip);
    };
    ws(&mut i);
    match line.get(i) {
        Some(b'[' | b'(') => return Some(OnePass::Skip),
        None => return None,
        _ => {}
    }
    let (sector, _) = super::ws_uint_at(line, &mut i)?;
    ws(&mut i);
    if field(&mut i) != b"+" {
        return None;
    }
    let (count, _) = super::ws_uint_at(line, &mut i)?;
    if count == 0 {
        return None;
    }
    sector.checked_mul(crate::workload::SECTOR)?;
    count.checked_mul(crate::workload::SECTOR)?;
    let sync = rwbs.contains(&b'S');
    Some(OnePass::Rec(time_ns, op, sector, count, pid, maj, sync))
}

#[inline]
pub(super) fn parse(line: &[u8], po: &ParseOptions, rec: &mut Record) -> Result<bool, String> {
    match one_pass(line, po.blkparse_action) {
        Some(OnePass::Skip) => Ok(false),
        Some(OnePass::Rec(t, op, sector, count, pid, maj, sync)) => {
            rec.time_ns = t;
            rec.op = op;
            rec.offset = sector * crate::workload::SECTOR;
            rec.size = count * crate::workload::SECTOR;
            rec.stream = pid;
            rec.device = maj;
            rec.sync = sync;
            Ok(true)
        }
        None => parse_fields(line, po, rec),
    }
}

/// [`parse`] field by field, with the error of the first bad field.
pub(super) fn parse_fields(
    line: &[u8],
    po: &ParseOptions,
    rec: &mut Record,
) -> Result<bool, String> {
    let mut it = ws_fields(line);
    let dev = next_field(&mut it, "device")?;
    let Some((maj, _)) = is_dev(dev) else {
        if dev.contains(&b',') && dev.first().is_some_and(u8::is_ascii_digit) {
            return Err(format!(
                "field \"device\": expected maj,min, got {:?}",
                show(dev)
            ));
        }
        // blkparse's summary is text: a line with control characters is
        // damage (binary data in the file), not a line to skip.
        if let Some(&c) = line
            .iter()
            .find(|&&c| (c < b' ' && c != b'\t') || c == 0x7f)
        {
            return Err(format!(
                "not a blkparse line: control character {c:#04x} (a damaged or binary file?)"
            ));
        }
        return Ok(false); // summary / banner line
    };
    uint(next_field(&mut it, "cpu")?, "cpu")?;
    uint(next_field(&mut it, "sequence")?, "sequence")?;
    let t = decimal(next_field(&mut it, "time")?, 9, "time")?;
    let pid = uint32(next_field(&mut it, "pid")?, "pid")?;
    let action = next_field(&mut it, "action")?;
    if action.len() != 1 || action[0] != po.blkparse_action {
        return Ok(false);
    }
    let rwbs = next_field(&mut it, "rwbs")?;
    let Some(op) = data_direction(rwbs) else {
        return Ok(false); // no data direction (N, FN, ...)
    };
    // blkparse ends every event line with `[process]` (or, for C, `[error]`):
    // a line that stops earlier was cut short, not a request without data.
    let Some(sector) = it.next() else {
        return Err(format!(
            "blkparse `{}` event ends after its RWBS field: no \"sector + nsectors\" \
             and no [process] (blkparse always writes one of them: a line cut short?)",
            po.blkparse_action as char
        ));
    };
    if sector.first() == Some(&b'[') || sector.first() == Some(&b'(') {
        return Ok(false); // e.g. "Q WS [proc]": no data (a flush)
    }
    let sector = uint(sector, "sector")?;
    match it.next() {
        Some(b"+") => {}
        // "N [proc]" or "N (cdb) [proc]": a SCSI passthrough command's byte
        // count, not a block request (blkparse's format for BLK_TC_PC).
        Some(f) if f.first() == Some(&b'[') || f.first() == Some(&b'(') => return Ok(false),
        None => {
            return Err(format!(
                "blkparse `{}` event has sector {sector} but no \"+ nsectors\" (blkparse \
                 writes \"sector + nsectors [process]\" for every request with data: a \
                 line cut short?)",
                po.blkparse_action as char
            ))
        }
        Some(f) => {
            return Err(format!(
                "expected \"+\" after the sector, got {:?}",
                show(f)
            ))
        }
    }
    let n = uint(next_field(&mut it, "nsectors")?, "nsectors")?;
    if n == 0 && rwbs.iter().any(|&c| c == b'F' || c == b'B') {
        return Ok(false); // a flush (or an old kernel's barrier) carrying no data
    }
    // Any other request of no sectors is a zero-length request, refused as
    // in every format (it was skipped without a word).
    rec.time_ns = t;
    rec.op = op;
    rec.offset = sectors_to_bytes(sector, "sector")?;
    rec.size = sectors_to_bytes(n, "nsectors")?;
    rec.stream = pid;
    rec.device = uint32(maj, "device")?;
    // RWBS's `S`: REQ_SYNC (blktrace's `fill_rwbs`).
    rec.sync = rwbs.contains(&b'S');
    Ok(true)
}

/// Writes one `Q` event per record (device `maj,0`, CPU 0, process `ssdsim`).
pub(super) fn write(w: &mut impl Write, r: &Record, seq: u64) -> Result<(), WriteError> {
    let rwbs = match r.op {
        Op::Trim if r.sync => "DS",
        Op::Trim => "D",
        _ => match (op_rw(r, "blkparse")?, r.sync) {
            (true, _) => "R",
            (false, true) => "WS",
            (false, false) => "W",
        },
    };
    let (lba, n) = sector_span(r)?;
    writeln!(
        w,
        "{:>3},0    0 {:>8} {:>5}.{:09} {:>5}  Q {:>3} {} + {} [ssdsim]",
        r.device,
        seq,
        r.time_ns / 1_000_000_000,
        r.time_ns % 1_000_000_000,
        r.stream,
        rwbs,
        lba,
        n
    )?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The one-pass parse gives what the field-by-field one gives, the
    /// error and every skip included, on every kind of line, for the
    /// default action (Q) and another (D).
    #[test]
    fn one_pass_and_field_by_field_agree() {
        let lines: &[&str] = &[
            "  8,16   5        2     0.000001850 18615  Q   R 1444645666 + 256 [java]",
            "  8,16   5        1     0.000000000 18615  A   R 1444645666 + 256 <- (8,17) 1444645632",
            "  8,16   5        4     0.000008750 18615  P   N [java]",
            "  8,0    3       12     1.234567891  4242  Q  WS 2048 + 8 [kworker/3:1]",
            "  8,0    3       12     1.234567891  4242  D  WS 2048 + 8 [kworker/3:1]",
            "  8,0    3       12     1.234567891  4242  Q  WFS 2048 + 0 [jbd2/sda1-8]",
            "  8,0    3       12     1.234567891  4242  Q  FWS [jbd2/sda1-8]",
            "  8,0    3       12     1.234567891  4242  Q  W 2048 + 0 [x]",
            "  8,0    3       12     1.234567891  4242  Q  DS 0 + 2048 [fstrim]",
            "  8,0    3       12     1.234567891  4242  Q  N 0 (12 34) [sg_inq]",
            "  8,0    3       12     1.234567891  4242  Q  R 8 [x]",
            "  8,0    3       12     1.234567891  4242  Q  R 8 (cdb) [x]",
            "  8,0    3       12     1.234567891  4242  Q  R 8 + [x]",
            "  8,0    3       12     1.234567891  4242  Q  R 8 +",
            "  8,0    3       12     1.234567891  4242  Q  R 8 - 8 [x]",
            "  8,0    3       12     1.234567891  4242  Q  R 8",
            "  8,0    3       12     1.234567891  4242  Q  R",
            "  8,0    3       12     1.234567891  4242  Q",
            "  8,0    3       12     1.234567891  4242",
            "  8,0    3       12     1.23456789  4242  Q  R 8 + 8 [x]",
            "  8,0    3       12     1.2345678912  4242  Q  R 8 + 8 [x]",
            "  8,0    3       12     1  4242  Q  R 8 + 8 [x]",
            "  8,0    3       12     .5  4242  Q  R 8 + 8 [x]",
            "  8,0    3       12     12345678901.000000000  4242  Q  R 8 + 8 [x]",
            "  8,0    3       12     0000000000001.000000000  4242  Q  R 8 + 8 [x]",
            "  8,0    3       12     1.234567891  4294967296  Q  R 8 + 8 [x]",
            "  4294967296,0    3       12     1.234567891  1  Q  R 8 + 8 [x]",
            "  8,0    3       12     1.234567891  1  Q  R 36028797018963968 + 8 [x]",
            "  8,0    3       12     1.234567891  1  Q  R 8 + 36028797018963968 [x]",
            "  8,0    3       12     1.234567891  1  Q  R 99999999999999999999 + 8 [x]",
            "  8,0    3       12     1.234567891  1  Q  R 8x + 8 [x]",
            "  8,0    3       x     1.234567891  1  Q  R 8 + 8 [x]",
            "  8,0x    3       12     1.234567891  1  Q  R 8 + 8 [x]",
            "8,0 3 12 1.234567891 1 Q R 8 + 8",
            "\t8,0\t3\t12\t1.234567891\t1\tQ\tR\t8\t+\t8\t[x]",
            "  8,0    3       12     1.234567891  1  QQ  R 8 + 8 [x]",
            "  8,0    3       12     1.234567891  1  q  R 8 + 8 [x]",
            "CPU0 (sda):",
            " Reads Queued:           0,        0KiB\t Writes Queued:           2,        8KiB",
            "Total (sda):",
            "8,16",
            "",
        ];
        for action in [b'Q', b'D'] {
            let po = ParseOptions {
                blkparse_action: action,
                ..ParseOptions::default()
            };
            super::super::tests::all_parses_agree(
                lines,
                |l, r| parse(l, &po, r),
                |l, r| parse_fields(l, &po, r),
            );
        }
        // The common lines take the one pass.
        let q = "  8,16   5        2     0.000001850 18615  Q   R 1444645666 + 256 [java]";
        assert!(matches!(
            one_pass(q.as_bytes(), b'Q'),
            Some(OnePass::Rec(..))
        ));
        let a = "  8,16   5        1     0.000000000 18615  A   R 1 + 256 <- (8,17) 1";
        assert!(matches!(one_pass(a.as_bytes(), b'Q'), Some(OnePass::Skip)));
    }
}
