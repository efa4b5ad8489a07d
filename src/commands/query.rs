//! `storlab list`, `show` and `export`: read-only views of the store.

use std::process::ExitCode;

use anyhow::Result;
use std::io::Write;

use crate::analysis::CampaignAnalysis;
use crate::cli::ExportFormat;
use crate::cli::{ExportArgs, Global, ListArgs, ShowArgs};
use crate::export::{Columns, CsvOptions, CsvWriter, StreamedDocument};
use crate::foreign::visible;
use crate::report::outline;
use crate::report::render::terminal;
use crate::report::table::Table;
use crate::store::{CampaignData, Store};

pub fn list(g: &Global, a: &ListArgs) -> Result<ExitCode> {
    let filters = crate::provenance::parse_tags(&a.filter)?;
    let store = Store::open_for_reading(&g.db)?;
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

pub fn show(g: &Global, a: &ShowArgs) -> Result<ExitCode> {
    let store = Store::open_for_reading(&g.db)?;
    let id = store.resolve_campaign(a.campaign.as_deref())?;
    let options = outline::Options {
        compare_levels: a.compare_levels.clone(),
        summary_only: true,
        ..Default::default()
    };
    let (_, analysis) = analysed(&store, id, &options)?;
    if a.format.json() {
        let json = crate::report::json::summary(&analysis);
        out!("{}\n", crate::foreign::to_json_pretty(&json)?);
        return Ok(ExitCode::SUCCESS);
    }
    let doc = outline::terminal(&analysis);
    let view = terminal::View {
        columns: crate::console::columns(),
        verbose: g.verbose,
        every_warning: a.warnings || g.verbose,
    };
    crate::console::to_stdout_styled(&terminal::summary_for(&doc, view));
    // Warnings are for the reader, not for the table a script parses.
    crate::console::to_stderr(&terminal::warnings_for(&doc, view));
    Ok(ExitCode::SUCCESS)
}

/// Campaign `id` (with its replicas) analysed for `options`, its runs
/// read for what the analysis' sections read ([`crate::analysis::figures`]),
/// and the campaign as read.
pub(super) fn analysed(
    store: &Store,
    id: i64,
    options: &outline::Options,
) -> Result<(CampaignData, CampaignAnalysis)> {
    let data = read_for(store, id, options)?;
    let analysis = crate::analysis::analyse(&data, options)?;
    Ok((data, analysis))
}

/// Campaign `id` with its replicas, its runs read for what the analysis'
/// sections read for `options` ([`crate::analysis::figures`]).
pub(super) fn read_for(store: &Store, id: i64, options: &outline::Options) -> Result<CampaignData> {
    let head = store.load_campaign_head(id)?;
    let parts = crate::analysis::figures::parts(&head, options);
    let data = store.with_runs(head, &parts)?;
    store.with_replicas(data, &parts)
}

pub fn export(g: &Global, ask: &ExportArgs) -> Result<ExitCode> {
    let (db, output) = (g.db.as_path(), ask.output.as_deref());
    let csv = CsvOptions {
        excel_safe: ask.excel_safe,
    };
    super::destination::refuse_output_store(output, db)?;
    let format = match super::format::choose(ask.format, output, ExportFormat::Csv) {
        Ok(f) => f,
        Err(why) => {
            errln!("error: {why}");
            return Ok(ExitCode::from(super::EXIT_INVALID));
        }
    };
    if ask.excel_safe && format != ExportFormat::Csv {
        errln!("error: --excel-safe applies to CSV; JSON holds every value as it is");
        return Ok(ExitCode::from(super::EXIT_INVALID));
    }
    let store = Store::open_for_reading(db)?;
    let ids: Vec<i64> = match ask.all {
        true => store.list_campaigns()?.iter().map(|c| c.id).collect(),
        false => vec![store.resolve_campaign(ask.campaign.as_deref())?],
    };
    // Written as it is made, one campaign in memory at a time.
    super::emit_streaming(output, db, |out| match format {
        ExportFormat::Csv => export_csv(&store, &ids, csv, out),
        ExportFormat::Json => export_json(&store, &ids, ask.all, out),
    })?;
    if let Some(p) = output {
        crate::console::wrote(p);
    }
    Ok(ExitCode::SUCCESS)
}

/// The JSON export: every campaign of `ids` as an array with `all`, else
/// the one campaign.
fn export_json(store: &Store, ids: &[i64], all: bool, out: &mut dyn Write) -> Result<()> {
    match all {
        true => crate::foreign::write_json_pretty(&mut *out, &Campaigns(store, ids))?,
        false => {
            let head = store.load_campaign_head(ids[0])?;
            crate::foreign::write_json_pretty(&mut *out, &streamed(store, &head))?
        }
    }
    Ok(writeln!(out)?)
}

/// Runs an export holds in memory at once, whatever the campaign's size.
const EXPORT_CHUNK: usize = 1000;

fn streamed<'a>(store: &'a Store, head: &'a CampaignData) -> StreamedDocument<'a> {
    StreamedDocument {
        head,
        store,
        chunk: EXPORT_CHUNK,
    }
}

/// The tidy CSV of campaigns `ids` under one header, read twice (their
/// columns, then their rows), [`EXPORT_CHUNK`] runs in memory at a time.
fn export_csv(store: &Store, ids: &[i64], options: CsvOptions, out: &mut dyn Write) -> Result<()> {
    let mut cols = Columns::default();
    for &id in ids {
        let c = store.load_campaign_head(id)?;
        cols.add_head(&c);
        store.each_run_chunk(&c, EXPORT_CHUNK, |runs| {
            cols.add_runs(runs);
            Ok(())
        })?;
    }
    let mut w = CsvWriter::new(cols, options, out)?;
    for &id in ids {
        let c = store.load_campaign_head(id)?;
        store.each_run_chunk(&c, EXPORT_CHUNK, |runs| Ok(w.runs(&c, runs)?))?;
    }
    w.finish()?;
    Ok(())
}

/// Every campaign of `export --all --format json` as one JSON array, each
/// read from the store only as it is written.
struct Campaigns<'a>(&'a Store, &'a [i64]);

impl serde::Serialize for Campaigns<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        use serde::ser::{Error, SerializeSeq};
        let mut seq = s.serialize_seq(Some(self.1.len()))?;
        for &id in self.1 {
            let c = self
                .0
                .load_campaign_head(id)
                .map_err(|e| S::Error::custom(format!("{e:#}")))?;
            seq.serialize_element(&streamed(self.0, &c))?;
        }
        seq.end()
    }
}
