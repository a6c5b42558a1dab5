//! Tests of `sweep`.

use super::*;

/// `plan` resolves a sweep as `ssdsim sweep` does: the standard workload
/// set and steady-state preconditioning when nothing names them, a flag's
/// axis over the grid file's, and a grid file keeps its base's
/// preconditioning.
#[test]
fn plan_resolves_as_the_sweep_command() {
    let p = plan(SweepSpec {
        flags: vec![("ftl".into(), "page,dftl".into())],
        ..SweepSpec::default()
    })
    .unwrap();
    assert_eq!(p.axes[0].values, ["page", "dftl"]);
    assert_eq!(p.axes[1].key, "workload");
    assert_eq!(p.axes[1].values.len(), standard_workloads().len());
    assert_eq!(
        p.base.sim.precondition,
        ssdsim_host::config::Precondition::Steady
    );
    assert_eq!(p.grid().len(), 2 * standard_workloads().len());

    let gf = GridFile::parse_str(
        "[base]\nworkload.number_ios = 10\n[grid]\nftl = [\"page\", \"fast\"]\nrw = [\"randread\"]\n",
        "g.toml",
    )
    .unwrap();
    let p = plan(SweepSpec {
        grid: Some((gf, "g.toml".into())),
        flags: vec![("ftl".into(), "dftl".into())],
        set: vec![("ftl.op".into(), "0.2".into())],
        ..SweepSpec::default()
    })
    .unwrap();
    let keys: Vec<&str> = p.axes.iter().map(|a| a.key.as_str()).collect();
    assert_eq!(keys, ["rw", "ftl"]);
    assert_eq!(p.axes[1].values, ["dftl"]);
    assert_eq!(p.base.workload.number_ios, Some(10));
    assert_eq!(
        p.base.sim.precondition,
        SsdConfig::default().sim.precondition
    );
    let point = p.grid().point(0);
    assert_eq!(point.cfg.unwrap().ftl.op, 0.2);
    assert!(plan(SweepSpec {
        flags: vec![("ftl".into(), " , ".into())],
        ..SweepSpec::default()
    })
    .is_err());
}

/// `[base]` and `[grid]` each take a setting both as a quoted dotted key
/// and as TOML's own dotted key or nested table, and mean the same by them.
#[test]
fn grid_files_take_dotted_keys_either_way() {
    let quoted: GridFile = toml::from_str(
        "[base]\n\"ftl.op\" = 0.28\n\"nand.blocks_per_plane\" = 64\n\
         [grid]\n\"ftl.gc_policy\" = [\"greedy\", \"fifo\"]\n",
    )
    .unwrap();
    let nested: GridFile = toml::from_str(
        "[base]\nftl.op = 0.28\n[base.nand]\nblocks_per_plane = 64\n\
         [grid]\nftl.gc_policy = [\"greedy\", \"fifo\"]\n",
    )
    .unwrap();
    let p = Path::new("g.toml");
    for g in [&quoted, &nested] {
        let b = g.base_nested().unwrap();
        assert_eq!(b["ftl"]["op"].as_float(), Some(0.28));
        assert_eq!(b["nand"]["blocks_per_plane"].as_integer(), Some(64));
        let axes = g.axes(p).unwrap();
        assert_eq!(axes.len(), 1);
        assert_eq!(axes[0].key, "ftl.gc_policy");
        assert_eq!(axes[0].values, vec!["greedy", "fifo"]);
    }
}

fn axes(sizes: &[usize]) -> Vec<Axis> {
    let keys = ["seed", "randseed", "ftl", "op", "number_ios"];
    sizes
        .iter()
        .enumerate()
        .map(|(k, &n)| Axis {
            key: keys[k].to_string(),
            values: (0..n)
                .map(|v| match keys[k] {
                    "ftl" => ["page", "dftl", "nosuch"][v % 3].to_string(),
                    "op" => format!("0.{}", 10 + v),
                    _ => (v + 1).to_string(),
                })
                .collect(),
        })
        .collect()
}

