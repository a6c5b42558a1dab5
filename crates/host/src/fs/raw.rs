//! `raw`: files as extents on the bare device, with no metadata at all: the
//! baseline that shows what a file system's metadata and journal add.
//!
//! A file's blocks are allocated as it grows, after its last block when that
//! block is free (the goal), else at the next free run from a rotating
//! cursor (next fit); an unlinked file's blocks are freed (no discard).

use super::alloc::FreeRuns;
use super::filemap::{buffered, place_allocated, runs_of, NewBlocks};
use super::{FileSystem, FsCall, FsKind, FsStats, FsyncIo, NoSpace, BLOCK};
use crate::workload::IoOp;
use ssd_core::units::SimTime;

#[derive(Clone, Debug, Default)]
struct File {
    exists: bool,
    size: u64,
    extents: Vec<(u64, u64)>,
    /// Blocks that hold none of its data yet (written back since).
    new: NewBlocks,
}

impl File {
    fn blocks(&self) -> u64 {
        self.extents.iter().map(|e| e.1).sum()
    }
}

/// The raw layout (see the module docs).
pub struct Raw {
    blocks: u64,
    files: Vec<File>,
    free: FreeRuns,
    cursor: u64,
    allocated: u64,
}

impl Raw {
    /// A bare device of `blocks` blocks for `files` files, all free.
    pub fn new(blocks: u64, files: u64) -> Raw {
        let mut free = FreeRuns::new();
        if blocks > 0 {
            free.free(0, blocks);
        }
        Raw {
            blocks,
            files: vec![File::default(); files as usize],
            free,
            cursor: 0,
            allocated: 0,
        }
    }

    fn alloc(&mut self, f: u32, mut want: u64) -> Result<(), NoSpace> {
        if want > self.free.free_blocks() {
            return Err(NoSpace);
        }
        while want > 0 {
            let goal = self.files[f as usize].extents.last().map(|&(s, n)| s + n);
            let run = goal.and_then(|g| self.free.take_at(g, want)).or_else(|| {
                let s = self.free.next_free(self.cursor)?;
                self.free.take_at(s, want)
            });
            let (s, n) = run.ok_or(NoSpace)?;
            self.cursor = s + n;
            self.allocated += n;
            let ext = &mut self.files[f as usize].extents;
            match ext.last_mut() {
                Some(e) if e.0 + e.1 == s => e.1 += n,
                _ => ext.push((s, n)),
            }
            want -= n;
        }
        Ok(())
    }
}

impl FileSystem for Raw {
    fn kind(&self) -> FsKind {
        FsKind::Raw
    }
    fn blocks(&self) -> u64 {
        self.blocks
    }
    fn data_room(&self) -> u64 {
        self.free.free_blocks()
    }
    fn own_areas(&self) -> String {
        "nothing: files are extents on the bare device".into()
    }
    fn create(&mut self, f: u32, _now: SimTime, _io: &mut Vec<FsCall>) -> Result<(), NoSpace> {
        let file = &mut self.files[f as usize];
        debug_assert!(!file.exists);
        file.exists = true;
        file.size = 0;
        Ok(())
    }
    fn unlink(&mut self, f: u32, _now: SimTime, _io: &mut Vec<FsCall>) {
        let file = std::mem::take(&mut self.files[f as usize]);
        for (s, n) in file.extents {
            self.free.free(s, n);
        }
    }
    fn write(
        &mut self,
        f: u32,
        off: u64,
        len: u64,
        _now: SimTime,
        io: &mut Vec<FsCall>,
    ) -> Result<(), NoSpace> {
        let file = &self.files[f as usize];
        let have = file.blocks();
        let need = (off + len).div_ceil(BLOCK).saturating_sub(have);
        // Blocks a failed allocation kept are new too.
        let grown = self.alloc(f, need);
        let file = &mut self.files[f as usize];
        file.new.add(have, file.blocks());
        grown?;
        file.size = file.size.max(off + len);
        buffered(IoOp::Write, off, len, io);
        Ok(())
    }
    fn read(&mut self, f: u32, off: u64, len: u64, _now: SimTime, io: &mut Vec<FsCall>) {
        let end = (off + len).min(self.files[f as usize].size);
        buffered(IoOp::Read, off, end.saturating_sub(off), io);
    }
    fn place(&mut self, f: u32, index: u64, n: u32, _now: SimTime, out: &mut Vec<(u64, u64, u32)>) {
        let file = &mut self.files[f as usize];
        if file.exists {
            place_allocated(&file.extents, &mut file.new, index, n, out);
        }
    }
    fn locate(&self, f: u32, index: u64, n: u32, out: &mut Vec<(u64, u64, u32)>) {
        let file = &self.files[f as usize];
        runs_of(&file.extents, 0, index, n, Some(&file.new), out);
    }
    fn places_at_writeback(&self) -> bool {
        true
    }
    fn fsync(&mut self, _f: u32, _now: SimTime) -> FsyncIo {
        FsyncIo::default()
    }
    fn settle(&mut self) {
        self.allocated = 0;
    }
    fn size(&self, f: u32) -> u64 {
        self.files[f as usize].size
    }
    fn exists(&self, f: u32) -> bool {
        self.files[f as usize].exists
    }
    fn check(&self) -> Result<(), String> {
        let mut owned: Vec<(u64, u64)> = Vec::new();
        for (i, f) in self.files.iter().enumerate() {
            if !f.exists && !f.extents.is_empty() {
                return Err(format!("deleted file {i} keeps extents"));
            }
            if f.blocks() != f.size.div_ceil(BLOCK) {
                return Err(format!(
                    "file {i}: {} bytes in {} blocks",
                    f.size,
                    f.blocks()
                ));
            }
            owned.extend(f.extents.iter().copied());
        }
        owned.extend(self.free.runs());
        owned.sort_unstable();
        let mut end = 0;
        for (s, n) in owned {
            if s != end {
                return Err(format!(
                    "block {} is neither free nor a file's (or twice)",
                    end.min(s)
                ));
            }
            end = s + n;
        }
        if end != self.blocks {
            return Err(format!("blocks end at {end}, not {}", self.blocks));
        }
        Ok(())
    }
    fn stats(&self) -> FsStats {
        FsStats {
            kind: "raw".into(),
            blocks: self.blocks,
            used_blocks: self.blocks - self.free.free_blocks(),
            data_blocks_allocated: self.allocated,
            extents: self.files.iter().map(|f| f.extents.len() as u64).sum(),
            free_extents: self.free.fragmentation().0,
            free_extent_mean_blocks: self.free.fragmentation().1,
            ..FsStats::default()
        }
    }
}
