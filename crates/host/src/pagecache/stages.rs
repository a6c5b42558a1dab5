//! An application thread's stages: each [`Stage`] of a call, from the
//! kernel entry to its completion. [`PageCache::run_thread`] runs a
//! thread's stages until one sleeps (on page or device I/O, a throttling
//! pause, the CPU, or a lock).

use super::*;

/// What a thread does after a stage.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Next {
    /// Runs its next stage now.
    Run,
    /// Sleeps until an event wakes it (or its `until`).
    Sleep,
}

impl<S: AppSource> PageCache<S> {
    /// Idle: the thread takes its next call (or, its source done, `end_fsync`'s fsync) and enters the kernel.
    pub(super) fn idle(&mut self, t: usize) -> Next {
        let th = &mut self.threads[t];
        match th.queue.pop_front() {
            Some(r) => {
                let (more, extras, seq) = th.more.pop_front().unwrap_or_default();
                th.dsync = extras.dsync;
                let first_piece = !th.in_call;
                // An application call enters the kernel (a
                // file system's own I/O and metadata are the
                // call's that made them, an unlink its
                // deletefile's).
                let app_call = !self.is_metadata(r.tag) && !self.is_fs(r.tag) && !extras.unlink;
                let entry = if app_call && first_piece {
                    self.entry_cost(r.op)
                } else {
                    Dur(0)
                };
                // The thread computes first (a hog flowop) and
                // makes its calls without I/O: the call starts
                // when they end, then enters the kernel.
                let (start, entered) = if first_piece {
                    self.before_call(t, extras.cpu_cycles, &extras.syscalls, entry)
                } else {
                    (self.now, self.now)
                };
                let fs_io = self.is_fs(r.tag);
                let reads_file = r.op == IoOp::Read && self.is_file_or_device(r.tag);
                let th = &mut self.threads[t];
                if first_piece {
                    th.call_started = start;
                }
                th.in_call = more;
                th.seq = seq;
                if reads_file && !extras.direct {
                    // The read goes through its open file's readahead state.
                    th.use_file(extras.fd, extras.open);
                }
                th.op = Some(r);
                th.ino = r.tag;
                th.own_fsync = false;
                th.started = start;
                th.deferred.clear();
                th.stage = match r.op {
                    _ if extras.unlink => Stage::Unlink,
                    _ if extras.commit => Stage::CommitRun,
                    _ if extras.await_commit != 0 => {
                        th.commit_wait = extras.await_commit;
                        th.await_only = true;
                        Stage::CommitWait
                    }
                    IoOp::Read | IoOp::Write if extras.direct => Stage::DioStart,
                    _ if fs_io => Stage::DirectStart,
                    IoOp::Read => Stage::ReadStart,
                    IoOp::Write => Stage::WriteStart,
                    IoOp::Flush => Stage::SyncStart,
                    IoOp::Trim => Stage::TrimStart,
                    // Zone commands go to the device at once, as Linux's
                    // zone ioctls (`blkdev_zone_mgmt`) and passthrough do.
                    IoOp::ZoneAppend
                    | IoOp::ZoneReset
                    | IoOp::ZoneFinish
                    | IoOp::ZoneOpen
                    | IoOp::ZoneClose => Stage::DirectStart,
                };
                self.threads[t].until = entered;
            }
            None => {
                // The source is exhausted: no call will come.
                let te = &self.tenants[th.tenant as usize];
                if !te.done {
                    return Next::Sleep;
                }
                if te.io.end_fsync && !th.ended && th.writes > 0 {
                    th.ended = true;
                    th.own_fsync = true;
                    th.op = None;
                    th.started = self.now;
                    th.stage = Stage::SyncStart;
                    self.threads[t].until = self.call_entry(IoOp::Flush);
                } else {
                    th.stage = Stage::Done;
                    return Next::Sleep;
                }
            }
        }
        Next::Run
    }

