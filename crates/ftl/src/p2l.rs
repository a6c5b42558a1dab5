//! An exact, compressed physical-to-logical (P2L) map for page-mapped FTLs.
//!
//! A plain P2L table holds one `u32` per physical page: 1 GiB on a 1 TiB drive of
//! 4 KiB pages. Two facts make most of that redundant:
//!
//! * Validity need not be stored here. A page `p` holds live data iff
//!   `l2p[p2l(p)] == p`, so overwrites, trims and GC copies never touch the P2L;
//!   it only records which LPN each *programmed* page was written with.
//! * Pages of a block are programmed in order, and the LPNs a block receives very
//!   often form an arithmetic run `base, base + stride, base + 2 * stride, ...`: a
//!   sequential fill striped over N planes gives stride N, a sequential stream
//!   stride 1 (or N).
//!
//! So each block starts as a **run** (base, stride; a block with 0 or 1 pages
//! written is trivially one), costing 12 bytes whatever its size. The first
//! program that breaks the run moves the block to a **dense** chunk of
//! `pages_per_block` `u32`s from a slab (one `Vec<u32>` of chunks plus a free
//! list of chunk indices; no per-block allocation, and none per write once the
//! slab has grown), materialising the entries written so far. Erasing a block
//! returns its chunk to the free list. Lookups are O(1) in both forms and the
//! map is exact: [`P2l::get`] returns precisely the LPN last programmed at a page
//! (None for a page not programmed since its block's erase).
//!
//! A random-write steady state densifies most blocks (GC copies and random host
//! writes do not form runs), so there the map costs about what the plain table
//! did, plus 12 bytes a block; the saving is for filled, sequentially written and
//! read-mostly drives.

use ssd_core::{BlockId, Geometry, Ppn};

/// Sentinel for "no LPN" inside the packed tables (never returned by the API).
const NONE: u32 = u32::MAX;
/// Flag in [`Meta::n`]: the block's entries live in the slab chunk at `Meta::a`.
const DENSE: u32 = 1 << 31;

/// Per-block header, kept together so a lookup touches one cache line.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
struct Meta {
    /// Run: LPN of page 0. Dense: offset of the block's chunk in the slab (a
    /// multiple of `pages_per_block`; fits a `u32` as the page count does).
    a: u32,
    /// Run: LPN step between consecutive pages (wrapping arithmetic, so any two
    /// first LPNs, including a descending pair, start a run).
    stride: u32,
    /// Pages programmed since the last erase, or'ed with [`DENSE`].
    n: u32,
}

/// A copy of one block's P2L header (see [`P2l::view`]).
#[derive(Clone, Copy, Debug, serde::Serialize, serde::Deserialize)]
pub struct BlockView {
    a: u32,
    stride: u32,
    written: u32,
    dense: bool,
}

impl BlockView {
    /// Pages programmed in the block when the view was taken.
    pub fn written(&self) -> u32 {
        self.written
    }
}

/// The compressed P2L map (see the module docs).
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct P2l {
    ppb: u32,
    /// log2(ppb) when it is a power of two (a shift instead of a division).
    ppb_shift: Option<u32>,
    meta: Vec<Meta>,
    /// Dense chunks, `ppb` entries each. Entries at or past a block's written
    /// count are stale and never read.
    slab: Vec<u32>,
    /// Offsets of the chunks not owned by any block (reused last-freed first).
    free: Vec<u32>,
}

impl P2l {
    /// An empty map (every block erased) for the drive `g`.
    pub fn new(g: &Geometry) -> P2l {
        P2l {
            ppb: g.pages_per_block,
            ppb_shift: g
                .pages_per_block
                .is_power_of_two()
                .then(|| g.pages_per_block.trailing_zeros()),
            meta: vec![Meta::default(); g.total_blocks() as usize],
            slab: Vec::new(),
            free: Vec::new(),
        }
    }

    #[inline(always)]
    fn block_index(&self, p: Ppn) -> usize {
        match self.ppb_shift {
            Some(sh) => (p.0 >> sh) as usize,
            None => (p.0 / self.ppb) as usize,
        }
    }

