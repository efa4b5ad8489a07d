//! The campaign's own sections: what ran, the headline verdicts and the
//! environment as a spec table.

use serde_json::Value;

use crate::metric::Unit;
use crate::report::document::Section;
use crate::report::format::format_value;
use crate::report::model::{MetricReport, Report, TargetStats, WorkloadReport};
use crate::report::table::Table;
use crate::report::text::{bound_text, change_text, diff_text, interval_text, p_text, settle_text};
use crate::stats::Verdict;
use crate::store::CampaignData;

/// The title of the campaign's report.
pub fn title(c: &CampaignData) -> String {
    format!("{} — campaign {}", c.campaign.name, c.campaign.id)
}

/// The description and what ran, under the title.
pub fn intro(c: &CampaignData) -> Section {
    let k = &c.campaign;
    let mut s = Section::untitled(1);
    if !k.description.is_empty() {
        s.text(k.description.clone());
    }
    s.text(format!(
        "Started {}, {}: {} of {} planned runs ok, {} failed.",
        k.started_at, k.status, k.runs_ok, k.planned_runs, k.runs_failed
    ));
    s
}

/// One line per comparison of a primary metric.
pub fn headline_section(r: &Report) -> Section {
    let mut s = Section::untitled(1).with_class("headline");
    s.list(headline(r));
    s
}

pub fn environment_section(c: &CampaignData) -> Section {
    let mut s = Section::new(2, "Environment");
    s.table(environment_table(&c.environment));
    s
}

/// The environment as a spec table, as the seeds typed it by hand.
fn environment_table(env: &Value) -> Table {
    let mut t = Table::new(&["", ""], &[false, false]);
    let rows = [
        ("Host", env["hostname"].as_str().map(String::from)),
        (
            "CPU",
            env["cpu_model"]
                .as_str()
                .map(|m| format!("{m} ({} CPUs)", env["cpu_count"])),
        ),
        (
            "Memory",
            env["memory_bytes"]
                .as_f64()
                .map(|b| format_value(b, Unit::Bytes)),
        ),
        ("Kernel", env["kernel"].as_str().map(String::from)),
        (
            "Distribution",
            env["distribution"].as_str().map(String::from),
        ),
        ("storlab", env["storlab_version"].as_str().map(String::from)),
        ("Run as root", env["root"].as_bool().map(|b| b.to_string())),
    ];
    for (k, v) in rows {
        t.push(vec![k.into(), v.unwrap_or_else(|| "unknown".into())]);
    }
    t
}

/// A one-line verdict per non-baseline target on the primary metric, in
/// the metric's direction ("takes 20.2% less time", "-64.0% tps"); when
/// the parts of the primary (a matrix's tests) disagree in direction, each
/// part's verdict too.
fn headline(r: &Report) -> Vec<String> {
    let mut out = Vec::new();
    for w in &r.workloads {
        let Some(m) = w.primary_metric() else {
            continue;
        };
        for t in m.targets.iter().filter(|t| t.comparison.is_some()) {
            let mut line = format!("{}: {}", w.name, verdict_sentence(t, m, &r.baseline));
            if let Some(more) = settle_text(t) {
                line.push_str(&format!("; {more}"));
            }
            if let Some(parts) = parts_text(w, m, &t.target) {
                line.push_str(&format!("; {parts}"));
            }
            out.push(line);
        }
    }
    out
}

/// `ram is faster than disk: +68.3% tps [+35.7%, +108.6%] (p 0.009)`, or
/// `no significant difference between …` with the difference and p.
fn verdict_sentence(t: &TargetStats, m: &MetricReport, baseline: &str) -> String {
    let Some(c) = &t.comparison else {
        return String::new();
    };
    match t.verdict {
        Some(v) if v != Verdict::NoSignificantDifference => {
            let (change, named) = change_text(c.diff_pct, &m.name, m.unit);
            let which = match named {
                true => String::new(),
                false => format!("{}, ", m.name),
            };
            format!(
                "{} is {} than {baseline}: {change} {} ({which}p {})",
                t.target,
                v.word(m.direction),
                interval_text(t),
                p_text(t)
            )
        }
        _ => format!(
            "no significant difference between {} and {baseline} ({} {}, p {})",
            t.target,
            m.name,
            diff_text(t),
            p_text(t)
        ),
    }
}

/// The verdict on each part of the primary metric `m` (the same metric
/// with other labels: a matrix's tests) for `target`, when the significant
/// ones do not all point the same way; `None` otherwise.
fn parts_text(w: &WorkloadReport, m: &MetricReport, target: &str) -> Option<String> {
    let of = |p: &MetricReport| p.targets.iter().find(|x| x.target == target).cloned();
    let parts: Vec<(&MetricReport, TargetStats)> = w
        .metrics
        .iter()
        .filter(|p| p.key.name == m.key.name)
        .filter_map(|p| Some((p, of(p)?)))
        .collect();
    let ways: Vec<Verdict> = parts
        .iter()
        .filter_map(|(_, t)| t.verdict)
        .filter(|v| *v != Verdict::NoSignificantDifference)
        .collect();
    if !(ways.contains(&Verdict::Better) && ways.contains(&Verdict::Worse)) {
        return None;
    }
    let by = m
        .key
        .labels
        .iter()
        .chain(parts.iter().flat_map(|(p, _)| p.key.labels.iter()))
        .map(|(k, _)| k.to_string())
        .next()
        .unwrap_or_default();
    let each: Vec<String> = parts
        .iter()
        .filter(|(p, _)| p.key != m.key)
        .filter_map(|(p, t)| {
            let c = t.comparison.as_ref()?;
            let part = match p.key.labels.is_empty() {
                true => "all".to_string(),
                false => p
                    .key
                    .labels
                    .iter()
                    .map(|(_, v)| v)
                    .collect::<Vec<_>>()
                    .join(" "),
            };
            let word = match t.verdict {
                Some(v) if v != Verdict::NoSignificantDifference => v.word(p.direction),
                _ => "n.s.",
            };
            Some(format!("{part} {} {word}", bound_text(c.diff_pct)))
        })
        .collect();
    Some(format!("by {by}, which disagree: {}", each.join(", ")))
}
