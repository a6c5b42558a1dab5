//! FIU IODedup traces: `timestamp_ns pid process lba size_sectors R|W major minor md5`.
//! The pid is the stream, the major number the device. The md5 (content hash of
//! each 4 KiB block) is not used.

use super::{
    next_field, op_rw, sector_span, sectors_to_bytes, show, uint, uint32, ws_fields, Op, Record,
    WriteError,
};
use std::io::Write;

#[inline]
pub(super) fn parse(line: &[u8], rec: &mut Record) -> Result<bool, String> {
    let mut it = ws_fields(line);
    rec.time_ns = uint(next_field(&mut it, "timestamp")?, "timestamp")?;
    rec.stream = uint32(next_field(&mut it, "pid")?, "pid")?;
    let proc_ = next_field(&mut it, "process")?;
    if proc_.iter().all(u8::is_ascii_digit) {
        return Err(format!(
            "field \"process\": expected a process name, got {:?}",
            show(proc_)
        ));
    }
    let lba = uint(next_field(&mut it, "lba")?, "lba")?;
    let n = uint(next_field(&mut it, "size")?, "size")?;
    let op = next_field(&mut it, "op")?;
    rec.op = match op {
        b"R" | b"r" => Op::Read,
        b"W" | b"w" => Op::Write,
        _ => return Err(format!("field \"op\": unknown op {:?} (R or W)", show(op))),
    };
    rec.device = uint32(next_field(&mut it, "major")?, "major")?;
    uint(next_field(&mut it, "minor")?, "minor")?;
    rec.offset = sectors_to_bytes(lba, "lba")?;
    rec.size = sectors_to_bytes(n, "size")?;
    Ok(true)
}

/// The process is written as `ssdsim` and the content hash as `-` (content is
/// not simulated).
pub(super) fn write(w: &mut impl Write, r: &Record) -> Result<(), WriteError> {
    let read = op_rw(r, "FIU")?;
    let (lba, n) = sector_span(r)?;
    writeln!(
        w,
        "{} {} ssdsim {} {} {} {} 0 -",
        r.time_ns,
        r.stream,
        lba,
        n,
        if read { 'R' } else { 'W' },
        r.device
    )?;
    Ok(())
}
