//! The flusher (background and kupdate writeback) and the writers'
//! `balance_dirty_pages` of each kernel profile ([`crate::dirty`]).

use super::*;

impl<S: AppSource> PageCache<S> {
    /// The flusher's next chunk, if it is awake, has nothing queued and has
    /// work.
    pub(super) fn flusher_step(&mut self) {
        // The periodic wakeup is taken when due, busy or not (a busy
        // flusher does the kupdate pass after its current work).
        if let Some(t) = self.next_periodic {
            if t <= self.now {
                self.kupdate = true;
                self.next_periodic = if self.nr_dirty == 0 {
                    None
                } else {
                    Some(self.now + self.period())
                };
            }
        }
        if self.asleep[0]
            || !self.outbox[0].is_empty()
            || self.flusher_stalled
            || self.zone_held_flusher > 0
        {
            return;
        }
        if self.app_finished() {
            return;
        }
        let reclaim = !self.reclaim_waiters.is_empty() && self.nr_dirty > 0;
        let expire = self.expire();
        let reason = if self.flusher_bg && (self.nr_dirty > self.plan.background_pages || reclaim) {
            WB_BACKGROUND
        } else {
            self.flusher_bg = false;
            let expired = self
                .b_dirty
                .first()
                .is_some_and(|&(w, _)| w + expire <= self.now);
            if self.kupdate && expired {
                WB_PERIODIC
            } else {
                self.kupdate = false;
                return;
            }
        };
        if self.writeback_pass(0, reason, MAX_WRITEBACK_PAGES) == 0 {
            self.flusher_stalled = true;
        }
    }

    /// One writeback pass (one plug) from submitter `sub` (the flusher, or
    /// a writer in 2.6.35's `balance_dirty_pages`): files oldest-dirtied
    /// first, each from its cursor (wrapping, skipping pages under
    /// writeback), until `limit` pages are written; a kupdate pass takes
    /// expired files only. A file left dirty keeps its place (its
    /// dirtied_when). Returns the pages written.
    pub(super) fn writeback_pass(&mut self, sub: usize, reason: usize, limit: usize) -> usize {
        let expire = self.expire();
        let files: Vec<(SimTime, u32)> = self.b_dirty.iter().take(limit).copied().collect();
        let mut total = 0;
        for (w, ino) in files {
            if reason == WB_PERIODIC && w + expire > self.now {
                break;
            }
            if !self.app_background_writeback(ino) {
                // `nilfs_writepages` with WB_SYNC_NONE: nothing written.
                continue;
            }
            let node = &self.inodes[&ino];
            let from = node.cursor;
            let room = limit - total;
            let mut chunk = Vec::new();
            for &lpn in node.dirty.range(from..).chain(node.dirty.range(..from)) {
                if chunk.len() >= room {
                    break;
                }
                let i = self.map[&lpn];
                if self.pages[i as usize].flags & WRITEBACK == 0 {
                    chunk.push(lpn);
                }
            }
            if chunk.is_empty() {
                continue;
            }
            // Ascending from the cursor: the part before the wrap, then
            // the part after it.
            let last = *chunk.last().unwrap();
            let split = chunk.iter().position(|&l| l < from).unwrap_or(chunk.len());
            let (a, b) = chunk.split_at(split);
            self.write_runs(sub, ino, a, reason, None, wb_sync(reason));
            self.write_runs(sub, ino, b, reason, None, wb_sync(reason));
            if let Some(n) = self.inodes.get_mut(&ino) {
                n.cursor = last + 1;
            }
            total += chunk.len();
            if total >= limit {
                break;
            }
        }
        total
    }

    /// One round of a current kernel's `balance_dirty_pages` for writer
    /// `t` ([`IoLess::balance`]); true when it returns, false when it
    /// pauses (`until`). A writer that woke from a pause returns, unless its
    /// rate was 0 (over the limit), when it checks again.
    pub(super) fn balance_io_less(&mut self, t: usize) -> bool {
        let bal = self.threads[t].bal;
        if bal.paused && !bal.again {
            return true;
        }
        let (nr_dirty, used) = (self.nr_dirty(), self.nr_dirty() + self.nr_wb);
        let (thresh, bg) = (self.plan.dirty_pages, self.plan.background_pages);
        let w = self.ioless.as_mut().expect("a current kernel");
        let th = &mut self.threads[t];
        let (d, start_bg) = w.balance(&mut th.pace, self.now, nr_dirty, used, thresh, bg);
        if start_bg {
            self.flusher_bg = true;
        }
        match d {
            Decision::Return => true,
            Decision::Pause { pause, again } => {
                th.bal = Balance {
                    over: true,
                    paused: true,
                    again,
                    ..th.bal
                };
                th.until = th.until.max(self.now) + pause;
                false
            }
        }
    }

    /// One round of 2.6.35's `balance_dirty_pages` for writer `t` (see
    /// [`Bdp`]); true when it returns, false when it pauses (`until`).
    ///
    /// The limit is the device's share of the dirty threshold (all of it:
    /// one device writes) less up to an eighth by the task's share of the
    /// pages dirtied lately (`get_dirty_limits`, `task_dirty_limit`). Under
    /// it, or under the midpoint of the two thresholds globally, it
    /// returns; otherwise it marks the limit exceeded, writes back up to
    /// its chunk itself while dirty pages exceed the limit
    /// (`writeback_inodes_wb`, WB_SYNC_NONE), and returns once under the
    /// limit or its chunk is written, else pauses 1 jiffy, doubling to
    /// 100 ms. On the way out it clears the exceeded mark when under the
    /// limit and starts background writeback above that threshold.
    pub(super) fn balance_dirty_pages(&mut self, t: usize) -> bool {
        let (dirty, bg) = (self.plan.dirty_pages, self.plan.background_pages);
        let b = self.bdp.as_ref().expect("2.6.35");
        let limit = b.task_limit(&mut self.threads[t].dirties, dirty);
        let used = |s: &Self| s.nr_dirty() + s.nr_wb;
        let mut done = used(self) <= limit || used(self) < (bg + dirty) / 2;
        if !done {
            self.bdp.as_mut().expect("2.6.35").exceeded = true;
            self.threads[t].bal.over = true;
            let bal = self.threads[t].bal;
            if self.nr_dirty() > limit && bal.written < bal.chunk {
                let n = self.writeback_pass(t, WB_BALANCE, (bal.chunk - bal.written) as usize);
                self.threads[t].bal.written += n as u64;
            }
            let bal = self.threads[t].bal;
            done = used(self) <= limit || bal.written >= bal.chunk;
            if !done {
                // The pause follows the writeback it submitted.
                let th = &mut self.threads[t];
                th.until = th.until.max(self.now) + bal.pause;
                th.bal.pause = Bdp::next_pause(bal.pause);
                return false;
            }
        }
        if used(self) < limit {
            self.bdp.as_mut().expect("2.6.35").exceeded = false;
        }
        if self.nr_dirty() > bg {
            self.flusher_bg = true;
        }
        true
    }
}
