//! Reliability: no destroyed input, no half-written output reported as a
//! success, no wrapped or nonsensical number taken silently, no lost sweep
//! rows. Each test runs the `ssdsim` binary as a user would.
//!
//! Over 1,500 lines on purpose: one test per failure a user can meet (a
//! full disk, a killed sweep, a bad number in each input format), each
//! with the input that provokes it.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

mod common;
use common::{scratch, ssdsim, ssdsim_in, ssdsim_ulimit_f};

/// The names in `dir`, sorted.
fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

/// A small MSR trace in `dir` as t.csv (the repository's synth.msr).
fn msr_trace(dir: &Path) -> PathBuf {
    let t = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../traces/synth.msr");
    let dst = dir.join("t.csv");
    std::fs::copy(&t, &dst).unwrap();
    let mut perm = std::fs::metadata(&dst).unwrap().permissions();
    #[allow(clippy::permissions_set_readonly_false)]
    perm.set_readonly(false);
    std::fs::set_permissions(&dst, perm).unwrap();
    dst
}

mod files_never_destroyed {
    use super::*;

    /// `trace convert IN IN` in every spelling (same path, `./`, a symbolic
    /// link, a hard link, `dir/../dir`) is refused and the input is intact.
    #[test]
    fn convert_refuses_its_own_input() {
        let d = scratch("convert-self");
        let t = msr_trace(&d);
        let before = std::fs::read(&t).unwrap();
        std::os::unix::fs::symlink("t.csv", d.join("link.csv")).unwrap();
        std::fs::hard_link(&t, d.join("hard.csv")).unwrap();
        let up = format!("../{}/t.csv", d.file_name().unwrap().to_string_lossy());
        for out in ["t.csv", "./t.csv", "link.csv", "hard.csv", up.as_str()] {
            let (code, _, err) = ssdsim_in(&d, &["trace", "convert", "t.csv", out, "--to", "spc"]);
            assert_eq!(code, 2, "{out}: {err}");
            assert!(err.contains("refusing to overwrite"), "{out}: {err}");
            assert_eq!(
                std::fs::read(&t).unwrap(),
                before,
                "{out} changed the input"
            );
        }
        // Through the link as input, too.
        let (code, _, err) = ssdsim_in(
            &d,
            &["trace", "convert", "link.csv", "t.csv", "--to", "spc"],
        );
        assert_eq!(code, 2, "{err}");
        assert_eq!(std::fs::read(&t).unwrap(), before);
        std::fs::remove_dir_all(&d).unwrap();
    }

    /// `run --trace F --out F` and `--power-trace F` are refused before the run.
    #[test]
    fn run_refuses_outputs_onto_its_inputs() {
        let d = scratch("run-self");
        let t = msr_trace(&d);
        let before = std::fs::read(&t).unwrap();
        for (flag, out) in [
            ("--out", "t.csv"),
            ("--out", "./t.csv"),
            ("--power-trace", "t.csv"),
            ("--plot-power", "./t.csv"),
        ] {
            let (code, _, err) = ssdsim_in(
                &d,
                &["run", "--trace", "t.csv", "--max-requests", "50", flag, out],
            );
            assert_eq!(code, 2, "{flag} {out}: {err}");
            assert!(err.contains("refusing to overwrite an input"), "{err}");
            assert_eq!(std::fs::read(&t).unwrap(), before);
        }
        // Two outputs onto one file.
        let (code, _, err) = ssdsim_in(
            &d,
            &[
                "run",
                "--number_ios",
                "50",
                "--out",
                "a.txt",
                "--power-trace",
                "./a.txt",
            ],
        );
        assert_eq!(code, 2, "{err}");
        assert!(err.contains("name the same file"), "{err}");
        std::fs::remove_dir_all(&d).unwrap();
    }

    /// Found by scripts/hostile.sh: `sweep --trace T --csv T` (and
    /// `--jsonl`, through a symbolic or hard link too) overwrote the trace,
    /// and `run --out T` the trace of a `[[flow]]`: only the base
    /// configuration's own trace was checked. Every trace a point or a flow
    /// reads is an input now: a flag's, a grid axis's, a flow's.
    #[cfg(unix)]
    #[test]
    fn sweeps_and_flows_refuse_outputs_onto_their_traces() {
        let d = scratch("sweep-self");
        let t = msr_trace(&d);
        let before = std::fs::read(&t).unwrap();
        std::os::unix::fs::symlink("t.csv", d.join("l.csv")).unwrap();
        std::fs::hard_link(&t, d.join("h.csv")).unwrap();
        std::fs::write(d.join("g.toml"), "[grid]\n\"trace.path\" = [\"t.csv\"]\n").unwrap();
        let sweep = ["sweep", "--precondition", "none", "--max-requests", "20"];
        for (how, out_flag, out) in [
            (["--trace", "t.csv,t.csv"], "--csv", "t.csv"),
            (["--trace", "t.csv"], "--jsonl", "l.csv"),
            (["--trace", "t.csv"], "--md", "h.csv"),
            (["--grid", "g.toml"], "--html", "./t.csv"),
        ] {
            let mut args = sweep.to_vec();
            args.extend(how);
            args.extend([out_flag, out]);
            let (code, _, err) = ssdsim_in(&d, &args);
            assert_eq!(code, 2, "{args:?}: {err}");
            assert!(err.contains("refusing to overwrite an input"), "{err}");
            assert_eq!(std::fs::read(&t).unwrap(), before, "{args:?}");
        }
        std::fs::write(
            d.join("flows.toml"),
            "[[flow]]\nname = \"a\"\n[flow.trace]\npath = \"t.csv\"\n\
             [[flow]]\nname = \"b\"\n[flow.workload]\nnumber_ios = 50\n",
        )
        .unwrap();
        let (code, _, err) = ssdsim_in(
            &d,
            &[
                "run",
                "--config",
                "flows.toml",
                "--no-power",
                "--out",
                "h.csv",
            ],
        );
        assert_eq!(code, 2, "{err}");
        assert!(err.contains("refusing to overwrite an input"), "{err}");
        assert_eq!(std::fs::read(&t).unwrap(), before);
        std::fs::remove_dir_all(&d).unwrap();
    }

    /// A full device is a clear error with a non-zero exit, for each kind of
    /// output that can be pointed at it.
    #[test]
    fn a_full_disk_is_an_error() {
        if !Path::new("/dev/full").exists() {
            return;
        }
        let d = scratch("full");
        msr_trace(&d);
        let cases: Vec<Vec<&str>> = vec![
            vec![
                "run",
                "--number_ios",
                "50",
                "--no-power",
                "--out",
                "/dev/full",
            ],
            vec!["run", "--number_ios", "50", "--power-trace", "/dev/full"],
            vec!["run", "--number_ios", "50", "--plot-breakdown", "/dev/full"],
            vec!["trace", "convert", "t.csv", "/dev/full", "--to", "spc"],
            vec!["mapping-size", "--csv", "/dev/full"],
            vec![
                "sweep",
                "--ftl",
                "page",
                "--number_ios",
                "50",
                "--rw",
                "randread",
                "--csv",
                "/dev/full",
            ],
        ];
        for args in cases {
            let (code, _, err) = ssdsim_in(&d, &args);
            assert!(code > 0, "{args:?}: exit {code}: {err}");
            assert!(err.contains("No space left on device"), "{args:?}: {err}");
        }
        std::fs::remove_dir_all(&d).unwrap();
    }

