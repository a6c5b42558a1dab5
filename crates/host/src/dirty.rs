//! Dirty-page throttling as the kernel profile runs it: `balance_dirty_pages`
//! of mm/page-writeback.c, for one device (one `bdi_writeback`, no memcg,
//! no strict limit). The page cache (`pagecache/`) calls it after a
//! writer's copy and carries out what it decides (pause, write back).
//!
//! * **Current kernels (3.2's IO-less throttling, as in 6.12).** A writer
//!   never writes back; it is checked once it has dirtied
//!   `nr_dirtied_pause` pages (`balance_dirty_pages_ratelimited_flags`) and
//!   then paused in proportion to what it dirtied
//!   (`period = HZ * pages_dirtied / task_ratelimit`), where the task's
//!   rate is the device's `dirty_ratelimit` scaled by `pos_ratio`, a cubic
//!   in how far dirty + writeback pages are from the setpoint between the
//!   free-run ceiling and the limit (`wb_position_ratio`,
//!   `pos_ratio_polynom`). Every `BANDWIDTH_INTERVAL` (200 ms) the device's
//!   write bandwidth is estimated from the pages written
//!   (`wb_update_write_bandwidth`) and `dirty_ratelimit` steps towards the
//!   rate that balances dirtying with writeback
//!   (`wb_update_dirty_ratelimit`). Below the free-run ceiling, the
//!   midpoint of the two thresholds, nobody is paused.
//! * **2.6.35** ([`Bdp`]): checked every `ratelimit_pages` pages, a writer
//!   over its limit writes back up to a chunk itself and pauses a jiffy,
//!   doubling up to 100 ms.
//!
//! Times are in jiffies at `HZ = 250`, the default of kernel/Kconfig.hz in
//! both profiles; pages are 4 KiB.

use ssd_core::units::{Dur, SimTime};

/// `HZ`.
pub const HZ: u64 = 250;
/// A jiffy.
pub const JIFFY: Dur = Dur(1_000_000_000 / HZ);
/// `MAX_PAUSE` and `BANDWIDTH_INTERVAL` (`max(HZ / 5, 1)`).
const MAX_PAUSE: u64 = HZ / 5;
const BANDWIDTH_INTERVAL: u64 = HZ / 5;
/// `RATELIMIT_CALC_SHIFT`.
const SHIFT: u32 = 10;
/// `DIRTY_POLL_THRESH` (128 KiB in pages) and `INIT_BW` (100 MiB/s in
/// pages a second).
const DIRTY_POLL_THRESH: u64 = 32;
const INIT_BW: u64 = 100 << 8;
/// 2.6.35's longest pause, `HZ / 10`.
const MAX_PAUSE_2_6_35: u64 = HZ / 10;

/// The jiffy `t` falls in.
pub fn jiffies(t: SimTime) -> u64 {
    t.0 / JIFFY.0
}

/// The time of jiffy `j`.
pub fn at_jiffy(j: u64) -> SimTime {
    SimTime(j.saturating_mul(JIFFY.0))
}

fn ilog2(x: u64) -> u64 {
    x.max(1).ilog2() as u64
}

/// `dirty_freerun_ceiling`.
pub fn freerun_ceiling(thresh: u64, bg: u64) -> u64 {
    (thresh + bg) / 2
}

/// `dirty_poll_interval`: pages a free-running writer may dirty before it
/// is checked again.
pub fn poll_interval(dirty: u64, thresh: u64) -> u64 {
    if thresh > dirty {
        1 << (ilog2(thresh - dirty) >> 1)
    } else {
        1
    }
}

/// `pos_ratio_polynom`: 1 + ((setpoint - dirty) / (limit - setpoint))^3,
/// in units of 2^-10, within 0..=2.
fn pos_ratio_polynom(setpoint: u64, dirty: u64, limit: u64) -> i64 {
    let x = ((setpoint as i64 - dirty as i64) << SHIFT) / ((limit - setpoint) | 1) as i64;
    let mut p = x;
    p = (p * x) >> SHIFT;
    p = (p * x) >> SHIFT;
    p += 1 << SHIFT;
    p.clamp(0, 2 << SHIFT)
}

