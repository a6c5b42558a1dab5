//! The hardware models behind `ssd_core::hw`: each against its closed form.
//!
//! The drives here have one die with one plane, so a sequential QD1 stream
//! writes page 0, 1, 2, ... of one block and every request runs alone: a
//! request's latency is the fixed path (link, CPU, DRAM, command and page
//! transfer) plus the array time the model gives for its page.

use ssd_core::hw::nand::{PageMap, ProgramScheme, RetryConfig};
use ssd_core::observer::NullObserver;
use ssd_core::sched::Noop;
use ssd_core::{Dur, SimTime, Simulation};
use ssdsim::{run_config, RunOptions};
use ssdsim_host::config::{Precondition, SsdConfig};
use ssdsim_host::workload::{HostRequest, IoOp, Timing, VecSource};

/// `preset` on one channel, one die, one plane, 64 blocks.
fn one_die(preset: &str) -> SsdConfig {
    let mut cfg = SsdConfig {
        nand: ssdsim_host::config::NandConfig::preset(preset).unwrap(),
        ..SsdConfig::default()
    };
    cfg.layout.channels = 1;
    cfg.layout.ways = 1;
    cfg.nand.dies_per_chip = 1;
    cfg.nand.planes_per_die = 1;
    cfg.nand.blocks_per_plane = 64;
    cfg
}

/// QD1 page-sized requests on pages `0..n` in order: `op` only, or writes
/// then reads of the same pages. Returns (write mean, write max, read mean,
/// read max) in ns.
fn sequential(cfg: &SsdConfig, n: u64, reads: bool, precondition: bool) -> (f64, u64, f64, u64) {
    let s = cfg.validate().unwrap();
    let sectors = s.geometry.page_size / 512;
    let mut reqs = Vec::new();
    let req = |op, i: u64| HostRequest {
        arrival: SimTime(0),
        op,
        lba: i * sectors as u64,
        sectors,
        stream: 0,
        tag: 0,
        sync: false,
        placement: ssd_core::workload::Placement::NONE,
    };
    if !precondition {
        reqs.extend((0..n).map(|i| req(IoOp::Write, i)));
    }
    if reads {
        reqs.extend((0..n).map(|i| req(IoOp::Read, i)));
    }
    let src = VecSource::new(reqs, Timing::ClosedLoop { depth: 1 });
    let ftl = ftl::build(&s.config.ftl, &s.shape()).unwrap();
    let mut sim = Simulation::new(s, ftl, src, Noop::new(1024, true), NullObserver);
    if precondition {
        sim.settings.config.sim.precondition = Precondition::Fill;
        sim.precondition();
    }
    sim.run().unwrap();
    (
        sim.lat.write.mean_ns(),
        sim.lat.write.max_ns(),
        sim.lat.read.mean_ns(),
        sim.lat.read.max_ns(),
    )
}

/// SimpleSSD's TLC page order (`LatencyTLC::GetPageType`), written out.
fn simplessd_tlc_type(p: u64) -> usize {
    if p <= 5 {
        0
    } else if p <= 7 {
        1
    } else {
        (((p - 8) >> 1) % 3) as usize
    }
}

/// Multi-pass TLC: a page programs and reads in its type's time, types in
/// SimpleSSD's shared-word-line order; the mean is the table's mean over the
/// pages written, the slowest is the MSB program.
#[test]
fn tlc_multipass_latency_per_page_type() {
    let cfg = one_die("tlc-multipass");
    let pt = cfg.nand.page_types.clone().unwrap();
    assert_eq!(pt.program, ProgramScheme::MultiPass);
    assert_eq!(pt.map, PageMap::SharedWl);
    let us = |v: u64| v as f64 * 1e3;
    let (t_r, t_prog) = ([58, 78, 107], [558, 2201, 5001]);
    // The fixed path, from the same drive with one latency per operation.
    let mut fixed = cfg.clone();
    fixed.nand.page_types = None;
    let n = 2 * cfg.nand.pages_per_block as u64 + 17;
    let (fw, fw_max, fr, _) = sequential(&fixed, n, true, false);
    assert_eq!(fw, fw_max as f64, "fixed: every write alike");
    let base_w = fw - cfg.nand.t_prog.0 as f64;
    let base_r = fr - cfg.nand.t_r.0 as f64;
    let (w, w_max, r, r_max) = sequential(&cfg, n, true, false);
    let pages = (0..n).map(|i| simplessd_tlc_type(i % cfg.nand.pages_per_block as u64));
    let mean = |tab: [u64; 3]| pages.clone().map(|t| us(tab[t])).sum::<f64>() / n as f64;
    assert!((w - (base_w + mean(t_prog))).abs() < 1e-6, "write mean {w}");
    assert!((r - (base_r + mean(t_r))).abs() < 1e-6, "read mean {r}");
    assert_eq!(w_max as f64, base_w + us(5001), "MSB program");
    assert_eq!(r_max as f64, base_r + us(107), "MSB read");
    // Over whole blocks the per-type model and the fixed one at its mean agree.
    let m = cfg.nand.pages_per_block as u64;
    let (w_blk, _, _, _) = sequential(&cfg, m, false, false);
    let (f_blk, _, _, _) = sequential(&fixed, m, false, false);
    assert!((w_blk - f_blk).abs() <= 1.0, "{w_blk} vs {f_blk}");
}

/// One-shot QLC: three pages of a word line load in `t_load`, the fourth
/// programs the word line; reads are 150 us whatever the type.
#[test]
fn qlc_oneshot_programs_a_word_line_at_its_last_page() {
    let cfg = one_die("qlc-96l-oneshot");
    let pt = cfg.nand.page_types.clone().unwrap();
    assert_eq!(pt.program, ProgramScheme::OneShot);
    let mut fixed = cfg.clone();
    fixed.nand.page_types = None;
    let n = 64;
    let (fw, _, _, _) = sequential(&fixed, n, false, false);
    let base_w = fw - cfg.nand.t_prog.0 as f64;
    let (w, w_max, _, _) = sequential(&cfg, n, false, false);
    let want = base_w + (3.0 * 5_000.0 + 8_738_000.0) / 4.0;
    assert!((w - want).abs() < 1e-6, "write mean {w} vs {want}");
    assert_eq!(w_max as f64, base_w + 8_738_000.0);
    // The scalar is the mean a page programs in.
    assert_eq!(cfg.nand.t_prog, Dur(2_188_250));
}

fn retry(steps_per_kpe: f64, pe_offset: u32, steps_per_decade: f64, age: Dur) -> RetryConfig {
    RetryConfig {
        max_steps: 7,
        t_step: Dur::from_us(5),
        base_steps: 0.0,
        steps_per_kpe,
        steps_per_decade,
        pe_offset,
        data_age: age,
    }
}

