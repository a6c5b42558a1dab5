//! The DRAM, host-link, firmware-pass and CPU lanes of [`PowerObserver`]:
//! queued until they can no longer straddle a cut point, then charged.

use super::*;

impl PowerObserver {
    /// Queue a DRAM access or link transfer after committing those at the
    /// front of its lane that ended before `now_lb`.
    #[inline(always)]
    pub(super) fn push_other(&mut self, dram: bool, it: Span) {
        self.see(it.s, it.e);
        self.push_other_seen(dram, it);
    }

    /// `push_other` of an interval already seen (`see`).
    #[inline(always)]
    pub(super) fn push_other_seen(&mut self, dram: bool, it: Span) {
        let lb = self.now_lb;
        let mut lane = if dram {
            &mut self.dram_lane
        } else {
            &mut self.link_lane
        };
        // Nearly always the lane holds one span, the one reported before,
        // and it has ended: `it` takes its place.
        let it = match lane.replace_single_if_ended(it, lb) {
            Ok(f) => return self.commit_other(dram, f),
            Err(it) => it,
        };
        while let Some(f) = lane.pop_front_if_ended(lb) {
            self.commit_other(dram, f);
            lane = if dram {
                &mut self.dram_lane
            } else {
                &mut self.link_lane
            };
        }
        lane.push_back(it);
    }

    /// Clip `[s, e)` to the window (its start, the end of the ramp, and its
    /// end) and split it at the drain start: (start, end, in_drain).
    #[inline]
    pub(super) fn pieces(&self, s: u64, e: u64) -> [(u64, u64, bool); 2] {
        let e = match self.end {
            Some(w) => e.min(w),
            None => e,
        };
        let s = s.max(self.from).min(e);
        match self.drain_at {
            Some(d) if d > s && d < e => [(s, d, false), (d, e, true)],
            Some(d) if d <= s => [(s, e, true), (e, e, true)],
            _ => [(s, e, false), (e, e, false)],
        }
    }

    /// Charge a DRAM access or host-link transfer that can no longer be cut:
    /// inline while no cut point is known and it lies in the series' hot
    /// bucket (nearly always), else as `commit_other_cold`.
    #[inline(always)]
    pub(super) fn commit_other(&mut self, dram: bool, it: Span) {
        if it.s >= self.fast_from && it.e >= it.s && self.series.is_hot(it.s, it.e) {
            let ns = it.e - it.s;
            if dram {
                self.all.dram_active_ns += ns;
                self.series.cur.dram_ns += ns;
            } else {
                self.all.link_active_ns += ns;
                self.series.cur.link_ns += ns;
            }
            return;
        }
        self.commit_other_cold(dram, it);
    }

    /// `commit_other` off its fast path: clipped to the window and split at
    /// the drain start once a cut point is known; in the series outside its
    /// hot bucket.
    #[cold]
    #[inline(never)]
    pub(super) fn commit_other_cold(&mut self, dram: bool, it: Span) {
        if it.s >= self.fast_from {
            return self.charge_other(dram, it.s, it.e, false);
        }
        for (s, e, dr) in self.pieces(it.s, it.e) {
            self.charge_other(dram, s, e, dr);
        }
    }

    #[inline(always)]
    pub(super) fn charge_other(&mut self, dram: bool, s: u64, e: u64, dr: bool) {
        if e <= s {
            return;
        }
        let ns = e - s;
        // DRAM accesses and host-link transfers differ only in their counters.
        fn acc(a: &mut Acc, dram: bool) -> &mut u64 {
            if dram {
                &mut a.dram_active_ns
            } else {
                &mut a.link_active_ns
            }
        }
        fn bucket(t: &mut Counters, dram: bool) -> &mut u64 {
            if dram {
                &mut t.dram_ns
            } else {
                &mut t.link_ns
            }
        }
        *acc(&mut self.all, dram) += ns;
        if dr {
            *acc(&mut self.drain, dram) += ns;
        }
        if self.series.is_hot(s, e) {
            *bucket(&mut self.series.cur, dram) += ns;
        } else if !self
            .series
            .count_cold(s, e, true, |t, ns| *bucket(t, dram) += ns)
        {
            let (rate, comp) = if dram {
                (self.rates.dram, DRAM)
            } else {
                (self.rates.link, HOST)
            };
            self.series.add_energy(comp, s, e, rate * ns_f64(ns));
        }
    }

    // ------------------------------------------------------------ firmware work

