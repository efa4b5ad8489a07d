//! The JSON summaries, for scripts and pipelines: what `storlab show
//! --format json` prints of a campaign's analysis, and what `storlab
//! compare --format json` (and `storlab report A B --format json`) prints
//! of a comparison. Laid out from the analysis, as every other output; each
//! verdict with the very words the terminal, Markdown and HTML give it
//! ([`words`]).

use serde_json::{json, Value};

use super::sections::across;
use super::sections::warnings::kind_line;
use super::verdict::{words, Form};
use crate::analysis::about::About;
use crate::analysis::comparison::Across;
use crate::analysis::replicas::Replicas;
use crate::analysis::verdict::Verdict;
use crate::analysis::CampaignAnalysis;

/// What `storlab show --format json` prints: the campaign, its
/// provenance, the model (each workload's metrics, their statistics and
/// verdicts against the baseline, every warning with its kind), the
/// warnings counted by kind, the headline's sentences and every verdict in
/// words.
pub fn summary(a: &CampaignAnalysis) -> Value {
    let model = &a.model;
    let by_kind: Vec<Value> = a
        .by_kind
        .iter()
        .map(|k| {
            json!({
                "kind": k.kind,
                "warnings": k.lines,
                "runs": k.runs,
                "pairs": k.pairs.iter().map(|(w, t)| json!({"workload": w, "target": t})).collect::<Vec<_>>(),
                "evidence": k.evidence.iter().map(|e| json!({"metric": e.metric.name, "low": e.low, "high": e.high})).collect::<Vec<_>>(),
                "line": kind_line(a, k),
            })
        })
        .collect();
    json!({
        "campaign": a.about.campaign,
        "provenance": a.about.facts,
        "baseline": model.baseline,
        "targets": model.targets,
        "workloads": model.workloads,
        "warnings": a.warnings,
        "warnings_by_kind": by_kind,
        "capacities": a.capacities,
        "headline": a.headline.iter().map(|s| words(s, Form::Headline)).collect::<Vec<_>>(),
        "verdicts": a.verdicts.iter().map(said).collect::<Vec<_>>(),
        "replicas": a.replicas,
    })
}

/// One verdict of a campaign and its words: the sentence the report's
/// headline gives it, the summary table's cell (what `storlab show`
/// prints), the table of differences' cell.
fn said(v: &Verdict) -> Value {
    json!({
        "workload": v.workload,
        "metric": v.metric,
        "primary": v.primary,
        "target": v.candidate.target,
        "candidate": v.candidate_label,
        "baseline": v.baseline_label,
        "outcome": v.outcome(),
        "sentence": words(v, Form::Headline),
        "summary": words(v, Form::Summary),
        "detail": words(v, Form::Detail),
    })
}

/// A comparison across campaigns as JSON, for pipelines: both sides'
/// identities, tags and versions, then the comparison.
pub fn across(x: &Across) -> Value {
    json!({
        "baseline": side(&x.baseline),
        "candidate": side(&x.candidate),
        "headline": x.differences.headline(),
        "differences": x.differences,
        "caveats": x.caveats,
        "rows": x.rows,
        "verdicts": across::verdicts(x),
    })
}

/// Every target of campaign `c` against its baseline, as JSON, with its
/// replicas side by side when it has some.
pub fn within(c: &About, rows: &[Verdict], replicas: Option<&Replicas>) -> Value {
    json!({ "campaign": side(c), "rows": rows, "replicas": replicas })
}

/// One campaign of a comparison, as JSON.
fn side(c: &About) -> Value {
    json!({
        "id": c.campaign.id,
        "name": c.campaign.name,
        "started_at": c.campaign.started_at,
        "uuid": c.facts.uuid,
        "tags": c.facts.provenance.tags,
        "versions": c.facts.provenance.versions,
        "storlab_version": c.campaign.storlab_version,
    })
}
