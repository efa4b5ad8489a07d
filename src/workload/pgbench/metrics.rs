//! pgbench's parsed report → storlab metrics and series, in base units
//! (latency in ns, time in s). Metric names are stable: `tps` (primary),
//! `transactions`, `failed_transactions`, `lat_mean_ns`, `lat_stddev_ns`,
//! `initial_connection_s`, `elapsed_s`, `init_seconds`, `prewarm_tps`,
//! `history_rows`, and per statement `lat_mean_ns` labelled `statement`
//! with its number and first words (`05_begin`).

use super::parse::{slug, Progress, Summary};
use crate::measure::{RunOutput, Series};
use crate::metric::catalogue as m;
use crate::metric::labels::STATEMENT;
use crate::metric::Labels;

const NS_PER_MS: f64 = 1e6;

/// pgbench prints milliseconds with three decimals: whole nanoseconds are exact.
fn ms_to_ns(ms: f64) -> f64 {
    (ms * NS_PER_MS).round()
}

/// The measured run's metrics and its progress series.
pub fn output(s: &Summary, progress: &[Progress], interval_s: u32, elapsed_s: f64) -> RunOutput {
    let mut metrics = vec![
        m::TPS.value(s.tps),
        m::TRANSACTIONS.value(s.transactions as f64),
        m::FAILED_TRANSACTIONS.value(s.failed as f64),
        m::ELAPSED_S.value(elapsed_s),
    ];
    if let Some(v) = s.latency_avg_ms {
        metrics.push(m::LAT_MEAN_NS.value(ms_to_ns(v)));
    }
    if let Some(v) = s.latency_stddev_ms {
        metrics.push(m::LAT_STDDEV_NS.value(ms_to_ns(v)));
    }
    if let Some(v) = s.connection_ms {
        metrics.push(m::INITIAL_CONNECTION_S.value(v / 1e3));
    }
    for st in s.statements.iter().filter(|st| !st.text.starts_with('\\')) {
        let which = format!("{:02}_{}", st.index, slug(&st.text));
        let labels = Labels::new().with(&STATEMENT, which);
        metrics.push(m::LAT_MEAN_NS.labelled(labels, ms_to_ns(st.latency_ms)));
    }
    let mut out = RunOutput {
        metrics,
        ..Default::default()
    };
    if !progress.is_empty() {
        let interval = f64::from(interval_s.max(1));
        let tps = progress.iter().map(|p| p.tps).collect();
        let lat = progress.iter().map(|p| ms_to_ns(p.latency_ms)).collect();
        out.series.push(Series::new(&m::TPS, interval, tps));
        out.series.push(Series::new(&m::LAT_MEAN_NS, interval, lat));
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
        out.metrics.push(m::INIT_SECONDS.value(v));
    }
    if let Some(v) = prewarm_tps {
        out.metrics.push(m::PREWARM_TPS.value(v));
    }
    if let Some(v) = history_rows {
        out.metrics.push(m::HISTORY_ROWS.value(v as f64));
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
        assert_eq!(out.metric(&m::TPS), Some(6283.843907));
        let near = |got: Option<f64>, want: f64| {
            let got = got.unwrap();
            assert!((got - want).abs() < 1e-6 * want, "{got} ≠ {want}");
        };
        near(out.metric(&m::LAT_MEAN_NS), 315_000.0);
        assert_eq!(out.metric(&m::TRANSACTIONS), Some(18841.0));
        let update = Labels::new().with(&STATEMENT, "06_update_pgbench_accounts");
        near(out.labelled(&m::LAT_MEAN_NS, &update), 35_000.0);
        let statements: Vec<&str> = out
            .metrics
            .iter()
            .filter_map(|m| m.labels.get(&STATEMENT))
            .collect();
        assert!(
            statements.iter().all(|s| !s.contains("set_aid")),
            "{statements:?}"
        );
        assert_eq!(statements.len(), 7, "{statements:?}");
        assert_eq!(out.series[0].values, vec![6849.8, 6274.8, 5715.2]);
    }
}
