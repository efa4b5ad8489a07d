//! The `matrix` workload (iozone's automatic mode) in reports. Its summary
//! is the geometric mean of throughput overall and per test; its hundreds
//! of per-cell metrics stay out of the per-metric verdict tables and are
//! shown the way iozone users read them: per test, a heat map of file size ×
//! record size for each target, a % difference heat map against the
//! baseline, and the same numbers as file-size × record-size tables
//! (HTML gets maps and tables, Markdown the tables).

pub mod charts;
pub mod grid;
pub mod tables;

use anyhow::Result;

use self::grid::{MatrixReport, TestMatrix};
use self::tables::Unit;
use super::html::display_unit;
use super::markup::{Html, Markdown, Markup};
use super::model::{self, Report, WorkloadReport, MIN_EFFECT_PCT};
use super::svg::heatmap;
use super::table::Table;
use crate::metric::catalogue::GEOMEAN_BW_BYTES_PER_S;
use crate::metric::{MetricKey, Unit as StoredUnit};
use crate::store::CampaignData;
use crate::workload::matrix::grid::{test_labels, Test};

/// The workload kind this module reports on.
pub const KIND: &str = "matrix";

/// Metrics a matrix workload's summary shows beside its primary metric:
/// each test's geometric mean, in iozone's order (those measured).
pub fn summary_metrics() -> impl Iterator<Item = MetricKey> {
    Test::ALL
        .iter()
        .map(|&t| MetricKey::new(GEOMEAN_BW_BYTES_PER_S.name, test_labels(t)))
}

/// The summary table of a matrix workload (tests as rows, targets as
/// columns); `None` for other kinds.
pub fn summary_table(w: &WorkloadReport, baseline: &str) -> Option<Table> {
    (w.kind == KIND).then(|| tables::geomeans_table(w, baseline))
}

/// For the terminal (`storlab show`, the end of `storlab run`): each
/// matrix workload's per-test geometric means, under the summary table.
pub fn summary_text(c: &CampaignData) -> String {
    let Ok(r) = model::build(c, None) else {
        return String::new();
    };
    r.workloads
        .iter()
        .filter_map(|w| {
            let t = summary_table(w, &r.baseline)?;
            let title = format!("{} ({KIND}): geometric mean throughput per test", w.name);
            Some(format!("\n{title}\n{}", t.render_text()))
        })
        .collect()
}

/// The cell-by-cell matrix of `w`, when it is a matrix workload whose runs
/// recorded cells.
fn matrix_of(c: &CampaignData, r: &Report, w: &WorkloadReport) -> Option<MatrixReport> {
    if w.kind != KIND {
        return None;
    }
    grid::build(c, &w.name, &r.targets, &r.baseline)
}

/// One unit for every number of the matrix, chosen from its largest mean.
fn unit_of(m: &MatrixReport) -> Unit {
    let (scale, name) = display_unit(StoredUnit::BytesPerSec, m.max_mean());
    Unit { scale, name }
}

/// How to read the maps and tables, once per workload.
fn reading(m: &MatrixReport, unit: &Unit) -> String {
    format!(
        "Per test: mean throughput over the measured runs in {}, file sizes as rows and record sizes as columns (empty where the record is larger than the file, — where a target has no measurement), then the % difference of each target's mean from the baseline {} (in the maps red is faster, blue slower). A difference in parentheses (hatched in the maps) is not significant: p ≥ 0.05 (Welch's t on the logs of the cell's runs) or under {MIN_EFFECT_PCT}%, the rule of every verdict in this report. Mean latency per cell is in the CSV and JSON exports.",
        unit.name, m.baseline
    )
}

/// The tables of one test: values per target, then differences.
fn test_tables<M: Markup>(out: &M, m: &MatrixReport, t: &TestMatrix, unit: &Unit) -> String {
    let test = t.test.name();
    let mut s = String::new();
    for x in &t.targets {
        let title = format!("{test} on {}: mean throughput ({})", x.target, unit.name);
        s.push_str(&out.paragraph(&title));
        s.push_str(&out.table(&tables::values_table(m, t.test, x, unit)));
    }
    for x in &t.targets {
        if let Some(table) = tables::diff_table(m, t.test, x) {
            let title = format!(
                "{test} on {} against {}: % difference (in parentheses: not significant)",
                x.target, m.baseline
            );
            s.push_str(&out.paragraph(&title));
            s.push_str(&out.table(&table));
        }
    }
    s
}

/// The matrix part of a workload's HTML section: per test, heat maps and
/// tables; empty for other workloads.
pub fn html_section(c: &CampaignData, r: &Report, w: &WorkloadReport) -> Result<String> {
    let Some(m) = matrix_of(c, r, w) else {
        return Ok(String::new());
    };
    let h = Html;
    let unit = unit_of(&m);
    let mut out = h.heading(3, "Matrix: file size × record size");
    out.push_str(&h.paragraph(&reading(&m, &unit)));
    for t in &m.tests {
        out.push_str(&h.heading(4, t.test.name()));
        let maps = charts::throughput_maps(&m, t, &unit)
            .into_iter()
            .chain(charts::difference_maps(&m, t));
        for map in maps {
            out.push_str(&format!("<div class=\"chart\">{}</div>\n", heatmap(&map)?));
        }
        out.push_str(&format!(
            "<div class=\"matrix\">{}</div>\n",
            test_tables(&h, &m, t, &unit)
        ));
    }
    Ok(out)
}

/// The matrix part of a workload's Markdown section: per test, the tables;
/// empty for other workloads.
pub fn markdown_section(c: &CampaignData, r: &Report, w: &WorkloadReport) -> String {
    let Some(m) = matrix_of(c, r, w) else {
        return String::new();
    };
    let md = Markdown;
    let unit = unit_of(&m);
    let mut out = md.heading(3, "Matrix: file size × record size");
    out.push_str(&md.paragraph(&reading(&m, &unit)));
    for t in &m.tests {
        out.push_str(&md.heading(4, t.test.name()));
        out.push_str(&test_tables(&md, &m, t, &unit));
    }
    out
}