    /// Past the file-size limit a write fails with EFBIG: an error and a
    /// non-zero exit (not SIGXFSZ), and the old file is left as it was, with
    /// no temporary file beside it.
    #[test]
    fn a_file_size_limit_is_an_error_and_keeps_the_old_file() {
        let d = scratch("fsize");
        msr_trace(&d);
        std::fs::write(d.join("out.txt"), "old report\n").unwrap();
        std::fs::write(d.join("out.spc"), "old trace\n").unwrap();
        let (code, _, err) = ssdsim_ulimit_f(
            &d,
            1,
            &[
                "run",
                "--number_ios",
                "50",
                "--format",
                "json",
                "--out",
                "out.txt",
            ],
        );
        assert_eq!(code, 1, "{err}");
        assert!(err.contains("File too large"), "{err}");
        let (code, _, err) = ssdsim_ulimit_f(
            &d,
            1,
            &["trace", "convert", "t.csv", "out.spc", "--to", "spc"],
        );
        assert!(code > 0, "{err}");
        assert!(err.contains("File too large"), "{err}");
        assert_eq!(
            std::fs::read_to_string(d.join("out.txt")).unwrap(),
            "old report\n"
        );
        assert_eq!(
            std::fs::read_to_string(d.join("out.spc")).unwrap(),
            "old trace\n"
        );
        assert_eq!(names(&d), vec!["out.spc", "out.txt", "t.csv"]);
        std::fs::remove_dir_all(&d).unwrap();
    }

    /// A reader that went away (EPIPE) is an error, not a success.
    #[test]
    fn a_closed_pipe_is_an_error() {
        let mut ch = Command::new(env!("CARGO_BIN_EXE_ssdsim"))
            .args(["run", "--number_ios", "200", "--format", "json"])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        drop(ch.stdout.take());
        let o = ch.wait_with_output().unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{err}");
        assert!(err.contains("standard output"), "{err}");
    }

    /// Every output replaces the old file whole (a rename), following a link.
    #[test]
    fn outputs_are_renamed_into_place() {
        let d = scratch("rename");
        std::fs::write(d.join("real.txt"), "x".repeat(100_000)).unwrap();
        std::os::unix::fs::symlink("real.txt", d.join("link.txt")).unwrap();
        let (code, _, err) = ssdsim_in(&d, &["run", "--number_ios", "50", "--out", "link.txt"]);
        assert_eq!(code, 0, "{err}");
        let text = std::fs::read_to_string(d.join("real.txt")).unwrap();
        assert!(text.starts_with("ssdsim "), "{text}");
        assert!(std::fs::symlink_metadata(d.join("link.txt"))
            .unwrap()
            .file_type()
            .is_symlink());
        assert_eq!(names(&d), vec!["link.txt", "real.txt"]);
        std::fs::remove_dir_all(&d).unwrap();
    }

    /// `merge` refuses to write its output over one of its shards.
    #[test]
    fn merge_refuses_to_overwrite_a_shard() {
        let d = scratch("merge-self");
        let (code, _, err) = ssdsim_in(
            &d,
            &[
                "sweep",
                "--ftl",
                "page",
                "--rw",
                "randread",
                "--number_ios",
                "50",
                "--jsonl",
                "s.jsonl",
            ],
        );
        assert_eq!(code, 0, "{err}");
        let before = std::fs::read(d.join("s.jsonl")).unwrap();
        let (code, _, err) = ssdsim_in(&d, &["merge", "s.jsonl", "--jsonl", "./s.jsonl"]);
        assert_eq!(code, 2, "{err}");
        assert_eq!(std::fs::read(d.join("s.jsonl")).unwrap(), before);
        std::fs::remove_dir_all(&d).unwrap();
    }
}

mod numeric_limits {
    use super::*;

    /// Run `args` and expect exit 2 with every one of `needles` in stderr.
    fn refused(args: &[&str], needles: &[&str]) {
        let (code, _, err) = ssdsim(args);
        assert_eq!(code, 2, "{args:?}: {err}");
        for n in needles {
            assert!(err.contains(n), "{args:?}: {n:?} not in {err}");
        }
    }

    /// A fio job's integers are not truncated to 32 bits, and both mixes are
    /// checked alike; the error names file:line and the option.
    #[test]
    fn fio_integers_are_not_truncated() {
        let d = scratch("fio-ints");
        for (line, needle) in [
            ("iodepth=4294967304", "iodepth: must be in 1..=65536"),
            ("rwmixread=4294967346", "rwmixread: must be 0..=100"),
            ("rwmixwrite=150", "rwmixwrite: must be 0..=100"),
        ] {
            let f = d.join("j.fio");
            std::fs::write(&f, format!("[job]\nrw=randrw\n{line}\n")).unwrap();
            refused(&["run", "--fio", f.to_str().unwrap()], &["j.fio:3", needle]);
        }
        std::fs::remove_dir_all(&d).unwrap();
    }

    /// Zero requests are refused however they are asked for: `number_ios`
    /// 0 is fio's "no count" (a fio-style job ends by its size), which a
    /// personality or a trace cannot take.
    #[test]
    fn zero_requests_are_refused() {
        for args in [
            &[
                "run",
                "--number_ios",
                "0",
                "--size",
                "64k",
                "--format",
                "json",
            ][..],
            &[
                "run",
                "--set",
                "workload.number_ios=0",
                "--size",
                "64k",
                "--format",
                "json",
            ],
        ] {
            let (code, out, err) = ssdsim(args);
            assert_eq!(code, 0, "{args:?}: {err}");
            let v: serde_json::Value = serde_json::from_str(&out).unwrap();
            assert_eq!(v["host"]["requests"], 16, "{args:?}: one pass over 64k");
        }
        refused(
            &["run", "--personality", "varmail", "--number_ios", "0"],
            &["workload.number_ios"],
        );
        let t = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../traces/synth.msr");
        refused(
            &["run", "--trace", t.to_str().unwrap(), "--max-requests", "0"],
            &["replay.max_requests"],
        );
        // A sweep reports the point as failed, says why in its row, exits 2.
        let d = scratch("zero-sweep");
        let (code, out, err) = ssdsim_in(
            &d,
            &[
                "sweep",
                "--number_ios",
                "0",
                "--personality",
                "varmail",
                "--csv",
                "s.csv",
            ],
        );
        assert_eq!(code, 2, "{err}");
        assert!(out.contains("workload.number_ios"), "{out}");
        std::fs::remove_dir_all(&d).unwrap();
    }

    /// Durations and rates that would overflow or round to nothing are
    /// refused with the field and the valid range.
    #[test]
    fn durations_and_rates_out_of_range_are_refused() {
        for f in [
            "nand.t_r",
            "nand.t_prog",
            "nand.t_bers",
            "dram.access_latency",
            "host.command_overhead",
        ] {
            refused(
                &["run", "--set", &format!("{f}=99999999999999999999s")],
                &[f, "out of range", "2^62 ns"],
            );
            refused(
                &["run", "--set", &format!("{f}=5s")],
                &[f, "out of range", "at most 1s"],
            );
        }
        refused(
            &["run", "--set", "host.link_mbps=1e-9"],
            &["host.link_mbps", "0.001..="],
        );
        refused(
            &["run", "--set", "nand.bus=\"0.0000001MB/s\""],
            &["nand.bus", "out of range"],
        );
        refused(
            &[
                "run",
                "--set",
                "controller.cycles_per_command=18446744073709551",
            ],
            &["controller.cycles_per_command", "out of range"],
        );
        refused(
            &["run", "--time-limit", "99999999999999999999s"],
            &["out of range"],
        );
    }

