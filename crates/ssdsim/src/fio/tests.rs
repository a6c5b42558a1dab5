use super::*;
/// A job leaves `rw`, `iodepth` and `direct` at fio's defaults (read,
/// 1, buffered), not at ssdsim's `[workload]` ones (randread at 32,
/// direct).
#[test]
fn unset_options_take_fios_defaults() {
    let base = WorkloadConfig {
        iodepth: 8,
        rw: RwMode::RandWrite,
        ..WorkloadConfig::default()
    };
    let (w, _) = parse_str("[j]\nsize=1m\n", "t.fio", &base).unwrap();
    assert_eq!((w.rw, w.iodepth, w.direct), (RwMode::Read, 1, false));
}
#[test]
fn parses_a_job() {
    let text = "; comment\n[global]\nioengine=libaio\ndirect=1\n[job1]\nrw=randrw\nrwmixread=70\nbs=8k\niodepth=16\nnumber_ios=1000\nrandom_distribution=zipf:1.1\n";
    let (w, j) = parse_str(text, "t.fio", &WorkloadConfig::default()).unwrap();
    assert_eq!(w.rw, RwMode::RandRw);
    assert_eq!(w.rwmixread, 70);
    assert_eq!(w.bs.0, 8192);
    assert_eq!(w.iodepth, 16);
    assert_eq!(w.number_ios, Some(1000));
    assert_eq!(j.ignored, vec!["ioengine"]);
    assert!(w.direct);
}
#[test]
fn buffered_unless_direct_as_fio() {
    let p = |t: &str| parse_str(t, "t.fio", &WorkloadConfig::default());
    let (w, _) = p("[j]\nrw=write\n").unwrap();
    assert!(!w.direct, "fio's default is direct=0");
    let (w, _) = p("[j]\nrw=write\nbuffered=0\n").unwrap();
    assert!(w.direct);
    let (w, _) = p("[j]\nrw=write\nsync=dsync\nfsync=32\nend_fsync=1\n").unwrap();
    assert!(w.sync && w.fsync == 32 && w.end_fsync && !w.direct);
    let e = p("[j]\nrw=write\ndirect=yes\n").unwrap_err();
    assert!(
        e.to_string().contains("t.fio:3") && e.to_string().contains("direct"),
        "{e}"
    );
    let e = p("[j]\nrw=write\nsync=maybe\n").unwrap_err();
    assert!(e.to_string().contains("sync"), "{e}");
    // What only one of the two paths runs is refused at its line.
    let e = p("[j]\nrw=write\nrate_iops=100\n").unwrap_err();
    assert!(
        e.to_string().contains("t.fio:3") && e.to_string().contains("direct=1"),
        "{e}"
    );
    let e = p("[j]\ndirect=1\nrw=write\nfsync=8\n").unwrap_err();
    assert!(
        e.to_string().contains("t.fio:4") && e.to_string().contains("buffered"),
        "{e}"
    );
    assert!(p("[j]\ndirect=1\nrate_iops=100\nfsync=0\n").is_ok());
}
#[test]
fn ramp_time_values_are_checked() {
    for (ok, ns) in [
        ("5", 5_000_000_000),
        ("1s", 1_000_000_000),
        ("250ms", 250_000_000),
    ] {
        let text = format!("[j]\nrw=read\nramp_time={ok}\n");
        let (_, j) = parse_str(&text, "t.fio", &WorkloadConfig::default()).unwrap();
        assert!(j.ignored.is_empty(), "{:?}", j.ignored);
        assert_eq!(j.ramp_time, Some(ssd_core::Dur(ns)));
    }
    for bad in ["x", "-1", "10x"] {
        let text = format!("[j]\nrw=read\nramp_time={bad}\n");
        let e = parse_str(&text, "t.fio", &WorkloadConfig::default()).unwrap_err();
        assert!(
            e.to_string().contains("t.fio:3") && e.to_string().contains("ramp_time"),
            "{e}"
        );
    }
}
/// fio's time units (`get_mult_time`): bare seconds, us, ms, s, m, h, d.
#[test]
fn fio_times_follow_fio() {
    let s = |t: &str| fio_dur(t).unwrap().0;
    assert_eq!(s("60"), 60_000_000_000);
    assert_eq!(s("1m"), 60_000_000_000);
    assert_eq!(s("1M"), 60_000_000_000);
    assert_eq!(s("2h"), 7_200_000_000_000);
    assert_eq!(s("1d"), 86_400_000_000_000);
    assert_eq!(s("1.5s"), 1_500_000_000);
    assert_eq!(s("250ms"), 250_000_000);
    assert_eq!(s("10msec"), 10_000_000);
    assert_eq!(s("100us"), 100_000);
    assert_eq!(s("100usec"), 100_000);
    for bad in ["1x", "1 furlong", "m", "", "1ns", "99999999999d"] {
        assert!(fio_dur(bad).is_err(), "{bad:?}");
    }
}

