//! The answer at a glance, under the headline sentences: one figure of
//! every workload's primary result against the baseline
//! ([`crate::report::svg::overview`]), each a ratio with its 95% interval
//! on a log axis turned so that right is better, coloured by its verdict,
//! with the verdict's caveat marks.

use crate::analysis::comparison::Row;
use crate::analysis::model::{Report, TargetStats};
use crate::metric::{Direction, Unit};
use crate::report::document::{Chart, Section};
use crate::report::format::{effect, human_name};
use crate::report::svg::{Call, OverviewChart, OverviewRow};
use crate::report::text::{caveat_marks, notation, versus_text};
use crate::stats::Verdict;

/// The overview's section; `None` when nothing was compared.
pub fn section(r: &Report) -> Option<Section> {
    let chart = chart(r)?;
    let mut s = Section::untitled(2).with_class("overview");
    s.chart(Chart::Overview(chart));
    Some(s)
}

/// The figure: a row per workload's primary metric and compared target.
pub fn chart(r: &Report) -> Option<OverviewChart> {
    let candidates: Vec<&String> = r.targets.iter().filter(|t| **t != r.baseline).collect();
    let mut rows = Vec::new();
    for w in &r.workloads {
        let Some(m) = w.primary_metric() else {
            continue;
        };
        for t in m.targets.iter().filter(|t| t.comparison.is_some()) {
            let label = match candidates.len() > 1 {
                true => format!("{} · {} ({})", w.name, t.target, human_name(&m.name)),
                false => format!("{} ({})", w.name, human_name(&m.name)),
            };
            rows.push(row(label, t, m.unit, m.direction));
        }
    }
    if rows.is_empty() {
        return None;
    }
    let title = match candidates.as_slice() {
        [one] => format!("{one} against {}, every workload", r.baseline),
        _ => format!("Every workload against {}", r.baseline),
    };
    Some(OverviewChart {
        title,
        x_label: format!(
            "× {}'s result, 95% CI (log scale; right is faster)",
            r.baseline
        ),
        rows,
    })
}

/// The overview of a comparison of two campaigns: a row per primary
/// metric of a workload on a target, campaign `b` against `a`.
pub fn across_section(a: i64, b: i64, rows: &[Row]) -> Option<Section> {
    let rows: Vec<OverviewRow> = rows
        .iter()
        .filter(|r| r.primary && r.candidate.comparison.is_some())
        .map(|r| {
            let label = format!(
                "{} on {} ({})",
                r.workload,
                r.baseline.target,
                human_name(&r.metric)
            );
            row(label, &r.candidate, r.unit, r.direction)
        })
        .collect();
    if rows.is_empty() {
        return None;
    }
    let chart = OverviewChart {
        title: format!("Campaign {b} against campaign {a}, every workload"),
        x_label: format!("× campaign {a}'s result, 95% CI (log scale; right is faster)"),
        rows,
    };
    let mut s = Section::untitled(2).with_class("overview");
    s.chart(Chart::Overview(chart));
    Some(s)
}

fn row(label: String, t: &TargetStats, unit: Unit, direction: Direction) -> OverviewRow {
    let c = t.comparison.as_ref().expect("compared rows only");
    let ratio = |pct: f64| 1.0 + pct / 100.0;
    // Right is better: a time or a latency that halves is ×2.
    let better = |pct: f64| match direction {
        Direction::HigherIsBetter => ratio(pct),
        Direction::LowerIsBetter if ratio(pct) > 0.0 => 1.0 / ratio(pct),
        Direction::LowerIsBetter => f64::INFINITY,
    };
    let (lo, hi) = (c.diff_pct_ci.low, c.diff_pct_ci.high);
    let call = match t.verdict {
        Some(Verdict::Better) => Call::Faster,
        Some(Verdict::Worse) => Call::Slower,
        _ => Call::NoSignificantDifference,
    };
    let said = match t.verdict {
        Some(v) if v != Verdict::NoSignificantDifference => {
            versus_text(c.diff_pct, notation(t), unit, v.word(direction))
        }
        _ => format!("{} (n.s.)", effect(c.diff_pct, notation(t))),
    };
    OverviewRow {
        label,
        better: better(c.diff_pct),
        ci: Some((better(lo), better(hi))),
        call,
        text: said,
        marks: caveat_marks(&t.caveats),
    }
}
