//! A calibration's result: the fitted drive, its fit table (text and
//! JSON), the warnings and the refusals it leads to.

use super::params::sig4;
use serde_json::{json, Value};
use ssdsim_host::config::SsdConfig;

/// A free parameter after the fit.
#[derive(Clone, Debug)]
pub struct FittedParam {
    /// Its name (`t_r`).
    pub name: &'static str,
    /// The configuration field it sets.
    pub field: &'static str,
    /// Its unit.
    pub unit: &'static str,
    /// Where the search started (the base's value, within the bounds).
    pub start: f64,
    /// The fitted value.
    pub value: f64,
    /// Lower bound.
    pub min: f64,
    /// Upper bound.
    pub max: f64,
    /// Some fitted target moves by more than the sensitivity threshold when
    /// it is nudged.
    pub identifiable: bool,
    /// A power parameter the drive's power bound holds at the stated
    /// maximum power (moved there, not fitted to a target).
    pub held_by_max_power: bool,
}

/// A target after the fit.
#[derive(Clone, Debug)]
pub struct TargetFit {
    /// Its name.
    pub name: String,
    /// Predicted only.
    pub holdout: bool,
    /// The measured value.
    pub measured: f64,
    /// The fitted drive's simulated value.
    pub fitted: f64,
    /// `(fitted - measured) / measured`.
    pub error: f64,
    /// Its tolerance.
    pub tolerance: f64,
    /// The free parameters it is sensitive to.
    pub sensitive_to: Vec<String>,
}

/// What [`super::calibrate`] returns.
#[derive(Clone, Debug)]
pub struct Fit {
    /// The base drive's name.
    pub base: String,
    /// The seed of every run.
    pub seed: u64,
    /// Requests per run.
    pub number_ios: u64,
    /// The objective at the optimum.
    pub objective: f64,
    /// Search iterations.
    pub iterations: u32,
    /// Candidate drives simulated.
    pub points: usize,
    /// The fitted drive's upper bound of power, W.
    pub power_bound_w: f64,
    /// The stated maximum power, W.
    pub max_power_w: Option<f64>,
    /// The free parameters.
    pub params: Vec<FittedParam>,
    /// The targets, in the file's order.
    pub targets: Vec<TargetFit>,
    /// The fitted drive (the base with the fitted parameters).
    pub config: SsdConfig,
}

impl Fit {
    /// The fitted drive as a device file: its drive's sections
    /// ([`SsdConfig::drive_toml`]), which `--device FILE`, `device =
    /// "FILE"` and `--config FILE` all take.
    pub fn preset_toml(&self) -> String {
        let mut head = format!(
            "# Fitted by `ssdsim calibrate` from base {} (seed {}, {} requests a run).\n# Fitted to:",
            self.base, self.seed, self.number_ios
        );
        for t in self.targets.iter().filter(|t| !t.holdout) {
            head.push_str(&format!(" {}", t.name));
        }
        head.push_str("\n# Predicts (holdouts):");
        for t in self.targets.iter().filter(|t| t.holdout) {
            head.push_str(&format!(" {}", t.name));
        }
        head.push_str("\n# Free parameters:");
        for p in &self.params {
            let def = super::params::find(p.name).expect("a parameter");
            head.push_str(&format!(
                " {} = {}",
                p.field,
                super::params::show(def, p.value)
            ));
            if p.held_by_max_power {
                head.push_str(" (held by max_power_w)");
            } else if !p.identifiable {
                head.push_str(" (not identifiable)");
            }
            head.push(';');
        }
        head.push('\n');
        head + &self.config.drive_toml()
    }

    /// The warnings: each parameter no fitted target pins down.
    pub fn warnings(&self) -> Vec<String> {
        self.params
            .iter()
            .filter(|p| !p.identifiable || p.held_by_max_power)
            .map(|p| {
                let def = super::params::find(p.name).expect("a parameter");
                if p.held_by_max_power {
                    return format!(
                        "warning: {} ({}) is held by the stated maximum power (max_power_w): the free power parameters were moved down to keep the drive's power bound under it, so its value {} is where the bound allows, not a fit to a target",
                        p.name,
                        p.field,
                        super::params::show(def, p.value)
                    );
                }
                format!(
                    "warning: {} ({}) is not identifiable from these targets: no fitted target moves by more than the sensitivity threshold when it changes; its value {} is not a measurement",
                    p.name,
                    p.field,
                    super::params::show(def, p.value)
                )
            })
            .collect()
    }

