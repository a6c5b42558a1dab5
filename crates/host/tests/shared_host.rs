//! Tenants of one host: buffered flows share the host's page cache, its
//! dirty limits and its flusher, as a Linux host's processes do (one
//! `bdi_writeback` per device: one `b_dirty` list, one dirty count that
//! `balance_dirty_pages` compares with `global_dirty_limits`' thresholds,
//! one flusher), while each keeps its own inodes, its own range of the
//! drive and its own queue.

mod common;
use common::{pages_written, Logged, Sent};
use ssd_core::stats::Report;
use ssd_core::units::{SimTime, Size};
use ssd_core::workload::{flow_of, flow_range, FlowSpace};
use ssd_core::Simulation;
use ssdsim_host::config::SsdConfig;
use ssdsim_host::cpu::CpuConfig;
use ssdsim_host::flows::{Flow, FlowPriority, FlowSchedule, Flows};
use ssdsim_host::fs::Kernel;
use ssdsim_host::pagecache::{AppIo, PageCacheConfig, TenantSpec, TenantView, PAGE};
use ssdsim_host::scheds::build_sched;
use ssdsim_host::workload::{HostRequest, IoOp, Timing, VecSource};

fn device() -> SsdConfig {
    let mut c = SsdConfig::default();
    c.nand.blocks_per_plane = 256;
    c
}

/// 64 MiB of cache: background threshold 1,638 pages, dirty 3,276.
fn cache() -> PageCacheConfig {
    PageCacheConfig {
        size: Size::mib(64),
        ..Default::default()
    }
}

fn call(op: IoOp, page: u64, stream: u32, ino: u32) -> HostRequest {
    HostRequest {
        arrival: SimTime::ZERO,
        op,
        lba: page * 8,
        sectors: if op == IoOp::Flush { 0 } else { 8 },
        stream,
        tag: ino,
        sync: false,
        placement: ssd_core::workload::Placement::NONE,
    }
}

/// Run `apps` (one per flow, each the calls of its own application) as
/// buffered flows on split ranges of the drive: on one host when `shared`,
/// else each on a host of its own. Returns the report and every request
/// the device was handed.
fn run(apps: Vec<Vec<HostRequest>>, shared: bool) -> (Report, Sent) {
    let c = device();
    let s = c.validate().unwrap();
    let logical = s.logical_bytes();
    let n = apps.len();
    let spec = |k: usize, calls: Vec<HostRequest>| {
        let range = flow_range(FlowSpace::Split, k, n, logical, 4096);
        TenantSpec {
            app: VecSource::new(calls, Timing::ClosedLoop { depth: 1 }),
            io: AppIo::default(),
            first_page: range.0 / 8,
            pages: (range.1 - range.0) / 8,
            slot: Some(k),
        }
    };
    let host = |t: Vec<TenantSpec<VecSource>>| {
        TenantView::host(
            t,
            &cache(),
            &CpuConfig::default(),
            Kernel::Current,
            c.sched.max_request.0,
        )
        .unwrap()
    };
    let specs: Vec<_> = apps
        .into_iter()
        .enumerate()
        .map(|(k, a)| spec(k, a))
        .collect();
    let views: Vec<TenantView<VecSource>> = if shared {
        host(specs)
    } else {
        specs.into_iter().flat_map(|t| host(vec![t])).collect()
    };
    let flows = views
        .into_iter()
        .enumerate()
        .map(|(k, v)| Flow {
            slot: k,
            name: format!("t{k}"),
            priority: FlowPriority::Medium,
            range: flow_range(FlowSpace::Split, k, n, logical, 4096),
            depth: c.host.sq_depth,
            schedule: FlowSchedule::default(),
            src: v,
        })
        .collect();
    let sent = Sent::default();
    let src = Logged(Flows::new(flows), sent.clone());
    let ftl = ftl::build(&s.config.ftl, &s.shape()).unwrap();
    let sched = build_sched(&c.sched, logical / 512, c.host.queue_depth).unwrap();
    let mut sim = Simulation::new(s, ftl, src, sched, ssd_core::observer::NullObserver);
    let r = sim.run().unwrap();
    (r, sent)
}

fn pc(r: &Report, path: &[&str]) -> f64 {
    let mut v = &r.extra["page_cache"];
    for k in path {
        v = &v[*k];
    }
    v.as_f64().unwrap()
}

