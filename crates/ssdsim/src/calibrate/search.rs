//! The simulated value of each target for a candidate drive, and the
//! fit over the free parameters.
//!
//! **The search** has three steps, deterministic for a seed (ties go to
//! the point listed first, every run uses the calibration's seed, and the
//! parallel results are gathered in order, so the number of threads
//! changes nothing):
//!
//! 1. *Screening of the integer parameters* (channels, ways, dies,
//!    planes): every combination of their powers of two within the bounds,
//!    the bounds and the base's value (or, past 24 combinations, each
//!    parameter's values with the others at the base's). At each, the
//!    continuous parameters are fitted coarsely (4 iterations of step 2).
//! 2. *Refinement* of the 2 best screened points: step 2 until it
//!    converges or `max_iterations`.
//! 3. *Integer moves*: each integer parameter one unit up and down, the
//!    continuous ones refitted (step 2); the best that lowers the
//!    objective is taken, until none does.
//!
//! The continuous fit is Levenberg–Marquardt on the log of each parameter
//! (so a step is a factor, and bounds are kept by clamping), with the
//! Jacobian by forward differences of 2 % whose columns are simulated in
//! parallel on rayon's pool, a damping that shrinks by 3 after a step that
//! lowers the objective and grows by 4 after one that does not, and steps
//! capped at x4. It stops when a step lowers the objective by less than
//! 1e-6 of it. A least-squares method fits the problem: the objective is a
//! sum of squared residuals, and its Jacobian follows the valleys where
//! parameters trade off (a faster bus for a slower array read at QD1)
//! that a coordinate search crawls along. Points already simulated are
//! kept and not run again.
//!
//! **The objective** is the sum of squared residuals, one per fitted
//! target, `sqrt(w) * ln(simulated / measured) / tol`, and, with a stated
//! maximum power, `1e5 * excess / max` where the drive's power bound is
//! above it.

use super::params::{self, FreeParam, Kind};
use super::targets::{Probe, Spec, Target};
use crate::{fio_json, run_config, state, RunError, Ssd};
use rayon::prelude::*;
use serde_json::Value;
use ssdsim_host::config::SsdConfig;
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

/// One simulation a set of targets reads: a job and its preconditioning.
#[derive(Clone, Debug, PartialEq)]
struct RunKey {
    job: String,
    precondition: String,
    power: bool,
}

/// What the targets need simulated, deduplicated.
pub struct Plan {
    runs: Vec<RunKey>,
    /// For each target, the run it reads (none for a closed form).
    of_target: Vec<Option<usize>>,
}

impl Plan {
    /// The runs of `targets`.
    pub fn new(targets: &[Target]) -> Plan {
        let mut runs: Vec<RunKey> = Vec::new();
        let mut of_target = Vec::new();
        for t in targets {
            let Probe::Run {
                job,
                precondition,
                metric,
                ..
            } = &t.probe
            else {
                of_target.push(None);
                continue;
            };
            let power = metric == "power_w.mean";
            let i = match runs
                .iter()
                .position(|r| &r.job == job && &r.precondition == precondition)
            {
                Some(i) => {
                    runs[i].power |= power;
                    i
                }
                None => {
                    runs.push(RunKey {
                        job: job.clone(),
                        precondition: precondition.clone(),
                        power,
                    });
                    runs.len() - 1
                }
            };
            of_target.push(Some(i));
        }
        Plan { runs, of_target }
    }
}

/// A run's results: its fio JSON entries and its mean power.
struct RunOut {
    jobs: Vec<Value>,
    power_w: Option<f64>,
}

impl RunOut {
    /// The entry named `name` (the only one of its name: the targets file
    /// was checked so), or the first.
    fn entry(&self, name: Option<&str>) -> Option<&Value> {
        match name {
            None => self.jobs.first(),
            Some(n) => self
                .jobs
                .iter()
                .find(|j| j.get("jobname").and_then(Value::as_str) == Some(n)),
        }
    }
}

