//! File systems as layout models (`[fs]`, `--fs`): each turns file
//! operations into block I/O with its own placement, metadata and journal or
//! log traffic, behind one trait, [`FileSystem`].
//!
//! A file system here decides *where* and *how much* is written, not file
//! contents: it keeps the structures that place blocks (bitmaps, inode
//! tables, indirect blocks or extents, directories, the journal, the log's
//! segments) and says, for every operation, which blocks the operation
//! reads and writes and how. Its calls ([`FsCall`]) are of four kinds:
//!
//! * **data**: the application's bytes at their device place, buffered
//!   through the page cache (written back by the flusher or an fsync);
//! * **metadata**: a metadata block dirtied in the buffer cache (an inode
//!   table block, a bitmap, a directory or indirect block), written back
//!   later like any dirty page, at no cost to the calling thread;
//! * **direct**: the file system's own synchronous I/O, submitted at once
//!   and waited for (a journal commit, a log segment's summary, the
//!   cleaner's reads and moves);
//! * **flush**: a device cache flush (a journal commit's barrier).
//!
//! `fsync` is in two parts: the page cache writes the file's dirty data and
//! waits for it, then asks the file system what else the fsync writes
//! ([`FileSystem::fsync`]: metadata blocks to write back from the cache,
//! other files whose data an ordered journal writes first, and direct
//! writes such as a journal commit) before the device flush. Background work
//! (a journal's commit interval, a log's checkpoints and cleaner) is
//! [`FileSystem::tick`], run by the file system's own thread.
//!
//! **Placement.** The log-structured file systems place data as Linux's
//! do, not at `write()`: F2FS when the page cache writes it back
//! (`f2fs_write_data_pages` -> `f2fs_outplace_write_data` ->
//! `f2fs_allocate_data_block`), NILFS2 when segctord constructs a log
//! (`nilfs_segctor_do_construct`; its data is never written by the
//! flusher, [`FileSystem::writes_in_background`]). Their writes and reads
//! are [`FsCall::Buffered`], bytes of the file, which the cache keeps as
//! the file's pages; writing them, it asks [`FileSystem::place`] where a
//! run of them goes; a read of pages not in the cache asks
//! [`FileSystem::locate`]. The other models (ext2/3/4, XFS, ReiserFS,
//! `raw`) allocate when the application's call reaches the file system (a
//! delayed-allocation file system, ext4 or XFS, is modelled by allocating
//! each write's blocks in one multi-block request with its goal), but
//! their data is the file's pages too ([`filemap`]): `place` gives the
//! blocks allocated at the write, and `locate` leaves out those not
//! written back yet. So every file's pages are keyed by file, and
//! readahead runs in the file's indices, stopping at its end.
//!
//! Models: `raw` (files as extents on the bare device: no metadata, the
//! baseline of what a file system adds), `ext2`, `ext3`, `ext4`
//! ([`ext`]), `xfs` ([`xfs`]), `reiserfs` ([`reiserfs`]), `nilfs2`
//! ([`nilfs2`]: a log with segment construction and a cleaner), `f2fs`
//! ([`f2fs`]: six logs, node address table, checkpoints, roll-forward fsync
//! and a cleaner): every kind `--fs` names.

pub mod alloc;
pub mod ext;
pub mod f2fs;
pub mod filemap;
pub mod nilfs2;
pub mod raw;
pub mod reiserfs;
pub mod tree;
pub mod xfs;

pub use crate::workload::FsyncIo;
use crate::workload::{CommitSync, IoOp};
use serde::{Deserialize, Serialize};
use ssd_core::error::{invalid, ConfigError};
use ssd_core::units::{Dur, SimTime, Size};

/// A file system block: 4 KiB, the page cache's page.
pub const BLOCK: u64 = 4096;

/// The file systems `--fs` names.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FsKind {
    /// No file system: files are extents on the bare device, no metadata.
    Raw,
    /// ext2: block groups, bitmaps, inode tables, indirect blocks; no journal.
    Ext2,
    /// ext3: ext2 with the jbd journal.
    Ext3,
    /// ext4: extents, mballoc and jbd2 (the default).
    #[default]
    Ext4,
    /// XFS: allocation groups, B+trees and the delayed-logging metadata log.
    Xfs,
    /// ReiserFS 3.6: a balanced tree with tail packing and its journal.
    Reiserfs,
    /// NILFS2: a log of segments with a cleaner.
    Nilfs2,
    /// F2FS: six logs, the node address table, checkpoints and a cleaner.
    F2fs,
}

impl FsKind {
    /// Every kind, in `--fs`'s order.
    pub const ALL: [FsKind; 8] = [
        FsKind::Ext2,
        FsKind::Ext3,
        FsKind::Ext4,
        FsKind::Xfs,
        FsKind::Reiserfs,
        FsKind::Nilfs2,
        FsKind::F2fs,
        FsKind::Raw,
    ];

    /// The kind's name, as `--fs` takes it.
    pub fn name(self) -> &'static str {
        match self {
            FsKind::Raw => "raw",
            FsKind::Ext2 => "ext2",
            FsKind::Ext3 => "ext3",
            FsKind::Ext4 => "ext4",
            FsKind::Xfs => "xfs",
            FsKind::Reiserfs => "reiserfs",
            FsKind::Nilfs2 => "nilfs2",
            FsKind::F2fs => "f2fs",
        }
    }

    /// Parse a kind's name (see [`FsKind::name`]); an error lists the known names.
    pub fn parse(s: &str) -> Result<FsKind, String> {
        FsKind::ALL
            .into_iter()
            .find(|k| k.name() == s)
            .ok_or_else(|| {
                format!(
                    "unknown file system {s:?} (one of {})",
                    FsKind::ALL.map(|k| k.name()).join(", ")
                )
            })
    }

    /// Does the kind keep a block journal (ext3, ext4, ReiserFS)?
    pub fn journaled(self) -> bool {
        matches!(self, FsKind::Ext3 | FsKind::Ext4 | FsKind::Reiserfs)
    }
}

impl std::fmt::Display for FsKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// ext3/ext4's and ReiserFS's `data=` mount option.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum JournalMode {
    /// `data=ordered` (the default): metadata journaled; a file's new data
    /// is written before the commit that makes it reachable.
    #[default]
    Ordered,
    /// `data=writeback`: metadata journaled, data unordered.
    Writeback,
    /// `data=journal`: data journaled too, then written in place.
    Journal,
}

/// The kernel whose mount defaults the file system takes (`fs.kernel`):
/// a profile valid for every kind, so a grid whose axis is the file-system
/// kind can set it on its base. An explicit knob (`fs.delaylog`,
/// `fs.barrier`) wins over the profile.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum Kernel {
    /// The kernels the models describe (Linux 6.x): XFS's delayed logging
    /// (the default from 2.6.39, the only mode from 3.3), barriers on for
    /// ext3 (from 3.1), ext4 and XFS.
    #[default]
    #[serde(rename = "current")]
    Current,
    /// Linux 2.6.35 (Sun et al. 2014): XFS without delayed logging
    /// (`delaylog` was an experimental mount option, off by default, from
    /// 2.6.35 to 2.6.38) and ext3 without barriers (`barrier=0`, ext3's
    /// default until commit 00eacd66cd8a, "ext3: make ext3 mount default to
    /// barrier=1", merged for 3.1); ext4's and XFS's barriers were on
    /// (ext4 from 2.6.26, XFS from 2.6.17). Nothing else of the models
    /// changes (see [`xfs`] for what the XFS model keeps of the current
    /// format).
    #[serde(rename = "2.6.35")]
    V2_6_35,
}

