use super::{proportional_ends, proportional_ends_wide, PowerObserver, WorkSpan};
use ssd_core::observer::Observer;
use ssd_core::units::{Dur, SimTime};
use ssd_core::workload::IoOp;

#[test]
fn span_lane_is_a_fifo() {
    use super::{Span, SpanLane};
    let mut lane = SpanLane::default();
    let mut want = std::collections::VecDeque::new();
    let mut x = 0x9E37_79B9u64;
    for i in 0..5_000u64 {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let it = Span {
            s: i,
            e: i + (x >> 60),
        };
        lane.push_back(it);
        want.push_back(it);
        // Pop up to a bound, sometimes leaving a long queue behind.
        let lb = if x >> 63 == 0 {
            i.saturating_sub(100)
        } else {
            i
        };
        while let Some(f) = lane.pop_front_if_ended(lb) {
            let w = want.pop_front().unwrap();
            assert_eq!((f.s, f.e), (w.s, w.e));
            assert!(f.e <= lb);
        }
        assert!(want.front().is_none_or(|w| w.e > lb));
        assert!(lane.buf.len() - lane.head == want.len());
    }
    while let Some(f) = lane.pop_front() {
        let w = want.pop_front().unwrap();
        assert_eq!((f.s, f.e), (w.s, w.e));
    }
    assert!(want.is_empty());
}

#[test]
fn passes_counted_at_once_match_each_committed_after_the_cuts() {
    // Firmware passes reported in time order, runs of one shape among
    // them, completions advancing the clock's lower bound, and a ramp's
    // end, a drain start and the window end anywhere: what is counted
    // at once and taken back at the cuts must equal each pass divided
    // with every cut point known.
    let settings = ssdsim_host::config::SsdConfig::default()
        .validate()
        .unwrap();
    let mut x = 0x2545_F491_4F6C_DD1Du64;
    let mut next = |bits: u32| {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x >> (64 - bits)
    };
    let shapes = [[40, 8, 0, 0, 0], [40, 0, 0, 0, 0], [40, 8, 30, 90, 0]];
    for case in 0..300 {
        let mut o = PowerObserver::new(&settings, Dur::from_us(50)).unwrap();
        let mut passes = Vec::new();
        let mut clock = 0u64;
        for i in 0..(1 + next(9)) {
            clock += next(9);
            if next(1) == 0 {
                let t = SimTime(clock);
                o.request_done(IoOp::Write, 4096, t, t);
            }
            if next(6) == 0 {
                o.measure_start(SimTime(clock));
            }
            if case % 3 == 0 && next(7) == 0 {
                o.drain_start(SimTime(clock));
            }
            let sh = if i % 7 == 6 {
                [0, 1, 2, 3, 4].map(|_| next(5))
            } else {
                shapes[next(4) as usize % 3]
            };
            let s = clock + next(8);
            let c = s + 1 + next(7);
            let e = c + next(1) * (1 + next(7));
            let (cycles, dram) = (sh, [sh[1] / 8, sh[1] / 4, 0, sh[3], 1]);
            o.firmware_work(SimTime(s), SimTime(c), SimTime(e), &cycles, &dram);
            passes.push(WorkSpan {
                s,
                c,
                e,
                cycles,
                dram,
            });
        }
        o.finish(SimTime(clock + next(8)));
        let mut r = PowerObserver::new(&settings, Dur::from_us(50)).unwrap();
        (r.from, r.drain_at, r.end) = (o.from, o.drain_at, o.end);
        for p in passes {
            r.commit_work_cut(p);
        }
        assert_eq!(
            format!("{:?} {:?}", o.all.act, o.drain.act),
            format!("{:?} {:?}", r.all.act, r.drain.act),
            "case {case}"
        );
    }
}

#[test]
fn the_narrow_division_gives_the_wide_ones_quotients() {
    // A fixed stream of lengths and weights (nanoseconds and cycles of
    // every size, zeros among them), and sums past u64.
    let mut x = 0x9E37_79B9_7F4A_7C15u64;
    let mut next = |bits: u32| {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x >> (64 - bits)
    };
    for _ in 0..20_000 {
        let s = next(40);
        let bits = 1 + next(6) as u32 % 40;
        let len = next(bits);
        let mut w = [0u64; 5];
        for v in &mut w {
            let bits = 1 + next(6) as u32;
            *v = if next(2) == 0 { 0 } else { next(bits) };
        }
        assert_eq!(
            proportional_ends(s, s + len, &w),
            proportional_ends_wide(s, s + len, &w),
            "{s} {len} {w:?}"
        );
    }
    let w = [u64::MAX, u64::MAX, 3, 0, 1];
    assert_eq!(
        proportional_ends(7, 107, &w),
        proportional_ends_wide(7, 107, &w)
    );
}

