//! The store's round trip of labelled figures, the primary metric that
//! resuming reads, and the v3 → v4 migration of a store written by hand in
//! the v3 layout.

use super::write::RunRecord;
use super::Store;
use crate::experiment::parse::parse_experiment;
use crate::measure::latency::new_histogram;
use crate::measure::{Hist, RunOutput, Series};
use crate::metric::catalogue::{self as m, LAT};
use crate::metric::labels::{OP, TEST};
use crate::metric::{Labels, MetricKey, Unit};

const EXPERIMENT: &str = "name = \"s\"\n[[target]]\nname = \"t\"\nkind = \"dir\"\npath = \"/tmp\"\n[[workload]]\nname = \"w\"\nkind = \"matrix\"\n";

fn record(ids: &super::write::CampaignIds) -> RunRecord {
    RunRecord {
        campaign: ids.campaign,
        target: ids.targets[0],
        workload: ids.workloads[0],
        repetition: 1,
        round: 1,
        position: 0,
        warmup: false,
        status: "ok",
        error: None,
        started_at: String::new(),
        duration_s: 1.0,
        caches_dropped: false,
        remounted: false,
        ranks: 1,
    }
}

#[test]
fn labelled_figures_come_back_with_their_labels_and_the_primary_without() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = Store::open(&dir.path().join("s.db")).unwrap();
    let exp = parse_experiment("s.toml", EXPERIMENT).unwrap();
    let ids = store
        .begin_campaign(&exp, &serde_json::json!({}), 1)
        .unwrap();
    let write = Labels::new().with(&TEST, "write");
    let create = Labels::new().with(&OP, "create");
    let mut hist = new_histogram();
    hist.record(1500).unwrap();
    let out = RunOutput {
        metrics: vec![
            m::GEOMEAN_BW_BYTES_PER_S.labelled(write.clone(), 5.0),
            m::GEOMEAN_BW_BYTES_PER_S.value(7.0),
            m::GEOMEAN_BW_BYTES_PER_S.labelled(Labels::new().with(&TEST, "read"), 9.0),
        ],
        series: vec![Series {
            def: &m::OPS_PER_S,
            labels: create.clone(),
            interval_s: 1.0,
            values: vec![1.0, f64::NAN],
        }],
        histograms: vec![Hist {
            def: &LAT,
            labels: create.clone(),
            hist: hist.clone(),
        }],
        warnings: Vec::new(),
        facts: vec![("pg_server_version".into(), "15.18".into())],
    };
    store.record_run(&record(&ids), Some(&out)).unwrap();
    let done = store.done_runs(ids.campaign).unwrap();
    assert_eq!(done.len(), 1, "one row per run, whatever the labels");
    assert_eq!(
        done[0].primary,
        Some(7.0),
        "the primary is the unlabelled value"
    );
    let c = store.load_campaign(ids.campaign).unwrap();
    let run = &c.runs[0];
    assert_eq!(&run.facts["pg_server_version"], "15.18");
    let key = MetricKey::new("geomean_bw_bytes_per_s", write);
    assert_eq!(run.metrics[&key].value, 5.0);
    assert_eq!(run.metrics[&key].unit, Unit::BytesPerSec);
    assert_eq!(run.metric(&m::GEOMEAN_BW_BYTES_PER_S).unwrap().value, 7.0);
    let series = &run.series[&MetricKey::new("ops_per_s", create.clone())];
    assert_eq!(series.values[0], 1.0);
    assert!(series.values[1].is_nan());
    let stored = &run.histograms[&MetricKey::new("lat", create)];
    assert_eq!(stored.count, 1);
    assert_eq!(stored.decode().unwrap(), hist);
}

