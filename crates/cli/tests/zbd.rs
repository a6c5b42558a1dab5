//! fio's `zonemode=zbd` from the command line: jobs that write a zoned
//! drive at its write pointers (sharing its zones across jobs, within its
//! open-zone limit, resetting full zones), the block layer's zone write
//! plugging, fio's own `zbd-*` examples, and the refusals.

mod common;
use common::{scratch, ssdsim, ssdsim_in};
use serde_json::Value;
use std::path::Path;

/// A zoned chip2 drive of 2 MiB zones (8 planes x 1 block), 8,192 of them.
const SMALL: &[&str] = &["--ftl", "zns", "--set", "ftl.zone_planes=8"];

fn run_job(name: &str, job: &str, extra: &[&str]) -> Value {
    let dir = scratch(name);
    std::fs::write(dir.join("j.fio"), job).unwrap();
    let mut args = vec!["run", "--format", "json", "--no-progress", "--fio", "j.fio"];
    args.extend_from_slice(extra);
    let (code, out, err) = ssdsim_in(&dir, &args);
    assert_eq!(code, 0, "{err}");
    serde_json::from_str(&out).unwrap()
}

fn refused(job: &str, extra: &[&str]) -> String {
    let dir = scratch("refused");
    std::fs::write(dir.join("j.fio"), job).unwrap();
    let mut args = vec!["run", "--format", "json", "--no-progress", "--fio", "j.fio"];
    args.extend_from_slice(extra);
    let (code, _, err) = ssdsim_in(&dir, &args);
    assert_eq!(code, 2, "{err}");
    err
}

fn no_zone_errors(r: &Value) {
    assert!(r["host"].get("failed").is_none(), "{}", r["host"]);
    let errs = r["zns"]["errors"].as_object().unwrap();
    assert!(errs.values().all(|v| v == 0), "{errs:?}");
}

#[test]
fn random_writers_share_the_zones_within_the_open_limit() {
    // Four psync jobs write random zones at their write pointers: fio's
    // table of write zones holds at most max_open_zones of them, shared.
    let r = run_job(
        "shared",
        "[global]\nrw=randwrite\nzonemode=zbd\nmax_open_zones=4\nbs=64k\ndirect=1\n\
         numjobs=4\nio_size=12m\n[dev]\nioengine=psync\n",
        SMALL,
    );
    no_zone_errors(&r);
    let z = &r["zns"];
    assert!(z["max_open"].as_u64().unwrap() <= 4, "{z}");
    // Every byte the host wrote is one the zones took, each page once.
    assert_eq!(
        r["host"]["bytes_written"].as_u64().unwrap(),
        z["pages_written"].as_u64().unwrap() * 4096
    );
    assert_eq!(r["flash"]["waf"], 1.0);
    let flows = r["flows"].as_array().unwrap();
    assert_eq!(flows.len(), 4);
    assert!(flows.iter().all(|f| f["writes"] == 192));
    // A fresh drive: more than four zones written means zones were filled
    // and left for others (full), never more than four open at once.
    assert!(z["zones_by_state"]["full"].as_u64().unwrap() > 0, "{z}");
}

#[test]
fn deep_sequential_writes_reach_a_zone_in_order_through_its_plug() {
    // libaio at iodepth 16 writes one zone after the other: zone write
    // plugging keeps one write per zone in the device, so none fails.
    let r = run_job(
        "plug",
        "[w]\nrw=write\nbs=64k\ndirect=1\nioengine=libaio\niodepth=16\nzonemode=zbd\nsize=4z\n",
        SMALL,
    );
    no_zone_errors(&r);
    assert_eq!(r["host"]["bytes_written"], 8 << 20);
    assert_eq!(r["zns"]["zones_by_state"]["full"], 4);
    let plugged = r["sched"]["zone_plugged"].as_u64().unwrap();
    assert!(plugged > 100, "{}", r["sched"]);
    // The device never had two writes at once: one zone at a time.
    assert_eq!(r["zbd"]["zone_resets"], 0);
}

