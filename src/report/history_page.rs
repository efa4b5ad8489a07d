//! A history ([`crate::analysis::history`]) laid out: as terminal text (one table per
//! series, then its step) and as one self-contained HTML page (inline CSS
//! and SVG, no script, no external resource) with a chart per series — the
//! mean and 95% band over campaigns, version changes marked, the step drawn
//! where it began — above the same numbers as a table.

use anyhow::Result;

use super::render::html::html_escape;
use super::svg::{history_chart, target_color, HistoryChart, HistoryPoint};
use super::table::Table;
use super::text::{diff_text, display_unit, mean_ci_text, p_text};
use crate::analysis::history::{History, Series, Step};

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
        .map(|e| {
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
                mean_ci_text(&e.stats, s.unit),
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
                e.stats
                    .verdict
                    .map(|v| v.word(s.direction))
                    .unwrap_or("—")
                    .to_string(),
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

fn series_title(s: &Series) -> String {
    format!(
        "{} on {}: {} ({})",
        s.workload,
        s.target,
        s.metric,
        s.direction.as_str()
    )
}

/// The history as terminal text.
pub fn text(h: &History) -> String {
    let mut out = format!("{}\n", title(h));
    for (id, why) in &h.left_out {
        out.push_str(&format!("left out: campaign {id} {why}\n"));
    }
    for s in &h.series {
        out.push_str(&format!("\n{}\n", series_title(s)));
        let mut t = Table::new(&HEADER, &RIGHT);
        for row in rows(h, s) {
            t.push(row);
        }
        out.push_str(&t.render_text());
        out.push_str(&format!("{}\n", step_text(&s.step)));
    }
    out
}

/// The change-point test's answer as a sentence.
pub fn step_text(step: &Step) -> String {
    match step {
        Step::Found { campaign, change_pct, word, test } => format!(
            "step: {} began at campaign {campaign}: {change_pct:+.1}% after it against before ({word}; Pettitt K = {}, p = {:.4})",
            if *word == "slower" { "a regression" } else { "an improvement" },
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

const STYLE: &str = r#"
body { font-family: sans-serif; margin: 2rem auto; max-width: 1000px; padding: 0 1rem; color: #222; line-height: 1.4; }
h1 { font-size: 1.5rem; } h2 { border-bottom: 1px solid #ccc; padding-bottom: .2rem; margin-top: 2rem; font-size: 1.15rem; }
table { border-collapse: collapse; margin: .5rem 0 1rem; font-size: .85rem; }
th, td { border: 1px solid #ddd; padding: .25rem .5rem; text-align: left; vertical-align: top; }
th { background: #f4f4f4; } td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
.chart { margin: .5rem 0 1rem; } .chart svg { max-width: 100%; height: auto; }
.step { font-weight: bold; }
"#;

/// The history as one HTML page.
pub fn html(h: &History) -> Result<String> {
    let mut body = format!("<h1>{}</h1>\n", html_escape(&title(h)));
    if !h.left_out.is_empty() {
        body.push_str("<ul class=\"left-out\">");
        for (id, why) in &h.left_out {
            body.push_str(&format!(
                "<li>left out: campaign {id} {}</li>",
                html_escape(why)
            ));
        }
        body.push_str("</ul>\n");
    }
    for (i, s) in h.series.iter().enumerate() {
        body.push_str(&format!("<h2>{}</h2>\n", html_escape(&series_title(s))));
        body.push_str(&format!("<div class=\"chart\">{}</div>\n", chart(h, s, i)?));
        body.push_str(&format!(
            "<p class=\"step\">{}</p>\n",
            html_escape(&step_text(&s.step))
        ));
        body.push_str(&table(h, s));
    }
    Ok(format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <title>{}</title><style>{STYLE}</style></head><body>\n{body}</body></html>\n",
        html_escape(&title(h))
    ))
}

fn chart(h: &History, s: &Series, index: usize) -> Result<String> {
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
            let label = match point {
                Some(p) if p.label.is_empty() => format!("#{}", e.campaign),
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
    history_chart(&HistoryChart {
        title: series_title(s),
        y_label: format!("{} ({unit})", s.metric),
        points,
        step_at,
        color: target_color(index),
    })
}

fn table(h: &History, s: &Series) -> String {
    let mut out = String::from("<table><thead><tr>");
    for (name, right) in HEADER.iter().zip(RIGHT) {
        out.push_str(&format!(
            "<th{}>{}</th>",
            if right { " class=\"num\"" } else { "" },
            html_escape(name)
        ));
    }
    out.push_str("</tr></thead><tbody>\n");
    for row in rows(h, s) {
        out.push_str("<tr>");
        for (cell, right) in row.iter().zip(RIGHT) {
            out.push_str(&format!(
                "<td{}>{}</td>",
                if right { " class=\"num\"" } else { "" },
                html_escape(cell)
            ));
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</tbody></table>\n");
    out
}
