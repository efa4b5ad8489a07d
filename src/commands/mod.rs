//! One module per subcommand; `dispatch` maps the parsed command line to
//! them and decides the exit status.

mod check;
mod cleanup;
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
mod report;
mod run;

use std::path::Path;
use std::process::ExitCode;

use anyhow::{Context, Result};

use crate::cli::{Cli, Command};
use crate::export::CsvOptions;

/// Exit status for invalid experiment files and bad input.
pub const EXIT_INVALID: u8 = 2;
/// Exit status when the runs of a campaign failed: every one of them, or
/// with `run --fail-on-failure` any one.
pub const EXIT_RUNS_FAILED: u8 = 3;
/// Exit status when a campaign was interrupted by a signal.
pub const EXIT_INTERRUPTED: u8 = 130;

pub fn dispatch(cli: Cli) -> Result<ExitCode> {
    crate::console::set_level(match (cli.quiet, cli.verbose) {
        (true, _) => crate::console::Level::Quiet,
        (false, true) => crate::console::Level::Verbose,
        (false, false) => crate::console::Level::Normal,
    });
    crate::console::set_color(match cli.color {
        crate::cli::ColorWhen::Auto => None,
        crate::cli::ColorWhen::Always => Some(anstream::ColorChoice::Always),
        crate::cli::ColorWhen::Never => Some(anstream::ColorChoice::Never),
    });
    match cli.command {
        Command::Run {
            experiment,
            resume,
            tag,
            fail_on_failure,
        } => match resume {
            Some(c) => run::resume(&cli.db, &c, cli.quiet, fail_on_failure),
            None => run::run(
                &cli.db,
                experiment.as_deref(),
                &tag,
                cli.quiet,
                fail_on_failure,
            ),
        },
        Command::Replicate {
            campaign,
            tag,
            fail_on_failure,
        } => run::replicate(
            &cli.db,
            campaign.as_deref(),
            &tag,
            cli.quiet,
            fail_on_failure,
        ),
        Command::Check { experiment } => check::check(&cli.db, experiment.as_deref()),
        Command::Init { file, force } => init::init(&file, force),
        Command::Completions { shell } => generate::completions(shell),
        Command::Man { dir } => generate::man(dir.as_deref()),
        Command::List { filter } => query::list(&cli.db, &filter),
        Command::Show {
            campaign,
            compare_levels,
            warnings,
            format,
        } => query::show(
            &cli.db,
            campaign.as_deref(),
            &compare_levels,
            query::ShowView {
                json: format == crate::cli::CompareFormat::Json,
                every_warning: warnings || cli.verbose,
                verbose: cli.verbose,
            },
        ),
        Command::Export {
            campaign,
            all,
            excel_safe,
            format,
            output,
        } => query::export(
            &cli.db,
            query::Export {
                campaign: campaign.as_deref(),
                all,
                csv: CsvOptions { excel_safe },
                format,
                output: output.as_deref(),
            },
        ),
        Command::Report {
            campaign,
            b,
            output,
            format,
            baseline,
            compare_levels,
            series,
            allow_different,
            metric,
        } => {
            let options = crate::report::outline::Options {
                baseline,
                series,
                compare_levels,
            };
            match b {
                Some(b) => report::report_across(
                    &cli.db,
                    report::Across {
                        a: campaign.as_deref(),
                        b: &b,
                        output: output.as_deref(),
                        format,
                        allow_different,
                        metrics: &metric,
                    },
                    &options,
                ),
                None if allow_different || !metric.is_empty() => {
                    errln!("error: --allow-different and --metric apply to a report comparing two campaigns (storlab report A B)");
                    Ok(ExitCode::from(EXIT_INVALID))
                }
                None => report::report(
                    &cli.db,
                    campaign.as_deref(),
                    output.as_deref(),
                    format,
                    options,
                ),
            }
        }
        Command::Compare {
            a,
            b,
            baseline,
            fail_on_regression,
            caveated_regressions,
            inconclusive,
            baseline_tag,
            allow_different,
            metric,
            format,
        } => compare::compare(
            &cli.db,
            compare::Request {
                a: a.as_deref(),
                b: b.as_deref(),
                baseline: baseline.as_deref(),
                gate: fail_on_regression,
                caveated: caveated_regressions,
                inconclusive,
                baseline_tag: baseline_tag.as_deref(),
                allow_different,
                metrics: &metric,
                json: format == crate::cli::CompareFormat::Json,
            },
        ),
        Command::History {
            experiment,
            by,
            metric,
            format,
            output,
        } => history::history(
            &cli.db,
            history::Request {
                experiment: experiment.as_deref(),
                by: &by,
                metrics: &metric,
                json: format == crate::cli::CompareFormat::Json,
                output: output.as_deref(),
            },
        ),
        Command::Import { stores } => import::import(&cli.db, &stores),
        Command::Forget { campaign, yes } => forget::forget(&cli.db, &campaign, yes),
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
