//! Tenants: the applications one host's page cache serves.
//!
//! Linux has one page cache and one flusher per device, whoever writes
//! (`struct bdi_writeback`: one `b_dirty` list, one dirty count, one
//! `balance_dirty_pages` domain, `global_dirty_limits` over the whole
//! host's memory), and one set of cores its processes share. A run of
//! several buffered flows (`[[flow]]`s, each a tenant of the drive) puts
//! them on one such host: one [`PageCache`] holds every tenant's
//! application, each with its own closed-loop depth, fio I/O options, file
//! system and statistics ([`Tenant`]), and each flow is a [`TenantView`] of
//! it, through which the flow's schedule, queue and statistics work as for
//! any other flow.
//!
//! The cache tells tenants apart by what it keys: an inode number carries
//! its tenant in its top bits (a file's, the block device's, the metadata's
//! and the file system's own I/O's, [`PageCache::ino_in`]), a device page is
//! the drive's (a tenant's pages start at its range's first page), and a
//! thread's stream carries the flow's slot ([`flow_stream`]), as the
//! requests of any flow do. A tenant's application sees its own numbers,
//! translated back at every call of [`AppSource`]. A request is the flow's
//! whose inode it is for: the flusher's writeback of a tenant's pages
//! goes through that tenant's queue and counts in its flow's statistics.

use super::*;
use crate::workload::{FilePiece, WriteTag};
use ssd_core::workload::flow_stream;
use std::cell::RefCell;
use std::rc::Rc;

/// One application of a host's page cache: its source, how it calls, and
/// where on the drive its device pages lie.
pub struct TenantSpec<S> {
    /// The application (a closed-loop source of calls).
    pub app: S,
    /// fio's `sync`, `fsync` and `end_fsync` for its calls.
    pub io: AppIo,
    /// Its first device page (4 KiB) on the drive: its flow's range's.
    pub first_page: u64,
    /// The device pages of its range.
    pub pages: u64,
    /// The flow slot its threads' streams carry (None: the run's one
    /// application, whose streams are its own).
    pub slot: Option<usize>,
}

/// The calls' statistics of one tenant (the report's `app` section).
#[derive(Clone, Debug, Default)]
pub(super) struct AppStats {
    /// The application's CPU work ([`CallExtras::cpu_cycles`]), summed
    /// over threads.
    pub(super) cpu_ns: u128,
    /// The calls' latencies summed, and those of the system calls without
    /// I/O made before them ([`CallExtras::syscalls`]).
    pub(super) calls_ns: u128,
    pub(super) syscalls_ns: u128,
    pub(super) lat: [LatencyHist; 4],
    pub(super) bytes_read: u64,
    pub(super) bytes_written: u64,
    pub(super) bytes_trimmed: u64,
    /// Of those, the O_DIRECT calls' bytes ([`CallExtras::direct`]).
    pub(super) dio_read: u64,
    pub(super) dio_written: u64,
    pub(super) last_end: SimTime,
}

/// A tenant of the cache: its application and what the cache keeps of it.
pub(super) struct Tenant<S> {
    pub(super) app: S,
    pub(super) io: AppIo,
    /// The source ended (or was stopped): no call will come.
    pub(super) done: bool,
    /// Its flow has started (a tenant of no flow starts with the run).
    pub(super) started: bool,
    /// Calls it may have outstanding (its closed-loop depth), and has.
    pub(super) depth: u32,
    pub(super) outstanding: u32,
    /// Its threads, those idle with nothing queued, and those ended.
    pub(super) threads: usize,
    pub(super) idle_empty: usize,
    pub(super) ended: usize,
    /// Its requests queued for the device, not handed out.
    pub(super) queued: usize,
    /// Its first device page and its pages.
    pub(super) base: u64,
    pub(super) pages: u64,
    /// Its flow's slot, which its threads' streams carry.
    pub(super) slot: Option<usize>,
    /// Its inode numbers' top bits.
    pub(super) tag: u32,
    pub(super) stats: AppStats,
    /// Where its statistics start.
    pub(super) start: Option<SimTime>,
    /// Its writes that waited in a file system's [`ZoneLog`].
    pub(super) zone_waits: u64,
}

