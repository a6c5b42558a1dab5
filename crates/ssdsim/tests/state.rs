//! Preconditioning once: a saved drive state loaded in place of
//! preconditioning gives the report a run that preconditions gives, for
//! every FTL; a state is refused, with the reason, when the configuration
//! would have preconditioned another drive or the file is damaged; a sweep
//! whose points share a drive preconditions it once and gives the rows of
//! points that each precondition.

use ssd_core::stats::Report;
use ssdsim::state::DriveStateOpts;
use ssdsim::sweep::{expand, run_point, run_points, standard_workload_defs, Axis, Row};
use ssdsim::{run_config, RunOptions};
use ssdsim_host::config::{Precondition, SsdConfig};
use std::collections::BTreeMap;
use std::path::PathBuf;

mod common;
use common::rows_without_wall;

fn dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("ssdsim-state-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// A small drive (2 channels, 64 blocks a plane) under random writes.
fn drive(ftl: &str, pre: Precondition) -> SsdConfig {
    let mut c = SsdConfig::default();
    c.layout.channels = 2;
    c.nand.blocks_per_plane = 64;
    c.ftl.op = 0.25;
    c.ftl.kind = ftl.parse().unwrap();
    c.sim.precondition = pre;
    c.workload.rw = ssdsim_host::workload::RwMode::RandRw;
    c.workload.number_ios = Some(4000);
    c
}

/// The report as JSON without its wall-clock fields.
fn json(r: &Report) -> String {
    let mut v = serde_json::to_value(r).unwrap();
    v["run"]["wall_s"] = 0.into();
    v["run"]["precondition_wall_s"] = 0.into();
    serde_json::to_string_pretty(&v).unwrap()
}

fn with(ds: DriveStateOpts) -> RunOptions {
    RunOptions {
        drive_state: ds,
        ..RunOptions::default()
    }
}

/// Options that save the preconditioned drive to `file`.
fn saving(file: impl Into<PathBuf>) -> RunOptions {
    with(DriveStateOpts {
        save: Some(file.into()),
        ..Default::default()
    })
}

/// Options that load the preconditioned drive from `file`.
fn loading(file: impl Into<PathBuf>) -> RunOptions {
    with(DriveStateOpts {
        load: Some(file.into()),
        ..Default::default()
    })
}

#[test]
fn a_loaded_state_gives_the_report_of_a_fresh_preconditioning_for_every_ftl() {
    let d = dir("roundtrip");
    use ssdsim_host::config::WearLeveling;
    let drives = [
        ("page", WearLeveling::None),
        ("dftl", WearLeveling::None),
        ("block", WearLeveling::None),
        ("bast", WearLeveling::None),
        ("fast", WearLeveling::None),
        ("last", WearLeveling::None),
        // Wear levelling keeps the free pools by erase count.
        ("page", WearLeveling::Dynamic),
        ("dftl", WearLeveling::Static),
    ];
    for (ftl, wl) in drives {
        for pre in [Precondition::Fill, Precondition::Steady] {
            let mut c = drive(ftl, pre);
            c.ftl.wear_leveling = wl;
            let file = d.join(format!("{ftl}-{wl:?}-{pre:?}.state"));
            let saved = run_config(&c, &saving(file.clone())).unwrap();
            let fresh = run_config(&c, &RunOptions::default()).unwrap();
            assert_eq!(
                json(&saved.report),
                json(&fresh.report),
                "{ftl} {pre:?}: saving changed the run"
            );
            let loaded = run_config(&c, &loading(file.clone())).unwrap();
            assert_eq!(
                json(&loaded.report),
                json(&fresh.report),
                "{ftl} {pre:?}: the loaded state ran differently"
            );
            assert!(
                fresh.report.flash.page_programs > 0,
                "{ftl} {pre:?}: the run wrote nothing"
            );
            // A run of another workload and seed on the same drive may load it.
            let mut other = c.clone();
            other.workload.rw = ssdsim_host::workload::RwMode::RandRead;
            other.sim.precondition_seed = Some(other.sim.seed);
            other.sim.seed = 99;
            let fresh = run_config(&other, &RunOptions::default()).unwrap();
            let loaded = run_config(&other, &loading(file)).unwrap();
            assert_eq!(json(&loaded.report), json(&fresh.report), "{ftl} {pre:?}");
        }
    }
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn a_state_of_another_drive_or_a_damaged_file_is_refused_with_the_reason() {
    let d = dir("refused");
    let c = drive("page", Precondition::Steady);
    let file = d.join("page.state");
    run_config(&c, &saving(file.clone())).unwrap();
    let load = |c: &SsdConfig, f: &PathBuf| {
        run_config(c, &loading(f.clone()))
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default()
    };
    let mut op = c.clone();
    op.ftl.op = 0.2;
    let e = load(&op, &file);
    assert!(e.contains("ftl.op is 0.25 in the state, 0.2 here"), "{e}");
    let mut seed = c.clone();
    seed.sim.seed = 5;
    let e = load(&seed, &file);
    assert!(
        e.contains("sim.precondition_seed is 1 in the state, 5 here"),
        "{e}"
    );
    let mut none = c.clone();
    none.sim.precondition = Precondition::Fill;
    let e = load(&none, &file);
    assert!(
        e.contains("sim.precondition is \"steady\" in the state, \"fill\" here"),
        "{e}"
    );
    // What the measured phase alone reads may differ.
    let mut timing = c.clone();
    timing.nand.blocks_per_plane = 64;
    timing.controller.cpu_mhz = 200;
    timing.workload.iodepth = 4;
    assert_eq!(load(&timing, &file), "");

    let bytes = std::fs::read(&file).unwrap();
    let cut = d.join("cut.state");
    std::fs::write(&cut, &bytes[..bytes.len() / 2]).unwrap();
    let e = load(&c, &cut);
    assert!(e.contains("cut.state") && e.contains("truncated"), "{e}");
    let flip = d.join("flip.state");
    let mut b = bytes.clone();
    let mid = b.len() / 2;
    b[mid] ^= 0x40;
    std::fs::write(&flip, &b).unwrap();
    let e = load(&c, &flip);
    assert!(e.contains("flip.state") && e.contains("damaged"), "{e}");
    let tail = d.join("tail.state");
    let mut b = bytes.clone();
    b.push(0);
    std::fs::write(&tail, &b).unwrap();
    let e = load(&c, &tail);
    assert!(e.contains("bytes follow its checksum"), "{e}");
    // A value changed and the checksum made to fit (a file edited by hand):
    // the FTL's own invariant check refuses it before the run.
    let edited = d.join("edited.state");
    let mut b = bytes.clone();
    let n = b.len() - 4;
    b[n / 4] ^= 0x01; // a varint's low bit: the same length, another value
    let crc = crc32(&b[..n]);
    b[n..].copy_from_slice(&crc.to_le_bytes());
    std::fs::write(&edited, &b).unwrap();
    let e = load(&c, &edited);
    assert!(
        e.contains("edited.state") && e.contains("inconsistent"),
        "{e}"
    );
    let text = d.join("text.state");
    std::fs::write(&text, "[ftl]\nkind = \"page\"\n").unwrap();
    let e = load(&c, &text);
    assert!(e.contains("not an ssdsim state file"), "{e}");
    let e = load(&c, &d.join("missing.state"));
    assert!(
        e.contains("missing.state") && e.contains("cannot read"),
        "{e}"
    );
    // A state that cannot be written is refused before preconditioning.
    let e = run_config(
        &c,
        &with(DriveStateOpts {
            save: Some(d.join("no-such-dir").join("x.state")),
            ..Default::default()
        }),
    )
    .err()
    .map(|e| e.to_string())
    .unwrap_or_default();
    assert!(
        e.contains("--save-state") && e.contains("cannot write"),
        "{e}"
    );
    std::fs::remove_dir_all(&d).unwrap();
}

/// CRC-32 (IEEE, reflected), as the state file's trailer.
fn crc32(bytes: &[u8]) -> u32 {
    let mut c = !0u32;
    for &x in bytes {
        c ^= x as u32;
        for _ in 0..8 {
            c = if c & 1 != 0 {
                (c >> 1) ^ 0xEDB8_8320
            } else {
                c >> 1
            };
        }
    }
    !c
}

/// Where the page FTL keeps its full blocks' LPNs (`ftl.p2l_store`) changes
/// no result: a steady-state drive written with GC gives the same report
/// with the P2L in memory and in a temporary file, a state saved under one
/// store loads under the other, and a sweep's shared drive (copied per row,
/// its file with it) gives each row what the row gives alone.
#[test]
fn the_p2l_store_changes_no_result_and_a_state_loads_under_either() {
    use ssdsim_host::config::P2lStore;
    let d = dir("p2l-store");
    let store = |s: P2lStore| {
        let mut c = drive("page", Precondition::Steady);
        c.ftl.p2l_store = s;
        c.workload.rw = ssdsim_host::workload::RwMode::RandWrite;
        c.workload.number_ios = Some(20_000);
        c
    };
    // The report without its wall-clock fields and its echo of the
    // configuration (which says which store was asked for).
    let json = |r: &Report| {
        let mut v: serde_json::Value = serde_json::from_str(&json(r)).unwrap();
        v["config"]["ftl"]
            .as_object_mut()
            .unwrap()
            .remove("p2l_store");
        v["run"]["config_hash"] = 0.into();
        serde_json::to_string_pretty(&v).unwrap()
    };
    let (mem, file) = (store(P2lStore::Memory), store(P2lStore::File));
    let in_memory = run_config(&mem, &RunOptions::default()).unwrap();
    assert!(
        in_memory.report.flash.gc_page_copies > 0,
        "no GC: nothing read back"
    );
    let in_file = run_config(&file, &RunOptions::default()).unwrap();
    assert_eq!(json(&in_file.report), json(&in_memory.report));
    for (save, load) in [(&file, &mem), (&mem, &file)] {
        let path = d.join(format!("{:?}.state", save.ftl.p2l_store));
        let saved = run_config(save, &saving(path.clone())).unwrap();
        assert_eq!(json(&saved.report), json(&in_memory.report));
        let loaded = run_config(load, &loading(path)).unwrap();
        assert_eq!(
            json(&loaded.report),
            json(&in_memory.report),
            "saved with the P2L in {:?}, loaded with it in {:?}",
            save.ftl.p2l_store,
            load.ftl.p2l_store
        );
    }
    let mut base = file.clone();
    base.workload.number_ios = Some(5_000);
    let axes = vec![Axis {
        key: "workload".into(),
        values: vec!["rand-write".into(), "mix-70-30".into()],
    }];
    let points = expand(&base, &axes, &[], &standard_workload_defs());
    let shared = run_points(&points, 2, &RunOptions::default(), |_, _, _| {}).unwrap();
    assert!(shared.iter().all(|r| r.error.is_none()), "{shared:?}");
    let alone: Vec<Row> = points
        .iter()
        .map(|p| run_point(p, &RunOptions::default()))
        .collect();
    assert_eq!(rows_without_wall(&shared), rows_without_wall(&alone));
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn a_sweep_preconditions_each_drive_once_and_its_rows_are_those_of_points_run_alone() {
    let mut base = SsdConfig::default();
    base.layout.channels = 2;
    base.nand.blocks_per_plane = 64;
    let axes = vec![
        Axis {
            key: "ftl".into(),
            values: vec!["page".into(), "dftl".into()],
        },
        Axis {
            key: "workload".into(),
            values: vec![
                "seq-write".into(),
                "rand-read".into(),
                "rand-write".into(),
                "mix-70-30".into(),
            ],
        },
    ];
    let common = vec![
        ("number_ios".to_string(), "2000".to_string()),
        ("op".to_string(), "0.25".to_string()),
    ];
    let workloads: BTreeMap<_, _> = standard_workload_defs();
    let points = expand(&base, &axes, &common, &workloads);
    assert_eq!(points.len(), 8);
    // One drive per FTL and preconditioning: the steady rows of an FTL
    // share a preconditioning seed, the FTLs do not.
    let pseed = |i: usize| points[i].cfg.as_ref().unwrap().sim.precondition_seed;
    assert_eq!(pseed(1), pseed(2));
    assert_eq!(pseed(1), pseed(3));
    assert_ne!(pseed(1), pseed(5));
    assert_ne!(pseed(0), pseed(1));
    let shared = run_points(&points, 2, &RunOptions::default(), |_, _, _| {}).unwrap();
    let alone: Vec<Row> = points
        .iter()
        .map(|p| run_point(p, &RunOptions::default()))
        .collect();
    assert!(shared.iter().all(|r| r.error.is_none()), "{shared:?}");
    assert_eq!(rows_without_wall(&shared), rows_without_wall(&alone));
    assert!(shared.iter().all(|r| r.precondition_seed != 0));
    let serial = run_points(&points, 1, &RunOptions::default(), |_, _, _| {}).unwrap();
    assert_eq!(rows_without_wall(&serial), rows_without_wall(&alone));
}

/// A state file is read only by a build that lays it out, and preconditions,
/// as the one that wrote it: the bytes of a small drive's states under every
/// FTL are pinned here to `STATE_FORMAT`. A change that moves them (a field
/// added to an FTL, another fill order) must raise
/// `ssd_core::engine::STATE_FORMAT`, so that older files are refused with
/// the reason, and put the new hash here.
#[test]
fn the_state_files_bytes_are_pinned_to_the_layout_version() {
    let d = dir("pinned");
    let mut all = String::new();
    // The six FTLs, and the page FTL under dynamic wear levelling, whose
    // free pools keep another order.
    let kinds = ["page", "dftl", "block", "bast", "fast", "last", "page"];
    for (i, ftl) in kinds.into_iter().enumerate() {
        let mut c = drive(ftl, Precondition::Steady);
        c.workload.number_ios = Some(10);
        if i == 6 {
            c.ftl.wear_leveling = ssdsim_host::config::WearLeveling::Dynamic;
        }
        let file = d.join(format!("{ftl}-{i}.state"));
        run_config(&c, &saving(file.clone())).unwrap();
        let bytes = std::fs::read(&file).unwrap();
        // The state itself: after the header, whose shape (the
        // configuration) a new field moves without moving the layout (the
        // shape check refuses such a file already), and without the
        // wall-clock seconds preconditioning took (the outcome's last field,
        // 8 bytes before the checksum).
        let shape = c.state_shape();
        let from = bytes
            .windows(shape.len())
            .position(|w| w == shape.as_bytes())
            .expect("the header holds the shape")
            + shape.len();
        let n = bytes.len() - 12;
        all.push_str(&ssd_core::stats::fnv1a(&format!("{:?}", &bytes[from..n])));
        all.push('\n');
    }
    std::fs::remove_dir_all(&d).unwrap();
    assert_eq!(
        (ssd_core::engine::STATE_FORMAT, ssd_core::stats::fnv1a(&all)),
        (4, String::from("0985c233f989c0ca")),
        "the state files' bytes moved: raise STATE_FORMAT and pin the new hash"
    );
}
