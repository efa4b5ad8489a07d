//! The campaign's own sections: what ran, the headline verdicts and the
//! environment as a spec table.

use serde_json::Value;

use crate::analysis::model::{runs_text, MetricReport, Report, TargetStats, WorkloadReport};
use crate::experiment::sweep::family_of as family;
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

/// One line per comparison of a primary metric, then the sentences
/// `more` adds on each workload (what the verdicts rest on: read cells
/// that came from memory) as notes under them, not among them.
pub fn headline_section(r: &Report, more: impl Fn(&WorkloadReport) -> Vec<String>) -> Section {
    let mut s = Section::untitled(1).with_class("headline");
    let (verdicts, notes) = headline(r, more);
    s.list(verdicts);
    for note in notes {
        s.text(note);
    }
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
/// part's verdict too. A workload's sweep (or a study of many targets)
/// whose comparisons find no significant difference in at least
/// [`GROUPED`] of them says so once, where the first of them would stand:
/// seed 000's 4 configurations × 4 transaction counts read as 12 lines of
/// "no significant difference", one screen before any figure.
fn headline(
    r: &Report,
    more: impl Fn(&WorkloadReport) -> Vec<String>,
) -> (Vec<String>, Vec<String>) {
    let mut items: Vec<Item> = Vec::new();
    let mut notes = Vec::new();
    for w in &r.workloads {
        notes.extend(more(w));
        let Some(m) = w.primary_metric() else {
            continue;
        };
        for t in m
            .targets
            .iter()
            .filter(|t| t.comparison.is_some() || t.too_few)
        {
            let parts = parts_text(w, m, &t.target);
            let plain = t.verdict == Some(Verdict::NoSignificantDifference)
                && !t.too_few
                && chance_text(t).is_none()
                && parts.is_none();
            if plain {
                items.push(Item::NoDifference {
                    family: family(&w.name),
                    workload: &w.name,
                    metric: m,
                    stats: t,
                });
                continue;
            }
            let mut line = verdict_line(&w.name, t, m, &r.baseline);
            if let Some(parts) = parts {
                line.push_str(&format!("; {parts}"));
            }
            items.push(Item::Line(line, (family(&w.name), m.name.as_str())));
        }
    }
    (group_no_differences(items, &r.baseline), notes)
}

/// How many comparisons of one workload family that find no significant
/// difference the headline says in one line instead of one each.
const GROUPED: usize = 3;

/// A headline line with its workload family and metric, or a comparison
/// that found no significant difference (said alone, or with the others
/// of its family).
enum Item<'a> {
    Line(String, (&'a str, &'a str)),
    NoDifference {
        family: &'a str,
        workload: &'a str,
        metric: &'a MetricReport,
        stats: &'a TargetStats,
    },
}

/// The items as lines: each family's (and primary metric's) comparisons
/// without a significant difference as one line where there are at least
/// [`GROUPED`] of them, at the first one's place; one line each otherwise.
fn group_no_differences(items: Vec<Item>, baseline: &str) -> Vec<String> {
    fn key<'a>(i: &Item<'a>) -> Option<(&'a str, &'a str)> {
        match i {
            Item::NoDifference { family, metric, .. } => Some((*family, metric.name.as_str())),
            Item::Line(..) => None,
        }
    }
    let count = |k: (&str, &str)| items.iter().filter(|i| key(i) == Some(k)).count();
    // Every comparison of the family on that metric, significant or not.
    let of = |k: (&str, &str)| {
        items
            .iter()
            .filter(|i| match i {
                Item::Line(_, l) => *l == k,
                _ => key(i) == Some(k),
            })
            .count()
    };
    let mut said = std::collections::BTreeSet::new();
    let mut out = Vec::new();
    for item in &items {
        match (item, key(item)) {
            (Item::Line(line, _), _) => out.push(line.clone()),
            (Item::NoDifference { .. }, Some(k)) if count(k) >= GROUPED => {
                if said.insert(k) {
                    let group: Vec<&Item> = items.iter().filter(|i| key(i) == Some(k)).collect();
                    out.push(no_difference_line(&group, of(k), baseline));
                }
            }
            (
                Item::NoDifference {
                    workload,
                    metric,
                    stats,
                    ..
                },
                _,
            ) => out.push(verdict_line(workload, stats, metric, baseline)),
        }
    }
    out
}

