//! # ssd-core: the ssdsim engine
//!
//! Time, units, configuration, the hardware timing model (NAND dies and planes,
//! channels, controller CPU, DRAM, host link), the host side (workload sources,
//! I/O schedulers), statistics, and the traits every pluggable part implements:
//! [`ftl::Ftl`], [`sched::IoScheduler`], [`workload::RequestSource`],
//! [`observer::Observer`].
//!
//! **Dependency rule:** this crate must not depend on any concrete FTL or power
//! model (crates `ftl` and `power` depend on it, never the reverse).
//!
//! ```
//! use ssd_core::config::SsdConfig;
//! let settings = SsdConfig::default().validate().unwrap();
//! assert_eq!(settings.geometry.channels, 8); // Lee & Won's reference SSD
//! ```

#![warn(missing_docs)]

pub mod addr;
pub mod config;
pub mod devices;
pub mod engine;
pub mod error;
pub mod filebench;
pub mod flows;
pub mod fs;
pub mod ftl;
pub mod hash;
pub mod hw;
pub mod idset;
pub mod observer;
pub mod outfile;
pub mod pagecache;
pub mod personality;
pub mod rng;
pub mod sched;
pub mod scheds;
pub mod stats;
pub mod trace;
pub mod units;
pub mod workload;

pub use addr::{BlockId, ChannelId, DieId, DriveShape, FastDiv, Geometry, Lpn, PlaneId, Ppn};
pub use config::{ConfigError, Settings, SsdConfig};
pub use engine::{SimError, Simulation};
pub use units::{Dur, SimTime, Size};
