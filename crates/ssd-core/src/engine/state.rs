//! A drive's state as preconditioning leaves it, kept to be put back instead
//! of preconditioning again: written to a file and read back
//! (`ssdsim run --save-state` / `--load-state`), or shared by the points of a
//! sweep that precondition the same drive alike.
//!
//! The state is everything preconditioning changes: the FTL (its maps, block
//! states, free pools, wear, victim index, DFTL's mapping cache), the flash
//! array's write pointers and erase counts, and the engine's per-block erase
//! epochs and program counts. (The FTL's random choices in the measured
//! phase draw from the run's own seed, not from where preconditioning left
//! its stream.) A simulation given the state runs exactly as one that
//! preconditioned itself.
//!
//! # File layout
//! `ssdsim-state\n`, then in postcard (serde's data model in varints): the
//! layout's version ([`STATE_FORMAT`]), the ssdsim version that wrote it, the
//! configuration that shaped the state (`SsdConfig::state_shape` of the host crate,
//! as JSON), the state itself; last the CRC-32 of every byte before it
//! (little-endian). A file of another layout version, another shape, a
//! damaged or truncated file is refused with the reason.

use super::*;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use std::io::{Read, Write};

/// Version of the state file's layout. Raised whenever the layout or any
/// type inside the state changes its serialised form; a file of another
/// version is refused.
pub const STATE_FORMAT: u32 = 4;

const MAGIC: &[u8] = b"ssdsim-state\n";

/// What preconditioning changed in a simulation (see the module docs).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct DriveState<F> {
    ftl: F,
    flash: FlashArray,
    /// Per block: (erase epoch planned, erase epoch executed, pages programmed).
    blocks: Vec<(u32, u32, u32)>,
    outcome: PreconditionOutcome,
}

#[derive(Serialize, Deserialize)]
struct Header {
    format: u32,
    version: String,
    shape: String,
}

/// A writer that keeps the CRC-32 of what passed through it.
struct Crc<W> {
    inner: W,
    crc: crc32fast::Hasher,
}

impl<W: Write> Write for Crc<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.crc.update(&buf[..n]);
        Ok(n)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

impl<R: Read> Read for Crc<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.crc.update(&buf[..n]);
        Ok(n)
    }
}

/// Scratch for postcard's reader: the longest string of a state file (the
/// shape's JSON) must fit.
const SCRATCH: usize = 1 << 20;

/// [`DriveState`] borrowed from a simulation, for writing without a copy:
/// the same fields in the same order, so the same bytes.
#[derive(Serialize)]
struct DriveStateRef<'a, F> {
    ftl: &'a F,
    flash: &'a FlashArray,
    blocks: Vec<(u32, u32, u32)>,
    outcome: &'a PreconditionOutcome,
}

impl<F: Serialize> DriveState<F> {
    /// Write the state to `w` in the file layout of the module docs, with
    /// `shape` the configuration that shaped it.
    pub fn write_to(&self, w: impl Write, shape: &str) -> Result<(), String> {
        write_state(self, w, shape)
    }
}

/// Write `state` (a [`DriveState`] or a [`DriveStateRef`]) in the file layout.
fn write_state(state: &impl Serialize, w: impl Write, shape: &str) -> Result<(), String> {
    let mut w = Crc {
        inner: w,
        crc: crc32fast::Hasher::new(),
    };
    let io = |e: std::io::Error| e.to_string();
    let pc = |e: postcard::Error| e.to_string();
    w.write_all(MAGIC).map_err(io)?;
    let header = Header {
        format: STATE_FORMAT,
        version: env!("CARGO_PKG_VERSION").into(),
        shape: shape.into(),
    };
    let w = postcard::to_io(&header, w).map_err(pc)?;
    let mut w = postcard::to_io(state, w).map_err(pc)?;
    let crc = w.crc.clone().finalize();
    w.inner.write_all(&crc.to_le_bytes()).map_err(io)?;
    w.inner.flush().map_err(io)
}

impl<F: DeserializeOwned> DriveState<F> {
    /// Read a state written by [`DriveState::write_to`] from `r`, refusing
    /// it unless it was shaped by `shape` (the differing fields are named).
    pub fn read_from(r: impl Read, shape: &str) -> Result<DriveState<F>, String> {
        let mut r = Crc {
            inner: r,
            crc: crc32fast::Hasher::new(),
        };
        let mut magic = [0u8; MAGIC.len()];
        r.read_exact(&mut magic)
            .map_err(|e| format!("not an ssdsim state file ({e})"))?;
        if magic != MAGIC {
            return Err("not an ssdsim state file (it does not begin with `ssdsim-state`)".into());
        }
        let mut scratch = vec![0u8; SCRATCH];
        let damaged = |e: postcard::Error| format!("damaged or truncated state file ({e})");
        let (header, (r, scratch)): (Header, _) =
            postcard::from_io((r, &mut scratch[..])).map_err(damaged)?;
        if header.format != STATE_FORMAT {
            return Err(format!(
                "state file layout version {} (written by ssdsim {}); this ssdsim reads \
                 version {STATE_FORMAT} only: precondition again and save a new state",
                header.format, header.version
            ));
        }
        if header.shape != shape {
            return Err(format!(
                "the state was preconditioned under another configuration: {} (the state \
                 holds the drive as those fields made it; set them as the state has them, or \
                 precondition again)",
                shape_diff(&header.shape, shape)
            ));
        }
        let (state, (mut r, _)): (DriveState<F>, _) =
            postcard::from_io((r, scratch)).map_err(damaged)?;
        let crc = r.crc.clone().finalize();
        let mut tail = [0u8; 4];
        r.inner
            .read_exact(&mut tail)
            .map_err(|e| format!("damaged or truncated state file (its checksum: {e})"))?;
        if u32::from_le_bytes(tail) != crc {
            return Err("damaged state file: its checksum does not match its contents".into());
        }
        let mut more = [0u8; 1];
        if r.inner.read(&mut more).map_err(|e| e.to_string())? != 0 {
            return Err("damaged state file: bytes follow its checksum".into());
        }
        Ok(state)
    }
}