/// Read retry on a fixed-latency chip (chip2, tR 25 us): with `mu` extra
/// steps a read takes `mu * (tR + t_step)` more, exactly when `mu` is whole
/// and on average when it is not.
#[test]
fn read_retry_adds_steps_from_wear_and_retention() {
    let plain = one_die("chip2");
    let n = 3000;
    let (_, _, r0, r0_max) = sequential(&plain, n, true, false);
    assert_eq!(r0, r0_max as f64);
    let step = 30_000.0; // tR 25 us + t_step 5 us
    let with = |r: RetryConfig| {
        let mut c = plain.clone();
        c.nand.retry = Some(r);
        c
    };
    // 2000 P/E cycles at 1 step per 1000: two steps on every read.
    let (_, _, r, r_max) = sequential(&with(retry(1.0, 2000, 0.0, Dur::ZERO)), n, true, false);
    assert_eq!(r, r0 + 2.0 * step);
    assert_eq!(r_max as f64, r0 + 2.0 * step);
    // 1.5 steps: one or two, half the time each (binomial: sd 15 us per
    // read, 0.27 us over 3000 reads).
    let (_, _, r, r_max) = sequential(&with(retry(1.0, 1500, 0.0, Dur::ZERO)), n, true, false);
    assert!(
        (r - (r0 + 1.5 * step)).abs() < 1_500.0,
        "mean {r} vs {}",
        r0 + 1.5 * step
    );
    assert_eq!(r_max as f64, r0 + 2.0 * step);
    // The step cap.
    let (_, _, r, _) = sequential(&with(retry(1.0, 20_000, 0.0, Dur::ZERO)), n, true, false);
    assert_eq!(r, r0 + 7.0 * step);
    // Retention: data written before the run is 9 hours old at time 0, one
    // step per decade of hours: log10(1 + 9) = 1 step. Data the run writes
    // is fresh and reads at once.
    let aged = with(retry(0.0, 0, 1.0, Dur::from_ms(9 * 3_600_000)));
    let (_, _, r_old, _) = sequential(&aged, 500, true, true);
    let (_, _, r_old0, _) = sequential(&plain, 500, true, true);
    assert!(
        (r_old - (r_old0 + step)).abs() < 1.0,
        "{r_old} vs {}",
        r_old0 + step
    );
    let (_, _, r_new, _) = sequential(&aged, 500, true, false);
    assert!((r_new - r0).abs() < 1.0, "{r_new} vs {r0}");
}

/// Read retry shows in the tail and in the energy of a random-read run: the
/// worn preset's reads take several steps, and the flash array is busy (and
/// drawing its read current) that much longer.
#[test]
fn read_retry_costs_tail_latency_and_energy() {
    let run = |preset: &str| {
        let mut cfg = one_die(preset);
        cfg.sim.precondition = Precondition::Fill;
        cfg.power = ssdsim_host::config::PowerConfig::preset("lee2011").unwrap();
        cfg.workload.rw = ssdsim_host::workload::RwMode::RandRead;
        cfg.workload.bs = cfg.nand.page_size;
        cfg.workload.iodepth = 4;
        cfg.workload.number_ios = Some(2000);
        run_config(&cfg, &RunOptions::default()).unwrap().report
    };
    let fresh = run("tlc-multipass");
    let worn = run("tlc-multipass-worn");
    let p99 = |r: &ssd_core::stats::Report| r.latency_us.read.p99;
    assert!(
        p99(&worn) > 3.0 * p99(&fresh),
        "{} vs {}",
        p99(&worn),
        p99(&fresh)
    );
    let e = |r: &ssd_core::stats::Report| r.extra["energy_j"]["total"].as_f64().unwrap();
    assert!(e(&worn) > e(&fresh), "{} vs {}", e(&worn), e(&fresh));
    // The report counts the reads and their steps: at 3000 P/E and a year's
    // retention the mean is 3 + 0.5 * log10(1 + 8760) = 4.97 steps.
    assert!(!fresh.extra.contains_key("hardware"));
    let nand = &worn.extra["hardware"]["nand"];
    // One plane: every array read is one page.
    assert_eq!(nand["array_reads"].as_u64(), Some(worn.flash.page_reads));
    let mean = nand["mean_retry_steps"].as_f64().unwrap();
    assert!((mean - 4.97).abs() < 0.05, "{mean}");
}

/// Page types and retry are checked before the run, naming the field.
#[test]
fn bad_page_types_are_refused_naming_the_field() {
    let err = |f: &dyn Fn(&mut SsdConfig)| {
        let mut c = one_die("tlc-multipass");
        f(&mut c);
        c.validate().unwrap_err().to_string()
    };
    let e = err(&|c| c.nand.t_r = Dur::from_us(60));
    assert!(
        e.starts_with("nand.t_r:") && e.contains("set it to 80489ns"),
        "{e}"
    );
    let e = err(&|c| {
        c.nand
            .page_types
            .as_mut()
            .unwrap()
            .t_prog
            .pop()
            .map(|_| ())
            .unwrap()
    });
    assert!(e.starts_with("nand.page_types.t_prog:"), "{e}");
    let e = err(&|c| c.nand.pages_per_block = 100);
    assert!(e.starts_with("nand.pages_per_block:"), "{e}");
    let e = err(&|c| {
        c.nand.page_types.as_mut().unwrap().t_r = vec![Dur::from_us(50); 5];
    });
    assert!(e.starts_with("nand.page_types.t_r:"), "{e}");
    let e = err(&|c| c.nand.retry = Some(retry(-1.0, 0, 0.0, Dur::ZERO)));
    assert!(e.starts_with("nand.retry.steps_per_kpe:"), "{e}");
}

fn suspend_cfg(t_suspend: u64, t_resume: u64) -> ssd_core::hw::nand::SuspendConfig {
    ssd_core::hw::nand::SuspendConfig {
        t_suspend: Dur::from_us(t_suspend),
        t_resume: Dur::from_us(t_resume),
        min_remaining: Dur::ZERO,
        programs: true,
        erases: true,
        max_per_op: 1,
    }
}

/// Open-loop `reqs` on a preconditioned `cfg`: (write latencies, read
/// latencies) as (max, mean) in ns, and the report.
fn open_loop(
    cfg: &SsdConfig,
    reqs: Vec<HostRequest>,
) -> ((u64, f64), (u64, f64), ssd_core::stats::Report) {
    let mut cfg = cfg.clone();
    cfg.sim.precondition = Precondition::Fill;
    let s = cfg.validate().unwrap();
    let src = VecSource::new(reqs, Timing::OpenLoop);
    let ftl = ftl::build(&s.config.ftl, &s.shape()).unwrap();
    let mut sim = Simulation::new(s, ftl, src, Noop::new(1024, true), NullObserver);
    sim.precondition();
    let r = sim.run().unwrap();
    (
        (sim.lat.write.max_ns(), sim.lat.write.mean_ns()),
        (sim.lat.read.max_ns(), sim.lat.read.mean_ns()),
        r,
    )
}

fn page_req(op: IoOp, at_us: u64, page: u64) -> HostRequest {
    HostRequest {
        arrival: SimTime(at_us * 1000),
        op,
        lba: page * 8,
        sectors: 8,
        stream: 0,
        tag: 0,
        sync: false,
        placement: ssd_core::workload::Placement::NONE,
    }
}

