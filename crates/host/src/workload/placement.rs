//! Data placement from the host: which placement identifier (PID) each
//! write carries on a drive with Flexible Data Placement (`ftl.fdp`).
//!
//! Two sources of PIDs, one mechanism ([`Placed`], a source adapter that
//! tags the writes of the source it wraps):
//! - a fio-style job's `[workload.fdp]` (fio's `fdp=1` or
//!   `dataplacement=fdp`, `plids`/`fdp_pli`, `plid_select`/`fdp_pli_select`),
//!   with fio's semantics (dataplacement.c, `dp_init`,
//!   `dp_fill_dspec_data`): `plids` are indices into the device's placement
//!   identifier list as its Reclaim Unit Handle Status reports it (all of
//!   them, at most 128, when none are given); each write takes the next one
//!   round robin, or one drawn uniformly (`random`); reads and trims carry
//!   none;
//! - a tenant's own handle: `[[flow]]`'s `placement = N` gives every write of
//!   the flow the PID at index N of that list (a tenant per handle, as an
//!   FDP-aware host gives each application or VM its own).
//!
//! The device's list is ordered by placement handle, then by reclaim group
//! ([`ssd_core::config::FdpConfig::pid_list`]), so with one reclaim group
//! index N is placement handle N.

use super::{
    HostEvent, HostRequest, IoOp, Placement, RequestSource, SourceError, Timing, ZoneReport,
};
use rand::Rng;
use serde::{Deserialize, Serialize};
use ssd_core::config::FdpConfig;
use ssd_core::error::{invalid, ConfigError};
use ssd_core::rng::{SimRng, SimRngExt};
use ssd_core::units::SimTime;

/// fio's `plid_select` (`fdp_pli_select`): how a job picks the next
/// placement identifier among its `plids`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PlidSelect {
    /// The next one in order, wrapping (fio's default, `FIO_DP_RR`).
    #[default]
    RoundRobin,
    /// One drawn uniformly for each write (`FIO_DP_RANDOM`).
    Random,
}

/// A fio-style job's data placement (`[workload.fdp]`: fio's `fdp=1`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DataPlacement {
    /// fio's `plids` (`fdp_pli`): indices into the device's placement
    /// identifier list (a job file's sorted, as fio's `str_fdp_pli_cb`
    /// sorts them); empty: the whole list (at most its first 128).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub plids: Vec<u16>,
    /// fio's `plid_select` (`fdp_pli_select`).
    #[serde(default)]
    pub plid_select: PlidSelect,
}

/// fio's `FIO_MAX_DP_IDS`: the placement IDs a job may name.
pub const MAX_DP_IDS: usize = 128;

impl DataPlacement {
    /// The PIDs the job's writes carry on a drive of FDP configuration
    /// `fdp`, in the order fio keeps them (fio's `init_ruh_info`).
    pub fn pids(&self, fdp: &FdpConfig) -> Vec<u16> {
        let list = fdp.pid_list();
        if self.plids.is_empty() {
            list.into_iter().take(MAX_DP_IDS).collect()
        } else {
            self.plids.iter().map(|&i| list[i as usize]).collect()
        }
    }

    /// The job's rules on its own: at most 128 indices (`str_fdp_pli_cb`).
    pub fn validate(&self) -> Result<(), ConfigError> {
        if self.plids.len() > MAX_DP_IDS {
            return Err(invalid(
                "workload.fdp.plids",
                format!(
                    "fio takes at most {MAX_DP_IDS} placement IDs, got {}",
                    self.plids.len()
                ),
            ));
        }
        Ok(())
    }
}

impl super::WorkloadConfig {
    /// The placement's own rules: a job's writes carry PIDs only as
    /// passthrough commands (fio's FDP engines, `io_uring_cmd` and `xnvme`,
    /// send NVMe commands to the device's character device: no page cache).
    pub(super) fn validate_placement(&self) -> Result<(), ConfigError> {
        let Some(dp) = &self.fdp else {
            return Ok(());
        };
        dp.validate()?;
        if !self.direct {
            return Err(invalid(
                "workload.fdp",
                "placement identifiers travel on NVMe passthrough commands (fio's io_uring_cmd and xnvme engines), which bypass the page cache: set direct = true",
            ));
        }
        Ok(())
    }
}

/// The rules between a source's placement and the drive (`field`: the
/// setting's name): the drive must have FDP (fio's `fdp_fetch_ruhs` fails
/// on a drive without it), and each index must be in the device's list
/// (fio: "PID index %d must be smaller than %d").
pub fn check_indices(field: &str, indices: &[u16], fdp: &FdpConfig) -> Result<(), ConfigError> {
    if !fdp.enabled {
        return Err(invalid(
            field,
            "places writes by placement identifier, but the drive has no Flexible Data Placement: set ftl.fdp = true",
        ));
    }
    let n = fdp.pid_list().len();
    if let Some(&i) = indices.iter().find(|&&i| i as usize >= n) {
        return Err(invalid(
            field,
            format!(
                "placement ID index {i} must be smaller than {n} (the drive's {} handles x {} reclaim groups)",
                fdp.handles, fdp.groups
            ),
        ));
    }
    Ok(())
}

/// A source whose writes carry placement identifiers (see the module docs):
/// every other request, and everything else of the source, passes through.
#[derive(Debug)]
pub struct Placed<S> {
    inner: S,
    pids: Vec<u16>,
    select: PlidSelect,
    /// fio's `pli_loc`: the round robin's next index.
    loc: usize,
    /// fio's `fdp_state`: the random choice's own stream.
    rng: SimRng,
}

