//! Python bindings of ssdsim: the native module `ssdsim._ssdsim`, re-exported
//! by the Python package `ssdsim` (python/ssdsim/__init__.py).
//!
//! Configurations are resolved exactly as the CLI resolves them
//! ([`ssdsim::resolve_config_text`]: TOML over the defaults, then `--set`-style
//! fields), sweeps are planned as `ssdsim sweep --grid` plans them
//! ([`ssdsim::sweep::plan`]) and run by the same code. Every error becomes a
//! Python exception; a panic inside a simulation is caught and raised as
//! `SimulationError`. The GIL is released while simulations run.

use pyo3::exceptions::{PyException, PyKeyboardInterrupt, PyOSError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};
use ssdsim::sweep::{self as sw, GridFile, Row, SweepSpec};
use ssdsim::{RunError, RunOptions};
use ssdsim_host::config::{ConfigError, SsdConfig};
use std::path::PathBuf;

pyo3::create_exception!(
    _ssdsim,
    InputError,
    PyValueError,
    "Bad input: a configuration, a field or a workload the simulator refuses \
     (the CLI's exit code 2). `field` names the configuration field when the \
     error is about one, else None."
);
pyo3::create_exception!(
    _ssdsim,
    SweepError,
    InputError,
    "Points of a sweep failed. `rows` holds every row (a failed point says why \
     in its `error`)."
);
pyo3::create_exception!(
    _ssdsim,
    SimulationError,
    PyException,
    "A simulation stopped on an internal error (a bug in ssdsim): please report it \
     with the configuration."
);

/// A `RunError` as the Python exception for it.
fn run_err(py: Python<'_>, e: RunError) -> PyErr {
    match e {
        RunError::Io(m) => PyOSError::new_err(m),
        RunError::Interrupted(m) => PyKeyboardInterrupt::new_err(m),
        other => {
            let field = match &other {
                RunError::Config(ConfigError::Invalid { field, .. }) => Some(field.clone()),
                _ => None,
            };
            input_error(py, other.to_string(), field)
        }
    }
}

/// An `InputError` with its `field` attribute.
fn input_error(py: Python<'_>, msg: String, field: Option<String>) -> PyErr {
    let err = InputError::new_err(msg);
    // Setting an attribute on a fresh exception object cannot fail in practice;
    // if it did, the error is still raised, without `field`.
    let _ = err.value(py).setattr("field", field);
    err
}

fn config_err(py: Python<'_>, e: ConfigError) -> PyErr {
    run_err(py, RunError::Config(e))
}

/// A Python value (from a dict given as configuration or grid) as TOML: JSON
/// first (pythonize), then TOML, naming the field (`at`) that has no TOML form.
fn json_to_toml(v: serde_json::Value, at: &str) -> Result<toml::Value, String> {
    use serde_json::Value as J;
    let name = |k: &str| {
        if at.is_empty() {
            k.to_string()
        } else {
            format!("{at}.{k}")
        }
    };
    Ok(match v {
        J::Null => {
            return Err(format!(
                "{}: None has no TOML form (leave the field out for its default)",
                if at.is_empty() { "(top level)" } else { at }
            ))
        }
        J::Bool(b) => toml::Value::Boolean(b),
        J::Number(n) => match n.as_i64() {
            Some(i) => toml::Value::Integer(i),
            None if n.is_u64() => {
                return Err(format!(
                    "{at}: {n} is out of range: configuration integers are TOML's, from {} to {}",
                    i64::MIN,
                    i64::MAX
                ))
            }
            None => toml::Value::Float(n.as_f64().unwrap_or(f64::NAN)),
        },
        J::String(s) => toml::Value::String(s),
        J::Array(a) => toml::Value::Array(
            a.into_iter()
                .enumerate()
                .map(|(i, x)| json_to_toml(x, &name(&i.to_string())))
                .collect::<Result<_, _>>()?,
        ),
        J::Object(m) => toml::Value::Table(
            m.into_iter()
                .map(|(k, x)| {
                    let v = json_to_toml(x, &name(&k))?;
                    Ok((k, v))
                })
                .collect::<Result<_, String>>()?,
        ),
    })
}

