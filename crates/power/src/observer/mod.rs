//! [`PowerObserver`]: integrates voltage x current x time per component state from
//! the intervals the engine reports.
//!
//! # How intervals become energy
//! The engine reports every activity once, as a whole interval `[start, end)`,
//! sometimes before simulated time reaches it. Energy is therefore integrated per
//! interval, never from "current state". Two cut points are only known late: the
//! drain start (`drain_start`) and the end of the run (`finish`). The engine
//! announces both at its clock; it reports a die's activities one at a time per
//! die, in order: a data-out transfer when it starts (at its clock), a command
//! or data-in transfer together with the array operation after it when the
//! operation ends, or just before a cut as far as they began by then; so of all
//! die activities reported before a cut, only each die's last one can straddle
//! it.
//!
//! * **Dies**: an activity is counted as soon as it is reported, and stays the
//!   die's `last` (its `DieLane`) until the die's next report. When a cut point
//!   arrives, every die's last activity that ends after it is taken back and
//!   counted again, split at the drain start or clipped at the window end
//!   (`recount`): integer counts, so taking back is exact. Two cases wait
//!   instead: a command transfer, whose power is that of the operation it
//!   serves (`OPEN` until the die's next `flash_op` says which), and, rarely, the
//!   time-series part of an activity that does not fit the series' counted
//!   buckets (`SERIES_WAIT`, spread in joules once the die moves on). An
//!   activity that overlaps its die's next one (never with the engine's dies) is
//!   set aside, still correctable, until it ends.
//! * **DRAM, host link**: each access waits in a small queue (`SpanLane`)
//!   until its end lies before a lower bound of the engine clock (`now_lb`:
//!   the latest completion), so one committed never straddles a cut point.
//!   A firmware pass's DRAM span waits in the pass log instead (`WorkLog`,
//!   which holds the pass anyway) while no cut point is known and the lane
//!   is empty, and is committed at the same reports, in the same order.
//! * **Firmware passes** (their division among activities, `Acc::act`):
//!   while no cut point is known, a pass is counted at once, and passes of
//!   one shape in a row (the same CPU and DRAM lengths and weights: every
//!   host write of one size) are divided once for the whole run of them
//!   (exact: a pass's parts depend on its shape only). Each also goes to a
//!   log (`WorkLog`: where the pass lies and its run's number, the shapes
//!   once per run), trimmed of passes that ended before `now_lb`; a cut point takes
//!   back, exactly, the logged passes it may split, clip or put in the
//!   drain, which are then committed as the passes reported after it.
//! * **CPU**: see below.
//!
//! All of this holds only in-flight work, so memory does not grow with the
//! length of the run.
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
//! `power.cpu_slow_after`. A host command's pass (`command_pass`) lies inside
//! the `io_active` period of its command, so it is left out of the union (the
//! same union). `io_active` is reported when it ends, while CPU bookings
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
//! * The die currents are `[power]`'s `flash_*_current`, or the NAND model's
//!   own (`Nand::currents`, handed over by the engine before the run through
//!   `Observer::nand_currents`).
//! * With cache commands (`[nand.cache]`) a die's array operation can overlap
//!   a transfer of its cache register; both are counted (the die draws both
//!   currents). Idle time is the window less every die's array and transfer
//!   times (saturating at 0), so an overlap is taken off it twice: the die
//!   draws `I_op + I_xfer - I_idle` meanwhile (the standby current is small).
//!
//! # Other components
//! * Bus (flash channels): `flash_bus_current x V` while transferring, nothing idle
//!   (Lee & Won's internal bus term E_b = C_b V_b T_op).
//! * DRAM: standby power for the whole window plus active power while accessed.
//!   Standby is `power.dram_standby_power`, or scales with the capacity
//!   (`Settings::dram_standby_power`: per GiB, or per device of
//!   `dram.device_size` as in Micron's DDR power calculator).
//! * Host link: active power while transferring, idle power otherwise.
//!
//! # Window
//! Energy covers `[start, end)` where `end` is what `finish` reports and
//! `start` is 0, or the end of the ramp (`sim.ramp_time`) that the engine
//! reports with `measure_start`: as fio leaves its ramp out of every
//! statistic, the ramp is in no energy figure. At the ramp's end everything
//! counted is dropped and the time series starts again there (its first
//! sample starts at the ramp's end; sample times stay times of the run); the
//! die activities that run past it are counted again from it, and from then
//! on every interval is clipped at it, whenever reported (an array operation
//! reported when it ends, an `io_active` period that began in the ramp), as
//! intervals are split at the drain start: a per-operation energy pro rata.
//! Idle power (the baselines) is drawn from the ramp's end. With a drain
//! (`drain_start` was called), the window extends to the end of the last reported
//! activity (the engine reports `finish` at the last completion), and everything
//! after the drain start is also accumulated separately.
//!
//! This module holds the observer's state and the dies' and channels'
//! accounting; `events` takes the engine's reports ([`Observer`]), `other`
//! keeps the DRAM, link, firmware-pass and CPU lanes; the time series are
//! `series.rs`, the report sections `report.rs`.

use crate::series::{ns_f64, Counters, Rates, Series, BUS, CPU, DRAM, FLASH, HOST};
use crate::PowerError;
use ssd_core::addr::{ChannelId, DieId};
use ssd_core::config::{PowerConfig, Settings};
use ssd_core::ftl::{Activity, OpKind, Purpose};
use ssd_core::hw::NandCurrents;
use ssd_core::observer::{Observer, XferKind};
use ssd_core::units::{Amps, Dur, SimTime};
use ssd_core::workload::IoOp;
use std::collections::VecDeque;

mod events;
mod other;

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
    /// `dram_standby`: the DRAM's standby power (W), fixed or scaled with
    /// its capacity ([`Settings::dram_standby_power`]).
    pub fn new(c: &PowerConfig, dram_standby: f64) -> Result<Params, PowerError> {
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
            p_dram_standby: nonneg("dram_standby_power", dram_standby)?,
            p_dram_active: nonneg("dram_active_power", c.dram_active_power.0)?,
            p_link_active: nonneg("link_active_power", c.link_active_power.0)?,
            p_link_idle: nonneg("link_idle_power", c.link_idle_power.0)?,
            slow_after: c.cpu_slow_after.map(|d| d.0),
        })
    }
}