/// A writer's pacing on a current kernel (`task_struct`'s `nr_dirtied`,
/// `nr_dirtied_pause`, `dirty_paused_when`).
#[derive(Clone, Copy, Debug)]
pub struct Pace {
    /// Pages newly dirtied since the last check.
    pub nr_dirtied: u64,
    /// Pages it may dirty before the next check.
    pub nr_dirtied_pause: u64,
    /// In jiffies; 0 for never.
    pub paused_when: u64,
}

impl Default for Pace {
    fn default() -> Pace {
        // `init_task`'s `nr_dirtied_pause`: 128 KiB of pages.
        Pace {
            nr_dirtied: 0,
            nr_dirtied_pause: DIRTY_POLL_THRESH,
            paused_when: 0,
        }
    }
}

/// What one round of a current kernel's `balance_dirty_pages` decided.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Decision {
    /// Return to the writer (free run, or a pause too short to take).
    Return,
    /// Sleep this long, then return (`task_ratelimit` > 0) or check again.
    Pause {
        /// How long.
        pause: Dur,
        /// Check again after it (the task's rate was 0).
        again: bool,
    },
}

/// The device's dirty-throttling state on a current kernel (the
/// `bdi_writeback`'s bandwidth and rate limit, the domain's smoothed
/// limit).
#[derive(Clone, Debug)]
pub struct IoLess {
    /// `dom->dirty_limit` and when it was last updated.
    dirty_limit: u64,
    dirty_limit_stamp: u64,
    /// `WB_DIRTIED`: pages newly dirtied.
    pub dirtied: u64,
    /// `WB_WRITTEN`: pages whose writeback ended.
    pub written: u64,
    bw_time_stamp: u64,
    dirtied_stamp: u64,
    written_stamp: u64,
    /// Pages a second.
    write_bandwidth: u64,
    avg_write_bandwidth: u64,
    dirty_ratelimit: u64,
    balanced_dirty_ratelimit: u64,
    /// `wb->dirty_exceeded`.
    pub exceeded: bool,
}

impl Default for IoLess {
    fn default() -> IoLess {
        // `wb_init`: every rate starts at INIT_BW.
        IoLess {
            dirty_limit: 0,
            dirty_limit_stamp: 0,
            dirtied: 0,
            written: 0,
            bw_time_stamp: 0,
            dirtied_stamp: 0,
            written_stamp: 0,
            write_bandwidth: INIT_BW,
            avg_write_bandwidth: INIT_BW,
            dirty_ratelimit: INIT_BW,
            balanced_dirty_ratelimit: INIT_BW,
            exceeded: false,
        }
    }
}

impl IoLess {
    /// The estimated write bandwidth (its average), pages a second.
    pub fn avg_write_bandwidth(&self) -> u64 {
        self.avg_write_bandwidth
    }
    /// The device's dirty rate limit, pages a second.
    pub fn dirty_ratelimit(&self) -> u64 {
        self.dirty_ratelimit
    }

    /// `hard_dirty_limit`.
    fn limit(&self, thresh: u64) -> u64 {
        thresh.max(self.dirty_limit)
    }

    /// `wb_position_ratio` for the one device (its share of the thresholds
    /// is all of them): 0 at or over the limit.
    pub fn pos_ratio(&self, dirty: u64, thresh: u64, bg: u64) -> u64 {
        let limit = self.limit(thresh);
        if dirty >= limit {
            return 0;
        }
        let freerun = freerun_ceiling(thresh, bg);
        let setpoint = (freerun + limit) / 2;
        let mut pos = pos_ratio_polynom(setpoint, dirty, limit) as u64;
        let wb_thresh = thresh.max((limit - dirty) / 8);
        let x = (wb_thresh << 16) / (thresh | 1);
        let wb_setpoint = (setpoint * x) >> 16;
        let span = (((thresh.saturating_sub(wb_thresh) + 8 * self.avg_write_bandwidth) as u128
            * x as u128)
            >> 16) as u64;
        let x_intercept = wb_setpoint + span;
        if dirty < x_intercept - span / 4 {
            pos = (pos as u128 * (x_intercept - dirty) as u128
                / ((x_intercept - wb_setpoint) | 1) as u128) as u64;
        } else {
            pos /= 4;
        }
        let x_intercept = wb_thresh / 2;
        if dirty < x_intercept {
            if dirty > x_intercept / 8 {
                pos = pos * x_intercept / dirty;
            } else {
                pos *= 8;
            }
        }
        pos
    }

