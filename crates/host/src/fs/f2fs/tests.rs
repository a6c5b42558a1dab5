//! Tests of `f2fs`.

use super::super::AnyFs;
use super::*;
use rand::{Rng, SeedableRng};
use ssd_core::rng::SimRng;

const S: u64 = 1_000_000_000;

fn t(s: u64) -> SimTime {
    SimTime(s * S)
}

fn fs_with(segs: u64, files: u64, gc: Dur) -> F2fs {
    let cfg = FsConfig {
        kind: FsKind::F2fs,
        gc_sleep_time: Some(gc),
        ..FsConfig::default()
    };
    cfg.validate().unwrap();
    F2fs::new(&cfg, segs * BLKS_PER_SEG + 7, DirTree::flat(files, 16)).unwrap()
}

/// The page cache writes back file `k`'s dirty pages, in runs, in file
/// order (the flusher's or an fsync's pass over the file).
fn wb(f: &mut F2fs, k: u32, now: SimTime) -> Vec<(u64, u64, u32)> {
    let dirty: Vec<u64> = f.inodes[k as usize]
        .dirty
        .iter()
        .enumerate()
        .filter(|(_, d)| **d)
        .map(|(i, _)| i as u64)
        .collect();
    let mut out = Vec::new();
    for (i, n) in runs(&dirty) {
        f.place(k, i, n as u32, now, &mut out);
    }
    out
}

/// An fsync: the page cache writes the file's data, then the file
/// system's part.
fn fsync(f: &mut F2fs, k: u32, now: SimTime) -> FsyncIo {
    wb(f, k, now);
    f.fsync(k, now)
}

#[test]
fn mkfs_layout_overprovision_and_node_arithmetic() {
    // 2 GiB: 1,024 segments; SIT 19 blocks, NAT 1,153 blocks (3
    // segments a copy), SSA 2 segments.
    let lay = Layout::new(1 << 19);
    assert_eq!(lay.cp_start, 512);
    assert_eq!(lay.sit_start, 3 * 512);
    assert_eq!(lay.sit_blocks, 19);
    assert_eq!(lay.nat_start, 5 * 512);
    assert_eq!(lay.nat_blocks, 1153);
    assert_eq!(lay.ssa_start, 11 * 512);
    assert_eq!(lay.main_start, 13 * 512);
    assert_eq!(lay.main_segs, 1011);
    let ovp = best_overprovision(1011);
    let (rsv, ovp_segs) = reserved_and_ovp(1011, ovp);
    assert!(ovp > 1.0 && ovp < 10.0, "{ovp}");
    assert!(rsv < ovp_segs && ovp_segs < 120, "{rsv} {ovp_segs}");
    // Small devices: 10 % to 95 % by 5.
    assert_eq!(best_overprovision(120), 15.0);
    assert_eq!(reserved_and_ovp(120, 15.0), (21, 35));
    assert_eq!(node_shape(923), (0, 0, false));
    assert_eq!(node_shape(924), (1, 0, false));
    assert_eq!(node_shape(923 + 2 * 1018), (2, 0, false));
    assert_eq!(node_shape(923 + 2 * 1018 + 1), (3, 1, false));
    assert_eq!(
        node_shape(923 + (2 + 2 * 1018 + 1) * 1018),
        (2 + 2 * 1018 + 1, 3, true)
    );
    assert_eq!(NodeKind::Direct(2).parent(), NodeKind::Indirect(0));
    assert_eq!(NodeKind::Direct(2038).parent(), NodeKind::Indirect(2));
    assert_eq!(NodeKind::Indirect(2).parent(), NodeKind::Dind);
    let f = fs_with(200, 64, DEFAULT_GC_SLEEP);
    f.check().unwrap();
    assert_eq!(f.cp_count, 1);
    // The directories' dentry blocks in the hot data log, their inodes
    // in the hot node log, checkpointed.
    assert!(f.dirty_nodes.is_empty() && f.pending.is_empty());
    assert_eq!(f.inodes.len(), 64 + 4);
    assert_eq!(f.stats().journal_blocks_written, 0);
    assert!(f.logs[HOT_DATA].seg.is_some() && f.logs[HOT_NODE].seg.is_some());
}

