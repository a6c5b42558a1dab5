//! File-level Filebench personalities (`personality.level = "file"`):
//! varmail, fileserver and webserver as Filebench's own workload files
//! define them (workloads/*.f), on a simple extent allocator that stands in
//! for a file system until the file-system layouts land.
//!
//! **The file set** (`define fileset`): `files` entries whose sizes are
//! drawn once from Filebench's `cvar-gamma` (gamma with shape 1.5 and the
//! personality's mean, at least one byte); `prealloc` percent of them exist
//! at the start, written whole (as Filebench's pre-allocation, before the
//! measured run). Webserver adds its one-entry log file set.
//!
//! **The flowops**, per thread, in Filebench's order (openfile and closefile
//! cost no I/O and are not calls; statfile reads metadata that is cached):
//! * varmail: deletefile, createfile, appendfilerand, fsync, closefile,
//!   openfile, readwholefile, appendfilerand, fsync, closefile, openfile,
//!   readwholefile, closefile;
//! * fileserver: createfile, writewholefile, closefile, openfile,
//!   appendfilerand, closefile, openfile, readwholefile, closefile,
//!   deletefile, statfile;
//! * webserver: ten times openfile, readwholefile, closefile; then
//!   appendfilerand to the log.
//!
//! `readwholefile` and `writewholefile` move the file in `iosize` (1 MiB)
//! calls; `appendfilerand` appends a uniformly drawn size in [1, iosize)
//! (16 KiB), as `flowoplib_appendfilerand`, skipping a zero draw; createfile
//! picks an entry that does not exist, deletefile and openfile one that
//! does (a flowop with no such entry is skipped and counted).
//!
//! **The extent allocator**: the device after `offset` is a metadata area
//! (inode table, one directory, the block bitmap) and a data area of 4 KiB
//! blocks. A file's blocks are allocated as it grows, contiguous after its
//! last block when that block is free (the allocation goal, as ext2's),
//! else at the next free run from a rotating cursor (next fit); a deleted
//! file's blocks are freed (no discard, as a file system mounted without
//! `discard`). Each create, delete and size change dirties the file's
//! inode-table block; create and delete dirty its directory block;
//! allocation and freeing dirty the bitmap blocks they touch. These are
//! metadata writes: calls on [`crate::pagecache::METADATA_INO`] that the page
//! cache dirties at no cost to the thread and writes back like any file.
//! The counts are reported (`notes`). There is no journal: the layouts of
//! ext3/ext4, XFS, NILFS2 and F2FS will replace this allocator.

use crate::error::{invalid, ConfigError};
use crate::pagecache::METADATA_INO;
use crate::personality::{PersonalityConfig, PersonalityKind};
use crate::rng::{SimRng, SimRngExt};
use crate::units::SimTime;
use crate::workload::{HostRequest, IoOp, RequestSource, SourceError, Timing, SECTOR};
use rand::Rng;
use rand_distr::{Distribution, Gamma};
use std::collections::{BTreeMap, VecDeque};

const BLOCK: u64 = 4096;
/// Filebench's `cvar-gamma` shape (its default `gamma:1.5`).
const GAMMA_SHAPE: f64 = 1.5;
/// Inodes per inode-table block (256-byte inodes).
const INODES_PER_BLOCK: u64 = 16;
/// Directory entries per directory block.
const DIRENTS_PER_BLOCK: u64 = 128;
/// Blocks one bitmap block covers.
const BITS_PER_BLOCK: u64 = BLOCK * 8;

/// A file-level personality's parameters (Filebench's defaults, which are
/// the ones of Sun et al.'s Table 1, unless the config overrides them).
#[derive(Clone, Debug, PartialEq)]
pub struct FileParams {
    pub kind: PersonalityKind,
    pub files: u64,
    pub mean_size: u64,
    pub threads: u32,
    /// `iosize` of readwholefile / writewholefile.
    pub iosize: u64,
    /// `meanappendsize` (appendfilerand's `iosize`).
    pub append: u64,
    /// Percent of the entries that exist at the start.
    pub prealloc: u32,
    /// Application calls to make after the pre-allocation.
    pub calls: u64,
    pub offset: u64,
}

