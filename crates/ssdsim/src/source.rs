//! The request sources a run builds from its configuration: [`AnySource`]
//! (the generator, a trace, a personality, the page cache over any of them)
//! and the flows of a multi-tenant run.

use crate::*;

/// The workload sources a run can use, statically dispatched.
pub enum AnySource {
    /// The fio-style generator (`[workload]`, `--rw`, a fio job file).
    Fio(FioGen),
    /// A block trace replay (`[trace]`, `--trace`).
    Trace(ssdsim_host::trace::TraceSource),
    /// A block-level personality (`[personality]`, level block).
    Personality(ssdsim_host::personality::Personality),
    /// A file-level Filebench personality (through the page cache).
    FileBench(Box<ssdsim_host::filebench::FileBench>),
    /// An application workload through the page cache (buffered I/O).
    Buffered(Box<ssdsim_host::pagecache::PageCache<AnySource>>),
    /// Several flows (tenants) at once, each one of the above.
    Flows(Box<ssdsim_host::flows::Flows<AnySource>>),
    /// A buffered flow: its application's view of the host's page cache,
    /// which the run's buffered flows share.
    Tenant(ssdsim_host::pagecache::TenantView<AnySource>),
    /// One of the above, its requests written as a trace (`--record-trace`).
    Recorded(Box<ssdsim_host::trace::record::Recorder<AnySource>>),
    /// One of the above, its writes carrying placement identifiers (a
    /// fio-style job's `workload.fdp`, a tenant's `placement`).
    Placed(Box<ssdsim_host::workload::placement::Placed<AnySource>>),
}

impl AnySource {
    /// The fio-style generator at the heart of this source, if it is one
    /// (alone, or with its writes tagged for data placement).
    pub fn fio_mut(&mut self) -> Option<&mut FioGen> {
        match self {
            AnySource::Fio(g) => Some(g),
            AnySource::Placed(p) => p.inner_mut().fio_mut(),
            _ => None,
        }
    }
}

