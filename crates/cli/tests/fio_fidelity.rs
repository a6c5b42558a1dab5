//! fio fidelity: a pasted fio job ends, ramps and reports as fio's does
//! (`size=`, `time_based`, `runtime=`, `ramp_time=`, `--runtime`,
//! `--output-format json`), and duration flags say their unit. Each test runs
//! the `ssdsim` binary as a user would.

use serde_json::Value;
use std::path::Path;

mod common;
use common::{scratch, ssdsim};

/// Write the job `text` to `dir/name` and return its path.
fn job(dir: &Path, name: &str, text: &str) -> String {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p.to_str().unwrap().to_string()
}

/// `ssdsim run ARGS --format json --no-power`, which must succeed: the report.
fn report(args: &[&str]) -> Value {
    let mut a = vec!["run"];
    a.extend_from_slice(args);
    a.extend_from_slice(&["--format", "json", "--no-power"]);
    let (code, out, err) = ssdsim(&a);
    assert_eq!(code, 0, "{a:?}: {err}");
    serde_json::from_str(&out).unwrap()
}

fn f(v: &Value) -> f64 {
    v.as_f64().unwrap()
}
fn n(v: &Value) -> u64 {
    v.as_u64().unwrap()
}

/// `size=` ends the job once that many bytes are done (before the runtime);
/// with `time_based` the job goes over its size again until the runtime.
#[test]
fn size_ends_the_job_unless_time_based() {
    let d = scratch("size");
    // 1 MiB of 4 KiB random writes takes far less than the 60 s runtime.
    let a = job(
        &d,
        "a.fio",
        "[j]\nrw=randwrite\nbs=4k\nsize=1M\ndirect=1\nruntime=60\n",
    );
    let r = report(&["--fio", &a]);
    assert_eq!(n(&r["host"]["bytes_written"]), 1 << 20, "{}", r["host"]);
    assert_eq!(n(&r["host"]["requests"]), 256);
    assert!(f(&r["host"]["sim_time_s"]) < 1.0);
    // time_based: runs the whole runtime, over the 1 MiB many times.
    let b = job(
        &d,
        "b.fio",
        "[j]\nrw=randwrite\nbs=4k\nsize=1M\ndirect=1\nruntime=200ms\ntime_based\n",
    );
    let r = report(&["--fio", &b]);
    assert!(
        (f(&r["host"]["sim_time_s"]) - 0.2).abs() < 1e-9,
        "{}",
        r["host"]
    );
    assert!(n(&r["host"]["bytes_written"]) > 2 << 20, "{}", r["host"]);
    // A buffered job (fio's default) ends after its size too: the calls.
    let c = job(&d, "c.fio", "[j]\nrw=write\nbs=4k\nsize=1M\n");
    let r = report(&["--fio", &c]);
    assert_eq!(n(&r["app"]["bytes_written"]), 1 << 20, "{}", r["app"]);
    // number_ios ends it first when it is smaller; a --number_ios flag wins.
    let e = job(
        &d,
        "e.fio",
        "[j]\nrw=randread\nbs=4k\nsize=1M\nnumber_ios=10\ndirect=1\n",
    );
    assert_eq!(n(&report(&["--fio", &e])["host"]["requests"]), 10);
    assert_eq!(
        n(&report(&["--fio", &e, "--number_ios", "20"])["host"]["requests"]),
        20
    );
    // time_based without a runtime: fio ignores it, and the job ends by its
    // size; the note on stderr says so.
    let t = job(
        &d,
        "t.fio",
        "[j]\nrw=read\nsize=64k\ntime_based\ndirect=1\n",
    );
    let (code, out, err) = ssdsim(&["run", "--fio", &t, "--format", "json", "--no-power"]);
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains("time_based (without runtime= fio ignores it)"),
        "{err}"
    );
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(n(&v["host"]["requests"]), 16);
    std::fs::remove_dir_all(&d).unwrap();
}