/// `pgbench: no significant difference from d in any of 12 comparisons
/// (3 targets × 4 variants): tps from -15.4% to +12.0%, p 0.231–0.774
/// (0.731–0.774 adjusted over 12) ⚠ noisy host; ±5% needs about 20–175
/// runs per target`; `in 4 of its 6 comparisons (on 3 targets, 2
/// variants)` when others of the `family` comparisons were significant.
fn no_difference_line(group: &[&Item], family: usize, baseline: &str) -> String {
    let mut family_name = "";
    let mut metric_name = String::new();
    let mut workloads = std::collections::BTreeSet::new();
    let mut targets = std::collections::BTreeSet::new();
    let (mut diffs, mut ps, mut adjusted, mut caveats) = (vec![], vec![], vec![], vec![]);
    let mut family_size = 0;
    let mut settle: Vec<(f64, Option<usize>)> = Vec::new();
    for item in group {
        let Item::NoDifference {
            family: family_of,
            workload,
            metric,
            stats,
        } = item
        else {
            continue;
        };
        family_name = family_of;
        metric_name = human_name(&metric.name);
        workloads.insert(*workload);
        targets.insert(stats.target.as_str());
        if let Some(c) = &stats.comparison {
            diffs.push(c.diff_pct);
            ps.push(c.p_value);
        }
        if let Some(f) = &stats.correction {
            adjusted.push(f.p_adjusted);
            family_size = family_size.max(f.comparisons);
        }
        caveats.extend(stats.caveats.iter().cloned());
        if let Some(s) = stats.settle {
            settle.push((s.pct, s.runs));
        }
    }
    let span = |v: &[f64], one: &dyn Fn(f64) -> String| {
        let lo = v.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        match (lo == hi, v.is_empty()) {
            (_, true) => "—".to_string(),
            (true, false) => one(lo),
            (false, false) => format!("{}–{}", one(lo), one(hi)),
        }
    };
    let p = |x: f64| match x {
        x if x < 0.001 => "<0.001".to_string(),
        x => format!("{x:.3}"),
    };
    let (on, all) = match group.len() == family {
        true => ("", format!("any of {family}")),
        false => ("on ", format!("{} of its {family}", group.len())),
    };
    let shape = match (targets.len(), workloads.len()) {
        (t, 1) => format!("{on}{t} targets"),
        (1, w) => format!("{on}{w} variants"),
        (t, w) if on.is_empty() => format!("{t} targets × {w} variants"),
        (t, w) => format!("on {t} targets, {w} variants"),
    };
    let n = Notation::of(&diffs);
    let lo = diffs.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = diffs.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let diff = match lo == hi {
        true => format!("{metric_name} {} in each", effect(lo, n)),
        false => format!("{metric_name} from {} to {}", effect(lo, n), effect(hi, n)),
    };
    let mut line = format!(
        "{family_name}: no significant difference from {baseline} in {all} comparisons ({shape}): {diff}, p {}",
        span(&ps, &p),
    );
    if !adjusted.is_empty() {
        line.push_str(&format!(
            " ({} adjusted over {family_size})",
            span(&adjusted, &p)
        ));
    }
    let marks = caveat_marks(&caveats);
    if !marks.is_empty() {
        line.push_str(&format!(" {marks}"));
    }
    if let Some(&(pct, _)) = settle.first() {
        let runs: Vec<Option<usize>> = settle
            .iter()
            .filter(|(x, _)| *x == pct)
            .map(|(_, r)| *r)
            .collect();
        let known: Vec<usize> = runs.iter().flatten().copied().collect();
        let lo = known.iter().min();
        let hi = known.iter().max();
        let text = match (lo, hi, runs.len() == known.len()) {
            (Some(lo), Some(hi), true) if lo == hi => format!("about {lo}"),
            (Some(lo), Some(hi), true) => format!("about {lo}–{hi}"),
            (Some(lo), _, false) => format!(
                "about {lo} to more than {}",
                crate::stats::resolve::MAX_RUNS
            ),
            _ => runs_text(None),
        };
        line.push_str(&format!("; ±{pct}% needs {text} runs per target"));
    }
    line
}