#[test]
fn out_of_place_updates_move_blocks_and_invalidate_the_old() {
    let mut f = fs_with(200, 64, DEFAULT_GC_SLEEP);
    let mut io = Vec::new();
    f.create(0, t(0), &mut io).unwrap();
    // The dentry block moved to the hot data log, as a metadata write.
    assert!(matches!(io[..], [FsCall::Meta { .. }]), "{io:?}");
    io.clear();
    f.write(0, 0, 1000 * BLOCK, t(0), &mut io).unwrap();
    f.check().unwrap();
    // The write reserves its blocks (`NEW_ADDR`, counted valid) and goes
    // to the page cache as the file's pages: no place yet.
    assert_eq!(
        io,
        [FsCall::Buffered {
            op: IoOp::Write,
            off: 0,
            bytes: 1000 * BLOCK
        }]
    );
    assert!(f.inodes[0].place.iter().all(|&b| b == NEW_ADDR));
    assert_eq!((f.new_blocks, f.unplaced), (1000, 1000));
    // 923 blocks in the inode, the rest in a direct node.
    assert_eq!(f.inodes[0].nodes.len(), 2);
    // A rewrite while dirty in the cache: still one block to place each.
    f.write(0, 0, 2 * BLOCK, t(0), &mut io).unwrap();
    assert_eq!((f.new_blocks, f.unplaced), (1000, 1000));
    // Writeback places them in the warm data log, one after the other in
    // the order written back, and a read finds them there.
    let out = wb(&mut f, 0, t(1));
    let warm = f.logs[WARM_DATA].seg.unwrap();
    assert_eq!(out.iter().map(|r| r.2 as u64).sum::<u64>(), 1000);
    assert_eq!(out[0].0, 0);
    for w in out.windows(2) {
        // Runs break only where the log took its next segment.
        assert_eq!(w[0].0 + w[0].2 as u64, w[1].0);
        assert_eq!(
            (w[0].1 + w[0].2 as u64) % BLKS_PER_SEG,
            f.lay.main_start % BLKS_PER_SEG
        );
    }
    let &(_, b, k) = out.last().unwrap();
    assert_eq!(f.seg_of(b + k as u64 - 1), warm);
    let mut at = Vec::new();
    f.locate(0, 0, 1000, &mut at);
    assert_eq!(at, out);
    assert_eq!((f.new_blocks, f.unplaced), (0, 0));
    assert_eq!(f.stats().data_blocks_allocated, 1000);
    assert_eq!(f.inodes[0].version[..3], [1, 1, 1]);
    f.fsync(0, t(1));
    // A rewrite keeps the old block valid until its writeback, which goes
    // to the log's next block and invalidates the old one.
    let old = f.inodes[0].place[5];
    let seg = f.seg_of(old);
    let v = f.segs[seg as usize].valid;
    f.write(0, 5 * BLOCK, 10, t(2), &mut io).unwrap();
    assert_eq!(f.inodes[0].place[5], old);
    assert!(f.owner.contains_key(&old));
    wb(&mut f, 0, t(2));
    let new = f.inodes[0].place[5];
    assert_ne!(new, old);
    assert!(!f.owner.contains_key(&old));
    if f.seg_of(new) != seg {
        assert_eq!(f.segs[seg as usize].valid, v - 1);
    }
    assert!(f.nat[f.inodes[0].nodes[&NodeKind::Inode] as usize].dirty);
    f.check().unwrap();
    f.check_versions().unwrap();
    // A file deleted with pages still dirty: they are never placed.
    f.write(0, 0, 1100 * BLOCK, t(3), &mut io).unwrap();
    assert_eq!((f.new_blocks, f.unplaced), (100, 1100));
    f.unlink(0, t(3), &mut io);
    f.check().unwrap();
    assert_eq!((f.new_blocks, f.unplaced), (0, 0));
    assert!(f.inodes[0].place.is_empty());
    let mut out = Vec::new();
    f.place(0, 0, 1100, t(4), &mut out);
    assert!(out.is_empty());
}

