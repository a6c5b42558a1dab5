//! [`FioGen`]: the generator of a `[workload]` section, the way fio's
//! io_u.c draws each request (offsets, sizes, directions, files, zones,
//! think time and rate).

use super::*;

/// The fio-style generator.
pub struct FioGen {
    rw: RwMode,
    bs_sectors: u32,
    mix: u32,
    base_sector: u64,
    blocks: u64,
    next_seq: u64,
    remaining: u64,
    /// The request count the workload ends at (`remaining` at the start).
    count: u64,
    rng: SimRng,
    dist: DistSampler,
    timing: Timing,
    interarrival_ns: f64,
    poisson: bool,
    t: f64,
    /// `percentage_random` (100: every random-mode request is random).
    perc_random: u32,
    /// The block after the last request of each direction (read, write,
    /// trim): where a sequential request of a partly random workload goes.
    next_by_dir: [u64; 3],
    /// The bytes the job may still issue (fio's `size`/`io_size` times
    /// `loops`): counted from the start, the ramp included, as fio counts
    /// them (`io_issue_bytes`).
    budget: u64,
    /// Passes left when the job is `loops` passes (None: bounded by bytes
    /// or requests alone).
    passes: Option<u64>,
    /// fio's pattern beyond one size over one range, when the workload asks
    /// for it ([`WorkloadConfig::extended`]).
    ext: Option<Box<Ext>>,
    /// fio's `thinktime`: the closed loop with pauses, run as a reactive
    /// source.
    think: Option<Think>,
    /// fio's `zonemode=zbd`: the job's zone state, run as a reactive
    /// source.
    zbd: Option<Box<super::zbd::ZbdJob>>,
    /// fio's `flow`: the job's place in its flow group.
    flow: Option<Box<super::flow_control::FlowJob>>,
}

/// The state of a job with pauses (see [`WorkloadConfig::thinktime`]).
struct Think {
    pause: Dur,
    blocks: u64,
    on_issue: bool,
    depth: u32,
    outstanding: u32,
    /// Requests completed (or issued, `on_issue`) so far, and at the last
    /// pause (fio's `last_thinktime_blocks`).
    counted: u64,
    last: u64,
    /// Waiting for the requests in flight before pausing (`io_u_quiesce`).
    draining: bool,
    /// Paused until then.
    until: Option<SimTime>,
    /// The generator has no more requests.
    done: bool,
    next_tag: u32,
    /// Held back by its flow group with `flow_sleep`: waiting for its
    /// requests in flight, then sleeping this long.
    flow_drain: Option<Dur>,
}

impl Think {
    /// A pause is due: count reached (`handle_thinktime`).
    fn check(&mut self) {
        if self.pause.is_zero() {
            return;
        }
        if !self.draining && self.counted >= self.last.saturating_add(self.blocks) {
            self.draining = true;
            self.last = self.counted;
        }
    }
    /// Drained at `now`: the pause starts.
    fn drained(&mut self, now: SimTime) {
        if self.draining && self.outstanding == 0 {
            self.draining = false;
            self.until = Some(now + self.pause);
        }
        if let Some(d) = self.flow_drain.filter(|_| self.outstanding == 0) {
            self.flow_drain = None;
            self.until = Some(now + d);
        }
    }
}

/// The state of [`pattern`]'s requests (see [`FioGen::next_ext`]).
struct Ext {
    sizes: [BsDraw; 3],
    /// Each direction's smallest size: the random map's unit.
    min_bs: [u64; 3],
    /// Each direction's alignment of random offsets (fio's `ba`).
    align: [u64; 3],
    /// The largest size of any direction.
    max_bs: u64,
    span: u64,
    map: Option<RandomMap>,
    seq_add: u64,
    seq_back: bool,
    seq_nr: u32,
    seq_left: u32,
    /// Where each direction's next sequential request starts (fio's
    /// `last_pos`), in bytes from the span's start.
    last_pos: [u64; 3],
    /// Requests issued in this pass.
    in_pass: u64,
    /// fio's verify log, when the job verifies.
    verify: Option<VerifyLog>,
    /// A job of several files: the others' state, the current one's start
    /// (its state is `last_pos` and `map` above) and the file service.
    files: Vec<FileSlot>,
    cur: usize,
    file_start: u64,
    service: FileService,
    service_left: u32,
    /// A trim+write job's write, due after its trim (`td_trimwrite`).
    pending_write: Option<(u64, u64)>,
    /// Where offsets end, from the span's start: the span, or with strided
    /// zones the device's end (fio's `real_file_size`).
    end: u64,
    /// fio's strided zones, when the job has them.
    zone: Option<Strided>,
    /// fio's read/write cycle of a mixed job (`workload.rwmix_cycle`).
    cycle: Option<RwCycle>,
    /// A time-based job of one file: each sequential direction wraps alone.
    wrap_alone: bool,
}

/// fio's strided zones (`setup_strided_zone_mode`): offsets from the
/// span's start.
struct Strided {
    /// Bytes per zone before the next (`zone_size`).
    size: u64,
    /// A zone's extent (`zone_range`) and the gap after it (`zone_skip`).
    range: u64,
    skip: u64,
    /// Bytes done in the current zone (`td->zone_bytes`).
    bytes: u64,
    /// The current zone's start (fio's `file_offset`).
    start: u64,
}