#[test]
fn proportional_parts_tile_the_interval() {
    // Exact shares, an empty activity, a remainder, nothing at all.
    assert_eq!(
        proportional_ends(10, 60, &[1, 0, 3, 1, 0]),
        [20, 20, 50, 60, 60]
    );
    assert_eq!(
        proportional_ends(0, 10, &[0, 1, 1, 1, 0]),
        [0, 3, 6, 10, 10]
    );
    assert_eq!(proportional_ends(5, 9, &[0; 5]), [5; 5]);
    // Weights whose product with the length would overflow u64.
    let big = u64::MAX / 2;
    assert_eq!(
        proportional_ends(0, 1000, &[big, big, 0, 0, 0]),
        [500, 1000, 1000, 1000, 1000]
    );
}

#[test]
fn a_firmware_pass_is_its_three_reports() {
    // Passes in time order (some with no DRAM access, some after an idle
    // gap), link transfers, completions and busy periods, a ramp's end, a
    // drain start, a cut by the time limit and the window end: one
    // `firmware_pass` a pass must count what `cpu_busy`, `dram_access` and
    // `firmware_work` count, to the bit; so must one `command_pass` a pass
    // (each pass here serves the request dispatched with it, which completes
    // after it, inside the busy period reported as `io_active`).
    let settings = ssdsim_host::config::SsdConfig::default()
        .validate()
        .unwrap();
    let mut x = 0x6A09_E667_F3BC_C908u64;
    let mut next = |bits: u32| {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x >> (64 - bits)
    };
    for case in 0..120 {
        let mut one = PowerObserver::new(&settings, Dur::from_us(20)).unwrap();
        let mut three = PowerObserver::new(&settings, Dur::from_us(20)).unwrap();
        let mut cmd = PowerObserver::new(&settings, Dur::from_us(20)).unwrap();
        let (mut clock, mut active_since, mut inflight) = (0u64, 0u64, 0u32);
        let passes = 1 + next(10);
        let ramp_at = if case % 5 == 3 { next(10) } else { u64::MAX };
        let (mut last_s, mut last_done) = (0, 0);
        let (mut cycles, mut dram) = ([0; 5], [0; 5]);
        for i in 0..passes {
            if i == ramp_at {
                // The end of a ramp, perhaps inside the last pass.
                let t = SimTime(clock.saturating_sub(next(5)).max(last_s));
                for o in [&mut one, &mut three, &mut cmd] {
                    o.measure_start(t);
                }
            }
            clock += next(12);
            if inflight == 0 {
                active_since = clock;
            }
            inflight += 1;
            let (ls, le) = (clock, clock + 1 + next(8));
            let s = le + next(6);
            let c = s + 1 + next(9);
            let n = if next(2) == 0 { 0 } else { 1 + next(3) };
            last_s = s;
            // Often the weights of the pass before (the engine's repeats).
            if i == 0 || next(2) == 0 {
                cycles = [next(9), next(9), 0, next(2) * next(9), 0];
                dram = [0, n / 2, 0, 0, n - n / 2];
            }
            let n = dram.iter().sum();
            let e = c + 40 * n;
            for o in [&mut one, &mut three, &mut cmd] {
                o.link_xfer(4096, SimTime(ls), SimTime(le));
            }
            let (s, c, e) = (SimTime(s), SimTime(c), SimTime(e));
            one.firmware_pass(s, c, e, n, &cycles, &dram);
            cmd.command_pass(s, c, e, n, &cycles, &dram);
            three.cpu_busy(s, c);
            if n > 0 {
                three.dram_access(n, c, e);
            }
            three.firmware_work(s, c, e, &cycles, &dram);
            clock = e.0 + next(7);
            if next(1) == 0 || inflight > 8 {
                let done = SimTime(clock);
                last_done = clock;
                for o in [&mut one, &mut three, &mut cmd] {
                    o.request_done(IoOp::Write, 4096, SimTime(ls), done);
                }
                inflight -= 1;
                if inflight == 0 {
                    for o in [&mut one, &mut three, &mut cmd] {
                        o.io_active(SimTime(active_since), done);
                    }
                }
            }
        }
        if case % 3 == 1 {
            // Cut by the time limit, perhaps inside the last pass: the busy
            // period ends at the cut, and so does the window.
            let cut = SimTime(last_s.max(active_since).max(last_done) + next(8));
            for o in [&mut one, &mut three, &mut cmd] {
                if inflight > 0 {
                    o.io_active(SimTime(active_since), cut);
                }
                o.finish(cut);
            }
        } else {
            // The requests in flight complete, then the drain or the end.
            for o in [&mut one, &mut three, &mut cmd] {
                for _ in 0..inflight {
                    o.request_done(IoOp::Write, 4096, SimTime(clock), SimTime(clock));
                }
                if inflight > 0 {
                    o.io_active(SimTime(active_since), SimTime(clock));
                }
            }
            let end = SimTime(clock + next(8));
            for o in [&mut one, &mut three, &mut cmd] {
                if case % 2 == 0 {
                    o.drain_start(SimTime(clock));
                }
                o.finish(end);
            }
        }
        let state = |o: &PowerObserver| {
            format!(
                "{:?} {:?} {:?} {:?}",
                o.all,
                o.drain,
                o.series.buckets(),
                o.cpu_wakeups()
            )
        };
        assert_eq!(state(&one), state(&three), "case {case}");
        assert_eq!(state(&one), state(&cmd), "case {case}: command_pass");
    }
}