impl<S: RequestSource> Placed<S> {
    /// Tag the writes of `inner` with `pids` as `select` says; `seed` is the
    /// source's (the random choice draws from its own stream of it).
    pub fn new(inner: S, pids: Vec<u16>, select: PlidSelect, seed: u64) -> Placed<S> {
        assert!(!pids.is_empty(), "a placement needs a placement ID");
        Placed {
            inner,
            pids,
            select,
            loc: 0,
            rng: SimRng::from_seed_label(seed, "fdp"),
        }
    }

    /// The source whose writes are tagged.
    pub fn inner(&self) -> &S {
        &self.inner
    }

    /// The source whose writes are tagged, to change.
    pub fn inner_mut(&mut self) -> &mut S {
        &mut self.inner
    }

    /// fio's `dp_fill_dspec_data`: a write gets the next PID; anything
    /// else none.
    #[inline]
    fn place(
        &mut self,
        r: Option<Result<HostRequest, SourceError>>,
    ) -> Option<Result<HostRequest, SourceError>> {
        let mut r = r?;
        if let Ok(q) = &mut r {
            if q.op == IoOp::Write {
                let i = match self.select {
                    PlidSelect::RoundRobin => {
                        if self.loc >= self.pids.len() {
                            self.loc = 0;
                        }
                        self.loc += 1;
                        self.loc - 1
                    }
                    PlidSelect::Random => self.rng.gen_range(0..self.pids.len()),
                };
                q.placement = Placement::pid(self.pids[i]);
            }
        }
        Some(r)
    }
}

impl<S: RequestSource> RequestSource for Placed<S> {
    fn timing(&self) -> Timing {
        self.inner.timing()
    }
    fn next_request(&mut self) -> Option<Result<HostRequest, SourceError>> {
        let r = self.inner.next_request();
        self.place(r)
    }
    fn notes(&self) -> Vec<(String, u64)> {
        self.inner.notes()
    }
    fn submitted(&mut self, r: &HostRequest) {
        self.inner.submitted(r)
    }
    fn poll(&mut self, now: SimTime) -> Option<Result<HostRequest, SourceError>> {
        let r = self.inner.poll(now);
        self.place(r)
    }
    fn event(&mut self, ev: HostEvent, now: SimTime) {
        self.inner.event(ev, now)
    }
    fn wake_at(&self) -> Option<SimTime> {
        self.inner.wake_at()
    }
    fn finished(&self) -> bool {
        self.inner.finished()
    }
    fn report_sections(&self, end: SimTime) -> Vec<(String, serde_json::Value)> {
        self.inner.report_sections(end)
    }
    fn ramp_over(&mut self, now: SimTime, in_flight: u64) {
        self.inner.ramp_over(now, in_flight)
    }
    fn shared_sections(&self, end: SimTime) -> Vec<(String, serde_json::Value)> {
        self.inner.shared_sections(end)
    }
    fn shared_ramp_over(&mut self, now: SimTime) {
        self.inner.shared_ramp_over(now)
    }
    fn stop(&mut self, now: SimTime) {
        self.inner.stop(now)
    }
    fn zones(&mut self, report: Option<&ZoneReport>) -> Result<(), SourceError> {
        self.inner.zones(report)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::VecSource;

    fn reqs() -> Vec<HostRequest> {
        (0..8)
            .map(|i| HostRequest {
                arrival: SimTime::ZERO,
                op: if i % 4 == 3 { IoOp::Read } else { IoOp::Write },
                lba: i * 8,
                sectors: 8,
                stream: 0,
                tag: 0,
                sync: false,
                placement: Placement::NONE,
            })
            .collect()
    }

    fn pids(select: PlidSelect, list: Vec<u16>) -> Vec<Option<u16>> {
        let src = VecSource::new(reqs(), Timing::ClosedLoop { depth: 1 });
        let mut p = Placed::new(src, list, select, 7);
        std::iter::from_fn(|| p.next_request())
            .map(|r| r.unwrap().placement.get())
            .collect()
    }

    #[test]
    fn round_robin_walks_the_list_and_reads_carry_none() {
        assert_eq!(
            pids(PlidSelect::RoundRobin, vec![4, 6]),
            vec![
                Some(4),
                Some(6),
                Some(4),
                None,
                Some(6),
                Some(4),
                Some(6),
                None
            ]
        );
    }

    #[test]
    fn random_draws_from_the_list_the_same_way_each_run() {
        let a = pids(PlidSelect::Random, vec![1, 2, 3]);
        assert_eq!(a, pids(PlidSelect::Random, vec![1, 2, 3]));
        assert!(a.iter().flatten().all(|p| (1..=3).contains(p)));
        assert_eq!(a[3], None);
    }

    #[test]
    fn indices_map_to_the_devices_list_by_handle_then_group() {
        let fdp = FdpConfig {
            enabled: true,
            groups: 2,
            handles: 3,
            ..FdpConfig::default()
        };
        let dp = DataPlacement {
            plids: vec![1, 4],
            plid_select: PlidSelect::RoundRobin,
        };
        // List: (ph 0, rg 0), (0, 1), (1, 0), (1, 1), (2, 0), (2, 1).
        assert_eq!(dp.pids(&fdp), vec![0x8000, 2]);
        assert!(check_indices("workload.fdp.plids", &[5], &fdp).is_ok());
        let e = check_indices("workload.fdp.plids", &[6], &fdp).unwrap_err();
        assert!(e.to_string().contains("must be smaller than 6"), "{e}");
        let off = FdpConfig::default();
        let e = check_indices("flow.0.placement", &[0], &off).unwrap_err();
        assert!(e.to_string().contains("ftl.fdp = true"), "{e}");
    }
}
