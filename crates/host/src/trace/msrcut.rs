//! MSR Cambridge windows as cut by Heimdall (`msr.cut.per_10k.*.trace`):
//! `time_ms device offset_bytes size_bytes type`, type 1 = read, 0 = write.

use super::{
    decimal, end_of_fields, next_field, op_rw, read_write_flag, uint, uint32, ws_fields, Record,
    WriteError,
};
use std::io::Write;

#[inline]
pub(super) fn parse(line: &[u8], rec: &mut Record) -> Result<bool, String> {
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
