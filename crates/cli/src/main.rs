//! `ssdsim`: simulate flash SSDs. A thin shell over the `ssdsim` library crate.

mod args;

use anyhow::Context;
use args::ConfigArgs;
use clap::{Parser, Subcommand, ValueEnum};
use ssdsim::{resolve_config, run_config, RunError, RunOptions};
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "ssdsim",
    version,
    about = "Cycle-approximate flash SSD simulator: timing, FTLs, host schedulers, energy"
)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Clone, Copy, ValueEnum, PartialEq, Eq)]
enum Format {
    Text,
    Json,
}

#[derive(Subcommand)]
enum Cmd {
    /// Simulate one configuration and report latency, throughput, WAF, wear, ...
    Run {
        #[command(flatten)]
        cfg: ConfigArgs,
        /// TOML configuration (merged over the preset; flags override it)
        #[arg(long)]
        config: Option<PathBuf>,
        /// fio job file (a subset; unsupported options are named)
        #[arg(long)]
        fio: Option<PathBuf>,
        /// Set any configuration field: --set ftl.gc_threshold_blocks=4 (repeatable)
        #[arg(long = "set", value_name = "FIELD=VALUE")]
        set: Vec<String>,
        /// Output format
        #[arg(long, value_enum, default_value = "text")]
        format: Format,
        /// Write the report here instead of stdout
        #[arg(long)]
        out: Option<PathBuf>,
        /// Print the fully resolved configuration as TOML and exit
        #[arg(long)]
        print_config: bool,
        /// Check the FTL invariants after the run
        #[arg(long)]
        check: bool,
    },
    /// List the built-in presets with their parameters
    Presets {
        #[arg(long, value_enum, default_value = "text")]
        format: Format,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match real_main(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            let code = e
                .downcast_ref::<RunError>()
                .map(|r| r.exit_code())
                .unwrap_or(1);
            eprintln!("error: {e:#}");
            ExitCode::from(code as u8)
        }
    }
}

fn split_set(set: &[String]) -> Result<Vec<(String, String)>, RunError> {
    set.iter()
        .map(|s| {
            s.split_once('=')
                .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
                .ok_or_else(|| RunError::Input(format!("--set {s:?}: expected FIELD=VALUE")))
        })
        .collect()
}

fn write_out(out: Option<&PathBuf>, text: &str) -> anyhow::Result<()> {
    match out {
        Some(p) => std::fs::write(p, text).with_context(|| format!("writing {}", p.display()))?,
        None => {
            let mut so = std::io::stdout().lock();
            so.write_all(text.as_bytes())?;
        }
    }
    Ok(())
}