/// The v3 layout's tables, as storlab at schema version 3 made them.
fn v3_store(path: &std::path::Path) -> rusqlite::Connection {
    let conn = rusqlite::Connection::open(path).unwrap();
    conn.execute_batch(super::schema::V1).unwrap();
    conn.execute_batch(super::schema::V2).unwrap();
    conn.execute_batch(super::schema::V3).unwrap();
    conn.execute_batch(
        "INSERT INTO meta VALUES ('schema_version', '3');
         INSERT INTO campaigns VALUES (1, 'c', '', 'x.toml', 'finished', '', NULL, '0', 1, '', '{}', '{}');
         INSERT INTO targets VALUES (1, 1, 0, 't', 'dir', 1, '{}', '{}');
         INSERT INTO workloads VALUES (1, 1, 0, 'm', 'matrix', 'geomean_bw_bytes_per_s', '{}');
         INSERT INTO workloads VALUES (2, 1, 1, 's', 'smallfiles', 'ops_per_s', '{}');
         INSERT INTO runs (id, campaign_id, target_id, workload_id, repetition, round, position, warmup, status, started_at, duration_s, caches_dropped, remounted, ranks)
             VALUES (1, 1, 1, 1, 1, 1, 0, 0, 'ok', '', 1.0, 0, 0, 2), (2, 1, 1, 2, 1, 1, 1, 0, 'ok', '', 1.0, 0, 0, 1);
         INSERT INTO metrics VALUES (1, 'write_64k_4k_bw_bytes_per_s', 1.5, 'bytes/s', 'higher');
         INSERT INTO metrics VALUES (1, 'geomean_bw_bytes_per_s', 2.5, 'bytes/s', 'higher');
         INSERT INTO metrics VALUES (2, 'read_lat_p99_ns', 3.5, 'ns', 'lower');
         INSERT INTO histograms VALUES (2, 'read_lat', 'ns', 0, x'00');
         INSERT INTO run_ranks VALUES (1, 0, 'h', 'ok', NULL, 1.0);
         INSERT INTO rank_metrics VALUES (1, 0, 'write_geomean_bw_bytes_per_s', 4.5, 'bytes/s', 'higher');",
    )
    .unwrap();
    conn
}

#[test]
fn a_v3_store_migrates_its_names_into_names_and_labels() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("v3.db");
    drop(v3_store(&path));
    let store = Store::open(&path).unwrap();
    let c = store.load_campaign(1).unwrap();
    let cell = Labels::new()
        .with(&TEST, "write")
        .with(&crate::metric::labels::FILE_SIZE, 65536)
        .with(&crate::metric::labels::RECORD_SIZE, 4096);
    let matrix = &c.runs[0];
    assert_eq!(
        matrix.metrics[&MetricKey::new("bw_bytes_per_s", cell)].value,
        1.5
    );
    assert_eq!(
        matrix.metric(&m::GEOMEAN_BW_BYTES_PER_S).unwrap().value,
        2.5
    );
    let rank = &matrix.per_rank[0].metrics;
    let write = MetricKey::new("geomean_bw_bytes_per_s", Labels::new().with(&TEST, "write"));
    assert_eq!(rank[&write].value, 4.5);
    let read = Labels::new().with(&OP, "read");
    let smallfiles = &c.runs[1];
    assert_eq!(
        smallfiles.metrics[&MetricKey::new("lat_p99_ns", read.clone())].value,
        3.5
    );
    assert!(smallfiles
        .histograms
        .contains_key(&MetricKey::new("lat", read)));
    let version: String = store
        .conn
        .query_row(
            "SELECT value FROM meta WHERE key = 'schema_version'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(version, super::schema::SCHEMA_VERSION.to_string());
    drop(store);
    assert!(
        Store::open(&path).is_ok(),
        "a migrated store opens as it is"
    );
}

/// A store in a temporary directory with a campaign of `runs` planned runs
/// of [`EXPERIMENT`] begun.
fn begun(runs: usize) -> (tempfile::TempDir, Store, super::write::CampaignIds) {
    let dir = tempfile::tempdir().unwrap();
    let mut store = Store::open(&dir.path().join("s.db")).unwrap();
    let exp = parse_experiment("s.toml", EXPERIMENT).unwrap();
    let ids = store
        .begin_campaign(&exp, &serde_json::json!({}), runs)
        .unwrap();
    (dir, store, ids)
}