impl Params {
    /// Joules per unit by rate index (see [`RATE_SLOT`]: per plane-ns of an
    /// array operation, per plane-op under the per-operation form, per ns
    /// of a transfer by the kind of op served) and the time series' rates.
    fn unit_rates(&self) -> ([f64; 8], Rates) {
        let p = self;
        let xfer_w = [0, 1, 2].map(|k| match p.e_op[k] {
            Some(_) => 0.0,
            None => p.p_xfer.unwrap_or(p.p_op[k]),
        });
        let mut unit_j = [0.0; 8];
        for k in 0..3 {
            unit_j[k] = p.e_op[k].unwrap_or(p.p_op[k] * NS);
            unit_j[3 + k] = xfer_w[k] * NS;
        }
        let idle = p.p_cpu[CpuMode::Idle as usize];
        let rates = Rates {
            u: unit_j,
            die_idle: p.p_die_idle * NS,
            bus: p.p_bus * NS,
            cpu: p.p_cpu.map(|w| (w - idle) * NS),
            dram: p.p_dram_active * NS,
            link: (p.p_link_active - p.p_link_idle) * NS,
        };
        (unit_j, rates)
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
    /// CPU busy and DRAM active nanoseconds by firmware [`Activity`] (each
    /// firmware pass's times divided in proportion to its cycles and
    /// accesses), and the cycles and accesses of the passes counted (whole
    /// passes that began in the part).
    pub act: ActivityAcc,
}

/// Firmware work by [`Activity`] (see [`Acc::act`]).
#[derive(Clone, Debug, Default)]
pub(crate) struct ActivityAcc {
    pub cpu_ns: [u64; Activity::COUNT],
    pub dram_ns: [u64; Activity::COUNT],
    pub cycles: [u64; Activity::COUNT],
    pub accesses: [u64; Activity::COUNT],
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

/// State of a die's last activity (see [`DieLane`]).
const DONE: u8 = 0;
/// Counted, but not yet in the time series: it did not fit the series' counted
/// buckets, so it is spread there in joules once it can no longer be cut.
const SERIES_WAIT: u8 = 1;
/// A command transfer whose power the die's next `flash_op` decides: nothing
/// of it is counted yet.
const OPEN: u8 = 2;
/// Counted after a cut point, split and clipped: final.
const FINAL: u8 = 3;

/// A die activity `[s, e)`: its rate is resolved when it is reported, so
/// counting it is a handful of integer adds.
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
    /// `Purpose::index`.
    purpose: u8,
    /// Units are plane-ops: the energy is spread evenly over `[s, e)`.
    per_op: bool,
    /// [`DONE`], [`SERIES_WAIT`], [`OPEN`] or [`FINAL`].
    state: u8,
}

impl Item {
    #[inline(always)]
    fn new(s: u64, e: u64, planes: u64, r: usize, purpose: usize, per_op: bool, state: u8) -> Item {
        Item {
            s,
            e,
            planes: planes as u32,
            r: r as u8,
            purpose: purpose as u8,
            per_op,
            state,
        }
    }
    /// Rate index, below 8.
    #[inline(always)]
    fn r(self) -> usize {
        self.r as usize & 7
    }
    /// Purpose index, below 8.
    #[inline(always)]
    fn purpose(self) -> usize {
        self.purpose as usize & 7
    }
    #[inline(always)]
    fn planes(self) -> u64 {
        self.planes as u64
    }
    #[inline(always)]
    fn with_state(self, state: u8) -> Item {
        Item { state, ..self }
    }
    #[inline(always)]
    fn with_rate(self, r: usize) -> Item {
        Item { r: r as u8, ..self }
    }
    /// Units of the whole activity (see [`units_of`]).
    #[inline(always)]
    fn units(self) -> u64 {
        units_of(self.per_op, self.planes(), self.e - self.s)
    }
}

/// Units of a die activity of `ns` on `planes` planes: plane-ns, or planes under
/// the per-operation form; none when it takes no time.
#[inline(always)]
fn units_of(per_op: bool, planes: u64, ns: u64) -> u64 {
    if per_op {
        planes * (ns != 0) as u64
    } else {
        planes * ns
    }
}

/// A DRAM access or host-link transfer waiting to be charged, or a CPU
/// booking waiting for the busy period around it.
#[derive(Clone, Copy, Debug)]
struct Span {
    s: u64,
    e: u64,
}

/// A FIFO of [`Span`]s (DRAM accesses, link transfers, CPU bookings): a
/// vector read from `head`, emptied whenever it has all been read (nearly
/// every push: each access commits the one before) and compacted when most
/// of it has been read. Cheaper than a `VecDeque`, whose every push and pop
/// computes a wrapped index.
#[derive(Clone, Debug, Default)]
struct SpanLane {
    buf: Vec<Span>,
    head: usize,
}

impl SpanLane {
    /// No span waits.
    #[inline(always)]
    fn is_empty(&self) -> bool {
        self.head == self.buf.len()
    }

    /// The front span, removed, if it ended by `lb`.
    #[inline(always)]
    fn pop_front_if_ended(&mut self, lb: u64) -> Option<Span> {
        let f = *self.buf.get(self.head)?;
        if f.e > lb {
            return None;
        }
        self.head += 1;
        Some(f)
    }

    /// If the lane holds one span and it ended by `lb`, put `it` in its
    /// place and return it (`Ok`): the same as `pop_front_if_ended` then
    /// `push_back(it)`, without moving the vector's ends. Else `Err(it)`.
    #[inline(always)]
    fn replace_single_if_ended(&mut self, it: Span, lb: u64) -> Result<Span, Span> {
        if self.head + 1 == self.buf.len() {
            if let Some(only) = self.buf.last_mut() {
                if only.e <= lb {
                    return Ok(std::mem::replace(only, it));
                }
            }
        }
        Err(it)
    }

    #[inline(always)]
    fn pop_front(&mut self) -> Option<Span> {
        self.pop_front_if_ended(u64::MAX)
    }

    /// Append `it`. When the vector is full, the part already read is
    /// dropped instead of growing it if that is at least half of it (one
    /// test a push, the one the vector makes anyway).
    #[inline(always)]
    fn push_back(&mut self, it: Span) {
        if self.head == self.buf.len() {
            self.buf.clear();
            self.head = 0;
        } else if self.buf.len() == self.buf.capacity() {
            self.full();
        }
        self.buf.push(it);
    }

    /// `push_back` on a full vector.
    #[cold]
    #[inline(never)]
    fn full(&mut self) {
        if 2 * self.head >= self.buf.len() {
            self.compact();
        }
    }

    /// Put `it` first.
    fn push_front(&mut self, it: Span) {
        if self.head > 0 {
            self.head -= 1;
            self.buf[self.head] = it;
        } else {
            self.buf.insert(0, it);
        }
    }

    /// Append every span to `to`, in order, leaving the lane empty.
    fn move_to(&mut self, to: &mut VecDeque<(u64, u64)>) {
        to.extend(self.buf[self.head..].iter().map(|x| (x.s, x.e)));
        self.buf.clear();
        self.head = 0;
    }

