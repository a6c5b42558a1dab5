//! # ssdsim-host: the host stack above the block device
//!
//! What produces a drive's requests and orders them before the device: the
//! fio-style generator ([`workload`]), block-trace replay ([`trace`]),
//! Filebench-like personalities ([`personality`]) and Filebench's flowops
//! over a file system ([`filebench`], [`fs`]), the page cache and writeback
//! ([`pagecache`]) on the host's cores ([`cpu`]), tenants ([`flows`]), and the block layer's I/O schedulers
//! ([`scheds`]). It talks to the device core (`ssd-core`) through
//! `ssd_core::workload::RequestSource` (a source's requests and the
//! engine's events), `ssd_core::sched::IoScheduler` (the elevator the
//! engine's block-layer front end drives) and `ssd_core::config::Settings`
//! (the validated drive, with the [`ssd_core::sched::BlockQueue`] this
//! crate's configuration sets). The whole run's configuration, [`SsdConfig`],
//! is this crate's: the drive's sections and the host stack's.
//!
//! ```
//! use ssdsim_host::SsdConfig;
//! let settings = SsdConfig::default().validate().unwrap();
//! assert_eq!(settings.geometry.channels, 8); // Lee & Won's reference SSD
//! ```

#![warn(missing_docs)]

pub mod config;
pub mod cpu;
pub mod dirty;
pub mod filebench;
pub mod flows;
pub mod fs;
pub mod idset;
pub mod pagecache;
pub mod personality;
pub mod scheds;
pub mod trace;
pub mod workload;

pub use config::SsdConfig;
