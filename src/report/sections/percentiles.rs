//! A workload's latency percentiles per target, from the HDR histograms of
//! its measured runs merged exactly ([`crate::analysis::latency`]): a chart
//! on a log axis and the same numbers as a table.

use super::color_of;
use crate::analysis::about::About;
use crate::analysis::latency::{nines, Curve, CURVE_PERCENTILES};
use crate::analysis::model::WorkloadReport;
use crate::analysis::CampaignAnalysis;
use crate::metric::catalogue::SERVICE_LAT;
use crate::metric::Unit;
use crate::report::document::{Chart, Section};
use crate::report::format::format_value;
use crate::report::svg::{Line, LineChart, Rgb};
use crate::report::table::Table;

/// The section "Latency percentiles"; `None` without a histogram.
pub fn section(a: &CampaignAnalysis, w: &WorkloadReport) -> Option<Section> {
    let c = &a.about;
    let mine: Vec<&Curve> = a.curves_of(&w.name).collect();
    let first = mine.first()?;
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
    header.extend(first.points.iter().map(|(p, _)| {
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
        ..Table::default()
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
    let mut s = Section::new(3, "Latency percentiles");
    s.chart(Chart::Line(LineChart {
        title: format!("{}: latency percentiles, all measured runs merged", w.name),
        x_label: "percentile (spaced by nines: p90, p99, p99.9…)".into(),
        y_label: "latency (µs, log scale)".into(),
        lines,
        log_y: true,
        log_x: false,
        x_ticks: CURVE_PERCENTILES
            .iter()
            .map(|&p| (nines(p), percentile_name(p)))
            .chain([(nines(100.0), "max".to_string())])
            .collect(),
    }));
    s.table(table);
    Some(s)
}

/// `p50`, `p99.9`, `p99.99`: a percentile as people write it.
fn percentile_name(p: f64) -> String {
    format!("p{p}")
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
fn curve_color(c: &About, k: &Curve) -> Rgb {
    let base = color_of(c, &k.target);
    if std::ptr::eq(k.hist, &SERVICE_LAT) {
        base.mix(Rgb(0xff, 0xff, 0xff), 0.5)
    } else {
        base
    }
}
