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
use crate::report::text::{caveat_marks, caveat_marks_of, notation, versus_text};
use crate::stats::Verdict;

/// The overview's section; `None` when nothing was compared.
pub fn section(r: &Report) -> Option<Section> {
    let chart = chart(r)?;
    let mut s = Section::untitled(2).with_class("overview");
    s.chart(Chart::Overview(chart));
    Some(s)
}

/// The figure: a row per workload's primary metric and compared target.
/// Rows are labelled by what tells them apart: a sweep's workloads by
/// their values (`transactions=12`), a study's targets by their factors
/// (`mount_options=[], preallocation=full`), the metric in the title when
/// every row has the same one.
pub fn chart(r: &Report) -> Option<OverviewChart> {
    let candidates: Vec<&String> = r.targets.iter().filter(|t| **t != r.baseline).collect();
    let mut compared = Vec::new();
    for w in &r.workloads {
        let Some(m) = w.primary_metric() else {
            continue;
        };
        for t in m.targets.iter().filter(|t| t.comparison.is_some()) {
            compared.push((w.name.as_str(), m, t));
        }
    }
    if compared.is_empty() {
        return None;
    }
    let workloads = told_apart(&compared.iter().map(|c| c.0).collect::<Vec<_>>());
    let targets = told_apart(
        &compared
            .iter()
            .map(|c| c.2.target.as_str())
            .collect::<Vec<_>>(),
    );
    let metric = human_name(&compared[0].1.name);
    let one_metric = compared.iter().all(|c| human_name(&c.1.name) == metric);
    let rows = compared
        .iter()
        .enumerate()
        .map(|(i, (_, m, t))| {
            let mut label = match candidates.len() > 1 {
                true => format!("{} · {}", workloads[i], targets[i]),
                false => workloads[i].clone(),
            };
            if !one_metric {
                label.push_str(&format!(" ({})", human_name(&m.name)));
            }
            let mut row = row(label, t, m.unit, m.direction);
            row.marks = caveat_marks_of(&t.caveats, &t.target);
            row
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
/// all variants of one table (`vm[gluster.mount_options=[],preallocation=off]`)
/// and not all the same, what is inside the brackets, each key without its
/// dotted prefix (`mount_options=[], preallocation=off`); else as they are.
fn told_apart(names: &[&str]) -> Vec<String> {
    let split = |n: &str| -> Option<(String, String)> {
        let (family, rest) = n.split_once('[')?;
        let inner = rest.strip_suffix(']')?;
        Some((family.to_string(), inner.to_string()))
    };
    let parts: Vec<Option<(String, String)>> = names.iter().map(|n| split(n)).collect();
    let families: std::collections::BTreeSet<Option<&str>> = parts
        .iter()
        .map(|p| p.as_ref().map(|(f, _)| f.as_str()))
        .collect();
    let distinct: std::collections::BTreeSet<&&str> = names.iter().collect();
    let one_table = families.len() == 1 && !families.contains(&None);
    if !one_table || distinct.len() < 2 {
        return names.iter().map(|n| n.to_string()).collect();
    }
    parts
        .into_iter()
        .flatten()
        .map(|(_, inner)| short_factors(&inner))
        .collect()
}

/// `gluster.mount_options=[],preallocation=off` as
/// `mount_options=[], preallocation=off`: split at the commas outside
/// brackets and quotes, each key without its dotted prefix where no
/// other key ends the same.
fn short_factors(inner: &str) -> String {
    let mut factors = Vec::new();
    let (mut depth, mut quoted, mut start) = (0i32, false, 0);
    for (i, ch) in inner.char_indices() {
        match ch {
            '"' => quoted = !quoted,
            '[' | '{' if !quoted => depth += 1,
            ']' | '}' if !quoted => depth -= 1,
            ',' if !quoted && depth == 0 => {
                factors.push(&inner[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    factors.push(&inner[start..]);
    let last = |k: &str| k.rsplit('.').next().unwrap_or(k).to_string();
    let keys: Vec<&str> = factors
        .iter()
        .map(|f| f.split_once('=').map_or(*f, |(k, _)| k))
        .collect();
    factors
        .iter()
        .map(|f| match f.split_once('=') {
            Some((k, v)) if keys.iter().filter(|x| last(x) == last(k)).count() == 1 => {
                format!("{}={v}", last(k))
            }
            _ => f.to_string(),
        })
        .collect::<Vec<_>>()
        .join(", ")
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_studys_rows_are_told_apart_by_their_values() {
        let names = [
            "vm[gluster.mount_options=[],preallocation=full]",
            "vm[gluster.mount_options=[\"auto-invalidation=false\",\"a,b\"],preallocation=off]",
        ];
        assert_eq!(
            told_apart(&names),
            [
                "mount_options=[], preallocation=full",
                "mount_options=[\"auto-invalidation=false\",\"a,b\"], preallocation=off"
            ]
        );
        // Keys that end the same keep their prefixes.
        assert_eq!(
            short_factors("a.size=1,b.size=2,c.x=3"),
            "a.size=1, b.size=2, x=3"
        );
        // Names of different tables, or one name alone, stay whole.
        assert_eq!(
            told_apart(&["vm[a=1]", "disk[a=1]"]),
            ["vm[a=1]", "disk[a=1]"]
        );
        assert_eq!(told_apart(&["vm[a=1]", "vm[a=1]"]), ["vm[a=1]", "vm[a=1]"]);
        assert_eq!(told_apart(&["tmpfs", "vm[a=1]"]), ["tmpfs", "vm[a=1]"]);
    }
}
