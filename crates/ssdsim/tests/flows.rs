//! Tenants: several flows on one drive, NVMe submission-queue arbitration,
//! per-flow statistics, slowdown and fairness. Each test checks a
//! consequence a user would see.

use ssd_core::Dur;
use ssdsim::{run_config, RunOptions};
use ssdsim_host::config::{Interface, SsdConfig};
use ssdsim_host::flows::{FlowConfig, FlowPriority, FlowSpace};
use ssdsim_host::scheds::Arbitration;
use ssdsim_host::workload::{RwMode, WorkloadConfig};

/// A small NVMe drive (2 channels x 2 ways) whose controller holds
/// `slots` commands, with flows added by the test.
fn drive(slots: u32) -> SsdConfig {
    let mut c = SsdConfig::default();
    c.layout.channels = 2;
    c.layout.ways = 2;
    c.nand.blocks_per_plane = 64;
    c.host = ssdsim_host::config::HostConfig::preset(Interface::NvmeGen3x4);
    c.host.queue_depth = slots;
    c.sim.precondition = ssdsim_host::config::Precondition::Fill;
    c
}

fn flow(name: &str, rw: RwMode, iodepth: u32, ios: u64, prio: FlowPriority) -> FlowConfig {
    let mut f = FlowConfig::workload(
        name,
        WorkloadConfig {
            rw,
            iodepth,
            number_ios: Some(ios),
            ..WorkloadConfig::default()
        },
    );
    f.priority = prio;
    f
}

fn opts() -> RunOptions {
    RunOptions {
        power: false,
        ..RunOptions::default()
    }
}

fn flows(r: &ssd_core::stats::Report) -> Vec<serde_json::Value> {
    r.extra["flows"].as_array().unwrap().clone()
}

fn n(v: &serde_json::Value, k: &str) -> f64 {
    v[k].as_f64()
        .unwrap_or_else(|| panic!("{k} missing in {v}"))
}

#[test]
fn the_flows_requests_add_up_and_stay_in_their_ranges() {
    let mut c = drive(64);
    c.flows = vec![
        flow("a", RwMode::RandRead, 8, 3000, FlowPriority::Medium),
        flow("b", RwMode::RandWrite, 8, 2000, FlowPriority::Medium),
        flow("c", RwMode::Write, 4, 1000, FlowPriority::Medium),
    ];
    c.sim.alone_runs = false;
    let r = run_config(&c, &opts()).unwrap().report;
    let f = flows(&r);
    assert_eq!(f.len(), 3);
    assert_eq!(n(&f[0], "requests"), 3000.0);
    assert_eq!(n(&f[0], "reads"), 3000.0);
    assert_eq!(n(&f[1], "writes"), 2000.0);
    assert_eq!(n(&f[2], "writes"), 1000.0);
    assert_eq!(r.host.requests, 6000);
    assert_eq!(
        r.host.bytes_written,
        (n(&f[1], "bytes_written") + n(&f[2], "bytes_written")) as u64
    );
    // Split space: three equal, disjoint, page-aligned ranges tiling the drive.
    let logical = c.validate().unwrap().logical_bytes() / 512;
    let mut at = 0.0;
    for x in &f {
        assert_eq!(n(x, "first_sector"), at);
        at += n(x, "sectors");
    }
    assert!(logical as f64 - at < 3.0 * 8.0);
    assert!(
        !r.extra.contains_key("fairness"),
        "no alone runs were asked for"
    );
}

/// Read-only flows cost the same per command: while both are backlogged at
/// the controller (64 outstanding each, 8 slots), what each completes is
/// what the arbitration fetches for it.
fn share(arb: Arbitration, a: FlowPriority, b: FlowPriority) -> (f64, f64) {
    let mut c = drive(8);
    c.host.arbitration = arb;
    c.flows = vec![
        flow("a", RwMode::RandRead, 64, 1_000_000, a),
        flow("b", RwMode::RandRead, 64, 1_000_000, b),
    ];
    c.sim.time_limit = Some(Dur::from_ms(100));
    c.sim.alone_runs = false;
    let r = run_config(&c, &opts()).unwrap().report;
    let f = flows(&r);
    (n(&f[0], "requests"), n(&f[1], "requests"))
}

#[test]
fn round_robin_shares_the_controller_equally() {
    let (a, b) = share(Arbitration::Rr, FlowPriority::High, FlowPriority::Low);
    assert!(a > 500.0, "{a}");
    assert!((a / b - 1.0).abs() < 0.02, "rr gave {a} and {b}");
}

