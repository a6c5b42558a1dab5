//! Mapping-table memory model (Park et al. 2011, section 3.3 and fig. 7): how many
//! bytes of controller memory each FTL's mapping tables take for a drive.
//!
//! * An entry that addresses `N` units takes `ceil(log2(N) / 8)` bytes in the
//!   byte-aligned mode of the paper, or 4 bytes in the 32-bit mode commodity
//!   controllers use ([`EntryMode`]).
//! * page: one entry per logical page, each addressing a physical page.
//! * block: one entry per logical block, each addressing a physical block.
//! * bast / fast / last: the block table plus a page table over the log area (a
//!   fraction of the capacity, 5 % by default as in Park et al.'s 50 MB of 1 GB);
//!   each log-page entry addresses a physical page. The three differ in how they use
//!   the log blocks, not in the size of their tables.
//! * dftl: the Global Translation Directory, one entry per translation page, each
//!   addressing a physical page (so it is sized like a block-level table), plus the
//!   Cached Mapping Table (32 KB in Park et al.). A translation page holds
//!   `page_size / entry_bytes` page-mapping entries.
//!
//! Example (the paper's): 512 MB of 2 KiB pages = 262,144 pages; 3-byte entries;
//! a page table of 786,432 bytes.

use crate::page::entry_bytes;
use serde::Serialize;

/// How wide a mapping entry is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum EntryMode {
    /// `ceil(log2(N) / 8)` bytes for an entry addressing `N` units (Park et al.).
    Byte,
    /// 4 bytes for every entry.
    #[serde(rename = "32bit")]
    Bits32,
}

impl EntryMode {
    /// Parse `byte` or `32bit` (also `32-bit`); an error names them.
    pub fn parse(s: &str) -> Result<EntryMode, String> {
        match s.trim() {
            "byte" => Ok(EntryMode::Byte),
            "32bit" | "32-bit" => Ok(EntryMode::Bits32),
            o => Err(format!("unknown entry mode {o:?} (byte, 32bit)")),
        }
    }
    /// Bytes of one entry that addresses `n` units.
    pub fn bytes(self, n: u64) -> u64 {
        match self {
            EntryMode::Byte => entry_bytes(n),
            EntryMode::Bits32 => 4,
        }
    }
    /// The mode's name (`byte`, `32bit`).
    pub fn name(self) -> &'static str {
        match self {
            EntryMode::Byte => "byte",
            EntryMode::Bits32 => "32bit",
        }
    }
}

/// The mapping schemes the model covers: the FTLs, by [`FtlKind`](ssd_core::config::FtlKind)'s names
/// and in its order.
pub use ssd_core::config::FtlKind as Scheme;

/// Parse a comma list of FTL names, or `all`, into the schemes it stands
/// for, in table order.
pub fn parse_schemes(s: &str) -> Result<Vec<Scheme>, String> {
    let mut v = Vec::new();
    for part in s.split(',') {
        let p = part.trim();
        if p == "all" {
            v.extend(Scheme::ALL.into_iter().filter(|s| !s.is_zoned()));
            continue;
        }
        let scheme = Scheme::parse(p).map_err(|_| {
            format!("unknown mapping scheme {p:?} (page, block, bast, fast, last, dftl, all)")
        })?;
        if scheme.is_zoned() {
            return Err(format!(
                "{p:?} maps no pages or blocks (a zoned namespace keeps one descriptor per zone): not a mapping scheme (page, block, bast, fast, last, dftl, all)"
            ));
        }
        v.push(scheme);
    }
    v.sort();
    v.dedup();
    Ok(v)
}

/// The drive the model sizes tables for.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct MapParams {
    /// Logical (host-visible) capacity in bytes.
    pub capacity: u64,
    /// Bytes per flash page.
    pub page_size: u64,
    /// Pages per erase block.
    pub pages_per_block: u64,
    /// Log area of the hybrid FTLs as a fraction of the capacity.
    pub log_fraction: f64,
    /// Entry width mode.
    pub entry: EntryMode,
    /// DFTL's Cached Mapping Table.
    pub cmt_bytes: u64,
    /// Physical pages an entry must be able to address (None = the capacity's
    /// pages, as in the paper's figure; a drive with over-provisioning has more).
    pub physical_pages: Option<u64>,
}

