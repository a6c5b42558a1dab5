//! DFTL as controllers run it, end to end through the CLI library: shared
//! translation reads, no stalls, every GC threshold the validator accepts,
//! and the two CMT granularities. Case counts are moderate by default; set
//! PROPTEST_CASES for a deep run.

use proptest::prelude::*;
use ssd_core::stats::Report;
use ssdsim::{apply_flag, run_config, set_field, RunOptions};
use ssdsim_host::config::SsdConfig;

/// `cfg` with `flags` applied as `ssdsim run` applies them.
fn config(flags: &[(&str, &str)]) -> SsdConfig {
    let mut c = SsdConfig::default();
    for (f, v) in flags {
        if f.contains('.') {
            set_field(&mut c, f, v).unwrap();
        } else {
            apply_flag(&mut c, f, v).unwrap();
        }
    }
    c
}

fn run(flags: &[(&str, &str)], check: bool) -> Report {
    let opts = RunOptions {
        check_invariants: check,
        power: false,
        ..Default::default()
    };
    run_config(&config(flags), &opts).unwrap().report
}

fn flash(r: &Report, kind: &str, purpose: &str) -> u64 {
    r.flash.by_purpose[kind][purpose]
}

/// The stalls of DFTL under the fileserver personality: a data read released
/// after GC erased its block found its page gone, and the engine ran out of
/// events ("scheduling deadlock"). Each command that stalled now completes.
#[test]
fn fileserver_under_dftl_completes() {
    for flags in [
        &[
            ("ftl", "dftl"),
            ("personality", "fileserver"),
            ("precondition", "fill"),
            ("seed", "2"),
        ][..],
        &[
            ("ftl.op", "0.03"),
            ("precondition", "fill"),
            ("seed", "1"),
            ("ftl", "dftl"),
            ("sched", "deadline"),
            ("personality", "fileserver"),
        ][..],
    ] {
        let r = run(flags, false);
        assert!(r.host.requests > 0, "{flags:?}");
    }
}

/// A sequential 128 KiB read reads each translation page once, not once per
/// 4 KiB page: the pages of one request share it, and so do the requests
/// that find its read in flight. DFTL then runs at page mapping's speed.
#[test]
fn sequential_reads_share_translation_reads() {
    let base = [
        ("blocks-per-plane", "256"),
        ("rw", "read"),
        ("bs", "128KiB"),
        ("iodepth", "32"),
        ("number_ios", "2000"),
        ("precondition", "fill"),
    ];
    let page = run(&[&base[..], &[("ftl", "page")]].concat(), false);
    let dftl = run(&[&base[..], &[("ftl", "dftl")]].concat(), true);
    let (data, tr) = (
        flash(&dftl, "read", "host"),
        flash(&dftl, "read", "translation"),
    );
    assert_eq!(data, 2000 * 32);
    assert!(
        tr * 50 <= data,
        "{tr} translation reads for {data} data pages (more than 2 %)"
    );
    assert_eq!(dftl.ftl.stats.translation_reads, tr);
    assert!(dftl.flash.joined_translation_reads > 0);
    assert!(
        dftl.host.iops >= 0.8 * page.host.iops,
        "dftl {} IOPS, page {}",
        dftl.host.iops,
        page.host.iops
    );
}

/// Random reads with a CMT far smaller than the map: nearly every read
/// misses, so each costs a translation read before its data read; with the
/// dies the bottleneck, DFTL reaches about half of page mapping's IOPS.
#[test]
fn random_reads_cost_one_translation_read_per_miss() {
    let base = [
        ("blocks-per-plane", "256"),
        ("rw", "randread"),
        ("iodepth", "32"),
        ("number_ios", "20000"),
        ("precondition", "fill"),
    ];
    let page = run(&[&base[..], &[("ftl", "page")]].concat(), false);
    let dftl = run(&[&base[..], &[("ftl", "dftl")]].concat(), false);
    let st = &dftl.ftl.stats;
    let tr = flash(&dftl, "read", "translation") + dftl.flash.joined_translation_reads;
    // Every miss on a translation page that was ever written is a read of it.
    assert_eq!(tr, st.cmt_misses, "{st:?}");
    let ratio = dftl.host.iops / page.host.iops;
    let miss = st.cmt_misses as f64 / (st.cmt_hits + st.cmt_misses) as f64;
    assert!(miss > 0.95, "miss ratio {miss}");
    assert!(
        (0.4..0.65).contains(&ratio),
        "dftl/page IOPS {ratio} (miss ratio {miss})"
    );
}

