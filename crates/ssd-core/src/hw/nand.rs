//! The NAND array model: how long an array operation keeps a die busy.
//!
//! # Contract
//! The engine calls [`Nand::array_time`] once per batch (one operation on one
//! page offset of one or more planes of a die), when the batch's command and
//! data-in transfer end and its array phase begins; the die is busy for the
//! returned time, and the observer is told of the operation over exactly that
//! interval (so a state-current power model charges it in full). A model that
//! wants to know which blocks a program batch wrote, or which block an erase
//! cleared, says so with [`Nand::tracks_blocks`] and gets
//! [`Nand::programmed`] / [`Nand::erased`] for every block of the batch
//! first.
//!
//! A part's cache register ([`Nand::cache_ops`]: ONFI cache read and cache
//! program) lets the engine overlap a die's next operation with the
//! transfer of the one before ([`CacheConfig`]), and a model that knows its
//! part's supply currents gives them with [`Nand::currents`] (the power
//! model then draws them instead of `[power]`'s). Both are asked once,
//! when the simulation is built.
//!
//! The built-in models:
//! * [`FixedNand`]: one tR, tPROG and tBERS (`nand.t_r`, `nand.t_prog`,
//!   `nand.t_bers`), whatever the page.
//! * [`PageTypeNand`]: MLC/TLC/QLC with a read and program latency per page
//!   type (LSB, CSB, MSB, TSB), multi-pass or one-shot programming
//!   (`[nand.page_types]`).
//! * [`ReadRetry`]: wraps any model; a read takes extra sensing steps whose
//!   number grows with the block's P/E cycles and its data's retention age
//!   (`[nand.retry]`).
//!
//! [`AnyNand`] closes them over an enum for run-time choice.

use crate::config::{NandConfig, PowerConfig, Settings};
use crate::error::{invalid, ConfigError};
use crate::ftl::{OpKind, Purpose};
use crate::rng::{SimRng, SimRngExt};
use crate::units::{Amps, Dur, SimTime};
use rand::Rng;
use serde::{Deserialize, Serialize};

/// One array operation: a batch of `planes` operations of one kind on one
/// page offset of a die.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ArrayOp {
    /// Read, program or erase.
    pub kind: OpKind,
    /// Why the operation happens.
    pub purpose: Purpose,
    /// The flat die index.
    pub die: u32,
    /// The flat block of the batch's first operation (`BlockId`'s index).
    pub block: u32,
    /// Read or program: the page in the block (the first operation's, if
    /// the multi-plane rule lets partners be at other offsets). Erase: 0.
    pub page: u16,
    /// Planes the batch runs on (1 without multi-plane operation).
    pub planes: u8,
}

/// What the engine knows that a model may read.
pub struct NandCtx<'a> {
    /// When the array operation starts.
    pub now: SimTime,
    /// Erases each flat block has had (the functional state: it counts the
    /// erases the FTL has planned, including ones still queued).
    pub erase_counts: &'a [u32],
}