impl FileParams {
    pub fn from_config(c: &PersonalityConfig) -> Result<FileParams, ConfigError> {
        use PersonalityKind::*;
        let (files, mean, threads, prealloc) = match c.kind {
            Varmail => (1_000, 16 << 10, 16, 80),
            Fileserver => (10_000, 128 << 10, 50, 80),
            Webserver => (1_000, 16 << 10, 100, 100),
            Oltp => {
                return Err(invalid(
                    "personality.level",
                    "oltp has no file-level model (Filebench's oltp is asynchronous direct I/O on a database file): use level = \"block\"",
                ))
            }
        };
        let p = FileParams {
            kind: c.kind,
            files: c.files.unwrap_or(files),
            mean_size: c.file_size.map_or(mean, |s| s.0),
            threads: c.threads.unwrap_or(threads),
            iosize: c.read_size.map_or(1 << 20, |s| s.0),
            append: c.io_size.map_or(16 << 10, |s| s.0),
            prealloc: c.prealloc_percent.unwrap_or(prealloc),
            calls: c.requests,
            offset: c.offset.0,
        };
        let fields = [
            (p.files, "personality.files"),
            (p.mean_size, "personality.file_size"),
            (p.threads as u64, "personality.threads"),
            (p.iosize, "personality.read_size"),
            (p.append, "personality.io_size"),
        ];
        for (v, f) in fields {
            if v == 0 {
                return Err(invalid(f, "must be positive"));
            }
        }
        if p.files > 1 << 24 {
            return Err(invalid("personality.files", "at most 16,777,216 files"));
        }
        if !p.iosize.is_multiple_of(SECTOR) || p.iosize > 1 << 30 {
            return Err(invalid(
                "personality.read_size",
                "must be a multiple of 512 bytes, at most 1 GiB",
            ));
        }
        if p.append > 1 << 30 || p.mean_size > 1 << 40 {
            return Err(invalid("personality.io_size", "too large"));
        }
        if p.prealloc > 100 {
            return Err(invalid("personality.prealloc_percent", "must be 0..=100"));
        }
        if !p.offset.is_multiple_of(BLOCK) {
            return Err(invalid("personality.offset", "must be a multiple of 4 KiB"));
        }
        if p.threads > 1 << 16 {
            return Err(invalid("personality.threads", "at most 65,536"));
        }
        Ok(p)
    }
}

/// Where one file's bytes are: extents of (first block, blocks), in file
/// order.
#[derive(Clone, Debug, Default)]
struct File {
    exists: bool,
    /// Size the entry is created with (drawn once, as Filebench's).
    nominal: u64,
    size: u64,
    extents: Vec<(u64, u64)>,
}

impl File {
    fn blocks(&self) -> u64 {
        self.extents.iter().map(|e| e.1).sum()
    }
    fn last_block(&self) -> Option<u64> {
        self.extents.last().map(|&(s, n)| s + n - 1)
    }
}

/// A step of a thread's flow, expanded into calls as it runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Step {
    Delete,
    Create,
    Append,
    Fsync,
    Open,
    ReadWhole,
    WriteWhole,
    Stat,
    OpenLog,
}

const VARMAIL: &[Step] = &[
    Step::Delete,
    Step::Create,
    Step::Append,
    Step::Fsync,
    Step::Open,
    Step::ReadWhole,
    Step::Append,
    Step::Fsync,
    Step::Open,
    Step::ReadWhole,
];
const FILESERVER: &[Step] = &[
    Step::Create,
    Step::WriteWhole,
    Step::Open,
    Step::Append,
    Step::Open,
    Step::ReadWhole,
    Step::Delete,
    Step::Stat,
];

