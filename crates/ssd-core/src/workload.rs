//! The request protocol between a workload source and the engine: host
//! requests, how a source's requests arrive ([`Timing`]), the events the
//! engine tells a reactive source, [`RequestSource`], and the flows' stream
//! space (a request's flow in its stream's high bits). The sources
//! themselves (fio-style, traces, personalities, the page cache, flows) are
//! the host crate's.

pub use crate::ftl::Placement;
use crate::units::SimTime;
use serde::{Deserialize, Serialize};

/// Bytes per sector, the unit of request addresses and lengths.
pub const SECTOR: u64 = 512;

/// Kind of host operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum IoOp {
    /// Read the range.
    Read,
    /// Write the range.
    Write,
    /// Trim (discard) the range: its data is no longer needed.
    Trim,
    /// Flush the device's volatile cache (no range).
    Flush,
    /// Zone append (Linux's `REQ_OP_ZONE_APPEND`, the NVMe Zone Append
    /// command): write the range's length at the write pointer of the zone
    /// that starts at `lba`; the device says where the data went.
    #[serde(rename = "zone_append")]
    ZoneAppend,
    /// Reset the zone that starts at `lba` (`REQ_OP_ZONE_RESET`, Zone
    /// Management Send's Reset Zone): its write pointer back to its start,
    /// its data gone, its blocks erased.
    #[serde(rename = "zone_reset")]
    ZoneReset,
    /// Finish the zone that starts at `lba` (`REQ_OP_ZONE_FINISH`): full,
    /// whatever is left unwritten.
    #[serde(rename = "zone_finish")]
    ZoneFinish,
    /// Explicitly open the zone that starts at `lba` (`REQ_OP_ZONE_OPEN`).
    #[serde(rename = "zone_open")]
    ZoneOpen,
    /// Close the zone that starts at `lba` (`REQ_OP_ZONE_CLOSE`).
    #[serde(rename = "zone_close")]
    ZoneClose,
}

impl IoOp {
    /// A zone management command (reset, finish, open, close): no data,
    /// one zone named by its first sector.
    #[inline]
    pub fn is_zone_mgmt(self) -> bool {
        matches!(
            self,
            IoOp::ZoneReset | IoOp::ZoneFinish | IoOp::ZoneOpen | IoOp::ZoneClose
        )
    }
    /// Whether the command carries data to the device (a write or a zone
    /// append).
    #[inline]
    pub fn writes_data(self) -> bool {
        matches!(self, IoOp::Write | IoOp::ZoneAppend)
    }
    /// Linux's `op_is_write` (include/linux/blk_types.h): the direction the
    /// block layer files a request under (`rq_data_dir`), by the operation's
    /// number's low bit: writes, discards, zone append, close and reset
    /// write; reads, flushes (as requests), zone open and finish read.
    #[inline]
    pub fn is_write_dir(self) -> bool {
        matches!(
            self,
            IoOp::Write | IoOp::Trim | IoOp::ZoneAppend | IoOp::ZoneClose | IoOp::ZoneReset
        )
    }
}

/// One host request as a workload source yields it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HostRequest {
    /// Arrival time (open loop); ignored for closed-loop sources.
    pub arrival: SimTime,
    /// What the request asks for.
    pub op: IoOp,
    /// Start address in 512-byte sectors.
    pub lba: u64,
    /// Length in sectors (0 only for flush).
    pub sectors: u32,
    /// Stream / process id (used by CFQ-like schedulers).
    pub stream: u32,
    /// The source's own name for the request, handed back with its events
    /// (a [`Timing::Reactive`] source); 0 where unused.
    pub tag: u32,
    /// The submitter waits for this write: Linux's `REQ_SYNC` (O_DIRECT
    /// writes, writeback for fsync and O_SYNC, journal commits a caller
    /// waits for). Reads are synchronous whatever it says
    /// ([`HostRequest::is_sync`]).
    pub sync: bool,
    /// A write's data placement directive (NVMe Flexible Data Placement:
    /// DTYPE 2h, DSPEC the placement identifier), or none
    /// ([`Placement::NONE`]). Every other command ignores it.
    pub placement: Placement,
}

impl HostRequest {
    /// Length in bytes (`sectors` x 512).
    pub fn bytes(&self) -> u64 {
        self.sectors as u64 * SECTOR
    }

