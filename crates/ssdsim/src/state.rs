//! Preconditioning once: a preconditioned drive saved to a file and loaded
//! in place of preconditioning (`ssdsim run --save-state` / `--load-state`),
//! and shared by the points of a sweep that precondition the same drive
//! alike ([`StateCache`]). A run given a state reports what a run that
//! preconditioned itself reports (`run.precondition_wall_s` aside: the time
//! this run spent getting the state).
//!
//! What shapes a state, and so what must agree between the run that saved
//! it and the run that loads it, is
//! [`ssdsim_host::config::SsdConfig::state_shape`]: the NAND, the array, the
//! FTL, the preconditioning and the seed. The file's layout is
//! [`ssd_core::engine::DriveState`]'s.

use crate::RunError;
use ssd_core::engine::DriveState;
use ssdsim_host::config::{Precondition, SsdConfig};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

/// A preconditioned drive of the CLI's FTLs.
pub type State = DriveState<ftl::AnyFtl>;

/// Where a run's preconditioned drive comes from and goes to
/// ([`crate::RunOptions::drive_state`]). The default preconditions as
/// configured and keeps nothing.
#[derive(Clone, Debug, Default)]
pub struct DriveStateOpts {
    /// Load the preconditioned drive from this file instead of
    /// preconditioning (`--load-state`). Refused, naming the fields, unless
    /// the configuration shapes the drive as the one that saved it.
    pub load: Option<PathBuf>,
    /// Write the drive as preconditioning left it to this file, before the
    /// measured phase (`--save-state`); atomically, so an interrupted write
    /// leaves no partial file.
    pub save: Option<PathBuf>,
    /// Share preconditioned drives with the other runs given the same
    /// cache: the first run of a shape preconditions, the others start from
    /// a copy of its drive (what a sweep does).
    pub shared: Option<Arc<StateCache>>,
}

/// Preconditioned drives shared between runs, by shape
/// ([`SsdConfig::state_shape`]). A shape's drive is made once, by the first
/// run that needs it (the others of that shape wait for it), and dropped
/// once the last run expected of it has taken it.
///
/// Shapes are counted by a 64-bit key ([`shape_key`]), so that a large
/// sweep's count costs 8 bytes a point; the drive is kept with its whole
/// shape, and a run whose shape is not the one kept under its key (two
/// shapes of one key) preconditions itself.
#[derive(Debug, Default)]
pub struct StateCache {
    slots: Mutex<HashMap<u64, Slot>>,
}

type Made = (String, Option<Arc<State>>);

#[derive(Debug)]
struct Slot {
    cell: Arc<OnceLock<Made>>,
    /// Runs of this key yet to take the state.
    left: usize,
}

/// The key of a shape in a [`StateCache`] (SipHash with fixed keys: the
/// same on every run).
pub fn shape_key(shape: &str) -> u64 {
    use std::hash::{Hash, Hasher};
    #[allow(deprecated)]
    let mut h = std::hash::SipHasher::new();
    shape.hash(&mut h);
    h.finish()
}

impl StateCache {
    /// A cache for runs whose shapes have the keys `keys` (one per run
    /// that preconditions): only a key of two or more runs is kept (one run
    /// has nothing to share).
    pub fn new(keys: impl IntoIterator<Item = u64>) -> StateCache {
        let mut count: HashMap<u64, usize> = HashMap::new();
        for k in keys {
            *count.entry(k).or_default() += 1;
        }
        let slots = count
            .into_iter()
            .filter(|&(_, n)| n >= 2)
            .map(|(k, n)| {
                (
                    k,
                    Slot {
                        cell: Arc::new(OnceLock::new()),
                        left: n,
                    },
                )
            })
            .collect();
        StateCache {
            slots: Mutex::new(slots),
        }
    }

    /// Shapes held or still to be made.
    pub fn len(&self) -> usize {
        self.slots.lock().map(|s| s.len()).unwrap_or(0)
    }

