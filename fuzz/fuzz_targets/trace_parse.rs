//! Every trace format's line parser, through `TraceReader`.
//!
//! Input: byte 0 picks the format (`TraceFormat::ALL[b % 9]`), byte 1 the
//! parse options and a buffer size, the rest is the trace text.
//!
//! Properties:
//! * no panic; an error names `file:line` of a line of the input, briefly;
//! * the records and errors do not depend on the reader's buffer size (lines
//!   that straddle the buffer's end are gathered whole);
//! * every record is sane for its format (non-empty, no overflowing range,
//!   sector units where the format has them, device/stream as documented);
//! * skipping bad lines gives the strict read's records, then more;
//! * `trace convert` of a trace read without error, to every format, reads
//!   back (strictly) as the same records, up to each format's units; a record
//!   a format cannot express is refused as `Unrepresentable`, never written.
#![no_main]

use libfuzzer_sys::fuzz_target;
use ssdsim_host::trace::{convert_stream, ParseOptions, TraceError, TraceFormat, TraceReader};
use ssdsim_fuzz::*;
use std::io::{BufReader, Cursor};
use std::path::Path;

fuzz_target!(|data: &[u8]| {
    if data.len() < 2 {
        return;
    }
    let fmt = TraceFormat::ALL[data[0] as usize % TraceFormat::ALL.len()];
    let flags = data[1];
    let po = ParseOptions {
        blkparse_action: if flags & 1 == 0 { b'Q' } else { b'D' },
        msr_stream_by_host: flags & 2 != 0,
    };
    let small = 1 + (flags >> 2) as usize % 16;
    let text = &data[2..];

    let strict = read_all(text, fmt, po, false, 1 << 16);
    let chunked = read_all(text, fmt, po, false, small);
    assert_eq!(strict, chunked, "{fmt}: the buffer size changes the result");
    if let Some((loc, reason)) = &strict.error {
        check_error(fmt, text, loc, reason);
    }
    for r in &strict.records {
        check_record(fmt, &po, r);
    }

    let lenient = read_all(text, fmt, po, true, small);
    assert!(
        lenient.records.starts_with(&strict.records),
        "{fmt}: skipping bad lines changes the records before the first bad one"
    );
    if strict.error.is_none() {
        assert_eq!(strict, lenient, "{fmt}: no bad line, yet skipping changes the read");
    } else if let Some((loc, reason)) = &lenient.error {
        // Only the whole-file blkparse error survives skipping.
        assert_eq!(loc, "fuzz.trace", "{fmt}: {reason}");
    }
    for r in &lenient.records {
        check_record(fmt, &po, r);
    }

    if strict.error.is_some() {
        return;
    }
    // Rebased as `convert` does: from the first record's time, never backwards.
    let mut rebased = strict.records.clone();
    let mut last = 0;
    let base = rebased.first().map_or(0, |r| r.time_ns);
    for r in &mut rebased {
        let t = r.time_ns.max(last);
        last = t;
        r.time_ns = t - base;
    }
    for out in TraceFormat::ALL {
        let rdr = TraceReader::new(
            BufReader::with_capacity(small, Cursor::new(text)),
            fmt,
            "fuzz.trace",
            po,
        );
        let mut buf = Vec::new();
        let res = convert_stream(rdr, &mut buf, out, Path::new("out"));
        let first_bad = rebased.iter().position(|r| {
            !op_representable(out, r.op) || (!byte_ranges(out) && !widened_fits(r))
        });
        match res {
            Ok(rep) => {
                assert!(first_bad.is_none(), "{fmt} -> {out}: wrote an unrepresentable record");
                assert_eq!(rep.records, rebased.len() as u64);
                let back = read_all(&buf, out, ParseOptions::default(), false, 1 << 16);
                assert!(
                    back.error.is_none(),
                    "{fmt} -> {out}: the converted trace does not read back: {:?}\n{}",
                    back.error,
                    String::from_utf8_lossy(&buf)
                );
                let want: Vec<_> = rebased.iter().map(|r| after_convert(out, r)).collect();
                assert_eq!(back.records, want, "{fmt} -> {out}: records change");
            }
            Err(TraceError::Unrepresentable { what, .. }) => {
                assert!(first_bad.is_some(), "{fmt} -> {out}: refused: {what}");
            }
            Err(e) => panic!("{fmt} -> {out}: {e}"),
        }
    }
});
