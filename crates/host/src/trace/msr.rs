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

/// An MSR line's fields read in one pass, each byte once: the tick count,
/// the hostname, the disk number, whether it is a read, the offset and the
/// size. `None` for any line the field-by-field parse must decide, so that
/// every error is the one it gives: a field with spaces or tabs around it,
/// a number of 20 digits or more, a disk number over 32 bits, a type other
/// than `Read`/`Write` in any case, a hostname that is empty or begins
/// with a digit, more or fewer than seven fields, ticks whose ns overflow.
#[inline]
fn one_pass(line: &[u8]) -> Option<Fields<'_>> {
    let n = line.len();
    let mut i = 0;
    // A field of 1-19 digits ending at a comma (`last`: at the line's end).
    let num = |i: &mut usize, last: bool| -> Option<u64> {
        let (x, len) = super::digits_at(line, i);
        if len == 0 || len > 19 {
            return None;
        }
        if last {
            (*i == n).then_some(x)
        } else if *i < n && line[*i] == b',' {
            *i += 1;
            Some(x)
        } else {
            None
        }
    };
    // A field up to the next comma, with no space or tab at either end.
    let word = |i: &mut usize| -> Option<&[u8]> {
        let start = *i;
        while *i < n && line[*i] != b',' {
            *i += 1;
        }
        if *i == n {
            return None;
        }
        let f = &line[start..*i];
        *i += 1;
        match (f.first(), f.last()) {
            (Some(a), Some(z)) if !matches!(a, b' ' | b'\t') && !matches!(z, b' ' | b'\t') => {
                Some(f)
            }
            _ => None,
        }
    };
    let ticks = num(&mut i, false)?;
    let host = word(&mut i)?;
    if host[0].is_ascii_digit() {
        return None;
    }
    let disk = u32::try_from(num(&mut i, false)?).ok()?;
    let ty = word(&mut i)?;
    let read = if ty.eq_ignore_ascii_case(b"read") {
        true
    } else if ty.eq_ignore_ascii_case(b"write") {
        false
    } else {
        return None;
    };
    let offset = num(&mut i, false)?;
    let size = num(&mut i, false)?;
    num(&mut i, true)?;
    Some(Fields {
        time_ns: ticks.checked_mul(100)?,
        host,
        disk,
        read,
        offset,
        size,
    })
}

/// What [`one_pass`] read of a line: the time in ns, then the fields.
struct Fields<'a> {
    time_ns: u64,
    host: &'a [u8],
    disk: u32,
    read: bool,
    offset: u64,
    size: u64,
}

#[inline]
pub(super) fn parse(line: &[u8], po: &ParseOptions, rec: &mut Record) -> Result<bool, String> {
    if let Some(f) = one_pass(line) {
        rec.time_ns = f.time_ns;
        rec.op = if f.read { Op::Read } else { Op::Write };
        rec.offset = f.offset;
        rec.size = f.size;
        rec.device = f.disk;
        rec.stream = if po.msr_stream_by_host {
            host_id(f.host)
        } else {
            f.disk
        };
        return Ok(true);
    }
    parse_fields(line, po, rec)
}

/// [`parse`] field by field, with the error of the first bad field.
pub(super) fn parse_fields(
    line: &[u8],
    po: &ParseOptions,
    rec: &mut Record,
) -> Result<bool, String> {
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The one-pass parse gives what the field-by-field one gives, the
    /// error included, on every kind of line, with streams by disk and by
    /// host.
    #[test]
    fn one_pass_and_field_by_field_agree() {
        let lines: &[&str] = &[
            "128166372003061629,hm,0,Read,3154132992,4096,1299",
            "128166372003061629,hm,1,Write,0,512,0",
            "1,usr,2,READ,8,8,0",
            "1,usr,2,wRiTe,8,8,0",
            "0001,src1,002,Read,0008,0512,0",
            "1, hm,0,Read,0,4096,0",
            "1,hm ,0,Read,0,4096,0",
            " 1,hm,0,Read,0,4096,0",
            "1,hm,0,Read,0,4096, 0",
            "1,hm,0, Read ,0,4096,0",
            "1,hm,0,Read,0,4096,0 ",
            "1,hm,0,Trim,0,4096,0",
            "1,hm,0,Reads,0,4096,0",
            "1,,0,Read,0,4096,0",
            "1,7hm,0,Read,0,4096,0",
            "1,h m,0,Read,0,4096,0",
            "1,hm,4294967295,Read,0,4096,0",
            "1,hm,4294967296,Read,0,4096,0",
            "1,hm,0,Read,0,4096",
            "1,hm,0,Read,0,4096,0,9",
            "1,hm,0,Read,0,4096,0,",
            "1,hm,0,Read,,4096,0",
            "1,hm,0,Read,-8,4096,0",
            "1,hm,0,Read,8x,4096,0",
            "1,hm,0,Read,0,4096,0x",
            "1,hm,0,Read,9999999999999999999,4096,0",
            "1,hm,0,Read,99999999999999999999,4096,0",
            "1,hm,0,Read,18446744073709551615,4096,0",
            "184467440737095516,hm,0,Read,0,4096,0",
            "184467440737095517,hm,0,Read,0,4096,0",
            "12345678901234567890,hm,0,Read,0,4096,0",
            "",
            ",,,,,,",
        ];
        for by_host in [false, true] {
            let po = ParseOptions {
                msr_stream_by_host: by_host,
                ..ParseOptions::default()
            };
            super::super::tests::all_parses_agree(
                lines,
                |l, r| parse(l, &po, r),
                |l, r| parse_fields(l, &po, r),
            );
        }
        // The common lines take the one pass.
        assert!(one_pass(b"128166372003061629,hm,0,Read,3154132992,4096,1299").is_some());
        assert!(one_pass(b"1,usr,2,wRiTe,8,8,0").is_some());
        assert!(one_pass(b"1, hm,0,Read,0,4096,0").is_none());
    }
}
