//! Tests of `html`.

use super::*;

#[test]
fn escape_covers_markup_and_quotes() {
    assert_eq!(
        escape(r#"<script>alert("x" & 'y')</script>"#),
        "&lt;script&gt;alert(&quot;x&quot; &amp; &#39;y&#39;)&lt;/script&gt;"
    );
    assert_eq!(escape("µs ü"), "µs ü");
}

#[test]
fn thinning_keeps_first_and_last_and_caps() {
    let v: Vec<usize> = (0..10_000).collect();
    for max in [2, 3, 7, 100, 2000, 9_999] {
        let t = thin(&v, max);
        assert_eq!(t.len(), max);
        assert_eq!(t[0], 0);
        assert_eq!(*t.last().unwrap(), 9_999);
        assert!(t.windows(2).all(|w| w[0] < w[1]), "{max}");
    }
    assert_eq!(thin(&v[..5], 10), v[..5]);
    assert_eq!(thin(&v[..5], 0), vec![0, 4]);
    assert!(thin::<u8>(&[], 5).is_empty());
    // Evenly: the gaps differ by at most one.
    let t = thin(&v, 1000);
    let gaps: Vec<usize> = t.windows(2).map(|w| w[1] - w[0]).collect();
    let (lo, hi) = (gaps.iter().min().unwrap(), gaps.iter().max().unwrap());
    assert!(hi - lo <= 1, "{lo} {hi}");
}

#[test]
fn shell_join_quotes_what_a_shell_would_split() {
    assert_eq!(
        shell_join(["ssdsim", "run", "--set", "ftl.op=0.1", "a b", "it's", ""]),
        r#"ssdsim run --set ftl.op=0.1 'a b' 'it'\''s' ''"#
    );
}

/// Every `<svg data-chart>` of `page`: its name and its text.
fn charts(page: &str) -> Vec<(String, String)> {
    page.match_indices("<svg data-chart=\"")
        .map(|(i, m)| {
            let rest = &page[i + m.len()..];
            let name = rest[..rest.find('"').unwrap()].to_string();
            let end = rest.find("</svg>").unwrap();
            (name, rest[..end].to_string())
        })
        .collect()
}

fn check_chart(name: &str, svg: &str) {
    for class in [
        "class=\"chart-title\"",
        "class=\"axis-label x\"",
        "class=\"axis-label y\"",
    ] {
        let at = svg
            .find(class)
            .unwrap_or_else(|| panic!("{name}: no {class}"));
        // Non-empty text.
        let text = &svg[at..];
        let start = text.find('>').unwrap() + 1;
        assert!(!text[start..].starts_with('<'), "{name}: empty {class}");
    }
    assert!(
        svg.contains("<path class=\"data\"") || svg.contains("<rect class=\"data\""),
        "{name}: no data"
    );
    assert!(!svg.contains("NaN") && !svg.contains("inf,"), "{name}");
}

fn sample_output(power: bool) -> RunOutput {
    let mut report = ssd_core::stats::Report::default();
    report.host.requests = 3;
    report.latency_us.all.count = 3;
    report.config = serde_json::json!({"nand": {"name": "chip<2>"}, "ftl": {"op": 0.07}});
    report.notes.insert("a<b>&c".into(), 1);
    let mut latency = crate::RunLatencies::default();
    for ns in [1_000u64, 20_000, 300_000] {
        latency.read.record(ns);
    }
    let mut power_series = Vec::new();
    if power {
        report.extra.insert(
            "energy_j".into(),
            serde_json::json!({"total": 1.5, "flash": {"total": 1.0, "read": 0.5,
             "program": 0.3, "erase": 0.1, "transfer": 0.05, "idle": 0.05},
             "cpu": 0.2, "dram": 0.1, "bus": 0.1, "host": 0.1}),
        );
        report.extra.insert(
            "power_w".into(),
            serde_json::json!({"mean": 2.0, "min": 1.0, "max": 3.0, "std": 0.5,
             "sample_s": 0.001, "requested_sample_s": 0.001, "coarsened": 0, "samples": 7000}),
        );
        power_series = (0..7000)
            .map(|i| power::Sample {
                time_s: i as f64 * 1e-3,
                len_s: 1e-3,
                total_w: 2.0,
                component_w: [1.0, 0.5, 0.2, 0.2, 0.1],
                iops: 0.0,
                mbps: 0.0,
            })
            .collect();
    }
    report.extra.insert(
        "custom".into(),
        serde_json::json!({"x<y": [1, 2.5, "</td>"]}),
    );
    RunOutput {
        report,
        cdf: latency.read.cdf(100),
        latency,
        power_series,
    }
}

#[test]
fn a_run_page_has_every_chart_labelled_and_escapes_its_text() {
    let info = PageInfo {
        command: "ssdsim run --set 'x=<b>'".into(),
        ..PageInfo::default()
    };
    let page = run_page(&sample_output(true), &info);
    let names: Vec<String> = charts(&page).into_iter().map(|c| c.0).collect();
    assert_eq!(
        names,
        ["latency-cdf", "energy-breakdown", "power-over-time"],
        "{names:?}"
    );
    for (name, svg) in charts(&page) {
        check_chart(&name, &svg);
        // At most MAX_SERIES_POINTS per line.
        for d in svg.split(" d=\"").skip(1) {
            let d = &d[..d.find('"').unwrap()];
            assert!(d.matches(' ').count() < MAX_SERIES_POINTS, "{name}");
        }
    }
    assert!(page.contains("ssdsim run --set &#39;x=&lt;b&gt;&#39;"));
    assert!(page.contains("chip&lt;2&gt;") && !page.contains("chip<2>"));
    assert!(page.contains("a&lt;b&gt;&amp;c"));
    assert!(page.contains("&lt;/td&gt;") && !page.contains("</td>\""));
    assert!(page.contains("<details class=\"config\">"));
    // A read-only run has no write amplification (as the text report).
    assert!(
        page.contains("n/a (no host writes)"),
        "WAF of a read-only run"
    );
    let mut written = sample_output(true);
    written.report.host.bytes_written = 4096;
    written.report.flash.waf = Some(1.25);
    let page_w = run_page(&written, &info);
    assert!(page_w.contains("1.2500") && !page_w.contains("no host writes"));
    // Nothing from outside the file.
    for bad in ["http:", "https:", " src=", "href=", "@import", "url("] {
        assert!(!page.contains(bad), "{bad}");
    }
    // Without the power model, or the series, the page says so.
    let page = run_page(&sample_output(false), &PageInfo::default());
    assert_eq!(charts(&page).len(), 1);
    assert!(page.contains("The power model did not run"));
    let mut out = sample_output(true);
    out.power_series.clear();
    let page = run_page(&out, &PageInfo::default());
    assert!(page.contains("power time series was not kept"));
    assert_eq!(charts(&page).len(), 2);
}

#[test]
fn flows_get_a_table_of_their_own() {
    let mut out = sample_output(false);
    out.report.extra.insert(
        "flows".into(),
        serde_json::json!([
            {"name": "reader", "priority": "urgent", "requests": 10, "iops": 1.5,
             "latency_us": {"mean": 3.0, "p99": 4.0}, "slowdown": 1.25},
            {"name": "w<r>", "priority": "low", "requests": 5}
        ]),
    );
    out.report.extra.insert(
        "fairness".into(),
        serde_json::json!({"fairness": 0.8, "slowdown_min": 1.0, "slowdown_max": 1.25}),
    );
    let page = run_page(&out, &PageInfo::default());
    assert!(page.contains("<h2>Flows</h2>"));
    assert!(page.contains("<td>reader</td><td>urgent</td><td>10</td><td>1.5000</td>"));
    assert!(page.contains("<td>w&lt;r&gt;</td>") && page.contains("<td>-</td>"));
    assert!(page.contains("1.0000 / 1.2500"));
    // Not again among the other sections.
    assert!(!page.contains("<h3>flows</h3>") && !page.contains("<h3>fairness</h3>"));
}

fn row(i: usize, ftl: &str, op: &str, error: bool) -> Row {
    Row {
        index: i,
        params: vec![("ftl".into(), ftl.into()), ("op".into(), op.into())],
        seed: 1,
        precondition_seed: 1,
        requests: 10,
        precondition: "none".into(),
        iops: 1000.0 * (i + 1) as f64,
        mbps: 4.0,
        lat_mean_us: Some(50.0),
        lat_p99_us: Some(200.0),
        read_p99_us: Some(200.0),
        write_p99_us: None,
        waf: Some(1.0 + i as f64 / 10.0),
        erases: 3,
        gc_copies: 7,
        energy_j: Some(0.5),
        mean_power_w: Some(2.0),
        min_power_w: Some(1.5),
        max_power_w: Some(2.5),
        power_std_w: Some(0.25),
        ai: Some(500.0),
        app_iops: None,
        ops_s: None,
        warnings: vec![],
        fairness: None,
        sim_time_s: 0.01,
        wall_s: 0.1,
        error: error.then(|| "bad <thing>".to_string()),
        sweep: "abc".into(),
        points: 4,
        check: String::new(),
        cdf: if error {
            vec![]
        } else {
            vec![(10.0, 0.5), (100.0, 1.0)]
        },
    }
}

#[test]
fn a_sweep_page_charts_every_metric_and_the_cdfs() {
    let rows = vec![
        row(0, "page", "0.07", false),
        row(1, "page", "0.2", false),
        row(2, "dftl", "0.07", false),
        row(3, "dftl", "<0.2>", true),
    ];
    let page = sweep_page(&rows, &PageInfo::default());
    let names: Vec<String> = charts(&page).into_iter().map(|c| c.0).collect();
    assert_eq!(
        names,
        [
            "sweep-iops",
            "sweep-lat-p99-us",
            "sweep-waf",
            "sweep-erases",
            "sweep-energy-j",
            "sweep-mean-power-w",
            "sweep-ai",
            "sweep-latency-cdf"
        ]
    );
    for (name, svg) in charts(&page) {
        check_chart(&name, &svg);
        if name.starts_with("sweep-") && name != "sweep-latency-cdf" {
            // One bar per successful point, coloured by the ftl axis.
            assert_eq!(svg.matches("<rect class=\"data\"").count(), 3, "{name}");
            assert!(svg.contains("ftl = dftl"), "{name}");
        }
    }
    assert!(page.contains("bad &lt;thing&gt;") && page.contains("&lt;0.2&gt;"));
    assert!(page.contains("<tr class=\"failed\">"));
    assert!(page.contains("iops<br><span class=\"unit\">requests/s</span>"));
    // Many points: the bars stop at MAX_BARS, the curves at MAX_CURVES.
    let many: Vec<Row> = (0..MAX_BARS + 5)
        .map(|i| row(i, "page", &i.to_string(), false))
        .collect();
    let page = sweep_page(&many, &PageInfo::default());
    let c = charts(&page);
    assert_eq!(c[0].1.matches("<rect class=\"data\"").count(), MAX_BARS);
    let cdf = &c.last().unwrap().1;
    assert_eq!(cdf.matches("<path class=\"data\"").count(), MAX_CURVES);
    assert!(page.contains(&format!("The first {MAX_BARS} of {}", MAX_BARS + 5)));
}