    /// `wb_bandwidth_estimate_start`: writeback begins after more than a
    /// second idle with nothing under writeback, so the idle time is not
    /// counted in the next estimate.
    pub fn writeback_starts(&mut self, now: SimTime, in_flight: u64) {
        let j = jiffies(now);
        if j.saturating_sub(self.bw_time_stamp) > HZ && in_flight == 0 {
            self.dirtied_stamp = self.dirtied;
            self.written_stamp = self.written;
            self.bw_time_stamp = j;
        }
    }

    /// `wb_update_bandwidth` after a writeback completion (the kernel's
    /// delayed `bw_dwork`), once an interval has passed.
    pub fn written_back(&mut self, now: SimTime) {
        if jiffies(now) >= self.bw_time_stamp + BANDWIDTH_INTERVAL {
            self.update_bandwidth(now, None);
        }
    }

    /// `__wb_update_bandwidth`; with `limits` (`dirty, thresh, bg,
    /// pos_ratio`) also the domain's limit and the rate limit.
    fn update_bandwidth(&mut self, now: SimTime, limits: Option<(u64, u64, u64, u64)>) {
        let j = jiffies(now);
        let elapsed = j.saturating_sub(self.bw_time_stamp).max(1);
        if let Some((dirty, thresh, bg, pos)) = limits {
            // domain_update_dirty_limit -> update_dirty_limit.
            if j >= self.dirty_limit_stamp + BANDWIDTH_INTERVAL {
                if self.dirty_limit < thresh {
                    self.dirty_limit = thresh;
                } else {
                    let t = thresh.max(dirty);
                    if self.dirty_limit > t {
                        self.dirty_limit -= (self.dirty_limit - t) >> 5;
                    }
                }
                self.dirty_limit_stamp = j;
            }
            self.update_dirty_ratelimit(dirty, thresh, bg, pos, elapsed);
        }
        self.update_write_bandwidth(elapsed);
        self.dirtied_stamp = self.dirtied;
        self.written_stamp = self.written;
        self.bw_time_stamp = j;
    }

    /// `wb_update_write_bandwidth`: the bandwidth over the last ~3 s
    /// (a period of `roundup_pow_of_two(3 * HZ)`), and its average that
    /// follows it only when it moves the same way twice.
    fn update_write_bandwidth(&mut self, elapsed: u64) {
        let period = (3 * HZ).next_power_of_two();
        let old = self.write_bandwidth;
        let mut avg = self.avg_write_bandwidth;
        let mut bw = (self.written - self.written_stamp.min(self.written)) * HZ;
        if elapsed > period {
            bw /= elapsed;
            avg = bw;
        } else {
            bw += old * (period - elapsed);
            bw >>= ilog2(period);
            if avg > old && old >= bw {
                avg -= (avg - old) >> 3;
            }
            if avg < old && old <= bw {
                avg += (old - avg) >> 3;
            }
        }
        self.write_bandwidth = bw;
        self.avg_write_bandwidth = avg.max(1);
    }

    /// `wb_update_dirty_ratelimit`: the rate that would balance dirtying
    /// with the write bandwidth, and a step of `dirty_ratelimit` towards
    /// it, damped when the estimates disagree about the direction.
    fn update_dirty_ratelimit(&mut self, dirty: u64, thresh: u64, bg: u64, pos: u64, elapsed: u64) {
        let freerun = freerun_ceiling(thresh, bg);
        let limit = self.limit(thresh);
        let setpoint = (freerun + limit) / 2;
        let write_bw = self.avg_write_bandwidth;
        let rl = self.dirty_ratelimit;
        let dirty_rate = (self.dirtied - self.dirtied_stamp.min(self.dirtied)) * HZ / elapsed;
        let task_rl = ((rl * pos) >> SHIFT) + 1;
        let balanced = ((task_rl as u128 * write_bw as u128) / (dirty_rate | 1) as u128) as u64;
        let balanced = balanced.min(write_bw);
        let mut step = 0;
        if dirty < setpoint {
            let x = self.balanced_dirty_ratelimit.min(balanced).min(task_rl);
            if rl < x {
                step = x - rl;
            }
        } else {
            let x = self.balanced_dirty_ratelimit.max(balanced).max(task_rl);
            if rl > x {
                step = rl - x;
            }
        }
        let shift = rl / (2 * step + 1);
        step = if shift < 64 {
            (step >> shift).div_ceil(8)
        } else {
            0
        };
        let rl = if rl < balanced {
            rl + step
        } else {
            rl.saturating_sub(step)
        };
        self.dirty_ratelimit = rl.max(1);
        self.balanced_dirty_ratelimit = balanced;
    }

