//! The settings' rules shared by the library's builder and the CLI: flags
//! applied by name ([`apply_flag`]), `--set section.field=value`
//! ([`set_field`]), configuration resolution (preset -> file -> flags) and
//! fio job files applied to a configuration.

use crate::*;

/// Apply a configuration flag ([`flags::FLAGS`]) by its rule: a preset
/// replaces whole sections; a field flag sets one dotted field, so errors
/// name that field. A name that is no flag is taken as a dotted field
/// (`--set`'s keys go through here too).
pub fn apply_flag(cfg: &mut SsdConfig, flag: &str, value: &str) -> Result<(), ConfigError> {
    use flags::Rule;
    let v = value.trim();
    let Some(f) = flags::find(flag) else {
        return set_field(cfg, flag, v);
    };
    match f.rule {
        Rule::Field(field) => set_field(cfg, field, v),
        Rule::FioSize(field) => {
            // fio's suffixes, but an IEC one (`KiB`) means 1024 as IEC has
            // it: fio's kb_base=1000 reading, not its compatibility mode's.
            let iec = v.to_ascii_lowercase().ends_with("ib");
            let b = fio::fio_size(v, if iec { 1000 } else { 1024 })
                .map_err(|m| ssdsim_host::config::invalid(field, m))?;
            set_field(cfg, field, &b.0.to_string())
        }
        Rule::Duration(field) => {
            require_unit(f.name, v)?;
            set_field(cfg, field, v)
        }
        Rule::Nand => {
            let base = SsdConfig::with_nand(v)?;
            let keep_power =
                cfg.power.name != PowerConfig::lee2011().name && cfg.power.name != "park-slc";
            cfg.nand = base.nand;
            if !keep_power {
                cfg.power = base.power;
            }
            Ok(())
        }
        Rule::Device => {
            *cfg = cfg.clone().with_device(v)?;
            Ok(())
        }
        Rule::Interface => {
            let i: Interface = serde_json::from_value(serde_json::Value::String(v.to_string()))
                .map_err(|_| {
                    ssdsim_host::config::invalid(
                        "host.interface",
                        format!(
                            "unknown interface {v:?} (sata3g, sata6g, nvme-gen3x4, nvme-gen4x4)"
                        ),
                    )
                })?;
            cfg.host = HostConfig::preset(i);
            Ok(())
        }
        Rule::Power => {
            cfg.power = PowerConfig::preset(v)?;
            Ok(())
        }
        Rule::GcPolicy => {
            let p = ssdsim_host::config::GcPolicy::parse(v)
                .map_err(|m| ssdsim_host::config::invalid("ftl.gc_policy", m))?;
            cfg.ftl.gc_policy = p;
            Ok(())
        }
        Rule::Trace => {
            if v.is_empty() || v == "none" {
                cfg.trace = None;
            } else {
                let format = cfg.trace.as_ref().and_then(|t| t.format.clone());
                cfg.trace = Some(ssdsim_host::config::TraceSpec {
                    path: v.to_string(),
                    format,
                });
            }
            Ok(())
        }
        Rule::TraceFormat => {
            let t = cfg.trace.get_or_insert(ssdsim_host::config::TraceSpec {
                path: String::new(),
                format: None,
            });
            t.format = Some(v.to_string());
            Ok(())
        }
        Rule::Personality => {
            if v.is_empty() || v == "none" {
                cfg.personality = None;
            } else {
                let k = ssdsim_host::personality::PersonalityKind::parse(v)
                    .map_err(|m| ssdsim_host::config::invalid("personality.kind", m))?;
                cfg.personality = Some(ssdsim_host::personality::PersonalityConfig::new(k));
            }
            Ok(())
        }
        Rule::Runtime => {
            let d = fio::fio_dur(v)
                .map_err(|e| ssdsim_host::config::invalid("--runtime", e.to_string()))?;
            if d.0 == 0 {
                return Err(ssdsim_host::config::invalid(
                    "--runtime",
                    "must be positive",
                ));
            }
            // fio's runtime counts from the end of the ramp.
            let limit = d.0 + cfg.sim.ramp_time.map_or(0, |r| r.0);
            if limit > ssd_core::Dur::MAX.0 {
                return Err(ssdsim_host::config::invalid(
                    "--runtime",
                    format!(
                        "with sim.ramp_time, at most {} ns in all (2^62 ns)",
                        ssd_core::Dur::MAX.0
                    ),
                ));
            }
            cfg.sim.time_limit = Some(ssd_core::Dur(limit));
            Ok(())
        }
    }
}