/// A prepared run: its configuration, options and fio output jobs.
type Prepared = (SsdConfig, crate::RunOptions, Vec<crate::fio::OutputJob>);

/// One run of `cfg` as it will be simulated: the job applied as `--fio`
/// applies it, with the calibration's seed and run length (`number_ios`
/// requests for each group of jobs that run side by side: the jobs and
/// clones between two `stonewall`s share them).
fn prepare(cfg: &SsdConfig, run: &RunKey, spec: &Spec) -> Result<Prepared, RunError> {
    let ssd = Ssd::builder()
        .config(cfg.clone())
        .seed(spec.seed)
        .precondition(&run.precondition)
        .power_model(run.power)
        .build()?;
    let mut c = ssd.config().clone();
    let name = "<target job>";
    let jobs = crate::fio::parse_jobs_str(&run.job, name, &c.workload)?;
    let clones = jobs.iter().map(|j| j.1.numjobs.max(1) as u64).sum::<u64>();
    let n = spec.number_ios.to_string();
    let flags: Vec<(&str, String)> = if clones > 1 {
        Vec::new()
    } else {
        vec![("number_ios", n)]
    };
    let out = crate::apply_fio_jobs(&mut c, jobs, name, &flags, &mut |_| {})?;
    // The flows that start together: from one stonewall to the next.
    let mut side_by_side = Vec::new();
    for (i, f) in c.flows.iter().enumerate() {
        if i == 0 || f.stonewall {
            side_by_side.push(0u64);
        }
        *side_by_side.last_mut().expect("a group") += 1;
    }
    let mut group = 0;
    for (i, f) in c.flows.iter_mut().enumerate() {
        if i > 0 && f.stonewall {
            group += 1;
        }
        if let Some(w) = &mut f.workload {
            w.number_ios = Some(spec.number_ios.div_ceil(side_by_side[group]));
            w.time_based = false;
        }
        f.ramp_time = None;
        f.runtime = None;
        f.start_delay = None;
    }
    // The run length is the calibration's: a job's ramp and runtime (a
    // real test's minutes) are not simulated.
    c.sim.ramp_time = None;
    c.sim.time_limit = None;
    Ok((c, ssd.options().clone(), out))
}

/// Simulate a prepared run: its fio JSON entries and mean power.
fn simulate(
    c: &SsdConfig,
    opts: &crate::RunOptions,
    jobs: &[crate::fio::OutputJob],
) -> Result<RunOut, RunError> {
    let out = run_config(c, opts)?;
    let doc = fio_json::fio_json_run(jobs, c, &out.report, &out.latency);
    let power_w = out
        .report
        .extra
        .get("power_w")
        .and_then(|p| p.get("mean"))
        .and_then(Value::as_f64);
    Ok(RunOut {
        jobs: doc["jobs"].as_array().cloned().unwrap_or_default(),
        power_w,
    })
}

/// Simulate the runs of `cfg` that `needed` says, in parallel; runs that
/// precondition the same drive alike share one preconditioning (as a
/// sweep's points do: the same results as preconditioning each).
fn simulate_all(
    cfg: &SsdConfig,
    spec: &Spec,
    plan: &Plan,
    needed: &[bool],
) -> Result<Vec<Option<RunOut>>, RunError> {
    let prepared: Vec<Option<Prepared>> = plan
        .runs
        .iter()
        .zip(needed)
        .map(|(r, &n)| n.then(|| prepare(cfg, r, spec)).transpose())
        .collect::<Result<_, _>>()?;
    let keys = prepared
        .iter()
        .flatten()
        .filter_map(|(c, _, _)| state::shape_of(c))
        .map(|s| state::shape_key(&s));
    let cache = Arc::new(state::StateCache::new(keys));
    prepared
        .par_iter()
        .map(|p| {
            p.as_ref()
                .map(|(c, o, jobs)| {
                    let mut o = o.clone();
                    o.drive_state.shared = Some(Arc::clone(&cache));
                    simulate(c, &o, jobs)
                })
                .transpose()
        })
        .collect()
}

