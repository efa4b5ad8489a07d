//! A campaign's warnings counted by kind, for the line per kind that the
//! terminal and the report's top show before anyone reads the full list:
//! how many runs carry it (of how many), which workloads on which targets,
//! and the range of the figure that raised it (the other processes' share
//! of the CPU for a noisy host), read from the stored metrics, never from
//! the warnings' text.

use std::collections::BTreeSet;

use super::model::{first_run_apart, imprecise, Report, MIN_RUNS};
use crate::metric::catalogue as m;
use crate::metric::MetricDef;
use crate::store::{CampaignData, RunData};
use crate::warning::{Warning, WarningKind};

/// One kind of warning in a campaign.
#[derive(Debug, Clone, PartialEq)]
pub struct KindCount {
    pub kind: WarningKind,
    /// Lines of this kind in the campaign's list of warnings.
    pub lines: usize,
    /// The runs that carry it, for a kind about runs (empty for one about
    /// the statistics of pairs: too few runs, inconclusive, …).
    pub runs: Vec<i64>,
    /// The (workload, target) pairs it concerns, in the report's order.
    pub pairs: Vec<(String, String)>,
    /// The range of each figure that raised it, over the runs it raised
    /// it in (a noisy host: the other processes' share of the CPU, and the
    /// hypervisor's steal, each where it passed its threshold).
    pub evidence: Vec<Evidence>,
}

/// The lowest and highest value of `metric` among the warned runs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Evidence {
    pub metric: &'static MetricDef,
    pub low: f64,
    pub high: f64,
}

/// Every kind among `warnings` (the campaign's, and what its setup said),
/// in the catalogue's order
/// (failures and validity first, statistics, then notes).
pub fn by_kind(c: &CampaignData, report: &Report, warnings: &[Warning]) -> Vec<KindCount> {
    WarningKind::ALL
        .into_iter()
        .filter_map(|kind| {
            let lines = warnings.iter().filter(|w| w.kind == kind).count();
            (lines > 0).then(|| count(c, report, kind, lines))
        })
        .collect()
}

fn count(c: &CampaignData, report: &Report, kind: WarningKind, lines: usize) -> KindCount {
    let runs: Vec<&RunData> = c.runs.iter().filter(|r| carries(r, kind)).collect();
    let pairs = match runs.is_empty() {
        true => statistics_pairs(report, kind),
        false => in_report_order(report, runs.iter().map(|r| pair(r)).collect()),
    };
    KindCount {
        kind,
        lines,
        runs: runs.iter().map(|r| r.id).collect(),
        pairs,
        evidence: evidence_metrics(kind)
            .into_iter()
            .filter_map(|(def, above)| range(&runs, def, kind, above))
            .collect(),
    }
}

/// Whether run `r` carries a warning of `kind`: its own, or for failures
/// and caches its status and record.
fn carries(r: &RunData, kind: WarningKind) -> bool {
    match kind {
        WarningKind::RunFailed => r.status != "ok",
        WarningKind::CachesNotDropped => !r.caches_dropped,
        _ => r.warnings.iter().any(|w| w.kind == kind),
    }
}

fn pair(r: &RunData) -> (&str, &str) {
    (&r.workload, &r.target)
}

/// `pairs` once each, in the order of the report's workloads and targets.
fn in_report_order(report: &Report, pairs: BTreeSet<(&str, &str)>) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    for w in &report.workloads {
        for t in &report.targets {
            if pairs.contains(&(w.name.as_str(), t.as_str())) {
                out.push((w.name.clone(), t.clone()));
            }
        }
    }
    // Pairs the report does not list (a run of a workload without a
    // primary metric) keep their own order, after the others.
    let listed: BTreeSet<(&str, &str)> =
        out.iter().map(|(w, t)| (w.as_str(), t.as_str())).collect();
    let rest: Vec<(String, String)> = pairs
        .into_iter()
        .filter(|p| !listed.contains(p))
        .map(|(w, t)| (w.to_string(), t.to_string()))
        .collect();
    out.extend(rest);
    out
}

