//! The HTML reports in a real browser. `ssdsim run --html`, `run --no-power
//! --html`, `sweep --out-dir` (its `sweep.html`) and `merge --html` write
//! pages of small runs; each is loaded in headless Chromium (`--dump-dom`),
//! and the test fails on a console message (Chromium logs every one,
//! errors and uncaught exceptions included, as a `CONSOLE` line on stderr),
//! on a script error (a `window.onerror` put first in the page's head marks
//! the DOM), if the page's own script did not run to its end, or if a
//! chart is missing or empty (every expected `<svg data-chart>` with its
//! title, both axis labels and a data element). A page must also load
//! nothing from outside itself. A first page with a known error proves
//! that this Chromium's console messages and the marker are seen at all.
//!
//! The charts' geometry is checked in the browser too, for the pages and
//! for every SVG file the program writes (`sweep`'s `plots/*.svg`,
//! `--plot-power`, `--plot-breakdown`, `mapping-size --plot`, put inline in
//! a page of their own): a script measures each chart's text
//! (`getBoundingClientRect`) and fails on text outside the SVG's viewport
//! or cut short with an ellipsis, on the legend or a label over the plot
//! area, on a bar's value over a bar, and on two texts over each other. A chart with those faults
//! proves the check sees them.
//!
//! Chromium is `SSDSIM_CHROMIUM`, else `chromium`, `chromium-browser`,
//! `google-chrome` or `google-chrome-stable` on the PATH. Without one the
//! test fails when `SSDSIM_REQUIRE_CHROMIUM=1` (CI sets it) and otherwise
//! checks the pages' text only, saying so on stderr.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

mod common;
use common::{scratch, ssdsim_ok_in};

fn chromium() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("SSDSIM_CHROMIUM").filter(|p| !p.is_empty()) {
        return Some(p.into());
    }
    let path = std::env::var_os("PATH")?;
    for name in [
        "chromium",
        "chromium-browser",
        "google-chrome",
        "google-chrome-stable",
    ] {
        for dir in std::env::split_paths(&path) {
            let p = dir.join(name);
            if p.is_file() {
                return Some(p);
            }
        }
    }
    None
}

/// Chromium, or `None` (then the caller checks the pages' text only). With
/// `SSDSIM_REQUIRE_CHROMIUM=1` a missing browser fails the test.
fn browser() -> Option<PathBuf> {
    let found = chromium();
    if found.is_none() {
        let required = std::env::var("SSDSIM_REQUIRE_CHROMIUM").is_ok_and(|v| v == "1");
        assert!(
            !required,
            "SSDSIM_REQUIRE_CHROMIUM=1 but no Chromium: set SSDSIM_CHROMIUM or put chromium \
             (Debian: apt-get install chromium) on the PATH"
        );
        // Past the test harness's capture of eprintln!, so that a skip is seen.
        use std::io::Write;
        let _ = writeln!(
            std::io::stderr(),
            "NOTICE: no Chromium found (SSDSIM_CHROMIUM, chromium, chromium-browser, \
             google-chrome): the HTML pages are checked as text only, not loaded in a browser"
        );
    }
    found
}

/// What Chromium made of a page.
struct Loaded {
    /// The DOM after loading (scripts run).
    dom: String,
    /// Console messages and uncaught exceptions from Chromium's log.
    console: Vec<String>,
}

impl Loaded {
    /// What [`GEOMETRY`] found: the number of charts it measured and the
    /// faults, one per line.
    fn geometry(&self) -> (usize, Vec<String>) {
        let attr = |name: &str| -> Option<String> {
            let at = self.dom.find(&format!("{name}=\""))? + name.len() + 2;
            let end = self.dom[at..].find('"')?;
            Some(
                self.dom[at..at + end]
                    .replace("&quot;", "\"")
                    .replace("&lt;", "<")
                    .replace("&gt;", ">")
                    .replace("&nbsp;", " ")
                    .replace("&amp;", "&"),
            )
        };
        let charts = attr("data-geometry")
            .and_then(|n| n.parse().ok())
            .expect("the geometry script ran");
        let faults = attr("data-geometry-faults")
            .unwrap_or_default()
            .split('\n')
            .filter(|l| !l.is_empty())
            .map(str::to_string)
            .collect();
        (charts, faults)
    }
}

