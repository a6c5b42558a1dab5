//! The builder against the binary: `Ssd::builder()` with a set of settings
//! reports, byte for byte but for the wall-clock fields, what `ssdsim run`
//! with the same flags prints, and a fio job runs as `--fio` runs it.

use ssdsim::{Ssd, SsdBuilder};

/// The library's test helpers: the same settings and normalisation as its
/// own comparisons.
#[path = "../../ssdsim/tests/common/mod.rs"]
mod lib_common;
use lib_common::{builder, flags, normalized, report_json, ONE_JOB, TWO_JOBS};

#[test]
fn the_builder_reports_as_the_binary_does() {
    let mut args = vec!["run".to_string(), "--format".into(), "json".into()];
    args.push("--no-progress".into());
    for (f, v) in flags() {
        if f.contains('.') {
            args.extend(["--set".to_string(), format!("{f}={v}")]);
        } else {
            args.extend([format!("--{f}"), v]);
        }
    }
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_ssdsim"))
        .args(&args)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let cli = normalized(&String::from_utf8(o.stdout).unwrap());
    assert!(cli.contains("\"wall_s\": 0,"), "{cli}");
    assert_eq!(report_json(&builder().build().unwrap()), cli);
    // And `--print-config` is `config().to_toml()`.
    args.retain(|a| a != "--format" && a != "json" && a != "--no-progress");
    args.push("--print-config".into());
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_ssdsim"))
        .args(&args)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(
        String::from_utf8(o.stdout).unwrap(),
        builder().build().unwrap().config().to_toml()
    );
}

#[test]
fn a_fio_job_runs_as_with_the_binarys_fio_flag() {
    let dir = std::env::temp_dir().join(format!("ssdsim-facade-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for (i, (job, extra)) in [
        (ONE_JOB, vec![]),
        (ONE_JOB, vec!["--number_ios", "1500"]),
        (TWO_JOBS, vec!["--time-limit", "2ms"]),
    ]
    .into_iter()
    .enumerate()
    {
        let file = dir.join(format!("job{i}.fio"));
        std::fs::write(&file, job).unwrap();
        let mut args = vec!["run", "--format", "json", "--no-progress", "--ftl", "dftl"];
        args.extend(["--set", "nand.blocks_per_plane=256", "--fio"]);
        args.push(file.to_str().unwrap());
        args.extend(extra.iter().copied());
        let o = std::process::Command::new(env!("CARGO_BIN_EXE_ssdsim"))
            .args(&args)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        // The extra flags as setters.
        let with_extra = |mut b: SsdBuilder| {
            for kv in extra.chunks(2) {
                b = match kv[0] {
                    "--number_ios" => b.number_ios(kv[1].parse().unwrap()),
                    _ => b.time_limit(kv[1]),
                };
            }
            b
        };
        let base = Ssd::builder().ftl("dftl").set("nand.blocks_per_plane", 256);
        let ssd = with_extra(base.clone().fio_file(&file)).build().unwrap();
        let cli = normalized(&String::from_utf8(o.stdout).unwrap());
        assert_eq!(report_json(&ssd), cli, "{job} {extra:?}");
        // The binary's warnings are the Ssd's.
        let stderr = String::from_utf8(o.stderr).unwrap();
        assert_eq!(stderr.lines().collect::<Vec<_>>(), ssd.warnings(), "{job}");
        assert!(!ssd.warnings().is_empty());
        // Job text in place of the file: the same run, named "<fio>".
        let text = with_extra(base.fio(job)).build().unwrap();
        assert_eq!(text.config(), ssd.config());
        assert!(
            text.warnings()[0].starts_with("<fio>: "),
            "{:?}",
            text.warnings()
        );
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
