//! `storlab report [CAMPAIGN] -o FILE`: HTML, Markdown, JSON or CSV; and
//! `storlab report A B -o FILE`: a report comparing campaign B against A
//! (HTML, Markdown, or the JSON `compare --format json` writes).

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Result;

use crate::analysis::analyse;
use crate::analysis::drawn::drawn;
use crate::cli::{Global, ReportArgs, ReportFormat};
use crate::export;
use crate::report::outline;
use crate::report::render::{html, markdown, terminal};
use crate::store::{CampaignData, Store};

/// `storlab report`: of one campaign, or of B against A.
pub fn report(g: &Global, a: &ReportArgs) -> Result<ExitCode> {
    let options = outline::Options {
        baseline: a.baseline.clone(),
        series: a.series.clone(),
        compare_levels: a.compare_levels.clone(),
        summary_only: false,
        workloads: a.workload.clone(),
    };
    match &a.b {
        Some(b) => report_across(&g.db, a, b, &options),
        None if a.allow_different || !a.metric.is_empty() => {
            errln!("error: --allow-different and --metric apply to a report comparing two campaigns (storlab report A B)");
            Ok(ExitCode::from(super::EXIT_INVALID))
        }
        None => single(&g.db, a, options),
    }
}

/// The report of one campaign.
fn single(db: &Path, a: &ReportArgs, options: outline::Options) -> Result<ExitCode> {
    let (campaign, output, format) = (a.campaign.as_deref(), a.output.as_deref(), a.format);
    super::destination::refuse_output_store(output, db)?;
    let given = format.is_some();
    let format = match super::format::choose(format, output, ReportFormat::Html) {
        Ok(f) => f,
        Err(why) => {
            errln!("error: {why}");
            return Ok(ExitCode::from(super::EXIT_INVALID));
        }
    };
    if !options.workloads.is_empty() && matches!(format, ReportFormat::Csv | ReportFormat::Json) {
        errln!("error: --workload chooses the sections of an HTML or Markdown report; `storlab export` writes every run as CSV or JSON");
        return Ok(ExitCode::from(super::EXIT_INVALID));
    }
    let data = load(db, campaign, format, &options)?;
    let id = data.campaign.id;
    let output = destination(output, given, format, || format!("report-{id}.html"));
    let output = output.as_deref();
    let text = match format {
        ReportFormat::Csv => export::to_csv(&data, export::CsvOptions::default()),
        ReportFormat::Json => format!(
            "{}\n",
            crate::foreign::to_json_pretty(&export::to_json(&data))?
        ),
        ReportFormat::Md => markdown::render(&document(data, &options)?)?,
        ReportFormat::Html => html::render(&document(data, &options)?)?,
    };
    super::emit(&text, output, db)?;
    if let Some(p) = output {
        crate::console::wrote(p);
    }
    Ok(ExitCode::SUCCESS)
}

/// The report's document of `data`, each stage let go once the next is
/// made: the runs as read (225 MB at 10^5 runs over 2,000 variants), then
/// the analysis; they were held until the page was written.
fn document(
    data: CampaignData,
    options: &outline::Options,
) -> Result<crate::report::document::Document> {
    let analysis = analyse(&data, options)?;
    drop(data);
    Ok(outline::build(&analysis))
}

/// The campaign a report of `format` reads: a document reads of each run
/// the figures its sections declare, the telemetry panels' per pair
/// ([`crate::analysis::figures::parts`]), and the series of the few runs
/// it draws.
fn load(
    db: &Path,
    campaign: Option<&str>,
    format: ReportFormat,
    options: &outline::Options,
) -> Result<CampaignData> {
    let store = Store::open_for_reading(db)?;
    let id = store.resolve_campaign(campaign)?;
    if matches!(format, ReportFormat::Csv | ReportFormat::Json) {
        return store.load_campaign(id);
    }
    let mut data = super::query::read_for(&store, id, options)?;
    let drawn = drawn(&data, options);
    store.read_series(&mut data, &drawn)?;
    Ok(data)
}

/// The report comparing campaign B against A; refused as `storlab compare
/// A B` refuses it (workloads run differently, unless allowed).
fn report_across(
    db: &Path,
    req: &ReportArgs,
    b: &str,
    single: &outline::Options,
) -> Result<ExitCode> {
    let output = req.output.as_deref();
    super::destination::refuse_output_store(output, db)?;
    let Some(format) = across_format(req, single) else {
        return Ok(ExitCode::from(super::EXIT_INVALID));
    };
    let store = Store::open_for_reading(db)?;
    let load = |c: Option<&str>| store.load_campaign(store.resolve_campaign(c)?);
    let (first, second) = (load(req.campaign.as_deref())?, load(Some(b))?);
    let Some(x) = super::compare::paired(&first, &second, &req.metric, req.allow_different)? else {
        return Ok(ExitCode::from(super::EXIT_INVALID));
    };
    let doc = outline::across(&x);
    let (ida, idb) = (first.campaign.id, second.campaign.id);
    let output = destination(output, req.format.is_some(), format, || {
        format!("report-{ida}-vs-{idb}.html")
    });
    let output = output.as_deref();
    let text = match format {
        ReportFormat::Json => format!(
            "{}\n",
            crate::foreign::to_json_pretty(&crate::report::json::across(&x))?
        ),
        ReportFormat::Md => markdown::render(&doc)?,
        // CSV was refused by across_format.
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

/// The format of a report of two campaigns; `None` once said why there
/// is none (an option of one campaign's report, CSV, an unknown name).
fn across_format(req: &ReportArgs, single: &outline::Options) -> Option<ReportFormat> {
    if single.baseline.is_some()
        || !single.series.is_empty()
        || !single.compare_levels.is_empty()
        || !single.workloads.is_empty()
    {
        errln!("error: --baseline, --series, --compare-levels and --workload apply to the report of one campaign; a report of two campaigns compares each target with itself in the other campaign");
        return None;
    }
    match super::format::choose(req.format, req.output.as_deref(), ReportFormat::Html) {
        Ok(ReportFormat::Csv) => {
            errln!("error: a comparison of two campaigns is written as HTML, Markdown or JSON; `storlab export CAMPAIGN --format csv` writes each campaign's runs as CSV");
            None
        }
        Ok(f) => Some(f),
        Err(why) => {
            errln!("error: {why}");
            None
        }
    }
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
