//! The report model: everything a report shows, computed once from the
//! store — per workload and metric, each target's summary and interval and,
//! against the baseline, the % difference with its interval, p-value and
//! verdict; plus the warnings a careful reviewer would raise. Renderers
//! (terminal, Markdown, HTML) only lay this out.

use serde::Serialize;

use crate::metric::{self, Direction, MetricKey, Unit};
use crate::stats::{
    mad_outliers, mean_ci, summarize, verdict, welch, Comparison, Interval, Summary, Verdict,
    DEFAULT_ALPHA, DEFAULT_THRESHOLD,
};
use crate::store::{CampaignData, RunData};

/// Coefficient of variation above which a pair is flagged unstable.
pub const CV_WARN: f64 = 0.05;
/// Fewer measured runs than this make an interval unreliable.
pub const MIN_RUNS: usize = 3;
/// Outliers are only looked for among at least this many runs.
pub const MIN_OUTLIER_RUNS: usize = 5;
/// Confidence level of every interval.
pub const LEVEL: f64 = 0.95;
/// Differences smaller than this (in %) are not called faster or slower even
/// when significant: an equivalence margin, so that run-to-run drift of a
/// busy host is not reported as a finding.
pub const MIN_EFFECT_PCT: f64 = 1.0;

#[derive(Debug, Clone, Serialize)]
pub struct TargetStats {
    pub target: String,
    pub values: Vec<f64>,
    pub summary: Option<Summary>,
    pub ci: Option<Interval>,
    /// Indices into `values` of MAD outliers.
    pub outliers: Vec<usize>,
    /// Against the baseline target; `None` for the baseline itself.
    pub comparison: Option<Comparison>,
    pub verdict: Option<Verdict>,
}

#[derive(Debug, Clone, Serialize)]
pub struct MetricReport {
    /// The metric as people read it: its compact name, label values first
    /// (`write_geomean_bw_bytes_per_s`).
    pub name: String,
    pub key: MetricKey,
    pub unit: Unit,
    pub direction: Direction,
    pub targets: Vec<TargetStats>,
}

#[derive(Debug, Clone, Serialize)]
pub struct WorkloadReport {
    pub name: String,
    pub kind: String,
    pub primary: String,
    /// The primary metric first, then the catalogue's headline metrics
    /// present (and a kind's own summary metrics).
    pub metrics: Vec<MetricReport>,
}

