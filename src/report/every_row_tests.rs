//! The report's figures as aggregated per pair ([`CampaignData::column`],
//! the merged latency curves, the caveat counts, a history read one figure
//! per run) against the same figures computed here from every row of a
//! campaign written to a real store: a swept workload (two variants), two
//! targets, a warm-up run and a failed run per pair whose figures are far
//! off (counting either would move every mean), latency histograms and
//! warnings. Equal to the last digit: `==` on every f64.

use crate::analysis::latency::{curves, CURVE_PERCENTILES};
use crate::analysis::{chosen, history, model};
use crate::experiment::parse::parse_experiment;
use crate::measure::latency::new_histogram;
use crate::measure::{Hist, RunOutput, Series};
use crate::metric::catalogue::{self as m, LAT};
use crate::metric::labels::DEVICE;
use crate::metric::{Labels, MetricKey};
use crate::report::contrib::telemetry;
use crate::report::format::format_value;
use crate::stats::summary::mean;
use crate::stats::{compare_runs, mean_ci, summarize, RoundValue};
use crate::store::write::RunRecord;
use crate::store::{CampaignData, Parts, RunData, Store};
use crate::warning::{Warning, WarningKind};

const EXPERIMENT: &str = r#"name = "every-row"
[plan]
repetitions = 4
warmup = 1
[[target]]
name = "a"
kind = "dir"
path = "/tmp"
[[target]]
name = "b"
kind = "dir"
path = "/tmp"
[[workload]]
name = "w"
kind = "mock"
sweep = { value = [1000, 2000] }
"#;

/// A deterministic spread of values: the `i`-th of a pair.
fn wobble(i: u32) -> f64 {
    [0.97, 1.04, 0.99, 1.06, 1.01, 0.95][i as usize % 6]
}

/// Writes the campaign: per pair a warm-up, four measured rounds, and a
/// failed run; figures, a latency histogram, warnings of two kinds.
fn written(store: &mut Store) -> i64 {
    let exp = parse_experiment("every-row.toml", EXPERIMENT).unwrap();
    let ids = store
        .begin_campaign(&exp, &serde_json::json!({}), 24)
        .unwrap();
    let mut position = 0;
    for round in 0..=5u32 {
        for (wi, &workload) in ids.workloads.iter().enumerate() {
            for (ti, &target) in ids.targets.iter().enumerate() {
                let (warmup, failed) = (round == 0, round == 5);
                let base = 1000.0 * (wi as f64 + 1.0) * (1.0 + 0.1 * ti as f64);
                let value = match warmup || failed {
                    true => base * 1000.0,
                    false => base * wobble(round + 3 * ti as u32 + wi as u32),
                };
                let mut hist = new_histogram();
                for k in 1..=50u64 {
                    hist.record(k * (value as u64) + u64::from(round)).unwrap();
                }
                let mut warnings = vec![Warning::note(format!("run of round {round}"))];
                if (round + ti as u32) % 2 == 0 {
                    warnings.push(Warning::new(WarningKind::NoisyHost, "noisy host: 80%"));
                }
                let k = f64::from(round);
                let mut metrics = vec![
                    m::OPS_PER_S.value(value),
                    m::CPU_BUSY_PCT.value(10.0 + f64::from(round) + ti as f64),
                ];
                // Target b's first measured run recorded no telemetry: its
                // course is drawn from its second.
                if !(ti == 1 && round == 1) {
                    metrics.push(m::TELEMETRY_CPU_PCT.value(0.1));
                    // The device under the target is sda in even rounds
                    // and sdb in odd ones: runs that follow each other
                    // record as many device figures, of other keys.
                    let device = Labels::new().with(&DEVICE, ["sda", "sdb"][round as usize % 2]);
                    metrics.push(m::DEV_READ_BYTES.labelled(device.clone(), value * 3.0));
                    metrics.push(m::DEV_UTIL_PCT.labelled(device, 20.0 + k + ti as f64));
                }
                let series = vec![
                    Series::new(&m::OPS_PER_S, 1.0, vec![value, value * 1.1, value + k]),
                    Series::new(&m::MEM_DIRTY_BYTES, 1.0, vec![1e6, 2e6 + k, 3e6]),
                ];
                let out = RunOutput {
                    metrics,
                    series,
                    histograms: vec![Hist {
                        def: &LAT,
                        labels: Default::default(),
                        hist,
                    }],
                    warnings,
                    facts: Vec::new(),
                };
                let r = RunRecord {
                    campaign: ids.campaign,
                    target,
                    workload,
                    repetition: round.max(1),
                    round: round.max(1),
                    position,
                    warmup,
                    status: if failed { "failed" } else { "ok" },
                    error: failed.then(|| "disk full".to_string()),
                    started_at: String::new(),
                    duration_s: 1.0,
                    caches_dropped: true,
                    remounted: false,
                    ranks: 1,
                };
                store.record_run(&r, Some(&out)).unwrap();
                position += 1;
            }
        }
    }
    store.finish_campaign(ids.campaign, "finished").unwrap();
    ids.campaign
}

