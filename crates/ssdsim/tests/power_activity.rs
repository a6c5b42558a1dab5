//! What the FTL's work costs in power (issue 27, Park et al. section 3):
//! DRAM standby that scales with capacity, `dram.capacity = "fit"`, and the
//! firmware's CPU and DRAM energy by FTL activity, against closed forms.

use ssd_core::units::{Size, Watts};
use ssdsim::{run_config, RunOptions};
use ssdsim_host::config::{DramCapacity, GcPolicy, Precondition, SsdConfig};
use ssdsim_host::workload::RwMode;

fn run(cfg: &SsdConfig) -> serde_json::Value {
    let opts = RunOptions {
        check_invariants: true,
        ..Default::default()
    };
    serde_json::to_value(run_config(cfg, &opts).unwrap().report).unwrap()
}

/// A small drive under random writes with windowed GC (the victim-search
/// window of Park et al.), a 200 MHz CPU (5 ns per cycle: the closed forms
/// below are exact).
fn park_like(window: f64) -> SsdConfig {
    let mut c = SsdConfig::default();
    c.nand.blocks_per_plane = 64;
    c.ftl.op = 0.15;
    c.ftl.gc_policy = GcPolicy::Windowed(window);
    c.sim.precondition = Precondition::Steady;
    c.workload.rw = RwMode::RandWrite;
    c.workload.bs = Size::kib(4);
    c.workload.iodepth = 8;
    c.workload.number_ios = Some(3000);
    c
}

fn f(v: &serde_json::Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("{v} is not a number"))
}

fn u(v: &serde_json::Value) -> u64 {
    v.as_u64()
        .unwrap_or_else(|| panic!("{v} is not an integer"))
}

fn close(a: f64, b: f64, what: &str) {
    assert!(
        (a - b).abs() <= 1e-9 * b.abs().max(1e-12),
        "{what}: {a} != {b}"
    );
}

#[test]
fn gc_search_energy_is_the_candidates_cycles_at_normal_power_and_grows_with_the_window() {
    let mut last = 0.0;
    for window in [0.1, 0.25, 0.5, 1.0] {
        let c = park_like(window);
        let r = run(&c);
        let examined = u(&r["ftl"]["stats"]["gc_victims_examined"]);
        assert!(examined > 0, "window {window}: no GC search");
        let s = &r["energy_j"]["by_activity"]["gc_search"];
        let cycles = examined * c.controller.cycles_per_gc_candidate;
        assert_eq!(u(&s["cycles"]), cycles, "window {window}");
        assert_eq!(u(&s["dram_accesses"]), examined, "window {window}");
        // candidates x cycles per candidate / MHz x CPU normal power, and
        // one DRAM access (the candidate's valid count) each at active power.
        let cpu_s = cycles as f64 / (c.controller.cpu_mhz as f64 * 1e6);
        close(f(&s["cpu_s"]), cpu_s, "cpu_s");
        close(f(&s["cpu"]), cpu_s * c.power.cpu_normal_power.0, "cpu");
        let dram_s = examined as f64 * c.dram.access_latency.secs_f64();
        close(f(&s["dram_s"]), dram_s, "dram_s");
        close(f(&s["dram"]), dram_s * c.power.dram_active_power.0, "dram");
        let total = f(&s["total"]);
        assert!(
            total > last,
            "window {window}: search energy {total} J not above the smaller window's {last} J"
        );
        last = total;
    }
}

