//! ssdsim's own CSV: header `time_ns,op,offset_bytes,size_bytes[,stream]`;
//! op `R`, `W`, `T` (trim) or `F` (flush) (or the words read/write/trim/flush).

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
        _ => {
            return Err(format!(
                "field \"op\": unknown op {:?} (R, W, T or F)",
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
        Op::Read => 'R',
        Op::Write => 'W',
        Op::Trim => 'T',
        Op::Flush => 'F',
    };
    writeln!(
        w,
        "{},{},{},{},{}",
        r.time_ns, op, r.offset, r.size, r.stream
    )?;
    Ok(())
}
