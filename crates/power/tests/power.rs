//! Integration tests of the power model: hand-computed cases driven directly on
//! the observer, and end-to-end runs of the engine with the page-mapping FTL.

use power::PowerObserver;
use ssd_core::addr::{ChannelId, DieId};
use ssd_core::ftl::{OpKind, Purpose};
use ssd_core::observer::{Observer, Tee, XferKind};
use ssd_core::sched::Noop;
use ssd_core::stats::Report;
use ssd_core::units::{Dur, SimTime, Watts};
use ssd_core::Simulation;
use ssdsim_host::config::{Precondition, SsdConfig};
use ssdsim_host::workload::{FioGen, HostRequest, IoOp, RwMode, Timing, VecSource, WorkloadConfig};

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-10 * a.abs().max(b.abs()).max(1e-30)
}

#[track_caller]
fn assert_close(a: f64, b: f64, what: &str) {
    assert!(close(a, b), "{what}: {a} != {b}");
}

fn t(ns: u64) -> SimTime {
    SimTime(ns)
}

/// A small lee2011 / chip2 drive (8 channels x 1 chip) that preconditions fast.
fn small(rw: RwMode, n: u64) -> SsdConfig {
    let mut c = SsdConfig::default();
    c.nand.blocks_per_plane = 64;
    c.workload = WorkloadConfig {
        rw,
        number_ios: Some(n),
        iodepth: 8,
        ..Default::default()
    };
    c
}

fn run(c: &SsdConfig, sample: Dur) -> (Report, PowerObserver) {
    let s = c.validate().unwrap();
    let ftl = ftl::PageFtl::new(&s.config.ftl, &s.shape());
    let src = FioGen::new(&c.workload, s.logical_bytes(), c.sim.seed);
    let obs = PowerObserver::new(&s, sample).unwrap();
    let mut sim = Simulation::new(s, ftl, src, Noop::new(1024, true), obs);
    sim.precondition();
    let r = sim.run().unwrap();
    (r, sim.obs)
}

fn check_consistency(o: &PowerObserver) {
    let e = o.energy().unwrap();
    let w = e.state_s.window_s;
    let s = &e.state_s;
    let dies = 8.0;
    let f = &s.flash;
    assert_close(
        f.read + f.program + f.erase + f.transfer + f.idle,
        dies * w,
        "die states sum to dies x window",
    );
    assert_close(s.channels.busy + s.channels.idle, 8.0 * w, "channel states");
    assert_close(s.cpu.normal + s.cpu.idle + s.cpu.slow, w, "cpu states");
    assert_close(s.dram.active + s.dram.standby, w, "dram states");
    assert_close(s.host.active + s.host.idle, w, "link states");
    let fl = &e.flash;
    assert_close(
        fl.read + fl.program + fl.erase + fl.transfer + fl.idle,
        fl.total,
        "flash parts",
    );
    assert_close(
        fl.per_chip.iter().map(|c| c.total).sum(),
        fl.total,
        "per-chip sum",
    );
    assert_close(
        e.by_purpose.values().sum::<f64>() + fl.idle,
        fl.total,
        "by purpose + idle = flash",
    );
    assert_close(
        e.cpu_modes.normal + e.cpu_modes.idle + e.cpu_modes.slow,
        e.cpu,
        "cpu modes",
    );
    assert_close(
        fl.total + e.cpu + e.dram + e.bus + e.host,
        e.total,
        "total = sum of parts",
    );
    // The time series integrates to the same energy.
    let series: f64 = o.samples().iter().map(|s| s.total_w * s.len_s).sum();
    assert!(
        (series - e.total).abs() <= 1e-9 * e.total,
        "series {series} vs total {}",
        e.total
    );
}

mod hand_computed {
    use super::*;

