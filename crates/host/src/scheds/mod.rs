//! Concrete host I/O schedulers beyond [`ssd_core::sched::Noop`], and
//! [`AnySched`], the enum that closes the runtime choice (`sched.kind`) so the
//! engine's hot loop stays statically dispatched.
//!
//! | name            | model                                                        |
//! |-----------------|--------------------------------------------------------------|
//! | `noop`          | one FIFO, merges ([`ssd_core::sched::Noop`])                    |
//! | `deadline`      | legacy Linux deadline ([`Deadline`])                          |
//! | `mq-deadline`   | blk-mq mq-deadline ([`MqDeadline`])                           |
//! | `cfq`           | per-process round robin with time slices ([`Cfq`])            |
//! | `anticipatory`  | deadline plus anticipation after reads ([`Anticipatory`])     |
//! | `pardispatcher` | Wang et al. 2013 subregion scheduler ([`ParDispatcher`])      |
//! | `kyber`         | token-based latency targets ([`Kyber`])                       |
//! | `bfq`           | budget fair queueing, B-WF2Q+ ([`Bfq`])                       |
//!
//! With several flows on an NVMe interface the host runs no elevator: each
//! flow has its own submission queue and the controller arbitrates among
//! them ([`NvmeQueues`], built by [`build_host_queues`]).
//!
//! **Invariant (determinism):** no decision depends on hash order: every index
//! is a `BTreeSet`/`BTreeMap` or a `Vec` indexed by the engine's request id.
//!
//! **Invariant (exactly once):** a request handed to `add` is either queued or
//! reported in `merged` as riding on a queued request; every queued request is
//! returned by `dispatch` exactly once. Requests are only merged with a queued
//! request (never two queued requests with each other), so the engine's merge
//! chains stay intact.
//!
//! Flush requests bypass every scheduler (as blk-mq inserts flushes straight
//! into the dispatch list) and are dispatched before anything else; trims travel
//! in the write direction (Linux counts a discard as a write) and never merge.

mod anticipatory;
mod bfq;
mod cfq;
mod deadline;
mod kyber;
mod mq_deadline;
mod nvme;
mod pardispatcher;

pub use anticipatory::Anticipatory;
pub use bfq::Bfq;
pub use cfq::Cfq;
pub use deadline::Deadline;
pub use kyber::Kyber;
pub use mq_deadline::MqDeadline;
pub use nvme::NvmeQueues;
pub use pardispatcher::ParDispatcher;
pub use ssd_core::hw::Arbitration;

use crate::flows::FlowConfig;
use crate::workload::IoOp;
use serde::{Deserialize, Serialize};
use ssd_core::error::{invalid, ConfigError};
use ssd_core::hw::HostConfig;
use ssd_core::sched::{try_merge, BlockQueue, IoScheduler, Noop, SchedReq};
use ssd_core::units::{Dur, SimTime, Size};
use std::collections::BTreeSet;

/// Names accepted by `sched.kind` (and `--sched`).
pub const SCHED_NAMES: &[&str] = &[
    "noop",
    "deadline",
    "mq-deadline",
    "cfq",
    "anticipatory",
    "pardispatcher",
    "kyber",
    "bfq",
];

