//! The page cache's configuration (`[page_cache]`): its size, Linux's
//! writeback and readahead knobs, and how the host's memory divides.

use super::*;

/// The page cache's size and Linux's writeback and readahead knobs, with
/// their sysctl names and defaults.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct PageCacheConfig {
    /// The host's memory (RAM). Default 2 GiB, the memory of Sun et al.'s
    /// host. The page cache gets what the kernel and the application leave
    /// of it (see [`PageCacheConfig::plan`]).
    pub memory: Size,
    /// Memory the kernel holds beyond its page descriptors and its free-page
    /// reserve, which are computed from `memory`: its image, slab caches,
    /// page tables. Default 0 (not modelled unless set).
    pub kernel_memory: Size,
    /// Whether the host has swap space. Linux 2.6.35 counts the
    /// application's anonymous memory as dirtyable only with swap
    /// (`global_reclaimable_pages`); current kernels never do. Default true
    /// (Ubuntu's installer makes a swap partition).
    pub swap: bool,
    /// The page cache's memory, pinned: also the "available memory" the
    /// dirty ratios are taken of, whatever the kernel and the application
    /// hold. Default 0: computed from `memory` (see
    /// [`PageCacheConfig::plan`]).
    pub size: Size,
    /// `vm.dirty_background_ratio`: percent of `size` dirty at which the
    /// flusher starts background writeback.
    pub dirty_background_ratio: u32,
    /// `vm.dirty_ratio`: percent of `size` dirty (plus under writeback) at
    /// which writers are throttled.
    pub dirty_ratio: u32,
    /// `vm.dirty_background_bytes`: overrides the ratio when non-zero.
    pub dirty_background_bytes: Size,
    /// `vm.dirty_bytes`: overrides the ratio when non-zero.
    pub dirty_bytes: Size,
    /// `vm.dirty_expire_centisecs`: dirty data older than this is written by
    /// the periodic (kupdate) writeback.
    pub dirty_expire_centisecs: u32,
    /// `vm.dirty_writeback_centisecs`: the flusher's period (0: no periodic
    /// writeback).
    pub dirty_writeback_centisecs: u32,
    /// `/sys/block/*/queue/read_ahead_kb` (0: no readahead).
    pub read_ahead_kb: u32,
}

impl Default for PageCacheConfig {
    fn default() -> Self {
        PageCacheConfig {
            memory: Size::gib(2),
            kernel_memory: Size(0),
            swap: true,
            size: Size(0),
            dirty_background_ratio: 10,
            dirty_ratio: 20,
            dirty_background_bytes: Size(0),
            dirty_bytes: Size(0),
            dirty_expire_centisecs: 3000,
            dirty_writeback_centisecs: 500,
            read_ahead_kb: 128,
        }
    }
}

impl PageCacheConfig {
    /// Refuse what Linux refuses or what cannot run.
    pub fn validate(&self) -> Result<(), ConfigError> {
        let min = MIN_CACHE;
        if self.memory.0 < min {
            return Err(invalid(
                "page_cache.memory",
                format!(
                    "{} bytes is too small: at least 16 MiB (readahead windows and dirty pages must fit)",
                    self.memory.0
                ),
            ));
        }
        if self.memory.0 > 1 << 44 {
            return Err(invalid("page_cache.memory", "more than 16 TiB"));
        }
        if self.kernel_memory.0 >= self.memory.0 {
            return Err(invalid(
                "page_cache.kernel_memory",
                format!(
                    "{} bytes leaves nothing of the host's memory ({} bytes)",
                    self.kernel_memory.0, self.memory.0
                ),
            ));
        }
        if self.size.0 != 0 && self.size.0 < min {
            return Err(invalid(
                "page_cache.size",
                format!(
                    "{} bytes is too small: at least 16 MiB (readahead windows and dirty pages must fit)",
                    self.size.0
                ),
            ));
        }
        if self.size.0 > self.memory.0 {
            return Err(invalid(
                "page_cache.size",
                format!(
                    "{} bytes is more than the host's memory (page_cache.memory, {} bytes)",
                    self.size.0, self.memory.0
                ),
            ));
        }
        for (f, v) in [
            (
                "page_cache.dirty_background_ratio",
                self.dirty_background_ratio,
            ),
            ("page_cache.dirty_ratio", self.dirty_ratio),
        ] {
            if v > 100 {
                return Err(invalid(f, format!("{v} is not a percentage (0..=100)")));
            }
        }
        if self.dirty_bytes.0 == 0 && self.dirty_ratio == 0 {
            return Err(invalid(
                "page_cache.dirty_ratio",
                "0 with dirty_bytes 0 leaves no room for a dirty page (Linux refuses it too)",
            ));
        }
        for (f, v) in [
            ("page_cache.dirty_bytes", self.dirty_bytes.0),
            (
                "page_cache.dirty_background_bytes",
                self.dirty_background_bytes.0,
            ),
        ] {
            if v > self.memory.0 {
                return Err(invalid(
                    f,
                    format!(
                        "{v} bytes is more than the host's memory ({} bytes)",
                        self.memory.0
                    ),
                ));
            }
            if v != 0 && v < 2 * PAGE {
                return Err(invalid(
                    f,
                    format!("{v} bytes is less than two pages (Linux's minimum is 2 pages)"),
                ));
            }
        }
        if self.dirty_expire_centisecs as u64 * 10_000_000 > Dur::MAX.0
            || self.dirty_writeback_centisecs as u64 * 10_000_000 > Dur::MAX.0
        {
            return Err(invalid("page_cache.dirty_expire_centisecs", "too long"));
        }
        Ok(())
    }

