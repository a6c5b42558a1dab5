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
//!
//! A drive does not keep this map in its DRAM at all: each page's LPN is
//! written in the page's spare (out-of-band) area, and GC reads it back from
//! the victim. With a [`Spill`] (`ftl.p2l_store`, [`ssd_core::config::P2lStore`])
//! the map does the same: a dense block's chunk goes to an unnamed temporary
//! file when the block's last page is programmed (the block is then
//! **spilled**, its header alone in memory), and [`P2l::view`] reads it back
//! into a chunk when GC or levelling collects the block. Only open blocks and
//! the block being collected keep their chunks in memory, so a random-write
//! steady state costs 12 bytes a block instead of 4 bytes a page. The entries
//! are the same either way; so is what [`P2l`] serialises (a saved state
//! loads under either store).

use ssd_core::{BlockId, Geometry, Ppn};

/// Sentinel for "no LPN" inside the packed tables (never returned by the API).
const NONE: u32 = u32::MAX;
/// Flag in [`Meta::n`]: the block's entries live in the slab chunk at `Meta::a`.
const DENSE: u32 = 1 << 31;
/// Flag in [`Meta::n`]: the block is full and its entries live in the spill
/// file, `pages_per_block` little-endian `u32`s at the block's index times
/// that many (`Meta::a` unused).
const SPILLED: u32 = 1 << 30;
/// Both flags: what masks them off leaves the written count.
const FLAGS: u32 = DENSE | SPILLED;

/// Per-block header, kept together so a lookup touches one cache line.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
struct Meta {
    /// Run: LPN of page 0. Dense: offset of the block's chunk in the slab (a
    /// multiple of `pages_per_block`; fits a `u32` as the page count does).
    a: u32,
    /// Run: LPN step between consecutive pages (wrapping arithmetic, so any two
    /// first LPNs, including a descending pair, start a run).
    stride: u32,
    /// Pages programmed since the last erase, or'ed with [`DENSE`] or
    /// [`SPILLED`].
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

/// The compressed P2L map (see the module docs). It serialises as
/// `P2lRepr`, every chunk in the slab, whether or not it spills.
#[derive(Clone, Debug)]
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
    /// Where full dense blocks' chunks go, if they leave memory.
    spill: Option<Spill>,
}

/// What a [`P2l`] serialises as: the map with every dense block's chunk in
/// the slab (a spilled block's after the in-memory ones).
#[derive(serde::Serialize, serde::Deserialize)]
struct P2lRepr {
    ppb: u32,
    ppb_shift: Option<u32>,
    meta: Vec<Meta>,
    slab: Vec<u32>,
    free: Vec<u32>,
}

thread_local! {
    /// Whether a [`P2l`] deserialised on this thread streams its full dense
    /// blocks' chunks into a spill file of its own ([`spilling_while_loading`]).
    static SPILL_ON_LOAD: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Run `f` (which deserialises a saved drive) so that every [`P2l`] it reads
/// puts its full dense blocks' chunks into a spill file of its own as they
/// arrive (`spill`; else in memory), so that loading a drive whose P2L is
/// kept in a file never holds the whole P2L in memory. The map is the one
/// [`P2l::set_spill`] would make of the map read into memory.
pub fn spilling_while_loading<R>(spill: bool, f: impl FnOnce() -> R) -> R {
    struct Reset(bool);
    impl Drop for Reset {
        fn drop(&mut self) {
            SPILL_ON_LOAD.with(|c| c.set(self.0));
        }
    }
    let _reset = Reset(SPILL_ON_LOAD.with(|c| c.replace(spill)));
    f()
}

impl<'de> serde::Deserialize<'de> for P2l {
    /// As `P2lRepr`; inside [`spilling_while_loading`], the slab streams
    /// into a spill file, chunk by chunk.
    fn deserialize<D: serde::Deserializer<'de>>(de: D) -> Result<P2l, D::Error> {
        if !SPILL_ON_LOAD.with(|c| c.get()) {
            return P2lRepr::deserialize(de).map(P2l::from);
        }
        const FIELDS: &[&str] = &["ppb", "ppb_shift", "meta", "slab", "free"];
        de.deserialize_struct("P2lRepr", FIELDS, Streamed)
    }
}

/// Reads a `P2lRepr` into a spilled [`P2l`] (see [`spilling_while_loading`]).
struct Streamed;