impl<S: AppSource> PageCache<S> {
    /// The tenant of an inode number (the cache's).
    #[inline]
    pub(super) fn tenant_of(&self, ino: u32) -> usize {
        ((ino as u64) >> self.shift) as usize
    }
    /// An inode number's own part (what its tenant numbers it).
    #[inline]
    fn low(&self, ino: u32) -> u32 {
        ino & self.mask
    }
    /// Whether `ino` is a file's (not a block device's, a metadata's nor a
    /// file system's own I/O's): a file's pages are kept in its list, which
    /// its unlink drops.
    #[inline]
    pub(super) fn is_file(&self, ino: u32) -> bool {
        // Own numbers 1 ..= mask - 3 (the file system's and the metadata's
        // are mask - 2 and mask - 1; mask itself is never a file's).
        self.low(ino).wrapping_sub(1) < self.mask - 3
    }
    /// Whether `ino` is a file's or a block device's: data an application
    /// reads.
    #[inline]
    pub(super) fn is_file_or_device(&self, ino: u32) -> bool {
        self.low(ino) < self.mask - 2
    }
    /// Whether `ino` is a block device's (the pages a block-level workload
    /// reads and writes).
    #[inline]
    pub(super) fn is_device(&self, ino: u32) -> bool {
        self.low(ino) == 0
    }
    /// Whether `ino` is a file system's metadata ([`METADATA_INO`]).
    #[inline]
    pub(super) fn is_metadata(&self, ino: u32) -> bool {
        self.low(ino) == self.mask - 1
    }
    /// Whether `ino` is a file system's own I/O ([`FS_INO`]).
    #[inline]
    pub(super) fn is_fs(&self, ino: u32) -> bool {
        self.low(ino) == self.mask - 2
    }

    /// Thread `t`'s tenant's [`METADATA_INO`] or [`FS_INO`] (`raw`), as the
    /// cache numbers it.
    pub(super) fn own_ino(&self, t: usize, raw: u32) -> u32 {
        self.tenants[self.threads[t].tenant as usize].tag | (raw & self.mask)
    }
    /// Tenant `k`'s inode `raw` as the cache numbers it: its tenant in the
    /// top bits, the metadata's and the file system's numbers at the top of
    /// its own part. A file's number must leave room for them.
    pub(super) fn ino_in(&self, k: usize, raw: u32) -> Result<u32, SourceError> {
        let low = raw & self.mask;
        if raw != METADATA_INO && raw != FS_INO && (raw != low || low >= self.mask - 2) {
            return Err(SourceError {
                location: "page_cache".into(),
                reason: format!(
                    "inode {raw}: a host shared by {} buffered flows numbers each one's files below {}",
                    self.tenants.len(),
                    self.mask - 2
                ),
            });
        }
        Ok(self.tenants[k].tag | low)
    }
    /// The tenant's own number of inode `ino`.
    pub(super) fn ino_out(&self, ino: u32) -> u32 {
        if self.is_metadata(ino) {
            METADATA_INO
        } else if self.is_fs(ino) {
            FS_INO
        } else {
            self.low(ino)
        }
    }
    /// The run's one application at the drive's start: its numbers are
    /// the cache's.
    #[inline]
    fn untranslated(&self) -> bool {
        self.tenants.len() == 1 && self.tenants[0].base == 0
    }
    /// Tenant `k`'s device page or file page `key`, as the cache keys it.
    fn key_in(&self, k: usize, key: u64) -> Result<u64, SourceError> {
        Ok(match file_of(key) {
            Some((ino, index)) => file_page(self.ino_in(k, ino)?, index),
            None => key + self.tenants[k].base,
        })
    }
    /// A call of tenant `k`'s application as the cache keeps it: its
    /// stream carries the flow's slot, its inode the tenant, its sectors
    /// are the drive's.
    pub(super) fn call_in(&self, k: usize, mut r: HostRequest) -> Result<HostRequest, SourceError> {
        if self.untranslated() {
            return Ok(r);
        }
        let te = &self.tenants[k];
        if let Some(slot) = te.slot {
            r.stream = flow_stream(slot, r.stream);
        }
        r.tag = self.ino_in(k, r.tag)?;
        r.lba = self.key_in(k, r.lba / SPP)? * SPP + r.lba % SPP;
        Ok(r)
    }
    /// What tenant `k`'s file system writes in an fsync or a commit, in
    /// the cache's numbers.
    fn fsync_in(&self, k: usize, mut io: FsyncIo) -> Result<FsyncIo, SourceError> {
        if self.untranslated() {
            return Ok(io);
        }
        let base = self.tenants[k].base;
        for f in &mut io.ordered {
            *f = self.ino_in(k, *f)?;
        }
        for p in io.metadata.iter_mut().chain(io.resets.iter_mut()) {
            *p += base;
        }
        for (p, _) in io.direct.iter_mut().chain(io.reads.iter_mut()) {
            *p += base;
        }
        Ok(io)
    }
    /// Device pages of the pieces from `from` on, tenant `k`'s: the drive's.
    fn pieces_in(&self, k: usize, out: &mut [FilePiece]) {
        let base = self.tenants[k].base;
        for p in out {
            p.dev += base;
        }
    }

