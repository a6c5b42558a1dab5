//! Output files that are never left half-written: [`write_atomic`] writes to a
//! temporary file in the target's directory and renames it into place, so an
//! interrupted or failed write leaves either the old file or the complete new
//! one; [`PendingFile`] does the same for a file written over a whole run.
//! [`same_file`] tells whether two paths name one file (an output that would
//! replace an input).

use std::fs::{self, File, OpenOptions};
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// Write `path` through `fill`, atomically where `path` is (or would be) a
/// regular file: the data goes to a temporary file beside it (same directory,
/// so the rename cannot cross file systems), which is flushed, synced and
/// renamed over `path`; on any error it is removed and `path` is untouched.
/// A symbolic link is followed (its target is replaced, the link kept); the
/// new file takes the old one's permissions. A path that exists and is not a
/// regular file (`/dev/stdout`, `/dev/full`, a FIFO) is written in place, and
/// its write errors are returned like any other.
pub fn write_atomic<T>(
    path: &Path,
    fill: impl FnOnce(&mut dyn Write) -> io::Result<T>,
) -> io::Result<T> {
    write_atomic_with(path, |e| e, fill)
}

/// [`write_atomic`] for a `fill` with its own error type; `io_err` turns the
/// I/O errors of creating, flushing and renaming the file into it.
pub fn write_atomic_with<T, E>(
    path: &Path,
    io_err: impl Fn(io::Error) -> E,
    fill: impl FnOnce(&mut dyn Write) -> Result<T, E>,
) -> Result<T, E> {
    let pending = PendingFile::create(path).map_err(&io_err)?;
    let mut w = BufWriter::new(pending.writer().map_err(&io_err)?);
    let v = fill(&mut w)?;
    w.flush().map_err(&io_err)?;
    drop(w);
    pending.commit().map_err(&io_err)?;
    Ok(v)
}

/// An output file written over a longer time (a trace recorded during a
/// run) that appears only once complete: [`write_atomic`]'s temporary file,
/// with the write and the rename apart. [`PendingFile::commit`] renames it
/// over the target; dropping it uncommitted (an error anywhere in between)
/// removes the temporary file and leaves the target as it was. A target that
/// exists and is not a regular file (`/dev/stdout`, `/dev/full`, a FIFO) is
/// written in place, as [`write_atomic`] does.
#[derive(Debug)]
pub struct PendingFile {
    file: File,
    /// The temporary file and the target it replaces; `None` when written
    /// in place or once committed.
    rename: Option<(PathBuf, PathBuf)>,
    /// The old target's permissions, which the new file takes.
    perms: Option<fs::Permissions>,
}

impl PendingFile {
    /// The temporary file beside `path` (its link target, for a symbolic
    /// link), created exclusively; `path` itself is not touched. A directory
    /// is an error.
    pub fn create(path: &Path) -> io::Result<PendingFile> {
        let target = match fs::canonicalize(path) {
            Ok(real) => real,
            // Not there yet (or a dangling link): create it where it is named.
            Err(_) => path.to_path_buf(),
        };
        let old = fs::metadata(&target).ok();
        if let Some(m) = &old {
            if m.is_dir() {
                return Err(io::Error::other("is a directory, not a file"));
            }
            if !m.is_file() {
                let file = OpenOptions::new().write(true).open(&target)?;
                return Ok(PendingFile {
                    file,
                    rename: None,
                    perms: None,
                });
            }
        }
        let (tmp, file) = create_temp(&target)?;
        Ok(PendingFile {
            file,
            rename: Some((tmp, target)),
            perms: old.map(|m| m.permissions()),
        })
    }

    /// A handle to write the file through (unbuffered: wrap it in a
    /// `BufWriter`, and flush that before [`PendingFile::commit`]).
    pub fn writer(&self) -> io::Result<File> {
        self.file.try_clone()
    }

    /// The file as written so far becomes the target: synced, given the old
    /// target's permissions, renamed over it. On an error the temporary file
    /// is removed and the target is untouched.
    pub fn commit(mut self) -> io::Result<()> {
        let Some((tmp, target)) = self.rename.take() else {
            return Ok(());
        };
        let res = (|| {
            if let Some(p) = &self.perms {
                self.file.set_permissions(p.clone())?;
            }
            self.file.sync_all()?;
            fs::rename(&tmp, &target)
        })();
        if res.is_err() {
            let _ = fs::remove_file(&tmp);
        }
        res
    }
}

impl Drop for PendingFile {
    fn drop(&mut self) {
        if let Some((tmp, _)) = self.rename.take() {
            let _ = fs::remove_file(tmp);
        }
    }
}