impl<'de> serde::de::Visitor<'de> for Streamed {
    type Value = P2l;
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a P2L map")
    }
    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<P2l, A::Error> {
        use serde::de::Error;
        let missing = |i: usize| A::Error::invalid_length(i, &"a P2L map of 5 fields");
        let ppb: u32 = seq.next_element()?.ok_or_else(|| missing(0))?;
        let ppb_shift: Option<u32> = seq.next_element()?.ok_or_else(|| missing(1))?;
        let meta: Vec<Meta> = seq.next_element()?.ok_or_else(|| missing(2))?;
        if ppb == 0 {
            return Err(A::Error::custom("a P2L map of 0 pages a block"));
        }
        let spill = Spill::new(meta.len()).map_err(A::Error::custom)?;
        let mut m = P2l {
            ppb,
            ppb_shift,
            meta,
            slab: Vec::new(),
            free: Vec::new(),
            spill: Some(spill),
        };
        seq.next_element_seed(SlabSeed(&mut m))?
            .ok_or_else(|| missing(3))?;
        let _free: Vec<u32> = seq.next_element()?.ok_or_else(|| missing(4))?;
        Ok(m)
    }
}

/// The slab of a map being read: each chunk, as it completes, goes to the
/// spill file (a full dense block's), to the slab (another dense block's;
/// [`P2l::compact`] then puts them in block order) or nowhere (a free
/// chunk). The map's headers are read already.
struct SlabSeed<'a>(&'a mut P2l);

impl<'de> serde::de::DeserializeSeed<'de> for SlabSeed<'_> {
    type Value = ();
    fn deserialize<D: serde::Deserializer<'de>>(self, de: D) -> Result<(), D::Error> {
        de.deserialize_seq(self)
    }
}

impl<'de> serde::de::Visitor<'de> for SlabSeed<'_> {
    type Value = ();
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a P2L slab")
    }
    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        use serde::de::Error;
        let m = self.0;
        let ppb = m.ppb as usize;
        // The block owning each chunk of the slab, by the chunk's number.
        let mut owner: Vec<u32> = Vec::new();
        for (b, e) in m.meta.iter().enumerate() {
            if e.n & DENSE == 0 {
                continue;
            }
            if !(e.a as usize).is_multiple_of(ppb) || e.n & SPILLED != 0 {
                return Err(A::Error::custom(format!(
                    "P2L block {b}: a chunk at {} (not a multiple of {ppb}), or marked as in a file",
                    e.a
                )));
            }
            let c = e.a as usize / ppb;
            if owner.len() <= c {
                owner.resize(c + 1, NONE);
            }
            owner[c] = b as u32;
        }
        let mut chunk = vec![NONE; ppb];
        let (mut c, mut k) = (0usize, 0usize);
        while let Some(e) = seq.next_element::<u32>()? {
            chunk[k] = e;
            k += 1;
            if k < ppb {
                continue;
            }
            k = 0;
            let Some(&b) = owner.get(c).filter(|&&b| b != NONE) else {
                c += 1;
                continue;
            };
            let meta = &mut m.meta[b as usize];
            if meta.n & !FLAGS == m.ppb {
                let sp = m.spill.as_mut().expect("a spill file to load into");
                *meta = Meta {
                    a: sp.write(&chunk),
                    stride: 0,
                    n: m.ppb | SPILLED,
                };
            } else {
                meta.a = m.slab.len() as u32;
                m.slab.extend_from_slice(&chunk);
            }
            c += 1;
        }
        if k != 0 || owner.len() > c {
            return Err(A::Error::custom(format!(
                "P2L slab of {} entries: its blocks' chunks end at {}",
                c * ppb + k,
                owner.len() * ppb
            )));
        }
        m.compact();
        Ok(())
    }
}

impl From<P2lRepr> for P2l {
    fn from(r: P2lRepr) -> P2l {
        P2l {
            ppb: r.ppb,
            ppb_shift: r.ppb_shift,
            meta: r.meta,
            slab: r.slab,
            free: r.free,
            spill: None,
        }
    }
}

/// The file full dense blocks' chunks spill to: an unnamed temporary file
/// (removed by the system when it is closed) of slots of one chunk each
/// (`4 * ppb` bytes), twice as many slots as the drive has blocks. A chunk
/// goes to the first free slot at or after the last one taken, round the
/// ring: so the chunks written within a while lie together, and the
/// system writes few pages of the file back to disk for them (a chunk at
/// its block's place would dirty a page of the file for each block closed
/// and write nearly the whole file back every 30 s). Read and written at
/// offsets only, so copies of a map never share a file position.
///
/// Chunks written to consecutive slots (most: the ring is twice the blocks)
/// wait in `pending`, up to [`Spill::PENDING_CHUNKS`] of them, and go to the
/// file in one write; reads look there first.
#[derive(Debug)]
pub struct Spill {
    file: std::fs::File,
    /// The slots taken, a bit each (a multiple of 64 slots).
    used: Vec<u64>,
    /// Where the search for a free slot starts.
    cursor: usize,
    /// Chunks of the consecutive slots from `pending_slot` not yet written
    /// to the file, their entries end to end.
    pending: Vec<u32>,
    pending_slot: u32,
    /// Entries of a chunk (`pages_per_block`; 0 until the first write).
    ppb: usize,
}

