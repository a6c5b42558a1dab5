//! Tests of `filebench`.

use super::*;
use crate::fs::FsKind;
use crate::pagecache::file_of;
use crate::personality::PersonalityLevel;
use std::collections::BTreeMap;

#[path = "../../tests/common/mod.rs"]
mod common;

fn fsc(kind: FsKind) -> FsConfig {
    FsConfig {
        kind,
        ..FsConfig::default()
    }
}

const CAP: u64 = 8 << 30;

fn cfg(kind: PersonalityKind, calls: u64) -> PersonalityConfig {
    PersonalityConfig {
        requests: calls,
        level: PersonalityLevel::File,
        ..PersonalityConfig::new(kind)
    }
}

fn drain(fb: &mut FileBench) -> Vec<HostRequest> {
    drain_more(fb).into_iter().map(|x| x.0).collect()
}

/// The requests, each with whether more pieces of its call follow and
/// what else it asks.
fn drain_more(fb: &mut FileBench) -> Vec<(HostRequest, bool, CallExtras)> {
    let mut v = Vec::new();
    while let Some(r) = fb.next_request() {
        v.push((r.unwrap(), fb.more_follow(), fb.call_extras()));
    }
    v
}

/// The file set: 80 % of the entries exist (written whole), sizes have
/// the gamma's mean, and the extents never overlap.
#[test]
fn the_file_set_is_filebenchs() {
    let mut fb = FileBench::new(
        &cfg(PersonalityKind::Fileserver, 0),
        &fsc(FsKind::Raw),
        CAP,
        1,
    )
    .unwrap();
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
    let sizes: u64 = fb.existing.iter().map(|&f| fb.fs.size(f as u32)).sum();
    assert!(
        data >= sizes && data < sizes + 8_000 * 512,
        "{data} bytes for {sizes}"
    );
    fb.check().unwrap();
    // Pre-allocated files are written from one allocation cursor: each
    // is one extent.
    assert_eq!(fb.fs.stats().extents, 8_000);
}