    // ---------------------------------------------- the applications' hooks

    /// [`AppSource::place`] of the file's tenant, in the cache's numbers.
    pub(super) fn app_place(&mut self, ino: u32, index: u64, n: u32, out: &mut Vec<FilePiece>) {
        let (k, raw) = (self.tenant_of(ino), self.ino_out(ino));
        let from = out.len();
        self.tenants[k].app.place(raw, index, n, self.now, out);
        self.pieces_in(k, &mut out[from..]);
    }
    /// [`AppSource::locate`] of the file's tenant, in the cache's numbers.
    pub(super) fn app_locate(&mut self, ino: u32, index: u64, n: u32, out: &mut Vec<FilePiece>) {
        let (k, raw) = (self.tenant_of(ino), self.ino_out(ino));
        let from = out.len();
        self.tenants[k].app.locate(raw, index, n, out);
        self.pieces_in(k, &mut out[from..]);
    }
    /// [`AppSource::file_pages`] of the file's tenant.
    pub(super) fn app_file_pages(&self, ino: u32) -> u64 {
        self.tenants[self.tenant_of(ino)]
            .app
            .file_pages(self.ino_out(ino))
    }
    /// [`AppSource::background_writeback`] of the file's tenant.
    pub(super) fn app_background_writeback(&self, ino: u32) -> bool {
        self.tenants[self.tenant_of(ino)]
            .app
            .background_writeback(self.ino_out(ino))
    }
    /// [`AppSource::write_tag`] of the tenant of `ino`, for device page
    /// `dev` (the drive's).
    pub(super) fn app_write_tag(&self, ino: u32, dev: u64, pages: u32) -> WriteTag {
        let te = &self.tenants[self.tenant_of(ino)];
        te.app.write_tag(dev.saturating_sub(te.base), pages)
    }
    /// [`AppSource::fsync_io`] of the file's tenant, in the cache's
    /// numbers (an error of the translation leaves the fsync with nothing
    /// more to write and is kept for the run to end with).
    pub(super) fn app_fsync_io(&mut self, ino: u32) -> FsyncIo {
        let (k, raw) = (self.tenant_of(ino), self.ino_out(ino));
        let io = self.tenants[k].app.fsync_io(raw, self.now);
        self.fsync_in(k, io).unwrap_or_else(|e| {
            self.error.get_or_insert(e);
            FsyncIo::default()
        })
    }
    /// [`AppSource::commit_io`] of tenant `k`, in the cache's numbers.
    pub(super) fn app_commit_io(&mut self, k: usize) -> Option<FsyncIo> {
        let io = self.tenants[k].app.commit_io(self.now)?;
        match self.fsync_in(k, io) {
            Ok(io) => Some(io),
            Err(e) => {
                self.error.get_or_insert(e);
                None
            }
        }
    }
    /// Tenant `k`'s stream `s` as its threads carry it.
    pub(super) fn stream_in(&self, k: usize, s: u32) -> u32 {
        match self.tenants[k].slot {
            Some(slot) => flow_stream(slot, s),
            None => s,
        }
    }
    /// The tenant of device page `lpn` (the first whose range holds it).
    pub(super) fn tenant_of_page(&self, lpn: u64) -> usize {
        if self.tenants.len() == 1 {
            return 0;
        }
        self.tenants
            .iter()
            .position(|t| lpn >= t.base && lpn < t.base + t.pages)
            .unwrap_or(0)
    }
    /// The end of the device pages `lpn` is among: its tenant's range's.
    pub(super) fn device_end(&self, lpn: u64) -> u64 {
        let t = &self.tenants[self.tenant_of_page(lpn)];
        t.base + t.pages
    }
    /// The tenant whose request `r` (queued from submitter `k`) is: its
    /// I/O's inode's, else the submitter's.
    pub(super) fn tenant_of_request(&self, k: usize, r: &HostRequest) -> usize {
        if self.tenants.len() == 1 {
            return 0;
        }
        match self.ios.get(&r.tag) {
            Some(io) => self.tenant_of(io.ino),
            None => self.threads[k].tenant as usize,
        }
    }
    /// The calls' statistics of thread `t`'s tenant.
    #[inline]
    pub(super) fn app_stats(&mut self, t: usize) -> &mut AppStats {
        let k = self.threads[t].tenant as usize;
        &mut self.tenants[k].stats
    }
    /// A call of thread `t`'s tenant has returned (or was dropped).
    pub(super) fn returned(&mut self, t: usize) {
        let k = self.threads[t].tenant as usize;
        self.tenants[k].outstanding -= 1;
    }
    /// Thread `t` (not the flusher) is idle with nothing queued, or not:
    /// its tenant's count follows from `was` to `now`.
    pub(super) fn idle_changed(&mut self, t: usize, was: bool, now: bool) {
        let k = self.threads[t].tenant as usize;
        let n = &mut self.tenants[k].idle_empty;
        *n = *n + usize::from(now) - usize::from(was);
    }
    /// Thread `t` ended (`ended`) or was woken after it had.
    pub(super) fn ended_changed(&mut self, t: usize, ended: bool) {
        let k = self.threads[t].tenant as usize;
        let n = &mut self.tenants[k].ended;
        *n = if ended { *n + 1 } else { *n - 1 };
    }

