//! The discrete-event engine: one simulation, one thread, one event queue.
//!
//! # Event queue contract
//! Events are ordered by `(time, insertion sequence)`: two events at the same
//! nanosecond run in the order they were scheduled. Nothing else (no hash order,
//! no wall clock) decides anything, so a run is a pure function of
//! (config, workload, seed).
//!
//! # Timing styles
//! * Dies and channels: a die's batch goes command/data-in on the channel ->
//!   array operation (tR/tPROG/tBERS) -> data-out on the channel. The command
//!   and data-in transfers are booked busy-until on the channel when it is
//!   granted, and the array operation's end is scheduled at once (one event,
//!   `DieDone`); a channel that frees while dies wait for it gets a `ChanFree`
//!   event. The data-out transfer ends with `ChanDone`, which completes the batch.
//! * Controller CPU and host link: **busy-until booking**. Work is booked at
//!   `max(now, free_at)` and the resulting completion is sent through the queue.
//!
//! # The life of a request
//! workload source -> I/O scheduler -> (device queue slot) -> host link
//! (command, write data) -> CPU (command + FTL work, DRAM accesses) -> FTL plan
//! (functional state changes happen here, at once) -> per-die queues -> channel
//! and die phases -> last gating operation done -> host link (read data) ->
//! completion of every host request merged into the command.

use crate::addr::{ChannelId, DieId, FastDiv, Lpn};
use crate::config::{FlushPolicy, Precondition, Settings};
use crate::ftl::{FlashArray, Ftl, FtlCtx, FtlStats, FtlWork, OpKind, Purpose};
use crate::observer::{Observer, XferKind};
use crate::rng::{SimRng, SimRngExt};
use crate::sched::{IoScheduler, SchedReq};
use crate::stats::*;
use crate::units::{Dur, SimTime};
use crate::workload::{HostEvent, HostRequest, IoOp, RequestSource, SourceError, Timing, SECTOR};
use rand::Rng;
use std::collections::VecDeque;
use std::time::Instant;

const NONE: u32 = u32::MAX;
const MAX_PLANES: usize = 16;
/// Requests a submitter's plug holds before it is flushed (Linux's
/// `BLK_MAX_REQUEST_COUNT`).
const PLUG_MAX: usize = 16;

/// Bucket of the elevator queue-length distribution: 0, 1, 2-3, 4-7, ...,
/// 256 and more.
#[inline]
fn qd_bucket(len: u64) -> usize {
    if len == 0 {
        0
    } else {
        (64 - len.leading_zeros() as usize).min(QD_BUCKETS - 1)
    }
}

/// Errors a run can end with (bad input discovered while running).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum SimError {
    /// Its message already names the file and line (or option), so it is not
    /// also a `source()`: an error chain would print it twice.
    #[error("workload: {0}")]
    Source(SourceError),
    #[error("request at sector {lba} (+{sectors}) is beyond the logical capacity of {capacity_sectors} sectors")]
    OutOfRange {
        lba: u64,
        sectors: u32,
        capacity_sectors: u64,
    },
    #[error("configuration: {0}")]
    Config(String),
    #[error(
        "a request arrives at {:.3e} s, beyond the simulated time range (2^62 ns, about 146 years)",
        arrival.0 as f64 / 1e9
    )]
    TimeRange { arrival: SimTime },
}

impl From<SourceError> for SimError {
    fn from(e: SourceError) -> Self {
        SimError::Source(e)
    }
}

// ------------------------------------------------------------------ events

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Ev {
    Arrival,
    CmdReady(u32),
    ChanDone(u32),
    ChanFree(u32),
    DieDone(u32),
    CmdComplete(u32),
    SchedWake,
    /// End of an instant at which open-loop requests were plugged.
    PlugFlush,
    /// A reactive source's timer (`RequestSource::wake_at`).
    HostWake,
}

impl Ev {
    /// The event as 32 bits: its kind in the low 3, its index above them.
    #[inline(always)]
    fn code(self) -> u32 {
        let (k, i) = match self {
            Ev::Arrival => (0, 0),
            Ev::HostWake => (0, 1),
            Ev::CmdReady(c) => (1, c),
            Ev::ChanDone(c) => (2, c),
            Ev::ChanFree(c) => (3, c),
            Ev::DieDone(d) => (4, d),
            Ev::CmdComplete(c) => (5, c),
            Ev::SchedWake => (6, 0),
            Ev::PlugFlush => (7, 0),
        };
        assert!(
            i < 1 << 29,
            "event index {i} does not fit the event queue's 29 bits"
        );
        k | i << 3
    }
    #[inline(always)]
    fn from_code(x: u32) -> Ev {
        let i = x >> 3;
        match x & 7 {
            0 if i == 0 => Ev::Arrival,
            0 => Ev::HostWake,
            1 => Ev::CmdReady(i),
            2 => Ev::ChanDone(i),
            3 => Ev::ChanFree(i),
            4 => Ev::DieDone(i),
            5 => Ev::CmdComplete(i),
            6 => Ev::SchedWake,
            _ => Ev::PlugFlush,
        }
    }
}

/// A pending event and its place in the order, as one integer: time (high 64
/// bits), insertion sequence number (32), `Ev::code` (32). One compare
/// orders two events by (time, sequence), and an entry is 16 bytes.
type Entry = u128;

#[inline(always)]
fn entry(t: SimTime, seq: u32, ev: Ev) -> Entry {
    (t.0 as u128) << 64 | (seq as u128) << 32 | ev.code() as u128
}

#[inline(always)]
fn unpack(e: Entry) -> (SimTime, Ev) {
    (SimTime((e >> 64) as u64), Ev::from_code(e as u32))
}

/// A priority queue of events ordered by (time, insertion sequence): a sorted
/// run for die and channel events, plus two FIFO streams for events whose
/// times never decrease in push order (CPU completions and host-link
/// completions are booked busy-until, so each stream is already sorted). Pop
/// takes the least (time, seq) of the three heads, so the order is exactly
/// that of one queue.
///
/// The sorted run beats a heap here: it holds about one event per busy die
/// and channel (seven on average on the default device), a new event usually
/// falls at or near its end (it is booked a transfer or array time ahead),
/// and the least is popped by moving a head index.
///
/// Sequence numbers are 32 bits: before they would run out, the pending
/// events are renumbered 1, 2, ... in their order (`renumber`), which keeps
/// every comparison among them and with later events as it was.
#[derive(Debug)]
struct EventQueue {
    /// Pending events sorted from `head` on (the slots before `head` were
    /// popped; they are reclaimed when the vector is full, or all at once
    /// when it empties).
    sorted: Vec<Entry>,
    head: usize,
    fifo: [VecDeque<Entry>; 2],
    /// The least entry at the front of the two FIFO streams (`u128::MAX` when
    /// both are empty), so that a pop from the sorted run looks at one key.
    fifo_min: u128,
    seq: u32,
    /// The sequence number at which `renumber` runs (`u32::MAX`; tests lower it).
    seq_limit: u32,
}
impl Default for EventQueue {
    fn default() -> Self {
        EventQueue {
            sorted: Vec::with_capacity(64),
            head: 0,
            fifo: Default::default(),
            fifo_min: u128::MAX,
            seq: 0,
            seq_limit: u32::MAX,
        }
    }
}
impl EventQueue {
    #[inline(always)]
    fn next_seq(&mut self) -> u32 {
        if self.seq >= self.seq_limit {
            self.renumber();
        }
        self.seq += 1;
        self.seq
    }
    /// Number the pending events 1, 2, ... in their (time, sequence) order.
    #[cold]
    fn renumber(&mut self) {
        let mut seqs: Vec<u32> = self.sorted[self.head..]
            .iter()
            .chain(self.fifo[0].iter())
            .chain(self.fifo[1].iter())
            .map(|&e| (e >> 32) as u32)
            .collect();
        seqs.sort_unstable();
        let re = |e: &mut Entry| {
            let r = seqs
                .binary_search(&((*e >> 32) as u32))
                .expect("a pending sequence number") as u128
                + 1;
            *e = *e & !((u32::MAX as u128) << 32) | r << 32;
        };
        self.sorted[self.head..].iter_mut().for_each(re);
        self.fifo.iter_mut().for_each(|f| f.iter_mut().for_each(re));
        let front = |f: &VecDeque<Entry>| f.front().copied().unwrap_or(u128::MAX);
        self.fifo_min = front(&self.fifo[0]).min(front(&self.fifo[1]));
        self.seq = seqs.len() as u32;
    }
    #[inline(always)]
    fn push(&mut self, t: SimTime, ev: Ev) {
        let seq = self.next_seq();
        let e = entry(t, seq, ev);
        let v = &mut self.sorted;
        // Full: drop the popped slots if they are half of it, else grow.
        if v.len() == v.capacity() && self.head * 2 >= v.len() {
            v.drain(..self.head);
            self.head = 0;
        }
        // Insertion from the end: move later events up one slot at a time for
        // a few slots, then bisect what is left and move the rest at once.
        // The new event's sequence number is the largest pending, so it goes
        // after every event of its time or earlier: times alone decide.
        v.push(e);
        let mut i = v.len() - 1;
        let mut moved = 0;
        let later = |x: Entry| (x >> 64) as u64 > t.0;
        while i > self.head && later(v[i - 1]) {
            if moved == 8 {
                let at = self.head + v[self.head..i].partition_point(|&x| !later(x));
                v.copy_within(at..i, at + 1);
                i = at;
                break;
            }
            v[i] = v[i - 1];
            i -= 1;
            moved += 1;
        }
        v[i] = e;
    }
    /// Push onto FIFO stream `k`; `t` must not be earlier than its last event.
    #[inline]
    fn push_fifo(&mut self, k: usize, t: SimTime, ev: Ev) {
        let seq = self.next_seq();
        let e = entry(t, seq, ev);
        debug_assert!(
            self.fifo[k].back().is_none_or(|b| b >> 64 <= e >> 64),
            "event stream {k} went back in time"
        );
        // A stream's front changes only when it was empty (its keys increase).
        if self.fifo[k].is_empty() {
            self.fifo_min = self.fifo_min.min(e);
        }
        self.fifo[k].push_back(e);
    }
    /// The time of the least event, if any (as `pop` finds it).
    fn peek_time(&self) -> Option<SimTime> {
        let h = self.sorted.get(self.head).copied().unwrap_or(u128::MAX);
        let m = h.min(self.fifo_min);
        (m != u128::MAX).then(|| unpack(m).0)
    }
    #[inline]
    fn pop(&mut self) -> Option<(SimTime, Ev)> {
        let h = self.sorted.get(self.head).copied().unwrap_or(u128::MAX);
        if self.fifo_min < h {
            return Some(self.pop_fifo());
        }
        self.pop_sorted()
    }
    /// Pop the FIFO stream front holding `fifo_min` (there is one).
    #[inline(never)]
    fn pop_fifo(&mut self) -> (SimTime, Ev) {
        let front = |f: &VecDeque<Entry>| f.front().copied().unwrap_or(u128::MAX);
        let k = (front(&self.fifo[0]) != self.fifo_min) as usize;
        let e = self.fifo[k]
            .pop_front()
            .expect("fifo_min is a stream's front");
        self.fifo_min = front(&self.fifo[0]).min(front(&self.fifo[1]));
        unpack(e)
    }
    #[inline]
    fn pop_sorted(&mut self) -> Option<(SimTime, Ev)> {
        let e = *self.sorted.get(self.head)?;
        self.head += 1;
        if self.head == self.sorted.len() {
            self.sorted.clear();
            self.head = 0;
        }
        Some(unpack(e))
    }
}

/// A block state (erase epoch, write pointer) as one ordered integer: a
/// parked transaction's trigger, compared with its block's state.
#[inline]
fn trigger_key(epoch: u32, wp: u16) -> u64 {
    (epoch as u64) << 16 | wp as u64
}

/// May `tx` start now, its block being in state `b`? Programs and erases of
/// a block run in the order the FTL planned them; a read waits for the
/// program of its page.
#[inline(always)]
fn can_start(b: &BlockExec, tx: &Txn) -> bool {
    if b.exec_epoch != tx.epoch {
        return false;
    }
    let page = tx.pg as u32;
    match tx.kind {
        OpKind::Read => b.exec_wp > page,
        OpKind::Program => b.exec_wp == page,
        OpKind::Erase => b.exec_wp == page && b.reads[tx.epoch as usize & 1] == 0,
    }
}

/// May transaction `t` start now (`can_start`)? On the fields it reads, so
/// that a caller may hold a die while it asks.
#[inline(always)]
fn txn_ready(blk: &[BlockExec], txns: &[Txn], t: u32) -> bool {
    let tx = &txns[t as usize];
    can_start(&blk[tx.blk as usize], tx)
}

