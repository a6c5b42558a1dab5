//! Tenants: several flows sharing one drive, MQSim's multi-flow setup.
//!
//! Each `[[flow]]` is a workload of its own (a fio-style `workload`, a
//! `personality` or a `trace`), with a name and an NVMe priority class. The
//! flows run at once on one device: [`Flows`] multiplexes them into one
//! [`RequestSource`] that answers the block layer (a
//! [`Timing::Reactive`] source), so that every flow keeps its own timing (a
//! closed loop at its `iodepth`, a trace's arrival times, a page cache's
//! writeback) and its own queue.
//!
//! **Address space.** As MQSim does, each flow gets an equal, disjoint share
//! of the logical space by default (`sim.flow_space = "split"`; flow `i` of
//! `n` owns sectors `[i L / n, (i + 1) L / n)`, aligned down to pages) and
//! sees it as a drive of that size; `"shared"` lets every flow address the
//! whole drive.
//!
//! **Queues.** On an NVMe interface each flow has its own submission queue
//! of `host.sq_depth` entries (a flow holds at most that many requests in the
//! block layer and the device; more wait in the flow, and their wait counts in
//! the flow's end-to-end latency) and the controller arbitrates among the
//! queues ([`crate::scheds::NvmeQueues`]). On SATA the flows share the one
//! NCQ queue behind the elevator (`sched.kind`), each flow's threads as
//! processes of their own.
//!
//! **When each flow runs** (fio's time frames, [`FlowSchedule`]): flows
//! start at once, as fio's `run_threads` starts jobs, except that a
//! `stonewall` flow waits until every flow started before it has finished
//! (the flows after it wait for it), one with `wait_for` until the flows it
//! names have finished, and one with a `start_delay` until that long after
//! the run's start. A flow's own `ramp_time` is left out of its
//! statistics, and after its `runtime` it submits nothing new.
//!
//! **Statistics** (report section `flows`): per flow, requests, IOPS and
//! bandwidth, the end-to-end latency (from the request's arrival at the
//! flow's queue: MQSim's end-to-end request delay) with percentiles, and the
//! mean device response time (from submission to the block layer to
//! completion). The application layer adds each flow's slowdown against a run
//! of that flow alone and the run's fairness (MQSim: slowdown = shared over
//! alone mean response time; fairness = min over max slowdown).

use crate::personality::PersonalityConfig;
use crate::trace::TraceSpec;
use crate::workload::{
    HostEvent, HostRequest, IoOp, RequestSource, SourceError, Timing, WorkloadConfig,
};
use serde::{Deserialize, Serialize};
use ssd_core::error::{invalid, ConfigError};
use ssd_core::stats::Latencies;
use ssd_core::units::{Dur, SimTime};

pub use crate::workload::{flow_of, flow_range, flow_stream, FlowSpace, FLOW_SHIFT, MAX_FLOWS};

/// NVMe priority class of a flow's submission queue (used by
/// `host.arbitration = "wrr"`; MQSim's IO_Flow_Priority_Class).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FlowPriority {
    /// Urgent class: strict priority, served before the weighted classes.
    Urgent = 0,
    /// High class (weight `host.wrr_weights[0]`, default 4).
    High = 1,
    /// Medium class (weight `host.wrr_weights[1]`, default 2); the default.
    #[default]
    Medium = 2,
    /// Low class (weight `host.wrr_weights[2]`, default 1).
    Low = 3,
}

