//! The host front end: pulling requests from the source, plugging, merging,
//! the elevator, the device queue (dispatch) and host completions.

use super::*;

#[derive(Clone, Copy, Debug)]
pub(super) struct HostSlot {
    pub(super) req: HostRequest,
    pub(super) arrival: SimTime,
    /// Next host request merged into the same command.
    pub(super) next: u32,
}

#[derive(Clone, Copy, Debug)]
pub(super) struct Cmd {
    pub(super) sreq: SchedReq,
    /// Gating jobs still running, plus one until the CPU is done.
    pub(super) pending: u32,
    /// First job of this command not yet released (linked through Job::next_release).
    pub(super) jobs: u32,
}

/// `Die::unreported` bits.
pub(super) const XFER: u8 = 1;
pub(super) const OP: u8 = 2;

/// How many host requests the engine reads ahead of the one it issues (see
/// `Simulation::ahead`; a power of two).
pub(super) const AHEAD: usize = 8;

/// The requests read ahead: a fixed ring (index arithmetic is a mask).
#[derive(Debug)]
pub(super) struct Ahead {
    pub(super) buf: [HostRequest; AHEAD],
    pub(super) head: usize,
    pub(super) len: usize,
}
impl Default for Ahead {
    fn default() -> Self {
        let none = HostRequest {
            arrival: SimTime(0),
            op: IoOp::Read,
            lba: 0,
            sectors: 0,
            stream: 0,
            tag: 0,
            sync: false,
        };
        Ahead {
            buf: [none; AHEAD],
            head: 0,
            len: 0,
        }
    }
}
impl Ahead {
    #[inline]
    pub(super) fn pop_front(&mut self) -> Option<HostRequest> {
        (self.len > 0).then(|| {
            let q = self.buf[self.head];
            self.head = (self.head + 1) % AHEAD;
            self.len -= 1;
            q
        })
    }
    #[inline]
    pub(super) fn push_back(&mut self, q: HostRequest) {
        debug_assert!(self.len < AHEAD);
        self.buf[(self.head + self.len) % AHEAD] = q;
        self.len += 1;
    }
    /// The request `i` places ahead (0 = the next one).
    #[inline]
    pub(super) fn get(&self, i: usize) -> Option<&HostRequest> {
        (i < self.len).then(|| &self.buf[(self.head + i) % AHEAD])
    }
}

impl<F: Ftl, S: RequestSource, Q: IoScheduler, O: Observer, H: Hardware> Simulation<F, S, Q, O, H> {
    pub(super) fn issue_next_closed(&mut self) -> bool {
        if self.source_done {
            return false;
        }
        match self.next_from_source() {
            Some(Ok(mut r)) => {
                r.arrival = self.now;
                self.outstanding += 1;
                self.src.submitted(&r);
                self.submit(r);
                true
            }
            Some(Err(e)) => {
                self.error = Some(e.into());
                self.source_done = true;
                false
            }
            None => {
                self.source_done = true;
                false
            }
        }
    }

    /// The next request of the source (see `ahead`). Each request read ahead
    /// is hinted to the FTL three times as it comes closer: step 2 when it is
    /// read (`AHEAD` requests before its turn), step 1 halfway, step 0 one
    /// request before.
    #[inline]
    pub(super) fn next_from_source(&mut self) -> Option<Result<HostRequest, SourceError>> {
        let r = if let Some(q) = self.ahead.pop_front() {
            Some(Ok(q))
        } else if let Some(end) = self.ahead_end.take() {
            end.map(Err)
        } else {
            self.src.next_request()
        };
        if !matches!(r, Some(Ok(_))) || self.settings.config.sim.time_limit.is_some() {
            return r;
        }
        while self.ahead.len < AHEAD && self.ahead_end.is_none() {
            match self.src.next_request() {
                Some(Ok(q)) => {
                    self.ahead.push_back(q);
                    self.hint(self.ahead.len - 1, 2);
                }
                None => self.ahead_end = Some(None),
                Some(Err(e)) => self.ahead_end = Some(Some(e)),
            }
        }
        self.hint(AHEAD / 2 - 1, 1);
        self.hint(0, 0);
        r
    }

