//! Prints every number the power model reports (energies, samples, residencies) for
//! a few runs, so two builds can be compared byte for byte (optimizations must not
//! change any result).
//! cargo run --release -p ssdsim-power --example bitcheck > before.txt
use power::PowerObserver;
use ssd_core::sched::Noop;
use ssd_core::units::Dur;
use ssd_core::Simulation;
use ssdsim_host::config::{PowerConfig, Precondition, SsdConfig};
use ssdsim_host::workload::{FioGen, RwMode, WorkloadConfig};

fn run(drain: bool, sample: Dur, cap: usize, rw: RwMode) {
    run_on(SsdConfig::default(), drain, sample, cap, rw);
}

fn run_on(mut c: SsdConfig, drain: bool, sample: Dur, cap: usize, rw: RwMode) {
    c.nand.blocks_per_plane = 64;
    c.sim.precondition = Precondition::Fill;
    c.sim.drain = drain;
    c.workload = WorkloadConfig {
        rw,
        number_ios: Some(30_000),
        ..Default::default()
    };
    let s = c.validate().unwrap();
    let ftl = ftl::PageFtl::new(&s.config.ftl, &s.shape());
    let src = FioGen::new(&c.workload, s.logical_bytes(), c.sim.seed);
    let obs = PowerObserver::with_sample_cap(&s, sample, cap).unwrap();
    let mut sim = Simulation::new(s, ftl, src, Noop::new(1024, true), obs);
    sim.precondition();
    let r = sim.run().unwrap();
    let m = sim.obs.finish_report(&r).unwrap();
    println!("{}", serde_json::Value::Object(m));
    for x in sim.obs.samples() {
        println!("{x:?}");
    }
}

fn main() {
    run(false, Dur::from_ms(1), 1 << 18, RwMode::RandRw);
    run(true, Dur::from_us(37), 1 << 18, RwMode::RandWrite);
    run(true, Dur::from_us(10), 64, RwMode::RandRw);
    // Per-operation energies (Park), split at the drain start.
    let park = SsdConfig::with_nand("park-slc").unwrap();
    run_on(park, true, Dur::from_us(100), 1 << 18, RwMode::RandWrite);
    // Two dies per chip, two planes, bus and link power, CPU slow mode.
    let mut mlc = SsdConfig::with_nand("mlc-mqsim").unwrap();
    mlc.power = PowerConfig::modern_tlc();
    mlc.power.cpu_slow_after = Some(Dur::from_us(50));
    run_on(mlc, true, Dur::from_us(250), 1 << 18, RwMode::RandRw);
}
