//! Command-line arguments, parsed "low" (strings close to the flags) and then
//! turned into configuration through `ssdsim::apply_flag`. `run` takes one value
//! per flag; `sweep` takes comma-separated lists and runs their product.
//!
//! The configuration flags are not written here: they are the library's
//! table (`ssdsim::flags::FLAGS`: name, alias, help, switch, conflicts), from
//! which [`ConfigArgs`] builds its clap arguments, so that a flag is defined
//! once for the program, the builder and `--set`.

use clap::{Arg, ArgAction, ArgMatches, Args, Command, FromArgMatches};
use ssdsim::flags::FLAGS;

/// The flags that select or change the simulated system and workload, as
/// given: (flag name, raw value) in the table's order.
#[derive(Debug, Clone, Default)]
pub struct ConfigArgs {
    given: Vec<(&'static str, String)>,
}

impl ConfigArgs {
    /// (flag name, raw value) for every flag given, in a fixed order (the
    /// order they are applied in; a switch's value is `true`).
    pub fn pairs(&self) -> Vec<(&'static str, String)> {
        self.given.clone()
    }
}

impl FromArgMatches for ConfigArgs {
    fn from_arg_matches(m: &ArgMatches) -> Result<Self, clap::Error> {
        let mut given = Vec::new();
        for f in FLAGS {
            if f.switch {
                if m.get_flag(f.name) {
                    given.push((f.name, "true".to_string()));
                }
            } else if let Some(v) = m.get_one::<String>(f.name) {
                given.push((f.name, v.clone()));
            }
        }
        Ok(ConfigArgs { given })
    }

    fn update_from_arg_matches(&mut self, m: &ArgMatches) -> Result<(), clap::Error> {
        *self = Self::from_arg_matches(m)?;
        Ok(())
    }
}

impl Args for ConfigArgs {
    fn augment_args(mut cmd: Command) -> Command {
        for f in FLAGS {
            let mut a = Arg::new(f.name).long(f.name).help(f.help);
            a = if f.switch {
                a.action(ArgAction::SetTrue)
            } else {
                a.action(ArgAction::Set)
                    .value_name(f.name.to_uppercase().replace('-', "_"))
            };
            if let Some(alias) = f.alias {
                a = a.alias(alias);
            }
            if let Some(c) = f.conflicts {
                a = a.conflicts_with(c);
            }
            cmd = cmd.arg(a);
        }
        cmd
    }

    fn augment_args_for_update(cmd: Command) -> Command {
        Self::augment_args(cmd)
    }
}
