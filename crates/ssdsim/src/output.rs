//! Human-readable report rendering.

use ssd_core::stats::{LatencySummary, Report};
use std::fmt::Write;

fn lat_line(out: &mut String, name: &str, l: &LatencySummary) {
    if l.count == 0 {
        return;
    }
    let _ = writeln!(
        out,
        "  {name:<6} n={:<9} mean {:>9.1}  p50 {:>9.1}  p90 {:>9.1}  p99 {:>9.1}  p99.9 {:>9.1}  max {:>9.1}",
        l.count, l.mean, l.p50, l.p90, l.p99, l.p999, l.max
    );
}

/// The report as human-readable text (what `ssdsim run` prints by default).
pub fn text(r: &Report) -> String {
    let mut o = String::new();
    let c = &r.config;
    let g = |a: &str, b: &str| {
        c.get(a)
            .and_then(|x| x.get(b))
            .map(|v| v.to_string().trim_matches('"').to_string())
            .unwrap_or_default()
    };
    let _ = writeln!(
        o,
        "ssdsim {}  nand {}  {}x{} chips  ftl {}  sched {}  op {}  seed {}",
        r.run.version,
        g("nand", "name"),
        g("layout", "channels"),
        g("layout", "ways"),
        r.ftl.kind,
        r.sched.kind,
        g("ftl", "op"),
        r.run.seed
    );
    let h = &r.host;
    let _ = writeln!(
        o,
        "host     {} requests ({} reads, {} writes, {} trims, {} flushes) in {:.6} s simulated: {:.0} IOPS, {:.2} MB/s",
        h.requests, h.reads, h.writes, h.trims, h.flushes, h.sim_time_s, h.iops, h.mbps
    );
    if let Some(pc) = r.extra.get("page_cache") {
        // A buffered run: the device's requests are the cache's, not the
        // application's calls, whose bytes may still sit in memory.
        let dirty = pc["dirty_at_end_bytes"].as_u64().unwrap_or(0)
            + pc["writeback_at_end_bytes"].as_u64().unwrap_or(0);
        let _ = write!(
            o,
            "         buffered: the application's calls go through the page cache (app, cache below)"
        );
        if dirty > 0 {
            let _ = write!(
                o,
                "; {dirty} bytes written were not on the device at the end"
            );
        }
        let _ = writeln!(o);
    }
    let _ = writeln!(o, "latency (us)");
    lat_line(&mut o, "all", &r.latency_us.all);
    lat_line(&mut o, "read", &r.latency_us.read);
    lat_line(&mut o, "write", &r.latency_us.write);
    if let Some(t) = r.extra.get("trace") {
        let _ = writeln!(
            o,
            "trace    {} ({} format, {})",
            t["path"].as_str().unwrap_or(""),
            t["format"].as_str().unwrap_or("?"),
            if t["detected"].as_bool().unwrap_or(false) {
                "detected"
            } else {
                "as given"
            }
        );
    }
    let f = &r.flash;
    let waf = match f.waf {
        Some(w) => format!("{w:.3}"),
        None => "n/a (no host writes)".to_string(),
    };
    let _ = writeln!(
        o,
        "flash    {} page reads, {} page programs, {} block erases, {} GC copies, WAF {waf}",
        f.page_reads, f.page_programs, f.block_erases, f.gc_page_copies
    );
    let _ = writeln!(
        o,
        "wear     erase count min {} max {} mean {:.2} std {:.2}",
        f.erase_count_min, f.erase_count_max, f.erase_count_mean, f.erase_count_std
    );
    let s = &r.ftl.stats;
    let _ = writeln!(
        o,
        "ftl      table {} B, GC runs {} (examined {}), merges switch/partial/full {}/{}/{}, translation r/w {}/{}, FTL CPU {:.6} s",
        r.ftl.mapping_table_bytes, s.gc_runs, s.gc_victims_examined, s.merges_switch, s.merges_partial, s.merges_full, s.translation_reads, s.translation_writes, r.ftl.cpu_s
    );
    let u = &r.utilization;
    let _ = writeln!(
        o,
        "busy     channels {:.1}%  dies {:.1}%  cpu {:.1}%  host link {:.1}%",
        u.channels * 100.0,
        u.dies * 100.0,
        u.cpu * 100.0,
        u.host_link * 100.0
    );
    let sc = &r.sched;
    let _ = writeln!(
        o,
        "sched    {} dispatched, {} merged, queue time mean {:.1} us max {:.1} us",
        sc.dispatched, sc.merged, sc.mean_queue_time_us, sc.max_queue_time_us
    );
    if let Some(e) = r.extra.get("energy_j") {
        let g = |path: &[&str]| {
            let mut cur = e;
            for p in path {
                cur = cur.get(*p)?;
            }
            cur.as_f64()
        };
        let _ = writeln!(
            o,
            "energy   {:.6} J total: flash {:.6} (read {:.6}, program {:.6}, erase {:.6}, transfer {:.6}, idle {:.6}), cpu {:.6}, dram {:.6}, bus {:.6}, host {:.6}",
            g(&["total"]).unwrap_or(0.0),
            g(&["flash", "total"]).unwrap_or(0.0),
            g(&["flash", "read"]).unwrap_or(0.0),
            g(&["flash", "program"]).unwrap_or(0.0),
            g(&["flash", "erase"]).unwrap_or(0.0),
            g(&["flash", "transfer"]).unwrap_or(0.0),
            g(&["flash", "idle"]).unwrap_or(0.0),
            g(&["cpu"]).or_else(|| g(&["cpu", "total"])).unwrap_or(0.0),
            g(&["dram"]).or_else(|| g(&["dram", "total"])).unwrap_or(0.0),
            g(&["bus"]).unwrap_or(0.0),
            g(&["host"]).or_else(|| g(&["host", "total"])).unwrap_or(0.0),
        );
        if let Some(by) = e.get("by_purpose") {
            let _ = writeln!(o, "         by purpose {}", compact(by));
        }
        if let Some(by) = e.get("by_activity").and_then(|b| b.as_object()) {
            let parts: Vec<String> = by
                .iter()
                .map(|(k, a)| format!("{k} {:.6}", a["total"].as_f64().unwrap_or(0.0)))
                .collect();
            let _ = writeln!(
                o,
                "         firmware by activity (cpu busy + dram active, J): {}",
                parts.join(", ")
            );
        }
        // Only a run that drained (`--drain`) has anything to say here.
        if let Some(d) = e.get("drain").filter(|d| !d["start_s"].is_null()) {
            // Its activities' split is in the JSON report.
            let mut d = d.clone();
            if let Some(m) = d.as_object_mut() {
                m.remove("by_activity");
            }
            let _ = writeln!(o, "         drain {}", compact(&d));
        }
    }
    if let Some(a) = r.extra.get("app") {
        app_lines(&mut o, None, a);
        if let Some(p) = r.extra.get("page_cache") {
            cache_lines(&mut o, p);
        }
    }
    if let (Some(f), Some(p)) = (r.extra.get("file_system"), r.extra.get("page_cache")) {
        fs_lines(&mut o, f, p);
    }
    if let Some(f) = r.extra.get("flows").and_then(|f| f.as_array()) {
        flow_lines(&mut o, f, r.extra.get("fairness"));
        // Buffered flows: each one's calls, then the cache of the host
        // they share.
        for x in f {
            if let (Some(a), Some(name)) = (x.get("app"), x["name"].as_str()) {
                app_lines(&mut o, Some(name), a);
            }
        }
        if !r.extra.contains_key("app") {
            if let Some(p) = r.extra.get("page_cache") {
                cache_lines(&mut o, p);
            }
        }
    }
    for (k, v) in &r.extra {
        if matches!(
            k.as_str(),
            "energy_j" | "app" | "page_cache" | "flows" | "fairness" | "trace" | "file_system"
        ) {
            continue;
        }
        let _ = writeln!(o, "{k:<8} {}", compact(v));
    }
    for (k, v) in &r.notes {
        if k == "empty_drive_reads" {
            let _ = writeln!(
                o,
                "note     the drive was empty (no preconditioning): none of the {v} reads reached \
                 the flash (a page never written is read from nowhere); precondition it with \
                 --precondition fill (or steady) to measure reads"
            );
            continue;
        }
        let _ = writeln!(o, "note     {k}: {v}");
    }
    let steady = if r.run.precondition == "steady" {
        format!(
            ": {} random pages, WAF {:.3}, steady state {}",
            r.run.precondition_pages,
            r.run.precondition_waf,
            if r.run.precondition_steady {
                "reached"
            } else {
                "NOT reached"
            }
        )
    } else {
        String::new()
    };
    let _ = writeln!(
        o,
        "run      {} events, {:.3} s wall ({:.0} requests/s), precondition {}{steady} ({:.3} s wall)",
        r.run.events,
        r.run.wall_s,
        if r.run.wall_s > 0.0 {
            h.requests as f64 / r.run.wall_s
        } else {
            0.0
        },
        r.run.precondition,
        r.run.precondition_wall_s
    );
    o
}

