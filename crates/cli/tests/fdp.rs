//! Flexible Data Placement from the command line: a fio job file with
//! `fdp=1` and `fdp_pli` on a drive with `ftl.fdp = true`, its report's
//! `fdp` section, the device WAF of two streams of different lifetimes with
//! and without a handle each, tenants with their own handles, and the
//! impossible configurations refused before the run.

mod common;
use common::{scratch, ssdsim_in};
use serde_json::Value;

/// A drive of 32 planes x 64 blocks (chip2's planes, fewer blocks), 25 %
/// over-provisioning, preconditioned to steady state.
const DRIVE: &[&str] = &[
    "--set",
    "nand.blocks_per_plane=64",
    "--set",
    "ftl.op=0.25",
    "--precondition",
    "steady",
];

/// A hot stream overwriting a tenth of the drive at random and a cold one
/// rewriting the rest in order; `fdp`: each on its own placement ID index.
fn job(fdp: bool) -> String {
    let (on, hot, cold) = if fdp {
        ("fdp=1\n", "fdp_pli=0\n", "fdp_pli=1\n")
    } else {
        ("", "", "")
    };
    format!(
        "[global]\nioengine=io_uring_cmd\ndirect=1\nbs=4k\niodepth=8\n{on}\n\
         [hot]\nrw=randwrite\noffset=0\nsize=10%\nloops=8\n{hot}\n\
         [cold]\nrw=write\noffset=10%\nsize=90%\nloops=2\n{cold}"
    )
}

fn run(dir: &std::path::Path, args: &[&str]) -> Value {
    let mut a = vec!["run", "--format", "json", "--no-progress"];
    a.extend_from_slice(DRIVE);
    a.extend_from_slice(args);
    let (code, out, err) = ssdsim_in(dir, &a);
    assert_eq!(code, 0, "{err}");
    serde_json::from_str(&out).unwrap()
}

#[test]
fn a_fio_fdp_job_separates_its_streams_and_lowers_the_device_waf() {
    let d = scratch("streams");
    std::fs::write(d.join("fdp.fio"), job(true)).unwrap();
    std::fs::write(d.join("conv.fio"), job(false)).unwrap();
    let conv = run(&d, &["--fio", "conv.fio"]);
    let fdp = run(
        &d,
        &[
            "--set",
            "ftl.fdp=true",
            "--set",
            "ftl.fdp_handles=2",
            "--fio",
            "fdp.fio",
        ],
    );
    assert!(conv.get("fdp").is_none());
    let f = &fdp["fdp"];
    // The same host writes: each stream on its handle.
    let written = fdp["host"]["bytes_written"].as_u64().unwrap();
    assert_eq!(written, conv["host"]["bytes_written"].as_u64().unwrap());
    assert_eq!(f["hbmw"].as_u64().unwrap(), written);
    let hot = f["handles"][0]["host_bytes"].as_u64().unwrap();
    let cold = f["handles"][1]["host_bytes"].as_u64().unwrap();
    assert_eq!(hot + cold, written);
    assert!(hot > 0 && cold > hot, "{hot} {cold}");
    // The log page's media bytes are the drive's programs.
    let programs = fdp["flash"]["page_programs"].as_u64().unwrap();
    assert_eq!(f["mbmw"].as_u64().unwrap(), programs * 4096);
    assert_eq!(f["waf"], fdp["flash"]["waf"]);
    // Apart, the cold stream's blocks die whole: GC copies less.
    let (wc, wf) = (
        conv["flash"]["waf"].as_f64().unwrap(),
        fdp["flash"]["waf"].as_f64().unwrap(),
    );
    assert!(wf < wc, "FDP WAF {wf} conventional {wc}");
}

#[test]
fn tenants_get_their_own_placement_handles() {
    let d = scratch("tenants");
    let toml = "[[flow]]\nname = \"a\"\nplacement = 1\n[flow.workload]\nrw = \"randwrite\"\nnumber_ios = 300\n\n\
                [[flow]]\nname = \"b\"\nplacement = 2\n[flow.workload]\nrw = \"write\"\nnumber_ios = 200\n";
    std::fs::write(d.join("t.toml"), toml).unwrap();
    let r = run(
        &d,
        &[
            "--config",
            "t.toml",
            "--set",
            "ftl.fdp=true",
            "--set",
            "ftl.fdp_handles=4",
        ],
    );
    let h = &r["fdp"]["handles"];
    assert_eq!(h[0]["host_bytes"], 0);
    assert_eq!(h[1]["host_bytes"], 300 * 4096);
    assert_eq!(h[2]["host_bytes"], 200 * 4096);
    assert_eq!(h[3]["host_bytes"], 0);
}