    /// Prefetch hint `step` for the request `i` places ahead, if any.
    #[inline(always)]
    pub(super) fn hint(&self, i: usize, step: u8) {
        if let Some(q) = self.ahead.get(i) {
            let lpn = Lpn(self.consts.div_page.quot(q.lba * SECTOR));
            match (q.op, step) {
                (IoOp::Write, _) | (_, 2) => self.ftl.prefetch(lpn, q.op == IoOp::Write, step),
                (IoOp::Read, 1) => {
                    // The entry is cached by now: a read's flash transaction
                    // will look up its block's execution and array state.
                    if let Some(p) = self.ftl.lookup(lpn) {
                        let (b, _) = self.flash.split(p);
                        if let Some(x) = self.blk.get(b as usize) {
                            crate::ftl::prefetch_read(x);
                        }
                        self.flash.prefetch_block(b);
                    }
                }
                _ => {}
            }
        }
    }

    pub(super) fn pull_open(&mut self) {
        match self.next_from_source() {
            Some(Ok(r)) if r.arrival > SimTime::MAX_ARRIVAL => {
                self.error = Some(SimError::TimeRange { arrival: r.arrival });
                self.source_done = true;
            }
            Some(Ok(mut r)) => {
                if r.arrival < self.now {
                    r.arrival = self.now;
                    *self.notes_mut("arrivals_out_of_order_clamped") += 1;
                }
                self.q.push(r.arrival, Ev::Arrival);
                self.pending = Some(r);
            }
            Some(Err(e)) => {
                self.error = Some(e.into());
                self.source_done = true;
            }
            None => self.source_done = true,
        }
    }

    pub(super) fn notes_mut(&mut self, k: &'static str) -> &mut u64 {
        self.notes.entry(k).or_insert(0)
    }

    pub(super) fn on_arrival(&mut self) {
        // Only the pending request's own arrival submits it: one booked before
        // a `restart` (the run was cut by its time limit) is stale.
        let Some(r) = self.pending.take_if(|r| r.arrival <= self.now) else {
            return;
        };
        self.submit(r);
        self.pull_open();
        self.try_dispatch();
    }

    /// Hand host request `r` to the block layer. True if its submitter
    /// sleeps on `nr_requests` (it is queued in `blocked`).
    pub(super) fn submit(&mut self, r: HostRequest) -> bool {
        let end = r.lba + r.sectors as u64;
        if end > self.max_lba || (r.sectors == 0 && r.op != IoOp::Flush) {
            self.error = Some(SimError::OutOfRange {
                lba: r.lba,
                sectors: r.sectors,
                capacity_sectors: self.max_lba,
            });
            self.source_done = true;
            return false;
        }
        let id = self.hosts.insert(HostSlot {
            req: r,
            arrival: r.arrival,
            next: NONE,
        });
        // A request is allocated before it is plugged or queued; with
        // `nr_requests` taken, the submitter sleeps (Linux's get_request).
        if !self.blocked.is_empty() || self.allocated() >= self.nr_requests {
            self.blocked.push_back(id);
            return true;
        }
        if self.plug_on {
            self.plug(id);
        } else {
            self.elevator_add(id);
        }
        false
    }