/// The lazy grid gives, point by point, what expanding it whole gives
/// (parameters, configuration or its error, identity, size), and its
/// shards are those of the expanded points.
#[test]
fn the_lazy_grid_is_the_expanded_grid() {
    let base = SsdConfig::default();
    let common = vec![("number_ios".to_string(), "10".to_string())];
    for sizes in [&[][..], &[1], &[3], &[2, 3], &[3, 1, 2], &[2, 2, 3, 2]] {
        let ax = axes(sizes);
        let all = expand(&base, &ax, &common, &BTreeMap::new());
        let g = Grid::new(&base, &ax, &common, &BTreeMap::new());
        assert_eq!(g.len(), all.len());
        assert_eq!(g.len(), grid_size(&ax).unwrap());
        for p in &all {
            let q = g.point(p.index);
            assert_eq!(q.params, p.params);
            assert_eq!((&q.sweep, q.points), (&p.sweep, p.points));
            assert_eq!(g.identity(), p.sweep);
            match (&q.cfg, &p.cfg) {
                (Ok(a), Ok(b)) => assert_eq!(a.to_toml(), b.to_toml()),
                (Err(a), Err(b)) => assert_eq!(a, b),
                (a, b) => panic!("{:?} vs {:?}", a.is_ok(), b.is_ok()),
            }
        }
        for n in 1..=all.len() + 2 {
            for i in 0..n {
                let want: Vec<usize> = shard(all.clone(), i, n).iter().map(|p| p.index).collect();
                let got: Vec<usize> = g.shard_indices(i, n).collect();
                assert_eq!(got, want, "shard {i}/{n} of {sizes:?}");
                assert_eq!(g.shard_len(i, n), want.len());
            }
        }
    }
}

/// A grid is bounded as a whole (it may be sharded) and each process's
/// share of it on its own; neither overflows.
#[test]
fn grid_and_shard_sizes_are_bounded() {
    let ax = axes(&[1000, 1000]);
    assert_eq!(grid_size(&ax), Ok(1_000_000));
    assert!(grid_size(&axes(&[1000, 1001])).is_err());
    let e = grid_size(&axes(&[1 << 20, 1 << 20, 1 << 20, 1 << 20])).unwrap_err();
    assert!(e.contains("more than 2^64"), "{e}");
    let e = check_shard_size(&ax, 1_000_000, 0, 1).unwrap_err();
    assert!(e.contains("10 or more shards"), "{e}");
    let e = check_shard_size(&ax, 1_000_000, 3, 9).unwrap_err();
    assert!(e.contains("--shard 3/9") && e.contains("111111"), "{e}");
    assert!(check_shard_size(&ax, 1_000_000, 9, 10).is_ok());
    assert!(check_shard_size(&ax, 100_000, 0, 1).is_ok());
    assert!(check_shard_size(&ax, 100_001, 0, 1).is_err());
    let g = Grid::new(&SsdConfig::default(), &ax, &[], &BTreeMap::new());
    assert_eq!(g.shard_len(7, 10), 100_000);
    assert_eq!(g.point(999_999).params[0].1, "1000");
    assert_eq!(
        g.shard_indices(999_999, 1_000_000).collect::<Vec<_>>(),
        vec![999_999]
    );
}

