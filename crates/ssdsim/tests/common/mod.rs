//! Helpers shared by the library's integration tests, and by the program's
//! (`crates/cli/tests` include this file by path): the builder's settings
//! of the comparisons with the binary, and reports and rows without their
//! wall-clock fields. Each test file is its own crate and uses some of them.
#![allow(dead_code)]

use ssdsim::{Ssd, SsdBuilder};

/// Sweep rows as JSON without their wall-clock seconds, one string a row.
pub fn rows_without_wall(rows: &[ssdsim::sweep::Row]) -> Vec<String> {
    rows.iter()
        .map(|r| {
            serde_json::to_string(&ssdsim::sweep::Row {
                wall_s: 0.0,
                ..r.clone()
            })
            .expect("a row serialises")
        })
        .collect()
}

/// A report as `ssdsim run --format json` prints it, with the wall-clock
/// fields (`run.wall_s`, `run.precondition_wall_s`) set to 0.
pub fn normalized(json: &str) -> String {
    json.lines()
        .map(|l| {
            let key = l.trim_start();
            if key.starts_with("\"wall_s\":") || key.starts_with("\"precondition_wall_s\":") {
                let (k, _) = l.split_once(':').unwrap();
                let comma = if l.ends_with(',') { "," } else { "" };
                format!("{k}: 0{comma}")
            } else {
                l.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

pub fn report_json(ssd: &Ssd) -> String {
    let out = ssd.run().unwrap();
    normalized(&(serde_json::to_string_pretty(&out.report).unwrap() + "\n"))
}

/// The settings of the comparisons: the builder's calls and the same as
/// CLI flags.
pub fn builder() -> SsdBuilder {
    Ssd::builder()
        .nand("chip2")
        .ftl("dftl")
        .sched("deadline")
        .set("ftl.op", "0.1")
        .set("rw", "randrw")
        .set("bs", "8KiB")
        .set("nand.blocks_per_plane", 256)
        .precondition("fill")
        .number_ios(3_000)
        .seed(7)
}

pub fn flags() -> Vec<(String, String)> {
    [
        ("nand", "chip2"),
        ("ftl", "dftl"),
        ("sched", "deadline"),
        ("precondition", "fill"),
        ("seed", "7"),
        ("rw", "randrw"),
        ("bs", "8KiB"),
        ("number_ios", "3000"),
        ("ftl.op", "0.1"),
        ("nand.blocks_per_plane", "256"),
    ]
    .iter()
    .map(|(f, v)| (f.to_string(), v.to_string()))
    .collect()
}

/// One job (host-side options listed), and two jobs (flows), for `--fio`.
pub const ONE_JOB: &str =
    "[global]\nioengine=libaio\nbs=4k\n[w]\nrw=randwrite\niodepth=8\nsize=16m\n";
pub const TWO_JOBS: &str =
    "[global]\nbs=4k\nsize=8m\n[r]\nrw=randread\nfilename=/dev/x\n[w]\nrw=randwrite\n";
