//! The library alone (`ssdsim = { path = ... }`) pulls none of the command
//! line's dependencies: `cargo tree` of the package, offline and from the
//! lock file (no download), has no clap or indicatif, while the program's
//! package (`ssdsim-cli`) has them all. Neither has plotters: the charts
//! are drawn by hand (`chart.rs`), with or without the `plots` feature.

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;

/// The command line's own dependencies, which a library user does not need.
const CLI_ONLY: &[&str] = &[
    "clap",
    "clap_complete",
    "clap_mangen",
    "indicatif",
    "roxmltree",
    "anyhow",
];

/// The packages of `package`'s normal dependency tree (build and dev
/// dependencies left out) with `features` (cargo flags).
fn tree(package: &str, features: &[&str]) -> BTreeSet<String> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| env!("CARGO").into());
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../Cargo.toml");
    let o = Command::new(cargo)
        .args(["tree", "-p", package, "-e", "normal", "--prefix", "none"])
        .args(["--offline", "--locked", "--color", "never"])
        .arg("--manifest-path")
        .arg(&manifest)
        .args(features)
        .output()
        .expect("cargo runs");
    assert!(
        o.status.success(),
        "cargo tree {features:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8(o.stdout)
        .unwrap()
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .map(str::to_string)
        .collect()
}

#[test]
fn the_library_alone_pulls_no_cli_dependency() {
    let lean = tree("ssdsim", &[]);
    // The tree is there (not an empty answer), with what a run needs.
    for p in [
        "ssdsim",
        "ssd-core",
        "ssdsim-host",
        "ssdsim-ftl",
        "ssdsim-power",
        "serde",
        "toml",
    ] {
        assert!(lean.contains(p), "{p} missing from {lean:?}");
    }
    let found: Vec<&&str> = CLI_ONLY.iter().filter(|p| lean.contains(**p)).collect();
    assert!(found.is_empty(), "pulled by the library alone: {found:?}");
    // The program's build has every one of them: the names above are the
    // real ones.
    let full = tree("ssdsim-cli", &[]);
    for p in CLI_ONLY {
        assert!(full.contains(*p), "{p} missing from the program's tree");
    }
    // The `progress` feature brings its crate and nothing of the command
    // line's; `plots` brings no crate at all.
    let progress = tree("ssdsim", &["--features", "progress"]);
    assert!(progress.contains("indicatif") && !progress.contains("clap"));
    let plots = tree("ssdsim", &["--features", "plots,html"]);
    assert_eq!(plots, lean, "the plots and html features pull no crate");
    // No plotting crate anywhere in the program's build.
    assert!(!full.contains("plotters") && !lean.contains("plotters"));
}
