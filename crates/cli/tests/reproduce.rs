//! `ssdsim reproduce` and the quick forms of the experiment files: the
//! studies are listed with their files, a study's directory holds its page
//! and its results, the results do not depend on the thread count, and the
//! `[quick]` section means what its documentation says.

use ssdsim::sweep::GridFile;
use std::path::Path;

mod common;
use common::ssdsim;

fn tmp(name: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("ssdsim-reproduce-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

#[test]
fn list_names_every_study_and_its_experiment_files() {
    let (code, out, err) = ssdsim(&["reproduce", "--list"]);
    assert_eq!(code, 0, "{err}");
    for s in ssdsim_cli::reproduce::studies() {
        assert!(out.contains(s.name), "{out}");
        for e in s.experiments {
            assert!(out.contains(&format!("experiments/{e}.toml")), "{out}");
        }
    }
    let (code, _, err) = ssdsim(&["reproduce", "nope"]);
    assert_ne!(code, 0);
    assert!(err.contains("unknown study \"nope\""), "{err}");
    assert!(err.contains("lee-won"), "{err}");
}

/// The smallest study end to end, on one thread and on two: the same
/// tables, the page with its sections and verdicts, every file written.
#[test]
fn a_quick_study_writes_its_directory_the_same_on_any_thread_count() {
    let one = tmp("one");
    let two = tmp("two");
    for (dir, threads) in [(&one, "1"), (&two, "2")] {
        let (code, out, err) = ssdsim(&[
            "reproduce",
            "lee-won",
            "--quick",
            "--threads",
            threads,
            "--out",
            dir.to_str().unwrap(),
        ]);
        assert_eq!(code, 0, "{out}\n{err}");
        assert!(out.contains("lee-won: 10 points"), "{out}");
    }
    let study = one.join("lee-won");
    for f in [
        "README.md",
        "lee-won-synthetic.toml",
        "lee-won-synthetic.csv",
        "lee-won-synthetic.jsonl",
        "lee-won-synthetic.md",
        "lee-won-synthetic.html",
        "lee-won-synthetic.reports.jsonl",
        "page-size.csv",
    ] {
        assert!(study.join(f).is_file(), "{f} missing");
    }
    let page = std::fs::read_to_string(study.join("README.md")).unwrap();
    assert!(
        page.contains("## Synthetic streams (experiment 1)"),
        "{page}"
    );
    assert!(page.contains("## Page size (experiment 2)"), "{page}");
    // Open loop at 2,000 IOPS: the setup's closed form is met on every stream.
    assert!(
        page.contains("closed-form checks of the setup: 4 met, 0 missed"),
        "{page}"
    );
    // The grid as run says it was the quick form.
    let grid = std::fs::read_to_string(study.join("lee-won-synthetic.toml")).unwrap();
    assert!(grid.starts_with("# Run in its quick form"), "{grid}");
    // Same results on one thread and on two (the CSV has no wall-clock column).
    let csv = |d: &Path| std::fs::read_to_string(d.join("lee-won").join("page-size.csv")).unwrap();
    assert_eq!(csv(&one), csv(&two));
    assert_eq!(
        std::fs::read_to_string(one.join("lee-won/README.md")).unwrap(),
        std::fs::read_to_string(two.join("lee-won/README.md")).unwrap(),
        "the page holds no wall-clock figure"
    );
    let _ = std::fs::remove_dir_all(&one);
    let _ = std::fs::remove_dir_all(&two);
}

/// `[quick]`: its base merges over `[base]`, its axes replace the axes of
/// the same key however spelt, its workload keys replace those keys.
#[test]
fn quick_form_merges_base_replaces_axes_and_workload_keys() {
    let text = r#"
[base]
nand_preset = "chip2"
[base.sim]
precondition = "fill"
seed = 7
[grid]
ftl.kind = ["page", "dftl"]
"sched.kind" = ["noop", "deadline"]
workload = ["w"]
[workloads.w]
rw = "randwrite"
number_ios = 1000000
[quick.base.sim]
precondition = "none"
[quick.grid]
"ftl.kind" = ["page"]
sched = { kind = ["noop"] }
[quick.workloads.w]
number_ios = 500
"#;
    let gf = GridFile::parse_str(text, "t.toml").unwrap();
    let q = gf.quick_form("t.toml").unwrap();
    let base = q.base_nested().unwrap();
    assert_eq!(base["sim"]["precondition"].as_str(), Some("none"));
    assert_eq!(base["sim"]["seed"].as_integer(), Some(7), "kept");
    assert_eq!(base["nand_preset"].as_str(), Some("chip2"), "kept");
    let axes = q.axes(Path::new("t.toml")).unwrap();
    let axis = |k: &str| axes.iter().find(|a| a.key == k).map(|a| a.values.clone());
    assert_eq!(axis("ftl.kind"), Some(vec!["page".to_string()]));
    assert_eq!(axis("sched.kind"), Some(vec!["noop".to_string()]));
    assert_eq!(axis("workload"), Some(vec!["w".to_string()]));
    assert_eq!(axes.len(), 3, "{axes:?}");
    let defs = q.workload_defs();
    let key = |k: &str| {
        defs["w"]
            .iter()
            .find(|(x, _)| x == k)
            .map(|(_, v)| v.clone())
    };
    assert_eq!(key("number_ios").as_deref(), Some("500"));
    assert_eq!(key("rw").as_deref(), Some("randwrite"), "kept");

    let bad = GridFile::parse_str(
        "[grid]\nbs = [\"4k\"]\n[quick.workloads.nope]\nnumber_ios = 1\n",
        "b.toml",
    )
    .unwrap();
    let err = bad.quick_form("b.toml").unwrap_err();
    assert!(err.contains("b.toml: [quick.workloads.nope]"), "{err}");
    let none = GridFile::parse_str("[grid]\nbs = [\"4k\"]\n", "n.toml").unwrap();
    let err = none.quick_form("n.toml").unwrap_err();
    assert!(err.contains("n.toml: no [quick] section"), "{err}");
    let typo = GridFile::parse_str("[quick]\nbsae = 1\n", "y.toml").unwrap_err();
    assert!(typo.contains("y.toml"), "{typo}");
}

/// `sweep --quick` runs the quick form and refuses a file without one;
/// `--set` of a key the sweep also has as an axis is refused (it would run
/// the --set value under every axis label).
#[test]
fn sweep_quick_and_set_on_an_axis() {
    let dir = tmp("sweep");
    std::fs::create_dir_all(&dir).unwrap();
    let g = dir.join("g.toml");
    std::fs::write(
        &g,
        "[grid]\nrw = [\"randread\", \"randwrite\"]\n[quick.base.workload]\nnumber_ios = 300\n",
    )
    .unwrap();
    let jsonl = dir.join("q.jsonl");
    let (code, out, err) = ssdsim(&[
        "sweep",
        "--grid",
        g.to_str().unwrap(),
        "--quick",
        "--precondition",
        "none",
        "--jsonl",
        jsonl.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{out}\n{err}");
    let t = std::fs::read_to_string(&jsonl).unwrap();
    let rows: Vec<serde_json::Value> = t
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(rows.len(), 2, "{t}");
    for r in &rows {
        assert_eq!(r["requests"], 300, "{t}");
    }
    let plain = dir.join("p.toml");
    std::fs::write(&plain, "[grid]\nrw = [\"randread\"]\n").unwrap();
    let (code, _, err) = ssdsim(&["sweep", "--grid", plain.to_str().unwrap(), "--quick"]);
    assert_ne!(code, 0);
    assert!(err.contains("no [quick] section"), "{err}");
    let (code, _, err) = ssdsim(&[
        "sweep",
        "--ftl",
        "page,dftl",
        "--set",
        "ftl.kind=fast",
        "--dry-run",
    ]);
    assert_ne!(code, 0);
    assert!(err.contains("--set ftl.kind: ftl.kind is an axis"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Device presets: listed by `presets`, applied before every other flag
/// (a flag given with one still wins), refused by name when unknown.
#[test]
fn device_presets_are_listed_applied_first_and_checked() {
    let (code, out, err) = ssdsim(&["presets"]);
    assert_eq!(code, 0, "{err}");
    for d in ssd_core::devices::DEVICE_PRESETS {
        assert!(out.contains(d.name), "{out}");
    }
    let (code, out, err) = ssdsim(&[
        "run",
        "--ftl",
        "dftl",
        "--device",
        "park-mtron",
        "--print-config",
    ]);
    assert_eq!(code, 0, "{err}");
    let cfg: toml::Table = out.parse().unwrap();
    assert_eq!(cfg["ftl"]["kind"].as_str(), Some("dftl"), "the flag wins");
    assert_eq!(cfg["dram"]["write_buffer"].as_str(), Some("16MiB"));
    assert_eq!(cfg["layout"]["channels"].as_integer(), Some(4));
    assert_eq!(cfg["power"]["name"].as_str(), Some("park-mtron"));
    let (code, _, err) = ssdsim(&["run", "--device", "nope"]);
    assert_ne!(code, 0);
    assert!(err.contains("unknown device preset \"nope\""), "{err}");
}
