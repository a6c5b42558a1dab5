//! fio's `zonemode=zbd` (fio's `zbd.c`): a job on a zoned block device
//! writes each sequential zone at its write pointer, whatever offset its
//! pattern drew; it keeps the zones it writes within `max_open_zones`,
//! resets a full zone before writing it again (and, past
//! `zone_reset_threshold`, every `1 / zone_reset_frequency` writes), reads
//! only what lies below a write pointer, and turns a trim into a zone reset.
//!
//! The zones are the device's ([`RequestSource::zones`], fio's
//! `parse_zone_info`); on a drive without zones fio emulates zones of
//! `zonesize` (`init_zone_info`) and sends no zone command (a reset only
//! moves its own write pointer, `__zbd_reset_zone`). Every job on one
//! device shares one zone table, as fio's jobs share `f->zbd_info`
//! ([`ZbdDevice`]).
//!
//! fio holds a zone's mutex from choosing a request's zone until the
//! request completes (`zone_lock`, `zbd_put_io`); the mutex is recursive,
//! so a job may have several requests in one zone, and another job waits.
//! Here a job whose zone is held by another waits until that job's
//! requests there complete. fio waits for its own requests in flight
//! (`io_u_quiesce`) before a zone reset or finish, which it issues
//! synchronously, and before choosing again among full write zones; here
//! the job issues nothing until they complete, then the zone command alone.
//!
//! Not modelled: `write_zone_remainders`, `recover_zbd_write_error`,
//! `verify`, `zoneskip`, several files.

use super::*;
use ssd_core::ftl::ZoneState;
use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};

pub use super::config::{ZbdOptions, ZBD_MAX_WRITE_ZONES};

/// One device's zones as fio's jobs on it see them (fio's
/// `zoned_block_device_info`), shared by those jobs. Empty until the run
/// starts and the device reports its zones.
#[derive(Clone, Default)]
pub struct ZbdDevice(Arc<Mutex<Option<Dev>>>);

impl std::fmt::Debug for ZbdDevice {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ZbdDevice")
    }
}

/// fio's `fio_zone_info`, in bytes.
#[derive(Clone, Debug)]
struct Zone {
    start: u64,
    capacity: u64,
    wp: u64,
    has_wp: bool,
    offline: bool,
    /// In the write-zone table (`z->write`), and the job that put it there.
    write: bool,
    writer: u32,
    /// The job holding the zone's mutex and its requests there.
    lock: Option<(u32, u32)>,
}

impl Zone {
    fn cap_end(&self) -> u64 {
        self.start + self.capacity
    }
    /// `zbd_zone_remainder`.
    fn remainder(&self) -> u64 {
        self.cap_end().saturating_sub(self.wp)
    }
}

/// fio's `zoned_block_device_info`.
#[derive(Debug)]
struct Dev {
    zone_size: u64,
    zones: Vec<Zone>,
    /// A zoned drive (its zones get the zone commands), not emulated zones.
    host_managed: bool,
    /// `max_write_zones` (0: none) and the table (`write_zones`).
    max_write_zones: u32,
    write_zones: Vec<u32>,
    /// `wp_valid_data_bytes`, `write_cnt`, and the jobs' write range
    /// (`write_min_zone`, `write_max_zone`).
    vdb: u64,
    write_cnt: u32,
    write_range: Option<(u32, u32)>,
    /// Per job: its requests in flight, its zones in the table.
    in_flight: Vec<u32>,
    job_write_zones: Vec<u32>,
}

impl Dev {
    fn idx(&self, off: u64) -> u32 {
        ((off / self.zone_size) as usize).min(self.zones.len() - 1) as u32
    }
    fn zone_end(&self, z: u32) -> u64 {
        self.zones[z as usize].start + self.zone_size
    }
    fn locked_by_other(&self, z: u32, job: u32) -> bool {
        self.zones[z as usize].lock.is_some_and(|(j, _)| j != job)
    }
    /// `zbd_write_zone_put`. fio takes the zone off the count of the job
    /// that puts it; here off the count of the job that took it, so that
    /// each job's count (`job_max_open_zones`) stays its own zones'.
    fn write_zone_put(&mut self, z: u32) {
        if !self.zones[z as usize].write {
            return;
        }
        if let Some(i) = self.write_zones.iter().position(|&w| w == z) {
            self.write_zones.remove(i);
            let owner = self.zones[z as usize].writer as usize;
            self.job_write_zones[owner] -= 1;
        }
        self.zones[z as usize].write = false;
    }
}