/// One tenant: a name, a priority class and exactly one workload.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FlowConfig {
    /// Letters, digits, `-` and `_`; unique among the flows.
    pub name: String,
    /// NVMe priority class of the flow's submission queue (default medium).
    #[serde(default)]
    pub priority: FlowPriority,
    /// A fio-style workload (fields default as `[workload]`'s do).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workload: Option<WorkloadConfig>,
    /// Filebench-like personality (`[flow.personality]`) instead of a fio-style workload.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub personality: Option<PersonalityConfig>,
    /// A block trace to replay (`[flow.trace]`) instead of a fio-style workload.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace: Option<TraceSpec>,
    /// fio's `stonewall`: the flow starts only once every flow started
    /// before it has finished, and the flows after it wait for its start
    /// (fio's `run_threads`: a stonewall stops the pass that starts jobs).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub stonewall: bool,
    /// fio's `startdelay`: the flow starts no sooner than this long after
    /// the run's start (fio counts it from its genesis, not from a
    /// stonewall's end).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_delay: Option<Dur>,
    /// fio's `ramp_time` for this flow: what it does in this time after its
    /// start is run but left out of its own statistics (the `flows`
    /// section); `sim.ramp_time` is the device-level figures' ramp.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ramp_time: Option<Dur>,
    /// fio's `runtime`: the flow submits nothing new once this much time has
    /// passed after its ramp (a buffered flow's application makes no new
    /// call); what it has in flight completes and counts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runtime: Option<Dur>,
    /// fio's `wait_for`: the flow starts only once these flows (by name)
    /// have finished (`waitee_running` in fio's backend.c); unlike a
    /// stonewall it holds back no other flow.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub wait_for: Vec<String>,
    /// The tenant's own placement handle on a drive with Flexible Data
    /// Placement: every write of the flow carries the placement identifier
    /// at this index of the device's list (by handle, then reclaim group:
    /// with one group, handle N). None: the flow's writes carry none, or
    /// its fio-style workload's own (`workload.fdp`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub placement: Option<u16>,
}

impl FlowConfig {
    /// A flow running a fio-style workload.
    pub fn workload(name: &str, w: WorkloadConfig) -> FlowConfig {
        FlowConfig {
            name: name.to_string(),
            priority: FlowPriority::Medium,
            workload: Some(w),
            personality: None,
            trace: None,
            stonewall: false,
            start_delay: None,
            ramp_time: None,
            runtime: None,
            wait_for: Vec::new(),
            placement: None,
        }
    }

    /// When the flow runs, as [`Flows`] applies it; `all` are the run's
    /// flows (whose slots `wait_for` names).
    pub fn schedule(&self, all: &[FlowConfig]) -> FlowSchedule {
        FlowSchedule {
            stonewall: self.stonewall,
            start_delay: self.start_delay,
            ramp_time: self.ramp_time,
            runtime: self.runtime,
            wait_for: all
                .iter()
                .enumerate()
                .filter(|(_, f)| self.wait_for.contains(&f.name))
                .fold(0u64, |m, (i, _)| m | 1 << i),
        }
    }

    /// Check the flow's own fields (`field` is its path, `flow.N`).
    pub fn validate(&self, field: &str) -> Result<(), ConfigError> {
        if self.name.is_empty()
            || !self
                .name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        {
            return Err(invalid(
                &format!("{field}.name"),
                format!(
                    "{:?}: a flow name is letters, digits, '-' and '_'",
                    ssd_core::units::clip(&self.name)
                ),
            ));
        }
        let n = self.workload.is_some() as u32
            + self.personality.is_some() as u32
            + self.trace.is_some() as u32;
        if n != 1 {
            return Err(invalid(
                field,
                format!(
                    "flow {:?} needs exactly one of workload, personality or trace ({n} given)",
                    self.name
                ),
            ));
        }
        for (k, d) in [("ramp_time", self.ramp_time), ("runtime", self.runtime)] {
            if d.is_some_and(|d| d.0 == 0) {
                return Err(invalid(
                    &format!("{field}.{k}"),
                    "must be positive (leave it out for none)",
                ));
            }
        }
        let total = [self.start_delay, self.ramp_time, self.runtime]
            .iter()
            .map(|d| d.map_or(0u128, |d| d.0 as u128))
            .sum::<u128>();
        if total > Dur::MAX.0 as u128 {
            return Err(invalid(
                field,
                format!(
                    "start_delay + ramp_time + runtime: at most {} ns (2^62 ns, about 146 years)",
                    Dur::MAX.0
                ),
            ));
        }
        Ok(())
    }

