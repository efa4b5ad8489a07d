//! A history ([`crate::analysis::history`]) laid out as a report
//! [`Document`], rendered by the report's own renderers: on the terminal
//! (fitted to its width) one table per series, then its step; as one
//! self-contained HTML page (inline CSS and SVG, no script, no external
//! resource) a chart per series — the mean and 95% band over campaigns,
//! version changes marked, the step drawn where it began — above its step
//! and the same numbers as a table.

use anyhow::Result;

use super::document::{Chart, Document, Section};
use super::format::{effect, human_name, Notation};
use super::render::{html as html_render, terminal};
use super::svg::{target_color, HistoryChart, HistoryPoint};
use super::table::Table;
use super::text::{diff_text, display_unit, estimate_ci_text, mean_ci_text, p_text};
use super::verdict::{words, Form};
use crate::analysis::history::{History, Series, Step, CAPACITY};

const HEADER: [&str; 9] = [
    "campaign",
    "at",
    "tags",
    "changed",
    "runs",
    "mean ± 95% CI",
    "change from previous [95% CI]",
    "p",
    "verdict",
];
const RIGHT: [bool; 9] = [true, false, false, false, true, true, true, true, false];

/// The series' rows, one per campaign, as the tables show them.
fn rows(h: &History, s: &Series) -> Vec<Vec<String>> {
    s.entries
        .iter()
        .enumerate()
        .map(|(i, e)| {
            let point = h.points.iter().find(|p| p.campaign == e.campaign);
            let tags = point
                .map(|p| {
                    p.tags
                        .iter()
                        .map(|(k, v)| format!("{k}={v}"))
                        .collect::<Vec<_>>()
                        .join(" ")
                })
                .unwrap_or_default();
            let compared = e.stats.comparison.is_some();
            vec![
                e.campaign.to_string(),
                point.map(|p| p.label.clone()).unwrap_or_default(),
                tags,
                point.map(changes).unwrap_or_default(),
                e.stats.values.len().to_string(),
                match s.metric == CAPACITY {
                    true => estimate_ci_text(&e.stats, s.unit),
                    false => mean_ci_text(&e.stats, s.unit),
                },
                if compared {
                    diff_text(&e.stats)
                } else {
                    "—".into()
                },
                if compared {
                    p_text(&e.stats)
                } else {
                    "—".into()
                },
                s.verdict(i).map_or("—".into(), |v| words(&v, Form::Bare)),
            ]
        })
        .collect()
}

fn changes(p: &crate::analysis::history::Point) -> String {
    p.version_changes
        .iter()
        .map(|(k, (a, b))| format!("{k}: {a} → {b}"))
        .collect::<Vec<_>>()
        .join("; ")
}

fn title(h: &History) -> String {
    format!(
        "history of `{}` (workloads {}): {} campaign(s)",
        h.experiment,
        h.fingerprint,
        h.points.len()
    )
}

/// `randread on ram: throughput (bw_bytes_per_s, higher)`: the name prose
/// gives the metric, then the stored one scripts and exports use.
fn series_title(s: &Series) -> String {
    let human = human_name(&s.metric);
    let stored = match human == s.metric {
        true => String::new(),
        false => format!("{}, ", s.metric),
    };
    format!(
        "{} on {}: {human} ({stored}{})",
        s.workload,
        s.target,
        s.direction.as_str()
    )
}

/// The history as a report document: the summary (what the terminal
/// prints) a table and a step per series; the body (the HTML page) a
/// chart, the step and the table per series.
pub fn document(h: &History) -> Document {
    let left_out: Vec<String> = h
        .pooled
        .iter()
        .map(|(id, replicas)| {
            let ids: Vec<String> = replicas.iter().map(i64::to_string).collect();
            format!(
                "campaign {id} with its replicas {}: one configuration, their runs pooled",
                ids.join(", ")
            )
        })
        .chain(
            h.left_out
                .iter()
                .map(|(id, why)| format!("left out: campaign {id} {why}")),
        )
        .collect();
    let mut head = Section::untitled(2);
    head.text(title(h));
    let mut summary = vec![head];
    let mut body = Vec::new();
    if !left_out.is_empty() {
        let mut left = Section::untitled(2);
        left.list(left_out);
        summary.push(left.clone());
        body.push(left);
    }
    // The answer first: each series' step (or none), one line each.
    if !h.series.is_empty() {
        let mut headline = Section::untitled(2).with_class("headline");
        headline.list(
            h.series
                .iter()
                .map(|s| format!("{}: {}", series_title(s), step_text(&s.step)))
                .collect(),
        );
        body.push(headline);
    }
    for (i, s) in h.series.iter().enumerate() {
        let mut brief = Section::new(2, series_title(s));
        brief.table(table(h, s));
        brief.text(step_text(&s.step));
        summary.push(brief);
        let mut full = Section::new(2, series_title(s));
        full.chart(Chart::History(chart(h, s, i)));
        body.push(full);
        let mut step = Section::untitled(2).with_class("step");
        step.text(step_text(&s.step));
        step.table(table(h, s));
        body.push(step);
    }
    Document {
        title: title(h),
        summary,
        body,
        warnings: Vec::new(),
    }
}