/// The drive's idle power, W, in closed form (see [`Probe::IdlePower`]):
/// the power model's own ([`power::idle_power_w`]).
fn idle_power(cfg: &SsdConfig) -> Result<f64, RunError> {
    Ok(power::idle_power_w(&cfg.validate()?)?)
}

/// An upper bound of the drive's power under any workload, W: the power
/// model's own ([`power::max_power_w`]: every die busy on every plane at
/// its highest current, every bus, the CPU, the DRAM and the link active).
pub fn max_power_bound(cfg: &SsdConfig) -> Result<f64, RunError> {
    Ok(power::max_power_w(&cfg.validate()?)?)
}

/// The drive of the point `x`: the base with the free parameters set and,
/// with a stated maximum power the drive's bound exceeds, the free power
/// parameters (`power.*`) moved toward their lower bounds by one factor
/// `s`, the one that brings the bound to the maximum. The bound is convex
/// in them (sums and maxima of currents), so at `min + s (x - min)` it is
/// at most `(1 - s) bound(min) + s bound(x)`, the maximum. Where even
/// their lower bounds exceed it, the drive is left as it is (the
/// objective's penalty and the refusal after the fit then name it).
pub fn configure(spec: &Spec, x: &[f64]) -> SsdConfig {
    projected(spec, x).unwrap_or_else(|| params::apply(&spec.base, &spec.free, x))
}

/// [`configure`]'s drive when the bound moved the power parameters, else
/// `None`.
pub fn projected(spec: &Spec, x: &[f64]) -> Option<SsdConfig> {
    let cfg = params::apply(&spec.base, &spec.free, x);
    let max = spec.max_power_w?;
    let power: Vec<usize> = (0..spec.free.len())
        .filter(|&i| spec.free[i].def.field.starts_with("power."))
        .collect();
    let b1 = max_power_bound(&cfg).ok()?;
    if b1 <= max || power.is_empty() {
        return None;
    }
    let mut low = x.to_vec();
    for &i in &power {
        low[i] = spec.free[i].min;
    }
    let b0 = max_power_bound(&params::apply(&spec.base, &spec.free, &low)).ok()?;
    if b0 >= max {
        return None;
    }
    // A hair under the factor: the fields round to 1e-6 of their unit.
    let s = (max - b0) / (b1 - b0) * (1.0 - 1e-6);
    let mut y = x.to_vec();
    for &i in &power {
        y[i] = low[i] + s * (x[i] - low[i]);
    }
    Some(params::apply(&spec.base, &spec.free, &y))
}

/// Each target's simulated value for `cfg` (`None` where `want` is false),
/// its runs simulated in parallel.
pub fn values(
    cfg: &SsdConfig,
    spec: &Spec,
    plan: &Plan,
    want: &[bool],
) -> Result<Vec<Option<f64>>, RunError> {
    let needed: Vec<bool> = (0..plan.runs.len())
        .map(|r| (0..want.len()).any(|t| want[t] && plan.of_target[t] == Some(r)))
        .collect();
    let outs = simulate_all(cfg, spec, plan, &needed)?;
    let mut v = Vec::with_capacity(spec.targets.len());
    for (t, target) in spec.targets.iter().enumerate() {
        if !want[t] {
            v.push(None);
            continue;
        }
        let x = match &target.probe {
            Probe::IdlePower => idle_power(cfg)?,
            Probe::Capacity => cfg.validate()?.logical_bytes() as f64 / 1e9,
            Probe::Run {
                metric,
                scale,
                entry,
                ..
            } => {
                let out = outs[plan.of_target[t].expect("a run")]
                    .as_ref()
                    .expect("simulated");
                let raw = if metric == "power_w.mean" {
                    out.power_w.ok_or_else(|| {
                        RunError::Input(format!("{}: the run has no power figure", target.name))
                    })?
                } else {
                    let e = out.entry(entry.as_deref()).ok_or_else(|| {
                        RunError::Input(format!(
                            "target \"{}\": simulated run: no entry {entry:?}",
                            target.name
                        ))
                    })?;
                    super::targets::metric_value(e, metric).map_err(|e| {
                        RunError::Input(format!("target \"{}\": simulated run: {e}", target.name))
                    })?
                };
                raw * scale
            }
        };
        v.push(Some(x));
    }
    Ok(v)
}