/// `w: ` and the verdict sentence of `t`, its caveat marks (on the first
/// screen; the tables say in how many runs) and what would settle it.
fn verdict_line(workload: &str, t: &TargetStats, m: &MetricReport, baseline: &str) -> String {
    let mut line = format!("{workload}: {}", verdict_sentence(t, m, baseline));
    let marks = caveat_marks(&t.caveats);
    if !marks.is_empty() {
        line.push_str(&format!(" {marks}"));
    }
    if let Some(more) = settle_text(t) {
        line.push_str(&format!("; {more}"));
    }
    line
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
        let line = &headline(&r, |_| Vec::new()).0[0];
        assert!(
            line.starts_with("iozone: b is slower than a: -20.0% throughput (geometric mean) ["),
            "{line}"
        );
        assert!(
            line.ends_with("; by test, which disagree: write -20.0% slower, reread +20.0% faster"),
            "{line}"
        );
        let agree = matrix(vec![part(None, &slower), part(Some(Test::Write), &slower)]);
        assert!(!headline(&agree, |_| Vec::new()).0[0].contains("disagree"));
        // A named primary test: its verdict leads, all tests become a part.
        let named = matrix(vec![part(Some(Test::Reread), &faster), part(None, &slower)]);
        let line = &headline(&named, |_| Vec::new()).0[0];
        assert!(
            line.starts_with(
                "iozone: b is faster than a: +20.0% reread throughput (geometric mean)"
            ),
            "{line}"
        );
        assert!(
            line.ends_with("by test, which disagree: all -20.0% slower"),
            "{line}"
        );
    }

    /// A workload of one metric on baseline `a` and target `b`.
    fn plain(name: &str, b: &[f64]) -> WorkloadReport {
        let a = [100.0, 104.0, 97.0];
        let higher = Direction::HigherIsBetter;
        let metric = MetricReport {
            name: "tps".into(),
            exploratory: false,
            key: MetricKey::plain("tps"),
            unit: Unit::TransactionsPerSec,
            direction: higher,
            analysis: Analysis::Ratio,
            targets: vec![
                target_stats("a", a.to_vec(), None, higher),
                target_stats("b", b.to_vec(), welch_log(&a, b, LEVEL), higher),
            ],
        };
        WorkloadReport {
            name: name.into(),
            kind: "pgbench".into(),
            primary: "tps".into(),
            metrics: vec![metric],
        }
    }

    // Seed 000: 4 transaction counts, nothing significant: one line, at
    // the first one's place; a significant one keeps its own.
    #[test]
    fn a_sweep_without_a_significant_difference_is_said_once() {
        let same = [101.0, 99.0, 103.0];
        let mut workloads: Vec<WorkloadReport> = (1..=4)
            .map(|n| plain(&format!("pg[transactions={n}]"), &same))
            .collect();
        workloads.insert(1, plain("seq", &[200.0, 201.0, 199.0]));
        let r = Report {
            baseline: "a".into(),
            targets: vec!["a".into(), "b".into()],
            workloads,
            warnings: Vec::new(),
        };
        let (lines, _) = headline(&r, |_| Vec::new());
        assert_eq!(lines.len(), 2, "{lines:#?}");
        assert!(
            lines[0].eq(
                "pg: no significant difference from a in any of 4 comparisons (4 variants): TPS +0.7% in each, p 0.784; ±5% needs about 5 runs per target"
            ),
            "{}",
            lines[0]
        );
        assert!(
            lines[1].starts_with("seq: b is faster than a"),
            "{}",
            lines[1]
        );
        // Two are said one by one.
        let mut r = r;
        r.workloads.truncate(3);
        let (lines, _) = headline(&r, |_| Vec::new());
        assert_eq!(lines.len(), 3, "{lines:#?}");
        assert!(
            lines[0].starts_with("pg[transactions=1]: no significant difference between b and a")
        );
        // Where others of the family were significant, it says how many of
        // them were not; what contributors add are notes, apart.
        r.workloads = (1..=4)
            .map(|n| plain(&format!("pg[transactions={n}]"), &same))
            .chain([plain("pg[transactions=5]", &[200.0, 201.0, 199.0])])
            .collect();
        let (lines, notes) = headline(&r, |w| vec![format!("{}: a note", w.name)]);
        assert!(
            lines[0].starts_with(
                "pg: no significant difference from a in 4 of its 5 comparisons (on 4 variants): "
            ),
            "{}",
            lines[0]
        );
        assert!(lines[1].starts_with("pg[transactions=5]: b is faster than a"));
        assert_eq!(notes.len(), 5);
    }
}
