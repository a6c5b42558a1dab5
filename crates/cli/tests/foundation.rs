//! Foundation tests: analytic oracles (single-operation latency, bandwidth
//! ceilings, FIFO/greedy write amplification), determinism, completion
//! accounting and bad-input handling of the CLI.

use ssd_core::ftl::{FlashArray, Ftl, FtlCtx};
use ssd_core::observer::NullObserver;
use ssd_core::rng::{SimRng, SimRngExt};
use ssd_core::sched::Noop;
use ssd_core::{Dur, Lpn, SimTime, Simulation};
use ssdsim::{run_config, RunOptions};
use ssdsim_host::config::{GcPolicy, Precondition, Settings, SsdConfig};
use ssdsim_host::workload::{HostRequest, IoOp, RwMode, Timing, VecSource};

mod common;
use common::{ssdsim, ssdsim_in};
#[path = "../../ssdsim/tests/common/mod.rs"]
mod lib_common;
use lib_common::rows_without_wall;

fn small(cfg: &mut SsdConfig) {
    cfg.nand.blocks_per_plane = 64;
}

/// Run `cfg` through the CLI library with the FTL invariants checked.
fn run_checked(cfg: &SsdConfig) -> ssd_core::stats::Report {
    let opts = RunOptions {
        check_invariants: true,
        ..Default::default()
    };
    run_config(cfg, &opts).unwrap().report
}

mod analytic {
    use super::*;

    /// An isolated 4 KiB write then read on an idle chip2 drive take exactly the
    /// times the parameters give.
    #[test]
    fn single_op_latency_chip2() {
        let cfg = SsdConfig::default();
        let s: Settings = cfg.validate().unwrap();
        let reqs = vec![
            HostRequest {
                arrival: SimTime(0),
                op: IoOp::Write,
                lba: 0,
                sectors: 8,
                stream: 0,
                tag: 0,
                sync: false,
                placement: ssd_core::workload::Placement::NONE,
            },
            HostRequest {
                arrival: SimTime(0),
                op: IoOp::Read,
                lba: 0,
                sectors: 8,
                stream: 0,
                tag: 0,
                sync: false,
                placement: ssd_core::workload::Placement::NONE,
            },
        ];
        let src = VecSource::new(reqs, Timing::ClosedLoop { depth: 1 });
        let ftl = ftl::build(&s.config.ftl, &s.shape()).unwrap();
        let mut sim = Simulation::new(s.clone(), ftl, src, Noop::new(1024, true), NullObserver);
        let r = sim.run().unwrap();
        let c = &cfg.controller;
        let link_cmd = cfg.host.command_overhead;
        let link_data = s.link.time_for(4096);
        let cpu = s.cycles(c.cycles_per_command + c.cycles_per_map_lookup);
        let dram = cfg.dram.access_latency; // one mapping-table access
        let cmd = s.cmd_time();
        let xfer = s.page_xfer_time();
        let write = link_cmd + link_data + cpu + dram + cmd + xfer + cfg.nand.t_prog;
        let read = link_cmd + cpu + dram + cmd + cfg.nand.t_r + xfer + link_data;
        // The parameters, spelled out: 134 ns SATA command, 6827 ns for 4 KiB at
        // 600 MB/s, 1100 cycles at 200 MHz, 50 ns DRAM, 7 command bytes at
        // 100 us / 4 KiB (171 ns), 100 us transfer, tPROG 200 us / tR 25 us.
        assert_eq!(write, Dur(134 + 6827 + 5500 + 50 + 171 + 100_000 + 200_000));
        assert_eq!(read, Dur(134 + 5500 + 50 + 171 + 25_000 + 100_000 + 6827));
        assert_eq!(sim.lat.write.max_ns(), write.0, "write latency");
        assert_eq!(sim.lat.read.max_ns(), read.0, "read latency");
        assert_eq!(r.host.requests, 2);
    }

    fn seq_read_mbps(channels: u32) -> (f64, Settings) {
        seq_read_mbps_ways(channels, 1)
    }

    fn seq_read_mbps_ways(channels: u32, ways: u32) -> (f64, Settings) {
        let mut cfg = SsdConfig::default();
        small(&mut cfg);
        cfg.layout.channels = channels;
        cfg.layout.ways = ways;
        cfg.sim.precondition = Precondition::Fill;
        cfg.workload.rw = RwMode::Read;
        cfg.workload.bs = ssd_core::Size::kib(128);
        cfg.workload.iodepth = 32;
        cfg.workload.number_ios = Some(4000);
        let s = cfg.validate().unwrap();
        let out = run_config(&cfg, &RunOptions::default()).unwrap();
        (out.report.host.mbps, s)
    }

    /// Saturated sequential reads sit at the ceiling computed from the parameters
    /// and double from 4 to 8 channels (channel-bound; one die per channel).
    #[test]
    fn sequential_read_ceiling_scales_with_channels() {
        let (bw4, s) = seq_read_mbps(4);
        let (bw8, _) = seq_read_mbps(8);
        // One die per channel: a multi-plane read of all planes costs the command
        // cycles and tR with the channel idle, then one transfer per plane.
        let p = s.geometry.planes as u64;
        let batch = s.cmd_time() + s.config.nand.t_r + Dur(s.page_xfer_time().0 * p);
        let per_channel = (p * s.geometry.page_size as u64) as f64 / batch.secs_f64() / 1e6;
        let link = s.config.host.link_mbps;
        for (bw, ch) in [(bw4, 4.0), (bw8, 8.0)] {
            let ceiling = (per_channel * ch).min(link);
            assert!(
                (bw - ceiling).abs() / ceiling < 0.03,
                "{ch} channels: {bw:.2} MB/s vs ceiling {ceiling:.2}"
            );
        }
        let ratio = bw8 / bw4;
        assert!((ratio - 2.0).abs() < 0.04, "8 vs 4 channels: x{ratio:.3}");
    }

    /// With four dies sharing each channel, saturated sequential reads keep the
    /// channels busy all the time (a die's command and tR overlap the others'
    /// data-out): the ceiling is the channels' own, command cycles included,
    /// and it does not grow with the number of dies.
    #[test]
    fn shared_channels_set_the_read_ceiling() {
        let (bw, s) = seq_read_mbps_ways(2, 4);
        let p = s.geometry.planes as u64;
        let busy = s.cmd_time() + Dur(s.page_xfer_time().0 * p);
        let per_channel = (p * s.geometry.page_size as u64) as f64 / busy.secs_f64() / 1e6;
        let ceiling = (per_channel * 2.0).min(s.config.host.link_mbps);
        assert!(
            (bw - ceiling).abs() / ceiling < 0.03,
            "2 channels x 4 ways: {bw:.2} MB/s vs ceiling {ceiling:.2}"
        );
        let (bw8, _) = seq_read_mbps_ways(2, 8);
        assert!(
            (bw8 - bw).abs() / bw < 0.02,
            "more dies on a saturated channel: {bw8:.2} vs {bw:.2} MB/s"
        );
    }