    /// Whether the block layer treats the request as synchronous, as
    /// Linux's `op_is_sync` (include/linux/blk_types.h) does: every read,
    /// and a write or discard marked `REQ_SYNC`.
    #[inline]
    pub fn is_sync(&self) -> bool {
        op_is_sync(self.op, self.sync)
    }
}

/// Linux's `op_is_sync`: a read, or anything marked `REQ_SYNC`.
#[inline]
pub fn op_is_sync(op: IoOp, sync: bool) -> bool {
    op == IoOp::Read || sync
}

/// How a source's requests arrive.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Timing {
    /// Keep this many requests outstanding; a new one is issued when one completes.
    ClosedLoop {
        /// Requests kept outstanding.
        depth: u32,
    },
    /// Requests arrive at their `arrival` timestamps (non-decreasing).
    OpenLoop,
    /// The source is a host model that reacts to the block layer (the page
    /// cache): the engine asks it for the requests to submit now
    /// ([`RequestSource::poll`]) whenever something happens to one of its
    /// requests ([`RequestSource::event`]) and at the time it asks to be woken
    /// ([`RequestSource::wake_at`]).
    Reactive,
}

/// What happened to a request of a [`Timing::Reactive`] source (by its tag).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HostEvent {
    /// All `nr_requests` were taken: the submitter sleeps until it is admitted.
    Blocked(u32),
    /// A request that was blocked got its slot in the block layer.
    Admitted(u32),
    /// The device completed the request.
    Completed(u32),
}

/// An error from a workload source (a bad trace line, say).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{location}: {reason}")]
pub struct SourceError {
    /// "file:line" or the option name.
    pub location: String,
    /// What went wrong.
    pub reason: String,
}

/// A zoned device's zones as the host reads them when the run starts
/// (Linux's `blkdev_report_zones`, the NVMe Report Zones command), in
/// 512-byte sectors: what fio's `parse_zone_info` reads before a
/// `zonemode=zbd` job starts. Handed to the source by
/// [`RequestSource::zones`].
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ZoneReport {
    /// The zone size (`chunk_sectors`): zone `i` starts at `i * zone_sectors`.
    pub zone_sectors: u64,
    /// Each zone, in address order.
    pub zones: Vec<HostZone>,
    /// The device's open-zone limit as Linux reports it
    /// (`queue/max_open_zones`, the NVMe MOR plus one; 0: none).
    pub max_open_zones: u32,
    /// The device's active-zone limit (`queue/max_active_zones`; 0: none).
    pub max_active_zones: u32,
}

/// One zone of a [`ZoneReport`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HostZone {
    /// Its first sector.
    pub start: u64,
    /// Its writable sectors (zone capacity).
    pub capacity: u64,
    /// Its write pointer, a sector (meaningless for a conventional zone).
    pub wp: u64,
    /// Its condition.
    pub state: crate::ftl::ZoneState,
}

impl HostZone {
    /// A sequential-write-required zone (it has a write pointer), not a
    /// conventional one.
    pub fn has_wp(&self) -> bool {
        self.state != crate::ftl::ZoneState::NotWritePointer
    }
}

