//! Typed units and the human-unit parser ("4KiB", "25us", "3.3V", "15mA", "259mW").
//!
//! Every quantity the engine computes with is an integer newtype: [`SimTime`] and
//! [`Dur`] are nanoseconds, [`Size`] is bytes. Electrical quantities (volts,
//! amperes, watts, joules) are only used by the power model, off the timing path,
//! and are `f64` newtypes.

use serde::{de, Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;
use std::ops::{Add, AddAssign, Sub};

/// An instant of simulated time, in nanoseconds since the start of the run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SimTime(pub u64);

/// A span of simulated time, in nanoseconds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Dur(pub u64);

impl SimTime {
    /// Time zero, the start of the run.
    pub const ZERO: SimTime = SimTime(0);
    /// The latest arrival a run accepts: 2^62 ns, about 146 years. Later
    /// instants come only from operations booked after an arrival, so event
    /// times stay far from the end of `u64` and never wrap.
    pub const MAX_ARRIVAL: SimTime = SimTime(1 << 62);
    /// Nanoseconds since the start.
    #[inline]
    pub fn ns(self) -> u64 {
        self.0
    }
    /// Seconds since the start.
    #[inline]
    pub fn secs_f64(self) -> f64 {
        self.0 as f64 * 1e-9
    }
    /// Time from `earlier` to this instant (0 if `earlier` is later).
    #[inline]
    pub fn since(self, earlier: SimTime) -> Dur {
        Dur(self.0.saturating_sub(earlier.0))
    }
}

impl Dur {
    /// No time.
    pub const ZERO: Dur = Dur(0);
    /// The longest duration [`parse_dur`] accepts: 2^62 ns, about 146 years
    /// (as [`SimTime::MAX_ARRIVAL`]), so that a sum of a few stays in `u64`.
    pub const MAX: Dur = Dur(1 << 62);
    /// Whether this is no time (`skip_serializing_if` of optional waits).
    pub fn is_zero(&self) -> bool {
        self.0 == 0
    }
    /// `ns` nanoseconds.
    #[inline]
    pub const fn from_ns(ns: u64) -> Dur {
        Dur(ns)
    }
    /// `us` microseconds.
    #[inline]
    pub const fn from_us(us: u64) -> Dur {
        Dur(us * 1_000)
    }
    /// `ms` milliseconds.
    #[inline]
    pub const fn from_ms(ms: u64) -> Dur {
        Dur(ms * 1_000_000)
    }
    /// Nanoseconds.
    #[inline]
    pub fn ns(self) -> u64 {
        self.0
    }
    /// Seconds.
    #[inline]
    pub fn secs_f64(self) -> f64 {
        self.0 as f64 * 1e-9
    }
    /// Microseconds.
    #[inline]
    pub fn us_f64(self) -> f64 {
        self.0 as f64 * 1e-3
    }
}

impl Add<Dur> for SimTime {
    type Output = SimTime;
    #[inline]
    fn add(self, d: Dur) -> SimTime {
        SimTime(self.0 + d.0)
    }
}
impl AddAssign<Dur> for SimTime {
    #[inline]
    fn add_assign(&mut self, d: Dur) {
        self.0 += d.0
    }
}
impl Add for Dur {
    type Output = Dur;
    #[inline]
    fn add(self, d: Dur) -> Dur {
        Dur(self.0 + d.0)
    }
}
impl AddAssign for Dur {
    #[inline]
    fn add_assign(&mut self, d: Dur) {
        self.0 += d.0
    }
}
impl Sub for SimTime {
    type Output = Dur;
    #[inline]
    fn sub(self, o: SimTime) -> Dur {
        Dur(self.0 - o.0)
    }
}

/// A size in bytes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Size(pub u64);

impl Size {
    /// Bytes.
    pub const fn bytes(self) -> u64 {
        self.0
    }
    /// `n` KiB (2^10 bytes).
    pub const fn kib(n: u64) -> Size {
        Size(n * 1024)
    }
    /// `n` MiB (2^20 bytes).
    pub const fn mib(n: u64) -> Size {
        Size(n * 1024 * 1024)
    }
    /// `n` GiB (2^30 bytes).
    pub const fn gib(n: u64) -> Size {
        Size(n * 1024 * 1024 * 1024)
    }
}

/// A data rate expressed exactly as a ratio: `bytes` bytes take `ns` nanoseconds.
/// Transfer times are computed with integer arithmetic and rounded up, so a
/// "100us per 4 KiB page" bus moves one page in exactly 100 us.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rate {
    /// Bytes moved per `ns` nanoseconds.
    pub bytes: u64,
    /// Nanoseconds it takes to move `bytes` (the rate is `bytes / ns`).
    pub ns: u64,
}