#[test]
fn after_fsync_the_log_holds_what_recovery_needs() {
    let mut f = fs_with(200, 64, DEFAULT_GC_SLEEP);
    let mut io = Vec::new();
    f.create(3, t(0), &mut io).unwrap();
    f.write(3, 0, 2000 * BLOCK, t(0), &mut io).unwrap();
    f.create(4, t(0), &mut io).unwrap();
    f.write(4, 0, 3 * BLOCK, t(0), &mut io).unwrap();
    let cps = f.cp_count;
    let s = fsync(&mut f, 3, t(1));
    // No checkpoint: the file's dnodes in the warm node log, no barrier
    // (the page cache's flush follows).
    assert_eq!(f.cp_count, cps);
    assert!(!s.barrier && !s.direct.is_empty());
    assert_eq!(f.stats().commits_fsync, 1);
    // Its data is placed; file 4's is still dirty, reserved.
    assert!(f.inodes[3].place.iter().all(|&b| b != NEW_ADDR));
    assert!(f.inodes[3].dirty.iter().all(|&d| !d));
    assert!(f.inodes[4].place.iter().all(|&b| b == NEW_ADDR));
    // Every dnode of the file is written, clean, in the warm node log.
    let written: BTreeSet<u64> = s
        .direct
        .iter()
        .flat_map(|&(b, n)| b..b + n as u64)
        .collect();
    let warm_node = f.logs[WARM_NODE].seg.unwrap();
    for (&k, &nid) in &f.inodes[3].nodes {
        let e = f.nat[nid as usize];
        assert!(!e.dirty && e.addr != NULL_ADDR, "{k:?}");
        assert!(written.contains(&e.addr));
        assert_eq!(f.seg_of(e.addr), warm_node);
    }
    // The inode and its two direct nodes (2,000 blocks: 923 + 1,077).
    assert_eq!(written.len(), 3);
    // Every dnode with the fsync mark, the inode last with (created
    // since the last checkpoint) the dentry mark.
    let ino = f.nat[f.inodes[3].nodes[&NodeKind::Inode] as usize];
    assert!(ino.fsync_mark && ino.dentry_mark);
    assert_eq!(
        s.direct.last().map(|&(b, n)| b + n as u64 - 1),
        Some(ino.addr)
    );
    let dn = f.nat[f.inodes[3].nodes[&NodeKind::Direct(0)] as usize];
    assert!(dn.fsync_mark && !dn.dentry_mark);
    // Nothing left for a second fsync.
    assert_eq!(f.fsync(3, t(2)), FsyncIo::default());
    f.check().unwrap();
    // After a checkpoint, a file's fsync carries no dentry mark.
    let mut io = Vec::new();
    f.tick(t(61), &mut io);
    assert_eq!(f.cp_count, cps + 1);
    f.write(3, 0, 10, t(62), &mut io).unwrap();
    fsync(&mut f, 3, t(62));
    let ino = f.nat[f.inodes[3].nodes[&NodeKind::Inode] as usize];
    assert!(ino.fsync_mark && !ino.dentry_mark);
}

#[test]
fn the_checkpoint_writes_nodes_nat_sit_ssa_and_its_pack() {
    let mut f = fs_with(200, 64, DEFAULT_GC_SLEEP);
    let mut io = Vec::new();
    assert_eq!(f.next_tick(), Some(t(30)));
    f.tick(t(60), &mut io);
    assert!(io.is_empty(), "nothing dirty: {io:?}");
    f.create(0, t(61), &mut io).unwrap();
    f.write(0, 0, 10 * BLOCK, t(61), &mut io).unwrap();
    io.clear();
    f.tick(t(120), &mut io);
    assert_eq!(f.stats().commits_timer, 1);
    assert_eq!(io.iter().filter(|c| **c == FsCall::Flush).count(), 2);
    assert_eq!(io[io.len() - 1], FsCall::Flush);
    let blocks: Vec<u64> = io
        .iter()
        .flat_map(|c| match *c {
            FsCall::Direct { block, blocks, .. } => (block..block + blocks as u64).collect(),
            _ => Vec::new(),
        })
        .collect();
    let lay = f.lay;
    let in_area = |lo: u64, hi: u64| blocks.iter().filter(|&&b| b >= lo && b < hi).count();
    // The file's inode, the directory's inode; their two NAT entries
    // and the few segments' SIT entries in the summaries' journals.
    assert_eq!(in_area(lay.main_start, u64::MAX), 2);
    assert_eq!(in_area(lay.nat_start, lay.ssa_start), 0);
    assert_eq!(in_area(lay.sit_start, lay.nat_start), 0);
    assert!(in_area(lay.ssa_start, lay.main_start) >= 2);
    // The second pack (the first was mkfs's), its last block after the
    // flush.
    assert_eq!(
        in_area(lay.cp_start, lay.sit_start),
        CP_PACK_BLOCKS as usize
    );
    assert_eq!(
        io[io.len() - 2],
        FsCall::Direct {
            op: IoOp::Write,
            block: lay.cp_start + 512 + CP_PACK_BLOCKS - 1,
            blocks: 1,
            sync: true,
        }
    );
    assert_eq!(f.stats().journal_blocks_written, blocks.len() as u64 - 2);
    assert!(f.pending.is_empty() && f.dirty_nodes.is_empty());
    f.check().unwrap();
    // Forty files and their data in segments all over: the NAT and SIT
    // entries overflow the journals and go to their blocks, into the
    // other copy.
    let mut io = Vec::new();
    for k in 1..41 {
        f.create(k, t(130), &mut io).unwrap();
        f.write(k, 0, 200 * BLOCK, t(130), &mut io).unwrap();
        wb(&mut f, k, t(130));
    }
    io.clear();
    f.tick(t(180), &mut io);
    let blocks: BTreeSet<u64> = io
        .iter()
        .flat_map(|c| match *c {
            FsCall::Direct { block, blocks, .. } => (block..block + blocks as u64).collect(),
            _ => Vec::new(),
        })
        .collect();
    let nat0 = (lay.nat_start..lay.nat_start + lay.nat_blocks)
        .filter(|b| blocks.contains(b))
        .count();
    let nat1 = (lay.nat_start + lay.nat_copy_span..lay.ssa_start)
        .filter(|b| blocks.contains(b))
        .count();
    assert!(nat0 + nat1 >= 1, "{io:?}");
    let sit = (lay.sit_start..lay.nat_start)
        .filter(|b| blocks.contains(b))
        .count();
    assert!(sit >= 1);
    // Each block into the copy other than the one it was last in.
    for (k, &c) in f.nat_copy.iter().enumerate() {
        let b = lay.nat_start + u64::from(c) * lay.nat_copy_span + k as u64;
        let other = lay.nat_start + u64::from(!c) * lay.nat_copy_span + k as u64;
        assert!(!blocks.contains(&other));
        if c {
            assert!(blocks.contains(&b));
        }
    }
    f.check().unwrap();
}