    #[cold]
    #[inline(never)]
    fn compact(&mut self) {
        self.buf.drain(..self.head);
        self.head = 0;
    }
}

/// A firmware pass waiting to be divided among activities (see
/// `Observer::firmware_pass`): CPU `[s, c)`, DRAM `[c, e)`.
#[derive(Clone, Copy, Debug)]
struct WorkSpan {
    s: u64,
    c: u64,
    e: u64,
    cycles: [u64; Activity::COUNT],
    dram: [u64; Activity::COUNT],
}

impl WorkSpan {
    /// What dividing the pass among activities depends on.
    #[inline(always)]
    fn shape(&self) -> WorkShape {
        WorkShape {
            cpu_ns: self.c - self.s,
            dram_ns: self.e - self.c,
            cycles: self.cycles,
            dram: self.dram,
        }
    }
}

/// A firmware pass but for where it lies: its CPU and DRAM lengths and its
/// weights. [`proportional_ends`] divides an interval into the same lengths
/// wherever it starts, so passes of one shape add the same integers.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct WorkShape {
    cpu_ns: u64,
    dram_ns: u64,
    cycles: [u64; Activity::COUNT],
    dram: [u64; Activity::COUNT],
}

impl WorkShape {
    /// A pass of these lengths and weights is of this shape (field by
    /// field: `==` on the arrays calls `bcmp`).
    #[inline(always)]
    fn is_of(
        &self,
        cpu_ns: u64,
        dram_ns: u64,
        cycles: &[u64; Activity::COUNT],
        dram: &[u64; Activity::COUNT],
    ) -> bool {
        let mut d = (self.cpu_ns ^ cpu_ns) | (self.dram_ns ^ dram_ns);
        for k in 0..Activity::COUNT {
            d |= (self.cycles[k] ^ cycles[k]) | (self.dram[k] ^ dram[k]);
        }
        d == 0
    }
}

/// `n` consecutive firmware passes of one shape, counted but not yet added
/// to [`Acc::act`] (see [`PowerObserver::push_work`]).
#[derive(Clone, Copy, Debug, Default)]
struct WorkRun {
    shape: WorkShape,
    n: u64,
}

/// The firmware-pass log ([`WorkLog`]) is trimmed when it reaches this
/// length, or twice what the last trim kept.
const WORK_LOG_MIN: usize = 64;

/// Where a firmware pass counted at once lies, CPU `[s, c)` then DRAM
/// `[c, e)`, and the number of its run of one shape (see [`WorkLog`]).
#[derive(Clone, Copy, Debug)]
struct PassAt {
    s: u64,
    c: u64,
    e: u64,
    run: u64,
}

/// The firmware passes counted at once ([`PowerObserver::push_work`]) that
/// a later cut point may still split or clip, in the order reported: each
/// where it lies and its run's number, the shapes once per run (a logged
/// pass is a third of its [`WorkSpan`]: the log costs a few stores a pass).
#[derive(Clone, Debug)]
struct WorkLog {
    passes: Vec<PassAt>,
    /// The shapes of runs `first_run`, `first_run + 1`, ...: of the passes
    /// logged, and last the current run's (`PowerObserver::work_run`).
    runs: Vec<WorkShape>,
    first_run: u64,
    /// The number of the current run: `first_run + runs.len() - 1`.
    run: u64,
    /// The passes from this index on owe their DRAM span (`[c, e)`, if not
    /// empty): it is committed from here, not queued in the DRAM lane
    /// (see `PowerObserver::pass`).
    dram: usize,
    /// Trim when `passes` is this long.
    cap: usize,
}

impl WorkLog {
    /// An empty log whose current run is of the default (empty) shape.
    fn new() -> WorkLog {
        WorkLog {
            passes: Vec::new(),
            runs: vec![WorkShape::default()],
            first_run: 0,
            run: 0,
            dram: 0,
            cap: WORK_LOG_MIN,
        }
    }

    /// Log a pass of the current run (`owed`: the log owes its DRAM span);
    /// drop those that ended by `lb` if the log is long.
    #[inline(always)]
    fn push(&mut self, s: u64, c: u64, e: u64, lb: u64, owed: bool) {
        if self.passes.len() >= self.cap {
            self.trim(lb);
        }
        // A pass whose span is not owed after all those owed were
        // committed stays out of the owed ones (one whose span is empty may
        // join them: nothing of it is committed).
        if !owed && self.dram == self.passes.len() {
            self.dram += 1;
        }
        self.passes.push(PassAt {
            s,
            c,
            e,
            run: self.run,
        });
    }

    /// A new run, of `shape`, is the current one.
    fn new_run(&mut self, shape: WorkShape) {
        self.runs.push(shape);
        self.run += 1;
    }

    /// Drop the passes that ended by `lb` (no cut point can come before
    /// it) but those that still owe their DRAM span, and the shapes no
    /// pass left belongs to.
    #[cold]
    #[inline(never)]
    fn trim(&mut self, lb: u64) {
        // Passes end in the order reported (each begins when or after the
        // one before ended): those that ended by `lb` come first.
        let owed_from = self.dram;
        let dropped = self.passes[..owed_from]
            .iter()
            .take_while(|p| p.e <= lb)
            .count();
        self.passes.drain(..dropped);
        self.dram -= dropped;
        // Runs are numbered in the order reported, and so kept.
        let keep = self.passes.first().map_or(self.run, |p| p.run);
        self.runs.drain(..(keep - self.first_run) as usize);
        self.first_run = keep;
        self.cap = (2 * self.passes.len()).max(WORK_LOG_MIN);
    }

    /// Every pass logged, whole, in order; the log is left empty, its
    /// current run of `shape`.
    fn take(&mut self, shape: WorkShape) -> Vec<WorkSpan> {
        let out = self
            .passes
            .iter()
            .map(|p| {
                let sh = &self.runs[(p.run - self.first_run) as usize];
                WorkSpan {
                    s: p.s,
                    c: p.c,
                    e: p.e,
                    cycles: sh.cycles,
                    dram: sh.dram,
                }
            })
            .collect();
        debug_assert_eq!(self.dram, self.passes.len(), "DRAM spans still owed");
        self.passes.clear();
        self.runs.clear();
        self.runs.push(shape);
        self.first_run = self.run;
        self.dram = 0;
        self.cap = WORK_LOG_MIN;
        out
    }
}

/// `len` divided in proportion to `w`: the length of each part, as
/// [`proportional_ends`] divides any interval of that length.
#[inline]
fn proportional_parts(len: u64, w: &[u64; Activity::COUNT]) -> [u64; Activity::COUNT] {
    let mut prev = 0;
    proportional_ends(0, len, w).map(|end| {
        let part = end - prev;
        prev = end;
        part
    })
}

