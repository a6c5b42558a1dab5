"""Tests of the Python bindings: configurations resolved as the CLI resolves
them, reports as dicts, sweeps whose rows are the runs of their points, errors
as exceptions naming the field, determinism and the GIL released."""

import pathlib
import re
import sys
import threading

import pytest

import ssdsim

N = 1500  # requests per run: small and quick

WRITE_TOML = f"""
[ftl]
kind = "dftl"

[workload]
rw = "randwrite"
number_ios = {N}
"""

WRITE_DICT = {"ftl": {"kind": "dftl"}, "workload": {"rw": "randwrite", "number_ios": N}}

# A 2x2 grid on a base with no preconditioning (quick).
GRID = {
    "base": {"workload": {"number_ios": N}, "sim": {"precondition": "none"}},
    "grid": {"ftl": ["page", "dftl"], "rw": ["randread", "randwrite"]},
}

GRID_TOML = f"""
[base]
workload.number_ios = {N}
sim.precondition = "none"

[grid]
ftl = ["page", "dftl"]
rw = ["randread", "randwrite"]
"""


def no_wall(v):
    """A report without its wall-clock fields (the only ones that vary between
    identical runs)."""
    if isinstance(v, dict):
        return {k: no_wall(x) for k, x in v.items() if not k.endswith("wall_s")}
    if isinstance(v, list):
        return [no_wall(x) for x in v]
    return v


def test_version():
    assert re.fullmatch(r"\d+\.\d+\.\d+.*", ssdsim.version())
    assert ssdsim.__version__ == ssdsim.version()


def test_run_defaults_with_small_number_ios():
    r = ssdsim.run(set={"workload.number_ios": N})
    assert r["host"]["requests"] == N
    assert r["host"]["iops"] > 0
    assert r["latency_us"]["all"]["p99"] > 0
    assert r["run"]["version"] == ssdsim.version()
    # The power model is on by default.
    assert r["energy_j"]["total"] > 0
    assert r["config"]["workload"]["number_ios"] == N


def test_run_without_power():
    r = ssdsim.run(set={"number_ios": N}, power=False)
    assert r["host"]["requests"] == N
    assert "energy_j" not in r


def test_run_toml_string():
    r = ssdsim.run(WRITE_TOML)
    assert r["ftl"]["kind"] == "dftl"
    assert r["host"]["requests"] == N
    assert r["latency_us"]["write"]["count"] == N


def test_run_dict_equals_toml_and_file(tmp_path):
    a = ssdsim.run(WRITE_TOML)
    b = ssdsim.run(WRITE_DICT)
    f = tmp_path / "c.toml"
    f.write_text(WRITE_TOML)
    c = ssdsim.run(f)
    assert no_wall(a) == no_wall(b) == no_wall(c)


def test_set_over_config_in_every_form():
    base = {"ftl": {"kind": "page"}, "workload": {"number_ios": N}}
    forms = [
        {"ftl.kind": "dftl", "ftl.op": 0.2, "sim.drain": False},
        [("ftl.kind", "dftl"), ("ftl.op", 0.2), ("sim.drain", False)],
        ["ftl.kind=dftl", "ftl.op=0.2", "sim.drain=false"],
        # Flag names, as `--set ftl=dftl` (and the CLI's --ftl) take them.
        {"ftl": "dftl", "op": "0.2", "drain": "false"},
    ]
    for s in forms:
        r = ssdsim.run(base, set=s)
        assert r["ftl"]["kind"] == "dftl", s
        assert r["config"]["ftl"]["op"] == pytest.approx(0.2), s


def test_set_later_wins():
    r = ssdsim.run(set=[("number_ios", 1000), ("number_ios", N)])
    assert r["host"]["requests"] == N


def test_resolve_config_matches_cli_resolution():
    text = ssdsim.resolve_config({"ftl": {"kind": "fast"}}, set={"nand": "chip1"})
    assert 'kind = "fast"' in text
    assert 'name = "chip1"' in text


def test_bad_field_raises_naming_it():
    with pytest.raises(ssdsim.InputError) as e:
        ssdsim.run(set={"ftl.no_such_field": 1})
    assert isinstance(e.value, ValueError)
    assert "ftl.no_such_field" in str(e.value)
    assert "unknown configuration field" in str(e.value)
    assert e.value.field == "ftl.no_such_field"


def test_bad_value_raises_naming_field():
    with pytest.raises(ValueError, match=r"nand\.t_r"):
        ssdsim.run(set={"nand.t_r": "fast"})
    # (0 is fio's "no count": the job ends by its size.)
    with pytest.raises(ValueError, match=r"workload\.number_ios"):
        ssdsim.run(set={"workload.number_ios": -1})
    with pytest.raises(ValueError, match="9223372036854775807"):
        ssdsim.run(set={"workload.number_ios": 2**64})