    /// Tenant `k` is done: its source ended, its calls returned, its
    /// threads ended and nothing of its is left to hand out.
    pub fn tenant_finished(&self, k: usize) -> bool {
        let te = &self.tenants[k];
        te.done
            && te.outstanding == 0
            && te.ended == te.threads
            && te.queued == 0
            && self.zone_held == 0
    }
    /// The next request of tenant `k` to submit at `now` (its flow's
    /// [`RequestSource::poll`]): the first submitter's, in index order,
    /// whose next request is the tenant's.
    pub fn poll_tenant(
        &mut self,
        k: usize,
        now: SimTime,
    ) -> Option<Result<HostRequest, SourceError>> {
        if !self.tenants[k].started {
            // Its flow starts now: its application may call.
            self.tenants[k].started = true;
            self.tenants[k].start.get_or_insert(now);
            self.changed = true;
        }
        if let Err(e) = self.step_at(now) {
            return Some(Err(e));
        }
        if self.tenants[k].queued == 0 {
            return None;
        }
        let mut from = 0;
        while let Some(s) = self.out_ready.next_from(from) {
            from = s + 1;
            let front = self.outbox[s].front()?;
            if self.tenant_of_request(s, front) == k {
                return self.pop_out(s).map(Ok);
            }
        }
        None
    }
    /// The application of tenant `k` makes no new call from `now` on.
    pub fn stop_tenant(&mut self, k: usize, now: SimTime) {
        self.now = now;
        self.changed = true;
        self.stop_calls(Some(k));
    }
    /// Tenant `k`'s statistics start again at `now` (its flow's ramp, or
    /// the run's).
    pub fn tenant_ramp_over(&mut self, k: usize, now: SimTime) {
        let te = &mut self.tenants[k];
        te.stats = AppStats {
            last_end: now,
            ..AppStats::default()
        };
        te.start = Some(now);
        let n = te.outstanding as u64;
        te.app.ramp_over(now, n);
    }
    /// The calls' latencies of tenant `k` by kind: read, write, trim, fsync.
    pub fn tenant_latencies(&self, k: usize) -> &[LatencyHist; 4] {
        &self.tenants[k].stats.lat
    }
    /// Tenant `k`'s own report sections: its calls (`app`), its
    /// application's (a file system's), and what the application makes of
    /// the host's run (Filebench's summary).
    pub fn tenant_sections(&self, k: usize, end: SimTime) -> Vec<(String, serde_json::Value)> {
        let te = &self.tenants[k];
        let mut v = vec![("app".to_string(), self.app_section(k))];
        v.extend(te.app.report_sections(end));
        v.extend(te.app.host_report(&self.host_run(k)));
        v
    }
    /// Tenant `k`'s notes: its application's, and its dirty pages left in
    /// the cache at the end.
    pub fn tenant_notes(&self, k: usize) -> Vec<(String, u64)> {
        let te = &self.tenants[k];
        let mut n = te.app.notes();
        if te.done {
            let dirty: u64 = self
                .inodes
                .iter()
                .filter(|(&ino, _)| self.tenant_of(ino) == k)
                .map(|(_, node)| node.dirty.len() as u64)
                .sum();
            if dirty > 0 {
                n.push(("page_cache_dirty_pages_left_at_end".into(), dirty));
            }
        }
        if te.zone_waits > 0 {
            n.push(("zone_log_waits".into(), te.zone_waits));
        }
        n
    }
}

