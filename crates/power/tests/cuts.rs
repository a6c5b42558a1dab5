//! Die activities against a direct reference: every activity clipped to the
//! window and split at the drain start by hand, charged at its rate, spread
//! evenly over the series buckets. Checks the observer's count-at-once lanes and
//! their corrections at the cut points (drain start, window end), command
//! transfers charged as the operation that follows, per-operation energies cut
//! in parts, and activities that overlap their die's next one.

use power::series::{BUS, FLASH};
use power::PowerObserver;
use ssd_core::addr::{ChannelId, DieId};
use ssd_core::ftl::{OpKind, Purpose};
use ssd_core::observer::{Observer, XferKind};
use ssd_core::units::{Amps, Dur, SimTime};
use ssdsim_host::config::{PowerConfig, Settings, SsdConfig};

#[derive(Clone, Copy, Debug)]
enum Act {
    Xfer(XferKind),
    Op(OpKind, u32),
}

#[derive(Clone, Copy, Debug)]
struct Rep {
    die: u32,
    act: Act,
    purpose: Purpose,
    s: u64,
    e: u64,
}

/// Per-die sequences of batches (read: command, tR, data out; program: data
/// in, tPROG; erase: command, tBERS; or a lone command), merged in start order.
fn reports(spec: &[(u8, u8, u64, u64, u64, bool)], dies: u32) -> Vec<Rep> {
    let mut clock = vec![0u64; dies as usize];
    let mut out = Vec::new();
    for (i, &(die, kind, gap, x, t, overlap)) in spec.iter().enumerate() {
        let die = die as u32 % dies;
        let c = &mut clock[die as usize];
        let purpose = [Purpose::Host, Purpose::Gc, Purpose::Translation][i % 3];
        let mut s = *c + gap;
        let mut push = |act, len: u64, s: &mut u64| {
            out.push(Rep {
                die,
                act,
                purpose,
                s: *s,
                e: *s + len,
            });
            *s += len;
        };
        match kind % 4 {
            0 => {
                push(Act::Xfer(XferKind::Command), x / 8, &mut s);
                push(Act::Op(OpKind::Read, 1 + (t % 2) as u32), t, &mut s);
                if overlap {
                    // Data out starts before the array read ends (a die in
                    // two states at once: the engine never does this).
                    s -= t / 2;
                }
                push(Act::Xfer(XferKind::DataOut), x, &mut s);
            }
            1 => {
                push(Act::Xfer(XferKind::DataIn), x, &mut s);
                push(Act::Op(OpKind::Program, 1 + (t % 3) as u32), 2 * t, &mut s);
            }
            2 => {
                push(Act::Xfer(XferKind::Command), x / 8, &mut s);
                push(Act::Op(OpKind::Erase, 1), 5 * t, &mut s);
            }
            _ => push(Act::Xfer(XferKind::Command), x / 8, &mut s),
        }
        *c = s.max(*c);
    }
    // Reported at their start (the engine clock); a die's own in order.
    out.sort_by_key(|r| r.s);
    out
}

struct Reference {
    window: u64,
    drain: Option<u64>,
    interval: u64,
    /// State ns (read, program, erase, transfer), all and drain.
    ns: [u64; 4],
    drain_ns: [u64; 4],
    /// Energy by state, all and drain.
    j: [f64; 4],
    drain_j: [f64; 4],
    /// Series energy above the baselines, flash and bus, per bucket.
    flash: Vec<f64>,
    bus: Vec<f64>,
}

impl Reference {
    fn spread(v: &mut Vec<f64>, interval: u64, s: u64, e: u64, j: f64) {
        let mut t = s;
        while t < e {
            let i = (t / interval) as usize;
            let u = e.min((i as u64 + 1) * interval);
            if v.len() <= i {
                v.resize(i + 1, 0.0);
            }
            v[i] += j * (u - t) as f64 / (e - s) as f64;
            t = u;
        }
    }