impl RequestSource for AnySource {
    fn timing(&self) -> Timing {
        match self {
            AnySource::Fio(s) => s.timing(),
            AnySource::Trace(s) => s.timing(),
            AnySource::Personality(s) => s.timing(),
            AnySource::FileBench(s) => s.timing(),
            AnySource::Buffered(s) => s.timing(),
            AnySource::Flows(s) => s.timing(),
            AnySource::Tenant(s) => s.timing(),
            AnySource::Recorded(s) => s.timing(),
            AnySource::Placed(s) => s.timing(),
        }
    }
    #[inline]
    fn next_request(&mut self) -> Option<Result<ssdsim_host::workload::HostRequest, SourceError>> {
        match self {
            AnySource::Fio(s) => s.next_request(),
            AnySource::Trace(s) => s.next_request(),
            AnySource::Personality(s) => s.next_request(),
            AnySource::FileBench(s) => s.next_request(),
            AnySource::Buffered(s) => s.next_request(),
            AnySource::Flows(s) => s.next_request(),
            AnySource::Tenant(s) => s.next_request(),
            AnySource::Recorded(s) => s.next_request(),
            AnySource::Placed(s) => s.next_request(),
        }
    }
    #[inline]
    fn submitted(&mut self, r: &ssdsim_host::workload::HostRequest) {
        match self {
            AnySource::Fio(s) => s.submitted(r),
            AnySource::Trace(s) => s.submitted(r),
            AnySource::Personality(s) => s.submitted(r),
            AnySource::FileBench(s) => s.submitted(r),
            AnySource::Buffered(s) => s.submitted(r),
            AnySource::Flows(s) => s.submitted(r),
            AnySource::Tenant(s) => s.submitted(r),
            AnySource::Recorded(s) => s.submitted(r),
            AnySource::Placed(s) => s.submitted(r),
        }
    }
    fn notes(&self) -> Vec<(String, u64)> {
        match self {
            AnySource::Fio(s) => s.notes(),
            AnySource::Trace(s) => s.notes(),
            AnySource::Personality(s) => s.notes(),
            AnySource::FileBench(s) => s.notes(),
            AnySource::Buffered(s) => s.notes(),
            AnySource::Flows(s) => s.notes(),
            AnySource::Tenant(s) => s.notes(),
            AnySource::Recorded(s) => s.notes(),
            AnySource::Placed(s) => s.notes(),
        }
    }
    fn poll(
        &mut self,
        now: ssd_core::SimTime,
    ) -> Option<Result<ssdsim_host::workload::HostRequest, SourceError>> {
        match self {
            // A fio job with pauses (thinktime) reacts to completions.
            AnySource::Fio(s) => s.poll(now),
            AnySource::Buffered(s) => s.poll(now),
            AnySource::Flows(s) => s.poll(now),
            AnySource::Tenant(s) => s.poll(now),
            AnySource::Recorded(s) => s.poll(now),
            AnySource::Placed(s) => s.poll(now),
            _ => None,
        }
    }
    fn event(&mut self, ev: ssdsim_host::workload::HostEvent, now: ssd_core::SimTime) {
        match self {
            AnySource::Fio(s) => s.event(ev, now),
            AnySource::Buffered(s) => s.event(ev, now),
            AnySource::Flows(s) => s.event(ev, now),
            AnySource::Tenant(s) => s.event(ev, now),
            AnySource::Recorded(s) => s.event(ev, now),
            AnySource::Placed(s) => s.event(ev, now),
            _ => {}
        }
    }
    fn wake_at(&self) -> Option<ssd_core::SimTime> {
        match self {
            AnySource::Fio(s) => s.wake_at(),
            AnySource::Buffered(s) => s.wake_at(),
            AnySource::Flows(s) => s.wake_at(),
            AnySource::Tenant(s) => s.wake_at(),
            AnySource::Recorded(s) => s.wake_at(),
            AnySource::Placed(s) => s.wake_at(),
            _ => None,
        }
    }
    fn finished(&self) -> bool {
        match self {
            AnySource::Fio(s) => s.finished(),
            AnySource::Buffered(s) => s.finished(),
            AnySource::Flows(s) => s.finished(),
            AnySource::Tenant(s) => s.finished(),
            AnySource::Recorded(s) => s.finished(),
            AnySource::Placed(s) => s.finished(),
            _ => true,
        }
    }
    fn report_sections(&self, end: ssd_core::SimTime) -> Vec<(String, serde_json::Value)> {
        match self {
            AnySource::Buffered(s) => s.report_sections(end),
            AnySource::Flows(s) => s.report_sections(end),
            AnySource::Tenant(s) => s.report_sections(end),
            AnySource::Recorded(s) => s.report_sections(end),
            AnySource::Placed(s) => s.report_sections(end),
            AnySource::FileBench(s) => s.report_sections(end),
            AnySource::Fio(s) => s.report_sections(end),
            _ => Vec::new(),
        }
    }
    fn zones(
        &mut self,
        report: Option<&ssd_core::workload::ZoneReport>,
    ) -> Result<(), ssd_core::workload::SourceError> {
        match self {
            AnySource::Fio(s) => s.zones(report),
            AnySource::Flows(s) => s.zones(report),
            AnySource::Recorded(s) => s.zones(report),
            AnySource::Placed(s) => s.zones(report),
            _ => Ok(()),
        }
    }
    fn ramp_over(&mut self, now: ssd_core::SimTime, in_flight: u64) {
        match self {
            AnySource::Fio(s) => s.ramp_over(now, in_flight),
            AnySource::Trace(s) => s.ramp_over(now, in_flight),
            AnySource::Personality(s) => s.ramp_over(now, in_flight),
            AnySource::FileBench(s) => s.ramp_over(now, in_flight),
            AnySource::Buffered(s) => s.ramp_over(now, in_flight),
            AnySource::Flows(s) => s.ramp_over(now, in_flight),
            AnySource::Tenant(s) => s.ramp_over(now, in_flight),
            AnySource::Recorded(s) => s.ramp_over(now, in_flight),
            AnySource::Placed(s) => s.ramp_over(now, in_flight),
        }
    }
    fn stop(&mut self, now: ssd_core::SimTime) {
        match self {
            AnySource::Fio(s) => s.stop(now),
            AnySource::Trace(s) => s.stop(now),
            AnySource::Personality(s) => s.stop(now),
            AnySource::FileBench(s) => s.stop(now),
            AnySource::Buffered(s) => s.stop(now),
            AnySource::Flows(s) => s.stop(now),
            AnySource::Tenant(s) => s.stop(now),
            AnySource::Recorded(s) => s.stop(now),
            AnySource::Placed(s) => s.stop(now),
        }
    }
    fn shared_sections(&self, end: ssd_core::SimTime) -> Vec<(String, serde_json::Value)> {
        match self {
            AnySource::Tenant(s) => s.shared_sections(end),
            AnySource::Placed(s) => s.shared_sections(end),
            AnySource::Recorded(s) => s.shared_sections(end),
            _ => Vec::new(),
        }
    }
    fn shared_ramp_over(&mut self, now: ssd_core::SimTime) {
        match self {
            AnySource::Tenant(s) => s.shared_ramp_over(now),
            AnySource::Placed(s) => s.shared_ramp_over(now),
            AnySource::Recorded(s) => s.shared_ramp_over(now),
            _ => {}
        }
    }
}

