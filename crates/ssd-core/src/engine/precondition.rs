//! Preconditioning: fill or steady state before the measured run.

use super::*;

/// Where preconditioning is, for progress displays
/// ([`Simulation::precondition_with`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum PreconditionProgress {
    /// The sequential fill: `done` of `total` logical pages written.
    Fill {
        /// Logical pages written so far.
        done: u64,
        /// Logical pages of the drive.
        total: u64,
    },
    /// Steady-state round `round` (from 1, of at most `max_rounds`): `done`
    /// of its `round_pages` random page writes; the WAF of the round before.
    Steady {
        /// Steady-state round, from 1.
        round: u32,
        /// The most rounds before giving up (20 drive writes).
        max_rounds: u32,
        /// Random page writes done in this round.
        done: u64,
        /// Random page writes of a round (an eighth of the logical pages).
        round_pages: u64,
        /// Write amplification of the previous round (None in the first).
        last_waf: Option<f64>,
    },
}

/// Result of preconditioning.
#[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize)]
pub struct PreconditionOutcome {
    /// Logical pages written by the sequential fill.
    pub pages_written: u64,
    /// Random page writes of steady-state preconditioning.
    pub random_pages: u64,
    /// Write amplification of the last steady-state round (0 without one).
    pub final_waf: f64,
    /// Whether steady state was reached: the last 5 rounds' WAF within 2% of their mean and
    /// their trend within 1%.
    pub steady: bool,
    /// Wall-clock seconds preconditioning took.
    pub wall_s: f64,
}

impl<F: Ftl, S: RequestSource, Q: IoScheduler, O: Observer, H: Hardware> Simulation<F, S, Q, O, H> {
    /// Apply the FTL's plan functionally (flash state and counts, no timing).
    #[inline]
    pub(super) fn apply_functional(&mut self) -> u64 {
        let mut programs = 0;
        for op in &self.cx.plan.ops {
            let (b, page) = self.flash.split(op.ppn);
            self.flash.apply_at(op, b, page);
            let b = b as usize;
            match op.kind {
                OpKind::Program => {
                    programs += 1;
                    self.fl.blk[b].exec_wp += 1;
                }
                OpKind::Erase => {
                    self.fl.blk[b].plan_epoch += 1;
                    self.fl.blk[b].exec_epoch += 1;
                    self.fl.blk[b].exec_wp = 0;
                }
                OpKind::Read => {}
            }
        }
        self.cx.plan.clear();
        programs
    }

    /// The FTL's random stream of the measured phase (from `sim.seed`).
    pub(super) fn measured_rng(&self) -> SimRng {
        SimRng::from_seed_label(self.settings.config.sim.seed, "ftl")
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
        // The FTL's random choices while preconditioning draw from the
        // preconditioning's seed, and the measured phase's from the run's
        // own (`Simulation::measured_rng`): the drive depends on
        // `sim.precondition_seed` alone.
        let pseed = self.settings.config.sim.precondition_seed();
        self.cx.rng = SimRng::from_seed_label(pseed, "ftl-precondition");
        let lp = self.ftl.logical_pages();
        let chunk = 64u64;
        // The ranges the fill writes in order: the logical space, or on a
        // zoned namespace each zone to its capacity (its write pointer
        // moving through it), which leaves every zone full.
        let ranges: Vec<(u64, u64)> = match self.ftl.zone_pages() {
            None => vec![(0, lp)],
            Some(_) => self
                .ftl
                .report_zones()
                .iter()
                .map(|z| (z.start, z.start + z.capacity))
                .collect(),
        };
        let total: u64 = ranges.iter().map(|(a, b)| b - a).sum();
        let mut done = 0;
        for (start, end) in ranges {
            let mut lpn = start;
            while lpn < end {
                let n = chunk.min(end - lpn) as u32;
                self.cx.plan.clear();
                self.ftl.write(Lpn(lpn), n, &mut self.cx);
                self.apply_functional();
                lpn += n as u64;
                done += n as u64;
                if done % EVERY < chunk || done == total {
                    progress(PreconditionProgress::Fill { done, total });
                }
            }
        }
        out.pages_written = total;
        if mode == Precondition::Steady {
            // SNIA PTS-style steady state: rounds of lp/8 random page writes; steady when
            // the last 5 rounds' WAF lie within 2% of their mean (data excursion) and
            // the least-squares slope over the window is within 1% of the mean.
            let mut rng = SimRng::from_seed_label(pseed, "precondition");
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
                *self.stats.note("precondition_steady_state_not_reached") = 1;
            }
        }
        self.cx.work = FtlWork::default();
        self.cx.rng = self.measured_rng();
        self.stats.ftl_before = self.ftl.stats();
        self.ftl.measure_start();
        out.wall_s = started.elapsed().as_secs_f64();
        self.stats.pre = out.clone();
        out
    }

    // -------------------------------------------------------- main loop
}
