//! Outputs of the time series and breakdown: CSV, and SVG plots (plotters,
//! with the `plot` feature, a default one).

#[cfg(feature = "plot")]
use crate::series::COMPONENTS;
use crate::{PowerError, PowerObserver};
#[cfg(feature = "plot")]
use plotters::prelude::*;
#[cfg(feature = "plot")]
use plotters::style::text_anchor::{HPos, Pos, VPos};
use std::path::Path;

fn io_err(path: &Path) -> impl FnOnce(std::io::Error) -> PowerError + '_ {
    move |source| PowerError::Io {
        path: path.display().to_string(),
        source,
    }
}

#[cfg(feature = "plot")]
fn plot_err<E: std::fmt::Display>(path: &Path) -> impl Fn(E) -> PowerError + '_ {
    move |e| PowerError::Plot {
        path: path.display().to_string(),
        message: e.to_string(),
    }
}

#[cfg(feature = "plot")]
const COLORS: [RGBColor; 5] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
];

impl PowerObserver {
    /// Write the power time series as CSV: `time_s, total_w, flash_w, cpu_w,
    /// dram_w, bus_w, host_w, iops, mbps`, one row per sample (time_s = start of
    /// the sample; the last sample may be shorter than the interval).
    pub fn write_csv(&self, path: impl AsRef<Path>) -> Result<(), PowerError> {
        let path = path.as_ref();
        if !self.is_finished() {
            return Err(PowerError::NotFinished);
        }
        ssd_core::outfile::write_atomic(path, |w| {
            writeln!(
                w,
                "time_s,total_w,flash_w,cpu_w,dram_w,bus_w,host_w,iops,mbps"
            )?;
            for s in self.samples() {
                let c = s.component_w;
                writeln!(
                    w,
                    "{},{},{},{},{},{},{},{},{}",
                    s.time_s, s.total_w, c[0], c[1], c[2], c[3], c[4], s.iops, s.mbps
                )?;
            }
            Ok(())
        })
        .map_err(io_err(path))
    }
}

#[cfg(feature = "plot")]
impl PowerObserver {
    /// SVG line chart of total and per-component power over time, both axes
    /// named with their units, the legend right of the plot area (never
    /// over a curve).
    pub fn plot_power(&self, path: impl AsRef<Path>) -> Result<(), PowerError> {
        let path = path.as_ref();
        let samples = self.samples();
        if !self.is_finished() {
            return Err(PowerError::NotFinished);
        }
        // From the first sample: the end of the ramp, if any (0 without).
        let t_start = samples.first().map_or(0.0, |s| s.time_s);
        let t_end = samples
            .last()
            .map(|s| s.time_s + s.len_s)
            .unwrap_or(0.0)
            .max(t_start + 1e-9);
        let y_max = samples
            .iter()
            .map(|s| s.total_w)
            .fold(0.0f64, f64::max)
            .max(1e-6)
            * 1.1;
        let (merged, _) = crate::series::merge_samples(&samples, MAX_STEPS);
        // Drawn into memory, then written beside `path` and renamed into place.
        let mut svg = String::new();
        {
            let root = SVGBackend::with_string(&mut svg, (1100, 540)).into_drawing_area();
            root.fill(&WHITE).map_err(plot_err(path))?;
            // The legend right of the chart, never over its curves.
            let (area, side) = root.split_horizontally(960);
            let mut chart = ChartBuilder::on(&area)
                .caption(
                    if merged.len() < samples.len() {
                        format!(
                            "SSD power over time ({} samples merged into {} time-weighted means)",
                            samples.len(),
                            merged.len()
                        )
                    } else {
                        "SSD power over time".to_string()
                    },
                    ("sans-serif", 20),
                )
                .margin(12)
                .x_label_area_size(44)
                .y_label_area_size(64)
                .build_cartesian_2d(t_start..t_end, 0.0..y_max)
                .map_err(plot_err(path))?;
            chart
                .configure_mesh()
                .x_desc("simulated time (s)")
                .y_desc("power (W)")
                .draw()
                .map_err(plot_err(path))?;
            // Step lines: each sample holds its value over its bucket. A long
            // run's samples are merged into at most `MAX_STEPS` time-weighted
            // means (energy kept), so the file stays small.
            // Column `c` of each merged sample's watts (0: total).
            let steps = |c: usize| -> Vec<(f64, f64)> {
                merged
                    .iter()
                    .flat_map(|(a, b, w)| [(*a, w[c]), (*b, w[c])])
                    .collect()
            };
            chart
                .draw_series(LineSeries::new(steps(0), BLACK.stroke_width(2)))
                .map_err(plot_err(path))?;
            let mut entries: Vec<(&str, RGBColor)> = vec![("total", BLACK)];
            for (c, name) in COMPONENTS.iter().enumerate() {
                chart
                    .draw_series(LineSeries::new(steps(c + 1), COLORS[c]))
                    .map_err(plot_err(path))?;
                entries.push((name, COLORS[c]));
            }
            side.draw(&Text::new(
                "series",
                (10, 44),
                ("sans-serif", 15).into_font().color(&BLACK),
            ))
            .map_err(plot_err(path))?;
            for (i, (name, color)) in entries.iter().enumerate() {
                let y = 74 + 24 * i as i32;
                side.draw(&PathElement::new(
                    vec![(10, y), (34, y)],
                    color.stroke_width(3),
                ))
                .map_err(plot_err(path))?;
                side.draw(&Text::new(
                    *name,
                    (42, y),
                    ("sans-serif", 14)
                        .into_font()
                        .color(&BLACK)
                        .pos(Pos::new(HPos::Left, VPos::Center)),
                ))
                .map_err(plot_err(path))?;
            }
            root.present().map_err(plot_err(path))?;
        }
        ssd_core::outfile::write_bytes_atomic(path, svg.as_bytes()).map_err(io_err(path))
    }