impl WorkloadReport {
    pub fn primary_metric(&self) -> Option<&MetricReport> {
        self.metrics.first()
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct Report {
    pub baseline: String,
    pub targets: Vec<String>,
    pub workloads: Vec<WorkloadReport>,
    pub warnings: Vec<String>,
}

/// Builds the model for a campaign; `baseline` overrides the stored one.
pub fn build(c: &CampaignData, baseline: Option<&str>) -> anyhow::Result<Report> {
    let baseline = match baseline {
        Some(b) if c.targets.iter().any(|t| t.name == b) => b.to_string(),
        Some(b) => anyhow::bail!(
            "campaign {} has no target `{b}`; its targets are: {}",
            c.campaign.id,
            c.targets
                .iter()
                .map(|t| t.name.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ),
        None => c
            .targets
            .iter()
            .find(|t| t.baseline)
            .or(c.targets.first())
            .map(|t| t.name.clone())
            .unwrap_or_default(),
    };
    let targets: Vec<String> = c.targets.iter().map(|t| t.name.clone()).collect();
    let workloads: Vec<WorkloadReport> = c
        .workloads
        .iter()
        .map(|w| workload(c, &w.name, &w.kind, &w.primary_metric, &targets, &baseline))
        .collect();
    let warnings = warnings(c, &workloads);
    Ok(Report {
        baseline,
        targets,
        workloads,
        warnings,
    })
}

fn measured<'a>(
    c: &'a CampaignData,
    workload: &'a str,
    target: &'a str,
) -> impl Iterator<Item = &'a RunData> + 'a {
    c.runs.iter().filter(move |r| {
        r.workload == workload && r.target == target && !r.warmup && r.status == "ok"
    })
}

fn workload(
    c: &CampaignData,
    name: &str,
    kind: &str,
    primary: &str,
    targets: &[String],
    baseline: &str,
) -> WorkloadReport {
    let present = |m: &MetricKey| {
        c.runs
            .iter()
            .any(|r| r.workload == name && r.metrics.contains_key(m))
    };
    let mut keys = vec![MetricKey::plain(primary)];
    keys.extend(
        metric::headlines()
            .filter(|d| d.name != primary)
            .map(|d| MetricKey::plain(d.name)),
    );
    if kind == super::matrix::KIND {
        keys.extend(super::matrix::summary_metrics());
    }
    let metrics = keys
        .iter()
        .filter(|m| present(m))
        .map(|m| metric(c, name, m, targets, baseline))
        .collect();
    WorkloadReport {
        name: name.into(),
        kind: kind.into(),
        primary: primary.into(),
        metrics,
    }
}

/// Statistics of one metric over each target, compared with the baseline.
pub fn metric(
    c: &CampaignData,
    workload: &str,
    key: &MetricKey,
    targets: &[String],
    baseline: &str,
) -> MetricReport {
    let (unit, direction) = unit_and_direction(c, workload, key);
    let values_of = |t: &str| -> Vec<f64> {
        measured(c, workload, t)
            .filter_map(|r| r.metrics.get(key).map(|m| m.value))
            .collect()
    };
    let base = values_of(baseline);
    let stats = targets
        .iter()
        .filter(|t| {
            c.runs
                .iter()
                .any(|r| r.workload == workload && &r.target == *t)
        })
        .map(|t| {
            let values = values_of(t);
            let comparison = if t == baseline {
                None
            } else {
                welch(&base, &values, LEVEL)
            };
            target_stats(t, values, comparison, direction)
        })
        .collect();
    MetricReport {
        name: key.compact(),
        key: key.clone(),
        unit,
        direction,
        targets: stats,
    }
}

/// A metric's unit and direction as stored with the workload's runs, else
/// as the catalogue declares them.
fn unit_and_direction(c: &CampaignData, workload: &str, key: &MetricKey) -> (Unit, Direction) {
    let stored = c
        .runs
        .iter()
        .filter(|r| r.workload == workload)
        .find_map(|r| r.metrics.get(key));
    match (stored, metric::lookup(&key.name)) {
        (Some(m), _) => (m.unit, m.direction),
        (None, Some(d)) => (d.unit, d.direction),
        (None, None) => (Unit::Flag, Direction::HigherIsBetter),
    }
}

/// One target's figures, and its verdict against the baseline if compared.
pub fn target_stats(
    target: &str,
    values: Vec<f64>,
    comparison: Option<Comparison>,
    direction: Direction,
) -> TargetStats {
    TargetStats {
        target: target.into(),
        summary: summarize(&values),
        ci: mean_ci(&values, LEVEL),
        outliers: mad_outliers(&values, DEFAULT_THRESHOLD),
        verdict: comparison.as_ref().map(|c| call(c, direction)),
        comparison,
        values,
    }
}

/// The verdict: significant at α = 0.05 and at least [`MIN_EFFECT_PCT`].
pub fn call(c: &Comparison, direction: Direction) -> Verdict {
    if c.diff_pct.abs() < MIN_EFFECT_PCT {
        return Verdict::NoSignificantDifference;
    }
    verdict(c, direction, DEFAULT_ALPHA)
}

fn warnings(c: &CampaignData, workloads: &[WorkloadReport]) -> Vec<String> {
    let mut out = Vec::new();
    let failed: Vec<&RunData> = c.runs.iter().filter(|r| r.status != "ok").collect();
    for r in &failed {
        let why = r.error.as_deref().unwrap_or("interrupted");
        out.push(format!(
            "run {} ({} on {}, rep {}) {}: {why}",
            r.id, r.workload, r.target, r.repetition, r.status
        ));
    }
    let undropped = c.runs.iter().filter(|r| !r.caches_dropped).count();
    if undropped > 0 {
        out.push(format!("caches were not dropped before {undropped} of {} runs: reads may have come from the page cache", c.runs.len()));
    }
    for w in workloads {
        let Some(m) = w.primary_metric() else {
            continue;
        };
        for t in &m.targets {
            pair_warnings(&w.name, m, t, &mut out);
        }
    }
    out.extend(c.runs.iter().flat_map(|r| {
        r.warnings
            .iter()
            .map(move |w| format!("run {} ({} on {}): {w}", r.id, r.workload, r.target))
    }));
    out
}

fn pair_warnings(workload: &str, m: &MetricReport, t: &TargetStats, out: &mut Vec<String>) {
    let n = t.values.len();
    if n < MIN_RUNS {
        out.push(format!(
            "{workload} on {}: only {n} measured run(s); intervals need at least {MIN_RUNS}",
            t.target
        ));
    }
    if let Some(s) = t.summary {
        if n >= 2 && s.cv > CV_WARN {
            out.push(format!(
                "{workload} on {}: unstable, {} varies by {:.1}% (CV) between runs: add repetitions",
                t.target, m.name, s.cv * 100.0
            ));
        }
    }
    // MAD needs a few runs to mean anything, and a run 0.3% off a very
    // steady median is not worth a warning.
    let median = t.summary.map(|s| s.median).unwrap_or(0.0);
    for &i in t.outliers.iter().filter(|_| n >= MIN_OUTLIER_RUNS) {
        if (t.values[i] - median).abs() <= 0.01 * median.abs() {
            continue;
        }
        out.push(format!(
            "{workload} on {}: run {} of {n} is an outlier ({} = {})",
            t.target,
            i + 1,
            m.name,
            crate::report::format::format_value(t.values[i], m.unit)
        ));
    }
}