/// fio's time units (`1m`, `2h`, bare seconds) in a job file and in
/// `--runtime`; `--time-limit`, `--max-gap` and `--power-sample` refuse a
/// number without a unit, naming the flag and the units.
#[test]
fn times_take_fio_units_and_flags_need_units() {
    let d = scratch("units");
    for (rt, limit) in [("1m", "60s"), ("2h", "7200s"), ("90", "90s")] {
        let p = job(&d, "r.fio", &format!("[j]\nrw=read\nruntime={rt}\n"));
        let (code, out, err) = ssdsim(&["run", "--fio", &p, "--print-config"]);
        assert_eq!(code, 0, "{err}");
        assert!(
            out.contains(&format!("time_limit = \"{limit}\"")),
            "{rt}: {out}"
        );
    }
    let (code, out, err) = ssdsim(&["run", "--runtime", "1m", "--print-config"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("time_limit = \"60s\""), "{out}");
    // --runtime is the time limit: a run cut at 20 ms.
    let r = report(&[
        "--rw",
        "randread",
        "--runtime",
        "20ms",
        "--number_ios",
        "100000000",
    ]);
    assert!((f(&r["host"]["sim_time_s"]) - 0.02).abs() < 1e-9);
    // ... and counts from the end of the ramp.
    let (_, out, _) = ssdsim(&[
        "run",
        "--runtime",
        "1m",
        "--set",
        "sim.ramp_time=10s",
        "--print-config",
    ]);
    assert!(out.contains("time_limit = \"70s\""), "{out}");
    for (flag, val) in [
        ("--time-limit", "1"),
        ("--max-gap", "5"),
        ("--power-sample", "2"),
        ("--time-limit", "0.5"),
    ] {
        let (code, _, err) = ssdsim(&["run", flag, val]);
        assert_eq!(code, 2, "{flag} {val}: {err}");
        assert!(
            err.contains(flag) && err.contains("no unit") && err.contains("ms"),
            "{flag} {val}: {err}"
        );
    }
    let (code, _, err) = ssdsim(&["run", "--runtime", "1x"]);
    assert_eq!(code, 2);
    assert!(
        err.contains("--runtime") && err.contains("unknown unit"),
        "{err}"
    );
    let (code, _, err) = ssdsim(&["run", "--runtime", "1s", "--time-limit", "1s"]);
    assert_eq!(code, 2, "{err}");
    // Every duration and size flag names its unit in --help.
    let (_, help, _) = ssdsim(&["run", "--help"]);
    for flag in [
        "--time-limit",
        "--runtime",
        "--max-gap",
        "--power-sample",
        "--bs",
        "--size",
        "--offset",
        "--page-size",
        "--write-buffer",
    ] {
        let at = help
            .find(&format!("{flag} <"))
            .unwrap_or_else(|| panic!("{flag}"));
        let text = &help[at..help[at..].find("\n\n").map_or(help.len(), |e| at + e)];
        assert!(
            ["unit", "bytes", "seconds"]
                .iter()
                .any(|w| text.contains(w)),
            "{flag}: {text}"
        );
    }
    let (_, help, _) = ssdsim(&["mapping-size", "--help"]);
    for flag in ["--capacity", "--page-size"] {
        let at = help.find(&format!("{flag} <")).unwrap();
        assert!(help[at..at + 200].contains("unit"), "{flag}: {help}");
    }
    std::fs::remove_dir_all(&d).unwrap();
}

/// `ramp_time=`: the I/O of the ramp is in no statistic. The requests a
/// ramped run reports are those that complete after the ramp: the
/// difference of two unramped runs cut at the end and at the ramp (give or
/// take the iodepth in flight at the cut).
#[test]
fn ramp_time_is_left_out_of_the_statistics() {
    let d = scratch("ramp");
    let base = "[j]\nrw=randread\nbs=4k\niodepth=8\ndirect=1\ntime_based\n";
    let ramped = job(
        &d,
        "r.fio",
        &format!("{base}ramp_time=10ms\nruntime=30ms\n"),
    );
    let r = report(&["--fio", &ramped]);
    let upto = |t: &str| {
        let p = job(&d, "u.fio", &format!("{base}runtime={t}\n"));
        n(&report(&["--fio", &p])["host"]["requests"])
    };
    let (all, ramp) = (upto("40ms"), upto("10ms"));
    let got = n(&r["host"]["requests"]);
    assert!(
        got + 8 >= all - ramp && got <= all - ramp + 8,
        "{got} requests after the ramp; {all} in 40 ms, {ramp} in the first 10 ms"
    );
    // IOPS and latency over the measured 30 ms only.
    assert!(
        (f(&r["host"]["sim_time_s"]) - 0.03).abs() < 1e-9,
        "{}",
        r["host"]
    );
    assert_eq!(n(&r["latency_us"]["all"]["count"]), got);
    assert!((f(&r["host"]["iops"]) - got as f64 / 0.03).abs() < 1e-6);
    // Energy too: over the measured 30 ms, at its mean power.
    let (code, out, err) = ssdsim(&["run", "--fio", &ramped, "--format", "json"]);
    assert_eq!(code, 0, "{err}");
    let p: Value = serde_json::from_str(&out).unwrap();
    let e = &p["energy_j"];
    assert!(
        (f(&e["state_s"]["window_s"]) - 0.03).abs() < 1e-12,
        "{}",
        e["state_s"]
    );
    let (total, mean) = (f(&e["total"]), f(&p["power_w"]["mean"]));
    assert!(
        (mean * 0.03 - total).abs() <= 1e-12 * total,
        "{mean} W, {total} J"
    );
    assert!(
        r["config"]["sim"]["ramp_time"] == "10ms",
        "{}",
        r["config"]["sim"]
    );
    // As in fio (3.33 with ioengine=null and rate_iops: size=4m over a 1 s
    // ramp reports 23 requests), the size counts from the start: the
    // ramp's requests are done but not reported.
    let s = job(
        &d,
        "s.fio",
        "[j]\nrw=randwrite\nbs=4k\nsize=4M\ndirect=1\nramp_time=5ms\n",
    );
    let r = report(&["--fio", &s]);
    let w = n(&r["host"]["bytes_written"]);
    assert!(
        w > 0 && w < 4 << 20 && w.is_multiple_of(4096),
        "{}",
        r["host"]
    );
    // A job over before its ramp is: an error that says so.
    let short = job(
        &d,
        "x.fio",
        "[j]\nrw=read\nsize=64k\ndirect=1\nramp_time=1s\n",
    );
    let (code, _, err) = ssdsim(&["run", "--fio", &short]);
    assert_eq!(code, 2);
    assert!(err.contains("before the end of the ramp"), "{err}");
    // A ramp not before the time limit is refused, naming the field.
    let (code, _, err) = ssdsim(&["run", "--time-limit", "1s", "--set", "sim.ramp_time=2s"]);
    assert_eq!(code, 2);
    assert!(err.contains("sim.ramp_time"), "{err}");
    std::fs::remove_dir_all(&d).unwrap();
}

/// fio's percentile keys (`%f` of each percentile).
fn pct<'a>(lat: &'a Value, p: &str) -> &'a Value {
    &lat["percentile"][p]
}