#[test]
fn full_zones_are_reset_before_they_are_written_again() {
    // Preconditioned full: every random write's zone is full, so fio
    // resets it (after its writes in flight) and writes it from its start.
    let r = run_job(
        "reset",
        "[w]\nrw=randwrite\nbs=64k\ndirect=1\nioengine=psync\nzonemode=zbd\nsize=16z\n\
         io_size=8m\n",
        &[SMALL, &["--precondition", "fill"]].concat(),
    );
    no_zone_errors(&r);
    let resets = r["zbd"]["zone_resets"].as_u64().unwrap();
    assert!(resets >= 1, "{}", r["zbd"]);
    assert_eq!(r["host"]["zone_mgmt"].as_u64().unwrap(), resets);
    assert_eq!(r["zns"]["resets"].as_u64().unwrap(), resets);
    // Each reset erased its zone's 8 blocks.
    assert_eq!(r["zns"]["reset_erases"].as_u64().unwrap(), resets * 8);
}

#[test]
fn reads_stay_below_the_write_pointers() {
    // A job writes three quarters of a zone, then (stonewall) one reads
    // sequentially: it reads what is written and nothing past it.
    let r = run_job(
        "reads",
        "[global]\ndirect=1\nbs=64k\nzonemode=zbd\n[w]\nrw=write\nsize=2z\nnumber_ios=24\n\
         [r]\nstonewall\nrw=read\nsize=4z\n",
        SMALL,
    );
    no_zone_errors(&r);
    let flows = r["flows"].as_array().unwrap();
    assert_eq!(flows[0]["bytes_written"], 24 << 16);
    assert_eq!(flows[1]["bytes_read"], 24 << 16);
}

#[test]
fn trims_are_zone_resets_of_written_zones() {
    let r = run_job(
        "trim",
        "[t]\nrw=randtrim\nbs=2m\ndirect=1\nzonemode=zbd\nsize=8z\nnumber_ios=4\n",
        &[SMALL, &["--precondition", "fill"]].concat(),
    );
    no_zone_errors(&r);
    assert_eq!(r["host"]["zone_mgmt"], 4);
    assert_eq!(r["zbd"]["zone_resets"], 4);
    assert_eq!(r["zns"]["zones_by_state"]["empty"], 8192 - 8188);
}

#[test]
fn emulated_zones_on_a_conventional_drive_send_no_zone_command() {
    // fio's zonemode=zbd on a drive without zones emulates zones of
    // zonesize: writes go in order within each, resets only move fio's
    // write pointers.
    let r = run_job(
        "emulated",
        "[w]\nrw=randwrite\nbs=64k\ndirect=1\nzonemode=zbd\nzonesize=1m\nsize=8m\n\
         max_open_zones=2\nio_size=40m\n",
        &[],
    );
    assert!(r["host"].get("zone_mgmt").is_none(), "{}", r["host"]);
    assert!(r["zbd"]["zone_resets"].as_u64().unwrap() > 0);
    assert_eq!(r["host"]["writes"], 640);
}

#[test]
fn the_zone_reset_threshold_resets_zones_as_fio_does() {
    // fio's zbd-rand-write-zone-reset-gc.fio on a 2 MiB-zone drive: past
    // 70 % of the 8 zones written, every 8th write resets its zone.
    let r = run_job(
        "threshold",
        "[d]\nrw=randwrite\nzonemode=zbd\nbs=256k\ndirect=1\nsize=8z\nioengine=psync\n\
         zone_reset_threshold=0.7\nzone_reset_frequency=0.125\nio_size=100m\n",
        SMALL,
    );
    no_zone_errors(&r);
    // 400 x 256 KiB = 100 MiB over 16 MiB: without the threshold the zones
    // would be reset only when full (about 100 / 16 x 8 / 8 times); with
    // it, about one write in eight resets once 70 % is written.
    let resets = r["zbd"]["zone_resets"].as_u64().unwrap();
    assert!((30..=60).contains(&resets), "{resets}");
}

/// fio's examples/zbd-*.fio, as fio ships them (fio f5344384f7c7), on a
/// zoned drive of 256 MiB zones (32 planes x 32 blocks of 256 KiB), 672 of
/// them, with fio's 32 open zones; each run cut to `runtime`.
fn fio_example(name: &str, runtime: &str, extra: &[&str]) -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("tests/data/fio-zbd/{name}.fio"));
    let mut args = vec![
        "run",
        "--format",
        "json",
        "--no-progress",
        "--ftl",
        "zns",
        "--blocks-per-plane",
        "21504",
        "--set",
        "ftl.zone_blocks=32",
        "--set",
        "ftl.max_open_zones=32",
        "--runtime",
        runtime,
        "--fio",
    ];
    let p = path.to_str().unwrap();
    args.push(p);
    args.extend_from_slice(extra);
    let (code, out, err) = ssdsim(&args);
    assert_eq!(code, 0, "{name}: {err}");
    serde_json::from_str(&out).unwrap()
}

