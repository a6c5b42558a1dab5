//! The controller's DRAM (`[dram]`): its access-time models, refresh, and
//! the section's capacity and write buffer.

use crate::error::{check_op_time, invalid, ConfigError};
use crate::units::{Dur, Size, MAX_OP_TIME};
use serde::{Deserialize, Serialize};

/// The controller's DRAM.
pub trait Dram {
    /// How long `n` accesses take (they follow the CPU's work).
    fn access_time(&self, n: u64) -> Dur;
}

/// `dram.access_latency` per access (no refresh: a DRAM whose refresh is
/// folded into its latency, or ignored).
#[derive(Clone, Copy, Debug)]
pub struct FixedDram {
    latency: Dur,
}

impl FixedDram {
    /// A DRAM of `dram.access_latency` per access.
    pub fn new(d: &DramConfig) -> FixedDram {
        FixedDram {
            latency: d.access_latency,
        }
    }
}

impl Dram for FixedDram {
    #[inline]
    fn access_time(&self, n: u64) -> Dur {
        Dur(n * self.latency.0)
    }
}

/// `[dram.refresh]`: a DRAM that refreshes its rows, one refresh command
/// every `t_refi` (the refresh interval: 7.8 us for DDR3/DDR4 below 85 C)
/// holding the device for `t_rfc` (the refresh cycle time: 350 ns for an
/// 8 Gb DDR4 device), during which accesses wait.
///
/// Timing: the accesses of a firmware pass are stretched by the mean
/// fraction of time the DRAM is available, `n * access_latency / (1 -
/// t_rfc / t_refi)`, rounded up to the nanosecond: deterministic, exact on
/// average over many passes (a pass is far shorter than no refresh window
/// and far longer than none), and independent of the pass's phase against
/// the refresh clock, which the engine does not model.
///
/// Power: `power` is what the DRAM draws beyond standby while refreshing
/// (`(IDD5B - IDD2N) * VDD` per device, times the devices): the power model
/// adds its mean, `power * t_rfc / t_refi`, to the DRAM's background power.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RefreshConfig {
    /// Refresh interval: one refresh command every this long.
    pub t_refi: Dur,
    /// Refresh cycle time: how long one refresh holds the device.
    pub t_rfc: Dur,
    /// Power beyond standby while refreshing, watts (default 0).
    #[serde(default)]
    pub power: crate::units::Watts,
}

impl RefreshConfig {
    /// Errors name the field.
    pub fn check(&self) -> Result<(), ConfigError> {
        if self.t_refi.0 == 0 || self.t_refi > MAX_OP_TIME {
            return Err(invalid(
                "dram.refresh.t_refi",
                format!("must be in 1ns..={}, got {}", MAX_OP_TIME, self.t_refi),
            ));
        }
        if self.t_rfc >= self.t_refi {
            return Err(invalid(
                "dram.refresh.t_rfc",
                format!(
                    "{} leaves no time between refreshes: it must be shorter than \
                     dram.refresh.t_refi ({})",
                    self.t_rfc, self.t_refi
                ),
            ));
        }
        let w = self.power.0;
        if !w.is_finite() || w < 0.0 {
            return Err(invalid(
                "dram.refresh.power",
                format!("must be a finite power >= 0, got {w}"),
            ));
        }
        Ok(())
    }

    /// The fraction of time the DRAM is refreshing, `t_rfc / t_refi`.
    pub fn busy_fraction(&self) -> f64 {
        self.t_rfc.0 as f64 / self.t_refi.0 as f64
    }
}

/// `dram.access_latency` per access, stretched by refresh (see
/// [`RefreshConfig`]).
#[derive(Clone, Copy, Debug)]
pub struct RefreshDram {
    latency: u64,
    t_refi: u64,
    /// `t_refi - t_rfc`: the time the DRAM is available per refresh interval.
    avail: u64,
}

impl RefreshDram {
    /// A DRAM of `latency` per access with refresh `r`.
    pub fn new(latency: Dur, r: &RefreshConfig) -> RefreshDram {
        RefreshDram {
            latency: latency.0,
            t_refi: r.t_refi.0,
            avail: r.t_refi.0 - r.t_rfc.0,
        }
    }
}

impl Dram for RefreshDram {
    // Out of line: its 128-bit division would weigh on the inlining of the
    // engine's CPU booking, which the default model must not change.
    #[inline(never)]
    fn access_time(&self, n: u64) -> Dur {
        let busy = n as u128 * self.latency as u128;
        Dur((busy * self.t_refi as u128).div_ceil(self.avail as u128) as u64)
    }
}

/// The built-in DRAM models, chosen from the configuration: [`FixedDram`],
/// or [`RefreshDram`] with `[dram.refresh]`.
#[derive(Clone, Copy, Debug)]
pub enum AnyDram {
    /// No refresh: `dram.access_latency` per access.
    Fixed(FixedDram),
    /// With `[dram.refresh]`.
    Refresh(RefreshDram),
}

impl AnyDram {
    /// The model the configuration asks for: [`RefreshDram`] with `dram.refresh`, else
    /// [`FixedDram`].
    pub fn new(d: &DramConfig) -> AnyDram {
        match &d.refresh {
            None => AnyDram::Fixed(FixedDram::new(d)),
            Some(r) => AnyDram::Refresh(RefreshDram::new(d.access_latency, r)),
        }
    }
}

