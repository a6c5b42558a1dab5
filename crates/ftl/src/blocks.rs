//! Shared block management for every FTL: per-block state, valid counts and
//! erase counts in flat tables, per-plane free-block pools, and GC victim
//! selection (greedy, FIFO, random, cost-benefit, windowed greedy).

use rand::Rng;
use ssd_core::config::GcPolicy;
use ssd_core::ftl::FtlWork;
use ssd_core::rng::SimRng;
use ssd_core::{BlockId, FastDiv, Geometry, PlaneId, Ppn};
use std::collections::{BTreeMap, BTreeSet, VecDeque};

/// The victim index: per plane, the full blocks in buckets by valid count
/// (a bitmap over plane-local block ids per bucket, plus a count per bucket:
/// O(1) upkeep when a page dies, touching two bitmap words rather than a
/// list's neighbours, and greedy's answer, the least id in the least bucket,
/// is a scan of contiguous words rather than a walk of scattered records),
/// a Fenwick tree of "is full" by block id (the number of candidates a firmware
/// scan in id order examines up to a block, and the k-th full block), and the
/// full blocks in opening order (FIFO). Kept in step with `state` and `valid`.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
struct VictimIndex {
    /// Buckets per plane (`pages_per_block + 1`).
    nb: usize,
    /// Blocks per plane, and 64-bit words per bucket bitmap (`ceil(bpp / 64)`).
    bpp: usize,
    nw: usize,
    /// `bits[(plane * nb + v) * nw + w]`, bit `i`: plane-local block
    /// `64 w + i` is full and holds `v` valid pages.
    bits: Vec<u64>,
    /// `count[plane * nb + v]`: blocks in that bucket.
    count: Vec<u32>,
    /// Per plane, a 1-based Fenwick tree over plane-local block ids (`bpp + 1` slots).
    fen: Vec<u32>,
    nfull: Vec<u32>,
    /// Per plane, the full blocks by opening order, kept only while
    /// `fifo_on` (the FIFO policy's index; B-tree upkeep costs every fill and
    /// erase a few cache misses that other policies need not pay).
    fifo: Vec<BTreeSet<(u64, u32)>>,
    fifo_on: bool,
}

impl VictimIndex {
    fn new(g: &Geometry) -> VictimIndex {
        let planes = g.total_planes() as usize;
        let nb = g.pages_per_block as usize + 1;
        let bpp = g.blocks_per_plane as usize;
        let nw = bpp.div_ceil(64);
        VictimIndex {
            nb,
            bpp,
            nw,
            bits: vec![0; planes * nb * nw],
            count: vec![0; planes * nb],
            fen: vec![0; planes * (bpp + 1)],
            nfull: vec![0; planes],
            fifo: vec![BTreeSet::new(); planes],
            fifo_on: true,
        }
    }
    /// Where block `b` (global id, of `plane`) sits in bucket `v`: the
    /// bucket's index in `count`, the word in `bits` and the bit.
    #[inline]
    fn slot(&self, plane: usize, v: usize, b: u32) -> (usize, usize, u64) {
        let local = b as usize - plane * self.bpp;
        let k = plane * self.nb + v;
        (k, k * self.nw + local / 64, 1 << (local % 64))
    }
    /// Put block `b` (global id, of `plane`) in bucket `v`.
    #[inline]
    fn link(&mut self, plane: usize, v: usize, b: u32) {
        let (k, w, bit) = self.slot(plane, v, b);
        self.bits[w] |= bit;
        self.count[k] += 1;
    }
    /// Take block `b` (global id, of `plane`) out of bucket `v`.
    #[inline]
    fn unlink(&mut self, plane: usize, v: usize, b: u32) {
        let (k, w, bit) = self.slot(plane, v, b);
        debug_assert!(self.bits[w] & bit != 0);
        self.bits[w] &= !bit;
        self.count[k] -= 1;
    }
    /// The plane-local ids in bucket `v` of `plane`, ascending.
    fn members(&self, plane: usize, v: usize) -> impl Iterator<Item = usize> + '_ {
        let k = plane * self.nb + v;
        self.bits[k * self.nw..(k + 1) * self.nw]
            .iter()
            .enumerate()
            .flat_map(|(w, &x)| {
                let mut x = x;
                std::iter::from_fn(move || {
                    (x != 0).then(|| {
                        let i = x.trailing_zeros() as usize;
                        x &= x - 1;
                        w * 64 + i
                    })
                })
            })
    }
    /// The plane-local id greedy selection takes once `local` (in bucket
    /// `v`) is gone: the next id in its bucket, else the least id of the
    /// next non-empty bucket.
    fn next_after(&self, plane: usize, v: usize, local: usize) -> Option<usize> {
        let k = plane * self.nb + v;
        let words = &self.bits[k * self.nw..(k + 1) * self.nw];
        let (w0, b0) = (local / 64, local % 64);
        let above = words[w0] & (u64::MAX << b0) & !(1u64 << b0);
        if above != 0 {
            return Some(w0 * 64 + above.trailing_zeros() as usize);
        }
        if let Some(w) = (w0 + 1..self.nw).find(|&w| words[w] != 0) {
            return Some(w * 64 + words[w].trailing_zeros() as usize);
        }
        let c = (v + 1..self.nb).find(|&c| self.count[plane * self.nb + c] > 0)?;
        self.members(plane, c).next()
    }
    /// Least plane-local id in the fullest-reclaimable bucket: the non-empty
    /// bucket with the fewest valid pages, and that bucket.
    #[inline]
    fn least(&self, plane: usize) -> Option<(usize, usize)> {
        let c = self.count[plane * self.nb..(plane + 1) * self.nb]
            .iter()
            .position(|&n| n > 0)?;
        let k = plane * self.nb + c;
        let words = &self.bits[k * self.nw..(k + 1) * self.nw];
        let w = words.iter().position(|&x| x != 0)?;
        Some((w * 64 + words[w].trailing_zeros() as usize, c))
    }
    fn fen_add(&mut self, plane: usize, bpp: usize, local: usize, d: i32) {
        let f = &mut self.fen[plane * (bpp + 1)..(plane + 1) * (bpp + 1)];
        let mut i = local + 1;
        while i <= bpp {
            f[i] = f[i].wrapping_add_signed(d);
            i += i & i.wrapping_neg();
        }
    }
    /// Full blocks with plane-local id <= `local`.
    fn fen_rank(&self, plane: usize, bpp: usize, local: usize) -> u64 {
        let f = &self.fen[plane * (bpp + 1)..(plane + 1) * (bpp + 1)];
        let mut i = local + 1;
        let mut r = 0u64;
        while i > 0 {
            r += f[i] as u64;
            i &= i - 1;
        }
        r
    }
    /// Plane-local id of the `k`-th (0-based, in id order) full block.
    fn fen_nth(&self, plane: usize, bpp: usize, k: u32) -> usize {
        let f = &self.fen[plane * (bpp + 1)..(plane + 1) * (bpp + 1)];
        let mut pos = 0usize;
        let mut rem = k + 1;
        let mut step = bpp.next_power_of_two();
        while step > 0 {
            let nx = pos + step;
            if nx <= bpp && f[nx] < rem {
                pos = nx;
                rem -= f[nx];
            }
            step >>= 1;
        }
        pos
    }
}

