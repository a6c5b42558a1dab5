//! SPC / UMass trace format: `ASU,LBA,Size,Opcode,Timestamp[,optional...]`.
//! LBA in 512-byte sectors within the ASU, size in bytes, opcode `R`/`W` (any
//! case), timestamp in seconds (decimal). The ASU is the device and the stream.

use super::{
    csv_fields, decimal, next_field, op_rw, sector_span, sectors_to_bytes, show, uint, uint32, Op,
    Record, WriteError,
};
use std::io::Write;

#[inline]
pub(super) fn parse(line: &[u8], rec: &mut Record) -> Result<bool, String> {
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
