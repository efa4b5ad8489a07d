//! `storlab list`, `show` and `export`: read-only views of the store.

use std::path::Path;
use std::process::ExitCode;

use anyhow::Result;

use crate::cli::ExportFormat;
use crate::foreign::visible;
use crate::report::export::{to_csv_all, to_json, CsvOptions};
use crate::report::outline;
use crate::report::render::terminal;
use crate::report::table::Table;
use crate::store::Store;

pub fn list(db: &Path, filters: &[String]) -> Result<ExitCode> {
    let filters = crate::provenance::parse_tags(filters)?;
    let store = Store::open_for_reading(db)?;
    let matching = store.campaigns_matching(&filters)?;
    let mut t = Table::new(
        &[
            "id", "name", "status", "started", "runs ok", "failed", "planned", "tags",
        ],
        &[true, false, false, false, true, true, true, false],
    );
    for c in store.list_campaigns()? {
        if !matching.contains(&c.id) {
            continue;
        }
        let tags = store.campaign_facts(c.id)?.provenance.tags;
        let tags: Vec<String> = tags
            .iter()
            .map(|(k, v)| visible(&format!("{k}={v}")).into_owned())
            .collect();
        t.push(vec![
            c.id.to_string(),
            visible(&c.name).into_owned(),
            visible(&c.status).into_owned(),
            visible(&c.started_at).into_owned(),
            c.runs_ok.to_string(),
            c.runs_failed.to_string(),
            c.planned_runs.to_string(),
            tags.join(" "),
        ]);
    }
    out!("{}", t.render_text());
    Ok(ExitCode::SUCCESS)
}

/// How `storlab show` prints.
#[derive(Debug, Clone, Copy)]
pub struct ShowView {
    /// JSON rather than text.
    pub json: bool,
    /// Every warning rather than a line per kind.
    pub every_warning: bool,
    /// Also the provenance header.
    pub verbose: bool,
}

pub fn show(
    db: &Path,
    campaign: Option<&str>,
    compare_levels: &[String],
    view: ShowView,
) -> Result<ExitCode> {
    let store = Store::open_for_reading(db)?;
    let data = store.load_campaign(store.resolve_campaign(campaign)?)?;
    let options = outline::Options {
        compare_levels: compare_levels.to_vec(),
        ..Default::default()
    };
    if view.json {
        let json = outline::summary_json(&data, &options)?;
        out!("{}\n", serde_json::to_string_pretty(&json)?);
        return Ok(ExitCode::SUCCESS);
    }
    let doc = outline::build(&data, &options)?;
    let view = terminal::View {
        columns: crate::console::columns(),
        verbose: view.verbose,
        every_warning: view.every_warning,
    };
    crate::console::to_stdout_styled(&terminal::summary_for(&doc, view));
    // Warnings are for the reader, not for the table a script parses.
    crate::console::to_stderr(&terminal::warnings_for(&doc, view));
    Ok(ExitCode::SUCCESS)
}

/// What `storlab export` was asked.
#[derive(Debug, Clone, Copy)]
pub struct Export<'a> {
    /// The campaign (the latest when omitted), unless `all`.
    pub campaign: Option<&'a str>,
    /// Every campaign in the store.
    pub all: bool,
    pub csv: CsvOptions,
    pub format: Option<ExportFormat>,
    pub output: Option<&'a Path>,
}

pub fn export(db: &Path, ask: Export<'_>) -> Result<ExitCode> {
    super::destination::refuse_output_store(ask.output, db)?;
    let format = match super::format::choose(ask.format, ask.output, ExportFormat::Csv) {
        Ok(f) => f,
        Err(why) => {
            errln!("error: {why}");
            return Ok(ExitCode::from(super::EXIT_INVALID));
        }
    };
    if ask.csv.excel_safe && format != ExportFormat::Csv {
        errln!("error: --excel-safe applies to CSV; JSON holds every value as it is");
        return Ok(ExitCode::from(super::EXIT_INVALID));
    }
    let store = Store::open_for_reading(db)?;
    let ids = match ask.all {
        true => store.list_campaigns()?.iter().map(|c| c.id).collect(),
        false => vec![store.resolve_campaign(ask.campaign)?],
    };
    let campaigns = ids
        .into_iter()
        .map(|id| store.load_campaign(id))
        .collect::<Result<Vec<_>>>()?;
    let text = match format {
        ExportFormat::Csv => to_csv_all(&campaigns, ask.csv),
        ExportFormat::Json if ask.all => {
            let all: Vec<_> = campaigns.iter().map(to_json).collect();
            format!("{}\n", serde_json::to_string_pretty(&all)?)
        }
        ExportFormat::Json => format!(
            "{}\n",
            serde_json::to_string_pretty(&to_json(&campaigns[0]))?
        ),
    };
    super::emit(&text, ask.output, db)?;
    if let Some(p) = ask.output {
        crate::console::wrote(p);
    }
    Ok(ExitCode::SUCCESS)
}