/// Segments made with known valid counts and times: greedy takes the
/// fewest valid; cost-benefit weighs age against utilisation.
#[test]
fn victim_selection_greedy_and_cost_benefit() {
    let mut f = fs_with(200, 64, DEFAULT_GC_SLEEP);
    let mut io = Vec::new();
    // Three files filling three segments each, written at 0, 100, 200 s.
    for (k, at) in [(0u32, 0u64), (1, 100), (2, 200)] {
        f.create(k, t(at), &mut io).unwrap();
        f.write(k, 0, 512 * BLOCK, t(at), &mut io).unwrap();
        fsync(&mut f, k, t(at));
    }
    let mut io = Vec::new();
    f.tick(t(260), &mut io);
    let seg = |f: &F2fs, k: u32| f.seg_of(f.inodes[k as usize].place[10]);
    let (s0, s1, s2) = (seg(&f, 0), seg(&f, 1), seg(&f, 2));
    assert!(s0 != s1 && s1 != s2);
    // Invalidate: s0 (oldest) keeps 400 valid, s1 100, s2 (newest) 50.
    let punch = |f: &mut F2fs, k: u32, n: u64, now: SimTime| {
        let mut io = Vec::new();
        f.write(k, 0, n * BLOCK, now, &mut io).unwrap();
        fsync(f, k, now);
    };
    let valid = |f: &F2fs, s: u64| f.segs[s as usize].valid;
    assert_eq!(
        (valid(&f, s0), valid(&f, s1), valid(&f, s2)),
        (512, 512, 512)
    );
    punch(&mut f, 0, 512 - 400, t(300));
    punch(&mut f, 1, 512 - 100, t(300));
    punch(&mut f, 2, 512 - 50, t(300));
    let mut io = Vec::new();
    f.tick(t(400), &mut io);
    f.check().unwrap();
    let (v0, v1, v2) = (valid(&f, s0), valid(&f, s1), valid(&f, s2));
    assert_eq!((v0, v1, v2), (400, 100, 50));
    assert_eq!(f.segs[s2 as usize].state, SegState::InUse);
    assert_eq!(f.greedy_victim(), Some(s2));
    // Cost-benefit, Linux's integer arithmetic over the candidates'
    // modification times.
    let cands: Vec<u64> = f.by_valid.iter().map(|&(_, s)| s).collect();
    let lo = cands
        .iter()
        .map(|&s| f.segs[s as usize].mtime.0)
        .min()
        .unwrap();
    let hi = cands
        .iter()
        .map(|&s| f.segs[s as usize].mtime.0)
        .max()
        .unwrap();
    let benefit = |s: u64| {
        let seg = f.segs[s as usize];
        let u = seg.valid as u64 * 100 / 512;
        let age = 100 - 100 * (seg.mtime.0 - lo) / (hi - lo);
        100 * (100 - u) * age / (100 + u)
    };
    let want = cands.iter().copied().max_by_key(|&s| {
        (
            benefit(s),
            std::cmp::Reverse(f.segs[s as usize].valid),
            std::cmp::Reverse(s),
        )
    });
    assert_eq!(f.cb_victim(), want);
    // The oldest segment (age 100) at 400 valid: 100 * 22 * 100 / 178
    // = 1,235; s1 (19 % valid, a third younger) 100 * 81 * age / 119.
    assert_eq!(benefit(s0), 1235);
    // Far younger segments with few valid blocks lose to an old one
    // with many: s2 was written last of the three.
    assert!(benefit(s2) < benefit(s1), "{} {}", benefit(s2), benefit(s1));
    // So cost-benefit takes s1 where greedy takes s2.
    assert_eq!(want, Some(s1));
    // A segment with blocks dirty in the page cache is never a victim.
    f.segs[s2 as usize].pending += 1;
    assert_ne!(f.greedy_victim(), Some(s2));
    assert_ne!(f.cb_victim(), Some(s2));
    f.segs[s2 as usize].pending -= 1;
}

