//! fsync and the file systems' own I/O: the steps a file system asks for
//! (journal commits, log writes), direct I/O, unlink's page drops and the
//! waits of a thread on page I/O.

use super::*;

impl<S: AppSource> PageCache<S> {
    /// The steps of what a file system writes in an fsync after the file's
    /// data, or in a journal commit, each waited for before the next: the
    /// ordered data, the metadata, then the log with its commit block as
    /// the file system flags and orders them.
    pub(super) fn fs_steps_of(io: FsyncIo) -> VecDeque<FsStep> {
        let mut steps = VecDeque::new();
        // A cleaner's reads of its victim come first: its moves are
        // placed once they are read.
        if !io.reads.is_empty() {
            steps.push_back(FsStep::Read(io.reads));
        }
        // jbd's `journal_submit_data_buffers` (jbd2: per inode,
        // `jbd2_journal_submit_inode_data_buffers`) submits all of it, and
        // the commit waits for it before its commit block; ReiserFS's
        // `write_ordered_buffers` before its log. Here the log follows the
        // data's writeback in both.
        if !io.ordered.is_empty() {
            steps.push_back(FsStep::Ordered(io.ordered, io.sync.ordered));
        }
        if !io.metadata.is_empty() {
            steps.push_back(FsStep::Metadata(io.metadata));
        }
        // The log blocks and the commit block with their REQ_SYNC as the
        // file system marks them.
        let sync = io.sync;
        let mut direct: Vec<(u64, u32, bool)> =
            io.direct.iter().map(|&(l, n)| (l, n, sync.log)).collect();
        if io.barrier_each {
            // Each run a barrier write of its own: a flush before it.
            for (l, n, _) in direct {
                steps.push_back(FsStep::Flush);
                steps.push_back(FsStep::Direct(vec![(l, n, sync.commit)]));
            }
        } else if !io.barrier && sync.log == sync.commit {
            // One submission, the runs as they are.
            if !direct.is_empty() {
                steps.push_back(FsStep::Direct(direct));
            }
        } else if let Some(last) = direct.last_mut() {
            // The commit block a request of its own: after a flush with
            // barriers, or in the same submission with its own flag.
            let cb = (last.0 + last.1 as u64 - 1, 1, sync.commit);
            last.1 -= 1;
            if last.1 == 0 {
                direct.pop();
            }
            if io.barrier {
                if !direct.is_empty() {
                    steps.push_back(FsStep::Direct(direct));
                }
                steps.push_back(FsStep::Flush);
                steps.push_back(FsStep::Direct(vec![cb]));
            } else {
                direct.push(cb);
                steps.push_back(FsStep::Direct(direct));
            }
        }
        if !io.resets.is_empty() {
            steps.push_back(FsStep::Reset(io.resets));
        }
        steps
    }

    /// kjournald2 is woken for a commit the file system asked for (an
    /// fsync's `jbd2_log_start_commit`, the commit timer, a full
    /// transaction): the file system's thread gets a commit call, after
    /// what it has queued (the file system counts it as asked for, so an
    /// fsync may wait for it, also after the application's last call).
    /// Tenant `k`'s file system's.
    pub(super) fn poll_commit(&mut self, k: usize) -> bool {
        if !self.tenants[k].app.take_commit() {
            return false;
        }
        let stream = self.stream_in(k, self.tenants[k].app.journal_stream());
        let r = HostRequest {
            arrival: self.now,
            op: IoOp::Flush,
            lba: 0,
            sectors: 0,
            stream,
            tag: self.tenants[k].tag | (FS_INO & self.mask),
            sync: false,
            placement: ssd_core::workload::Placement::NONE,
        };
        let extras = CallExtras {
            commit: true,
            ..CallExtras::default()
        };
        self.enqueue(k, r, false, extras);
        true
    }

    /// An O_DIRECT call's request, sector-exact, in pieces of at most
    /// `max_sectors_kb` (the block layer's split), each waited for by `t`;
    /// a write is `REQ_SYNC` (`iomap_dio_bio_opflags`, 2.6.35's
    /// `WRITE_ODIRECT_PLUG`). No page of the cache is touched.
    pub(super) fn submit_direct(&mut self, t: usize, r: &HostRequest) {
        let kind = if r.op == IoOp::Write {
            IoKind::Write
        } else {
            IoKind::Read
        };
        let (lo, hi) = Self::span(r);
        let Some((file, index)) = file_of(lo) else {
            self.submit_direct_at(t, r, kind, r.lba, r.lba + r.sectors as u64, 0);
            return;
        };
        // File pages: a write goes where the file system places it now (an
        // O_DIRECT write allocates at the call: `f2fs_map_blocks` with
        // `F2FS_GET_BLOCK_DIO`), a read where the file's blocks are (holes
        // read as zeros, without I/O); each run in its sectors of `r`.
        let mut pieces = Vec::new();
        let n = (hi - lo) as u32;
        if kind == IoKind::Write {
            self.app_place(file, index, n, &mut pieces);
        } else {
            self.app_locate(file, index, n, &mut pieces);
        }
        let (from, to) = (r.lba, r.lba + r.sectors as u64);
        for p in pieces {
            let first = file_page(file, p.index) * SPP;
            let s = from.max(first);
            let e = to.min(first + p.pages as u64 * SPP);
            if s < e {
                self.submit_direct_at(t, r, kind, s, e, (p.dev * SPP).wrapping_sub(first));
            }
        }
    }

