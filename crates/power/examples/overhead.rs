//! Power-model overhead measured in process CPU time (robust on a loaded machine):
//! alternates NullObserver / PowerObserver runs of the same simulation.
//! cargo run --release -p ssdsim-power --example overhead
//! With an argument `null` or `power`, runs that observer once only, for a stable
//! instruction count: `perf stat -e instructions:u target/release/examples/overhead power`.
//! Where perf has no instruction counter (VMs), count with callgrind inside
//! `Simulation::run` only (precondition excluded) and compare the totals:
//! `valgrind --tool=callgrind --toggle-collect='ssd_core::engine::Simulation<*>::run' target/release/examples/overhead power`
//! (`callgrind_annotate --inclusive=yes` splits `run` by source file of the
//! inlined code, so one of its lines is not the whole of `run`).
use power::PowerObserver;
use ssd_core::observer::{NullObserver, Observer};
use ssd_core::sched::Noop;
use ssd_core::units::Dur;
use ssd_core::{Settings, Simulation};
use ssdsim_host::config::{Precondition, SsdConfig};
use ssdsim_host::workload::{FioGen, RwMode, WorkloadConfig};

fn cpu_ticks() -> u64 {
    let s = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    let f: Vec<&str> = s
        .rsplit(')')
        .next()
        .unwrap_or("")
        .split_whitespace()
        .collect();
    f.get(11).and_then(|x| x.parse().ok()).unwrap_or(0)
        + f.get(12).and_then(|x| x.parse().ok()).unwrap_or(0)
}

fn timed<O: Observer>(c: &SsdConfig, make: impl Fn(&Settings) -> O) -> u64 {
    let s = c.validate().unwrap();
    let ftl = ftl::PageFtl::new(&s.config.ftl, &s.shape());
    let src = FioGen::new(&c.workload, s.logical_bytes(), c.sim.seed);
    let obs = make(&s);
    let mut sim = Simulation::new(s, ftl, src, Noop::new(1024, true), obs);
    sim.precondition();
    let t0 = cpu_ticks();
    let r = sim.run().unwrap();
    std::hint::black_box(r.host.requests);
    cpu_ticks() - t0
}

fn main() {
    let mut c = SsdConfig::default();
    c.nand.blocks_per_plane = 64;
    c.sim.precondition = Precondition::Fill;
    c.workload = WorkloadConfig {
        rw: RwMode::RandRw,
        number_ios: Some(200_000),
        ..Default::default()
    };
    match std::env::args().nth(1).as_deref() {
        Some("null") => {
            println!("null {} ticks", timed(&c, |_| NullObserver));
            return;
        }
        Some("power") => {
            let t = timed(&c, |s| PowerObserver::new(s, Dur::from_ms(1)).unwrap());
            println!("power {t} ticks");
            return;
        }
        _ => {}
    }
    let (mut a, mut b) = (0, 0);
    for _ in 0..4 {
        a += timed(&c, |_| NullObserver);
        b += timed(&c, |s| PowerObserver::new(s, Dur::from_ms(1)).unwrap());
    }
    println!(
        "null {a} ticks, power {b} ticks, overhead {:.1}%",
        (b as f64 / a as f64 - 1.0) * 100.0
    );
}