#[test]
fn the_activities_share_out_the_cpu_busy_time_and_the_dram_active_time() {
    for kind in ["page", "dftl", "fast", "last", "bast"] {
        let mut c = park_like(0.5);
        c.ftl.kind = kind.parse().unwrap();
        c.ftl.log.log_area = 0.1;
        let r = run(&c);
        let e = &r["energy_j"];
        let acts = e["by_activity"].as_object().unwrap();
        let names: Vec<&str> = acts.keys().map(|k| k.as_str()).collect();
        assert_eq!(
            names,
            ["command", "gc_move", "gc_search", "map_lookup", "other"],
            "{kind}"
        );
        let sum = |k: &str| acts.values().map(|a| f(&a[k])).sum::<f64>();
        let cycles: u64 = acts.values().map(|a| u(&a["cycles"])).sum();
        let accesses: u64 = acts.values().map(|a| u(&a["dram_accesses"])).sum();
        // Every pass ended inside the window: the CPU parts are the whole
        // busy time, the DRAM parts the whole active time.
        let mhz = c.controller.cpu_mhz as f64 * 1e6;
        close(sum("cpu_s"), cycles as f64 / mhz, &format!("{kind} cpu_s"));
        close(
            sum("dram_s"),
            f(&e["state_s"]["dram"]["active"]),
            &format!("{kind} dram_s"),
        );
        close(
            sum("dram"),
            f(&e["dram_modes"]["active"]),
            &format!("{kind} dram"),
        );
        assert!(sum("cpu") <= f(&e["cpu_modes"]["normal"]) * (1.0 + 1e-12));
        // The DRAM accesses are the FTL's (and the write buffer's, none here).
        assert_eq!(accesses, u(&r["ftl"]["dram_accesses"]), "{kind}");
        let w = &acts["command"];
        assert_eq!(
            u(&w["cycles"]),
            u(&r["sched"]["dispatched"]) * c.controller.cycles_per_command,
            "{kind}: one command path per dispatched request"
        );
        assert!(u(&acts["gc_search"]["cycles"]) > 0, "{kind}: no search");
    }
}

/// Idle power against DRAM capacity is a line whose slope is the per-GiB
/// standby figure; per device it is a staircase of whole devices.
#[test]
fn idle_power_grows_with_dram_capacity() {
    let idle = |cap: Size, per_gib: Option<f64>, per_dev: Option<(f64, Size)>| {
        let mut c = SsdConfig::default();
        c.dram.capacity = cap.into();
        c.power.dram_standby_power_per_gib = per_gib.map(Watts);
        if let Some((w, d)) = per_dev {
            c.power.dram_device_standby_power = Some(Watts(w));
            c.dram.device_size = Some(d);
        }
        c.workload.rw = RwMode::Read;
        c.workload.number_ios = Some(1);
        c.workload.iodepth = 1;
        c.sim.time_limit = None;
        let r = run(&c);
        f(&r["energy_j"]["dram_modes"]["standby"]) / f(&r["energy_j"]["state_s"]["window_s"])
    };
    let per_gib = 0.03;
    let (a, b) = (
        idle(Size::gib(1), Some(per_gib), None),
        idle(Size::gib(3), Some(per_gib), None),
    );
    close((b - a) / 2.0, per_gib, "slope per GiB");
    close(a, per_gib, "1 GiB");
    // Micron's form: background power per device, devices = capacity / density.
    let dev = Some((0.025, Size::mib(512)));
    close(idle(Size::gib(1), None, dev), 2.0 * 0.025, "2 devices");
    close(idle(Size::mib(1536), None, dev), 3.0 * 0.025, "3 devices");
    close(
        idle(Size::mib(1537), None, dev),
        4.0 * 0.025,
        "a byte more: 4 devices",
    );
    // Without either, the fixed figure (lee2011: 80 mW) whatever the capacity.
    close(idle(Size::gib(1), None, None), 0.080, "fixed");
    close(idle(Size::gib(4), None, None), 0.080, "fixed");
}

#[test]
fn a_fitted_dram_holds_the_mapping_table_and_the_write_buffer_in_whole_devices() {
    for kind in ["page", "dftl", "fast"] {
        let mut c = SsdConfig::default();
        c.nand.blocks_per_plane = 64;
        c.ftl.kind = kind.parse().unwrap();
        c.ftl.op = 0.15;
        c.dram.capacity = DramCapacity::Fit;
        c.dram.device_size = Some(Size::kib(64));
        c.dram.write_buffer = Size::kib(64);
        c.power.dram_device_standby_power = Some(Watts(0.001));
        c.workload.number_ios = Some(10);
        let r = run(&c);
        let table = u(&r["ftl"]["mapping_table_bytes"]);
        let need = table + (64 << 10);
        let devices = need.div_ceil(64 << 10);
        assert_eq!(
            r["notes"]["dram_capacity_fit_bytes"].as_u64(),
            Some(devices * (64 << 10)),
            "{kind}"
        );
        assert!(r["notes"].get("dram_capacity_exceeded_bytes").is_none());
        assert_eq!(r["config"]["dram"]["capacity"], "fit");
        let w =
            f(&r["energy_j"]["dram_modes"]["standby"]) / f(&r["energy_j"]["state_s"]["window_s"]);
        close(w, devices as f64 * 0.001, kind);
    }
}

