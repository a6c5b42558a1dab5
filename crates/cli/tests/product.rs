//! The product surface a new user meets first: `--version` with the git
//! commit, shell completions and the manual page generated from the flags,
//! and a drive saved by `--save-state` and loaded by `--load-state`.

use std::process::Command;

mod common;
use common::ssdsim;

/// `ssdsim --version`: the version and the commit the binary was built from
/// (that of this checkout, when the tests run in one).
#[test]
fn version_names_the_commit() {
    let (code, out, err) = ssdsim(&["--version"]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.starts_with(&format!("ssdsim {} (commit ", env!("CARGO_PKG_VERSION"))),
        "{out}"
    );
    let head = Command::new("git")
        .args(["rev-parse", "--short", "HEAD"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string());
    let commit = out
        .trim()
        .rsplit("(commit ")
        .next()
        .unwrap()
        .trim_end_matches(')');
    match head {
        // Built from this checkout (a commit made after the build would
        // rebuild: build.rs watches HEAD).
        Some(h) if std::env::var("SSDSIM_GIT_COMMIT").is_err() => assert_eq!(commit, h),
        _ => assert!(!commit.is_empty()),
    }
}

/// Completions for each shell name the subcommands and flags.
#[test]
fn completions_cover_the_subcommands() {
    let (code, out, err) = ssdsim(&["completions", "bash"]);
    assert_eq!(code, 0, "{err}");
    for w in [
        "run",
        "sweep",
        "merge",
        "trace",
        "mapping-size",
        "presets",
        "completions",
        "man",
        "--output-format",
        "--runtime",
    ] {
        assert!(out.contains(w), "bash completion lacks {w}");
    }
    for shell in ["zsh", "fish", "elvish", "powershell"] {
        let (code, out, err) = ssdsim(&["completions", shell]);
        assert_eq!(code, 0, "{shell}: {err}");
        assert!(out.contains("mapping-size"), "{shell}");
    }
    let (code, _, err) = ssdsim(&["completions", "tcsh"]);
    assert_eq!(code, 2, "{err}");
    // --out DIR writes the file a shell loads.
    let d = std::env::temp_dir().join(format!("ssdsim-compl-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    let (code, _, err) = ssdsim(&["completions", "bash", "--out", d.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    assert!(std::fs::read_to_string(d.join("ssdsim.bash"))
        .unwrap()
        .contains("mapping-size"));
    std::fs::remove_dir_all(&d).unwrap();
}

/// The manual page: roff with NAME, SYNOPSIS and the subcommands; --out
/// writes one page per subcommand too.
#[test]
fn man_page_has_its_sections() {
    let (code, out, err) = ssdsim(&["man"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains(".TH ssdsim 1"), "{out}");
    for s in [".SH NAME", ".SH SYNOPSIS", ".SH SUBCOMMANDS", ".SH VERSION"] {
        assert!(out.contains(s), "no {s}");
    }
    assert!(
        out.contains("ssdsim\\-run") || out.contains("ssdsim-run"),
        "{out}"
    );
    let d = std::env::temp_dir().join(format!("ssdsim-man-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    let (code, _, err) = ssdsim(&["man", "--out", d.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    let run = std::fs::read_to_string(d.join("ssdsim-run.1")).unwrap();
    assert!(
        run.contains(".SH NAME") && run.contains("time\\-limit"),
        "{run}"
    );
    assert!(d.join("ssdsim.1").exists());
    std::fs::remove_dir_all(&d).unwrap();
}

/// The text report says what a newcomer needs: reads of an empty drive are
/// flagged (and no WAF is made up for a run without writes), a trace's
/// format is named with whether it was detected, and nothing reports a
/// drain that did not happen.
#[test]
fn text_report_explains_itself() {
    let (rc, out, err) = ssdsim(&["run", "--rw", "randread", "--number_ios", "500"]);
    assert_eq!(rc, 0, "{err}");
    assert!(out.contains("WAF n/a (no host writes)"), "{out}");
    assert!(out.contains("the drive was empty"), "{out}");
    assert!(!out.contains("WAF 0.000") && !out.contains("null"), "{out}");
    let (rc, out, err) = ssdsim(&[
        "run",
        "--rw",
        "randread",
        "--number_ios",
        "500",
        "--precondition",
        "fill",
    ]);
    assert_eq!(rc, 0, "{err}");
    assert!(!out.contains("the drive was empty"), "{out}");
    // A few MSR Cambridge records (Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime).
    let dir = std::env::temp_dir().join(format!("ssdsim-text-report-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("tiny.csv");
    let lines: String = (0..20)
        .map(|i| {
            format!(
                "{},hm,1,{},{},4096,100\n",
                128166372003061629u64 + i * 10_000,
                if i % 2 == 0 { "Write" } else { "Read" },
                i * 4096
            )
        })
        .collect();
    std::fs::write(&file, lines).unwrap();
    let (rc, out, err) = ssdsim(&["run", "--trace", file.to_str().unwrap()]);
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(rc, 0, "{err}");
    assert!(out.contains("(msr format, detected)"), "{out}");
}

/// A named workload that a flag overrides says so in its label; one only
/// shortened by `--number_ios` keeps its name.
#[test]
fn sweep_labels_overridden_workloads() {
    let dir = std::env::temp_dir().join(format!("ssdsim-sweep-label-{}", std::process::id()));
    let jsonl = dir.join("rows.jsonl");
    std::fs::create_dir_all(&dir).unwrap();
    let (rc, _, err) = ssdsim(&[
        "sweep",
        "--workload",
        "seq-read,rand-write",
        "--rw",
        "randwrite",
        "--number_ios",
        "100",
        "--no-progress",
        "--jsonl",
        jsonl.to_str().unwrap(),
    ]);
    let rows = std::fs::read_to_string(&jsonl).unwrap_or_default();
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(rc, 0, "{err}");
    assert!(
        rows.contains(r#"["workload","seq-read (rw=randwrite)"]"#),
        "{rows}"
    );
    assert!(rows.contains(r#"["workload","rand-write"]"#), "{rows}");
}

/// The energy breakdown's bars carry their names and values; a power plot
/// of many samples stays small (merged into time-weighted means, said in its
/// title).
#[test]
fn power_plots_are_labelled_and_thinned() {
    let dir = std::env::temp_dir().join(format!("ssdsim-plots-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (bd, pw) = (dir.join("breakdown.svg"), dir.join("power.svg"));
    let (rc, _, err) = ssdsim(&[
        "run",
        "--rw",
        "randwrite",
        "--number_ios",
        "20000",
        "--power-sample",
        "1us",
        "--plot-breakdown",
        bd.to_str().unwrap(),
        "--plot-power",
        pw.to_str().unwrap(),
    ]);
    let (b, p) = (
        std::fs::read_to_string(&bd).unwrap_or_default(),
        std::fs::read_to_string(&pw).unwrap_or_default(),
    );
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(rc, 0, "{err}");
    for label in [
        ">flash program<",
        ">flash transfer<",
        ">controller CPU<",
        ">DRAM<",
        ">host link<",
        ">component<",
        ">energy (J)<",
    ] {
        assert!(b.contains(label), "breakdown lacks {label:?}");
    }
    assert_eq!(
        b.matches("<text class=\"bar-value\"").count(),
        9,
        "a value at every bar"
    );
    // Axis titles with units, and a legend of the series.
    for label in [
        ">simulated time (s)<",
        ">power (W)<",
        "<g class=\"legend\">",
        ">total<",
    ] {
        assert!(p.contains(label), "power plot lacks {label:?}");
    }
    assert!(
        p.contains("each the time-weighted mean of"),
        "the note under the title says the samples were merged"
    );
    assert!(p.len() < 2_000_000, "power plot of {} bytes", p.len());
}

/// The mapping-size plot names every scheme once in its legend: a line per
/// scheme, those of the same sizes (bast, fast and last) sharing one.
#[test]
fn mapping_size_plot_has_one_legend_entry_per_scheme() {
    let dir = std::env::temp_dir().join(format!("ssdsim-mapsize-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let svg = dir.join("m.svg");
    let (rc, _, err) = ssdsim(&["mapping-size", "--plot", svg.to_str().unwrap()]);
    let s = std::fs::read_to_string(&svg).unwrap_or_default();
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(rc, 0, "{err}");
    let legend = &s[s.find("<g class=\"legend\">").expect("a legend")..];
    let legend = &legend[..legend.find("</g>").unwrap()];
    for name in [">page<", ">block<", ">bast = fast = last<", ">dftl<"] {
        assert_eq!(legend.matches(name).count(), 1, "{name} in {legend}");
    }
    assert_eq!(s.matches("<path class=\"data\"").count(), 4);
    for label in [
        ">logical capacity (GiB, log scale)<",
        ">mapping tables (KiB, log scale)<",
    ] {
        assert!(s.contains(label), "{label}");
    }
}

/// `ssdsim run --save-state` then `--load-state`: the same report.
#[test]
fn the_cli_saves_and_loads_a_state() {
    let d = std::env::temp_dir().join(format!("ssdsim-state-cli-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    let file = d.join("drive.state");
    let run = |extra: &[&str]| {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_ssdsim"))
            .args([
                "run",
                "--blocks-per-plane",
                "64",
                "--channels",
                "2",
                "--precondition",
                "steady",
                "--rw",
                "randwrite",
                "--number_ios",
                "3000",
                "--format",
                "json",
                "--no-progress",
            ])
            .args(extra)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let mut v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        v["run"]["wall_s"] = 0.into();
        v["run"]["precondition_wall_s"] = 0.into();
        v
    };
    let saved = run(&["--save-state", file.to_str().unwrap()]);
    assert!(file.metadata().unwrap().len() > 0);
    let loaded = run(&["--load-state", file.to_str().unwrap()]);
    assert_eq!(saved, loaded);
    assert_eq!(loaded["run"]["precondition"], "steady");
    std::fs::remove_dir_all(&d).unwrap();
}