/// Two ranks of `status`, each with a geometric-mean bandwidth of 3.5.
fn two_ranks(status: &str) -> Vec<super::write::RankRow> {
    (0..2)
        .map(|rank| super::write::RankRow {
            rank,
            host: "h".into(),
            status: status.into(),
            error: None,
            done_s: Some(1.0),
            metrics: vec![m::GEOMEAN_BW_BYTES_PER_S.value(3.5)],
        })
        .collect()
}

#[test]
fn reopening_removes_an_interrupted_multi_rank_run_with_its_ranks_metrics() {
    let (_dir, mut store, ids) = begun(2);
    let mut r = record(&ids);
    r.status = "interrupted";
    r.ranks = 2;
    let out = RunOutput {
        metrics: vec![m::GEOMEAN_BW_BYTES_PER_S.value(7.0)],
        ..Default::default()
    };
    store
        .record_run_ranks(&r, Some(&out), &two_ranks("interrupted"))
        .unwrap();
    // rank_metrics refer to run_ranks: deleting the rank rows first failed
    // on a foreign key, and a resumed MPI campaign with them.
    assert_eq!(store.reopen_campaign(ids.campaign).unwrap(), 1);
    assert!(store.done_runs(ids.campaign).unwrap().is_empty());
    let left: i64 = store
        .conn
        .query_row(
            "SELECT (SELECT count(*) FROM run_ranks) + (SELECT count(*) FROM rank_metrics)",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(left, 0);
}

/// A campaign with sweeps (a swept workload on two targets), warm-ups and
/// failed runs, every run with figures with and without labels, a series
/// with a gap, a histogram, warnings (one text repeated over runs) and a
/// fact. What the store reads back — through its per-campaign dictionary
/// of keys and texts — is every row written, bit for bit (so the analysis
/// computes from it what it would from the values written; the store's
/// tests do not call the analysis, which sits above the store).
#[test]
fn a_campaign_reads_back_every_row_written_and_the_same_figures() {
    use crate::experiment::sweep;
    use crate::metric::labels::DEVICE;
    use crate::warning::{Warning, WarningKind};
    const SWEPT: &str = "name = \"s\"\n[plan]\nwarmup = 1\nrepetitions = 4\n\
        [[target]]\nname = \"t\"\nkind = \"dir\"\npath = \"/tmp\"\n\
        [[target]]\nname = \"u\"\nkind = \"dir\"\npath = \"/tmp\"\n\
        [[workload]]\nname = \"m\"\nkind = \"mock\"\nsweep = { value = [10, 20] }\n";
    let dir = tempfile::tempdir().unwrap();
    let mut store = Store::open(&dir.path().join("s.db")).unwrap();
    let exp = parse_experiment("s.toml", SWEPT).unwrap();
    assert_eq!(exp.workloads.len(), 2, "the sweep makes two variants");
    let ids = store
        .begin_campaign(&exp, &serde_json::json!({}), 20)
        .unwrap();
    // (run id, what was written) of every run.
    let mut written: Vec<(i64, RunRecord, Option<RunOutput>)> = Vec::new();
    let mut position = 0;
    for rep in 0..=4u32 {
        for (w, wl) in exp.workloads.iter().enumerate() {
            for t in 0..2 {
                let factors = sweep::labels(&wl.factors);
                let value = 100.0 * (w + 1) as f64 + 0.1 * f64::from(rep) + 0.01 * t as f64;
                let mut hist = new_histogram();
                hist.record(1000 + u64::from(position)).unwrap();
                let mut out = RunOutput {
                    metrics: vec![
                        m::OPS_PER_S.value(value / 3.0),
                        m::DEV_READ_BYTES.value(f64::from(position)),
                        m::DEV_READ_BYTES.labelled(Labels::new().with(&DEVICE, "vda"), 0.1 + 0.2),
                    ],
                    series: vec![Series {
                        def: &m::OPS_PER_S,
                        labels: Labels::new(),
                        interval_s: 0.5,
                        values: vec![value, f64::NAN, -0.0],
                    }],
                    histograms: vec![Hist {
                        def: &LAT,
                        labels: Labels::new(),
                        hist,
                    }],
                    warnings: vec![
                        Warning::new(
                            WarningKind::NoisyHost,
                            "noisy host: the same text every run",
                        ),
                        Warning::new(WarningKind::Note, format!("note of run {position}")),
                    ],
                    facts: vec![("telemetry_devices".into(), "vda".into())],
                };
                out.add_labels(&factors);
                let mut r = record(&ids);
                (r.target, r.workload) = (ids.targets[t], ids.workloads[w]);
                (r.repetition, r.round, r.position) = (rep.max(1), rep + 1, position);
                r.warmup = rep == 0;
                let failed = rep == 2 && t == 1 && w == 0;
                if failed {
                    (r.status, r.error) = ("failed", Some("disk full".into()));
                }
                let out = (!failed).then_some(out);
                let id = store.record_run(&r, out.as_ref()).unwrap();
                written.push((id, r, out));
                position += 1;
            }
        }
    }
    let c = store.load_campaign(ids.campaign).unwrap();
    assert_eq!(c.runs.len(), written.len());
    // Read a chunk at a time (what an export streams), the same runs.
    let head = store.load_campaign_head(ids.campaign).unwrap();
    assert!(head.runs.is_empty());
    let all = format!("{:?}", c.runs);
    for size in [1, 3, 7, written.len(), written.len() + 5] {
        let mut chunks = Vec::new();
        store
            .each_run_chunk(&head, size, |runs| {
                assert!(!runs.is_empty() && runs.len() <= size);
                chunks.extend(runs.iter().cloned());
                Ok(())
            })
            .unwrap();
        assert_eq!(format!("{chunks:?}"), all, "chunks of {size}");
    }
    for (run, (id, r, out)) in c.runs.iter().zip(&written) {
        assert_eq!(
            (run.id, run.status.as_str(), &run.error),
            (*id, r.status, &r.error)
        );
        assert_eq!(
            (run.warmup, run.round, run.position),
            (r.warmup, r.round, r.position)
        );
        let Some(out) = out else {
            assert!(run.metrics.is_empty() && run.series.is_empty() && run.warnings.is_empty());
            continue;
        };
        assert_eq!(run.metrics.len(), out.metrics.len());
        for wm in &out.metrics {
            let (key, stored) = run
                .metrics
                .iter()
                .find(|(k, _)| k.name == wm.name() && run.labels_of(k) == wm.labels)
                .unwrap_or_else(|| panic!("{} {:?} of run {id}", wm.name(), wm.labels));
            assert_eq!(stored.value.to_bits(), wm.value.to_bits(), "{key}");
            assert_eq!((stored.unit, stored.direction), (wm.unit(), wm.direction()));
        }
        let (key, s) = run.series.iter().next().unwrap();
        assert_eq!(run.labels_of(key), out.series[0].labels);
        let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        assert_eq!(bits(&s.values), bits(&out.series[0].values));
        assert_eq!((s.interval_s, s.unit), (0.5, Unit::OpsPerSec));
        let h = run.histograms.values().next().unwrap();
        assert_eq!(h.decode().unwrap(), out.histograms[0].hist);
        assert_eq!(run.warnings, out.warnings, "in the order written");
        assert_eq!(run.facts.get("telemetry_devices"), Some("vda"));
    }
}

/// What each run repeats is stored once per campaign: two campaigns of the
/// same runs hold one dictionary entry per key and text each, and a run's
/// rows hold ids.
#[test]
fn repeated_names_and_texts_are_stored_once_per_campaign() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = Store::open(&dir.path().join("s.db")).unwrap();
    let exp = parse_experiment("s.toml", EXPERIMENT).unwrap();
    for _ in 0..2 {
        let ids = store
            .begin_campaign(&exp, &serde_json::json!({}), 50)
            .unwrap();
        for _ in 0..50 {
            let out = RunOutput {
                metrics: vec![m::OPS_PER_S.value(1.0), m::ELAPSED_S.value(2.0)],
                warnings: vec![crate::warning::Warning::new(
                    crate::warning::WarningKind::NoisyHost,
                    "noisy host: the same sentence",
                )],
                facts: vec![("telemetry_devices".into(), "vda".into())],
                ..Default::default()
            };
            store.record_run(&record(&ids), Some(&out)).unwrap();
        }
    }
    let count = |sql: &str| -> i64 { store.conn.query_row(sql, [], |r| r.get(0)).unwrap() };
    assert_eq!(count("SELECT COUNT(*) FROM metric_keys"), 4);
    assert_eq!(count("SELECT COUNT(*) FROM warning_texts"), 2);
    assert_eq!(count("SELECT COUNT(*) FROM fact_texts"), 2);
    assert_eq!(count("SELECT COUNT(*) FROM metric_values"), 200);
    assert_eq!(count("SELECT COUNT(*) FROM run_warnings"), 100);
    // The views of the old tables read the rows back by name.
    assert_eq!(
        count("SELECT COUNT(*) FROM metrics WHERE name = 'ops_per_s' AND labels = '{}' AND unit = 'ops/s'"),
        100
    );
    assert_eq!(
        count("SELECT COUNT(*) FROM warnings WHERE kind = 'noisy_host'"),
        100
    );
}