/// What a request became.
pub(super) enum Adjusted {
    /// Its steps are queued (zone commands, waits, the request).
    Go,
    /// A zone it needs is held by another job, or the jobs' requests in
    /// flight must complete first: try again after the next event.
    Wait,
    /// The job's own requests in flight complete first; then try again.
    Quiesce,
    /// No zone can take it: the job's I/O is over (`io_u_eof`).
    Eof,
}

/// A step of the job's queue.
#[derive(Clone, Copy, Debug)]
pub(super) enum Step {
    /// Wait until the job's requests in flight complete (`io_u_quiesce`).
    Quiesce,
    /// Submit the request; it holds zone `.1`'s lock (if any) until it
    /// completes.
    Issue(HostRequest, Option<u32>),
}

/// A job's own zbd state (fio's per-thread part of `zbd.c`).
pub(super) struct ZbdJob {
    pub(super) opts: ZbdOptions,
    dev: ZbdDevice,
    id: u32,
    ready: bool,
    min_zone: u32,
    max_zone: u32,
    /// fio's `file_offset` and `io_size`, bytes, and the device's size
    /// (`real_file_size`).
    file_offset: u64,
    io_size: u64,
    device_bytes: u64,
    min_bs: [u64; 3],
    random: bool,
    writes: bool,
    /// A mixed job that writes (for `zbd_adjust_ddir`).
    mixed_writes: bool,
    depth: u32,
    pub(super) outstanding: u32,
    pub(super) steps: VecDeque<Step>,
    pub(super) retry: Option<HostRequest>,
    /// `convert` found nothing once without requests in flight
    /// (`should_retry` spent).
    retried: bool,
    /// Each request in flight: its zone (locked) and whether it is a write.
    in_flight: HashMap<u32, (Option<u32>, bool)>,
    next_tag: u32,
    pub(super) done: bool,
    /// A write was issued (fio's `last_start[DDIR_WRITE] != -1`).
    wrote: bool,
    /// The direction and end of the last read or write queued, from the
    /// job's offset (fio's `last_pos`, set after `zbd_adjust_block`).
    pub(super) last: Option<(usize, u64)>,
    /// Zone resets and finishes issued (fio's `nr_zone_resets`).
    pub(super) resets: u64,
    pub(super) finishes: u64,
}

impl ZbdJob {
    /// The job of a validated workload with `zbd` set.
    pub(super) fn new(cfg: &WorkloadConfig, logical_bytes: u64) -> ZbdJob {
        let opts = cfg.zbd.clone().expect("zbd");
        let min_bs = match &cfg.block_sizes {
            Some(b) => std::array::from_fn(|d| b.0[d].min()),
            None => [cfg.bs.0; 3],
        };
        ZbdJob {
            opts,
            dev: ZbdDevice::default(),
            id: 0,
            ready: false,
            min_zone: 0,
            max_zone: 0,
            file_offset: cfg.offset.0,
            io_size: cfg.span(logical_bytes),
            device_bytes: logical_bytes,
            min_bs,
            random: cfg.rw.is_random(),
            writes: matches!(
                cfg.rw,
                RwMode::Write | RwMode::RandWrite | RwMode::TrimWrite | RwMode::RandTrimWrite
            ) || (matches!(cfg.rw, RwMode::Rw | RwMode::RandRw) && cfg.rwmixread < 100),
            mixed_writes: matches!(cfg.rw, RwMode::Rw | RwMode::RandRw) && cfg.rwmixread < 100,
            depth: cfg.iodepth.max(1),
            outstanding: 0,
            steps: VecDeque::new(),
            retry: None,
            retried: false,
            in_flight: HashMap::new(),
            next_tag: 0,
            done: false,
            wrote: false,
            last: None,
            resets: 0,
            finishes: 0,
        }
    }

    /// Share `dev` with the other jobs on the device.
    pub(super) fn share(&mut self, dev: &ZbdDevice) {
        self.dev = dev.clone();
    }

