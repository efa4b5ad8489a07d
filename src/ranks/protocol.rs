//! What the ranks say to each other, encoded as JSON bytes for
//! [`super::Ranks`]: the opening of a job, rank 0's instruction before each
//! run, and each rank's report after it. Histograms travel in HdrHistogram's
//! V2 encoding (hex), so that rank 0 merges them exactly.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Mutex;

use anyhow::{anyhow, Result};
use hdrhistogram::serialization::{Deserializer, Serializer, V2Serializer};
use serde::{de::DeserializeOwned, Deserialize, Serialize};

use crate::measure::{Hist, Metric, RunOutput, Series};
use crate::metric::Direction;

/// Rank 0's first word: the experiment every rank runs, or why there is none.
#[derive(Debug, Serialize, Deserialize)]
pub enum Opening {
    /// The experiment's text, parsed by every rank (`origin` resolves
    /// relative paths, so the files it names must exist on every host).
    Experiment {
        origin: String,
        source: String,
        /// Rank 0's storlab version: every rank must run the same one.
        version: String,
    },
    Abort,
}

/// Each rank's answer to the opening.
#[derive(Debug, Serialize, Deserialize)]
pub struct Hello {
    pub host: String,
    pub error: Option<String>,
}

/// Rank 0's decision after the hellos: go, with every rank's host, or not.
#[derive(Debug, Serialize, Deserialize)]
pub struct Start {
    pub go: bool,
    pub hosts: Vec<String>,
}

/// Rank 0's instruction before each run.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub enum Instruction {
    Run(RunOrder),
    /// The campaign is over (finished, interrupted or failed): exit.
    Over,
}

/// One run, as every rank must carry it out.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RunOrder {
    pub target: usize,
    pub workload: usize,
    /// The run's directory on rank 0's host; each rank works in `rank-K`
    /// inside it (the same path on every host).
    pub dir: PathBuf,
    pub run_seed: u64,
}

/// What one rank reports after a run.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RankReport {
    pub rank: usize,
    pub host: String,
    /// `ok`, `failed`, `interrupted`, or `skipped` when another rank's
    /// failure kept this one from running.
    pub status: String,
    pub error: Option<String>,
    /// Seconds from the start barrier to the end of this rank's run.
    pub done_s: Option<f64>,
    pub output: Option<WireOutput>,
}

/// A [`RunOutput`] on the wire.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct WireOutput {
    metrics: Vec<(String, f64, String, String)>,
    series: Vec<(String, String, f64, Vec<Option<f64>>)>,
    /// Name, unit and the V2 encoding in hex.
    histograms: Vec<(String, String, String)>,
    warnings: Vec<String>,
    facts: Vec<(String, String)>,
}

pub fn encode<T: Serialize>(v: &T) -> Vec<u8> {
    serde_json::to_vec(v).expect("storlab's messages always serialize")
}

pub fn decode<T: DeserializeOwned>(bytes: &[u8]) -> Result<T> {
    serde_json::from_slice(bytes).map_err(|e| anyhow!("a malformed message between ranks: {e}"))
}

impl WireOutput {
    /// Non-finite metric values are dropped, as the store drops them.
    pub fn from_output(out: &RunOutput) -> Result<WireOutput> {
        let mut histograms = Vec::new();
        for h in &out.histograms {
            let mut bytes = Vec::new();
            V2Serializer::new()
                .serialize(&h.hist, &mut bytes)
                .map_err(|e| anyhow!("serializing histogram {}: {e:?}", h.name))?;
            histograms.push((h.name.clone(), h.unit.to_string(), hex(&bytes)));
        }
        Ok(WireOutput {
            metrics: out
                .metrics
                .iter()
                .filter(|m| m.value.is_finite())
                .map(|m| {
                    let d = m.direction.as_str().to_string();
                    (m.name.clone(), m.value, m.unit.to_string(), d)
                })
                .collect(),
            series: out
                .series
                .iter()
                .map(|s| {
                    let v = s.values.iter().map(|x| x.is_finite().then_some(*x));
                    (
                        s.name.clone(),
                        s.unit.to_string(),
                        s.interval_s,
                        v.collect(),
                    )
                })
                .collect(),
            histograms,
            warnings: out.warnings.clone(),
            facts: out.facts.clone(),
        })
    }

    pub fn into_output(self) -> Result<RunOutput> {
        let mut out = RunOutput {
            warnings: self.warnings,
            facts: self.facts,
            ..Default::default()
        };
        for (name, value, unit, d) in self.metrics {
            let direction = Direction::parse(&d).unwrap_or(Direction::HigherIsBetter);
            out.metrics.push(Metric {
                name,
                value,
                unit: intern(&unit),
                direction,
            });
        }
        for (name, unit, interval_s, values) in self.series {
            let values = values.into_iter().map(|v| v.unwrap_or(f64::NAN));
            out.series.push(Series {
                name,
                unit: intern(&unit),
                interval_s,
                values: values.collect(),
            });
        }
        for (name, unit, text) in self.histograms {
            let bytes = unhex(&text).ok_or_else(|| anyhow!("histogram {name}: bad hex"))?;
            let hist = Deserializer::new()
                .deserialize(&mut bytes.as_slice())
                .map_err(|e| anyhow!("decoding histogram {name}: {e:?}"))?;
            out.histograms.push(Hist {
                name,
                unit: intern(&unit),
                hist,
            });
        }
        Ok(out)
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn unhex(text: &str) -> Option<Vec<u8>> {
    if text.len() % 2 != 0 {
        return None;
    }
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(text.get(i..i + 2)?, 16).ok())
        .collect()
}

/// Units are `&'static str` in a [`Metric`]; the few that arrive over the
/// wire are leaked once each, not once per message.
fn intern(unit: &str) -> &'static str {
    static UNITS: Mutex<BTreeMap<String, &'static str>> = Mutex::new(BTreeMap::new());
    let mut units = UNITS.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(u) = units.get(unit) {
        return u;
    }
    let leaked: &'static str = Box::leak(unit.to_string().into_boxed_str());
    units.insert(unit.to_string(), leaked);
    leaked
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::latency::new_histogram;

    #[test]
    fn an_output_survives_the_wire_exactly() {
        let mut hist = new_histogram();
        for v in [1_000u64, 2_000, 2_000, 3_600_000_000] {
            hist.record(v).unwrap();
        }
        let out = RunOutput {
            metrics: vec![
                Metric::higher("bytes", 4096.0, "bytes"),
                Metric::lower("nan", f64::NAN, "s"),
            ],
            series: vec![Series {
                name: "bw_bytes_per_s".into(),
                unit: "bytes/s",
                interval_s: 1.0,
                values: vec![1.0, f64::NAN],
            }],
            histograms: vec![Hist {
                name: "lat".into(),
                unit: "ns",
                hist: hist.clone(),
            }],
            warnings: vec!["w".into()],
            facts: vec![("fio_version".into(), "fio-3.33".into())],
        };
        let wire = WireOutput::from_output(&out).unwrap();
        let back = decode::<WireOutput>(&encode(&wire))
            .unwrap()
            .into_output()
            .unwrap();
        assert_eq!(back.metrics, vec![out.metrics[0].clone()]);
        assert_eq!(back.series[0].values[0], 1.0);
        assert!(back.series[0].values[1].is_nan());
        assert_eq!(back.histograms[0].hist, hist);
        assert_eq!(back.histograms[0].hist.len(), 4);
        assert_eq!(back.warnings, vec!["w".to_string()]);
        assert_eq!(back.facts, out.facts);
        assert!(unhex("abc").is_none() && unhex("zz").is_none());
    }
}
