//! DiskSim ASCII: `time_ms devno blkno size_in_blocks flags`, blocks of 512
//! bytes, flags bit 0 set = read (DiskSim's convention; 0 = write).

use super::{
    decimal, end_of_fields, next_field, op_rw, sector_span, sectors_to_bytes, uint, uint32,
    ws_fields, Op, Record, WriteError,
};
use std::io::Write;

#[inline]
pub(super) fn parse(line: &[u8], rec: &mut Record) -> Result<bool, String> {
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
