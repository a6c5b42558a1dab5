//! `ssdsim::calibrate`: a drive made by ssdsim with parameters this test
//! hides is recovered from its fio JSON outputs (every fitted target
//! within 3 %, the hold-out targets, a 70/30 mix at QD8 and a QD32 p99
//! latency, within 10 %), the same on any number of threads, and bad
//! targets files are refused naming the file, target and field.

use ssdsim::calibrate::{self, Fit};
use ssdsim::{fio_json, Ssd};
use std::path::{Path, PathBuf};

/// A fresh scratch directory for one test.
fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("ssdsim-cal-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// The base every calibration starts from: chip2's default drive (8
/// channels, tR 25 us, tPROG 200 us, a 4 KiB page in 100 us over the bus,
/// SATA 6 Gb/s), made small (64 blocks a plane) so that its fill is quick.
const BASE: &str = "nand_preset = \"chip2\"\n[nand]\nblocks_per_plane = 64\n";

/// The hidden drive: the base with four parameters moved.
const HIDDEN: &str = "nand_preset = \"chip2\"\n[nand]\nblocks_per_plane = 64\n\
    t_r = \"40us\"\nt_prog = \"300us\"\nbus = \"60MB/s\"\n[layout]\nchannels = 4\n";

/// The jobs of the tests: (file name, job).
const JOBS: &[(&str, &str)] = &[
    ("qd1", "[qd1]\nrw=randread\nbs=4k\niodepth=1\ndirect=1\n"),
    ("qd32", "[qd32]\nrw=randread\nbs=4k\niodepth=32\ndirect=1\n"),
    ("seqr", "[seqr]\nrw=read\nbs=128k\niodepth=32\ndirect=1\n"),
    ("seqw", "[seqw]\nrw=write\nbs=128k\niodepth=32\ndirect=1\n"),
    (
        "randw",
        "[randw]\nrw=randwrite\nbs=4k\niodepth=32\ndirect=1\n",
    ),
    (
        "mix",
        "[mix]\nrw=randrw\nrwmixread=70\nbs=4k\niodepth=8\ndirect=1\n",
    ),
];

const RUN_IOS: u64 = 1500;

/// The hidden drive's fio JSON output of each job (as `ssdsim run --config
/// hidden.toml --fio JOB --precondition fill --number_ios 1500
/// --output-format json` writes it), with the job files, in `dir`.
fn measure_hidden(dir: &Path) {
    std::fs::write(dir.join("base.toml"), BASE).unwrap();
    for (name, job) in JOBS {
        std::fs::write(dir.join(format!("{name}.fio")), job).unwrap();
        let ssd = Ssd::builder()
            .toml(HIDDEN)
            .seed(1)
            .precondition("fill")
            .number_ios(RUN_IOS)
            .power_model(false)
            .fio(*job)
            .build()
            .unwrap();
        let out = ssd.run().unwrap();
        let doc = fio_json::fio_json_run(&[], ssd.config(), &out.report, &out.latency);
        let text = serde_json::to_string_pretty(&doc).unwrap();
        std::fs::write(dir.join(format!("{name}.json")), text).unwrap();
    }
}

/// A fio target of the targets file.
fn fio_target(name: &str, job: &str, metric: &str, holdout: bool) -> String {
    let (tol, h) = if holdout {
        (0.10, "holdout = true\n")
    } else {
        (0.03, "")
    };
    format!(
        "\n[[target]]\nname = \"{name}\"\nfio = \"{job}.json\"\njob = \"{job}.fio\"\n\
         metric = \"{metric}\"\ntolerance = {tol}\n{h}"
    )
}

/// The five standard tests, fitted, and the two holdouts.
fn targets_file() -> String {
    let mut t = format!(
        "config = \"base.toml\"\nfree = [\"channels\", \"t_r\", \"t_prog\", \"bus\"]\n\
         seed = 1\nnumber_ios = {RUN_IOS}\n[bounds]\nchannels = [1, 16]\n"
    );
    for (name, job, metric) in [
        ("qd1-read-latency", "qd1", "read.clat_ns.mean"),
        ("qd32-read-iops", "qd32", "read.iops"),
        ("seq-read-bw", "seqr", "read.bw_bytes"),
        ("seq-write-bw", "seqw", "write.bw_bytes"),
        ("rand-write-iops", "randw", "write.iops"),
    ] {
        t.push_str(&fio_target(name, job, metric, false));
    }
    t.push_str(&fio_target("mix-read-iops", "mix", "read.iops", true));
    t.push_str(&fio_target("mix-write-iops", "mix", "write.iops", true));
    t.push_str(&fio_target(
        "qd32-read-p99",
        "qd32",
        "read.clat_ns.percentile.99.000000",
        true,
    ));
    t
}

fn quiet(_: &str) {}

fn fit_hidden(dir: &Path) -> Fit {
    measure_hidden(dir);
    let file = dir.join("targets.toml");
    std::fs::write(&file, targets_file()).unwrap();
    let spec = calibrate::load(&file).unwrap();
    calibrate::calibrate(&spec, &quiet).unwrap()
}

#[test]
fn a_hidden_drive_is_recovered_from_its_fio_outputs() {
    let dir = scratch("recovery");
    let fit = fit_hidden(&dir);
    let table = fit.text();
    for t in &fit.targets {
        let limit = if t.holdout { 0.10 } else { 0.03 };
        assert!(
            t.error.abs() <= limit,
            "{}: error {:+.2}% over {limit}\n{table}",
            t.name,
            t.error * 100.0
        );
    }
    assert_eq!(fit.targets.iter().filter(|t| t.holdout).count(), 3);
    assert!(fit.unmet().is_empty(), "{:?}", fit.unmet());
    // The integer parameter is found, the continuous ones near the hidden
    // values (what the targets pin down: within 3 %).
    let value = |n: &str| fit.params.iter().find(|p| p.name == n).unwrap().value;
    assert_eq!(value("channels"), 4.0, "{table}");
    for (n, hidden) in [("t_r", 40.0), ("t_prog", 300.0), ("bus", 60.0)] {
        let v = value(n);
        assert!(
            (v / hidden - 1.0).abs() < 0.03,
            "{n}: {v} for {hidden}\n{table}"
        );
    }
    // The fitted drive, as `--config` reads it, simulates what the report
    // says it does.
    let preset = fit.preset_toml();
    let ssd = Ssd::builder()
        .toml(preset)
        .seed(1)
        .precondition("fill")
        .number_ios(RUN_IOS)
        .power_model(false)
        .fio(JOBS[0].1)
        .build()
        .unwrap();
    let out = ssd.run().unwrap();
    let doc = fio_json::fio_json_run(&[], ssd.config(), &out.report, &out.latency);
    let lat = doc["jobs"][0]["read"]["clat_ns"]["mean"].as_f64().unwrap();
    assert_eq!(lat, fit.targets[0].fitted);
}

/// A small calibration (one parameter, two targets) gives byte-identical
/// reports on one thread and on three.
#[test]
fn a_calibration_is_the_same_on_any_number_of_threads() {
    let dir = scratch("threads");
    measure_hidden(&dir);
    let file = dir.join("targets.toml");
    let text = format!(
        "config = \"base.toml\"\nfree = [\"t_r\"]\nnumber_ios = 500\n{}{}",
        fio_target("qd1", "qd1", "read.clat_ns.mean", false),
        fio_target("p99", "qd32", "read.clat_ns.percentile.99", true)
    );
    std::fs::write(&file, text).unwrap();
    let spec = calibrate::load(&file).unwrap();
    let on = |n: usize| {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(n)
            .build()
            .unwrap();
        let fit = pool
            .install(|| calibrate::calibrate(&spec, &quiet))
            .unwrap();
        (
            serde_json::to_string(&fit.json()).unwrap(),
            fit.preset_toml(),
        )
    };
    assert_eq!(on(1), on(3));
}

/// Each bad targets file is refused with the file, the target and the
/// field in the message.
#[test]
fn bad_targets_are_refused_naming_file_target_and_field() {
    let dir = scratch("bad");
    measure_hidden(&dir);
    std::fs::write(dir.join("two.fio"), "[a]\nrw=read\n[b]\nrw=write\n").unwrap();
    std::fs::write(dir.join("clones.fio"), "[a]\nrw=read\nnumjobs=4\n").unwrap();
    let file = dir.join("t.toml");
    let head = "config = \"base.toml\"\nfree = [\"t_r\"]\n";
    let good = fio_target("lat", "qd1", "read.clat_ns.mean", false);
    let cases: &[(String, &str)] = &[
        (
            format!("{head}{good}speed = 3\n"),
            "target 1: unknown field `speed`",
        ),
        (
            format!("{head}{}", good.replace("tolerance = 0.03", "tolerance = -0.5")),
            "target \"lat\": tolerance: must be positive",
        ),
        (
            format!("{head}{}", good.replace("read.clat_ns.mean", "read.nope")),
            "target \"lat\": metric:",
        ),
        (
            format!("{head}{}", good.replace("qd1.json", "missing.json")),
            "target \"lat\": fio:",
        ),
        (
            format!("{head}{good}\n[[target]]\nname = \"x\"\ndatasheet = \"warp\"\nvalue = 1\n"),
            "target \"x\": datasheet: unknown figure \"warp\"",
        ),
        (
            format!("{head}{good}\n[[target]]\nname = \"x\"\ndatasheet = \"seq_read_mbps\"\n"),
            "target \"x\": value: missing",
        ),
        (
            format!("{head}{}", good.replace("job = \"qd1.fio\"", "job = \"two.fio\"")),
            "target \"lat\": job: ",
        ),
        (
            format!("{head}{}", good.replace("job = \"qd1.fio\"", "job = \"two.fio\"")),
            "two.fio reports the entries [a, b] but ",
        ),
        (
            format!("{head}{}", good.replace("job = \"qd1.fio\"", "job = \"clones.fio\"")),
            "clones.fio: numjobs=4 without group_reporting",
        ),
        (
            format!("config = \"base.toml\"\nfree = [\"warp\"]\n{good}"),
            "free: unknown parameter \"warp\"",
        ),
        (
            format!("{head}[bounds]\nt_r = [1, 1e12]\n{good}"),
            "bounds.t_r: [1, 1000000000000] is outside the range calibrate searches for t_r, [2, 500] us",
        ),
        (
            format!("{head}[bounds]\nt_r = [50, 10]\n{good}"),
            "bounds.t_r: must be positive with MIN <= MAX",
        ),
        (
            format!("{head}{}", good.replace("tolerance = 0.03", "holdout = true")),
            "no target to fit",
        ),
        (
            format!(
                "{head}{good}\n[[target]]\nname = \"rr\"\ndatasheet = \"rand_read_iops\"\nvalue = 1000000\n\
                 \n[[target]]\nname = \"sr\"\ndatasheet = \"seq_read_mbps\"\nvalue = 500\n"
            ),
            "target \"rr\": contradicts target \"sr\"",
        ),
        (
            format!(
                "{head}{good}\n[[target]]\nname = \"idle\"\ndatasheet = \"idle_power_w\"\nvalue = 9\n\
                 \n[[target]]\nname = \"max\"\ndatasheet = \"max_power_w\"\nvalue = 5\n"
            ),
            "target \"idle\": 9 W is above the stated maximum power",
        ),
    ];
    for (text, want) in cases {
        std::fs::write(&file, text).unwrap();
        let err = calibrate::load(&file).unwrap_err().to_string();
        assert!(
            err.starts_with(&file.display().to_string()) && err.contains(want),
            "{err}\nwanted: {want}\nfor:\n{text}"
        );
    }
}

/// A target the model cannot reach within the bounds is named after the
/// fit; a power bound over the stated maximum keeps the fit under it.
#[test]
fn unreachable_targets_are_named_and_power_stays_under_its_maximum() {
    let dir = scratch("unreachable");
    measure_hidden(&dir);
    let file = dir.join("t.toml");
    // A QD1 latency of 20 us: below what the bounds of tR allow with the
    // base's bus (a 4 KiB page alone takes 100 us over it).
    std::fs::write(
        &file,
        "config = \"base.toml\"\nfree = [\"t_r\"]\nnumber_ios = 300\n\
         [[target]]\nname = \"fast\"\ndatasheet = \"read_latency_us\"\nvalue = 20\n",
    )
    .unwrap();
    let spec = calibrate::load(&file).unwrap();
    let fit = calibrate::calibrate(&spec, &quiet).unwrap();
    let unmet = fit.unmet();
    assert_eq!(unmet.len(), 1, "{unmet:?}");
    assert!(
        unmet[0].starts_with("target \"fast\": not reached"),
        "{unmet:?}"
    );

    // Idle power fitted by the controller's idle power, under a maximum
    // power the base's currents would exceed: the fit lowers the read
    // current (free) until the bound is under it.
    std::fs::write(
        &file,
        "config = \"base.toml\"\nfree = [\"cpu_idle_power\", \"read_current\", \"program_current\", \"erase_current\"]\n\
         number_ios = 300\n\
         [[target]]\nname = \"idle\"\ndatasheet = \"idle_power_w\"\nvalue = 0.5\ntolerance = 0.01\n\
         [[target]]\nname = \"max\"\ndatasheet = \"max_power_w\"\nvalue = 1.2\n",
    )
    .unwrap();
    let spec = calibrate::load(&file).unwrap();
    let base_bound = calibrate::search::max_power_bound(&spec.base).unwrap();
    assert!(
        base_bound > 1.2,
        "the base is over the maximum: {base_bound}"
    );
    let fit = calibrate::calibrate(&spec, &quiet).unwrap();
    assert!(fit.power_bound_w <= 1.2, "{}", fit.text());
    assert!(fit.unmet().is_empty(), "{:?}", fit.unmet());
    assert!(fit.targets[0].error.abs() <= 0.01, "{}", fit.text());
    // The currents sit where the bound allows: said so, not "fitted".
    let held: Vec<&str> = fit
        .params
        .iter()
        .filter(|p| p.held_by_max_power)
        .map(|p| p.name)
        .collect();
    assert_eq!(
        held,
        [
            "cpu_idle_power",
            "read_current",
            "program_current",
            "erase_current"
        ],
        "{}",
        fit.text()
    );
    assert!(fit.warnings().iter().any(|w| w.starts_with(
        "warning: read_current (power.flash_read_current) is held by the stated maximum power"
    )));
}

/// A fio JSON file with its own options (fio writes `global options` and
/// each job's `job options`) defines its test without a job file: the same
/// simulated value as with the job file, its runtime and host options
/// (engine, device file) replaced by the calibration's run.
#[test]
fn the_json_files_own_job_options_define_the_test() {
    let dir = scratch("jobopts");
    measure_hidden(&dir);
    let mut doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("qd1.json")).unwrap()).unwrap();
    doc["global options"] = serde_json::json!({
        "ioengine": "libaio", "filename": "/dev/nvme0n1", "direct": "1",
        "runtime": "60", "time_based": "", "ramp_time": "5",
    });
    doc["jobs"][0]["job options"] =
        serde_json::json!({"rw": "randread", "bs": "4k", "iodepth": "1"});
    std::fs::write(dir.join("own.json"), doc.to_string()).unwrap();
    let file = dir.join("t.toml");
    let own = "\n[[target]]\nname = \"own\"\nfio = \"own.json\"\nmetric = \"read.clat_ns.mean\"\n";
    std::fs::write(
        &file,
        format!(
            "config = \"base.toml\"\nfree = [\"t_r\"]\nnumber_ios = 300\nmax_iterations = 2\n{}{own}",
            fio_target("file", "qd1", "read.clat_ns.mean", false)
        ),
    )
    .unwrap();
    let spec = calibrate::load(&file).unwrap();
    let fit = calibrate::calibrate(&spec, &quiet).unwrap();
    assert_eq!(
        fit.targets[0].fitted,
        fit.targets[1].fitted,
        "{}",
        fit.text()
    );
    assert_eq!(fit.targets[0].measured, fit.targets[1].measured);
}