/// Life cycle of a physical block.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum BlockState {
    /// Erased, in its plane's free pool.
    Free,
    /// Being written (a write frontier / log block).
    Open,
    /// All pages written.
    Full,
}

/// How a free block is chosen from a plane's pool.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum FreePick {
    /// Oldest freed first (rotates naturally).
    Fifo,
    /// Least-worn free block (dynamic wear levelling).
    LeastWorn,
}

/// One plane's free blocks, in the order [`FreePick`] takes them from.
///
/// FIFO keeps them in arrival order (`fifo`). The least-worn pick keeps them
/// in buckets by erase count, each in arrival order (`by_wear`), so that the
/// least-worn block (and the most-worn, static wear levelling's destination)
/// is found at a bucket's front rather than by a scan of the pool: the pick
/// is the one a scan for the least (erase count, arrival) would make. Only
/// the pick's collection is used; `len` counts either (paced GC reads it on
/// every host page).
#[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize)]
struct FreePool {
    len: u32,
    fifo: VecDeque<u32>,
    by_wear: BTreeMap<u32, VecDeque<u32>>,
}

impl FreePool {
    /// Add block `b`, erased `ec` times, as the newest arrival.
    #[inline]
    fn push(&mut self, pick: FreePick, b: u32, ec: u32) {
        self.len += 1;
        match pick {
            FreePick::Fifo => self.fifo.push_back(b),
            FreePick::LeastWorn => self.by_wear.entry(ec).or_default().push_back(b),
        }
    }

    /// The pool's blocks: in arrival order, or by bucket then arrival.
    fn iter(&self) -> impl Iterator<Item = u32> + '_ {
        self.fifo
            .iter()
            .chain(self.by_wear.values().flatten())
            .copied()
    }

    /// Take the front of the bucket of erase count `ec`.
    fn take_from_bucket(&mut self, ec: u32) -> u32 {
        let q = self.by_wear.get_mut(&ec).expect("a bucket in the pool");
        let b = q.pop_front().expect("buckets are never empty");
        if q.is_empty() {
            self.by_wear.remove(&ec);
        }
        self.len -= 1;
        b
    }
}

/// What a page dying or being programmed touches of its block, in one
/// 8-byte record (one cache line access instead of one per table: under
/// random writes every host write kills a page of a random block).
#[derive(Clone, Copy, Debug, serde::Serialize, serde::Deserialize)]
#[repr(C, align(8))]
struct Hot {
    /// Valid pages (low 16 bits) and the next page to program, FTL view
    /// (high 16 bits; mirrors the flash array's write pointer), as one word:
    /// every update is one 32-bit read-modify-write, so a later read of either
    /// is forwarded from the store buffer (a 16-bit store followed by a wider
    /// load stalls until the store retires, and programs come in runs).
    vw: u32,
    state: BlockState,
}

impl Hot {
    #[inline(always)]
    fn valid(&self) -> u16 {
        self.vw as u16
    }
    #[inline(always)]
    fn wp(&self) -> u16 {
        (self.vw >> 16) as u16
    }
}

/// Per-block state of the whole drive: life cycle, valid pages, write pointer, erase count,
/// free pools and the GC victim index (see the module docs).
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct Blocks {
    /// The drive's geometry.
    pub g: Geometry,
    /// `g.pages_per_block` and `g.blocks_per_plane` as divisors (shifts on
    /// the usual power-of-two geometry: every host write splits a page address).
    div_ppb: FastDiv,
    div_bpp: FastDiv,
    hot: Vec<Hot>,
    /// Erases of each block (flat block id).
    pub erase_count: Vec<u32>,
    /// The largest of `erase_count` (the drive's most-worn block), kept by
    /// [`Blocks::erase`], the only place a count grows.
    erase_max: u32,
    /// Per plane: its largest erase count, its smallest, and how many of its
    /// blocks have the smallest (static wear levelling's per-plane spread,
    /// kept by [`Blocks::erase`]; the smallest is found again by a scan of the
    /// plane when its last block leaves it, at most once per `blocks_per_plane`
    /// erases of the plane).
    plane_max: Vec<u32>,
    plane_min: Vec<u32>,
    at_min: Vec<u32>,
    /// Logical time of the last invalidation in the block (cost-benefit age),
    /// kept (and allocated) only while `stamps_on` (see `track_policy`).
    stamp: Vec<u64>,
    stamps_on: bool,
    /// Order in which the block was opened (FIFO victim order).
    pub opened: Vec<u64>,
    free: Vec<FreePool>,
    /// How a free block is taken from a plane's pool (FIFO or least worn).
    pick: FreePick,
    /// Logical clock: advances on every host page write.
    pub clock: u64,
    open_seq: u64,
    /// Current FTL call and, per block, the call that last erased it: allocation
    /// avoids blocks erased in the current call, whose erase may be planned in a
    /// job that runs after the program that would reuse them.
    call: u32,
    erased_in: Vec<u32>,
    /// Greedy, FIFO and random victim index.
    vix: VictimIndex,
}

