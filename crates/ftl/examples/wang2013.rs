//! Wang et al. 2013 scheduler x FTL experiment, page-mapping FTL, with
//! Filebench-like multi-process workloads (see experiments/wang2013.toml).
//!
//! `cargo run --release -p ssdsim-ftl --example wang2013 [NUMBER_IOS]`
//!
//! * webserver-like: 100 processes; each reads whole 16 KiB files chosen
//!   uniformly from a 1,000-file set (issued as one 16 KiB read) and, once in
//!   eleven operations, appends 16 KiB to a shared log (10:1 read:write).
//! * fileserver-like: 50 processes; each picks a 128 KiB file from a
//!   10,000-file set and reads it (1/3) or rewrites it (2/3) as eight 16 KiB
//!   requests in file order; processes interleave request by request.
//!
//! Files are laid out contiguously from sector 0, the log after them. Closed
//! loop with one outstanding request per process (100 / 50), above the device's
//! queue depth (32, SATA NCQ), so the host scheduler holds a queue to order.

use rand::Rng;
use ssd_core::observer::NullObserver;
use ssd_core::rng::{SimRng, SimRngExt};
use ssd_core::units::Size;
use ssd_core::Simulation;
use ssdsim_host::config::{Precondition, SsdConfig};
use ssdsim_host::scheds::{build_sched, SCHED_NAMES};
use ssdsim_host::workload::{HostRequest, IoOp, RequestSource, SourceError, Timing};

#[derive(Clone, Copy, Debug, PartialEq)]
enum Kind {
    Web,
    File,
}

struct Proc {
    op: IoOp,
    next: u64,
    left: u32,
}

struct Personality {
    kind: Kind,
    rng: SimRng,
    procs: Vec<Proc>,
    turn: usize,
    remaining: u64,
    log_start: u64,
    log_head: u64,
    log_end: u64,
}

const CHUNK: u32 = 32; // 16 KiB in sectors

impl Personality {
    fn new(kind: Kind, number_ios: u64, seed: u64, capacity_sectors: u64) -> Personality {
        let (procs, files, file_sectors) = match kind {
            Kind::Web => (100, 1_000u64, CHUNK as u64),
            Kind::File => (50, 10_000u64, 8 * CHUNK as u64),
        };
        let log_start = files * file_sectors;
        assert!(
            log_start < capacity_sectors,
            "file set larger than the drive"
        );
        Personality {
            kind,
            rng: SimRng::from_seed_label(seed, "personality"),
            procs: (0..procs)
                .map(|_| Proc {
                    op: IoOp::Read,
                    next: 0,
                    left: 0,
                })
                .collect(),
            turn: 0,
            remaining: number_ios,
            log_start,
            log_head: log_start,
            log_end: capacity_sectors - capacity_sectors % CHUNK as u64,
        }
    }
}

impl RequestSource for Personality {
    fn timing(&self) -> Timing {
        // One outstanding request per process (Filebench threads do synchronous
        // I/O), more than the device's 32 NCQ slots: the scheduler has a queue to order.
        Timing::ClosedLoop {
            depth: self.procs.len() as u32,
        }
    }
    fn next_request(&mut self) -> Option<Result<HostRequest, SourceError>> {
        if self.remaining == 0 {
            return None;
        }
        self.remaining -= 1;
        let n = self.procs.len();
        let s = self.turn;
        self.turn = (self.turn + 1) % n;
        let p = &mut self.procs[s];
        if p.left == 0 {
            match self.kind {
                Kind::Web => {
                    if self.rng.gen_range(0..11) == 0 {
                        p.op = IoOp::Write;
                        p.next = self.log_head;
                        self.log_head += CHUNK as u64;
                        if self.log_head + CHUNK as u64 > self.log_end {
                            self.log_head = self.log_start;
                        }
                    } else {
                        p.op = IoOp::Read;
                        p.next = self.rng.gen_range(0..1_000u64) * CHUNK as u64;
                    }
                    p.left = 1;
                }
                Kind::File => {
                    p.op = if self.rng.gen_range(0..3) == 0 {
                        IoOp::Read
                    } else {
                        IoOp::Write
                    };
                    p.next = self.rng.gen_range(0..10_000u64) * 8 * CHUNK as u64;
                    p.left = 8;
                }
            }
        }
        let r = HostRequest {
            arrival: ssd_core::SimTime::ZERO,
            op: p.op,
            lba: p.next,
            sectors: CHUNK,
            stream: s as u32,
            tag: 0,
            sync: false,
            placement: ssd_core::workload::Placement::NONE,
        };
        p.next += CHUNK as u64;
        p.left -= 1;
        Some(Ok(r))
    }
}

fn main() {
    let number_ios: u64 = std::env::args()
        .nth(1)
        .map(|a| a.parse().expect("NUMBER_IOS must be an integer"))
        .unwrap_or(200_000);
    println!("workload,sched,requests,merged,iops,mbps,mean_lat_us,p99_lat_us,read_q_us,write_q_us,block_erases,gc_copies,waf");
    for kind in [Kind::Web, Kind::File] {
        for name in SCHED_NAMES {
            let mut c = SsdConfig::default();
            c.ftl.op = 0.03;
            c.sched.kind = name.to_string();
            c.sched.subregion = Size::gib(1);
            c.sim.precondition = Precondition::Fill;
            let s = c.validate().expect("valid config");
            let cap = s.logical_bytes() / 512;
            let ftl = ftl::build(&s.config.ftl, &s.shape()).expect("page FTL");
            let sched = build_sched(&c.sched, cap, c.host.queue_depth).expect("scheduler");
            let src = Personality::new(kind, number_ios, c.sim.seed, cap);
            let mut sim = Simulation::new(s, ftl, src, sched, NullObserver);
            sim.precondition();
            let r = sim.run().expect("run");
            println!(
                "{},{},{},{},{:.0},{:.1},{:.1},{:.1},{:.1},{:.1},{},{},{}",
                if kind == Kind::Web {
                    "webserver"
                } else {
                    "fileserver"
                },
                name,
                r.host.requests,
                r.sched.merged,
                r.host.iops,
                r.host.mbps,
                r.latency_us.all.mean,
                r.latency_us.all.p99,
                r.sched.read_queue_time_us.mean,
                r.sched.write_queue_time_us.mean,
                r.flash.block_erases,
                r.flash.gc_page_copies,
                r.flash.waf.map_or(String::new(), |w| format!("{w:.3}"))
            );
        }
    }
}