/// A duration flag's value must say its unit: a bare number would be read as
/// nanoseconds (the configuration's unit), which no one means by
/// `--time-limit 1`.
pub fn require_unit(flag: &str, value: &str) -> Result<(), ConfigError> {
    let v = value.trim();
    if !v.is_empty()
        && v.bytes()
            .all(|b| b.is_ascii_digit() || b == b'.' || b == b'_')
    {
        return Err(ssdsim_host::config::invalid(
            &format!("--{flag}"),
            format!(
                "{:?} has no unit: give one of ns, us, ms, s, min, h (e.g. {}s or {}ms)",
                ssd_core::units::clip(v),
                ssd_core::units::clip(v),
                ssd_core::units::clip(v)
            ),
        ));
    }
    Ok(())
}

/// The trace files `cfg` reads: its trace's and its flows' (outputs must
/// not replace them).
pub fn trace_paths(cfg: &SsdConfig) -> Vec<std::path::PathBuf> {
    cfg.trace
        .iter()
        .chain(cfg.flows.iter().filter_map(|f| f.trace.as_ref()))
        .map(|t| std::path::PathBuf::from(&t.path))
        .collect()
}

/// Set a dotted config field (`ftl.op`, `nand.t_r`, ...) from text. The value is
/// read as a TOML literal when it is one (numbers, booleans), else as a string.
pub fn set_field(cfg: &mut SsdConfig, field: &str, value: &str) -> Result<(), ConfigError> {
    // A value set earlier (by a fio job) that TOML cannot hold is named here,
    // not blamed on `field`: before each early return below, and where the
    // echo further down fails (it does for every such value), so that a
    // valid configuration is not serialized an extra time per key.
    // The optional sections exist once a workload selects them: naming the
    // personality's kind (or the trace's path) selects it.
    let bare = value.trim().trim_matches('"');
    match field {
        "personality.kind" if cfg.personality.is_none() => {
            cfg.check_writable()?;
            return apply_flag(cfg, "personality", bare);
        }
        "trace.path" if cfg.trace.is_none() => {
            cfg.check_writable()?;
            return apply_flag(cfg, "trace", bare);
        }
        f if f.starts_with("personality.") && cfg.personality.is_none() => {
            cfg.check_writable()?;
            return Err(ssdsim_host::config::invalid(
                field,
                "no personality is selected: give --personality NAME (or \
                 personality.kind=NAME) before setting its fields",
            ));
        }
        f if f.starts_with("trace.") && cfg.trace.is_none() => {
            cfg.check_writable()?;
            return Err(ssdsim_host::config::invalid(
                field,
                "no trace is selected: give --trace FILE (or trace.path=FILE) before \
                 setting its fields",
            ));
        }
        _ => {}
    }
    let parsed = parse_value(value);
    let parts: Vec<&str> = field.split('.').collect();
    // A field inside one section: only that section is echoed and read
    // back (a configuration's sections are read independently), unless
    // anything is out of the ordinary, when the whole configuration is.
    if set_in_section(cfg, &parts, &parsed).is_some() {
        return Ok(());
    }
    count_whole_echo();
    let mut root = match toml::Value::try_from(&*cfg) {
        Ok(root) => root,
        Err(e) => {
            cfg.check_writable()?;
            return Err(ssdsim_host::config::invalid(field, e.to_string()));
        }
    };
    let (last, sections) = parts.split_last().expect("split yields one part");
    // Sections by name; the entries of an array of tables (`flow.1.priority`)
    // by index. A section absent from the echo is an optional one not set
    // (`nand.retry`): it is created, and reading the configuration back
    // tells whether it is one (and which of its fields are still missing).
    let mut at = &mut root;
    let mut created: Option<&str> = None;
    for p in sections {
        at = match at {
            toml::Value::Table(t) => {
                if !t.contains_key(*p) && created.is_none() {
                    created = Some(p);
                }
                Some(
                    t.entry(p.to_string())
                        .or_insert_with(|| toml::Value::Table(toml::Table::new())),
                )
            }
            toml::Value::Array(a) => p.parse::<usize>().ok().and_then(|i| a.get_mut(i)),
            _ => None,
        }
        .ok_or_else(|| ssdsim_host::config::invalid(field, format!("unknown section {p:?}")))?;
    }
    let cur = at
        .as_table_mut()
        .ok_or_else(|| ssdsim_host::config::invalid(field, "not a section"))?;
    // A field absent from the echo is an unset optional one (None is not
    // written) or not a field at all: every section refuses unknown fields,
    // so reading the configuration back tells which.
    let known = cur.contains_key(*last);
    cur.insert(last.to_string(), parsed);
    // Read the edited tree back directly; only when that fails is it
    // written out as text and parsed, for the error message as it always
    // was (the text round trip reads a tree the same way, at several times
    // the cost).
    if let Ok(c) = root.clone().try_into::<SsdConfig>() {
        *cfg = c;
        return Ok(());
    }
    text_trip(cfg, field, value, root, created, known)
}

