//! The fio job-file parser (`ssdsim::fio::parse_str`).
//!
//! Properties:
//! * no panic;
//! * an error names the file and a line of it (1-based), and quotes briefly
//!   (its length does not grow with the input's);
//! * CRLF line ends read as LF ones;
//! * a job the parser accepts is one the configuration accepts: every check
//!   that does not depend on the device's capacity is made by the parser,
//!   which names the file and line (`validate` could only name the field).
#![no_main]

use libfuzzer_sys::fuzz_target;
use ssdsim_host::workload::WorkloadConfig;
use ssdsim_host::{config::ConfigError, SsdConfig};
use ssdsim::fio::parse_str;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let base = WorkloadConfig::default();
    let res = parse_str(text, "job.fio", &base);
    let crlf = text.replace("\r\n", "\n").replace('\n', "\r\n");
    // `str::lines` strips one `\r` before each `\n`: only LF-only inputs map
    // one to one.
    if !text.contains('\r') {
        assert_eq!(
            res,
            parse_str(&crlf, "job.fio", &base),
            "CRLF line ends change the result"
        );
    }
    let (mut w, job) = match res {
        Ok(x) => x,
        Err(e) => {
            assert_eq!(e.file, "job.fio");
            let lines = text.lines().count();
            assert!(
                e.line >= 1 && e.line <= lines,
                "error at line {} of {lines}: {}",
                e.line,
                e.reason
            );
            // Quoted text is clipped to 200 bytes (which escaping may widen):
            // an error's length does not grow with the input's.
            assert!(e.reason.len() <= 3000, "an error of {} bytes", e.reason.len());
            return;
        }
    };
    // The job ends as `ssdsim run --fio` ends it (its size, number_ios or
    // runtime on the default drive).
    let logical = SsdConfig::default()
        .validate()
        .expect("the default drive")
        .logical_bytes();
    job.resolve_end(&mut w, logical);
    let mut cfg = SsdConfig {
        workload: w,
        ..SsdConfig::default()
    };
    cfg.sim.ramp_time = job.ramp_time;
    if let Some(t) = job.time_limit() {
        cfg.sim.time_limit = Some(t);
    }
    if let Err(e) = cfg.validate() {
        let capacity = matches!(
            &e,
            ConfigError::Invalid { field, .. }
                if matches!(
                    field.as_str(),
                    // Each depends on the drive's capacity (the span): an
                    // alignment past it, files of less than a block, a
                    // random map too large.
                    "workload.offset"
                        | "workload.size"
                        | "workload.blockalign"
                        | "workload.nrfiles"
                        | "workload.norandommap"
                )
        );
        assert!(capacity, "the fio parser accepts a job the config refuses: {e}");
    } else {
        let t = cfg.to_toml();
        let back = SsdConfig::from_toml_over(None, &t, "echo").expect("the echo reads back");
        assert_eq!(back.to_toml(), t);
    }
});