    /// Does the flow go through the page cache (buffered I/O, on the one
    /// host the run's buffered flows share)?
    pub fn buffered(&self) -> bool {
        if self.trace.is_some() {
            return false;
        }
        match (&self.personality, &self.workload) {
            (Some(p), _) => p.uses_page_cache(),
            (None, Some(w)) => !w.direct,
            _ => false,
        }
    }
}

/// When a flow runs (see [`FlowConfig`]'s fields of the same names).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FlowSchedule {
    /// Wait for the flows started before it to finish.
    pub stonewall: bool,
    /// Start no sooner than this long after the run's start.
    pub start_delay: Option<Dur>,
    /// The flow's own ramp, from its start.
    pub ramp_time: Option<Dur>,
    /// Submit nothing new this long after the ramp.
    pub runtime: Option<Dur>,
    /// The slots of the flows it waits for (fio's `wait_for`), a bit each.
    pub wait_for: u64,
}

/// One flow in a run: its source and where its requests go.
pub struct Flow<S> {
    /// The flow's slot among the configuration's `[[flow]]`s (a run of one
    /// flow alone keeps its slot, so its queue and range are the same).
    pub slot: usize,
    /// The flow's name (from its configuration).
    pub name: String,
    /// The flow's NVMe priority class.
    pub priority: FlowPriority,
    /// First sector of the flow's range (added to every request) and its end.
    pub range: (u64, u64),
    /// The most requests it may hold in the block layer and the device (its
    /// SQ's depth; unbounded on a shared SATA queue).
    pub depth: u32,
    /// When it runs: its group, start delay, ramp and runtime.
    pub schedule: FlowSchedule,
    /// The flow's own request source.
    pub src: S,
}

struct FlowState<S> {
    f: Flow<S>,
    timing: Timing,
    outstanding: u32,
    /// An open-loop source's next request, not yet due or not yet admitted.
    peeked: Option<HostRequest>,
    exhausted: bool,
    stats: FlowStats,
    /// When the flow started (None: not yet; once started it may submit).
    begin: Option<SimTime>,
    /// Added to an open-loop source's arrival times: how much after the
    /// run's start the flow started.
    offset: u64,
    /// The end of its own ramp, while it is to come.
    ramp_end: Option<SimTime>,
    /// When it stops submitting (its runtime is over), while it is to come.
    end_at: Option<SimTime>,
    /// Where its statistics start (its start, or the end of a ramp).
    measure_from: Option<SimTime>,
}

#[derive(Default)]
struct FlowStats {
    reads: u64,
    writes: u64,
    trims: u64,
    other: u64,
    bytes_read: u64,
    bytes_written: u64,
    bytes_trimmed: u64,
    /// End-to-end latency by direction.
    e2e: Latencies,
    device_ns: u128,
    waited: u64,
    /// The flow's last completion.
    last_done: SimTime,
}

impl<S: RequestSource> FlowState<S> {
    /// Nothing more to submit and nothing in flight.
    fn done(&self) -> bool {
        self.started()
            && self.outstanding == 0
            && match self.timing {
                Timing::Reactive => self.f.src.finished(),
                _ => self.exhausted && self.peeked.is_none(),
            }
    }

    /// Its statistics start again at `at` (the requests handed over and not
    /// done count when they complete), and so does its source's.
    fn restart_stats(&mut self, at: SimTime) {
        self.stats = FlowStats {
            last_done: at,
            ..FlowStats::default()
        };
        self.measure_from = Some(at);
        let handed = self.outstanding as u64 + self.peeked.is_some() as u64;
        self.f.src.ramp_over(at, handed);
    }

    /// Submit nothing new from `at` on: a closed- or open-loop source is no
    /// longer asked, a reactive one is told.
    fn stop(&mut self, at: SimTime) {
        self.end_at = None;
        match self.timing {
            Timing::Reactive => self.f.src.stop(at),
            _ => {
                self.exhausted = true;
                self.peeked = None;
            }
        }
    }

    /// Whether it has started.
    #[inline]
    fn started(&self) -> bool {
        self.begin.is_some()
    }