/// A `--set` value as TOML reads it when it is a TOML literal (numbers,
/// booleans, arrays), else as a string.
pub(crate) fn parse_value(value: &str) -> toml::Value {
    if let Some(v) = parse_value_plain(value) {
        return v;
    }
    match format!("v = {value}").parse::<toml::Table>() {
        Ok(mut t) => t
            .remove("v")
            .unwrap_or(toml::Value::String(value.to_string())),
        Err(_) => toml::Value::String(value.to_string()),
    }
}

/// [`parse_value`] of the plainest values without a TOML parser (a sweep
/// sets several per point): a word TOML does not read (`randread`), a
/// number with a unit (`4KiB`, `100ms`), a decimal integer or fraction of at
/// most 18 digits each side. `None` for anything else, which TOML reads.
pub(crate) fn parse_value_plain(value: &str) -> Option<toml::Value> {
    let b = value.as_bytes();
    let first = *b.first()?;
    if first.is_ascii_alphabetic() {
        if matches!(value, "true" | "false" | "inf" | "nan")
            || !b
                .iter()
                .all(|&c| c.is_ascii_alphanumeric() || c == b'_' || c == b'-')
        {
            return None;
        }
        return Some(toml::Value::String(value.to_string()));
    }
    let digits = b.strip_prefix(b"-").unwrap_or(b);
    let n = digits.iter().take_while(|c| c.is_ascii_digit()).count();
    if n == 0 || n > 18 || (digits[0] == b'0' && n > 1) {
        return None;
    }
    let rest = &digits[n..];
    if rest.is_empty() {
        return value.parse::<i64>().ok().map(toml::Value::Integer);
    }
    if let Some(frac) = rest.strip_prefix(b".") {
        let decimal = !frac.is_empty() && frac.len() <= 18 && frac.iter().all(u8::is_ascii_digit);
        return decimal.then(|| value.parse::<f64>().ok().map(toml::Value::Float))?;
    }
    // Digits, then letters with no exponent's `e` first: not a TOML value.
    let unit = first != b'-'
        && !matches!(rest[0], b'e' | b'E')
        && rest.iter().all(|c| c.is_ascii_alphabetic());
    unit.then(|| toml::Value::String(value.to_string()))
}

