//! A campaign written to a real store for the tests that check the
//! analysis (and the report) against every row: a swept workload (two
//! variants), two targets, a warm-up run and a failed run per pair whose
//! figures are far off, latency histograms and warnings.

use crate::experiment::parse::parse_experiment;
use crate::measure::latency::new_histogram;
use crate::measure::{Hist, RunOutput, Series};
use crate::metric::catalogue::{self as m, LAT};
use crate::metric::labels::{DEVICE, LAYER};
use crate::metric::layer::Layer;
use crate::metric::Labels;
use crate::store::write::RunRecord;
use crate::store::{CampaignData, Drawn, Parts, Store};
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

/// The labels of a layer's figures.
fn layer(l: Layer) -> Labels {
    Labels::new().with(&LAYER, l.name())
}

/// A deterministic spread of values: the `i`-th of a pair.
fn wobble(i: u32) -> f64 {
    [0.97, 1.04, 0.99, 1.06, 1.01, 0.95][i as usize % 6]
}

/// Writes the campaign: per pair a warm-up, four measured rounds, and a
/// failed run; figures, a latency histogram, warnings of two kinds.
pub fn written(store: &mut Store) -> i64 {
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
                    // What the summary's sections read of a run: the
                    // noisy host's evidence, the pair's p99, where the
                    // reads came from.
                    m::CPU_OTHERS_PCT.value(30.0 + 2.0 * k + ti as f64),
                    m::LAT_P99_NS.value(1e6 / value),
                    m::LAYER_READ_BYTES.labelled(layer(Layer::Workload), value * 4096.0),
                    m::LAYER_READ_BYTES.labelled(layer(Layer::Device), value * 1024.0 * (1.0 + k)),
                    m::LAYER_SERVED_BYTES.labelled(layer(Layer::PageCache), value * 3072.0),
                    m::LAYER_SERVED_BYTES
                        .labelled(layer(Layer::Device), value * 1024.0 * (1.0 + k)),
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

/// The campaign, read whole.
pub fn campaign() -> (tempfile::TempDir, CampaignData) {
    let dir = tempfile::tempdir().unwrap();
    let mut store = Store::open(&dir.path().join("s.db")).unwrap();
    let id = written(&mut store);
    let c = store.load_campaign(id).unwrap();
    (dir, c)
}

/// The campaign read as `show` reads it (no series), and read whole.
pub fn terminal_and_whole() -> (tempfile::TempDir, CampaignData, CampaignData) {
    let dir = tempfile::tempdir().unwrap();
    let mut store = Store::open(&dir.path().join("s.db")).unwrap();
    let id = written(&mut store);
    let whole = store.load_campaign(id).unwrap();
    let light = store.load_campaign_with(id, &Parts::terminal()).unwrap();
    (dir, whole, light)
}

/// The campaign written to a store in a directory of its own: the
/// directory, and the campaign read whole.
pub fn stored() -> (tempfile::TempDir, CampaignData) {
    campaign()
}

/// Campaign `id` of the store in `dir` ([`stored`]) read as `report`
/// reads it: the parts of its runs `parts` says (the figures its sections
/// declare in the runs, the telemetry's per pair), then the series
/// `follow` names. With `without_index_by_key`, the store has first lost
/// its index of the figures by key (a store read only, never given it).
pub fn read_as(
    dir: &tempfile::TempDir,
    id: i64,
    without_index_by_key: bool,
    parts: impl Fn(&CampaignData) -> Parts,
    follow: impl Fn(&CampaignData) -> Drawn,
) -> CampaignData {
    let path = dir.path().join("s.db");
    if without_index_by_key {
        let conn = rusqlite::Connection::open(&path).unwrap();
        let index = crate::store::FIGURES_BY_KEY;
        conn.execute_batch(&format!("DROP INDEX IF EXISTS {index}"))
            .unwrap();
    }
    let store = Store::open_for_reading(&path).unwrap();
    let head = store.load_campaign_head(id).unwrap();
    let parts = parts(&head);
    let mut light = store.with_runs(head, &parts).unwrap();
    let drawn = follow(&light);
    store.read_series(&mut light, &drawn).unwrap();
    light
}

/// The campaign read as `report` reads it (the series `follow` names
/// only: the analysis' choice), and read whole.
pub fn drawn_and_whole(
    follow: impl Fn(&CampaignData) -> Drawn,
) -> (tempfile::TempDir, CampaignData, CampaignData) {
    let dir = tempfile::tempdir().unwrap();
    let mut store = Store::open(&dir.path().join("s.db")).unwrap();
    let id = written(&mut store);
    let whole = store.load_campaign(id).unwrap();
    let mut light = store.load_campaign_with(id, &Parts::terminal()).unwrap();
    let drawn = follow(&light);
    store.read_series(&mut light, &drawn).unwrap();
    (dir, whole, light)
}
