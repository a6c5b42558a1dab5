//! The file set's directory tree, as Filebench builds it
//! (`fileset_populate_subdir` in fileset.c).
//!
//! Filebench gives a file set a mean directory width (`dirwidth`) and
//! derives a mean depth, `ln(entries) / ln(dirwidth)`. Every directory
//! draws its own depth and width from gamma distributions with those means
//! and Filebench's `dirgamma` of 1.5 (`gamma_dist_knuth`); a directory at
//! or below its drawn depth is a leaf and holds `ceil(width)` files, any
//! other holds `ceil(width)` subdirectories, made depth first, until every
//! file has its place. The file set's root directory (Filebench's
//! `$dir/<fileset>`, a directory of the file system's root) holds
//! subdirectories only and keeps making them until the files are placed.
//! Fileserver's 10,000 files in directories of 20 thus lie about three
//! levels deep; varmail's width of 1,000,000 puts its files in one
//! directory below the root.
//!
//! Directories are numbered in the order they are made, so a directory's
//! parent comes before it; files are numbered in the order they are placed.

use rand::RngCore;
use rand_distr::{Distribution, Gamma};
use ssd_core::rng::{SimRng, SimRngExt};

/// Filebench's default `dirgamma` (1500, in thousandths).
const DIR_GAMMA: f64 = 1.5;
/// Deepest level made (a guard the drawn depths never reach for a width of
/// 2 or more).
const MAX_DEPTH: u32 = 64;

/// A file set's directories and where each file is (see the module docs).
/// The default is the empty tree (no directory, no file).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DirTree {
    /// Per directory, its parent directory (`None`: the file set's root, a
    /// directory of the file system's root).
    parent: Vec<Option<u32>>,
    /// Per directory, its place among its parent's entries.
    slot: Vec<u32>,
    /// Per directory, its entries: files of a leaf, subdirectories of any
    /// other.
    entries: Vec<u32>,
    /// Per file, its directory and its place among that directory's
    /// entries.
    file: Vec<(u32, u32)>,
    /// A random draw of the tree's, for allocators that pick at random
    /// (the Orlov allocator's group for a top-level directory).
    salt: u64,
}

impl DirTree {
    /// The tree Filebench makes for `files` entries of mean directory width
    /// `width` (at least 2), drawn from the stream `seed`.
    pub fn filebench(files: u64, width: u64, seed: u64) -> DirTree {
        let mut rng = SimRng::from_seed_label(seed, "fileset-tree");
        let width = width.max(2) as f64;
        let mean_depth = (files.max(1) as f64).ln() / width.ln();
        let mut t = DirTree {
            parent: Vec::new(),
            slot: Vec::new(),
            entries: Vec::new(),
            file: Vec::with_capacity(files as usize),
            salt: rng.next_u64(),
        };
        let draws = Draws {
            depth: Gamma::new(DIR_GAMMA, mean_depth / DIR_GAMMA).ok(),
            width: Gamma::new(DIR_GAMMA, width / DIR_GAMMA).expect("a positive width"),
        };
        t.populate(None, 0, 0, files, &draws, &mut rng);
        t
    }

    /// Directories of `width` files each, all in the file system's root
    /// (one level, no file-set root): the layout the models' own tests
    /// take, whose counts they check.
    #[cfg(test)]
    pub(crate) fn flat(files: u64, width: u64) -> DirTree {
        let ndirs = files.div_ceil(width).max(1);
        DirTree {
            parent: vec![None; ndirs as usize],
            slot: (0..ndirs as u32).collect(),
            entries: (0..ndirs)
                .map(|d| (files - d * width).min(width) as u32)
                .collect(),
            file: (0..files)
                .map(|f| ((f / width) as u32, (f % width) as u32))
                .collect(),
            salt: 0,
        }
    }

    /// One directory of `parent` at `depth` and what it holds, depth first.
    fn populate(
        &mut self,
        parent: Option<u32>,
        slot: u32,
        depth: u32,
        files: u64,
        draws: &Draws,
        rng: &mut SimRng,
    ) {
        let depth = depth + 1;
        let d = self.parent.len() as u32;
        self.parent.push(parent);
        self.slot.push(slot);
        self.entries.push(0);
        // As fileset_populate_subdir: the depth truncated, 0 taken as 1.
        let depth_drawn = draws.depth.map_or(1, |g| (g.sample(rng) as u32).max(1));
        let mut width = draws.width.sample(rng);
        if width == 0.0 {
            width = 1.0;
        }
        let leaf = depth >= depth_drawn || depth >= MAX_DEPTH;
        let mut i = 1u64;
        while (parent.is_none() || (i as f64) < width + 1.0) && (self.file.len() as u64) < files {
            if parent.is_some() && leaf {
                self.file.push((d, self.entries[d as usize]));
                self.entries[d as usize] += 1;
            } else {
                let k = self.entries[d as usize];
                self.entries[d as usize] += 1;
                self.populate(Some(d), k, depth, files, draws, rng);
            }
            i += 1;
        }
    }

