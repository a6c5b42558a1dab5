//! # ftl: the ssdsim FTL zoo
//!
//! Concrete flash translation layers behind ssd-core's [`Ftl`] trait, the shared
//! block manager and GC victim policies. [`AnyFtl`] closes the runtime choice
//! (`--ftl NAME`) into an enum matched once per call, so the simulation loop is
//! statically dispatched. Adding an FTL: implement `Ftl`, name it (and any
//! section of its own) in ssd-core's `ftl/kinds.rs` (`FtlKind`,
//! `FtlSection`), add one line to `any_ftl!` below and one arm to [`build`].

#![warn(missing_docs)]

pub mod bast;
pub mod block;
pub mod blocks;
pub mod cmt;
pub mod dftl;
pub mod fast;
pub mod fdp;
pub mod hybrid;
pub mod last;
pub mod mapsize;
pub mod p2l;
pub mod page;
pub mod stripe;
pub mod wear;
pub mod zns;

pub use bast::Bast;
pub use block::BlockFtl;
pub use dftl::DftlFtl;
pub use fast::Fast;
pub use last::Last;
pub use page::PageFtl;
use ssd_core::config::{ConfigError, FtlConfig, FtlKind};
use ssd_core::ftl::{Ftl, FtlCtx, FtlStats, ZoneAction, ZoneDescriptor, ZoneError};
use ssd_core::DriveShape;
use ssd_core::{Lpn, PlaneId, Ppn};
pub use zns::ZnsFtl;