impl Kernel {
    /// Every profile, as `fs.kernel` names it.
    pub const ALL: [Kernel; 2] = [Kernel::Current, Kernel::V2_6_35];

    /// The profile's name (`fs.kernel`).
    pub fn name(self) -> &'static str {
        match self {
            Kernel::Current => "current",
            Kernel::V2_6_35 => "2.6.35",
        }
    }

    /// XFS's `delaylog` default on this kernel.
    pub fn delaylog(self) -> bool {
        self == Kernel::Current
    }

    /// The `barrier` default of file system `kind` on this kernel.
    pub fn barrier(self, kind: FsKind) -> bool {
        !(self == Kernel::V2_6_35 && kind == FsKind::Ext3)
    }
}

/// What carries a file system's write hints (`bio->bi_write_hint`: F2FS
/// tags each log's bios, `f2fs_io_type_to_rw_hint`) to a drive with
/// Flexible Data Placement (`fs.write_hints`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum WriteHints {
    /// Mainline Linux: nothing. The NVMe driver sets a placement
    /// identifier only for a write that carries a write stream
    /// (`bi_write_stream`, Linux 6.16: `nvme_setup_rw` puts
    /// `plids[write_stream - 1]` in DSPEC), which only io_uring's per-I/O
    /// `write_stream` on a block device sets; a file system's
    /// `bi_write_hint` reaches no NVMe drive since the Streams directive
    /// support was removed (5.18). F2FS's writes carry no directive
    /// (placement handle 0).
    #[default]
    Ignored,
    /// The FDP series posted for Linux in 2024 and not merged (Kanchan
    /// Joshi, "nvme: enable FDP support", `nvme_assign_placement_id`): a
    /// write whose hint `h` (`enum rw_hint`, 0-5) is below the number of
    /// placement identifiers the drive lists (Reclaim Unit Handle Status)
    /// carries the `h`-th; a larger hint carries none.
    Placement,
}

/// A host-managed zoned drive as mkfs sees it (`blkdev_report_zones`),
/// in the file system's 4 KiB blocks from the drive's start.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ZonedDev {
    /// Blocks a zone spans (the zone size).
    pub zone_blocks: u64,
    /// Writable blocks of a sequential zone (its capacity).
    pub cap_blocks: u64,
    /// Zones of the drive.
    pub zones: u64,
    /// The first zones, conventional (writable anywhere).
    pub conventional: u64,
    /// The drive's open and active zone limits (0: none).
    pub max_open: u32,
    /// The drive's active zone limit (0: none).
    pub max_active: u32,
}

/// The file system of file-level workloads (`[fs]`): its kind and its
/// mkfs and mount options, with their Linux names and defaults. A knob of
/// another kind than `kind` is refused.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct FsConfig {
    /// Which file system (default ext4).
    pub kind: FsKind,
    /// ext3/ext4/ReiserFS `data=` (default ordered).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub journal: Option<JournalMode>,
    /// ext3/ext4 `commit=` (default 5 s): the journal's commit interval;
    /// for nilfs2 segctord's `sc_interval` (default 5 s,
    /// `NILFS_SC_DEFAULT_TIMEOUT`): a segment construction of what is dirty.
    /// ReiserFS's background commit interval (default 5 s, see
    /// [`reiserfs`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub commit_interval: Option<Dur>,
    /// ext3/ext4 journal size (mke2fs `-J size=`); default mke2fs's, from
    /// the file system's size (`ext2fs_default_journal_size`). ReiserFS's
    /// journal without its header block (mkreiserfs `-s`, default 8,192
    /// blocks: 32 MiB; from 512 to 32,749 blocks).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub journal_size: Option<Size>,
    /// mke2fs `-i` (bytes per inode, default 16384).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub inode_ratio: Option<Size>,
    /// Mean entries per directory (Filebench's `dirwidth`, at least 2) of
    /// the file set's directory tree ([`tree::DirTree`]); default the
    /// personality's (varmail 1,000,000: one directory; fileserver and
    /// webserver 20: a tree about ln(files)/ln(20) levels deep; oltp 1,024).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dirwidth: Option<u64>,
    /// Aging: the share of the file system's blocks that aging files hold
    /// when the file set is created (0: a fresh file system; see
    /// `FileBench`'s aging).
    pub age_fullness: f64,
    /// Aging's churn: the share of the blocks free at `age_fullness` that
    /// aging files fill before random ones are deleted down to
    /// `age_fullness` again (0..=1, default 0.8): the higher, the more of
    /// the free space is left in file-sized holes.
    pub age_churn: f64,
    /// Mean size of an aging file (default 64 KiB; sizes drawn from
    /// Filebench's gamma with shape 1.5).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub age_file_size: Option<Size>,
    /// XFS allocation groups (mkfs.xfs `-d agcount=`); default mkfs's for
    /// a single device: 4 up to 4 TiB, else AGs of 1 TiB.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub agcount: Option<u64>,
    /// XFS internal log size (mkfs.xfs `-l size=`); default mkfs's, from
    /// the file system's size (see [`xfs::default_log_blocks`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub log_size: Option<Size>,
    /// XFS periodic log force (`fs.xfs.xfssyncd_centisecs`, default 3000:
    /// 30 s; Linux's limits 100 to 720000).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub xfssyncd_centisecs: Option<u64>,
    /// nilfs2 segment size (mkfs.nilfs2 `-B` blocks per segment; default
    /// 2,048 blocks = 8 MiB, at least 16 blocks).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub segment_size: Option<Size>,
    /// nilfs_cleanerd `min_clean_segments`, in percent of the segments
    /// (default 10): the cleaner starts below this many free segments.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub min_clean_segments: Option<u64>,
    /// nilfs_cleanerd `max_clean_segments`, in percent (default 20): the
    /// cleaner stops at this many free segments.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_clean_segments: Option<u64>,
    /// nilfs_cleanerd `nsegments_per_clean` (default 2): segments cleaned
    /// per pass.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub nsegments_per_clean: Option<u32>,
    /// nilfs_cleanerd `cleaning_interval` (default 5 s): time between passes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cleaning_interval: Option<Dur>,
    /// nilfs_cleanerd `protection_period` (default 3600 s): a segment
    /// written more recently is never cleaned.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub protection_period: Option<Dur>,
    /// ReiserFS tail packing (`tails=on`, the default; false is `notail`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tails: Option<bool>,
    /// f2fs overprovision ratio in percent (mkfs.f2fs `-o`); default
    /// mkfs's best for the device (`get_best_overprovision`), which also
    /// sets the reserved segments the cleaner keeps free.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub overprovision: Option<f64>,
    /// f2fs `discard` (true, Linux's default on a drive that takes
    /// discards) or `nodiscard` (false): whether the segments a checkpoint
    /// frees are discarded.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub discard: Option<bool>,
    /// f2fs checkpoint interval (sysfs `cp_interval`, default 60 s).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cp_interval: Option<Dur>,
    /// f2fs background cleaner's interval (sysfs `gc_min_sleep_time`,
    /// default 30 s; the model has one interval).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gc_sleep_time: Option<Dur>,
    /// The kernel whose mount defaults apply ([`Kernel`]: "current", the
    /// default, or "2.6.35"); valid for every kind.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kernel: Option<Kernel>,
    /// XFS `delaylog` (true) or `nodelaylog` (false); default the kernel's
    /// ([`Kernel::delaylog`]: on from 2.6.39, off on 2.6.35).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub delaylog: Option<bool>,
    /// The zones of the drive the file system is made on, when it is a
    /// host-managed zoned drive: not a setting, the block layer's zone
    /// report the run hands to mkfs (only F2FS runs on one).
    #[serde(skip)]
    pub zoned: Option<ZonedDev>,
    /// f2fs: what carries its write hints to a drive with Flexible Data
    /// Placement ([`WriteHints`]; default `ignored`, mainline's).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub write_hints: Option<WriteHints>,
    /// The placement identifiers of the drive the file system is made on,
    /// when it has Flexible Data Placement, as the NVMe driver reads them
    /// (Reclaim Unit Handle Status: by handle, then reclaim group): not a
    /// setting, the drive's.
    #[serde(skip)]
    pub fdp_plids: Option<Vec<u16>>,
    /// ext3/ext4/XFS `barrier` (true) or `barrier=0`/`nobarrier` (false):
    /// whether journal commits and fsyncs flush the device cache; default
    /// the kernel's ([`Kernel::barrier`]: off for ext3 on 2.6.35).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub barrier: Option<bool>,
}

