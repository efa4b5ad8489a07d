//! Typed views of the parameters a campaign stored with its runs (the
//! resolved experiment as JSON): the plan, and what a target asked for.
//! Reports read these fields, not the JSON by key; what older stores lack
//! reads as the default the plan had then.

use std::collections::HashMap;

use serde_json::Value;

use super::{CampaignData, TargetRow};
use crate::metric::matrix::{test_labels, Test};
use crate::metric::MetricKey;
use crate::stats::Looks;

/// How many times each pair was to run.
#[derive(Debug, Clone, PartialEq)]
pub enum Repetitions {
    /// A fixed count (as stored: a number, or whatever an old store wrote).
    Fixed(String),
    /// Adaptive: at least `min`, at most `max`, until the 95% CI half-width
    /// is within `until_ci_pct` % of the mean.
    Adaptive {
        min: String,
        max: String,
        until_ci_pct: String,
    },
    /// Sequential: rounds until every comparison was decided, at least
    /// `min`, at most `max`.
    Decided { min: u32, max: u32 },
}

impl Default for Repetitions {
    fn default() -> Self {
        Repetitions::Fixed(String::new())
    }
}

/// The plan a campaign ran, as stored.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct StoredPlan {
    /// `interleaved` (the default), `randomized`, `sequential`, `balanced`.
    pub order: String,
    /// The seed of a randomized order.
    pub seed: String,
    pub repetitions: Repetitions,
    /// The analysis asked for (`ratio` unless `means`), if any.
    pub analysis: Option<String>,
}

impl StoredPlan {
    pub fn read(experiment: &Value) -> StoredPlan {
        let plan = experiment.get("plan").unwrap_or(&Value::Null);
        let field = |k: &str| plan.get(k).unwrap_or(&Value::Null);
        let repetitions = match field("repetitions") {
            Value::Object(a) if a.get("until").and_then(Value::as_str) == Some("decided") => {
                let count = |k: &str| a.get(k).and_then(Value::as_u64).unwrap_or(0) as u32;
                Repetitions::Decided {
                    min: count("min"),
                    max: count("max"),
                }
            }
            Value::Object(a) => {
                let part = |k: &str| a.get(k).unwrap_or(&Value::Null).to_string();
                Repetitions::Adaptive {
                    min: part("min"),
                    max: part("max"),
                    until_ci_pct: part("until_ci_pct"),
                }
            }
            n => Repetitions::Fixed(n.to_string()),
        };
        StoredPlan {
            order: field("order").as_str().unwrap_or("interleaved").to_string(),
            seed: field("seed").to_string(),
            repetitions,
            analysis: field("analysis").as_str().map(String::from),
        }
    }

    /// The looks a plan that ran until decided could take before its
    /// verdicts ([`crate::stats::sequential`]): after every round from the
    /// first verdict's. `None` for a plan that looked once: a fixed count,
    /// or `until_ci`, whose stop looked at each pair's own spread, not at a
    /// comparison.
    pub fn looks(&self, first_verdict: u32) -> Option<Looks> {
        match self.repetitions {
            Repetitions::Decided { min, max } => Some(Looks::rounds(min, max, first_verdict)),
            _ => None,
        }
    }

    /// Whether each pair's repetitions ran back to back (no shared rounds).
    pub fn sequential(&self) -> bool {
        self.order == "sequential"
    }
}

/// What a target's parameters asked for that reports check against what
/// was read back: its settings (`options` of Gluster, `properties` of ZFS)
/// and its mount options.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Requested {
    /// (name, value) of every requested setting, values as text.
    pub settings: Vec<(String, String)>,
    pub mount_options: Vec<String>,
}

