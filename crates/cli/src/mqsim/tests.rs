//! Tests of `mqsim`.

use super::*;

/// MQSim's own ssdconfig.xml (CMU-SAFARI/MQSim, master), as shipped.
const SHIPPED: &str = include_str!("../../tests/data/mqsim-ssdconfig.xml");

fn with(field: &str, value: &str) -> String {
    let open = format!("<{field}>");
    let close = format!("</{field}>");
    let s = SHIPPED.find(&open).expect("field in the shipped file") + open.len();
    let e = s + SHIPPED[s..].find(&close).unwrap();
    format!("{}{value}{}", &SHIPPED[..s], &SHIPPED[e..])
}
fn without(field: &str) -> String {
    let open = format!("<{field}>");
    let close = format!("</{field}>");
    let s = SHIPPED.find(&open).unwrap();
    let e = s + SHIPPED[s..].find(&close).unwrap() + close.len();
    format!("{}{}", &SHIPPED[..s], &SHIPPED[e..])
}
fn ok(text: &str) -> Imported {
    import(text, "ssdconfig.xml").unwrap_or_else(|e| panic!("{e}"))
}
fn err(text: &str) -> String {
    import(text, "ssdconfig.xml").unwrap_err()
}
fn warned(i: &Imported, what: &str) -> bool {
    i.warnings.iter().any(|w| w.contains(what))
}

#[test]
fn the_shipped_drive_maps_field_by_field() {
    let i = ok(SHIPPED);
    let c = &i.config;
    assert_eq!((c.layout.channels, c.layout.ways), (8, 4));
    assert_eq!((c.nand.dies_per_chip, c.nand.planes_per_die), (2, 2));
    assert_eq!(
        (c.nand.blocks_per_plane, c.nand.pages_per_block),
        (2048, 256)
    );
    assert_eq!(c.nand.page_size, Size(8192));
    assert_eq!(c.nand.cell, "MLC");
    assert_eq!(
        (c.nand.t_r, c.nand.t_prog, c.nand.t_bers),
        (Dur(75_000), Dur(750_000), Dur(3_800_000))
    );
    // 8192 / 1 / 2 cycles of 2 x floor(1000 / 333) = 6 ns.
    assert_eq!(c.nand.bus, BusSpeed::PageTime(Dur(24_576)));
    assert_eq!(c.nand.bus_width_bits, 8);
    assert_eq!(c.host.interface, Interface::NvmeGen3x4);
    // 1.0 GB/s x 4 lanes x 128 / 156.
    assert!(
        (c.host.link_mbps - 3282.051).abs() < 1e-9,
        "{}",
        c.host.link_mbps
    );
    assert_eq!(
        (c.host.queue_depth, c.host.sq_depth, c.sched.nr_requests),
        (512, 65535, 65535)
    );
    assert_eq!(c.ftl.kind, "dftl");
    assert_eq!(c.ftl.dftl.cmt_size, Size(2 * 1024 * 1024));
    // 2^26 physical pages, 16 sectors a page: ceil((52 + 16) / 8) = 9.
    assert_eq!(c.ftl.dftl.cmt_entry_bytes, 9);
    assert!((c.ftl.op - 0.07 / 0.93).abs() < 1e-15);
    // floor(0.05 x 2048) = 102.
    assert_eq!(c.ftl.gc_threshold_blocks, 102);
    assert_eq!(c.ftl.gc_policy, GcPolicy::Windowed(11.0 / 2048.0));
    assert_eq!(c.ftl.allocation, Allocation::Cwdp);
    assert_eq!(c.ftl.wear_leveling, WearLeveling::Static);
    assert_eq!(c.ftl.static_wl_threshold, 99);
    assert!(c.controller.prioritize_reads);
    assert_eq!(c.dram.write_buffer, Size(268_435_456));
    assert_eq!(c.dram.access_latency, Dur(26));
    assert_eq!(c.sim.seed, 321);
    assert_eq!(c.sim.precondition, Precondition::None);
    // What ssdsim cannot represent is said, in the file and as warnings.
    for w in [
        "Queue_Fetch_Size = 512",
        "Block_PE_Cycles_Limit = 10000",
        "Page_Metadat_Capacity = 448",
        "CMD_Suspension_Support = ERASE",
        "Data_Cache_DRAM_Row_Size = 8192",
        "GC_Block_Selection_Policy = RGA",
        "PCIe_Lane_Bandwidth",
    ] {
        assert!(warned(&i, w), "no warning for {w}: {:?}", i.warnings);
        assert!(i.toml.contains(w), "{w} not in the header");
    }
    // (The defaulted elements are marked "(MQSim's default)" each in
    // the file instead.)
    for w in i.warnings.iter().filter(|w| !w.starts_with("defaulted: ")) {
        let body = w.split_once(": ").map(|x| x.1).unwrap_or(w);
        assert!(i.toml.contains(body), "warning not in the file: {w}");
    }
}

