//! The free parameters a calibration may fit: each is one existing field of
//! the configuration (no knob of its own), with its kind (an integer or a
//! positive continuous value, searched on a log scale), its unit in the
//! targets file and the report, and default bounds.

use ssd_core::config::BusSpeed;
use ssd_core::units::{Amps, Dur, Size, Watts};
use ssdsim_host::config::SsdConfig;

/// How a parameter is searched.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// An integer, stepped by whole units.
    Integer,
    /// A positive value, stepped by factors (its logarithm is searched).
    Continuous,
}

/// One parameter of the table below.
#[derive(Clone, Copy, Debug)]
pub struct ParamDef {
    /// The name the targets file's `free` list takes.
    pub name: &'static str,
    /// The configuration field it sets (as `--set` names it).
    pub field: &'static str,
    /// Its kind.
    pub kind: Kind,
    /// The unit of its values in the targets file's bounds and the report.
    pub unit: &'static str,
    /// Default bounds, in `unit`.
    pub min: f64,
    /// Default upper bound, in `unit`.
    pub max: f64,
    get: fn(&SsdConfig) -> f64,
    set: fn(&mut SsdConfig, f64),
}

impl ParamDef {
    /// The parameter's value in `cfg`, in its unit.
    pub fn get(&self, cfg: &SsdConfig) -> f64 {
        (self.get)(cfg)
    }

    /// Set it in `cfg` (rounded as the field stores it: whole nanoseconds,
    /// bytes, cycles, or 1e-3 MB/s).
    pub fn set(&self, cfg: &mut SsdConfig, v: f64) {
        (self.set)(cfg, v)
    }
}

fn us(d: Dur) -> f64 {
    d.0 as f64 / 1e3
}

fn from_us(v: f64) -> Dur {
    Dur((v * 1e3).round().max(1.0) as u64)
}

/// The bus rate in MB/s, whatever form the configuration gives it in.
fn bus_mbps(c: &SsdConfig) -> f64 {
    c.nand
        .bus
        .rate(c.nand.page_size, c.nand.bus_width_bits)
        .mb_per_s()
}

fn int(v: f64) -> u32 {
    v.round().clamp(1.0, u32::MAX as f64) as u32
}