    /// One round of `balance_dirty_pages` for a writer who has dirtied
    /// `pace.nr_dirtied` pages since its last check, with `nr_dirty` dirty
    /// and `dirty` dirty + writeback pages against the thresholds.
    /// Whether background writeback should start comes back beside it.
    pub fn balance(
        &mut self,
        pace: &mut Pace,
        now: SimTime,
        nr_dirty: u64,
        dirty: u64,
        thresh: u64,
        bg: u64,
    ) -> (Decision, bool) {
        let j = jiffies(now);
        let start_bg = nr_dirty > bg;
        if dirty <= freerun_ceiling(thresh, bg) {
            pace.paused_when = j;
            pace.nr_dirtied = 0;
            pace.nr_dirtied_pause = poll_interval(dirty, thresh);
            return (Decision::Return, start_bg);
        }
        self.exceeded = dirty > thresh;
        let pos = self.pos_ratio(dirty, thresh, bg);
        if j >= self.bw_time_stamp + BANDWIDTH_INTERVAL {
            self.update_bandwidth(now, Some((dirty, thresh, bg, pos)));
        }
        let rl = self.dirty_ratelimit;
        let task_rl = (rl * pos) >> SHIFT;
        let max_pause = self.max_pause(dirty);
        let (min_pause, pause_pages) = self.min_pause(max_pause, task_rl, rl);
        let pages = pace.nr_dirtied;
        let mut now_j = j as i64;
        let pause = match (HZ * pages).checked_div(task_rl) {
            None => max_pause as i64,
            Some(period) => {
                let period = period as i64;
                let mut pause = period;
                if pace.paused_when != 0 {
                    pause -= now_j - pace.paused_when as i64;
                }
                if pause < min_pause as i64 {
                    if pause < -(HZ as i64) {
                        pace.paused_when = j;
                        pace.nr_dirtied = 0;
                    } else if period > 0 {
                        pace.paused_when = (pace.paused_when as i64 + period).max(0) as u64;
                        pace.nr_dirtied = 0;
                    } else if pace.nr_dirtied_pause <= pages {
                        pace.nr_dirtied_pause += pages;
                    }
                    return (Decision::Return, true);
                }
                if pause > max_pause as i64 {
                    now_j += (pause - max_pause as i64).min(max_pause as i64);
                    pause = max_pause as i64;
                }
                pause
            }
        };
        pace.paused_when = (now_j + pause) as u64;
        pace.nr_dirtied = 0;
        pace.nr_dirtied_pause = pause_pages;
        let again = task_rl == 0 && dirty > 0;
        (
            Decision::Pause {
                pause: Dur(pause as u64 * JIFFY.0),
                again,
            },
            true,
        )
    }

    /// `wb_max_pause`: at most the time to write the dirty pages at the
    /// estimated bandwidth (+1 jiffy), and `MAX_PAUSE`.
    fn max_pause(&self, wb_dirty: u64) -> u64 {
        let t = wb_dirty / (1 + self.avg_write_bandwidth / (1 + HZ / 8).next_power_of_two()) + 1;
        t.min(MAX_PAUSE)
    }

    /// `wb_min_pause`: the shortest pause worth taking, and the pages the
    /// writer may dirty before its next check.
    fn min_pause(&self, max_pause: u64, task_rl: u64, rl: u64) -> (u64, u64) {
        let hi = ilog2(self.avg_write_bandwidth) as i64;
        let lo = ilog2(self.dirty_ratelimit) as i64;
        let mut t = (HZ / 100).max(1) as i64;
        if hi > lo {
            t += (hi - lo) * (10 * HZ as i64) / 1024;
        }
        t = t.min(1 + max_pause as i64 / 2);
        let hz2 = HZ.next_power_of_two();
        let mut pages = rl * t as u64 / hz2;
        if pages < DIRTY_POLL_THRESH {
            t = max_pause as i64;
            pages = rl * t as u64 / hz2;
            if pages > DIRTY_POLL_THRESH {
                pages = DIRTY_POLL_THRESH;
                t = (HZ * DIRTY_POLL_THRESH / rl.max(1)) as i64;
            }
        }
        let pause = HZ * pages / (task_rl + 1);
        if pause > max_pause {
            t = max_pause as i64;
            pages = task_rl * t as u64 / hz2;
        }
        let min = if pages >= DIRTY_POLL_THRESH {
            1 + t / 2
        } else {
            t
        };
        (min.max(0) as u64, pages)
    }
}

