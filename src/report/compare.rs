//! Comparisons for `storlab compare`: the targets of one campaign against
//! its baseline, or the same target–workload pairs in two campaigns (two
//! releases, two hosts) matched by name; and the regression gate.

use serde::Serialize;

use super::contrib;
use super::model::{self, TargetStats, LEVEL};
use super::table::Table;
use super::text::{diff_text, mean_ci_text, p_text};
use crate::metric::{Direction, MetricKey, Unit};
use crate::stats::{compare_runs, Analysis, Design, Verdict};
use crate::store::CampaignData;

/// One primary-metric comparison: `candidate` against `baseline`.
#[derive(Debug, Clone, Serialize)]
pub struct Row {
    pub workload: String,
    pub metric: String,
    pub unit: Unit,
    pub direction: Direction,
    pub baseline_label: String,
    pub baseline: TargetStats,
    pub candidate_label: String,
    pub candidate: TargetStats,
}

impl Row {
    /// Significantly worse by more than `pct` percent.
    pub fn regressed(&self, pct: f64) -> bool {
        let Some(c) = &self.candidate.comparison else {
            return false;
        };
        self.candidate.verdict == Some(Verdict::Worse) && c.diff_pct.abs() > pct
    }
}

/// Every non-baseline target against the baseline, on primary metrics.
pub fn within(c: &CampaignData, baseline: Option<&str>) -> anyhow::Result<Vec<Row>> {
    // The primary metric a workload kind chose (a matrix's primary_test).
    let r = model::build(c, baseline, &|w| contrib::choose(c, w))?;
    let mut rows = Vec::new();
    for w in &r.workloads {
        let Some(m) = w.primary_metric() else {
            continue;
        };
        let Some(base) = m.targets.iter().find(|t| t.target == r.baseline) else {
            continue;
        };
        for t in m.targets.iter().filter(|t| t.comparison.is_some()) {
            rows.push(Row {
                workload: w.name.clone(),
                metric: m.name.clone(),
                unit: m.unit,
                direction: m.direction,
                baseline_label: base.target.clone(),
                baseline: base.clone(),
                candidate_label: t.target.clone(),
                candidate: t.clone(),
            });
        }
    }
    Ok(rows)
}

/// The same workload and target in campaign `a` (baseline) and `b`.
pub fn between(a: &CampaignData, b: &CampaignData) -> Vec<Row> {
    let mut rows = Vec::new();
    for w in &a.workloads {
        let Some(wb) = b.workloads.iter().find(|x| x.name == w.name) else {
            continue;
        };
        for t in a
            .targets
            .iter()
            .filter(|t| b.targets.iter().any(|x| x.name == t.name))
        {
            let names = [t.name.clone()];
            let primary = contrib::choose(a, w)
                .primary
                .unwrap_or_else(|| MetricKey::plain(&w.primary_metric));
            let ma = model::metric(a, &w.name, &primary, &names, &t.name);
            let mb = model::metric(b, &wb.name, &primary, &names, &t.name);
            let (Some(sa), Some(sb)) = (ma.targets.first(), mb.targets.first()) else {
                continue;
            };
            if sa.values.is_empty() && sb.values.is_empty() {
                continue;
            }
            let cmp = compare_runs(
                &model::round_values(a, &w.name, &t.name, &primary),
                &model::round_values(b, &wb.name, &t.name, &primary),
                Design::Unpaired,
                between_analysis(a, b),
                LEVEL,
            );
            let candidate = model::target_stats(&t.name, sb.values.clone(), cmp, ma.direction);
            rows.push(Row {
                workload: w.name.clone(),
                metric: primary.compact(),
                unit: ma.unit,
                direction: ma.direction,
                baseline_label: format!("{} @ campaign {}", t.name, a.campaign.id),
                baseline: sa.clone(),
                candidate_label: format!("{} @ campaign {}", t.name, b.campaign.id),
                candidate,
            });
        }
    }
    rows
}

/// Two campaigns are compared by their means if either plan asked so; their
/// runs share no rounds, so never paired.
fn between_analysis(a: &CampaignData, b: &CampaignData) -> Analysis {
    match (model::plan_analysis(a), model::plan_analysis(b)) {
        (Analysis::Ratio, Analysis::Ratio) => Analysis::Ratio,
        _ => Analysis::Means,
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
        let word = r
            .candidate
            .verdict
            .map(|v| v.word(r.direction))
            .unwrap_or("—");
        t.push(vec![
            r.workload.clone(),
            r.metric.clone(),
            r.baseline_label.clone(),
            mean_ci_text(&r.baseline, r.unit),
            r.candidate_label.clone(),
            mean_ci_text(&r.candidate, r.unit),
            diff_text(&r.candidate),
            p_text(&r.candidate),
            word.to_string(),
        ]);
    }
    t
}