#[derive(Clone, Debug, Default)]
struct Thread {
    pc: usize,
    /// The open file (fd=1).
    fd: Option<u64>,
    /// Calls of the current step not handed out yet.
    pending: VecDeque<HostRequest>,
}

/// Counts of what the flows did (reported as notes).
#[derive(Clone, Debug, Default)]
pub struct FileStats {
    pub creates: u64,
    pub deletes: u64,
    pub appends: u64,
    pub whole_reads: u64,
    pub whole_writes: u64,
    pub fsyncs: u64,
    pub stats: u64,
    pub skipped: u64,
    pub metadata_writes: u64,
    pub prealloc_calls: u64,
}

/// A file-level Filebench personality as a closed-loop source of
/// application calls (each tagged with its file's inode number).
pub struct FileBench {
    p: FileParams,
    rng: SimRng,
    files: Vec<File>,
    existing: Vec<u64>,
    free_entries: Vec<u64>,
    /// Position of each entry in `existing` or `free_entries`.
    slot: Vec<usize>,
    /// Free data blocks: start -> length.
    free: BTreeMap<u64, u64>,
    cursor: u64,
    data_start: u64,
    data_blocks: u64,
    inode_start: u64,
    dir_start: u64,
    bitmap_start: u64,
    log: u64,
    threads: Vec<Thread>,
    next_thread: usize,
    /// Pre-allocation calls, then the flows'.
    pre: VecDeque<HostRequest>,
    issued: u64,
    pub stats: FileStats,
}

impl FileBench {
    pub fn new(
        cfg: &PersonalityConfig,
        logical_bytes: u64,
        seed: u64,
    ) -> Result<FileBench, ConfigError> {
        let p = FileParams::from_config(cfg)?;
        let mut rng = SimRng::from_seed_label(cfg.seed.unwrap_or(seed), "filebench");
        let entries = p.files + u64::from(p.kind == PersonalityKind::Webserver);
        let inode_blocks = entries.div_ceil(INODES_PER_BLOCK);
        let dir_blocks = entries.div_ceil(DIRENTS_PER_BLOCK);
        let dev_blocks = logical_bytes.saturating_sub(p.offset) / BLOCK;
        let bitmap_blocks = dev_blocks.div_ceil(BITS_PER_BLOCK);
        let meta = inode_blocks + dir_blocks + bitmap_blocks;
        let start = p.offset / BLOCK;
        let gamma = Gamma::new(GAMMA_SHAPE, p.mean_size as f64 / GAMMA_SHAPE)
            .map_err(|e| invalid("personality.file_size", e.to_string()))?;
        let mut files: Vec<File> = (0..entries)
            .map(|_| File {
                nominal: (gamma.sample(&mut rng).round() as u64).max(1),
                ..Default::default()
            })
            .collect();
        let log = p.files;
        if p.kind == PersonalityKind::Webserver {
            // The log file set: one entry, created empty... grown by appends.
            files[log as usize].nominal = 0;
        }
        let existing_n = p.files * p.prealloc as u64 / 100;
        // The data the pre-allocated files need must fit, with room to grow.
        let need: u64 = files[..existing_n as usize]
            .iter()
            .map(|f| f.nominal.div_ceil(BLOCK))
            .sum::<u64>()
            + meta;
        if dev_blocks <= meta || need.saturating_mul(2) > dev_blocks {
            return Err(invalid(
                "personality.files",
                format!(
                    "the file set ({} files of mean {} bytes, {}% pre-allocated: {} blocks with metadata) needs twice that room on the device ({} blocks after the offset)",
                    p.files, p.mean_size, p.prealloc, need, dev_blocks
                ),
            ));
        }
        let data_start = start + meta;
        let data_blocks = dev_blocks - meta;
        let mut fb = FileBench {
            rng,
            files,
            existing: Vec::new(),
            free_entries: Vec::new(),
            slot: vec![0; entries as usize],
            free: BTreeMap::from([(data_start, data_blocks)]),
            cursor: data_start,
            data_start,
            data_blocks,
            inode_start: start,
            dir_start: start + inode_blocks,
            bitmap_start: start + inode_blocks + dir_blocks,
            log,
            threads: vec![Thread::default(); p.threads as usize],
            next_thread: 0,
            pre: VecDeque::new(),
            issued: 0,
            stats: FileStats::default(),
            p,
        };
        for f in 0..fb.p.files {
            fb.slot[f as usize] = fb.free_entries.len();
            fb.free_entries.push(f);
        }
        // Pre-allocation: entries 0.. written whole by stream 0 (before the
        // measured run in Filebench; here they are calls of the run, counted
        // apart as `prealloc_calls`).
        let mut pre = VecDeque::new();
        for f in 0..existing_n {
            fb.create(f, &mut pre, 0);
            let n = fb.files[f as usize].nominal;
            fb.write_at_end(f, n, &mut pre, 0);
        }
        if fb.p.kind == PersonalityKind::Webserver {
            fb.files[log as usize].exists = true;
        }
        fb.stats.prealloc_calls = pre.len() as u64;
        fb.pre = pre;
        Ok(fb)
    }