    /// The next instant at which something of its schedule happens (a
    /// flow yet to start: the end of its delay, after `origin`, if that is
    /// after `now`; otherwise another flow's end starts it).
    fn deadline(&self, origin: SimTime, now: SimTime) -> Option<SimTime> {
        if !self.started() {
            let at = origin + self.f.schedule.start_delay.unwrap_or(Dur::ZERO);
            return (at > now).then_some(at);
        }
        match (self.ramp_end, self.end_at) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }
}

/// A request of some flow in flight: its flow, its own source's tag, when it
/// arrived at the flow and when it was submitted.
#[derive(Clone, Copy)]
struct InFlight {
    flow: u32,
    tag: u32,
    op: IoOp,
    bytes: u64,
    arrived: SimTime,
    submitted: SimTime,
}

/// The flows of a run as one reactive source.
pub struct Flows<S> {
    flows: Vec<FlowState<S>>,
    tags: Vec<Option<InFlight>>,
    free: Vec<u32>,
    /// The flow to ask first at the next poll (flows take turns at an instant).
    turn: usize,
    /// The run's first instant.
    origin: Option<SimTime>,
    /// The measured phase's start (the run's, or the end of `sim.ramp_time`).
    start: Option<SimTime>,
    last_done: SimTime,
    /// Flows that have not started.
    unstarted: usize,
    /// The earliest instant of any flow's schedule still to come.
    deadline: Option<SimTime>,
}

impl<S: RequestSource> Flows<S> {
    /// The flows of a run, taking turns at each instant.
    pub fn new(flows: Vec<Flow<S>>) -> Flows<S> {
        let unstarted = flows.len();
        Flows {
            flows: flows
                .into_iter()
                .map(|f| FlowState {
                    timing: f.src.timing(),
                    f,
                    outstanding: 0,
                    peeked: None,
                    exhausted: false,
                    stats: FlowStats::default(),
                    begin: None,
                    offset: 0,
                    ramp_end: None,
                    end_at: None,
                    measure_from: None,
                })
                .collect(),
            tags: Vec::new(),
            free: Vec::new(),
            turn: 0,
            origin: None,
            start: None,
            last_done: SimTime::ZERO,
            unstarted,
            deadline: None,
        }
    }

    /// How many flows the run has.
    pub fn len(&self) -> usize {
        self.flows.len()
    }

    /// Whether the run has no flow.
    pub fn is_empty(&self) -> bool {
        self.flows.is_empty()
    }

    /// Flow `i`'s own source.
    pub fn source(&self, i: usize) -> &S {
        &self.flows[i].f.src
    }

    /// Flow `i`'s name.
    pub fn name(&self, i: usize) -> &str {
        &self.flows[i].f.name
    }

    /// Flow `i`'s end-to-end latencies by direction, over its measured
    /// phase.
    pub fn latencies(&self, i: usize) -> &Latencies {
        &self.flows[i].stats.e2e
    }

    /// Start the flows whose wait is over, and carry out every flow's
    /// schedule up to `now`: starts, ends of ramps, ends of runtimes.
    ///
    /// Flows start as fio's `run_threads` starts jobs: in order, a flow
    /// whose start delay is not over is passed over, and a stonewall flow
    /// stops the pass while a flow is running or has just started.
    /// Returns whether a flow started.
    fn advance(&mut self, now: SimTime) -> bool {
        let origin = *self.origin.get_or_insert(now);
        let mut began = false;
        let waiting = self.unstarted > 0;
        if waiting {
            let mut running = self.flows.iter().any(|s| s.started() && !s.done());
            let done = self
                .flows
                .iter()
                .filter(|s| s.started() && s.done())
                .fold(0u64, |m, s| m | 1 << s.f.slot);
            for st in &mut self.flows {
                if st.started() {
                    continue;
                }
                let s = st.f.schedule;
                if origin + s.start_delay.unwrap_or(Dur::ZERO) > now {
                    continue;
                }
                if s.stonewall && running {
                    break;
                }
                // fio's `waitee_running`: passed over, not a stop of the pass.
                if s.wait_for & !done != 0 {
                    continue;
                }
                running = true;
                began = true;
                self.unstarted -= 1;
                st.begin = Some(now);
                st.offset = now.since(origin).0;
                st.measure_from = Some(self.start.map_or(now, |s| s.max(now)));
                st.stats.last_done = now;
                let ramped = now + s.ramp_time.unwrap_or(Dur::ZERO);
                st.ramp_end = s.ramp_time.map(|_| ramped);
                st.end_at = s.runtime.map(|r| ramped + r);
            }
        }
        if !waiting && self.deadline.is_none_or(|d| d > now) {
            return false;
        }
        for st in &mut self.flows {
            if let Some(r) = st.ramp_end.filter(|&r| r <= now) {
                st.ramp_end = None;
                st.restart_stats(r);
            }
            if let Some(e) = st.end_at.filter(|&e| e <= now) {
                // The runtime is over: nothing new is submitted.
                st.stop(e);
            }
        }
        self.deadline = self
            .flows
            .iter()
            .filter_map(|s| s.deadline(origin, now))
            .min();
        began
    }