    /// Record that page `p`, the next unprogrammed page of its block, was
    /// programmed with `lpn`.
    #[inline(always)]
    pub fn set(&mut self, p: Ppn, lpn: u32) {
        let b = self.block_index(p);
        debug_assert_eq!(
            p.0 % self.ppb,
            self.written(BlockId(b as u32)),
            "P2L: block {b} programmed out of order"
        );
        self.push(BlockId(b as u32), lpn);
    }

    /// Record that the next unprogrammed page of block `b` was programmed with
    /// `lpn` ([`P2l::set`] for a caller that knows the block: no division).
    #[inline(always)]
    pub fn push(&mut self, b: BlockId, lpn: u32) {
        debug_assert_ne!(
            lpn, NONE,
            "P2L push into block {} of the NONE sentinel",
            b.0
        );
        let b = b.0 as usize;
        let m = &mut self.meta[b];
        // Pages are programmed in order, so the page index is the written count.
        let k = m.n & !DENSE;
        debug_assert!(k < self.ppb, "P2L: block {b} is full");
        if m.n & DENSE != 0 {
            let i = (m.a + k) as usize;
            m.n += 1;
            self.slab[i] = lpn;
            return;
        }
        if k == 0 {
            m.a = lpn;
            m.stride = 0;
        } else if k == 1 {
            m.stride = lpn.wrapping_sub(m.a);
        } else if m.a.wrapping_add(k.wrapping_mul(m.stride)) != lpn {
            self.densify(b, k, lpn);
            return;
        }
        m.n += 1;
    }

    /// Move run block `b` (with `k` pages written) to a slab chunk and append
    /// `lpn` as its page `k`.
    #[cold]
    #[inline(never)]
    fn densify(&mut self, b: usize, k: u32, lpn: u32) {
        let ppb = self.ppb as usize;
        let c = match self.free.pop() {
            Some(c) => c as usize,
            None => {
                let c = self.slab.len();
                self.slab.resize(c + ppb, NONE);
                c
            }
        };
        let Meta { a: base, stride, n } = self.meta[b];
        let chunk = &mut self.slab[c..c + ppb];
        for (i, e) in chunk[..k as usize].iter_mut().enumerate() {
            *e = base.wrapping_add((i as u32).wrapping_mul(stride));
        }
        chunk[k as usize] = lpn;
        self.meta[b] = Meta {
            a: c as u32,
            stride: 0,
            n: (n + 1) | DENSE,
        };
    }

    /// The LPN page `p` was programmed with, or None if it has not been
    /// programmed since its block was erased. Says nothing about validity: the
    /// page is live iff the L2P maps that LPN back to `p`.
    #[inline]
    pub fn get(&self, p: Ppn) -> Option<u32> {
        let b = self.block_index(p);
        self.get_in(BlockId(b as u32), p.0 - b as u32 * self.ppb)
    }

    /// [`P2l::get`] of page `k` of block `b` (no division: for block scans).
    #[inline(always)]
    pub fn get_in(&self, b: BlockId, k: u32) -> Option<u32> {
        let m = self.meta[b.0 as usize];
        if k >= m.n & !DENSE {
            None
        } else if m.n & DENSE != 0 {
            Some(self.slab[(m.a + k) as usize])
        } else {
            Some(m.a.wrapping_add(k.wrapping_mul(m.stride)))
        }
    }

    /// Ask the CPU for block `b`'s header (a hint: nothing changes).
    pub fn prefetch_meta(&self, b: BlockId) {
        if let Some(m) = self.meta.get(b.0 as usize) {
            ssd_core::ftl::prefetch_read(m);
        }
    }

    /// Ask the CPU for block `b`'s entries (a hint: nothing changes).
    pub fn prefetch_block(&self, b: BlockId) {
        let Some(m) = self.meta.get(b.0 as usize) else {
            return;
        };
        if m.n & DENSE == 0 {
            return;
        }
        let chunk = m.a as usize..m.a as usize + self.ppb as usize;
        for e in self.slab.get(chunk).unwrap_or_default().iter().step_by(16) {
            ssd_core::ftl::prefetch_read(e);
        }
    }

