//! Read retry (`[nand.retry]`, [`ReadRetry`]): extra sensing steps that
//! grow with wear and retention age.

use super::*;

/// `[nand.retry]`: read retry. A read whose first sensing fails ECC is
/// sensed again with shifted read reference voltages, step by step through
/// the chip's retry table, until it decodes. The expected number of extra
/// steps grows with wear and with retention age (Cai et al., "Error patterns
/// in MLC NAND flash memory", DATE 2012, and "Data retention in MLC NAND
/// flash memory", HPCA 2015: the raw bit error rate rises with P/E cycles,
/// and with retention time roughly in its logarithm). The model is that
/// first-order form:
///
/// `mu = base_steps + steps_per_kpe * (pe + pe_offset) / 1000
///       + steps_per_decade * log10(1 + age / 1 h)`
///
/// where `pe` is the block's erase count and `age` the time since the run
/// first programmed the block after its last erase, or, for data written
/// before the run (preconditioning included), `data_age` plus the time
/// since the run began. A read takes `k = floor(mu)` steps, plus
/// one with probability `mu - floor(mu)` (so the mean is `mu` exactly), at
/// most `max_steps`; each step is another sensing at the page type's read
/// time plus `t_step` (the SET FEATURE that shifts the levels and the ECC
/// decode of the failed attempt): `busy = t_r * (1 + k) + t_step * k`. The
/// defaults of the presets that use it are illustrative, not a chip's.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RetryConfig {
    /// Entries of the chip's retry table: a read gives up (and decodes with
    /// the last) after this many extra steps.
    pub max_steps: u32,
    /// Extra time of each step besides its sensing.
    pub t_step: Dur,
    /// Expected extra steps of a fresh block's read (default 0).
    #[serde(default)]
    pub base_steps: f64,
    /// Expected extra steps per 1000 P/E cycles.
    #[serde(default)]
    pub steps_per_kpe: f64,
    /// Expected extra steps per decade of retention age in hours.
    #[serde(default)]
    pub steps_per_decade: f64,
    /// P/E cycles every block had before the run (the drive's age).
    #[serde(default)]
    pub pe_offset: u32,
    /// Retention age, at time 0, of the data written before the run.
    #[serde(default)]
    pub data_age: Dur,
}

impl RetryConfig {
    /// Check the table: the step rates finite and not negative, `max_steps` at most 255; an
    /// error names the field.
    pub fn check(&self) -> Result<(), ConfigError> {
        for (f, v) in [
            ("nand.retry.base_steps", self.base_steps),
            ("nand.retry.steps_per_kpe", self.steps_per_kpe),
            ("nand.retry.steps_per_decade", self.steps_per_decade),
        ] {
            if !v.is_finite() || v < 0.0 {
                return Err(invalid(f, format!("must be a finite number >= 0, got {v}")));
            }
        }
        if self.max_steps > 255 {
            return Err(invalid(
                "nand.retry.max_steps",
                format!("at most 255 steps, got {}", self.max_steps),
            ));
        }
        Ok(())
    }

    /// The expected extra steps of a read of a block with `pe` erases (the
    /// offset not included) whose data is `age` old (before `max_steps`).
    pub fn mean_steps(&self, pe: u32, age: Dur) -> f64 {
        let hours = age.0 as f64 / 3.6e12;
        self.base_steps
            + self.steps_per_kpe * (pe as f64 + self.pe_offset as f64) / 1000.0
            + self.steps_per_decade * (1.0 + hours).log10()
    }
}

/// Not programmed in the run since its last erase (see `ReadRetry::born`).
const UNWRITTEN: u64 = u64::MAX;

/// Read retry over any model `N` (see [`RetryConfig`]).
#[derive(Clone, Debug)]
pub struct ReadRetry<N: Nand> {
    inner: N,
    cfg: RetryConfig,
    rng: SimRng,
    /// Per flat block: when the run first programmed it since its last
    /// erase, on the age clock (simulated time + `data_age`); `UNWRITTEN`
    /// if it has not, so its data (if any) is from before the run: age clock
    /// 0. A block's age is its oldest data's (the conservative choice for a
    /// block the run fills over time).
    born: Vec<u64>,
    /// Array reads (a multi-plane read is one) and the extra steps they took.
    pub reads: u64,
    /// Extra read steps taken in all.
    pub steps: u64,
}

impl<N: Nand> ReadRetry<N> {
    /// Read retry over `inner` for `blocks` flat blocks, its draws seeded from `seed`.
    pub fn new(inner: N, cfg: RetryConfig, blocks: usize, seed: u64) -> ReadRetry<N> {
        ReadRetry {
            inner,
            rng: SimRng::from_seed_label(seed, "nand.retry"),
            born: vec![UNWRITTEN; blocks],
            cfg,
            reads: 0,
            steps: 0,
        }
    }

    #[inline]
    fn clock(&self, now: SimTime) -> u64 {
        now.0.saturating_add(self.cfg.data_age.0)
    }

    /// The extra steps of one read of `block`.
    fn draw(&mut self, block: u32, cx: &NandCtx<'_>) -> u32 {
        let b = block as usize;
        let pe = cx.erase_counts.get(b).copied().unwrap_or(0);
        // Not programmed in the run since its last erase: its data is from
        // before the run (preconditioning), born at 0 on the age clock.
        let born = match self.born.get(b).copied().unwrap_or(UNWRITTEN) {
            UNWRITTEN => 0,
            t => t,
        };
        let age = Dur(self.clock(cx.now).saturating_sub(born));
        let mu = self.cfg.mean_steps(pe, age);
        let whole = mu.floor();
        let mut k = whole as u64;
        if self.rng.gen::<f64>() < mu - whole {
            k += 1;
        }
        k.min(self.cfg.max_steps as u64) as u32
    }
}

impl<N: Nand> Nand for ReadRetry<N> {
    fn name(&self) -> &'static str {
        "read-retry"
    }
    #[inline]
    fn array_time(&mut self, op: &ArrayOp, cx: &NandCtx<'_>) -> Dur {
        let t = self.inner.array_time(op, cx);
        if op.kind != OpKind::Read {
            return t;
        }
        let k = self.draw(op.block, cx) as u64;
        self.reads += 1;
        self.steps += k;
        Dur(t.0 * (1 + k) + self.cfg.t_step.0 * k)
    }
    fn tracks_blocks(&self) -> bool {
        true
    }
    fn programmed(&mut self, block: u32, now: SimTime) {
        let c = self.clock(now);
        if let Some(b) = self.born.get_mut(block as usize) {
            if *b == UNWRITTEN {
                *b = c;
            }
        }
        self.inner.programmed(block, now);
    }
    fn erased(&mut self, block: u32, now: SimTime) {
        if let Some(b) = self.born.get_mut(block as usize) {
            *b = UNWRITTEN;
        }
        self.inner.erased(block, now);
    }
    fn report(&self) -> Option<serde_json::Value> {
        let mean = if self.reads == 0 {
            0.0
        } else {
            self.steps as f64 / self.reads as f64
        };
        Some(serde_json::json!({
            "model": format!("read-retry over {}", self.inner.name()),
            "array_reads": self.reads,
            "retry_steps": self.steps,
            "mean_retry_steps": mean,
        }))
    }
    fn restart_stats(&mut self) {
        self.reads = 0;
        self.steps = 0;
        self.inner.restart_stats();
    }
}
