//! The power time series: energy per component in fixed sampling buckets, plus
//! completed requests and bytes per bucket.
//!
//! Intervals that span buckets are split exactly at bucket boundaries. Components
//! add their power *above* a constant baseline while active (a die above its idle
//! current, the CPU above idle mode, ...); the baselines are added once, at
//! `finish`, over the whole window, so the series costs nothing for idle time.
//!
//! The observer counts activity in integers (per component state) for the hot
//! bucket (where the engine clock is), the one before it (late commits) and the
//! one after it (activity that runs past the hot bucket), splitting an interval
//! that straddles two of them exactly in nanoseconds; each bucket's counters
//! become joules once, when the hot bucket moves on. Only intervals outside
//! those three buckets (or spanning more than two) are spread in joules, split
//! at bucket boundaries.
//!
//! # Memory
//! A bucket is 56 bytes (five f64 energies, a request count and a byte count). The
//! number of buckets is bounded (`DEFAULT_MAX_SAMPLES` = 262,144, about 14 MiB);
//! a run longer than `max_samples x interval` doubles the interval and merges
//! bucket pairs (exact: energies add) as often as needed. The report says so
//! (`power_w.sample_s`, `power_w.coarsened`), never silently: e.g. a 1 ms interval
//! over 1 h (3.6M buckets) becomes 16.384 ms (219,727 buckets).

/// Component indices of a bucket.
pub const FLASH: usize = 0;
/// Index of the controller CPU in a bucket's components.
pub const CPU: usize = 1;
/// Index of the DRAM in a bucket's components.
pub const DRAM: usize = 2;
/// Index of the flash channels (buses) in a bucket's components.
pub const BUS: usize = 3;
/// Index of the host link in a bucket's components.
pub const HOST: usize = 4;
/// Component names, in index order.
pub const COMPONENTS: [&str; 5] = ["flash", "cpu", "dram", "bus", "host"];

/// `ns as f64`, exactly, in fewer instructions for the values simulated time
/// takes (below 2^63 ns, about 292 years): x86-64 converts signed integers only.
#[inline(always)]
pub(crate) fn ns_f64(ns: u64) -> f64 {
    if ns >> 63 == 0 {
        ns as i64 as f64
    } else {
        ns as f64
    }
}

/// Default bound on the number of stored buckets.
pub const DEFAULT_MAX_SAMPLES: usize = 1 << 18;

/// One sampling bucket: energy per component and the requests and bytes completed in it.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Bucket {
    /// Energy (J) per component in this bucket.
    pub energy: [f64; 5],
    /// Host requests completed in this bucket.
    pub requests: u64,
    /// Host bytes completed in this bucket.
    pub bytes: u64,
}

/// One sample of the series, in watts and rates.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Sample {
    /// Start of the bucket (s).
    pub time_s: f64,
    /// Length of the bucket (s); shorter than the interval only for the last one.
    pub len_s: f64,
    /// Mean total power over the bucket, watts.
    pub total_w: f64,
    /// Per component, in [`COMPONENTS`] order.
    pub component_w: [f64; 5],
    /// Requests completed per second in the bucket.
    pub iops: f64,
    /// Bytes completed per second in the bucket, MB/s (10^6 bytes).
    pub mbps: f64,
}

/// Samples merged `k` to one (time-weighted means, which keep each group's
/// energy; a group of no length, their plain mean) so that there are at
/// most `max`: (start s, end s, [total, components] W) per group, and `k`
/// (1: each sample alone). The power charts draw these.
#[allow(clippy::type_complexity)]
pub fn merge_samples(s: &[Sample], max: usize) -> (Vec<(f64, f64, [f64; 6])>, usize) {
    let k = s.len().div_ceil(max.max(1)).max(1);
    let merged = s
        .chunks(k)
        .map(|g| {
            let len: f64 = g.iter().map(|x| x.len_s).sum();
            let mut w = [0.0; 6];
            for x in g {
                let wt = if len > 0.0 {
                    x.len_s / len
                } else {
                    1.0 / g.len() as f64
                };
                w[0] += x.total_w * wt;
                for c in 0..5 {
                    w[c + 1] += x.component_w[c] * wt;
                }
            }
            let last = g[g.len() - 1];
            (g[0].time_s, last.time_s + last.len_s, w)
        })
        .collect();
    (merged, k)
}

