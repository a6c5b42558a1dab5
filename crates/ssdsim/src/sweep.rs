//! Parameter sweeps: the cartesian product of value lists, run in parallel with
//! rayon (one simulation per thread), rows in grid order whatever the thread
//! count; deterministic seeds per configuration; sharding for clusters.
//!
//! Over 1,500 lines on purpose: grid files, their expansion, sharding, resume
//! and the rows' JSONL, CSV and tables share the sweep's spec and row types;
//! its tests are `sweep/tests.rs`.

use crate::{apply_flag, run_config, set_field, RunOptions};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use ssd_core::rng::derive_seed;
use ssdsim_host::config::SsdConfig;
use std::borrow::Cow;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Mutex;

/// One axis of the grid: a flag name (`ftl`), a dotted config field
/// (`sched.max_request`) or `workload`, and its values.
#[derive(Clone, Debug, PartialEq)]
pub struct Axis {
    /// The axis: a flag name, a dotted config field, or `workload`.
    pub key: String,
    /// Its values, in order, as text.
    pub values: Vec<String>,
}

/// The built-in standard workloads (used when a sweep names none), each with
/// the preconditioning SNIA PTS prescribes for its test: a sequential fill
/// (PTS-E/C throughput tests: 128 KiB sequential writes over the whole
/// capacity) before the sequential rows, random-write steady state (PTS IOPS
/// test) before the random rows. A `--precondition` given to the sweep
/// overrides it for every row; each row reports what it got.
pub fn standard_workloads() -> Vec<(&'static str, Vec<(&'static str, &'static str)>)> {
    vec![
        (
            "seq-read",
            vec![
                ("precondition", "fill"),
                ("rw", "read"),
                ("bs", "128KiB"),
                ("iodepth", "32"),
                ("number_ios", "20000"),
            ],
        ),
        (
            "seq-write",
            vec![
                ("precondition", "fill"),
                ("rw", "write"),
                ("bs", "128KiB"),
                ("iodepth", "32"),
                ("number_ios", "20000"),
            ],
        ),
        (
            "rand-read",
            vec![
                ("precondition", "steady"),
                ("rw", "randread"),
                ("bs", "4KiB"),
                ("iodepth", "32"),
                ("number_ios", "100000"),
            ],
        ),
        (
            "rand-write",
            vec![
                ("precondition", "steady"),
                ("rw", "randwrite"),
                ("bs", "4KiB"),
                ("iodepth", "32"),
                ("number_ios", "100000"),
            ],
        ),
        (
            "mix-70-30",
            vec![
                ("precondition", "steady"),
                ("rw", "randrw"),
                ("rwmixread", "70"),
                ("bs", "4KiB"),
                ("iodepth", "32"),
                ("number_ios", "100000"),
            ],
        ),
        // OLTP-like without a trace: small random I/O, mostly reads, skewed (hot tables).
        (
            "oltp",
            vec![
                ("precondition", "steady"),
                ("rw", "randrw"),
                ("rwmixread", "70"),
                ("bs", "8KiB"),
                ("iodepth", "16"),
                ("random_distribution", "zipf:1.1"),
                ("number_ios", "100000"),
            ],
        ),
    ]
}

/// A named workload: a list of (flag, value) settings.
pub type WorkloadDef = Vec<(String, String)>;

/// [`standard_workloads`] as named workload definitions (what `build_point`
/// and a grid's `workload` axis look names up in).
pub fn standard_workload_defs() -> std::collections::BTreeMap<String, WorkloadDef> {
    standard_workloads()
        .into_iter()
        .map(|(n, d)| {
            (
                n.to_string(),
                d.into_iter()
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .collect(),
            )
        })
        .collect()
}

/// A grid file: `[base]` (config overrides, TOML over the preset), `[grid]`
/// (axis -> list of values) and optional `[workloads.NAME]` definitions.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GridFile {
    /// `[base]`: configuration overrides (TOML) applied over the preset.
    #[serde(default)]
    pub base: Option<toml::Table>,
    /// `[grid]`: axis key -> list of values (nested tables flatten to dotted keys).
    #[serde(default)]
    pub grid: BTreeMap<String, toml::Value>,
    /// `[workloads.NAME]`: named workloads, each a table of flag -> value.
    #[serde(default)]
    pub workloads: BTreeMap<String, BTreeMap<String, toml::Value>>,
    /// Free text describing the experiment.
    #[serde(default)]
    pub description: Option<String>,
    /// The experiment's quick form (`sweep --quick`, `reproduce --quick`):
    /// the same grid at a scale that finishes in minutes.
    #[serde(default)]
    pub quick: Option<QuickForm>,
}

/// `[grid]`'s entries with every key flattened, in the file's order (a
/// nested table, `ftl.kind = [...]` unquoted, gives the key `"ftl.kind"`).
fn flat_grid<'a>(
    grid: impl IntoIterator<Item = (&'a String, &'a toml::Value)>,
) -> Vec<(String, toml::Value)> {
    fn walk<'a>(
        prefix: &str,
        t: impl IntoIterator<Item = (&'a String, &'a toml::Value)>,
        out: &mut Vec<(String, toml::Value)>,
    ) {
        for (k, v) in t {
            let key = if prefix.is_empty() {
                k.clone()
            } else {
                format!("{prefix}.{k}")
            };
            match v {
                toml::Value::Table(inner) => walk(&key, inner, out),
                other => out.push((key, other.clone())),
            }
        }
    }
    let mut out = Vec::new();
    walk("", grid, &mut out);
    out
}

/// `[quick]` of a grid file: what its quick form changes. `[quick.base]`
/// is merged over `[base]`, each axis of `[quick.grid]` replaces the axis
/// of that key (or adds one), and each key of `[quick.workloads.NAME]`
/// replaces that key of the named workload.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct QuickForm {
    /// `[quick.base]`: merged over `[base]`.
    #[serde(default)]
    pub base: Option<toml::Table>,
    /// `[quick.grid]`: each axis replaces the axis of its key (or adds one).
    #[serde(default)]
    pub grid: BTreeMap<String, toml::Value>,
    /// `[quick.workloads.NAME]`: each key replaces that key of the named workload.
    #[serde(default)]
    pub workloads: BTreeMap<String, BTreeMap<String, toml::Value>>,
}

fn value_text(v: &toml::Value) -> String {
    match v {
        toml::Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

impl GridFile {
    /// Read and parse the grid file at `path`; an error names the file.
    pub fn load(path: &Path) -> Result<GridFile, String> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("{}: cannot read: {e}", path.display()))?;
        GridFile::parse_str(&text, &path.display().to_string())
    }
    /// Parse grid-file text; `source_name` (a path) prefixes every message.
    pub fn parse_str(text: &str, source_name: &str) -> Result<GridFile, String> {
        toml::from_str(text).map_err(|e: toml::de::Error| format!("{source_name}: {}", e.message()))
    }
    /// The file's quick form: `[quick]` applied to it (an error naming the
    /// file if it has none, or if `[quick.workloads]` names a workload the
    /// file does not define).
    pub fn quick_form(&self, source_name: &str) -> Result<GridFile, String> {
        let q = self.quick.as_ref().ok_or_else(|| {
            format!("{source_name}: no [quick] section: this experiment has no quick form")
        })?;
        let mut out = self.clone();
        out.quick = None;
        if let Some(b) = &q.base {
            let mut merged = toml::Value::Table(out.base_nested().unwrap_or_default());
            let over = GridFile {
                base: Some(b.clone()),
                ..GridFile::default()
            };
            ssdsim_host::config::deep_merge(
                &mut merged,
                toml::Value::Table(over.base_nested().unwrap_or_default()),
            );
            out.base = match merged {
                toml::Value::Table(t) => Some(t),
                _ => unreachable!("merged into a table"),
            };
        }
        let mut grid: BTreeMap<String, toml::Value> = flat_grid(&out.grid).into_iter().collect();
        grid.extend(flat_grid(&q.grid));
        out.grid = grid;
        for (name, keys) in &q.workloads {
            let w = out.workloads.get_mut(name).ok_or_else(|| {
                format!(
                    "{source_name}: [quick.workloads.{name}]: no workload {name:?} in [workloads]"
                )
            })?;
            for (k, v) in keys {
                w.insert(k.clone(), v.clone());
            }
        }
        Ok(out)
    }
    /// `[base]` as nested tables: a quoted dotted key (`"ftl.op" = 0.28`, as
    /// `[grid]` spells its axes) is the same as `ftl.op = 0.28` or `[base.ftl]`.
    pub fn base_nested(&self) -> Option<toml::Table> {
        fn nest(t: &toml::Table) -> toml::Table {
            let mut out = toml::Value::Table(toml::Table::new());
            for (k, v) in t {
                let v = match v {
                    toml::Value::Table(inner) => toml::Value::Table(nest(inner)),
                    other => other.clone(),
                };
                let mut over = v;
                for part in k.split('.').rev() {
                    let mut t = toml::Table::new();
                    t.insert(part.to_string(), over);
                    over = toml::Value::Table(t);
                }
                ssdsim_host::config::deep_merge(&mut out, over);
            }
            match out {
                toml::Value::Table(t) => t,
                _ => unreachable!("built as a table"),
            }
        }
        self.base.as_ref().map(nest)
    }

    /// The axes of `[grid]`, keys flattened: an unquoted dotted key
    /// (`ftl.op = [...]`, a nested table in TOML) is the axis `"ftl.op"`.
    pub fn axes(&self, path: &Path) -> Result<Vec<Axis>, String> {
        let flat = flat_grid(&self.grid);
        flat.iter()
            .map(|(k, v)| {
                let values = match v {
                    toml::Value::Array(a) => a.iter().map(value_text).collect(),
                    other => vec![value_text(other)],
                };
                if k.is_empty() {
                    return Err(format!("{}: [grid] has an empty key", path.display()));
                }
                if values.is_empty() {
                    return Err(format!(
                        "{}: [grid] {k:?} lists no values (a sweep needs at least one)",
                        path.display()
                    ));
                }
                Ok(Axis {
                    key: k.clone(),
                    values,
                })
            })
            .collect()
    }
    /// The file's `[workloads]` as named workload definitions (values as text).
    pub fn workload_defs(&self) -> BTreeMap<String, WorkloadDef> {
        self.workloads
            .iter()
            .map(|(n, t)| {
                (
                    n.clone(),
                    t.iter().map(|(k, v)| (k.clone(), value_text(v))).collect(),
                )
            })
            .collect()
    }
}

