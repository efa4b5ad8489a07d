//! The campaign's own sections: what ran, the headline verdicts and the
//! environment as a spec table.

use serde_json::Value;

use crate::analysis::model::{MetricReport, Report, TargetStats, WorkloadReport};
use crate::fact::Environment;
use crate::metric::Unit;
use crate::report::document::Section;
use crate::report::format::format_value;
use crate::report::format::{effect, human_name, Notation};
use crate::report::table::Table;
use crate::report::text::{
    caveat_marks, chance_text, change_text, diff_text, interval_text, notation, p_text,
    settle_text, too_few_text, values_text,
};
use crate::stats::Verdict;
use crate::store::CampaignData;

/// The title of the campaign's report.
pub fn title(c: &CampaignData) -> String {
    format!("{} — campaign {}", c.campaign.name, c.campaign.id)
}

/// The description and what ran, under the title.
pub fn intro(c: &CampaignData) -> Section {
    let k = &c.campaign;
    let mut s = Section::untitled(1);
    if !k.description.is_empty() {
        s.text(k.description.clone());
    }
    s.text(format!(
        "Started {}, {}: {} of {} planned runs ok, {} failed.",
        k.started_at, k.status, k.runs_ok, k.planned_runs, k.runs_failed
    ));
    s
}

/// One line per comparison of a primary metric, each workload's followed
/// by the sentences `more` adds on it.
pub fn headline_section(r: &Report, more: impl Fn(&WorkloadReport) -> Vec<String>) -> Section {
    let mut s = Section::untitled(1).with_class("headline");
    s.list(headline(r, more));
    s
}

pub fn environment_section(c: &CampaignData) -> Section {
    let mut s = Section::new(2, "Environment");
    let mut t = environment_table(&c.environment);
    for row in crate::report::provenance::provenance_rows(c) {
        t.push(row);
    }
    s.table(t);
    s
}

/// The environment as a spec table, as the seeds typed it by hand.
fn environment_table(env: &Value) -> Table {
    let e = Environment::read(env);
    let mut t = Table::new(&["", ""], &[false, false]);
    let cpu = e.cpu_model.map(|m| {
        let count = e.cpu_count.map_or("null".to_string(), |n| n.to_string());
        format!("{m} ({count} CPUs)")
    });
    let rows = [
        ("Host", e.hostname),
        ("CPU", cpu),
        (
            "Memory",
            e.memory_bytes.map(|b| format_value(b, Unit::Bytes)),
        ),
        ("Kernel", e.kernel),
        ("Distribution", e.distribution),
        ("storlab", e.storlab_version),
        ("Run as root", e.root.map(|b| b.to_string())),
    ];
    for (k, v) in rows {
        t.push(vec![k.into(), v.unwrap_or_else(|| "unknown".into())]);
    }
    t
}

/// A one-line verdict per non-baseline target on the primary metric, in
/// the metric's direction ("takes 20.2% less time", "-64.0% tps"); when
/// the parts of the primary (a matrix's tests) disagree in direction, each
/// part's verdict too.
fn headline(r: &Report, more: impl Fn(&WorkloadReport) -> Vec<String>) -> Vec<String> {
    let mut out = Vec::new();
    for w in &r.workloads {
        let Some(m) = w.primary_metric() else {
            out.extend(more(w));
            continue;
        };
        for t in m
            .targets
            .iter()
            .filter(|t| t.comparison.is_some() || t.too_few)
        {
            let mut line = format!("{}: {}", w.name, verdict_sentence(t, m, &r.baseline));
            // Marks on the first screen; the tables say in how many runs.
            let marks = caveat_marks(&t.caveats);
            if !marks.is_empty() {
                line.push_str(&format!(" {marks}"));
            }
            if let Some(more) = settle_text(t) {
                line.push_str(&format!("; {more}"));
            }
            if let Some(parts) = parts_text(w, m, &t.target) {
                line.push_str(&format!("; {parts}"));
            }
            out.push(line);
        }
        out.extend(more(w));
    }
    out
}

/// `ram is faster than disk: +68.3% tps [+35.7%, +108.6%] (p 0.009)`, or
/// `no significant difference between …` with the difference and p.
fn verdict_sentence(t: &TargetStats, m: &MetricReport, baseline: &str) -> String {
    if t.too_few {
        let of = |x: &TargetStats| values_text(&x.values, m.unit);
        let base = m.targets.iter().find(|x| x.target == baseline);
        return format!(
            "{}: no interval and no verdict of {} against {baseline} — {} {}; {baseline} {}",
            too_few_text(),
            t.target,
            t.target,
            of(t),
            base.map_or("—".into(), of)
        );
    }
    let Some(c) = &t.comparison else {
        return String::new();
    };
    match t.verdict {
        Some(v) if v != Verdict::NoSignificantDifference => {
            let name = human_name(&m.name);
            let (change, named) = change_text(c.diff_pct, notation(t), &name, m.unit);
            let which = match named {
                true => String::new(),
                false => format!("{name}, "),
            };
            format!(
                "{} is {} than {baseline}: {change} {} ({which}p {})",
                t.target,
                v.word(m.direction),
                interval_text(t),
                p_text(t)
            )
        }
        _ => {
            let chance = chance_text(t).map_or(String::new(), |c| format!(": {c}"));
            format!(
                "no significant difference between {} and {baseline} ({} {}, p {}){chance}",
                t.target,
                human_name(&m.name),
                diff_text(t),
                p_text(t)
            )
        }
    }
}

