//! The one outline of every report: builds the [`Document`] of a campaign
//! from the store — the model once, the latency curves from the stored
//! histograms, the common sections, and what each workload kind or feature
//! contributes — in reading order: what ran and the headline verdicts,
//! what was compared (with the requested differences that are none), the
//! environment and methodology, each workload, the warnings. Any error in
//! the data surfaces here.

use anyhow::Result;

use super::contrib::{self, Context};
use super::document::{Document, Section};
use super::sections::ranks;
use super::sections::{
    self, campaign, compared, methodology, overview, percentiles, requested, series, summary,
    workload,
};
use crate::analysis::comparison::Across;
use crate::analysis::latency::curves;
use crate::analysis::{self, chosen, model};
use crate::store::CampaignData;
use crate::warning::{Warning, WarningKind};

/// What a reader asked of the report beyond the campaign.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// A target to compare against in place of the campaign's baseline.
    pub baseline: Option<String>,
    /// Series to chart over time beside each workload's primary metric's.
    pub series: Vec<String>,
    /// Swept parameters whose levels to compare on each target, beside
    /// those the experiment names.
    pub compare_levels: Vec<String>,
}

/// The document of campaign `c`.
pub fn build(c: &CampaignData, options: &Options) -> Result<Document> {
    document(c, options, true)
}

/// The part of campaign `c`'s document the terminal shows (`show`, `run`'s
/// closing summary): its summary and warnings, built as [`build`] builds
/// them, without the report's body (the per-workload sections, charts and
/// curves no terminal prints).
pub fn terminal(c: &CampaignData, options: &Options) -> Result<Document> {
    document(c, options, false)
}

/// What the analysis is asked, of what the report is asked.
fn asked(options: &Options) -> analysis::campaign::Options {
    analysis::campaign::Options {
        baseline: options.baseline.clone(),
        compare_levels: options.compare_levels.clone(),
    }
}

fn document(c: &CampaignData, options: &Options, with_body: bool) -> Result<Document> {
    let analysis = analysis::analyse(c, &asked(options))?;
    let model = &analysis.model;
    let cx = Context {
        campaign: c,
        analysis: &analysis,
    };
    let mut summary = summary::sections(c, &analysis);
    summary.extend(analysis.replicas.as_ref().map(sections::replicas::section));
    let setup = requested::warnings(c, &model.baseline);
    let all_warnings = every_warning(&setup, model);
    // The warnings come last, with their evidence; the reader of the
    // verdicts above hears of them at once, a line per kind.
    let counts = crate::analysis::warnings::by_kind(c, model, &all_warnings);
    let by_kind = sections::warnings::by_kind_section(c, model, &counts);
    let headline = campaign::headline_section(&analysis, |w| contrib::headline(cx, w));
    let mut summary_only = Vec::new();
    if !with_body {
        for w in &model.workloads {
            summary_only.extend(contrib::summary(cx, w)?);
        }
    }
    let body = match with_body {
        true => body(
            c,
            cx,
            &options.series,
            headline,
            &by_kind,
            &setup,
            &mut summary,
        )?,
        false => Vec::new(),
    };
    summary.extend(summary_only);
    summary.extend(ranks::summary_sections(c));
    summary.push(by_kind);
    let summary = crate::report::document::merge_titled_lists(summary);
    Ok(Document {
        title: campaign::title(c),
        summary,
        body,
        warnings: all_warnings,
    })
}

/// The report's body, in reading order; each workload's summary sections
/// go to `summary` as its section is made.
fn body(
    c: &CampaignData,
    cx: Context,
    series: &[String],
    headline: Section,
    by_kind: &Section,
    setup: &[String],
    summary: &mut Vec<Section>,
) -> Result<Vec<Section>> {
    let model = &cx.analysis.model;
    let curves = curves(c)?;
    // The answer first: the headline sentences and the warnings by kind,
    // the overview figure, each study's figure; then what was compared and
    // how (folded), each workload (its per-run charts folded), the full
    // warning list (folded).
    let mut body = vec![campaign::intro(c), headline, by_kind.clone()];
    body.extend(overview::section(c, cx.analysis));
    body.extend(
        cx.analysis
            .replicas
            .as_ref()
            .map(sections::replicas::section),
    );
    for s in &cx.analysis.studies {
        body.push(contrib::study::sections::report(s));
    }
    body.push(contents());
    body.extend(compared::sections(c, &model.baseline, setup));
    body.push(campaign::environment_section(c).folded());
    body.push(methodology::section(c, model).folded());
    for w in &model.workloads {
        summary.extend(contrib::summary(cx, w)?);
        body.push(workload::section(
            c,
            cx.analysis,
            w,
            contrib::values_table(cx, w),
        ));
        let details = contrib::sections(cx, w)?
            .into_iter()
            .chain(series::section(c, w, series))
            .chain(percentiles::section(c, w, &curves))
            .chain(ranks::report_section(c, &w.name));
        body.extend(details.map(fold_titled));
    }
    let mut warnings = Section::new(2, "Warnings").with_class("warnings").folded();
    warnings.list(model.warnings.iter().map(|w| w.text.clone()).collect());
    body.push(warnings);
    body.retain(|s| !s.is_empty());
    Ok(body)
}

