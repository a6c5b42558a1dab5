//! File systems from the CLI: `--fs` changes what a file-level personality
//! writes the way each layout implies, bad `[fs]` input is refused naming
//! the field, and `trace record` writes the block stream a run produced.

mod common;
use common::ssdsim;

/// varmail on a small drive for a short time, as JSON.
fn varmail(fs: &str, extra: &[&str]) -> serde_json::Value {
    let mut args = vec![
        "run",
        "--personality",
        "varmail",
        "--set",
        "personality.level=file",
        "--set",
        "personality.files=300",
        "--blocks-per-plane",
        "256",
        "--time-limit",
        "300ms",
        "--no-power",
        "--format",
        "json",
        "--fs",
        fs,
    ];
    args.extend_from_slice(extra);
    let (code, out, err) = ssdsim(&args);
    assert_eq!(code, 0, "{fs}: {err}");
    serde_json::from_str(&out).unwrap()
}

fn num(v: &serde_json::Value, path: &str) -> f64 {
    path.split('.')
        .try_fold(v, |v, k| v.get(k))
        .and_then(|x| x.as_f64())
        .unwrap_or_else(|| panic!("no number at {path}"))
}

/// Each file system writes what its layout implies: raw no metadata and no
/// journal; ext2 metadata but no journal (its fsync writes the inode); ext3
/// and ext4 a journal committed by the fsyncs, each commit a descriptor,
/// the transaction's blocks and a commit block; data=journal logs the data
/// too. Every metadata or journal block is on top of the application's
/// bytes, so the host writes more per application byte than raw.
#[test]
fn each_file_system_writes_what_its_layout_implies() {
    let raw = varmail("raw", &[]);
    let ext2 = varmail("ext2", &[]);
    let ext3 = varmail("ext3", &[]);
    let ext4 = varmail("ext4", &[]);
    let xfs = varmail("xfs", &[]);
    let nilfs2 = varmail("nilfs2", &[]);
    let reiserfs = varmail("reiserfs", &[]);
    let f2fs = varmail("f2fs", &[]);
    for (name, r) in [
        ("f2fs", &f2fs),
        ("reiserfs", &reiserfs),
        ("nilfs2", &nilfs2),
        ("raw", &raw),
        ("ext2", &ext2),
        ("ext3", &ext3),
        ("ext4", &ext4),
        ("xfs", &xfs),
    ] {
        assert_eq!(r["file_system"]["kind"], name);
        assert!(num(r, "app.fsyncs") > 0.0, "{name}");
    }
    assert_eq!(num(&raw, "file_system.metadata_dirtied"), 0.0);
    assert_eq!(num(&raw, "page_cache.fs_direct_pages_written"), 0.0);
    assert!(num(&ext2, "file_system.metadata_dirtied") > 0.0);
    assert_eq!(num(&ext2, "file_system.journal_blocks_written"), 0.0);
    // ext2's fsync writes the file's inode block from the cache.
    assert!(num(&ext2, "page_cache.metadata_pages_written") > 0.0);
    for r in [&ext3, &ext4] {
        let commits = num(r, "file_system.commits_fsync");
        let blocks = num(r, "file_system.journal_blocks_written");
        assert!(commits > 0.0);
        // At least a descriptor, one block and the commit block each.
        assert!(
            blocks >= 3.0 * commits,
            "{blocks} blocks in {commits} commits"
        );
        // Every journal block reached the device as the file system's own
        // write (but those of the commits the time limit cut short), with a
        // flush before each commit block.
        let sent = num(r, "page_cache.fs_direct_pages_written");
        assert!(
            sent <= blocks && sent >= 0.95 * blocks,
            "{sent} of {blocks}"
        );
        // Two flushes a commit: the barrier before the commit block and
        // its FUA after it.
        let flushes = num(r, "page_cache.fs_flushes");
        assert!(
            flushes <= 2.0 * commits && flushes >= 1.9 * commits,
            "{flushes} for {commits}"
        );
    }
    // XFS logs only the changed byte ranges: its checkpoints are smaller
    // than ext4's whole-block journal commits.
    let per = |r: &serde_json::Value| {
        num(r, "file_system.journal_blocks_written") / num(r, "file_system.commits_fsync")
    };
    assert!(num(&xfs, "file_system.commits_fsync") > 0.0);
    assert!(
        per(&xfs) < per(&ext4),
        "xfs {} vs ext4 {}",
        per(&xfs),
        per(&ext4)
    );
    let waf = |r: &serde_json::Value| num(r, "page_cache.host_write_amplification");
    // NILFS2 writes every change anew in its log: its fsyncs construct
    // logs, and it writes nothing in place (no metadata writeback). Its
    // data is written by its constructions, never by the flusher.
    assert!(num(&nilfs2, "file_system.commits_fsync") > 0.0);
    assert_eq!(num(&nilfs2, "page_cache.metadata_pages_written"), 0.0);
    assert!(num(&nilfs2, "file_system.data_blocks_allocated") > 0.0);
    assert_eq!(
        num(&nilfs2, "page_cache.writeback.pages_by_reason.background")
            + num(&nilfs2, "page_cache.writeback.pages_by_reason.periodic"),
        0.0
    );
    // ReiserFS packs small files' tails into its leaves: under varmail
    // (16 KiB files) fewer data pages reach the device per application
    // byte than on ext3.
    let data = |r: &serde_json::Value| {
        (num(r, "page_cache.writeback.pages") - num(r, "page_cache.metadata_pages_written"))
            * 4096.0
            / num(r, "app.bytes_written")
    };
    assert!(num(&reiserfs, "file_system.commits_fsync") > 0.0);
    assert!(
        data(&reiserfs) < data(&ext3),
        "reiserfs {} vs ext3 {} data bytes per application byte",
        data(&reiserfs),
        data(&ext3)
    );
    // F2FS's fsync writes the file's node blocks (roll-forward), not a
    // journal or a checkpoint.
    assert!(num(&f2fs, "file_system.commits_fsync") > 0.0);
    assert!(num(&f2fs, "page_cache.fs_direct_pages_written") > 0.0);
    for r in [&ext2, &ext3, &ext4, &xfs, &nilfs2, &reiserfs, &f2fs] {
        assert!(waf(r) > waf(&raw), "{} vs raw {}", waf(r), waf(&raw));
    }
    // data=journal logs every data block as well.
    let dj = varmail("ext3", &["--set", "fs.journal=journal"]);
    assert!(
        num(&dj, "file_system.journal_blocks_written") / num(&dj, "file_system.commits_fsync")
            > num(&ext3, "file_system.journal_blocks_written")
                / num(&ext3, "file_system.commits_fsync"),
    );
}