impl MapParams {
    /// Park et al.'s setting: 64 pages per block, 5 % log area, byte-aligned
    /// entries, 32 KiB CMT.
    pub fn new(capacity: u64, page_size: u64) -> MapParams {
        MapParams {
            capacity,
            page_size,
            pages_per_block: 64,
            log_fraction: 0.05,
            entry: EntryMode::Byte,
            cmt_bytes: 32 * 1024,
            physical_pages: None,
        }
    }
    /// The parameters of a configured drive, so that `table_bytes(Dftl, ..)` equals
    /// what `DftlFtl::mapping_table_bytes` reports for it.
    pub fn for_drive(s: &ssd_core::config::Settings) -> MapParams {
        let g = &s.geometry;
        MapParams {
            capacity: s.logical_bytes(),
            page_size: g.page_size as u64,
            pages_per_block: g.pages_per_block as u64,
            log_fraction: 0.05,
            entry: EntryMode::Byte,
            cmt_bytes: s.config.ftl.dftl.cmt_size.0,
            physical_pages: Some(g.total_pages()),
        }
    }
    /// Logical pages (capacity / page size).
    pub fn logical_pages(&self) -> u64 {
        self.capacity / self.page_size
    }
    /// Logical blocks (whole blocks, rounded up).
    pub fn logical_blocks(&self) -> u64 {
        self.logical_pages().div_ceil(self.pages_per_block)
    }
    fn phys_pages(&self) -> u64 {
        self.physical_pages.unwrap_or_else(|| self.logical_pages())
    }
    fn phys_blocks(&self) -> u64 {
        self.phys_pages().div_ceil(self.pages_per_block)
    }
    /// Bytes of one page-mapping entry (addresses a physical page).
    pub fn page_entry_bytes(&self) -> u64 {
        self.entry.bytes(self.phys_pages())
    }
    /// Page-mapping entries one translation page holds.
    pub fn entries_per_translation_page(&self) -> u64 {
        (self.page_size / self.page_entry_bytes()).max(1)
    }
    /// Translation pages that hold the page-level map (DFTL).
    pub fn translation_pages(&self) -> u64 {
        self.logical_pages()
            .div_ceil(self.entries_per_translation_page())
    }
    /// Pages of the hybrid FTLs' log area (whole blocks).
    pub fn log_pages(&self) -> u64 {
        let blocks = (self.log_fraction * self.logical_blocks() as f64).ceil() as u64;
        blocks * self.pages_per_block
    }
    fn check(&self) -> Result<(), String> {
        if self.page_size == 0 || self.pages_per_block == 0 {
            return Err("page size and pages per block must be non-zero".into());
        }
        if self.capacity < self.page_size {
            return Err(format!(
                "capacity {} is smaller than one page ({})",
                self.capacity, self.page_size
            ));
        }
        if !(0.0..=1.0).contains(&self.log_fraction) {
            return Err(format!(
                "log fraction must be in [0, 1], got {}",
                self.log_fraction
            ));
        }
        Ok(())
    }
}

/// Bytes of mapping tables `scheme` keeps in controller memory for `p`.
///
/// ```
/// use ftl::mapsize::{table_bytes, MapParams, Scheme};
/// // Park et al.: 512 MB of 2 KiB pages, byte-aligned 3-byte entries.
/// assert_eq!(table_bytes(Scheme::Page, &MapParams::new(512 << 20, 2048)), 786_432);
/// ```
pub fn table_bytes(scheme: Scheme, p: &MapParams) -> u64 {
    let block_table = p.logical_blocks() * p.entry.bytes(p.phys_blocks());
    match scheme {
        Scheme::Page => p.logical_pages() * p.page_entry_bytes(),
        Scheme::Block => block_table,
        Scheme::Bast | Scheme::Fast | Scheme::Last => {
            block_table + p.log_pages() * p.page_entry_bytes()
        }
        Scheme::Dftl => p.translation_pages() * p.page_entry_bytes() + p.cmt_bytes,
        // No page or block map: a descriptor per zone, which these
        // parameters do not give (`parse_schemes` refuses it).
        Scheme::Zns => 0,
    }
}

/// One row of the mapping-size table (CSV-ready: plain fields, stable names).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct MapSizeRow {
    /// The scheme's name.
    pub scheme: &'static str,
    /// Logical capacity, bytes.
    pub capacity_bytes: u64,
    /// Bytes per page.
    pub page_size: u64,
    /// Pages per block.
    pub pages_per_block: u64,
    /// Entry width mode (`byte`, `32bit`).
    pub entry_mode: &'static str,
    /// Bytes of one entry: a block-table entry for `block`, a page-table entry for the others.
    pub entry_bytes: u64,
    /// Bytes of the scheme's tables.
    pub table_bytes: u64,
    /// The same in KiB.
    pub table_kib: f64,
}