#[test]
fn bad_dram_power_settings_name_their_field() {
    let err = |c: SsdConfig| c.validate().unwrap_err().to_string();
    let mut c = SsdConfig::default();
    c.dram.capacity = DramCapacity::Fit;
    assert!(err(c).starts_with("dram.capacity:"));
    let mut c = SsdConfig::default();
    c.power.dram_device_standby_power = Some(Watts(0.01));
    assert!(err(c).starts_with("power.dram_device_standby_power:"));
    let mut c = SsdConfig::default();
    c.power.dram_standby_power_per_gib = Some(Watts(0.01));
    c.power.dram_device_standby_power = Some(Watts(0.01));
    c.dram.device_size = Some(Size::mib(512));
    assert!(err(c).starts_with("power.dram_device_standby_power:"));
    let mut c = SsdConfig::default();
    c.power.dram_standby_power_per_gib = Some(Watts(-1.0));
    assert!(err(c).starts_with("power.dram_standby_power_per_gib:"));
    let mut c = SsdConfig::default();
    c.dram.device_size = Some(Size(0));
    assert!(err(c).starts_with("dram.device_size:"));
    // "fit" and sizes parse from TOML.
    let c = SsdConfig::from_toml_over(
        None,
        "[dram]\ncapacity = \"fit\"\ndevice_size = \"512MiB\"\n",
        "t.toml",
    )
    .unwrap();
    assert_eq!(c.dram.capacity, DramCapacity::Fit);
    assert_eq!(c.dram.device_size, Some(Size::mib(512)));
    c.validate().unwrap();
    let c = SsdConfig::from_toml_over(None, "[dram]\ncapacity = \"2GiB\"\n", "t.toml").unwrap();
    assert_eq!(c.dram.capacity, DramCapacity::Bytes(Size::gib(2)));
    let e = SsdConfig::from_toml_over(None, "[dram]\ncapacity = \"lots\"\n", "t.toml")
        .unwrap_err()
        .to_string();
    assert!(e.contains("capacity") && e.contains("fit"), "{e}");
}

/// Passes cut by the time limit count up to it; those after the drain start
/// count in the drain too (idle-time GC searches there).
#[test]
fn the_split_follows_the_window_end_and_the_drain() {
    let mut c = park_like(0.5);
    c.sim.time_limit = Some(ssd_core::Dur::from_ms(20));
    let r = run(&c);
    let e = &r["energy_j"];
    let acts = e["by_activity"].as_object().unwrap();
    let sum = |k: &str| acts.values().map(|a| f(&a[k])).sum::<f64>();
    close(
        sum("dram_s"),
        f(&e["state_s"]["dram"]["active"]),
        "cut dram_s",
    );
    let cycles: u64 = acts.values().map(|a| u(&a["cycles"])).sum();
    let mhz = c.controller.cpu_mhz as f64 * 1e6;
    assert!(sum("cpu_s") <= cycles as f64 / mhz + 1e-15);
    assert!(sum("cpu_s") <= f(&e["state_s"]["window_s"]));

    let mut c = park_like(0.5);
    c.ftl.background_gc_blocks = 8;
    c.sim.drain = true;
    let r = run(&c);
    let e = &r["energy_j"];
    let d = &e["drain"];
    assert!(f(&d["duration_s"]) > 0.0, "no drain");
    let (all, dr) = (&e["by_activity"], &d["by_activity"]);
    assert!(u(&dr["gc_search"]["cycles"]) > 0, "no search in the drain");
    for k in ["command", "map_lookup", "gc_search", "gc_move", "other"] {
        assert!(f(&dr[k]["total"]) <= f(&all[k]["total"]), "{k}");
        assert!(u(&dr[k]["cycles"]) <= u(&all[k]["cycles"]), "{k}");
    }
    let busy: f64 = ["command", "map_lookup", "gc_search", "gc_move", "other"]
        .iter()
        .map(|k| f(&dr[k]["cpu_s"]))
        .sum();
    assert!(busy <= f(&d["duration_s"]) * (1.0 + 1e-12));
}
