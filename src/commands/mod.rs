//! One module per subcommand; `dispatch` maps the parsed command line to
//! them and decides the exit status.

mod check;
mod cleanup;
mod cleanup_roots;
mod compare;
mod destination;
mod experiment_file;
mod forget;
mod format;
mod generate;
mod history;
mod import;
mod init;
mod kinds;
mod query;
mod refusals;
mod replicate;
mod report;
mod run;

use std::path::Path;
use std::process::ExitCode;

use anyhow::{Context, Result};

use crate::cli::{Cli, Command};

/// Exit status of a release gate that fails (`compare
/// --fail-on-regression`): a regression, or under `--inconclusive fail` an
/// inconclusive comparison that may hide one.
pub const EXIT_REGRESSION: u8 = 1;
/// Exit status for invalid experiment files and bad input.
pub const EXIT_INVALID: u8 = 2;
/// Exit status when the runs of a campaign failed: every one of them, or
/// with `run --fail-on-failure` any one.
pub const EXIT_RUNS_FAILED: u8 = 3;
/// Exit status when a campaign was interrupted by a signal.
pub const EXIT_INTERRUPTED: u8 = 130;

/// Runs the parsed command line: each subcommand's arguments, typed once
/// by clap ([`crate::cli`]), go to its module as they are.
pub fn dispatch(cli: Cli) -> Result<ExitCode> {
    let g = &cli.global;
    crate::console::set_level(match (g.quiet, g.verbose) {
        (true, _) => crate::console::Level::Quiet,
        (false, true) => crate::console::Level::Verbose,
        (false, false) => crate::console::Level::Normal,
    });
    crate::console::set_color(match g.color {
        crate::cli::ColorWhen::Auto => None,
        crate::cli::ColorWhen::Always => Some(anstream::ColorChoice::Always),
        crate::cli::ColorWhen::Never => Some(anstream::ColorChoice::Never),
    });
    match &cli.command {
        Command::Run(a) => run::run(g, a),
        Command::Replicate(a) => replicate::replicate(g, a),
        Command::Check(a) => check::check(g, a),
        Command::Init(a) => init::init(a),
        Command::Completions(a) => generate::completions(a),
        Command::Man(a) => generate::man(a),
        Command::List(a) => query::list(g, a),
        Command::Show(a) => query::show(g, a),
        Command::Export(a) => query::export(g, a),
        Command::Report(a) => report::report(g, a),
        Command::Compare(a) => compare::compare(g, a),
        Command::History(a) => history::history(g, a),
        Command::Import(a) => import::import(g, a),
        Command::Forget(a) => forget::forget(g, a),
        Command::Targets => kinds::targets(),
        Command::Workloads => kinds::workloads(),
        Command::Cleanup(a) => match a.roots {
            true => cleanup_roots::roots(&a.remove),
            false => cleanup::cleanup(),
        },
        Command::Env => env(),
    }
}

/// `storlab env`: the environment facts, as JSON.
fn env() -> Result<ExitCode> {
    outln!(
        "{}",
        crate::foreign::to_json_pretty(&crate::host::environment())?
    );
    Ok(ExitCode::SUCCESS)
}

/// Writes what `write` makes to `path`, or to stdout when there is none,
/// as it is made (an export of 10^5 runs is never held whole in memory);
/// never over the store at `db`. A file is written beside `path` and
/// renamed to it once whole: an export that fails midway leaves none. A
/// reader gone from stdout (a broken pipe, `| head`) ends storlab
/// quietly, as [`emit`] does.
pub fn emit_streaming(
    path: Option<&Path>,
    db: &Path,
    write: impl FnOnce(&mut dyn std::io::Write) -> Result<()>,
) -> Result<()> {
    use std::io::Write;
    match path {
        Some(p) => {
            destination::refuse_store(p, db)?;
            destination::write_replacing(p, write)
        }
        None => {
            let mut out = std::io::BufWriter::with_capacity(1 << 16, std::io::stdout().lock());
            match write(&mut out).and_then(|()| Ok(out.flush()?)) {
                Err(e) if broken_pipe(&e) => std::process::exit(0),
                other => other.context("writing to stdout"),
            }
        }
    }
}

fn broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}

/// Writes `text` to `path`, or to stdout when there is none; never over
/// the store at `db`.
pub fn emit(text: &str, path: Option<&Path>, db: &Path) -> Result<()> {
    match path {
        Some(p) => {
            destination::refuse_store(p, db)?;
            std::fs::write(p, text).with_context(|| format!("writing {}", p.display()))
        }
        None => {
            crate::console::to_stdout(text);
            Ok(())
        }
    }
}
