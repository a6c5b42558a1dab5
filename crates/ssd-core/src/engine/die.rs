//! Die execution: starting a batch, the array operation's end, completion.

use super::*;

impl<F: Ftl, S: RequestSource, Q: IoScheduler, O: Observer, H: Hardware> Simulation<F, S, Q, O, H> {
    /// Start die `d`'s next batch, if it is idle and has work queued.
    #[inline(never)]
    pub(super) fn die_start(&mut self, d: u32) {
        self.die_start_inline(d)
    }

    /// `die_start`, inlined where a batch completes (most starts).
    #[inline(always)]
    pub(super) fn die_start_inline(&mut self, d: u32) {
        if self.consts.die_hooks {
            return self.die_start_hooked(d);
        }
        self.die_start_batch::<true>(d)
    }

    /// `die_start` with suspension or cache commands on.
    #[cold]
    #[inline(never)]
    pub(super) fn die_start_hooked(&mut self, d: u32) {
        if self.consts.suspend_on && self.fl.susp[d as usize].is_suspended() {
            return self.die_start_suspended(d);
        }
        if self.consts.cache.any() {
            return self.die_start_cached(d);
        }
        self.die_start_batch::<true>(d)
    }

    /// `die_start` on a die with an operation suspended: its reads one
    /// batch at a time (no partners: each is checked against the suspended
    /// operation as a batch head), or the operation's resumption.
    #[cold]
    #[inline(never)]
    pub(super) fn die_start_suspended(&mut self, d: u32) {
        if self.fl.dies[d as usize].phase != Phase::Idle {
            return;
        }
        if self.must_resume(d) {
            return self.resume(d);
        }
        self.die_start_batch::<false>(d)
    }

    /// Start die `d`'s next batch from its queues (with multi-plane
    /// partners if `PARTNERS`).
    #[inline(always)]
    pub(super) fn die_start_batch<const PARTNERS: bool>(&mut self, d: u32) {
        if self.fl.dies[d as usize].phase != Phase::Idle {
            return;
        }
        let urgent =
            self.consts.gc_yields && !self.fl.dies[d as usize].bg.is_empty() && self.gc_urgent(d);
        let die = &mut self.fl.dies[d as usize];
        // Every queued transaction is ready (unready ones are parked on their
        // block). Without partners the die has an operation suspended and
        // serves its high-priority reads alone (`die_start_suspended`).
        let sel = if PARTNERS {
            next_queue(die, urgent)
        } else {
            (!die.hi.is_empty()).then_some(QueueSel::Hi)
        };
        let Some(sel) = sel else {
            return;
        };
        let q = die_queue!(die, sel);
        let (blk, unparked) = (&mut self.fl.blk[..], &mut self.fl.unparked);
        let txns = &mut self.fl.txns.items[..];
        let head = q.pop_front();
        if txns[head as usize].kind == OpKind::Erase && !txn_ready(blk, txns, head) {
            // Woken by its block's last program while reads planned before
            // it are still to run: it waits for them, parked.
            return self.defer_erase(d, head);
        }
        // The head's lone woken transaction is queued after the partners'
        // (as if `unparked` held it under theirs).
        let woke = txn_started_one(blk, txns, unparked, head);
        let h = txns[head as usize];
        die.batch_job[0] = h.job;
        die.batch_txn[0] = head;
        let mut n = 1usize;
        if PARTNERS && self.consts.multiplane {
            let planes = self.consts.planes as usize;
            let picks;
            (n, picks) = start_partners(
                q,
                txns,
                blk,
                unparked,
                &h,
                planes,
                self.consts.page_mask,
                &mut die.batch_job,
                &mut die.batch_txn,
            );
            remove_picked!(q, picks);
        }
        queue_woken!(die, self.consts.prio_reads, txns, unparked, woke);
        die.n = n as u8;
        die.kind = h.kind;
        die.blk = h.blk;
        die.pg = h.pg;
        die.purpose = h.purpose;
        die.batch_start = self.now;
        if h.kind == OpKind::Erase {
            self.erases_started(d);
        }
        let die = &mut self.fl.dies[d as usize];
        if n > 1 {
            self.counters.multiplane_batches += 1;
        }
        die.phase = match h.kind {
            OpKind::Program => Phase::DataIn,
            _ => Phase::Cmd,
        };
        self.request_channel(d);
    }