/// fio's direction cycle of a mixed job (`get_rw_ddir`, `set_rwmix_bytes`):
/// the direction holds until its requests reach `until`, then a new one is
/// drawn; a switch sets `until` to the requests of the direction left times
/// the new one's share.
struct RwCycle {
    /// Current direction (0 read, 1 write; fio starts at read).
    ddir: usize,
    /// `rwmix_issues`.
    until: u64,
    /// Requests issued in each direction since the ramp's end (`io_issues`).
    issues: [u64; 2],
    /// `rwmix[ddir]`: each direction's share.
    share: [u64; 2],
}

/// A file's own state while another is current (fio's `fio_file`).
#[derive(Default)]
struct FileSlot {
    last_pos: [u64; 3],
    map: Option<RandomMap>,
    /// Its offsets ran out in this pass (`fio_file_done`).
    done: bool,
}

/// The writes a verifying job reads back (fio's `io_hist_list` or its
/// rb-tree), then the read-back's place.
#[derive(Default)]
struct VerifyLog {
    /// Under the random map: every write, in order.
    list: Vec<(u64, u64)>,
    /// Otherwise: the last write of each range, by offset (a write that
    /// overlaps earlier ones replaces them, as `log_io_piece` does).
    tree: std::collections::BTreeMap<u64, u64>,
    in_order: bool,
    /// The read-back has begun: what is left of it.
    reading: Option<std::vec::IntoIter<(u64, u64)>>,
}

impl VerifyLog {
    fn log(&mut self, off: u64, len: u64) {
        if self.in_order {
            self.list.push((off, len));
            return;
        }
        // Remove every logged range that overlaps [off, off + len).
        let end = off + len;
        let first = self
            .tree
            .range(..off)
            .next_back()
            .filter(|(&o, &l)| o + l > off)
            .map(|(&o, _)| o);
        let over: Vec<u64> = first
            .into_iter()
            .chain(self.tree.range(off..end).map(|(&o, _)| o))
            .collect();
        for o in over {
            self.tree.remove(&o);
        }
        self.tree.insert(off, len);
    }
    /// The next range to read back, starting the read-back if need be.
    fn next(&mut self) -> Option<(u64, u64)> {
        if self.reading.is_none() {
            let all: Vec<(u64, u64)> = if self.in_order {
                std::mem::take(&mut self.list)
            } else {
                std::mem::take(&mut self.tree).into_iter().collect()
            };
            self.reading = Some(all.into_iter());
        }
        self.reading.as_mut().and_then(|r| r.next())
    }
}

enum DistSampler {
    Uniform,
    Zipf {
        zipf: rand_distr::Zipf<f64>,
        scatter: u64,
    },
    Pareto {
        pow: f64,
        scatter: u64,
    },
    /// fio's zoned distribution: for a draw in 1..=100, the zone's first
    /// block and its blocks.
    Zoned(Box<[(u64, u64)]>),
}

