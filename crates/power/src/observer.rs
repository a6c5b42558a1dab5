//! [`PowerObserver`]: integrates voltage x current x time per component state from
//! the intervals the engine reports.
//!
//! # How intervals become energy
//! The engine reports every activity once, as a whole interval `[start, end)`,
//! sometimes before simulated time reaches it. Energy is therefore integrated per
//! interval, never from "current state". Two cut points are only known late: the
//! drain start (`drain_start`) and the end of the run (`finish`). To split and clip
//! exactly, each activity waits in a small per-lane queue (one lane per die, one for
//! DRAM, one for the host link, one for the CPU) until its end lies before a lower
//! bound of the engine clock (`now_lb`: the start of the latest flash operation or
//! channel transfer, the latest completion). The engine announces both cut points at
//! or after its clock, so an interval committed early never straddles them. The
//! queues hold only in-flight work (a die's current operation, the CPU's booked
//! future), so memory does not grow with the length of the run.
//!
//! # Integer accumulation
//! What is committed is counted, not charged: exact integer sums of plane-ns
//! (array operations; plane-ops under the per-operation form) and transfer-ns per
//! rate (the op kind, or the kind of op a transfer serves) and purpose, per die,
//! and ns per CPU mode, DRAM and host link. Joules are `rate x units`, computed
//! once in the report (and once per time-series bucket, see [`crate::series`]),
//! so the order in which the engine reports events cannot change a result and the
//! state times stay exact. Only the part of a per-operation energy cut at the
//! drain start or the window end is a float sum (a fraction of an operation).
//!
//! # CPU modes (Lee & Won)
//! Normal mode is the union of `io_active` (a request inside the SSD), `cpu_busy`
//! (firmware, including background GC outside any request) and `cpu_wakeup`
//! (charged at normal power). The complement is idle, and slow once it has lasted
//! `power.cpu_slow_after`. `io_active` is reported when it ends, while CPU bookings
//! are reported when booked, so bookings wait until the surrounding `io_active`
//! arrives; bookings that fall between two completions of the same busy period are
//! inside it and are dropped at once, which keeps that queue as short as the device
//! queue.
//!
//! # Flash (per die, summed per chip)
//! A die is in exactly one state at a time: array read / program / erase, transfer
//! (its command or data on the channel) or idle. Currents are per die (each die is a
//! NAND target with its own supply current); a chip is `dies_per_chip` dies, so for
//! the Lee & Won and Park presets (one die per chip) chip = die.
//! * Array operations draw the op current; **a multi-plane operation on `n` planes
//!   draws `n` times the single-plane current** (state time is counted once), so a
//!   page costs the same energy whether it is programmed alone or in a multi-plane
//!   batch, and the current form agrees with the per-operation form (J per page).
//! * Per-operation form (`flash_*_energy`, Park et al.): the op's energy is
//!   `n_planes x E_op`, spread evenly over its array time; as Park's access times
//!   include the bus transfer, so do the energies: the chip's transfers that serve
//!   an op of that kind cost nothing more at the chip (the channel still pays the
//!   bus energy).
//! * Transfers draw `flash_transfer_current`, or the current of the op they serve.
//! * Idle current for the rest of each die's time.
//!
//! # Other components
//! * Bus (flash channels): `flash_bus_current x V` while transferring, nothing idle
//!   (Lee & Won's internal bus term E_b = C_b V_b T_op).
//! * DRAM: standby power for the whole window plus active power while accessed.
//! * Host link: active power while transferring, idle power otherwise.
//!
//! # Window
//! Energy covers `[0, end)` where `end` is what `finish` reports. With a drain
//! (`drain_start` was called), the window extends to the end of the last reported
//! activity (the engine reports `finish` at the last completion), and everything
//! after the drain start is also accumulated separately.

use crate::series::{ns_f64, Rates, Series, CPU, DRAM, HOST};
use crate::PowerError;
use ssd_core::addr::{ChannelId, DieId};
use ssd_core::config::{PowerConfig, Settings};
use ssd_core::ftl::{OpKind, Purpose};
use ssd_core::observer::{Observer, XferKind};
use ssd_core::units::{Dur, SimTime};
use ssd_core::workload::IoOp;
use std::collections::VecDeque;

/// Default sampling interval of the power time series.
pub const DEFAULT_SAMPLE: Dur = Dur::from_ms(1);

const NS: f64 = 1e-9;

