//! DiskSim ASCII: `time_ms devno blkno size_in_blocks flags`, blocks of 512
//! bytes, flags bit 0 set = read (DiskSim's convention; 0 = write).

use super::{
    decimal, end_of_fields, next_field, op_rw, sector_span, sectors_to_bytes, uint, uint32,
    ws_fields, Op, Record, WriteError,
};
use std::io::Write;

/// A DiskSim line's fields read in one pass, each byte once: the time in
/// ns, the device, the block, the block count and the flags. `None` for any
/// line the field-by-field parse must decide, so that every error is the
/// one it gives: a time not of 1-13 digits with at most six after a point,
/// a number of 20 digits or more, a device over 32 bits, more or fewer than
/// five fields, a block or count whose bytes overflow. With the values, the
/// length of the last field (msr-cut, whose lines have this shape, takes a
/// type of one digit).
#[inline]
pub(super) fn one_pass(line: &[u8]) -> Option<([u64; 5], usize)> {
    let n = line.len();
    let mut i = 0;
    let ws = |i: &mut usize| {
        while *i < n && (line[*i] == b' ' || line[*i] == b'\t') {
            *i += 1;
        }
    };
    let digits = |i: &mut usize, max: usize| super::digits_at_most(line, i, max);
    // The field ends here: whitespace or the line's end.
    let ends = |i: usize| i == n || line[i] == b' ' || line[i] == b'\t';
    let mut v = [0u64; 5];
    ws(&mut i);
    let (ms, len) = digits(&mut i, 13);
    if len == 0 {
        return None;
    }
    v[0] = ms * 1_000_000;
    if i < n && line[i] == b'.' {
        i += 1;
        let (frac, len) = digits(&mut i, 7);
        if len == 0 || len > 6 {
            return None;
        }
        v[0] += frac * 10u64.pow(6 - len as u32);
    }
    if !ends(i) {
        return None;
    }
    let mut last = 0;
    for slot in &mut v[1..] {
        (*slot, last) = super::ws_uint_at(line, &mut i)?;
    }
    ws(&mut i);
    if i != n || v[1] > u32::MAX as u64 {
        return None;
    }
    v[2].checked_mul(crate::workload::SECTOR)?;
    v[3].checked_mul(crate::workload::SECTOR)?;
    Some((v, last))
}

#[inline]
pub(super) fn parse(line: &[u8], rec: &mut Record) -> Result<bool, String> {
    if let Some(([t, dev, blk, count, flags], _)) = one_pass(line) {
        rec.time_ns = t;
        rec.device = dev as u32;
        rec.op = if flags & 1 == 1 { Op::Read } else { Op::Write };
        rec.offset = blk * crate::workload::SECTOR;
        rec.size = count * crate::workload::SECTOR;
        rec.stream = rec.device;
        return Ok(true);
    }
    parse_fields(line, rec)
}

/// [`parse`] field by field, with the error of the first bad field.
pub(super) fn parse_fields(line: &[u8], rec: &mut Record) -> Result<bool, String> {
    let mut it = ws_fields(line);
    rec.time_ns = decimal(next_field(&mut it, "time_ms")?, 6, "time_ms")?;
    rec.device = uint32(next_field(&mut it, "devno")?, "devno")?;
    let blk = uint(next_field(&mut it, "blkno")?, "blkno")?;
    let n = uint(next_field(&mut it, "size")?, "size")?;
    let flags = uint(next_field(&mut it, "flags")?, "flags")?;
    end_of_fields(&mut it, "DiskSim", 5)?;
    rec.op = if flags & 1 == 1 { Op::Read } else { Op::Write };
    rec.offset = sectors_to_bytes(blk, "blkno")?;
    rec.size = sectors_to_bytes(n, "size")?;
    rec.stream = rec.device;
    Ok(true)
}

pub(super) fn write(w: &mut impl Write, r: &Record) -> Result<(), WriteError> {
    let read = op_rw(r, "DiskSim")?;
    let (lba, n) = sector_span(r)?;
    writeln!(
        w,
        "{}.{:06} {} {} {} {}",
        r.time_ns / 1_000_000,
        r.time_ns % 1_000_000,
        r.device,
        lba,
        n,
        read as u8
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
            "0.000 5 174224064 16 1",
            "0.221 5 162947904 16 0",
            "  12 5 1 16 3  ",
            "\t12.5\t5\t1\t16\t2",
            "12. 5 1 16 2",
            ".5 5 1 16 2",
            "12.1234567 5 1 16 2",
            "12.123456 5 1 16 2",
            "9999999999999.999999 5 1 16 2",
            "99999999999999 5 1 16 2",
            "12x 5 1 16 2",
            "12.5x 5 1 16 2",
            "1 4294967295 1 16 1",
            "1 4294967296 1 16 1",
            "1 5 36028797018963968 16 1",
            "1 5 1 36028797018963968 1",
            "1 5 99999999999999999999 16 1",
            "1 5 18446744073709551615 16 1",
            "1 5 1 16",
            "1 5 1 16 1 7",
            "1 5 -1 16 1",
            "1 5 1 16 1x",
            "1 5 1 0 1",
            "-1 5 1 16 1",
            "",
        ];
        super::super::tests::all_parses_agree(lines, parse, parse_fields);
        assert!(one_pass(b"0.221 5 162947904 16 1").is_some());
        assert!(one_pass(b"12.1234567 5 1 16 2").is_none());
    }
}