/// The page cache's hooks reach the file-level application (Filebench) and a
/// recorder around one; the other sources keep the defaults.
impl ssdsim_host::workload::AppSource for AnySource {
    fn more_follow(&self) -> bool {
        match self {
            AnySource::FileBench(s) => s.more_follow(),
            AnySource::Recorded(s) => s.more_follow(),
            _ => false,
        }
    }
    fn call_extras(&self) -> ssdsim_host::workload::CallExtras {
        match self {
            AnySource::FileBench(s) => s.call_extras(),
            AnySource::Recorded(s) => s.call_extras(),
            _ => Default::default(),
        }
    }
    fn clock(&mut self, now: ssd_core::SimTime) {
        match self {
            AnySource::FileBench(s) => s.clock(now),
            AnySource::Recorded(s) => s.clock(now),
            _ => {}
        }
    }
    fn fsync_io(&mut self, ino: u32, now: ssd_core::SimTime) -> ssdsim_host::workload::FsyncIo {
        match self {
            AnySource::FileBench(s) => s.fsync_io(ino, now),
            AnySource::Recorded(s) => s.fsync_io(ino, now),
            _ => ssdsim_host::workload::FsyncIo::default(),
        }
    }
    fn commit_io(&mut self, now: ssd_core::SimTime) -> Option<ssdsim_host::workload::FsyncIo> {
        match self {
            AnySource::FileBench(s) => s.commit_io(now),
            AnySource::Recorded(s) => s.commit_io(now),
            _ => None,
        }
    }
    fn commit_done(&mut self, now: ssd_core::SimTime) {
        match self {
            AnySource::FileBench(s) => s.commit_done(now),
            AnySource::Recorded(s) => s.commit_done(now),
            _ => {}
        }
    }
    fn committed(&self, tid: u64) -> bool {
        match self {
            AnySource::FileBench(s) => s.committed(tid),
            AnySource::Recorded(s) => s.committed(tid),
            _ => true,
        }
    }
    fn journal_stream(&self) -> u32 {
        match self {
            AnySource::FileBench(s) => s.journal_stream(),
            AnySource::Recorded(s) => s.journal_stream(),
            _ => 0,
        }
    }
    fn take_commit(&mut self) -> bool {
        match self {
            AnySource::FileBench(s) => s.take_commit(),
            AnySource::Recorded(s) => s.take_commit(),
            _ => false,
        }
    }
    fn memory(&self) -> u64 {
        match self {
            AnySource::FileBench(s) => s.memory(),
            AnySource::Fio(s) => s.memory(),
            AnySource::Recorded(s) => s.memory(),
            _ => 0,
        }
    }
    fn host_report(
        &self,
        host: &ssdsim_host::workload::HostRun,
    ) -> Vec<(String, serde_json::Value)> {
        match self {
            AnySource::FileBench(s) => s.host_report(host),
            AnySource::Recorded(s) => s.host_report(host),
            _ => Vec::new(),
        }
    }
    fn place(
        &mut self,
        ino: u32,
        index: u64,
        n: u32,
        now: ssd_core::SimTime,
        out: &mut Vec<ssdsim_host::workload::FilePiece>,
    ) {
        match self {
            AnySource::FileBench(s) => s.place(ino, index, n, now, out),
            AnySource::Recorded(s) => s.place(ino, index, n, now, out),
            _ => {}
        }
    }
    fn locate(
        &mut self,
        ino: u32,
        index: u64,
        n: u32,
        out: &mut Vec<ssdsim_host::workload::FilePiece>,
    ) {
        match self {
            AnySource::FileBench(s) => s.locate(ino, index, n, out),
            AnySource::Recorded(s) => s.locate(ino, index, n, out),
            _ => {}
        }
    }
    fn file_pages(&self, ino: u32) -> u64 {
        match self {
            AnySource::FileBench(s) => s.file_pages(ino),
            AnySource::Recorded(s) => s.file_pages(ino),
            _ => 0,
        }
    }
    fn background_writeback(&self, ino: u32) -> bool {
        match self {
            AnySource::FileBench(s) => s.background_writeback(ino),
            AnySource::Recorded(s) => s.background_writeback(ino),
            _ => true,
        }
    }
    fn write_tag(&self, dev: u64, pages: u32) -> ssdsim_host::workload::WriteTag {
        match self {
            AnySource::FileBench(s) => s.write_tag(dev, pages),
            AnySource::Recorded(s) => s.write_tag(dev, pages),
            _ => Default::default(),
        }
    }
}

