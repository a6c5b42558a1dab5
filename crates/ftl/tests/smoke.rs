use ssd_core::observer::NullObserver;
use ssd_core::sched::Noop;
use ssd_core::Simulation;
use ssdsim_host::config::SsdConfig;
use ssdsim_host::workload::{FioGen, RwMode, WorkloadConfig};

#[test]
fn smoke() {
    for rw in [
        RwMode::RandRead,
        RwMode::RandWrite,
        RwMode::Read,
        RwMode::Write,
        RwMode::RandRw,
    ] {
        let mut c = SsdConfig::default();
        c.nand.blocks_per_plane = 64;
        c.workload = WorkloadConfig {
            rw,
            number_ios: Some(20000),
            ..Default::default()
        };
        c.sim.precondition = ssdsim_host::config::Precondition::Fill;
        let s = c.validate().unwrap();
        let ftl = ftl::build(&s.config.ftl, &s.shape()).unwrap();
        let src = FioGen::new(&c.workload, s.logical_bytes(), 1);
        let mut sim = Simulation::new(s, ftl, src, Noop::new(1024, true), NullObserver);
        sim.precondition();
        let t = std::time::Instant::now();
        let r = sim.run().unwrap();
        println!(
            "{rw:?}: {} req iops {:.0} mean {:.1}us waf {:.2} erases {} wall {:?}",
            r.host.requests,
            r.host.iops,
            r.latency_us.all.mean,
            r.flash.waf.unwrap_or(f64::NAN),
            r.flash.block_erases,
            t.elapsed()
        );
        assert_eq!(r.host.requests, 20000);
        use ssd_core::ftl::Ftl;
        sim.ftl.check_invariants().unwrap();
    }
}