    /// A read: each page looked up, missing ones read with readahead; waits for their I/O.
    pub(super) fn read_start(&mut self, t: usize) -> Next {
        let r = self.threads[t].op.unwrap();
        let (lo, hi) = Self::span(&r);
        let mut lpn = lo;
        let mut ok = true;
        while lpn < hi {
            match self.map.get(&lpn).copied() {
                Some(i) if self.pages[i as usize].flags & (UPTODATE | LOCKED) != 0 => {
                    let f = self.pages[i as usize].flags;
                    if f & RA_MARK != 0 && self.ra_max > 0 {
                        self.pages[i as usize].flags &= !RA_MARK;
                        ok &= self.ondemand(t, lpn, hi - lpn, true, lo, hi);
                    }
                    self.stats.hits += (f & UPTODATE != 0) as u64;
                    self.stats.misses += (f & UPTODATE == 0) as u64;
                }
                _ => {
                    self.stats.misses += 1;
                    ok &= if self.ra_max > 0 {
                        self.ondemand(t, lpn, hi - lpn, false, lo, hi)
                    } else {
                        self.read_missing(t, lpn, hi - lpn, None)
                    };
                    if ok && !self.map.contains_key(&lpn) {
                        // The window went past the page (a readahead
                        // state left by a file that ended sooner): the
                        // page is read alone (`filemap_create_folio`).
                        ok &= self.read_missing(t, lpn, 1, None);
                    }
                }
            }
            if !ok {
                break;
            }
            lpn += 1;
        }
        self.threads[t].ra_mut().prev = hi;
        for lpn in lo..hi {
            self.wait_page_io(t, lpn);
        }
        if !ok {
            self.reclaim_stall(t);
            return Next::Sleep;
        }
        self.threads[t].stage = Stage::ReadCopy;
        Next::Run
    }

    /// A read's pages are up to date: the copy to the application (read anew if evicted).
    pub(super) fn read_copy(&mut self, t: usize) -> Next {
        let r = self.threads[t].op.unwrap();
        let (lo, hi) = Self::span(&r);
        let mut missing = false;
        for lpn in lo..hi {
            match self.map.get(&lpn).copied() {
                Some(i) if self.pages[i as usize].flags & UPTODATE != 0 => self.touch(i),
                _ => missing = true,
            }
        }
        if missing {
            // Evicted before the thread ran again: read it anew.
            self.threads[t].stage = Stage::ReadStart;
            return Next::Run;
        }
        self.app_stats(t).bytes_read += r.bytes();
        self.threads[t].until = self.copy(&r);
        self.threads[t].stage = Stage::Complete;
        Next::Run
    }

    /// A write: a partial edge page not in the cache is read first (`write_begin`).
    pub(super) fn write_start(&mut self, t: usize) -> Next {
        let r = self.threads[t].op.unwrap();
        let (lo, hi) = Self::span(&r);
        // A partial first or last page not in the cache is read
        // first (write_begin).
        let mut edges = vec![];
        if !r.lba.is_multiple_of(SPP) {
            edges.push(lo);
        }
        if !(r.lba + r.sectors as u64).is_multiple_of(SPP) && (edges.is_empty() || hi - 1 != lo) {
            edges.push(hi - 1);
        }
        let mut ok = true;
        let ino = r.tag;
        for lpn in edges {
            let up = self
                .map
                .get(&lpn)
                .is_some_and(|&i| self.pages[i as usize].flags & (UPTODATE | LOCKED) != 0);
            // A file's page that holds none of its data (a block
            // just allocated to it) is zero-filled, not read
            // (`block_write_begin`); the block device's pages
            // always hold data.
            let holds_data = match file_of(lpn) {
                // A file page holds data where its file system has it on
                // the device (not a hole, not past the end).
                Some((file, index)) => {
                    let mut at = Vec::new();
                    self.app_locate(file, index, 1, &mut at);
                    !at.is_empty()
                }
                None => self.is_device(ino) || self.owner(lpn) == ino,
            };
            if !up && holds_data {
                ok &= self.read_missing(t, lpn, 1, None);
                self.stats.rmw_reads += 1;
            }
            self.wait_page_io_read(t, lpn);
        }
        if !ok {
            self.reclaim_stall(t);
            return Next::Sleep;
        }
        self.threads[t].stage = Stage::WriteDirty;
        Next::Run
    }

