//! The campaign as one JSON document: campaign, environment, experiment,
//! targets with facts, workloads, and every run with its metrics (name,
//! labels, value, unit, direction), series, latency histograms
//! (HdrHistogram V2, base64), warnings, facts and per-rank parts. The layout is
//! `docs/export.schema.json`; [`JSON_SCHEMA_VERSION`] changes with it.

use std::collections::BTreeMap;

use base64::Engine;
use serde_json::{json, Value};

use crate::metric::{MetricKey, Unit};
use crate::store::{CampaignData, HistData, Metrics, RankData, RunData, SeriesData};

/// Version 2: metrics, series and histograms are lists of records with
/// labels (version 1 keyed metrics by name); histograms are included.
/// Version 3: `provenance` (UUID, program versions, host facts, tags,
/// import record).
pub const JSON_SCHEMA_VERSION: u32 = 4;

/// The whole campaign as JSON.
pub fn to_json(c: &CampaignData) -> Value {
    json!({
        "schema_version": JSON_SCHEMA_VERSION,
        "campaign": c.campaign,
        "environment": c.environment,
        "experiment": c.experiment,
        "targets": c.targets,
        "workloads": c.workloads,
        "runs": c.runs.iter().map(run).collect::<Vec<_>>(),
        "stops": c.stops,
        "provenance": c.facts,
    })
}

fn run(r: &RunData) -> Value {
    json!({
        "id": r.id,
        "target": r.target,
        "workload": r.workload,
        "repetition": r.repetition,
        "round": r.round,
        "position": r.position,
        "warmup": r.warmup,
        "status": r.status,
        "error": r.error,
        "started_at": r.started_at,
        "duration_s": r.duration_s,
        "caches_dropped": r.caches_dropped,
        "remounted": r.remounted,
        "ranks": r.ranks,
        "metrics": metrics(&r.metrics, r),
        "series": series(&r.series, r),
        "histograms": histograms(&r.histograms, r),
        "warnings": r.warnings,
        "facts": r.facts,
        "per_rank": r.per_rank.iter().map(|k| rank(k, r)).collect::<Vec<_>>(),
    })
}

fn rank(k: &RankData, r: &RunData) -> Value {
    json!({
        "rank": k.rank,
        "host": k.host,
        "status": k.status,
        "error": k.error,
        "done_s": k.done_s,
        "metrics": metrics(&k.metrics, r),
    })
}

/// Labels as stored: each value's own and its run's factors.
fn metrics(m: &Metrics, r: &RunData) -> Vec<Value> {
    m.iter()
        .map(|(k, v)| {
            json!({
                "name": k.name,
                "labels": r.labels_of(k),
                "value": v.value,
                "unit": v.unit,
                "direction": v.direction.as_str(),
            })
        })
        .collect()
}

fn series(s: &BTreeMap<MetricKey, SeriesData>, r: &RunData) -> Vec<Value> {
    s.iter()
        .map(|(k, v)| {
            json!({
                "name": k.name,
                "labels": r.labels_of(k),
                "unit": v.unit,
                "interval_s": v.interval_s,
                "values": v.values,
            })
        })
        .collect()
}

fn histograms(h: &BTreeMap<MetricKey, HistData>, r: &RunData) -> Vec<Value> {
    let b64 = base64::engine::general_purpose::STANDARD;
    h.iter()
        .map(|(k, v)| {
            json!({
                "name": k.name,
                "labels": r.labels_of(k),
                "unit": Unit::Nanoseconds,
                "count": v.count,
                "hdr_v2_base64": b64.encode(&v.hdr_v2),
            })
        })
        .collect()
}
