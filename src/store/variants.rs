//! A campaign's variants as stored: each target and workload row's family
//! and swept values (its factors) come from the experiment stored with the
//! campaign, and the factors, which label every metric a variant's runs
//! recorded, are taken off the keys when runs are read. Campaigns from
//! before sweeps have no factors: each row is its own family.

use serde_json::Value;

use super::read::{RunData, TargetRow, WorkloadRow};
use crate::experiment::sweep::{labels, Factor};
use crate::metric::{Labels, MetricKey};

/// Fills in families and factors from the stored experiment.
pub(super) fn annotate(
    experiment: &Value,
    targets: &mut [TargetRow],
    workloads: &mut [WorkloadRow],
) {
    let entry = |list: &str, name: &str| -> Option<Value> {
        experiment[list]
            .as_array()?
            .iter()
            .find(|e| e["name"] == name)
            .cloned()
    };
    for t in targets {
        let e = entry("targets", &t.name).unwrap_or(Value::Null);
        t.family = family(&e, &t.name);
        t.factors = factors(&e);
    }
    for w in workloads {
        let e = entry("workloads", &w.name).unwrap_or(Value::Null);
        w.family = family(&e, &w.name);
        w.factors = factors(&e);
        w.compare_levels = serde_json::from_value(e["compare_levels"].clone()).unwrap_or_default();
    }
}

fn family(entry: &Value, name: &str) -> String {
    entry["family"].as_str().unwrap_or(name).to_string()
}

fn factors(entry: &Value) -> Vec<Factor> {
    serde_json::from_value(entry["factors"].clone()).unwrap_or_default()
}

/// The labels every metric of a run of `target` × `workload` carries.
pub(super) fn run_labels(target: Option<&TargetRow>, workload: Option<&WorkloadRow>) -> Labels {
    let t = target.map(|t| t.factors.as_slice()).unwrap_or_default();
    let w = workload.map(|w| w.factors.as_slice()).unwrap_or_default();
    labels(t).with_all(&labels(w))
}

/// Takes each run's factors off its metric, series and histogram keys
/// (and its ranks' metrics) into [`RunData::factors`].
pub(super) fn strip(runs: &mut [RunData], targets: &[TargetRow], workloads: &[WorkloadRow]) {
    for r in runs {
        let t = targets.iter().find(|t| t.name == r.target);
        let w = workloads.iter().find(|w| w.name == r.workload);
        let factors = run_labels(t, w);
        if factors.is_empty() {
            continue;
        }
        r.metrics = rekey(std::mem::take(&mut r.metrics), &factors);
        r.series = rekey(std::mem::take(&mut r.series), &factors);
        r.histograms = rekey(std::mem::take(&mut r.histograms), &factors);
        for k in &mut r.per_rank {
            k.metrics = rekey(std::mem::take(&mut k.metrics), &factors);
        }
        r.factors = factors;
    }
}

fn rekey<V>(
    map: std::collections::BTreeMap<MetricKey, V>,
    factors: &Labels,
) -> std::collections::BTreeMap<MetricKey, V> {
    map.into_iter()
        .map(|(k, v)| (MetricKey::new(&k.name, k.labels.without(factors)), v))
        .collect()
}
