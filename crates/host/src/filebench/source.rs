//! [`FileBench`] as the page cache's application: the request protocol
//! ([`RequestSource`]) and the page cache's questions ([`AppSource`]:
//! fsync's and the journal's I/O, the file set's memory, the IO Summary).

use super::*;

impl RequestSource for FileBench {
    fn timing(&self) -> Timing {
        // The file system's thread, if it has background work, is one more.
        Timing::ClosedLoop {
            depth: self.threads.len() as u32 + u32::from(self.fs.next_tick().is_some()),
        }
    }
    fn next_request(&mut self) -> Option<Result<HostRequest, SourceError>> {
        // The file system's thread is the kernel's: its calls never wait
        // behind the application's preallocation.
        if let Some((r, more, extras)) = self.daemon.pop_front().or_else(|| self.pre.pop_front()) {
            self.quiet = 0;
            (self.last_more, self.last_extras) = (more, extras);
            return Some(Ok(r));
        }
        // Metadata and file-system calls and unlinks are not application
        // calls: they do not count against `calls`.
        loop {
            let t = self.next_thread;
            if let Some((r, more, extras)) = self.threads[t].pending.pop_front() {
                if r.tag != METADATA_INO && r.tag != FS_INO && !extras.unlink {
                    // A call's pieces count once, as its last one; the
                    // thread keeps its turn until its call is handed out.
                    if !more {
                        if self.issued >= self.p.calls {
                            self.threads[t].pending.push_front((r, more, extras));
                            return None;
                        }
                        self.issued += 1;
                        self.next_thread = (t + 1) % self.threads.len();
                    }
                }
                if !extras.unlink {
                    self.quiet = 0;
                }
                let mut extras = extras;
                // directio: the flowop's data reads and writes bypass the
                // cache (its metadata and the file system's own I/O do not).
                // F2FS on a zoned drive writes O_DIRECT data through the
                // cache, so that its log serializes every write
                // (`f2fs_force_buffered_io`).
                let buffered = r.op == IoOp::Write && self.fs.buffers_direct_writes();
                extras.direct = self.p.direct
                    && !extras.unlink
                    && !buffered
                    && crate::pagecache::is_file(r.tag)
                    && matches!(r.op, IoOp::Read | IoOp::Write);
                (self.last_more, self.last_extras) = (more, extras);
                return Some(Ok(r));
            }
            if self.issued >= self.p.calls {
                return None;
            }
            let blocked = self.step(t);
            if !blocked {
                self.stats.flowops += 1;
            }
            if blocked {
                // Blocked on a semaphore (oltp): the next thread's turn.
                self.stats.sem_waits += 1;
                self.next_thread = (t + 1) % self.threads.len();
            }
            // Blocked, or a flowop without I/O (open, close, stat, a skip,
            // a delete that is only its unlink): the thread goes on to its
            // next one (after handing out the unlink).
            if blocked || self.threads[t].pending.iter().all(|x| x.2.unlink) {
                self.quiet += 1;
                if self.quiet > 100_000 {
                    let reason = if blocked {
                        "every oltp thread waits on a semaphore"
                    } else {
                        "the file-level flows make no I/O (every flowop skipped: is the file set empty or the device full?)"
                    };
                    return Some(Err(SourceError {
                        location: "personality".into(),
                        reason: reason.into(),
                    }));
                }
                continue;
            }
        }
    }
    fn notes(&self) -> Vec<(String, u64)> {
        let s = &self.stats;
        let mut v: Vec<(String, u64)> = vec![
            ("filebench_creates".into(), s.creates),
            ("filebench_deletes".into(), s.deletes),
            ("filebench_appends".into(), s.appends),
            ("filebench_whole_file_reads".into(), s.whole_reads),
            ("filebench_whole_file_writes".into(), s.whole_writes),
            ("filebench_fsyncs".into(), s.fsyncs),
            ("filebench_stats".into(), s.stats),
            ("filebench_flowops".into(), s.flowops),
            ("filebench_flowops_skipped".into(), s.skipped),
            (
                "filebench_flowops_skipped_no_space".into(),
                s.skipped_no_space,
            ),
            (
                "filebench_flowops_skipped_no_file".into(),
                s.skipped_no_file,
            ),
            (
                "filebench_flowops_skipped_no_open_file".into(),
                s.skipped_no_open_file,
            ),
            ("filebench_metadata_writes".into(), s.metadata_writes),
            ("filebench_prealloc_calls".into(), s.prealloc_calls),
            ("filebench_fs_calls".into(), s.fs_calls),
        ];
        if self.p.kind == PersonalityKind::Oltp {
            v.extend([
                ("filebench_shadow_reads".into(), s.shadow_reads),
                ("filebench_db_writes".into(), s.db_writes),
                ("filebench_log_writes".into(), s.log_writes),
                ("filebench_semaphore_waits".into(), s.sem_waits),
            ]);
        }
        v
    }
    fn ramp_over(&mut self, _now: SimTime, _in_flight: u64) {
        // Filebench's stats_clear: the IO Summary counts from here.
        self.io_at_ramp = self.io;
    }
    fn report_sections(&self, _end: SimTime) -> Vec<(String, serde_json::Value)> {
        let mut st = self.fs.stats();
        (
            st.aged_files_created,
            st.aged_files_deleted,
            st.aged_blocks_in_use,
        ) = self.aged;
        vec![(
            "file_system".into(),
            serde_json::to_value(st).unwrap_or_default(),
        )]
    }
}

