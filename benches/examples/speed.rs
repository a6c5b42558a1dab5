//! Simulator speed outside criterion: the `sim` bench's two workloads on the
//! default device (random reads at QD 32 after a fill; random writes at QD 32,
//! greedy GC, op 0.07, after steady-state preconditioning), three measured runs
//! each on the same drive, with requests/s and events per run.
//! `cargo run --release -p ssdsim-benches --example speed -- {read|write} [N]`
//! Instruction counts of the measured phase only (precondition excluded):
//! `valgrind --tool=callgrind --toggle-collect='speed::measured' target/release/examples/speed write 50000`
use ssdsim_benches::{default_device, restart, SpeedSim};
use ssdsim_host::config::Precondition;
use ssdsim_host::workload::RwMode;

fn main() {
    let w = std::env::args().nth(1).unwrap_or_else(|| "read".into());
    let n: u64 = match std::env::args().nth(2).map(|x| x.parse()) {
        None => 200_000,
        Some(Ok(n)) => n,
        Some(Err(e)) => {
            eprintln!("speed: the request count must be a number: {e}");
            std::process::exit(2);
        }
    };
    let (rw, pre) = match w.as_str() {
        "read" => (RwMode::RandRead, Precondition::Fill),
        "write" => (RwMode::RandWrite, Precondition::Steady),
        _ => {
            eprintln!("speed: the workload is `read` or `write`, not `{w}`");
            std::process::exit(2);
        }
    };
    let (mut sim, cfg) = default_device(rw, pre, n);
    for k in 0..3 {
        restart(&mut sim, &cfg, 2 + k);
        let t = std::time::Instant::now();
        let r = measured(&mut sim);
        let e = t.elapsed().as_secs_f64();
        println!(
            "{w} {} req in {:.3}s = {:.0} req/s, events {} waf {:.3}",
            r.host.requests,
            e,
            r.host.requests as f64 / e,
            r.run.events,
            r.flash.waf.unwrap_or(f64::NAN)
        );
    }
}

/// The measured phase, kept out of line for callgrind's `--toggle-collect`.
#[inline(never)]
fn measured(sim: &mut SpeedSim) -> ssd_core::stats::Report {
    sim.run().expect("the run completes")
}