/// The hidden drive's figures as a datasheet gives them (MB/s, us, W),
/// each from the test `datasheet = NAME` stands for, fitted back: the
/// datasheet targets' units and the power model's path.
#[test]
fn datasheet_figures_are_fitted_in_their_units() {
    let dir = scratch("datasheet");
    measure_hidden(&dir);
    let run = |job: &str, pre: &str| {
        let ssd = Ssd::builder()
            .toml(HIDDEN)
            .seed(1)
            .precondition(pre)
            .number_ios(600)
            .fio(job)
            .build()
            .unwrap();
        let out = ssd.run().unwrap();
        let doc = fio_json::fio_json_run(&[], ssd.config(), &out.report, &out.latency);
        (
            doc["jobs"][0].clone(),
            out.report.extra["power_w"]["mean"].as_f64().unwrap(),
        )
    };
    let seqr = "[seq-read]\nrw=read\nbs=128k\niodepth=32\ndirect=1\n";
    let seqw = "[seq-write]\nrw=write\nbs=128k\niodepth=32\ndirect=1\n";
    let qd1 = "[qd1-read]\nrw=randread\nbs=4k\niodepth=1\ndirect=1\n";
    let read_mbps = run(seqr, "fill").0["read"]["bw_bytes"].as_f64().unwrap() / 1e6;
    let (w, active_w) = run(seqw, "none");
    let write_mbps = w["write"]["bw_bytes"].as_f64().unwrap() / 1e6;
    let lat_us = run(qd1, "fill").0["read"]["clat_ns"]["mean"]
        .as_f64()
        .unwrap()
        / 1e3;
    let file = dir.join("t.toml");
    let target = |name: &str, v: f64| {
        format!("\n[[target]]\nname = \"{name}\"\ndatasheet = \"{name}\"\nvalue = {v}\ntolerance = 0.03\n")
    };
    std::fs::write(
        &file,
        format!(
            "config = \"base.toml\"\nfree = [\"channels\", \"t_r\", \"t_prog\", \"bus\", \"program_current\"]\n\
             number_ios = 600\n[bounds]\nchannels = [1, 16]\nprogram_current = [1, 100]\n{}{}{}{}",
            target("seq_read_mbps", read_mbps),
            target("seq_write_mbps", write_mbps),
            target("read_latency_us", lat_us),
            target("active_power_w", active_w * 1.2),
        ),
    )
    .unwrap();
    let spec = calibrate::load(&file).unwrap();
    let fit = calibrate::calibrate(&spec, &quiet).unwrap();
    for t in &fit.targets {
        assert!(
            t.error.abs() <= 0.03,
            "{}: {:+.2}%\n{}",
            t.name,
            t.error * 100.0,
            fit.text()
        );
    }
    // 20 % more active power than the hidden drive draws: the program
    // current (the one power parameter free) rose to give it.
    let i = fit
        .params
        .iter()
        .find(|p| p.name == "program_current")
        .unwrap();
    assert!(i.value > 15.0, "{}", fit.text());
}