impl Rate {
    /// `mb_per_s` in decimal megabytes per second.
    pub fn from_mb_per_s(mb_per_s: f64) -> Rate {
        // 1 MB/s = 1 byte/us; keep 1e-3 byte/us precision: bytes per 1e6 ns (1 ms).
        Rate {
            bytes: (mb_per_s * 1e3).round() as u64,
            ns: 1_000_000,
        }
    }
    /// One page of `page` bytes per `t`.
    pub fn per_page(page: Size, t: Dur) -> Rate {
        Rate {
            bytes: page.0,
            ns: t.0,
        }
    }
    /// Time to move `bytes` bytes, rounded up to whole nanoseconds.
    #[inline]
    pub fn time_for(self, bytes: u64) -> Dur {
        if self.bytes == 0 {
            return Dur::ZERO;
        }
        let num = bytes as u128 * self.ns as u128;
        Dur(num.div_ceil(self.bytes as u128) as u64)
    }
    /// The rate in MB/s (10^6 bytes per second); infinite when `ns` is 0.
    pub fn mb_per_s(self) -> f64 {
        if self.ns == 0 {
            return f64::INFINITY;
        }
        self.bytes as f64 / self.ns as f64 * 1e3
    }
}

/// A unit-parsing error: the text (at most 200 bytes of it) and what was
/// wrong with it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("cannot parse {text:?} as {what}: {reason}")]
pub struct UnitError {
    /// The text that failed to parse.
    pub text: String,
    /// What it was parsed as ("a duration", "a size", ...).
    pub what: &'static str,
    /// Why it failed.
    pub reason: String,
}

fn split_num(s: &str) -> Option<(f64, &str)> {
    let s = s.trim();
    let end = s
        .char_indices()
        .find(|&(_, c)| !(c.is_ascii_digit() || c == '.' || c == '_'))
        .map(|(i, _)| i)
        .unwrap_or(s.len());
    if end == 0 {
        return None;
    }
    let num: f64 = s[..end].replace('_', "").parse().ok()?;
    Some((num, s[end..].trim()))
}

/// The most significant digits (leading and trailing zeros aside) a size or
/// duration may have: enough for any 64-bit value, few enough that
/// [`Decimal::scaled`] computes in `u128` without overflow. (The message of
/// [`Decimal::split`] says 20.)
pub const MAX_DIGITS: u32 = 20;

/// A non-negative decimal number held exactly: `digits / 10^scale`. Sizes and
/// durations are computed from it in integers, never through `f64`, which
/// holds neither `1.1` nor integers beyond 2^53 exactly.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Decimal {
    /// The significant digits, as an integer.
    pub digits: u128,
    /// Decimal places: the value is `digits / 10^scale`.
    pub scale: u32,
}