impl ActivityAcc {
    /// Count `n` whole passes of shape `sh`.
    fn add_passes(&mut self, sh: &WorkShape, n: u64) {
        let cpu = proportional_parts(sh.cpu_ns, &sh.cycles);
        let dram = proportional_parts(sh.dram_ns, &sh.dram);
        for k in 0..Activity::COUNT {
            self.cycles[k] += n * sh.cycles[k];
            self.accesses[k] += n * sh.dram[k];
            self.cpu_ns[k] += n * cpu[k];
            self.dram_ns[k] += n * dram[k];
        }
    }

    /// Take back one whole pass of shape `sh` counted by `add_passes`.
    fn sub_pass(&mut self, sh: &WorkShape) {
        let cpu = proportional_parts(sh.cpu_ns, &sh.cycles);
        let dram = proportional_parts(sh.dram_ns, &sh.dram);
        for k in 0..Activity::COUNT {
            self.cycles[k] -= sh.cycles[k];
            self.accesses[k] -= sh.dram[k];
            self.cpu_ns[k] -= cpu[k];
            self.dram_ns[k] -= dram[k];
        }
    }
}

/// `[s, e)` divided in proportion to `w`: the end of each part (part `k` is
/// `[ends[k - 1], ends[k])`, the first starts at `s`; the last non-empty one
/// ends at `e`; all are empty when `w` sums to zero). Exact integers: the
/// parts tile the interval.
#[inline]
fn proportional_ends(s: u64, e: u64, w: &[u64; Activity::COUNT]) -> [u64; Activity::COUNT] {
    let mut ends = [s; Activity::COUNT];
    // In u64 while `len x total` fits (every real pass: nanoseconds times
    // cycles): the same quotients as in u128, without its wide division.
    let total = w.iter().try_fold(0u64, |t, &x| t.checked_add(x));
    let len = e - s;
    if let Some(total) = total {
        if total == 0 {
            return ends;
        }
        if len.checked_mul(total).is_some() {
            let mut prefix = 0u64;
            for (end, &x) in ends.iter_mut().zip(w) {
                prefix += x;
                *end = if prefix == total {
                    e
                } else if prefix == 0 {
                    s
                } else {
                    s + len * prefix / total
                };
            }
            return ends;
        }
    }
    proportional_ends_wide(s, e, w)
}

/// [`proportional_ends`] in u128, for weights or lengths whose product
/// does not fit a u64.
#[cold]
#[inline(never)]
fn proportional_ends_wide(s: u64, e: u64, w: &[u64; Activity::COUNT]) -> [u64; Activity::COUNT] {
    let total: u128 = w.iter().map(|&x| x as u128).sum();
    let mut ends = [s; Activity::COUNT];
    if total == 0 {
        return ends;
    }
    let len = (e - s) as u128;
    let mut prefix = 0u128;
    for (end, &x) in ends.iter_mut().zip(w) {
        prefix += x as u128;
        // Most passes have one or two activities: no division for the last.
        *end = if prefix == total {
            e
        } else if prefix == 0 {
            s
        } else {
            s + (len * prefix / total) as u64
        };
    }
    ends
}

/// One die's counts and its last activity, which alone may still straddle a
/// cut point (see the module docs).
#[derive(Clone, Debug, Default)]
pub(crate) struct DieLane {
    last: Item,
    /// Units by rate index and purpose, as [`Acc::up`] (summed into the whole
    /// run's at `finish`, and per chip in the report).
    up: [[u64; 8]; 8],
    /// Die-nanoseconds in the window of array operations by kind (a transfer's
    /// are its units).
    op_ns: [u64; 3],
    /// Per-operation energy of cut pieces (J) by state, as [`Acc::cut_flash_j`].
    pub(crate) cut_j: [f64; 4],
}

impl DieLane {
    /// Units (see [`Acc::up`]) at rate index `r`.
    pub(crate) fn units(&self, r: usize) -> u64 {
        self.up[r].iter().sum()
    }

    /// Die-nanoseconds in the window at rate index `r`.
    pub(crate) fn rate_ns(&self, r: usize) -> u64 {
        if r < 3 {
            self.op_ns[r]
        } else {
            self.units(r)
        }
    }
}