    /// fio's `zbd_init_files` and `zbd_setup_files` for this job, from the
    /// device's zones when the run starts.
    pub(super) fn setup(&mut self, report: Option<&ZoneReport>) -> Result<(), SourceError> {
        let err = |reason: String| SourceError {
            location: "workload.zbd".into(),
            reason,
        };
        let mut guard = self.dev.0.lock().expect("zbd lock");
        if guard.is_none() {
            *guard = Some(make_dev(&self.opts, report, self.device_bytes).map_err(err)?);
        }
        let dev = guard.as_mut().expect("set");
        if let Some(r) = report {
            if self.opts.zonesize.0 > 0 && self.opts.zonesize.0 != r.zone_sectors * SECTOR {
                return Err(err(format!(
                    "zonesize {} does not match the device zone size {}",
                    self.opts.zonesize.0,
                    r.zone_sectors * SECTOR
                )));
            }
        }
        // `zbd_setup_files`: a job's own max_open_zones must be the
        // device's write-zone limit set by the first job.
        if self.opts.max_open_zones > 0 && self.opts.max_open_zones != dev.max_write_zones {
            return Err(err("different max_open_zones values among the jobs".into()));
        }
        let zs = dev.zone_size;
        // `zbd_zone_align_file_sizes`: a job's range is whole zones. A job
        // file's range was rounded as fio rounds it, before the generator
        // was built (`FioJob::resolve_zones` in the ssdsim crate); a
        // `[workload]` range that is not whole zones is refused here,
        // naming what fio would use.
        let end = self.file_offset + self.io_size;
        let read_only = !self.writes && !self.mixed_writes;
        if !self.file_offset.is_multiple_of(zs) || (!read_only && !end.is_multiple_of(zs)) {
            return Err(err(format!(
                "offset {} and size {} must be whole zones of {zs} bytes (fio rounds them: give \
                 offset={} size={})",
                self.file_offset,
                self.io_size,
                self.file_offset.div_ceil(zs) * zs,
                (end / zs * zs).saturating_sub(self.file_offset.div_ceil(zs) * zs)
            )));
        }
        if self.io_size < zs && !read_only {
            return Err(err(format!(
                "io_size must be at least one zone ({zs} bytes)"
            )));
        }
        let wmax = self.min_bs[1].max(self.min_bs[0]);
        if self.writes && wmax > zs {
            return Err(err(format!("I/O buflen {wmax} exceeds zone size {zs}")));
        }
        self.min_zone = dev.idx(self.file_offset);
        self.max_zone = if end >= dev.zones.len() as u64 * zs {
            dev.zones.len() as u32
        } else {
            (end / zs) as u32
        };
        if read_only {
            // A reading job's range ends at the last whole zone.
            self.max_zone = self.max_zone.max(self.min_zone + 1);
        }
        self.id = dev.in_flight.len() as u32;
        dev.in_flight.push(0);
        dev.job_write_zones.push(0);
        // `zbd_verify_and_set_vdb`.
        if self.opts.zone_reset_threshold > 0.0 && self.writes {
            match dev.write_range {
                None => {
                    dev.write_range = Some((self.min_zone, self.max_zone));
                    dev.vdb = (self.min_zone..self.max_zone)
                        .map(|z| &dev.zones[z as usize])
                        .filter(|z| z.has_wp)
                        .map(|z| z.wp - z.start)
                        .sum();
                }
                Some(r) if r != (self.min_zone, self.max_zone) => {
                    return Err(err(
                        "multi-jobs with different write ranges are not supported with \
                         zone_reset_threshold"
                            .into(),
                    ))
                }
                Some(_) => {}
            }
        }
        reset_write_cnt(dev, &self.opts);
        // Open (and, with an active limit, closed) zones of the range are
        // write zones at the start (`zbd_setup_files`).
        if self.writes && dev.max_write_zones > 0 {
            for zi in self.min_zone..self.max_zone {
                let z = &dev.zones[zi as usize];
                if !z.has_wp || z.write || !(z.wp > z.start && z.wp < z.cap_end()) {
                    continue;
                }
                if !write_zone_get(dev, &self.opts, self.id, zi) {
                    return Err(err(
                        "number of open zones exceeds the max_open_zones limit".into()
                    ));
                }
            }
        }
        drop(guard);
        self.ready = true;
        Ok(())
    }

    /// `zbd_adjust_ddir`: a mixed job's first request writes, so that
    /// there is data to read.
    pub(super) fn adjust_ddir(&self, op: IoOp) -> IoOp {
        if op == IoOp::Read && self.mixed_writes && !self.wrote && !self.opts.read_beyond_wp {
            IoOp::Write
        } else {
            op
        }
    }