/// A NAND array timing model. See the module docs for the contract.
pub trait Nand {
    /// Short name (reports, errors).
    fn name(&self) -> &'static str;
    /// How long the array operation `op`, starting at `cx.now`, keeps its die
    /// busy. Called once per batch, in event order.
    fn array_time(&mut self, op: &ArrayOp, cx: &NandCtx<'_>) -> Dur;
    /// Whether the model wants [`Nand::programmed`] and [`Nand::erased`]
    /// (the engine then walks the batch's blocks; others pay nothing).
    #[inline]
    fn tracks_blocks(&self) -> bool {
        false
    }
    /// Block `block` is programmed at `now` (each block of a program batch,
    /// before `array_time`).
    #[inline]
    fn programmed(&mut self, _block: u32, _now: SimTime) {}
    /// Block `block` is erased at `now` (each block of an erase batch, before
    /// `array_time`).
    #[inline]
    fn erased(&mut self, _block: u32, _now: SimTime) {}
    /// `Some([tR, tPROG, tBERS])` if the model's answer depends on the
    /// operation's kind alone, and it keeps no state: the engine then reads
    /// the time from the table on its hot path and never calls the model.
    #[inline]
    fn fixed_times(&self) -> Option<[Dur; 3]> {
        None
    }
    /// The model's statistics for the report (`hardware.nand`), if it keeps
    /// any.
    fn report(&self) -> Option<serde_json::Value> {
        None
    }
    /// Start the statistics again (the measured phase begins).
    fn restart_stats(&mut self) {}
    /// Whether the part ever suspends a program or erase for reads (the
    /// engine then asks [`Nand::suspend`] when a read arrives at a busy die;
    /// otherwise it never does).
    #[inline]
    fn can_suspend(&self) -> bool {
        false
    }
    /// A read arrives at a die whose `running` program or erase has
    /// `remaining` to go and has been suspended `times` times already:
    /// suspend it, and at what cost? The engine then reports the operation's
    /// first piece up to the suspension's end, serves the die's reads and
    /// resumes it (`resume` + `remaining`) when none is left.
    fn suspend(&self, _running: OpKind, _remaining: Dur, _times: u32) -> Option<SuspendCost> {
        None
    }
    /// Which queued operations may join a multi-plane batch, and what each
    /// plane beyond the first adds to the array time (asked once, when the
    /// simulation is built; `nand.multiplane` still turns multi-plane
    /// operation on or off).
    #[inline]
    fn multiplane(&self) -> MultiplaneRule {
        MultiplaneRule::ANY_PLANES
    }
    /// What the part's cache register allows: cache program (the next
    /// page's data-in overlaps the running program) and cache read (the
    /// next read's sensing overlaps the previous page's data-out), with
    /// their register busy times (asked once, when the simulation is
    /// built; see [`CacheOps`]). Default: neither.
    #[inline]
    fn cache_ops(&self) -> CacheOps {
        CacheOps::NONE
    }
    /// The part's own supply currents per die state, if it has them; the
    /// power model then draws these instead of `[power]`'s
    /// `flash_*_current` (asked once, when the simulation is built, and
    /// handed to the observer: [`crate::observer::Observer::nand_currents`]).
    /// Default: none, the power configuration's.
    #[inline]
    fn currents(&self) -> Option<NandCurrents> {
        None
    }
}

/// A NAND die's supply current in each of its states, amperes (at the
/// power configuration's `voltage`): what a [`Nand`] model that knows its
/// part's datasheet gives the power model ([`Nand::currents`]). Under the
/// per-operation energy form (`power.flash_*_energy`) the energies still
/// decide what an operation of that kind costs.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct NandCurrents {
    /// During an array read (ICC1).
    pub read: Amps,
    /// During a program (ICC2).
    pub program: Amps,
    /// During an erase (ICC3).
    pub erase: Amps,
    /// Standby (ISB), whenever the die does nothing.
    pub idle: Amps,
    /// While the die's command or data is clocked over the channel (ICCQ
    /// or the I/O current); `None`: the current of the operation the
    /// transfer serves.
    pub io: Option<Amps>,
}

impl NandCurrents {
    /// The currents `[power]` gives (`flash_read_current`,
    /// `flash_program_current`, `flash_erase_current`,
    /// `flash_idle_current`, `flash_transfer_current`): what the power
    /// model draws for a model without currents of its own.
    pub fn from_power(p: &PowerConfig) -> NandCurrents {
        NandCurrents {
            read: p.flash_read_current,
            program: p.flash_program_current,
            erase: p.flash_erase_current,
            idle: p.flash_idle_current,
            io: p.flash_transfer_current,
        }
    }
}

/// What a part's cache register allows (ONFI 4.x "Read Cache Random",
/// 00h-address-31h, and "Page Program Cache", 80h-data-15h): see
/// [`CacheConfig`] for the timing the engine gives them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CacheOps {
    /// Cache read: a read's page moves from the page register to the cache
    /// register (`t_dcbsyr`), and the die may sense its next read while
    /// that page is clocked out.
    pub read: bool,
    /// Cache program: the next program's data-in goes to the cache
    /// register while the die programs; it moves to the page register
    /// (`t_cbsy`) when the program ends.
    pub program: bool,
    /// Busy time of the page-to-cache register copy of a cache read (ONFI
    /// tDCBSYR, Micron's tRCBSY).
    pub t_dcbsyr: Dur,
    /// Busy time of the cache-to-page register copy before a cached
    /// program (ONFI and Micron tCBSY, its typical value).
    pub t_cbsy: Dur,
}

