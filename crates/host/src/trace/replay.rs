//! Replay of a trace's records as the drive's requests: [`ReplayOptions`]
//! (timing, scaling, out-of-range requests, reordering) and [`Replay`].

use super::*;

/// What to do with a request that reaches beyond the device's logical capacity.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum OutOfRange {
    /// Fold the start address into the device (modulo capacity, aligned down to
    /// `wrap_align`) and count it.
    #[default]
    Wrap,
    /// Fail with an error naming the line.
    Reject,
}

/// How a trace is replayed; sits in the TOML config as `[replay]`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ReplayOptions {
    /// None: honour timestamps (open loop). Some(n): closed loop at queue depth n,
    /// timestamps ignored.
    pub closed_loop_depth: Option<u32>,
    /// Time scaling: 2.0 replays twice as fast (inter-arrival times halved).
    pub speed: f64,
    /// Take the stream id from the trace (SPC ASU, MSR disk or host, blkparse/FIU
    /// pid, DiskSim/MQSim device, our CSV's stream column); otherwise 0.
    pub streams: bool,
    /// MSR: stream id from the hostname instead of the disk number.
    pub msr_stream_by_host: bool,
    /// Replay only records of this device / ASU / disk number.
    pub device: Option<u32>,
    /// What to do with a request beyond the device's capacity (default wrap).
    pub out_of_range: OutOfRange,
    /// Alignment of wrapped start addresses.
    pub wrap_align: Size,
    /// Stop after this many requests.
    pub max_requests: Option<u64>,
    /// Stop at the first request whose rebased trace time (before `speed`,
    /// after `max_gap`) exceeds this.
    pub max_time: Option<Dur>,
    /// Cap every gap between consecutive arrivals (trace time, before
    /// `speed`) at this: long idle periods, or a corrupt timestamp, are
    /// compressed (and counted in the notes as `trace_gaps_capped`).
    pub max_gap: Option<Dur>,
    /// Skip and count malformed lines instead of failing on the first.
    pub skip_bad_lines: bool,
    /// blkparse action to replay: "Q" (queued, per-request view) or "D" (issued).
    pub blkparse_action: String,
    /// Records read ahead and replayed in timestamp order (ties in file
    /// order): traces written in batches, such as blkparse output merged per
    /// CPU, are out of order by a few dozen records. 0 replays in file order.
    /// Disorder beyond the window is clamped (and counted).
    pub reorder_window: u32,
    /// Device logical capacity in bytes; set by the caller from the settings
    /// (`Settings::logical_bytes`), not from the TOML file.
    #[serde(skip)]
    pub capacity_bytes: Option<u64>,
}

/// Default [`ReplayOptions::reorder_window`]: well beyond the disorder of
/// blkparse's per-CPU batches (37 records in `blkparse_ycsb_ext4.txt`), small
/// enough to stay streaming (64 bytes a record).
pub const DEFAULT_REORDER_WINDOW: u32 = 1024;

/// Largest accepted [`ReplayOptions::reorder_window`].
pub const MAX_REORDER_WINDOW: u32 = 1 << 22;

impl Default for ReplayOptions {
    fn default() -> Self {
        ReplayOptions {
            closed_loop_depth: None,
            speed: 1.0,
            streams: true,
            msr_stream_by_host: false,
            device: None,
            out_of_range: OutOfRange::Wrap,
            wrap_align: Size::kib(4),
            max_requests: None,
            max_time: None,
            max_gap: None,
            skip_bad_lines: false,
            blkparse_action: "Q".to_string(),
            reorder_window: DEFAULT_REORDER_WINDOW,
            capacity_bytes: None,
        }
    }
}

