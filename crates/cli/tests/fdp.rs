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
