//! A [`RunOutput`] as text: what an MPI rank sends rank 0, and what a run
//! the store could not take is spooled as. Metrics travel as catalogue
//! names with their labels; histograms in HdrHistogram's V2 encoding (hex),
//! so that they merge and store exactly; numbers round-trip exactly
//! (serde_json's `float_roundtrip`).

use anyhow::{anyhow, Result};
use hdrhistogram::serialization::{Deserializer, Serializer, V2Serializer};
use serde::{Deserialize, Serialize};

use super::{Hist, RunOutput, Series};
use crate::metric::{lookup, lookup_hist, Labels, MetricDef};
use crate::warning::{Warning, WarningKind};

/// A [`RunOutput`] on the wire: catalogue names with their labels.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct WireOutput {
    metrics: Vec<(String, Labels, f64)>,
    series: Vec<(String, Labels, f64, Vec<Option<f64>>)>,
    /// Name, labels and the V2 encoding in hex.
    histograms: Vec<(String, Labels, String)>,
    warnings: Vec<WireWarning>,
    #[serde(default)]
    facts: Vec<(String, String)>,
}

impl WireOutput {
    /// Non-finite metric values are dropped, as the store drops them.
    pub fn from_output(out: &RunOutput) -> Result<WireOutput> {
        let mut histograms = Vec::new();
        for h in &out.histograms {
            let mut bytes = Vec::new();
            V2Serializer::new()
                .serialize(&h.hist, &mut bytes)
                .map_err(|e| anyhow!("serializing histogram {}: {e:?}", h.def.name))?;
            histograms.push((h.def.name.to_string(), h.labels.clone(), hex(&bytes)));
        }
        let finite = out.metrics.iter().filter(|m| m.value.is_finite());
        Ok(WireOutput {
            metrics: finite
                .map(|m| (m.def.name.to_string(), m.labels.clone(), m.value))
                .collect(),
            series: out
                .series
                .iter()
                .map(|s| {
                    let v = s.values.iter().map(|x| x.is_finite().then_some(*x));
                    let name = s.def.name.to_string();
                    (name, s.labels.clone(), s.interval_s, v.collect())
                })
                .collect(),
            histograms,
            warnings: out
                .warnings
                .iter()
                .cloned()
                .map(WireWarning::Typed)
                .collect(),
            facts: out.facts.clone(),
        })
    }

    pub fn into_output(self) -> Result<RunOutput> {
        let mut out = RunOutput {
            warnings: self
                .warnings
                .into_iter()
                .map(WireWarning::into_warning)
                .collect(),
            facts: self.facts,
            ..Default::default()
        };
        for (name, labels, value) in self.metrics {
            out.metrics.push(known(&name)?.labelled(labels, value));
        }
        for (name, labels, interval_s, values) in self.series {
            let values = values.into_iter().map(|v| v.unwrap_or(f64::NAN));
            out.series.push(Series {
                def: known(&name)?,
                labels,
                interval_s,
                values: values.collect(),
            });
        }
        for (name, labels, text) in self.histograms {
            let def = lookup_hist(&name)
                .ok_or_else(|| anyhow!("histogram `{name}` is unknown to this storlab"))?;
            let bytes = unhex(&text).ok_or_else(|| anyhow!("histogram {name}: bad hex"))?;
            let hist = Deserializer::new()
                .deserialize(&mut bytes.as_slice())
                .map_err(|e| anyhow!("decoding histogram {name}: {e:?}"))?;
            out.histograms.push(Hist { def, labels, hist });
        }
        Ok(out)
    }
}

/// A warning on the wire: with its kind, or as a bare sentence (a spool
/// written before warnings had kinds), classified when read.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(untagged)]
enum WireWarning {
    Typed(Warning),
    Legacy(String),
}

impl WireWarning {
    fn into_warning(self) -> Warning {
        match self {
            WireWarning::Typed(w) => w,
            WireWarning::Legacy(text) => Warning::new(WarningKind::classify_legacy(&text), text),
        }
    }
}

/// The catalogue entry of a metric read back (every rank runs the same
/// storlab, and a spool is read by one: an unknown name is malformed).
fn known(name: &str) -> Result<&'static MetricDef> {
    lookup(name).ok_or_else(|| anyhow!("metric `{name}` is unknown to this storlab"))
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::latency::new_histogram;

    fn encode<T: Serialize>(v: &T) -> Vec<u8> {
        serde_json::to_vec(v).unwrap()
    }

    fn decode<T: serde::de::DeserializeOwned>(b: &[u8]) -> Result<T> {
        Ok(serde_json::from_slice(b)?)
    }
    use crate::metric::catalogue as m;

    #[test]
    fn an_output_survives_the_wire_exactly() {
        let mut hist = new_histogram();
        for v in [1_000u64, 2_000, 2_000, 3_600_000_000] {
            hist.record(v).unwrap();
        }
        let op = Labels::new().with(&crate::metric::labels::OP, "create");
        let out = RunOutput {
            metrics: vec![
                m::BYTES.value(4096.0),
                m::ELAPSED_S.value(f64::NAN),
                m::OPS.labelled(op.clone(), 7.0),
            ],
            series: vec![Series::new(&m::BW_BYTES_PER_S, 1.0, vec![1.0, f64::NAN])],
            histograms: vec![Hist {
                def: &m::LAT,
                labels: op.clone(),
                hist: hist.clone(),
            }],
            warnings: vec![Warning::new(WarningKind::PageCache, "page cache: w")],
            facts: vec![("pg_server_version".into(), "15.18".into())],
        };
        let wire = WireOutput::from_output(&out).unwrap();
        let back = decode::<WireOutput>(&encode(&wire))
            .unwrap()
            .into_output()
            .unwrap();
        assert_eq!(
            back.metrics,
            vec![out.metrics[0].clone(), out.metrics[2].clone()]
        );
        assert_eq!(back.histograms[0].labels, op);
        assert_eq!(back.series[0].values[0], 1.0);
        assert!(back.series[0].values[1].is_nan());
        assert_eq!(back.histograms[0].hist, hist);
        assert_eq!(back.histograms[0].hist.len(), 4);
        assert_eq!(back.warnings, out.warnings);
        assert_eq!(back.facts, out.facts);
        assert!(unhex("abc").is_none() && unhex("zz").is_none());
    }

    #[test]
    fn a_spool_of_bare_warning_sentences_reads_back_classified() {
        let text = r#"{"metrics": [], "series": [], "histograms": [], "warnings": ["noisy host: 40%", "fio said: x"]}"#;
        let back = decode::<WireOutput>(text.as_bytes())
            .unwrap()
            .into_output()
            .unwrap();
        assert_eq!(
            back.warnings,
            vec![
                Warning::new(WarningKind::NoisyHost, "noisy host: 40%"),
                Warning::note("fio said: x")
            ]
        );
    }

    #[test]
    fn a_name_outside_the_catalogue_is_a_malformed_message() {
        let text = r#"{"metrics": [["write_64k_4k_bw_bytes_per_s", {}, 1.0]], "series": [], "histograms": [], "warnings": []}"#;
        let wire: WireOutput = decode(text.as_bytes()).unwrap();
        let e = wire.into_output().unwrap_err().to_string();
        assert!(
            e.contains("`write_64k_4k_bw_bytes_per_s` is unknown"),
            "{e}"
        );
    }
}