#[test]
fn weighted_round_robin_shares_by_weight() {
    // High 4, low 1 commands per round.
    let (a, b) = share(Arbitration::Wrr, FlowPriority::High, FlowPriority::Low);
    assert!((a / b - 4.0).abs() < 0.2, "wrr high:low = {a}:{b}");
    let (a, b) = share(Arbitration::Wrr, FlowPriority::Medium, FlowPriority::Low);
    assert!((a / b - 2.0).abs() < 0.1, "wrr medium:low = {a}:{b}");
}

#[test]
fn an_urgent_queue_that_never_empties_starves_the_others() {
    let (a, b) = share(Arbitration::Wrr, FlowPriority::Urgent, FlowPriority::High);
    // The high flow gets only what it was fetched before the urgent queue
    // filled, at the first instant.
    assert!(b < a / 100.0, "urgent {a}, high {b}");
}

#[test]
fn with_room_for_every_command_priorities_barely_matter() {
    // 1024 controller slots hold both flows' 64 commands: nothing waits in
    // a submission queue beyond the instant it is submitted at, so the
    // classes only order the commands fetched at one instant.
    let run = |arb, a, b| {
        let mut c = drive(1024);
        c.host.arbitration = arb;
        c.flows = vec![
            flow("a", RwMode::RandRead, 64, 5000, a),
            flow("b", RwMode::RandRead, 64, 5000, b),
        ];
        c.sim.alone_runs = false;
        let mut r = run_config(&c, &opts()).unwrap().report;
        r.run.wall_s = 0.0;
        r.run.precondition_wall_s = 0.0;
        r.run.config_hash.clear();
        r.config = serde_json::Value::Null;
        r.sched.kind.clear();
        r
    };
    use FlowPriority::*;
    let wrr = run(Arbitration::Wrr, High, Low);
    let f = flows(&wrr);
    let (a, b) = (
        f[0]["latency_us"]["mean"].as_f64().unwrap(),
        f[1]["latency_us"]["mean"].as_f64().unwrap(),
    );
    assert!((a / b - 1.0).abs() < 0.02, "high {a} us, low {b} us");
    // Weighted round robin over classes of equal priority is round robin.
    let same = |r: &ssd_core::stats::Report| {
        let mut v = serde_json::to_value(r).unwrap();
        for f in v["flows"].as_array_mut().unwrap() {
            f["priority"] = serde_json::Value::Null;
        }
        v.to_string()
    };
    assert_eq!(
        same(&run(Arbitration::Rr, High, Low)),
        same(&run(Arbitration::Wrr, Medium, Medium))
    );
}

#[test]
fn slowdown_and_fairness_follow_their_definitions() {
    let mut c = drive(16);
    c.host.arbitration = Arbitration::Wrr;
    c.flows = vec![
        flow("reader", RwMode::RandRead, 32, 4000, FlowPriority::High),
        flow("writer", RwMode::RandWrite, 32, 4000, FlowPriority::Low),
    ];
    let r = run_config(&c, &opts()).unwrap().report;
    let f = flows(&r);
    let mut s = vec![];
    for x in &f {
        let shared = x["latency_us"]["mean"].as_f64().unwrap();
        let alone = x["alone"]["latency_us"]["mean"].as_f64().unwrap();
        assert_eq!(x["alone"]["requests"].as_f64().unwrap(), 4000.0);
        let sd = n(x, "slowdown");
        assert!((sd - shared / alone).abs() < 1e-9);
        // Sharing the drive cannot make a flow faster here.
        assert!(sd > 1.0, "{} slowdown {sd}", x["name"]);
        s.push(sd);
    }
    let fair = &r.extra["fairness"];
    let lo = s.iter().cloned().fold(f64::MAX, f64::min);
    let hi = s.iter().cloned().fold(0.0, f64::max);
    assert!((n(fair, "fairness") - lo / hi).abs() < 1e-12);
    assert!(n(fair, "fairness") > 0.0 && n(fair, "fairness") <= 1.0);
    // The alone runs start from the shared run's preconditioned drive: each
    // is what the flow run alone on a drive it preconditioned itself gives.
    for (i, x) in f.iter().enumerate() {
        let own = ssdsim::run_flow_alone(&c, i, &opts()).unwrap();
        assert_eq!(x["alone"]["latency_us"], own["latency_us"], "flow {i}");
        assert_eq!(x["alone"]["requests"], own["requests"], "flow {i}");
    }
    // The alone run of a flow is the same flow: the same requests in the
    // same range, so alone it is as fast as a one-flow configuration.
    let mut one = c.clone();
    one.flows.truncate(1);
    let r1 = run_config(&one, &opts()).unwrap().report;
    let lone = &flows(&r1)[0];
    assert!(!r1.extra.contains_key("fairness"));
    // (One flow gets the whole drive, so its range differs; both are the
    // same read-only workload on a filled drive.)
    let a = f[0]["alone"]["latency_us"]["mean"].as_f64().unwrap();
    let b = lone["latency_us"]["mean"].as_f64().unwrap();
    assert!((a / b - 1.0).abs() < 0.05, "alone {a} vs one flow {b}");
}

