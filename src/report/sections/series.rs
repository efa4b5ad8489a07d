//! A workload's figures over time: one line per measured run of a series
//! its runs recorded every interval, and the same numbers as a table.

use super::color_of;
use crate::report::document::{Chart, Section};
use crate::report::model::WorkloadReport;
use crate::report::svg::{Line, LineChart};
use crate::report::table::Table;
use crate::report::text::display_unit;
use crate::store::CampaignData;

/// The section "Over time"; `None` when no run recorded a series.
pub fn section(c: &CampaignData, w: &WorkloadReport) -> Option<Section> {
    let runs: Vec<_> = c
        .runs
        .iter()
        .filter(|r| r.workload == w.name && !r.warmup && r.status == "ok")
        .collect();
    let (name, unit) = runs
        .iter()
        .find_map(|r| r.series.iter().next().map(|(n, s)| (n.clone(), s.unit)))?;
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
        return None;
    }
    let mut s = Section::new(3, "Over time");
    s.chart(Chart::Line(LineChart {
        title: format!("{}: {name} over time, per run", w.name),
        x_label: "time (s)".into(),
        y_label: format!("{name} ({shown})"),
        lines,
        log_y: false,
        log_x: false,
    }));
    s.table(table);
    Some(s)
}