impl Default for FsConfig {
    fn default() -> Self {
        FsConfig {
            kind: FsKind::Ext4,
            journal: None,
            commit_interval: None,
            journal_size: None,
            inode_ratio: None,
            dirwidth: None,
            age_fullness: 0.0,
            age_churn: 0.8,
            age_file_size: None,
            agcount: None,
            log_size: None,
            xfssyncd_centisecs: None,
            segment_size: None,
            min_clean_segments: None,
            max_clean_segments: None,
            nsegments_per_clean: None,
            cleaning_interval: None,
            protection_period: None,
            tails: None,
            overprovision: None,
            discard: None,
            cp_interval: None,
            gc_sleep_time: None,
            kernel: None,
            delaylog: None,
            barrier: None,
            zoned: None,
            write_hints: None,
            fdp_plids: None,
        }
    }
}

impl FsConfig {
    /// The kernel profile (`fs.kernel`, default [`Kernel::Current`]).
    pub fn kernel(&self) -> Kernel {
        self.kernel.unwrap_or_default()
    }

    /// XFS delayed logging: `fs.delaylog`, else the kernel's default.
    pub fn delaylog(&self) -> bool {
        self.delaylog.unwrap_or(self.kernel().delaylog())
    }

    /// Barriers (journal commits and fsyncs flush the device cache):
    /// `fs.barrier`, else the kernel's default for the kind.
    pub fn barrier(&self) -> bool {
        self.barrier.unwrap_or(self.kernel().barrier(self.kind))
    }

    /// Which of the file system's own journal or log writes are `REQ_SYNC`
    /// on this kernel ([`CommitSync`]).
    pub fn commit_sync(&self) -> CommitSync {
        let current = self.kernel() == Kernel::Current;
        let (log, commit) = match self.kind {
            // jbd/jbd2 on 2.6.35 (`journal_commit_transaction`,
            // `jbd2_journal_commit_transaction`): `write_op = WRITE` unless
            // a handle was `h_sync`, which fsync in data=ordered does not
            // set (`ext4_sync_file`, `ext3_sync_file` start the commit and
            // wait for it); the commit record goes out with
            // `sync_dirty_buffer` (jbd, WRITE_SYNC) or WRITE_SYNC_PLUG
            // (jbd2). Current jbd2: `JBD2_JOURNAL_REQ_FLAGS` (REQ_META |
            // REQ_SYNC | REQ_IDLE) on every log block and the commit.
            FsKind::Ext2 | FsKind::Ext3 | FsKind::Ext4 => (current, true),
            // ReiserFS (fs/reiserfs/journal.c): log blocks by
            // `submit_logged_buffer` and `flush_commit_list` as plain
            // writes on both kernels; the commit block by
            // `sync_dirty_buffer` (REQ_SYNC), except 2.6.35's barrier write
            // (`submit_barrier_buffer`: WRITE_BARRIER, no BIO_RW_SYNCIO).
            FsKind::Reiserfs => (false, current || !self.barrier()),
            // XFS 2.6.35 (`_xfs_buf_ioapply`): an iclog is WRITE_SYNC
            // (XBF_LOG_BUFFER) unless `xlog_sync` made it a barrier write
            // (XBF_ORDERED: WRITE_BARRIER). Current `xlog_write_iclog`:
            // REQ_SYNC always.
            FsKind::Xfs => {
                let s = current || !self.barrier();
                (s, s)
            }
            // NILFS2 (`nilfs_segbuf_write`, fs/nilfs2/segbuf.c): a
            // segment's bios are plain writes but the last, which is
            // REQ_SYNC, on both kernels.
            FsKind::Nilfs2 => (false, true),
            // F2FS's checkpoint and meta pages: REQ_SYNC | REQ_META |
            // REQ_PRIO (`__f2fs_submit_merged_write` with META_FLUSH,
            // `f2fs_do_write_meta_page`).
            FsKind::F2fs => (true, true),
            FsKind::Raw => (true, true),
        };
        // The ordered data a commit writes: jbd (ext3 on 2.6.35) submits it
        // with the commit's `write_op` (`journal_submit_data_buffers`),
        // plain; jbd2 writes it with WB_SYNC_ALL
        // (`journal_submit_inode_data_buffers`), REQ_SYNC; ReiserFS by
        // `write_ordered_buffers`, plain on both kernels.
        let ordered = match self.kind {
            FsKind::Ext3 => current,
            // ReiserFS's `write_ordered_buffers`, and NILFS2's data in its
            // segment's bios (plain but the last, `nilfs_segbuf_write`).
            FsKind::Reiserfs | FsKind::Nilfs2 => false,
            _ => true,
        };
        CommitSync {
            log,
            commit,
            ordered,
        }
    }