/// A point's keys are set by echoing and reading back their section
/// only, not the whole configuration written out as TOML text and
/// parsed again per key (which made `sweep --dry-run` of a million
/// points take minutes): a valid grid's points echo no whole
/// configuration; a bad value does, for the message it always had.
#[test]
fn a_points_keys_do_not_echo_the_whole_configuration() {
    let ax = |k: &str, v: &[&str]| Axis {
        key: k.into(),
        values: v.iter().map(|s| s.to_string()).collect(),
    };
    let common = [("sim.time_limit".to_string(), "1s".to_string())];
    let g = Grid::new(
        &SsdConfig::default(),
        &[
            ax("ftl.op", &["0.07", "0.125", "0.25"]),
            ax("workload.iodepth", &["1", "4", "32"]),
            ax("workload.rw", &["randread", "randwrite"]),
        ],
        &common,
        &BTreeMap::new(),
    );
    let before = crate::set_field_whole_echoes();
    for i in 0..g.len() {
        let p = g.point(i);
        assert!(p.cfg.is_ok(), "{:?}: {:?}", p.params, p.cfg.err());
    }
    assert_eq!(crate::set_field_whole_echoes(), before);
    let c = g.point(g.len() - 1).cfg.unwrap();
    assert_eq!((c.ftl.op, c.workload.iodepth), (0.25, 32));
    let bad = Grid::new(
        &SsdConfig::default(),
        &[ax("ftl.op", &["lots"]), ax("ftl.opp", &["1"])],
        &[],
        &BTreeMap::new(),
    );
    let e = bad.point(0).cfg.unwrap_err();
    assert!(e.starts_with("ftl.op: ") && !e.contains("unknown"), "{e}");
    assert_eq!(crate::set_field_whole_echoes(), before + 1);
}

fn env<'a>(vars: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
    move |k| {
        vars.iter()
            .find(|(n, _)| *n == k)
            .map(|(_, v)| v.to_string())
    }
}

#[test]
fn shard_auto_reads_slurm_arrays() {
    let got = |v: &[(&str, &str)]| shard_from_env(env(v)).map(|(i, n, _)| (i, n));
    // --array=0-3: ID with COUNT (and MIN/MAX, consistent).
    assert_eq!(
        got(&[
            ("SLURM_ARRAY_TASK_ID", "2"),
            ("SLURM_ARRAY_TASK_COUNT", "4")
        ]),
        Ok((2, 4))
    );
    assert_eq!(
        got(&[
            ("SLURM_ARRAY_TASK_ID", "3"),
            ("SLURM_ARRAY_TASK_COUNT", "4"),
            ("SLURM_ARRAY_TASK_MIN", "0"),
            ("SLURM_ARRAY_TASK_MAX", "3"),
            ("SLURM_ARRAY_TASK_STEP", "1"),
        ]),
        Ok((3, 4))
    );
    // --array=1-4: index = ID - MIN, with or without COUNT.
    assert_eq!(
        got(&[
            ("SLURM_ARRAY_TASK_ID", "1"),
            ("SLURM_ARRAY_TASK_COUNT", "4"),
            ("SLURM_ARRAY_TASK_MIN", "1"),
            ("SLURM_ARRAY_TASK_MAX", "4"),
        ]),
        Ok((0, 4))
    );
    assert_eq!(
        got(&[
            ("SLURM_ARRAY_TASK_ID", "7"),
            ("SLURM_ARRAY_TASK_MIN", "5"),
            ("SLURM_ARRAY_TASK_MAX", "8"),
        ]),
        Ok((2, 4))
    );
    let (_, _, from) = shard_from_env(env(&[
        ("SLURM_ARRAY_TASK_ID", "0"),
        ("SLURM_ARRAY_TASK_COUNT", "1"),
    ]))
    .unwrap();
    assert!(from.contains("SLURM_ARRAY_TASK_COUNT"));
}

#[test]
fn shard_auto_reads_kubernetes_indexed_jobs() {
    let got = |v: &[(&str, &str)]| shard_from_env(env(v)).map(|(i, n, _)| (i, n));
    assert_eq!(
        got(&[("JOB_COMPLETION_INDEX", "5"), (SHARD_COUNT_VAR, "8")]),
        Ok((5, 8))
    );
    let e = got(&[("JOB_COMPLETION_INDEX", "5")]).unwrap_err();
    assert!(
        e.contains(SHARD_COUNT_VAR) && e.contains(".spec.completions") && e.contains("--shard 5/N"),
        "{e}"
    );
}

