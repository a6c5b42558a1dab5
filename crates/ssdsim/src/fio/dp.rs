//! fio's data placement options (options.c, init.c's `fixup_options`,
//! dataplacement.c): `fdp`, `dataplacement` (`data_placement`), `plids`
//! (`fdp_pli`) and `plid_select` (`fdp_pli_select`), which become the job's
//! `workload.fdp` (see `ssdsim_host::workload::placement`).

use ssdsim_host::workload::placement::{DataPlacement, PlidSelect, MAX_DP_IDS};
use ssdsim_host::workload::WorkloadConfig;

/// The option names this module takes, aliases included.
pub(super) const KEYS: &[&str] = &[
    "fdp",
    "dataplacement",
    "data_placement",
    "plids",
    "fdp_pli",
    "plid_select",
    "fdp_pli_select",
    "dp_scheme",
];

/// A job's data placement options as given (the last of each wins), with
/// their lines.
#[derive(Default)]
pub(super) struct DpOpts {
    fdp: Option<(bool, usize)>,
    dp_type: Option<(String, usize)>,
    plids: Option<(Vec<u16>, usize)>,
    select: Option<(PlidSelect, usize)>,
}

impl DpOpts {
    /// Take option `k` (one of [`KEYS`]) with value `v` on `line`.
    pub(super) fn take(&mut self, k: &str, v: &str, line: usize) -> Result<(), String> {
        match k {
            "fdp" => self.fdp = Some((super::fio_bool(v).map_err(|m| format!("{k}: {m}"))?, line)),
            "dataplacement" | "data_placement" => match v {
                "none" | "fdp" => self.dp_type = Some((v.to_string(), line)),
                "streams" => {
                    return Err(format!(
                        "{k}=streams: NVMe Streams directives are not modelled (Flexible Data Placement is: dataplacement=fdp)"
                    ))
                }
                _ => return Err(format!("{k}: none, fdp or streams, got {:?}", ssd_core::units::clip(v))),
            },
            "plids" | "fdp_pli" => self.plids = Some((parse_plids(v).map_err(|m| format!("{k}: {m}"))?, line)),
            "plid_select" | "fdp_pli_select" => {
                let s = match v {
                    "roundrobin" => PlidSelect::RoundRobin,
                    "random" => PlidSelect::Random,
                    "scheme" => {
                        return Err(format!(
                            "{k}=scheme: placement by an offset scheme file (dp_scheme) is not modelled; use roundrobin or random"
                        ))
                    }
                    _ => {
                        return Err(format!(
                            "{k}: roundrobin, random or scheme, got {:?}",
                            ssd_core::units::clip(v)
                        ))
                    }
                };
                self.select = Some((s, line));
            }
            _ => {
                return Err(format!(
                    "{k}: placement by an offset scheme file is not modelled; use plid_select=roundrobin or random"
                ))
            }
        }
        Ok(())
    }

    /// fio's `fixup_options` on them: `fdp=1` is `dataplacement=fdp` and
    /// contradicts an explicit `none` or `streams`; the placement options
    /// without FDP, which fio would not use, are refused rather than
    /// dropped. Sets `w.fdp`; an error names its line.
    pub(super) fn finish(self, w: &mut WorkloadConfig) -> Result<(), (usize, String)> {
        let on_by_fdp = matches!(self.fdp, Some((true, _)));
        let on = match (&self.dp_type, on_by_fdp) {
            (Some((t, line)), true) if t == "none" => {
                return Err((
                    *line,
                    "fdp=1 is not compatible with dataplacement=none (fio's fixup_options)".into(),
                ))
            }
            (Some((t, _)), _) => t == "fdp" || on_by_fdp,
            (None, b) => b,
        };
        if !on {
            for (given, name) in [
                (self.plids.as_ref().map(|p| p.1), "plids"),
                (self.select.as_ref().map(|p| p.1), "plid_select"),
            ] {
                if let Some(l) = given {
                    return Err((
                        l,
                        format!("{name}: needs fdp=1 or dataplacement=fdp (without them fio places nothing)"),
                    ));
                }
            }
            w.fdp = None;
            return Ok(());
        }
        if !w.direct {
            let line = self
                .fdp
                .map(|f| f.1)
                .or(self.dp_type.as_ref().map(|d| d.1))
                .unwrap_or(0);
            return Err((
                line,
                "fdp: fio's FDP engines (io_uring_cmd, xnvme) send NVMe passthrough commands, which bypass the page cache: add direct=1 (ssdsim runs a job without it through the page cache)".into(),
            ));
        }
        w.fdp = Some(DataPlacement {
            plids: self.plids.map(|p| p.0).unwrap_or_default(),
            plid_select: self.select.map(|s| s.0).unwrap_or_default(),
        });
        Ok(())
    }
}

