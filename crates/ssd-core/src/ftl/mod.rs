//! The FTL boundary: the `Ftl` trait, the plan of flash operations an FTL returns,
//! and the flash array's physical rules.
//!
//! The FTL is functional, the controller is temporal. Given a host page operation
//! the FTL updates its state at once and pushes the flash operations that need to
//! happen into the [`FtlCtx`]'s [`Plan`]. Operations are grouped in *jobs*; inside
//! a job, operations of stage `k + 1` start only after every operation of stage
//! `k` has finished (a copy's read before its program, all copies before the
//! erase, a translation read before the data read it enables). Job 0 of every
//! call is the host request's own and *gates* its completion; an FTL opens more
//! jobs with [`FtlCtx::new_job`] for work that should not (GC that runs beside the
//! request) or should (a merge the write must wait for).
//!
//! **Architecture invariant:** ssd-core knows no concrete FTL. Concrete FTLs live in
//! the `ftl` crate; the application closes the choice with an enum. The core
//! knows the FTLs' names and configuration sections only (`kinds.rs`: what
//! the drive's capacity and the engine's GC scheduling are derived from).

mod config;
mod kinds;
mod placement;
pub mod zone;

pub use config::{
    Allocation, FtlCapacity, FtlConfig, GcMode, GcPolicy, P2lStore, PlaneAllocation, WearLeveling,
};
pub use kinds::{
    BlockConfig, CmtGranularity, CmtPolicy, DftlConfig, FdpConfig, FdpIsolation, FtlKind,
    FtlSection, LastConfig, LogConfig, ZnsConfig, ZoneLayout,
};
pub use placement::Placement;
pub use zone::{ZoneAction, ZoneDescriptor, ZoneError, ZoneState};

use crate::addr::{BlockId, FastDiv, Geometry, Lpn, PlaneId, Ppn};
use crate::rng::SimRng;
use crate::units::SimTime;
use serde::{Deserialize, Serialize};

/// What a flash operation does to the array.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum OpKind {
    /// Read a page from the array.
    Read,
    /// Program (write) a page; pages of a block are programmed in order.
    Program,
    /// Erase a whole block.
    Erase,
}

/// Why a flash operation happens. Energy and counts are split by purpose.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Purpose {
    /// Host data (reads, programs of host writes, write-buffer flushes).
    Host,
    /// Garbage collection (copies and the victim's erase).
    Gc,
    /// Hybrid-FTL merges (copies and erases).
    Merge,
    /// Mapping (translation page) traffic.
    Translation,
    /// Static wear levelling moves.
    WearLevel,
}

impl Purpose {
    /// Every purpose, in index order.
    pub const ALL: [Purpose; 5] = [
        Purpose::Host,
        Purpose::Gc,
        Purpose::Merge,
        Purpose::Translation,
        Purpose::WearLevel,
    ];
    /// Index of the purpose in per-purpose arrays (`Counters::flash_ops`).
    pub fn index(self) -> usize {
        self as usize
    }
    /// The purpose's name in the report (`host`, `gc`, `merge`, `translation`, `wear_level`).
    pub fn name(self) -> &'static str {
        match self {
            Purpose::Host => "host",
            Purpose::Gc => "gc",
            Purpose::Merge => "merge",
            Purpose::Translation => "translation",
            Purpose::WearLevel => "wear_level",
        }
    }
}

/// A job inside a plan. A u32 (a FlashOp is 24 bytes either way): one host
/// write on a full drive can plan more than 65,536 GC and wear-levelling
/// jobs, and a narrower id wrapped, merging unrelated jobs into one whose
/// stages waited on each other.
pub type JobId = u32;

/// Sentinel for "no logical page" / "no source page" in a [`FlashOp`].
pub const NO_LPN: u64 = u64::MAX;
/// Sentinel for "no source page" in [`FlashOp::src`].
pub const NO_PPN: u32 = u32::MAX;

/// One flash operation the FTL asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FlashOp {
    /// Read, program or erase.
    pub kind: OpKind,
    /// Why the operation happens (counts and energy are split by it).
    pub purpose: Purpose,
    /// The job the operation belongs to (see the module docs).
    pub job: JobId,
    /// Stage within the job: stage k + 1 starts after all of stage k has finished.
    pub stage: u8,
    /// Target page (for an erase: the block's first page).
    pub ppn: Ppn,
    /// Logical page whose data a program writes or a read fetches (NO_LPN if none,
    /// e.g. translation pages). Tests use it to track data through GC.
    pub lpn: u64,
    /// For a copy's program: the page the data came from (NO_PPN otherwise).
    pub src: u32,
}