/// A dict as TOML text (`what` names it in errors).
fn dict_to_toml(py: Python<'_>, d: &Bound<'_, PyAny>, what: &str) -> PyResult<String> {
    let v: serde_json::Value = pythonize::depythonize(d).map_err(|e| {
        PyTypeError::new_err(format!(
            "{what}: a dict of TOML values (str, int, float, bool, list, dict) was expected: {e}"
        ))
    })?;
    let t = json_to_toml(v, "").map_err(|m| input_error(py, format!("{what}: {m}"), None))?;
    if !t.is_table() {
        return Err(PyTypeError::new_err(format!("{what}: expected a dict")));
    }
    toml::to_string(&t).map_err(|e| input_error(py, format!("{what}: {e}"), None))
}

/// A configuration or grid argument as (TOML text, its source name): TOML
/// text as a str, a dict of sections, or a path (os.PathLike) to a file.
fn toml_arg(py: Python<'_>, obj: &Bound<'_, PyAny>, what: &str) -> PyResult<(String, String)> {
    if let Ok(s) = obj.downcast::<PyString>() {
        let text = s.to_cow()?.into_owned();
        let t = text.trim();
        if !t.contains('=') && !t.contains('[') && !t.contains('\n') && t.ends_with(".toml") {
            return Err(input_error(
                py,
                format!(
                    "{what}: {t:?} looks like a file name, not TOML text: \
                     pass pathlib.Path({t:?}) to read the file"
                ),
                None,
            ));
        }
        return Ok((text, what.to_string()));
    }
    if obj.downcast::<PyDict>().is_ok() {
        return Ok((dict_to_toml(py, obj, what)?, what.to_string()));
    }
    if let Ok(p) = obj.extract::<PathBuf>() {
        let text = std::fs::read_to_string(&p)
            .map_err(|e| PyOSError::new_err(format!("{}: cannot read: {e}", p.display())))?;
        return Ok((text, p.display().to_string()));
    }
    Err(PyTypeError::new_err(format!(
        "{what}: expected TOML text (str), a dict or a path (os.PathLike), not {}",
        obj.get_type().name()?
    )))
}

/// A `set=` value as the text `--set FIELD=VALUE` would give.
fn set_value_text(py: Python<'_>, field: &str, v: &Bound<'_, PyAny>) -> PyResult<String> {
    if let Ok(s) = v.downcast::<PyString>() {
        return Ok(s.to_cow()?.into_owned());
    }
    if let Ok(b) = v.downcast::<PyBool>() {
        return Ok(if b.is_true() { "true" } else { "false" }.to_string());
    }
    if v.downcast::<PyInt>().is_ok() || v.downcast::<PyFloat>().is_ok() {
        return Ok(v.str()?.to_cow()?.into_owned());
    }
    let j: serde_json::Value = pythonize::depythonize(v).map_err(|e| {
        PyTypeError::new_err(format!(
            "set: {field}: expected a str, int, float, bool, list or dict: {e}"
        ))
    })?;
    let t = json_to_toml(j, field).map_err(|m| input_error(py, format!("set: {m}"), None))?;
    Ok(t.to_string())
}