#[test]
fn shard_auto_refuses_what_it_cannot_number() {
    let e = |v: &[(&str, &str)]| shard_from_env(env(v)).unwrap_err();
    let cases: Vec<(Vec<(&str, &str)>, &str)> = vec![
        (vec![], "no array task in the environment"),
        (
            vec![("SLURM_ARRAY_TASK_ID", "1")],
            "the number of shards is unknown",
        ),
        (
            vec![
                ("SLURM_ARRAY_TASK_ID", "x"),
                ("SLURM_ARRAY_TASK_COUNT", "4"),
            ],
            "SLURM_ARRAY_TASK_ID=\"x\" is not a non-negative integer",
        ),
        (
            vec![
                ("SLURM_ARRAY_TASK_ID", "4"),
                ("SLURM_ARRAY_TASK_COUNT", "4"),
            ],
            "not a shard",
        ),
        (
            vec![
                ("SLURM_ARRAY_TASK_ID", "0"),
                ("SLURM_ARRAY_TASK_COUNT", "0"),
            ],
            "not a shard",
        ),
        // --array=0-6:2: ids 0, 2, 4, 6.
        (
            vec![
                ("SLURM_ARRAY_TASK_ID", "2"),
                ("SLURM_ARRAY_TASK_COUNT", "4"),
                ("SLURM_ARRAY_TASK_MIN", "0"),
                ("SLURM_ARRAY_TASK_MAX", "6"),
                ("SLURM_ARRAY_TASK_STEP", "2"),
            ],
            "SLURM_ARRAY_TASK_STEP=2",
        ),
        // --array=1,5,9: COUNT disagrees with MIN..MAX.
        (
            vec![
                ("SLURM_ARRAY_TASK_ID", "5"),
                ("SLURM_ARRAY_TASK_COUNT", "3"),
                ("SLURM_ARRAY_TASK_MIN", "1"),
                ("SLURM_ARRAY_TASK_MAX", "9"),
            ],
            "not one contiguous range",
        ),
        (
            vec![
                ("SLURM_ARRAY_TASK_ID", "9"),
                ("SLURM_ARRAY_TASK_MIN", "1"),
                ("SLURM_ARRAY_TASK_MAX", "4"),
            ],
            "outside SLURM_ARRAY_TASK_MIN..MAX",
        ),
        (
            vec![
                ("SLURM_ARRAY_TASK_ID", "1"),
                ("SLURM_ARRAY_TASK_MIN", "4"),
                ("SLURM_ARRAY_TASK_MAX", "1"),
            ],
            "above SLURM_ARRAY_TASK_MAX",
        ),
        (
            vec![
                ("SLURM_ARRAY_TASK_ID", "0"),
                ("SLURM_ARRAY_TASK_COUNT", "4"),
                ("SLURM_ARRAY_TASK_MIN", "2"),
            ],
            "below SLURM_ARRAY_TASK_MIN",
        ),
        (
            vec![("JOB_COMPLETION_INDEX", "8"), (SHARD_COUNT_VAR, "8")],
            "not below SSDSIM_SHARD_COUNT=8",
        ),
        (
            vec![("JOB_COMPLETION_INDEX", "1"), (SHARD_COUNT_VAR, "many")],
            "SSDSIM_SHARD_COUNT=\"many\"",
        ),
        (
            vec![
                ("JOB_COMPLETION_INDEX", "1"),
                ("SLURM_ARRAY_TASK_ID", "1"),
                ("SLURM_ARRAY_TASK_COUNT", "4"),
            ],
            "ambiguous",
        ),
    ];
    for (v, want) in cases {
        let got = e(&v);
        assert!(got.contains(want), "{v:?}: {want:?} not in {got:?}");
    }
}

/// A finished row of point `index` with `params`, its preconditioning and
/// its WAF (`None`: the point wrote nothing).
fn row(index: usize, params: &[(&str, &str)], precondition: &str, waf: Option<f64>) -> Row {
    let mut r = run_point(
        &Point {
            index,
            params: params
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            cfg: Err("not run".into()),
            sweep: "s".into(),
            points: 4,
        },
        &RunOptions::default(),
    );
    r.error = None;
    r.precondition = precondition.into();
    r.iops = 1000.0 + index as f64;
    r.waf = waf;
    r
}