    /// A snapshot of block `b`'s entries for a scan (one header load for the
    /// whole block); read them with [`P2l::lpn`].
    #[inline]
    pub fn view(&self, b: BlockId) -> BlockView {
        let m = self.meta[b.0 as usize];
        BlockView {
            a: m.a,
            stride: m.stride,
            written: m.n & !DENSE,
            dense: m.n & DENSE != 0,
        }
    }

    /// The LPN of page `k` of the viewed block, `k < v.written()`; valid while the
    /// block is not erased (programming other blocks does not disturb it).
    #[inline(always)]
    pub fn lpn(&self, v: &BlockView, k: u32) -> u32 {
        debug_assert!(k < v.written, "P2L view read of unwritten page {k}");
        if v.dense {
            self.slab[(v.a + k) as usize]
        } else {
            v.a.wrapping_add(k.wrapping_mul(v.stride))
        }
    }

    /// Pages programmed in block `b` since its last erase.
    #[inline]
    pub fn written(&self, b: BlockId) -> u32 {
        self.meta[b.0 as usize].n & !DENSE
    }

    /// Is block `b` stored as a dense chunk (rather than a run)?
    pub fn is_dense(&self, b: BlockId) -> bool {
        self.meta[b.0 as usize].n & DENSE != 0
    }

    /// Forget block `b`'s entries (it was erased): a dense block's chunk goes
    /// back to the free list and the block becomes an empty run.
    pub fn erase(&mut self, b: BlockId) {
        let m = &mut self.meta[b.0 as usize];
        if m.n & DENSE != 0 {
            self.free.push(m.a);
        }
        *m = Meta::default();
    }

    /// Blocks currently stored dense.
    pub fn dense_blocks(&self) -> usize {
        self.slab.len() / self.ppb as usize - self.free.len()
    }

    /// Heap bytes held (capacity, not just length).
    pub fn heap_bytes(&self) -> u64 {
        (self.meta.capacity() * std::mem::size_of::<Meta>()
            + (self.slab.capacity() + self.free.capacity()) * std::mem::size_of::<u32>())
            as u64
    }

