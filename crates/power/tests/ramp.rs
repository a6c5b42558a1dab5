//! The ramp (`sim.ramp_time`) is in no energy figure: the energy of a ramped
//! run is the energy of the same run without a ramp over `[ramp end, end)`,
//! its mean power that energy over the measured time, and an idle ramp costs
//! idle power over the ramp exactly.

use power::PowerObserver;
use ssd_core::addr::DieId;
use ssd_core::ftl::{OpKind, Purpose};
use ssd_core::observer::Observer;
use ssd_core::sched::Noop;
use ssd_core::stats::Report;
use ssd_core::units::{Dur, Joules, SimTime};
use ssd_core::Simulation;
use ssdsim_host::config::SsdConfig;
use ssdsim_host::workload::{FioGen, HostRequest, IoOp, RwMode, Timing, VecSource, WorkloadConfig};

const MS: u64 = 1_000_000;

#[track_caller]
fn assert_rel(a: f64, b: f64, tol: f64, what: &str) {
    assert!(
        (a - b).abs() <= tol * a.abs().max(b.abs()),
        "{what}: {a} vs {b} (relative {:e})",
        (a - b).abs() / a.abs().max(b.abs())
    );
}

/// A small drive (8 channels x 1 chip) busy with random reads and writes
/// (garbage collection included) until the time limit, at QD 8.
fn busy(per_op: bool) -> SsdConfig {
    let mut c = SsdConfig::default();
    c.nand.blocks_per_plane = 64;
    c.workload = WorkloadConfig {
        rw: RwMode::RandRw,
        number_ios: Some(1 << 40),
        iodepth: 8,
        ..Default::default()
    };
    c.sim.time_limit = Some(Dur::from_ms(40));
    if per_op {
        // Park et al.'s per-operation energies: an operation straddling the
        // ramp's end is charged pro rata.
        c.power.flash_read_energy = Some(Joules(2e-6));
        c.power.flash_program_energy = Some(Joules(30e-6));
        c.power.flash_erase_energy = Some(Joules(200e-6));
    }
    c
}

fn run(c: &SsdConfig, ramp: Option<Dur>) -> (Report, PowerObserver) {
    let mut c = c.clone();
    c.sim.ramp_time = ramp;
    let s = c.validate().unwrap();
    let ftl = ftl::PageFtl::new(&s.config.ftl, &s.shape());
    let src = FioGen::new(&c.workload, s.logical_bytes(), c.sim.seed);
    let obs = PowerObserver::new(&s, Dur::from_ms(1)).unwrap();
    let mut sim = Simulation::new(s, ftl, src, Noop::new(1024, true), obs);
    sim.precondition();
    let r = sim.run().unwrap();
    assert!(!sim.in_ramp());
    (r, sim.obs)
}

/// Energy of the unramped run's time series from `from` on.
fn series_energy_from(o: &PowerObserver, from: u64) -> f64 {
    let samples = o.samples();
    samples
        .iter()
        .filter(|s| s.time_s >= from as f64 * 1e-9 - 1e-12)
        .map(|s| s.total_w * s.len_s)
        .sum()
}