#[test]
fn bad_file_system_input_is_refused_naming_the_field() {
    for (args, field) in [
        (vec!["--fs", "ntfs"], "fs.kind"),
        (
            vec!["--fs", "ext2", "--set", "fs.journal=ordered"],
            "fs.journal",
        ),
        (
            vec!["--fs", "ext4", "--set", "fs.commit_interval=0s"],
            "fs.commit_interval",
        ),
        (
            vec!["--fs", "ext3", "--set", "fs.dirwidth=0"],
            "fs.dirwidth",
        ),
        (
            vec!["--fs", "ext4", "--set", "fs.delaylog=false"],
            "fs.delaylog",
        ),
        (
            vec!["--fs", "reiserfs", "--set", "fs.barrier=false"],
            "fs.barrier",
        ),
        (
            vec!["--fs", "xfs", "--set", "fs.kernel=2.6.32"],
            "fs.kernel",
        ),
    ] {
        let mut a = vec![
            "run",
            "--personality",
            "varmail",
            "--set",
            "personality.level=file",
            "--time-limit",
            "10ms",
        ];
        a.extend(args.iter().copied());
        let (code, _, err) = ssdsim(&a);
        assert_ne!(code, 0, "{args:?}");
        assert!(err.contains(field), "{args:?}: {err}");
    }
    // A file system under a workload that addresses the block device.
    let (code, _, err) = ssdsim(&[
        "run",
        "--rw",
        "randwrite",
        "--fs",
        "ext2",
        "--time-limit",
        "10ms",
    ]);
    assert_ne!(code, 0);
    assert!(err.contains("fs") && err.contains("file-level"), "{err}");
}

