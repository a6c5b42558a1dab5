//! DFTL's Cached Mapping Table: a fixed number of (lpn, ppn, dirty) slots with
//! O(1) lookup (a direct lpn -> slot index) and O(1) replacement through
//! intrusive doubly linked lists kept in flat `Vec`s. No allocation after `new`.
//!
//! Segmented LRU (Karedla, Love and Wherry 1994), as Gupta et al. use: new entries
//! enter the probationary segment at its MRU end; a hit in the probationary segment
//! promotes the entry to the protected segment's MRU end; when the protected segment
//! exceeds its share, its LRU entry is demoted to the probationary MRU end; the
//! victim is the probationary LRU entry (the protected LRU one if the probationary
//! segment is empty). Plain LRU uses the probationary list only.

use ssd_core::config::CmtPolicy;

const NONE: u32 = u32::MAX;
const PROBATION: usize = 0;
const PROTECTED: usize = 1;

/// DFTL's Cached Mapping Table (see the module docs).
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct Cmt {
    cap: u32,
    protected_cap: u32,
    pub(crate) lpn: Vec<u32>,
    pub(crate) ppn: Vec<u32>,
    pub(crate) dirty: Vec<bool>,
    seg: Vec<u8>,
    prev: Vec<u32>,
    next: Vec<u32>,
    head: [u32; 2],
    tail: [u32; 2],
    len: [u32; 2],
    free: Vec<u32>,
    slot_of: Vec<u32>,
}

impl Cmt {
    /// A table of `cap` entries over `logical` pages.
    pub fn new(cap: u32, logical: u64, policy: CmtPolicy) -> Cmt {
        assert!(cap > 0, "CMT needs at least one entry");
        let n = cap as usize;
        Cmt {
            cap,
            protected_cap: match policy {
                CmtPolicy::Slru => cap / 2,
                CmtPolicy::Lru => 0,
            },
            lpn: vec![NONE; n],
            ppn: vec![NONE; n],
            dirty: vec![false; n],
            seg: vec![0; n],
            prev: vec![NONE; n],
            next: vec![NONE; n],
            head: [NONE; 2],
            tail: [NONE; 2],
            len: [0; 2],
            free: (0..cap).rev().collect(),
            slot_of: vec![NONE; logical as usize],
        }
    }
    /// Entries the table holds at most.
    pub fn capacity(&self) -> u32 {
        self.cap
    }
    /// Entries cached now.
    pub fn len(&self) -> u32 {
        self.len[0] + self.len[1]
    }
    /// No entry cached.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Every slot taken: an insert needs an eviction first.
    pub fn is_full(&self) -> bool {
        self.free.is_empty()
    }
    /// Hint that `slot(lpn)` comes soon (a cache prefetch; no effect on state).
    #[inline]
    pub fn prefetch(&self, lpn: u64) {
        if let Some(e) = self.slot_of.get(lpn as usize) {
            ssd_core::ftl::prefetch_read(e);
        }
    }

    /// Slot caching `lpn`, if any (no recency change).
    #[inline]
    pub fn slot(&self, lpn: u64) -> Option<u32> {
        let s = self.slot_of[lpn as usize];
        (s != NONE).then_some(s)
    }

    fn unlink(&mut self, s: u32) {
        let si = s as usize;
        let g = self.seg[si] as usize;
        let (p, n) = (self.prev[si], self.next[si]);
        if p == NONE {
            self.head[g] = n;
        } else {
            self.next[p as usize] = n;
        }
        if n == NONE {
            self.tail[g] = p;
        } else {
            self.prev[n as usize] = p;
        }
        self.prev[si] = NONE;
        self.next[si] = NONE;
        self.len[g] -= 1;
    }
    fn push_front(&mut self, s: u32, g: usize) {
        let si = s as usize;
        self.seg[si] = g as u8;
        self.prev[si] = NONE;
        self.next[si] = self.head[g];
        if self.head[g] != NONE {
            self.prev[self.head[g] as usize] = s;
        } else {
            self.tail[g] = s;
        }
        self.head[g] = s;
        self.len[g] += 1;
    }

    /// Record a hit on slot `s`.
    #[inline]
    pub fn touch(&mut self, s: u32) {
        self.unlink(s);
        if self.protected_cap == 0 {
            self.push_front(s, PROBATION);
            return;
        }
        self.push_front(s, PROTECTED);
        if self.len[PROTECTED] > self.protected_cap {
            let d = self.tail[PROTECTED];
            self.unlink(d);
            self.push_front(d, PROBATION);
        }
    }