    fn charge(&mut self, p: &PowerConfig, r: &Rep, served: OpKind, s: u64, e: u64) {
        let v = p.voltage.0;
        let ns = e - s;
        let full = r.e - r.s;
        let per_op = [
            p.flash_read_energy,
            p.flash_program_energy,
            p.flash_erase_energy,
        ];
        let current = [
            p.flash_read_current,
            p.flash_program_current,
            p.flash_erase_current,
        ];
        let (slot, j, xfer) = match r.act {
            Act::Op(k, planes) => {
                let i = k as usize;
                let j = match per_op[i] {
                    Some(e_op) => e_op.0 * planes as f64 * ns as f64 / full as f64,
                    None => current[i].0 * v * planes as f64 * ns as f64 * 1e-9,
                };
                (i, j, false)
            }
            Act::Xfer(_) => {
                let i = served as usize;
                let w = match per_op[i] {
                    Some(_) => 0.0,
                    None => p.flash_transfer_current.unwrap_or(current[i]).0 * v,
                };
                (3, w * ns as f64 * 1e-9, true)
            }
        };
        let in_drain = self.drain.is_some_and(|c| s >= c);
        self.ns[slot] += ns;
        self.j[slot] += j;
        if in_drain {
            self.drain_ns[slot] += ns;
            self.drain_j[slot] += j;
        }
        let idle = p.flash_idle_current.0 * v * ns as f64 * 1e-9;
        Self::spread(&mut self.flash, self.interval, s, e, j - idle);
        if xfer {
            let bus = p.flash_bus_current.0 * v * ns as f64 * 1e-9;
            Self::spread(&mut self.bus, self.interval, s, e, bus);
        }
    }

    fn new(p: &PowerConfig, reps: &[Rep], window: u64, drain: Option<u64>, iv: u64) -> Self {
        let mut r = Reference {
            window,
            drain,
            interval: iv,
            ns: [0; 4],
            drain_ns: [0; 4],
            j: [0.0; 4],
            drain_j: [0.0; 4],
            flash: Vec::new(),
            bus: Vec::new(),
        };
        for (i, rep) in reps.iter().enumerate() {
            // A command draws as the op its die reports next, if it does.
            let served = match rep.act {
                Act::Xfer(XferKind::Command) => {
                    match reps[i + 1..].iter().find(|n| n.die == rep.die) {
                        Some(Rep {
                            act: Act::Op(k, _), ..
                        }) => *k,
                        _ => OpKind::Read,
                    }
                }
                Act::Xfer(XferKind::DataIn) => OpKind::Program,
                _ => OpKind::Read,
            };
            let e = rep.e.min(r.window);
            let s = rep.s.min(e);
            let cut = r.drain.filter(|&c| c > s && c < e);
            for (a, b) in match cut {
                Some(c) => vec![(s, c), (c, e)],
                None => vec![(s, e)],
            } {
                if b > a {
                    r.charge(p, rep, served, a, b);
                }
            }
        }
        r
    }
}

fn close(a: f64, b: f64, scale: f64) -> bool {
    (a - b).abs() <= 1e-9 * scale.max(1e-300)
}