/// Write, rewrite and delete on a small device: both cleaners run and
/// every block holds its latest version where it is mapped.
#[test]
fn the_cleaner_never_loses_live_data() {
    // 160 segments: about 120 main, 35 overprovisioned.
    // The background cleaner every 20 s does not keep up: the
    // foreground one runs too.
    let mut f = fs_with(160, 64, Dur::from_ms(20_000));
    let mut io = Vec::new();
    let mut rng = SimRng::seed_from_u64(5);
    let mut exists = [false; 48];
    let mut failed = 0;
    let mut tick_reads = 0;
    for step in 0..6000u64 {
        let now = SimTime(step * S / 2);
        let k = rng.gen_range(0..48usize);
        let r = rng.gen_range(0..10);
        if !exists[k] {
            if f.create(k as u32, now, &mut io).is_ok() {
                exists[k] = true;
            }
        } else if r == 0 && rng.gen_range(0..4) == 0 {
            f.unlink(k as u32, now, &mut io);
            exists[k] = false;
        } else if r < 4 && f.valid_total * 10 < f.user_blocks * 8 {
            // Appends up to 80 % of the user blocks, then rewrites.

            let size = f.size(k as u32);
            let len = rng.gen_range(1..200 * BLOCK);
            if f.write(k as u32, size, len, now, &mut io).is_err() {
                failed += 1;
            }
        } else if f.size(k as u32) > 0 {
            let size = f.size(k as u32);
            let off = rng.gen_range(0..size);
            let len = rng.gen_range(1..=size - off).min(64 * BLOCK);
            if f.write(k as u32, off, len, now, &mut io).is_err() {
                failed += 1;
            }
        }
        if r == 9 && exists[k] {
            fsync(&mut f, k as u32, now);
        } else if r >= 7 && exists[k] {
            // The flusher writes a file back.
            wb(&mut f, k as u32, now);
        }
        if f.next_tick().is_some_and(|t| t <= now) {
            let from = io.len();
            f.tick(now, &mut io);
            for c in &io[from..] {
                match c {
                    FsCall::Data { .. } | FsCall::Buffered { .. } | FsCall::Meta { .. } => {
                        panic!("{c:?} from tick")
                    }
                    FsCall::Direct {
                        op: IoOp::Read,
                        blocks,
                        ..
                    } => tick_reads += *blocks as u64,
                    _ => {}
                }
            }
        }
        if step % 100 == 0 {
            f.check().unwrap_or_else(|e| panic!("step {step}: {e}"));
            f.check_versions()
                .unwrap_or_else(|e| panic!("step {step}: {e}"));
        }
        io.clear();
    }
    f.check().unwrap();
    f.check_versions().unwrap();
    let st = f.stats();
    assert!(tick_reads > 0, "background GC never ran: {st:?}");
    assert!(
        st.cleaner_blocks_read > tick_reads && st.cleaner_blocks_written == st.cleaner_blocks_read,
        "foreground GC never ran: {tick_reads} {st:?}"
    );
    assert!(st.commits_timer > 0);
    let live: usize = f.inodes.iter().map(|x| x.place.len()).sum();
    assert!(
        failed < 300,
        "{failed} writes refused, {live} live data blocks, {st:?}"
    );
}