/// The figures a summary asks for are read along the index by key when
/// the store has it, and from every row of the runs when it lacks it (a
/// store a storlab before it wrote and this one could not index): the
/// same runs either way. A store opened for writing gains the index.
#[test]
fn figures_read_along_the_index_by_key_are_those_read_run_by_run() {
    use super::schema::{has_index, FIGURES_BY_KEY};
    let (dir, mut store, ids) = begun(6);
    // Another campaign's runs between this one's, with the same figures.
    let exp = parse_experiment("s.toml", EXPERIMENT).unwrap();
    let other = store
        .begin_campaign(&exp, &serde_json::json!({}), 3)
        .unwrap();
    let figures = |round: u32| RunOutput {
        metrics: vec![
            m::IOPS.value(100.0 + f64::from(round)),
            m::OPS_PER_S.value(7.0),
            m::GEOMEAN_BW_BYTES_PER_S
                .labelled(Labels::new().with(&TEST, "read"), 2.0 * f64::from(round)),
            m::GEOMEAN_BW_BYTES_PER_S.labelled(Labels::new().with(&TEST, "write"), 3.0),
        ],
        ..Default::default()
    };
    for round in 1..=3u32 {
        for c in [&ids, &other] {
            let mut r = record(c);
            r.round = round;
            store.record_run(&r, Some(&figures(round))).unwrap();
        }
    }
    let names: Vec<String> = [m::IOPS.name, m::GEOMEAN_BW_BYTES_PER_S.name]
        .map(String::from)
        .to_vec();
    let parts = super::Parts::figures(&names);
    let read = |store: &Store| {
        let head = store.load_campaign_head(ids.campaign).unwrap();
        store.with_runs(head, &parts).unwrap().runs
    };
    assert!(has_index(&store.conn, FIGURES_BY_KEY).unwrap());
    let by_key = read(&store);
    assert_eq!(by_key.len(), 3);
    for (run, round) in by_key.iter().zip(1..) {
        assert_eq!(run.metrics.len(), 3, "{:?}", run.metrics);
        assert_eq!(
            run.metric(&m::IOPS).map(|v| v.value),
            Some(100.0 + f64::from(round))
        );
        let read = MetricKey::new(
            m::GEOMEAN_BW_BYTES_PER_S.name,
            Labels::new().with(&TEST, "read"),
        );
        assert_eq!(
            run.metrics.get(&read).map(|v| v.value),
            Some(2.0 * f64::from(round))
        );
    }
    store
        .conn
        .execute_batch(&format!("DROP INDEX {FIGURES_BY_KEY}"))
        .unwrap();
    assert!(!has_index(&store.conn, FIGURES_BY_KEY).unwrap());
    let along = read(&store);
    assert_eq!(format!("{by_key:?}"), format!("{along:?}"));
    drop(store);
    let store = Store::open(&dir.path().join("s.db")).unwrap();
    assert!(has_index(&store.conn, FIGURES_BY_KEY).unwrap());
}