    /// A run that completes no request is an error, not a report of zeros.
    #[test]
    fn a_run_that_completes_nothing_is_an_error() {
        refused(
            &["run", "--time-limit", "1ns"],
            &["completed no request", "still in flight at the time limit"],
        );
    }

    /// `--threads` is bounded; huge grids are refused before allocating.
    #[test]
    fn threads_and_grid_size_are_bounded() {
        refused(
            &["sweep", "--threads", "100000", "--number_ios", "10"],
            &["--threads 100000", "at most 1024"],
        );
        let many: Vec<String> = (1..=400).map(|i| i.to_string()).collect();
        let list = many.join(",");
        refused(
            &[
                "sweep",
                "--seed",
                &list,
                "--randseed",
                &list,
                "--number_ios",
                "10",
            ],
            &["160000 points", "at most 100000"],
        );
        // 2^64 and beyond: no overflow, the same refusal.
        let d = scratch("grid-huge");
        let g = d.join("g.toml");
        let axis: Vec<String> = (0..70).map(|i| format!("{i}")).collect();
        let mut text = String::from("[grid]\n");
        for k in 0..12 {
            text.push_str(&format!("\"sched.x{k}\" = [{}]\n", axis.join(",")));
        }
        std::fs::write(&g, text).unwrap();
        refused(
            &["sweep", "--grid", g.to_str().unwrap()],
            &["more than 2^64", "at most 100000"],
        );
        std::fs::remove_dir_all(&d).unwrap();
    }
}

mod fio_compatibility {
    use super::*;

    /// `bs=4kb` and `size=1gb` are 1024-based as in fio (`kb_base=1000`
    /// makes them decimal), and a `[global]` after the job does not apply.
    #[test]
    fn fio_sizes_and_global_sections_follow_fio() {
        let d = scratch("fio-compat");
        let f = d.join("j.fio");
        std::fs::write(
            &f,
            "[global]\nbs=8k\n[j]\nrw=randread\nbs=4kb\nsize=1gb\n[global]\niodepth=3\n",
        )
        .unwrap();
        let (code, out, err) = ssdsim(&["run", "--fio", f.to_str().unwrap(), "--print-config"]);
        assert_eq!(code, 0, "{err}");
        assert!(out.contains("bs = \"4KiB\""), "{out}");
        assert!(out.contains("size = \"1GiB\""), "{out}");
        // fio's default depth (1), not the later [global]'s.
        assert!(out.contains("iodepth = 1"), "{out}");
        std::fs::write(&f, "[j]\nkb_base=1000\nbs=4096\nsize=1gb\n").unwrap();
        let (code, out, err) = ssdsim(&["run", "--fio", f.to_str().unwrap(), "--print-config"]);
        assert_eq!(code, 0, "{err}");
        assert!(
            out.contains("size = \"1000000000B\"") || out.contains("size = \"1GB\""),
            "{out}"
        );
        std::fs::remove_dir_all(&d).unwrap();
    }
}

mod sweeps_merge_and_resume {
    use super::*;
    use serde_json::Value;

    /// The rows of a JSON-lines file, `wall_s` removed (it is the machine's).
    fn rows(path: &Path) -> Vec<Value> {
        std::fs::read_to_string(path)
            .unwrap()
            .lines()
            .map(|l| {
                let mut v: Value = serde_json::from_str(l).unwrap();
                v.as_object_mut().unwrap().remove("wall_s");
                v
            })
            .collect()
    }

    const GRID: &[&str] = &[
        "sweep",
        "--seed",
        "1,2,3,4,5,6",
        "--rw",
        "randread",
        "--number_ios",
        "400",
    ];

    fn sweep_in(dir: &Path, extra: &[&str]) -> (i32, String, String) {
        let mut args: Vec<&str> = GRID.to_vec();
        args.extend_from_slice(extra);
        ssdsim_in(dir, &args)
    }

    /// Every row carries the sweep's identity and size; shards and thread
    /// counts share it, another seed or grid does not.
    #[test]
    fn rows_carry_the_sweep_identity() {
        let d = scratch("identity");
        let (code, _, err) = sweep_in(&d, &["--jsonl", "a.jsonl", "--threads", "1"]);
        assert_eq!(code, 0, "{err}");
        let (code, _, err) = sweep_in(&d, &["--jsonl", "b.jsonl", "--shard", "1/2"]);
        assert_eq!(code, 0, "{err}");
        let (code, _, err) = ssdsim_in(
            &d,
            &[
                "sweep",
                "--seed",
                "1,2,3,4,5,6",
                "--rw",
                "randread",
                "--number_ios",
                "401",
                "--jsonl",
                "c.jsonl",
            ],
        );
        assert_eq!(code, 0, "{err}");
        let a = rows(&d.join("a.jsonl"));
        let id = a[0]["sweep"].as_str().unwrap().to_string();
        assert!(!id.is_empty());
        for r in a.iter().chain(&rows(&d.join("b.jsonl"))) {
            assert_eq!(r["sweep"].as_str(), Some(id.as_str()));
            assert_eq!(r["points"].as_u64(), Some(6));
        }
        assert_ne!(
            rows(&d.join("c.jsonl"))[0]["sweep"].as_str(),
            Some(id.as_str())
        );
        std::fs::remove_dir_all(&d).unwrap();
    }

