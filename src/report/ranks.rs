//! Multi-client runs in reports: how many MPI ranks ran each run, on which
//! hosts, and per rank its share of the primary metric and when it was
//! done, so that a straggler stands out. Campaigns of single-process runs
//! show nothing from here.

use std::collections::BTreeSet;

use super::document::Section;
use super::format::format_value;
use super::table::Table;
use crate::metric::{MetricKey, Unit};
use crate::store::{CampaignData, RunData};

/// Measured, successful multi-rank runs of a workload on a target.
fn rank_runs<'a>(c: &'a CampaignData, workload: &'a str, target: &'a str) -> Vec<&'a RunData> {
    c.runs
        .iter()
        .filter(|r| r.workload == workload && r.target == target)
        .filter(|r| !r.warmup && r.status == "ok" && !r.per_rank.is_empty())
        .collect()
}

/// Whether any run of the campaign ran on several ranks.
pub fn has_ranks(c: &CampaignData) -> bool {
    c.runs.iter().any(|r| r.ranks > 1)
}

/// One sentence on the ranks: how many, on which hosts, how merged.
pub fn ranks_sentence(c: &CampaignData) -> Option<String> {
    if !has_ranks(c) {
        return None;
    }
    let counts: BTreeSet<u32> = c.runs.iter().map(|r| r.ranks).collect();
    let hosts: BTreeSet<&str> = c
        .runs
        .iter()
        .flat_map(|r| r.per_rank.iter().map(|k| k.host.as_str()))
        .collect();
    let counts: Vec<String> = counts.iter().map(|n| n.to_string()).collect();
    let hosts: Vec<&str> = hosts.into_iter().collect();
    Some(format!(
        "Multi-client runs: each run ran on {} MPI ranks at once, on {} host(s) ({}). A run's figures are the ranks' aggregate: amounts summed, latency histograms merged exactly, throughput as total amount over the time from the first rank's start to the last rank's end (as IOR reports it); first_done_s and last_done_s are the first and the last rank's end after the start barrier.",
        counts.join(" or "),
        hosts.len(),
        hosts.join(", ")
    ))
}

/// Per target and rank: runs, the rank's primary metric, when it was done,
/// how far behind the fastest rank, and in how many runs it was the last.
fn ranks_table(c: &CampaignData, workload: &str) -> Option<Table> {
    let primary = &c
        .workloads
        .iter()
        .find(|w| w.name == workload)?
        .primary_metric;
    let mut t = Table::new(
        &[
            "target",
            "rank",
            "host",
            "runs",
            &format!("{primary} (mean)"),
            "done at (mean)",
            "behind first (mean)",
            "last to finish",
        ],
        &[false, true, false, true, true, true, true, true],
    );
    for target in &c.targets {
        let runs = rank_runs(c, workload, &target.name);
        let ranks: BTreeSet<u32> = runs
            .iter()
            .flat_map(|r| r.per_rank.iter().map(|k| k.rank))
            .collect();
        for rank in ranks {
            t.push(rank_row(&target.name, rank, &runs, primary));
        }
    }
    (!t.rows.is_empty()).then_some(t)
}

fn rank_row(target: &str, rank: u32, runs: &[&RunData], primary: &str) -> Vec<String> {
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
    let text = |v: Option<f64>, u: Unit| v.map(|x| format_value(x, u)).unwrap_or("—".into());
    vec![
        target.to_string(),
        rank.to_string(),
        host,
        done.len().to_string(),
        text(mean(&values), unit),
        text(mean(&done), Unit::Seconds),
        text(mean(&behind), Unit::Seconds),
        format!("{last} of {}", done.len()),
    ]
}

/// The per-rank part of a workload's section in the report.
pub fn report_section(c: &CampaignData, workload: &str) -> Option<Section> {
    let table = ranks_table(c, workload)?;
    let mut s = Section::new(3, format!("{workload}: per rank"));
    s.text("Each rank's own figures over the measured runs; times are from the start barrier. A rank that is often last to finish, or far behind the first, is a straggler.");
    s.table(table);
    Some(s)
}

/// For the terminal (`storlab run`, `storlab show`): the sentence and a
/// per-rank table per workload.
pub fn summary_sections(c: &CampaignData) -> Vec<Section> {
    let Some(sentence) = ranks_sentence(c) else {
        return Vec::new();
    };
    let mut first = Section::untitled(2);
    first.text(sentence);
    let mut out = vec![first];
    for w in &c.workloads {
        if let Some(t) = ranks_table(c, &w.name) {
            let mut s = Section::new(3, format!("{} per rank:", w.name));
            s.table(t);
            out.push(s);
        }
    }
    out
}
