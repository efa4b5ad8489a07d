//! Campaigns of an `io` workload on targets `a` and `b` whose runs
//! recorded telemetry, built by hand for the tests of the telemetry panel.

use std::collections::BTreeMap;

use serde_json::json;

use crate::metric::catalogue as m;
use crate::metric::labels::{DEVICE, PROCESS};
use crate::metric::{Direction, Labels, MetricDef, MetricKey};
use crate::store::{
    CampaignData, CampaignRow, MetricValue, RunData, SeriesData, TargetRow, WorkloadRow,
};

pub const MIB: f64 = 1048576.0;

fn key(def: &MetricDef, label: Option<(&crate::metric::labels::LabelDef, &str)>) -> MetricKey {
    let labels = match label {
        Some((l, v)) => Labels::new().with(l, v),
        None => Labels::new(),
    };
    MetricKey::new(def.name, labels)
}

/// A run of workload `w` (io, primary bw_bytes_per_s) on `target` whose
/// device `loop0` (or `loop1` on b) read `dev_read` bytes, with
/// telemetry unless `telemetry` is false.
pub fn run(id: i64, target: &str, dev_read: f64, telemetry: bool) -> RunData {
    let dev = if target == "a" { "loop0" } else { "loop1" };
    let v = |value: f64, def: &MetricDef| MetricValue {
        value,
        unit: def.unit,
        direction: def.direction,
    };
    let mut metrics = BTreeMap::from([(
        MetricKey::plain(m::BW_BYTES_PER_S.name),
        MetricValue {
            value: 100.0 * MIB,
            unit: m::BW_BYTES_PER_S.unit,
            direction: Direction::HigherIsBetter,
        },
    )]);
    let mut series = BTreeMap::new();
    let sd = |def: &MetricDef, interval_s: f64, values: Vec<f64>| SeriesData {
        unit: def.unit,
        interval_s,
        values,
    };
    series.insert(
        MetricKey::plain(m::BW_BYTES_PER_S.name),
        sd(&m::BW_BYTES_PER_S, 1.0, vec![100.0 * MIB, 110.0 * MIB]),
    );
    let mut facts = BTreeMap::new();
    if telemetry {
        for (k, value) in [
            (key(&m::TELEMETRY_CPU_PCT, None), 0.2),
            (key(&m::DEV_READ_RATIO, None), dev_read / (256.0 * MIB)),
            (key(&m::DEV_READ_BYTES, None), dev_read),
            (key(&m::DEV_READ_BYTES, Some((&DEVICE, dev))), dev_read),
            (key(&m::PROC_CPU_PCT, Some((&PROCESS, "storlab"))), 12.0),
        ] {
            let def = crate::metric::lookup(&k.name).unwrap();
            metrics.insert(k, v(value, def));
        }
        // The sampler's clock runs a few ms from the workload's.
        series.insert(
            key(&m::DEV_READ_BW_BYTES_PER_S, Some((&DEVICE, dev))),
            sd(
                &m::DEV_READ_BW_BYTES_PER_S,
                1.003,
                vec![90.0 * MIB, 95.0 * MIB, 1.0 * MIB],
            ),
        );
        series.insert(
            key(&m::PROC_CPU_PCT, Some((&PROCESS, "storlab"))),
            sd(&m::PROC_CPU_PCT, 1.003, vec![10.0, 12.0, 30.0]),
        );
        series.insert(
            key(&m::MEM_DIRTY_BYTES, None),
            sd(&m::MEM_DIRTY_BYTES, 1.003, vec![2.0 * MIB, 3.0 * MIB, 0.0]),
        );
        // Writeback stayed at zero: no line, no column.
        series.insert(
            key(&m::MEM_WRITEBACK_BYTES, None),
            sd(&m::MEM_WRITEBACK_BYTES, 1.003, vec![0.0, 0.0, 0.0]),
        );
        facts.insert(
            "telemetry_devices".into(),
            format!("{dev}, vda (under {dev})"),
        );
    }
    RunData {
        id,
        target: target.into(),
        workload: "w".into(),
        repetition: id as u32,
        round: id as u32,
        position: id as u32,
        warmup: false,
        status: "ok".into(),
        error: None,
        started_at: String::new(),
        duration_s: 2.0,
        caches_dropped: true,
        remounted: false,
        metrics: metrics.into(),
        series: series.into(),
        histograms: Default::default(),
        warnings: Vec::new(),
        facts: facts.into(),
        factors: Default::default(),
        ranks: 1,
        per_rank: Vec::new(),
    }
}

pub fn campaign(runs: Vec<RunData>) -> CampaignData {
    let target = |id, name: &str| TargetRow {
        id,
        name: name.into(),
        kind: "loop".into(),
        baseline: id == 1,
        params: json!({}),
        facts: json!({}),
        family: name.into(),
        factors: Vec::new(),
    };
    CampaignData {
        campaign: CampaignRow::finished("c", runs.len()),
        environment: json!({}),
        experiment: json!({ "plan": {} }),
        targets: vec![target(1, "a"), target(2, "b")],
        workloads: vec![WorkloadRow {
            id: 1,
            name: "w".into(),
            kind: "io".into(),
            primary_metric: m::BW_BYTES_PER_S.name.into(),
            params: json!({}),
            family: "w".into(),
            factors: Vec::new(),
            compare_levels: Vec::new(),
        }],
        runs,
        stops: Vec::new(),
        facts: Default::default(),
        pair_cache: Default::default(),
        columns: Default::default(),
        replicas: Vec::new(),
    }
}

/// Targets a and b, three runs each: a's device read 10, 20 and 30 MiB,
/// b's 1, 2 and 3.
pub fn watched_campaign() -> CampaignData {
    let mut runs = Vec::new();
    for i in 0..3 {
        runs.push(run(2 * i + 1, "a", (10.0 * (i + 1) as f64) * MIB, true));
        runs.push(run(2 * i + 2, "b", (i + 1) as f64 * MIB, true));
    }
    campaign(runs)
}
