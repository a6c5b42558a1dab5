//! The cache's report sections.

use super::*;

impl<S: AppSource> PageCache<S> {
    /// Tenant `k`'s `app` section: its calls.
    pub(super) fn app_section(&self, k: usize) -> serde_json::Value {
        let s = &self.tenants[k].stats;
        let start = self.tenants[k]
            .start
            .or(self.start)
            .unwrap_or(SimTime::ZERO);
        let secs = s.last_end.max(start).since(start).secs_f64();
        let lat: Vec<LatencySummary> = s.lat.iter().map(|h| h.summary()).collect();
        let calls: u64 = lat.iter().map(|l| l.count).sum();
        let per_s = |n: u64| if secs > 0.0 { n as f64 / secs } else { 0.0 };
        serde_json::json!({
            "calls": calls,
            "reads": lat[0].count,
            "writes": lat[1].count,
            "trims": lat[2].count,
            "fsyncs": lat[3].count,
            "bytes_read": s.bytes_read,
            "bytes_written": s.bytes_written,
            "bytes_trimmed": s.bytes_trimmed,
            "time_s": secs,
            "cpu_s": s.cpu_ns as f64 * 1e-9,
            "iops": per_s(calls - lat[3].count),
            "mbps": if secs > 0.0 { (s.bytes_read + s.bytes_written) as f64 / secs / 1e6 } else { 0.0 },
            "latency_us": {
                "read": lat[0],
                "write": lat[1],
                "trim": lat[2],
                "fsync": lat[3],
            },
        })
    }

    /// The report's `page_cache` and `host_cpu` sections: the host's,
    /// whichever tenants it serves.
    pub fn sections(&self) -> Vec<(String, serde_json::Value)> {
        let s = &self.stats;
        let start = self.start.unwrap_or(SimTime::ZERO);
        let app_end = s.last_end.max(start);
        // What the applications wrote, every tenant's.
        let (bytes_written, dio_written) = self.tenants.iter().fold((0, 0), |(b, d), t| {
            (b + t.stats.bytes_written, d + t.stats.dio_written)
        });
        let reasons = |a: &[u64; 5]| {
            let mut v = serde_json::json!({
                "background": a[WB_BACKGROUND],
                "periodic": a[WB_PERIODIC],
                "fsync": a[WB_FSYNC],
                "sync_write": a[WB_SYNC_WRITE],
            });
            if self.bdp.is_some() {
                v["balance_dirty_pages"] = a[WB_BALANCE].into();
            }
            v
        };
        let wb_pages: u64 = s.wb_pages.iter().sum();
        let wb_reqs: u64 = s.wb_requests.iter().sum();
        let looked = s.hits + s.misses;
        vec![
            (
                "page_cache".to_string(),
                serde_json::json!({
                    "size_bytes": self.plan.cache,
                    "memory": {
                        "ram_bytes": self.plan.ram,
                        "kernel_bytes": self.plan.kernel,
                        "free_reserve_bytes": self.plan.reserve,
                        "application_bytes": self.plan.application,
                        "dirtyable_bytes": self.plan.dirtyable,
                    },
                    "background_thresh_pages": self.plan.background_pages,
                    "dirty_thresh_pages": self.plan.dirty_pages,
                    "hits": s.hits,
                    "misses": s.misses,
                    "hit_ratio": if looked > 0 { s.hits as f64 / looked as f64 } else { 0.0 },
                    "read_requests": s.read_requests,
                    "read_pages": s.read_pages,
                    "readahead_pages": s.readahead_pages,
                    "rmw_reads": s.rmw_reads,
                    "evictions": s.evictions,
                    "dirty_max_pages": s.dirty_max,
                    "writeback": {
                        "pages": wb_pages,
                        "requests": wb_reqs,
                        "pages_per_request": if wb_reqs > 0 { wb_pages as f64 / wb_reqs as f64 } else { 0.0 },
                        "pages_by_reason": reasons(&s.wb_pages),
                        "requests_by_reason": reasons(&s.wb_requests),
                    },
                    "flushes": s.flushes,
                    "trims": s.trims,
                    "throttled": {
                        "count": s.throttled,
                        "total_s": s.throttle_ns as f64 * 1e-9,
                        "mean_us": if s.throttled > 0 { s.throttle_ns as f64 / s.throttled as f64 / 1e3 } else { 0.0 },
                        "max_us": s.throttle_max_ns as f64 / 1e3,
                        // A current kernel's estimates at the end (MB/s):
                        // the device's write bandwidth and its dirty rate
                        // limit (null on 2.6.35).
                        "write_bandwidth_mbps": self.ioless.as_ref().map(|w| w.avg_write_bandwidth() as f64 * PAGE as f64 / 1e6),
                        "dirty_ratelimit_mbps": self.ioless.as_ref().map(|w| w.dirty_ratelimit() as f64 * PAGE as f64 / 1e6),
                    },
                    "reclaim_waits": s.reclaim_waits,
                    // What unlinks dropped: pages, of which dirty (never
                    // written) and waited for (I/O in flight).
                    "unlinks": s.unlinks,
                    "unlink_pages_dropped": s.unlink_pages,
                    "unlink_dirty_pages_dropped": s.unlink_dirty_pages,
                    "unlink_pages_waited_for": s.unlink_waited_pages,
                    "metadata_pages_dirtied": s.metadata_pages,
                    "metadata_pages_written": s.metadata_written,
                    "fs_direct_pages_written": s.fs_written,
                    "fs_direct_pages_read": s.fs_read,
                    "fs_flushes": s.fs_flushes,
                    "fs_thread_commits": s.commits,
                    "fsync_commit_waits": s.commit_waits,
                    // Bytes the host wrote to the device (writeback and a
                    // file system's own writes) per byte the application
                    // wrote: what the file system and the cache add.
                    "direct_io_bytes_read": self.tenants.iter().map(|t| t.stats.dio_read).sum::<u64>(),
                    "direct_io_bytes_written": dio_written,
                    "host_write_amplification": if bytes_written > 0 {
                        ((wb_pages + s.fs_written) * PAGE + dio_written) as f64
                            / bytes_written as f64
                    } else {
                        0.0
                    },
                    "dirty_at_end_bytes": self.nr_dirty() * PAGE,
                    "writeback_at_end_bytes": self.nr_wb * PAGE,
                }),
            ),
            (
                "host_cpu".to_string(),
                self.cores.report(&self.cpu, start, app_end),
            ),
        ]
    }
}