/// Wu & He's suspension, against its closed form: a read that reaches a die
/// in the middle of a program waits `t_suspend`, not the program's rest;
/// the program ends `t_suspend` + the read's die time + `t_resume` later.
#[test]
fn program_suspension_for_a_read_closed_form() {
    let plain = one_die("chip2");
    let mut susp = plain.clone();
    susp.nand.suspend = Some(suspend_cfg(20, 10));
    // Alone: a write at 0 and a read at 0 on an idle drive.
    let ((w_alone, _), _, _) = open_loop(&plain, vec![page_req(IoOp::Write, 0, 0)]);
    let (_, (r_alone, _), _) = open_loop(&plain, vec![page_req(IoOp::Read, 0, 100)]);
    // Together: the read comes 150 us into the write, while its 200 us
    // program runs (it starts at about 113 us).
    let both = vec![page_req(IoOp::Write, 0, 0), page_req(IoOp::Read, 150, 100)];
    let ((w, _), (r, _), rep) = open_loop(&susp, both.clone());
    let s = susp.validate().unwrap();
    let read_die = (s.cmd_time() + susp.nand.t_r + s.page_xfer_time()).0;
    assert_eq!(
        r,
        r_alone + 20_000,
        "the read waits for the suspension only"
    );
    assert_eq!(
        w,
        w_alone + 20_000 + read_die + 10_000,
        "the program resumes after the read"
    );
    assert_eq!(rep.extra["hardware"]["nand"]["suspensions"], 1);
    // Without suspension the read waits for the program's end.
    let ((w0, _), (r0, _), _) = open_loop(&plain, both);
    assert_eq!(w0, w_alone);
    assert!(r0 > r_alone + 100_000, "{r0} vs {r_alone}");
}

/// Under a mixed load, suspension cuts the read tail and costs the writes;
/// it is refused where the power model would count a suspended operation
/// twice, or reads are not served first.
#[test]
fn suspension_cuts_the_read_tail_under_mixed_load() {
    let run = |suspend: bool| {
        // Spare blocks enough that the run needs no GC: the reads wait for
        // host programs only (MSB pages take 5 ms).
        let mut cfg = one_die("tlc-multipass");
        cfg.nand.blocks_per_plane = 256;
        cfg.ftl.op = 0.25;
        cfg.sim.precondition = Precondition::Fill;
        if suspend {
            cfg.nand.suspend = Some(ssd_core::hw::nand::SuspendConfig {
                min_remaining: Dur::from_us(100),
                max_per_op: 8,
                ..suspend_cfg(20, 20)
            });
        }
        cfg.workload.rw = ssdsim_host::workload::RwMode::RandRw;
        cfg.workload.rwmixread = 70;
        cfg.workload.bs = cfg.nand.page_size;
        cfg.workload.iodepth = 4;
        cfg.workload.number_ios = Some(3000);
        run_config(&cfg, &RunOptions::default()).unwrap().report
    };
    let (off, on) = (run(false), run(true));
    let (r_off, r_on) = (&off.latency_us.read, &on.latency_us.read);
    assert!(
        r_on.p99 < 0.5 * r_off.p99,
        "read p99 {} vs {}",
        r_on.p99,
        r_off.p99
    );
    assert!(r_on.mean < r_off.mean);
    assert!(on.latency_us.write.mean > off.latency_us.write.mean);
    assert_eq!(on.flash.gc_page_copies, 0);
    assert!(
        on.extra["hardware"]["nand"]["suspensions"]
            .as_u64()
            .unwrap()
            > 100
    );
    let mut bad = one_die("park-slc");
    bad.power = ssdsim_host::config::PowerConfig::preset("park-slc").unwrap();
    bad.nand.suspend = Some(suspend_cfg(20, 10));
    let e = bad.validate().unwrap_err().to_string();
    assert!(
        e.starts_with("nand.suspend:") && e.contains("per operation"),
        "{e}"
    );
    let mut bad = one_die("chip2");
    bad.controller.prioritize_reads = false;
    bad.nand.suspend = Some(suspend_cfg(20, 10));
    let e = bad.validate().unwrap_err().to_string();
    assert!(e.contains("prioritize_reads"), "{e}");
}

/// Suspension under garbage collection on a multi-plane, multi-die drive
/// with the power model: erases and GC programs are suspended too, the FTL
/// invariants hold, every request completes and a rerun gives the same
/// report.
#[test]
fn suspension_under_gc_keeps_every_invariant() {
    let run = || {
        let mut cfg = one_die("tlc-multipass");
        cfg.nand.planes_per_die = 2;
        cfg.nand.dies_per_chip = 2;
        cfg.nand.blocks_per_plane = 64;
        cfg.power = ssdsim_host::config::PowerConfig::preset("lee2011").unwrap();
        cfg.sim.precondition = Precondition::Fill;
        cfg.nand.suspend = Some(ssd_core::hw::nand::SuspendConfig {
            max_per_op: 4,
            ..suspend_cfg(20, 20)
        });
        cfg.workload.rw = ssdsim_host::workload::RwMode::RandRw;
        cfg.workload.rwmixread = 50;
        cfg.workload.bs = cfg.nand.page_size;
        cfg.workload.iodepth = 16;
        cfg.workload.number_ios = Some(16000);
        let opts = RunOptions {
            check_invariants: true,
            ..Default::default()
        };
        run_config(&cfg, &opts).unwrap().report
    };
    let r = run();
    assert_eq!(r.host.requests, 16000);
    assert!(r.flash.block_erases > 0 && r.flash.gc_page_copies > 0);
    assert!(r.extra["hardware"]["nand"]["suspensions"].as_u64().unwrap() > 0);
    let mut again = run();
    again.run.wall_s = r.run.wall_s;
    again.run.precondition_wall_s = r.run.precondition_wall_s;
    assert_eq!(
        serde_json::to_string(&r).unwrap(),
        serde_json::to_string(&again).unwrap()
    );
}

