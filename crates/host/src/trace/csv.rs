//! ssdsim's own CSV: header `time_ns,op,offset_bytes,size_bytes[,stream]`;
//! op `R`, `W`, `T` (trim) or `F` (flush) (or the words read/write/trim/flush),
//! and a zoned drive's commands: `ZA` (zone append, `zone_append`), `ZR`
//! (`zone_reset`), `ZF` (`zone_finish`), `ZO` (`zone_open`), `ZC`
//! (`zone_close`), the offset the zone's start and the size 0 but for an
//! append's.

use super::{csv_fields, end_of_fields, next_field, show, uint, uint32, Op, Record, WriteError};
use std::io::Write;

const HEADER4: &[u8] = b"time_ns,op,offset_bytes,size_bytes";
const HEADER5: &[u8] = b"time_ns,op,offset_bytes,size_bytes,stream";

#[inline]
pub(super) fn parse(line: &[u8], rec: &mut Record) -> Result<bool, String> {
    if line == HEADER4 || line == HEADER5 {
        return Ok(false);
    }
    let mut it = csv_fields(line);
    rec.time_ns = uint(next_field(&mut it, "time_ns")?, "time_ns")?;
    let op = next_field(&mut it, "op")?;
    rec.op = match op {
        b"R" | b"r" | b"read" => Op::Read,
        b"W" | b"w" | b"write" => Op::Write,
        b"T" | b"t" | b"trim" => Op::Trim,
        b"F" | b"f" | b"flush" => Op::Flush,
        b"ZA" | b"za" | b"zone_append" => Op::ZoneAppend,
        b"ZR" | b"zr" | b"zone_reset" => Op::ZoneReset,
        b"ZF" | b"zf" | b"zone_finish" => Op::ZoneFinish,
        b"ZO" | b"zo" | b"zone_open" => Op::ZoneOpen,
        b"ZC" | b"zc" | b"zone_close" => Op::ZoneClose,
        _ => {
            return Err(format!(
                "field \"op\": unknown op {:?} (R, W, T, F, ZA, ZR, ZF, ZO or ZC)",
                show(op)
            ))
        }
    };
    rec.offset = uint(next_field(&mut it, "offset_bytes")?, "offset_bytes")?;
    rec.size = uint(next_field(&mut it, "size_bytes")?, "size_bytes")?;
    rec.stream = match it.next() {
        Some(s) => uint32(s, "stream")?,
        None => 0,
    };
    end_of_fields(&mut it, "csv", 5)?;
    rec.device = 0;
    Ok(true)
}

pub(super) fn header(w: &mut impl Write) -> std::io::Result<()> {
    w.write_all(HEADER5)?;
    w.write_all(b"\n")
}

pub(super) fn write(w: &mut impl Write, r: &Record) -> Result<(), WriteError> {
    let op = match r.op {
        Op::Read => "R",
        Op::Write => "W",
        Op::Trim => "T",
        Op::Flush => "F",
        Op::ZoneAppend => "ZA",
        Op::ZoneReset => "ZR",
        Op::ZoneFinish => "ZF",
        Op::ZoneOpen => "ZO",
        Op::ZoneClose => "ZC",
    };
    writeln!(
        w,
        "{},{},{},{},{}",
        r.time_ns, op, r.offset, r.size, r.stream
    )?;
    Ok(())
}
