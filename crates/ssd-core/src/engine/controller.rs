//! The controller: a command's host-link transfer, the DRAM write buffer,
//! the FTL call and the CPU/DRAM booking of its work.

use super::*;
use crate::ftl::ZoneAction;

/// LRU write buffer over logical pages (DRAM).
#[derive(Debug)]
pub(super) struct WriteBuffer {
    pub(super) cap: usize,
    pub(super) map: std::collections::HashMap<u64, u32>,
    // intrusive doubly linked list: node i = (lpn, prev, next)
    pub(super) nodes: Vec<(u64, u32, u32)>,
    pub(super) free: Vec<u32>,
    pub(super) head: u32, // most recent
    pub(super) tail: u32, // least recent
}
impl WriteBuffer {
    pub(super) fn new(cap: usize) -> WriteBuffer {
        WriteBuffer {
            cap,
            map: Default::default(),
            nodes: Vec::new(),
            free: Vec::new(),
            head: NONE,
            tail: NONE,
        }
    }
    pub(super) fn unlink(&mut self, i: u32) {
        let (_, p, n) = self.nodes[i as usize];
        if p != NONE {
            self.nodes[p as usize].2 = n;
        } else {
            self.head = n;
        }
        if n != NONE {
            self.nodes[n as usize].1 = p;
        } else {
            self.tail = p;
        }
    }
    pub(super) fn push_front(&mut self, i: u32) {
        self.nodes[i as usize].1 = NONE;
        self.nodes[i as usize].2 = self.head;
        if self.head != NONE {
            self.nodes[self.head as usize].1 = i;
        }
        self.head = i;
        if self.tail == NONE {
            self.tail = i;
        }
    }
    pub(super) fn contains_touch(&mut self, lpn: u64) -> bool {
        if let Some(&i) = self.map.get(&lpn) {
            self.unlink(i);
            self.push_front(i);
            true
        } else {
            false
        }
    }
    /// Insert (or touch) `lpn`; returns the evicted least-recently-used page, if any.
    pub(super) fn insert(&mut self, lpn: u64) -> Option<u64> {
        if self.contains_touch(lpn) {
            return None;
        }
        let mut evicted = None;
        if self.map.len() >= self.cap {
            let t = self.tail;
            let victim = self.nodes[t as usize].0;
            self.unlink(t);
            self.map.remove(&victim);
            self.free.push(t);
            evicted = Some(victim);
        }
        let i = if let Some(i) = self.free.pop() {
            self.nodes[i as usize] = (lpn, NONE, NONE);
            i
        } else {
            self.nodes.push((lpn, NONE, NONE));
            (self.nodes.len() - 1) as u32
        };
        self.map.insert(lpn, i);
        self.push_front(i);
        evicted
    }
    pub(super) fn remove(&mut self, lpn: u64) -> bool {
        if let Some(i) = self.map.remove(&lpn) {
            self.unlink(i);
            self.free.push(i);
            true
        } else {
            false
        }
    }
    pub(super) fn drain_all(&mut self) -> Vec<u64> {
        let mut out = Vec::with_capacity(self.map.len());
        let mut i = self.tail;
        while i != NONE {
            out.push(self.nodes[i as usize].0);
            i = self.nodes[i as usize].1;
        }
        self.map.clear();
        self.nodes.clear();
        self.free.clear();
        self.head = NONE;
        self.tail = NONE;
        out
    }
}