/// The geometry check, put last in a page's body: for each `<svg
/// data-chart>`, its texts' boxes against the SVG's viewport, its plot
/// area (`.plot-area`), its data (`.data`) and each other; the legend's
/// box against the plot area and the data. Writes the number of charts
/// and the faults (one a line) on the document element.
const GEOMETRY: &str = r#"<script>(function(){
var faults=[],n=0,tol=0.5;
function box(e){var r=e.getBoundingClientRect();return {l:r.left,t:r.top,r:r.right,b:r.bottom};}
function meet(a,b){return a.l<b.r-tol&&b.l<a.r-tol&&a.t<b.b-tol&&b.t<a.b-tol;}
function inside(a,b){return a.l>=b.l-tol&&a.r<=b.r+tol&&a.t>=b.t-tol&&a.b<=b.b+tol;}
function empty(a){return a.r-a.l<=0||a.b-a.t<=0;}
function say(t){return JSON.stringify((t.textContent||'').trim().slice(0,50));}
Array.prototype.forEach.call(document.querySelectorAll('svg[data-chart]'),function(svg){
  n++;
  var id=svg.getAttribute('data-chart'),vp=box(svg),pa=svg.querySelector('.plot-area');
  if(!pa){faults.push(id+': no plot area');return;}
  var area=box(pa);
  var data=Array.prototype.map.call(svg.querySelectorAll('.data'),box).filter(function(d){return !empty(d);});
  var texts=Array.prototype.filter.call(svg.querySelectorAll('text'),function(t){return !empty(box(t));});
  texts.forEach(function(t,i){
    var b=box(t),value=(t.getAttribute('class')||'').indexOf('bar-value')>=0;
    if(!inside(b,vp))faults.push(id+': text '+say(t)+' is cut by the viewport');
    if((t.textContent||'').indexOf('\u2026')>=0)faults.push(id+': text '+say(t)+' is cut short');
    if(!value&&meet(b,area))faults.push(id+': text '+say(t)+' lies over the plot area');
    if(value&&data.some(function(d){return meet(b,d);}))faults.push(id+': value '+say(t)+' lies over a bar');
    for(var j=i+1;j<texts.length;j++){
      if(meet(b,box(texts[j])))faults.push(id+': texts '+say(t)+' and '+say(texts[j])+' overlap');
    }
  });
  Array.prototype.forEach.call(svg.querySelectorAll('.legend'),function(g){
    var b=box(g);
    if(meet(b,area))faults.push(id+': the legend lies over the plot area');
    if(!inside(b,vp))faults.push(id+': the legend is cut by the viewport');
  });
});
document.documentElement.setAttribute('data-geometry',String(n));
document.documentElement.setAttribute('data-geometry-faults',faults.join('\n'));
})();</script>"#;

/// The error catcher put first in a page's head: an error of any later
/// script marks the document element.
const CATCHER: &str = "<script>window.onerror=function(m){document.documentElement.\
    setAttribute('data-js-error',String(m));};</script>";

/// Load `page` (with [`CATCHER`]) in headless Chromium, in a profile of its
/// own under `work`.
fn load(chrome: &Path, page: &Path, work: &Path) -> Loaded {
    let html = std::fs::read_to_string(page).unwrap();
    assert!(html.contains("<head>"), "{}: no <head>", page.display());
    let probe = work.join(format!(
        "probe-{}",
        page.file_name().unwrap().to_string_lossy()
    ));
    let html = html.replacen("<head>", &format!("<head>{CATCHER}"), 1);
    let at = html.rfind("</body>").expect("a </body>");
    std::fs::write(&probe, format!("{}{GEOMETRY}{}", &html[..at], &html[at..])).unwrap();
    let out = work.join("chromium.out");
    let err = work.join("chromium.err");
    let mut child = Command::new(chrome)
        .args([
            "--headless=new",
            "--disable-gpu",
            "--no-sandbox",
            "--disable-dev-shm-usage",
            "--no-first-run",
            "--enable-logging=stderr",
            "--v=0",
        ])
        .arg(format!(
            "--user-data-dir={}",
            work.join("profile").display()
        ))
        .arg("--dump-dom")
        .arg(format!(
            "file://{}",
            probe.canonicalize().unwrap().display()
        ))
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&out).unwrap())
        .stderr(std::fs::File::create(&err).unwrap())
        .spawn()
        .unwrap_or_else(|e| panic!("{}: cannot start: {e}", chrome.display()));
    let started = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if started.elapsed() > Duration::from_secs(90) {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{}: Chromium did not finish in 90 s", page.display());
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let dom = std::fs::read_to_string(&out).unwrap();
    let log = std::fs::read_to_string(&err).unwrap();
    assert!(
        status.success() && dom.contains("</html>"),
        "{}: Chromium failed ({status}): {log}",
        page.display()
    );
    let console = log
        .lines()
        .filter(|l| l.contains(":CONSOLE") || l.contains("CONSOLE(") || l.contains("Uncaught"))
        .map(str::to_string)
        .collect();
    Loaded { dom, console }
}