impl FioGen {
    /// Build from a validated workload config. `seed` is used unless `randseed` is set.
    pub fn new(cfg: &WorkloadConfig, logical_bytes: u64, seed: u64) -> FioGen {
        let span = cfg.span(logical_bytes);
        let blocks = (span / cfg.bs.0).max(1);
        let rng = SimRng::from_seed_label(cfg.randseed.unwrap_or(seed), "workload");
        let scatter = coprime_multiplier(blocks);
        let dist = match &cfg.random_distribution {
            Distribution::Uniform => DistSampler::Uniform,
            Distribution::Zipf(t) => DistSampler::Zipf {
                zipf: rand_distr::Zipf::new(blocks, *t).expect("validated zipf"),
                scatter,
            },
            Distribution::Pareto(h) => DistSampler::Pareto {
                pow: h.ln() / (1.0 - h).ln(),
                scatter,
            },
            Distribution::Zoned(z) => {
                // For each draw 1..=100, the zone's first block and its
                // blocks (fio's `zone_state_index`).
                let mut by_draw = Vec::with_capacity(100);
                let mut start = 0u64;
                for &(access, range) in z {
                    let first = blocks * start / 100;
                    let n = (blocks * range as u64 / 100).max(1);
                    for _ in 0..access {
                        by_draw
                            .push((first.min(blocks - 1), n.min(blocks - first.min(blocks - 1))));
                    }
                    start += range as u64;
                }
                DistSampler::Zoned(by_draw.into_boxed_slice())
            }
        };
        let loops = cfg.loops.max(1) as u64;
        let ext = cfg.extended().then(|| {
            let sizes = cfg
                .block_sizes
                .clone()
                .map_or_else(|| std::array::from_fn(|_| BsDraw::Fixed(cfg.bs.0)), |b| b.0);
            let min_bs: [u64; 3] = std::array::from_fn(|d| sizes[d].min());
            let unit = *min_bs.iter().min().expect("three");
            let file_span = cfg.file_span(logical_bytes);
            // With strided zones the map covers one zone (`init_random_map`).
            let zone_range = cfg.zone_range();
            let map_span = if zone_range > 0 {
                zone_range
            } else {
                file_span
            };
            let map = cfg
                .random_map()
                .then(|| RandomMap::new((map_span / unit).max(1)));
            let nrfiles = cfg.nrfiles.max(1) as usize;
            // The other files' state (the current one's is in `Ext`).
            let files = (0..nrfiles)
                .map(|i| FileSlot {
                    map: if i > 0 { map.clone() } else { None },
                    ..FileSlot::default()
                })
                .collect();
            Box::new(Ext {
                align: std::array::from_fn(|d| {
                    if cfg.blockalign.0 > 0 {
                        cfg.blockalign.0
                    } else {
                        min_bs[d]
                    }
                }),
                max_bs: sizes.iter().map(BsDraw::max).max().expect("three"),
                sizes,
                min_bs,
                span: file_span,
                map,
                seq_add: cfg.ddir_seq_add.0,
                seq_back: cfg.ddir_seq_back,
                seq_nr: cfg.ddir_seq_nr.max(1),
                seq_left: cfg.ddir_seq_nr.max(1),
                last_pos: [0; 3],
                in_pass: 0,
                verify: cfg.verify.then(|| VerifyLog {
                    in_order: cfg.random_map(),
                    ..Default::default()
                }),
                files,
                cur: 0,
                file_start: 0,
                pending_write: None,
                // fio's `real_file_size`: a file's size, or the device's
                // from `offset` (the zones of a block device job walk it
                // all; `size` is how much the job does).
                end: if zone_range > 0 && cfg.filesize.is_none() {
                    logical_bytes - cfg.offset.0
                } else {
                    file_span
                },
                zone: (zone_range > 0).then_some(Strided {
                    size: cfg.zonesize.0,
                    range: zone_range,
                    skip: cfg.zoneskip.0,
                    bytes: 0,
                    start: 0,
                }),
                wrap_alone: cfg.time_based && cfg.nrfiles <= 1,
                cycle: (cfg.rwmix_cycle && matches!(cfg.rw, RwMode::Rw | RwMode::RandRw)).then(
                    || RwCycle {
                        ddir: 0,
                        until: 0,
                        issues: [0; 2],
                        share: [cfg.rwmixread as u64, 100 - cfg.rwmixread as u64],
                    },
                ),
                service: cfg.file_service_type,
                service_left: match cfg.file_service_type {
                    FileService::RoundRobin(n) | FileService::Random(n) => n,
                    FileService::Sequential => u32::MAX,
                },
            })
        });
        // A pass's bytes are the span's (fio's `size`): a sequential pass
        // ends at its last whole block (`fill_io_u` refuses a request past
        // the end), a random one without the map when its bytes are done.
        let (budget, passes) = cfg.budget(span);
        let remaining = cfg.number_ios.map_or(u64::MAX, |n| n.saturating_mul(loops));
        let (interarrival_ns, poisson) = match cfg.rate_iops {
            Some(r) => (1e9 / r as f64, cfg.rate_process == RateProcess::Poisson),
            None => (0.0, false),
        };
        FioGen {
            rw: cfg.rw,
            bs_sectors: (cfg.bs.0 / SECTOR) as u32,
            mix: cfg.rwmixread,
            base_sector: cfg.offset.0 / SECTOR,
            blocks,
            next_seq: 0,
            remaining,
            count: remaining,
            rng,
            dist,
            timing: cfg.timing(),
            interarrival_ns,
            poisson,
            t: 0.0,
            perc_random: cfg.percentage_random,
            next_by_dir: [0; 3],
            budget,
            passes,
            ext,
            think: (!cfg.thinktime.is_zero() || cfg.flow > 0).then(|| Think {
                pause: cfg.thinktime,
                blocks: cfg.thinktime_blocks.max(1),
                on_issue: cfg.thinktime_on_issue,
                depth: cfg.iodepth.max(1),
                outstanding: 0,
                counted: 0,
                last: 0,
                draining: false,
                until: None,
                done: false,
                next_tag: 0,
                flow_drain: None,
            }),
            flow: (cfg.flow > 0).then(|| Box::new(super::flow_control::FlowJob::new(cfg))),
            zbd: cfg
                .zbd
                .is_some()
                .then(|| Box::new(super::zbd::ZbdJob::new(cfg, logical_bytes))),
        }
    }

    /// Share the zone table of `dev` with the other `zonemode=zbd` jobs on
    /// the device (fio's jobs share `f->zbd_info`). A job that is not
    /// zoned ignores it.
    pub fn share_zones(&mut self, dev: &super::zbd::ZbdDevice) {
        if let Some(z) = self.zbd.as_mut() {
            z.share(dev);
        }
    }

    /// Share the run's flow groups (fio's `flow_id`) with its other jobs.
    pub fn share_flow_groups(&mut self, g: &super::flow_control::FlowGroups) {
        if let Some(f) = self.flow.as_mut() {
            f.share(g);
        }
    }

    /// The job's I/O is over: it leaves its flow group.
    fn leave_flow(&mut self) {
        if let Some(f) = self.flow.as_mut() {
            f.leave();
        }
    }