    /// A write's pages dirtied (`account_page_dirtied`), then the copy.
    pub(super) fn write_dirty(&mut self, t: usize) -> Next {
        let r = self.threads[t].op.unwrap();
        let (lo, hi) = Self::span(&r);
        for lpn in lo..hi {
            let ino = self.threads[t].ino;
            let Some(i) = self.get_or_insert(lpn, ino) else {
                self.reclaim_stall(t);
                return Next::Sleep;
            };
            if self.pages[i as usize].flags & LOCKED != 0 {
                // A read of the page is in flight: wait for it.
                self.wait_page_io(t, lpn);
                return Next::Sleep;
            }
            self.pages[i as usize].flags |= UPTODATE;
            self.touch(i);
            // `account_page_dirtied`: a page newly dirty counts
            // for the task (`task_dirty_inc` on 2.6.35;
            // `current->nr_dirtied` and `WB_DIRTIED` later).
            let p = &self.pages[i as usize];
            if p.flags & DIRTY == 0 || p.ino != ino {
                let th = &mut self.threads[t];
                if let Some(b) = self.bdp.as_mut() {
                    b.dirtied(&mut th.dirties);
                }
                if let Some(w) = self.ioless.as_mut() {
                    w.dirtied += 1;
                    th.pace.nr_dirtied += 1;
                }
            }
            self.set_dirty(i, ino);
            if !self.is_device(ino) && !self.is_metadata(ino) && file_of(lpn).is_none() {
                self.set_owner(lpn, ino);
            }
        }
        if self.is_metadata(r.tag) {
            // A file system's metadata update: dirtied in
            // memory by the call that made it, at no cost to
            // the thread, and not an application call.
            self.stats.metadata_pages += hi - lo;
            self.returned(t);
            let th = &mut self.threads[t];
            th.op = None;
            th.stage = Stage::Idle;
            return Next::Run;
        }
        self.app_stats(t).bytes_written += r.bytes();
        self.threads[t].until = self.copy(&r);
        self.threads[t].stage = Stage::WriteCopied;
        Next::Run
    }

    /// 2.6.35's `balance_dirty_pages_ratelimited_nr`, once for the call's pages.
    pub(super) fn write_copied_2635(&mut self, t: usize) -> Next {
        // 2.6.35's balance_dirty_pages_ratelimited_nr, once for
        // the call's pages (the kernel checks after each).
        let r = self.threads[t].op.unwrap();
        let (lo, hi) = Self::span(&r);
        let b = self.bdp.as_mut().expect("2.6.35");
        b.since += hi - lo;
        let limit = if b.exceeded { 8 } else { b.ratelimit };
        let th = &mut self.threads[t];
        if b.since >= limit {
            th.bal = Balance {
                chunk: b.since.max(b.ratelimit) * 3 / 2,
                pause: Bdp::first_pause(),
                ..Balance::default()
            };
            b.since = 0;
            th.stage = Stage::Balance;
            th.throttled_since = self.now;
        } else {
            th.stage = Stage::WriteBalanced;
        }
        Next::Run
    }

    /// `balance_dirty_pages`: the writer throttled until its profile lets it go.
    pub(super) fn balance(&mut self, t: usize) -> Next {
        let done = if self.bdp.is_some() {
            self.balance_dirty_pages(t)
        } else {
            self.balance_io_less(t)
        };
        if done {
            let th = &mut self.threads[t];
            if th.bal.over {
                let w = self.now.0 - th.throttled_since.0;
                self.stats.throttled += 1;
                self.stats.throttle_ns += w as u128;
                self.stats.throttle_max_ns = self.stats.throttle_max_ns.max(w);
            }
            th.stage = Stage::WriteBalanced;
        }
        Next::Run
    }

    /// `balance_dirty_pages_ratelimited_flags`: checked once the thread has dirtied `nr_dirtied_pause` pages.
    pub(super) fn write_copied(&mut self, t: usize) -> Next {
        // `balance_dirty_pages_ratelimited_flags`: checked once
        // the thread has dirtied `nr_dirtied_pause` pages (at
        // most 32 KiB of them while the limit is exceeded).
        let exceeded = self.ioless.as_ref().is_some_and(|w| w.exceeded);
        let th = &mut self.threads[t];
        let limit = if exceeded {
            th.pace.nr_dirtied_pause.min(8)
        } else {
            th.pace.nr_dirtied_pause
        };
        if th.pace.nr_dirtied >= limit {
            th.bal = Balance::default();
            th.stage = Stage::Balance;
            th.throttled_since = self.now;
        } else {
            th.stage = Stage::WriteBalanced;
        }
        Next::Run
    }