fn check(settings: &Settings, spec: &[(u8, u8, u64, u64, u64, bool)], cuts: (u64, u64, bool)) {
    let p = &settings.config.power;
    let dies = settings.geometry.total_dies();
    let reps = reports(spec, dies);
    let iv = 1_000;
    let mut o = PowerObserver::with_sample_cap(settings, Dur(iv), 1 << 16).unwrap();
    let max_start = reps.iter().map(|r| r.s).max().unwrap_or(0);
    let max_end = reps.iter().map(|r| r.e).max().unwrap_or(0);
    let (c_at, w_at, drain) = cuts;
    // The engine announces a cut at or after its clock.
    let c = c_at % (max_end + 1);
    let mut drained = false;
    for r in &reps {
        if drain && !drained && r.s > c {
            o.drain_start(SimTime(c));
            drained = true;
        }
        let (s, e) = (SimTime(r.s), SimTime(r.e));
        let d = DieId(r.die);
        match r.act {
            Act::Xfer(k) => o.bus_xfer(ChannelId(0), d, k, r.purpose, 0, s, e),
            Act::Op(k, n) => o.flash_op(d, k, r.purpose, n, s, e),
        }
    }
    let c = if drain && !drained {
        let c = c.max(max_start);
        o.drain_start(SimTime(c));
        Some(c)
    } else {
        drain.then_some(c)
    };
    let w = max_start.max(c.unwrap_or(0)) + w_at % (max_end + 2);
    o.finish(SimTime(w));
    let window = if c.is_some() { w.max(max_end) } else { w };
    assert_eq!(o.window_ns(), Some(window));
    let want = Reference::new(p, &reps, window, c, iv);

    let e = o.energy().unwrap();
    let st = &e.state_s.flash;
    let got_ns = [st.read, st.program, st.erase, st.transfer].map(|x| (x * 1e9).round() as u64);
    assert_eq!(got_ns, want.ns, "state ns");
    let f = &e.flash;
    let got_j = [f.read, f.program, f.erase, f.transfer];
    let scale = want.j.iter().sum::<f64>();
    for (k, (&g, &w)) in got_j.iter().zip(&want.j).enumerate() {
        assert!(close(g, w, scale), "state {k}: {g} vs {w}");
    }
    if let Some(c) = c {
        let busy: u64 = want.drain_ns.iter().sum();
        let wd = window - c;
        let idle = p.flash_idle_current.0 * p.voltage.0 * (dies as u64 * wd - busy) as f64 * 1e-9;
        let want_f = want.drain_j.iter().sum::<f64>() + idle;
        assert!(
            close(e.drain.flash, want_f, scale + idle),
            "drain flash {} vs {want_f}",
            e.drain.flash
        );
    }
    // The series, bucket by bucket (baselines added back).
    let base_flash = dies as f64 * p.flash_idle_current.0 * p.voltage.0 * 1e-9;
    let smp = o.samples();
    assert_eq!(smp.len() as u64, window.div_ceil(iv));
    let scale = want.flash.iter().map(|x| x.abs()).fold(0.0, f64::max) + base_flash * iv as f64;
    for (i, x) in smp.iter().enumerate() {
        let len = ((i as u64 + 1) * iv).min(window) - i as u64 * iv;
        let wf = want.flash.get(i).copied().unwrap_or(0.0) + base_flash * len as f64;
        let wb = want.bus.get(i).copied().unwrap_or(0.0);
        let gf = x.component_w[FLASH] * x.len_s;
        let gb = x.component_w[BUS] * x.len_s;
        assert!(close(gf, wf, scale), "bucket {i} flash: {gf} vs {wf}");
        assert!(close(gb, wb, scale), "bucket {i} bus: {gb} vs {wb}");
    }
}

fn settings(which: u8) -> Settings {
    match which % 4 {
        0 => SsdConfig::default(),
        1 => SsdConfig::with_nand("park-slc").unwrap(),
        2 => {
            let mut c = SsdConfig::with_nand("mlc-mqsim").unwrap();
            c.power = PowerConfig::modern_tlc();
            c
        }
        _ => {
            // Distinct currents, transfers at the current of the op they serve.
            let mut c = SsdConfig::default();
            c.power.flash_program_current = Amps(0.021);
            c.power.flash_erase_current = Amps(0.033);
            c.power.flash_transfer_current = None;
            c.power.flash_bus_current = Amps(0.005);
            c
        }
    }
    .validate()
    .unwrap()
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(
        std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(64)
    ))]
    #[test]
    fn die_activities_match_the_reference(
        spec in proptest::collection::vec(
            (0u8..4, 0u8..4, 0u64..3_000, 1u64..2_000, 1u64..3_000,
             proptest::bool::weighted(0.05)),
            0..120),
        which in 0u8..4,
        c_at in 0u64..1_000_000,
        w_at in 0u64..1_000_000,
        drain in proptest::bool::ANY,
    ) {
        check(&settings(which), &spec, (c_at, w_at, drain));
    }
}

/// A few fixed cases: a cut inside a long erase, a window end inside a
/// multi-plane program, a lone command at the end.
#[test]
fn fixed_cases() {
    let spec = [
        (0, 2, 100, 800, 2_900, false),
        (1, 1, 0, 1_500, 2_000, false),
        (2, 0, 300, 900, 700, true),
        (3, 3, 50, 1_000, 10, false),
        (0, 0, 0, 1_200, 1_700, false),
    ];
    for which in 0..4 {
        for drain in [false, true] {
            for c in [0, 999, 1_000, 4_321, 9_000] {
                for w in [0, 1, 777, 5_000] {
                    check(&settings(which), &spec, (c, w, drain));
                }
            }
        }
    }
}