/// A reader of some figures reads the keys of only those (2,000 variants
/// have 94,000 keys), but still every rank's figures and every histogram:
/// their keys are read whatever the figures named.
#[test]
fn a_reader_of_some_figures_still_reads_the_ranks_figures_and_the_histograms() {
    let (_dir, mut store, ids) = begun(1);
    let mut r = record(&ids);
    r.ranks = 2;
    let mut h = new_histogram();
    h.record(1_000).unwrap();
    let out = RunOutput {
        metrics: vec![m::IOPS.value(9.0), m::GEOMEAN_BW_BYTES_PER_S.value(7.0)],
        histograms: vec![Hist::new(&LAT, h)],
        ..Default::default()
    };
    store
        .record_run_ranks(&r, Some(&out), &two_ranks("ok"))
        .unwrap();
    let parts = super::Parts {
        metrics: Some(vec![m::IOPS.name.to_string()]),
        ..super::Parts::terminal()
    };
    let head = store.load_campaign_head(ids.campaign).unwrap();
    let runs = store.with_runs(head, &parts).unwrap().runs;
    let run = &runs[0];
    assert_eq!(run.metric(&m::IOPS).map(|v| v.value), Some(9.0));
    assert!(
        run.metric(&m::GEOMEAN_BW_BYTES_PER_S).is_none(),
        "not asked for"
    );
    assert_eq!(run.per_rank.len(), 2);
    for rank in &run.per_rank {
        let key = MetricKey::plain(m::GEOMEAN_BW_BYTES_PER_S.name);
        assert_eq!(rank.metrics.get(&key).map(|v| v.value), Some(3.5));
    }
    assert!(run.histograms.get(&MetricKey::plain(LAT.name)).is_some());
}