/// A point that wrote nothing has no WAF: `null` in JSONL, an empty CSV
/// cell, `n/a` in the tables; rows of an older ssdsim (a number) still read.
#[test]
fn a_read_only_point_has_no_waf() {
    let rows = vec![
        row(0, &[("ftl", "page"), ("rw", "randread")], "steady", None),
        row(
            1,
            &[("ftl", "page"), ("rw", "randwrite")],
            "steady",
            Some(2.5),
        ),
    ];
    let json = serde_json::to_value(&rows[0]).unwrap();
    assert!(json["waf"].is_null(), "{json}");
    let back: Row = serde_json::from_value(json).unwrap();
    assert_eq!(back.waf, None);
    let mut old = serde_json::to_value(&rows[1]).unwrap();
    old["waf"] = serde_json::json!(0.0);
    assert_eq!(serde_json::from_value::<Row>(old).unwrap().waf, Some(0.0));
    let (h, body) = columns(&rows);
    let w = h.iter().position(|c| c == "waf").unwrap();
    assert_eq!(body[0][w], "");
    assert_eq!(body[1][w], "2.5000");
    let md = markdown(&rows);
    assert!(md.contains("| n/a |") && md.contains("| 2.5000 |"), "{md}");
    let t = table(&rows);
    let line = t.lines().find(|l| l.contains("randread")).unwrap();
    let cells: Vec<&str> = line.split_whitespace().collect();
    let at = t
        .lines()
        .nth(1)
        .unwrap()
        .split_whitespace()
        .position(|c| c == "waf");
    assert_eq!(cells[at.unwrap()], "n/a", "{t}");
    let m = chart_metrics(&rows.iter().collect::<Vec<_>>());
    let waf = m.iter().find(|m| m.name == "waf").unwrap();
    assert_eq!(
        ((waf.get)(&rows[0]), (waf.get)(&rows[1])),
        (None, Some(2.5))
    );
}

/// What every row has alike (an axis of one value, the preconditioning) is
/// stated once above the tables, not as a column or in the labels; a
/// preconditioning axis is one column, not two; a workload's label drops
/// the overrides its own columns show.
#[test]
fn the_tables_state_once_what_every_row_has() {
    let rows: Vec<Row> = (0..4)
        .map(|i| {
            let ftl = ["page", "dftl"][i / 2];
            let rw = ["randread", "randwrite"][i % 2];
            row(
                i,
                &[("ftl", ftl), ("number_ios", "300"), ("rw", rw)],
                "steady",
                None,
            )
        })
        .collect();
    let l = Layout::of(&rows);
    assert_eq!(l.keys(), ["ftl", "rw"]);
    assert_eq!(l.fixed_line(), "fixed: number_ios=300, precondition=steady");
    assert_eq!(l.label(&rows[1]), "page/randwrite");
    let t = table(&rows);
    let mut lines = t.lines();
    assert_eq!(
        lines.next().unwrap(),
        "fixed: number_ios=300, precondition=steady"
    );
    let head: Vec<&str> = lines.next().unwrap().split_whitespace().collect();
    assert_eq!(&head[..3], ["ftl", "rw", "iops"], "{t}");
    let md = markdown(&rows);
    assert!(
        md.starts_with("fixed: number_ios=300, precondition=steady\n\n| index | ftl | rw | iops |"),
        "{md}"
    );
    // The CSV keeps every column, each once.
    let (h, _) = columns(&rows);
    assert_eq!(
        &h[..5],
        ["index", "ftl", "number_ios", "rw", "precondition"]
    );

    // A preconditioning axis: its column, not the metric's again.
    let rows: Vec<Row> = (0..4)
        .map(|i| {
            let p = ["fill", "steady"][i % 2];
            let w = ["rand-read (precondition=fill)", "rand-read"][i % 2];
            let ftl = ["page", "dftl"][i / 2];
            row(
                i,
                &[("ftl", ftl), ("precondition", p), ("workload", w)],
                p,
                Some(1.0),
            )
        })
        .collect();
    let (h, _) = columns(&rows);
    assert_eq!(
        h.iter().filter(|c| *c == "precondition").count(),
        1,
        "{h:?}"
    );
    let l = Layout::of(&rows);
    assert_eq!(l.keys(), ["ftl", "precondition"]);
    assert_eq!(l.fixed, [("workload".to_string(), "rand-read".to_string())]);
    assert_eq!(l.label(&rows[0]), "page/fill");
    let t = table(&rows);
    assert_eq!(t.matches("precondition").count(), 1, "{t}");
    assert!(t.starts_with("fixed: workload=rand-read\n"), "{t}");
    // An axis whose rows differ in what the preconditioning reports keeps both.
    let mut odd = rows.clone();
    odd[0].precondition = "none".into();
    let (h, _) = columns(&odd);
    assert_eq!(
        h.iter().filter(|c| *c == "precondition").count(),
        2,
        "{h:?}"
    );
}