    /// Paced GC on die `d` is urgent: a frontier of one of its planes has
    /// already taken a block whose erase has not run (the FTL's pool,
    /// `Ftl::free_blocks`, is smaller than the plane's erases not yet run),
    /// so the plane's next programs wait for GC whatever the die does. Then
    /// that plane's oldest queued GC operation is moved to the head of the
    /// die's GC queue and the die serves it first (with its multi-plane
    /// partners); the GC of the die's other planes keeps yielding to host
    /// work. Returns whether it did (false also when the urgent planes have
    /// no GC queued: it waits on a read still to run or on another die).
    ///
    /// MQSim's `GC_and_WL_Unit_Page_Level::GC_is_in_urgent_mode` compares
    /// its pool, which gets a block back only when its erase has run, with
    /// `GC_Hard_Threshold`, and its TSU then serves all of the die's GC
    /// first. Here the FTL keeps a pool of only a few blocks (the soft
    /// threshold is one block above the hard one by default), and each
    /// step towards MQSim's rule was measured to cost the host work the
    /// pacing exists to protect (chip2, full, random writes):
    /// - the physical pool at the hard threshold made GC urgent whenever a
    ///   plane had a victim in flight (2,000 IOPS open loop: dies 70 %
    ///   busy serving GC first, mean latency 51 ms instead of 0.5 ms);
    /// - a pool no larger than the erases not yet run (no erased block
    ///   left), serving the whole die's GC first, held DFTL's host commands
    ///   behind the other planes' backlog (1,024 blocks a plane, QD 32:
    ///   601 IOPS, blocking 877); per plane, 616;
    /// - this rule, per plane: 1,001 IOPS; page mapping at QD 32 keeps its
    ///   p99 (95 ms; never urgent, 394 ms: host programs wait for erases
    ///   behind the die's whole GC backlog).
    #[inline(never)]
    pub(super) fn gc_urgent(&mut self, d: u32) -> bool {
        let ppd = self.consts.planes_per_die;
        let mut mask = 0u32;
        for p in 0..ppd {
            let gp = d * ppd + p;
            let pool = self.ftl.free_blocks(crate::addr::PlaneId(gp));
            if pool < self.fl.pending_erases[gp as usize] {
                mask |= 1 << p;
            }
        }
        if mask == 0 {
            return false;
        }
        let (bg, txns) = (&mut self.fl.dies[d as usize].bg, &self.fl.txns.items[..]);
        let n = bg.txns.len() - bg.head;
        match (0..n).find(|&i| mask & (1 << (txns[bg.get(i) as usize].plane & PLANE_BITS)) != 0) {
            Some(i) => {
                if i > 0 {
                    bg.move_to_front(i);
                }
                true
            }
            None => false,
        }
    }

    /// Report die `d`'s command/data-in transfer and array operation to the
    /// observer (each once). They are reported when the operation ends, or at a
    /// cut point (drain start, end of run) as far as they began by then, so that
    /// the observer sees each die's activities in order and, at a cut, every
    /// activity that began before it.
    #[inline(always)]
    pub(super) fn report_array_op(&mut self, d: u32) {
        let die = &mut self.fl.dies[d as usize];
        let (k, p, n) = (die.kind, die.purpose, die.n as u32);
        let (s, e) = (die.array_start, die.array_end);
        let (xk, xb, xs) = die.xfer;
        match std::mem::replace(&mut die.unreported, 0) {
            0 => {}
            OP => self.obs.flash_op(DieId(d), k, p, n, s, e),
            _ => {
                let ch = ChannelId(die.ch);
                self.obs
                    .xfer_then_op(ch, DieId(d), xk, xb, xs, k, p, n, s, e)
            }
        }
    }