macro_rules! any_sched {
    ($($(#[$m:meta])* $variant:ident($ty:ty)),* $(,)?) => {
        /// Every scheduler, statically dispatched. (One per simulation, so the
        /// size difference between variants does not matter.)
        #[derive(Debug)]
        #[allow(clippy::large_enum_variant)]
        pub enum AnySched { $($(#[$m])* $variant($ty)),* }
        impl IoScheduler for AnySched {
            fn name(&self) -> &'static str { match self { $(AnySched::$variant(s) => s.name()),* } }
            #[inline] fn add(&mut self, r: SchedReq, now: SimTime, merged: &mut Vec<(u32, u32)>) { match self { $(AnySched::$variant(s) => s.add(r, now, merged)),* } }
            #[inline] fn dispatch(&mut self, now: SimTime) -> Option<SchedReq> { match self { $(AnySched::$variant(s) => s.dispatch(now)),* } }
            #[inline] fn completed(&mut self, r: &SchedReq, now: SimTime) { match self { $(AnySched::$variant(s) => s.completed(r, now)),* } }
            #[inline] fn wake_at(&self) -> Option<SimTime> { match self { $(AnySched::$variant(s) => s.wake_at()),* } }
            #[inline] fn limit_depth(&self, op: IoOp, sync: bool) -> u32 { match self { $(AnySched::$variant(s) => s.limit_depth(op, sync)),* } }
            #[inline] fn len(&self) -> usize { match self { $(AnySched::$variant(s) => s.len()),* } }
        }
    };
}

any_sched!(
    /// `noop`: one FIFO with merging.
    Noop(Noop),
    /// `deadline`: sorted queues with read and write deadlines.
    Deadline(Deadline),
    /// `mq-deadline`: deadline as blk-mq runs it.
    MqDeadline(MqDeadline),
    /// `cfq`: per-stream queues with time slices.
    Cfq(Cfq),
    /// `anticipatory`: deadline that waits briefly for a stream's next read.
    Anticipatory(Anticipatory),
    /// `pardispatcher`: subqueues by address range, dispatched in parallel.
    ParDispatcher(ParDispatcher),
    /// `kyber`: per-direction token limits driven by latency targets.
    Kyber(Kyber),
    /// `bfq`: budget fair queueing among streams.
    Bfq(Bfq),
    /// NVMe submission queues per flow with the controller's arbitration (not a `--sched` name).
    Nvme(NvmeQueues),
);

/// Build the scheduler named in `cfg.kind` for a device of `capacity_sectors`
/// logical sectors (ParDispatcher sizes its subqueues from it) that holds
/// `device_depth` requests (`host.queue_depth`: CFQ idles only without
/// command queueing).
pub fn build_sched(
    cfg: &SchedConfig,
    capacity_sectors: u64,
    device_depth: u32,
) -> Result<AnySched, ConfigError> {
    cfg.validate()?;
    let max = (cfg.max_request.0 / crate::workload::SECTOR) as u32;
    Ok(match cfg.kind.as_str() {
        "noop" => AnySched::Noop(Noop::new(max, cfg.merge)),
        "deadline" => AnySched::Deadline(Deadline::new(cfg)),
        "mq-deadline" => {
            AnySched::MqDeadline(MqDeadline::new(cfg, cfg.nr_requests_for(device_depth)))
        }
        "cfq" => AnySched::Cfq(Cfq::new(cfg, device_depth)),
        "anticipatory" => AnySched::Anticipatory(Anticipatory::new(cfg)),
        "pardispatcher" => AnySched::ParDispatcher(ParDispatcher::new(cfg, capacity_sectors)?),
        "kyber" => AnySched::Kyber(Kyber::new(cfg)),
        "bfq" => AnySched::Bfq(Bfq::new(cfg, device_depth)),
        other => unreachable!("validate() accepted unknown scheduler {other:?}"),
    })
}

/// The host queueing of a configuration: with `[[flow]]`s on an NVMe
/// interface, a submission queue per flow and the controller's arbitration
/// ([`NvmeQueues`]); otherwise the elevator `sched.kind` ([`build_sched`]).
///
/// On a zoned drive (`zoned`) nothing is merged: Linux never merges across
/// a zone's end (`blk_rq_get_max_sectors` stops at `chunk_sectors`, the
/// zone size) and its zone write plugging holds a zone's writes one at a
/// time, so an elevator never holds two writes it could merge; the model
/// leaves reads of a zone unmerged as well.
pub fn build_host_queues(
    sched: &SchedConfig,
    host: &HostConfig,
    flows: &[FlowConfig],
    capacity_sectors: u64,
    zoned: bool,
) -> Result<AnySched, ConfigError> {
    let unmerged;
    let sched = if zoned && sched.merge {
        unmerged = SchedConfig {
            merge: false,
            ..sched.clone()
        };
        &unmerged
    } else {
        sched
    };
    if flows.is_empty() || !host.interface.is_nvme() {
        return build_sched(sched, capacity_sectors, host.queue_depth);
    }
    sched.validate()?;
    let classes: Vec<_> = flows.iter().map(|f| f.priority).collect();
    Ok(AnySched::Nvme(NvmeQueues::new(
        &classes,
        host.arbitration,
        host.arbitration_burst,
        host.wrr_weights,
        max_sectors(sched),
        sched.merge,
    )))
}

/// Which host I/O scheduler sits between the workload and the device queue, and
/// its tunables (each scheduler reads the ones it knows; see `crate::scheds`).
/// Missing fields take the Linux / paper defaults of [`SchedConfig::default`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SchedConfig {
    /// Scheduler name: one of `SCHED_NAMES`.
    pub kind: String,
    /// Largest request after merging.
    pub max_request: Size,
    /// Merge contiguous requests.
    pub merge: bool,
    /// Requests the block layer may hold for the device at once: queued in the
    /// elevator, held in a plug or in the device (Linux's
    /// `/sys/block/*/queue/nr_requests`). A submitter that finds them all
    /// taken sleeps until a request completes; its latency counts the wait.
    /// Default 0: what the kernel gives the scheduler's queue type
    /// ([`SchedConfig::nr_requests_for`]).
    pub nr_requests: u32,
    /// Plug per submitter (Linux's `blk_start_plug`): the requests one stream
    /// submits at the same instant of an open-loop workload are held, sorted by
    /// sector and inserted into the elevator together at the end of that
    /// instant (or once 16 are held, `BLK_MAX_REQUEST_COUNT`), so it can merge
    /// and order the whole burst. A closed-loop workload submits one request at
    /// a time, as fio does with its default `iodepth_batch_submit=1`.
    pub plug: bool,
    /// deadline / mq-deadline / anticipatory / pardispatcher: read FIFO expiry.
    pub read_expire: Dur,
    /// ... and write FIFO expiry.
    pub write_expire: Dur,
    /// deadline / mq-deadline / anticipatory: requests per sector-order batch.
    pub fifo_batch: u32,
    /// deadline / mq-deadline / anticipatory: read batches before writes must be served.
    pub writes_starved: u32,
    /// cfq: time slice of a sync (read) queue.
    pub slice_sync: Dur,
    /// cfq: time slice of the async (write) queue.
    pub slice_async: Dur,
    /// cfq, bfq: wait this long for the next request of an emptied sync
    /// queue (0 = no idling; `cfq_slice_idle`, `bfq_slice_idle`). BFQ idles
    /// on any device when `bfq_better_to_idle` says so (see `scheds::bfq`). CFQ arms this timer only without command queueing
    /// (`host.queue_depth` < 5); on a queueing drive the value still paces
    /// `cfq_slice_used_soon` and the shortest scaled slice.
    pub slice_idle: Dur,
    /// anticipatory: wait after a read for a nearby read of the same process.
    pub antic_expire: Dur,
    /// pardispatcher: subregion size S (one subqueue per subregion); clamped to the capacity.
    pub subregion: Size,
    /// pardispatcher: reads per batch.
    pub read_batch: u32,
    /// pardispatcher: writes per batch.
    pub write_batch: u32,
    /// kyber: read latency target.
    pub kyber_read_target: Dur,
    /// kyber: (sync) write latency target.
    pub kyber_write_target: Dur,
    /// mq-deadline: the scheduler tags (of `nr_requests`) async requests
    /// and writes may find taken and still get one (`async_depth`; 0: the
    /// kernel's, `nr_requests`, set by `dd_depth_updated`, which limits
    /// nothing). Echoed only when set, so configurations that leave it
    /// alone keep their `run.config_hash`.
    #[serde(skip_serializing_if = "is_zero")]
    pub async_depth: u32,
    /// bfq: largest budget of a queue, in sectors.
    pub bfq_max_budget: u32,
    /// bfq: longest a queue keeps the device for one budget.
    pub bfq_timeout: Dur,
    /// bfq: weight-raise interactive queues (the kernel's `low_latency`
    /// tunable, on by default). A report echoes it only when it is off, so
    /// configurations that leave it alone keep their `run.config_hash`.
    #[serde(skip_serializing_if = "is_true")]
    pub bfq_low_latency: bool,
}

/// For `skip_serializing_if`: a flag left at its default, on.
fn is_true(b: &bool) -> bool {
    *b
}

/// For `skip_serializing_if`: a number left at its default, 0.
fn is_zero(n: &u32) -> bool {
    *n == 0
}

impl Default for SchedConfig {
    /// Linux defaults (block/deadline-iosched.c, cfq-iosched.c, as-iosched.c,
    /// kyber-iosched.c, bfq-iosched.c) and Wang et al. 2013 for ParDispatcher.
    fn default() -> Self {
        SchedConfig {
            kind: "noop".into(),
            max_request: Size::kib(512),
            merge: true,
            nr_requests: 0,
            plug: BlockQueue::default().plug,
            read_expire: Dur::from_ms(500),
            write_expire: Dur::from_ms(5000),
            fifo_batch: 16,
            writes_starved: 2,
            slice_sync: Dur::from_ms(100),
            slice_async: Dur::from_ms(40),
            // cfq_slice_idle, HZ / 125 (CFQ decides itself not to arm the
            // timer on a queueing SSD: `cfq_arm_slice_timer`).
            slice_idle: Dur::from_ms(8),
            antic_expire: Dur::from_ms(6),
            subregion: Size::gib(4),
            read_batch: 16,
            write_batch: 8,
            kyber_read_target: Dur::from_ms(2),
            kyber_write_target: Dur::from_ms(10),
            async_depth: 0,
            bfq_max_budget: 16 * 1024,
            bfq_timeout: Dur::from_ms(125),
            bfq_low_latency: true,
        }
    }
}

impl SchedConfig {
    /// The requests the block layer holds for a device of `device_depth`
    /// tags (`host.queue_depth`): `nr_requests` when set, else the kernel's
    /// for the scheduler's queue type. The single-queue elevators (noop,
    /// deadline, cfq, anticipatory, and ParDispatcher, built on them) get
    /// `BLKDEV_MAX_RQ`, 128 (`blk_queue_make_request`); the blk-mq
    /// schedulers (mq-deadline, kyber, bfq) twice the hardware queue's
    /// depth, at most 2 x 128 (`blk_mq_init_sched`: `2 *
    /// min(tag_set->queue_depth, BLKDEV_MAX_RQ)`).
    pub fn nr_requests_for(&self, device_depth: u32) -> u32 {
        const BLKDEV_MAX_RQ: u32 = 128;
        if self.nr_requests != 0 {
            return self.nr_requests;
        }
        match self.kind.as_str() {
            "mq-deadline" | "kyber" | "bfq" => 2 * device_depth.clamp(1, BLKDEV_MAX_RQ),
            _ => BLKDEV_MAX_RQ,
        }
    }

    /// Check the tunables; errors name the field (`sched.NAME`).
    pub fn validate(&self) -> Result<(), ConfigError> {
        if !SCHED_NAMES.contains(&self.kind.as_str()) {
            return Err(invalid(
                "sched.kind",
                format!(
                    "unknown scheduler {:?} (known: {})",
                    self.kind,
                    SCHED_NAMES.join(", ")
                ),
            ));
        }
        if self.max_request.0 < 512 {
            return Err(invalid("sched.max_request", "must be at least one sector"));
        }
        if self.max_request.0 / 512 > u32::MAX as u64 {
            return Err(invalid("sched.max_request", "too large"));
        }
        let pos = |v: u64, f: &str| {
            if v == 0 {
                Err(invalid(f, "must be positive"))
            } else {
                Ok(())
            }
        };
        pos(self.read_expire.0, "sched.read_expire")?;
        pos(self.write_expire.0, "sched.write_expire")?;
        pos(self.fifo_batch as u64, "sched.fifo_batch")?;
        if self.nr_requests > 1_000_000 {
            return Err(invalid(
                "sched.nr_requests",
                format!(
                    "must be in 1..=1000000 (0: the kernel's), got {}",
                    self.nr_requests
                ),
            ));
        }
        if self.async_depth > 1_000_000 {
            return Err(invalid(
                "sched.async_depth",
                format!(
                    "must be in 1..=1000000 (0: the kernel's), got {}",
                    self.async_depth
                ),
            ));
        }
        pos(self.slice_sync.0, "sched.slice_sync")?;
        pos(self.slice_async.0, "sched.slice_async")?;
        pos(self.read_batch as u64, "sched.read_batch")?;
        pos(self.write_batch as u64, "sched.write_batch")?;
        pos(self.kyber_read_target.0, "sched.kyber_read_target")?;
        pos(self.kyber_write_target.0, "sched.kyber_write_target")?;
        pos(self.bfq_timeout.0, "sched.bfq_timeout")?;
        if self.bfq_max_budget < 32 {
            return Err(invalid(
                "sched.bfq_max_budget",
                format!("must be at least 32 sectors, got {}", self.bfq_max_budget),
            ));
        }
        if self.subregion.0 < 512 || self.subregion.0 & 511 != 0 {
            return Err(invalid(
                "sched.subregion",
                format!(
                    "must be a positive multiple of 512 bytes, got {}",
                    self.subregion.0
                ),
            ));
        }
        Ok(())
    }
}

// ------------------------------------------------------------ shared parts

/// Direction index: 0 = read (sync), 1 = write, trim (async).
#[inline]
pub(crate) fn dir_of(op: IoOp) -> usize {
    match op {
        IoOp::Read => 0,
        _ => 1,
    }
}

/// Largest request in sectors after merging.
pub(crate) fn max_sectors(cfg: &SchedConfig) -> u32 {
    (cfg.max_request.0 / crate::workload::SECTOR).min(u32::MAX as u64) as u32
}

/// A queued request with its bookkeeping.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Slot {
    pub r: SchedReq,
    /// Insertion order (ties in FIFOs; ids are reused, sequence numbers never).
    pub seq: u64,
    /// FIFO expiry time.
    pub deadline: SimTime,
    /// Owner queue (subqueue, process queue, domain), scheduler-defined.
    pub owner: u64,
}

impl Slot {
    #[inline]
    pub fn key(&self) -> (u64, u32) {
        (self.r.lba, self.r.id)
    }
    #[inline]
    pub fn fifo_key(&self) -> (SimTime, u64, u32) {
        (self.deadline, self.seq, self.r.id)
    }
}

/// The queued requests by engine id (ids are small slab indices, so a Vec is the index).
#[derive(Debug, Default)]
pub(crate) struct Slots {
    v: Vec<Option<Slot>>,
    n: usize,
    seq: u64,
}

impl Slots {
    pub fn insert(&mut self, r: SchedReq, deadline: SimTime, owner: u64) -> Slot {
        let i = r.id as usize;
        if i >= self.v.len() {
            self.v.resize(i + 1, None);
        }
        assert!(
            self.v[i].is_none(),
            "request id {} queued twice in the scheduler",
            r.id
        );
        self.seq += 1;
        let s = Slot {
            r,
            seq: self.seq,
            deadline,
            owner,
        };
        self.v[i] = Some(s);
        self.n += 1;
        s
    }
    #[inline]
    pub fn get(&self, id: u32) -> &Slot {
        self.v
            .get(id as usize)
            .and_then(|s| s.as_ref())
            .unwrap_or_else(|| panic!("scheduler index names request {id}, which is not queued"))
    }
    #[inline]
    pub fn set(&mut self, s: Slot) {
        self.v[s.r.id as usize] = Some(s);
    }
    pub fn remove(&mut self, id: u32) -> Slot {
        let s = self.v[id as usize]
            .take()
            .unwrap_or_else(|| panic!("removing request {id}, which is not queued"));
        self.n -= 1;
        s
    }
    #[inline]
    pub fn len(&self) -> usize {
        self.n
    }
}

/// One direction of one queue: an address-sorted tree (and its end index for
/// back merges) plus a FIFO ordered by expiry.
/// What [`DirQueue::add`] did with a request.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Added {
    /// Queued as this slot.
    Queued(Slot),
    /// Merged into a queued request: the kept one as it was before the merge.
    Merged(Slot),
}

#[derive(Debug, Default)]
pub(crate) struct DirQueue {
    by_lba: BTreeSet<(u64, u32)>,
    by_end: BTreeSet<(u64, u32)>,
    fifo: BTreeSet<(SimTime, u64, u32)>,
}

impl DirQueue {
    pub fn insert(&mut self, s: &Slot) {
        self.by_lba.insert(s.key());
        self.by_end.insert((s.r.end(), s.r.id));
        self.fifo.insert(s.fifo_key());
    }
    pub fn remove(&mut self, s: &Slot) {
        let ok = self.by_lba.remove(&s.key())
            & self.by_end.remove(&(s.r.end(), s.r.id))
            & self.fifo.remove(&s.fifo_key());
        assert!(ok, "request {} missing from its queue's indices", s.r.id);
    }
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.by_lba.is_empty()
    }
    /// Requests queued.
    #[inline]
    pub fn len(&self) -> usize {
        self.by_lba.len()
    }
    /// Oldest request (earliest expiry, then insertion order).
    #[inline]
    pub fn fifo_head(&self) -> Option<(SimTime, u32)> {
        self.fifo.first().map(|&(d, _, id)| (d, id))
    }
    /// The FIFO head if it has expired at `now` (Linux: `time_after_eq(now, fifo_time)`).
    #[inline]
    pub fn expired(&self, now: SimTime) -> Option<u32> {
        self.fifo_head()
            .filter(|&(d, _)| d <= now)
            .map(|(_, id)| id)
    }
    #[inline]
    pub fn first(&self) -> Option<u32> {
        self.by_lba.first().map(|&(_, id)| id)
    }
    /// Lowest-addressed request starting at or after `lba`.
    #[inline]
    pub fn at_or_after(&self, lba: u64) -> Option<u32> {
        self.by_lba.range((lba, 0)..).next().map(|&(_, id)| id)
    }
    /// The request after `key` in address order.
    #[inline]
    pub fn after(&self, key: (u64, u32)) -> Option<u32> {
        use std::ops::Bound::{Excluded, Unbounded};
        self.by_lba
            .range((Excluded(key), Unbounded))
            .next()
            .map(|&(_, id)| id)
    }
    /// C-LOOK: the first request at or after `pos`, else the lowest.
    #[inline]
    pub fn clook(&self, pos: u64) -> Option<u32> {
        self.at_or_after(pos).or_else(|| self.first())
    }

    /// Queue `r` (owned by `owner`, expiring at `deadline`) or, when merging is
    /// on (`merge_max`: the largest merged request in sectors), merge it into a
    /// contiguous queued request as [`merge`](Self::merge) does, recording the
    /// (kept, absorbed) pair in `merged`.
    pub fn add(
        &mut self,
        slots: &mut Slots,
        r: SchedReq,
        deadline: SimTime,
        owner: u64,
        merge_max: Option<u32>,
        merged: &mut Vec<(u32, u32)>,
    ) -> Added {
        if let Some(max) = merge_max {
            if let Some(old) = self.merge(slots, &r, deadline, max) {
                merged.push((old.r.id, r.id));
                return Added::Merged(old);
            }
        }
        let s = slots.insert(r, deadline, owner);
        self.insert(&s);
        Added::Queued(s)
    }

    /// Merge `r` into a contiguous queued request of this queue (back merge
    /// first, then front merge, as the Linux elevator tries them). Returns the
    /// kept request as it was before the merge (its id is the kept id). The kept
    /// request's expiry becomes the earlier of the two.
    pub fn merge(
        &mut self,
        slots: &mut Slots,
        r: &SchedReq,
        r_deadline: SimTime,
        max: u32,
    ) -> Option<Slot> {
        let back = self
            .by_end
            .range((r.lba, 0)..=(r.lba, u32::MAX))
            .next()
            .map(|&(_, id)| id);
        let front = self
            .by_lba
            .range((r.end(), 0)..=(r.end(), u32::MAX))
            .next()
            .map(|&(_, id)| id);
        for cand in [back, front].into_iter().flatten() {
            let old = *slots.get(cand);
            let mut a = old.r;
            if try_merge(&mut a, r, max) {
                self.remove(&old);
                let new = Slot {
                    r: a,
                    deadline: old.deadline.min(r_deadline),
                    ..old
                };
                slots.set(new);
                self.insert(&new);
                return Some(old);
            }
        }
        None
    }
}

#[cfg(test)]
pub(crate) mod testutil {
    use super::*;
    use ssd_core::sched::IoScheduler;

    pub fn req(id: u32, op: IoOp, lba: u64, sectors: u32, t_ns: u64, stream: u32) -> SchedReq {
        SchedReq {
            id,
            op,
            lba,
            sectors,
            arrival: SimTime(t_ns),
            stream,
            sync: false,
            placement: ssd_core::workload::Placement::NONE,
        }
    }

    /// Drain a scheduler at time `now` (no completions), returning dispatched ids.
    pub fn drain<S: IoScheduler + ?Sized>(s: &mut S, now: SimTime) -> Vec<u32> {
        std::iter::from_fn(|| s.dispatch(now))
            .map(|r| r.id)
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::testutil::*;
    use super::*;
    use ssd_core::units::Dur;

    #[test]
    fn every_name_builds_and_unknown_is_an_error() {
        for n in SCHED_NAMES {
            let cfg = SchedConfig {
                kind: n.to_string(),
                ..Default::default()
            };
            let s = build_sched(&cfg, 1 << 30, 32).unwrap();
            assert_eq!(s.name(), *n);
        }
        let cfg = SchedConfig {
            kind: "elevator".into(),
            ..Default::default()
        };
        let e = build_sched(&cfg, 1 << 20, 32).unwrap_err().to_string();
        assert!(e.contains("sched.kind") && e.contains("elevator"), "{e}");
        let cfg = SchedConfig {
            fifo_batch: 0,
            ..Default::default()
        };
        let e = build_sched(&cfg, 1 << 20, 32).unwrap_err().to_string();
        assert!(e.contains("sched.fifo_batch"), "{e}");
    }

    #[test]
    fn flush_bypasses_every_scheduler() {
        for n in SCHED_NAMES.iter().filter(|&&n| n != "noop") {
            let cfg = SchedConfig {
                kind: n.to_string(),
                slice_idle: Dur::ZERO,
                ..Default::default()
            };
            let mut s = build_sched(&cfg, 1 << 30, 32).unwrap();
            let mut m = vec![];
            s.add(req(1, IoOp::Write, 800, 8, 0, 0), SimTime(0), &mut m);
            s.add(req(2, IoOp::Read, 80, 8, 0, 0), SimTime(0), &mut m);
            s.add(req(3, IoOp::Flush, 0, 0, 0, 0), SimTime(0), &mut m);
            // Dispatch, completing what is in the device whenever the
            // scheduler holds back (CFQ keeps a read behind a write).
            let mut ids = vec![];
            let mut out = vec![];
            for t in 0..8u64 {
                while let Some(r) = s.dispatch(SimTime(t)) {
                    ids.push(r.id);
                    out.push(r);
                }
                for r in out.drain(..) {
                    s.completed(&r, SimTime(t));
                }
            }
            assert_eq!(ids[0], 3, "{n}: {ids:?}");
            let mut sorted = ids.clone();
            sorted.sort();
            assert_eq!(sorted, vec![1, 2, 3], "{n}");
        }
    }
}
