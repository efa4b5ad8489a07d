//! A workload's figures over time, from the series its runs recorded every
//! interval: the primary metric's (tps for pgbench, throughput for io), and
//! others only when the reader asks for them (`storlab report --series`).
//! Each chart has one line per measured run, a target's repetitions in
//! shades of its colour, with a legend; the same numbers follow as a table.

use super::color_of;
use crate::analysis::about::About;
use crate::analysis::course::{Series, Timeline};
use crate::analysis::model::WorkloadReport;
use crate::analysis::CampaignAnalysis;
use crate::metric::Unit;
use crate::report::document::{Chart, Section};
use crate::report::format::human_name;
use crate::report::svg::{Line, LineChart, Rgb};
use crate::report::table::Table;
use crate::report::text::display_unit;

/// The section "Over time": the primary metric's series, then each one
/// the reader asked for that the runs recorded ([`Timeline`]); `None`
/// when there is none of them.
pub fn section(a: &CampaignAnalysis, w: &WorkloadReport) -> Option<Section> {
    let mut s = Section::new(3, "Over time");
    for t in a.timelines_of(&w.name) {
        let (chart, table) = one_series(&a.about, w, t);
        s.chart(chart);
        s.table(table);
    }
    (!s.is_empty()).then_some(s)
}

/// A chart spanning more than this ratio between its largest and smallest
/// positive value is drawn on a log axis, so that no line flattens.
pub const LOG_FROM_RATIO: f64 = 20.0;

/// The chart and table of one series. The chart is drawn in one unit (a
/// log axis where its values span more than [`LOG_FROM_RATIO`]), named
/// after the metric as people say it; the table gives each run's values in
/// a unit of their own, so that a run a thousand times slower does not
/// read as zeros.
fn one_series(about: &About, w: &WorkloadReport, t: &Timeline) -> (Chart, Table) {
    let unit = t.unit;
    let name = t.key.compact();
    let finite =
        |s: &Series| -> Vec<f64> { s.values.iter().copied().filter(|v| v.is_finite()).collect() };
    let values: Vec<f64> = t.runs.iter().flat_map(|r| finite(&r.series)).collect();
    let max = values.iter().copied().fold(0.0, f64::max);
    let min_positive = values
        .iter()
        .copied()
        .filter(|v| *v > 0.0)
        .fold(f64::INFINITY, f64::min);
    let log_y = min_positive.is_finite() && max / min_positive > LOG_FROM_RATIO;
    let (scale, shown) = display_unit(unit, max);
    let mut lines = Vec::new();
    let mut table = Table::new(
        &["run", "target", "rep", &format!("{name} per interval")],
        &[true, false, true, false],
    );
    for r in &t.runs {
        let s = &r.series;
        let points = s
            .values
            .iter()
            .enumerate()
            .filter(|(_, v)| v.is_finite() && (!log_y || **v > 0.0))
            .map(|(i, v)| ((i + 1) as f64 * s.interval_s, v / scale))
            .collect();
        lines.push(Line {
            label: format!("{} rep {}", r.target, r.repetition),
            color: shade(color_of(about, &r.target), r.nth),
            points,
        });
        table.push(vec![
            r.run.to_string(),
            r.target.clone(),
            r.repetition.to_string(),
            row_text(s, unit),
        ]);
    }
    let human = human_name(&name);
    let chart = Chart::Line(LineChart {
        title: format!("{}: {human} over time, per run", w.name),
        x_label: "time (s)".into(),
        y_label: match log_y {
            true => format!("{human} ({shown}, log scale)"),
            false => format!("{human} ({shown})"),
        },
        lines,
        log_y,
        log_x: false,
        x_ticks: Vec::new(),
    });
    (chart, table)
}

/// A run's values in the unit its own largest value reads best in:
/// `1.2, 1.3, 1.1 GiB/s`.
fn row_text(s: &Series, unit: Unit) -> String {
    let max = s
        .values
        .iter()
        .copied()
        .filter(|v| v.is_finite())
        .fold(0.0, f64::max);
    let (scale, shown) = display_unit(unit, max);
    let digits = match max / scale {
        m if m >= 100.0 => 0,
        m if m >= 10.0 => 1,
        _ => 2,
    };
    let values = s
        .values
        .iter()
        .map(|v| match v.is_finite() {
            true => format!("{:.digits$}", v / scale),
            false => "–".into(),
        })
        .collect::<Vec<_>>()
        .join(", ");
    format!("{values} {shown}")
}

/// The `nth` shade of `base`: itself, then alternately lighter and darker,
/// further each time.
pub fn shade(base: Rgb, nth: usize) -> Rgb {
    if nth == 0 {
        return base;
    }
    let step = nth.div_ceil(2) as f64;
    let t = (0.3 * step).min(0.75);
    match nth % 2 {
        1 => base.mix(Rgb(0xff, 0xff, 0xff), t),
        _ => base.mix(Rgb(0, 0, 0), t * 0.8),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::svg::target_color;

    #[test]
    fn repetitions_get_distinct_shades_of_their_target_s_colour() {
        let base = target_color(0);
        let shades: Vec<Rgb> = (0..6).map(|i| shade(base, i)).collect();
        assert_eq!(shades[0], base);
        let distinct: std::collections::HashSet<_> = shades.iter().collect();
        assert_eq!(distinct.len(), shades.len());
        assert!(shades[1].luma() > base.luma() && shades[2].luma() < base.luma());
        assert!(shades[3].luma() > shades[1].luma());
    }
}
