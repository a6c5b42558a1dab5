//! The observer interface: every component reports what it did and when.
//!
//! Components use busy-until booking (CPU, host link) or event-per-phase timing
//! (dies, channels); either way each activity is reported once, as a whole
//! interval `[start, end)`, possibly before simulated time reaches `start` (CPU,
//! link and data-out bookings) or after it reaches `end` (a die's command or
//! data-in transfer and the array operation after it are reported together
//! when the operation ends, or at a cut point — drain start, end of run — as
//! far as they began by then; the end of a ramp is announced too, with
//! `measure_start`, but activities may straddle it). Each die's activities are reported in time order.
//! Observers therefore integrate intervals, never "current state", which keeps
//! them independent of event order. The power model (crates/power) is such an
//! observer; ssd-core does not depend on it.

use crate::addr::{ChannelId, DieId};
use crate::ftl::{Activity, OpKind, Purpose};
use crate::hw::NandCurrents;
use crate::units::SimTime;
use crate::workload::IoOp;

/// What a channel transfer carries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum XferKind {
    /// Command and address cycles only.
    Command,
    /// Controller -> page register (program data).
    DataIn,
    /// Page register -> controller (read data).
    DataOut,
}

/// What every component reports: one call per activity, with its whole interval `[start, end)`
/// (see the module docs). Every method defaults to doing nothing.
pub trait Observer {
    /// A die ran an array operation (tR / tPROG / tBERS) on `planes` planes.
    #[inline]
    fn flash_op(
        &mut self,
        _die: DieId,
        _kind: OpKind,
        _purpose: Purpose,
        _planes: u32,
        _start: SimTime,
        _end: SimTime,
    ) {
    }
    /// A channel moved `bytes` for `die` (register transfers are reported here).
    #[inline]
    fn bus_xfer(
        &mut self,
        _ch: ChannelId,
        _die: DieId,
        _kind: XferKind,
        _purpose: Purpose,
        _bytes: u64,
        _start: SimTime,
        _end: SimTime,
    ) {
    }
    /// A die's command (or command + data-in) transfer `[xfer_start, start)`
    /// on channel `ch`, followed at once by its array operation `[start, end)`:
    /// the same as `bus_xfer` then `flash_op` (which is what the default does);
    /// an observer may count both at once.
    #[allow(clippy::too_many_arguments)]
    #[inline]
    fn xfer_then_op(
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
        self.bus_xfer(ch, die, xfer, purpose, bytes, xfer_start, start);
        self.flash_op(die, kind, purpose, planes, start, end);
    }
    /// A read as a whole: its command transfer `[xfer_start, start)`, the
    /// array operation `[start, end)` and the data-out transfer
    /// `[end, out_end)` of `out_bytes` that followed at once (the channel was
    /// free): the same as `xfer_then_op` then `bus_xfer` of the data-out
    /// (which is what the default does); an observer may count all three at
    /// once.
    #[allow(clippy::too_many_arguments)]
    #[inline]
    fn read_then_out(
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
        let k = OpKind::Read;
        self.xfer_then_op(
            ch,
            die,
            XferKind::Command,
            bytes,
            xfer_start,
            k,
            purpose,
            planes,
            start,
            end,
        );
        self.bus_xfer(ch, die, XferKind::DataOut, purpose, out_bytes, end, out_end);
    }
    /// The controller CPU executed firmware.
    #[inline]
    fn cpu_busy(&mut self, _start: SimTime, _end: SimTime) {}
    /// The CPU woke from slow mode (charged at normal power, delays the request).
    #[inline]
    fn cpu_wakeup(&mut self, _start: SimTime, _end: SimTime) {}
    /// `count` DRAM accesses took `[start, end)`.
    #[inline]
    fn dram_access(&mut self, _count: u64, _start: SimTime, _end: SimTime) {}
    /// What one firmware pass was for: its CPU time `[start, cpu_end)` (the
    /// `cpu_busy` just reported) took `cycles` by [`Activity`], and the DRAM
    /// accesses after it, `[cpu_end, end)` (the `dram_access` just reported,
    /// if any), were `dram` by activity. An observer that divides the times
    /// among activities does so in proportion to these counts.
    #[inline]
    fn firmware_work(
        &mut self,
        _start: SimTime,
        _cpu_end: SimTime,
        _end: SimTime,
        _cycles: &[u64; Activity::COUNT],
        _dram: &[u64; Activity::COUNT],
    ) {
    }
    /// One firmware pass as a whole: its CPU time `[start, cpu_end)`, the
    /// `dram` DRAM accesses after it, `[cpu_end, end)`, and what it was for:
    /// the same as `cpu_busy`, then `dram_access` if there were accesses,
    /// then `firmware_work` (which is what the default does); an observer
    /// may take all three at once. Passes come in time order (the CPU runs
    /// one at a time): each begins when or after the one before ended.
    #[inline]
    fn firmware_pass(
        &mut self,
        start: SimTime,
        cpu_end: SimTime,
        end: SimTime,
        dram: u64,
        cycles_by: &[u64; Activity::COUNT],
        dram_by: &[u64; Activity::COUNT],
    ) {
        self.cpu_busy(start, cpu_end);
        if dram > 0 {
            self.dram_access(dram, cpu_end, end);
        }
        self.firmware_work(start, cpu_end, end, cycles_by, dram_by);
    }
    /// A firmware pass for a host command just dispatched: the same as
    /// `firmware_pass` (which is what the default does), and the engine
    /// promises that the command is in the SSD until the pass has ended (its
    /// completion waits for the pass, `end` included), so that the whole
    /// pass lies inside the `io_active` period reported later, or past the
    /// end of the run when the run is cut by its time limit. An observer
    /// that keeps the CPU's busy time as the union of `io_active` and
    /// `cpu_busy` may leave such a pass's CPU time out of it.
    #[inline]
    fn command_pass(
        &mut self,
        start: SimTime,
        cpu_end: SimTime,
        end: SimTime,
        dram: u64,
        cycles_by: &[u64; Activity::COUNT],
        dram_by: &[u64; Activity::COUNT],
    ) {
        self.firmware_pass(start, cpu_end, end, dram, cycles_by, dram_by);
    }
    /// The host link transferred `bytes` (commands and data).
    #[inline]
    fn link_xfer(&mut self, _bytes: u64, _start: SimTime, _end: SimTime) {}
    /// At least one request was inside the SSD during `[start, end)` (CPU normal mode).
    #[inline]
    fn io_active(&mut self, _start: SimTime, _end: SimTime) {}
    /// A host request completed.
    #[inline]
    fn request_done(&mut self, _op: IoOp, _bytes: u64, _arrival: SimTime, _done: SimTime) {}
    /// The ramp (`sim.ramp_time`) ended at `t`: the measured phase starts
    /// here, and what happened before it belongs in no result (fio leaves its
    /// ramp out of every statistic). Called once, only with a ramp, before
    /// any report of an activity that starts at or after `t` is needed:
    /// intervals reported earlier may still run past `t`, and intervals
    /// reported later may still begin before it (an observer clips them).
    #[inline]
    fn measure_start(&mut self, _t: SimTime) {}
    /// The workload's last request completed at `t`; what follows until `finish`
    /// is the drain (background GC after the workload). Only called with sim.drain.
    #[inline]
    fn drain_start(&mut self, _t: SimTime) {}
    /// The simulation ended at `end` (called once, last; after the drain if any).
    #[inline]
    fn finish(&mut self, _end: SimTime) {}
    /// The NAND model has its own per-state die currents
    /// ([`crate::hw::Nand::currents`]): an observer that charges die states
    /// draws these from now on. Called once, when the simulation is built,
    /// before any activity is reported; never if the model has none.
    #[inline]
    fn nand_currents(&mut self, _c: &NandCurrents) {}
}