    /// Whether the job can take its next step now (`None`: it waits).
    pub(super) fn next_step(&mut self) -> Option<Option<HostRequest>> {
        if !self.ready || self.outstanding >= self.depth {
            return None;
        }
        match self.steps.front().copied() {
            Some(Step::Quiesce) => {
                if self.outstanding > 0 {
                    return None;
                }
                self.steps.pop_front();
                Some(None)
            }
            Some(Step::Issue(mut r, zone)) => {
                self.steps.pop_front();
                r.tag = self.next_tag;
                self.next_tag = self.next_tag.wrapping_add(1);
                self.outstanding += 1;
                self.in_flight.insert(r.tag, (zone, r.op.writes_data()));
                self.dev
                    .0
                    .lock()
                    .expect("zbd lock")
                    .as_mut()
                    .expect("set")
                    .in_flight[self.id as usize] += 1;
                Some(Some(r))
            }
            None => Some(None),
        }
    }

    /// A request of the job completed (`zbd_put_io`, `zbd_end_zone_io`).
    pub(super) fn completed(&mut self, tag: u32) {
        self.outstanding = self.outstanding.saturating_sub(1);
        let Some((zone, write)) = self.in_flight.remove(&tag) else {
            return;
        };
        let mut g = self.dev.0.lock().expect("zbd lock");
        let dev = g.as_mut().expect("set");
        dev.in_flight[self.id as usize] -= 1;
        if let Some(z) = zone {
            if write && dev.zones[z as usize].remainder() == 0 {
                dev.write_zone_put(z);
            }
            let zone = &mut dev.zones[z as usize];
            if let Some((j, n)) = zone.lock.as_mut() {
                debug_assert_eq!(*j, self.id);
                *n -= 1;
                if *n == 0 {
                    zone.lock = None;
                }
            }
        }
    }

