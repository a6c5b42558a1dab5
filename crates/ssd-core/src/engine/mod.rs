//! The discrete-event engine: one simulation, one thread, one event queue.
//!
//! # Event queue contract
//! Events are ordered by `(time, insertion sequence)`: two events at the same
//! nanosecond run in the order they were scheduled. Nothing else (no hash order,
//! no wall clock) decides anything, so a run is a pure function of
//! (config, workload, seed).
//!
//! # Timing styles
//! * Dies and channels: a die's batch goes command/data-in on the channel ->
//!   array operation (tR/tPROG/tBERS) -> data-out on the channel. The command
//!   and data-in transfers are booked busy-until on the channel when it is
//!   granted, and the array operation's end is scheduled at once (one event,
//!   `DieDone`); a channel that frees while dies wait for it gets a `ChanFree`
//!   event. The data-out transfer ends with `ChanDone`, which completes the batch.
//! * Controller CPU and host link: **busy-until booking**. Work is booked at
//!   `max(now, free_at)` and the resulting completion is sent through the queue.
//!
//! # The life of a request
//! workload source -> I/O scheduler -> (device queue slot) -> host link
//! (command, write data) -> CPU (command + FTL work, DRAM accesses) -> FTL plan
//! (functional state changes happen here, at once) -> per-die queues -> channel
//! and die phases -> last gating operation done -> host link (read data) ->
//! completion of every host request merged into the command.

use crate::addr::{ChannelId, DieId, FastDiv, Lpn};
use crate::config::{FlushPolicy, Precondition, Settings};
use crate::ftl::{FlashArray, Ftl, FtlCtx, FtlStats, FtlWork, OpKind, Purpose};
use crate::hw::{
    ArrayOp, CacheOps, Channel, Controller, Dram, Hardware, HostLink, Nand, NandCtx, Parts, StdHw,
};
use crate::observer::{Observer, XferKind};
use crate::rng::{SimRng, SimRngExt};
use crate::sched::{IoScheduler, SchedReq};
use crate::stats::*;
use crate::units::{Dur, SimTime};
use crate::workload::{HostEvent, HostRequest, IoOp, RequestSource, SourceError, Timing, SECTOR};
use rand::Rng;
use std::collections::VecDeque;
use std::time::Instant;

mod cache;
mod channel;
mod consts;
mod controller;
mod die;
mod flash;
mod host;
mod plan;
mod precondition;
mod queue;
mod report;
mod state;
mod suspend;

use cache::SLOT;
use channel::{bus_cmd, bus_data};
use consts::Consts;
use controller::*;
use flash::*;
use host::*;
pub use precondition::{PreconditionOutcome, PreconditionProgress};
use queue::*;
use report::*;
pub use state::{DriveState, STATE_FORMAT};

const NONE: u32 = u32::MAX;
const MAX_PLANES: usize = 16;
/// Requests a submitter's plug holds before it is flushed (Linux's
/// `BLK_MAX_REQUEST_COUNT`).
const PLUG_MAX: usize = 16;

/// Bucket of the elevator queue-length distribution: 0, 1, 2-3, 4-7, ...,
/// 256 and more.
#[inline]
fn qd_bucket(len: u64) -> usize {
    if len == 0 {
        0
    } else {
        (64 - len.leading_zeros() as usize).min(QD_BUCKETS - 1)
    }
}

/// Errors a run can end with (bad input discovered while running).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum SimError {
    /// Its message already names the file and line (or option), so it is not
    /// also a `source()`: an error chain would print it twice.
    #[error("workload: {0}")]
    Source(SourceError),
    /// A request reaches beyond the drive's logical capacity.
    #[error("request at sector {lba} (+{sectors}) is beyond the logical capacity of {capacity_sectors} sectors")]
    OutOfRange {
        /// The request's first sector.
        lba: u64,
        /// Its length in sectors.
        sectors: u32,
        /// The drive's logical capacity in sectors.
        capacity_sectors: u64,
    },
    /// A configuration the run cannot honour, found while running.
    #[error("configuration: {0}")]
    Config(String),
    /// A request arrives after [`SimTime::MAX_ARRIVAL`].
    #[error(
        "a request arrives at {:.3e} s, beyond the simulated time range (2^62 ns, about 146 years)",
        arrival.0 as f64 / 1e9
    )]
    TimeRange {
        /// The request's arrival time.
        arrival: SimTime,
    },
}