/// Observes nothing (the default; compiles away).
#[derive(Clone, Copy, Debug, Default)]
pub struct NullObserver;
impl Observer for NullObserver {}

/// Sums busy times per die, channel, CPU and link (used by tests and the
/// utilization report).
#[derive(Clone, Debug, Default)]
pub struct BusyObserver {
    /// Busy nanoseconds per die (flat die index).
    pub die_ns: Vec<u64>,
    /// Busy nanoseconds per channel.
    pub channel_ns: Vec<u64>,
    /// Busy nanoseconds of the controller CPU.
    pub cpu_ns: u64,
    /// Busy nanoseconds of the host link.
    pub link_ns: u64,
    /// Nanoseconds during which at least one request was inside the SSD.
    pub active_ns: u64,
}
impl Observer for BusyObserver {
    fn flash_op(&mut self, die: DieId, _k: OpKind, _p: Purpose, _n: u32, s: SimTime, e: SimTime) {
        let d = die.0 as usize;
        if self.die_ns.len() <= d {
            self.die_ns.resize(d + 1, 0);
        }
        self.die_ns[d] += e.0 - s.0;
    }
    fn bus_xfer(
        &mut self,
        ch: ChannelId,
        _d: DieId,
        _k: XferKind,
        _p: Purpose,
        _b: u64,
        s: SimTime,
        e: SimTime,
    ) {
        let c = ch.0 as usize;
        if self.channel_ns.len() <= c {
            self.channel_ns.resize(c + 1, 0);
        }
        self.channel_ns[c] += e.0 - s.0;
    }
    fn cpu_busy(&mut self, s: SimTime, e: SimTime) {
        self.cpu_ns += e.0 - s.0;
    }
    fn link_xfer(&mut self, _b: u64, s: SimTime, e: SimTime) {
        self.link_ns += e.0 - s.0;
    }
    fn io_active(&mut self, s: SimTime, e: SimTime) {
        self.active_ns += e.0 - s.0;
    }
}

