//! Flash transaction planning: an FTL plan becomes jobs and transactions,
//! parked per block in program order, released stage by stage.

use super::*;

impl<F: Ftl, S: RequestSource, Q: IoScheduler, O: Observer, H: Hardware> Simulation<F, S, Q, O, H> {
    /// Turn the plan in `cx` into jobs and transactions owned by command `c`
    /// (NONE: background work, released at once).
    pub(super) fn commit_plan(&mut self, c: u32) {
        if !self.flow_flash.owner.is_empty() {
            self.flow_flash.count(&self.cx.plan.ops);
        }
        // Apply every op to the flash array in the FTL's order (its state order),
        // recording each op's block epoch so that the dies execute programs and
        // erases of a block in that same order, and make it a transaction of its
        // job: a job runs its stages in order, each stage's transactions in plan
        // order (a GC job interleaves reads and copies). A job's transactions
        // fill its run in that (stage, plan) order, so a stage is a range of
        // slots: a counting sort by stage.
        let (mut n_jobs, mut stages) = (self.cx.plan.gating.len(), 1);
        for o in &self.cx.plan.ops {
            n_jobs = n_jobs.max(o.job as usize + 1);
            stages = stages.max(o.stage as usize + 1);
        }
        // Per (job, stage): its count, then the next slot to fill.
        let fill = &mut self.plan_fill;
        fill.clear();
        fill.resize(n_jobs * stages, 0);
        for o in &self.cx.plan.ops {
            fill[o.job as usize * stages + o.stage as usize] += 1;
        }
        self.txns.live += self.cx.plan.ops.len() as u32;
        self.plan_jobs.clear();
        self.plan_jobs.resize(n_jobs, NONE);
        for j in 0..n_jobs {
            let counts = &mut self.plan_fill[j * stages..(j + 1) * stages];
            let n: u32 = counts.iter().sum();
            if n == 0 {
                continue;
            }
            let run = self.txns.alloc(n);
            let mut at = run;
            for k in counts.iter_mut() {
                (*k, at) = (at, at + *k);
            }
            self.plan_jobs[j] = self.jobs.insert(Job {
                cmd: NONE,
                gating: false,
                head: run,
                pending: 0,
                next_release: NONE,
                run,
                run_len: n,
            });
        }
        // Each table borrowed once, so that the loop keeps them in registers.
        let (blk, fill, items) = (
            &mut self.blk[..],
            &mut self.plan_fill[..],
            &mut self.txns.items[..],
        );
        let (flash, counters, plan_jobs, late_reads, page_mask) = (
            &mut self.flash,
            &mut self.counters,
            &self.plan_jobs[..],
            &mut self.late_reads,
            self.consts.page_mask,
        );
        // Paced GC: a non-gating job's GC and wear-levelling operations
        // yield to their die's foreground work (a gating job's would only
        // delay the command waiting for them). Copies of translation pages
        // (no logical page) do not: a host command's mapping read of a
        // page being moved waits for its copy, and DFTL reads a translation
        // page on nearly every command.
        let (gc_yields, gating) = (self.consts.gc_yields, &self.cx.plan.gating[..]);
        let (pending, planes) = (&mut self.pending_erases[..], self.consts.planes_per_die);
        let yields = |op: &crate::ftl::FlashOp| {
            gc_yields
                && matches!(op.purpose, Purpose::Gc | Purpose::WearLevel)
                && (op.kind == OpKind::Erase || op.lpn != crate::ftl::NO_LPN)
                && (c == NONE || !gating.get(op.job as usize).copied().unwrap_or(true))
        };
        for op in &self.cx.plan.ops {
            let (b, page) = flash.split(op.ppn);
            let bx = &mut blk[b as usize];
            let (epoch, plane) = (bx.plan_epoch, bx.plane);
            if op.kind == OpKind::Read {
                if epoch <= bx.exec_epoch + 1 {
                    bx.reads[epoch as usize & 1] += 1;
                } else {
                    count_late_read(bx, late_reads, b, epoch);
                }
            }
            // An erase notes the pages written before it (its trigger).
            let pg = flash.apply_at(op, b, page) as u16;
            counters.flash(op.kind, op.purpose);
            if op.kind == OpKind::Erase {
                blk[b as usize].plan_epoch += 1;
                if gc_yields {
                    let bx = &blk[b as usize];
                    pending[bx.flat_plane(planes)] += 1;
                }
            }
            let j = op.job as usize;
            let slot = &mut fill[j * stages + op.stage as usize];
            let t = *slot;
            *slot += 1;
            items[t as usize] = Txn {
                blk: b,
                pg,
                plane: if yields(op) { plane | YIELDS } else { plane },
                qkey: queue_key(op.kind, op.purpose, pg & page_mask),
                kind: op.kind,
                purpose: op.purpose,
                stage: op.stage,
                job: plan_jobs[j],
                next: NONE,
                epoch,
            };
        }
        // Jobs in plan order.
        let mut last_job = NONE;
        for j in 0..n_jobs {
            let job = self.plan_jobs[j];
            if job == NONE {
                continue;
            }
            let gating = c != NONE && self.cx.plan.gating.get(j).copied().unwrap_or(true);
            let jb = &mut self.jobs[job];
            jb.gating = gating;
            jb.cmd = if gating { c } else { NONE };
            if gating {
                self.front.cmds[c].pending += 1;
            } else {
                self.bg_jobs += 1;
            }
            if c != NONE {
                if last_job == NONE {
                    self.front.cmds[c].jobs = job;
                } else {
                    self.jobs[last_job].next_release = job;
                }
                last_job = job;
            } else {
                self.release_stage(job);
            }
        }
        self.cx.plan.clear();
    }

