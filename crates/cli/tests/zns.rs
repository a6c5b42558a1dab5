//! `--ftl zns` from the command line: a zoned drive written in order, its
//! refusals counted, its impossible configurations refused before the run.

mod common;
use common::ssdsim;
use serde_json::Value;

fn run(extra: &[&str]) -> Value {
    let mut args = vec!["run", "--format", "json", "--no-progress", "--ftl", "zns"];
    args.extend_from_slice(extra);
    let (code, out, err) = ssdsim(&args);
    assert_eq!(code, 0, "{err}");
    serde_json::from_str(&out).unwrap()
}

#[test]
fn sequential_writes_fill_zones_in_order() {
    // chip2: 32 planes of 2,048 blocks; zones of 8 planes x 1 block (2 MiB),
    // 8,192 of them.
    let r = run(&[
        "--rw",
        "write",
        "--bs",
        "64k",
        "--number_ios",
        "640",
        "--set",
        "ftl.zone_planes=8",
        "--set",
        "ftl.max_open_zones=4",
    ]);
    let z = &r["zns"];
    assert_eq!(z["zones"], 8192);
    assert_eq!(z["zone_capacity_bytes"], 2 << 20);
    assert_eq!(z["zone_size_bytes"], 2 << 20);
    // 640 x 64 KiB = 40 MiB: 20 zones full, nothing refused.
    assert_eq!(z["zones_by_state"]["full"], 20);
    assert_eq!(z["implicit_opens"], 20);
    assert!(z["errors"].as_object().unwrap().values().all(|v| v == 0));
    assert_eq!(r["flash"]["waf"], 1.0);
    assert_eq!(r["flash"]["gc_page_copies"], 0);
    assert!(r["host"].get("failed").is_none());
}

#[test]
fn random_writes_are_refused_as_a_zoned_drive_refuses_them() {
    let r = run(&["--rw", "randwrite", "--number_ios", "500"]);
    let failed = r["host"]["failed"].as_u64().unwrap();
    assert!(failed > 490, "{failed}");
    assert_eq!(r["zns"]["errors"]["invalid_write"], failed);
    // The refused writes moved nothing.
    let written = r["host"]["bytes_written"].as_u64().unwrap();
    assert_eq!(written, (500 - failed) * 4096);
}

#[test]
fn conventional_zones_take_random_writes_and_collect_garbage() {
    // chip2's zones are 8 MiB (32 planes x 1 block); 4 conventional zones
    // (32 MiB) take 8 zone slots: max(32 MiB x 1.07, 32 MiB + 4 spare blocks
    // x 32 planes) = 64 MiB.
    let r = run(&[
        "--rw",
        "randwrite",
        "--size",
        "32MiB",
        "--set",
        "workload.io_size=96MiB",
        "--set",
        "ftl.conventional_zones=4",
    ]);
    let z = &r["zns"];
    assert_eq!(z["conventional_zones"], 4);
    assert_eq!(z["conventional_slots"], 8);
    assert_eq!(z["zones"], 2048 - 8 + 4);
    assert_eq!(z["zones_by_state"]["not_write_pointer"], 4);
    assert!(r["host"].get("failed").is_none(), "random writes are taken");
    assert_eq!(r["host"]["bytes_written"], 96 << 20);
    // Three passes over 32 MiB on 64 MiB of flash: GC copies.
    assert!(r["ftl"]["stats"]["gc_page_copies"].as_u64().unwrap() > 0);
    assert!(r["flash"]["waf"].as_f64().unwrap() > 1.0);
    // Conventional zones need whole slots of every plane.
    let (code, _, err) = ssdsim(&[
        "run",
        "--ftl",
        "zns",
        "--number_ios",
        "10",
        "--set",
        "ftl.conventional_zones=1",
        "--set",
        "ftl.zone_planes=8",
    ]);
    assert_eq!(code, 2);
    assert!(err.contains("ftl.conventional_zones"), "{err}");
    let (code, _, err) = ssdsim(&[
        "run",
        "--ftl",
        "zns",
        "--number_ios",
        "10",
        "--set",
        "ftl.conventional_zones=5000",
    ]);
    assert_eq!(code, 2);
    assert!(err.contains("zone slots"), "{err}");
}