#[test]
fn an_open_loop_flow_keeps_its_rate_beside_a_closed_loop_one() {
    let mut c = drive(64);
    let mut paced = flow("paced", RwMode::RandRead, 1, 2000, FlowPriority::Medium);
    paced.workload.as_mut().unwrap().rate_iops = Some(10_000);
    c.flows = vec![
        paced,
        flow("bulk", RwMode::Write, 16, 1_000_000, FlowPriority::Medium),
    ];
    c.sim.time_limit = Some(Dur::from_ms(150));
    c.sim.alone_runs = false;
    let r = run_config(&c, &opts()).unwrap().report;
    let f = flows(&r);
    // 2000 requests at 10,000 per second take 0.2 s: 1500 are due in 150 ms.
    let done = n(&f[0], "requests");
    assert!(
        (1480.0..=1500.0).contains(&done),
        "paced flow completed {done}"
    );
    assert!(n(&f[1], "requests") > 1000.0);
}

#[test]
fn buffered_and_direct_flows_run_together() {
    let mut c = drive(64);
    let mut app = flow("app", RwMode::Write, 1, 4000, FlowPriority::Medium);
    {
        let w = app.workload.as_mut().unwrap();
        w.direct = false;
        w.end_fsync = true;
    }
    c.flows = vec![
        app,
        flow("db", RwMode::RandRead, 8, 4000, FlowPriority::Medium),
    ];
    c.sim.alone_runs = false;
    let r = run_config(&c, &opts()).unwrap().report;
    let f = flows(&r);
    // The buffered flow's own application statistics; the host's page
    // cache is the run's, reported once.
    assert_eq!(f[0]["app"]["writes"].as_u64(), Some(4000));
    assert!(f[0].get("page_cache").is_none());
    assert!(r.extra["page_cache"].is_object());
    assert!(r.extra["host_cpu"].is_object());
    // end_fsync: every byte it wrote reached the device.
    assert_eq!(n(&f[0], "bytes_written"), 4000.0 * 4096.0);
    assert_eq!(n(&f[1], "reads"), 4000.0);
}

#[test]
fn flows_share_one_elevator_on_sata() {
    let mut c = drive(32);
    c.host = ssdsim_host::config::HostConfig::preset(Interface::Sata6g);
    c.sched.kind = "cfq".into();
    c.flows = vec![
        flow("a", RwMode::RandRead, 16, 2000, FlowPriority::Medium),
        flow("b", RwMode::RandWrite, 16, 2000, FlowPriority::Medium),
    ];
    c.sim.alone_runs = false;
    let r = run_config(&c, &opts()).unwrap().report;
    assert_eq!(r.sched.kind, "cfq");
    assert_eq!(r.host.requests, 4000);
    // Fewer block-layer requests than the flows keep outstanding: their
    // submitters sleep, and every request still completes once.
    c.sched.nr_requests = 8;
    let r = run_config(&c, &opts()).unwrap().report;
    assert!(r.sched.blocked.count > 0);
    assert_eq!(r.host.requests, 4000);
    let f = flows(&r);
    assert_eq!(n(&f[0], "reads") + n(&f[1], "writes"), 4000.0);
    // On NVMe the same flows are refused under an elevator.
    c.host = ssdsim_host::config::HostConfig::preset(Interface::NvmeGen3x4);
    let e = c.validate().unwrap_err().to_string();
    assert!(e.starts_with("sched.kind:"), "{e}");
}