impl Blocks {
    /// Free the per-block tables before a saved drive replaces these
    /// ([`ssd_core::ftl::Ftl::shed`]); nothing but a drop or an assignment
    /// may follow.
    pub fn shed(&mut self) {
        self.hot = Vec::new();
        self.erase_count = Vec::new();
        self.stamp = Vec::new();
        self.opened = Vec::new();
        self.free = Vec::new();
        self.erased_in = Vec::new();
        self.vix.bits = Vec::new();
        self.vix.fen = Vec::new();
        self.vix.fifo = Vec::new();
    }

    /// Every block of `g` free and never erased.
    pub fn new(g: Geometry) -> Blocks {
        let nb = g.total_blocks() as usize;
        let free = (0..g.total_planes())
            .map(|p| {
                let first = g.first_block_of_plane(PlaneId(p)).0;
                FreePool {
                    len: g.blocks_per_plane,
                    fifo: (first..first + g.blocks_per_plane).collect(),
                    by_wear: BTreeMap::new(),
                }
            })
            .collect();
        let hot = Hot {
            vw: 0,
            state: BlockState::Free,
        };
        Blocks {
            g,
            div_ppb: FastDiv::new(g.pages_per_block as u64),
            div_bpp: FastDiv::new(g.blocks_per_plane as u64),
            hot: vec![hot; nb],
            erase_count: vec![0; nb],
            erase_max: 0,
            plane_max: vec![0; g.total_planes() as usize],
            plane_min: vec![0; g.total_planes() as usize],
            at_min: vec![g.blocks_per_plane; g.total_planes() as usize],
            stamp: vec![0; nb],
            stamps_on: true,
            opened: vec![0; nb],
            free,
            pick: FreePick::Fifo,
            clock: 0,
            open_seq: 0,
            call: 1,
            erased_in: vec![0; nb],
            vix: VictimIndex::new(&g),
        }
    }

    #[inline]
    fn plane_index(&self, b: usize) -> usize {
        self.div_bpp.quot(b as u64) as usize
    }

    /// Keep (`on`) or drop the FIFO victim index. It is on for a new table;
    /// an FTL whose policy is not FIFO turns it off so that fills and erases
    /// skip its upkeep (a FIFO choice then scans the plane instead).
    fn track_fifo(&mut self, on: bool) {
        let v = &mut self.vix;
        if on == v.fifo_on {
            return;
        }
        v.fifo_on = on;
        for f in &mut v.fifo {
            f.clear();
        }
        if on {
            for (i, h) in self.hot.iter().enumerate() {
                if h.state == BlockState::Full {
                    let pl = i / self.g.blocks_per_plane as usize;
                    v.fifo[pl].insert((self.opened[i], i as u32));
                }
            }
        }
    }

    /// Keep the tables that `policy` reads and drop the others' upkeep: the
    /// FIFO index only for FIFO (see `track_fifo`), the invalidation stamps
    /// only for cost-benefit (every page death would otherwise write a stamp).
    /// An FTL calls it once, on a new table (it resets the stamps).
    pub fn track_policy(&mut self, policy: GcPolicy) {
        self.track_fifo(policy == GcPolicy::Fifo);
        self.stamps_on = policy == GcPolicy::CostBenefit;
        // Not kept, not held (8 bytes a block: 32 MiB on a 1 TiB drive).
        self.stamp = if self.stamps_on {
            vec![0; self.hot.len()]
        } else {
            Vec::new()
        };
    }

    /// Number of blocks (all planes).
    #[inline]
    pub fn count(&self) -> usize {
        self.hot.len()
    }
    /// Valid pages of block `b`.
    #[inline]
    pub fn valid(&self, b: usize) -> u16 {
        self.hot[b].valid()
    }
    /// Pages written in block `b` (the next page to program).
    #[inline]
    pub fn wp(&self, b: usize) -> u16 {
        self.hot[b].wp()
    }
    /// Life-cycle state of block `b`.
    #[inline]
    pub fn state(&self, b: usize) -> BlockState {
        self.hot[b].state
    }

    /// The largest erase count of the drive.
    #[inline]
    pub fn erase_max(&self) -> u32 {
        self.erase_max
    }

    /// The largest erase count of `plane`'s blocks.
    #[inline]
    pub fn plane_max(&self, plane: PlaneId) -> u32 {
        self.plane_max[plane.0 as usize]
    }

    /// The smallest erase count of `plane`'s blocks (any state).
    #[inline]
    pub fn plane_min(&self, plane: PlaneId) -> u32 {
        self.plane_min[plane.0 as usize]
    }

    /// Start a new FTL call (see `erased_in`).
    pub fn begin_call(&mut self) {
        self.call = self.call.wrapping_add(1).max(1);
    }

    /// Was block `b` erased during the current call?
    #[inline]
    pub fn erased_this_call(&self, b: BlockId) -> bool {
        self.erased_in[b.0 as usize] == self.call
    }

    /// Pages `plane` can still take without GC: its free blocks' and the room
    /// left in the open blocks `frontiers` (block ids; `u32::MAX` or a block
    /// no longer open counts nothing): paced GC's measure of free space.
    pub fn free_space(&self, plane: PlaneId, frontiers: &[u32]) -> u64 {
        let ppb = self.g.pages_per_block as u64;
        let room = |b: u32| match self.hot.get(b as usize) {
            Some(h) if h.state == BlockState::Open => ppb - h.wp() as u64,
            _ => 0,
        };
        self.free_count(plane) as u64 * ppb + frontiers.iter().map(|&b| room(b)).sum::<u64>()
    }

    /// `free_space(plane, frontiers) < pages`, counting the frontiers' room
    /// only when the free blocks alone do not reach `pages` (a fill, most
    /// pages of a drive with room: paced GC asks on every host page).
    #[inline]
    pub fn space_below(&self, plane: PlaneId, frontiers: &[u32], pages: u64) -> bool {
        self.free_count(plane) as u64 * (self.g.pages_per_block as u64) < pages
            && self.free_space(plane, frontiers) < pages
    }