/// [`write_atomic`] of a byte string.
pub fn write_bytes_atomic(path: &Path, bytes: &[u8]) -> io::Result<()> {
    write_atomic(path, |w| w.write_all(bytes))
}

/// A new file `.NAME.tmp-PID-N` beside `target`, created exclusively.
fn create_temp(target: &Path) -> io::Result<(PathBuf, File)> {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let dir = match target.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let name = target
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "out".into());
    loop {
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let p = dir.join(format!(".{name}.tmp-{}-{n}", std::process::id()));
        match OpenOptions::new().write(true).create_new(true).open(&p) {
            Ok(f) => return Ok((p, f)),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
}

/// Whether `a` and `b` name the same file: for existing files, the same
/// device and inode (hard links, symbolic links, `./` and `..` spellings all
/// seen through); otherwise the same canonical directory and file name (two
/// spellings of one output that does not exist yet).
pub fn same_file(a: &Path, b: &Path) -> bool {
    if let (Ok(ma), Ok(mb)) = (fs::metadata(a), fs::metadata(b)) {
        #[cfg(unix)]
        {
            use std::os::unix::fs::MetadataExt;
            return ma.dev() == mb.dev() && ma.ino() == mb.ino();
        }
        #[cfg(not(unix))]
        {
            let _ = (ma, mb);
        }
    }
    match (resolve(a), resolve(b)) {
        (Some(x), Some(y)) => x == y,
        _ => false,
    }
}

/// `p` canonicalized, or its canonical directory joined with its name.
fn resolve(p: &Path) -> Option<PathBuf> {
    if let Ok(c) = fs::canonicalize(p) {
        return Some(c);
    }
    let dir = match p.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    Some(fs::canonicalize(dir).ok()?.join(p.file_name()?))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("ssdsim-outfile-{}-{name}", std::process::id()));
        let _ = fs::remove_dir_all(&d);
        fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn a_failed_write_leaves_the_old_file_and_no_temporary() {
        let d = scratch("fail");
        let p = d.join("out.txt");
        fs::write(&p, "old").unwrap();
        let r = write_atomic(&p, |w| {
            w.write_all(b"half")?;
            Err::<(), _>(io::Error::other("boom"))
        });
        assert!(r.is_err());
        assert_eq!(fs::read_to_string(&p).unwrap(), "old");
        assert_eq!(fs::read_dir(&d).unwrap().count(), 1);
        write_bytes_atomic(&p, b"new").unwrap();
        assert_eq!(fs::read_to_string(&p).unwrap(), "new");
        assert_eq!(fs::read_dir(&d).unwrap().count(), 1);
        fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn a_pending_file_appears_only_when_committed() {
        let d = scratch("pending");
        let p = d.join("out.txt");
        fs::write(&p, "old").unwrap();
        let pending = PendingFile::create(&p).unwrap();
        pending.writer().unwrap().write_all(b"half").unwrap();
        assert_eq!(fs::read_dir(&d).unwrap().count(), 2);
        drop(pending);
        assert_eq!(fs::read_to_string(&p).unwrap(), "old");
        assert_eq!(fs::read_dir(&d).unwrap().count(), 1);
        let pending = PendingFile::create(&p).unwrap();
        pending.writer().unwrap().write_all(b"new").unwrap();
        assert_eq!(fs::read_to_string(&p).unwrap(), "old");
        pending.commit().unwrap();
        assert_eq!(fs::read_to_string(&p).unwrap(), "new");
        assert_eq!(fs::read_dir(&d).unwrap().count(), 1);
        assert!(PendingFile::create(&d).is_err());
        fs::remove_dir_all(&d).unwrap();
    }

    #[cfg(unix)]
    #[test]
    fn a_link_is_followed_and_same_file_sees_through_spellings() {
        let d = scratch("link");
        let real = d.join("real.txt");
        let link = d.join("link.txt");
        fs::write(&real, "old").unwrap();
        std::os::unix::fs::symlink(&real, &link).unwrap();
        write_bytes_atomic(&link, b"new").unwrap();
        assert!(fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink());
        assert_eq!(fs::read_to_string(&real).unwrap(), "new");
        assert!(same_file(&real, &link));
        assert!(same_file(&real, &d.join(".").join("real.txt")));
        assert!(!same_file(&real, &d.join("missing")));
        assert!(same_file(&d.join("new"), &d.join(".").join("new")));
        fs::remove_dir_all(&d).unwrap();
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_full_device_is_an_error() {
        if Path::new("/dev/full").exists() {
            let e = write_bytes_atomic(Path::new("/dev/full"), &[0u8; 100_000]).unwrap_err();
            assert_eq!(e.raw_os_error(), Some(28), "{e}"); // ENOSPC
        }
    }
}
