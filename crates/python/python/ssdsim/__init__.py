"""ssdsim: simulate flash SSDs (timing, FTLs, host schedulers, energy) from Python.

The simulator is the Rust library behind the ``ssdsim`` command; this package
runs it in-process:

>>> import ssdsim
>>> r = ssdsim.run(set={"rw": "randread", "number_ios": 2000})
>>> r["host"]["requests"]
2000

* :func:`run` runs one configuration and returns its report as a dict (the
  JSON of ``ssdsim run --format json``).
* :func:`sweep` runs a grid as ``ssdsim sweep --grid`` does and returns its
  rows; :func:`sweep_frame` returns them as a pandas DataFrame.
* :func:`resolve_config` shows the configuration a run would simulate.
* :func:`presets` lists the built-in NAND, power and host interface presets.

Bad input raises :class:`InputError` (a ``ValueError``) naming the field, as
the CLI's messages do; failed sweep points raise :class:`SweepError`.
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping, Optional, Sequence, Union

from ._ssdsim import (
    FTLS,
    SCHEDULERS,
    InputError,
    SimulationError,
    SweepError,
    __version__,
    presets,
    resolve_config,
    run,
    sweep,
    version,
)

__all__ = [
    "FTLS",
    "SCHEDULERS",
    "InputError",
    "SimulationError",
    "SweepError",
    "__version__",
    "presets",
    "resolve_config",
    "run",
    "sweep",
    "sweep_frame",
    "version",
]

# The metric columns of a sweep row, in the order `ssdsim sweep --csv` writes
# them (after the index and the parameters), with `precondition_seed`, which
# the JSONL rows carry and the CSV does not.
_METRICS = [
    "precondition",
    "requests",
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
    "wall_s",
    "seed",
    "precondition_seed",
    "error",
    "sweep",
    "points",
]


def _numeric(column: "Any") -> "Any":
    """A column of parameter texts as numbers when every one is a number."""
    import pandas as pd

    try:
        return pd.to_numeric(column)
    except (ValueError, TypeError):
        return column


def sweep_frame(
    grid: Union[str, Mapping[str, Any], "Any", Sequence[Mapping[str, Any]]],
    *,
    threads: int = 0,
    set: Optional[Union[Mapping[str, Any], Iterable[Any]]] = None,
    config: Optional[Union[str, Mapping[str, Any], "Any"]] = None,
    errors: str = "raise",
) -> "Any":
    """Run a sweep (as :func:`sweep`) and return its rows as a pandas DataFrame.

    ``grid`` is what :func:`sweep` takes, or the list of rows a :func:`sweep`
    returned (then nothing is run). One row per point, in grid order: the
    point's ``index``, one column per axis (numbers where every value of the
    axis is one, else text), then the metrics (``iops``, ``mbps``,
    ``lat_p99_us``, ``waf``, ``energy_j``, ... ``seed``, ``error``; ``waf`` is
    missing (NaN) for a point whose host wrote nothing, ``read_p99_us`` for
    one that read nothing, ``write_p99_us`` for one that wrote nothing). The
    latency CDF of each row is left out.

    pandas is imported here: it is needed only for this function.
    """
    try:
        import pandas as pd
    except ImportError as e:  # pragma: no cover - depends on the environment
        raise ImportError(
            "ssdsim.sweep_frame needs pandas, which is not installed: "
            "pip install pandas (or use ssdsim.sweep, which returns a list of dicts)"
        ) from e
    if isinstance(grid, (list, tuple)):
        rows = list(grid)
    else:
        rows = sweep(grid, threads=threads, set=set, config=config, errors=errors)
    axes: list = []
    for r in rows:
        for k in r.get("params", {}):
            if k not in axes:
                axes.append(k)
    records = []
    for r in rows:
        rec = {"index": r.get("index")}
        params = r.get("params", {})
        for k in axes:
            rec[k] = params.get(k)
        for m in _METRICS:
            rec[m] = r.get(m)
        records.append(rec)
    frame = pd.DataFrame.from_records(records, columns=["index", *axes, *_METRICS])
    for k in axes:
        frame[k] = _numeric(frame[k])
    return frame
