//! Merging the ranks' outputs of one run into the run's figures, on rank 0.
//! A pure function, so that every rule below is unit-tested.
//!
//! The rules, after IOR and mdtest:
//! - counts (units bytes, ops, tx, entries, rows) are summed; a peak
//!   (`max_rss_bytes`) takes the largest rank;
//! - latency histograms are merged exactly (counts add) and their mean,
//!   percentiles and max recomputed from the merged histogram; a latency
//!   figure without a histogram takes the largest rank for percentiles and
//!   maxima (an upper bound of the merged figure) and the ranks' mean for
//!   means; `cpu_ns_per_op` is weighted by each rank's operations;
//! - overall rates (`bw_bytes_per_s`, `iops`, `ops_per_s`, …) are IOR's
//!   aggregate: the ranks' total amount over the window from the earliest
//!   start of a rank's measured interval to the last rank's end, each rank's
//!   interval being its own measured duration (`span`) ending when its run
//!   returned, counted from the start barrier; a per-phase rate
//!   `P_ops_per_s` with a `P_elapsed_s` (smallfiles) is the ranks' total
//!   over the slowest rank's phase; any other rate (a matrix cell, a fio
//!   direction) is the sum of the ranks' rates, the throughput of clients
//!   running side by side;
//! - CPU seconds are summed; any other time takes the slowest rank;
//! - anything else (ratios, cell counts) is the mean over the ranks, which
//!   ran the same workload;
//! - rate series are summed second by second, others take the largest rank;
//! - `first_done_s`, `last_done_s` and `done_spread_s` (from the start
//!   barrier to the first and the last rank's end, and the gap between
//!   them) show the stragglers, as IOR's stonewalling figures do.

use std::collections::BTreeMap;

use crate::measure::latency::{latency_metrics, new_histogram};
use crate::measure::{Hist, Metric, RunOutput, Series};

/// One rank's successful part of a run.
#[derive(Debug, Clone)]
pub struct RankRun {
    pub rank: usize,
    /// Seconds from the start barrier to the end of the rank's run.
    pub done_s: f64,
    pub output: RunOutput,
}

/// Rates whose amount is the rank's rate times its measured span.
const OVERALL_RATES: &[&str] = &[
    "bw_bytes_per_s",
    "iops",
    "ops_per_s",
    "read_bw_bytes_per_s",
    "write_bw_bytes_per_s",
    "tps",
];

const COUNT_UNITS: &[&str] = &["bytes", "ops", "tx", "entries", "rows"];

/// Merges the ranks' outputs; `span` names the metric holding each rank's
/// measured duration (`elapsed_s`, `total_s`, `wall_s`), if the kind has one.
pub fn merge(runs: &[RankRun], span: Option<&str>) -> RunOutput {
    let mut out = RunOutput::default();
    let hists = merge_histograms(runs);
    let recomputed: Vec<Metric> = hists
        .iter()
        .flat_map(|h| latency_metrics(&h.name, &h.hist))
        .collect();
    let window = window_s(runs, span);
    for name in names_in_order(runs) {
        if recomputed.iter().any(|m| m.name == name) {
            continue;
        }
        let each: Vec<&Metric> = runs.iter().filter_map(|r| find(&r.output, &name)).collect();
        out.metrics.push(merge_metric(runs, &each, span, window));
    }
    out.metrics.extend(recomputed);
    out.metrics.extend(stonewall(runs));
    out.series = merge_series(runs);
    out.histograms = hists;
    out.warnings = merge_warnings(runs);
    out.facts = merge_facts(runs);
    out
}

fn find<'a>(out: &'a RunOutput, name: &str) -> Option<&'a Metric> {
    out.metrics.iter().find(|m| m.name == name)
}

/// Every metric name, in the order the lowest rank having it lists them.
fn names_in_order(runs: &[RankRun]) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for r in runs {
        for m in &r.output.metrics {
            if !names.contains(&m.name) {
                names.push(m.name.clone());
            }
        }
    }
    names
}

fn merge_histograms(runs: &[RankRun]) -> Vec<Hist> {
    let mut merged: Vec<Hist> = Vec::new();
    for h in runs.iter().flat_map(|r| &r.output.histograms) {
        let at = match merged.iter().position(|m| m.name == h.name) {
            Some(i) => i,
            None => {
                merged.push(Hist {
                    name: h.name.clone(),
                    unit: h.unit,
                    hist: new_histogram(),
                });
                merged.len() - 1
            }
        };
        // Histograms of storlab's own bounds: adding never fails; were one
        // to come with wider bounds, the merged one grows (auto-resize).
        merged[at].hist.auto(true);
        let _ = merged[at].hist.add(&h.hist);
    }
    merged
}

/// The window of IOR's aggregate: earliest start of a rank's measured
/// interval to the last end, from the start barrier.
fn window_s(runs: &[RankRun], span: Option<&str>) -> f64 {
    let start = runs
        .iter()
        .map(|r| {
            let s = span.and_then(|s| find(&r.output, s)).map(|m| m.value);
            (r.done_s - s.unwrap_or(r.done_s)).max(0.0)
        })
        .fold(f64::INFINITY, f64::min);
    let end = runs.iter().map(|r| r.done_s).fold(0.0, f64::max);
    (end - start).max(1e-9)
}

fn merge_metric(runs: &[RankRun], each: &[&Metric], span: Option<&str>, window: f64) -> Metric {
    let first = each[0];
    let values: Vec<f64> = each.iter().map(|m| m.value).collect();
    let value = if first.unit.ends_with("/s") {
        merge_rate(runs, &first.name, span, window)
    } else if COUNT_UNITS.contains(&first.unit) {
        if first.name == "max_rss_bytes" {
            max(&values)
        } else {
            values.iter().sum()
        }
    } else if first.unit == "s" {
        if first.name.starts_with("cpu_") {
            values.iter().sum()
        } else {
            max(&values)
        }
    } else if first.unit == "ns" {
        merge_latency(runs, &first.name, &values)
    } else {
        mean(&values)
    };
    Metric {
        name: first.name.clone(),
        value,
        unit: first.unit,
        direction: first.direction,
    }
}

