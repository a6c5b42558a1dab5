//! `[power]`: the components' electrical parameters (Lee & Won's per-state
//! currents at a supply voltage, Park et al.'s per-operation flash energies)
//! and their presets. The power crate's observer turns them into energy.

use crate::error::{check_op_time, find_preset, invalid, ConfigError};
use crate::units::{Amps, Dur, Joules, Volts, Watts};
use serde::{Deserialize, Serialize};

/// Power parameters (Lee & Won form: per-state currents at a supply voltage, and/or
/// Park et al.'s per-operation flash energies). The power crate consumes these.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PowerConfig {
    /// Name of the preset the parameters came from (`lee2011`, `park-slc`, `modern-tlc`);
    /// informational.
    pub name: String,
    /// Supply voltage of the flash chips, volts.
    pub voltage: Volts,
    /// Chip current during an array read, amperes.
    pub flash_read_current: Amps,
    /// Chip current during a program, amperes.
    pub flash_program_current: Amps,
    /// Chip current during an erase, amperes.
    pub flash_erase_current: Amps,
    /// Chip (per-die) standby current, amperes.
    pub flash_idle_current: Amps,
    /// Current of a channel's bus while it transfers, amperes (nothing when idle).
    pub flash_bus_current: Amps,
    /// Chip current while its data (or command) is clocked over the channel. None:
    /// the current of the operation the transfer serves (read current for command
    /// and data-out cycles, program current for data-in), as in Samsung K9 datasheets
    /// where ICC1 is "page read with serial access". Optional so configs may omit it.
    #[serde(default)]
    pub flash_transfer_current: Option<Amps>,
    /// Per-operation energies; when set they replace current x voltage x time for that op.
    pub flash_read_energy: Option<Joules>,
    /// Energy of one page program, joules (replaces current x voltage x time).
    pub flash_program_energy: Option<Joules>,
    /// Energy of one block erase, joules (replaces current x voltage x time).
    pub flash_erase_energy: Option<Joules>,
    /// DRAM background (standby) power, fixed. Replaced by a figure that
    /// scales with `dram.capacity` when one of the two below is set.
    pub dram_standby_power: Watts,
    /// DRAM standby power per GiB of `dram.capacity` (a device's background
    /// power over its density): standby = this x capacity / 2^30.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dram_standby_power_per_gib: Option<Watts>,
    /// DRAM standby power per device of `dram.device_size` (Micron's DDR power
    /// calculator: background power per device): standby = this x
    /// ceil(capacity / device_size).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dram_device_standby_power: Option<Watts>,
    /// DRAM power while accessed, watts.
    pub dram_active_power: Watts,
    /// Controller CPU power while busy, watts.
    pub cpu_normal_power: Watts,
    /// Controller CPU power while idle, watts.
    pub cpu_idle_power: Watts,
    /// Controller CPU power in its slow (low-power) mode, watts; see `cpu_slow_after`.
    pub cpu_slow_power: Watts,
    /// Host link PHY power while transferring and while idle.
    pub link_active_power: Watts,
    /// Host link power while idle, watts (see `link_active_power`).
    pub link_idle_power: Watts,
    /// CPU enters slow mode after this long idle (None = never).
    pub cpu_slow_after: Option<Dur>,
    /// Time the CPU takes to leave slow mode before it can work (0 in the presets).
    pub cpu_wakeup_latency: Dur,
}

