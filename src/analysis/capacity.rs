//! Capacity: what each capacity search found on each target — its probes
//! (the offered rate, what was achieved, the latency), the highest rate
//! that meets the target with its interval ([`crate::stats::capacity`]),
//! why the search ended, what limited the knee — and the verdicts that
//! compare each target's capacity with the baseline's. Pure, from the
//! stored campaign: the probes are ordinary variants of the searched
//! workload, their runs ordinary runs.

use serde::Serialize;

use super::model::{caveats_of, Caveat, TargetStats};
use super::verdict::{Kind, Verdict};
use crate::metric::catalogue as m;
use crate::metric::labels::PROCESS;
use crate::metric::{Direction, MetricDef, Unit};
use crate::stats::capacity::{compare, knee, margin, Knee, Probe};
use crate::stats::{summarize, Comparison, DEFAULT_ALPHA};
use crate::store::stored::StoredCapacity;
use crate::store::{CampaignData, RunData};
use crate::warning::{WarningKind, CPU_BOUND_PCT};

/// Confidence of a capacity's interval.
pub const LEVEL: f64 = 0.95;

/// One capacity search: the workload searched and what each target
/// sustains.
#[derive(Debug, Clone, Serialize)]
pub struct Search {
    pub workload: String,
    /// The percentile judged (`p99`) and the most it may be.
    pub latency: String,
    pub max_ns: f64,
    /// The offered rate's unit (the achieved metric's).
    pub unit: Unit,
    /// The parameter the search set.
    pub param: String,
    pub resolution: f64,
    pub targets: Vec<TargetCapacity>,
}

/// A search on one target.
#[derive(Debug, Clone, Serialize)]
pub struct TargetCapacity {
    pub target: String,
    /// Its probes, by offered rate.
    pub probes: Vec<ProbeStats>,
    /// The capacity found; `None` without a probe that ran.
    pub knee: Option<Knee>,
    /// Why the search ended (`resolved`, `max_rate`, `foot`, `time`);
    /// `None` when the store says nothing (an interrupted campaign).
    pub ended: Option<String>,
    /// What limited the rate at the knee, where the runs say.
    pub limit: Option<Limit>,
    /// The validity warnings of the runs at the probes around the knee.
    pub caveats: Vec<Caveat>,
}

/// The runs at one offered rate on one target.
#[derive(Debug, Clone, Serialize)]
pub struct ProbeStats {
    /// The probe's variant (`oltp[rate=2180]`).
    pub workload: String,
    pub offered: f64,
    /// The mean over its successful measured runs; the latencies'
    /// geometric means (the margins judge them on the log scale).
    pub achieved: Option<f64>,
    pub p50_ns: Option<f64>,
    /// The judged percentile.
    pub latency_ns: Option<f64>,
    pub runs: usize,
    pub failed: usize,
    /// Whether the target held here (the mean of its runs' margins at
    /// most 0).
    pub passed: Option<bool>,
    #[serde(skip)]
    margins: Vec<f64>,
}

/// What limited a knee.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Limit {
    /// CPU-bound: a thread ran, or waited for a CPU, nearly all the run.
    pub kind: WarningKind,
    /// The process whose thread it was.
    pub process: Option<String>,
    /// How much of the run its busiest thread ran, and ran or waited for
    /// a CPU (% of a core).
    pub busy_pct: Option<f64>,
    pub wanted_pct: Option<f64>,
    /// The probe where it showed.
    pub at: f64,
}

/// The figures of its runs campaign `c`'s capacity searches read (none
/// without a search): each search's judged latency, achieved rate and
/// served figure and median latency ([`StoredCapacity::figures`]), and what tells a CPU- from a
/// device-bound knee (`crate::analysis::figures`).
pub fn figures(c: &CampaignData) -> Vec<String> {
    let searches = c.searches();
    if searches.is_empty() {
        return Vec::new();
    }
    let mut out: Vec<String> = [
        &m::PROC_BUSIEST_THREAD_PCT,
        &m::PROC_BUSIEST_THREAD_WANTED_PCT,
        &m::DEV_UTIL_PCT,
    ]
    .iter()
    .map(|d| d.name.to_string())
    .collect();
    out.extend(searches.iter().flat_map(|(_, spec)| spec.figures()));
    out
}

