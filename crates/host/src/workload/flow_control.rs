//! fio's flow control between jobs (`flow.c`): jobs with the same
//! `flow_id` share a counter of their requests, and a job of weight `flow`
//! may issue its next request only while its own count over the shared one
//! is at most its weight over the group's total weight
//! (`flow_threshold_exceeded`). A job held back issues nothing until the
//! others have caught up (fio loops; with `flow_sleep` it waits for its
//! requests in flight and sleeps that long first). A job joins its group
//! when it starts (`flow_init_job`) and leaves it, taking its count and
//! weight away, when it ends (`flow_exit_job`).

use super::*;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// fio's `FLOW_MAX_WEIGHT`.
pub const FLOW_MAX_WEIGHT: u32 = 1000;

/// The flow groups of one run (fio's `flow_list`), shared by its jobs.
#[derive(Clone, Default)]
pub struct FlowGroups(Arc<Mutex<HashMap<u32, Group>>>);

impl std::fmt::Debug for FlowGroups {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("FlowGroups")
    }
}

/// fio's `fio_flow`.
#[derive(Debug)]
struct Group {
    counter: u64,
    total_weight: u64,
}

/// One job's part in its flow group.
pub(super) struct FlowJob {
    groups: FlowGroups,
    id: u32,
    weight: u32,
    counter: u64,
    joined: bool,
    left: bool,
    /// fio's `flow_sleep`.
    pub(super) sleep: Dur,
}

impl FlowJob {
    /// The job of a workload with `flow` set.
    pub(super) fn new(cfg: &WorkloadConfig) -> FlowJob {
        FlowJob {
            groups: FlowGroups::default(),
            id: cfg.flow_id,
            weight: cfg.flow,
            counter: 0,
            joined: false,
            left: false,
            sleep: cfg.flow_sleep,
        }
    }

    /// Share the run's groups.
    pub(super) fn share(&mut self, g: &FlowGroups) {
        self.groups = g.clone();
    }

    /// `flow_init_job` (at the job's first request) and
    /// `flow_threshold_exceeded`: whether the job is held back now; if not,
    /// its request is counted.
    pub(super) fn held_back(&mut self) -> bool {
        let mut g = self.groups.0.lock().expect("flow lock");
        let grp = g.entry(self.id).or_insert(Group {
            counter: 1,
            total_weight: 0,
        });
        if !self.joined {
            self.joined = true;
            grp.total_weight += self.weight as u64;
        }
        // counter / shared > weight / total, in integers.
        if self.counter as u128 * grp.total_weight as u128
            > self.weight as u128 * grp.counter as u128
        {
            return true;
        }
        grp.counter += 1;
        self.counter += 1;
        false
    }

    /// `flow_exit_job`: the job's count and weight leave the group.
    pub(super) fn leave(&mut self) {
        if !self.joined || self.left {
            return;
        }
        self.left = true;
        let mut g = self.groups.0.lock().expect("flow lock");
        if let Some(grp) = g.get_mut(&self.id) {
            grp.counter -= self.counter;
            grp.total_weight -= self.weight as u64;
        }
    }
}
