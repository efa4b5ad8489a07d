//! The one outline of every report: lays a campaign's analysis
//! ([`crate::analysis::CampaignAnalysis`], computed once before) out as the
//! [`Document`] — the common sections, and what each workload kind or
//! feature contributes — in reading order: what ran and the headline
//! verdicts, what was compared (with the requested differences that are
//! none), the environment and methodology, each workload, the warnings.
//! The same for two campaigns compared ([`across`]), and for the tables
//! `storlab compare` prints ([`compared_within`], [`compared_across`]).
//! Nothing here reads the store or computes a figure.

use super::contrib::{self, Context};
use super::document::{Document, Section};
use super::sections::ranks;
use super::sections::{
    self, campaign, compared, methodology, overview, percentiles, series, summary, workload,
};
use crate::analysis::comparison::Across;
use crate::analysis::replicas::Replicas;
use crate::analysis::verdict::Verdict;
use crate::analysis::CampaignAnalysis;
use crate::warning::{Warning, WarningKind};

pub use crate::analysis::campaign::Options;

/// The document of a campaign's analysis `a`.
pub fn build(a: &CampaignAnalysis) -> Document {
    document(a, true)
}

/// The part of the document the terminal shows (`show`, `run`'s closing
/// summary): its summary and warnings, built as [`build`] builds them,
/// without the report's body (the per-workload sections, charts and
/// curves no terminal prints).
pub fn terminal(a: &CampaignAnalysis) -> Document {
    document(a, false)
}

fn document(a: &CampaignAnalysis, with_body: bool) -> Document {
    let cx = Context { analysis: a };
    let mut summary = summary::sections(a);
    summary.extend(a.replicas.as_ref().map(sections::replicas::section));
    // The warnings come last, with their evidence; the reader of the
    // verdicts above hears of them at once, a line per kind.
    let by_kind = sections::warnings::by_kind_section(a);
    let headline = campaign::headline_section(a, |w| contrib::headline(cx, w));
    let body = match with_body {
        true => body(cx, headline, &by_kind, &mut summary),
        false => {
            for w in &a.model.workloads {
                summary.extend(contrib::summary(cx, w));
            }
            Vec::new()
        }
    };
    summary.extend(sections::capacity::summary(&a.capacities));
    summary.extend(ranks::summary_sections(a));
    summary.push(by_kind);
    let summary = crate::report::document::merge_titled_lists(summary);
    Document {
        title: campaign::title(&a.about),
        summary,
        body,
        warnings: a.warnings.clone(),
    }
}

/// The report's body, in reading order; each workload's summary sections
/// go to `summary` as its section is made.
fn body(
    cx: Context,
    headline: Section,
    by_kind: &Section,
    summary: &mut Vec<Section>,
) -> Vec<Section> {
    let a = cx.analysis;
    // The answer first: the headline sentences and the warnings by kind,
    // the overview figure, each study's figure; then what was compared and
    // how (folded), each workload (its per-run charts folded), the full
    // warning list (folded).
    let mut body = vec![campaign::intro(&a.about), headline, by_kind.clone()];
    body.extend(overview::section(a));
    body.extend(a.replicas.as_ref().map(sections::replicas::section));
    body.extend(sections::capacity::report(a));
    for s in &a.studies {
        body.push(contrib::study::sections::report(s));
    }
    body.push(contents());
    body.extend(compared::sections(a));
    body.push(campaign::environment_section(&a.about).folded());
    body.push(methodology::section(a).folded());
    let mut thinned_said: Vec<&str> = Vec::new();
    for w in &a.model.workloads {
        // A searched workload never ran itself: its probes did.
        if a.capacities.iter().any(|s| s.workload == w.name) {
            continue;
        }
        summary.extend(contrib::summary(cx, w));
        if !a.laid_out.shows(&w.name) {
            continue;
        }
        // Before the first section of a table some of whose variants are
        // left out, which and why.
        let family = a.stored_workload(&w.name).map(|s| s.family.as_str());
        let thinned = (a.laid_out.thinned.iter()).find(|t| Some(t.family.as_str()) == family);
        if let Some(t) = thinned.filter(|t| !thinned_said.contains(&t.family.as_str())) {
            thinned_said.push(&t.family);
            body.push(workload::thinned(a, t));
        }
        body.push(workload::section(a, w, contrib::values_table(cx, w)));
        let details = contrib::sections(cx, w)
            .into_iter()
            .chain(series::section(a, w))
            .chain(percentiles::section(a, w))
            .chain(ranks::report_section(a, &w.name));
        body.extend(details.map(fold_titled));
    }
    let mut warnings = Section::new(2, "Warnings").with_class("warnings").folded();
    warnings.list(a.model.warnings.iter().map(|w| w.text.clone()).collect());
    body.push(warnings);
    body.retain(|s| !s.is_empty());
    body
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

/// The document comparing campaign `b` against campaign `a` (the
/// baseline), from their comparison `x`: the headline and the caveats
/// before any number, the two campaigns side by side, what differs, then
/// each workload's compared metrics, and each campaign's own warnings (a
/// noisy host, outliers: what makes either side less trustworthy). It has
/// no terminal summary (`storlab compare` prints that comparison); its
/// terminal warnings are the caveats.
pub fn across(x: &Across) -> Document {
    let (a, b) = (&x.baseline, &x.candidate);
    let mut body = vec![sections::across::headline(x)];
    body.extend(overview::across_section(
        a.campaign.id,
        b.campaign.id,
        &x.rows,
    ));
    body.extend(sections::across::caveats(x));
    body.push(contents());
    body.push(sections::across::sides(a, b));
    body.push(sections::across::differences(a, b, &x.differences));
    body.extend(sections::across::workloads(x));
    let mut warnings = Section::new(2, "Warnings").with_class("warnings").folded();
    warnings.list(
        x.warnings
            .iter()
            .map(|(id, w)| format!("campaign {id}: {}", w.text))
            .collect(),
    );
    body.push(warnings);
    body.retain(|s| !s.is_empty());
    Document {
        title: sections::across::title(a, b),
        summary: Vec::new(),
        body,
        warnings: x
            .caveats
            .iter()
            .map(|c| Warning::new(WarningKind::Unlike, c.clone()))
            .collect(),
    }
}

/// What `storlab compare A B` prints, as a document for the terminal
/// renderer (fitted to the width, foreign text made visible): what differs
/// and the caveats, then the rows.
pub fn compared_across(x: &Across) -> Document {
    let (a, b) = (x.baseline.campaign.id, x.candidate.campaign.id);
    let mut head = Section::untitled(2);
    head.text(x.differences.text(a, b).trim_end());
    if !x.caveats.is_empty() {
        let caveats: Vec<String> = x.caveats.iter().map(|c| format!("caveat: {c}")).collect();
        head.text(caveats.join("\n"));
    }
    let mut rows = Section::untitled(2);
    rows.table(sections::comparisons::across_table(&x.rows, a, b));
    Document::terminal_only(
        format!("campaign {b} against campaign {a}"),
        vec![head, rows],
    )
}

/// What `storlab compare A` prints: every target against the baseline
/// of campaign `id`, then its replicas side by side when it has some.
pub fn compared_within(id: i64, rows: &[Verdict], replicas: Option<&Replicas>) -> Document {
    let mut section = Section::untitled(2);
    section.table(sections::comparisons::table(rows));
    let mut all = vec![section];
    all.extend(replicas.map(sections::replicas::section));
    Document::terminal_only(format!("campaign {id}"), all)
}