    fn tag(&mut self, x: InFlight) -> u32 {
        match self.free.pop() {
            Some(t) => {
                self.tags[t as usize] = Some(x);
                t
            }
            None => {
                self.tags.push(Some(x));
                (self.tags.len() - 1) as u32
            }
        }
    }

    /// The next request of flow `i` due at `now`, if it may submit one.
    fn next_of(&mut self, i: usize, now: SimTime) -> Option<Result<HostRequest, SourceError>> {
        let st = &mut self.flows[i];
        if !st.started() || st.outstanding >= st.f.depth {
            return None;
        }
        let got = match st.timing {
            Timing::Reactive => st.f.src.poll(now),
            Timing::ClosedLoop { depth } => {
                if st.exhausted || st.outstanding >= depth {
                    return None;
                }
                match st.f.src.next_request() {
                    Some(Ok(r)) => Some(Ok(HostRequest { arrival: now, ..r })),
                    Some(Err(e)) => Some(Err(e)),
                    None => {
                        st.exhausted = true;
                        None
                    }
                }
            }
            Timing::OpenLoop => {
                if st.peeked.is_none() && !st.exhausted {
                    match st.f.src.next_request() {
                        Some(Ok(r)) => {
                            // Arrival times count from the flow's start.
                            st.peeked = Some(HostRequest {
                                arrival: SimTime(r.arrival.0.saturating_add(st.offset)),
                                ..r
                            })
                        }
                        Some(Err(e)) => return Some(Err(e)),
                        None => st.exhausted = true,
                    }
                }
                match st.peeked {
                    Some(r) if r.arrival <= now => {
                        st.peeked = None;
                        Some(Ok(r))
                    }
                    _ => None,
                }
            }
        };
        let r = match got {
            None => return None,
            Some(Err(mut e)) => {
                e.location = format!("flow {}: {}", st.f.name, e.location);
                return Some(Err(e));
            }
            Some(Ok(r)) => r,
        };
        let (base, end) = st.f.range;
        if r.lba + r.sectors as u64 > end - base {
            return Some(Err(SourceError {
                location: format!("flow {}", st.f.name),
                reason: format!(
                    "request at sector {} of {} sectors is beyond the flow's {} sectors",
                    r.lba,
                    r.sectors,
                    end - base
                ),
            }));
        }
        st.outstanding += 1;
        if r.arrival < now {
            st.stats.waited += 1;
        }
        let slot = st.f.slot;
        let x = InFlight {
            flow: i as u32,
            tag: r.tag,
            op: r.op,
            bytes: r.bytes(),
            arrived: r.arrival.min(now),
            submitted: now,
        };
        let tag = self.tag(x);
        Some(Ok(HostRequest {
            arrival: now,
            lba: r.lba + base,
            stream: flow_stream(slot, r.stream),
            tag,
            ..r
        }))
    }

