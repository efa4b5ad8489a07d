use std::collections::BTreeMap;

use serde_json::json;

use super::*;
use crate::metric::Direction;
use crate::report::document::Block;
use crate::report::render;
use crate::store::{CampaignRow, MetricValue, TargetRow, WorkloadRow};
use crate::warning::{Warning, WarningKind};

const MIB: f64 = 1048576.0;

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
fn run(id: i64, target: &str, dev_read: f64, telemetry: bool) -> RunData {
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
        factors: Labels::new(),
        ranks: 1,
        per_rank: Vec::new(),
    }
}

fn campaign(runs: Vec<RunData>) -> CampaignData {
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
        replicas: Vec::new(),
    }
}

/// Targets a and b, three runs each: a's device read 10, 20 and 30 MiB,
/// b's 1, 2 and 3.
fn watched_campaign() -> CampaignData {
    let mut runs = Vec::new();
    for i in 0..3 {
        runs.push(run(2 * i + 1, "a", (10.0 * (i + 1) as f64) * MIB, true));
        runs.push(run(2 * i + 2, "b", (i + 1) as f64 * MIB, true));
    }
    campaign(runs)
}

fn panel_of(c: &CampaignData) -> Option<Section> {
    let r = model::build(c, None, &|_| Default::default()).unwrap();
    section(c, &r.workloads[0], &r.targets, &r.baseline)
}

fn tables(p: &Section) -> Vec<&Table> {
    p.blocks
        .iter()
        .filter_map(|b| match b {
            Block::Table(t) => Some(t),
            _ => None,
        })
        .collect()
}

fn texts(p: &Section) -> Vec<&str> {
    p.blocks
        .iter()
        .filter_map(|b| match b {
            Block::Text(t) => Some(t.as_str()),
            _ => None,
        })
        .collect()
}

#[test]
fn no_panel_without_telemetry() {
    let c = campaign(vec![run(1, "a", 0.0, false), run(2, "b", 0.0, false)]);
    assert_eq!(panel_of(&c), None);
}

#[test]
fn figures_compare_the_targets_and_leave_single_devices_to_their_table() {
    let c = watched_campaign();
    let p = panel_of(&c).unwrap();
    let t = tables(&p);
    let watched = t[0];
    assert_eq!(
        watched.rows[0],
        vec!["a", "loop0, vda (under loop0)", "storlab"]
    );
    let figures = t[1];
    assert_eq!(figures.header[1..], ["a", "b", "b vs a"]);
    let names: Vec<&str> = figures.rows.iter().map(|r| r[0].as_str()).collect();
    assert_eq!(
        names,
        [
            "dev_read_ratio",
            "dev_read_bytes",
            "proc_cpu_pct (storlab)",
            "telemetry_cpu_pct"
        ],
        "catalogue order; no device-labelled row"
    );
    // b's device read a tenth of a's: -90%, ÷10 from ×2 on.
    let bytes = &figures.rows[1];
    assert!(bytes[1].starts_with("20.0 MiB"), "{bytes:?}");
    assert!(bytes[3].starts_with("÷10 ["), "{bytes:?}");

    let devices = t[2];
    assert_eq!(devices.header[..3], ["target", "device", "read"]);
    assert_eq!(devices.rows.len(), 2);
    assert_eq!(devices.rows[0][..3], ["a", "loop0", "20.0 MiB"]);
    assert_eq!(devices.rows[1][..3], ["b", "loop1", "2.0 MiB"]);
    assert_eq!(devices.rows[0][3], "—", "no figure recorded: a dash");
}

#[test]
fn over_time_aligns_the_clocks_and_leaves_out_lines_at_zero() {
    let c = watched_campaign();
    let p = panel_of(&c).unwrap();
    let charts: Vec<&LineChart> = p
        .blocks
        .iter()
        .filter_map(|b| match b {
            Block::Chart(Chart::Line(c)) => Some(c),
            _ => None,
        })
        .collect();
    // Per target: throughput (workload and device), CPU, dirty memory.
    assert_eq!(charts.len(), 6);
    let labels: Vec<&str> = charts[0].lines.iter().map(|l| l.label.as_str()).collect();
    assert_eq!(
        labels,
        ["loop0 read"],
        "the workload's two samples are no course over time: in the table, not drawn"
    );
    assert_eq!(charts[1].title, "w on a, run 1: CPU of storlab");
    assert_eq!(charts[2].lines.len(), 1, "writeback stayed at zero");
    let over = tables(&p)[3];
    assert_eq!(
        over.header,
        [
            "t (s)",
            "workload (MiB/s)",
            "loop0 read (MiB/s)",
            "storlab (% of one core)",
            "dirty (MiB)"
        ]
    );
    let rows: Vec<Vec<&str>> = over
        .rows
        .iter()
        .map(|r| r.iter().map(String::as_str).collect())
        .collect();
    assert_eq!(
        rows,
        [
            vec!["1.0", "100.0", "90.0", "10.0", "2.0"],
            vec!["2.0", "110.0", "95.0", "12.0", "3.0"],
            vec!["3.0", "", "1.0", "30.0", "0.0"],
        ]
    );
}

#[test]
fn the_runs_warnings_are_listed_with_their_run() {
    let mut c = watched_campaign();
    let p = panel_of(&c).unwrap();
    assert!(texts(&p)
        .last()
        .unwrap()
        .starts_with("The validity checks found nothing"));
    c.runs[2].warnings = vec![Warning::new(
        WarningKind::PageCache,
        "page cache: the device delivered 0 B",
    )];
    let p = panel_of(&c).unwrap();
    assert_eq!(
        p.blocks.last(),
        Some(&Block::List(vec![
            "run 3 (a, rep 3): page cache: the device delivered 0 B".into()
        ]))
    );
}

#[test]
fn markdown_leaves_the_charts_out_and_html_draws_them() {
    let p = panel_of(&watched_campaign()).unwrap();
    let doc = crate::report::document::Document {
        title: "t".into(),
        summary: Vec::new(),
        body: vec![p],
        warnings: Vec::new(),
    };
    let md = render::markdown::render(&doc).unwrap();
    assert!(md.contains("### What the system did"), "{md}");
    assert!(!md.contains("<svg"));
    assert!(md.contains("| loop0 read (MiB/s) |"));
    let html = render::html::render(&doc).unwrap();
    assert_eq!(html.matches("<svg").count(), 6);
}
