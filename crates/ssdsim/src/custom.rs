//! Parts of one's own: an [`Ssd`]'s drive and options with an FTL, a
//! request source, a host I/O scheduler or a NAND model the caller brings,
//! each a value of a type that implements the part's trait ([`Ftl`],
//! [`RequestSource`], [`IoScheduler`], [`Nand`]), plugged in without editing
//! the workspace.
//!
//! [`Ssd::custom`] starts from the parts the configuration names (the
//! built-in FTL, workload source, scheduler and hardware models); each
//! setter replaces one and changes the type it is built with, so the
//! simulation is compiled for the caller's parts as for the built-in ones
//! (no virtual call on the hot path). A part is made from the validated
//! drive, as the built-in ones are: an FTL from its `[ftl]` section and the
//! drive's shape ([`DriveShape`]: the geometry and the logical pages), a
//! source or a scheduler from the whole [`Settings`].
//!
//! ```
//! use ssdsim::custom::Settings;
//! use ssdsim::Ssd;
//! use ssd_core::sched::Noop;
//!
//! let ssd = Ssd::builder()
//!     .sched("deadline")
//!     .set("rw", "randwrite")
//!     .number_ios(2_000)
//!     .build()?;
//! // The configured FTL and source; in place of deadline, a scheduler of
//! // one's own (here the built-in noop, without merging, 128 KiB at most).
//! let out = ssd
//!     .custom()
//!     .scheduler(|_: &Settings| Noop::new(256, false))
//!     .run()?;
//! assert_eq!(out.report.host.requests, 2_000);
//! assert_eq!(out.report.sched.kind, "noop");
//! # Ok::<(), ssdsim::RunError>(())
//! ```
//!
//! A run of custom parts preconditions as configured, simulates, checks
//! what [`run_config`](crate::run_config) checks after a run (the ramp is
//! over, something completed, the FTL's invariants with
//! [`RunOptions::check_invariants`]) and reports with the power model when
//! [`RunOptions::power`] is on, its time series and plots as a configured
//! run writes them. What needs the built-in parts is refused before the
//! run: a saved or shared drive state (its format is the built-in FTLs'),
//! a recorded trace, `[[flow]]`s run alone for slowdowns, and progress bars.

use crate::{RunError, RunLatencies, RunOptions, RunOutput, Ssd};
use ssd_core::engine::Simulation;
use ssd_core::hw::{Hardware, Parts, StdHw, WithNand};
use ssd_core::observer::{NullObserver, Observer};
use ssd_core::stats::Report;

pub use ssd_core::addr::DriveShape;
pub use ssd_core::config::Settings;
pub use ssd_core::ftl::{Ftl, FtlConfig, FtlKind, FtlSection};
pub use ssd_core::hw::Nand;
pub use ssd_core::sched::IoScheduler;
pub use ssd_core::workload::RequestSource;

/// Makes one part from the validated drive.
type Maker<T> = Box<dyn FnOnce(&Settings) -> Result<T, RunError>>;

/// An [`Ssd`] with parts of the caller's choice: made by [`Ssd::custom`],
/// run by [`Custom::run`]. `F` is the FTL, `S` the request source, `Q` the
/// host I/O scheduler and `H` the hardware bundle
/// ([`StdHw`], or [`WithNand`] with a NAND model of one's own).
#[must_use = "a Custom does nothing until `run()`"]
pub struct Custom<F, S, Q, H: Hardware = StdHw> {
    ssd: Ssd,
    ftl: Maker<F>,
    src: Maker<S>,
    sched: Maker<Q>,
    hw: Maker<Parts<H>>,
}

/// The parts the configuration names: what [`Ssd::custom`] starts from.
pub type Configured = Custom<ftl::AnyFtl, crate::AnySource, ssdsim_host::scheds::AnySched, StdHw>;

impl Ssd {
    /// This drive and its options with the parts its configuration names,
    /// any of which [`Custom`]'s setters replace with the caller's own.
    pub fn custom(&self) -> Configured {
        let cfg = self.config().clone();
        let queues = cfg.clone();
        Custom {
            ssd: self.clone(),
            ftl: Box::new(|s: &Settings| Ok(ftl::build(&s.config.ftl, &s.shape())?)),
            src: Box::new(move |s: &Settings| crate::build_source(&cfg, s)),
            sched: Box::new(move |s: &Settings| {
                Ok(ssdsim_host::scheds::build_host_queues(
                    &queues.sched,
                    &queues.host,
                    &queues.flows,
                    s.logical_bytes() / 512,
                    s.zone_layout().is_some(),
                )?)
            }),
            hw: Box::new(|s: &Settings| Ok(Parts::new(s.hw())?)),
        }
    }
}

impl<F: Ftl, S: RequestSource, Q: IoScheduler, H: Hardware> Custom<F, S, Q, H> {
    /// An FTL of one's own, made from the drive's `[ftl]` section and shape
    /// (the built-in FTLs are made from the same two).
    pub fn ftl<G: Ftl>(
        self,
        make: impl FnOnce(&FtlConfig, &DriveShape) -> G + 'static,
    ) -> Custom<G, S, Q, H> {
        Custom {
            ssd: self.ssd,
            ftl: Box::new(move |s: &Settings| Ok(make(&s.config.ftl, &s.shape()))),
            src: self.src,
            sched: self.sched,
            hw: self.hw,
        }
    }