    /// A row whose parameters are another point's (or which claims another
    /// point count) is refused by `--resume`, naming the row, and `merge`
    /// refuses two indices with the same parameters: before, both kept the
    /// row, and the merged table showed one point twice, once with another
    /// point's results.
    #[test]
    fn resume_and_merge_refuse_rows_that_are_not_their_point() {
        let d = scratch("row-params");
        let grid = [
            "sweep",
            "--seed",
            "1,2,3",
            "--rw",
            "randread",
            "--number_ios",
            "200",
        ];
        let run = |extra: &[&str]| {
            let mut a: Vec<&str> = grid.to_vec();
            a.extend_from_slice(extra);
            ssdsim_in(&d, &a)
        };
        let (code, _, err) = run(&["--jsonl", "a.jsonl", "--threads", "1"]);
        assert_eq!(code, 0, "{err}");
        let text = std::fs::read_to_string(d.join("a.jsonl")).unwrap();
        let mut rows: Vec<serde_json::Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        let write = |rows: &[serde_json::Value]| {
            let t: String = rows.iter().map(|r| format!("{r}\n")).collect();
            std::fs::write(d.join("a.jsonl"), t).unwrap();
        };
        // Point 0 carrying point 2's parameters.
        let p2 = rows[2]["params"].clone();
        rows[0]["params"] = p2;
        write(&rows);
        let (code, _, err) = run(&["--jsonl", "a.jsonl", "--resume"]);
        assert_eq!(code, 2, "{err}");
        assert!(
            err.contains("the row of point 0 has the parameters")
                && err.contains("seed=3")
                && err.contains("seed=1")
                && err.contains("refusing to resume"),
            "{err}"
        );
        let (code, _, err) = ssdsim_in(&d, &["merge", "a.jsonl"]);
        assert_ne!(code, 0, "{err}");
        assert!(
            err.contains(
                "a.jsonl: point 0 (seed=3 rw=randread number_ios=200) does not match its checksum"
            ) && err.contains("refusing to merge"),
            "{err}"
        );
        // Without their checksums (an older ssdsim's rows), the duplicate
        // parameters still give the edit away.
        for r in rows.iter_mut() {
            r.as_object_mut().unwrap().remove("check");
        }
        write(&rows);
        let (code, _, err) = ssdsim_in(&d, &["merge", "a.jsonl"]);
        assert_ne!(code, 0, "{err}");
        assert!(
            err.contains("points 0 (a.jsonl) and 2 (a.jsonl) have the same parameters"),
            "{err}"
        );
        // Parameters no point of the sweep has (merge has no grid to compare
        // them with): the checksum refuses them.
        let mut rows: Vec<serde_json::Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        rows[1]["params"][0][1] = "7".into();
        write(&rows);
        let (code, _, err) = ssdsim_in(&d, &["merge", "a.jsonl"]);
        assert_ne!(code, 0, "{err}");
        assert!(
            err.contains("point 1 (seed=7 rw=randread number_ios=200) does not match its checksum"),
            "{err}"
        );
        // The untouched rows merge; rows without a checksum with a warning.
        let mut rows: Vec<serde_json::Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        write(&rows);
        let (code, _, err) = ssdsim_in(&d, &["merge", "a.jsonl"]);
        assert_eq!(code, 0, "{err}");
        assert!(!err.contains("checksum"), "{err}");
        rows[2].as_object_mut().unwrap().remove("check");
        write(&rows);
        let (code, _, err) = ssdsim_in(&d, &["merge", "a.jsonl"]);
        assert_eq!(code, 0, "{err}");
        assert!(
            err.contains("1 row(s) carry no checksum (written by an older ssdsim)"),
            "{err}"
        );
        // A row claiming another point count.
        let mut rows: Vec<serde_json::Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        rows[1]["points"] = 4.into();
        write(&rows);
        let (code, _, err) = run(&["--jsonl", "a.jsonl", "--resume"]);
        assert_eq!(code, 2, "{err}");
        assert!(
            err.contains("the row of point 1 claims a sweep of 4 points, this one has 3"),
            "{err}"
        );
        std::fs::remove_dir_all(&d).unwrap();
    }

    /// `merge` refuses a missing shard, a shard given twice, a shard of
    /// another sweep and an empty file, naming what is wrong;
    /// `--allow-partial` merges a partial set with a warning.
    #[test]
    fn merge_refuses_missing_duplicated_foreign_and_empty_shards() {
        let d = scratch("merge");
        for i in 0..3 {
            let (s, j) = (format!("{i}/3"), format!("s{i}.jsonl"));
            let (code, _, err) = sweep_in(&d, &["--shard", &s, "--jsonl", &j]);
            assert_eq!(code, 0, "{err}");
        }
        let (code, _, err) = ssdsim_in(
            &d,
            &[
                "sweep",
                "--seed",
                "1,2,3,4,5,6",
                "--rw",
                "randread",
                "--number_ios",
                "400",
                "--randseed",
                "9",
                "--shard",
                "1/3",
                "--jsonl",
                "other.jsonl",
            ],
        );
        assert_eq!(code, 0, "{err}");
        std::fs::write(d.join("empty.jsonl"), "").unwrap();
        let (code, out, err) = ssdsim_in(
            &d,
            &[
                "merge",
                "s0.jsonl",
                "s1.jsonl",
                "s2.jsonl",
                "--jsonl",
                "all.jsonl",
            ],
        );
        assert_eq!(code, 0, "{err}");
        assert_eq!(rows(&d.join("all.jsonl")).len(), 6);
        let whole = out;
        for (args, needle) in [
            (
                vec!["s0.jsonl", "s1.jsonl"],
                "2 of the sweep's 6 points are missing (indices 2, 5)",
            ),
            (
                vec!["s0.jsonl", "s1.jsonl", "s1.jsonl", "s2.jsonl"],
                "point 1 is in both s1.jsonl and s1.jsonl",
            ),
            (
                vec!["s0.jsonl", "other.jsonl", "s2.jsonl"],
                "other.jsonl is a shard of another sweep",
            ),
            (
                vec!["s0.jsonl", "s1.jsonl", "s2.jsonl", "empty.jsonl"],
                "empty.jsonl: no rows",
            ),
        ] {
            let mut a = vec!["merge"];
            a.extend(&args);
            let (code, _, err) = ssdsim_in(&d, &a);
            assert_eq!(code, 2, "{args:?}: {err}");
            assert!(err.contains(needle), "{args:?}: {err}");
        }
        let (code, out, err) = ssdsim_in(&d, &["merge", "s0.jsonl", "s2.jsonl", "--allow-partial"]);
        assert_eq!(code, 0, "{err}");
        assert!(
            err.contains("WARNING") && err.contains("NOT the whole sweep"),
            "{err}"
        );
        assert!(out.lines().count() < whole.lines().count());
        // Foreign shards are refused even then.
        let (code, _, _) = ssdsim_in(&d, &["merge", "s0.jsonl", "other.jsonl", "--allow-partial"]);
        assert_eq!(code, 2);
        // A duplicate merged with --allow-partial is the whole sweep: no
        // warning that it is not.
        let (code, _, err) = ssdsim_in(
            &d,
            &[
                "merge",
                "s0.jsonl",
                "s1.jsonl",
                "s1.jsonl",
                "s2.jsonl",
                "--allow-partial",
            ],
        );
        assert_eq!(code, 0, "{err}");
        assert!(!err.contains("NOT the whole sweep"), "{err}");
        // A row whose index is outside the sweep is a damaged row: never
        // merged, not even partially (it was merged as point 99 of 6).
        let text = std::fs::read_to_string(d.join("s0.jsonl")).unwrap();
        let damaged = text.replacen("\"index\":0,", "\"index\":99,", 1);
        assert_ne!(damaged, text, "the row starts with its index");
        std::fs::write(d.join("damaged.jsonl"), damaged).unwrap();
        for extra in [None, Some("--allow-partial")] {
            let mut a = vec!["merge", "damaged.jsonl", "s1.jsonl", "s2.jsonl"];
            a.extend(extra);
            let (code, _, err) = ssdsim_in(&d, &a);
            assert_eq!(code, 2, "{err}");
            assert!(
                err.contains("damaged.jsonl: point 99 is outside the sweep's 6 points"),
                "{err}"
            );
        }
        std::fs::remove_dir_all(&d).unwrap();
    }