/// What a sweep is asked to run, as `ssdsim sweep` takes it: the base
/// configuration, a grid file, flags with comma lists of values, named
/// workloads and `--set` fields common to every point.
#[derive(Clone, Debug, Default)]
pub struct SweepSpec {
    /// The base configuration: `--config`'s, or the defaults.
    pub base: SsdConfig,
    /// Whether `base` came from a configuration (`--config`): then it keeps
    /// its own preconditioning.
    pub base_given: bool,
    /// A grid file and its name (a path, prefixing its messages).
    pub grid: Option<(GridFile, String)>,
    /// Flags, each with a comma list of values (`("ftl", "page,dftl")`),
    /// each an axis replacing the grid file's of the same key.
    pub flags: Vec<(String, String)>,
    /// `--workload`: a comma list of named workloads.
    pub workload: Option<String>,
    /// `--set FIELD=VALUE`: settings common to every point.
    pub set: Vec<(String, String)>,
}

/// A sweep's base configuration, axes, common settings and named workloads,
/// resolved from a [`SweepSpec`] as `ssdsim sweep` does.
#[derive(Clone, Debug)]
pub struct SweepPlan {
    /// The base configuration every point starts from.
    pub base: SsdConfig,
    /// The axes, in grid order.
    pub axes: Vec<Axis>,
    /// `--set` settings applied to every point.
    pub common: Vec<(String, String)>,
    /// Named workloads a `workload` axis can refer to.
    pub workloads: BTreeMap<String, WorkloadDef>,
}

impl SweepPlan {
    /// The plan's grid (points built as they run).
    pub fn grid(&self) -> Grid {
        Grid::new(&self.base, &self.axes, &self.common, &self.workloads)
    }

    /// Every trace file a point of the sweep may read: the base's (and its
    /// flows'), and those an axis, a `--set` or a named workload names
    /// (`--trace A,B`, `trace.path`, `flow.N.trace.path`). An output must
    /// not replace one of them.
    pub fn trace_paths(&self) -> Vec<PathBuf> {
        let is_trace = |k: &str| {
            k == "trace"
                || k == "trace.path"
                || (k.starts_with("flow.") && k.ends_with(".trace.path"))
        };
        let given = self
            .axes
            .iter()
            .flat_map(|a| a.values.iter().map(move |v| (&a.key, v)))
            .chain(self.common.iter().map(|(k, v)| (k, v)))
            .chain(self.workloads.values().flatten().map(|(k, v)| (k, v)));
        let mut v = crate::trace_paths(&self.base);
        v.extend(
            given
                .filter(|(k, _)| is_trace(k))
                .map(|(_, p)| PathBuf::from(p.trim().trim_matches('"'))),
        );
        v.sort();
        v.dedup();
        v
    }
}

/// The axis of a flag given a comma list of values (`--ftl page,dftl`);
/// `keep_empty`: an empty item is a value (`random_distribution`'s
/// default), not dropped.
pub fn flag_axis(flag: &str, text: &str, keep_empty: bool) -> Result<Axis, crate::RunError> {
    let values: Vec<String> = text
        .split(',')
        .map(|s| s.trim().to_string())
        .filter(|s| keep_empty || !s.is_empty())
        .collect();
    if values.is_empty() {
        return Err(crate::RunError::Input(format!(
            "--{flag}: no values in {text:?} (a sweep needs at least one)"
        )));
    }
    Ok(Axis {
        key: flag.to_string(),
        values,
    })
}

/// Put `axis` in `axes`, replacing one with the same key.
pub fn set_axis(axes: &mut Vec<Axis>, axis: Axis) {
    axes.retain(|x| x.key != axis.key);
    axes.push(axis);
}

/// Resolve a sweep: the grid file's `[base]` over the base configuration,
/// its axes and named workloads, the flags' axes over them; the standard
/// workload set when nothing names a workload, and steady-state
/// preconditioning (SNIA PTS) unless a configuration, a grid file or
/// `precondition` says otherwise. The grid's size is checked
/// ([`grid_size`]).
pub fn plan(spec: SweepSpec) -> Result<SweepPlan, crate::RunError> {
    use crate::{flags, RunError};
    let mut workloads: BTreeMap<String, WorkloadDef> = standard_workload_defs();
    let mut axes: Vec<Axis> = Vec::new();
    let mut base = spec.base;
    if let Some((gf, name)) = &spec.grid {
        if let Some(b) = gf.base_nested() {
            let text =
                toml::to_string(&b).map_err(|e| RunError::Input(format!("{name}: [base]: {e}")))?;
            base = SsdConfig::from_toml_over(Some(base), &text, name)?;
        }
        workloads.extend(gf.workload_defs());
        axes.extend(gf.axes(Path::new(name)).map_err(RunError::Input)?);
    }
    for (f, v) in &spec.flags {
        set_axis(&mut axes, flag_axis(f, v, f == "random_distribution")?);
    }
    let has_workload_flags = spec
        .flags
        .iter()
        .any(|(f, _)| flags::is_workload(f) || matches!(f.as_str(), "trace" | "personality"))
        || axes.iter().any(|x| {
            flags::is_workload(&x.key)
                || x.key == "personality"
                || x.key == "trace"
                || x.key.starts_with("workload.")
                || x.key.starts_with("personality.")
                || x.key.starts_with("trace.")
        })
        || base.trace.is_some()
        || base.personality.is_some()
        || !base.flows.is_empty();
    if let Some(w) = &spec.workload {
        set_axis(&mut axes, flag_axis("workload", w, false)?);
    } else if !has_workload_flags && !axes.iter().any(|x| x.key == "workload") {
        axes.push(Axis {
            key: "workload".into(),
            values: standard_workloads()
                .iter()
                .map(|(n, _)| n.to_string())
                .collect(),
        });
    }
    // Steady-state by default (SNIA PTS): write results after a fill alone
    // mislead. The standard workloads name their own PTS preconditioning,
    // which replaces this one (an explicit --precondition replaces both).
    if !spec.flags.iter().any(|(f, _)| f == "precondition")
        && !spec.base_given
        && spec.grid.is_none()
    {
        base.sim.precondition = ssdsim_host::config::Precondition::Steady;
    }
    // A setting common to every point would overwrite an axis of the same
    // key after the axis was applied: every point would run the --set value
    // under its axis label.
    if let Some((k, _)) = spec
        .set
        .iter()
        .find(|(k, _)| axes.iter().any(|x| same_key(&x.key, k)))
    {
        return Err(RunError::Input(format!(
            "--set {k}: {k} is an axis of this sweep; give its values as the axis \
             (--{k} or [grid]) instead"
        )));
    }
    grid_size(&axes).map_err(RunError::Input)?;
    Ok(SweepPlan {
        base,
        axes,
        common: spec.set,
        workloads,
    })
}

/// Whether an axis key and a `--set` field name the same setting (an axis
/// may be a flag's name, `ftl`, where `--set` names the field, `ftl.kind`).
fn same_key(axis: &str, field: &str) -> bool {
    let norm = |k: &str| -> String {
        let k = k.trim().replace('-', "_");
        match k.as_str() {
            "ftl" | "sched" | "personality" | "fs" => format!("{k}.kind"),
            _ => k.strip_prefix("workload.").map(str::to_string).unwrap_or(k),
        }
    };
    norm(axis) == norm(field)
}

/// One configuration of the grid.
#[derive(Clone, Debug)]
pub struct Point {
    /// The point's position in the grid (0-based, before sharding).
    pub index: usize,
    /// The point's axis values: (axis key, value), in axis order.
    pub params: Vec<(String, String)>,
    /// The point's configuration, or why it could not be built (reported in its row).
    pub cfg: Result<SsdConfig, String>,
    /// The sweep's identity ([`identity`]), written in each row.
    pub sweep: String,
    /// The number of points of the whole sweep (before sharding).
    pub points: usize,
}

/// A sweep's identity: a hash of the ssdsim version, the base configuration
/// (with its master seed), the axes, the settings common to every point and
/// the named workloads. Rows of one sweep (any shard, any thread count) carry
/// the same identity; `merge` and `--resume` refuse rows of another.
pub fn identity(
    base: &SsdConfig,
    axes: &[Axis],
    common: &[(String, String)],
    workloads: &BTreeMap<String, WorkloadDef>,
) -> String {
    let text = format!(
        "ssdsim {}\n{}\naxes {:?}\ncommon {:?}\nworkloads {:?}\n",
        env!("CARGO_PKG_VERSION"),
        base.to_toml(),
        axes.iter().map(|a| (&a.key, &a.values)).collect::<Vec<_>>(),
        common,
        workloads
    );
    ssd_core::stats::fnv1a(&text)
}

static STOP: AtomicBool = AtomicBool::new(false);

/// Ask [`run_points`] to start no further point (the points running finish
/// and are reported). Async-signal-safe: a SIGINT handler may call it.
pub fn request_stop() {
    STOP.store(true, Ordering::SeqCst);
}

/// Whether [`request_stop`] was called.
pub fn stop_requested() -> bool {
    STOP.load(Ordering::SeqCst)
}

/// Undo [`request_stop`], so that a later sweep in the same process (an
/// embedder's, such as the Python bindings after a KeyboardInterrupt) runs
/// its points.
pub fn clear_stop() {
    STOP.store(false, Ordering::SeqCst);
}

/// A sweep's grid, expanded lazily: point `index` is computed when it is
/// asked for (a mixed-radix counter over the axes, the first axis varying
/// slowest), so a grid costs the memory of its axes whatever its size, and
/// a point's configuration is built (and validated) only by the worker that
/// runs it. [`Grid::point`] gives the same point [`expand`] does.
#[derive(Clone, Debug)]
pub struct Grid {
    base: SsdConfig,
    axes: Vec<Axis>,
    common: Vec<(String, String)>,
    workloads: BTreeMap<String, WorkloadDef>,
    sweep: String,
    total: usize,
    prefixes: PrefixCache,
}