    /// Refuse knobs of another kind and values out of range.
    pub fn validate(&self) -> Result<(), ConfigError> {
        let ext = matches!(self.kind, FsKind::Ext2 | FsKind::Ext3 | FsKind::Ext4);
        let xfs = self.kind == FsKind::Xfs;
        let nilfs = self.kind == FsKind::Nilfs2;
        let reiser = self.kind == FsKind::Reiserfs;
        let f2fs = self.kind == FsKind::F2fs;
        let knobs = [
            ("fs.journal", self.journal.is_some(), self.kind.journaled()),
            (
                "fs.commit_interval",
                self.commit_interval.is_some(),
                self.kind.journaled() || nilfs,
            ),
            ("fs.segment_size", self.segment_size.is_some(), nilfs),
            ("fs.overprovision", self.overprovision.is_some(), f2fs),
            ("fs.discard", self.discard.is_some(), f2fs),
            ("fs.cp_interval", self.cp_interval.is_some(), f2fs),
            ("fs.gc_sleep_time", self.gc_sleep_time.is_some(), f2fs),
            ("fs.write_hints", self.write_hints.is_some(), f2fs),
            (
                "fs.min_clean_segments",
                self.min_clean_segments.is_some(),
                nilfs,
            ),
            (
                "fs.max_clean_segments",
                self.max_clean_segments.is_some(),
                nilfs,
            ),
            (
                "fs.nsegments_per_clean",
                self.nsegments_per_clean.is_some(),
                nilfs,
            ),
            (
                "fs.cleaning_interval",
                self.cleaning_interval.is_some(),
                nilfs,
            ),
            (
                "fs.protection_period",
                self.protection_period.is_some(),
                nilfs,
            ),
            (
                "fs.journal_size",
                self.journal_size.is_some(),
                self.kind.journaled(),
            ),
            ("fs.inode_ratio", self.inode_ratio.is_some(), ext),
            ("fs.agcount", self.agcount.is_some(), xfs),
            ("fs.log_size", self.log_size.is_some(), xfs),
            (
                "fs.xfssyncd_centisecs",
                self.xfssyncd_centisecs.is_some(),
                xfs,
            ),
            ("fs.tails", self.tails.is_some(), reiser),
            ("fs.delaylog", self.delaylog.is_some(), xfs),
            (
                "fs.barrier",
                self.barrier.is_some(),
                matches!(self.kind, FsKind::Ext3 | FsKind::Ext4) || xfs,
            ),
        ];
        for (field, set, applies) in knobs {
            if set && !applies {
                return Err(invalid(
                    field,
                    format!("does not apply to {} (fs.kind)", self.kind),
                ));
            }
        }
        if let Some(c) = self.commit_interval {
            if c.0 == 0 || c.0 > 300 * 1_000_000_000 {
                return Err(invalid(
                    "fs.commit_interval",
                    "must be more than 0 and at most 300 s",
                ));
            }
        }
        if let Some(r) = self.inode_ratio {
            if !(1024..=(64 << 20)).contains(&r.0) || !r.0.is_power_of_two() {
                return Err(invalid(
                    "fs.inode_ratio",
                    "must be a power of two from 1 KiB to 64 MiB (mke2fs -i)",
                ));
            }
        }
        if let (Some(j), true) = (self.journal_size, reiser) {
            let b = j.0 / BLOCK;
            if !(reiserfs::JOURNAL_MIN_SIZE..=reiserfs::JOURNAL_MAX_SIZE).contains(&b)
                || !j.0.is_multiple_of(BLOCK)
            {
                return Err(invalid(
                    "fs.journal_size",
                    "from 2 MiB (512 blocks) to 32,749 blocks, a multiple of 4 KiB (mkreiserfs -s)",
                ));
            }
        } else if let Some(j) = self.journal_size {
            if j.0 < (1 << 20) || !j.0.is_multiple_of(BLOCK) {
                return Err(invalid(
                    "fs.journal_size",
                    "at least 1 MiB, a multiple of 4 KiB (mke2fs's minimum is 1,024 blocks)",
                ));
            }
        }
        if self.agcount == Some(0) {
            return Err(invalid("fs.agcount", "must be positive"));
        }
        if let Some(l) = self.log_size {
            if l.0 < xfs::MIN_LOG_BLOCKS * BLOCK
                || l.0 > xfs::MAX_LOG_BYTES
                || !l.0.is_multiple_of(BLOCK)
            {
                return Err(invalid(
                    "fs.log_size",
                    "from 2 MiB (512 blocks) to 2 GiB - 10 MiB, a multiple of 4 KiB (mkfs.xfs -l size=)",
                ));
            }
        }
        if let Some(c) = self.xfssyncd_centisecs {
            if !(100..=720_000).contains(&c) {
                return Err(invalid(
                    "fs.xfssyncd_centisecs",
                    "from 100 to 720000 (Linux's fs.xfs.xfssyncd_centisecs limits)",
                ));
            }
        }
        if let Some(s) = self.segment_size {
            if s.0 < 16 * BLOCK || !s.0.is_multiple_of(BLOCK) || s.0 / BLOCK > u32::MAX as u64 {
                return Err(invalid(
                    "fs.segment_size",
                    "a multiple of 4 KiB, at least 16 blocks (NILFS_SEG_MIN_BLOCKS)",
                ));
            }
        }
        let (lo, hi) = (
            self.min_clean_segments.unwrap_or(nilfs2::MIN_CLEAN_PERCENT),
            self.max_clean_segments.unwrap_or(nilfs2::MAX_CLEAN_PERCENT),
        );
        if lo > hi || hi > 100 {
            return Err(invalid(
                "fs.min_clean_segments",
                "percentages with min_clean_segments <= max_clean_segments <= 100",
            ));
        }
        if self.nsegments_per_clean == Some(0) {
            return Err(invalid("fs.nsegments_per_clean", "must be positive"));
        }
        if self.cleaning_interval.is_some_and(|d| d.0 == 0) {
            return Err(invalid("fs.cleaning_interval", "must be more than 0"));
        }
        if let Some(o) = self.overprovision {
            if !(o > 0.0 && o <= 95.0) {
                return Err(invalid(
                    "fs.overprovision",
                    "a percentage more than 0 and at most 95 (mkfs.f2fs -o)",
                ));
            }
        }
        if self.cp_interval.is_some_and(|d| d.0 == 0) {
            return Err(invalid("fs.cp_interval", "must be more than 0"));
        }
        if self.gc_sleep_time.is_some_and(|d| d.0 == 0) {
            return Err(invalid("fs.gc_sleep_time", "must be more than 0"));
        }
        if self.dirwidth.is_some_and(|w| w < 2) {
            return Err(invalid(
                "fs.dirwidth",
                "must be at least 2 (Filebench's mean depth is ln(files) / ln(dirwidth))",
            ));
        }
        if !(0.0..=0.9).contains(&self.age_fullness) {
            return Err(invalid(
                "fs.age_fullness",
                "must be from 0 to 0.9 (the file set needs room)",
            ));
        }
        if !(0.0..=1.0).contains(&self.age_churn) {
            return Err(invalid("fs.age_churn", "must be from 0 to 1"));
        }
        if let Some(s) = self.age_file_size {
            if s.0 == 0 || s.0 > 1 << 34 {
                return Err(invalid(
                    "fs.age_file_size",
                    "must be more than 0 bytes and at most 16 GiB",
                ));
            }
        }
        Ok(())
    }