/// The residuals of simulated values: for each fitted target
/// `sqrt(w) * ln(simulated / measured) / tol`, then the power bound's
/// excess over the stated maximum, `1e5 * excess / max` (0 under it).
/// `None` where a value is not a positive number.
pub fn residuals(spec: &Spec, v: &[Option<f64>], power_bound: f64) -> Option<Vec<f64>> {
    let mut r = Vec::new();
    for (t, x) in spec.targets.iter().zip(v) {
        if t.holdout {
            continue;
        }
        let x = (*x)?;
        if !(x > 0.0 && x.is_finite()) {
            return None;
        }
        r.push(t.weight.sqrt() * (x / t.measured).ln() / t.tolerance);
    }
    if let Some(max) = spec.max_power_w {
        r.push(1e5 * ((power_bound - max) / max).max(0.0));
    }
    Some(r)
}

fn sum_sq(r: &[f64]) -> f64 {
    r.iter().map(|x| x * x).sum()
}

/// The search's result.
pub struct Found {
    /// The free parameters' values.
    pub x: Vec<f64>,
    /// Their values at the start.
    pub start: Vec<f64>,
    /// The objective there.
    pub objective: f64,
    /// Iterations run.
    pub iterations: u32,
    /// Candidate drives simulated (points, not runs).
    pub points: usize,
}

/// A point as its configuration stores it (rounded by each field).
fn key(spec: &Spec, x: &[f64]) -> Vec<u64> {
    let c = configure(spec, x);
    spec.free.iter().map(|p| p.def.get(&c).to_bits()).collect()
}

/// Evaluates points, keeping the ones seen.
pub struct Evaluator<'a> {
    spec: &'a Spec,
    plan: &'a Plan,
    fitted: Vec<bool>,
    seen: Mutex<BTreeMap<Vec<u64>, Option<Vec<f64>>>>,
}

impl<'a> Evaluator<'a> {
    /// Over `spec`'s fitted targets.
    pub fn new(spec: &'a Spec, plan: &'a Plan) -> Evaluator<'a> {
        Evaluator {
            spec,
            plan,
            fitted: spec.targets.iter().map(|t| !t.holdout).collect(),
            seen: Mutex::new(BTreeMap::new()),
        }
    }

    /// The residuals at `x` (`None` where the drive cannot be simulated).
    fn at(&self, x: &[f64]) -> Option<Vec<f64>> {
        let k = key(self.spec, x);
        if let Some(r) = self.seen.lock().expect("not poisoned").get(&k) {
            return r.clone();
        }
        let cfg = configure(self.spec, x);
        let r = match (
            values(&cfg, self.spec, self.plan, &self.fitted),
            max_power_bound(&cfg),
        ) {
            (Ok(v), Ok(b)) => residuals(self.spec, &v, b),
            _ => None,
        };
        self.seen.lock().expect("not poisoned").insert(k, r.clone());
        r
    }

    /// Points simulated so far.
    pub fn points(&self) -> usize {
        self.seen.lock().expect("not poisoned").len()
    }
}

/// The finite-difference step of the Jacobian, on the log scale (2 %).
const FD_STEP: f64 = 0.02;

/// The largest change of one parameter in one step, on the log scale (x4).
const MAX_STEP: f64 = 1.386;

