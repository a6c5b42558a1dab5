//! Helpers of the host's tests, on the engine's request protocol only
//! (`ssd_core`), so that the crate's unit tests include them by path too.

use ssd_core::units::SimTime;
use ssd_core::workload::{HostEvent, HostRequest, IoOp, RequestSource, SourceError, Timing};
use std::cell::RefCell;
use std::rc::Rc;

/// The requests a source handed the device: (op, first sector, sectors).
pub type Sent = Rc<RefCell<Vec<HostRequest>>>;

/// A source that logs every request it hands the device, and is
/// otherwise the source it wraps (`.0`).
pub struct Logged<S>(pub S, pub Sent);

impl<S: RequestSource> Logged<S> {
    fn log(&self, r: &Option<Result<HostRequest, SourceError>>) {
        if let Some(Ok(q)) = r {
            self.1.borrow_mut().push(*q);
        }
    }
}

impl<S: RequestSource> RequestSource for Logged<S> {
    fn timing(&self) -> Timing {
        self.0.timing()
    }
    fn next_request(&mut self) -> Option<Result<HostRequest, SourceError>> {
        let r = self.0.next_request();
        self.log(&r);
        r
    }
    fn notes(&self) -> Vec<(String, u64)> {
        self.0.notes()
    }
    fn poll(&mut self, now: SimTime) -> Option<Result<HostRequest, SourceError>> {
        let r = self.0.poll(now);
        self.log(&r);
        r
    }
    fn event(&mut self, ev: HostEvent, now: SimTime) {
        self.0.event(ev, now)
    }
    fn wake_at(&self) -> Option<SimTime> {
        self.0.wake_at()
    }
    fn finished(&self) -> bool {
        self.0.finished()
    }
    fn report_sections(&self, end: SimTime) -> Vec<(String, serde_json::Value)> {
        self.0.report_sections(end)
    }
    fn ramp_over(&mut self, now: SimTime, in_flight: u64) {
        self.0.ramp_over(now, in_flight)
    }
    fn stop(&mut self, now: SimTime) {
        self.0.stop(now)
    }
}

/// Of the requests `sent`, the 4 KiB pages written in `[lo, hi)` (pages).
pub fn pages_written(sent: &Sent, lo: u64, hi: u64) -> u64 {
    sent.borrow()
        .iter()
        .filter(|e| e.op == IoOp::Write)
        .map(|e| {
            let (a, b) = (e.lba / 8, (e.lba + e.sectors as u64).div_ceil(8));
            b.min(hi).saturating_sub(a.max(lo))
        })
        .sum()
}