    /// The block state (`trigger_key` of its epoch and write pointer) at which
    /// a parked transaction may start.
    #[inline]
    pub(super) fn trigger(&self, t: u32) -> u64 {
        txn_trigger(&self.txns.items, t)
    }

    pub(super) fn release_stage(&mut self, j: u32) {
        let (mut t, end) = (self.jobs[j].head, self.jobs[j].run + self.jobs[j].run_len);
        if t == end {
            self.job_done(j);
            return;
        }
        let stage = self.txns[t].stage;
        let first = t;
        // Enqueueing never completes a transaction synchronously (completions
        // are events) and does not read the job, so its head and count can be
        // set after the stage is enqueued.
        while t < end && self.txns[t].stage == stage {
            self.enqueue(t);
            t += 1;
        }
        self.jobs[j].head = t;
        self.jobs[j].pending = t - first;
    }

    #[inline]
    pub(super) fn enqueue(&mut self, t: u32) {
        let tx = &self.txns[t];
        if tx.qkey & KIND_PURPOSE_MASK == TRANSLATION_READ && self.join_tp_read(t) {
            return;
        }
        let tx = &self.txns[t];
        let b = tx.blk as usize;
        let bx = &self.blk[b];
        let d = bx.die as usize;
        let ready = can_start(bx, tx);
        self.cx.die_load[d] += 1;
        if !ready {
            if self.consts.gc_yields
                && tx.kind == OpKind::Program
                && tx.plane & YIELDS == 0
                && tx.epoch != bx.exec_epoch
                && bx.late & STARVING == 0
            {
                // A foreground program waits for this block's erase: its
                // die serves GC first until the erase starts.
                self.blk[b].late |= STARVING;
                self.dies[d].starved += 1;
            }
            // Its block's earlier program/erase has not started yet: park it
            // there, after every parked transaction with the same or an earlier
            // trigger (usually at the tail: a block's programs are planned in
            // order).
            let k = self.trigger(t);
            let tail = self.blk[b].parked_tail;
            if tail == NONE || self.trigger(tail) <= k {
                self.txns[t].next = NONE;
                if tail == NONE {
                    self.blk[b].parked = t;
                } else {
                    self.txns[tail].next = t;
                }
                self.blk[b].parked_tail = t;
            } else {
                let (mut prev, mut w) = (NONE, self.blk[b].parked);
                while self.trigger(w) <= k {
                    prev = w;
                    w = self.txns[w].next;
                }
                self.txns[t].next = w;
                if prev == NONE {
                    self.blk[b].parked = t;
                } else {
                    self.txns[prev].next = t;
                }
            }
            return;
        }
        let die = &mut self.dies[d];
        die_push(die, self.consts.prio_reads, &self.txns[t], t);
        if die.phase == Phase::Idle {
            self.die_start(d as u32);
        } else if self.consts.die_hooks {
            self.queued_at_busy_die(d as u32, t);
        }
    }

