//! The study as tables, in the seeds' shape: a row per target, a column
//! per swept value; mean ± 95% CI, and the % difference from the baseline
//! (or from a factor's first level), not significant ones in parentheses.
//! `storlab show` prints them; Markdown and HTML render the same tables
//! (see [`super::sections`]).

use crate::analysis::model::TargetStats;
use crate::analysis::study::{LevelStudy, Pivot, Study};
use crate::report::format::{effect, effect_text, Notation};
use crate::report::table::Table;
use crate::report::text::mean_ci_text;
use crate::stats::Verdict;

/// The note under every table of differences.
pub const SIGNIFICANCE: &str =
    "differences in parentheses are not significant (p ≥ 0.05, or under 1%)";

/// The header: the rows' title, then the column factor's values.
fn header(p: &Pivot, corner: &str) -> (Vec<String>, Vec<bool>) {
    let mut header = vec![match &p.column {
        Some(a) => format!("{corner} \\ {}", a.key),
        None => corner.to_string(),
    }];
    match &p.column {
        Some(a) => header.extend(a.levels.iter().map(|l| l.text.clone())),
        None => header.push(p.metric.clone()),
    }
    let mut right = vec![false];
    right.extend(std::iter::repeat(true).take(p.width()));
    (header, right)
}

fn table(p: &Pivot, corner: &str, cell: impl Fn(&TargetStats) -> String) -> Table {
    let (header, right) = header(p, corner);
    let mut t = Table {
        header,
        rows: Vec::new(),
        right,
        ..Default::default()
    };
    for r in &p.rows {
        let mut row = vec![r.label.clone()];
        row.extend(
            r.cells
                .iter()
                .map(|c| c.as_ref().map(&cell).unwrap_or_else(|| "—".into())),
        );
        t.push(row);
    }
    t
}

/// Mean ± 95% CI of the pivot's metric.
pub fn means(p: &Pivot) -> Table {
    table(p, "target", |s| mean_ci_text(s, p.unit))
}

/// Each cell's % difference from the baseline target on the same workload
/// variant, with its interval when `intervals`.
pub fn differences(p: &Pivot, baseline: &str, intervals: bool) -> Table {
    table(p, "target", |s| match &s.comparison {
        None if s.target == baseline => "baseline".into(),
        _ => difference(s, intervals),
    })
}

/// Each level's % difference from the factor's first level.
pub fn levels(l: &LevelStudy, intervals: bool) -> Table {
    table(&l.pivot, "level on target", |s| difference(s, intervals))
}

/// `+41.2%`, `(+3.1%)` when not significant, `—` with nothing to compare.
pub fn difference(s: &TargetStats, intervals: bool) -> String {
    let Some(c) = &s.comparison else {
        return "—".into();
    };
    let ci = &c.diff_pct_ci;
    let text = match intervals {
        true if ci.low.is_finite() && ci.high.is_finite() => {
            effect_text(c.diff_pct, ci.low, ci.high)
        }
        true => format!(
            "{} [unbounded]",
            effect(c.diff_pct, Notation::of(&[c.diff_pct]))
        ),
        false => effect(c.diff_pct, Notation::of(&[c.diff_pct])),
    };
    match s.verdict {
        Some(Verdict::Better | Verdict::Worse) => text,
        _ => format!("({text})"),
    }
}

/// What a pivot shows, as a caption: `tpcb: tps (tx/s), mean ± 95% CI`.
pub fn caption(s: &Study, p: &Pivot, what: &str) -> String {
    let by = match &p.column {
        Some(a) => format!(", by {}", a.key),
        None => String::new(),
    };
    format!("{}: {} ({}), {what}{by}", s.family, p.metric, p.unit)
}

/// Caption of a factor's level comparison; two releases read as one
/// against the other (`Gluster 11.1 against 10.3`).
pub fn level_caption(s: &Study, l: &LevelStudy) -> String {
    let releases = l.releases.as_ref().map(|(a, b)| format!("{a} against {b}"));
    let versus = releases
        .unwrap_or_else(|| format!("each {} against {}={}", l.factor, l.factor, l.base.text));
    format!(
        "{}: {} of {versus} on the same target (% difference, CI as judged)",
        s.family, l.pivot.metric
    )
}
