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

use crate::series::{ns_f64, Series, CPU, DRAM, FLASH, HOST};
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

/// Energies (J) and state times (ns) of one part of the run (all, or the drain).
#[derive(Clone, Debug, Default)]
pub(crate) struct Acc {
    /// Die energy by state: array read, program, erase (indices of `OpKind`),
    /// then transfer (index [`XFER`]).
    pub flash_j: [f64; 4],
    /// Array + transfer energy by purpose (`Purpose::index`; 8 slots so that a
    /// masked index needs no bounds check).
    pub purpose_j: [f64; 8],
    pub bus_j: f64,
    pub cpu_j: [f64; 3],
    pub cpu_ns: [u64; 3],
    pub dram_active_j: f64,
    pub dram_active_ns: u64,
    pub link_active_j: f64,
    pub link_active_ns: u64,
    /// Die-nanoseconds in array read / program / erase / transfer (as `flash_j`).
    /// A die transfers exactly while its channel does, so `die_ns[XFER]` is also
    /// the channel-nanoseconds transferring.
    pub die_ns: [u64; 4],
}

/// Index of the transfer state in [`Acc::flash_j`] / [`Acc::die_ns`].
pub(crate) const XFER: usize = 3;

/// A die activity waiting to be charged: its power (or energy) is resolved when
/// it is queued, so committing it is a handful of adds.
#[derive(Clone, Copy, Debug, Default)]
struct Item {
    s: u64,
    e: u64,
    /// Array operation: `planes x` the op's power (W), or with a per-operation
    /// energy `planes x` that energy (J, spread over `[s, e)`). Transfer: the
    /// power drawn (W; 0 when the op it serves is charged per operation).
    a: f64,
    /// Chip of the die (index into `chip_j`).
    chip: u32,
    /// State index: `OpKind as usize` for array operations, [`XFER`] for transfers.
    slot: u8,
    purpose: u8,
    /// `a` is an energy for the whole interval (per-operation form).
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
struct DieLane {
    /// The oldest waiting activity, if `queued`.
    head: Item,
    queued: bool,
    /// Non-empty only when `queued`.
    more: VecDeque<Item>,
    /// Chip of this die (index into `chip_j`).
    chip: u32,
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
    die_lanes: Vec<DieLane>,
    dram_lane: VecDeque<Span>,
    link_lane: VecDeque<Span>,
    /// Transfer power (W) by the kind of op served (0 under the per-op form).
    xfer_w: [f64; 3],
    /// Array operation coefficient by kind: the per-operation energy if given
    /// (`op_per_op`), else the power of one plane.
    op_a: [f64; 3],
    op_per_op: [bool; 3],
    /// Channel power by die state (the bus draws only while transferring).
    bus_w: [f64; 4],
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
    /// Per chip: energy by [read, program, erase, transfer].
    pub(crate) chip_j: Vec<[f64; 4]>,
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
        let op_a = [0, 1, 2].map(|k| p.e_op[k].unwrap_or(p.p_op[k]));
        let op_per_op = [0, 1, 2].map(|k| p.e_op[k].is_some());
        let bus_w = [0.0, 0.0, 0.0, p.p_bus];
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
        let chips = g.channels * g.ways;
        Ok(PowerObserver {
            p,
            dies_per_chip: g.dies,
            ways: g.ways,
            n_dies,
            n_chans: g.channels,
            die_lanes: (0..n_dies)
                .map(|d| DieLane {
                    head: Item::default(),
                    queued: false,
                    more: VecDeque::new(),
                    chip: d / g.dies,
                    busy_ns: 0,
                })
                .collect(),
            dram_lane: VecDeque::new(),
            link_lane: VecDeque::new(),
            xfer_w,
            op_a,
            op_per_op,
            bus_w,
            cut: false,
            cpu: CpuTrack::default(),
            now_lb: 0,
            max_end: 0,
            drain_at: None,
            end: None,
            all: Acc::default(),
            drain: Acc::default(),
            chip_j: vec![[0.0; 4]; chips as usize],
            series: Series::new(sample.0, max_samples),
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
        // One piece, as `pieces` would give (for the per-op form, the whole
        // energy: `a x (ns / ns)` is `a`).
        let ns = it.e - it.s;
        if ns > 0 {
            let n = ns_f64(ns);
            let dt = n * NS;
            let j = if it.per_op { it.a } else { it.a * dt };
            self.charge_die(&it, ns, n, j, false);
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
                let n = ns as f64;
                let j = if it.per_op {
                    it.a * (n / full as f64)
                } else {
                    it.a * (n * NS)
                };
                let piece = Item { s, e, ..it };
                self.charge_die(&piece, ns, n, j, dr);
            }
        }
    }