/// [`set_field`] for a dotted field `parts` inside one of the sections
/// every configuration has (or a selected personality or trace): that
/// section echoed as a TOML tree, the value set on it and the section read
/// back. `None` (the caller then goes through the whole configuration,
/// for its error messages) when the section cannot be echoed, a section
/// on the way is missing or not a table, or the result does not read back.
/// A configuration's sections are read independently of each other, so a
/// section read back here is the section the whole configuration's reading
/// back would give.
pub(crate) fn set_in_section(
    cfg: &mut SsdConfig,
    parts: &[&str],
    value: &toml::Value,
) -> Option<()> {
    fn edit<T: serde::Serialize + serde::de::DeserializeOwned>(
        sec: &T,
        parts: &[&str],
        value: &toml::Value,
    ) -> Option<T> {
        let (last, sections) = parts.split_last()?;
        let mut root = toml::Value::try_from(sec).ok()?;
        let mut at = &mut root;
        for p in sections {
            at = at.as_table_mut()?.get_mut(*p)?;
        }
        // A field not in the echo (an unset optional one, or an unknown one,
        // which the reading back refuses) is inserted as the whole
        // configuration's path does.
        at.as_table_mut()?.insert(last.to_string(), value.clone());
        root.try_into().ok()
    }
    let (sec, rest) = parts.split_first()?;
    if rest.is_empty() {
        return None;
    }
    let c = cfg;
    match *sec {
        "nand" => c.nand = edit(&c.nand, rest, value)?,
        "layout" => c.layout = edit(&c.layout, rest, value)?,
        "controller" => c.controller = edit(&c.controller, rest, value)?,
        "dram" => c.dram = edit(&c.dram, rest, value)?,
        "host" => c.host = edit(&c.host, rest, value)?,
        "ftl" => c.ftl = edit(&c.ftl, rest, value)?,
        "sched" => c.sched = edit(&c.sched, rest, value)?,
        "power" => c.power = edit(&c.power, rest, value)?,
        "workload" => c.workload = edit(&c.workload, rest, value)?,
        "sim" => c.sim = edit(&c.sim, rest, value)?,
        "replay" => c.replay = edit(&c.replay, rest, value)?,
        "page_cache" => c.page_cache = edit(&c.page_cache, rest, value)?,
        "cpu" => c.cpu = edit(&c.cpu, rest, value)?,
        "fs" => c.fs = edit(&c.fs, rest, value)?,
        "personality" => c.personality = Some(edit(c.personality.as_ref()?, rest, value)?),
        "trace" => c.trace = Some(edit(c.trace.as_ref()?, rest, value)?),
        _ => return None,
    }
    Some(())
}

thread_local! {
    static WHOLE_ECHOES: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

pub(crate) fn count_whole_echo() {
    WHOLE_ECHOES.with(|n| n.set(n.get() + 1));
}

/// How many times [`set_field`] on this thread echoed the whole
/// configuration as TOML (for a field outside the sections it edits alone,
/// or an error's message): a test hook, so that a sweep's cost per point is
/// checked without timing it.
#[doc(hidden)]
pub fn set_field_whole_echoes() -> u64 {
    WHOLE_ECHOES.with(|n| n.get())
}

/// [`set_field`]'s reading back of the edited tree `root` through TOML
/// text, whose errors name `field` and say why.
pub(crate) fn text_trip(
    cfg: &mut SsdConfig,
    field: &str,
    value: &str,
    root: toml::Value,
    created: Option<&str>,
    known: bool,
) -> Result<(), ConfigError> {
    let text =
        toml::to_string(&root).map_err(|e| ssdsim_host::config::invalid(field, e.to_string()))?;
    *cfg = toml::from_str(&text).map_err(|e: toml::de::Error| {
        // All digits but beyond TOML's signed 64-bit integers: it was kept as
        // text, and "invalid type: string" would not say why.
        let m = if let Some(p) = created.filter(|_| e.message().starts_with("unknown field")) {
            format!("unknown section {p:?}")
        } else if !known && e.message().starts_with("unknown field") {
            "unknown configuration field".to_string()
        } else if is_integer_text(value) && value.parse::<i64>().is_err() {
            format!(
                "{value} is out of range: configuration integers are TOML's, from {} to {}",
                i64::MIN,
                i64::MAX
            )
        } else {
            e.message().to_string()
        };
        ssdsim_host::config::invalid(field, m)
    })?;
    Ok(())
}

/// `text` is a decimal integer (an optional sign, then digits).
pub(crate) fn is_integer_text(text: &str) -> bool {
    let digits = text.strip_prefix(['+', '-']).unwrap_or(text);
    !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit())
}

