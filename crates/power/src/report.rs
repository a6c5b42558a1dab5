//! The energy / power / efficiency report sections (stable field names).
//!
//! The CLI inserts them into `Report.extra` under `energy_j`, `power_w` and
//! `efficiency` (see [`PowerObserver::finish_report`]).

use crate::observer::{Acc, ActivityAcc, CpuMode, Params, PowerObserver, RATE_SLOT};
use crate::series::Sample;
use crate::PowerError;
use serde::Serialize;
use ssd_core::ftl::{Activity, Purpose};
use ssd_core::stats::Report;
use std::collections::BTreeMap;

const NS: f64 = 1e-9;

/// Energy of the flash chips (J).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct FlashEnergy {
    /// All of the flash chips' energy: read + program + erase + transfer + idle (J).
    pub total: f64,
    /// Array reads (tR), programs (tPROG), erases (tBERS).
    pub read: f64,
    /// Array programs (tPROG), J.
    pub program: f64,
    /// Block erases (tBERS), J.
    pub erase: f64,
    /// The chips' own draw while their command/data is on the channel.
    pub transfer: f64,
    /// Standby current while no operation or transfer runs, J.
    pub idle: f64,
    /// One entry per chip (a `ways` position on a channel), channel-major.
    pub per_chip: Vec<ChipEnergy>,
}

/// Energy of one chip (J), as [`FlashEnergy`] splits it.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct ChipEnergy {
    /// The chip's channel.
    pub channel: u32,
    /// The chip's way on its channel.
    pub way: u32,
    /// read + program + erase + transfer + idle, J.
    pub total: f64,
    /// Array reads, J.
    pub read: f64,
    /// Array programs, J.
    pub program: f64,
    /// Block erases, J.
    pub erase: f64,
    /// The chip's draw while its command or data is on the channel, J.
    pub transfer: f64,
    /// Standby, J.
    pub idle: f64,
}

/// Energy of the controller CPU by mode (J): `cpu` of [`EnergyReport`] is their sum.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct CpuEnergy {
    /// In normal mode: busy, and while a request is in the SSD, J.
    pub normal: f64,
    /// In idle mode, J.
    pub idle: f64,
    /// In slow (low-power) mode, J.
    pub slow: f64,
}

/// Energy of the DRAM (J): `dram` of [`EnergyReport`] is standby + active.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct DramEnergy {
    /// Standby power over the whole window.
    pub standby: f64,
    /// Active power while accessed (on top of standby).
    pub active: f64,
}

/// Energy of the host link PHY (J): `host` of [`EnergyReport`] is active + idle.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct LinkEnergy {
    /// While transferring, J.
    pub active: f64,
    /// While idle, J.
    pub idle: f64,
}

/// The firmware's CPU and DRAM energy for one FTL activity (`by_activity`):
/// the CPU's busy time (at normal-mode power) and the DRAM's active time (at
/// active power, above standby) of each firmware pass, divided among its
/// activities in proportion to their cycles and DRAM accesses.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct ActivityEnergy {
    /// cpu + dram (J).
    pub total: f64,
    /// CPU busy energy (J): part of `cpu_modes.normal`.
    pub cpu: f64,
    /// DRAM active energy (J): part of `dram_modes.active`.
    pub dram: f64,
    /// CPU busy and DRAM active time (s).
    pub cpu_s: f64,
    /// DRAM active time, seconds.
    pub dram_s: f64,
    /// CPU cycles and DRAM accesses of the firmware passes that began in the
    /// window (for the drain: after its start).
    pub cycles: u64,
    /// DRAM accesses of those passes.
    pub dram_accesses: u64,
}

/// Energy spent after the workload's last request (sim.drain): idle-time GC and
/// in-flight work, which Park et al. count in the workload's energy. Included in
/// the totals above too.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct DrainEnergy {
    /// Drain start (s; null without a drain) and duration (s).
    pub start_s: Option<f64>,
    /// Drain duration, seconds (0 without a drain).
    pub duration_s: f64,
    /// Energy of the drain, all components, J.
    pub total: f64,
    /// Flash chips' energy during the drain, J.
    pub flash: f64,
    /// CPU energy during the drain, J.
    pub cpu: f64,
    /// DRAM energy during the drain, J.
    pub dram: f64,
    /// Flash channels' energy during the drain, J.
    pub bus: f64,
    /// Host link energy during the drain, J.
    pub host: f64,
    /// Flash energy (array + chip transfer) by purpose during the drain.
    pub by_purpose: BTreeMap<String, f64>,
    /// Firmware CPU and DRAM energy by FTL activity during the drain.
    pub by_activity: BTreeMap<String, ActivityEnergy>,
}