/// Two tenants each dirtying 1,000 pages, under the background threshold
/// (1,638) each and above it together: on one host the flusher starts
/// background writeback (`balance_dirty_pages` compares the host's dirty
/// count, `global_node_page_state(NR_FILE_DIRTY)` and its kin, with
/// `domain_dirty_limits`' background threshold, and wakes the device's one
/// flusher, `wb_start_background_writeback`); a host each would write
/// nothing.
#[test]
fn one_dirty_count_and_one_flusher_for_the_hosts_tenants() {
    let app =
        |k: u32| -> Vec<HostRequest> { (0..1000).map(|p| call(IoOp::Write, p, k, 0)).collect() };
    let (r, sent) = run(vec![app(0), app(1)], true);
    let bg = pc(&r, &["writeback", "pages_by_reason", "background"]);
    assert!(bg > 0.0, "{:?}", r.extra["page_cache"]);
    assert_eq!(
        pages_written(&sent, 0, u64::MAX) as f64,
        bg,
        "background writeback only"
    );
    assert_eq!(pc(&r, &["background_thresh_pages"]), 1638.0);
    // The flusher's writes of a tenant's pages go through that tenant's
    // queue, in its range.
    let logical = device().validate().unwrap().logical_bytes();
    for q in sent.borrow().iter() {
        let (lo, hi) = flow_range(FlowSpace::Split, flow_of(q.stream), 2, logical, 4096);
        assert!(q.lba >= lo && q.lba + q.sectors as u64 <= hi, "{q:?}");
    }
    // Dirty pages of both counted in one place.
    assert!(pc(&r, &["dirty_max_pages"]) > 1638.0);
    // A host each: no tenant reaches its host's threshold.
    let (_, alone) = run(vec![app(0), app(1)], false);
    assert_eq!(pages_written(&alone, 0, u64::MAX), 0);
}

/// Two tenants use the same inode numbers and the same pages of their own
/// ranges: each has its own (an fsync writes back its file's mapping,
/// `file_write_and_wait_range` on `file->f_mapping`, which is the tenant's).
/// The fsync of tenant 0's file writes its 200 pages, in tenant 0's range,
/// through tenant 0's queue; tenant 1's 300 pages of its own "file 1"
/// stay dirty.
#[test]
fn a_tenants_inodes_and_pages_are_its_own() {
    let mut a: Vec<HostRequest> = (0..200).map(|p| call(IoOp::Write, p, 0, 1)).collect();
    a.push(call(IoOp::Flush, 0, 0, 1));
    let b: Vec<HostRequest> = (0..300).map(|p| call(IoOp::Write, p, 0, 1)).collect();
    let (r, sent) = run(vec![a, b], true);
    let c = device();
    let logical = c.validate().unwrap().logical_bytes();
    let (lo0, hi0) = flow_range(FlowSpace::Split, 0, 2, logical, 4096);
    let (lo1, hi1) = flow_range(FlowSpace::Split, 1, 2, logical, 4096);
    assert_eq!(pages_written(&sent, lo0 / 8, hi0 / 8), 200);
    assert_eq!(pages_written(&sent, lo1 / 8, hi1 / 8), 0);
    assert_eq!(pc(&r, &["writeback", "pages_by_reason", "fsync"]), 200.0);
    assert_eq!(pc(&r, &["dirty_at_end_bytes"]), 300.0 * PAGE as f64);
    // Every request went through its tenant's queue (its stream's flow)
    // and stayed in its range.
    for q in sent.borrow().iter() {
        let (lo, hi) = flow_range(FlowSpace::Split, flow_of(q.stream), 2, logical, 4096);
        assert!(q.op == IoOp::Flush || q.lba >= lo && q.lba + q.sectors as u64 <= hi);
        assert_eq!(flow_of(q.stream), 0, "{q:?}");
    }
    // Each flow reports its own calls.
    let flows = r.extra["flows"].as_array().unwrap();
    assert_eq!(flows[0]["app"]["writes"], 200);
    assert_eq!(flows[0]["app"]["fsyncs"], 1);
    assert_eq!(flows[1]["app"]["writes"], 300);
    assert_eq!(flows[1]["app"]["fsyncs"], 0);
}