    /// Free blocks in `plane`'s pool.
    #[inline]
    pub fn free_count(&self, plane: PlaneId) -> u32 {
        self.free[plane.0 as usize].len
    }

    /// How free blocks are taken from the pools; the pools are rebuilt in
    /// the new order (an FTL sets it once, on a new table).
    pub fn set_pick(&mut self, pick: FreePick) {
        if pick == self.pick {
            return;
        }
        let was = std::mem::replace(&mut self.pick, pick);
        for q in &mut self.free {
            let mut arrival: Vec<u32> = q.iter().collect();
            if was == FreePick::LeastWorn {
                // The buckets do not keep the arrival order across counts:
                // order by block id (a new table's order).
                arrival.sort_unstable();
            }
            let mut n = FreePool::default();
            for b in arrival {
                n.push(pick, b, self.erase_count[b as usize]);
            }
            *q = n;
        }
    }

    /// Take a free block of `plane` and open it.
    pub fn alloc(&mut self, plane: PlaneId) -> Option<BlockId> {
        let q = &mut self.free[plane.0 as usize];
        let b = match self.pick {
            FreePick::Fifo => {
                let b = q.fifo.pop_front()?;
                q.len -= 1;
                b
            }
            FreePick::LeastWorn => {
                // The least (erased in this call, erase count, arrival):
                // blocks erased in this call arrived last, so they end each
                // bucket, and a bucket whose front is one holds no other.
                let mut fresh_min = None;
                let mut pick = None;
                for (&ec, bucket) in &q.by_wear {
                    let front = *bucket.front().expect("buckets are never empty");
                    if self.erased_in[front as usize] != self.call {
                        pick = Some(ec);
                        break;
                    }
                    fresh_min.get_or_insert(ec);
                }
                let ec = pick.or(fresh_min)?;
                q.take_from_bucket(ec)
            }
        };
        let bi = b as usize;
        debug_assert_eq!(self.hot[bi].state, BlockState::Free);
        self.hot[bi].state = BlockState::Open;
        self.open_seq += 1;
        self.opened[bi] = self.open_seq;
        Some(BlockId(b))
    }

    /// Program the next page of an open block; returns its address.
    #[inline(always)]
    pub fn program_next(&mut self, b: BlockId) -> Ppn {
        let bi = b.0 as usize;
        assert_eq!(
            self.hot[bi].state,
            BlockState::Open,
            "program into block {} that is not open",
            b.0
        );
        let page = self.hot[bi].wp() as u32;
        self.hot[bi].vw += 1 << 16 | 1;
        if page + 1 == self.g.pages_per_block {
            self.hot[bi].state = BlockState::Full;
            let pl = self.plane_index(bi);
            let bpp = self.g.blocks_per_plane as usize;
            let v = &mut self.vix;
            let valid = self.hot[bi].valid() as usize;
            v.link(pl, valid, b.0);
            v.fen_add(pl, bpp, bi - pl * bpp, 1);
            v.nfull[pl] += 1;
            if v.fifo_on {
                v.fifo[pl].insert((self.opened[bi], b.0));
            }
        }
        Ppn(self.g.first_page(b).0 + page)
    }

    /// Prefetch hint for [`Blocks::invalidate`] of page `p` soon: step 1
    /// fetches its block's record; step 0 (the record is cached by now) the
    /// victim-index words the page's death will touch.
    #[inline]
    pub fn prefetch(&self, p: Ppn, step: u8) {
        let b = self.div_ppb.quot(p.0 as u64) as usize;
        let Some(h) = self.hot.get(b) else {
            return;
        };
        if step == 1 {
            ssd_core::ftl::prefetch_read(h);
        } else if h.state == BlockState::Full && h.valid() > 0 {
            let pl = self.plane_index(b);
            for c in [h.valid() as usize - 1, h.valid() as usize] {
                let (_, w, _) = self.vix.slot(pl, c, b as u32);
                ssd_core::ftl::prefetch_read(&self.vix.bits[w]);
            }
        }
    }

    /// Mark a page's data dead.
    #[inline]
    pub fn invalidate(&mut self, p: Ppn) {
        let b = self.div_ppb.quot(p.0 as u64) as usize;
        debug_assert!(
            self.hot[b].valid() > 0,
            "invalidate in block {b} with no valid pages"
        );
        self.hot[b].vw -= 1;
        if self.stamps_on {
            self.stamp[b] = self.clock;
        }
        if self.hot[b].state == BlockState::Full {
            let pl = self.plane_index(b);
            let v = self.hot[b].valid() as usize;
            self.vix.unlink(pl, v + 1, b as u32);
            self.vix.link(pl, v, b as u32);
        }
    }

    /// Mark `n` pages of block `b` dead at once: the same end state as `n` calls
    /// of [`Blocks::invalidate`] on its pages, with one move in the victim index
    /// instead of `n` (GC empties a whole victim this way).
    #[inline]
    pub fn invalidate_n(&mut self, b: BlockId, n: u16) {
        if n == 0 {
            return;
        }
        let bi = b.0 as usize;
        assert!(
            self.hot[bi].valid() >= n,
            "invalidate {n} pages in block {bi} that holds {} valid",
            self.hot[bi].valid()
        );
        let old = self.hot[bi].valid() as usize;
        self.hot[bi].vw -= n as u32;
        if self.stamps_on {
            self.stamp[bi] = self.clock;
        }
        if self.hot[bi].state == BlockState::Full {
            let pl = self.plane_index(bi);
            let v = self.hot[bi].valid() as usize;
            self.vix.unlink(pl, old, b.0);
            self.vix.link(pl, v, b.0);
        }
    }