/// Build the workload source a configuration names: its `[[flow]]`s, or
/// `[trace]`, `[personality]` or the fio-style `[workload]`.
pub fn build_source(cfg: &SsdConfig, settings: &Settings) -> Result<AnySource, RunError> {
    if !cfg.flows.is_empty() {
        return build_flows(cfg, settings, None);
    }
    build_one(
        cfg,
        &cfg.workload,
        cfg.personality.as_ref(),
        cfg.trace.as_ref(),
        settings.logical_bytes(),
        cfg.sim.seed,
        zoned_dev(cfg, settings),
    )
}

/// A zoned drive's zones as a file system's mkfs reads them
/// (`blkdev_report_zones`), in 4 KiB blocks; None on any other drive.
fn zoned_dev(cfg: &SsdConfig, settings: &Settings) -> Option<ssdsim_host::fs::ZonedDev> {
    let l = settings.zone_layout()?;
    let page = settings.geometry.page_size as u64;
    let block = ssdsim_host::fs::BLOCK;
    let (max_open, max_active) = match cfg.ftl.section() {
        ssd_core::ftl::FtlSection::Zns(z) => (z.max_open_zones, z.max_active_zones),
        _ => (0, 0),
    };
    Some(ssdsim_host::fs::ZonedDev {
        zone_blocks: l.size * page / block,
        cap_blocks: l.capacity * page / block,
        zones: l.zones,
        conventional: l.conventional,
        max_open,
        max_active,
    })
}