impl Spill {
    /// A new, empty spill file for a drive of `blocks` blocks in the
    /// system's temporary directory (`$TMPDIR`, else `/tmp`); the error
    /// says where it was tried.
    pub fn new(blocks: usize) -> Result<Spill, String> {
        let dir = std::env::temp_dir();
        let file = tempfile::tempfile_in(&dir).map_err(|e| {
            format!(
                "cannot create a temporary file in {} for the P2L: {e}",
                dir.display()
            )
        })?;
        Ok(Spill {
            file,
            used: vec![0; Self::slots(blocks) / 64],
            cursor: 0,
            pending: Vec::new(),
            pending_slot: 0,
            ppb: 0,
        })
    }

    /// The ring's slots for a drive of `blocks` blocks (a multiple of 64).
    fn slots(blocks: usize) -> usize {
        (2 * blocks + 1).div_ceil(64) * 64
    }

    /// Refuse, before the run, a temporary directory without room for the
    /// whole ring of a drive of `blocks` blocks of `ppb` pages (the file
    /// grows to it as the run goes on, and a write that finds the disk full
    /// stops the run).
    pub fn check_room(blocks: usize, ppb: u32) -> Result<(), String> {
        let dir = std::env::temp_dir();
        let need = Self::slots(blocks) as u64 * ppb as u64 * 4;
        #[cfg(unix)]
        if let Ok(st) = rustix::fs::statvfs(&dir) {
            let free = st.f_bavail.saturating_mul(st.f_frsize);
            if free < need {
                return Err(format!(
                    "the P2L's temporary file grows to {} MiB, and {} has {} MiB free (set TMPDIR to a directory with room, or ftl.p2l_store = \"memory\")",
                    need >> 20,
                    dir.display(),
                    free >> 20
                ));
            }
        }
        let _ = need;
        Ok(())
    }

    /// Consecutive chunks written to the file at once.
    pub const PENDING_CHUNKS: usize = 64;

    /// The slots `pending` holds.
    fn pending_slots(&self) -> std::ops::Range<u32> {
        let n = self.pending.len().checked_div(self.ppb).unwrap_or(0);
        self.pending_slot..self.pending_slot + n as u32
    }

    /// Write the pending chunks to the file.
    fn flush(&mut self) {
        let mut off = self.pending_slot as u64 * self.ppb as u64 * 4;
        let mut bytes = [0u8; 4096];
        for piece in self.pending.chunks(1024) {
            let n = piece.len() * 4;
            for (d, e) in bytes.chunks_exact_mut(4).zip(piece) {
                d.copy_from_slice(&e.to_le_bytes());
            }
            if let Err(e) = write_at(&self.file, &bytes[..n], off) {
                Self::failed("writing", e);
            }
            off += n as u64;
        }
        self.pending.clear();
    }

    /// An I/O error on the file: the run cannot go on (the disk is full or
    /// gone), so it stops, saying which file and why.
    fn failed(what: &str, e: std::io::Error) -> ! {
        panic!(
            "ftl.p2l_store: {what} the P2L's temporary file in {} failed: {e}",
            std::env::temp_dir().display()
        )
    }

    /// Take the first free slot from the cursor on, round the ring (one is
    /// free: at most one slot a block is taken, of twice as many).
    fn take(&mut self) -> u32 {
        let words = self.used.len();
        let (mut w, mut bit) = (self.cursor / 64, self.cursor % 64);
        for _ in 0..=words {
            let free = !self.used[w] >> bit << bit;
            if free != 0 {
                let b = free.trailing_zeros() as usize;
                self.used[w] |= 1 << b;
                let slot = w * 64 + b;
                self.cursor = (slot + 1) % (words * 64);
                return slot as u32;
            }
            (w, bit) = ((w + 1) % words, 0);
        }
        unreachable!("P2L spill: every slot taken")
    }

    /// Give slot `slot` back.
    fn release(&mut self, slot: u32) {
        let (w, b) = (slot as usize / 64, slot % 64);
        debug_assert!(self.used[w] & (1 << b) != 0, "P2L spill: slot {slot} free");
        self.used[w] &= !(1 << b);
    }

    /// Whether slot `slot` is taken.
    fn taken(&self, slot: u32) -> bool {
        self.used
            .get(slot as usize / 64)
            .is_some_and(|w| w & (1 << (slot % 64)) != 0)
    }

    /// Write `chunk` to a free slot, and say which.
    fn write(&mut self, chunk: &[u32]) -> u32 {
        let slot = self.take();
        self.ppb = chunk.len();
        let held = self.pending_slots();
        // A slot taken again while its old chunk waits is never the next
        // one: the old chunk goes first, the new one after it.
        if slot != held.end || held.len() == Self::PENDING_CHUNKS {
            self.flush();
            self.pending_slot = slot;
        }
        self.pending.extend_from_slice(chunk);
        slot
    }

