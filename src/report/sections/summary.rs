//! The campaign summary shown after `storlab run` and by `storlab show`: per
//! workload and target, the primary metric's mean ± 95% CI, its CV, the p99
//! latency and the verdict against the baseline.

use crate::analysis::about::About;
use crate::analysis::model::TargetStats;
use crate::analysis::verdict::Outcome;
use crate::analysis::CampaignAnalysis;
use crate::metric::catalogue::LAT_P99_NS;
use crate::report::document::Section;
use crate::report::format::format_value;
use crate::report::table::{Table, Tone};
use crate::report::text::mean_ci_text;
use crate::report::verdict::{words, Form};

/// The class of the section with the campaign's provenance (versions,
/// host facts), which the terminal shows only when asked (`-v`).
pub const PROVENANCE: &str = "provenance";

/// The line on the campaign, its provenance, and the summary table.
pub fn sections(a: &CampaignAnalysis) -> Vec<Section> {
    let mut head = Section::untitled(1);
    head.text(header(&a.about));
    let mut provenance = Section::untitled(1).with_class(PROVENANCE);
    provenance.text(crate::report::provenance::provenance_text(&a.about).trim_end());
    let mut table = Section::untitled(1);
    table.table(summary_table(a));
    vec![head, provenance, table]
}

/// The cell of `t` against the baseline: its verdict, or what stands in
/// for one.
fn versus(a: &CampaignAnalysis, workload: &str, metric: &str, t: &TargetStats) -> String {
    match a.verdict(workload, metric, &t.target) {
        Some(v) => words(v, Form::Summary),
        None if t.target == a.model.baseline => "baseline".into(),
        // Fewer than two runs on one side: no comparison to show.
        None => "—".into(),
    }
}

fn summary_table(a: &CampaignAnalysis) -> Table {
    let mut t = Table::new(
        &[
            "workload",
            "target",
            "n",
            "primary metric",
            "mean ± 95% CI",
            "CV",
            "p99 latency",
            "failed",
            "vs baseline",
        ],
        &[false, false, true, false, true, true, true, true, true],
    );
    for wr in &a.about.workloads {
        let w = a.workload(&wr.name);
        let Some(m) = w.and_then(|w| w.primary_metric()) else {
            failed_rows(&mut t, a, &wr.name);
            continue;
        };
        for ts in &m.targets {
            let figures = a.pair(&wr.name, &ts.target);
            let failed = figures.map_or(0, |f| f.failed);
            let cv = ts
                .summary
                .filter(|s| s.n > 1)
                .map(|s| format!("{:.1}%", s.cv * 100.0))
                .unwrap_or_else(|| "—".into());
            let p99 = figures
                .and_then(|f| f.p99_ns)
                .map(|p99| format_value(p99, LAT_P99_NS.unit))
                .unwrap_or_else(|| "—".into());
            t.push(vec![
                wr.name.clone(),
                ts.target.clone(),
                ts.values.len().to_string(),
                m.name.clone(),
                mean_ci_text(ts, m.unit),
                cv,
                p99,
                failed.to_string(),
                versus(a, &wr.name, &m.name, ts),
            ]);
            if let Some(tone) = tone(ts) {
                t.tones.insert((t.rows.len() - 1, 8), tone);
            }
        }
        failed_rows(&mut t, a, &wr.name);
    }
    // A narrow terminal keeps the verdicts: the spread, the tail and the
    // metric's name (the mean's unit says what it is) go first, and the
    // failure count only where it is all zeros (the header line counts them).
    let no_failure = t.rows.iter().all(|r| r[7] == "0");
    let mut drop = vec!["CV", "p99 latency"];
    if no_failure {
        drop.push("failed");
    }
    drop.push("primary metric");
    t.may_drop(&drop);
    // Then the verdicts wrap in their cell rather than the table in records.
    t.may_wrap(&["vs baseline", "mean ± 95% CI"]);
    t
}

/// A row for each pair of workload `w` whose every measured run failed:
/// nothing to average, but the failures are where the table is read (a
/// campaign whose only pair failed printed a header with no rows).
fn failed_rows(t: &mut Table, a: &CampaignAnalysis, w: &str) {
    for f in a.failed_pairs_of(w) {
        let dash = || "—".to_string();
        t.push(vec![
            f.workload.clone(),
            f.target.clone(),
            "0".into(),
            f.primary.clone(),
            dash(),
            dash(),
            dash(),
            f.failed.to_string(),
            match f.failed {
                1 => "its run failed".into(),
                n => format!("all {n} runs failed"),
            },
        ]);
        t.tones.insert((t.rows.len() - 1, 8), Tone::Worse);
    }
}

/// The colour a verdict cell takes on a terminal.
fn tone(t: &TargetStats) -> Option<Tone> {
    Tone::of(Outcome::of(t).filter(|_| t.comparison.is_some()))
}

/// The line above the summary table: `campaign 1 `quick` (finished),
/// 2026-11-26 04:28 UTC: 42 of 42 planned runs ok, 0 failed`.
fn header(c: &About) -> String {
    let k = &c.campaign;
    format!(
        "campaign {} `{}` ({}), {}: {} of {} planned runs ok, {} failed",
        k.id,
        k.name,
        k.status,
        when(&k.started_at),
        k.runs_ok,
        k.planned_runs,
        k.runs_failed
    )
}

/// An RFC 3339 time as people read it, to the minute: `2026-11-26 04:28
/// UTC` (its own offset when not UTC); the text as stored when it is not
/// one.
fn when(rfc3339: &str) -> String {
    match chrono::DateTime::parse_from_rfc3339(rfc3339) {
        Ok(t) if t.offset().local_minus_utc() == 0 => t.format("%Y-%m-%d %H:%M UTC").to_string(),
        Ok(t) => t.format("%Y-%m-%d %H:%M %:z").to_string(),
        Err(_) => rfc3339.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::model::{target_stats, Report};
    use crate::metric::Direction::HigherIsBetter;

    #[test]
    fn only_the_baseline_is_called_baseline_when_there_is_no_comparison() {
        let a = CampaignAnalysis {
            model: Report {
                baseline: "ext4".into(),
                targets: vec!["ext4".into(), "zfs".into()],
                workloads: Vec::new(),
                warnings: Vec::new(),
            },
            ..Default::default()
        };
        let one_run = target_stats("zfs", vec![1.0], None, HigherIsBetter);
        assert_eq!(versus(&a, "w", "tps", &one_run), "—");
        let base = target_stats("ext4", vec![1.0, 2.0], None, HigherIsBetter);
        assert_eq!(versus(&a, "w", "tps", &base), "baseline");
    }
}