    /// (background, dirty) thresholds in pages of `dirtyable` bytes of
    /// dirtyable memory, as `domain_dirty_limits` (mm/page-writeback.c;
    /// 2.6.35's `get_dirty_limits`) takes them: `dirty_bytes` rounded up
    /// to pages, else `dirty_ratio` percent of it; the same for the
    /// background threshold, halved when it is not below the dirty one.
    pub fn thresholds_of(&self, dirtyable: u64) -> (u64, u64) {
        let pages = dirtyable / PAGE;
        let dirty = if self.dirty_bytes.0 > 0 {
            self.dirty_bytes.0.div_ceil(PAGE)
        } else {
            pages * self.dirty_ratio as u64 / 100
        }
        .max(1);
        let mut bg = if self.dirty_background_bytes.0 > 0 {
            self.dirty_background_bytes.0.div_ceil(PAGE)
        } else {
            pages * self.dirty_background_ratio as u64 / 100
        };
        if bg >= dirty {
            bg = dirty / 2;
        }
        (bg, dirty)
    }

    /// (background, dirty) thresholds in pages on the current kernel with
    /// no application memory (see [`PageCacheConfig::plan`]).
    ///
    /// # Panics
    /// If the configuration leaves no page cache (`validate` refuses it).
    pub fn thresholds(&self) -> (u64, u64) {
        let p = self
            .plan(Kernel::Current, 0)
            .expect("a valid page cache configuration");
        (p.background_pages, p.dirty_pages)
    }