    /// Direct requests of `r` over its sectors `[at, end)`, each at its
    /// device sector (`at` + `shift`), split at `max_sectors_kb`.
    fn submit_direct_at(
        &mut self,
        t: usize,
        r: &HostRequest,
        kind: IoKind,
        mut at: u64,
        end: u64,
        shift: u64,
    ) {
        let max = self.max_req_pages * SPP;
        while at < end {
            let k = (end - at).min(max);
            let tag = self.new_tag();
            self.ios.insert(
                tag,
                Io {
                    kind,
                    ino: r.tag,
                    lpn: at / SPP,
                    n: 0,
                    more: Vec::new(),
                    submitter: t as u32,
                    waiters: vec![t as u32],
                },
            );
            self.threads[t].waits += 1;
            let lba = at.wrapping_add(shift);
            let wt = if r.op == IoOp::Write {
                self.app_write_tag(r.tag, lba / SPP, (k / SPP) as u32)
            } else {
                crate::workload::WriteTag::default()
            };
            let req = HostRequest {
                arrival: self.now,
                op: r.op,
                lba,
                sectors: k as u32,
                stream: self.threads[t].stream,
                tag,
                sync: r.op == IoOp::Write,
                placement: wt.placement,
            };
            self.out_push_logged(t, req, wt.zone_log);
            self.pay_submit(t);
            at += k;
        }
    }

    /// Of the cached pages among `lpns`, those dirty and not under
    /// writeback, to write now; thread `t` waits for those under writeback
    /// (and, with `reads`, for those being read).
    pub(super) fn dirty_to_write(
        &mut self,
        t: usize,
        lpns: impl IntoIterator<Item = u64>,
        reads: bool,
    ) -> Vec<u64> {
        let mut now_w = Vec::new();
        for lpn in lpns {
            if let Some(&i) = self.map.get(&lpn) {
                let f = self.pages[i as usize].flags;
                if f & DIRTY != 0 && f & WRITEBACK == 0 {
                    now_w.push(lpn);
                } else if f & WRITEBACK != 0 || reads && f & LOCKED != 0 {
                    self.wait_page_io(t, lpn);
                }
            }
        }
        now_w
    }

    /// Thread `t` waits for every write of file `ino` in flight.
    pub(super) fn wait_inode_writes(&mut self, t: usize, ino: u32) {
        let mut n = 0;
        for io in self.ios.values_mut() {
            if io.kind == IoKind::Write && io.ino == ino && !io.waiters.contains(&(t as u32)) {
                io.waiters.push(t as u32);
                n += 1;
            }
        }
        self.threads[t].waits += n;
    }

    /// Submit a step of an fsync's file-system writes; the thread waits
    /// for it.
    pub(super) fn fs_step(&mut self, t: usize, step: FsStep) {
        match step {
            FsStep::Ordered(inos, sync) => {
                for ino in inos {
                    let dirty: Vec<u64> = self
                        .inodes
                        .get(&ino)
                        .map(|n| n.dirty.iter().copied().collect())
                        .unwrap_or_default();
                    let now_w = self.dirty_to_write(t, dirty, false);
                    self.wait_inode_writes(t, ino);
                    self.write_runs(t, ino, &now_w, WB_FSYNC, Some(t), sync);
                }
            }
            FsStep::Metadata(mut lpns) => {
                lpns.sort_unstable();
                lpns.dedup();
                let now_w = self.dirty_to_write(t, lpns, false);
                let meta = self.own_ino(t, METADATA_INO);
                self.write_runs(t, meta, &now_w, WB_FSYNC, Some(t), wb_sync(WB_FSYNC));
            }
            FsStep::Direct(runs) => {
                for (lpn, n, sync) in runs {
                    // At most max_sectors_kb per request, as any submitter.
                    let mut at = lpn;
                    let end = lpn + n as u64;
                    while at < end {
                        let k = (end - at).min(self.max_req_pages);
                        let fs = self.own_ino(t, FS_INO);
                        self.submit(t, IoKind::Write, fs, at, k as u32, Some(t), sync);
                        at += k;
                    }
                }
            }
            FsStep::Read(runs) => {
                for (lpn, n) in runs {
                    let mut at = lpn;
                    let end = lpn + n as u64;
                    while at < end {
                        let k = (end - at).min(self.max_req_pages);
                        let fs = self.own_ino(t, FS_INO);
                        self.submit(t, IoKind::Read, fs, at, k as u32, Some(t), false);
                        at += k;
                    }
                }
            }
            FsStep::Reset(zones) => {
                for lpn in zones {
                    let kind = IoKind::Zone(IoOp::ZoneReset);
                    let fs = self.own_ino(t, FS_INO);
                    self.submit(t, kind, fs, lpn, 0, Some(t), false);
                }
            }
            FsStep::Flush => {
                let fs = self.own_ino(t, FS_INO);
                self.submit(t, IoKind::Flush, fs, 0, 0, Some(t), false);
                self.stats.flushes += 1;
                self.stats.fs_flushes += 1;
            }
        }
    }

