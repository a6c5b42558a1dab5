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
pub mod dram;
pub mod link;
pub mod nand;
pub mod power;

pub use channel::{BusArbitration, Channel, OnfiChannel};
pub use controller::{Controller, ControllerConfig, CycleCpu};
pub use dram::{
    AnyDram, Dram, DramCapacity, DramConfig, FixedDram, FlushPolicy, RefreshConfig, RefreshDram,
};
pub use link::{Arbitration, HostConfig, HostLink, Interface, SerialLink};
pub use nand::{
    AnyNand, ArrayOp, BusSpeed, CacheConfig, CacheOps, FixedNand, MultiplaneConfig, MultiplaneRule,
    Nand, NandConfig, NandCtx, NandCurrents, PageTypeNand, ReadRetry,
};
pub use power::PowerConfig;

use crate::addr::Geometry;
use crate::error::{check_nonzero, invalid, ConfigError};
use serde::{Deserialize, Serialize};

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

/// The configuration sections the built-in models are built from, each
/// model from its own (`Settings::hw` gives them for a validated
/// configuration).
#[derive(Clone, Copy, Debug)]
pub struct HwConfig<'a> {
    /// `[nand]`: the array's times and the channel's bus.
    pub nand: &'a NandConfig,
    /// `[controller]`: the CPU's clock and cycle costs.
    pub controller: &'a ControllerConfig,
    /// `[dram]`: access latency and refresh.
    pub dram: &'a DramConfig,
    /// `[host]`: the link's overhead and rate.
    pub host: &'a HostConfig,
    /// `[power]`: the CPU's slow mode.
    pub power: &'a PowerConfig,
    /// The drive's blocks (a NAND model that tracks blocks sizes its state
    /// by them).
    pub blocks: usize,
    /// `sim.seed`: a NAND model's random sub-stream derives from it.
    pub seed: u64,
}

impl Parts<StdHw> {
    /// The built-in models the sections name; errors name the field.
    pub fn new(c: HwConfig<'_>) -> Result<Parts<StdHw>, ConfigError> {
        Ok(Parts {
            nand: AnyNand::new(c.nand, c.blocks, c.seed)?,
            chan: OnfiChannel::new(c.nand),
            ctrl: CycleCpu::new(c.controller, c.power),
            dram: AnyDram::new(c.dram),
            link: SerialLink::new(c.host),
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
    /// `nand` with the built-in channel, CPU, DRAM and link the sections
    /// describe.
    pub fn with_nand(c: HwConfig<'_>, nand: N) -> Parts<WithNand<N>> {
        Parts {
            nand,
            chan: OnfiChannel::new(c.nand),
            ctrl: CycleCpu::new(c.controller, c.power),
            dram: AnyDram::new(c.dram),
            link: SerialLink::new(c.host),
        }
    }
}

/// How chips hang off the controller.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LayoutConfig {
    /// Independent channels (buses) from the controller to the chips. Default 8.
    pub channels: u32,
    /// Chips (ways) per channel.
    pub ways: u32,
}

impl Default for LayoutConfig {
    /// Lee & Won's reference SSD: 8 channels of one chip.
    fn default() -> LayoutConfig {
        LayoutConfig {
            channels: 8,
            ways: 1,
        }
    }
}

impl LayoutConfig {
    /// The drive's geometry: these channels and ways of the chip `n` (whose
    /// own rules [`NandConfig::check`] checks). Every physical page must have
    /// a 32-bit number.
    pub fn geometry(&self, n: &NandConfig) -> Result<Geometry, ConfigError> {
        check_nonzero("layout.channels", self.channels)?;
        check_nonzero("layout.ways", self.ways)?;
        let total = self.channels as u128
            * self.ways as u128
            * n.dies_per_chip as u128
            * n.planes_per_die as u128
            * n.blocks_per_plane as u128
            * n.pages_per_block as u128;
        if total >= u32::MAX as u128 {
            return Err(invalid(
                "geometry",
                format!("{total} physical pages exceed the 2^32-1 a page number can address; use larger pages or fewer blocks"),
            ));
        }
        Ok(Geometry {
            channels: self.channels,
            ways: self.ways,
            dies: n.dies_per_chip,
            planes: n.planes_per_die,
            blocks_per_plane: n.blocks_per_plane,
            pages_per_block: n.pages_per_block,
            page_size: n.page_size.0 as u32,
        })
    }
}