/// The number at `path` in `v` (0 where there is none).
fn num_at(v: &serde_json::Value, path: &[&str]) -> f64 {
    path.iter()
        .try_fold(v, |v, k| v.get(k))
        .and_then(|x| x.as_f64())
        .unwrap_or(0.0)
}

/// One line per flow (tenant), and the run's fairness.
fn flow_lines(o: &mut String, flows: &[serde_json::Value], fairness: Option<&serde_json::Value>) {
    // Kept as format strings, not a table crate: the rows hang under the
    // report's 9-column labels (`flows    `), which a table crate would have
    // to be bent to, and the report's text would change for no gain
    // (issue 29).
    let n = num_at;
    let _ = writeln!(
        o,
        "flows    {:<12} {:<7} {:>9} {:>10} {:>9} {:>11} {:>11} {:>9}",
        "name", "class", "requests", "IOPS", "MB/s", "mean (us)", "p99 (us)", "slowdown"
    );
    for f in flows {
        let slow = f
            .get("slowdown")
            .and_then(|s| s.as_f64())
            .map_or("-".to_string(), |s| format!("{s:.3}"));
        let _ = writeln!(
            o,
            "         {:<12} {:<7} {:>9} {:>10.0} {:>9.2} {:>11.1} {:>11.1} {:>9}",
            f["name"].as_str().unwrap_or("?"),
            f["priority"].as_str().unwrap_or("?"),
            n(f, &["requests"]),
            n(f, &["iops"]),
            n(f, &["bandwidth_mbps"]),
            n(f, &["latency_us", "mean"]),
            n(f, &["latency_us", "p99"]),
            slow,
        );
    }
    if let Some(x) = fairness {
        let _ = writeln!(
            o,
            "fairness {:.4} (slowdown min {:.3}, max {:.3}; each flow also run alone)",
            n(x, &["fairness"]),
            n(x, &["slowdown_min"]),
            n(x, &["slowdown_max"]),
        );
    }
}