    pub fn params(&self) -> &FileParams {
        &self.p
    }

    fn ino(f: u64) -> u32 {
        (f + 1) as u32
    }

    fn call(op: IoOp, block: u64, bytes: u64, stream: u32, ino: u32) -> HostRequest {
        HostRequest {
            arrival: SimTime::ZERO,
            op,
            lba: block * (BLOCK / SECTOR),
            sectors: bytes.div_ceil(SECTOR) as u32,
            stream,
            tag: ino,
        }
    }

    /// Dirty a metadata block (a 4 KiB write on the metadata inode).
    fn meta(&mut self, block: u64, out: &mut VecDeque<HostRequest>, stream: u32) {
        self.stats.metadata_writes += 1;
        out.push_back(Self::call(IoOp::Write, block, BLOCK, stream, METADATA_INO));
    }
    fn meta_inode(&mut self, f: u64, out: &mut VecDeque<HostRequest>, stream: u32) {
        self.meta(self.inode_start + f / INODES_PER_BLOCK, out, stream);
    }
    fn meta_bitmap(&mut self, block: u64, out: &mut VecDeque<HostRequest>, stream: u32) {
        let b = (block - self.data_start) / BITS_PER_BLOCK;
        self.meta(self.bitmap_start + b, out, stream);
    }

    fn create(&mut self, f: u64, out: &mut VecDeque<HostRequest>, stream: u32) {
        // Entry f moves from free to existing.
        let i = self.slot[f as usize];
        self.free_entries.swap_remove(i);
        if let Some(&m) = self.free_entries.get(i) {
            self.slot[m as usize] = i;
        }
        self.slot[f as usize] = self.existing.len();
        self.existing.push(f);
        let file = &mut self.files[f as usize];
        file.exists = true;
        file.size = 0;
        self.meta_inode(f, out, stream);
        self.meta(self.dir_start + f / DIRENTS_PER_BLOCK, out, stream);
    }

    fn delete(&mut self, f: u64, out: &mut VecDeque<HostRequest>, stream: u32) {
        let i = self.slot[f as usize];
        self.existing.swap_remove(i);
        if let Some(&m) = self.existing.get(i) {
            self.slot[m as usize] = i;
        }
        self.slot[f as usize] = self.free_entries.len();
        self.free_entries.push(f);
        let extents = std::mem::take(&mut self.files[f as usize].extents);
        let file = &mut self.files[f as usize];
        file.exists = false;
        file.size = 0;
        for (s, n) in extents {
            self.free_run(s, n);
            self.meta_bitmap(s, out, stream);
        }
        self.meta_inode(f, out, stream);
        self.meta(self.dir_start + f / DIRENTS_PER_BLOCK, out, stream);
    }

