//! Progress bars change nothing: every run and sweep gives byte for byte the
//! same results with the progress code path forced on (drawing into a sink)
//! as without it, and no bar reaches a pipe.

use ssdsim::{run_config, Progress, RunOptions};
use ssdsim_host::config::{Precondition, SsdConfig};
use ssdsim_host::workload::RwMode;
use std::path::{Path, PathBuf};

mod common;
use common::{scratch, ssdsim_bytes_in};

fn repo(p: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").join(p)
}

/// The report as JSON text, wall-clock times zeroed (they are the machine's).
fn report_text(cfg: &SsdConfig, progress: Progress) -> String {
    let out = run_config(
        cfg,
        &RunOptions {
            progress,
            ..Default::default()
        },
    )
    .unwrap();
    let mut v = serde_json::to_value(&out.report).unwrap();
    v["run"]["wall_s"] = 0.into();
    v["run"]["precondition_wall_s"] = 0.into();
    serde_json::to_string(&v).unwrap() + &serde_json::to_string(&out.cdf).unwrap()
}

fn small() -> SsdConfig {
    let mut c = SsdConfig::default();
    c.nand.blocks_per_plane = 64;
    c
}

/// Closed and open loops, a time-limit cut, a trace (plain and gzip), a
/// personality, a steady-state preconditioning: the same report with the
/// bars drawn (into a sink) as without, and the bars did draw.
#[test]
fn runs_are_the_same_with_the_progress_path_on() {
    let mut cases: Vec<(&str, SsdConfig)> = Vec::new();
    let mut c = small();
    c.sim.precondition = Precondition::Steady;
    c.workload.rw = RwMode::RandWrite;
    c.workload.number_ios = Some(20_000);
    cases.push(("closed loop after steady state", c.clone()));
    c.workload.rate_iops = Some(20_000);
    c.sim.time_limit = Some(ssd_core::units::Dur(300_000_000));
    cases.push(("open loop, cut by the time limit", c));
    for t in ["traces/synth.spc", "traces/synth.msr"] {
        let mut c = small();
        c.sim.precondition = Precondition::Fill;
        ssdsim::apply_flag(&mut c, "trace", repo(t).to_str().unwrap()).unwrap();
        cases.push(("trace", c));
    }
    let mut c = small();
    ssdsim::apply_flag(&mut c, "personality", "varmail").unwrap();
    ssdsim::set_field(&mut c, "personality.requests", "5000").unwrap();
    cases.push(("personality", c));
    for (what, c) in &cases {
        let before = ssdsim::progress::sink_bytes();
        let on = report_text(c, Progress::Sink);
        assert!(
            ssdsim::progress::sink_bytes() > before,
            "{what}: the bars drew nothing"
        );
        // Terminal draws on stderr (if it is a terminal), never into the sink.
        let before = ssdsim::progress::sink_bytes();
        let term = report_text(c, Progress::Terminal);
        assert_eq!(ssdsim::progress::sink_bytes(), before);
        let off = report_text(c, Progress::Off);
        assert_eq!(on, off, "{what}: the progress path changed the report");
        assert_eq!(term, off, "{what}");
    }
}

/// The replay's file handle follows its position in the trace file.
#[test]
fn the_trace_handle_follows_the_replay() {
    use ssdsim_host::workload::RequestSource;
    use std::io::Seek;
    let d = scratch("handle");
    let plain = repo("traces/synth.spc");
    let gz = d.join("t.spc.gz");
    {
        use std::io::Write;
        let mut e = flate2::write::GzEncoder::new(
            std::fs::File::create(&gz).unwrap(),
            flate2::Compression::default(),
        );
        e.write_all(&std::fs::read(&plain).unwrap()).unwrap();
        e.finish().unwrap();
    }
    for p in [&plain, &gz] {
        let opts = ssdsim_host::trace::ReplayOptions::default();
        let mut src = ssdsim_host::trace::open_trace(p, None, &opts).unwrap();
        let mut h = src.file_handle().unwrap();
        let size = h.metadata().unwrap().len();
        let mut n = 0;
        while let Some(r) = src.next_request() {
            r.unwrap();
            n += 1;
        }
        assert!(n > 100, "{n}");
        let pos = h.stream_position().unwrap();
        assert_eq!(pos, size, "{}: read to its end", p.display());
    }
    std::fs::remove_dir_all(&d).unwrap();
}

/// Through the binary: `run` and `sweep` write the same bytes (the report,
/// the power trace, the sweep's table and CSV) with the bars forced into a
/// sink as with `--no-progress`, and with neither flag stderr (a pipe here)
/// gets no bar.
#[test]
fn the_binary_writes_the_same_bytes_with_the_progress_path_on() {
    let d = scratch("binary");
    let t = repo("traces/synth.spc");
    let run = |flag: &str, name: &str| {
        let trace = format!("{name}.csv");
        let (code, out, err) = ssdsim_bytes_in(
            &d,
            &[
                "run",
                "--trace",
                t.to_str().unwrap(),
                "--blocks-per-plane",
                "64",
                "--time-limit",
                "2s",
                "--power-trace",
                &trace,
                flag,
            ],
        );
        assert_eq!(code, 0, "{err}");
        let text = String::from_utf8(out).unwrap();
        // The text report's last line is the wall-clock one.
        let report: Vec<&str> = text.lines().filter(|l| !l.starts_with("run ")).collect();
        assert!(report.len() > 5, "{text}");
        (
            report.join("\n"),
            std::fs::read(d.join(&trace)).unwrap(),
            err,
        )
    };
    let (a, pa, ea) = run("--progress-sink", "a");
    let (b, pb, eb) = run("--no-progress", "b");
    let (_, _, ec) = run("--format=text", "c");
    assert_eq!(a, b);
    assert_eq!(pa, pb);
    for e in [&ea, &eb, &ec] {
        assert!(!e.contains("run ["), "a bar on stderr: {e:?}");
        assert!(!e.contains('\u{1b}'), "terminal codes on stderr: {e:?}");
    }
    let sweep = |flag: &str, name: &str| {
        let csv = format!("{name}.csv");
        let (code, out, err) = ssdsim_bytes_in(
            &d,
            &[
                "sweep",
                "--seed",
                "1,2,3",
                "--rw",
                "randread,randwrite",
                "--number_ios",
                "300",
                "--blocks-per-plane",
                "64",
                "--precondition",
                "none",
                "--csv",
                &csv,
                flag,
            ],
        );
        assert_eq!(code, 0, "{err}");
        assert!(!err.contains("sweep ["), "a bar on stderr: {err:?}");
        (out, std::fs::read(d.join(&csv)).unwrap())
    };
    assert_eq!(sweep("--progress-sink", "a"), sweep("--no-progress", "b"));
    std::fs::remove_dir_all(&d).unwrap();
}
