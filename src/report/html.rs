//! The HTML report: one self-contained file (inline CSS and SVG, no script,
//! no external resource of any kind), readable on a laptop and printed.
//! Every charted number also appears in a table; all text is escaped.

use anyhow::Result;

use super::format::format_value;
use super::latency::{nines, Curve};
use super::markup::{html_escape, Html, Markup};
use super::matrix;
use super::model::{Report, WorkloadReport};
use super::ranks::{ranks_section, ranks_sentence};
use super::sections::{
    diff_table, environment_table, facts_table, headline, methodology, stops_table, targets_table,
    values_table,
};
use super::study::document::{blocks, Block};
use super::study::Study;
use super::svg::{
    bar_chart, curve_chart, diff_chart, heatmap, line_chart, target_color, Bar, BarChart, DiffBar,
    DiffChart, Line, LineChart,
};
use super::table::Table;
use crate::metric::catalogue::SERVICE_LAT;
use crate::metric::{Family, Unit};
use crate::store::CampaignData;

const STYLE: &str = r#"
body { font-family: sans-serif; margin: 2rem auto; max-width: 1000px; padding: 0 1rem; color: #222; line-height: 1.4; }
h1 { font-size: 1.6rem; } h2 { border-bottom: 1px solid #ccc; padding-bottom: .2rem; margin-top: 2rem; } h3 { font-size: 1.05rem; }
table { border-collapse: collapse; margin: .5rem 0 1rem; font-size: .9rem; }
th, td { border: 1px solid #ddd; padding: .25rem .5rem; text-align: left; vertical-align: top; }
th { background: #f4f4f4; } td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
.chart { margin: .5rem 0 1rem; } .chart svg { max-width: 100%; height: auto; }
.matrix table { font-size: .8rem; } .matrix p { margin: .8rem 0 0; font-weight: bold; }
.warnings li { color: #8a4b00; } .headline li { font-weight: bold; }
@media print { body { max-width: none; margin: 0; } h2 { page-break-before: auto; } .chart, table { page-break-inside: avoid; } }
"#;

/// Renders the whole report. `curves` are the merged latency percentiles.
pub fn render(c: &CampaignData, r: &Report, curves: &[Curve], studies: &[Study]) -> Result<String> {
    let h = Html;
    let k = &c.campaign;
    let title = format!("{} — campaign {}", k.name, k.id);
    let mut body = h.heading(1, &title);
    if !k.description.is_empty() {
        body.push_str(&h.paragraph(&k.description));
    }
    body.push_str(&h.paragraph(&format!(
        "Started {}, {}: {} of {} planned runs ok, {} failed.",
        k.started_at, k.status, k.runs_ok, k.planned_runs, k.runs_failed
    )));
    body.push_str(&format!(
        "<div class=\"headline\">{}</div>",
        h.list(&headline(r))
    ));
    body.push_str(&h.heading(2, "Environment"));
    body.push_str(&h.table(&environment_table(&c.environment)));
    body.push_str(&h.heading(2, "Targets"));
    body.push_str(&h.table(&targets_table(c, &r.baseline)));
    body.push_str(&h.heading(2, "Methodology"));
    body.push_str(&h.list(&methodology(c, r)));
    if let Some(s) = ranks_sentence(c) {
        body.push_str(&h.paragraph(&s));
    }
    if c.stops.iter().any(|s| s.reason != "fixed") {
        body.push_str(&h.table(&stops_table(c)));
    }
    if !studies.is_empty() {
        body.push_str(&h.heading(2, "Factors"));
    }
    for s in studies {
        body.push_str(&study_section(s)?);
    }
    for w in &r.workloads {
        body.push_str(&workload_section(c, r, w, curves)?);
        body.push_str(&ranks_section(&h, c, &w.name));
    }
    if !r.warnings.is_empty() {
        body.push_str(&h.heading(2, "Warnings"));
        body.push_str(&format!(
            "<div class=\"warnings\">{}</div>",
            h.list(&r.warnings)
        ));
    }
    Ok(format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <title>{}</title><style>{STYLE}</style></head><body>\n{body}</body></html>\n",
        html_escape(&title)
    ))
}

/// A study: its curve, tables and heat maps.
fn study_section(s: &Study) -> Result<String> {
    let h = Html;
    let mut out = String::from("<div class=\"study\">");
    for b in blocks(s) {
        match b {
            Block::Heading(t) => out.push_str(&h.heading(3, &t)),
            Block::Note(t) => out.push_str(&h.paragraph(&t)),
            Block::Table(t) => out.push_str(&h.table(&t)),
            Block::Curve(c) => out.push_str(&chart(curve_chart(&c)?)),
            Block::HeatMaps(maps) => {
                for m in &maps {
                    out.push_str(&chart(heatmap(m)?));
                }
            }
        }
    }
    out.push_str("</div>\n");
    Ok(out)
}

fn color_of(c: &CampaignData, target: &str) -> super::svg::Rgb {
    target_color(c.targets.iter().position(|t| t.name == target).unwrap_or(0))
}

fn chart(svg: String) -> String {
    format!("<div class=\"chart\">{svg}</div>\n")
}

fn workload_section(
    c: &CampaignData,
    r: &Report,
    w: &WorkloadReport,
    curves: &[Curve],
) -> Result<String> {
    let h = Html;
    let mut out = h.heading(2, &format!("{} ({})", w.name, w.kind));
    if let Some(m) = w.primary_metric() {
        let (scale, unit) = display_unit(
            m.unit,
            m.targets
                .iter()
                .filter_map(|t| t.summary.map(|s| s.mean))
                .fold(0.0, f64::max),
        );
        let bars = m
            .targets
            .iter()
            .filter_map(|t| {
                let s = t.summary?;
                Some(Bar {
                    label: t.target.clone(),
                    value: s.mean / scale,
                    ci: t.ci.map(|ci| (ci.low / scale, ci.high / scale)),
                    color: color_of(c, &t.target),
                })
            })
            .collect();
        let clipped = m.targets.iter().any(|t| t.ci_clipped);
        let title = format!(
            "{}: {} (mean, 95% CI{})",
            w.name,
            m.name,
            if clipped { ", clipped at 0" } else { "" }
        );
        out.push_str(&chart(bar_chart(&BarChart {
            title,
            y_label: format!("{} ({unit})", m.name),
            bars,
        })?));
        let diffs: Vec<DiffBar> = m
            .targets
            .iter()
            .filter_map(|t| {
                let cmp = t.comparison.as_ref()?;
                // An infinite bound is passed on: the chart draws it open.
                let ci = Some((cmp.diff_pct_ci.low, cmp.diff_pct_ci.high));
                Some(DiffBar {
                    label: t.target.clone(),
                    diff_pct: cmp.diff_pct,
                    ci,
                    color: color_of(c, &t.target),
                })
            })
            .collect();
        if !diffs.is_empty() {
            let title = format!(
                "{}: {} against {} (% difference, 95% CI)",
                w.name, m.name, r.baseline
            );
            out.push_str(&chart(diff_chart(&DiffChart {
                title,
                x_label: format!("difference from {} (%)", r.baseline),
                bars: diffs,
            })?));
        }
    }
    out.push_str(&h.heading(3, "Values"));
    let values = matrix::summary_table(w, &r.baseline);
    out.push_str(&h.table(&values.unwrap_or_else(|| values_table(w, &r.baseline))));
    let diffs = diff_table(w);
    if !diffs.rows.is_empty() {
        out.push_str(&h.heading(3, &format!("Difference from {}", r.baseline)));
        out.push_str(&h.table(&diffs));
    }
    let facts = facts_table(c, &w.name);
    if !facts.rows.is_empty() {
        out.push_str(&h.heading(3, "Measured with"));
        out.push_str(&h.table(&facts));
    }
    out.push_str(&matrix::html_section(c, r, w)?);
    out.push_str(&series_section(c, w)?);
    out.push_str(&latency_section(c, w, curves)?);
    Ok(out)
}

/// Throughput over time, one line per measured run, and its table.
fn series_section(c: &CampaignData, w: &WorkloadReport) -> Result<String> {
    let runs: Vec<_> = c
        .runs
        .iter()
        .filter(|r| r.workload == w.name && !r.warmup && r.status == "ok")
        .collect();
    let Some((name, unit)) = runs
        .iter()
        .find_map(|r| r.series.iter().next().map(|(n, s)| (n.clone(), s.unit)))
    else {
        return Ok(String::new());
    };
    let max = runs
        .iter()
        .filter_map(|r| r.series.get(&name))
        .flat_map(|s| s.values.iter().copied())
        .fold(0.0, f64::max);
    let (scale, shown) = display_unit(unit, max);
    let mut lines = Vec::new();
    let mut table = Table::new(
        &[
            "run",
            "target",
            "rep",
            &format!("{name} per interval ({shown})"),
        ],
        &[true, false, true, false],
    );
    for r in &runs {
        let Some(s) = r.series.get(&name) else {
            continue;
        };
        let points = s
            .values
            .iter()
            .enumerate()
            .map(|(i, v)| ((i + 1) as f64 * s.interval_s, v / scale))
            .collect();
        lines.push(Line {
            label: format!("{} rep {}", r.target, r.repetition),
            color: color_of(c, &r.target),
            points,
        });
        let text = s
            .values
            .iter()
            .map(|v| format!("{:.1}", v / scale))
            .collect::<Vec<_>>()
            .join(", ");
        table.push(vec![
            r.id.to_string(),
            r.target.clone(),
            r.repetition.to_string(),
            text,
        ]);
    }
    if lines.iter().all(|l| l.points.is_empty()) {
        return Ok(String::new());
    }
    let h = Html;
    let mut out = h.heading(3, "Over time");
    let title = format!("{}: {name} over time, per run", w.name);
    out.push_str(&chart(line_chart(&LineChart {
        title,
        x_label: "time (s)".into(),
        y_label: format!("{name} ({shown})"),
        lines,
        log_y: false,
        log_x: false,
    })?));
    out.push_str(&h.table(&table));
    Ok(out)
}

/// Latency percentiles on a log axis, merged over runs, and their table.
fn latency_section(c: &CampaignData, w: &WorkloadReport, curves: &[Curve]) -> Result<String> {
    let mine: Vec<&Curve> = curves.iter().filter(|k| k.workload == w.name).collect();
    if mine.is_empty() {
        return Ok(String::new());
    }
    let lines = mine
        .iter()
        .map(|k| Line {
            label: curve_label(k),
            color: curve_color(c, k),
            points: k
                .points
                .iter()
                .map(|&(p, ns)| (nines(p), ns / 1e3))
                .collect(),
        })
        .collect();
    let mut header: Vec<String> = vec!["target".into(), "operations".into()];
    header.extend(mine[0].points.iter().map(|(p, _)| {
        if *p >= 100.0 {
            "max".to_string()
        } else {
            format!("p{p}")
        }
    }));
    let mut table = Table {
        right: header.iter().map(|_| true).collect(),
        header,
        rows: Vec::new(),
    };
    table.right[0] = false;
    for k in &mine {
        let mut row = vec![curve_label(k), k.count.to_string()];
        row.extend(
            k.points
                .iter()
                .map(|&(_, ns)| format_value(ns, Unit::Nanoseconds)),
        );
        table.rows.push(row);
    }
    let h = Html;
    let mut out = h.heading(3, "Latency percentiles");
    let title = format!("{}: latency percentiles, all measured runs merged", w.name);
    let x_label =
        "percentile in nines (1 = p90, 2 = p99, 3 = p99.9, 4 = p99.99, 5 = max)".to_string();
    out.push_str(&chart(line_chart(&LineChart {
        title,
        x_label,
        y_label: "latency (µs, log scale)".into(),
        lines,
        log_y: true,
        log_x: false,
    })?));
    out.push_str(&h.table(&table));
    Ok(out)
}

/// A curve's label: the target, marked when it is the service latency of an
/// open-loop run (the plain curve is then the response latency).
fn curve_label(k: &Curve) -> String {
    if std::ptr::eq(k.hist, &SERVICE_LAT) {
        format!("{} (service)", k.target)
    } else {
        k.target.clone()
    }
}

/// The target's colour; service latency in a lighter shade of it.
fn curve_color(c: &CampaignData, k: &Curve) -> super::svg::Rgb {
    let base = color_of(c, &k.target);
    if std::ptr::eq(k.hist, &SERVICE_LAT) {
        base.mix(super::svg::Rgb(0xff, 0xff, 0xff), 0.5)
    } else {
        base
    }
}

/// A scale and unit label for charting values of `unit` up to `max`.
pub fn display_unit(unit: Unit, max: f64) -> (f64, String) {
    const GIB: f64 = 1024.0 * 1024.0 * 1024.0;
    match unit.family() {
        Family::BytesPerSec if max >= GIB => (GIB, "GiB/s".into()),
        Family::BytesPerSec => (1024.0 * 1024.0, "MiB/s".into()),
        Family::Bytes => (1024.0 * 1024.0, "MiB".into()),
        Family::Nanoseconds if max >= 1e6 => (1e6, "ms".into()),
        Family::Nanoseconds => (1e3, "µs".into()),
        _ => (1.0, unit.to_string()),
    }
}
