//! What the FTL's work costs in power (issue 27, Park et al. section 3):
//! DRAM standby that scales with capacity and `dram.capacity = "fit"`,
//! against closed forms.

use ssd_core::config::{DramCapacity, SsdConfig};
use ssd_core::units::{Size, Watts};
use ssd_core::workload::RwMode;
use ssdsim::{run_config, RunOptions};

fn run(cfg: &SsdConfig) -> serde_json::Value {
    let opts = RunOptions {
        check_invariants: true,
        ..Default::default()
    };
    serde_json::to_value(run_config(cfg, &opts).unwrap().report).unwrap()
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
        c.ftl.kind = kind.into();
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
