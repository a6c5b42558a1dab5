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
/// `Front::ahead`; a power of two).
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
            placement: crate::workload::Placement::NONE,
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

/// The host front end's state: the host requests the block layer holds
/// (plugged, blocked, in the elevator or in the device), the device
/// queue's commands, the source's requests read ahead or waiting for their
/// arrival, and its timers. Owned by this file; the controller reads the
/// device queue's occupancy (`dev_inflight`, `active_since`, `idle_since`).
pub(super) struct Front {
    /// The host requests in flight (merged ones chained through `next`).
    pub(super) hosts: Slab<HostSlot>,
    /// The device queue's commands (one per dispatched request).
    pub(super) cmds: Slab<Cmd>,
    /// Commands in the device the zones refused ([`crate::ftl::FtlCtx::status`]):
    /// they complete as failed. Rare (zoned drives only), so kept apart
    /// from `Cmd`, which every command carries.
    pub(super) failed: Vec<u32>,
    /// Commands in the device, and the most it takes (`host.queue_depth`).
    pub(super) dev_inflight: u32,
    pub(super) qd: u32,
    /// The source's timing, and (closed loop) its requests in flight.
    pub(super) timing: Timing,
    pub(super) outstanding: u32,
    /// The source has ended (or failed: `error`).
    pub(super) source_done: bool,
    /// An open-loop request waiting for its arrival time.
    pub(super) pending: Option<HostRequest>,
    /// The source's next `AHEAD` requests, fetched ahead so that the FTL can
    /// prefetch, in steps, what each will touch (not with a time limit: the
    /// source must not run ahead of what the run consumes)...
    pub(super) ahead: Ahead,
    /// ... and what the source gave after them, once it ended (`Some(None)`)
    /// or failed (`Some(Some(error))`).
    pub(super) ahead_end: Option<Option<SourceError>>,
    /// Scratch of `elevator_add`: the merges the scheduler reports.
    pub(super) merged: Vec<(u32, u32)>,
    /// Block layer: requests it may hold at once (`sched.nr_requests`), the
    /// submitters asleep until one frees (host request ids, in arrival
    /// order, each with the tags its kind may find taken:
    /// [`IoScheduler::limit_depth`]), whether open-loop bursts are plugged, the requests plugged
    /// now, and whether a `PlugFlush` is booked.
    pub(super) nr_requests: u32,
    pub(super) blocked: VecDeque<(u32, u32)>,
    pub(super) plug_on: bool,
    pub(super) plugged: Vec<u32>,
    pub(super) plug_booked: bool,
    /// Start of the current stretch of the elevator's queue length (its
    /// time-weighted distribution is in `counters`).
    pub(super) qd_since: SimTime,
    /// Start of the device's current busy period, and end of its last one.
    pub(super) active_since: SimTime,
    pub(super) idle_since: SimTime,
    /// The scheduler's booked `SchedWake`.
    pub(super) wake_pending: Option<SimTime>,
    /// A reactive source's booked timer, and when it finished.
    pub(super) host_wake: Option<SimTime>,
    /// The times of the `HostWake` events in the queue, each once: a timer
    /// booked again for a time already queued (a source that wakes early,
    /// then asks for its far timer again) adds no event, so stale far
    /// timers do not pile up in the queue.
    pub(super) host_wakes: Vec<SimTime>,
    pub(super) host_end: SimTime,
    /// The error the run ends with.
    pub(super) error: Option<SimError>,
    /// The drive's logical capacity in sectors.
    pub(super) max_lba: u64,
    /// Zone write plugging on a zoned drive (None on any other).
    pub(super) zone_plugs: Option<Box<ZonePlugs>>,
    /// The source has been told the drive's zones (`RequestSource::zones`,
    /// once, at the first `run`).
    pub(super) zones_told: bool,
}

