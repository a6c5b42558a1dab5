//! SVG charts drawn by hand (no plotting crate): the line and bar charts of
//! the HTML reports (`html`) and of the SVG files `ssdsim` writes (the
//! `plots` feature: a sweep's `plots/*.svg`, `--plot-power`,
//! `--plot-breakdown`, `mapping-size --plot`), so that a chart looks the
//! same in both.
//!
//! Every chart has a title, both axes labelled with their units, and at
//! least one data element (`class="data"`); its plot area is the element
//! of class `plot-area`. With more than one series a legend (`<g
//! class="legend">`) lists them below the plot area, never over the data.
//! Text is measured ([`text_width`], by a sans-serif font's advance widths)
//! to size the margins and legend columns, and a label too long for its
//! place is wrapped, never cut. `crates/cli/tests/html.rs` checks in
//! headless Chromium that no text leaves the SVG's viewport or lies over
//! the plot area (the legend, the labels) or over a data element.

use power::series::merge_samples;
use std::fmt::Write;

/// The width of every chart, px.
pub(crate) const WIDTH: f64 = 880.0;

/// The most points one line of a chart has: longer series are thinned
/// ([`thin`]).
pub const MAX_SERIES_POINTS: usize = 2000;

/// Line and bar colours.
pub(crate) const PALETTE: [&str; 10] = [
    "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
    "#bcbd22", "#17becf",
];

/// Dash patterns for lines beyond the palette's ten colours.
pub(crate) const DASHES: [&str; 4] = ["", "6 3", "2 3", "8 3 2 3"];

/// Text sizes (px): tick labels, bar labels and the legend; the title.
const FONT: f64 = 12.0;
const TITLE_FONT: f64 = 16.0;
/// The height of one line of 12 px text in a legend or a wrapped label.
const LINE_H: f64 = 15.0;

/// The style of a chart written as a file of its own ([`standalone`]); an
/// HTML page has the same rules in its style sheet.
#[cfg(feature = "plots")]
pub(crate) const SVG_CSS: &str = ".bg{fill:#fff}.frame{fill:none;stroke:#444}.plot-area{fill:none}\
.grid line{stroke:#e6e6e6}.axis{stroke:#444}.chart-title{font-size:16px;font-weight:600}\
.chart-note{fill:#555}.bar-header{font-style:italic;fill:#555}.axis-label{font-size:13px}\
.ticks text,.bar-label,.bar-value,.legend text{fill:#333}.legend-title{font-style:italic}";

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

/// The width of `s` set in a sans-serif font of `px` pixels, from DejaVu
/// Sans's advance widths (the widest of the common sans-serif fonts, and
/// what `sans-serif` is on most Linux systems), so that Arial, Helvetica
/// or Liberation Sans take no more room than this says.
pub(crate) fn text_width(s: &str, px: f64) -> f64 {
    let em: f64 = s
        .chars()
        .map(|c| match c {
            'i' | 'l' | 'j' | '\'' | '|' | '!' | '.' | ',' | ':' | ';' | ' ' => 0.33,
            'f' | 't' | 'r' | 'I' | 'J' => 0.44,
            '(' | ')' | '[' | ']' | '{' | '}' | '/' | '\\' | '-' => 0.41,
            'm' | 'w' | 'M' | 'W' | '@' | '…' | '—' => 1.0,
            '=' | '+' | '<' | '>' | '~' | '#' | '%' | '&' => 0.96,
            '_' | '*' | '^' | '"' => 0.6,
            '0'..='9' | 'µ' => 0.64,
            'A'..='Z' => 0.78,
            'a'..='z' => 0.64,
            _ => 0.9,
        })
        .sum();
    em * px
}