#[test]
fn fios_zbd_examples_run() {
    let r = fio_example("zbd-rand-write", "100ms", &[]);
    no_zone_errors(&r);
    assert_eq!(r["flows"].as_array().unwrap().len(), 16);
    assert!(r["host"]["writes"].as_u64().unwrap() > 0);
    assert!(r["zns"]["max_open"].as_u64().unwrap() <= 32);

    let r = fio_example("zbd-rand-write-zone-reset-gc", "1s", &[]);
    no_zone_errors(&r);
    assert!(r["host"]["writes"].as_u64().unwrap() > 0);

    // Reading what a full drive holds, from zone 524 on.
    let r = fio_example("zbd-seq-read", "100ms", &["--precondition", "fill"]);
    no_zone_errors(&r);
    assert!(r["host"]["reads"].as_u64().unwrap() > 0);
    assert_eq!(r["host"]["writes"], 0);
}

#[test]
fn what_zonemode_zbd_cannot_do_is_refused() {
    let e = refused(
        "[j]\nrw=write\nzonemode=zbd\nzonesize=1m\ndirect=1\n",
        SMALL,
    );
    assert!(
        e.contains("zonesize 1048576 does not match the device zone size 2097152"),
        "{e}"
    );
    let e = refused(
        "[j]\nrw=randwrite\nzonemode=zbd\nmax_open_zones=9\ndirect=1\n",
        &[SMALL, &["--set", "ftl.max_open_zones=8"]].concat(),
    );
    assert!(
        e.contains("max_open_zones (9) is larger than the device's (8)"),
        "{e}"
    );
    let e = refused(
        "[j]\nrw=write\nzonemode=zbd\noffset=1m\nsize=1m\ndirect=1\n",
        SMALL,
    );
    assert!(e.contains("io_size must be at least one zone"), "{e}");
    let e = refused("[j]\nrw=write\nzonemode=zbd\n", SMALL);
    assert!(e.contains("needs direct=1"), "{e}");
    let e = refused("[j]\nrw=write\nsize=2z\ndirect=1\n", &[]);
    assert!(e.contains("needs the zone size"), "{e}");
    let e = refused(
        "[j]\nrw=write\nzonemode=zbd\nzoneskip=1m\ndirect=1\n",
        SMALL,
    );
    assert!(e.contains("zoneskip must be 0"), "{e}");
    // Two jobs, one naming the drive's limit, one another.
    let e = refused(
        "[global]\nrw=randwrite\nzonemode=zbd\ndirect=1\n[a]\nmax_open_zones=8\n\
         [b]\nmax_open_zones=4\n",
        &[SMALL, &["--set", "ftl.max_open_zones=8"]].concat(),
    );
    assert!(e.contains("different max_open_zones values"), "{e}");
    let e = refused("[j]\nrw=write\nzonemode=zbd\ndirect=1\n", &[]);
    assert!(e.contains("needs zonesize"), "{e}");
    let e = refused(
        "[j]\nrw=write\nzonemode=zbd\ndirect=1\nwrite_zone_remainders=1\n",
        SMALL,
    );
    assert!(e.contains("write_zone_remainders"), "{e}");
}

#[test]
fn a_range_is_rounded_to_whole_zones_as_fio_rounds_it() {
    let dir = scratch("round");
    std::fs::write(
        dir.join("j.fio"),
        "[j]\nrw=write\nzonemode=zbd\noffset=1m\nsize=5m\ndirect=1\nbs=64k\n",
    )
    .unwrap();
    let mut args = vec!["run", "--format", "json", "--no-progress", "--fio", "j.fio"];
    args.extend_from_slice(SMALL);
    let (code, out, err) = ssdsim_in(&dir, &args);
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains("rounded up offset from 1048576 to 2097152"),
        "{err}"
    );
    assert!(
        err.contains("rounded down io_size from 5242880 to 4194304"),
        "{err}"
    );
    let r: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(r["host"]["bytes_written"], 4 << 20);
    assert_eq!(r["zns"]["zones_by_state"]["full"], 2);
}