/// When a job ends, as fio ends it: after `size` bytes (or `number_ios`,
/// whichever is first) or at `runtime`; with `time_based`, only at
/// `runtime`; ramp_time is lead-in time before the runtime.
#[test]
fn a_job_ends_as_fio_ends_it() {
    // A job as ssdsim runs it on a device of `cap` bytes.
    let end = |t: &str, cap: u64| {
        let (mut w, j) = parse_str(t, "t.fio", &WorkloadConfig::default()).unwrap();
        j.resolve_end(&mut w, cap);
        (w, j)
    };
    let p = |t: &str| parse_str(t, "t.fio", &WorkloadConfig::default()).unwrap();
    // The requests the generator makes of it.
    let ios = |w: &WorkloadConfig, cap: u64| {
        use ssd_core::workload::RequestSource;
        let mut g = ssdsim_host::workload::FioGen::new(w, cap, 1);
        std::iter::from_fn(|| g.next_request()).count() as u64
    };
    let (w, j) = end("[j]\nrw=randwrite\nbs=4k\nsize=64M\nruntime=60\n", 1 << 34);
    assert_eq!(ios(&w, 1 << 34), 1 << 14, "64 MiB of 4 KiB requests");
    assert_eq!(j.time_limit(), Some(ssd_core::Dur(60_000_000_000)));
    let (w, j) = end(
        "[j]\nrw=randwrite\nbs=4k\nsize=1G\nruntime=60\ntime_based\n",
        1 << 34,
    );
    assert_eq!(w.number_ios, Some(i64::MAX as u64), "loops until runtime");
    assert!(j.time_based);
    assert_eq!(j.time_limit(), Some(ssd_core::Dur(60_000_000_000)));
    let (w, _) = end("[j]\nbs=4k\nsize=1M\nnumber_ios=10\n", 1 << 34);
    assert_eq!(ios(&w, 1 << 34), 10, "number_ios ends it first");
    let (w, _) = end("[j]\nbs=4k\nsize=1M\nnumber_ios=1000\n", 1 << 34);
    assert_eq!(ios(&w, 1 << 34), 256, "size ends it first");
    // No size: one pass over the device from the offset (or number_ios,
    // if fewer).
    let (w, _) = end("[j]\nbs=4k\noffset=512k\n", 1 << 20);
    assert_eq!(ios(&w, 1 << 20), 128);
    let (w, _) = end("[j]\nbs=4k\nnumber_ios=1000000\n", 1 << 20);
    assert_eq!(ios(&w, 1 << 20), 256);
    // loops, io_size, a percentage offset and size, a part-block end.
    for (job, n) in [
        ("rw=randwrite\nsize=64k\nloops=3", 48),
        ("rw=write\nsize=64k\nio_size=100k", 25),
        ("rw=write\nsize=10k", 2),
        ("rw=write\nsize=8k\nio_size=10k", 2),
        ("rw=randwrite\noffset=50%\nsize=25%", 64),
        ("rw=randwrite\nsize=64k\nio_size=256k", 64),
    ] {
        let (w, _) = end(&format!("[j]\nbs=4k\n{job}\n"), 1 << 20);
        assert_eq!(ios(&w, 1 << 20), n, "{job}");
    }
    // The base's request count is not the job's.
    let base = WorkloadConfig {
        number_ios: Some(7),
        ..Default::default()
    };
    let (mut w, j) = parse_str("[j]\nbs=4k\nsize=64k\n", "t.fio", &base).unwrap();
    j.resolve_end(&mut w, 1 << 30);
    assert_eq!(ios(&w, 1 << 30), 16);
    // Ramp: lead-in time.
    let (_, j) = p("[j]\nruntime=1m\nramp_time=10s\ntime_based=1\n");
    assert_eq!(j.time_limit(), Some(ssd_core::Dur(70_000_000_000)));
    let (_, j) = p("[j]\ntimeout=2h\n");
    assert_eq!(j.runtime, Some(ssd_core::Dur(7_200_000_000_000)));
    // time_based without a runtime means nothing in fio: ignored, with
    // a note.
    let (_, j) = parse_str(
        "[j]\nrw=read\ntime_based\n",
        "t.fio",
        &WorkloadConfig::default(),
    )
    .unwrap();
    assert!(!j.time_based);
    assert!(
        j.ignored.iter().any(|i| i.starts_with("time_based")),
        "{j:?}"
    );
}

