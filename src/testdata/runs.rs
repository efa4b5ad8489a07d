//! Single runs built by hand: an `ok` run of a workload on a target, and
//! a stored value of a metric.

use crate::metric::MetricDef;
use crate::store::{MetricValue, RunData};

/// An `ok` run `id` of `workload` on `target`, holding nothing yet.
pub fn ok(id: i64, target: &str, workload: &str) -> RunData {
    RunData {
        id,
        target: target.into(),
        workload: workload.into(),
        status: "ok".into(),
        ..RunData::default()
    }
}

/// `v` stored as a value of `def` (its unit and direction).
pub fn value(def: &MetricDef, v: f64) -> MetricValue {
    MetricValue {
        value: v,
        unit: def.unit,
        direction: def.direction,
    }
}