/// `s` in lines of at most `max` pixels at `px` (a line is broken after a
/// `/`, `,` or `-`, or at a space; a word longer than a line is broken
/// anywhere).
pub(crate) fn wrap(s: &str, max: f64, px: f64) -> Vec<String> {
    if text_width(s, px) <= max {
        return vec![s.to_string()];
    }
    // Pieces that end at a break.
    let mut pieces: Vec<String> = Vec::new();
    let mut cur = String::new();
    for c in s.chars() {
        cur.push(c);
        if matches!(c, '/' | ',' | ' ' | '-') {
            pieces.push(std::mem::take(&mut cur));
        }
    }
    if !cur.is_empty() {
        pieces.push(cur);
    }
    let mut lines: Vec<String> = Vec::new();
    let mut line = String::new();
    for p in pieces {
        if !line.is_empty() && text_width(&format!("{line}{p}"), px) > max {
            lines.push(line.trim_end().to_string());
            line = String::new();
        }
        if text_width(&p, px) > max {
            // No break inside: as many characters as fit.
            for c in p.chars() {
                if !line.is_empty() && text_width(&format!("{line}{c}"), px) > max {
                    lines.push(std::mem::take(&mut line));
                }
                line.push(c);
            }
        } else {
            line.push_str(&p);
        }
    }
    if !line.trim().is_empty() {
        lines.push(line.trim_end().to_string());
    }
    lines
}

/// Text of one or more lines at (`x`, `y`, the first line's baseline),
/// `LINE_H` apart.
fn text_lines(o: &mut String, class: &str, x: f64, y: f64, anchor: &str, lines: &[String]) {
    let _ = write!(
        o,
        r#"<text class="{class}" x="{x:.1}" y="{y:.1}" text-anchor="{anchor}">"#
    );
    if lines.len() == 1 {
        o.push_str(&escape(&lines[0]));
    } else {
        for (i, l) in lines.iter().enumerate() {
            let _ = write!(
                o,
                r#"<tspan x="{x:.1}" dy="{}">{}</tspan>"#,
                if i == 0 { 0.0 } else { LINE_H },
                escape(l)
            );
        }
    }
    o.push_str("</text>");
}

// ------------------------------------------------------------------ numbers

