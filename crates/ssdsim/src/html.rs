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

pub use crate::chart::{escape, thin, MAX_SERIES_POINTS};
use crate::chart::{fmt_value, Line, LineChart, DASHES, PALETTE};

pub use crate::sweep::{MAX_BARS, MAX_CURVES};

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

// ------------------------------------------------------------------ figures

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
svg .plot-area{fill:none}svg .chart-note{fill:#555}svg .legend text{fill:#333}svg .legend-title{font-style:italic}svg .chart-title{font-size:16px;font-weight:600}svg .bar-header{font-style:italic;fill:#555}svg .axis-label{font-size:13px}svg .ticks text,svg .bar-label,svg .bar-value{fill:#333}
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
    let svg = LineChart::latency_cdf("latency-cdf", "Latency CDF", "", lines, "").svg();
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
    let total = g(&["total"]);
    let share = |j: f64| {
        if total > 0.0 {
            format!("{:.1} %", j / total * 100.0)
        } else {
            "-".into()
        }
    };
    let parts = crate::chart::energy_parts(e);
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
    let svg = crate::chart::energy_chart(e, "");
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

fn power_chart(o: &mut String, out: &RunOutput) {
    let s = &out.power_series;
    if s.is_empty() {
        o.push_str(
            "<p class=\"note\">No power-over-time chart: the power time series was not kept \
             (<code>RunOptions::keep_power_series</code>; <code>ssdsim run --html</code> keeps it).</p>\n",
        );
        return;
    }
    let (svg, steps, k) = crate::chart::power_chart(s, "");
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
            "; drawn as {steps} points, each the time-weighted mean of {k} samples"
        );
    }
    cap.push('.');
    figure(o, &svg, &cap);
}

// ------------------------------------------------------------------ sweep

/// The single-file HTML report of a sweep: its axes (those that vary, and
/// what every point has alike, [`sweep::Layout`]), its table (one row per
/// point, units in the header; a click on a column sorts it), a bar chart
/// per metric ([`sweep::chart_metrics`], one bar per point labelled by
/// [`sweep::Layout::label`] and coloured by the first axis that varies) and
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

    // The axes that vary, and what every row has alike (stated once: not
    // a column, not in every bar's label).
    let layout = sweep::Layout::of(rows);
    if !layout.varying.is_empty() || !layout.fixed.is_empty() {
        o.push_str("<h2>Axes</h2>\n");
        let mut rows_kv: Vec<(&str, String)> = layout
            .varying
            .iter()
            .map(|(k, v)| (k.as_str(), v.join(", ")))
            .collect();
        let fixed: Vec<String> = layout
            .fixed
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        if !fixed.is_empty() {
            rows_kv.push(("fixed (every point)", fixed.join(", ")));
        }
        kv_table(&mut o, &rows_kv);
    }

    o.push_str("<h2>Points</h2>\n<div class=\"wide\">");
    let (head, body) = sweep::shown_columns(rows, &layout);
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
        sweep_charts(&mut o, &ok, &layout);
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

fn sweep_charts(o: &mut String, ok: &[&Row], layout: &sweep::Layout) {
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
    let header = layout.keys().join("/");
    let axes = match (header.is_empty(), layout.fixed.is_empty()) {
        (true, _) => "no axis: a single point".to_string(),
        (false, true) => header.clone(),
        (false, false) => format!("{header} (the settings every point has are under Axes)"),
    };
    for m in sweep::chart_metrics(ok) {
        let svg = crate::sweep::sweep_bars(&m, shown, layout, "");
        let na = if shown.iter().any(|r| (m.get)(r).is_none()) {
            " n/a: no value (a WAF where the host wrote nothing, a latency where the device completed no request)."
        } else {
            ""
        };
        figure(
            o,
            &svg,
            &format!(
                "{} ({}) of each point, column {}; a bar's label is the point's values of {axes}.{na}{more}",
                m.title,
                m.unit,
                m.name,
            ),
        );
    }
    let with_cdf: Vec<&Row> = ok.iter().copied().filter(|r| !r.cdf.is_empty()).collect();
    if with_cdf.is_empty() {
        o.push_str("<p class=\"note\">No latency CDF: the rows carry none (CSV rows, or rows from an older ssdsim).</p>\n");
        return;
    }
    let curves = &with_cdf[..with_cdf.len().min(MAX_CURVES)];
    let svg = crate::sweep::sweep_cdf(curves, layout, "");
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