/// Forward every call to two observers (inlined: an observer beside another,
/// say a progress meter that only counts completions, costs nothing more).
pub struct Tee<A, B>(pub A, pub B);
impl<A: Observer, B: Observer> Observer for Tee<A, B> {
    #[inline]
    fn flash_op(&mut self, d: DieId, k: OpKind, p: Purpose, n: u32, s: SimTime, e: SimTime) {
        self.0.flash_op(d, k, p, n, s, e);
        self.1.flash_op(d, k, p, n, s, e);
    }
    #[inline]
    fn bus_xfer(
        &mut self,
        c: ChannelId,
        d: DieId,
        k: XferKind,
        p: Purpose,
        b: u64,
        s: SimTime,
        e: SimTime,
    ) {
        self.0.bus_xfer(c, d, k, p, b, s, e);
        self.1.bus_xfer(c, d, k, p, b, s, e);
    }
    #[inline]
    fn xfer_then_op(
        &mut self,
        c: ChannelId,
        d: DieId,
        x: XferKind,
        b: u64,
        xs: SimTime,
        k: OpKind,
        p: Purpose,
        n: u32,
        s: SimTime,
        e: SimTime,
    ) {
        self.0.xfer_then_op(c, d, x, b, xs, k, p, n, s, e);
        self.1.xfer_then_op(c, d, x, b, xs, k, p, n, s, e);
    }
    #[inline]
    fn read_then_out(
        &mut self,
        c: ChannelId,
        d: DieId,
        b: u64,
        xs: SimTime,
        p: Purpose,
        n: u32,
        s: SimTime,
        e: SimTime,
        ob: u64,
        oe: SimTime,
    ) {
        self.0.read_then_out(c, d, b, xs, p, n, s, e, ob, oe);
        self.1.read_then_out(c, d, b, xs, p, n, s, e, ob, oe);
    }
    #[inline]
    fn cpu_busy(&mut self, s: SimTime, e: SimTime) {
        self.0.cpu_busy(s, e);
        self.1.cpu_busy(s, e);
    }
    #[inline]
    fn cpu_wakeup(&mut self, s: SimTime, e: SimTime) {
        self.0.cpu_wakeup(s, e);
        self.1.cpu_wakeup(s, e);
    }
    #[inline]
    fn dram_access(&mut self, n: u64, s: SimTime, e: SimTime) {
        self.0.dram_access(n, s, e);
        self.1.dram_access(n, s, e);
    }
    #[inline]
    fn firmware_work(
        &mut self,
        s: SimTime,
        c: SimTime,
        e: SimTime,
        cycles: &[u64; Activity::COUNT],
        dram: &[u64; Activity::COUNT],
    ) {
        self.0.firmware_work(s, c, e, cycles, dram);
        self.1.firmware_work(s, c, e, cycles, dram);
    }
    #[inline(always)]
    fn firmware_pass(
        &mut self,
        s: SimTime,
        c: SimTime,
        e: SimTime,
        n: u64,
        cycles: &[u64; Activity::COUNT],
        dram: &[u64; Activity::COUNT],
    ) {
        self.0.firmware_pass(s, c, e, n, cycles, dram);
        self.1.firmware_pass(s, c, e, n, cycles, dram);
    }
    #[inline(always)]
    fn command_pass(
        &mut self,
        s: SimTime,
        c: SimTime,
        e: SimTime,
        n: u64,
        cycles: &[u64; Activity::COUNT],
        dram: &[u64; Activity::COUNT],
    ) {
        self.0.command_pass(s, c, e, n, cycles, dram);
        self.1.command_pass(s, c, e, n, cycles, dram);
    }
    #[inline(always)]
    fn link_xfer(&mut self, b: u64, s: SimTime, e: SimTime) {
        self.0.link_xfer(b, s, e);
        self.1.link_xfer(b, s, e);
    }
    #[inline]
    fn io_active(&mut self, s: SimTime, e: SimTime) {
        self.0.io_active(s, e);
        self.1.io_active(s, e);
    }
    #[inline]
    fn request_done(&mut self, op: IoOp, b: u64, a: SimTime, d: SimTime) {
        self.0.request_done(op, b, a, d);
        self.1.request_done(op, b, a, d);
    }
    #[inline]
    fn measure_start(&mut self, t: SimTime) {
        self.0.measure_start(t);
        self.1.measure_start(t);
    }
    #[inline]
    fn drain_start(&mut self, t: SimTime) {
        self.0.drain_start(t);
        self.1.drain_start(t);
    }
    #[inline]
    fn finish(&mut self, e: SimTime) {
        self.0.finish(e);
        self.1.finish(e);
    }
    #[inline]
    fn nand_currents(&mut self, c: &NandCurrents) {
        self.0.nand_currents(c);
        self.1.nand_currents(c);
    }
}
