//! SPC / UMass trace format: `ASU,LBA,Size,Opcode,Timestamp[,optional...]`.
//! LBA in 512-byte sectors within the ASU, size in bytes, opcode `R`/`W` (any
//! case), timestamp in seconds (decimal). The ASU is the device and the stream.

use super::{
    csv_fields, decimal, next_field, op_rw, sector_span, sectors_to_bytes, show, uint, uint32, Op,
    Record, WriteError,
};
use std::io::Write;

/// An SPC line's fields read in one pass, each byte once: the ASU, the LBA,
/// the size, whether it is a read and the time in ns. `None` for any line
/// the field-by-field parse must decide, so that every error is the one it
/// gives: a field with spaces or tabs around it, a number of 20 digits or
/// more, an ASU over 32 bits, an opcode other than `R`/`W` in either case,
/// a timestamp not of 1-10 digits with at most nine after a point, an LBA
/// whose bytes overflow.
#[inline]
fn one_pass(line: &[u8]) -> Option<(u32, u64, u64, bool, u64)> {
    let n = line.len();
    let mut i = 0;
    // 1-19 digits and the comma after them.
    let num = |i: &mut usize| -> Option<u64> {
        let (x, len) = super::digits_at(line, i);
        if len == 0 || len > 19 || *i == n || line[*i] != b',' {
            return None;
        }
        *i += 1;
        Some(x)
    };
    let asu = u32::try_from(num(&mut i)?).ok()?;
    let lba = num(&mut i)?;
    let size = num(&mut i)?;
    let read = match line.get(i..i + 2)? {
        [b'R' | b'r', b','] => true,
        [b'W' | b'w', b','] => false,
        _ => return None,
    };
    i += 2;
    // The timestamp: seconds, and up to nine digits after a point; the
    // line ends there or goes on with optional fields.
    let digits = |i: &mut usize| super::digits_at_most(line, i, 10);
    let (secs, len) = digits(&mut i);
    if len == 0 {
        return None;
    }
    let mut ns = secs * 1_000_000_000;
    if i < n && line[i] == b'.' {
        i += 1;
        let (frac, len) = digits(&mut i);
        if len == 0 || len > 9 {
            return None;
        }
        ns += frac * 10u64.pow(9 - len as u32);
    }
    if i < n && line[i] != b',' {
        return None;
    }
    lba.checked_mul(crate::workload::SECTOR)?;
    Some((asu, lba, size, read, ns))
}

#[inline]
pub(super) fn parse(line: &[u8], rec: &mut Record) -> Result<bool, String> {
    if let Some((asu, lba, size, read, ns)) = one_pass(line) {
        rec.op = if read { Op::Read } else { Op::Write };
        rec.time_ns = ns;
        rec.offset = lba * crate::workload::SECTOR;
        rec.size = size;
        rec.device = asu;
        rec.stream = asu;
        return Ok(true);
    }
    parse_fields(line, rec)
}

/// [`parse`] field by field, with the error of the first bad field.
pub(super) fn parse_fields(line: &[u8], rec: &mut Record) -> Result<bool, String> {
    let mut it = csv_fields(line);
    let asu = uint32(next_field(&mut it, "asu")?, "asu")?;
    let lba = uint(next_field(&mut it, "lba")?, "lba")?;
    let size = uint(next_field(&mut it, "size")?, "size")?;
    let op = next_field(&mut it, "opcode")?;
    rec.op = match op {
        b"R" | b"r" => Op::Read,
        b"W" | b"w" => Op::Write,
        _ => {
            return Err(format!(
                "field \"opcode\": unknown opcode {:?} (R or W)",
                show(op)
            ))
        }
    };
    rec.time_ns = decimal(next_field(&mut it, "timestamp")?, 9, "timestamp")?;
    rec.offset = sectors_to_bytes(lba, "lba")?;
    rec.size = size;
    rec.device = asu;
    rec.stream = asu;
    Ok(true)
}

pub(super) fn write(w: &mut impl Write, r: &Record) -> Result<(), WriteError> {
    let read = op_rw(r, "SPC")?;
    let (lba, sectors) = sector_span(r)?;
    let us = r.time_ns / 1_000;
    writeln!(
        w,
        "{},{},{},{},{}.{:06}",
        r.device,
        lba,
        sectors * 512,
        if read { 'R' } else { 'W' },
        us / 1_000_000,
        us % 1_000_000
    )?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The one-pass parse gives what the field-by-field one gives, the
    /// error included, on every kind of line.
    #[test]
    fn one_pass_and_field_by_field_agree() {
        let lines: &[&str] = &[
            "0,657728,8192,R,0.011413",
            "1,31244784,32768,w,12345.5",
            "1,31244784,32768,W,7",
            "1,31244784,32768,W,7.",
            "1,31244784,32768,W,.25",
            "1,31244784,32768,W,7.123456789",
            "1,31244784,32768,W,7.1234567891",
            "1,31244784,32768,W,9999999999.999999999",
            "1,31244784,32768,W,99999999999.5",
            "1,31244784,32768,W,0.011413,extra,fields",
            "1,31244784,32768,W,0.011413,",
            "1,31244784,32768,W,0.011413x",
            "1,31244784,32768,W,0.01.1",
            "1,31244784,32768,W,",
            "1,31244784,32768,W",
            "1,31244784,32768,X,0.5",
            "1,31244784,32768,RW,0.5",
            "1,31244784,32768, R,0.5",
            "1, 31244784,32768,R,0.5",
            "1,31244784 ,32768,R,0.5",
            "1,31244784,32768,R, 0.5",
            "4294967296,0,512,R,0.5",
            "1,36028797018963968,512,R,0.5",
            "1,0,99999999999999999999,R,0.5",
            "1,0,-512,R,0.5",
            "1,0,0,R,0.5",
            ",0,512,R,0.5",
            "1,0,512,R,-0.5",
            "",
        ];
        super::super::tests::all_parses_agree(lines, parse, parse_fields);
        assert!(one_pass(b"0,657728,8192,R,0.011413").is_some());
        assert!(one_pass(b"1, 31244784,32768,R,0.5").is_none());
    }
}