/// The configurations of the last few prefixes [`Grid::point`] built: the
/// base with every axis but the last set, which the consecutive points that
/// differ only in the last axis share. Keyed by `index / (last axis's
/// length)`, in a few slots, so that workers on different ranges of the
/// grid do not evict each other's. Only when the last axis is also set last
/// ([`Grid::prefix_len`]).
#[derive(Default)]
struct PrefixCache {
    slots: [Mutex<Option<Prefix>>; PREFIX_SLOTS],
}

/// A prefix's key (`index / prefix_len`) and its configuration.
type Prefix = (usize, Result<SsdConfig, String>);

const PREFIX_SLOTS: usize = 16;

impl Clone for PrefixCache {
    /// An empty cache: a cache only ever holds what its grid would build.
    fn clone(&self) -> Self {
        PrefixCache::default()
    }
}

impl std::fmt::Debug for PrefixCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("PrefixCache")
    }
}

impl Grid {
    /// The grid of `axes` over `base`. Its size saturates at `usize::MAX`
    /// (check it with [`grid_size`] first).
    pub fn new(
        base: &SsdConfig,
        axes: &[Axis],
        common: &[(String, String)],
        workloads: &BTreeMap<String, WorkloadDef>,
    ) -> Grid {
        let total = axes
            .iter()
            .fold(1usize, |n, a| n.saturating_mul(a.values.len().max(1)));
        Grid {
            base: base.clone(),
            axes: axes.to_vec(),
            common: common.to_vec(),
            workloads: workloads.clone(),
            sweep: identity(base, axes, common, workloads),
            total,
            prefixes: PrefixCache::default(),
        }
    }

    /// The number of points.
    pub fn len(&self) -> usize {
        self.total
    }

    /// Whether the grid has no point (never: an empty product is one point).
    pub fn is_empty(&self) -> bool {
        self.total == 0
    }

    /// The sweep's identity ([`identity`]), written in each row.
    pub fn identity(&self) -> &str {
        &self.sweep
    }

    /// The same grid run with a run option that changes its rows (such as
    /// `--power-sample` other than the default): its identity takes `option`
    /// in, so that `--resume` and `merge` refuse rows run without it.
    pub fn with_option(mut self, option: &str) -> Grid {
        self.sweep = ssd_core::stats::fnv1a(&format!("{}\n{option}", self.sweep));
        self
    }

    /// The (axis, value) pairs of point `index` (`< len()`), in axis order.
    pub fn params(&self, index: usize) -> Vec<(String, String)> {
        let mut rem = index;
        let mut params = vec![(String::new(), String::new()); self.axes.len()];
        for (ai, a) in self.axes.iter().enumerate().rev() {
            let n = a.values.len().max(1);
            params[ai] = (a.key.clone(), a.values[rem % n].clone());
            rem /= n;
        }
        params
    }

    /// The (axis, value) pairs a row of point `index` (`< len()`) carries:
    /// [`Grid::params`] with a named workload labelled with what overrides
    /// it (as [`Grid::point`] labels it), without building the point.
    pub fn labels(&self, index: usize) -> Vec<(String, String)> {
        let mut params = self.params(index);
        label_overrides(&mut params, &self.common, &self.workloads);
        params
    }

    /// Whether `row` is this grid's point at its index: the sweep identity,
    /// the point count and the axis values all agree. `Err` says which differs.
    pub fn check_row(&self, row: &Row) -> Result<(), String> {
        if row.sweep != self.sweep {
            return Err(format!(
                "is from another sweep (identity {:?}, this one {:?}: the grid, base \
                 configuration, seed or ssdsim version differ)",
                row.sweep, self.sweep
            ));
        }
        if row.points != self.total {
            return Err(format!(
                "claims a sweep of {} points, this one has {} (a damaged row)",
                row.points, self.total
            ));
        }
        if row.index >= self.total {
            return Err(format!(
                "is outside the sweep's {} points (a damaged row)",
                self.total
            ));
        }
        let want = self.labels(row.index);
        if row.params != want {
            let show = |p: &[(String, String)]| {
                p.iter()
                    .map(|(k, v)| format!("{k}={v}"))
                    .collect::<Vec<_>>()
                    .join(" ")
            };
            return Err(format!(
                "has the parameters {:?}, but point {} of this sweep is {:?} (a damaged or \
                 edited row: its results are another point's)",
                show(&row.params),
                row.index,
                show(&want)
            ));
        }
        Ok(())
    }

    /// Point `index` (`< len()`), its configuration built and validated.
    pub fn point(&self, index: usize) -> Point {
        let mut params = self.params(index);
        let cfg = match self.prefix_len() {
            Some(n) => self.prefix(index / n, &params).and_then(|mut c| {
                let last = params.last().expect("two or more axes");
                apply_param(&mut c, last, &self.workloads)?;
                finish_point(c, &params, &self.common, self.base.sim.seed)
            }),
            None => build_point(
                &self.base,
                &params,
                &self.common,
                &self.workloads,
                self.base.sim.seed,
            ),
        };
        label_overrides(&mut params, &self.common, &self.workloads);
        Point {
            index,
            params,
            cfg,
            sweep: self.sweep.clone(),
            points: self.total,
        }
    }

    /// The length of the last axis when the points' configurations are
    /// built from a cached prefix ([`PrefixCache`]): with two or more axes,
    /// the last of which is set last (no axis after it in [`apply_order`]).
    fn prefix_len(&self) -> Option<usize> {
        let (last, rest) = self.axes.split_last()?;
        let set_last = rest
            .iter()
            .all(|a| apply_order(&a.key) <= apply_order(&last.key));
        (!rest.is_empty() && set_last).then(|| last.values.len().max(1))
    }

    /// The base with every axis of `params` but the last set: prefix `key`
    /// (`index / prefix_len()`), from the cache or built and cached.
    fn prefix(&self, key: usize, params: &[(String, String)]) -> Result<SsdConfig, String> {
        let slot = &self.prefixes.slots[key % PREFIX_SLOTS];
        let cached = |g: &Option<Prefix>| {
            g.as_ref()
                .filter(|(k, _)| *k == key)
                .map(|(_, c)| c.clone())
        };
        // A poisoned slot only lost its entry: the lock is taken anyway.
        if let Some(c) = cached(&slot.lock().unwrap_or_else(|e| e.into_inner())) {
            return c;
        }
        let (_, head) = params.split_last().expect("two or more axes");
        let mut c = self.base.clone();
        let built = apply_params(&mut c, head, &self.workloads).map(|()| c);
        *slot.lock().unwrap_or_else(|e| e.into_inner()) = Some((key, built.clone()));
        built
    }

    /// The indices of shard `i` of `n` (`index mod n == i`), in grid order.
    pub fn shard_indices(&self, i: usize, n: usize) -> impl Iterator<Item = usize> {
        (i.min(self.total)..self.total).step_by(n.max(1))
    }

    /// How many points shard `i` of `n` has.
    pub fn shard_len(&self, i: usize, n: usize) -> usize {
        self.total.saturating_sub(i).div_ceil(n.max(1))
    }
}

/// Expand axes into points (first axis varies slowest). Each point's seed is
/// derived from the master seed and the point's parameters, never its position.
/// Every point is built at once: a sweep uses [`Grid`], which builds them as
/// they run.
pub fn expand(
    base: &SsdConfig,
    axes: &[Axis],
    common: &[(String, String)],
    workloads: &BTreeMap<String, WorkloadDef>,
) -> Vec<Point> {
    let g = Grid::new(base, axes, common, workloads);
    (0..g.len()).map(|i| g.point(i)).collect()
}

/// A named workload whose own settings other axes or flags override is
/// labelled with the overrides (`seq-read (rw=randwrite)`), so that no row
/// calls a random-write run `seq-read` (a shorter or longer run, `number_ios`,
/// keeps its name). The seed was derived from the plain label.
fn label_overrides(
    params: &mut [(String, String)],
    common: &[(String, String)],
    workloads: &BTreeMap<String, WorkloadDef>,
) {
    let Some(i) = params.iter().position(|(k, _)| k == "workload") else {
        return;
    };
    let Some(def) = workloads.get(&params[i].1) else {
        return;
    };
    // How many requests it runs does not change what the workload is.
    let over: Vec<String> = def
        .iter()
        .filter(|(wk, _)| wk != "number_ios")
        .filter_map(|(wk, wv)| {
            params
                .iter()
                .chain(common)
                .rfind(|(k, _)| k == wk || k.strip_prefix("workload.") == Some(wk.as_str()))
                .filter(|(_, v)| v != wv)
                .map(|(k, v)| format!("{k}={v}"))
        })
        .collect();
    if !over.is_empty() {
        params[i].1 = format!("{} ({})", params[i].1, over.join(", "));
    }
}

/// The order a point's keys are set in: presets first (they replace whole
/// sections), then named workloads (so that an explicit `--number_ios`, or
/// any workload flag, overrides its default), then the rest, each group in
/// axis order.
fn apply_order(k: &str) -> u8 {
    if matches!(k, "nand" | "interface" | "power") {
        0
    } else if matches!(k, "workload" | "personality" | "trace") {
        1
    } else {
        2
    }
}

fn build_point(
    base: &SsdConfig,
    params: &[(String, String)],
    common: &[(String, String)],
    workloads: &BTreeMap<String, WorkloadDef>,
    master: u64,
) -> Result<SsdConfig, String> {
    let mut c = base.clone();
    apply_params(&mut c, params, workloads)?;
    finish_point(c, params, common, master)
}

/// Set the axis values `params` on `c`, in [`apply_order`].
fn apply_params(
    c: &mut SsdConfig,
    params: &[(String, String)],
    workloads: &BTreeMap<String, WorkloadDef>,
) -> Result<(), String> {
    let mut ps: Vec<&(String, String)> = params.iter().collect();
    ps.sort_by_key(|(k, _)| apply_order(k));
    for p in ps {
        apply_param(c, p, workloads)?;
    }
    Ok(())
}