def test_bad_config_raises_naming_field():
    with pytest.raises(ssdsim.InputError, match="nope"):
        ssdsim.run({"ftl": {"nope": 1}})
    with pytest.raises(ssdsim.InputError, match=r"ftl\.kind: None"):
        ssdsim.run({"ftl": {"kind": None}})
    with pytest.raises(ssdsim.InputError, match="config"):
        ssdsim.run("[ftl")
    with pytest.raises(ssdsim.InputError, match="pathlib.Path"):
        ssdsim.run("my-drive.toml")
    with pytest.raises(OSError, match="cannot read"):
        ssdsim.run(pathlib.Path("/nonexistent/drive.toml"))


def test_wrong_types_raise_type_error():
    with pytest.raises(TypeError):
        ssdsim.run(42)
    with pytest.raises(TypeError):
        ssdsim.run(set=5)
    with pytest.raises(TypeError):
        ssdsim.run(set=[("a", 1, 2)])
    with pytest.raises(TypeError):
        ssdsim.run(set={1: 2})


def test_run_that_completes_nothing_is_an_error():
    with pytest.raises(ssdsim.InputError, match="completed no request"):
        ssdsim.run(set={"number_ios": N, "sim.time_limit": "1ns"})


def test_determinism():
    s = {"rw": "randrw", "number_ios": N, "sim.seed": 7}
    a, b = ssdsim.run(set=s), ssdsim.run(set=s)
    assert no_wall(a) == no_wall(b)
    c = ssdsim.run(set={**s, "sim.seed": 8})
    assert no_wall(c) != no_wall(a)


def point_run(base, row):
    """`run` of a sweep row's point: its parameters and the seeds the sweep
    derived for it (the point's, and its drive's preconditioning's)."""
    return ssdsim.run(
        base,
        set={
            **row["params"],
            "sim.seed": row["seed"],
            "sim.precondition_seed": row["precondition_seed"],
        },
    )


def test_sweep_2x2_rows_are_runs_of_their_points():
    rows = ssdsim.sweep(GRID, threads=2)
    assert [r["index"] for r in rows] == [0, 1, 2, 3]
    # The first axis varies slowest, as in the CLI.
    assert [tuple(r["params"].items()) for r in rows] == [
        (("ftl", "page"), ("rw", "randread")),
        (("ftl", "page"), ("rw", "randwrite")),
        (("ftl", "dftl"), ("rw", "randread")),
        (("ftl", "dftl"), ("rw", "randwrite")),
    ]
    seeds = {r["seed"] for r in rows}
    assert len(seeds) == 4, "each point has its own derived seed"
    for row in rows:
        assert row["error"] is None
        assert row["requests"] == N
        assert row["points"] == 4
        r = point_run(GRID["base"], row)
        assert r["run"]["seed"] == row["seed"]
        assert r["host"]["iops"] == row["iops"]
        assert r["flash"]["waf"] == row["waf"]
        assert r["energy_j"]["total"] == row["energy_j"]
        # A direction without requests has no p99 (None, not 0).
        for d in ["read", "write"]:
            want = r["latency_us"][d]["p99"] if r["host"][d + "s"] > 0 else None
            assert row[d + "_p99_us"] == want, d
    assert rows[0]["write_p99_us"] is None and rows[1]["read_p99_us"] is None


def test_sweep_rows_do_not_depend_on_threads_or_spelling():
    a = ssdsim.sweep(GRID, threads=1)
    b = ssdsim.sweep(GRID_TOML, threads=2)
    assert no_wall(a) == no_wall(b)


def test_sweep_set_applies_to_every_point():
    rows = ssdsim.sweep(GRID, set={"ftl.op": 0.25})
    for row in rows:
        r = point_run(GRID["base"], row)  # without the common field: differs
        r2 = ssdsim.run(
            GRID["base"], set={**row["params"], "ftl.op": 0.25, "sim.seed": row["seed"]}
        )
        assert r2["host"]["iops"] == row["iops"]
        assert r2["config"]["ftl"]["op"] == 0.25
        assert r["config"]["ftl"]["op"] != 0.25


def test_sweep_failed_points():
    grid = {
        "base": GRID["base"],
        "grid": {"ftl": ["page", "nosuchftl"], "rw": ["randread"]},
    }
    with pytest.raises(ssdsim.SweepError, match="1 of the sweep's 2 points failed") as e:
        ssdsim.sweep(grid)
    assert isinstance(e.value, ValueError)
    assert len(e.value.rows) == 2
    assert e.value.rows[0]["error"] is None
    assert "nosuchftl" in e.value.rows[1]["error"]
    rows = ssdsim.sweep(grid, errors="keep")
    assert rows[0]["iops"] > 0 and "nosuchftl" in rows[1]["error"]