impl Decimal {
    /// Read the number at the start of `s`: digits with at most one `.` (and,
    /// where `underscores`, `_` separators), at least one digit. Returns the
    /// number and the rest of `s`; `Err` says what is wrong with the number.
    pub fn split(s: &str, underscores: bool) -> Result<(Decimal, &str), &'static str> {
        let end = s
            .char_indices()
            .find(|&(_, c)| !(c.is_ascii_digit() || c == '.' || (underscores && c == '_')))
            .map_or(s.len(), |(i, _)| i);
        let num = &s[..end];
        let mut parts = num.split('.');
        let int = parts.next().unwrap_or("");
        let frac = parts.next().unwrap_or("");
        let has_digit = |p: &str| p.bytes().any(|b| b.is_ascii_digit());
        if parts.next().is_some() || !(has_digit(int) || has_digit(frac)) {
            return Err("expected a number");
        }
        let digits_of = |p: &str| p.bytes().filter(u8::is_ascii_digit).collect::<Vec<u8>>();
        let int = digits_of(int);
        let mut frac = digits_of(frac);
        while frac.last() == Some(&b'0') {
            frac.pop();
        }
        let lead = int.iter().take_while(|&&b| b == b'0').count();
        if (int.len() - lead + frac.len()) as u32 > MAX_DIGITS {
            return Err("too many digits (at most 20 significant digits)");
        }
        let digits = int[lead..]
            .iter()
            .chain(&frac)
            .fold(0u128, |v, &b| v * 10 + (b - b'0') as u128);
        Ok((
            Decimal {
                digits,
                scale: frac.len() as u32,
            },
            &s[end..],
        ))
    }

    /// `self * num / den` exactly, as (whole part, remainder, divisor): the
    /// value is `whole + remainder / divisor`. `num` and `den` are at most
    /// 2^60 and 1000 (no overflow below [`MAX_DIGITS`] digits).
    pub fn scaled(self, num: u64, den: u64) -> (u128, u128, u128) {
        let top = self.digits * num as u128;
        let bottom = 10u128.pow(self.scale) * den as u128;
        (top / bottom, top % bottom, bottom)
    }
}

/// At most 200 bytes of `s` (cut on a character boundary, its length said),
/// for a message: a value of megabytes is not echoed whole.
pub fn clip(s: &str) -> String {
    const MAX: usize = 200;
    if s.len() <= MAX {
        return s.to_string();
    }
    let mut end = MAX;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}... ({} bytes in all)", &s[..end], s.len())
}

/// An error about `text` (kept at most 200 bytes of it, see [`clip`]).
fn err(text: &str, what: &'static str, reason: impl Into<String>) -> UnitError {
    UnitError {
        text: clip(text),
        what,
        reason: reason.into(),
    }
}

/// Parse a size: `4096`, `4KiB`, `4K` (binary, as fio does), `2MB` (decimal), `1GiB`, `1.5TiB`.
/// The value is exact: `1.1KB` is 1100 bytes, `9223372036854775807` that many.
pub fn parse_size(text: &str) -> Result<Size, UnitError> {
    // Kept hand-written because parse-size and bytesize round a fraction of a
    // byte silently ("0.3B" is 0, "1.1KiB" 1126) where this refuses it, read
    // "4K" as 4000, have no sector unit, and give no message naming the unit
    // spellings; the fuzz target `units` checks this one against exact
    // arithmetic (issue 29).
    let (n, unit) =
        Decimal::split(text.trim(), true).map_err(|reason| err(text, "a size", reason))?;
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
        u => {
            return Err(err(
                text,
                "a size",
                format!(
                    "unknown unit {:?} (use B, KiB, MiB, GiB, TiB, KB, MB, GB)",
                    clip(u)
                ),
            ))
        }
    };
    let (v, rem, _) = n.scaled(mult, 1);
    if rem != 0 {
        return Err(err(text, "a size", "not a whole number of bytes"));
    }
    // Sizes are echoed as TOML integers (signed 64-bit).
    if v > i64::MAX as u128 {
        return Err(err(
            text,
            "a size",
            format!("out of range: at most {} bytes (8 EiB)", i64::MAX),
        ));
    }
    Ok(Size(v as u64))
}

/// Parse a duration: `25us`, `1.5ms`, `100ns`, `2s`, `0.5min`. A bare number is nanoseconds.
/// The value is exact, rounded to the nearest nanosecond (halves up).
pub fn parse_dur(text: &str) -> Result<Dur, UnitError> {
    // Kept hand-written because humantime has no `ps` and no `_` separators,
    // refuses a fraction of a nanosecond ("2.5ns", "0.0015us": "number is too
    // large") where this rounds it, takes 2^62 ns and more, and reads another
    // grammar ("1h 30m", "m" for minutes); the fuzz target `units` checks this
    // one against exact arithmetic (issue 29).
    let (n, unit) =
        Decimal::split(text.trim(), true).map_err(|reason| err(text, "a duration", reason))?;
    let (num, den): (u64, u64) = match unit.trim() {
        "" | "ns" => (1, 1),
        "ps" => (1, 1_000),
        "us" | "µs" => (1_000, 1),
        "ms" => (1_000_000, 1),
        "s" => (1_000_000_000, 1),
        "min" => (60_000_000_000, 1),
        "h" => (3_600_000_000_000, 1),
        u => {
            return Err(err(
                text,
                "a duration",
                format!("unknown unit {:?} (use ns, us, ms, s)", clip(u)),
            ))
        }
    };
    let (whole, rem, div) = n.scaled(num, den);
    let ns = whole + u128::from(2 * rem >= div);
    // "99999999999999999999s" must not become a shorter or wrapped time.
    if ns > Dur::MAX.0 as u128 {
        return Err(err(
            text,
            "a duration",
            format!(
                "out of range: at most {} ns (2^62 ns, about 146 years)",
                Dur::MAX.0
            ),
        ));
    }
    Ok(Dur(ns as u64))
}

