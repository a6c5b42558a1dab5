//! The controller's firmware CPU, its DRAM and the host link: the models the
//! engine asks once per host command (and per background GC pass).
//!
//! # Contract
//! * [`Controller`]: the cycles a firmware pass costs for the FTL work it
//!   did, their time, and whether work arriving after an idle spell first
//!   waits for the CPU to wake. The engine books the CPU busy-until (work
//!   starts at `max(ready, cpu free)`) and tells the observer.
//! * [`Dram`]: the time of `n` accesses, which follow the CPU's work: the
//!   FTL's map lookups, one per GC candidate examined (its valid-page
//!   count), its other accesses ([`FtlWork::dram_total`]) and the write
//!   buffer's.
//! * [`HostLink`]: the time a command (with its write data) and a read's
//!   data take on the link; the engine books the link busy-until.
//!
//! The defaults reproduce the simulator's published behaviour:
//! [`CycleCpu`] (cycles per command, per map lookup, per GC candidate, per
//! GC page; optional slow mode after `power.cpu_slow_after`),
//! [`FixedDram`] (`dram.access_latency` per access; [`RefreshDram`]
//! stretches it by refresh, `[dram.refresh]`), [`SerialLink`]
//! (`host.command_overhead` plus bytes at the interface's rate).

use crate::config::Settings;
use crate::error::{invalid, ConfigError};
use crate::ftl::{Activity, FtlWork};
use crate::units::{Dur, Rate, SimTime};
use serde::{Deserialize, Serialize};

/// The firmware CPU.
pub trait Controller {
    /// Cycles of one firmware pass: the command path (when `per_command`)
    /// plus the FTL work `w`. The report's FTL CPU time uses it too
    /// (`per_command` false).
    fn cycles(&self, w: &FtlWork, per_command: bool) -> u64;
    /// [`Controller::cycles`] by [`Activity`] (the power report's
    /// `by_activity` divides the CPU's busy time in proportion to them). The
    /// default asks `cycles` for the command path and for each counter of
    /// `w` alone, which is exact for a model linear in the counters, and
    /// books what the whole costs beyond their sum as [`Activity::Other`].
    fn cycles_by_activity(&self, w: &FtlWork, per_command: bool) -> [u64; Activity::COUNT] {
        let z = FtlWork::default();
        let base = self.cycles(&z, false);
        let alone = |f: FtlWork| self.cycles(&f, false).saturating_sub(base);
        let mut a = [0; Activity::COUNT];
        if per_command {
            a[Activity::Command as usize] = self.cycles(&z, true).saturating_sub(base);
        }
        a[Activity::MapLookup as usize] = alone(FtlWork {
            map_lookups: w.map_lookups,
            ..z
        });
        a[Activity::GcSearch as usize] = alone(FtlWork {
            gc_candidates: w.gc_candidates,
            ..z
        });
        a[Activity::GcMove as usize] = alone(FtlWork {
            gc_pages: w.gc_pages,
            ..z
        });
        let sum: u64 = a.iter().sum();
        a[Activity::Other as usize] = self.cycles(w, per_command).saturating_sub(sum);
        a
    }
    /// How long `cycles` take.
    fn cycle_time(&self, cycles: u64) -> Dur;
    /// Work ready at `ready`, the CPU's last work having ended at
    /// `last_work`: the wake-up it waits for first, if the CPU had dropped
    /// into a low-power mode (the engine asks only when the device was idle).
    fn wakeup(&self, _ready: SimTime, _last_work: SimTime) -> Option<Dur> {
        None
    }
}

/// Cycles per action at `controller.cpu_mhz`, with the slow mode of
/// `power.cpu_slow_after` / `power.cpu_wakeup_latency`.
#[derive(Clone, Copy, Debug)]
pub struct CycleCpu {
    mhz: u64,
    per_command: u64,
    per_map_lookup: u64,
    per_gc_candidate: u64,
    per_gc_page: u64,
    slow_after: Option<Dur>,
    wakeup: Dur,
}

