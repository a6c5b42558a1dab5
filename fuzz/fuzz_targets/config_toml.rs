//! The TOML configuration: `SsdConfig::from_toml_over` then `validate`.
//!
//! Properties:
//! * no panic (in parsing, validating, or echoing the configuration);
//! * an error is not empty, and a field error names its field;
//! * a valid configuration is echoed (`to_toml`, as `--print-config` and every
//!   report do) as TOML that reads back to the same configuration, which is
//!   valid again and derives the same settings.
#![no_main]

use libfuzzer_sys::fuzz_target;
use ssdsim_host::{config::ConfigError, SsdConfig};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let c = match SsdConfig::from_toml_over(None, text, "fuzz.toml") {
        Ok(c) => c,
        Err(e) => {
            check_err(&e);
            return;
        }
    };
    let s = match c.validate() {
        Ok(s) => s,
        Err(e) => {
            check_err(&e);
            return;
        }
    };
    assert!(s.logical_pages > 0);
    assert!(s.logical_pages <= s.geometry.total_pages());
    let t = c.to_toml();
    let back = SsdConfig::from_toml_over(None, &t, "echo")
        .unwrap_or_else(|e| panic!("the echo does not read back: {e}\n{t}"));
    assert_eq!(back.to_toml(), t, "the echo reads back as another configuration");
    let s2 = back
        .validate()
        .unwrap_or_else(|e| panic!("the echo is not valid: {e}\n{t}"));
    assert_eq!(s2.logical_pages, s.logical_pages);
    assert_eq!(s2.bus, s.bus);
    assert_eq!(s2.link, s.link);
});

fn check_err(e: &ConfigError) {
    assert!(!e.to_string().is_empty());
    if let ConfigError::Invalid { field, reason } = e {
        assert!(!field.is_empty() && !reason.is_empty(), "{e}");
    }
}