/// 2.6.35's dirty throttling (mm/page-writeback.c), where a writer over
/// the limit writes back pages itself: `balance_dirty_pages_ratelimited_nr`
/// calls `balance_dirty_pages` once `ratelimit_pages` pages are dirtied (8
/// while the limit is exceeded), with a chunk of 1.5 times what was
/// dirtied (`sync_writeback_pages`); the limit is lowered by up to an
/// eighth for a task that dirties much of what is dirtied
/// (`task_dirty_limit` over the `vm_dirties` proportion, lib/proportions.c).
#[derive(Debug)]
pub struct Bdp {
    /// `ratelimit_pages` (`writeback_set_ratelimit`): total pages /
    /// (CPUs x 32), within 16 and 4 MiB of pages.
    pub ratelimit: u64,
    /// Pages dirtied since the last check: the per-CPU `bdp_ratelimits`,
    /// one counter for the host.
    pub since: u64,
    /// `bdi->dirty_exceeded`.
    pub exceeded: bool,
    /// `vm_dirties`: the events (pages newly dirtied) and the period's
    /// shift (`calc_period_shift`: 2 + log2 of the dirty limit).
    pub events: u64,
    shift: u32,
}

/// A writer inside `balance_dirty_pages`.
#[derive(Clone, Copy, Debug, Default)]
pub struct Balance {
    /// 2.6.35's `write_chunk`.
    pub chunk: u64,
    /// 2.6.35: the pages written so far.
    pub written: u64,
    /// 2.6.35: the next pause.
    pub pause: Dur,
    /// It found the limit exceeded (counted as a throttle).
    pub over: bool,
    /// A current kernel's writer paused: once it wakes it returns ...
    pub paused: bool,
    /// ... unless its rate was 0 (over the limit): it checks again.
    pub again: bool,
}

