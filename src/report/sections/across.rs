//! The sections of a report comparing two campaigns (`storlab report A B`),
//! in reading order: before any number, the headline (what changed in
//! versions and tags) with the verdict on each primary metric, and the
//! caveats; the two campaigns side by side; what differs between them;
//! then per workload every compared metric with its interval and verdict,
//! the primary metric's differences charted with the comparison's own
//! intervals. Laid out from a [`crate::analysis::comparison::Across`]: nothing
//! is computed here.

use std::collections::BTreeMap;

use super::color_of;
use crate::analysis::about::About;
use crate::analysis::comparison::Across;
use crate::analysis::differences::{Change, Differences};
use crate::analysis::verdict::Verdict;
use crate::report::document::{Chart, Section};
use crate::report::provenance::abbreviated;
use crate::report::sections::comparisons::across_table;
use crate::report::svg::{DiffBar, DiffChart, Rgb};
use crate::report::table::Table;
use crate::report::verdict::{words, Form};

/// The title: the candidate against the baseline.
pub fn title(a: &About, b: &About) -> String {
    let (ka, kb) = (&a.campaign, &b.campaign);
    if ka.name == kb.name {
        format!(
            "{} — campaign {} against campaign {}",
            ka.name, kb.id, ka.id
        )
    } else {
        format!(
            "campaign {} `{}` against campaign {} `{}`",
            kb.id, kb.name, ka.id, ka.name
        )
    }
}

/// The headline as the first heading — what changed in versions and
/// tags — then which campaign is the baseline, and the verdict on every
/// primary metric.
pub fn headline(x: &Across) -> Section {
    let (a, b) = (&x.baseline, &x.candidate);
    let mut s = Section::new(2, x.differences.headline()).with_class("headline");
    s.text(format!(
        "Campaign {} (started {}) against campaign {} (started {}), the baseline; targets and workloads are paired by name.",
        b.campaign.id, b.campaign.started_at, a.campaign.id, a.campaign.started_at
    ));
    s.list(verdicts(x));
    s
}

/// The verdict on every primary metric, one sentence each (the headline's
/// list, and `verdicts` of the JSON).
pub fn verdicts(x: &Across) -> Vec<String> {
    x.rows
        .iter()
        .filter(|r| r.primary)
        .map(|r| words(r, Form::Across))
        .collect()
}

/// The caveats, right under the headline; `None` when there are none.
pub fn caveats(x: &Across) -> Option<Section> {
    if x.caveats.is_empty() {
        return None;
    }
    let mut s = Section::new(2, "Caveats").with_class("warnings");
    s.list(x.caveats.clone());
    Some(s)
}

/// The two campaigns side by side: what ran, their identities, tags,
/// versions and hosts; the values that differ stand out.
pub fn sides(a: &About, b: &About) -> Section {
    let (ia, ib) = (a.campaign.id, b.campaign.id);
    let mut t = Table::new(
        &[
            "",
            &format!("campaign {ia} (baseline)"),
            &format!("campaign {ib}"),
        ],
        &[false, false, false],
    );
    // (label, baseline's, candidate's, whether a difference stands out)
    let mut rows: Vec<(String, String, String, bool)> = vec![
        (
            "Experiment".into(),
            a.campaign.name.clone(),
            b.campaign.name.clone(),
            true,
        ),
        (
            "Started".into(),
            a.campaign.started_at.clone(),
            b.campaign.started_at.clone(),
            false,
        ),
        ("Runs".into(), runs_text(a), runs_text(b), true),
        (
            "Campaign UUID".into(),
            a.facts.uuid.clone(),
            b.facts.uuid.clone(),
            false,
        ),
        (
            "Tags".into(),
            pairs(&a.facts.provenance.tags),
            pairs(&b.facts.provenance.tags),
            true,
        ),
    ];
    let (va, vb) = (versions(a), versions(b));
    for program in union(&va, &vb) {
        let side =
            |v: &BTreeMap<String, String>| v.get(program).cloned().unwrap_or_else(|| "—".into());
        rows.push((format!("Version of {program}"), side(&va), side(&vb), true));
    }
    let (ha, hb) = (&a.facts.provenance.host, &b.facts.provenance.host);
    for fact in union(ha, hb) {
        let side = |h: &BTreeMap<String, String>| {
            h.get(fact)
                .map(|v| abbreviated(v))
                .unwrap_or_else(|| "—".into())
        };
        rows.push((format!("Host: {fact}"), side(ha), side(hb), true));
    }
    let imported = |c: &About| match c.facts.imported.get("from") {
        Some(from) => format!(
            "{from} (campaign {} there)",
            c.facts
                .imported
                .get("original_id")
                .map(String::as_str)
                .unwrap_or("?")
        ),
        None => "—".into(),
    };
    rows.push(("Imported from".into(), imported(a), imported(b), false));
    for (i, (label, va, vb, stands_out)) in rows.into_iter().enumerate() {
        if stands_out && va != vb {
            t.marked.insert((i, 1));
            t.marked.insert((i, 2));
        }
        t.push(vec![label, va, vb]);
    }
    let mut s = Section::new(2, "The two campaigns");
    s.table(t);
    s
}