    /// fio's `zbd_adjust_block` for request `r` (its offset and length from
    /// the job's pattern): the steps it takes are queued.
    pub(super) fn adjust(&mut self, r: HostRequest) -> Adjusted {
        let dev_h = self.dev.clone();
        let mut g = dev_h.0.lock().expect("zbd lock");
        let dev = g.as_mut().expect("set");
        let d = match r.op {
            IoOp::Read => 0,
            IoOp::Write => 1,
            _ => 2,
        };
        let min_bs = self.min_bs[d];
        let mut off = r.lba * SECTOR;
        let mut len = r.bytes();
        let mut zb = dev.idx(off);
        // `setup_zbd_zone_mode`: a sequential write at a zone's capacity
        // goes on at the next zone.
        if r.op == IoOp::Write && !self.random {
            let z = &dev.zones[zb as usize];
            if z.has_wp && off >= z.cap_end() && off < dev.zone_end(zb) {
                off = dev.zone_end(zb);
                if off >= self.file_offset + self.io_size || zb + 1 >= dev.zones.len() as u32 {
                    return Adjusted::Eof;
                }
                zb += 1;
            }
        }
        let zb0 = zb;
        if !dev.zones[zb as usize].has_wp {
            // A conventional zone: writes must not cross into a
            // sequential one.
            if r.op == IoOp::Write {
                let next = zb as usize + 1;
                if next < dev.zones.len()
                    && dev.zones[next].has_wp
                    && off + len > dev.zones[next].start
                {
                    let nstart = dev.zones[next].start;
                    if off + min_bs > nstart {
                        off = dev.zones[zb as usize].start + nstart - off;
                        len = len.min(nstart - off);
                    } else {
                        len = nstart - off;
                    }
                    len = len / min_bs * min_bs;
                }
            }
            self.push(dev, r, off, len, None);
            return Adjusted::Go;
        }
        if r.op == IoOp::Read && self.opts.read_beyond_wp && !dev.zones[zb as usize].offline {
            self.push(dev, r, off, len, None);
            return Adjusted::Go;
        }
        if dev.locked_by_other(zb, self.id) {
            return Adjusted::Wait;
        }
        match r.op {
            IoOp::Read => {
                let z = &dev.zones[zb as usize];
                let mut range = if z.offline { 0 } else { z.wp - z.start };
                if range < min_bs || (!self.random && off + min_bs > z.wp) {
                    match self.find_zone(dev, min_bs, zb) {
                        FindZone::Found(n) => zb = n,
                        FindZone::Locked => return Adjusted::Wait,
                        FindZone::None => return Adjusted::Eof,
                    }
                    let z = &dev.zones[zb as usize];
                    range = z.wp - z.start;
                    if !self.random {
                        off = z.start;
                    }
                }
                let z = &dev.zones[zb as usize];
                let orig_start = dev.zones[zb0 as usize].start;
                if range <= len {
                    off = z.start;
                } else if self.random {
                    off = z.start + ((off - orig_start) % (range - len)) / min_bs * min_bs;
                }
                if z.has_wp {
                    let new_len = len.min(z.wp - off) / min_bs * min_bs;
                    len = new_len.min(len);
                }
                self.push(dev, r, off, len, Some(zb));
                Adjusted::Go
            }
            IoOp::Write => {
                let zb = loop {
                    let z = match self.convert(dev, off, zb) {
                        Ok(z) => z,
                        Err(a) => return a,
                    };
                    let rem = dev.zones[z as usize].remainder();
                    if rem > 0 && rem < min_bs {
                        zb = z;
                        continue;
                    }
                    break z;
                };
                self.retried = false;
                // The zone reset threshold (`zrt`, `zrf`).
                let mut reset = false;
                if self.opts.zone_reset_frequency > 0.0
                    && dev.vdb as f64 >= self.io_size as f64 * self.opts.zone_reset_threshold
                {
                    dev.write_cnt = dev.write_cnt.saturating_sub(1);
                    if dev.write_cnt == 0 {
                        reset_write_cnt(dev, &self.opts);
                        reset = true;
                    }
                }
                if reset || dev.zones[zb as usize].remainder() < min_bs {
                    // Writes before it complete, then the reset, alone.
                    self.steps.push_back(Step::Quiesce);
                    self.reset_zone(dev, zb, false);
                    self.steps.push_back(Step::Quiesce);
                }
                let z = &mut dev.zones[zb as usize];
                off = z.wp;
                let new_len = len.min(z.cap_end() - off) / min_bs * min_bs;
                if new_len < min_bs {
                    return Adjusted::Eof;
                }
                len = new_len;
                // `zbd_queue_io`: the write pointer moves when the write is
                // queued.
                if dev.write_range.is_some() && self.opts.zone_reset_threshold > 0.0 {
                    dev.vdb += len;
                }
                let z = &mut dev.zones[zb as usize];
                z.wp = off + len;
                self.wrote = true;
                self.push(dev, r, off, len, Some(zb));
                Adjusted::Go
            }
            _ => {
                // A trim is a zone reset of a non-empty zone
                // (`zbd_do_io_u_trim`).
                let z = &dev.zones[zb as usize];
                if self.random && z.wp <= z.start {
                    match self.find_zone(dev, 1, zb) {
                        FindZone::Found(n) => zb = n,
                        FindZone::Locked => return Adjusted::Wait,
                        FindZone::None => return Adjusted::Eof,
                    }
                } else if off != z.start {
                    return Adjusted::Eof;
                }
                self.reset_zone(dev, zb, true);
                Adjusted::Go
            }
        }
    }

    /// Queue `r` at `off` for `len` bytes, holding zone `zone`'s lock.
    fn push(&mut self, dev: &mut Dev, mut r: HostRequest, off: u64, len: u64, zone: Option<u32>) {
        r.lba = off / SECTOR;
        r.sectors = (len / SECTOR) as u32;
        match r.op {
            IoOp::Read => self.last = Some((0, (off + len).saturating_sub(self.file_offset))),
            IoOp::Write => self.last = Some((1, (off + len).saturating_sub(self.file_offset))),
            _ => {}
        }
        if let Some(z) = zone {
            lock_zone(dev, z, self.id);
        }
        self.steps.push_back(Step::Issue(r, zone));
    }

    /// `__zbd_reset_zone`: the write pointer back to the start and (on a
    /// zoned drive) a Zone Reset; for a trim (`zbd_reset_zone`, `trim`)
    /// also the zone out of the write-zone table. Before a write the zone
    /// stays in the table the write took it into.
    fn reset_zone(&mut self, dev: &mut Dev, zi: u32, trim: bool) {
        let z = &mut dev.zones[zi as usize];
        let data = z.wp - z.start;
        if data == 0 && !trim {
            return;
        }
        z.wp = z.start;
        let start = z.start;
        if dev.write_range.is_some() && self.opts.zone_reset_threshold > 0.0 {
            dev.vdb = dev.vdb.saturating_sub(data);
        }
        if trim {
            dev.write_zone_put(zi);
        }
        if data > 0 {
            self.resets += 1;
        }
        if dev.host_managed && data > 0 {
            self.zone_command(dev, IoOp::ZoneReset, zi, start);
        }
    }

