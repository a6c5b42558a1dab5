//! fio's flow control between jobs (`flow`, `flow_id`, `flow_sleep`) and
//! `wait_for`, from job files.

mod common;
use common::{scratch, ssdsim_in};
use serde_json::Value;

fn run_job(name: &str, job: &str) -> Value {
    let dir = scratch(name);
    std::fs::write(dir.join("j.fio"), job).unwrap();
    let (code, out, err) = ssdsim_in(
        &dir,
        &["run", "--format", "json", "--no-progress", "--fio", "j.fio"],
    );
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

#[test]
fn flow_weights_set_the_jobs_shares_of_requests() {
    // fio's examples/flow.fio, shortened: weights 1 and 8 in one group.
    let r = run_job(
        "weights",
        "[global]\nnorandommap\ntime_based\nruntime=200ms\ndirect=1\nioengine=libaio\n\
         iodepth=32\nbs=8k\n[job2]\nrw=write\nflow=1\n[job1]\nrw=randread\nflow=8\n",
    );
    let w = flow(&r, "job2")["requests"].as_u64().unwrap();
    let rd = flow(&r, "job1")["requests"].as_u64().unwrap();
    assert!(w > 100, "{w}");
    // The shared count moves one request at a time: 8 reads a write, within
    // the requests in flight when the run ends.
    let ratio = rd as f64 / w as f64;
    assert!((ratio - 8.0).abs() < 0.3, "{rd} / {w} = {ratio}");
}

#[test]
fn flow_groups_hold_for_jobs_whose_writes_are_placed() {
    // The same weights on a drive with Flexible Data Placement, each job on
    // its own placement handle: the placement wrapper must not hide the
    // generators from their flow group.
    let dir = scratch("placed");
    std::fs::write(
        dir.join("j.fio"),
        "[global]\ntime_based\nruntime=100ms\ndirect=1\nioengine=libaio\niodepth=16\n\
         bs=8k\nfdp=1\n[a]\nrw=randwrite\nflow=1\nfdp_pli=0\n[b]\nrw=randwrite\nflow=3\n\
         fdp_pli=1\n",
    )
    .unwrap();
    let (code, out, err) = ssdsim_in(
        &dir,
        &[
            "run",
            "--format",
            "json",
            "--no-progress",
            "--set",
            "ftl.fdp=true",
            "--set",
            "ftl.fdp_handles=2",
            "--fio",
            "j.fio",
        ],
    );
    assert_eq!(code, 0, "{err}");
    let r: Value = serde_json::from_str(&out).unwrap();
    let a = flow(&r, "a")["requests"].as_u64().unwrap();
    let b = flow(&r, "b")["requests"].as_u64().unwrap();
    assert!(a > 50, "{a}");
    let ratio = b as f64 / a as f64;
    assert!((ratio - 3.0).abs() < 0.2, "{b} / {a} = {ratio}");
    // Each job's writes went to its own handle.
    let h = r["fdp"]["handles"].as_array().unwrap();
    assert!(
        h.iter().all(|x| x["host_bytes"].as_u64().unwrap() > 0),
        "{h:?}"
    );
}

#[test]
fn flow_sleep_waits_before_trying_again() {
    // The same group with flow_sleep: a job held back drains and sleeps
    // 1 ms, so the pair does fewer requests than without.
    let job = |sleep: &str| {
        format!(
            "[global]\nnorandommap\ntime_based\nruntime=100ms\ndirect=1\nioengine=libaio\n\
             iodepth=8\nbs=8k\n{sleep}\n[a]\nrw=write\nflow=1\n[b]\nrw=randread\nflow=1\n"
        )
    };
    let fast = run_job("nosleep", &job(""));
    let slow = run_job("sleep", &job("flow_sleep=1000"));
    let n = |r: &Value| r["host"]["requests"].as_u64().unwrap();
    assert!(n(&slow) < n(&fast), "{} vs {}", n(&slow), n(&fast));
}

#[test]
fn wait_for_starts_a_job_after_the_named_one() {
    // fio's examples/waitfor.fio, shortened: readers wait for the writers
    // (both clones), writers2 for the readers; other jobs are not held.
    let r = run_job(
        "waitfor",
        "[global]\ndirect=1\nsize=8m\n[writers]\nrw=write\nbs=128k\nnumjobs=2\n\
         [readers]\nnew_group\nwait_for=writers\nrw=randread\nbs=4k\nnumjobs=2\n\
         number_ios=200\n[free]\nrw=read\nbs=4k\nnumber_ios=100\n",
    );
    let end = |n: &str| {
        let f = flow(&r, n);
        f["start_s"].as_f64().unwrap() + f["time_s"].as_f64().unwrap()
    };
    let start = |n: &str| flow(&r, n)["start_s"].as_f64().unwrap();
    let writers_end = end("writers-0").max(end("writers-1"));
    assert!(start("readers-0") >= writers_end - 1e-9, "{}", r["flows"]);
    assert!(start("readers-1") >= writers_end - 1e-9);
    // A job after the waiter that waits for nothing starts with the run.
    assert_eq!(start("free"), 0.0);
}

#[test]
fn a_wait_for_naming_no_job_is_refused() {
    let dir = scratch("nowaitee");
    std::fs::write(
        dir.join("j.fio"),
        "[a]\nrw=read\ndirect=1\n[b]\nwait_for=c\nrw=read\ndirect=1\n",
    )
    .unwrap();
    let (code, _, err) = ssdsim_in(&dir, &["run", "--fio", "j.fio", "--no-progress"]);
    assert_eq!(code, 2);
    assert!(
        err.contains("j.fio:4: wait_for=c: no other job has that name"),
        "{err}"
    );
    std::fs::write(dir.join("k.fio"), "[a]\nrw=read\nflow=2000\n").unwrap();
    let (code, _, err) = ssdsim_in(&dir, &["run", "--fio", "k.fio", "--no-progress"]);
    assert_eq!(code, 2);
    assert!(err.contains("flow: at most 1000"), "{err}");
    std::fs::write(dir.join("l.fio"), "[a]\nrw=read\nflow=2\n").unwrap();
    let (code, _, err) = ssdsim_in(&dir, &["run", "--fio", "l.fio", "--no-progress"]);
    assert_eq!(code, 2);
    assert!(err.contains("workload.flow"), "{err}");
}
