//! Host I/O schedulers from the command line: what a scheduler's rules do
//! to fio jobs sharing a SATA drive's elevator (`[[flow]]`s on a non-NVMe
//! interface go through `sched.kind`).

mod common;
use common::{scratch, ssdsim_in};
use serde_json::Value;

/// Run fio job file `job` with `extra` flags; the report as JSON.
fn run_job(name: &str, job: &str, extra: &[&str]) -> Value {
    let dir = scratch(name);
    std::fs::write(dir.join("j.fio"), job).unwrap();
    let mut args = vec![
        "run",
        "--format",
        "json",
        "--no-progress",
        "--interface",
        "sata6g",
        "--fio",
        "j.fio",
    ];
    args.extend_from_slice(extra);
    let (code, out, err) = ssdsim_in(&dir, &args);
    assert_eq!(code, 0, "{err}");
    serde_json::from_str(&out).unwrap()
}

fn flow<'a>(r: &'a Value, name: &str) -> &'a Value {
    r["flows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["name"] == name)
        .unwrap()
}

/// A streaming reader (16 deep) owns the drive; a second process starts
/// reading at 1 s. BFQ raises the newcomer's weight 30 x
/// (`bfq_update_bfqq_wr_on_rq_arrival`), so it gets more of the drive
/// than with `low_latency` off, and the stream less.
#[test]
fn bfq_raises_a_new_process_over_a_streaming_one() {
    let job = "[global]\ndirect=1\nruntime=2\ntime_based=1\n\
               [stream]\nrw=read\nbs=128k\nioengine=libaio\niodepth=16\n\
               [late]\nrw=randread\nbs=4k\nioengine=psync\nstartdelay=1\n";
    let on = run_job("bfq-wr-on", job, &["--sched", "bfq"]);
    let off = run_job(
        "bfq-wr-off",
        job,
        &["--sched", "bfq", "--set", "sched.bfq_low_latency=false"],
    );
    let iops = |r: &Value, f: &str| flow(r, f)["iops"].as_f64().unwrap();
    let (late_on, late_off) = (iops(&on, "late"), iops(&off, "late"));
    assert!(late_on > 1.1 * late_off, "late: {late_on} vs {late_off}");
    assert!(iops(&on, "stream") < iops(&off, "stream"));
    assert_eq!(off["config"]["sched"]["bfq_low_latency"], false);
    assert!(on["config"]["sched"].get("bfq_low_latency").is_none());
}

/// CFQ's workload trees (`choose_service_tree`): two psync readers of 4
/// KiB (seeky: on the sync-noidle tree) and a deep sequential reader (on
/// the sync tree) share a SATA SSD. The noidle tree is served for 2/3 of
/// the 300 ms target latency, the last of its queues keeping the device
/// while its read is in it (`cfq_should_idle`), so the psync readers far
/// outpace the deep one, wait at most the sync tree's 100 ms slice, and
/// the deep reader's requests wait out the noidle tree's 200 ms.
#[test]
fn cfq_serves_the_sync_noidle_tree_for_its_workload_slice() {
    let job = "[global]\ndirect=1\nruntime=2\ntime_based=1\n\
               [deep]\nrw=read\nbs=128k\nioengine=libaio\niodepth=16\n\
               [r1]\nrw=randread\nbs=4k\nioengine=psync\n\
               [r2]\nrw=randread\nbs=4k\nioengine=psync\n";
    let r = run_job("cfq-trees", job, &["--sched", "cfq"]);
    let iops = |f: &str| flow(&r, f)["iops"].as_f64().unwrap();
    let max_ms = |f: &str| flow(&r, f)["latency_us"]["max"].as_f64().unwrap() / 1000.0;
    for f in ["r1", "r2"] {
        assert!(
            iops(f) > 10.0 * iops("deep"),
            "{f}: {} vs {}",
            iops(f),
            iops("deep")
        );
        assert!((90.0..=120.0).contains(&max_ms(f)), "{f}: {}", max_ms(f));
    }
    assert!(
        (150.0..=310.0).contains(&max_ms("deep")),
        "{}",
        max_ms("deep")
    );
}

/// mq-deadline's `async_depth` (`dd_limit_depth`): a writer 256 deep
/// takes every one of the 64 scheduler tags, and a psync reader sleeps for
/// a tag behind it; with writes limited to 32 tags the reader always finds
/// one and reads many times faster.
#[test]
fn mq_deadline_async_depth_keeps_tags_for_reads() {
    let job = "[global]\ndirect=1\nruntime=1\ntime_based=1\n\
               [w]\nrw=randwrite\nbs=4k\nioengine=libaio\niodepth=256\n\
               [r]\nrw=randread\nbs=4k\nioengine=psync\n";
    let base = ["--sched", "mq-deadline", "--precondition", "fill"];
    let open = run_job("dd-open", job, &base);
    let limited = run_job(
        "dd-limited",
        job,
        &[&base[..], &["--set", "sched.async_depth=32"]].concat(),
    );
    let iops = |r: &Value, f: &str| flow(r, f)["iops"].as_f64().unwrap();
    assert!(
        iops(&limited, "r") > 5.0 * iops(&open, "r"),
        "{} vs {}",
        iops(&limited, "r"),
        iops(&open, "r")
    );
    assert!(open["config"]["sched"].get("async_depth").is_none());
    assert_eq!(limited["config"]["sched"]["async_depth"], 32);
}
