//! Single-file HTML reports: a run's ([`run_page`], `ssdsim run --html`) and
//! a sweep's ([`sweep_page`], `ssdsim sweep --html`, `merge --html`).
//!
//! A page is one file that reads offline: the CSS is inline, the charts are
//! SVG drawn here (no plotting library, so the lean build without the
//! `plots` feature writes them too), and the one script, a few inline
//! lines, sorts a sweep's table by a column. It loads nothing: no script,
//! style sheet, font or image from a file or the network.
//!
//! Every text put into a page goes through [`escape`]. Every chart is an
//! `<svg data-chart="NAME">` with a title, both axis labels with their
//! units and at least one data element (`class="data"`), and a line has at
//! most [`MAX_SERIES_POINTS`] points ([`thin`], which keeps the first and
//! the last). The page states the ssdsim version, the command line (when
//! the caller gives it, [`PageInfo`]) and the configuration, as TOML in a
//! collapsed `<details>` block.
//!
//! ```
//! use ssdsim::{html, run_config, RunOptions};
//! use ssdsim_host::config::SsdConfig;
//! let mut cfg = SsdConfig::default();
//! cfg.workload.number_ios = Some(500);
//! let opts = RunOptions { keep_power_series: true, ..RunOptions::default() };
//! let out = run_config(&cfg, &opts)?;
//! let page = html::run_page(&out, &html::PageInfo::default());
//! assert!(page.contains(r#"data-chart="latency-cdf""#));
//! assert!(page.contains(r#"data-chart="power-over-time""#));
//! # Ok::<(), ssdsim::RunError>(())
//! ```
//!
//! Over 1,500 lines on purpose: the pages and their SVG charts are written by
//! hand (no template or plotting crate), a function per chart; its tests are
//! `html/tests.rs`.

use crate::sweep::{self, Row};
use crate::RunOutput;
use serde_json::Value;
use std::fmt::Write;

/// The most points one line of a chart has: longer series are thinned
/// ([`thin`]), or for the power time series merged into time-weighted means.
pub const MAX_SERIES_POINTS: usize = 2000;

/// The most bars of a sweep's chart (its first points; the table has all).
pub const MAX_BARS: usize = 200;

/// The most curves of a sweep's latency CDF chart (its first points).
pub const MAX_CURVES: usize = 40;

/// What a page says about where it came from.
#[derive(Clone, Debug, Default)]
pub struct PageInfo {
    /// The command line that wrote the page, shown as given (empty: not shown).
    /// [`shell_join`] quotes a program's arguments.
    pub command: String,
    /// The ssdsim version shown (empty: this library's, [`crate::VERSION`]).
    pub version: String,
    /// Configuration TOML shown in a collapsed block: a sweep's base
    /// configuration (a run's page shows its report's own `config`).
    pub config_toml: Option<String>,
}

impl PageInfo {
    fn version(&self) -> &str {
        if self.version.is_empty() {
            crate::VERSION
        } else {
            &self.version
        }
    }
}

/// `text` with `&`, `<`, `>`, `"` and `'` replaced by character references:
/// safe as element content and as a quoted attribute value.
pub fn escape(text: &str) -> String {
    let mut o = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&#39;"),
            c => o.push(c),
        }
    }
    o
}

/// At most `max` (at least 2) of `points`, evenly spaced by index, the
/// first and the last always among them; all of them when they are few
/// enough.
pub fn thin<T: Clone>(points: &[T], max: usize) -> Vec<T> {
    let n = points.len();
    let max = max.max(2);
    if n <= max {
        return points.to_vec();
    }
    // Index round(k (n-1) / (max-1)): strictly increasing since n > max.
    let (n1, m1) = ((n - 1) as u128, (max - 1) as u128);
    (0..max as u128)
        .map(|k| points[((2 * k * n1 + m1) / (2 * m1)) as usize].clone())
        .collect()
}