    /// A `zonemode=zbd` job's next request: the steps its last request
    /// needs (waits for its requests in flight, zone commands), then the
    /// next request of its pattern moved to where the zones take it
    /// (`zbd_adjust_block`).
    #[cold]
    fn zbd_poll(&mut self) -> Option<Result<HostRequest, SourceError>> {
        use super::zbd::Adjusted;
        loop {
            let z = self.zbd.as_mut().expect("zbd");
            match z.next_step()? {
                Some(r) => return Some(Ok(r)),
                None if !z.steps.is_empty() => continue,
                None => {}
            }
            if z.done {
                self.leave_flow();
                return None;
            }
            // fio checks its flow group before each new request (with
            // zbd, after its requests in flight complete).
            if z.retry.is_none() {
                if let Some(f) = self.flow.as_mut() {
                    if z.outstanding > 0 || f.held_back() {
                        return None;
                    }
                }
            }
            let z = self.zbd.as_mut().expect("zbd");
            let r = match z.retry.take() {
                Some(r) => r,
                None => match self.next_ext() {
                    None => {
                        self.zbd.as_mut().expect("zbd").done = true;
                        self.leave_flow();
                        return None;
                    }
                    Some(Err(e)) => return Some(Err(e)),
                    Some(Ok(r)) => r,
                },
            };
            let z = self.zbd.as_mut().expect("zbd");
            match z.adjust(r) {
                Adjusted::Go => {
                    if let Some((d, end)) = z.last.take() {
                        if let Some(e) = self.ext.as_mut() {
                            e.last_pos[d] = end;
                        }
                    }
                }
                Adjusted::Wait => {
                    z.retry = Some(r);
                    return None;
                }
                Adjusted::Quiesce => {
                    z.retry = Some(r);
                    z.steps.push_back(super::zbd::Step::Quiesce);
                }
                Adjusted::Eof => z.done = true,
            }
        }
    }

    /// A pass over the span has ended (a sequential workload is back at its
    /// start, or fio's offset generation failed): fio's `keep_running` runs
    /// another while `loops` are left, or, for `io_size`, while at least the
    /// largest block size is left to do. Whether the job goes on.
    #[cold]
    fn pass_over(&mut self, max_bs: u64) -> bool {
        let more = match &mut self.passes {
            Some(n) => {
                *n = n.saturating_sub(1);
                *n > 0
            }
            None => self.budget >= max_bs,
        };
        if !more {
            self.budget = 0;
        }
        more
    }

    /// The direction of the next request (a mixed workload draws it with
    /// `rwmixread`).
    #[inline(always)]
    fn draw_op(&mut self) -> IoOp {
        match self.rw {
            RwMode::Read | RwMode::RandRead => IoOp::Read,
            RwMode::Write | RwMode::RandWrite => IoOp::Write,
            RwMode::Trim | RwMode::RandTrim => IoOp::Trim,
            // The write of a trim+write pair is made in `next_ext`.
            RwMode::TrimWrite | RwMode::RandTrimWrite => IoOp::Trim,
            RwMode::Rw | RwMode::RandRw => {
                if self.rng.gen_range(0..100) < self.mix {
                    IoOp::Read
                } else {
                    IoOp::Write
                }
            }
        }
    }

    /// The direction of the next request of fio's pattern: a mixed job
    /// with fio's cycle (`get_rw_ddir`) draws a new direction only once the
    /// current one's requests reach `until`; a switch sets `until` to the
    /// requests of the direction left times the new one's share
    /// (`set_rwmix_bytes`).
    fn ext_draw_op(&mut self) -> IoOp {
        let Some(c) = self.ext.as_mut().and_then(|e| e.cycle.as_mut()) else {
            return self.draw_op();
        };
        if c.issues[c.ddir] >= c.until {
            let d = if self.rng.gen_range(0..100) < c.share[0] {
                0
            } else {
                1
            };
            if d != c.ddir {
                c.until = c.issues[c.ddir] * c.share[d] / 100;
            }
            c.ddir = d;
        }
        if c.ddir == 0 {
            IoOp::Read
        } else {
            IoOp::Write
        }
    }

    /// The arrival time of the next request of an open loop (zero in a
    /// closed loop).
    #[inline(always)]
    fn next_arrival(&mut self) -> SimTime {
        if self.interarrival_ns > 0.0 {
            let now = self.t;
            let gap = if self.poisson {
                let u: f64 = self.rng.gen::<f64>();
                -(1.0 - u).ln() * self.interarrival_ns
            } else {
                self.interarrival_ns
            };
            self.t += gap;
            SimTime(now.round() as u64)
        } else {
            SimTime::ZERO
        }
    }

