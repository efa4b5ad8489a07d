//! The campaign summary: per workload and target, the primary metric's
//! mean ± 95% CI half-width, its CV, and the p99 latency, from the store.

use crate::report::format::format_value;
use crate::report::table::Table;
use crate::stats::{mean_ci, summarize};
use crate::store::{CampaignData, RunData};

/// Measured, successful runs of one pair.
pub fn measured_runs<'a>(
    c: &'a CampaignData,
    workload: &'a str,
    target: &'a str,
) -> impl Iterator<Item = &'a RunData> + 'a {
    c.runs.iter().filter(move |r| {
        r.workload == workload && r.target == target && !r.warmup && r.status == "ok"
    })
}

/// Values of one metric over a pair's measured runs.
pub fn metric_values(c: &CampaignData, workload: &str, target: &str, metric: &str) -> Vec<f64> {
    measured_runs(c, workload, target)
        .filter_map(|r| r.metrics.get(metric).map(|m| m.value))
        .collect()
}

fn unit_of(c: &CampaignData, workload: &str, metric: &str) -> String {
    c.runs
        .iter()
        .filter(|r| r.workload == workload)
        .find_map(|r| r.metrics.get(metric).map(|m| m.unit.clone()))
        .unwrap_or_default()
}

/// The summary table shown after `storlab run` and by `storlab show`.
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
        ],
        &[false, false, true, false, true, true, true, true],
    );
    for w in &c.workloads {
        let unit = unit_of(c, &w.name, &w.primary_metric);
        for tg in &c.targets {
            let pair_runs: Vec<&RunData> = c
                .runs
                .iter()
                .filter(|r| r.workload == w.name && r.target == tg.name && !r.warmup)
                .collect();
            if pair_runs.is_empty() {
                continue;
            }
            let failed = pair_runs.iter().filter(|r| r.status != "ok").count();
            let values = metric_values(c, &w.name, &tg.name, &w.primary_metric);
            let p99 = metric_values(c, &w.name, &tg.name, "lat_p99_ns");
            let mean_text = match (summarize(&values), mean_ci(&values, 0.95)) {
                (Some(s), Some(ci)) => format!(
                    "{} ± {}",
                    format_value(s.mean, &unit),
                    format_value(ci.half_width(), &unit)
                ),
                (Some(s), None) => format_value(s.mean, &unit),
                _ => "—".into(),
            };
            let cv = summarize(&values)
                .filter(|s| s.n > 1)
                .map(|s| format!("{:.1}%", s.cv * 100.0))
                .unwrap_or_else(|| "—".into());
            let p99_text = summarize(&p99)
                .map(|s| format_value(s.mean, "ns"))
                .unwrap_or_else(|| "—".into());
            let name = if tg.baseline {
                format!("{} (baseline)", tg.name)
            } else {
                tg.name.clone()
            };
            t.push(vec![
                w.name.clone(),
                name,
                values.len().to_string(),
                w.primary_metric.clone(),
                mean_text,
                cv,
                p99_text,
                failed.to_string(),
            ]);
        }
    }
    t
}

/// Header lines above the summary table.
pub fn summary_header(c: &CampaignData) -> String {
    let k = &c.campaign;
    format!(
        "campaign {} `{}` ({}), started {}: {} of {} planned runs ok, {} failed\n",
        k.id, k.name, k.status, k.started_at, k.runs_ok, k.planned_runs, k.runs_failed
    )
}
