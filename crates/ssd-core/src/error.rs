//! The configuration error every component's validation returns: a leaf
//! module, so the components whose settings live with them (schedulers,
//! traces, personalities, the page cache) need not import `config`.

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