/// The application's calls and the page cache (buffered runs).
/// The file system's lines: what it wrote, by kind, and the host's write
/// amplification over the application's bytes.
fn fs_lines(o: &mut String, f: &serde_json::Value, p: &serde_json::Value) {
    let n = num_at;
    let wb = n(p, &["writeback", "pages"]);
    let meta = n(p, &["metadata_pages_written"]);
    let waf = n(p, &["host_write_amplification"]);
    let _ = writeln!(
        o,
        "fs       {}: {} of {} blocks used; written {} data pages, {} metadata pages ({} dirtied), {} journal/log blocks in {} commits ({} by fsync, {} by timer), cleaner {} read / {} written",
        f.get("kind").and_then(|k| k.as_str()).unwrap_or("?"),
        n(f, &["used_blocks"]),
        n(f, &["blocks"]),
        wb - meta,
        meta,
        n(f, &["metadata_dirtied"]),
        n(f, &["journal_blocks_written"]),
        n(f, &["commits_fsync"]) + n(f, &["commits_timer"]),
        n(f, &["commits_fsync"]),
        n(f, &["commits_timer"]),
        n(f, &["cleaner_blocks_read"]),
        n(f, &["cleaner_blocks_written"]),
    );
    let amp = if waf > 0.0 {
        format!("{waf:.3}")
    } else {
        "n/a (no application writes)".into()
    };
    let _ = writeln!(
        o,
        "         host write amplification {amp} (device bytes written by the host per application byte); {} extents, {} index blocks",
        n(f, &["extents"]),
        n(f, &["index_blocks"]),
    );
}