    /// SVG bar chart of the energy breakdown (J): flash read / program / erase /
    /// transfer / idle, CPU, DRAM, bus, host link; horizontal bars, so that
    /// each component's name is written whole, its value right of its bar.
    pub fn plot_breakdown(&self, path: impl AsRef<Path>) -> Result<(), PowerError> {
        let path = path.as_ref();
        let e = self.energy()?;
        let bars: Vec<(&str, f64, RGBColor)> = vec![
            ("flash read", e.flash.read, COLORS[0]),
            ("flash program", e.flash.program, COLORS[0]),
            ("flash erase", e.flash.erase, COLORS[0]),
            ("flash transfer", e.flash.transfer, COLORS[0]),
            ("flash idle", e.flash.idle, COLORS[0]),
            ("cpu", e.cpu, COLORS[1]),
            ("dram", e.dram, COLORS[2]),
            ("bus", e.bus, COLORS[3]),
            ("host link", e.host, COLORS[4]),
        ];
        // Room right of the longest bar for its value.
        let x_max = bars.iter().map(|b| b.1).fold(0.0f64, f64::max).max(1e-12) * 1.3;
        let n = bars.len();
        // Drawn into memory, then written beside `path` and renamed into place.
        let mut svg = String::new();
        {
            let root = SVGBackend::with_string(&mut svg, (960, 540)).into_drawing_area();
            root.fill(&WHITE).map_err(plot_err(path))?;
            // Horizontal bars: the component names on the left, whole.
            let mut chart = ChartBuilder::on(&root)
                .caption(
                    format!("Energy breakdown (total {:.4} J)", e.total),
                    ("sans-serif", 20),
                )
                .margin(12)
                .x_label_area_size(44)
                .y_label_area_size(150)
                .build_cartesian_2d(0.0..x_max, (0..n - 1).into_segmented())
                .map_err(plot_err(path))?;
            let labels: Vec<String> = bars.iter().map(|b| b.0.to_string()).collect();
            chart
                .configure_mesh()
                .disable_y_mesh()
                .y_labels(n)
                .y_label_formatter(&|v| match v {
                    SegmentValue::CenterOf(i) if *i < labels.len() => labels[n - 1 - *i].clone(),
                    _ => String::new(),
                })
                .x_desc("energy (J)")
                .y_desc("component")
                .draw()
                .map_err(plot_err(path))?;
            // The first component at the top.
            let row = |i: usize| n - 1 - i;
            chart
                .draw_series(bars.iter().enumerate().map(|(i, b)| {
                    let mut r = Rectangle::new(
                        [
                            (0.0, SegmentValue::Exact(row(i))),
                            (b.1, SegmentValue::Exact(row(i) + 1)),
                        ],
                        b.2.filled(),
                    );
                    r.set_margin(5, 5, 0, 0);
                    r
                }))
                .map_err(plot_err(path))?;
            // Each bar's value right of it.
            chart
                .draw_series(bars.iter().enumerate().map(|(i, b)| {
                    Text::new(
                        format!("{:.4} J", b.1),
                        (b.1 + x_max * 0.01, SegmentValue::CenterOf(row(i))),
                        ("sans-serif", 13)
                            .into_font()
                            .color(&BLACK)
                            .pos(Pos::new(HPos::Left, VPos::Center)),
                    )
                }))
                .map_err(plot_err(path))?;
            root.present().map_err(plot_err(path))?;
        }
        ssd_core::outfile::write_bytes_atomic(path, svg.as_bytes()).map_err(io_err(path))
    }
}

/// Most steps a power plot draws per series.
#[cfg(feature = "plot")]
const MAX_STEPS: usize = 2000;