    /// Build the file system on `blocks` blocks of 4 KiB (mkfs), for a file
    /// set of `files` entries in Filebench's directory tree of mean width
    /// `dirwidth` ([`tree::DirTree`], drawn from `seed`).
    pub fn build(
        &self,
        blocks: u64,
        files: u64,
        dirwidth: u64,
        seed: u64,
    ) -> Result<AnyFs, ConfigError> {
        self.validate()?;
        let dirwidth = self.dirwidth.unwrap_or(dirwidth);
        if dirwidth < 2 {
            return Err(invalid(
                "fs.dirwidth",
                "must be at least 2 (Filebench's mean depth is ln(files) / ln(dirwidth))",
            ));
        }
        if self.zoned.is_some() && self.kind != FsKind::F2fs {
            return Err(invalid(
                "fs.kind",
                format!(
                    "{} writes in place, and the drive is zoned (host-managed: ftl.kind = \"zns\"); of the modelled file systems only f2fs runs on one (its zoned mode)",
                    self.kind.name()
                ),
            ));
        }
        if self.zoned.is_some() && self.age_fullness > 0.0 {
            return Err(invalid(
                "fs.age_fullness",
                "aging is the file system's history without I/O, and a zoned drive's zones must hold what was written to them: not modelled on a zoned drive",
            ));
        }
        if self.write_hints == Some(WriteHints::Placement) && self.fdp_plids.is_none() {
            return Err(invalid(
                "fs.write_hints",
                "\"placement\" passes f2fs's write hints to the drive as placement identifiers, but the drive has no Flexible Data Placement: set ftl.fdp = true (on the page FTL)",
            ));
        }
        let tree = tree::DirTree::filebench(files, dirwidth, seed);
        Ok(match self.kind {
            FsKind::Raw => AnyFs::Raw(raw::Raw::new(blocks, files)),
            FsKind::Ext2 | FsKind::Ext3 | FsKind::Ext4 => {
                AnyFs::Ext(Box::new(ext::Ext::new(self, blocks, tree)?))
            }
            FsKind::Xfs => AnyFs::Xfs(Box::new(xfs::Xfs::new(self, blocks, tree)?)),
            FsKind::Nilfs2 => AnyFs::Nilfs2(Box::new(nilfs2::Nilfs2::new(self, blocks, tree)?)),
            FsKind::Reiserfs => {
                AnyFs::Reiserfs(Box::new(reiserfs::Reiserfs::new(self, blocks, tree)?))
            }
            FsKind::F2fs => AnyFs::F2fs(Box::new(f2fs::F2fs::new(self, blocks, tree)?)),
        })
    }
}

/// Push file block `i`, at block `b`, on runs of (first file block, first
/// block, blocks) as [`FileSystem::place`] and [`FileSystem::locate`] give
/// them: the last run grows when both go on from it.
pub fn push_placed(out: &mut Vec<(u64, u64, u32)>, i: u64, b: u64) {
    match out.last_mut() {
        Some((fi, s, k)) if *fi + *k as u64 == i && *s + *k as u64 == b => *k += 1,
        _ => out.push((i, b, 1)),
    }
}

/// [`FileSystem::locate`] over a file's places: the blocks of `place` from
/// `index`, `n` of them (not past the file), as runs, but those at
/// `unwritten` (reserved, not on the device yet).
pub fn locate_in(
    place: &[u64],
    unwritten: u64,
    index: u64,
    n: u32,
    out: &mut Vec<(u64, u64, u32)>,
) {
    let end = (index + n as u64).min(place.len() as u64);
    for i in index..end {
        let b = place[i as usize];
        if b != unwritten {
            push_placed(out, i, b);
        }
    }
}

/// One call a file system makes (blocks are the file system's, from 0).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FsCall {
    /// The application's bytes `[at, at + bytes)` (device bytes), through
    /// the page cache.
    Data {
        /// Read or write.
        op: IoOp,
        /// First device byte.
        at: u64,
        /// Length in bytes.
        bytes: u64,
    },
    /// A metadata block dirtied in the buffer cache.
    Meta {
        /// The block, in the file system's blocks.
        block: u64,
    },
    /// The file system's own I/O of `blocks` blocks from `block`, submitted
    /// at once and waited for.
    Direct {
        /// Read, write, or trim (a discard).
        op: IoOp,
        /// First block, in the file system's blocks.
        block: u64,
        /// Number of blocks.
        blocks: u32,
        /// Marked `REQ_SYNC` ([`CommitSync`]).
        sync: bool,
    },
    /// The application's bytes `[off, off + bytes)` of the call's file,
    /// through the page cache as file pages: a file system that places
    /// data at writeback ([`FileSystem::place`]) says where they go when
    /// the cache writes them, not at the call.
    Buffered {
        /// Read or write.
        op: IoOp,
        /// First byte in the file.
        off: u64,
        /// Length in bytes.
        bytes: u64,
    },
    /// A device cache flush, waited for.
    Flush,
    /// The file system's thread commits the running transaction (a
    /// journal's timer): what it writes is asked of
    /// [`FileSystem::commit_io`] when the thread gets to it.
    Commit,
    /// The calling thread waits until the file system's thread has done
    /// work `tid` ([`FileSystem::committed`]): a writer waiting for the
    /// cleaning that makes room for its data.
    Wait {
        /// What the thread waits for.
        tid: u64,
    },
}

impl FsCall {
    /// The application's bytes ([`FsCall::Data`] or [`FsCall::Buffered`]).
    pub fn is_data(&self) -> bool {
        matches!(self, FsCall::Data { .. } | FsCall::Buffered { .. })
    }
}

/// The file system ran out of space: the operation is skipped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NoSpace;

/// What a file system did, by kind of block (reported as `file_system`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct FsStats {
    /// The file system's name (`ext4`, `xfs`, ...).
    pub kind: String,
    /// Blocks the file system has, and the blocks in use now (data,
    /// metadata, journal).
    pub blocks: u64,
    /// Blocks in use now (data, metadata, journal).
    pub used_blocks: u64,
    /// Data blocks allocated to files.
    pub data_blocks_allocated: u64,
    /// Metadata blocks dirtied (each dirtying once, even of a block already
    /// dirty: the page cache writes a dirty block once).
    pub metadata_dirtied: u64,
    /// Blocks written to the journal or log by the file system itself
    /// (descriptor, metadata copies, commit blocks).
    pub journal_blocks_written: u64,
    /// Journal commits (by fsync, by the commit interval).
    pub commits_fsync: u64,
    /// Journal commits by the commit interval (background).
    pub commits_timer: u64,
    /// The journal wrapped around.
    pub journal_wraps: u64,
    /// Blocks the cleaner read and wrote (log-structured file systems).
    pub cleaner_blocks_read: u64,
    /// Blocks the cleaner wrote.
    pub cleaner_blocks_written: u64,
    /// Files' extents (fragments) now, and indirect or extent-tree blocks.
    pub extents: u64,
    /// Indirect or extent-tree (index) blocks of the files.
    pub index_blocks: u64,
    /// Free space: its runs (extents) and their mean length in blocks, a
    /// measure of its fragmentation (aging raises it).
    pub free_extents: u64,
    /// Mean length of a free run, in blocks.
    pub free_extent_mean_blocks: f64,
    /// Aging before the file set: files created and deleted, and the blocks
    /// the aging files left in use.
    pub aged_files_created: u64,
    /// Aging files deleted.
    pub aged_files_deleted: u64,
    /// Blocks the aging files left in use.
    pub aged_blocks_in_use: u64,
}

