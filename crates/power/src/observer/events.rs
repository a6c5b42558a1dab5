//! The engine's activity reports ([`Observer`]) as [`PowerObserver`]
//! takes them.

use super::*;

impl Observer for PowerObserver {
    #[inline(always)]
    fn flash_op(
        &mut self,
        die: DieId,
        kind: OpKind,
        purpose: Purpose,
        planes: u32,
        start: SimTime,
        end: SimTime,
    ) {
        let d = die.0 as usize;
        let k = kind as usize;
        let pi = purpose.index() & 7;
        let (s, e) = (start.0, end.0);
        debug_assert!(s <= e, "interval [{s}, {e}) ends before it starts");
        let planes = planes.max(1) as u64;
        let per_op = self.op_per_op[k];
        let it = Item::new(s, e, planes, k, pi, per_op, DONE);
        let lane = &mut self.die_lanes[d];
        let prev = std::mem::replace(&mut lane.last, it);
        // Fast path: nothing to settle but, maybe, the command transfer that set
        // this operation up (it draws as the op's kind); both in the series'
        // fast range (no cut point known, inside the hot bucket).
        if prev.e <= s {
            match prev.state {
                DONE => {}
                OPEN if self.series.fast(prev.s, prev.e) => {
                    let (r, ns) = (3 + k, prev.e - prev.s);
                    lane.up[r][prev.purpose()] += ns;
                    self.series.cur.rate_ns[r] += ns;
                }
                _ => return self.die_report_slow(d, prev, s, Some(k)),
            }
            if !self.series.fast(s, e) {
                return self.count_last_cold(d);
            }
            let ns = e - s;
            let u = units_of(per_op, planes, ns);
            lane.up[k][pi] += u;
            lane.op_ns[k] += ns;
            let t = &mut self.series.cur;
            t.u[k] += u;
            t.rate_ns[k] += ns;
            return;
        }
        self.die_report_slow(d, prev, s, Some(k));
    }

    /// `bus_xfer` then `flash_op` in one step. The common case takes a few
    /// integer adds: a linear op after the die's previous activity, both parts
    /// inside the hot bucket (the transfer draws as the op's kind, as the two
    /// calls would count it); the rest goes to `xfer_then_op_cold`.
    #[inline(always)]
    fn xfer_then_op(
        &mut self,
        ch: ChannelId,
        die: DieId,
        xfer: XferKind,
        bytes: u64,
        xfer_start: SimTime,
        kind: OpKind,
        purpose: Purpose,
        planes: u32,
        start: SimTime,
        end: SimTime,
    ) {
        debug_assert!(xfer != XferKind::DataIn || kind == OpKind::Program);
        let d = die.0 as usize;
        let (xs, s, e) = (xfer_start.0, start.0, end.0);
        let k = kind as usize;
        let last = self.die_lanes[d].last;
        if xfer != XferKind::DataOut
            && !self.op_per_op[k]
            && last.state == DONE
            && last.e <= xs
            && self.series.fast(xs, e)
        {
            debug_assert!(xs <= s && s <= e);
            let pi = purpose.index() & 7;
            let planes = planes.max(1) as u64;
            let it = Item::new(s, e, planes, k, pi, false, DONE);
            self.count_hot(d, k, pi, planes, s - xs, e - s, it);
            return;
        }
        self.xfer_then_op_cold(
            ch, die, xfer, bytes, xfer_start, kind, purpose, planes, start, end,
        );
    }

    /// `xfer_then_op` of a read then `bus_xfer` of its data-out, in one step.
    /// The common case takes a few integer adds: a linear read after the
    /// die's previous activity, all three parts inside the hot bucket (the
    /// command and the data-out both draw as transfers of a read, as the
    /// calls would count them); the rest goes to `read_then_out_cold`.
    #[inline(always)]
    fn read_then_out(
        &mut self,
        ch: ChannelId,
        die: DieId,
        bytes: u64,
        xfer_start: SimTime,
        purpose: Purpose,
        planes: u32,
        start: SimTime,
        end: SimTime,
        out_bytes: u64,
        out_end: SimTime,
    ) {
        let d = die.0 as usize;
        let (xs, s, e, oe) = (xfer_start.0, start.0, end.0, out_end.0);
        let k = OpKind::Read as usize;
        let last = self.die_lanes[d].last;
        if !self.op_per_op[k] && last.state == DONE && last.e <= xs && self.series.fast(xs, oe) {
            debug_assert!(xs <= s && s <= e && e <= oe);
            let pi = purpose.index() & 7;
            let planes = planes.max(1) as u64;
            let it = Item::new(e, oe, 1, 3 + k, pi, false, DONE);
            self.count_hot(d, k, pi, planes, (s - xs) + (oe - e), e - s, it);
            return;
        }
        self.read_then_out_cold(
            ch, die, bytes, xfer_start, purpose, planes, start, end, out_bytes, out_end,
        );
    }

