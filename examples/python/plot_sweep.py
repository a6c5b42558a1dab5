"""Sweep FTLs x workloads with ssdsim's Python bindings and plot IOPS per FTL.

    pip install ./crates/python pandas matplotlib
    python examples/python/plot_sweep.py [OUT.png]

Runs a small grid (every FTL on random reads and random writes, on a drive
filled once before each point, a few thousand requests per point; a few
seconds), prints the table and writes a grouped bar chart of IOPS
per FTL to OUT.png (default: sweep-iops.png).
"""

import sys

import matplotlib

matplotlib.use("Agg")  # files only: no display needed
import matplotlib.pyplot as plt  # noqa: E402

import ssdsim  # noqa: E402

GRID = {
    "description": "IOPS per FTL, random reads and writes, after a fill",
    "base": {
        "sim": {"precondition": "fill"},
        "workload": {"bs": "4KiB", "iodepth": 8, "number_ios": 4000},
    },
    "grid": {
        "ftl": list(ssdsim.FTLS),
        "rw": ["randread", "randwrite"],
    },
}


def main(out: str = "sweep-iops.png") -> None:
    df = ssdsim.sweep_frame(GRID)
    print(df[["ftl", "rw", "iops", "lat_p99_us", "waf", "energy_j"]].to_string(index=False))
    table = df.pivot(index="ftl", columns="rw", values="iops").reindex(list(ssdsim.FTLS))
    ax = table.plot.bar(rot=0, figsize=(8, 4.5))
    ax.set_yscale("log")
    ax.set_xlabel("FTL")
    ax.set_ylabel("IOPS (log scale)")
    ax.set_title(f"ssdsim {ssdsim.version()}: 4 KiB random I/O, queue depth 8, after a fill")
    ax.grid(axis="y", which="both", alpha=0.3)
    ax.legend(title="workload", bbox_to_anchor=(1.01, 1), loc="upper left")
    plt.tight_layout()
    plt.savefig(out, dpi=120)
    print(f"wrote {out}")


if __name__ == "__main__":
    main(*sys.argv[1:2])
