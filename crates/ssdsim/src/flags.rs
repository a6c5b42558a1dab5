//! The configuration flags, each defined once: its name, its help, whether
//! it takes a value, and the rule that applies it ([`crate::apply_flag`]).
//! The `ssdsim` program builds its `--FLAG`s from [`FLAGS`] (`run` takes
//! one value a flag, `sweep` a comma-separated list), [`Ssd::builder`]
//! names the same flags, and `--set KEY=VALUE` and sweep grids take their
//! names as keys.
//!
//! The table's order is the order the flags are applied in: `--device`
//! first (a whole drive, under every other flag), the presets, then the
//! rest.
//!
//! [`Ssd::builder`]: crate::Ssd::builder

/// How a flag changes the configuration.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rule {
    /// Sets this dotted field from the value, as `--set FIELD=VALUE`.
    Field(&'static str),
    /// Sets this dotted duration field; the value must say its unit (a bare
    /// number would be read as nanoseconds, which no one means).
    Duration(&'static str),
    /// `--device`: a whole drive of a published study.
    Device,
    /// `--nand`: a chip preset, and its power preset unless one was chosen.
    Nand,
    /// `--interface`: a host interface preset (`[host]`).
    Interface,
    /// `--power`: a power preset (`[power]`).
    Power,
    /// `--gc`: the GC victim policy, with its parameter (`windowed:F`).
    GcPolicy,
    /// `--trace`: replay a trace file (`none` drops it).
    Trace,
    /// `--trace-format`: the trace's format instead of the detected one.
    TraceFormat,
    /// `--personality`: a workload personality (`none` drops it).
    Personality,
    /// `--runtime`: fio's runtime, counted from the end of the ramp.
    Runtime,
    /// A fio size (`--bs`, `--size`, `--offset`): `k`, `m`, `g` (`KB`,
    /// `MB`, `GB`) are 1024-based as in fio; `KiB`, `MiB`, `GiB` are
    /// 1024-based too, as IEC has them (fio's default `kb_base=1024` reads
    /// them as 1000-based, a compatibility mode a job file still follows).
    /// Set on this dotted field in bytes.
    FioSize(&'static str),
}

/// One configuration flag.
#[derive(Clone, Copy, Debug)]
pub struct Flag {
    /// Its name: `--NAME` on the command line, the builder's and `--set`'s
    /// key.
    pub name: &'static str,
    /// Another spelling the command line accepts (fio's underscores as
    /// dashes).
    pub alias: Option<&'static str>,
    /// The help text.
    pub help: &'static str,
    /// A switch, given without a value (`--drain`).
    pub switch: bool,
    /// A flag the command line refuses beside this one.
    pub conflicts: Option<&'static str>,
    /// How it changes the configuration.
    pub rule: Rule,
}

const fn flag(name: &'static str, rule: Rule, help: &'static str) -> Flag {
    Flag {
        name,
        alias: None,
        help,
        switch: false,
        conflicts: None,
        rule,
    }
}

/// A fio workload flag spelled with underscores, accepted with dashes too.
const fn fio(
    name: &'static str,
    dashed: &'static str,
    field: &'static str,
    help: &'static str,
) -> Flag {
    Flag {
        alias: Some(dashed),
        ..flag(name, Rule::Field(field), help)
    }
}

const fn switch(name: &'static str, field: &'static str, help: &'static str) -> Flag {
    Flag {
        switch: true,
        ..flag(name, Rule::Field(field), help)
    }
}

use Rule::{Duration, Field};

/// Every configuration flag, in the order they are applied.
pub const FLAGS: &[Flag] = &[
    flag(
        "device",
        Rule::Device,
        "Device preset: a whole drive of a published study (park-old, park-mlc, park-mtron, \
         park-tgn, sun-ssd-i, sun-ssd-s, sun-ssd-k, samsung-980pro, wang-60gb; `ssdsim \
         presets` lists them) or a device file (FILE.toml: the drive `ssdsim calibrate` writes), \
         applied before every other flag",
    ),
    flag(
        "nand",
        Rule::Nand,
        "NAND preset (chip1, chip2, chip3, park-slc, mlc-mqsim, tlc-64l, qlc-96l, tlc-multipass, \
         tlc-multipass-worn, qlc-96l-oneshot; `ssdsim presets` lists them)",
    ),
    flag(
        "interface",
        Rule::Interface,
        "Host interface preset (sata3g, sata6g, nvme-gen3x4, nvme-gen4x4)",
    ),
    flag(
        "power",
        Rule::Power,
        "Power preset (lee2011, park-slc, modern-tlc)",
    ),
    flag(
        "ftl",
        Field("ftl.kind"),
        "FTL (page, ...; see `ssdsim presets`)",
    ),
    flag(
        "sched",
        Field("sched.kind"),
        "Host I/O scheduler (noop, deadline, mq-deadline, cfq, anticipatory, pardispatcher, \
         kyber, bfq)",
    ),
    flag(
        "fs",
        Field("fs.kind"),
        "File system of a file-level personality (ext2, ext3, ext4, xfs, reiserfs, nilfs2, f2fs, \
         raw); with --personality it runs the personality at its file level (unless \
         personality.level is set)",
    ),
    flag(
        "op",
        Field("ftl.op"),
        "Over-provisioning, a fraction: (physical - logical) / logical (e.g. 0.07)",
    ),
    flag(
        "gc",
        Rule::GcPolicy,
        "GC victim policy (greedy, fifo, random, cost-benefit, windowed:F)",
    ),
    flag(
        "allocation",
        Field("ftl.allocation"),
        "Page allocation (cwdp, pdwc, wcdp, least-busy)",
    ),
    flag("channels", Field("layout.channels"), "Channels"),
    flag("ways", Field("layout.ways"), "Chips (ways) per channel"),
    flag("dies", Field("nand.dies_per_chip"), "Dies per chip"),
    flag("planes", Field("nand.planes_per_die"), "Planes per die"),
    flag(
        "blocks-per-plane",
        Field("nand.blocks_per_plane"),
        "Blocks per plane",
    ),
    flag(
        "pages-per-block",
        Field("nand.pages_per_block"),
        "Pages per block",
    ),
    flag(
        "page-size",
        Field("nand.page_size"),
        "Page size: bytes, or with a unit (4096, 4KiB, 16k; KB and MB are 1000-based)",
    ),
    flag(
        "queue-depth",
        Field("host.queue_depth"),
        "Device queue depth, 1..=65535",
    ),
    flag(
        "write-buffer",
        Field("dram.write_buffer"),
        "DRAM write buffer size: bytes, or with a unit (0 = off; 1MiB, 512k)",
    ),
    flag(
        "precondition",
        Field("sim.precondition"),
        "Preconditioning: none, fill, steady",
    ),
    flag("seed", Field("sim.seed"), "Master seed"),
    flag(
        "time-limit",
        Duration("sim.time_limit"),
        "Stop at this simulated time, ramp included; the unit is required: ns, us, ms, s, min, h \
         (e.g. 2s, 500ms; at most 2^62 ns)",
    ),
    Flag {
        conflicts: Some("time-limit"),
        ..flag(
            "runtime",
            Rule::Runtime,
            "fio's runtime: stop after this much simulated time once the ramp (sim.ramp_time) is \
             over; as in fio, a bare number is seconds, or give us, ms, s, m, h, d (60, 1m, 2h)",
        )
    },
    flag(
        "rw",
        Field("workload.rw"),
        "fio: read, write, randread, randwrite, rw, randrw, trim, randtrim, trimwrite, \
         randtrimwrite (ssdsim's default randread; fio's read). Where the command line's \
         workload differs from fio's: direct I/O, and random addresses drawn independently \
         (--set workload.norandommap=false keeps fio's random map)",
    ),
    flag(
        "bs",
        Rule::FioSize("workload.bs"),
        "fio: block size: bytes, or 4k, 64k, 4KiB (k, m, g, KB, MB are 1024-based, as in fio; \
         so are KiB, MiB, which a job file reads as fio's default kb_base=1024 does: 1000-based)",
    ),
    flag(
        "iodepth",
        Field("workload.iodepth"),
        "fio: outstanding requests (closed loop), 1..=65536 (ssdsim's default 32; fio's 1)",
    ),
    flag(
        "rwmixread",
        Field("workload.rwmixread"),
        "fio: percentage of reads in mixed workloads, 0..=100",
    ),
    fio(
        "number_ios",
        "number-ios",
        "workload.number_ios",
        "fio: number of requests; 0 is fio's no count, the job then ending by its --size \
         (ssdsim's default 200000, where fio does one pass over --size)",
    ),
    fio(
        "rate_iops",
        "rate-iops",
        "workload.rate_iops",
        "fio: open loop at this rate, in requests per second",
    ),
    fio(
        "rate_process",
        "rate-process",
        "workload.rate_process",
        "fio: linear or poisson arrivals",
    ),
    fio(
        "random_distribution",
        "random-distribution",
        "workload.random_distribution",
        "fio: uniform (random), zipf:THETA, pareto:H",
    ),
    fio(
        "percentage_random",
        "percentage-random",
        "workload.percentage_random",
        "fio: of a random workload's requests, the percentage that go to a random block (the \
         rest continue sequentially), 0..=100",
    ),
    flag(
        "size",
        Rule::FioSize("workload.size"),
        "fio: address span, in --bs's units (64m, 1g; default the whole device). As in fio, the \
         run ends once it has done this many bytes (or --number_ios requests, if fewer)",
    ),
    flag(
        "offset",
        Rule::FioSize("workload.offset"),
        "fio: start of the address span, in --bs's units (0, 64m, 1g)",
    ),
    flag(
        "randseed",
        Field("workload.randseed"),
        "fio: seed of the address generator",
    ),
    flag(
        "trace",
        Rule::Trace,
        "Replay this block trace (SPC, MSR, blkparse, DiskSim, MQSim, FIU, CloudPhysics, csv; .gz \
         ok)",
    ),
    flag(
        "trace-format",
        Rule::TraceFormat,
        "Force the trace format instead of detecting it",
    ),
    flag(
        "personality",
        Rule::Personality,
        "Workload personality: varmail, fileserver, webserver, oltp",
    ),
    flag(
        "speed",
        Field("replay.speed"),
        "Trace replay speed-up, a factor (2 = twice as fast)",
    ),
    flag(
        "closed-loop-depth",
        Field("replay.closed_loop_depth"),
        "Replay the trace closed loop at this queue depth, 1..=65536 (timestamps ignored)",
    ),
    flag(
        "max-requests",
        Field("replay.max_requests"),
        "Stop the replay after this many requests (at least 1)",
    ),
    flag(
        "max-gap",
        Duration("replay.max_gap"),
        "Cap every gap between trace arrivals at this; the unit is required: ns, us, ms, s, min, \
         h (e.g. 1s): compresses idle periods",
    ),
    flag(
        "out-of-range",
        Field("replay.out_of_range"),
        "Trace addresses beyond the device: wrap or reject",
    ),
    flag(
        "reorder-window",
        Field("replay.reorder_window"),
        "Trace records read ahead and replayed in timestamp order (0: file order)",
    ),
    switch(
        "skip-bad-lines",
        "replay.skip_bad_lines",
        "Skip and count malformed trace lines instead of failing",
    ),
    switch(
        "drain",
        "sim.drain",
        "Keep simulating after the last request until GC is done (its energy is reported apart)",
    ),
];

/// The flag named `name` (its alias too).
pub fn find(name: &str) -> Option<&'static Flag> {
    FLAGS
        .iter()
        .find(|f| f.name == name || f.alias == Some(name))
}

/// A flag (or sweep key) that sets the one top-level fio-style workload:
/// one whose field is `workload.*`.
pub fn is_workload(name: &str) -> bool {
    matches!(
        find(name),
        Some(Flag { rule: Rule::Field(f) | Rule::FioSize(f), .. }) if f.starts_with("workload.")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_fields_are_real() {
        let mut seen = std::collections::BTreeSet::new();
        for f in FLAGS {
            assert!(seen.insert(f.name), "{} twice", f.name);
            if let Some(a) = f.alias {
                assert!(seen.insert(a), "{a} twice");
            }
            if let Some(c) = f.conflicts {
                assert!(find(c).is_some(), "{}: conflicts with no flag {c}", f.name);
            }
        }
    }

    /// The help of a flag that takes a preset or a kind names every value
    /// the configuration accepts.
    #[test]
    fn help_lists_every_value() {
        let help = |n: &str| find(n).expect("a flag").help;
        for p in ssd_core::hw::PowerConfig::presets() {
            assert!(
                help("power").contains(p.name.as_str()),
                "--power: {}",
                p.name
            );
        }
        for n in ssdsim_host::scheds::SCHED_NAMES {
            assert!(help("sched").contains(n), "--sched: {n}");
        }
        for k in ssdsim_host::fs::FsKind::ALL {
            assert!(help("fs").contains(k.name()), "--fs: {}", k.name());
        }
        for c in ssd_core::hw::NandConfig::presets() {
            assert!(help("nand").contains(c.name.as_str()), "--nand: {}", c.name);
        }
    }

    #[test]
    fn the_workload_flags_are_the_fio_fields() {
        let w: Vec<&str> = FLAGS
            .iter()
            .map(|f| f.name)
            .filter(|n| is_workload(n))
            .collect();
        assert_eq!(
            w,
            [
                "rw",
                "bs",
                "iodepth",
                "rwmixread",
                "number_ios",
                "rate_iops",
                "rate_process",
                "random_distribution",
                "percentage_random",
                "size",
                "offset",
                "randseed"
            ]
        );
    }
}