/// Electrical parameters in watts / joules, derived once from [`PowerConfig`].
#[derive(Clone, Debug)]
pub(crate) struct Params {
    /// Array power per plane for read, program, erase (current form).
    pub p_op: [f64; 3],
    /// Per-operation energy (J per page, per block for erase), if given.
    pub e_op: [Option<f64>; 3],
    pub p_xfer: Option<f64>,
    pub p_die_idle: f64,
    pub p_bus: f64,
    pub p_cpu: [f64; 3],
    pub p_dram_standby: f64,
    pub p_dram_active: f64,
    pub p_link_active: f64,
    pub p_link_idle: f64,
    pub slow_after: Option<u64>,
}

impl Params {
    pub fn new(c: &PowerConfig) -> Result<Params, PowerError> {
        let bad = |field: &str, reason: String| PowerError::Config {
            field: format!("power.{field}"),
            reason,
        };
        let v = c.voltage.0;
        if !(v.is_finite() && v > 0.0) {
            return Err(bad("voltage", format!("must be positive, got {v}")));
        }
        let nonneg = |field: &str, x: f64| {
            if x.is_finite() && x >= 0.0 {
                Ok(x)
            } else {
                Err(bad(field, format!("must be a finite value >= 0, got {x}")))
            }
        };
        let opt = |field: &str, x: Option<f64>| x.map(|x| nonneg(field, x)).transpose();
        Ok(Params {
            p_op: [
                nonneg("flash_read_current", c.flash_read_current.0)? * v,
                nonneg("flash_program_current", c.flash_program_current.0)? * v,
                nonneg("flash_erase_current", c.flash_erase_current.0)? * v,
            ],
            e_op: [
                opt("flash_read_energy", c.flash_read_energy.map(|j| j.0))?,
                opt("flash_program_energy", c.flash_program_energy.map(|j| j.0))?,
                opt("flash_erase_energy", c.flash_erase_energy.map(|j| j.0))?,
            ],
            p_xfer: opt(
                "flash_transfer_current",
                c.flash_transfer_current.map(|a| a.0),
            )?
            .map(|a| a * v),
            p_die_idle: nonneg("flash_idle_current", c.flash_idle_current.0)? * v,
            p_bus: nonneg("flash_bus_current", c.flash_bus_current.0)? * v,
            p_cpu: [
                nonneg("cpu_normal_power", c.cpu_normal_power.0)?,
                nonneg("cpu_idle_power", c.cpu_idle_power.0)?,
                nonneg("cpu_slow_power", c.cpu_slow_power.0)?,
            ],
            p_dram_standby: nonneg("dram_standby_power", c.dram_standby_power.0)?,
            p_dram_active: nonneg("dram_active_power", c.dram_active_power.0)?,
            p_link_active: nonneg("link_active_power", c.link_active_power.0)?,
            p_link_idle: nonneg("link_idle_power", c.link_idle_power.0)?,
            slow_after: c.cpu_slow_after.map(|d| d.0),
        })
    }
}

/// CPU power modes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum CpuMode {
    Normal = 0,
    Idle = 1,
    Slow = 2,
}

/// Integer activity of one part of the run (all, or the drain), converted to
/// joules once, at the end ([`Acc::joules`]): exact sums, no per-event rounding.
#[derive(Clone, Debug, Default)]
pub(crate) struct Acc {
    /// Flash units by rate index (see [`RATE_SLOT`]) and purpose
    /// (`Purpose::index`; 8 slots so that a masked index needs no bounds check):
    /// plane-ns of array operations (plane-ops under the per-operation form),
    /// ns of transfers by the kind of op they serve.
    pub up: [[u64; 8]; 8],
    /// Per-operation energy of pieces cut at the drain start or window end (J):
    /// by state (as [`Acc::die_ns`]) and by purpose.
    pub cut_flash_j: [f64; 4],
    pub cut_purpose_j: [f64; 8],
    pub cpu_ns: [u64; 3],
    pub dram_active_ns: u64,
    pub link_active_ns: u64,
    /// Die-nanoseconds by rate index (see [`RATE_SLOT`]; [`Acc::die_ns`] by state).
    pub rate_ns: [u64; 8],
}

/// Energies (J) of an [`Acc`].
#[derive(Clone, Debug, Default)]
pub(crate) struct AccJ {
    /// Die energy by state: array read, program, erase, then transfer ([`XFER`]).
    pub flash_j: [f64; 4],
    /// Array + transfer energy by purpose (`Purpose::index`).
    pub purpose_j: [f64; 8],
    pub bus_j: f64,
    pub cpu_j: [f64; 3],
    pub dram_active_j: f64,
    pub link_active_j: f64,
}