    /// `--resume` runs only the points missing from the --jsonl output (a
    /// last line cut short runs again) and ends with the tables of a whole run.
    #[test]
    fn resume_gives_the_same_tables_as_a_whole_run() {
        let d = scratch("resume");
        let (code, whole, err) = sweep_in(&d, &["--jsonl", "whole.jsonl", "--threads", "2"]);
        assert_eq!(code, 0, "{err}");
        let text = std::fs::read_to_string(d.join("whole.jsonl")).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        // Rows 4 and 1 finished, row 2 was being written when the sweep died.
        let partial = format!("{}\n{}\n{}", lines[4], lines[1], &lines[2][..40]);
        std::fs::write(d.join("part.jsonl"), partial).unwrap();
        let (code, resumed, err) =
            sweep_in(&d, &["--jsonl", "part.jsonl", "--resume", "--threads", "1"]);
        assert_eq!(code, 0, "{err}");
        assert!(
            err.contains("resuming: 2 points already in part.jsonl"),
            "{err}"
        );
        assert!(err.contains("4 to run"), "{err}");
        assert_eq!(resumed, whole);
        assert_eq!(rows(&d.join("part.jsonl")), rows(&d.join("whole.jsonl")));
        // A file of another sweep is not resumed from.
        let (code, _, err) = ssdsim_in(
            &d,
            &[
                "sweep",
                "--seed",
                "7,8",
                "--rw",
                "randread",
                "--number_ios",
                "400",
                "--jsonl",
                "part.jsonl",
                "--resume",
            ],
        );
        assert_eq!(code, 2, "{err}");
        assert!(err.contains("from another sweep"), "{err}");
        // Nor a file that holds another shard's rows: resuming rewrites the
        // file with this shard's rows, and the others were silently lost.
        let before = std::fs::read_to_string(d.join("whole.jsonl")).unwrap();
        let (code, _, err) = sweep_in(
            &d,
            &["--jsonl", "whole.jsonl", "--resume", "--shard", "0/2"],
        );
        assert_eq!(code, 2, "{err}");
        assert!(err.contains("is not a point of shard 0/2"), "{err}");
        assert_eq!(
            std::fs::read_to_string(d.join("whole.jsonl")).unwrap(),
            before
        );
        std::fs::remove_dir_all(&d).unwrap();
    }

    /// `--power-sample` sets the interval the rows' power extremes and
    /// deviation are taken over (the mean does not depend on it), and is
    /// part of the sweep's identity: rows sampled otherwise are not resumed
    /// from. A value without a unit is refused.
    #[test]
    fn power_sample_sets_the_sample_columns_and_the_identity() {
        let d = scratch("power-sample");
        let (code, _, err) = sweep_in(&d, &["--jsonl", "ms.jsonl", "--threads", "2"]);
        assert_eq!(code, 0, "{err}");
        let (code, _, err) = sweep_in(
            &d,
            &[
                "--jsonl",
                "us.jsonl",
                "--power-sample",
                "20us",
                "--threads",
                "2",
            ],
        );
        assert_eq!(code, 0, "{err}");
        let (ms, us) = (rows(&d.join("ms.jsonl")), rows(&d.join("us.jsonl")));
        assert_eq!(ms.len(), 6);
        let f = |v: &Value, k: &str| v[k].as_f64().unwrap_or_else(|| panic!("{k} in {v}"));
        let mut differ = 0;
        for (a, b) in ms.iter().zip(&us) {
            assert_eq!(f(a, "mean_power_w"), f(b, "mean_power_w"));
            for r in [a, b] {
                let (lo, mean, hi) = (
                    f(r, "min_power_w"),
                    f(r, "mean_power_w"),
                    f(r, "max_power_w"),
                );
                assert!(
                    lo <= mean && mean <= hi && f(r, "power_std_w") >= 0.0,
                    "{r}"
                );
            }
            // Each run is a few milliseconds: 20 us samples see its bursts,
            // 1 ms ones average them away.
            if f(b, "max_power_w") > f(a, "max_power_w")
                && f(b, "power_std_w") > f(a, "power_std_w")
            {
                differ += 1;
            }
            assert_ne!(a["sweep"], b["sweep"]);
        }
        assert_eq!(differ, 6, "{ms:?}\n{us:?}");
        let (code, _, err) = sweep_in(
            &d,
            &["--jsonl", "ms.jsonl", "--resume", "--power-sample", "20us"],
        );
        assert_eq!(code, 2, "{err}");
        assert!(err.contains("from another sweep"), "{err}");
        let (code, _, err) = sweep_in(&d, &["--jsonl", "x.jsonl", "--power-sample", "20"]);
        assert_eq!(code, 2, "{err}");
        assert!(
            err.contains("--power-sample") && err.contains("no unit"),
            "{err}"
        );
        std::fs::remove_dir_all(&d).unwrap();
    }

    /// SIGINT stops a sweep after its running points: the finished rows are
    /// in --jsonl, the exit code is 130, and --resume finishes the sweep with
    /// the tables of a whole run.
    #[test]
    fn sigint_keeps_finished_rows_and_resume_finishes() {
        let d = scratch("sigint");
        let args = [
            "sweep",
            "--seed",
            "1,2,3,4,5,6,7,8",
            "--rw",
            "randread",
            "--number_ios",
            "6000",
            "--threads",
            "1",
        ];
        let (code, whole, err) = ssdsim_in(&d, &[&args[..], &["--jsonl", "whole.jsonl"]].concat());
        assert_eq!(code, 0, "{err}");
        let ch = Command::new(env!("CARGO_BIN_EXE_ssdsim"))
            .args(args)
            .args(["--jsonl", "part.jsonl"])
            .current_dir(&d)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let part = d.join("part.jsonl");
        let start = std::time::Instant::now();
        while std::fs::read_to_string(&part).map_or(0, |t| t.lines().count()) < 1 {
            assert!(start.elapsed().as_secs() < 120, "no row after 120 s");
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        let st = Command::new("kill")
            .args(["-INT", &ch.id().to_string()])
            .status()
            .unwrap();
        assert!(st.success());
        let o = ch.wait_with_output().unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(130), "{err}");
        assert!(err.contains("--resume"), "{err}");
        let kept = rows(&part);
        assert!(
            !kept.is_empty() && kept.len() < 8,
            "{} rows kept",
            kept.len()
        );
        let (code, resumed, err) = ssdsim_in(
            &d,
            &[&args[..], &["--jsonl", "part.jsonl", "--resume"]].concat(),
        );
        assert_eq!(code, 0, "{err}");
        assert_eq!(resumed, whole);
        assert_eq!(rows(&part), rows(&d.join("whole.jsonl")));
        std::fs::remove_dir_all(&d).unwrap();
    }
}

mod lower {
    use super::*;

    /// A trace whose lines end in a lone CR (as some FIU files do) reads as
    /// the same records as with LF, plain or gzip-compressed.
    #[test]
    fn cr_only_line_ends_are_lines() {
        let d = scratch("cr");
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../traces/synth.fiu");
        let text = std::fs::read(&src).unwrap();
        let cr: Vec<u8> = text
            .iter()
            .map(|&b| if b == b'\n' { b'\r' } else { b })
            .collect();
        std::fs::write(d.join("cr.fiu"), &cr).unwrap();
        let (code, lf_out, err) =
            ssdsim(&["trace", "stats", src.to_str().unwrap(), "--format", "json"]);
        assert_eq!(code, 0, "{err}");
        let (code, cr_out, err) = ssdsim_in(&d, &["trace", "stats", "cr.fiu", "--format", "json"]);
        assert_eq!(code, 0, "{err}");
        assert_eq!(cr_out, lf_out);
        let v: serde_json::Value = serde_json::from_str(&cr_out).unwrap();
        assert!(v["requests"].as_u64().unwrap() > 1);
        std::fs::remove_dir_all(&d).unwrap();
    }