impl Requested {
    pub fn read(params: &Value) -> Requested {
        let settings = [SETTINGS_OPTIONS, SETTINGS_PROPERTIES]
            .iter()
            .filter_map(|p| params.get(p).and_then(Value::as_object))
            .flatten()
            .map(|(k, v)| (k.clone(), v.as_str().map_or(v.to_string(), String::from)))
            .collect();
        let mount_options = params
            .get(MOUNT_OPTIONS)
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|o| o.as_str().map(String::from))
            .collect();
        Requested {
            settings,
            mount_options,
        }
    }

    /// Whether the target asked for the setting `name`.
    pub fn asks_for(&self, name: &str) -> bool {
        self.settings.iter().any(|(k, _)| k == name)
    }
}

/// What an `io` workload asked of its steady-state detector, as stored.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SteadyRequest {
    /// fio's `steadystate` (alias `ss`): `bw:20%`, `iops_slope:0.1%`.
    pub criterion: Option<String>,
    /// `ss_dur`: the window, in seconds.
    pub window_s: Option<f64>,
    /// `ss_ramp`: seconds before judging.
    pub ramp_s: Option<f64>,
    /// `runtime`: the most it may run, in seconds.
    pub runtime_s: Option<f64>,
}

impl SteadyRequest {
    pub fn read(params: &Value) -> SteadyRequest {
        let text = |k: &str| params.get(k).and_then(Value::as_str).map(String::from);
        let number = |k: &str| params.get(k).and_then(Value::as_f64);
        SteadyRequest {
            criterion: text("steadystate").or_else(|| text("ss")),
            window_s: number("ss_dur"),
            ramp_s: number("ss_ramp"),
            runtime_s: number("runtime"),
        }
    }
}

/// Each workload of `experiment` and its valid `equivalence_margin_pct`,
/// if it has one (the first entry of a name).
pub(super) fn margins(experiment: &Value) -> HashMap<String, Option<f64>> {
    let mut out = HashMap::new();
    let list = experiment.get("workloads").and_then(Value::as_array);
    for w in list.into_iter().flatten() {
        let Some(name) = w.get("name").and_then(Value::as_str) else {
            continue;
        };
        out.entry(name.to_string()).or_insert_with(|| {
            w.get("equivalence_margin_pct")
                .and_then(Value::as_f64)
                .filter(|p| crate::stats::equivalence::valid_margin(*p))
        });
    }
    out
}

/// The matrix kind, and the parameter naming the test its verdict is
/// about.
const MATRIX: &str = "matrix";
const PRIMARY_TEST: &str = "primary_test";

/// The target parameters [`Requested`] reads.
const SETTINGS_OPTIONS: &str = "options";
const SETTINGS_PROPERTIES: &str = "properties";
const MOUNT_OPTIONS: &str = "mount_options";

impl CampaignData {
    /// The plan the campaign ran.
    pub fn plan(&self) -> StoredPlan {
        StoredPlan::read(&self.experiment)
    }

    /// The equivalence margin, in %, of workload `name` (its
    /// `equivalence_margin`): the default, 5 %, for a store written
    /// before workloads had one.
    /// Read once per campaign ([`margins`]): asked per metric of each of
    /// thousands of variants.
    pub fn margin_pct(&self, name: &str) -> f64 {
        self.pairs(|p| p.margins.get(name).copied().flatten())
            .unwrap_or(crate::stats::DEFAULT_MARGIN_PCT)
    }

    /// Each capacity search the campaign ran: the searched workload's
    /// name and what it asked, in the experiment's order.
    pub fn searches(&self) -> Vec<(String, StoredCapacity)> {
        self.workload_entries("capacity")
    }

    /// The probes the campaign made: each variant's name and its search.
    pub fn probes(&self) -> Vec<(String, StoredProbe)> {
        self.workload_entries("probe")
    }

    fn workload_entries<T: serde::de::DeserializeOwned>(&self, key: &str) -> Vec<(String, T)> {
        let list = self.experiment.get("workloads").and_then(Value::as_array);
        list.into_iter()
            .flatten()
            .filter_map(|w| {
                let name = w.get("name")?.as_str()?.to_string();
                let entry = serde_json::from_value(w.get(key)?.clone()).ok()?;
                Some((name, entry))
            })
            .collect()
    }
}