    fn free_run(&mut self, s: u64, n: u64) {
        let (mut s, mut n) = (s, n);
        if let Some((&ps, &pn)) = self.free.range(..s).next_back() {
            if ps + pn == s {
                self.free.remove(&ps);
                s = ps;
                n += pn;
            }
        }
        if let Some(&nn) = self.free.get(&(s + n)) {
            self.free.remove(&(s + n));
            n += nn;
        }
        self.free.insert(s, n);
    }

    /// Take up to `want` blocks at `at` (which must start a free run or lie
    /// in one).
    fn take(&mut self, at: u64, want: u64) -> Option<(u64, u64)> {
        let (&s, &n) = self.free.range(..=at).next_back()?;
        if at >= s + n {
            return None;
        }
        let got = want.min(s + n - at);
        self.free.remove(&s);
        if at > s {
            self.free.insert(s, at - s);
        }
        if at + got < s + n {
            self.free.insert(at + got, s + n - at - got);
        }
        Some((at, got))
    }

    /// Allocate `want` blocks for file `f`: after its last block if free
    /// (the goal), else from the next-fit cursor. None if the device is full.
    fn alloc(
        &mut self,
        f: u64,
        mut want: u64,
        out: &mut VecDeque<HostRequest>,
        stream: u32,
    ) -> bool {
        while want > 0 {
            let goal = self.files[f as usize].last_block().map(|b| b + 1);
            let run = goal.and_then(|g| self.take(g, want)).or_else(|| {
                let s = self
                    .free
                    .range(self.cursor..)
                    .next()
                    .or_else(|| self.free.iter().next())
                    .map(|(&s, _)| s)?;
                self.take(s, want)
            });
            let Some((s, n)) = run else {
                return false;
            };
            self.cursor = s + n;
            let ext = &mut self.files[f as usize].extents;
            match ext.last_mut() {
                Some(e) if e.0 + e.1 == s => e.1 += n,
                _ => ext.push((s, n)),
            }
            self.meta_bitmap(s, out, stream);
            want -= n;
        }
        true
    }

    /// The device runs of file `f`'s bytes [from, from + len), in order.
    fn runs(&self, f: u64, from: u64, len: u64) -> Vec<(u64, u64)> {
        let mut v = Vec::new();
        let (mut off, end) = (from, from + len);
        let mut base = 0;
        for &(s, n) in &self.files[f as usize].extents {
            let (lo, hi) = (base * BLOCK, (base + n) * BLOCK);
            if off < hi && off < end {
                let a = off.max(lo);
                let b = end.min(hi);
                v.push((s * BLOCK + (a - lo), b - a));
                off = b;
            }
            base += n;
        }
        v
    }

    /// Write `bytes` at the end of file `f`, in calls of at most `iosize`
    /// that do not cross an extent.
    fn write_at_end(&mut self, f: u64, bytes: u64, out: &mut VecDeque<HostRequest>, stream: u32) {
        if bytes == 0 {
            return;
        }
        let size = self.files[f as usize].size;
        let need = (size + bytes)
            .div_ceil(BLOCK)
            .saturating_sub(self.files[f as usize].blocks());
        if !self.alloc(f, need, out, stream) {
            self.stats.skipped += 1;
            return;
        }
        self.files[f as usize].size = size + bytes;
        self.meta_inode(f, out, stream);
        self.move_bytes(IoOp::Write, f, size, bytes, out, stream);
    }

    fn move_bytes(
        &mut self,
        op: IoOp,
        f: u64,
        from: u64,
        bytes: u64,
        out: &mut VecDeque<HostRequest>,
        stream: u32,
    ) {
        let mut off = from;
        let end = from + bytes;
        while off < end {
            let n = (end - off).min(self.p.iosize);
            for (at, len) in self.runs(f, off, n) {
                // Sector-aligned calls covering the bytes (the cache reads
                // and writes whole pages).
                let lo = at / SECTOR * SECTOR;
                let hi = (at + len).div_ceil(SECTOR) * SECTOR;
                out.push_back(HostRequest {
                    arrival: SimTime::ZERO,
                    op,
                    lba: lo / SECTOR,
                    sectors: ((hi - lo) / SECTOR) as u32,
                    stream,
                    tag: Self::ino(f),
                });
            }
            off += n;
        }
    }

