//! What a part's command set allows beside its array times: cache
//! commands, multi-plane rules and program/erase suspension, with their
//! configuration sections (`[nand.cache]`, `[nand.multiplane_rule]`,
//! `[nand.suspend]`).

use super::*;

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
            if t > crate::units::MAX_OP_TIME {
                return Err(invalid(
                    field,
                    format!(
                        "{t} is out of range: an operation time is at most {}",
                        crate::units::MAX_OP_TIME
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
        if self.plane_gap > crate::units::MAX_OP_TIME {
            return Err(invalid(
                "nand.multiplane_rule.plane_gap",
                format!(
                    "{} is out of range: an operation time is at most {}",
                    self.plane_gap,
                    crate::units::MAX_OP_TIME
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
