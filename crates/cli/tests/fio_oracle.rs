//! fio itself as the oracle of what a job file means: every job file in
//! `tests/data/fio-oracle/` runs in fio (Debian's `fio` package, with
//! `ioengine=null`: no I/O, an exact count of the requests and bytes a job
//! means) and in `ssdsim run --fio`, and the two must agree on each
//! direction's requests (`total_ios`) and bytes (`io_bytes`), summed over
//! the jobs of the file.
//!
//! A job whose sizes or directions are drawn at random (`bsrange`,
//! `bssplit`, a read/write mix) cannot give the same counts from two random
//! generators: its file says how far apart they may be
//! (`# oracle: dir-tolerance=5%`). Both sides are deterministic (fio's
//! `randrepeat` is on by default), so a tolerance is a fixed margin over a
//! fixed pair of numbers, never a flake.
//!
//! Without fio on the machine the test is skipped with a word, unless
//! `SSDSIM_REQUIRE_FIO=1` (set by CI, which installs fio) makes it fail.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

mod common;
use common::ssdsim;

/// Requests and bytes of each direction (read, write, trim), summed over
/// the jobs of fio's JSON output.
fn counts(v: &Value) -> [(u64, u64); 3] {
    let mut c = [(0, 0); 3];
    for j in v["jobs"].as_array().expect("jobs") {
        for (d, k) in ["read", "write", "trim"].iter().enumerate() {
            c[d].0 += j[k]["total_ios"].as_u64().unwrap_or(0);
            c[d].1 += j[k]["io_bytes"].as_u64().unwrap_or(0);
        }
    }
    c
}

/// `# oracle: dir-tolerance=P%`: how far (a fraction) each direction's
/// counts may differ; 0 when the file says nothing.
fn tolerance(text: &str) -> f64 {
    text.lines()
        .filter_map(|l| l.strip_prefix("# oracle: dir-tolerance="))
        .filter_map(|v| v.trim().trim_end_matches('%').parse::<f64>().ok())
        .map(|p| p / 100.0)
        .next()
        .unwrap_or(0.0)
}

fn within(a: u64, b: u64, tol: f64) -> bool {
    a == b || (a as f64 - b as f64).abs() <= tol * (a.max(b) as f64)
}

fn jobs_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/fio-oracle")
}

#[test]
fn ssdsim_reads_job_files_as_fio_does() {
    let fio_ok = Command::new("fio")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !fio_ok {
        assert!(
            std::env::var("SSDSIM_REQUIRE_FIO").as_deref() != Ok("1"),
            "SSDSIM_REQUIRE_FIO=1 but fio is not installed"
        );
        eprintln!("fio is not installed: the fio oracle test is skipped");
        return;
    }
    // env-var.fio reads its rw from the environment, as fio's `${NAME}`.
    std::env::set_var("ORACLE_RW", "randwrite");
    let mut files: Vec<PathBuf> = std::fs::read_dir(jobs_dir())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "fio"))
        .collect();
    files.sort();
    assert!(files.len() >= 50, "{} job files", files.len());
    // fio writes its logs (write_lat_log) where it runs.
    let scratch = std::env::temp_dir().join(format!("ssdsim-fio-oracle-{}", std::process::id()));
    // The nrfiles jobs' files live in `directory=oracle-files` (fio's null
    // engine creates none, but the directory must exist).
    std::fs::create_dir_all(scratch.join("oracle-files")).unwrap();
    let mut failures = Vec::new();
    for f in &files {
        let name = f.file_name().unwrap().to_string_lossy().to_string();
        let text = std::fs::read_to_string(f).unwrap();
        let out = Command::new("fio")
            .arg("--output-format=json")
            .arg(f)
            .current_dir(&scratch)
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "fio refused {name}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let json = &stdout[stdout.find('{').expect("fio's JSON")..];
        let want = counts(&serde_json::from_str(json).unwrap());
        let path = f.to_str().unwrap();
        let (code, sout, serr) = ssdsim(&[
            "run",
            "--fio",
            path,
            "--output-format",
            "json",
            "--no-power",
            "--nand",
            "chip2",
        ]);
        if code != 0 {
            failures.push(format!("{name}: ssdsim refused it: {serr}"));
            continue;
        }
        let got = counts(&serde_json::from_str(&sout).unwrap());
        let tol = tolerance(&text);
        for (d, dir) in ["read", "write", "trim"].iter().enumerate() {
            let (w, g) = (want[d], got[d]);
            if !within(w.0, g.0, tol) || !within(w.1, g.1, tol) {
                failures.push(format!(
                    "{name}: {dir}: fio {} requests, {} bytes; ssdsim {} requests, {} bytes \
                     (tolerance {:.0}%)",
                    w.0,
                    w.1,
                    g.0,
                    g.1,
                    tol * 100.0
                ));
            }
        }
    }
    let _ = std::fs::remove_dir_all(&scratch);
    assert!(
        failures.is_empty(),
        "{} of {} job files differ from fio:\n{}",
        failures.len(),
        files.len(),
        failures.join("\n")
    );
}