/// A point that read nothing has no read p99 (and one that wrote nothing no
/// write p99): `null` in JSONL, an empty CSV cell, `n/a` in the tables, no
/// bar; rows of an older ssdsim (0.0) still read.
#[test]
fn a_direction_without_requests_has_no_p99() {
    let mut rows = vec![
        row(0, &[("ftl", "page"), ("rw", "randread")], "steady", None),
        row(
            1,
            &[("ftl", "page"), ("rw", "randwrite")],
            "steady",
            Some(2.5),
        ),
    ];
    rows[0].read_p99_us = Some(120.0);
    rows[0].lat_p99_us = Some(120.0);
    rows[0].lat_mean_us = Some(60.0);
    rows[1].write_p99_us = Some(300.0);
    rows[1].lat_p99_us = Some(300.0);
    rows[1].lat_mean_us = Some(90.0);
    let json = serde_json::to_value(&rows[0]).unwrap();
    assert!(json["write_p99_us"].is_null(), "{json}");
    assert_eq!(json["read_p99_us"], serde_json::json!(120.0));
    let back: Row = serde_json::from_value(json).unwrap();
    assert_eq!((back.read_p99_us, back.write_p99_us), (Some(120.0), None));
    let mut old = serde_json::to_value(&rows[1]).unwrap();
    old["read_p99_us"] = serde_json::json!(0.0);
    let old: Row = serde_json::from_value(old).unwrap();
    assert_eq!(old.read_p99_us, Some(0.0));
    let (h, body) = columns(&rows);
    let at = |c: &str| h.iter().position(|x| x == c).unwrap();
    assert_eq!(body[0][at("write_p99_us")], "");
    assert_eq!(body[0][at("read_p99_us")], "120.0");
    assert_eq!(body[1][at("read_p99_us")], "");
    let md = markdown(&rows);
    let line = md.lines().find(|l| l.contains("randread")).unwrap();
    assert!(
        line.contains("| n/a |") && line.contains("| 120.0 |"),
        "{md}"
    );
    // A point whose device completed no request (a buffered run whose
    // calls all hit the cache) has no latency at all.
    rows[0].lat_mean_us = None;
    rows[0].lat_p99_us = None;
    rows[0].read_p99_us = None;
    let t = table(&rows);
    let head: Vec<&str> = t.lines().nth(1).unwrap().split_whitespace().collect();
    let line = t.lines().find(|l| l.contains("randread")).unwrap();
    let cells: Vec<&str> = line.split_whitespace().collect();
    for c in ["lat_mean_us", "lat_p99_us"] {
        let i = head.iter().position(|x| *x == c).unwrap();
        assert_eq!(cells[i], "n/a", "{c}\n{t}");
    }
    let m = chart_metrics(&rows.iter().collect::<Vec<_>>());
    let p99 = m.iter().find(|m| m.name == "lat_p99_us").unwrap();
    assert_eq!(
        ((p99.get)(&rows[0]), (p99.get)(&rows[1])),
        (None, Some(300.0))
    );
}