/// The CPU's normal-mode union, finalized in time order.
#[derive(Clone, Debug, Default)]
struct CpuTrack {
    /// Bookings (cpu_busy / cpu_wakeup) not yet merged with io_active,
    /// sorted and disjoint: `before`, then `after`. With `covered_from`,
    /// `after` holds those that start at or after it (a completion drops
    /// its front, no search, no move); without, all are in `before`.
    before: VecDeque<(u64, u64)>,
    after: SpanLane,
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
    /// `power.voltage` (V): what the NAND model's currents are drawn at.
    voltage: f64,
    pub(crate) dies_per_chip: u32,
    pub(crate) ways: u32,
    pub(crate) n_dies: u32,
    pub(crate) n_chans: u32,
    pub(crate) die_lanes: Vec<DieLane>,
    /// Die activities that overlap their die's next one (none with the engine's
    /// one-state dies), kept correctable until they end.
    aside: Vec<(u32, Item)>,
    dram_lane: SpanLane,
    link_lane: SpanLane,
    /// Firmware passes to commit once they end before `now_lb`: those
    /// reported after a cut point or beginning before the window start, and
    /// those a cut point took back from `work_log`.
    work_lane: VecDeque<WorkSpan>,
    /// Firmware passes counted at once (in `work_run`) that a later cut
    /// point may still split or clip: all passes since the last trim (see
    /// [`PowerObserver::push_work`]).
    work_log: WorkLog,
    /// The latest passes counted at once, all of one shape.
    work_run: WorkRun,
    /// Joules per unit by rate index (see [`RATE_SLOT`]): per plane-ns of an
    /// array operation (per plane-op under the per-operation form), per ns of a
    /// transfer by the kind of op served (0 when that op is charged per operation).
    pub(crate) unit_j: [f64; 8],
    op_per_op: [bool; 3],
    /// Series rates, as in `series` (for intervals outside its hot bucket).
    rates: Rates,
    /// `end` or `drain_at` is set: intervals may need clipping or splitting.
    cut: bool,
    /// An interval that starts before this needs the slow path: the window
    /// start (`from`) while no cut point is known, `u64::MAX` after (so the
    /// check costs what testing `cut` did).
    fast_from: u64,
    /// Die activities that began before the window start (the end of the
    /// ramp) and end after it, reported before any cut point: counted at
    /// `finish`, clipped, when every cut point is known (at most about one
    /// per die).
    deferred: Vec<(u32, Item)>,
    cpu: CpuTrack,
    /// A lower bound of the engine clock (the latest completion): DRAM and link
    /// spans that end before it are committed.
    now_lb: u64,
    /// The latest end of a DRAM, link, CPU or io_active interval (die activities:
    /// see `finish`).
    max_end: u64,
    /// The end of the latest firmware pass (its CPU time, or its DRAM
    /// accesses if any): `max_end` of the passes.
    pass_end: u64,
    pub(crate) drain_at: Option<u64>,
    /// Start of the window: 0, or the end of the ramp (`measure_start`).
    pub(crate) from: u64,
    /// `measure_start` was called.
    ramped: bool,
    /// Window end, known at `finish`.
    pub(crate) end: Option<u64>,
    pub(crate) all: Acc,
    pub(crate) drain: Acc,
    pub(crate) series: Series,
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
        let standby = settings.dram_standby_power().map_err(|e| match e {
            ssd_core::config::ConfigError::Invalid { field, reason } => {
                PowerError::Config { field, reason }
            }
            e => PowerError::Config {
                field: "power".into(),
                reason: e.to_string(),
            },
        })?;
        let p = Params::new(&settings.config.power, standby)?;
        let (unit_j, rates) = p.unit_rates();
        let op_per_op = [0, 1, 2].map(|k| p.e_op[k].is_some());
        let mut series = Series::new(sample.0, max_samples);
        series.set_rates(rates);
        if sample.0 == 0 {
            return Err(PowerError::Config {
                field: "power sample interval".into(),
                reason: "must be at least 1 ns".into(),
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
            voltage: settings.config.power.voltage.0,
            p,
            dies_per_chip: g.dies,
            ways: g.ways,
            n_dies,
            n_chans: g.channels,
            die_lanes: vec![DieLane::default(); n_dies as usize],
            aside: Vec::new(),
            dram_lane: SpanLane::default(),
            link_lane: SpanLane::default(),
            work_lane: VecDeque::new(),
            work_log: WorkLog::new(),
            work_run: WorkRun::default(),
            unit_j,
            op_per_op,
            rates,
            cut: false,
            fast_from: 0,
            deferred: Vec::new(),
            cpu: CpuTrack::default(),
            now_lb: 0,
            max_end: 0,
            pass_end: 0,
            drain_at: None,
            from: 0,
            ramped: false,
            end: None,
            all: Acc::default(),
            drain: Acc::default(),
            series,
        })
    }

    /// True once `finish` has been called.
    pub fn is_finished(&self) -> bool {
        self.end.is_some()
    }

    /// The end of the energy window `[start, end)` in nanoseconds (None
    /// before `finish`); see [`window_start_ns`](Self::window_start_ns).
    pub fn window_ns(&self) -> Option<u64> {
        self.end
    }

    /// The start of the energy window in nanoseconds: 0, or the end of the
    /// ramp (`sim.ramp_time`) when the engine reported one (`measure_start`).
    pub fn window_start_ns(&self) -> u64 {
        self.from
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
        let lane = &self.die_lanes[d];
        (0..8).map(|r| lane.rate_ns(r)).sum()
    }

    /// Count `u` units over `ns` at rate index `r`, purpose `pi`, to die `d`
    /// (the whole run's counts; not the time series).
    #[inline(always)]
    fn add_acc(&mut self, d: usize, r: usize, pi: usize, ns: u64, u: u64) {
        debug_assert!(r < 3 || u == ns, "a transfer's units are its ns");
        let lane = &mut self.die_lanes[d];
        lane.up[r][pi] += u;
        if r < 3 {
            lane.op_ns[r] += ns;
        }
    }

    /// Take back what `add_acc` counted.
    fn sub_acc(&mut self, d: usize, r: usize, pi: usize, ns: u64, u: u64) {
        let lane = &mut self.die_lanes[d];
        lane.up[r][pi] -= u;
        if r < 3 {
            lane.op_ns[r] -= ns;
        }
    }

    /// `xfer_then_op` off its fast path, after the die's previous activity:
    /// in one step when a linear op and its transfer begin in the bucket before
    /// the hot one and end in the hot one at the latest (reported late), or
    /// when both begin in the hot bucket (a linear op may run on into the next
    /// one; the transfer draws as the op's kind, as the two calls would count
    /// it); else as `bus_xfer` then `flash_op`.
    #[cold]
    #[inline(never)]
    #[allow(clippy::too_many_arguments)]
    fn xfer_then_op_cold(
        &mut self,
        ch: ChannelId,
        die: DieId,
        xfer: XferKind,
        bytes: u64,
        xfer_start: SimTime,
        kind: OpKind,
        purpose: Purpose,
        planes: u32,
        start: SimTime,
        end: SimTime,
    ) {
        debug_assert!(xfer != XferKind::DataIn || kind == OpKind::Program);
        let d = die.0 as usize;
        let (xs, s, e) = (xfer_start.0, start.0, end.0);
        let lane = &self.die_lanes[d];
        let k = kind as usize;
        let per_op = self.op_per_op[k];
        if xfer != XferKind::DataOut
            && !per_op
            && lane.last.state == DONE
            && lane.last.e <= xs
            && self.series.fast_prev(xs, e)
        {
            let pi = purpose.index() & 7;
            let planes = planes.max(1) as u64;
            let it = Item::new(s, e, planes, k, pi, false, DONE);
            let parts = [(xs, s), (xs, xs), (s, e)];
            let lo = self.series.fast_window().0;
            return self.count_split(d, k, pi, planes, false, (lo, false), parts, it);
        }
        let (lo, hi, next_hi) = self.series.fast_window();
        // In the hot bucket, or a linear op runs on into the next one.
        let window = xs >= lo && (e <= hi || (s < hi && e <= next_hi && !per_op));
        if xfer == XferKind::DataOut || lane.last.state != DONE || lane.last.e > xs || !window {
            self.bus_xfer(ch, die, xfer, purpose, bytes, xfer_start, start);
            self.flash_op(die, kind, purpose, planes, start, end);
            return;
        }
        debug_assert!(xs <= s && s <= e);
        let pi = purpose.index() & 7;
        let planes = planes.max(1) as u64;
        let last = Item::new(s, e, planes, k, pi, per_op, DONE);
        let parts = [(xs, s), (xs, xs), (s, e)];
        self.count_split(d, k, pi, planes, per_op, (hi, true), parts, last);
    }