/// Parse a quantity with an SI unit symbol (`V`, `A`, `W`, `J`) and an optional
/// prefix (`m`, `u`, `n`, `k`): `3.3V`, `15mA`, `259mW`, `4.72uJ`.
pub fn parse_si(text: &str, symbol: char, what: &'static str) -> Result<f64, UnitError> {
    let (n, unit) = split_num(text).ok_or_else(|| err(text, what, "expected a number"))?;
    let rest = unit
        .strip_suffix(symbol)
        .ok_or_else(|| err(text, what, format!("expected unit {symbol}")))?;
    // Divide by exact powers of ten so "50uA" parses to the double nearest 5e-5.
    let (mult, div) = match rest {
        "" => (1.0, 1.0),
        "k" => (1e3, 1.0),
        "m" => (1.0, 1e3),
        "u" | "µ" => (1.0, 1e6),
        "n" => (1.0, 1e9),
        p => return Err(err(text, what, format!("unknown prefix {:?}", clip(p)))),
    };
    let v = n * mult / div;
    // Hundreds of digits read as infinity in f64: refused, not taken as such.
    if !v.is_finite() {
        return Err(err(text, what, "out of range"));
    }
    Ok(v)
}

/// Format a size the way the parser reads it back ("4KiB", "2GiB", "1000B").
pub fn fmt_size(s: Size) -> String {
    s.to_string()
}

/// Format a duration the way the parser reads it back.
pub fn fmt_dur(d: Dur) -> String {
    d.to_string()
}

impl fmt::Display for Size {
    /// As [`fmt_size`].
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let b = self.0;
        for (unit, m) in [
            ("TiB", 1u64 << 40),
            ("GiB", 1 << 30),
            ("MiB", 1 << 20),
            ("KiB", 1 << 10),
        ] {
            if b >= m && b.is_multiple_of(m) {
                return write!(f, "{}{}", b / m, unit);
            }
        }
        write!(f, "{b}B")
    }
}
impl fmt::Display for Dur {
    /// As [`fmt_dur`].
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let n = self.0;
        for (unit, m) in [("s", 1_000_000_000u64), ("ms", 1_000_000), ("us", 1_000)] {
            if n >= m && n.is_multiple_of(m) {
                return write!(f, "{}{}", n / m, unit);
            }
        }
        write!(f, "{n}ns")
    }
}

/// Hand `args` formatted to `f`: on the stack when the text fits 48 bytes
/// (every size and duration, almost every SI value), else on the heap. The
/// units serialize through it, so that a walk over a whole configuration
/// (`SsdConfig::check_writable`, once per configuration validated)
/// allocates nothing per field.
fn with_text<R>(args: fmt::Arguments<'_>, f: impl FnOnce(&str) -> R) -> R {
    struct Stack {
        buf: [u8; 48],
        len: usize,
    }
    impl fmt::Write for Stack {
        fn write_str(&mut self, s: &str) -> fmt::Result {
            let end = self.len + s.len();
            let dst = self.buf.get_mut(self.len..end).ok_or(fmt::Error)?;
            dst.copy_from_slice(s.as_bytes());
            self.len = end;
            Ok(())
        }
    }
    let mut st = Stack {
        buf: [0; 48],
        len: 0,
    };
    match fmt::write(&mut st, args) {
        // Whole `str`s were copied in: valid UTF-8.
        Ok(()) => f(std::str::from_utf8(&st.buf[..st.len]).expect("whole strs")),
        Err(_) => f(&fmt::format(args)),
    }
}