/// The power time series (see the module docs): buckets of `interval` ns, at most `cap` of
/// them, coarsened by doubling the interval when a run outgrows them. Bucket
/// `i` covers `[origin + i x interval, origin + (i + 1) x interval)`: the
/// origin is 0, or the end of the ramp (`sim.ramp_time`), where the series
/// starts again (see [`Series::origin_ns`]).
#[derive(Clone, Debug)]
pub struct Series {
    /// Start of the first bucket (ns): nothing before it is counted.
    origin: u64,
    interval: u64,
    requested: u64,
    cap: usize,
    buckets: Vec<Bucket>,
    coarsened: u32,
    end: Option<u64>,
    /// The bucket the last interval fell in, `hot`, covers `[hot_lo, hot_hi)` and
    /// exists (`hot < buckets.len()`, `hot < cap`); empty (`hot_hi == 0`) until
    /// the first interval and after coarsening. Intervals are short next to a
    /// bucket, so most land in it: no division, no growth check.
    hot: usize,
    hot_lo: u64,
    hot_hi: u64,
    /// `[hot_lo, hot_hi)` for the observer's fast path ([`Series::fast`]), or
    /// empty once it called [`Series::close_fast`].
    fast_lo: u64,
    fast_hi: u64,
    /// End of the bucket after the hot one if activity may be counted there
    /// (`next`), else `fast_hi`.
    fast_next_hi: u64,
    fast_closed: bool,
    /// Integer activity (see [`Counters`]) not yet converted to joules, of the
    /// hot bucket (`cur`), of the bucket before it (`prev`, which covers
    /// `[prev_lo, hot_lo)`, empty when the hot bucket is the first or none) and
    /// of the bucket after it (`next`, `[hot_hi, hot_hi + interval)`): an
    /// activity that is committed late, or straddles two of them, is still
    /// counted, and one that runs past the hot bucket does not move it (the
    /// activities reported after it mostly start in the hot bucket). Each is
    /// converted once, with one multiplication per counter.
    pub(crate) cur: Counters,
    pub(crate) prev: Counters,
    pub(crate) next: Counters,
    prev_lo: u64,
    rates: Rates,
    /// The bucket of the latest completion, `done_i`, covers `[done_lo,
    /// done_hi)` (empty when none: see [`Series::add_completion`]).
    done_lo: u64,
    done_hi: u64,
    done_i: usize,
}

/// Integer activity: flash units by rate index (plane-ns of array
/// operations, planes of per-operation ones, ns of transfers by the kind of op
/// served), die-ns by the same index, CPU-ns by
/// mode, DRAM-ns and host-link-ns active. Adding is exact, so the order of events
/// never matters; joules come from one multiplication per counter. A counter is
/// a wrapping (two's complement) total: [`Series::uncount`] may take back, from
/// these counters, activity that was charged in joules instead, and the sum
/// converts correctly as long as the true total fits in an `i64`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Counters {
    /// Units of array operations by kind; a transfer's units are its ns, in
    /// `rate_ns`.
    pub u: [u64; 3],
    pub rate_ns: [u64; 8],
    pub cpu_ns: [u64; 3],
    pub dram_ns: u64,
    pub link_ns: u64,
}

impl Counters {
    /// Count `ns` of die activity with `u` units at rate index `r`.
    #[inline(always)]
    pub(crate) fn add(&mut self, r: usize, ns: u64, u: u64) {
        self.rate_ns[r] += ns;
        if r < 3 {
            self.u[r] += u;
        }
    }

    /// Take back what `add` counted (wrapping: see above).
    pub(crate) fn sub(&mut self, r: usize, ns: u64, u: u64) {
        self.rate_ns[r] = self.rate_ns[r].wrapping_sub(ns);
        if r < 3 {
            self.u[r] = self.u[r].wrapping_sub(u);
        }
    }
}

/// Joules per counter unit above each component's baseline (see [`Counters`]).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct Rates {
    /// Per flash unit (J per plane-ns, per plane-op or per transfer-ns).
    pub u: [f64; 8],
    /// Die idle (J/ns), subtracted for every busy die-ns.
    pub die_idle: f64,
    /// Channel (J per transfer-ns).
    pub bus: f64,
    /// CPU mode above idle mode (J/ns).
    pub cpu: [f64; 3],
    pub dram: f64,
    /// Host link active above idle (J/ns).
    pub link: f64,
}

impl Series {
    /// A series of `interval_ns`-ns buckets, at most `cap` of them before coarsening.
    pub fn new(interval_ns: u64, cap: usize) -> Series {
        Series {
            origin: 0,
            interval: interval_ns,
            requested: interval_ns,
            cap,
            buckets: Vec::new(),
            coarsened: 0,
            end: None,
            hot: 0,
            hot_lo: 0,
            hot_hi: 0,
            fast_lo: 0,
            fast_hi: 0,
            fast_next_hi: 0,
            fast_closed: false,
            cur: Counters::default(),
            prev: Counters::default(),
            next: Counters::default(),
            prev_lo: 0,
            rates: Rates::default(),
            done_lo: u64::MAX,
            done_hi: 0,
            done_i: 0,
        }
    }

    pub(crate) fn set_rates(&mut self, rates: Rates) {
        self.rates = rates;
    }