    /// A few isolated operations on an otherwise idle lee2011 / chip2 drive over a
    /// 10 ms window; every joule computed by hand from Lee & Won table 1.
    #[test]
    fn isolated_operations_over_a_fixed_window() {
        let mut c = SsdConfig::default();
        c.power.link_active_power = Watts(0.1);
        c.power.link_idle_power = Watts(0.01);
        let s = c.validate().unwrap();
        let mut o = PowerObserver::new(&s, Dur::from_ms(1)).unwrap();
        let h = Purpose::Host;
        // die 0: read = command 1 us, tR 25 us, data out 100 us.
        o.link_xfer(0, t(0), t(5_000));
        o.cpu_busy(t(10_000), t(20_000));
        o.dram_access(10, t(20_000), t(20_500));
        o.bus_xfer(
            ChannelId(0),
            DieId(0),
            XferKind::Command,
            h,
            7,
            t(1_000),
            t(2_000),
        );
        o.flash_op(DieId(0), OpKind::Read, h, 1, t(2_000), t(27_000));
        o.bus_xfer(
            ChannelId(0),
            DieId(0),
            XferKind::DataOut,
            h,
            4096,
            t(27_000),
            t(127_000),
        );
        // die 1: 2-plane program: data in 100 us, tPROG 200 us.
        o.bus_xfer(
            ChannelId(1),
            DieId(1),
            XferKind::DataIn,
            h,
            8192,
            t(0),
            t(100_000),
        );
        o.flash_op(DieId(1), OpKind::Program, h, 2, t(100_000), t(300_000));
        // die 2: GC erase: command 1 us, tBERS 1.5 ms.
        let g = Purpose::Gc;
        o.bus_xfer(
            ChannelId(2),
            DieId(2),
            XferKind::Command,
            g,
            7,
            t(0),
            t(1_000),
        );
        o.flash_op(DieId(2), OpKind::Erase, g, 1, t(1_000), t(1_501_000));
        o.request_done(IoOp::Read, 4096, t(0), t(127_000));
        o.io_active(t(0), t(400_000));
        o.finish(t(10_000_000));
        let e = o.energy().unwrap();

        let v = 3.3;
        let op = 0.015 * v; // 15 mA at 3.3 V
        let read = op * 25e-6;
        let program = 2.0 * op * 200e-6;
        let erase = op * 1.5e-3;
        let transfer = op * (1e-6 + 100e-6 + 100e-6 + 1e-6);
        let busy = 126e-6 + 300e-6 + 1501e-6;
        let idle = 0.001 * v * (8.0 * 10e-3 - busy);
        assert_close(e.flash.read, read, "read");
        assert_close(e.flash.program, program, "program");
        assert_close(e.flash.erase, erase, "erase");
        assert_close(e.flash.transfer, transfer, "transfer");
        assert_close(e.flash.idle, idle, "idle");
        assert_close(
            e.flash.total,
            read + program + erase + transfer + idle,
            "flash",
        );
        assert_close(e.bus, 0.000_05 * v * 202e-6, "bus");
        assert_close(e.cpu_modes.normal, 0.259 * 400e-6, "cpu normal");
        assert_close(e.cpu_modes.idle, 0.124 * (10e-3 - 400e-6), "cpu idle");
        assert_eq!(e.cpu_modes.slow, 0.0);
        assert_close(e.dram, 0.080 * 10e-3 + 0.080 * 0.5e-6, "dram");
        assert_close(e.host, 0.1 * 5e-6 + 0.01 * (10e-3 - 5e-6), "host link");
        assert_close(e.by_purpose["gc"], erase + op * 1e-6, "gc part");
        assert_close(
            e.by_purpose["host"],
            read + program + op * 201e-6,
            "host part",
        );
        let chip0 = &e.flash.per_chip[0];
        assert_close(
            chip0.total,
            read + op * 101e-6 + 0.001 * v * (10e-3 - 126e-6),
            "chip 0",
        );
        assert_eq!((chip0.channel, chip0.way), (0, 0));
        assert_close(e.flash.per_chip[7].total, 0.001 * v * 10e-3, "idle chip 7");
        check_consistency(&o);
        // The 1 ms samples: the first holds everything but the erase's tail.
        let smp = o.samples();
        assert_eq!(smp.len(), 10);
        assert_eq!(smp[0].iops, 1000.0);
    }