// The units are text ("4KiB", "25us", "15mW") in a human-readable format
// (TOML, JSON), and their plain number (bytes, nanoseconds, the f64) in a
// compact one, which reads them back the same way: such as the walk of
// `SsdConfig::check_writable`, which looks only at the integers.
impl Serialize for Size {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        if !s.is_human_readable() {
            return s.serialize_u64(self.0);
        }
        with_text(format_args!("{self}"), |t| s.serialize_str(t))
    }
}
impl Serialize for Dur {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        if !s.is_human_readable() {
            return s.serialize_u64(self.0);
        }
        with_text(format_args!("{self}"), |t| s.serialize_str(t))
    }
}

struct UnitVisitor<T>(fn(&str) -> Result<T, UnitError>, fn(u64) -> T, &'static str);
impl<T> de::Visitor<'_> for UnitVisitor<T> {
    type Value = T;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(self.2)
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<T, E> {
        (self.0)(v).map_err(E::custom)
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<T, E> {
        Ok((self.1)(v))
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<T, E> {
        if v < 0 {
            return Err(E::custom(format!(
                "{} must not be negative, got {v}",
                self.2
            )));
        }
        Ok((self.1)(v as u64))
    }
}

impl<'de> Deserialize<'de> for Size {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(UnitVisitor(
            parse_size,
            Size,
            "a size such as \"4KiB\" or a number of bytes",
        ))
    }
}
/// A duration in a configuration names its unit: a bare number (`25`, or
/// `"25"`) would silently mean nanoseconds whatever was meant, so only 0
/// may go without one.
fn parse_dur_with_unit(text: &str) -> Result<Dur, UnitError> {
    let t = text.trim();
    if !t.is_empty() && t.chars().all(|c| c.is_ascii_digit() || c == '.') {
        let d = parse_dur(t)?;
        if d.0 != 0 {
            return Err(err(
                text,
                "a duration",
                format!(
                    "a bare number has no unit: write \"{t}ns\", \"{t}us\", \"{t}ms\" or \"{t}s\""
                ),
            ));
        }
        return Ok(d);
    }
    parse_dur(t)
}

impl<'de> Deserialize<'de> for Dur {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        /// Whether the format is human-readable: a compact one's integer is
        /// nanoseconds (as `Dur` serializes there), text's needs its unit.
        struct V(bool);
        impl de::Visitor<'_> for V {
            type Value = Dur;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a duration with its unit, such as \"25us\" (or 0)")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Dur, E> {
                parse_dur_with_unit(v).map_err(E::custom)
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Dur, E> {
                if !self.0 {
                    return Ok(Dur(v));
                }
                self.visit_str(&v.to_string())
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Dur, E> {
                if v < 0 {
                    return Err(E::custom(format!(
                        "a duration must not be negative, got {v}"
                    )));
                }
                self.visit_u64(v as u64)
            }
        }
        let human = d.is_human_readable();
        d.deserialize_any(V(human))
    }
}

macro_rules! si_unit {
    ($name:ident, $sym:literal, $what:literal) => {
        #[doc = concat!("A quantity in ", $what, " (f64, SI base unit).")]
        #[derive(Clone, Copy, Debug, Default, PartialEq, PartialOrd)]
        pub struct $name(pub f64);
        impl Serialize for $name {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                if !s.is_human_readable() {
                    return s.serialize_f64(self.0);
                }
                with_text(format_args!("{}{}", Si(self.0), $sym), |t| {
                    s.serialize_str(t)
                })
            }
        }
        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                struct V;
                impl de::Visitor<'_> for V {
                    type Value = $name;
                    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                        f.write_str(concat!("a value in ", $what, " such as \"15m", $sym, "\""))
                    }
                    fn visit_str<E: de::Error>(self, v: &str) -> Result<$name, E> {
                        parse_si(v, $sym, $what).map($name).map_err(E::custom)
                    }
                    fn visit_f64<E: de::Error>(self, v: f64) -> Result<$name, E> {
                        Ok($name(v))
                    }
                    fn visit_u64<E: de::Error>(self, v: u64) -> Result<$name, E> {
                        Ok($name(v as f64))
                    }
                    fn visit_i64<E: de::Error>(self, v: i64) -> Result<$name, E> {
                        Ok($name(v as f64))
                    }
                }
                d.deserialize_any(V)
            }
        }
    };
}
si_unit!(Volts, 'V', "volts");
si_unit!(Amps, 'A', "amperes");
si_unit!(Watts, 'W', "watts");
si_unit!(Joules, 'J', "joules");

