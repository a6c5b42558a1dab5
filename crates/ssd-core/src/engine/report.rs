//! Report assembly: busy times at a cut point, per-flow flash accounting,
//! the final `Report`.

use super::*;

/// Busy nanoseconds per die and channel, of the CPU and of the host link.
#[derive(Debug)]
pub(super) struct BusyTimes {
    pub(super) dies: Vec<u64>,
    pub(super) chans: Vec<u64>,
    pub(super) cpu: u64,
    pub(super) link: u64,
}

/// Flash programs by flow (tenant), for per-flow write amplification. Each
/// logical page belongs to the flow that last wrote it (in split space, to
/// the flow whose range holds it, from the start: the preconditioning's
/// data too); a program of the page's data, the host's own or a copy by GC,
/// a merge or wear levelling, counts against its owner. Translation pages
/// belong to no flow.
#[derive(Default)]
pub(super) struct FlowFlash {
    /// Per logical page: its owner's slot plus one (0: no flow).
    pub(super) owner: Vec<u8>,
    /// Per flow slot: host pages written, programs of its data by the host
    /// path, programs that relocated its data.
    pub(super) host_pages: Vec<u64>,
    pub(super) programs: Vec<u64>,
    pub(super) relocations: Vec<u64>,
    /// Relocations of data no flow owns.
    pub(super) unowned_relocations: u64,
}

impl FlowFlash {
    pub(super) fn new(s: &Settings) -> FlowFlash {
        let (c, logical_pages) = (&s.config, s.logical_pages);
        let page = s.geometry.page_size as u64;
        let n = s.block.flows;
        if n == 0 {
            return FlowFlash::default();
        }
        let mut owner = vec![0u8; logical_pages as usize];
        if c.sim.flow_space == crate::workload::FlowSpace::Split {
            let logical = logical_pages * page;
            for i in 0..n {
                let (s, e) = crate::workload::flow_range(c.sim.flow_space, i, n, logical, page);
                let per = page / SECTOR;
                owner[(s / per) as usize..(e / per) as usize].fill(i as u8 + 1);
            }
        }
        FlowFlash {
            owner,
            host_pages: vec![0; n],
            programs: vec![0; n],
            relocations: vec![0; n],
            unowned_relocations: 0,
        }
    }

    /// The counts start again (the ramp is over); the owners stay.
    pub(super) fn restart(&mut self) {
        for v in [
            &mut self.host_pages,
            &mut self.programs,
            &mut self.relocations,
        ] {
            v.fill(0);
        }
        self.unowned_relocations = 0;
    }

    /// A host write of `n` pages from `first` by the flow of `stream`.
    #[cold]
    #[inline(never)]
    pub(super) fn written(&mut self, first: u64, n: u32, stream: u32) {
        let f = crate::workload::flow_of(stream).min(self.host_pages.len() - 1);
        self.host_pages[f] += n as u64;
        let end = (first + n as u64).min(self.owner.len() as u64);
        if first < end {
            self.owner[first as usize..end as usize].fill(f as u8 + 1);
        }
    }

    /// The programs of a plan, against their data's owners.
    #[cold]
    #[inline(never)]
    pub(super) fn count(&mut self, ops: &[crate::ftl::FlashOp]) {
        for op in ops {
            if op.kind != OpKind::Program || op.lpn == crate::ftl::NO_LPN {
                continue;
            }
            let o = self.owner.get(op.lpn as usize).copied().unwrap_or(0);
            match (o, op.purpose) {
                (0, Purpose::Host) => {}
                (0, _) => self.unowned_relocations += 1,
                (o, Purpose::Host) => self.programs[o as usize - 1] += 1,
                (o, _) => self.relocations[o as usize - 1] += 1,
            }
        }
    }

    /// Add each flow's flash figures to its entry of the `flows` section.
    pub(super) fn report(
        &self,
        extra: &mut std::collections::BTreeMap<String, serde_json::Value>,
        notes: &mut std::collections::BTreeMap<String, u64>,
    ) {
        let Some(serde_json::Value::Array(flows)) = extra.get_mut("flows") else {
            return;
        };
        for f in flows {
            let Some(i) = f["slot"].as_u64().map(|i| i as usize) else {
                continue;
            };
            if i >= self.host_pages.len() {
                continue;
            }
            let (h, p, r) = (self.host_pages[i], self.programs[i], self.relocations[i]);
            f["host_pages_written"] = h.into();
            f["flash_programs"] = p.into();
            f["relocations"] = r.into();
            // A flow that wrote nothing has no WAF (null), not 0.
            f["waf"] = if h > 0 {
                ((p + r) as f64 / h as f64).into()
            } else {
                serde_json::Value::Null
            };
        }
        if self.unowned_relocations > 0 {
            notes.insert(
                "flow_relocations_of_unowned_data".to_string(),
                self.unowned_relocations,
            );
        }
    }
}

