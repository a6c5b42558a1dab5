//! The channel bus: command/data-in and data-out transfers, arbitration.

use super::*;

impl<F: Ftl, S: RequestSource, Q: IoScheduler, O: Observer, H: Hardware> Simulation<F, S, Q, O, H> {
    #[inline(always)]
    pub(super) fn request_channel(&mut self, d: u32) {
        let ch = self.fl.dies[d as usize].ch;
        let now = self.now;
        if self.consts.exclusive {
            // The channel serves this die alone, which was busy until now.
            debug_assert!(self.fl.chans[ch as usize].is_free(now));
            return self.grant(ch, d);
        }
        let c = &mut self.fl.chans[ch as usize];
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
    pub(super) fn grant(&mut self, ch: u32, d: u32) {
        if self.consts.exclusive && self.fl.dies[d as usize].kind == OpKind::Read {
            return self.grant_read_alone(ch, d);
        }
        let now = self.now;
        let die = &mut self.fl.dies[d as usize];
        let n = die.n as u64;
        let (dur, kind, bytes) = match die.phase {
            Phase::Cmd => (
                bus_cmd(self.consts.bus_t, &self.hw.chan, die.kind, n),
                XferKind::Command,
                self.settings.config.nand.cmd_addr_bytes as u64,
            ),
            Phase::DataIn => (
                bus_cmd(self.consts.bus_t, &self.hw.chan, die.kind, n)
                    + bus_data(self.consts.bus_t, &self.hw.chan, n),
                XferKind::DataIn,
                n * self.consts.page,
            ),
            Phase::DataOut => return self.grant_data_out(ch, d),
            p => unreachable!("die {d} asked for the channel in phase {p:?}"),
        };
        let end = now + dur;
        let c = &mut self.fl.chans[ch as usize];
        c.busy_ns += dur.0;
        // Command (and data-in) cycles end at `end`; the array operation follows.
        c.busy_until = end;
        if !c.waiters.is_empty() && !c.wake {
            c.wake = true;
            self.q.push(end, Ev::ChanFree(ch));
        }
        let t = batch_time!(self, die, d, end, die.kind, n);
        die.phase = Phase::Array;
        // Reported to the observer when the operation ends (`report_array_op`).
        die.xfer = (kind, bytes, now);
        die.array_start = end;
        die.array_end = end + t;
        die.unreported = XFER | OP;
        let program = die.kind == OpKind::Program;
        self.q.push(end + t, Ev::DieDone(d));
        if self.consts.cache.program && program {
            self.cache_load_next(d);
        }
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
    pub(super) fn grant_read_alone(&mut self, ch: u32, d: u32) {
        let now = self.now;
        let die = &mut self.fl.dies[d as usize];
        debug_assert!(
            die.phase == Phase::Cmd,
            "die {d}: a read starts with its command"
        );
        let n = die.n as u64;
        let cmd = bus_cmd(self.consts.bus_t, &self.hw.chan, OpKind::Read, n);
        let (start, purpose) = (now + cmd, die.purpose);
        let end = start + batch_time!(self, die, d, start, OpKind::Read, n);
        let out = bus_data(self.consts.bus_t, &self.hw.chan, n);
        let out_end = end + out;
        die.phase = Phase::Array;
        die.array_start = start;
        die.array_end = end;
        die.unreported = 0;
        let c = &mut self.fl.chans[ch as usize];
        debug_assert!(
            c.waiters.is_empty() && !c.out,
            "channel {ch} serves die {d} alone"
        );
        c.busy_ns += cmd.0 + out.0;
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
            n * self.consts.page,
            out_end,
        );
    }

    /// `grant` for a read's data-out transfer (reported to the observer now;
    /// it ends with `ChanDone`).
    #[inline(never)]
    pub(super) fn grant_data_out(&mut self, ch: u32, d: u32) {
        let (bytes, end) = self.book_data_out(ch, d);
        let (now, purpose) = (self.now, self.fl.dies[d as usize].purpose);
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
    pub(super) fn book_data_out(&mut self, ch: u32, d: u32) -> (u64, SimTime) {
        let n = self.fl.dies[d as usize].n as u64;
        let dur = bus_data(self.consts.bus_t, &self.hw.chan, n);
        let end = self.now + dur;
        let c = &mut self.fl.chans[ch as usize];
        c.busy_ns += dur.0;
        c.out = true;
        c.out_start = self.now;
        c.out_end = end;
        c.owner = d;
        self.q.push(end, Ev::ChanDone(ch));
        (n * self.consts.page, end)
    }

    /// The command/data-in transfer booked on `ch` has ended: the next waiter
    /// gets the channel.
    pub(super) fn on_chan_free(&mut self, ch: u32) {
        let c = &mut self.fl.chans[ch as usize];
        c.wake = false;
        let w = match self.consts.reads_first {
            false => c.waiters.pop_front(),
            true => pop_reads_first(&mut c.waiters, &self.fl.dies, &self.fl.slots),
        };
        if let Some(w) = w {
            self.grant_waiter(ch, w);
        }
    }

    /// A data-out transfer has ended: the die's batch (or the read in its
    /// cache register) is complete.
    pub(super) fn on_chan_done(&mut self, ch: u32) {
        let c = &mut self.fl.chans[ch as usize];
        let d = c.owner;
        c.out = false;
        let w = match self.consts.reads_first {
            false => c.waiters.pop_front(),
            true => pop_reads_first(&mut c.waiters, &self.fl.dies, &self.fl.slots),
        };
        if let Some(w) = w {
            self.grant_waiter(ch, w);
        }
        if d & SLOT != 0 {
            return self.cache_out_done(d & !SLOT);
        }
        self.complete_batch(d);
    }

    /// Grant channel `ch` to waiter `w`: a die's batch, or (`SLOT` set) the
    /// transfer of the batch in a die's cache register.
    #[inline(always)]
    fn grant_waiter(&mut self, ch: u32, w: u32) {
        if w & SLOT != 0 {
            return self.grant_slot(ch, w & !SLOT);
        }
        self.grant(ch, w);
    }
}

/// The waiter a reads-first channel serves next (`BusArbitration::ReadsFirst`):
/// the longest-waiting die whose batch is a host or mapping read, else the
/// longest-waiting one.
#[cold]
#[inline(never)]
pub(super) fn pop_reads_first(
    waiters: &mut VecDeque<u32>,
    dies: &[Die],
    slots: &[cache::CacheSlot],
) -> Option<u32> {
    let i = waiters
        .iter()
        .position(|&w| {
            let (kind, purpose) = match w & SLOT {
                0 => (dies[w as usize].kind, dies[w as usize].purpose),
                _ => slots[(w & !SLOT) as usize].kind_purpose(),
            };
            kind == OpKind::Read && matches!(purpose, Purpose::Host | Purpose::Translation)
        })
        .unwrap_or(0);
    waiters.remove(i)
}

/// A batch's command time: the table's if the channel model has one.
#[inline(always)]
pub(super) fn bus_cmd<C: Channel>(
    fixed: Option<(Dur, Dur)>,
    chan: &C,
    kind: OpKind,
    planes: u64,
) -> Dur {
    match fixed {
        Some((cmd, _)) => cmd,
        None => chan.command_time(kind, planes as u32),
    }
}

/// `pages` pages over the bus: the table's if the channel model has one.
#[inline(always)]
pub(super) fn bus_data<C: Channel>(fixed: Option<(Dur, Dur)>, chan: &C, pages: u64) -> Dur {
    match fixed {
        Some((_, page)) => Dur(page.0 * pages),
        None => chan.data_time(pages as u32),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn die(kind: OpKind, purpose: Purpose) -> Die {
        Die {
            phase: Phase::Cmd,
            kind,
            purpose,
            n: 1,
            ..Die::idle(0)
        }
    }

    /// Reads-first serves the waiting host and mapping reads in their
    /// arrival order, then the rest (programs, erases, GC reads) in theirs.
    #[test]
    fn reads_first_serves_host_and_mapping_reads_then_the_rest_in_order() {
        let dies = [
            die(OpKind::Program, Purpose::Host),
            die(OpKind::Erase, Purpose::Gc),
            die(OpKind::Read, Purpose::Gc),
            die(OpKind::Read, Purpose::Host),
            die(OpKind::Program, Purpose::Gc),
            die(OpKind::Read, Purpose::Translation),
            die(OpKind::Read, Purpose::Host),
        ];
        let mut w: VecDeque<u32> = [0, 1, 2, 3, 4, 5, 6].into();
        let mut order = Vec::new();
        while let Some(d) = pop_reads_first(&mut w, &dies, &[]) {
            order.push(d);
        }
        assert_eq!(order, [3, 5, 6, 0, 1, 2, 4]);
        // A read that arrives later still goes before the others waiting.
        let mut w: VecDeque<u32> = [0, 1].into();
        assert_eq!(pop_reads_first(&mut w, &dies, &[]), Some(0));
        w.push_back(3);
        assert_eq!(pop_reads_first(&mut w, &dies, &[]), Some(3));
        assert_eq!(pop_reads_first(&mut w, &dies, &[]), Some(1));
        assert_eq!(pop_reads_first(&mut w, &dies, &[]), None);
    }
}