    fn pick(&mut self, existing: bool) -> Option<u64> {
        let v = if existing {
            &self.existing
        } else {
            &self.free_entries
        };
        if v.is_empty() {
            return None;
        }
        let i = self.rng.gen_range(0..v.len());
        Some(v[i])
    }

    /// Run thread `t`'s next flowop, queueing its calls.
    fn step(&mut self, t: usize) {
        let stream = t as u32;
        let mut out = VecDeque::new();
        let th = &self.threads[t];
        let (step, len) = match self.p.kind {
            PersonalityKind::Varmail => (VARMAIL[th.pc % VARMAIL.len()], VARMAIL.len()),
            PersonalityKind::Fileserver => (FILESERVER[th.pc % FILESERVER.len()], FILESERVER.len()),
            _ => {
                // webserver: 10 x (open, readwhole), then the log append.
                let k = th.pc % 22;
                let s = match k {
                    20 => Step::OpenLog,
                    21 => Step::Append,
                    k if k % 2 == 0 => Step::Open,
                    _ => Step::ReadWhole,
                };
                (s, 22)
            }
        };
        match step {
            Step::Delete => match self.pick(true) {
                Some(f) => {
                    self.stats.deletes += 1;
                    self.delete(f, &mut out, stream);
                }
                None => self.stats.skipped += 1,
            },
            Step::Create => match self.pick(false) {
                Some(f) => {
                    self.stats.creates += 1;
                    self.create(f, &mut out, stream);
                    self.threads[t].fd = Some(f);
                }
                None => {
                    self.stats.skipped += 1;
                    self.threads[t].fd = None;
                }
            },
            Step::Open => self.threads[t].fd = self.pick(true),
            Step::OpenLog => self.threads[t].fd = Some(self.log),
            Step::Append => {
                if let Some(f) = self.threads[t]
                    .fd
                    .filter(|&f| self.files[f as usize].exists)
                {
                    let n = self.rng.gen_range(0..self.p.append);
                    if n > 0 {
                        self.stats.appends += 1;
                        self.write_at_end(f, n, &mut out, stream);
                    }
                } else {
                    self.stats.skipped += 1;
                }
                if self.p.kind == PersonalityKind::Webserver {
                    self.threads[t].fd = None;
                }
            }
            Step::WriteWhole => {
                if let Some(f) = self.threads[t]
                    .fd
                    .filter(|&f| self.files[f as usize].exists)
                {
                    self.stats.whole_writes += 1;
                    let n = self.files[f as usize].nominal;
                    self.write_at_end(f, n, &mut out, stream);
                } else {
                    self.stats.skipped += 1;
                }
            }
            Step::ReadWhole => {
                if let Some(f) = self.threads[t]
                    .fd
                    .filter(|&f| self.files[f as usize].exists)
                {
                    self.stats.whole_reads += 1;
                    let n = self.files[f as usize].size;
                    self.move_bytes(IoOp::Read, f, 0, n, &mut out, stream);
                } else {
                    self.stats.skipped += 1;
                }
            }
            Step::Fsync => {
                if let Some(f) = self.threads[t]
                    .fd
                    .filter(|&f| self.files[f as usize].exists)
                {
                    self.stats.fsyncs += 1;
                    out.push_back(HostRequest {
                        arrival: SimTime::ZERO,
                        op: IoOp::Flush,
                        lba: 0,
                        sectors: 0,
                        stream,
                        tag: Self::ino(f),
                    });
                } else {
                    self.stats.skipped += 1;
                }
            }
            Step::Stat => self.stats.stats += 1,
        }
        let th = &mut self.threads[t];
        th.pc = (th.pc + 1) % len;
        th.pending = out;
    }

