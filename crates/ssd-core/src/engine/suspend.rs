//! Program/erase suspension for reads (`Nand::suspend`; Wu & He, FAST 2012).
//!
//! A high-priority read queued at a die whose program or erase is under
//! way (its array phase begun, or its command and data on the channel)
//! asks the NAND model whether to suspend it. If so, with `at` the later of
//! now and the array phase's start:
//! 1. the operation's first piece, `[array start, at + t_suspend)`, is
//!    reported to the observer (with its transfer if not yet reported), and
//!    the die enters `Phase::Suspending` until `at + t_suspend`;
//! 2. the batch is set aside (`DieSuspension::batch`), and its `DieDone`
//!    still in the queue is noted as stale (the queue deletes nothing: the
//!    event is recognised by its time and ignored when it fires);
//! 3. the die then starts only high-priority reads, one batch after
//!    another (no multi-plane partners while suspended, and none that
//!    would read a page of the suspended program); when none is left, the
//!    operation resumes: its second piece is `[now, now + t_resume +
//!    remaining)` (`remaining` counted from `at`), ending with a `DieDone`
//!    as any operation.
//!
//! Block order is untouched: suspension never reorders the *starts* of a
//! block's programs and erases, and a read never reads a page whose
//! program is suspended (the die resumes first).
//!
//! Cost when no model suspends: one `bool` test per batch start and per
//! read queued at a busy die.

use super::*;

/// One die's suspension state.
#[derive(Default)]
pub(super) struct DieSuspension {
    /// The set-aside batch, if an operation is suspended.
    batch: Option<Suspended>,
    /// Times the running (or set-aside) operation has been suspended.
    times: u32,
    /// Times of `DieDone` events left in the queue by suspensions.
    stale: Vec<SimTime>,
}

impl DieSuspension {
    #[inline]
    pub(super) fn is_suspended(&self) -> bool {
        self.batch.is_some()
    }
}

/// A suspended program or erase batch.
struct Suspended {
    kind: OpKind,
    purpose: Purpose,
    n: u8,
    batch_job: [u32; MAX_PLANES],
    batch_txn: [u32; MAX_PLANES],
    blk: u32,
    pg: u16,
    /// Array time left when it was suspended.
    remaining: Dur,
    resume: Dur,
}

impl<F: Ftl, S: RequestSource, Q: IoScheduler, O: Observer, H: Hardware> Simulation<F, S, Q, O, H> {
    /// A high-priority read was queued at busy die `d`: suspend its running
    /// program or erase if the NAND model says so.
    #[cold]
    #[inline(never)]
    pub(super) fn maybe_suspend(&mut self, d: u32) {
        let now = self.now;
        let die = &self.fl.dies[d as usize];
        let ds = &self.fl.susp[d as usize];
        if die.phase != Phase::Array
            || die.kind == OpKind::Read
            || ds.batch.is_some()
            || die.array_end <= now
        {
            return;
        }
        // An operation whose command or data is still on the channel is
        // suspended as its array phase begins.
        let at = now.max(die.array_start);
        let remaining = Dur(die.array_end.0 - at.0);
        let Some(cost) = self.hw.nand.suspend(die.kind, remaining, ds.times) else {
            return;
        };
        let old_end = die.array_end;
        let stop = at + cost.suspend;
        // The first piece ends when the die can take a read.
        self.fl.dies[d as usize].array_end = stop;
        self.report_array_op(d);
        let die = &mut self.fl.dies[d as usize];
        die.phase = Phase::Suspending;
        let ds = &mut self.fl.susp[d as usize];
        ds.times += 1;
        ds.stale.push(old_end);
        ds.batch = Some(Suspended {
            kind: die.kind,
            purpose: die.purpose,
            n: die.n,
            batch_job: die.batch_job,
            batch_txn: die.batch_txn,
            blk: die.blk,
            pg: die.pg,
            remaining,
            resume: cost.resume,
        });
        self.counters.suspensions += 1;
        self.q.push(stop, Ev::DieDone(d));
    }

    /// `DieDone` for die `d` at `now` while suspension is on: whether it is
    /// one a suspension left stale (then it is consumed and ignored).
    #[cold]
    #[inline(never)]
    pub(super) fn stale_die_done(&mut self, d: u32) -> bool {
        let now = self.now;
        let st = &mut self.fl.susp[d as usize].stale;
        match st.iter().position(|&t| t == now) {
            Some(i) => {
                st.swap_remove(i);
                true
            }
            None => false,
        }
    }

    /// Die `d` has finished suspending: it is free for reads (its busy time
    /// so far is the operation's).
    #[cold]
    #[inline(never)]
    pub(super) fn suspended_now(&mut self, d: u32) {
        let now = self.now;
        let die = &mut self.fl.dies[d as usize];
        die.busy_ns += now.0 - die.batch_start.0;
        die.phase = Phase::Idle;
        self.die_start(d);
    }

    /// With an operation suspended on idle die `d`: whether its next batch
    /// must be the operation's resumption (no high-priority read is queued,
    /// or the next would read a page the suspended program writes).
    #[cold]
    #[inline(never)]
    pub(super) fn must_resume(&self, d: u32) -> bool {
        let Some(s) = &self.fl.susp[d as usize].batch else {
            return false;
        };
        let die = &self.fl.dies[d as usize];
        if die.hi.is_empty() {
            return true;
        }
        let tx = &self.fl.txns.items[die.hi.get(0) as usize];
        s.kind == OpKind::Program
            && tx.pg == s.pg
            && s.batch_txn[..s.n as usize]
                .iter()
                .any(|&t| self.fl.txns.items[t as usize].blk == tx.blk)
    }

    /// Resume die `d`'s suspended operation now.
    #[cold]
    #[inline(never)]
    pub(super) fn resume(&mut self, d: u32) {
        let now = self.now;
        let s = self.fl.susp[d as usize]
            .batch
            .take()
            .expect("a suspended operation to resume");
        let die = &mut self.fl.dies[d as usize];
        debug_assert!(die.phase == Phase::Idle);
        die.kind = s.kind;
        die.purpose = s.purpose;
        die.n = s.n;
        die.batch_job = s.batch_job;
        die.batch_txn = s.batch_txn;
        die.blk = s.blk;
        die.pg = s.pg;
        die.batch_start = now;
        die.phase = Phase::Array;
        die.array_start = now;
        die.array_end = now + s.resume + s.remaining;
        // Its transfer was reported with the first piece.
        die.unreported = OP;
        let end = die.array_end;
        self.q.push(end, Ev::DieDone(d));
    }

    /// Die `d`'s program or erase is done: the next starts unsuspended.
    #[cold]
    #[inline(never)]
    pub(super) fn operation_done(&mut self, d: u32) {
        self.fl.susp[d as usize].times = 0;
    }
}