/// A file system as a layout model (see the module docs). Files are the
/// file set's entries `0..files`; every call is in the file system's
/// blocks, from 0.
pub trait FileSystem {
    /// Which file system this is.
    fn kind(&self) -> FsKind;
    /// Blocks of 4 KiB the file system has.
    fn blocks(&self) -> u64;
    /// Blocks a file's data could still take now: the free blocks less
    /// what the file system keeps for itself (NILFS2's reserved segments,
    /// F2FS's over-provisioning). Right after mkfs, what the file system
    /// leaves for data once its own areas (journal, log, group or AG
    /// headers, metadata area) are laid out. Per-file metadata (inodes,
    /// tree, index or node blocks) still comes out of it.
    fn data_room(&self) -> u64;
    /// What the file system keeps for itself at mkfs, in words ("its
    /// journal, super block and bitmaps"), for an error message.
    fn own_areas(&self) -> String;
    /// Create the empty file `f` in its directory.
    fn create(&mut self, f: u32, now: SimTime, io: &mut Vec<FsCall>) -> Result<(), NoSpace>;
    /// Remove file `f` and free its blocks.
    fn unlink(&mut self, f: u32, now: SimTime, io: &mut Vec<FsCall>);
    /// Write `len` bytes at byte `off` of `f` (extending it past its end).
    fn write(
        &mut self,
        f: u32,
        off: u64,
        len: u64,
        now: SimTime,
        io: &mut Vec<FsCall>,
    ) -> Result<(), NoSpace>;
    /// Read `len` bytes at byte `off` of `f` (within its size).
    fn read(&mut self, f: u32, off: u64, len: u64, now: SimTime, io: &mut Vec<FsCall>);
    /// A file system that places data at writeback (its writes are
    /// [`FsCall::Buffered`]): where the `n` blocks of `f` from block
    /// `index` go, now that they are written back, as runs of (first file
    /// block, first block, blocks) pushed on `out` in file order; blocks
    /// of a file deleted since are left out. The [`filemap`] models give
    /// the blocks their write allocated.
    fn place(
        &mut self,
        _f: u32,
        _index: u64,
        _n: u32,
        _now: SimTime,
        _out: &mut Vec<(u64, u64, u32)>,
    ) {
    }
    /// Where the `n` blocks of `f` from block `index` are (runs as
    /// [`place`](Self::place) gives them; holes left out), for a read of
    /// data placed at writeback.
    fn locate(&self, _f: u32, _index: u64, _n: u32, _out: &mut Vec<(u64, u64, u32)>) {}
    /// Whether the file system's data is the files' pages, placed at
    /// writeback ([`place`](Self::place); allocated then, or at the write
    /// for the models of [`filemap`]): its writes are [`FsCall::Buffered`].
    fn places_at_writeback(&self) -> bool {
        false
    }
    /// Whether the flusher's background writeback (`WB_SYNC_NONE`) writes
    /// the files' data. NILFS2's `nilfs_writepages` writes nothing then:
    /// its data is written by segment constructions (its thread's timer
    /// and watermark, fsync) only.
    fn writes_in_background(&self) -> bool {
        true
    }
    /// Whether a request must not run on across block `block` (a zone's
    /// start on a zoned drive, where the block layer splits).
    fn splits_at(&self, _block: u64) -> bool {
        false
    }
    /// Whether writeback builds its bios by block: a page whose block
    /// follows the bio's last joins it whatever its index in the file
    /// (F2FS's `f2fs_submit_page_write`, ext4's `io_submit_add_bh`,
    /// NILFS2's segment buffers). XFS's iomap writeback also needs the
    /// file offset to follow (`iomap_can_add_to_ioend`).
    fn bios_by_block(&self) -> bool {
        true
    }
    /// What a write of `blocks` blocks from `block` carries as the file
    /// system submits it ([`crate::workload::WriteTag`]: the placement
    /// identifier its write hint maps to, the log that orders it on a
    /// zoned drive). Nothing by default.
    fn write_tag(&self, _block: u64, _blocks: u32) -> crate::workload::WriteTag {
        crate::workload::WriteTag::default()
    }
    /// Whether O_DIRECT writes go through the page cache instead
    /// (`f2fs_force_buffered_io`: F2FS on a zoned drive, so that its
    /// log serializes every write).
    fn buffers_direct_writes(&self) -> bool {
        false
    }
    /// `stat`, `open`, `readdir`: metadata reads (served by the cache here
    /// once read: the models keep metadata resident).
    fn stat(&mut self, _f: u32, _now: SimTime, _io: &mut Vec<FsCall>) {}
    /// What fsync(f) writes after f's data and before the device flush.
    fn fsync(&mut self, f: u32, now: SimTime) -> FsyncIo;
    /// Background work due at `now`: the calls of the file system's thread.
    fn tick(&mut self, _now: SimTime, _io: &mut Vec<FsCall>) {}
    /// The file system's thread starts a commit (a [`FsCall::Commit`] of
    /// the timer, or one an fsync asked for, [`crate::workload::CommitWait`]):
    /// the running transaction closes and this is what the commit writes,
    /// ordered data first. `None` when nothing is asked or written.
    fn commit_io(&mut self, _now: SimTime) -> Option<FsyncIo> {
        None
    }
    /// The commit [`FileSystem::commit_io`] returned has been written.
    fn commit_done(&mut self, _now: SimTime) {}
    /// Whether transaction `tid` has committed (or work `tid` a
    /// [`FsCall::Wait`] names is done).
    fn committed(&self, _tid: u64) -> bool {
        true
    }
    /// Whether the file system's thread has work left to do (F2FS's
    /// zoned mode runs its cleaning, checkpoints and zone resets there,
    /// a round per [`FileSystem::commit_io`]): it is handed another
    /// commit call.
    fn work_pending(&self) -> bool {
        false
    }
    /// When [`FileSystem::tick`] has work next.
    fn next_tick(&self) -> Option<SimTime> {
        None
    }
    /// The history so far (aging) is on disk: the running journal
    /// transaction or log is dropped (its blocks count as written in place)
    /// and the counters start again from zero.
    fn settle(&mut self);
    /// The size of `f` in bytes (0 if it does not exist).
    fn size(&self, f: u32) -> u64;
    /// Whether file `f` exists.
    fn exists(&self, f: u32) -> bool;
    /// fsck: every allocated block reachable from metadata exactly once,
    /// every reachable block allocated, the counts consistent.
    fn check(&self) -> Result<(), String>;
    /// What the file system did so far (the report's `file_system` section).
    fn stats(&self) -> FsStats;
}