    /// Whether the cache holds nothing to share.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The state of `shape`, made by `make` if no run made it yet (`None`:
    /// making it failed, and the caller preconditions itself). The second
    /// value tells whether this call made it. `None` overall when the shape
    /// is not one the cache shares.
    pub(crate) fn take(
        &self,
        shape: &str,
        make: impl FnOnce() -> Option<State>,
    ) -> Option<(Option<Arc<State>>, bool)> {
        let key = shape_key(shape);
        let cell = {
            let slots = self.slots.lock().ok()?;
            Arc::clone(&slots.get(&key)?.cell)
        };
        let mut made = false;
        let (kept, state) = cell.get_or_init(|| {
            made = true;
            (shape.to_string(), make().map(Arc::new))
        });
        let state = (kept == shape).then(|| state.clone()).flatten();
        if let Ok(mut slots) = self.slots.lock() {
            if let Some(s) = slots.get_mut(&key) {
                s.left = s.left.saturating_sub(1);
                if s.left == 0 {
                    slots.remove(&key);
                }
            }
        }
        Some((state, made))
    }
}

/// The shape of `cfg`'s preconditioned drive (`None`: it preconditions
/// nothing, so there is nothing to keep).
pub fn shape_of(cfg: &SsdConfig) -> Option<String> {
    (cfg.sim.precondition != Precondition::None).then(|| cfg.state_shape())
}

/// Read the state in `path` for a run of `cfg`.
pub fn load(path: &Path, cfg: &SsdConfig) -> Result<State, RunError> {
    let name = path.display();
    let file = std::fs::File::open(path)
        .map_err(|e| RunError::Input(format!("--load-state {name}: cannot read: {e}")))?;
    let r = std::io::BufReader::with_capacity(1 << 20, file);
    // A P2L kept in a file streams into one as it is read, so loading
    // needs no more memory than the run.
    ftl::p2l::spilling_while_loading(cfg.p2l_in_file(), || {
        State::read_from(r, &cfg.state_shape())
    })
    .map_err(|e| RunError::Input(format!("--load-state {name}: {e}")))
}

/// Write the drive of `sim`, a run of `cfg`, to `path` (atomically).
pub(crate) fn save<O: ssd_core::observer::Observer>(
    path: &Path,
    cfg: &SsdConfig,
    sim: &crate::Sim<O>,
) -> Result<(), RunError> {
    let name = path.display().to_string();
    let shape = cfg.state_shape();
    ssd_core::outfile::write_atomic_with(
        path,
        |e| RunError::Io(format!("--save-state {name}: cannot write: {e}")),
        |w| {
            sim.write_drive_state(w, &shape)
                .map_err(|e| RunError::Io(format!("--save-state {name}: cannot write: {e}")))
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_shape_is_made_once_taken_by_each_run_and_dropped_after_the_last() {
        let cfg = |seed: u64| {
            let mut c = SsdConfig::default();
            c.nand.blocks_per_plane = 64;
            c.sim.precondition = Precondition::Fill;
            c.sim.precondition_seed = Some(seed);
            c
        };
        let (a, b, lone) = (cfg(1), cfg(2), cfg(3));
        let none = SsdConfig::default();
        let runs = [&a, &a, &a, &b, &b, &lone, &none];
        let keys: Vec<u64> = runs
            .iter()
            .filter_map(|c| shape_of(c))
            .map(|s| shape_key(&s))
            .collect();
        let cache = StateCache::new(keys);
        // Two shapes of two or more runs; the lone run and the run without
        // preconditioning share nothing.
        assert_eq!(cache.len(), 2);
        assert!(cache.take(&lone.state_shape(), || unreachable!()).is_none());
        let settings = a.validate().unwrap();
        let state = || {
            let f = ftl::build(&settings.config.ftl, &settings.shape()).unwrap();
            let sim = ssd_core::Simulation::new(
                settings.clone(),
                f,
                ssdsim_host::workload::FioGen::new(&a.workload, settings.logical_bytes(), 1),
                ssdsim_host::scheds::build_host_queues(
                    &a.sched,
                    &a.host,
                    &a.flows,
                    settings.logical_bytes() / 512,
                    settings.zone_layout().is_some(),
                )
                .unwrap(),
                ssd_core::observer::NullObserver,
            );
            Some(sim.drive_state())
        };
        let mut made = 0;
        for i in 0..3 {
            let (s, first) = cache
                .take(&a.state_shape(), || {
                    made += 1;
                    state()
                })
                .unwrap();
            assert!(s.is_some());
            assert_eq!(first, i == 0);
        }
        assert_eq!(made, 1);
        // The last run of `a` took it: only `b` is left.
        assert_eq!(cache.len(), 1);
        assert!(cache.take(&a.state_shape(), || unreachable!()).is_none());
    }
}
