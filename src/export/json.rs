//! The campaign as one JSON document: campaign, environment, experiment,
//! targets with facts, workloads, and every run with its metrics (name,
//! labels, value, unit, direction), series, latency histograms
//! (HdrHistogram V2, base64), warnings, facts and per-rank parts. The layout is
//! `docs/export.schema.json`; [`JSON_SCHEMA_VERSION`] changes with it.

use base64::Engine;
use serde_json::{json, Value};

use crate::metric::Unit;
use crate::store::{CampaignData, HistData, Keyed, Metrics, RankData, RunData, SeriesData, Store};

/// Version 2: metrics, series and histograms are lists of records with
/// labels (version 1 keyed metrics by name); histograms are included.
/// Version 3: `provenance` (UUID, program versions, host facts, tags,
/// import record).
pub const JSON_SCHEMA_VERSION: u32 = 4;

/// The whole campaign as JSON.
pub fn to_json(c: &CampaignData) -> Value {
    serde_json::to_value(Document(c)).expect("a campaign serializes as JSON")
}

/// The whole campaign as JSON, written as it is serialized: one run's
/// value at a time, so that writing a campaign of 10^5 runs never holds
/// their JSON in memory. The same text as [`to_json`] (keys in order).
pub struct Document<'a>(pub &'a CampaignData);

impl serde::Serialize for Document<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        document(self.0, &Runs(&self.0.runs), s)
    }
}

/// As [`Document`], for a campaign read without its runs
/// ([`Store::load_campaign_head`]): its runs are read from the store a
/// chunk of `chunk` at a time as they are written, so that writing a
/// campaign of any size holds one chunk of runs in memory. The same text.
pub struct StreamedDocument<'a> {
    pub head: &'a CampaignData,
    pub store: &'a Store,
    pub chunk: usize,
}

impl serde::Serialize for StreamedDocument<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        document(self.head, &StoredRuns(self), s)
    }
}

/// The document of campaign `c` with `runs` for its runs.
fn document<S: serde::Serializer>(
    c: &CampaignData,
    runs: &dyn erased_runs::Seq,
    s: S,
) -> Result<S::Ok, S::Error> {
    use serde::ser::{Error, SerializeMap};
    let value = |v: &dyn erased::Part| v.value().map_err(S::Error::custom);
    let mut m = s.serialize_map(Some(9))?;
    // In key order, as a JSON object of serde_json writes them.
    m.serialize_entry("campaign", &value(&c.campaign)?)?;
    m.serialize_entry("environment", &c.environment)?;
    m.serialize_entry("experiment", &c.experiment)?;
    m.serialize_entry("provenance", &value(&c.facts)?)?;
    m.serialize_entry("runs", &erased_runs::Wrap(runs))?;
    m.serialize_entry("schema_version", &JSON_SCHEMA_VERSION)?;
    m.serialize_entry("stops", &value(&c.stops)?)?;
    m.serialize_entry("targets", &value(&c.targets)?)?;
    m.serialize_entry("workloads", &value(&c.workloads)?)?;
    m.end()
}

/// The runs of a document, whichever way they are read, behind one type.
mod erased_runs {
    use serde_json::Value;

    /// Runs given one JSON value at a time to `each`, which says whether
    /// to go on.
    pub trait Seq {
        fn each(&self, each: &mut dyn FnMut(Value) -> bool) -> anyhow::Result<()>;
    }

    pub struct Wrap<'a>(pub &'a dyn Seq);

    impl serde::Serialize for Wrap<'_> {
        fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
            use serde::ser::{Error, SerializeSeq};
            let mut seq = s.serialize_seq(None)?;
            let mut failed = None;
            let read = self.0.each(&mut |v| match seq.serialize_element(&v) {
                Ok(()) => true,
                Err(e) => {
                    failed = Some(e);
                    false
                }
            });
            if let Some(e) = failed {
                return Err(e);
            }
            read.map_err(|e| S::Error::custom(format!("{e:#}")))?;
            seq.end()
        }
    }
}

/// A campaign's runs read from the store a chunk at a time.
struct StoredRuns<'a>(&'a StreamedDocument<'a>);

impl erased_runs::Seq for StoredRuns<'_> {
    fn each(&self, each: &mut dyn FnMut(Value) -> bool) -> anyhow::Result<()> {
        let d = self.0;
        // A writer that failed stops the reading (its error is the one said).
        let stop = || anyhow::anyhow!("the output could not be written");
        d.store.each_run_chunk(d.head, d.chunk, |runs| {
            match runs.iter().all(|r| each(run(r))) {
                true => Ok(()),
                false => Err(stop()),
            }
        })
    }
}

/// Parts of a document turned into JSON values (whose objects keep their
/// keys in order) before they are written.
mod erased {
    pub trait Part {
        fn value(&self) -> serde_json::Result<serde_json::Value>;
    }

    impl<T: serde::Serialize> Part for T {
        fn value(&self) -> serde_json::Result<serde_json::Value> {
            serde_json::to_value(self)
        }
    }
}

/// A campaign's runs, each made a JSON value only as it is written.
struct Runs<'a>(&'a [RunData]);

impl erased_runs::Seq for Runs<'_> {
    fn each(&self, each: &mut dyn FnMut(Value) -> bool) -> anyhow::Result<()> {
        for r in self.0 {
            if !each(run(r)) {
                break;
            }
        }
        Ok(())
    }
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

fn series(s: &Keyed<SeriesData>, r: &RunData) -> Vec<Value> {
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

fn histograms(h: &Keyed<HistData>, r: &RunData) -> Vec<Value> {
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