/// The modelled file systems, dispatched by enum (as `AnyFtl`).
pub enum AnyFs {
    /// The `raw` model (no file system).
    Raw(raw::Raw),
    /// ext2, ext3 or ext4.
    Ext(Box<ext::Ext>),
    /// XFS.
    Xfs(Box<xfs::Xfs>),
    /// NILFS2.
    Nilfs2(Box<nilfs2::Nilfs2>),
    /// ReiserFS.
    Reiserfs(Box<reiserfs::Reiserfs>),
    /// F2FS.
    F2fs(Box<f2fs::F2fs>),
}

macro_rules! any_fs {
    ($self:ident, $fs:ident => $e:expr) => {
        match $self {
            AnyFs::Raw($fs) => $e,
            AnyFs::Ext($fs) => $e,
            AnyFs::Xfs($fs) => $e,
            AnyFs::Nilfs2($fs) => $e,
            AnyFs::Reiserfs($fs) => $e,
            AnyFs::F2fs($fs) => $e,
        }
    };
}

impl FileSystem for AnyFs {
    fn kind(&self) -> FsKind {
        any_fs!(self, f => f.kind())
    }
    fn blocks(&self) -> u64 {
        any_fs!(self, f => f.blocks())
    }
    fn data_room(&self) -> u64 {
        any_fs!(self, f => f.data_room())
    }
    fn own_areas(&self) -> String {
        any_fs!(self, f => f.own_areas())
    }
    fn create(&mut self, f: u32, now: SimTime, io: &mut Vec<FsCall>) -> Result<(), NoSpace> {
        any_fs!(self, s => s.create(f, now, io))
    }
    fn unlink(&mut self, f: u32, now: SimTime, io: &mut Vec<FsCall>) {
        any_fs!(self, s => s.unlink(f, now, io))
    }
    fn write(
        &mut self,
        f: u32,
        off: u64,
        len: u64,
        now: SimTime,
        io: &mut Vec<FsCall>,
    ) -> Result<(), NoSpace> {
        any_fs!(self, s => s.write(f, off, len, now, io))
    }
    fn read(&mut self, f: u32, off: u64, len: u64, now: SimTime, io: &mut Vec<FsCall>) {
        any_fs!(self, s => s.read(f, off, len, now, io))
    }
    fn place(&mut self, f: u32, index: u64, n: u32, now: SimTime, out: &mut Vec<(u64, u64, u32)>) {
        any_fs!(self, s => s.place(f, index, n, now, out))
    }
    fn locate(&self, f: u32, index: u64, n: u32, out: &mut Vec<(u64, u64, u32)>) {
        any_fs!(self, s => s.locate(f, index, n, out))
    }
    fn places_at_writeback(&self) -> bool {
        any_fs!(self, s => s.places_at_writeback())
    }
    fn writes_in_background(&self) -> bool {
        any_fs!(self, s => s.writes_in_background())
    }
    fn stat(&mut self, f: u32, now: SimTime, io: &mut Vec<FsCall>) {
        any_fs!(self, s => s.stat(f, now, io))
    }
    fn fsync(&mut self, f: u32, now: SimTime) -> FsyncIo {
        any_fs!(self, s => s.fsync(f, now))
    }
    fn tick(&mut self, now: SimTime, io: &mut Vec<FsCall>) {
        any_fs!(self, s => s.tick(now, io))
    }
    fn commit_io(&mut self, now: SimTime) -> Option<FsyncIo> {
        any_fs!(self, s => s.commit_io(now))
    }
    fn commit_done(&mut self, now: SimTime) {
        any_fs!(self, s => s.commit_done(now))
    }
    fn committed(&self, tid: u64) -> bool {
        any_fs!(self, s => s.committed(tid))
    }
    fn work_pending(&self) -> bool {
        any_fs!(self, s => s.work_pending())
    }
    fn buffers_direct_writes(&self) -> bool {
        any_fs!(self, s => s.buffers_direct_writes())
    }
    fn write_tag(&self, block: u64, blocks: u32) -> crate::workload::WriteTag {
        any_fs!(self, s => s.write_tag(block, blocks))
    }
    fn splits_at(&self, block: u64) -> bool {
        any_fs!(self, s => s.splits_at(block))
    }
    fn bios_by_block(&self) -> bool {
        any_fs!(self, s => s.bios_by_block())
    }
    fn next_tick(&self) -> Option<SimTime> {
        any_fs!(self, s => s.next_tick())
    }
    fn settle(&mut self) {
        any_fs!(self, s => s.settle())
    }
    fn size(&self, f: u32) -> u64 {
        any_fs!(self, s => s.size(f))
    }
    fn exists(&self, f: u32) -> bool {
        any_fs!(self, s => s.exists(f))
    }
    fn check(&self) -> Result<(), String> {
        any_fs!(self, s => s.check())
    }
    fn stats(&self) -> FsStats {
        any_fs!(self, s => s.stats())
    }
}

/// A commit's direct writes without barriers as the calls of the file
/// system's thread: the log blocks, then the last block on its own when
/// its flag differs.
pub fn push_plain(mut runs: Vec<(u64, u32)>, sync: CommitSync, io: &mut Vec<FsCall>) {
    let last = if sync.log == sync.commit {
        None
    } else {
        runs.last_mut().map(|r| {
            r.1 -= 1;
            r.0 + r.1 as u64
        })
    };
    for (block, blocks) in runs {
        if blocks > 0 {
            io.push(FsCall::Direct {
                op: IoOp::Write,
                block,
                blocks,
                sync: sync.log,
            });
        }
    }
    if let Some(block) = last {
        io.push(FsCall::Direct {
            op: IoOp::Write,
            block,
            blocks: 1,
            sync: sync.commit,
        });
    }
}

/// A commit's direct writes as the calls of the file system's thread: the
/// runs, a flush, their last block (the commit block, super root or last
/// log block) and a flush, as `REQ_PREFLUSH | REQ_FUA` on that block.
pub fn push_commit(mut runs: Vec<(u64, u32)>, sync: CommitSync, io: &mut Vec<FsCall>) {
    let Some(last) = runs.last_mut() else { return };
    let lb = last.0 + last.1 as u64 - 1;
    last.1 -= 1;
    if last.1 == 0 {
        runs.pop();
    }
    for (block, blocks) in runs {
        io.push(FsCall::Direct {
            op: IoOp::Write,
            block,
            blocks,
            sync: sync.log,
        });
    }
    io.push(FsCall::Flush);
    io.push(FsCall::Direct {
        op: IoOp::Write,
        block: lb,
        blocks: 1,
        sync: sync.commit,
    });
    io.push(FsCall::Flush);
}

/// fsck's partition check: the runs `owned` (start, blocks, whose) of every
/// reachable and every free block cover `[0, blocks)` exactly once.
pub fn check_partition(mut owned: Vec<(u64, u64, String)>, blocks: u64) -> Result<(), String> {
    owned.sort_unstable_by_key(|o| o.0);
    let mut end = 0;
    let mut prev = String::from("the start");
    for (s, n, who) in owned {
        if s < end {
            return Err(format!("block {s} of {who} is also {prev}'s"));
        }
        if s > end {
            return Err(format!(
                "blocks {end}..{s} are neither free nor reachable (after {prev})"
            ));
        }
        end = s + n;
        prev = who;
    }
    if end != blocks {
        return Err(format!("blocks end at {end}, not {blocks}"));
    }
    Ok(())
}

