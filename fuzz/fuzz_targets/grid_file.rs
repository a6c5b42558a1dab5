//! Grid files (`ssdsim sweep --grid`): `GridFile::parse_str`, then what the
//! sweep command does with one: `[base]` merged over the default device, the
//! axes of `[grid]`, the named workloads, and the grid's points expanded.
//!
//! Properties:
//! * no panic;
//! * every axis has a non-empty key and at least one value;
//! * a grid of at most 16 points expands to exactly its points, in order,
//!   each either a configuration that validates and echoes as TOML that reads
//!   back to it, or an error that says why;
//! * expansion is deterministic (the same seeds and the same sweep identity).
#![no_main]

use libfuzzer_sys::fuzz_target;
use ssdsim_host::SsdConfig;
use ssdsim::sweep::{expand, grid_size, standard_workload_defs, GridFile, WorkloadDef};
use std::collections::BTreeMap;
use std::path::Path;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let g = match GridFile::parse_str(text, "grid.toml") {
        Ok(g) => g,
        Err(e) => {
            assert!(e.starts_with("grid.toml: "), "{e}");
            return;
        }
    };
    let mut base = SsdConfig::default();
    if let Some(b) = g.base_nested() {
        let Ok(t) = toml::to_string(&b) else {
            return;
        };
        base = match SsdConfig::from_toml_over(Some(base), &t, "grid.toml") {
            Ok(c) => c,
            Err(e) => {
                assert!(!e.to_string().is_empty());
                return;
            }
        };
    }
    let mut workloads: BTreeMap<String, WorkloadDef> = standard_workload_defs();
    workloads.extend(g.workload_defs());
    let axes = match g.axes(Path::new("grid.toml")) {
        Ok(a) => a,
        Err(e) => {
            assert!(e.starts_with("grid.toml: "), "{e}");
            return;
        }
    };
    for a in &axes {
        assert!(!a.key.is_empty() && !a.values.is_empty(), "{a:?}");
    }
    let Ok(n) = grid_size(&axes) else {
        return;
    };
    if n > 16 {
        return;
    }
    let points = expand(&base, &axes, &[], &workloads);
    assert_eq!(points.len(), n);
    let again = expand(&base, &axes, &[], &workloads);
    for (i, (p, q)) in points.iter().zip(&again).enumerate() {
        assert_eq!(p.index, i);
        assert_eq!(p.points, n);
        assert_eq!(p.params.len(), axes.len());
        assert_eq!(p.sweep, q.sweep, "the sweep identity is not deterministic");
        match (&p.cfg, &q.cfg) {
            (Ok(c), Ok(d)) => {
                assert_eq!(c.sim.seed, d.sim.seed);
                let t = c.to_toml();
                let back = SsdConfig::from_toml_over(None, &t, "echo")
                    .unwrap_or_else(|e| panic!("point {i}: the echo does not read back: {e}\n{t}"));
                assert_eq!(back.to_toml(), t, "point {i}: the echo reads back as another");
                back.validate()
                    .unwrap_or_else(|e| panic!("point {i}: the echo is not valid: {e}"));
            }
            (Err(e), Err(f)) => {
                assert_eq!(e, f);
                assert!(!e.is_empty());
            }
            _ => panic!("point {i}: expansion is not deterministic"),
        }
    }
});
