//! Property tests of every modelled file system: random sequences of
//! operations, then fsck, and the calls checked against what each operation
//! must do.

use super::*;
use proptest::prelude::*;

#[derive(Clone, Debug)]
enum Op {
    Create(u32),
    Unlink(u32),
    /// Append this many bytes.
    Append(u32, u32),
    /// Write this many bytes at this share (per 65,536) of the file's
    /// size: an overwrite in place, or past the end.
    Overwrite(u32, u16, u32),
    /// Read the whole file.
    Read(u32),
    Fsync(u32),
    /// Let this many milliseconds pass, then run the background work.
    Tick(u32),
    /// The page cache writes the file's pages back (placed then by a file
    /// system that places data at writeback).
    Writeback(u32),
}

fn op() -> impl Strategy<Value = Op> {
    let f = 0u32..24;
    prop_oneof![
        3 => f.clone().prop_map(Op::Create),
        1 => f.clone().prop_map(Op::Unlink),
        4 => (f.clone(), 1u32..300_000).prop_map(|(f, n)| Op::Append(f, n)),
        2 => (f.clone(), any::<u16>(), 1u32..40_000).prop_map(|(f, at, n)| Op::Overwrite(f, at, n)),
        1 => f.clone().prop_map(Op::Read),
        2 => f.clone().prop_map(Op::Fsync),
        1 => (1u32..8_000).prop_map(Op::Tick),
        2 => f.clone().prop_map(Op::Writeback),
    ]
}

/// Every block a call names lies inside the file system.
fn inside(fs: &AnyFs, io: &[FsCall]) -> Result<(), String> {
    let end = fs.blocks() * BLOCK;
    for c in io {
        let ok = match *c {
            FsCall::Data { at, bytes, .. } => bytes > 0 && at + bytes <= end,
            FsCall::Buffered { bytes, .. } => bytes > 0,
            FsCall::Meta { block } => block < fs.blocks(),
            FsCall::Direct { block, blocks, .. } => {
                blocks > 0 && block + blocks as u64 <= fs.blocks()
            }
            FsCall::Flush | FsCall::Commit | FsCall::Wait { .. } => true,
        };
        if !ok {
            return Err(format!("{c:?} outside {} blocks", fs.blocks()));
        }
    }
    Ok(())
}

/// The page cache writes back every block of file `f` (as after an
/// fsync): a file system that places data at writeback places those it
/// has to write, in file order, inside itself, each block once, none past
/// the file, and finds them there.
fn writeback(fs: &mut AnyFs, f: u32, now: SimTime) -> Result<(), TestCaseError> {
    let n = fs.size(f).div_ceil(BLOCK);
    let mut out = Vec::new();
    fs.place(f, 0, n as u32, now, &mut out);
    if !fs.places_at_writeback() {
        prop_assert!(out.is_empty());
        return Ok(());
    }
    let mut next = 0;
    for &(i, b, k) in &out {
        prop_assert!(
            i >= next && k > 0 && i + k as u64 <= n,
            "{out:?} for {n} blocks"
        );
        prop_assert!(
            b + k as u64 <= fs.blocks(),
            "{out:?} outside the file system"
        );
        next = i + k as u64;
    }
    // Written back: where a read finds the blocks now.
    for &(i, b, k) in &out {
        let mut at = Vec::new();
        fs.locate(f, i, k, &mut at);
        prop_assert_eq!(at, vec![(i, b, k)], "located where placed");
    }
    Ok(())
}

/// The commits the file system's thread is asked for, written one after
/// the other, each inside the file system.
fn commits(fs: &mut AnyFs, now: SimTime) -> Result<(), TestCaseError> {
    for _ in 0..4 {
        let Some(c) = fs.commit_io(now) else {
            return Ok(());
        };
        for &(b, n) in &c.direct {
            prop_assert!(n > 0 && b + n as u64 <= fs.blocks());
        }
        ordered(fs, &c.ordered, now)?;
        fs.commit_done(now);
    }
    Err(TestCaseError::fail("a commit asked for more commits"))
}

/// The page cache writes the files a commit or fsync hands it
/// ([`FsyncIo::ordered`]): every block it has to write of each.
fn ordered(fs: &mut AnyFs, files: &[u32], now: SimTime) -> Result<(), TestCaseError> {
    for &f in files {
        writeback(fs, f, now)?;
    }
    Ok(())
}

fn data_bytes(io: &[FsCall], want: IoOp) -> u64 {
    io.iter()
        .map(|c| match *c {
            FsCall::Data { op, bytes, .. } | FsCall::Buffered { op, bytes, .. } if op == want => {
                bytes
            }
            _ => 0,
        })
        .sum()
}