/// A bundle of one's own: a channel whose command phase is slower than the
/// default's and whose pages cost a fixed setup each, behind the fixed NAND;
/// an isolated read and write take exactly what the models say.
#[test]
fn a_hardware_bundle_of_ones_own() {
    use ssd_core::ftl::OpKind;
    use ssd_core::hw::{Channel, CycleCpu, FixedDram, FixedNand, Hardware, Parts, SerialLink};
    struct SlowBus;
    impl Channel for SlowBus {
        fn command_time(&self, kind: OpKind, _planes: u32) -> Dur {
            Dur::from_us(if kind == OpKind::Read { 3 } else { 5 })
        }
        fn data_time(&self, pages: u32) -> Dur {
            Dur::from_us(7 + 50 * pages as u64)
        }
    }
    struct MyHw;
    impl Hardware for MyHw {
        type Nand = FixedNand;
        type Channel = SlowBus;
        type Controller = CycleCpu;
        type Dram = FixedDram;
        type Link = SerialLink;
    }
    let cfg = one_die("chip2");
    let s = cfg.validate().unwrap();
    let run = |op: IoOp| {
        let hw: Parts<MyHw> = Parts {
            nand: FixedNand::from_config(&cfg.nand),
            chan: SlowBus,
            ctrl: CycleCpu::new(&s.config.controller, &s.config.power),
            dram: FixedDram::new(&s.config.dram),
            link: SerialLink::new(&s.config.host),
        };
        let mut reqs = vec![page_req(IoOp::Write, 0, 0)];
        if op == IoOp::Read {
            reqs.push(page_req(IoOp::Read, 10_000, 0));
        }
        let src = VecSource::new(reqs, Timing::OpenLoop);
        let ftl = ftl::build(&s.config.ftl, &s.shape()).unwrap();
        let mut sim =
            Simulation::with_hardware(s.clone(), hw, ftl, src, Noop::new(1024, true), NullObserver);
        sim.run().unwrap();
        (sim.lat.write.max_ns(), sim.lat.read.max_ns())
    };
    let c = &cfg;
    let cpu = s.cycles(c.controller.cycles_per_command + c.controller.cycles_per_map_lookup);
    let path = c.host.command_overhead + cpu + c.dram.access_latency + s.link.time_for(4096);
    let (w, _) = run(IoOp::Write);
    assert_eq!(Dur(w), path + Dur::from_us(5 + 7 + 50) + c.nand.t_prog);
    let (_, r) = run(IoOp::Read);
    assert_eq!(
        Dur(r),
        path + Dur::from_us(3) + c.nand.t_r + Dur::from_us(7 + 50)
    );
}

// ------------------------------------------------------- multi-plane rule

/// chip2 on one channel with `dies` dies of four planes, a 10 us page
/// transfer (so that the array, not the bus, bounds one die), NVMe and no
/// write buffer.
fn four_planes(dies: u32) -> SsdConfig {
    let mut cfg = one_die("chip2");
    cfg.nand.planes_per_die = 4;
    cfg.nand.dies_per_chip = dies;
    cfg.nand.bus = ssdsim_host::config::BusSpeed::PageTime(Dur::from_us(10));
    cfg.host = ssdsim_host::config::HostConfig::preset(ssdsim_host::config::Interface::NvmeGen4x4);
    cfg.dram.write_buffer = ssd_core::Size(0);
    cfg
}

fn with_rule(cfg: &SsdConfig, max_planes: u32, gap_ns: u64) -> SsdConfig {
    let mut c = cfg.clone();
    c.nand.multiplane_rule = Some(ssd_core::hw::MultiplaneConfig {
        same_page: true,
        max_planes: Some(max_planes),
        plane_gap: Dur(gap_ns),
    });
    c
}

/// `n` page-sized sequential writes at QD `qd` on an empty drive, then (if
/// `reads`) `n` sequential reads of the same pages at QD `qd`: the report
/// of the last phase.
fn seq_phases(cfg: &SsdConfig, n: u64, qd: u32, reads: bool) -> ssd_core::stats::Report {
    let s = cfg.validate().unwrap();
    let sectors = s.geometry.page_size / 512;
    let reqs = |op| {
        (0..n)
            .map(|i| HostRequest {
                arrival: SimTime(0),
                op,
                lba: i * sectors as u64,
                sectors,
                stream: 0,
                tag: 0,
                sync: false,
                placement: ssd_core::workload::Placement::NONE,
            })
            .collect::<Vec<_>>()
    };
    let src = VecSource::new(reqs(IoOp::Write), Timing::ClosedLoop { depth: qd });
    let ftl = ftl::build(&s.config.ftl, &s.shape()).unwrap();
    let mut sim = Simulation::new(s, ftl, src, Noop::new(1024, false), NullObserver);
    let r = sim.run().unwrap();
    if !reads {
        return r;
    }
    sim.restart(VecSource::new(
        reqs(IoOp::Read),
        Timing::ClosedLoop { depth: qd },
    ));
    sim.run().unwrap()
}

/// Two host writes of four pages, the second arriving while the first's
/// programs run: its pages land on the four planes of the die at one page
/// offset and are all queued when the die frees, so they run as one batch
/// of four, two of two or four of one by `max_planes`, and each plane
/// beyond a batch's first adds `plane_gap`. The second write completes
/// exactly its batches' time after the first: `b * (cmd + tPROG) + 4 * xfer
/// + (4 - b) * plane_gap` for `b` batches.
#[test]
fn multiplane_rule_max_planes_and_plane_gap_closed_form() {
    let cfg = four_planes(1);
    let s = cfg.validate().unwrap();
    let (c, x, t) = (s.cmd_time().0, s.page_xfer_time().0, cfg.nand.t_prog.0);
    // (completion of the second write - completion of the first, multi-plane batches)
    let gap_between = |cfg: &SsdConfig| {
        let s = cfg.validate().unwrap();
        let w = |at: u64, page: u64| HostRequest {
            arrival: SimTime(at),
            op: IoOp::Write,
            lba: page * 8,
            sectors: 4 * s.geometry.page_size / 512,
            stream: 0,
            tag: 0,
            sync: false,
            placement: ssd_core::workload::Placement::NONE,
        };
        let src = VecSource::new(vec![w(0, 0), w(1_000, 4)], Timing::OpenLoop);
        let ftl = ftl::build(&s.config.ftl, &s.shape()).unwrap();
        let mut sim = Simulation::new(s, ftl, src, Noop::new(1024, false), NullObserver);
        let r = sim.run().unwrap();
        let (max, sum) = (sim.lat.write.max_ns(), 2.0 * sim.lat.write.mean_ns());
        let first = sum as u64 - max;
        (max + 1_000 - first, r.flash.multiplane_batches)
    };
    let batches = |b: u64, gap: u64| b * (c + t) + 4 * x + (4 - b) * gap;
    for gap in [0, 3_000] {
        let (four, _) = gap_between(&with_rule(&cfg, 4, gap));
        let (two, _) = gap_between(&with_rule(&cfg, 2, gap));
        let (one, b1) = gap_between(&with_rule(&cfg, 1, gap));
        assert_eq!(four, batches(1, gap), "max_planes 4, gap {gap}");
        assert_eq!(two, batches(2, gap), "max_planes 2, gap {gap}");
        assert_eq!(one, batches(4, gap), "max_planes 1, gap {gap}");
        assert_eq!(b1, 0);
    }
    // The rule's defaults are today's: every plane, no gap; max_planes = 1
    // is single-plane operation.
    assert_eq!(gap_between(&cfg), gap_between(&with_rule(&cfg, 4, 0)));
    let mut off = cfg.clone();
    off.nand.multiplane = false;
    assert_eq!(gap_between(&off), gap_between(&with_rule(&cfg, 1, 0)));
}