    /// The next request of fio's pattern beyond one size over one range
    /// (`fill_io_u` in fio's `io_u.c`): the direction, then the offset
    /// (`get_next_offset`), the size (`get_next_buflen`) and the random
    /// map's mark (`mark_random_map`, which cuts a request at the first
    /// block taken already). When no offset can be made the pass is over
    /// and the next one starts afresh, if the job goes on.
    #[inline(never)]
    fn next_ext(&mut self) -> Option<Result<HostRequest, SourceError>> {
        loop {
            if self.remaining == 0 || self.budget == 0 {
                // The job's I/O is done: a verifying job reads it back.
                let (off, len) = self.ext.as_mut()?.verify.as_mut()?.next()?;
                return Some(Ok(self.ext_request(IoOp::Read, off, len)));
            }
            // A trim+write job writes the blocks it just trimmed (fio's
            // `get_next_block` for randtrimwrite: the trim's offset and
            // length); its bytes are the writes' (`__io_bytes_exceeded`
            // counts a writing job's writes).
            if let Some((off, len)) = self.ext.as_mut().and_then(|e| e.pending_write.take()) {
                self.remaining -= 1;
                self.budget = self.budget.saturating_sub(len);
                let e = self.ext.as_mut().expect("extended");
                if let Some(v) = e.verify.as_mut() {
                    v.log(off, len);
                }
                return Some(Ok(self.ext_request(IoOp::Write, off, len)));
            }
            let mut op = self.ext_draw_op();
            if let Some(z) = self.zbd.as_ref() {
                op = z.adjust_ddir(op);
            }
            let pair = matches!(self.rw, RwMode::TrimWrite | RwMode::RandTrimWrite);
            if let Some((off, len)) = self.ext_offset_len(op) {
                self.remaining -= 1;
                if let Some(c) = self.ext.as_mut().and_then(|e| e.cycle.as_mut()) {
                    c.issues[(op == IoOp::Write) as usize] += 1;
                }
                if !pair {
                    self.budget = self.budget.saturating_sub(len);
                }
                let e = self.ext.as_mut().expect("extended");
                e.in_pass += 1;
                let off = off + e.file_start;
                if pair {
                    e.pending_write = Some((off, len));
                }
                if e.files.len() > 1 {
                    e.service_left = e.service_left.saturating_sub(1);
                    if e.service_left == 0 {
                        self.next_file(false);
                    }
                }
                let e = self.ext.as_mut().expect("extended");
                if op == IoOp::Write {
                    if let Some(v) = e.verify.as_mut() {
                        v.log(off, len);
                    }
                }
                return Some(Ok(self.ext_request(op, off, len)));
            }
            // This file's offsets ran out: the next one not done, if any.
            if self.ext.as_ref().is_some_and(|e| e.files.len() > 1) && self.next_file(true) {
                continue;
            }
            let e = self.ext.as_mut().expect("extended");
            let (max_bs, empty) = (e.max_bs, e.in_pass == 0);
            // A pass that could not make one request would fail again.
            if empty || !self.pass_over(max_bs) {
                self.budget = 0;
                continue;
            }
            let e = self.ext.as_mut().expect("extended");
            e.in_pass = 0;
            e.last_pos = [0; 3];
            e.seq_left = e.seq_nr;
            // fio's `clear_io_state` before each pass: the zones from the
            // start, and the cycle's `rwmix_issues` zeroed.
            if let Some(z) = e.zone.as_mut() {
                z.bytes = 0;
                z.start = 0;
            }
            if let Some(c) = e.cycle.as_mut() {
                c.until = 0;
            }
            if let Some(m) = e.map.as_mut() {
                m.reset();
            }
            // A new pass: every file afresh, from the first.
            for f in &mut e.files {
                f.last_pos = [0; 3];
                f.done = false;
                if let Some(m) = f.map.as_mut() {
                    m.reset();
                }
            }
            if e.files.len() > 1 {
                Self::switch_file(e, 0);
            }
        }
    }

    /// Make file `i` the current one: its state in, the current one's out.
    fn switch_file(e: &mut Ext, i: usize) {
        if i == e.cur {
            return;
        }
        let cur = e.cur;
        std::mem::swap(&mut e.files[cur].last_pos, &mut e.last_pos);
        std::mem::swap(&mut e.files[cur].map, &mut e.map);
        std::mem::swap(&mut e.files[i].last_pos, &mut e.last_pos);
        std::mem::swap(&mut e.files[i].map, &mut e.map);
        e.cur = i;
        e.file_start = i as u64 * e.span;
    }

    /// fio's `get_next_file`: the file the next request goes to, by the
    /// file service (`done`: the current file's offsets ran out). False
    /// when every file is done.
    fn next_file(&mut self, done: bool) -> bool {
        let n = self.ext.as_ref().expect("extended").files.len();
        let pick = {
            let e = self.ext.as_mut().expect("extended");
            if done {
                let cur = e.cur;
                e.files[cur].done = true;
            }
            e.service_left = match e.service {
                FileService::RoundRobin(k) | FileService::Random(k) => k,
                FileService::Sequential => u32::MAX,
            };
            if e.files.iter().all(|f| f.done) {
                return false;
            }
            e.service
        };
        let e = self.ext.as_ref().expect("extended");
        let next = match pick {
            FileService::Random(_) => {
                let open: Vec<usize> = (0..n).filter(|&i| !e.files[i].done).collect();
                open[self.rng.gen_range(0..open.len())]
            }
            _ => (1..=n)
                .map(|k| (e.cur + k) % n)
                .find(|&i| !e.files[i].done)
                .expect("one is not done"),
        };
        Self::switch_file(self.ext.as_mut().expect("extended"), next);
        true
    }