#[test]
fn a_full_file_system_refuses_writes_without_panicking() {
    let mut f = fs_with(100, 8, DEFAULT_GC_SLEEP);
    let mut io = Vec::new();
    f.create(0, t(0), &mut io).unwrap();
    let mut n = 0;
    while f.write(0, f.size(0), 64 * BLOCK, t(n), &mut io).is_ok() {
        wb(&mut f, 0, t(n));
        n += 1;
        assert!(n < 10_000);
    }
    f.check().unwrap();
    // The user blocks are full: nothing more, but rewrites (the cleaner
    // makes room for them), fsync and checkpoints still work.
    assert!(f.valid_total + 64 > f.user_blocks);
    for i in 0..200 {
        f.write(0, (i * 37 % 100) * BLOCK, 8 * BLOCK, t(n + i), &mut io)
            .unwrap();
        wb(&mut f, 0, t(n + i));
    }
    fsync(&mut f, 0, t(n + 300));
    f.tick(t(n + 400), &mut io);
    f.check().unwrap();
    f.check_versions().unwrap();
    f.unlink(0, t(n + 500), &mut io);
    f.check().unwrap();
    f.create(1, t(n + 501), &mut io).unwrap();
    f.write(1, 0, 100 * BLOCK, t(n + 502), &mut io).unwrap();
    f.check().unwrap();
}

#[test]
fn knobs_are_checked_and_refused_for_other_kinds() {
    let c = FsConfig {
        kind: FsKind::Nilfs2,
        cp_interval: Some(Dur(1)),
        ..FsConfig::default()
    };
    let e = c.validate().unwrap_err().to_string();
    assert!(e.contains("fs.cp_interval"), "{e}");
    let c = FsConfig {
        kind: FsKind::F2fs,
        protection_period: Some(Dur(1)),
        ..FsConfig::default()
    };
    assert!(c.validate().is_err());
    let c = FsConfig {
        kind: FsKind::F2fs,
        overprovision: Some(0.0),
        ..FsConfig::default()
    };
    assert!(c
        .validate()
        .unwrap_err()
        .to_string()
        .contains("fs.overprovision"));
    let c = FsConfig {
        kind: FsKind::F2fs,
        overprovision: Some(20.0),
        gc_sleep_time: Some(Dur::from_ms(1000)),
        ..FsConfig::default()
    };
    c.validate().unwrap();
    let AnyFs::F2fs(f) = c.build(1 << 18, 100, 10, 1).unwrap() else {
        panic!("not f2fs")
    };
    assert_eq!(f.reserved, 2 * 6 + 6);
    // Too small a device is refused, not a panic.
    assert!(c.build(20 * 512, 10, 10, 1).is_err());
}

/// A zoned drive as the file system's writes reach it: every write to a
/// sequential zone at its write pointer, within its capacity, none
/// crossing a zone's start; a reset rewinds the pointer.
struct Zones {
    zb: u64,
    cap: u64,
    conv: u64,
    wp: Vec<u64>,
    resets: u64,
}

impl Zones {
    fn write(&mut self, b: u64, n: u64) {
        let z = b / self.zb;
        assert_eq!(
            (b + n - 1) / self.zb,
            z,
            "write of {n} at {b} crosses a zone"
        );
        if z < self.conv {
            return;
        }
        let off = b - z * self.zb;
        assert_eq!(
            off, self.wp[z as usize],
            "write at {b}: zone {z}'s write pointer is elsewhere"
        );
        self.wp[z as usize] += n;
        assert!(
            self.wp[z as usize] <= self.cap,
            "zone {z} written past its capacity"
        );
    }
    fn reset(&mut self, b: u64) {
        assert_eq!(b % self.zb, 0, "reset at {b}, not a zone's start");
        let z = b / self.zb;
        assert!(z >= self.conv, "reset of conventional zone {z}");
        self.wp[z as usize] = 0;
        self.resets += 1;
    }
    /// Zones written part way (open).
    fn open(&self) -> usize {
        self.wp.iter().filter(|&&w| w > 0 && w < self.cap).count()
    }
}