    /// An idle drive costs exactly its idle power times the time, in every sample.
    #[test]
    fn idle_only_costs_idle_power_times_time() {
        let mut c = SsdConfig::default();
        c.power.link_idle_power = Watts(0.02);
        let s = c.validate().unwrap();
        let mut o = PowerObserver::new(&s, Dur::from_ms(1)).unwrap();
        o.finish(t(2_500_000_000));
        let e = o.energy().unwrap();
        let p_idle = 8.0 * 0.001 * 3.3 + 0.080 + 0.124 + 0.02;
        assert_close(e.total, p_idle * 2.5, "idle energy");
        let p = o.power_stats().unwrap();
        assert_close(p.mean, p_idle, "mean");
        assert!(close(p.min, p_idle) && close(p.max, p_idle), "{p:?}");
        assert!(p.std < 1e-12, "{}", p.std);
        check_consistency(&o);
    }

    /// With a slow-mode timeout, idle time beyond it is charged at slow power.
    #[test]
    fn cpu_slow_after_timeout() {
        let mut c = SsdConfig::default();
        c.power.cpu_slow_after = Some(Dur::from_ms(1));
        let s = c.validate().unwrap();
        let mut o = PowerObserver::new(&s, Dur::from_ms(1)).unwrap();
        o.io_active(t(0), t(100_000));
        o.cpu_wakeup(t(5_000_000), t(5_050_000));
        o.cpu_busy(t(5_050_000), t(5_060_000));
        o.request_done(IoOp::Write, 4096, t(5_000_000), t(5_200_000));
        o.io_active(t(5_000_000), t(5_200_000));
        o.finish(t(5_200_000));
        let e = o.energy().unwrap();
        assert_close(e.state_s.cpu.normal, 300e-6, "normal");
        assert_close(e.state_s.cpu.idle, 1e-3, "idle");
        assert_close(e.state_s.cpu.slow, 5e-3 - 100e-6 - 1e-3, "slow");
        assert_close(e.cpu_modes.slow, 0.033 * (3.9e-3), "slow energy");
        assert_eq!(e.state_s.cpu.wakeups, 1);
        check_consistency(&o);
    }

    /// Background CPU work outside any request is normal mode too; bookings
    /// inside a busy period count once.
    #[test]
    fn cpu_union_of_requests_and_background_work() {
        let s = SsdConfig::default().validate().unwrap();
        let mut o = PowerObserver::new(&s, Dur::from_ms(1)).unwrap();
        o.cpu_busy(t(1_000), t(2_000)); // inside the request
        o.request_done(IoOp::Read, 512, t(0), t(3_000));
        o.cpu_busy(t(3_500), t(4_000)); // inside, after a completion
        o.request_done(IoOp::Read, 512, t(0), t(5_000));
        o.io_active(t(0), t(5_000));
        o.cpu_busy(t(8_000), t(9_000)); // background GC bookkeeping
        o.finish(t(10_000));
        let e = o.energy().unwrap();
        assert_close(e.state_s.cpu.normal, 6e-6, "normal = request + background");
        assert_close(e.state_s.cpu.idle, 4e-6, "idle");
    }
}

mod per_operation_form {
    use super::*;

    /// park-slc: flash energy per kind is exactly the per-op table x op counts.
    #[test]
    fn energy_equals_table_times_counts() {
        let mut c = SsdConfig::with_nand("park-slc").unwrap();
        c.nand.blocks_per_plane = 64;
        c.sim.precondition = Precondition::Fill;
        c.sim.drain = true;
        c.workload = WorkloadConfig {
            rw: RwMode::RandRw,
            number_ios: Some(3000),
            iodepth: 4,
            ..Default::default()
        };
        let (r, o) = run(&c, Dur::from_ms(1));
        let e = o.energy().unwrap();
        assert!(r.flash.block_erases > 0, "the run must erase");
        assert_close(e.flash.read, 4.72e-6 * r.flash.page_reads as f64, "read");
        assert_close(
            e.flash.program,
            38.04e-6 * r.flash.page_programs as f64,
            "program",
        );
        assert_close(
            e.flash.erase,
            527.68e-6 * r.flash.block_erases as f64,
            "erase",
        );
        // Transfers are inside the per-op figures: the chips add nothing for them.
        assert_eq!(e.flash.transfer, 0.0);
        assert!(e.bus > 0.0);
        check_consistency(&o);
    }
}

