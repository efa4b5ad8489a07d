//! The analysis' figures as aggregated per pair ([`CampaignData::column`],
//! the merged latency curves, the caveat counts, the devices' means, a
//! history read one figure per run) against the same figures computed
//! here from every row of a campaign written to a real store
//! ([`crate::testdata::every_row`]): a swept workload (two variants), two
//! targets, a warm-up run and a failed run per pair whose figures are far
//! off (counting either would move every mean), latency histograms and
//! warnings. Equal to the last digit: `==` on every f64.

use crate::analysis::analyse;
use crate::analysis::campaign::judge;
use crate::analysis::latency::{curves, CURVE_PERCENTILES};
use crate::analysis::{history, model, telemetry};
use crate::metric::catalogue::{self as m, LAT};
use crate::metric::histogram::new_histogram;
use crate::metric::labels::DEVICE;
use crate::metric::{Labels, MetricKey};
use crate::stats::summary::mean;
use crate::stats::{compare_runs, mean_ci, summarize, RoundValue};
use crate::store::{CampaignData, Parts, RunData, Store};
use crate::testdata::every_row::{campaign, written};
use crate::warning::WarningKind;

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

#[test]
fn the_models_figures_are_those_of_every_row() {
    let (_dir, c) = campaign();
    assert_eq!(c.workloads.len(), 2, "the sweep's two variants");
    let report = judge(&c, None).unwrap().model;
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

// The telemetry's devices: per target and device, the mean of each
// figure over every measured row that recorded telemetry (the device
// changes from run to run, the number of figures does not).
#[test]
fn the_devices_means_are_those_of_every_watched_row() {
    let (_dir, c) = campaign();
    let targets: Vec<String> = c.targets.iter().map(|t| t.name.clone()).collect();
    let mut checked = 0;
    for w in &c.workloads {
        let devices =
            telemetry::devices(&c, &w.name, &telemetry::watched_runs(&c, &w.name), &targets);
        assert_eq!(devices.len(), 4, "two devices on each target");
        for t in &targets {
            let watched: Vec<&RunData> = every_row(&c, &w.name, t)
                .into_iter()
                .filter(|r| r.metric(&m::TELEMETRY_CPU_PCT).is_some())
                .collect();
            for device in ["sda", "sdb"] {
                let row = devices
                    .iter()
                    .find(|d| &d.target == t && d.device == device)
                    .unwrap();
                let expected: Vec<Option<f64>> = telemetry::DEVICE_COLUMNS
                    .iter()
                    .map(|(def, _)| {
                        let key = MetricKey::new(def.name, Labels::new().with(&DEVICE, device));
                        let values: Vec<f64> = watched
                            .iter()
                            .filter_map(|r| r.metrics.get(&key).map(|v| v.value))
                            .collect();
                        (!values.is_empty()).then(|| mean(&values))
                    })
                    .collect();
                assert_eq!(row.means, expected, "{} on {t}", w.name);
                assert_eq!(row.means.iter().flatten().count(), 2, "{row:?}");
                checked += 1;
            }
        }
    }
    assert_eq!(checked, 8);
}

#[test]
fn merged_latency_curves_are_those_of_every_rows_histogram() {
    let (_dir, c) = campaign();
    let drawn = curves(&c, |_| true).unwrap();
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

// `show` and `run`'s closing summary read of each run only the figures
// the analysis' sections declare (`super::figures`): the analysis is the
// one of the campaign read whole (but for the series, which the summary
// does not read), to the last field, so what they print is too. A
// section reading a figure it did not declare sees it as not recorded,
// and changes the analysis here.
#[test]
fn the_summary_read_with_the_figures_its_sections_declare_is_the_summary_read_whole() {
    let (dir, _, whole) = crate::testdata::every_row::terminal_and_whole();
    let store = Store::open_for_reading(&dir.path().join("s.db")).unwrap();
    let options = super::campaign::Options {
        summary_only: true,
        ..Default::default()
    };
    let head = store.load_campaign_head(whole.campaign.id).unwrap();
    let parts = super::figures::parts(&head, &options);
    let light = store.with_runs(head, &parts).unwrap();
    let figures = |c: &CampaignData| -> usize { c.runs.iter().map(|r| r.metrics.len()).sum() };
    assert!(
        figures(&light) < figures(&whole),
        "{} of {} figures",
        figures(&light),
        figures(&whole)
    );
    // `compare` within the campaign reads its runs so too.
    let within = |c: &CampaignData| format!("{:?}", super::comparison::within(c, None).unwrap());
    assert_eq!(within(&whole), within(&light));
    let (whole, light) = (
        analyse(&whole, &options).unwrap(),
        analyse(&light, &options).unwrap(),
    );
    // The sections that read the figures found them.
    assert!(whole.by_kind.iter().any(|k| !k.evidence.is_empty()));
    assert!(whole.pairs.iter().all(|p| p.p99_ns.is_some()));
    assert!(format!("{:?}", whole.reads).contains("PageCache"));
    assert_eq!(format!("{whole:?}"), format!("{light:?}"));
}