fn zoned_fs(files: u64, gc: Dur) -> (F2fs, Zones) {
    let z = ZonedDev {
        zone_blocks: 1024,
        cap_blocks: 1000,
        zones: 64,
        conventional: 5,
        max_open: 14,
        max_active: 14,
    };
    let cfg = FsConfig {
        kind: FsKind::F2fs,
        gc_sleep_time: Some(gc),
        zoned: Some(z),
        ..FsConfig::default()
    };
    let f = F2fs::new(&cfg, z.zones * z.zone_blocks, DirTree::flat(files, 16)).unwrap();
    let zones = Zones {
        zb: 1024,
        cap: 1000,
        conv: 5,
        wp: vec![0; 64],
        resets: 0,
    };
    (f, zones)
}

/// The file system's thread runs its rounds until it has none left
/// (`commit_io`, the I/O, `commit_done`), its writes reaching the zones.
fn daemon(f: &mut F2fs, zones: &mut Zones, now: SimTime) -> u64 {
    let mut rounds = 0;
    while f.work_pending() {
        rounds += 1;
        assert!(rounds < 1000, "the file system's thread never settles");
        if let Some(io) = f.commit_io(now) {
            for &(b, n) in &io.direct {
                zones.write(b, n as u64);
            }
            for &b in &io.resets {
                zones.reset(b);
            }
        }
        f.commit_done(now);
    }
    rounds
}

#[test]
fn zoned_mode_writes_every_zone_in_order_and_resets_the_zones_it_cleans() {
    // `f2fs_prepare_super_block` on a zoned drive: the metadata (4,096
    // blocks) in the first 4 zones, all conventional; the main area is
    // the other 60 zones, a section each, the first a conventional zone.
    let (mut f, mut zones) = zoned_fs(64, Dur::from_ms(20_000));
    assert_eq!(f.lay.main_start, 4 * 1024);
    assert_eq!(f.lay.main_segs, 60);
    assert_eq!(f.zoned.unwrap().first_seq, 1);
    assert_eq!(f.user_blocks % 1000, 0, "user blocks in zone capacities");
    let mut io = Vec::new();
    let mut rng = SimRng::seed_from_u64(7);
    let mut exists = [false; 48];
    let mut waits = 0;
    for step in 0..6000u64 {
        let now = SimTime(step * S / 2);
        let k = rng.gen_range(0..48usize);
        let r = rng.gen_range(0..10);
        if !exists[k] {
            exists[k] = f.create(k as u32, now, &mut io).is_ok();
        } else if r == 0 && rng.gen_range(0..4) == 0 {
            f.unlink(k as u32, now, &mut io);
            exists[k] = false;
        } else if r < 4 && f.valid_total * 10 < f.user_blocks * 8 {
            let size = f.size(k as u32);
            let _ = f.write(k as u32, size, rng.gen_range(1..200 * BLOCK), now, &mut io);
        } else if f.size(k as u32) > 0 {
            let size = f.size(k as u32);
            let off = rng.gen_range(0..size);
            let len = rng.gen_range(1..=size - off).min(64 * BLOCK);
            let _ = f.write(k as u32, off, len, now, &mut io);
        }
        if f.next_tick().is_some_and(|t| t <= now) {
            f.tick(now, &mut io);
        }
        // Zoned, a call's own I/O is only its data: the rest is the
        // thread's, which the call may wait for.
        for c in io.drain(..) {
            match c {
                FsCall::Buffered { .. } | FsCall::Commit => {}
                FsCall::Wait { tid } => {
                    waits += 1;
                    daemon(&mut f, &mut zones, now);
                    assert!(f.committed(tid), "a writer waits for ever");
                }
                c => panic!("step {step}: {c:?} in zoned mode"),
            }
        }
        daemon(&mut f, &mut zones, now);
        if exists[k] && r >= 7 {
            // The flusher, or an fsync: the data where it is placed, then
            // the nodes.
            for (_, b, n) in wb(&mut f, k as u32, now) {
                zones.write(b, n as u64);
            }
            if r == 9 {
                for (b, n) in f.fsync(k as u32, now).direct {
                    zones.write(b, n as u64);
                }
            }
            daemon(&mut f, &mut zones, now);
        }
        // The six logs' zones are the only ones written part way.
        assert!(
            zones.open() <= 6,
            "step {step}: {} zones open",
            zones.open()
        );
        if step % 100 == 0 {
            f.check().unwrap_or_else(|e| panic!("step {step}: {e}"));
            f.check_versions()
                .unwrap_or_else(|e| panic!("step {step}: {e}"));
        }
    }
    f.check().unwrap();
    f.check_versions().unwrap();
    let st = f.stats();
    assert!(waits > 0, "no writer waited for the cleaning");
    assert!(st.cleaner_blocks_written > 0, "{st:?}");
    assert!(zones.resets > 0, "no zone was reset");
    assert!(st.commits_timer > 0);
}