    /// How the host's memory divides between the kernel, the application
    /// (`app_bytes` of anonymous memory: Filebench's per-thread `memsize`,
    /// fio's I/O buffers) and the page cache, and the dirty thresholds, on
    /// `kernel`:
    ///
    /// * **The kernel** keeps a page descriptor (`struct page`) for every
    ///   4 KiB page of RAM, allocated at boot: 56 bytes in 2.6.35's layout
    ///   (flags, `_count`, `_mapcount`, `private`, `mapping`, `index`,
    ///   `lru`), 64 in current kernels; plus `kernel_memory`.
    /// * **The free-page reserve**: `min_free_kbytes` is
    ///   `int_sqrt(lowmem_kbytes * 16)`, clamped to [128, 65536] KiB
    ///   (262144 in current kernels; `init_per_zone_wmark_min`, taking all
    ///   of RAM as one zone); the high watermark is `min + min / 2` on
    ///   2.6.35 and `min + 2 * max(min / 4, 0.1 % of RAM)` on current
    ///   kernels (`__setup_per_zone_wmarks`, `watermark_scale_factor` 10).
    ///   kswapd keeps that many pages free, so the cache cannot use them
    ///   (`calculate_totalreserve_pages`; one zone, no `lowmem_reserve`).
    /// * **The page cache** gets the rest: RAM less the kernel, the
    ///   reserve and the application.
    /// * **Dirtyable memory** (what the dirty ratios are taken of): on
    ///   2.6.35 free plus reclaimable pages, `determine_dirtyable_memory`:
    ///   `NR_FREE_PAGES + global_reclaimable_pages()`, the latter counting
    ///   anonymous pages only with swap, and no reserve taken off; on
    ///   current kernels free plus file pages less the reserve
    ///   (`global_dirtyable_memory`; anonymous memory left out since 3.14),
    ///   which is the cache's share.
    ///
    /// A pinned `size` is both the cache and the dirtyable memory. Refused,
    /// naming the fields, when the kernel and the application leave less
    /// than 16 MiB, or when a pinned size or `read_ahead_kb` does not fit.
    pub fn plan(&self, kernel: Kernel, app_bytes: u64) -> Result<MemoryPlan, ConfigError> {
        let ram = self.memory.0;
        let pages = ram / PAGE;
        let (struct_page, max_min_kb) = match kernel {
            Kernel::V2_6_35 => (56, 65_536),
            Kernel::Current => (64, 262_144),
        };
        let kernel_bytes = (pages * struct_page).saturating_add(self.kernel_memory.0);
        let min_kb = isqrt(ram / 1024 * 16).clamp(128, max_min_kb);
        let min = min_kb * 1024 / PAGE;
        let high = match kernel {
            Kernel::V2_6_35 => min + min / 2,
            Kernel::Current => min + 2 * (min / 4).max(pages * 10 / 10_000),
        };
        let reserve = high * PAGE;
        let left = ram.saturating_sub(
            kernel_bytes
                .saturating_add(reserve)
                .saturating_add(app_bytes),
        );
        let (cache, dirtyable) = if self.size.0 != 0 {
            if self.size.0 > left {
                return Err(invalid(
                    "page_cache.size",
                    format!(
                        "{} bytes is more than the memory the kernel and the application leave ({left} bytes of page_cache.memory's {ram}: kernel {kernel_bytes}, free-page reserve {reserve}, application {app_bytes})",
                        self.size.0
                    ),
                ));
            }
            (self.size.0, self.size.0)
        } else {
            if left < MIN_CACHE {
                return Err(invalid(
                    "page_cache.memory",
                    format!(
                        "{ram} bytes leave {left} bytes for the page cache (at least 16 MiB) after the kernel ({kernel_bytes}), the free-page reserve ({reserve}) and the application's memory ({app_bytes} bytes: Filebench's memsize per thread, fio's I/O buffers)"
                    ),
                ));
            }
            let dirtyable = match kernel {
                Kernel::V2_6_35 if self.swap => ram - kernel_bytes,
                Kernel::V2_6_35 => ram - kernel_bytes - app_bytes,
                Kernel::Current => left,
            };
            (left, dirtyable)
        };
        if self.read_ahead_kb as u64 * 1024 * 4 > cache {
            return Err(invalid(
                "page_cache.read_ahead_kb",
                format!(
                    "{} KiB is more than a quarter of the page cache ({cache} bytes)",
                    self.read_ahead_kb
                ),
            ));
        }
        let (background_pages, dirty_pages) = self.thresholds_of(dirtyable);
        Ok(MemoryPlan {
            ram,
            kernel: kernel_bytes,
            reserve,
            application: app_bytes,
            cache,
            dirtyable,
            background_pages,
            dirty_pages,
        })
    }
}

/// The smallest page cache (readahead windows and dirty pages must fit).
const MIN_CACHE: u64 = 16 * 1024 * 1024;

/// `int_sqrt`: the integer square root, rounded down.
fn isqrt(x: u64) -> u64 {
    let mut r = (x as f64).sqrt() as u64;
    while r * r > x {
        r -= 1;
    }
    while (r + 1) * (r + 1) <= x {
        r += 1;
    }
    r
}

/// How the host's memory divides ([`PageCacheConfig::plan`]), in bytes,
/// and the dirty thresholds in pages.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MemoryPlan {
    /// The host's memory.
    pub ram: u64,
    /// The kernel's own: page descriptors and `kernel_memory`.
    pub kernel: u64,
    /// The free pages kswapd keeps (the high watermark).
    pub reserve: u64,
    /// The application's anonymous memory.
    pub application: u64,
    /// What the page cache may hold.
    pub cache: u64,
    /// What the dirty ratios are taken of.
    pub dirtyable: u64,
    /// Dirty pages at which the flusher starts background writeback.
    pub background_pages: u64,
    /// Dirty plus writeback pages at which writers are throttled.
    pub dirty_pages: u64,
}