/// Every parameter a calibration can fit, in the report's order.
pub const PARAMS: &[ParamDef] = &[
    ParamDef {
        name: "channels",
        field: "layout.channels",
        kind: Kind::Integer,
        unit: "",
        min: 1.0,
        max: 32.0,
        get: |c| c.layout.channels as f64,
        set: |c, v| c.layout.channels = int(v),
    },
    ParamDef {
        name: "ways",
        field: "layout.ways",
        kind: Kind::Integer,
        unit: "",
        min: 1.0,
        max: 16.0,
        get: |c| c.layout.ways as f64,
        set: |c, v| c.layout.ways = int(v),
    },
    ParamDef {
        name: "dies",
        field: "nand.dies_per_chip",
        kind: Kind::Integer,
        unit: "",
        min: 1.0,
        max: 8.0,
        get: |c| c.nand.dies_per_chip as f64,
        set: |c, v| c.nand.dies_per_chip = int(v),
    },
    ParamDef {
        name: "planes",
        field: "nand.planes_per_die",
        kind: Kind::Integer,
        unit: "",
        min: 1.0,
        max: 8.0,
        get: |c| c.nand.planes_per_die as f64,
        set: |c, v| c.nand.planes_per_die = int(v),
    },
    ParamDef {
        name: "t_r",
        field: "nand.t_r",
        kind: Kind::Continuous,
        unit: "us",
        min: 2.0,
        max: 500.0,
        get: |c| us(c.nand.t_r),
        set: |c, v| c.nand.t_r = from_us(v),
    },
    ParamDef {
        name: "t_prog",
        field: "nand.t_prog",
        kind: Kind::Continuous,
        unit: "us",
        min: 20.0,
        max: 10_000.0,
        get: |c| us(c.nand.t_prog),
        set: |c, v| c.nand.t_prog = from_us(v),
    },
    ParamDef {
        name: "t_bers",
        field: "nand.t_bers",
        kind: Kind::Continuous,
        unit: "us",
        min: 200.0,
        max: 50_000.0,
        get: |c| us(c.nand.t_bers),
        set: |c, v| c.nand.t_bers = from_us(v),
    },
    ParamDef {
        name: "bus",
        field: "nand.bus",
        kind: Kind::Continuous,
        unit: "MB/s",
        min: 5.0,
        max: 4_800.0,
        get: bus_mbps,
        set: |c, v| c.nand.bus = BusSpeed::MegaBytes((v * 1e3).round().max(1.0) / 1e3),
    },
    ParamDef {
        name: "command_overhead",
        field: "host.command_overhead",
        kind: Kind::Continuous,
        unit: "us",
        min: 0.1,
        max: 200.0,
        get: |c| us(c.host.command_overhead),
        set: |c, v| c.host.command_overhead = from_us(v),
    },
    ParamDef {
        name: "cycles_per_command",
        field: "controller.cycles_per_command",
        kind: Kind::Continuous,
        unit: "cycles",
        min: 10.0,
        max: 1_000_000.0,
        get: |c| c.controller.cycles_per_command as f64,
        set: |c, v| c.controller.cycles_per_command = v.round().max(1.0) as u64,
    },
    ParamDef {
        name: "link",
        field: "host.link_mbps",
        kind: Kind::Continuous,
        unit: "MB/s",
        min: 50.0,
        max: 16_000.0,
        get: |c| c.host.link_mbps,
        set: |c, v| c.host.link_mbps = (v * 1e3).round() / 1e3,
    },
    ParamDef {
        name: "write_buffer",
        field: "dram.write_buffer",
        kind: Kind::Continuous,
        unit: "KiB",
        min: 4.0,
        max: 4.0 * 1024.0 * 1024.0,
        get: |c| c.dram.write_buffer.0 as f64 / 1024.0,
        // `dram.write_buffer` is a whole number of pages (hw/dram.rs): the
        // nearest, at least one, whatever the page size.
        set: |c, v| {
            let page = c.nand.page_size.0.max(1);
            let b = (v.max(1.0) * 1024.0).round() as u64;
            c.dram.write_buffer = Size(((b + page / 2) / page).max(1) * page)
        },
    },
    ParamDef {
        name: "op",
        field: "ftl.op",
        kind: Kind::Continuous,
        unit: "",
        min: 0.02,
        max: 1.0,
        get: |c| c.ftl.op,
        set: |c, v| c.ftl.op = (v * 1e4).round() / 1e4,
    },
    ParamDef {
        name: "read_current",
        field: "power.flash_read_current",
        kind: Kind::Continuous,
        unit: "mA",
        min: 0.5,
        max: 200.0,
        get: |c| c.power.flash_read_current.0 * 1e3,
        set: |c, v| c.power.flash_read_current = Amps(milli(v)),
    },
    ParamDef {
        name: "program_current",
        field: "power.flash_program_current",
        kind: Kind::Continuous,
        unit: "mA",
        min: 0.5,
        max: 200.0,
        get: |c| c.power.flash_program_current.0 * 1e3,
        set: |c, v| c.power.flash_program_current = Amps(milli(v)),
    },
    ParamDef {
        name: "erase_current",
        field: "power.flash_erase_current",
        kind: Kind::Continuous,
        unit: "mA",
        min: 0.5,
        max: 200.0,
        get: |c| c.power.flash_erase_current.0 * 1e3,
        set: |c, v| c.power.flash_erase_current = Amps(milli(v)),
    },
    ParamDef {
        name: "idle_current",
        field: "power.flash_idle_current",
        kind: Kind::Continuous,
        unit: "mA",
        min: 0.001,
        max: 20.0,
        get: |c| c.power.flash_idle_current.0 * 1e3,
        set: |c, v| c.power.flash_idle_current = Amps(milli(v)),
    },
    ParamDef {
        name: "cpu_idle_power",
        field: "power.cpu_idle_power",
        kind: Kind::Continuous,
        unit: "mW",
        min: 1.0,
        max: 5_000.0,
        get: |c| c.power.cpu_idle_power.0 * 1e3,
        set: |c, v| c.power.cpu_idle_power = Watts(milli(v)),
    },
    ParamDef {
        name: "cpu_active_power",
        field: "power.cpu_normal_power",
        kind: Kind::Continuous,
        unit: "mW",
        min: 1.0,
        max: 10_000.0,
        get: |c| c.power.cpu_normal_power.0 * 1e3,
        set: |c, v| c.power.cpu_normal_power = Watts(milli(v)),
    },
];

