//! Merging the ranks' outputs of one run into the run's figures, on rank 0.
//! A pure function, so that every rule below is unit-tested.
//!
//! Each metric merges by its catalogue rule ([`crate::metric::Merge`]),
//! after IOR and mdtest:
//! - latency histograms are merged exactly (counts add) and the metrics the
//!   catalogue derives from them recomputed from the merged histogram;
//!   without a histogram a latency figure merges by its own rule (the
//!   ranks' mean for means, the largest rank for percentiles and maxima:
//!   an upper bound of the merged figure);
//! - a `Rate` without labels is IOR's aggregate: the ranks' total amount
//!   over the window from the earliest start of a rank's measured interval
//!   to the last rank's end, each rank's interval being its own measured
//!   duration (`span`) ending when its run returned, counted from the start
//!   barrier; a labelled `Rate` with a same-labelled `elapsed_s` (a
//!   smallfiles phase) is the ranks' total over the slowest rank's phase;
//!   any other rate (a matrix cell, a fio job) is the sum of the ranks'
//!   rates, the throughput of clients running side by side;
//! - rate series are summed second by second, others take the largest rank;
//! - `first_done_s`, `last_done_s` and `done_spread_s` (from the start
//!   barrier to the first and the last rank's end, and the gap between
//!   them) show the stragglers, as IOR's stonewalling figures do.

use std::collections::BTreeMap;

use crate::measure::latency::{latency_metrics, new_histogram};
use crate::measure::{Hist, Metric, RunOutput, Series};
use crate::metric::catalogue as m;
use crate::metric::{Labels, Merge, MetricDef};
use crate::warning::Warning;

/// One rank's successful part of a run.
#[derive(Debug, Clone)]
pub struct RankRun {
    pub rank: usize,
    /// Seconds from the start barrier to the end of the rank's run.
    pub done_s: f64,
    pub output: RunOutput,
}

/// A metric of a run: its catalogue entry and labels.
type Key<'a> = (&'static MetricDef, &'a Labels);

/// Merges the ranks' outputs; `span` is the metric holding each rank's
/// measured duration (`elapsed_s`, `total_s`, `wall_s`), if the kind has one.
pub fn merge(runs: &[RankRun], span: Option<&'static MetricDef>) -> RunOutput {
    let mut out = RunOutput::default();
    let hists = merge_histograms(runs);
    let recomputed: Vec<Metric> = hists
        .iter()
        .flat_map(|h| latency_metrics(h.def, &h.labels, &h.hist))
        .collect();
    let window = window_s(runs, span);
    for key in keys_in_order(runs) {
        if recomputed.iter().any(|m| m.is(key.0, key.1)) {
            continue;
        }
        let value = merge_metric(runs, key, span, window);
        out.metrics.push(key.0.labelled(key.1.clone(), value));
    }
    out.metrics.extend(recomputed);
    out.metrics.extend(stonewall(runs));
    out.series = merge_series(runs);
    out.histograms = hists;
    out.warnings = merge_warnings(runs);
    out.facts = merge_facts(runs);
    out
}

/// `key`'s value in one rank's output.
fn value(out: &RunOutput, (def, labels): Key<'_>) -> Option<f64> {
    out.labelled(def, labels)
}

/// Every metric, in the order the lowest rank having it lists them.
fn keys_in_order(runs: &[RankRun]) -> Vec<Key<'_>> {
    let mut keys: Vec<Key<'_>> = Vec::new();
    for m in runs.iter().flat_map(|r| &r.output.metrics) {
        if !keys.iter().any(|k| m.is(k.0, k.1)) {
            keys.push((m.def, &m.labels));
        }
    }
    keys
}