#[test]
fn same_seed_same_report() {
    let mk = || {
        let mut c = drive(8);
        c.host.arbitration = Arbitration::Wrr;
        c.flows = vec![
            flow("a", RwMode::RandRw, 16, 3000, FlowPriority::High),
            flow("b", RwMode::RandWrite, 16, 3000, FlowPriority::Low),
        ];
        let mut r = run_config(&c, &opts()).unwrap().report;
        r.run.wall_s = 0.0;
        r.run.precondition_wall_s = 0.0;
        serde_json::to_string(&r).unwrap()
    };
    assert_eq!(mk(), mk());
}

#[test]
fn shared_space_lets_every_flow_address_the_whole_drive() {
    let mut c = drive(64);
    c.sim.flow_space = FlowSpace::Shared;
    c.flows = vec![
        flow("a", RwMode::RandRead, 8, 500, FlowPriority::Medium),
        flow("b", RwMode::RandRead, 8, 500, FlowPriority::Medium),
    ];
    c.sim.alone_runs = false;
    let r = run_config(&c, &opts()).unwrap().report;
    let logical = c.validate().unwrap().logical_bytes() / 512;
    for x in flows(&r) {
        assert_eq!(n(&x, "first_sector"), 0.0);
        assert_eq!(n(&x, "sectors"), logical as f64);
    }
}

#[test]
fn bad_flow_configurations_name_their_field() {
    let load = |t: &str| {
        SsdConfig::from_toml_over(None, t, "f.toml").and_then(|c| c.validate().map(|_| c))
    };
    let base = "interface = \"nvme-gen3x4\"\n";
    // A flow's workload defaults field by field.
    let c = load(&format!(
        "{base}[[flow]]\nname = \"a\"\nworkload = {{ rw = \"randwrite\" }}\n"
    ))
    .unwrap();
    assert_eq!(c.flows[0].workload.as_ref().unwrap().iodepth, 32);
    let err = |t: &str| load(&format!("{base}{t}")).unwrap_err().to_string();
    assert!(err("[[flow]]\nname = \"a\"\n").contains("exactly one of workload"));
    assert!(err("[[flow]]\nname = \"a b\"\nworkload = {}\n").starts_with("flow.0.name"));
    let e = err("[[flow]]\nname = \"a\"\nworkload = {}\n[[flow]]\nname = \"a\"\nworkload = {}\n");
    assert!(e.starts_with("flow.1.name") && e.contains("flow.0"), "{e}");
    let e = err("[[flow]]\nname = \"a\"\npriority = \"top\"\nworkload = {}\n");
    assert!(e.contains("flow") && e.contains("priority"), "{e}");
    let e = err("[[flow]]\nname = \"a\"\nworkload = { sync = true }\n");
    assert!(e.starts_with("flow.0.workload.sync"), "{e}");
    let e = err("[host]\nwrr_weights = [4, 0, 1]\n[[flow]]\nname = \"a\"\nworkload = {}\n");
    assert!(e.starts_with("host.wrr_weights"), "{e}");
    let e = err("[personality]\nkind = \"varmail\"\n[[flow]]\nname = \"a\"\nworkload = {}\n");
    assert!(e.starts_with("personality:"), "{e}");
}

#[test]
fn per_flow_programs_add_up_to_the_drives() {
    let mut c = drive(64);
    c.sim.precondition = ssdsim_host::config::Precondition::Steady;
    c.ftl.op = 0.1;
    c.flows = vec![
        flow(
            "random",
            RwMode::RandWrite,
            16,
            30_000,
            FlowPriority::Medium,
        ),
        flow("seq", RwMode::Write, 16, 30_000, FlowPriority::Medium),
        flow("reader", RwMode::RandRead, 4, 5_000, FlowPriority::Medium),
    ];
    c.sim.alone_runs = false;
    let r = run_config(&c, &opts()).unwrap().report;
    let f = flows(&r);
    assert!(r.flash.gc_page_copies > 0, "no GC: the test checks nothing");
    let mut sum = r
        .notes
        .get("flow_relocations_of_unowned_data")
        .copied()
        .unwrap_or(0) as f64;
    for x in &f {
        sum += n(x, "flash_programs") + n(x, "relocations");
        if x["name"] == "reader" {
            assert_eq!(n(x, "host_pages_written"), 0.0);
            // Nothing written, no WAF (null, not 0).
            assert!(x["waf"].is_null(), "{x}");
        } else {
            assert_eq!(n(x, "host_pages_written"), 30_000.0);
            assert_eq!(n(x, "flash_programs"), 30_000.0);
            let waf = n(x, "waf");
            assert!((waf - (30_000.0 + n(x, "relocations")) / 30_000.0).abs() < 1e-12);
        }
    }
    assert_eq!(sum, r.flash.page_programs as f64);
    // Relocations are the drive's GC copies, split among the flows.
    let copies: f64 = f.iter().map(|x| n(x, "relocations")).sum();
    let unowned = r
        .notes
        .get("flow_relocations_of_unowned_data")
        .copied()
        .unwrap_or(0);
    assert_eq!(copies as u64 + unowned, r.flash.gc_page_copies);
    // The random writer invalidates pages scattered over many blocks: more
    // of its data is still valid in a victim than the sequential writer's.
    let (rnd, seq) = (n(&f[0], "relocations"), n(&f[1], "relocations"));
    assert!(rnd > seq, "random {rnd} vs sequential {seq} relocations");
}