/// A measured power trace (here one `--power-trace` wrote for a drive
/// whose program current the test hides) under the job that ran while it
/// was taken: its mean power is fitted, and the current found.
#[test]
fn a_power_trace_fits_the_program_current() {
    let dir = scratch("trace");
    measure_hidden(&dir);
    std::fs::write(dir.join("known.toml"), HIDDEN).unwrap();
    let hot = format!("{HIDDEN}[power]\nflash_program_current = \"25mA\"\n");
    let trace = dir.join("seqw-power.csv");
    let options = ssdsim::RunOptions {
        power_trace: Some(trace.clone()),
        ..ssdsim::RunOptions::default()
    };
    Ssd::builder()
        .toml(hot)
        .seed(1)
        .precondition("none")
        .number_ios(RUN_IOS)
        .options(options)
        .fio(JOBS[3].1)
        .build()
        .unwrap()
        .run()
        .unwrap();
    let file = dir.join("t.toml");
    std::fs::write(
        &file,
        format!(
            "config = \"known.toml\"\nfree = [\"program_current\"]\nnumber_ios = {RUN_IOS}\n\
             [[target]]\nname = \"trace\"\npower_trace = \"seqw-power.csv\"\ncolumn = \"total_w\"\n\
             job = \"seqw.fio\"\nprecondition = \"none\"\ntolerance = 0.03\n"
        ),
    )
    .unwrap();
    let spec = calibrate::load(&file).unwrap();
    let fit = calibrate::calibrate(&spec, &quiet).unwrap();
    assert!(fit.targets[0].error.abs() <= 0.03, "{}", fit.text());
    let i = fit.params[0].value;
    assert!(
        (i / 25.0 - 1.0).abs() < 0.05,
        "{i} mA for 25\n{}",
        fit.text()
    );
    // A trace that is not one is refused, naming the line.
    std::fs::write(
        dir.join("bad.csv"),
        "time_s,total_w\n0.001,1.5\n0.002,lots\n",
    )
    .unwrap();
    let text = std::fs::read_to_string(&file)
        .unwrap()
        .replace("seqw-power.csv", "bad.csv");
    std::fs::write(&file, text).unwrap();
    let err = calibrate::load(&file).unwrap_err().to_string();
    assert!(
        err.contains("target \"trace\": power_trace: ")
            && err.contains("line 3: \"lots\" is not a number of watts"),
        "{err}"
    );
}

