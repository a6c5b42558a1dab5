//! Flash transaction planning: an FTL plan becomes jobs and transactions,
//! parked per block in program order, released stage by stage.

use super::*;
use crate::ftl::FlashOp;

/// The [`TxnTables`] of command `c`'s plan in simulation `$sim`, each a
/// field borrowed on its own (a macro, not a method: the plan's own tables
/// stay free to borrow beside them).
macro_rules! txn_tables {
    ($sim:ident, $c:expr) => {
        TxnTables {
            flash: &mut $sim.flash,
            blk: &mut $sim.fl.blk[..],
            counters: &mut $sim.counters,
            late_reads: &mut $sim.fl.late_reads,
            pending: &mut $sim.fl.pending_erases[..],
            gating: &$sim.cx.plan.gating[..],
            page_mask: $sim.consts.page_mask,
            gc_yields: $sim.consts.gc_yields,
            planes: $sim.consts.planes_per_die,
            c: $c,
        }
    };
}

impl<F: Ftl, S: RequestSource, Q: IoScheduler, O: Observer, H: Hardware> Simulation<F, S, Q, O, H> {
    /// Turn the plan in `cx` into jobs and transactions owned by command `c`
    /// (NONE: background work, released at once).
    pub(super) fn commit_plan(&mut self, c: u32) {
        if !self.stats.flow_flash.owner.is_empty() {
            self.stats.flow_flash.count(&self.cx.plan.ops);
        }
        if let [op] = self.cx.plan.ops[..] {
            if op.job == 0 && op.stage == 0 && self.cx.plan.gating.len() <= 1 {
                return self.commit_one(c, &op);
            }
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
        let fill = &mut self.fl.plan_fill;
        fill.clear();
        fill.resize(n_jobs * stages, 0);
        for o in &self.cx.plan.ops {
            fill[o.job as usize * stages + o.stage as usize] += 1;
        }
        self.fl.txns.live += self.cx.plan.ops.len() as u32;
        self.fl.plan_jobs.clear();
        self.fl.plan_jobs.resize(n_jobs, NONE);
        for j in 0..n_jobs {
            let counts = &mut self.fl.plan_fill[j * stages..(j + 1) * stages];
            let n: u32 = counts.iter().sum();
            if n == 0 {
                continue;
            }
            let run = self.fl.txns.alloc(n);
            let mut at = run;
            for k in counts.iter_mut() {
                (*k, at) = (at, at + *k);
            }
            self.fl.plan_jobs[j] = self.fl.jobs.insert(Job {
                cmd: NONE,
                gating: false,
                head: run,
                pending: 0,
                next_release: NONE,
                run,
                run_len: n,
            });
        }
        let (fill, items, plan_jobs) = (
            &mut self.fl.plan_fill[..],
            &mut self.fl.txns.items[..],
            &self.fl.plan_jobs[..],
        );
        let mut tables = txn_tables!(self, c);
        for op in &self.cx.plan.ops {
            let j = op.job as usize;
            let slot = &mut fill[j * stages + op.stage as usize];
            let t = *slot;
            *slot += 1;
            items[t as usize] = tables.txn(op, plan_jobs[j]);
        }
        // Jobs in plan order.
        let mut last_job = NONE;
        for j in 0..n_jobs {
            let job = self.fl.plan_jobs[j];
            if job != NONE {
                self.own_job(c, j, job, &mut last_job);
            }
        }
        self.cx.plan.clear();
    }

    /// `commit_plan` of a plan of one operation, of job 0 and stage 0 (a
    /// host read or write of a page, without GC): the same jobs,
    /// transactions and state, without the counting sort.
    #[inline(always)]
    fn commit_one(&mut self, c: u32, op: &FlashOp) {
        self.fl.txns.live += 1;
        let run = self.fl.txns.alloc(1);
        let job = self.fl.jobs.insert(Job {
            cmd: NONE,
            gating: false,
            head: run,
            pending: 0,
            next_release: NONE,
            run,
            run_len: 1,
        });
        self.fl.plan_jobs.clear();
        self.fl.plan_jobs.push(job);
        let txn = txn_tables!(self, c).txn(op, job);
        self.fl.txns.items[run as usize] = txn;
        self.own_job(c, 0, job, &mut { NONE });
        self.cx.plan.clear();
    }

    /// Job `job`, the plan's `j`th, belongs to command `c` (gating it, if the
    /// plan says so) or to the background; `last_job` is the command's
    /// job before it in plan order (released after it), NONE if none.
    #[inline(always)]
    fn own_job(&mut self, c: u32, j: usize, job: u32, last_job: &mut u32) {
        let gating = c != NONE && self.cx.plan.gating.get(j).copied().unwrap_or(true);
        let jb = &mut self.fl.jobs[job];
        jb.gating = gating;
        jb.cmd = if gating { c } else { NONE };
        if gating {
            self.front.cmds[c].pending += 1;
        } else {
            self.ctl.bg_jobs += 1;
        }
        if c != NONE {
            if *last_job == NONE {
                self.front.cmds[c].jobs = job;
            } else {
                self.fl.jobs[*last_job].next_release = job;
            }
            *last_job = job;
        } else {
            self.release_stage(job);
        }
    }

    pub(super) fn release_stage(&mut self, j: u32) {
        let (mut t, end) = (
            self.fl.jobs[j].head,
            self.fl.jobs[j].run + self.fl.jobs[j].run_len,
        );
        if t == end {
            self.job_done(j);
            return;
        }
        let stage = self.fl.txns[t].stage;
        let first = t;
        // Enqueueing never completes a transaction synchronously (completions
        // are events) and does not read the job, so its head and count can be
        // set after the stage is enqueued.
        while t < end && self.fl.txns[t].stage == stage {
            self.enqueue(t);
            t += 1;
        }
        self.fl.jobs[j].head = t;
        self.fl.jobs[j].pending = t - first;
    }

    #[inline]
    pub(super) fn enqueue(&mut self, t: u32) {
        let tx = &self.fl.txns[t];
        if tx.qkey & KIND_PURPOSE_MASK == TRANSLATION_READ && self.join_tp_read(t) {
            return;
        }
        let tx = &self.fl.txns[t];
        let b = tx.blk as usize;
        let bx = &self.fl.blk[b];
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
                self.fl.blk[b].late |= STARVING;
                self.fl.dies[d].starved += 1;
            }
            // Its block's earlier program/erase has not started yet: park it
            // there.
            self.fl.park(t, b);
            return;
        }
        let die = &mut self.fl.dies[d];
        die_push(die, self.consts.prio_reads, &self.fl.txns[t], t);
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
        let tx = self.fl.txns[t];
        let key = (tx.blk as u64) << 16 | tx.pg as u64;
        match self.fl.tp_reads.entry(key) {
            std::collections::hash_map::Entry::Occupied(mut e) => {
                let r = e.get_mut();
                if r.epoch != tx.epoch {
                    // Another version of the page: read on its own.
                    return false;
                }
                self.fl.txns[t].next = r.waiters;
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

    /// Complete the waiters `take_tp_waiters` found.
    #[inline(never)]
    pub(super) fn finish_tp_waiters(&mut self) {
        let mut woken = std::mem::take(&mut self.fl.tp_woken);
        for &w in &woken {
            self.read_done(w);
        }
        // Jobs of the woken transactions, read before any job is done (a
        // done job frees its transactions).
        for w in woken.iter_mut() {
            *w = self.fl.txns[*w].job;
        }
        for &j in &woken {
            self.txn_done(j);
        }
        woken.clear();
        self.fl.tp_woken = woken;
    }

    /// Erase `t`, popped from die `d`'s queue, may not start yet (reads of
    /// its block planned before it are still to run): park it on its block,
    /// where the last of those reads wakes it (`read_done`), and start the
    /// die's next batch instead.
    #[cold]
    #[inline(never)]
    pub(super) fn defer_erase(&mut self, d: u32, t: u32) {
        let b = self.fl.txns[t].blk as usize;
        debug_assert!(
            self.fl.trigger(t)
                == trigger_key(self.fl.blk[b].exec_epoch, self.fl.blk[b].exec_wp as u16),
            "a deferred erase is at its block's state"
        );
        // Its trigger is the block's state, the least any parked
        // transaction has: it goes to the head.
        let bx = &mut self.fl.blk[b];
        self.fl.txns[t].next = bx.parked;
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
        let die = &self.fl.dies[d as usize];
        let (batch, n) = (die.batch_txn, die.n as usize);
        for &t in &batch[..n] {
            let b = self.fl.txns[t].blk;
            let bx = &mut self.fl.blk[b as usize];
            if self.consts.gc_yields {
                self.fl.pending_erases[bx.flat_plane(self.consts.planes_per_die)] -= 1;
            }
            if bx.late & STARVING != 0 {
                bx.late &= !STARVING;
                self.fl.dies[d as usize].starved -= 1;
            }
            if bx.late & LATE_READS == 0 {
                continue;
            }
            let e = bx.exec_epoch + 1;
            if let Some(n) = self.fl.late_reads.remove(&(b, e)) {
                bx.reads[e as usize & 1] += n;
            }
            let later = (e + 1..=bx.plan_epoch).any(|x| self.fl.late_reads.contains_key(&(b, x)));
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
        if self.consts.suspend_on && is_high_priority(&self.fl.txns[t]) {
            self.maybe_suspend(d);
        }
        let die = &self.fl.dies[d as usize];
        if self.consts.cache.program
            && self.fl.txns[t].kind == OpKind::Program
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
        let tx = &self.fl.txns[t];
        let b = tx.blk as usize;
        let bx = &mut self.fl.blk[b];
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
        let w = self.fl.blk[b].parked;
        if self.fl.txns[w].kind != OpKind::Erase || !txn_ready(&self.fl.blk, &self.fl.txns.items, w)
        {
            return;
        }
        let bx = &mut self.fl.blk[b];
        bx.parked = self.fl.txns[w].next;
        if bx.parked == NONE {
            bx.parked_tail = NONE;
        }
        self.fl.txns[w].next = NONE;
        // Parked, it was counted in its die's load already.
        let d = bx.die as usize;
        let die = &mut self.fl.dies[d];
        die_push(die, self.consts.prio_reads, &self.fl.txns[w], w);
        if die.phase == Phase::Idle {
            self.die_start(d as u32);
        } else if self.consts.die_hooks {
            self.queued_at_busy_die(d as u32, w);
        }
    }

    /// A transaction of job `j` is done.
    #[inline(always)]
    pub(super) fn txn_done(&mut self, j: u32) {
        self.fl.txns.live -= 1;
        let job = &mut self.fl.jobs[j];
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
        let job = self.fl.jobs[j];
        self.fl.jobs.remove(j);
        self.fl.txns.release(job.run, job.run_len);
        if job.gating {
            self.cmd_job_done(job.cmd);
        } else {
            self.ctl.bg_jobs -= 1;
            if !self.ctl.wback.jobs.is_empty() {
                self.write_back_done(j);
            }
            self.maybe_background();
        }
    }

    // -------------------------------------------------------- report
}

/// What turning a plan's operations into transactions touches
/// (`Simulation::commit_plan`), each table borrowed once, so that a loop
/// over the plan keeps them in registers.
pub(super) struct TxnTables<'a> {
    flash: &'a mut FlashArray,
    blk: &'a mut [BlockExec],
    counters: &'a mut Counters,
    late_reads: &'a mut std::collections::HashMap<(u32, u32), u32>,
    pending: &'a mut [u32],
    /// The plan's gating flags by job.
    gating: &'a [bool],
    page_mask: u16,
    gc_yields: bool,
    planes: u32,
    /// The command that owns the plan (NONE: background work).
    c: u32,
}

impl TxnTables<'_> {
    /// Apply `op` to the flash array, in the FTL's order (its state order),
    /// recording its block epoch, so that the dies execute programs and
    /// erases of a block in that same order; its transaction, of job `job`.
    #[inline(always)]
    fn txn(&mut self, op: &FlashOp, job: u32) -> Txn {
        // Paced GC: a non-gating job's GC and wear-levelling operations
        // yield to their die's foreground work (a gating job's would only
        // delay the command waiting for them). Copies of translation pages
        // (no logical page) do not: a host command's mapping read of a
        // page being moved waits for its copy, and DFTL reads a translation
        // page on nearly every command.
        let yields = self.gc_yields
            && matches!(op.purpose, Purpose::Gc | Purpose::WearLevel)
            && (op.kind == OpKind::Erase || op.lpn != crate::ftl::NO_LPN)
            && (self.c == NONE || !self.gating.get(op.job as usize).copied().unwrap_or(true));
        let (b, page) = self.flash.split(op.ppn);
        let bx = &mut self.blk[b as usize];
        let (epoch, plane) = (bx.plan_epoch, bx.plane);
        if op.kind == OpKind::Read {
            if epoch <= bx.exec_epoch + 1 {
                bx.reads[epoch as usize & 1] += 1;
            } else {
                count_late_read(bx, self.late_reads, b, epoch);
            }
        }
        // An erase notes the pages written before it (its trigger).
        let pg = self.flash.apply_at(op, b, page) as u16;
        self.counters.flash(op.kind, op.purpose);
        if op.kind == OpKind::Erase {
            let bx = &mut self.blk[b as usize];
            bx.plan_epoch += 1;
            if self.gc_yields {
                self.pending[bx.flat_plane(self.planes)] += 1;
            }
        }
        Txn {
            blk: b,
            pg,
            plane: if yields { plane | YIELDS } else { plane },
            qkey: queue_key(op.kind, op.purpose, pg & self.page_mask),
            kind: op.kind,
            purpose: op.purpose,
            stage: op.stage,
            job,
            next: NONE,
            epoch,
        }
    }
}