    /// Drop everything counted and start again, empty, at `origin` (ns), at
    /// the interval asked for: the series of a measured phase that starts
    /// there (the end of a ramp). Nothing before `origin` may be added
    /// afterwards. The fast path stays as it was (open or closed).
    pub(crate) fn restart_at(&mut self, origin: u64) {
        let fast_closed = self.fast_closed;
        *self = Series {
            origin,
            rates: self.rates,
            ..Series::new(self.requested, self.cap)
        };
        self.fast_closed = fast_closed;
        self.set_hot_range(0, 0);
    }

    /// Start of the first bucket (ns): 0, or the end of the ramp.
    pub fn origin_ns(&self) -> u64 {
        self.origin
    }

    /// `t` (ns, not before the origin) from the origin.
    #[inline(always)]
    fn rel(&self, t: u64) -> u64 {
        debug_assert!(t >= self.origin, "{t} ns is before the series' origin");
        t.saturating_sub(self.origin)
    }

    /// `[s, e)` lies inside the hot bucket and the fast path is open: counting
    /// it in `cur` is enough.
    #[inline(always)]
    pub(crate) fn fast(&self, s: u64, e: u64) -> bool {
        s >= self.fast_lo && e <= self.fast_hi
    }

    /// The fast range `(lo, hi, next_hi)`: the hot bucket `[lo, hi)` and the
    /// end of the one after it that may be counted in `next` (`hi` if none);
    /// empty (`lo` above every time) once the fast path is closed.
    #[inline(always)]
    pub(crate) fn fast_window(&self) -> (u64, u64, u64) {
        (self.fast_lo, self.fast_hi, self.fast_next_hi)
    }

    /// A linear activity `[s, e)` outside the fast range that starts in the hot
    /// bucket and ends in the next, while the fast path is open: the ns of it in
    /// the hot bucket (the rest goes to `next`).
    #[inline(always)]
    pub(crate) fn fast_split(&self, s: u64, e: u64) -> Option<u64> {
        if s >= self.fast_lo && s < self.fast_hi && e <= self.fast_next_hi {
            Some(self.fast_hi - s)
        } else {
            None
        }
    }

    /// A linear activity `[s, e)` that starts in the bucket before the hot one
    /// and ends in it or in the hot one, while the fast path is open (an array
    /// operation reported when it ends): the ns of it in the bucket before (the
    /// rest is in the hot bucket).
    #[inline(always)]
    pub(crate) fn fast_split_prev(&self, s: u64, e: u64) -> Option<u64> {
        if s < self.fast_lo && s >= self.prev_lo && e <= self.fast_hi {
            Some(e.min(self.fast_lo) - s)
        } else {
            None
        }
    }

    /// `[s, e)` starts in the bucket before the hot one and ends in the hot
    /// one at the latest, while the fast path is open.
    #[inline(always)]
    pub(crate) fn fast_prev(&self, s: u64, e: u64) -> bool {
        s < self.fast_lo && s >= self.prev_lo && e <= self.fast_hi
    }

    /// From now on [`Series::fast`] is false.
    pub(crate) fn close_fast(&mut self) {
        self.fast_closed = true;
        self.set_hot_range(self.hot_lo, self.hot_hi);
    }

    /// The hot bucket covers `[lo, hi)` (empty if `hi` is 0).
    fn set_hot_range(&mut self, lo: u64, hi: u64) {
        self.hot_lo = lo;
        self.hot_hi = hi;
        let next_hi = if hi != 0 && self.hot + 1 < self.cap {
            hi + self.interval
        } else {
            hi
        };
        (self.fast_lo, self.fast_hi, self.fast_next_hi) = if self.fast_closed {
            (u64::MAX, 0, 0)
        } else {
            (lo, hi, next_hi)
        };
    }

    /// `[s, e)` lies inside the hot bucket: counting it in `cur` is enough.
    #[inline(always)]
    pub(crate) fn is_hot(&self, s: u64, e: u64) -> bool {
        s >= self.hot_lo && e <= self.hot_hi
    }