    /// Internal consistency: written counts fit a block, every slab chunk is
    /// owned by exactly one dense block or is on the free list.
    pub fn check(&self) -> Result<(), String> {
        let ppb = self.ppb as usize;
        if !self.slab.len().is_multiple_of(ppb) {
            return Err(format!(
                "P2L slab holds {} entries, not a multiple of {ppb}",
                self.slab.len()
            ));
        }
        let chunks = self.slab.len() / ppb;
        let mut owner = vec![NONE; chunks];
        for (b, m) in self.meta.iter().enumerate() {
            let n = m.n & !DENSE;
            if n > self.ppb {
                return Err(format!("P2L block {b}: {n} pages written of {ppb}"));
            }
            if m.n & DENSE == 0 {
                continue;
            }
            if !(m.a as usize).is_multiple_of(ppb) {
                return Err(format!(
                    "P2L block {b}: slab offset {} not chunk-aligned",
                    m.a
                ));
            }
            let c = m.a as usize / ppb;
            if c >= chunks {
                return Err(format!("P2L block {b}: chunk {c} past the slab ({chunks})"));
            }
            if owner[c] != NONE {
                return Err(format!(
                    "P2L chunk {c} owned by blocks {} and {b}",
                    owner[c]
                ));
            }
            owner[c] = b as u32;
        }
        for &off in &self.free {
            let c = off as usize / ppb;
            if !(off as usize).is_multiple_of(ppb) || c >= chunks || owner[c] != NONE {
                return Err(format!(
                    "P2L free chunk at {off} is misaligned, out of range or owned"
                ));
            }
            owner[c] = NONE - 1;
        }
        if let Some(c) = owner.iter().position(|&o| o == NONE) {
            return Err(format!("P2L chunk {c} is neither owned nor free"));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn geo(blocks_per_plane: u32, pages_per_block: u32) -> Geometry {
        Geometry {
            channels: 2,
            ways: 1,
            dies: 1,
            planes: 1,
            blocks_per_plane,
            pages_per_block,
            page_size: 4096,
        }
    }

    /// Program the next pages of block `b` with `lpns`.
    fn program(m: &mut P2l, g: &Geometry, b: u32, lpns: &[u32]) {
        let first = g.first_page(BlockId(b)).0 + m.written(BlockId(b));
        for (i, &l) in lpns.iter().enumerate() {
            m.set(Ppn(first + i as u32), l);
        }
    }

    fn block(m: &P2l, g: &Geometry, b: u32) -> Vec<Option<u32>> {
        let first = g.first_page(BlockId(b)).0;
        (0..g.pages_per_block)
            .map(|k| m.get(Ppn(first + k)))
            .collect()
    }

    #[test]
    fn runs_of_any_stride_stay_compact() {
        let g = geo(4, 8);
        let mut m = P2l::new(&g);
        program(&mut m, &g, 0, &[5, 6, 7, 8, 9, 10, 11, 12]);
        program(&mut m, &g, 1, &[3, 19, 35, 51]); // stride 16, partly written
        program(&mut m, &g, 2, &[100, 99, 98]); // descending: wrapping stride
        program(&mut m, &g, 3, &[42]);
        assert_eq!(m.dense_blocks(), 0);
        assert_eq!(m.slab.len(), 0);
        assert_eq!(block(&m, &g, 0), (5..13).map(Some).collect::<Vec<_>>());
        let b1 = block(&m, &g, 1);
        assert_eq!(&b1[..4], &[Some(3), Some(19), Some(35), Some(51)]);
        assert!(b1[4..].iter().all(Option::is_none));
        assert_eq!(
            &block(&m, &g, 2)[..4],
            &[Some(100), Some(99), Some(98), None]
        );
        assert_eq!(&block(&m, &g, 3)[..2], &[Some(42), None]);
        for b in 4..8 {
            assert!(block(&m, &g, b).iter().all(Option::is_none));
        }
        m.check().unwrap();
    }

    #[test]
    fn breaking_a_run_materialises_earlier_entries() {
        let g = geo(2, 8);
        let mut m = P2l::new(&g);
        program(&mut m, &g, 1, &[10, 20, 30]);
        assert!(!m.is_dense(BlockId(1)));
        program(&mut m, &g, 1, &[7]);
        assert!(m.is_dense(BlockId(1)));
        assert_eq!(m.dense_blocks(), 1);
        program(&mut m, &g, 1, &[50, 60]);
        assert_eq!(
            block(&m, &g, 1),
            [10, 20, 30, 7, 50, 60]
                .map(Some)
                .into_iter()
                .chain([None, None])
                .collect::<Vec<_>>()
        );
        // A break at page 2 (the first page that can break a run).
        program(&mut m, &g, 0, &[1, 2, 4]);
        assert!(m.is_dense(BlockId(0)));
        assert_eq!(&block(&m, &g, 0)[..4], &[Some(1), Some(2), Some(4), None]);
        m.check().unwrap();
    }

    #[test]
    fn erase_frees_the_chunk_for_reuse_and_resets_the_run() {
        let g = geo(2, 4);
        let mut m = P2l::new(&g);
        program(&mut m, &g, 0, &[1, 2, 9, 3]);
        assert_eq!(m.dense_blocks(), 1);
        m.erase(BlockId(0));
        assert_eq!(m.dense_blocks(), 0);
        assert!(block(&m, &g, 0).iter().all(Option::is_none));
        // The reused block is a run again; its stale chunk is not visible.
        program(&mut m, &g, 0, &[8, 10]);
        assert!(!m.is_dense(BlockId(0)));
        assert_eq!(block(&m, &g, 0), vec![Some(8), Some(10), None, None]);
        m.check().unwrap();
        // Another block densifying takes the freed chunk: the slab does not grow.
        let slab = m.slab.len();
        program(&mut m, &g, 3, &[0, 0, 1]);
        assert_eq!(m.slab.len(), slab);
        assert_eq!(m.dense_blocks(), 1);
        assert_eq!(&block(&m, &g, 3)[..3], &[Some(0), Some(0), Some(1)]);
        // Erasing a run block frees nothing.
        m.erase(BlockId(0));
        assert_eq!(m.free.len(), 0);
        m.check().unwrap();
    }

    #[test]
    fn heap_is_small_for_run_blocks() {
        let g = geo(1024, 256);
        let mut m = P2l::new(&g);
        for b in 0..g.total_blocks() {
            let lpns: Vec<u32> = (0..256).map(|k| b + 2048 * k).collect();
            program(&mut m, &g, b, &lpns);
        }
        // 12 bytes a block instead of 4 bytes a page.
        assert_eq!(m.heap_bytes(), 12 * g.total_blocks() as u64);
        assert_eq!(m.get(Ppn(256 * 7 + 3)), Some(7 + 2048 * 3));
    }

    #[derive(Clone, Debug)]
    enum Op {
        /// Program `n` pages of block `b`: continue a run with `stride` from the
        /// last LPN with probability ~3/4, else a random LPN.
        Program {
            b: u32,
            n: u32,
            stride: u32,
            lpns: Vec<(bool, u32)>,
        },
        Erase {
            b: u32,
        },
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            4 => (0u32..6, 1u32..12, prop_oneof![Just(1u32), Just(6), Just(u32::MAX), any::<u32>()],
                  prop::collection::vec((prop::bool::weighted(0.75), 0u32..1000), 12))
                .prop_map(|(b, n, stride, lpns)| Op::Program { b, n, stride, lpns }),
            1 => (0u32..6).prop_map(|b| Op::Erase { b }),
        ]
    }

    fn cases() -> u32 {
        std::env::var("PROPTEST_CASES")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(64)
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: cases(), ..ProptestConfig::default() })]

        /// Against a plain `Vec<u32>` P2L (NONE = not programmed).
        #[test]
        fn matches_a_plain_table(
            ppb in prop_oneof![Just(8u32), Just(6u32)],
            ops in prop::collection::vec(op(), 1..80),
        ) {
            // 8: shift path; 6: division path.
            let g = geo(3, ppb);
            let ppb = g.pages_per_block;
            let mut m = P2l::new(&g);
            let mut model = vec![NONE; g.total_pages() as usize];
            for op in ops {
                match op {
                    Op::Program { b, n, stride, lpns } => {
                        let first = b * ppb;
                        for &(cont, r) in lpns.iter().take(n as usize) {
                            let k = m.written(BlockId(b));
                            if k == ppb {
                                break;
                            }
                            let prev = if k == 0 { None } else { Some(model[(first + k - 1) as usize]) };
                            let l = match prev {
                                Some(p) if cont => p.wrapping_add(stride),
                                _ => r,
                            };
                            let l = if l == NONE { 0 } else { l };
                            m.set(Ppn(first + k), l);
                            model[(first + k) as usize] = l;
                        }
                    }
                    Op::Erase { b } => {
                        m.erase(BlockId(b));
                        let first = (b * ppb) as usize;
                        model[first..first + ppb as usize].fill(NONE);
                    }
                }
                for (p, &l) in model.iter().enumerate() {
                    prop_assert_eq!(m.get(Ppn(p as u32)), (l != NONE).then_some(l), "ppn {}", p);
                }
                for b in 0..g.total_blocks() {
                    let v = m.view(BlockId(b));
                    prop_assert_eq!(v.written(), m.written(BlockId(b)));
                    for k in 0..v.written() {
                        prop_assert_eq!(m.lpn(&v, k), model[(b * ppb + k) as usize]);
                    }
                }
                m.check().map_err(TestCaseError::fail)?;
                prop_assert!(m.dense_blocks() <= g.total_blocks() as usize);
            }
        }
    }
}