impl From<SourceError> for SimError {
    fn from(e: SourceError) -> Self {
        SimError::Source(e)
    }
}

// ------------------------------------------------------------------ events

/// One simulation: an FTL, a request source, a host scheduler and an observer
/// over the hardware described by `Settings`. Generic, so the hot loop is
/// statically dispatched; applications close the choices with enums.
pub struct Simulation<F: Ftl, S: RequestSource, Q: IoScheduler, O: Observer, H: Hardware = StdHw> {
    /// The validated settings of the drive.
    pub settings: Settings,
    /// The FTL.
    pub ftl: F,
    /// The workload source.
    pub src: S,
    /// The host I/O scheduler.
    pub sched: Q,
    /// The observer every hardware activity is reported to (the power model, ...).
    pub obs: O,
    /// The flash array's rules and erase counts.
    pub flash: FlashArray,
    q: EventQueue,
    now: SimTime,
    /// The constants the settings and the hardware models fix (`consts.rs`).
    consts: Consts,
    /// The hardware models (`crate::hw`).
    hw: Parts<H>,
    /// The host front end: the block layer's requests and the device queue
    /// (`host.rs`).
    front: Front,
    /// The flash scheduler: jobs, transactions, per-block execution
    /// order, dies and channels (`flash.rs`).
    fl: FlashSched,
    cx: FtlCtx,
    /// The controller: the host link's and the CPU's bookings, the DRAM
    /// write buffer, idle-time work (`controller.rs`).
    ctl: CtrlState,
    // stats
    /// Counters of the measured phase.
    pub counters: Counters,
    /// Request latencies of the measured phase.
    pub lat: Latencies,
    /// The rest of the measured phase's statistics, and where the phase
    /// begins and ends (`report.rs`).
    stats: PhaseStats,
}

impl<F: Ftl, S: RequestSource, Q: IoScheduler, O: Observer> Simulation<F, S, Q, O, StdHw> {
    /// A simulation on the built-in hardware models the settings name.
    pub fn new(settings: Settings, ftl: F, src: S, sched: Q, obs: O) -> Self {
        let hw = Parts::new(settings.hw())
            .expect("validated settings describe built-in hardware models");
        Self::with_hardware(settings, hw, ftl, src, sched, obs)
    }
}

impl<F: Ftl, S: RequestSource, Q: IoScheduler, O: Observer, H: Hardware> Simulation<F, S, Q, O, H> {
    /// A simulation on hardware models of the caller's choice (see
    /// [`crate::hw`]); `settings` still give the geometry, the bus, the host
    /// link and everything the models do not.
    pub fn with_hardware(
        mut settings: Settings,
        hw: Parts<H>,
        ftl: F,
        src: S,
        sched: Q,
        mut obs: O,
    ) -> Self {
        if let Some(c) = hw.nand.currents() {
            obs.nand_currents(&c);
        }
        let cache = hw.nand.cache_ops();
        assert!(
            !(cache.any() && hw.nand.can_suspend()),
            "NAND model {}: cache commands with program/erase suspension are not modelled",
            hw.nand.name()
        );
        // `dram.capacity = "fit"` follows this FTL's tables.
        settings.fit_dram(ftl.mapping_table_bytes());
        let g = settings.geometry;
        let c = &settings.config;
        let timing = src.timing();
        let consts = Consts::new(&settings, &hw);
        Simulation {
            fl: FlashSched::new(g, &consts),
            consts,
            hw,
            flash: FlashArray::new(g),
            q: EventQueue::default(),
            now: SimTime::ZERO,
            front: Front::new(&settings, timing),
            // The measured phase's stream (`measured_rng`); preconditioning
            // draws from its own.
            cx: FtlCtx::new(
                SimRng::from_seed_label(c.sim.seed, "ftl"),
                g.total_dies() as usize,
            ),
            ctl: CtrlState::new(&settings),
            counters: Counters::default(),
            lat: Latencies::default(),
            stats: PhaseStats::new(&settings),
            settings,
            ftl,
            src,
            sched,
            obs,
        }
    }