impl CycleCpu {
    /// The CPU of `controller.*` (clock, cycle costs) and `power.cpu_slow_after` /
    /// `power.cpu_wakeup_latency`.
    pub fn from_settings(s: &Settings) -> CycleCpu {
        let c = &s.config.controller;
        let p = &s.config.power;
        CycleCpu {
            mhz: c.cpu_mhz as u64,
            per_command: c.cycles_per_command,
            per_map_lookup: c.cycles_per_map_lookup,
            per_gc_candidate: c.cycles_per_gc_candidate,
            per_gc_page: c.cycles_per_gc_page,
            slow_after: p.cpu_slow_after,
            wakeup: p.cpu_wakeup_latency,
        }
    }
}

impl Controller for CycleCpu {
    #[inline]
    fn cycles(&self, w: &FtlWork, per_command: bool) -> u64 {
        let cmd = if per_command { self.per_command } else { 0 };
        cmd + w.map_lookups * self.per_map_lookup
            + w.gc_candidates * self.per_gc_candidate
            + w.gc_pages * self.per_gc_page
    }
    #[inline]
    fn cycles_by_activity(&self, w: &FtlWork, per_command: bool) -> [u64; Activity::COUNT] {
        [
            if per_command { self.per_command } else { 0 },
            w.map_lookups * self.per_map_lookup,
            w.gc_candidates * self.per_gc_candidate,
            w.gc_pages * self.per_gc_page,
            0,
        ]
    }
    #[inline]
    fn cycle_time(&self, cycles: u64) -> Dur {
        // ns = cycles * 1000 / MHz, rounded up.
        Dur((cycles * 1000).div_ceil(self.mhz))
    }
    #[inline]
    fn wakeup(&self, ready: SimTime, last_work: SimTime) -> Option<Dur> {
        // Slow mode is entered `slow_after` after the CPU last had work.
        let to = self.slow_after?;
        (ready.0 >= last_work.0 + to.0 && self.wakeup.0 > 0).then_some(self.wakeup)
    }
}

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
    pub fn from_settings(s: &Settings) -> FixedDram {
        FixedDram {
            latency: s.config.dram.access_latency,
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
        if self.t_refi.0 == 0 || self.t_refi > crate::config::MAX_OP_TIME {
            return Err(invalid(
                "dram.refresh.t_refi",
                format!(
                    "must be in 1ns..={}, got {}",
                    crate::config::MAX_OP_TIME,
                    self.t_refi
                ),
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
    pub fn from_settings(s: &Settings) -> AnyDram {
        let d = &s.config.dram;
        match &d.refresh {
            None => AnyDram::Fixed(FixedDram::from_settings(s)),
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

/// The host link (SATA or NVMe over PCIe).
pub trait HostLink {
    /// A command host -> device, with `data` bytes of write data (0 for
    /// others).
    fn command_time(&mut self, data: u64) -> Dur;
    /// A read's `bytes` of data device -> host.
    fn read_data_time(&mut self, bytes: u64) -> Dur;
}

/// `host.command_overhead` per command plus the bytes at the interface's
/// rate, one direction at a time (the engine books it busy-until).
#[derive(Clone, Copy, Debug)]
pub struct SerialLink {
    overhead: Dur,
    rate: Rate,
    /// The last size and its time, per direction (requests mostly repeat
    /// their size).
    memo: [(u64, Dur); 2],
}

impl SerialLink {
    /// The link of `[host]`: `host.command_overhead` and the interface's rate.
    pub fn from_settings(s: &Settings) -> SerialLink {
        SerialLink {
            overhead: s.config.host.command_overhead,
            rate: s.link,
            memo: [(u64::MAX, Dur::ZERO); 2],
        }
    }
    #[inline]
    fn time(&mut self, k: usize, bytes: u64) -> Dur {
        let m = &mut self.memo[k];
        if m.0 != bytes {
            *m = (bytes, self.rate.time_for(bytes));
        }
        m.1
    }
}

impl HostLink for SerialLink {
    #[inline]
    fn command_time(&mut self, data: u64) -> Dur {
        self.overhead + self.time(0, data)
    }
    #[inline]
    fn read_data_time(&mut self, bytes: u64) -> Dur {
        self.time(1, bytes)
    }
}