    /// A firmware pass: CPU `[s, c)`, then `dram` DRAM accesses `[c, e)`;
    /// `book_cpu`: its CPU time goes into the normal-mode union (false for
    /// a command's pass, which `io_active` covers: `command_pass`).
    ///
    /// While no cut point is known, the DRAM span is owed by the pass log
    /// (`WorkLog::dram`) instead of queued in `dram_lane`: at each pass
    /// with DRAM accesses, the spans it owes that ended by `now_lb` are
    /// committed, in order, which is what the lane does at each push. The
    /// lane is used instead while it holds spans (those reported apart, or
    /// before the window start, or after a cut point), so that spans are
    /// always committed in the order reported.
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    pub(super) fn pass(
        &mut self,
        book_cpu: bool,
        s: u64,
        c: u64,
        e: u64,
        dram: u64,
        cycles_by: &[u64; Activity::COUNT],
        dram_by: &[u64; Activity::COUNT],
    ) {
        debug_assert!(s <= c && c <= e, "pass [{s}, {c}, {e}) out of order");
        // The latest end of the CPU time and the DRAM accesses: the pass's
        // (passes come in time order, see `Observer::firmware_pass`).
        debug_assert!(
            s >= self.pass_end,
            "pass [{s}, {c}, {e}) before the one before"
        );
        self.pass_end = if dram > 0 { e } else { c };
        if book_cpu {
            self.cpu_booking_seen(s, c);
        }
        if s >= self.fast_from {
            // The pass is logged first (its weights are then no longer
            // needed), then the DRAM spans owed are committed: the same
            // commits, in the same order, as the lane's pushes make.
            let owed = dram > 0 && self.dram_lane.is_empty();
            self.push_work_fast(s, c, e, cycles_by, dram_by, owed);
            if owed {
                self.commit_owed_dram();
            } else if dram > 0 {
                self.push_other_seen(true, Span { s: c, e });
            }
            return;
        }
        let it = WorkSpan {
            s,
            c,
            e,
            cycles: *cycles_by,
            dram: *dram_by,
        };
        self.pass_slow(it, dram > 0);
    }

    /// `pass` of a pass that began before the window start or after a cut
    /// point: its DRAM span queued in the lane, the pass in `work_lane`.
    #[cold]
    #[inline(never)]
    fn pass_slow(&mut self, it: WorkSpan, dram: bool) {
        self.log_dram_to_lane();
        if dram {
            self.push_other_seen(true, Span { s: it.c, e: it.e });
        }
        self.push_work_slow(it);
    }

    /// Commit the DRAM spans the pass log owes that ended by `now_lb`, in
    /// order (see `pass`), but the last pass's (just logged: the lane
    /// commits a span at the pushes after its own).
    #[inline(always)]
    fn commit_owed_dram(&mut self) {
        let lb = self.now_lb;
        loop {
            let log = &mut self.work_log;
            let at = log.dram;
            if at + 1 >= log.passes.len() {
                return;
            }
            let p = log.passes[at];
            if p.e > lb {
                return;
            }
            log.dram = at + 1;
            // Inside the window (a pass counted at once began there, and
            // the window start moves only with the owed spans in the lane).
            debug_assert!(p.c >= self.fast_from);
            if p.e > p.c {
                if self.series.is_hot(p.c, p.e) {
                    let ns = p.e - p.c;
                    self.all.dram_active_ns += ns;
                    self.series.cur.dram_ns += ns;
                } else {
                    self.commit_other_cold(true, Span { s: p.c, e: p.e });
                }
            }
        }
    }

    /// Queue the DRAM spans the pass log still owes in `dram_lane`, in
    /// order, before anything else goes there or the log is taken.
    #[inline(always)]
    pub(super) fn log_dram_to_lane(&mut self) {
        if self.work_log.dram < self.work_log.passes.len() {
            self.log_dram_to_lane_cold();
        }
    }

    #[cold]
    #[inline(never)]
    fn log_dram_to_lane_cold(&mut self) {
        let log = &mut self.work_log;
        for p in &log.passes[log.dram..] {
            if p.e > p.c {
                self.dram_lane.push_back(Span { s: p.c, e: p.e });
            }
        }
        log.dram = log.passes.len();
    }