/// A value for a table or a label: 0, one decimal from 100 up, four
/// decimals down to 0.001, three significant digits in exponent form below.
pub(crate) fn fmt_value(x: f64) -> String {
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

/// A tick label for `v` on an axis whose ticks are `step` apart: enough
/// decimals for the step, thousands as k, M, G, small values in exponent form.
pub(crate) fn fmt_tick(v: f64, step: f64) -> String {
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
pub(crate) struct Scale {
    pub(crate) lo: f64,
    pub(crate) hi: f64,
    log: bool,
    pub(crate) ticks: Vec<(f64, String)>,
}

impl Scale {
    /// A linear axis over `[lo, hi]`, widened to whole steps.
    pub(crate) fn linear(lo: f64, hi: f64) -> Scale {
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
    pub(crate) fn linear_exact(lo: f64, hi: f64) -> Scale {
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
    pub(crate) fn log(lo: f64, hi: f64) -> Scale {
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

    /// The widest tick label, px.
    fn widest(&self) -> f64 {
        self.ticks
            .iter()
            .map(|(_, t)| text_width(t, FONT))
            .fold(0.0, f64::max)
    }
}

// ------------------------------------------------------------------ parts

/// The head of a chart: its title and its note (wrapped) from the top.
/// Returns the text and the height it takes.
fn head(title: &str, note: &str) -> (String, f64) {
    let mut o = String::new();
    let title_lines = wrap(title, WIDTH - 40.0, TITLE_FONT * 1.1);
    let mut y = 24.0;
    for l in &title_lines {
        let _ = write!(
            o,
            r#"<text class="chart-title" x="{}" y="{y:.1}" text-anchor="middle">{}</text>"#,
            WIDTH / 2.0,
            escape(l)
        );
        y += 20.0;
    }
    if !note.is_empty() {
        let lines = wrap(note, WIDTH - 40.0, FONT);
        for l in &lines {
            let _ = write!(
                o,
                r#"<text class="chart-note" x="{}" y="{:.1}" text-anchor="middle">{}</text>"#,
                WIDTH / 2.0,
                y - 2.0,
                escape(l)
            );
            y += LINE_H;
        }
    }
    (o, y)
}

/// The whole SVG: its opening (size, title for assistive tools, a white
/// background), then `body`.
fn svg(id: &str, title: &str, h: f64, body: &str) -> String {
    format!(
        r##"<svg data-chart="{}" width="{WIDTH}" height="{h}" viewBox="0 0 {WIDTH} {h}" font-size="12" role="img" aria-label="{}"><title>{}</title><rect class="bg" x="0" y="0" width="{WIDTH}" height="{h}" fill="#fff"/>{body}</svg>"##,
        escape(id),
        escape(title),
        escape(title),
    )
}

/// A chart as a file of its own: the SVG namespace, an XML declaration,
/// a font and the style an HTML page would give it.
#[cfg(feature = "plots")]
pub(crate) fn standalone(svg: &str) -> String {
    let body = svg.strip_prefix("<svg ").unwrap_or(svg);
    let close = body.find('>').map_or(0, |i| i + 1);
    format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\" font-family=\"'DejaVu Sans', Verdana, Arial, Helvetica, sans-serif\" {}<style>{SVG_CSS}</style>{}\n",
        &body[..close],
        &body[close..]
    )
}

fn axis_labels(o: &mut String, x_label: &str, y_label: &str, x: f64, y: f64, y_mid: f64) {
    let _ = write!(
        o,
        r#"<text class="axis-label x" x="{x:.1}" y="{y:.1}" text-anchor="middle">{}</text><text class="axis-label y" x="0" y="0" text-anchor="middle" transform="translate(18 {y_mid:.1}) rotate(-90)">{}</text>"#,
        escape(x_label),
        escape(y_label)
    );
}

/// A legend entry: its name, colour and dash pattern (a swatch line), or
/// [`BAR`] (a filled square).
pub(crate) type Entry = (String, &'static str, &'static str);

/// The "dash pattern" of a bar's legend entry: a filled square.
const BAR: &str = "bar";

/// The layout of a legend of `entries` from `left` to the chart's right
/// edge: columns as wide as the widest name, names too long for the whole
/// width wrapped. Returns the column width, the number of columns and each
/// entry's lines.
fn legend_layout(entries: &[Entry], left: f64) -> (f64, usize, Vec<Vec<String>>) {
    let room = WIDTH - left - 12.0;
    let swatch = 26.0;
    let lines: Vec<Vec<String>> = entries
        .iter()
        .map(|(n, _, _)| wrap(n, room - swatch, FONT))
        .collect();
    let widest = lines
        .iter()
        .flatten()
        .map(|l| text_width(l, FONT))
        .fold(0.0, f64::max);
    let col_w = (widest + swatch + 18.0).min(room);
    let cols = ((room / col_w).floor() as usize).max(1);
    (col_w, cols, lines)
}

/// The height of the legend of `entries` from `left` (0 without one).
fn legend_height(entries: &[Entry], title: &str, left: f64) -> f64 {
    if entries.is_empty() {
        return 0.0;
    }
    let title_h = if title.is_empty() {
        0.0
    } else {
        wrap(title, WIDTH - left - 12.0, FONT).len() as f64 * LINE_H + 4.0
    };
    let (_, cols, lines) = legend_layout(entries, left);
    lines
        .chunks(cols)
        .map(|row| row.iter().map(Vec::len).max().unwrap_or(1) as f64 * LINE_H + 4.0)
        .sum::<f64>()
        + 4.0
        + title_h
}

/// A legend below a chart from `top`: its title (what the names are, if
/// any), then (name, colour, dash) entries in columns. Returns its height.
fn legend(o: &mut String, entries: &[Entry], title: &str, left: f64, top: f64) -> f64 {
    if entries.is_empty() {
        return 0.0;
    }
    let (col_w, cols, lines) = legend_layout(entries, left);
    o.push_str(r#"<g class="legend">"#);
    let mut y0 = top;
    if !title.is_empty() {
        let t = wrap(title, WIDTH - left - 12.0, FONT);
        text_lines(o, "legend-title", left, y0 + 12.0, "start", &t);
        y0 += t.len() as f64 * LINE_H + 4.0;
    }
    for (row, names) in entries.chunks(cols).zip(lines.chunks(cols)) {
        for (i, ((_, color, dash), name)) in row.iter().zip(names).enumerate() {
            let x = left + i as f64 * col_w;
            let y = y0 + 8.0;
            if *dash == BAR {
                let _ = write!(
                    o,
                    r#"<rect x="{:.1}" y="{:.1}" width="12" height="10" fill="{color}"/>"#,
                    x + 3.0,
                    y - 5.0,
                );
            } else {
                let _ = write!(
                    o,
                    r#"<line x1="{x:.1}" y1="{y:.1}" x2="{:.1}" y2="{y:.1}" stroke="{color}" stroke-width="3" stroke-dasharray="{dash}"/>"#,
                    x + 18.0,
                );
            }
            text_lines(o, "legend-name", x + 24.0, y + 4.0, "start", name);
        }
        y0 += names.iter().map(Vec::len).max().unwrap_or(1) as f64 * LINE_H + 4.0;
    }
    o.push_str("</g>");
    y0 - top + 4.0
}

// ------------------------------------------------------------------ line chart

/// One line of a line chart.
pub(crate) struct Line {
    pub(crate) name: String,
    pub(crate) color: &'static str,
    pub(crate) dash: &'static str,
    pub(crate) width: f64,
    pub(crate) points: Vec<(f64, f64)>,
}

/// A line chart: `x_log`/`y_log` for logarithmic axes, `y_fixed` for a
/// fixed y domain (a CDF's 0 to 1), else from 0 (or the least value, if
/// negative) to the greatest. A legend below it names the lines when
/// there are two or more.
pub(crate) struct LineChart<'a> {
    pub(crate) id: &'a str,
    pub(crate) title: &'a str,
    /// A note under the title (a file's caption), wrapped; empty for none.
    pub(crate) note: &'a str,
    pub(crate) x_label: &'a str,
    pub(crate) y_label: &'a str,
    pub(crate) x_log: bool,
    pub(crate) y_log: bool,
    pub(crate) y_fixed: Option<(f64, f64)>,
    pub(crate) lines: Vec<Line>,
    /// What the lines' names are (a sweep's axes), above the legend; empty
    /// for none.
    pub(crate) legend_title: &'a str,
}

impl<'a> LineChart<'a> {
    /// A latency CDF: latency on a log axis against the fraction of
    /// requests at or below it (a run's or a sweep's).
    pub(crate) fn latency_cdf(
        id: &'a str,
        title: &'a str,
        note: &'a str,
        lines: Vec<Line>,
        legend_title: &'a str,
    ) -> LineChart<'a> {
        LineChart {
            id,
            title,
            note,
            x_label: "latency (µs, log scale)",
            y_label: "fraction of requests at or below",
            x_log: true,
            y_log: false,
            y_fixed: Some((0.0, 1.0)),
            lines,
            legend_title,
        }
    }

    pub(crate) fn svg(mut self) -> String {
        for l in &mut self.lines {
            l.points.retain(|&(x, y)| {
                x.is_finite()
                    && y.is_finite()
                    && (!self.x_log || x > 0.0)
                    && (!self.y_log || y > 0.0)
            });
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
        let ys = match (self.y_fixed, self.y_log, empty) {
            (Some((a, b)), _, _) => {
                let mut s = Scale::linear(a, b);
                (s.lo, s.hi) = (a, b);
                s
            }
            (None, true, true) => Scale::log(1.0, 10.0),
            (None, true, false) => Scale::log(ymin, ymax),
            (None, false, true) => Scale::linear(0.0, 1.0),
            (None, false, false) => Scale::linear(ymin.min(0.0), ymax * 1.05),
        };
        let (head, top) = head(self.title, self.note);
        // The top tick's label is centred on the plot's top edge.
        let top = top + 14.0;
        // Room for the y ticks and the y axis label left of the plot, and
        // for half the last x tick right of it.
        let left = (ys.widest() + 40.0).max(80.0).ceil();
        let last_x = xs.ticks.last().map_or(0.0, |t| text_width(&t.1, FONT));
        let right = (last_x / 2.0 + 8.0).max(24.0).ceil();
        let ph = 320.0;
        let pw = WIDTH - left - right;
        let bottom_axis = top + ph;
        let entries: Vec<Entry> = if self.lines.len() > 1 {
            self.lines
                .iter()
                .map(|l| (l.name.clone(), l.color, l.dash))
                .collect()
        } else {
            Vec::new()
        };
        let legend_top = bottom_axis + 52.0;
        let h = (legend_top + legend_height(&entries, self.legend_title, left) + 8.0).ceil();
        let mut o = head;
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
            r#"<rect class="frame plot-area" x="{left:.1}" y="{top:.1}" width="{pw:.1}" height="{ph:.1}"/><g class="ticks">"#
        );
        for (v, t) in &xs.ticks {
            let _ = write!(
                o,
                r#"<text x="{:.1}" y="{:.1}" text-anchor="middle">{}</text>"#,
                px(*v),
                bottom_axis + 19.0,
                escape(t)
            );
        }
        for (v, t) in &ys.ticks {
            let _ = write!(
                o,
                r#"<text x="{:.1}" y="{:.1}" text-anchor="end">{}</text>"#,
                left - 8.0,
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
            bottom_axis + 40.0,
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
        legend(&mut o, &entries, self.legend_title, left, legend_top);
        svg(self.id, self.title, h, &o)
    }
}

// ------------------------------------------------------------------ bar chart

/// One bar of a bar chart, with the text written at its end; no value: no
/// bar, the text alone (`n/a`).
pub(crate) struct Bar {
    pub(crate) label: String,
    pub(crate) value: Option<f64>,
    pub(crate) color: &'static str,
    pub(crate) text: String,
}

/// A horizontal bar chart: a bar per category, its label on the left (under
/// `header`, wrapped when long), its value at its end; `legend`: what the
/// colours mean (shown with two or more entries).
pub(crate) struct BarChart<'a> {
    pub(crate) id: &'a str,
    pub(crate) title: &'a str,
    /// A note under the title (a file's caption), wrapped; empty for none.
    pub(crate) note: &'a str,
    pub(crate) x_label: &'a str,
    pub(crate) y_label: &'a str,
    pub(crate) header: &'a str,
    pub(crate) bars: Vec<Bar>,
    pub(crate) legend: Vec<(String, &'static str)>,
}

impl BarChart<'_> {
    pub(crate) fn svg(self) -> String {
        let n = self.bars.len().max(1);
        // Labels up to 40 % of the width on a line, wrapped beyond.
        let max_label = WIDTH * 0.4;
        let labels: Vec<Vec<String>> = self
            .bars
            .iter()
            .map(|b| wrap(&b.label, max_label, FONT))
            .collect();
        let header = if self.header.is_empty() {
            Vec::new()
        } else {
            wrap(self.header, max_label, FONT)
        };
        let widest = labels
            .iter()
            .chain(std::iter::once(&header))
            .flatten()
            .map(|l| text_width(l, FONT))
            .fold(0.0, f64::max);
        // The labels end 8 px left of the axis; the y axis label (rotated,
        // about 16 px wide) is left of them.
        let left = (widest + 8.0 + 34.0).max(90.0).ceil();
        let right = self
            .bars
            .iter()
            .map(|b| text_width(&b.text, FONT))
            .fold(30.0, f64::max)
            + 16.0;
        let lines = labels.iter().map(Vec::len).max().unwrap_or(1).max(1);
        let row = 22.0 + (lines - 1) as f64 * LINE_H;
        let (head, top) = head(self.title, self.note);
        let top = top + 8.0 + header.len() as f64 * LINE_H;
        let ph = n as f64 * row;
        let pw = WIDTH - left - right;
        let bottom_axis = top + ph;
        let entries: Vec<Entry> = if self.legend.len() > 1 {
            self.legend
                .iter()
                .map(|(n, c)| (n.clone(), *c, BAR))
                .collect()
        } else {
            Vec::new()
        };
        // From the left edge: the legend is under the labels and the bars.
        let legend_left = 24.0;
        let legend_top = bottom_axis + 52.0;
        let h = (legend_top + legend_height(&entries, "", legend_left) + 8.0).ceil();
        let max = self
            .bars
            .iter()
            .filter_map(|b| b.value)
            .filter(|v| v.is_finite())
            .fold(0.0f64, f64::max);
        let xs = Scale::linear(0.0, if max > 0.0 { max } else { 1.0 });
        let px = |v: f64| left + xs.frac(v) * pw;
        let mut o = head;
        o.push_str(r#"<g class="grid">"#);
        for (v, _) in &xs.ticks {
            let x = px(*v);
            let _ = write!(
                o,
                r#"<line x1="{x:.1}" y1="{top:.1}" x2="{x:.1}" y2="{bottom_axis:.1}"/>"#
            );
        }
        let _ = write!(
            o,
            r#"</g><rect class="plot-area" x="{left:.1}" y="{top:.1}" width="{pw:.1}" height="{ph:.1}" fill="none"/><g class="ticks">"#
        );
        for (v, t) in &xs.ticks {
            let _ = write!(
                o,
                r#"<text x="{:.1}" y="{:.1}" text-anchor="middle">{}</text>"#,
                px(*v),
                bottom_axis + 19.0,
                escape(t)
            );
        }
        o.push_str("</g>");
        if !header.is_empty() {
            text_lines(
                &mut o,
                "bar-header",
                left - 8.0,
                top - 8.0 - (header.len() - 1) as f64 * LINE_H,
                "end",
                &header,
            );
        }
        o.push_str(r#"<g class="bars">"#);
        for (i, (b, label)) in self.bars.iter().zip(&labels).enumerate() {
            let y = top + i as f64 * row;
            // The label's lines centred on the row.
            let first = y + row / 2.0 + 4.0 - (label.len() - 1) as f64 * LINE_H / 2.0;
            text_lines(&mut o, "bar-label", left - 8.0, first, "end", label);
            let w = match b.value.filter(|v| v.is_finite()) {
                Some(v) => {
                    let w = (px(v.max(0.0)) - left).max(0.0);
                    let _ = write!(
                        o,
                        r#"<rect class="data" x="{left:.1}" y="{:.1}" width="{w:.1}" height="{:.1}" fill="{}"><title>{}: {}</title></rect>"#,
                        y + 3.0,
                        row - 6.0,
                        b.color,
                        escape(&b.label),
                        escape(&b.text),
                    );
                    w
                }
                None => 0.0,
            };
            let _ = write!(
                o,
                r#"<text class="bar-value" x="{:.1}" y="{:.1}">{}</text>"#,
                left + w + 4.0,
                y + row / 2.0 + 4.0,
                escape(&b.text)
            );
        }
        let _ = write!(
            o,
            r##"</g><line class="axis" x1="{left:.1}" y1="{top:.1}" x2="{left:.1}" y2="{bottom_axis:.1}" stroke="#444"/><line class="axis" x1="{left:.1}" y1="{bottom_axis:.1}" x2="{:.1}" y2="{bottom_axis:.1}" stroke="#444"/>"##,
            left + pw
        );
        axis_labels(
            &mut o,
            self.x_label,
            self.y_label,
            left + pw / 2.0,
            bottom_axis + 40.0,
            top + ph / 2.0,
        );
        legend(&mut o, &entries, "", legend_left, legend_top);
        svg(self.id, self.title, h, &o)
    }
}

// ------------------------------------------------------------------ the charts

/// The energy parts of a report's `energy_j` section: (name, joules,
/// colour), flash by operation then the other components.
pub(crate) fn energy_parts(e: &serde_json::Value) -> Vec<(&'static str, f64, &'static str)> {
    let at = |p: &[&str]| {
        p.iter()
            .try_fold(e, |v, k| v.get(k))
            .and_then(|v| v.as_f64())
    };
    let g = |p: &[&str]| at(p).unwrap_or(0.0);
    let one = |k: &str| at(&[k]).or_else(|| at(&[k, "total"])).unwrap_or(0.0);
    vec![
        ("flash read", g(&["flash", "read"]), PALETTE[0]),
        ("flash program", g(&["flash", "program"]), PALETTE[0]),
        ("flash erase", g(&["flash", "erase"]), PALETTE[0]),
        ("flash transfer", g(&["flash", "transfer"]), PALETTE[0]),
        ("flash idle", g(&["flash", "idle"]), PALETTE[0]),
        ("controller CPU", one("cpu"), PALETTE[1]),
        ("DRAM", one("dram"), PALETTE[2]),
        ("bus", one("bus"), PALETTE[3]),
        ("host link", one("host"), PALETTE[4]),
    ]
}

/// The energy breakdown of a report's `energy_j` section: a bar per
/// component, labelled in joules and as a share of the total.
pub(crate) fn energy_chart(e: &serde_json::Value, note: &str) -> String {
    let total = e.get("total").and_then(|t| t.as_f64()).unwrap_or(0.0);
    let share = |j: f64| {
        if total > 0.0 {
            format!("{:.1} %", j / total * 100.0)
        } else {
            "-".into()
        }
    };
    let bars = energy_parts(e)
        .into_iter()
        .map(|(n, j, c)| Bar {
            label: n.to_string(),
            value: Some(j),
            color: c,
            text: format!("{} J ({})", fmt_value(j), share(j)),
        })
        .collect();
    let title = format!("Energy breakdown (total {} J)", fmt_value(total));
    BarChart {
        id: "energy-breakdown",
        title: &title,
        note,
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
    .svg()
}

/// Power over time: total and per component, a step line each (a sample
/// holds its value over its interval), the samples merged into at most
/// [`MAX_SERIES_POINTS`] points a line. Returns the chart, the number of
/// steps drawn and how many samples each merges.
pub(crate) fn power_chart(s: &[power::Sample], note: &str) -> (String, usize, usize) {
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
        note,
        x_label: "simulated time (s)",
        y_label: "power (W)",
        x_log: false,
        y_log: false,
        y_fixed: None,
        lines,
        legend_title: "",
    }
    .svg();
    (svg, m.len(), k)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merged_power_keeps_energy_and_bounds_points() {
        let s: Vec<power::Sample> = (0..5001)
            .map(|i| power::Sample {
                time_s: i as f64 * 1e-3,
                len_s: if i == 5000 { 0.5e-3 } else { 1e-3 },
                total_w: (i % 7) as f64,
                component_w: [(i % 7) as f64, 0.0, 0.0, 0.0, 0.0],
                iops: 0.0,
                mbps: 0.0,
            })
            .collect();
        let (m, k) = merge_samples(&s, 1000);
        assert!(m.len() <= 1000 && k == 6, "{} {k}", m.len());
        let e: f64 = s.iter().map(|x| x.total_w * x.len_s).sum();
        let em: f64 = m.iter().map(|(a, b, w)| w[0] * (b - a)).sum();
        assert!((e - em).abs() < 1e-9 * e, "{e} {em}");
        assert_eq!(m[0].0, 0.0);
        assert!((m.last().unwrap().1 - 5.0005).abs() < 1e-12);
    }

    #[test]
    fn ticks_are_round_and_readable() {
        let s = Scale::linear(0.0, 7.3);
        let t: Vec<&str> = s.ticks.iter().map(|t| t.1.as_str()).collect();
        assert_eq!(t, ["0", "2", "4", "6", "8"]);
        let s = Scale::linear(0.0, 0.37);
        assert_eq!(s.ticks[1].1, "0.1");
        let s = Scale::linear(0.0, 123_456.0);
        assert_eq!(s.ticks.last().unwrap().1, "150k");
        let s = Scale::log(3.0, 4500.0);
        let t: Vec<&str> = s.ticks.iter().map(|t| t.1.as_str()).collect();
        assert_eq!(t, ["1", "10", "100", "1000", "10k"]);
        assert_eq!(fmt_tick(2e-5, 1e-5), "2e-5");
    }

    #[test]
    fn text_is_wrapped_at_its_breaks_and_never_cut() {
        let s = "ftl=page/workload=rand-write (rw=randwrite, bs=4KiB)/op=0.07";
        let lines = wrap(s, 150.0, FONT);
        assert!(lines.len() > 1, "{lines:?}");
        assert!(
            lines.iter().all(|l| text_width(l, FONT) <= 150.0),
            "{lines:?}"
        );
        // Nothing lost but the spaces the lines end at.
        assert_eq!(lines.concat().replace(' ', ""), s.replace(' ', ""));
        assert_eq!(wrap("short", 150.0, FONT), ["short"]);
        // A word longer than the line is broken anywhere.
        let long = "x".repeat(100);
        let l = wrap(&long, 100.0, FONT);
        assert!(l.len() > 1 && l.concat() == long, "{l:?}");
    }

    #[test]
    #[cfg(feature = "plots")]
    fn a_standalone_chart_is_an_svg_document() {
        let svg = BarChart {
            id: "t",
            title: "T",
            note: "",
            x_label: "x (u)",
            y_label: "y",
            header: "",
            bars: vec![Bar {
                label: "a".into(),
                value: None,
                color: PALETTE[0],
                text: "n/a".into(),
            }],
            legend: vec![],
        }
        .svg();
        // No value: no bar, the text alone.
        assert!(!svg.contains("class=\"data\"") && svg.contains(">n/a<"));
        let doc = standalone(&svg);
        assert!(doc.starts_with("<?xml"));
        assert!(doc.contains("<svg xmlns=\"http://www.w3.org/2000/svg\""));
        assert!(doc.contains("<style>") && doc.trim_end().ends_with("</svg>"));
    }
}