impl Bdp {
    /// The state of a host of `ram_pages` pages and `cpus` CPUs whose
    /// dirty limit is `dirty_pages`.
    pub fn new(ram_pages: u64, cpus: u64, dirty_pages: u64) -> Bdp {
        Bdp {
            ratelimit: (ram_pages / (cpus.max(1) * 32)).clamp(16, (4 << 20) / 4096),
            since: 0,
            exceeded: false,
            events: 0,
            shift: 2 + dirty_pages.saturating_sub(1).max(1).ilog2(),
        }
    }
    /// Half a period of `vm_dirties` (`prop_fraction_single`).
    fn half(&self) -> u64 {
        1 << (self.shift - 1)
    }
    /// `prop_norm_single`: a task's events halve for every half-period
    /// the global count moved on since it last looked.
    pub fn norm(&self, local: &mut (u64, u64)) {
        let period = self.events & !(self.half() - 1);
        if local.1 != period {
            let missed = (period - local.1) >> (self.shift - 1);
            local.0 = if missed < 64 { local.0 >> missed } else { 0 };
            local.1 = period;
        }
    }
    /// `__prop_inc_single` for a task's newly dirtied page.
    pub fn dirtied(&mut self, local: &mut (u64, u64)) {
        self.norm(local);
        local.0 += 1;
        self.events += 1;
    }
    /// The limit for a task with `local` dirtying events of a dirty
    /// threshold `dirty` (`task_dirty_limit`): less an eighth times its
    /// share, at least half.
    pub fn task_limit(&self, local: &mut (u64, u64), dirty: u64) -> u64 {
        self.norm(local);
        let den = self.half() + (self.events & (self.half() - 1));
        let inv = ((dirty >> 3) as u128 * local.0 as u128 / den.max(1) as u128) as u64;
        dirty.saturating_sub(inv).max(dirty / 2)
    }
    /// The first pause: a jiffy.
    pub fn first_pause() -> Dur {
        JIFFY
    }
    /// The pause after `p`: doubled, at most `HZ / 10`.
    pub fn next_pause(p: Dur) -> Dur {
        Dur((p.0 * 2).min(MAX_PAUSE_2_6_35 * JIFFY.0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The cubic of `pos_ratio_polynom`: 1 at the setpoint, 2 as far below
    /// it as the limit is above, 0 at the limit.
    #[test]
    fn the_position_ratio_is_the_kernels_cubic() {
        assert_eq!(pos_ratio_polynom(1000, 1000, 2000), 1 << SHIFT);
        // At the limit, zero but for the integer arithmetic's rounding.
        assert!(pos_ratio_polynom(1000, 2000, 2000) < 16);
        assert!((2040..=2 << SHIFT).contains(&pos_ratio_polynom(1000, 0, 2000)));
        // Half way to the limit: 1 - 1/8.
        assert_eq!(pos_ratio_polynom(1000, 1500, 2000), 1024 - 128);
        let w = IoLess::default();
        assert_eq!(w.pos_ratio(2000, 2000, 1000), 0, "at the limit");
        // Between the setpoint and the limit the ratio falls.
        let (thresh, bg) = (20_000, 10_000);
        let r: Vec<u64> = [15_000, 16_000, 17_500, 19_000]
            .iter()
            .map(|&d| w.pos_ratio(d, thresh, bg))
            .collect();
        assert!(r.windows(2).all(|p| p[0] > p[1]), "{r:?}");
    }

    /// Below the free-run ceiling a writer is not paused and is next
    /// checked after `dirty_poll_interval` pages; over the limit it pauses
    /// the longest pause and checks again.
    #[test]
    fn free_run_and_over_the_limit() {
        let mut w = IoLess::default();
        let mut p = Pace::default();
        let (d, start) = w.balance(&mut p, SimTime(0), 100, 100, 20_000, 10_000);
        assert_eq!(d, Decision::Return);
        assert!(!start);
        assert_eq!(p.nr_dirtied_pause, 1 << (ilog2(19_900) >> 1));
        p.nr_dirtied = 1000;
        let (d, _) = w.balance(&mut p, SimTime(0), 15_000, 21_000, 20_000, 10_000);
        match d {
            Decision::Pause { pause, again } => {
                assert!(again);
                assert!(pause > Dur(0) && pause <= Dur(MAX_PAUSE * JIFFY.0));
            }
            _ => panic!("{d:?}"),
        }
    }

    /// A writer dirtying faster than the device writes is paused so that
    /// its rate comes down to the bandwidth: with the device writing 2,560
    /// pages a second (10 MB/s) and the writer dirtying 64 pages a check,
    /// the dirty level settles between the free-run ceiling and the limit
    /// and the writer's dirtying rate within a fifth of the bandwidth.
    #[test]
    fn a_fast_writer_is_paced_to_the_device() {
        let mut w = IoLess::default();
        let mut p = Pace::default();
        let (thresh, bg) = (20_000u64, 10_000u64);
        let bw = 2_560u64; // pages a second
        let mut dirty = 0u64;
        let mut t = SimTime(0);
        let mut dirtied_at_10s = 0;
        let mut total = 0u64;
        let mut written_carry = 0.0f64;
        while t < SimTime(40_000_000_000) {
            // The writer dirties 64 pages in 1 ms.
            let step = Dur(1_000_000);
            dirty += 64;
            total += 64;
            w.dirtied += 64;
            p.nr_dirtied += 64;
            t += step;
            let mut drain = |dt: Dur, dirty: &mut u64, w: &mut IoLess| {
                written_carry += bw as f64 * dt.0 as f64 * 1e-9;
                let n = (written_carry as u64).min(*dirty);
                written_carry -= n as f64;
                *dirty -= n;
                w.written += n;
            };
            drain(step, &mut dirty, &mut w);
            if p.nr_dirtied >= p.nr_dirtied_pause {
                loop {
                    let (d, _) = w.balance(&mut p, t, dirty, dirty, thresh, bg);
                    match d {
                        Decision::Return => break,
                        Decision::Pause { pause, again } => {
                            drain(pause, &mut dirty, &mut w);
                            t += pause;
                            if !again {
                                break;
                            }
                        }
                    }
                }
            }
            if t >= SimTime(10_000_000_000) && dirtied_at_10s == 0 {
                dirtied_at_10s = total;
            }
            assert!(dirty < thresh + 200, "dirty {dirty} at {t:?}");
        }
        let rate = (total - dirtied_at_10s) as f64 / ((t.0 - 10_000_000_000) as f64 * 1e-9);
        assert!((rate - bw as f64).abs() < bw as f64 / 5.0, "rate {rate}");
        assert!(dirty > freerun_ceiling(thresh, bg) - 2_000, "dirty {dirty}");
    }
}