/// Sequential reads and writes at a depth that keeps a die's queue full:
/// a batch of `k` planes reads in `cmd + tR + k * xfer` and programs in
/// `cmd + k * xfer + tPROG` (plus `(k - 1) * plane_gap`), so one die's
/// throughput is `k` pages per that.
#[test]
fn multiplane_throughput_scales_with_planes_per_op() {
    let cfg = four_planes(1);
    let s = cfg.validate().unwrap();
    let (c, x) = (s.cmd_time().0 as f64, s.page_xfer_time().0 as f64);
    let (t_r, t_prog) = (cfg.nand.t_r.0 as f64, cfg.nand.t_prog.0 as f64);
    let n = 4000;
    let close = |got: f64, want: f64, what: &str| {
        assert!(
            (got / want - 1.0).abs() < 0.01,
            "{what}: {got:.0} IOPS vs {want:.0}"
        );
    };
    for (k, gap) in [(1u32, 0u64), (2, 0), (4, 0), (4, 2_000), (2, 2_000)] {
        let rule = with_rule(&cfg, k, gap);
        let (kf, g) = (k as f64, (k as f64 - 1.0) * gap as f64);
        let r = seq_phases(&rule, n, 32, true);
        close(
            r.host.iops,
            kf * 1e9 / (c + t_r + kf * x + g),
            &format!("read k={k} gap={gap}"),
        );
        let w = seq_phases(&rule, n, 32, false);
        close(
            w.host.iops,
            kf * 1e9 / (c + kf * x + t_prog + g),
            &format!("write k={k} gap={gap}"),
        );
    }
    // Eight dies on the channel: programs scale with the planes per
    // operation until the channel is the limit, `k` pages per its data-in
    // `cmd + k * xfer`.
    let eight = four_planes(8);
    for k in [1u32, 2, 4] {
        let w = seq_phases(&with_rule(&eight, k, 0), 8 * n, 256, false);
        let kf = k as f64;
        let die_bound = 8.0 * kf * 1e9 / (c + kf * x + t_prog);
        let bus_bound = kf * 1e9 / (c + kf * x);
        assert_eq!(bus_bound < die_bound, k == 4);
        close(
            w.host.iops,
            die_bound.min(bus_bound),
            &format!("eight dies, writes k={k}"),
        );
    }
}

/// Independent multi-plane reads (`same_page = false`): random reads find
/// partners on every plane whatever their offsets, so a die reads four
/// pages per `cmd + tR + 4 * xfer`, where partners at one offset are rare.
#[test]
fn multiplane_without_same_page_batches_random_reads() {
    let cfg = four_planes(1);
    let s = cfg.validate().unwrap();
    let (c, x, t_r) = (
        s.cmd_time().0 as f64,
        s.page_xfer_time().0 as f64,
        cfg.nand.t_r.0 as f64,
    );
    let run = |same_page: bool| {
        let mut c = cfg.clone();
        c.nand.multiplane_rule = Some(ssd_core::hw::MultiplaneConfig {
            same_page,
            max_planes: None,
            plane_gap: Dur::ZERO,
        });
        c.sim.precondition = Precondition::Fill;
        c.workload.rw = ssdsim_host::workload::RwMode::RandRead;
        c.workload.bs = c.nand.page_size;
        c.workload.iodepth = 64;
        c.workload.number_ios = Some(8000);
        run_config(&c, &RunOptions::default()).unwrap().report
    };
    let (same, any) = (run(true), run(false));
    let want = 4.0 * 1e9 / (c + t_r + 4.0 * x);
    assert!(
        (any.host.iops / want - 1.0).abs() < 0.03,
        "{} IOPS vs {want:.0}",
        any.host.iops
    );
    assert!(
        any.flash.multiplane_batches > 1900,
        "{}",
        any.flash.multiplane_batches
    );
    assert!(
        same.host.iops < 0.7 * any.host.iops,
        "{} vs {}",
        same.host.iops,
        any.host.iops
    );
}

/// The rule is checked before the run, naming the field.
#[test]
fn bad_multiplane_rules_are_refused_naming_the_field() {
    let err = |planes: Option<u32>, same_page: bool, gap: Dur, preset: &str| {
        let mut c = one_die(preset);
        c.nand.planes_per_die = 2;
        c.nand.multiplane_rule = Some(ssd_core::hw::MultiplaneConfig {
            same_page,
            max_planes: planes,
            plane_gap: gap,
        });
        c.validate().map(|_| ()).map_err(|e| e.to_string())
    };
    let e = err(Some(3), true, Dur::ZERO, "chip2").unwrap_err();
    assert!(
        e.starts_with("nand.multiplane_rule.max_planes:") && e.contains("1..=2"),
        "{e}"
    );
    let e = err(Some(0), true, Dur::ZERO, "chip2").unwrap_err();
    assert!(e.starts_with("nand.multiplane_rule.max_planes:"), "{e}");
    let e = err(None, true, Dur::from_ms(2000), "chip2").unwrap_err();
    assert!(e.starts_with("nand.multiplane_rule.plane_gap:"), "{e}");
    let e = err(None, false, Dur::ZERO, "tlc-multipass").unwrap_err();
    assert!(e.starts_with("nand.multiplane_rule.same_page:"), "{e}");
    assert_eq!(err(Some(2), false, Dur::from_us(1), "chip2"), Ok(()));
    // From TOML: the table parses, and an unknown key is refused by name.
    let toml = "[nand.multiplane_rule]\nmax_planes = 2\nplane_gap = \"1us\"\n";
    let c = SsdConfig::from_toml_over(None, toml, "t.toml").unwrap();
    let rule = c.nand.multiplane_rule.unwrap();
    assert_eq!(
        (rule.same_page, rule.max_planes, rule.plane_gap),
        (true, Some(2), Dur::from_us(1))
    );
    let e = SsdConfig::from_toml_over(None, "[nand.multiplane_rule]\nplane_gp = 1\n", "t.toml")
        .unwrap_err()
        .to_string();
    assert!(e.contains("plane_gp"), "{e}");
}

// ------------------------------------------------------------ DRAM refresh

fn refresh(t_refi_ns: u64, t_rfc_ns: u64, watts: f64) -> ssd_core::hw::RefreshConfig {
    ssd_core::hw::RefreshConfig {
        t_refi: Dur(t_refi_ns),
        t_rfc: Dur(t_rfc_ns),
        power: ssd_core::units::Watts(watts),
    }
}

/// DRAM refresh (DDR4: tREFI 7.8 us, tRFC 350 ns) stretches a firmware
/// pass's `n` accesses of `L` each to `ceil(n * L * tREFI / (tREFI -
/// tRFC))`; every QD1 request's latency grows by exactly that less `n * L`.
#[test]
fn dram_refresh_stretches_accesses_by_the_refresh_share() {
    let base = one_die("chip2");
    let with_latency = |ns: u64| {
        let mut c = base.clone();
        c.dram.access_latency = Dur(ns);
        c
    };
    let n = 300;
    // The accesses per request, from two latencies without refresh.
    let (w2, _, r2, _) = sequential(&with_latency(2_000), n, true, false);
    let (w4, _, r4, _) = sequential(&with_latency(4_000), n, true, false);
    let (acc_w, acc_r) = ((w4 - w2) / 2_000.0, (r4 - r2) / 2_000.0);
    assert!(
        acc_w >= 1.0 && acc_w.fract() == 0.0,
        "{acc_w} accesses per write"
    );
    assert!(
        acc_r >= 1.0 && acc_r.fract() == 0.0,
        "{acc_r} accesses per read"
    );
    let mut c = with_latency(4_000);
    c.dram.refresh = Some(refresh(7_800, 350, 0.0));
    let (w, _, r, _) = sequential(&c, n, true, false);
    let extra = |acc: f64| {
        let busy = acc as u64 * 4_000;
        ((busy * 7_800).div_ceil(7_800 - 350) - busy) as f64
    };
    assert_eq!(w - w4, extra(acc_w));
    assert_eq!(r - r4, extra(acc_r));
    assert!(extra(acc_r) > 0.0);
}