/// The file is what ssdsim loads: read back over the defaults it gives
/// the same configuration, and it validates.
#[test]
fn the_toml_loads_back_to_the_same_drive() {
    let i = ok(SHIPPED);
    let back = SsdConfig::from_toml_over(None, &i.toml, "x.toml").unwrap();
    assert_eq!(back, i.config);
    back.validate().unwrap();
}

/// Closed-form figures of MQSim's default drive: its logical capacity
/// (Address_Mapping_Unit_Base: physical pages x (1 - OP), truncated) and
/// the flash part of an idle page read (tR + the page's transfer).
#[test]
fn closed_form_figures_match_mqsim() {
    let s = ok(SHIPPED).config.validate().unwrap();
    let physical: u64 = 8 * 4 * 2 * 2 * 2048 * 256;
    assert_eq!(s.geometry.total_pages(), physical);
    let mqsim_logical = (physical as f64 * (1.0 - 0.07)) as u64;
    assert_eq!(s.logical_pages, mqsim_logical);
    assert_eq!(s.page_xfer_time(), Dur(mqsim_transfer_ns(8192, 1, 333)));
    assert_eq!(s.config.nand.t_r + s.page_xfer_time(), Dur(75_000 + 24_576));
}

#[test]
fn absent_fields_take_mqsims_defaults() {
    let i = ok(&without("Channel_Transfer_Rate"));
    // 300 MT/s: floor(1000 / 300) = 3 ns per transfer, as at 333.
    assert_eq!(i.config.nand.bus, BusSpeed::PageTime(Dur(24_576)));
    assert!(i
        .toml
        .contains("Channel_Transfer_Rate = 300 (MQSim's default)"));
    let i = ok(&without("IO_Queue_Depth"));
    assert_eq!(
        (i.config.host.sq_depth, i.config.host.queue_depth),
        (1024, 512)
    );
    let i = ok(&without("Host_Parameter_Set"));
    // 0.4 GB/s x 4 x 128 / 156
    assert!((i.config.host.link_mbps - 1312.821).abs() < 1e-9);
}

#[test]
fn each_mapping() {
    let c = ok(&with("Ideal_Mapping_Table", "true")).config;
    assert_eq!(c.ftl.kind, "page");
    let c = ok(&with("HostInterface_Type", "SATA")).config;
    assert_eq!(c.host.interface, Interface::Sata6g);
    assert_eq!(c.host.command_overhead, Dur(400_000));
    let c = ok(&with("Flash_Channel_Width", "2")).config;
    assert_eq!(c.nand.bus, BusSpeed::PageTime(Dur(12_288)));
    assert_eq!(c.nand.bus_width_bits, 16);
    let c = ok(&with("Channel_Transfer_Rate", "200")).config;
    assert_eq!(c.nand.bus, BusSpeed::PageTime(Dur(4096 * 10)));
    let c = ok(&with("Overprovisioning_Ratio", "0.2")).config;
    assert!((c.ftl.op - 0.25).abs() < 1e-12);
    // MQSim never lets the threshold below 10 blocks.
    let c = ok(&with("GC_Exec_Threshold", "0.001")).config;
    assert_eq!(c.ftl.gc_threshold_blocks, 10);
    for (x, p) in [
        ("GREEDY", GcPolicy::Greedy),
        ("FIFO", GcPolicy::Fifo),
        ("random", GcPolicy::Random),
        ("RANDOM_P", GcPolicy::Random),
    ] {
        assert_eq!(
            ok(&with("GC_Block_Selection_Policy", x))
                .config
                .ftl
                .gc_policy,
            p
        );
    }
    assert!(warned(
        &ok(&with("GC_Block_Selection_Policy", "RANDOM_PP")),
        "RANDOM_PP"
    ));
    for (x, a, approx) in [
        ("PDWC", Allocation::Pdwc, false),
        ("WCDP", Allocation::Wcdp, false),
        ("CDPW", Allocation::Cwdp, true),
        ("PCWD", Allocation::Pdwc, true),
        ("DPWC", Allocation::Cwdp, true),
    ] {
        let i = ok(&with("Plane_Allocation_Scheme", x));
        assert_eq!(i.config.ftl.allocation, a, "{x}");
        assert_eq!(warned(&i, "Plane_Allocation_Scheme"), approx, "{x}");
    }
    let i = ok(&with("Transaction_Scheduling_Policy", "FLIN"));
    assert!(warned(&i, "FLIN"));
    let i = ok(&with("Static_Wearleveling_Enabled", "false"));
    assert_eq!(i.config.ftl.wear_leveling, WearLeveling::Dynamic);
    let mut t = with("Static_Wearleveling_Enabled", "false");
    t = t.replace(
        "<Dynamic_Wearleveling_Enabled>true",
        "<Dynamic_Wearleveling_Enabled>false",
    );
    assert_eq!(ok(&t).config.ftl.wear_leveling, WearLeveling::None);
    let i = ok(&with("Enabled_Preconditioning", "TRUE"));
    assert_eq!(i.config.sim.precondition, Precondition::Steady);
    assert!(warned(&i, "Enabled_Preconditioning"));
    let i = ok(&with("Data_Cache_Capacity", "10000"));
    assert_eq!(i.config.dram.write_buffer, Size(8192));
    assert!(warned(&i, "rounded down"));
    let i = ok(&with("Caching_Mechanism", "SIMPLE"));
    assert!(warned(&i, "simple cache"));
    // Per-bit latencies: the mean, and a warning.
    let i = ok(&with("Page_Read_Latency_MSB", "125000"));
    assert_eq!(i.config.nand.t_r, Dur(100_000));
    assert!(warned(&i, "Page_Read_Latency_MSB = 125000"));
    // TLC averages all three, SLC reads LSB only.
    let t = with("Flash_Technology", "TLC").replace(
        "<Page_Program_Latency_CSB>750000",
        "<Page_Program_Latency_CSB>1050000",
    );
    assert_eq!(ok(&t).config.nand.t_prog, Dur(850_000));
    let t = with("Flash_Technology", "SLC").replace(
        "<Page_Program_Latency_MSB>750000",
        "<Page_Program_Latency_MSB>9",
    );
    let i = ok(&t);
    assert_eq!(i.config.nand.t_prog, Dur(750_000));
    assert!(!warned(&i, "Page_Program_Latency"));
    let i = ok(&with("CMD_Suspension_Support", "NONE"));
    assert!(!warned(&i, "Suspend_Erase_Time"));
    // An element MQSim does not know is named, not dropped silently.
    let t = SHIPPED.replace("<Seed>", "<Sed>1</Sed><Seed>");
    assert!(warned(&ok(&t), "Device_Parameter_Set/Sed"));
}