/// The history as terminal text, fitted to `columns` when given.
pub fn text(h: &History, columns: Option<usize>) -> String {
    terminal::summary(&document(h), columns)
}

/// The history as one HTML page.
pub fn html(h: &History) -> Result<String> {
    html_render::render(&document(h))
}

/// The series' table; a column no campaign fills (no tags, no version
/// changed) left out; on a narrow terminal the run count, the date and p
/// go first, and tags, changes and the verdict wrap.
fn table(h: &History, s: &Series) -> Table {
    let mut t = Table::new(&HEADER, &RIGHT);
    // A capacity is the knee a search found, with its interval: no mean.
    if s.metric == CAPACITY {
        let i = HEADER.iter().position(|x| *x == "mean ± 95% CI");
        t.header[i.expect("a column")] = "capacity [95% CI]".into();
    }
    let rows = rows(h, s);
    for row in &rows {
        t.push(row.clone());
    }
    for col in ["changed", "tags"] {
        let i = HEADER.iter().position(|x| *x == col).expect("a column");
        if rows.iter().all(|r| r[i].is_empty()) {
            t = t.without_column(i);
        }
    }
    t.may_drop(&["runs", "at", "p"]);
    t.may_wrap(&["changed", "tags", "verdict"]);
    t
}

/// The change-point test's answer as a sentence.
pub fn step_text(step: &Step) -> String {
    match step {
        Step::Found { campaign, change_pct, word, test } => format!(
            "step: {} began at campaign {campaign}: {} after it against before ({word}; Pettitt K = {}, p = {:.4})",
            if *word == "slower" { "a regression" } else { "an improvement" },
            effect(*change_pct, Notation::of(&[*change_pct])),
            test.k,
            test.p_value
        ),
        Step::None { test } => format!(
            "no step: the series scatters without a significant change of level (Pettitt p = {:.3})",
            test.p_value
        ),
        Step::Untested => "no change-point test: fewer than two campaigns measured it".into(),
    }
}

fn chart(h: &History, s: &Series, index: usize) -> HistoryChart {
    let max = s
        .entries
        .iter()
        .filter_map(|e| {
            e.stats
                .ci
                .map(|c| c.high)
                .or(e.stats.summary.map(|m| m.mean))
        })
        .fold(0.0f64, f64::max);
    let (scale, unit) = display_unit(s.unit, max);
    let points = s
        .entries
        .iter()
        .filter_map(|e| {
            let mean = e.stats.summary?.mean;
            let point = h.points.iter().find(|p| p.campaign == e.campaign);
            // Campaigns of one minute share a date label: the number
            // tells them apart.
            let shared = |l: &str| h.points.iter().filter(|p| p.label == l).count() > 1;
            let label = match point {
                Some(p) if p.label.is_empty() => format!("#{}", e.campaign),
                Some(p) if shared(&p.label) => format!("#{} {}", e.campaign, p.label),
                Some(p) => p.label.clone(),
                None => format!("#{}", e.campaign),
            };
            let mark = point.map(changes).filter(|c| !c.is_empty());
            Some(HistoryPoint {
                label,
                mean: mean / scale,
                ci: e.stats.ci.map(|c| (c.low / scale, c.high / scale)),
                mark,
            })
        })
        .collect();
    let step_at = match &s.step {
        Step::Found { campaign, .. } => s.entries.iter().position(|e| e.campaign == *campaign),
        _ => None,
    };
    HistoryChart {
        title: series_title(s),
        y_label: format!("{} ({unit})", human_name(&s.metric)),
        points,
        step_at,
        color: target_color(index),
    }
}
