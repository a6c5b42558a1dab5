//! The event queue: `(time, insertion sequence)` order, the engine's only clock.

use super::*;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Ev {
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
    /// The idle detector's wait is over (`ftl.gc_idle_after`).
    IdleCheck,
}

impl Ev {
    /// The event as 32 bits: its kind in the low 3, its index above them.
    #[inline(always)]
    pub(super) fn code(self) -> u32 {
        let (k, i) = match self {
            Ev::Arrival => (0, 0),
            Ev::HostWake => (0, 1),
            Ev::CmdReady(c) => (1, c),
            Ev::ChanDone(c) => (2, c),
            Ev::ChanFree(c) => (3, c),
            Ev::DieDone(d) => (4, d),
            Ev::CmdComplete(c) => (5, c),
            Ev::SchedWake => (6, 0),
            Ev::IdleCheck => (6, 1),
            Ev::PlugFlush => (7, 0),
        };
        assert!(
            i < 1 << 29,
            "event index {i} does not fit the event queue's 29 bits"
        );
        k | i << 3
    }
    #[inline(always)]
    pub(super) fn from_code(x: u32) -> Ev {
        let i = x >> 3;
        match x & 7 {
            0 if i == 0 => Ev::Arrival,
            0 => Ev::HostWake,
            1 => Ev::CmdReady(i),
            2 => Ev::ChanDone(i),
            3 => Ev::ChanFree(i),
            4 => Ev::DieDone(i),
            5 => Ev::CmdComplete(i),
            6 if i == 0 => Ev::SchedWake,
            6 => Ev::IdleCheck,
            _ => Ev::PlugFlush,
        }
    }
}

/// A pending event and its place in the order, as one integer: time (high 64
/// bits), insertion sequence number (32), `Ev::code` (32). One compare
/// orders two events by (time, sequence), and an entry is 16 bytes.
pub(super) type Entry = u128;

#[inline(always)]
pub(super) fn entry(t: SimTime, seq: u32, ev: Ev) -> Entry {
    (t.0 as u128) << 64 | (seq as u128) << 32 | ev.code() as u128
}

#[inline(always)]
pub(super) fn unpack(e: Entry) -> (SimTime, Ev) {
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
pub(super) struct EventQueue {
    /// Pending events sorted from `head` on (the slots before `head` were
    /// popped; they are reclaimed when the vector is full, or all at once
    /// when it empties).
    pub(super) sorted: Vec<Entry>,
    pub(super) head: usize,
    pub(super) fifo: [VecDeque<Entry>; 2],
    /// The least entry at the front of the two FIFO streams (`u128::MAX` when
    /// both are empty), so that a pop from the sorted run looks at one key.
    pub(super) fifo_min: u128,
    pub(super) seq: u32,
    /// The sequence number at which `renumber` runs (`u32::MAX`; tests lower it).
    pub(super) seq_limit: u32,
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
    pub(super) fn next_seq(&mut self) -> u32 {
        if self.seq >= self.seq_limit {
            self.renumber();
        }
        self.seq += 1;
        self.seq
    }
    /// Number the pending events 1, 2, ... in their (time, sequence) order.
    #[cold]
    pub(super) fn renumber(&mut self) {
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
    pub(super) fn push(&mut self, t: SimTime, ev: Ev) {
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
    pub(super) fn push_fifo(&mut self, k: usize, t: SimTime, ev: Ev) {
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
    pub(super) fn peek_time(&self) -> Option<SimTime> {
        let h = self.sorted.get(self.head).copied().unwrap_or(u128::MAX);
        let m = h.min(self.fifo_min);
        (m != u128::MAX).then(|| unpack(m).0)
    }
    #[inline]
    pub(super) fn pop(&mut self) -> Option<(SimTime, Ev)> {
        let h = self.sorted.get(self.head).copied().unwrap_or(u128::MAX);
        if self.fifo_min < h {
            return Some(self.pop_fifo());
        }
        self.pop_sorted()
    }
    /// Pop the FIFO stream front holding `fifo_min` (there is one).
    #[inline(never)]
    pub(super) fn pop_fifo(&mut self) -> (SimTime, Ev) {
        let front = |f: &VecDeque<Entry>| f.front().copied().unwrap_or(u128::MAX);
        let k = (front(&self.fifo[0]) != self.fifo_min) as usize;
        let e = self.fifo[k]
            .pop_front()
            .expect("fifo_min is a stream's front");
        self.fifo_min = front(&self.fifo[0]).min(front(&self.fifo[1]));
        unpack(e)
    }
    #[inline]
    pub(super) fn pop_sorted(&mut self) -> Option<(SimTime, Ev)> {
        let e = *self.sorted.get(self.head)?;
        self.head += 1;
        if self.head == self.sorted.len() {
            self.sorted.clear();
            self.head = 0;
        }
        Some(unpack(e))
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
}