/// State slot of each flash rate index: array read / program / erase (the
/// `OpKind`), then transfers serving a read / program / erase (unused: 6, 7).
pub(crate) const RATE_SLOT: [usize; 8] = [0, 1, 2, XFER, XFER, XFER, XFER, XFER];

/// Energy of `u` units at `rate` J per unit.
#[inline(always)]
fn units_j(rate: f64, u: u64) -> f64 {
    rate * ns_f64(u)
}

impl Acc {
    /// Die-nanoseconds in array read / program / erase / transfer.
    /// A die transfers exactly while its channel does, so `die_ns()[XFER]` is
    /// also the channel-nanoseconds transferring.
    pub(crate) fn die_ns(&self) -> [u64; 4] {
        let mut d = [0; 4];
        for (r, &ns) in self.rate_ns.iter().enumerate() {
            d[RATE_SLOT[r]] += ns;
        }
        d
    }

    pub(crate) fn joules(&self, unit_j: &[f64; 8], p: &Params) -> AccJ {
        let mut flash_j = self.cut_flash_j;
        let mut purpose_j = self.cut_purpose_j;
        for (r, up) in self.up.iter().enumerate() {
            let tot: u64 = up.iter().sum();
            flash_j[RATE_SLOT[r]] += units_j(unit_j[r], tot);
            for (pj, &u) in purpose_j.iter_mut().zip(up) {
                *pj += units_j(unit_j[r], u);
            }
        }
        AccJ {
            flash_j,
            purpose_j,
            bus_j: p.p_bus * (ns_f64(self.die_ns()[XFER]) * NS),
            cpu_j: [0, 1, 2].map(|m| p.p_cpu[m] * (ns_f64(self.cpu_ns[m]) * NS)),
            dram_active_j: p.p_dram_active * (ns_f64(self.dram_active_ns) * NS),
            link_active_j: p.p_link_active * (ns_f64(self.link_active_ns) * NS),
        }
    }
}

/// Index of the transfer state in [`Acc::die_ns`] / [`AccJ::flash_j`].
pub(crate) const XFER: usize = 3;

/// A die activity waiting to be charged: its rate is resolved when it is queued,
/// so committing it is a handful of integer adds.
#[derive(Clone, Copy, Debug, Default)]
struct Item {
    s: u64,
    e: u64,
    /// Planes of an array operation (1 for transfers): units are `planes x ns`
    /// (`planes` under the per-operation form).
    planes: u32,
    /// Rate index (see [`RATE_SLOT`]): `OpKind as usize` for array operations,
    /// `3 + OpKind as usize` (of the op served) for transfers.
    r: u8,
    purpose: u8,
    /// Units are plane-ops: the energy is spread evenly over `[s, e)`.
    per_op: bool,
    /// A command transfer whose array operation is not known yet: the next
    /// `flash_op` of its die decides its power (else it draws as a read's).
    open_cmd: bool,
}

/// A DRAM access or host-link transfer waiting to be charged.
#[derive(Clone, Copy, Debug)]
struct Span {
    s: u64,
    e: u64,
}

/// One die's queue of activities not yet committed: the oldest inline (the
/// usual queue is one operation), the rest (rare) behind it, in arrival order.
#[derive(Clone, Debug)]
pub(crate) struct DieLane {
    /// The oldest waiting activity, if `queued`.
    head: Item,
    queued: bool,
    /// Non-empty only when `queued`.
    more: VecDeque<Item>,
    /// Flash units by rate index, as [`Acc::up`] (summed per chip in the report).
    pub(crate) u: [u64; 8],
    /// Per-operation energy of cut pieces (J) by state, as [`Acc::cut_flash_j`].
    pub(crate) cut_j: [f64; 4],
    /// Busy (array + transfer) nanoseconds in the window: counted whole when
    /// queued (every queued activity is committed), less what clipping drops.
    busy_ns: u64,
}

/// The CPU's normal-mode union, finalized in time order.
#[derive(Clone, Debug, Default)]
struct CpuTrack {
    /// Bookings (cpu_busy / cpu_wakeup) not yet merged with io_active; sorted, disjoint.
    pending: VecDeque<(u64, u64)>,
    /// Everything before this instant is finalized.
    cur_end: u64,
    /// First completion seen since the last io_active report: from here to the
    /// latest completion the SSD is certainly busy.
    covered_from: Option<u64>,
    wakeups: u64,
    wakeup_ns: u64,
}