    /// A request of fio's pattern: `len` bytes at `off` from the span's
    /// start (a write `REQ_SYNC`, as the common path's).
    fn ext_request(&mut self, op: IoOp, off: u64, len: u64) -> HostRequest {
        HostRequest {
            arrival: self.next_arrival(),
            op,
            lba: self.base_sector + off / SECTOR,
            sectors: (len / SECTOR) as u32,
            stream: 0,
            tag: 0,
            sync: op == IoOp::Write,
            placement: ssd_core::workload::Placement::NONE,
        }
    }

    /// fio's `get_next_seq_offset`: where direction `d`'s next sequential
    /// request goes, after a hole of `seq_add` bytes (wrapping to the start
    /// past the end); None at the end of the span.
    /// With strided zones the position is taken from the zone's start.
    fn seq_offset(e: &Ext, d: usize) -> Option<u64> {
        if e.last_pos[d] >= e.end {
            return None;
        }
        let mut pos = e.last_pos[d] - e.zone.as_ref().map_or(0, |z| z.start.min(e.last_pos[d]));
        if pos != 0 && e.seq_add != 0 {
            if e.seq_back {
                // Before the start: from the end, as fio's wrap of a
                // negative skip (`io_size + ddir_seq_add`).
                pos = pos
                    .checked_sub(e.seq_add)
                    .unwrap_or_else(|| e.span.saturating_sub(e.seq_add));
            } else {
                pos += e.seq_add;
                if pos >= e.end {
                    pos = 0;
                }
            }
        }
        Some(pos)
    }

    /// fio's `setup_strided_zone_mode`, before direction `d`'s offset: the
    /// next zone once `size` bytes are done in this one (wrapping to the
    /// start past the device's end), a sequential position kept inside the
    /// zone, and the positions and map afresh each `range` bytes
    /// (`fio_file_reset`).
    fn next_zone(e: &mut Ext, d: usize) {
        let Some(z) = e.zone.as_mut() else { return };
        if z.bytes >= z.size {
            z.bytes = 0;
            z.start += z.range + z.skip;
            if z.start >= e.end {
                z.start = 0;
            }
            e.last_pos[d] = z.start;
        }
        if e.last_pos[d] >= z.start + z.range {
            e.last_pos[d] = z.start;
        }
        if z.bytes % z.range == 0 {
            e.last_pos = [z.start; 3];
            if let Some(m) = e.map.as_mut() {
                m.reset();
            }
        }
    }

    /// The offset and length of the next request of direction `op`, or
    /// None when the pass is over.
    fn ext_offset_len(&mut self, op: IoOp) -> Option<(u64, u64)> {
        let d = match op {
            IoOp::Read => 0,
            IoOp::Write => 1,
            _ => 2,
        };
        let random = self.rw.is_random();
        Self::next_zone(self.ext.as_mut().expect("extended"), d);
        // fio's `ddir_seq_nr`: a new offset every N requests.
        let hit = {
            let e = self.ext.as_mut().expect("extended");
            if e.seq_nr > 1 {
                e.seq_left -= 1;
                if e.seq_left == 0 {
                    e.seq_left = e.seq_nr;
                    true
                } else {
                    false
                }
            } else {
                true
            }
        };
        let do_random = random
            && hit
            && (self.perc_random >= 100 || self.rng.gen_range(1..=100u32) <= self.perc_random);
        let mut mark = false;
        let off = if do_random {
            mark = true;
            self.ext_random_offset(d)?
        } else {
            let e = self.ext.as_mut().expect("extended");
            // fio's `get_next_seq_offset` for a time-based job of one file:
            // a direction past `size` starts again at the start alone.
            if e.wrap_alone && e.last_pos[d] >= e.span {
                e.last_pos[d] = e.zone.as_ref().map_or(0, |z| z.start);
            }
            match Self::seq_offset(e, d) {
                Some(o) => o,
                // A random workload's sequential stretch at the end of the
                // span takes a random block instead (fio's `get_next_block`).
                None if random => self.ext_random_offset(d)?,
                None => return None,
            }
        };
        // `off` is from the zone's start (fio's offset before
        // `get_next_offset` adds `file_offset`); past the job's size or the
        // device's end the pass is over.
        let e = self.ext.as_ref().expect("extended");
        let start = e.zone.as_ref().map_or(0, |z| z.start);
        if off >= e.span {
            return None;
        }
        let (rel, off) = (off, off + start);
        let (end, min) = (e.end, e.min_bs[d]);
        if off + min > end {
            return None;
        }
        let mut len = match &e.sizes[d] {
            BsDraw::Fixed(b) => *b,
            sizes => {
                let sizes = sizes.clone();
                self.draw_len(&sizes, off, end)
            }
        };
        if off + len > end {
            return None;
        }
        let e = self.ext.as_mut().expect("extended");
        if mark {
            if let Some(m) = e.map.as_mut() {
                let set = m.set_nr(rel / min, len.div_ceil(min));
                if set > 0 && set * min < len {
                    len = set * min;
                }
            }
        }
        e.last_pos[d] = off + len;
        if let Some(z) = e.zone.as_mut() {
            z.bytes += len;
        }
        Some((off, len))
    }