/// The block state at which `tx` may start (see [`Simulation::trigger`]).
#[inline(always)]
fn trigger_of(tx: &Txn) -> u64 {
    let x = match tx.kind {
        OpKind::Read => tx.pg + 1,
        OpKind::Program | OpKind::Erase => tx.pg,
    };
    trigger_key(tx.epoch, x)
}

/// [`Simulation::trigger`] on the transactions alone.
#[inline(always)]
fn txn_trigger(txns: &[Txn], t: u32) -> u64 {
    trigger_of(&txns[t as usize])
}

/// Transaction `t` starts: its block's state moves on, and the transactions
/// parked on the block that may start now are added to `unparked` (the
/// caller queues them on their die).
#[inline(always)]
fn txn_started(blk: &mut [BlockExec], txns: &mut [Txn], unparked: &mut Vec<u32>, t: u32) {
    let w = txn_started_one(blk, txns, unparked, t);
    if w != NONE {
        unparked.push(w);
    }
}

/// [`txn_started`], except that a lone woken transaction (the usual case) is
/// returned instead of added to `unparked` (NONE if it woke none or several).
#[inline(always)]
fn txn_started_one(
    blk: &mut [BlockExec],
    txns: &mut [Txn],
    unparked: &mut Vec<u32>,
    t: u32,
) -> u32 {
    let tx = &txns[t as usize];
    let b = tx.blk as usize;
    let bx = &mut blk[b];
    match tx.kind {
        OpKind::Program => bx.exec_wp += 1,
        OpKind::Erase => {
            bx.exec_epoch += 1;
            bx.exec_wp = 0;
        }
        OpKind::Read => return NONE,
    }
    // Wake the transactions parked on this block that may now start: exactly
    // those whose trigger is the block's new (epoch, write pointer). The
    // list is sorted by trigger (stably: parking order among equal ones),
    // and the block's state passes through every trigger in turn, so they
    // are the ones at its head.
    let w = bx.parked;
    if w == NONE {
        return NONE;
    }
    let state = trigger_key(bx.exec_epoch, bx.exec_wp as u16);
    debug_assert!(
        txn_trigger(txns, w) >= state,
        "a parked transaction was passed by on block {b}"
    );
    if txn_trigger(txns, w) != state {
        return NONE;
    }
    let mut next = txns[w as usize].next;
    txns[w as usize].next = NONE;
    let lone = next == NONE || txn_trigger(txns, next) != state;
    if !lone {
        // Several woke: `die_start` pops `unparked`, so they go in newest
        // first, for the oldest-parked to be queued first.
        let start = unparked.len();
        unparked.push(w);
        while next != NONE && txn_trigger(txns, next) == state {
            let n2 = txns[next as usize].next;
            txns[next as usize].next = NONE;
            unparked.push(next);
            next = n2;
        }
        unparked[start..].reverse();
    }
    bx.parked = next;
    if next == NONE {
        bx.parked_tail = NONE;
    }
    if lone {
        w
    } else {
        NONE
    }
}

/// Start the multi-plane partners of `h`, the transaction just popped from
/// its die's queue `q`: among the first `PARTNER_WINDOW` queued, in queue
/// order, those with `h`'s kind, purpose and page offset (any offset for an
/// erase) that may start now, each on a plane not yet in the batch, up to
/// `planes` transactions in all. Their jobs go to `jobs[1..]`. Returns the
/// batch size and the partners' queue positions as a bit set (the caller
/// removes them from `q`).
#[inline(always)]
fn start_partners(
    q: &DieQueue,
    txns: &mut [Txn],
    blk: &mut [BlockExec],
    unparked: &mut Vec<u32>,
    h: &Txn,
    planes: usize,
    jobs: &mut [u32; MAX_PLANES],
    txs: &mut [u32; MAX_PLANES],
) -> (usize, u32) {
    let mut m = q.matches(h.qkey);
    if m == 0 {
        return (1, 0);
    }
    // Queue keys may be equal where batch keys are not (large blocks).
    let hkey = batch_key(h.kind, h.purpose, h.pg);
    let (mut used, mut n, mut picks) = (1u32 << h.plane, 1usize, 0u32);
    while m != 0 {
        let i = m.trailing_zeros() as usize;
        m &= m - 1;
        let t = q.get(i);
        let tx = &txns[t as usize];
        if used & (1 << tx.plane) != 0
            || batch_key(tx.kind, tx.purpose, tx.pg) != hkey
            || !txn_ready(blk, txns, t)
        {
            continue;
        }
        used |= 1 << tx.plane;
        jobs[n] = tx.job;
        txs[n] = t;
        n += 1;
        picks |= 1 << i;
        txn_started(blk, txns, unparked, t);
        if n >= planes {
            break;
        }
    }
    (n, picks)
}

/// Queue ready transaction `t` (`tx`) on `die`: host and translation reads
/// ahead of everything else where reads are preferred.
#[inline(always)]
fn die_push(die: &mut Die, prio_reads: bool, tx: &Txn, t: u32) {
    let key = tx.qkey;
    if prio_reads
        && tx.kind == OpKind::Read
        && matches!(tx.purpose, Purpose::Host | Purpose::Translation)
    {
        die.hi.push(t, key);
    } else {
        die.lo.push(t, key);
    }
}

// ------------------------------------------------------------------ slab

#[derive(Debug)]
struct Slab<T> {
    items: Vec<T>,
    free: Vec<u32>,
    live: u32,
}
impl<T> Default for Slab<T> {
    fn default() -> Self {
        Slab {
            items: Vec::new(),
            free: Vec::new(),
            live: 0,
        }
    }
}
impl<T> Slab<T> {
    #[inline]
    fn insert(&mut self, t: T) -> u32 {
        self.live += 1;
        if let Some(i) = self.free.pop() {
            self.items[i as usize] = t;
            i
        } else {
            self.items.push(t);
            (self.items.len() - 1) as u32
        }
    }
    #[inline]
    fn remove(&mut self, i: u32) {
        self.live -= 1;
        self.free.push(i);
    }
}
impl<T> std::ops::Index<u32> for Slab<T> {
    type Output = T;
    #[inline]
    fn index(&self, i: u32) -> &T {
        &self.items[i as usize]
    }
}
impl<T> std::ops::IndexMut<u32> for Slab<T> {
    #[inline]
    fn index_mut(&mut self, i: u32) -> &mut T {
        &mut self.items[i as usize]
    }
}

// ------------------------------------------------------------------ state

/// The transactions: each job's are one contiguous run, allocated when the
/// job is planned and freed when it is done (runs of 2^k slots, recycled per
/// size class). A GC job plans a hundred transactions at once; from a
/// per-slot free list they would land on as many scattered cache lines.
#[derive(Debug, Default)]
struct Runs {
    items: Vec<Txn>,
    /// `free[k]`: starts of free runs of `2^k` slots.
    free: Vec<Vec<u32>>,
    /// Transactions planned and not yet done (for the stall diagnostic).
    live: u32,
}
impl Runs {
    /// A run for `n` (>= 1) transactions; returns its first slot.
    #[inline]
    fn alloc(&mut self, n: u32) -> u32 {
        let k = n.next_power_of_two().trailing_zeros() as usize;
        if let Some(s) = self.free.get_mut(k).and_then(|f| f.pop()) {
            return s;
        }
        let s = self.items.len();
        self.items.resize(s + (1 << k), Txn::default());
        s as u32
    }
    /// Give back the run of `n` transactions at `start`.
    #[inline]
    fn release(&mut self, start: u32, n: u32) {
        let k = n.next_power_of_two().trailing_zeros() as usize;
        if self.free.len() <= k {
            self.free.resize_with(k + 1, Vec::new);
        }
        self.free[k].push(start);
    }
}
impl std::ops::Index<u32> for Runs {
    type Output = Txn;
    #[inline]
    fn index(&self, i: u32) -> &Txn {
        &self.items[i as usize]
    }
}
impl std::ops::IndexMut<u32> for Runs {
    #[inline]
    fn index_mut(&mut self, i: u32) -> &mut Txn {
        &mut self.items[i as usize]
    }
}

#[derive(Clone, Copy, Debug)]
struct HostSlot {
    req: HostRequest,
    arrival: SimTime,
    /// Next host request merged into the same command.
    next: u32,
}

#[derive(Clone, Copy, Debug)]
struct Cmd {
    sreq: SchedReq,
    /// Gating jobs still running, plus one until the CPU is done.
    pending: u32,
    /// First job of this command not yet released (linked through Job::next_release).
    jobs: u32,
}

#[derive(Clone, Copy, Debug)]
struct Job {
    cmd: u32,
    gating: bool,
    /// The first transaction not yet released (`run + run_len` once all are).
    head: u32,
    /// Transactions of the released stage not yet done.
    pending: u32,
    next_release: u32,
    /// Its transactions' run in `Runs`: first slot and count. They fill it in
    /// (stage, plan) order, so each stage is a range of slots.
    run: u32,
    run_len: u32,
}

/// A flash transaction: one page read or program, or one block erase (24
/// bytes: tens of thousands are alive at once under GC).
#[derive(Clone, Copy, Debug)]
struct Txn {
    /// Flat block.
    blk: u32,
    job: u32,
    /// While the transaction is parked: the next transaction parked on the
    /// same block.
    next: u32,
    /// Erases of the block planned before this op (its block "epoch").
    epoch: u32,
    /// Read or program: the page in the block. Erase: the pages written in
    /// the block when it was planned.
    pg: u16,
    kind: OpKind,
    purpose: Purpose,
    stage: u8,
    /// Plane in its die.
    plane: u8,
    /// `queue_key` (kept here: a transaction is queued once or twice).
    qkey: u16,
}

impl Default for Txn {
    /// A free slot's filler (never executed).
    fn default() -> Self {
        Txn {
            blk: 0,
            job: NONE,
            next: NONE,
            epoch: 0,
            pg: 0,
            kind: OpKind::Read,
            purpose: Purpose::Host,
            stage: 0,
            plane: 0,
            qkey: queue_key(OpKind::Read, Purpose::Host, 0),
        }
    }
}

/// Execution state of one block, kept together: erases planned and erases
/// executed (its "epoch"), pages programmed (executed), and the transactions
/// parked on it waiting for their turn (linked through `Txn::next`,
/// sorted by trigger) with the last of them; and where the block is (its
/// die, and its plane in the die), which planning and queueing look up with
/// the rest instead of dividing.
#[derive(Clone, Copy, Debug)]
struct BlockExec {
    plan_epoch: u32,
    exec_epoch: u32,
    parked: u32,
    parked_tail: u32,
    /// Pages programmed; a u32 so that its increment is a full-width store
    /// that later reads are forwarded from.
    exec_wp: u32,
    die: u16,
    plane: u8,
    /// Epochs with reads in `Simulation::late_reads` (see `reads`).
    late: u8,
    /// Reads planned and not yet done, by erase epoch parity: an erase waits
    /// until every read of its block planned before it is done (as MQSim's
    /// GC waits for a victim's ongoing user reads), so a read never finds its
    /// page erased under it. A read planned two or more erases ahead of the
    /// executed epoch would share a count with an erase still to run: it is
    /// counted in `Simulation::late_reads` until that erase has run.
    reads: [u32; 2],
}

