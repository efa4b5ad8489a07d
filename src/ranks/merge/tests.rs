use super::*;
use crate::metric::catalogue::LAT;
use crate::metric::labels::{FILE_SIZE, OP, RECORD_SIZE, TEST};
use crate::warning::{Warning, WarningKind};

fn hist(values: &[u64]) -> Hist {
    let mut h = new_histogram();
    for v in values {
        h.record(*v).unwrap();
    }
    Hist::new(&LAT, h)
}

/// An io-like rank: `ops` operations of 4 KiB with the given latencies,
/// measured over `elapsed` seconds, done `done` seconds after the barrier.
fn io_rank(rank: usize, lat: &[u64], elapsed: f64, done: f64) -> RankRun {
    let ops = lat.len() as f64;
    let bytes = ops * 4096.0;
    let h = hist(lat);
    let mut metrics = vec![
        m::BW_BYTES_PER_S.value(bytes / elapsed),
        m::IOPS.value(ops / elapsed),
        m::BYTES.value(bytes),
        m::OPS.value(ops),
        m::ELAPSED_S.value(elapsed),
        m::CPU_USER_S.value(0.5),
        m::CPU_NS_PER_OP.value(1000.0 * (rank + 1) as f64),
    ];
    metrics.extend(latency_metrics(&LAT, &Labels::new(), &h.hist));
    RankRun {
        rank,
        done_s: done,
        output: RunOutput {
            metrics,
            series: vec![Series::new(&m::BW_BYTES_PER_S, 1.0, vec![10.0; rank + 1])],
            histograms: vec![h],
            warnings: vec![
                Warning::new(WarningKind::NoisyHost, "same"),
                Warning::note(format!("only {rank}")),
            ],
            facts: vec![
                ("engine".into(), "psync".into()),
                ("version".into(), format!("1.{}", rank.min(1))),
            ],
        },
    }
}

fn get(out: &RunOutput, def: &MetricDef) -> f64 {
    labelled(out, def, &Labels::new())
}

fn labelled(out: &RunOutput, def: &MetricDef, labels: &Labels) -> f64 {
    out.labelled(def, labels)
        .unwrap_or_else(|| panic!("no {} {labels:?} in {:?}", def.name, out.metrics))
}

#[test]
fn counts_add_histograms_merge_exactly_and_throughput_is_iors_aggregate() {
    let lats: [Vec<u64>; 3] = [
        (1..=100).map(|i| i * 1_000).collect(),
        (1..=300).map(|i| i * 3_000).collect(),
        vec![5_000_000; 50],
    ];
    // Rank 2 is the straggler: it ends 4 s after the barrier.
    let runs = vec![
        io_rank(0, &lats[0], 1.0, 1.1),
        io_rank(1, &lats[1], 2.0, 2.1),
        io_rank(2, &lats[2], 3.5, 4.0),
    ];
    let out = merge(&runs, Some(&m::ELAPSED_S));
    let ops: f64 = runs.iter().map(|r| get(&r.output, &m::OPS)).sum();
    assert_eq!(get(&out, &m::OPS), ops);
    assert_eq!(get(&out, &m::OPS), 450.0);
    assert_eq!(get(&out, &m::BYTES), 450.0 * 4096.0);
    let lat = out.histograms.iter().find(|h| h.def.name == "lat").unwrap();
    assert_eq!(lat.hist.len() as f64, ops, "merged count = summed ops");
    let all = hist(&lats.concat());
    assert_eq!(lat.hist, all.hist, "exactly the histogram of every sample");
    assert_eq!(
        get(&out, &m::LAT_P99_NS),
        all.hist.value_at_percentile(99.0) as f64
    );
    assert_eq!(get(&out, &m::LAT_MAX_NS), all.hist.max() as f64);
    // Measured intervals: [0.1, 1.1], [0.1, 2.1], [0.5, 4.0]: window 3.9 s.
    let window = 4.0 - 0.1;
    assert!((get(&out, &m::BW_BYTES_PER_S) - 450.0 * 4096.0 / window).abs() < 1e-6);
    assert!((get(&out, &m::IOPS) - 450.0 / window).abs() < 1e-9);
    assert_eq!(get(&out, &m::ELAPSED_S), 3.5, "the slowest rank's time");
    assert_eq!(get(&out, &m::CPU_USER_S), 1.5, "CPU seconds add");
    // Weighted by operations: (1000*100 + 2000*300 + 3000*50) / 450.
    assert!((get(&out, &m::CPU_NS_PER_OP) - 850_000.0 / 450.0).abs() < 1e-9);
    assert_eq!(get(&out, &m::FIRST_DONE_S), 1.1);
    assert_eq!(get(&out, &m::LAST_DONE_S), 4.0);
    assert!((get(&out, &m::DONE_SPREAD_S) - 2.9).abs() < 1e-12);
    assert_eq!(out.series[0].values, vec![30.0, 20.0, 10.0]);
    assert_eq!(
        out.warnings,
        vec![
            Warning::new(WarningKind::NoisyHost, "same"),
            Warning::note("rank 0: only 0"),
            Warning::note("rank 1: only 1"),
            Warning::note("rank 2: only 2")
        ]
    );
    assert_eq!(
        out.facts,
        vec![
            ("engine".to_string(), "psync".to_string()),
            ("version".to_string(), "0: 1.0; 1: 1.1; 2: 1.1".to_string())
        ]
    );
}