/// Format an SI value with a prefix so that it reads back exactly ("15m", "3.3", "4.72u").
pub fn fmt_si(v: f64) -> String {
    Si(v).to_string()
}

/// An SI value as [`fmt_si`] writes it.
struct Si(f64);

impl fmt::Display for Si {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let v = self.0;
        if v == 0.0 {
            return f.write_str("0");
        }
        let a = v.abs();
        let (m, p) = if a >= 1.0 {
            (1.0, "")
        } else if a >= 1e-3 {
            (1e3, "m")
        } else if a >= 1e-6 {
            (1e6, "u")
        } else {
            (1e9, "n")
        };
        let x = v * m;
        // Round away binary noise (0.015 * 1e3 = 15.000000000000002); a value
        // this large has no fraction to round (and x * 1e9 could overflow).
        let r = if x.abs() >= 1e15 {
            x
        } else {
            (x * 1e9).round() / 1e9
        };
        write!(f, "{r}{p}")
    }
}

// ------------------------------------------------------- configuration ranges

/// The longest single operation (flash read, program, erase, page transfer,
/// DRAM access, command overhead, CPU wake-up) a configuration may give.
pub const MAX_OP_TIME: Dur = Dur(1_000_000_000);
/// The range of a transfer rate (host link, NAND bus) in MB/s: rates are kept
/// in bytes per millisecond, so a slower one would round to zero.
pub const MIN_RATE_MBPS: f64 = 0.001;
/// Upper end of the transfer-rate range in MB/s (see [`MIN_RATE_MBPS`]).
pub const MAX_RATE_MBPS: f64 = 1e9;
/// The most controller cycles one step of work may take.
pub const MAX_CYCLES: u64 = 1_000_000_000;

#[cfg(test)]
mod tests {
    use super::*;