#[test]
fn a_job_may_name_the_limit_another_took_from_the_drive() {
    // fio compares a job's max_open_zones with the device's write-zone
    // limit, which the first job set (here from the drive).
    let r = run_job(
        "samelimit",
        "[global]\nrw=randwrite\nzonemode=zbd\ndirect=1\nbs=64k\nio_size=2m\n[a]\n\
         [b]\nmax_open_zones=6\n",
        &[SMALL, &["--set", "ftl.max_open_zones=6"]].concat(),
    );
    no_zone_errors(&r);
    assert!(r["zns"]["max_open"].as_u64().unwrap() <= 6);
}

#[test]
fn a_zoned_run_is_deterministic() {
    let job = "[global]\nrw=randwrite\nzonemode=zbd\nmax_open_zones=3\nbs=128k\ndirect=1\n\
               numjobs=3\nio_size=20m\n[dev]\nioengine=libaio\niodepth=4\n";
    let strip = |mut v: Value| {
        v["run"] = Value::Null;
        v
    };
    let a = strip(run_job("det-a", job, SMALL));
    let b = strip(run_job("det-b", job, SMALL));
    no_zone_errors(&a);
    assert_eq!(a, b);
}

#[test]
fn fios_trim_gc_example_runs_with_flow_control_and_wait_for() {
    // zbd-rand-write-trim-gc.fio: a 3 s warmup of random writes, then
    // (wait_for=warmup) a writer and a trimmer in one flow group at weights
    // 128 and 1, each trim a zone reset: about one reset per 128 writes.
    let r = fio_example("zbd-rand-write-trim-gc", "8s", &[]);
    no_zone_errors(&r);
    let flows = r["flows"].as_array().unwrap();
    let by = |n: &str| flows.iter().find(|f| f["name"] == n).unwrap();
    let (warm, w, t) = (by("warmup"), by("wjob"), by("trimjob"));
    // The two wait for the warmup (its 3 s runtime, then its last write).
    assert!(w["start_s"].as_f64().unwrap() >= 3.0, "{w}");
    assert!(t["start_s"].as_f64().unwrap() >= 3.0, "{t}");
    assert!(warm["writes"].as_u64().unwrap() > 0);
    let (writes, resets) = (
        w["writes"].as_u64().unwrap(),
        t["zbd"]["zone_resets"].as_u64().unwrap(),
    );
    assert!(resets > 0, "{t}");
    // Flow control: the trimmer's first request, then one each 128 of
    // the writer's (its share of the group's count, 1 in 129).
    let trims = t["requests"].as_u64().unwrap();
    assert!(writes > 256, "{writes}");
    assert!(
        (1 + writes / 128).abs_diff(trims) <= 1,
        "{writes} writes, {trims} trims"
    );
    assert_eq!(resets, trims);
}

#[test]
fn a_zone_left_with_less_than_a_block_is_finished() {
    // 2 MiB zones written 192 KiB at a time: after ten writes 128 KiB is
    // left, less than a block, so fio finishes the zone (after its writes
    // in flight) and goes on in the next.
    let r = run_job(
        "finish",
        "[w]\nrw=write\nbs=192k\ndirect=1\nioengine=libaio\niodepth=4\nzonemode=zbd\nsize=3z\n",
        SMALL,
    );
    no_zone_errors(&r);
    assert_eq!(r["zbd"]["zone_finishes"], 2);
    assert_eq!(r["zns"]["finishes"], 2);
    // Three zones of ten writes each; the job's range ends in the third,
    // which stays open with its remainder (fio finishes a zone only when
    // it would write it again).
    assert_eq!(r["zns"]["zones_by_state"]["full"], 2);
    assert_eq!(r["zns"]["zones_by_state"]["implicit_open"], 1);
    assert_eq!(r["host"]["writes"], 30);
}

#[test]
fn the_open_zone_limits_default_to_the_drives_and_bound_each_job() {
    // No max_open_zones: the drive's (5) is fio's; job_max_open_zones=2
    // bounds each of the two jobs, so at most 4 zones are written at once.
    let r = run_job(
        "limits",
        "[global]\nrw=randwrite\nzonemode=zbd\njob_max_open_zones=2\nbs=64k\ndirect=1\n\
         numjobs=2\nio_size=8m\n[dev]\nioengine=psync\n",
        &[SMALL, &["--set", "ftl.max_open_zones=5"]].concat(),
    );
    no_zone_errors(&r);
    assert!(r["zns"]["max_open"].as_u64().unwrap() <= 4, "{}", r["zns"]);
    // More than 4 zones written in all: full ones leave the table.
    assert!(
        r["zns"]["implicit_opens"].as_u64().unwrap() > 4,
        "{}",
        r["zns"]
    );
}
