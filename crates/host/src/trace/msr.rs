//! MSR Cambridge CSV: `Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime`.
//! Timestamp and ResponseTime in Windows FILETIME ticks of 100 ns, Type
//! `Read`/`Write`, Offset and Size in bytes. No header line.

use super::{
    csv_fields, next_field, op_rw, show, uint, uint32, Op, ParseOptions, Record, WriteError,
};
use std::io::Write;

/// FNV-1a of a hostname: a deterministic stream id.
#[inline]
fn host_id(h: &[u8]) -> u32 {
    let mut x: u32 = 0x811c_9dc5;
    for &b in h {
        x ^= b as u32;
        x = x.wrapping_mul(0x0100_0193);
    }
    x
}

#[inline]
pub(super) fn parse(line: &[u8], po: &ParseOptions, rec: &mut Record) -> Result<bool, String> {
    let mut it = csv_fields(line);
    let ticks = uint(next_field(&mut it, "timestamp")?, "timestamp")?;
    let host = next_field(&mut it, "hostname")?;
    if host.is_empty() || host[0].is_ascii_digit() {
        return Err(format!(
            "field \"hostname\": expected a host name, got {:?}",
            show(host)
        ));
    }
    let disk = uint32(next_field(&mut it, "disknumber")?, "disknumber")?;
    let ty = next_field(&mut it, "type")?;
    rec.op = if ty.eq_ignore_ascii_case(b"read") {
        Op::Read
    } else if ty.eq_ignore_ascii_case(b"write") {
        Op::Write
    } else {
        return Err(format!(
            "field \"type\": unknown type {:?} (Read or Write)",
            show(ty)
        ));
    };
    rec.offset = uint(next_field(&mut it, "offset")?, "offset")?;
    rec.size = uint(next_field(&mut it, "size")?, "size")?;
    uint(next_field(&mut it, "responsetime")?, "responsetime")?;
    if it.next().is_some() {
        return Err("too many fields for MSR (expected 7)".into());
    }
    rec.time_ns = ticks
        .checked_mul(100)
        .ok_or_else(|| format!("field \"timestamp\": {ticks} ticks overflow 64-bit ns"))?;
    rec.device = disk;
    rec.stream = if po.msr_stream_by_host {
        host_id(host)
    } else {
        disk
    };
    Ok(true)
}

/// Times are written as ticks since the trace start (not an absolute FILETIME);
/// the hostname is `ssdsim`; the response time, which a trace replay does not
/// know, is written as 0.
pub(super) fn write(w: &mut impl Write, r: &Record) -> Result<(), WriteError> {
    let read = op_rw(r, "MSR")?;
    writeln!(
        w,
        "{},ssdsim,{},{},{},{},0",
        r.time_ns / 100,
        r.device,
        if read { "Read" } else { "Write" },
        r.offset,
        r.size
    )?;
    Ok(())
}
