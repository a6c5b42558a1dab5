//! Block I/O the cache submits: copies, call entry costs, request tags,
//! writeback runs, reads of missing pages and on-demand readahead
//! (mm/readahead.c).

use super::*;

impl<S: AppSource> PageCache<S> {
    /// The copy of request `r`'s bytes between the application and its
    /// pages, from now on the first core free: when it ends.
    pub(super) fn copy(&mut self, r: &HostRequest) -> SimTime {
        let (lo, hi) = Self::span(r);
        let d = self.cpu.copy(r.bytes(), hi - lo);
        self.cores.run(self.now, d, Work::Copy)
    }
    /// What a thread does before its call: the application's computing
    /// (`cycles`, a hog flowop), then the system calls and benchmark
    /// operations it made since its last call, then the call's entry
    /// (`entry`, [`PageCache::entry_cost`]), one after the other on one
    /// core: when the call starts and when its entry ends.
    pub(super) fn before_call(
        &mut self,
        t: usize,
        cycles: u64,
        calls: &Syscalls,
        entry: Dur,
    ) -> (SimTime, SimTime) {
        let d = self.cpu.cycles(cycles);
        self.app_stats(t).cpu_ns += d.0 as u128;
        let bench = Dur(calls.flowops as u64 * self.cpu.flowop);
        let [computed, called, start, entered] = self.cores.run_all(
            self.now,
            [
                (d, Work::App),
                (self.cpu.calls(calls), Work::Kernel),
                (bench, Work::Benchmark),
                (entry, Work::Kernel),
            ],
        );
        // The system calls' latency, their wait for a core included.
        self.app_stats(t).syscalls_ns += (called.0 - computed.0) as u128;
        (start, entered)
    }
    /// A call of the thread's own (fio's fsync=N, end_fsync) entering the
    /// kernel now: when its entry ends.
    pub(super) fn call_entry(&mut self, op: IoOp) -> SimTime {
        let d = self.entry_cost(op);
        self.cores.run(self.now, d, Work::Kernel)
    }
    /// An application call's entry into the kernel and its own path
    /// (`read`, `write` or `fsync`; its pages are paid with its copy).
    pub(super) fn entry_cost(&self, op: IoOp) -> Dur {
        let own = match op {
            IoOp::Read => self.cpu.read,
            IoOp::Write | IoOp::ZoneAppend => self.cpu.write,
            IoOp::Flush => self.cpu.fsync,
            IoOp::Trim | IoOp::ZoneReset | IoOp::ZoneFinish | IoOp::ZoneOpen | IoOp::ZoneClose => 0,
        };
        Dur(self.cpu.syscall + own)
    }

    // ------------------------------------------------------------ I/O

    pub(super) fn new_tag(&mut self) -> u32 {
        loop {
            let t = self.next_tag;
            self.next_tag = self.next_tag.wrapping_add(1);
            if !self.ios.contains_key(&t) {
                return t;
            }
        }
    }