/// The flash side of the write-back buffer (`dram.flush = "evict-lru"`),
/// after MQSim's write cache (`Data_Cache_Manager_Flash_Advanced::
/// write_to_destage_buffer`): a write completes once its pages are in DRAM,
/// and the pages it evicts go to flash behind it. Evicted pages whose
/// programs have not ended fill a back-pressure buffer of one page a plane
/// (MQSim's `back_pressure_buffer_max_depth`, set in `SSD_Device.cpp` to the
/// planes times a page): a write completes only once at most that many of
/// the pages evicted up to and including its own are still on their way,
/// so under a load the flash cannot take, writes complete at the speed it
/// does. MQSim holds a write's data back until there is room
/// (`waiting_user_requests_queue_for_dram_free_slot`); here the data
/// crosses the link and its evictions are planned at dispatch, so the dies
/// keep the backlog queued (holding a large write's data back left them
/// idle during its link transfer: a 1 MiB sequential stream ran at 77
/// MB/s instead of 109). A flush completes once every evicted page is on
/// flash.
#[derive(Debug)]
pub(super) struct WriteBack {
    pub(super) on: bool,
    /// Pages evicted so far, and of them the pages whose programs have ended.
    evicted: u64,
    done: u64,
    max: u64,
    /// The jobs programming evicted pages, with their page counts.
    pub(super) jobs: Vec<(u32, u32)>,
    /// Commands that complete once `done` reaches their count.
    waiters: Vec<(u32, u64)>,
}

impl WriteBack {
    pub(super) fn new(on: bool, planes: u32) -> WriteBack {
        WriteBack {
            on,
            evicted: 0,
            done: 0,
            max: planes.max(1) as u64,
            jobs: Vec::new(),
            waiters: Vec::new(),
        }
    }
}

/// The controller's state: when the host link and the CPU are free, the
/// DRAM write buffer and its flash side, and idle-time work.
pub(super) struct CtrlState {
    /// The host link and the CPU are booked busy-until these.
    pub(super) link_free: SimTime,
    pub(super) cpu_free: SimTime,
    /// The DRAM write buffer (`dram.write_buffer`), if any.
    pub(super) wbuf: Option<WriteBuffer>,
    /// The write-back buffer's flash side (`dram.flush = "evict-lru"`):
    /// evicted pages whose programs have not ended, the most that may be
    /// (one page a plane: `WriteBack::new`), the jobs holding them and the
    /// commands waiting for them.
    pub(super) wback: WriteBack,
    /// Background (non-gating) jobs in flight, and whether idle-time work
    /// is on (`ftl.background_gc_blocks`, or the drain's merge).
    pub(super) bg_jobs: u32,
    pub(super) bg_enabled: bool,
    /// The idle detector (`ftl.gc_idle_after`): how long the device must be
    /// idle before idle-time work starts, and the `IdleCheck` booked for the
    /// current idle period.
    pub(super) idle_after: Dur,
    pub(super) idle_check: Option<SimTime>,
}

impl CtrlState {
    pub(super) fn new(settings: &Settings) -> CtrlState {
        let (g, c) = (settings.geometry, &settings.config);
        let wb_pages = (c.dram.write_buffer.0 / g.page_size as u64) as usize;
        CtrlState {
            link_free: SimTime::ZERO,
            cpu_free: SimTime::ZERO,
            wbuf: if wb_pages > 0 {
                Some(WriteBuffer::new(wb_pages))
            } else {
                None
            },
            wback: WriteBack::new(
                wb_pages > 0 && c.dram.flush == FlushPolicy::EvictLru,
                g.total_planes(),
            ),
            bg_jobs: 0,
            bg_enabled: c.ftl.background_gc_blocks > 0,
            idle_after: c.ftl.gc_idle_after,
            idle_check: None,
        }
    }
}