/// The power model as an engine observer. Build with [`PowerObserver::new`], pass
/// to `Simulation::new`, run, then call [`PowerObserver::finish_report`] (and the
/// time-series writers) on `sim.obs`.
#[derive(Clone, Debug)]
pub struct PowerObserver {
    pub(crate) p: Params,
    pub(crate) dies_per_chip: u32,
    pub(crate) ways: u32,
    pub(crate) n_dies: u32,
    pub(crate) n_chans: u32,
    pub(crate) die_lanes: Vec<DieLane>,
    dram_lane: VecDeque<Span>,
    link_lane: VecDeque<Span>,
    /// Joules per unit by rate index (see [`RATE_SLOT`]): per plane-ns of an
    /// array operation (per plane-op under the per-operation form), per ns of a
    /// transfer by the kind of op served (0 when that op is charged per operation).
    pub(crate) unit_j: [f64; 8],
    op_per_op: [bool; 3],
    /// Series rates, as in `series` (for intervals outside its hot bucket).
    rates: Rates,
    /// `end` or `drain_at` is set: intervals may need clipping or splitting.
    cut: bool,
    cpu: CpuTrack,
    now_lb: u64,
    max_end: u64,
    pub(crate) drain_at: Option<u64>,
    /// Window end, known at `finish`.
    pub(crate) end: Option<u64>,
    pub(crate) all: Acc,
    pub(crate) drain: Acc,
    pub(crate) series: Series,
    pub(crate) requests: u64,
    pub(crate) bytes: u64,
}

impl PowerObserver {
    /// A power model for the drive in `settings` (its `config.power`), sampling the
    /// power time series every `sample` (see [`crate::series`] for its memory bound).
    pub fn new(settings: &Settings, sample: Dur) -> Result<PowerObserver, PowerError> {
        Self::with_sample_cap(settings, sample, crate::series::DEFAULT_MAX_SAMPLES)
    }

    /// As [`new`](Self::new), with a custom bound on the number of stored samples.
    pub fn with_sample_cap(
        settings: &Settings,
        sample: Dur,
        max_samples: usize,
    ) -> Result<PowerObserver, PowerError> {
        let p = Params::new(&settings.config.power)?;
        let xfer_w = [0, 1, 2].map(|k| match p.e_op[k] {
            Some(_) => 0.0,
            None => p.p_xfer.unwrap_or(p.p_op[k]),
        });
        let mut unit_j = [0.0; 8];
        for k in 0..3 {
            unit_j[k] = p.e_op[k].unwrap_or(p.p_op[k] * NS);
            unit_j[3 + k] = xfer_w[k] * NS;
        }
        let op_per_op = [0, 1, 2].map(|k| p.e_op[k].is_some());
        let idle = p.p_cpu[CpuMode::Idle as usize];
        let rates = Rates {
            u: unit_j,
            die_idle: p.p_die_idle * NS,
            bus: p.p_bus * NS,
            cpu: p.p_cpu.map(|w| (w - idle) * NS),
            dram: p.p_dram_active * NS,
            link: (p.p_link_active - p.p_link_idle) * NS,
        };
        let mut series = Series::new(sample.0, max_samples);
        series.set_rates(rates);
        if sample.0 == 0 {
            return Err(PowerError::Config {
                field: "power sample interval".into(),
                reason: "must be positive".into(),
            });
        }
        if max_samples < 2 {
            return Err(PowerError::Config {
                field: "power max samples".into(),
                reason: "must be at least 2".into(),
            });
        }
        let g = settings.geometry;
        let n_dies = g.total_dies();
        Ok(PowerObserver {
            p,
            dies_per_chip: g.dies,
            ways: g.ways,
            n_dies,
            n_chans: g.channels,
            die_lanes: (0..n_dies)
                .map(|_| DieLane {
                    head: Item::default(),
                    queued: false,
                    more: VecDeque::new(),
                    u: [0; 8],
                    cut_j: [0.0; 4],
                    busy_ns: 0,
                })
                .collect(),
            dram_lane: VecDeque::new(),
            link_lane: VecDeque::new(),
            unit_j,
            op_per_op,
            rates,
            cut: false,
            cpu: CpuTrack::default(),
            now_lb: 0,
            max_end: 0,
            drain_at: None,
            end: None,
            all: Acc::default(),
            drain: Acc::default(),
            series,
            requests: 0,
            bytes: 0,
        })
    }