/// `set=`: a dict {field: value}, or a list of (field, value) pairs or of
/// "FIELD=VALUE" strings, in order.
fn set_pairs(py: Python<'_>, set: Option<&Bound<'_, PyAny>>) -> PyResult<Vec<(String, String)>> {
    let Some(set) = set.filter(|s| !s.is_none()) else {
        return Ok(Vec::new());
    };
    let mut out = Vec::new();
    let mut push = |k: &Bound<'_, PyAny>, v: &Bound<'_, PyAny>| -> PyResult<()> {
        let k: String = k
            .extract()
            .map_err(|_| PyTypeError::new_err("set: field names must be str"))?;
        let v = set_value_text(py, &k, v)?;
        out.push((k.trim().to_string(), v.trim().to_string()));
        Ok(())
    };
    if let Ok(d) = set.downcast::<PyDict>() {
        for (k, v) in d.iter() {
            push(&k, &v)?;
        }
        return Ok(out);
    }
    if set.downcast::<PyString>().is_err() {
        if let Ok(items) = set.try_iter() {
            for item in items {
                let item = item?;
                if let Ok(s) = item.downcast::<PyString>() {
                    let s = s.to_cow()?;
                    let (k, v) = s.split_once('=').ok_or_else(|| {
                        input_error(py, format!("set: {s:?}: expected FIELD=VALUE"), None)
                    })?;
                    let (k, v) = (PyString::new(py, k), PyString::new(py, v));
                    push(k.as_any(), v.as_any())?;
                } else if item.downcast::<PyTuple>().is_ok() || item.downcast::<PyList>().is_ok() {
                    let pair: Vec<Bound<'_, PyAny>> = item.extract()?;
                    let [k, v] = pair.as_slice() else {
                        return Err(PyTypeError::new_err(
                            "set: each pair must be (field, value)",
                        ));
                    };
                    push(k, v)?;
                } else {
                    return Err(PyTypeError::new_err(
                        "set: expected (field, value) pairs or \"FIELD=VALUE\" strings",
                    ));
                }
            }
            return Ok(out);
        }
    }
    Err(PyTypeError::new_err(format!(
        "set: expected a dict or a list of (field, value) pairs, not {}",
        set.get_type().name()?
    )))
}

/// The configuration a `run` resolves (TOML over the defaults, then the
/// `set` fields), as the CLI's `resolve_config` does.
fn resolve(
    py: Python<'_>,
    config: Option<&Bound<'_, PyAny>>,
    flags: &[(String, String)],
) -> PyResult<SsdConfig> {
    let text = match config.filter(|c| !c.is_none()) {
        Some(c) => Some(toml_arg(py, c, "config")?),
        None => None,
    };
    let (text, name) = match &text {
        Some((t, n)) => (Some(t.as_str()), n.as_str()),
        None => (None, ""),
    };
    ssdsim::resolve_config_text(text, name, flags).map_err(|e| run_err(py, e))
}

/// The message of a caught panic.
fn panic_text(p: Box<dyn std::any::Any + Send>) -> String {
    p.downcast_ref::<String>()
        .cloned()
        .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_default()
}

/// Run one simulation and return its report as a dict (the JSON of
/// `ssdsim run --format json`).
///
/// config: TOML text (str), a dict of sections ({"ftl": {"kind": "dftl"}}),
///     a path (os.PathLike) to a TOML file, or None for the defaults; merged
///     over the defaults as `--config` is.
/// set: fields set after the configuration, as `--set FIELD=VALUE` does: a
///     dict {"ftl.op": 0.28, "workload.number_ios": 2000} or a list of
///     (field, value) pairs; flag names (`ftl`, `nand`, `number_ios`) too.
/// power: attach the power model (energy_j, power_w, efficiency).
///
/// Raises InputError (a ValueError) naming the field for bad input, and
/// SimulationError if a simulation fails internally. The GIL is released
/// while the simulation runs. The same configuration and seed give the same
/// dict.
#[pyfunction]
#[pyo3(signature = (config=None, *, set=None, power=true))]
fn run(
    py: Python<'_>,
    config: Option<&Bound<'_, PyAny>>,
    set: Option<&Bound<'_, PyAny>>,
    power: bool,
) -> PyResult<PyObject> {
    let flags = set_pairs(py, set)?;
    let cfg = resolve(py, config, &flags)?;
    let opts = RunOptions {
        power,
        ..RunOptions::default()
    };
    let res = py.allow_threads(move || {
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            cfg.validate()?;
            ssdsim::run_config(&cfg, &opts)
        }))
    });
    let out = match res {
        Ok(r) => r.map_err(|e| run_err(py, e))?,
        Err(p) => {
            return Err(SimulationError::new_err(format!(
                "simulation panicked: {}",
                panic_text(p)
            )))
        }
    };
    Ok(pythonize::pythonize(py, &out.report)?.unbind())
}