    /// A write is done with the cache: O_SYNC goes on to sync its pages.
    pub(super) fn write_balanced(&mut self, t: usize) -> Next {
        if let Some(r) = self.threads[t].op.filter(|r| self.locked_write(r)) {
            self.unlock(r.tag, t);
        }
        let th = &mut self.threads[t];
        th.writes += 1;
        th.stage = if self.tenants[th.tenant as usize].io.sync || th.dsync {
            Stage::SyncStart
        } else {
            Stage::Complete
        };
        Next::Run
    }

    /// fsync of the inode, or O_SYNC of the pages just written: the dirty pages written, those under writeback waited for.
    pub(super) fn sync_start(&mut self, t: usize) -> Next {
        // fsync of the inode (a Flush call, fsync=N, end_fsync)
        // or O_SYNC of the pages just written.
        self.threads[t].fs_asked = false;
        self.threads[t].fs_steps.clear();
        self.threads[t].fs_no_flush = false;
        let th = &self.threads[t];
        let ino = th.ino;
        let whole = th.own_fsync || th.op.is_none_or(|r| r.op == IoOp::Flush);
        let reason = if whole { WB_FSYNC } else { WB_SYNC_WRITE };
        let candidates: Vec<u64> = if whole {
            self.inodes
                .get(&ino)
                .map(|n| n.dirty.iter().copied().collect())
                .unwrap_or_default()
        } else {
            let (lo, hi) = Self::span(&th.op.unwrap());
            (lo..hi).collect()
        };
        let mut now_w = Vec::new();
        let mut deferred = Vec::new();
        for &lpn in &candidates {
            if let Some(&i) = self.map.get(&lpn) {
                let f = self.pages[i as usize].flags;
                if f & DIRTY != 0 && f & WRITEBACK == 0 {
                    now_w.push(lpn);
                } else if f & DIRTY != 0 {
                    deferred.push(lpn);
                }
            }
        }
        // Wait for every page under writeback (of the inode, or
        // of the range).
        if whole {
            self.wait_inode_writes(t, ino);
        } else {
            for &lpn in &candidates {
                self.wait_page_io_write(t, lpn);
            }
        }
        self.write_runs(t, ino, &now_w, reason, Some(t), wb_sync(reason));
        self.threads[t].deferred = deferred;
        self.threads[t].stage = Stage::SyncWait;
        Next::Run
    }

    /// fsync's pages written: redirtied pages again, then the file system's steps and the device flush.
    pub(super) fn sync_wait(&mut self, t: usize) -> Next {
        let deferred = std::mem::take(&mut self.threads[t].deferred);
        if deferred.is_empty() {
            let th = &self.threads[t];
            let whole = th.own_fsync || th.op.is_none_or(|r| r.op == IoOp::Flush);
            if whole && !th.fs_asked {
                // The file's data is written: what the file
                // system writes before the flush.
                let ino = th.ino;
                self.threads[t].fs_asked = true;
                let io = self.app_fsync_io(ino);
                self.threads[t].fs_no_flush = io.no_flush;
                let wait = io.wait;
                self.threads[t].fs_steps = Self::fs_steps_of(io);
                if let Some(w) = wait {
                    self.threads[t].commit_wait = w.tid;
                    self.stats.commit_waits += 1;
                }
                let _ = self.poll_commit(self.threads[t].tenant as usize);
            }
            if let Some(step) = self.threads[t].fs_steps.pop_front() {
                self.fs_step(t, step);
                return Next::Run;
            }
            if self.threads[t].commit_wait != 0 {
                // jbd2_log_wait_commit: until the file system's
                // thread has written the transaction.
                self.threads[t].stage = Stage::CommitWait;
                return Next::Run;
            }
            if self.threads[t].fs_no_flush {
                // barrier=0: the file system issues no flush.
                self.threads[t].stage = Stage::Complete;
                return Next::Run;
            }
            let ino = self.threads[t].ino;
            self.submit(t, IoKind::Flush, ino, 0, 0, Some(t), false);
            self.stats.flushes += 1;
            self.threads[t].stage = Stage::Complete;
            return Next::Run;
        }
        let th = &self.threads[t];
        let whole = th.own_fsync || th.op.is_none_or(|r| r.op == IoOp::Flush);
        let reason = if whole { WB_FSYNC } else { WB_SYNC_WRITE };
        let mut now_w = Vec::new();
        let mut again = Vec::new();
        for lpn in deferred {
            if let Some(&i) = self.map.get(&lpn) {
                let f = self.pages[i as usize].flags;
                if f & DIRTY != 0 && f & WRITEBACK == 0 {
                    now_w.push(lpn);
                } else if f & DIRTY != 0 {
                    again.push(lpn);
                    self.wait_page_io_write(t, lpn);
                }
            }
        }
        let ino = self.threads[t].ino;
        self.write_runs(t, ino, &now_w, reason, Some(t), wb_sync(reason));
        self.threads[t].deferred = again;
        Next::Run
    }