/// Time in each state (s). Every group sums to `window_s` (times the number of
/// dies or channels for the flash groups).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Residency {
    /// Length of the energy window `[start, end)`, seconds: from 0, or from the
    /// end of the ramp (`sim.ramp_time`), which is in no energy figure; with a
    /// drain, up to the last reported activity.
    pub window_s: f64,
    /// Die-seconds summed over all dies.
    pub flash: FlashResidency,
    /// Channel-seconds summed over all channels.
    pub channels: ChannelResidency,
    /// Controller CPU by mode.
    pub cpu: CpuResidency,
    /// DRAM by state.
    pub dram: DramResidency,
    /// Host link by state.
    pub host: LinkResidency,
}

/// Die-seconds of the flash chips by state, summed over all dies.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct FlashResidency {
    /// Array reads.
    pub read: f64,
    /// Array programs.
    pub program: f64,
    /// Block erases.
    pub erase: f64,
    /// Command or data on the channel (the chip's transfer draw).
    pub transfer: f64,
    /// Idle.
    pub idle: f64,
}
/// Channel-seconds, summed over all channels.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct ChannelResidency {
    /// Transferring.
    pub busy: f64,
    /// Idle.
    pub idle: f64,
}
/// CPU seconds by mode.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct CpuResidency {
    /// Normal mode (busy, or a request in the SSD).
    pub normal: f64,
    /// Idle mode.
    pub idle: f64,
    /// Slow (low-power) mode.
    pub slow: f64,
    /// Time spent waking from slow mode (part of `normal`) and how often.
    pub wakeup: f64,
    /// Wake-ups from slow mode.
    pub wakeups: u64,
}
/// DRAM seconds by state.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct DramResidency {
    /// Accessed.
    pub active: f64,
    /// Standby only.
    pub standby: f64,
}
/// Host link seconds by state.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct LinkResidency {
    /// Transferring.
    pub active: f64,
    /// Idle.
    pub idle: f64,
}

/// `energy_j`: total = flash + cpu + dram + bus + host.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct EnergyReport {
    /// All energy of the window, joules: flash + cpu + dram + bus + host.
    pub total: f64,
    /// The flash chips, J, by operation and per chip.
    pub flash: FlashEnergy,
    /// The controller CPU, J (the sum of `cpu_modes`).
    pub cpu: f64,
    /// The DRAM, J (the sum of `dram_modes`).
    pub dram: f64,
    /// Flash channels (internal bus), only while transferring.
    pub bus: f64,
    /// Host link PHY.
    pub host: f64,
    /// CPU energy by mode.
    pub cpu_modes: CpuEnergy,
    /// DRAM energy by state.
    pub dram_modes: DramEnergy,
    /// Host link energy by state.
    pub host_modes: LinkEnergy,
    /// Flash energy (array + chip transfer; idle excluded) by purpose: host, gc,
    /// merge, translation, wear_level.
    pub by_purpose: BTreeMap<String, f64>,
    /// Firmware CPU and DRAM energy by FTL activity: command, map_lookup,
    /// gc_search, gc_move, other (see [`ActivityEnergy`]). The CPU parts sum
    /// to the CPU's busy time at normal power, within `cpu_modes.normal`
    /// (which also holds the time a request is in the SSD while the CPU has
    /// no work); the DRAM parts sum to `dram_modes.active`.
    pub by_activity: BTreeMap<String, ActivityEnergy>,
    /// Energy after the last request (`sim.drain`), also counted in the totals above.
    pub drain: DrainEnergy,
    /// Seconds spent in each state, per component.
    pub state_s: Residency,
}

/// `power_w`: mean over the window, and min / max / std over the samples.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct PowerStats {
    /// Mean power over the window: total energy / window length, W.
    pub mean: f64,
    /// Least power of a sample, W (never above `mean`; 0 without samples).
    pub min: f64,
    /// Greatest power of a sample, W (never below `mean`; 0 without samples).
    pub max: f64,
    /// Time-weighted standard deviation of the sampled power.
    pub std: f64,
    /// Sampling interval actually used (s) and the one asked for; they differ
    /// when a long run made the series coarsen (`coarsened` doublings).
    pub sample_s: f64,
    /// The sampling interval asked for, seconds.
    pub requested_sample_s: f64,
    /// How many times the interval doubled to bound the series' memory.
    pub coarsened: u32,
    /// Samples in the series.
    pub samples: usize,
}