impl<F: Ftl, S: RequestSource, Q: IoScheduler, O: Observer, H: Hardware> Simulation<F, S, Q, O, H> {
    pub(super) fn start_cmd(&mut self, r: SchedReq) {
        let now = self.now;
        self.counters.dispatched += 1;
        let qt = now.0 - r.arrival.0;
        self.counters.queue_time_ns += qt as u128;
        self.counters.max_queue_time_ns = self.counters.max_queue_time_ns.max(qt);
        if let Some(d) = match r.op {
            IoOp::Read => Some(0),
            IoOp::Write | IoOp::ZoneAppend => Some(1),
            _ => None,
        } {
            let k = &mut self.counters;
            k.dispatched_dir[d] += 1;
            k.queue_time_dir_ns[d] += qt as u128;
            k.max_queue_time_dir_ns[d] = k.max_queue_time_dir_ns[d].max(qt);
        }
        if self.front.dev_inflight == 0 {
            self.front.active_since = now;
        }
        self.front.dev_inflight += 1;
        let bytes = r.sectors as u64 * SECTOR;
        // Host link: command (and write data) host -> device.
        let data_in = if r.op.writes_data() { bytes } else { 0 };
        let lstart = self.ctl.link_free.max(now);
        let lend = lstart + self.hw.link.command_time(data_in);
        self.ctl.link_free = lend;
        self.stats.link_ns += lend.0 - lstart.0;
        self.obs.link_xfer(data_in, lstart, lend);
        // Controller: FTL work planned now (functional), timed on the CPU.
        self.cx.plan.clear();
        self.cx.work = FtlWork::default();
        self.cx.now = now;
        self.cx.status = None;
        self.cx.placement = r.placement;
        let first = self.consts.div_page.quot(r.lba * SECTOR);
        let n = if r.sectors == 0 {
            0
        } else {
            (self.consts.div_page.quot(r.lba * SECTOR + bytes - 1) - first + 1) as u32
        };
        let mut dram = 0u64;
        let mut evicted = 0u32;
        match r.op {
            IoOp::Read => {
                if let Some(wb) = self.ctl.wbuf.as_mut() {
                    let mut i = 0;
                    while i < n {
                        let l = first + i as u64;
                        dram += 1;
                        if wb.contains_touch(l) {
                            self.counters.read_buffer_hits += 1;
                            i += 1;
                        } else {
                            let mut j = i + 1;
                            while j < n && !wb.map.contains_key(&(first + j as u64)) {
                                j += 1;
                            }
                            self.ftl.read(Lpn(l), j - i, &mut self.cx);
                            i = j;
                        }
                    }
                } else if n > 0 {
                    self.ftl.read(Lpn(first), n, &mut self.cx);
                }
            }
            IoOp::Write => {
                self.counters.host_pages_written += n as u64;
                if !self.stats.flow_flash.owner.is_empty() {
                    self.stats.flow_flash.written(first, n, r.stream);
                }
                match (self.ctl.wbuf.as_mut(), self.settings.config.dram.flush) {
                    (Some(wb), FlushPolicy::EvictLru) => {
                        for i in 0..n as u64 {
                            dram += 1;
                            if wb.contains_touch(first + i) {
                                self.counters.wbuf_hits += 1;
                            } else if let Some(v) = wb.insert(first + i) {
                                self.counters.wbuf_evictions += 1;
                                evicted += 1;
                                self.ftl.write(Lpn(v), 1, &mut self.cx);
                            }
                        }
                        // The write completes once in DRAM: its evictions
                        // (job 0) and their GC go on behind it.
                        self.cx.plan.gating.fill(false);
                    }
                    (Some(wb), FlushPolicy::WriteThrough) => {
                        for i in 0..n as u64 {
                            dram += 1;
                            wb.insert(first + i);
                        }
                        self.ftl.write(Lpn(first), n, &mut self.cx);
                    }
                    (None, _) => self.ftl.write(Lpn(first), n, &mut self.cx),
                }
            }
            IoOp::Trim => {
                if let Some(wb) = self.ctl.wbuf.as_mut() {
                    for i in 0..n as u64 {
                        wb.remove(first + i);
                    }
                }
                self.ftl.trim(Lpn(first), n, &mut self.cx);
            }
            IoOp::Flush => {
                if let (Some(wb), FlushPolicy::EvictLru) =
                    (self.ctl.wbuf.as_mut(), self.settings.config.dram.flush)
                {
                    for l in wb.drain_all() {
                        self.counters.wbuf_evictions += 1;
                        self.ftl.write(Lpn(l), 1, &mut self.cx);
                    }
                }
                self.ftl.flush(&mut self.cx);
            }
            IoOp::ZoneAppend
            | IoOp::ZoneReset
            | IoOp::ZoneFinish
            | IoOp::ZoneOpen
            | IoOp::ZoneClose => self.zone_cmd(r.op, first, n),
        }
        // A command the zones refused (ZNS): it completes, failed, having
        // written nothing.
        let failed = self.cx.status.is_some();
        if failed && r.op == IoOp::Write {
            self.counters.host_pages_written -= n as u64;
        }
        // The command completes once this pass has ended (`CmdReady` at
        // its end): the observer is told so (`command_pass`).
        let cpu_end = self.book_cpu::<true>(lend, dram);
        let c = self.front.cmds.insert(Cmd {
            sreq: r,
            pending: 1,
            jobs: NONE,
        });
        if failed {
            self.front.failed.push(c);
        }
        self.commit_plan(c);
        if self.ctl.wback.on && r.op != IoOp::Read {
            self.write_back_room(c, r.op, evicted);
        }
        self.q.push_fifo(0, cpu_end, Ev::CmdReady(c));
    }