/// Every row of pair (`w`, `t`) that is measured: ok and not warm-up.
fn every_row<'a>(c: &'a CampaignData, w: &str, t: &str) -> Vec<&'a RunData> {
    c.runs
        .iter()
        .filter(|r| r.workload == w && r.target == t && !r.warmup && r.status == "ok")
        .collect()
}

fn rounds(runs: &[&RunData], key: &MetricKey) -> Vec<RoundValue> {
    runs.iter()
        .filter_map(|r| {
            r.metrics.get(key).map(|v| RoundValue {
                round: r.round,
                value: v.value,
            })
        })
        .collect()
}

fn campaign() -> (tempfile::TempDir, CampaignData) {
    let dir = tempfile::tempdir().unwrap();
    let mut store = Store::open(&dir.path().join("s.db")).unwrap();
    let id = written(&mut store);
    let c = store.load_campaign(id).unwrap();
    (dir, c)
}

#[test]
fn the_models_figures_are_those_of_every_row() {
    let (_dir, c) = campaign();
    assert_eq!(c.workloads.len(), 2, "the sweep's two variants");
    let report = model::build(&c, None, &chosen::choose).unwrap();
    let mut checked = 0;
    for w in &report.workloads {
        for metric in &w.metrics {
            let base = rounds(&every_row(&c, &w.name, "a"), &metric.key);
            for t in &metric.targets {
                let rows = every_row(&c, &w.name, &t.target);
                assert_eq!(rows.len(), 4, "warm-up and failed runs left out");
                let values: Vec<f64> = rounds(&rows, &metric.key).iter().map(|r| r.value).collect();
                assert_eq!(t.values, values, "{} {} {}", w.name, t.target, metric.name);
                // The warm-up's and the failed run's figures are far off:
                // an aggregate that counted either would not be this one.
                let every_run: Vec<f64> = c
                    .runs
                    .iter()
                    .filter(|r| r.workload == w.name && r.target == t.target)
                    .filter_map(|r| r.metrics.get(&metric.key).map(|v| v.value))
                    .collect();
                if metric.key.name == m::OPS_PER_S.name {
                    assert_eq!(every_run.len(), 6);
                    assert!(
                        summarize(&every_run).unwrap().mean
                            > 2.0 * summarize(&values).unwrap().mean
                    );
                }
                let (s, every) = (t.summary.unwrap(), summarize(&values).unwrap());
                assert_eq!((s.n, s.mean, s.stddev), (every.n, every.mean, every.stddev));
                assert_eq!(
                    (s.median, s.min, s.max),
                    (every.median, every.min, every.max)
                );
                let ci = mean_ci(&values, model::LEVEL).unwrap();
                assert_eq!(t.ci.map(|i| (i.low, i.high)), Some((ci.low, ci.high)));
                if t.target != "a" {
                    let cmp = compare_runs(
                        &base,
                        &rounds(&rows, &metric.key),
                        model::design(&c),
                        metric.analysis,
                        model::LEVEL,
                    )
                    .unwrap();
                    let got = t.comparison.unwrap();
                    assert_eq!(
                        (got.diff_pct, got.p_value, got.n),
                        (cmp.diff_pct, cmp.p_value, cmp.n)
                    );
                }
                // Caveats: runs of the pair (and the baseline's) warned of
                // a noisy host, counted from every row.
                let noisy = rows
                    .iter()
                    .filter(|r| r.warnings.iter().any(|x| x.kind == WarningKind::NoisyHost))
                    .count();
                let mine = t.caveats.iter().find(|k| k.target == t.target).unwrap();
                assert_eq!(
                    (mine.kind, mine.runs, mine.of),
                    (WarningKind::NoisyHost, noisy, 4)
                );
                checked += 1;
            }
        }
    }
    assert!(checked >= 4, "{checked} pairs and metrics checked");
    // The failed runs are counted per pair from every row.
    for w in &c.workloads {
        for t in &c.targets {
            let failed = c
                .runs
                .iter()
                .filter(|r| r.workload == w.name && r.target == t.name && r.status == "failed")
                .count();
            let per_pair = c
                .runs_of(&w.name, &t.name)
                .filter(|r| r.status == "failed")
                .count();
            assert_eq!((per_pair, failed), (1, 1));
        }
    }
}

