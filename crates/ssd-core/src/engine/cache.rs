//! ONFI cache commands (`Nand::cache_ops`): each die's cache register beside
//! its page register, holding one batch besides the one the die's array
//! works on.
//!
//! * **Cache program** (80h-data-15h): when a program batch's array phase
//!   is booked (`grant`), the die takes its next queued batch into the
//!   cache register if it is a program and no high-priority read waits
//!   (`cache_load_next`): its command and data-in go on the channel as soon
//!   as the channel frees, reported when booked. When the running program
//!   ends, the loaded batch moves to the page register (`t_cbsy`, die busy
//!   time) and programs (`promote`); one still waiting for the channel is
//!   promoted when its data-in is booked. The die then loads the next.
//! * **Cache read** (00h-address-31h): a read's sensing ends (`DieDone` in
//!   `Phase::Array`; its command and sensing are reported then); if another
//!   read is queued at the die, or the cache register holds a page, its page
//!   moves to the cache register (`Phase::CacheCopy`, `t_dcbsyr`) once the
//!   register is free, else it waits in the page register
//!   (`Phase::CacheWait`); otherwise it is a plain read (clocked out of the
//!   page register at once, no copy: a controller issues the cache command
//!   only when it has the next read). Moved, it leaves the die (`Phase::Idle`): the
//!   die starts its next batch (its command first on the channel), and the
//!   page's data-out follows on the channel; its `ChanDone` (owner
//!   `SLOT | die`) completes the batch (`cache_out_done`). While the
//!   register holds a read's page the die starts only reads.
//!
//! A channel waiter or data-out owner with the `SLOT` bit is the transfer of
//! a die's cache register, not of the die's running batch. The register
//! copies are die busy time; the observer hears of each operation's own
//! interval only, so they draw the die's idle current.
//!
//! Cost when the model has no cache commands: one `bool` test per batch
//! start, array end and program grant, and one bit test per `ChanDone` and
//! channel waiter.

use super::*;

/// Marks a channel waiter or data-out owner as a die's cache register.
pub(super) const SLOT: u32 = 1 << 31;

/// What a die's cache register holds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) enum SlotState {
    /// Nothing.
    #[default]
    Empty,
    /// A program batch whose command and data-in wait for the channel.
    ProgWaiting,
    /// A program batch whose data-in is booked (ends at `xfer_end`).
    ProgLoaded,
    /// A read's page, waiting for the channel to be clocked out.
    ReadWaiting,
    /// A read's page being clocked out (its `ChanDone` is booked).
    ReadOut,
}

/// One die's cache register and the batch it holds.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct CacheSlot {
    pub(super) state: SlotState,
    purpose: Option<Purpose>,
    n: u8,
    batch_job: [u32; MAX_PLANES],
    batch_txn: [u32; MAX_PLANES],
    blk: u32,
    pg: u16,
    bytes: u64,
    xfer_start: SimTime,
    xfer_end: SimTime,
}

impl CacheSlot {
    /// The kind and purpose of the batch it holds (for the channel's
    /// reads-first arbitration).
    pub(super) fn kind_purpose(&self) -> (OpKind, Purpose) {
        let kind = match self.state {
            SlotState::ProgWaiting | SlotState::ProgLoaded => OpKind::Program,
            _ => OpKind::Read,
        };
        (kind, self.purpose.unwrap_or(Purpose::Host))
    }
}

impl<F: Ftl, S: RequestSource, Q: IoScheduler, O: Observer, H: Hardware> Simulation<F, S, Q, O, H> {
    /// `die_start` with cache commands: a loaded program goes first; while
    /// the cache register holds a read's page only reads start.
    #[inline(never)]
    pub(super) fn die_start_cached(&mut self, d: u32) {
        let die = &self.fl.dies[d as usize];
        if die.phase != Phase::Idle {
            return;
        }
        match self.fl.slots[d as usize].state {
            SlotState::Empty => {}
            SlotState::ProgLoaded => return self.promote(d),
            // Promoted when its data-in is booked.
            SlotState::ProgWaiting => return,
            SlotState::ReadWaiting | SlotState::ReadOut => {
                if !self.read_queued(d) {
                    return;
                }
            }
        }
        self.die_start_batch::<true>(d)
    }