    /// A zone command's FTL work (zoned drives only: out of the hot path's
    /// way): a zone append at the zone's write pointer, or a zone
    /// management action; a refusal goes to `cx.status`.
    #[inline(never)]
    fn zone_cmd(&mut self, op: IoOp, first: u64, n: u32) {
        if op == IoOp::ZoneAppend {
            match self.ftl.zone_append(Lpn(first), n, &mut self.cx) {
                Ok(_) => self.counters.host_pages_written += n as u64,
                Err(e) => self.cx.status = Some(e),
            }
            return;
        }
        let action = match op {
            IoOp::ZoneReset => ZoneAction::Reset,
            IoOp::ZoneFinish => ZoneAction::Finish,
            IoOp::ZoneOpen => ZoneAction::Open,
            _ => ZoneAction::Close,
        };
        if let Err(e) = self.ftl.zone_mgmt(action, Lpn(first), &mut self.cx) {
            self.cx.status = Some(e);
        }
    }

    /// Write-back accounting of command `c` (a write, trim or flush) that
    /// evicted `evicted` pages (`WriteBack`): note its eviction job, and hold
    /// its completion until the pages evicted up to it are on flash but for
    /// a page a plane (a flush: all of them).
    #[cold]
    #[inline(never)]
    pub(super) fn write_back_room(&mut self, c: u32, op: IoOp, evicted: u32) {
        let wb = &mut self.ctl.wback;
        if evicted > 0 && self.fl.plan_jobs[0] != NONE {
            wb.jobs.push((self.fl.plan_jobs[0], evicted));
            wb.evicted += evicted as u64;
        }
        let need = match op {
            IoOp::Write => wb.evicted.saturating_sub(wb.max),
            IoOp::Flush => wb.evicted,
            _ => return,
        };
        if need > wb.done {
            wb.waiters.push((c, need));
            self.front.cmds[c].pending += 1;
        }
    }

    /// The pages evicted by job `j` (a write-back job that has ended) are on
    /// flash: complete the commands that waited for them.
    #[cold]
    #[inline(never)]
    pub(super) fn write_back_done(&mut self, j: u32) {
        let wb = &mut self.ctl.wback;
        let Some(i) = wb.jobs.iter().position(|&(x, _)| x == j) else {
            return;
        };
        wb.done += wb.jobs.swap_remove(i).1 as u64;
        let done = wb.done;
        let mut k = 0;
        while k < self.ctl.wback.waiters.len() {
            let (c, need) = self.ctl.wback.waiters[k];
            if need <= done {
                self.ctl.wback.waiters.remove(k);
                self.cmd_job_done(c);
            } else {
                k += 1;
            }
        }
    }