fn merge_histograms(runs: &[RankRun]) -> Vec<Hist> {
    let mut merged: Vec<Hist> = Vec::new();
    for h in runs.iter().flat_map(|r| &r.output.histograms) {
        let same = |m: &Hist| std::ptr::eq(m.def, h.def) && m.labels == h.labels;
        let at = match merged.iter().position(same) {
            Some(i) => i,
            None => {
                merged.push(Hist {
                    def: h.def,
                    labels: h.labels.clone(),
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
fn window_s(runs: &[RankRun], span: Option<&'static MetricDef>) -> f64 {
    let start = runs
        .iter()
        .map(|r| {
            let s = span.and_then(|s| r.output.metric(s));
            (r.done_s - s.unwrap_or(r.done_s)).max(0.0)
        })
        .fold(f64::INFINITY, f64::min);
    let end = runs.iter().map(|r| r.done_s).fold(0.0, f64::max);
    (end - start).max(1e-9)
}

fn merge_metric(
    runs: &[RankRun],
    key: Key<'_>,
    span: Option<&'static MetricDef>,
    window: f64,
) -> f64 {
    let values: Vec<f64> = runs.iter().filter_map(|r| value(&r.output, key)).collect();
    match key.0.merge {
        Merge::Sum | Merge::SumOfRates => values.iter().sum(),
        Merge::Max => max(&values),
        Merge::Mean => mean(&values),
        Merge::Rate => merge_rate(runs, key, span, window),
        Merge::WeightedBy(weight) => weighted(runs, key, weight).unwrap_or_else(|| mean(&values)),
    }
}

fn merge_rate(
    runs: &[RankRun],
    key: Key<'_>,
    span: Option<&'static MetricDef>,
    window: f64,
) -> f64 {
    // The ranks' total amount (rate × duration) and the longest duration.
    let amount = |dur: Key<'_>| -> Option<(f64, f64)> {
        let mut total = 0.0;
        let mut slowest: f64 = 0.0;
        for r in runs.iter().filter(|r| value(&r.output, key).is_some()) {
            let d = value(&r.output, dur)?;
            total += value(&r.output, key)? * d;
            slowest = slowest.max(d);
        }
        Some((total, slowest))
    };
    let overall = key.1.is_empty();
    if let Some(span) = span.filter(|_| overall) {
        if let Some((total, _)) = amount((span, key.1)) {
            return total / window;
        }
    }
    if !overall {
        if let Some((total, slowest)) = amount((&m::ELAPSED_S, key.1)) {
            return total / slowest.max(1e-9);
        }
    }
    runs.iter().filter_map(|r| value(&r.output, key)).sum()
}

/// The ranks' values weighted by their `weight` (same labels); `None`
/// when a rank lacks it or the weights add to nothing.
fn weighted(runs: &[RankRun], key: Key<'_>, weight: &'static MetricDef) -> Option<f64> {
    let pairs: Option<Vec<(f64, f64)>> = runs
        .iter()
        .filter_map(|r| value(&r.output, key).map(|v| (r, v)))
        .map(|(r, v)| value(&r.output, (weight, key.1)).map(|w| (v, w)))
        .collect();
    let pairs = pairs?;
    let total: f64 = pairs.iter().map(|x| x.1).sum();
    (total > 0.0).then(|| pairs.iter().map(|(v, w)| v * w).sum::<f64>() / total)
}

fn stonewall(runs: &[RankRun]) -> Vec<Metric> {
    let done: Vec<f64> = runs.iter().map(|r| r.done_s).collect();
    let first = done.iter().copied().fold(f64::INFINITY, f64::min);
    let last = max(&done);
    vec![
        m::FIRST_DONE_S.value(first),
        m::LAST_DONE_S.value(last),
        m::DONE_SPREAD_S.value(last - first),
    ]
}

fn merge_series(runs: &[RankRun]) -> Vec<Series> {
    let mut merged: Vec<Series> = Vec::new();
    for s in runs.iter().flat_map(|r| &r.output.series) {
        let same = |m: &&mut Series| std::ptr::eq(m.def, s.def) && m.labels == s.labels;
        let Some(m) = merged.iter_mut().find(same) else {
            merged.push(s.clone());
            continue;
        };
        let sum = matches!(m.def.merge, Merge::Rate | Merge::SumOfRates);
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
/// rank's value (`0: 15.4; 1: 16.1`).
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
fn merge_warnings(runs: &[RankRun]) -> Vec<Warning> {
    let mut by_warning: BTreeMap<&Warning, Vec<usize>> = BTreeMap::new();
    let mut order = Vec::new();
    for r in runs {
        for w in &r.output.warnings {
            let ranks = by_warning.entry(w).or_default();
            if ranks.is_empty() {
                order.push(w);
            }
            ranks.push(r.rank);
        }
    }
    order
        .into_iter()
        .map(|w| {
            let ranks = &by_warning[w];
            if ranks.len() == runs.len() {
                w.clone()
            } else {
                let list: Vec<String> = ranks.iter().map(|r| r.to_string()).collect();
                Warning::new(w.kind, format!("rank {}: {}", list.join(", "), w.text))
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
