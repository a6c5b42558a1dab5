//! MQSim ASCII trace: `arrival_time_ns device start_lba size_sectors type`,
//! type 1 = read, 0 = write (MQSim's `ASCII_Trace_Definition`).

use super::{
    end_of_fields, next_field, op_rw, read_write_flag, sector_span, sectors_to_bytes, uint, uint32,
    ws_fields, Record, WriteError,
};
use std::io::Write;

#[inline]
pub(super) fn parse(line: &[u8], rec: &mut Record) -> Result<bool, String> {
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