/// The `<svg data-chart>` elements of `html`: (name, their text).
fn charts(html: &str) -> Vec<(String, String)> {
    html.match_indices("<svg ")
        .filter_map(|(i, _)| {
            let rest = &html[i..];
            let tag = &rest[..rest.find('>')?];
            let at = tag.find(" data-chart=\"")? + " data-chart=\"".len();
            let name = tag[at..at + tag[at..].find('"')?].to_string();
            let end = rest.find("</svg>").expect("a closed <svg>");
            Some((name, rest[..end].to_string()))
        })
        .collect()
}

/// The text of the first element with `class` in `svg`.
fn text_of<'a>(svg: &'a str, class: &str) -> Option<&'a str> {
    let at = svg.find(&format!("class=\"{class}\""))?;
    let rest = &svg[at..];
    let start = rest.find('>')? + 1;
    let end = rest[start..].find('<')?;
    Some(rest[start..start + end].trim())
}

/// `html` (a page, or the DOM Chromium made of it) has exactly the charts
/// `want`, each with a title, both axis labels and a data element.
fn check_charts(what: &str, html: &str, want: &[&str]) {
    let found = charts(html);
    let names: Vec<&str> = found.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, want, "{what}: the charts");
    for (name, svg) in &found {
        for class in ["chart-title", "axis-label x", "axis-label y"] {
            let t = text_of(svg, class);
            assert!(
                t.is_some_and(|t| !t.is_empty()),
                "{what}: chart {name} has no {class} text"
            );
        }
        assert!(
            svg.contains("<path class=\"data\"") || svg.contains("<rect class=\"data\""),
            "{what}: chart {name} draws no data"
        );
    }
}

/// A page's own text: one file, nothing loaded from elsewhere.
fn check_self_contained(what: &str, html: &str) {
    for bad in [" src=", "href=", "http:", "https:", "url(", "@import"] {
        assert!(!html.contains(bad), "{what}: {bad:?} in the page");
    }
    assert!(html.starts_with("<!DOCTYPE html>") && html.trim_end().ends_with("</html>"));
}

/// A loaded page: no console message, no script error, the page's script
/// ran to its end, and the charts are there.
fn check_loaded(what: &str, l: &Loaded, want: &[&str]) {
    assert!(
        l.console.is_empty(),
        "{what}: console messages:\n{}",
        l.console.join("\n")
    );
    assert!(
        !l.dom.contains("data-js-error=\""),
        "{what}: a script error: {}",
        &l.dom[..l.dom.len().min(400)]
    );
    assert!(
        l.dom.contains("data-script=\"done\""),
        "{what}: the page's script did not run to its end"
    );
    check_charts(&format!("{what} in Chromium"), &l.dom, want);
    check_geometry(what, l, want.len());
}

/// No text of a chart cut or over its data ([`GEOMETRY`]), in each of the
/// `charts` charts of a loaded page.
fn check_geometry(what: &str, l: &Loaded, charts: usize) {
    let (measured, faults) = l.geometry();
    assert_eq!(measured, charts, "{what}: charts measured");
    assert!(
        faults.is_empty(),
        "{what}: text over data or cut:\n{}",
        faults.join("\n")
    );
}

/// A page holding the SVG files `svgs` inline (each a whole SVG document,
/// its XML declaration left out), to load them in Chromium.
fn svg_page(svgs: &[(String, String)]) -> String {
    let mut page = String::from(
        "<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>plots</title></head>\
         <body style=\"margin:0\">",
    );
    for (name, svg) in svgs {
        let at = svg
            .find("<svg")
            .unwrap_or_else(|| panic!("{name}: no <svg>"));
        page.push_str(&format!("<div>{}</div>", &svg[at..]));
    }
    page.push_str("<script>document.documentElement.setAttribute('data-script','done');</script></body></html>\n");
    page
}

const RUN_CHARTS: &[&str] = &["latency-cdf", "energy-breakdown", "power-over-time"];