/// `efficiency`.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Efficiency {
    /// Aggregative indicator (Sun et al.): IOPS / mean power (W), with the
    /// application's IOPS when the workload goes through the page cache
    /// (the `app` section), the host's otherwise.
    pub ai: f64,
    /// Same quantity under its plain name.
    pub iops_per_watt: f64,
    /// Total energy per MB (1e6 bytes) of host data moved; null without data.
    pub joules_per_mb: Option<f64>,
    /// GB (1e9 bytes) of this workload a 50 Wh battery sustains (Park et al.).
    pub gb_per_50wh_battery: Option<f64>,
}

/// The three sections together.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct PowerReport {
    /// The `energy_j` section.
    pub energy_j: EnergyReport,
    /// The `power_w` section.
    pub power_w: PowerStats,
    /// The `efficiency` section.
    pub efficiency: Efficiency,
}

/// `by_activity` of `a`, priced at the CPU's normal-mode and the DRAM's
/// active power.
fn activities(a: &ActivityAcc, p: &Params) -> BTreeMap<String, ActivityEnergy> {
    Activity::ALL
        .iter()
        .map(|&k| {
            let i = k.index();
            let cpu_s = a.cpu_ns[i] as f64 * NS;
            let dram_s = a.dram_ns[i] as f64 * NS;
            let cpu = p.p_cpu[CpuMode::Normal as usize] * cpu_s;
            let dram = p.p_dram_active * dram_s;
            let e = ActivityEnergy {
                total: cpu + dram,
                cpu,
                dram,
                cpu_s,
                dram_s,
                cycles: a.cycles[i],
                dram_accesses: a.accesses[i],
            };
            (k.name().to_string(), e)
        })
        .collect()
}

fn purposes(j: &[f64]) -> BTreeMap<String, f64> {
    Purpose::ALL
        .iter()
        .map(|p| (p.name().to_string(), j[p.index()]))
        .collect()
}

impl PowerObserver {
    fn flash_busy_ns(acc: &Acc) -> u64 {
        acc.die_ns().iter().sum::<u64>()
    }

