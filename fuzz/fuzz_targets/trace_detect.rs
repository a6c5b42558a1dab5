//! Format detection (`trace::detect`).
//!
//! Input byte 0, even: the rest is a sample given to `detect` as it is.
//! * no panic, no empty reason;
//! * a detected format other than blkparse (whose detection looks only at the
//!   shape of event lines) reads the lines detection looked at without a parse
//!   error and with at least one record: detection never names a format that
//!   then fails on the trace's first lines.
//!
//! Byte 0, odd: the rest describes records, which are written in one format
//! (`write_records`, as `trace convert` writes them) and detected again:
//! * a trace written by ssdsim is detected as its format, but for the one
//!   ambiguity `detect` documents (DiskSim vs msr-cut: five whitespace fields
//!   with decimal times, told apart by whether every offset and size is a
//!   multiple of 512).
#![no_main]

use libfuzzer_sys::fuzz_target;
use ssdsim_host::trace::{detect, write_records, Op, ParseOptions, Record, TraceFormat};
use ssdsim_fuzz::*;

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    if mode & 1 == 0 {
        sample(rest);
    } else {
        written(mode >> 1, rest);
    }
});

fn sample(s: &[u8]) {
    let fmt = match detect(s) {
        Ok(f) => f,
        Err(reason) => {
            assert!(!reason.is_empty());
            return;
        }
    };
    if fmt == TraceFormat::Blkparse {
        return;
    }
    // The lines detection uses: trimmed, no blanks or comments, the first 20.
    let lines: Vec<&[u8]> = s
        .split(|&b| b == b'\n')
        .map(|l| {
            let mut l = l;
            while let [rest @ .., b'\r' | b' ' | b'\t'] = l {
                l = rest;
            }
            while let [b' ' | b'\t', rest @ ..] = l {
                l = rest;
            }
            l
        })
        .filter(|l| !l.is_empty() && l[0] != b'#')
        .take(20)
        .collect();
    let text = lines.join(&b'\n');
    let r = read_all(&text, fmt, ParseOptions::default(), false, 1 << 16);
    if let Some((loc, reason)) = &r.error {
        // The reader's own checks on a parsed record are not the parser's.
        let record_check =
            reason.contains("zero-length request") || reason.contains("offset + size overflows");
        assert!(
            record_check,
            "detected {fmt}, which fails at {loc}: {reason}\n{}",
            String::from_utf8_lossy(&text)
        );
    } else {
        assert!(!r.records.is_empty(), "detected {fmt} without a record");
    }
}

/// Records from bytes: 8 bytes a record (time step, op, offset, size, ids).
fn records(b: &[u8]) -> Vec<Record> {
    let mut t = 0u64;
    b.chunks_exact(8)
        .take(25)
        .map(|c| {
            t += u64::from(c[0]) * 1_000_003;
            let shift = |x: u8| u32::from(x % 48);
            Record {
                time_ns: t,
                op: if c[1] & 1 == 0 { Op::Read } else { Op::Write },
                offset: (u64::from(c[2]) << shift(c[3])) & ((1 << 48) - 1),
                size: (u64::from(c[4]).max(1)) << (c[5] % 24),
                device: u32::from(c[6] % 4),
                stream: u32::from(c[7]),
                sync: c[1] & 2 != 0,
            }
        })
        .collect()
}

fn written(pick: u8, b: &[u8]) {
    let fmt = TraceFormat::ALL[pick as usize % TraceFormat::ALL.len()];
    let recs = records(b);
    if recs.is_empty() {
        return;
    }
    let mut out = Vec::new();
    write_records(&mut out, fmt, &recs).expect("reads and writes are representable");
    let got = detect(&out).unwrap_or_else(|e| {
        panic!(
            "a {fmt} trace written by ssdsim is not detected: {e}\n{}",
            String::from_utf8_lossy(&out)
        )
    });
    // What the five-field rule sees: the two numeric middle columns (DiskSim:
    // sectors; msr-cut: bytes), as written.
    let first20 = &recs[..recs.len().min(20)];
    let ambiguous = match fmt {
        TraceFormat::Disksim => first20.iter().all(|r| {
            let lba = r.offset / SECTOR;
            let n = (r.offset + r.size).div_ceil(SECTOR) - lba;
            lba % SECTOR == 0 && n % SECTOR == 0
        }),
        TraceFormat::MsrCut => !first20
            .iter()
            .all(|r| r.offset % SECTOR == 0 && r.size % SECTOR == 0),
        _ => false,
    };
    if ambiguous {
        assert!(
            matches!(got, TraceFormat::Disksim | TraceFormat::MsrCut),
            "{fmt} detected as {got}"
        );
    } else {
        assert_eq!(got, fmt, "{}", String::from_utf8_lossy(&out));
    }
}