/// Program arguments as one shell command line: an argument with anything
/// but letters, digits and `_-+=./,:@%` is single-quoted.
pub fn shell_join<I, S>(args: I) -> String
where
    I: IntoIterator<Item = S>,
    S: AsRef<str>,
{
    args.into_iter()
        .map(|a| {
            let a = a.as_ref();
            let plain = !a.is_empty()
                && a.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "_-+=./,:@%".contains(c));
            if plain {
                a.to_string()
            } else {
                format!("'{}'", a.replace('\'', r"'\''"))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

// ------------------------------------------------------------------ numbers

/// A value for a table or a label: 0, one decimal from 100 up, four
/// decimals down to 0.001, three significant digits in exponent form below.
fn fmt_value(x: f64) -> String {
    if x == 0.0 {
        "0".into()
    } else if !x.is_finite() {
        x.to_string()
    } else if x.abs() >= 100.0 {
        format!("{x:.1}")
    } else if x.abs() >= 1e-3 {
        format!("{x:.4}")
    } else {
        format!("{x:.3e}")
    }
}

fn num(v: &Value) -> String {
    match v {
        Value::Number(n) if n.is_f64() => fmt_value(n.as_f64().unwrap_or(0.0)),
        Value::Number(n) => n.to_string(),
        Value::String(s) => s.clone(),
        Value::Bool(b) => b.to_string(),
        Value::Null => "-".into(),
        other => other.to_string(),
    }
}

/// The number at `path` in `v`.
fn at(v: &Value, path: &[&str]) -> Option<f64> {
    path.iter().try_fold(v, |v, k| v.get(k))?.as_f64()
}

/// A tick label for `v` on an axis whose ticks are `step` apart: enough
/// decimals for the step, thousands as k, M, G, small values in exponent form.
fn fmt_tick(v: f64, step: f64) -> String {
    let a = v.abs();
    if a < step * 1e-6 {
        return "0".into();
    }
    if a < 1e-3 {
        let digits = (a.log10().floor() - step.log10().floor()).clamp(0.0, 6.0) as usize;
        return format!("{v:.digits$e}");
    }
    let (scale, suffix) = if a >= 1e9 {
        (1e9, "G")
    } else if a >= 1e6 {
        (1e6, "M")
    } else if a >= 1e4 {
        (1e3, "k")
    } else {
        (1.0, "")
    };
    let s = step / scale;
    let dec = if s >= 1.0 {
        0
    } else {
        (-s.log10() - 1e-9).ceil().clamp(0.0, 9.0) as usize
    };
    format!("{:.dec$}{suffix}", v / scale)
}

/// A step of 1, 2 or 5 times a power of ten giving about `target` ticks.
fn nice_step(range: f64, target: f64) -> f64 {
    let raw = (range / target).max(f64::MIN_POSITIVE);
    let mag = 10f64.powf(raw.log10().floor());
    let f = raw / mag;
    let nice = if f <= 1.0 {
        1.0
    } else if f <= 2.0 {
        2.0
    } else if f <= 5.0 {
        5.0
    } else {
        10.0
    };
    nice * mag
}

/// An axis: its domain and its ticks (value, label).
struct Scale {
    lo: f64,
    hi: f64,
    log: bool,
    ticks: Vec<(f64, String)>,
}

impl Scale {
    /// A linear axis over `[lo, hi]`, widened to whole steps.
    fn linear(lo: f64, hi: f64) -> Scale {
        let (lo, hi) = if hi > lo {
            (lo, hi)
        } else if lo == 0.0 {
            (0.0, 1.0)
        } else {
            (lo - lo.abs() * 0.5, hi + hi.abs() * 0.5)
        };
        let step = nice_step(hi - lo, 5.0);
        let (a, b) = ((lo / step).floor(), (hi / step).ceil());
        let ticks = (a as i64..=b as i64)
            .map(|i| {
                let v = i as f64 * step;
                (v, fmt_tick(v, step))
            })
            .collect();
        Scale {
            lo: a * step,
            hi: b * step,
            log: false,
            ticks,
        }
    }

    /// A linear axis over exactly `[lo, hi]`, its ticks the whole steps
    /// inside it (a time axis: no empty stretch after the run's end).
    fn linear_exact(lo: f64, hi: f64) -> Scale {
        let wide = Scale::linear(lo, hi);
        let (lo, hi) = if hi > lo {
            (lo, hi)
        } else {
            (wide.lo, wide.hi)
        };
        let ticks = wide
            .ticks
            .into_iter()
            .filter(|(v, _)| *v >= lo - (hi - lo) * 1e-9 && *v <= hi + (hi - lo) * 1e-9)
            .collect();
        Scale {
            lo,
            hi,
            log: false,
            ticks,
        }
    }

    /// A logarithmic axis over `[lo, hi]` (both positive), widened to whole
    /// decades, a tick per decade (every other one beyond ten).
    fn log(lo: f64, hi: f64) -> Scale {
        let a = lo.log10().floor();
        let mut b = hi.log10().ceil();
        if b <= a {
            b = a + 1.0;
        }
        let every = if b - a > 10.0 { 2 } else { 1 };
        let ticks = (a as i64..=b as i64)
            .filter(|e| (e - a as i64) % every == 0)
            .map(|e| {
                let v = 10f64.powi(e as i32);
                (v, fmt_tick(v, v))
            })
            .collect();
        Scale {
            lo: 10f64.powf(a),
            hi: 10f64.powf(b),
            log: true,
            ticks,
        }
    }

    /// The fraction of the axis at which `v` lies (clamped to it).
    fn frac(&self, v: f64) -> f64 {
        let f = if self.log {
            (v.max(self.lo).log10() - self.lo.log10()) / (self.hi.log10() - self.lo.log10())
        } else {
            (v - self.lo) / (self.hi - self.lo)
        };
        if f.is_finite() {
            f.clamp(0.0, 1.0)
        } else {
            0.0
        }
    }
}

// ------------------------------------------------------------------ charts

const PALETTE: [&str; 10] = [
    "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
    "#bcbd22", "#17becf",
];

/// Dash patterns for lines beyond the palette's ten colours.
const DASHES: [&str; 4] = ["", "6 3", "2 3", "8 3 2 3"];

/// Text cut to `n` characters (an ellipsis marks a cut).
fn clip(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_string()
    } else {
        let mut t: String = s.chars().take(n.saturating_sub(1)).collect();
        t.push('…');
        t
    }
}

const WIDTH: f64 = 880.0;

/// The opening of a chart's SVG, its title and its axis labels.
fn svg_open(o: &mut String, id: &str, title: &str, h: f64) {
    let _ = write!(
        o,
        r#"<svg data-chart="{}" width="{WIDTH}" height="{h}" viewBox="0 0 {WIDTH} {h}" role="img" aria-label="{}"><title>{}</title><rect class="bg" x="0" y="0" width="{WIDTH}" height="{h}"/><text class="chart-title" x="{}" y="24" text-anchor="middle">{}</text>"#,
        escape(id),
        escape(title),
        escape(title),
        WIDTH / 2.0,
        escape(title),
    );
}

fn axis_labels(o: &mut String, x_label: &str, y_label: &str, x: f64, y: f64, y_mid: f64) {
    let _ = write!(
        o,
        r#"<text class="axis-label x" x="{x:.1}" y="{y:.1}" text-anchor="middle">{}</text><text class="axis-label y" x="0" y="0" text-anchor="middle" transform="translate(16 {y_mid:.1}) rotate(-90)">{}</text>"#,
        escape(x_label),
        escape(y_label)
    );
}

/// A legend below a chart from `top`: (name, colour, dash) entries in
/// columns. Returns its height.
fn legend(o: &mut String, entries: &[(String, &str, &str)], left: f64, top: f64) -> f64 {
    if entries.is_empty() {
        return 0.0;
    }
    let col_w = LEGEND_COLUMN;
    let cols = legend_columns(left);
    o.push_str(r#"<g class="legend">"#);
    for (i, (name, color, dash)) in entries.iter().enumerate() {
        let x = left + (i % cols) as f64 * col_w;
        let y = top + (i / cols) as f64 * 18.0 + 9.0;
        let _ = write!(
            o,
            r#"<line x1="{x:.1}" y1="{y:.1}" x2="{:.1}" y2="{y:.1}" stroke="{color}" stroke-width="3" stroke-dasharray="{dash}"/><text x="{:.1}" y="{:.1}">{}</text>"#,
            x + 18.0,
            x + 24.0,
            y + 4.0,
            escape(&clip(name, 34))
        );
    }
    o.push_str("</g>");
    legend_height(entries.len(), left)
}

const LEGEND_COLUMN: f64 = 260.0;

fn legend_columns(left: f64) -> usize {
    (((WIDTH - left - 10.0) / LEGEND_COLUMN).floor() as usize).max(1)
}

/// The height of a legend of `n` entries from `left`.
fn legend_height(n: usize, left: f64) -> f64 {
    if n == 0 {
        0.0
    } else {
        n.div_ceil(legend_columns(left)) as f64 * 18.0 + 8.0
    }
}

/// One line of a line chart.
struct Line {
    name: String,
    color: &'static str,
    dash: &'static str,
    width: f64,
    points: Vec<(f64, f64)>,
}

/// A line chart: `x_log` for a logarithmic x axis, `y_fixed` for a fixed y
/// domain (a CDF's 0 to 1), else from 0 (or the least value, if negative)
/// to the greatest.
struct LineChart<'a> {
    id: &'a str,
    title: &'a str,
    x_label: &'a str,
    y_label: &'a str,
    x_log: bool,
    y_fixed: Option<(f64, f64)>,
    lines: Vec<Line>,
}

impl LineChart<'_> {
    fn svg(mut self) -> String {
        for l in &mut self.lines {
            l.points
                .retain(|&(x, y)| x.is_finite() && y.is_finite() && (!self.x_log || x > 0.0));
            l.points = thin(&l.points, MAX_SERIES_POINTS);
        }
        self.lines.retain(|l| !l.points.is_empty());
        let pts = || self.lines.iter().flat_map(|l| l.points.iter());
        let (xmin, xmax) = pts().fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), p| {
            (a.min(p.0), b.max(p.0))
        });
        let (ymin, ymax) = pts().fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), p| {
            (a.min(p.1), b.max(p.1))
        });
        let empty = self.lines.is_empty();
        let xs = match (self.x_log, empty) {
            (true, true) => Scale::log(1.0, 10.0),
            (true, false) => Scale::log(xmin, xmax),
            (false, true) => Scale::linear(0.0, 1.0),
            (false, false) => Scale::linear_exact(xmin, xmax),
        };
        let ys = match (self.y_fixed, empty) {
            (Some((a, b)), _) => {
                let mut s = Scale::linear(a, b);
                (s.lo, s.hi) = (a, b);
                s
            }
            (None, true) => Scale::linear(0.0, 1.0),
            (None, false) => Scale::linear(ymin.min(0.0), ymax * 1.05),
        };
        let (left, right, top, ph) = (80.0, 24.0, 44.0, 320.0);
        let pw = WIDTH - left - right;
        let bottom_axis = top + ph;
        let legend_entries: Vec<(String, &str, &str)> = self
            .lines
            .iter()
            .map(|l| (l.name.clone(), l.color, l.dash))
            .collect();
        let legend_h = legend_height(legend_entries.len(), left);
        let h = (bottom_axis + 58.0 + legend_h + 8.0).ceil();
        let mut o = String::new();
        svg_open(&mut o, self.id, self.title, h);
        let px = |x: f64| left + xs.frac(x) * pw;
        let py = |y: f64| top + (1.0 - ys.frac(y)) * ph;
        o.push_str(r#"<g class="grid">"#);
        for (v, _) in &xs.ticks {
            let x = px(*v);
            let _ = write!(
                o,
                r#"<line x1="{x:.1}" y1="{top:.1}" x2="{x:.1}" y2="{bottom_axis:.1}"/>"#
            );
        }
        for (v, _) in &ys.ticks {
            let y = py(*v);
            let _ = write!(
                o,
                r#"<line x1="{left:.1}" y1="{y:.1}" x2="{:.1}" y2="{y:.1}"/>"#,
                left + pw
            );
        }
        o.push_str("</g>");
        let _ = write!(
            o,
            r#"<rect class="frame" x="{left:.1}" y="{top:.1}" width="{pw:.1}" height="{ph:.1}"/><g class="ticks">"#
        );
        for (v, t) in &xs.ticks {
            let _ = write!(
                o,
                r#"<text x="{:.1}" y="{:.1}" text-anchor="middle">{}</text>"#,
                px(*v),
                bottom_axis + 16.0,
                escape(t)
            );
        }
        for (v, t) in &ys.ticks {
            let _ = write!(
                o,
                r#"<text x="{:.1}" y="{:.1}" text-anchor="end">{}</text>"#,
                left - 6.0,
                py(*v) + 4.0,
                escape(t)
            );
        }
        o.push_str("</g>");
        axis_labels(
            &mut o,
            self.x_label,
            self.y_label,
            left + pw / 2.0,
            bottom_axis + 38.0,
            top + ph / 2.0,
        );
        o.push_str(r#"<g class="lines">"#);
        for l in &self.lines {
            let mut d = String::new();
            for (i, &(x, y)) in l.points.iter().enumerate() {
                let _ = write!(
                    d,
                    "{}{:.1},{:.1}",
                    if i == 0 { "M" } else { " L" },
                    px(x),
                    py(y)
                );
            }
            if l.points.len() == 1 {
                // One point: a dot.
                let _ = write!(d, " h0.1");
            }
            let _ = write!(
                o,
                r#"<path class="data" d="{d}" fill="none" stroke="{}" stroke-width="{}" stroke-dasharray="{}" stroke-linejoin="round"><title>{}</title></path>"#,
                l.color,
                l.width,
                l.dash,
                escape(&l.name)
            );
        }
        o.push_str("</g>");
        legend(&mut o, &legend_entries, left, bottom_axis + 50.0);
        o.push_str("</svg>");
        o
    }
}