    /// Energy breakdown of a finished run.
    pub fn energy(&self) -> Result<EnergyReport, PowerError> {
        let end = self.end.ok_or(PowerError::NotFinished)?;
        // The window `[from, end)`: from the end of the ramp, if any.
        let w = end.saturating_sub(self.from);
        let p = &self.p;
        let acc = &self.all;
        let a = &acc.joules(&self.unit_j, p);
        let wf = w as f64 * NS;
        let die_idle_ns = (self.n_dies as u64 * w).saturating_sub(Self::flash_busy_ns(acc));
        let flash_idle = p.p_die_idle * die_idle_ns as f64 * NS;
        let chips = self.n_dies / self.dies_per_chip;
        let mut per_chip = Vec::with_capacity(chips as usize);
        for c in 0..chips {
            let dies = c * self.dies_per_chip..(c + 1) * self.dies_per_chip;
            let lanes = &self.die_lanes[dies.start as usize..dies.end as usize];
            let mut j = [0.0; 4];
            for lane in lanes {
                for (jk, &x) in j.iter_mut().zip(&lane.cut_j) {
                    *jk += x;
                }
            }
            for r in 0..8 {
                let u: u64 = lanes.iter().map(|l| l.units(r)).sum();
                j[RATE_SLOT[r]] += self.unit_j[r] * u as f64;
            }
            let idle_ns: u64 = dies
                .map(|d| w.saturating_sub(self.die_busy_ns(d as usize)))
                .sum();
            let idle = p.p_die_idle * idle_ns as f64 * NS;
            per_chip.push(ChipEnergy {
                channel: c / self.ways,
                way: c % self.ways,
                total: j.iter().sum::<f64>() + idle,
                read: j[0],
                program: j[1],
                erase: j[2],
                transfer: j[3],
                idle,
            });
        }
        let flash = FlashEnergy {
            total: a.flash_j[..3].iter().sum::<f64>() + a.flash_j[3] + flash_idle,
            read: a.flash_j[0],
            program: a.flash_j[1],
            erase: a.flash_j[2],
            transfer: a.flash_j[3],
            idle: flash_idle,
            per_chip,
        };
        let cpu_modes = CpuEnergy {
            normal: a.cpu_j[CpuMode::Normal as usize],
            idle: a.cpu_j[CpuMode::Idle as usize],
            slow: a.cpu_j[CpuMode::Slow as usize],
        };
        let cpu = cpu_modes.normal + cpu_modes.idle + cpu_modes.slow;
        let dram_modes = DramEnergy {
            standby: p.p_dram_standby * wf,
            active: a.dram_active_j,
        };
        let dram = dram_modes.standby + dram_modes.active;
        let host_modes = LinkEnergy {
            active: a.link_active_j,
            idle: p.p_link_idle * w.saturating_sub(acc.link_active_ns) as f64 * NS,
        };
        let host = host_modes.active + host_modes.idle;
        let total = flash.total + cpu + dram + a.bus_j + host;

        // Drain part.
        let dacc = &self.drain;
        let d = &dacc.joules(&self.unit_j, p);
        let drain = match self.drain_at {
            Some(t0) => {
                // The drain inside the window (a ramp ends before the drain
                // but in contrived runs).
                let t0 = t0.max(self.from).min(end);
                let wd = end - t0;
                let wdf = wd as f64 * NS;
                let f_idle = p.p_die_idle
                    * (self.n_dies as u64 * wd).saturating_sub(Self::flash_busy_ns(dacc)) as f64
                    * NS;
                let f = d.flash_j[..3].iter().sum::<f64>() + d.flash_j[3] + f_idle;
                let c = d.cpu_j.iter().sum::<f64>();
                let m = p.p_dram_standby * wdf + d.dram_active_j;
                let h = d.link_active_j
                    + p.p_link_idle * wd.saturating_sub(dacc.link_active_ns) as f64 * NS;
                DrainEnergy {
                    start_s: Some(t0 as f64 * NS),
                    duration_s: wdf,
                    total: f + c + m + d.bus_j + h,
                    flash: f,
                    cpu: c,
                    dram: m,
                    bus: d.bus_j,
                    host: h,
                    by_purpose: purposes(&d.purpose_j),
                    by_activity: activities(&dacc.act, p),
                }
            }
            None => DrainEnergy {
                by_purpose: purposes(&[0.0; 5]),
                by_activity: activities(&ActivityAcc::default(), p),
                ..Default::default()
            },
        };

        let (wakeups, wake_ns) = self.cpu_wakeups();
        let die_ns = acc.die_ns();
        let chan_busy = die_ns[3] as f64 * NS;
        let state_s = Residency {
            window_s: wf,
            flash: FlashResidency {
                read: die_ns[0] as f64 * NS,
                program: die_ns[1] as f64 * NS,
                erase: die_ns[2] as f64 * NS,
                transfer: die_ns[3] as f64 * NS,
                idle: die_idle_ns as f64 * NS,
            },
            channels: ChannelResidency {
                busy: chan_busy,
                idle: (self.n_chans as u64 * w).saturating_sub(die_ns[3]) as f64 * NS,
            },
            cpu: CpuResidency {
                normal: acc.cpu_ns[CpuMode::Normal as usize] as f64 * NS,
                idle: acc.cpu_ns[CpuMode::Idle as usize] as f64 * NS,
                slow: acc.cpu_ns[CpuMode::Slow as usize] as f64 * NS,
                wakeup: wake_ns as f64 * NS,
                wakeups,
            },
            dram: DramResidency {
                active: acc.dram_active_ns as f64 * NS,
                standby: w.saturating_sub(acc.dram_active_ns) as f64 * NS,
            },
            host: LinkResidency {
                active: acc.link_active_ns as f64 * NS,
                idle: w.saturating_sub(acc.link_active_ns) as f64 * NS,
            },
        };
        Ok(EnergyReport {
            total,
            flash,
            cpu,
            dram,
            bus: a.bus_j,
            host,
            cpu_modes,
            dram_modes,
            host_modes,
            by_purpose: purposes(&a.purpose_j),
            by_activity: activities(&acc.act, p),
            drain,
            state_s,
        })
    }

    /// The sampled power time series of a finished run.
    pub fn samples(&self) -> Vec<Sample> {
        self.series.samples()
    }