/// Every capacity search of campaign `c`.
pub fn searches(c: &CampaignData) -> Vec<Search> {
    let probes = c.probes();
    c.searches()
        .into_iter()
        .map(|(name, spec)| {
            let mine: Vec<(&str, f64)> = probes
                .iter()
                .filter(|(_, p)| p.search == name)
                .map(|(w, p)| (w.as_str(), p.offered))
                .collect();
            let targets = c
                .targets
                .iter()
                .map(|t| on_target(c, &spec, &mine, &name, &t.name))
                .filter(|t| !t.probes.is_empty())
                .collect();
            Search {
                unit: crate::metric::lookup(&spec.achieved).map_or(Unit::OpsPerSec, |d| d.unit),
                latency: spec.latency.clone(),
                max_ns: spec.max_s * 1e9,
                param: spec.param.clone(),
                resolution: spec.resolution,
                workload: name,
                targets,
            }
        })
        .collect()
}

fn on_target(
    c: &CampaignData,
    spec: &StoredCapacity,
    probes: &[(&str, f64)],
    search: &str,
    target: &str,
) -> TargetCapacity {
    let mut stats: Vec<ProbeStats> = probes
        .iter()
        .filter_map(|&(w, offered)| probe_stats(c, spec, w, offered, target))
        .collect();
    stats.sort_by(|a, b| a.offered.total_cmp(&b.offered));
    let judged: Vec<Probe> = stats
        .iter()
        .map(|p| Probe {
            rate: p.offered,
            margins: p.margins.clone(),
        })
        .collect();
    let knee = knee(&judged, LEVEL);
    let around: Vec<&ProbeStats> = stats
        .iter()
        .filter(|p| {
            knee.as_ref()
                .is_some_and(|k| Some(p.offered) == k.lo || Some(p.offered) == k.hi)
        })
        .collect();
    TargetCapacity {
        ended: c
            .stops
            .iter()
            .find(|s| s.workload == search && s.target == target)
            .map(|s| s.reason.clone()),
        limit: knee.as_ref().and_then(|k| limit(c, &stats, k.hi, target)),
        caveats: merged_caveats(c, &around, target),
        target: target.to_string(),
        knee,
        probes: stats,
    }
}

/// The runs of probe `w` on `target`, judged against `spec`.
fn probe_stats(
    c: &CampaignData,
    spec: &StoredCapacity,
    w: &str,
    offered: f64,
    target: &str,
) -> Option<ProbeStats> {
    let runs: Vec<&RunData> = c
        .runs_of(w, target)
        .filter(|r| !r.warmup && r.status != "interrupted")
        .collect();
    if runs.is_empty() {
        return None;
    }
    let value = |r: &RunData, name: &str| -> Option<f64> {
        let def = crate::metric::lookup(name)?;
        r.metric(def).map(|v| v.value)
    };
    let ok: Vec<&&RunData> = runs.iter().filter(|r| r.status == "ok").collect();
    let mean = |name: &str| {
        let v: Vec<f64> = ok.iter().filter_map(|r| value(r, name)).collect();
        summarize(&v).map(|s| s.mean)
    };
    // Latencies on the log scale, as the margins judge them.
    let geomean = |name: &str| {
        let v: Vec<f64> = ok
            .iter()
            .filter_map(|r| value(r, name))
            .filter(|v| *v > 0.0)
            .map(f64::ln)
            .collect();
        summarize(&v).map(|s| s.mean.exp())
    };
    let margins: Vec<f64> = runs
        .iter()
        .map(|r| match r.status.as_str() {
            "ok" => margin(
                value(r, &spec.metric).unwrap_or(f64::NAN),
                spec.max_s * 1e9,
                value(r, &spec.achieved).unwrap_or(f64::NAN),
                offered,
                spec.served
                    .as_deref()
                    .map(|n| value(r, n).unwrap_or(f64::NAN)),
            ),
            _ => f64::INFINITY,
        })
        .collect();
    let probe = Probe {
        rate: offered,
        margins: margins.clone(),
    };
    Some(ProbeStats {
        workload: w.to_string(),
        offered,
        achieved: mean(&spec.achieved),
        p50_ns: geomean(m::LAT_P50_NS.name),
        latency_ns: geomean(&spec.metric),
        runs: runs.len(),
        failed: runs.len() - ok.len(),
        passed: probe.passes(),
        margins,
    })
}