/// The flash operations of one FTL call, in jobs and stages.
#[derive(Clone, Debug, Default)]
pub struct Plan {
    /// The operations, in the order they were planned.
    pub ops: Vec<FlashOp>,
    /// `gating[j]`: job j must finish before the host request completes.
    pub gating: Vec<bool>,
}

impl Plan {
    /// Empty the plan, leaving job 0 (the host request's, gating) open.
    pub fn clear(&mut self) {
        self.ops.clear();
        self.gating.clear();
        self.gating.push(true);
    }
}

/// Counters of FTL work that is not flash work; the controller turns them into
/// CPU cycles and DRAM accesses.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct FtlWork {
    /// Mapping-table lookups/updates (each is a DRAM access too).
    pub map_lookups: u64,
    /// Candidate blocks examined during victim search (each a table search,
    /// and a DRAM access too: the candidate's valid-page count is read).
    pub gc_candidates: u64,
    /// Pages moved by GC, merges or wear levelling (bookkeeping per page).
    pub gc_pages: u64,
    /// Pages of GC victims whose validity was checked before the moves
    /// (each a DRAM read of the page's state, live or not).
    pub gc_page_checks: u64,
    /// Other DRAM accesses (cache management, directory lookups).
    pub dram_accesses: u64,
}

impl FtlWork {
    /// Add another call's counters to these.
    pub fn add(&mut self, o: &FtlWork) {
        self.map_lookups += o.map_lookups;
        self.gc_candidates += o.gc_candidates;
        self.gc_pages += o.gc_pages;
        self.gc_page_checks += o.gc_page_checks;
        self.dram_accesses += o.dram_accesses;
    }
    /// DRAM accesses of this work: map lookups, GC candidates (each reads
    /// the candidate's valid-page count), victim pages checked and the others.
    #[inline]
    pub fn dram_total(&self) -> u64 {
        self.map_lookups + self.gc_candidates + self.gc_page_checks + self.dram_accesses
    }
    /// [`FtlWork::dram_total`] plus `buffer` accesses of the command path
    /// (the write buffer), by [`Activity`].
    #[inline]
    pub fn dram_by_activity(&self, buffer: u64) -> [u64; Activity::COUNT] {
        [
            buffer,
            self.map_lookups,
            self.gc_candidates,
            self.gc_page_checks,
            self.dram_accesses,
        ]
    }
}

/// What firmware work CPU cycles and DRAM accesses are for: the power
/// report's `by_activity` divides the CPU's busy time and the DRAM's active
/// time among them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Activity {
    /// The command path: decoding and setting up a host command
    /// (`controller.cycles_per_command`), and its write-buffer accesses.
    Command = 0,
    /// Mapping-table lookups and updates ([`FtlWork::map_lookups`]),
    /// whatever asked for them (host pages, GC and merge copies).
    MapLookup = 1,
    /// GC victim search: the candidates examined ([`FtlWork::gc_candidates`]).
    GcSearch = 2,
    /// Bookkeeping per page moved by GC, a merge or wear levelling
    /// ([`FtlWork::gc_pages`]), and the validity checks of a victim's pages
    /// ([`FtlWork::gc_page_checks`], DRAM).
    GcMove = 3,
    /// Other DRAM accesses ([`FtlWork::dram_accesses`]: cache management,
    /// directory lookups), and the cycles of a CPU model that are no
    /// activity's own.
    Other = 4,
}

impl Activity {
    /// Number of activities.
    pub const COUNT: usize = 5;
    /// Every activity, in index order.
    pub const ALL: [Activity; Activity::COUNT] = [
        Activity::Command,
        Activity::MapLookup,
        Activity::GcSearch,
        Activity::GcMove,
        Activity::Other,
    ];
    /// Index of the activity in per-activity arrays.
    pub fn index(self) -> usize {
        self as usize
    }
    /// The activity's name in the power report (`command`, `map_lookup`, ...).
    pub fn name(self) -> &'static str {
        match self {
            Activity::Command => "command",
            Activity::MapLookup => "map_lookup",
            Activity::GcSearch => "gc_search",
            Activity::GcMove => "gc_move",
            Activity::Other => "other",
        }
    }
}