/// A stream of host requests. Implementations must be deterministic for a given seed.
pub trait RequestSource {
    /// How the source's requests arrive (closed loop, open loop or reactive).
    fn timing(&self) -> Timing;
    /// The next request, None when the source is exhausted, or an error that ends the run.
    fn next_request(&mut self) -> Option<Result<HostRequest, SourceError>>;
    /// Requests or lines the source skipped or changed, with reasons (reported).
    fn notes(&self) -> Vec<(String, u64)> {
        Vec::new()
    }
    /// [`Timing::ClosedLoop`]: the engine submitted `r` (one the source
    /// handed out, in the order it did) at `r.arrival`, the simulated time
    /// a slot of the loop was free. The engine may read requests ahead of
    /// their turn, so this, not [`RequestSource::next_request`], is when a
    /// closed-loop request is submitted; one read ahead and never submitted
    /// (a time limit ended the run) is never reported. The default does
    /// nothing (a trace recorder writes the request here).
    fn submitted(&mut self, _r: &HostRequest) {}
    /// [`Timing::Reactive`]: the next request to submit at `now`, if any
    /// (its `arrival` is set to `now`). Called until it returns None.
    fn poll(&mut self, _now: SimTime) -> Option<Result<HostRequest, SourceError>> {
        None
    }
    /// [`Timing::Reactive`]: an event of one of the source's requests.
    fn event(&mut self, _ev: HostEvent, _now: SimTime) {}
    /// [`Timing::Reactive`]: when the source wants to be polled again
    /// without an event (a timer: periodic writeback, a memory copy ending).
    fn wake_at(&self) -> Option<SimTime> {
        None
    }
    /// [`Timing::Reactive`]: nothing more will be submitted (every
    /// application thread is done).
    fn finished(&self) -> bool {
        true
    }
    /// Report sections of the source's own (name -> value), added to the
    /// report's top level: the page cache's and the application's statistics.
    fn report_sections(&self, _end: SimTime) -> Vec<(String, serde_json::Value)> {
        Vec::new()
    }
    /// The ramp (`sim.ramp_time`) ended at `now` with `in_flight` of the
    /// source's requests handed over and not completed (in the device, the
    /// block layer or read ahead): statistics the source keeps start again
    /// here, and a request count that ends the workload (fio's
    /// `number_ios`, `size`) counts from here, those requests included
    /// (they complete after the ramp and are counted then).
    fn ramp_over(&mut self, _now: SimTime, _in_flight: u64) {}
    /// [`Timing::Reactive`]: the application makes no new call from `now`
    /// on (a flow's `runtime` is over): calls not begun are dropped, and
    /// what is begun finishes (with its fsyncs, as fio's `end_fsync`);
    /// `finished` then follows. The default does nothing: a source that
    /// cannot stop runs to its end (the host crate's `Flows` stops closed-
    /// and open-loop sources itself, by no longer asking them).
    fn stop(&mut self, _now: SimTime) {}
    /// The device's zones when the measured run starts (after any
    /// preconditioning), `None` on a drive without zones: a source that
    /// writes zones itself (fio's `zonemode=zbd`) takes its zones and write
    /// pointers from here, as fio's `zbd_init_files` does. An error ends
    /// the run before its first request. The default ignores it.
    fn zones(&mut self, _report: Option<&ZoneReport>) -> Result<(), SourceError> {
        Ok(())
    }
    /// Report sections of what this source shares with other sources of
    /// the run (the page cache and CPU of a host whose tenants are flows of
    /// their own): whoever multiplexes the sources reports them once, at
    /// the report's top level. The default shares nothing.
    fn shared_sections(&self, _end: SimTime) -> Vec<(String, serde_json::Value)> {
        Vec::new()
    }
    /// The run's ramp (`sim.ramp_time`) ended at `now`: the statistics of
    /// what this source shares with others start again (its own restart
    /// with [`RequestSource::ramp_over`], which a flow's own ramp also
    /// calls). The default does nothing.
    fn shared_ramp_over(&mut self, _now: SimTime) {}
}

// ------------------------------------------------ the flows' stream space

/// A request's flow is in its stream's high bits: flow `i`'s streams are
/// `i << FLOW_SHIFT | thread`, so every flow's threads stay distinct
/// processes to the elevator and the plug.
pub const FLOW_SHIFT: u32 = 24;
/// The most flows a run may have.
pub const MAX_FLOWS: usize = 64;

/// The flow slot of a request's stream.
#[inline]
pub fn flow_of(stream: u32) -> usize {
    (stream >> FLOW_SHIFT) as usize
}

/// The stream a flow's request carries: the flow's slot and the low bits of
/// the stream its own source gave (a page cache's flusher, `u32::MAX`, stays
/// the flow's highest stream).
#[inline]
pub fn flow_stream(slot: usize, stream: u32) -> u32 {
    ((slot as u32) << FLOW_SHIFT) | (stream & ((1 << FLOW_SHIFT) - 1))
}

/// How the flows divide the logical space.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FlowSpace {
    /// Equal disjoint shares (MQSim).
    #[default]
    Split,
    /// Every flow addresses the whole drive.
    Shared,
}

/// The sector range `[start, end)` of flow `slot` among `n` on a drive of
/// `logical_bytes`, `page` bytes per page.
pub fn flow_range(
    space: FlowSpace,
    slot: usize,
    n: usize,
    logical_bytes: u64,
    page: u64,
) -> (u64, u64) {
    let sectors = logical_bytes / SECTOR;
    match space {
        FlowSpace::Shared => (0, sectors),
        FlowSpace::Split => {
            let per_page = (page / SECTOR).max(1);
            let pages = sectors / per_page;
            let start = pages * slot as u64 / n as u64 * per_page;
            let end = pages * (slot as u64 + 1) / n as u64 * per_page;
            (start, end)
        }
    }
}