#[test]
fn a_ramped_run_counts_the_energy_after_the_ramp_only() {
    for per_op in [false, true] {
        let c = busy(per_op);
        let ramp = 10 * MS;
        let (r0, o0) = run(&c, None);
        let (r1, o1) = run(&c, Some(Dur(ramp)));
        // The ramp changes what is measured, not what is simulated.
        assert_eq!(r0.run.events, r1.run.events, "same events");
        assert_eq!(o0.window_ns(), o1.window_ns(), "same end");
        assert!(r0.host.requests > r1.host.requests && r1.host.requests > 1000);
        assert_eq!(o1.window_start_ns(), ramp);
        let e0 = o0.energy().unwrap();
        let e1 = o1.energy().unwrap();
        let end = o0.window_ns().unwrap();
        let want = series_energy_from(&o0, ramp);
        assert!(want < 0.9 * e0.total, "the ramp held energy");
        assert_rel(
            e1.total,
            want,
            1e-9,
            "ramped energy = unramped over the window",
        );
        // The ramped run's own series covers the window, from the ramp's end.
        let s1 = o1.samples();
        assert_eq!(s1[0].time_s, ramp as f64 * 1e-9);
        assert_eq!(s1.len(), 30);
        let series1: f64 = s1.iter().map(|s| s.total_w * s.len_s).sum();
        assert_rel(series1, e1.total, 1e-9, "ramped series = ramped energy");
        // Sample by sample, the two series agree after the ramp.
        for (a, b) in s1.iter().zip(&o0.samples()[10..]) {
            assert_eq!(a.time_s, b.time_s);
            assert_rel(a.total_w, b.total_w, 1e-9, "sample");
        }
        // Mean power: energy over the measured time.
        let w1 = e1.state_s.window_s;
        assert_eq!(w1, (end - ramp) as f64 * 1e-9);
        assert!(
            (r1.host.sim_time_s - w1).abs() < 1e-12,
            "{}",
            r1.host.sim_time_s
        );
        let p1 = o1.power_stats().unwrap();
        assert_rel(p1.mean, e1.total / w1, 1e-15, "mean power");
        assert!(p1.min <= p1.mean && p1.mean <= p1.max);
        // States tile the window; idle and standby are drawn over it only.
        let st = &e1.state_s;
        let f = &st.flash;
        let die_s = f.read + f.program + f.erase + f.transfer + f.idle;
        assert_rel(die_s, 8.0 * w1, 1e-12, "die states");
        assert_rel(st.cpu.normal + st.cpu.idle + st.cpu.slow, w1, 1e-12, "cpu");
        assert_rel(st.dram.active + st.dram.standby, w1, 1e-12, "dram");
        assert_rel(st.host.active + st.host.idle, w1, 1e-12, "link");
        let parts = e1.flash.total + e1.cpu + e1.dram + e1.bus + e1.host;
        assert_rel(parts, e1.total, 1e-12, "parts");
        let chips: f64 = e1.flash.per_chip.iter().map(|c| c.total).sum();
        assert_rel(chips, e1.flash.total, 1e-12, "per chip");
        assert!(e1.flash.program > 0.0 && e1.flash.read > 0.0);
        // The efficiency figures follow: J/MB over the measured bytes.
        let rep = o1.power_report(&r1).unwrap();
        let bytes = (r1.host.bytes_read + r1.host.bytes_written) as f64;
        let jpm = rep.efficiency.joules_per_mb.unwrap();
        assert_rel(jpm, e1.total / bytes * 1e6, 1e-12, "J/MB");
        assert_rel(rep.efficiency.ai, r1.host.iops / p1.mean, 1e-12, "AI");
    }
}

/// Idle power of the default drive over `ns` from the start of an idle
/// stretch: dies, DRAM standby, host link, and the CPU idle then slow.
fn idle_j(c: &SsdConfig, ns: u64) -> f64 {
    let p = &c.power;
    let s = c.validate().unwrap();
    let dies = s.geometry.total_dies() as f64;
    let base = dies * p.flash_idle_current.0 * p.voltage.0
        + s.dram_standby_power().unwrap()
        + p.link_idle_power.0;
    let idle_ns = p.cpu_slow_after.map_or(ns, |d| d.0.min(ns));
    base * ns as f64 * 1e-9
        + p.cpu_idle_power.0 * idle_ns as f64 * 1e-9
        + p.cpu_slow_power.0 * (ns - idle_ns) as f64 * 1e-9
}