    /// Direct I/O: `filemap_write_and_wait_range` of the range first.
    pub(super) fn dio_start(&mut self, t: usize) -> Next {
        // filemap_write_and_wait_range (iomap_dio_rw,
        // 2.6.35's generic_file_aio_write / _read): the
        // range's dirty pages written back, those under I/O
        // waited for.
        let r = self.threads[t].op.unwrap();
        let (lo, hi) = Self::span(&r);
        let now_w = self.dirty_to_write(t, lo..hi, true);
        self.write_runs(t, r.tag, &now_w, WB_SYNC_WRITE, Some(t), true);
        self.threads[t].stage = Stage::DioSubmit;
        Next::Run
    }

    /// Direct I/O: the cached copies invalidated and the request submitted.
    pub(super) fn dio_submit(&mut self, t: usize) -> Next {
        let r = self.threads[t].op.unwrap();
        let (lo, hi) = Self::span(&r);
        if r.op == IoOp::Write {
            // kiocb_invalidate_pages: the cached copies of the
            // range leave the cache, the device's are newer.
            for lpn in lo..hi {
                if let Some(&i) = self.map.get(&lpn) {
                    if self.pages[i as usize].flags & (DIRTY | WRITEBACK | LOCKED) == 0 {
                        self.remove_page(i);
                    }
                }
            }
            self.app_stats(t).bytes_written += r.bytes();
            self.app_stats(t).dio_written += r.bytes();
            if self.locked_write(&r) {
                self.unlock(r.tag, t);
            }
            self.threads[t].writes += 1;
        } else {
            self.app_stats(t).bytes_read += r.bytes();
            self.app_stats(t).dio_read += r.bytes();
        }
        self.submit_direct(t, &r);
        // O_DSYNC as well (oltp's log writes): once the write
        // is done, generic_write_sync of the range, the
        // device flush.
        let th = &mut self.threads[t];
        th.stage = if r.op == IoOp::Write && (self.tenants[th.tenant as usize].io.sync || th.dsync)
        {
            Stage::SyncStart
        } else {
            Stage::Complete
        };
        Next::Run
    }

    /// The transaction a fsync waited for is on disk.
    pub(super) fn commit_wait(&mut self, t: usize) -> Next {
        self.threads[t].commit_wait = 0;
        if std::mem::take(&mut self.threads[t].await_only) {
            // A writer's wait for the file system's thread (room made
            // for its data): the wait is over, not a call.
            self.returned(t);
            let th = &mut self.threads[t];
            th.op = None;
            th.stage = Stage::Idle;
            return Next::Run;
        }
        // The transaction is on disk: the fsync ends as it
        // would have after a commit of its own.
        self.threads[t].stage = Stage::SyncWait;
        Next::Run
    }

