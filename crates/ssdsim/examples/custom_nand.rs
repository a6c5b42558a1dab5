//! A NAND model of one's own, plugged into the simulator without touching
//! the engine: a made-up 3-bit-per-cell part whose reads cost a fixed setup
//! plus one sensing per read level its page needs (a 2-3-2 Gray code: LSB
//! and MSB pages need two levels, CSB pages three), programmed one shot (a
//! word line's first two pages only load their latches), and whose
//! programs speed up as the block wears (fewer ISPP pulses). It gives its
//! own supply currents too, which the power model then draws.
//!
//! Run: `cargo run --release -p ssdsim --example custom_nand`. It writes
//! three word lines' worth of blocks, reads them back at queue depth 1 on a
//! one-die drive, and checks the mean latencies and the array read energy
//! against the model's closed form.

use ssdsim::host::config::SsdConfig;
use ssdsim::host::workload::{HostRequest, IoOp, Timing, VecSource};
use ssdsim::ssd_core::ftl::OpKind;
use ssdsim::ssd_core::hw::{ArrayOp, Nand, NandCtx, NandCurrents, Parts};
use ssdsim::ssd_core::sched::Noop;
use ssdsim::ssd_core::units::Amps;
use ssdsim::ssd_core::{Dur, SimTime, Simulation};

/// The made-up part.
struct GrayTlc {
    setup: Dur,
    per_level: Dur,
    load: Dur,
    program: Dur,
    erase: Dur,
}

impl GrayTlc {
    const LEVELS: [u64; 3] = [2, 3, 2];
    fn read_time(&self, page: u16) -> Dur {
        Dur(self.setup.0 + Self::LEVELS[page as usize % 3] * self.per_level.0)
    }
}

impl Nand for GrayTlc {
    fn name(&self) -> &'static str {
        "gray-tlc"
    }
    fn array_time(&mut self, op: &ArrayOp, cx: &NandCtx<'_>) -> Dur {
        match op.kind {
            OpKind::Read => self.read_time(op.page),
            OpKind::Program if op.page % 3 != 2 => self.load,
            OpKind::Program => {
                // 1% faster per 100 erases, at most 20%.
                let pe = cx.erase_counts[op.block as usize] as u64;
                let cut = (pe / 100).min(20);
                Dur(self.program.0 * (100 - cut) / 100)
            }
            OpKind::Erase => self.erase,
        }
    }
    /// Made-up data-sheet currents: a sensing draws more than the Lee & Won
    /// chips' 15 mA, programming less.
    fn currents(&self) -> Option<NandCurrents> {
        Some(NandCurrents {
            read: Amps(0.025),
            program: Amps(0.012),
            erase: Amps(0.02),
            idle: Amps(0.0005),
            io: Some(Amps(0.008)),
        })
    }
}

fn main() {
    // A drive of one die with one plane, so page i of the stream is page i
    // of a block.
    let mut cfg = SsdConfig::default();
    cfg.layout.channels = 1;
    cfg.layout.ways = 1;
    cfg.nand.planes_per_die = 1;
    cfg.nand.blocks_per_plane = 64;
    cfg.nand.pages_per_block = 63; // 21 word lines
    let s = cfg.validate().expect("a valid configuration");
    let part = GrayTlc {
        setup: Dur::from_us(10),
        per_level: Dur::from_us(20),
        load: Dur::from_us(3),
        program: Dur::from_us(1500),
        erase: Dur::from_ms(4),
    };
    let sectors = s.geometry.page_size / 512;
    let n = 3 * 63u64;
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
    let mut reqs: Vec<_> = (0..n).map(|i| req(IoOp::Write, i)).collect();
    reqs.extend((0..n).map(|i| req(IoOp::Read, i)));
    let src = VecSource::new(reqs, Timing::ClosedLoop { depth: 1 });
    let ftl = ssdsim::ftl::build(&s.config.ftl, &s.shape()).expect("an FTL");
    let hw = Parts::with_nand(s.hw(), part);
    let obs = ssdsim::power::PowerObserver::new(&s, Dur::from_ms(1)).expect("a power model");
    let mut sim = Simulation::with_hardware(s.clone(), hw, ftl, src, Noop::new(1024, true), obs);
    let report = sim.run().expect("the run");

    // The closed form: the fixed path of a request (link, CPU, DRAM, command
    // and page transfer; as for any model) plus the model's array time.
    let c = &s.config;
    let cpu = s.cycles(c.controller.cycles_per_command + c.controller.cycles_per_map_lookup);
    let fixed = c.host.command_overhead + cpu + c.dram.access_latency + s.cmd_time();
    let page = s.page_xfer_time();
    let link = s.link.time_for(s.geometry.page_size as u64);
    let write_path = (fixed + link + page).0 as f64;
    let read_path = (fixed + page + link).0 as f64;
    let mean_prog = (2.0 * 3_000.0 + 1_500_000.0) / 3.0;
    let mean_read = 10_000.0 + 20_000.0 * (2.0 + 3.0 + 2.0) / 3.0;
    let (w, r) = (sim.lat.write.mean_ns(), sim.lat.read.mean_ns());
    println!(
        "gray-tlc on {} writes and {} reads at QD1:",
        report.host.writes, report.host.reads
    );
    println!(
        "  mean write {:.3} us (closed form {:.3} us)",
        w / 1e3,
        (write_path + mean_prog) / 1e3
    );
    println!(
        "  mean read  {:.3} us (closed form {:.3} us)",
        r / 1e3,
        (read_path + mean_read) / 1e3
    );
    assert!((w - (write_path + mean_prog)).abs() < 1e-6, "write mean");
    assert!((r - (read_path + mean_read)).abs() < 1e-6, "read mean");
    // The array reads' energy: V x the part's read current x their time.
    let e = sim.obs.energy().expect("a finished run");
    let want = s.config.power.voltage.0 * 0.025 * n as f64 * mean_read * 1e-9;
    println!(
        "  array read energy {:.3} uJ (closed form {:.3} uJ)",
        e.flash.read * 1e6,
        want * 1e6
    );
    assert!((e.flash.read - want).abs() < 1e-12, "read energy");
    println!("  all match");
}

/// `cargo test` runs the example (`test = true` in Cargo.toml).
#[test]
fn the_model_matches_its_closed_form() {
    main();
}