#[test]
fn what_fdp_cannot_run_is_refused_before_the_run() {
    let d = scratch("refused");
    std::fs::write(d.join("fdp.fio"), job(true)).unwrap();
    let many = "[j]\nrw=write\ndirect=1\nfdp=1\nfdp_pli=0,5\nnumber_ios=10\n";
    std::fs::write(d.join("many.fio"), many).unwrap();
    for (args, field) in [
        // A job with fdp=1 on a drive without FDP.
        (&["--fio", "fdp.fio"][..], "workload.fdp"),
        // A placement ID index beyond the drive's list.
        (
            &[
                "--set",
                "ftl.fdp=true",
                "--set",
                "ftl.fdp_handles=4",
                "--fio",
                "many.fio",
            ][..],
            "must be smaller than 4",
        ),
        // FDP on a zoned namespace.
        (&["--ftl", "zns", "--set", "ftl.fdp=true"][..], "ftl.fdp"),
        // More handles than the spare blocks keep open.
        (
            &["--set", "ftl.fdp=true", "--set", "ftl.fdp_handles=64"][..],
            "ftl.fdp_handles",
        ),
        // A reclaim unit larger than the planes.
        (
            &["--set", "ftl.fdp=true", "--set", "ftl.fdp_ru_blocks=65"][..],
            "ftl.fdp_ru_blocks",
        ),
    ] {
        let mut a = vec!["run", "--no-progress"];
        a.extend_from_slice(DRIVE);
        a.extend_from_slice(args);
        let (code, _, err) = ssdsim_in(&d, &a);
        assert_eq!(code, 2, "{args:?}: {err}");
        assert!(err.contains(field), "{args:?}: {err}");
    }
}

/// F2FS on a drive with FDP: with `fs.write_hints = "placement"` each
/// log's write hint (`f2fs_io_type_to_rw_hint`) is the index of the
/// placement identifier its writes carry, so the warm data (hint 0), hot
/// node and metadata (1), hot data (2), warm node (3) and cold data (5,
/// the cleaner's moves) fill handles of their own; fileserver's small
/// files have no indirect nodes (cold node, 4). With mainline's
/// `"ignored"` (the default) every write goes to handle 0.
#[test]
fn f2fs_logs_fill_their_own_handles_with_write_hints_as_placement_ids() {
    let args = |hints: Option<&'static str>| {
        let mut a = vec![
            "run",
            "--format",
            "json",
            "--no-progress",
            "--set",
            "nand.blocks_per_plane=128",
            "--set",
            "ftl.op=0.1",
            "--set",
            "ftl.fdp=true",
            "--set",
            "ftl.fdp_handles=6",
            "--fs",
            "f2fs",
            "--set",
            "fs.gc_sleep_time=2s",
            "--personality",
            "fileserver",
            "--set",
            "personality.level=file",
            "--set",
            "personality.files=4000",
            "--time-limit",
            "20s",
        ];
        if let Some(h) = hints {
            a.extend(["--set", h]);
        }
        a
    };
    let handles = |hints| {
        let (code, out, err) = common::ssdsim(&args(hints));
        assert_eq!(code, 0, "{err}");
        let r: Value = serde_json::from_str(&out).unwrap();
        assert!(r["file_system"]["cleaner_blocks_written"].as_u64().unwrap() > 0);
        r["fdp"]["handles"]
            .as_array()
            .unwrap()
            .iter()
            .map(|h| h["host_bytes"].as_u64().unwrap())
            .collect::<Vec<u64>>()
    };
    let h = handles(Some("fs.write_hints=placement"));
    for (i, b) in h.iter().enumerate() {
        assert_eq!(*b > 0, i != 4, "handle {i}: {h:?}");
    }
    // The warm data log (files' data) writes the most.
    assert!(h.iter().all(|&b| b <= h[0]), "{h:?}");
    let h = handles(None);
    assert!(h[0] > 0 && h[1..].iter().all(|&b| b == 0), "{h:?}");
}

/// `fs.write_hints = "placement"` needs a drive with FDP, and is f2fs's.
#[test]
fn write_hints_as_placement_ids_need_an_fdp_drive_and_f2fs() {
    for (extra, field) in [
        (&[][..], "fs.write_hints"),
        (
            &["--ftl", "zns", "--set", "ftl.conventional_zones=8"][..],
            "fs.write_hints",
        ),
    ] {
        let mut a = vec![
            "run",
            "--no-progress",
            "--set",
            "nand.blocks_per_plane=128",
            "--fs",
            "f2fs",
            "--set",
            "fs.write_hints=placement",
            "--personality",
            "fileserver",
            "--set",
            "personality.level=file",
            "--set",
            "personality.files=100",
            "--time-limit",
            "1s",
        ];
        a.extend_from_slice(extra);
        let (code, _, err) = common::ssdsim(&a);
        assert_eq!(code, 2, "{extra:?}: {err}");
        assert!(
            err.contains(field) && err.contains("ftl.fdp"),
            "{extra:?}: {err}"
        );
    }
    let (code, _, err) = common::ssdsim(&[
        "run",
        "--no-progress",
        "--fs",
        "ext4",
        "--set",
        "fs.write_hints=placement",
        "--personality",
        "fileserver",
        "--set",
        "personality.level=file",
        "--time-limit",
        "1s",
    ]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("fs.write_hints"), "{err}");
}
