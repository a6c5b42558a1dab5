//! Shared set-ups of the benchmarks and the speed example.

use ssd_core::observer::NullObserver;
use ssd_core::sched::Noop;
use ssd_core::Simulation;
use ssdsim_host::config::{GcPolicy, Precondition, SsdConfig};
use ssdsim_host::workload::{FioGen, RwMode, WorkloadConfig};

/// The simulation the speed figures are measured on.
pub type SpeedSim = Simulation<ftl::AnyFtl, FioGen, Noop, NullObserver>;

/// The default device (Lee & Won: 8 channels x 1 chip2, page mapping) with
/// greedy GC at op 0.07, preconditioned as given, running 4 KiB requests of `rw`
/// at QD 32, `batch` of them per run. Returns the simulation and its
/// configuration (for `restart`ing it with a new seed).
pub fn default_device(rw: RwMode, precondition: Precondition, batch: u64) -> (SpeedSim, SsdConfig) {
    let mut cfg = SsdConfig::default();
    cfg.ftl.op = 0.07;
    cfg.ftl.gc_policy = GcPolicy::Greedy;
    cfg.sim.precondition = precondition;
    cfg.workload = WorkloadConfig {
        rw,
        bs: ssd_core::Size::kib(4),
        iodepth: 32,
        number_ios: Some(batch),
        ..Default::default()
    };
    let s = cfg.validate().expect("the default device validates");
    let f = ftl::build(&s.config.ftl, &s.shape()).expect("the page FTL builds");
    let src = FioGen::new(&cfg.workload, s.logical_bytes(), 1);
    let mut sim = Simulation::new(s, f, src, Noop::new(1024, true), NullObserver);
    sim.precondition();
    (sim, cfg)
}

/// Replace the workload of `sim` by a fresh one of `cfg`'s with seed `seed`.
pub fn restart(sim: &mut SpeedSim, cfg: &SsdConfig, seed: u64) {
    let src = FioGen::new(&cfg.workload, sim.settings.logical_bytes(), seed);
    sim.restart(src);
}
