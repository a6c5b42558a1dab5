//! MQSim ASCII trace: `arrival_time_ns device start_lba size_sectors type`,
//! type 1 = read, 0 = write (MQSim's `ASCII_Trace_Definition`).

use super::{
    end_of_fields, next_field, op_rw, read_write_flag, sector_span, sectors_to_bytes, uint, uint32,
    ws_fields, Record, WriteError,
};
use std::io::Write;

/// A line of five fields, each of at most 19 digits (below 2^64), the last
/// 0 or 1, separated by spaces or tabs: the fields in one pass over the
/// bytes, each digit read once. Anything else is None, and the line is
/// parsed field by field ([`parse_fields`]), which says what is wrong.
#[inline]
fn five_uints(line: &[u8]) -> Option<[u64; 5]> {
    let mut v = [0u64; 5];
    let mut i = 0;
    let mut len = 0;
    let n = line.len();
    for slot in v.iter_mut() {
        (*slot, len) = super::ws_uint_at(line, &mut i)?;
    }
    while i < n && (line[i] == b' ' || line[i] == b'\t') {
        i += 1;
    }
    // The type is one digit, 0 or 1 (`read_write_flag`).
    (i == n && len == 1 && v[4] <= 1).then_some(v)
}

#[inline]
pub(super) fn parse(line: &[u8], rec: &mut Record) -> Result<bool, String> {
    if let Some([t, dev, lba, n, ty]) = five_uints(line) {
        if let (Ok(dev), Some(offset), Some(size)) = (
            u32::try_from(dev),
            lba.checked_mul(crate::workload::SECTOR),
            n.checked_mul(crate::workload::SECTOR),
        ) {
            rec.time_ns = t;
            rec.device = dev;
            rec.op = if ty == 1 {
                super::Op::Read
            } else {
                super::Op::Write
            };
            rec.offset = offset;
            rec.size = size;
            rec.stream = dev;
            return Ok(true);
        }
    }
    parse_fields(line, rec)
}

/// [`parse`] field by field, with the error of the first bad field.
pub(super) fn parse_fields(line: &[u8], rec: &mut Record) -> Result<bool, String> {
    let mut it = ws_fields(line);
    rec.time_ns = uint(next_field(&mut it, "time_ns")?, "time_ns")?;
    rec.device = uint32(next_field(&mut it, "device")?, "device")?;
    let lba = uint(next_field(&mut it, "lba")?, "lba")?;
    let n = uint(next_field(&mut it, "size")?, "size")?;
    let ty = next_field(&mut it, "type")?;
    end_of_fields(&mut it, "MQSim", 5)?;
    rec.op = read_write_flag(ty)?;
    rec.offset = sectors_to_bytes(lba, "lba")?;
    rec.size = sectors_to_bytes(n, "size")?;
    rec.stream = rec.device;
    Ok(true)
}

pub(super) fn write(w: &mut impl Write, r: &Record) -> Result<(), WriteError> {
    let read = op_rw(r, "MQSim")?;
    let (lba, n) = sector_span(r)?;
    writeln!(w, "{} {} {} {} {}", r.time_ns, r.device, lba, n, read as u8)?;
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
            "120000 0 16 8 0",
            "0 3 0 8 1",
            "  7\t2  99 1024 1  ",
            "0000120000 00 016 08 1",
            "1 0 0 8 01",
            "1 0 0 8 2",
            "1 0 0 8",
            "1 0 0 8 1 9",
            "1 4294967296 0 8 1",
            "1 0 99999999999999999999 8 1",
            "1 0 9999999999999999999 8 1",
            "1 0 18446744073709551615 8 1",
            "12345678901234567890 0 0 8 1",
            "1 0 -4 8 1",
            "1 0 4x 8 1",
            "1 0 4 8 1x",
        ];
        super::super::tests::all_parses_agree(lines, parse, parse_fields);
        assert!(five_uints(b"120000 0 16 8 0").is_some());
        assert!(five_uints(b"1 0 0 8 01").is_none());
    }
}
