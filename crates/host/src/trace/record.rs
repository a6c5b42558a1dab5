//! Recording the block stream a run hands the block layer, in one of the
//! trace formats (`ssdsim trace record`, `run --record-trace`): what a
//! file-level run's page cache and file system sent the device, to replay
//! elsewhere.

use super::{write_header, write_record, Op, Record, TraceFormat, WriteError, WriteState};
use crate::workload::{AppSource, HostEvent, HostRequest, RequestSource, SourceError, Timing};
use ssd_core::units::SimTime;
use std::io::Write;

/// A source that writes every request it hands out as a trace record, at
/// the time it is submitted: a timed source's arrival, a reactive source's
/// poll time, a closed-loop source's submission by the engine
/// ([`RequestSource::submitted`]: the time a slot of the loop was free), so
/// that replaying the trace open-loop submits the same requests at the same
/// times.
pub struct Recorder<S: RequestSource> {
    inner: S,
    /// The inner source is closed-loop: its requests are written when the
    /// engine submits them, not when it reads them (ahead).
    closed: bool,
    out: Box<dyn Write + Send>,
    fmt: TraceFormat,
    st: WriteState,
    records: u64,
    /// Requests the format cannot represent (a flush in a format without
    /// one), skipped and counted.
    skipped: u64,
    /// The first write error: the run stops on it.
    error: Option<String>,
    label: String,
}

impl<S: RequestSource> Recorder<S> {
    /// Record `inner`'s requests in `fmt` on `out` (`label` names it in
    /// errors).
    pub fn new(
        inner: S,
        mut out: Box<dyn Write + Send>,
        fmt: TraceFormat,
        label: &str,
    ) -> Result<Self, String> {
        write_header(fmt, &mut out).map_err(|e| format!("{label}: {e}"))?;
        Ok(Recorder {
            closed: matches!(inner.timing(), Timing::ClosedLoop { .. }),
            inner,
            out,
            fmt,
            st: WriteState::default(),
            records: 0,
            skipped: 0,
            error: None,
            label: label.to_string(),
        })
    }

    /// Records written so far.
    pub fn records(&self) -> u64 {
        self.records
    }

    /// Flush the output; the first error of the run, if any.
    pub fn finish(&mut self) -> Result<u64, String> {
        if let Some(e) = self.error.take() {
            return Err(e);
        }
        self.out
            .flush()
            .map_err(|e| format!("{}: {e}", self.label))?;
        Ok(self.records)
    }

    fn record(&mut self, r: &HostRequest, at: SimTime) {
        if self.error.is_some() {
            return;
        }
        let rec = Record {
            time_ns: at.0,
            op: Op::from(r.op),
            offset: r.lba * 512,
            size: r.bytes(),
            device: 0,
            stream: r.stream,
            sync: r.sync,
        };
        match write_record(self.fmt, &mut self.out, &rec, &mut self.st) {
            Ok(()) => self.records += 1,
            Err(WriteError::Unrepresentable(_)) if rec.op == Op::Flush => self.skipped += 1,
            Err(WriteError::Unrepresentable(what)) => {
                self.error = Some(format!("{}: {} cannot hold {what}", self.label, self.fmt))
            }
            Err(WriteError::Io(e)) => self.error = Some(format!("{}: {e}", self.label)),
        }
    }

    /// The recording failed: the run's source reports it as an error.
    fn failed(&mut self) -> Option<Result<HostRequest, SourceError>> {
        self.error.take().map(|reason| {
            Err(SourceError {
                location: self.label.clone(),
                reason,
            })
        })
    }
}

impl<S: RequestSource> RequestSource for Recorder<S> {
    fn timing(&self) -> Timing {
        self.inner.timing()
    }
    fn next_request(&mut self) -> Option<Result<HostRequest, SourceError>> {
        let r = self.inner.next_request();
        if let Some(Ok(q)) = &r {
            // A closed loop's request has no time yet: it is written when
            // the engine submits it (`submitted`).
            if !self.closed {
                self.record(q, q.arrival);
            }
        }
        match self.failed() {
            Some(e) => Some(e),
            None => r,
        }
    }
    fn submitted(&mut self, r: &HostRequest) {
        if self.closed {
            self.record(r, r.arrival);
        }
        self.inner.submitted(r)
    }
    fn notes(&self) -> Vec<(String, u64)> {
        let mut v = self.inner.notes();
        v.push(("trace_records_written".into(), self.records));
        if self.skipped > 0 {
            v.push((
                format!("trace_flushes_not_representable_in_{}", self.fmt),
                self.skipped,
            ));
        }
        v
    }
    fn poll(&mut self, now: SimTime) -> Option<Result<HostRequest, SourceError>> {
        let r = self.inner.poll(now);
        if let Some(Ok(q)) = &r {
            self.record(q, now);
        }
        match self.failed() {
            Some(e) => Some(e),
            None => r,
        }
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
    fn zones(
        &mut self,
        report: Option<&crate::workload::ZoneReport>,
    ) -> Result<(), crate::workload::SourceError> {
        self.inner.zones(report)
    }
}

impl<S: AppSource> AppSource for Recorder<S> {
    fn clock(&mut self, now: SimTime) {
        self.inner.clock(now)
    }
    fn more_follow(&self) -> bool {
        self.inner.more_follow()
    }
    fn call_extras(&self) -> crate::workload::CallExtras {
        self.inner.call_extras()
    }
    fn fsync_io(&mut self, ino: u32, now: SimTime) -> crate::workload::FsyncIo {
        self.inner.fsync_io(ino, now)
    }
    fn commit_io(&mut self, now: SimTime) -> Option<crate::workload::FsyncIo> {
        self.inner.commit_io(now)
    }
    fn commit_done(&mut self, now: SimTime) {
        self.inner.commit_done(now)
    }
    fn committed(&self, tid: u64) -> bool {
        self.inner.committed(tid)
    }
    fn journal_stream(&self) -> u32 {
        self.inner.journal_stream()
    }
    fn take_commit(&mut self) -> bool {
        self.inner.take_commit()
    }
    fn memory(&self) -> u64 {
        self.inner.memory()
    }
    fn host_report(&self, host: &crate::workload::HostRun) -> Vec<(String, serde_json::Value)> {
        self.inner.host_report(host)
    }
    fn place(
        &mut self,
        ino: u32,
        index: u64,
        n: u32,
        now: SimTime,
        out: &mut Vec<crate::workload::FilePiece>,
    ) {
        self.inner.place(ino, index, n, now, out)
    }
    fn locate(&mut self, ino: u32, index: u64, n: u32, out: &mut Vec<crate::workload::FilePiece>) {
        self.inner.locate(ino, index, n, out)
    }
    fn file_pages(&self, ino: u32) -> u64 {
        self.inner.file_pages(ino)
    }
    fn background_writeback(&self, ino: u32) -> bool {
        self.inner.background_writeback(ino)
    }
    fn write_tag(&self, dev: u64, pages: u32) -> crate::workload::WriteTag {
        self.inner.write_tag(dev, pages)
    }
}