/// `--output-format json` writes fio's JSON schema, with the report's
/// numbers: a direct job (block requests) and a buffered one (calls).
#[test]
fn output_format_json_is_fios_schema_with_the_reports_numbers() {
    let d = scratch("json");
    let p = job(
        &d,
        "mix.fio",
        "[global]\ndirect=1\n[mixed]\nrw=randrw\nrwmixread=70\nbs=8k\nsize=8M\n",
    );
    let rep = report(&["--fio", &p]);
    let (code, out, err) = ssdsim(&["run", "--fio", &p, "--output-format", "json", "--no-power"]);
    assert_eq!(code, 0, "{err}");
    let v: Value = serde_json::from_str(&out).unwrap();
    assert!(v["fio version"].as_str().unwrap().starts_with("ssdsim-"));
    assert!(v["timestamp"].is_u64());
    let j = &v["jobs"][0];
    assert_eq!(j["jobname"], "mixed");
    let secs = f(&rep["host"]["sim_time_s"]);
    for (dir, count, bytes) in [
        ("read", "reads", "bytes_read"),
        ("write", "writes", "bytes_written"),
    ] {
        let o = &j[dir];
        let ios = n(&rep["host"][count]);
        let b = n(&rep["host"][bytes]);
        assert!(ios > 0, "{dir}");
        assert_eq!(n(&o["total_ios"]), ios, "{dir}");
        assert_eq!(n(&o["io_bytes"]), b);
        assert_eq!(n(&o["io_kbytes"]), b >> 10);
        assert_eq!(n(&o["bw_bytes"]), (b as f64 / secs).floor() as u64);
        assert_eq!(n(&o["bw"]), n(&o["bw_bytes"]) / 1024, "KiB/s");
        assert!((f(&o["iops"]) - ios as f64 / secs).abs() < 1e-6);
        assert_eq!(n(&o["runtime"]), (secs * 1e3).round() as u64, "ms");
        let lat = &rep["latency_us"][dir];
        for key in ["clat_ns", "lat_ns"] {
            let c = &o[key];
            assert_eq!(n(&c["N"]), ios);
            let us = |x: &Value| x.as_u64().unwrap() as f64 / 1e3;
            let close = |a: f64, b: f64| (a - b).abs() <= 1e-9 * b.max(1.0);
            assert!(close(us(&c["max"]), f(&lat["max"])), "{key} max");
            assert!(close(f(&c["mean"]) / 1e3, f(&lat["mean"])), "{key} mean");
            assert!(close(us(pct(c, "50.000000")), f(&lat["p50"])), "{key} p50");
            assert!(close(us(pct(c, "90.000000")), f(&lat["p90"])), "{key} p90");
            assert!(close(us(pct(c, "99.000000")), f(&lat["p99"])), "{key} p99");
            assert!(
                close(us(pct(c, "99.900000")), f(&lat["p999"])),
                "{key} p99.9"
            );
            // fio's whole default list, in order.
            let keys: Vec<&String> = c["percentile"].as_object().unwrap().keys().collect();
            for k in [
                "1.000000",
                "5.000000",
                "95.000000",
                "99.500000",
                "99.950000",
                "99.990000",
            ] {
                assert!(keys.iter().any(|x| *x == k), "{k}: {keys:?}");
            }
            let mut last = 0;
            for k in ssdsim::fio_json::PERCENTILES
                .iter()
                .map(|p| format!("{p:.6}"))
            {
                let x = n(pct(c, &k));
                assert!(x >= last, "percentiles decrease at {k}");
                last = x;
            }
            assert!(n(&c["min"]) <= n(pct(c, "1.000000")) && f(&c["stddev"]) >= 0.0);
        }
        assert_eq!(
            n(&o["slat_ns"]["N"]),
            0,
            "submission latency is not timed apart"
        );
    }
    assert_eq!(n(&j["trim"]["total_ios"]), 0);
    // A buffered job: the application's calls, as fio times the syscalls.
    let b = job(&d, "buf.fio", "[buffered]\nrw=write\nbs=4k\nsize=2M\n");
    let rep = report(&["--fio", &b]);
    let (code, out, err) = ssdsim(&["run", "--fio", &b, "--output-format", "json", "--no-power"]);
    assert_eq!(code, 0, "{err}");
    let v: Value = serde_json::from_str(&out).unwrap();
    let w = &v["jobs"][0]["write"];
    assert_eq!(n(&w["total_ios"]), n(&rep["app"]["writes"]));
    assert_eq!(n(&w["io_bytes"]), 2 << 20);
    let p99 = n(pct(&w["clat_ns"], "99.000000")) as f64 / 1e3;
    let want = f(&rep["app"]["latency_us"]["write"]["p99"]);
    assert!((p99 - want).abs() <= 1e-9 * want, "{p99} vs {want}");
    // --output-format and --format are one choice.
    let (code, _, err) = ssdsim(&["run", "--output-format", "json", "--format", "json"]);
    assert_eq!(code, 2, "{err}");
    std::fs::remove_dir_all(&d).unwrap();
}