    /// Blocks of the data area in use.
    pub fn used_blocks(&self) -> u64 {
        self.data_blocks - self.free.values().sum::<u64>()
    }
    /// Every existing file's extents are disjoint, inside the data area,
    /// and cover its size; free runs do not overlap them.
    pub fn check(&self) -> Result<(), String> {
        let mut owned: Vec<(u64, u64)> = Vec::new();
        for (i, f) in self.files.iter().enumerate() {
            if !f.exists && !f.extents.is_empty() {
                return Err(format!("deleted file {i} keeps extents"));
            }
            if f.blocks() * BLOCK < f.size {
                return Err(format!(
                    "file {i}: {} bytes in {} blocks",
                    f.size,
                    f.blocks()
                ));
            }
            owned.extend(f.extents.iter().copied());
        }
        owned.extend(self.free.iter().map(|(&s, &n)| (s, n)));
        owned.sort();
        let mut end = self.data_start;
        for (s, n) in owned {
            if s < end {
                return Err(format!("run at block {s} overlaps the previous one"));
            }
            end = s + n;
        }
        if end > self.data_start + self.data_blocks {
            return Err("a run beyond the data area".into());
        }
        Ok(())
    }
}

impl RequestSource for FileBench {
    fn timing(&self) -> Timing {
        Timing::ClosedLoop {
            depth: self.p.threads,
        }
    }
    fn next_request(&mut self) -> Option<Result<HostRequest, SourceError>> {
        if let Some(r) = self.pre.pop_front() {
            return Some(Ok(r));
        }
        // Metadata calls are not application calls: they do not count
        // against `calls`.
        let mut quiet = 0u32;
        loop {
            let t = self.next_thread;
            if let Some(r) = self.threads[t].pending.pop_front() {
                if r.tag != METADATA_INO {
                    if self.issued >= self.p.calls {
                        self.threads[t].pending.push_front(r);
                        return None;
                    }
                    self.issued += 1;
                    self.next_thread = (t + 1) % self.threads.len();
                }
                return Some(Ok(r));
            }
            if self.issued >= self.p.calls {
                return None;
            }
            self.step(t);
            if self.threads[t].pending.is_empty() {
                // A flowop without I/O (open, close, stat, a skip): the
                // thread goes on to its next one.
                quiet += 1;
                if quiet > 100_000 {
                    return Some(Err(SourceError {
                        location: "personality".into(),
                        reason: "the file-level flows make no I/O (every flowop skipped: is the file set empty or the device full?)".into(),
                    }));
                }
                continue;
            }
        }
    }
    fn notes(&self) -> Vec<(String, u64)> {
        let s = &self.stats;
        vec![
            ("filebench_creates".into(), s.creates),
            ("filebench_deletes".into(), s.deletes),
            ("filebench_appends".into(), s.appends),
            ("filebench_whole_file_reads".into(), s.whole_reads),
            ("filebench_whole_file_writes".into(), s.whole_writes),
            ("filebench_fsyncs".into(), s.fsyncs),
            ("filebench_stats".into(), s.stats),
            ("filebench_flowops_skipped".into(), s.skipped),
            ("filebench_metadata_writes".into(), s.metadata_writes),
            ("filebench_prealloc_calls".into(), s.prealloc_calls),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::personality::PersonalityLevel;

    const CAP: u64 = 8 << 30;

    fn cfg(kind: PersonalityKind, calls: u64) -> PersonalityConfig {
        PersonalityConfig {
            requests: calls,
            level: PersonalityLevel::File,
            ..PersonalityConfig::new(kind)
        }
    }

    fn drain(fb: &mut FileBench) -> Vec<HostRequest> {
        let mut v = Vec::new();
        while let Some(r) = fb.next_request() {
            v.push(r.unwrap());
        }
        v
    }

    /// The file set: 80 % of the entries exist (written whole), sizes have
    /// the gamma's mean, and the extents never overlap.
    #[test]
    fn the_file_set_is_filebenchs() {
        let mut fb = FileBench::new(&cfg(PersonalityKind::Fileserver, 0), CAP, 1).unwrap();
        assert_eq!(fb.existing.len(), 8_000);
        let mean = fb.files.iter().map(|f| f.nominal as f64).sum::<f64>() / 10_000.0;
        assert!(
            (mean - 131_072.0).abs() < 0.05 * 131_072.0,
            "mean file size {mean}"
        );
        let pre = drain(&mut fb);
        let data: u64 = pre
            .iter()
            .filter(|r| r.tag != METADATA_INO)
            .map(|r| r.bytes())
            .sum();
        let sizes: u64 = fb.existing.iter().map(|&f| fb.files[f as usize].size).sum();
        assert!(
            data >= sizes && data < sizes + 8_000 * 512,
            "{data} bytes for {sizes}"
        );
        fb.check().unwrap();
        // Pre-allocated files are written from one allocation cursor: each
        // is one extent.
        assert!(fb
            .existing
            .iter()
            .all(|&f| fb.files[f as usize].extents.len() == 1));
    }

    /// Varmail's flow, counted over many loops: per loop one delete, one
    /// create, two appends (a zero draw is skipped), two fsyncs and two
    /// whole-file reads; every fsync names the file just appended.
    #[test]
    fn varmail_runs_filebenchs_flowops() {
        let mut fb = FileBench::new(&cfg(PersonalityKind::Varmail, 20_000), CAP, 3).unwrap();
        let calls = drain(&mut fb);
        let s = &fb.stats;
        assert!(
            s.deletes > 0 && s.deletes.abs_diff(s.creates) <= 16,
            "{s:?}"
        );
        // A flowop on a file another thread deleted meanwhile is skipped.
        let slack = 32 + s.skipped;
        assert!(s.fsyncs.abs_diff(2 * s.creates) <= slack, "{s:?}");
        assert!(s.whole_reads.abs_diff(2 * s.creates) <= slack, "{s:?}");
        assert!(
            s.appends <= 2 * s.creates + 16 && s.appends * 10 > 18 * s.creates,
            "{s:?}"
        );
        assert!(s.metadata_writes > 2 * s.creates, "{s:?}");
        // The measured calls stop at the budget (metadata calls apart).
        let app = |c: &[HostRequest]| c.iter().filter(|r| r.tag != METADATA_INO).count();
        let pre = s.prealloc_calls as usize;
        assert_eq!(app(&calls[pre..]), 20_000);
        fb.check().unwrap();
        // A thread's fsync names the file its last write appended to.
        let mut last: BTreeMap<u32, u32> = BTreeMap::new();
        for r in &calls[pre..] {
            match r.op {
                IoOp::Write if r.tag != METADATA_INO => {
                    last.insert(r.stream, r.tag);
                }
                IoOp::Flush => assert_eq!(last.get(&r.stream), Some(&r.tag), "{r:?}"),
                _ => {}
            }
        }
    }

    #[test]
    fn same_seed_same_calls_and_oltp_is_refused() {
        let a = drain(&mut FileBench::new(&cfg(PersonalityKind::Webserver, 3000), CAP, 9).unwrap());
        let mut fb = FileBench::new(&cfg(PersonalityKind::Webserver, 3000), CAP, 9).unwrap();
        let b = drain(&mut fb);
        assert_eq!(a, b);
        // Ten whole-file reads per log append.
        let s = &fb.stats;
        assert!(
            s.appends > 0 && s.whole_reads.abs_diff(10 * s.appends) <= 10 * 100 + 16,
            "{s:?}"
        );
        let e = FileBench::new(&cfg(PersonalityKind::Oltp, 10), CAP, 1)
            .err()
            .unwrap();
        assert!(e.to_string().contains("personality.level"), "{e}");
        let e = FileBench::new(&cfg(PersonalityKind::Fileserver, 10), 1 << 30, 1)
            .err()
            .unwrap();
        assert!(e.to_string().contains("personality.files"), "{e}");
    }
}