/// The SVG files the test's commands write, and the chart each holds.
const PLOT_FILES: &[(&str, &str)] = &[
    ("out/plots/iops.svg", "sweep-iops"),
    ("out/plots/lat_p99_us.svg", "sweep-lat-p99-us"),
    ("out/plots/waf.svg", "sweep-waf"),
    ("out/plots/erases.svg", "sweep-erases"),
    ("out/plots/energy_j.svg", "sweep-energy-j"),
    ("out/plots/mean_power_w.svg", "sweep-mean-power-w"),
    ("out/plots/ai.svg", "sweep-ai"),
    ("out/plots/latency_cdf.svg", "sweep-latency-cdf"),
    ("power.svg", "power-over-time"),
    ("breakdown.svg", "energy-breakdown"),
    ("map.svg", "mapping-size"),
];
const SWEEP_CHARTS: &[&str] = &[
    "sweep-iops",
    "sweep-lat-p99-us",
    "sweep-waf",
    "sweep-erases",
    "sweep-energy-j",
    "sweep-mean-power-w",
    "sweep-ai",
    "sweep-latency-cdf",
];

/// The detector is not blind: a page with a console error and an uncaught
/// exception is caught both ways.
#[test]
fn chromium_reports_a_broken_page() {
    let Some(chrome) = browser() else { return };
    let dir = scratch("canary");
    let page = dir.join("broken.html");
    std::fs::write(
        &page,
        "<!DOCTYPE html><html><head><title>x</title></head><body><p>x</p>\
         <script>console.error('canary'); no_such_function();</script></body></html>",
    )
    .unwrap();
    let l = load(&chrome, &page, &dir);
    assert!(
        l.console.iter().any(|c| c.contains("canary"))
            && l.console.iter().any(|c| c.contains("Uncaught")),
        "this Chromium logs no console messages on stderr, so the check of the reports \
         would be blind: {:?}",
        l.console
    );
    assert!(l.dom.contains("data-js-error=\"Uncaught ReferenceError"));
    let _ = std::fs::remove_dir_all(&dir);
}