    /// Book the CPU for one command's firmware path plus the FTL work in
    /// `cx.work`, then the DRAM for its accesses (`FtlWork::dram_total`, one
    /// per GC candidate examined included, plus `extra_dram` write-buffer
    /// accesses), and tell the observer what the pass was for (`CMD`: as
    /// a pass of the command being dispatched, [`Observer::command_pass`]).
    pub(super) fn book_cpu<const CMD: bool>(&mut self, ready: SimTime, extra_dram: u64) -> SimTime {
        let w = self.cx.work;
        self.stats.work.add(&w);
        let cycles = self.hw.ctrl.cycles(&w, true);
        // What the observer is told the cycles were for, computed beside
        // them (an observer that ignores it lets the compiler drop it).
        let cycles_by = self.hw.ctrl.cycles_by_activity(&w, true);
        let dram_n = w.dram_total() + extra_dram;
        self.stats.work.dram_accesses += extra_dram;
        let mut start = self.ctl.cpu_free.max(ready);
        // The CPU last had work at the end of the last busy period or of
        // background firmware work, whichever is later.
        if self.front.dev_inflight == 1 {
            if let Some(wake) = self
                .hw
                .ctrl
                .wakeup(ready, self.front.idle_since.max(self.ctl.cpu_free))
            {
                let wend = start + wake;
                self.obs.cpu_wakeup(start, wend);
                start = wend;
            }
        }
        let cpu_t = self.hw.ctrl.cycle_time(cycles);
        let dram_t = self.hw.dram.access_time(dram_n);
        let end = start + cpu_t + dram_t;
        let dram_by = w.dram_by_activity(extra_dram);
        if CMD {
            let c = start + cpu_t;
            self.obs
                .command_pass(start, c, end, dram_n, &cycles_by, &dram_by);
        } else {
            let c = start + cpu_t;
            self.obs
                .firmware_pass(start, c, end, dram_n, &cycles_by, &dram_by);
        }
        self.stats.cpu_ns += end.0 - start.0;
        self.ctl.cpu_free = end;
        end
    }

    pub(super) fn on_cmd_ready(&mut self, c: u32) {
        let mut j = self.front.cmds[c].jobs;
        while j != NONE {
            let next = self.fl.jobs[j].next_release;
            self.release_stage(j);
            j = next;
        }
        self.front.cmds[c].jobs = NONE;
        self.cmd_job_done(c);
    }

    pub(super) fn cmd_job_done(&mut self, c: u32) {
        let cmd = &mut self.front.cmds[c];
        cmd.pending -= 1;
        if cmd.pending == 0 {
            let r = cmd.sreq;
            if r.op == IoOp::Read {
                let bytes = r.sectors as u64 * SECTOR;
                let s = self.ctl.link_free.max(self.now);
                let e = s + self.hw.link.read_data_time(bytes);
                self.ctl.link_free = e;
                self.stats.link_ns += e.0 - s.0;
                self.obs.link_xfer(bytes, s, e);
                self.q.push_fifo(1, e, Ev::CmdComplete(c));
            } else {
                self.complete_cmd(c);
            }
        }
    }

    /// Idle-time GC: while the device is idle, top the GC (non-gating) jobs in
    /// flight up to one per die (the FTL picks the planes; page mapping and
    /// DFTL take them in striping order, so successive jobs land on different
    /// dies), as firmware collects on all dies at once, not one block at a time.
    /// With an idle detector (`ftl.gc_idle_after`) the device must have been
    /// idle that long first: an `IdleCheck` is booked for the moment the wait
    /// ends, and a request before it starts the wait over.
    pub(super) fn maybe_background(&mut self) {
        if !self.ctl.bg_enabled || self.front.dev_inflight > 0 || !self.sched.is_empty() {
            return;
        }
        if !self.ctl.idle_after.is_zero() {
            let due = self.front.idle_since + self.ctl.idle_after;
            if self.now < due {
                if self.ctl.idle_check != Some(due) {
                    self.ctl.idle_check = Some(due);
                    self.q.push(due, Ev::IdleCheck);
                }
                return;
            }
        }
        while self.ctl.bg_jobs < self.fl.dies.len() as u32 {
            self.cx.plan.clear();
            self.cx.work = FtlWork::default();
            self.cx.now = self.now;
            if !self.ftl.background(&mut self.cx) {
                self.cx.plan.clear();
                return;
            }
            self.book_cpu::<false>(self.now, 0);
            self.commit_plan(NONE);
        }
    }

    // -------------------------------------------------------- flash scheduling
}