    /// Read the chunk in slot `slot` into `chunk`.
    fn read(&self, slot: u32, chunk: &mut [u32]) {
        if self.pending_slots().contains(&slot) {
            let at = (slot - self.pending_slot) as usize * chunk.len();
            chunk.copy_from_slice(&self.pending[at..at + chunk.len()]);
            return;
        }
        let mut off = slot as u64 * chunk.len() as u64 * 4;
        let mut bytes = [0u8; 1024];
        for piece in chunk.chunks_mut(256) {
            let n = piece.len() * 4;
            if let Err(e) = read_at(&self.file, &mut bytes[..n], off) {
                Self::failed("reading", e);
            }
            for (e, d) in piece.iter_mut().zip(bytes.chunks_exact(4)) {
                *e = u32::from_le_bytes([d[0], d[1], d[2], d[3]]);
            }
            off += n as u64;
        }
    }

    /// Entry `k` of the chunk of `ppb` entries in slot `slot`.
    fn entry(&self, slot: u32, ppb: u32, k: u32) -> u32 {
        if self.pending_slots().contains(&slot) {
            return self.pending[(slot - self.pending_slot) as usize * ppb as usize + k as usize];
        }
        let mut d = [0u8; 4];
        let off = (slot as u64 * ppb as u64 + k as u64) * 4;
        if let Err(e) = read_at(&self.file, &mut d, off) {
            Self::failed("reading", e);
        }
        u32::from_le_bytes(d)
    }
}

impl Clone for Spill {
    /// A copy in a file of its own (the system copies the bytes).
    fn clone(&self) -> Spill {
        use std::io::Seek;
        let dir = std::env::temp_dir();
        let file = tempfile::tempfile_in(&dir).unwrap_or_else(|e| Self::failed("creating", e));
        let mut copy = Spill {
            file,
            used: self.used.clone(),
            cursor: self.cursor,
            pending: self.pending.clone(),
            pending_slot: self.pending_slot,
            ppb: self.ppb,
        };
        let mut from = &self.file;
        let copied = from
            .rewind()
            .and_then(|_| std::io::copy(&mut from, &mut copy.file));
        if let Err(e) = copied {
            Self::failed("copying", e);
        }
        copy
    }
}

#[cfg(unix)]
fn write_at(f: &std::fs::File, buf: &[u8], off: u64) -> std::io::Result<()> {
    std::os::unix::fs::FileExt::write_all_at(f, buf, off)
}

#[cfg(unix)]
fn read_at(f: &std::fs::File, buf: &mut [u8], off: u64) -> std::io::Result<()> {
    std::os::unix::fs::FileExt::read_exact_at(f, buf, off)
}

#[cfg(windows)]
fn write_at(f: &std::fs::File, mut buf: &[u8], mut off: u64) -> std::io::Result<()> {
    while !buf.is_empty() {
        let n = std::os::windows::fs::FileExt::seek_write(f, buf, off)?;
        if n == 0 {
            return Err(std::io::ErrorKind::WriteZero.into());
        }
        buf = &buf[n..];
        off += n as u64;
    }
    Ok(())
}

#[cfg(windows)]
fn read_at(f: &std::fs::File, mut buf: &mut [u8], mut off: u64) -> std::io::Result<()> {
    while !buf.is_empty() {
        let n = std::os::windows::fs::FileExt::seek_read(f, buf, off)?;
        if n == 0 {
            return Err(std::io::ErrorKind::UnexpectedEof.into());
        }
        buf = &mut buf[n..];
        off += n as u64;
    }
    Ok(())
}

impl serde::Serialize for P2l {
    /// As `P2lRepr`: a spilled block's header names a chunk past the
    /// in-memory slab, and its entries follow the slab's, read from the
    /// file block by block.
    fn serialize<S: serde::Serializer>(&self, ser: S) -> Result<S::Ok, S::Error> {
        use serde::ser::{SerializeSeq, SerializeStruct};
        let spilled: Vec<usize> = (0..self.meta.len())
            .filter(|&b| self.meta[b].n & SPILLED != 0)
            .collect();
        struct Metas<'a>(&'a P2l);
        impl serde::Serialize for Metas<'_> {
            fn serialize<S: serde::Serializer>(&self, ser: S) -> Result<S::Ok, S::Error> {
                let m = self.0;
                let mut next = m.slab.len() as u32;
                let mut seq = ser.serialize_seq(Some(m.meta.len()))?;
                for e in &m.meta {
                    if e.n & SPILLED != 0 {
                        seq.serialize_element(&Meta {
                            a: next,
                            stride: 0,
                            n: (e.n & !FLAGS) | DENSE,
                        })?;
                        next += m.ppb;
                    } else {
                        seq.serialize_element(e)?;
                    }
                }
                seq.end()
            }
        }
        struct Slab<'a>(&'a P2l, &'a [usize]);
        impl serde::Serialize for Slab<'_> {
            fn serialize<S: serde::Serializer>(&self, ser: S) -> Result<S::Ok, S::Error> {
                let (m, spilled) = (self.0, self.1);
                let ppb = m.ppb as usize;
                let mut seq = ser.serialize_seq(Some(m.slab.len() + spilled.len() * ppb))?;
                for e in &m.slab {
                    seq.serialize_element(e)?;
                }
                if let Some(sp) = &m.spill {
                    let mut chunk = vec![0u32; ppb];
                    for &b in spilled {
                        sp.read(m.meta[b].a, &mut chunk);
                        for e in &chunk {
                            seq.serialize_element(e)?;
                        }
                    }
                }
                seq.end()
            }
        }
        let mut st = ser.serialize_struct("P2lRepr", 5)?;
        st.serialize_field("ppb", &self.ppb)?;
        st.serialize_field("ppb_shift", &self.ppb_shift)?;
        st.serialize_field("meta", &Metas(self))?;
        st.serialize_field("slab", &Slab(self, &spilled))?;
        st.serialize_field("free", &self.free)?;
        st.end()
    }
}