    /// `read_then_out` off its fast path, after the die's previous activity:
    /// in one step when a linear read begins in the bucket before the hot one
    /// and its data-out ends in the hot one at the latest (reported late), or
    /// when all three parts begin in the hot bucket (the data-out may run on
    /// into the next one; the command and the data-out both draw as transfers
    /// of a read, as the two calls would count them); else as `xfer_then_op`
    /// then `bus_xfer`.
    #[cold]
    #[inline(never)]
    #[allow(clippy::too_many_arguments)]
    fn read_then_out_cold(
        &mut self,
        ch: ChannelId,
        die: DieId,
        bytes: u64,
        xfer_start: SimTime,
        purpose: Purpose,
        planes: u32,
        start: SimTime,
        end: SimTime,
        out_bytes: u64,
        out_end: SimTime,
    ) {
        let d = die.0 as usize;
        let (xs, s, e, oe) = (xfer_start.0, start.0, end.0, out_end.0);
        let lane = &self.die_lanes[d];
        let k = OpKind::Read as usize;
        if !self.op_per_op[k]
            && lane.last.state == DONE
            && lane.last.e <= xs
            && self.series.fast_prev(xs, oe)
        {
            let pi = purpose.index() & 7;
            let planes = planes.max(1) as u64;
            let it = Item::new(e, oe, 1, 3 + k, pi, false, DONE);
            let parts = [(xs, s), (e, oe), (s, e)];
            let lo = self.series.fast_window().0;
            return self.count_split(d, k, pi, planes, false, (lo, false), parts, it);
        }
        let (lo, hi, next_hi) = self.series.fast_window();
        // In the hot bucket, or the data-out runs on into the next one.
        let window = xs >= lo && (oe <= hi || (e < hi && oe <= next_hi));
        if lane.last.state != DONE || lane.last.e > xs || !window {
            let (x, k) = (XferKind::Command, OpKind::Read);
            self.xfer_then_op(
                ch, die, x, bytes, xfer_start, k, purpose, planes, start, end,
            );
            let x = XferKind::DataOut;
            self.bus_xfer(ch, die, x, purpose, out_bytes, end, out_end);
            return;
        }
        debug_assert!(xs <= s && s <= e && e <= oe);
        let k = OpKind::Read as usize;
        let pi = purpose.index() & 7;
        let last = Item::new(e, oe, 1, 3 + k, pi, false, DONE);
        let (planes, per_op) = (planes.max(1) as u64, self.op_per_op[k]);
        let parts = [(xs, s), (e, oe), (s, e)];
        self.count_split(d, k, pi, planes, per_op, (hi, true), parts, last);
    }

    /// Die `d`'s own counts of transfers of `tns` (drawn as those of an op of
    /// kind `k`) and an array operation of kind `k`, `ns` long, of `u` units,
    /// for purpose `pi`; `last` becomes the die's last activity. The series'
    /// counts are the caller's.
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    fn count_lane(&mut self, d: usize, k: usize, pi: usize, tns: u64, ns: u64, u: u64, last: Item) {
        let lane = &mut self.die_lanes[d];
        lane.last = last;
        lane.up[3 + k][pi] += tns;
        lane.up[k][pi] += u;
        lane.op_ns[k] += ns;
    }

    /// Count die `d`'s transfers of `tns` (drawn as those of an op of kind
    /// `k`) and its linear array operation of kind `k` and `ns` on `planes`
    /// planes, for purpose `pi`, all inside the hot bucket; `last` becomes the
    /// die's last activity. What `count_split` adds when nothing runs past the
    /// hot bucket.
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    fn count_hot(
        &mut self,
        d: usize,
        k: usize,
        pi: usize,
        planes: u64,
        tns: u64,
        ns: u64,
        last: Item,
    ) {
        let u = planes * ns;
        self.count_lane(d, k, pi, tns, ns, u, last);
        let t = &mut self.series.cur;
        t.rate_ns[3 + k] += tns;
        t.u[k] += u;
        t.rate_ns[k] += ns;
    }

    /// Count die `d`'s transfers `x1` and `x2` (drawn as those of an op of
    /// kind `k`; `x2` may be empty) and its array operation `op` of kind `k` on
    /// `planes` planes, for purpose `pi`, split exactly at `at` between two
    /// adjacent counted buckets: the hot one and the next (`into_next`: every
    /// part starts in the hot bucket, which ends at `at`; none of a
    /// per-operation op runs past it), or the one before and the hot one
    /// (every part ends in the hot bucket at the latest, which starts at `at`;
    /// a linear op, reported late: about one `xfer_then_op` in eleven at 1 ms
    /// samples). Branch-free, so these cost about what the others do. `last`
    /// becomes the die's last activity. The integers are those that
    /// `bus_xfer`, `flash_op` and `count_last_cold` would add, and, as with
    /// them, the hot bucket stays where it is.
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    fn count_split(
        &mut self,
        d: usize,
        k: usize,
        pi: usize,
        planes: u64,
        per_op: bool,
        (at, into_next): (u64, bool),
        [x1, x2, op]: [(u64, u64); 3],
        last: Item,
    ) {
        // The part of `[a, b)` before `at`.
        let first = |(a, b): (u64, u64)| b.min(at) - a.min(at);
        let tns = (x1.1 - x1.0) + (x2.1 - x2.0);
        let t1 = first(x1) + first(x2);
        let ns = op.1 - op.0;
        let o1 = first(op);
        let u = units_of(per_op, planes, ns);
        let u1 = units_of(per_op, planes, o1);
        self.count_lane(d, k, pi, tns, ns, u, last);
        let sr = &mut self.series;
        let (c1, c2) = if into_next {
            (&mut sr.cur, &mut sr.next)
        } else {
            (&mut sr.prev, &mut sr.cur)
        };
        c1.add(3 + k, t1, t1);
        c1.add(k, o1, u1);
        c2.add(3 + k, tns - t1, tns - t1);
        c2.add(k, ns - o1, u - u1);
    }

    /// Count die `d`'s last activity, a new one that `flash_op` or `bus_xfer`
    /// could not count on their fast path.
    #[cold]
    #[inline(never)]
    fn count_last_cold(&mut self, d: usize) {
        let it = self.die_lanes[d].last;
        if !it.per_op {
            // Split between two adjacent counted buckets: from the hot one into
            // the next (common: a bucket's end), or from the one before the hot
            // one (into it, or not: an array operation reported when it ends).
            let split = match self.series.fast_split(it.s, it.e) {
                Some(n) => Some((n, true)),
                None => self.series.fast_split_prev(it.s, it.e).map(|n| (n, false)),
            };
            if let Some((n, into_next)) = split {
                let (r, ns, planes) = (it.r(), it.e - it.s, it.planes());
                self.add_acc(d, r, it.purpose(), ns, planes * ns);
                let sr = &mut self.series;
                let (first, second) = if into_next {
                    (&mut sr.cur, &mut sr.next)
                } else {
                    (&mut sr.prev, &mut sr.cur)
                };
                first.add(r, n, planes * n);
                second.add(r, ns - n, planes * (ns - n));
                return;
            }
        }
        self.count_last_general(d);
    }

