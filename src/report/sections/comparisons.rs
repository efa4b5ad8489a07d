//! Comparisons ([`crate::analysis::comparison`]) as tables: the targets of
//! one campaign against its baseline, and the same pairs in two campaigns.

use crate::analysis::verdict::Verdict;
use crate::report::table::{Table, Tone};
use crate::report::text::{diff_text, mean_ci_text, p_text};
use crate::report::verdict::{words, Form};

/// The rows of a comparison across campaigns `a` (baseline) and `b`:
/// the campaigns name the columns, so each row names its target once.
pub fn across_table(rows: &[Verdict], a: i64, b: i64) -> Table {
    let (ha, hb) = (format!("campaign {a}"), format!("campaign {b}"));
    let mut t = Table::new(
        &[
            "workload",
            "target",
            "metric",
            &ha,
            &hb,
            "difference [CI as judged]",
            "p",
            "verdict",
        ],
        &[false, false, false, true, true, true, true, false],
    );
    for r in rows {
        t.push(vec![
            r.workload.clone(),
            r.baseline.target.clone(),
            r.metric.clone(),
            mean_ci_text(&r.baseline, r.unit),
            mean_ci_text(&r.candidate, r.unit),
            diff_text(&r.candidate),
            p_text(&r.candidate),
            words(r, Form::Word),
        ]);
        if let Some(tone) = Tone::of(r.outcome()) {
            t.tones.insert((t.rows.len() - 1, 7), tone);
        }
    }
    // A narrow terminal keeps both sides, the difference and the verdict:
    // p goes first, then a workload or metric column that says the same in
    // every row; the verdict (with its caveats) wraps, an interval never.
    let uniform = |f: fn(&Verdict) -> &str| rows.windows(2).all(|w| f(&w[0]) == f(&w[1]));
    let mut drop = vec!["p"];
    if uniform(|r| &r.workload) {
        drop.push("workload");
    }
    if uniform(|r| &r.metric) {
        drop.push("metric");
    }
    t.may_drop(&drop);
    t.may_wrap(&["verdict"]);
    t
}

pub fn table(rows: &[Verdict]) -> Table {
    let mut t = Table::new(
        &[
            "workload",
            "metric",
            "baseline",
            "mean ± 95% CI",
            "candidate",
            "mean ± 95% CI",
            "difference [CI as judged]",
            "p",
            "verdict",
        ],
        &[false, false, false, true, false, true, true, true, false],
    );
    for r in rows {
        t.push(vec![
            r.workload.clone(),
            r.metric.clone(),
            r.baseline_label.clone(),
            mean_ci_text(&r.baseline, r.unit),
            r.candidate_label.clone(),
            mean_ci_text(&r.candidate, r.unit),
            diff_text(&r.candidate),
            p_text(&r.candidate),
            words(r, Form::Word),
        ]);
        if let Some(tone) = Tone::of(r.outcome()) {
            t.tones.insert((t.rows.len() - 1, 8), tone);
        }
    }
    // A narrow terminal keeps the candidate, its mean, the difference and
    // the verdict: the baseline is the same on every row.
    t.may_drop(&["p", "metric", "baseline"]);
    t.may_wrap(&["verdict", "difference [CI as judged]", "mean ± 95% CI"]);
    t
}
