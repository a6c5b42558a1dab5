//! The configuration error every component's validation returns: a leaf
//! module, so the components whose settings live with them (schedulers,
//! traces, personalities, the page cache) need not import `config`.

/// A configuration error: the field path and the reason.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    #[error("{field}: {reason}")]
    Invalid { field: String, reason: String },
    #[error("unknown {kind} preset {name:?} (known: {known})")]
    UnknownPreset {
        kind: &'static str,
        name: String,
        known: String,
    },
    #[error("{source_name}: {message}")]
    Parse {
        source_name: String,
        message: String,
    },
}

pub fn invalid(field: &str, reason: impl Into<String>) -> ConfigError {
    ConfigError::Invalid {
        field: field.to_string(),
        reason: reason.into(),
    }
}