fn runs_text(c: &About) -> String {
    let k = &c.campaign;
    format!(
        "{}: {} of {} planned runs ok, {} failed",
        k.status, k.runs_ok, k.planned_runs, k.runs_failed
    )
}

/// The versions of the programs a campaign used, storlab's among them.
fn versions(c: &About) -> BTreeMap<String, String> {
    let mut v = c.facts.provenance.versions.clone();
    v.insert("storlab".into(), c.campaign.storlab_version.clone());
    v
}

fn union<'m>(a: &'m BTreeMap<String, String>, b: &'m BTreeMap<String, String>) -> Vec<&'m str> {
    let mut keys: Vec<&str> = a.keys().chain(b.keys()).map(String::as_str).collect();
    keys.sort();
    keys.dedup();
    keys
}

fn pairs(m: &BTreeMap<String, String>) -> String {
    match m.is_empty() {
        true => "—".into(),
        false => m
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join(" "),
    }
}

/// Everything that differs between the campaigns, one row each, grouped;
/// then what is on one side only and the facts that change with every
/// campaign (set apart, not differences).
pub fn differences(a: &About, b: &About, d: &Differences) -> Section {
    let (ia, ib) = (a.campaign.id, b.campaign.id);
    let mut s = Section::new(2, "What differs");
    let groups: [(&str, &Vec<Change>); 6] = [
        ("version", &d.versions),
        ("tag", &d.tags),
        ("host", &d.host),
        ("workload parameter", &d.workload_params),
        ("target parameter", &d.target_params),
        ("target fact", &d.target_facts),
    ];
    let mut t = Table::new(
        &[
            "",
            "of",
            "name",
            &format!("campaign {ia}"),
            &format!("campaign {ib}"),
        ],
        &[false; 5],
    );
    for (group, changes) in groups {
        for c in changes {
            t.push(vec![
                group.to_string(),
                c.of.clone(),
                c.name.clone(),
                c.a.clone().unwrap_or_else(|| "(unset)".into()),
                c.b.clone().unwrap_or_else(|| "(unset)".into()),
            ]);
        }
    }
    if t.rows.is_empty() {
        s.text("Nothing differs in versions, tags, host, workload or target parameters, or the targets' facts.");
    } else {
        s.table(t);
    }
    if !d.only_in_a.is_empty() {
        s.text(format!(
            "Only in campaign {ia} (not compared): {}.",
            d.only_in_a.join(", ")
        ));
    }
    if !d.only_in_b.is_empty() {
        s.text(format!(
            "Only in campaign {ib} (not compared): {}.",
            d.only_in_b.join(", ")
        ));
    }
    if !d.varies.is_empty() {
        let names: Vec<String> = d
            .varies
            .iter()
            .map(|c| format!("{} {}", c.of, c.name))
            .collect();
        s.text(format!(
            "Left out, as they take a new value with every campaign of the same configuration ({} target fact(s)): {}.",
            names.len(),
            names.join(", ")
        ));
    }
    s
}

/// Per workload of the baseline with compared rows: the primary metric's
/// difference on each target charted with its interval, then every
/// compared metric with both sides, the difference, p and the verdict.
pub fn workloads(x: &Across) -> Vec<Section> {
    let (a, b) = (&x.baseline, &x.candidate);
    let (ia, ib) = (a.campaign.id, b.campaign.id);
    let mut out = Vec::new();
    // Each workload's rows in their order, gathered in one pass.
    let mut rows_of: BTreeMap<&str, Vec<&Verdict>> = BTreeMap::new();
    for r in &x.rows {
        rows_of.entry(&r.workload).or_default().push(r);
    }
    for w in &a.workloads {
        let rows: Vec<Verdict> = (rows_of.get(w.name.as_str()).into_iter().flatten())
            .map(|r| (*r).clone())
            .collect();
        if rows.is_empty() {
            continue;
        }
        let mut s = Section::new(2, super::workload::titled(&w.name, &w.kind));
        if let Some(chart) = diff_chart(&|t| color_of(a, t), &w.name, &rows, ia, ib) {
            s.chart(chart);
        }
        // The workload is the section's heading.
        s.table(across_table(&rows, ia, ib).without_column(0));
        out.push(s);
    }
    out
}