/// Build a configuration: preset flags, then the TOML file, then the other flags
/// (flag > file > preset > default).
pub fn resolve_config(
    file: Option<&std::path::Path>,
    flags: &[(String, String)],
) -> Result<SsdConfig, RunError> {
    let text = match file {
        Some(path) => Some(
            std::fs::read_to_string(path)
                .map_err(|e| RunError::Input(format!("{}: cannot read: {e}", path.display())))?,
        ),
        None => None,
    };
    let name = file.map(|p| p.display().to_string()).unwrap_or_default();
    resolve_config_text(text.as_deref(), &name, flags)
}

/// [`resolve_config`] over configuration text instead of a file (`source_name`,
/// such as a path, prefixes its parse errors): what the Python bindings and
/// other embedders use to resolve a configuration exactly as the CLI does.
pub fn resolve_config_text(
    text: Option<&str>,
    source_name: &str,
    flags: &[(String, String)],
) -> Result<SsdConfig, RunError> {
    let settings: Vec<Setting> = flags
        .iter()
        .map(|(f, v)| Setting::Flag(f.clone(), v.clone()))
        .collect();
    resolve_settings(SsdConfig::default(), text, source_name, &settings)
}

/// One setting of a configuration's resolution: a flag as [`apply_flag`]
/// takes it (the CLI's flags and `--set`), or a whole section (`nand`,
/// `workload`, ...) as inline TOML, set by [`set_field`] in the flags' turn.
#[derive(Clone, Debug)]
pub(crate) enum Setting {
    Flag(String, String),
    Section(&'static str, String),
}

impl Setting {
    /// The flag's name, or the section's.
    fn key(&self) -> &str {
        match self {
            Setting::Flag(f, _) => f,
            Setting::Section(s, _) => s,
        }
    }

    /// The flag of this name (a section is no flag).
    fn flag(&self, name: &str) -> bool {
        matches!(self, Setting::Flag(f, _) if f == name)
    }

