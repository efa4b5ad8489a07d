//! Multi-client runs: how many MPI ranks ran each run, on which hosts, and
//! per rank its share of the primary metric and when it was done, so that
//! a straggler stands out. Campaigns of single-process runs have nothing
//! here.

use std::collections::BTreeSet;

use crate::metric::{MetricKey, Unit};
use crate::store::{CampaignData, RunData};

/// Measured, successful multi-rank runs of a workload on a target.
fn rank_runs<'a>(c: &'a CampaignData, workload: &'a str, target: &'a str) -> Vec<&'a RunData> {
    c.runs_of(workload, target)
        .filter(|r| !r.warmup && r.status == "ok" && !r.per_rank.is_empty())
        .collect()
}

/// Whether any run of the campaign ran on several ranks.
pub fn has_ranks(c: &CampaignData) -> bool {
    c.runs.iter().any(|r| r.ranks > 1)
}

/// The rank counts the campaign's runs used, and the hosts its ranks ran
/// on; `None` for a campaign of single-process runs.
pub fn ranks_and_hosts(c: &CampaignData) -> Option<(BTreeSet<u32>, BTreeSet<&str>)> {
    if !has_ranks(c) {
        return None;
    }
    let counts: BTreeSet<u32> = c.runs.iter().map(|r| r.ranks).collect();
    let hosts: BTreeSet<&str> = c
        .runs
        .iter()
        .flat_map(|r| r.per_rank.iter().map(|k| k.host.as_str()))
        .collect();
    Some((counts, hosts))
}

/// How the campaign's runs shared the work between MPI ranks.
#[derive(Debug, Clone, PartialEq)]
pub struct Ranks {
    /// The rank counts the runs used.
    pub counts: BTreeSet<u32>,
    /// The hosts the ranks ran on.
    pub hosts: BTreeSet<String>,
    /// Per workload: its primary metric and each target's ranks.
    pub workloads: Vec<WorkloadRanks>,
}

/// One workload's ranks.
#[derive(Debug, Clone, PartialEq)]
pub struct WorkloadRanks {
    pub workload: String,
    pub primary: String,
    pub rows: Vec<RankRow>,
}

/// The campaign's ranks; `None` for a campaign of single-process runs.
pub fn ranks(c: &CampaignData) -> Option<Ranks> {
    let (counts, hosts) = ranks_and_hosts(c)?;
    Some(Ranks {
        counts,
        hosts: hosts.into_iter().map(String::from).collect(),
        workloads: c
            .workloads
            .iter()
            .filter_map(|w| {
                let (primary, rows) = rank_rows(c, &w.name)?;
                Some(WorkloadRanks {
                    workload: w.name.clone(),
                    primary,
                    rows,
                })
            })
            .collect(),
    })
}

/// One rank of one target over a workload's measured runs.
#[derive(Debug, Clone, PartialEq)]
pub struct RankRow {
    pub target: String,
    pub rank: u32,
    pub host: String,
    /// Runs in which the rank said when it was done.
    pub runs: usize,
    /// The mean of the rank's own primary metric, in its unit.
    pub primary_mean: Option<f64>,
    pub unit: Unit,
    /// Mean seconds from the start barrier to the rank's end.
    pub done_mean_s: Option<f64>,
    /// Mean seconds behind the first rank to finish.
    pub behind_mean_s: Option<f64>,
    /// Runs in which it was the last to finish.
    pub last: usize,
}

/// Per target and rank: runs, the rank's primary metric, when it was done,
/// how far behind the fastest rank, and in how many runs it was the last;
/// `None` when the workload is not the campaign's.
pub fn rank_rows(c: &CampaignData, workload: &str) -> Option<(String, Vec<RankRow>)> {
    let primary = &c
        .workloads
        .iter()
        .find(|w| w.name == workload)?
        .primary_metric;
    let mut rows = Vec::new();
    for target in &c.targets {
        let runs = rank_runs(c, workload, &target.name);
        let ranks: BTreeSet<u32> = runs
            .iter()
            .flat_map(|r| r.per_rank.iter().map(|k| k.rank))
            .collect();
        for rank in ranks {
            rows.push(rank_row(&target.name, rank, &runs, primary));
        }
    }
    Some((primary.clone(), rows))
}

fn rank_row(target: &str, rank: u32, runs: &[&RunData], primary: &str) -> RankRow {
    let mut host = String::new();
    let primary = MetricKey::plain(primary);
    let (mut values, mut done, mut behind, mut unit) =
        (Vec::new(), Vec::new(), Vec::new(), Unit::Flag);
    let mut last = 0;
    for r in runs {
        let Some(k) = r.per_rank.iter().find(|k| k.rank == rank) else {
            continue;
        };
        host.clone_from(&k.host);
        if let Some(m) = k.metrics.get(&primary) {
            values.push(m.value);
            unit = m.unit;
        }
        let ends: Vec<f64> = r.per_rank.iter().filter_map(|x| x.done_s).collect();
        if let Some(d) = k.done_s {
            let first = ends.iter().copied().fold(f64::INFINITY, f64::min);
            let latest = ends.iter().copied().fold(0.0, f64::max);
            done.push(d);
            behind.push(d - first);
            last += usize::from(d == latest);
        }
    }
    let mean = |v: &[f64]| (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64);
    RankRow {
        target: target.to_string(),
        rank,
        host,
        runs: done.len(),
        primary_mean: mean(&values),
        unit,
        done_mean_s: mean(&done),
        behind_mean_s: mean(&behind),
        last,
    }
}
