//! MLC/TLC/QLC parts with a read and program latency per page type
//! (`[nand.page_types]`, [`PageTypeNand`]).

use super::*;

/// How a multi-bit cell's pages are programmed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ProgramScheme {
    /// Each page of a word line is programmed on its own, in passes (2D MLC
    /// and TLC): a page's program time is its type's (`t_prog[type]`).
    #[default]
    MultiPass,
    /// A word line's pages are loaded into the page latches one by one
    /// (`t_load` each) and programmed together when its last page arrives
    /// (`t_prog[0]`, the word line's program): 3D TLC and QLC.
    OneShot,
}

/// Which page type each page offset of a block has.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PageMap {
    /// Page `p` is type `p % bits` (a word line's pages are consecutive:
    /// one-shot 3D NAND).
    #[default]
    Wordline,
    /// The 2D shared-word-line program order of SimpleSSD's `LatencyMLC` /
    /// `LatencyTLC` (`GetPageType`): MLC `p % 2`; TLC pages 0-5 LSB, 6-7
    /// CSB, then `((p - 8) >> 1) % 3`.
    SharedWl,
}

/// `[nand.page_types]`: latencies per page type, LSB first (2 types for MLC,
/// 3 for TLC, 4 for QLC). With it, `nand.t_r` and `nand.t_prog` must be the
/// mean over a block's pages (what tools that know one latency per
/// operation read); the per-type values are what the simulation uses.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PageTypeConfig {
    /// Array read time of each page type.
    pub t_r: Vec<Dur>,
    /// Multi-pass: program time of each page type. One-shot: one value, the
    /// word line's program time.
    pub t_prog: Vec<Dur>,
    /// How a word line's pages are programmed (default multi-pass).
    #[serde(default)]
    pub program: ProgramScheme,
    /// One-shot: array busy time of loading a page that is not its word
    /// line's last into the latches (tCBSY-like).
    #[serde(default)]
    pub t_load: Dur,
    /// Which page type each page offset has (default wordline).
    #[serde(default)]
    pub map: PageMap,
}

impl PageTypeConfig {
    /// Page types per word line (bits per cell).
    pub fn bits(&self) -> usize {
        self.t_r.len()
    }

    /// Mean read and program time over a block's pages.
    pub fn means(&self, pages_per_block: u32) -> (Dur, Dur) {
        let m = PageTypeNand::new(self, Dur::ZERO);
        let (mut r, mut p) = (0u128, 0u128);
        for pg in 0..pages_per_block {
            let t = m.page_type(pg as u16);
            r += m.t_r[t].0 as u128;
            p += m.prog_time(t).0 as u128;
        }
        let n = pages_per_block.max(1) as u128;
        (Dur((r / n) as u64), Dur((p / n) as u64))
    }

    /// Check against the chip it describes; errors name the field.
    pub fn check(&self, n: &NandConfig) -> Result<(), ConfigError> {
        let bits = self.bits();
        if !(2..=4).contains(&bits) {
            return Err(invalid(
                "nand.page_types.t_r",
                format!("give one read time per page type, 2 (MLC) to 4 (QLC); got {bits}"),
            ));
        }
        if self.t_r.iter().any(|t| t.0 == 0) {
            return Err(invalid("nand.page_types.t_r", "must be positive"));
        }
        let want = match self.program {
            ProgramScheme::MultiPass => bits,
            ProgramScheme::OneShot => 1,
        };
        if self.t_prog.len() != want {
            return Err(invalid(
                "nand.page_types.t_prog",
                match self.program {
                    ProgramScheme::MultiPass => format!(
                        "multi-pass programming takes one program time per page type ({bits}), got {}",
                        self.t_prog.len()
                    ),
                    ProgramScheme::OneShot => format!(
                        "one-shot programming takes one program time, the word line's; got {}",
                        self.t_prog.len()
                    ),
                },
            ));
        }
        if self.t_prog.iter().any(|t| t.0 == 0) {
            return Err(invalid("nand.page_types.t_prog", "must be positive"));
        }
        if self.program == ProgramScheme::MultiPass && self.t_load.0 != 0 {
            return Err(invalid(
                "nand.page_types.t_load",
                "only one-shot programming loads pages (program = \"one-shot\")",
            ));
        }
        if self.map == PageMap::SharedWl && bits == 4 {
            return Err(invalid(
                "nand.page_types.map",
                "shared-wl is defined for MLC and TLC; QLC takes `wordline`",
            ));
        }
        if !n.pages_per_block.is_multiple_of(bits as u32) {
            return Err(invalid(
                "nand.pages_per_block",
                format!(
                    "{} is not a whole number of {bits}-page word lines (nand.page_types)",
                    n.pages_per_block
                ),
            ));
        }
        let (r, p) = self.means(n.pages_per_block);
        for (field, scalar, mean) in [("nand.t_r", n.t_r, r), ("nand.t_prog", n.t_prog, p)] {
            if scalar.0.abs_diff(mean.0) > 1 {
                return Err(invalid(
                    field,
                    format!(
                        "{scalar} is not the mean over a block's pages of nand.page_types ({mean}); \
                         set it to {mean} (it is what tools that know one latency per operation read)"
                    ),
                ));
            }
        }
        Ok(())
    }
}

/// Read and program latency per page type (see [`PageTypeConfig`]).
#[derive(Clone, Debug)]
pub struct PageTypeNand {
    t_r: Vec<Dur>,
    t_prog: Vec<Dur>,
    t_load: Dur,
    t_bers: Dur,
    one_shot: bool,
    map: PageMap,
    bits: u16,
}

impl PageTypeNand {
    /// The model of `c`, with block erase time `t_bers`.
    pub fn new(c: &PageTypeConfig, t_bers: Dur) -> PageTypeNand {
        PageTypeNand {
            t_r: c.t_r.clone(),
            t_prog: c.t_prog.clone(),
            t_load: c.t_load,
            t_bers,
            one_shot: c.program == ProgramScheme::OneShot,
            map: c.map,
            bits: c.bits() as u16,
        }
    }

    /// The type (0 = LSB) of page `pg` of a block.
    #[inline]
    pub fn page_type(&self, pg: u16) -> usize {
        match (self.map, self.bits) {
            (PageMap::SharedWl, 3) => match pg {
                0..=5 => 0,
                6..=7 => 1,
                _ => (((pg - 8) >> 1) % 3) as usize,
            },
            _ => (pg % self.bits) as usize,
        }
    }

    #[inline]
    fn prog_time(&self, t: usize) -> Dur {
        if !self.one_shot {
            self.t_prog[t]
        } else if t + 1 == self.bits as usize {
            self.t_prog[0]
        } else {
            self.t_load
        }
    }
}

impl Nand for PageTypeNand {
    fn name(&self) -> &'static str {
        "page-type"
    }
    #[inline]
    fn array_time(&mut self, op: &ArrayOp, _cx: &NandCtx<'_>) -> Dur {
        match op.kind {
            OpKind::Read => self.t_r[self.page_type(op.page)],
            OpKind::Program => self.prog_time(self.page_type(op.page)),
            OpKind::Erase => self.t_bers,
        }
    }
}