    /// Erase a block and return it to its plane's pool.
    pub fn erase(&mut self, b: BlockId) {
        let bi = b.0 as usize;
        assert_eq!(
            self.hot[bi].valid(),
            0,
            "erase of block {} that still holds {} valid pages",
            b.0,
            self.hot[bi].valid()
        );
        if self.hot[bi].state == BlockState::Full {
            let pl = self.plane_index(bi);
            let bpp = self.g.blocks_per_plane as usize;
            let v = &mut self.vix;
            v.unlink(pl, 0, b.0);
            v.fen_add(pl, bpp, bi - pl * bpp, -1);
            v.nfull[pl] -= 1;
            if v.fifo_on {
                v.fifo[pl].remove(&(self.opened[bi], b.0));
            }
        }
        self.hot[bi].state = BlockState::Free;
        self.hot[bi].vw = 0;
        let was = self.erase_count[bi];
        self.erase_count[bi] = was + 1;
        self.erase_max = self.erase_max.max(was + 1);
        let pl = self.plane_index(bi);
        self.plane_max[pl] = self.plane_max[pl].max(was + 1);
        if was == self.plane_min[pl] {
            self.at_min[pl] -= 1;
            if self.at_min[pl] == 0 {
                let bpp = self.g.blocks_per_plane as usize;
                let counts = &self.erase_count[pl * bpp..(pl + 1) * bpp];
                let min = *counts.iter().min().expect("a plane has blocks");
                self.plane_min[pl] = min;
                self.at_min[pl] = counts.iter().filter(|&&c| c == min).count() as u32;
            }
        }
        self.erased_in[bi] = self.call;
        self.free[self.g.plane_of_block(b).0 as usize].push(self.pick, b.0, was + 1);
    }

    /// Whether a full block of `plane` holds an invalid page: something GC
    /// can reclaim (the plane's least valid full block is not all valid).
    pub fn reclaimable(&self, plane: PlaneId) -> bool {
        self.vix
            .least(plane.0 as usize)
            .is_some_and(|(_, valid)| valid < self.g.pages_per_block as usize)
    }

    /// The block greedy selection would take on `plane` after `victim` (a
    /// full block of it) is collected, as the index stands: the next full
    /// block in (valid pages, id) order. For a prefetch only.
    pub fn greedy_next(&self, plane: PlaneId, victim: BlockId) -> Option<BlockId> {
        let v = victim.0 as usize;
        if self.hot[v].state != BlockState::Full {
            return None;
        }
        let first = self.g.first_block_of_plane(plane).0 as usize;
        let m = self
            .vix
            .next_after(plane.0 as usize, self.hot[v].valid() as usize, v - first)?;
        Some(BlockId((first + m) as u32))
    }

    /// Choose a GC victim among the full blocks of `plane`. Counts the candidates
    /// examined into `work.gc_candidates` and returns (victim, examined).
    pub fn select_victim(
        &self,
        plane: PlaneId,
        policy: GcPolicy,
        rng: &mut SimRng,
        work: &mut FtlWork,
    ) -> Option<(BlockId, u64)> {
        let first = self.g.first_block_of_plane(plane).0 as usize;
        let n = self.g.blocks_per_plane as usize;
        let range = first..first + n;
        let full = |i: usize| self.hot[i].state == BlockState::Full;
        let ppb = self.g.pages_per_block as u16;
        let (victim, examined) = match policy {
            GcPolicy::Greedy => {
                // The firmware scan walks the plane's blocks in id order, keeps the
                // first full block with the fewest valid pages and stops early at an
                // empty one; the index gives the same block and the same count.
                let pl = plane.0 as usize;
                match self.vix.least(pl) {
                    None => (None, 0),
                    Some((m, 0)) => (Some(first + m), self.vix.fen_rank(pl, n, m)),
                    Some((m, _)) => (Some(first + m), self.vix.nfull[pl] as u64),
                }
            }
            GcPolicy::Fifo => {
                // Firmware keeps full blocks in a queue: one candidate is examined.
                let best = if self.vix.fifo_on {
                    self.vix.fifo[plane.0 as usize]
                        .first()
                        .map(|&(_, b)| b as usize)
                } else {
                    // Not indexed (see `track_fifo`): the same answer by a scan.
                    range.filter(|&i| full(i)).min_by_key(|&i| self.opened[i])
                };
                (best, 1)
            }
            GcPolicy::Random => {
                let pl = plane.0 as usize;
                let cands = self.vix.nfull[pl];
                if cands == 0 {
                    (None, 0)
                } else {
                    let k = rng.gen_range(0..cands);
                    (Some(first + self.vix.fen_nth(pl, n, k)), 1)
                }
            }
            GcPolicy::CostBenefit => {
                assert!(
                    self.stamps_on,
                    "cost-benefit victims need the invalidation stamps (Blocks::track_policy)"
                );
                let mut best = None;
                let mut bs = f64::MIN;
                let mut ex = 0;
                for i in range {
                    if full(i) {
                        ex += 1;
                        let u = self.hot[i].valid() as f64 / ppb as f64;
                        let age = (self.clock - self.stamp[i]) as f64 + 1.0;
                        let score = if u == 0.0 {
                            f64::MAX
                        } else {
                            age * (1.0 - u) / (2.0 * u)
                        };
                        if score > bs {
                            bs = score;
                            best = Some(i);
                        }
                    }
                }
                (best, ex)
            }
            GcPolicy::Windowed(f) => {
                let cands: Vec<usize> = range.filter(|&i| full(i)).collect();
                if cands.is_empty() {
                    (None, 0)
                } else {
                    let w = ((f * cands.len() as f64).round() as usize).clamp(1, cands.len());
                    let mut best = None;
                    let mut bv = u16::MAX;
                    if w == cands.len() {
                        for &i in &cands {
                            if self.hot[i].valid() < bv {
                                bv = self.hot[i].valid();
                                best = Some(i);
                            }
                        }
                    } else {
                        for _ in 0..w {
                            let i = cands[rng.gen_range(0..cands.len())];
                            if self.hot[i].valid() < bv {
                                bv = self.hot[i].valid();
                                best = Some(i);
                            }
                        }
                    }
                    (best, w as u64)
                }
            }
        };
        work.gc_candidates += examined;
        victim.map(|v| (BlockId(v as u32), examined))
    }

    /// Total free blocks over all planes.
    pub fn free_total(&self) -> u32 {
        self.free.iter().map(|q| q.len).sum()
    }