    fn apply(&self, cfg: &mut SsdConfig) -> Result<(), ConfigError> {
        match self {
            Setting::Flag(f, v) => apply_flag(cfg, f, v),
            Setting::Section(s, v) => set_field(cfg, s, v),
        }
    }
}

/// [`resolve_config_text`] from `base` instead of the defaults, over
/// `settings` (what [`Ssd::builder`] resolves; the CLI's flags are all
/// [`Setting::Flag`]s): the preset flags, then the text, then the other
/// settings in order.
pub(crate) fn resolve_settings(
    base: SsdConfig,
    text: Option<&str>,
    source_name: &str,
    settings: &[Setting],
) -> Result<SsdConfig, RunError> {
    let mut cfg = base;
    let is_preset = |s: &Setting| s.flag("nand") || s.flag("interface") || s.flag("power");
    for s in settings.iter().filter(|s| is_preset(s)) {
        s.apply(&mut cfg)?;
    }
    if let Some(text) = text {
        let mut text = std::borrow::Cow::Borrowed(text);
        if settings.iter().any(|s| s.flag("nand")) {
            // The --nand flag wins over the file's nand_preset.
            let mut t: toml::Table = text.parse().map_err(|e: toml::de::Error| {
                RunError::Input(format!("{source_name}: {}", e.message()))
            })?;
            t.remove("nand_preset");
            text = std::borrow::Cow::Owned(toml::to_string(&t).expect("table serializes"));
        }
        cfg = SsdConfig::from_toml_over(Some(cfg), &text, source_name)?;
    }
    for s in settings.iter().filter(|s| !is_preset(s)) {
        s.apply(&mut cfg)?;
    }
    // --runtime counts from the end of the ramp, wherever the ramp was set.
    for s in settings.iter().filter(|s| s.flag("runtime")) {
        s.apply(&mut cfg)?;
    }
    check_flow_keys(&cfg, settings.iter().map(Setting::key))?;
    if settings.iter().any(|s| s.flag("number_ios")) {
        number_ios_to_source(&mut cfg, settings.iter().any(|s| s.flag("max-requests")))?;
    }
    fs_implies_file_level(&mut cfg, settings.iter().map(Setting::key));
    // fio's `size=` ends the job after its bytes (number_ios first if it
    // comes first), where `[workload]`'s own default ends it after
    // `number_ios` requests.
    if settings.iter().any(|s| s.flag("size")) {
        size_ends_the_job(&mut cfg, settings.iter().any(|s| s.flag("number_ios")));
    }
    Ok(cfg)
}

/// With `[[flow]]`s the top-level workload is not run: a key that sets it
/// (a workload flag, `workload`, `workload.*`, `personality*`, `trace*`) is
/// refused rather than dropped.
pub fn check_flow_keys<'a>(
    cfg: &SsdConfig,
    keys: impl IntoIterator<Item = &'a str>,
) -> Result<(), RunError> {
    if cfg.flows.is_empty() {
        return Ok(());
    }
    for k in keys {
        let top = flags::is_workload(k)
            || matches!(k, "workload" | "personality" | "trace" | "max-requests")
            || ["workload.", "personality.", "trace.", "replay."]
                .iter()
                .any(|p| k.starts_with(p));
        if top {
            return Err(RunError::Input(format!(
                "{k}: the configuration has [[flow]]s, each with its own workload; \
                 the top-level workload is not run (set flow.N.workload.*, e.g. \
                 --set flow.0.workload.iodepth=8)"
            )));
        }
    }
    Ok(())
}

/// `--fs` with a personality: a user who names a file system means the
/// personality's file level (every personality has one), unless a key
/// among `keys` sets `personality.level` itself.
pub fn fs_implies_file_level<'a>(cfg: &mut SsdConfig, keys: impl IntoIterator<Item = &'a str>) {
    let mut fs = false;
    for k in keys {
        if k == "personality.level" {
            return;
        }
        fs |= k == "fs";
    }
    if let Some(p) = cfg.personality.as_mut().filter(|_| fs) {
        p.level = ssdsim_host::personality::PersonalityLevel::File;
    }
}

/// `--size` given: the workload ends as fio's does, after `size` bytes, or
/// after `number_ios` requests if those were given too and come first.
pub fn size_ends_the_job(cfg: &mut SsdConfig, number_ios_given: bool) {
    let w = &mut cfg.workload;
    if number_ios_given {
        if w.io_size.is_none() {
            w.io_size = w.size;
        }
    } else {
        w.number_ios = None;
    }
}

/// An explicit `number_ios` (fio: end after that many requests) applied to a
/// personality (its request count) or a trace (its replay limit, unless
/// `max_requests` was given too); otherwise the flag would be dropped without
/// a word, since only the fio-style generator reads `workload.number_ios`.
///
/// `number_ios = 0` is fio's "no count": the fio-style generator then ends by
/// its size; a personality or a trace has no size to end by, so it is
/// refused for them.
pub fn number_ios_to_source(
    cfg: &mut SsdConfig,
    max_requests_given: bool,
) -> Result<(), ConfigError> {
    let n = cfg.workload.number_ios;
    if n.is_none() && (cfg.personality.is_some() || cfg.trace.is_some()) {
        return Err(ssdsim_host::config::invalid(
            "workload.number_ios",
            "0 is fio's \"no count\" (a fio-style job then ends by its size); a personality \
             or a trace needs a count of at least 1",
        ));
    }
    if let Some(p) = cfg.personality.as_mut() {
        p.requests = n.unwrap_or(p.requests);
    } else if cfg.trace.is_some() && !max_requests_given {
        cfg.replay.max_requests = n;
    }
    Ok(())
}