    /// Desnoyers (2012): FIFO cleaning under uniform random page writes has
    /// u = exp(-a (1 - u)), a = 1 + op, WA = 1 / (1 - u).
    fn closed_form_wa(op: f64) -> f64 {
        let a = 1.0 + op;
        let (mut lo, mut hi) = (0.0f64, 1.0 - 1e-12);
        // f(u) = u - exp(-a(1-u)) is negative below the non-trivial root and positive above.
        for _ in 0..200 {
            let mid = 0.5 * (lo + hi);
            if mid - (-a * (1.0 - mid)).exp() < 0.0 {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        1.0 / (1.0 - 0.5 * (lo + hi))
    }

    fn measured_wa(op: f64, policy: GcPolicy) -> f64 {
        let mut cfg = SsdConfig::default();
        cfg.layout.channels = 1;
        cfg.nand.planes_per_die = 1;
        cfg.nand.blocks_per_plane = 2048;
        cfg.nand.pages_per_block = 32;
        cfg.ftl.op = op;
        cfg.ftl.gc_policy = policy;
        cfg.ftl.gc_threshold_blocks = 1;
        let s = cfg.validate().unwrap();
        let mut f = ftl::PageFtl::new(&s.config.ftl, &s.shape());
        let mut flash = FlashArray::new(s.geometry);
        let mut cx = FtlCtx::new(SimRng::from_seed_label(7, "ftl"), 1);
        let mut rng = SimRng::from_seed_label(7, "wa-test");
        let lp = f.logical_pages();
        let mut write = |f: &mut ftl::PageFtl, l: u64| -> u64 {
            cx.plan.clear();
            f.write(Lpn(l), 1, &mut cx);
            let mut programs = 0;
            for op in &cx.plan.ops {
                flash.apply(op);
                programs += (op.kind == ssd_core::ftl::OpKind::Program) as u64;
            }
            programs
        };
        for l in 0..lp {
            write(&mut f, l);
        }
        use rand::Rng;
        for _ in 0..4 * lp {
            write(&mut f, rng.gen_range(0..lp));
        }
        let n = 4 * lp;
        let programs: u64 = (0..n).map(|_| write(&mut f, rng.gen_range(0..lp))).sum();
        f.check_invariants().unwrap();
        programs as f64 / n as f64
    }

    #[test]
    fn fifo_write_amplification_matches_closed_form() {
        for op in [0.07, 0.15, 0.28] {
            let want = closed_form_wa(op);
            let fifo = measured_wa(op, GcPolicy::Fifo);
            let greedy = measured_wa(op, GcPolicy::Greedy);
            assert!(
                (fifo - want).abs() / want < 0.03,
                "op {op}: FIFO WA {fifo:.3}, closed form {want:.3}"
            );
            assert!(
                greedy <= fifo * 1.001,
                "op {op}: greedy {greedy:.3} worse than FIFO {fifo:.3}"
            );
        }
    }
}

mod determinism {
    use super::*;

    fn strip_wall(mut v: serde_json::Value) -> serde_json::Value {
        let run = v.get_mut("run").unwrap().as_object_mut().unwrap();
        run.remove("wall_s");
        run.remove("precondition_wall_s");
        v
    }

    #[test]
    fn same_seed_same_json() {
        let mut cfg = SsdConfig::default();
        small(&mut cfg);
        cfg.sim.precondition = Precondition::Steady;
        cfg.workload.rw = RwMode::RandRw;
        cfg.workload.number_ios = Some(5000);
        cfg.workload.random_distribution = ssdsim_host::workload::Distribution::Zipf(1.1);
        let a =
            serde_json::to_value(run_config(&cfg, &RunOptions::default()).unwrap().report).unwrap();
        let b =
            serde_json::to_value(run_config(&cfg, &RunOptions::default()).unwrap().report).unwrap();
        assert_eq!(strip_wall(a.clone()), strip_wall(b));
        cfg.sim.seed = 2;
        let c =
            serde_json::to_value(run_config(&cfg, &RunOptions::default()).unwrap().report).unwrap();
        assert_ne!(
            strip_wall(a)["latency_us"],
            strip_wall(c)["latency_us"],
            "a different seed changes the run"
        );
        // Through the page cache too (its maps are hashed: no result may
        // depend on their order).
        let mut cfg = SsdConfig::default();
        small(&mut cfg);
        cfg.sched.kind = "cfq".into();
        cfg.personality = Some(ssdsim_host::personality::PersonalityConfig {
            requests: 3000,
            direct: Some(false),
            ..ssdsim_host::personality::PersonalityConfig::new(
                ssdsim_host::personality::PersonalityKind::Varmail,
            )
        });
        cfg.page_cache.size = ssd_core::Size::mib(32);
        let a =
            serde_json::to_value(run_config(&cfg, &RunOptions::default()).unwrap().report).unwrap();
        let b =
            serde_json::to_value(run_config(&cfg, &RunOptions::default()).unwrap().report).unwrap();
        assert!(a["page_cache"]["writeback"]["pages"].as_u64().unwrap() > 0);
        assert_eq!(strip_wall(a), strip_wall(b));
    }
}

mod completion {
    use super::*;

    /// Every submitted request completes exactly once, with GC running and with
    /// requests merged in the host queue.
    #[test]
    fn every_request_completes_once_under_gc_and_merging() {
        let mut cfg = SsdConfig::default();
        small(&mut cfg);
        cfg.sim.precondition = Precondition::Fill;
        cfg.workload.rw = RwMode::RandWrite;
        cfg.workload.number_ios = Some(30_000);
        let out = run_checked(&cfg);
        assert_eq!(out.host.requests, 30_000);
        assert!(
            out.flash.gc_page_copies > 0 && out.flash.block_erases > 0,
            "GC ran"
        );
        assert_eq!(out.latency_us.write.count, 30_000);

        let mut cfg = SsdConfig::default();
        small(&mut cfg);
        cfg.workload.rw = RwMode::Write;
        cfg.workload.iodepth = 64;
        cfg.host.queue_depth = 2;
        cfg.workload.number_ios = Some(10_000);
        let out = run_checked(&cfg);
        assert_eq!(out.host.requests, 10_000);
        assert!(
            out.sched.merged > 0,
            "sequential writes queued behind a shallow device merge"
        );
        assert_eq!(out.sched.dispatched + out.sched.merged, 10_000);
    }

    /// Preconditioning reports its progress (the fill to its end, then each
    /// steady-state round) without changing its outcome or the run after it.
    #[test]
    fn precondition_progress_is_reported_and_changes_nothing() {
        use ssd_core::engine::PreconditionProgress as P;
        let mut cfg = SsdConfig::default();
        small(&mut cfg);
        cfg.sim.precondition = Precondition::Steady;
        cfg.workload.rw = RwMode::RandWrite;
        cfg.workload.number_ios = Some(2000);
        let make = || {
            let s = cfg.validate().unwrap();
            let ftl = ftl::build(&s.config.ftl, &s.shape()).unwrap();
            let src = ssdsim_host::workload::FioGen::new(&cfg.workload, s.logical_bytes(), 1);
            Simulation::new(s, ftl, src, Noop::new(1024, true), NullObserver)
        };
        let (mut a, mut b) = (make(), make());
        let oa = a.precondition();
        let mut seen = Vec::new();
        let ob = b.precondition_with(|p| seen.push(p));
        let key = |o: &ssd_core::engine::PreconditionOutcome| {
            (o.pages_written, o.random_pages, o.steady, o.final_waf)
        };
        assert_eq!(key(&oa), key(&ob));
        let lp = ob.pages_written;
        assert!(
            seen.contains(&P::Fill {
                done: lp,
                total: lp
            }),
            "{seen:?}"
        );
        let ends: Vec<(u32, u64)> = seen
            .iter()
            .filter_map(|p| match *p {
                P::Steady {
                    round,
                    done,
                    round_pages,
                    ..
                } if done == round_pages => Some((round, round_pages)),
                _ => None,
            })
            .collect();
        assert_eq!(
            ends.iter().map(|e| e.0).collect::<Vec<_>>(),
            (1..=ends.len() as u32).collect::<Vec<_>>()
        );
        assert_eq!(ends.iter().map(|e| e.1).sum::<u64>(), ob.random_pages);
        let strip = |r: ssd_core::stats::Report| {
            let mut v = serde_json::to_value(r).unwrap();
            v["run"]["wall_s"] = 0.into();
            v["run"]["precondition_wall_s"] = 0.into();
            v
        };
        assert_eq!(strip(a.run().unwrap()), strip(b.run().unwrap()));
    }

    /// A DRAM too small for the page map is simulated as configured and
    /// said to be so; DFTL's cache fits, and so does the default.
    #[test]
    fn an_overcommitted_dram_is_noted() {
        let note = |ftl: &str, dram: u64| {
            let mut cfg = SsdConfig::default();
            small(&mut cfg);
            cfg.ftl.kind = ftl.parse().unwrap();
            cfg.ftl.op = 0.15;
            cfg.dram.capacity = ssd_core::units::Size(dram).into();
            cfg.workload.number_ios = Some(100);
            let r = run_checked(&cfg);
            (
                r.notes.get("dram_capacity_exceeded_bytes").copied(),
                r.ftl.mapping_table_bytes,
            )
        };
        let (n, table) = note("page", 1 << 10);
        assert_eq!(n, Some(table - 1024));
        assert_eq!(note("page", 64 << 20).0, None);
        assert_eq!(note("dftl", 1 << 20).0, None);
    }

    /// An open-loop request arriving beyond the simulated time range (where
    /// event times would wrap) ends the run with an error, not a wrong report.
    #[test]
    fn an_arrival_beyond_the_time_range_is_an_error() {
        let cfg = SsdConfig::default();
        let s = cfg.validate().unwrap();
        let req = |t: u64| HostRequest {
            arrival: SimTime(t),
            op: IoOp::Write,
            lba: 0,
            sectors: 8,
            stream: 0,
            tag: 0,
            sync: false,
            placement: ssd_core::workload::Placement::NONE,
        };
        let reqs = vec![req(0), req(SimTime::MAX_ARRIVAL.0 + 1)];
        let src = VecSource::new(reqs, Timing::OpenLoop);
        let ftl = ftl::build(&s.config.ftl, &s.shape()).unwrap();
        let mut sim = Simulation::new(s, ftl, src, Noop::new(1024, true), NullObserver);
        let e = sim.run().unwrap_err().to_string();
        assert!(e.contains("beyond the simulated time range"), "{e}");
    }

    /// Idle-time GC runs on every die at once (one job per die in flight), so
    /// draining it takes about its flash time divided by the dies, not the
    /// sum; utilization covers the measured phase only, so it stays <= 1.
    #[test]
    fn idle_gc_runs_on_all_dies_and_utilization_excludes_the_drain() {
        let mut cfg = SsdConfig::default();
        small(&mut cfg);
        cfg.sim.precondition = Precondition::Steady;
        cfg.sim.drain = true;
        cfg.ftl.background_gc_blocks = 8;
        cfg.workload.rw = RwMode::RandWrite;
        cfg.workload.number_ios = Some(2_000);
        let out = run_checked(&cfg);
        let copies = out.ftl.stats.gc_page_copies as f64;
        assert!(out.ftl.stats.background_runs > 100, "{:?}", out.ftl.stats);
        // One copy: tR, data out, data in, tPROG (chip2: 25 + 100 + 100 + 200 us).
        let serial_s = copies * 425e-6;
        let drain = out.run.drain_s;
        assert!(
            drain > 0.0 && drain < serial_s / 4.0,
            "drain {drain} s for {copies} copies (serial {serial_s} s)"
        );
        let u = &out.utilization;
        for (name, f) in [
            ("dies", u.dies),
            ("channels", u.channels),
            ("cpu", u.cpu),
            ("host_link", u.host_link),
        ] {
            assert!((0.0..=1.0).contains(&f), "{name} utilization {f}");
        }
    }

    /// Steady-state preconditioning that stops at its cap without converging
    /// says so in the notes (and the text report); one that converges does not.
    #[test]
    fn unreached_steady_state_is_noted() {
        let mut cfg = SsdConfig::default();
        cfg.layout.channels = 1;
        cfg.nand.planes_per_die = 1;
        cfg.nand.blocks_per_plane = 16;
        cfg.ftl.op = 0.5;
        // Blocking GC does not converge on this drive within the cap
        // (paced GC does: its victims are spread over the frontier blocks).
        cfg.ftl.gc_mode = Some(ssdsim_host::config::GcMode::Blocking);
        cfg.sim.precondition = Precondition::Steady;
        cfg.workload.rw = RwMode::RandWrite;
        cfg.workload.number_ios = Some(10);
        let out = run_checked(&cfg);
        assert!(!out.run.precondition_steady);
        assert_eq!(
            out.notes.get("precondition_steady_state_not_reached"),
            Some(&1)
        );
        let text = ssdsim::output::text(&out);
        assert!(text.contains("steady state NOT reached"), "{text}");
        let mut cfg = SsdConfig::default();
        cfg.nand.blocks_per_plane = 128;
        cfg.sim.precondition = Precondition::Steady;
        cfg.workload.rw = RwMode::RandWrite;
        cfg.workload.number_ios = Some(10);
        let out = run_checked(&cfg);
        assert!(out.run.precondition_steady);
        assert!(!out
            .notes
            .contains_key("precondition_steady_state_not_reached"));
        assert!(ssdsim::output::text(&out).contains("steady state reached"));
    }

    /// A time limit that cuts the run says how many requests it left
    /// unfinished: a closed loop keeps `iodepth` of them outstanding.
    #[test]
    fn a_time_limit_counts_the_requests_it_cuts_off() {
        let mut cfg = SsdConfig::default();
        small(&mut cfg);
        cfg.workload.rw = RwMode::RandWrite;
        cfg.workload.iodepth = 32;
        cfg.workload.number_ios = Some(1_000_000);
        cfg.sim.time_limit = Some(Dur::from_ms(2));
        let out = run_checked(&cfg);
        assert!(out.host.requests > 0 && out.host.requests < 1_000_000);
        assert_eq!(out.notes.get("time_limit_requests_unfinished"), Some(&32));
        // Not cut: no such note.
        cfg.sim.time_limit = None;
        cfg.workload.number_ios = Some(100);
        let out = run_checked(&cfg);
        assert!(!out.notes.contains_key("time_limit_requests_unfinished"));
    }

    /// A run cut by its time limit leaves the drive as it was at the limit:
    /// `restart`ed without one, the next phase finishes the requests the cut
    /// left in flight, and everything it issues, without stalling (closed and
    /// open loop; an open loop's arrival booked before the cut is stale).
    #[test]
    fn a_run_cut_by_its_time_limit_can_go_on() {
        for rate in [None, Some(40_000)] {
            let mut cfg = SsdConfig::default();
            small(&mut cfg);
            cfg.sim.precondition = Precondition::Fill;
            cfg.workload.rw = RwMode::RandRw;
            cfg.workload.rate_iops = rate;
            cfg.sim.time_limit = Some(Dur::from_ms(3));
            let s = cfg.validate().unwrap();
            let ftl = ftl::build(&s.config.ftl, &s.shape()).unwrap();
            let gen = |n, seed| {
                let mut w = cfg.workload.clone();
                w.number_ios = Some(n);
                ssdsim_host::workload::FioGen::new(&w, s.logical_bytes(), seed)
            };
            let mut sim = Simulation::new(
                s.clone(),
                ftl,
                gen(1_000_000, 1),
                Noop::new(1024, true),
                NullObserver,
            );
            sim.precondition();
            let cut = sim.run().unwrap();
            let left = cut.notes.get("time_limit_requests_unfinished").copied();
            assert!(left.is_some_and(|n| n > 0), "{rate:?}: {:?}", cut.notes);
            sim.settings.config.sim.time_limit = None;
            sim.restart(gen(2000, 2));
            let out = sim.run().unwrap();
            assert_eq!(
                out.host.requests,
                2000 + left.unwrap(),
                "{rate:?}: the cut requests finish too"
            );
        }
    }
}

mod reads_alone {
    //! On a channel with one die, the engine books a read's command, array
    //! operation and data-out at once (one event); it must run exactly as the
    //! general path does (a `DieDone`, then the data-out booked then).
    use super::*;
    use ssd_core::addr::{ChannelId, DieId};
    use ssd_core::ftl::{OpKind, Purpose};
    use ssd_core::observer::{Observer, XferKind};

    /// A die's transfer or array operation: what (kind), purpose, bytes or
    /// planes, start, end.
    type Act = (u8, usize, u64, u64, u64);

    /// Every observer call: per die, its transfers and array operations in
    /// report order; the rest in call order.
    #[derive(Default, PartialEq, Debug)]
    struct Log {
        dies: Vec<Vec<Act>>,
        other: Vec<(u8, u64, u64, u64)>,
    }
    impl Log {
        fn die(&mut self, d: DieId) -> &mut Vec<Act> {
            let d = d.0 as usize;
            if self.dies.len() <= d {
                self.dies.resize(d + 1, Vec::new());
            }
            &mut self.dies[d]
        }
    }
    impl Observer for Log {
        fn flash_op(&mut self, d: DieId, k: OpKind, p: Purpose, n: u32, s: SimTime, e: SimTime) {
            self.die(d).push((k as u8, p.index(), n as u64, s.0, e.0));
        }
        fn bus_xfer(
            &mut self,
            _c: ChannelId,
            d: DieId,
            k: XferKind,
            p: Purpose,
            b: u64,
            s: SimTime,
            e: SimTime,
        ) {
            self.die(d).push((10 + k as u8, p.index(), b, s.0, e.0));
        }
        fn cpu_busy(&mut self, s: SimTime, e: SimTime) {
            self.other.push((0, 0, s.0, e.0));
        }
        fn dram_access(&mut self, n: u64, s: SimTime, e: SimTime) {
            self.other.push((1, n, s.0, e.0));
        }
        fn link_xfer(&mut self, b: u64, s: SimTime, e: SimTime) {
            self.other.push((2, b, s.0, e.0));
        }
        fn io_active(&mut self, s: SimTime, e: SimTime) {
            self.other.push((3, 0, s.0, e.0));
        }
        fn request_done(&mut self, op: IoOp, b: u64, a: SimTime, d: SimTime) {
            self.other.push((4 + op as u8, b, a.0, d.0));
        }
        fn drain_start(&mut self, t: SimTime) {
            self.other.push((10, 0, t.0, 0));
        }
        fn finish(&mut self, e: SimTime) {
            self.other.push((11, 0, e.0, 0));
        }
    }

    /// The reports (without wall times and event counts) of four phases of
    /// `cfg` on the same drive (`Simulation::restart` between them, with work
    /// in flight), their events, and the observer log, with reads booked at
    /// once where they may be or not.
    fn run(cfg: &SsdConfig, two_steps: bool) -> (Vec<serde_json::Value>, u64, Log) {
        let s = cfg.validate().unwrap();
        let ftl = ftl::build(&s.config.ftl, &s.shape()).unwrap();
        let gen = |seed| ssdsim_host::workload::FioGen::new(&cfg.workload, s.logical_bytes(), seed);
        let mut sim = Simulation::new(
            s.clone(),
            ftl,
            gen(7),
            Noop::new(1024, true),
            Log::default(),
        );
        if two_steps {
            sim.book_reads_in_two_steps();
        }
        sim.precondition();
        let (mut reports, mut events) = (Vec::new(), 0);
        for phase in 0..4 {
            if phase > 0 {
                sim.restart(gen(7 + phase));
            }
            // A time limit is a point in simulated time: one more for each phase.
            if let Some(l) = cfg.sim.time_limit {
                sim.settings.config.sim.time_limit = Some(Dur(l.0 * (phase + 1)));
            }
            let r = sim.run().unwrap();
            events += r.run.events;
            let mut v = serde_json::to_value(&r).unwrap();
            let run = v["run"].as_object_mut().unwrap();
            for k in ["wall_s", "precondition_wall_s", "events"] {
                run.remove(k);
            }
            reports.push(v);
        }
        (reports, events, std::mem::take(&mut sim.obs))
    }

    /// The paths at which two JSON values differ, with both values.
    fn diff(a: &serde_json::Value, b: &serde_json::Value, path: &str, out: &mut Vec<String>) {
        match (a, b) {
            (serde_json::Value::Object(x), serde_json::Value::Object(y)) => {
                for (k, v) in x {
                    let w = y.get(k).unwrap_or(&serde_json::Value::Null);
                    diff(v, w, &format!("{path}.{k}"), out);
                }
            }
            (serde_json::Value::Array(x), serde_json::Value::Array(y)) if x.len() == y.len() => {
                for (i, (v, w)) in x.iter().zip(y).enumerate() {
                    diff(v, w, &format!("{path}[{i}]"), out);
                }
            }
            _ if a != b => out.push(format!("{path}: {a} vs {b}")),
            _ => {}
        }
    }

    #[test]
    fn a_read_booked_at_once_runs_as_one_booked_in_two_steps() {
        let base = || {
            let mut cfg = SsdConfig::default();
            small(&mut cfg);
            cfg.sim.precondition = Precondition::Steady;
            cfg.workload.number_ios = Some(3000);
            // With paced GC the die's choice between a GC operation and a
            // host operation that become ready at the same instant follows
            // the order of the events of that instant, which booking a read
            // at once changes (host p50s moved by 0.5 us): the two bookings
            // are compared under the blocking model, whose die queue is a
            // FIFO.
            cfg.ftl.gc_mode = Some(ssdsim_host::config::GcMode::Blocking);
            cfg
        };
        // Mixed host reads and GC reads; with idle-time GC drained after
        // the last request (a cut with reads in flight); multi-page reads
        // in multi-plane batches arriving open loop; a time limit that cuts
        // reads off (the observers differ there: see below).
        let mut cfgs = Vec::new();
        let mut c = base();
        c.workload.rw = RwMode::RandRw;
        cfgs.push(c);
        let mut c = base();
        c.workload.rw = RwMode::RandWrite;
        c.sim.drain = true;
        c.ftl.background_gc_blocks = 8;
        cfgs.push(c);
        let mut c = base();
        c.workload.rw = RwMode::RandRead;
        c.workload.bs = ssd_core::Size::kib(16);
        c.workload.rate_iops = Some(20_000);
        c.workload.rate_process = ssdsim_host::workload::RateProcess::Poisson;
        cfgs.push(c);
        let mut c = base();
        c.workload.rw = RwMode::RandRead;
        c.workload.number_ios = Some(100_000);
        c.sim.time_limit = Some(Dur::from_us(100_000));
        cfgs.push(c);
        for (i, cfg) in cfgs.iter().enumerate() {
            let (ra, ea, la) = run(cfg, false);
            let (rb, eb, lb) = run(cfg, true);
            eprintln!(
                "{i} {} {} {}",
                ra[1]["utilization"], ra[1]["host"]["requests"], ra[0]["host"]["requests"]
            );
            let mut d = Vec::new();
            diff(&serde_json::json!(ra), &serde_json::json!(rb), "", &mut d);
            assert!(d.is_empty(), "config {i}: the reports differ: {d:?}");
            assert!(
                ea < eb,
                "config {i}: {ea} events booked at once, {eb} in two steps"
            );
            if cfg.sim.time_limit.is_none() {
                assert_eq!(la, lb, "config {i}: the observers heard different things");
            }
        }
    }
}

mod cli {
    use super::{ssdsim, ssdsim_in};

    /// `personality.level=file` runs Filebench's flowops through the page
    /// cache from the CLI: the report has the application's calls, the
    /// flowop counts and metadata pages; what it cannot run is refused
    /// before the run, naming the field.
    #[test]
    fn file_level_personalities_run_buffered() {
        let (code, out, err) = ssdsim(&[
            "run",
            "--personality",
            "varmail",
            "--set",
            "personality.level=file",
            "--set",
            "personality.requests=3000",
            "--format",
            "json",
        ]);
        assert_eq!(code, 0, "{err}");
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        assert!(v["app"]["fsyncs"].as_u64().unwrap() > 100, "{}", v["app"]);
        assert!(v["notes"]["filebench_creates"].as_u64().unwrap() > 50);
        assert!(v["page_cache"]["metadata_pages_dirtied"].as_u64().unwrap() > 0);
        // Every fsync reached the device as a flush of its own or waited
        // for a journal commit, whose barrier and FUA are the file
        // system's flushes (ext4, the default: two a commit).
        let n = |s: &str, k: &str| v[s][k].as_u64().unwrap();
        assert_eq!(
            n("app", "fsyncs") - n("page_cache", "fsync_commit_waits")
                + n("page_cache", "fs_flushes"),
            n("page_cache", "flushes")
        );
        assert!(n("page_cache", "fsync_commit_waits") > 0);
        assert_eq!(
            n("page_cache", "fs_flushes"),
            2 * n("page_cache", "fs_thread_commits")
        );
        assert!(n("page_cache", "fs_flushes") > 0);
        // The host's counts add up to its requests, flushes included.
        assert_eq!(
            n("host", "reads") + n("host", "writes") + n("host", "trims") + n("host", "flushes"),
            n("host", "requests")
        );
        assert!(n("host", "flushes") > 0);
        // A knob of the block-level flows is refused at file level.
        let (code, _, err) = ssdsim(&[
            "run",
            "--personality",
            "varmail",
            "--set",
            "personality.level=file",
            "--set",
            "personality.fsync=false",
        ]);
        assert_eq!(code, 2, "{err}");
        assert!(err.contains("personality.fsync"), "{err}");
        // Filebench's directio=1: the flowops' data bypass the cache, the
        // file system's metadata and journal still go through it.
        let (code, out, err) = ssdsim(&[
            "run",
            "--personality",
            "oltp",
            "--set",
            "personality.level=file",
            "--set",
            "personality.direct=true",
            "--set",
            "personality.requests=2000",
            "--format",
            "json",
        ]);
        assert_eq!(code, 0, "{err}");
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        let n = |k: &str| v["page_cache"][k].as_u64().unwrap();
        assert!(n("direct_io_bytes_read") > 0 && n("direct_io_bytes_written") > 0);
        assert_eq!(n("hits") + n("misses"), 0, "{}", v["page_cache"]);
    }

    /// A buffered run's text report says where the application's bytes
    /// went: a thousand 4 KiB writes all still in the page cache, none on
    /// the device; a direct run says nothing of it.
    #[test]
    fn a_buffered_report_says_its_writes_sit_in_the_cache() {
        let args = ["run", "--rw", "write", "--number_ios", "1000"];
        let (code, out, err) = ssdsim(&[&args[..], &["--set", "workload.direct=false"]].concat());
        assert_eq!(code, 0, "{err}");
        assert!(out.contains("host     0 requests"), "{out}");
        assert!(
            out.contains(
                "page cache (app, cache below); 4096000 bytes written were not on the device"
            ),
            "{out}"
        );
        let (code, out, err) = ssdsim(&args);
        assert_eq!(code, 0, "{err}");
        assert!(!out.contains("buffered:"), "{out}");
    }

    #[test]
    fn bad_input_names_the_field_and_exits_2() {
        let cases: &[(&[&str], &str)] = &[
            (&["run", "--channels", "0"], "layout.channels"),
            (&["run", "--nand", "chip9"], "unknown nand preset \"chip9\""),
            (&["run", "--op", "0.001"], "ftl.op"),
            (&["run", "--page-size", "1000"], "nand.page_size"),
            (&["run", "--rw", "sideways"], "workload.rw"),
            (&["run", "--bs", "4 furlongs"], "workload.bs"),
            (&["run", "--ftl", "nosuch"], "ftl.kind"),
            (&["run", "--set", "nand.t_rr=5us"], "nand.t_rr"),
            (&["run", "--blocks-per-plane", "100000000"], "geometry"),
            (&["run", "--write-buffer", "6KiB"], "dram.write_buffer"),
            (&["run", "--time-limit", "0s"], "sim.time_limit"),
            (
                &["run", "--time-limit", "1"],
                "--time-limit: \"1\" has no unit",
            ),
            (&["run", "--gc", "windowed:0"], "ftl.gc_policy"),
            (
                &["run", "--seed", "18446744073709551615"],
                "sim.seed: 18446744073709551615 is out of range",
            ),
        ];
        for (args, needle) in cases {
            let (code, _, err) = ssdsim(args);
            assert_eq!(code, 2, "{args:?}: {err}");
            assert!(
                err.contains(needle),
                "{args:?}: stderr {err:?} lacks {needle:?}"
            );
        }
    }

    /// A field of another FTL than the chosen one runs, with a note on
    /// stderr that names it; the chosen FTL's own field is read silently.
    #[test]
    fn another_ftls_field_is_run_with_a_note() {
        let base = ["run", "--number_ios", "200"];
        let (code, _, err) = ssdsim(&[&base[..], &["--set", "ftl.cmt_size=64KiB"]].concat());
        assert_eq!(code, 0, "{err}");
        assert!(
            err.contains("note: ftl.cmt_size = \"64KiB\" is not read: it is a field of dftl"),
            "{err}"
        );
        let (code, _, err) =
            ssdsim(&[&base[..], &["--set", "ftl.cmt_size=64KiB", "--ftl", "dftl"]].concat());
        assert_eq!(code, 0, "{err}");
        assert!(!err.contains("note: ftl."), "{err}");
    }

    /// A sweep runs every point, writes every row, and exits 2 if any failed;
    /// an output it cannot write fails it before any point runs. With no
    /// output named, the tables and plots go to sweep-results.
    #[test]
    fn a_sweep_with_a_failed_point_exits_2() {
        let cwd = std::env::temp_dir().join(format!("ssdsim-sweep-cwd-{}", std::process::id()));
        std::fs::create_dir_all(&cwd).unwrap();
        let sweep = |nand: &str, extra: &[&str]| {
            let mut args = vec![
                "sweep",
                "--nand",
                nand,
                "--number_ios",
                "200",
                "--precondition",
                "none",
                "--workload",
                "rand-read",
            ];
            args.extend_from_slice(extra);
            ssdsim_in(&cwd, &args)
        };
        let (code, out, err) = sweep("chip2,nosuch", &[]);
        assert_eq!(code, 2, "{err}");
        assert!(
            out.contains("chip2") && out.contains("FAILED: unknown nand preset"),
            "{out}"
        );
        assert!(err.contains("1 of 2 configurations failed"), "{err}");
        let res = cwd.join("sweep-results");
        std::fs::remove_dir_all(&res).unwrap();
        let (code, _, err) = sweep("chip2", &[]);
        assert_eq!(code, 0, "{err}");
        for f in ["sweep.csv", "sweep.jsonl", "sweep.md", "plots/iops.svg"] {
            assert!(res.join(f).is_file(), "{f}: {err}");
        }
        let csv = std::fs::read_to_string(res.join("sweep.csv")).unwrap();
        assert_eq!(csv.lines().count(), 2, "{csv}");
        // A named output replaces the default directory.
        std::fs::remove_dir_all(&res).unwrap();
        let named = cwd.join("named.csv");
        let (code, _, err) = sweep("chip2", &["--csv", named.to_str().unwrap()]);
        assert_eq!(code, 0, "{err}");
        assert!(named.is_file() && !res.exists());
        let bad = std::env::temp_dir().join(format!("ssdsim-no-such-dir-{}", std::process::id()));
        let csv = bad.join("out.csv");
        let (code, out, err) = sweep("chip2", &["--csv", csv.to_str().unwrap()]);
        assert_ne!(code, 0);
        assert!(
            err.contains("out.csv") && err.contains("cannot write"),
            "{err}"
        );
        assert!(out.is_empty(), "no point ran: {out}");
        let (code, _, err) = ssdsim(&["run", "--number_ios", "10", "--out", csv.to_str().unwrap()]);
        assert_ne!(code, 0);
        assert!(err.contains("cannot write"), "{err}");
        // An axis with no values is refused (it once panicked), from a flag
        // or a grid file.
        let (code, _, err) = ssdsim(&["sweep", "--op", ","]);
        assert_eq!(code, 2, "{err}");
        assert!(err.contains("--op: no values"), "{err}");
        let (code, _, err) = ssdsim(&["sweep", "--workload", " , "]);
        assert_eq!(code, 2, "{err}");
        assert!(err.contains("--workload: no values"), "{err}");
        let grid = bad.with_extension("toml");
        std::fs::write(&grid, "[grid]\n\"ftl.op\" = []\n").unwrap();
        let (code, _, err) = ssdsim(&["sweep", "--grid", grid.to_str().unwrap()]);
        assert_eq!(code, 2, "{err}");
        assert!(err.contains("\"ftl.op\" lists no values"), "{err}");
    }

    /// A configuration the report could not echo (TOML integers are signed
    /// 64-bit) is refused up front, naming the field.
    #[test]
    fn unwritable_config_values_are_refused_by_validate() {
        let mut c = ssdsim_host::config::SsdConfig::default();
        c.workload.number_ios = Some(u64::MAX);
        let e = c.validate().unwrap_err().to_string();
        assert!(e.contains("workload.number_ios"), "{e}");
        c.workload.number_ios = Some(i64::MAX as u64);
        c.validate().unwrap();
    }

    /// `trace stats` and `trace convert` both take the blkparse action a
    /// capture without `Q` events needs (convert once could not), and check it.
    #[test]
    fn trace_tools_take_a_checked_blkparse_action() {
        let dir = std::env::temp_dir().join(format!("ssdsim-blk-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let f = dir.join("idc.blkparse");
        std::fs::write(
            &f,
            "  8,16   3        4     0.000011950  3645  I   R 4938888 + 256 [java]\n\
             \x20 8,16   3        5     0.000026421  3645  D   R 4938888 + 256 [java]\n",
        )
        .unwrap();
        let out = dir.join("idc.csv");
        let (fs, os) = (f.to_str().unwrap(), out.to_str().unwrap());
        let (code, _, err) = ssdsim(&["trace", "convert", "--to", "csv", fs, os]);
        assert_eq!(code, 2, "{err}");
        assert!(
            err.contains("`trace convert`: `--blkparse-action D`"),
            "{err}"
        );
        let args = [
            "trace",
            "convert",
            "--blkparse-action",
            "D",
            "--to",
            "csv",
            fs,
            os,
        ];
        let (code, _, err) = ssdsim(&args);
        assert_eq!(code, 0, "{err}");
        assert!(err.contains("1 records written"), "{err}");
        let stats = ["trace", "stats", "--blkparse-action", "DD", fs];
        let convert = [
            "trace",
            "convert",
            "--blkparse-action",
            "",
            "--to",
            "csv",
            fs,
            os,
        ];
        for a in [&stats[..], &convert[..]] {
            let (code, _, err) = ssdsim(a);
            assert_eq!(code, 2, "{a:?}: {err}");
            assert!(err.contains("--blkparse-action: must be one"), "{err}");
        }
    }

    #[test]
    fn unknown_fio_option_is_named() {
        let dir = std::env::temp_dir().join(format!("ssdsim-fio-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let f = dir.join("job.fio");
        std::fs::write(
            &f,
            "[global]\nioengine=libaio\n[j]\nrw=randread\nfrobnicate=md5\n",
        )
        .unwrap();
        let (code, _, err) = ssdsim(&["run", "--fio", f.to_str().unwrap()]);
        assert_eq!(code, 2);
        assert!(
            err.contains("job.fio:5") && err.contains("frobnicate"),
            "{err}"
        );
        // Host-side options are accepted, and said to have no effect.
        let ok = dir.join("ok.fio");
        std::fs::write(
            &ok,
            "[global]\nioengine=libaio\ndirect=1\n[j]\nrw=randread\nnumber_ios=50\n",
        )
        .unwrap();
        let (code, _, err) = ssdsim(&["run", "--fio", ok.to_str().unwrap()]);
        assert_eq!(code, 0, "{err}");
        assert!(
            err.contains("ok.fio")
                && err.contains("without effect")
                && err.contains("ioengine")
                && !err.contains("direct"),
            "{err}"
        );
        // `runtime=` without `number_ios=` runs until the simulated time
        // limit (it once panicked writing the report's configuration).
        let rt = dir.join("runtime.fio");
        std::fs::write(&rt, "[j]\nrw=randread\nsize=64m\nruntime=20ms\n").unwrap();
        let (code, out, err) = ssdsim(&["run", "--fio", rt.to_str().unwrap(), "--format", "json"]);
        assert_eq!(code, 0, "{err}");
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        let t = v["host"]["sim_time_s"].as_f64().unwrap();
        assert!((0.019..=0.0201).contains(&t), "sim_time_s {t}");
        assert!(v["host"]["requests"].as_u64().unwrap() > 100, "{out}");
        let toml = dir.join("bad.toml");
        std::fs::write(&toml, "[nand]\npage_sise = \"4KiB\"\n").unwrap();
        let (code, _, err) = ssdsim(&["run", "--config", toml.to_str().unwrap()]);
        assert_eq!(code, 2);
        assert!(
            err.contains("bad.toml") && err.contains("page_sise"),
            "{err}"
        );
    }

    #[test]
    fn run_json_has_the_documented_fields() {
        let (code, out, err) = ssdsim(&[
            "run",
            "--blocks-per-plane",
            "64",
            "--number_ios",
            "2000",
            "--rw",
            "randrw",
            "--format",
            "json",
        ]);
        assert_eq!(code, 0, "{err}");
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        for path in [
            "host.requests",
            "host.reads",
            "host.writes",
            "host.bytes_read",
            "host.bytes_written",
            "host.sim_time_s",
            "host.iops",
            "host.mbps",
            "latency_us.all.p99",
            "latency_us.read.p999",
            "latency_us.write.max",
            "latency_us.all.mean",
            "latency_us.all.p50",
            "latency_us.all.p90",
            "flash.page_reads",
            "flash.page_programs",
            "flash.block_erases",
            "flash.gc_page_copies",
            "flash.waf",
            "flash.erase_count_min",
            "flash.erase_count_max",
            "flash.erase_count_mean",
            "utilization.channels",
            "utilization.dies",
            "run.events",
            "run.wall_s",
            "run.precondition_wall_s",
            "run.seed",
            "config.nand.page_size",
        ] {
            let mut cur = &v;
            for p in path.split('.') {
                cur = cur.get(p).unwrap_or_else(|| panic!("report lacks {path}"));
            }
        }
        assert_eq!(v["host"]["requests"], 2000);
    }
}

mod sweeps {
    use super::rows_without_wall;
    use ssdsim::sweep::{
        expand, run_points, shard, standard_workload_defs, Axis, Row, WorkloadDef,
    };
    use ssdsim::RunOptions;
    use ssdsim_host::config::SsdConfig;
    use std::collections::BTreeMap;

    fn grid() -> Vec<ssdsim::sweep::Point> {
        let mut base = SsdConfig::default();
        base.nand.blocks_per_plane = 64;
        base.sim.precondition = ssdsim_host::config::Precondition::Fill;
        let axes = vec![
            Axis {
                key: "ftl".into(),
                values: vec!["page".into(), "dftl".into(), "nosuch".into()],
            },
            Axis {
                key: "sched".into(),
                values: vec!["noop".into(), "deadline".into()],
            },
            Axis {
                key: "workload".into(),
                values: vec!["rand-write".into(), "oltp".into()],
            },
        ];
        let workloads: BTreeMap<String, WorkloadDef> = standard_workload_defs();
        let common = vec![
            ("number_ios".to_string(), "1500".to_string()),
            ("op".to_string(), "0.25".to_string()),
        ];
        expand(&base, &axes, &common, &workloads)
    }

    #[test]
    fn parallel_equals_serial_and_shards_union_equals_whole() {
        let points = grid();
        assert_eq!(points.len(), 12);
        let opts = RunOptions::default();
        let serial = run_points(&points, 1, &opts, |_, _, _| {}).unwrap();
        let parallel = run_points(&points, 2, &opts, |_, _, _| {}).unwrap();
        assert_eq!(
            rows_without_wall(&serial),
            rows_without_wall(&parallel),
            "thread count changed results"
        );
        // A failing configuration is reported in its row; the others still ran.
        let failed: Vec<&Row> = serial.iter().filter(|r| r.error.is_some()).collect();
        assert_eq!(failed.len(), 4);
        assert!(failed
            .iter()
            .all(|r| r.params.iter().any(|(k, v)| k == "ftl" && v == "nosuch")));
        assert!(serial
            .iter()
            .filter(|r| r.error.is_none())
            .all(|r| r.requests == 1500 && r.energy_j.is_some()));
        // Shards: the union of 3 shards is the whole grid, byte for byte.
        let mut union = Vec::new();
        for i in 0..3 {
            union.extend(run_points(&shard(points.clone(), i, 3), 1, &opts, |_, _, _| {}).unwrap());
        }
        union.sort_by_key(|r| r.index);
        assert_eq!(rows_without_wall(&union), rows_without_wall(&serial));
    }
}

mod tools {
    use super::ssdsim;

    fn repo(p: &str) -> String {
        format!("{}/../../{p}", env!("CARGO_MANIFEST_DIR"))
    }

    #[test]
    fn mapping_size_matches_park_example() {
        let (code, out, err) = ssdsim(&[
            "mapping-size",
            "--capacity",
            "512MiB",
            "--page-size",
            "2KiB",
            "--ftl",
            "page",
            "--format",
            "json",
        ]);
        assert_eq!(code, 0, "{err}");
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        assert_eq!(v[0]["table_bytes"], 786_432);
    }

    #[test]
    fn replays_a_trace_and_reports_its_stats() {
        let t = repo("traces/synth.spc");
        let (code, out, err) = ssdsim(&["trace", "stats", &t, "--format", "json"]);
        assert_eq!(code, 0, "{err}");
        let st: serde_json::Value = serde_json::from_str(&out).unwrap();
        let n = st["requests"].as_u64().unwrap();
        assert!(n > 0);
        let (code, out, err) = ssdsim(&[
            "run",
            "--trace",
            &t,
            "--blocks-per-plane",
            "64",
            "--precondition",
            "fill",
            "--format",
            "json",
        ]);
        assert_eq!(code, 0, "{err}");
        let r: serde_json::Value = serde_json::from_str(&out).unwrap();
        assert_eq!(r["host"]["requests"].as_u64().unwrap(), n);
        assert!(r["energy_j"]["total"].as_f64().unwrap() > 0.0);
        // --max-gap caps the gaps `trace stats` reports as the longest.
        let longest = st["max_interarrival_s"].as_f64().unwrap();
        let cap = format!("{}ns", (longest * 1e9 / 2.0) as u64);
        let (code, out, err) = ssdsim(&[
            "run",
            "--trace",
            &t,
            "--max-gap",
            &cap,
            "--no-power",
            "--format",
            "json",
        ]);
        assert_eq!(code, 0, "{err}");
        let r: serde_json::Value = serde_json::from_str(&out).unwrap();
        assert!(
            r["notes"]["trace_gaps_capped"].as_u64().unwrap() >= 1,
            "{out}"
        );
        assert!(r["config"]["replay"]["max_gap"].is_string(), "{out}");
    }

    /// `--number_ios` ends a trace replay or a personality too (it used to be
    /// dropped: only the fio-style generator read it); `--max-requests` wins
    /// for a trace.
    #[test]
    fn number_ios_ends_traces_and_personalities() {
        let requests = |args: &[&str]| {
            let mut all = vec![
                "run",
                "--blocks-per-plane",
                "64",
                "--no-power",
                "--format",
                "json",
            ];
            all.extend_from_slice(args);
            let (code, out, err) = ssdsim(&all);
            assert_eq!(code, 0, "{err}");
            let r: serde_json::Value = serde_json::from_str(&out).unwrap();
            (r["host"]["requests"].as_u64().unwrap(), r["notes"].clone())
        };
        let t = repo("traces/synth.spc");
        assert_eq!(requests(&["--trace", &t, "--number_ios", "7"]).0, 7);
        assert_eq!(
            requests(&["--trace", &t, "--number_ios", "7", "--max-requests", "5"]).0,
            5
        );
        let (n, notes) = requests(&["--personality", "varmail", "--number_ios", "300"]);
        let pre = notes["personality_prealloc_requests"].as_u64().unwrap();
        assert_eq!(n, 300 + pre);
    }

    #[test]
    fn bad_trace_line_is_named() {
        let dir = std::env::temp_dir().join(format!("ssdsim-trace-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let f = dir.join("bad.spc");
        std::fs::write(&f, "0,100,4096,R,0.000000\n0,200,4096,Q,0.001000\n").unwrap();
        let (code, _, err) = ssdsim(&[
            "run",
            "--trace",
            f.to_str().unwrap(),
            "--trace-format",
            "spc",
            "--blocks-per-plane",
            "64",
        ]);
        assert_eq!(code, 2, "{err}");
        assert!(err.contains("bad.spc:2"), "{err}");
        assert_eq!(err.matches("bad.spc:2").count(), 1, "said once: {err}");
        let (code, out, err) = ssdsim(&[
            "run",
            "--trace",
            f.to_str().unwrap(),
            "--trace-format",
            "spc",
            "--blocks-per-plane",
            "64",
            "--skip-bad-lines",
            "--format",
            "json",
        ]);
        assert_eq!(code, 0, "{err}");
        let r: serde_json::Value = serde_json::from_str(&out).unwrap();
        assert_eq!(r["host"]["requests"], 1);
        assert_eq!(r["notes"]["trace_bad_lines_skipped"], 1);
    }

    #[test]
    fn power_trace_and_plots_are_written() {
        let dir = std::env::temp_dir().join(format!("ssdsim-power-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let csv = dir.join("p.csv");
        let svg = dir.join("p.svg");
        let (code, _, err) = ssdsim(&[
            "run",
            "--blocks-per-plane",
            "64",
            "--rw",
            "randrw",
            "--number_ios",
            "3000",
            "--power-trace",
            csv.to_str().unwrap(),
            "--power-sample",
            "1ms",
            "--plot-power",
            svg.to_str().unwrap(),
        ]);
        assert_eq!(code, 0, "{err}");
        let text = std::fs::read_to_string(&csv).unwrap();
        assert!(text.lines().next().unwrap().starts_with("time_s"), "{text}");
        assert!(text.lines().count() > 2);
        assert!(std::fs::read_to_string(&svg).unwrap().contains("<svg"));
    }
}

mod write_buffer {
    use super::*;

    fn run(
        buffer: &str,
        flush: ssdsim_host::config::FlushPolicy,
        rw: RwMode,
    ) -> ssd_core::stats::Report {
        let mut cfg = SsdConfig::default();
        small(&mut cfg);
        cfg.dram.write_buffer = ssd_core::units::parse_size(buffer).unwrap();
        cfg.dram.flush = flush;
        cfg.workload.rw = rw;
        cfg.workload.size = Some(ssd_core::Size::kib(512)); // 128 pages
        cfg.workload.number_ios = Some(5000);
        cfg.workload.iodepth = 4;
        run_config(
            &cfg,
            &RunOptions {
                power: false,
                ..Default::default()
            },
        )
        .unwrap()
        .report
    }

    #[test]
    fn lru_buffer_absorbs_rewrites_and_serves_reads() {
        use ssdsim_host::config::FlushPolicy::*;
        let none = run("0", EvictLru, RwMode::RandWrite);
        let big = run("1MiB", EvictLru, RwMode::RandWrite);
        // 128 distinct pages fit in a 256-page buffer: nothing reaches flash.
        assert_eq!(big.flash.page_programs, 0);
        assert_eq!(big.ftl.write_buffer_hits + 128, 5000);
        assert!(big.latency_us.write.mean < none.latency_us.write.mean / 10.0);
        // A 64-page buffer evicts: programs = evictions, and the buffer still absorbs some.
        let small_buf = run("256KiB", EvictLru, RwMode::RandWrite);
        assert_eq!(
            small_buf.flash.page_programs,
            small_buf.ftl.write_buffer_evictions
        );
        assert!(small_buf.ftl.write_buffer_hits > 0 && small_buf.flash.page_programs < 5000);
        // Write-through: every page is programmed; reads of buffered pages are hits.
        let wt = run("1MiB", WriteThrough, RwMode::RandRw);
        assert_eq!(wt.flash.page_programs, wt.host.writes);
        assert!(wt.ftl.read_buffer_hits > 0);
    }
}