/// Random writes in steady state spread over the channels: a GC victim's
/// erase waits for its own copies only (the batch update of its translation
/// pages is a job of its own, as MQSim's mapping updates are), and an
/// evicted dirty entry is written back in the background, so eight channels
/// give at least 4.5 times one channel's IOPS on chip2 as it ships.
#[test]
fn random_writes_scale_with_channels() {
    let iops = |ch: &str| {
        run(
            &[
                ("ftl", "dftl"),
                ("channels", ch),
                ("rw", "randwrite"),
                ("iodepth", "32"),
                ("number_ios", "20000"),
                ("precondition", "steady"),
            ],
            false,
        )
        .host
        .iops
    };
    let (one, eight) = (iops("1"), iops("8"));
    assert!(
        eight >= 4.5 * one,
        "8 channels {eight:.0} IOPS, 1 channel {one:.0}: {:.2}x",
        eight / one
    );
}

/// `ftl.cmt_granularity = page`: a miss loads the whole translation page, so
/// a sequential scan reads each translation page once even with requests of
/// one page; entry granularity reads one per request.
#[test]
fn page_granular_cmt_reads_each_translation_page_once() {
    let base = [
        ("blocks-per-plane", "256"),
        ("ftl", "dftl"),
        ("rw", "read"),
        ("bs", "4KiB"),
        ("iodepth", "1"),
        ("number_ios", "5000"),
        ("precondition", "fill"),
    ];
    let entry = run(&base, true);
    let page = run(
        &[&base[..], &[("ftl.cmt_granularity", "page")]].concat(),
        true,
    );
    let tr = |r: &Report| flash(r, "read", "translation");
    assert_eq!(tr(&entry), 5000);
    let s = config(&base).validate().unwrap();
    let ept = match ftl::build(&s.config.ftl, &s.shape()).unwrap() {
        ftl::AnyFtl::Dftl(d) => d.entries_per_translation_page(),
        _ => unreachable!("a DFTL configuration"),
    };
    assert_eq!(tr(&page), 5000_u64.div_ceil(ept));
    assert!(page.host.iops > 1.5 * entry.host.iops);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(
        std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(6)
    ))]
    /// Every GC threshold the validator accepts works for every FTL: the run
    /// completes with its invariants intact (no "no free block" panic).
    #[test]
    fn every_accepted_gc_threshold_works(
        ftl in prop::sample::select(vec!["page", "block", "bast", "fast", "last", "dftl"]),
        threshold in 1u32..6,
        op in prop::sample::select(vec!["0.07", "0.1", "0.2"]),
        seed in 0u64..1000,
    ) {
        let mut c = config(&[
            ("blocks-per-plane", "96"),
            ("ftl", ftl),
            ("ftl.op", op),
            ("rw", "randwrite"),
            ("number_ios", "4000"),
            ("precondition", "steady"),
        ]);
        c.ftl.gc_threshold_blocks = threshold;
        c.sim.seed = seed;
        if c
            .validate()
            .and_then(|s| ftl::build(&s.config.ftl, &s.shape()))
            .is_err()
        {
            // Refused before the run, with a reason: nothing to check.
            return Ok(());
        }
        let opts = RunOptions { check_invariants: true, power: false, ..Default::default() };
        let r = run_config(&c, &opts).unwrap().report;
        prop_assert_eq!(r.host.requests, 4000);
    }
}