/// Varmail's flow, counted over many loops: per loop one delete, one
/// create, two appends (a zero draw is skipped), two fsyncs and two
/// whole-file reads; every fsync names the file just appended.
#[test]
fn varmail_runs_filebenchs_flowops() {
    let mut fb = FileBench::new(
        &cfg(PersonalityKind::Varmail, 20_000),
        &fsc(FsKind::Ext2),
        CAP,
        3,
    )
    .unwrap();
    let pieces = drain_more(&mut fb);
    let calls: Vec<HostRequest> = pieces.iter().map(|x| x.0).collect();
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
    // The measured calls stop at the budget (metadata and file-system
    // calls and unlinks apart; a call in pieces counts once).
    let app = |c: &[(HostRequest, bool, CallExtras)]| {
        c.iter()
            .filter(|(r, more, x)| r.tag != METADATA_INO && r.tag != FS_INO && !more && !x.unlink)
            .count()
    };
    // Each delete is followed by its file's unlink, on no device page.
    let unlinks: Vec<&HostRequest> = pieces.iter().filter(|x| x.2.unlink).map(|x| &x.0).collect();
    assert_eq!(unlinks.len() as u64, s.deletes);
    assert!(unlinks
        .iter()
        .all(|r| r.sectors == 0 && r.tag >= 1 && r.tag <= 1_000));
    let pre = s.prealloc_calls as usize;
    assert_eq!(app(&pieces[pre..]), 20_000);
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

/// oltp.f's semaphores, checked after every call handed out: a shadow
/// is at most 1,000 posts ahead of the log writer's waits and 2,000
/// ahead of the slowest database writer's; a writer starts batch b
/// only after 1,000 b posts, the log writer its write n after 3,200 n.
/// Shadows read `iosize`, writers write it with O_DSYNC, the log
/// writer 256 KiB; the shadows' reads after their first carry the hog.
#[test]
fn oltp_semaphores_hold_the_mix() {
    let mut fb = FileBench::new(
        &cfg(PersonalityKind::Oltp, 60_000),
        &fsc(FsKind::Ext4),
        CAP,
        3,
    )
    .unwrap();
    let w = fb.p.db_writers as usize;
    assert_eq!((w, fb.threads.len()), (10, 211));
    let mut per_writer = vec![0u64; w + 1];
    let mut pre = fb.stats.prealloc_calls;
    while let Some(r) = fb.next_request() {
        let r = r.unwrap();
        let x = fb.call_extras();
        if pre > 0 {
            pre -= 1;
            continue;
        }
        if r.tag == METADATA_INO || r.tag == FS_INO {
            continue;
        }
        let t = r.stream as usize;
        let bytes = r.sectors as u64 * SECTOR;
        match t {
            0 => {
                assert_eq!((r.op, bytes, x.dsync), (IoOp::Write, 256 << 10, true));
                assert!(fb.posts >= 3_200 * (fb.threads[0].entered - 1));
            }
            t if t <= w => {
                assert_eq!((r.op, bytes, x.dsync), (IoOp::Write, 2 << 10, true));
                per_writer[t] += 1;
                let batch = (per_writer[t] - 1) / 100;
                assert!(fb.posts >= 1_000 * batch, "writer {t} batch {batch}");
            }
            _ => {
                assert_eq!((r.op, bytes, x.dsync), (IoOp::Read, 2 << 10, false));
            }
        }
        let slowest = fb.threads[1..=w].iter().map(|t| t.entered).min().unwrap();
        assert!(fb.posts <= 1_000 + 3_200 * fb.threads[0].entered);
        assert!(fb.posts <= 2_000 + 1_000 * slowest);
    }
    let s = &fb.stats;
    assert_eq!(s.shadow_reads, fb.posts);
    assert!(s.db_writes.abs_diff(s.shadow_reads) <= 2_000, "{s:?}");
    assert!(
        s.log_writes * 3_200 + 1_000 > fb.posts && s.log_writes <= fb.posts / 3_200 + 1,
        "{s:?}"
    );
    assert!(s.sem_waits > 0);
    // The hog: every shadow's reads after its first.
    let p = cfg(PersonalityKind::Oltp, 10_000);
    let mut fb = FileBench::new(&p, &fsc(FsKind::Ext4), CAP, 3).unwrap();
    let mut hogs = 0;
    let mut reads = 0;
    while let Some(r) = fb.next_request() {
        let r = r.unwrap();
        if r.op == IoOp::Read && r.tag != FS_INO {
            reads += 1;
            hogs += u64::from(fb.call_extras().cpu_cycles == 200_000);
        }
        if reads == 1_000 {
            break;
        }
    }
    assert_eq!(hogs, 1_000 - 200);
}

#[test]
fn same_seed_same_calls_and_a_file_set_too_big_is_refused() {
    let a = drain(
        &mut FileBench::new(
            &cfg(PersonalityKind::Webserver, 3000),
            &fsc(FsKind::Ext4),
            CAP,
            9,
        )
        .unwrap(),
    );
    let mut fb = FileBench::new(
        &cfg(PersonalityKind::Webserver, 3000),
        &fsc(FsKind::Ext4),
        CAP,
        9,
    )
    .unwrap();
    let b = drain(&mut fb);
    assert_eq!(a, b);
    // Ten whole-file reads per log append.
    let s = &fb.stats;
    assert!(
        s.appends > 0 && s.whole_reads.abs_diff(10 * s.appends) <= 10 * 100 + 16,
        "{s:?}"
    );
    let e = FileBench::new(
        &cfg(PersonalityKind::Fileserver, 10),
        &FsConfig::default(),
        1 << 30,
        1,
    )
    .err()
    .unwrap();
    assert!(e.to_string().contains("personality.files"), "{e}");
}

/// ReiserFS's journal takes 32 MiB of a 64 MiB device: an oltp file set
/// (one size, plus its 10 MiB log) within the device's check (half the
/// device) but over what ReiserFS leaves for data is refused naming the
/// fields, reiserfs and its journal; one just under that but whose tree
/// nodes do not fit is refused too; a smaller one runs.
#[test]
fn a_file_set_over_the_file_systems_room_is_refused() {
    let oltp = |files: u64, blocks: u64| PersonalityConfig {
        files: Some(files),
        file_size: Some(ssd_core::units::Size(blocks * BLOCK)),
        threads: Some(2),
        db_writers: Some(1),
        ..cfg(PersonalityKind::Oltp, 200)
    };
    let dev = 64 << 20;
    // 5 × 1,125 + 2,560 = 8,185 blocks: at most half of 16,384, but
    // ReiserFS leaves 8,172.
    let e = FileBench::new(&oltp(5, 1_125), &fsc(FsKind::Reiserfs), dev, 1)
        .err()
        .expect("refused")
        .to_string();
    for want in [
        "personality.files",
        "personality.file_size",
        "preallocates 32.0 MiB (8185 blocks)",
        "reiserfs on this 64.0 MiB device leaves 31.9 MiB (8172 blocks) for data",
        "journal",
    ] {
        assert!(e.contains(want), "{want:?} not in {e}");
    }
    // 8,170 blocks of data fit the 8,172, but not with the tree's nodes.
    let e = FileBench::new(&oltp(5, 1_122), &fsc(FsKind::Reiserfs), dev, 1)
        .err()
        .expect("refused")
        .to_string();
    assert!(
        e.contains("personality.files") && e.contains("found no space") && e.contains("reiserfs"),
        "{e}"
    );
    // The same file sets fit ext4's room on the device.
    assert!(FileBench::new(&oltp(5, 1_125), &fsc(FsKind::Ext4), dev, 1).is_ok());
    let mut fb = FileBench::new(&oltp(5, 1_000), &fsc(FsKind::Reiserfs), dev, 1).unwrap();
    assert_eq!(fb.stats.skipped_no_space, 0);
    assert!(!drain(&mut fb).is_empty());
}

/// NILFS2's cleaner under the flows: a small log, no protection period;
/// the cleaner moves blocks, fsck holds and no file block loses its
/// latest version.
#[test]
fn nilfs2_cleans_under_the_flows() {
    let fs = FsConfig {
        kind: FsKind::Nilfs2,
        segment_size: Some(ssd_core::units::Size(1 << 20)),
        protection_period: Some(ssd_core::units::Dur(0)),
        nsegments_per_clean: Some(8),
        cleaning_interval: Some(ssd_core::units::Dur::from_ms(1000)),
        ..FsConfig::default()
    };
    let mut c = cfg(PersonalityKind::Fileserver, 20_000);
    c.files = Some(200);
    let mut fb = FileBench::new(&c, &fs, 256 << 20, 3).unwrap();
    let mut n = 0;
    // No page cache here: what it would write of a file when asked (an
    // fsync's own data, a construction's files), at once.
    let write_file = |fb: &mut FileBench, ino: u32, now: SimTime| {
        let pages = fb.file_pages(ino) as u32;
        fb.place(ino, 0, pages, now, &mut Vec::new());
    };
    let mut constructions = 0;
    while let Some(r) = fb.next_request() {
        let r = r.unwrap();
        n += 1;
        let now = SimTime(n * 100_000_000);
        // 100 ms a call: about what the cleaner can keep up with.
        if n % 10 == 0 {
            fb.clock(now);
        }
        if r.op == IoOp::Flush && r.tag != FS_INO {
            write_file(&mut fb, r.tag, now);
            let io = fb.fsync_io(r.tag, now);
            for ino in io.ordered {
                write_file(&mut fb, ino, now);
            }
        }
        // segctord's constructions (its timer, the watermark).
        if fb.take_commit() {
            if let Some(io) = fb.commit_io(now) {
                constructions += 1;
                for ino in io.ordered {
                    write_file(&mut fb, ino, now);
                }
            }
        }
    }
    assert!(constructions > 0);
    fb.check().unwrap();
    let crate::fs::AnyFs::Nilfs2(nf) = &fb.fs else {
        panic!("not nilfs2")
    };
    nf.check_versions().unwrap();
    let st = fb.fs.stats();
    assert!(
        st.cleaner_blocks_read > 0 && st.cleaner_blocks_written > 0,
        "{st:?}"
    );
}

/// F2FS's cleaner under the flows: a small device (256 MiB, 600 files),
/// checkpoints every 10 s, the background cleaner every 30 s (its
/// default) not keeping up alone: both cleaners move blocks, fsck holds
/// and no file block loses its latest version.
#[test]
fn f2fs_cleans_under_the_flows() {
    let fs = FsConfig {
        kind: FsKind::F2fs,
        cp_interval: Some(ssd_core::units::Dur::from_ms(10_000)),
        ..FsConfig::default()
    };
    let mut c = cfg(PersonalityKind::Fileserver, 20_000);
    c.files = Some(600);
    let mut fb = FileBench::new(&c, &fs, 256 << 20, 3).unwrap();
    let mut n = 0;
    // The cleaner's reads: the background one's on the file system's
    // thread, the foreground one's on the writers'.
    let (mut daemon_reads, mut writer_reads) = (0, 0);
    let mut placed = Vec::new();
    while let Some(r) = fb.next_request() {
        let r = r.unwrap();
        n += 1;
        if n % 10 == 0 {
            fb.clock(SimTime(n * 100_000_000));
        }
        // No page cache here: each write is written back at once.
        if let (IoOp::Write, Some((ino, index))) = (r.op, file_of(r.lba / 8)) {
            let last = (r.lba + r.sectors as u64).div_ceil(8);
            let pages = (last - r.lba / 8) as u32;
            fb.place(ino, index, pages, SimTime(n * 100_000_000), &mut placed);
        }
        if r.tag == FS_INO && r.op == IoOp::Read {
            if r.stream == fb.daemon_stream() {
                daemon_reads += 1;
            } else {
                writer_reads += 1;
            }
        }
        if r.op == IoOp::Flush && r.tag != FS_INO {
            fb.fsync_io(r.tag, SimTime(n * 100_000_000));
        }
    }
    fb.check().unwrap();
    let crate::fs::AnyFs::F2fs(ff) = &fb.fs else {
        panic!("not f2fs")
    };
    ff.check_versions().unwrap();
    let st = fb.fs.stats();
    assert!(
        daemon_reads > 0
            && writer_reads > 0
            && st.cleaner_blocks_read > 0
            && st.cleaner_blocks_written == st.cleaner_blocks_read,
        "{daemon_reads} {writer_reads} {st:?}"
    );
    assert!(
        st.commits_timer > 0 && st.journal_blocks_written > 0,
        "{st:?}"
    );
}

/// F2FS aged: the aging history checkpointed (its counters zeroed),
/// fsck holds after aging and after the flows, and the free segments
/// are fewer and in more runs than on a fresh file system.
#[test]
fn f2fs_ages_and_settles() {
    let run = |fullness: f64| {
        let f = FsConfig {
            kind: FsKind::F2fs,
            age_fullness: fullness,
            ..FsConfig::default()
        };
        let mut c = cfg(PersonalityKind::Fileserver, 3_000);
        c.files = Some(500);
        let mut fb = FileBench::new(&c, &f, 1 << 30, 3).unwrap();
        fb.check().unwrap();
        // Counted from the pre-allocation on: the aging's are gone.
        let st = fb.fs.stats();
        assert!(st.data_blocks_allocated < 3 * 500 * 32, "{st:?}");
        let _ = drain(&mut fb);
        fb.check().unwrap();
        let crate::fs::AnyFs::F2fs(ff) = &fb.fs else {
            panic!("not f2fs")
        };
        ff.check_versions().unwrap();
        (fb.fs.stats(), fb.aged)
    };
    let (fresh, _) = run(0.0);
    let (aged, (created, deleted, used)) = run(0.5);
    assert!(created > deleted && deleted > 0 && used > 0);
    assert!(aged.used_blocks > fresh.used_blocks, "{fresh:?} {aged:?}");
    assert!(aged.free_extents > fresh.free_extents, "{fresh:?} {aged:?}");
}

/// fsck after the flows of every personality on every modelled file
/// system: every allocated block reachable exactly once, and the
/// metadata, journal and data calls where the file system put them.
#[test]
fn every_file_system_stays_consistent_under_the_flows() {
    for kind in FsKind::ALL {
        // A journal (ext3, ext4, ReiserFS), a metadata log (XFS) or a
        // log of everything (NILFS2, F2FS).
        let logged = kind.journaled()
            || kind == FsKind::Xfs
            || kind == FsKind::Nilfs2
            || kind == FsKind::F2fs;
        for pk in [
            PersonalityKind::Varmail,
            PersonalityKind::Fileserver,
            PersonalityKind::Webserver,
        ] {
            let mut c = cfg(pk, 6_000);
            c.files = Some(400);
            let mut fb = FileBench::new(&c, &fsc(kind), 1 << 30, 7).unwrap();
            let mut n = 0;
            while let Some(r) = fb.next_request() {
                let r = r.unwrap();
                n += 1;
                let now = SimTime(n * 20_000_000);
                if n % 500 == 0 {
                    fb.clock(now);
                }
                if r.op == IoOp::Flush && r.tag != FS_INO {
                    let io = fb.fsync_io(r.tag, now);
                    if kind == FsKind::F2fs {
                        // Roll-forward: the file's node blocks, no
                        // barrier (the fsync's flush follows); a
                        // checkpoint has its barrier.
                        assert!(io.ordered.is_empty() && io.metadata.is_empty(), "{io:?}");
                    } else if logged {
                        assert!(io.barrier || io.direct.is_empty(), "{kind}: {io:?}");
                    }
                }
                // The file system's thread writes the commits asked of it,
                // each with its barrier: a log, or (NILFS2) the data of
                // blocks an earlier construction placed, which the cache
                // writes once it holds their pages (none here: nothing
                // asks `place`).
                if fb.take_commit() {
                    if let Some(io) = fb.commit_io(now) {
                        let data_only = kind == FsKind::Nilfs2 && !io.ordered.is_empty();
                        assert!(
                            io.barrier && (!io.direct.is_empty() || data_only),
                            "{kind}: {io:?}"
                        );
                    }
                    fb.commit_done(now);
                }
            }
            fb.check().unwrap_or_else(|e| panic!("{kind} {pk:?}: {e}"));
            let st = fb.fs.stats();
            assert_eq!(st.kind, kind.name());
            if kind == FsKind::Raw {
                assert_eq!(fb.stats.metadata_writes, 0);
            } else if kind == FsKind::Nilfs2 {
                // Everything but data goes into the log, by the file
                // system's own (direct) writes: no metadata writeback.
                assert_eq!(fb.stats.metadata_writes, 0);
                assert!(
                    st.commits_fsync + st.commits_timer > 0 && st.journal_blocks_written > 0,
                    "{kind} {pk:?}: {st:?}"
                );
            } else if kind == FsKind::F2fs {
                // Dentry blocks through the buffer cache; nodes, NAT,
                // SIT, SSA and checkpoints by the file system itself.
                assert!(fb.stats.metadata_writes > 0, "{kind} {pk:?}");
                assert!(
                    st.commits_timer > 0 && st.journal_blocks_written > 0,
                    "{kind} {pk:?}: {st:?}"
                );
            } else {
                assert!(fb.stats.metadata_writes > 0, "{kind} {pk:?}");
            }
            if logged && pk == PersonalityKind::Varmail {
                assert!(
                    st.commits_fsync > 0 && st.journal_blocks_written > 0,
                    "{st:?}"
                );
            }
        }
    }
}

/// Aging leaves the file system as full as asked and the file set's
/// files in more pieces than on a fresh file system (ext2 places a
/// file's next block after its last one only while that block is free:
/// on an aged file system the holes are small), so the pre-allocation
/// writes them in more requests; fsck passes; the same seed ages the
/// same way; the counters start after aging.
#[test]
fn aging_fragments_the_file_set() {
    let run = |fullness: f64| {
        let mut c = cfg(PersonalityKind::Fileserver, 0);
        c.files = Some(2000);
        let f = FsConfig {
            kind: FsKind::Ext2,
            age_fullness: fullness,
            ..FsConfig::default()
        };
        let mut fb = FileBench::new(&c, &f, 1 << 30, 3).unwrap();
        drain(&mut fb);
        fb.check().unwrap();
        // The file set's contiguous device runs, as its writeback places
        // them (one request each).
        let mut runs = Vec::new();
        for f in 0..2000 {
            let n = fb.fs.size(f).div_ceil(BLOCK) as u32;
            fb.fs.place(f, 0, n, SimTime::ZERO, &mut runs);
        }
        let data = runs.len();
        let mut st = fb.fs.stats();
        (
            st.aged_files_created,
            st.aged_files_deleted,
            st.aged_blocks_in_use,
        ) = fb.aged;
        (st, data)
    };
    let (fresh, fresh_calls) = run(0.0);
    let (aged, aged_calls) = run(0.5);
    let blocks = aged.blocks as f64;
    assert!(
        (aged.aged_blocks_in_use as f64 / blocks - 0.5).abs() < 0.02,
        "{aged:?}"
    );
    assert!(aged.aged_files_deleted > 0 && aged.aged_files_created > aged.aged_files_deleted);
    assert!(
        aged_calls as f64 > 1.2 * fresh_calls as f64,
        "{fresh_calls} -> {aged_calls} data runs"
    );
    assert_eq!(format!("{aged:?}"), format!("{:?}", run(0.5).0));
    assert_eq!(aged.data_blocks_allocated, fresh.data_blocks_allocated);
}

/// ReiserFS ages like the others: as full as asked, fsck passes, the
/// aging's journal transaction is settled before the file set.
#[test]
fn reiserfs_ages_and_stays_consistent() {
    let mut c = cfg(PersonalityKind::Fileserver, 3000);
    c.files = Some(1000);
    let f = FsConfig {
        kind: FsKind::Reiserfs,
        age_fullness: 0.5,
        ..FsConfig::default()
    };
    let mut fb = FileBench::new(&c, &f, 1 << 30, 5).unwrap();
    drain(&mut fb);
    fb.check().unwrap();
    let (created, deleted, used) = fb.aged;
    assert!(created > deleted && deleted > 0, "{:?}", fb.aged);
    let blocks = fb.fs.stats().blocks as f64;
    assert!((used as f64 / blocks - 0.5).abs() < 0.02, "{:?}", fb.aged);
}

/// A file's unlink follows the calls another thread still has to make on
/// it (the rest of a whole-file write, made on its open file: its close
/// is the last reference), and otherwise comes right after the deleting
/// thread's own calls.
#[test]
fn an_unlink_follows_the_calls_left_on_its_file() {
    let mut c = cfg(PersonalityKind::Fileserver, 0);
    c.files = Some(20);
    c.prealloc_percent = Some(0);
    let mut fb = FileBench::new(&c, &fsc(FsKind::Ext4), CAP, 1).unwrap();
    let (mut a, mut b) = (VecDeque::new(), VecDeque::new());
    assert!(fb.create(3, &mut a, 0) && fb.create(4, &mut a, 0));
    // Thread 1 has written the first of three 1 MiB calls of file 3.
    fb.write_at_end(3, 3 << 20, &mut b, 1);
    let first = b
        .iter()
        .position(|(r, more, _)| r.tag == 4 && !more)
        .unwrap();
    fb.threads[1].pending = b.split_off(first + 1);
    let left = fb.threads[1].pending.len();
    let mut out = VecDeque::new();
    fb.delete(3, &mut out, 0);
    assert!(out.iter().all(|(_, _, x)| !x.unlink), "{out:?}");
    let p = &fb.threads[1].pending;
    assert_eq!(p.len(), left + 1);
    let (r, more, x) = p.back().unwrap();
    assert!(x.unlink && !more && r.tag == 4 && r.stream == 1, "{r:?}");
    // No thread has calls left on file 4: its unlink is the deleter's.
    fb.delete(4, &mut out, 0);
    let (r, _, x) = out.back().unwrap();
    assert!(x.unlink && r.tag == 5 && r.stream == 0, "{r:?}");
}

/// Run `fb` through the page cache (its defaults) on the drive `c`: the
/// report and the requests the cache handed the device; the cache's
/// bookkeeping is checked at the end.
fn run_cached(
    fb: FileBench,
    c: &crate::config::SsdConfig,
) -> (ssd_core::stats::Report, common::Sent) {
    use crate::pagecache::{AppIo, PageCache, PageCacheConfig};
    let s = c.validate().unwrap();
    let cache = PageCache::new(
        fb,
        &PageCacheConfig::default(),
        AppIo::default(),
        s.logical_bytes(),
        1 << 19,
    )
    .unwrap();
    let sent = common::Sent::default();
    let ftl = ftl::build(&s.config.ftl, &s.shape()).unwrap();
    let sched =
        crate::scheds::build_sched(&c.sched, s.logical_bytes() / 512, c.host.queue_depth).unwrap();
    let mut sim = ssd_core::Simulation::new(
        s,
        ftl,
        common::Logged(cache, sent.clone()),
        sched,
        ssd_core::observer::NullObserver,
    );
    let rep = sim.run().unwrap();
    sim.src.0.check().unwrap();
    (rep, sent)
}

/// A file written (buffered) and deleted before the flusher runs reaches
/// no device, on every file system: files 3 and 4 are written (256 KiB
/// each), file 3 is deleted, and the thread computes for 40 s, past the
/// 30 s expiry of the periodic writeback. File 3's pages are never
/// written; file 4's are. Without the delete both files are written.
#[test]
fn a_deleted_files_pages_reach_no_device_on_every_file_system() {
    use common::pages_written;
    let mut c = crate::config::SsdConfig::default();
    c.nand.blocks_per_plane = 256;
    let s = c.validate().unwrap();
    for kind in FsKind::ALL {
        for delete in [true, false] {
            let mut p = cfg(PersonalityKind::Fileserver, 0);
            p.files = Some(20);
            p.prealloc_percent = Some(0);
            let mut fb = FileBench::new(&p, &fsc(kind), s.logical_bytes(), 1).unwrap();
            let mut q = VecDeque::new();
            assert!(fb.create(3, &mut q, 0) && fb.create(4, &mut q, 0));
            let from = q.len();
            fb.write_at_end(3, 256 << 10, &mut q, 0);
            // File 3's pages, where the file system put them.
            let pages = |q: &Out, from: usize, ino: u32| -> Vec<(u64, u64)> {
                q.iter()
                    .skip(from)
                    .filter(|(r, _, _)| r.tag == ino && r.op == IoOp::Write)
                    .map(|(r, _, _)| (r.lba / 8, (r.lba + r.sectors as u64).div_ceil(8)))
                    .collect()
            };
            let f3 = pages(&q, from, 4);
            let from = q.len();
            fb.write_at_end(4, 256 << 10, &mut q, 0);
            let f4 = pages(&q, from, 5);
            if delete {
                fb.delete(3, &mut q, 0);
            }
            // 40 s of CPU work before a read of file 4 (a hit).
            let (mut r, _, _) = q
                .iter()
                .skip(from)
                .find(|(r, _, _)| r.tag == 5)
                .copied()
                .unwrap();
            r.op = IoOp::Read;
            let hog = CallExtras {
                cpu_cycles: 100_000_000_000,
                ..CallExtras::default()
            };
            q.push_back((r, false, hog));
            fb.pre = q;
            let (rep, sent) = run_cached(fb, &c);
            let written = |runs: &[(u64, u64)]| -> u64 {
                runs.iter().map(|&(a, b)| pages_written(&sent, a, b)).sum()
            };
            let f3_pages: u64 = f3.iter().map(|(a, b)| b - a).sum();
            assert!(f3_pages >= 64, "{kind}: {f3:?}");
            let dropped = rep.extra["page_cache"]["unlink_dirty_pages_dropped"].as_u64();
            let pc = &rep.extra["page_cache"];
            let data_written = pc["writeback"]["pages"].as_u64().unwrap()
                - pc["metadata_pages_written"].as_u64().unwrap();
            if fsc(kind)
                .build(1 << 16, 20, 20, 1)
                .unwrap()
                .places_at_writeback()
            {
                // The pages are the files' own; what is written back is
                // file 4's 64 pages, and file 3's only if it was not
                // deleted; a file system that allocates at writeback
                // places only those.
                assert!(f3.iter().all(|&(a, _)| file_of(a).is_some()));
                let want = if delete { f3_pages } else { 2 * f3_pages };
                if matches!(kind, FsKind::F2fs | FsKind::Nilfs2) {
                    let placed = rep.extra["file_system"]["data_blocks_allocated"].as_u64();
                    assert_eq!(placed, Some(want), "{kind} delete {delete}");
                } else {
                    assert_eq!(data_written, want, "{kind} delete {delete}");
                }
                assert_eq!(dropped, Some(if delete { f3_pages } else { 0 }), "{kind}");
                continue;
            }
            assert_eq!(written(&f4), f3_pages, "{kind} delete {delete}: file 4");
            if delete {
                assert_eq!(written(&f3), 0, "{kind}: file 3 was written");
                assert_eq!(dropped, Some(f3_pages), "{kind}");
            } else {
                assert_eq!(written(&f3), f3_pages, "{kind}: file 3");
                assert_eq!(dropped, Some(0), "{kind}");
            }
        }
    }
}

/// jbd2 as the kernel runs it, through the page cache: an fsync asks
/// kjournald2 for the commit of its file's transaction and waits for it
/// (`jbd2_complete_transaction` -> `jbd2_log_wait_commit`); the commits
/// are written by the file system's thread, on its own stream, one at a
/// time, each serving the fsyncs whose changes it holds; the fsyncs that waited issue no flush of their own (the commit's
/// barrier and FUA are the file system's). On 2.6.35 an fsync finding its
/// commit asked for already does not wait (`__log_start_commit` returns 0):
/// it flushes, and fewer fsyncs wait.
#[test]
fn fsyncs_wait_for_the_journal_threads_commits() {
    let mut c = crate::config::SsdConfig::default();
    c.nand.blocks_per_plane = 256;
    let s = c.validate().unwrap();
    let mut waits = Vec::new();
    for kernel in [None, Some(crate::fs::Kernel::V2_6_35)] {
        let p = cfg(PersonalityKind::Varmail, 3_000);
        let f = FsConfig {
            kind: FsKind::Ext4,
            kernel,
            ..FsConfig::default()
        };
        let fb = FileBench::new(&p, &f, s.logical_bytes(), 1).unwrap();
        let journal = fb.journal_stream();
        let (rep, sent) = run_cached(fb, &c);
        let n = |k: &str| rep.extra["page_cache"][k].as_u64().unwrap();
        let st = |k: &str| rep.extra["file_system"][k].as_u64().unwrap();
        let commits = st("commits_fsync") + st("commits_timer");
        assert!(commits > 10, "{commits}");
        // Every commit was the thread's, on its stream; its log blocks
        // and flushes are on no application thread's.
        assert_eq!(n("fs_thread_commits"), commits);
        let sent = sent.borrow();
        let on = |op: IoOp, journal_thread: bool| {
            sent.iter()
                .filter(|r| r.op == op && (r.stream == journal) == journal_thread)
                .map(|r| r.sectors as u64 / 8 + u64::from(op == IoOp::Flush))
                .sum::<u64>()
        };
        assert!(n("fs_direct_pages_written") > 0);
        assert_eq!(on(IoOp::Write, true), n("fs_direct_pages_written"));
        assert_eq!(on(IoOp::Flush, true), 2 * commits);
        assert_eq!(n("fs_flushes"), 2 * commits);
        // Every commit an fsync asked for had it waiting (and any other
        // fsync that found it running or being written).
        let w = n("fsync_commit_waits");
        assert!(w >= st("commits_fsync"), "{w} waits for {commits} commits");
        let fsyncs = rep.extra["app"]["fsyncs"].as_u64().unwrap();
        assert_eq!(fsyncs - w + n("fs_flushes"), n("flushes"));
        assert_eq!(on(IoOp::Flush, false), fsyncs - w);
        waits.push(w);
    }
    assert!(waits[1] < waits[0], "{waits:?}");
}

/// F2FS places data at writeback, in the order the cache writes it back
/// (`f2fs_write_data_pages` -> `f2fs_outplace_write_data`): two threads
/// append 4 KiB to files 3 and 4 in turn, 64 times each, then compute for
/// 40 s. The flusher's periodic pass writes each file's 64 dirty pages as
/// one run, and F2FS gives each run consecutive blocks of its warm data
/// log: two requests of 64 pages, file 4's right after file 3's. Placed at
/// `write()`, the files' blocks would alternate in the log and each file's
/// writeback would be 64 one-page requests.
#[test]
fn f2fs_places_data_in_the_order_the_cache_writes_it_back() {
    let mut c = crate::config::SsdConfig::default();
    c.nand.blocks_per_plane = 256;
    let s = c.validate().unwrap();
    let mut p = cfg(PersonalityKind::Fileserver, 0);
    p.files = Some(20);
    p.prealloc_percent = Some(0);
    let mut fb = FileBench::new(&p, &fsc(FsKind::F2fs), s.logical_bytes(), 1).unwrap();
    let mut q = VecDeque::new();
    assert!(fb.create(3, &mut q, 0) && fb.create(4, &mut q, 0));
    for _ in 0..64 {
        fb.write_at_end(3, 4096, &mut q, 1);
        fb.write_at_end(4, 4096, &mut q, 2);
    }
    // The application's writes name file pages, not device blocks.
    let writes: Vec<HostRequest> = q
        .iter()
        .map(|x| x.0)
        .filter(|r| r.op == IoOp::Write && r.tag != METADATA_INO)
        .collect();
    assert_eq!(writes.len(), 128);
    assert!(writes.iter().all(|r| file_of(r.lba / 8).is_some()));
    let (mut r, _, _) = *q.back().unwrap();
    r.op = IoOp::Read;
    let hog = CallExtras {
        cpu_cycles: 100_000_000_000,
        ..CallExtras::default()
    };
    q.push_back((r, false, hog));
    fb.pre = q;
    let (rep, sent) = run_cached(fb, &c);
    assert_eq!(
        rep.extra["file_system"]["data_blocks_allocated"].as_u64(),
        Some(128)
    );
    let data: Vec<(u64, u32)> = sent
        .borrow()
        .iter()
        .filter(|r| r.op == IoOp::Write && r.sectors == 64 * 8)
        .map(|r| (r.lba / 8, r.sectors / 8))
        .collect();
    assert_eq!(data.len(), 2, "{:?}", sent.borrow());
    assert_eq!(data[0].0 + 64, data[1].0, "{data:?}");
    // Nothing else wrote a data page: the rest are the file system's
    // dentry blocks and its own (node, checkpoint) writes.
    let one_page_writes = sent
        .borrow()
        .iter()
        .filter(|r| r.op == IoOp::Write && r.sectors == 8)
        .count();
    assert!(one_page_writes < 16, "{one_page_writes}");
}

/// NILFS2's data is written by segctord in its logs, not by the flusher
/// (`nilfs_writepages` writes nothing for `WB_SYNC_NONE`): two threads
/// append 4 KiB to files 3 and 4 in turn, 64 times each, then compute for
/// 40 s. segctord's timer construction (5 s) collects both files' dirty
/// blocks and places them at the log head, file after file, then its
/// metadata: two 64-page writes from the file system's thread, file 4's
/// right after file 3's, and the log's blocks after them; the flusher
/// writes nothing.
#[test]
fn nilfs2_writes_data_in_segctords_logs_not_by_the_flusher() {
    let mut c = crate::config::SsdConfig::default();
    c.nand.blocks_per_plane = 256;
    let s = c.validate().unwrap();
    let mut p = cfg(PersonalityKind::Fileserver, 0);
    p.files = Some(20);
    p.prealloc_percent = Some(0);
    let mut fb = FileBench::new(&p, &fsc(FsKind::Nilfs2), s.logical_bytes(), 1).unwrap();
    let daemon = fb.daemon_stream();
    let mut q = VecDeque::new();
    assert!(fb.create(3, &mut q, 0) && fb.create(4, &mut q, 0));
    for _ in 0..64 {
        fb.write_at_end(3, 4096, &mut q, 1);
        fb.write_at_end(4, 4096, &mut q, 2);
    }
    let (mut r, _, _) = *q.back().unwrap();
    r.op = IoOp::Read;
    let hog = CallExtras {
        cpu_cycles: 100_000_000_000,
        ..CallExtras::default()
    };
    q.push_back((r, false, hog));
    fb.pre = q;
    let (rep, sent) = run_cached(fb, &c);
    assert_eq!(
        rep.extra["file_system"]["data_blocks_allocated"].as_u64(),
        Some(128)
    );
    let sent = sent.borrow();
    let writes: Vec<&HostRequest> = sent.iter().filter(|r| r.op == IoOp::Write).collect();
    assert!(
        writes.iter().all(|r| r.stream == daemon),
        "a write not by segctord: {writes:?}"
    );
    let data: Vec<usize> = (0..writes.len())
        .filter(|&i| writes[i].sectors == 64 * 8)
        .collect();
    assert_eq!(data.len(), 2, "{writes:?}");
    let (a, b) = (writes[data[0]], writes[data[1]]);
    assert_eq!(a.lba + 64 * 8, b.lba, "{writes:?}");
    // The log's metadata follows its data on the device.
    let after = writes[data[1] + 1..]
        .iter()
        .filter(|r| r.lba > b.lba)
        .count();
    assert!(after > 0, "{writes:?}");
    assert!(rep.extra["file_system"]["commits_timer"].as_u64() >= Some(1));
}

/// F2FS builds its write bios by block, not by file page
/// (`f2fs_submit_page_write` merges a page whose block follows the bio's
/// last): a file's scattered dirty pages, placed one after another in the
/// warm data log at writeback, reach the device as one request. A thread
/// appends 64 pages to file 3, computes for 40 s (the flusher writes them
/// back), rewrites every other page, and computes again: the second
/// writeback is one 32-page request, not 32 one-page requests.
#[test]
fn f2fs_writes_scattered_dirty_pages_as_one_bio() {
    let mut c = crate::config::SsdConfig::default();
    c.nand.blocks_per_plane = 256;
    let s = c.validate().unwrap();
    let mut p = cfg(PersonalityKind::Fileserver, 0);
    p.files = Some(20);
    p.prealloc_percent = Some(0);
    let mut fb = FileBench::new(&p, &fsc(FsKind::F2fs), s.logical_bytes(), 1).unwrap();
    let mut q = VecDeque::new();
    assert!(fb.create(3, &mut q, 0));
    fb.write_at_end(3, 64 * 4096, &mut q, 1);
    let hog = CallExtras {
        cpu_cycles: 100_000_000_000,
        ..CallExtras::default()
    };
    let (mut r, _, _) = *q.back().unwrap();
    r.op = IoOp::Read;
    r.sectors = 8;
    q.push_back((r, false, hog));
    for k in (0..64).step_by(2) {
        fb.fs
            .write(3, k * 4096, 4096, SimTime::ZERO, &mut fb.calls)
            .unwrap();
        fb.emit(3, &mut q, 1);
    }
    q.push_back((r, false, hog));
    fb.pre = q;
    let (_, sent) = run_cached(fb, &c);
    // The pages written: the file's 64, its 32 rewritten, and the dentry
    // block the create dirtied (one page, written by the flusher first).
    let writes: Vec<u32> = sent
        .borrow()
        .iter()
        .filter(|r| r.op == IoOp::Write)
        .map(|r| r.sectors / 8)
        .collect();
    assert_eq!(writes, vec![1, 64, 32], "{:?}", sent.borrow());
}

/// On ext4, whose data pages are the file's (`fs::filemap`), a whole-file
/// read reads the file's blocks and nothing past its end, though the
/// device holds another file's blocks after them: the readahead window
/// of the 40 KiB read (`get_init_ra_size`: 32 pages) is clipped at
/// `i_size` (`page_cache_ra_unbounded`, via `do_page_cache_ra`), and its
/// pages are mapped to their blocks as `ext4_mpage_readpages` maps them.
/// Keyed by device page, the window ran 22 pages into file 4.
#[test]
fn a_whole_file_read_on_ext4_reads_nothing_past_its_end() {
    let mut c = crate::config::SsdConfig::default();
    c.nand.blocks_per_plane = 256;
    let s = c.validate().unwrap();
    let mut p = cfg(PersonalityKind::Fileserver, 0);
    p.files = Some(20);
    p.prealloc_percent = Some(0);
    let mut fb = FileBench::new(&p, &fsc(FsKind::Ext4), s.logical_bytes(), 1).unwrap();
    // Files 3 (10 blocks) and 4 (100 blocks), on disk before the run.
    let now = SimTime::ZERO;
    for (f, blocks) in [(3u32, 10u64), (4, 100)] {
        fb.fs.create(f, now, &mut fb.calls).unwrap();
        fb.fs
            .write(f, 0, blocks * BLOCK, now, &mut fb.calls)
            .unwrap();
        let mut placed = Vec::new();
        fb.fs.place(f, 0, blocks as u32, now, &mut placed);
        fb.calls.clear();
    }
    let loc = |fb: &FileBench, f: u32| {
        let mut v = Vec::new();
        fb.fs.locate(f, 0, 1000, &mut v);
        v
    };
    let (f3, f4) = (loc(&fb, 3), loc(&fb, 4));
    assert_eq!(f3.len(), 1, "{f3:?}");
    let (lo, hi) = (fb.base + f3[0].1, fb.base + f3[0].1 + 10);
    // File 4's blocks are next on the device.
    assert_eq!(fb.base + f4[0].1, hi, "{f3:?} {f4:?}");
    let mut q = VecDeque::new();
    fb.read_whole(3, &mut q, 0);
    assert_eq!(q.len(), 1);
    fb.pre = q;
    let (rep, sent) = run_cached(fb, &c);
    let reads: Vec<(u64, u64)> = sent
        .borrow()
        .iter()
        .filter(|r| r.op == IoOp::Read)
        .map(|r| (r.lba / 8, (r.lba + r.sectors as u64).div_ceil(8)))
        .collect();
    assert_eq!(reads, vec![(lo, hi)], "file 3 is {lo}..{hi}");
    let pc = &rep.extra["page_cache"];
    assert_eq!(pc["read_pages"].as_u64(), Some(10));
    assert_eq!(pc["readahead_pages"].as_u64(), Some(0));
}

/// randomwrite.f: one pre-allocated file written whole first, then one
/// thread's 8 KiB writes at uniformly drawn 8 KiB-aligned places in it,
/// buffered, nothing else; a second file is refused by name.
#[test]
fn randomwrite_overwrites_its_one_file_at_random() {
    let p = PersonalityConfig {
        file_size: Some(ssd_core::units::Size::mib(64)),
        ..cfg(PersonalityKind::Randomwrite, 4_000)
    };
    let mut fb = FileBench::new(&p, &fsc(FsKind::Raw), CAP, 5).unwrap();
    assert_eq!((fb.p.files, fb.threads.len(), fb.p.append), (1, 1, 8 << 10));
    assert_eq!(fb.memory(), 5 << 20);
    let pre = fb.stats.prealloc_calls as usize;
    let all = drain(&mut fb);
    let data: Vec<_> = all[pre..]
        .iter()
        .filter(|r| r.tag != METADATA_INO)
        .collect();
    assert_eq!(data.len(), 4_000);
    let mut at = std::collections::BTreeSet::new();
    let (lo, hi) = (
        all[..pre].iter().map(|r| r.lba).min().unwrap(),
        all[..pre]
            .iter()
            .map(|r| r.lba + r.sectors as u64)
            .max()
            .unwrap(),
    );
    for r in &data {
        assert_eq!(
            (r.op, r.sectors as u64 * SECTOR, r.stream),
            (IoOp::Write, 8 << 10, 0)
        );
        assert!(r.lba >= lo && r.lba + r.sectors as u64 <= hi);
        assert_eq!((r.lba - lo) % 16, 0, "8 KiB-aligned in the file");
        at.insert(r.lba);
    }
    // 4,000 draws over 8,192 places: about 3,100 distinct.
    assert!(at.len() > 2_800 && at.len() < 3_400, "{}", at.len());
    let two = PersonalityConfig {
        files: Some(2),
        ..p
    };
    let e = FileBench::new(&two, &fsc(FsKind::Raw), CAP, 5)
        .err()
        .unwrap();
    assert!(e.to_string().contains("personality.files"), "{e}");
}