/// The configuration `run` would simulate, resolved and validated, as TOML
/// text (`ssdsim run --print-config`).
#[pyfunction]
#[pyo3(signature = (config=None, *, set=None))]
fn resolve_config(
    py: Python<'_>,
    config: Option<&Bound<'_, PyAny>>,
    set: Option<&Bound<'_, PyAny>>,
) -> PyResult<String> {
    let flags = set_pairs(py, set)?;
    let cfg = resolve(py, config, &flags)?;
    cfg.validate().map_err(|e| config_err(py, e))?;
    Ok(cfg.to_toml())
}

/// A row as a dict: the JSON of `ssdsim sweep --jsonl`, with `params` a dict
/// {axis: value} in axis order.
fn row_dict<'py>(py: Python<'py>, r: &Row) -> PyResult<Bound<'py, PyAny>> {
    let d = pythonize::pythonize(py, r)?;
    let params = PyDict::new(py);
    for (k, v) in &r.params {
        params.set_item(k, v)?;
    }
    d.set_item("params", params)?;
    Ok(d)
}

/// Run a sweep as `ssdsim sweep --grid GRID` does and return its rows (one
/// dict per point, in grid order).
///
/// grid: a grid file's TOML text (str), the same as a dict ({"base": {...},
///     "grid": {"ftl": ["page", "dftl"], ...}, "workloads": {...}}), or a
///     path (os.PathLike) to a grid file. Without a workload axis the
///     standard workload set is swept, as by the CLI.
/// threads: worker threads (0 = one per core).
/// set: fields set on every point (as `--set`), applied after the axes.
/// config: the base configuration under the grid's [base] (as `--config`).
/// errors: "raise" (default) raises SweepError, holding every row in
///     `rows`, if any point failed; "keep" returns the rows, each failed one
///     saying why in `error`.
///
/// Each point's seed is derived from the master seed (`sim.seed`) and the
/// point's parameters, so rows do not depend on threads or order; a point
/// that preconditions draws it from `precondition_seed`, one per drive of
/// the sweep, so that points of one drive share its preconditioning. The GIL is
/// released while the points run; KeyboardInterrupt stops starting points and
/// raises once the running ones finish.
#[pyfunction]
#[pyo3(name = "sweep", signature = (grid, *, threads=0, set=None, config=None, errors="raise"))]
fn sweep_grid(
    py: Python<'_>,
    grid: &Bound<'_, PyAny>,
    threads: usize,
    set: Option<&Bound<'_, PyAny>>,
    config: Option<&Bound<'_, PyAny>>,
    errors: &str,
) -> PyResult<PyObject> {
    if !matches!(errors, "raise" | "keep") {
        return Err(PyValueError::new_err(format!(
            "errors={errors:?}: expected \"raise\" or \"keep\""
        )));
    }
    if threads > sw::MAX_THREADS {
        return Err(input_error(
            py,
            format!(
                "threads={threads}: at most {} (0 = one per core)",
                sw::MAX_THREADS
            ),
            None,
        ));
    }
    let common = set_pairs(py, set)?;
    let config = config.filter(|c| !c.is_none());
    let base = resolve(py, config, &[])?;
    let (text, name) = toml_arg(py, grid, "grid")?;
    let gf = GridFile::parse_str(&text, &name).map_err(|m| input_error(py, m, None))?;
    let plan = sw::plan(SweepSpec {
        base,
        base_given: config.is_some(),
        grid: Some((gf, name)),
        set: common,
        ..SweepSpec::default()
    })
    .map_err(|e| run_err(py, e))?;
    let grid = plan.grid();
    if grid.len() > sw::MAX_POINTS {
        return Err(input_error(
            py,
            format!(
                "the grid has {} points: at most {} in one sweep",
                grid.len(),
                sw::MAX_POINTS
            ),
            None,
        ));
    }
    // The points run on a thread of their own while this one, holding the
    // GIL only for a moment now and then, watches for KeyboardInterrupt.
    let mut interrupted = None;
    let result = std::thread::scope(|s| {
        let worker = s.spawn(|| {
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                sw::run_grid(
                    &grid,
                    (0, 1),
                    &Default::default(),
                    threads,
                    &RunOptions::default(),
                    |_, _, _| {},
                )
            }))
        });
        while !worker.is_finished() {
            py.allow_threads(|| std::thread::sleep(std::time::Duration::from_millis(20)));
            if interrupted.is_none() {
                if let Err(e) = py.check_signals() {
                    sw::request_stop();
                    interrupted = Some(e);
                }
            }
        }
        worker.join()
    });
    if interrupted.is_some() {
        sw::clear_stop();
    }
    let rows = match result {
        Ok(Ok(r)) => r.map_err(PyOSError::new_err)?,
        Ok(Err(p)) | Err(p) => {
            return Err(SimulationError::new_err(format!(
                "sweep panicked: {}",
                panic_text(p)
            )))
        }
    };
    if let Some(e) = interrupted {
        return Err(e);
    }
    let list = PyList::empty(py);
    for r in &rows {
        list.append(row_dict(py, r)?)?;
    }
    let failed: Vec<&Row> = rows.iter().filter(|r| r.error.is_some()).collect();
    if errors == "raise" && !failed.is_empty() {
        let first = failed[0];
        let params: Vec<String> = first
            .params
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        let err = SweepError::new_err(format!(
            "{} of the sweep's {} points failed; the first, point {} ({}): {} \
             (errors=\"keep\" returns the rows instead)",
            failed.len(),
            rows.len(),
            first.index,
            params.join(", "),
            first.error.as_deref().unwrap_or_default()
        ));
        let _ = err.value(py).setattr("rows", &list);
        let _ = err.value(py).setattr("field", None::<String>);
        return Err(err);
    }
    Ok(list.into_any().unbind())
}

