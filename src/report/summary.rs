//! The campaign summary shown after `storlab run` and by `storlab show`: per
//! workload and target, the primary metric's mean ± 95% CI, its CV, the p99
//! latency and the verdict against the baseline.

use super::format::format_value;
use super::model::{self, TargetStats};
use super::sections::mean_ci_text;
use super::table::Table;
use crate::metric::catalogue::LAT_P99_NS;
use crate::metric::MetricDef;
use crate::stats::{summarize, Verdict};
use crate::store::CampaignData;

/// Values of one metric over a pair's measured, successful runs.
pub fn metric_values(
    c: &CampaignData,
    workload: &str,
    target: &str,
    metric: &MetricDef,
) -> Vec<f64> {
    c.runs
        .iter()
        .filter(|r| r.workload == workload && r.target == target && !r.warmup && r.status == "ok")
        .filter_map(|r| r.metric(metric).map(|m| m.value))
        .collect()
}

fn versus(t: &TargetStats, baseline: &str, direction: crate::metric::Direction) -> String {
    match (&t.comparison, t.verdict) {
        (None, _) if t.target == baseline => "baseline".into(),
        // Fewer than two runs on one side: no comparison to show.
        (None, _) => "—".into(),
        (Some(c), Some(v)) if v != Verdict::NoSignificantDifference => {
            format!("{:+.1}% {}", c.diff_pct, v.word(direction))
        }
        (Some(c), _) => match &t.settle {
            Some(s) => format!(
                "{:+.1}% (n.s.; ±{}% needs {} runs)",
                c.diff_pct,
                s.pct,
                model::runs_text(s.runs)
            ),
            None => format!("{:+.1}% (n.s.)", c.diff_pct),
        },
    }
}

pub fn summary_table(c: &CampaignData) -> Table {
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
    let Ok(report) = model::build(c, None) else {
        return t;
    };
    for w in &report.workloads {
        let Some(m) = w.primary_metric() else {
            continue;
        };
        for ts in &m.targets {
            let failed = c
                .runs
                .iter()
                .filter(|r| {
                    r.workload == w.name
                        && r.target == ts.target
                        && !r.warmup
                        && r.status == "failed"
                })
                .count();
            let cv = ts
                .summary
                .filter(|s| s.n > 1)
                .map(|s| format!("{:.1}%", s.cv * 100.0))
                .unwrap_or_else(|| "—".into());
            let p99 = summarize(&metric_values(c, &w.name, &ts.target, &LAT_P99_NS))
                .map(|s| format_value(s.mean, LAT_P99_NS.unit))
                .unwrap_or_else(|| "—".into());
            t.push(vec![
                w.name.clone(),
                ts.target.clone(),
                ts.values.len().to_string(),
                m.name.clone(),
                mean_ci_text(ts, m.unit),
                cv,
                p99,
                failed.to_string(),
                versus(ts, &report.baseline, m.direction),
            ]);
        }
    }
    t
}

/// The pivots of swept workloads (see [`super::study`]), comparing the
/// levels of `compare_levels` too; empty when nothing was swept.
pub fn studies_text(c: &CampaignData, compare_levels: &[String]) -> anyhow::Result<String> {
    super::study::check_levels(c, compare_levels)?;
    let report = model::build(c, None)?;
    let studies = super::study::studies(c, &report, compare_levels);
    Ok(super::study::tables::text(&studies))
}

/// Header lines above the summary table.
pub fn summary_header(c: &CampaignData) -> String {
    let k = &c.campaign;
    format!(
        "campaign {} `{}` ({}), started {}: {} of {} planned runs ok, {} failed\n",
        k.id, k.name, k.status, k.started_at, k.runs_ok, k.planned_runs, k.runs_failed
    )
}

/// The report's warnings as lines, for the terminal.
pub fn warnings_text(c: &CampaignData) -> String {
    match model::build(c, None) {
        Ok(r) => r
            .warnings
            .iter()
            .map(|w| format!("warning: {w}\n"))
            .collect(),
        Err(_) => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metric::Direction::HigherIsBetter;

    #[test]
    fn only_the_baseline_is_called_baseline_when_there_is_no_comparison() {
        let one_run = model::target_stats("zfs", vec![1.0], None, HigherIsBetter);
        assert_eq!(versus(&one_run, "ext4", HigherIsBetter), "—");
        let base = model::target_stats("ext4", vec![1.0, 2.0], None, HigherIsBetter);
        assert_eq!(versus(&base, "ext4", HigherIsBetter), "baseline");
    }
}