    /// A firmware pass. While no cut point is known, a pass in the window
    /// is counted at once, whole: passes of one shape in a row only raise
    /// `work_run.n` (the engine's repeat: every host write of one size is
    /// one shape), and the run is divided among activities once, when the
    /// shape changes or a cut point comes (`flush_work_run`): the same
    /// integers as dividing each pass. The pass also goes to `work_log`,
    /// from which a cut point takes back (exactly: integers) those it may
    /// split, clip or put in the drain (`cut_work`); the log drops passes
    /// that ended before `now_lb` when it grows (`WorkLog::trim`), so it
    /// holds about the passes in flight. Other passes wait in `work_lane`.
    /// `owed`: the log owes the pass's DRAM span (see `pass`).
    #[inline(always)]
    pub(super) fn push_work(&mut self, it: WorkSpan, owed: bool) {
        if it.s >= self.fast_from {
            let (cy, dr) = (&it.cycles, &it.dram);
            return self.push_work_fast(it.s, it.c, it.e, cy, dr, owed);
        }
        self.push_work_slow(it);
    }

    /// `push_work` of a pass in the window while no cut point is known.
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    fn push_work_fast(
        &mut self,
        s: u64,
        c: u64,
        e: u64,
        cycles: &[u64; Activity::COUNT],
        dram: &[u64; Activity::COUNT],
        owed: bool,
    ) {
        if self.work_run.shape.is_of(c - s, e - c, cycles, dram) {
            self.work_run.n += 1;
        } else {
            self.new_work_run(WorkShape {
                cpu_ns: c - s,
                dram_ns: e - c,
                cycles: *cycles,
                dram: *dram,
            });
        }
        let lb = self.now_lb;
        self.work_log.push(s, c, e, lb, owed);
    }

    /// Count the run so far and start one of `shape`.
    #[inline(never)]
    pub(super) fn new_work_run(&mut self, shape: WorkShape) {
        self.flush_work_run();
        self.work_run = WorkRun { shape, n: 1 };
        self.work_log.new_run(shape);
    }

    /// Add the run counted so far to the whole run's counts.
    pub(super) fn flush_work_run(&mut self) {
        let run = std::mem::take(&mut self.work_run);
        if run.n > 0 {
            self.all.act.add_passes(&run.shape, run.n);
        }
    }

    /// A cut point `t` arrived: the passes counted at once that it splits or
    /// clips (ending after it) or that are the drain's (beginning at it or
    /// later) are taken back and wait in `work_lane`, committed as passes
    /// reported from now on are.
    pub(super) fn cut_work(&mut self, t: u64) {
        self.flush_work_run();
        self.log_dram_to_lane();
        for w in self.work_log.take(WorkShape::default()) {
            if w.e > t || w.s >= t {
                self.all.act.sub_pass(&w.shape());
                self.work_lane.push_back(w);
            }
        }
    }

    /// `push_work` after a cut point, or of a pass that began before the
    /// window start.
    #[cold]
    #[inline(never)]
    pub(super) fn push_work_slow(&mut self, it: WorkSpan) {
        let lb = self.now_lb;
        while self.work_lane.front().is_some_and(|f| f.e <= lb) {
            let f = self.work_lane.pop_front().expect("front");
            self.commit_work_cut(f);
        }
        self.work_lane.push_back(it);
    }

    /// Divide a firmware pass's CPU and DRAM times among its activities,
    /// clipped at the window start and end and split at the drain start.
    #[cold]
    #[inline(never)]
    pub(super) fn commit_work_cut(&mut self, it: WorkSpan) {
        // Whole passes that began in the window (after the ramp), and in
        // the drain.
        if it.s >= self.from {
            let a = &mut self.all.act;
            for k in 0..Activity::COUNT {
                a.cycles[k] += it.cycles[k];
                a.accesses[k] += it.dram[k];
            }
        }
        if self.drain_at.is_some_and(|d| it.s >= d.max(self.from)) {
            let a = &mut self.drain.act;
            for k in 0..Activity::COUNT {
                a.cycles[k] += it.cycles[k];
                a.accesses[k] += it.dram[k];
            }
        }
        let cpu = proportional_ends(it.s, it.c, &it.cycles);
        let dram = proportional_ends(it.c, it.e, &it.dram);
        for (start, ends, is_cpu) in [(it.s, cpu, true), (it.c, dram, false)] {
            let mut s = start;
            for (k, &e) in ends.iter().enumerate() {
                for (ps, pe, dr) in self.pieces(s, e) {
                    let ns = pe.saturating_sub(ps);
                    for (a, in_part) in [(&mut self.all.act, true), (&mut self.drain.act, dr)] {
                        if in_part {
                            let v = if is_cpu {
                                &mut a.cpu_ns
                            } else {
                                &mut a.dram_ns
                            };
                            v[k] += ns;
                        }
                    }
                }
                s = e;
            }
        }
    }

