//! MSR Cambridge windows as cut by Heimdall (`msr.cut.per_10k.*.trace`):
//! `time_ms device offset_bytes size_bytes type`, type 1 = read, 0 = write.

use super::{
    decimal, end_of_fields, next_field, op_rw, read_write_flag, uint, uint32, ws_fields, Op,
    Record, WriteError,
};
use std::io::Write;

#[inline]
pub(super) fn parse(line: &[u8], rec: &mut Record) -> Result<bool, String> {
    // A line of DiskSim's shape (time in ms, then four whole numbers), read
    // in one pass; its type one digit, 0 or 1. Any other line is read field
    // by field, which gives its error.
    if let Some(([t, dev, offset, size, ty], 1)) = super::disksim::one_pass(line) {
        if ty <= 1 {
            rec.time_ns = t;
            rec.device = dev as u32;
            rec.offset = offset;
            rec.size = size;
            rec.op = if ty == 1 { Op::Read } else { Op::Write };
            rec.stream = rec.device;
            return Ok(true);
        }
    }
    parse_fields(line, rec)
}

/// [`parse`] field by field, with the error of the first bad field.
pub(super) fn parse_fields(line: &[u8], rec: &mut Record) -> Result<bool, String> {
    let mut it = ws_fields(line);
    rec.time_ns = decimal(next_field(&mut it, "time_ms")?, 6, "time_ms")?;
    rec.device = uint32(next_field(&mut it, "device")?, "device")?;
    rec.offset = uint(next_field(&mut it, "offset")?, "offset")?;
    rec.size = uint(next_field(&mut it, "size")?, "size")?;
    let ty = next_field(&mut it, "type")?;
    end_of_fields(&mut it, "msr-cut", 5)?;
    rec.op = read_write_flag(ty)?;
    rec.stream = rec.device;
    Ok(true)
}

pub(super) fn write(w: &mut impl Write, r: &Record) -> Result<(), WriteError> {
    let read = op_rw(r, "msr-cut")?;
    writeln!(
        w,
        "{}.{:06} {} {} {} {}",
        r.time_ns / 1_000_000,
        r.time_ns % 1_000_000,
        r.device,
        r.offset,
        r.size,
        read as u8
    )?;
    Ok(())
}