    /// Mean / min / max / std of the power over a finished run.
    ///
    /// The mean is the energy report's (total energy over the window, the
    /// figure AI divides by); min and max are the samples'. The samples cover
    /// the window and hold all of its energy, so the mean is their
    /// time-weighted average and lies between them, but the two sides are
    /// computed apart (the accumulators against per-bucket sums of each
    /// component's watts) and differ in the last bits: where the power is
    /// flat (an idle window, a window shorter than one sample, a run cut by
    /// its time limit inside the first sample) the mean came out one rounding
    /// step above the max or below the min. The extremes are therefore widened
    /// to take in the mean, a change within rounding (larger ones are a
    /// bookkeeping error, caught in debug builds), and a single sample, which
    /// covers the whole window, is the mean.
    pub fn power_stats(&self) -> Result<PowerStats, PowerError> {
        let e = self.energy()?;
        let samples = self.samples();
        let w = e.state_s.window_s;
        let mean = if w > 0.0 { e.total / w } else { 0.0 };
        let (mut mn, mut mx, mut var) = (f64::INFINITY, f64::NEG_INFINITY, 0.0);
        for s in &samples {
            mn = mn.min(s.total_w);
            mx = mx.max(s.total_w);
            var += s.len_s * (s.total_w - mean).powi(2);
        }
        match samples.len() {
            0 => (mn, mx) = (0.0, 0.0),
            1 => (mn, mx, var) = (mean, mean, 0.0),
            _ => {}
        }
        debug_assert!(
            samples.is_empty()
                || (mn - mean).max(mean - mx) <= 1e-9 * mean.abs().max(mx.abs()).max(1e-300),
            "the mean power {mean} W lies outside the samples' [{mn}, {mx}] W by more than rounding"
        );
        let (mn, mx) = (mn.min(mean), mx.max(mean));
        Ok(PowerStats {
            mean,
            min: mn,
            max: mx,
            std: if w > 0.0 { (var / w).sqrt() } else { 0.0 },
            sample_s: self.series.interval_ns() as f64 * NS,
            requested_sample_s: self.series.requested_interval_ns() as f64 * NS,
            coarsened: self.series.coarsened(),
            samples: samples.len(),
        })
    }

    /// All three sections; host IOPS and bytes come from the engine's `report`.
    /// AI uses the measured phase's IOPS (a Filebench personality's ops/s,
    /// an application's calls per second through the page cache, else the
    /// host's requests) and the mean power over the whole energy window
    /// (drain included); J/MB and the battery figure use the total energy
    /// (drain included, as Park et al. count it) over all host bytes moved.
    pub fn power_report(&self, report: &Report) -> Result<PowerReport, PowerError> {
        let energy_j = self.energy()?;
        let power_w = self.power_stats()?;
        // What the application sees: a Filebench personality's ops/s (its
        // IO Summary, every flowop counted: the IOPS Sun et al. divide by
        // the power), else its calls per second through the page cache,
        // else the host's.
        let at = |path: &[&str]| {
            let (first, rest) = path.split_first()?;
            rest.iter()
                .try_fold(report.extra.get(*first)?, |v, k| v.get(k))?
                .as_f64()
        };
        let iops = at(&["filebench", "io_summary", "ops_per_s"])
            .or_else(|| at(&["app", "iops"]))
            .unwrap_or(report.host.iops);
        let ai = if power_w.mean > 0.0 {
            iops / power_w.mean
        } else {
            0.0
        };
        let bytes = (report.host.bytes_read + report.host.bytes_written) as f64;
        let (jpm, gb) = if bytes > 0.0 && energy_j.total > 0.0 {
            let j_per_byte = energy_j.total / bytes;
            (
                Some(j_per_byte * 1e6),
                Some(50.0 * 3600.0 / j_per_byte / 1e9),
            )
        } else {
            (None, None)
        };
        Ok(PowerReport {
            energy_j,
            power_w,
            efficiency: Efficiency {
                ai,
                iops_per_watt: ai,
                joules_per_mb: jpm,
                gb_per_50wh_battery: gb,
            },
        })
    }

    /// The sections `energy_j`, `power_w` and `efficiency` as JSON values, ready
    /// for `report.extra.extend(...)`.
    pub fn finish_report(
        &self,
        report: &Report,
    ) -> Result<serde_json::Map<String, serde_json::Value>, PowerError> {
        let r = self.power_report(report)?;
        let mut m = serde_json::Map::new();
        let json = |x: serde_json::Result<serde_json::Value>| x.expect("power report serializes");
        m.insert("energy_j".into(), json(serde_json::to_value(&r.energy_j)));
        m.insert("power_w".into(), json(serde_json::to_value(&r.power_w)));
        m.insert(
            "efficiency".into(),
            json(serde_json::to_value(&r.efficiency)),
        );
        Ok(m)
    }
}