    #[inline(always)]
    fn bus_xfer(
        &mut self,
        _ch: ChannelId,
        die: DieId,
        kind: XferKind,
        purpose: Purpose,
        _bytes: u64,
        start: SimTime,
        end: SimTime,
    ) {
        let d = die.0 as usize;
        let pi = purpose.index() & 7;
        let (s, e) = (start.0, end.0);
        debug_assert!(s <= e, "interval [{s}, {e}) ends before it starts");
        // A command's op is not known yet: the die's next flash_op decides.
        let (r, state) = match kind {
            XferKind::Command => (3, OPEN),
            XferKind::DataOut => (3 + OpKind::Read as usize, DONE),
            XferKind::DataIn => (3 + OpKind::Program as usize, DONE),
        };
        let it = Item::new(s, e, 1, r, pi, false, state);
        let lane = &mut self.die_lanes[d];
        let prev = std::mem::replace(&mut lane.last, it);
        if prev.state == DONE && prev.e <= s {
            if state == OPEN {
                return;
            }
            if !self.series.fast(s, e) {
                return self.count_last_cold(d);
            }
            // A transfer's units are its nanoseconds.
            let ns = e - s;
            lane.up[r][pi] += ns;
            self.series.cur.rate_ns[r] += ns;
            return;
        }
        self.die_report_slow(d, prev, s, None);
    }

    #[inline]
    fn cpu_busy(&mut self, start: SimTime, end: SimTime) {
        self.cpu_booking(start.0, end.0);
    }

    fn cpu_wakeup(&mut self, start: SimTime, end: SimTime) {
        self.cpu.wakeups += 1;
        self.cpu.wakeup_ns += end.0 - start.0;
        self.cpu_booking(start.0, end.0);
    }

    #[inline]
    fn dram_access(&mut self, _count: u64, start: SimTime, end: SimTime) {
        // Spans the pass log still owes go first: the lane is in time order.
        self.log_dram_to_lane();
        self.push_other(
            true,
            Span {
                s: start.0,
                e: end.0,
            },
        );
    }

    #[inline]
    fn firmware_work(
        &mut self,
        start: SimTime,
        cpu_end: SimTime,
        end: SimTime,
        cycles: &[u64; Activity::COUNT],
        dram: &[u64; Activity::COUNT],
    ) {
        // Its DRAM accesses, if any, were reported apart (`dram_access`).
        let it = WorkSpan {
            s: start.0,
            c: cpu_end.0,
            e: end.0,
            cycles: *cycles,
            dram: *dram,
        };
        self.push_work(it, false);
    }

    /// `cpu_busy`, `dram_access` and `firmware_work` in one step.
    #[inline(always)]
    fn firmware_pass(
        &mut self,
        start: SimTime,
        cpu_end: SimTime,
        end: SimTime,
        dram: u64,
        cycles_by: &[u64; Activity::COUNT],
        dram_by: &[u64; Activity::COUNT],
    ) {
        let (s, c, e) = (start.0, cpu_end.0, end.0);
        self.pass(true, s, c, e, dram, cycles_by, dram_by);
    }

    /// `firmware_pass` but for the CPU booking: the pass lies inside the
    /// `io_active` period reported later (or past the window end), so the
    /// normal-mode union is the same without it (see `cpu_normal`).
    #[inline(always)]
    fn command_pass(
        &mut self,
        start: SimTime,
        cpu_end: SimTime,
        end: SimTime,
        dram: u64,
        cycles_by: &[u64; Activity::COUNT],
        dram_by: &[u64; Activity::COUNT],
    ) {
        let (s, c, e) = (start.0, cpu_end.0, end.0);
        self.pass(false, s, c, e, dram, cycles_by, dram_by);
    }

    #[inline(always)]
    fn link_xfer(&mut self, _bytes: u64, start: SimTime, end: SimTime) {
        self.push_other(
            false,
            Span {
                s: start.0,
                e: end.0,
            },
        );
    }

    fn io_active(&mut self, start: SimTime, end: SimTime) {
        let (a0, a1) = (start.0, end.0);
        self.see(a0, a1);
        self.now_lb = self.now_lb.max(a1);
        self.cpu.covered_from = None;
        // Every pending booking, in order; what is left stays in `before`.
        let mut pend = std::mem::take(&mut self.cpu.before);
        self.cpu.after.move_to(&mut pend);
        // Bookings before the period are outside it; those inside are subsumed; a
        // booking straddling its end keeps its remainder.
        let mut a_done = false;
        let mut rest = None;
        while let Some(&(s, e)) = pend.front() {
            if s >= a1 {
                break;
            }
            pend.pop_front();
            if !a_done && s >= a0 {
                self.cpu_normal(a0, a1);
                a_done = true;
            }
            self.cpu_normal(s, e.min(a1));
            if e > a1 {
                rest = Some((a1, e));
            }
        }
        if !a_done {
            self.cpu_normal(a0, a1);
        }
        if let Some(r) = rest {
            pend.push_front(r);
        }
        self.cpu.before = pend;
    }