/// The measured phase's statistics beside `Simulation::counters` and
/// `Simulation::lat` (the public ones), and where the phase begins and
/// ends: what the report is built from.
pub(super) struct PhaseStats {
    /// When the measured phase began (a `restart`, the end of the ramp).
    pub(super) start: SimTime,
    /// When the ramp (`sim.ramp_time`) ends and the statistics start; MAX
    /// when there is none or it is over.
    pub(super) ramp_end: SimTime,
    /// The last host completion.
    pub(super) last_done: SimTime,
    /// The FTL's statistics when the phase began.
    pub(super) ftl_before: FtlStats,
    /// The FTL's work of the phase (cycles and DRAM accesses by kind).
    pub(super) work: FtlWork,
    /// Busy nanoseconds of the CPU and of the host link.
    pub(super) cpu_ns: u64,
    pub(super) link_ns: u64,
    /// Batches that used the cache register: programs whose data-in
    /// overlapped the program before them, reads whose page was clocked
    /// out from it.
    pub(super) cache_counts: [u64; 2],
    /// With flows: who owns each logical page's data, and what each flow
    /// cost the flash ([`FlowFlash`]). Empty without flows.
    pub(super) flow_flash: FlowFlash,
    /// What preconditioning did.
    pub(super) pre: PreconditionOutcome,
    /// The report's notes (`run.notes`) the engine adds.
    pub(super) notes: std::collections::BTreeMap<&'static str, u64>,
    /// The drain (`sim.drain`) has begun, and how long it took.
    pub(super) draining: bool,
    pub(super) drain_ns: u64,
    /// Busy time of dies, channels, CPU and host link up to the drain start
    /// (the measured phase's end): utilization covers the measured phase only.
    pub(super) busy_at_drain: Option<BusyTimes>,
}

impl PhaseStats {
    pub(super) fn new(settings: &Settings) -> PhaseStats {
        PhaseStats {
            start: SimTime::ZERO,
            ramp_end: settings
                .config
                .sim
                .ramp_time
                .map_or(SimTime(u64::MAX), |r| SimTime(r.0)),
            last_done: SimTime::ZERO,
            ftl_before: FtlStats::default(),
            work: FtlWork::default(),
            cpu_ns: 0,
            link_ns: 0,
            cache_counts: [0; 2],
            flow_flash: FlowFlash::new(settings),
            pre: PreconditionOutcome::default(),
            notes: Default::default(),
            draining: false,
            drain_ns: 0,
            busy_at_drain: None,
        }
    }

    /// The phase's counts start again at `at` (the flows' page owners stay).
    pub(super) fn restart(&mut self, at: SimTime) {
        self.flow_flash.restart();
        self.cache_counts = [0; 2];
        self.work = FtlWork::default();
        self.cpu_ns = 0;
        self.link_ns = 0;
        self.start = at;
        self.last_done = at;
    }

    /// The report's note `k`, 0 if new.
    pub(super) fn note(&mut self, k: &'static str) -> &mut u64 {
        self.notes.entry(k).or_insert(0)
    }
}

impl<F: Ftl, S: RequestSource, Q: IoScheduler, O: Observer, H: Hardware> Simulation<F, S, Q, O, H> {
    /// Busy time of every die, channel, the CPU and the host link up to
    /// `cut` (not after `now`): what is booked or running past it is left out.
    pub(super) fn busy_until_cut(&self, cut: SimTime) -> BusyTimes {
        let past = |t: SimTime| t.0.saturating_sub(cut.0);
        let (dies, chans) = self.fl.busy_until_cut(cut);
        BusyTimes {
            dies,
            chans,
            // Saturating: `restart` zeroes the counters, not what is booked.
            cpu: self.stats.cpu_ns.saturating_sub(past(self.ctl.cpu_free)),
            link: self.stats.link_ns.saturating_sub(past(self.ctl.link_free)),
        }
    }

