//! Command-line arguments, parsed "low" (strings close to the flags) and then
//! turned into configuration through `ssdsim::apply_flag`. `run` takes one value
//! per flag; `sweep` takes comma-separated lists and runs their product.

use clap::Args;

/// Flags that select or change the simulated system and workload.
#[derive(Args, Debug, Clone, Default)]
pub struct ConfigArgs {
    /// Device preset: a whole drive of a published study (park-old, park-mlc, park-mtron,
    /// park-tgn, sun-ssd-i, sun-ssd-s, sun-ssd-k, wang-60gb; `ssdsim presets` lists them),
    /// applied before every other flag
    #[arg(long)]
    pub device: Option<String>,
    /// NAND preset (chip1, chip2, chip3, park-slc, mlc-mqsim, tlc-64l, qlc-96l, tlc-multipass, tlc-multipass-worn, qlc-96l-oneshot; `ssdsim presets` lists them)
    #[arg(long)]
    pub nand: Option<String>,
    /// FTL (page, ...; see `ssdsim presets`)
    #[arg(long)]
    pub ftl: Option<String>,
    /// Host I/O scheduler
    #[arg(long)]
    pub sched: Option<String>,
    /// File system of a file-level personality (ext2, ext3, ext4, xfs, reiserfs, nilfs2, f2fs,
    /// raw)
    #[arg(long)]
    pub fs: Option<String>,
    /// Host interface preset (sata3g, sata6g, nvme-gen3x4, nvme-gen4x4)
    #[arg(long)]
    pub interface: Option<String>,
    /// Power preset (lee2011, park-slc)
    #[arg(long)]
    pub power: Option<String>,
    /// Over-provisioning, a fraction: (physical - logical) / logical (e.g. 0.07)
    #[arg(long)]
    pub op: Option<String>,
    /// GC victim policy (greedy, fifo, random, cost-benefit, windowed:F)
    #[arg(long)]
    pub gc: Option<String>,
    /// Page allocation (cwdp, pdwc, wcdp, least-busy)
    #[arg(long)]
    pub allocation: Option<String>,
    /// Channels
    #[arg(long)]
    pub channels: Option<String>,
    /// Chips (ways) per channel
    #[arg(long)]
    pub ways: Option<String>,
    /// Dies per chip
    #[arg(long)]
    pub dies: Option<String>,
    /// Planes per die
    #[arg(long)]
    pub planes: Option<String>,
    /// Blocks per plane
    #[arg(long = "blocks-per-plane")]
    pub blocks_per_plane: Option<String>,
    /// Pages per block
    #[arg(long = "pages-per-block")]
    pub pages_per_block: Option<String>,
    /// Page size: bytes, or with a unit (4096, 4KiB, 16k; KB and MB are 1000-based)
    #[arg(long = "page-size")]
    pub page_size: Option<String>,
    /// Device queue depth, 1..=65535
    #[arg(long = "queue-depth")]
    pub queue_depth: Option<String>,
    /// DRAM write buffer size: bytes, or with a unit (0 = off; 1MiB, 512k)
    #[arg(long = "write-buffer")]
    pub write_buffer: Option<String>,
    /// Preconditioning: none, fill, steady
    #[arg(long)]
    pub precondition: Option<String>,
    /// Master seed
    #[arg(long)]
    pub seed: Option<String>,
    /// Stop at this simulated time, ramp included; the unit is required: ns, us, ms,
    /// s, min, h (e.g. 2s, 500ms; at most 2^62 ns)
    #[arg(long = "time-limit")]
    pub time_limit: Option<String>,
    /// fio's runtime: stop after this much simulated time once the ramp (sim.ramp_time)
    /// is over; as in fio, a bare number is seconds, or give us, ms, s, m, h, d (60, 1m, 2h)
    #[arg(long, conflicts_with = "time_limit")]
    pub runtime: Option<String>,
    /// fio: read, write, randread, randwrite, rw, randrw, trim, randtrim
    #[arg(long)]
    pub rw: Option<String>,
    /// fio: block size: bytes, or with a unit (4096, 4k, 4KiB; KB and MB are 1000-based)
    #[arg(long)]
    pub bs: Option<String>,
    /// fio: outstanding requests (closed loop), 1..=65536
    #[arg(long)]
    pub iodepth: Option<String>,
    /// fio: percentage of reads in mixed workloads, 0..=100
    #[arg(long)]
    pub rwmixread: Option<String>,
    /// fio: of a random workload's requests, the percentage that go to a random block
    /// (the rest continue sequentially), 0..=100
    #[arg(long = "percentage_random", alias = "percentage-random")]
    pub percentage_random: Option<String>,
    /// fio: number of requests (at least 1)
    #[arg(long = "number_ios", alias = "number-ios")]
    pub number_ios: Option<String>,
    /// fio: open loop at this rate, in requests per second
    #[arg(long = "rate_iops", alias = "rate-iops")]
    pub rate_iops: Option<String>,
    /// fio: linear or poisson arrivals
    #[arg(long = "rate_process", alias = "rate-process")]
    pub rate_process: Option<String>,
    /// fio: uniform (random), zipf:THETA, pareto:H
    #[arg(long = "random_distribution", alias = "random-distribution")]
    pub random_distribution: Option<String>,
    /// fio: address span: bytes, or with a unit (1GiB, 64m; default the whole device)
    #[arg(long)]
    pub size: Option<String>,
    /// fio: start of the address span: bytes, or with a unit (0, 1GiB, 64m)
    #[arg(long)]
    pub offset: Option<String>,
    /// fio: seed of the address generator
    #[arg(long)]
    pub randseed: Option<String>,
    /// Replay this block trace (SPC, MSR, blkparse, DiskSim, MQSim, FIU, CloudPhysics, csv; .gz ok)
    #[arg(long)]
    pub trace: Option<String>,
    /// Force the trace format instead of detecting it
    #[arg(long = "trace-format")]
    pub trace_format: Option<String>,
    /// Workload personality: varmail, fileserver, webserver, oltp
    #[arg(long)]
    pub personality: Option<String>,
    /// Trace replay speed-up, a factor (2 = twice as fast)
    #[arg(long)]
    pub speed: Option<String>,
    /// Replay the trace closed loop at this queue depth, 1..=65536 (timestamps ignored)
    #[arg(long = "closed-loop-depth")]
    pub closed_loop_depth: Option<String>,
    /// Stop the replay after this many requests (at least 1)
    #[arg(long = "max-requests")]
    pub max_requests: Option<String>,
    /// Cap every gap between trace arrivals at this; the unit is required: ns, us, ms,
    /// s, min, h (e.g. 1s): compresses idle periods
    #[arg(long = "max-gap")]
    pub max_gap: Option<String>,
    /// Trace addresses beyond the device: wrap or reject
    #[arg(long = "out-of-range")]
    pub out_of_range: Option<String>,
    /// Trace records read ahead and replayed in timestamp order (0: file order)
    #[arg(long = "reorder-window")]
    pub reorder_window: Option<String>,
    /// Skip and count malformed trace lines instead of failing
    #[arg(long = "skip-bad-lines")]
    pub skip_bad_lines: bool,
    /// Keep simulating after the last request until GC is done (its energy is reported apart)
    #[arg(long)]
    pub drain: bool,
}