    /// Die `d` has booked a program batch: take its next queued batch into
    /// the cache register if it is a program and no high-priority read
    /// waits, and ask for the channel for its command and data-in.
    #[inline(never)]
    pub(super) fn cache_load_next(&mut self, d: u32) {
        if self.fl.slots[d as usize].state != SlotState::Empty {
            return;
        }
        let die = &mut self.fl.dies[d as usize];
        if !die.hi.is_empty() || die.lo.is_empty() {
            return;
        }
        let (blk, unparked) = (&mut self.fl.blk[..], &mut self.fl.unparked);
        let txns = &mut self.fl.txns.items[..];
        let q = &mut die.lo;
        let head = q.get(0);
        if txns[head as usize].kind != OpKind::Program {
            return;
        }
        q.pop_front();
        let slot = &mut self.fl.slots[d as usize];
        let woke = txn_started_one(blk, txns, unparked, head);
        let h = txns[head as usize];
        slot.batch_job[0] = h.job;
        slot.batch_txn[0] = head;
        let mut n = 1usize;
        if self.consts.multiplane {
            let picks;
            (n, picks) = start_partners(
                q,
                txns,
                blk,
                unparked,
                &h,
                self.consts.planes as usize,
                self.consts.page_mask,
                &mut slot.batch_job,
                &mut slot.batch_txn,
            );
            remove_picked!(q, picks);
        }
        queue_woken!(die, self.consts.prio_reads, txns, unparked, woke);
        slot.state = SlotState::ProgWaiting;
        slot.purpose = Some(h.purpose);
        slot.n = n as u8;
        slot.blk = h.blk;
        slot.pg = h.pg;
        if n > 1 {
            self.counters.multiplane_batches += 1;
        }
        self.request_slot_channel(d);
    }

    /// Ask for die `d`'s channel for its cache register's transfer.
    fn request_slot_channel(&mut self, d: u32) {
        let ch = self.fl.dies[d as usize].ch;
        let c = &mut self.fl.chans[ch as usize];
        if c.is_free(self.now) {
            return self.grant_slot(ch, d);
        }
        c.waiters.push_back(d | SLOT);
        if !c.out && !c.wake {
            c.wake = true;
            let t = c.busy_until;
            self.q.push(t, Ev::ChanFree(ch));
        }
    }

    /// Channel `ch` is free for die `d`'s cache register: a program's
    /// command and data-in (booked busy-until), or a read page's data-out
    /// (ends with a `ChanDone`). Reported to the observer now.
    #[inline(never)]
    pub(super) fn grant_slot(&mut self, ch: u32, d: u32) {
        let now = self.now;
        let slot = &mut self.fl.slots[d as usize];
        let n = slot.n as u64;
        let purpose = slot.purpose.unwrap_or(Purpose::Host);
        let c = &mut self.fl.chans[ch as usize];
        match slot.state {
            SlotState::ProgWaiting => {
                let dur = bus_cmd(self.consts.bus_t, &self.hw.chan, OpKind::Program, n)
                    + bus_data(self.consts.bus_t, &self.hw.chan, n);
                let end = now + dur;
                c.busy_ns += dur.0;
                c.busy_until = end;
                if !c.waiters.is_empty() && !c.wake {
                    c.wake = true;
                    self.q.push(end, Ev::ChanFree(ch));
                }
                slot.state = SlotState::ProgLoaded;
                slot.bytes = n * self.consts.page;
                slot.xfer_start = now;
                slot.xfer_end = end;
                let (k, b) = (XferKind::DataIn, slot.bytes);
                self.obs
                    .bus_xfer(ChannelId(ch), DieId(d), k, purpose, b, now, end);
                if self.fl.dies[d as usize].phase == Phase::Idle {
                    self.promote(d);
                }
            }
            SlotState::ReadWaiting => {
                let dur = bus_data(self.consts.bus_t, &self.hw.chan, n);
                let end = now + dur;
                c.busy_ns += dur.0;
                c.out = true;
                c.out_start = now;
                c.out_end = end;
                c.owner = d | SLOT;
                slot.state = SlotState::ReadOut;
                self.q.push(end, Ev::ChanDone(ch));
                let (k, b) = (XferKind::DataOut, n * self.consts.page);
                self.obs
                    .bus_xfer(ChannelId(ch), DieId(d), k, purpose, b, now, end);
            }
            s => unreachable!("die {d}'s cache register asked for the channel in state {s:?}"),
        }
    }

    /// Idle die `d` programs the batch loaded in its cache register: it
    /// moves to the page register (`t_cbsy`) once its data-in has ended,
    /// then programs; the die loads its next program meanwhile.
    fn promote(&mut self, d: u32) {
        let now = self.now;
        let slot = &mut self.fl.slots[d as usize];
        debug_assert_eq!(slot.state, SlotState::ProgLoaded);
        slot.state = SlotState::Empty;
        let s = *slot;
        let die = &mut self.fl.dies[d as usize];
        debug_assert_eq!(die.phase, Phase::Idle);
        die.kind = OpKind::Program;
        die.purpose = s.purpose.unwrap_or(Purpose::Host);
        die.n = s.n;
        die.batch_job = s.batch_job;
        die.batch_txn = s.batch_txn;
        die.blk = s.blk;
        die.pg = s.pg;
        die.batch_start = now;
        let start = now.max(s.xfer_end) + self.consts.cache.t_cbsy;
        let n = s.n as u64;
        let t = batch_time!(self, die, d, start, OpKind::Program, n);
        die.phase = Phase::Array;
        die.xfer = (XferKind::DataIn, s.bytes, s.xfer_start);
        die.array_start = start;
        die.array_end = start + t;
        // Its data-in was reported when it was booked.
        die.unreported = OP;
        self.stats.cache_counts[0] += 1;
        self.q.push(start + t, Ev::DieDone(d));
        self.cache_load_next(d);
    }