impl MapSizeRow {
    /// The CSV header matching [`MapSizeRow::csv_line`].
    pub const HEADER: &'static str =
        "scheme,capacity_bytes,page_size,pages_per_block,entry_mode,entry_bytes,table_bytes,table_kib";
    /// The row as one CSV line (no newline).
    pub fn csv_line(&self) -> String {
        format!(
            "{},{},{},{},{},{},{},{:.3}",
            self.scheme,
            self.capacity_bytes,
            self.page_size,
            self.pages_per_block,
            self.entry_mode,
            self.entry_bytes,
            self.table_bytes,
            self.table_kib
        )
    }
}

/// Rows for every (capacity, scheme) pair, capacities outermost, in the given
/// order. `base` supplies everything but the capacity.
pub fn table_rows(
    capacities: &[u64],
    schemes: &[Scheme],
    base: &MapParams,
) -> Result<Vec<MapSizeRow>, String> {
    let mut rows = Vec::with_capacity(capacities.len() * schemes.len());
    for &c in capacities {
        let p = MapParams {
            capacity: c,
            ..*base
        };
        p.check()?;
        for &s in schemes {
            let eb = match s {
                Scheme::Block => p.entry.bytes(p.phys_blocks()),
                _ => p.page_entry_bytes(),
            };
            let t = table_bytes(s, &p);
            rows.push(MapSizeRow {
                scheme: s.name(),
                capacity_bytes: c,
                page_size: p.page_size,
                pages_per_block: p.pages_per_block,
                entry_mode: p.entry.name(),
                entry_bytes: eb,
                table_bytes: t,
                table_kib: t as f64 / 1024.0,
            });
        }
    }
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn park_page_table_512mb() {
        let p = MapParams::new(512 << 20, 2048);
        assert_eq!(p.logical_pages(), 262_144);
        assert_eq!(p.page_entry_bytes(), 3);
        assert_eq!(table_bytes(Scheme::Page, &p), 786_432);
    }

    #[test]
    fn block_hybrid_dftl_512mb() {
        let p = MapParams::new(512 << 20, 2048);
        // 4096 blocks -> 12-bit entries -> 2 bytes each.
        assert_eq!(table_bytes(Scheme::Block, &p), 4096 * 2);
        // Log area: ceil(0.05 * 4096) = 205 blocks = 13,120 pages of 3-byte entries.
        assert_eq!(table_bytes(Scheme::Bast, &p), 8192 + 13_120 * 3);
        assert_eq!(table_bytes(Scheme::Fast, &p), table_bytes(Scheme::Last, &p));
        // 2048 / 3 = 682 entries per translation page -> 385 translation pages.
        assert_eq!(p.translation_pages(), 385);
        assert_eq!(table_bytes(Scheme::Dftl, &p), 385 * 3 + 32 * 1024);
    }

    #[test]
    fn bits32_and_ordering() {
        let mut p = MapParams::new(1 << 30, 2048);
        p.entry = EntryMode::Bits32;
        assert_eq!(table_bytes(Scheme::Page, &p), 524_288 * 4);
        assert_eq!(table_bytes(Scheme::Block, &p), 8192 * 4);
        assert_eq!(table_bytes(Scheme::Dftl, &p), 1024 * 4 + 32768);
        // Page mapping is the largest and grows linearly with capacity.
        for cap in [256u64 << 20, 1 << 30, 4 << 30] {
            let q = MapParams::new(cap, 2048);
            let page = table_bytes(Scheme::Page, &q);
            for s in [Scheme::Block, Scheme::Bast, Scheme::Dftl] {
                assert!(table_bytes(s, &q) < page, "{s} at {cap}");
            }
            assert!(table_bytes(Scheme::Block, &q) < table_bytes(Scheme::Bast, &q));
        }
    }

    #[test]
    fn rows_and_parse() {
        let s = parse_schemes("all").unwrap();
        assert_eq!(s.len(), 6);
        assert_eq!(
            parse_schemes("dftl,page").unwrap(),
            vec![Scheme::Page, Scheme::Dftl]
        );
        assert!(parse_schemes("pag").unwrap_err().contains("pag"));
        let rows = table_rows(
            &[512 << 20, 1 << 30],
            &[Scheme::Page],
            &MapParams::new(0, 2048),
        )
        .unwrap();
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[0].table_bytes, 786_432);
        assert_eq!(
            rows[0].csv_line(),
            "page,536870912,2048,64,byte,3,786432,768.000"
        );
        assert!(table_rows(&[100], &[Scheme::Page], &MapParams::new(0, 2048)).is_err());
    }
}