    /// A parse error quotes at most ~200 bytes of a huge offending line.
    #[test]
    fn a_huge_bad_line_is_quoted_short() {
        let d = scratch("longline");
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../traces/synth.msr");
        let mut text = std::fs::read_to_string(src).unwrap();
        text.push_str(&format!("1,x,{}\n", "9".repeat(4 << 20)));
        std::fs::write(d.join("t.msr"), text).unwrap();
        let (code, _, err) = ssdsim_in(&d, &["run", "--trace", "t.msr", "--trace-format", "msr"]);
        assert_eq!(code, 2, "{}", &err[..err.len().min(500)]);
        assert!(err.len() < 1000, "{} bytes of error", err.len());
        assert!(
            err.contains("t.msr:201") && err.contains("bytes in all"),
            "{err}"
        );
        std::fs::remove_dir_all(&d).unwrap();
    }

    /// `--set personality.kind=NAME` selects a personality whose fields can
    /// then be set; a personality field without one names what is missing.
    #[test]
    fn set_reaches_personality_fields() {
        let (code, out, err) = ssdsim(&[
            "run",
            "--set",
            "personality.kind=varmail",
            "--set",
            "personality.requests=321",
            "--set",
            "personality.seed=5",
            "--set",
            "personality.threads=8",
            "--print-config",
        ]);
        assert_eq!(code, 0, "{err}");
        // Unset optional fields (seed, threads) are fields too: they were
        // refused as unknown.
        assert!(
            out.contains("kind = \"varmail\"")
                && out.contains("requests = 321")
                && out.contains("seed = 5")
                && out.contains("threads = 8"),
            "{out}"
        );
        let (code, _, err) = ssdsim(&["run", "--set", "workload.bogus=1"]);
        assert_eq!(code, 2);
        assert!(
            err.contains("workload.bogus: unknown configuration field"),
            "{err}"
        );
        let (code, _, err) = ssdsim(&["run", "--set", "personality.requests=100"]);
        assert_eq!(code, 2);
        assert!(
            err.contains("personality.requests: no personality is selected"),
            "{err}"
        );
    }
}

mod time_limit {
    use super::ssdsim;

    /// A run cut by `--time-limit` reports busy fractions of the measured
    /// phase: what was booked past the cut (the host link's transfer, CPU
    /// work, a die's running operation) counts up to the cut only, so no
    /// fraction exceeds 1 (the host link reported 1.012 at 10 ms).
    #[test]
    fn busy_fractions_stay_within_the_cut() {
        for (rw, bs, limit) in [
            ("randread", "4KiB", "10ms"),
            ("read", "128KiB", "10ms"),
            ("randwrite", "4KiB", "3ms"),
        ] {
            let (code, out, err) = ssdsim(&[
                "run",
                "--rw",
                rw,
                "--bs",
                bs,
                "--number_ios",
                "100000",
                "--time-limit",
                limit,
                "--no-power",
                "--format",
                "json",
            ]);
            assert_eq!(code, 0, "{err}");
            let r: serde_json::Value = serde_json::from_str(&out).unwrap();
            for k in ["channels", "dies", "cpu", "host_link"] {
                let u = r["utilization"][k].as_f64().unwrap();
                assert!(
                    (0.0..=1.0).contains(&u),
                    "{rw} {limit}: utilization.{k} = {u}"
                );
            }
            // (Reads of a fresh drive find nothing mapped: no flash work.)
            let busy: &[&str] = if rw == "randwrite" {
                &["dies", "channels", "host_link"]
            } else {
                &["host_link"]
            };
            for k in busy {
                let u = r["utilization"][k].as_f64().unwrap();
                assert!(u > 0.0, "{rw} {limit}: utilization.{k} = 0");
            }
        }
    }

    /// The power summary keeps min <= mean <= max where the power is flat:
    /// a run cut by its time limit inside the first sample reported its mean
    /// one rounding step above its max, and a run shorter than one sample its
    /// mean below its min.
    #[test]
    fn power_summaries_keep_the_mean_between_min_and_max() {
        for args in [
            &["--number_ios", "2000", "--time-limit", "1ms"][..],
            &["--rw", "write", "--number_ios", "3", "--power-sample", "1s"][..],
        ] {
            let mut a = vec!["run", "--format", "json"];
            a.extend_from_slice(args);
            let (code, out, err) = ssdsim(&a);
            assert_eq!(code, 0, "{err}");
            let r: serde_json::Value = serde_json::from_str(&out).unwrap();
            let p = &r["power_w"];
            let f = |k: &str| p[k].as_f64().unwrap();
            assert!(
                f("min") <= f("mean") && f("mean") <= f("max"),
                "{args:?}: {p}"
            );
            if p["samples"] == 1 {
                assert_eq!((f("min"), f("max")), (f("mean"), f("mean")), "{p}");
            }
        }
    }
}

mod big_grids {
    use super::*;

    /// A million-point grid costs nothing up front: a shard of it runs its
    /// few points at once (each built as it runs), lists them, and resumes;
    /// the whole grid in one process is refused (at most 100,000 points a
    /// process), naming how many shards it needs.
    #[test]
    fn a_million_point_grid_runs_shard_by_shard() {
        let d = scratch("million");
        let list: Vec<String> = (1..=1000).map(|i| i.to_string()).collect();
        let list = list.join(",");
        let grid = [
            "sweep",
            "--seed",
            &list,
            "--randseed",
            &list,
            "--number_ios",
            "10",
            "--precondition",
            "none",
        ];
        let with = |extra: &[&str]| {
            let mut a = grid.to_vec();
            a.extend_from_slice(extra);
            ssdsim_in(&d, &a)
        };
        let started = std::time::Instant::now();
        let (code, out, err) = with(&["--shard", "12345/250000", "--dry-run"]);
        assert_eq!(code, 0, "{err}");
        let listed: Vec<&str> = out.lines().collect();
        assert_eq!(listed.len(), 4, "{out}");
        assert!(
            listed[3] == "762345  precondition=none  seed=763  number_ios=10  randseed=346",
            "{out}"
        );
        let (code, _, err) = with(&["--shard", "12345/250000", "--jsonl", "s.jsonl"]);
        assert_eq!(code, 0, "{err}");
        assert!(
            err.contains("4 of 1000000 configurations (0 failed)"),
            "{err}"
        );
        let text = std::fs::read_to_string(d.join("s.jsonl")).unwrap();
        let rows: Vec<serde_json::Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        let idx: Vec<u64> = rows.iter().map(|r| r["index"].as_u64().unwrap()).collect();
        assert_eq!(idx, vec![12345, 262345, 512345, 762345]);
        assert!(rows.iter().all(|r| r["points"] == 1_000_000));
        // Resuming a finished shard runs nothing and rewrites the same rows.
        let (code, _, err) = with(&["--shard", "12345/250000", "--jsonl", "s.jsonl", "--resume"]);
        assert_eq!(code, 0, "{err}");
        assert!(err.contains("4 points already in"), "{err}");
        assert!(err.contains(", 0 to run"), "{err}");
        assert_eq!(std::fs::read_to_string(d.join("s.jsonl")).unwrap(), text);
        // Before, the grid was built whole first: minutes, and 2 GB.
        assert!(started.elapsed().as_secs() < 120, "{:?}", started.elapsed());
        let (code, _, err) = with(&["--jsonl", "all.jsonl"]);
        assert_eq!(code, 2, "{err}");
        assert!(
            err.contains("1000000 points") && err.contains("10 or more shards"),
            "{err}"
        );
        let (code, _, err) = with(&["--shard", "0/9", "--jsonl", "all.jsonl"]);
        assert_eq!(code, 2, "{err}");
        assert!(err.contains("--shard 0/9: the shard has 111112"), "{err}");
        std::fs::remove_dir_all(&d).unwrap();
    }
}