fn real_main(cli: Cli) -> anyhow::Result<()> {
    match cli.cmd {
        Cmd::Run {
            cfg,
            config,
            fio,
            set,
            format,
            out,
            print_config,
            check,
        } => {
            let mut flags: Vec<(String, String)> = Vec::new();
            for (f, v) in cfg.pairs() {
                if v.contains(',') && f != "random_distribution" {
                    return Err(RunError::Input(format!(
                        "--{f} {v}: `run` takes one value; use `ssdsim sweep` for lists"
                    ))
                    .into());
                }
                flags.push((f.to_string(), v));
            }
            flags.extend(split_set(&set)?);
            let mut c = resolve_config(config.as_deref(), &flags)?;
            if let Some(path) = fio {
                let (w, job) =
                    ssdsim::fio::parse_file(&path, &c.workload).map_err(RunError::from)?;
                c.workload = w;
                if let Some(rt) = job.runtime {
                    c.sim.time_limit = Some(rt);
                }
                // Workload flags given on the command line still win over the job file.
                for (f, v) in cfg.pairs() {
                    if matches!(
                        f,
                        "rw" | "bs"
                            | "iodepth"
                            | "rwmixread"
                            | "number_ios"
                            | "rate_iops"
                            | "rate_process"
                            | "random_distribution"
                            | "size"
                            | "offset"
                            | "randseed"
                    ) {
                        ssdsim::apply_flag(&mut c, f, &v).map_err(RunError::from)?;
                    }
                }
            }
            c.validate().map_err(RunError::from)?;
            if print_config {
                return write_out(out.as_ref(), &c.to_toml());
            }
            let res = run_config(
                &c,
                &RunOptions {
                    check_invariants: check,
                },
            )?;
            let text = match format {
                Format::Json => serde_json::to_string_pretty(&res.report)? + "\n",
                Format::Text => ssdsim::output::text(&res.report),
            };
            write_out(out.as_ref(), &text)
        }
        Cmd::Presets { format } => {
            let nands = ssdsim::nand_presets();
            if format == Format::Json {
                let ifaces: Vec<_> = ["sata3g", "sata6g", "nvme-gen3x4", "nvme-gen4x4"]
                    .iter()
                    .map(|n| {
                        let i: ssd_core::config::Interface =
                            serde_json::from_value(serde_json::Value::String(n.to_string()))
                                .expect("known");
                        ssd_core::config::HostConfig::preset(i)
                    })
                    .collect();
                let v = serde_json::json!({
                    "nand": nands,
                    "power": ssd_core::config::PowerConfig::presets(),
                    "interface": ifaces,
                    "ftl": ftl::FTL_NAMES,
                    "sched": ssdsim::SCHED_NAMES,
                });
                return write_out(None, &(serde_json::to_string_pretty(&v)? + "\n"));
            }
            let mut o = String::new();
            o.push_str("NAND presets\n");
            o.push_str(&format!(
                "  {:<10} {:<4} {:>6} {:>6} {:>7} {:>6} {:>5} {:>7} {:>8} {:>8} {:>12} {:>9}\n",
                "name",
                "cell",
                "page",
                "pg/blk",
                "blk/pl",
                "planes",
                "dies",
                "tR",
                "tPROG",
                "tBERS",
                "bus",
                "chip"
            ));
            for n in &nands {
                o.push_str(&format!(
                    "  {:<10} {:<4} {:>6} {:>6} {:>7} {:>6} {:>5} {:>7} {:>8} {:>8} {:>12} {:>9}\n",
                    n.name,
                    n.cell,
                    n.page_size.to_string(),
                    n.pages_per_block,
                    n.blocks_per_plane,
                    n.planes_per_die,
                    n.dies_per_chip,
                    n.t_r.to_string(),
                    n.t_prog.to_string(),
                    n.t_bers.to_string(),
                    format!("{:.1}MB/s", n.bus_rate().mb_per_s()),
                    ssd_core::units::fmt_size(ssd_core::Size(n.chip_bytes())),
                ));
            }
            o.push_str("\nPower presets\n");
            for p in ssd_core::config::PowerConfig::presets() {
                o.push_str(&format!(
                    "  {}: {}\n",
                    p.name,
                    toml::to_string(&p)?.replace('\n', "  ")
                ));
            }
            o.push_str("\nHost interfaces\n");
            for n in ["sata3g", "sata6g", "nvme-gen3x4", "nvme-gen4x4"] {
                let i: ssd_core::config::Interface =
                    serde_json::from_value(serde_json::Value::String(n.to_string()))?;
                let h = ssd_core::config::HostConfig::preset(i);
                o.push_str(&format!(
                    "  {:<12} {:>7.0} MB/s  queue depth {:>5}  command overhead {}\n",
                    n, h.link_mbps, h.queue_depth, h.command_overhead
                ));
            }
            o.push_str(&format!(
                "\nFTLs: {}\nSchedulers: {}\n",
                ftl::FTL_NAMES.join(", "),
                ssdsim::SCHED_NAMES.join(", ")
            ));
            o.push_str("\nDefault device: Lee & Won's reference SSD, 8 channels x 1 chip of chip2, page mapping, op 0.07, SATA 6 Gb/s.\n");
            write_out(None, &o)
        }
    }
}