    /// Queue a request of submitter `sub` (thread index) over `n` pages from
    /// `lpn`; `waiter` waits for it; `sync` marks a write `REQ_SYNC`.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn submit(
        &mut self,
        sub: usize,
        kind: IoKind,
        ino: u32,
        lpn: u64,
        n: u32,
        waiter: Option<usize>,
        sync: bool,
    ) -> u32 {
        self.submit_at(sub, kind, ino, lpn, lpn, n, waiter, sync)
    }

    /// [`submit`](Self::submit) of the cache's pages from `lpn` (a file
    /// page, [`file_page`]) at device page `dev`.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn submit_at(
        &mut self,
        sub: usize,
        kind: IoKind,
        ino: u32,
        lpn: u64,
        dev: u64,
        n: u32,
        waiter: Option<usize>,
        sync: bool,
    ) -> u32 {
        self.submit_runs(sub, kind, ino, lpn, n, Vec::new(), dev, waiter, sync)
    }

    /// [`submit_at`](Self::submit_at) of one request whose device pages
    /// from `dev` hold the cache's pages `[lpn, lpn + n)` and then the runs
    /// `more` (file pages placed one after another on the device, not
    /// contiguous in the file).
    #[allow(clippy::too_many_arguments)]
    fn submit_runs(
        &mut self,
        sub: usize,
        kind: IoKind,
        ino: u32,
        lpn: u64,
        n: u32,
        more: Vec<(u64, u32)>,
        dev: u64,
        waiter: Option<usize>,
        sync: bool,
    ) -> u32 {
        let total = n + more.iter().map(|r| r.1).sum::<u32>();
        let tag = self.new_tag();
        let (op, lba, sectors) = match kind {
            IoKind::Read => (IoOp::Read, dev * SPP, total as u64 * SPP),
            IoKind::Write => (IoOp::Write, dev * SPP, total as u64 * SPP),
            IoKind::Trim => (IoOp::Trim, dev * SPP, total as u64 * SPP),
            IoKind::Flush => (IoOp::Flush, 0, 0),
            IoKind::Zone(op) => {
                let sectors = if op == IoOp::ZoneAppend {
                    n as u64 * SPP
                } else {
                    0
                };
                (op, dev * SPP, sectors)
            }
        };
        let (meta, fs) = (self.is_metadata(ino), self.is_fs(ino));
        match kind {
            IoKind::Write if meta => self.stats.metadata_written += total as u64,
            IoKind::Write if fs => self.stats.fs_written += total as u64,
            IoKind::Read if fs => self.stats.fs_read += total as u64,
            _ => {}
        }
        // A file system's direct I/O leaves the cache's pages alone.
        let runs = if fs { 0 } else { 1 + more.len() };
        for (l, k) in std::iter::once((lpn, n))
            .chain(more.iter().copied())
            .take(runs)
        {
            for lpn in l..l + k as u64 {
                if let Some(&i) = self.map.get(&lpn) {
                    match kind {
                        IoKind::Read => {
                            let p = &mut self.pages[i as usize];
                            p.flags |= LOCKED;
                            p.io = tag;
                        }
                        IoKind::Write => {
                            self.clear_dirty(i);
                            let p = &mut self.pages[i as usize];
                            p.flags |= WRITEBACK;
                            p.io = tag;
                            self.nr_wb += 1;
                        }
                        _ => {}
                    }
                }
            }
        }
        let mut waiters = Vec::new();
        if let Some(w) = waiter {
            waiters.push(w as u32);
            self.threads[w].waits += 1;
        }
        self.ios.insert(
            tag,
            Io {
                kind,
                ino,
                lpn,
                n,
                more,
                submitter: sub as u32,
                waiters,
            },
        );
        // A write carries what its file system tags it with: a placement
        // identifier, the log that orders it on a zoned drive.
        let wt = match kind {
            IoKind::Write => self.app_write_tag(ino, dev, total),
            _ => crate::workload::WriteTag::default(),
        };
        let r = HostRequest {
            arrival: self.now,
            op,
            lba,
            sectors: sectors as u32,
            stream: self.threads[sub].stream,
            tag,
            sync,
            placement: wt.placement,
        };
        self.out_push_logged(sub, r, wt.zone_log);
        self.pay_submit(sub);
        tag
    }

    /// The submitter pays a request's way through the block layer (an
    /// application thread moves on once it has; the flusher's CPU is
    /// booked, its own pace is the device's).
    pub(super) fn pay_submit(&mut self, sub: usize) {
        let from = self.threads[sub].until.max(self.now);
        let end = self.cores.run(from, Dur(self.cpu.submit), Work::Submit);
        if sub > 0 {
            self.threads[sub].until = end;
        }
    }

    /// Submit the pages of `lpns` (sorted) as writes in contiguous runs of
    /// at most `max_req_pages`, `REQ_SYNC` when `sync` ([`wb_sync`] for
    /// writeback of `reason`); returns the pages submitted.
    pub(super) fn write_runs(
        &mut self,
        sub: usize,
        ino: u32,
        lpns: &[u64],
        reason: usize,
        waiter: Option<usize>,
        sync: bool,
    ) -> u64 {
        if let Some(w) = self.ioless.as_mut() {
            w.writeback_starts(self.now, self.nr_wb);
        }
        let mut k = 0;
        let mut total = 0;
        let mut bio = None;
        while k < lpns.len() {
            let s = lpns[k];
            let mut e = k + 1;
            while e < lpns.len()
                && lpns[e] == lpns[e - 1] + 1
                && ((e - k) as u64) < self.max_req_pages
            {
                e += 1;
            }
            let n = (e - k) as u32;
            if let Some((file, index)) = file_of(s) {
                total += self.write_file_run(file, index, n, &mut bio);
            } else {
                self.submit_bio(sub, ino, &mut bio, reason, waiter, sync);
                self.submit(sub, IoKind::Write, ino, s, n, waiter, sync);
                self.stats.wb_pages[reason] += n as u64;
                self.stats.wb_requests[reason] += 1;
                total += n as u64;
            }
            k = e;
        }
        self.submit_bio(sub, ino, &mut bio, reason, waiter, sync);
        total
    }

    /// Write back `n` dirty pages of `file` from page `index` where its
    /// file system places them now ([`AppSource::place`]), into `bio`: a
    /// placed run that follows the bio's last on the device joins it (up
    /// to `max_sectors_kb`), else the bio is submitted and a new one
    /// started, as F2FS builds its write bios (`f2fs_submit_page_write`
    /// merges a page whose block follows the bio's last); a page left
    /// unplaced (its file deleted since) is clean with nothing written.
    /// Returns the pages placed.
    fn write_file_run(&mut self, file: u32, index: u64, n: u32, bio: &mut Option<Bio>) -> u64 {
        let mut pieces = Vec::new();
        self.app_place(file, index, n, &mut pieces);
        let mut next = index;
        let mut total = 0;
        for p in pieces {
            debug_assert!(p.index >= next && p.index + p.pages as u64 <= index + n as u64);
            self.clean_unplaced(file, next, p.index);
            let lpn = file_page(file, p.index);
            match bio {
                Some(b)
                    if p.joins
                        && b.dev + b.pages as u64 == p.dev
                        && (b.pages + p.pages) as u64 <= self.max_req_pages =>
                {
                    b.more.push((lpn, p.pages));
                    b.pages += p.pages;
                }
                _ => {
                    let full = bio.replace(Bio {
                        dev: p.dev,
                        pages: p.pages,
                        lpn,
                        n: p.pages,
                        more: Vec::new(),
                    });
                    if let Some(b) = full {
                        self.pending_bios.push(b);
                    }
                }
            }
            total += p.pages as u64;
            next = p.index + p.pages as u64;
        }
        self.clean_unplaced(file, next, index + n as u64);
        total
    }

    /// Submit the bios [`write_file_run`](Self::write_file_run) filled
    /// (those it closed, then `bio`), one request each.
    fn submit_bio(
        &mut self,
        sub: usize,
        ino: u32,
        bio: &mut Option<Bio>,
        reason: usize,
        waiter: Option<usize>,
        sync: bool,
    ) {
        let mut done = std::mem::take(&mut self.pending_bios);
        done.extend(bio.take());
        for b in done.drain(..) {
            self.stats.wb_pages[reason] += b.pages as u64;
            self.stats.wb_requests[reason] += 1;
            let kind = IoKind::Write;
            self.submit_runs(sub, kind, ino, b.lpn, b.n, b.more, b.dev, waiter, sync);
        }
        // Its room serves the next pass.
        self.pending_bios = done;
    }

    /// File pages `[from, to)` of `file` that were not placed: clean.
    fn clean_unplaced(&mut self, file: u32, from: u64, to: u64) {
        for index in from..to {
            if let Some(&i) = self.map.get(&file_page(file, index)) {
                self.clear_dirty(i);
            }
        }
    }

    /// Read `n` missing pages from `lpn` (in the cache, not up to date):
    /// one request, or for file pages one per run where the file system
    /// has them ([`AppSource::locate`]), a hole made up to date as zeros
    /// without I/O (`f2fs_read_single_page` zero-fills a `NULL_ADDR` or
    /// `NEW_ADDR` block).
    fn read_run(&mut self, sub: usize, ino: u32, lpn: u64, n: u32) {
        let Some((file, index)) = file_of(lpn) else {
            self.submit(sub, IoKind::Read, ino, lpn, n, None, false);
            self.stats.read_requests += 1;
            self.stats.read_pages += n as u64;
            return;
        };
        let mut pieces = Vec::new();
        self.app_locate(file, index, n, &mut pieces);
        let mut next = index;
        for p in pieces {
            self.zero_fill(file, next, p.index);
            let lpn = file_page(file, p.index);
            self.submit_at(sub, IoKind::Read, ino, lpn, p.dev, p.pages, None, false);
            self.stats.read_requests += 1;
            self.stats.read_pages += p.pages as u64;
            next = p.index + p.pages as u64;
        }
        self.zero_fill(file, next, index + n as u64);
    }

    /// File pages `[from, to)` of `file`, holes: up to date, no I/O.
    fn zero_fill(&mut self, file: u32, from: u64, to: u64) {
        for index in from..to {
            if let Some(&i) = self.map.get(&file_page(file, index)) {
                self.pages[i as usize].flags |= UPTODATE;
            }
        }
    }

    /// The end of the pages a read from `lpn` may reach: the device's
    /// last page, or for a file page its file's end (`i_size`).
    pub(super) fn read_end(&self, lpn: u64) -> u64 {
        match file_of(lpn) {
            Some((file, _)) => file_page(file, 0) + self.app_file_pages(file).min(1 << 32),
            None => self.device_end(lpn),
        }
    }

    /// Submit reads of the pages in [from, from+n) that are not in the
    /// cache (contiguous runs), marking `mark` as `PG_readahead`; the pages
    /// of the caller's request are waited for by the caller separately.
    pub(super) fn read_missing(
        &mut self,
        sub: usize,
        from: u64,
        n: u64,
        mark: Option<u64>,
    ) -> bool {
        let ino = self.threads[sub].ino;
        // A device's pages end at its end; a file's readahead window is
        // clipped at its end by `ra_submit`, and its request's own pages
        // are read (as zeros past a file that shrank since).
        let end = match file_of(from) {
            Some(_) => from + n,
            None => (from + n).min(self.device_end(from)),
        };
        let mut run: Option<(u64, u32)> = None;
        let mut ok = true;
        let mut lpn = from;
        while lpn < end {
            let absent = !self.map.contains_key(&lpn);
            if absent {
                if self.get_or_insert(lpn, ino).is_none() {
                    ok = false;
                    break;
                }
                if mark == Some(lpn) {
                    let i = self.map[&lpn];
                    self.pages[i as usize].flags |= RA_MARK;
                }
                match &mut run {
                    Some((_, c)) if (*c as u64) < self.max_req_pages => *c += 1,
                    _ => {
                        if let Some((s, c)) = run.take() {
                            self.read_run(sub, ino, s, c);
                        }
                        run = Some((lpn, 1));
                    }
                }
            } else if let Some((s, c)) = run.take() {
                self.read_run(sub, ino, s, c);
            }
            lpn += 1;
        }
        if let Some((s, c)) = run.take() {
            self.read_run(sub, ino, s, c);
        }
        ok
    }

    /// Readahead window `[ra.start, ra.start + ra.size)` with the marker at
    /// `size - async_size` (mm/readahead.c, `ra_submit`).
    pub(super) fn ra_submit(&mut self, t: usize, req_lo: u64, req_hi: u64) -> bool {
        let ra = *self.threads[t].ra();
        let mark = ra.start + ra.size - ra.async_size;
        let before = self.stats.read_pages;
        // Not past the device's end, nor past a file's end but for the
        // request's own pages (`do_page_cache_ra` clips the window at
        // `i_size`; a file that shrank since reads its request as zeros).
        let end = (ra.start + ra.size).min(self.read_end(ra.start).max(req_hi));
        let ok = self.read_missing(t, ra.start, end.saturating_sub(ra.start), Some(mark));
        // Pages read beyond the request are readahead.
        let read = self.stats.read_pages - before;
        let in_req = (req_hi.min(ra.start + ra.size)).saturating_sub(req_lo.max(ra.start));
        self.stats.readahead_pages += read.saturating_sub(in_req);
        ok
    }

    pub(super) fn next_ra_size(cur: u64, max: u64) -> u64 {
        if cur < max / 16 {
            4 * cur
        } else if cur <= max / 2 {
            2 * cur
        } else {
            max
        }
    }
    pub(super) fn init_ra_size(size: u64, max: u64) -> u64 {
        let n = size.next_power_of_two();
        if n <= max / 32 {
            n * 4
        } else if n <= max / 4 {
            n * 2
        } else {
            max
        }
    }

    /// `ondemand_readahead` for a miss (`hit_marker` false) or a hit on the
    /// readahead marker at page `index`, with `req` pages of the call left.
    pub(super) fn ondemand(
        &mut self,
        t: usize,
        index: u64,
        req: u64,
        hit_marker: bool,
        req_lo: u64,
        req_hi: u64,
    ) -> bool {
        let max = self.ra_max.max(req.min(self.max_req_pages));
        let mut ra = *self.threads[t].ra();
        let initial = |ra: &mut Ra| {
            ra.start = index;
            ra.size = Self::init_ra_size(req, max);
            ra.async_size = if ra.size > req {
                ra.size - req
            } else {
                ra.size
            };
        };
        // The file's first page (a file page's index, or the device's).
        if file_of(index).map_or(index, |(_, i)| i) == 0 {
            initial(&mut ra);
        } else if ra.size > 0
            && (index == ra.start + ra.size - ra.async_size || index == ra.start + ra.size)
        {
            ra.start += ra.size;
            ra.size = Self::next_ra_size(ra.size, max);
            ra.async_size = ra.size;
        } else if hit_marker {
            // The next page not in the cache after `index`.
            let mut start = index + 1;
            while start < index + max && self.map.contains_key(&start) {
                start += 1;
            }
            if start - index > max {
                *self.threads[t].ra_mut() = ra;
                return true;
            }
            ra.start = start;
            ra.size = start - index + req;
            ra.size = Self::next_ra_size(ra.size, max);
            ra.async_size = ra.size;
        } else if req > max || ra.prev > 0 && index >= ra.prev - 1 && index - (ra.prev - 1) <= 1 {
            initial(&mut ra);
        } else {
            // A small random read: just its pages.
            *self.threads[t].ra_mut() = ra;
            return self.read_missing(t, index, req, None);
        }
        if !hit_marker && index == ra.start && ra.size == ra.async_size {
            let add = Self::next_ra_size(ra.size, max);
            if ra.size + add <= max {
                ra.async_size = add;
                ra.size += add;
            } else {
                ra.size = max;
                ra.async_size = max >> 1;
            }
        }
        *self.threads[t].ra_mut() = ra;
        self.ra_submit(t, req_lo, req_hi)
    }

    // ------------------------------------------------------------ threads
}