    /// The journal thread's commit: its steps, then the fsyncs waiting for it go on.
    pub(super) fn commit_run(&mut self, t: usize) -> Next {
        if !self.threads[t].fs_asked {
            // kjournald2 takes the transaction asked for and
            // writes it: its ordered data, log and commit block,
            // then the commit block's flush (FUA) with barriers.
            self.threads[t].fs_asked = true;
            if let Some(mut io) = self.app_commit_io(self.threads[t].tenant as usize) {
                let no_flush = io.no_flush;
                // Zones the commit emptied are reset once it is on disk.
                let resets = std::mem::take(&mut io.resets);
                let mut steps = Self::fs_steps_of(io);
                if !no_flush {
                    steps.push_back(FsStep::Flush);
                }
                if !resets.is_empty() {
                    steps.push_back(FsStep::Reset(resets));
                }
                self.threads[t].fs_steps = steps;
            }
        }
        if let Some(step) = self.threads[t].fs_steps.pop_front() {
            self.fs_step(t, step);
            return Next::Run;
        }
        // The commit is on disk: the fsyncs waiting for it go
        // on (`wake_up(&journal->j_wait_done_commit)`).
        let k = self.threads[t].tenant as usize;
        self.tenants[k].app.commit_done(self.now);
        self.stats.commits += 1;
        for u in 1..self.threads.len() {
            if self.threads[u].stage == Stage::CommitWait {
                self.ready.insert(u);
            }
        }
        self.returned(t);
        let th = &mut self.threads[t];
        th.fs_asked = false;
        th.op = None;
        th.stage = Stage::Idle;
        Next::Run
    }

    /// A file system's own I/O, submitted at once.
    pub(super) fn direct_start(&mut self, t: usize) -> Next {
        let r = self.threads[t].op.unwrap();
        let (lo, hi) = Self::span(&r);
        let kind = match r.op {
            IoOp::Read => IoKind::Read,
            IoOp::Write => IoKind::Write,
            IoOp::Trim => IoKind::Trim,
            IoOp::Flush => {
                self.stats.fs_flushes += 1;
                self.stats.flushes += 1;
                IoKind::Flush
            }
            op => IoKind::Zone(op),
        };
        let fs = self.own_ino(t, FS_INO);
        self.submit(t, kind, fs, lo, (hi - lo) as u32, Some(t), r.sync);
        self.threads[t].stage = Stage::DirectDone;
        Next::Run
    }

    /// A file system's own I/O is done (not an application call).
    pub(super) fn direct_done(&mut self, t: usize) -> Next {
        // Not an application call: no latency recorded.
        self.returned(t);
        let th = &mut self.threads[t];
        th.op = None;
        th.stage = Stage::Idle;
        Next::Run
    }

    /// A discard: the range's page I/O waited for.
    pub(super) fn trim_start(&mut self, t: usize) -> Next {
        let r = self.threads[t].op.unwrap();
        self.app_stats(t).bytes_trimmed += r.bytes();
        let (lo, hi) = Self::span(&r);
        for lpn in lo..hi {
            self.wait_page_io(t, lpn);
        }
        self.threads[t].stage = Stage::TrimDrop;
        Next::Run
    }

    /// A discard: whole pages leave the cache and the trim is sent.
    pub(super) fn trim_drop(&mut self, t: usize) -> Next {
        let r = self.threads[t].op.unwrap();
        let (lo, hi) = Self::span(&r);
        if self.pages_busy(lo, hi) {
            for lpn in lo..hi {
                self.wait_page_io(t, lpn);
            }
            return Next::Run;
        }
        // Whole pages only leave the cache; partial ones keep
        // their (stale) data, as truncate_inode_pages_range zeroes
        // them.
        let (flo, fhi) = (r.lba.div_ceil(SPP), (r.lba + r.sectors as u64) / SPP);
        for lpn in flo..fhi {
            if let Some(&i) = self.map.get(&lpn) {
                self.clear_dirty(i);
                self.remove_page(i);
            }
        }
        // The trim itself, sector-exact, as the call gave it.
        let tag = self.new_tag();
        self.ios.insert(
            tag,
            Io {
                kind: IoKind::Trim,
                ino: r.tag,
                lpn: lo,
                n: 0,
                more: Vec::new(),
                submitter: t as u32,
                waiters: vec![t as u32],
            },
        );
        self.threads[t].waits += 1;
        let stream = self.threads[t].stream;
        let trim = HostRequest {
            arrival: self.now,
            tag,
            stream,
            ..r
        };
        self.out_push(t, trim);
        self.stats.trims += 1;
        self.threads[t].stage = Stage::Complete;
        Next::Run
    }

