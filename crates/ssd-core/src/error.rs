//! The configuration error every component's validation returns: a leaf
//! module, so the components whose settings live with them (schedulers,
//! traces, personalities, the page cache) need not import `config`.

use crate::units::{Dur, MAX_OP_TIME, MAX_RATE_MBPS, MIN_RATE_MBPS};

/// A configuration error: the field path and the reason.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    /// A field has a bad value.
    #[error("{field}: {reason}")]
    Invalid {
        /// The field's path (`ftl.op`, `workload.bs`, ...).
        field: String,
        /// What is wrong with its value.
        reason: String,
    },
    /// A preset name is unknown.
    #[error("unknown {kind} preset {name:?} (known: {known})")]
    UnknownPreset {
        /// The preset family (`nand`, `power`, `device`, ...).
        kind: &'static str,
        /// The name asked for.
        name: String,
        /// The known names, comma-separated.
        known: String,
    },
    /// A TOML text could not be parsed or has unknown fields.
    #[error("{source_name}: {message}")]
    Parse {
        /// The text's origin (a path, or a preset's name).
        source_name: String,
        /// The parser's message.
        message: String,
    },
}

/// A [`ConfigError::Invalid`] for `field` with `reason`.
pub fn invalid(field: &str, reason: impl Into<String>) -> ConfigError {
    ConfigError::Invalid {
        field: field.to_string(),
        reason: reason.into(),
    }
}

/// The preset called `name` among `presets`, or an error naming the known ones.
pub(crate) fn find_preset<T>(
    kind: &'static str,
    name: &str,
    presets: Vec<T>,
    name_of: impl Fn(&T) -> &String,
) -> Result<T, ConfigError> {
    let known = presets
        .iter()
        .map(|p| name_of(p).as_str())
        .collect::<Vec<_>>()
        .join(", ");
    presets
        .into_iter()
        .find(|p| name_of(p) == name)
        .ok_or_else(|| ConfigError::UnknownPreset {
            kind,
            name: name.to_string(),
            known,
        })
}

/// An operation time (flash read, program, erase, page transfer, DRAM
/// access, command overhead, CPU wake-up) is booked on a busy-until clock:
/// beyond [`MAX_OP_TIME`] it is no device that was meant, and far beyond it
/// sums wrap.
pub(crate) fn check_op_time(field: &str, d: Dur) -> Result<(), ConfigError> {
    if d > MAX_OP_TIME {
        return Err(invalid(
            field,
            format!("{d} is out of range: an operation time is at most {MAX_OP_TIME}"),
        ));
    }
    Ok(())
}

/// A transfer rate (NAND bus, host link) in MB/s within
/// [`MIN_RATE_MBPS`]..=[`MAX_RATE_MBPS`].
pub(crate) fn check_rate_mbps(field: &str, mbps: f64) -> Result<(), ConfigError> {
    if !(MIN_RATE_MBPS..=MAX_RATE_MBPS).contains(&mbps) {
        return Err(invalid(
            field,
            format!(
                "a rate of {mbps} MB/s is out of range: {MIN_RATE_MBPS}..={MAX_RATE_MBPS} MB/s \
                 (rates are kept to 0.001 MB/s: a slower one would be infinitely fast)"
            ),
        ));
    }
    Ok(())
}

/// `v` is at least 1.
pub(crate) fn check_nonzero(field: &str, v: u32) -> Result<(), ConfigError> {
    if v == 0 {
        return Err(invalid(field, "must be at least 1"));
    }
    Ok(())
}
