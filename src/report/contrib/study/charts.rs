//! The study's charts, as plain chart descriptions: the primary metric
//! against the column factor, one line per row of the pivot with its 95%
//! band (log x for sizes and counts, log y for values a decade or more
//! apart), and, when the workload sweeps two
//! factors, a heat map per target, drawn together on one colour scale with
//! one colour bar.

use crate::analysis::study::{Pivot, Study};
use crate::report::svg::{target_color, Curve, CurveChart, CurvePoint, HeatMap, HeatMapGroup};
use crate::report::text::display_unit;

/// The curve of a pivot; `None` without a column factor.
pub fn curve(s: &Study, p: &Pivot) -> Option<CurveChart> {
    let axis = p.column.as_ref()?;
    let positions = &axis.positions;
    let max = p
        .rows
        .iter()
        .flat_map(|r| r.cells.iter().flatten())
        .filter_map(|c| c.ci.map(|ci| ci.high).or(c.summary.map(|s| s.mean)))
        .fold(0.0, f64::max);
    let (scale, unit) = display_unit(p.unit, max);
    let curves = p
        .rows
        .iter()
        .enumerate()
        .map(|(i, r)| Curve {
            label: r.short.clone(),
            color: target_color(i),
            points: r
                .cells
                .iter()
                .zip(positions)
                .filter_map(|(c, &x)| {
                    let c = c.as_ref()?;
                    Some(CurvePoint {
                        x,
                        y: c.summary?.mean / scale,
                        ci: c.ci.map(|ci| (ci.low / scale, ci.high / scale)),
                    })
                })
                .collect(),
        })
        .collect();
    Some(CurveChart {
        title: format!(
            "{}: {} against {} (mean, 95% CI)",
            s.family, p.metric, axis.key
        ),
        x_label: axis.key.clone(),
        y_label: format!("{} ({unit})", p.metric),
        x_ticks: positions
            .iter()
            .zip(&axis.levels)
            .map(|(&x, l)| (x, l.text.clone()))
            .collect(),
        log_x: axis.log,
        log_y: spans_a_decade(p),
        curves,
    })
}

/// Whether the pivot's means are all positive and a decade or more apart
/// (seed 002: Gluster's tiny writes 100× the disk's time): a log y axis,
/// or the low lines lie flat on zero.
fn spans_a_decade(p: &Pivot) -> bool {
    let means: Vec<f64> = p
        .rows
        .iter()
        .flat_map(|r| r.cells.iter().flatten())
        .filter_map(|c| c.summary.map(|s| s.mean))
        .collect();
    let (lo, hi) = means.iter().fold((f64::INFINITY, 0.0f64), |(lo, hi), &m| {
        (lo.min(m), hi.max(m))
    });
    !means.is_empty() && lo > 0.0 && hi / lo >= 10.0
}

/// A heat map per target of the two swept workload factors, drawn as one
/// group on one colour range so that a colour means one value in all of
/// them; `None` without two swept factors.
pub fn heatmaps(s: &Study) -> Option<HeatMapGroup> {
    let g = s.grid.as_ref()?;
    let p = &s.primary;
    let values = g.maps.iter().flat_map(|m| m.1.iter().flatten().flatten());
    let max = values.clone().fold(0.0, |a: f64, &b| a.max(b));
    let min = values.fold(f64::INFINITY, |a: f64, &b| a.min(b));
    let (scale, unit) = display_unit(p.unit, max);
    let maps = g
        .maps
        .iter()
        .map(|(target, cells)| HeatMap {
            title: format!("on {target}"),
            x_label: g.x.key.clone(),
            y_label: g.y.key.clone(),
            x_ticks: g.x.levels.iter().map(|l| l.text.clone()).collect(),
            y_ticks: g.y.levels.iter().map(|l| l.text.clone()).collect(),
            cells: cells
                .iter()
                .map(|row| row.iter().map(|v| v.map(|v| v / scale)).collect())
                .collect(),
            value_label: format!("{} ({unit})", p.metric),
            diverging: false,
            // Times over sizes from 10M to 30G span orders of magnitude.
            log: min > 0.0 && max / min >= 10.0,
            range: min.is_finite().then_some((min / scale, max / scale)),
            muted: Vec::new(),
            muted_label: String::new(),
            missing_label: "not measured".into(),
        })
        .collect();
    Some(HeatMapGroup {
        title: format!(
            "{}: {} by {} and {}, per target",
            s.family, p.metric, g.y.key, g.x.key
        ),
        maps,
    })
}