/// Set one axis value: a named workload's settings, or a key.
fn apply_param(
    c: &mut SsdConfig,
    (k, v): &(String, String),
    workloads: &BTreeMap<String, WorkloadDef>,
) -> Result<(), String> {
    if k == "workload" {
        let def = workloads.get(v).ok_or_else(|| {
            format!(
                "unknown workload {v:?} (known: {})",
                workloads.keys().cloned().collect::<Vec<_>>().join(", ")
            )
        })?;
        for (wk, wv) in def {
            apply_key(c, wk, wv)?;
        }
        Ok(())
    } else {
        apply_key(c, k, v)
    }
}

/// A point's configuration once its axis values are set: the common keys,
/// the flow keys' check, `number_ios`, the point's seed, validation.
fn finish_point(
    mut c: SsdConfig,
    params: &[(String, String)],
    common: &[(String, String)],
    master: u64,
) -> Result<SsdConfig, String> {
    for (k, v) in common {
        apply_key(&mut c, k, v)?;
    }
    crate::check_flow_keys(&c, params.iter().chain(common).map(|(k, _)| k.as_str()))
        .map_err(|e| e.to_string())?;
    // An explicit number_ios (an axis or a flag, not a named workload's own)
    // also ends a personality or a trace, as in `run`.
    let given = |key: &str| {
        params.iter().chain(common).any(|(k, _)| {
            k == key
                || k.strip_prefix("workload.") == Some(key)
                || k.strip_prefix("replay.") == Some(key)
        })
    };
    if given("number_ios") {
        crate::number_ios_to_source(&mut c, given("max-requests") || given("max_requests"))
            .map_err(|e| e.to_string())?;
    }
    crate::fs_implies_file_level(&mut c, params.iter().chain(common).map(|(k, _)| k.as_str()));
    // The `size` flag ends the job as fio's `size=` does (as in `run`).
    if params.iter().chain(common).any(|(k, _)| k == "size") {
        crate::size_ends_the_job(&mut c, given("number_ios"));
    }
    let label: Vec<String> = params.iter().map(|(k, v)| format!("{k}={v}")).collect();
    // 63 bits: seeds round-trip through TOML (signed 64-bit integers).
    c.sim.seed = derive_seed(master, &label.join(",")) >> 1;
    // Points that build the same drive and precondition it alike start from
    // the same preconditioned drive, which the sweep makes once
    // (crate::state): its seed is derived from the master seed and the
    // drive (plus a seed the point names, so that replications by seed stay
    // independent), not from the workload.
    if c.sim.precondition_seed.is_none()
        && c.sim.precondition != ssdsim_host::config::Precondition::None
    {
        let mut drive = c.drive_shape();
        for (k, v) in params.iter().chain(common) {
            if k == "seed" || k == "sim.seed" {
                drive.push_str(&format!("\n{k}={v}"));
            }
        }
        c.sim.precondition_seed = Some(derive_seed(master, &drive) >> 1);
    }
    c.validate().map_err(|e| e.to_string())?;
    Ok(c)
}

fn apply_key(c: &mut SsdConfig, k: &str, v: &str) -> Result<(), String> {
    if k.contains('.') {
        set_field(c, k, v).map_err(|e| e.to_string())
    } else {
        apply_flag(c, k, v).map_err(|e| e.to_string())
    }
}

/// One row of sweep output.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Row {
    /// The point's index in the grid.
    pub index: usize,
    /// The point's axis values: (axis key, value).
    pub params: Vec<(String, String)>,
    /// The seed the point ran with.
    pub seed: u64,
    /// The seed its preconditioning drew from (`sim.precondition_seed`:
    /// one per drive of the sweep).
    #[serde(default)]
    pub precondition_seed: u64,
    /// Host requests completed.
    pub requests: u64,
    /// The preconditioning the point ran after (none, fill or steady).
    #[serde(default)]
    pub precondition: String,
    /// Requests per simulated second.
    pub iops: f64,
    /// Host throughput, MB/s (10^6 bytes).
    pub mbps: f64,
    /// Mean latency of all requests, microseconds; `None` (JSON `null`, an
    /// empty CSV cell, `n/a` in the tables) for a point whose device
    /// completed no request (a buffered run whose calls all hit the cache).
    #[serde(default)]
    pub lat_mean_us: Option<f64>,
    /// 99th-percentile latency of all requests, microseconds (`None` as
    /// `lat_mean_us`).
    #[serde(default)]
    pub lat_p99_us: Option<f64>,
    /// 99th-percentile read latency, microseconds; `None` for a point that
    /// completed no read, where a percentile has no meaning.
    #[serde(default)]
    pub read_p99_us: Option<f64>,
    /// 99th-percentile write latency, microseconds; `None` for a point that
    /// completed no write.
    #[serde(default)]
    pub write_p99_us: Option<f64>,
    /// Write amplification (flash programs / host pages); `None` (JSON
    /// `null`, an empty CSV cell, `n/a` in the tables) for a point whose
    /// host wrote nothing, where the ratio has no meaning.
    #[serde(default)]
    pub waf: Option<f64>,
    /// Block erases.
    pub erases: u64,
    /// Pages copied by garbage collection.
    pub gc_copies: u64,
    /// Total energy, joules (None without the power model).
    pub energy_j: Option<f64>,
    /// Mean power, watts (None without the power model).
    pub mean_power_w: Option<f64>,
    /// The least power sample, watts: each sample is the mean over one
    /// sampling interval (`--power-sample`). None without the power model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_power_w: Option<f64>,
    /// The largest power sample, watts (as `min_power_w`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_power_w: Option<f64>,
    /// The standard deviation of the power samples, watts (as `min_power_w`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub power_std_w: Option<f64>,
    /// Aggregative indicator, IOPS / W (None without the power model).
    pub ai: Option<f64>,
    /// Buffered runs: the application's calls per second (`app.iops`);
    /// `iops` is the block requests the device served.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub app_iops: Option<f64>,
    /// File-level Filebench runs: Filebench's ops/s (its IO Summary, every
    /// flowop counted; `filebench.io_summary.ops_per_s`), the IOPS `ai`
    /// divides then.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ops_s: Option<f64>,
    /// Runs of two or more flows: MQSim's fairness (min over max slowdown).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fairness: Option<f64>,
    /// Simulated seconds of the measured phase.
    pub sim_time_s: f64,
    /// Wall-clock seconds the point took.
    pub wall_s: f64,
    /// Why the point failed (its other metrics are then zero), None on success.
    pub error: Option<String>,
    /// What the run warned of that makes its figures not the workload's
    /// (a file-level run that skipped flowops: [`crate::skipped_flowops_warning`]);
    /// `ssdsim sweep` prints each on stderr with the point's parameters.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
    /// The identity of the sweep the row belongs to ([`identity`]).
    #[serde(default)]
    pub sweep: String,
    /// The number of points of that sweep (before sharding).
    #[serde(default)]
    pub points: usize,
    /// A checksum of the row's sweep, point count, index and parameters
    /// ([`row_check`]): `merge`, which has no grid to compare a shard's rows
    /// with (`--resume` compares them with the grid, [`Grid::check_row`]),
    /// refuses a row whose parameters were edited or damaged. Empty in rows
    /// of an older ssdsim.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub check: String,
    /// Latency CDF points (us, fraction) for plots; not written to CSV/Markdown.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cdf: Vec<(f64, f64)>,
}

/// [`Row::check`]: FNV-1a over the sweep's identity, its point count, the
/// point's index and its parameters, one per line.
pub fn row_check(sweep: &str, points: usize, index: usize, params: &[(String, String)]) -> String {
    let mut text = format!("{sweep}\n{points}\n{index}");
    for (k, v) in params {
        text.push('\n');
        text.push_str(k);
        text.push('=');
        text.push_str(v);
    }
    ssd_core::stats::fnv1a(&text)
}

fn extra_f64(r: &ssd_core::stats::Report, section: &str, key: &str) -> Option<f64> {
    r.extra.get(section)?.get(key)?.as_f64()
}

/// Run one point (a panic inside the simulation included) and summarise it as a row; a failure
/// is reported in the row's `error`.
pub fn run_point(p: &Point, opts: &RunOptions) -> Row {
    run_point_full(p, opts).0
}