    /// The refusals after the fit: each fitted target outside its
    /// tolerance (not reached at any point the bounds allow), and a power
    /// bound above the stated maximum.
    pub fn unmet(&self) -> Vec<String> {
        let mut v: Vec<String> = self
            .targets
            .iter()
            .filter(|t| !t.holdout && t.error.abs() > t.tolerance)
            .map(|t| {
                format!(
                    "target \"{}\": not reached within its tolerance {:.1}% inside the bounds (measured {}, fitted {}, error {:+.2}%)",
                    t.name,
                    t.tolerance * 100.0,
                    sig4(t.measured),
                    sig4(t.fitted),
                    t.error * 100.0
                )
            })
            .collect();
        if let Some(max) = self.max_power_w {
            if self.power_bound_w > max {
                v.push(format!(
                    "target max_power_w: the fitted drive's power bound {} W is above the stated maximum {max} W (free the power parameters, or widen their bounds)",
                    sig4(self.power_bound_w)
                ));
            }
        }
        v
    }

    /// The fit table as text.
    pub fn text(&self) -> String {
        let mut s = format!(
            "calibration of base {}: {} iterations, {} candidate drives simulated, objective {}\n\n",
            self.base,
            self.iterations,
            self.points,
            sig4(self.objective)
        );
        s.push_str(&format!(
            "{:<24} {:>12} {:>12} {:>9} {:>8}  sensitive to\n",
            "target", "measured", "fitted", "error", "tol"
        ));
        for t in &self.targets {
            let name = if t.holdout {
                format!("{} (holdout)", t.name)
            } else {
                t.name.clone()
            };
            s.push_str(&format!(
                "{:<24} {:>12} {:>12} {:>8.2}% {:>7.1}%  {}\n",
                name,
                sig4(t.measured),
                sig4(t.fitted),
                t.error * 100.0,
                t.tolerance * 100.0,
                if t.sensitive_to.is_empty() {
                    "-".to_string()
                } else {
                    t.sensitive_to.join(", ")
                }
            ));
        }
        s.push_str(&format!(
            "\n{:<20} {:<30} {:>12} {:>12} {:>25}\n",
            "parameter", "field", "start", "fitted", "bounds"
        ));
        for p in &self.params {
            let integer =
                super::params::find(p.name).map(|d| d.kind) == Some(super::params::Kind::Integer);
            let num = |v: f64| if integer { format!("{v:.0}") } else { sig4(v) };
            s.push_str(&format!(
                "{:<20} {:<30} {:>12} {:>12} {:>25}{}\n",
                p.name,
                p.field,
                num(p.start),
                num(p.value),
                format!("[{}, {}] {}", num(p.min), num(p.max), p.unit)
                    .trim_end()
                    .to_string(),
                if p.held_by_max_power {
                    "  held by max_power_w"
                } else if p.identifiable {
                    ""
                } else {
                    "  not identifiable"
                }
            ));
        }
        s.push_str(&format!(
            "\npower bound (every die busy at its highest current): {} W",
            sig4(self.power_bound_w)
        ));
        if let Some(m) = self.max_power_w {
            s.push_str(&format!(" (stated maximum {m} W)"));
        }
        s.push('\n');
        s
    }

    /// The fit as JSON (`--format json`).
    pub fn json(&self) -> Value {
        let targets: Vec<Value> = self
            .targets
            .iter()
            .map(|t| {
                json!({
                    "name": t.name,
                    "holdout": t.holdout,
                    "measured": t.measured,
                    "fitted": t.fitted,
                    "error": t.error,
                    "tolerance": t.tolerance,
                    "within_tolerance": t.error.abs() <= t.tolerance,
                    "sensitive_to": t.sensitive_to,
                })
            })
            .collect();
        let params: Vec<Value> = self
            .params
            .iter()
            .map(|p| {
                json!({
                    "name": p.name,
                    "field": p.field,
                    "unit": p.unit,
                    "start": p.start,
                    "fitted": p.value,
                    "min": p.min,
                    "max": p.max,
                    "identifiable": p.identifiable,
                    "held_by_max_power": p.held_by_max_power,
                })
            })
            .collect();
        json!({
            "base": self.base,
            "seed": self.seed,
            "number_ios": self.number_ios,
            "iterations": self.iterations,
            "points": self.points,
            "objective": self.objective,
            "power_bound_w": self.power_bound_w,
            "max_power_w": self.max_power_w,
            "targets": targets,
            "params": params,
            "warnings": self.warnings(),
            "unmet": self.unmet(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::sig4;

    #[test]
    fn sig4_keeps_four_digits() {
        assert_eq!(sig4(123.456), "123.5");
        assert_eq!(sig4(0.012345), "0.01235");
        assert_eq!(sig4(98765.4), "98765");
        assert_eq!(sig4(1.5e-7), "1.500e-7");
    }
}
