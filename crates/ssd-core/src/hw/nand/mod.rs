//! The NAND array model: how long an array operation keeps a die busy.
//!
//! # Contract
//! The engine calls [`Nand::array_time`] once per batch (one operation on one
//! page offset of one or more planes of a die), when the batch's command and
//! data-in transfer end and its array phase begins; the die is busy for the
//! returned time, and the observer is told of the operation over exactly that
//! interval (so a state-current power model charges it in full). A model that
//! wants to know which blocks a program batch wrote, or which block an erase
//! cleared, says so with [`Nand::tracks_blocks`] and gets
//! [`Nand::programmed`] / [`Nand::erased`] for every block of the batch
//! first.
//!
//! A part's cache register ([`Nand::cache_ops`]: ONFI cache read and cache
//! program) lets the engine overlap a die's next operation with the
//! transfer of the one before ([`CacheConfig`]), and a model that knows its
//! part's supply currents gives them with [`Nand::currents`] (the power
//! model then draws them instead of `[power]`'s). Both are asked once,
//! when the simulation is built.
//!
//! The built-in models:
//! * [`FixedNand`]: one tR, tPROG and tBERS (`nand.t_r`, `nand.t_prog`,
//!   `nand.t_bers`), whatever the page.
//! * [`PageTypeNand`]: MLC/TLC/QLC with a read and program latency per page
//!   type (LSB, CSB, MSB, TSB), multi-pass or one-shot programming
//!   (`[nand.page_types]`).
//! * [`ReadRetry`]: wraps any model; a read takes extra sensing steps whose
//!   number grows with the block's P/E cycles and its data's retention age
//!   (`[nand.retry]`).
//!
//! [`AnyNand`] closes them over an enum for run-time choice.

use crate::error::{invalid, ConfigError};
use crate::ftl::{OpKind, Purpose};
use crate::hw::PowerConfig;
use crate::rng::{SimRng, SimRngExt};
use crate::units::{Amps, Dur, SimTime};
use rand::Rng;
use serde::{Deserialize, Serialize};

/// One array operation: a batch of `planes` operations of one kind on one
/// page offset of a die.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ArrayOp {
    /// Read, program or erase.
    pub kind: OpKind,
    /// Why the operation happens.
    pub purpose: Purpose,
    /// The flat die index.
    pub die: u32,
    /// The flat block of the batch's first operation (`BlockId`'s index).
    pub block: u32,
    /// Read or program: the page in the block (the first operation's, if
    /// the multi-plane rule lets partners be at other offsets). Erase: 0.
    pub page: u16,
    /// Planes the batch runs on (1 without multi-plane operation).
    pub planes: u8,
}

/// What the engine knows that a model may read.
pub struct NandCtx<'a> {
    /// When the array operation starts.
    pub now: SimTime,
    /// Erases each flat block has had (the functional state: it counts the
    /// erases the FTL has planned, including ones still queued).
    pub erase_counts: &'a [u32],
}