/// [`run_point`], keeping the run's whole output (`None` when the point
/// failed: its row says why).
pub fn run_point_full(p: &Point, opts: &RunOptions) -> (Row, Option<crate::RunOutput>) {
    let mut row = Row {
        index: p.index,
        params: p.params.clone(),
        seed: 0,
        precondition_seed: 0,
        requests: 0,
        precondition: String::new(),
        iops: 0.0,
        mbps: 0.0,
        lat_mean_us: None,
        lat_p99_us: None,
        read_p99_us: None,
        write_p99_us: None,
        waf: None,
        erases: 0,
        gc_copies: 0,
        energy_j: None,
        mean_power_w: None,
        min_power_w: None,
        max_power_w: None,
        power_std_w: None,
        ai: None,
        app_iops: None,
        ops_s: None,
        fairness: None,
        sim_time_s: 0.0,
        wall_s: 0.0,
        error: None,
        warnings: vec![],
        sweep: p.sweep.clone(),
        points: p.points,
        check: row_check(&p.sweep, p.points, p.index, &p.params),
        cdf: vec![],
    };
    let cfg = match &p.cfg {
        Ok(c) => c,
        Err(e) => {
            row.error = Some(e.clone());
            return (row, None);
        }
    };
    row.seed = cfg.sim.seed;
    row.precondition_seed = cfg.sim.precondition_seed();
    let started = std::time::Instant::now();
    // A failure (or a panic inside one simulation) is reported in its row.
    let res = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| run_config(cfg, opts)));
    row.wall_s = started.elapsed().as_secs_f64();
    match res {
        Ok(Ok(out)) => {
            let r = &out.report;
            row.requests = r.host.requests;
            row.precondition = r.run.precondition.clone();
            row.iops = r.host.iops;
            row.mbps = r.host.mbps;
            // A latency of no request is not 0: it has no value.
            let any = r.host.requests > 0;
            row.lat_mean_us = any.then_some(r.latency_us.all.mean);
            row.lat_p99_us = any.then_some(r.latency_us.all.p99);
            row.read_p99_us = (r.host.reads > 0).then_some(r.latency_us.read.p99);
            row.write_p99_us = (r.host.writes > 0).then_some(r.latency_us.write.p99);
            row.waf = r.flash.waf;
            row.erases = r.flash.block_erases;
            row.gc_copies = r.flash.gc_page_copies;
            row.energy_j = extra_f64(r, "energy_j", "total");
            row.mean_power_w = extra_f64(r, "power_w", "mean");
            row.min_power_w = extra_f64(r, "power_w", "min");
            row.max_power_w = extra_f64(r, "power_w", "max");
            row.power_std_w = extra_f64(r, "power_w", "std");
            row.ai = extra_f64(r, "efficiency", "ai");
            row.app_iops = extra_f64(r, "app", "iops");
            row.ops_s = r
                .extra
                .get("filebench")
                .and_then(|f| f.get("io_summary"))
                .and_then(|f| f.get("ops_per_s"))
                .and_then(|x| x.as_f64());
            row.fairness = extra_f64(r, "fairness", "fairness");
            row.sim_time_s = r.host.sim_time_s;
            row.warnings = crate::skipped_flowops_warning(&r.notes)
                .into_iter()
                .collect();
            row.cdf = out.cdf.clone();
            return (row, Some(out));
        }
        Ok(Err(e)) => row.error = Some(e.to_string()),
        Err(panic) => {
            let msg = panic
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_default();
            row.error = Some(format!("simulation panicked: {msg}"));
        }
    }
    (row, None)
}

/// Keep the points of shard `i` of `n` (index mod n == i).
pub fn shard(points: Vec<Point>, i: usize, n: usize) -> Vec<Point> {
    points.into_iter().filter(|p| p.index % n == i).collect()
}

/// The variable that gives `--shard auto` the number of shards of a
/// Kubernetes indexed Job (its `.spec.completions`, which Kubernetes does not
/// put in the pods' environment).
pub const SHARD_COUNT_VAR: &str = "SSDSIM_SHARD_COUNT";

/// `--shard auto`: this process's shard (I, N) and where it came from, read
/// through `env` (a variable's value, `None` when unset) from a Slurm job
/// array (`SLURM_ARRAY_TASK_ID` with `SLURM_ARRAY_TASK_COUNT`, or with
/// `SLURM_ARRAY_TASK_MIN`/`MAX`: I = ID - MIN) or a Kubernetes indexed Job
/// (`JOB_COMPLETION_INDEX` with [`SHARD_COUNT_VAR`]). Refused, saying why:
/// none set, both set, a value that is not a number, an array that is not
/// one contiguous range (a step, a list), an index outside it.
pub fn shard_from_env(
    env: impl Fn(&str) -> Option<String>,
) -> Result<(usize, usize, String), String> {
    let num = |k: &str| -> Result<Option<usize>, String> {
        match env(k) {
            None => Ok(None),
            Some(v) => v
                .trim()
                .parse::<usize>()
                .map(Some)
                .map_err(|_| format!("{k}={v:?} is not a non-negative integer")),
        }
    };
    let id = num("SLURM_ARRAY_TASK_ID")?;
    let k8s = num("JOB_COMPLETION_INDEX")?;
    let pass = "pass --shard I/N instead";
    match (id, k8s) {
        (None, None) => Err(format!(
            "no array task in the environment: neither SLURM_ARRAY_TASK_ID (a Slurm job \
             array, sbatch --array) nor JOB_COMPLETION_INDEX (a Kubernetes indexed Job) is \
             set; {pass}"
        )),
        (Some(i), Some(k)) => Err(format!(
            "both SLURM_ARRAY_TASK_ID={i} and JOB_COMPLETION_INDEX={k} are set: which one \
             numbers the shards is ambiguous; {pass}"
        )),
        (Some(id), None) => {
            let count = num("SLURM_ARRAY_TASK_COUNT")?;
            let min = num("SLURM_ARRAY_TASK_MIN")?;
            let max = num("SLURM_ARRAY_TASK_MAX")?;
            if let Some(step) = num("SLURM_ARRAY_TASK_STEP")? {
                if step != 1 {
                    return Err(format!(
                        "SLURM_ARRAY_TASK_STEP={step}: the array's task ids are not one \
                         contiguous range, so ID - MIN does not number the shards; submit \
                         --array=0-(N-1) or {pass}"
                    ));
                }
            }
            if let (Some(lo), Some(hi)) = (min, max) {
                if lo > hi {
                    return Err(format!(
                        "SLURM_ARRAY_TASK_MIN={lo} is above SLURM_ARRAY_TASK_MAX={hi}"
                    ));
                }
                if !(lo..=hi).contains(&id) {
                    return Err(format!(
                        "SLURM_ARRAY_TASK_ID={id} is outside SLURM_ARRAY_TASK_MIN..MAX = {lo}..{hi}"
                    ));
                }
                if let Some(c) = count {
                    if c != hi - lo + 1 {
                        return Err(format!(
                            "SLURM_ARRAY_TASK_COUNT={c} but MIN..MAX = {lo}..{hi} spans {} ids: \
                             the array is not one contiguous range (a list or a step), so \
                             ID - MIN does not number the shards; {pass}",
                            hi - lo + 1
                        ));
                    }
                }
            }
            let (i, n, from) = match (count, min, max) {
                (Some(c), lo, _) => {
                    let lo = lo.unwrap_or(0);
                    if id < lo {
                        return Err(format!(
                            "SLURM_ARRAY_TASK_ID={id} is below SLURM_ARRAY_TASK_MIN={lo}"
                        ));
                    }
                    (id - lo, c, "SLURM_ARRAY_TASK_ID, SLURM_ARRAY_TASK_COUNT")
                }
                (None, Some(lo), Some(hi)) => (
                    id - lo,
                    hi - lo + 1,
                    "SLURM_ARRAY_TASK_ID, SLURM_ARRAY_TASK_MIN/MAX",
                ),
                _ => {
                    return Err(format!(
                        "SLURM_ARRAY_TASK_ID={id} is set but neither SLURM_ARRAY_TASK_COUNT nor \
                         SLURM_ARRAY_TASK_MIN and SLURM_ARRAY_TASK_MAX: the number of shards is \
                         unknown; {pass}"
                    ))
                }
            };
            if n == 0 || i >= n {
                return Err(format!(
                    "SLURM_ARRAY_TASK_ID={id} gives shard {i} of {n} ({from}): not a shard; {pass}"
                ));
            }
            Ok((i, n, from.to_string()))
        }
        (None, Some(k)) => {
            let Some(n) = num(SHARD_COUNT_VAR)? else {
                return Err(format!(
                    "JOB_COMPLETION_INDEX={k} is set, but Kubernetes does not put the Job's \
                     number of completions in the environment: set {SHARD_COUNT_VAR} to the \
                     Job's .spec.completions, or pass --shard {k}/N"
                ));
            };
            if n == 0 || k >= n {
                return Err(format!(
                    "JOB_COMPLETION_INDEX={k} is not below {SHARD_COUNT_VAR}={n}: not a shard \
                     (is {SHARD_COUNT_VAR} the Job's .spec.completions?)"
                ));
            }
            Ok((k, n, format!("JOB_COMPLETION_INDEX, {SHARD_COUNT_VAR}")))
        }
    }
}

/// The most worker threads a sweep takes (`--threads`): far more than points
/// run at once on any machine, and each simulation holds a whole drive.
pub const MAX_THREADS: usize = 1024;

/// The most points one sweep process runs (its shard, or the whole grid when
/// not sharded): each becomes a row held until the tables are written, about
/// 4.5 KiB of memory a row when they are (measured on `merge`: 456 MB for
/// 100,000 rows).
pub const MAX_POINTS: usize = 100_000;

/// The most points a grid may have, run as shards of at most [`MAX_POINTS`]
/// each. A grid costs the memory of its axes whatever its size (points are
/// built as they run), so the bound is `merge`'s, which holds every row:
/// 1,000,000 rows took 4.5 GB and 53 s to merge; ten times that would not fit
/// a 24 GB machine. Beyond it a value list is almost always a mistake.
pub const MAX_GRID_POINTS: usize = 1_000_000;