/// Refresh power: the DRAM's background power grows by `power * tRFC /
/// tREFI`, so over a window cut by a time limit its standby energy grows by
/// exactly that times the window.
#[test]
fn dram_refresh_power_adds_its_mean_to_standby() {
    let run = |r: Option<ssd_core::hw::RefreshConfig>| {
        let mut cfg = one_die("chip2");
        cfg.dram.refresh = r;
        cfg.power = ssdsim_host::config::PowerConfig::preset("lee2011").unwrap();
        cfg.sim.precondition = Precondition::Fill;
        cfg.sim.time_limit = Some(Dur::from_ms(20));
        cfg.workload.rw = ssdsim_host::workload::RwMode::RandRead;
        cfg.workload.bs = cfg.nand.page_size;
        cfg.workload.iodepth = 4;
        let rep = run_config(&cfg, &RunOptions::default()).unwrap().report;
        rep.extra["energy_j"]["dram_modes"]["standby"]
            .as_f64()
            .unwrap()
    };
    let (plain, refreshed) = (run(None), run(Some(refresh(7_800, 350, 0.2))));
    let want = 0.2 * 350.0 / 7_800.0 * 0.020;
    assert!(
        ((refreshed - plain) - want).abs() < 1e-12,
        "{} vs {want}",
        refreshed - plain
    );
    // Without power it changes the timing only.
    assert_eq!(run(Some(refresh(7_800, 350, 0.0))), plain);
}

#[test]
fn bad_dram_refresh_is_refused_naming_the_field() {
    let err = |r| {
        let mut c = one_die("chip2");
        c.dram.refresh = Some(r);
        c.validate().map(|_| ()).map_err(|e| e.to_string())
    };
    let e = err(refresh(350, 350, 0.0)).unwrap_err();
    assert!(e.starts_with("dram.refresh.t_rfc:"), "{e}");
    let e = err(refresh(0, 0, 0.0)).unwrap_err();
    assert!(e.starts_with("dram.refresh.t_refi:"), "{e}");
    let e = err(refresh(7_800, 350, -1.0)).unwrap_err();
    assert!(e.starts_with("dram.refresh.power:"), "{e}");
    assert_eq!(err(refresh(7_800, 350, 0.1)), Ok(()));
    let toml = "[dram.refresh]\nt_refi = \"7.8us\"\nt_rfc = \"350ns\"\n";
    let c = SsdConfig::from_toml_over(None, toml, "t.toml").unwrap();
    assert_eq!(c.dram.refresh, Some(refresh(7_800, 350, 0.0)));
}

// ------------------------------------------------------ channel arbitration

/// Reads-first bus arbitration on a channel shared by eight dies that it
/// cannot keep up with (a page takes 100 us on the bus, 25 us to read):
/// a read's command and data-out no longer wait behind the programs' data-in
/// queued before them, so reads finish sooner, at the mean and more so in
/// the tail, and writes later; every request completes.
#[test]
fn reads_first_bus_arbitration_favours_reads_under_mixed_load() {
    let run = |arb: ssd_core::hw::BusArbitration| {
        let mut cfg = one_die("chip2");
        cfg.nand.dies_per_chip = 8;
        cfg.nand.blocks_per_plane = 256;
        cfg.nand.bus_arbitration = arb;
        cfg.sim.precondition = Precondition::Fill;
        cfg.workload.rw = ssdsim_host::workload::RwMode::RandRw;
        cfg.workload.rwmixread = 70;
        cfg.workload.bs = cfg.nand.page_size;
        cfg.workload.iodepth = 16;
        cfg.workload.number_ios = Some(10_000);
        run_config(&cfg, &RunOptions::default()).unwrap().report
    };
    use ssd_core::hw::BusArbitration::{Fifo, ReadsFirst};
    let (fifo, rf) = (run(Fifo), run(ReadsFirst));
    assert_eq!(rf.host.requests, 10_000);
    assert!(
        fifo.utilization.channels > 0.95,
        "the bus is the bottleneck"
    );
    let (r0, r1) = (&fifo.latency_us.read, &rf.latency_us.read);
    assert!(
        r1.mean < 0.95 * r0.mean,
        "read mean {} vs {}",
        r1.mean,
        r0.mean
    );
    assert!(r1.p99 < 0.85 * r0.p99, "read p99 {} vs {}", r1.p99, r0.p99);
    assert!(
        rf.latency_us.write.mean > fifo.latency_us.write.mean,
        "write mean {} vs {}",
        rf.latency_us.write.mean,
        fifo.latency_us.write.mean
    );
    // The default is FIFO and is left out of the echoed configuration.
    assert!(fifo.config["nand"].get("bus_arbitration").is_none());
    assert_eq!(rf.config["nand"]["bus_arbitration"], "reads-first");
    let e = SsdConfig::from_toml_over(None, "[nand]\nbus_arbitration = \"lifo\"\n", "t.toml")
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("bus_arbitration") && e.contains("reads-first"),
        "{e}"
    );
}

/// `examples/hardware-rules.toml` resolves, validates and runs.
#[test]
fn the_hardware_rules_example_runs() {
    let text = include_str!("../../../examples/hardware-rules.toml");
    let mut cfg = SsdConfig::from_toml_over(None, text, "hardware-rules.toml").unwrap();
    let rule = cfg.nand.multiplane_rule.clone().unwrap();
    assert_eq!((rule.same_page, rule.max_planes), (false, Some(2)));
    assert!(cfg.dram.refresh.is_some());
    cfg.nand.blocks_per_plane = 64;
    cfg.sim.precondition = Precondition::Fill;
    cfg.workload.rw = ssdsim_host::workload::RwMode::RandRw;
    cfg.workload.bs = cfg.nand.page_size;
    cfg.workload.iodepth = 32;
    cfg.workload.number_ios = Some(4000);
    let r = run_config(&cfg, &RunOptions::default()).unwrap().report;
    assert_eq!(r.host.requests, 4000);
    assert!(r.flash.multiplane_batches > 0);
}