impl CacheOps {
    /// No cache commands: every operation waits for the one before it.
    pub const NONE: CacheOps = CacheOps {
        read: false,
        program: false,
        t_dcbsyr: Dur::ZERO,
        t_cbsy: Dur::ZERO,
    };

    /// Either command is on.
    #[inline]
    pub fn any(&self) -> bool {
        self.read || self.program
    }
}

/// `[nand.cache]`: the part's cache commands (default off). With `program
/// = true` a die that starts a program batch takes its next queued program
/// batch (if no read is waiting) into its cache register: that batch's
/// command and data-in cross the channel while the first programs, and it
/// starts `t_cbsy` after the later of the first's end and its own data-in's
/// end. With `read = true` a read whose die has another read queued after
/// it (a controller issues the cache command only with the next read at
/// hand) is followed by `t_dcbsyr` (the page moves to the cache register)
/// as soon as the cache register is free; the die is then free for its
/// next read (its command, then its sensing) while the page is clocked out.
/// A read with no read after it and the register empty is a plain one.
/// While the cache register holds a read's page the die starts only reads;
/// a program waits for the register to empty. The register copies are die
/// busy time (latency,
/// utilization) at the die's idle current: the operation's current covers
/// its sensing or programming only, so the energy of an operation is the
/// same with or without the cache. Not with `[nand.suspend]`.
///
/// Defaults of the busy times: 3 us each, an assumed typical value: SLC
/// NAND data sheets (Micron's, for one) give tCBSY and tRCBSY (ONFI's
/// tDCBSYR) of a few microseconds typical, bounded by tPROG and tR; the
/// default was not checked against one part's data sheet, so set both from
/// the part's when it has them.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CacheConfig {
    /// Read Cache (00h-address-31h) (default false).
    #[serde(default)]
    pub read: bool,
    /// Page Program Cache (80h-data-15h) (default false).
    #[serde(default)]
    pub program: bool,
    /// Page-to-cache register copy of a cache read (default 3 us).
    #[serde(default = "three_us")]
    pub t_dcbsyr: Dur,
    /// Cache-to-page register copy before a cached program (default 3 us).
    #[serde(default = "three_us")]
    pub t_cbsy: Dur,
}

fn three_us() -> Dur {
    Dur::from_us(3)
}

impl CacheConfig {
    /// Check against the chip it describes; errors name the field.
    pub fn check(&self, n: &NandConfig) -> Result<(), ConfigError> {
        for (field, t) in [
            ("nand.cache.t_dcbsyr", self.t_dcbsyr),
            ("nand.cache.t_cbsy", self.t_cbsy),
        ] {
            if t > crate::config::MAX_OP_TIME {
                return Err(invalid(
                    field,
                    format!(
                        "{t} is out of range: an operation time is at most {}",
                        crate::config::MAX_OP_TIME
                    ),
                ));
            }
        }
        if (self.read || self.program) && n.suspend.is_some() {
            return Err(invalid(
                "nand.cache",
                "cache commands with [nand.suspend] are not modelled (a suspended program \
                 would hold the cache register): drop one of the two",
            ));
        }
        Ok(())
    }

    /// The commands it describes.
    pub fn ops(&self) -> CacheOps {
        CacheOps {
            read: self.read,
            program: self.program,
            t_dcbsyr: self.t_dcbsyr,
            t_cbsy: self.t_cbsy,
        }
    }
}

/// The rule a part imposes on multi-plane operations (see
/// [`MultiplaneConfig`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MultiplaneRule {
    /// Partners must be at the batch head's page offset (programs, reads).
    pub same_page: bool,
    /// Most planes one batch spans (the engine also caps it at the die's
    /// planes).
    pub max_planes: u32,
    /// Added to the batch's array time for each plane beyond the first.
    pub plane_gap: Dur,
}