fn axes_label(axes: &[Axis]) -> String {
    axes.iter()
        .map(|a| format!("{} x{}", a.key, a.values.len()))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The number of points of `axes`, refused (naming the axes' sizes) beyond
/// [`MAX_GRID_POINTS`], before anything is built.
pub fn grid_size(axes: &[Axis]) -> Result<usize, String> {
    let total = axes
        .iter()
        .try_fold(1usize, |n, a| n.checked_mul(a.values.len().max(1)));
    match total {
        Some(n) if n <= MAX_GRID_POINTS => Ok(n),
        _ => Err(format!(
            "the grid has {} points ({}); a grid takes at most {MAX_GRID_POINTS}, run as \
             shards (--shard I/N) of at most {MAX_POINTS}: split it into several sweeps or \
             shorten a value list",
            total.map_or_else(|| "more than 2^64".to_string(), |n| n.to_string()),
            axes_label(axes)
        )),
    }
}

/// Refuse shard `i` of `n` of the grid of `axes` (`total` points) if it has
/// more than [`MAX_POINTS`] points to run in one process.
pub fn check_shard_size(axes: &[Axis], total: usize, i: usize, n: usize) -> Result<(), String> {
    let count = total.saturating_sub(i).div_ceil(n.max(1));
    if count <= MAX_POINTS {
        return Ok(());
    }
    let least = total.div_ceil(MAX_POINTS);
    Err(if n == 1 {
        format!(
            "the grid has {total} points ({}); one sweep runs at most {MAX_POINTS}: run it \
             as {least} or more shards (--shard I/{least} for I from 0 to {}, then `merge`) \
             or shorten a value list",
            axes_label(axes),
            least - 1
        )
    } else {
        format!(
            "--shard {i}/{n}: the shard has {count} of the grid's {total} points ({}); one \
             sweep runs at most {MAX_POINTS}: use {least} or more shards",
            axes_label(axes)
        )
    })
}

/// Run points on `threads` threads (0 = all cores, at most [`MAX_THREADS`]);
/// rows come back in grid order. `on_row(done, total, row)` is called as each
/// point finishes (from the worker thread). After [`request_stop`] no further
/// point starts, and only the rows of finished points come back. An error if
/// the thread pool cannot be made.
pub fn run_points(
    points: &[Point],
    threads: usize,
    opts: &RunOptions,
    on_row: impl Fn(usize, usize, &Row) + Sync,
) -> Result<Vec<Row>, String> {
    run_each(
        points.len(),
        |k| Some(Cow::Borrowed(&points[k])),
        threads,
        opts,
        on_row,
    )
}

/// [`run_points`] over shard `shard.0` of `shard.1` of a lazily expanded
/// grid, less the indices in `skip` (points already done): each point is
/// built by the worker that runs it, so memory grows with the rows produced,
/// not with the grid. The same rows as `run_points` over the same points.
pub fn run_grid(
    grid: &Grid,
    shard: (usize, usize),
    skip: &std::collections::BTreeSet<usize>,
    threads: usize,
    opts: &RunOptions,
    on_row: impl Fn(usize, usize, &Row) + Sync,
) -> Result<Vec<Row>, String> {
    let (i, n) = (shard.0, shard.1.max(1));
    let count = grid.shard_len(i, n);
    let skipped = skip
        .iter()
        .filter(|&&x| x < grid.len() && x % n == i)
        .count();
    run_each(
        count,
        |k| {
            let index = i + k * n;
            (!skip.contains(&index)).then(|| Cow::Owned(grid.point(index)))
        },
        threads,
        opts,
        |done, _, row| on_row(done, count - skipped, row),
    )
}

/// Run `point(k)` for `k` in `0..count` (`None`: nothing to run) on the pool.
fn run_each<'a>(
    count: usize,
    point: impl Fn(usize) -> Option<Cow<'a, Point>> + Sync,
    threads: usize,
    opts: &RunOptions,
    on_row: impl Fn(usize, usize, &Row) + Sync,
) -> Result<Vec<Row>, String> {
    if threads > MAX_THREADS {
        return Err(format!(
            "--threads {threads}: at most {MAX_THREADS} (0 = one per core)"
        ));
    }
    let done = AtomicUsize::new(0);
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .map_err(|e| format!("cannot start {threads} worker threads: {e}"))?;
    // Points that precondition the same drive alike share it: the first to
    // start preconditions, the others start from a copy (crate::state). They
    // run next to each other, so that a drive is dropped soon after it is
    // made and a sweep holds few at a time; rows come back in grid order.
    let keys: Vec<Option<u64>> = pool.install(|| {
        (0..count)
            .into_par_iter()
            .map(|k| {
                let p = point(k)?;
                let cfg = p.cfg.as_ref().ok()?;
                crate::state::shape_of(cfg).map(|s| crate::state::shape_key(&s))
            })
            .collect()
    });
    let cache = std::sync::Arc::new(crate::state::StateCache::new(
        keys.iter().flatten().copied(),
    ));
    let mut first: std::collections::HashMap<u64, usize> = std::collections::HashMap::new();
    for (k, key) in keys.iter().enumerate() {
        if let Some(key) = key {
            first.entry(*key).or_insert(k);
        }
    }
    let mut order: Vec<usize> = (0..count).collect();
    order.sort_by_key(|&k| (keys[k].map_or(k, |key| first[&key]), k));
    drop(first);
    drop(keys);
    let shared;
    let opts = if cache.is_empty() || opts.drive_state.load.is_some() {
        opts
    } else {
        shared = RunOptions {
            drive_state: crate::state::DriveStateOpts {
                shared: Some(cache),
                ..opts.drive_state.clone()
            },
            ..opts.clone()
        };
        &shared
    };
    let mut rows: Vec<(usize, Row)> = pool.install(|| {
        order
            .into_par_iter()
            .filter_map(|k| {
                if stop_requested() {
                    return None;
                }
                let p = point(k)?;
                let r = run_point(&p, opts);
                on_row(done.fetch_add(1, Ordering::Relaxed) + 1, count, &r);
                Some((k, r))
            })
            .collect()
    });
    rows.sort_by_key(|&(k, _)| k);
    Ok(rows.into_iter().map(|(_, r)| r).collect())
}

// ------------------------------------------------------------------ output

const METRICS: &[&str] = &[
    "precondition",
    "iops",
    "mbps",
    "lat_mean_us",
    "lat_p99_us",
    "read_p99_us",
    "write_p99_us",
    "waf",
    "erases",
    "gc_copies",
    "energy_j",
    "mean_power_w",
    "min_power_w",
    "max_power_w",
    "power_std_w",
    "ai",
    "app_iops",
    "ops_s",
    "fairness",
    "sim_time_s",
    "seed",
    "error",
];

/// The metrics of `rows`: `app_iops` only where a run was buffered,
/// `ops_s` only where one ran Filebench on files, `fairness` only where
/// one had flows.
fn metrics(rows: &[Row]) -> Vec<&'static str> {
    let app = rows.iter().any(|r| r.app_iops.is_some());
    let ops = rows.iter().any(|r| r.ops_s.is_some());
    let fair = rows.iter().any(|r| r.fairness.is_some());
    METRICS
        .iter()
        .copied()
        .filter(|&m| (app || m != "app_iops") && (ops || m != "ops_s") && (fair || m != "fairness"))
        .collect()
}

fn param_keys(rows: &[Row]) -> Vec<String> {
    axes_of(rows).into_iter().map(|(k, _)| k).collect()
}

/// The axes of `rows` in order of first appearance, each with its values
/// in order of appearance.
pub fn axes_of(rows: &[Row]) -> Vec<(String, Vec<String>)> {
    let mut axes: Vec<(String, Vec<String>)> = Vec::new();
    for r in rows {
        for (k, v) in &r.params {
            match axes.iter_mut().find(|(a, _)| a == k) {
                Some((_, vs)) => {
                    if !vs.contains(v) {
                        vs.push(v.clone());
                    }
                }
                None => axes.push((k.clone(), vec![v.clone()])),
            }
        }
    }
    axes
}

/// Whether an axis key is the preconditioning (`--precondition`,
/// `sim.precondition`), which each row also reports in `precondition`.
fn is_precondition_axis(k: &str) -> bool {
    matches!(k, "precondition" | "sim.precondition")
}

/// Whether the `precondition` metric only repeats a preconditioning axis:
/// every point that ran reports the value its axis gave it.
fn precondition_is_an_axis(rows: &[Row]) -> bool {
    rows.iter()
        .any(|r| r.params.iter().any(|(k, _)| is_precondition_axis(k)))
        && rows.iter().filter(|r| r.error.is_none()).all(|r| {
            r.params
                .iter()
                .find(|(k, _)| is_precondition_axis(k))
                .is_some_and(|(_, v)| v.trim().eq_ignore_ascii_case(r.precondition.trim()))
        })
}

/// Row `r`'s value of axis `k` as a reader is shown it: a named
/// workload's label (`rand-read (precondition=fill, bs=8KiB)`, what
/// overrides the workload's own settings) without the overrides that are
/// axes of the sweep (`keys`) or the preconditioning, which the tables show
/// in a column of their own or state once.
fn shown_value(r: &Row, k: &str, keys: &[String]) -> String {
    let v = param(r, k);
    if k != "workload" {
        return v;
    }
    let Some((name, over)) = v.strip_suffix(')').and_then(|x| x.split_once(" (")) else {
        return v;
    };
    let parts: Vec<(&str, &str)> = match over
        .split(", ")
        .map(|p| p.split_once('='))
        .collect::<Option<Vec<_>>>()
    {
        Some(p) => p,
        None => return v,
    };
    let kept: Vec<String> = parts
        .iter()
        .filter(|(pk, _)| !(keys.iter().any(|k| k == pk) || is_precondition_axis(pk)))
        .map(|(pk, pv)| format!("{pk}={pv}"))
        .collect();
    if kept.is_empty() {
        name.to_string()
    } else {
        format!("{name} ({})", kept.join(", "))
    }
}

/// How a sweep's rows are shown to a reader (the terminal table, the
/// Markdown and HTML tables, the charts): the axes whose value differs
/// between rows, each with its values, and the settings every row has
/// alike, stated once rather than as a column and in every label: the
/// axes of one value and the preconditioning when every point that ran
/// reports the same one.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Layout {
    /// The axes that vary, in axis order, with their values in order of
    /// appearance.
    pub varying: Vec<(String, Vec<String>)>,
    /// (setting, value) alike in every row.
    pub fixed: Vec<(String, String)>,
}

impl Layout {
    /// The layout of `rows`.
    pub fn of(rows: &[Row]) -> Layout {
        let keys: Vec<String> = param_keys(rows);
        let mut l = Layout::default();
        for k in &keys {
            let mut vals: Vec<String> = Vec::new();
            for r in rows {
                let v = shown_value(r, k, &keys);
                if !vals.contains(&v) {
                    vals.push(v);
                }
            }
            let everywhere = rows.iter().all(|r| r.params.iter().any(|(pk, _)| pk == k));
            if vals.len() == 1 && everywhere {
                l.fixed.push((k.clone(), vals.remove(0)));
            } else {
                l.varying.push((k.clone(), vals));
            }
        }
        let ran: Vec<&Row> = rows.iter().filter(|r| r.error.is_none()).collect();
        if let Some(first) = ran.first() {
            let same = ran.iter().all(|r| r.precondition == first.precondition);
            let axis = keys.iter().any(|k| is_precondition_axis(k));
            if same && !axis && !first.precondition.is_empty() {
                l.fixed
                    .push(("precondition".into(), first.precondition.clone()));
            }
        }
        l
    }