impl PowerConfig {
    /// Every voltage, current, power and energy is finite and not negative
    /// (TOML takes `nan`, `inf` and `-3.3` as floats): errors name the field
    /// (`power.NAME`).
    pub fn validate(&self) -> Result<(), ConfigError> {
        let opt = |v: Option<f64>| v.unwrap_or(0.0);
        for (f, v) in [
            ("power.voltage", self.voltage.0),
            ("power.flash_read_current", self.flash_read_current.0),
            ("power.flash_program_current", self.flash_program_current.0),
            ("power.flash_erase_current", self.flash_erase_current.0),
            ("power.flash_idle_current", self.flash_idle_current.0),
            ("power.flash_bus_current", self.flash_bus_current.0),
            (
                "power.flash_transfer_current",
                opt(self.flash_transfer_current.map(|a| a.0)),
            ),
            (
                "power.flash_read_energy",
                opt(self.flash_read_energy.map(|j| j.0)),
            ),
            (
                "power.flash_program_energy",
                opt(self.flash_program_energy.map(|j| j.0)),
            ),
            (
                "power.flash_erase_energy",
                opt(self.flash_erase_energy.map(|j| j.0)),
            ),
            ("power.dram_standby_power", self.dram_standby_power.0),
            (
                "power.dram_standby_power_per_gib",
                opt(self.dram_standby_power_per_gib.map(|w| w.0)),
            ),
            (
                "power.dram_device_standby_power",
                opt(self.dram_device_standby_power.map(|w| w.0)),
            ),
            ("power.dram_active_power", self.dram_active_power.0),
            ("power.cpu_normal_power", self.cpu_normal_power.0),
            ("power.cpu_idle_power", self.cpu_idle_power.0),
            ("power.cpu_slow_power", self.cpu_slow_power.0),
            ("power.link_active_power", self.link_active_power.0),
            ("power.link_idle_power", self.link_idle_power.0),
        ] {
            if !(v.is_finite() && v >= 0.0) {
                return Err(invalid(
                    f,
                    format!("must be a finite number, not negative, got {v}"),
                ));
            }
        }
        check_op_time("power.cpu_wakeup_latency", self.cpu_wakeup_latency)?;
        if self.dram_standby_power_per_gib.is_some() && self.dram_device_standby_power.is_some() {
            return Err(invalid(
                "power.dram_device_standby_power",
                "give the DRAM's standby power per GiB or per device, not both \
                 (power.dram_standby_power_per_gib is set too)",
            ));
        }
        Ok(())
    }
    /// Lee & Won table 1. DRAM: the table prints "idle 878 mW, active 80 mW", which
    /// looks swapped; in every run the paper reports, DRAM energy = 80 mW x elapsed
    /// time, so standby is 80 mW here (and active 80 mW: the paper's accesses add
    /// nothing measurable). Both stay configurable.
    pub fn lee2011() -> PowerConfig {
        PowerConfig {
            name: "lee2011".into(),
            voltage: Volts(3.3),
            flash_read_current: Amps(0.015),
            flash_program_current: Amps(0.015),
            flash_erase_current: Amps(0.015),
            flash_idle_current: Amps(0.001),
            flash_bus_current: Amps(0.000_05),
            flash_transfer_current: None,
            flash_read_energy: None,
            flash_program_energy: None,
            flash_erase_energy: None,
            dram_standby_power: Watts(0.080),
            dram_standby_power_per_gib: None,
            dram_device_standby_power: None,
            dram_active_power: Watts(0.080),
            cpu_normal_power: Watts(0.259),
            cpu_idle_power: Watts(0.124),
            cpu_slow_power: Watts(0.033),
            link_active_power: Watts(0.0),
            link_idle_power: Watts(0.0),
            cpu_slow_after: None,
            cpu_wakeup_latency: Dur::ZERO,
        }
    }
    /// Park et al. table 1 flash energies per operation (read 4.72 uJ/page, program
    /// 38.04 uJ/page, erase 527.68 uJ/block); the rest as lee2011.
    pub fn park_slc() -> PowerConfig {
        PowerConfig {
            name: "park-slc".into(),
            flash_read_energy: Some(Joules(4.72e-6)),
            flash_program_energy: Some(Joules(38.04e-6)),
            flash_erase_energy: Some(Joules(527.68e-6)),
            ..Self::lee2011()
        }
    }
    /// A modern NVMe TLC drive, component by component. Representative datasheet
    /// figures of the class, to be calibrated against a real drive before drawing
    /// absolute conclusions:
    /// * flash: 3D TLC NAND datasheets (e.g. Micron's B27A/B47R ONFI 4 parts) give
    ///   VCC = 2.5-3.6 V and typical array read / program / erase currents (ICC1 /
    ///   ICC2 / ICC3) of about 25 mA, standby ISB of tens of uA; I/O at VCCQ 1.2 V
    ///   draws ~10 mA while toggling (bus current below, per channel);
    /// * controller: multi-core Cortex-R class NVMe controllers draw ~1.2 W busy and
    ///   ~0.3 W idle, ~50 mW in a low-power state (PS3/PS4 figures of consumer NVMe
    ///   drives' power-state tables);
    /// * DRAM: 1 GiB LPDDR4 ~ 40 mW self-refresh/standby, ~350 mW active;
    /// * host link: a PCIe gen3 x4 PHY ~ 0.4 W active, ~20 mW in L1.
    pub fn modern_tlc() -> PowerConfig {
        PowerConfig {
            name: "modern-tlc".into(),
            voltage: Volts(3.3),
            flash_read_current: Amps(0.025),
            flash_program_current: Amps(0.025),
            flash_erase_current: Amps(0.025),
            flash_idle_current: Amps(0.000_05),
            flash_bus_current: Amps(0.010),
            flash_read_energy: None,
            flash_program_energy: None,
            flash_erase_energy: None,
            dram_standby_power: Watts(0.040),
            dram_active_power: Watts(0.350),
            cpu_normal_power: Watts(1.2),
            cpu_idle_power: Watts(0.3),
            cpu_slow_power: Watts(0.05),
            link_active_power: Watts(0.4),
            link_idle_power: Watts(0.02),
            cpu_slow_after: None,
            cpu_wakeup_latency: Dur::ZERO,
            ..Self::lee2011()
        }
    }
    /// Every built-in power preset: lee2011, park-slc, modern-tlc.
    pub fn presets() -> Vec<PowerConfig> {
        vec![Self::lee2011(), Self::park_slc(), Self::modern_tlc()]
    }
    /// The built-in power preset `name`; an error lists the known names.
    pub fn preset(name: &str) -> Result<PowerConfig, ConfigError> {
        find_preset("power", name, Self::presets(), |p| &p.name)
    }
}