    /// Before a cut point: report what dies in their array phase have begun
    /// by now (see `report_array_op`): the transfer, and the operation if it
    /// has started.
    pub(super) fn report_started_ops(&mut self) {
        for d in 0..self.fl.dies.len() {
            let die = &mut self.fl.dies[d];
            if die.phase != Phase::Array || die.unreported == 0 {
                continue;
            }
            if die.array_start <= self.now {
                self.report_array_op(d as u32);
            } else if die.unreported & XFER != 0 {
                die.unreported = OP;
                let (xk, xb, xs) = die.xfer;
                let (ch, p, s) = (ChannelId(die.ch), die.purpose, die.array_start);
                self.obs.bus_xfer(ch, DieId(d as u32), xk, p, xb, xs, s);
            }
        }
    }

    pub(super) fn on_die_done(&mut self, d: u32) {
        if self.consts.die_hooks && self.die_done_hooked(d) {
            return;
        }
        let die = &self.fl.dies[d as usize];
        if die.kind != OpKind::Read {
            self.report_array_op(d);
            self.complete_batch(d);
            return;
        }
        if die.unreported == XFER | OP && self.fl.chans[die.ch as usize].is_free(self.now) {
            // The channel is free: the data-out starts now, and the observer
            // hears of the command, the read and the data-out at once.
            let die = &mut self.fl.dies[d as usize];
            die.unreported = 0;
            die.phase = Phase::DataOut;
            let (ch, n, purpose) = (die.ch, die.n as u32, die.purpose);
            let (s, e, (_, xb, xs)) = (die.array_start, die.array_end, die.xfer);
            let (bytes, end) = self.book_data_out(ch, d);
            let (ch, id) = (ChannelId(ch), DieId(d));
            self.obs
                .read_then_out(ch, id, xb, xs, purpose, n, s, e, bytes, end);
            return;
        }
        self.report_array_op(d);
        self.fl.dies[d as usize].phase = Phase::DataOut;
        self.request_channel(d);
    }

    /// `DieDone` for die `d` with suspension or cache commands on: whether
    /// it was handled here (a stale event, a suspension, a cache read).
    #[cold]
    #[inline(never)]
    pub(super) fn die_done_hooked(&mut self, d: u32) -> bool {
        if self.consts.suspend_on {
            if self.stale_die_done(d) {
                return true;
            }
            if self.fl.dies[d as usize].phase == Phase::Suspending {
                self.suspended_now(d);
                return true;
            }
            if self.fl.dies[d as usize].kind != OpKind::Read {
                self.operation_done(d);
            }
        }
        if self.consts.cache.read && self.fl.dies[d as usize].kind == OpKind::Read {
            return self.cache_read_step(d);
        }
        false
    }

    pub(super) fn complete_batch(&mut self, d: u32) {
        let die = &mut self.fl.dies[d as usize];
        let mut waiters = false;
        if die.kind == OpKind::Read {
            let (n, txs) = (die.n as usize, die.batch_txn);
            waiters = die.purpose == Purpose::Translation;
            for &t in &txs[..n] {
                self.read_done(t);
            }
            if waiters {
                self.fl.take_tp_waiters(&txs[..n]);
            }
        }
        let die = &mut self.fl.dies[d as usize];
        die.phase = Phase::Idle;
        die.busy_ns += self.now.0 - die.batch_start.0;
        let n = die.n as usize;
        let jobs = die.batch_job;
        self.cx.die_load[d as usize] -= n as u32;
        for &j in &jobs[..n] {
            self.txn_done(j);
        }
        if waiters {
            self.finish_tp_waiters();
        }
        self.die_start_inline(d);
    }
}