/// The standard tests as one job file of stonewalled jobs, measured as one
/// fio JSON output with an entry per job: each target names its entry
/// (`jobname`) and reads it back from one run of the whole file. At the
/// drive that was measured, every target's simulated value is its
/// measurement exactly, with the test from the job file or from the JSON's
/// own options; an entry of two clones' name is refused as ambiguous.
#[test]
fn a_multi_job_output_is_read_entry_by_entry() {
    let dir = scratch("multijob");
    std::fs::write(dir.join("hidden.toml"), HIDDEN).unwrap();
    let mut job = String::from("[global]\ndirect=1\nnumber_ios=300\n");
    for (name, body) in JOBS {
        let body = body.split_once('\n').unwrap().1;
        job.push_str(&format!("[{name}]\n{body}stonewall\n"));
    }
    std::fs::write(dir.join("all.fio"), &job).unwrap();
    let ssd = Ssd::builder()
        .toml(HIDDEN)
        .seed(1)
        .precondition("fill")
        .power_model(false)
        .fio(job.as_str())
        .build()
        .unwrap();
    let out = ssd.run().unwrap();
    let mut doc = fio_json::fio_json_run(&[], ssd.config(), &out.report, &out.latency);
    assert_eq!(doc["jobs"].as_array().unwrap().len(), JOBS.len());
    std::fs::write(dir.join("all.json"), doc.to_string()).unwrap();
    // The same output with fio's own record of the jobs, and no job file.
    doc["global options"] = serde_json::json!({"direct": "1", "number_ios": "300"});
    for (i, (_, body)) in JOBS.iter().enumerate() {
        let mut o = serde_json::Map::new();
        for l in body.lines().skip(1) {
            let (k, v) = l.split_once('=').unwrap();
            o.insert(k.into(), v.into());
        }
        o.insert("stonewall".into(), "".into());
        doc["jobs"][i]["job options"] = serde_json::Value::Object(o);
    }
    std::fs::write(dir.join("own.json"), doc.to_string()).unwrap();
    let mut t = String::from("config = \"hidden.toml\"\nfree = [\"t_r\"]\nnumber_ios = 300\n");
    for (name, job, metric) in [
        ("qd1", "qd1", "read.clat_ns.mean"),
        ("qd32", "qd32", "read.iops"),
        ("seqw", "seqw", "write.bw_bytes"),
        ("randw", "randw", "write.iops"),
        ("mix", "mix", "read.iops"),
    ] {
        t.push_str(&format!(
            "\n[[target]]\nname = \"{name}\"\nfio = \"all.json\"\njob = \"all.fio\"\n\
             jobname = \"{job}\"\nmetric = \"{metric}\"\n\
             \n[[target]]\nname = \"{name}-own\"\nfio = \"own.json\"\n\
             jobname = \"{job}\"\nmetric = \"{metric}\"\n"
        ));
    }
    let file = dir.join("t.toml");
    std::fs::write(&file, &t).unwrap();
    let spec = calibrate::load(&file).unwrap();
    let plan = calibrate::search::Plan::new(&spec.targets);
    let all = vec![true; spec.targets.len()];
    let v = calibrate::search::values(&spec.base, &spec, &plan, &all).unwrap();
    for (target, v) in spec.targets.iter().zip(&v) {
        assert_eq!(v.unwrap(), target.measured, "{}", target.name);
    }
    // Refusals name the file and the field.
    let one = |extra: &str| {
        std::fs::write(
            &file,
            format!(
                "config = \"hidden.toml\"\nfree = [\"t_r\"]\n[[target]]\nname = \"x\"\n\
                 fio = \"all.json\"\nmetric = \"read.iops\"\n{extra}"
            ),
        )
        .unwrap();
        calibrate::load(&file).unwrap_err().to_string()
    };
    let err = one("job = \"all.fio\"\n");
    assert!(
        err.contains("target \"x\": jobname: ") && err.contains("all.json: 6 jobs (qd1, qd32"),
        "{err}"
    );
    let err = one("jobname = \"nope\"\njob = \"all.fio\"\n");
    assert!(
        err.contains("jobname: ") && err.contains("no job named \"nope\""),
        "{err}"
    );
    std::fs::write(dir.join("qd1.fio"), JOBS[0].1).unwrap();
    let err = one("jobname = \"qd1\"\njob = \"qd1.fio\"\n");
    assert!(
        err.contains("job: ") && err.contains("qd1.fio reports the entries [qd1] but"),
        "{err}"
    );
    let mut twins = doc.clone();
    twins["jobs"][1]["jobname"] = "qd1".into();
    std::fs::write(dir.join("all.json"), twins.to_string()).unwrap();
    let err = one("jobname = \"qd1\"\n");
    assert!(
        err.contains("jobname: ") && err.contains("2 entries are named \"qd1\""),
        "{err}"
    );
}