/// One tenant's view of a host's page cache: the request source of its
/// flow. Every view of a host shares it (the flows of a run run on one
/// thread, one after another).
pub struct TenantView<S: AppSource> {
    host: Rc<RefCell<PageCache<S>>>,
    k: usize,
}

impl<S: AppSource> TenantView<S> {
    /// The views of a host whose tenants are `tenants`, one each, in order.
    pub fn host(
        tenants: Vec<TenantSpec<S>>,
        cfg: &PageCacheConfig,
        cpu: &CpuConfig,
        kernel: Kernel,
        max_request: u64,
    ) -> Result<Vec<TenantView<S>>, ConfigError> {
        let n = tenants.len();
        let host = Rc::new(RefCell::new(PageCache::with_tenants(
            tenants,
            cfg,
            cpu,
            kernel,
            max_request,
        )?));
        Ok((0..n)
            .map(|k| TenantView {
                host: Rc::clone(&host),
                k,
            })
            .collect())
    }
    /// The tenant's calls' latencies by kind: read, write, trim, fsync.
    pub fn app_latencies(&self) -> [LatencyHist; 4] {
        self.host.borrow().tenant_latencies(self.k).clone()
    }
    /// The tenant's index in its host.
    pub fn tenant(&self) -> usize {
        self.k
    }
}

impl<S: AppSource> RequestSource for TenantView<S> {
    fn timing(&self) -> Timing {
        Timing::Reactive
    }
    fn next_request(&mut self) -> Option<Result<HostRequest, SourceError>> {
        None
    }
    fn notes(&self) -> Vec<(String, u64)> {
        self.host.borrow().tenant_notes(self.k)
    }
    fn poll(&mut self, now: SimTime) -> Option<Result<HostRequest, SourceError>> {
        let mut h = self.host.borrow_mut();
        let r = h.poll_tenant(self.k, now)?;
        // The flow adds its range's first sector.
        let base = h.tenants[self.k].base * SPP;
        Some(r.map(|r| HostRequest {
            lba: r.lba.saturating_sub(base),
            ..r
        }))
    }
    fn event(&mut self, ev: HostEvent, now: SimTime) {
        self.host.borrow_mut().event(ev, now);
    }
    fn wake_at(&self) -> Option<SimTime> {
        self.host.borrow().wake_at()
    }
    fn finished(&self) -> bool {
        self.host.borrow().tenant_finished(self.k)
    }
    fn report_sections(&self, end: SimTime) -> Vec<(String, serde_json::Value)> {
        self.host.borrow().tenant_sections(self.k, end)
    }
    fn shared_sections(&self, _end: SimTime) -> Vec<(String, serde_json::Value)> {
        self.host.borrow().sections()
    }
    fn ramp_over(&mut self, now: SimTime, _in_flight: u64) {
        self.host.borrow_mut().tenant_ramp_over(self.k, now);
    }
    fn shared_ramp_over(&mut self, now: SimTime) {
        self.host.borrow_mut().shared_ramp_over(now);
    }
    fn stop(&mut self, now: SimTime) {
        self.host.borrow_mut().stop_tenant(self.k, now);
    }
}