impl P2l {
    /// An empty map (every block erased) for the drive `g`, its full dense
    /// blocks' chunks kept in memory.
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
            spill: None,
        }
    }

    /// Keep full dense blocks' chunks in `spill` (None: in memory) from now
    /// on: the chunks of the full dense blocks the map holds move there (or
    /// back into memory), and the slab keeps only the others'.
    pub fn set_spill(&mut self, spill: Option<Spill>) {
        // Every spilled block back in memory, then out again to the new file.
        for b in 0..self.meta.len() {
            if self.meta[b].n & SPILLED != 0 {
                self.unspill(b);
            }
        }
        self.spill = spill;
        if self.spill.is_some() {
            for b in 0..self.meta.len() {
                let m = self.meta[b];
                if m.n & DENSE != 0 && m.n & !FLAGS == self.ppb {
                    self.spill_out(b);
                }
            }
            self.compact();
        }
    }

    /// Free the headers and the slab before a saved map replaces this one
    /// ([`ssd_core::ftl::Ftl::shed`]); the spill file stays, so that
    /// [`P2l::take_spill`] still hands it on.
    pub fn shed(&mut self) {
        debug_assert_eq!(
            self.spilled_blocks(),
            0,
            "P2L: shed with chunks in the file"
        );
        self.meta = Vec::new();
        self.slab = Vec::new();
        self.free = Vec::new();
    }

    /// Whether full dense blocks' chunks go to a file.
    pub fn spills(&self) -> bool {
        self.spill.is_some()
    }

    /// Take the map's spill file, its spilled chunks read back into memory
    /// first.
    pub fn take_spill(&mut self) -> Option<Spill> {
        for b in 0..self.meta.len() {
            if self.meta[b].n & SPILLED != 0 {
                self.unspill(b);
            }
        }
        self.spill.take()
    }

    /// Rebuild the slab with the chunks blocks own, in block order, and no
    /// free ones (after many chunks left it).
    fn compact(&mut self) {
        let ppb = self.ppb as usize;
        let mut slab = Vec::new();
        for m in &mut self.meta {
            if m.n & DENSE != 0 {
                let a = m.a as usize;
                m.a = slab.len() as u32;
                slab.extend_from_slice(&self.slab[a..a + ppb]);
            }
        }
        self.slab = slab;
        self.free = Vec::new();
    }

    /// Move full dense block `b`'s chunk to the spill file.
    #[cold]
    #[inline(never)]
    fn spill_out(&mut self, b: usize) {
        let ppb = self.ppb as usize;
        let m = &mut self.meta[b];
        debug_assert!(m.n & DENSE != 0 && m.n & !FLAGS == self.ppb);
        let a = m.a;
        let Some(sp) = self.spill.as_mut() else {
            return;
        };
        *m = Meta {
            a: sp.write(&self.slab[a as usize..a as usize + ppb]),
            stride: 0,
            n: self.ppb | SPILLED,
        };
        self.free.push(a);
    }

    /// A slab chunk for a block: the last freed, else a new one at the end.
    fn new_chunk(&mut self) -> usize {
        match self.free.pop() {
            Some(c) => c as usize,
            None => {
                let c = self.slab.len();
                self.slab.resize(c + self.ppb as usize, NONE);
                c
            }
        }
    }

    /// Read spilled block `b`'s chunk back into the slab (a dense block
    /// again).
    #[cold]
    #[inline(never)]
    fn unspill(&mut self, b: usize) {
        let ppb = self.ppb as usize;
        let c = self.new_chunk();
        if let Some(sp) = self.spill.as_mut() {
            let slot = self.meta[b].a;
            sp.read(slot, &mut self.slab[c..c + ppb]);
            sp.release(slot);
        }
        self.meta[b] = Meta {
            a: c as u32,
            stride: 0,
            n: self.ppb | DENSE,
        };
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
            if k + 1 == self.ppb && self.spill.is_some() {
                self.spill_out(b);
            }
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
        let c = self.new_chunk();
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
        if k + 1 == self.ppb && self.spill.is_some() {
            self.spill_out(b);
        }
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
        if k >= m.n & !FLAGS {
            None
        } else if m.n & DENSE != 0 {
            Some(self.slab[(m.a + k) as usize])
        } else if m.n & SPILLED != 0 {
            self.spill.as_ref().map(|sp| sp.entry(m.a, self.ppb, k))
        } else {
            Some(m.a.wrapping_add(k.wrapping_mul(m.stride)))
        }
    }

    /// The LPNs of block `b`'s written pages, in page order, put in `buf`
    /// (at least `pages_per_block` long): a spilled block's are read from
    /// the file at once (for scans of every block, where [`P2l::get`] would
    /// read the file page by page).
    pub fn entries<'a>(&self, b: BlockId, buf: &'a mut [u32]) -> &'a [u32] {
        let m = self.meta[b.0 as usize];
        let n = (m.n & !FLAGS) as usize;
        match &self.spill {
            Some(sp) if m.n & SPILLED != 0 => sp.read(m.a, &mut buf[..self.ppb as usize]),
            _ => {
                for (k, e) in buf[..n].iter_mut().enumerate() {
                    *e = self.get_in(b, k as u32).unwrap_or(NONE);
                }
            }
        }
        &buf[..n]
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
    /// whole block); read them with [`P2l::lpn`]. A spilled block's chunk is
    /// read back into memory first (what a drive's GC reads from the
    /// victim's spare area).
    #[inline]
    pub fn view(&mut self, b: BlockId) -> BlockView {
        if self.meta[b.0 as usize].n & SPILLED != 0 {
            self.unspill(b.0 as usize);
        }
        self.view_in_memory(b)
            .expect("a block read back is in memory")
    }

    /// [`P2l::view`] of a block whose entries are in memory (None for a
    /// spilled block: nothing is read back).
    #[inline]
    pub fn view_in_memory(&self, b: BlockId) -> Option<BlockView> {
        let m = self.meta[b.0 as usize];
        (m.n & SPILLED == 0).then_some(BlockView {
            a: m.a,
            stride: m.stride,
            written: m.n & !DENSE,
            dense: m.n & DENSE != 0,
        })
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
        self.meta[b.0 as usize].n & !FLAGS
    }

    /// Is block `b` stored as a dense chunk (rather than a run), in memory
    /// or spilled?
    pub fn is_dense(&self, b: BlockId) -> bool {
        self.meta[b.0 as usize].n & FLAGS != 0
    }

    /// Is block `b`'s chunk in the spill file?
    pub fn is_spilled(&self, b: BlockId) -> bool {
        self.meta[b.0 as usize].n & SPILLED != 0
    }

    /// Forget block `b`'s entries (it was erased): a dense block's chunk goes
    /// back to the free list and the block becomes an empty run.
    pub fn erase(&mut self, b: BlockId) {
        let m = &mut self.meta[b.0 as usize];
        if m.n & DENSE != 0 {
            self.free.push(m.a);
        } else if m.n & SPILLED != 0 {
            if let Some(sp) = self.spill.as_mut() {
                sp.release(m.a);
            }
        }
        *m = Meta::default();
    }

    /// Blocks currently stored dense, in memory.
    pub fn dense_blocks(&self) -> usize {
        self.slab.len() / self.ppb as usize - self.free.len()
    }

    /// Blocks whose chunks are in the spill file.
    pub fn spilled_blocks(&self) -> usize {
        self.meta.iter().filter(|m| m.n & SPILLED != 0).count()
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
        // The spill slots spilled blocks hold, a bit each.
        let mut slots = vec![0u64; self.spill.as_ref().map_or(0, |sp| sp.used.len())];
        let mut spilled = 0usize;
        for (b, m) in self.meta.iter().enumerate() {
            let n = m.n & !FLAGS;
            if n > self.ppb {
                return Err(format!("P2L block {b}: {n} pages written of {ppb}"));
            }
            if m.n & SPILLED != 0 {
                let taken = self.spill.as_ref().is_some_and(|sp| sp.taken(m.a));
                // A taken slot is inside the ring, and so inside `slots`.
                let again = taken && {
                    let (w, bit) = (m.a as usize / 64, 1u64 << (m.a % 64));
                    let seen = slots[w] & bit != 0;
                    slots[w] |= bit;
                    spilled += 1;
                    seen
                };
                if m.n & DENSE != 0 || n != self.ppb || !taken || again {
                    return Err(format!(
                        "P2L block {b}: spilled, but dense, not full, without a taken slot, or in another block's slot {}",
                        m.a
                    ));
                }
                continue;
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
        if let Some(sp) = &self.spill {
            let taken: u32 = sp.used.iter().map(|w| w.count_ones()).sum();
            if taken as usize != spilled {
                return Err(format!(
                    "P2L spill: {taken} slots taken, {spilled} blocks spilled"
                ));
            }
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

    #[test]
    fn full_dense_blocks_spill_and_come_back_when_viewed() {
        let g = geo(4, 8);
        let mut m = P2l::new(&g);
        m.set_spill(Some(Spill::new(g.total_blocks() as usize).unwrap()));
        let lpns = [9, 3, 7, 1, 0, 12, 5, 8];
        program(&mut m, &g, 2, &lpns);
        program(&mut m, &g, 1, &[4, 2, 6]);
        // The full dense block left memory; the open one did not.
        assert!(m.is_spilled(BlockId(2)));
        assert!(!m.is_spilled(BlockId(1)));
        assert_eq!((m.dense_blocks(), m.spilled_blocks()), (1, 1));
        assert_eq!(block(&m, &g, 2), lpns.map(Some).to_vec());
        // A copy has a file of its own.
        let mut copy = m.clone();
        m.erase(BlockId(2));
        program(&mut m, &g, 2, &[1, 2, 4, 3, 5, 6, 7, 8]);
        let v = copy.view(BlockId(2));
        assert!(!copy.is_spilled(BlockId(2)));
        assert_eq!(
            (0..8).map(|k| copy.lpn(&v, k)).collect::<Vec<_>>(),
            lpns.to_vec()
        );
        assert_eq!(block(&m, &g, 2)[..3], [Some(1), Some(2), Some(4)]);
        // Back in memory, the slab compacted to the owned chunks.
        let spill = m.take_spill();
        assert!(spill.is_some() && !m.spills());
        assert_eq!((m.dense_blocks(), m.spilled_blocks()), (2, 0));
        m.set_spill(spill);
        assert_eq!((m.dense_blocks(), m.spilled_blocks()), (1, 1));
        assert_eq!(m.slab.len(), 8);
        m.check().unwrap();
        copy.check().unwrap();
    }

    #[test]
    fn spill_slots_are_taken_in_ring_order_skipping_taken_ones() {
        // 40 blocks: 81 slots, rounded up to two words.
        let mut sp = Spill::new(40).unwrap();
        assert_eq!(sp.used.len(), 2);
        let first: Vec<u32> = (0..100).map(|_| sp.take()).collect();
        assert_eq!(first, (0..100).collect::<Vec<_>>());
        for s in [3, 70, 99] {
            sp.release(s);
        }
        // On from the cursor to the ring's end, then round to the freed.
        let next: Vec<u32> = (0..31).map(|_| sp.take()).collect();
        assert_eq!(next[..28], (100..128).collect::<Vec<_>>());
        assert_eq!(next[28..], [3, 70, 99]);
        assert!((0..128).all(|s| sp.taken(s)));
        // A chunk reads back from its slot.
        let chunk: Vec<u32> = (0..64).map(|i| i * 7 + 1).collect();
        sp.release(64);
        let slot = sp.write(&chunk);
        assert_eq!(slot, 64);
        let mut back = vec![0; 64];
        sp.read(slot, &mut back);
        assert_eq!(back, chunk);
        assert_eq!(sp.entry(slot, 64, 9), 64);
        // Read back from the file once written there.
        sp.flush();
        let mut back = vec![0; 64];
        sp.read(slot, &mut back);
        assert_eq!((back, sp.entry(slot, 64, 9)), (chunk, 64));
    }

    #[cfg(unix)]
    #[test]
    fn a_temporary_directory_without_room_for_the_ring_is_refused() {
        // 2^36 blocks of 1,024 pages: a ring of 512 TiB.
        let e = Spill::check_room(1 << 36, 1024).unwrap_err();
        assert!(
            e.contains("grows to 536870912 MiB") && e.contains("MiB free"),
            "{e}"
        );
        assert_eq!(Spill::check_room(4, 8), Ok(()));
    }

    #[test]
    fn a_map_streamed_into_a_file_is_refused_cut_short_and_read_whole_otherwise() {
        let g = geo(2, 8);
        let mut m = P2l::new(&g);
        // Block 0 full and dense (it goes to the file), block 1 half dense
        // (its chunk stays in memory), block 2 a run.
        program(&mut m, &g, 0, &[9, 3, 7, 1, 0, 4, 6, 2]);
        program(&mut m, &g, 1, &[5, 11, 8, 13]);
        program(&mut m, &g, 2, &[20, 21, 22]);
        let bytes = postcard::to_stdvec(&m).unwrap();
        let whole: P2l = spilling_while_loading(true, || postcard::from_bytes(&bytes)).unwrap();
        assert!(whole.is_spilled(BlockId(0)) && !whole.is_spilled(BlockId(1)));
        assert_eq!(block(&whole, &g, 0), block(&m, &g, 0));
        assert_eq!(block(&whole, &g, 1), block(&m, &g, 1));
        assert_eq!(block(&whole, &g, 2), block(&m, &g, 2));
        whole.check().unwrap();
        // Outside the call the next map is read into memory again.
        let plain: P2l = postcard::from_bytes(&bytes).unwrap();
        assert!(!plain.spills());
        for cut in [bytes.len() - 1, bytes.len() / 2, 3] {
            let r: Result<P2l, _> =
                spilling_while_loading(true, || postcard::from_bytes(&bytes[..cut]));
            assert!(r.is_err(), "{cut} of {} bytes read as a map", bytes.len());
        }
    }

    #[test]
    fn pending_chunks_go_to_the_file_in_order_and_read_back_from_either() {
        let mut sp = Spill::new(4).unwrap(); // 64 slots
        let chunk = |i: u32| vec![i; 4];
        let slots: Vec<u32> = (0..64).map(|i| sp.write(&chunk(i))).collect();
        assert_eq!(slots, (0..64).collect::<Vec<_>>());
        assert_eq!(sp.pending_slots(), 0..64);
        // A slot of the chunks waiting freed and taken again: the old
        // chunks are written first, the new one waits.
        sp.release(10);
        assert_eq!(sp.write(&chunk(100)), 10);
        sp.release(11);
        assert_eq!(sp.write(&chunk(101)), 11);
        assert_eq!(sp.pending_slots(), 10..12);
        let read = |sp: &Spill, s: u32| {
            let mut c = vec![0; 4];
            sp.read(s, &mut c);
            c[0]
        };
        assert_eq!(
            [read(&sp, 9), read(&sp, 10), read(&sp, 11), read(&sp, 12)],
            [9, 100, 101, 12]
        );
        // A copy holds what waits too.
        let copy = sp.clone();
        sp.flush();
        assert_eq!(
            [read(&copy, 10), read(&sp, 10), read(&sp, 11)],
            [100, 100, 101]
        );
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

        /// Against a plain `Vec<u32>` P2L (NONE = not programmed), with full
        /// dense blocks in memory or spilled to a file.
        #[test]
        fn matches_a_plain_table(
            ppb in prop_oneof![Just(8u32), Just(6u32)],
            spill in any::<bool>(),
            ops in prop::collection::vec(op(), 1..80),
        ) {
            // 8: shift path; 6: division path.
            let g = geo(3, ppb);
            let ppb = g.pages_per_block;
            let mut m = P2l::new(&g);
            if spill {
                m.set_spill(Some(Spill::new(g.total_blocks() as usize).unwrap()));
            }
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
                // What a state file holds reads back as the same map, in
                // memory, whichever the store.
                let loaded: P2l = postcard::from_bytes(&postcard::to_stdvec(&m).unwrap()).unwrap();
                prop_assert!(!loaded.spills());
                loaded.check().map_err(TestCaseError::fail)?;
                for (p, &l) in model.iter().enumerate() {
                    prop_assert_eq!(loaded.get(Ppn(p as u32)), (l != NONE).then_some(l), "loaded ppn {}", p);
                }
                // Read into a file as it streams in: the map `set_spill`
                // makes of the one read into memory, headers, slab and
                // entries, and it saves as the same bytes.
                let bytes = postcard::to_stdvec(&m).unwrap();
                let streamed: P2l =
                    spilling_while_loading(true, || postcard::from_bytes(&bytes)).unwrap();
                prop_assert!(streamed.spills());
                streamed.check().map_err(TestCaseError::fail)?;
                let mut moved = loaded.clone();
                moved.set_spill(Some(Spill::new(g.total_blocks() as usize).unwrap()));
                prop_assert_eq!(&streamed.meta.iter().map(|e| e.n).collect::<Vec<_>>(),
                    &moved.meta.iter().map(|e| e.n).collect::<Vec<_>>());
                prop_assert_eq!(&streamed.slab, &moved.slab);
                prop_assert_eq!(postcard::to_stdvec(&streamed).unwrap(), postcard::to_stdvec(&moved).unwrap());
                for (p, &l) in model.iter().enumerate() {
                    prop_assert_eq!(streamed.get(Ppn(p as u32)), (l != NONE).then_some(l), "streamed ppn {}", p);
                }
                for b in 0..g.total_blocks() {
                    let full_dense = m.is_dense(BlockId(b)) && m.written(BlockId(b)) == ppb;
                    prop_assert_eq!(m.is_spilled(BlockId(b)), spill && full_dense, "block {}", b);
                    // A copy reads back what the original holds.
                    let mut copy = m.clone();
                    let v = copy.view(BlockId(b));
                    prop_assert_eq!(v.written(), m.written(BlockId(b)));
                    for k in 0..v.written() {
                        prop_assert_eq!(copy.lpn(&v, k), model[(b * ppb + k) as usize]);
                    }
                }
                m.check().map_err(TestCaseError::fail)?;
                prop_assert!(m.dense_blocks() <= g.total_blocks() as usize);
            }
        }
    }
}