impl MultiplaneRule {
    /// Same page offset, any number of planes, no gap: the rule of a part
    /// described by `nand.multiplane` alone.
    pub const ANY_PLANES: MultiplaneRule = MultiplaneRule {
        same_page: true,
        max_planes: u32::MAX,
        plane_gap: Dur::ZERO,
    };
}

/// `[nand.multiplane_rule]`: what a part allows in one multi-plane operation
/// (with `nand.multiplane = true`; moot without it). Absent: partners share
/// the page offset, a batch may span every plane of the die, and planes cost
/// nothing extra. The built-in models ([`AnyNand`]) read it; a model of
/// one's own gives its rule with [`Nand::multiplane`].
///
/// * `same_page = false`: partners may be at any page offset of their
///   blocks (independent multi-plane reads and programs, as on parts with
///   asynchronous plane addressing); an erase never has one. The batch's
///   array time is asked for its first operation's page, so this needs a
///   model whose time does not depend on the page (no `[nand.page_types]`).
/// * `max_planes`: the most planes one batch spans, `1..=planes_per_die`
///   (MQSim's and FEMU's parts pair planes: 2).
/// * `plane_gap`: array busy time each plane beyond the first adds (the
///   plane-to-plane busy time of a multi-plane command sequence, FEMU's
///   tPLxBSY): a batch of `n` planes keeps its die busy `(n - 1) *
///   plane_gap` longer.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MultiplaneConfig {
    /// Partners must be at the same page offset of their blocks (default true).
    #[serde(default = "yes")]
    pub same_page: bool,
    /// Absent: every plane of the die.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_planes: Option<u32>,
    /// Array busy time each plane beyond the first adds (default 0).
    #[serde(default)]
    pub plane_gap: Dur,
}

impl MultiplaneConfig {
    /// Check against the chip it describes; errors name the field.
    pub fn check(&self, n: &NandConfig) -> Result<(), ConfigError> {
        if let Some(m) = self.max_planes {
            if m == 0 || m > n.planes_per_die {
                return Err(invalid(
                    "nand.multiplane_rule.max_planes",
                    format!(
                        "must be in 1..={} (nand.planes_per_die), got {m}",
                        n.planes_per_die
                    ),
                ));
            }
        }
        if self.plane_gap > crate::config::MAX_OP_TIME {
            return Err(invalid(
                "nand.multiplane_rule.plane_gap",
                format!(
                    "{} is out of range: an operation time is at most {}",
                    self.plane_gap,
                    crate::config::MAX_OP_TIME
                ),
            ));
        }
        if !self.same_page && n.page_types.is_some() {
            return Err(invalid(
                "nand.multiplane_rule.same_page",
                "partners at other page offsets would have other page types, and a batch's \
                 array time is its first page's: with nand.page_types keep same_page = true",
            ));
        }
        Ok(())
    }

    /// The rule it describes.
    pub fn rule(&self) -> MultiplaneRule {
        MultiplaneRule {
            same_page: self.same_page,
            max_planes: self.max_planes.unwrap_or(u32::MAX),
            plane_gap: self.plane_gap,
        }
    }
}

/// What suspending and resuming an operation cost the die.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SuspendCost {
    /// From the suspend command until the die takes a read (the array
    /// finishes its current pulse).
    pub suspend: Dur,
    /// From the resume command until the operation goes on.
    pub resume: Dur,
}

/// `[nand.suspend]`: program/erase suspension for reads (Wu & He, "Reducing
/// SSD read latency via NAND flash program and erase suspension", FAST
/// 2012; MQSim's `Suspend_Program_Time`/`Suspend_Erase_Time` and its
/// reasonable-suspension thresholds). A high-priority read (a host or
/// mapping read; `controller.prioritize_reads`) that arrives at a die in
/// the middle of a program or erase suspends it if at least
/// `min_remaining` of it is left and it has been suspended fewer than
/// `max_per_op` times; the die serves its queued reads and resumes the
/// operation when none is left. The operation's remaining time is
/// unchanged by the suspension (the pulse finished during `t_suspend` is
/// not counted as progress), so it ends `t_suspend` + the reads +
/// `t_resume` later.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SuspendConfig {
    /// Time to suspend a program or erase before a read can start.
    pub t_suspend: Dur,
    /// Time to resume the suspended operation after the reads.
    pub t_resume: Dur,
    /// Suspend only operations with at least this much left.
    #[serde(default)]
    pub min_remaining: Dur,
    /// Suspend programs.
    #[serde(default = "yes")]
    pub programs: bool,
    /// Suspend erases.
    #[serde(default = "yes")]
    pub erases: bool,
    /// Times one operation may be suspended (bounds how long reads can hold
    /// a program or erase off).
    #[serde(default = "one")]
    pub max_per_op: u32,
}

