//! Hardware models: the timing policy of the drive's components, behind
//! traits, composed by the engine the way the FTL and the scheduler are.
//!
//! A model answers "how long does this take" for the component it models. It
//! never schedules events and never calls the observer: the engine does both,
//! in one place, so the `(time, seq)` order of events and the observer's
//! per-die ordering stay the engine's alone (see `engine`'s module docs).
//!
//! # Determinism
//! A model is a deterministic function of its configuration, its own state,
//! the arguments the engine passes and its own named random sub-stream
//! (`rng::derive_seed(seed, "nand")`): no wall clock, no hash iteration. The
//! engine calls it in event order, so a run stays a pure function of
//! (configuration, workload, seed).
//!
//! # Static dispatch
//! [`crate::Simulation`] is generic over a [`Hardware`] bundle, so a model's
//! calls are monomorphized and inlined on the hot path. [`StdHw`] is the
//! bundle the CLI builds from a configuration: its NAND is [`nand::AnyNand`],
//! an enum over the built-in models (as `AnyFtl` is over the FTLs), so one
//! instantiation of the engine serves every configuration. A library user
//! with a model of their own writes a bundle naming it and calls
//! [`crate::Simulation::with_hardware`].

pub mod channel;
pub mod controller;
pub mod nand;

pub use channel::{BusArbitration, Channel, OnfiChannel};
pub use controller::{
    AnyDram, Controller, CycleCpu, Dram, FixedDram, HostLink, RefreshConfig, RefreshDram,
    SerialLink,
};
pub use nand::{
    AnyNand, ArrayOp, CacheConfig, CacheOps, FixedNand, MultiplaneConfig, MultiplaneRule, Nand,
    NandCtx, NandCurrents, PageTypeNand, ReadRetry,
};

use crate::config::Settings;
use crate::error::ConfigError;

/// The hardware a simulation runs on: one associated type per component
/// model, so the engine is compiled for the concrete models.
pub trait Hardware {
    /// The NAND array: how long each array operation keeps a die busy.
    type Nand: Nand;
    /// The NAND bus: command and page transfer times.
    type Channel: Channel;
    /// The firmware CPU: cycles of the FTL's work, their time, wake-up.
    type Controller: Controller;
    /// The controller's DRAM: access time.
    type Dram: Dram;
    /// The host link: command and data transfer times.
    type Link: HostLink;
}

/// The values of a [`Hardware`] bundle's models.
pub struct Parts<H: Hardware> {
    /// The NAND array model.
    pub nand: H::Nand,
    /// The channel (NAND bus) model.
    pub chan: H::Channel,
    /// The controller CPU model.
    pub ctrl: H::Controller,
    /// The DRAM model.
    pub dram: H::Dram,
    /// The host link model.
    pub link: H::Link,
}

/// The built-in models, chosen at run time from the configuration.
pub struct StdHw;

impl Hardware for StdHw {
    type Nand = AnyNand;
    type Channel = OnfiChannel;
    type Controller = CycleCpu;
    type Dram = AnyDram;
    type Link = SerialLink;
}

impl Parts<StdHw> {
    /// The built-in models a validated configuration names; errors name the
    /// field.
    pub fn from_settings(s: &Settings) -> Result<Parts<StdHw>, ConfigError> {
        Ok(Parts {
            nand: AnyNand::from_settings(s)?,
            chan: OnfiChannel::from_settings(s),
            ctrl: CycleCpu::from_settings(s),
            dram: AnyDram::from_settings(s),
            link: SerialLink::from_settings(s),
        })
    }
}

/// The built-in models with a NAND model of the caller's own: the bundle for
/// a library user who brings a [`Nand`] and keeps the rest (a user with
/// other models of their own writes a bundle like it).
pub struct WithNand<N: Nand>(std::marker::PhantomData<N>);

impl<N: Nand> Hardware for WithNand<N> {
    type Nand = N;
    type Channel = OnfiChannel;
    type Controller = CycleCpu;
    type Dram = AnyDram;
    type Link = SerialLink;
}

impl<N: Nand> Parts<WithNand<N>> {
    /// `nand` with the built-in CPU, DRAM and link the settings describe.
    pub fn with_nand(s: &Settings, nand: N) -> Parts<WithNand<N>> {
        Parts {
            nand,
            chan: OnfiChannel::from_settings(s),
            ctrl: CycleCpu::from_settings(s),
            dram: AnyDram::from_settings(s),
            link: SerialLink::from_settings(s),
        }
    }
}
