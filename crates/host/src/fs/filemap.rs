//! A file's pages as the page cache keeps them, for the file systems that
//! allocate at `write()` (ext2/3/4, XFS, ReiserFS, `raw`): their writes
//! and reads are [`FsCall::Buffered`], bytes of the file, so the cache
//! keys the pages by file and index as Linux's `address_space` does, and
//! asks [`FileSystem::place`](super::FileSystem::place) at writeback and
//! [`FileSystem::locate`](super::FileSystem::locate) at a read where the
//! pages' blocks are. The block a page maps is chosen at `write()` (the
//! models' allocation, `ext4_map_blocks` / `xfs_bmapi_write` /
//! `reiserfs_get_block` with create), but holds none of the file's data
//! until the page is written back: such a block is *new* (a buffer
//! `buffer_new` in `__block_write_begin_int`, zeroed in memory and never
//! read; ext4 and XFS unwritten extents, read as zeros). [`NewBlocks`]
//! keeps a file's new blocks; `locate` leaves them out (the cache zero-fills
//! them without I/O, as `mpage_readahead` / `iomap_readahead` zero a hole
//! or an unwritten extent), and `place` gives every block its own block and
//! makes it written.

use super::{push_placed, FsCall};
use crate::workload::IoOp;

/// A file's blocks allocated but never written back (file block runs
/// `[lo, hi)`, sorted and disjoint): few, as a file's new blocks are at its
/// end until the cache writes them.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct NewBlocks {
    runs: Vec<(u64, u64)>,
}

impl NewBlocks {
    /// File blocks `[lo, hi)` were just allocated.
    pub fn add(&mut self, lo: u64, hi: u64) {
        if lo >= hi {
            return;
        }
        // Allocation grows a file at its end: after every run.
        match self.runs.last_mut() {
            Some(r) if r.1 == lo => r.1 = hi,
            Some(r) if r.1 > lo => {
                debug_assert!(false, "new blocks {lo}..{hi} over {r:?}");
            }
            _ => self.runs.push((lo, hi)),
        }
    }

    /// File blocks `[lo, hi)` are written (placed at writeback).
    pub fn remove(&mut self, lo: u64, hi: u64) {
        if lo >= hi || !self.runs.iter().any(|&(a, b)| a < hi && b > lo) {
            return;
        }
        let mut out = Vec::with_capacity(self.runs.len() + 1);
        for &(a, b) in &self.runs {
            if b <= lo || a >= hi {
                out.push((a, b));
                continue;
            }
            if a < lo {
                out.push((a, lo));
            }
            if b > hi {
                out.push((hi, b));
            }
        }
        self.runs = out;
    }

    /// Whether file block `i` is new.
    pub fn contains(&self, i: u64) -> bool {
        let k = self.runs.partition_point(|&(_, b)| b <= i);
        self.runs.get(k).is_some_and(|&(a, _)| a <= i)
    }

    /// The new blocks, as file block runs.
    pub fn runs(&self) -> &[(u64, u64)] {
        &self.runs
    }
}

/// The blocks of file blocks `[index, index + n)` mapped by `extents`
/// ((first block, blocks) in file order, the first at file block `base`),
/// as runs of (first file block, first block, blocks) on `out`, the blocks
/// in `new` left out when given (a read finds no data there).
pub fn runs_of(
    extents: &[(u64, u64)],
    base: u64,
    index: u64,
    n: u32,
    new: Option<&NewBlocks>,
    out: &mut Vec<(u64, u64, u32)>,
) {
    let end = index + n as u64;
    let mut at = base;
    for &(s, len) in extents {
        let (lo, hi) = (at.max(index), (at + len).min(end));
        if lo < hi {
            for i in lo..hi {
                if new.is_none_or(|nb| !nb.contains(i)) {
                    push_placed(out, i, s + (i - at));
                }
            }
        }
        at += len;
        if at >= end {
            break;
        }
    }
}

/// [`FileSystem::place`](super::FileSystem::place) of a file system that
/// allocates at `write()` (its extents from file block 0): the blocks the
/// write allocated for file blocks `[index, index + n)`, which now hold the
/// data written back (they leave `new`).
pub fn place_allocated(
    extents: &[(u64, u64)],
    new: &mut NewBlocks,
    index: u64,
    n: u32,
    out: &mut Vec<(u64, u64, u32)>,
) {
    runs_of(extents, 0, index, n, None, out);
    new.remove(index, index + n as u64);
}

/// The call of `len` bytes at `off` of the call's file through the page
/// cache as the file's pages, sector-aligned (the cache reads and writes
/// whole pages); nothing for no bytes.
pub fn buffered(op: IoOp, off: u64, len: u64, io: &mut Vec<FsCall>) {
    if len == 0 {
        return;
    }
    let lo = off / 512 * 512;
    let hi = (off + len).div_ceil(512) * 512;
    io.push(FsCall::Buffered {
        op,
        off: lo,
        bytes: hi - lo,
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn new_blocks_are_added_at_the_end_and_written_in_any_order() {
        let mut nb = NewBlocks::default();
        nb.add(0, 4);
        nb.add(4, 8);
        nb.add(10, 12);
        assert_eq!(nb.runs(), &[(0, 8), (10, 12)]);
        nb.remove(2, 5);
        assert_eq!(nb.runs(), &[(0, 2), (5, 8), (10, 12)]);
        assert!(nb.contains(1) && !nb.contains(2) && nb.contains(7) && !nb.contains(9));
        nb.remove(0, 12);
        assert!(nb.runs().is_empty());
    }

    /// Runs over two extents: by file block, split where the blocks are
    /// not contiguous, new blocks left out for a read.
    #[test]
    fn runs_follow_the_extents_and_leave_new_blocks_out() {
        let ext = [(100, 3), (103, 1), (200, 4)];
        let mut out = Vec::new();
        runs_of(&ext, 0, 1, 6, None, &mut out);
        assert_eq!(out, vec![(1, 101, 3), (4, 200, 3)]);
        let mut nb = NewBlocks::default();
        nb.add(5, 8);
        out.clear();
        runs_of(&ext, 0, 0, 8, Some(&nb), &mut out);
        assert_eq!(out, vec![(0, 100, 4), (4, 200, 1)]);
        // From a later extent (a binary search's), past the file's end.
        out.clear();
        runs_of(&ext[2..], 4, 6, 10, None, &mut out);
        assert_eq!(out, vec![(6, 202, 2)]);
    }
}