/// One bar of a bar chart, with the text written at its end.
struct Bar {
    label: String,
    value: f64,
    color: &'static str,
    text: String,
}

/// A horizontal bar chart: a bar per category, its label on the left (under
/// `header`), its value at its end; `legend`: what the colours mean.
struct BarChart<'a> {
    id: &'a str,
    title: &'a str,
    x_label: &'a str,
    y_label: &'a str,
    header: &'a str,
    bars: Vec<Bar>,
    legend: Vec<(String, &'static str)>,
}

impl BarChart<'_> {
    fn svg(self) -> String {
        let n = self.bars.len().max(1);
        let label_chars = self
            .bars
            .iter()
            .map(|b| clip(&b.label, 40).chars().count())
            .max()
            .unwrap_or(4)
            .max(self.header.chars().count());
        let left = (label_chars as f64 * 6.6 + 40.0).clamp(90.0, 320.0);
        // What fits left of the bars (about 6.6 px a character).
        let fits = ((left - 40.0) / 6.6) as usize;
        let right = 130.0;
        let top = 58.0;
        let row = 22.0;
        let ph = n as f64 * row;
        let pw = WIDTH - left - right;
        let bottom_axis = top + ph;
        let entries: Vec<(String, &str, &str)> = self
            .legend
            .iter()
            .map(|(n, c)| (n.clone(), *c, ""))
            .collect();
        let legend_h = legend_height(entries.len(), left);
        let h = (bottom_axis + 58.0 + legend_h + 8.0).ceil();
        let max = self
            .bars
            .iter()
            .map(|b| b.value)
            .filter(|v| v.is_finite())
            .fold(0.0f64, f64::max);
        let xs = Scale::linear(0.0, if max > 0.0 { max } else { 1.0 });
        let px = |v: f64| left + xs.frac(v) * pw;
        let mut o = String::new();
        svg_open(&mut o, self.id, self.title, h);
        o.push_str(r#"<g class="grid">"#);
        for (v, _) in &xs.ticks {
            let x = px(*v);
            let _ = write!(
                o,
                r#"<line x1="{x:.1}" y1="{top:.1}" x2="{x:.1}" y2="{bottom_axis:.1}"/>"#
            );
        }
        o.push_str(r#"</g><g class="ticks">"#);
        for (v, t) in &xs.ticks {
            let _ = write!(
                o,
                r#"<text x="{:.1}" y="{:.1}" text-anchor="middle">{}</text>"#,
                px(*v),
                bottom_axis + 16.0,
                escape(t)
            );
        }
        o.push_str("</g>");
        if !self.header.is_empty() {
            let _ = write!(
                o,
                r#"<text class="bar-header" x="{:.1}" y="{:.1}" text-anchor="end">{}</text>"#,
                left - 6.0,
                top - 8.0,
                escape(&clip(self.header, fits))
            );
        }
        o.push_str(r#"<g class="bars">"#);
        for (i, b) in self.bars.iter().enumerate() {
            let y = top + i as f64 * row;
            let v = if b.value.is_finite() {
                b.value.max(0.0)
            } else {
                0.0
            };
            let w = (px(v) - left).max(0.0);
            let _ = write!(
                o,
                r#"<text class="bar-label" x="{:.1}" y="{:.1}" text-anchor="end">{}</text><rect class="data" x="{left:.1}" y="{:.1}" width="{w:.1}" height="{:.1}" fill="{}"><title>{}: {}</title></rect><text class="bar-value" x="{:.1}" y="{:.1}">{}</text>"#,
                left - 6.0,
                y + row / 2.0 + 4.0,
                escape(&clip(&b.label, fits)),
                y + 3.0,
                row - 6.0,
                b.color,
                escape(&b.label),
                escape(&b.text),
                left + w + 4.0,
                y + row / 2.0 + 4.0,
                escape(&b.text)
            );
        }
        let _ = write!(
            o,
            r#"</g><line class="axis" x1="{left:.1}" y1="{top:.1}" x2="{left:.1}" y2="{bottom_axis:.1}"/><line class="axis" x1="{left:.1}" y1="{bottom_axis:.1}" x2="{:.1}" y2="{bottom_axis:.1}"/>"#,
            left + pw
        );
        axis_labels(
            &mut o,
            self.x_label,
            self.y_label,
            left + pw / 2.0,
            bottom_axis + 38.0,
            top + ph / 2.0,
        );
        legend(&mut o, &entries, left, bottom_axis + 50.0);
        o.push_str("</svg>");
        o
    }
}

/// A chart with its caption.
fn figure(o: &mut String, svg: &str, caption: &str) {
    let _ = writeln!(
        o,
        "<figure class=\"chart\">{svg}<figcaption>{}</figcaption></figure>",
        escape(caption)
    );
}

// ------------------------------------------------------------------ tables

/// A two-column table of (name, value).
fn kv_table(o: &mut String, rows: &[(&str, String)]) {
    o.push_str("<table class=\"kv\"><tbody>\n");
    for (k, v) in rows {
        let _ = writeln!(o, "<tr><th>{}</th><td>{}</td></tr>", escape(k), escape(v));
    }
    o.push_str("</tbody></table>\n");
}

/// A table with a header row (`class` styles it).
fn grid_table(o: &mut String, class: &str, head: &[String], body: &[Vec<String>]) {
    let _ = write!(o, "<table class=\"{}\"><thead><tr>", escape(class));
    for h in head {
        let _ = write!(o, "<th>{}</th>", escape(h));
    }
    o.push_str("</tr></thead><tbody>\n");
    for r in body {
        o.push_str("<tr>");
        for c in r {
            let _ = write!(o, "<td>{}</td>", escape(c));
        }
        o.push_str("</tr>\n");
    }
    o.push_str("</tbody></table>\n");
}

/// Any JSON value as nested tables (objects) and lists (arrays).
fn json_html(o: &mut String, v: &Value, depth: usize) {
    match v {
        Value::Object(m) if depth < 8 => {
            if m.is_empty() {
                o.push('-');
                return;
            }
            o.push_str("<table class=\"kv\"><tbody>");
            for (k, x) in m {
                let _ = write!(o, "<tr><th>{}</th><td>", escape(k));
                json_html(o, x, depth + 1);
                o.push_str("</td></tr>");
            }
            o.push_str("</tbody></table>");
        }
        Value::Array(a) if depth < 8 && a.iter().any(|x| x.is_object() || x.is_array()) => {
            o.push_str("<table class=\"kv\"><tbody>");
            for (i, x) in a.iter().enumerate() {
                let _ = write!(o, "<tr><th>{i}</th><td>");
                json_html(o, x, depth + 1);
                o.push_str("</td></tr>");
            }
            o.push_str("</tbody></table>");
        }
        Value::Array(a) => {
            let items: Vec<String> = a.iter().map(num).collect();
            o.push_str(&escape(&items.join(", ")));
        }
        Value::Object(_) => o.push_str(&escape(&v.to_string())),
        scalar => o.push_str(&escape(&num(scalar))),
    }
}

// ------------------------------------------------------------------ page

const CSS: &str = r#"
body{font-family:system-ui,-apple-system,"Segoe UI",Helvetica,Arial,sans-serif;margin:0 auto;max-width:960px;padding:0 16px 40px;color:#222;line-height:1.4}
h1{font-size:1.6em;margin:24px 0 4px}h2{font-size:1.25em;margin:28px 0 8px;border-bottom:1px solid #ddd;padding-bottom:2px}h3{font-size:1.05em;margin:18px 0 6px}
.meta{color:#555;margin:4px 0}pre{background:#f6f6f6;padding:8px;overflow-x:auto;font-size:12px;white-space:pre-wrap;word-break:break-all}
table{border-collapse:collapse;margin:6px 0;font-size:13px}th,td{border:1px solid #ddd;padding:3px 8px;vertical-align:top}
thead th{background:#f0f0f0;position:sticky;top:0}table.kv th{text-align:left;font-weight:600;background:#fafafa}
table.grid td{text-align:right;font-variant-numeric:tabular-nums}table.grid td:first-child{text-align:left}
table.sweep td{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}table.sweep tr.failed td{background:#fdecea}
table.sortable thead th{cursor:pointer}.unit{font-weight:normal;color:#666;font-size:11px}
.wide{overflow-x:auto;max-height:70vh;overflow-y:auto}
figure.chart{margin:12px 0}figcaption{color:#555;font-size:12px;margin-top:2px}
svg{max-width:100%;height:auto;font-size:12px}svg .bg{fill:#fff}svg .frame{fill:none;stroke:#444}svg .grid line{stroke:#e6e6e6}svg .axis{stroke:#444}
svg .chart-title{font-size:16px;font-weight:600}svg .bar-header{font-style:italic;fill:#555}svg .axis-label{font-size:13px}svg .ticks text,svg .bar-label,svg .bar-value{fill:#333}
.note{background:#fff8e1;border-left:4px solid #f0c000;padding:6px 10px;margin:8px 0}details{margin:8px 0}summary{cursor:pointer}
"#;

/// The page's script: a click on a sortable table's header sorts its rows
/// by that column (numbers as numbers), a second click the other way.
const SCRIPT: &str = r#"
(function(){
  var tables=document.querySelectorAll('table.sortable');
  Array.prototype.forEach.call(tables,function(t){
    var head=t.tHead.rows[0].cells;
    Array.prototype.forEach.call(head,function(h,c){
      h.addEventListener('click',function(){
        var b=t.tBodies[0],rows=Array.prototype.slice.call(b.rows);
        var asc=t.getAttribute('data-sorted')!==c+'a';
        rows.sort(function(x,y){
          var p=x.cells[c].textContent,q=y.cells[c].textContent,a=parseFloat(p),d=parseFloat(q);
          var r=(isNaN(a)||isNaN(d))?p.localeCompare(q):a-d;return asc?r:-r;});
        rows.forEach(function(r){b.appendChild(r);});
        t.setAttribute('data-sorted',c+(asc?'a':'d'));});});
    t.setAttribute('data-sortable','ready');});
  document.documentElement.setAttribute('data-script','done');
})();
"#;

fn page_open(o: &mut String, title: &str, info: &PageInfo) {
    let _ = write!(
        o,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <meta name=\"generator\" content=\"ssdsim {v}\"><title>{t}</title><style>{CSS}</style></head>\n\
         <body>\n<h1>{t}</h1>\n<p class=\"meta\">ssdsim {v}</p>\n",
        t = escape(title),
        v = escape(info.version()),
    );
    if !info.command.is_empty() {
        let _ = writeln!(
            o,
            "<p class=\"meta\">Command line:</p><pre class=\"cmd\">{}</pre>",
            escape(&info.command)
        );
    }
}

fn page_close(o: &mut String) {
    let _ = write!(o, "<script>{SCRIPT}</script>\n</body></html>\n");
}

fn config_block(o: &mut String, what: &str, text: &str) {
    let _ = writeln!(
        o,
        "<details class=\"config\"><summary>{}</summary><pre>{}</pre></details>",
        escape(what),
        escape(text)
    );
}

/// The report's `config` as TOML, as `--print-config` writes it (JSON if it
/// is not a configuration TOML can hold).
fn config_text(v: &Value) -> (String, &'static str) {
    if let Ok(c) = serde_json::from_value::<ssdsim_host::config::SsdConfig>(v.clone()) {
        return (c.to_toml(), "TOML");
    }
    fn strip_nulls(v: &mut Value) {
        match v {
            Value::Object(m) => {
                m.retain(|_, x| !x.is_null());
                m.values_mut().for_each(strip_nulls);
            }
            Value::Array(a) => a.iter_mut().for_each(strip_nulls),
            _ => {}
        }
    }
    let mut v = v.clone();
    strip_nulls(&mut v);
    match toml::to_string(&v) {
        Ok(t) => (t, "TOML"),
        Err(_) => (serde_json::to_string_pretty(&v).unwrap_or_default(), "JSON"),
    }
}

fn lat_row(name: &str, l: &ssd_core::stats::LatencySummary) -> Vec<String> {
    vec![
        name.to_string(),
        l.count.to_string(),
        fmt_value(l.mean),
        fmt_value(l.p50),
        fmt_value(l.p90),
        fmt_value(l.p99),
        fmt_value(l.p999),
        fmt_value(l.max),
    ]
}

fn pct(x: f64) -> String {
    format!("{:.1} %", x * 100.0)
}

/// The single-file HTML report of a run: its tables (host, latency, flash,
/// FTL, scheduler, utilization, energy and power, the report's other
/// sections, notes, the run), the latency CDF, power over time and the
/// energy breakdown, and its configuration. The power chart needs
/// [`RunOutput::power_series`] ([`crate::RunOptions::keep_power_series`]);
/// without it, or without the power model, the page says why it has none.
pub fn run_page(out: &RunOutput, info: &PageInfo) -> String {
    let r = &out.report;
    let mut o = String::new();
    page_open(&mut o, "ssdsim run report", info);
    let c = &r.config;
    let cfg = |a: &str, b: &str| {
        c.get(a)
            .and_then(|x| x.get(b))
            .map(|v| match v {
                Value::String(s) => s.clone(),
                x => x.to_string(),
            })
            .unwrap_or_default()
    };

    o.push_str("<h2>Summary</h2>\n");
    kv_table(
        &mut o,
        &[
            ("NAND", cfg("nand", "name")),
            (
                "layout",
                format!(
                    "{} channels x {} chips",
                    cfg("layout", "channels"),
                    cfg("layout", "ways")
                ),
            ),
            ("FTL", r.ftl.kind.clone()),
            ("scheduler", r.sched.kind.clone()),
            ("over-provisioning", cfg("ftl", "op")),
            ("host interface", cfg("host", "interface")),
            ("precondition", r.run.precondition.clone()),
            ("seed", r.run.seed.to_string()),
            ("configuration hash", r.run.config_hash.clone()),
        ],
    );

    let h = &r.host;
    o.push_str("<h2>Host</h2>\n");
    kv_table(
        &mut o,
        &[
            ("requests", h.requests.to_string()),
            ("reads", h.reads.to_string()),
            ("writes", h.writes.to_string()),
            ("trims", h.trims.to_string()),
            ("bytes read", h.bytes_read.to_string()),
            ("bytes written", h.bytes_written.to_string()),
            ("simulated time (s)", fmt_value(h.sim_time_s)),
            ("IOPS (requests/s)", fmt_value(h.iops)),
            ("bandwidth (MB/s)", fmt_value(h.mbps)),
        ],
    );

    o.push_str("<h2>Latency</h2>\n");
    let head: Vec<String> = [
        "requests",
        "count",
        "mean (µs)",
        "p50 (µs)",
        "p90 (µs)",
        "p99 (µs)",
        "p99.9 (µs)",
        "max (µs)",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let mut body = vec![lat_row("all", &r.latency_us.all)];
    for (n, l) in [("read", &r.latency_us.read), ("write", &r.latency_us.write)] {
        if l.count > 0 {
            body.push(lat_row(n, l));
        }
    }
    if let Some(app) = r.extra.get("app").and_then(|a| a.get("latency_us")) {
        for k in ["read", "write", "trim", "fsync"] {
            if let Some(l) = app
                .get(k)
                .and_then(|x| {
                    serde_json::from_value::<ssd_core::stats::LatencySummary>(x.clone()).ok()
                })
                .filter(|l| l.count > 0)
            {
                body.push(lat_row(&format!("app {k}"), &l));
            }
        }
    }
    grid_table(&mut o, "grid", &head, &body);
    latency_cdf(&mut o, out);

    let f = &r.flash;
    o.push_str("<h2>Flash</h2>\n");
    kv_table(
        &mut o,
        &[
            ("page reads", f.page_reads.to_string()),
            ("page programs", f.page_programs.to_string()),
            ("block erases", f.block_erases.to_string()),
            ("GC page copies", f.gc_page_copies.to_string()),
            (
                "write amplification (WAF)",
                // As the text report: no host writes, no ratio.
                match f.waf {
                    Some(w) => format!("{w:.4}"),
                    None => "n/a (no host writes)".to_string(),
                },
            ),
            (
                "erase count min / max / mean / std",
                format!(
                    "{} / {} / {:.2} / {:.2}",
                    f.erase_count_min, f.erase_count_max, f.erase_count_mean, f.erase_count_std
                ),
            ),
            ("multi-plane batches", f.multiplane_batches.to_string()),
            (
                "joined translation reads",
                f.joined_translation_reads.to_string(),
            ),
        ],
    );
    if !f.by_purpose.is_empty() {
        let purposes: Vec<String> = {
            let mut p: Vec<String> = Vec::new();
            for m in f.by_purpose.values() {
                for k in m.keys() {
                    if !p.contains(k) {
                        p.push(k.clone());
                    }
                }
            }
            p
        };
        let mut head = vec!["operations by purpose".to_string()];
        head.extend(purposes.iter().cloned());
        let body: Vec<Vec<String>> = f
            .by_purpose
            .iter()
            .map(|(op, m)| {
                let mut v = vec![op.clone()];
                v.extend(
                    purposes
                        .iter()
                        .map(|p| m.get(p).copied().unwrap_or(0).to_string()),
                );
                v
            })
            .collect();
        grid_table(&mut o, "grid", &head, &body);
    }

    o.push_str("<h2>FTL</h2>\n");
    let mut rows: Vec<(&str, String)> = vec![
        ("kind", r.ftl.kind.clone()),
        (
            "mapping table (bytes)",
            r.ftl.mapping_table_bytes.to_string(),
        ),
        ("logical pages", r.ftl.logical_pages.to_string()),
        ("FTL CPU time (s)", fmt_value(r.ftl.cpu_s)),
        ("DRAM accesses", r.ftl.dram_accesses.to_string()),
        ("write buffer hits", r.ftl.write_buffer_hits.to_string()),
        (
            "write buffer evictions",
            r.ftl.write_buffer_evictions.to_string(),
        ),
        ("read buffer hits", r.ftl.read_buffer_hits.to_string()),
    ];
    let stats = serde_json::to_value(&r.ftl.stats).unwrap_or(Value::Null);
    let stat_rows: Vec<(String, String)> = stats
        .as_object()
        .map(|m| {
            m.iter()
                .map(|(k, v)| (k.replace('_', " "), num(v)))
                .collect()
        })
        .unwrap_or_default();
    rows.extend(stat_rows.iter().map(|(k, v)| (k.as_str(), v.clone())));
    kv_table(&mut o, &rows);

    let s = &r.sched;
    o.push_str("<h2>Scheduler and host queue</h2>\n");
    kv_table(
        &mut o,
        &[
            ("scheduler", s.kind.clone()),
            ("dispatched", s.dispatched.to_string()),
            ("merged", s.merged.to_string()),
            ("queue time mean (µs)", fmt_value(s.mean_queue_time_us)),
            ("queue time max (µs)", fmt_value(s.max_queue_time_us)),
            (
                "read queue time mean / max (µs)",
                format!(
                    "{} / {}",
                    fmt_value(s.read_queue_time_us.mean),
                    fmt_value(s.read_queue_time_us.max)
                ),
            ),
            (
                "write queue time mean / max (µs)",
                format!(
                    "{} / {}",
                    fmt_value(s.write_queue_time_us.mean),
                    fmt_value(s.write_queue_time_us.max)
                ),
            ),
            (
                "submitters blocked (count, mean µs, max µs)",
                format!(
                    "{}, {}, {}",
                    s.blocked.count,
                    fmt_value(s.blocked.mean_us),
                    fmt_value(s.blocked.max_us)
                ),
            ),
            ("plugged requests", s.plugged.to_string()),
            ("plug flushes", s.plug_flushes.to_string()),
            ("dispatch batches", s.dispatch_batches.to_string()),
            (
                "requests per batch mean / max",
                format!(
                    "{} / {}",
                    fmt_value(s.requests_per_batch_mean),
                    s.requests_per_batch_max
                ),
            ),
            (
                "queue depth mean / max",
                format!("{} / {}", fmt_value(s.queue_depth.mean), s.queue_depth.max),
            ),
        ],
    );

    let u = &r.utilization;
    o.push_str("<h2>Utilization</h2>\n");
    kv_table(
        &mut o,
        &[
            ("channels (busy)", pct(u.channels)),
            ("dies (busy)", pct(u.dies)),
            ("controller CPU (busy)", pct(u.cpu)),
            ("host link (busy)", pct(u.host_link)),
        ],
    );

    energy_section(&mut o, out);
    flows_section(&mut o, r);

    let shown = ["energy_j", "power_w", "efficiency", "flows", "fairness"];
    let others: Vec<(&String, &Value)> = r
        .extra
        .iter()
        .filter(|(k, _)| !shown.contains(&k.as_str()))
        .collect();
    if !others.is_empty() {
        o.push_str("<h2>Other report sections</h2>\n");
        for (k, v) in others {
            let _ = writeln!(o, "<h3>{}</h3>", escape(k));
            json_html(&mut o, v, 0);
            o.push('\n');
        }
    }

    o.push_str("<h2>Notes</h2>\n");
    if r.notes.is_empty() {
        o.push_str("<p>None.</p>\n");
    } else {
        let rows: Vec<(&str, String)> = r
            .notes
            .iter()
            .map(|(k, v)| (k.as_str(), v.to_string()))
            .collect();
        kv_table(&mut o, &rows);
    }

    let run = &r.run;
    o.push_str("<h2>Run</h2>\n");
    kv_table(
        &mut o,
        &[
            ("events", run.events.to_string()),
            ("wall time of the measured phase (s)", fmt_value(run.wall_s)),
            ("precondition", run.precondition.clone()),
            (
                "precondition pages / WAF / steady state reached",
                format!(
                    "{} / {:.3} / {}",
                    run.precondition_pages, run.precondition_waf, run.precondition_steady
                ),
            ),
            (
                "wall time of preconditioning (s)",
                fmt_value(run.precondition_wall_s),
            ),
            ("drain after the last request (s)", fmt_value(run.drain_s)),
            ("ssdsim version of the run", run.version.clone()),
        ],
    );

    o.push_str("<h2>Configuration</h2>\n");
    let (text, kind) = config_text(&r.config);
    config_block(
        &mut o,
        &format!("The resolved configuration ({kind})"),
        &text,
    );
    page_close(&mut o);
    o
}

/// The flows (tenants) of a run with `[[flow]]`s, a row each, and the run's
/// fairness; every field of each in a collapsed block.
fn flows_section(o: &mut String, r: &ssd_core::stats::Report) {
    let Some(flows) = r.extra.get("flows").and_then(|f| f.as_array()) else {
        return;
    };
    o.push_str("<h2>Flows</h2>\n");
    let head: Vec<String> = [
        "flow",
        "priority",
        "requests",
        "IOPS (requests/s)",
        "MB/s",
        "mean latency (µs)",
        "p99 latency (µs)",
        "WAF",
        "slowdown",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let cell = |f: &Value, p: &[&str]| {
        p.iter()
            .try_fold(f, |v, k| v.get(k))
            .map(num)
            .unwrap_or_else(|| "-".into())
    };
    let body: Vec<Vec<String>> = flows
        .iter()
        .map(|f| {
            vec![
                cell(f, &["name"]),
                cell(f, &["priority"]),
                cell(f, &["requests"]),
                cell(f, &["iops"]),
                cell(f, &["bandwidth_mbps"]),
                cell(f, &["latency_us", "mean"]),
                cell(f, &["latency_us", "p99"]),
                // A flow that wrote nothing has no WAF.
                match f.get("waf") {
                    Some(Value::Null) => "n/a".into(),
                    _ => cell(f, &["waf"]),
                },
                cell(f, &["slowdown"]),
            ]
        })
        .collect();
    grid_table(o, "grid", &head, &body);
    if let Some(x) = r.extra.get("fairness") {
        let xg = |k: &str| x.get(k).map(num).unwrap_or_else(|| "-".into());
        kv_table(
            o,
            &[
                ("fairness (least slowdown / greatest)", xg("fairness")),
                (
                    "slowdown min / max",
                    format!("{} / {}", xg("slowdown_min"), xg("slowdown_max")),
                ),
            ],
        );
    }
    o.push_str("<details><summary>Every field of each flow</summary>");
    json_html(o, &Value::Array(flows.clone()), 0);
    o.push_str("</details>\n");
}

fn latency_cdf(o: &mut String, out: &RunOutput) {
    let l = &out.latency;
    let mut lines = Vec::new();
    let mut add = |name: String, points: Vec<(f64, f64)>| {
        if !points.is_empty() {
            let i = lines.len();
            lines.push(Line {
                name,
                color: PALETTE[i % PALETTE.len()],
                dash: DASHES[(i / PALETTE.len()) % DASHES.len()],
                width: if i == 0 { 2.5 } else { 1.8 },
                points,
            });
        }
    };
    let (dev, app) = if l.app {
        ("device requests: ", "application ")
    } else {
        ("", "")
    };
    add(format!("{dev}all"), out.cdf.clone());
    if !l.app {
        add("read".into(), l.read.cdf(200));
        add("write".into(), l.write.cdf(200));
    } else {
        add(format!("{app}reads"), l.read.cdf(200));
        add(format!("{app}writes"), l.write.cdf(200));
        add(format!("{app}fsyncs"), l.sync.cdf(200));
    }
    if lines.is_empty() {
        o.push_str("<p class=\"note\">No latency CDF: no request completed.</p>\n");
        return;
    }
    let svg = LineChart {
        id: "latency-cdf",
        title: "Latency CDF",
        x_label: "latency (µs, log scale)",
        y_label: "fraction of requests at or below",
        x_log: true,
        y_fixed: Some((0.0, 1.0)),
        lines,
    }
    .svg();
    figure(
        o,
        &svg,
        if l.app {
            "Cumulative distribution of latency: the device's requests and the application's calls (through the page cache), from the run's latency histograms (3 significant digits)."
        } else {
            "Cumulative distribution of the measured requests' latency (submission to completion), from the run's latency histograms (3 significant digits)."
        },
    );
}

fn energy_section(o: &mut String, out: &RunOutput) {
    let r = &out.report;
    o.push_str("<h2>Energy and power</h2>\n");
    let Some(e) = r.extra.get("energy_j") else {
        o.push_str(
            "<p class=\"note\">The power model did not run (<code>--no-power</code>): \
             no energy, power or efficiency figures, and no power or energy chart.</p>\n",
        );
        return;
    };
    let g = |p: &[&str]| at(e, p).unwrap_or(0.0);
    let one = |k: &str| at(e, &[k]).or_else(|| at(e, &[k, "total"])).unwrap_or(0.0);
    let total = g(&["total"]);
    let share = |j: f64| {
        if total > 0.0 {
            format!("{:.1} %", j / total * 100.0)
        } else {
            "-".into()
        }
    };
    let parts: Vec<(&str, f64, &'static str)> = vec![
        ("flash read", g(&["flash", "read"]), PALETTE[0]),
        ("flash program", g(&["flash", "program"]), PALETTE[0]),
        ("flash erase", g(&["flash", "erase"]), PALETTE[0]),
        ("flash transfer", g(&["flash", "transfer"]), PALETTE[0]),
        ("flash idle", g(&["flash", "idle"]), PALETTE[0]),
        ("controller CPU", one("cpu"), PALETTE[1]),
        ("DRAM", one("dram"), PALETTE[2]),
        ("bus", one("bus"), PALETTE[3]),
        ("host link", one("host"), PALETTE[4]),
    ];
    let mut body: Vec<Vec<String>> = parts
        .iter()
        .map(|(n, j, _)| vec![n.to_string(), fmt_value(*j), share(*j)])
        .collect();
    body.insert(
        0,
        vec![
            "flash (all)".into(),
            fmt_value(g(&["flash", "total"])),
            share(g(&["flash", "total"])),
        ],
    );
    body.push(vec!["total".into(), fmt_value(total), share(total)]);
    grid_table(
        o,
        "grid",
        &["component".into(), "energy (J)".into(), "share".into()],
        &body,
    );
    if let Some(p) = r.extra.get("power_w") {
        let pg = |k: &str| at(p, &[k]).unwrap_or(0.0);
        kv_table(
            o,
            &[
                ("mean power (W)", fmt_value(pg("mean"))),
                (
                    "min / max power (W)",
                    format!("{} / {}", fmt_value(pg("min")), fmt_value(pg("max"))),
                ),
                ("power standard deviation (W)", fmt_value(pg("std"))),
                ("sample interval (s)", fmt_value(pg("sample_s"))),
                ("samples", num(p.get("samples").unwrap_or(&Value::Null))),
            ],
        );
    }
    if let Some(x) = r.extra.get("efficiency") {
        let xg = |k: &str| x.get(k).map(num).unwrap_or_else(|| "-".into());
        kv_table(
            o,
            &[
                ("AI (IOPS/W)", xg("ai")),
                ("energy per MB (J/MB)", xg("joules_per_mb")),
                ("GB moved per 50 Wh battery", xg("gb_per_50wh_battery")),
            ],
        );
    }
    let bars = parts
        .iter()
        .map(|(n, j, c)| Bar {
            label: n.to_string(),
            value: *j,
            color: c,
            text: format!("{} J ({})", fmt_value(*j), share(*j)),
        })
        .collect();
    let title = format!("Energy breakdown (total {} J)", fmt_value(total));
    let svg = BarChart {
        id: "energy-breakdown",
        title: &title,
        x_label: "energy (J)",
        y_label: "component",
        header: "",
        bars,
        legend: vec![
            ("flash".into(), PALETTE[0]),
            ("controller CPU".into(), PALETTE[1]),
            ("DRAM".into(), PALETTE[2]),
            ("bus".into(), PALETTE[3]),
            ("host link".into(), PALETTE[4]),
        ],
    }
    .svg();
    figure(
        o,
        &svg,
        "Energy of the whole energy window (the measured phase and any drain) by component, in joules and as a share of the total.",
    );
    power_chart(o, out);
    let _ = write!(o, "<details><summary>Every energy field (J)</summary>");
    json_html(o, e, 0);
    o.push_str("</details>\n");
}

/// Samples merged `k` to one (time-weighted means, which keep each group's
/// energy) so that there are at most `max`: (start s, end s, [total,
/// components] W) and `k`.
#[allow(clippy::type_complexity)]
fn merge_samples(s: &[power::Sample], max: usize) -> (Vec<(f64, f64, [f64; 6])>, usize) {
    let k = s.len().div_ceil(max.max(1)).max(1);
    let merged = s
        .chunks(k)
        .map(|g| {
            let len: f64 = g.iter().map(|x| x.len_s).sum();
            let mut w = [0.0; 6];
            for x in g {
                let wt = if len > 0.0 {
                    x.len_s / len
                } else {
                    1.0 / g.len() as f64
                };
                w[0] += x.total_w * wt;
                for c in 0..5 {
                    w[c + 1] += x.component_w[c] * wt;
                }
            }
            let last = g[g.len() - 1];
            (g[0].time_s, last.time_s + last.len_s, w)
        })
        .collect();
    (merged, k)
}

fn power_chart(o: &mut String, out: &RunOutput) {
    let s = &out.power_series;
    if s.is_empty() {
        o.push_str(
            "<p class=\"note\">No power-over-time chart: the power time series was not kept \
             (<code>RunOptions::keep_power_series</code>; <code>ssdsim run --html</code> keeps it).</p>\n",
        );
        return;
    }
    // A step line has two points per sample.
    let (m, k) = merge_samples(s, MAX_SERIES_POINTS / 2);
    let steps = |c: usize| -> Vec<(f64, f64)> {
        m.iter()
            .flat_map(|(a, b, w)| [(*a, w[c]), (*b, w[c])])
            .collect()
    };
    let mut lines = vec![Line {
        name: "total".into(),
        color: "#000000",
        dash: "",
        width: 2.0,
        points: steps(0),
    }];
    for (c, name) in power::series::COMPONENTS.iter().enumerate() {
        lines.push(Line {
            name: (*name).into(),
            color: PALETTE[c],
            dash: "",
            width: 1.4,
            points: steps(c + 1),
        });
    }
    let svg = LineChart {
        id: "power-over-time",
        title: "SSD power over time",
        x_label: "simulated time (s)",
        y_label: "power (W)",
        x_log: false,
        y_fixed: None,
        lines,
    }
    .svg();
    let p = out.report.extra.get("power_w");
    let sample = p.and_then(|p| at(p, &["sample_s"])).unwrap_or(s[0].len_s);
    let mut cap = format!(
        "Total and per-component power, each sample's mean over its interval ({} samples of {} s",
        s.len(),
        fmt_value(sample)
    );
    if let Some(n) = p.and_then(|p| at(p, &["coarsened"])).filter(|n| *n > 0.0) {
        let _ = write!(cap, ", the interval doubled {n} times to bound memory");
    }
    cap.push(')');
    if k > 1 {
        let _ = write!(
            cap,
            "; drawn as {} points, each the time-weighted mean of {k} samples",
            m.len()
        );
    }
    cap.push('.');
    figure(o, &svg, &cap);
}

// ------------------------------------------------------------------ sweep

/// The single-file HTML report of a sweep: its table (one row per point,
/// units in the header; a click on a column sorts it), a bar chart per
/// metric ([`sweep::chart_metrics`], one bar per point labelled by
/// [`sweep::point_label`] and coloured by the first axis that varies) and
/// the points' latency CDFs (rows that carry `cdf`). Failed points are in
/// the table, not the charts.
pub fn sweep_page(rows: &[Row], info: &PageInfo) -> String {
    let mut o = String::new();
    page_open(&mut o, "ssdsim sweep report", info);
    let failed = rows.iter().filter(|r| r.error.is_some()).count();
    let ok: Vec<&Row> = rows.iter().filter(|r| r.error.is_none()).collect();
    o.push_str("<h2>Summary</h2>\n");
    let points = rows.first().map_or(0, |r| r.points);
    let mut summary = vec![
        ("rows", rows.len().to_string()),
        ("failed points", failed.to_string()),
    ];
    if points > 0 {
        summary.push(("points of the sweep", points.to_string()));
    }
    if let Some(r) = rows.first().filter(|r| !r.sweep.is_empty()) {
        summary.push(("sweep identity", r.sweep.clone()));
    }
    let wall: f64 = rows.iter().map(|r| r.wall_s).sum();
    summary.push(("wall time of the points (s, summed)", fmt_value(wall)));
    kv_table(&mut o, &summary);
    if points > rows.len() {
        let _ = writeln!(
            o,
            "<p class=\"note\">{} of the sweep's {points} points are here (a shard, or a partial merge).</p>",
            rows.len()
        );
    }
    if failed > 0 {
        let _ = writeln!(
            o,
            "<p class=\"note\">{failed} points failed: their rows say why (the error column); the charts leave them out.</p>"
        );
    }

    // The axes and their values, in order of appearance.
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
    if !axes.is_empty() {
        o.push_str("<h2>Axes</h2>\n");
        let rows_kv: Vec<(&str, String)> = axes
            .iter()
            .map(|(k, v)| (k.as_str(), v.join(", ")))
            .collect();
        kv_table(&mut o, &rows_kv);
    }

    o.push_str("<h2>Points</h2>\n<div class=\"wide\">");
    let (head, body) = sweep::columns(rows);
    o.push_str("<table class=\"sweep sortable\"><thead><tr>");
    for h in &head {
        match sweep::column_unit(h) {
            Some(u) => {
                let _ = write!(
                    o,
                    "<th>{}<br><span class=\"unit\">{}</span></th>",
                    escape(h),
                    escape(u)
                );
            }
            None => {
                let _ = write!(o, "<th>{}</th>", escape(h));
            }
        }
    }
    o.push_str("</tr></thead><tbody>\n");
    for (r, cells) in rows.iter().zip(&body) {
        o.push_str(if r.error.is_some() {
            "<tr class=\"failed\">"
        } else {
            "<tr>"
        });
        for c in cells {
            let _ = write!(o, "<td>{}</td>", escape(c));
        }
        o.push_str("</tr>\n");
    }
    o.push_str("</tbody></table></div>\n<p class=\"meta\">A click on a column's header sorts the table by it.</p>\n");

    o.push_str("<h2>Charts</h2>\n");
    if ok.is_empty() {
        o.push_str("<p class=\"note\">No point succeeded: nothing to chart.</p>\n");
    } else {
        sweep_charts(&mut o, &ok, &axes);
    }
    if let Some(t) = &info.config_toml {
        o.push_str("<h2>Configuration</h2>\n");
        config_block(
            &mut o,
            "The sweep's base configuration (TOML), before each point's settings",
            t,
        );
    }
    page_close(&mut o);
    o
}

fn sweep_charts(o: &mut String, ok: &[&Row], axes: &[(String, Vec<String>)]) {
    let shown = &ok[..ok.len().min(MAX_BARS)];
    let more = if ok.len() > shown.len() {
        format!(
            " The first {} of {} points (the table has every one).",
            shown.len(),
            ok.len()
        )
    } else {
        String::new()
    };
    // Colour by the first axis with more than one value.
    let group = axes.iter().find(|(_, v)| v.len() > 1);
    let color_of = |r: &Row| -> &'static str {
        let Some((k, vals)) = group else {
            return PALETTE[0];
        };
        let v = r
            .params
            .iter()
            .find(|(pk, _)| pk == k)
            .map(|(_, v)| v.as_str());
        let i = vals.iter().position(|x| Some(x.as_str()) == v).unwrap_or(0);
        PALETTE[i % PALETTE.len()]
    };
    let legend: Vec<(String, &'static str)> = match group {
        Some((k, vals)) => vals
            .iter()
            .take(30)
            .enumerate()
            .map(|(i, v)| (format!("{k} = {v}"), PALETTE[i % PALETTE.len()]))
            .collect(),
        None => Vec::new(),
    };
    let keys: Vec<&str> = axes.iter().map(|(k, _)| k.as_str()).collect();
    let header = keys.join("/");
    for m in sweep::chart_metrics(ok) {
        let bars = shown
            .iter()
            .map(|r| {
                let v = (m.get)(r);
                Bar {
                    label: sweep::point_label(r),
                    value: v,
                    color: color_of(r),
                    text: fmt_value(v),
                }
            })
            .collect();
        let title = format!("{} per point", m.title);
        let x_label = format!("{} ({})", m.title, m.unit);
        let svg = BarChart {
            id: &format!("sweep-{}", m.name.replace('_', "-")),
            title: &title,
            x_label: &x_label,
            y_label: "point",
            header: &header,
            bars,
            legend: legend.clone(),
        }
        .svg();
        figure(
            o,
            &svg,
            &format!(
                "{} ({}) of each point, column {}; a bar's label is the point's values of {}.{more}",
                m.title, m.unit, m.name, if header.is_empty() { "its axes" } else { &header }
            ),
        );
    }
    let with_cdf: Vec<&&Row> = ok.iter().filter(|r| !r.cdf.is_empty()).collect();
    if with_cdf.is_empty() {
        o.push_str("<p class=\"note\">No latency CDF: the rows carry none (CSV rows, or rows from an older ssdsim).</p>\n");
        return;
    }
    let curves = &with_cdf[..with_cdf.len().min(MAX_CURVES)];
    let lines = curves
        .iter()
        .enumerate()
        .map(|(i, r)| Line {
            name: sweep::point_label(r),
            color: PALETTE[i % PALETTE.len()],
            dash: DASHES[(i / PALETTE.len()) % DASHES.len()],
            width: 1.6,
            points: r.cdf.clone(),
        })
        .collect();
    let svg = LineChart {
        id: "sweep-latency-cdf",
        title: "Latency CDF per point",
        x_label: "latency (µs, log scale)",
        y_label: "fraction of requests at or below",
        x_log: true,
        y_fixed: Some((0.0, 1.0)),
        lines,
    }
    .svg();
    let mut cap =
        "Cumulative distribution of each point's request latency (100 quantiles).".to_string();
    if with_cdf.len() > curves.len() {
        let _ = write!(
            cap,
            " The first {} of {} points.",
            curves.len(),
            with_cdf.len()
        );
    }
    figure(o, &svg, &cap);
}

#[cfg(test)]
mod tests;