    /// fio's random offset (`get_next_rand_offset`): a block of the
    /// direction's smallest size, drawn from the distribution; with the
    /// random map, the next free block when it is taken. None when the map
    /// is full or the block lies past the span (the pass is over).
    fn ext_random_offset(&mut self, d: usize) -> Option<u64> {
        // With strided zones, a block of the zone (`last_block`).
        let (min, ba, span) = {
            let e = self.ext.as_ref().expect("extended");
            (
                e.min_bs[d],
                e.align[d],
                e.zone.as_ref().map_or(e.span, |z| z.range),
            )
        };
        // fio's `last_block`: the last start at which the smallest size
        // still fits, in units of the alignment.
        let last = (span.saturating_sub(min.saturating_sub(ba)) / ba).max(1);
        let mut b = if matches!(self.dist, DistSampler::Uniform) {
            self.rng.gen_range(0..last)
        } else {
            self.random_block().min(last - 1)
        };
        let e = self.ext.as_ref().expect("extended");
        if let Some(m) = &e.map {
            if m.is_set(b) {
                b = m.next_free(b)?;
            }
        }
        let off = b * ba;
        (off < span).then_some(off)
    }

    /// fio's `get_next_buflen` for a range or a split: drawn until it fits
    /// before the span's end, a multiple of the smallest size, at most the
    /// largest.
    fn draw_len(&mut self, sizes: &BsDraw, off: u64, span: u64) -> u64 {
        let (min, max) = (sizes.min(), sizes.max());
        let fits = |b: u64| off + b <= span;
        for _ in 0..64 {
            let u: f64 = self.rng.gen();
            let mut len = match sizes {
                BsDraw::Range { min, max } => min + (*max as f64 * u) as u64,
                BsDraw::Split(v) => {
                    let mut perc = 0;
                    let mut len = min;
                    for &(b, p) in v {
                        if p == 0 {
                            continue;
                        }
                        len = b;
                        perc += p;
                        if u * 100.0 < perc as f64 && fits(b) {
                            break;
                        }
                    }
                    len
                }
                BsDraw::Fixed(b) => *b,
            };
            len -= len % min;
            len = len.min(max);
            if fits(len) {
                return len;
            }
        }
        min
    }

    /// A block of a partly random workload (`percentage_random` < 100),
    /// kept out of line so the common fully random path stays small: fio's
    /// should_do_random, a draw in 1..=100 against the percentage, else the
    /// block after the direction's last one.
    #[inline(never)]
    fn partly_random_block(&mut self, op: IoOp) -> u64 {
        let dir = match op {
            IoOp::Read => 0,
            IoOp::Write => 1,
            _ => 2,
        };
        let b = if self.rng.gen_range(1..=100u32) <= self.perc_random {
            self.random_block()
        } else {
            self.next_by_dir[dir]
        };
        self.next_by_dir[dir] = (b + 1) % self.blocks;
        b
    }

    // Always inlined: with two callers the compiler would otherwise keep it
    // out of line, which costs the fully random path a call per request.
    #[inline(always)]
    fn random_block(&mut self) -> u64 {
        match &self.dist {
            DistSampler::Uniform => self.rng.gen_range(0..self.blocks),
            DistSampler::Zipf { zipf, scatter } => {
                let rank =
                    rand::distributions::Distribution::sample(zipf, &mut self.rng) as u64 - 1;
                scatter_rank(rank.min(self.blocks - 1), *scatter, self.blocks)
            }
            DistSampler::Pareto { pow, scatter } => {
                // fio lib/zipf.c pareto_next: n = (nranges - 1) * rand^pow.
                let u: f64 = self.rng.gen();
                let rank = ((self.blocks - 1) as f64 * u.powf(*pow)) as u64;
                scatter_rank(rank.min(self.blocks - 1), *scatter, self.blocks)
            }
            DistSampler::Zoned(z) => {
                let (first, n) = z[self.rng.gen_range(0..100usize)];
                first + self.rng.gen_range(0..n)
            }
        }
    }
}

/// Spread hot ranks over the span (fio hashes ranks for the same reason) with a
/// bijection: rank * m mod n where gcd(m, n) = 1.
fn scatter_rank(rank: u64, m: u64, n: u64) -> u64 {
    ((rank as u128 * m as u128) % n as u128) as u64
}

fn coprime_multiplier(n: u64) -> u64 {
    fn gcd(a: u64, b: u64) -> u64 {
        if b == 0 {
            a
        } else {
            gcd(b, a % b)
        }
    }
    let mut m = (0x9E37_79B9_7F4A_7C15u64 % n.max(2)) | 1;
    while gcd(m, n) != 1 {
        m += 2;
    }
    m
}

/// A buffered fio job's calls: one piece each, nothing beyond their bytes.
/// A buffered job's buffers: fio allocates `iodepth` I/O units of the
/// largest block size per job (`init_io_u`: `max_bs * iodepth`) and
/// touches them.
impl AppSource for FioGen {
    fn memory(&self) -> u64 {
        let depth = match self.timing {
            Timing::ClosedLoop { depth } => depth.max(1) as u64,
            _ => 1,
        };
        depth.saturating_mul(self.bs_sectors as u64 * SECTOR)
    }
}