    /// Count an activity over `[s, e)` that is not inside the hot bucket, if it
    /// lies in the three counted buckets or the hot bucket can move to it:
    /// `add(counters, ns)` counts `ns` of it (`linear`: any part of it, split at a
    /// bucket boundary; else only the whole). Returns false when the activity must
    /// be charged in joules instead (it starts before the counted buckets, spans
    /// more than two buckets, or needs coarsening first).
    #[inline(always)]
    pub(crate) fn count_cold(
        &mut self,
        s: u64,
        e: u64,
        linear: bool,
        add: impl Fn(&mut Counters, u64),
    ) -> bool {
        let iv = self.interval;
        if s >= self.hot_hi {
            // Later than the hot bucket (or none yet): it becomes hot if it lies in
            // that bucket and the next.
            let i = self.rel(s) / iv;
            let hi = self.origin + (i + 1) * iv;
            if i >= self.cap as u64
                || (e > hi && (!linear || e - hi > iv || i + 1 >= self.cap as u64))
            {
                return false;
            }
            self.move_hot(i as usize);
        } else if s < self.hot_lo {
            // Starts in the bucket before the hot one (committed late).
            if s < self.prev_lo {
                return false;
            }
            if e <= self.hot_lo {
                add(&mut self.prev, e - s);
                return true;
            }
            if !linear || e > self.hot_hi {
                return false;
            }
            add(&mut self.prev, self.hot_lo - s);
            add(&mut self.cur, e - self.hot_lo);
            return true;
        }
        // Starts in the hot bucket.
        let hi = self.hot_hi;
        if e <= hi {
            add(&mut self.cur, e - s);
            return true;
        }
        if !linear || e - hi > iv || self.hot + 1 >= self.cap {
            return false;
        }
        add(&mut self.cur, hi - s);
        add(&mut self.next, e - hi);
        true
    }

    /// Take back the part `[s, e)` of an activity counted earlier, if it lies in
    /// the three counted buckets: `sub(counters, ns)` removes `ns` of it
    /// (`linear`: any part, split at their boundaries; else only the whole, which
    /// must lie in one of them). Returns false, changing nothing, when it does
    /// not: the caller then takes it back in joules. Counters hold wrapping
    /// totals (see [`Counters`]), so taking back what another path charged
    /// stays exact.
    pub(crate) fn uncount(
        &mut self,
        s: u64,
        e: u64,
        linear: bool,
        sub: impl Fn(&mut Counters, u64),
    ) -> bool {
        let (lo, hi) = (self.hot_lo, self.hot_hi);
        if hi == 0
            || s < self.prev_lo
            || (e > hi && (e - hi > self.interval || self.hot + 1 >= self.cap))
        {
            return false;
        }
        let one_bucket = (s >= lo || e <= lo) && (s >= hi || e <= hi);
        if !linear && !one_bucket {
            return false;
        }
        if s < lo {
            sub(&mut self.prev, e.min(lo) - s);
        }
        if e > lo && s < hi {
            sub(&mut self.cur, e.min(hi) - s.max(lo));
        }
        if e > hi {
            sub(&mut self.next, e - s.max(hi));
        }
        true
    }

    /// Make bucket `i` (`< cap`) hot, converting the counters it leaves behind.
    fn move_hot(&mut self, i: usize) {
        let iv = self.interval;
        let h = self.hot;
        if self.hot_hi != 0 && i == h + 1 {
            Self::convert(
                &self.rates,
                &mut self.prev,
                &mut self.buckets,
                h.wrapping_sub(1),
            );
            // `prev` is empty now: the counters of the old hot and next buckets
            // move down.
            std::mem::swap(&mut self.prev, &mut self.cur);
            std::mem::swap(&mut self.cur, &mut self.next);
        } else {
            self.flush();
        }
        if i == self.buckets.len() {
            self.buckets.push(Bucket::default());
        } else if i > self.buckets.len() {
            self.buckets.resize(i + 1, Bucket::default());
        }
        self.hot = i;
        let lo = self.origin + i as u64 * iv;
        self.set_hot_range(lo, lo + iv);
        // Nothing lies before the first bucket.
        self.prev_lo = lo.saturating_sub(iv).max(self.origin);
    }

    /// Convert all three counter sets to joules in their buckets.
    fn flush(&mut self) {
        let h = self.hot;
        Self::convert(
            &self.rates,
            &mut self.prev,
            &mut self.buckets,
            h.wrapping_sub(1),
        );
        Self::convert(&self.rates, &mut self.cur, &mut self.buckets, h);
        if self.next != Counters::default() && self.buckets.len() <= h + 1 {
            self.buckets.resize(h + 2, Bucket::default());
        }
        Self::convert(&self.rates, &mut self.next, &mut self.buckets, h + 1);
    }

    /// Add the joules of `c` to bucket `i` and clear `c` (nothing if `c` is empty).
    fn convert(r: &Rates, c: &mut Counters, buckets: &mut [Bucket], i: usize) {
        if *c == Counters::default() {
            return;
        }
        // Signed totals (see `Counters`); the same as `ns_f64` for the usual,
        // non-negative ones.
        let f = |x: u64| x as i64 as f64;
        let mut flash = 0.0;
        for k in 0..8 {
            flash += r.u[k] * f(if k < 3 { c.u[k] } else { c.rate_ns[k] });
        }
        let busy = c.rate_ns.iter().fold(0u64, |a, &x| a.wrapping_add(x));
        flash -= r.die_idle * f(busy);
        let bus = r.bus * f(c.rate_ns[3..].iter().fold(0u64, |a, &x| a.wrapping_add(x)));
        let mut cpu = 0.0;
        for m in 0..3 {
            cpu += r.cpu[m] * f(c.cpu_ns[m]);
        }
        let b = &mut buckets[i].energy;
        b[FLASH] += flash;
        b[BUS] += bus;
        b[CPU] += cpu;
        b[DRAM] += r.dram * f(c.dram_ns);
        b[HOST] += r.link * f(c.link_ns);
        *c = Counters::default();
    }

