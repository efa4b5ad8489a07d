//! `storlab report [CAMPAIGN] -o FILE`: HTML, Markdown, JSON or CSV; and
//! `storlab report A B -o FILE`: a report comparing campaign B against A
//! (HTML, Markdown, or the JSON `compare --format json` writes).

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Result;

use crate::analysis::comparison::across_json;
use crate::cli::ReportFormat;
use crate::export;
use crate::report::drawn::drawn;
use crate::report::outline;
use crate::report::render::{html, markdown, terminal};
use crate::store::{Parts, Store};

pub fn report(
    db: &Path,
    campaign: Option<&str>,
    output: Option<&Path>,
    format: Option<ReportFormat>,
    options: outline::Options,
) -> Result<ExitCode> {
    super::destination::refuse_output_store(output, db)?;
    let given = format.is_some();
    let format = match super::format::choose(format, output, ReportFormat::Html) {
        Ok(f) => f,
        Err(why) => {
            errln!("error: {why}");
            return Ok(ExitCode::from(super::EXIT_INVALID));
        }
    };
    let store = Store::open_for_reading(db)?;
    let id = store.resolve_campaign(campaign)?;
    let data = match format {
        // A document draws the series of a few runs: only those are read.
        ReportFormat::Md | ReportFormat::Html => {
            let data = store.load_campaign_with(id, &Parts::terminal())?;
            let mut data = store.with_replicas(data, &Parts::terminal())?;
            let drawn = drawn(&data, &options);
            store.read_series(&mut data, &drawn)?;
            data
        }
        ReportFormat::Csv | ReportFormat::Json => store.load_campaign(id)?,
    };
    let output = destination(output, given, format, || {
        format!("report-{}.html", data.campaign.id)
    });
    let output = output.as_deref();
    let text = match format {
        ReportFormat::Csv => export::to_csv(&data, export::CsvOptions::default()),
        ReportFormat::Json => format!(
            "{}\n",
            serde_json::to_string_pretty(&export::to_json(&data))?
        ),
        ReportFormat::Md => markdown::render(&outline::build(&data, &options)?)?,
        ReportFormat::Html => html::render(&outline::build(&data, &options)?)?,
    };
    super::emit(&text, output, db)?;
    if let Some(p) = output {
        crate::console::wrote(p);
    }
    Ok(ExitCode::SUCCESS)
}

/// What `storlab report A B` was asked.
#[derive(Debug, Clone)]
pub struct Across<'a> {
    /// The baseline (the latest campaign when omitted).
    pub a: Option<&'a str>,
    pub b: &'a str,
    pub output: Option<&'a Path>,
    pub format: Option<ReportFormat>,
    pub allow_different: bool,
    pub metrics: &'a [String],
}

/// The report comparing campaign B against A; refused as `storlab compare
/// A B` refuses it (workloads run differently, unless allowed).
pub fn report_across(db: &Path, req: Across<'_>, single: &outline::Options) -> Result<ExitCode> {
    if single.baseline.is_some() || !single.series.is_empty() || !single.compare_levels.is_empty() {
        errln!("error: --baseline, --series and --compare-levels apply to the report of one campaign; a report of two campaigns compares each target with itself in the other campaign");
        return Ok(ExitCode::from(super::EXIT_INVALID));
    }
    super::destination::refuse_output_store(req.output, db)?;
    let given = req.format.is_some();
    let format = match super::format::choose(req.format, req.output, ReportFormat::Html) {
        Ok(f) => f,
        Err(why) => {
            errln!("error: {why}");
            return Ok(ExitCode::from(super::EXIT_INVALID));
        }
    };
    if format == ReportFormat::Csv {
        errln!("error: a comparison of two campaigns is written as HTML, Markdown or JSON; `storlab export CAMPAIGN --format csv` writes each campaign's runs as CSV");
        return Ok(ExitCode::from(super::EXIT_INVALID));
    }
    let store = Store::open_for_reading(db)?;
    let first = store.load_campaign(store.resolve_campaign(req.a)?)?;
    let second = store.load_campaign(store.resolve_campaign(Some(req.b))?)?;
    let Some(x) = super::compare::paired(&first, &second, req.metrics, req.allow_different)? else {
        return Ok(ExitCode::from(super::EXIT_INVALID));
    };
    let doc = outline::across(&first, &second, &x)?;
    let output = destination(req.output, given, format, || {
        format!(
            "report-{}-vs-{}.html",
            first.campaign.id, second.campaign.id
        )
    });
    let output = output.as_deref();
    let text = match format {
        ReportFormat::Json => format!(
            "{}\n",
            serde_json::to_string_pretty(&across_json(&first, &second, &x))?
        ),
        ReportFormat::Md => markdown::render(&doc)?,
        // CSV was refused above.
        ReportFormat::Html | ReportFormat::Csv => html::render(&doc)?,
    };
    super::emit(&text, output, db)?;
    if let Some(p) = output {
        crate::console::wrote(p);
    }
    // The caveats go to the terminal as well as to the top of the report.
    crate::console::to_stderr(&terminal::warnings(&doc));
    Ok(ExitCode::SUCCESS)
}

/// Where a report goes: the `-o` file; standard output for a pipe or a
/// file, or when a format was asked for; but the default HTML meant for a
/// terminal goes to `name` in the current directory instead (said as
/// "wrote FILE"), since pages of HTML are of no use on a screen.
fn destination(
    output: Option<&Path>,
    format_given: bool,
    format: ReportFormat,
    name: impl FnOnce() -> String,
) -> Option<PathBuf> {
    match output {
        Some(p) => Some(p.to_path_buf()),
        None if !format_given
            && format == ReportFormat::Html
            && std::io::stdout().is_terminal() =>
        {
            Some(PathBuf::from(name()))
        }
        None => None,
    }
}