    /// Directories in the tree (the file set's root included).
    pub fn dirs(&self) -> usize {
        self.parent.len()
    }
    /// Files placed.
    pub fn files(&self) -> u64 {
        self.file.len() as u64
    }
    /// Directory `d`'s parent (`None`: the file set's root).
    pub fn parent(&self, d: usize) -> Option<usize> {
        self.parent[d].map(|p| p as usize)
    }
    /// Directory `d`'s entries (files or subdirectories).
    pub fn entries(&self, d: usize) -> u64 {
        self.entries[d] as u64
    }
    /// File `f`'s directory and its place among the directory's entries.
    pub fn dir_of(&self, f: u32) -> (usize, u64) {
        let (d, k) = self.file[f as usize];
        (d as usize, k as u64)
    }
    /// Directory `d`'s place among its parent's entries (0 for the root).
    pub fn slot_of_dir(&self, d: usize) -> u64 {
        self.slot[d] as u64
    }
    /// Directory `d`'s depth below the file set's root (the root: 0).
    pub fn depth(&self, d: usize) -> u32 {
        let mut n = 0;
        let mut x = d;
        while let Some(p) = self.parent(x) {
            n += 1;
            x = p;
        }
        n
    }
    /// The tree's random draw (see [`DirTree`]'s `salt`).
    pub fn salt(&self) -> u64 {
        self.salt
    }
}

struct Draws {
    depth: Option<Gamma<f64>>,
    width: Gamma<f64>,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every file placed once, in a leaf; leaves hold files only, other
    /// directories subdirectories only; parents come first; the mean width
    /// and the depth are Filebench's.
    #[test]
    fn the_tree_is_filebenchs() {
        for (files, width) in [
            (10_000u64, 20u64),
            (1_000, 20),
            (1_000, 1_000_000),
            (11, 1_024),
        ] {
            let t = DirTree::filebench(files, width, 7);
            assert_eq!(t.files(), files);
            let mut holds_files = vec![0u64; t.dirs()];
            for f in 0..files as u32 {
                let (d, k) = t.dir_of(f);
                assert!(k < t.entries(d));
                holds_files[d] += 1;
            }
            let mut subdirs = vec![0u64; t.dirs()];
            for d in 1..t.dirs() {
                let p = t.parent(d).unwrap();
                assert!(p < d);
                assert_eq!(t.slot_of_dir(d), subdirs[p]);
                subdirs[p] += 1;
            }
            assert_eq!(t.parent(0), None);
            assert_eq!(holds_files[0], 0, "the root holds directories");
            for d in 0..t.dirs() {
                assert!(holds_files[d] == 0 || subdirs[d] == 0, "dir {d} holds both");
                assert_eq!(holds_files[d] + subdirs[d], t.entries(d));
            }
            let leaves: Vec<usize> = (0..t.dirs()).filter(|&d| holds_files[d] > 0).collect();
            let mean = files as f64 / leaves.len() as f64;
            let deepest = leaves.iter().map(|&d| t.depth(d)).max().unwrap();
            match (files, width) {
                // Gamma(1.5) widths of mean 20 (a leaf's last draw cut
                // short by the files running out), about 3 levels.
                (10_000, 20) => {
                    assert!((15.0..=26.0).contains(&mean), "{mean}");
                    assert!((2..=12).contains(&deepest), "{deepest}");
                }
                (1_000, 1_000_000) => assert_eq!(leaves.len(), 1),
                (11, 1_024) => assert_eq!(leaves.len(), 1),
                _ => assert!(mean > 5.0, "{mean}"),
            }
        }
        // The same seed, the same tree; another seed, another.
        assert_eq!(
            DirTree::filebench(500, 20, 1),
            DirTree::filebench(500, 20, 1)
        );
        assert_ne!(
            DirTree::filebench(500, 20, 1),
            DirTree::filebench(500, 20, 2)
        );
    }
}