/// A capacity search as stored with the experiment
/// (`crate::experiment::capacity::Capacity::to_json`).
#[derive(Debug, Clone, PartialEq, serde::Deserialize)]
pub struct StoredCapacity {
    /// The percentile judged (`p99`) and the metric holding it.
    pub latency: String,
    pub metric: String,
    pub max_s: f64,
    pub start: f64,
    pub max_rate: Option<f64>,
    pub resolution: f64,
    /// The parameter set, and the metric of what was achieved.
    pub param: String,
    pub achieved: String,
    /// The count of a Poisson schedule's served arrivals, if any.
    #[serde(default)]
    pub served: Option<String>,
}

impl StoredCapacity {
    /// The figures of a probe's runs the search is judged from (and the
    /// median its table shows).
    pub fn figures(&self) -> Vec<String> {
        let mut out = vec![
            self.metric.clone(),
            self.achieved.clone(),
            crate::metric::catalogue::LAT_P50_NS.name.to_string(),
        ];
        out.extend(self.served.clone());
        out
    }
}

/// A probe as stored: its search and the total rate it offered.
#[derive(Debug, Clone, PartialEq, serde::Deserialize)]
pub struct StoredProbe {
    pub search: String,
    pub k: i64,
    pub offered: f64,
}

impl super::WorkloadRow {
    /// The metric the workload's verdict and the regression gate concern:
    /// its primary metric, with the labels the workload's kind resolved
    /// from its parameters (a matrix's `primary_test`, as
    /// `crate::workload::WorkloadConfig::verdict_labels` resolves it when it
    /// runs) — read back here once, the one reading of the stored
    /// parameters for it.
    pub fn verdict_metric(&self) -> MetricKey {
        let test = self.params.get(PRIMARY_TEST).and_then(Value::as_str);
        match test.and_then(Test::parse).filter(|_| self.kind == MATRIX) {
            Some(t) => MetricKey::new(&self.primary_metric, test_labels(t)),
            None => MetricKey::plain(&self.primary_metric),
        }
    }

    /// What the workload asked of the steady-state detector (`io`).
    pub fn steady(&self) -> SteadyRequest {
        SteadyRequest::read(&self.params)
    }
}

impl TargetRow {
    /// What the target asked for.
    pub fn requested(&self) -> Requested {
        Requested::read(&self.params)
    }

    /// What was read back from the target once it was provisioned.
    pub fn read_back(&self) -> crate::fact::TargetFacts {
        crate::fact::TargetFacts::read(&self.facts)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn plans_read_typed_with_the_defaults_of_older_stores() {
        let p = StoredPlan::read(
            &json!({"plan": {"order": "randomized", "seed": 7, "repetitions": 3}}),
        );
        assert_eq!((p.order.as_str(), p.seed.as_str()), ("randomized", "7"));
        assert_eq!(p.repetitions, Repetitions::Fixed("3".into()));
        let a = StoredPlan::read(
            &json!({"plan": {"repetitions": {"min": 3, "max": 10, "until_ci_pct": 2.0}, "analysis": "means"}}),
        );
        assert_eq!(a.order, "interleaved");
        assert_eq!(a.analysis.as_deref(), Some("means"));
        assert!(matches!(a.repetitions, Repetitions::Adaptive { ref max, .. } if max == "10"));
    }

    #[test]
    fn requested_settings_and_mount_options_read_typed() {
        let r = Requested::read(
            &json!({"options": {"performance.cache-size": "64MB"}, "properties": {"recordsize": "8k"}, "mount_options": ["noatime"]}),
        );
        assert_eq!(r.settings.len(), 2);
        assert!(r.asks_for("recordsize") && !r.asks_for("atime"));
        assert_eq!(r.mount_options, ["noatime"]);
    }
}