impl Default for BlockExec {
    fn default() -> Self {
        BlockExec {
            plan_epoch: 0,
            exec_epoch: 0,
            parked: NONE,
            parked_tail: NONE,
            exec_wp: 0,
            die: 0,
            plane: 0,
            late: 0,
            reads: [0; 2],
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    Idle,
    Cmd,
    DataIn,
    Array,
    DataOut,
}

#[derive(Debug)]
struct Die {
    phase: Phase,
    kind: OpKind,
    purpose: Purpose,
    /// The job of each transaction of the running batch, noted when it
    /// starts (its record is in cache then): completing the batch needs only
    /// these (a job's transactions are freed with its run).
    batch_job: [u32; MAX_PLANES],
    /// The running batch's transactions (read back only when a batch of
    /// translation reads completes: see `Simulation::tp_reads`).
    batch_txn: [u32; MAX_PLANES],
    n: u8,
    hi: DieQueue,
    lo: DieQueue,
    batch_start: SimTime,
    /// The command/data-in transfer before the array operation: kind, bytes, start.
    xfer: (XferKind, u64, SimTime),
    /// The array operation `[array_start, array_end)`.
    array_start: SimTime,
    array_end: SimTime,
    /// What of the transfer (`XFER`) and the operation (`OP`) the observer has
    /// not been told yet.
    unreported: u8,
    busy_ns: u64,
    /// The channel the die is on.
    ch: u32,
}

/// `Die::unreported` bits.
const XFER: u8 = 1;
const OP: u8 = 2;

/// How many host requests the engine reads ahead of the one it issues (see
/// `Simulation::ahead`; a power of two).
const AHEAD: usize = 8;

/// The requests read ahead: a fixed ring (index arithmetic is a mask).
#[derive(Debug)]
struct Ahead {
    buf: [HostRequest; AHEAD],
    head: usize,
    len: usize,
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
    fn pop_front(&mut self) -> Option<HostRequest> {
        (self.len > 0).then(|| {
            let q = self.buf[self.head];
            self.head = (self.head + 1) % AHEAD;
            self.len -= 1;
            q
        })
    }
    #[inline]
    fn push_back(&mut self, q: HostRequest) {
        debug_assert!(self.len < AHEAD);
        self.buf[(self.head + self.len) % AHEAD] = q;
        self.len += 1;
    }
    /// The request `i` places ahead (0 = the next one).
    #[inline]
    fn get(&self, i: usize) -> Option<&HostRequest> {
        (i < self.len).then(|| &self.buf[(self.head + i) % AHEAD])
    }
}

/// How many queued transactions the multi-plane partner search looks at.
const PARTNER_WINDOW: usize = 32;

/// A die's queue of ready transactions, oldest first: a vector with a moving
/// head (popped slots are reclaimed in bulk when a push finds it full), with
/// each transaction's `queue_key` kept apart from its id, so that the partner
/// search compares one contiguous run of 16-bit keys (vectorised) without
/// touching the transactions themselves; only the few entries whose key
/// matches are looked at. The keys are followed by `PARTNER_WINDOW` padding
/// keys that match nothing, so the search always compares a full window.
#[derive(Debug)]
struct DieQueue {
    /// `queue_key` per entry, then `NO_KEY` in every slot up to the
    /// capacity of `txns` plus `PARTNER_WINDOW` (so that a push writes one
    /// key).
    keys: Vec<u16>,
    txns: Vec<u32>,
    head: usize,
}

/// The padding key: no `queue_key` equals it (its kind bits would be 3).
const NO_KEY: u16 = u16::MAX;

impl Default for DieQueue {
    fn default() -> Self {
        DieQueue {
            keys: vec![NO_KEY; PARTNER_WINDOW],
            txns: Vec::new(),
            head: 0,
        }
    }
}

impl DieQueue {
    #[inline]
    fn is_empty(&self) -> bool {
        self.head == self.txns.len()
    }
    #[inline]
    fn push(&mut self, t: u32, key: u16) {
        debug_assert_ne!(key, NO_KEY);
        if self.txns.len() == self.txns.capacity() {
            self.make_room();
        }
        self.keys[self.txns.len()] = key;
        self.txns.push(t);
    }
    /// `txns` is full: drop the popped slots if they are half of it, else
    /// grow; the keys follow (padded to the new capacity).
    #[cold]
    #[inline(never)]
    fn make_room(&mut self) {
        if self.head * 2 >= self.txns.len() {
            let (h, n) = (self.head, self.txns.len());
            self.keys.copy_within(h..n, 0);
            self.keys[n - h..n].fill(NO_KEY);
            self.txns.drain(..h);
            self.head = 0;
        }
        if self.txns.len() == self.txns.capacity() {
            self.txns.reserve(self.txns.len().max(4));
        }
        self.keys
            .resize(self.txns.capacity() + PARTNER_WINDOW, NO_KEY);
    }
    /// Entry `i`'s transaction (0 = oldest).
    #[inline]
    fn get(&self, i: usize) -> u32 {
        self.txns[self.head + i]
    }
    /// Remove and return the oldest entry's transaction (its slot is
    /// reclaimed by a later `push`).
    #[inline]
    fn pop_front(&mut self) -> u32 {
        let t = self.txns[self.head];
        self.head += 1;
        t
    }
    /// Remove entry `i` (0 = oldest) by shifting the older ones up one slot.
    #[inline]
    fn remove(&mut self, i: usize) {
        let h = self.head;
        for j in (h..h + i).rev() {
            self.keys[j + 1] = self.keys[j];
            self.txns[j + 1] = self.txns[j];
        }
        self.head += 1;
    }
    /// Bit `i` set iff entry `i`, among the first `PARTNER_WINDOW`, has
    /// queue key `key`.
    #[inline]
    fn matches(&self, key: u16) -> u32 {
        let w: &[u16; PARTNER_WINDOW] = self.keys[self.head..self.head + PARTNER_WINDOW]
            .try_into()
            .expect("the keys are padded by a window");
        key_mask(w, key)
    }
}

/// Bit `i` set iff `ks[i] == key`: eight keys per SSE2 compare on x86-64,
/// the 32 results narrowed into two byte masks.
#[cfg(target_arch = "x86_64")]
#[inline]
fn key_mask(ks: &[u16; PARTNER_WINDOW], key: u16) -> u32 {
    use std::arch::x86_64::*;
    // SAFETY: SSE2 is part of the x86-64 baseline (the intrinsics need no
    // feature the target lacks), and each unaligned load reads the eight u16
    // of chunk `c` (of four) of `ks`.
    unsafe {
        let kv = _mm_set1_epi16(key as i16);
        let p = ks.as_ptr() as *const __m128i;
        // All ones in the lanes of chunk `c` that match, zeros elsewhere.
        let eq = |c: usize| _mm_cmpeq_epi16(_mm_loadu_si128(p.add(c)), kv);
        // Chunks `c` and `c + 1` narrowed to one byte per key (saturation
        // keeps all ones and zeros), then one bit per byte, in key order.
        let sixteen = |c: usize| _mm_movemask_epi8(_mm_packs_epi16(eq(c), eq(c + 1))) as u32;
        sixteen(0) | sixteen(2) << 16
    }
}

/// Bit `i` set iff `ks[i] == key`.
#[cfg(not(target_arch = "x86_64"))]
#[inline]
fn key_mask(ks: &[u16; PARTNER_WINDOW], key: u16) -> u32 {
    let mut m = 0u32;
    for (i, &k) in ks.iter().enumerate() {
        m |= ((k == key) as u32) << i;
    }
    m
}

/// Kind, purpose and page offset packed: two queued operations on different
/// planes may run as one multi-plane batch iff their keys are equal (an erase
/// has no page offset).
#[inline]
fn batch_key(kind: OpKind, purpose: Purpose, pg: u16) -> u32 {
    let off = if kind == OpKind::Erase { 0 } else { pg as u32 };
    (kind as u32) | (purpose.index() as u32) << 4 | off << 8
}

/// The kind and purpose bits of a `queue_key`, and their value for a
/// translation-page read.
const KIND_PURPOSE_MASK: u16 = 0x1f;
const TRANSLATION_READ: u16 = OpKind::Read as u16 | (Purpose::Translation as u16) << 2;

/// `batch_key` in 16 bits, as the die queues keep it: equal batch keys give
/// equal queue keys, and so do some unequal ones where a block has more
/// than 2048 pages (the offset's higher bits are dropped), so the partner
/// search checks `batch_key` on the entries it finds. The kind bits are
/// never 3, so no queue key is `NO_KEY`.
#[inline]
fn queue_key(kind: OpKind, purpose: Purpose, pg: u16) -> u16 {
    let off = if kind == OpKind::Erase { 0 } else { pg };
    (kind as u16) | (purpose.index() as u16) << 2 | off << 5
}

/// A channel. A command or data-in transfer is booked busy-until (the die's
/// array operation is scheduled straight after it, so the transfer needs no
/// event of its own); a data-out transfer ends with `ChanDone`, which completes
/// the die's batch. Dies that find the channel taken queue in `waiters` and are
/// granted it, in arrival order, when it frees: at the data-out's `ChanDone`
/// or at a `ChanFree` event booked for `busy_until`.
#[derive(Debug, Default)]
struct Chan {
    /// End of the last command/data-in transfer booked.
    busy_until: SimTime,
    /// A data-out transfer is booked (for `owner`): running, or (with the
    /// channel to one die) following the read it belongs to.
    out: bool,
    owner: u32,
    /// A `ChanFree` event is booked for `busy_until`.
    wake: bool,
    /// Start and end of the booked (or last) data-out transfer.
    out_start: SimTime,
    out_end: SimTime,
    waiters: VecDeque<u32>,
    busy_ns: u64,
}

impl Chan {
    /// Can a die be granted the channel at `now` (nothing running or booked
    /// past `now`, nobody waiting before it)?
    #[inline]
    fn is_free(&self, now: SimTime) -> bool {
        !self.out && self.waiters.is_empty() && self.busy_until <= now
    }
    /// The booked data-out time not begun by `now` (booked with its read).
    #[inline]
    fn unstarted_out(&self, now: SimTime) -> u64 {
        match self.out && self.out_start > now {
            true => self.out_end.0 - self.out_start.0,
            false => 0,
        }
    }
}

/// LRU write buffer over logical pages (DRAM).
#[derive(Debug)]
struct WriteBuffer {
    cap: usize,
    map: std::collections::HashMap<u64, u32>,
    // intrusive doubly linked list: node i = (lpn, prev, next)
    nodes: Vec<(u64, u32, u32)>,
    free: Vec<u32>,
    head: u32, // most recent
    tail: u32, // least recent
}
impl WriteBuffer {
    fn new(cap: usize) -> WriteBuffer {
        WriteBuffer {
            cap,
            map: Default::default(),
            nodes: Vec::new(),
            free: Vec::new(),
            head: NONE,
            tail: NONE,
        }
    }
    fn unlink(&mut self, i: u32) {
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
    fn push_front(&mut self, i: u32) {
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
    fn contains_touch(&mut self, lpn: u64) -> bool {
        if let Some(&i) = self.map.get(&lpn) {
            self.unlink(i);
            self.push_front(i);
            true
        } else {
            false
        }
    }
    /// Insert (or touch) `lpn`; returns the evicted least-recently-used page, if any.
    fn insert(&mut self, lpn: u64) -> Option<u64> {
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
    fn remove(&mut self, lpn: u64) -> bool {
        if let Some(i) = self.map.remove(&lpn) {
            self.unlink(i);
            self.free.push(i);
            true
        } else {
            false
        }
    }
    fn drain_all(&mut self) -> Vec<u64> {
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

/// Busy nanoseconds per die and channel, of the CPU and of the host link.
#[derive(Debug)]
struct BusyTimes {
    dies: Vec<u64>,
    chans: Vec<u64>,
    cpu: u64,
    link: u64,
}

/// Where preconditioning is, for progress displays
/// ([`Simulation::precondition_with`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum PreconditionProgress {
    /// The sequential fill: `done` of `total` logical pages written.
    Fill { done: u64, total: u64 },
    /// Steady-state round `round` (from 1, of at most `max_rounds`): `done`
    /// of its `round_pages` random page writes; the WAF of the round before.
    Steady {
        round: u32,
        max_rounds: u32,
        done: u64,
        round_pages: u64,
        last_waf: Option<f64>,
    },
}

/// Result of preconditioning.
#[derive(Clone, Debug, Default)]
pub struct PreconditionOutcome {
    pub pages_written: u64,
    pub random_pages: u64,
    pub final_waf: f64,
    pub steady: bool,
    pub wall_s: f64,
}

/// One simulation: an FTL, a request source, a host scheduler and an observer
/// over the hardware described by `Settings`. Generic, so the hot loop is
/// statically dispatched; applications close the choices with enums.
pub struct Simulation<F: Ftl, S: RequestSource, Q: IoScheduler, O: Observer> {
    pub settings: Settings,
    pub ftl: F,
    pub src: S,
    pub sched: Q,
    pub obs: O,
    pub flash: FlashArray,
    q: EventQueue,
    now: SimTime,
    // constants
    cmd_t: Dur,
    xfer_t: Dur,
    t_r: Dur,
    t_prog: Dur,
    t_bers: Dur,
    page: u64,
    planes: u32,
    /// Page size, as a divider.
    div_page: FastDiv,
    multiplane: bool,
    prio_reads: bool,
    /// Every die has its channel to itself (one die per channel): a read's
    /// data-out never waits, so it is booked with the command (see `grant`).
    exclusive: bool,
    max_lba: u64,
    // host side
    hosts: Slab<HostSlot>,
    cmds: Slab<Cmd>,
    dev_inflight: u32,
    qd: u32,
    timing: Timing,
    outstanding: u32,
    source_done: bool,
    pending: Option<HostRequest>,
    /// The source's next `AHEAD` requests, fetched ahead so that the FTL can
    /// prefetch, in steps, what each will touch (not with a time limit: the
    /// source must not run ahead of what the run consumes)...
    ahead: Ahead,
    /// ... and what the source gave after them, once it ended (`Some(None)`)
    /// or failed (`Some(Some(error))`).
    ahead_end: Option<Option<SourceError>>,
    merged: Vec<(u32, u32)>,
    /// Block layer: requests it may hold at once (`sched.nr_requests`), the
    /// submitters asleep until one frees (host request ids, in arrival
    /// order), whether open-loop bursts are plugged, the requests plugged
    /// now, and whether a `PlugFlush` is booked.
    nr_requests: u32,
    blocked: VecDeque<u32>,
    plug_on: bool,
    plugged: Vec<u32>,
    plug_booked: bool,
    /// Start of the current stretch of the elevator's queue length (its
    /// time-weighted distribution is in `counters`).
    qd_since: SimTime,
    link_free: SimTime,
    /// Last (bytes, time) asked of the host link (its time is a 128-bit division).
    link_memo: [(u64, Dur); 2],
    cpu_free: SimTime,
    active_since: SimTime,
    idle_since: SimTime,
    wake_pending: Option<SimTime>,
    /// A reactive source's booked timer, and when it finished.
    host_wake: Option<SimTime>,
    host_end: SimTime,
    error: Option<SimError>,
    // flash side
    txns: Runs,
    jobs: Slab<Job>,
    dies: Vec<Die>,
    chans: Vec<Chan>,
    cx: FtlCtx,
    wbuf: Option<WriteBuffer>,
    bg_jobs: u32,
    bg_enabled: bool,
    // stats
    pub counters: Counters,
    pub lat: Latencies,
    ftl_before: FtlStats,
    work: FtlWork,
    cpu_ns: u64,
    link_ns: u64,
    last_done: SimTime,
    pre: PreconditionOutcome,
    notes: std::collections::BTreeMap<&'static str, u64>,
    draining: bool,
    drain_ns: u64,
    /// Busy time of dies, channels, CPU and host link up to the drain start
    /// (the measured phase's end): utilization covers the measured phase only.
    busy_at_drain: Option<BusyTimes>,
    /// Per block: the order its programs and erases execute in, and the
    /// transactions parked on it (one record: one memory access per block).
    blk: Vec<BlockExec>,
    /// Scratch of `commit_plan`: per job of a plan, its `Job`; per (job,
    /// stage), its transaction count, then the next slot of its run to fill.
    plan_jobs: Vec<u32>,
    plan_fill: Vec<u32>,
    unparked: Vec<u32>,
    /// Translation-page reads queued or running, by (block, page): their
    /// erase epoch and the transactions waiting for them (linked through
    /// `Txn::next`). Looked up, never iterated, so its order decides nothing.
    tp_reads: std::collections::HashMap<u64, TpRead>,
    /// Scratch of `take_tp_waiters` and `finish_tp_waiters`.
    tp_woken: Vec<u32>,
    /// Reads planned while their block was two or more erases behind, by
    /// (block, erase epoch): see `BlockExec::reads`.
    late_reads: std::collections::HashMap<(u32, u32), u32>,
    start: SimTime,
    /// With flows: who owns each logical page's data, and what each flow
    /// cost the flash ([`FlowFlash`]). Empty without flows.
    flow_flash: FlowFlash,
    /// When the ramp (`sim.ramp_time`) ends and the statistics start; MAX
    /// when there is none or it is over.
    ramp_end: SimTime,
}

/// Flash programs by flow (tenant), for per-flow write amplification. Each
/// logical page belongs to the flow that last wrote it (in split space, to
/// the flow whose range holds it, from the start: the preconditioning's
/// data too); a program of the page's data, the host's own or a copy by GC,
/// a merge or wear levelling, counts against its owner. Translation pages
/// belong to no flow.
#[derive(Default)]
struct FlowFlash {
    /// Per logical page: its owner's slot plus one (0: no flow).
    owner: Vec<u8>,
    /// Per flow slot: host pages written, programs of its data by the host
    /// path, programs that relocated its data.
    host_pages: Vec<u64>,
    programs: Vec<u64>,
    relocations: Vec<u64>,
    /// Relocations of data no flow owns.
    unowned_relocations: u64,
}

impl FlowFlash {
    fn new(c: &crate::config::SsdConfig, logical_pages: u64, page: u64) -> FlowFlash {
        let n = c.flows.len();
        if n == 0 {
            return FlowFlash::default();
        }
        let mut owner = vec![0u8; logical_pages as usize];
        if c.sim.flow_space == crate::flows::FlowSpace::Split {
            let logical = logical_pages * page;
            for i in 0..n {
                let (s, e) = crate::flows::flow_range(c.sim.flow_space, i, n, logical, page);
                let per = page / SECTOR;
                owner[(s / per) as usize..(e / per) as usize].fill(i as u8 + 1);
            }
        }
        FlowFlash {
            owner,
            host_pages: vec![0; n],
            programs: vec![0; n],
            relocations: vec![0; n],
            unowned_relocations: 0,
        }
    }

    /// The counts start again (the ramp is over); the owners stay.
    fn restart(&mut self) {
        for v in [
            &mut self.host_pages,
            &mut self.programs,
            &mut self.relocations,
        ] {
            v.fill(0);
        }
        self.unowned_relocations = 0;
    }

    /// A host write of `n` pages from `first` by the flow of `stream`.
    #[cold]
    #[inline(never)]
    fn written(&mut self, first: u64, n: u32, stream: u32) {
        let f = crate::flows::flow_of(stream).min(self.host_pages.len() - 1);
        self.host_pages[f] += n as u64;
        let end = (first + n as u64).min(self.owner.len() as u64);
        if first < end {
            self.owner[first as usize..end as usize].fill(f as u8 + 1);
        }
    }

    /// The programs of a plan, against their data's owners.
    #[cold]
    #[inline(never)]
    fn count(&mut self, ops: &[crate::ftl::FlashOp]) {
        for op in ops {
            if op.kind != OpKind::Program || op.lpn == crate::ftl::NO_LPN {
                continue;
            }
            let o = self.owner.get(op.lpn as usize).copied().unwrap_or(0);
            match (o, op.purpose) {
                (0, Purpose::Host) => {}
                (0, _) => self.unowned_relocations += 1,
                (o, Purpose::Host) => self.programs[o as usize - 1] += 1,
                (o, _) => self.relocations[o as usize - 1] += 1,
            }
        }
    }

    /// Add each flow's flash figures to its entry of the `flows` section.
    fn report(
        &self,
        extra: &mut std::collections::BTreeMap<String, serde_json::Value>,
        notes: &mut std::collections::BTreeMap<String, u64>,
    ) {
        let Some(serde_json::Value::Array(flows)) = extra.get_mut("flows") else {
            return;
        };
        for f in flows {
            let Some(i) = f["slot"].as_u64().map(|i| i as usize) else {
                continue;
            };
            if i >= self.host_pages.len() {
                continue;
            }
            let (h, p, r) = (self.host_pages[i], self.programs[i], self.relocations[i]);
            f["host_pages_written"] = h.into();
            f["flash_programs"] = p.into();
            f["relocations"] = r.into();
            f["waf"] = if h > 0 {
                ((p + r) as f64 / h as f64).into()
            } else {
                0.0.into()
            };
        }
        if self.unowned_relocations > 0 {
            notes.insert(
                "flow_relocations_of_unowned_data".to_string(),
                self.unowned_relocations,
            );
        }
    }
}

/// Count a read of block `b` (record `bx`) planned at erase epoch `epoch`,
/// two or more erases ahead of what the block has executed (see
/// `BlockExec::reads`).
#[cold]
#[inline(never)]
fn count_late_read(
    bx: &mut BlockExec,
    late_reads: &mut std::collections::HashMap<(u32, u32), u32>,
    b: u32,
    epoch: u32,
) {
    bx.late = 1;
    *late_reads.entry((b, epoch)).or_insert(0) += 1;
}

/// A translation-page read in flight (see `Simulation::join_tp_read`).
#[derive(Clone, Copy, Debug)]
struct TpRead {
    epoch: u32,
    waiters: u32,
}

impl<F: Ftl, S: RequestSource, Q: IoScheduler, O: Observer> Simulation<F, S, Q, O> {
    pub fn new(settings: Settings, ftl: F, src: S, sched: Q, obs: O) -> Self {
        let g = settings.geometry;
        let c = &settings.config;
        let dies = (0..g.total_dies())
            .map(|d| Die {
                ch: g.channel_of_die(DieId(d)).0,
                phase: Phase::Idle,
                kind: OpKind::Read,
                purpose: Purpose::Host,
                batch_job: [NONE; MAX_PLANES],
                batch_txn: [NONE; MAX_PLANES],
                n: 0,
                hi: DieQueue::default(),
                lo: DieQueue::default(),
                batch_start: SimTime::ZERO,
                xfer: (XferKind::Command, 0, SimTime::ZERO),
                array_start: SimTime::ZERO,
                array_end: SimTime::ZERO,
                unreported: 0,
                busy_ns: 0,
            })
            .collect();
        let chans = (0..g.channels).map(|_| Chan::default()).collect();
        let wb_pages = (c.dram.write_buffer.0 / g.page_size as u64) as usize;
        let timing = src.timing();
        Simulation {
            cmd_t: settings.cmd_time(),
            xfer_t: settings.page_xfer_time(),
            t_r: c.nand.t_r,
            t_prog: c.nand.t_prog,
            t_bers: c.nand.t_bers,
            page: g.page_size as u64,
            planes: g.planes.min(MAX_PLANES as u32),
            div_page: FastDiv::new(g.page_size as u64),
            multiplane: c.nand.multiplane && g.planes > 1,
            prio_reads: c.controller.prioritize_reads,
            exclusive: g.ways * g.dies == 1,
            max_lba: settings.logical_bytes() / SECTOR,
            flash: FlashArray::new(g),
            q: EventQueue::default(),
            now: SimTime::ZERO,
            hosts: Slab::default(),
            cmds: Slab::default(),
            dev_inflight: 0,
            qd: c.host.queue_depth,
            timing,
            outstanding: 0,
            source_done: false,
            pending: None,
            ahead: Ahead::default(),
            ahead_end: None,
            merged: Vec::new(),
            // Flows on NVMe: each flow's submission queue bounds what it
            // holds (`host.sq_depth`, kept by the flows' source), as blk-mq
            // gives each hardware queue its own tags.
            nr_requests: if !c.flows.is_empty() && c.host.interface.is_nvme() {
                u32::MAX
            } else {
                c.sched.nr_requests
            },
            blocked: VecDeque::new(),
            plug_on: c.sched.plug && !matches!(timing, Timing::ClosedLoop { .. }),
            plugged: Vec::new(),
            plug_booked: false,
            qd_since: SimTime::ZERO,
            link_free: SimTime::ZERO,
            link_memo: [(u64::MAX, Dur::ZERO); 2],
            cpu_free: SimTime::ZERO,
            active_since: SimTime::ZERO,
            idle_since: SimTime::ZERO,
            wake_pending: None,
            host_wake: None,
            host_end: SimTime::ZERO,
            error: None,
            txns: Runs::default(),
            jobs: Slab::default(),
            dies,
            chans,
            cx: FtlCtx::new(
                SimRng::from_seed_label(c.sim.seed, "ftl"),
                g.total_dies() as usize,
            ),
            wbuf: if wb_pages > 0 {
                Some(WriteBuffer::new(wb_pages))
            } else {
                None
            },
            bg_jobs: 0,
            bg_enabled: c.ftl.background_gc_blocks > 0,
            counters: Counters::default(),
            lat: Latencies::default(),
            ftl_before: FtlStats::default(),
            work: FtlWork::default(),
            cpu_ns: 0,
            link_ns: 0,
            last_done: SimTime::ZERO,
            pre: PreconditionOutcome::default(),
            notes: Default::default(),
            draining: false,
            drain_ns: 0,
            busy_at_drain: None,
            blk: (0..g.total_blocks())
                .map(|b| {
                    let pl = b / g.blocks_per_plane;
                    BlockExec {
                        die: (pl / g.planes) as u16,
                        plane: (pl % g.planes) as u8,
                        ..Default::default()
                    }
                })
                .collect(),
            plan_jobs: Vec::new(),
            plan_fill: Vec::new(),
            unparked: Vec::new(),
            tp_reads: Default::default(),
            tp_woken: Vec::new(),
            late_reads: Default::default(),
            start: SimTime::ZERO,
            flow_flash: FlowFlash::new(c, settings.logical_pages, g.page_size as u64),
            ramp_end: settings
                .config
                .sim
                .ramp_time
                .map_or(SimTime(u64::MAX), |r| SimTime(r.0)),
            settings,
            ftl,
            src,
            sched,
            obs,
        }
    }

    /// Busy time of every die, channel, the CPU and the host link up to
    /// `cut` (not after `now`): what is booked or running past it is left out.
    fn busy_until_cut(&self, cut: SimTime) -> BusyTimes {
        let past = |t: SimTime| t.0.saturating_sub(cut.0);
        BusyTimes {
            dies: self
                .dies
                .iter()
                .map(|d| match d.phase {
                    // A batch adds its whole time when it completes.
                    Phase::Idle => d.busy_ns,
                    _ => d.busy_ns + cut.0.saturating_sub(d.batch_start.0),
                })
                .collect(),
            chans: self
                .chans
                .iter()
                .map(|c| {
                    // Transfers add their whole time when they are booked.
                    let out = if c.out {
                        past(c.out_end) - past(c.out_start)
                    } else {
                        0
                    };
                    c.busy_ns.saturating_sub(past(c.busy_until) + out)
                })
                .collect(),
            // Saturating: `restart` zeroes the counters, not what is booked.
            cpu: self.cpu_ns.saturating_sub(past(self.cpu_free)),
            link: self.link_ns.saturating_sub(past(self.link_free)),
        }
    }

    /// Book every read the general way (a `DieDone` at the end of its array
    /// operation, then its data-out), also where a die has its channel to
    /// itself and the engine otherwise books the whole read at once. Only for
    /// tests that check the two give the same run.
    #[doc(hidden)]
    pub fn book_reads_in_two_steps(&mut self) {
        self.exclusive = false;
    }

    /// Current simulated time.
    pub fn now(&self) -> SimTime {
        self.now
    }

    /// Replace the workload and reset the statistics, keeping the drive's state
    /// (FTL, flash, wear) and the clock: the next `run` measures a new phase on
    /// the same drive. Used by benchmarks and multi-phase experiments. Host
    /// requests a time limit left in flight finish in the next phase (and count
    /// there); a closed loop counts them against its depth.
    pub fn restart(&mut self, src: S) {
        self.timing = src.timing();
        self.src = src;
        self.source_done = false;
        self.pending = None;
        self.ahead = Ahead::default();
        self.ahead_end = None;
        self.outstanding = self.hosts.live;
        self.reset_stats(self.now);
        self.plug_on =
            self.settings.config.sched.plug && !matches!(self.timing, Timing::ClosedLoop { .. });
        self.host_wake = None;
        self.draining = false;
        self.busy_at_drain = None;
    }

    /// Start the statistics of the measured phase again at `at` (now, or
    /// the end of the ramp when the first event after it comes: nothing
    /// happened in between).
    fn reset_stats(&mut self, at: SimTime) {
        self.counters = Counters::default();
        self.flow_flash.restart();
        self.lat = Latencies::default();
        self.work = FtlWork::default();
        self.cpu_ns = 0;
        self.link_ns = 0;
        self.start = at;
        self.last_done = at;
        self.qd_since = at;
        self.host_end = at;
        for d in &mut self.dies {
            d.busy_ns = 0;
        }
        // A data-out booked with its read and not begun yet belongs to the
        // new phase, as it would if booked when the read ends.
        for c in &mut self.chans {
            c.busy_ns = c.unstarted_out(self.now);
        }
    }

    /// The ramp (`sim.ramp_time`) is over: what happened before now is in no
    /// statistic (the requests in flight count when they complete), and the
    /// source's own statistics and request count start again.
    #[cold]
    fn end_ramp(&mut self) {
        let at = self.ramp_end;
        self.ramp_end = SimTime(u64::MAX);
        self.reset_stats(at);
        self.ftl_before = self.ftl.stats();
        // What the source has handed over and is not done: in flight, read
        // ahead, or waiting for its arrival time.
        let handed = self.hosts.live as u64 + self.ahead.len as u64 + self.pending.is_some() as u64;
        self.src.ramp_over(at, handed);
    }

    /// Whether a ramp (`sim.ramp_time`) was configured and the run has not
    /// reached its end: the statistics then still hold the ramp.
    pub fn in_ramp(&self) -> bool {
        self.ramp_end != SimTime(u64::MAX)
    }

    // -------------------------------------------------------- preconditioning

    /// Apply the FTL's plan functionally (flash state and counts, no timing).
    #[inline]
    fn apply_functional(&mut self) -> u64 {
        let mut programs = 0;
        for op in &self.cx.plan.ops {
            let (b, page) = self.flash.split(op.ppn);
            self.flash.apply_at(op, b, page);
            let b = b as usize;
            match op.kind {
                OpKind::Program => {
                    programs += 1;
                    self.blk[b].exec_wp += 1;
                }
                OpKind::Erase => {
                    self.blk[b].plan_epoch += 1;
                    self.blk[b].exec_epoch += 1;
                    self.blk[b].exec_wp = 0;
                }
                OpKind::Read => {}
            }
        }
        self.cx.plan.clear();
        programs
    }

    /// Precondition the drive as configured (`sim.precondition`), functionally:
    /// FTL and flash state change, no events are timed and no statistics kept.
    pub fn precondition(&mut self) -> PreconditionOutcome {
        self.precondition_with(|_| {})
    }

    /// [`Simulation::precondition`], telling `progress` where it is about
    /// every million page writes and at the end of every steady-state round
    /// (for progress displays; it cannot change the outcome).
    pub fn precondition_with(
        &mut self,
        mut progress: impl FnMut(PreconditionProgress),
    ) -> PreconditionOutcome {
        const EVERY: u64 = 1 << 20;
        let started = Instant::now();
        let mode = self.settings.config.sim.precondition;
        let mut out = PreconditionOutcome::default();
        if mode == Precondition::None {
            return out;
        }
        let lp = self.ftl.logical_pages();
        let chunk = 64u64;
        let mut lpn = 0;
        while lpn < lp {
            let n = chunk.min(lp - lpn) as u32;
            self.cx.plan.clear();
            self.ftl.write(Lpn(lpn), n, &mut self.cx);
            self.apply_functional();
            lpn += n as u64;
            if lpn % EVERY < chunk || lpn == lp {
                progress(PreconditionProgress::Fill {
                    done: lpn,
                    total: lp,
                });
            }
        }
        out.pages_written = lp;
        if mode == Precondition::Steady {
            // SNIA PTS-style steady state: rounds of lp/8 random page writes; steady when
            // the last 5 rounds' WAF lie within 2% of their mean (data excursion) and
            // the least-squares slope over the window is within 1% of the mean.
            let mut rng = SimRng::from_seed_label(self.settings.config.sim.seed, "precondition");
            let round = (lp / 8).max(1);
            let max_rounds: u32 = 8 * 20; // 20 full drive writes at most
            let mut hist: Vec<f64> = Vec::new();
            for r in 0..max_rounds {
                let mut programs = 0;
                for i in 1..=round {
                    let l = rng.gen_range(0..lp);
                    self.cx.plan.clear();
                    self.ftl.write(Lpn(l), 1, &mut self.cx);
                    programs += self.apply_functional();
                    if i % EVERY == 0 || i == round {
                        progress(PreconditionProgress::Steady {
                            round: r + 1,
                            max_rounds,
                            done: i,
                            round_pages: round,
                            last_waf: hist.last().copied(),
                        });
                    }
                }
                out.random_pages += round;
                hist.push(programs as f64 / round as f64);
                if hist.len() >= 5 {
                    let w = &hist[hist.len() - 5..];
                    let mean = w.iter().sum::<f64>() / 5.0;
                    let (mn, mx) = w
                        .iter()
                        .fold((f64::MAX, f64::MIN), |(a, b), &x| (a.min(x), b.max(x)));
                    let slope = (0..5)
                        .map(|i| (i as f64 - 2.0) * (w[i] - mean))
                        .sum::<f64>()
                        / 10.0;
                    if mx - mn <= 0.02 * mean && (slope * 4.0).abs() <= 0.01 * mean {
                        out.steady = true;
                        break;
                    }
                }
            }
            out.final_waf = *hist.last().unwrap_or(&0.0);
            if !out.steady {
                // The measured phase starts from a drive that is not yet at
                // steady state: say so next to the results, not only in
                // `run.precondition_steady`.
                *self.notes_mut("precondition_steady_state_not_reached") = 1;
            }
        }
        self.cx.work = FtlWork::default();
        self.ftl_before = self.ftl.stats();
        out.wall_s = started.elapsed().as_secs_f64();
        self.pre = out.clone();
        out
    }

    // -------------------------------------------------------- main loop

    /// Run the measured phase (after `precondition`) and build the report.
    pub fn run(&mut self) -> Result<Report, SimError> {
        let started = Instant::now();
        self.ftl_before = self.ftl.stats();
        let limit = self.settings.config.sim.time_limit.map(|d| SimTime(d.0));
        match self.timing {
            Timing::ClosedLoop { depth } => {
                while self.outstanding < depth && self.issue_next_closed() {}
                self.try_dispatch();
            }
            Timing::OpenLoop => self.pull_open(),
            Timing::Reactive => self.pump_host(),
        }
        let mut events = 0u64;
        loop {
            // An event past the time limit stays queued: a `restart`ed run
            // (with a later limit) goes on from it.
            if let Some(l) = limit {
                if self.q.peek_time().is_some_and(|t| t > l) {
                    self.now = l;
                    break;
                }
            }
            let Some((t, ev)) = self.q.pop() else {
                break;
            };
            if self.error.is_some() {
                break;
            }
            if ev == Ev::HostWake && (self.source_done || self.host_wake != Some(t)) {
                // A timer of a host that has finished, or one re-booked
                // earlier: not an instant of the run.
                continue;
            }
            debug_assert!(t >= self.now, "time went backwards");
            self.now = t;
            if t >= self.ramp_end {
                self.end_ramp();
            }
            events += 1;
            match ev {
                Ev::Arrival => self.on_arrival(),
                Ev::CmdReady(c) => self.on_cmd_ready(c),
                Ev::ChanDone(ch) => self.on_chan_done(ch),
                Ev::ChanFree(ch) => self.on_chan_free(ch),
                Ev::DieDone(d) => self.on_die_done(d),
                Ev::CmdComplete(c) => self.complete_cmd(c),
                Ev::SchedWake => {
                    self.wake_pending = None;
                    self.try_dispatch();
                }
                Ev::PlugFlush => self.on_plug_flush(),
                Ev::HostWake => {
                    self.host_wake = None;
                    self.pump_host();
                }
            }
            if self.source_done && self.hosts.live == 0 && self.pending.is_none() {
                if !self.settings.config.sim.drain {
                    break;
                }
                if !self.draining {
                    self.draining = true;
                    self.busy_at_drain = Some(self.busy_until_cut(self.last_done));
                    self.report_started_ops();
                    self.obs.drain_start(self.last_done);
                    self.maybe_background();
                }
            }
        }
        if let Some(e) = self.error.take() {
            return Err(e);
        }
        debug_assert!(
            self.txns.live > 0 || self.cx.die_load.iter().all(|&l| l == 0),
            "no transaction is alive but die loads are {:?}",
            self.cx.die_load
        );
        let host_stuck = self.timing == Timing::Reactive && !self.source_done;
        if limit.is_none() && (self.hosts.live > 0 || self.pending.is_some() || host_stuck) {
            panic!(
                "engine stalled at {} ns with {} host requests outstanding, {} commands in the device, {} transactions alive (a scheduling deadlock: please report with this configuration)",
                self.now.0, self.hosts.live, self.cmds.live, self.txns.live
            );
        }
        // A reactive source's application still running at the limit: the
        // measured phase is the whole time, whether or not the device was
        // busy at the cut.
        let app_cut = self.timing == Timing::Reactive && !self.source_done;
        let end = if limit.is_some() && (self.hosts.live > 0 || app_cut) {
            // Cut by the time limit: say how many requests it left unfinished
            // (they are in no statistic).
            if self.hosts.live > 0 {
                *self.notes_mut("time_limit_requests_unfinished") += self.hosts.live as u64;
            }
            // Utilization covers the measured phase: what is booked past the
            // cut (a host-link transfer, CPU work, a die's running operation)
            // counts up to the cut only.
            if self.busy_at_drain.is_none() {
                self.busy_at_drain = Some(self.busy_until_cut(self.now));
            }
            self.now
        } else {
            self.last_done.max(self.host_end)
        };
        if self.dev_inflight > 0 {
            self.obs
                .io_active(self.active_since, end.max(self.active_since));
        }
        // With sim.drain the simulation went on until in-flight and idle-time GC
        // finished; the measured phase still ends at the last completion.
        let sim_end = if self.draining {
            self.now.max(end)
        } else {
            end
        };
        self.drain_ns = sim_end.0 - end.0;
        self.report_started_ops();
        self.obs.finish(sim_end);
        self.counters.events = events;
        let wall = started.elapsed().as_secs_f64();
        Ok(self.report(end, wall))
    }

    fn issue_next_closed(&mut self) -> bool {
        if self.source_done {
            return false;
        }
        match self.next_from_source() {
            Some(Ok(mut r)) => {
                r.arrival = self.now;
                self.outstanding += 1;
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
    fn next_from_source(&mut self) -> Option<Result<HostRequest, SourceError>> {
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
    fn hint(&self, i: usize, step: u8) {
        if let Some(q) = self.ahead.get(i) {
            let lpn = Lpn(self.div_page.quot(q.lba * SECTOR));
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

    fn pull_open(&mut self) {
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

    fn notes_mut(&mut self, k: &'static str) -> &mut u64 {
        self.notes.entry(k).or_insert(0)
    }

    fn on_arrival(&mut self) {
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
    fn submit(&mut self, r: HostRequest) -> bool {
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
    fn pump_host(&mut self) {
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
                self.q.push(t, Ev::HostWake);
            }
        }
        self.try_dispatch();
    }

    /// Requests the block layer holds: plugged, queued in the elevator
    /// (after merging) and in the device.
    #[inline]
    fn allocated(&self) -> u32 {
        (self.plugged.len() + self.sched.len()) as u32 + self.dev_inflight
    }

    /// Hold `id` in its submitter's plug until the end of this instant (or
    /// until the stream has `PLUG_MAX` plugged).
    fn plug(&mut self, id: u32) {
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
    fn on_plug_flush(&mut self) {
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
    fn flush_plugs(&mut self, stream: Option<u32>) {
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
    fn elevator_add(&mut self, id: u32) {
        self.note_queue_len();
        let r = self.hosts[id].req;
        let sr = SchedReq {
            id,
            op: r.op,
            lba: r.lba,
            sectors: r.sectors,
            arrival: r.arrival,
            stream: r.stream,
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
    fn wake_blocked(&mut self) {
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
    fn note_queue_len(&mut self) {
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

    fn try_dispatch(&mut self) {
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

    fn start_cmd(&mut self, r: SchedReq) {
        let now = self.now;
        self.counters.dispatched += 1;
        let qt = now.0 - r.arrival.0;
        self.counters.queue_time_ns += qt as u128;
        self.counters.max_queue_time_ns = self.counters.max_queue_time_ns.max(qt);
        if let Some(d) = match r.op {
            IoOp::Read => Some(0),
            IoOp::Write => Some(1),
            _ => None,
        } {
            let k = &mut self.counters;
            k.dispatched_dir[d] += 1;
            k.queue_time_dir_ns[d] += qt as u128;
            k.max_queue_time_dir_ns[d] = k.max_queue_time_dir_ns[d].max(qt);
        }
        if self.dev_inflight == 0 {
            self.active_since = now;
        }
        self.dev_inflight += 1;
        let bytes = r.sectors as u64 * SECTOR;
        // Host link: command (and write data) host -> device.
        let hc = &self.settings.config.host;
        let data_in = if r.op == IoOp::Write { bytes } else { 0 };
        let lstart = self.link_free.max(now);
        let lend = lstart + hc.command_overhead + self.link_time(0, data_in);
        self.link_free = lend;
        self.link_ns += lend.0 - lstart.0;
        self.obs.link_xfer(data_in, lstart, lend);
        // Controller: FTL work planned now (functional), timed on the CPU.
        self.cx.plan.clear();
        self.cx.work = FtlWork::default();
        self.cx.now = now;
        let first = self.div_page.quot(r.lba * SECTOR);
        let n = if r.sectors == 0 {
            0
        } else {
            (self.div_page.quot(r.lba * SECTOR + bytes - 1) - first + 1) as u32
        };
        let mut dram = 0u64;
        match r.op {
            IoOp::Read => {
                if let Some(wb) = self.wbuf.as_mut() {
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
                if !self.flow_flash.owner.is_empty() {
                    self.flow_flash.written(first, n, r.stream);
                }
                match (self.wbuf.as_mut(), self.settings.config.dram.flush) {
                    (Some(wb), FlushPolicy::EvictLru) => {
                        for i in 0..n as u64 {
                            dram += 1;
                            if wb.contains_touch(first + i) {
                                self.counters.wbuf_hits += 1;
                            } else if let Some(v) = wb.insert(first + i) {
                                self.counters.wbuf_evictions += 1;
                                self.ftl.write(Lpn(v), 1, &mut self.cx);
                            }
                        }
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
                if let Some(wb) = self.wbuf.as_mut() {
                    for i in 0..n as u64 {
                        wb.remove(first + i);
                    }
                }
                self.ftl.trim(Lpn(first), n, &mut self.cx);
            }
            IoOp::Flush => {
                if let (Some(wb), FlushPolicy::EvictLru) =
                    (self.wbuf.as_mut(), self.settings.config.dram.flush)
                {
                    for l in wb.drain_all() {
                        self.counters.wbuf_evictions += 1;
                        self.ftl.write(Lpn(l), 1, &mut self.cx);
                    }
                }
                self.ftl.flush(&mut self.cx);
            }
        }
        let cpu_end = self.book_cpu(lend, dram);
        let c = self.cmds.insert(Cmd {
            sreq: r,
            pending: 1,
            jobs: NONE,
        });
        self.commit_plan(c);
        self.q.push_fifo(0, cpu_end, Ev::CmdReady(c));
    }

    /// Host link time for `bytes`, memoised per call site `k`.
    #[inline]
    fn link_time(&mut self, k: usize, bytes: u64) -> Dur {
        let m = &mut self.link_memo[k];
        if m.0 != bytes {
            *m = (bytes, self.settings.link.time_for(bytes));
        }
        m.1
    }

    /// Book the CPU for one command's firmware path plus the FTL work in `cx.work`.
    fn book_cpu(&mut self, ready: SimTime, extra_dram: u64) -> SimTime {
        let cc = &self.settings.config.controller;
        let w = self.cx.work;
        self.work.add(&w);
        let cycles = cc.cycles_per_command
            + w.map_lookups * cc.cycles_per_map_lookup
            + w.gc_candidates * cc.cycles_per_gc_candidate
            + w.gc_pages * cc.cycles_per_gc_page;
        let dram_n = w.map_lookups + w.dram_accesses + extra_dram;
        self.work.dram_accesses += extra_dram;
        let mut start = self.cpu_free.max(ready);
        let pc = &self.settings.config.power;
        if let Some(to) = pc.cpu_slow_after {
            // Slow mode is entered `to` after the CPU last had work (the end of the
            // last busy period or of background firmware work, whichever is later).
            if self.dev_inflight == 1
                && ready.0 >= self.idle_since.max(self.cpu_free).0 + to.0
                && pc.cpu_wakeup_latency.0 > 0
            {
                let wend = start + pc.cpu_wakeup_latency;
                self.obs.cpu_wakeup(start, wend);
                start = wend;
            }
        }
        let cpu_t = self.settings.cycles(cycles);
        let dram_t = Dur(dram_n * self.settings.config.dram.access_latency.0);
        let end = start + cpu_t + dram_t;
        self.obs.cpu_busy(start, start + cpu_t);
        if dram_n > 0 {
            self.obs.dram_access(dram_n, start + cpu_t, end);
        }
        self.cpu_ns += end.0 - start.0;
        self.cpu_free = end;
        end
    }

    /// Turn the plan in `cx` into jobs and transactions owned by command `c`
    /// (NONE: background work, released at once).
    fn commit_plan(&mut self, c: u32) {
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
        let (flash, counters, plan_jobs, late_reads) = (
            &mut self.flash,
            &mut self.counters,
            &self.plan_jobs[..],
            &mut self.late_reads,
        );
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
            }
            let j = op.job as usize;
            let slot = &mut fill[j * stages + op.stage as usize];
            let t = *slot;
            *slot += 1;
            items[t as usize] = Txn {
                blk: b,
                pg,
                plane,
                qkey: queue_key(op.kind, op.purpose, pg),
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
                self.cmds[c].pending += 1;
            } else {
                self.bg_jobs += 1;
            }
            if c != NONE {
                if last_job == NONE {
                    self.cmds[c].jobs = job;
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
    fn trigger(&self, t: u32) -> u64 {
        txn_trigger(&self.txns.items, t)
    }

    fn on_cmd_ready(&mut self, c: u32) {
        let mut j = self.cmds[c].jobs;
        while j != NONE {
            let next = self.jobs[j].next_release;
            self.release_stage(j);
            j = next;
        }
        self.cmds[c].jobs = NONE;
        self.cmd_job_done(c);
    }

    fn cmd_job_done(&mut self, c: u32) {
        let cmd = &mut self.cmds[c];
        cmd.pending -= 1;
        if cmd.pending == 0 {
            let r = cmd.sreq;
            if r.op == IoOp::Read {
                let bytes = r.sectors as u64 * SECTOR;
                let s = self.link_free.max(self.now);
                let e = s + self.link_time(1, bytes);
                self.link_free = e;
                self.link_ns += e.0 - s.0;
                self.obs.link_xfer(bytes, s, e);
                self.q.push_fifo(1, e, Ev::CmdComplete(c));
            } else {
                self.complete_cmd(c);
            }
        }
    }

    fn complete_cmd(&mut self, c: u32) {
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

    /// Idle-time GC: while the device is idle, top the GC (non-gating) jobs in
    /// flight up to one per die (the FTL picks the planes; page mapping and
    /// DFTL take them in striping order, so successive jobs land on different
    /// dies), as firmware collects on all dies at once, not one block at a time.
    fn maybe_background(&mut self) {
        if !self.bg_enabled || self.dev_inflight > 0 || !self.sched.is_empty() {
            return;
        }
        while self.bg_jobs < self.dies.len() as u32 {
            self.cx.plan.clear();
            self.cx.work = FtlWork::default();
            self.cx.now = self.now;
            if !self.ftl.background(&mut self.cx) {
                self.cx.plan.clear();
                return;
            }
            self.book_cpu(self.now, 0);
            self.commit_plan(NONE);
        }
    }

    // -------------------------------------------------------- flash scheduling

    fn release_stage(&mut self, j: u32) {
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
    fn enqueue(&mut self, t: u32) {
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
        die_push(die, self.prio_reads, &self.txns[t], t);
        if die.phase == Phase::Idle {
            self.die_start(d as u32);
        }
    }

    /// A translation-page read `t` is released: if a read of the same page
    /// (same block, page and erase epoch) is already queued or running, `t`
    /// waits for it instead of reading the page again (returns true), as
    /// MQSim's mapping unit does with the translation reads it has in flight;
    /// otherwise `t` becomes that page's read in flight (returns false).
    #[inline(never)]
    fn join_tp_read(&mut self, t: u32) -> bool {
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
    fn take_tp_waiters(&mut self, txs: &[u32]) {
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
    fn finish_tp_waiters(&mut self) {
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
    fn defer_erase(&mut self, d: u32, t: u32) {
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
    fn erases_started(&mut self, d: u32) {
        let die = &self.dies[d as usize];
        for &t in &die.batch_txn[..die.n as usize] {
            let b = self.txns[t].blk;
            let bx = &mut self.blk[b as usize];
            if bx.late == 0 {
                continue;
            }
            let e = bx.exec_epoch + 1;
            if let Some(n) = self.late_reads.remove(&(b, e)) {
                bx.reads[e as usize & 1] += n;
            }
            let later = (e + 1..=bx.plan_epoch).any(|x| self.late_reads.contains_key(&(b, x)));
            bx.late = u8::from(later);
        }
    }

    /// Read `t` is done: its block's count of reads goes down, and an erase
    /// parked waiting for them wakes when it reaches zero.
    #[inline(always)]
    fn read_done(&mut self, t: u32) {
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
    fn wake_erase(&mut self, b: usize) {
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
        die_push(die, self.prio_reads, &self.txns[w], w);
        if die.phase == Phase::Idle {
            self.die_start(d as u32);
        }
    }

    /// Start die `d`'s next batch, if it is idle and has work queued.
    #[inline(never)]
    fn die_start(&mut self, d: u32) {
        self.die_start_inline(d)
    }

    /// `die_start`, inlined where a batch completes (most starts).
    #[inline(always)]
    fn die_start_inline(&mut self, d: u32) {
        let die = &mut self.dies[d as usize];
        if die.phase != Phase::Idle {
            return;
        }
        // Every queued transaction is ready (unready ones are parked on their block).
        let q = if !die.hi.is_empty() {
            &mut die.hi
        } else if !die.lo.is_empty() {
            &mut die.lo
        } else {
            return;
        };
        let (blk, unparked) = (&mut self.blk[..], &mut self.unparked);
        let txns = &mut self.txns.items[..];
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
        if self.multiplane {
            let planes = self.planes as usize;
            let mut picks;
            (n, picks) = start_partners(
                q,
                txns,
                blk,
                unparked,
                &h,
                planes,
                &mut die.batch_job,
                &mut die.batch_txn,
            );
            // Last first, so that the earlier positions stay valid.
            while picks != 0 {
                let i = 31 - picks.leading_zeros();
                picks &= !(1 << i);
                q.remove(i as usize);
            }
        }
        while let Some(t) = unparked.pop() {
            die_push(die, self.prio_reads, &txns[t as usize], t);
        }
        if woke != NONE {
            die_push(die, self.prio_reads, &txns[woke as usize], woke);
        }
        die.n = n as u8;
        die.kind = h.kind;
        die.purpose = h.purpose;
        die.batch_start = self.now;
        if h.kind == OpKind::Erase {
            self.erases_started(d);
        }
        let die = &mut self.dies[d as usize];
        if n > 1 {
            self.counters.multiplane_batches += 1;
        }
        die.phase = match h.kind {
            OpKind::Program => Phase::DataIn,
            _ => Phase::Cmd,
        };
        self.request_channel(d);
    }

    #[inline(always)]
    fn request_channel(&mut self, d: u32) {
        let ch = self.dies[d as usize].ch;
        let now = self.now;
        if self.exclusive {
            // The channel serves this die alone, which was busy until now.
            debug_assert!(self.chans[ch as usize].is_free(now));
            return self.grant(ch, d);
        }
        let c = &mut self.chans[ch as usize];
        if !c.is_free(now) {
            c.waiters.push_back(d);
            if !c.out && !c.wake {
                c.wake = true;
                let t = c.busy_until;
                self.q.push(t, Ev::ChanFree(ch));
            }
        } else {
            self.grant(ch, d);
        }
    }

    /// Give channel `ch` (free now) to die `d` for its pending transfer.
    #[inline(always)]
    fn grant(&mut self, ch: u32, d: u32) {
        if self.exclusive && self.dies[d as usize].kind == OpKind::Read {
            return self.grant_read_alone(ch, d);
        }
        let now = self.now;
        let die = &mut self.dies[d as usize];
        let n = die.n as u64;
        let (dur, kind, bytes) = match die.phase {
            Phase::Cmd => (
                self.cmd_t,
                XferKind::Command,
                self.settings.config.nand.cmd_addr_bytes as u64,
            ),
            Phase::DataIn => (
                self.cmd_t + Dur(self.xfer_t.0 * n),
                XferKind::DataIn,
                n * self.page,
            ),
            Phase::DataOut => return self.grant_data_out(ch, d),
            p => unreachable!("die {d} asked for the channel in phase {p:?}"),
        };
        let end = now + dur;
        let c = &mut self.chans[ch as usize];
        c.busy_ns += dur.0;
        // Command (and data-in) cycles end at `end`; the array operation follows.
        c.busy_until = end;
        if !c.waiters.is_empty() && !c.wake {
            c.wake = true;
            self.q.push(end, Ev::ChanFree(ch));
        }
        let t = match die.kind {
            OpKind::Read => self.t_r,
            OpKind::Program => self.t_prog,
            OpKind::Erase => self.t_bers,
        };
        die.phase = Phase::Array;
        // Reported to the observer when the operation ends (`report_array_op`).
        die.xfer = (kind, bytes, now);
        die.array_start = end;
        die.array_end = end + t;
        die.unreported = XFER | OP;
        self.q.push(end + t, Ev::DieDone(d));
    }

    /// `grant` for a read on a channel that serves no other die: nobody can
    /// take the channel between the command and the data-out, so the data-out
    /// follows the array operation at once and is booked now with the command;
    /// its `ChanDone` completes the batch (one event for the whole read, where
    /// a shared channel needs a `DieDone` and then a `ChanDone`). The observer
    /// hears of the command, the read and the data-out at once, now (as of
    /// any booking, before they run), so nothing of the read is left to report
    /// at a cut.
    #[inline(never)]
    fn grant_read_alone(&mut self, ch: u32, d: u32) {
        let now = self.now;
        let die = &mut self.dies[d as usize];
        debug_assert!(
            die.phase == Phase::Cmd,
            "die {d}: a read starts with its command"
        );
        let n = die.n as u64;
        let (start, purpose) = (now + self.cmd_t, die.purpose);
        let end = start + self.t_r;
        let out = Dur(self.xfer_t.0 * n);
        let out_end = end + out;
        die.phase = Phase::Array;
        die.array_start = start;
        die.array_end = end;
        die.unreported = 0;
        let c = &mut self.chans[ch as usize];
        debug_assert!(
            c.waiters.is_empty() && !c.out,
            "channel {ch} serves die {d} alone"
        );
        c.busy_ns += self.cmd_t.0 + out.0;
        c.busy_until = start;
        c.out = true;
        c.out_start = end;
        c.out_end = out_end;
        c.owner = d;
        self.q.push(out_end, Ev::ChanDone(ch));
        let bytes = self.settings.config.nand.cmd_addr_bytes as u64;
        self.obs.read_then_out(
            ChannelId(ch),
            DieId(d),
            bytes,
            now,
            purpose,
            n as u32,
            start,
            end,
            n * self.page,
            out_end,
        );
    }

    /// `grant` for a read's data-out transfer (reported to the observer now;
    /// it ends with `ChanDone`).
    #[inline(never)]
    fn grant_data_out(&mut self, ch: u32, d: u32) {
        let (bytes, end) = self.book_data_out(ch, d);
        let (now, purpose) = (self.now, self.dies[d as usize].purpose);
        self.obs.bus_xfer(
            ChannelId(ch),
            DieId(d),
            XferKind::DataOut,
            purpose,
            bytes,
            now,
            end,
        );
    }

    /// Book free channel `ch` for die `d`'s data-out from now on, ending with
    /// a `ChanDone`; returns its bytes and end.
    #[inline]
    fn book_data_out(&mut self, ch: u32, d: u32) -> (u64, SimTime) {
        let n = self.dies[d as usize].n as u64;
        let dur = Dur(self.xfer_t.0 * n);
        let end = self.now + dur;
        let c = &mut self.chans[ch as usize];
        c.busy_ns += dur.0;
        c.out = true;
        c.out_start = self.now;
        c.out_end = end;
        c.owner = d;
        self.q.push(end, Ev::ChanDone(ch));
        (n * self.page, end)
    }

    /// The command/data-in transfer booked on `ch` has ended: the next waiter
    /// gets the channel.
    fn on_chan_free(&mut self, ch: u32) {
        let c = &mut self.chans[ch as usize];
        c.wake = false;
        if let Some(w) = c.waiters.pop_front() {
            self.grant(ch, w);
        }
    }

    /// A data-out transfer has ended: the die's batch is complete.
    fn on_chan_done(&mut self, ch: u32) {
        let c = &mut self.chans[ch as usize];
        let d = c.owner;
        c.out = false;
        if let Some(w) = c.waiters.pop_front() {
            self.grant(ch, w);
        }
        self.complete_batch(d);
    }

    /// Report die `d`'s command/data-in transfer and array operation to the
    /// observer (each once). They are reported when the operation ends, or at a
    /// cut point (drain start, end of run) as far as they began by then, so that
    /// the observer sees each die's activities in order and, at a cut, every
    /// activity that began before it.
    #[inline(always)]
    fn report_array_op(&mut self, d: u32) {
        let die = &mut self.dies[d as usize];
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
    fn report_started_ops(&mut self) {
        for d in 0..self.dies.len() {
            let die = &mut self.dies[d];
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

    fn on_die_done(&mut self, d: u32) {
        let die = &self.dies[d as usize];
        if die.kind != OpKind::Read {
            self.report_array_op(d);
            self.complete_batch(d);
            return;
        }
        if die.unreported == XFER | OP && self.chans[die.ch as usize].is_free(self.now) {
            // The channel is free: the data-out starts now, and the observer
            // hears of the command, the read and the data-out at once.
            let die = &mut self.dies[d as usize];
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
        self.dies[d as usize].phase = Phase::DataOut;
        self.request_channel(d);
    }

    fn complete_batch(&mut self, d: u32) {
        let die = &mut self.dies[d as usize];
        let mut waiters = false;
        if die.kind == OpKind::Read {
            let (n, txs) = (die.n as usize, die.batch_txn);
            waiters = die.purpose == Purpose::Translation;
            for &t in &txs[..n] {
                self.read_done(t);
            }
            if waiters {
                self.take_tp_waiters(&txs[..n]);
            }
        }
        let die = &mut self.dies[d as usize];
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

    /// A transaction of job `j` is done.
    #[inline(always)]
    fn txn_done(&mut self, j: u32) {
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

    fn job_done(&mut self, j: u32) {
        let job = self.jobs[j];
        self.jobs.remove(j);
        self.txns.release(job.run, job.run_len);
        if job.gating {
            self.cmd_job_done(job.cmd);
        } else {
            self.bg_jobs -= 1;
            self.maybe_background();
        }
    }

    // -------------------------------------------------------- report

    #[allow(clippy::field_reassign_with_default)]
    fn report(&self, end: SimTime, wall: f64) -> Report {
        let g = self.settings.geometry;
        let c = &self.settings.config;
        let k = &self.counters;
        let span = end.since(self.start);
        let secs = span.secs_f64();
        let mut r = Report::default();
        r.host = HostReport {
            requests: k.requests,
            reads: k.reads,
            writes: k.writes,
            trims: k.trims,
            bytes_read: k.bytes_read,
            bytes_written: k.bytes_written,
            sim_time_s: secs,
            iops: if secs > 0.0 {
                k.requests as f64 / secs
            } else {
                0.0
            },
            mbps: if secs > 0.0 {
                (k.bytes_read + k.bytes_written) as f64 / secs / 1e6
            } else {
                0.0
            },
        };
        r.latency_us = LatencyReport {
            all: self.lat.all().summary(),
            read: self.lat.read.summary(),
            write: self.lat.write.summary(),
        };
        let (mn, mx, mean, std) = erase_stats(self.flash.erase_counts());
        let mut by = std::collections::BTreeMap::new();
        for (ki, kname) in ["read", "program", "erase"].iter().enumerate() {
            let mut m = std::collections::BTreeMap::new();
            for p in Purpose::ALL {
                m.insert(p.name().to_string(), k.flash_ops[ki][p.index()]);
            }
            by.insert(kname.to_string(), m);
        }
        let programs = k.flash_total(OpKind::Program);
        r.flash = FlashReport {
            page_reads: k.flash_total(OpKind::Read),
            page_programs: programs,
            block_erases: k.flash_total(OpKind::Erase),
            gc_page_copies: k.flash_ops[OpKind::Program as usize][Purpose::Gc.index()],
            waf: if k.host_pages_written > 0 {
                programs as f64 / k.host_pages_written as f64
            } else {
                0.0
            },
            erase_count_min: mn,
            erase_count_max: mx,
            erase_count_mean: mean,
            erase_count_std: std,
            by_purpose: by,
            multiplane_batches: k.multiplane_batches,
            joined_translation_reads: k.joined_translation_reads,
        };
        let mut st = self.ftl.stats().minus(&self.ftl_before);
        // The FTL counts the translation reads it plans; those that joined a
        // read in flight never reached the flash.
        st.translation_reads = st
            .translation_reads
            .saturating_sub(k.joined_translation_reads);
        let w = &self.work;
        let cc = &c.controller;
        let ftl_cycles = w.map_lookups * cc.cycles_per_map_lookup
            + w.gc_candidates * cc.cycles_per_gc_candidate
            + w.gc_pages * cc.cycles_per_gc_page;
        r.ftl = FtlReport {
            kind: self.ftl.name().to_string(),
            mapping_table_bytes: self.ftl.mapping_table_bytes(),
            logical_pages: self.ftl.logical_pages(),
            stats: st,
            cpu_s: self.settings.cycles(ftl_cycles).secs_f64(),
            dram_accesses: w.map_lookups + w.dram_accesses,
            write_buffer_hits: k.wbuf_hits,
            write_buffer_evictions: k.wbuf_evictions,
            read_buffer_hits: k.read_buffer_hits,
        };
        r.sched = SchedReport {
            kind: self.sched.name().to_string(),
            merged: k.merged,
            dispatched: k.dispatched,
            mean_queue_time_us: if k.dispatched > 0 {
                k.queue_time_ns as f64 / k.dispatched as f64 / 1e3
            } else {
                0.0
            },
            max_queue_time_us: k.max_queue_time_ns as f64 / 1e3,
            read_queue_time_us: QueueTimeSummary::new(
                k.dispatched_dir[0],
                k.queue_time_dir_ns[0],
                k.max_queue_time_dir_ns[0],
            ),
            write_queue_time_us: QueueTimeSummary::new(
                k.dispatched_dir[1],
                k.queue_time_dir_ns[1],
                k.max_queue_time_dir_ns[1],
            ),
            blocked: {
                let q = QueueTimeSummary::new(k.blocked, k.blocked_ns, k.max_blocked_ns);
                SleepSummary {
                    count: q.dispatched,
                    mean_us: q.mean,
                    max_us: q.max,
                }
            },
            plugged: k.plugged,
            plug_flushes: k.plug_flushes,
            dispatch_batches: k.dispatch_batches,
            requests_per_batch_mean: if k.dispatch_batches > 0 {
                k.dispatched as f64 / k.dispatch_batches as f64
            } else {
                0.0
            },
            requests_per_batch_max: k.max_batch,
            queue_depth: {
                // The stretch since the last change, up to the end.
                let len = self.sched.len() as u64;
                let dt = end.0.saturating_sub(self.qd_since.0);
                let span = end.0.saturating_sub(self.start.0);
                let mut hist = k.qd_hist;
                hist[qd_bucket(len)] += dt;
                let busy: u64 = hist[1..].iter().sum();
                hist[0] = span.saturating_sub(busy);
                QueueDepthSummary::new(k.qd_area + len as u128 * dt as u128, &hist, k.qd_max, span)
            },
        };
        let frac = |ns: u64| {
            if span.0 > 0 {
                ns as f64 / span.0 as f64
            } else {
                0.0
            }
        };
        let totals;
        let busy = match &self.busy_at_drain {
            Some(b) => b,
            None => {
                totals = BusyTimes {
                    dies: self.dies.iter().map(|d| d.busy_ns).collect(),
                    // A data-out booked with its read (a channel to one die)
                    // counts once it has begun, as one booked when the read
                    // ends would.
                    chans: self
                        .chans
                        .iter()
                        .map(|c| c.busy_ns - c.unstarted_out(self.now))
                        .collect(),
                    cpu: self.cpu_ns,
                    link: self.link_ns,
                };
                &totals
            }
        };
        r.utilization = UtilizationReport {
            channels: busy.chans.iter().map(|&ns| frac(ns)).sum::<f64>() / g.channels as f64,
            dies: busy.dies.iter().map(|&ns| frac(ns)).sum::<f64>() / g.total_dies() as f64,
            cpu: frac(busy.cpu),
            host_link: frac(busy.link),
        };
        let toml = c.to_toml();
        r.run = RunReport {
            events: k.events,
            wall_s: wall,
            precondition_wall_s: self.pre.wall_s,
            precondition: format!("{:?}", c.sim.precondition).to_lowercase(),
            precondition_pages: self.pre.random_pages,
            precondition_waf: self.pre.final_waf,
            precondition_steady: self.pre.steady,
            seed: c.sim.seed,
            config_hash: fnv1a(&toml),
            drain_s: Dur(self.drain_ns).secs_f64(),
            version: env!("CARGO_PKG_VERSION").to_string(),
        };
        for (name, n) in &self.notes {
            r.notes.insert(name.to_string(), *n);
        }
        for (name, n) in self.src.notes() {
            r.notes.insert(name, n);
        }
        for (name, v) in self.src.report_sections(end) {
            r.extra.insert(name, v);
        }
        self.flow_flash.report(&mut r.extra, &mut r.notes);
        for (name, n) in self.ftl.notes() {
            r.notes.insert(name.to_string(), n);
        }
        // The mapping table (or DFTL's cache and directory) and the write
        // buffer live in DRAM: a configuration whose DRAM cannot hold them is
        // simulated as given, and said to be so.
        let dram_need = self.ftl.mapping_table_bytes() + c.dram.write_buffer.0;
        if dram_need > c.dram.capacity.0 {
            r.notes.insert(
                "dram_capacity_exceeded_bytes".to_string(),
                dram_need - c.dram.capacity.0,
            );
        }
        r.config = serde_json::to_value(c).expect("config serializes");
        r
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn event_queue_pops_in_time_then_push_order() {
        event_queue_against_model(u32::MAX);
    }

    #[test]
    fn event_queue_keeps_its_order_through_renumbering() {
        // Renumber every 37 pushes (up to ~100 events are pending then).
        event_queue_against_model(37);
    }

    fn event_queue_against_model(seq_limit: u32) {
        // Against a plain model: pending (time, seq, id), least first.
        let mut q = EventQueue {
            seq_limit,
            ..Default::default()
        };
        let mut model: Vec<(u64, u64, u32)> = Vec::new();
        let (mut now, mut seq, mut x) = (0u64, 0u64, 12345u64);
        for n in 0..20_000u32 {
            // Ids out of push order, so that ties are not broken by the id.
            let id = n * 7919 % 20011;
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            // Bursts of pushes (up to ~100 pending) and drains, with ties.
            let pending = model.len();
            if (x >> 60) < 9 || pending == 0 || (n / 2000) % 2 == 0 && pending < 100 {
                let t = now + (x >> 33) % 50;
                let fifo = (x >> 20) % 5;
                seq += 1;
                if fifo < 2 {
                    // A FIFO stream needs non-decreasing times: book it after
                    // everything the stream holds.
                    let k = fifo as usize;
                    let last = q.fifo[k].back().map_or(0, |e| (e >> 64) as u64);
                    let t = t.max(last);
                    let ev = [Ev::CmdReady(id), Ev::CmdComplete(id)][k];
                    q.push_fifo(k, SimTime(t), ev);
                    model.push((t, seq, id));
                } else {
                    q.push(SimTime(t), Ev::DieDone(id));
                    model.push((t, seq, id));
                }
            } else {
                model.sort();
                let (t, _, id) = model.remove(0);
                let (qt, ev) = q.pop().expect("the queue holds events");
                let qid = match ev {
                    Ev::CmdReady(i) | Ev::CmdComplete(i) | Ev::DieDone(i) => i,
                    e => panic!("unexpected {e:?}"),
                };
                assert_eq!((qt.0, qid), (t, id));
                now = t;
            }
        }
        model.sort();
        for (t, _, id) in model {
            let (qt, ev) = q.pop().expect("the queue holds events");
            assert_eq!(qt.0, t);
            assert!(matches!(ev, Ev::CmdReady(i) | Ev::CmdComplete(i) | Ev::DieDone(i) if i == id));
        }
        assert!(q.pop().is_none());
    }

    #[test]
    fn key_mask_flags_equal_keys() {
        for len in 0..=32usize {
            let mut ks = [NO_KEY; PARTNER_WINDOW];
            for (i, k) in ks[..len].iter_mut().enumerate() {
                *k = (i as u16 % 3) | (i as u16 % 2) << 8;
            }
            let want = (0..len)
                .filter(|i| i % 3 == 1 && i % 2 == 0)
                .fold(0u32, |m, i| m | 1 << i);
            assert_eq!(key_mask(&ks, 1), want, "{len} keys");
        }
    }

    #[test]
    fn die_queue_keeps_order_through_removals_and_reclaiming() {
        let mut q = DieQueue::default();
        let mut model = std::collections::VecDeque::new();
        let mut next = 0u32;
        let mut compacted = false;
        for round in 0..2000u32 {
            let head_before = q.head;
            // Grow and shrink in waves so that bulk reclaiming happens.
            let grow = (round / 300) % 2 == 0;
            for _ in 0..if grow { 2 } else { model.is_empty() as u32 } {
                q.push(next, (next % 7) as u16);
                model.push_back(next);
                next += 1;
            }
            if grow {
                assert_eq!(q.pop_front(), model.pop_front().unwrap());
            }
            if round % 3 == 0 && !model.is_empty() {
                let i = (round as usize * 7) % model.len().min(PARTNER_WINDOW);
                if i == 0 {
                    assert_eq!(q.pop_front(), model.pop_front().unwrap());
                } else {
                    q.remove(i);
                    model.remove(i);
                }
            }
            if !grow && !model.is_empty() {
                assert_eq!(q.pop_front(), model.pop_front().unwrap());
            }
            assert_eq!(q.is_empty(), model.is_empty());
            for key in 0..7 {
                let want = model
                    .iter()
                    .take(PARTNER_WINDOW)
                    .enumerate()
                    .filter(|(_, &t)| t % 7 == key)
                    .fold(0u32, |m, (i, _)| m | 1 << i);
                assert_eq!(q.matches(key as u16), want, "round {round}, key {key}");
            }
            compacted |= q.head < head_before && !q.is_empty();
            for (i, &t) in model.iter().enumerate() {
                assert_eq!(q.get(i), t);
            }
            let w = model.len().min(PARTNER_WINDOW);
            let want = (0..w)
                .filter(|&i| model[i] % 7 == 3)
                .fold(0u32, |m, i| m | 1 << i);
            assert_eq!(q.matches(3), want);
        }
        assert!(compacted, "the popped slots were never reclaimed in bulk");
    }

    /// `start_partners` on a die whose queue holds `queued` (transactions
    /// 1.. of `txns`, transaction 0 being the head), each block at write
    /// pointer `wp[b]`: (batch size, picks, jobs of the partners).
    fn partners(txns: &[Txn], wp: &[u32], planes: usize) -> (usize, u32, Vec<u32>) {
        let mut runs = txns.to_vec();
        let mut blk: Vec<BlockExec> = wp
            .iter()
            .map(|&w| BlockExec {
                exec_wp: w,
                ..Default::default()
            })
            .collect();
        let mut q = DieQueue::default();
        for (t, tx) in txns.iter().enumerate().skip(1) {
            q.push(t as u32, tx.qkey);
        }
        let (mut unparked, mut jobs, mut txs) =
            (Vec::new(), [NONE; MAX_PLANES], [NONE; MAX_PLANES]);
        let h = txns[0];
        let (n, picks) = start_partners(
            &q,
            &mut runs,
            &mut blk,
            &mut unparked,
            &h,
            planes,
            &mut jobs,
            &mut txs,
        );
        for i in 1..n {
            assert_eq!(
                runs[txs[i] as usize].job, jobs[i],
                "a partner's job and transaction agree"
            );
        }
        (n, picks, jobs[1..n].to_vec())
    }

    fn program(blk: u32, pg: u16, plane: u8, job: u32) -> Txn {
        Txn {
            blk,
            pg,
            plane,
            job,
            kind: OpKind::Program,
            purpose: Purpose::Gc,
            qkey: queue_key(OpKind::Program, Purpose::Gc, pg),
            ..Default::default()
        }
    }

    #[test]
    fn partners_share_the_page_offset_even_where_queue_keys_collide() {
        // Blocks of 4096 pages: offsets 5 and 2053 share a 16-bit queue key,
        // so only the batch key tells them apart.
        let (h, far, near) = (
            program(0, 5, 0, 10),
            program(1, 2053, 1, 11),
            program(2, 5, 1, 12),
        );
        assert_eq!(
            queue_key(far.kind, far.purpose, far.pg),
            queue_key(h.kind, h.purpose, h.pg)
        );
        let (n, picks, jobs) = partners(&[h, far, near], &[5, 2053, 5], 2);
        assert_eq!((n, picks, jobs), (2, 0b10, vec![12]));
    }

    #[test]
    fn partners_are_ready_on_planes_of_their_own_up_to_the_plane_count() {
        let txns = [
            program(0, 7, 0, 10),
            program(1, 7, 0, 11), // the head's plane
            program(2, 7, 1, 12), // not ready: its block is at page 6
            program(3, 8, 2, 13), // another offset
            program(4, 7, 2, 14),
            program(5, 7, 2, 15), // plane 2 is taken by now
            program(6, 7, 3, 16),
            program(7, 7, 1, 17), // plane 1, if transaction 2 did not take it
        ];
        let wp = [7, 7, 6, 8, 7, 7, 7, 7];
        let (n, picks, jobs) = partners(&txns, &wp, 4);
        // Queue positions are transaction numbers minus one.
        assert_eq!(
            (n, picks, jobs),
            (4, 1 << 3 | 1 << 5 | 1 << 6, vec![14, 16, 17])
        );
        // With transaction 2 ready, the batch is full before transaction 7.
        let (n, picks, jobs) = partners(&txns, &[7, 7, 7, 8, 7, 7, 7, 7], 4);
        assert_eq!(
            (n, picks, jobs),
            (4, 1 << 1 | 1 << 3 | 1 << 5, vec![12, 14, 16])
        );
        // Two planes: one partner, the first that qualifies.
        let (n, picks, jobs) = partners(&txns, &wp, 2);
        assert_eq!((n, picks, jobs), (2, 1 << 3, vec![14]));
    }
}
