//! Multi-client runs in reports ([`crate::analysis::ranks`]): a sentence on
//! the ranks and hosts, and per workload a table of each rank's share, so
//! that a straggler stands out. Campaigns of single-process runs show
//! nothing from here.

use crate::analysis::ranks::{RankRow, WorkloadRanks};
use crate::analysis::CampaignAnalysis;
use crate::metric::Unit;
use crate::report::document::Section;
use crate::report::format::format_value;
use crate::report::table::Table;

/// One sentence on the ranks: how many, on which hosts, how merged.
pub fn ranks_sentence(a: &CampaignAnalysis) -> Option<String> {
    let ranks = a.ranks.as_ref()?;
    let counts: Vec<String> = ranks.counts.iter().map(|n| n.to_string()).collect();
    let hosts: Vec<&str> = ranks.hosts.iter().map(String::as_str).collect();
    Some(format!(
        "Multi-client runs: each run ran on {} MPI ranks at once, on {} host(s) ({}). A run's figures are the ranks' aggregate: amounts summed, latency histograms merged exactly, throughput as total amount over the time from the first rank's start to the last rank's end (as IOR reports it); first_done_s and last_done_s are the first and the last rank's end after the start barrier.",
        counts.join(" or "),
        hosts.len(),
        hosts.join(", ")
    ))
}

/// Per target and rank: runs, the rank's primary metric, when it was done,
/// how far behind the fastest rank, and in how many runs it was the last.
fn ranks_table(w: &WorkloadRanks) -> Option<Table> {
    let (primary, rows) = (&w.primary, &w.rows);
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
    for r in rows {
        t.push(rank_row(r));
    }
    (!t.rows.is_empty()).then_some(t)
}

fn rank_row(r: &RankRow) -> Vec<String> {
    let text = |v: Option<f64>, u: Unit| v.map(|x| format_value(x, u)).unwrap_or("—".into());
    vec![
        r.target.clone(),
        r.rank.to_string(),
        r.host.clone(),
        r.runs.to_string(),
        text(r.primary_mean, r.unit),
        text(r.done_mean_s, Unit::Seconds),
        text(r.behind_mean_s, Unit::Seconds),
        format!("{} of {}", r.last, r.runs),
    ]
}

/// The per-rank part of a workload's section in the report.
pub fn report_section(a: &CampaignAnalysis, workload: &str) -> Option<Section> {
    let ranks = a.ranks.as_ref()?;
    let table = ranks_table(ranks.workloads.iter().find(|w| w.workload == workload)?)?;
    let mut s = Section::new(3, format!("{workload}: per rank"));
    s.text("Each rank's own figures over the measured runs; times are from the start barrier. A rank that is often last to finish, or far behind the first, is a straggler.");
    s.table(table);
    Some(s)
}

/// For the terminal (`storlab run`, `storlab show`): the sentence and a
/// per-rank table per workload.
pub fn summary_sections(a: &CampaignAnalysis) -> Vec<Section> {
    let (Some(sentence), Some(ranks)) = (ranks_sentence(a), &a.ranks) else {
        return Vec::new();
    };
    let mut first = Section::untitled(2);
    first.text(sentence);
    let mut out = vec![first];
    for w in &ranks.workloads {
        if let Some(t) = ranks_table(w) {
            let mut s = Section::new(3, format!("{} per rank:", w.workload));
            s.table(t);
            out.push(s);
        }
    }
    out
}