/// The pairs a warning about the primary metrics' statistics concerns,
/// by the model's own rules.
fn statistics_pairs(report: &Report, kind: WarningKind) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for w in &report.workloads {
        let Some(m) = w.primary_metric() else {
            continue;
        };
        let compared = m.targets.iter().any(|t| t.comparison.is_some());
        for t in &m.targets {
            let concerned = match kind {
                WarningKind::FewRuns => t.values.len() < MIN_RUNS,
                WarningKind::Inconclusive => t.settle.is_some(),
                WarningKind::Imprecise => !compared && imprecise(t),
                WarningKind::Outlier => !t.outliers.is_empty(),
                WarningKind::FirstRunApart => first_run_apart(m, t),
                _ => false,
            };
            if concerned {
                out.push((w.name.clone(), t.target.clone()));
            }
        }
    }
    out
}

/// The figures of the runs the warnings' evidence reads, of every kind
/// (`crate::analysis::figures`).
pub fn figures() -> impl Iterator<Item = &'static MetricDef> {
    WarningKind::ALL
        .into_iter()
        .flat_map(|k| evidence_metrics(k).into_iter().map(|(def, _)| def))
}

/// The stored figures a kind's check judged, where there are: each with
/// the threshold above which it raised the warning (none: every warned
/// run counts).
fn evidence_metrics(kind: WarningKind) -> Vec<(&'static MetricDef, Option<f64>)> {
    use crate::warning::{NOISY_OTHERS_PCT, NOISY_STEAL_PCT};
    match kind {
        WarningKind::NoisyHost => vec![
            (&m::CPU_OTHERS_PCT, Some(NOISY_OTHERS_PCT)),
            (&m::CPU_STEAL_PCT, Some(NOISY_STEAL_PCT)),
        ],
        WarningKind::CpuBound => vec![(&m::PROC_BUSIEST_THREAD_PCT, None)],
        WarningKind::PageCache => vec![(&m::DEV_READ_RATIO, None)],
        _ => Vec::new(),
    }
}

/// The range of `def` over `runs`: per run, its value the check judged (the
/// busiest process for CPU-bound, the device that read least for the page
/// cache), counting only the runs where it passed `above` when given: a
/// run warned of a noisy host for the hypervisor's steal does not put
/// "0.0%" at the low end of the other processes' share.
fn range(
    runs: &[&RunData],
    def: &'static MetricDef,
    kind: WarningKind,
    above: Option<f64>,
) -> Option<Evidence> {
    let per_run = runs.iter().filter_map(|r| {
        let values = r
            .metrics
            .iter()
            .filter(|(k, _)| k.name == def.name)
            .map(|(_, v)| v.value);
        match kind {
            WarningKind::PageCache => values.reduce(f64::min),
            _ => values.reduce(f64::max),
        }
    });
    let (low, high) = per_run.filter(|v| above.map_or(true, |t| *v > t)).fold(
        None,
        |acc: Option<(f64, f64)>, v| match acc {
            None => Some((v, v)),
            Some((lo, hi)) => Some((lo.min(v), hi.max(v))),
        },
    )?;
    Some(Evidence {
        metric: def,
        low,
        high,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn noisy_run(id: i64, others: f64, steal: f64) -> RunData {
        let mut r = RunData::of_test(
            id,
            "t",
            "w",
            &[(&m::CPU_OTHERS_PCT, others), (&m::CPU_STEAL_PCT, steal)],
        );
        r.warnings = vec![Warning::new(WarningKind::NoisyHost, "noisy host")];
        r
    }

    #[test]
    fn a_noisy_hosts_figures_each_count_the_runs_they_raised_it_in() {
        // One run warned for other processes (40%), one for the
        // hypervisor's steal alone (12%, others 0.5%).
        let runs = [noisy_run(1, 40.0, 0.0), noisy_run(2, 0.5, 12.0)];
        let refs: Vec<&RunData> = runs.iter().collect();
        let found: Vec<(&str, f64, f64)> = evidence_metrics(WarningKind::NoisyHost)
            .into_iter()
            .filter_map(|(def, above)| range(&refs, def, WarningKind::NoisyHost, above))
            .map(|e| (e.metric.name, e.low, e.high))
            .collect();
        assert_eq!(
            found,
            vec![
                ("cpu_others_pct", 40.0, 40.0),
                ("cpu_steal_pct", 12.0, 12.0)
            ]
        );
    }
}