impl AppSource for FileBench {
    fn more_follow(&self) -> bool {
        self.last_more
    }
    fn call_extras(&self) -> CallExtras {
        self.last_extras
    }
    fn clock(&mut self, now: SimTime) {
        self.now = now;
        if self.fs.next_tick().is_some_and(|t| t <= now) {
            self.fs.tick(now, &mut self.calls);
            let mut out = VecDeque::new();
            let stream = self.daemon_stream();
            // The calls are the file system's, on no file.
            let base = self.base;
            for c in self.calls.drain(..) {
                assert!(!c.is_data(), "background work moves no file data here");
                if c == FsCall::Commit {
                    self.commit_asked = true;
                    continue;
                }
                let r = Self::request_of(base, c, stream, FS_INO);
                self.stats.fs_calls += u64::from(r.tag == FS_INO);
                out.push_back((r, false, CallExtras::default()));
            }
            self.daemon.extend(out);
        }
    }
    fn fsync_io(&mut self, ino: u32, now: SimTime) -> FsyncIo {
        if ino == 0 || ino > self.files.len() as u32 {
            return FsyncIo::default();
        }
        let io = self.fs.fsync(ino - 1, now);
        self.commit_asked |= io.wait.is_some_and(|w| w.start) || self.fs.work_pending();
        self.in_pages(io)
    }
    fn commit_io(&mut self, now: SimTime) -> Option<FsyncIo> {
        let io = self.fs.commit_io(now)?;
        Some(self.in_pages(io))
    }
    fn commit_done(&mut self, now: SimTime) {
        self.fs.commit_done(now);
        // More rounds of the file system's own work: another commit call.
        self.commit_asked |= self.fs.work_pending();
    }
    fn committed(&self, tid: u64) -> bool {
        self.fs.committed(tid)
    }
    fn journal_stream(&self) -> u32 {
        self.daemon_stream()
    }
    fn take_commit(&mut self) -> bool {
        std::mem::take(&mut self.commit_asked)
    }
    /// Each Filebench thread allocates its `memsize` and touches it
    /// (`threadflow_init` in threadflow.c: `malloc` then `memset`):
    /// `memsize=10m` in varmail.f, fileserver.f and webserver.f,
    /// `$memperthread` (1m) for every oltp.f thread.
    /// Filebench 1.4.9's IO Summary (`stats_snap` in stats.c) of the
    /// measured span: every I/O flowop counted (open, close, create,
    /// delete, stat and fsync included) as it is made, ops/s over the
    /// span, the reading and writing flowops per second, MiB/s of their
    /// bytes, and the host's CPU (user and system, not interrupts) and the
    /// flowops' summed latency each divided by the reading and writing
    /// flowops, as Filebench divides them. `line` is Filebench's own.
    fn host_report(&self, host: &crate::workload::HostRun) -> Vec<(String, serde_json::Value)> {
        let io = IoCounts {
            ops: self.io.ops - self.io_at_ramp.ops,
            reads: self.io.reads - self.io_at_ramp.reads,
            writes: self.io.writes - self.io_at_ramp.writes,
            bytes: self.io.bytes - self.io_at_ramp.bytes,
        };
        let secs = host.secs;
        let per_s = |n: f64| if secs > 0.0 { n / secs } else { 0.0 };
        let rw = (io.reads + io.writes) as f64;
        let per_rw = |n: f64| if rw > 0.0 { n / rw } else { 0.0 };
        let ops_s = per_s(io.ops as f64);
        let (r_s, w_s) = (per_s(io.reads as f64), per_s(io.writes as f64));
        let mb_s = per_s(io.bytes as f64 / 1048576.0);
        let cpu_us = per_rw(host.cpu_ns as f64 / 1e3);
        let lat_ms = per_rw(host.latency_ns as f64 / 1e6);
        let line = format!(
            "IO Summary: {:5} ops, {ops_s:5.3} ops/s, ({r_s:.0}/{w_s:.0} r/w), {mb_s:5.1}mb/s, {cpu_us:6.0}us cpu/op, {lat_ms:5.1}ms latency",
            io.ops
        );
        vec![(
            "filebench".into(),
            serde_json::json!({
                "io_summary": {
                    "ops": io.ops,
                    "ops_per_s": ops_s,
                    "reads": io.reads,
                    "writes": io.writes,
                    "reads_per_s": r_s,
                    "writes_per_s": w_s,
                    "mb_per_s": mb_s,
                    "cpu_us_per_op": cpu_us,
                    "latency_ms": lat_ms,
                    "line": line,
                }
            }),
        )]
    }
    /// The file system places the file's pages (inode `ino` is entry
    /// `ino - 1`) on the device; its blocks are the device's from `base`.
    fn place(
        &mut self,
        ino: u32,
        index: u64,
        n: u32,
        now: SimTime,
        out: &mut Vec<crate::workload::FilePiece>,
    ) {
        if ino == 0 || ino > self.files.len() as u32 {
            return;
        }
        let mut runs = Vec::new();
        self.fs.place(ino - 1, index, n, now, &mut runs);
        self.pieces(runs, out);
    }
    fn locate(&mut self, ino: u32, index: u64, n: u32, out: &mut Vec<crate::workload::FilePiece>) {
        if ino == 0 || ino > self.files.len() as u32 {
            return;
        }
        let mut runs = Vec::new();
        self.fs.locate(ino - 1, index, n, &mut runs);
        self.pieces(runs, out);
    }
    fn background_writeback(&self, ino: u32) -> bool {
        !crate::pagecache::is_file(ino) || self.fs.writes_in_background()
    }
    /// The file system's tag of a write (its blocks are the device's from
    /// `base`).
    fn write_tag(&self, dev: u64, pages: u32) -> crate::workload::WriteTag {
        match dev.checked_sub(self.base) {
            Some(block) => self.fs.write_tag(block, pages),
            None => crate::workload::WriteTag::default(),
        }
    }
    fn file_pages(&self, ino: u32) -> u64 {
        if ino == 0 || ino > self.files.len() as u32 {
            return 0;
        }
        self.fs.size(ino - 1).div_ceil(crate::fs::BLOCK)
    }
    fn memory(&self) -> u64 {
        let memsize = match self.params().kind {
            PersonalityKind::Oltp => OLTP_MEMSIZE,
            PersonalityKind::Randomwrite => RANDOMWRITE_MEMSIZE,
            _ => MEMSIZE,
        };
        (self.threads.len() as u64).saturating_mul(memsize)
    }
}

impl FileBench {
    /// The file system's runs (file block, its block, blocks) as the
    /// device's pages: its block 0 is the device's `base`.
    fn pieces(&self, runs: Vec<(u64, u64, u32)>, out: &mut Vec<crate::workload::FilePiece>) {
        let base = self.base;
        out.extend(
            runs.into_iter()
                .map(|(index, block, pages)| crate::workload::FilePiece {
                    index,
                    dev: base + block,
                    pages,
                    joins: self.fs.bios_by_block() && !self.fs.splits_at(block),
                }),
        );
    }
}
