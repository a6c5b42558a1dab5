//! Helpers shared by the library's integration tests. Each test file is its
//! own crate and uses some of them.
#![allow(dead_code)]

/// Sweep rows as JSON without their wall-clock seconds, one string a row.
pub fn rows_without_wall(rows: &[ssdsim::sweep::Row]) -> Vec<String> {
    rows.iter()
        .map(|r| {
            serde_json::to_string(&ssdsim::sweep::Row {
                wall_s: 0.0,
                ..r.clone()
            })
            .expect("a row serialises")
        })
        .collect()
}