    /// A translation-page read `t` is released: if a read of the same page
    /// (same block, page and erase epoch) is already queued or running, `t`
    /// waits for it instead of reading the page again (returns true), as
    /// MQSim's mapping unit does with the translation reads it has in flight;
    /// otherwise `t` becomes that page's read in flight (returns false).
    #[inline(never)]
    pub(super) fn join_tp_read(&mut self, t: u32) -> bool {
        let tx = self.txns[t];
        let key = (tx.blk as u64) << 16 | tx.pg as u64;
        match self.tp_reads.entry(key) {
            std::collections::hash_map::Entry::Occupied(mut e) => {
                let r = e.get_mut();
                if r.epoch != tx.epoch {
                    // Another version of the page: read on its own.
                    return false;
                }
                self.txns[t].next = r.waiters;
                r.waiters = t;
                // Counted as a flash read when planned; it is not one (a
                // read planned before a restart was counted in that phase).
                let k = &mut self.counters;
                let c = &mut k.flash_ops[OpKind::Read as usize][Purpose::Translation.index()];
                *c = c.saturating_sub(1);
                k.joined_translation_reads += 1;
                true
            }
            std::collections::hash_map::Entry::Vacant(e) => {
                e.insert(TpRead {
                    epoch: tx.epoch,
                    waiters: NONE,
                });
                false
            }
        }
    }

    /// The translation reads `txs` are done: their entries leave the
    /// in-flight map, and the transactions that waited for them (see
    /// `join_tp_read`) go to `tp_woken`, to be done after the batch's own.
    #[inline(never)]
    pub(super) fn take_tp_waiters(&mut self, txs: &[u32]) {
        debug_assert!(self.tp_woken.is_empty());
        for &t in txs {
            let tx = &self.txns[t];
            let key = (tx.blk as u64) << 16 | tx.pg as u64;
            if let std::collections::hash_map::Entry::Occupied(e) = self.tp_reads.entry(key) {
                if e.get().epoch == tx.epoch {
                    let mut w = e.remove().waiters;
                    while w != NONE {
                        self.tp_woken.push(w);
                        w = self.txns[w].next;
                    }
                }
            }
        }
    }

    /// Complete the waiters `take_tp_waiters` found.
    #[inline(never)]
    pub(super) fn finish_tp_waiters(&mut self) {
        let mut woken = std::mem::take(&mut self.tp_woken);
        for &w in &woken {
            self.read_done(w);
        }
        // Jobs of the woken transactions, read before any job is done (a
        // done job frees its transactions).
        for w in woken.iter_mut() {
            *w = self.txns[*w].job;
        }
        for &j in &woken {
            self.txn_done(j);
        }
        woken.clear();
        self.tp_woken = woken;
    }

    /// Erase `t`, popped from die `d`'s queue, may not start yet (reads of
    /// its block planned before it are still to run): park it on its block,
    /// where the last of those reads wakes it (`read_done`), and start the
    /// die's next batch instead.
    #[cold]
    #[inline(never)]
    pub(super) fn defer_erase(&mut self, d: u32, t: u32) {
        let b = self.txns[t].blk as usize;
        debug_assert!(
            self.trigger(t) == trigger_key(self.blk[b].exec_epoch, self.blk[b].exec_wp as u16),
            "a deferred erase is at its block's state"
        );
        // Its trigger is the block's state, the least any parked
        // transaction has: it goes to the head.
        let bx = &mut self.blk[b];
        self.txns[t].next = bx.parked;
        if bx.parked == NONE {
            bx.parked_tail = t;
        }
        bx.parked = t;
        // Still counted in its die's load, as every parked transaction is.
        self.die_start(d);
    }