    /// True once `finish` has been called.
    pub fn is_finished(&self) -> bool {
        self.end.is_some()
    }

    /// The energy window `[0, end)` in nanoseconds (None before `finish`).
    pub fn window_ns(&self) -> Option<u64> {
        self.end
    }

    /// Drain start, if the engine reported one.
    pub fn drain_start_ns(&self) -> Option<u64> {
        self.drain_at
    }

    // ------------------------------------------------------------ lanes

    #[inline]
    fn see(&mut self, s: u64, e: u64) {
        debug_assert!(s <= e, "interval [{s}, {e}) ends before it starts");
        self.max_end = self.max_end.max(e);
    }

    /// Busy (array + transfer) nanoseconds of die `d` in the window.
    pub(crate) fn die_busy_ns(&self, d: usize) -> u64 {
        self.die_lanes[d].busy_ns
    }

    /// Queue a die activity; commit, in arrival order, the queued ones that end
    /// before `now_lb`, then the new one if nothing before it still waits.
    #[inline(always)]
    fn push_die(&mut self, d: usize, it: Item) {
        self.see(it.s, it.e);
        let lb = self.now_lb;
        let lane = &mut self.die_lanes[d];
        lane.busy_ns += it.e - it.s;
        if lane.queued {
            if !lane.more.is_empty() {
                return self.push_die_queued(d, it);
            }
            let h = lane.head;
            if h.e > lb {
                lane.more.push_back(it);
                return;
            }
            if it.e > lb {
                lane.head = it;
            } else {
                lane.queued = false;
            }
            self.commit_die(d, h);
            if it.e <= lb {
                self.commit_die(d, it);
            }
        } else if it.e > lb {
            lane.head = it;
            lane.queued = true;
        } else {
            self.commit_die(d, it);
        }
    }

    /// `push_die` when more than one activity waits (rare).
    #[cold]
    #[inline(never)]
    fn push_die_queued(&mut self, d: usize, it: Item) {
        let lb = self.now_lb;
        while self.die_lanes[d].queued {
            let lane = &mut self.die_lanes[d];
            let h = lane.head;
            if h.e > lb {
                lane.more.push_back(it);
                return;
            }
            match lane.more.pop_front() {
                Some(n) => lane.head = n,
                None => lane.queued = false,
            }
            self.commit_die(d, h);
        }
        if it.e <= lb {
            self.commit_die(d, it);
        } else {
            let lane = &mut self.die_lanes[d];
            lane.head = it;
            lane.queued = true;
        }
    }

    #[inline]
    fn push_other(&mut self, dram: bool, it: Span) {
        self.see(it.s, it.e);
        let lb = self.now_lb;
        loop {
            let lane = if dram {
                &mut self.dram_lane
            } else {
                &mut self.link_lane
            };
            match lane.front() {
                Some(f) if f.e <= lb => {
                    let f = lane.pop_front().expect("front");
                    self.commit_other(dram, f);
                }
                _ => break,
            }
        }
        let lane = if dram {
            &mut self.dram_lane
        } else {
            &mut self.link_lane
        };
        lane.push_back(it);
    }

    /// Split `[s, e)` at the window end and the drain start: (start, end, in_drain).
    #[inline]
    fn pieces(&self, s: u64, e: u64) -> [(u64, u64, bool); 2] {
        let e = match self.end {
            Some(w) => e.min(w),
            None => e,
        };
        let s = s.min(e);
        match self.drain_at {
            Some(d) if d > s && d < e => [(s, d, false), (d, e, true)],
            Some(d) if d <= s => [(s, e, true), (e, e, true)],
            _ => [(s, e, false), (e, e, false)],
        }
    }

    #[inline(always)]
    fn commit_die(&mut self, d: usize, it: Item) {
        if self.cut {
            return self.commit_die_cut(d, it);
        }
        // One piece, as `pieces` would give.
        let ns = it.e - it.s;
        if ns > 0 {
            let u = if it.per_op {
                it.planes as u64
            } else {
                it.planes as u64 * ns
            };
            self.charge_die(d, &it, ns, u, false);
        }
    }