#[test]
fn per_phase_rates_use_the_slowest_rank_and_others_add() {
    let create = Labels::new().with(&OP, "create");
    let cell = Labels::new()
        .with(&TEST, "write")
        .with(&FILE_SIZE, 1 << 20)
        .with(&RECORD_SIZE, 4096);
    let rank = |r: usize, create_s: f64, matrix_bw: f64| RankRun {
        rank: r,
        done_s: 1.0,
        output: RunOutput {
            metrics: vec![
                m::OPS.labelled(create.clone(), 1000.0),
                m::OPS_PER_S.labelled(create.clone(), 1000.0 / create_s),
                m::ELAPSED_S.labelled(create.clone(), create_s),
                m::BW_BYTES_PER_S.labelled(cell.clone(), matrix_bw),
                m::LAT_MEAN_NS.labelled(cell.clone(), matrix_bw / 1e3),
                m::SERVICE_LAT_P99_NS.value(matrix_bw / 1e3),
                m::CELLS.value(4.0),
                m::COMPRESSION_RATIO.value(r as f64 + 1.0),
                m::MAX_RSS_BYTES.value(1e6 * (r + 1) as f64),
            ],
            ..Default::default()
        },
    };
    let out = merge(&[rank(0, 1.0, 1e6), rank(1, 4.0, 3e6)], None);
    assert_eq!(labelled(&out, &m::OPS, &create), 2000.0);
    assert_eq!(labelled(&out, &m::OPS_PER_S, &create), 2000.0 / 4.0);
    assert_eq!(labelled(&out, &m::BW_BYTES_PER_S, &cell), 4e6);
    assert_eq!(labelled(&out, &m::LAT_MEAN_NS, &cell), 2e3, "mean of means");
    assert_eq!(
        get(&out, &m::SERVICE_LAT_P99_NS),
        3e3,
        "percentile: largest rank"
    );
    assert_eq!(get(&out, &m::CELLS), 4.0);
    assert_eq!(get(&out, &m::COMPRESSION_RATIO), 1.5);
    assert_eq!(get(&out, &m::MAX_RSS_BYTES), 2e6, "a peak is not summed");
    assert!(out.histograms.is_empty());
}

#[test]
fn rates_without_a_span_add_up() {
    let rank = |r: usize, v: f64, done: f64| RankRun {
        rank: r,
        done_s: done,
        output: RunOutput {
            metrics: vec![m::OPS_PER_S.value(v)],
            ..Default::default()
        },
    };
    let out = merge(&[rank(0, 100.0, 2.0), rank(1, 50.0, 0.5)], None);
    assert_eq!(get(&out, &m::OPS_PER_S), 150.0);
    assert_eq!(get(&out, &m::FIRST_DONE_S), 0.5);
    assert_eq!(get(&out, &m::LAST_DONE_S), 2.0);
}