/// An application's calls (`app`): the run's, or flow `flow`'s.
fn app_lines(o: &mut String, flow: Option<&str>, a: &serde_json::Value) {
    let n = num_at;
    let who = flow.map(|f| format!("{f}: ")).unwrap_or_default();
    let _ = writeln!(
        o,
        "app      {who}{} calls ({} reads, {} writes, {} fsyncs, {} trims) in {:.6} s: {:.0} IOPS, {:.2} MB/s",
        n(a, &["calls"]),
        n(a, &["reads"]),
        n(a, &["writes"]),
        n(a, &["fsyncs"]),
        n(a, &["trims"]),
        n(a, &["time_s"]),
        n(a, &["iops"]),
        n(a, &["mbps"]),
    );
    for k in ["read", "write", "trim", "fsync"] {
        if let Some(l) = a
            .get("latency_us")
            .and_then(|x| x.get(k))
            .and_then(|x| serde_json::from_value::<LatencySummary>(x.clone()).ok())
        {
            lat_line(o, k, &l);
        }
    }
}

/// The host's page cache (`page_cache`).
fn cache_lines(o: &mut String, p: &serde_json::Value) {
    let n = num_at;
    let _ = writeln!(
        o,
        "cache    {} hits, {} misses (hit ratio {:.4}); {} read requests for {} pages ({} readahead); {} evictions",
        n(p, &["hits"]),
        n(p, &["misses"]),
        n(p, &["hit_ratio"]),
        n(p, &["read_requests"]),
        n(p, &["read_pages"]),
        n(p, &["readahead_pages"]),
        n(p, &["evictions"]),
    );
    let w = |k: &str| n(p, &["writeback", "pages_by_reason", k]);
    let _ = writeln!(
        o,
        "         writeback {} pages in {} requests ({:.1} pages each): background {}, periodic {}, fsync {}, O_SYNC {}; {} flushes",
        n(p, &["writeback", "pages"]),
        n(p, &["writeback", "requests"]),
        n(p, &["writeback", "pages_per_request"]),
        w("background"),
        w("periodic"),
        w("fsync"),
        w("sync_write"),
        n(p, &["flushes"]),
    );
    let _ = writeln!(
        o,
        "         dirty max {} pages (background {} / throttle {}); throttled {} times, {:.6} s (max {:.1} us); left dirty at the end {} bytes",
        n(p, &["dirty_max_pages"]),
        n(p, &["background_thresh_pages"]),
        n(p, &["dirty_thresh_pages"]),
        n(p, &["throttled", "count"]),
        n(p, &["throttled", "total_s"]),
        n(p, &["throttled", "max_us"]),
        n(p, &["dirty_at_end_bytes"]),
    );
}

fn compact(v: &serde_json::Value) -> String {
    match v {
        serde_json::Value::Object(m) => m
            .iter()
            .filter(|(_, x)| !x.is_object() && !x.is_array())
            .map(|(k, x)| match x.as_f64() {
                Some(f) => format!("{k} {}", fmt_num(f)),
                None => format!("{k} {x}"),
            })
            .collect::<Vec<_>>()
            .join(", "),
        x => x.to_string(),
    }
}

fn fmt_num(f: f64) -> String {
    if f == 0.0 {
        "0".into()
    } else if f.abs() >= 100.0 {
        format!("{f:.1}")
    } else {
        format!("{f:.4}")
    }
}