    /// `commit_die` once the window end or the drain start is known.
    #[cold]
    #[inline(never)]
    fn commit_die_cut(&mut self, d: usize, it: Item) {
        let full = it.e - it.s;
        // Counted whole when queued: take back what the window end clips.
        self.die_lanes[d].busy_ns -= full;
        for (s, e, dr) in self.pieces(it.s, it.e) {
            if e > s {
                let ns = e - s;
                self.die_lanes[d].busy_ns += ns;
                let piece = Item { s, e, ..it };
                if !it.per_op {
                    self.charge_die(d, &piece, ns, it.planes as u64 * ns, dr);
                } else if ns == full {
                    self.charge_die(d, &piece, ns, it.planes as u64, dr);
                } else {
                    // A part of a per-operation energy: not a whole unit.
                    let j = units_j(self.unit_j[it.r as usize & 7], it.planes as u64)
                        * (ns_f64(ns) / ns_f64(full));
                    self.charge_die_part(d, &piece, ns, j, dr);
                }
            }
        }
    }

    /// Count `u` units over `[it.s, it.e)` (`ns` > 0 long) to its die.
    #[inline(always)]
    fn charge_die(&mut self, d: usize, it: &Item, ns: u64, u: u64, dr: bool) {
        let r = it.r as usize & 7;
        let pi = it.purpose as usize & 7;
        self.all.up[r][pi] += u;
        self.all.rate_ns[r] += ns;
        if dr {
            self.drain.up[r][pi] += u;
            self.drain.rate_ns[r] += ns;
        }
        self.die_lanes[d].u[r] += u;
        if self.series.is_hot(it.s, it.e) {
            let t = &mut self.series.cur;
            t.u[r] += u;
            t.rate_ns[r] += ns;
        } else {
            self.series_die_cold(it, ns, u);
        }
    }

    /// A die's interval outside the series' hot bucket: counted if the hot
    /// bucket can move to it, else charged in joules, split at bucket boundaries.
    #[inline(never)]
    fn series_die_cold(&mut self, it: &Item, ns: u64, u: u64) {
        let r = it.r as usize & 7;
        let slot = RATE_SLOT[r];
        let planes = it.planes as u64;
        let counted = if it.per_op {
            self.series.count_cold(it.s, it.e, false, |t, ns| {
                t.u[r] += u;
                t.rate_ns[r] += ns;
            })
        } else {
            self.series.count_cold(it.s, it.e, true, |t, ns| {
                t.u[r] += planes * ns;
                t.rate_ns[r] += ns;
            })
        };
        if !counted {
            let n = ns_f64(ns);
            let flash = units_j(self.rates.u[r], u) - self.rates.die_idle * n;
            let bus = if slot == XFER {
                self.rates.bus * n
            } else {
                0.0
            };
            self.series.add_die(flash, bus, it.s, it.e, n);
        }
    }

    /// Charge `j` joules (a part of a per-operation energy) over `[it.s, it.e)`
    /// (`ns` > 0 long) to its die.
    #[cold]
    #[inline(never)]
    fn charge_die_part(&mut self, d: usize, it: &Item, ns: u64, j: f64, dr: bool) {
        let slot = RATE_SLOT[it.r as usize & 7];
        let pi = it.purpose as usize & 7;
        for acc in [Some(&mut self.all), dr.then_some(&mut self.drain)]
            .into_iter()
            .flatten()
        {
            acc.cut_flash_j[slot] += j;
            acc.cut_purpose_j[pi] += j;
            acc.rate_ns[it.r as usize & 7] += ns;
        }
        self.die_lanes[d].cut_j[slot] += j;
        let n = ns_f64(ns);
        let flash = j - self.rates.die_idle * n;
        let bus = if slot == XFER {
            self.rates.bus * n
        } else {
            0.0
        };
        self.series.add_die(flash, bus, it.s, it.e, n);
    }

    fn commit_other(&mut self, dram: bool, it: Span) {
        if !self.cut {
            return self.charge_other(dram, it.s, it.e, false);
        }
        for (s, e, dr) in self.pieces(it.s, it.e) {
            self.charge_other(dram, s, e, dr);
        }
    }

    #[inline(always)]
    fn charge_other(&mut self, dram: bool, s: u64, e: u64, dr: bool) {
        if e <= s {
            return;
        }
        let ns = e - s;
        let hot = self.series.is_hot(s, e);
        let t = &mut self.series.cur;
        if dram {
            self.all.dram_active_ns += ns;
            if dr {
                self.drain.dram_active_ns += ns;
            }
            if hot {
                t.dram_ns += ns;
            } else if !self.series.count_cold(s, e, true, |t, ns| t.dram_ns += ns) {
                let j = self.rates.dram * ns_f64(ns);
                self.series.add_energy(DRAM, s, e, j);
            }
        } else {
            self.all.link_active_ns += ns;
            if dr {
                self.drain.link_active_ns += ns;
            }
            if hot {
                t.link_ns += ns;
            } else if !self.series.count_cold(s, e, true, |t, ns| t.link_ns += ns) {
                let j = self.rates.link * ns_f64(ns);
                self.series.add_energy(HOST, s, e, j);
            }
        }
    }