    /// Current interval (ns), after any coarsening.
    pub fn interval_ns(&self) -> u64 {
        self.interval
    }
    /// The interval asked for (ns).
    pub fn requested_interval_ns(&self) -> u64 {
        self.requested
    }
    /// How many times the interval was doubled to keep memory bounded.
    pub fn coarsened(&self) -> u32 {
        self.coarsened
    }
    /// Raw buckets (energies in J).
    pub fn buckets(&self) -> &[Bucket] {
        &self.buckets
    }

    fn coarsen(&mut self) {
        self.forget_done();
        self.flush();
        let n = self.buckets.len().div_ceil(2);
        for i in 0..n {
            let a = self.buckets[2 * i];
            let b = self.buckets.get(2 * i + 1).copied().unwrap_or_default();
            let mut m = a;
            for c in 0..5 {
                m.energy[c] += b.energy[c];
            }
            m.requests += b.requests;
            m.bytes += b.bytes;
            self.buckets[i] = m;
        }
        self.buckets.truncate(n);
        self.interval *= 2;
        self.coarsened += 1;
        self.set_hot_range(0, 0);
        self.prev_lo = 0;
    }

    #[inline]
    fn slot(&mut self, t: u64) -> usize {
        let t = self.rel(t);
        loop {
            let i = (t / self.interval) as usize;
            if i < self.cap {
                if i >= self.buckets.len() {
                    self.buckets.resize(i + 1, Bucket::default());
                }
                return i;
            }
            self.coarsen();
        }
    }

    /// First and last bucket of `[s, e)` (`s < e`), coarsening first (exactly as
    /// `slot(e - 1)` would) so the interval cannot change while splitting. One
    /// division when the interval lies inside one bucket (the common case).
    #[inline]
    fn span(&mut self, s: u64, e: u64) -> (usize, usize) {
        let (s, e) = (self.rel(s), self.rel(e));
        loop {
            let iv = self.interval;
            let i = (s / iv) as usize;
            let last = if e <= (i as u64 + 1) * iv {
                i
            } else {
                ((e - 1) / iv) as usize
            };
            if last < self.cap {
                if last >= self.buckets.len() {
                    self.buckets.resize(last + 1, Bucket::default());
                }
                return (i, last);
            }
            self.coarsen();
        }
    }

    /// Spread `joules` evenly over `[s, e)` (a constant power), split at buckets.
    #[inline(always)]
    pub fn add_energy(&mut self, comp: usize, s: u64, e: u64, joules: f64) {
        if e <= s || joules == 0.0 {
            return;
        }
        if s >= self.hot_lo && e <= self.hot_hi {
            // Inside the hot bucket: what `span` would give, without its work.
            let n = ns_f64(e - s);
            self.buckets[self.hot].energy[comp] += joules / n * n;
            return;
        }
        self.add_energy_span(comp, s, e, joules);
    }

    #[inline(never)]
    fn add_energy_span(&mut self, comp: usize, s: u64, e: u64, joules: f64) {
        let (i, last) = self.span(s, e);
        let per_ns = joules / (e - s) as f64;
        if i == last {
            self.buckets[i].energy[comp] += per_ns * (e - s) as f64;
            return;
        }
        self.spread(comp, i, s, e, per_ns);
    }

    /// Two components over the same interval in one pass (a die and its channel):
    /// exactly `add_energy(ca, s, e, ja)` then `add_energy(cb, s, e, jb)`.
    #[inline]
    pub fn add_energy2(&mut self, ca: usize, ja: f64, cb: usize, jb: f64, s: u64, e: u64) {
        if e <= s || (ja == 0.0 && jb == 0.0) {
            return;
        }
        self.add_energy2_span(ca, ja, cb, jb, s, e);
    }