fn merge_rate(runs: &[RankRun], name: &str, span: Option<&str>, window: f64) -> f64 {
    let value = |r: &RankRun, n: &str| find(&r.output, n).map(|m| m.value);
    let amount = |dur: &str| -> Option<(f64, f64)> {
        let mut total = 0.0;
        let mut slowest: f64 = 0.0;
        for r in runs.iter().filter(|r| value(r, name).is_some()) {
            let d = value(r, dur)?;
            total += value(r, name)? * d;
            slowest = slowest.max(d);
        }
        Some((total, slowest))
    };
    if let Some(span) = span.filter(|_| OVERALL_RATES.contains(&name)) {
        if let Some((total, _)) = amount(span) {
            return total / window;
        }
    }
    if let Some(phase) = name.strip_suffix("_ops_per_s") {
        if let Some((total, slowest)) = amount(&format!("{phase}_elapsed_s")) {
            return total / slowest.max(1e-9);
        }
    }
    runs.iter().filter_map(|r| value(r, name)).sum()
}

fn merge_latency(runs: &[RankRun], name: &str, values: &[f64]) -> f64 {
    if name == "cpu_ns_per_op" {
        let pairs: Option<Vec<(f64, f64)>> = runs
            .iter()
            .filter_map(|r| find(&r.output, name).map(|m| (r, m.value)))
            .map(|(r, v)| find(&r.output, "ops").map(|o| (v, o.value)))
            .collect();
        if let Some(p) = pairs {
            let ops: f64 = p.iter().map(|x| x.1).sum();
            if ops > 0.0 {
                return p.iter().map(|(v, o)| v * o).sum::<f64>() / ops;
            }
        }
    }
    let is_peak = name.ends_with("_max_ns")
        || name
            .trim_end_matches("_ns")
            .rsplit('_')
            .next()
            .is_some_and(|p| p.starts_with('p') && p[1..].chars().all(|c| c.is_ascii_digit()));
    if is_peak {
        max(values)
    } else {
        mean(values)
    }
}

fn stonewall(runs: &[RankRun]) -> Vec<Metric> {
    let done: Vec<f64> = runs.iter().map(|r| r.done_s).collect();
    let first = done.iter().copied().fold(f64::INFINITY, f64::min);
    let last = max(&done);
    vec![
        Metric::lower("first_done_s", first, "s"),
        Metric::lower("last_done_s", last, "s"),
        Metric::lower("done_spread_s", last - first, "s"),
    ]
}

fn merge_series(runs: &[RankRun]) -> Vec<Series> {
    let mut merged: Vec<Series> = Vec::new();
    for s in runs.iter().flat_map(|r| &r.output.series) {
        let Some(m) = merged.iter_mut().find(|m| m.name == s.name) else {
            merged.push(s.clone());
            continue;
        };
        let sum = m.unit.ends_with("/s");
        if m.values.len() < s.values.len() {
            let fill = if sum { 0.0 } else { f64::NAN };
            m.values.resize(s.values.len(), fill);
        }
        for (a, b) in m.values.iter_mut().zip(&s.values) {
            *a = match (sum, a.is_nan()) {
                (true, _) => *a + b,
                (false, true) => *b,
                (false, false) => a.max(*b),
            };
        }
    }
    merged
}

/// Each fact once: as it is when every rank that has it agrees, else each
/// rank's value (`0: fio-3.33; 1: fio-3.28`).
fn merge_facts(runs: &[RankRun]) -> Vec<(String, String)> {
    let mut by_name: Vec<(&str, Vec<(usize, &str)>)> = Vec::new();
    for r in runs {
        for (name, value) in &r.output.facts {
            match by_name.iter_mut().find(|(n, _)| n == name) {
                Some((_, values)) => values.push((r.rank, value)),
                None => by_name.push((name, vec![(r.rank, value)])),
            }
        }
    }
    by_name
        .into_iter()
        .map(|(name, values)| {
            let first = values[0].1;
            let value = if values.iter().all(|(_, v)| *v == first) {
                first.to_string()
            } else {
                let each: Vec<String> = values.iter().map(|(r, v)| format!("{r}: {v}")).collect();
                each.join("; ")
            };
            (name.to_string(), value)
        })
        .collect()
}

/// Each warning once: as it is when every rank gave it, else naming the ranks.
fn merge_warnings(runs: &[RankRun]) -> Vec<String> {
    let mut by_text: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
    let mut order = Vec::new();
    for r in runs {
        for w in &r.output.warnings {
            let ranks = by_text.entry(w.as_str()).or_default();
            if ranks.is_empty() {
                order.push(w.as_str());
            }
            ranks.push(r.rank);
        }
    }
    order
        .into_iter()
        .map(|w| {
            let ranks = &by_text[w];
            if ranks.len() == runs.len() {
                w.to_string()
            } else {
                let list: Vec<String> = ranks.iter().map(|r| r.to_string()).collect();
                format!("rank {}: {w}", list.join(", "))
            }
        })
        .collect()
}

fn max(v: &[f64]) -> f64 {
    v.iter().copied().fold(f64::NEG_INFINITY, f64::max)
}

fn mean(v: &[f64]) -> f64 {
    v.iter().sum::<f64>() / v.len().max(1) as f64
}

#[cfg(test)]
mod tests;