/// Linux's zone write plugging (block/blk-zoned.c, `blk_zone_plug_bio` and
/// `blk_zone_write_plug_finish_request`, since 6.10; mq-deadline's zone
/// write lock did the same before it, `dd_dispatch_request` taking only
/// writes to unlocked zones): a write to a sequential zone goes to the
/// device only while no other write to that zone is there; later ones
/// wait in the zone's plug in submission order, before the block layer
/// allocates them a request, and the completion of the write in flight
/// submits the next. So writes reach a zone in the order they were
/// issued, whatever the elevator and the device queue do. Zone appends
/// and reads are not plugged (a native zone append needs no order).
pub(super) struct ZonePlugs {
    /// Sectors per zone.
    pub(super) zone_sectors: u64,
    /// The conventional zones at the start (no write pointer, no plug).
    pub(super) conventional: u64,
    /// Per zone: a write is in the device.
    pub(super) busy: Vec<bool>,
    /// Per zone with writes waiting: those writes, oldest first.
    pub(super) waiting: std::collections::BTreeMap<u64, VecDeque<HostRequest>>,
}

impl ZonePlugs {
    /// The sequential zone a plain write goes to, if any.
    #[inline]
    fn zone_of(&self, r: &HostRequest) -> Option<u64> {
        let z = r.lba / self.zone_sectors;
        (r.op == IoOp::Write && z >= self.conventional).then_some(z)
    }
}

impl Front {
    pub(super) fn new(settings: &Settings, timing: Timing) -> Front {
        Front {
            hosts: Slab::default(),
            cmds: Slab::default(),
            failed: Vec::new(),
            dev_inflight: 0,
            qd: settings.config.host.queue_depth,
            timing,
            outstanding: 0,
            source_done: false,
            pending: None,
            ahead: Ahead::default(),
            ahead_end: None,
            merged: Vec::new(),
            nr_requests: settings.block.nr_requests,
            blocked: VecDeque::new(),
            plug_on: settings.block.plug && !matches!(timing, Timing::ClosedLoop { .. }),
            plugged: Vec::new(),
            plug_booked: false,
            qd_since: SimTime::ZERO,
            active_since: SimTime::ZERO,
            idle_since: SimTime::ZERO,
            wake_pending: None,
            host_wake: None,
            host_wakes: Vec::new(),
            host_end: SimTime::ZERO,
            error: None,
            max_lba: settings.logical_bytes() / SECTOR,
            zone_plugs: settings.zone_layout().map(|l| {
                let sectors = l.size * (settings.geometry.page_size as u64 / SECTOR);
                Box::new(ZonePlugs {
                    zone_sectors: sectors,
                    conventional: l.conventional,
                    busy: vec![false; l.zones as usize],
                    waiting: Default::default(),
                })
            }),
            zones_told: false,
        }
    }

    /// A new source of timing `timing` (`Simulation::restart`): what was
    /// read ahead of the old one is dropped; the requests in flight stay
    /// (a closed loop counts them against its depth).
    pub(super) fn restart(&mut self, timing: Timing, plug: bool) {
        self.timing = timing;
        self.source_done = false;
        self.pending = None;
        self.ahead = Ahead::default();
        self.ahead_end = None;
        self.outstanding = self.hosts.live;
        self.plug_on = plug && !matches!(timing, Timing::ClosedLoop { .. });
        self.host_wake = None;
    }

    /// The source failed: the run ends with `e`.
    #[inline]
    pub(super) fn fail(&mut self, e: SimError) {
        self.error = Some(e);
        self.source_done = true;
    }

    /// The source has ended and every request it gave has completed.
    #[inline]
    pub(super) fn all_done(&self) -> bool {
        self.source_done && self.hosts.live == 0 && self.pending.is_none()
    }

    /// What the source has handed over and is not done: in flight, read
    /// ahead, or waiting for its arrival time.
    pub(super) fn handed(&self) -> u64 {
        self.hosts.live as u64 + self.ahead.len as u64 + self.pending.is_some() as u64
    }

    /// A reactive source asks to be woken at `t`: whether that needs a new
    /// `HostWake` event (none is queued for `t` yet).
    #[inline]
    pub(super) fn book_wake(&mut self, t: SimTime) -> bool {
        if self.host_wake.is_none_or(|w| w > t) {
            self.host_wake = Some(t);
            if !self.host_wakes.contains(&t) {
                self.host_wakes.push(t);
                return true;
            }
        }
        false
    }

