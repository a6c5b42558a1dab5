//! The engine's constants: what the settings and the hardware models fix
//! when a simulation is built (geometry, the multi-plane rule, the models'
//! fixed times, which cold paths are on). Read on every hot path, written
//! only at construction (and by `Simulation::book_reads_in_two_steps`).

use super::*;

/// The constants of one simulation (see the module's docs).
#[derive(Clone, Copy, Debug)]
pub(super) struct Consts {
    /// The channel model's `fixed_times` (command, one page), if it has
    /// them (then it is not asked).
    pub(super) bus_t: Option<(Dur, Dur)>,
    /// The NAND model's `fixed_times`, if it has them (then it is not asked).
    pub(super) fixed_t: Option<[Dur; 3]>,
    /// The NAND model may suspend programs/erases for reads
    /// (`Nand::can_suspend`); the per-die state of `suspend.rs` is kept
    /// only then.
    pub(super) suspend_on: bool,
    /// The NAND model's cache commands (`Nand::cache_ops`); the per-die
    /// cache registers of `cache.rs` are kept only if it has any.
    pub(super) cache: CacheOps,
    /// Suspension or cache commands are on: die starts and array ends
    /// take their cold paths (`die_start_hooked`, `die_done_hooked`).
    pub(super) die_hooks: bool,
    /// Page size in bytes.
    pub(super) page: u64,
    /// Most planes one batch spans: the die's, or fewer by the NAND
    /// model's multi-plane rule.
    pub(super) planes: u32,
    /// Page size, as a divider.
    pub(super) div_page: FastDiv,
    /// Multi-plane batches are on (`nand.multiplane`, more than one plane).
    pub(super) multiplane: bool,
    /// A freed channel serves host and mapping reads first
    /// (`Channel::arbitration`); otherwise its waiters in arrival order.
    pub(super) reads_first: bool,
    /// What of a page offset partners must share (`queue_key`/`batch_key`
    /// see `pg & page_mask`): all of it, or nothing where the multi-plane
    /// rule lets partners be at other offsets.
    pub(super) page_mask: u16,
    /// The multi-plane rule's extra array time per plane beyond the first.
    pub(super) plane_gap: Dur,
    /// `controller.prioritize_reads`: host and mapping reads go first at
    /// their die.
    pub(super) prio_reads: bool,
    /// `ftl.gc_mode = "paced"`: GC operations of non-gating jobs yield to
    /// foreground work at their die (`flash.rs`: `YIELDS`, `next_queue`).
    pub(super) gc_yields: bool,
    /// Planes per die (`FlashSched::pending_erases` is indexed die by die).
    pub(super) planes_per_die: u32,
    /// Every die has its channel to itself (one die per channel): a read's
    /// data-out never waits, so it is booked with the command (see `grant`).
    pub(super) exclusive: bool,
}

impl Consts {
    /// The constants `settings` and the models `hw` fix.
    pub(super) fn new<H: Hardware>(settings: &Settings, hw: &Parts<H>) -> Consts {
        let g = settings.geometry;
        let c = &settings.config;
        let cache = hw.nand.cache_ops();
        let rule = hw.nand.multiplane();
        let planes = g.planes.min(MAX_PLANES as u32).min(rule.max_planes.max(1));
        Consts {
            bus_t: hw.chan.fixed_times(),
            fixed_t: hw.nand.fixed_times(),
            suspend_on: hw.nand.can_suspend(),
            cache,
            die_hooks: hw.nand.can_suspend() || cache.any(),
            page: g.page_size as u64,
            planes,
            div_page: FastDiv::new(g.page_size as u64),
            multiplane: c.nand.multiplane && planes > 1,
            reads_first: hw.chan.arbitration() == crate::hw::BusArbitration::ReadsFirst,
            page_mask: if rule.same_page { u16::MAX } else { 0 },
            plane_gap: rule.plane_gap,
            prio_reads: c.controller.prioritize_reads,
            gc_yields: c.ftl.gc_mode() == crate::config::GcMode::Paced,
            planes_per_die: g.planes,
            // With cache commands a die's next operation may need the
            // channel while its cache register's transfer holds it.
            exclusive: g.ways * g.dies == 1 && !cache.any(),
        }
    }
}