mod end_to_end {
    use super::*;

    #[test]
    fn components_and_states_add_up() {
        for rw in [RwMode::RandWrite, RwMode::RandRead, RwMode::Write] {
            let n = if rw == RwMode::RandWrite {
                15_000
            } else {
                3000
            };
            let mut c = small(rw, n);
            c.sim.precondition = Precondition::Fill;
            let (r, o) = run(&c, Dur::from_us(100));
            check_consistency(&o);
            let e = o.energy().unwrap();
            assert_close(e.state_s.window_s, r.host.sim_time_s, "window = run");
            assert!(e.flash.read + e.flash.program > 0.0);
            if rw == RwMode::RandWrite {
                assert!(e.by_purpose["gc"] > 0.0, "random writes on a full drive GC");
            }
        }
    }

    /// A run cut by `sim.time_limit` stops with transfers and array operations
    /// in flight on every die: what began before the cut is charged up to it
    /// (the engine reports it at the cut), nothing after it. With the cut on a
    /// sample boundary, every sample before it equals the same run's without
    /// the limit, and every account still adds up.
    #[test]
    fn time_limit_cut_charges_in_flight_work_up_to_the_cut() {
        for (rw, buckets) in [
            (RwMode::RandRead, 10),
            (RwMode::RandWrite, 25),
            (RwMode::RandRw, 77),
        ] {
            let mut c = small(rw, 3000);
            c.sim.precondition = Precondition::Fill;
            let (full_r, full) = run(&c, Dur::from_us(100));
            let limit_ns = buckets as u64 * 100_000;
            assert!(full_r.host.sim_time_s > 2.0 * limit_ns as f64 * 1e-9);
            c.sim.time_limit = Some(Dur(limit_ns));
            let (r, o) = run(&c, Dur::from_us(100));
            assert!(r.host.requests > 0 && r.host.requests < 3000);
            check_consistency(&o);
            let e = o.energy().unwrap();
            assert_close(e.state_s.window_s, limit_ns as f64 * 1e-9, "window = limit");
            assert_close(e.state_s.window_s, r.host.sim_time_s, "window = run");
            let (a, b) = (o.samples(), full.samples());
            assert_eq!(a.len(), buckets, "{rw:?}");
            for (i, (x, y)) in a.iter().zip(b).enumerate() {
                for (cx, cy) in x.component_w.iter().zip(y.component_w) {
                    assert!(
                        (cx - cy).abs() <= 1e-9 * cy.abs().max(1e-3),
                        "{rw:?} sample {i}: {x:?} vs {y:?}"
                    );
                }
            }
        }
    }

    #[test]
    fn same_seed_same_energy() {
        let mut c = small(RwMode::RandRw, 3000);
        c.sim.precondition = Precondition::Fill;
        let (r1, a) = run(&c, Dur::from_us(250));
        let (r2, b) = run(&c, Dur::from_us(250));
        assert_eq!(a.energy().unwrap(), b.energy().unwrap());
        assert_eq!(a.samples(), b.samples());
        assert_eq!(a.finish_report(&r1).unwrap(), b.finish_report(&r2).unwrap());
    }

    #[test]
    fn report_sections_and_derived_metrics() {
        let c = small(RwMode::RandWrite, 2000);
        let (r, o) = run(&c, Dur::from_ms(1));
        let m = o.finish_report(&r).unwrap();
        let e = &m["energy_j"];
        for k in [
            "total",
            "flash",
            "cpu",
            "dram",
            "bus",
            "host",
            "by_purpose",
            "drain",
        ] {
            assert!(e.get(k).is_some(), "energy_j.{k}");
        }
        for k in ["read", "program", "erase", "transfer", "idle", "per_chip"] {
            assert!(e["flash"].get(k).is_some(), "energy_j.flash.{k}");
        }
        let total = e["total"].as_f64().unwrap();
        let mean = m["power_w"]["mean"].as_f64().unwrap();
        assert_close(mean, total / r.host.sim_time_s, "mean power");
        let ai = m["efficiency"]["ai"].as_f64().unwrap();
        assert_close(ai, r.host.iops / mean, "AI");
        let mb = r.host.bytes_written as f64 / 1e6;
        let jpm = m["efficiency"]["joules_per_mb"].as_f64().unwrap();
        assert_close(jpm, total / mb, "J/MB");
        let gb = m["efficiency"]["gb_per_50wh_battery"].as_f64().unwrap();
        assert_close(gb, 180_000.0 / total * mb / 1e3, "GB per 50 Wh");
        // IOPS in the series add up to the request count.
        let reqs: f64 = o.samples().iter().map(|s| s.iops * s.len_s).sum();
        assert!((reqs - r.host.requests as f64).abs() < 1e-6, "{reqs}");
    }