#[test]
fn names_unsupported_option_and_line() {
    let e = parse_str(
        "[j]\nrw=read\nverify_only=1\n",
        "t.fio",
        &WorkloadConfig::default(),
    )
    .unwrap_err();
    assert_eq!(e.line, 3);
    assert!(
        e.to_string().contains("t.fio:3") && e.to_string().contains("verify_only"),
        "{e}"
    );
}
#[test]
fn sizes_follow_fio() {
    let k = |t: &str| fio_size(t, 1024).unwrap().0;
    for t in ["4k", "4K", "4kb", "4KB", "4Kb", "4096", "4096b"] {
        assert_eq!(k(t), 4096, "{t}");
    }
    assert_eq!(k("1gb"), 1 << 30);
    assert_eq!(k("1g"), 1 << 30);
    assert_eq!(k("2m"), 2 << 20);
    // fio's compatibility mode: IEC suffixes are decimal by default.
    assert_eq!(k("4KiB"), 4000);
    assert_eq!(k("1gib"), 1_000_000_000);
    let d = |t: &str| fio_size(t, 1000).unwrap().0;
    assert_eq!(d("4k"), 4000);
    assert_eq!(d("4KiB"), 4096);
    assert_eq!(d("1gb"), 1_000_000_000);
    assert!(fio_size("4 furlongs", 1024).is_err());
    assert!(fio_size("99999999999p", 1024).is_err());
}
/// Found by fuzzing (fio_job): options the configuration refuses later
/// (without the file and line) are refused by the parser, at their line.
#[test]
fn values_the_config_refuses_are_refused_at_their_line() {
    for (opt, what) in [
        ("bs=4", "multiple of 512"),
        ("bs=0", "multiple of 512"),
        ("blocksize=4t", "multiple of 512"),
        ("rate_iops=0", "positive"),
        (
            "rate_iops=9223372036854775808",
            "from 0 to 9223372036854775807",
        ),
        ("randseed=18446744073709551615", "from 0 to"),
        ("offset=100", "multiple of 512"),
        ("size=0", "positive"),
        ("runtime=0", "positive"),
        ("runtime=0ms", "positive"),
    ] {
        let e = parse_str(
            &format!("[j]\nrw=read\n{opt}\n"),
            "t.fio",
            &WorkloadConfig::default(),
        )
        .unwrap_err();
        assert_eq!(e.line, 3, "{opt}: {e}");
        assert!(e.reason.contains(what), "{opt}: {e}");
    }
    // Sizes are exact, not rounded through f64.
    assert_eq!(fio_size("1.1k", 1000).unwrap().0, 1100);
    assert_eq!(
        fio_size("9223372036854775807", 1024).unwrap().0,
        i64::MAX as u64
    );
}
#[test]
fn kb_base_and_sizes_in_a_job() {
    let (w, _) = parse_str(
        "[j]\nbs=4kb\nsize=1gb\n",
        "t.fio",
        &WorkloadConfig::default(),
    )
    .unwrap();
    assert_eq!((w.bs.0, w.size.unwrap().0), (4096, 1 << 30));
    // kb_base anywhere in the job applies to all its sizes.
    let (w, _) = parse_str(
        "[global]\nbs=8KiB\n[j]\nsize=1gb\nkb_base=1000\n",
        "t.fio",
        &WorkloadConfig::default(),
    )
    .unwrap();
    assert_eq!((w.bs.0, w.size.unwrap().0), (8192, 1_000_000_000));
    let e = parse_str("[j]\nkb_base=512\n", "t.fio", &WorkloadConfig::default()).unwrap_err();
    assert!(e.to_string().contains("t.fio:2: kb_base"), "{e}");
}
/// fio's zone options as `fixup_options` takes them: strided zones
/// need `zonemode=strided` (its default is none, which a zonesize
/// contradicts), zonerange defaults to zonesize, several files turn
/// them off; zbd's zonesize is the zone's size.
#[test]
fn zone_options_are_read_as_fio_reads_them() {
    let p = |t: &str| parse_str(t, "t.fio", &WorkloadConfig::default());
    let (w, _) = p("[j]\nrw=read\nzonemode=strided\nzonesize=256m\nzoneskip=2g\n").unwrap();
    assert_eq!(
        (w.zonesize.0, w.zone_range(), w.zoneskip.0),
        (256 << 20, 256 << 20, 2 << 30)
    );
    let e = p("[j]\nrw=read\nzonesize=1m\n").unwrap_err().to_string();
    assert!(
        e.contains("t.fio:3: zonesize needs zonemode=strided"),
        "{e}"
    );
    let e = p("[j]\nzonemode=strided\n").unwrap_err().to_string();
    assert!(
        e.contains("t.fio:2: zonemode=strided needs zonesize"),
        "{e}"
    );
    // zbd: zonesize is the zone's size, kept apart from strided zones;
    // sizes in zones wait for the zone size; writes must be direct.
    let (w, j) = p(
        "[j]\nrw=write\ndirect=1\nzonemode=zbd\nzonesize=1m\nmax_open_zones=3\n\
                    zone_reset_threshold=0.5\noffset=2z\nsize=4z\n",
    )
    .unwrap();
    let z = w.zbd.as_ref().unwrap();
    assert_eq!((z.zonesize.0, z.max_open_zones), (1 << 20, 3));
    assert_eq!((w.zonesize.0, z.zone_reset_threshold), (0, 0.5));
    assert_eq!(j.in_zones, [Some(2), Some(4), None, None]);
    let e = p("[j]\nrw=write\nzonemode=zbd\n").unwrap_err().to_string();
    assert!(
        e.contains("t.fio:3: zonemode=zbd: writing to a zoned device needs direct=1"),
        "{e}"
    );
    let e = p("[j]\nzone_reset_threshold=2\n").unwrap_err().to_string();
    assert!(e.contains("a number from 0 to 1"), "{e}");
    let (_, j) = p("[j]\nread_beyond_wp=1\n").unwrap();
    assert!(
        j.ignored.iter().any(|i| i.contains("without zonemode=zbd")),
        "{:?}",
        j.ignored
    );
    let e = p("[j]\nzonemode=strided\nzonesize=1m\nzoneskip=2z\n").unwrap_err();
    assert!(e.to_string().contains("zoneskip: a count of zones"), "{e}");
    let (w, j) = p("[j]\nzonemode=strided\nzonesize=1m\nnrfiles=2\n").unwrap();
    assert_eq!(w.zonesize.0, 0);
    assert!(
        j.ignored.iter().any(|i| i.starts_with("zonesize")),
        "{:?}",
        j.ignored
    );
    // A job's mix runs by fio's direction cycle; `[workload]`'s does not.
    assert!(p("[j]\nrw=randrw\n").unwrap().0.rwmix_cycle);
    assert!(!WorkloadConfig::default().rwmix_cycle);
}
#[test]
fn a_global_after_the_job_does_not_apply_to_it() {
    let (w, _) = parse_str(
        "[global]\nbs=8k\n[j]\nrw=randread\n[global]\nbs=64k\niodepth=4\n",
        "t.fio",
        &WorkloadConfig::default(),
    )
    .unwrap();
    assert_eq!(w.bs.0, 8192);
    // fio's own default, not the global after the job.
    assert_eq!(w.iodepth, 1);
    // ... but its options are still checked.
    let e = parse_str(
        "[j]\nrw=read\n[global]\nverify_only=1\n",
        "t.fio",
        &WorkloadConfig::default(),
    )
    .unwrap_err();
    assert_eq!(e.line, 4);
}
/// fio's forms of sizes by direction, splits, holes, percentages and
/// comments, and the reasons given for what is refused.
#[test]
fn options_that_shape_the_io_read_as_fio_reads_them() {
    let p = |t: &str| {
        parse_str(&format!("[j]\n{t}\n"), "t.fio", &WorkloadConfig::default()).map(|(w, _)| w)
    };
    let w = p("bs=8k,32k").unwrap();
    assert_eq!(
        w.block_sizes.unwrap().to_string(),
        "8192,32768,32768",
        "a value not ended by a comma applies to the directions after it"
    );
    let w = p("bs=8k,32k,").unwrap();
    assert_eq!(w.block_sizes.unwrap().to_string(), "8192,32768,4096");
    assert_eq!(
        bssplit("4k/50:1k/:32k/", 1024).unwrap(),
        BsDraw::Split(vec![(4096, 50), (1024, 25), (32768, 25)])
    );
    assert!(bssplit("4k/60:8k/50", 1024).is_err());
    let w = p("bsrange=4k-16k").unwrap();
    assert_eq!(
        w.block_sizes.unwrap().0[1],
        BsDraw::Range {
            min: 4096,
            max: 16384
        }
    );
    let w = p("rw=write:8k").unwrap();
    assert_eq!((w.rw, w.ddir_seq_add.0), (RwMode::Write, 8192));
    let w = p("rw=randread:8").unwrap();
    assert_eq!((w.rw, w.ddir_seq_nr), (RwMode::RandRead, 8));
    let w = p("rw=randwrite # a comment\nbs=4k ; another").unwrap();
    assert_eq!((w.rw, w.bs.0), (RwMode::RandWrite, 4096));
    assert!(!w.norandommap, "fio keeps its random map by default");
    assert!(p("norandommap").unwrap().norandommap);
    let w = p("rate=8m\nbs=4k\ndirect=1").unwrap();
    assert_eq!(w.rate_iops, Some(2048));
    let (_, j) = parse_str(
        "[j]\noffset=10%\nsize=50%\n",
        "t.fio",
        &WorkloadConfig::default(),
    )
    .unwrap();
    assert_eq!((j.offset_percent, j.size_percent), (Some(10), Some(50)));
    for (opt, why) in [
        ("thinktime=10", "direct closed-loop"),
        ("filesize=1m-2m", "range"),
        ("write_zone_remainders=1", "remainders"),
        ("verify_backlog=16", "interleaved"),
        ("ioengine=net", "network socket"),
        (
            "rw=${SSDSIM_SURELY_UNSET_VAR}",
            "not set in the environment",
        ),
    ] {
        let e = p(opt).unwrap_err();
        assert_eq!(e.line, 2, "{opt}");
        assert!(e.reason.contains(why), "{opt}: {e}");
    }
    // Host-only options, even with an unset variable, change nothing.
    let (_, j) = parse_str(
        "[j]\nioengine=libaio\ndirectory=${SSDSIM_SURELY_UNSET_VAR}\nthread\n",
        "t.fio",
        &WorkloadConfig::default(),
    )
    .unwrap();
    assert_eq!(j.ignored, ["ioengine", "directory", "thread"]);
}