/// Data calls for the file bytes `[off, off + len)` laid out in `extents`
/// ((first block, blocks) in file order): one call per contiguous device
/// run, sector-aligned (the cache reads and writes whole pages).
pub fn data_calls(extents: &[(u64, u64)], op: IoOp, off: u64, len: u64, io: &mut Vec<FsCall>) {
    let end = off + len;
    let mut base = 0u64;
    let mut pending: Option<(u64, u64)> = None;
    for &(s, n) in extents {
        let (lo, hi) = (base * BLOCK, (base + n) * BLOCK);
        base += n;
        if hi <= off {
            continue;
        }
        if lo >= end {
            break;
        }
        let a = off.max(lo);
        let b = end.min(hi);
        let at = s * BLOCK + (a - lo);
        match &mut pending {
            Some((pa, pl)) if *pa + *pl == at => *pl += b - a,
            _ => {
                if let Some((pa, pl)) = pending.take() {
                    push_data(op, pa, pl, io);
                }
                pending = Some((at, b - a));
            }
        }
    }
    if let Some((pa, pl)) = pending {
        push_data(op, pa, pl, io);
    }
}

fn push_data(op: IoOp, at: u64, bytes: u64, io: &mut Vec<FsCall>) {
    let lo = at / 512 * 512;
    let hi = (at + bytes).div_ceil(512) * 512;
    io.push(FsCall::Data {
        op,
        at: lo,
        bytes: hi - lo,
    });
}

#[cfg(test)]
mod props;

#[cfg(test)]
mod tests {
    use super::*;

    /// `commit_sync`'s table: which journal and log writes each kernel
    /// marks REQ_SYNC (log blocks, last block).
    #[test]
    fn commit_sync_follows_each_kernels_journal_code() {
        let c = |kind, kernel, barrier| {
            let s = FsConfig {
                kind,
                kernel: Some(kernel),
                barrier,
                ..FsConfig::default()
            }
            .commit_sync();
            (s.log, s.commit, s.ordered)
        };
        use Kernel::{Current, V2_6_35};
        for k in [FsKind::Ext3, FsKind::Ext4] {
            assert_eq!(c(k, Current, None), (true, true, true), "{k}");
            assert_eq!(c(k, V2_6_35, None), (false, true, k == FsKind::Ext4), "{k}");
        }
        assert_eq!(c(FsKind::Xfs, Current, None), (true, true, true));
        assert_eq!(c(FsKind::Xfs, V2_6_35, None), (false, false, true));
        assert_eq!(c(FsKind::Xfs, V2_6_35, Some(false)), (true, true, true));
        assert_eq!(c(FsKind::Reiserfs, Current, None), (false, true, false));
        assert_eq!(c(FsKind::Reiserfs, V2_6_35, None), (false, false, false));
        for k in [Current, V2_6_35] {
            assert_eq!(c(FsKind::Nilfs2, k, None), (false, true, false));
        }
        assert_eq!(c(FsKind::F2fs, Current, None), (true, true, true));
    }

    #[test]
    fn kinds_parse_and_knobs_of_other_kinds_are_refused() {
        for k in FsKind::ALL {
            assert_eq!(FsKind::parse(k.name()), Ok(k));
        }
        assert!(FsKind::parse("ntfs").unwrap_err().contains("ext4"));
        let c = FsConfig {
            kind: FsKind::Ext2,
            journal: Some(JournalMode::Journal),
            ..FsConfig::default()
        };
        assert!(c.validate().unwrap_err().to_string().contains("fs.journal"));
    }

    /// `fs.kernel` is accepted for every kind and sets its mount defaults:
    /// on 2.6.35 XFS runs without delayed logging and ext3 without
    /// barriers; an explicit knob wins; a knob of another kind, or a bad
    /// value, is refused naming its field.
    #[test]
    fn the_kernel_profile_sets_each_kinds_defaults() {
        for kind in FsKind::ALL {
            for kernel in Kernel::ALL {
                let c = FsConfig {
                    kind,
                    kernel: Some(kernel),
                    ..FsConfig::default()
                };
                c.validate().unwrap();
                let old = kernel == Kernel::V2_6_35;
                assert_eq!(c.delaylog(), !old, "{kind} {}", kernel.name());
                assert_eq!(c.barrier(), !(old && kind == FsKind::Ext3), "{kind}");
            }
            // The default is the current kernel's.
            let c = FsConfig {
                kind,
                ..FsConfig::default()
            };
            assert_eq!(c.kernel(), Kernel::Current);
            assert!(c.delaylog() && c.barrier());
        }
        let c: FsConfig = toml::from_str("kind = \"xfs\"\nkernel = \"2.6.35\"\n").unwrap();
        assert_eq!(c.kernel, Some(Kernel::V2_6_35));
        assert!(!c.delaylog());
        let c: FsConfig =
            toml::from_str("kind = \"xfs\"\nkernel = \"2.6.35\"\ndelaylog = true\n").unwrap();
        assert!(c.delaylog());
        let c: FsConfig =
            toml::from_str("kind = \"ext3\"\nkernel = \"2.6.35\"\nbarrier = true\n").unwrap();
        assert!(c.barrier());
        // The default stays out of the serialized config (its hash).
        let plain = toml::to_string(&FsConfig::default()).unwrap();
        assert!(!plain.contains("kernel") && !plain.contains("delaylog"));
        let e = toml::from_str::<FsConfig>("kernel = \"2.6.32\"\n").unwrap_err();
        assert!(e.to_string().contains("kernel"), "{e}");
        for (toml, field) in [
            ("kind = \"ext4\"\ndelaylog = false", "fs.delaylog"),
            ("kind = \"ext2\"\nbarrier = false", "fs.barrier"),
            ("kind = \"reiserfs\"\nbarrier = false", "fs.barrier"),
            ("kind = \"nilfs2\"\nbarrier = false", "fs.barrier"),
        ] {
            let c: FsConfig = toml::from_str(toml).unwrap();
            assert!(
                c.validate().unwrap_err().to_string().contains(field),
                "{toml}"
            );
        }
    }

    #[test]
    fn data_calls_merge_adjacent_extents_and_split_at_gaps() {
        let mut io = Vec::new();
        data_calls(
            &[(10, 2), (12, 1), (20, 3)],
            IoOp::Write,
            100,
            4 * BLOCK,
            &mut io,
        );
        assert_eq!(
            io,
            vec![
                FsCall::Data {
                    op: IoOp::Write,
                    at: 10 * BLOCK,
                    bytes: 3 * BLOCK - 512 + 512,
                },
                FsCall::Data {
                    op: IoOp::Write,
                    at: 20 * BLOCK,
                    bytes: BLOCK + 512,
                },
            ]
        );
    }
}
