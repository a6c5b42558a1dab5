//! Prints every number the power model reports (energies, samples, residencies) for
//! a few runs, so two builds can be compared byte for byte (optimizations must not
//! change any result).
//! cargo run --release -p ssdsim-power --example bitcheck > before.txt
use power::PowerObserver;
use ssd_core::config::{Precondition, SsdConfig};
use ssd_core::sched::Noop;
use ssd_core::units::Dur;
use ssd_core::workload::{FioGen, RwMode, WorkloadConfig};
use ssd_core::Simulation;

fn run(drain: bool, sample: Dur, cap: usize, rw: RwMode) {
    let mut c = SsdConfig::default();
    c.nand.blocks_per_plane = 64;
    c.sim.precondition = Precondition::Fill;
    c.sim.drain = drain;
    c.workload = WorkloadConfig {
        rw,
        number_ios: Some(30_000),
        ..Default::default()
    };
    let s = c.validate().unwrap();
    let ftl = ftl::PageFtl::new(&s);
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
}