    // ------------------------------------------------------------ CPU

    fn cpu_charge(&mut self, mode: CpuMode, s: u64, e: u64) {
        if !self.cut {
            return self.cpu_charge_piece(mode as usize, s, e, false);
        }
        for (s, e, dr) in self.pieces(s, e) {
            self.cpu_charge_piece(mode as usize, s, e, dr);
        }
    }

    #[inline(always)]
    fn cpu_charge_piece(&mut self, m: usize, s: u64, e: u64, dr: bool) {
        if e <= s {
            return;
        }
        let ns = e - s;
        self.all.cpu_ns[m] += ns;
        if dr {
            self.drain.cpu_ns[m] += ns;
        }
        if self.series.is_hot(s, e) {
            self.series.cur.cpu_ns[m] += ns;
        } else if !self
            .series
            .count_cold(s, e, true, |t, ns| t.cpu_ns[m] += ns)
        {
            let excess = self.rates.cpu[m] * ns_f64(ns);
            if excess != 0.0 {
                self.series.add_energy(CPU, s, e, excess);
            }
        }
    }

    /// Idle, then slow after the timeout, over a gap of the normal-mode union.
    fn cpu_gap(&mut self, g0: u64, g1: u64) {
        let t = match self.p.slow_after {
            Some(to) => g0.saturating_add(to).min(g1),
            None => g1,
        };
        self.cpu_charge(CpuMode::Idle, g0, t);
        self.cpu_charge(CpuMode::Slow, t, g1);
    }

    /// Extend the normal-mode union by `[s, e)`; inputs arrive sorted by start.
    fn cpu_normal(&mut self, s: u64, e: u64) {
        let cur = self.cpu.cur_end;
        if e <= cur {
            return;
        }
        let s = s.max(cur);
        if s > cur {
            self.cpu_gap(cur, s);
        }
        self.cpu_charge(CpuMode::Normal, s, e);
        self.cpu.cur_end = e;
    }

    fn cpu_booking(&mut self, s: u64, e: u64) {
        self.see(s, e);
        if e > s {
            self.cpu.pending.push_back((s, e));
        }
    }

    fn flush_cpu(&mut self, window_end: u64) {
        while let Some((s, e)) = self.cpu.pending.pop_front() {
            self.cpu_normal(s, e);
        }
        let cur = self.cpu.cur_end;
        if window_end > cur {
            self.cpu_gap(cur, window_end);
            self.cpu.cur_end = window_end;
        }
    }

    // ------------------------------------------------------------ results

    pub(crate) fn cpu_wakeups(&self) -> (u64, u64) {
        (self.cpu.wakeups, self.cpu.wakeup_ns)
    }
}

impl Observer for PowerObserver {
    #[inline]
    fn flash_op(
        &mut self,
        die: DieId,
        kind: OpKind,
        purpose: Purpose,
        planes: u32,
        start: SimTime,
        end: SimTime,
    ) {
        self.now_lb = self.now_lb.max(start.0);
        let d = die.0 as usize;
        let k = kind as usize;
        // The die's last queued command transfer serves this operation.
        let lane = &mut self.die_lanes[d];
        if lane.queued {
            let b = if lane.more.is_empty() {
                &mut lane.head
            } else {
                lane.more.back_mut().expect("non-empty")
            };
            if b.open_cmd {
                b.open_cmd = false;
                b.r = 3 + k as u8;
            }
        }
        self.push_die(
            d,
            Item {
                s: start.0,
                e: end.0,
                planes: planes.max(1),
                r: k as u8,
                purpose: purpose.index() as u8,
                per_op: self.op_per_op[k],
                open_cmd: false,
            },
        );
    }