/// `--set` reaches the optional model sections a configuration has not
/// set yet (`[nand.retry]`, `[nand.multiplane_rule]`, `[dram.refresh]`):
/// the section is created, a field it still needs is named, and a section
/// that is not one is refused by name.
#[test]
fn set_creates_an_optional_model_section() {
    let mut c = SsdConfig::default();
    ssdsim::set_field(&mut c, "nand.multiplane_rule.max_planes", "2").unwrap();
    assert_eq!(
        c.nand.multiplane_rule.as_ref().and_then(|r| r.max_planes),
        Some(2)
    );
    let mut c = SsdConfig::default();
    let err = ssdsim::set_field(&mut c, "dram.refresh.t_refi", "\"7.8us\"")
        .unwrap_err()
        .to_string();
    assert!(
        err.starts_with("dram.refresh.t_refi: ") && err.contains("t_rfc"),
        "{err}"
    );
    assert_eq!(
        c,
        SsdConfig::default(),
        "a refused --set leaves the configuration"
    );
    let err = ssdsim::set_field(&mut c, "nand.nope.x", "1")
        .unwrap_err()
        .to_string();
    assert_eq!(err, "nand.nope.x: unknown section \"nope\"");
}

// ------------------------------------------------------ cache commands

/// One die, one plane (`one_die("chip2")`), no write buffer, with
/// `[nand.cache]` as given and a page transfer of `xfer_us`.
fn cached(read: bool, program: bool, xfer_us: u64) -> SsdConfig {
    let mut cfg = one_die("chip2");
    cfg.dram.write_buffer = ssd_core::Size(0);
    cfg.nand.bus = ssdsim_host::config::BusSpeed::PageTime(Dur::from_us(xfer_us));
    cfg.nand.cache = Some(ssd_core::hw::CacheConfig {
        read,
        program,
        t_dcbsyr: Dur::from_us(4),
        t_cbsy: Dur::from_us(3),
    });
    cfg
}

/// One host request of `n` pages from page 0 (a read comes after a write
/// of the same pages, in a phase of its own): its latency in ns, and the
/// report of its phase.
fn one_request(cfg: &SsdConfig, op: IoOp, n: u64) -> (u64, ssd_core::stats::Report) {
    let s = cfg.validate().unwrap();
    let sectors = s.geometry.page_size / 512;
    let req = |op| HostRequest {
        arrival: SimTime(0),
        op,
        lba: 0,
        sectors: sectors * n as u32,
        stream: 0,
        tag: 0,
        sync: false,
        placement: ssd_core::workload::Placement::NONE,
    };
    let closed = Timing::ClosedLoop { depth: 1 };
    let ftl = ftl::build(&s.config.ftl, &s.shape()).unwrap();
    let src = VecSource::new(vec![req(IoOp::Write)], closed);
    let mut sim = Simulation::new(s, ftl, src, Noop::new(1024, false), NullObserver);
    let mut r = sim.run().unwrap();
    if op == IoOp::Read {
        sim.restart(VecSource::new(vec![req(IoOp::Read)], closed));
        r = sim.run().unwrap();
        return (sim.lat.read.max_ns(), r);
    }
    (sim.lat.write.max_ns(), r)
}

/// Cache program against its closed form: `n` programs queued at once on a
/// die. Without the cache each takes its command and data-in, then its
/// program: `n * (c + x + P)`. With it, page `k`'s command and data-in run
/// while page `k - 1` programs (from the end of the one before on the
/// channel, once page `k - 1` has left the cache register), and page `k`
/// programs `t_cbsy` after the later of page `k - 1`'s end and its own
/// data-in's end: the last program ends at the later of
/// `(c + x) + P + (n - 1) * (t_cbsy + P)` (programs back to back) and
/// `n * (c + x) + t_cbsy + P` (data-ins back to back), about
/// `n * max(c + x, P)` instead of `n * (c + x + P)`. Checked exactly (the
/// recurrence) with the program and then the bus the bottleneck.
#[test]
fn cache_program_overlaps_data_in_with_the_program_closed_form() {
    let n = 12u64;
    for xfer_us in [50, 400] {
        let plain = cached(false, false, xfer_us);
        let cache = cached(false, true, xfer_us);
        let s = cache.validate().unwrap();
        let (cx, p, cb) = (
            (s.cmd_time() + s.page_xfer_time()).0,
            cache.nand.t_prog.0,
            3_000,
        );
        // Page k's data-in starts (`ask`) when page k - 1 is promoted and
        // the channel is free; page k is promoted when page k - 1 ends if
        // its data-in has begun by then, else when it begins.
        let (mut ask, mut end) = (cx, cx + p); // page 1's data-in, page 0's end
        for _ in 1..n {
            let loaded = ask + cx;
            let promote = if ask <= end { end } else { ask };
            end = end.max(loaded) + cb + p;
            ask = promote.max(loaded);
        }
        let (w0, r0) = one_request(&plain, IoOp::Write, n);
        let (w1, r1) = one_request(&cache, IoOp::Write, n);
        let off = n * (cx + p);
        assert_eq!(w0 - w1, off - end, "page transfer {xfer_us} us");
        // The slower of n programs back to back and n data-ins back to back.
        let bound = (cx + p + (n - 1) * (cb + p)).max(n * cx + cb + p);
        assert_eq!(end, bound, "the steady state, page transfer {xfer_us} us");
        assert!(!r0.extra.contains_key("hardware"));
        assert_eq!(
            r1.extra["hardware"]["nand"]["cache_programs"].as_u64(),
            Some(n - 1)
        );
        assert_eq!(r1.flash.page_programs, r0.flash.page_programs);
    }
}

/// Cache read against its closed form: `n` reads queued at once on a die.
/// Without the cache each takes its command, tR and data-out: `n * (c + R +
/// x)`. With it, page `k - 1`'s sensing is followed by its copy to the
/// cache register (`t_dcbsyr`), page `k`'s command and sensing then run
/// while page `k - 1` is clocked out, and page `k`'s copy waits for that
/// data-out to end: `c + R + t_d + (n - 1) * (c + max(R, x) + t_d) + x`
/// (less one `t_d` where the last page finds the register free and no read
/// after it, so it is read plainly), about `n * max(R, x) + min(R, x)` for
/// small `c` and `t_d`. Checked with the sensing and then the bus the
/// bottleneck.
#[test]
fn cache_read_pipelines_sensing_with_data_out_closed_form() {
    let n = 12u64;
    for xfer_us in [10, 150] {
        let plain = cached(false, false, xfer_us);
        let cache = cached(true, false, xfer_us);
        let s = cache.validate().unwrap();
        let (c, r, x, td) = (
            s.cmd_time().0,
            cache.nand.t_r.0,
            s.page_xfer_time().0,
            4_000,
        );
        // The last page goes through the cache register only if it is
        // still busy with the page before (the bus is the bottleneck);
        // otherwise it is a plain read, without the copy.
        let last_plain = x < r;
        let on = c + r + td + (n - 1) * (c + r.max(x) + td) + x - last_plain as u64 * td;
        let off = n * (c + r + x);
        let (l0, r0) = one_request(&plain, IoOp::Read, n);
        let (l1, r1) = one_request(&cache, IoOp::Read, n);
        assert_eq!(l0 - l1, off - on, "page transfer {xfer_us} us");
        assert_eq!(
            r1.extra["hardware"]["nand"]["cache_reads"].as_u64(),
            Some(n - last_plain as u64)
        );
        // A read alone is a plain one: the cache costs it nothing.
        assert_eq!(
            one_request(&cache, IoOp::Read, 1).0,
            one_request(&plain, IoOp::Read, 1).0
        );
        assert_eq!(r1.flash.page_reads, r0.flash.page_reads);
        // The consequence: the die's read throughput is the slower of the
        // array and the bus, not their sum.
        let per_page = (l1 - (l0 - off)) as f64 / n as f64;
        let bound = (c + r.max(x) + td) as f64;
        assert!(per_page < bound * 1.1, "{per_page} vs {bound}");
    }
}