#[test]
fn each_error_names_the_element_and_the_reason() {
    let cases: Vec<(String, &str)> = vec![
        (
            "<Execution_Parameter_Set><Device".into(),
            "not well-formed XML",
        ),
        ("<MQSim_IO_Scenarios/>".into(), "a workload definition"),
        (
            "<Execution_Parameter_Set/>".into(),
            "no <Device_Parameter_Set>",
        ),
        (
            with("Flash_Channel_Count", "eight"),
            "Flash_Channel_Count (line",
        ),
        (with("Flash_Channel_Count", "0"), "must be at least 1"),
        (with("Flash_Channel_Count", "-8"), "non-negative integer"),
        (with("Page_Capacity", "1000"), "Page_Capacity (line"),
        (with("Plane_No_Per_Die", "32"), "at most 16"),
        (with("IO_Queue_Depth", "70000"), "IO_Queue_Depth"),
        (with("Overprovisioning_Ratio", "1.5"), "must be in (0, 1)"),
        (with("Overprovisioning_Ratio", "abc"), "expected a number"),
        (with("GC_Exec_Threshold", "-0.1"), "GC_Exec_Threshold"),
        (
            with("GC_Block_Selection_Policy", "BEST"),
            "unknown value \"BEST\"",
        ),
        (
            with("Plane_Allocation_Scheme", "CCCC"),
            "Plane_Allocation_Scheme",
        ),
        (with("HostInterface_Type", "USB"), "HostInterface_Type"),
        (with("Memory_Type", "PCM"), "Memory_Type"),
        (with("Flash_Comm_Protocol", "TOGGLE"), "Flash_Comm_Protocol"),
        (with("Flash_Technology", "QLC"), "Flash_Technology"),
        (with("Address_Mapping", "HYBRID"), "HYBRID"),
        (
            with("Ideal_Mapping_Table", "maybe"),
            "expected true or false",
        ),
        (with("Channel_Transfer_Rate", "1600"), "infinitely fast"),
        (with("PCIe_Lane_Bandwidth", "0"), "must be positive"),
        (with("Page_Read_Latency_LSB", "0"), "at least 1 ns"),
        (with("Seed", "-5"), "non-negative"),
        (with("CMT_Capacity", "4"), "cannot hold one"),
        (
            SHIPPED.replace("<Seed>321</Seed>", "<Seed>1</Seed><Seed>2</Seed>"),
            "given twice",
        ),
        (
            SHIPPED.replace("<Seed>321</Seed>", "<Seed><x/></Seed>"),
            "expected a value",
        ),
        // Valid fields, but a drive ssdsim cannot run: named by the validator.
        (
            with("GC_Exec_Threshold", "0.5"),
            "not a valid ssdsim configuration",
        ),
        (with("Block_No_Per_Plane", "1000000"), "2^32 - 1"),
    ];
    for (text, want) in cases {
        let e = err(&text);
        assert!(e.starts_with("ssdconfig.xml: "), "{e}");
        assert!(e.contains(want), "{want:?} not in {e:?}");
    }
}