    /// Take a free block, from `pref` if it has one, else from the plane with the
    /// most free blocks (lowest id on ties). None only if no plane has a free block.
    pub fn alloc_near(&mut self, pref: PlaneId) -> Option<BlockId> {
        if self.free_count(pref) > 0 {
            return self.alloc(pref);
        }
        let best = (0..self.free.len())
            .max_by_key(|&p| (self.free[p].len, std::cmp::Reverse(p)))
            .filter(|&p| self.free[p].len > 0)?;
        self.alloc(PlaneId(best as u32))
    }

    /// Take the most-worn free block of `plane` (static wear levelling parks cold
    /// data there), falling back like [`Blocks::alloc_near`].
    pub fn alloc_most_worn(&mut self, pref: PlaneId) -> Option<BlockId> {
        if self.free_count(pref) == 0 {
            return self.alloc_near(pref);
        }
        let q = &mut self.free[pref.0 as usize];
        let b = match self.pick {
            FreePick::Fifo => {
                let ec = &self.erase_count;
                let (i, _) = q
                    .fifo
                    .iter()
                    .enumerate()
                    .max_by_key(|&(i, &b)| (ec[b as usize], std::cmp::Reverse(i)))?;
                let b = q.fifo.remove(i)?;
                q.len -= 1;
                b
            }
            FreePick::LeastWorn => {
                let (&ec, _) = q.by_wear.last_key_value()?;
                q.take_from_bucket(ec)
            }
        };
        let bi = b as usize;
        self.hot[bi].state = BlockState::Open;
        self.open_seq += 1;
        self.opened[bi] = self.open_seq;
        Some(BlockId(b))
    }

    /// Take the most-worn free block of `plane` only (static wear levelling's
    /// destination for cold data in the page FTL and DFTL); None if its pool
    /// is empty.
    pub fn alloc_most_worn_in(&mut self, plane: PlaneId) -> Option<BlockId> {
        if self.free_count(plane) == 0 {
            return None;
        }
        self.alloc_most_worn(plane)
    }

    /// Choose a victim among `cands` (any blocks, e.g. a hybrid FTL's log blocks)
    /// by `policy`, scoring like [`Blocks::select_victim`]: greedy = fewest valid
    /// pages, cost-benefit = age x (1-u) / 2u, FIFO = opened first, random, and
    /// windowed greedy over a random fraction of the candidates. Every candidate
    /// looked at is counted in `work.gc_candidates`; returns (victim, examined).
    pub fn select_among(
        &self,
        cands: &[u32],
        policy: GcPolicy,
        rng: &mut SimRng,
        work: &mut FtlWork,
    ) -> Option<(BlockId, u64)> {
        if cands.is_empty() {
            return None;
        }
        let ppb = self.g.pages_per_block as f64;
        let greedy = |it: &mut dyn Iterator<Item = u32>| {
            let mut best = None;
            let mut bv = u16::MAX;
            for b in it {
                if self.hot[b as usize].valid() < bv {
                    bv = self.hot[b as usize].valid();
                    best = Some(b);
                }
            }
            best
        };
        let (victim, examined) = match policy {
            GcPolicy::Greedy => (greedy(&mut cands.iter().copied()), cands.len() as u64),
            GcPolicy::Fifo => (
                cands
                    .iter()
                    .copied()
                    .min_by_key(|&b| self.opened[b as usize]),
                1,
            ),
            GcPolicy::Random => (Some(cands[rng.gen_range(0..cands.len())]), 1),
            GcPolicy::CostBenefit => {
                assert!(
                    self.stamps_on,
                    "cost-benefit victims need the invalidation stamps (Blocks::track_policy)"
                );
                let mut best = None;
                let mut bs = f64::MIN;
                for &b in cands {
                    let i = b as usize;
                    let u = self.hot[i].valid() as f64 / ppb;
                    let age = (self.clock - self.stamp[i]) as f64 + 1.0;
                    let score = if u == 0.0 {
                        f64::MAX
                    } else {
                        age * (1.0 - u) / (2.0 * u)
                    };
                    if score > bs {
                        bs = score;
                        best = Some(b);
                    }
                }
                (best, cands.len() as u64)
            }
            GcPolicy::Windowed(f) => {
                let w = ((f * cands.len() as f64).round() as usize).clamp(1, cands.len());
                if w == cands.len() {
                    (greedy(&mut cands.iter().copied()), w as u64)
                } else {
                    let mut it = (0..w).map(|_| cands[rng.gen_range(0..cands.len())]);
                    (greedy(&mut it), w as u64)
                }
            }
        };
        work.gc_candidates += examined;
        victim.map(|v| (BlockId(v), examined))
    }