#[test]
fn a_ramp_restarts_every_flows_statistics() {
    let mut c = drive(64);
    c.flows = vec![
        flow("a", RwMode::RandRead, 8, 1_000_000, FlowPriority::Medium),
        flow("b", RwMode::RandWrite, 8, 1_000_000, FlowPriority::Medium),
    ];
    c.sim.alone_runs = false;
    c.sim.time_limit = Some(Dur::from_ms(40));
    c.sim.ramp_time = Some(Dur::from_ms(10));
    let r = run_config(&c, &opts()).unwrap().report;
    let f = flows(&r);
    let total: f64 = f.iter().map(|x| n(x, "requests")).sum();
    assert_eq!(total, r.host.requests as f64);
    let pages: f64 = f.iter().map(|x| n(x, "host_pages_written")).sum();
    assert_eq!(pages, r.host.bytes_written as f64 / 4096.0);
    for x in &f {
        // The span is the 30 ms after the ramp.
        assert!((n(x, "time_s") - 0.030).abs() < 1e-9, "{x}");
    }
}

/// A flow's schedule from the library and from TOML: a stonewall flow
/// starts at the last completion of the flows before it, and an open-loop
/// flow's arrival times count from its own start (had they counted from
/// the run's, every request would be overdue when it starts and wait in
/// the flow). Bad schedule values are refused by field.
#[test]
fn a_stonewall_flow_starts_when_the_others_end_and_keeps_its_arrivals() {
    let mut c = drive(64);
    c.sim.alone_runs = false;
    let mut b = flow("b", RwMode::RandRead, 1, 50, FlowPriority::Medium);
    b.workload.as_mut().unwrap().rate_iops = Some(1000);
    b.stonewall = true;
    c.flows = vec![
        flow("a", RwMode::RandWrite, 8, 3000, FlowPriority::Medium),
        b,
    ];
    let r = run_config(&c, &opts()).unwrap().report;
    let f = flows(&r);
    let a_end = n(&f[0], "start_s") + n(&f[0], "time_s");
    assert!(a_end > 0.0);
    assert!((n(&f[1], "start_s") - a_end).abs() < 1e-12, "{:?}", f[1]);
    assert_eq!(n(&f[1], "waited_in_flow"), 0.0, "{:?}", f[1]);
    // 50 requests 1 ms apart: the last arrives 49 ms after the start.
    let t = n(&f[1], "time_s");
    assert!((0.049..0.0495).contains(&t), "b ran {t} s");

    // The same from TOML, with a start delay.
    let text = r#"
        [sim]
        alone_runs = false
        [[flow]]
        name = "a"
        workload = { rw = "randwrite", number_ios = 100 }
        [[flow]]
        name = "b"
        start_delay = "5ms"
        runtime = "2ms"
        workload = { rw = "randread", number_ios = 1000000 }
    "#;
    let c = SsdConfig::from_toml_over(Some(drive(64)), text, "t.toml").unwrap();
    assert!(c.flows[1].start_delay == Some(Dur::from_ms(5)));
    let r = run_config(&c, &opts()).unwrap().report;
    let f = flows(&r);
    assert!((n(&f[1], "start_s") - 0.005).abs() < 1e-12);
    // It submits for 2 ms; its last request completes within one latency.
    let t = n(&f[1], "time_s");
    let max = f[1]["latency_us"]["max"].as_f64().unwrap() / 1e6;
    assert!(t >= 0.002 && t <= 0.002 + max, "b ran {t} s");
    let bad = text.replace("runtime = \"2ms\"", "runtime = \"0s\"");
    let e = SsdConfig::from_toml_over(Some(drive(64)), &bad, "t.toml")
        .and_then(|c| c.validate().map(|_| ()))
        .unwrap_err()
        .to_string();
    assert!(e.contains("flow.1.runtime"), "{e}");
}

