//! A campaign's variants as stored: each target and workload row's family
//! and swept values (its factors) come from the experiment stored with the
//! campaign, and the factors, which label every metric a variant's runs
//! recorded, are taken off the keys when runs are read. Campaigns from
//! before sweeps have no factors: each row is its own family. Pure
//! functions of the stored experiment and keys; the reading is in
//! [`super::read`].

use std::collections::HashMap;

use serde_json::Value;

use crate::experiment::sweep::{labels, Factor};
use crate::metric::Labels;

/// What the stored experiment says of one target or workload row.
pub(super) struct Variant {
    pub family: String,
    pub factors: Vec<Factor>,
    pub compare_levels: Vec<String>,
}

/// The entries of the experiment's `list` ("targets" or "workloads") by
/// name, the first of a name: looked up once per row (2,000 variants
/// searched the list for each other took 6% of `show`).
pub(super) fn entries<'a>(experiment: &'a Value, list: &str) -> HashMap<&'a str, &'a Value> {
    let mut by_name = HashMap::new();
    for e in experiment[list].as_array().into_iter().flatten() {
        if let Some(name) = e["name"].as_str() {
            by_name.entry(name).or_insert(e);
        }
    }
    by_name
}

/// The variant `name`, of the experiment's `entries`; a name the
/// experiment lacks is a family of its own.
pub(super) fn variant(entries: &HashMap<&str, &Value>, name: &str) -> Variant {
    let entry = entries.get(name).copied().unwrap_or(&Value::Null);
    Variant {
        family: entry["family"].as_str().unwrap_or(name).to_string(),
        factors: serde_json::from_value(entry["factors"].clone()).unwrap_or_default(),
        compare_levels: serde_json::from_value(entry["compare_levels"].clone()).unwrap_or_default(),
    }
}

/// The labels every metric of a run of a target × workload carries: the
/// target's factors, then the workload's.
pub(super) fn run_labels(target: &[Factor], workload: &[Factor]) -> Labels {
    labels(target).with_all(&labels(workload))
}