    /// `count_last_cold` in general.
    #[inline(never)]
    fn count_last_general(&mut self, d: usize) {
        let it = self.die_lanes[d].last;
        let state = self.count_new(d, it);
        self.die_lanes[d].last = it.with_state(state);
    }

    /// Count a die activity that may still straddle a cut point; returns its
    /// state ([`DONE`] or [`SERIES_WAIT`]). After a cut point it is split and
    /// clipped at once ([`FINAL`]): the engine reports no later cut before its
    /// end; one that began before the window start (the end of the ramp) is
    /// left for `finish` ([`FINAL`] too).
    #[inline(always)]
    fn count_new(&mut self, d: usize, it: Item) -> u8 {
        if it.s < self.fast_from {
            return self.count_new_cold(d, it);
        }
        let ns = it.e - it.s;
        if ns == 0 {
            return DONE;
        }
        let (r, u) = (it.r(), it.units());
        self.add_acc(d, r, it.purpose(), ns, u);
        if self.series.is_hot(it.s, it.e) {
            self.series.cur.add(r, ns, u);
            return DONE;
        }
        if self.series_count_cold(it, u) {
            DONE
        } else {
            SERIES_WAIT
        }
    }

    /// `count_new` after a cut point (split and clipped at once: the engine
    /// reports no later cut before its end), or of an activity that began
    /// before the window start (the end of the ramp): left for `finish`.
    #[cold]
    #[inline(never)]
    fn count_new_cold(&mut self, d: usize, it: Item) -> u8 {
        if self.cut {
            self.commit_die(d, it);
        } else {
            self.defer(d, it);
        }
        FINAL
    }

    /// Die `d`'s activity `it` began before the window start and no cut point
    /// is known: what of it lies in the window is counted at `finish`, when
    /// the window end and the drain start are known too (a later cut could
    /// not take back a part counted now).
    fn defer(&mut self, d: usize, it: Item) {
        if it.e > self.from && it.e > it.s {
            self.deferred.push((d as u32, it.with_state(DONE)));
        }
    }

    /// `flash_op` or `bus_xfer` off their fast path: die `d`'s previous
    /// activity `prev` was replaced by one starting at `s` (an array operation
    /// of kind `k`, if a flash_op). Settle `prev` if needed, count the new one.
    #[cold]
    #[inline(never)]
    fn die_report_slow(&mut self, d: usize, prev: Item, s: u64, k: Option<usize>) {
        if prev.state != DONE || prev.e > s {
            self.settle(d, prev, s, k);
        }
        let it = self.die_lanes[d].last;
        if it.state != OPEN {
            self.count_last_general(d);
        }
    }

    /// Die `d`'s previous activity `prev` was replaced by one starting at `s`
    /// (of array operation kind `k`, if a flash_op): finish what it left open.
    fn settle(&mut self, d: usize, mut prev: Item, s: u64, k: Option<usize>) {
        if prev.state == OPEN {
            // A command transfer draws as the op it serves, if the die's next
            // report is that op; else as a read's.
            if let Some(k) = k {
                prev = prev.with_rate(3 + k);
            }
            if prev.e <= s {
                return self.commit_die(d, prev.with_state(DONE));
            }
            let state = self.count_new(d, prev);
            prev = prev.with_state(state);
        }
        if prev.e > s {
            // Overlaps the new activity (not with the engine's one-state dies):
            // it may still straddle a later cut point, so it stays correctable.
            self.set_aside(d, prev, s);
        } else if prev.state == SERIES_WAIT {
            self.series_die_whole(prev);
        }
    }

    /// Keep `it` (of die `d`) correctable beside the lanes; the activities kept
    /// there that ended by `now` (a die report's start, the engine clock) are
    /// settled.
    fn set_aside(&mut self, d: usize, it: Item, now: u64) {
        let mut i = 0;
        while i < self.aside.len() {
            let (_, a) = self.aside[i];
            if a.e <= now {
                self.aside.remove(i);
                if a.state == SERIES_WAIT {
                    self.series_die_whole(a);
                }
            } else {
                i += 1;
            }
        }
        self.aside.push((d as u32, it));
    }

    /// A cut point `t` arrived: an activity counted before it that ends after it
    /// is taken back and counted again, split or clipped (exact: integers).
    fn recount(&mut self, d: usize, it: Item, t: u64) -> Item {
        let state = it.state;
        if state == OPEN || state == FINAL || it.e <= t || it.e == it.s {
            return it;
        }
        let ns = it.e - it.s;
        let (r, u) = (it.r(), it.units());
        self.sub_acc(d, r, it.purpose(), ns, u);
        if state == DONE {
            let linear = !it.per_op;
            let planes = it.planes();
            let took = self.series.uncount(it.s, it.e, linear, |c, n| {
                c.sub(r, n, if linear { planes * n } else { u });
            });
            if !took {
                let (flash, bus) = self.die_joules(it, ns, u);
                self.series
                    .add_energy2(FLASH, -flash, BUS, -bus, it.s, it.e);
            }
        }
        let it = it.with_state(FINAL);
        self.commit_die(d, it);
        it
    }

    /// A die activity that can no longer be cut (it ended before the engine
    /// clock, or after the last cut point): counted, split and clipped at once.
    #[inline]
    fn commit_die(&mut self, d: usize, it: Item) {
        if it.s < self.fast_from {
            if self.cut {
                return self.commit_die_cut(d, it);
            }
            return self.defer(d, it);
        }
        let ns = it.e - it.s;
        if ns > 0 {
            self.charge_die(d, it, ns, it.units(), false);
        }
    }

    /// `commit_die` once the window end or the drain start is known.
    #[cold]
    #[inline(never)]
    fn commit_die_cut(&mut self, d: usize, it: Item) {
        let full = it.e - it.s;
        for (s, e, dr) in self.pieces(it.s, it.e) {
            if e > s {
                let ns = e - s;
                let piece = Item { s, e, ..it };
                if !it.per_op {
                    self.charge_die(d, piece, ns, it.planes() * ns, dr);
                } else if ns == full {
                    self.charge_die(d, piece, ns, it.planes(), dr);
                } else {
                    // A part of a per-operation energy: not a whole unit.
                    let j = units_j(self.unit_j[it.r()], it.planes()) * (ns_f64(ns) / ns_f64(full));
                    self.charge_die_part(d, piece, ns, j, dr);
                }
            }
        }
    }