    /// Queue zone command `op` on zone `zi` (first byte `start`), issued
    /// synchronously (`REQ_SYNC`, as `blkdev_zone_mgmt` issues it) and
    /// holding the zone's lock until it completes.
    fn zone_command(&mut self, dev: &mut Dev, op: IoOp, zi: u32, start: u64) {
        lock_zone(dev, zi, self.id);
        self.steps.push_back(Step::Issue(
            HostRequest {
                arrival: SimTime::ZERO,
                op,
                lba: start / SECTOR,
                sectors: 0,
                stream: 0,
                tag: 0,
                sync: true,
                placement: ssd_core::workload::Placement::NONE,
            },
            Some(zi),
        ));
    }

    /// `zbd_finish_zone`: the zone full, its remainder left unwritten.
    fn finish_zone(&mut self, dev: &mut Dev, zi: u32) {
        dev.write_zone_put(zi);
        let end = dev.zone_end(zi);
        let z = &mut dev.zones[zi as usize];
        let start = z.start;
        z.wp = end;
        self.finishes += 1;
        self.steps.push_back(Step::Quiesce);
        if dev.host_managed {
            self.zone_command(dev, IoOp::ZoneFinish, zi, start);
            self.steps.push_back(Step::Quiesce);
        }
    }

    /// `zbd_find_zone`: the nearest zone after `zb` (and, random, before
    /// it) with `min_bytes` written.
    fn find_zone(&self, dev: &Dev, min_bytes: u64, zb: u32) -> FindZone {
        let (zf, zl) = (self.min_zone as i64, self.max_zone as i64);
        let (mut z1, mut z2) = (zb as i64 + 1, zb as i64 - 1);
        while z1 < zl || z2 >= zf {
            if z1 < zl && !dev.zones[z1 as usize].offline {
                let z = &dev.zones[z1 as usize];
                if z.start + min_bytes <= z.wp || !z.has_wp {
                    if dev.locked_by_other(z1 as u32, self.id) {
                        return FindZone::Locked;
                    }
                    return FindZone::Found(z1 as u32);
                }
            } else if !self.random {
                break;
            }
            if self.random && z2 >= zf && !dev.zones[z2 as usize].offline {
                let z = &dev.zones[z2 as usize];
                if z.start + min_bytes <= z.wp || !z.has_wp {
                    if dev.locked_by_other(z2 as u32, self.id) {
                        return FindZone::Locked;
                    }
                    return FindZone::Found(z2 as u32);
                }
            }
            z1 += 1;
            z2 -= 1;
        }
        FindZone::None
    }

    /// `pick_random_zone_idx`: a quasi-random index into the write-zone
    /// table from the request's offset.
    fn pick_random_idx(&self, dev: &Dev, off: u64) -> usize {
        ((off.saturating_sub(self.file_offset) as u128 * dev.write_zones.len() as u128)
            / self.io_size.max(1) as u128) as usize
    }

    /// `zbd_pick_write_zone`: a write zone in the job's range, from the
    /// quasi-random index on.
    fn pick_write_zone(&self, dev: &Dev, off: u64) -> Option<u32> {
        let n = dev.write_zones.len();
        let mut i = self.pick_random_idx(dev, off);
        for _ in 0..n {
            if i >= n {
                i = 0;
            }
            let z = dev.write_zones[i];
            if self.min_zone <= z && z < self.max_zone {
                return Some(z);
            }
            i += 1;
        }
        None
    }

