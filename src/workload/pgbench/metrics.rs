//! pgbench's parsed report → storlab metrics and series, in base units
//! (latency in ns, time in s). Metric names are stable: `tps` (primary),
//! `transactions`, `failed_transactions`, `lat_mean_ns`, `lat_stddev_ns`,
//! `initial_connection_s`, `elapsed_s`, `init_seconds`, `prewarm_tps`,
//! `history_rows`, and `stmt_NN_<first words>_lat_mean_ns` per statement.

use super::parse::{slug, Progress, Summary};
use crate::measure::{Metric, RunOutput, Series};

const NS_PER_MS: f64 = 1e6;

/// pgbench prints milliseconds with three decimals: whole nanoseconds are exact.
fn ms_to_ns(ms: f64) -> f64 {
    (ms * NS_PER_MS).round()
}

/// The measured run's metrics and its progress series.
pub fn output(s: &Summary, progress: &[Progress], interval_s: u32, elapsed_s: f64) -> RunOutput {
    let mut m = vec![
        Metric::higher("tps", s.tps, "tx/s"),
        Metric::higher("transactions", s.transactions as f64, "tx"),
        Metric::lower("failed_transactions", s.failed as f64, "tx"),
        Metric::lower("elapsed_s", elapsed_s, "s"),
    ];
    if let Some(v) = s.latency_avg_ms {
        m.push(Metric::lower("lat_mean_ns", ms_to_ns(v), "ns"));
    }
    if let Some(v) = s.latency_stddev_ms {
        m.push(Metric::lower("lat_stddev_ns", ms_to_ns(v), "ns"));
    }
    if let Some(v) = s.connection_ms {
        m.push(Metric::lower("initial_connection_s", v / 1e3, "s"));
    }
    for st in s.statements.iter().filter(|st| !st.text.starts_with('\\')) {
        m.push(Metric::lower(
            format!("stmt_{:02}_{}_lat_mean_ns", st.index, slug(&st.text)),
            ms_to_ns(st.latency_ms),
            "ns",
        ));
    }
    let mut out = RunOutput {
        metrics: m,
        ..Default::default()
    };
    if !progress.is_empty() {
        let interval = f64::from(interval_s.max(1));
        out.series.push(Series {
            name: "tps".into(),
            unit: "tx/s",
            interval_s: interval,
            values: progress.iter().map(|p| p.tps).collect(),
        });
        out.series.push(Series {
            name: "lat_mean_ns".into(),
            unit: "ns",
            interval_s: interval,
            values: progress.iter().map(|p| ms_to_ns(p.latency_ms)).collect(),
        });
    }
    out
}

/// Figures measured around the run: the init time (when this run
/// initialised), the prewarm's tps and the rows in pgbench_history.
pub fn extras(
    out: &mut RunOutput,
    init_seconds: Option<f64>,
    prewarm_tps: Option<f64>,
    history_rows: Option<u64>,
) {
    if let Some(v) = init_seconds {
        out.metrics.push(Metric::lower("init_seconds", v, "s"));
    }
    if let Some(v) = prewarm_tps {
        out.metrics.push(Metric::higher("prewarm_tps", v, "tx/s"));
    }
    if let Some(v) = history_rows {
        out.metrics
            .push(Metric::higher("history_rows", v as f64, "rows"));
    }
}

#[cfg(test)]
mod tests {
    use super::super::parse;
    use super::*;

    #[test]
    fn captured_output_becomes_metrics_in_base_units() {
        let stdout = include_str!("testdata/pg15_duration_prepared.stdout");
        let stderr = include_str!("testdata/pg15_duration_prepared.stderr");
        let s = parse::summary(stdout).unwrap();
        let out = output(&s, &parse::progress(stderr), 1, 3.2);
        assert_eq!(out.metric("tps"), Some(6283.843907));
        let near = |name: &str, want: f64| {
            let got = out.metric(name).unwrap();
            assert!((got - want).abs() < 1e-6 * want, "{name}: {got}");
        };
        near("lat_mean_ns", 315_000.0);
        assert_eq!(out.metric("transactions"), Some(18841.0));
        near("stmt_06_update_pgbench_accounts_lat_mean_ns", 35_000.0);
        assert!(out.metrics.iter().all(|m| !m.name.contains("set_aid")));
        assert_eq!(out.series[0].values, vec![6849.8, 6274.8, 5715.2]);
    }
}