/// The flows of `cfg` as one source; `only`: just that flow (by slot), in
/// its own range and queue, as a baseline run alone.
pub fn build_flows(
    cfg: &SsdConfig,
    settings: &Settings,
    only: Option<usize>,
) -> Result<AnySource, RunError> {
    use ssdsim_host::flows::{flow_range, Flow, Flows};
    let n = cfg.flows.len();
    // Each flow's source, or, buffered, its application and how it calls:
    // those run on the host's one page cache.
    let mut built = Vec::new();
    // `zonemode=zbd` jobs addressing one device share its zone table.
    let zones = ssdsim_host::workload::ZbdDevice::default();
    // fio's flow groups (`flow_id`) span the run's jobs.
    let flow_groups = ssdsim_host::workload::FlowGroups::default();
    for (i, f) in cfg.flows.iter().enumerate() {
        if only.is_some_and(|o| o != i) {
            continue;
        }
        let range = flow_range(
            cfg.sim.flow_space,
            i,
            n,
            settings.logical_bytes(),
            cfg.nand.page_size.0,
        );
        let w = f.workload.clone().unwrap_or_default();
        // Each flow draws from its own generator (one flow's seed, whether
        // it runs with the others or alone).
        let seed = cfg
            .sim
            .seed
            .wrapping_add((i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15));
        // A file system on a zoned drive is made on the whole drive (its
        // zones are the drive's); a flow's share of it is refused then.
        let whole = range.0 == 0
            && (range.1 - range.0) * ssdsim_host::workload::SECTOR == settings.logical_bytes();
        let zoned = zoned_dev(cfg, settings);
        if zoned.is_some()
            && !whole
            && f.personality
                .as_ref()
                .is_some_and(|p| p.level == ssdsim_host::personality::PersonalityLevel::File)
        {
            return Err(RunError::Input(format!(
                "flow {}: a file system on a zoned drive needs the whole drive (its zones are the drive's): set sim.flow_space = \"shared\"",
                f.name
            )));
        }
        let (mut src, io) = build_app(
            cfg,
            &w,
            f.personality.as_ref(),
            f.trace.as_ref(),
            (range.1 - range.0) * ssdsim_host::workload::SECTOR,
            seed,
            zoned,
        )
        .map_err(|e| match e {
            RunError::Input(m) => RunError::Input(format!("flow {}: {m}", f.name)),
            e => e,
        })?;
        if io.is_none() {
            if let Some(g) = src.fio_mut() {
                g.share_flow_groups(&flow_groups);
                if cfg.sim.flow_space == ssdsim_host::flows::FlowSpace::Shared {
                    g.share_zones(&zones);
                }
            }
        }
        built.push((i, range, seed, src, io));
    }
    // The buffered flows' applications are tenants of one host: one page
    // cache, one flusher, one set of cores.
    let spp = ssdsim_host::pagecache::PAGE / ssdsim_host::workload::SECTOR;
    let mut tenants = Vec::new();
    let mut rest = Vec::new();
    for (i, range, seed, src, io) in built {
        match io {
            Some(io) => {
                // Its share starts on a 4 KiB page (`check_flows`).
                tenants.push(ssdsim_host::pagecache::TenantSpec {
                    app: src,
                    io,
                    first_page: range.0 / spp,
                    pages: (range.1 - range.0) / spp,
                    slot: Some(i),
                });
                rest.push((i, range, seed, None));
            }
            None => rest.push((i, range, seed, Some(src))),
        }
    }
    let mut views = if tenants.is_empty() {
        Vec::new()
    } else {
        ssdsim_host::pagecache::TenantView::host(
            tenants,
            &cfg.page_cache,
            &cfg.cpu,
            cfg.fs.kernel(),
            cfg.sched.max_request.0,
        )?
    }
    .into_iter();
    let mut flows = Vec::new();
    for (i, range, seed, src) in rest {
        let f = &cfg.flows[i];
        let src = match src {
            Some(s) => s,
            None => match views.next() {
                Some(v) => AnySource::Tenant(v),
                None => unreachable!("the host has a view per buffered flow"),
            },
        };
        // A tenant's own placement handle: every write of the flow.
        let src = match f.placement {
            Some(n) => AnySource::Placed(Box::new(ssdsim_host::workload::placement::Placed::new(
                src,
                vec![cfg.ftl.fdp.pid_list()[n as usize]],
                ssdsim_host::workload::placement::PlidSelect::RoundRobin,
                seed,
            ))),
            None => src,
        };
        flows.push(Flow {
            slot: i,
            name: f.name.clone(),
            priority: f.priority,
            range,
            depth: if cfg.host.interface.is_nvme() {
                cfg.host.sq_depth
            } else {
                u32::MAX
            },
            // A flow run alone (a baseline) starts with the run: it has no
            // group to wait for.
            schedule: match only {
                Some(_) => ssdsim_host::flows::FlowSchedule {
                    stonewall: false,
                    start_delay: None,
                    wait_for: 0,
                    ..f.schedule(&cfg.flows)
                },
                None => f.schedule(&cfg.flows),
            },
            src,
        });
    }
    Ok(AnySource::Flows(Box::new(Flows::new(flows))))
}