/// What an FTL call works with: the plan it fills, its work counters, the run's
/// FTL random stream and a read-only view of how busy each die is.
pub struct FtlCtx {
    /// The flash operations the call plans.
    pub plan: Plan,
    /// Non-flash work of the call (map lookups, GC bookkeeping, DRAM accesses).
    pub work: FtlWork,
    /// The run's FTL random stream (victim choice, ...).
    pub rng: SimRng,
    /// Operations queued or running per die (for least-busy allocation).
    pub die_load: Vec<u32>,
    /// Simulated time of the call.
    pub now: SimTime,
    /// The workload is done and the run drains (`sim.drain`): idle-time
    /// work that waits for the end (`ftl.drain_merge`) may run.
    pub draining: bool,
    /// A zoned FTL's refusal of the host write of this call (ZNS: not at
    /// the write pointer, a full zone, ...): set by [`Ftl::write`], which
    /// then plans nothing; the engine fails the command with it and clears
    /// it before each command. A drive with Flexible Data Placement refuses
    /// a write whose placement identifier names no placement handle or
    /// reclaim group the same way (Invalid Field in Command).
    pub status: Option<ZoneError>,
    /// The data placement directive of the host write this call plans
    /// ([`crate::workload::HostRequest::placement`]; none for the writes
    /// the device makes of its own, such as preconditioning and write-buffer
    /// evictions). Set by the engine before each command; only an FTL with
    /// Flexible Data Placement reads it.
    pub placement: Placement,
}

impl FtlCtx {
    /// A context with an empty plan (job 0 open) and `dies` idle dies.
    pub fn new(rng: SimRng, dies: usize) -> FtlCtx {
        let mut plan = Plan::default();
        plan.clear();
        FtlCtx {
            plan,
            work: FtlWork::default(),
            rng,
            die_load: vec![0; dies],
            now: SimTime::ZERO,
            draining: false,
            status: None,
            placement: Placement::NONE,
        }
    }
    /// Open a new job; `gating` jobs delay the host request's completion.
    pub fn new_job(&mut self, gating: bool) -> JobId {
        self.plan.gating.push(gating);
        (self.plan.gating.len() - 1) as JobId
    }
    /// Plan a page read of `ppn` in `job` at `stage`; `lpn` is the logical page it fetches
    /// (NO_LPN for translation pages).
    #[inline]
    pub fn read(&mut self, job: JobId, stage: u8, ppn: Ppn, purpose: Purpose, lpn: u64) {
        self.plan.ops.push(FlashOp {
            kind: OpKind::Read,
            purpose,
            job,
            stage,
            ppn,
            lpn,
            src: NO_PPN,
        });
    }
    /// Plan a program of `ppn` in `job` at `stage` with the data of logical page `lpn`; `src`
    /// is the page a copy's data came from.
    #[inline]
    pub fn program(
        &mut self,
        job: JobId,
        stage: u8,
        ppn: Ppn,
        purpose: Purpose,
        lpn: u64,
        src: Option<Ppn>,
    ) {
        self.plan.ops.push(FlashOp {
            kind: OpKind::Program,
            purpose,
            job,
            stage,
            ppn,
            lpn,
            src: src.map_or(NO_PPN, |p| p.0),
        });
    }
    /// Plan an erase of the block whose first page is `first_page`.
    #[inline]
    pub fn erase(&mut self, job: JobId, stage: u8, first_page: Ppn, purpose: Purpose) {
        self.plan.ops.push(FlashOp {
            kind: OpKind::Erase,
            purpose,
            job,
            stage,
            ppn: first_page,
            lpn: NO_LPN,
            src: NO_PPN,
        });
    }
}