fn yes() -> bool {
    true
}
fn one() -> u32 {
    1
}

impl SuspendConfig {
    /// Check the table: it suspends programs or erases, and `max_per_op` is in 1..=255; an
    /// error names the field.
    pub fn check(&self) -> Result<(), ConfigError> {
        if !self.programs && !self.erases {
            return Err(invalid(
                "nand.suspend",
                "suspends neither programs nor erases (programs = false, erases = false): remove the table",
            ));
        }
        if self.max_per_op == 0 || self.max_per_op > 255 {
            return Err(invalid(
                "nand.suspend.max_per_op",
                format!("1..=255, got {}", self.max_per_op),
            ));
        }
        Ok(())
    }

    /// The rule: suspend `running` with `remaining` left, suspended `times`
    /// already?
    #[inline]
    pub fn decide(&self, running: OpKind, remaining: Dur, times: u32) -> Option<SuspendCost> {
        let kind_ok = match running {
            OpKind::Program => self.programs,
            OpKind::Erase => self.erases,
            OpKind::Read => false,
        };
        (kind_ok && remaining >= self.min_remaining && remaining.0 > 0 && times < self.max_per_op)
            .then_some(SuspendCost {
                suspend: self.t_suspend,
                resume: self.t_resume,
            })
    }
}

// ------------------------------------------------------------------ fixed

/// One latency per operation kind, whatever the page: SLC, or any cell type
/// described by its mean latencies.
#[derive(Clone, Copy, Debug)]
pub struct FixedNand {
    /// tR, tPROG, tBERS, indexed by `OpKind as usize`.
    t: [Dur; 3],
}

impl FixedNand {
    /// A model with array read, program and erase times `t_r`, `t_prog`, `t_bers`.
    pub fn new(t_r: Dur, t_prog: Dur, t_bers: Dur) -> FixedNand {
        FixedNand {
            t: [t_r, t_prog, t_bers],
        }
    }
    /// `nand.t_r`, `nand.t_prog`, `nand.t_bers`.
    pub fn from_config(n: &NandConfig) -> FixedNand {
        FixedNand::new(n.t_r, n.t_prog, n.t_bers)
    }
}

impl Nand for FixedNand {
    fn name(&self) -> &'static str {
        "fixed"
    }
    #[inline(always)]
    fn array_time(&mut self, op: &ArrayOp, _cx: &NandCtx<'_>) -> Dur {
        self.t[op.kind as usize]
    }
    fn fixed_times(&self) -> Option<[Dur; 3]> {
        Some(self.t)
    }
}

// -------------------------------------------------------------- page type

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

// ------------------------------------------------------------- read retry

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

// -------------------------------------------------------------------- any

/// The built-in NAND models, chosen from the configuration:
/// `[nand.page_types]` picks [`PageTypeNand`] over [`FixedNand`],
/// `[nand.retry]` wraps either in [`ReadRetry`], `[nand.suspend]` adds
/// program/erase suspension ([`SuspendConfig`]) to any of them,
/// `[nand.multiplane_rule]` the part's multi-plane rule
/// ([`MultiplaneConfig`]) and `[nand.cache]` its cache commands
/// ([`CacheConfig`]).
#[derive(Clone, Debug)]
pub struct AnyNand {
    model: StdModel,
    suspend: Option<SuspendConfig>,
    multiplane: MultiplaneRule,
    cache: CacheOps,
}

