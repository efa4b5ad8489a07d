//! The answer at a glance, under the headline sentences: one figure of
//! every workload's primary result against the baseline
//! ([`crate::report::svg::overview`]), each a ratio with its 95% interval
//! on a log axis turned so that right is better, coloured by its verdict,
//! with the verdict's caveat marks.

use std::collections::BTreeSet;

use crate::analysis::model::TargetStats;
use crate::analysis::verdict::{Outcome, Verdict};
use crate::analysis::CampaignAnalysis;
use crate::experiment::sweep::{short_text, Factor};
use crate::metric::Direction;
use crate::report::document::{Chart, Section};
use crate::report::format::human_name;
use crate::report::svg::{Call, OverviewChart, OverviewRow};
use crate::report::verdict::{words, Form};
use crate::store::CampaignData;

/// The overview's section; `None` when nothing was compared.
pub fn section(c: &CampaignData, a: &CampaignAnalysis) -> Option<Section> {
    let chart = chart(c, a)?;
    let mut s = Section::untitled(2).with_class("overview");
    s.chart(Chart::Overview(chart));
    Some(s)
}

/// The figure: a row per workload's primary metric and compared target.
/// Rows are labelled by what tells them apart: a sweep's workloads by
/// their values (`transactions=12`), a study's targets by their factors
/// (`mount_options=[], preallocation=full`), the metric in the title when
/// every row has the same one.
pub fn chart(c: &CampaignData, a: &CampaignAnalysis) -> Option<OverviewChart> {
    let r = &a.model;
    let candidates: Vec<&String> = r.targets.iter().filter(|t| **t != r.baseline).collect();
    let compared: Vec<(&str, &Verdict, &TargetStats)> = a
        .verdicts
        .iter()
        .filter(|v| v.primary && v.candidate.comparison.is_some())
        .map(|v| (v.workload.as_str(), v, &v.candidate))
        .collect();
    if compared.is_empty() {
        return None;
    }
    let workloads = told_apart(&compared.iter().map(|x| x.0).collect::<Vec<_>>(), |name| {
        let w = c.workloads.iter().find(|w| w.name == name)?;
        Some((w.family.as_str(), w.factors.as_slice()))
    });
    let targets = told_apart(
        &compared
            .iter()
            .map(|x| x.2.target.as_str())
            .collect::<Vec<_>>(),
        |name| {
            let t = c.targets.iter().find(|t| t.name == name)?;
            Some((t.family.as_str(), t.factors.as_slice()))
        },
    );
    let metric = human_name(&compared[0].1.metric);
    let one_metric = compared.iter().all(|x| human_name(&x.1.metric) == metric);
    let rows = compared
        .iter()
        .enumerate()
        .map(|(i, (_, v, _))| {
            let mut label = match candidates.len() > 1 {
                true => format!("{} · {}", workloads[i], targets[i]),
                false => workloads[i].clone(),
            };
            if !one_metric {
                label.push_str(&format!(" ({})", human_name(&v.metric)));
            }
            row(label, v, Form::FigureMarks)
        })
        .collect();
    let title = match (candidates.as_slice(), one_metric) {
        ([one], true) => format!("{one} against {}, every workload's {metric}", r.baseline),
        ([one], false) => format!("{one} against {}, every workload", r.baseline),
        (_, true) => format!("Every workload's {metric} against {}", r.baseline),
        (_, false) => format!("Every workload against {}", r.baseline),
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

/// `names` told apart in as few characters as they can be: where they are
/// all variants of one table (`of` gives a name's table and factors) and
/// not all the same, by their factors
/// (`mount_options=[], preallocation=off`); else as they are.
fn told_apart<'a>(
    names: &[&str],
    of: impl Fn(&str) -> Option<(&'a str, &'a [Factor])>,
) -> Vec<String> {
    let variants: Vec<Option<(&str, &[Factor])>> = names.iter().map(|n| of(n)).collect();
    let families: BTreeSet<Option<&str>> = variants
        .iter()
        .map(|v| v.filter(|(_, f)| !f.is_empty()).map(|(family, _)| family))
        .collect();
    let distinct: BTreeSet<&&str> = names.iter().collect();
    if families.len() != 1 || families.contains(&None) || distinct.len() < 2 {
        return names.iter().map(|n| n.to_string()).collect();
    }
    variants
        .into_iter()
        .flatten()
        .map(|(_, factors)| short_text(&factors.iter().collect::<Vec<_>>()))
        .collect()
}

/// The overview of a comparison of two campaigns: a row per primary
/// metric of a workload on a target, campaign `b` against `a`.
pub fn across_section(a: i64, b: i64, rows: &[Verdict]) -> Option<Section> {
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
            row(label, r, Form::Marks)
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

/// A compared row of the figure, its caveats marked in `marks`' form.
fn row(label: String, v: &Verdict, marks: Form) -> OverviewRow {
    let (t, direction) = (&v.candidate, v.direction);
    let c = t.comparison.as_ref().expect("compared rows only");
    let ratio = |pct: f64| 1.0 + pct / 100.0;
    // Right is better: a time or a latency that halves is ×2.
    let better = |pct: f64| match direction {
        Direction::HigherIsBetter => ratio(pct),
        Direction::LowerIsBetter if ratio(pct) > 0.0 => 1.0 / ratio(pct),
        Direction::LowerIsBetter => f64::INFINITY,
    };
    let (lo, hi) = (c.diff_pct_ci.low, c.diff_pct_ci.high);
    let call = match v.outcome() {
        Some(Outcome::Better) => Call::Faster,
        Some(Outcome::Worse) => Call::Slower,
        Some(Outcome::Equivalent) => Call::Equivalent,
        _ => Call::Inconclusive,
    };
    OverviewRow {
        label,
        better: better(c.diff_pct),
        ci: Some((better(lo), better(hi))),
        call,
        text: words(v, Form::Figure),
        marks: words(v, marks),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiment::sweep::Scale;

    #[test]
    fn a_studys_rows_are_told_apart_by_their_factors() {
        let f = |key: &str, text: &str| Factor {
            key: key.into(),
            value: text.into(),
            text: text.into(),
            scale: Scale::Category,
        };
        let table = [
            (
                "vm[gluster.mount_options=[],preallocation=full]",
                vec![f("gluster.mount_options", "[]"), f("preallocation", "full")],
            ),
            (
                "vm[gluster.mount_options=[\"a\"],preallocation=off]",
                vec![
                    f("gluster.mount_options", "[\"a\"]"),
                    f("preallocation", "off"),
                ],
            ),
            ("disk", vec![]),
        ];
        let of = |name: &str| {
            let (n, factors) = table.iter().find(|(n, _)| *n == name)?;
            Some((crate::experiment::sweep::family_of(n), factors.as_slice()))
        };
        let names = [table[0].0, table[1].0];
        assert_eq!(
            told_apart(&names, of),
            [
                "mount_options=[], preallocation=full",
                "mount_options=[\"a\"], preallocation=off"
            ]
        );
        // A table without factors among them, or one name alone: as they are.
        assert_eq!(told_apart(&[table[0].0, "disk"], of), [table[0].0, "disk"]);
        assert_eq!(
            told_apart(&[table[0].0, table[0].0], of),
            [table[0].0, table[0].0]
        );
    }
}