#[test]
fn file_level_flows_share_one_host() {
    let cfg = |flows: usize| {
        let mut t = String::from("[sim]\nseed = 3\ntime_limit = \"40ms\"\nalone_runs = false\n");
        for i in 0..flows {
            t.push_str(&format!(
                "[[flow]]\nname = \"mail{i}\"\npersonality = {{ kind = \"varmail\", level = \"file\" }}\n"
            ));
        }
        SsdConfig::from_toml_over(None, &t, "f.toml").unwrap()
    };
    let run = |c: &SsdConfig| {
        let mut r = run_config(c, &opts()).unwrap().report;
        r.run.wall_s = 0.0;
        r.run.precondition_wall_s = 0.0;
        r
    };
    let one = run(&cfg(1));
    let two = run(&cfg(2));
    // One cache for the host: the application memory it leaves out is both
    // applications', and its section is the run's, not a flow's.
    let app = |r: &ssd_core::stats::Report| {
        r.extra["page_cache"]["memory"]["application_bytes"]
            .as_u64()
            .unwrap()
    };
    assert_eq!(app(&two), 2 * app(&one));
    for f in flows(&two) {
        assert!(f.get("page_cache").is_none());
        // Each flow's own application, calls and file system.
        assert!(n(&f["app"], "calls") > 100.0, "{}", f["app"]);
        assert!(n(&f["app"]["latency_us"]["fsync"], "count") > 0.0);
        assert!(f["file_system"].is_object());
        assert!(n(&f, "writes") > 0.0);
    }
    // The text report: each flow's calls, then the host's one cache.
    let t = ssdsim::output::text(&two);
    for name in ["mail0", "mail1"] {
        assert!(t.contains(&format!("app      {name}: ")), "{t}");
    }
    assert_eq!(t.matches("\ncache    ").count(), 1, "{t}");
    // Same configuration and seed, same report.
    let again = run(&cfg(2));
    assert_eq!(
        serde_json::to_string(&two).unwrap(),
        serde_json::to_string(&again).unwrap()
    );
}

#[test]
fn a_buffered_flow_must_start_on_a_host_page() {
    // 2 KiB NAND pages split in three: a share may start mid 4 KiB page,
    // which the host's page cache cannot address.
    let mut c = SsdConfig {
        nand: ssd_core::config::NandConfig::preset("chip1").unwrap(),
        ..SsdConfig::default()
    };
    let buffered = |name: &str| {
        let mut f = flow(name, RwMode::Write, 1, 100, FlowPriority::Medium);
        f.workload.as_mut().unwrap().direct = false;
        f
    };
    c.flows = vec![buffered("a"), buffered("b"), buffered("c")];
    let e = c.validate().unwrap_err().to_string();
    assert!(e.starts_with("flow.1") && e.contains("4 KiB page"), "{e}");
    // Direct flows address sectors: the same split is theirs to use.
    for f in &mut c.flows {
        f.workload.as_mut().unwrap().direct = true;
    }
    assert!(c.validate().is_ok());
    // Shared space starts every flow at sector 0.
    for f in &mut c.flows {
        f.workload.as_mut().unwrap().direct = false;
    }
    c.sim.flow_space = FlowSpace::Shared;
    assert!(c.validate().is_ok());
}

#[test]
fn two_file_systems_are_not_made_on_one_shared_drive() {
    let load = |space: &str| {
        let t = format!(
            "[sim]\nflow_space = \"{space}\"\n[[flow]]\nname = \"a\"\npersonality = {{ kind = \"varmail\", level = \"file\" }}\n[[flow]]\nname = \"b\"\nworkload = {{ rw = \"write\" }}\n[[flow]]\nname = \"c\"\npersonality = {{ kind = \"webserver\", level = \"file\" }}\n"
        );
        SsdConfig::from_toml_over(None, &t, "f.toml").and_then(|c| c.validate().map(|_| ()))
    };
    let e = load("shared").unwrap_err().to_string();
    assert!(
        e.starts_with("flow.2.personality") && e.contains("flow.0"),
        "{e}"
    );
    load("split").unwrap();
}