def test_sweep_without_workload_axis_runs_the_standard_set():
    rows = ssdsim.sweep({"base": GRID["base"], "grid": {"ftl": ["page"]}}, errors="keep")
    assert [r["params"]["workload"] for r in rows] == [
        "seq-read",
        "seq-write",
        "rand-read",
        "rand-write",
        "mix-70-30",
        "oltp",
    ]


def test_sweep_bad_grid():
    with pytest.raises(ssdsim.InputError, match="unknown field"):
        ssdsim.sweep({"axes": {"ftl": ["page"]}})
    with pytest.raises(ssdsim.InputError, match="lists no values"):
        ssdsim.sweep({"grid": {"ftl": []}})
    with pytest.raises(ssdsim.InputError, match="threads"):
        ssdsim.sweep(GRID, threads=100_000)
    with pytest.raises(ValueError, match="errors"):
        ssdsim.sweep(GRID, errors="ignore")


def test_sweep_frame_has_the_columns():
    pd = pytest.importorskip("pandas")
    rows = ssdsim.sweep(GRID)
    df = ssdsim.sweep_frame(rows)
    assert isinstance(df, pd.DataFrame)
    assert len(df) == 4
    for c in ["index", "ftl", "rw", "iops", "mbps", "lat_p99_us", "waf", "energy_j", "seed", "error"]:
        assert c in df.columns, c
    assert "cdf" not in df.columns
    assert list(df["iops"]) == [r["iops"] for r in rows]
    # Running from a grid gives the same frame (but for wall-clock time).
    df2 = ssdsim.sweep_frame(GRID, threads=1)
    cols = [c for c in df.columns if c != "wall_s"]
    assert df[cols].equals(df2[cols])


def test_sweep_frame_numeric_axes():
    pytest.importorskip("pandas")
    grid = {"base": GRID["base"], "grid": {"ftl.op": [0.1, 0.2], "rw": ["randread"]}}
    df = ssdsim.sweep_frame(grid)
    assert df["ftl.op"].tolist() == [0.1, 0.2]


def test_sweep_frame_without_pandas(monkeypatch):
    monkeypatch.setitem(sys.modules, "pandas", None)
    with pytest.raises(ImportError, match="pip install pandas"):
        ssdsim.sweep_frame([])


def test_presets():
    nand = ssdsim.presets()
    assert isinstance(nand, list) and all(isinstance(p, dict) for p in nand)
    assert "chip2" in [p["name"] for p in nand]
    assert ssdsim.presets("power") and ssdsim.presets("interface")
    with pytest.raises(ValueError):
        ssdsim.presets("bogus")
    assert "dftl" in ssdsim.FTLS and "noop" in ssdsim.SCHEDULERS


def test_gil_released_during_a_run():
    done = threading.Event()
    result = {}

    def work():
        result["r"] = ssdsim.run(set={"number_ios": 300_000, "rw": "randwrite"})
        done.set()

    t = threading.Thread(target=work)
    t.start()
    ticks = 0
    while not done.is_set():
        ticks += 1
        done.wait(0.001)
    t.join()
    assert result["r"]["host"]["requests"] == 300_000
    # The main thread kept running Python while the simulation ran.
    assert ticks > 20


INTERRUPTED = """
import ssdsim
grid = {"base": {"workload": {"number_ios": 300000}, "sim": {"precondition": "none"}},
        "grid": {"sim.seed": list(range(1000)), "rw": ["randwrite"]}}
print("started", flush=True)
try:
    ssdsim.sweep(grid, threads=1)
    print("finished")
except KeyboardInterrupt:
    print("interrupted", flush=True)
rows = ssdsim.sweep({"base": grid["base"], "grid": {"rw": ["randread", "randwrite"]}})
print("after", len(rows), all(r["error"] is None for r in rows))
"""


def test_keyboard_interrupt_stops_a_sweep_and_the_next_one_runs():
    import signal
    import subprocess

    p = subprocess.Popen(
        [sys.executable, "-c", INTERRUPTED],
        stdout=subprocess.PIPE,
        text=True,
        # Python installs its SIGINT handler only if SIGINT is not ignored.
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    assert p.stdout.readline().strip() == "started"
    import time

    time.sleep(1.0)
    p.send_signal(signal.SIGINT)
    out, _ = p.communicate(timeout=300)
    assert out.split("\n")[:2] == ["interrupted", "after 2 True"], out
    assert p.returncode == 0