impl ReplayOptions {
    /// Check the options; field names are given as `replay.<field>`.
    pub fn validate(&self) -> Result<(), ConfigError> {
        if !(self.speed.is_finite() && self.speed > 0.0) {
            return Err(invalid(
                "replay.speed",
                format!("must be a positive finite number, got {}", self.speed),
            ));
        }
        let max_depth = crate::workload::MAX_IODEPTH;
        if let Some(d) = self.closed_loop_depth.filter(|&d| d == 0 || d > max_depth) {
            return Err(invalid(
                "replay.closed_loop_depth",
                format!("must be in 1..={max_depth}, got {d}"),
            ));
        }
        if self.max_requests == Some(0) {
            return Err(invalid(
                "replay.max_requests",
                "must be at least 1 (0 would replay nothing; leave it out for the whole trace)",
            ));
        }
        if self.reorder_window > MAX_REORDER_WINDOW {
            return Err(invalid(
                "replay.reorder_window",
                format!(
                    "at most {MAX_REORDER_WINDOW} records, got {}",
                    self.reorder_window
                ),
            ));
        }
        if self.wrap_align.0 == 0 || self.wrap_align.0 / SECTOR * SECTOR != self.wrap_align.0 {
            return Err(invalid(
                "replay.wrap_align",
                format!(
                    "must be a positive multiple of 512 bytes, got {}",
                    self.wrap_align.0
                ),
            ));
        }
        if self.blkparse_action.len() != 1
            || !self.blkparse_action.as_bytes()[0].is_ascii_alphabetic()
        {
            return Err(invalid(
                "replay.blkparse_action",
                format!(
                    "must be one blkparse action letter such as \"Q\" or \"D\", got {:?}",
                    self.blkparse_action
                ),
            ));
        }
        if let Some(c) = self.capacity_bytes {
            if c < self.wrap_align.0 {
                return Err(invalid(
                    "replay.wrap_align",
                    format!("{} is larger than the capacity {c}", self.wrap_align.0),
                ));
            }
        }
        Ok(())
    }
    /// The per-line parsing options these replay options imply.
    pub fn parse_options(&self) -> ParseOptions {
        ParseOptions {
            blkparse_action: self
                .blkparse_action
                .as_bytes()
                .first()
                .copied()
                .unwrap_or(b'Q'),
            msr_stream_by_host: self.msr_stream_by_host,
        }
    }
    /// The same options with the device capacity set.
    pub fn with_capacity(mut self, bytes: u64) -> Self {
        self.capacity_bytes = Some(bytes);
        self
    }
}

// ------------------------------------------------------------------ replay

/// A trace replayed as host requests under [`ReplayOptions`].
pub struct Replay<R> {
    pub(super) rdr: TraceReader<R>,
    opts: ReplayOptions,
    base: Option<u64>,
    last: u64,
    emitted: u64,
    clamped: u64,
    wrapped: u64,
    filtered: u64,
    stopped: bool,
    /// Records read ahead (`opts.reorder_window`), least (time, file order)
    /// first: in `in_order` while every one came no earlier than the one
    /// before it (file order is then timestamp order: a queue), in `ahead`
    /// from the first that did not until the window empties (a heap).
    ahead: std::collections::BinaryHeap<std::cmp::Reverse<Ahead>>,
    in_order: std::collections::VecDeque<Ahead>,
    /// Records read so far (file order) and the latest timestamp among them.
    read: u64,
    latest_read: u64,
    /// Records that came after a later-stamped one in the file and that the
    /// window put back in timestamp order (those it could not are `clamped`).
    reordered: u64,
    /// Gaps longer than `opts.max_gap`, and the trace time they lost so far.
    gaps_capped: u64,
    gap_cut: u64,
}

/// A record read ahead, ordered by (timestamp, file order `seq`, which is
/// unique); `line` locates errors found when it is replayed.
#[derive(Clone, Copy, Debug)]
pub(super) struct Ahead {
    rec: Record,
    seq: u64,
    line: u64,
    /// It came after a later-stamped record in the file.
    late: bool,
}
impl Ahead {
    fn key(&self) -> (u64, u64) {
        (self.rec.time_ns, self.seq)
    }
}
impl PartialEq for Ahead {
    fn eq(&self, other: &Self) -> bool {
        self.key() == other.key()
    }
}
impl Eq for Ahead {}
impl PartialOrd for Ahead {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Ahead {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.key().cmp(&other.key())
    }
}