    /// A die's energy above idle (`flash`) and its channel's (`bus` >= 0) over
    /// `[s, e)`, `s < e`, `n = (e - s) as f64`: exactly `add_energy(FLASH, s, e,
    /// flash)`, then `add_energy(BUS, s, e, bus)` if `bus > 0`.
    #[inline(always)]
    pub(crate) fn add_die(&mut self, flash: f64, bus: f64, s: u64, e: u64, n: f64) {
        debug_assert!(s < e && n == (e - s) as f64 && bus >= 0.0);
        if s >= self.hot_lo && e <= self.hot_hi {
            // Inside the hot bucket: what `span` would give, without its work.
            let b = &mut self.buckets[self.hot].energy;
            if flash != 0.0 {
                b[FLASH] += flash / n * n;
            }
            if bus != 0.0 {
                b[BUS] += bus / n * n;
            }
            return;
        }
        // Zero energies must not grow or coarsen the series.
        if flash == 0.0 && bus == 0.0 {
            return;
        }
        self.add_energy2_span(FLASH, flash, BUS, bus, s, e);
    }

    #[inline(never)]
    fn add_energy2_span(&mut self, ca: usize, ja: f64, cb: usize, jb: f64, s: u64, e: u64) {
        let (i, last) = self.span(s, e);
        let n = (e - s) as f64;
        let (pa, pb) = (ja / n, jb / n);
        if i == last {
            let b = &mut self.buckets[i].energy;
            if ja != 0.0 {
                b[ca] += pa * n;
            }
            if jb != 0.0 {
                b[cb] += pb * n;
            }
            return;
        }
        if ja != 0.0 {
            self.spread(ca, i, s, e, pa);
        }
        if jb != 0.0 {
            self.spread(cb, i, s, e, pb);
        }
    }

    /// `per_ns` over `[s, e)` from bucket `i` (that of `s`) on, split at buckets.
    #[inline]
    fn spread(&mut self, comp: usize, mut i: usize, s: u64, e: u64, per_ns: f64) {
        let iv = self.interval;
        let (s, e) = (self.rel(s), self.rel(e));
        let mut t = s;
        while t < e {
            let u = e.min((i as u64 + 1) * iv);
            self.buckets[i].energy[comp] += per_ns * (u - t) as f64;
            t = u;
            i += 1;
        }
    }

    /// Add a constant power over `[origin, end)` (the origin is 0 but after
    /// a ramp).
    pub fn add_baseline(&mut self, comp: usize, watts: f64, end: u64) {
        if end <= self.origin || watts == 0.0 {
            return;
        }
        self.slot(end - 1);
        let end = end - self.origin;
        let iv = self.interval;
        for (i, b) in self.buckets.iter_mut().enumerate() {
            let s = i as u64 * iv;
            if s >= end {
                break;
            }
            let u = end.min(s + iv);
            b.energy[comp] += watts * (u - s) as f64 * 1e-9;
        }
    }

    /// Count a request of `bytes` bytes completed at `t` ns. Completions
    /// come in time order, so nearly always in the bucket of the one before
    /// (`done_i`, which covers `[done_lo, done_hi)`): no division, no call.
    #[inline(always)]
    pub fn add_completion(&mut self, t: u64, bytes: u64) {
        if t >= self.done_lo && t < self.done_hi {
            let b = &mut self.buckets[self.done_i];
            b.requests += 1;
            b.bytes += bytes;
            return;
        }
        self.add_completion_cold(t, bytes);
    }

    /// `add_completion` outside the bucket of the one before: that bucket
    /// is `t`'s from now on.
    #[inline(never)]
    fn add_completion_cold(&mut self, t: u64, bytes: u64) {
        let i = if t >= self.hot_lo && t < self.hot_hi {
            self.hot
        } else {
            self.slot(t)
        };
        self.buckets[i].requests += 1;
        self.buckets[i].bytes += bytes;
        // Bucket `i` exists and stays where it is until the series
        // coarsens or closes (which forget it): `slot` of a time in it
        // would find it, unchanged.
        let lo = self.origin + i as u64 * self.interval;
        (self.done_lo, self.done_hi, self.done_i) = (lo, lo + self.interval, i);
    }

    /// Forget the completions' bucket (its index or extent changes).
    fn forget_done(&mut self) {
        (self.done_lo, self.done_hi, self.done_i) = (u64::MAX, 0, 0);
    }

    /// Fix the window end: buckets cover `[origin, end)` exactly afterwards.
    pub fn close(&mut self, end: u64) {
        self.forget_done();
        self.flush();
        if end > self.origin {
            self.slot(end - 1);
        }
        let n = end.saturating_sub(self.origin).div_ceil(self.interval) as usize;
        // Completions exactly at `end` land in the bucket that `end` opens; fold
        // them into the last bucket of the window.
        if self.buckets.len() > n && n > 0 {
            let (reqs, bytes) = self.buckets[n..]
                .iter()
                .fold((0, 0), |(r, b), x| (r + x.requests, b + x.bytes));
            self.buckets[n - 1].requests += reqs;
            self.buckets[n - 1].bytes += bytes;
        }
        self.buckets.resize(n, Bucket::default());
        self.end = Some(end);
        self.set_hot_range(0, 0);
        self.prev_lo = 0;
    }