/// Apply the jobs of a fio job file to `c` as `ssdsim run --fio` does
/// (`source` names the file in messages). One job becomes the workload: its
/// ramp and runtime become the run's, the workload and time flags among
/// `flags` (the CLI's flags, not `--set`) still win over the file, then the
/// job ends as fio ends it (size, `number_ios`, runtime, `time_based`)
/// unless `number_ios` was among them. Several jobs (or `numjobs`) become
/// flows ([`fio::jobs_to_flows`]); a workload flag beside them is refused.
/// `warn` gets a line for each job's host-side options accepted without
/// effect. Returns what fio's output needs of the jobs: one for one job,
/// else one per flow.
pub fn apply_fio_jobs(
    c: &mut SsdConfig,
    jobs: Vec<(ssdsim_host::workload::WorkloadConfig, fio::FioJob)>,
    source: &str,
    flags: &[(&str, String)],
    warn: &mut dyn FnMut(String),
) -> Result<Vec<fio::OutputJob>, RunError> {
    let several = jobs.len() > 1 || jobs.first().is_some_and(|j| j.1.numjobs > 1);
    if several {
        if let Some((f, _)) = flags
            .iter()
            .find(|(f, _)| flags::is_workload(f) || matches!(*f, "trace" | "personality"))
        {
            return Err(RunError::Input(format!(
                "--{f}: {source} has several jobs, each its own workload (set flow.N.workload.* with --set)"
            )));
        }
        for (_, j) in &jobs {
            if !j.ignored.is_empty() {
                warn(format!(
                    "{source}: job [{}]: accepted without effect on the simulation (host-side fio options): {}",
                    j.name,
                    j.ignored.join(", ")
                ));
            }
        }
        let out = fio::jobs_to_flows(c, jobs, source, warn)?;
        for (f, v) in flags {
            if matches!(*f, "time-limit" | "runtime") {
                apply_flag(c, f, v)?;
            }
        }
        return Ok(out);
    }
    let (w, job) = jobs.into_iter().next().expect("one job");
    if let Some(n) = &job.wait_for {
        return Err(RunError::Input(format!(
            "{source}: job [{}]: wait_for={n}: no other job has that name",
            job.name
        )));
    }
    c.workload = w;
    if !job.ignored.is_empty() {
        warn(format!(
            "{source}: accepted without effect on the simulation (host-side fio options): {}",
            job.ignored.join(", ")
        ));
    }
    if job.ramp_time.is_some() {
        c.sim.ramp_time = job.ramp_time;
    }
    if let Some(t) = job.time_limit() {
        c.sim.time_limit = Some(t);
    }
    // Workload and time flags given on the command line still win over the
    // job file.
    let mut number_ios_flag = false;
    for (f, v) in flags {
        if flags::is_workload(f) || matches!(*f, "time-limit" | "runtime") {
            apply_flag(c, f, v)?;
            number_ios_flag |= *f == "number_ios";
        }
    }
    // The job ends as fio ends it (size, number_ios, runtime, time_based); a
    // --number_ios flag says it outright.
    let mut job = job;
    let settings = c.validate()?;
    let logical = settings.logical_bytes();
    for n in job
        .resolve_zones(
            &mut c.workload,
            crate::fio::device_zone_bytes(&settings),
            logical,
        )
        .map_err(|m| RunError::Input(format!("{source}: {m}")))?
    {
        warn(format!("{source}: {n}"));
    }
    if !number_ios_flag {
        job.resolve_end(&mut c.workload, logical);
    }
    Ok(vec![fio::OutputJob {
        name: job.name,
        groupid: 0,
        group_reporting: job.group_reporting,
    }])
}