    /// Book every read the general way (a `DieDone` at the end of its array
    /// operation, then its data-out), also where a die has its channel to
    /// itself and the engine otherwise books the whole read at once. Only for
    /// tests that check the two give the same run.
    #[doc(hidden)]
    pub fn book_reads_in_two_steps(&mut self) {
        self.consts.exclusive = false;
    }

    /// Current simulated time.
    pub fn now(&self) -> SimTime {
        self.now
    }

    /// Replace the workload and reset the statistics, keeping the drive's state
    /// (FTL, flash, wear) and the clock: the next `run` measures a new phase on
    /// the same drive. Used by benchmarks and multi-phase experiments. Host
    /// requests a time limit left in flight finish in the next phase (and count
    /// there); a closed loop counts them against its depth.
    pub fn restart(&mut self, src: S) {
        self.front.restart(src.timing(), self.settings.block.plug);
        self.src = src;
        self.reset_stats(self.now);
        self.stats.draining = false;
        self.stats.busy_at_drain = None;
    }

    /// Start the statistics of the measured phase again at `at` (now, or
    /// the end of the ramp when the first event after it comes: nothing
    /// happened in between).
    fn reset_stats(&mut self, at: SimTime) {
        self.counters = Counters::default();
        self.stats.restart(at);
        self.hw.nand.restart_stats();
        self.lat = Latencies::default();
        self.front.qd_since = at;
        self.front.host_end = at;
        self.fl.restart_busy(self.now);
    }

    /// The ramp (`sim.ramp_time`) is over: what happened before now is in no
    /// statistic (the requests in flight count when they complete), and the
    /// source's own statistics and request count start again.
    #[cold]
    fn end_ramp(&mut self) {
        let at = self.stats.ramp_end;
        self.stats.ramp_end = SimTime(u64::MAX);
        self.reset_stats(at);
        self.obs.measure_start(at);
        self.stats.ftl_before = self.ftl.stats();
        self.ftl.measure_start();
        self.src.ramp_over(at, self.front.handed());
    }

    /// Whether a ramp (`sim.ramp_time`) was configured and the run has not
    /// reached its end: the statistics then still hold the ramp.
    pub fn in_ramp(&self) -> bool {
        self.stats.ramp_end != SimTime(u64::MAX)
    }

    // -------------------------------------------------------- preconditioning

    /// Tell the source the drive's zones as Report Zones gives them now
    /// ([`RequestSource::zones`]); its refusal ends the run.
    #[cold]
    fn tell_zones(&mut self) {
        let report = self.ftl.zone_pages().map(|zp| {
            let s = self.settings.geometry.page_size as u64 / SECTOR;
            let z = &self.settings.config.ftl.zns;
            crate::workload::ZoneReport {
                zone_sectors: zp * s,
                zones: self
                    .ftl
                    .report_zones()
                    .iter()
                    .map(|d| crate::workload::HostZone {
                        start: d.start * s,
                        capacity: d.capacity * s,
                        wp: d.wp * s,
                        state: d.state,
                    })
                    .collect(),
                max_open_zones: z.max_open_zones,
                max_active_zones: z.max_active_zones,
            }
        });
        if let Err(e) = self.src.zones(report.as_ref()) {
            self.front.fail(e.into());
        }
    }