/// A value in thousandths, kept to 1e-6 of the unit (1 nA, 1 uW) so that a
/// preset written as TOML reads back the same.
fn milli(v: f64) -> f64 {
    (v * 1e3).round() / 1e6
}

/// The parameter of this name.
pub fn find(name: &str) -> Option<&'static ParamDef> {
    PARAMS.iter().find(|p| p.name == name)
}

/// The names, for error messages.
pub fn names() -> String {
    PARAMS.iter().map(|p| p.name).collect::<Vec<_>>().join(", ")
}

/// A free parameter of one calibration: its definition and bounds.
#[derive(Clone, Debug)]
pub struct FreeParam {
    /// Which one.
    pub def: &'static ParamDef,
    /// Lower bound, in its unit.
    pub min: f64,
    /// Upper bound, in its unit.
    pub max: f64,
}

impl FreeParam {
    /// Where the search starts: the base's value, within the bounds.
    pub fn start(&self, base: &SsdConfig) -> f64 {
        self.def.get(base).clamp(self.min, self.max)
    }
}

/// Set every free parameter of `x` (in order) in a copy of `base`.
pub fn apply(base: &SsdConfig, free: &[FreeParam], x: &[f64]) -> SsdConfig {
    let mut c = base.clone();
    for (p, &v) in free.iter().zip(x) {
        p.def.set(&mut c, v);
    }
    c
}

/// A value as the report prints it: integers whole, others to 4
/// significant digits.
pub fn show(def: &ParamDef, v: f64) -> String {
    let num = match def.kind {
        Kind::Integer => format!("{}", v.round()),
        Kind::Continuous => sig4(v),
    };
    if def.unit.is_empty() {
        num
    } else {
        format!("{num} {}", def.unit)
    }
}

/// A value to 4 significant digits (no exponent for everyday magnitudes).
pub fn sig4(v: f64) -> String {
    if v == 0.0 || !v.is_finite() {
        return format!("{v}");
    }
    let mag = v.abs().log10().floor() as i32;
    if !(-4..=9).contains(&mag) {
        return format!("{v:.3e}");
    }
    let decimals = (3 - mag).max(0) as usize;
    format!("{v:.decimals$}")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every parameter reads back what it set (at a value its field holds
    /// exactly), on the default configuration: get and set are one field.
    #[test]
    fn set_then_get_round_trips() {
        for p in PARAMS {
            let mut c = SsdConfig::default();
            let v = match p.kind {
                Kind::Integer => 3.0,
                Kind::Continuous => (p.min * p.max).sqrt().round().max(1.0),
            };
            // A value the default does not hold already.
            let v = if p.get(&c) == v { v + 1.0 } else { v };
            p.set(&mut c, v);
            let got = p.get(&c);
            assert!(
                (got - v).abs() <= 1e-6 * v.abs(),
                "{}: set {v}, got {got}",
                p.name
            );
            assert_ne!(p.get(&SsdConfig::default()), v, "{}: not a change", p.name);
        }
    }
}