// The telemetry section's devices table: per target and device, the mean
// of each figure over every measured row that recorded telemetry (the
// device changes from run to run, the number of figures does not).
#[test]
fn the_devices_table_is_the_mean_of_every_watched_row() {
    let (_dir, c) = campaign();
    let targets: Vec<String> = c.targets.iter().map(|t| t.name.clone()).collect();
    let mut checked = 0;
    for w in &c.workloads {
        let table = telemetry::devices_table(&telemetry::watched(&c, &w.name), &targets);
        assert_eq!(table.rows.len(), 4, "two devices on each target");
        for t in &targets {
            let watched: Vec<&RunData> = every_row(&c, &w.name, t)
                .into_iter()
                .filter(|r| r.metric(&m::TELEMETRY_CPU_PCT).is_some())
                .collect();
            for device in ["sda", "sdb"] {
                let row = table
                    .rows
                    .iter()
                    .find(|r| &r[0] == t && r[1] == device)
                    .unwrap();
                let mut expected = vec![t.clone(), device.to_string()];
                for (def, _) in telemetry::DEVICE_COLUMNS {
                    let key = MetricKey::new(def.name, Labels::new().with(&DEVICE, device));
                    let values: Vec<f64> = watched
                        .iter()
                        .filter_map(|r| r.metrics.get(&key).map(|v| v.value))
                        .collect();
                    expected.push(if values.is_empty() {
                        "—".into()
                    } else {
                        format_value(mean(&values), def.unit)
                    });
                }
                assert_eq!(row, &expected, "{} on {t}", w.name);
                assert!(row.iter().filter(|x| *x != "—").count() == 4, "{row:?}");
                checked += 1;
            }
        }
    }
    assert_eq!(checked, 8);
}

#[test]
fn merged_latency_curves_are_those_of_every_rows_histogram() {
    let (_dir, c) = campaign();
    let drawn = curves(&c).unwrap();
    assert_eq!(drawn.len(), 4, "one curve per variant and target");
    for curve in &drawn {
        let mut every = new_histogram();
        for r in every_row(&c, &curve.workload, &curve.target) {
            let h = r.histograms.get(&MetricKey::plain(LAT.name)).unwrap();
            every.add(h.decode().unwrap()).unwrap();
        }
        let mut points: Vec<(f64, f64)> = CURVE_PERCENTILES
            .iter()
            .map(|&p| (p, every.value_at_percentile(p) as f64))
            .collect();
        points.push((100.0, every.max() as f64));
        assert_eq!(
            curve.points, points,
            "{} on {}",
            curve.workload, curve.target
        );
        assert_eq!(curve.count, 4 * 50);
    }
}

#[test]
fn a_history_read_one_figure_per_run_is_the_history_read_whole() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = Store::open(&dir.path().join("s.db")).unwrap();
    let ids = [written(&mut store), written(&mut store)];
    let whole: Vec<CampaignData> = ids
        .iter()
        .map(|&i| store.load_campaign(i).unwrap())
        .collect();
    let parts = Parts::figures(&["ops_per_s".to_string()]);
    let light: Vec<CampaignData> = ids
        .iter()
        .map(|&i| store.load_campaign_with(i, &parts).unwrap())
        .collect();
    assert!(light
        .iter()
        .flat_map(|c| &c.runs)
        .all(|r| r.metrics.len() <= 1 && r.warnings.is_empty() && r.histograms.is_empty()));
    let json = |cs: Vec<CampaignData>| {
        let h = history::build(cs, history::Order::Date, &[]).unwrap();
        serde_json::to_string(&h).unwrap()
    };
    let (a, b) = (json(whole), json(light));
    assert!(a.contains("ops_per_s"), "{a}");
    assert_eq!(a, b);
}

// One report model: what `show` and `run` print (the summary, read without
// the series) is the report's own summary, word for word.
#[test]
fn the_terminals_document_is_the_reports_summary() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = Store::open(&dir.path().join("s.db")).unwrap();
    let id = written(&mut store);
    let options = crate::report::outline::Options::default();
    let whole = store.load_campaign(id).unwrap();
    let report = crate::report::outline::build(&whole, &options).unwrap();
    let light = store.load_campaign_with(id, &Parts::terminal()).unwrap();
    let terminal = crate::report::outline::terminal(&light, &options).unwrap();
    assert!(!report.body.is_empty() && terminal.body.is_empty());
    assert_eq!(terminal.title, report.title);
    assert_eq!(terminal.summary, report.summary);
    assert_eq!(terminal.warnings, report.warnings);
}

// The report reads the series of the runs it draws only (`drawn`): its
// HTML is the report of the campaign read whole, byte for byte.
#[test]
fn a_report_reading_only_the_series_it_draws_is_the_report_read_whole() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = Store::open(&dir.path().join("s.db")).unwrap();
    let id = written(&mut store);
    let options = crate::report::outline::Options::default();
    let whole = store.load_campaign(id).unwrap();
    let mut light = store.load_campaign_with(id, &Parts::terminal()).unwrap();
    let drawn = crate::report::drawn::drawn(&light, &options);
    store.read_series(&mut light, &drawn).unwrap();
    let count = |c: &CampaignData| c.runs.iter().map(|r| r.series.len()).sum::<usize>();
    // Every run's ops_per_s ("Over time"); the dirty pages of each of the
    // 4 pairs' first measured run (the latency attribution's) and, on
    // target b, of its first watched run (its second), of no other run.
    assert_eq!(count(&whole), 2 * 24);
    assert_eq!(count(&light), 24 + 4 + 2);
    let html = |c: &CampaignData| {
        let doc = crate::report::outline::build(c, &options).unwrap();
        crate::report::render::html::render(&doc).unwrap()
    };
    let (a, b) = (html(&whole), html(&light));
    assert!(a.contains("Over time") && a.contains("dirty"), "{a}");
    assert_eq!(a, b);
}