/// What the runs at the lowest failing probe `hi` say limited the rate:
/// CPU-bound when they carry the CPU-bound warning (a thread at
/// [`CPU_BOUND_PCT`] of a core or more), or a thread ran or waited for a
/// CPU that much of the run (on a busy host a thread that never sleeps
/// may get a core only part of the time: it is limited by the CPU all
/// the same) — unless a device under the target was that busy too.
fn limit(c: &CampaignData, probes: &[ProbeStats], hi: Option<f64>, target: &str) -> Option<Limit> {
    let p = probes.iter().find(|p| Some(p.offered) == hi)?;
    let runs: Vec<&RunData> = c.measured_runs_of(&p.workload, target).collect();
    let largest = |def: &MetricDef| {
        runs.iter()
            .flat_map(|r| r.metrics.iter())
            .filter(|(k, _)| k.name == def.name)
            .max_by(|a, b| a.1.value.total_cmp(&b.1.value))
            .map(|(k, v)| (k.labels.get(&PROCESS).map(String::from), v.value))
    };
    let busy = largest(&m::PROC_BUSIEST_THREAD_PCT);
    let wanted = largest(&m::PROC_BUSIEST_THREAD_WANTED_PCT);
    let warned = runs
        .iter()
        .any(|r| r.warnings.iter().any(|w| w.kind == WarningKind::CpuBound));
    // A device that busy points at the device (a paced thread may spin
    // between its operations, and want a core all the while).
    let device = largest(&m::DEV_UTIL_PCT).is_some_and(|d| d.1 >= CPU_BOUND_PCT);
    if device || (!warned && !wanted.as_ref().is_some_and(|w| w.1 >= CPU_BOUND_PCT)) {
        return None;
    }
    Some(Limit {
        kind: WarningKind::CpuBound,
        process: wanted.as_ref().or(busy.as_ref()).and_then(|x| x.0.clone()),
        busy_pct: busy.map(|x| x.1),
        wanted_pct: wanted.map(|x| x.1),
        at: p.offered,
    })
}

/// The caveats of the runs at `probes` on `target`, each kind once with
/// its runs added up.
fn merged_caveats(c: &CampaignData, probes: &[&ProbeStats], target: &str) -> Vec<Caveat> {
    let mut out: Vec<Caveat> = Vec::new();
    for p in probes {
        for cv in caveats_of(c, &p.workload, target) {
            match out.iter_mut().find(|x| x.kind == cv.kind) {
                Some(x) => {
                    x.runs += cv.runs;
                    x.of += cv.of;
                }
                None => out.push(cv),
            }
        }
    }
    out
}

/// Each target's capacity against the baseline's, for every search
/// where both were found between a passing and a failing probe.
pub fn verdicts(searches: &[Search], baseline: &str) -> Vec<Verdict> {
    let mut out = Vec::new();
    for s in searches {
        let Some(base) = s.targets.iter().find(|t| t.target == baseline) else {
            continue;
        };
        for t in s.targets.iter().filter(|t| t.target != baseline) {
            if let Some(v) = verdict(s, base, t) {
                out.push(v);
            }
        }
    }
    out
}

/// A capacity as the statistics of a target (its estimate the value, its
/// interval the CI), with its comparison against another's.
pub fn knee_stats(
    target: &str,
    k: &Knee,
    comparison: Option<Comparison>,
    caveats: Vec<Caveat>,
) -> TargetStats {
    // Two capacities are tested for a difference only: one not different
    // is inconclusive.
    let verdict = comparison
        .as_ref()
        .map(|c| crate::stats::verdict(c, Direction::HigherIsBetter, DEFAULT_ALPHA));
    TargetStats {
        target: target.to_string(),
        values: vec![k.estimate],
        summary: summarize(&[k.estimate]),
        ci: k.interval,
        ci_clipped: false,
        outliers: Vec::new(),
        outcome: verdict.map(|v| super::model::three(v, false)),
        verdict,
        margin: None,
        equivalent: false,
        comparison,
        settle: None,
        correction: None,
        too_few: false,
        caveats,
    }
}

fn verdict(s: &Search, base: &TargetCapacity, t: &TargetCapacity) -> Option<Verdict> {
    let (kb, kc) = (base.knee.as_ref()?, t.knee.as_ref()?);
    let comparison = compare(kb, kc, LEVEL)?;
    let mut caveats = t.caveats.clone();
    caveats.extend(base.caveats.iter().cloned());
    let stats = |x: &TargetCapacity, k: &Knee, comparison, caveats| {
        knee_stats(&x.target, k, comparison, caveats)
    };
    Some(Verdict {
        workload: s.workload.clone(),
        primary: true,
        metric: "capacity".into(),
        unit: s.unit,
        direction: Direction::HigherIsBetter,
        baseline_label: base.target.clone(),
        baseline: stats(base, kb, None, base.caveats.clone()),
        candidate_label: t.target.clone(),
        candidate: stats(t, kc, Some(comparison), caveats),
        family: s.workload.clone(),
        exploratory: false,
        parts: None,
        kind: Kind::Capacity {
            latency: s.latency.clone(),
            max_ns: s.max_ns,
        },
    })
}