    fn sections_of(&self, st: &FlowState<S>, end: SimTime) -> serde_json::Value {
        let s = &st.stats;
        let n = s.reads + s.writes + s.trims + s.other;
        // The flow's own span: from the start of its measured phase to its
        // last completion (to the end of the run if it was cut short); none
        // if it never started.
        let from = st.measure_from.unwrap_or(end);
        let until = if st.done() { s.last_done.min(end) } else { end };
        let secs = until.max(from).since(from).secs_f64();
        let per_s = |x: u64| if secs > 0.0 { x as f64 / secs } else { 0.0 };
        let mut v = serde_json::json!({
            "name": st.f.name,
            "slot": st.f.slot,
            "priority": st.f.priority,
            "first_sector": st.f.range.0,
            "sectors": st.f.range.1 - st.f.range.0,
            "queue_depth": st.f.depth,
            "time_s": secs,
            "requests": n,
            "reads": s.reads,
            "writes": s.writes,
            "bytes_read": s.bytes_read,
            "bytes_written": s.bytes_written,
            "trims": s.trims,
            "bytes_trimmed": s.bytes_trimmed,
            "iops": per_s(n),
            "read_iops": per_s(s.reads),
            "write_iops": per_s(s.writes),
            "bandwidth_mbps": if secs > 0.0 { (s.bytes_read + s.bytes_written) as f64 / secs / 1e6 } else { 0.0 },
            "latency_us": s.e2e.all().summary(),
            "device_response_us": if n > 0 { s.device_ns as f64 / n as f64 / 1e3 } else { 0.0 },
            "waited_in_flow": s.waited,
        });
        if st.started() {
            // When it started and when its measured phase began, after the
            // run's start.
            let origin = self.origin.unwrap_or(SimTime::ZERO);
            let b = st.begin.unwrap_or(origin);
            v["start_s"] = serde_json::json!(b.since(origin).secs_f64());
            v["measured_from_s"] = serde_json::json!(from.since(origin).secs_f64());
        }
        for (name, sec) in st.f.src.report_sections(self.last_done) {
            v[name] = sec;
        }
        v
    }
}

impl<S: RequestSource> RequestSource for Flows<S> {
    fn timing(&self) -> Timing {
        Timing::Reactive
    }

    fn next_request(&mut self) -> Option<Result<HostRequest, SourceError>> {
        None
    }

    fn poll(&mut self, now: SimTime) -> Option<Result<HostRequest, SourceError>> {
        self.start.get_or_insert(now);
        let n = self.flows.len();
        self.advance(now);
        loop {
            for k in 0..n {
                let i = (self.turn + k) % n;
                if let Some(r) = self.next_of(i, now) {
                    self.turn = (i + 1) % n;
                    return Some(r);
                }
            }
            // Asking may have found the flows a stonewall waits for done
            // (a source with nothing more): the flows after it start now.
            if self.unstarted == 0 || !self.advance(now) {
                return None;
            }
        }
    }

    fn event(&mut self, ev: HostEvent, now: SimTime) {
        let (HostEvent::Blocked(t) | HostEvent::Admitted(t) | HostEvent::Completed(t)) = ev;
        let Some(x) = self.tags.get(t as usize).copied().flatten() else {
            debug_assert!(false, "event of an unknown tag {t}");
            return;
        };
        let st = &mut self.flows[x.flow as usize];
        match ev {
            // A request whose submitter sleeps on `nr_requests` stays
            // outstanding until it completes, as with one source: the flow's
            // depth bounds what it submits meanwhile (a page cache keeps its
            // own threads asleep).
            HostEvent::Blocked(_) | HostEvent::Admitted(_) => {}
            HostEvent::Completed(_) => {
                st.outstanding -= 1;
                let s = &mut st.stats;
                match x.op {
                    IoOp::Read => {
                        s.reads += 1;
                        s.bytes_read += x.bytes;
                    }
                    IoOp::Write | IoOp::ZoneAppend => {
                        s.writes += 1;
                        s.bytes_written += x.bytes;
                    }
                    IoOp::Trim => {
                        s.trims += 1;
                        s.bytes_trimmed += x.bytes;
                    }
                    IoOp::Flush
                    | IoOp::ZoneReset
                    | IoOp::ZoneFinish
                    | IoOp::ZoneOpen
                    | IoOp::ZoneClose => s.other += 1,
                }
                s.e2e.record(x.op, now.since(x.arrived).0);
                s.device_ns += now.since(x.submitted).0 as u128;
                s.last_done = s.last_done.max(now);
                self.tags[t as usize] = None;
                self.free.push(t);
                self.last_done = self.last_done.max(now);
            }
        }
        if st.timing == Timing::Reactive {
            let inner = match ev {
                HostEvent::Blocked(_) => HostEvent::Blocked(x.tag),
                HostEvent::Admitted(_) => HostEvent::Admitted(x.tag),
                HostEvent::Completed(_) => HostEvent::Completed(x.tag),
            };
            st.f.src.event(inner, now);
        }
    }

