//! The flash scheduler: its state (`FlashSched`: transactions, jobs,
//! per-block execution order (parking), dies with their queues, channels)
//! and the free functions on its tables (readiness, wake-ups, multi-plane
//! partner search, die queues). (Over 800 lines with the unit tests of the
//! die queue and the partner search, which need these private types; the
//! code itself is about 800.)

use super::*;

/// A block state (erase epoch, write pointer) as one ordered integer: a
/// parked transaction's trigger, compared with its block's state.
#[inline]
pub(super) fn trigger_key(epoch: u32, wp: u16) -> u64 {
    (epoch as u64) << 16 | wp as u64
}

/// May `tx` start now, its block being in state `b`? Programs and erases of
/// a block run in the order the FTL planned them; a read waits for the
/// program of its page.
#[inline(always)]
pub(super) fn can_start(b: &BlockExec, tx: &Txn) -> bool {
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
pub(super) fn txn_ready(blk: &[BlockExec], txns: &[Txn], t: u32) -> bool {
    let tx = &txns[t as usize];
    can_start(&blk[tx.blk as usize], tx)
}

/// The block state at which `tx` may start (see [`FlashSched::trigger`]).
#[inline(always)]
pub(super) fn trigger_of(tx: &Txn) -> u64 {
    let x = match tx.kind {
        OpKind::Read => tx.pg + 1,
        OpKind::Program | OpKind::Erase => tx.pg,
    };
    trigger_key(tx.epoch, x)
}

/// [`FlashSched::trigger`] on the transactions alone.
#[inline(always)]
pub(super) fn txn_trigger(txns: &[Txn], t: u32) -> u64 {
    trigger_of(&txns[t as usize])
}

/// Transaction `t` starts: its block's state moves on, and the transactions
/// parked on the block that may start now are added to `unparked` (the
/// caller queues them on their die).
#[inline(always)]
pub(super) fn txn_started(
    blk: &mut [BlockExec],
    txns: &mut [Txn],
    unparked: &mut Vec<u32>,
    t: u32,
) {
    let w = txn_started_one(blk, txns, unparked, t);
    if w != NONE {
        unparked.push(w);
    }
}

/// [`txn_started`], except that a lone woken transaction (the usual case) is
/// returned instead of added to `unparked` (NONE if it woke none or several).
#[inline(always)]
pub(super) fn txn_started_one(
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
/// erase; of the offset, the bits of `page_mask`: all of them, or none where
/// the multi-plane rule lets partners be at other offsets) that may start
/// now, each on a plane not yet in the batch, up to `planes` transactions in
/// all. Their jobs go to `jobs[1..]`. Returns the
/// batch size and the partners' queue positions as a bit set (the caller
/// removes them from `q`).
#[inline(always)]
pub(super) fn start_partners(
    q: &DieQueue,
    txns: &mut [Txn],
    blk: &mut [BlockExec],
    unparked: &mut Vec<u32>,
    h: &Txn,
    planes: usize,
    page_mask: u16,
    jobs: &mut [u32; MAX_PLANES],
    txs: &mut [u32; MAX_PLANES],
) -> (usize, u32) {
    let mut m = q.matches(h.qkey);
    if m == 0 {
        return (1, 0);
    }
    // Queue keys may be equal where batch keys are not (large blocks).
    let hkey = batch_key(h.kind, h.purpose, h.pg & page_mask);
    let (mut used, mut n, mut picks) = (1u32 << (h.plane & PLANE_BITS), 1usize, 0u32);
    while m != 0 {
        let i = m.trailing_zeros() as usize;
        m &= m - 1;
        let t = q.get(i);
        let tx = &txns[t as usize];
        if used & (1 << (tx.plane & PLANE_BITS)) != 0
            || batch_key(tx.kind, tx.purpose, tx.pg & page_mask) != hkey
            || !txn_ready(blk, txns, t)
        {
            continue;
        }
        used |= 1 << (tx.plane & PLANE_BITS);
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

/// `Txn::plane`'s flag: the transaction yields to foreground work.
pub(super) const YIELDS: u8 = 0x80;
/// `Txn::plane`'s plane bits.
pub(super) const PLANE_BITS: u8 = 0x7f;

/// A read the die serves first (a host or mapping read), with
/// `controller.prioritize_reads`.
#[inline(always)]
pub(super) fn is_high_priority(tx: &Txn) -> bool {
    tx.kind == OpKind::Read && matches!(tx.purpose, Purpose::Host | Purpose::Translation)
}

/// Queue ready transaction `t` (`tx`) on `die`: host and translation reads
/// ahead of everything else where reads are preferred; GC work that yields
/// (`YIELDS`) behind everything else.
#[inline(always)]
pub(super) fn die_push(die: &mut Die, prio_reads: bool, tx: &Txn, t: u32) {
    let key = tx.qkey;
    if prio_reads && is_high_priority(tx) {
        die.hi.push(t, key);
    } else if tx.plane & YIELDS != 0 {
        die.bg.push(t, key);
    } else {
        die.lo.push(t, key);
    }
}

/// The queue die `die` takes its next batch from: host and mapping reads
/// (`hi`), then everything else (`lo`), then GC that yields (`bg`) — except
/// while GC is `urgent` (`Simulation::gc_urgent`) or a foreground program
/// waits for an erase that GC has not run yet (`Die::starved`): then GC goes
/// first, as MQSim's TSU serves GC first in urgent mode
/// (`TSU_OutOfOrder::service_read_transaction`).
#[inline(always)]
pub(super) fn next_queue(die: &Die, urgent: bool) -> Option<QueueSel> {
    if (urgent || die.starved > 0) && !die.bg.is_empty() {
        Some(QueueSel::Bg)
    } else if !die.hi.is_empty() {
        Some(QueueSel::Hi)
    } else if !die.lo.is_empty() {
        Some(QueueSel::Lo)
    } else if !die.bg.is_empty() {
        Some(QueueSel::Bg)
    } else {
        None
    }
}

/// One of a die's queues (`next_queue`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum QueueSel {
    Hi,
    Lo,
    Bg,
}

/// The queue `sel` of `die` (a macro: it borrows the one field, so the
/// caller may go on using the die's others).
macro_rules! die_queue {
    ($die:expr, $sel:expr) => {
        match $sel {
            QueueSel::Hi => &mut $die.hi,
            QueueSel::Lo => &mut $die.lo,
            QueueSel::Bg => &mut $die.bg,
        }
    };
}
pub(super) use die_queue;

// Two steps of starting a batch that the die (`die.rs`) and its cache
// register (`cache.rs`) share. Macros, not functions: as functions they
// cost the die's hot path about 0.5 % more instructions per write (its
// code generation changed), where the macros expand to the code it had.

/// Take a batch's partners (`picks`, a bit per position) out of the queue
/// `q` they were found in, last first, so the earlier positions stay valid.
macro_rules! remove_picked {
    ($q:expr, $picks:expr) => {{
        let mut picks: u32 = $picks;
        while picks != 0 {
            let i = 31 - picks.leading_zeros();
            picks &= !(1 << i);
            $q.remove(i as usize);
        }
    }};
}
pub(super) use remove_picked;

/// Queue on `die` what starting a batch made ready: the transactions it
/// unparked, then the head's lone woken one (`NONE` if none).
macro_rules! queue_woken {
    ($die:expr, $prio:expr, $txns:expr, $unparked:expr, $woke:expr) => {{
        while let Some(t) = $unparked.pop() {
            die_push($die, $prio, &$txns[t as usize], t);
        }
        if $woke != NONE {
            die_push($die, $prio, &$txns[$woke as usize], $woke);
        }
    }};
}
pub(super) use queue_woken;

// ------------------------------------------------------------------ the part

/// The flash scheduler's state: the jobs and transactions in flight, each
/// block's execution order and parked transactions, the dies with their
/// queues and the channels, and the scratch of planning and completion.
/// Owned by `plan.rs` (planning, parking, release), `die.rs`, `channel.rs`,
/// `suspend.rs` and `cache.rs` (the phases); the controller only counts
/// its jobs.
pub(super) struct FlashSched {
    /// The transactions, a contiguous run per job.
    pub(super) txns: Runs,
    pub(super) jobs: Slab<Job>,
    pub(super) dies: Vec<Die>,
    pub(super) chans: Vec<Chan>,
    /// Per block: the order its programs and erases execute in, and the
    /// transactions parked on it (one record: one memory access per block).
    pub(super) blk: Vec<BlockExec>,
    /// Scratch of `commit_plan`: per job of a plan, its `Job`; per (job,
    /// stage), its transaction count, then the next slot of its run to fill.
    pub(super) plan_jobs: Vec<u32>,
    pub(super) plan_fill: Vec<u32>,
    /// Transactions a batch start unparked, to be queued on their die.
    pub(super) unparked: Vec<u32>,
    /// Translation-page reads queued or running, by (block, page): their
    /// erase epoch and the transactions waiting for them (linked through
    /// `Txn::next`). Looked up, never iterated, so its order decides nothing.
    pub(super) tp_reads: std::collections::HashMap<u64, TpRead>,
    /// Scratch of `take_tp_waiters` and `finish_tp_waiters`.
    pub(super) tp_woken: Vec<u32>,
    /// Reads planned while their block was two or more erases behind, by
    /// (block, erase epoch): see `BlockExec::reads`.
    pub(super) late_reads: std::collections::HashMap<(u32, u32), u32>,
    /// Paced GC: erases planned and not yet started, per plane (flat plane
    /// id; see `Simulation::gc_urgent`).
    pub(super) pending_erases: Vec<u32>,
    /// Per die, its suspended operation (`suspend.rs`; empty unless the
    /// NAND model suspends).
    pub(super) susp: Vec<super::suspend::DieSuspension>,
    /// Per die, its cache register (`cache.rs`; empty unless the NAND
    /// model has cache commands).
    pub(super) slots: Vec<super::cache::CacheSlot>,
}

impl FlashSched {
    /// Idle dies and channels over geometry `g`, every block erased.
    pub(super) fn new(g: crate::addr::Geometry, k: &Consts) -> FlashSched {
        let per_die = |on: bool| if on { g.total_dies() as usize } else { 0 };
        FlashSched {
            txns: Runs::default(),
            jobs: Slab::default(),
            dies: (0..g.total_dies())
                .map(|d| Die::idle(g.channel_of_die(DieId(d)).0))
                .collect(),
            chans: (0..g.channels).map(|_| Chan::default()).collect(),
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
            pending_erases: vec![0; g.total_planes() as usize],
            susp: (0..per_die(k.suspend_on))
                .map(|_| Default::default())
                .collect(),
            slots: (0..per_die(k.cache.any()))
                .map(|_| Default::default())
                .collect(),
        }
    }

    /// The block state (`trigger_key` of its epoch and write pointer) at which
    /// a parked transaction may start.
    #[inline]
    pub(super) fn trigger(&self, t: u32) -> u64 {
        txn_trigger(&self.txns.items, t)
    }

    /// Park transaction `t`, which may not start yet, on its block `b`:
    /// after every parked transaction with the same or an earlier trigger
    /// (usually at the tail: a block's programs are planned in order).
    #[inline(always)]
    pub(super) fn park(&mut self, t: u32, b: usize) {
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
    }

    /// The translation reads `txs` are done: their entries leave the
    /// in-flight map, and the transactions that waited for them (see
    /// `Simulation::join_tp_read`) go to `tp_woken`, to be done after the
    /// batch's own.
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

    /// Busy nanoseconds of each die and channel up to `cut` (not after
    /// now): what is booked or running past it is left out.
    pub(super) fn busy_until_cut(&self, cut: SimTime) -> (Vec<u64>, Vec<u64>) {
        let past = |t: SimTime| t.0.saturating_sub(cut.0);
        let dies = self
            .dies
            .iter()
            .map(|d| match d.phase {
                // A batch adds its whole time when it completes.
                Phase::Idle => d.busy_ns,
                _ => d.busy_ns + cut.0.saturating_sub(d.batch_start.0),
            })
            .collect();
        let chans = self
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
            .collect();
        (dies, chans)
    }

    /// Busy nanoseconds of each die and channel at `now`, the end of the
    /// run: a data-out booked with its read (a channel to one die) counts
    /// once it has begun, as one booked when the read ends would.
    pub(super) fn busy_now(&self, now: SimTime) -> (Vec<u64>, Vec<u64>) {
        let dies = self.dies.iter().map(|d| d.busy_ns).collect();
        let chans = self
            .chans
            .iter()
            .map(|c| c.busy_ns - c.unstarted_out(now))
            .collect();
        (dies, chans)
    }

    /// The measured phase starts again at `now`: the dies' and channels'
    /// busy times restart (a data-out booked with its read and not begun
    /// yet belongs to the new phase, as it would if booked when the read
    /// ends).
    pub(super) fn restart_busy(&mut self, now: SimTime) {
        for d in &mut self.dies {
            d.busy_ns = 0;
        }
        for c in &mut self.chans {
            c.busy_ns = c.unstarted_out(now);
        }
    }
}

// ------------------------------------------------------------------ slab

#[derive(Debug)]
pub(super) struct Slab<T> {
    pub(super) items: Vec<T>,
    pub(super) free: Vec<u32>,
    pub(super) live: u32,
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
    pub(super) fn insert(&mut self, t: T) -> u32 {
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
    pub(super) fn remove(&mut self, i: u32) {
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
pub(super) struct Runs {
    pub(super) items: Vec<Txn>,
    /// `free[k]`: starts of free runs of `2^k` slots.
    pub(super) free: Vec<Vec<u32>>,
    /// Transactions planned and not yet done (for the stall diagnostic).
    pub(super) live: u32,
}
impl Runs {
    /// A run for `n` (>= 1) transactions; returns its first slot.
    #[inline]
    pub(super) fn alloc(&mut self, n: u32) -> u32 {
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
    pub(super) fn release(&mut self, start: u32, n: u32) {
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
pub(super) struct Job {
    pub(super) cmd: u32,
    pub(super) gating: bool,
    /// The first transaction not yet released (`run + run_len` once all are).
    pub(super) head: u32,
    /// Transactions of the released stage not yet done.
    pub(super) pending: u32,
    pub(super) next_release: u32,
    /// Its transactions' run in `Runs`: first slot and count. They fill it in
    /// (stage, plan) order, so each stage is a range of slots.
    pub(super) run: u32,
    pub(super) run_len: u32,
}

/// A flash transaction: one page read or program, or one block erase (24
/// bytes: tens of thousands are alive at once under GC).
#[derive(Clone, Copy, Debug)]
pub(super) struct Txn {
    /// Flat block.
    pub(super) blk: u32,
    pub(super) job: u32,
    /// While the transaction is parked: the next transaction parked on the
    /// same block.
    pub(super) next: u32,
    /// Erases of the block planned before this op (its block "epoch").
    pub(super) epoch: u32,
    /// Read or program: the page in the block. Erase: the pages written in
    /// the block when it was planned.
    pub(super) pg: u16,
    pub(super) kind: OpKind,
    pub(super) purpose: Purpose,
    pub(super) stage: u8,
    /// Plane in its die (`& PLANE_BITS`), and `YIELDS`: the transaction is
    /// GC work that yields to its die's foreground work (`ftl.gc_mode =
    /// "paced"`: a non-gating GC or wear-levelling job's operation).
    pub(super) plane: u8,
    /// `queue_key` (kept here: a transaction is queued once or twice).
    pub(super) qkey: u16,
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
pub(super) struct BlockExec {
    pub(super) plan_epoch: u32,
    pub(super) exec_epoch: u32,
    pub(super) parked: u32,
    pub(super) parked_tail: u32,
    /// Pages programmed; a u32 so that its increment is a full-width store
    /// that later reads are forwarded from.
    pub(super) exec_wp: u32,
    pub(super) die: u16,
    pub(super) plane: u8,
    /// `LATE_READS`: epochs with reads in `FlashSched::late_reads` (see
    /// `reads`); `STARVING`: a foreground program waits for the block's
    /// erase (see `Die::starved`).
    pub(super) late: u8,
    /// Reads planned and not yet done, by erase epoch parity: an erase waits
    /// until every read of its block planned before it is done (as MQSim's
    /// GC waits for a victim's ongoing user reads), so a read never finds its
    /// page erased under it. A read planned two or more erases ahead of the
    /// executed epoch would share a count with an erase still to run: it is
    /// counted in `FlashSched::late_reads` until that erase has run.
    pub(super) reads: [u32; 2],
}

impl BlockExec {
    /// The block's plane as a flat id, die by die (`planes` planes a die).
    #[inline]
    pub(super) fn flat_plane(&self, planes: u32) -> usize {
        self.die as usize * planes as usize + self.plane as usize
    }
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
pub(super) enum Phase {
    Idle,
    Cmd,
    DataIn,
    Array,
    DataOut,
    /// A program or erase is being suspended for reads (see `suspend.rs`).
    Suspending,
    /// A cache read's page waits in the page register for the cache
    /// register to empty (see `cache.rs`).
    CacheWait,
    /// A cache read's page moves to the cache register (`t_dcbsyr`).
    CacheCopy,
}

#[derive(Debug)]
pub(super) struct Die {
    pub(super) phase: Phase,
    pub(super) kind: OpKind,
    pub(super) purpose: Purpose,
    /// The job of each transaction of the running batch, noted when it
    /// starts (its record is in cache then): completing the batch needs only
    /// these (a job's transactions are freed with its run).
    pub(super) batch_job: [u32; MAX_PLANES],
    /// The running batch's transactions (read back only when a batch of
    /// translation reads completes: see `FlashSched::tp_reads`).
    pub(super) batch_txn: [u32; MAX_PLANES],
    pub(super) n: u8,
    pub(super) hi: DieQueue,
    pub(super) lo: DieQueue,
    /// GC work that yields to the die's foreground work (`YIELDS`).
    pub(super) bg: DieQueue,
    /// Blocks of this die on which a foreground program waits for an erase
    /// not yet run (`STARVING`): while any, the die serves `bg` first.
    pub(super) starved: u32,
    pub(super) batch_start: SimTime,
    /// The command/data-in transfer before the array operation: kind, bytes, start.
    pub(super) xfer: (XferKind, u64, SimTime),
    /// The array operation `[array_start, array_end)`.
    pub(super) array_start: SimTime,
    pub(super) array_end: SimTime,
    /// What of the transfer (`XFER`) and the operation (`OP`) the observer has
    /// not been told yet.
    pub(super) unreported: u8,
    pub(super) busy_ns: u64,
    /// The channel the die is on.
    pub(super) ch: u32,
    /// The running batch's first transaction's flat block and page (for
    /// an erase: the pages written in the block when it was planned).
    pub(super) blk: u32,
    pub(super) pg: u16,
}

impl Die {
    /// An idle die on channel `ch`, its queues empty.
    pub(super) fn idle(ch: u32) -> Die {
        Die {
            ch,
            blk: 0,
            pg: 0,
            phase: Phase::Idle,
            kind: OpKind::Read,
            purpose: Purpose::Host,
            batch_job: [NONE; MAX_PLANES],
            batch_txn: [NONE; MAX_PLANES],
            n: 0,
            hi: DieQueue::default(),
            lo: DieQueue::default(),
            bg: DieQueue::default(),
            starved: 0,
            batch_start: SimTime::ZERO,
            xfer: (XferKind::Command, 0, SimTime::ZERO),
            array_start: SimTime::ZERO,
            array_end: SimTime::ZERO,
            unreported: 0,
            busy_ns: 0,
        }
    }
}

/// How long die `d`'s batch, whose array phase starts at `start`, keeps it
/// busy: the NAND model's answer (told first of the blocks a program or
/// erase touches, if it tracks them).
#[inline(never)]
pub(super) fn array_time<N: Nand>(
    nand: &mut N,
    flash: &FlashArray,
    txns: &[Txn],
    die: &Die,
    d: u32,
    start: SimTime,
) -> Dur {
    if nand.tracks_blocks() && die.kind != OpKind::Read {
        for &t in &die.batch_txn[..die.n as usize] {
            let b = txns[t as usize].blk;
            match die.kind {
                OpKind::Program => nand.programmed(b, start),
                _ => nand.erased(b, start),
            }
        }
    }
    let op = ArrayOp {
        kind: die.kind,
        purpose: die.purpose,
        die: d,
        block: die.blk,
        page: die.pg,
        planes: die.n,
    };
    let cx = NandCtx {
        now: start,
        erase_counts: flash.erase_counts(),
    };
    nand.array_time(&op, &cx)
}

/// The array time of die `d`'s batch (`kind`, `n` planes; the callers know
/// both) when it starts at `start`: its kind's
/// fixed time where the NAND model has one, else the model's, plus the
/// multi-plane rule's plane gap per plane after the first. A macro for the
/// reason given at `remove_picked!`: the channel's hot path (`grant`).
macro_rules! batch_time {
    ($engine:ident, $die:expr, $d:expr, $start:expr, $kind:expr, $n:expr) => {
        match $engine.consts.fixed_t {
            Some(t) => t[$kind as usize],
            None => array_time(
                &mut $engine.hw.nand,
                &$engine.flash,
                &$engine.fl.txns.items,
                $die,
                $d,
                $start,
            ),
        } + Dur($engine.consts.plane_gap.0 * ($n - 1))
    };
}
pub(super) use batch_time;

/// How many queued transactions the multi-plane partner search looks at.
pub(super) const PARTNER_WINDOW: usize = 32;

/// A die's queue of ready transactions, oldest first: a vector with a moving
/// head (popped slots are reclaimed in bulk when a push finds it full), with
/// each transaction's `queue_key` kept apart from its id, so that the partner
/// search compares one contiguous run of 16-bit keys (vectorised) without
/// touching the transactions themselves; only the few entries whose key
/// matches are looked at. The keys are followed by `PARTNER_WINDOW` padding
/// keys that match nothing, so the search always compares a full window.
#[derive(Debug)]
pub(super) struct DieQueue {
    /// `queue_key` per entry, then `NO_KEY` in every slot up to the
    /// capacity of `txns` plus `PARTNER_WINDOW` (so that a push writes one
    /// key).
    pub(super) keys: Vec<u16>,
    pub(super) txns: Vec<u32>,
    pub(super) head: usize,
}

/// The padding key: no `queue_key` equals it (its kind bits would be 3).
pub(super) const NO_KEY: u16 = u16::MAX;

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
    pub(super) fn is_empty(&self) -> bool {
        self.head == self.txns.len()
    }
    #[inline]
    pub(super) fn push(&mut self, t: u32, key: u16) {
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
    pub(super) fn make_room(&mut self) {
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
    pub(super) fn get(&self, i: usize) -> u32 {
        self.txns[self.head + i]
    }
    /// Remove and return the oldest entry's transaction (its slot is
    /// reclaimed by a later `push`).
    #[inline]
    pub(super) fn pop_front(&mut self) -> u32 {
        let t = self.txns[self.head];
        self.head += 1;
        t
    }
    /// Remove entry `i` (0 = oldest) by shifting the older ones up one slot.
    #[inline]
    pub(super) fn remove(&mut self, i: usize) {
        let h = self.head;
        for j in (h..h + i).rev() {
            self.keys[j + 1] = self.keys[j];
            self.txns[j + 1] = self.txns[j];
        }
        self.head += 1;
    }
    /// Move entry `i` (0 = oldest) to the head, the older ones one slot
    /// down.
    pub(super) fn move_to_front(&mut self, i: usize) {
        let h = self.head;
        let (t, k) = (self.txns[h + i], self.keys[h + i]);
        for j in (h..h + i).rev() {
            self.keys[j + 1] = self.keys[j];
            self.txns[j + 1] = self.txns[j];
        }
        self.txns[h] = t;
        self.keys[h] = k;
    }
    /// Bit `i` set iff entry `i`, among the first `PARTNER_WINDOW`, has
    /// queue key `key`.
    #[inline]
    pub(super) fn matches(&self, key: u16) -> u32 {
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
pub(super) fn key_mask(ks: &[u16; PARTNER_WINDOW], key: u16) -> u32 {
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
pub(super) fn key_mask(ks: &[u16; PARTNER_WINDOW], key: u16) -> u32 {
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
pub(super) fn batch_key(kind: OpKind, purpose: Purpose, pg: u16) -> u32 {
    let off = if kind == OpKind::Erase { 0 } else { pg as u32 };
    (kind as u32) | (purpose.index() as u32) << 4 | off << 8
}

/// The kind and purpose bits of a `queue_key`, and their value for a
/// translation-page read.
pub(super) const KIND_PURPOSE_MASK: u16 = 0x1f;
pub(super) const TRANSLATION_READ: u16 = OpKind::Read as u16 | (Purpose::Translation as u16) << 2;

/// `batch_key` in 16 bits, as the die queues keep it: equal batch keys give
/// equal queue keys, and so do some unequal ones where a block has more
/// than 2048 pages (the offset's higher bits are dropped), so the partner
/// search checks `batch_key` on the entries it finds. The kind bits are
/// never 3, so no queue key is `NO_KEY`.
#[inline]
pub(super) fn queue_key(kind: OpKind, purpose: Purpose, pg: u16) -> u16 {
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
pub(super) struct Chan {
    /// End of the last command/data-in transfer booked.
    pub(super) busy_until: SimTime,
    /// A data-out transfer is booked (for `owner`): running, or (with the
    /// channel to one die) following the read it belongs to.
    pub(super) out: bool,
    pub(super) owner: u32,
    /// A `ChanFree` event is booked for `busy_until`.
    pub(super) wake: bool,
    /// Start and end of the booked (or last) data-out transfer.
    pub(super) out_start: SimTime,
    pub(super) out_end: SimTime,
    pub(super) waiters: VecDeque<u32>,
    pub(super) busy_ns: u64,
}

impl Chan {
    /// Can a die be granted the channel at `now` (nothing running or booked
    /// past `now`, nobody waiting before it)?
    #[inline]
    pub(super) fn is_free(&self, now: SimTime) -> bool {
        !self.out && self.waiters.is_empty() && self.busy_until <= now
    }
    /// The booked data-out time not begun by `now` (booked with its read).
    #[inline]
    pub(super) fn unstarted_out(&self, now: SimTime) -> u64 {
        match self.out && self.out_start > now {
            true => self.out_end.0 - self.out_start.0,
            false => 0,
        }
    }
}

/// `BlockExec::late`'s flags: the block has reads in `late_reads`...
pub(super) const LATE_READS: u8 = 1;
/// ... a foreground program waits on it for an erase not yet run (counted
/// in its die's `starved`).
pub(super) const STARVING: u8 = 2;

/// Count a read of block `b` (record `bx`) planned at erase epoch `epoch`,
/// two or more erases ahead of what the block has executed (see
/// `BlockExec::reads`).
#[cold]
#[inline(never)]
pub(super) fn count_late_read(
    bx: &mut BlockExec,
    late_reads: &mut std::collections::HashMap<(u32, u32), u32>,
    b: u32,
    epoch: u32,
) {
    bx.late |= LATE_READS;
    *late_reads.entry((b, epoch)).or_insert(0) += 1;
}

/// A translation-page read in flight (see `Simulation::join_tp_read`).
#[derive(Clone, Copy, Debug)]
pub(super) struct TpRead {
    pub(super) epoch: u32,
    pub(super) waiters: u32,
}

#[cfg(test)]
mod tests {
    use super::*;

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
        partners_masked(txns, wp, planes, u16::MAX)
    }

    /// `partners` with the page-offset bits partners must share.
    fn partners_masked(
        txns: &[Txn],
        wp: &[u32],
        planes: usize,
        page_mask: u16,
    ) -> (usize, u32, Vec<u32>) {
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
            page_mask,
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
        program_masked(blk, pg, plane, job, u16::MAX)
    }

    /// A program whose queue key sees the offset bits of `page_mask`.
    fn program_masked(blk: u32, pg: u16, plane: u8, job: u32, page_mask: u16) -> Txn {
        Txn {
            blk,
            pg,
            plane,
            job,
            kind: OpKind::Program,
            purpose: Purpose::Gc,
            qkey: queue_key(OpKind::Program, Purpose::Gc, pg & page_mask),
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

    /// The multi-plane rule: without `same_page`, ready programs at any
    /// offset join (one per plane); the plane cap bounds the batch.
    #[test]
    fn partners_follow_the_multiplane_rule() {
        let txns = |mask| {
            [
                program_masked(0, 7, 0, 10, mask),
                program_masked(1, 3, 1, 11, mask), // another offset
                program_masked(2, 9, 2, 12, mask), // another offset
                program_masked(3, 7, 3, 13, mask), // same offset
                program_masked(4, 20, 1, 14, mask), // plane 1 again
            ]
        };
        let wp = [7, 3, 9, 7, 20];
        // Same page: only transaction 3.
        let same = txns(u16::MAX);
        assert_eq!(partners(&same, &wp, 4), (2, 1 << 2, vec![13]));
        // Any page: every plane, in queue order; transaction 4's plane is
        // taken by transaction 1.
        let any = txns(0);
        assert_eq!(
            partners_masked(&any, &wp, 4, 0),
            (4, 0b111, vec![11, 12, 13])
        );
        // At most two planes: the first that qualifies.
        assert_eq!(partners_masked(&any, &wp, 2, 0), (2, 0b1, vec![11]));
    }
}
