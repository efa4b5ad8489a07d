//! Comparisons ([`crate::analysis::comparison`]) as tables: the targets of
//! one campaign against its baseline, and the same pairs in two campaigns.

use crate::analysis::comparison::Row;
use crate::report::table::{Table, Tone};
use crate::report::text::{caveat_marks, diff_text, mean_ci_text, p_text};

/// The rows of a comparison across campaigns `a` (baseline) and `b`:
/// the campaigns name the columns, so each row names its target once.
pub fn across_table(rows: &[Row], a: i64, b: i64) -> Table {
    let (ha, hb) = (format!("campaign {a}"), format!("campaign {b}"));
    let mut t = Table::new(
        &[
            "workload",
            "target",
            "metric",
            &ha,
            &hb,
            "difference [95% CI]",
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
            verdict_cell(r),
        ]);
        if let Some(tone) = Tone::of(r.candidate.verdict) {
            t.tones.insert((t.rows.len() - 1, 7), tone);
        }
    }
    // A narrow terminal keeps both sides, the difference and the verdict:
    // p goes first, then a workload or metric column that says the same in
    // every row; the verdict (with its caveats) wraps, an interval never.
    let uniform = |f: fn(&Row) -> &str| rows.windows(2).all(|w| f(&w[0]) == f(&w[1]));
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

/// The verdict's plain word for the row's metric, or a dash.
pub fn verdict_word(r: &Row) -> &'static str {
    r.candidate
        .verdict
        .map(|v| v.word(r.direction))
        .unwrap_or("—")
}

/// The verdict's word with the caveats it carries (`slower ⚠ page cache
/// (ram)`): what the gate of `compare --fail-on-regression` judges.
fn verdict_cell(r: &Row) -> String {
    let marks = caveat_marks(&r.candidate.caveats);
    match (r.candidate.verdict, marks.is_empty()) {
        (Some(_), false) => format!("{} {marks}", verdict_word(r)),
        _ => verdict_word(r).to_string(),
    }
}

pub fn table(rows: &[Row]) -> Table {
    let mut t = Table::new(
        &[
            "workload",
            "metric",
            "baseline",
            "mean ± 95% CI",
            "candidate",
            "mean ± 95% CI",
            "difference [95% CI]",
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
            verdict_cell(r),
        ]);
        if let Some(tone) = Tone::of(r.candidate.verdict) {
            t.tones.insert((t.rows.len() - 1, 8), tone);
        }
    }
    // A narrow terminal keeps the candidate, its mean, the difference and
    // the verdict: the baseline is the same on every row.
    t.may_drop(&["p", "metric", "baseline"]);
    t.may_wrap(&["verdict", "difference [95% CI]", "mean ± 95% CI"]);
    t
}