    /// The erases of die `d`'s batch have started: each block's reads planned
    /// while it was two erases behind now count in its `reads`.
    #[cold]
    #[inline(never)]
    pub(super) fn erases_started(&mut self, d: u32) {
        let die = &self.dies[d as usize];
        let (batch, n) = (die.batch_txn, die.n as usize);
        for &t in &batch[..n] {
            let b = self.txns[t].blk;
            let bx = &mut self.blk[b as usize];
            if self.consts.gc_yields {
                self.pending_erases[bx.flat_plane(self.consts.planes_per_die)] -= 1;
            }
            if bx.late & STARVING != 0 {
                bx.late &= !STARVING;
                self.dies[d as usize].starved -= 1;
            }
            if bx.late & LATE_READS == 0 {
                continue;
            }
            let e = bx.exec_epoch + 1;
            if let Some(n) = self.late_reads.remove(&(b, e)) {
                bx.reads[e as usize & 1] += n;
            }
            let later = (e + 1..=bx.plan_epoch).any(|x| self.late_reads.contains_key(&(b, x)));
            bx.late = if later { LATE_READS } else { 0 };
        }
    }

    /// Transaction `t` was queued at busy die `d` with suspension or cache
    /// commands on: a high-priority read may suspend the die's program or
    /// erase; a program may go to the cache register of a die that
    /// programs.
    #[cold]
    #[inline(never)]
    pub(super) fn queued_at_busy_die(&mut self, d: u32, t: u32) {
        if self.consts.suspend_on && is_high_priority(&self.txns[t]) {
            self.maybe_suspend(d);
        }
        let die = &self.dies[d as usize];
        if self.consts.cache.program
            && self.txns[t].kind == OpKind::Program
            && die.phase == Phase::Array
            && die.kind == OpKind::Program
        {
            self.cache_load_next(d);
        }
    }

    /// Read `t` is done: its block's count of reads goes down, and an erase
    /// parked waiting for them wakes when it reaches zero.
    #[inline(always)]
    pub(super) fn read_done(&mut self, t: u32) {
        let tx = &self.txns[t];
        let b = tx.blk as usize;
        let bx = &mut self.blk[b];
        let c = &mut bx.reads[tx.epoch as usize & 1];
        *c -= 1;
        if *c == 0 && bx.parked != NONE {
            self.wake_erase(b);
        }
    }

    /// If block `b`'s first parked transaction is an erase that may start
    /// now, queue it on its die.
    #[inline(never)]
    pub(super) fn wake_erase(&mut self, b: usize) {
        let w = self.blk[b].parked;
        if self.txns[w].kind != OpKind::Erase || !txn_ready(&self.blk, &self.txns.items, w) {
            return;
        }
        let bx = &mut self.blk[b];
        bx.parked = self.txns[w].next;
        if bx.parked == NONE {
            bx.parked_tail = NONE;
        }
        self.txns[w].next = NONE;
        // Parked, it was counted in its die's load already.
        let d = bx.die as usize;
        let die = &mut self.dies[d];
        die_push(die, self.consts.prio_reads, &self.txns[w], w);
        if die.phase == Phase::Idle {
            self.die_start(d as u32);
        } else if self.consts.die_hooks {
            self.queued_at_busy_die(d as u32, w);
        }
    }

    /// A transaction of job `j` is done.
    #[inline(always)]
    pub(super) fn txn_done(&mut self, j: u32) {
        self.txns.live -= 1;
        let job = &mut self.jobs[j];
        job.pending -= 1;
        if job.pending == 0 {
            if job.head != job.run + job.run_len {
                self.release_stage(j);
            } else {
                self.job_done(j);
            }
        }
    }

    pub(super) fn job_done(&mut self, j: u32) {
        let job = self.jobs[j];
        self.jobs.remove(j);
        self.txns.release(job.run, job.run_len);
        if job.gating {
            self.cmd_job_done(job.cmd);
        } else {
            self.bg_jobs -= 1;
            if !self.wback.jobs.is_empty() {
                self.write_back_done(j);
            }
            self.maybe_background();
        }
    }

    // -------------------------------------------------------- report
}
