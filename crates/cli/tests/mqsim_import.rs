//! `ssdsim import mqsim` end to end: MQSim's own shipped ssdconfig.xml is
//! imported, the TOML is loaded by `ssdsim run --config` and a workload runs
//! on it; a variant of it checks the idle page read against tR + transfer.

use std::path::{Path, PathBuf};

mod common;
use common::ssdsim;

const SHIPPED: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/data/mqsim-ssdconfig.xml"
);

fn tmpdir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("ssdsim-mqsim-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn import(xml: &Path, out: &Path) -> String {
    let (code, stdout, stderr) = ssdsim(&[
        "import",
        "mqsim",
        xml.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.is_empty());
    stderr
}

fn report(args: &[&str]) -> serde_json::Value {
    let mut a = args.to_vec();
    a.extend(["--format", "json", "--no-progress"]);
    let (code, stdout, stderr) = ssdsim(&a);
    assert_eq!(code, 0, "{stderr}");
    serde_json::from_str(&stdout).unwrap()
}

#[test]
fn mqsims_shipped_drive_imports_loads_and_runs() {
    let d = tmpdir("shipped");
    let toml = d.join("mqsim.toml");
    let stderr = import(Path::new(SHIPPED), &toml);
    // What ssdsim cannot represent is printed, and listed in the file.
    let text = std::fs::read_to_string(&toml).unwrap();
    assert!(text.contains("Queue_Fetch_Size = 512 -> host.queue_depth = 512"));
    for w in ["Block_PE_Cycles_Limit", "CMD_Suspension_Support"] {
        assert!(
            stderr.contains(&format!("warning: not represented in ssdsim: {w}")),
            "{stderr}"
        );
        assert!(text.contains(w));
    }
    // MQSim's logical capacity: floor(2^26 x 0.93) pages of 8 KiB.
    let logical = (67_108_864f64 * 0.93) as u64 * 8192;
    assert!(
        stderr.contains(&format!("({logical} B) logical")),
        "{stderr}"
    );
    let r = report(&[
        "run",
        "--config",
        toml.to_str().unwrap(),
        "--rw",
        "randwrite",
        "--bs",
        "4k",
        "--iodepth",
        "32",
        "--number_ios",
        "2000",
    ]);
    assert_eq!(r["host"]["requests"], 2000);
    let nand = &r["config"]["nand"];
    assert_eq!(nand["page_size"], "8KiB");
    assert_eq!(nand["t_r"], "75us");
    assert_eq!(r["config"]["layout"]["ways"], 4);
    assert_eq!(r["config"]["ftl"]["kind"], "dftl");
    // The write buffer (MQSim's 256 MiB data cache) takes them all.
    assert!(r["notes"].get("dram_capacity_exceeded_bytes").is_none());
    let _ = std::fs::remove_dir_all(&d);
}

/// MQSim's drive made small (64 blocks a plane, OP 0.25), with the whole
/// mapping table in DRAM and no data cache: after a fill, a QD1 random read
/// costs the flash part MQSim gives an idle drive, tR + the page's transfer
/// (75 us + 8192 / 1 / 2 x 2 x floor(1000 / 333) ns = 99.576 us), plus
/// ssdsim's host and controller costs, which MQSim's XML does not state
/// (command 1 us, 5.5 us of controller CPU, the 8 KiB over the link at
/// 3282 MB/s: 2.5 us, command cycles on the channel).
#[test]
fn an_idle_page_read_is_tr_plus_transfer_plus_host_costs() {
    let d = tmpdir("idle");
    let xml = std::fs::read_to_string(SHIPPED)
        .unwrap()
        .replace("<Block_No_Per_Plane>2048<", "<Block_No_Per_Plane>64<")
        .replace(
            "<Overprovisioning_Ratio>0.07<",
            "<Overprovisioning_Ratio>0.25<",
        )
        .replace("<Ideal_Mapping_Table>false<", "<Ideal_Mapping_Table>true<")
        .replace("<Data_Cache_Capacity>268435456<", "<Data_Cache_Capacity>0<");
    let x = d.join("small.xml");
    std::fs::write(&x, xml).unwrap();
    let toml = d.join("small.toml");
    import(&x, &toml);
    let r = report(&[
        "run",
        "--config",
        toml.to_str().unwrap(),
        "--rw",
        "randread",
        "--bs",
        "8k",
        "--iodepth",
        "1",
        "--number_ios",
        "500",
        "--precondition",
        "fill",
    ]);
    let lat = &r["latency_us"]["read"];
    assert_eq!(lat["count"], 500);
    let flash_part = 75.0 + 24.576;
    let host_part = 1.0 + 5.5 + 8192.0 / 3282.051;
    let (lo, p50) = (flash_part + host_part, lat["p50"].as_f64().unwrap());
    // Command and address cycles on the channel and DRAM: well under 1 us.
    assert!(
        p50 >= lo && p50 <= lo + 1.0,
        "p50 {p50} us, expected {lo} + < 1 us"
    );
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn bad_input_is_an_error_naming_the_element() {
    let d = tmpdir("bad");
    let x = d.join("bad.xml");
    let xml = std::fs::read_to_string(SHIPPED)
        .unwrap()
        .replace("<Chip_No_Per_Channel>4<", "<Chip_No_Per_Channel>four<");
    std::fs::write(&x, xml).unwrap();
    let (code, stdout, stderr) = ssdsim(&["import", "mqsim", x.to_str().unwrap()]);
    assert_eq!(code, 2);
    assert!(stdout.is_empty());
    assert!(
        stderr.contains("Device_Parameter_Set/Chip_No_Per_Channel (line")
            && stderr.contains("expected a non-negative integer, got \"four\""),
        "{stderr}"
    );
    std::fs::write(&x, "<Execution_Parameter_Set><Device_Parameter_Set>").unwrap();
    let (code, _, stderr) = ssdsim(&["import", "mqsim", x.to_str().unwrap()]);
    assert_eq!(code, 2);
    assert!(stderr.contains("not well-formed XML"), "{stderr}");
    // The output may not replace the input.
    let (code, _, stderr) = ssdsim(&[
        "import",
        "mqsim",
        x.to_str().unwrap(),
        "-o",
        x.to_str().unwrap(),
    ]);
    assert_eq!(code, 2);
    assert!(
        stderr.contains("refusing to overwrite an input"),
        "{stderr}"
    );
    let _ = std::fs::remove_dir_all(&d);
}
