//! # ssd-core: the ssdsim engine
//!
//! Time, units, the drive's configuration, the hardware timing model (NAND
//! dies and planes, channels, controller CPU, DRAM, host link), the
//! discrete-event engine, statistics, and the traits every pluggable part
//! implements: [`ftl::Ftl`], [`sched::IoScheduler`],
//! [`workload::RequestSource`], [`observer::Observer`].
//!
//! **Dependency rule:** this crate depends on no concrete FTL, power model
//! or host stack (crates `ftl`, `power` and `host` depend on it, never the
//! reverse).
//!
//! ```
//! use ssd_core::config::DriveConfig;
//! let settings = DriveConfig::default().validate().unwrap();
//! assert_eq!(settings.geometry.channels, 8); // Lee & Won's reference SSD
//! ```

#![warn(missing_docs)]

pub mod addr;
pub mod config;
pub mod devices;
pub mod engine;
pub mod error;
pub mod ftl;
pub mod hash;
pub mod hw;
pub mod observer;
pub mod outfile;
pub mod rng;
pub mod sched;
pub mod stats;
pub mod units;
pub mod workload;

pub use addr::{BlockId, ChannelId, DieId, DriveShape, FastDiv, Geometry, Lpn, PlaneId, Ppn};
pub use config::{ConfigError, DriveConfig, Settings};
pub use engine::{SimError, Simulation};
pub use units::{Dur, SimTime, Size};