#[test]
fn zoned_mode_refuses_what_linux_refuses() {
    let base = ZonedDev {
        zone_blocks: 1024,
        cap_blocks: 1024,
        zones: 64,
        conventional: 5,
        max_open: 0,
        max_active: 0,
    };
    let mk = |z: ZonedDev| {
        let cfg = FsConfig {
            kind: FsKind::F2fs,
            zoned: Some(z),
            ..FsConfig::default()
        };
        F2fs::new(&cfg, z.zones * z.zone_blocks, DirTree::flat(8, 16)).err()
    };
    assert!(mk(base).is_none());
    let e = |z, field: &str| {
        let err = mk(z).unwrap_or_else(|| panic!("{z:?} accepted"));
        assert!(err.to_string().contains(field), "{err}");
    };
    // The metadata needs 4 conventional zones (`f2fs_prepare_super_block`).
    e(
        ZonedDev {
            conventional: 3,
            ..base
        },
        "ftl.conventional_zones",
    );
    // Six logs need six open zones (`init_blkz_info`).
    e(
        ZonedDev {
            max_open: 5,
            ..base
        },
        "ftl.max_open_zones",
    );
    e(
        ZonedDev {
            max_active: 4,
            ..base
        },
        "ftl.max_active_zones",
    );
    // A section is whole 2 MiB segments.
    e(
        ZonedDev {
            zone_blocks: 768,
            cap_blocks: 768,
            ..base
        },
        "ftl.zone_blocks",
    );
    // Other file systems write in place; aging has no I/O.
    let build = |kind, age: f64| {
        FsConfig {
            kind,
            zoned: Some(base),
            age_fullness: age,
            ..FsConfig::default()
        }
        .build(base.zones * base.zone_blocks, 8, 20, 1)
        .err()
        .map(|e| e.to_string())
    };
    assert!(build(FsKind::Ext4, 0.0).is_some_and(|m| m.contains("fs.kind")));
    assert!(build(FsKind::F2fs, 0.5).is_some_and(|m| m.contains("fs.age_fullness")));
    assert!(build(FsKind::F2fs, 0.0).is_none());
}

/// `discard` (Linux's default): the segments a checkpoint frees are
/// discarded by the file system's thread (`f2fs_clear_prefree_segments`
/// queues them, `issue_discard_thread` sends them), a run of contiguous
/// ones as one trim; a segment taken again before then is not
/// (`__punch_discard_cmd`); `nodiscard` sends none.
#[test]
fn freed_segments_are_discarded_unless_nodiscard() {
    let trims = |discard: Option<bool>| {
        let cfg = FsConfig {
            kind: FsKind::F2fs,
            discard,
            ..FsConfig::default()
        };
        let mut f = F2fs::new(&cfg, 200 * BLKS_PER_SEG + 7, DirTree::flat(8, 16)).unwrap();
        let mut io = Vec::new();
        f.create(0, t(0), &mut io).unwrap();
        // Three segments of data, then all of it rewritten: the first
        // three segments' blocks all die.
        f.write(0, 0, 3 * BLKS_PER_SEG * BLOCK, t(1), &mut io)
            .unwrap();
        let first: Vec<u64> = wb(&mut f, 0, t(1)).iter().map(|r| r.1).collect();
        f.write(0, 0, 3 * BLKS_PER_SEG * BLOCK, t(2), &mut io)
            .unwrap();
        wb(&mut f, 0, t(2));
        io.clear();
        // The timer's checkpoint frees them; the same tick discards them.
        f.tick(t(61), &mut io);
        let got: Vec<(u64, u32)> = io
            .iter()
            .filter_map(|c| match *c {
                FsCall::Direct {
                    op: IoOp::Trim,
                    block,
                    blocks,
                    ..
                } => Some((block, blocks)),
                _ => None,
            })
            .collect();
        f.check().unwrap();
        (first, got)
    };
    let (first, got) = trims(None);
    assert_eq!(got, vec![(first[0], 3 * BLKS_PER_SEG as u32)], "{first:?}");
    assert!(trims(Some(false)).1.is_empty());
}