/// A NAND array timing model. See the module docs for the contract.
pub trait Nand {
    /// Short name (reports, errors).
    fn name(&self) -> &'static str;
    /// How long the array operation `op`, starting at `cx.now`, keeps its die
    /// busy. Called once per batch, in event order.
    fn array_time(&mut self, op: &ArrayOp, cx: &NandCtx<'_>) -> Dur;
    /// Whether the model wants [`Nand::programmed`] and [`Nand::erased`]
    /// (the engine then walks the batch's blocks; others pay nothing).
    #[inline]
    fn tracks_blocks(&self) -> bool {
        false
    }
    /// Block `block` is programmed at `now` (each block of a program batch,
    /// before `array_time`).
    #[inline]
    fn programmed(&mut self, _block: u32, _now: SimTime) {}
    /// Block `block` is erased at `now` (each block of an erase batch, before
    /// `array_time`).
    #[inline]
    fn erased(&mut self, _block: u32, _now: SimTime) {}
    /// `Some([tR, tPROG, tBERS])` if the model's answer depends on the
    /// operation's kind alone, and it keeps no state: the engine then reads
    /// the time from the table on its hot path and never calls the model.
    #[inline]
    fn fixed_times(&self) -> Option<[Dur; 3]> {
        None
    }
    /// The model's statistics for the report (`hardware.nand`), if it keeps
    /// any.
    fn report(&self) -> Option<serde_json::Value> {
        None
    }
    /// Start the statistics again (the measured phase begins).
    fn restart_stats(&mut self) {}
    /// Whether the part ever suspends a program or erase for reads (the
    /// engine then asks [`Nand::suspend`] when a read arrives at a busy die;
    /// otherwise it never does).
    #[inline]
    fn can_suspend(&self) -> bool {
        false
    }
    /// A read arrives at a die whose `running` program or erase has
    /// `remaining` to go and has been suspended `times` times already:
    /// suspend it, and at what cost? The engine then reports the operation's
    /// first piece up to the suspension's end, serves the die's reads and
    /// resumes it (`resume` + `remaining`) when none is left.
    fn suspend(&self, _running: OpKind, _remaining: Dur, _times: u32) -> Option<SuspendCost> {
        None
    }
    /// Which queued operations may join a multi-plane batch, and what each
    /// plane beyond the first adds to the array time (asked once, when the
    /// simulation is built; `nand.multiplane` still turns multi-plane
    /// operation on or off).
    #[inline]
    fn multiplane(&self) -> MultiplaneRule {
        MultiplaneRule::ANY_PLANES
    }
    /// What the part's cache register allows: cache program (the next
    /// page's data-in overlaps the running program) and cache read (the
    /// next read's sensing overlaps the previous page's data-out), with
    /// their register busy times (asked once, when the simulation is
    /// built; see [`CacheOps`]). Default: neither.
    #[inline]
    fn cache_ops(&self) -> CacheOps {
        CacheOps::NONE
    }
    /// The part's own supply currents per die state, if it has them; the
    /// power model then draws these instead of `[power]`'s
    /// `flash_*_current` (asked once, when the simulation is built, and
    /// handed to the observer: [`crate::observer::Observer::nand_currents`]).
    /// Default: none, the power configuration's.
    #[inline]
    fn currents(&self) -> Option<NandCurrents> {
        None
    }
}

/// A NAND die's supply current in each of its states, amperes (at the
/// power configuration's `voltage`): what a [`Nand`] model that knows its
/// part's datasheet gives the power model ([`Nand::currents`]). Under the
/// per-operation energy form (`power.flash_*_energy`) the energies still
/// decide what an operation of that kind costs.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct NandCurrents {
    /// During an array read (ICC1).
    pub read: Amps,
    /// During a program (ICC2).
    pub program: Amps,
    /// During an erase (ICC3).
    pub erase: Amps,
    /// Standby (ISB), whenever the die does nothing.
    pub idle: Amps,
    /// While the die's command or data is clocked over the channel (ICCQ
    /// or the I/O current); `None`: the current of the operation the
    /// transfer serves.
    pub io: Option<Amps>,
}

impl NandCurrents {
    /// The currents `[power]` gives (`flash_read_current`,
    /// `flash_program_current`, `flash_erase_current`,
    /// `flash_idle_current`, `flash_transfer_current`): what the power
    /// model draws for a model without currents of its own.
    pub fn from_power(p: &PowerConfig) -> NandCurrents {
        NandCurrents {
            read: p.flash_read_current,
            program: p.flash_program_current,
            erase: p.flash_erase_current,
            idle: p.flash_idle_current,
            io: p.flash_transfer_current,
        }
    }
}

mod config;
mod ops;
mod page_types;
mod retry;

pub use config::{BusSpeed, NandConfig};
pub use ops::*;
pub use page_types::*;
pub use retry::*;

/// One latency per operation kind, whatever the page: SLC, or any cell type
/// described by its mean latencies.
#[derive(Clone, Copy, Debug)]
pub struct FixedNand {
    /// tR, tPROG, tBERS, indexed by `OpKind as usize`.
    t: [Dur; 3],
}

impl FixedNand {
    /// A model with array read, program and erase times `t_r`, `t_prog`, `t_bers`.
    pub fn new(t_r: Dur, t_prog: Dur, t_bers: Dur) -> FixedNand {
        FixedNand {
            t: [t_r, t_prog, t_bers],
        }
    }
    /// `nand.t_r`, `nand.t_prog`, `nand.t_bers`.
    pub fn from_config(n: &NandConfig) -> FixedNand {
        FixedNand::new(n.t_r, n.t_prog, n.t_bers)
    }
}

impl Nand for FixedNand {
    fn name(&self) -> &'static str {
        "fixed"
    }
    #[inline(always)]
    fn array_time(&mut self, op: &ArrayOp, _cx: &NandCtx<'_>) -> Dur {
        self.t[op.kind as usize]
    }
    fn fixed_times(&self) -> Option<[Dur; 3]> {
        Some(self.t)
    }
}

