//! The unit parsers: `parse_size`, `parse_dur`, `parse_si` and fio's sizes
//! (`fio::fio_size`), against an exact big-integer oracle.
//!
//! Properties:
//! * no panic;
//! * a size is the exact number of bytes the text says, or an error (not a
//!   whole number of bytes, out of range, unknown unit, too many digits): no
//!   rounding through floating point;
//! * a duration is the exact value rounded to the nearest nanosecond (halves
//!   up), or an error;
//! * `fmt_size` / `fmt_dur` of a parsed value parse back to it;
//! * an SI value is finite and not negative, and its echo (`fmt_si`) reads
//!   back to within 1e-9 relative.
#![no_main]

use libfuzzer_sys::fuzz_target;
use ssd_core::units::{fmt_dur, fmt_si, fmt_size, parse_dur, parse_si, parse_size, Dur};
use ssdsim::fio::fio_size;
use ssdsim_fuzz::*;

/// More significant digits than this may be refused ("too many digits").
const MAX_DIGITS: usize = 20;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    size(text);
    dur(text);
    fio(text, 1024);
    fio(text, 1000);
    si(text);
});

fn size(text: &str) {
    let got = parse_size(text);
    if let Ok(s) = got {
        assert_eq!(parse_size(&fmt_size(s)), Ok(s), "{text:?} -> {}", fmt_size(s));
    }
    let Some((n, d, sig, unit)) = split_number(text.trim(), true) else {
        assert!(got.is_err(), "{text:?} is no number, yet reads as {got:?}");
        return;
    };
    let mult: u64 = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "k" | "kib" | "ki" => 1 << 10,
        "m" | "mib" | "mi" => 1 << 20,
        "g" | "gib" | "gi" => 1 << 30,
        "t" | "tib" | "ti" => 1 << 40,
        "kb" => 1_000,
        "mb" => 1_000_000,
        "gb" => 1_000_000_000,
        "tb" => 1_000_000_000_000,
        "s" | "sector" | "sectors" => 512,
        _ => {
            assert!(got.is_err(), "{text:?}: unknown unit, yet {got:?}");
            return;
        }
    };
    let (q, exact, _) = scale(&n, d, mult, 1);
    let want = to_u64(&q).filter(|&v| exact && v < 1 << 63);
    match (want, &got) {
        (Some(v), Ok(s)) => assert_eq!(s.0, v, "{text:?}"),
        (None, Err(_)) => {}
        (Some(v), Err(e)) => assert!(sig > MAX_DIGITS, "{text:?} is {v} bytes, yet: {e}"),
        (None, Ok(s)) => panic!("{text:?} is not a whole number of bytes in range, yet {s:?}"),
    }
}

fn dur(text: &str) {
    let got = parse_dur(text);
    if let Ok(d) = got {
        assert!(d <= Dur::MAX);
        assert_eq!(parse_dur(&fmt_dur(d)), Ok(d), "{text:?} -> {}", fmt_dur(d));
    }
    let Some((n, d, sig, unit)) = split_number(text.trim(), true) else {
        assert!(got.is_err(), "{text:?} is no number, yet reads as {got:?}");
        return;
    };
    let (num, den): (u64, u64) = match unit.trim() {
        "" | "ns" => (1, 1),
        "ps" => (1, 1000),
        "us" | "µs" => (1_000, 1),
        "ms" => (1_000_000, 1),
        "s" => (1_000_000_000, 1),
        "min" => (60_000_000_000, 1),
        "h" => (3_600_000_000_000, 1),
        _ => {
            assert!(got.is_err(), "{text:?}: unknown unit, yet {got:?}");
            return;
        }
    };
    let (_, _, rounded) = scale(&n, d, num, den);
    let want = to_u64(&rounded).filter(|&v| v <= Dur::MAX.0);
    match (want, &got) {
        (Some(v), Ok(x)) => assert_eq!(x.0, v, "{text:?}"),
        (None, Err(_)) => {}
        (Some(v), Err(e)) => assert!(sig > MAX_DIGITS, "{text:?} is {v} ns, yet: {e}"),
        (None, Ok(x)) => panic!("{text:?} is out of range, yet {x:?}"),
    }
}

fn fio(text: &str, kb_base: u64) {
    let got = fio_size(text, kb_base);
    let Some((n, d, sig, unit)) = split_number(text.trim(), false) else {
        assert!(got.is_err(), "{text:?} is no number, yet reads as {got:?}");
        return;
    };
    let other = if kb_base == 1000 { 1024 } else { 1000 };
    let (pow, base) = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => (0, 1),
        "k" | "kb" => (1, kb_base),
        "m" | "mb" => (2, kb_base),
        "g" | "gb" => (3, kb_base),
        "t" | "tb" => (4, kb_base),
        "p" | "pb" => (5, kb_base),
        "kib" => (1, other),
        "mib" => (2, other),
        "gib" => (3, other),
        "tib" => (4, other),
        "pib" => (5, other),
        _ => {
            assert!(got.is_err(), "{text:?}: unknown suffix, yet {got:?}");
            return;
        }
    };
    let (q, exact, _) = scale(&n, d, base.pow(pow), 1);
    let want = to_u64(&q).filter(|&v| exact && v < 1 << 63);
    match (want, &got) {
        (Some(v), Ok(s)) => assert_eq!(s.0, v, "fio {text:?} (kb_base {kb_base})"),
        (None, Err(_)) => {}
        (Some(v), Err(e)) => assert!(sig > MAX_DIGITS, "fio {text:?} is {v} bytes, yet: {e}"),
        (None, Ok(s)) => panic!("fio {text:?} is not a whole number of bytes in range, yet {s:?}"),
    }
}

fn si(text: &str) {
    let Ok(v) = parse_si(text, 'V', "volts") else {
        return;
    };
    assert!(v.is_finite() && v >= 0.0, "{text:?} -> {v}");
    let echo = format!("{}V", fmt_si(v));
    let back = parse_si(&echo, 'V', "volts")
        .unwrap_or_else(|e| panic!("{text:?} -> {v} -> {echo:?}: {e}"));
    assert!(
        (back - v).abs() <= 1e-9 * v.abs().max(1e-9),
        "{text:?} -> {v} -> {echo:?} -> {back}"
    );
}