/// A job that ends by its size echoes as a configuration that runs the
/// same job: `number_ios = 0` is fio's "no count".
#[test]
fn a_job_ending_by_its_size_echoes_as_itself() {
    let (mut w, j) = parse_str(
        "[j]\nrw=randwrite\nsize=1m\nbsrange=4k-16k\nnrfiles=2\n",
        "t.fio",
        &WorkloadConfig::default(),
    )
    .unwrap();
    j.resolve_end(&mut w, 1 << 30);
    assert_eq!(w.number_ios, None);
    let cfg = ssdsim_host::config::SsdConfig {
        workload: w.clone(),
        ..Default::default()
    };
    let t = cfg.to_toml();
    assert!(t.contains("number_ios = 0"), "{t}");
    let back = ssdsim_host::config::SsdConfig::from_toml_over(None, &t, "echo").unwrap();
    assert_eq!(back.workload, w);
}

/// docs/fio.md lists every option the parser knows, with what it does.
#[test]
fn the_fio_page_lists_every_option() {
    let doc = include_str!("../../../../docs/fio.md");
    let names = SUPPORTED
        .iter()
        .chain(HOST_ONLY)
        .chain(REFUSED.iter().map(|r| &r.0))
        .chain(NO_BLOCK_IO.iter().map(|r| &r.0));
    for n in names {
        assert!(
            doc.contains(&format!("`{n}`")),
            "docs/fio.md does not list {n}"
        );
    }
}