    /// `zbd_convert_to_write_zone`: the zone a write at `off` (in zone
    /// `zb`) goes to, added to the write-zone table; or what the job must
    /// do first.
    fn convert(&mut self, dev: &mut Dev, off: u64, mut zb: u32) -> Result<u32, Adjusted> {
        let min_bs = self.min_bs[1];
        // A zone left with less than a block is finished first.
        let rem = dev.zones[zb as usize].remainder();
        if rem > 0 && rem < min_bs {
            self.finish_zone(dev, zb);
            if zb + 1 >= self.max_zone && !self.random {
                return Err(Adjusted::Eof);
            }
            loop {
                zb += 1;
                if zb >= self.max_zone {
                    zb = self.min_zone;
                }
                if dev.zones[zb as usize].has_wp {
                    break;
                }
            }
            if dev.locked_by_other(zb, self.id) {
                return Err(Adjusted::Wait);
            }
        }
        if write_zone_get(dev, &self.opts, self.id, zb) {
            return Ok(zb);
        }
        let limited = dev.max_write_zones > 0 || self.opts.job_max_open_zones > 0;
        let mut zi = if limited {
            let i = self.pick_random_idx(dev, off);
            dev.write_zones.get(i).copied().unwrap_or(0)
        } else {
            dev.idx(off)
        };
        zi = zi.clamp(self.min_zone, self.max_zone - 1);
        let mut examine = true;
        loop {
            let z = &dev.zones[zi as usize];
            if z.has_wp {
                if dev.locked_by_other(zi, self.id) {
                    return Err(Adjusted::Wait);
                }
                if !z.offline && !limited {
                    break;
                }
                if dev.write_zones.is_empty() {
                    examine = false;
                    break;
                }
            }
            match self.pick_write_zone(dev, off) {
                None => return Err(Adjusted::Eof),
                Some(n) if n == zi => break,
                Some(n) => zi = n,
            }
        }
        if examine && dev.zones[zi as usize].remainder() >= min_bs {
            return Ok(zi);
        }
        // Choose another zone. With the table full, the job's writes in
        // flight complete first (they may take zones out of it).
        let full = dev.write_zones.len() as u32 == self.max_zone - self.min_zone
            || (dev.max_write_zones > 0 && dev.write_zones.len() as u32 == dev.max_write_zones)
            || (self.opts.job_max_open_zones > 0
                && dev.job_write_zones[self.id as usize] == self.opts.job_max_open_zones);
        if full && self.outstanding > 0 {
            return Err(Adjusted::Quiesce);
        }
        // A random write tries its own zone again.
        if self.random {
            if dev.locked_by_other(zb, self.id) {
                return Err(Adjusted::Wait);
            }
            if write_zone_get(dev, &self.opts, self.id, zb) {
                return Ok(zb);
            }
            zi = zb;
        }
        // The zones after it, wrapping.
        let n = self.io_size / dev.zone_size;
        for _ in 0..n {
            zi += 1;
            if zi >= self.max_zone {
                zi = self.min_zone;
            }
            let z = &dev.zones[zi as usize];
            if !z.has_wp || z.write {
                continue;
            }
            if dev.locked_by_other(zi, self.id) {
                return Err(Adjusted::Wait);
            }
            if write_zone_get(dev, &self.opts, self.id, zi) {
                return Ok(zi);
            }
        }
        // A write zone with room for the write.
        let table = dev.write_zones.clone();
        for z in table {
            if z < self.min_zone || z >= self.max_zone {
                continue;
            }
            if dev.locked_by_other(z, self.id) {
                continue;
            }
            if dev.zones[z as usize].remainder() >= min_bs
                && write_zone_get(dev, &self.opts, self.id, z)
            {
                return Ok(z);
            }
        }
        // Writes in flight may take zones out of the table: wait for them
        // and try again; with none, try once more (`should_retry`).
        if self.outstanding > 0 {
            return Err(Adjusted::Quiesce);
        }
        if dev.in_flight.iter().any(|&n| n > 0) {
            return Err(Adjusted::Wait);
        }
        if !self.retried {
            self.retried = true;
            return Err(Adjusted::Quiesce);
        }
        self.retried = false;
        // Every write zone has less than a block left: a random job
        // finishes one of them and goes on there (after its reset).
        if self.random {
            if let Some(z) = self.pick_write_zone(dev, off) {
                if dev.locked_by_other(z, self.id) {
                    return Err(Adjusted::Wait);
                }
                self.finish_zone(dev, z);
                return Ok(z);
            }
        }
        Err(Adjusted::Eof)
    }

    /// The `zbd` report section's part of this job.
    pub(super) fn report(&self) -> serde_json::Value {
        serde_json::json!({
            "zone_resets": self.resets,
            "zone_finishes": self.finishes,
        })
    }
}

enum FindZone {
    Found(u32),
    Locked,
    None,
}