    /// `DieDone` of a read on die `d` with cache reads: its sensing has
    /// ended (`Phase::Array`), or its page is in the cache register
    /// (`Phase::CacheCopy`). Returns false where the read goes on as a plain
    /// one: its cache register is empty and no read is queued after it (the
    /// controller issues a cache read only when it has the next one), so
    /// its page is clocked out of the page register at once, without a copy.
    #[inline(never)]
    pub(super) fn cache_read_step(&mut self, d: u32) -> bool {
        match self.fl.dies[d as usize].phase {
            Phase::Array => {
                if self.fl.slots[d as usize].state != SlotState::Empty {
                    self.report_array_op(d);
                    self.fl.dies[d as usize].phase = Phase::CacheWait;
                } else if self.read_queued(d) {
                    self.report_array_op(d);
                    self.start_copy(d);
                } else {
                    return false;
                }
            }
            Phase::CacheCopy => {
                let die = &mut self.fl.dies[d as usize];
                die.phase = Phase::Idle;
                die.busy_ns += self.now.0 - die.batch_start.0;
                let slot = &mut self.fl.slots[d as usize];
                debug_assert_eq!(slot.state, SlotState::Empty);
                slot.state = SlotState::ReadWaiting;
                slot.purpose = Some(die.purpose);
                slot.n = die.n;
                slot.batch_job = die.batch_job;
                slot.batch_txn = die.batch_txn;
                slot.blk = die.blk;
                slot.pg = die.pg;
                self.stats.cache_counts[1] += 1;
                // The next read's command goes first, then the page's data-out.
                self.die_start(d);
                self.request_slot_channel(d);
            }
            p => unreachable!("die {d}: a cache read's DieDone in phase {p:?}"),
        }
        true
    }

    /// Whether die `d`'s next batch would be a read.
    fn read_queued(&self, d: u32) -> bool {
        let die = &self.fl.dies[d as usize];
        let Some(sel) = next_queue(die, false) else {
            return false;
        };
        let q = match sel {
            QueueSel::Hi => &die.hi,
            QueueSel::Lo => &die.lo,
            QueueSel::Bg => &die.bg,
        };
        let t = q.get(0);
        self.fl.txns.items[t as usize].kind == OpKind::Read
    }

    /// Die `d`'s read page moves to its (free) cache register now.
    fn start_copy(&mut self, d: u32) {
        let die = &mut self.fl.dies[d as usize];
        die.phase = Phase::CacheCopy;
        let end = self.now + self.consts.cache.t_dcbsyr;
        die.array_end = end;
        self.q.push(end, Ev::DieDone(d));
    }

    /// The page in die `d`'s cache register has been clocked out: its batch
    /// is complete, and the register is free for a read waiting in the page
    /// register, or for whatever the die has queued.
    #[inline(never)]
    pub(super) fn cache_out_done(&mut self, d: u32) {
        let slot = &mut self.fl.slots[d as usize];
        debug_assert_eq!(slot.state, SlotState::ReadOut);
        slot.state = SlotState::Empty;
        let s = *slot;
        let n = s.n as usize;
        for &t in &s.batch_txn[..n] {
            self.read_done(t);
        }
        let waiters = s.purpose == Some(Purpose::Translation);
        if waiters {
            self.fl.take_tp_waiters(&s.batch_txn[..n]);
        }
        self.cx.die_load[d as usize] -= n as u32;
        for &j in &s.batch_job[..n] {
            self.txn_done(j);
        }
        if waiters {
            self.finish_tp_waiters();
        }
        match self.fl.dies[d as usize].phase {
            Phase::CacheWait => self.start_copy(d),
            Phase::Idle => self.die_start(d),
            _ => {}
        }
    }

    /// The cache commands' counts for the report (`hardware.nand`).
    pub(super) fn cache_report(&self, v: &mut serde_json::Value) {
        v["cache_programs"] = serde_json::json!(self.stats.cache_counts[0]);
        v["cache_reads"] = serde_json::json!(self.stats.cache_counts[1]);
    }
}