impl Dram for AnyDram {
    #[inline(always)]
    fn access_time(&self, n: u64) -> Dur {
        match self {
            AnyDram::Fixed(m) => m.access_time(n),
            AnyDram::Refresh(m) => m.access_time(n),
        }
    }
}

/// Write-buffer flush policy.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FlushPolicy {
    /// Writes complete once in DRAM; when the buffer is full the least recently
    /// used pages are written to flash behind them. While a page a plane is
    /// on its way to flash, further writes wait for room (MQSim's write
    /// cache and its back-pressure buffer).
    EvictLru,
    /// Writes go to flash before completing; the buffer only serves reads of
    /// recently written pages.
    WriteThrough,
}

/// `dram.capacity`: a size, or `"fit"`: what the FTL needs (see
/// `Settings::fit_dram`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DramCapacity {
    /// A fixed capacity.
    Bytes(Size),
    /// The FTL's mapping-table bytes plus the write buffer, rounded up to a
    /// whole number of `dram.device_size` devices.
    Fit,
}

impl DramCapacity {
    /// The bytes of a fixed capacity (None for `"fit"`, known once the FTL is
    /// built: `Settings::dram_bytes`).
    pub fn bytes(self) -> Option<u64> {
        match self {
            DramCapacity::Bytes(s) => Some(s.0),
            DramCapacity::Fit => None,
        }
    }
}

impl From<Size> for DramCapacity {
    fn from(s: Size) -> DramCapacity {
        DramCapacity::Bytes(s)
    }
}

impl Serialize for DramCapacity {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            DramCapacity::Bytes(b) => b.serialize(s),
            DramCapacity::Fit => s.serialize_str("fit"),
        }
    }
}

impl<'de> Deserialize<'de> for DramCapacity {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            Text(String),
            Bytes(u64),
        }
        match Raw::deserialize(d)? {
            Raw::Bytes(b) => Ok(DramCapacity::Bytes(Size(b))),
            Raw::Text(t) if t.trim().eq_ignore_ascii_case("fit") => Ok(DramCapacity::Fit),
            Raw::Text(t) => crate::units::parse_size(&t)
                .map(DramCapacity::Bytes)
                .map_err(|e| {
                    serde::de::Error::custom(format!("{e} (a size such as \"64MiB\", or \"fit\")"))
                }),
        }
    }
}

/// The controller's DRAM (`[dram]`): capacity, access latency, write buffer and refresh.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DramConfig {
    /// A size, or `"fit"`: the FTL's mapping-table bytes plus the write
    /// buffer, rounded up to whole `device_size` devices.
    pub capacity: DramCapacity,
    /// Bytes of one DRAM device (a 4 Gb part: "512MiB"): `"fit"` rounds up to
    /// whole devices, and `power.dram_device_standby_power` is per device.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device_size: Option<Size>,
    /// Latency of one DRAM access (a mapping-table lookup, a buffer hit).
    pub access_latency: Dur,
    /// Write buffer size; 0 disables it.
    pub write_buffer: Size,
    /// How the write buffer handles writes (default evict-lru).
    pub flush: FlushPolicy,
    /// Refresh: see [`RefreshConfig`]. Absent: accesses take
    /// `access_latency` each.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refresh: Option<RefreshConfig>,
}

impl Default for DramConfig {
    /// 64 MiB at 50 ns an access, no write buffer, no refresh.
    fn default() -> DramConfig {
        DramConfig {
            capacity: DramCapacity::Bytes(Size::mib(64)),
            device_size: None,
            access_latency: Dur(50),
            write_buffer: Size(0),
            flush: FlushPolicy::EvictLru,
            refresh: None,
        }
    }
}

impl DramConfig {
    /// The section's own rules, with the chip's `page_size` (the write
    /// buffer holds whole logical pages: a size that is not a multiple of
    /// the page would be rounded down without a word, to nothing below one
    /// page).
    pub fn check(&self, page_size: u64) -> Result<(), ConfigError> {
        if let Some(r) = &self.refresh {
            r.check()?;
        }
        check_op_time("dram.access_latency", self.access_latency)?;
        if self.device_size.is_some_and(|d| d.0 == 0) {
            return Err(invalid("dram.device_size", "must be at least 1 byte"));
        }
        if self.capacity == DramCapacity::Fit && self.device_size.is_none() {
            return Err(invalid(
                "dram.capacity",
                "\"fit\" rounds the FTL's need up to whole DRAM devices: \
                 set dram.device_size (the bytes of one device, e.g. \"512MiB\" for a 4 Gb part)",
            ));
        }
        if let Some(cap) = self.capacity.bytes() {
            if self.write_buffer.0 > cap {
                return Err(invalid("dram.write_buffer", "larger than dram.capacity"));
            }
        }
        if !self.write_buffer.0.is_multiple_of(page_size) {
            return Err(invalid(
                "dram.write_buffer",
                format!(
                    "must be a whole number of pages ({page_size} B each), got {} B",
                    self.write_buffer.0
                ),
            ));
        }
        Ok(())
    }
}
