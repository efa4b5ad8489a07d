//! Campaigns built by hand for the tests of studies: targets and
//! workloads with factors, three runs per pair.

use std::collections::BTreeMap;

use serde_json::json;

use crate::experiment::sweep::{variant_name, Factor, Scale};
use crate::metric::catalogue::{INIT_SECONDS, TOTAL_S};
use crate::metric::{MetricDef, MetricKey};
use crate::store::{CampaignData, CampaignRow, MetricValue, RunData, TargetRow, WorkloadRow};

pub fn factor(key: &str, value: &str, text: &str, scale: Scale) -> Factor {
    Factor {
        key: key.into(),
        value: value.into(),
        text: text.into(),
        scale,
    }
}

/// A campaign built by hand: targets and workloads with factors, and for
/// each pair three runs of `value(target, workload)` ± 1%.
#[derive(Clone)]
pub struct Builder {
    targets: Vec<TargetRow>,
    workloads: Vec<WorkloadRow>,
    runs: Vec<RunData>,
    pub compare_levels: Vec<String>,
    /// init_seconds in the first run of the first workload only, as a
    /// cluster every variant shares.
    pub init_once: bool,
}

impl Builder {
    pub fn new() -> Builder {
        Builder {
            targets: Vec::new(),
            workloads: Vec::new(),
            runs: Vec::new(),
            compare_levels: Vec::new(),
            init_once: false,
        }
    }

    pub fn target(mut self, family: &str, factors: Vec<Factor>) -> Builder {
        let name = variant_name(family, &factors);
        self.targets.push(TargetRow {
            id: self.targets.len() as i64 + 1,
            baseline: self.targets.is_empty(),
            name,
            kind: "dir".into(),
            params: json!({}),
            facts: json!({}),
            family: family.into(),
            factors,
        });
        self
    }

    pub fn workload(mut self, family: &str, factors: Vec<Factor>) -> Builder {
        self.workloads.push(WorkloadRow {
            id: self.workloads.len() as i64 + 1,
            name: variant_name(family, &factors),
            kind: "tinywrites".into(),
            primary_metric: "total_s".into(),
            params: json!({}),
            family: family.into(),
            factors,
            compare_levels: self.compare_levels.clone(),
        });
        self
    }

    pub fn runs(mut self, value: impl Fn(&TargetRow, &WorkloadRow) -> f64) -> Builder {
        for round in 1..=3u32 {
            for w in &self.workloads {
                for t in &self.targets {
                    let v = value(t, w) * (1.0 + 0.01 * (f64::from(round) - 2.0));
                    let mut metrics = BTreeMap::new();
                    let mut put = |d: &MetricDef, v: f64| {
                        metrics.insert(
                            MetricKey::plain(d.name),
                            MetricValue {
                                value: v,
                                unit: d.unit,
                                direction: d.direction,
                            },
                        )
                    };
                    put(&TOTAL_S, v);
                    let first = round == 1 && w.id == self.workloads[0].id;
                    if !self.init_once || first {
                        put(&INIT_SECONDS, 2.0 * v);
                    }
                    self.runs
                        .push(run(self.runs.len() as i64, t, w, round, metrics));
                }
            }
        }
        self
    }

    pub fn build(self) -> CampaignData {
        CampaignData {
            campaign: CampaignRow {
                origin: "t.toml".into(),
                ..CampaignRow::finished("study", 0)
            },
            environment: json!({}),
            experiment: json!({"plan": {"order": "interleaved"}}),
            targets: self.targets,
            workloads: self.workloads,
            runs: self.runs,
            stops: Vec::new(),
            facts: Default::default(),
            pair_cache: Default::default(),
            columns: Default::default(),
            replicas: Vec::new(),
        }
    }
}

fn run(
    id: i64,
    t: &TargetRow,
    w: &WorkloadRow,
    round: u32,
    metrics: BTreeMap<MetricKey, MetricValue>,
) -> RunData {
    RunData {
        id,
        target: t.name.clone(),
        workload: w.name.clone(),
        repetition: round,
        round,
        position: id as u32,
        warmup: false,
        status: "ok".into(),
        error: None,
        started_at: String::new(),
        duration_s: 1.0,
        caches_dropped: true,
        remounted: false,
        metrics: metrics.into(),
        series: Default::default(),
        histograms: Default::default(),
        warnings: Vec::new(),
        ranks: 1,
        ..Default::default()
    }
}

pub fn size(mib: u64) -> Factor {
    factor(
        "total_size",
        &(mib << 20).to_string(),
        &format!("{mib}M"),
        Scale::Size,
    )
}

pub fn compress(c: &str) -> Factor {
    factor("compress", c, c, Scale::Category)
}
