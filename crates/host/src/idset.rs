//! A set of small indices with ordered lookup: two levels of bit words, so
//! that finding the next member from an index costs a few word scans
//! however many indices there are (65,536 threads: 1,024 words under 16
//! summary words).
//!
//! The page cache keeps its runnable threads in one, so that a step visits
//! the threads that can move, in index order, instead of every thread.

/// A set of `usize` indices (growing as members are inserted).
#[derive(Clone, Debug, Default)]
pub struct IdSet {
    words: Vec<u64>,
    /// Bit `w % 64` of `summary[w / 64]` is set when `words[w]` is not 0.
    summary: Vec<u64>,
    len: usize,
}

impl IdSet {
    /// Insert `i`; true if it was not a member.
    pub fn insert(&mut self, i: usize) -> bool {
        let w = i / 64;
        if w >= self.words.len() {
            self.words.resize(w + 1, 0);
            self.summary.resize(w / 64 + 1, 0);
        }
        let bit = 1u64 << (i % 64);
        if self.words[w] & bit != 0 {
            return false;
        }
        self.words[w] |= bit;
        self.summary[w / 64] |= 1u64 << (w % 64);
        self.len += 1;
        true
    }

    /// Remove `i`; true if it was a member.
    pub fn remove(&mut self, i: usize) -> bool {
        let w = i / 64;
        let bit = 1u64 << (i % 64);
        match self.words.get_mut(w) {
            Some(word) if *word & bit != 0 => {
                *word &= !bit;
                if *word == 0 {
                    self.summary[w / 64] &= !(1u64 << (w % 64));
                }
                self.len -= 1;
                true
            }
            _ => false,
        }
    }

    /// Whether `i` is a member.
    pub fn contains(&self, i: usize) -> bool {
        self.words
            .get(i / 64)
            .is_some_and(|w| w & (1u64 << (i % 64)) != 0)
    }

    /// Members.
    pub fn len(&self) -> usize {
        self.len
    }

    /// No members.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The smallest member at or after `i`.
    pub fn next_from(&self, i: usize) -> Option<usize> {
        let w = i / 64;
        let word = *self.words.get(w)?;
        let here = word & (!0u64 << (i % 64));
        if here != 0 {
            return Some(w * 64 + here.trailing_zeros() as usize);
        }
        // The next non-empty word after `w`, through the summary.
        let from = w + 1;
        let mut s = from / 64;
        let mut mask = if from.is_multiple_of(64) {
            !0u64
        } else {
            !0u64 << (from % 64)
        };
        while let Some(&sw) = self.summary.get(s) {
            let m = sw & mask;
            if m != 0 {
                let w = s * 64 + m.trailing_zeros() as usize;
                return Some(w * 64 + self.words[w].trailing_zeros() as usize);
            }
            s += 1;
            mask = !0;
        }
        None
    }

    /// Move every member of `other` into this set, leaving `other` empty.
    pub fn take_all(&mut self, other: &mut IdSet) {
        let mut i = 0;
        while let Some(m) = other.next_from(i) {
            self.insert(m);
            i = m + 1;
        }
        other.words.iter_mut().for_each(|w| *w = 0);
        other.summary.iter_mut().for_each(|w| *w = 0);
        other.len = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    #[test]
    fn ordered_lookup_matches_an_ordered_set() {
        // A deterministic walk of inserts and removes over indices spanning
        // several summary words, checked against BTreeSet at every step.
        let mut s = IdSet::default();
        let mut r = BTreeSet::new();
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        for _ in 0..20_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let i = (x % 9_000) as usize;
            if x & (1 << 40) != 0 {
                assert_eq!(s.insert(i), r.insert(i));
            } else {
                assert_eq!(s.remove(i), r.remove(&i));
            }
            let from = ((x >> 20) % 9_100) as usize;
            assert_eq!(s.next_from(from), r.range(from..).next().copied());
            assert_eq!(s.contains(i), r.contains(&i));
            assert_eq!(s.len(), r.len());
        }
    }

    #[test]
    fn take_all_moves_and_empties() {
        let mut a = IdSet::default();
        let mut b = IdSet::default();
        for i in [3, 64, 4095, 4096, 70_000] {
            b.insert(i);
        }
        a.insert(5);
        a.take_all(&mut b);
        assert!(b.is_empty() && b.next_from(0).is_none());
        let got: Vec<usize> =
            std::iter::successors(a.next_from(0), |&m| a.next_from(m + 1)).collect();
        assert_eq!(got, vec![3, 5, 64, 4095, 4096, 70_000]);
        assert_eq!(a.len(), 6);
    }
}
