//! Static plane allocation (`ftl.plane_allocation = "static"`, MQSim's
//! `Plane_Allocation_Scheme`): a logical page's plane is fixed by its
//! address in the striping order, whatever order writes arrive in; dynamic
//! allocation stripes writes in arrival order, whatever their addresses.
//! Checked where the pages land and in what the placement costs: writes
//! whose addresses all map to one plane queue on one die under static
//! allocation and spread over every die under dynamic.

use ssd_core::ftl::Ftl;
use ssd_core::observer::NullObserver;
use ssd_core::sched::Noop;
use ssd_core::{Lpn, SimTime, Simulation};
use ssdsim_host::config::{Allocation, PlaneAllocation, SsdConfig};
use ssdsim_host::workload::{HostRequest, IoOp, Timing, VecSource};

/// A drive of 2 channels x 2 ways x 1 die x 2 planes (8 planes, 4 dies),
/// large enough for DFTL's translation reserve.
fn config(kind: &str, plane: PlaneAllocation) -> SsdConfig {
    let mut c = SsdConfig::default();
    c.layout.channels = 2;
    c.layout.ways = 2;
    c.nand.dies_per_chip = 1;
    c.nand.planes_per_die = 2;
    c.nand.blocks_per_plane = 128;
    c.ftl.kind = kind.parse().unwrap();
    c.ftl.allocation = Allocation::Cwdp;
    c.ftl.plane_allocation = plane;
    c
}

/// One-page writes to `lpns`, all at time 0 (the block layer holds them and
/// the device takes them as fast as it can).
fn writes(lpns: &[u64]) -> VecSource {
    let reqs = lpns
        .iter()
        .enumerate()
        .map(|(i, &l)| HostRequest {
            arrival: SimTime::ZERO,
            op: IoOp::Write,
            lba: l * 8,
            sectors: 8,
            stream: 0,
            tag: i as u32,
            sync: false,
            placement: ssd_core::workload::Placement::NONE,
        })
        .collect();
    VecSource::new(reqs, Timing::ClosedLoop { depth: 32 })
}

/// Run the writes on a fresh drive: (plane of each lpn, simulated seconds).
fn run(kind: &str, plane: PlaneAllocation, lpns: &[u64]) -> (Vec<u32>, f64) {
    let c = config(kind, plane);
    let s = c.validate().unwrap();
    let g = s.geometry;
    let f = ftl::build(&s.config.ftl, &s.shape()).unwrap();
    let mut sim = Simulation::new(s, f, writes(lpns), Noop::new(1024, true), NullObserver);
    let r = sim.run().unwrap();
    sim.ftl.check_invariants().unwrap();
    let planes = lpns
        .iter()
        .map(|&l| g.plane_of(sim.ftl.lookup(Lpn(l)).expect("written")).0)
        .collect();
    (planes, r.host.sim_time_s)
}

#[test]
fn static_allocation_places_a_page_by_its_address() {
    let c = config("page", PlaneAllocation::Static);
    let g = c.validate().unwrap().geometry;
    let order = ftl::stripe::striping_order(&g, Allocation::Cwdp);
    let np = order.len() as u64;
    // Pages in a shuffled order (Fisher-Yates on a xorshift): their planes
    // are their addresses'.
    let mut lpns: Vec<u64> = (0..400u64).collect();
    let mut x = 0x9E37_79B9_7F4A_7C15u64;
    for i in (1..lpns.len()).rev() {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        lpns.swap(i, (x % (i as u64 + 1)) as usize);
    }
    for kind in ["page", "dftl"] {
        let (planes, _) = run(kind, PlaneAllocation::Static, &lpns);
        for (&l, &p) in lpns.iter().zip(&planes) {
            assert_eq!(p, order[(l % np) as usize], "{kind}: lpn {l}");
        }
        // Dynamic: the k-th write goes to the k-th plane of the order, so
        // about one page in eight lands on its address's plane.
        let (planes, _) = run(kind, PlaneAllocation::Dynamic, &lpns);
        let by_address = lpns
            .iter()
            .zip(&planes)
            .filter(|(&l, &p)| p == order[(l % np) as usize])
            .count();
        assert!(
            by_address < lpns.len() / 4,
            "{kind}: {by_address} by address"
        );
    }
}

/// 256 writes whose addresses all map to plane `order[0]`: under static
/// allocation they queue on one die, so the run takes at least 256 programs
/// end to end on it (256 x tPROG); dynamic allocation spreads them over the
/// four dies and takes about a quarter of that.
#[test]
fn one_planes_addresses_queue_on_one_die_under_static_allocation() {
    let c = config("page", PlaneAllocation::Static);
    let s = c.validate().unwrap();
    let np = s.geometry.total_planes() as u64;
    let t_prog = c.nand.t_prog.0 as f64 / 1e9;
    let lpns: Vec<u64> = (0..256u64).map(|i| i * np).collect();
    let (planes, t_static) = run("page", PlaneAllocation::Static, &lpns);
    assert!(planes.iter().all(|&p| p == planes[0]));
    assert!(t_static >= 256.0 * t_prog, "{t_static} s");
    let (_, t_dynamic) = run("page", PlaneAllocation::Dynamic, &lpns);
    assert!(
        t_dynamic <= t_static / 3.0,
        "dynamic {t_dynamic} s against static {t_static} s"
    );
}

#[test]
fn static_allocation_with_least_busy_is_refused() {
    let mut c = config("page", PlaneAllocation::Static);
    c.ftl.allocation = Allocation::LeastBusy;
    let e = c.validate().unwrap_err().to_string();
    assert!(e.contains("ftl.plane_allocation"), "{e}");
}