/// Take zone `z`'s lock for one more request of `job`.
fn lock_zone(dev: &mut Dev, z: u32, job: u32) {
    let zone = &mut dev.zones[z as usize];
    match zone.lock.as_mut() {
        Some((j, n)) => {
            debug_assert_eq!(*j, job);
            *n += 1;
        }
        None => zone.lock = Some((job, 1)),
    }
}

/// `_zbd_reset_write_cnt`.
fn reset_write_cnt(dev: &mut Dev, o: &ZbdOptions) {
    dev.write_cnt = if o.zone_reset_frequency > 0.0 {
        (1.0 / o.zone_reset_frequency).min(u32::MAX as f64) as u32
    } else {
        u32::MAX
    };
}

/// `__zbd_write_zone_get`: zone `zi` is (made) a write zone of `job`, unless
/// the limits say no.
fn write_zone_get(dev: &mut Dev, o: &ZbdOptions, job: u32, zi: u32) -> bool {
    let z = &dev.zones[zi as usize];
    if z.offline {
        return false;
    }
    if dev.max_write_zones == 0 {
        return true;
    }
    if z.write {
        // A zone the writes in flight fill is full, not a write zone.
        return z.remainder() > 0;
    }
    if o.job_max_open_zones > 0 && dev.job_write_zones[job as usize] >= o.job_max_open_zones {
        return false;
    }
    if dev.write_zones.len() as u32 >= dev.max_write_zones {
        return false;
    }
    dev.write_zones.push(zi);
    dev.job_write_zones[job as usize] += 1;
    dev.zones[zi as usize].write = true;
    dev.zones[zi as usize].writer = job;
    true
}

/// The zone table of a device: its report's zones, or zones of
/// `zonesize` emulated over `end` bytes (`init_zone_info`).
fn make_dev(o: &ZbdOptions, report: Option<&ZoneReport>, end: u64) -> Result<Dev, String> {
    let (zone_size, zones, host_managed, dev_max_open) = match report {
        Some(r) => (
            r.zone_sectors * SECTOR,
            r.zones
                .iter()
                .map(|z| Zone {
                    start: z.start * SECTOR,
                    capacity: z.capacity * SECTOR,
                    wp: match z.state {
                        ZoneState::Full => (z.start + z.capacity) * SECTOR,
                        _ => z.wp * SECTOR,
                    },
                    has_wp: z.has_wp(),
                    offline: matches!(z.state, ZoneState::Offline | ZoneState::ReadOnly),
                    write: false,
                    writer: 0,
                    lock: None,
                })
                .collect::<Vec<_>>(),
            true,
            r.max_open_zones,
        ),
        None => {
            let zs = o.zonesize.0;
            if zs == 0 {
                return Err(
                    "a drive without zones needs zonesize for zonemode=zbd (fio emulates zones of \
                     that size)"
                        .into(),
                );
            }
            let cap = if o.zonecapacity.0 > 0 {
                o.zonecapacity.0
            } else {
                zs
            };
            if end < zs {
                return Err(format!(
                    "the device ({end} bytes) is smaller than the zone size {zs}"
                ));
            }
            let n = end.div_ceil(zs);
            (
                zs,
                (0..n)
                    .map(|i| Zone {
                        start: i * zs,
                        capacity: cap,
                        wp: i * zs,
                        has_wp: true,
                        offline: false,
                        write: false,
                        writer: 0,
                        lock: None,
                    })
                    .collect(),
                false,
                0,
            )
        }
    };
    if zones.is_empty() {
        return Err("the device reports no zones".into());
    }
    // `zbd_set_max_write_zones`.
    let max_write_zones = if !host_managed || o.ignore_zone_limits || dev_max_open == 0 {
        o.max_open_zones
    } else if o.max_open_zones == 0 {
        dev_max_open
    } else if o.max_open_zones <= dev_max_open {
        o.max_open_zones
    } else {
        return Err(format!(
            "max_open_zones ({}) is larger than the device's ({dev_max_open})",
            o.max_open_zones
        ));
    };
    if max_write_zones > ZBD_MAX_WRITE_ZONES {
        return Err(format!(
            "max_open_zones is larger than {ZBD_MAX_WRITE_ZONES}"
        ));
    }
    Ok(Dev {
        zone_size,
        zones,
        host_managed,
        max_write_zones,
        write_zones: Vec::new(),
        vdb: 0,
        write_cnt: 0,
        write_range: None,
        in_flight: Vec::new(),
        job_write_zones: Vec::new(),
    })
}