/// `x` with its continuous parameters moved by `delta` (log scale),
/// within the bounds.
fn stepped(free: &[FreeParam], x: &[f64], cont: &[usize], delta: &[f64]) -> Vec<f64> {
    let mut y = x.to_vec();
    for (k, &i) in cont.iter().enumerate() {
        let d = delta[k].clamp(-MAX_STEP, MAX_STEP);
        y[i] = (x[i] * d.exp()).clamp(free[i].min, free[i].max);
    }
    y
}

/// Solve `a x = b` (a small symmetric positive definite system) by
/// Gaussian elimination with partial pivoting; `None` if singular.
fn solve(mut a: Vec<Vec<f64>>, mut b: Vec<f64>) -> Option<Vec<f64>> {
    let n = b.len();
    for c in 0..n {
        let p = (c..n).max_by(|&i, &j| a[i][c].abs().total_cmp(&a[j][c].abs()))?;
        if a[p][c].abs() < 1e-300 {
            return None;
        }
        a.swap(c, p);
        b.swap(c, p);
        let (top, rest) = a.split_at_mut(c + 1);
        let pivot = &top[c];
        for (k, row) in rest.iter_mut().enumerate() {
            let f = row[c] / pivot[c];
            for (x, p) in row[c..].iter_mut().zip(&pivot[c..]) {
                *x -= f * p;
            }
            b[c + 1 + k] -= f * b[c];
        }
    }
    let mut x = vec![0.0; n];
    for c in (0..n).rev() {
        let s: f64 = (c + 1..n).map(|k| a[c][k] * x[k]).sum();
        x[c] = (b[c] - s) / a[c][c];
    }
    Some(x)
}

/// Levenberg–Marquardt over the continuous parameters (log scale; the
/// integers stay), the Jacobian by forward differences of [`FD_STEP`]
/// (backward at an upper bound), its columns simulated in parallel; at
/// most `max_it` iterations. Returns the point, its objective and the
/// iterations run.
fn levenberg_marquardt(ev: &Evaluator, mut x: Vec<f64>, max_it: u32) -> (Vec<f64>, f64, u32) {
    let free = &ev.spec.free;
    let cont: Vec<usize> = (0..free.len())
        .filter(|&i| free[i].def.kind == Kind::Continuous)
        .collect();
    let Some(mut r) = ev.at(&x) else {
        return (x, f64::INFINITY, 0);
    };
    let mut f = sum_sq(&r);
    let mut lambda = 1e-2;
    let mut it = 0;
    while it < max_it && !cont.is_empty() && f > 1e-9 {
        it += 1;
        let cols: Vec<Vec<f64>> = cont
            .par_iter()
            .map(|&i| {
                let h = if x[i] * FD_STEP.exp() <= free[i].max {
                    FD_STEP
                } else {
                    -FD_STEP
                };
                let mut y = x.clone();
                y[i] = x[i] * h.exp();
                // A column whose drive cannot run moves nothing.
                ev.at(&y).map_or(vec![0.0; r.len()], |ry| {
                    ry.iter().zip(&r).map(|(a, b)| (a - b) / h).collect()
                })
            })
            .collect();
        let n = cont.len();
        let jtj: Vec<Vec<f64>> = (0..n)
            .map(|a| (0..n).map(|b| dot(&cols[a], &cols[b])).collect())
            .collect();
        let jtr: Vec<f64> = (0..n).map(|a| -dot(&cols[a], &r)).collect();
        let mut accepted = false;
        for _ in 0..8 {
            let mut m = jtj.clone();
            for (k, row) in m.iter_mut().enumerate() {
                row[k] += lambda * jtj[k][k].max(1e-9);
            }
            let Some(delta) = solve(m, jtr.clone()) else {
                lambda *= 4.0;
                continue;
            };
            let y = stepped(free, &x, &cont, &delta);
            match ev.at(&y) {
                Some(ry) if sum_sq(&ry) < f => {
                    x = y;
                    r = ry;
                    let old = f;
                    f = sum_sq(&r);
                    lambda = (lambda / 3.0).max(1e-7);
                    accepted = old - f > 1e-6 * old;
                    break;
                }
                _ => lambda *= 4.0,
            }
        }
        if !accepted {
            break;
        }
    }
    (x, f, it)
}

fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// The integer parameters' screening values: the powers of two within the
/// bounds, the bounds and the base's value.
fn screen_values(p: &FreeParam, start: f64) -> Vec<f64> {
    let mut v = vec![p.min, p.max, start];
    let mut k = 1.0;
    while k <= p.max {
        if k >= p.min {
            v.push(k);
        }
        k *= 2.0;
    }
    v.sort_by(f64::total_cmp);
    v.dedup();
    v
}

/// The indices of the integer parameters.
fn integers(free: &[FreeParam]) -> Vec<usize> {
    (0..free.len())
        .filter(|&i| free[i].def.kind == Kind::Integer)
        .collect()
}

/// The screening points: every combination of the integer parameters'
/// screening values (the continuous ones at the start), or, when there are
/// more than [`MAX_COMBINATIONS`], each integer parameter's values with the
/// others at the start.
fn screening(free: &[FreeParam], start: &[f64]) -> Vec<Vec<f64>> {
    let ints = integers(free);
    let values: Vec<Vec<f64>> = ints
        .iter()
        .map(|&i| screen_values(&free[i], start[i]))
        .collect();
    let product: usize = values.iter().map(Vec::len).product();
    let mut points = vec![start.to_vec()];
    if product <= MAX_COMBINATIONS {
        for (k, &i) in ints.iter().enumerate() {
            points = points
                .iter()
                .flat_map(|p| {
                    values[k].iter().map(move |&v| {
                        let mut q = p.clone();
                        q[i] = v;
                        q
                    })
                })
                .collect();
        }
    } else {
        for (k, &i) in ints.iter().enumerate() {
            for &v in &values[k] {
                let mut q = start.to_vec();
                q[i] = v;
                if !points.contains(&q) {
                    points.push(q);
                }
            }
        }
    }
    points
}

/// The most combinations of integer values screened together.
const MAX_COMBINATIONS: usize = 24;

/// Iterations of a screening point's coarse fit.
const SCREEN_ITERATIONS: u32 = 4;

/// How many screened points are refined.
const REFINED: usize = 2;

/// The integer values of `x`, for progress lines.
fn int_label(free: &[FreeParam], x: &[f64]) -> String {
    let ints: Vec<String> = integers(free)
        .iter()
        .map(|&i| format!("{}={}", free[i].def.name, x[i]))
        .collect();
    if ints.is_empty() {
        "the continuous parameters".into()
    } else {
        ints.join(" ")
    }
}