/// The verdict on each part of the primary metric `m` (the same metric
/// with other labels: a matrix's tests) for `target`, when the significant
/// ones do not all point the same way; `None` otherwise.
fn parts_text(w: &WorkloadReport, m: &MetricReport, target: &str) -> Option<String> {
    let of = |p: &MetricReport| p.targets.iter().find(|x| x.target == target).cloned();
    let parts: Vec<(&MetricReport, TargetStats)> = w
        .metrics
        .iter()
        .filter(|p| p.key.name == m.key.name)
        .filter_map(|p| Some((p, of(p)?)))
        .collect();
    let ways: Vec<Verdict> = parts
        .iter()
        .filter_map(|(_, t)| t.verdict)
        .filter(|v| *v != Verdict::NoSignificantDifference)
        .collect();
    if !(ways.contains(&Verdict::Better) && ways.contains(&Verdict::Worse)) {
        return None;
    }
    let by = m
        .key
        .labels
        .iter()
        .chain(parts.iter().flat_map(|(p, _)| p.key.labels.iter()))
        .map(|(k, _)| k.to_string())
        .next()
        .unwrap_or_default();
    let each: Vec<String> = parts
        .iter()
        .filter(|(p, _)| p.key != m.key)
        .filter_map(|(p, t)| {
            let c = t.comparison.as_ref()?;
            let part = match p.key.labels.is_empty() {
                true => "all".to_string(),
                false => p
                    .key
                    .labels
                    .iter()
                    .map(|(_, v)| v)
                    .collect::<Vec<_>>()
                    .join(" "),
            };
            let word = match t.verdict {
                Some(v) if v != Verdict::NoSignificantDifference => v.word(p.direction),
                _ => "n.s.",
            };
            let n = Notation::of(&[c.diff_pct]);
            Some(format!("{part} {} {word}", effect(c.diff_pct, n)))
        })
        .collect();
    Some(format!("by {by}, which disagree: {}", each.join(", ")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::model::{target_stats, LEVEL};
    use crate::metric::{Direction, MetricKey};
    use crate::stats::{welch_log, Analysis};
    use crate::workload::matrix::grid::{test_labels, Test};

    /// A matrix summary metric (all tests, or one test's) of targets `a`
    /// (baseline) and `b`.
    fn part(test: Option<Test>, b: &[f64]) -> MetricReport {
        let name = "geomean_bw_bytes_per_s";
        let key = test.map_or(MetricKey::plain(name), |t| {
            MetricKey::new(name, test_labels(t))
        });
        let a = [100.0, 101.0, 99.0];
        let higher = Direction::HigherIsBetter;
        MetricReport {
            name: key.compact(),
            exploratory: test.is_some(),
            key,
            unit: Unit::BytesPerSec,
            direction: higher,
            analysis: Analysis::Ratio,
            targets: vec![
                target_stats("a", a.to_vec(), None, higher),
                target_stats("b", b.to_vec(), welch_log(&a, b, LEVEL), higher),
            ],
        }
    }

    fn matrix(metrics: Vec<MetricReport>) -> Report {
        let w = WorkloadReport {
            name: "iozone".into(),
            kind: "matrix".into(),
            primary: metrics[0].name.clone(),
            metrics,
        };
        Report {
            baseline: "a".into(),
            targets: vec!["a".into(), "b".into()],
            workloads: vec![w],
            warnings: Vec::new(),
        }
    }

    // The translators study: slower over all tests, its re-reads faster.
    #[test]
    fn the_headline_lists_the_tests_when_they_disagree_in_direction() {
        let slower = [80.0, 81.0, 79.0];
        let faster = [120.0, 121.0, 119.0];
        let r = matrix(vec![
            part(None, &slower),
            part(Some(Test::Write), &slower),
            part(Some(Test::Reread), &faster),
        ]);
        let line = &headline(&r, |_| Vec::new())[0];
        assert!(
            line.starts_with("iozone: b is slower than a: -20.0% throughput (geometric mean) ["),
            "{line}"
        );
        assert!(
            line.ends_with("; by test, which disagree: write -20.0% slower, reread +20.0% faster"),
            "{line}"
        );
        let agree = matrix(vec![part(None, &slower), part(Some(Test::Write), &slower)]);
        assert!(!headline(&agree, |_| Vec::new())[0].contains("disagree"));
        // A named primary test: its verdict leads, all tests become a part.
        let named = matrix(vec![part(Some(Test::Reread), &faster), part(None, &slower)]);
        let line = &headline(&named, |_| Vec::new())[0];
        assert!(
            line.starts_with("iozone: b is faster than a: +20.0% reread_geomean_bw_bytes_per_s"),
            "{line}"
        );
        assert!(
            line.ends_with("by test, which disagree: all -20.0% slower"),
            "{line}"
        );
    }
}