    /// Count `u` units over `[it.s, it.e)` (`ns` > 0 long) to its die.
    fn charge_die(&mut self, d: usize, it: Item, ns: u64, u: u64, dr: bool) {
        let (r, pi) = (it.r(), it.purpose());
        self.add_acc(d, r, pi, ns, u);
        if dr {
            self.drain.up[r][pi] += u;
            self.drain.rate_ns[r] += ns;
        }
        self.series_die(it, ns, u);
    }

    /// The time-series part of a whole activity, counted before but not there.
    fn series_die_whole(&mut self, it: Item) {
        let ns = it.e - it.s;
        if ns > 0 {
            self.series_die(it, ns, it.units());
        }
    }

    /// Count `u` units over `[it.s, it.e)` (`ns` > 0 long) in the time series.
    fn series_die(&mut self, it: Item, ns: u64, u: u64) {
        if self.series.is_hot(it.s, it.e) {
            self.series.cur.add(it.r(), ns, u);
        } else if !self.series_count_cold(it, u) {
            let (flash, bus) = self.die_joules(it, ns, u);
            self.series.add_die(flash, bus, it.s, it.e, ns_f64(ns));
        }
    }

    /// Count a die's interval outside the series' hot bucket, if the hot bucket
    /// can move to it; false if it must be charged in joules instead.
    #[inline(always)]
    fn series_count_cold(&mut self, it: Item, u: u64) -> bool {
        let r = it.r();
        let planes = it.planes();
        if it.per_op {
            self.series
                .count_cold(it.s, it.e, false, |t, ns| t.add(r, ns, u))
        } else {
            self.series
                .count_cold(it.s, it.e, true, |t, ns| t.add(r, ns, planes * ns))
        }
    }

    /// Series joules of `u` units over `ns` of `it` above the die's idle: the
    /// die's, its channel's.
    fn die_joules(&self, it: Item, ns: u64, u: u64) -> (f64, f64) {
        let r = it.r();
        let n = ns_f64(ns);
        let flash = units_j(self.rates.u[r], u) - self.rates.die_idle * n;
        let bus = if RATE_SLOT[r] == XFER {
            self.rates.bus * n
        } else {
            0.0
        };
        (flash, bus)
    }

    /// Charge `j` joules (a part of a per-operation energy) over `[it.s, it.e)`
    /// (`ns` > 0 long) to its die.
    #[cold]
    #[inline(never)]
    fn charge_die_part(&mut self, d: usize, it: Item, ns: u64, j: f64, dr: bool) {
        let r = it.r();
        let slot = RATE_SLOT[r];
        let pi = it.purpose();
        self.all.cut_flash_j[slot] += j;
        self.all.cut_purpose_j[pi] += j;
        if dr {
            self.drain.cut_flash_j[slot] += j;
            self.drain.cut_purpose_j[pi] += j;
            self.drain.rate_ns[r] += ns;
        }
        let lane = &mut self.die_lanes[d];
        // Per-operation energies are array operations'.
        debug_assert!(r < 3);
        lane.op_ns[r.min(2)] += ns;
        lane.cut_j[slot] += j;
        let n = ns_f64(ns);
        let flash = j - self.rates.die_idle * n;
        let bus = if slot == XFER {
            self.rates.bus * n
        } else {
            0.0
        };
        self.series.add_die(flash, bus, it.s, it.e, n);
    }

    /// A cut point is known: intervals may need clipping or splitting from now
    /// on, so none takes the fast path.
    fn set_cut(&mut self) {
        self.cut = true;
        self.fast_from = u64::MAX;
        self.series.close_fast();
    }

    /// The ramp ended at `t`: the window starts there. Everything counted so
    /// far is dropped (the time series starts again at `t`); the die
    /// activities counted that run past `t` are counted again at `finish`,
    /// clipped (`defer`), and from now on every interval that begins before
    /// `t` is clipped at `t` whenever it is reported (`pieces`, `defer`), as
    /// intervals are split at the drain start: a per-operation energy pro
    /// rata. The baselines (idle power) are drawn from `t` (`finish`). The
    /// fast path stays open for intervals that begin at `t` or later.
    #[cold]
    #[inline(never)]
    fn start_window(&mut self, t: u64) {
        self.ramped = true;
        self.from = t;
        if !self.cut {
            self.fast_from = t;
        }
        // Counted activities that run past `t` are counted again, clipped,
        // once the counts are reset; the rest is the ramp's. A command
        // transfer still open was not counted: it is clipped when it is.
        let mut again = std::mem::take(&mut self.deferred);
        let mut mark = |d: usize, it: &mut Item| {
            if it.state != OPEN {
                if it.e > t && it.e > it.s {
                    again.push((d as u32, it.with_state(DONE)));
                }
                *it = it.with_state(FINAL);
            }
        };
        for (d, lane) in self.die_lanes.iter_mut().enumerate() {
            mark(d, &mut lane.last);
            lane.up = Default::default();
            lane.op_ns = Default::default();
            lane.cut_j = Default::default();
        }
        for (d, it) in &mut self.aside {
            mark(*d as usize, it);
        }
        self.all = Acc::default();
        self.drain = Acc::default();
        self.cpu.wakeups = 0;
        self.cpu.wakeup_ns = 0;
        self.series.restart_at(t);
        // Passes counted at once are dropped with the rest; those that run
        // past `t` are counted again, whole if they begin at `t` or later,
        // else clipped (in `work_lane`).
        self.work_run = WorkRun::default();
        // The DRAM spans the log owes wait in the lane, clipped when committed.
        self.log_dram_to_lane();
        for w in self.work_log.take(WorkShape::default()) {
            if w.s >= t {
                self.push_work(w, false);
            } else if w.e > t {
                self.work_lane.push_back(w);
            }
        }
        for (d, it) in again {
            if self.cut {
                self.commit_die(d as usize, it);
            } else {
                self.defer(d as usize, it);
            }
        }
    }

    /// A cut point `t` is known: recount every die activity that may straddle it.
    fn recount_all(&mut self, t: u64) {
        for d in 0..self.die_lanes.len() {
            let it = self.die_lanes[d].last;
            self.die_lanes[d].last = self.recount(d, it, t);
        }
        for i in 0..self.aside.len() {
            let (d, it) = self.aside[i];
            self.aside[i].1 = self.recount(d as usize, it, t);
        }
    }

    /// At `finish`, after the recount: what a die's last activity left open.
    fn settle_final(&mut self, d: usize, it: Item) {
        match it.state {
            // As a read's (no flash_op followed), clipped.
            OPEN => self.commit_die(d, it),
            SERIES_WAIT => self.series_die_whole(it),
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests;