#[derive(Clone, Debug)]
enum StdModel {
    Fixed(FixedNand),
    PageType(PageTypeNand),
    FixedRetry(ReadRetry<FixedNand>),
    PageTypeRetry(ReadRetry<PageTypeNand>),
}

macro_rules! any_nand {
    ($self:expr, $m:ident => $e:expr) => {
        match $self {
            StdModel::Fixed($m) => $e,
            StdModel::PageType($m) => $e,
            StdModel::FixedRetry($m) => $e,
            StdModel::PageTypeRetry($m) => $e,
        }
    };
}

/// Check the NAND model sections of a chip (`[nand.page_types]`,
/// `[nand.retry]`, `[nand.suspend]`, `[nand.multiplane_rule]`,
/// `[nand.cache]`); errors
/// name the field.
pub fn check_models(n: &NandConfig) -> Result<(), ConfigError> {
    if let Some(p) = &n.page_types {
        p.check(n)?;
    }
    if let Some(r) = &n.retry {
        r.check()?;
    }
    if let Some(p) = &n.suspend {
        p.check()?;
    }
    if let Some(m) = &n.multiplane_rule {
        m.check(n)?;
    }
    if let Some(c) = &n.cache {
        c.check(n)?;
    }
    Ok(())
}

impl AnyNand {
    /// The model a validated configuration describes.
    pub fn from_settings(s: &Settings) -> Result<AnyNand, ConfigError> {
        let n = &s.config.nand;
        check_models(n)?;
        let blocks = s.geometry.total_blocks() as usize;
        let seed = s.config.sim.seed;
        let model = match (&n.page_types, &n.retry) {
            (None, None) => StdModel::Fixed(FixedNand::from_config(n)),
            (Some(p), None) => StdModel::PageType(PageTypeNand::new(p, n.t_bers)),
            (None, Some(r)) => StdModel::FixedRetry(ReadRetry::new(
                FixedNand::from_config(n),
                r.clone(),
                blocks,
                seed,
            )),
            (Some(p), Some(r)) => StdModel::PageTypeRetry(ReadRetry::new(
                PageTypeNand::new(p, n.t_bers),
                r.clone(),
                blocks,
                seed,
            )),
        };
        Ok(AnyNand {
            model,
            suspend: n.suspend.clone(),
            multiplane: n
                .multiplane_rule
                .as_ref()
                .map_or(MultiplaneRule::ANY_PLANES, MultiplaneConfig::rule),
            cache: n.cache.as_ref().map_or(CacheOps::NONE, CacheConfig::ops),
        })
    }
}

impl Nand for AnyNand {
    fn name(&self) -> &'static str {
        any_nand!(&self.model, m => m.name())
    }
    #[inline(always)]
    fn array_time(&mut self, op: &ArrayOp, cx: &NandCtx<'_>) -> Dur {
        any_nand!(&mut self.model, m => m.array_time(op, cx))
    }
    #[inline(always)]
    fn tracks_blocks(&self) -> bool {
        matches!(
            self.model,
            StdModel::FixedRetry(_) | StdModel::PageTypeRetry(_)
        )
    }
    fn programmed(&mut self, block: u32, now: SimTime) {
        any_nand!(&mut self.model, m => m.programmed(block, now))
    }
    fn erased(&mut self, block: u32, now: SimTime) {
        any_nand!(&mut self.model, m => m.erased(block, now))
    }
    fn fixed_times(&self) -> Option<[Dur; 3]> {
        any_nand!(&self.model, m => m.fixed_times())
    }
    fn report(&self) -> Option<serde_json::Value> {
        any_nand!(&self.model, m => m.report())
    }
    fn restart_stats(&mut self) {
        any_nand!(&mut self.model, m => m.restart_stats())
    }
    fn can_suspend(&self) -> bool {
        self.suspend.is_some()
    }
    fn suspend(&self, running: OpKind, remaining: Dur, times: u32) -> Option<SuspendCost> {
        self.suspend.as_ref()?.decide(running, remaining, times)
    }
    fn multiplane(&self) -> MultiplaneRule {
        self.multiplane
    }
    fn cache_ops(&self) -> CacheOps {
        self.cache
    }
}