/// The table of contents, after the answer.
fn contents() -> Section {
    let mut s = Section::untitled(2);
    s.contents();
    s
}

/// A titled section folded; an untitled one (a continuation) as it is.
fn fold_titled(s: Section) -> Section {
    match s.title.is_empty() {
        true => s,
        false => s.folded(),
    }
}

/// What the configuration did not compare (a requested setting that did
/// not take), then the model's warnings.
fn every_warning(setup: &[String], model: &model::Report) -> Vec<Warning> {
    setup
        .iter()
        .map(|s| Warning::new(WarningKind::Setting, s.clone()))
        .chain(model.warnings.iter().cloned())
        .collect()
}

/// What `storlab show --format json` prints: the campaign, its
/// provenance, the model (each workload's metrics, their statistics and
/// verdicts against the baseline, every warning with its kind) and the
/// warnings counted by kind.
pub fn summary_json(c: &CampaignData, options: &Options) -> Result<serde_json::Value> {
    let analysis = analysis::analyse(c, &asked(options))?;
    let model = &analysis.model;
    let warnings = every_warning(&requested::warnings(c, &model.baseline), model);
    let counts = crate::analysis::warnings::by_kind(c, model, &warnings);
    let by_kind: Vec<serde_json::Value> = counts
        .iter()
        .map(|k| {
            serde_json::json!({
                "kind": k.kind,
                "warnings": k.lines,
                "runs": k.runs,
                "pairs": k.pairs.iter().map(|(w, t)| serde_json::json!({"workload": w, "target": t})).collect::<Vec<_>>(),
                "evidence": k.evidence.iter().map(|e| serde_json::json!({"metric": e.metric.name, "low": e.low, "high": e.high})).collect::<Vec<_>>(),
                "line": sections::warnings::kind_line(c, model, k),
            })
        })
        .collect();
    Ok(serde_json::json!({
        "campaign": c.campaign,
        "provenance": c.facts,
        "baseline": model.baseline,
        "targets": model.targets,
        "workloads": model.workloads,
        "warnings": warnings,
        "warnings_by_kind": by_kind,
        "replicas": analysis.replicas,
    }))
}

/// The document comparing campaign `b` against campaign `a` (the
/// baseline), from their comparison `x`: the headline and the caveats
/// before any number, the two campaigns side by side, what differs, then
/// each workload's compared metrics, and each campaign's own warnings (a
/// noisy host, outliers: what makes either side less trustworthy). It has
/// no terminal summary (`storlab compare` prints that comparison); its
/// terminal warnings are the caveats.
pub fn across(a: &CampaignData, b: &CampaignData, x: &Across) -> Result<Document> {
    let mut body = vec![sections::across::headline(a, b, x)];
    body.extend(overview::across_section(
        a.campaign.id,
        b.campaign.id,
        &x.rows,
    ));
    body.extend(sections::across::caveats(x));
    body.push(contents());
    body.push(sections::across::sides(a, b));
    body.push(sections::across::differences(a, b, &x.differences));
    body.extend(sections::across::workloads(a, b, x));
    let mut warnings = Section::new(2, "Warnings").with_class("warnings").folded();
    let mut each = Vec::new();
    for c in [a, b] {
        let m = model::build(c, None, &chosen::choose)?;
        let id = c.campaign.id;
        each.extend(
            m.warnings
                .into_iter()
                .map(|w| format!("campaign {id}: {}", w.text)),
        );
    }
    warnings.list(each);
    body.push(warnings);
    body.retain(|s| !s.is_empty());
    Ok(Document {
        title: sections::across::title(a, b),
        summary: Vec::new(),
        body,
        warnings: x
            .caveats
            .iter()
            .map(|c| Warning::new(WarningKind::Unlike, c.clone()))
            .collect(),
    })
}