    /// A request source of one's own in place of the configured workload
    /// (a generator, a reader of one's own trace format, ...).
    pub fn source<T: RequestSource>(
        self,
        make: impl FnOnce(&Settings) -> T + 'static,
    ) -> Custom<F, T, Q, H> {
        Custom {
            ssd: self.ssd,
            ftl: self.ftl,
            src: Box::new(move |s: &Settings| Ok(make(s))),
            sched: self.sched,
            hw: self.hw,
        }
    }

    /// A host I/O scheduler of one's own in place of `[sched]`'s.
    pub fn scheduler<R: IoScheduler>(
        self,
        make: impl FnOnce(&Settings) -> R + 'static,
    ) -> Custom<F, S, R, H> {
        Custom {
            ssd: self.ssd,
            ftl: self.ftl,
            src: self.src,
            sched: Box::new(move |s: &Settings| Ok(make(s))),
            hw: self.hw,
        }
    }

    /// A NAND model of one's own in place of `[nand]`'s timing model; the
    /// other hardware models stay the built-in ones, and the `[nand]`
    /// section still gives the geometry and the bus.
    pub fn nand<N: Nand + 'static>(self, model: N) -> Custom<F, S, Q, WithNand<N>> {
        Custom {
            ssd: self.ssd,
            ftl: self.ftl,
            src: self.src,
            sched: self.sched,
            hw: Box::new(move |s: &Settings| Ok(Parts::with_nand(s.hw(), model))),
        }
    }

    /// Precondition as configured, simulate and report.
    pub fn run(self) -> Result<RunOutput, RunError> {
        let opts = self.ssd.options().clone();
        refuse_builtin_only(&self.ssd, &opts)?;
        let settings = self.ssd.config().validate()?;
        if opts.power {
            let sample = opts.power_sample;
            let obs = move |s: &Settings| {
                power::PowerObserver::new(s, sample).map_err(|e| RunError::Input(e.to_string()))
            };
            let (mut sim, report) = self.simulate(settings, obs, &opts)?;
            let (report, power_series) = crate::power_outputs(&mut sim.obs, report, &opts)?;
            Ok(output(&sim, report, power_series))
        } else {
            let (sim, report) = self.simulate(settings, |_: &Settings| Ok(NullObserver), &opts)?;
            Ok(output(&sim, report, Vec::new()))
        }
    }

    /// Build the simulation with observer `obs`, precondition it and run
    /// the measured phase.
    #[allow(clippy::type_complexity)]
    fn simulate<O: Observer>(
        self,
        mut settings: Settings,
        obs: impl FnOnce(&Settings) -> Result<O, RunError>,
        opts: &RunOptions,
    ) -> Result<(Simulation<F, S, Q, O, H>, Report), RunError> {
        let ftl = (self.ftl)(&settings)?;
        settings.fit_dram(ftl.mapping_table_bytes());
        let hw = (self.hw)(&settings)?;
        if hw.nand.cache_ops().any() && hw.nand.can_suspend() {
            return Err(RunError::Input(format!(
                "NAND model {}: cache commands with program/erase suspension are not modelled",
                hw.nand.name()
            )));
        }
        let obs = obs(&settings)?;
        let src = (self.src)(&settings)?;
        let sched = (self.sched)(&settings)?;
        let mut sim = Simulation::with_hardware(settings, hw, ftl, src, sched, obs);
        sim.precondition();
        let report = sim.run()?;
        let report = crate::check_measured(
            self.ssd.config(),
            report,
            sim.in_ramp(),
            sim.now(),
            || sim.ftl.check_invariants(),
            opts,
        )?;
        Ok((sim, report))
    }
}

/// The options and settings a run of custom parts cannot honour, refused
/// before it starts.
fn refuse_builtin_only(ssd: &Ssd, opts: &RunOptions) -> Result<(), RunError> {
    let ds = &opts.drive_state;
    let what = if ds.load.is_some() || ds.save.is_some() || ds.shared.is_some() {
        Some("a saved or shared drive state (RunOptions::drive_state)")
    } else if opts.record_trace.is_some() {
        Some("a recorded trace (RunOptions::record_trace)")
    } else if opts.progress != crate::Progress::Off {
        Some("progress bars (RunOptions::progress)")
    } else if ssd.config().flows.len() >= 2 && ssd.config().sim.alone_runs {
        Some("flows run alone for their slowdowns (sim.alone_runs)")
    } else {
        None
    };
    match what {
        Some(w) => Err(RunError::Input(format!(
            "{w} needs the built-in parts: not with Ssd::custom()"
        ))),
        None => Ok(()),
    }
}

/// The output of a finished simulation.
fn output<F: Ftl, S: RequestSource, Q: IoScheduler, O: Observer, H: Hardware>(
    sim: &Simulation<F, S, Q, O, H>,
    report: Report,
    power_series: Vec<power::Sample>,
) -> RunOutput {
    RunOutput {
        report,
        cdf: sim.lat.all().cdf(100),
        latency: RunLatencies::of_requests(&sim.lat),
        power_series,
    }
}