    /// A reactive source (the page cache): submit what it has for this
    /// instant, telling it which submitters sleep on `nr_requests`, and book
    /// its timer.
    pub(super) fn pump_host(&mut self) {
        if self.source_done {
            return;
        }
        loop {
            match self.src.poll(self.now) {
                Some(Ok(mut r)) => {
                    r.arrival = self.now;
                    if self.submit(r) {
                        self.src.event(HostEvent::Blocked(r.tag), self.now);
                    }
                    if self.error.is_some() {
                        return;
                    }
                }
                Some(Err(e)) => {
                    self.error = Some(e.into());
                    self.source_done = true;
                    return;
                }
                None => break,
            }
        }
        if self.src.finished() {
            self.source_done = true;
            // The application's last call returned now: the measured phase
            // lasts at least until then (its calls may all have hit the
            // cache).
            self.host_end = self.now;
        } else if let Some(t) = self.src.wake_at() {
            let t = t.max(self.now);
            if self.host_wake.is_none_or(|w| w > t) {
                self.host_wake = Some(t);
                if !self.host_wakes.contains(&t) {
                    self.host_wakes.push(t);
                    self.q.push(t, Ev::HostWake);
                }
            }
        }
        self.try_dispatch();
    }

    /// Requests the block layer holds: plugged, queued in the elevator
    /// (after merging) and in the device.
    #[inline]
    pub(super) fn allocated(&self) -> u32 {
        (self.plugged.len() + self.sched.len()) as u32 + self.dev_inflight
    }

    /// Hold `id` in its submitter's plug until the end of this instant (or
    /// until the stream has `PLUG_MAX` plugged).
    pub(super) fn plug(&mut self, id: u32) {
        self.counters.plugged += 1;
        self.plugged.push(id);
        let stream = self.hosts[id].req.stream;
        let n = self
            .plugged
            .iter()
            .filter(|&&h| self.hosts[h].req.stream == stream)
            .count();
        if n >= PLUG_MAX {
            self.flush_plugs(Some(stream));
        } else if !self.plug_booked {
            self.plug_booked = true;
            self.q.push(self.now, Ev::PlugFlush);
        }
    }

    /// The end of an instant with plugged requests: if the next arrival is
    /// at this same instant, it goes first (it may join a plug).
    pub(super) fn on_plug_flush(&mut self) {
        self.plug_booked = false;
        if self.plugged.is_empty() {
            return;
        }
        if self.pending.is_some_and(|r| r.arrival <= self.now) {
            self.plug_booked = true;
            self.q.push(self.now, Ev::PlugFlush);
            return;
        }
        self.flush_plugs(None);
        self.try_dispatch();
    }

    /// Insert the plugged requests of `stream` (all streams: None) into the
    /// elevator, by stream and then by sector, as Linux's flush_plug_list
    /// sorts a plug list before it inserts it.
    pub(super) fn flush_plugs(&mut self, stream: Option<u32>) {
        let mut list = std::mem::take(&mut self.plugged);
        let hosts = &self.hosts;
        let key = |h: &u32| {
            let r = &hosts[*h].req;
            (r.stream, r.lba)
        };
        list.sort_by_key(key);
        let mut keep = Vec::new();
        let mut flushed = false;
        for &h in &list {
            if stream.is_some_and(|s| self.hosts[h].req.stream != s) {
                keep.push(h);
            } else {
                flushed = true;
                self.elevator_add(h);
            }
        }
        if flushed {
            self.counters.plug_flushes += 1;
        }
        keep.sort_unstable_by_key(|&h| self.hosts[h].arrival);
        self.plugged = keep;
    }

    /// Hand host request `id` to the elevator (which may merge it).
    pub(super) fn elevator_add(&mut self, id: u32) {
        self.note_queue_len();
        let r = self.hosts[id].req;
        let sr = SchedReq {
            id,
            op: r.op,
            lba: r.lba,
            sectors: r.sectors,
            arrival: r.arrival,
            stream: r.stream,
            sync: r.sync,
        };
        self.merged.clear();
        self.sched.add(sr, self.now, &mut self.merged);
        let len = self.sched.len() as u64;
        if len > self.counters.qd_max {
            self.counters.qd_max = len;
        }
        for i in 0..self.merged.len() {
            let (kept, absorbed) = self.merged[i];
            let kn = self.hosts[kept].next;
            self.hosts[absorbed].next = kn;
            self.hosts[kept].next = absorbed;
            self.counters.merged += 1;
        }
    }