macro_rules! any_ftl {
    ($($(#[$m:meta])* $variant:ident($ty:ty)),* $(,)?) => {
        /// Every FTL of the zoo, statically dispatched. Built once per run, so the
        /// size difference between variants costs nothing; boxing would add an
        /// indirection to every call.
        #[allow(clippy::large_enum_variant)]
        #[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
        pub enum AnyFtl { $($(#[$m])* $variant($ty)),* }
        impl Ftl for AnyFtl {
            fn name(&self) -> &'static str { match self { $(AnyFtl::$variant(f) => f.name()),* } }
            fn logical_pages(&self) -> u64 { match self { $(AnyFtl::$variant(f) => f.logical_pages()),* } }
            #[inline] fn read(&mut self, l: Lpn, n: u32, cx: &mut FtlCtx) { match self { $(AnyFtl::$variant(f) => f.read(l, n, cx)),* } }
            #[inline] fn write(&mut self, l: Lpn, n: u32, cx: &mut FtlCtx) { match self { $(AnyFtl::$variant(f) => f.write(l, n, cx)),* } }
            #[inline] fn trim(&mut self, l: Lpn, n: u32, cx: &mut FtlCtx) { match self { $(AnyFtl::$variant(f) => f.trim(l, n, cx)),* } }
            fn flush(&mut self, cx: &mut FtlCtx) { match self { $(AnyFtl::$variant(f) => f.flush(cx)),* } }
            fn background(&mut self, cx: &mut FtlCtx) -> bool { match self { $(AnyFtl::$variant(f) => f.background(cx)),* } }
            #[inline] fn prefetch(&self, l: Lpn, w: bool, s: u8) { match self { $(AnyFtl::$variant(f) => f.prefetch(l, w, s)),* } }
            fn lookup(&self, l: Lpn) -> Option<Ppn> { match self { $(AnyFtl::$variant(f) => f.lookup(l)),* } }
            fn check_invariants(&self) -> Result<(), String> { match self { $(AnyFtl::$variant(f) => f.check_invariants()),* } }
            fn stats(&self) -> FtlStats { match self { $(AnyFtl::$variant(f) => f.stats()),* } }
            fn notes(&self) -> Vec<(&'static str, u64)> { match self { $(AnyFtl::$variant(f) => f.notes()),* } }
            fn mapping_table_bytes(&self) -> u64 { match self { $(AnyFtl::$variant(f) => f.mapping_table_bytes()),* } }
            #[inline] fn free_blocks(&self, p: PlaneId) -> u32 { match self { $(AnyFtl::$variant(f) => f.free_blocks(p)),* } }
            fn zone_pages(&self) -> Option<u64> { match self { $(AnyFtl::$variant(f) => f.zone_pages()),* } }
            fn zone_append(&mut self, z: Lpn, n: u32, cx: &mut FtlCtx) -> Result<Lpn, ZoneError> { match self { $(AnyFtl::$variant(f) => f.zone_append(z, n, cx)),* } }
            fn zone_mgmt(&mut self, a: ZoneAction, z: Lpn, cx: &mut FtlCtx) -> Result<(), ZoneError> { match self { $(AnyFtl::$variant(f) => f.zone_mgmt(a, z, cx)),* } }
            fn report_zones(&self) -> Vec<ZoneDescriptor> { match self { $(AnyFtl::$variant(f) => f.report_zones()),* } }
            fn report_section(&self) -> Option<(&'static str, serde_json::Value)> { match self { $(AnyFtl::$variant(f) => f.report_section()),* } }
            fn measure_start(&mut self) { match self { $(AnyFtl::$variant(f) => f.measure_start()),* } }
            fn shed(&mut self) { match self { $(AnyFtl::$variant(f) => f.shed()),* } }
            fn restore(&mut self, restored: Self) {
                match (self, restored) {
                    $((AnyFtl::$variant(f), AnyFtl::$variant(r)) => f.restore(r),)*
                    (this, restored) => *this = restored,
                }
            }
        }
    };
}

any_ftl!(
    /// `page`: page-level mapping.
    Page(PageFtl),
    /// `block`: block-level mapping.
    Block(BlockFtl),
    /// `bast`: hybrid mapping, a log block per data block.
    Bast(Bast),
    /// `fast`: hybrid mapping, log blocks shared by all data blocks.
    Fast(Fast),
    /// `last`: hybrid mapping with sequential and hot/cold random logs.
    Last(Last),
    /// `dftl`: page-level mapping cached from flash (demand-based).
    Dftl(DftlFtl),
    /// `zns`: a zoned namespace.
    Zns(ZnsFtl),
);

/// Names accepted by `--ftl` and `ftl.kind` ([`FtlKind::NAMES`]).
pub const FTL_NAMES: &[&str] = FtlKind::NAMES;

/// The FTLs behind a conventional block interface (any page writable at
/// any time): every kind but the zoned namespace, in [`FTL_NAMES`]' order.
pub const CONVENTIONAL_FTL_NAMES: &[&str] = &["page", "block", "bast", "fast", "last", "dftl"];

/// Build the FTL `c.kind` names over a drive of shape `d` (a validated
/// configuration's `Settings::shape`). Each FTL reads the knobs every FTL
/// shares and its own section of `c` ([`ssd_core::config::FtlSection`]).
pub fn build(c: &FtlConfig, d: &DriveShape) -> Result<AnyFtl, ConfigError> {
    Ok(match c.kind {
        FtlKind::Page => AnyFtl::Page(PageFtl::try_new(c, d)?),
        FtlKind::Block => AnyFtl::Block(BlockFtl::new(c, d)?),
        FtlKind::Bast => AnyFtl::Bast(Bast::new(c, d)?),
        FtlKind::Fast => AnyFtl::Fast(Fast::new(c, d)?),
        FtlKind::Last => AnyFtl::Last(Last::new(c, d)?),
        FtlKind::Dftl => AnyFtl::Dftl(DftlFtl::new(c, d)?),
        FtlKind::Zns => AnyFtl::Zns(ZnsFtl::new(c, d)?),
    })
}

#[cfg(test)]
mod names_tests {
    use super::*;
    #[test]
    fn the_conventional_ftls_are_every_kind_but_the_zoned() {
        let want: Vec<&str> = FtlKind::ALL
            .iter()
            .filter(|k| !k.is_zoned())
            .map(|k| k.name())
            .collect();
        assert_eq!(CONVENTIONAL_FTL_NAMES, want.as_slice());
    }
}
