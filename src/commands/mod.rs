//! One module per subcommand; `dispatch` maps the parsed command line to
//! them and decides the exit status.

/// `print!` for command output: when the reader has gone away
/// (`storlab check x.toml | head`), the command ends quietly instead of
/// panicking on the broken pipe.
macro_rules! out {
    ($($t:tt)*) => { $crate::commands::to_stdout(&format!($($t)*)) };
}

/// `println!` with the same broken-pipe behaviour as [`out!`].
macro_rules! outln {
    () => { $crate::commands::to_stdout("\n") };
    ($($t:tt)*) => { $crate::commands::to_stdout(&format!("{}\n", format!($($t)*))) };
}

mod check;
mod cleanup;
mod compare;
mod kinds;
mod query;
mod report;
mod run;

use std::path::Path;
use std::process::ExitCode;

use anyhow::{Context, Result};

use crate::cli::{Cli, Command};

/// Exit status for invalid experiment files and bad input.
pub const EXIT_INVALID: u8 = 2;
/// Exit status when a campaign was interrupted by a signal.
pub const EXIT_INTERRUPTED: u8 = 130;

pub fn dispatch(cli: Cli) -> Result<ExitCode> {
    match cli.command {
        Command::Run { experiment, resume } => match resume {
            Some(c) => run::resume(&cli.db, &c, cli.quiet),
            None => run::run(&cli.db, experiment.as_deref(), cli.quiet),
        },
        Command::Check { experiment } => check::check(&experiment),
        Command::List => query::list(&cli.db),
        Command::Show { campaign } => query::show(&cli.db, campaign.as_deref()),
        Command::Export {
            campaign,
            format,
            output,
        } => query::export(&cli.db, campaign.as_deref(), format, output.as_deref()),
        Command::Report {
            campaign,
            output,
            format,
            baseline,
            series,
        } => report::report(
            &cli.db,
            campaign.as_deref(),
            output.as_deref(),
            format,
            crate::report::outline::Options { baseline, series },
        ),
        Command::Compare {
            a,
            b,
            baseline,
            fail_on_regression,
        } => compare::compare(
            &cli.db,
            a.as_deref(),
            b.as_deref(),
            baseline.as_deref(),
            fail_on_regression,
        ),
        Command::Targets => kinds::targets(),
        Command::Cleanup => cleanup::cleanup(),
        Command::Workloads => kinds::workloads(),
        Command::Env => {
            outln!(
                "{}",
                serde_json::to_string_pretty(&crate::host::environment())?
            );
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// Writes `text` to `path`, or to stdout when there is none.
pub fn emit(text: &str, path: Option<&Path>) -> Result<()> {
    match path {
        Some(p) => std::fs::write(p, text).with_context(|| format!("writing {}", p.display())),
        None => {
            to_stdout(text);
            Ok(())
        }
    }
}

/// Writes command output to stdout. A closed pipe ends the process with
/// status 0, as `head` expects of its writer; anything is recorded before a
/// command prints, so nothing is lost.
pub(crate) fn to_stdout(text: &str) {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    if let Err(e) = out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            std::process::exit(0);
        }
        eprintln!("error: writing to stdout: {e}");
        std::process::exit(1);
    }
}