    /// Invariant check of the block tables: free blocks are empty, open blocks are
    /// partially written, full blocks completely; pools hold exactly the free blocks.
    pub fn check(&self) -> Result<(), String> {
        let ppb = self.g.pages_per_block as u16;
        let mut pooled = vec![false; self.hot.len()];
        for q in &self.free {
            for b in q.iter() {
                if pooled.get(b as usize) != Some(&false) {
                    return Err(format!("block {b} twice in the free pool, or no block"));
                }
                pooled[b as usize] = true;
            }
            let n = q.fifo.len() + q.by_wear.values().map(|b| b.len()).sum::<usize>();
            if n != q.len as usize {
                return Err(format!("a free pool counts {} blocks but holds {n}", q.len));
            }
            let other = match self.pick {
                FreePick::Fifo => !q.by_wear.is_empty(),
                FreePick::LeastWorn => !q.fifo.is_empty(),
            };
            if other {
                return Err(format!("a free pool not kept in {:?} order", self.pick));
            }
            for (&ec, bucket) in &q.by_wear {
                if bucket.is_empty() {
                    return Err(format!("an empty free bucket for {ec} erases"));
                }
                if let Some(&b) = bucket
                    .iter()
                    .find(|&&b| self.erase_count.get(b as usize) != Some(&ec))
                {
                    return Err(format!(
                        "free block {b} in the bucket of {ec} erases has {:?}",
                        self.erase_count.get(b as usize)
                    ));
                }
            }
        }
        for (i, h) in self.hot.iter().enumerate() {
            let (s, v, w) = (h.state, h.valid(), h.wp());
            if v > w {
                return Err(format!("block {i}: {v} valid pages but only {w} written"));
            }
            match s {
                BlockState::Free if w != 0 || v != 0 || !pooled[i] => {
                    return Err(format!(
                        "free block {i} is not empty/pooled (wp {w}, valid {v})"
                    ))
                }
                BlockState::Open if w >= ppb || pooled[i] => {
                    return Err(format!("open block {i} has wp {w}"))
                }
                BlockState::Full if w != ppb || pooled[i] => {
                    return Err(format!("full block {i} has wp {w}"))
                }
                _ => {}
            }
        }
        let max = self.erase_count.iter().copied().max().unwrap_or(0);
        if max != self.erase_max {
            return Err(format!(
                "largest erase count {max}, kept as {}",
                self.erase_max
            ));
        }
        // The victim indexes agree with a scan of the tables.
        let bpp = self.g.blocks_per_plane as usize;
        for pl in 0..self.g.total_planes() as usize {
            let counts = &self.erase_count[pl * bpp..(pl + 1) * bpp];
            let (mn, mx) = (counts.iter().min(), counts.iter().max());
            let at = counts.iter().filter(|&&c| Some(&c) == mn).count() as u32;
            if (mn, mx, at)
                != (
                    Some(&self.plane_min[pl]),
                    Some(&self.plane_max[pl]),
                    self.at_min[pl],
                )
            {
                return Err(format!(
                    "plane {pl}: erase counts {mn:?}..{mx:?} ({at} at the least), kept as {}..{} ({})",
                    self.plane_min[pl], self.plane_max[pl], self.at_min[pl]
                ));
            }
        }
        for pl in 0..self.g.total_planes() as usize {
            let first = pl * bpp;
            let mut best: Option<usize> = None;
            let mut full = BTreeSet::new();
            for i in first..first + bpp {
                if self.hot[i].state == BlockState::Full {
                    full.insert((self.opened[i], i as u32));
                    if best.is_none_or(|b| self.hot[i].valid() < self.hot[b].valid()) {
                        best = Some(i);
                    }
                }
            }
            let mut bucketed = 0;
            for c in 0..self.vix.nb {
                let mut n = 0;
                for local in self.vix.members(pl, c) {
                    let xi = first + local;
                    if local >= bpp
                        || self.hot[xi].state != BlockState::Full
                        || self.hot[xi].valid() as usize != c
                    {
                        return Err(format!("plane {pl}: block {xi} in valid bucket {c}"));
                    }
                    n += 1;
                }
                if n != self.vix.count[pl * self.vix.nb + c] {
                    return Err(format!(
                        "plane {pl}: valid bucket {c} holds {n} blocks but counts {}",
                        self.vix.count[pl * self.vix.nb + c]
                    ));
                }
                bucketed += n as usize;
            }
            let nf = self.vix.nfull[pl] as usize;
            if bucketed != full.len() || nf != full.len() {
                return Err(format!(
                    "plane {pl}: {bucketed} bucketed, {nf} counted, {} full blocks",
                    full.len()
                ));
            }
            if let Some(b) = best {
                let rank = self.vix.fen_rank(pl, bpp, b - first);
                let want = (first..=b)
                    .filter(|&i| self.hot[i].state == BlockState::Full)
                    .count();
                if rank as usize != want {
                    return Err(format!("plane {pl}: full-block rank {rank}, scan {want}"));
                }
            }
            if self.vix.fifo_on && full != self.vix.fifo[pl] {
                return Err(format!(
                    "plane {pl}: FIFO queue differs from the full blocks"
                ));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ssd_core::rng::SimRngExt;

    /// FIFO victims are the same with the index kept or dropped (a scan), and
    /// the index rebuilt mid-run agrees with one kept all along.
    #[test]
    fn fifo_victims_agree_with_and_without_the_index() {
        let g = Geometry {
            channels: 1,
            ways: 1,
            dies: 1,
            planes: 2,
            blocks_per_plane: 16,
            pages_per_block: 4,
            page_size: 4096,
        };
        let mut kept = Blocks::new(g);
        let mut scan = Blocks::new(g);
        scan.track_fifo(false);
        let mut rng = SimRng::from_seed_label(7, "test");
        let mut work = FtlWork::default();
        let mut open: Vec<Option<BlockId>> = vec![None, None, None, None];
        for step in 0..4000u32 {
            // Two frontiers per plane fill in interleaved order, so blocks
            // fill in a different order than they were opened.
            let f = (rng.gen::<u32>() % 4) as usize;
            let plane = PlaneId(f as u32 / 2);
            if scan.free_count(plane) <= 2 {
                let a = kept.select_victim(plane, GcPolicy::Fifo, &mut rng.clone(), &mut work);
                let b = scan.select_victim(plane, GcPolicy::Fifo, &mut rng.clone(), &mut work);
                assert_eq!(a.map(|x| x.0), b.map(|x| x.0), "step {step}");
                let (v, _) = a.expect("a full block to collect");
                for t in [&mut kept, &mut scan] {
                    let n = t.valid(v.0 as usize);
                    t.invalidate_n(v, n);
                    t.erase(v);
                }
                continue;
            }
            let b = match open[f] {
                Some(b) => b,
                None => {
                    let b = kept.alloc(plane).unwrap();
                    assert_eq!(scan.alloc(plane), Some(b));
                    b
                }
            };
            kept.program_next(b);
            scan.program_next(b);
            open[f] = (kept.state(b.0 as usize) == BlockState::Open).then_some(b);
            if step == 2000 {
                scan.track_fifo(true);
                assert!(scan.check().is_ok());
                scan.track_fifo(false);
            }
        }
        kept.check().unwrap();
        scan.check().unwrap();
    }

    /// The least-worn pick from erase-count buckets is the one a scan of the
    /// pool in arrival order makes (least erased-in-this-call, erase count,
    /// arrival), and the most-worn pick the scan's (most erases, earliest).
    #[test]
    fn the_wear_buckets_pick_what_a_scan_of_the_pool_picks() {
        let g = Geometry {
            channels: 1,
            ways: 1,
            dies: 1,
            planes: 1,
            blocks_per_plane: 24,
            pages_per_block: 2,
            page_size: 4096,
        };
        let mut t = Blocks::new(g);
        t.set_pick(FreePick::LeastWorn);
        // The pool in arrival order, as the scan saw it.
        let mut pool: VecDeque<u32> = (0..24).collect();
        let mut rng = SimRng::from_seed_label(11, "test");
        let mut open: Vec<BlockId> = Vec::new();
        let plane = PlaneId(0);
        for step in 0..20_000u32 {
            if rng.gen::<u32>() % 7 == 0 {
                t.begin_call();
            }
            let take = !pool.is_empty() && (open.is_empty() || rng.gen::<u32>() % 2 == 0);
            if take {
                let most = rng.gen::<u32>() % 5 == 0;
                let (i, _) = if most {
                    pool.iter()
                        .enumerate()
                        .max_by_key(|&(i, &b)| (t.erase_count[b as usize], std::cmp::Reverse(i)))
                        .unwrap()
                } else {
                    pool.iter()
                        .enumerate()
                        .min_by_key(|&(i, &b)| {
                            let fresh = t.erased_this_call(BlockId(b));
                            (fresh, t.erase_count[b as usize], i)
                        })
                        .unwrap()
                };
                let want = pool.remove(i).unwrap();
                let got = if most {
                    t.alloc_most_worn_in(plane)
                } else {
                    t.alloc(plane)
                };
                assert_eq!(got, Some(BlockId(want)), "step {step}, most worn {most}");
                open.push(BlockId(want));
            } else {
                let b = open.swap_remove(rng.gen::<u32>() as usize % open.len());
                t.program_next(b);
                t.program_next(b);
                t.invalidate_n(b, 2);
                t.erase(b);
                pool.push_back(b.0);
            }
            assert_eq!(t.free_count(plane), pool.len() as u32);
        }
        t.check().unwrap();
        assert!(
            t.erase_max() > 100,
            "the blocks wore unevenly enough to matter"
        );
    }

    /// A victim search counts every candidate it examines: a window F over
    /// n full blocks examines round(F x n) (at least one), all of them at
    /// F = 1; random and FIFO one; over a list, greedy and cost-benefit all.
    #[test]
    fn a_search_counts_the_candidates_it_examines() {
        let g = Geometry {
            channels: 1,
            ways: 1,
            dies: 1,
            planes: 1,
            blocks_per_plane: 40,
            pages_per_block: 4,
            page_size: 4096,
        };
        let mut b = Blocks::new(g);
        b.track_policy(GcPolicy::CostBenefit);
        let mut rng = SimRng::from_seed_label(3, "test");
        let mut full = Vec::new();
        for k in 0..30u16 {
            let x = b.alloc(PlaneId(0)).unwrap();
            for _ in 0..4 {
                b.program_next(x);
            }
            b.invalidate_n(x, k % 4);
            full.push(x.0);
        }
        let n = full.len() as u64;
        let searches = 7;
        for (policy, each) in [
            (GcPolicy::Windowed(0.1), 3),
            (GcPolicy::Windowed(0.25), 8),
            (GcPolicy::Windowed(0.5), 15),
            (GcPolicy::Windowed(1.0), n),
            (GcPolicy::Windowed(0.001), 1),
            (GcPolicy::Random, 1),
            (GcPolicy::Fifo, 1),
        ] {
            let mut work = FtlWork::default();
            for _ in 0..searches {
                let (_, ex) = b
                    .select_victim(PlaneId(0), policy, &mut rng, &mut work)
                    .unwrap();
                assert_eq!(ex, each, "{policy:?}");
            }
            assert_eq!(work.gc_candidates, searches * each, "{policy:?}");
            let mut work = FtlWork::default();
            let among = match policy {
                GcPolicy::Windowed(_) | GcPolicy::Random | GcPolicy::Fifo => each,
                _ => n,
            };
            for _ in 0..searches {
                let (_, ex) = b.select_among(&full, policy, &mut rng, &mut work).unwrap();
                assert_eq!(ex, among, "{policy:?} among");
            }
            assert_eq!(work.gc_candidates, searches * among, "{policy:?} among");
        }
        for policy in [GcPolicy::Greedy, GcPolicy::CostBenefit] {
            let mut work = FtlWork::default();
            let (_, ex) = b.select_among(&full, policy, &mut rng, &mut work).unwrap();
            assert_eq!((ex, work.gc_candidates), (n, n), "{policy:?} among");
        }
    }

    #[test]
    fn greedy_next_is_the_victim_after_the_victim() {
        // Full blocks with random valid counts (ties included, in buckets
        // spread over several index words); collecting the greedy victim
        // must leave the block `greedy_next` named as the next victim.
        let g = Geometry {
            channels: 1,
            ways: 1,
            dies: 1,
            planes: 2,
            blocks_per_plane: 200,
            pages_per_block: 8,
            page_size: 4096,
        };
        let mut b = Blocks::new(g);
        let mut rng = SimRng::from_seed_label(11, "test");
        let mut work = FtlWork::default();
        for plane in [PlaneId(0), PlaneId(1)] {
            while let Some(x) = b.alloc(plane) {
                for _ in 0..8 {
                    b.program_next(x);
                }
                let dead = rng.gen::<u16>() % 8;
                b.invalidate_n(x, dead);
            }
        }
        let mut checked = 0;
        for step in 0..300 {
            let plane = PlaneId(step % 2);
            let Some((v, _)) = b.select_victim(plane, GcPolicy::Greedy, &mut rng, &mut work) else {
                break;
            };
            let predicted = b.greedy_next(plane, v);
            let n = b.valid(v.0 as usize);
            b.invalidate_n(v, n);
            b.erase(v);
            let actual = b
                .select_victim(plane, GcPolicy::Greedy, &mut rng, &mut work)
                .map(|(x, _)| x);
            assert_eq!(predicted.map(|x| x.0), actual.map(|x| x.0), "step {step}");
            checked += actual.is_some() as u32;
        }
        assert!(checked > 250, "only {checked} predictions checked");
        b.check().unwrap();
    }
}
