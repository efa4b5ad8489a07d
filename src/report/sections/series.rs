//! A workload's figures over time, from the series its runs recorded every
//! interval: the primary metric's (tps for pgbench, throughput for io), and
//! others only when the reader asks for them (`storlab report --series`).
//! Each chart has one line per measured run, a target's repetitions in
//! shades of its colour, with a legend; the same numbers follow as a table.

use super::color_of;
use crate::analysis::model::WorkloadReport;
use crate::metric::MetricKey;
use crate::report::document::{Chart, Section};
use crate::report::svg::{Line, LineChart, Rgb};
use crate::report::table::Table;
use crate::report::text::display_unit;
use crate::store::{CampaignData, RunData};

/// The section "Over time": the primary metric's series, then each of
/// `asked` that the runs recorded; `None` when there is none of them.
pub fn section(c: &CampaignData, w: &WorkloadReport, asked: &[String]) -> Option<Section> {
    let runs: Vec<&RunData> = c
        .runs
        .iter()
        .filter(|r| r.workload == w.name && !r.warmup && r.status == "ok")
        .collect();
    let primary = w.primary_metric().map(|m| m.key.clone());
    let mut keys: Vec<MetricKey> = primary.into_iter().collect();
    for name in asked {
        let key = MetricKey::plain(name);
        if !keys.contains(&key) {
            keys.push(key);
        }
    }
    let mut s = Section::new(3, "Over time");
    for key in &keys {
        if let Some((chart, table)) = one_series(c, w, &runs, key) {
            s.chart(chart);
            s.table(table);
        }
    }
    (!s.is_empty()).then_some(s)
}

/// The chart and table of one series; `None` when no run recorded it.
fn one_series(
    c: &CampaignData,
    w: &WorkloadReport,
    runs: &[&RunData],
    key: &MetricKey,
) -> Option<(Chart, Table)> {
    let unit = runs
        .iter()
        .find_map(|r| r.series.get(key).map(|s| s.unit))?;
    let name = key.compact();
    let max = runs
        .iter()
        .filter_map(|r| r.series.get(key))
        .flat_map(|s| s.values.iter().copied())
        .filter(|v| v.is_finite())
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
    for r in runs {
        let Some(s) = r.series.get(key) else {
            continue;
        };
        let points = s
            .values
            .iter()
            .enumerate()
            .filter(|(_, v)| v.is_finite())
            .map(|(i, v)| ((i + 1) as f64 * s.interval_s, v / scale))
            .collect();
        lines.push(Line {
            label: format!("{} rep {}", r.target, r.repetition),
            color: run_color(c, runs, r),
            points,
        });
        let text = s
            .values
            .iter()
            .map(|v| match v.is_finite() {
                true => format!("{:.1}", v / scale),
                false => "–".into(),
            })
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
        return None;
    }
    let chart = Chart::Line(LineChart {
        title: format!("{}: {name} over time, per run", w.name),
        x_label: "time (s)".into(),
        y_label: format!("{name} ({shown})"),
        lines,
        log_y: false,
        log_x: false,
    });
    Some((chart, table))
}

/// A run's colour: its target's, in the shade of its place among that
/// target's runs, so that repetitions are told apart.
fn run_color(c: &CampaignData, runs: &[&RunData], r: &RunData) -> Rgb {
    let nth = runs
        .iter()
        .filter(|x| x.target == r.target)
        .position(|x| x.id == r.id)
        .unwrap_or(0);
    shade(color_of(c, &r.target), nth)
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
