//! Plug an FTL and a request source of one's own into ssdsim through its
//! typed builder, and check them against what they imply:
//!
//! 1. Sequential overwrites of the whole logical space through
//!    [`LogFtl`]: a log-structured FTL with greedy GC finds every victim
//!    fully stale (each page was overwritten a whole pass after it was
//!    written, and a plane's oldest block is its victim), so GC erases
//!    blocks but copies nothing: a write amplification of exactly 1.
//! 2. A hot/cold mix (90% of the writes to 10% of the pages) through
//!    [`LogFtl`] and through the built-in page FTL, the same source plugged
//!    into both. Both collect greedily, so both amplify writes; the page
//!    FTL writes GC's copies to a block of their own, apart from the host's
//!    writes, so the data that survived a collection (mostly cold) is not
//!    mixed again with hot data, and it amplifies less than [`LogFtl`],
//!    which appends both to one block. Each run checks its FTL's
//!    invariants (read-your-writes, valid counts) at the end.
//!
//! Run: `cargo run --release -p ssdsim-example-custom-parts`.

use ssdsim::custom::Settings;
use ssdsim::{RunOptions, Ssd};
use ssdsim_example_custom_parts::{LogFtl, Overwrite, Pattern};

/// A small drive (2 channels, 2 ways, 1 die of 2 planes, 64 blocks a plane
/// of 64 pages of 4 KiB: 32 MiB raw, 25% over-provisioning), and its
/// options: the power model on, the FTL's invariants checked at the end.
fn drive() -> Ssd {
    Ssd::builder()
        .set("channels", 2)
        .set("ways", 2)
        .set("nand.dies_per_chip", 1)
        .set("nand.planes_per_die", 2)
        .set("nand.blocks_per_plane", 64)
        .set("nand.pages_per_block", 64)
        .set("op", 0.25)
        .options(RunOptions {
            check_invariants: true,
            ..RunOptions::default()
        })
        .build()
        .expect("a valid drive")
}

/// `passes` times the logical space of one-page writes in `pattern`.
fn source(pattern: Pattern, passes: u64) -> impl FnOnce(&Settings) -> Overwrite {
    move |s: &Settings| {
        let pages = s.logical_bytes() / s.geometry.page_size as u64;
        Overwrite::new(pattern, pages, s.geometry.page_size, passes * pages, 8, 42)
    }
}

fn main() {
    let ssd = drive();

    // 1. Sequential: every victim is stale, nothing is copied.
    let out = ssd
        .custom()
        .ftl(LogFtl::new)
        .source(source(Pattern::Sequential, 4))
        .run()
        .expect("the sequential run");
    let r = &out.report;
    println!(
        "log FTL, 4 sequential passes: {} writes, {} erases, {} GC copies, WAF {:.3}, {:.1} MB/s, {:.3} J",
        r.host.writes,
        r.flash.block_erases,
        r.flash.gc_page_copies,
        r.flash.waf.expect("the run wrote"),
        r.host.mbps,
        r.extra["energy_j"]["total"].as_f64().unwrap_or(0.0)
    );
    assert_eq!(r.ftl.kind, "log");
    assert!(r.ftl.stats.gc_runs > 0, "GC ran: the drive was overwritten");
    assert_eq!(r.flash.gc_page_copies, 0, "sequential victims are stale");
    assert_eq!(r.flash.waf, Some(1.0));
    assert_eq!(r.flash.block_erases, r.ftl.stats.gc_runs);

    // 2. Hot/cold: the same source into this FTL and the built-in page FTL.
    let hot_cold = Pattern::HotCold {
        hot_percent: 90,
        hot_share_percent: 10,
    };
    let log = ssd
        .custom()
        .ftl(LogFtl::new)
        .source(source(hot_cold, 4))
        .run()
        .expect("the hot/cold run, log FTL");
    let page = ssd
        .custom()
        .source(source(hot_cold, 4))
        .run()
        .expect("the hot/cold run, page FTL");
    for (name, out) in [("log", &log), ("page", &page)] {
        let r = &out.report;
        println!(
            "{name} FTL, hot/cold 90/10: {} writes, {} GC copies, WAF {:.3}, mean latency {:.1} us",
            r.host.writes,
            r.flash.gc_page_copies,
            r.flash.waf.expect("the run wrote"),
            r.latency_us.write.mean
        );
        assert_eq!(r.ftl.kind, name);
        assert!(
            r.flash.waf.is_some_and(|w| w > 1.0),
            "{name}: greedy GC copies under hot/cold"
        );
        assert_eq!(r.host.writes, log.report.host.writes);
    }
    assert!(
        log.report.flash.waf > page.report.flash.waf,
        "GC copies mixed with host writes amplify more than kept apart"
    );
    println!("  all match");
}

/// `cargo test` runs the example's checks.
#[test]
fn the_parts_do_what_they_imply() {
    main();
}
