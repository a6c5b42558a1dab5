//! Closed forms of the power model over a drive's settings, for tools that
//! reason about a drive without simulating it (`ssdsim calibrate`): its
//! power with nothing to do, and an upper bound of its power under any
//! workload. They read `[power]` as [`crate::PowerObserver`] does: a
//! current draws `voltage x current`, an operation given per-operation
//! energy draws that energy over its time.

use ssd_core::config::{ConfigError, Settings};

/// The drive's power with nothing to do, W: the controller's CPU idle, the
/// DRAM in standby ([`Settings::dram_standby_power`]), every die's idle
/// current and the link idle: what an idle second of a run integrates to.
pub fn idle_power_w(s: &Settings) -> Result<f64, ConfigError> {
    let p = &s.config.power;
    let dies = s.geometry.total_dies() as f64;
    Ok(p.cpu_idle_power.0
        + s.dram_standby_power()?
        + dies * p.voltage.0 * p.flash_idle_current.0
        + p.link_idle_power.0)
}

/// An upper bound of the drive's power under any workload, W: every die
/// working on every plane at the highest of its operations' power (a
/// per-operation energy over its time), its transfer and idle current on
/// top, every channel's bus transferring, the CPU busy, the DRAM active
/// and the link transferring.
pub fn max_power_w(s: &Settings) -> Result<f64, ConfigError> {
    let p = &s.config.power;
    let n = &s.config.nand;
    let v = p.voltage.0;
    let per_plane = |current: f64, energy: Option<f64>, t: ssd_core::Dur| match energy {
        Some(e) => e / (t.0.max(1) as f64 * 1e-9),
        None => current * v,
    };
    let op = per_plane(
        p.flash_read_current.0,
        p.flash_read_energy.map(|j| j.0),
        n.t_r,
    )
    .max(per_plane(
        p.flash_program_current.0,
        p.flash_program_energy.map(|j| j.0),
        n.t_prog,
    ))
    .max(per_plane(
        p.flash_erase_current.0,
        p.flash_erase_energy.map(|j| j.0),
        n.t_bers,
    ));
    let xfer = p
        .flash_transfer_current
        .map_or(0.0, |a| a.0)
        .max(p.flash_read_current.0)
        .max(p.flash_program_current.0)
        * v;
    let g = s.geometry;
    let dies = g.total_dies() as f64;
    Ok(
        dies * (g.planes as f64 * op + xfer + v * p.flash_idle_current.0)
            + g.channels as f64 * v * p.flash_bus_current.0
            + p.cpu_normal_power.0.max(p.cpu_idle_power.0)
            + s.dram_standby_power()?
            + p.dram_active_power.0
            + p.link_active_power.0.max(p.link_idle_power.0),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::PowerObserver;
    use ssd_core::config::DriveConfig;
    use ssd_core::observer::Observer;
    use ssd_core::units::{Dur, SimTime};

    /// The closed forms are the model's: an idle second integrates to the
    /// idle power, and the bound is above it.
    #[test]
    fn an_idle_second_integrates_to_the_idle_power() {
        for preset in ["chip1", "chip2", "park-slc"] {
            let c = DriveConfig {
                nand: ssd_core::config::NandConfig::preset(preset).unwrap(),
                ..DriveConfig::default()
            };
            let s = c.validate().unwrap();
            let mut obs = PowerObserver::new(&s, Dur::from_ms(1)).unwrap();
            obs.finish(SimTime(1_000_000_000));
            let e = obs.energy().unwrap().total;
            let idle = idle_power_w(&s).unwrap();
            assert!((e - idle).abs() < 1e-12, "{preset}: {e} J against {idle} W");
            assert!(max_power_w(&s).unwrap() > idle, "{preset}");
        }
    }
}