    #[test]
    fn drain_is_accumulated_separately() {
        let mut c = small(RwMode::RandWrite, 3000);
        c.sim.precondition = Precondition::Fill;
        c.sim.drain = true;
        c.ftl.background_gc_blocks = 6;
        let (_r, o) = run(&c, Dur::from_us(100));
        check_consistency(&o);
        let e = o.energy().unwrap();
        let d = &e.drain;
        let start = d.start_s.expect("drain started");
        assert_close(
            start + d.duration_s,
            e.state_s.window_s,
            "drain ends the window",
        );
        assert!(d.total > 0.0 && d.total < e.total, "{d:?}");
        assert_close(
            d.flash + d.cpu + d.dram + d.bus + d.host,
            d.total,
            "drain parts",
        );
        // After the last request no host flash work is left.
        assert_eq!(d.by_purpose["host"], 0.0);
    }

    #[test]
    fn long_run_coarsens_the_series_and_says_so() {
        let c = small(RwMode::RandRead, 3000);
        let s = c.validate().unwrap();
        let ftl = ftl::PageFtl::new(&s.config.ftl, &s.shape());
        let src = FioGen::new(&c.workload, s.logical_bytes(), 1);
        let obs = PowerObserver::with_sample_cap(&s, Dur(1_000), 64).unwrap();
        let mut sim = Simulation::new(s, ftl, src, Noop::new(1024, true), obs);
        let r = sim.run().unwrap();
        let p = sim.obs.power_stats().unwrap();
        assert!(p.coarsened > 0 && p.samples <= 64, "{p:?}");
        assert_close(p.sample_s, 1e-6 * (1u64 << p.coarsened) as f64, "interval");
        let m = sim.obs.finish_report(&r).unwrap();
        assert_eq!(m["power_w"]["coarsened"], p.coarsened);
        check_consistency(&sim.obs);
    }

