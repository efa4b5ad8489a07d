//! `storlab report [CAMPAIGN] -o FILE`: HTML, Markdown, JSON or CSV.

use std::path::Path;
use std::process::ExitCode;

use anyhow::Result;

use crate::cli::ReportFormat;
use crate::report::render::{html, markdown};
use crate::report::{export, outline};
use crate::store::Store;

pub fn report(
    db: &Path,
    campaign: Option<&str>,
    output: Option<&Path>,
    format: Option<ReportFormat>,
    options: outline::Options,
) -> Result<ExitCode> {
    let format = match super::format::choose(format, output, ReportFormat::Html) {
        Ok(f) => f,
        Err(why) => {
            errln!("error: {why}");
            return Ok(ExitCode::from(super::EXIT_INVALID));
        }
    };
    let store = Store::open_existing(db)?;
    let data = store.load_campaign(store.resolve_campaign(campaign)?)?;
    let text = match format {
        ReportFormat::Csv => export::to_csv(&data),
        ReportFormat::Json => format!(
            "{}\n",
            serde_json::to_string_pretty(&export::to_json(&data))?
        ),
        ReportFormat::Md => markdown::render(&outline::build(&data, &options)?)?,
        ReportFormat::Html => html::render(&outline::build(&data, &options)?)?,
    };
    super::emit(&text, output)?;
    if let Some(p) = output {
        crate::console::wrote(p);
    }
    Ok(ExitCode::SUCCESS)
}
