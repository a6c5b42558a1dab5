//! The SVG files `ssdsim` writes besides its reports (the `plots`
//! feature): power over time and the energy breakdown of a run
//! ([`crate::RunOptions::plot_power`], [`crate::RunOptions::plot_breakdown`]),
//! a sweep's charts ([`crate::sweep::plot`]) and the mapping-table sizes of
//! `ssdsim mapping-size --plot` ([`mapping_size`]). They are the charts of
//! the HTML reports, as files of their own: drawn by hand, no plotting
//! crate.

use crate::chart::{self, fmt_value, Line, LineChart, DASHES, PALETTE};
use std::path::Path;

/// Write `svg` as a file of its own at `path`, atomically.
fn write(path: &Path, svg: &str) -> Result<(), String> {
    ssd_core::outfile::write_bytes_atomic(path, chart::standalone(svg).as_bytes())
        .map_err(|e| format!("{}: cannot write: {e}", path.display()))
}

/// Power over time (total and per component) from the power model's
/// samples, as `--plot-power` writes it; `power_w` is the report's section
/// (its sample interval and coarsening, for the note under the title).
pub(crate) fn write_power(
    path: &Path,
    samples: &[power::Sample],
    power_w: Option<&serde_json::Value>,
) -> Result<(), String> {
    let sample = power_w
        .and_then(|p| p.get("sample_s"))
        .and_then(|v| v.as_f64())
        .or_else(|| samples.first().map(|s| s.len_s))
        .unwrap_or(0.0);
    let mut note = format!(
        "each sample the mean over its interval: {} samples of {} s",
        samples.len(),
        fmt_value(sample)
    );
    if let Some(n) = power_w
        .and_then(|p| p.get("coarsened"))
        .and_then(|v| v.as_f64())
        .filter(|n| *n > 0.0)
    {
        note.push_str(&format!(
            " (the interval doubled {n} times to bound memory)"
        ));
    }
    let (_, steps, k) = chart::power_chart(samples, "");
    if k > 1 {
        note.push_str(&format!(
            "; drawn as {steps} steps, each the time-weighted mean of {k} samples"
        ));
    }
    write(path, &chart::power_chart(samples, &note).0)
}

/// The energy breakdown of a report's `energy_j` section, as
/// `--plot-breakdown` writes it.
pub(crate) fn write_breakdown(path: &Path, energy_j: &serde_json::Value) -> Result<(), String> {
    write(
        path,
        &chart::energy_chart(
            energy_j,
            "energy of the whole energy window (the measured phase and any drain) by component",
        ),
    )
}

/// The mapping-table size of each scheme against capacity (log-log), as
/// `ssdsim mapping-size --plot` writes it: a line per scheme, in order of
/// first appearance (schemes of the same sizes share one, `bast = fast =
/// last`). A whole SVG document.
pub fn mapping_size(rows: &[ftl::mapsize::MapSizeRow]) -> String {
    let gib = (1u64 << 30) as f64;
    // One line per scheme; schemes whose tables are the same size at every
    // capacity (bast, fast and last) share one, named by all of them.
    type Series<'a> = (Vec<&'a str>, Vec<(f64, f64)>);
    let mut series: Vec<Series> = Vec::new();
    for r in rows {
        if series.iter().any(|(names, _)| names.contains(&r.scheme)) {
            continue;
        }
        let points: Vec<(f64, f64)> = rows
            .iter()
            .filter(|x| x.scheme == r.scheme)
            .map(|x| (x.capacity_bytes as f64 / gib, x.table_kib))
            .collect();
        match series.iter_mut().find(|(_, p)| *p == points) {
            Some((names, _)) => names.push(r.scheme),
            None => series.push((vec![r.scheme], points)),
        }
    }
    let lines = series
        .into_iter()
        .enumerate()
        .map(|(i, (names, points))| Line {
            name: names.join(" = "),
            color: PALETTE[i % PALETTE.len()],
            dash: DASHES[(i / PALETTE.len()) % DASHES.len()],
            width: 2.0,
            points,
        })
        .collect();
    let svg = LineChart {
        id: "mapping-size",
        title: "Mapping-table memory",
        note: "",
        x_label: "logical capacity (GiB, log scale)",
        y_label: "mapping tables (KiB, log scale)",
        x_log: true,
        y_log: true,
        y_fixed: None,
        lines,
        legend_title: "FTL",
    }
    .svg();
    chart::standalone(&svg)
}