macro_rules! ftl_stats {
    ($($(#[$m:meta])* $f:ident),* $(,)?) => {
        /// FTL-internal counters reported in `ftl.stats`. Every FTL fills what
        /// applies to it and leaves the rest zero.
        #[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
        pub struct FtlStats { $($(#[$m])* pub $f: u64,)* }
        impl FtlStats {
            /// Field-wise `self - before` (counters of a phase).
            pub fn minus(&self, before: &FtlStats) -> FtlStats {
                FtlStats { $($f: self.$f.saturating_sub(before.$f),)* }
            }
        }
    };
}
ftl_stats!(
    /// Victim blocks garbage-collected (one per victim, foreground or background).
    gc_runs,
    /// Candidate blocks examined by victim selection.
    gc_victims_examined,
    /// Valid pages GC copied out of victims.
    gc_page_copies,
    /// Hybrid FTLs: switch merges (a sequentially written log block becomes the data block).
    merges_switch,
    /// Hybrid FTLs: partial merges (the log block is completed from the data block, then switched).
    merges_partial,
    /// Hybrid FTLs: full merges (valid pages of the log and data blocks copied to a new block).
    merges_full,
    /// Pages copied by merges.
    merge_page_copies,
    /// Blocks erased by merges.
    merge_erases,
    /// Translation-page reads (DFTL: CMT misses, write-backs and GC's mapping updates that read
    /// their page).
    translation_reads,
    /// Translation-page programs (DFTL: dirty mappings written back).
    translation_writes,
    /// Translation pages copied by GC out of translation blocks (DFTL; also
    /// counted in `gc_page_copies`).
    translation_gc_copies,
    /// DFTL: lookups served by the Cached Mapping Table.
    cmt_hits,
    /// DFTL: lookups that missed the Cached Mapping Table.
    cmt_misses,
    /// DFTL: entries (or pages, at page granularity) evicted from the CMT.
    cmt_evictions,
    /// DFTL: evictions of dirty entries, which write their translation page back.
    cmt_dirty_evictions,
    /// Pages moved by static wear levelling.
    wear_level_moves,
    /// Of `gc_runs`, those run in idle time (`ftl.background_gc_blocks`).
    background_runs,
    /// Of `gc_runs`, those run in the foreground: with a plane's free
    /// blocks at the hard threshold (`ftl.gc_threshold_blocks`), so that the
    /// host write that needs a block waits for the whole victim, neither
    /// paced (one victim a host page below the soft threshold) nor in idle
    /// time.
    foreground_runs,
    /// Filler programs that keep a block's pages in order when a block-mapped FTL
    /// writes at an offset past the block's write pointer.
    pad_programs,
);

/// A flash translation layer. Implementations must be deterministic given the
/// context's RNG, keep the invariants below, and report broken internal
/// invariants by panicking with context (never by returning wrong data).
///
/// The invariants every FTL keeps (checked by [`Ftl::check_invariants`] and
/// the property tests in `crates/ftl/tests`):
/// - read-your-writes: a read of a logical page finds the data of the last
///   write to it, across GC, merges, evictions and wear levelling; a page
///   never written (or trimmed) reads as unmapped;
/// - a physical page is programmed at most once between erases, and the
///   pages of a block in order;
/// - every valid physical page is the target of exactly one mapping; a
///   block's valid count is the number of mapped pages in it; free + valid +
///   invalid pages = all pages;
/// - the logical capacity is always writable (no false "device full" while
///   space can be reclaimed), and GC never loses a valid page;
/// - erase counts only grow.
pub trait Ftl {
    /// Short name of the FTL (`page`, `dftl`, ...), as `--ftl` takes it and the report shows it.
    fn name(&self) -> &'static str;
    /// Host-visible capacity in pages.
    fn logical_pages(&self) -> u64;
    /// Read `n` consecutive logical pages starting at `lpn`.
    fn read(&mut self, lpn: Lpn, n: u32, cx: &mut FtlCtx);
    /// Write `n` consecutive logical pages starting at `lpn`.
    fn write(&mut self, lpn: Lpn, n: u32, cx: &mut FtlCtx);
    /// Discard `n` consecutive logical pages.
    fn trim(&mut self, lpn: Lpn, n: u32, cx: &mut FtlCtx);
    /// Persist volatile FTL state (cached mapping entries); default nothing.
    fn flush(&mut self, _cx: &mut FtlCtx) {}
    /// Idle-time work (background GC, merging). Returns true if it planned any.
    fn background(&mut self, _cx: &mut FtlCtx) -> bool {
        false
    }
    /// A hint that a host request on `lpn` (a write if `write`) comes soon, so
    /// that what it will touch can be fetched into the cache while other
    /// events run. The engine gives a write three steps as it comes closer:
    /// step 2 some requests ahead (fetch the mapping entry), step 1 halfway
    /// (the entry is cached by now: fetch what it points to), step 0 one
    /// request ahead (fetch what that points to). Other requests get step 2
    /// only; at a read's step 1 the engine calls [`Ftl::lookup`] and fetches
    /// its own per-block state. Must not change any state; default nothing.
    #[inline]
    fn prefetch(&self, _lpn: Lpn, _write: bool, _step: u8) {}
    /// Where the data of `lpn` lives now (for tests, tools and the engine's
    /// read prefetch hint: it must be cheap and change nothing).
    fn lookup(&self, lpn: Lpn) -> Option<Ppn>;
    /// Check every invariant of the [`Ftl`] docs; the property tests call it after each step.
    fn check_invariants(&self) -> Result<(), String>;
    /// The FTL's counters since it was built.
    fn stats(&self) -> FtlStats;
    /// Things the report should say about how the FTL ran the configuration
    /// it was given (a setting it had to raise, ...): (name, value) pairs
    /// that go to the report's `notes`. Default none.
    fn notes(&self) -> Vec<(&'static str, u64)> {
        Vec::new()
    }
    /// Bytes of mapping tables the FTL keeps in controller memory.
    fn mapping_table_bytes(&self) -> u64;
    /// Blocks in `plane`'s free pool now, as the FTL counts them (an erase
    /// it planned counts at once). The engine subtracts the erases it has
    /// not run yet to tell when paced GC is urgent (`ftl.gc_mode =
    /// "paced"`). Default: no pool (`u32::MAX`: never urgent).
    fn free_blocks(&self, _plane: PlaneId) -> u32 {
        u32::MAX
    }
    /// A zoned FTL's zones: the zone size in logical pages (zones start at
    /// its multiples). `None` (the default): the drive has no zones, and
    /// the engine fails zoned commands with
    /// [`ZoneError::InvalidOpcode`].
    fn zone_pages(&self) -> Option<u64> {
        None
    }
    /// Zone Append of `n` pages to the zone that starts at `zone`: the data
    /// goes at the zone's write pointer, whose page is returned. A write
    /// the zone refuses plans nothing and returns the status. Default: no
    /// zones.
    fn zone_append(&mut self, _zone: Lpn, _n: u32, _cx: &mut FtlCtx) -> Result<Lpn, ZoneError> {
        Err(ZoneError::InvalidOpcode)
    }
    /// Zone Management Send's `action` on the zone that starts at `zone`
    /// (a reset plans the erases of the zone's blocks). Default: no zones.
    fn zone_mgmt(
        &mut self,
        _action: ZoneAction,
        _zone: Lpn,
        _cx: &mut FtlCtx,
    ) -> Result<(), ZoneError> {
        Err(ZoneError::InvalidOpcode)
    }
    /// Report Zones: every zone's descriptor, in address order. Default:
    /// none.
    fn report_zones(&self) -> Vec<ZoneDescriptor> {
        Vec::new()
    }
    /// A report section of the FTL's own (its name and value: a zoned
    /// FTL's `zns`), added to the report's top level. Default none.
    fn report_section(&self) -> Option<(&'static str, serde_json::Value)> {
        None
    }
    /// The measured phase starts (after preconditioning, and again at the
    /// end of `sim.ramp_time`): counters of the FTL's own report section
    /// that describe the phase count from here, as [`FtlStats`] do from the
    /// engine's snapshot. Default nothing.
    fn measure_start(&mut self) {}
    /// `restored`, an FTL of this drive loaded from a saved state, takes
    /// this one's place (`Simulation::restore_drive_state`). What this one
    /// was built with that no state holds (how the page FTL stores its
    /// P2L, `ftl.p2l_store`) it keeps. Default: `*self = restored`.
    fn restore(&mut self, restored: Self)
    where
        Self: Sized,
    {
        *self = restored;
    }
    /// Free the tables a restored drive replaces, before its state is read
    /// (`Simulation::shed_drive`), so that this FTL's and the state's are
    /// never in memory together. Only [`Ftl::restore`] or a drop follows;
    /// what `restore` keeps of this FTL stays. Default nothing.
    fn shed(&mut self) {}
}

/// The flash array's physics: per block, the next page that may be programmed and
/// the erase count. Every planned operation is applied here when planned, so an FTL
/// that programs out of order, programs a page twice or reads an unwritten page is
/// caught at once (a panic naming the block and page).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct FlashArray {
    geometry: Geometry,
    write_ptr: Vec<u16>,
    erase_count: Vec<u32>,
    /// Pages per block as a divisor (a shift on the usual power-of-two geometry).
    div_ppb: FastDiv,
}

impl FlashArray {
    /// A fresh (all erased) array of geometry `g`.
    pub fn new(g: Geometry) -> FlashArray {
        FlashArray {
            geometry: g,
            write_ptr: vec![0; g.total_blocks() as usize],
            erase_count: vec![0; g.total_blocks() as usize],
            div_ppb: FastDiv::new(g.pages_per_block as u64),
        }
    }
    /// (flat block id, page in block) of `p`.
    #[inline]
    pub fn split(&self, p: Ppn) -> (u32, u32) {
        let b = self.div_ppb.quot(p.0 as u64) as u32;
        (b, p.0 - b * self.geometry.pages_per_block)
    }
    /// Apply `op` to the array's rules, panicking if it breaks one (program out of order, read
    /// of an unwritten page, erase not at a block start).
    #[inline]
    pub fn apply(&mut self, op: &FlashOp) {
        let (b, page) = self.split(op.ppn);
        self.apply_at(op, b, page);
    }
    /// [`FlashArray::apply`] with the op's block and page already split out.
    /// Returns the op's page in its block, or for an erase the pages written
    /// in the block before it.
    #[inline]
    pub fn apply_at(&mut self, op: &FlashOp, b: u32, page: u32) -> u32 {
        let b = b as usize;
        match op.kind {
            OpKind::Program => {
                let wp = self.write_ptr[b] as u32;
                assert!(
                    page == wp,
                    "flash rule broken: program of block {b} page {page} but the next programmable page is {wp} ({:?})",
                    op
                );
                self.write_ptr[b] += 1;
                page
            }
            OpKind::Read => {
                assert!(
                    page < self.write_ptr[b] as u32,
                    "flash rule broken: read of unwritten page {page} of block {b} (written up to {}) ({:?})",
                    self.write_ptr[b],
                    op
                );
                page
            }
            OpKind::Erase => {
                assert!(page == 0, "erase must name a block's first page: {:?}", op);
                let written = self.write_ptr[b] as u32;
                self.write_ptr[b] = 0;
                self.erase_count[b] += 1;
                written
            }
        }
    }
    /// Cache hint: block `b`'s write pointer is read soon.
    #[inline]
    pub fn prefetch_block(&self, b: u32) {
        if let Some(w) = self.write_ptr.get(b as usize) {
            prefetch_read(w);
        }
    }
    /// Erase count of every block, by flat block id.
    pub fn erase_counts(&self) -> &[u32] {
        &self.erase_count
    }
    /// Pages programmed in block `b` since its last erase.
    pub fn written_pages(&self, b: BlockId) -> u32 {
        self.write_ptr[b.0 as usize] as u32
    }
    /// The array's geometry.
    pub fn geometry(&self) -> &Geometry {
        &self.geometry
    }
}

/// Ask the CPU to bring the cache line holding `r` closer (a hint only: no
/// effect on results; a no-op on targets without a prefetch instruction).
#[inline(always)]
pub fn prefetch_read<T>(r: &T) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        // SAFETY: prefetch never faults and never changes program state; the
        // pointer comes from a live reference.
        unsafe { _mm_prefetch::<_MM_HINT_T0>(r as *const T as *const i8) };
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = r;
}

#[cfg(test)]
mod job_id_tests {
    use super::*;
    use crate::rng::SimRngExt;

    #[test]
    fn a_flash_op_stays_24_bytes() {
        assert_eq!(std::mem::size_of::<FlashOp>(), 24);
    }

    #[test]
    fn job_ids_do_not_wrap_past_65536() {
        let mut cx = FtlCtx::new(SimRng::from_seed_label(1, "ftl"), 1);
        let mut last = 0;
        for _ in 0..70_000 {
            last = cx.new_job(false);
        }
        // Job 0 is the host request's.
        assert_eq!(last, 70_000);
    }
}