    // ------------------------------------------------------------ CPU

    pub(super) fn cpu_charge(&mut self, mode: CpuMode, s: u64, e: u64) {
        if s >= self.fast_from {
            return self.cpu_charge_piece(mode as usize, s, e, false);
        }
        for (s, e, dr) in self.pieces(s, e) {
            self.cpu_charge_piece(mode as usize, s, e, dr);
        }
    }

    #[inline(always)]
    pub(super) fn cpu_charge_piece(&mut self, m: usize, s: u64, e: u64, dr: bool) {
        if e <= s {
            return;
        }
        let ns = e - s;
        self.all.cpu_ns[m] += ns;
        if dr {
            self.drain.cpu_ns[m] += ns;
        }
        if self.series.is_hot(s, e) {
            self.series.cur.cpu_ns[m] += ns;
        } else if !self
            .series
            .count_cold(s, e, true, |t, ns| t.cpu_ns[m] += ns)
        {
            let excess = self.rates.cpu[m] * ns_f64(ns);
            if excess != 0.0 {
                self.series.add_energy(CPU, s, e, excess);
            }
        }
    }

    /// Idle, then slow after the timeout, over a gap of the normal-mode union.
    pub(super) fn cpu_gap(&mut self, g0: u64, g1: u64) {
        let t = match self.p.slow_after {
            Some(to) => g0.saturating_add(to).min(g1),
            None => g1,
        };
        self.cpu_charge(CpuMode::Idle, g0, t);
        self.cpu_charge(CpuMode::Slow, t, g1);
    }

    /// Extend the normal-mode union by `[s, e)`; inputs arrive sorted by start.
    pub(super) fn cpu_normal(&mut self, s: u64, e: u64) {
        let cur = self.cpu.cur_end;
        if e <= cur {
            return;
        }
        let s = s.max(cur);
        if s > cur {
            self.cpu_gap(cur, s);
        }
        self.cpu_charge(CpuMode::Normal, s, e);
        self.cpu.cur_end = e;
    }

    #[inline(always)]
    pub(super) fn cpu_booking(&mut self, s: u64, e: u64) {
        self.see(s, e);
        self.cpu_booking_seen(s, e);
    }

    /// `cpu_booking` of an interval already seen (`see`).
    #[inline(always)]
    pub(super) fn cpu_booking_seen(&mut self, s: u64, e: u64) {
        if e > s {
            let cpu = &mut self.cpu;
            match cpu.covered_from {
                Some(c) if s >= c => cpu.after.push_back(Span { s, e }),
                // Bookings are sorted: one before `c` comes after all
                // others (`after` is empty).
                _ => cpu.before.push_back((s, e)),
            }
        }
    }

    /// `request_done`'s part for the CPU bookings, a completion at `d`:
    /// `[covered_from, d]` lies inside the busy period that `io_active`
    /// will report, so the bookings wholly inside it are dropped.
    #[inline(never)]
    pub(super) fn cpu_request_done(&mut self, d: u64) {
        let cpu = &mut self.cpu;
        if cpu.covered_from.is_none() {
            cpu.covered_from = Some(d);
            // The bookings that start at `d` or later: the last ones.
            while let Some(&b) = cpu.before.back().filter(|b| b.0 >= d) {
                cpu.before.pop_back();
                cpu.after.push_front(Span { s: b.0, e: b.1 });
            }
        }
        debug_assert!(cpu.before.iter().all(|b| Some(b.0) < cpu.covered_from));
        debug_assert!(cpu.after.buf[cpu.after.head..]
            .iter()
            .all(|b| Some(b.s) >= cpu.covered_from));
        while cpu.after.pop_front_if_ended(d).is_some() {}
    }

    pub(super) fn flush_cpu(&mut self, window_end: u64) {
        let mut pend = std::mem::take(&mut self.cpu.before);
        self.cpu.after.move_to(&mut pend);
        while let Some((s, e)) = pend.pop_front() {
            self.cpu_normal(s, e);
        }
        let cur = self.cpu.cur_end;
        if window_end > cur {
            self.cpu_gap(cur, window_end);
            self.cpu.cur_end = window_end;
        }
    }

    // ------------------------------------------------------------ results

    pub(crate) fn cpu_wakeups(&self) -> (u64, u64) {
        (self.cpu.wakeups, self.cpu.wakeup_ns)
    }
}
