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

/// The overview's section; `None` when nothing was compared.
pub fn section(a: &CampaignAnalysis) -> Option<Section> {
    let chart = chart(a)?;
    let mut s = Section::untitled(2).with_class("overview");
    s.chart(Chart::Overview(chart));
    Some(s)
}

/// The figure: a row per workload's primary metric and compared target.
/// Rows are labelled by what tells them apart: a sweep's workloads by
/// their values (`transactions=12`), a study's targets by their factors
/// (`mount_options=[], preallocation=full`), the metric in the title when
/// every row has the same one.
pub fn chart(a: &CampaignAnalysis) -> Option<OverviewChart> {
    let (c, r) = (&a.about, &a.model);
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
        let w = a.stored_workload(name)?;
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
            "× {}'s result, CI as judged (log scale; right is faster)",
            r.baseline
        ),
        rows,
    })
}

/// `names` told apart in as few characters as they can be: where they are
/// all variants of one table (`of` gives a name's table and factors) and
/// not all the same, by the factors whose values differ among them, each
/// value as short as it reads (`Gluster 11.1, mount_options=none,
/// preallocation=off`: a list without its brackets and quotes, an empty
/// one `none`) — never by fewer values, so that no two rows read alike;
/// else as they are.
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
    let all: Vec<&[Factor]> = variants.into_iter().flatten().map(|(_, f)| f).collect();
    // Each factor's values over every name (`None` where a name has it
    // not), once: whether it differs among them.
    let keys: BTreeSet<&str> = all
        .iter()
        .flat_map(|fs| fs.iter())
        .map(|f| f.key.as_str())
        .collect();
    let differing: BTreeSet<&str> = keys
        .into_iter()
        .filter(|key| {
            let texts: BTreeSet<Option<&str>> = all
                .iter()
                .map(|fs| fs.iter().find(|f| f.key == *key).map(|f| f.text.as_str()))
                .collect();
            texts.len() > 1
        })
        .collect();
    all.iter()
        .map(|factors| {
            let shown: Vec<Factor> = factors
                .iter()
                .filter(|f| differing.contains(f.key.as_str()))
                .map(|f| Factor {
                    text: compact_value(&f.text),
                    ..f.clone()
                })
                .collect();
            short_text(&shown.iter().collect::<Vec<_>>())
        })
        .collect()
}

/// A swept value as short as it reads: a list without its brackets and
/// quotes (`["auto-invalidation=false"]` → `auto-invalidation=false`), an
/// empty one `none`; any other value as it is.
fn compact_value(text: &str) -> String {
    let Some(inner) = text.strip_prefix('[').and_then(|t| t.strip_suffix(']')) else {
        return text.to_string();
    };
    let items: Vec<&str> = inner
        .split(',')
        .map(|i| i.trim().trim_matches('"'))
        .filter(|i| !i.is_empty())
        .collect();
    match items.is_empty() {
        true => "none".into(),
        false => items.join(","),
    }
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
        x_label: format!("× campaign {a}'s result, CI as judged (log scale; right is faster)"),
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
    use crate::experiment::sweep::factor;

    #[test]
    fn a_studys_rows_are_told_apart_by_their_factors() {
        let f = factor;
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
                "mount_options=none, preallocation=full",
                "mount_options=a, preallocation=off"
            ]
        );
        // A table without factors among them, or one name alone: as they are.
        assert_eq!(told_apart(&[table[0].0, "disk"], of), [table[0].0, "disk"]);
        assert_eq!(
            told_apart(&[table[0].0, table[0].0], of),
            [table[0].0, table[0].0]
        );
    }

    #[test]
    fn rows_keep_every_value_that_tells_them_apart_and_only_those() {
        let f = factor;
        // Seed 000 with its release axis: the release, the mount option and
        // the disk each tell rows apart; the volume's replica count does not.
        let row = |release: &str, opts: &str, prealloc: &str| {
            vec![
                f("root", release),
                f("gluster.replica", "3"),
                f("gluster.mount_options", opts),
                f("preallocation", prealloc),
            ]
        };
        let table = [
            ("a", row("Gluster 10.3", "[]", "off")),
            (
                "b",
                row("Gluster 10.3", "[\"auto-invalidation=false\"]", "full"),
            ),
            (
                "c",
                row("Gluster 11.1", "[\"auto-invalidation=false\"]", "off"),
            ),
        ];
        let of = |name: &str| {
            let (_, factors) = table.iter().find(|(n, _)| *n == name)?;
            Some(("vm", factors.as_slice()))
        };
        let labels = told_apart(&["a", "b", "c"], of);
        assert_eq!(
            labels,
            [
                "Gluster 10.3, mount_options=none, preallocation=off",
                "Gluster 10.3, mount_options=auto-invalidation=false, preallocation=full",
                "Gluster 11.1, mount_options=auto-invalidation=false, preallocation=off"
            ]
        );
        assert_eq!(compact_value("[\"a\",\"b\"]"), "a,b");
        assert_eq!(compact_value("12"), "12");
    }
}