    /// Row `r`'s value of axis `k` as shown: a named workload's label
    /// without the overrides that are axes of the sweep or the
    /// preconditioning (`rand-read`, not `rand-read (precondition=fill)`
    /// beside a `precondition` column).
    pub fn value(&self, r: &Row, k: &str) -> String {
        let keys: Vec<String> = self
            .varying
            .iter()
            .map(|(k, _)| k.clone())
            .chain(self.fixed.iter().map(|(k, _)| k.clone()))
            .collect();
        shown_value(r, k, &keys)
    }

    /// The varying axes' keys.
    pub fn keys(&self) -> Vec<&str> {
        self.varying.iter().map(|(k, _)| k.as_str()).collect()
    }

    /// `fixed: k=v, k=v` (empty when nothing is fixed).
    pub fn fixed_line(&self) -> String {
        if self.fixed.is_empty() {
            return String::new();
        }
        let kv: Vec<String> = self.fixed.iter().map(|(k, v)| format!("{k}={v}")).collect();
        format!("fixed: {}", kv.join(", "))
    }

    /// A point's label: its values of the varying axes in axis order,
    /// joined by `/` (so that the points of one value of the first axis,
    /// which varies slowest, sit together); `point N` when no axis varies.
    pub fn label(&self, r: &Row) -> String {
        if self.varying.is_empty() {
            return format!("point {}", r.index);
        }
        self.varying
            .iter()
            .map(|(k, _)| self.value(r, k))
            .collect::<Vec<_>>()
            .join("/")
    }

    /// Whether the metric column `m` is shown (a fixed preconditioning is
    /// stated once; one that repeats an axis is that axis's column).
    fn shows(&self, rows: &[Row], m: &str) -> bool {
        m != "precondition"
            || !(self.fixed.iter().any(|(k, _)| k == "precondition")
                || precondition_is_an_axis(rows))
    }
}

fn metric(r: &Row, m: &str) -> String {
    let f = |x: f64| {
        if x == 0.0 {
            "0".to_string()
        } else if x.abs() >= 100.0 {
            format!("{x:.1}")
        } else {
            format!("{x:.4}")
        }
    };
    let o = |x: Option<f64>| x.map(f).unwrap_or_default();
    match m {
        "precondition" => r.precondition.clone(),
        "iops" => f(r.iops),
        "mbps" => f(r.mbps),
        "lat_mean_us" => o(r.lat_mean_us),
        "lat_p99_us" => o(r.lat_p99_us),
        "read_p99_us" => o(r.read_p99_us),
        "write_p99_us" => o(r.write_p99_us),
        "waf" => o(r.waf),
        "erases" => r.erases.to_string(),
        "gc_copies" => r.gc_copies.to_string(),
        "energy_j" => o(r.energy_j),
        "mean_power_w" => o(r.mean_power_w),
        "min_power_w" => o(r.min_power_w),
        "max_power_w" => o(r.max_power_w),
        "power_std_w" => o(r.power_std_w),
        "ai" => o(r.ai),
        "app_iops" => o(r.app_iops),
        "ops_s" => o(r.ops_s),
        "fairness" => o(r.fairness),
        "sim_time_s" => f(r.sim_time_s),
        "seed" => r.seed.to_string(),
        "error" => r.error.clone().unwrap_or_default(),
        _ => String::new(),
    }
}

/// A metric's cell for a reader: [`metric`], with `n/a` for a WAF or a
/// latency that has no meaning (a point that ran and wrote nothing, read
/// nothing, or whose device completed no request).
fn shown_metric(r: &Row, m: &str) -> String {
    let none = match m {
        "waf" => r.waf.is_none(),
        "lat_mean_us" => r.lat_mean_us.is_none(),
        "lat_p99_us" => r.lat_p99_us.is_none(),
        "read_p99_us" => r.read_p99_us.is_none(),
        "write_p99_us" => r.write_p99_us.is_none(),
        _ => false,
    };
    if none && r.error.is_none() {
        return "n/a".into();
    }
    metric(r, m)
}

fn param(r: &Row, k: &str) -> String {
    r.params
        .iter()
        .find(|(pk, _)| pk == k)
        .map(|(_, v)| v.clone())
        .unwrap_or_default()
}

/// The unit of a column of the sweep tables (a metric),
/// where it has one.
pub fn column_unit(column: &str) -> Option<&'static str> {
    Some(match column {
        "iops" => "requests/s",
        "app_iops" => "calls/s",
        "ops_s" => "ops/s",
        "mbps" => "MB/s",
        "lat_mean_us" | "lat_p99_us" | "read_p99_us" | "write_p99_us" => "µs",
        "erases" => "blocks",
        "gc_copies" => "pages",
        "energy_j" => "J",
        "mean_power_w" | "min_power_w" | "max_power_w" | "power_std_w" => "W",
        "ai" => "IOPS/W",
        "sim_time_s" => "s",
        _ => return None,
    })
}

/// The CSV table's columns (the index, every parameter, the metrics; the
/// `precondition` metric left out where it repeats a preconditioning axis)
/// and one line of cells per row (an empty cell where a metric has no
/// value, such as the WAF of a point that wrote nothing).
pub fn columns(rows: &[Row]) -> (Vec<String>, Vec<Vec<String>>) {
    let keys = param_keys(rows);
    let dup = precondition_is_an_axis(rows);
    let ms: Vec<&str> = metrics(rows)
        .into_iter()
        .filter(|m| !(dup && *m == "precondition"))
        .collect();
    let mut header: Vec<String> = vec!["index".into()];
    header.extend(keys.iter().cloned());
    header.extend(ms.iter().map(|s| s.to_string()));
    let body = rows
        .iter()
        .map(|r| {
            let mut v = vec![r.index.to_string()];
            v.extend(keys.iter().map(|k| param(r, k)));
            v.extend(ms.iter().map(|m| metric(r, m)));
            v
        })
        .collect();
    (header, body)
}

/// The tables' columns for a reader (Markdown, HTML): as [`columns`], less
/// what [`Layout`] states once (the axes of one value, a preconditioning
/// every row has), with `n/a` for a WAF or a latency that has no meaning.
pub fn shown_columns(rows: &[Row], layout: &Layout) -> (Vec<String>, Vec<Vec<String>>) {
    let keys = layout.keys();
    let ms: Vec<&str> = metrics(rows)
        .into_iter()
        .filter(|m| layout.shows(rows, m))
        .collect();
    let mut header: Vec<String> = vec!["index".into()];
    header.extend(keys.iter().map(|k| k.to_string()));
    header.extend(ms.iter().map(|s| s.to_string()));
    let body = rows
        .iter()
        .map(|r| {
            let mut v = vec![r.index.to_string()];
            v.extend(keys.iter().map(|k| layout.value(r, k)));
            v.extend(ms.iter().map(|m| shown_metric(r, m)));
            v
        })
        .collect();
    (header, body)
}

/// Write `bytes` to `path` through a temporary file renamed into place.
fn write_file(path: &Path, bytes: &[u8]) -> Result<(), String> {
    ssd_core::outfile::write_bytes_atomic(path, bytes)
        .map_err(|e| format!("{}: cannot write: {e}", path.display()))
}

/// Write the rows as a CSV table (index, parameters, metrics) to `path`, atomically.
pub fn write_csv(rows: &[Row], path: &Path) -> Result<(), String> {
    let (h, body) = columns(rows);
    let mut w = csv::Writer::from_writer(Vec::new());
    w.write_record(&h).map_err(|e| e.to_string())?;
    for r in body {
        w.write_record(&r).map_err(|e| e.to_string())?;
    }
    let bytes = w.into_inner().map_err(|e| e.to_string())?;
    write_file(path, &bytes)
}

/// Write the rows as JSON lines (one object per row) to `path`, atomically.
pub fn write_jsonl(rows: &[Row], path: &Path) -> Result<(), String> {
    let mut s = String::new();
    for r in rows {
        s.push_str(&serde_json::to_string(r).map_err(|e| e.to_string())?);
        s.push('\n');
    }
    write_file(path, s.as_bytes())
}

/// The rows of a `--jsonl` file that a sweep was appending to when it was
/// killed: a last line cut short is dropped (its point runs again); any
/// other bad line is an error. Returns the rows and whether a line was dropped.
pub fn read_jsonl_partial(path: &Path) -> Result<(Vec<Row>, bool), String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("{}: cannot read: {e}", path.display()))?;
    let mut rows = Vec::new();
    let complete = text.ends_with('\n');
    let lines: Vec<&str> = text.lines().collect();
    let mut dropped = false;
    for (i, l) in lines.iter().enumerate() {
        if l.trim().is_empty() {
            continue;
        }
        match serde_json::from_str::<Row>(l) {
            Ok(r) => rows.push(r),
            Err(_) if i + 1 == lines.len() && !complete => dropped = true,
            Err(e) => return Err(format!("{}:{}: {e}", path.display(), i + 1)),
        }
    }
    Ok((rows, dropped))
}

/// Read the rows of a JSON-lines file; an error names the file and line.
pub fn read_jsonl(path: &Path) -> Result<Vec<Row>, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("{}: cannot read: {e}", path.display()))?;
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| {
            serde_json::from_str(l).map_err(|e| format!("{}:{}: {e}", path.display(), i + 1))
        })
        .collect()
}

/// The rows as a Markdown table: the CSV's columns less what is alike in
/// every row, which a line above the table states once ([`Layout`]).
pub fn markdown(rows: &[Row]) -> String {
    let layout = Layout::of(rows);
    let (h, body) = shown_columns(rows, &layout);
    let mut s = String::new();
    let fixed = layout.fixed_line();
    if !fixed.is_empty() {
        s.push_str(&fixed.replace('|', "\\|"));
        s.push_str("\n\n");
    }
    s.push_str(&format!(
        "| {} |\n|{}|\n",
        h.join(" | "),
        h.iter().map(|_| "---").collect::<Vec<_>>().join("|")
    ));
    for r in body {
        s.push_str(&format!(
            "| {} |\n",
            r.iter()
                .map(|c| c.replace('|', "\\|"))
                .collect::<Vec<_>>()
                .join(" | ")
        ));
    }
    s
}

