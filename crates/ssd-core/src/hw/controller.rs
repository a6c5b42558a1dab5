//! The controller's firmware CPU (`[controller]`): the model the engine asks
//! once per host command (and per background GC pass). Its DRAM is
//! [`crate::hw::dram`], the host link [`crate::hw::link`].
//!
//! # Contract
//! * [`Controller`]: the cycles a firmware pass costs for the FTL work it
//!   did, their time, and whether work arriving after an idle spell first
//!   waits for the CPU to wake. The engine books the CPU busy-until (work
//!   starts at `max(ready, cpu free)`) and tells the observer.
//! * [`Dram`](crate::hw::Dram): the time of `n` accesses, which follow the CPU's work: the
//!   FTL's map lookups, one per GC candidate examined (its valid-page
//!   count), its other accesses ([`FtlWork::dram_total`]) and the write
//!   buffer's.
//! * [`HostLink`](crate::hw::HostLink): the time a command (with its write data) and a read's
//!   data take on the link; the engine books the link busy-until.
//!
//! The defaults reproduce the simulator's published behaviour:
//! [`CycleCpu`] (cycles per command, per map lookup, per GC candidate, per
//! GC page; optional slow mode after `power.cpu_slow_after`),
//! [`FixedDram`](crate::hw::FixedDram) (`dram.access_latency` per access; [`RefreshDram`](crate::hw::RefreshDram)
//! stretches it by refresh, `[dram.refresh]`), [`SerialLink`](crate::hw::SerialLink)
//! (`host.command_overhead` plus bytes at the interface's rate).

use crate::error::{invalid, ConfigError};
use crate::ftl::{Activity, FtlWork};
use crate::hw::PowerConfig;
use crate::units::MAX_CYCLES;
use crate::units::{Dur, SimTime};
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
    pub fn new(c: &ControllerConfig, p: &PowerConfig) -> CycleCpu {
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

/// Controller: embedded CPU and its per-operation costs, and the flash transaction scheduler.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ControllerConfig {
    /// Controller CPU clock in MHz; converts cycle costs to time. Default 200.
    pub cpu_mhz: u32,
    /// Cycles to decode and set up one host command.
    pub cycles_per_command: u64,
    /// Cycles per mapping-table lookup/update (per page).
    pub cycles_per_map_lookup: u64,
    /// Cycles per candidate block examined during GC victim search.
    pub cycles_per_gc_candidate: u64,
    /// Cycles of bookkeeping per page moved by GC or a merge.
    pub cycles_per_gc_page: u64,
    /// Transaction scheduler: serve host reads before programs and erases.
    pub prioritize_reads: bool,
}

impl Default for ControllerConfig {
    /// A 200 MHz CPU (the ARM920T of Lee & Won's power table) and its cycle
    /// costs; reads served first.
    fn default() -> ControllerConfig {
        ControllerConfig {
            cpu_mhz: 200,
            cycles_per_command: 1000,
            cycles_per_map_lookup: 100,
            cycles_per_gc_candidate: 20,
            cycles_per_gc_page: 200,
            prioritize_reads: true,
        }
    }
}

impl ControllerConfig {
    /// A clock of at least 1 MHz, and no cycle cost above [`MAX_CYCLES`].
    pub fn check(&self) -> Result<(), ConfigError> {
        for (f, v) in [
            ("controller.cycles_per_command", self.cycles_per_command),
            (
                "controller.cycles_per_map_lookup",
                self.cycles_per_map_lookup,
            ),
            (
                "controller.cycles_per_gc_candidate",
                self.cycles_per_gc_candidate,
            ),
            ("controller.cycles_per_gc_page", self.cycles_per_gc_page),
        ] {
            if v > MAX_CYCLES {
                return Err(invalid(
                    f,
                    format!("{v} is out of range: at most {MAX_CYCLES} cycles"),
                ));
            }
        }
        if self.cpu_mhz == 0 {
            return Err(invalid("controller.cpu_mhz", "must be at least 1"));
        }
        Ok(())
    }
}