    /// Charge `j` joules over `[it.s, it.e)` (`ns` > 0 long, `n` = `ns as f64`)
    /// to its die.
    #[inline(always)]
    fn charge_die(&mut self, it: &Item, ns: u64, n: f64, j: f64, dr: bool) {
        let dt = n * NS;
        let slot = it.slot as usize & 3;
        let pi = it.purpose as usize & 7;
        // The channel is busy exactly while a die transfers. Adding 0.0 to the
        // (never negative) bus sum for array operations changes nothing.
        let bus_j = self.bus_w[slot] * dt;
        let charge = |acc: &mut Acc| {
            acc.flash_j[slot] += j;
            acc.die_ns[slot] += ns;
            acc.bus_j += bus_j;
            acc.purpose_j[pi] += j;
        };
        charge(&mut self.all);
        if dr {
            charge(&mut self.drain);
        }
        self.chip_j[it.chip as usize][slot] += j;
        // Time series: the die's power above its idle baseline, and the channel.
        let flash = j - self.p.p_die_idle * dt;
        self.series.add_die(flash, bus_j, it.s, it.e, n);
    }

    fn commit_other(&mut self, dram: bool, it: Span) {
        for (s, e, dr) in self.pieces(it.s, it.e) {
            if e <= s {
                continue;
            }
            let ns = e - s;
            let dt = ns as f64 * NS;
            if dram {
                let j = self.p.p_dram_active * dt;
                for acc in [Some(&mut self.all), dr.then_some(&mut self.drain)]
                    .into_iter()
                    .flatten()
                {
                    acc.dram_active_j += j;
                    acc.dram_active_ns += ns;
                }
                self.series.add_energy(DRAM, s, e, j);
            } else {
                let j = self.p.p_link_active * dt;
                for acc in [Some(&mut self.all), dr.then_some(&mut self.drain)]
                    .into_iter()
                    .flatten()
                {
                    acc.link_active_j += j;
                    acc.link_active_ns += ns;
                }
                self.series
                    .add_energy(HOST, s, e, j - self.p.p_link_idle * dt);
            }
        }
    }

    // ------------------------------------------------------------ CPU

    fn cpu_charge(&mut self, mode: CpuMode, s: u64, e: u64) {
        for (s, e, dr) in self.pieces(s, e) {
            if e <= s {
                continue;
            }
            let ns = e - s;
            let dt = ns as f64 * NS;
            let m = mode as usize;
            let j = self.p.p_cpu[m] * dt;
            for acc in [Some(&mut self.all), dr.then_some(&mut self.drain)]
                .into_iter()
                .flatten()
            {
                acc.cpu_j[m] += j;
                acc.cpu_ns[m] += ns;
            }
            let excess = j - self.p.p_cpu[CpuMode::Idle as usize] * dt;
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
            let b = match lane.more.back_mut() {
                Some(b) => b,
                None => &mut lane.head,
            };
            if b.open_cmd {
                b.open_cmd = false;
                b.a = self.xfer_w[k];
            }
        }
        self.push_die(
            d,
            Item {
                s: start.0,
                e: end.0,
                a: planes.max(1) as f64 * self.op_a[k],
                chip: self.die_lanes[d].chip,
                slot: k as u8,
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
                a: self.xfer_w[k as usize],
                chip: self.die_lanes[d].chip,
                slot: XFER as u8,
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
        self.series.add_baseline(FLASH, base, w);
        self.series.add_baseline(DRAM, self.p.p_dram_standby, w);
        self.series
            .add_baseline(CPU, self.p.p_cpu[CpuMode::Idle as usize], w);
        self.series.add_baseline(HOST, self.p.p_link_idle, w);
        self.series.close(w);
    }
}