/// The terminal table: key parameters and the headline metrics.
pub fn table(rows: &[Row]) -> String {
    // Kept hand-written because a failed point's message runs on past the
    // metric columns without widening them, which comfy-table cannot draw
    // (it has no column spans) and tabled only with spans that widen the
    // columns; either would change the output and add a dependency to the
    // library's lean build, for the 40 lines below (issue 29).
    // What every row has alike is stated once, above the table.
    let layout = Layout::of(rows);
    let keys: Vec<String> = layout.keys().into_iter().map(String::from).collect();
    let show: Vec<&str> = {
        let mut v = vec![
            "precondition",
            "iops",
            "lat_mean_us",
            "lat_p99_us",
            "waf",
            "erases",
        ];
        v.retain(|m| layout.shows(rows, m));
        if rows.iter().any(|r| r.energy_j.is_some()) {
            v.extend(["energy_j", "mean_power_w", "ai"]);
        }
        if rows.iter().any(|r| r.app_iops.is_some()) {
            v.push("app_iops");
        }
        if rows.iter().any(|r| r.ops_s.is_some()) {
            v.push("ops_s");
        }
        if rows.iter().any(|r| r.fairness.is_some()) {
            v.push("fairness");
        }
        v
    };
    let mut header: Vec<String> = keys.clone();
    header.extend(show.iter().map(|s| s.to_string()));
    let mut lines: Vec<Vec<String>> = rows
        .iter()
        .map(|r| {
            let mut v: Vec<String> = keys.iter().map(|k| layout.value(r, k)).collect();
            if let Some(e) = &r.error {
                v.push(format!("FAILED: {e}"));
            } else {
                v.extend(show.iter().map(|m| shown_metric(r, m)));
            }
            v
        })
        .collect();
    lines.insert(0, header);
    let ncol = lines.iter().map(|l| l.len()).max().unwrap_or(0);
    let widths: Vec<usize> = (0..ncol)
        .map(|c| {
            lines
                .iter()
                .filter(|l| l.len() > c && !(l.len() < ncol && c == l.len() - 1))
                .map(|l| l[c].len())
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut s = layout.fixed_line();
    if !s.is_empty() {
        s.push('\n');
    }
    for l in &lines {
        let cells: Vec<String> = l
            .iter()
            .enumerate()
            .map(|(i, c)| {
                if i + 1 == l.len() && l.len() < ncol {
                    c.clone()
                } else {
                    format!("{:>w$}", c, w = widths[i])
                }
            })
            .collect();
        s.push_str(cells.join("  ").trim_end());
        s.push('\n');
    }
    s
}

/// A metric charted per point: its column name, what it is, its unit and
/// its value in a row (`None`: no value, such as the WAF of a point that
/// wrote nothing, drawn as `n/a` and no bar).
#[derive(Clone, Copy)]
pub struct ChartMetric {
    /// The metric's column name (`iops`, `waf`, ...).
    pub name: &'static str,
    /// Its title on the chart.
    pub title: &'static str,
    /// Its unit.
    pub unit: &'static str,
    /// Its value in a row.
    pub get: fn(&Row) -> Option<f64>,
}

/// The metrics charted per point (one chart each) for the rows `ok` (those
/// without an error): IOPS, p99 latency, WAF and erases, and with the power
/// model energy, mean power and AI.
pub fn chart_metrics(ok: &[&Row]) -> Vec<ChartMetric> {
    let m = |name, title, unit, get| ChartMetric {
        name,
        title,
        unit,
        get,
    };
    let mut v = vec![
        m("iops", "IOPS", "requests/s", |r: &Row| Some(r.iops)),
        m("lat_p99_us", "p99 latency", "µs", |r: &Row| r.lat_p99_us),
        m("waf", "WAF", "flash programs / host pages", |r: &Row| r.waf),
        m("erases", "block erases", "blocks", |r: &Row| {
            Some(r.erases as f64)
        }),
    ];
    if ok.iter().any(|r| r.energy_j.is_some()) {
        v.push(m("energy_j", "energy", "J", |r: &Row| r.energy_j));
        v.push(m("mean_power_w", "mean power", "W", |r: &Row| {
            r.mean_power_w
        }));
        v.push(m("ai", "AI", "IOPS/W", |r: &Row| r.ai));
    }
    v
}

/// The most bars of a sweep's bar chart (its first points; the tables have
/// every one).
pub const MAX_BARS: usize = 200;

/// The most curves of a sweep's latency CDF chart (its first points).
pub const MAX_CURVES: usize = 40;

/// Bar charts per metric ([`chart_metrics`], one bar per point labelled by
/// its values of the axes that vary, [`Layout::label`]; what every point
/// has alike is stated once under the title) and the points' latency CDFs,
/// as SVG files in `dir` (the `plots` feature): `NAME.svg` per metric and
/// `latency_cdf.svg`. They are the charts of the HTML report.
#[cfg(feature = "plots")]
pub fn plot(rows: &[Row], dir: &Path) -> Result<Vec<std::path::PathBuf>, String> {
    use crate::chart;
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let ok: Vec<&Row> = rows.iter().filter(|r| r.error.is_none()).collect();
    let layout = Layout::of(rows);
    let mut note = layout.fixed_line();
    let failed = rows.len() - ok.len();
    let shown = &ok[..ok.len().min(MAX_BARS)];
    let mut more = Vec::new();
    if failed > 0 {
        more.push(format!("{failed} failed points left out"));
    }
    if shown.len() < ok.len() {
        more.push(format!("the first {} of {} points", shown.len(), ok.len()));
    }
    if !more.is_empty() {
        if !note.is_empty() {
            note.push_str("; ");
        }
        note.push_str(&more.join("; "));
    }
    let mut files = vec![];
    let mut write = |name: &str, svg: String| -> Result<(), String> {
        let path = dir.join(name);
        write_file(&path, chart::standalone(&svg).as_bytes())?;
        files.push(path);
        Ok(())
    };
    for m in chart_metrics(&ok) {
        write(
            &format!("{}.svg", m.name),
            sweep_bars(&m, shown, &layout, &note),
        )?;
    }
    let with_cdf: Vec<&Row> = ok.iter().copied().filter(|r| !r.cdf.is_empty()).collect();
    let curves = &with_cdf[..with_cdf.len().min(MAX_CURVES)];
    let mut cdf_note = layout.fixed_line();
    if curves.len() < with_cdf.len() {
        if !cdf_note.is_empty() {
            cdf_note.push_str("; ");
        }
        cdf_note.push_str(&format!(
            "the first {} of {} points",
            curves.len(),
            with_cdf.len()
        ));
    }
    write("latency_cdf.svg", sweep_cdf(curves, &layout, &cdf_note))?;
    Ok(files)
}

/// The colour of a sweep's point: by its value of the first axis that
/// varies ([`Layout`]), with the legend that says so (two or more values).
#[cfg(any(feature = "html", feature = "plots"))]
pub(crate) struct SweepColors<'a> {
    layout: &'a Layout,
    group: Option<&'a (String, Vec<String>)>,
}

#[cfg(any(feature = "html", feature = "plots"))]
impl<'a> SweepColors<'a> {
    pub(crate) fn of(layout: &'a Layout) -> Self {
        SweepColors {
            layout,
            group: layout.varying.first(),
        }
    }

    pub(crate) fn color(&self, r: &Row) -> &'static str {
        let Some((k, vals)) = self.group else {
            return crate::chart::PALETTE[0];
        };
        let v = self.layout.value(r, k);
        let i = vals.iter().position(|x| *x == v).unwrap_or(0);
        crate::chart::PALETTE[i % crate::chart::PALETTE.len()]
    }

    pub(crate) fn legend(&self) -> Vec<(String, &'static str)> {
        match self.group {
            Some((k, vals)) => vals
                .iter()
                .take(30)
                .enumerate()
                .map(|(i, v)| {
                    (
                        format!("{k} = {v}"),
                        crate::chart::PALETTE[i % crate::chart::PALETTE.len()],
                    )
                })
                .collect(),
            None => Vec::new(),
        }
    }
}

/// A sweep's bar chart of metric `m`: a bar per point of `shown`, labelled
/// by its values of the axes that vary (`n/a` where the metric has no
/// value).
#[cfg(any(feature = "html", feature = "plots"))]
pub(crate) fn sweep_bars(m: &ChartMetric, shown: &[&Row], layout: &Layout, note: &str) -> String {
    let colors = SweepColors::of(layout);
    let bars = shown
        .iter()
        .map(|r| {
            let v = (m.get)(r);
            crate::chart::Bar {
                label: layout.label(r),
                value: v,
                color: colors.color(r),
                text: v.map_or_else(|| "n/a".to_string(), crate::chart::fmt_value),
            }
        })
        .collect();
    crate::chart::BarChart {
        id: &format!("sweep-{}", m.name.replace('_', "-")),
        title: &format!("{} per point", m.title),
        note,
        x_label: &format!("{} ({})", m.title, m.unit),
        y_label: "point",
        header: &layout.keys().join("/"),
        bars,
        legend: colors.legend(),
    }
    .svg()
}

/// A sweep's latency CDFs: a curve per point of `curves` (which carry
/// one), named as its bars are.
#[cfg(any(feature = "html", feature = "plots"))]
pub(crate) fn sweep_cdf(curves: &[&Row], layout: &Layout, note: &str) -> String {
    let lines = curves
        .iter()
        .enumerate()
        .map(|(i, r)| crate::chart::Line {
            name: layout.label(r),
            color: crate::chart::PALETTE[i % crate::chart::PALETTE.len()],
            dash: crate::chart::DASHES
                [(i / crate::chart::PALETTE.len()) % crate::chart::DASHES.len()],
            width: 1.6,
            points: r.cdf.clone(),
        })
        .collect();
    crate::chart::LineChart::latency_cdf(
        "sweep-latency-cdf",
        "Latency CDF per point",
        note,
        lines,
        &layout.keys().join("/"),
    )
    .svg()
}

#[cfg(test)]
mod tests;