/// One workload source on a drive (or flow range) of `logical` bytes.
pub(crate) fn build_one(
    cfg: &SsdConfig,
    w: &ssdsim_host::workload::WorkloadConfig,
    personality: Option<&ssdsim_host::personality::PersonalityConfig>,
    trace: Option<&ssdsim_host::config::TraceSpec>,
    logical: u64,
    seed: u64,
    zoned: Option<ssdsim_host::fs::ZonedDev>,
) -> Result<AnySource, RunError> {
    let (app, io) = build_app(cfg, w, personality, trace, logical, seed, zoned)?;
    let Some(io) = io else {
        return Ok(app);
    };
    let cache = ssdsim_host::pagecache::PageCache::on_host(
        app,
        &cfg.page_cache,
        &cfg.cpu,
        cfg.fs.kernel(),
        io,
        logical,
        cfg.sched.max_request.0,
    )?;
    Ok(AnySource::Buffered(Box::new(cache)))
}

/// One workload source on a drive (or flow range) of `logical` bytes, or
/// for buffered I/O the application and how it calls, for a page cache to
/// run.
fn build_app(
    cfg: &SsdConfig,
    w: &ssdsim_host::workload::WorkloadConfig,
    personality: Option<&ssdsim_host::personality::PersonalityConfig>,
    trace: Option<&ssdsim_host::config::TraceSpec>,
    logical: u64,
    seed: u64,
    zoned: Option<ssdsim_host::fs::ZonedDev>,
) -> Result<(AnySource, Option<ssdsim_host::pagecache::AppIo>), RunError> {
    if let Some(t) = trace {
        let fmt = match &t.format {
            Some(f) => Some(
                f.parse::<ssdsim_host::trace::TraceFormat>()
                    .map_err(|e| RunError::Input(format!("trace.format: {e}")))?,
            ),
            None => None,
        };
        let opts = cfg.replay.clone().with_capacity(logical);
        let src = ssdsim_host::trace::open_trace(std::path::Path::new(&t.path), fmt, &opts)
            .map_err(|e| RunError::Input(e.to_string()))?;
        return Ok((AnySource::Trace(src), None));
    }
    let app = if let Some(p) = personality {
        if p.level == ssdsim_host::personality::PersonalityLevel::File {
            let fs = ssdsim_host::fs::FsConfig {
                zoned,
                fdp_plids: cfg.ftl.fdp.enabled.then(|| cfg.ftl.fdp.pid_list()),
                ..cfg.fs.clone()
            };
            AnySource::FileBench(Box::new(ssdsim_host::filebench::FileBench::new(
                p, &fs, logical, seed,
            )?))
        } else {
            AnySource::Personality(ssdsim_host::personality::Personality::new(
                p, logical, seed,
            )?)
        }
    } else {
        AnySource::Fio(FioGen::new(w, logical, seed))
    };
    // A direct job's data placement (validation refuses a buffered one).
    let app = match &w.fdp {
        Some(dp) if personality.is_none() => {
            AnySource::Placed(Box::new(ssdsim_host::workload::placement::Placed::new(
                app,
                dp.pids(&cfg.ftl.fdp),
                dp.plid_select,
                seed,
            )))
        }
        _ => app,
    };
    let buffered = match personality {
        Some(p) => p.uses_page_cache(),
        None => !w.direct,
    };
    if !buffered {
        return Ok((app, None));
    }
    let io = match personality {
        // A personality's fsyncs are its own Flush calls.
        Some(_) => ssdsim_host::pagecache::AppIo::default(),
        None => ssdsim_host::pagecache::AppIo {
            sync: w.sync,
            fsync: w.fsync,
            end_fsync: w.end_fsync,
        },
    };
    Ok((app, Some(io)))
}