impl ConfigArgs {
    /// (flag name, raw value) for every flag given, in a fixed order.
    pub fn pairs(&self) -> Vec<(&'static str, String)> {
        let mut v = Vec::new();
        macro_rules! f {
            ($($field:ident => $name:literal),* $(,)?) => {
                $(if let Some(x) = &self.$field { v.push(($name, x.clone())); })*
            };
        }
        f!(
            device => "device", nand => "nand", interface => "interface", power => "power", ftl => "ftl", sched => "sched", fs => "fs", op => "op", gc => "gc",
            allocation => "allocation", channels => "channels", ways => "ways", dies => "dies", planes => "planes",
            blocks_per_plane => "blocks-per-plane", pages_per_block => "pages-per-block", page_size => "page-size",
            queue_depth => "queue-depth", write_buffer => "write-buffer", precondition => "precondition", seed => "seed",
            time_limit => "time-limit", runtime => "runtime", rw => "rw", bs => "bs", iodepth => "iodepth", rwmixread => "rwmixread",
            number_ios => "number_ios", rate_iops => "rate_iops", rate_process => "rate_process",
            random_distribution => "random_distribution", percentage_random => "percentage_random", size => "size", offset => "offset", randseed => "randseed",
            trace => "trace", trace_format => "trace-format", personality => "personality", speed => "speed",
            closed_loop_depth => "closed-loop-depth", max_requests => "max-requests", max_gap => "max-gap",
            out_of_range => "out-of-range", reorder_window => "reorder-window",
        );
        if self.skip_bad_lines {
            v.push(("skip-bad-lines", "true".to_string()));
        }
        if self.drain {
            v.push(("drain", "true".to_string()));
        }
        v
    }
}
