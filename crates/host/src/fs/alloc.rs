//! Free space as runs of blocks (start -> length), the block bitmap's
//! content kept as extents: allocation at a goal, next free run from a
//! point, freeing with coalescing.

use std::collections::BTreeMap;

/// The free blocks of a file system as disjoint, coalesced runs.
#[derive(Clone, Debug, Default)]
pub struct FreeRuns {
    runs: BTreeMap<u64, u64>,
    free: u64,
}

impl FreeRuns {
    /// No free block.
    pub fn new() -> FreeRuns {
        FreeRuns::default()
    }

    /// Blocks free now.
    pub fn free_blocks(&self) -> u64 {
        self.free
    }

    /// Is block `b` free?
    pub fn is_free(&self, b: u64) -> bool {
        self.runs
            .range(..=b)
            .next_back()
            .is_some_and(|(&s, &n)| b < s + n)
    }

    /// Return `[s, s + n)` to the free space (it must be allocated).
    pub fn free(&mut self, s: u64, n: u64) {
        debug_assert!(n > 0 && !self.overlaps(s, n), "double free of {s}+{n}");
        let (mut s, mut n) = (s, n);
        self.free += n;
        if let Some((&ps, &pn)) = self.runs.range(..s).next_back() {
            if ps + pn == s {
                self.runs.remove(&ps);
                s = ps;
                n += pn;
            }
        }
        if let Some(nn) = self.runs.remove(&(s + n)) {
            n += nn;
        }
        self.runs.insert(s, n);
    }

    fn overlaps(&self, s: u64, n: u64) -> bool {
        self.runs
            .range(..s + n)
            .next_back()
            .is_some_and(|(&rs, &rn)| rs + rn > s)
    }

    /// Take up to `want` blocks starting exactly at `at`, if `at` is free.
    pub fn take_at(&mut self, at: u64, want: u64) -> Option<(u64, u64)> {
        let (&s, &n) = self.runs.range(..=at).next_back()?;
        if at >= s + n || want == 0 {
            return None;
        }
        let got = want.min(s + n - at);
        self.runs.remove(&s);
        if at > s {
            self.runs.insert(s, at - s);
        }
        if at + got < s + n {
            self.runs.insert(at + got, s + n - at - got);
        }
        self.free -= got;
        Some((at, got))
    }

    /// The first free block at or after `from` below `end`, if any.
    pub fn next_free_in(&self, from: u64, end: u64) -> Option<u64> {
        if let Some((&s, &n)) = self.runs.range(..=from).next_back() {
            if from < s + n {
                return (from < end).then_some(from);
            }
        }
        self.runs.range(from..end).next().map(|(&s, _)| s)
    }

    /// The first free block at or after `from`, wrapping to the start.
    pub fn next_free(&self, from: u64) -> Option<u64> {
        self.next_free_in(from, u64::MAX)
            .or_else(|| self.runs.keys().next().copied())
    }

    /// The first free run at or after `from` below `end` at least `len`
    /// long (its start), if any.
    pub fn first_fit_in(&self, from: u64, end: u64, len: u64) -> Option<u64> {
        if let Some((&s, &n)) = self.runs.range(..from).next_back() {
            if s + n >= from + len && from < end {
                return Some(from);
            }
        }
        self.runs
            .range(from..end)
            .find(|(_, &n)| n >= len)
            .map(|(&s, _)| s)
    }

    /// Free runs (extents) and their mean length in blocks.
    pub fn fragmentation(&self) -> (u64, f64) {
        let n = self.runs.len() as u64;
        (
            n,
            if n > 0 {
                self.free as f64 / n as f64
            } else {
                0.0
            },
        )
    }

    /// The free runs, in block order.
    pub fn runs(&self) -> impl Iterator<Item = (u64, u64)> + '_ {
        self.runs.iter().map(|(&s, &n)| (s, n))
    }

    /// Free blocks in `[lo, hi)`.
    pub fn free_in(&self, lo: u64, hi: u64) -> u64 {
        let mut n = 0;
        let first = self
            .runs
            .range(..lo)
            .next_back()
            .map(|(&s, _)| s)
            .unwrap_or(lo);
        for (&s, &l) in self.runs.range(first..hi) {
            let a = s.max(lo);
            let b = (s + l).min(hi);
            if b > a {
                n += b - a;
            }
        }
        n
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn take_free_and_coalesce() {
        let mut f = FreeRuns::new();
        f.free(0, 100);
        assert_eq!(f.take_at(10, 5), Some((10, 5)));
        assert_eq!(f.free_blocks(), 95);
        assert!(!f.is_free(12) && f.is_free(15) && f.is_free(9));
        assert_eq!(f.next_free_in(10, 100), Some(15));
        assert_eq!(f.first_fit_in(0, 100, 11), Some(15));
        assert_eq!(f.free_in(5, 20), 10);
        f.free(10, 5);
        assert_eq!(f.runs().collect::<Vec<_>>(), vec![(0, 100)]);
        assert_eq!(f.take_at(100, 1), None);
        assert_eq!(f.take_at(95, 10), Some((95, 5)));
        assert_eq!(f.next_free(96), Some(0));
    }
}