/// The fields in which two shapes (JSON objects) differ, as
/// `path: state's value, configuration's value`.
fn shape_diff(saved: &str, now: &str) -> String {
    fn flat(prefix: &str, v: &serde_json::Value, out: &mut Vec<(String, String)>) {
        match v {
            serde_json::Value::Object(m) => {
                for (k, v) in m {
                    let p = if prefix.is_empty() {
                        k.clone()
                    } else {
                        format!("{prefix}.{k}")
                    };
                    flat(&p, v, out);
                }
            }
            v => out.push((prefix.to_string(), v.to_string())),
        }
    }
    let parse = |s: &str| {
        let mut out = Vec::new();
        if let Ok(v) = serde_json::from_str::<serde_json::Value>(s) {
            flat("", &v, &mut out);
        }
        out.into_iter()
            .collect::<std::collections::BTreeMap<String, String>>()
    };
    let (a, b) = (parse(saved), parse(now));
    let mut keys: Vec<&String> = a.keys().chain(b.keys()).collect();
    keys.sort();
    keys.dedup();
    let none = "(unset)".to_string();
    let diffs: Vec<String> = keys
        .into_iter()
        .filter(|k| a.get(*k) != b.get(*k))
        .map(|k| {
            format!(
                "{k} is {} in the state, {} here",
                a.get(k).unwrap_or(&none),
                b.get(k).unwrap_or(&none)
            )
        })
        .collect();
    if diffs.is_empty() {
        "its configuration differs".into()
    } else {
        diffs.join("; ")
    }
}

impl<F: Ftl, S: RequestSource, Q: IoScheduler, O: Observer, H: Hardware> Simulation<F, S, Q, O, H> {
    /// The drive as preconditioning left it (call after
    /// [`Simulation::precondition`], before [`Simulation::run`]).
    pub fn drive_state(&self) -> DriveState<F>
    where
        F: Clone,
    {
        DriveState {
            ftl: self.ftl.clone(),
            flash: self.flash.clone(),
            blocks: self
                .fl
                .blk
                .iter()
                .map(|b| (b.plan_epoch, b.exec_epoch, b.exec_wp))
                .collect(),
            outcome: self.stats.pre.clone(),
        }
    }

    /// Write the drive as [`Simulation::drive_state`] would give it, without
    /// copying it, in the file layout of the module docs ([`DriveState::read_from`]
    /// reads it back).
    pub fn write_drive_state(&self, w: impl Write, shape: &str) -> Result<(), String>
    where
        F: Serialize,
    {
        let state = DriveStateRef {
            ftl: &self.ftl,
            flash: &self.flash,
            blocks: self
                .fl
                .blk
                .iter()
                .map(|b| (b.plan_epoch, b.exec_epoch, b.exec_wp))
                .collect(),
            outcome: &self.stats.pre,
        };
        write_state(&state, w, shape)
    }

    /// Free the FTL's tables that [`Simulation::restore_drive_state`]
    /// replaces ([`Ftl::shed`]), before a state is read from a file, so
    /// that loading a drive takes no more memory than running it. Only
    /// `restore_drive_state` may follow (or a drop, if reading failed).
    pub fn shed_drive(&mut self) {
        self.ftl.shed();
    }

    /// Put back a state of [`Simulation::drive_state`] in place of
    /// preconditioning (before [`Simulation::run`]); `wall_s` is what getting
    /// it cost (reported as `run.precondition_wall_s`). Refused if the state
    /// is of another geometry or capacity; the configuration that shaped it
    /// is the caller's to check (`SsdConfig::state_shape` of the host crate).
    pub fn restore_drive_state(&mut self, s: DriveState<F>, wall_s: f64) -> Result<(), String> {
        if s.blocks.len() != self.fl.blk.len() || s.flash.geometry() != self.flash.geometry() {
            return Err(format!(
                "the state is of a drive of {} blocks, this one has {}",
                s.blocks.len(),
                self.fl.blk.len()
            ));
        }
        if s.ftl.name() != self.ftl.name() || s.ftl.logical_pages() != self.ftl.logical_pages() {
            return Err(format!(
                "the state is of FTL {} with {} logical pages, this drive's is {} with {}",
                s.ftl.name(),
                s.ftl.logical_pages(),
                self.ftl.name(),
                self.ftl.logical_pages()
            ));
        }
        for (b, &(plan, exec, wp)) in self.fl.blk.iter_mut().zip(&s.blocks) {
            b.plan_epoch = plan;
            b.exec_epoch = exec;
            b.exec_wp = wp;
        }
        self.ftl.restore(s.ftl);
        self.flash = s.flash;
        self.cx.rng = self.measured_rng();
        self.cx.plan.clear();
        self.cx.work = FtlWork::default();
        self.stats.ftl_before = self.ftl.stats();
        self.ftl.measure_start();
        self.stats.pre = s.outcome;
        self.stats.pre.wall_s = wall_s;
        if self.settings.config.sim.precondition == Precondition::Steady && !self.stats.pre.steady {
            *self.stats.note("precondition_steady_state_not_reached") = 1;
        }
        Ok(())
    }
}