    /// Insert an entry (the table must not be full); it enters probation.
    pub fn insert(&mut self, lpn: u64, ppn: u32, dirty: bool) -> u32 {
        let s = self
            .free
            .pop()
            .expect("CMT insert into a full table: evict first");
        debug_assert_eq!(self.slot_of[lpn as usize], NONE);
        let si = s as usize;
        self.lpn[si] = lpn as u32;
        self.ppn[si] = ppn;
        self.dirty[si] = dirty;
        self.slot_of[lpn as usize] = s;
        self.push_front(s, PROBATION);
        s
    }

    /// The entry replacement would evict next.
    pub fn victim(&self) -> Option<u32> {
        let t = self.tail[PROBATION];
        if t != NONE {
            return Some(t);
        }
        let t = self.tail[PROTECTED];
        (t != NONE).then_some(t)
    }

    /// Drop slot `s` (its dirty state must have been written back by the caller).
    pub fn remove(&mut self, s: u32) {
        self.unlink(s);
        let si = s as usize;
        self.slot_of[self.lpn[si] as usize] = NONE;
        self.lpn[si] = NONE;
        self.ppn[si] = NONE;
        self.dirty[si] = false;
        self.free.push(s);
    }

    /// Occupied slots in list order (probation MRU..LRU, then protected).
    pub fn slots(&self) -> impl Iterator<Item = u32> + '_ {
        let mut g = 0;
        let mut cur = self.head[0];
        std::iter::from_fn(move || loop {
            if cur != NONE {
                let s = cur;
                cur = self.next[s as usize];
                return Some(s);
            }
            if g == 1 {
                return None;
            }
            g = 1;
            cur = self.head[1];
        })
    }

    /// Structural self-check: lists, lengths, index and free list agree.
    pub fn check(&self) -> Result<(), String> {
        let mut seen = vec![false; self.cap as usize];
        for g in 0..2 {
            let mut n = 0u32;
            let mut prev = NONE;
            let mut cur = self.head[g];
            while cur != NONE {
                let ci = cur as usize;
                if seen[ci] {
                    return Err(format!("CMT slot {cur} linked twice"));
                }
                seen[ci] = true;
                if self.seg[ci] as usize != g || self.prev[ci] != prev {
                    return Err(format!("CMT slot {cur}: broken links in segment {g}"));
                }
                let l = self.lpn[ci];
                if l == NONE || self.slot_of[l as usize] != cur {
                    return Err(format!("CMT slot {cur} holds lpn {l} not indexed to it"));
                }
                n += 1;
                prev = cur;
                cur = self.next[ci];
            }
            if self.tail[g] != prev || self.len[g] != n {
                return Err(format!(
                    "CMT segment {g}: length {} tail {} but walked {n} ending at {prev}",
                    self.len[g], self.tail[g]
                ));
            }
        }
        if self.len[PROTECTED] > self.protected_cap {
            return Err(format!(
                "CMT protected segment holds {} > {}",
                self.len[PROTECTED], self.protected_cap
            ));
        }
        for &f in &self.free {
            if seen[f as usize] || self.lpn[f as usize] != NONE {
                return Err(format!("CMT free slot {f} is in use"));
            }
        }
        if self.free.len() as u32 + self.len() != self.cap {
            return Err("CMT slots leaked".into());
        }
        let indexed = self.slot_of.iter().filter(|&&s| s != NONE).count() as u32;
        if indexed != self.len() {
            return Err(format!(
                "CMT index holds {indexed} lpns but {} slots are in use",
                self.len()
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lru_evicts_least_recent() {
        let mut c = Cmt::new(3, 10, CmtPolicy::Lru);
        for l in 0..3 {
            c.insert(l, l as u32, false);
        }
        c.touch(c.slot(0).unwrap());
        let v = c.victim().unwrap();
        assert_eq!(c.lpn[v as usize], 1);
        c.remove(v);
        c.insert(5, 5, true);
        assert_eq!(c.lpn[c.victim().unwrap() as usize], 2);
        c.check().unwrap();
    }

    #[test]
    fn slru_protects_reused_entries() {
        // 4 entries, 2 protected. Entry 0 is hit once, then a scan of new entries
        // passes: plain LRU would evict 0, SLRU keeps it.
        let mut c = Cmt::new(4, 100, CmtPolicy::Slru);
        for l in 0..4 {
            c.insert(l, 0, false);
        }
        c.touch(c.slot(0).unwrap());
        for l in 10..20 {
            let v = c.victim().unwrap();
            assert_ne!(c.lpn[v as usize], 0, "SLRU evicted the protected entry");
            c.remove(v);
            c.insert(l, 0, false);
            c.check().unwrap();
        }
        // Protected overflow demotes its LRU entry to probation.
        for l in [17u64, 18, 19] {
            c.touch(c.slot(l).unwrap());
            c.check().unwrap();
        }
        assert!(c.slot(0).is_some());
        assert_eq!(c.lpn[c.victim().unwrap() as usize], 0);
    }
}