    /// Values beyond the range are refused, not saturated into a wrong one.
    #[test]
    fn out_of_range_units_are_refused() {
        let e = parse_dur("99999999999999999999s").unwrap_err();
        assert!(e.to_string().contains("out of range"), "{e}");
        assert!(parse_dur("146years").is_err());
        assert_eq!(parse_dur("100min").unwrap(), Dur(6_000_000_000_000));
        assert_eq!(parse_dur(&format!("{}", Dur::MAX.0)).unwrap(), Dur::MAX);
        assert!(parse_dur(&format!("{}", Dur::MAX.0 + 2048)).is_err());
        let e = parse_size("99999999999999999999TiB").unwrap_err();
        assert!(e.to_string().contains("out of range"), "{e}");
        assert!(parse_size("9000000TiB").is_err());
        assert_eq!(parse_size("4TiB").unwrap(), Size(4 << 40));
    }
    /// Found by fuzzing (units): sizes and durations went through `f64`,
    /// which rounded integers beyond 2^53 (`i64::MAX` bytes read as 2^63, out
    /// of range) and decimals it cannot hold (`1.1KB` was "not a whole number
    /// of bytes"). They are exact now.
    #[test]
    fn units_are_exact_not_rounded_through_floats() {
        assert_eq!(
            parse_size("9223372036854775807B").unwrap(),
            Size(i64::MAX as u64)
        );
        assert!(parse_size("9223372036854775808B").is_err());
        assert_eq!(
            parse_size("9007199254740993").unwrap(),
            Size(9_007_199_254_740_993)
        );
        assert_eq!(parse_size("1.1KB").unwrap(), Size(1100));
        assert_eq!(parse_size("0.3MB").unwrap(), Size(300_000));
        assert_eq!(parse_size("1_000.5KiB").unwrap(), Size(1_024_512));
        assert_eq!(
            parse_size("00000000000000000000000004KiB").unwrap(),
            Size(4096)
        );
        assert_eq!(
            parse_size("1.00000000000000000000000KiB").unwrap(),
            Size(1024)
        );
        assert!(parse_size("1.0000000000000000000001KiB").is_err());
        assert!(parse_size("1.2.3").is_err() && parse_size(".").is_err());
        assert_eq!(parse_size(".5KiB").unwrap(), Size(512));
        assert_eq!(parse_size("2.KiB").unwrap(), Size(2048));
        let d = Dur::MAX.0 - 1;
        assert_eq!(parse_dur(&d.to_string()).unwrap(), Dur(d));
        assert_eq!(parse_dur(&fmt_dur(Dur(d))).unwrap(), Dur(d));
        assert_eq!(parse_dur("0.1s").unwrap(), Dur(100_000_000));
        assert_eq!(parse_dur("1500ps").unwrap(), Dur(2)); // 1.5 ns: halves up
        assert_eq!(parse_dur("1499ps").unwrap(), Dur(1));
        assert_eq!(parse_dur("0.0000000001h").unwrap(), Dur(360));
        let e = parse_dur("123456789012345678901ns").unwrap_err();
        assert!(e.to_string().contains("too many digits"), "{e}");
    }
    #[test]
    fn sizes() {
        assert_eq!(parse_size("4KiB").unwrap(), Size(4096));
        assert_eq!(parse_size("4k").unwrap(), Size(4096));
        assert_eq!(parse_size("2MB").unwrap(), Size(2_000_000));
        assert_eq!(parse_size("1.5GiB").unwrap(), Size(3 << 29));
        assert!(parse_size("4 furlongs").is_err());
        assert!(parse_size("").is_err());
        assert_eq!(fmt_size(Size(256 * 1024)), "256KiB");
    }
    #[test]
    fn durations() {
        assert_eq!(parse_dur("25us").unwrap(), Dur(25_000));
        assert_eq!(parse_dur("1.5ms").unwrap(), Dur(1_500_000));
        assert_eq!(parse_dur("24.414ns").unwrap(), Dur(24));
        assert_eq!(fmt_dur(Dur(1_500_000)), "1500us");
        assert!(parse_dur("5 parsecs").is_err());
    }
    #[test]
    fn si() {
        assert!((parse_si("15mA", 'A', "amps").unwrap() - 0.015).abs() < 1e-12);
        assert!((parse_si("3.3V", 'V', "volts").unwrap() - 3.3).abs() < 1e-12);
        assert!((parse_si("4.72uJ", 'J', "joules").unwrap() - 4.72e-6).abs() < 1e-15);
        assert_eq!(fmt_si(0.015), "15m");
        assert!(parse_si("15mV", 'A', "amps").is_err());
    }
    /// Found by fuzzing (units): a number of hundreds of digits read as an
    /// infinite voltage; a huge finite one was echoed as "inf".
    #[test]
    fn si_values_are_finite_and_echo_back() {
        let e = parse_si(&format!("{}V", "9".repeat(400)), 'V', "volts").unwrap_err();
        assert!(e.to_string().contains("out of range"), "{e}");
        let big = parse_si(&format!("{}V", "9".repeat(300)), 'V', "volts").unwrap();
        assert_eq!(
            parse_si(&format!("{}V", fmt_si(big)), 'V', "volts").unwrap(),
            big
        );
    }
    /// Found by fuzzing (fio_job): an error quoted the whole text (twice,
    /// with its unit), however long.
    #[test]
    fn errors_quote_a_long_text_briefly() {
        let long = format!("1{}", "\u{1f}".repeat(1 << 16));
        for e in [
            parse_size(&long).unwrap_err(),
            parse_dur(&long).unwrap_err(),
            parse_si(&long, 'V', "volts").unwrap_err(),
        ] {
            let m = e.to_string();
            assert!(m.len() < 3000 && m.contains("bytes in all"), "{}", m.len());
        }
    }
    #[test]
    fn rate_exact() {
        let m = Rate::from_mb_per_s(600.0);
        assert_eq!(m.time_for(600), Dur::from_us(1));
        assert!((m.mb_per_s() - 600.0).abs() < 1e-9);
        let r = Rate::per_page(Size(4096), Dur::from_us(100));
        assert_eq!(r.time_for(4096), Dur::from_us(100));
        assert_eq!(r.time_for(2048), Dur::from_us(50));
        assert_eq!(r.time_for(1), Dur(25)); // 24.4 rounded up
    }
}
