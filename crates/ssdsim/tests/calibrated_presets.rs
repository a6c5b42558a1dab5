//! The device presets calibrated with `ssdsim calibrate` (the studies' and
//! `samsung-980pro`) still meet the
//! targets they were fitted to: each targets file under
//! `examples/calibrate/studies/` names its preset as the base, and the
//! preset as shipped, simulated under each fitted target's test (the same
//! runs, seed and run length the fit used), is within that target's
//! tolerance, with its power bound at or under the file's `max_power_w`.
//! Holdout targets are predictions and are not checked here (the report in
//! docs/reproductions.md gives their errors). `park-old`'s file is the one
//! the fit could not meet (its vendor figures are out of the model's reach
//! inside the file's bounds): its preset keeps the hand fit, and the test
//! checks that it still misses those figures, so a change that brings them
//! into reach shows up here.
//!
//! Re-running the fit itself takes 10-70 s per drive in a release build,
//! too slow for a debug-build test; this checks its result instead.

use ssdsim::calibrate::{self, search};
use std::path::{Path, PathBuf};

fn studies() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/calibrate/studies")
}

/// The targets files this test covers, by preset name.
const COVERED: &[&str] = &[
    "sun-ssd-i",
    "sun-ssd-s",
    "sun-ssd-k",
    "park-old",
    "park-mlc",
    "park-mtron",
    "park-tgn",
    "samsung-980pro",
];

/// Simulate the preset `name` under its targets file's fitted targets and
/// check each within its tolerance, but for those named in `missed`, which
/// must be outside it.
fn check(name: &str, missed: &[&str]) {
    let path = studies().join(format!("{name}.toml"));
    let spec = calibrate::load(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    assert_eq!(spec.base_name, name, "{}: base", path.display());
    let plan = search::Plan::new(&spec.targets);
    let want: Vec<bool> = spec.targets.iter().map(|t| !t.holdout).collect();
    let values =
        search::values(&spec.base, &spec, &plan, &want).unwrap_or_else(|e| panic!("{name}: {e}"));
    let mut fails = Vec::new();
    let mut fitted = 0;
    for (t, v) in spec.targets.iter().zip(&values) {
        if t.holdout {
            assert!(v.is_none());
            continue;
        }
        fitted += 1;
        let v = v.expect("a fitted target's value");
        let err = (v - t.measured) / t.measured;
        let within = err.abs() <= t.tolerance;
        if missed.contains(&t.name.as_str()) {
            if within {
                fails.push(format!(
                    "{}: simulated {v:.4} is now within {:.1} % of {}: calibrate the preset",
                    t.name,
                    t.tolerance * 100.0,
                    t.measured
                ));
            }
        } else if !within {
            fails.push(format!(
                "{}: simulated {v:.4} against {} (error {:+.2} %, tolerance {:.1} %)",
                t.name,
                t.measured,
                err * 100.0,
                t.tolerance * 100.0
            ));
        }
    }
    assert!(fitted >= 2, "{name}: {fitted} fitted targets");
    if let Some(max) = spec.max_power_w {
        let bound = search::max_power_bound(&spec.base).unwrap();
        if bound > max * (1.0 + 1e-9) {
            fails.push(format!("power bound {bound:.4} W over max_power_w {max} W"));
        }
    }
    assert!(fails.is_empty(), "{name}: {}", fails.join("; "));
}

#[test]
fn every_targets_file_is_covered() {
    let mut files: Vec<String> = std::fs::read_dir(studies())
        .unwrap()
        .filter_map(|e| {
            let p = e.unwrap().path();
            (p.extension()? == "toml").then(|| p.file_stem()?.to_str().map(String::from))?
        })
        .collect();
    files.sort();
    let mut covered: Vec<String> = COVERED.iter().map(|s| s.to_string()).collect();
    covered.sort();
    assert_eq!(files, covered, "add a test for each targets file");
}

#[test]
fn sun_ssd_i_meets_its_targets() {
    check("sun-ssd-i", &[]);
}

#[test]
fn sun_ssd_s_meets_its_targets() {
    check("sun-ssd-s", &[]);
}

#[test]
fn sun_ssd_k_meets_its_targets() {
    check("sun-ssd-k", &[]);
}

#[test]
fn park_mlc_meets_its_targets() {
    check("park-mlc", &[]);
}

#[test]
fn park_mtron_meets_its_targets() {
    check("park-mtron", &[]);
}

#[test]
fn park_tgn_meets_its_targets() {
    check("park-tgn", &[]);
}

/// The 1 TB Samsung 980 PRO's sequential figures and average power, under
/// its 8.9 W maximum (a 1 TB drive: its fill is the test's slowest part).
#[test]
fn samsung_980pro_meets_its_targets() {
    check("samsung-980pro", &[]);
}

/// OLD's vendor 60/45 MB/s are out of reach with tPROG within a factor of
/// two of SLC's typical (the fit's closest point: read -14 %, write +18 %);
/// the hand-fitted preset (one channel at 40 MB/s) misses both.
#[test]
fn park_old_keeps_its_hand_fit_and_misses_the_vendor_figures() {
    check("park-old", &["seq-read", "seq-write"]);
}