/// Zone commands in a CSV trace, each taken or refused as ZNS says.
#[test]
fn a_csv_trace_drives_the_zone_commands() {
    let dir = common::scratch("zones");
    let trace = dir.join("zones.csv");
    // chip2's zones are 8 MiB.
    std::fs::write(
        &trace,
        "time_ns,op,offset_bytes,size_bytes\n\
         0,W,0,65536\n\
         100000,W,65536,65536\n\
         200000,W,0,4096\n\
         300000,ZR,0,0\n\
         400000,ZA,8388608,16384\n\
         400000,ZA,8388608,16384\n\
         500000,ZF,8388608,0\n\
         600000,ZO,16777216,0\n\
         700000,ZC,16777216,0\n\
         800000,ZR,4096,0\n\
         900000,T,0,4096\n",
    )
    .unwrap();
    let r = run(&["--trace", trace.to_str().unwrap(), "--trace-format", "csv"]);
    let (h, z) = (&r["host"], &r["zns"]);
    assert_eq!(h["requests"], 11);
    assert_eq!(h["zone_mgmt"], 5);
    // The second write and the rewrite at 0 wait in the zone's write plug
    // behind the first (zone write plugging); the reset aborts them, as
    // Linux's does (`disk_zone_wplug_abort`). Then the reset of an address
    // that starts no zone, and the discard, are refused by the drive.
    assert_eq!(h["failed"], 4);
    assert_eq!(r["sched"]["zone_plugged"], 2);
    assert_eq!(z["errors"]["invalid_write"], 0);
    assert_eq!(z["errors"]["invalid_field"], 1);
    assert_eq!(z["errors"]["invalid_opcode"], 1);
    // 16 pages written over 32 planes: the reset erases 16 blocks.
    assert_eq!(z["resets"], 1);
    assert_eq!(z["reset_erases"], 16);
    assert_eq!(r["flash"]["block_erases"], 16);
    assert_eq!(z["append_commands"], 2);
    assert_eq!(z["finishes"], 1);
    assert_eq!(z["finish_unwritten_pages"], 2048 - 8);
    assert_eq!(z["zones_by_state"]["full"], 1);
    assert_eq!(h["bytes_written"], (65536 + 2 * 16384) as u64);
    // The reset waited for its erases (tBERS 1.5 ms).
    assert!(r["latency_us"]["all"]["max"].as_f64().unwrap() >= 1500.0);
}

#[test]
fn a_zoned_drive_refuses_what_it_cannot_do_before_the_run() {
    for (args, field) in [
        (&["--precondition", "steady"][..], "sim.precondition"),
        (&["--write-buffer", "1MiB"][..], "dram.write_buffer"),
        (&["--set", "ftl.zone_planes=3"][..], "ftl.zone_planes"),
        (
            &[
                "--set",
                "ftl.max_open_zones=8",
                "--set",
                "ftl.max_active_zones=4",
            ][..],
            "ftl.max_open_zones",
        ),
    ] {
        let mut a = vec!["run", "--ftl", "zns", "--number_ios", "10"];
        a.extend_from_slice(args);
        let (code, _, err) = ssdsim(&a);
        assert_eq!(code, 2, "{args:?}: {err}");
        assert!(err.contains(field), "{args:?}: {err}");
    }
    // A conventional drive's report has no zoned fields.
    let (code, out, _) = ssdsim(&["run", "--format", "json", "--number_ios", "100"]);
    assert_eq!(code, 0);
    let r: Value = serde_json::from_str(&out).unwrap();
    assert!(r.get("zns").is_none());
    assert!(r["host"].get("zone_mgmt").is_none());
}