/// Issue 47: the last results that were wrong or lost without a word.
mod silent_results {
    use super::*;

    /// A blkparse `Q` line with a sector but no `+ nsectors` (blkparse
    /// always writes `sector + nsectors [process]` for a request with data)
    /// is an error naming the file and line, not a request dropped from the
    /// count; the data-less forms blkparse does write (`Q FN [proc]`, a
    /// passthrough's `N [proc]`) stay skipped.
    #[test]
    fn a_blkparse_line_without_nsectors_is_an_error() {
        let d = scratch("blk-nsectors");
        let ok = "  8,16 5 1 0.000001 7 Q W 8 + 8 [a]\n  8,16 5 2 0.000002 7 Q FN [a]\n  8,16 5 3 0.000003 7 Q R 512 [a]\n";
        std::fs::write(d.join("ok.trace"), ok).unwrap();
        let (code, out, err) = ssdsim_in(&d, &["trace", "stats", "ok.trace", "--format", "json"]);
        assert_eq!(code, 0, "{err}");
        assert!(out.contains("\"requests\": 1"), "{out}");
        std::fs::write(
            d.join("cut.trace"),
            format!("{ok}  8,16 5 4 0.000004 7 Q W 1000\n"),
        )
        .unwrap();
        let (code, _, err) = ssdsim_in(&d, &["trace", "stats", "cut.trace"]);
        assert_ne!(code, 0, "{err}");
        assert!(
            err.contains("cut.trace:4") && err.contains("no \"+ nsectors\""),
            "{err}"
        );
        std::fs::remove_dir_all(&d).unwrap();
    }