/// Fit (see the module's documentation): screen the integer parameters,
/// refine the best, then move each integer by one unit while that helps.
/// Starts from the base's values (clamped to the bounds).
pub fn search(ev: &Evaluator, progress: &(dyn Fn(&str) + Sync)) -> Result<Found, RunError> {
    let spec = ev.spec;
    let free = &spec.free;
    let start: Vec<f64> = free.iter().map(|p| p.start(&spec.base)).collect();
    // The start must run: its error is the user's (a bad base or target).
    let start_cfg = configure(spec, &start);
    values(&start_cfg, spec, ev.plan, &ev.fitted)?;
    let say = |what: &str, x: &[f64], f: f64| {
        progress(&format!(
            "calibrate: {what} {}: objective {f:.4e} ({} drives simulated)",
            int_label(free, x),
            ev.points()
        ))
    };
    let mut iterations = 0;
    let mut screened: Vec<(Vec<f64>, f64)> = Vec::new();
    for p in screening(free, &start) {
        let (x, f, it) = levenberg_marquardt(ev, p, SCREEN_ITERATIONS.min(spec.max_iterations));
        iterations += it;
        say("screened", &x, f);
        screened.push((x, f));
    }
    // Stable: equal objectives keep the screening order.
    screened.sort_by(|a, b| a.1.total_cmp(&b.1));
    let mut best: Option<(Vec<f64>, f64)> = None;
    for (x, _) in screened.into_iter().take(REFINED) {
        let (x, f, it) = levenberg_marquardt(ev, x, spec.max_iterations);
        iterations += it;
        say("refined", &x, f);
        if best.as_ref().is_none_or(|b| f < b.1) {
            best = Some((x, f));
        }
    }
    let (mut x, mut objective) = best.expect("one screening point at least");
    // Each integer one unit up and down, the continuous ones refitted; the
    // best that lowers the objective is taken, until none does (or after
    // `max_iterations` moves).
    for _ in 0..spec.max_iterations {
        let cands: Vec<Vec<f64>> = integers(free)
            .iter()
            .flat_map(|&i| {
                [1.0, -1.0].map(|d| {
                    let mut y = x.clone();
                    y[i] = (x[i] + d).clamp(free[i].min, free[i].max);
                    y
                })
            })
            .filter(|y| key(spec, y) != key(spec, &x))
            .collect();
        let fits: Vec<(Vec<f64>, f64, u32)> = cands
            .into_par_iter()
            .map(|y| levenberg_marquardt(ev, y, spec.max_iterations))
            .collect();
        iterations += fits.iter().map(|f| f.2).sum::<u32>();
        let Some((y, f, _)) = fits
            .into_iter()
            .fold(None, |b: Option<(Vec<f64>, f64, u32)>, c| match b {
                Some(b) if b.1 <= c.1 => Some(b),
                _ => Some(c),
            })
            .filter(|c| c.1 < objective)
        else {
            break;
        };
        x = y;
        objective = f;
        say("moved to", &x, f);
    }
    Ok(Found {
        x,
        start,
        objective,
        iterations,
        points: ev.points(),
    })
}

/// The parameter moved by a sensitivity step: one unit (down at the upper
/// bound), or x1.05 (/1.05 at the upper bound).
pub fn nudged(free: &[FreeParam], x: &[f64], i: usize) -> Vec<f64> {
    let mut y = x.to_vec();
    let p = &free[i];
    y[i] = match p.def.kind {
        Kind::Integer if x[i] + 1.0 <= p.max => x[i] + 1.0,
        Kind::Integer => (x[i] - 1.0).max(p.min),
        Kind::Continuous if x[i] * 1.05 <= p.max => x[i] * 1.05,
        Kind::Continuous => (x[i] / 1.05).max(p.min),
    };
    y
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn solve_finds_the_solution_and_refuses_a_singular_system() {
        let a = vec![
            vec![4.0, 1.0, 0.0],
            vec![1.0, 3.0, 1.0],
            vec![0.0, 1.0, 2.0],
        ];
        let x = [1.0, -2.0, 3.0];
        let b: Vec<f64> = a.iter().map(|r| dot(r, &x)).collect();
        let got = solve(a, b).unwrap();
        for (g, w) in got.iter().zip(x) {
            assert!((g - w).abs() < 1e-12, "{got:?}");
        }
        assert!(solve(vec![vec![1.0, 2.0], vec![2.0, 4.0]], vec![1.0, 2.0]).is_none());
    }

    #[test]
    fn screening_takes_powers_of_two_the_bounds_and_the_start() {
        let p = FreeParam {
            def: params::find("channels").unwrap(),
            min: 3.0,
            max: 12.0,
        };
        assert_eq!(screen_values(&p, 5.0), [3.0, 4.0, 5.0, 8.0, 12.0]);
        // Two integer parameters of 5 values each: 25 combinations, over
        // the cap, so one parameter at a time (the start once).
        let q = FreeParam {
            def: params::find("ways").unwrap(),
            min: 3.0,
            max: 12.0,
        };
        let pts = screening(&[p.clone(), q], &[5.0, 5.0]);
        assert_eq!(pts.len(), 1 + 4 + 4);
        let pts = screening(&[p], &[5.0]);
        assert_eq!(pts.len(), 5, "each value, the start's among them");
    }
}