/// `trace record` writes the block stream of a file-level run; the trace
/// replays, and its writes are the requests the run's report counted.
#[test]
fn trace_record_writes_the_runs_block_stream() {
    let dir = std::env::temp_dir().join(format!("ssdsim-fs-record-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let out = dir.join("varmail.csv");
    let (code, text, err) = ssdsim(&[
        "trace",
        "record",
        out.to_str().unwrap(),
        "--to",
        "csv",
        "--personality",
        "varmail",
        "--set",
        "personality.level=file",
        "--set",
        "personality.files=200",
        "--blocks-per-plane",
        "256",
        "--fs",
        "ext3",
        "--time-limit",
        "200ms",
    ]);
    assert_eq!(code, 0, "{err}");
    let written = text
        .lines()
        .find_map(|l| l.strip_prefix("note     trace_records_written: "))
        .unwrap_or_else(|| panic!("{text}"));
    let n: usize = written.trim().parse().unwrap();
    let body = std::fs::read_to_string(&out).unwrap();
    assert!(n > 100, "{n}");
    // A header line, then one line per request.
    assert_eq!(body.lines().count(), n + 1);
    let (code, stats, err) = ssdsim(&["trace", "stats", out.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    // The size histogram is a table of rows `up to, requests, share`, not
    // JSON; its counts add up to the requests.
    assert!(!stats.contains("max_bytes"), "{stats}");
    let rows: Vec<Vec<&str>> = stats
        .lines()
        .skip_while(|l| !l.contains("request sizes"))
        .skip(1)
        .map(|l| l.split_whitespace().collect())
        .collect();
    assert!(
        !rows.is_empty() && rows.iter().all(|r| r.len() == 5 && r[4] == "%"),
        "{stats}"
    );
    let counted: usize = rows.iter().map(|r| r[2].parse::<usize>().unwrap()).sum();
    assert_eq!(counted, n, "{stats}");
    // `.gz` is a gzip stream, ended, holding the same records.
    let gz = dir.join("varmail.csv.gz");
    let (code, _, err) = ssdsim(&[
        "run",
        "--record-trace",
        gz.to_str().unwrap(),
        "--record-format",
        "csv",
        "--personality",
        "varmail",
        "--set",
        "personality.level=file",
        "--set",
        "personality.files=200",
        "--blocks-per-plane",
        "256",
        "--fs",
        "ext3",
        "--time-limit",
        "200ms",
    ]);
    assert_eq!(code, 0, "{err}");
    let raw = std::fs::read(&gz).unwrap();
    assert_eq!(raw[..2], [0x1f, 0x8b], "not gzip");
    let mut plain = String::new();
    std::io::Read::read_to_string(&mut flate2::read::GzDecoder::new(&raw[..]), &mut plain)
        .expect("a whole gzip stream");
    assert_eq!(plain, body);
    let (code, stats_gz, err) = ssdsim(&["trace", "stats", gz.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    let count = |t: &str| {
        t.lines()
            .find(|l| l.contains("requests"))
            .map(str::to_owned)
    };
    assert_eq!(count(&stats_gz), count(&stats), "{stats_gz}");
    let (code, _, err) = ssdsim(&[
        "run",
        "--trace",
        out.to_str().unwrap(),
        "--blocks-per-plane",
        "256",
        "--no-power",
    ]);
    assert_eq!(code, 0, "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// `fs.kernel = "2.6.35"` mounts each kind as that kernel did: ext3
/// without barriers (no device flush at all), XFS without delayed logging
/// (every fsync writes its transactions' log buffers, each after a flush);
/// ext2 is unchanged. It is accepted on a grid whose axis is the kind.
#[test]
fn the_2_6_35_kernel_profile_mounts_each_kind_as_that_kernel() {
    let k = ["--set", "fs.kernel=2.6.35"];
    let ext3 = varmail("ext3", &[]);
    let ext3_old = varmail("ext3", &k);
    assert!(num(&ext3, "page_cache.fs_flushes") > 0.0);
    assert_eq!(num(&ext3_old, "page_cache.fs_flushes"), 0.0);
    assert_eq!(num(&ext3_old, "page_cache.flushes"), 0.0);
    assert!(num(&ext3_old, "file_system.commits_fsync") > 0.0);
    let xfs = varmail("xfs", &[]);
    let xfs_old = varmail("xfs", &k);
    let commits = num(&xfs_old, "file_system.commits_fsync");
    assert!(commits > 0.0);
    // One flush before each forced log buffer: at least one per force.
    assert!(num(&xfs_old, "page_cache.fs_flushes") >= 0.95 * commits);
    assert_ne!(
        num(&xfs, "file_system.journal_blocks_written"),
        num(&xfs_old, "file_system.journal_blocks_written")
    );
    let ext2 = varmail("ext2", &[]);
    let ext2_old = varmail("ext2", &k);
    assert_eq!(ext2["file_system"], ext2_old["file_system"]);
    assert_eq!(ext2["app"], ext2_old["app"]);
    let (code, out, err) = ssdsim(&[
        "sweep",
        "--fs",
        "ext2,xfs",
        "--personality",
        "varmail",
        "--set",
        "personality.level=file",
        "--set",
        "fs.kernel=2.6.35",
        "--dry-run",
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("fs=ext2") && out.contains("fs=xfs"), "{out}");
}

/// `fs` is a sweep axis.
#[test]
fn fs_is_a_sweep_axis() {
    let (code, out, err) = ssdsim(&[
        "sweep",
        "--fs",
        "ext2,ext4",
        "--personality",
        "varmail",
        "--set",
        "personality.level=file",
        "--dry-run",
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("fs=ext2") && out.contains("fs=ext4"), "{out}");
}

/// oltp at file level, as JSON: Filebench's oltp.f on ext4 on a small
/// drive.
fn oltp(limit: &str, extra: &[&str]) -> serde_json::Value {
    let mut args = vec![
        "run",
        "--personality",
        "oltp",
        "--set",
        "personality.level=file",
        "--blocks-per-plane",
        "256",
        "--time-limit",
        limit,
        "--no-power",
        "--format",
        "json",
        "--fs",
        "ext4",
    ];
    args.extend_from_slice(extra);
    let (code, out, err) = ssdsim(&args);
    assert_eq!(code, 0, "{err}");
    serde_json::from_str(&out).unwrap()
}

fn note(v: &serde_json::Value, name: &str) -> f64 {
    num(v, &format!("notes.{name}"))
}

/// Filebench's oltp.f: the semaphores hold the database writers to 100
/// writes per 1,000 shadow reads each and the log writer to one 256 KiB
/// write per 3,200, within the high-water marks; every write is O_DSYNC
/// (written back at once and flushed); the shadows' hog is CPU time on
/// the host's cores, so with a slow clock the shadows run at the cores'
/// rate, cores x GHz / 200,000 cycles.
#[test]
fn oltp_runs_filebenchs_flows() {
    let r = oltp("400ms", &[]);
    let reads = note(&r, "filebench_shadow_reads");
    let writes = note(&r, "filebench_db_writes");
    let logs = note(&r, "filebench_log_writes");
    assert!(reads > 3_000.0, "{reads} shadow reads");
    // 10 writers x 100 writes per 1,000 posts: |writes - posts| <= 2,000
    // (a writer's batch may start once its posts are in; a shadow waits
    // 2,000 posts ahead of the slowest writer).
    assert!(
        (writes - reads).abs() <= 2_000.0,
        "{writes} writes, {reads} reads"
    );
    // posts < 1,000 + 3,200 L and L <= posts / 3,200 + 1.
    assert!(
        logs > (reads - 1_000.0) / 3_200.0 && logs <= reads / 3_200.0 + 1.0,
        "{logs}"
    );
    // O_DSYNC: each database write is one page written back at once and
    // a flush; the log writes 64 pages each. The notes count the calls
    // handed to the page cache, which runs up to 4 x 211 + 64 ahead of
    // their completion: that is the slack.
    let ahead = 4.0 * 211.0 + 64.0;
    let sync_pages = num(&r, "page_cache.writeback.pages_by_reason.sync_write");
    let want = writes + 64.0 * logs;
    assert!(
        sync_pages <= want && sync_pages >= want - ahead - 64.0,
        "{sync_pages} vs {want}"
    );
    let flushes = num(&r, "page_cache.flushes");
    let want = writes + logs;
    assert!(
        flushes <= want && flushes >= want - ahead,
        "{flushes} vs {want}"
    );
    // The shadows' reads hit the cache (the data files were written
    // through it), so the host's CPU work is the hogs': 200,000 cycles
    // at 2.5 GHz per read after a shadow's first, 10,000 per batch after
    // a writer's first.
    let cpu = num(&r, "app.cpu_s");
    let hog = 200_000.0 / 2.5e9;
    assert!(cpu <= reads * hog + writes / 100.0 * 4e-6 + 1e-9, "{cpu}");
    assert!(cpu >= (reads - 200.0 - ahead) * hog, "{cpu}");

    // A 0.1 GHz host: 2 ms per hog, two cores: 1,000 reads/s at most, and
    // the CPU is then the bottleneck. Only the hogs cost CPU here: the
    // cores serve work in the order it was asked for (not CFS's), so the
    // database writers' own per-call CPU would queue behind the shadows'
    // hogs and their semaphores would hold the shadows (see `cpu`).
    let slow = oltp(
        "2s",
        &[
            "--set",
            "cpu.ghz=0.1",
            "--set",
            "cpu.flowop=0",
            "--set",
            "cpu.syscall=0",
            "--set",
            "cpu.submit=0",
        ],
    );
    let t = num(&slow, "app.time_s");
    let rate = note(&slow, "filebench_shadow_reads") / t;
    assert!(rate <= 1_000.0 * 1.01 + 200.0 / t, "{rate} reads/s");
    assert!(rate >= 900.0, "{rate} reads/s");

    // Knobs of the other level are refused, naming the field.
    let (code, _, err) = ssdsim(&[
        "run",
        "--personality",
        "oltp",
        "--set",
        "personality.level=file",
        "--set",
        "personality.hot_fraction=0.1",
        "--time-limit",
        "1ms",
    ]);
    assert_ne!(code, 0);
    assert!(err.contains("personality.hot_fraction"), "{err}");
    let (code, _, err) = ssdsim(&[
        "run",
        "--personality",
        "oltp",
        "--set",
        "personality.db_writers=4",
        "--time-limit",
        "1ms",
    ]);
    assert_ne!(code, 0);
    assert!(err.contains("personality.db_writers"), "{err}");
}

/// Webserver on Sun et al.'s host (two cores at 2.5 GHz, 2 GiB, Linux
/// 2.6.35) is CPU-bound, as real Filebench is there: its 1,000 files are
/// cached, so what bounds it is each flowop's CPU (Filebench's own
/// bookkeeping, the system calls, the copies) on two cores, and the dies
/// are idle. Its IO Summary counts Filebench's flowops: per loop ten
/// openfile, readwholefile and closefile and one appendfilerand, so 31
/// ops of which ten read and one writes; Filebench's own CPU is 9.22 us a
/// flowop.
#[test]
fn webserver_on_suns_host_is_cpu_bound() {
    let (code, out, err) = ssdsim(&[
        "run",
        "--device",
        "sun-ssd-i",
        "--fs",
        "ext3",
        "--personality",
        "webserver",
        "--set",
        "personality.level=file",
        "--set",
        "fs.kernel=2.6.35",
        "--time-limit",
        "500ms",
        "--no-power",
        "--format",
        "json",
    ]);
    assert_eq!(code, 0, "{err}");
    let r: serde_json::Value = serde_json::from_str(&out).unwrap();
    let u = num(&r, "host_cpu.utilisation");
    assert!(u > 0.97 && u < 1.01, "host utilisation {u}");
    let dies = num(&r, "utilization.dies");
    assert!(dies < 0.1, "dies {dies} busy");
    assert!(num(&r, "page_cache.hit_ratio") > 0.999);
    let ops = num(&r, "filebench.io_summary.ops");
    let reads = num(&r, "filebench.io_summary.reads");
    let writes = num(&r, "filebench.io_summary.writes");
    // appendfilerand skips a zero draw (1 in 16,384) and the loops in
    // flight at the end are partial: a few per thread.
    assert!(
        (ops / (reads + writes) - 31.0 / 11.0).abs() < 0.01,
        "{ops} ops, {reads} reads, {writes} writes"
    );
    assert!((reads / writes - 10.0).abs() < 0.5, "{reads} / {writes}");
    let bench = num(&r, "host_cpu.busy_by_work_s.benchmark");
    assert!(
        (bench / (ops * 9.22e-6) - 1.0).abs() < 0.02,
        "benchmark CPU {bench} s for {ops} ops"
    );
    let line = r["filebench"]["io_summary"]["line"].as_str().unwrap();
    assert!(line.starts_with("IO Summary: "), "{line}");
    assert!(line.contains(&format!("{} ops,", ops as u64)), "{line}");
}

/// NILFS2 writes its data only in segctord's constructions, and
/// Filebench's pre-allocated file set reaches the page cache during the
/// run, after the first construction placed its blocks: the timer's next
/// constructions write those pages as they become dirty
/// (`nilfs_segctor_do_construct` collects the dirty buffers it finds).
/// Before, no construction came once the placed blocks were all it had,
/// the file set's pages stayed dirty at the dirty limit, and the run made
/// no flowop at all.
#[test]
fn nilfs2_writes_a_preallocated_file_set_in_its_timer_constructions() {
    let (code, out, err) = ssdsim(&[
        "run",
        "--device",
        "sun-ssd-i",
        "--fs",
        "nilfs2",
        "--personality",
        "fileserver",
        "--set",
        "personality.level=file",
        "--set",
        "personality.requests=1000000000",
        "--set",
        "fs.kernel=2.6.35",
        "--time-limit",
        "30s",
        "--no-power",
        "--format",
        "json",
    ]);
    assert_eq!(code, 0, "{err}");
    let r: serde_json::Value = serde_json::from_str(&out).unwrap();
    let ops = num(&r, "filebench.io_summary.ops");
    assert!(ops > 10_000.0, "{ops} flowops in 30 s");
    let dirty = num(&r, "page_cache.dirty_at_end_bytes") / 4096.0;
    let limit = num(&r, "page_cache.dirty_thresh_pages");
    assert!(
        dirty < limit / 4.0,
        "{dirty} pages dirty at the end, limit {limit}"
    );
    assert!(num(&r, "file_system.commits_timer") > 5.0);
}

/// A file-level run's AI divides Filebench's ops/s (every flowop, the
/// IOPS Sun et al. report) by the mean power, not the read and write
/// calls alone.
#[test]
fn a_filebench_runs_ai_divides_its_ops_per_second() {
    let (code, out, err) = ssdsim(&[
        "run",
        "--fs",
        "ext2",
        "--personality",
        "varmail",
        "--set",
        "personality.level=file",
        "--time-limit",
        "200ms",
        "--format",
        "json",
    ]);
    assert_eq!(code, 0, "{err}");
    let r: serde_json::Value = serde_json::from_str(&out).unwrap();
    let ops = num(&r, "filebench.io_summary.ops_per_s");
    let calls = num(&r, "app.iops");
    let w = num(&r, "power_w.mean");
    let ai = num(&r, "efficiency.ai");
    assert!(
        (ai / (ops / w) - 1.0).abs() < 1e-9,
        "AI {ai}, {ops} ops/s at {w} W"
    );
    // varmail's opens, closes, deletes and fsyncs are flowops too.
    assert!(ops > 2.0 * calls, "{ops} ops/s, {calls} calls/s");
}

/// A user who names a file system beside a personality means its file
/// level: `--fs` runs the personality over that file system, unless
/// `personality.level` is set too.
#[test]
fn fs_runs_a_personality_at_its_file_level() {
    let args = [
        "run",
        "--fs",
        "xfs",
        "--personality",
        "varmail",
        "--time-limit",
        "50ms",
        "--no-power",
        "--format",
        "json",
    ];
    let (code, out, err) = ssdsim(&args);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        v["config"]["personality"]["level"], "file",
        "{}",
        v["config"]
    );
    assert_eq!(v["config"]["fs"]["kind"], "xfs");
    // Said outright, the block level is kept (and a file system is then
    // refused, naming it).
    let mut block = args.to_vec();
    block.extend(["--set", "personality.level=block"]);
    let (code, _, err) = ssdsim(&block);
    assert_eq!(code, 2);
    assert!(err.contains("fs"), "{err}");
}