/// The primary metric's difference on each target, campaign `b` against
/// `a`, with the comparison's own interval (an unbounded one drawn open);
/// `None` when no primary metric was compared.
fn diff_chart(
    color: &dyn Fn(&str) -> Rgb,
    workload: &str,
    rows: &[Verdict],
    a: i64,
    b: i64,
) -> Option<Chart> {
    let primary: Vec<&Verdict> = rows.iter().filter(|r| r.primary).collect();
    let metric = primary.first()?.metric.clone();
    let bars: Vec<DiffBar> = primary
        .iter()
        .filter_map(|r| {
            let cmp = r.candidate.comparison.as_ref()?;
            Some(DiffBar {
                label: r.baseline.target.clone(),
                diff_pct: cmp.diff_pct,
                ci: Some((cmp.diff_pct_ci.low, cmp.diff_pct_ci.high)),
                color: color(&r.baseline.target),
            })
        })
        .collect();
    (!bars.is_empty()).then(|| {
        Chart::Diff(DiffChart {
            title: format!(
                "{workload}: {metric}, campaign {b} against campaign {a} (% difference, CI as judged)"
            ),
            x_label: format!("difference from campaign {a} (%)"),
            bars,
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::model::TargetStats;
    use crate::metric::{Direction, Unit};
    use crate::stats::{Comparison, Interval, Method, Verdict as Call};

    fn stats(target: &str, comparison: Option<Comparison>) -> TargetStats {
        TargetStats {
            target: target.into(),
            values: vec![1.0, 2.0],
            summary: None,
            ci: None,
            ci_clipped: false,
            outliers: Vec::new(),
            comparison,
            verdict: Some(Call::Better),
            margin: None,
            equivalent: false,
            outcome: Some(crate::stats::Outcome::Different),
            settle: None,
            correction: None,
            too_few: false,
            caveats: Vec::new(),
        }
    }

    fn row(target: &str, primary: bool, low: f64, high: f64) -> Verdict {
        let cmp = Comparison {
            method: Method::WelchLog,
            diff_pct: (low + high) / 2.0,
            diff_pct_ci: Interval {
                low,
                high,
                level: 0.95,
            },
            t: 3.0,
            df: 4.0,
            p_value: 0.01,
            n: 3,
            se: 0.1,
            fieller: None,
        };
        Verdict {
            workload: "w".into(),
            primary,
            metric: if primary { "tps" } else { "lat_mean_ns" }.into(),
            unit: Unit::Flag,
            direction: Direction::HigherIsBetter,
            baseline_label: format!("{target} @ campaign 1"),
            baseline: stats(target, None),
            candidate_label: format!("{target} @ campaign 2"),
            candidate: stats(target, Some(cmp)),
            family: "w".into(),
            exploratory: !primary,
            parts: None,
            kind: crate::analysis::verdict::Kind::Mean,
        }
    }

    /// A chart that misleads is a bug: each bar's whisker is its
    /// comparison's interval, an unbounded one passed on as such, and only
    /// the primary metric is charted (the table has the others).
    #[test]
    fn the_chart_draws_the_comparisons_own_intervals_of_the_primary_metric() {
        let rows = [
            row("x", true, 2.0, 8.0),
            row("y", true, f64::NEG_INFINITY, f64::INFINITY),
            row("x", false, -50.0, -40.0),
        ];
        let Some(Chart::Diff(c)) = diff_chart(&|_| Rgb(0, 0, 0), "w", &rows, 1, 2) else {
            panic!("a difference chart");
        };
        let b = &c.bars;
        assert_eq!(b.len(), 2, "the primary metric only");
        assert_eq!((b[0].label.as_str(), b[0].diff_pct), ("x", 5.0));
        assert_eq!(b[0].ci, Some((2.0, 8.0)));
        assert_eq!(b[1].label, "y");
        assert_eq!(b[1].ci, Some((f64::NEG_INFINITY, f64::INFINITY)));
        assert!(
            c.title.contains("tps, campaign 2 against campaign 1"),
            "{}",
            c.title
        );
        assert!(diff_chart(&|_| Rgb(0, 0, 0), "w", &rows[2..], 1, 2).is_none());
    }
}