    /// Every page of file `ino` leaves the cache, its dirty pages cleaned
    /// unwritten; the pages with I/O in flight, which thread `t` then
    /// waits for, stay (the file's) and are returned.
    pub(super) fn unlink_pages(&mut self, t: usize, ino: u32) -> Vec<u64> {
        let Some(node) = self.inodes.get_mut(&ino) else {
            return Vec::new();
        };
        let mut at = std::mem::replace(&mut node.first, NONE);
        let dirty = std::mem::take(&mut node.dirty);
        if !dirty.is_empty() {
            // truncate_cleanup_folio -> folio_cancel_dirty ->
            // folio_account_cleaned, for each dirty page (here at once):
            // the pages leave the dirty count that balance_dirty_pages and
            // the flusher go by, and the file leaves b_dirty. A page under
            // writeback is cleaned too: nothing can write it any more (the
            // inode is unreachable; Linux cancels its dirty bit once the
            // wait below is over, to the same effect).
            self.b_dirty.remove(&(node.dirtied_when, ino));
            self.nr_dirty -= dirty.len() as u64;
            self.stats.unlink_dirty_pages += dirty.len() as u64;
            for lpn in &dirty {
                let i = self.map[lpn];
                self.pages[i as usize].flags &= !DIRTY;
            }
        }
        // The list is taken whole: the pages that stay join it again.
        let mut busy = Vec::new();
        while at != NONE {
            let i = at;
            let p = self.pages[i as usize];
            at = p.fnext;
            if p.io != NONE {
                // truncate_inode_pages_range: folio_wait_writeback, or the
                // folio lock of a read in flight; the page goes after.
                self.wait_page_io(t, p.lpn);
                self.page_joins(i);
                busy.push(p.lpn);
            } else {
                self.map.remove(&p.lpn);
                self.lru_unlink(i);
                self.free.push(i);
                self.stats.unlink_pages += 1;
            }
        }
        busy
    }

    /// Page `i` of a file being unlinked, whose I/O thread `t` waited for,
    /// leaves the cache; false if it has I/O in flight (again), which the
    /// thread then waits for.
    pub(super) fn unlink_page(&mut self, t: usize, i: u32) -> bool {
        let p = self.pages[i as usize];
        if p.flags & DIRTY != 0 {
            // Cleaned unwritten, as in `unlink_pages` (none should be: the
            // file's writers wait for its lock).
            self.clear_dirty(i);
            self.stats.unlink_dirty_pages += 1;
        }
        if p.io != NONE {
            // truncate_inode_pages_range: folio_wait_writeback, or the
            // folio lock of a read in flight.
            self.wait_page_io(t, p.lpn);
            return false;
        }
        self.remove_page(i);
        self.stats.unlink_pages += 1;
        true
    }

    pub(super) fn pages_busy(&self, lo: u64, hi: u64) -> bool {
        (lo..hi).any(|lpn| {
            self.map
                .get(&lpn)
                .is_some_and(|&i| self.pages[i as usize].io != NONE)
        })
    }

    /// Wait for a read in flight on `lpn` (not for a writeback).
    pub(super) fn wait_page_io_read(&mut self, t: usize, lpn: u64) {
        if let Some(&i) = self.map.get(&lpn) {
            if self.pages[i as usize].flags & LOCKED != 0 {
                self.wait_page_io(t, lpn);
            }
        }
    }
    /// Wait for a writeback in flight on `lpn`.
    pub(super) fn wait_page_io_write(&mut self, t: usize, lpn: u64) {
        if let Some(&i) = self.map.get(&lpn) {
            if self.pages[i as usize].flags & WRITEBACK != 0 {
                self.wait_page_io(t, lpn);
            }
        }
    }
    /// Reclaim found nothing to evict: the thread waits for its I/O, or for
    /// the next completion if it has none in flight.
    pub(super) fn reclaim_stall(&mut self, t: usize) {
        self.stats.reclaim_waits += 1;
        if self.threads[t].waits == 0 {
            self.wait_any(t);
        }
    }

    /// Wait for the next completion (reclaim found nothing to evict); the
    /// flusher writes meanwhile, so that dirty pages become evictable.
    pub(super) fn wait_any(&mut self, t: usize) {
        self.reclaim_waiters.push(t as u32);
        self.threads[t].waits += 1;
        self.flusher_bg = true;
    }

    // ------------------------------------------------------------ flusher
}