    /// Run the measured phase (after `precondition`) and build the report.
    pub fn run(&mut self) -> Result<Report, SimError> {
        let started = Instant::now();
        self.stats.ftl_before = self.ftl.stats();
        if !self.front.zones_told {
            self.front.zones_told = true;
            self.tell_zones();
        }
        self.ftl.measure_start();
        let limit = self.settings.config.sim.time_limit.map(|d| SimTime(d.0));
        match self.front.timing {
            Timing::ClosedLoop { depth } => {
                while self.front.outstanding < depth && self.issue_next_closed() {}
                self.try_dispatch();
            }
            Timing::OpenLoop => self.pull_open(),
            Timing::Reactive => self.pump_host(),
        }
        let mut events = 0u64;
        loop {
            // An event past the time limit stays queued: a `restart`ed run
            // (with a later limit) goes on from it.
            if let Some(l) = limit {
                if self.q.peek_time().is_some_and(|t| t > l) {
                    self.now = l;
                    break;
                }
            }
            let Some((t, ev)) = self.q.pop() else {
                break;
            };
            if self.front.error.is_some() {
                break;
            }
            if ev == Ev::HostWake && !self.front.wake_due(t) {
                // A timer of a host that has finished, or one re-booked
                // earlier: not an instant of the run.
                continue;
            }
            if ev == Ev::IdleCheck && self.ctl.idle_check != Some(t) {
                // An idle period that ended before its wait did.
                continue;
            }
            debug_assert!(t >= self.now, "time went backwards");
            self.now = t;
            if t >= self.stats.ramp_end {
                self.end_ramp();
            }
            events += 1;
            match ev {
                Ev::Arrival => self.on_arrival(),
                Ev::CmdReady(c) => self.on_cmd_ready(c),
                Ev::ChanDone(ch) => self.on_chan_done(ch),
                Ev::ChanFree(ch) => self.on_chan_free(ch),
                Ev::DieDone(d) => self.on_die_done(d),
                Ev::CmdComplete(c) => self.complete_cmd(c),
                Ev::SchedWake => {
                    self.front.wake_pending = None;
                    self.try_dispatch();
                }
                Ev::PlugFlush => self.on_plug_flush(),
                Ev::HostWake => {
                    self.front.host_wake = None;
                    self.pump_host();
                }
                Ev::IdleCheck => {
                    self.ctl.idle_check = None;
                    self.maybe_background();
                }
            }
            if self.front.all_done() {
                if !self.settings.config.sim.drain {
                    break;
                }
                if !self.stats.draining {
                    self.stats.draining = true;
                    self.stats.busy_at_drain = Some(self.busy_until_cut(self.stats.last_done));
                    self.report_started_ops();
                    self.obs.drain_start(self.stats.last_done);
                    // Work that waits for the end of the workload
                    // (ftl.drain_merge) may now run in idle time.
                    self.cx.draining = true;
                    if self.settings.config.ftl.drain_merge() {
                        self.ctl.bg_enabled = true;
                    }
                    self.maybe_background();
                }
            }
        }
        if let Some(e) = self.front.error.take() {
            return Err(e);
        }
        debug_assert!(
            self.fl.txns.live > 0 || self.cx.die_load.iter().all(|&l| l == 0),
            "no transaction is alive but die loads are {:?}",
            self.cx.die_load
        );
        let host_stuck = self.front.timing == Timing::Reactive && !self.front.source_done;
        if limit.is_none()
            && (self.front.hosts.live > 0 || self.front.pending.is_some() || host_stuck)
        {
            panic!(
                "engine stalled at {} ns with {} host requests outstanding, {} commands in the device, {} transactions alive (a scheduling deadlock: please report with this configuration)",
                self.now.0, self.front.hosts.live, self.front.cmds.live, self.fl.txns.live
            );
        }
        // A reactive source's application still running at the limit: the
        // measured phase is the whole time, whether or not the device was
        // busy at the cut.
        let app_cut = self.front.timing == Timing::Reactive && !self.front.source_done;
        let end = if limit.is_some() && (self.front.hosts.live > 0 || app_cut) {
            // Cut by the time limit: say how many requests it left unfinished
            // (they are in no statistic).
            if self.front.hosts.live > 0 {
                *self.stats.note("time_limit_requests_unfinished") += self.front.hosts.live as u64;
            }
            // Utilization covers the measured phase: what is booked past the
            // cut (a host-link transfer, CPU work, a die's running operation)
            // counts up to the cut only.
            if self.stats.busy_at_drain.is_none() {
                self.stats.busy_at_drain = Some(self.busy_until_cut(self.now));
            }
            self.now
        } else {
            self.stats.last_done.max(self.front.host_end)
        };
        if self.front.dev_inflight > 0 {
            self.obs
                .io_active(self.front.active_since, end.max(self.front.active_since));
        }
        // With sim.drain the simulation went on until in-flight and idle-time GC
        // finished; the measured phase still ends at the last completion.
        let sim_end = if self.stats.draining {
            self.now.max(end)
        } else {
            end
        };
        self.stats.drain_ns = sim_end.0 - end.0;
        self.report_started_ops();
        self.obs.finish(sim_end);
        self.counters.events = events;
        let wall = started.elapsed().as_secs_f64();
        Ok(self.report(end, wall))
    }
}