    /// `import mqsim` fills in MQSim's defaults for the elements a file
    /// leaves out, as MQSim does, but says so on stderr: each element and the
    /// default taken, and a whole missing `<Flash_Parameter_Set>` loudly.
    #[test]
    fn mqsim_import_names_each_defaulted_element() {
        let d = scratch("mqsim-defaults");
        let xml = std::fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/mqsim-ssdconfig.xml"),
        )
        .unwrap();
        let no_rate: String = xml
            .lines()
            .filter(|l| !l.contains("<Channel_Transfer_Rate>"))
            .map(|l| format!("{l}\n"))
            .collect();
        std::fs::write(d.join("a.xml"), no_rate).unwrap();
        let (code, _, err) = ssdsim_in(&d, &["import", "mqsim", "a.xml", "-o", "a.toml"]);
        assert_eq!(code, 0, "{err}");
        assert!(
            err.contains("Device_Parameter_Set leaves out")
                && err.contains("Channel_Transfer_Rate = 300"),
            "{err}"
        );
        let (a, b) = (
            xml.find("<Flash_Parameter_Set>").unwrap(),
            xml.find("</Flash_Parameter_Set>").unwrap(),
        );
        let no_flash = format!(
            "{}{}",
            &xml[..a],
            &xml[b + "</Flash_Parameter_Set>".len()..]
        );
        std::fs::write(d.join("b.xml"), no_flash).unwrap();
        let (code, _, err) = ssdsim_in(&d, &["import", "mqsim", "b.xml", "-o", "b.toml"]);
        assert_eq!(code, 0, "{err}");
        assert!(
            err.contains("NO <Flash_Parameter_Set>")
                && err.contains("Page_Capacity = 8192")
                && err.contains("Flash_Technology = MLC"),
            "{err}"
        );
        std::fs::remove_dir_all(&d).unwrap();
    }

    /// Each refusal names the field the user set: a too-large file size is
    /// `personality.file_size`, not `io_size`; an over-provisioning that
    /// leaves no logical page is `ftl.op`, not `ftl.log_area`.
    #[test]
    fn errors_name_the_field_that_was_set() {
        let d = scratch("fields");
        let (code, _, err) = ssdsim_in(
            &d,
            &[
                "run",
                "--personality",
                "varmail",
                "--set",
                "personality.level=file",
                "--set",
                "personality.file_size=2TiB",
                "--no-power",
            ],
        );
        assert_eq!(code, 2, "{err}");
        assert!(
            err.contains("personality.file_size") && !err.contains("personality.io_size"),
            "{err}"
        );
        let (code, _, err) = ssdsim_in(&d, &["run", "--set", "ftl.op=1e300", "--no-power"]);
        assert_eq!(code, 2, "{err}");
        assert!(
            err.contains("ftl.op") && !err.contains("ftl.log_area"),
            "{err}"
        );
        std::fs::remove_dir_all(&d).unwrap();
    }

    /// A refused `--record-trace` leaves no file behind, whatever refused
    /// it: an option refused before the run, another output that cannot be
    /// written, a run that completed nothing; also when OUT is a dangling
    /// symbolic link (its target is not created, the link is kept). An old
    /// file of that name is neither truncated nor removed.
    #[test]
    fn a_refused_record_trace_leaves_no_file() {
        let d = scratch("record");
        let small = ["--number_ios", "100", "--precondition", "none"];
        let refusals: [(&[&str], &str); 3] = [
            // Refused before the run: plots need the power model.
            (
                &["--no-power", "--plot-power", "p.svg"],
                "need the power model",
            ),
            // Another output's directory does not exist.
            (&["--html", "no-such-dir/r.html"], "cannot write"),
            // Refused after the run: nothing completed by the time limit.
            (
                &["--rate_iops", "1000", "--time-limit", "1ns", "--no-power"],
                "completed no request",
            ),
        ];
        for out in ["r.msr", "r.csv.gz"] {
            for (extra, why) in refusals {
                let mut args = vec!["run", "--record-trace", out];
                args.extend(small);
                args.extend(extra);
                let (code, _, err) = ssdsim_in(&d, &args);
                assert_ne!(code, 0, "{args:?}: {err}");
                assert!(err.contains(why), "{args:?}: {err}");
                assert_eq!(names(&d), Vec::<String>::new(), "{args:?}");
                // An old file stays as it was.
                std::fs::write(d.join(out), "old\n").unwrap();
                let (code, _, err) = ssdsim_in(&d, &args);
                assert_ne!(code, 0, "{args:?}: {err}");
                assert_eq!(std::fs::read_to_string(d.join(out)).unwrap(), "old\n");
                assert_eq!(names(&d), [out], "{args:?}");
                std::fs::remove_file(d.join(out)).unwrap();
            }
        }
        // Through a dangling link: neither its target nor anything else appears.
        std::os::unix::fs::symlink("target.msr", d.join("link.msr")).unwrap();
        for (extra, why) in refusals {
            let mut args = vec!["run", "--record-trace", "link.msr"];
            args.extend(small);
            args.extend(extra);
            let (code, _, err) = ssdsim_in(&d, &args);
            assert_ne!(code, 0, "{args:?}: {err}");
            assert!(err.contains(why), "{args:?}: {err}");
            assert_eq!(names(&d), ["link.msr"], "{args:?}");
            assert!(std::fs::symlink_metadata(d.join("link.msr"))
                .unwrap()
                .file_type()
                .is_symlink());
        }
        std::fs::remove_dir_all(&d).unwrap();
    }

    /// A closed-loop (iodepth) direct run is recorded: one line per request
    /// at the time the engine submitted it (the first `iodepth` at 0, then
    /// each as a slot frees), so replaying the trace open-loop runs the same
    /// requests at the same times and reports the same figures.
    #[test]
    fn a_closed_loop_run_records_its_submission_times() {
        let d = scratch("record-closed");
        let run = [
            "run",
            "--rw",
            "randwrite",
            "--iodepth",
            "4",
            "--number_ios",
            "1000",
            "--precondition",
            "none",
            "--no-power",
            "--format",
            "json",
        ];
        let mut args = run.to_vec();
        args.extend(["--record-trace", "r.csv", "--record-format", "csv"]);
        let (code, out, err) = ssdsim_in(&d, &args);
        assert_eq!(code, 0, "{err}");
        let body = std::fs::read_to_string(d.join("r.csv")).unwrap();
        let lines: Vec<&str> = body.lines().skip(1).collect();
        assert_eq!(lines.len(), 1000, "one line per request");
        let times: Vec<u64> = lines
            .iter()
            .map(|l| l.split(',').next().unwrap().parse().unwrap())
            .collect();
        assert!(times.windows(2).all(|w| w[0] <= w[1]), "times go back");
        assert!(times[..4].iter().all(|&t| t == 0), "{:?}", &times[..5]);
        assert!(
            times[4] > 0 && *times.last().unwrap() > 0,
            "{:?}",
            &times[..5]
        );
        // The replay, open loop, is the same run.
        let (code, replay, err) = ssdsim_in(
            &d,
            &[
                "run",
                "--trace",
                "r.csv",
                "--precondition",
                "none",
                "--no-power",
                "--format",
                "json",
            ],
        );
        assert_eq!(code, 0, "{err}");
        let (a, b): (serde_json::Value, serde_json::Value) = (
            serde_json::from_str(&out).unwrap(),
            serde_json::from_str(&replay).unwrap(),
        );
        for p in ["/host/requests", "/host/writes", "/host/sim_time_s"] {
            assert_eq!(a.pointer(p), b.pointer(p), "{p}");
        }
        assert_eq!(a["latency_us"]["all"], b["latency_us"]["all"]);
        std::fs::remove_dir_all(&d).unwrap();
    }

    /// A run that fails partway (a malformed trace line after 200 good ones)
    /// leaves an old `--record-trace` file byte-identical and no temporary
    /// file: the trace is recorded beside it and renamed over it only when
    /// the run succeeded.
    #[test]
    fn a_run_failing_partway_keeps_the_old_record_trace() {
        let d = scratch("record-partway");
        let t = msr_trace(&d);
        let mut body = std::fs::read_to_string(&t).unwrap();
        body.push_str("99999999,ssdsim,0,Read,not-a-number,4096,0\n");
        std::fs::write(&t, body).unwrap();
        let old: Vec<u8> = (0..=255u8).cycle().take(10_000).collect();
        std::fs::write(d.join("r.msr"), &old).unwrap();
        let args = [
            "run",
            "--trace",
            "t.csv",
            "--no-power",
            "--record-trace",
            "r.msr",
        ];
        let (code, _, err) = ssdsim_in(&d, &args);
        assert_eq!(code, 2, "{err}");
        assert!(err.contains("t.csv:201"), "{err}");
        assert_eq!(std::fs::read(d.join("r.msr")).unwrap(), old);
        assert_eq!(names(&d), ["r.msr", "t.csv"]);
        // The same run without the bad line replaces the file.
        msr_trace(&d);
        let (code, _, err) = ssdsim_in(&d, &args);
        assert_eq!(code, 0, "{err}");
        let new = std::fs::read_to_string(d.join("r.msr")).unwrap();
        assert_eq!(new.lines().count(), 200, "{new}");
        assert_eq!(names(&d), ["r.msr", "t.csv"]);
        std::fs::remove_dir_all(&d).unwrap();
    }

    /// A closed standard output (`>&-`) is an error, not a report thrown
    /// away with exit 0 (Rust's standard output ignores EBADF).
    #[test]
    fn a_closed_stdout_is_an_error() {
        let d = scratch("closed-stdout");
        let o = Command::new("sh")
            .arg("-c")
            .arg("exec \"$0\" \"$@\" >&-")
            .arg(env!("CARGO_BIN_EXE_ssdsim"))
            .args(["run", "--number_ios", "100", "--no-power"])
            .current_dir(&d)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{err}");
        assert!(err.contains("standard output is closed"), "{err}");
        // Output to a file needs no standard output.
        let o = Command::new("sh")
            .arg("-c")
            .arg("exec \"$0\" \"$@\" >&-")
            .arg(env!("CARGO_BIN_EXE_ssdsim"))
            .args(["run", "--number_ios", "100", "--no-power", "--out", "r.txt"])
            .current_dir(&d)
            .output()
            .unwrap();
        assert_eq!(
            o.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&o.stderr)
        );
        assert!(!std::fs::read_to_string(d.join("r.txt")).unwrap().is_empty());
        std::fs::remove_dir_all(&d).unwrap();
    }

    /// A file-level run that skips flowops says so on stderr (count, share,
    /// reasons), not only in the report's notes; one that skips none is quiet.
    #[test]
    fn skipped_flowops_are_a_warning() {
        let d = scratch("flowops");
        let run = |prealloc: &str| {
            ssdsim_in(
                &d,
                &[
                    "run",
                    "--personality",
                    "varmail",
                    "--set",
                    "personality.level=file",
                    "--set",
                    "personality.files=300",
                    "--set",
                    prealloc,
                    "--blocks-per-plane",
                    "256",
                    "--time-limit",
                    "300ms",
                    "--no-power",
                    "--format",
                    "json",
                ],
            )
        };
        let (code, out, err) = run("personality.prealloc_percent=0");
        assert_eq!(code, 0, "{err}");
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        let skipped = v["notes"]["filebench_flowops_skipped"].as_u64().unwrap();
        assert!(skipped > 0, "{out}");
        assert!(
            err.contains(&format!(
                "WARNING: the file-level flows skipped {skipped} of "
            )) && err.contains("no open file"),
            "{err}"
        );
        // A sweep's point says it too, on stderr with the point's
        // parameters and in its row.
        let (code, _, err) = ssdsim_in(
            &d,
            &[
                "sweep",
                "--personality",
                "varmail",
                "--set",
                "personality.level=file",
                "--set",
                "personality.files=300",
                "--set",
                "personality.prealloc_percent=0",
                "--blocks-per-plane",
                "256",
                "--time-limit",
                "300ms",
                "--sched",
                "noop,cfq",
                "--jsonl",
                "rows.jsonl",
            ],
        );
        assert_eq!(code, 0, "{err}");
        let rows = std::fs::read_to_string(d.join("rows.jsonl")).unwrap();
        assert_eq!(rows.lines().count(), 2);
        for (i, line) in rows.lines().enumerate() {
            let r: serde_json::Value = serde_json::from_str(line).unwrap();
            let w = r["warnings"][0].as_str().unwrap_or_default();
            assert!(
                w.starts_with("WARNING: the file-level flows skipped "),
                "{line}"
            );
            assert!(
                err.contains(&format!("point {i} (")) && err.contains(w),
                "{err}"
            );
        }
        std::fs::remove_dir_all(&d).unwrap();
    }
}