    #[inline]
    fn bus_xfer(
        &mut self,
        _ch: ChannelId,
        die: DieId,
        kind: XferKind,
        purpose: Purpose,
        _bytes: u64,
        start: SimTime,
        end: SimTime,
    ) {
        self.now_lb = self.now_lb.max(start.0);
        // A command's op is not known yet: it draws as a read's unless the die's
        // next flash_op says otherwise.
        let k = match kind {
            XferKind::Command | XferKind::DataOut => OpKind::Read,
            XferKind::DataIn => OpKind::Program,
        };
        let d = die.0 as usize;
        self.push_die(
            d,
            Item {
                s: start.0,
                e: end.0,
                planes: 1,
                r: 3 + k as u8,
                purpose: purpose.index() as u8,
                per_op: false,
                open_cmd: kind == XferKind::Command,
            },
        );
    }

    #[inline]
    fn cpu_busy(&mut self, start: SimTime, end: SimTime) {
        self.cpu_booking(start.0, end.0);
    }

    fn cpu_wakeup(&mut self, start: SimTime, end: SimTime) {
        self.cpu.wakeups += 1;
        self.cpu.wakeup_ns += end.0 - start.0;
        self.cpu_booking(start.0, end.0);
    }

    #[inline]
    fn dram_access(&mut self, _count: u64, start: SimTime, end: SimTime) {
        self.push_other(
            true,
            Span {
                s: start.0,
                e: end.0,
            },
        );
    }

    #[inline]
    fn link_xfer(&mut self, _bytes: u64, start: SimTime, end: SimTime) {
        self.push_other(
            false,
            Span {
                s: start.0,
                e: end.0,
            },
        );
    }

    fn io_active(&mut self, start: SimTime, end: SimTime) {
        let (a0, a1) = (start.0, end.0);
        self.see(a0, a1);
        self.now_lb = self.now_lb.max(a1);
        self.cpu.covered_from = None;
        // Bookings before the period are outside it; those inside are subsumed; a
        // booking straddling its end keeps its remainder.
        let mut a_done = false;
        let mut rest = None;
        while let Some(&(s, e)) = self.cpu.pending.front() {
            if s >= a1 {
                break;
            }
            self.cpu.pending.pop_front();
            if !a_done && s >= a0 {
                self.cpu_normal(a0, a1);
                a_done = true;
            }
            self.cpu_normal(s, e.min(a1));
            if e > a1 {
                rest = Some((a1, e));
            }
        }
        if !a_done {
            self.cpu_normal(a0, a1);
        }
        if let Some(r) = rest {
            self.cpu.pending.push_front(r);
        }
    }

    fn request_done(&mut self, _op: IoOp, bytes: u64, _arrival: SimTime, done: SimTime) {
        let d = done.0;
        self.now_lb = self.now_lb.max(d);
        self.requests += 1;
        self.bytes += bytes;
        self.series.add_completion(d, bytes);
        // [covered_from, d] lies inside the busy period that io_active will report:
        // drop the bookings wholly inside it.
        let c = *self.cpu.covered_from.get_or_insert(d);
        let pend = &mut self.cpu.pending;
        let i = pend.partition_point(|&(s, _)| s < c);
        let mut j = i;
        while j < pend.len() && pend[j].1 <= d {
            j += 1;
        }
        if j > i {
            pend.drain(i..j);
        }
    }

    fn drain_start(&mut self, t: SimTime) {
        if self.drain_at.is_none() {
            self.drain_at = Some(t.0);
            self.cut = true;
        }
    }

    fn finish(&mut self, end: SimTime) {
        if self.end.is_some() {
            return;
        }
        let w = if self.drain_at.is_some() {
            end.0.max(self.max_end)
        } else {
            end.0
        };
        self.end = Some(w);
        self.cut = true;
        for d in 0..self.die_lanes.len() {
            let lane = &mut self.die_lanes[d];
            let head = std::mem::take(&mut lane.queued).then_some(lane.head);
            let more = std::mem::take(&mut lane.more);
            for it in head.into_iter().chain(more) {
                self.commit_die(d, it);
            }
        }
        while let Some(it) = self.dram_lane.pop_front() {
            self.commit_other(true, it);
        }
        while let Some(it) = self.link_lane.pop_front() {
            self.commit_other(false, it);
        }
        self.flush_cpu(w);
        // Baselines drawn the whole window: die idle, DRAM standby, CPU idle, link idle.
        let base = self.n_dies as f64 * self.p.p_die_idle;
        self.series.add_baseline(crate::series::FLASH, base, w);
        self.series.add_baseline(DRAM, self.p.p_dram_standby, w);
        self.series
            .add_baseline(CPU, self.p.p_cpu[CpuMode::Idle as usize], w);
        self.series.add_baseline(HOST, self.p.p_link_idle, w);
        self.series.close(w);
    }
}