    fn wake_at(&self) -> Option<SimTime> {
        let own = self
            .flows
            .iter()
            .filter(|st| st.started())
            .filter_map(|st| match st.timing {
                Timing::Reactive => st.f.src.wake_at(),
                Timing::OpenLoop if st.outstanding < st.f.depth => st.peeked.map(|r| r.arrival),
                _ => None,
            })
            .min();
        match (own, self.deadline) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    fn finished(&self) -> bool {
        self.flows.iter().all(|st| {
            if !st.started() {
                // Only a stopped run leaves a flow unstarted for good.
                return self.unstarted == 0;
            }
            match st.timing {
                Timing::Reactive => st.f.src.finished(),
                _ => st.exhausted && st.peeked.is_none(),
            }
        })
    }

    fn stop(&mut self, now: SimTime) {
        for st in &mut self.flows {
            st.stop(now);
            st.ramp_end = None;
        }
        // A flow that has not started never will.
        self.unstarted = 0;
        self.deadline = None;
    }

    fn notes(&self) -> Vec<(String, u64)> {
        self.flows
            .iter()
            .flat_map(|st| {
                st.f.src
                    .notes()
                    .into_iter()
                    .map(move |(k, v)| (format!("flow_{}_{k}", st.f.name), v))
            })
            .chain(
                self.flows
                    .iter()
                    .filter(|st| !st.started())
                    .map(|st| (format!("flow_{}_never_started", st.f.name), 1)),
            )
            .collect()
    }

    fn ramp_over(&mut self, now: SimTime, _in_flight: u64) {
        // Each flow's statistics start again, unless it keeps a ramp of its
        // own or has not started (its statistics start when it does); its
        // own source restarts its counts with what it has handed over and
        // not finished.
        self.start = Some(now);
        for st in &mut self.flows {
            // What the flows share (a host's page cache and CPU) starts
            // again with the run's ramp.
            st.f.src.shared_ramp_over(now);
            if st.started() && st.f.schedule.ramp_time.is_none() {
                st.restart_stats(now);
            }
        }
    }

    /// Each flow sees the zones of its own range, from its start.
    fn zones(&mut self, report: Option<&crate::workload::ZoneReport>) -> Result<(), SourceError> {
        for st in &mut self.flows {
            let (lo, hi) = st.f.range;
            let own = report.map(|r| crate::workload::ZoneReport {
                zones: r
                    .zones
                    .iter()
                    .filter(|z| z.start >= lo && z.start + r.zone_sectors <= hi)
                    .map(|z| crate::workload::HostZone {
                        start: z.start - lo,
                        wp: z.wp.saturating_sub(lo),
                        ..*z
                    })
                    .collect(),
                ..r.clone()
            });
            st.f.src.zones(own.as_ref()).map_err(|e| SourceError {
                location: format!("flow {}: {}", st.f.name, e.location),
                reason: e.reason,
            })?;
        }
        Ok(())
    }

    fn report_sections(&self, end: SimTime) -> Vec<(String, serde_json::Value)> {
        let flows: Vec<serde_json::Value> = self
            .flows
            .iter()
            .map(|st| self.sections_of(st, end))
            .collect();
        let mut v = vec![("flows".to_string(), serde_json::Value::Array(flows))];
        // What flows share (the page cache and CPU of the host their
        // buffered applications run on), once.
        for st in &self.flows {
            for (name, sec) in st.f.src.shared_sections(self.last_done) {
                if v.iter().all(|(n, _)| *n != name) {
                    v.push((name, sec));
                }
            }
        }
        v
    }
}

/// Check one workload source: the fio-style `w` (used when neither a
/// personality nor a trace is given), `p` or `t`. `prefix` is prepended to
/// the field names of errors (`""` at the top level, `"flow.1."` in a flow).
pub fn check_source(
    prefix: &str,
    w: &crate::workload::WorkloadConfig,
    p: Option<&crate::personality::PersonalityConfig>,
    t: Option<&TraceSpec>,
    logical_bytes: u64,
) -> Result<(), ConfigError> {
    let f = |x: &str| format!("{prefix}{x}");
    w.validate(logical_bytes).map_err(|e| match e {
        ConfigError::Invalid { field, reason } if !prefix.is_empty() => ConfigError::Invalid {
            field: f(&field),
            reason,
        },
        e => e,
    })?;
    if let Some(t) = t {
        if let Some(fmt) = &t.format {
            fmt.parse::<crate::trace::TraceFormat>()
                .map_err(|e| invalid(&f("trace.format"), e.to_string()))?;
        }
        if t.path.is_empty() {
            return Err(invalid(&f("trace.path"), "empty path"));
        }
    }
    if let Some(p) = p {
        if p.level == crate::personality::PersonalityLevel::File {
            crate::filebench::FileParams::from_config(p)?;
        } else {
            // Knobs of Filebench's file-level flowops: refused rather
            // than ignored.
            for (set, x) in [
                (p.prealloc_percent.is_some(), "personality.prealloc_percent"),
                (p.db_writers.is_some(), "personality.db_writers"),
            ] {
                if set {
                    return Err(invalid(
                        &f(x),
                        "a knob of the file-level personalities (personality.level = \"file\")",
                    ));
                }
            }
        }
    }
    if t.is_some() && p.is_some() {
        return Err(invalid(
            &f("personality"),
            "a run replays a trace or runs a personality, not both",
        ));
    }
    if p.is_none() && t.is_none() {
        if w.direct && (w.sync || w.fsync > 0 || w.end_fsync) {
            let x = if w.sync {
                "workload.sync"
            } else if w.fsync > 0 {
                "workload.fsync"
            } else {
                "workload.end_fsync"
            };
            return Err(invalid(
                &f(x),
                format!(
                    "acts on the page cache: it needs buffered I/O ({} = false)",
                    f("workload.direct")
                ),
            ));
        }
        if !w.direct && w.rate_iops.is_some() {
            return Err(invalid(
                &f("workload.direct"),
                "buffered I/O is made by application threads (closed loop); rate_iops needs direct = true",
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streams_carry_the_flow() {
        assert_eq!(flow_of(flow_stream(5, 7)), 5);
        assert_eq!(flow_of(flow_stream(63, u32::MAX)), 63);
        assert_eq!(flow_stream(2, u32::MAX) & 0xFF_FFFF, 0xFF_FFFF);
    }

    #[test]
    fn split_ranges_tile_the_drive_on_page_boundaries() {
        let logical = 1000 * 4096 + 512;
        let mut at = 0;
        for i in 0..3 {
            let (s, e) = flow_range(FlowSpace::Split, i, 3, logical, 4096);
            assert_eq!(s, at);
            assert_eq!(s % 8, 0);
            assert_eq!(e % 8, 0);
            at = e;
        }
        assert_eq!(at, 1000 * 8);
        assert_eq!(
            flow_range(FlowSpace::Shared, 2, 3, logical, 4096),
            (0, logical / 512)
        );
    }

    #[test]
    fn names_and_workloads_are_checked() {
        let mut f = FlowConfig::workload("db-1", WorkloadConfig::default());
        f.validate("flow.0").unwrap();
        f.name = "a b".into();
        assert!(f
            .validate("flow.0")
            .unwrap_err()
            .to_string()
            .starts_with("flow.0.name"));
        f.name = "x".into();
        f.workload = None;
        assert!(f
            .validate("flow.0")
            .unwrap_err()
            .to_string()
            .contains("exactly one"));
    }
}
