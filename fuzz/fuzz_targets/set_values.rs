//! `--set FIELD=VALUE` (and the flags, which `run` applies the same way):
//! up to 8 lines of `FIELD=VALUE`, split and applied as `ssdsim run` does
//! (`apply_flag`, which sets a dotted field through `set_field`).
//!
//! Properties:
//! * no panic;
//! * an error on a dotted field names that field (or, for a preset, the
//!   preset), and nothing changes in the configuration;
//! * after a value is set, the configuration can still be echoed as TOML, and
//!   setting the field again to the value it now holds changes nothing;
//! * a configuration that validates at the end echoes as TOML that reads back
//!   to the same configuration.
#![no_main]

use libfuzzer_sys::fuzz_target;
use ssdsim_host::{config::ConfigError, SsdConfig};
use ssdsim::{apply_flag, set_field};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let mut cfg = SsdConfig::default();
    for line in text.lines().take(8) {
        let Some((k, v)) = line.split_once('=') else {
            continue;
        };
        let (k, v) = (k.trim(), v.trim());
        let before = cfg.clone();
        match apply_flag(&mut cfg, k, v) {
            Err(e) => {
                assert_eq!(
                    format!("{cfg:?}"),
                    format!("{before:?}"),
                    "a failed --set {k}={v} changed the configuration"
                );
                if k.contains('.') {
                    match &e {
                        ConfigError::Invalid { field, .. } => {
                            assert!(
                                field == k
                                    || (k.starts_with("personality.") && field == "personality.kind"),
                                "--set {k}={v}: the error names {field:?}: {e}"
                            )
                        }
                        ConfigError::UnknownPreset { .. } => {}
                        other => panic!("--set {k}={v}: {other}"),
                    }
                }
            }
            Ok(()) => {
                cfg.check_writable()
                    .unwrap_or_else(|e| panic!("--set {k}={v} leaves {e}"));
                if k.contains('.') {
                    resettable(&cfg, k);
                }
            }
        }
    }
    if cfg.validate().is_ok() {
        let t = cfg.to_toml();
        let back = SsdConfig::from_toml_over(None, &t, "echo")
            .unwrap_or_else(|e| panic!("the echo does not read back: {e}\n{t}"));
        assert_eq!(back.to_toml(), t, "the echo reads back as another configuration");
    }
});

/// Setting `field` to the value it holds (as a TOML literal) is a no-op.
fn resettable(cfg: &SsdConfig, field: &str) {
    let root = toml::Value::try_from(cfg).expect("checked writable");
    let mut cur = &root;
    for p in field.split('.') {
        match cur.get(p) {
            Some(v) => cur = v,
            None => return, // an optional field left unset
        }
    }
    let lit = cur.to_string();
    let mut again = cfg.clone();
    set_field(&mut again, field, &lit)
        .unwrap_or_else(|e| panic!("--set {field}={lit} (the value it holds) fails: {e}"));
    assert_eq!(
        toml::to_string(&again).ok(),
        toml::to_string(cfg).ok(),
        "--set {field}={lit} (the value it holds) changes the configuration"
    );
}