/// Cache commands under a mixed random load with GC, multi-plane batches
/// and two dies sharing a channel served reads first: every request
/// completes, the run is deterministic, and both commands were used.
#[test]
fn cache_commands_under_gc_and_multiplane_keep_every_invariant() {
    let mut cfg = cached(true, true, 30);
    cfg.nand.planes_per_die = 2;
    cfg.nand.dies_per_chip = 2;
    cfg.layout.ways = 2;
    cfg.nand.bus_arbitration = ssd_core::hw::BusArbitration::ReadsFirst;
    cfg.sim.precondition = Precondition::Fill;
    cfg.workload.rw = ssdsim_host::workload::RwMode::RandRw;
    cfg.workload.bs = ssd_core::Size(cfg.nand.page_size.0 * 4);
    cfg.workload.iodepth = 16;
    cfg.workload.number_ios = Some(3000);
    let a = run_config(&cfg, &RunOptions::default()).unwrap().report;
    let b = run_config(&cfg, &RunOptions::default()).unwrap().report;
    assert_eq!(a.host.reads + a.host.writes, 3000);
    assert!(a.flash.gc_page_copies > 0, "GC ran");
    let nand = &a.extra["hardware"]["nand"];
    assert!(nand["cache_programs"].as_u64().unwrap() > 0);
    assert!(nand["cache_reads"].as_u64().unwrap() > 0);
    let strip = |r: &ssd_core::stats::Report| {
        let mut v = serde_json::to_value(r).unwrap();
        v["run"]["wall_s"] = serde_json::Value::Null;
        v["run"]["events_per_s"] = serde_json::Value::Null;
        v["run"]["precondition_wall_s"] = serde_json::Value::Null;
        v
    };
    assert_eq!(strip(&a), strip(&b));
}

/// `[nand.cache]` is checked before the run, naming the field.
#[test]
fn bad_cache_configs_are_refused_naming_the_field() {
    let mut c = cached(true, true, 50);
    c.nand.cache.as_mut().unwrap().t_cbsy = Dur::from_ms(2000);
    let e = c.validate().unwrap_err().to_string();
    assert!(e.starts_with("nand.cache.t_cbsy:"), "{e}");
    let mut c = cached(true, false, 50);
    c.nand.cache.as_mut().unwrap().t_dcbsyr = Dur::from_ms(2000);
    let e = c.validate().unwrap_err().to_string();
    assert!(e.starts_with("nand.cache.t_dcbsyr:"), "{e}");
    let mut c = cached(true, false, 50);
    c.nand.suspend = Some(suspend_cfg(20, 10));
    let e = c.validate().unwrap_err().to_string();
    assert!(e.starts_with("nand.cache:"), "{e}");
    let toml = "[nand.cache]\nread = true\nt_cbsy = \"3us\"\nprefetch = true\n";
    let e = toml::from_str::<SsdConfig>(toml).unwrap_err().to_string();
    assert!(e.contains("prefetch"), "{e}");
}

// ------------------------------------------------------- NAND currents

/// A NAND model's own currents set the die's energy: `E = V * I * t` per
/// state. A FixedNand that reports made-up currents: its array read and
/// program energies are `V * I * (operations * tR or tPROG)` exactly, and
/// against the same run on `[power]`'s currents each state's energy scales
/// by the ratio of the currents.
#[test]
fn a_nand_models_own_currents_set_the_energy() {
    use ssd_core::hw::{ArrayOp, FixedNand, Nand, NandCtx, NandCurrents, Parts};
    use ssd_core::units::Amps;
    struct Powered(FixedNand, NandCurrents);
    impl Nand for Powered {
        fn name(&self) -> &'static str {
            "powered"
        }
        fn array_time(&mut self, op: &ArrayOp, cx: &NandCtx<'_>) -> Dur {
            self.0.array_time(op, cx)
        }
        fn currents(&self) -> Option<NandCurrents> {
            Some(self.1)
        }
    }
    let cfg = one_die("chip2");
    let s = cfg.validate().unwrap();
    let p = &cfg.power;
    assert!(p.flash_read_energy.is_none() && p.flash_program_energy.is_none());
    let base = NandCurrents::from_power(p);
    let mine = NandCurrents {
        read: Amps(0.031),
        program: Amps(0.047),
        erase: Amps(0.05),
        idle: Amps(0.0007),
        io: Some(Amps(0.011)),
    };
    let run = |currents: NandCurrents| {
        let n = 40u64;
        let reqs: Vec<_> = (0..n)
            .map(|i| page_req(IoOp::Write, 0, i))
            .chain((0..n).map(|i| page_req(IoOp::Read, 0, i)))
            .collect();
        let src = VecSource::new(reqs, Timing::ClosedLoop { depth: 1 });
        let nand = Powered(FixedNand::from_config(&cfg.nand), currents);
        let hw = Parts::with_nand(s.hw(), nand);
        let obs = power::PowerObserver::new(&s, Dur::from_ms(1)).unwrap();
        let ftl = ftl::build(&s.config.ftl, &s.shape()).unwrap();
        let mut sim =
            Simulation::with_hardware(s.clone(), hw, ftl, src, Noop::new(1024, true), obs);
        let r = sim.run().unwrap();
        (r, sim.obs.energy().unwrap())
    };
    let (r0, e0) = run(base);
    let (r1, e1) = run(mine);
    assert_eq!(r0.flash.page_reads, r1.flash.page_reads);
    let v = p.voltage.0;
    let reads = r1.flash.page_reads as f64 * cfg.nand.t_r.0 as f64 * 1e-9;
    let progs = r1.flash.page_programs as f64 * cfg.nand.t_prog.0 as f64 * 1e-9;
    let close = |a: f64, b: f64| (a - b).abs() <= 1e-12 * b.abs().max(1e-9);
    assert!(close(e1.flash.read, v * 0.031 * reads), "{}", e1.flash.read);
    assert!(
        close(e1.flash.program, v * 0.047 * progs),
        "{}",
        e1.flash.program
    );
    assert!(close(e0.flash.read, v * base.read.0 * reads));
    // Same residency, other currents.
    let ratio = |a: f64, b: f64, ia: Amps, ib: Amps| close(a / b, ia.0 / ib.0);
    assert!(ratio(e1.flash.idle, e0.flash.idle, mine.idle, base.idle));
    assert!(e1.flash.transfer > 0.0);
    let t = e1.state_s.flash.transfer;
    assert!(
        close(e1.flash.transfer, v * 0.011 * t),
        "{}",
        e1.flash.transfer
    );
    assert_ne!(e0.flash.total, e1.flash.total);
}