impl<R: BufRead> Replay<R> {
    /// Options must be valid ([`ReplayOptions::validate`]).
    pub fn new(input: R, format: TraceFormat, label: &str, opts: ReplayOptions) -> Self {
        let rdr = TraceReader::new(input, format, label, opts.parse_options())
            .skip_bad_lines(opts.skip_bad_lines);
        Replay {
            rdr,
            opts,
            base: None,
            last: 0,
            emitted: 0,
            clamped: 0,
            wrapped: 0,
            filtered: 0,
            stopped: false,
            ahead: Default::default(),
            in_order: Default::default(),
            read: 0,
            latest_read: 0,
            reordered: 0,
            gaps_capped: 0,
            gap_cut: 0,
        }
    }
    /// The trace format being replayed.
    pub fn format(&self) -> TraceFormat {
        self.rdr.format
    }

    /// The next record of the device replayed, in timestamp order within the
    /// window, with the line it came from and whether it came after a
    /// later-stamped record in the file; an error ends the stream.
    fn next_in_order(&mut self) -> Option<Result<(Record, u64, bool), SourceError>> {
        let w = self.opts.reorder_window as usize;
        while self.ahead.len() + self.in_order.len() <= w {
            let rec = match self.rdr.next_record() {
                None => break,
                Some(Ok(r)) => r,
                Some(Err(e)) => return Some(Err(e)),
            };
            if let Some(d) = self.opts.device {
                if rec.device != d {
                    self.filtered += 1;
                    continue;
                }
            }
            if w == 0 {
                return Some(Ok((rec, self.rdr.line, false)));
            }
            let late = rec.time_ns < self.latest_read;
            self.latest_read = self.latest_read.max(rec.time_ns);
            let a = Ahead {
                rec,
                seq: self.read,
                line: self.rdr.line,
                late,
            };
            self.read += 1;
            let follows = self
                .in_order
                .back()
                .is_none_or(|b| b.rec.time_ns <= a.rec.time_ns);
            if self.ahead.is_empty() && follows {
                self.in_order.push_back(a);
            } else {
                // Out of order: the window becomes a heap until it empties.
                self.ahead
                    .extend(self.in_order.drain(..).map(std::cmp::Reverse));
                self.ahead.push(std::cmp::Reverse(a));
            }
        }
        let a = match self.in_order.pop_front() {
            Some(a) => a,
            None => self.ahead.pop()?.0,
        };
        Some(Ok((a.rec, a.line, a.late)))
    }
    /// Requests yielded so far.
    pub fn emitted(&self) -> u64 {
        self.emitted
    }
    /// Requests whose start address was wrapped into the device (`out_of_range = "wrap"`).
    pub fn wrapped(&self) -> u64 {
        self.wrapped
    }

    fn place(&mut self, rec: &Record) -> Result<(u64, u32), String> {
        let mut start = rec.offset;
        let len = rec.size;
        if let Some(cap) = self.opts.capacity_bytes {
            if start + len > cap {
                match self.opts.out_of_range {
                    OutOfRange::Reject => {
                        return Err(format!(
                            "request at byte {start} (+{len}) is beyond the device capacity of {cap} bytes (set replay.out_of_range = \"wrap\" to fold it in)"
                        ))
                    }
                    OutOfRange::Wrap => {
                        let align = self.opts.wrap_align.0;
                        let room = cap.checked_sub(len).ok_or_else(|| {
                            format!("request of {len} bytes is larger than the device ({cap} bytes)")
                        })?;
                        let mut s = start % cap;
                        if s + len > cap {
                            s = start % (room + 1);
                        }
                        start = s - s % align;
                        self.wrapped += 1;
                    }
                }
            }
        }
        let lba = start / SECTOR;
        let end = (start + len).div_ceil(SECTOR);
        let sectors =
            u32::try_from(end - lba).map_err(|_| format!("request of {len} bytes is too large"))?;
        Ok((lba, sectors))
    }