    /// The samples (watts, IOPS, MB/s) of a closed series.
    pub fn samples(&self) -> Vec<Sample> {
        let Some(end) = self.end else {
            return Vec::new();
        };
        let iv = self.interval;
        self.buckets
            .iter()
            .enumerate()
            .map(|(i, b)| {
                let s = self.origin + i as u64 * iv;
                let len = (end.min(s + iv) - s) as f64 * 1e-9;
                let w = b.energy.map(|j| j / len);
                Sample {
                    time_s: s as f64 * 1e-9,
                    len_s: len,
                    total_w: w.iter().sum(),
                    component_w: w,
                    iops: b.requests as f64 / len,
                    mbps: b.bytes as f64 / len / 1e6,
                }
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {

    /// The power charts' merge keeps each line's energy and its span, and
    /// leaves at most `max` groups (fewer samples: each alone).
    #[test]
    fn merging_keeps_energy_and_caps_the_steps() {
        let samples: Vec<Sample> = (0..10_001)
            .map(|i| Sample {
                time_s: i as f64 * 1e-3,
                len_s: 1e-3,
                total_w: (i % 7) as f64,
                component_w: [(i % 3) as f64, 1.0, 0.0, 0.5, (i % 5) as f64],
                iops: i as f64,
                mbps: 0.0,
            })
            .collect();
        let (m, _) = merge_samples(&samples, 2000);
        assert!(m.len() <= 2000, "{}", m.len());
        for c in [0, 5] {
            let a: f64 = samples
                .iter()
                .map(|s| [s.total_w, 0.0, 0.0, 0.0, 0.0, s.component_w[4]][c] * s.len_s)
                .sum();
            let b: f64 = m.iter().map(|(s, e, w)| w[c] * (e - s)).sum();
            assert!((a - b).abs() < 1e-9 * a.max(1.0), "{a} vs {b}");
        }
        assert_eq!(m[0].0, 0.0);
        let end = samples.last().map(|s| s.time_s + s.len_s).unwrap();
        assert!((m.last().unwrap().1 - end).abs() < 1e-12);
        assert_eq!(merge_samples(&samples[..10], 2000).0.len(), 10);
    }

    use super::*;

    #[test]
    fn interval_split_exactly_at_boundaries() {
        let mut s = Series::new(1000, 16);
        // 2 J over [500, 2500): 0.5 J, 1 J, 0.5 J.
        s.add_energy(FLASH, 500, 2500, 2.0);
        s.close(3000);
        let e: Vec<f64> = s.buckets().iter().map(|b| b.energy[FLASH]).collect();
        assert_eq!(e, vec![0.5, 1.0, 0.5]);
    }

    #[test]
    fn coarsening_keeps_energy_and_says_so() {
        let mut s = Series::new(10, 4);
        for k in 0..20u64 {
            s.add_energy(CPU, k * 10, k * 10 + 10, 1.0);
        }
        s.close(200);
        assert!(s.coarsened() >= 3, "{}", s.coarsened());
        assert!(s.buckets().len() <= 4);
        let tot: f64 = s.buckets().iter().map(|b| b.energy[CPU]).sum();
        assert_eq!(tot, 20.0);
        assert_eq!(s.interval_ns(), 80);
    }

    #[test]
    fn completions_land_in_their_buckets_across_coarsening() {
        // Completions mostly in time order (some late, some before the
        // origin's first bucket), with energy that makes the series coarsen
        // between them: each lands in the bucket of its time at the final
        // interval, those at or past the end in the last.
        let mut s = Series::new(10, 8);
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        let mut times = Vec::new();
        let mut t = 0u64;
        for k in 0..400u64 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            t += x % 7;
            let at = if k % 17 == 5 {
                t.saturating_sub(x % 40)
            } else {
                t
            };
            s.add_completion(at, 1 + k % 3);
            times.push((at, 1 + k % 3));
            if k % 50 == 49 {
                s.add_energy(CPU, t, t + 25, 1.0);
            }
        }
        let end = t + 1;
        s.close(end);
        let iv = s.interval_ns();
        let n = s.buckets().len();
        let mut want = vec![(0u64, 0u64); n];
        for &(at, b) in &times {
            let i = ((at / iv) as usize).min(n - 1);
            want[i].0 += 1;
            want[i].1 += b;
        }
        let got: Vec<_> = s.buckets().iter().map(|b| (b.requests, b.bytes)).collect();
        assert!(s.coarsened() > 0);
        assert_eq!(got, want);
    }

    /// The series without the hot-bucket shortcut: every interval located by
    /// division, split piece by piece (the definition the fast paths must match
    /// bit for bit).
    struct Reference {
        interval: u64,
        cap: usize,
        buckets: Vec<[f64; 5]>,
    }

    impl Reference {
        fn slot(&mut self, t: u64) -> usize {
            loop {
                let i = (t / self.interval) as usize;
                if i < self.cap {
                    if i >= self.buckets.len() {
                        self.buckets.resize(i + 1, [0.0; 5]);
                    }
                    return i;
                }
                let n = self.buckets.len().div_ceil(2);
                for i in 0..n {
                    let a = self.buckets[2 * i];
                    let b = self.buckets.get(2 * i + 1).copied().unwrap_or_default();
                    self.buckets[i] = std::array::from_fn(|c| a[c] + b[c]);
                }
                self.buckets.truncate(n);
                self.interval *= 2;
            }
        }
        fn add(&mut self, comp: usize, s: u64, e: u64, j: f64) {
            if e <= s || j == 0.0 {
                return;
            }
            self.slot(e - 1);
            let per_ns = j / (e - s) as f64;
            let mut t = s;
            while t < e {
                let i = self.slot(t);
                let u = e.min((i as u64 + 1) * self.interval);
                self.buckets[i][comp] += per_ns * (u - t) as f64;
                t = u;
            }
        }
    }

    proptest::proptest! {
        // 64 cases by default; PROPTEST_CASES for long runs.
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(
            std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(64)
        ))]
        #[test]
        fn fast_paths_match_the_reference_bit_for_bit(
            ops in proptest::collection::vec(
                (0u64..5_000, 1u64..400, -1.0f64..1.0, 0.0f64..1.0, 0u8..4), 1..200),
            interval in 1u64..300,
            cap in 2usize..40,
        ) {
            let mut fast = Series::new(interval, cap);
            let mut slow = Reference { interval, cap, buckets: Vec::new() };
            for (s, len, a, b, k) in ops {
                let e = s + len;
                // Zero energies too: they must not coarsen or grow the series.
                let a = if k == 0 { 0.0 } else { a };
                let b = if k == 1 { 0.0 } else { b };
                match k {
                    3 => {
                        fast.add_energy(CPU, s, e, a);
                        slow.add(CPU, s, e, a);
                    }
                    _ => {
                        fast.add_die(a, b, s, e, (e - s) as f64);
                        slow.add(FLASH, s, e, a);
                        if b > 0.0 {
                            slow.add(BUS, s, e, b);
                        }
                    }
                }
            }
            proptest::prop_assert_eq!(fast.interval_ns(), slow.interval);
            let got: Vec<[u64; 5]> =
                fast.buckets().iter().map(|b| b.energy.map(f64::to_bits)).collect();
            let want: Vec<[u64; 5]> =
                slow.buckets.iter().map(|b| b.map(f64::to_bits)).collect();
            proptest::prop_assert_eq!(got, want);
        }

        /// The integer counters (hot bucket, the one before it, a straddle of the
        /// two) give what the joule-by-joule reference gives, up to rounding.
        #[test]
        fn counted_buckets_match_the_reference(
            ops in proptest::collection::vec(
                (0u64..5_000, 1u64..400, 1u64..4, proptest::bool::ANY), 1..200),
            interval in 1u64..300,
            cap in 2usize..40,
        ) {
            let mut rates = Rates { die_idle: 0.5e-9, bus: 0.25e-9, ..Default::default() };
            rates.u[0] = 2e-9; // per plane-ns (array read)
            rates.u[3] = 1e-9; // per ns (transfer)
            let mut fast = Series::new(interval, cap);
            fast.set_rates(rates);
            let mut slow = Reference { interval, cap, buckets: Vec::new() };
            let mut end = 0;
            for (s, len, planes, xfer) in ops {
                let e = s + len;
                end = end.max(e);
                let (r, planes) = if xfer { (3, 1) } else { (0, planes) };
                let u = planes * len;
                let n = len as f64;
                let flash = rates.u[r] * u as f64 - rates.die_idle * n;
                let bus = if xfer { rates.bus * n } else { 0.0 };
                // As the observer does.
                if fast.is_hot(s, e) {
                    fast.cur.add(r, len, u);
                } else if !fast.count_cold(s, e, true, |t, ns| t.add(r, ns, planes * ns)) {
                    fast.add_die(flash, bus, s, e, n);
                }
                slow.add(FLASH, s, e, flash);
                if xfer {
                    slow.add(BUS, s, e, bus);
                }
            }
            fast.close(end);
            proptest::prop_assert_eq!(fast.interval_ns(), slow.interval);
            proptest::prop_assert_eq!(fast.buckets().len(), slow.buckets.len());
            for (f, r) in fast.buckets().iter().zip(&slow.buckets) {
                for (c, (&a, &b)) in f.energy.iter().zip(r).enumerate() {
                    proptest::prop_assert!(
                        (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1e-12),
                        "component {}: {} vs {}", c, a, b
                    );
                }
            }
        }
    }
}