/// The built-in NAND models, chosen from the configuration:
/// `[nand.page_types]` picks [`PageTypeNand`] over [`FixedNand`],
/// `[nand.retry]` wraps either in [`ReadRetry`], `[nand.suspend]` adds
/// program/erase suspension ([`SuspendConfig`]) to any of them,
/// `[nand.multiplane_rule]` the part's multi-plane rule
/// ([`MultiplaneConfig`]) and `[nand.cache]` its cache commands
/// ([`CacheConfig`]).
#[derive(Clone, Debug)]
pub struct AnyNand {
    model: StdModel,
    suspend: Option<SuspendConfig>,
    multiplane: MultiplaneRule,
    cache: CacheOps,
}

#[derive(Clone, Debug)]
enum StdModel {
    Fixed(FixedNand),
    PageType(PageTypeNand),
    FixedRetry(ReadRetry<FixedNand>),
    PageTypeRetry(ReadRetry<PageTypeNand>),
}

macro_rules! any_nand {
    ($self:expr, $m:ident => $e:expr) => {
        match $self {
            StdModel::Fixed($m) => $e,
            StdModel::PageType($m) => $e,
            StdModel::FixedRetry($m) => $e,
            StdModel::PageTypeRetry($m) => $e,
        }
    };
}

/// Check the NAND model sections of a chip (`[nand.page_types]`,
/// `[nand.retry]`, `[nand.suspend]`, `[nand.multiplane_rule]`,
/// `[nand.cache]`); errors
/// name the field.
pub fn check_models(n: &NandConfig) -> Result<(), ConfigError> {
    if let Some(p) = &n.page_types {
        p.check(n)?;
    }
    if let Some(r) = &n.retry {
        r.check()?;
    }
    if let Some(p) = &n.suspend {
        p.check()?;
    }
    if let Some(m) = &n.multiplane_rule {
        m.check(n)?;
    }
    if let Some(c) = &n.cache {
        c.check(n)?;
    }
    Ok(())
}

impl AnyNand {
    /// The model a validated configuration describes.
    pub fn new(n: &NandConfig, blocks: usize, seed: u64) -> Result<AnyNand, ConfigError> {
        check_models(n)?;
        let model = match (&n.page_types, &n.retry) {
            (None, None) => StdModel::Fixed(FixedNand::from_config(n)),
            (Some(p), None) => StdModel::PageType(PageTypeNand::new(p, n.t_bers)),
            (None, Some(r)) => StdModel::FixedRetry(ReadRetry::new(
                FixedNand::from_config(n),
                r.clone(),
                blocks,
                seed,
            )),
            (Some(p), Some(r)) => StdModel::PageTypeRetry(ReadRetry::new(
                PageTypeNand::new(p, n.t_bers),
                r.clone(),
                blocks,
                seed,
            )),
        };
        Ok(AnyNand {
            model,
            suspend: n.suspend.clone(),
            multiplane: n
                .multiplane_rule
                .as_ref()
                .map_or(MultiplaneRule::ANY_PLANES, MultiplaneConfig::rule),
            cache: n.cache.as_ref().map_or(CacheOps::NONE, CacheConfig::ops),
        })
    }
}

impl Nand for AnyNand {
    fn name(&self) -> &'static str {
        any_nand!(&self.model, m => m.name())
    }
    #[inline(always)]
    fn array_time(&mut self, op: &ArrayOp, cx: &NandCtx<'_>) -> Dur {
        any_nand!(&mut self.model, m => m.array_time(op, cx))
    }
    #[inline(always)]
    fn tracks_blocks(&self) -> bool {
        matches!(
            self.model,
            StdModel::FixedRetry(_) | StdModel::PageTypeRetry(_)
        )
    }
    fn programmed(&mut self, block: u32, now: SimTime) {
        any_nand!(&mut self.model, m => m.programmed(block, now))
    }
    fn erased(&mut self, block: u32, now: SimTime) {
        any_nand!(&mut self.model, m => m.erased(block, now))
    }
    fn fixed_times(&self) -> Option<[Dur; 3]> {
        any_nand!(&self.model, m => m.fixed_times())
    }
    fn report(&self) -> Option<serde_json::Value> {
        any_nand!(&self.model, m => m.report())
    }
    fn restart_stats(&mut self) {
        any_nand!(&mut self.model, m => m.restart_stats())
    }
    fn can_suspend(&self) -> bool {
        self.suspend.is_some()
    }
    fn suspend(&self, running: OpKind, remaining: Dur, times: u32) -> Option<SuspendCost> {
        self.suspend.as_ref()?.decide(running, remaining, times)
    }
    fn multiplane(&self) -> MultiplaneRule {
        self.multiplane
    }
    fn cache_ops(&self) -> CacheOps {
        self.cache
    }
}
