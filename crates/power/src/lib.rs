//! # power: the ssdsim power model
//!
//! Per-component energy from state residency (Lee & Won's equations: voltage x
//! current x time per state), Park et al.'s per-operation flash energies, a power
//! time series and the derived metrics of the papers (AI = IOPS / W, J/MB, GB per
//! 50 Wh battery). See [`observer`] for the model and its choices (multi-plane
//! current, per-die currents, CPU modes, drain), [`series`] for the time series and
//! its memory bound, [`report`] for the report sections.
//!
//! **Dependency rule:** depends on ssd-core only; ssd-core knows nothing of it.
//!
//! ```
//! use power::PowerObserver;
//! use ssd_core::config::DriveConfig;
//! use ssd_core::observer::Observer;
//! use ssd_core::units::{Dur, SimTime};
//!
//! let settings = DriveConfig::default().validate().unwrap(); // lee2011, 8 x chip2
//! let mut obs = PowerObserver::new(&settings, Dur::from_ms(1)).unwrap();
//! obs.finish(SimTime(1_000_000_000)); // one idle second
//! let e = obs.energy().unwrap();
//! // 8 dies x 1 mA x 3.3 V + DRAM 80 mW + CPU idle 124 mW.
//! assert!((e.total - (8.0 * 0.001 * 3.3 + 0.080 + 0.124)).abs() < 1e-12);
//! ```

#![warn(missing_docs)]

pub mod bounds;
pub mod observer;
pub mod plot;
pub mod report;
pub mod series;

pub use bounds::{idle_power_w, max_power_w};
pub use observer::{PowerObserver, DEFAULT_SAMPLE};
pub use report::{Efficiency, EnergyReport, PowerReport, PowerStats};
pub use series::Sample;

/// Errors of the power model: bad parameters, unfinished runs, output files.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PowerError {
    /// A power parameter is invalid (negative, not finite, ...).
    #[error("{field}: {reason}")]
    Config {
        /// The parameter's path (`power.NAME`).
        field: String,
        /// What is wrong with it.
        reason: String,
    },
    /// A result was asked for before [`ssd_core::observer::Observer::finish`].
    #[error("the power model has no result before the simulation finished")]
    NotFinished,
    /// Writing an output file failed.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// Drawing a plot failed.
    #[error("{path}: plotting failed: {message}")]
    Plot {
        /// The plot file.
        path: String,
        /// The plotting library's message.
        message: String,
    },
}
