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
//! Chromium is `SSDSIM_CHROMIUM`, else `chromium`, `chromium-browser`,
//! `google-chrome` or `google-chrome-stable` on the PATH. Without one the
//! test fails when `SSDSIM_REQUIRE_CHROMIUM=1` (CI sets it) and otherwise
//! checks the pages' text only, saying so on stderr.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

mod common;
use common::ssdsim_ok_in;

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("ssdsim-html-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

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
    std::fs::write(
        &probe,
        html.replacen("<head>", &format!("<head>{CATCHER}"), 1),
    )
    .unwrap();
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
    html.match_indices("<svg data-chart=\"")
        .map(|(i, m)| {
            let rest = &html[i + m.len()..];
            let name = rest[..rest.find('"').unwrap()].to_string();
            let end = rest.find("</svg>").expect("a closed <svg>");
            (name, rest[..end].to_string())
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
}

const RUN_CHARTS: &[&str] = &["latency-cdf", "energy-breakdown", "power-over-time"];
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
    let mut run = vec!["run", "--rw", "randrw", "--html", "run.html"];
    run.extend(small);
    ssdsim_ok_in(&dir, &run);
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

    let Some(chrome) = browser() else {
        let _ = std::fs::remove_dir_all(&dir);
        return;
    };
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