/// The geometry check is not blind: a chart whose legend lies over its
/// plot area, whose label runs out of its viewport and whose two labels
/// lie over each other fails it on each count; a clean one passes.
#[test]
fn the_geometry_check_sees_text_over_data() {
    let Some(chrome) = browser() else { return };
    let dir = scratch("geometry-canary");
    let chart = |name: &str, body: &str| {
        format!(
            "<svg data-chart=\"{name}\" width=\"400\" height=\"300\" viewBox=\"0 0 400 300\" font-size=\"12\">\
             <rect class=\"plot-area\" x=\"50\" y=\"50\" width=\"300\" height=\"180\" fill=\"none\"/>\
             <rect class=\"data\" x=\"50\" y=\"100\" width=\"200\" height=\"20\"/>{body}</svg>"
        )
    };
    let bad = chart(
        "bad",
        "<g class=\"legend\"><text x=\"300\" y=\"80\">a legend</text></g>\
         <text x=\"370\" y=\"270\">a label cut by the edge</text>\
         <text x=\"10\" y=\"260\">one</text><text x=\"12\" y=\"262\">two</text>\
         <text class=\"bar-value\" x=\"200\" y=\"114\">on its bar</text>",
    );
    let good = chart(
        "good",
        "<g class=\"legend\"><text x=\"50\" y=\"260\">a legend</text></g>\
         <text class=\"bar-value\" x=\"254\" y=\"114\">9.5</text>",
    );
    let page = dir.join("geometry.html");
    std::fs::write(
        &page,
        format!(
            "<!DOCTYPE html><html><head><title>g</title></head><body>{bad}{good}</body></html>"
        ),
    )
    .unwrap();
    let l = load(&chrome, &page, &dir);
    let (charts, faults) = l.geometry();
    assert_eq!(charts, 2);
    for want in [
        "bad: the legend lies over the plot area",
        "bad: text \"a label cut by the edge\" is cut by the viewport",
        "bad: texts \"one\" and \"two\" overlap",
        "bad: value \"on its bar\" lies over a bar",
    ] {
        assert!(faults.iter().any(|f| f == want), "{want} not in {faults:?}");
    }
    assert!(faults.iter().all(|f| f.starts_with("bad: ")), "{faults:?}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn reports_load_in_chromium_with_every_chart_and_no_error() {
    let dir = scratch("pages");
    let small = [
        "--number_ios",
        "1500",
        "--precondition",
        "none",
        "--no-progress",
    ];
    let mut run = vec![
        "run",
        "--rw",
        "randrw",
        "--html",
        "run.html",
        "--plot-power",
        "power.svg",
        "--plot-breakdown",
        "breakdown.svg",
    ];
    run.extend(small);
    ssdsim_ok_in(&dir, &run);
    ssdsim_ok_in(&dir, &["mapping-size", "--plot", "map.svg"]);
    let mut quiet = vec!["run", "--no-power", "--html", "nopower.html"];
    quiet.extend(small);
    ssdsim_ok_in(&dir, &quiet);
    ssdsim_ok_in(
        &dir,
        &[
            "sweep",
            "--ftl",
            "page,dftl",
            "--workload",
            "rand-read,rand-write",
            "--number_ios",
            "300",
            "--precondition",
            "none",
            "--no-progress",
            "--out-dir",
            "out",
        ],
    );
    ssdsim_ok_in(&dir, &["merge", "out/sweep.jsonl", "--html", "merged.html"]);

    let pages: [(&str, &[&str]); 4] = [
        ("run.html", RUN_CHARTS),
        ("nopower.html", &["latency-cdf"]),
        ("out/sweep.html", SWEEP_CHARTS),
        ("merged.html", SWEEP_CHARTS),
    ];
    for (name, want) in pages {
        let html = std::fs::read_to_string(dir.join(name)).unwrap();
        check_self_contained(name, &html);
        check_charts(name, &html, want);
    }
    let nopower = std::fs::read_to_string(dir.join("nopower.html")).unwrap();
    assert!(nopower.contains("The power model did not run"));
    let sweep = std::fs::read_to_string(dir.join("out/sweep.html")).unwrap();
    assert!(sweep.contains("<table class=\"sweep sortable\">"));
    // The sweep's four points, each a row and a bar.
    assert_eq!(sweep.matches("<tr><td>").count(), 4);
    assert!(sweep.contains("ssdsim sweep --ftl page,dftl"));
    // The settings every point has are stated once, not as columns or in
    // the bars' labels; the read-only points' WAF is n/a, not 0.
    assert!(
        sweep.contains("<th>fixed (every point)</th><td>precondition=none, number_ios=300</td>"),
        "the fixed settings"
    );
    assert!(!sweep.contains("<th>precondition</th>") && !sweep.contains("<th>number_ios</th>"));
    assert!(sweep.contains(">page/rand-read</text>") && !sweep.contains("/none"));
    assert!(sweep.contains("<td>n/a</td>") && sweep.contains(">n/a</text>"));

    // The SVG files: whole documents with the charts of the pages.
    let mut svgs: Vec<(String, String)> = Vec::new();
    let mut want: Vec<&str> = Vec::new();
    for (file, chart) in PLOT_FILES {
        let svg = std::fs::read_to_string(dir.join(file)).unwrap();
        assert!(
            svg.starts_with("<?xml") && svg.contains("<svg xmlns=\"http://www.w3.org/2000/svg\""),
            "{file}: not an SVG document"
        );
        check_charts(file, &svg, &[chart]);
        svgs.push((file.to_string(), svg));
        want.push(chart);
    }
    // Units on both axes of each.
    for (file, svg) in &svgs {
        let x = text_of(svg, "axis-label x").unwrap();
        assert!(
            x.contains('(') && x.contains(')'),
            "{file}: x axis {x:?} has no unit"
        );
    }
    std::fs::write(dir.join("plots.html"), svg_page(&svgs)).unwrap();

    let Some(chrome) = browser() else {
        let _ = std::fs::remove_dir_all(&dir);
        return;
    };
    let mut pages = pages.to_vec();
    pages.push(("plots.html", &want));
    // Two at a time (each in a profile of its own): the machine may have
    // two cores.
    for (c, chunk) in pages.chunks(2).enumerate() {
        std::thread::scope(|s| {
            let handles: Vec<_> = chunk
                .iter()
                .enumerate()
                .map(|(i, (name, want))| {
                    let (chrome, dir) = (&chrome, &dir);
                    s.spawn(move || {
                        let work = dir.join(format!("chromium-{c}-{i}"));
                        std::fs::create_dir_all(&work).unwrap();
                        let l = load(chrome, &dir.join(name), &work);
                        check_loaded(name, &l, want);
                        if name.contains("sweep") || name.contains("merged") {
                            assert!(
                                l.dom.contains("data-sortable=\"ready\""),
                                "{name}: the table's sorting was not set up"
                            );
                        }
                    })
                })
                .collect();
            for h in handles {
                if let Err(e) = h.join() {
                    std::panic::resume_unwind(e);
                }
            }
        });
    }
    let _ = std::fs::remove_dir_all(&dir);
}