/// F2FS's zoned mode end to end: Filebench's fileserver on a zoned drive
/// (128 zones of 8 MiB, the first 8 conventional) writes every zone in
/// order, cleans by moving live blocks and resetting the zones it emptied,
/// and the drive copies nothing in its sequential zones.
#[test]
fn f2fs_runs_on_a_zoned_drive_in_its_zoned_mode() {
    let r = run(&[
        "--set",
        "nand.blocks_per_plane=128",
        "--set",
        "ftl.conventional_zones=8",
        "--fs",
        "f2fs",
        "--personality",
        "fileserver",
        "--set",
        "personality.level=file",
        "--set",
        "personality.files=4000",
        "--time-limit",
        "10s",
    ]);
    let z = &r["zns"];
    assert!(
        z["errors"].as_object().unwrap().values().all(|v| v == 0),
        "{z}"
    );
    assert!(r["host"].get("failed").is_none(), "{}", r["host"]);
    let resets = z["resets"].as_u64().unwrap();
    assert!(resets > 10, "{z}");
    assert_eq!(r["host"]["zone_mgmt"], resets);
    let fs = &r["file_system"];
    assert!(
        fs["cleaner_blocks_written"].as_u64().unwrap() > 1000,
        "{fs}"
    );
    // Only the conventional zones (the metadata area) have device GC.
    let host_pages = r["host"]["bytes_written"].as_u64().unwrap() / 4096;
    let copies = r["flash"]["gc_page_copies"].as_u64().unwrap();
    assert!(
        copies * 20 < host_pages,
        "{copies} copies for {host_pages} pages"
    );
}

#[test]
fn a_file_system_on_a_zoned_drive_is_f2fs_with_room_for_its_metadata() {
    let args = |fs: &'static str, conv: &'static str| {
        vec![
            "run",
            "--ftl",
            "zns",
            "--set",
            "nand.blocks_per_plane=128",
            "--set",
            conv,
            "--fs",
            fs,
            "--personality",
            "fileserver",
            "--set",
            "personality.level=file",
            "--set",
            "personality.files=1000",
            "--time-limit",
            "1s",
        ]
    };
    let (code, _, err) = ssdsim(&args("ext4", "ftl.conventional_zones=8"));
    assert_ne!(code, 0);
    assert!(err.contains("fs.kind") && err.contains("zoned"), "{err}");
    let (code, _, err) = ssdsim(&args("f2fs", "ftl.conventional_zones=2"));
    assert_ne!(code, 0);
    assert!(err.contains("ftl.conventional_zones"), "{err}");
}

/// F2FS's zoned mode under a drive's open and active zone limits (14 and
/// 14, as the ZN540 has them): a log's next write waits for the one that
/// fills its zone (`zone_pending_bio` in `f2fs_submit_page_write`), so the
/// six logs keep at most six zones open and the drive refuses nothing.
/// Without the wait the flusher's passes write many zones of the warm data
/// log at once and the drive refuses writes (Too Many Active Zones, then
/// writes not at the write pointer).
#[test]
fn f2fs_keeps_a_zone_open_per_log_under_the_drives_limits() {
    let r = run(&[
        "--set",
        "nand.blocks_per_plane=128",
        "--set",
        "ftl.conventional_zones=8",
        "--set",
        "ftl.max_open_zones=14",
        "--set",
        "ftl.max_active_zones=14",
        "--fs",
        "f2fs",
        "--personality",
        "fileserver",
        "--set",
        "personality.level=file",
        "--set",
        "personality.files=4000",
        "--time-limit",
        "10s",
    ]);
    let z = &r["zns"];
    assert!(
        z["errors"].as_object().unwrap().values().all(|v| v == 0),
        "{z}"
    );
    assert!(r["host"].get("failed").is_none(), "{}", r["host"]);
    let open = z["max_open"].as_u64().unwrap();
    assert!((1..=6).contains(&open), "{z}");
    assert!(z["max_active"].as_u64().unwrap() <= 6, "{z}");
    // The logs' writes did wait, but the flusher starts no pass while
    // writes of its wait (Linux's sleeps in the log): what waits is what
    // it had submitted when a zone filled, a minority of the writes (with
    // the flusher going on, nine in ten waited).
    let waits = r["notes"]["zone_log_waits"].as_u64().unwrap();
    let writes = r["host"]["writes"].as_u64().unwrap();
    assert!(waits > 0 && waits * 2 < writes, "{waits} of {writes}");
    assert!(z["resets"].as_u64().unwrap() > 10, "{z}");
}