fn run(kind: FsKind, ops: &[Op]) -> Result<(), TestCaseError> {
    let cfg = FsConfig {
        kind,
        ..FsConfig::default()
    };
    // 2 GiB, 24 files in directories of 5.
    let mut fs = cfg.build(1 << 19, 24, 5, 1).unwrap();
    let mut sizes = [0u64; 24];
    let mut exists = [false; 24];
    let mut now = SimTime::ZERO;
    for o in ops {
        let mut io = Vec::new();
        match *o {
            Op::Create(f) if !exists[f as usize] && fs.create(f, now, &mut io).is_ok() => {
                exists[f as usize] = true;
                sizes[f as usize] = 0;
            }
            Op::Unlink(f) if exists[f as usize] => {
                fs.unlink(f, now, &mut io);
                exists[f as usize] = false;
                sizes[f as usize] = 0;
            }
            Op::Append(f, n) if exists[f as usize] => {
                let off = sizes[f as usize];
                if fs.write(f, off, n as u64, now, &mut io).is_ok() {
                    sizes[f as usize] += n as u64;
                    // The written bytes go through the cache as data, but
                    // for a ReiserFS tail, packed into its leaf (a metadata
                    // block): at most the last block's bytes.
                    let w = data_bytes(&io, IoOp::Write);
                    let leaf = io.iter().any(|c| matches!(c, FsCall::Meta { .. }));
                    if kind == FsKind::Reiserfs {
                        prop_assert!(
                            w >= n as u64 || leaf && w + BLOCK > n as u64,
                            "{kind}: {w} bytes for {n}"
                        );
                    } else {
                        prop_assert!(w >= n as u64, "{kind}: {w} bytes for {n}");
                    }
                }
            }
            Op::Overwrite(f, at, n) if exists[f as usize] => {
                let size = sizes[f as usize];
                let off = size * at as u64 / 65_536;
                if fs.write(f, off, n as u64, now, &mut io).is_ok() {
                    sizes[f as usize] = size.max(off + n as u64);
                    let w = data_bytes(&io, IoOp::Write);
                    let leaf = io.iter().any(|c| matches!(c, FsCall::Meta { .. }));
                    prop_assert!(
                        w >= n as u64 || kind == FsKind::Reiserfs && leaf,
                        "{kind}: {w} bytes for {n} at {off} of {size}"
                    );
                }
            }
            Op::Read(f) if exists[f as usize] => {
                let size = sizes[f as usize];
                fs.read(f, 0, size, now, &mut io);
                let r = data_bytes(&io, IoOp::Read);
                // A ReiserFS tail is read from its (resident) leaf.
                let slack = if kind == FsKind::Reiserfs {
                    BLOCK - 1
                } else {
                    0
                };
                prop_assert!(r + slack >= size, "{kind}: read {r} bytes of {size}");
            }
            Op::Writeback(f) if exists[f as usize] => writeback(&mut fs, f, now)?,
            Op::Fsync(f) if exists[f as usize] => {
                // The page cache writes the file's data first.
                writeback(&mut fs, f, now)?;
                let s = fs.fsync(f, now);
                for &(b, n) in &s.direct {
                    prop_assert!(n > 0 && b + n as u64 <= fs.blocks());
                }
                ordered(&mut fs, &s.ordered, now)?;
                // The file system's thread writes what was asked of it; the
                // fsync's transaction is then on disk.
                commits(&mut fs, now)?;
                if let Some(w) = s.wait {
                    prop_assert!(fs.committed(w.tid), "{kind}: {w:?} not committed");
                }
                let again = fs.fsync(f, now);
                // Once committed, nothing is left for a second fsync.
                prop_assert!(
                    again.direct.is_empty() && again.wait.is_none(),
                    "{kind}: a second fsync writes {:?} or waits {:?}",
                    again.direct,
                    again.wait
                );
            }
            Op::Tick(ms) => {
                now = SimTime(now.0 + ms as u64 * 1_000_000);
                fs.tick(now, &mut io);
                prop_assert!(
                    !io.iter().any(|c| c.is_data()),
                    "{kind}: background work moved file data"
                );
                if io.contains(&FsCall::Commit) {
                    commits(&mut fs, now)?;
                }
            }
            _ => {}
        }
        inside(&fs, &io).map_err(TestCaseError::fail)?;
        for f in 0..24 {
            prop_assert_eq!(fs.exists(f), exists[f as usize], "{} file {}", kind, f);
            prop_assert_eq!(fs.size(f), sizes[f as usize], "{} file {}", kind, f);
        }
    }
    fs.check()
        .map_err(|e| TestCaseError::fail(format!("{kind}: fsck: {e}")))?;
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    /// fsck after random operation sequences, on every modelled file
    /// system; sizes as written, calls inside the file system, a second
    /// fsync with nothing to write, no data moved in the background.
    #[test]
    fn fsck_holds_after_random_operations(ops in proptest::collection::vec(op(), 1..120)) {
        for kind in FsKind::ALL {
            run(kind, &ops)?;
        }
    }
}
