"""Type stubs of the native module ssdsim._ssdsim (re-exported by ssdsim)."""

import os
from typing import Any, Dict, Iterable, List, Literal, Mapping, Optional, Tuple, Union

__version__: str

#: The FTL names `ftl.kind` (or the `ftl` flag) accepts.
FTLS: Tuple[str, ...]
#: The host I/O scheduler names `sched.kind` (or the `sched` flag) accepts.
SCHEDULERS: Tuple[str, ...]

#: TOML text, a dict of sections, or a path to a TOML file.
Config = Union[str, Mapping[str, Any], "os.PathLike[str]"]
#: Fields set as `--set FIELD=VALUE` does: {field: value}, (field, value)
#: pairs, or "FIELD=VALUE" strings; values are str, int, float, bool, or
#: lists/dicts for TOML arrays/tables.
SetFields = Union[Mapping[str, Any], Iterable[Union[Tuple[str, Any], List[Any], str]]]

class InputError(ValueError):
    """Bad input (the CLI's exit code 2); `field` names the configuration field
    when the error is about one."""

    field: Optional[str]

class SweepError(InputError):
    """Points of a sweep failed; `rows` holds every row (each failed one says
    why in its `error`)."""

    rows: List[Dict[str, Any]]

class SimulationError(Exception):
    """A simulation stopped on an internal error of ssdsim."""

def run(
    config: Optional[Config] = None,
    *,
    set: Optional[SetFields] = None,
    power: bool = True,
) -> Dict[str, Any]:
    """Run one simulation; the report as a dict (`ssdsim run --format json`).

    The configuration is resolved as the CLI resolves it: `config` over the
    defaults, then the `set` fields. Raises InputError naming the field for
    bad input. The same configuration and seed give the same dict.
    """

def resolve_config(
    config: Optional[Config] = None,
    *,
    set: Optional[SetFields] = None,
) -> str:
    """The resolved, validated configuration `run` would simulate, as TOML."""

def sweep(
    grid: Config,
    *,
    threads: int = 0,
    set: Optional[SetFields] = None,
    config: Optional[Config] = None,
    errors: Literal["raise", "keep"] = "raise",
) -> List[Dict[str, Any]]:
    """Run a grid as `ssdsim sweep --grid` does; one dict per point, in grid
    order (`index`, `params` {axis: value}, `seed`, `iops`, `mbps`,
    `lat_p99_us`, `waf`, `energy_j`, ..., `error`, `cdf`). `waf` is None for
    a point whose host wrote nothing (as the run report's `flash.waf`);
    `read_p99_us` is None for one that completed no read, `write_p99_us` for
    one that completed no write, `lat_mean_us` and `lat_p99_us` for one whose
    device completed no request."""

def presets(kind: Literal["nand", "power", "interface"] = "nand") -> List[Dict[str, Any]]:
    """The built-in presets of one kind, as dicts."""

def version() -> str:
    """The version of ssdsim."""