impl RequestSource for FioGen {
    fn timing(&self) -> Timing {
        self.timing
    }
    fn poll(&mut self, now: SimTime) -> Option<Result<HostRequest, SourceError>> {
        if self.zbd.is_some() {
            return self.zbd_poll();
        }
        let t = self.think.as_mut()?;
        if t.done
            || t.draining
            || t.flow_drain.is_some()
            || t.outstanding >= t.depth
            || t.until.is_some_and(|u| now < u)
        {
            return None;
        }
        t.until = None;
        if let Some(f) = self.flow.as_mut() {
            if f.held_back() {
                if !f.sleep.is_zero() {
                    t.flow_drain = Some(f.sleep);
                    t.drained(now);
                }
                return None;
            }
        }
        let r = self.next_request();
        let t = self.think.as_mut().expect("think");
        match r {
            None => {
                t.done = true;
                self.leave_flow();
                None
            }
            Some(Ok(mut r)) => {
                r.tag = t.next_tag;
                t.next_tag = t.next_tag.wrapping_add(1);
                t.outstanding += 1;
                if t.on_issue {
                    t.counted += 1;
                    t.check();
                }
                Some(Ok(r))
            }
            Some(Err(e)) => Some(Err(e)),
        }
    }
    fn event(&mut self, ev: HostEvent, now: SimTime) {
        if let Some(z) = self.zbd.as_mut() {
            if let HostEvent::Completed(tag) = ev {
                z.completed(tag);
            }
            return;
        }
        let Some(t) = self.think.as_mut() else {
            return;
        };
        if let HostEvent::Completed(_) = ev {
            t.outstanding = t.outstanding.saturating_sub(1);
            if !t.on_issue {
                t.counted += 1;
                t.check();
            }
            t.drained(now);
        }
    }
    fn wake_at(&self) -> Option<SimTime> {
        self.think.as_ref().and_then(|t| t.until)
    }
    fn finished(&self) -> bool {
        if let Some(z) = self.zbd.as_ref() {
            return z.done && z.steps.is_empty() && z.retry.is_none();
        }
        self.think.as_ref().is_none_or(|t| t.done)
    }
    fn stop(&mut self, _now: SimTime) {
        // The runtime is over: a reactive job makes no new request (what is
        // in flight completes) and leaves its flow group.
        if let Some(t) = self.think.as_mut() {
            t.done = true;
        }
        if let Some(z) = self.zbd.as_mut() {
            // Steps already queued (a reset and the write after it) were
            // begun: they still go out.
            z.done = true;
            z.retry = None;
        }
        self.leave_flow();
    }
    fn zones(&mut self, report: Option<&ZoneReport>) -> Result<(), SourceError> {
        match self.zbd.as_mut() {
            Some(z) => z.setup(report),
            None => Ok(()),
        }
    }
    fn report_sections(&self, _end: SimTime) -> Vec<(String, serde_json::Value)> {
        match self.zbd.as_ref() {
            Some(z) => vec![("zbd".into(), z.report())],
            None => Vec::new(),
        }
    }
    fn ramp_over(&mut self, _now: SimTime, in_flight: u64) {
        // fio resets its request count when the ramp ends (`reset_all_stats`
        // zeroes `io_blocks`, which `exceeds_number_ios` counts with the
        // requests in flight), not the bytes it issued (`io_issue_bytes`):
        // `number_ios` counts from the ramp's end, `size` from the start.
        self.remaining = self.count.saturating_sub(in_flight);
        // `reset_all_stats` also zeroes `io_issues` and `rwmix_issues`.
        if let Some(c) = self.ext.as_mut().and_then(|e| e.cycle.as_mut()) {
            c.issues = [0; 2];
            c.until = 0;
        }
    }
    #[inline]
    fn next_request(&mut self) -> Option<Result<HostRequest, SourceError>> {
        if self.ext.is_some() {
            return self.next_ext();
        }
        if self.remaining == 0 || self.budget == 0 {
            return None;
        }
        self.remaining -= 1;
        let bytes = self.bs_sectors as u64 * SECTOR;
        self.budget = self.budget.saturating_sub(bytes);
        let op = self.draw_op();
        let block = if self.rw.is_random() {
            if self.perc_random >= 100 {
                self.random_block()
            } else {
                self.partly_random_block(op)
            }
        } else {
            let b = self.next_seq;
            self.next_seq += 1;
            if self.next_seq == self.blocks {
                self.next_seq = 0;
                self.pass_over(bytes);
            }
            b
        };
        let arrival = self.next_arrival();
        Some(Ok(HostRequest {
            arrival,
            op,
            lba: self.base_sector + block * self.bs_sectors as u64,
            sectors: self.bs_sectors,
            stream: 0,
            tag: 0,
            // fio's direct=1: an O_DIRECT write is REQ_SYNC (2.6.35
            // `__blockdev_direct_IO_newtrunc`: WRITE_ODIRECT_PLUG; current
            // `dio_bio_write_op` in block/fops.c: REQ_SYNC | REQ_IDLE).
            sync: op == IoOp::Write,
            placement: ssd_core::workload::Placement::NONE,
        }))
    }
}
