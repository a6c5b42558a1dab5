//! Simulator speed outside criterion: the `sim` bench's two workloads on the
//! default device (random reads at QD 32 after a fill; random writes at QD 32,
//! greedy GC, op 0.07, after steady-state preconditioning), three measured runs
//! each on the same drive, with requests/s and events per run.
//! `cargo run --release -p ssdsim-ftl --example speed -- {read|write} [N]`
//! Instruction counts of the measured phase only (precondition excluded):
//! `valgrind --tool=callgrind --toggle-collect='speed::measured' target/release/examples/speed write 50000`
use ssd_core::config::{GcPolicy, Precondition, SsdConfig};
use ssd_core::observer::NullObserver;
use ssd_core::sched::Noop;
use ssd_core::workload::{FioGen, RwMode, WorkloadConfig};
use ssd_core::Simulation;
fn main() {
    let w = std::env::args().nth(1).unwrap_or("read".into());
    let n: u64 = std::env::args()
        .nth(2)
        .map(|x| x.parse().unwrap())
        .unwrap_or(200_000);
    let mut cfg = SsdConfig::default();
    cfg.ftl.op = 0.07;
    cfg.ftl.gc_policy = GcPolicy::Greedy;
    let (rw, pre) = if w == "read" {
        (RwMode::RandRead, Precondition::Fill)
    } else {
        (RwMode::RandWrite, Precondition::Steady)
    };
    cfg.sim.precondition = pre;
    cfg.workload = WorkloadConfig {
        rw,
        bs: ssd_core::Size::kib(4),
        iodepth: 32,
        number_ios: Some(n),
        ..Default::default()
    };
    let s = cfg.validate().unwrap();
    let f = ftl::build(&s).unwrap();
    let src = FioGen::new(&cfg.workload, s.logical_bytes(), 1);
    let mut sim = Simulation::new(s, f, src, Noop::new(1024, true), NullObserver);
    sim.precondition();
    for k in 0..3 {
        sim.restart(FioGen::new(
            &cfg.workload,
            sim.settings.logical_bytes(),
            2 + k,
        ));
        let t = std::time::Instant::now();
        let r = measured(&mut sim);
        let e = t.elapsed().as_secs_f64();
        println!(
            "{w} {} req in {:.3}s = {:.0} req/s, events {} waf {:.3}",
            r.host.requests,
            e,
            r.host.requests as f64 / e,
            r.run.events,
            r.flash.waf
        );
    }
}

#[inline(never)]
fn measured(
    sim: &mut Simulation<ftl::AnyFtl, FioGen, Noop, NullObserver>,
) -> ssd_core::stats::Report {
    sim.run().unwrap()
}
