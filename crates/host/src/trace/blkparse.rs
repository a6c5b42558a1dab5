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

#[inline]
pub(super) fn parse(line: &[u8], po: &ParseOptions, rec: &mut Record) -> Result<bool, String> {
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
    let op = if rwbs.contains(&b'D') {
        Op::Trim
    } else if rwbs.contains(&b'W') {
        Op::Write
    } else if rwbs.contains(&b'R') {
        Op::Read
    } else {
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