    /// A `HostWake` event at `t` is popped: whether it is an instant of the
    /// run (not the timer of a host that has finished, nor one re-booked
    /// earlier).
    #[inline]
    pub(super) fn wake_due(&mut self, t: SimTime) -> bool {
        if let Some(i) = self.host_wakes.iter().position(|&w| w == t) {
            self.host_wakes.swap_remove(i);
        }
        !self.source_done && self.host_wake == Some(t)
    }
}

impl<F: Ftl, S: RequestSource, Q: IoScheduler, O: Observer, H: Hardware> Simulation<F, S, Q, O, H> {
    pub(super) fn issue_next_closed(&mut self) -> bool {
        if self.front.source_done {
            return false;
        }
        match self.next_from_source() {
            Some(Ok(mut r)) => {
                r.arrival = self.now;
                self.front.outstanding += 1;
                self.src.submitted(&r);
                self.submit(r);
                true
            }
            Some(Err(e)) => {
                self.front.fail(e.into());
                false
            }
            None => {
                self.front.source_done = true;
                false
            }
        }
    }

    /// The next request of the source (see `Front::ahead`). Each request read ahead
    /// is hinted to the FTL three times as it comes closer: step 2 when it is
    /// read (`AHEAD` requests before its turn), step 1 halfway, step 0 one
    /// request before.
    #[inline]
    pub(super) fn next_from_source(&mut self) -> Option<Result<HostRequest, SourceError>> {
        let r = if let Some(q) = self.front.ahead.pop_front() {
            Some(Ok(q))
        } else if let Some(end) = self.front.ahead_end.take() {
            end.map(Err)
        } else {
            self.src.next_request()
        };
        if !matches!(r, Some(Ok(_))) || self.settings.config.sim.time_limit.is_some() {
            return r;
        }
        while self.front.ahead.len < AHEAD && self.front.ahead_end.is_none() {
            match self.src.next_request() {
                Some(Ok(q)) => {
                    self.front.ahead.push_back(q);
                    self.hint(self.front.ahead.len - 1, 2);
                }
                None => self.front.ahead_end = Some(None),
                Some(Err(e)) => self.front.ahead_end = Some(Some(e)),
            }
        }
        self.hint(AHEAD / 2 - 1, 1);
        self.hint(0, 0);
        r
    }