    #[test]
    fn csv_and_plots_are_written() {
        let c = small(RwMode::RandRw, 1000);
        let (_r, o) = run(&c, Dur::from_us(500));
        let dir = std::env::temp_dir().join(format!("ssdsim-power-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let csv = dir.join("p.csv");
        o.write_csv(&csv).unwrap();
        let text = std::fs::read_to_string(&csv).unwrap();
        let mut lines = text.lines();
        assert_eq!(
            lines.next().unwrap(),
            "time_s,total_w,flash_w,cpu_w,dram_w,bus_w,host_w,iops,mbps"
        );
        assert_eq!(lines.count(), o.samples().len());
        #[cfg(feature = "plot")]
        for f in ["power.svg", "breakdown.svg"] {
            let p = dir.join(f);
            if f == "power.svg" {
                o.plot_power(&p).unwrap();
            } else {
                o.plot_breakdown(&p).unwrap();
            }
            let svg = std::fs::read_to_string(&p).unwrap();
            assert!(svg.contains("<svg") && svg.contains("</svg>"), "{f}");
        }
        let bad = o.write_csv(dir.join("no/such/dir/p.csv")).unwrap_err();
        assert!(bad.to_string().contains("no/such/dir/p.csv"), "{bad}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn bad_parameters_name_the_field() {
        let mut c = SsdConfig::default();
        c.power.cpu_idle_power = Watts(-1.0);
        // The configuration's validation refuses it, naming the field (the
        // observer checks again for settings built another way).
        let e = c.validate().unwrap_err();
        assert!(e.to_string().contains("power.cpu_idle_power"), "{e}");
        let s = SsdConfig::default().validate().unwrap();
        assert!(PowerObserver::new(&s, Dur(0)).is_err());
    }
}

mod slow_mode {
    use super::*;

    #[derive(Default)]
    struct Done(Vec<(u64, u64)>);
    impl Observer for Done {
        fn request_done(&mut self, _op: IoOp, _b: u64, a: SimTime, d: SimTime) {
            self.0.push((a.0, d.0));
        }
    }

    fn two_writes(slow: bool) -> (Vec<(u64, u64)>, PowerObserver) {
        let mut c = SsdConfig::default();
        if slow {
            c.power.cpu_slow_after = Some(Dur::from_ms(1));
            c.power.cpu_wakeup_latency = Dur::from_us(50);
        }
        let s = c.validate().unwrap();
        let req = |at: u64, lba: u64| HostRequest {
            arrival: SimTime(at),
            op: IoOp::Write,
            lba,
            sectors: 8,
            stream: 0,
            tag: 0,
            sync: false,
            placement: ssd_core::workload::Placement::NONE,
        };
        let src = VecSource::new(vec![req(0, 0), req(5_000_000, 64)], Timing::OpenLoop);
        let obs = Tee(
            PowerObserver::new(&s, Dur::from_ms(1)).unwrap(),
            Done::default(),
        );
        let ftl = ftl::PageFtl::new(&s.config.ftl, &s.shape());
        let mut sim = Simulation::new(s, ftl, src, Noop::new(1024, true), obs);
        sim.run().unwrap();
        let Tee(p, d) = sim.obs;
        (d.0, p)
    }

    /// After the idle timeout the next request pays exactly the wake-up latency,
    /// and the power model charges the idle gap past the timeout at slow power.
    #[test]
    fn request_after_timeout_is_delayed_by_wakeup() {
        let (fast, _) = two_writes(false);
        let (slow, p) = two_writes(true);
        assert_eq!(fast[0], slow[0], "the first request finds the CPU awake");
        let lat = |v: &[(u64, u64)]| v[1].1 - v[1].0;
        assert_eq!(lat(&slow), lat(&fast) + 50_000);
        let e = p.energy().unwrap();
        assert_eq!(e.state_s.cpu.wakeups, 1);
        assert_close(e.state_s.cpu.wakeup, 50e-6, "wake-up time");
        let gap = 5_000_000 - slow[0].1;
        assert_close(
            e.state_s.cpu.slow,
            (gap - 1_000_000) as f64 * 1e-9,
            "slow time",
        );
        check_consistency(&p);
    }
}

mod fused_reports {
    use super::*;

    /// The fused reports (`xfer_then_op`, `read_then_out`) count exactly what
    /// their separate reports count (`bus_xfer`, `flash_op`, `bus_xfer`), for
    /// activities inside the hot sample bucket, running on into the next one
    /// (their fast path splits them), and reported late (beginning before the
    /// hot bucket): per-plane-ns and per-operation energies alike.
    #[test]
    fn fused_reports_count_like_the_separate_ones() {
        for preset in ["chip2", "park-slc"] {
            let s = SsdConfig::with_nand(preset).unwrap().validate().unwrap();
            let sample = Dur::from_ms(1);
            let mut fused = PowerObserver::new(&s, sample).unwrap();
            let mut split = PowerObserver::new(&s, sample).unwrap();
            // Four dies, back to back: reads (1 us command, 25 us tR, 100 us
            // out), programs (100 us in, 200 us) and erases (1 us, 1.5 ms),
            // with gaps; reported in order of their ends, as the engine does,
            // so a long one is often reported after others moved the hot
            // bucket on.
            let mut acts = Vec::new();
            let mut x = 7u64;
            for d in 0..4u32 {
                let mut at = d as u64 * 3_000;
                for _ in 0..300 {
                    x = x
                        .wrapping_mul(6364136223846793005)
                        .wrapping_add(1442695040888963407);
                    let kind = [OpKind::Read, OpKind::Read, OpKind::Program, OpKind::Erase]
                        [(x >> 61) as usize % 4];
                    let (xfer, op, out) = match kind {
                        OpKind::Read => (1_000, 25_000, 100_000),
                        OpKind::Program => (100_000, 200_000, 0),
                        OpKind::Erase => (1_000, 1_500_000, 0),
                    };
                    let (xs, s0) = (at, at + xfer);
                    let (e, oe) = (s0 + op, s0 + op + out);
                    acts.push((oe, d, kind, xs, s0, e, 1 + (x >> 40) as u32 % 2));
                    at = oe + (x >> 20) % 40_000;
                }
            }
            acts.sort_by_key(|a| (a.0, a.1));
            let p = Purpose::Gc;
            for &(oe, d, kind, xs, s0, e, n) in &acts {
                let (ch, die) = (ChannelId(d), DieId(d));
                match kind {
                    OpKind::Read => {
                        fused.read_then_out(ch, die, 7, t(xs), p, n, t(s0), t(e), 8192, t(oe));
                        split.bus_xfer(ch, die, XferKind::Command, p, 7, t(xs), t(s0));
                        split.flash_op(die, kind, p, n, t(s0), t(e));
                        split.bus_xfer(ch, die, XferKind::DataOut, p, 8192, t(e), t(oe));
                    }
                    _ => {
                        let xk = if kind == OpKind::Program {
                            XferKind::DataIn
                        } else {
                            XferKind::Command
                        };
                        fused.xfer_then_op(ch, die, xk, 7, t(xs), kind, p, n, t(s0), t(e));
                        split.bus_xfer(ch, die, xk, p, 7, t(xs), t(s0));
                        split.flash_op(die, kind, p, n, t(s0), t(e));
                    }
                }
            }
            let end = acts.last().unwrap().0 + 1_000_000;
            fused.finish(t(end));
            split.finish(t(end));
            assert_eq!(fused.energy().unwrap(), split.energy().unwrap(), "{preset}");
            assert_eq!(fused.samples(), split.samples(), "{preset}");
            check_consistency(&fused);
        }
    }

    /// `read_then_out` (one step on the fast path) counts exactly what
    /// `xfer_then_op` then `bus_xfer` of the data-out count, inside the hot
    /// sample bucket and across bucket boundaries alike.
    #[test]
    fn read_then_out_counts_like_its_two_reports() {
        let s = SsdConfig::default().validate().unwrap();
        let sample = Dur::from_ms(1);
        let mut fused = PowerObserver::new(&s, sample).unwrap();
        let mut split = PowerObserver::new(&s, sample).unwrap();
        let (p, n) = (Purpose::Gc, 2);
        // Reads every 0.13 ms on four dies: command 1 us, tR 25 us, data-out
        // 100 us, so some cross a 1 ms boundary; a program between them.
        let mut at = 0u64;
        for i in 0..200u64 {
            let d = (i % 4) as u32;
            let (ch, die) = (ChannelId(d), DieId(d));
            let (xs, s0) = (at, at + 1_000);
            let (e, oe) = (s0 + 25_000, s0 + 125_000);
            fused.read_then_out(ch, die, 7, t(xs), p, n, t(s0), t(e), 8192, t(oe));
            split.xfer_then_op(
                ch,
                die,
                XferKind::Command,
                7,
                t(xs),
                OpKind::Read,
                p,
                n,
                t(s0),
                t(e),
            );
            split.bus_xfer(ch, die, XferKind::DataOut, p, 8192, t(e), t(oe));
            if i % 7 == 3 {
                let (ps, pe) = (oe + 2_000, oe + 202_000);
                for o in [&mut fused, &mut split] {
                    o.xfer_then_op(
                        ch,
                        die,
                        XferKind::DataIn,
                        4096,
                        t(oe),
                        OpKind::Program,
                        p,
                        1,
                        t(ps),
                        t(pe),
                    );
                }
            }
            at += 130_000;
        }
        fused.finish(t(at + 1_000_000));
        split.finish(t(at + 1_000_000));
        assert_eq!(fused.energy().unwrap(), split.energy().unwrap());
        assert_eq!(fused.samples(), split.samples());
        check_consistency(&fused);
    }
}