/// The built-in presets of one kind, as dicts: "nand" (the NAND chips
/// `--nand` selects, default), "power" (`--power`) or "interface"
/// (`--interface`).
#[pyfunction]
#[pyo3(signature = (kind="nand"))]
fn presets(py: Python<'_>, kind: &str) -> PyResult<PyObject> {
    let all = ssdsim::presets_json();
    match kind {
        "nand" | "power" | "interface" => Ok(pythonize::pythonize(py, &all[kind])?.unbind()),
        other => Err(PyValueError::new_err(format!(
            "presets: unknown kind {other:?} (nand, power, interface)"
        ))),
    }
}

/// The version of ssdsim.
#[pyfunction]
fn version() -> &'static str {
    ssdsim::VERSION
}

#[pymodule]
fn _ssdsim(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add_function(wrap_pyfunction!(resolve_config, m)?)?;
    m.add_function(wrap_pyfunction!(sweep_grid, m)?)?;
    m.add_function(wrap_pyfunction!(presets, m)?)?;
    m.add_function(wrap_pyfunction!(version, m)?)?;
    m.add("InputError", py.get_type::<InputError>())?;
    m.add("SweepError", py.get_type::<SweepError>())?;
    m.add("SimulationError", py.get_type::<SimulationError>())?;
    m.add("FTLS", PyTuple::new(py, ftl_names())?)?;
    m.add("SCHEDULERS", PyTuple::new(py, ssdsim::SCHED_NAMES)?)?;
    m.add("__version__", ssdsim::VERSION)?;
    Ok(())
}

/// The FTL names `ftl.kind` accepts.
fn ftl_names() -> Vec<String> {
    ssdsim::presets_json()["ftl"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|v| v.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}
