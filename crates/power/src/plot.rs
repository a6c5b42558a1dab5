//! Outputs of the time series and breakdown: CSV, and SVG plots (plotters,
//! with the `plot` feature, a default one).

#[cfg(feature = "plot")]
use crate::series::COMPONENTS;
use crate::{PowerError, PowerObserver};
#[cfg(feature = "plot")]
use plotters::prelude::*;
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
    /// SVG line chart of total and per-component power over time.
    pub fn plot_power(&self, path: impl AsRef<Path>) -> Result<(), PowerError> {
        let path = path.as_ref();
        let samples = self.samples();
        if !self.is_finished() {
            return Err(PowerError::NotFinished);
        }
        let t_end = samples
            .last()
            .map(|s| s.time_s + s.len_s)
            .unwrap_or(0.0)
            .max(1e-9);
        let y_max = samples
            .iter()
            .map(|s| s.total_w)
            .fold(0.0f64, f64::max)
            .max(1e-6)
            * 1.1;
        // Drawn into memory, then written beside `path` and renamed into place.
        let mut svg = String::new();
        {
            let root = SVGBackend::with_string(&mut svg, (960, 540)).into_drawing_area();
            root.fill(&WHITE).map_err(plot_err(path))?;
            let mut chart = ChartBuilder::on(&root)
                .caption("SSD power over time", ("sans-serif", 22))
                .margin(12)
                .x_label_area_size(40)
                .y_label_area_size(60)
                .build_cartesian_2d(0.0..t_end, 0.0..y_max)
                .map_err(plot_err(path))?;
            chart
                .configure_mesh()
                .x_desc("time (s)")
                .y_desc("power (W)")
                .draw()
                .map_err(plot_err(path))?;
            // Step lines: each sample holds its value over its bucket.
            let steps = |f: &dyn Fn(&crate::Sample) -> f64| -> Vec<(f64, f64)> {
                samples
                    .iter()
                    .flat_map(|s| [(s.time_s, f(s)), (s.time_s + s.len_s, f(s))])
                    .collect()
            };
            chart
                .draw_series(LineSeries::new(
                    steps(&|s| s.total_w),
                    BLACK.stroke_width(2),
                ))
                .map_err(plot_err(path))?
                .label("total")
                .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 16, y)], BLACK));
            for (c, name) in COMPONENTS.iter().enumerate() {
                let color = COLORS[c];
                chart
                    .draw_series(LineSeries::new(steps(&|s| s.component_w[c]), color))
                    .map_err(plot_err(path))?
                    .label(*name)
                    .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 16, y)], color));
            }
            chart
                .configure_series_labels()
                .background_style(WHITE.mix(0.8))
                .border_style(BLACK)
                .draw()
                .map_err(plot_err(path))?;
            root.present().map_err(plot_err(path))?;
        }
        ssd_core::outfile::write_bytes_atomic(path, svg.as_bytes()).map_err(io_err(path))
    }

    /// SVG bar chart of the energy breakdown (J): flash read / program / erase /
    /// transfer / idle, CPU, DRAM, bus, host link.
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
        let y_max = bars.iter().map(|b| b.1).fold(0.0f64, f64::max).max(1e-12) * 1.15;
        let n = bars.len();
        // Drawn into memory, then written beside `path` and renamed into place.
        let mut svg = String::new();
        {
            let root = SVGBackend::with_string(&mut svg, (960, 540)).into_drawing_area();
            root.fill(&WHITE).map_err(plot_err(path))?;
            let mut chart = ChartBuilder::on(&root)
                .caption(
                    format!("Energy breakdown (total {:.4} J)", e.total),
                    ("sans-serif", 22),
                )
                .margin(12)
                .x_label_area_size(60)
                .y_label_area_size(70)
                .build_cartesian_2d(0.0..n as f64, 0.0..y_max)
                .map_err(plot_err(path))?;
            let labels: Vec<String> = bars.iter().map(|b| b.0.to_string()).collect();
            chart
                .configure_mesh()
                .disable_x_mesh()
                .x_labels(n * 2)
                .x_label_formatter(&|x| {
                    let i = x.floor() as usize;
                    if (x - i as f64 - 0.5).abs() < 1e-6 && i < labels.len() {
                        labels[i].clone()
                    } else {
                        String::new()
                    }
                })
                .y_desc("energy (J)")
                .draw()
                .map_err(plot_err(path))?;
            chart
                .draw_series(bars.iter().enumerate().map(|(i, b)| {
                    Rectangle::new([(i as f64 + 0.1, 0.0), (i as f64 + 0.9, b.1)], b.2.filled())
                }))
                .map_err(plot_err(path))?;
            root.present().map_err(plot_err(path))?;
        }
        ssd_core::outfile::write_bytes_atomic(path, svg.as_bytes()).map_err(io_err(path))
    }
}