    /// Submitters asleep on `nr_requests` get their requests as completions
    /// free them, in the order they fell asleep.
    pub(super) fn wake_blocked(&mut self) {
        while let Some(&id) = self.blocked.front() {
            if self.allocated() >= self.nr_requests {
                break;
            }
            self.blocked.pop_front();
            if self.timing == Timing::Reactive {
                self.src
                    .event(HostEvent::Admitted(self.hosts[id].req.tag), self.now);
            }
            let waited = self.now.0 - self.hosts[id].arrival.0;
            let k = &mut self.counters;
            k.blocked += 1;
            k.blocked_ns += waited as u128;
            k.max_blocked_ns = k.max_blocked_ns.max(waited);
            self.elevator_add(id);
        }
    }

    /// The elevator's queue length is about to change: book the stretch it
    /// had since the last change (time at length 0 is what the others leave
    /// of the measured phase).
    #[inline]
    pub(super) fn note_queue_len(&mut self) {
        let len = self.sched.len() as u64;
        if len != 0 {
            let dt = self.now.0.saturating_sub(self.qd_since.0);
            if dt != 0 {
                let k = &mut self.counters;
                k.qd_area += len as u128 * dt as u128;
                k.qd_hist[qd_bucket(len)] += dt;
            }
        }
        self.qd_since = self.now;
    }

    pub(super) fn try_dispatch(&mut self) {
        let mut n = 0u64;
        while self.dev_inflight < self.qd {
            if n == 0 {
                self.note_queue_len();
            }
            match self.sched.dispatch(self.now) {
                Some(r) => {
                    n += 1;
                    self.start_cmd(r)
                }
                None => break,
            }
        }
        if n > 0 {
            let k = &mut self.counters;
            k.dispatch_batches += 1;
            k.max_batch = k.max_batch.max(n);
        }
        if !self.sched.is_empty() && self.dev_inflight < self.qd {
            if let Some(t) = self.sched.wake_at() {
                let t = t.max(self.now);
                if self.wake_pending.is_none_or(|w| w > t) {
                    self.wake_pending = Some(t);
                    self.q.push(t, Ev::SchedWake);
                }
            }
        }
    }

    // -------------------------------------------------------- controller

    pub(super) fn complete_cmd(&mut self, c: u32) {
        let now = self.now;
        let r = self.cmds[c].sreq;
        self.cmds.remove(c);
        let mut h = r.id;
        while h != NONE {
            let slot = self.hosts[h];
            let req = slot.req;
            let lat = now.0 - slot.arrival.0;
            self.lat.record(req.op, lat);
            let k = &mut self.counters;
            k.requests += 1;
            match req.op {
                IoOp::Read => {
                    k.reads += 1;
                    k.bytes_read += req.bytes();
                }
                IoOp::Write => {
                    k.writes += 1;
                    k.bytes_written += req.bytes();
                }
                IoOp::Trim => k.trims += 1,
                IoOp::Flush => k.flushes += 1,
            }
            self.obs
                .request_done(req.op, req.bytes(), slot.arrival, now);
            self.hosts.remove(h);
            h = slot.next;
            match self.timing {
                Timing::ClosedLoop { .. } => self.outstanding -= 1,
                Timing::Reactive => self.src.event(HostEvent::Completed(req.tag), now),
                Timing::OpenLoop => {}
            }
        }
        self.last_done = now;
        self.sched.completed(&r, now);
        self.dev_inflight -= 1;
        if !self.blocked.is_empty() {
            self.wake_blocked();
        }
        if self.dev_inflight == 0 {
            self.obs.io_active(self.active_since, now);
            self.idle_since = now;
        }
        match self.timing {
            Timing::ClosedLoop { depth } => {
                while self.outstanding < depth && self.issue_next_closed() {}
            }
            Timing::Reactive => self.pump_host(),
            Timing::OpenLoop => {}
        }
        self.try_dispatch();
        self.maybe_background();
    }
}