#[test]
fn a_huge_option_is_quoted_short() {
    let text = format!(
        "[j]\n{}=1\niodepth={}\n",
        "x".repeat(1 << 20),
        "9".repeat(10)
    );
    let e = parse_str(&text, "t.fio", &WorkloadConfig::default()).unwrap_err();
    assert!(e.to_string().len() < 1000 && e.to_string().contains("bytes in all"));
    let text = format!("[j]\niodepth={}\n", "z".repeat(1 << 20));
    let e = parse_str(&text, "t.fio", &WorkloadConfig::default()).unwrap_err();
    assert!(e.to_string().len() < 1000, "{}", e.to_string().len());
    // Found by fuzzing (fio_job): values of the other options were quoted
    // whole (a runtime's unit error quoted it twice).
    let long = "\u{1f}".repeat(1 << 16);
    for opt in [
        "runtime=1",
        "bs=4",
        "bs=4,",
        "rw=",
        "rate_process=",
        "kb_base=",
        "random_distribution=",
        "random_distribution=zipf:",
    ] {
        let text = format!("[j]\n{opt}{long}\n");
        let e = parse_str(&text, "t.fio", &WorkloadConfig::default()).unwrap_err();
        // 200 bytes quoted (escaping widens them), never the whole value.
        assert!(e.to_string().len() < 3000, "{opt}: {}", e.to_string().len());
    }
    let text = format!("[a]\n[b{long}]\n");
    let e = parse_str(&text, "t.fio", &WorkloadConfig::default()).unwrap_err();
    assert!(e.to_string().len() < 2000, "{}", e.to_string().len());
}

#[test]
fn a_size_option_without_a_size_is_refused_as_fio_refuses_it() {
    // fio: "failed parsing bs=" for `bs=` and `bs=,`; an empty direction
    // beside a given one keeps its default (`bs=,8k`, `bs=4k,`).
    let p = |bs: &str| {
        parse_str(
            &format!("[j]\ndirect=1\nrw=randrw\nbs={bs}\n"),
            "t.fio",
            &WorkloadConfig::default(),
        )
    };
    for bad in ["", " ", ","] {
        let e = p(bad).unwrap_err().to_string();
        assert!(e.contains("t.fio:4") && e.contains("bs"), "{bad:?}: {e}");
    }
    for good in [",8k", "4k,"] {
        p(good).unwrap();
    }
    let e = p("-").unwrap_err().to_string();
    assert!(e.contains("t.fio:4"), "{e}");
    // fio takes an empty bssplit and keeps its sizes: so does the job,
    // saying so.
    let (_, job) = parse_str(
        "[j]\ndirect=1\nrw=randrw\nbssplit=\n",
        "t.fio",
        &WorkloadConfig::default(),
    )
    .unwrap();
    assert!(job.ignored.iter().any(|i| i.contains("bssplit")));
}