    #[allow(clippy::field_reassign_with_default)]
    pub(super) fn report(&self, end: SimTime, wall: f64) -> Report {
        let g = self.settings.geometry;
        let c = &self.settings.config;
        let echo = self.settings.echo.echo(c);
        let k = &self.counters;
        let span = end.since(self.stats.start);
        let secs = span.secs_f64();
        let mut r = Report::default();
        r.host = HostReport {
            requests: k.requests,
            reads: k.reads,
            writes: k.writes,
            trims: k.trims,
            flushes: k.flushes,
            bytes_read: k.bytes_read,
            bytes_written: k.bytes_written,
            bytes_trimmed: k.bytes_trimmed,
            zone_mgmt: k.zone_mgmt,
            failed: k.failed,
            sim_time_s: secs,
            iops: if secs > 0.0 {
                k.requests as f64 / secs
            } else {
                0.0
            },
            mbps: if secs > 0.0 {
                (k.bytes_read + k.bytes_written) as f64 / secs / 1e6
            } else {
                0.0
            },
        };
        r.latency_us = LatencyReport {
            all: self.lat.all().summary(),
            read: self.lat.read.summary(),
            write: self.lat.write.summary(),
        };
        let (mn, mx, mean, std) = erase_stats(self.flash.erase_counts());
        let mut by = std::collections::BTreeMap::new();
        for (ki, kname) in ["read", "program", "erase"].iter().enumerate() {
            let mut m = std::collections::BTreeMap::new();
            for p in Purpose::ALL {
                m.insert(p.name().to_string(), k.flash_ops[ki][p.index()]);
            }
            by.insert(kname.to_string(), m);
        }
        let programs = k.flash_total(OpKind::Program);
        r.flash = FlashReport {
            page_reads: k.flash_total(OpKind::Read),
            page_programs: programs,
            block_erases: k.flash_total(OpKind::Erase),
            gc_page_copies: k.flash_ops[OpKind::Program as usize][Purpose::Gc.index()],
            waf: (k.host_pages_written > 0).then(|| programs as f64 / k.host_pages_written as f64),
            erase_count_min: mn,
            erase_count_max: mx,
            erase_count_mean: mean,
            erase_count_std: std,
            by_purpose: by,
            multiplane_batches: k.multiplane_batches,
            joined_translation_reads: k.joined_translation_reads,
        };
        let mut st = self.ftl.stats().minus(&self.stats.ftl_before);
        // The FTL counts the translation reads it plans; those that joined a
        // read in flight never reached the flash.
        st.translation_reads = st
            .translation_reads
            .saturating_sub(k.joined_translation_reads);
        let w = &self.stats.work;
        let ftl_cycles = self.hw.ctrl.cycles(w, false);
        r.ftl = FtlReport {
            kind: self.ftl.name().to_string(),
            mapping_table_bytes: self.ftl.mapping_table_bytes(),
            logical_pages: self.ftl.logical_pages(),
            stats: st,
            cpu_s: self.hw.ctrl.cycle_time(ftl_cycles).secs_f64(),
            dram_accesses: w.dram_total(),
            write_buffer_hits: k.wbuf_hits,
            write_buffer_evictions: k.wbuf_evictions,
            read_buffer_hits: k.read_buffer_hits,
        };
        r.sched = SchedReport {
            kind: self.sched.name().to_string(),
            merged: k.merged,
            dispatched: k.dispatched,
            mean_queue_time_us: if k.dispatched > 0 {
                k.queue_time_ns as f64 / k.dispatched as f64 / 1e3
            } else {
                0.0
            },
            max_queue_time_us: k.max_queue_time_ns as f64 / 1e3,
            read_queue_time_us: QueueTimeSummary::new(
                k.dispatched_dir[0],
                k.queue_time_dir_ns[0],
                k.max_queue_time_dir_ns[0],
            ),
            write_queue_time_us: QueueTimeSummary::new(
                k.dispatched_dir[1],
                k.queue_time_dir_ns[1],
                k.max_queue_time_dir_ns[1],
            ),
            blocked: {
                let q = QueueTimeSummary::new(k.blocked, k.blocked_ns, k.max_blocked_ns);
                SleepSummary {
                    count: q.dispatched,
                    mean_us: q.mean,
                    max_us: q.max,
                }
            },
            plugged: k.plugged,
            plug_flushes: k.plug_flushes,
            zone_plugged: k.zone_plugged,
            dispatch_batches: k.dispatch_batches,
            requests_per_batch_mean: if k.dispatch_batches > 0 {
                k.dispatched as f64 / k.dispatch_batches as f64
            } else {
                0.0
            },
            requests_per_batch_max: k.max_batch,
            queue_depth: {
                // The stretch since the last change, up to the end.
                let len = self.sched.len() as u64;
                let dt = end.0.saturating_sub(self.front.qd_since.0);
                let span = end.0.saturating_sub(self.stats.start.0);
                let mut hist = k.qd_hist;
                hist[qd_bucket(len)] += dt;
                let busy: u64 = hist[1..].iter().sum();
                hist[0] = span.saturating_sub(busy);
                QueueDepthSummary::new(k.qd_area + len as u128 * dt as u128, &hist, k.qd_max, span)
            },
        };
        let frac = |ns: u64| {
            if span.0 > 0 {
                ns as f64 / span.0 as f64
            } else {
                0.0
            }
        };
        let totals;
        let busy = match &self.stats.busy_at_drain {
            Some(b) => b,
            None => {
                let (dies, chans) = self.fl.busy_now(self.now);
                totals = BusyTimes {
                    dies,
                    chans,
                    cpu: self.stats.cpu_ns,
                    link: self.stats.link_ns,
                };
                &totals
            }
        };
        r.utilization = UtilizationReport {
            channels: busy.chans.iter().map(|&ns| frac(ns)).sum::<f64>() / g.channels as f64,
            dies: busy.dies.iter().map(|&ns| frac(ns)).sum::<f64>() / g.total_dies() as f64,
            cpu: frac(busy.cpu),
            host_link: frac(busy.link),
        };
        r.run = RunReport {
            events: k.events,
            wall_s: wall,
            precondition_wall_s: self.stats.pre.wall_s,
            precondition: format!("{:?}", c.sim.precondition).to_lowercase(),
            precondition_pages: self.stats.pre.random_pages,
            precondition_waf: self.stats.pre.final_waf,
            precondition_steady: self.stats.pre.steady,
            seed: c.sim.seed,
            precondition_seed: c.sim.precondition_seed(),
            config_hash: echo.toml_hash,
            drain_s: Dur(self.stats.drain_ns).secs_f64(),
            version: env!("CARGO_PKG_VERSION").to_string(),
        };
        for (name, n) in &self.stats.notes {
            r.notes.insert(name.to_string(), *n);
        }
        for (name, n) in self.src.notes() {
            r.notes.insert(name, n);
        }
        for (name, v) in self.src.report_sections(end) {
            r.extra.insert(name, v);
        }
        self.stats.flow_flash.report(&mut r.extra, &mut r.notes);
        for (name, n) in self.ftl.notes() {
            r.notes.insert(name.to_string(), n);
        }
        if let Some((name, v)) = self.ftl.report_section() {
            r.extra.insert(name.to_string(), v);
        }
        // The mapping table (or DFTL's cache and directory) and the write
        // buffer live in DRAM: a configuration whose DRAM cannot hold them is
        // simulated as given, and said to be so.
        let dram_need = self.ftl.mapping_table_bytes() + c.dram.write_buffer.0;
        let dram_cap = self.settings.dram_bytes().unwrap_or(dram_need);
        if dram_need > dram_cap {
            r.notes.insert(
                "dram_capacity_exceeded_bytes".to_string(),
                dram_need - dram_cap,
            );
        }
        if c.dram.capacity == crate::config::DramCapacity::Fit {
            r.notes
                .insert("dram_capacity_fit_bytes".to_string(), dram_cap);
        }
        let mut nand = self.hw.nand.report();
        if self.consts.suspend_on {
            let v = nand.get_or_insert_with(|| serde_json::json!({}));
            v["suspensions"] = serde_json::json!(self.counters.suspensions);
        }
        if self.consts.cache.any() {
            let v = nand.get_or_insert_with(|| serde_json::json!({}));
            self.cache_report(v);
        }
        if let Some(v) = nand {
            r.extra
                .insert("hardware".into(), serde_json::json!({ "nand": v }));
        }
        r.config = echo.json;
        r
    }
}