    /// Prefetch hint `step` for the request `i` places ahead, if any.
    #[inline(always)]
    pub(super) fn hint(&self, i: usize, step: u8) {
        if let Some(q) = self.front.ahead.get(i) {
            let lpn = Lpn(self.consts.div_page.quot(q.lba * SECTOR));
            match (q.op, step) {
                (IoOp::Write, _) | (_, 2) => self.ftl.prefetch(lpn, q.op == IoOp::Write, step),
                (IoOp::Read, 1) => {
                    // The entry is cached by now: a read's flash transaction
                    // will look up its block's execution and array state.
                    if let Some(p) = self.ftl.lookup(lpn) {
                        let (b, _) = self.flash.split(p);
                        if let Some(x) = self.fl.blk.get(b as usize) {
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
                self.front.fail(SimError::TimeRange { arrival: r.arrival });
            }
            Some(Ok(mut r)) => {
                if r.arrival < self.now {
                    r.arrival = self.now;
                    *self.stats.note("arrivals_out_of_order_clamped") += 1;
                }
                self.q.push(r.arrival, Ev::Arrival);
                self.front.pending = Some(r);
            }
            Some(Err(e)) => {
                self.front.fail(e.into());
            }
            None => self.front.source_done = true,
        }
    }

    pub(super) fn on_arrival(&mut self) {
        // Only the pending request's own arrival submits it: one booked before
        // a `restart` (the run was cut by its time limit) is stale.
        let Some(r) = self.front.pending.take_if(|r| r.arrival <= self.now) else {
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
        let no_data = r.op == IoOp::Flush || r.op.is_zone_mgmt();
        if end > self.front.max_lba
            || (r.sectors == 0 && !no_data)
            || (r.op.is_zone_mgmt() && r.lba >= self.front.max_lba)
        {
            self.front.fail(SimError::OutOfRange {
                lba: r.lba,
                sectors: r.sectors,
                capacity_sectors: self.front.max_lba,
            });
            return false;
        }
        if let Some(zp) = self.front.zone_plugs.as_deref_mut() {
            if let Some(z) = zp.zone_of(&r) {
                if zp.busy[z as usize] {
                    zp.waiting.entry(z).or_default().push_back(r);
                    self.counters.zone_plugged += 1;
                    return false;
                }
                zp.busy[z as usize] = true;
            } else if matches!(r.op, IoOp::ZoneReset | IoOp::ZoneFinish) {
                self.abort_plugged(r.lba);
            }
        }
        self.admit(r)
    }

    /// A zone reset or finish aborts the writes waiting in the zone's plug
    /// (`blk_zone_wplug_handle_reset_or_finish` sets the plug's write
    /// pointer, and `disk_zone_wplug_abort` fails its bios): they complete
    /// now, failed, having reached no device.
    #[cold]
    fn abort_plugged(&mut self, lba: u64) {
        let zp = self.front.zone_plugs.as_deref_mut().expect("zoned");
        let z = lba / zp.zone_sectors;
        let Some(q) = zp.waiting.remove(&z) else {
            return;
        };
        for r in q {
            self.request_finished(&r, r.arrival, true);
            self.tell_finished(r.tag);
        }
    }

    /// The rest of [`Self::submit`], past the zone plugs: a request is
    /// allocated, then plugged or queued in the elevator. Inlined into
    /// `submit`, so a drive without zones pays no call for the split.
    #[inline(always)]
    fn admit(&mut self, r: HostRequest) -> bool {
        let id = self.front.hosts.insert(HostSlot {
            req: r,
            arrival: r.arrival,
            next: NONE,
        });
        // A request is allocated before it is plugged or queued; with
        // `nr_requests` taken, or as many as the scheduler lets its kind
        // find taken, the submitter sleeps (Linux's get_request,
        // `blk_mq_get_tag` with the elevator's `limit_depth`), as it does
        // behind a sleeper of a kind as privileged.
        let limit = self.tag_limit(&r);
        let behind = match self.front.blocked.front() {
            None => false,
            Some(&(_, l)) => l >= limit || self.front.blocked.iter().any(|&(_, l)| l >= limit),
        };
        if behind || self.allocated() >= limit {
            self.front.blocked.push_back((id, limit));
            return true;
        }
        if self.front.plug_on {
            self.plug(id);
        } else {
            self.elevator_add(id);
        }
        false
    }

    /// A write to a sequential zone completed: the zone's next plugged
    /// write, if any, goes on to the block layer now
    /// (`disk_zone_wplug_unplug_bio`); else the zone is free.
    #[cold]
    fn unplug_zone(&mut self, done: &HostRequest) {
        let zp = self.front.zone_plugs.as_deref_mut().expect("zoned");
        let Some(z) = zp.zone_of(done) else { return };
        let next = zp.waiting.get_mut(&z).and_then(|q| q.pop_front());
        if zp.waiting.get(&z).is_some_and(|q| q.is_empty()) {
            zp.waiting.remove(&z);
        }
        match next {
            Some(r) => {
                // Its submitter went on (a plugged bio holds no request):
                // the request is made now; its latency counts from its
                // submission.
                if self.admit(r) && self.front.timing == Timing::Reactive {
                    self.src.event(HostEvent::Blocked(r.tag), self.now);
                }
            }
            None => zp.busy[z as usize] = false,
        }
    }

    /// A reactive source (the page cache): submit what it has for this
    /// instant, telling it which submitters sleep on `nr_requests`, and book
    /// its timer.
    pub(super) fn pump_host(&mut self) {
        if self.front.source_done {
            return;
        }
        loop {
            match self.src.poll(self.now) {
                Some(Ok(mut r)) => {
                    r.arrival = self.now;
                    if self.submit(r) {
                        self.src.event(HostEvent::Blocked(r.tag), self.now);
                    }
                    if self.front.error.is_some() {
                        return;
                    }
                }
                Some(Err(e)) => {
                    self.front.fail(e.into());
                    return;
                }
                None => break,
            }
        }
        if self.src.finished() {
            self.front.source_done = true;
            // The application's last call returned now: the measured phase
            // lasts at least until then (its calls may all have hit the
            // cache).
            self.front.host_end = self.now;
        } else if let Some(t) = self.src.wake_at() {
            let t = t.max(self.now);
            if self.front.book_wake(t) {
                self.q.push(t, Ev::HostWake);
            }
        }
        self.try_dispatch();
    }

    /// The tags request `r` may find taken and still get one:
    /// `nr_requests`, or less where the scheduler limits its kind (never
    /// for a flush: `blk_mq_alloc_request` skips `limit_depth` for them).
    #[inline]
    fn tag_limit(&self, r: &HostRequest) -> u32 {
        if r.op == IoOp::Flush {
            return self.front.nr_requests;
        }
        self.sched
            .limit_depth(r.op, r.sync)
            .min(self.front.nr_requests)
    }

    /// Requests the block layer holds: plugged, queued in the elevator
    /// (after merging) and in the device.
    #[inline]
    pub(super) fn allocated(&self) -> u32 {
        (self.front.plugged.len() + self.sched.len()) as u32 + self.front.dev_inflight
    }

    /// Hold `id` in its submitter's plug until the end of this instant (or
    /// until the stream has `PLUG_MAX` plugged).
    pub(super) fn plug(&mut self, id: u32) {
        self.counters.plugged += 1;
        self.front.plugged.push(id);
        let stream = self.front.hosts[id].req.stream;
        let n = self
            .front
            .plugged
            .iter()
            .filter(|&&h| self.front.hosts[h].req.stream == stream)
            .count();
        if n >= PLUG_MAX {
            self.flush_plugs(Some(stream));
        } else if !self.front.plug_booked {
            self.front.plug_booked = true;
            self.q.push(self.now, Ev::PlugFlush);
        }
    }

    /// The end of an instant with plugged requests: if the next arrival is
    /// at this same instant, it goes first (it may join a plug).
    pub(super) fn on_plug_flush(&mut self) {
        self.front.plug_booked = false;
        if self.front.plugged.is_empty() {
            return;
        }
        if self.front.pending.is_some_and(|r| r.arrival <= self.now) {
            self.front.plug_booked = true;
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
        let mut list = std::mem::take(&mut self.front.plugged);
        let hosts = &self.front.hosts;
        let key = |h: &u32| {
            let r = &hosts[*h].req;
            (r.stream, r.lba)
        };
        list.sort_by_key(key);
        let mut keep = Vec::new();
        let mut flushed = false;
        for &h in &list {
            if stream.is_some_and(|s| self.front.hosts[h].req.stream != s) {
                keep.push(h);
            } else {
                flushed = true;
                self.elevator_add(h);
            }
        }
        if flushed {
            self.counters.plug_flushes += 1;
        }
        keep.sort_unstable_by_key(|&h| self.front.hosts[h].arrival);
        self.front.plugged = keep;
    }

    /// Hand host request `id` to the elevator (which may merge it).
    pub(super) fn elevator_add(&mut self, id: u32) {
        self.note_queue_len();
        let r = self.front.hosts[id].req;
        let sr = SchedReq {
            id,
            op: r.op,
            lba: r.lba,
            sectors: r.sectors,
            arrival: r.arrival,
            stream: r.stream,
            sync: r.sync,
            placement: r.placement,
        };
        self.front.merged.clear();
        self.sched.add(sr, self.now, &mut self.front.merged);
        let len = self.sched.len() as u64;
        if len > self.counters.qd_max {
            self.counters.qd_max = len;
        }
        for i in 0..self.front.merged.len() {
            let (kept, absorbed) = self.front.merged[i];
            let kn = self.front.hosts[kept].next;
            self.front.hosts[absorbed].next = kn;
            self.front.hosts[kept].next = absorbed;
            self.counters.merged += 1;
        }
    }

    /// Submitters asleep on `nr_requests` get their requests as completions
    /// free them, in the order they fell asleep, except that one may pass
    /// sleepers of a less privileged kind (a lower tag limit) ahead of it.
    pub(super) fn wake_blocked(&mut self) {
        let mut i = 0;
        // The highest tag limit among the sleepers left ahead.
        let mut ahead = 0;
        while let Some(&(id, limit)) = self.front.blocked.get(i) {
            if ahead >= self.front.nr_requests {
                break;
            }
            if limit <= ahead || self.allocated() >= limit {
                ahead = ahead.max(limit);
                i += 1;
                continue;
            }
            if i == 0 {
                self.front.blocked.pop_front();
            } else {
                self.front.blocked.remove(i);
            }
            if self.front.timing == Timing::Reactive {
                self.src
                    .event(HostEvent::Admitted(self.front.hosts[id].req.tag), self.now);
            }
            let waited = self.now.0 - self.front.hosts[id].arrival.0;
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
            let dt = self.now.0.saturating_sub(self.front.qd_since.0);
            if dt != 0 {
                let k = &mut self.counters;
                k.qd_area += len as u128 * dt as u128;
                k.qd_hist[qd_bucket(len)] += dt;
            }
        }
        self.front.qd_since = self.now;
    }

    pub(super) fn try_dispatch(&mut self) {
        let mut n = 0u64;
        while self.front.dev_inflight < self.front.qd {
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
        if !self.sched.is_empty() && self.front.dev_inflight < self.front.qd {
            if let Some(t) = self.sched.wake_at() {
                let t = t.max(self.now);
                if self.front.wake_pending.is_none_or(|w| w > t) {
                    self.front.wake_pending = Some(t);
                    self.q.push(t, Ev::SchedWake);
                }
            }
        }
    }

    // -------------------------------------------------------- controller

    /// Host request `req` (arrived at `arrival`) is finished now: its
    /// latency, the counters, the observer. A failed request's bytes were
    /// not moved.
    #[inline(always)]
    fn request_finished(&mut self, req: &HostRequest, arrival: SimTime, failed: bool) {
        let now = self.now;
        self.lat.record(req.op, now.0 - arrival.0);
        let k = &mut self.counters;
        k.requests += 1;
        let bytes = if failed { 0 } else { req.bytes() };
        k.failed += failed as u64;
        match req.op {
            IoOp::Read => {
                k.reads += 1;
                k.bytes_read += bytes;
            }
            IoOp::Write | IoOp::ZoneAppend => {
                k.writes += 1;
                k.bytes_written += bytes;
            }
            IoOp::Trim => {
                k.trims += 1;
                k.bytes_trimmed += bytes;
            }
            IoOp::Flush => k.flushes += 1,
            IoOp::ZoneReset | IoOp::ZoneFinish | IoOp::ZoneOpen | IoOp::ZoneClose => {
                k.zone_mgmt += 1
            }
        }
        self.obs.request_done(req.op, bytes, arrival, now);
    }

    /// The source learns that its request `tag` is finished (a closed
    /// loop's slot frees; a reactive source is told).
    #[inline(always)]
    fn tell_finished(&mut self, tag: u32) {
        match self.front.timing {
            Timing::ClosedLoop { .. } => self.front.outstanding -= 1,
            Timing::Reactive => self.src.event(HostEvent::Completed(tag), self.now),
            Timing::OpenLoop => {}
        }
    }

    pub(super) fn complete_cmd(&mut self, c: u32) {
        let now = self.now;
        let r = self.front.cmds[c].sreq;
        self.front.cmds.remove(c);
        let failed = !self.front.failed.is_empty() && {
            let i = self.front.failed.iter().position(|&f| f == c);
            i.map(|i| self.front.failed.swap_remove(i)).is_some()
        };
        let mut h = r.id;
        while h != NONE {
            let slot = self.front.hosts[h];
            let req = slot.req;
            self.request_finished(&req, slot.arrival, failed);
            if self.front.zone_plugs.is_some() {
                self.unplug_zone(&req);
            }
            self.front.hosts.remove(h);
            h = slot.next;
            self.tell_finished(req.tag);
        }
        self.stats.last_done = now;
        self.sched.completed(&r, now);
        self.front.dev_inflight -= 1;
        if !self.front.blocked.is_empty() {
            self.wake_blocked();
        }
        if self.front.dev_inflight == 0 {
            self.obs.io_active(self.front.active_since, now);
            self.front.idle_since = now;
        }
        match self.front.timing {
            Timing::ClosedLoop { depth } => {
                while self.front.outstanding < depth && self.issue_next_closed() {}
            }
            Timing::Reactive => self.pump_host(),
            Timing::OpenLoop => {}
        }
        self.try_dispatch();
        self.maybe_background();
    }
}