// A key's labels are parsed when a run's figure of it is first read: a
// key whose stored labels are not a JSON object of strings fails the read
// that reads its figure, saying which labels, rather than the figure
// going missing; a read of other figures does not look at them.
#[test]
fn labels_that_do_not_parse_fail_the_read_of_their_figure_only() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.db");
    let mut store = Store::open(&path).unwrap();
    let exp = parse_experiment("s.toml", EXPERIMENT).unwrap();
    let ids = store
        .begin_campaign(&exp, &serde_json::json!({}), 1)
        .unwrap();
    let write = Labels::new().with(&TEST, "write");
    let out = RunOutput {
        metrics: vec![
            m::GEOMEAN_BW_BYTES_PER_S.labelled(write, 5.0),
            m::OPS_PER_S.value(7.0),
        ],
        series: Vec::new(),
        histograms: Vec::new(),
        warnings: Vec::new(),
        facts: Vec::new(),
    };
    store.record_run(&record(&ids), Some(&out)).unwrap();
    drop(store);
    let conn = rusqlite::Connection::open(&path).unwrap();
    let changed = conn
        .execute(
            "UPDATE metric_keys SET labels = '[\"write\"]' WHERE name = 'geomean_bw_bytes_per_s'",
            [],
        )
        .unwrap();
    assert_eq!(changed, 1);
    drop(conn);
    let store = Store::open_for_reading(&path).unwrap();
    let err = format!("{:#}", store.load_campaign(ids.campaign).unwrap_err());
    assert!(
        err.contains("labels `[\"write\"]` are not a JSON object of strings"),
        "{err}"
    );
    let some = super::Parts::figures(&["ops_per_s".to_string()]);
    let c = store.load_campaign_with(ids.campaign, &some).unwrap();
    assert_eq!(c.runs[0].metric(&m::OPS_PER_S).unwrap().value, 7.0);
}