/// Several jobs in one file run at once, as flows over the whole device.
#[test]
fn several_jobs_run_at_once_as_flows() {
    let d = scratch("jobs");
    let text = "[global]\ndirect=1\nbs=4k\nruntime=50ms\ntime_based\n\
                [readers]\nrw=randread\niodepth=8\nnumjobs=2\n\
                [writer]\nrw=randwrite\niodepth=4\n";
    let p = job(&d, "m.fio", text);
    let r = report(&["--fio", &p, "--precondition", "fill"]);
    let flows = r["flows"].as_array().unwrap();
    let names: Vec<&str> = flows.iter().map(|f| f["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["readers-0", "readers-1", "writer"]);
    // Every job runs the whole 50 ms over the whole device, at once.
    let sectors = r["ftl"]["logical_pages"].as_u64().unwrap() * 8;
    let mut total = 0;
    for f in flows {
        assert_eq!(f["first_sector"].as_u64(), Some(0));
        assert_eq!(f["sectors"].as_u64(), Some(sectors));
        assert!((f["time_s"].as_f64().unwrap() - 0.05).abs() < 1e-9, "{f}");
        total += f["requests"].as_u64().unwrap();
    }
    assert_eq!(total, r["host"]["requests"].as_u64().unwrap());
    assert_eq!(flows[2]["reads"].as_u64(), Some(0));
    assert!(flows[2]["writes"].as_u64().unwrap() > 0);
    // The clones draw different addresses: not the same run twice.
    assert_ne!(flows[0]["latency_us"], flows[1]["latency_us"]);
    // No slowdown runs: fio runs nothing alone.
    assert!(r.get("fairness").is_none());

    for (text, line, what) in [
        ("[a]\nrw=read\nnumjobs=65\n", 3, "numjobs"),
        ("[a]\nrw=read\nstartdelay=1-5\n", 3, "range"),
        ("[a]\nrw=read\nstonewall=yes\n", 3, "stonewall"),
    ] {
        let p = job(&d, "bad.fio", text);
        let (code, _, err) = ssdsim(&["run", "--fio", &p]);
        assert_eq!(code, 2);
        assert!(
            err.contains(&format!("bad.fio:{line}")) && err.contains(what),
            "{err}"
        );
    }
    let (code, _, err) = ssdsim(&["run", "--fio", &p, "--rw", "write"]);
    assert_eq!(code, 2);
    assert!(
        err.contains("--rw") && err.contains("several jobs"),
        "{err}"
    );
    std::fs::remove_dir_all(&d).unwrap();
}

/// A flow's figures in a report's `flows` section, by name.
fn flow<'a>(r: &'a Value, name: &str) -> &'a Value {
    r["flows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["name"] == name)
        .unwrap_or_else(|| panic!("no flow {name}"))
}

/// fio's `stonewall` runs the jobs after it once the jobs before it have
/// finished: the reader starts at the writer's last completion, and reads
/// what it wrote (flash reads, not an empty drive's). `startdelay` counts
/// from the run's start, as fio counts it from its genesis, and a job
/// that waits for its delay lets the jobs after it start (fio's
/// `run_threads` passes it over), but a stonewall still waits.
#[test]
fn stonewall_runs_groups_in_turn() {
    let d = scratch("stonewall");
    let p = job(
        &d,
        "sw.fio",
        "[global]\ndirect=1\nbs=128k\niodepth=4\n\
         [w]\nrw=write\nsize=16M\n\
         [r]\nstonewall\nrw=read\nsize=16M\n",
    );
    let r = report(&["--fio", &p]);
    let (w, rd) = (flow(&r, "w"), flow(&r, "r"));
    assert_eq!(f(&w["start_s"]), 0.0);
    let w_end = f(&w["start_s"]) + f(&w["time_s"]);
    assert!((f(&rd["start_s"]) - w_end).abs() < 1e-12, "{w} {rd}");
    assert_eq!(n(&w["writes"]), 128);
    assert_eq!(n(&rd["reads"]), 128);
    // The run is the two jobs one after the other.
    let end = f(&rd["start_s"]) + f(&rd["time_s"]);
    assert!((f(&r["host"]["sim_time_s"]) - end).abs() < 1e-12);
    assert!(n(&r["flash"]["page_reads"]) >= 128 * 32, "{}", r["flash"]);

    // [a] runs 30 ms; [b] waits 10 ms from the start; [c] is not held up
    // by [b]'s delay; [e], a stonewall, waits for all of them.
    let p = job(
        &d,
        "delay.fio",
        "[global]\ndirect=1\nbs=4k\nrw=randread\ntime_based\n\
         [a]\nruntime=30ms\n\
         [b]\nstartdelay=10ms\nruntime=5ms\n\
         [c]\nruntime=5ms\n\
         [e]\nstonewall\nruntime=5ms\n",
    );
    let r = report(&["--fio", &p, "--precondition", "fill"]);
    assert_eq!(f(&flow(&r, "a")["start_s"]), 0.0);
    assert!((f(&flow(&r, "b")["start_s"]) - 0.010).abs() < 1e-12);
    assert_eq!(f(&flow(&r, "c")["start_s"]), 0.0);
    let last = ["a", "b", "c"]
        .iter()
        .map(|x| f(&flow(&r, x)["start_s"]) + f(&flow(&r, x)["time_s"]))
        .fold(0.0, f64::max);
    let e = f(&flow(&r, "e")["start_s"]);
    assert!(
        e >= 0.030 && (e - last).abs() < 1e-12,
        "e at {e}, last end {last}"
    );
    std::fs::remove_dir_all(&d).unwrap();
}

/// Each job keeps its own time frame: its runtime counts from its own
/// start and ramp, it submits nothing after it (what is in flight
/// completes and counts, so it ends within one latency of its runtime),
/// and its ramp is left out of its own figures. The device-level figures
/// start when the first of the starting jobs' ramps ends: none here, as
/// one job has no ramp.
#[test]
fn jobs_keep_their_own_runtime_and_ramp() {
    let d = scratch("frames");
    let p = job(
        &d,
        "tf.fio",
        "[global]\ndirect=1\nbs=4k\ntime_based\n\
         [a]\nrw=randread\nruntime=20ms\nramp_time=10ms\niodepth=4\n\
         [b]\nrw=randwrite\nruntime=50ms\n",
    );
    let r = report(&["--fio", &p, "--precondition", "fill"]);
    let (a, b) = (flow(&r, "a"), flow(&r, "b"));
    let max_s = |x: &Value| f(&x["latency_us"]["max"]) / 1e6;
    assert!((f(&a["measured_from_s"]) - 0.010).abs() < 1e-12, "{a}");
    let ta = f(&a["time_s"]);
    assert!(ta >= 0.020 && ta <= 0.020 + max_s(a), "a ran {ta} s");
    assert_eq!(f(&b["measured_from_s"]), 0.0);
    let tb = f(&b["time_s"]);
    assert!(tb >= 0.050 && tb <= 0.050 + max_s(b), "b ran {tb} s");
    // The device's figures cover the whole run: a job's own ramp is not
    // the device's while another job is measured, so a's ramp requests
    // are in the device's count and not in a's.
    assert!((f(&r["host"]["sim_time_s"]) - tb).abs() < 1e-12);
    let ramped = n(&r["host"]["requests"]) - n(&a["requests"]) - n(&b["requests"]);
    assert!(ramped > 0, "a's ramp requests");
    assert!(
        (ramped as f64) < n(&a["requests"]) as f64,
        "{ramped} in 10 of a's 30 ms"
    );
    std::fs::remove_dir_all(&d).unwrap();
}

/// Jobs that all ramp: the device-level figures start when the first of
/// the starting jobs' ramps ends.
#[test]
fn the_device_ramp_is_the_first_jobs_ramp() {
    let d = scratch("device-ramp");
    let p = job(
        &d,
        "r.fio",
        "[global]\ndirect=1\nbs=4k\nrw=randread\ntime_based\n\
         [a]\nramp_time=10ms\nruntime=20ms\n\
         [b]\nramp_time=20ms\nruntime=20ms\n",
    );
    let r = report(&["--fio", &p, "--precondition", "fill"]);
    let b = flow(&r, "b");
    assert!((f(&b["measured_from_s"]) - 0.020).abs() < 1e-12);
    // b ends at 40 ms and the device measures from 10 ms.
    let end = f(&b["start_s"]) + 0.020 + f(&b["time_s"]);
    assert!(
        (f(&r["host"]["sim_time_s"]) - (end - 0.010)).abs() < 1e-9,
        "{}",
        r["host"]
    );
    std::fs::remove_dir_all(&d).unwrap();
}

/// fio's JSON for several jobs: an entry per job (each `numjobs` clone
/// under its job's name) with its flow's figures, a buffered job's from
/// its calls; `groupid` goes up at `new_group` and `stonewall`; and
/// `group_reporting` sums a job into the entry before it in its group, as
/// fio's `stat.c` does (counts add, latencies merge, the runtime is the
/// longest).
#[test]
fn output_format_json_reports_every_job() {
    let d = scratch("json-jobs");
    let p = job(
        &d,
        "j.fio",
        "[global]\ndirect=1\nbs=4k\ntime_based\nruntime=20ms\n\
         [r]\nrw=randread\nnumjobs=2\n\
         [w]\nnew_group\nrw=randwrite\n\
         [s]\nstonewall\ngroup_reporting\nrw=randread\nnumjobs=3\n\
         [b]\nnew_group\ndirect=0\nrw=write\nsize=1M\ntime_based=0\n",
    );
    let r = report(&["--fio", &p, "--precondition", "fill"]);
    let (code, out, err) = ssdsim(&[
        "run",
        "--fio",
        &p,
        "--precondition",
        "fill",
        "--output-format",
        "json",
        "--no-power",
    ]);
    assert_eq!(code, 0, "{err}");
    let v: Value = serde_json::from_str(&out).unwrap();
    let jobs = v["jobs"].as_array().unwrap();
    let names: Vec<(&str, u64)> = jobs
        .iter()
        .map(|j| (j["jobname"].as_str().unwrap(), n(&j["groupid"])))
        .collect();
    assert_eq!(names, [("r", 0), ("r", 0), ("w", 1), ("s", 2), ("b", 3)]);
    for (j, fl) in [(0, "r-0"), (1, "r-1")] {
        let (o, x) = (&jobs[j]["read"], flow(&r, fl));
        assert_eq!(n(&o["total_ios"]), n(&x["reads"]));
        assert_eq!(n(&o["clat_ns"]["N"]), n(&x["reads"]));
        assert_eq!(n(&o["runtime"]), (f(&x["time_s"]) * 1e3).round() as u64);
        let mean_us = f(&o["clat_ns"]["mean"]) / 1e3;
        assert!((mean_us - f(&x["latency_us"]["mean"])).abs() < 1e-9 * mean_us);
    }
    assert_eq!(
        n(&jobs[2]["write"]["total_ios"]),
        n(&flow(&r, "w")["writes"])
    );
    // The three clones of [s] in one entry.
    let s: Vec<&Value> = (0..3).map(|k| flow(&r, &format!("s-{k}"))).collect();
    let reads: u64 = s.iter().map(|x| n(&x["reads"])).sum();
    let longest = s.iter().map(|x| f(&x["time_s"])).fold(0.0, f64::max);
    let o = &jobs[3]["read"];
    assert_eq!(n(&o["total_ios"]), reads);
    assert_eq!(n(&o["clat_ns"]["N"]), reads);
    assert_eq!(n(&o["runtime"]), (longest * 1e3).round() as u64);
    assert!((f(&o["iops"]) - reads as f64 / longest).abs() < 1e-6);
    // The buffered job: its write calls, all of its 1 MiB.
    let b = &jobs[4]["write"];
    assert_eq!(n(&b["total_ios"]), n(&flow(&r, "b")["app"]["writes"]));
    assert_eq!(n(&b["io_bytes"]), 1 << 20);
    std::fs::remove_dir_all(&d).unwrap();
}

/// A buffered job's runtime stops its application: no call after it, and
/// the run goes on to the jobs after a stonewall.
#[test]
fn a_buffered_jobs_runtime_stops_its_calls() {
    let d = scratch("buffered-runtime");
    let p = job(
        &d,
        "b.fio",
        "[a]\nrw=write\nbs=4k\nruntime=20ms\ntime_based\n\
         [b]\ndirect=1\nrw=randread\nbs=4k\nruntime=40ms\ntime_based\n\
         [c]\nstonewall\nrw=read\nbs=64k\nsize=4M\n",
    );
    let r = report(&["--fio", &p, "--precondition", "fill"]);
    let a = &flow(&r, "a")["app"];
    let t = f(&a["time_s"]);
    let max = f(&a["latency_us"]["write"]["max"]) / 1e6;
    assert!(t >= 0.020 && t <= 0.020 + max, "a's calls ran {t} s");
    assert!(n(&a["writes"]) > 0);
    let (b, c) = (flow(&r, "b"), flow(&r, "c"));
    let b_end = f(&b["start_s"]) + f(&b["time_s"]);
    assert!((f(&c["start_s"]) - b_end).abs() < 1e-12);
    assert_eq!(n(&c["app"]["bytes_read"]), 4 << 20);
    std::fs::remove_dir_all(&d).unwrap();
}

/// fio's `thinktime` (`handle_thinktime`): once `thinktime_blocks` requests
/// have completed, the job drains what is in flight and pauses. At depth 1
/// each request is followed by the pause: the run is its requests' time
/// plus one pause per request, exactly.
#[test]
fn thinktime_pauses_after_each_block_of_requests() {
    let d = scratch("thinktime");
    let base = "[j]\ndirect=1\nrw=randread\nbs=4k\nsize=400k\niodepth=1\n";
    let plain = report(&["--fio", &job(&d, "a.fio", base)]);
    let paused = report(&[
        "--fio",
        &job(&d, "b.fio", &format!("{base}thinktime=1000\n")),
    ]);
    let t = |r: &Value| f(&r["host"]["sim_time_s"]);
    assert_eq!(n(&paused["host"]["requests"]), 100);
    assert!(
        (t(&paused) - t(&plain) - 0.1).abs() < 1e-9,
        "{} s with pauses, {} s without",
        t(&paused),
        t(&plain)
    );
    // The drive is idle during the pauses: the requests' latency is that
    // of a lone request either way.
    assert_eq!(
        paused["latency_us"]["all"]["mean"],
        plain["latency_us"]["all"]["mean"]
    );
    // A buffered job's pauses are refused, naming the option.
    let (code, _, err) = ssdsim(&[
        "run",
        "--fio",
        &job(&d, "c.fio", "[j]\nrw=read\nsize=64k\nthinktime=10\n"),
    ]);
    assert_eq!(code, 2);
    assert!(
        err.contains("c.fio:4") && err.contains("thinktime"),
        "{err}"
    );
    std::fs::remove_dir_all(&d).unwrap();
}