    #[inline]
    fn request_done(&mut self, _op: IoOp, bytes: u64, _arrival: SimTime, done: SimTime) {
        let d = done.0;
        self.now_lb = self.now_lb.max(d);
        self.series.add_completion(d, bytes);
        // Nearly always the busy period is known to cover the completions
        // since its first (`covered_from`) and no CPU booking waits after
        // it: nothing to drop.
        let cpu = &self.cpu;
        if cpu.covered_from.is_none() || !cpu.after.is_empty() {
            self.cpu_request_done(d);
        }
    }

    fn measure_start(&mut self, t: SimTime) {
        if !self.ramped && self.end.is_none() {
            self.start_window(t.0);
        }
    }

    fn drain_start(&mut self, t: SimTime) {
        if self.drain_at.is_none() {
            self.drain_at = Some(t.0);
            self.set_cut();
            self.recount_all(t.0);
            self.cut_work(t.0);
        }
    }

    /// The NAND model's own currents replace `[power]`'s `flash_*_current`
    /// (at `power.voltage`); per-operation energies, where configured,
    /// still decide their operations.
    ///
    /// # Panics
    /// If a current is negative or not finite (a broken model), or if die
    /// activity was reported before.
    fn nand_currents(&mut self, c: &NandCurrents) {
        assert!(
            self.die_lanes
                .iter()
                .all(|l| l.last.e == 0 && l.up == [[0; 8]; 8]),
            "the NAND model's currents come before any die activity"
        );
        let v = self.voltage;
        let w = |what: &str, a: Amps| {
            assert!(
                a.0.is_finite() && a.0 >= 0.0,
                "the NAND model's {what} current must be a finite value >= 0, got {}",
                a.0
            );
            a.0 * v
        };
        self.p.p_op = [
            w("read", c.read),
            w("program", c.program),
            w("erase", c.erase),
        ];
        self.p.p_die_idle = w("idle", c.idle);
        self.p.p_xfer = c.io.map(|a| w("I/O", a));
        let (unit_j, rates) = self.p.unit_rates();
        self.unit_j = unit_j;
        self.rates = rates;
        self.series.set_rates(rates);
    }
    fn finish(&mut self, end: SimTime) {
        if self.end.is_some() {
            return;
        }
        let w = if self.drain_at.is_some() {
            // Per die, the last activity ends last (or it overlaps one set aside).
            let die_end = self.die_lanes.iter().map(|l| l.last.e);
            let die_end = die_end.chain(self.aside.iter().map(|a| a.1.e)).max();
            let other_end = self.max_end.max(self.pass_end);
            end.0.max(other_end).max(die_end.unwrap_or(0))
        } else {
            end.0
        };
        self.end = Some(w);
        self.set_cut();
        self.recount_all(w);
        self.cut_work(w);
        for (d, it) in std::mem::take(&mut self.deferred) {
            self.commit_die(d as usize, it);
        }
        for d in 0..self.die_lanes.len() {
            let it = std::mem::take(&mut self.die_lanes[d].last);
            self.settle_final(d, it);
        }
        for (d, it) in std::mem::take(&mut self.aside) {
            self.settle_final(d as usize, it);
        }
        while let Some(it) = self.dram_lane.pop_front() {
            self.commit_other(true, it);
        }
        while let Some(it) = self.link_lane.pop_front() {
            self.commit_other(false, it);
        }
        while let Some(it) = self.work_lane.pop_front() {
            self.commit_work_cut(it);
        }
        self.flush_cpu(w);
        // Baselines drawn the whole window: die idle, DRAM standby, CPU idle, link idle.
        let base = self.n_dies as f64 * self.p.p_die_idle;
        self.series.add_baseline(FLASH, base, w);
        self.series.add_baseline(DRAM, self.p.p_dram_standby, w);
        self.series
            .add_baseline(CPU, self.p.p_cpu[CpuMode::Idle as usize], w);
        self.series.add_baseline(HOST, self.p.p_link_idle, w);
        self.series.close(w);
        for lane in &self.die_lanes {
            for r in 0..8 {
                self.all.rate_ns[r] += lane.rate_ns(r);
                for (a, &u) in self.all.up[r].iter_mut().zip(&lane.up[r]) {
                    *a += u;
                }
            }
        }
    }
}