/// fio's `str_fdp_pli_cb`: a comma-separated list of indices and ranges
/// (`1,2-4`), numbers in C's notation (`0x10`), sorted; at most 128, none
/// above 0xFFFF.
fn parse_plids(v: &str) -> Result<Vec<u16>, String> {
    let num = |s: &str| -> Result<u64, String> {
        let s = s.trim();
        let r = if let Some(h) = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
            u64::from_str_radix(h, 16)
        } else if s.len() > 1 && s.starts_with('0') {
            u64::from_str_radix(&s[1..], 8)
        } else {
            s.parse()
        };
        r.map_err(|_| format!("{:?} is not a placement ID index", ssd_core::units::clip(s)))
    };
    let mut ids = Vec::new();
    for part in v.trim().split(',') {
        if part.trim().is_empty() {
            break;
        }
        let (a, b) = match part.split_once('-') {
            Some((a, b)) => (num(a)?, num(b)?),
            None => (num(part)?, num(part)?),
        };
        if a > b {
            return Err(format!("range {a}-{b} runs backwards"));
        }
        for id in a..=b {
            if ids.len() >= MAX_DP_IDS {
                return Err(format!("only {MAX_DP_IDS} IDs supported"));
            }
            if id > 0xFFFF {
                return Err("Placement IDs cannot exceed 0xFFFF".into());
            }
            ids.push(id as u16);
        }
    }
    ids.sort_unstable();
    Ok(ids)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job(text: &str) -> Result<WorkloadConfig, String> {
        super::super::parse_jobs_str(text, "t.fio", &WorkloadConfig::default())
            .map(|mut v| v.remove(0).0)
            .map_err(|e| e.to_string())
    }

    #[test]
    fn fdp_and_its_aliases_set_the_jobs_placement() {
        let w = job("[j]\nrw=randwrite\ndirect=1\nfdp=1\nfdp_pli=4,0-2\nfdp_pli_select=random\n")
            .unwrap();
        let dp = w.fdp.unwrap();
        assert_eq!(dp.plids, vec![0, 1, 2, 4]);
        assert_eq!(dp.plid_select, PlidSelect::Random);
        let w = job("[j]\nrw=write\ndirect=1\ndataplacement=fdp\nplids=0x3\n").unwrap();
        let dp = w.fdp.unwrap();
        assert_eq!(dp.plids, vec![3]);
        assert_eq!(dp.plid_select, PlidSelect::RoundRobin);
        // fdp=1 alone: every placement ID of the device, round robin.
        let w = job("[j]\nrw=write\ndirect=1\nfdp=1\n").unwrap();
        assert_eq!(w.fdp.unwrap(), DataPlacement::default());
        assert!(job("[j]\nrw=write\n").unwrap().fdp.is_none());
    }

    #[test]
    fn what_fio_refuses_or_ssdsim_does_not_model_is_refused_with_the_line() {
        for (text, want) in [
            (
                "[j]\nfdp=1\ndataplacement=none\n",
                "t.fio:3: fdp=1 is not compatible",
            ),
            (
                "[j]\ndataplacement=streams\n",
                "t.fio:2: dataplacement=streams",
            ),
            (
                "[j]\nfdp=1\nplid_select=scheme\n",
                "t.fio:3: plid_select=scheme",
            ),
            ("[j]\nfdp=1\ndp_scheme=x\n", "t.fio:3: dp_scheme"),
            ("[j]\nplids=1\n", "t.fio:2: plids: needs fdp=1"),
            ("[j]\nfdp=1\nrw=write\n", "t.fio:2: fdp: fio's FDP engines"),
            ("[j]\nfdp=1\nplids=3-1\n", "t.fio:3: plids: range 3-1"),
            ("[j]\nfdp=1\nplids=0-200\n", "only 128 IDs"),
            ("[j]\nfdp=1\nplids=70000\n", "cannot exceed 0xFFFF"),
        ] {
            let e = job(text).unwrap_err();
            assert!(e.contains(want), "{text:?}: {e}");
        }
    }

    /// docs/fio.md names every data placement option.
    #[test]
    fn the_fio_page_lists_the_placement_options() {
        let doc = include_str!("../../../../docs/fio.md");
        for k in KEYS {
            assert!(
                doc.contains(&format!("`{k}`")),
                "docs/fio.md does not list {k}"
            );
        }
    }
}
