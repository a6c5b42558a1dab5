//! CloudPhysics VSCSI CSV as libCacheSim ships it: header `version,time,op,size,lbn`;
//! time in whole seconds, op the SCSI opcode in hex (READ/WRITE 6, 10, 12, 16),
//! size in bytes, lbn in 512-byte sectors.

use super::{
    csv_fields, end_of_fields, next_field, op_rw, sector_span, sectors_to_bytes, show, uint, Op,
    Record, WriteError,
};
use std::io::Write;

const HEADER: &[u8] = b"version,time,op,size,lbn";

#[inline]
pub(super) fn parse(line: &[u8], rec: &mut Record) -> Result<bool, String> {
    if line == HEADER {
        return Ok(false);
    }
    let mut it = csv_fields(line);
    uint(next_field(&mut it, "version")?, "version")?;
    let secs = uint(next_field(&mut it, "time")?, "time")?;
    let op = next_field(&mut it, "op")?;
    rec.op = if op.eq_ignore_ascii_case(b"28")
        || op.eq_ignore_ascii_case(b"08")
        || op.eq_ignore_ascii_case(b"a8")
        || op.eq_ignore_ascii_case(b"88")
    {
        Op::Read
    } else if op.eq_ignore_ascii_case(b"2a")
        || op.eq_ignore_ascii_case(b"0a")
        || op.eq_ignore_ascii_case(b"aa")
        || op.eq_ignore_ascii_case(b"8a")
    {
        Op::Write
    } else {
        return Err(format!(
            "field \"op\": unknown SCSI opcode {:?} (28/08/a8/88 read, 2a/0a/aa/8a write)",
            show(op)
        ));
    };
    rec.size = uint(next_field(&mut it, "size")?, "size")?;
    let lbn = uint(next_field(&mut it, "lbn")?, "lbn")?;
    end_of_fields(&mut it, "cloudphysics", 5)?;
    rec.offset = sectors_to_bytes(lbn, "lbn")?;
    rec.time_ns = secs
        .checked_mul(1_000_000_000)
        .ok_or_else(|| format!("field \"time\": {secs} s overflows 64-bit ns"))?;
    rec.device = 0;
    rec.stream = 0;
    Ok(true)
}

pub(super) fn header(w: &mut impl Write) -> std::io::Result<()> {
    w.write_all(HEADER)?;
    w.write_all(b"\n")
}

/// Times are truncated to whole seconds, as in the original.
pub(super) fn write(w: &mut impl Write, r: &Record) -> Result<(), WriteError> {
    let read = op_rw(r, "cloudphysics")?;
    let (lba, n) = sector_span(r)?;
    writeln!(
        w,
        "1,{},{},{},{}",
        r.time_ns / 1_000_000_000,
        if read { "28" } else { "2a" },
        n * 512,
        lba
    )?;
    Ok(())
}