    /// Next request (the `RequestSource` logic, usable without the trait).
    pub fn next_req(&mut self) -> Option<Result<HostRequest, SourceError>> {
        if self.stopped {
            return None;
        }
        if let Some(m) = self.opts.max_requests {
            if self.emitted >= m {
                self.stopped = true;
                return None;
            }
        }
        let (rec, line, late) = match self.next_in_order()? {
            Ok(r) => r,
            Err(e) => {
                self.stopped = true;
                return Some(Err(e));
            }
        };
        let mut t = rec.time_ns;
        let first = self.base.is_none();
        let base = *self.base.get_or_insert(t);
        if t < self.last {
            self.clamped += 1;
            t = self.last;
        } else if late {
            self.reordered += 1;
        }
        if let Some(g) = self.opts.max_gap {
            if !first && t - self.last > g.0 {
                self.gap_cut += t - self.last - g.0;
                self.gaps_capped += 1;
            }
        }
        self.last = t;
        let rel = t - base - self.gap_cut;
        if let Some(mt) = self.opts.max_time {
            if rel > mt.0 {
                self.stopped = true;
                return None;
            }
        }
        let arrival = if self.opts.speed == 1.0 {
            rel
        } else {
            (rel as f64 / self.opts.speed).round() as u64
        };
        if arrival > SimTime::MAX_ARRIVAL.0 && self.opts.closed_loop_depth.is_none() {
            self.stopped = true;
            let sp = self.opts.speed;
            let speed = if (1e-3..1e6).contains(&sp) {
                format!("{sp}")
            } else {
                format!("{sp:e}")
            };
            let reason = format!(
                "timestamp {:.6} s after the trace's first is {:.3e} s at speed {speed}: beyond \
                 the simulated time range ({:.0} years; raise --speed or replay closed loop)",
                rel as f64 / 1e9,
                arrival as f64 / 1e9,
                SimTime::MAX_ARRIVAL.0 as f64 / 1e9 / 86400.0 / 365.25
            );
            return Some(Err(self.rdr.err_at(line, reason)));
        }
        let (lba, sectors) = match self.place(&rec) {
            Ok(x) => x,
            Err(reason) => {
                self.stopped = true;
                return Some(Err(self.rdr.err_at(line, reason)));
            }
        };
        self.emitted += 1;
        Some(Ok(HostRequest {
            arrival: SimTime(arrival),
            op: rec.op.into(),
            lba,
            sectors,
            stream: if self.opts.streams { rec.stream } else { 0 },
            tag: 0,
            sync: rec.sync,
            placement: ssd_core::workload::Placement::NONE,
        }))
    }

    /// The notes the replay adds to the report (skipped lines, reordered, clamped, capped,
    /// wrapped, ...), those that are not zero.
    pub fn notes_list(&self) -> Vec<(String, u64)> {
        let mut v = Vec::new();
        let mut add = |k: &str, n: u64| {
            if n > 0 {
                v.push((k.to_string(), n));
            }
        };
        add("trace_bad_lines_skipped", self.rdr.bad_lines);
        add("trace_timestamps_reordered", self.reordered);
        add("trace_timestamps_non_monotonic_clamped", self.clamped);
        add("trace_gaps_capped", self.gaps_capped);
        add("trace_records_other_device_skipped", self.filtered);
        if self.opts.capacity_bytes.is_some() && self.opts.out_of_range == OutOfRange::Wrap {
            v.push(("trace_addresses_wrapped".to_string(), self.wrapped));
        }
        v
    }
}

impl<R: BufRead> RequestSource for Replay<R> {
    fn timing(&self) -> Timing {
        match self.opts.closed_loop_depth {
            Some(depth) => Timing::ClosedLoop { depth },
            None => Timing::OpenLoop,
        }
    }
    #[inline]
    fn next_request(&mut self) -> Option<Result<HostRequest, SourceError>> {
        self.next_req()
    }
    fn notes(&self) -> Vec<(String, u64)> {
        self.notes_list()
    }
}
