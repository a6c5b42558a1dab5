//! # ssdsim-cli
//!
//! What only the `ssdsim` program needs, over the `ssdsim` library: its
//! flags ([`args`]), the published studies `ssdsim reproduce` runs
//! ([`reproduce`]) and MQSim's XML import ([`mqsim`]). The binary (`main.rs`) dispatches the
//! subcommands to them and to the library.

#![warn(missing_docs)]

pub mod args;
pub mod mqsim;
pub mod reproduce;
