use super::*;

fn hist(values: &[u64]) -> Hist {
    let mut h = new_histogram();
    for v in values {
        h.record(*v).unwrap();
    }
    Hist {
        name: "lat".into(),
        unit: "ns",
        hist: h,
    }
}

/// An io-like rank: `ops` operations of 4 KiB with the given latencies,
/// measured over `elapsed` seconds, done `done` seconds after the barrier.
fn io_rank(rank: usize, lat: &[u64], elapsed: f64, done: f64) -> RankRun {
    let ops = lat.len() as f64;
    let bytes = ops * 4096.0;
    let h = hist(lat);
    let mut metrics = vec![
        Metric::higher("bw_bytes_per_s", bytes / elapsed, "bytes/s"),
        Metric::higher("iops", ops / elapsed, "ops/s"),
        Metric::higher("bytes", bytes, "bytes"),
        Metric::higher("ops", ops, "ops"),
        Metric::lower("elapsed_s", elapsed, "s"),
        Metric::lower("cpu_user_s", 0.5, "s"),
        Metric::lower("cpu_ns_per_op", 1000.0 * (rank + 1) as f64, "ns"),
    ];
    metrics.extend(latency_metrics("lat", &h.hist));
    RankRun {
        rank,
        done_s: done,
        output: RunOutput {
            metrics,
            series: vec![Series {
                name: "bw_bytes_per_s".into(),
                unit: "bytes/s",
                interval_s: 1.0,
                values: vec![10.0; rank + 1],
            }],
            histograms: vec![h],
            warnings: vec!["same".into(), format!("only {rank}")],
            facts: vec![
                ("fio_version".into(), "fio-3.33".into()),
                ("disk0".into(), format!("loop{rank}")),
            ],
        },
    }
}

fn get(out: &RunOutput, name: &str) -> f64 {
    out.metric(name)
        .unwrap_or_else(|| panic!("no {name} in {:?}", out.metrics))
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
    let out = merge(&runs, Some("elapsed_s"));
    let ops: f64 = runs.iter().map(|r| get(&r.output, "ops")).sum();
    assert_eq!(get(&out, "ops"), ops);
    assert_eq!(get(&out, "ops"), 450.0);
    assert_eq!(get(&out, "bytes"), 450.0 * 4096.0);
    let lat = out.histograms.iter().find(|h| h.name == "lat").unwrap();
    assert_eq!(lat.hist.len() as f64, ops, "merged count = summed ops");
    let all = hist(&lats.concat());
    assert_eq!(lat.hist, all.hist, "exactly the histogram of every sample");
    assert_eq!(
        get(&out, "lat_p99_ns"),
        all.hist.value_at_percentile(99.0) as f64
    );
    assert_eq!(get(&out, "lat_max_ns"), all.hist.max() as f64);
    // Measured intervals: [0.1, 1.1], [0.1, 2.1], [0.5, 4.0]: window 3.9 s.
    let window = 4.0 - 0.1;
    assert!((get(&out, "bw_bytes_per_s") - 450.0 * 4096.0 / window).abs() < 1e-6);
    assert!((get(&out, "iops") - 450.0 / window).abs() < 1e-9);
    assert_eq!(get(&out, "elapsed_s"), 3.5, "the slowest rank's time");
    assert_eq!(get(&out, "cpu_user_s"), 1.5, "CPU seconds add");
    // Weighted by operations: (1000*100 + 2000*300 + 3000*50) / 450.
    assert!((get(&out, "cpu_ns_per_op") - 850_000.0 / 450.0).abs() < 1e-9);
    assert_eq!(get(&out, "first_done_s"), 1.1);
    assert_eq!(get(&out, "last_done_s"), 4.0);
    assert!((get(&out, "done_spread_s") - 2.9).abs() < 1e-12);
    assert_eq!(out.series[0].values, vec![30.0, 20.0, 10.0]);
    assert_eq!(
        out.warnings,
        vec!["same", "rank 0: only 0", "rank 1: only 1", "rank 2: only 2"]
    );
    let fact = |n: &str| {
        out.facts
            .iter()
            .find(|(k, _)| k == n)
            .map(|(_, v)| v.as_str())
    };
    assert_eq!(fact("fio_version"), Some("fio-3.33"));
    assert_eq!(fact("disk0"), Some("0: loop0; 1: loop1; 2: loop2"));
}

#[test]
fn per_phase_rates_use_the_slowest_rank_and_others_add() {
    let rank = |r: usize, create_s: f64, matrix_bw: f64| RankRun {
        rank: r,
        done_s: 1.0,
        output: RunOutput {
            metrics: vec![
                Metric::higher("create_ops", 1000.0, "ops"),
                Metric::higher("create_ops_per_s", 1000.0 / create_s, "ops/s"),
                Metric::lower("create_elapsed_s", create_s, "s"),
                Metric::higher("write_1m_4k_bw_bytes_per_s", matrix_bw, "bytes/s"),
                Metric::lower("write_1m_4k_lat_mean_ns", matrix_bw / 1e3, "ns"),
                Metric::lower("sched_lag_p99_ns", matrix_bw / 1e3, "ns"),
                Metric::higher("cells", 4.0, "cells"),
                Metric::higher("compression_ratio", r as f64 + 1.0, "ratio"),
                Metric::lower("max_rss_bytes", 1e6 * (r + 1) as f64, "bytes"),
            ],
            ..Default::default()
        },
    };
    let out = merge(&[rank(0, 1.0, 1e6), rank(1, 4.0, 3e6)], None);
    assert_eq!(get(&out, "create_ops"), 2000.0);
    assert_eq!(get(&out, "create_ops_per_s"), 2000.0 / 4.0);
    assert_eq!(get(&out, "write_1m_4k_bw_bytes_per_s"), 4e6);
    assert_eq!(get(&out, "write_1m_4k_lat_mean_ns"), 2e3, "mean of means");
    assert_eq!(
        get(&out, "sched_lag_p99_ns"),
        3e3,
        "percentile: largest rank"
    );
    assert_eq!(get(&out, "cells"), 4.0);
    assert_eq!(get(&out, "compression_ratio"), 1.5);
    assert_eq!(get(&out, "max_rss_bytes"), 2e6, "a peak is not summed");
    assert!(out.histograms.is_empty());
}

#[test]
fn rates_without_a_span_add_up() {
    let rank = |r: usize, v: f64, done: f64| RankRun {
        rank: r,
        done_s: done,
        output: RunOutput {
            metrics: vec![Metric::higher("ops_per_s", v, "ops/s")],
            ..Default::default()
        },
    };
    let out = merge(&[rank(0, 100.0, 2.0), rank(1, 50.0, 0.5)], None);
    assert_eq!(get(&out, "ops_per_s"), 150.0);
    assert_eq!(get(&out, "first_done_s"), 0.5);
    assert_eq!(get(&out, "last_done_s"), 2.0);
}
