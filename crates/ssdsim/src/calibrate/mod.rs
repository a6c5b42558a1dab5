//! `ssdsim calibrate`: a drive's configuration fitted to measurements of a
//! real drive, with the fit, a hold-out check and which parameters the
//! measurements pin down.
//!
//! A targets file ([`targets`]) names a base drive (a NAND or device
//! preset, or a configuration file), the free parameters with their bounds
//! ([`params::PARAMS`]: each one existing configuration field), the run
//! length of every candidate simulation and the targets: fio JSON outputs
//! (`fio --output-format=json`) with the job that defines their test (a job
//! file, or the JSON's own `job options`) and the metric to take, or
//! datasheet figures (sequential MB/s, random IOPS, QD1 latency, idle and
//! active power, capacity, and the maximum power as a bound), or measured
//! power traces (their mean power under the job that ran). Each target
//! has a tolerance and a weight; a `holdout` target is not fitted, only
//! predicted and reported.
//!
//! The fit ([`search`]) screens the integer parameters (their powers of
//! two within the bounds), fits the continuous ones at each by
//! Levenberg–Marquardt on their logarithms (written here: a dozen lines of
//! normal equations for a handful of parameters, where `argmin` would add
//! a dependency and still leave the integers to be searched by hand),
//! refines the best, then moves the integers one unit while that helps.
//! Each iteration's Jacobian columns are simulated in parallel with rayon;
//! a calibration is deterministic for a seed (one seed for every run, ties
//! by order).
//!
//! At the optimum each parameter is moved by one unit or 5 % and every
//! target simulated again: a target is sensitive to the parameters that
//! move it by more than the file's `sensitivity` (default 1 %), and a
//! parameter that moves no fitted target that much is not identifiable from
//! these targets (a warning; its value is the base's, or wherever the
//! search left it).
//!
//! Physical bounds: a set of targets is refused, naming the target, when a
//! random throughput is over twice the sequential one of the same
//! direction, when a power figure is above the stated maximum, and, after
//! the fit, when a fitted target is not within its tolerance at the point
//! the fit found (the report is still produced): out of the model's reach
//! inside the bounds, or of the search's, which is local from the screened
//! points. With a maximum power (`datasheet = "max_power_w"`) the drive's
//! power bound ([`search::max_power_bound`]: every die busy on every plane
//! at its highest current, every bus, the CPU, DRAM and link active) is
//! kept at or under it by [`search::configure`]'s projection of the free
//! power parameters, so no workload's simulated power can exceed it.

pub mod params;
pub mod report;
pub mod search;
pub mod targets;

pub use report::Fit;
pub use targets::{load, parse, Spec, Target};

use crate::RunError;
use report::{FittedParam, TargetFit};
use search::{Evaluator, Plan};

/// Fit `spec`'s free parameters to its targets, predict its holdouts and
/// measure each target's sensitivity. `progress` gets a line per screened
/// point, refinement and integer move (the CLI prints them on stderr).
pub fn calibrate(spec: &Spec, progress: &(dyn Fn(&str) + Sync)) -> Result<Fit, RunError> {
    let plan = Plan::new(&spec.targets);
    let ev = Evaluator::new(spec, &plan);
    progress(&format!(
        "calibrate: {} targets ({} fitted), {} free parameters, {} requests a run",
        spec.targets.len(),
        spec.targets.iter().filter(|t| !t.holdout).count(),
        spec.free.len(),
        spec.number_ios
    ));
    let found = search::search(&ev, progress)?;
    let all = vec![true; spec.targets.len()];
    let cfg = search::configure(spec, &found.x);
    let at_opt = search::values(&cfg, spec, &plan, &all)?;
    progress("calibrate: sensitivity at the optimum");
    let sens = sensitivities(spec, &plan, &found.x, &at_opt)?;
    let power_bound = search::max_power_bound(&cfg)?;
    let targets: Vec<TargetFit> = spec
        .targets
        .iter()
        .enumerate()
        .map(|(t, target)| {
            let fitted = at_opt[t].expect("every target evaluated");
            TargetFit {
                name: target.name.clone(),
                holdout: target.holdout,
                measured: target.measured,
                fitted,
                error: (fitted - target.measured) / target.measured,
                tolerance: target.tolerance,
                sensitive_to: spec
                    .free
                    .iter()
                    .enumerate()
                    .filter(|(i, _)| sens[*i][t].abs() > spec.sensitivity)
                    .map(|(_, p)| p.def.name.to_string())
                    .collect(),
            }
        })
        .collect();
    // At the stated maximum, the free power parameters are where the
    // bound's projection put them (search::configure), not where a target
    // did.
    let at_max = search::projected(spec, &found.x).is_some();
    let params = spec
        .free
        .iter()
        .enumerate()
        .map(|(i, p)| FittedParam {
            held_by_max_power: at_max && p.def.field.starts_with("power."),
            name: p.def.name,
            field: p.def.field,
            unit: p.def.unit,
            start: p.def.get(&search::configure(spec, &found.start)),
            value: p.def.get(&cfg),
            min: p.min,
            max: p.max,
            identifiable: spec
                .targets
                .iter()
                .enumerate()
                .any(|(t, target)| !target.holdout && sens[i][t].abs() > spec.sensitivity),
        })
        .collect();
    Ok(Fit {
        base: spec.base_name.clone(),
        seed: spec.seed,
        number_ios: spec.number_ios,
        objective: found.objective,
        iterations: found.iterations,
        points: found.points,
        power_bound_w: power_bound,
        max_power_w: spec.max_power_w,
        params,
        targets,
        config: cfg,
    })
}

/// `sens[i][t]`: the relative change of target `t` when parameter `i` is
/// nudged ([`search::nudged`]); the nudged drives run in parallel.
fn sensitivities(
    spec: &Spec,
    plan: &Plan,
    x: &[f64],
    at_opt: &[Option<f64>],
) -> Result<Vec<Vec<f64>>, RunError> {
    use rayon::prelude::*;
    let all = vec![true; spec.targets.len()];
    (0..spec.free.len())
        .into_par_iter()
        .map(|i| {
            let y = search::nudged(&spec.free, x, i);
            let cfg = search::configure(spec, &y);
            // A nudge the drive cannot take (an invalid geometry) moves
            // nothing measurable: sensitivity 0 for that parameter.
            let v = search::values(&cfg, spec, plan, &all).unwrap_or_default();
            Ok(at_opt
                .iter()
                .enumerate()
                .map(|(t, base)| match (base, v.get(t).copied().flatten()) {
                    (Some(b), Some(n)) if *b != 0.0 => (n - b) / b,
                    _ => 0.0,
                })
                .collect())
        })
        .collect()
}