    /// Unlink (`evict` -> `truncate_inode_pages_final`): every page of the file leaves the cache.
    pub(super) fn unlink(&mut self, t: usize) -> Next {
        // evict -> truncate_inode_pages_final (mm/truncate.c):
        // the file's last reference is gone, and every page of
        // its mapping leaves the cache. Taken with the file's
        // lock once the calls on it that came before are done
        // (`runnable`): the writes before the unlink have
        // dirtied their pages, none after it has begun.
        let ino = self.threads[t].op.unwrap().tag;
        self.stats.unlinks += 1;
        let busy = self.unlink_pages(t, ino);
        self.stats.unlink_waited_pages += busy.len() as u64;
        self.threads[t].deferred = busy;
        self.threads[t].stage = Stage::UnlinkWait;
        Next::Run
    }

    /// Unlink: pages under I/O dropped once their I/O is done.
    pub(super) fn unlink_wait(&mut self, t: usize) -> Next {
        let ino = self.threads[t].op.unwrap().tag;
        let mut again = Vec::new();
        for lpn in std::mem::take(&mut self.threads[t].deferred) {
            // A page written meanwhile by another file (a block
            // the file system gave it) is that file's now.
            let Some(&i) = self.map.get(&lpn) else {
                continue;
            };
            if self.pages[i as usize].ino == ino && !self.unlink_page(t, i) {
                again.push(lpn);
            }
        }
        if !again.is_empty() {
            self.threads[t].deferred = again;
            return Next::Run;
        }
        if self.is_file(ino) {
            self.unlock(ino, t);
            // The inode is gone: a new file of the same number
            // starts writeback from its first page.
            if self
                .inodes
                .get(&ino)
                .is_some_and(|n| n.first == NONE && n.dirty.is_empty())
            {
                self.inodes.remove(&ino);
            }
        }
        // Not an application call: no latency recorded.
        self.returned(t);
        let th = &mut self.threads[t];
        th.op = None;
        th.stage = Stage::Idle;
        Next::Run
    }

    /// A call is done: its latency recorded, and fio's `fsync=N` started when due.
    pub(super) fn complete(&mut self, t: usize) -> Next {
        let th = &mut self.threads[t];
        // A call in pieces is timed from its first piece's start.
        let since = if th.op.is_some() {
            th.call_started
        } else {
            th.started
        };
        let lat = self.now.0 - since.0;
        let kind = match th.op {
            Some(r) => match r.op {
                IoOp::Read => 0,
                IoOp::Write | IoOp::ZoneAppend => 1,
                IoOp::Trim => 2,
                // Flushes, and zone commands with them among the others.
                IoOp::Flush
                | IoOp::ZoneReset
                | IoOp::ZoneFinish
                | IoOp::ZoneOpen
                | IoOp::ZoneClose => 3,
            },
            // fio's fsync=N or end_fsync: a call of the thread's own.
            None => 3,
        };
        let (op, in_call, seq, writes) = (th.op, th.in_call, th.seq, th.writes);
        // A piece more pieces of its call follow is not a call.
        let now = self.now;
        let k = self.threads[t].tenant as usize;
        let te = &mut self.tenants[k];
        if !(op.is_some() && in_call) {
            te.stats.lat[kind].record(lat);
            te.stats.calls_ns += lat as u128;
        }
        te.stats.last_end = now;
        let io = te.io;
        if op.is_some() {
            self.returned(t);
        }
        let done = op.map(|r| (r.tag, seq));
        self.stats.last_end = now;
        let fsync_due = kind == 1 && io.fsync > 0 && !io.sync && writes.is_multiple_of(io.fsync);
        let th = &mut self.threads[t];
        th.op = None;
        th.own_fsync = fsync_due;
        if fsync_due {
            th.started = self.now;
            th.deferred.clear();
            th.stage = Stage::SyncStart;
            self.threads[t].until = self.call_entry(IoOp::Flush);
        } else {
            th.stage = Stage::Idle;
        }
        if let Some((ino, seq)) = done {
            self.call_done(ino, seq);
        }
        Next::Run
    }
}