/// A ramp in which the drive only idles (the first request comes after it):
/// the ramped run's energy is the unramped one's less idle power over the
/// ramp, and the idle stretch after the ramp is idle power exactly.
#[test]
fn an_idle_ramp_costs_idle_power_over_it() {
    let mut c = SsdConfig::default();
    c.nand.blocks_per_plane = 64;
    let reqs: Vec<HostRequest> = (0..40)
        .map(|i| HostRequest {
            arrival: SimTime(25 * MS + i * 100_000),
            op: if i % 2 == 0 { IoOp::Write } else { IoOp::Read },
            lba: i * 8,
            sectors: 8,
            stream: 0,
            tag: 0,
            sync: false,
            placement: ssd_core::workload::Placement::NONE,
        })
        .collect();
    let go = |ramp: Option<u64>| {
        let mut c = c.clone();
        c.sim.ramp_time = ramp.map(Dur);
        let s = c.validate().unwrap();
        let ftl = ftl::PageFtl::new(&s.config.ftl, &s.shape());
        let src = VecSource::new(reqs.clone(), Timing::OpenLoop);
        let obs = PowerObserver::new(&s, Dur::from_ms(1)).unwrap();
        let mut sim = Simulation::new(s, ftl, src, Noop::new(1024, true), obs);
        sim.run().unwrap();
        sim.obs
    };
    let o0 = go(None);
    let ramp = 10 * MS;
    let o1 = go(Some(ramp));
    let (e0, e1) = (o0.energy().unwrap(), o1.energy().unwrap());
    assert!(e1.total > 0.0);
    assert_rel(e0.total - e1.total, idle_j(&c, ramp), 1e-9, "idle ramp");
    // Idle from the ramp's end to the first request at 25 ms: the ramped
    // series' first 15 samples are idle power (the CPU's slow mode counts
    // from the start of the idle stretch, in the ramp, not from its end).
    let s1 = o1.samples();
    let idle: f64 = s1[..15].iter().map(|s| s.total_w * s.len_s).sum();
    assert_rel(
        idle,
        idle_j(&c, 25 * MS) - idle_j(&c, ramp),
        1e-9,
        "idle window",
    );
}

/// The observer alone: an operation straddling the ramp's end counts from
/// it, pro rata under a per-operation energy; the idle baselines from it.
#[test]
fn an_operation_across_the_ramp_end_is_split() {
    for per_op in [false, true] {
        let mut c = SsdConfig::default();
        if per_op {
            c.power.flash_erase_energy = Some(Joules(1e-3));
        }
        let s = c.validate().unwrap();
        let mut o = PowerObserver::new(&s, Dur::from_ms(1)).unwrap();
        let (h, g) = (Purpose::Host, Purpose::Gc);
        // Wholly in the ramp, then across its end (3 ms, a quarter after it).
        o.flash_op(DieId(0), OpKind::Read, h, 1, SimTime(0), SimTime(MS));
        o.flash_op(DieId(1), OpKind::Erase, g, 1, SimTime(0), SimTime(4 * MS));
        o.measure_start(SimTime(3 * MS));
        // Reported after it, begun before it (half of it after).
        o.flash_op(DieId(2), OpKind::Erase, g, 1, SimTime(MS), SimTime(5 * MS));
        o.finish(SimTime(13 * MS));
        let e = o.energy().unwrap();
        let p = &c.power;
        let erase_w = p.flash_erase_current.0 * p.voltage.0;
        let erase = if per_op {
            1e-3 * (0.25 + 0.5)
        } else {
            erase_w * 3e-3
        };
        assert_rel(e.flash.erase, erase, 1e-12, "erase");
        assert_eq!(e.flash.read, 0.0);
        assert_rel(e.by_purpose["gc"], erase, 1e-12, "gc");
        assert_eq!(e.state_s.window_s, 10e-3);
        assert_rel(e.state_s.flash.erase, 3e-3, 1e-12, "erase time");
        let dies = s.geometry.total_dies() as f64;
        assert_rel(
            e.state_s.flash.idle,
            dies * 10e-3 - 3e-3,
            1e-12,
            "idle time",
        );
        let samples = o.samples();
        assert_eq!(samples.len(), 10);
        assert_eq!(samples[0].time_s, 3e-3);
        let sum: f64 = samples.iter().map(|s| s.total_w * s.len_s).sum();
        assert_rel(sum, e.total, 1e-12, "series");
    }
}
