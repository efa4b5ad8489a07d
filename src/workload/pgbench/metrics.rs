//! pgbench's parsed report → storlab metrics and series, in base units
//! (latency in ns, time in s). Metric names are stable: `tps` (primary),
//! `transactions`, `failed_transactions`, `lat_mean_ns`, `lat_stddev_ns`,
//! `initial_connection_s`, `elapsed_s`, open-loop `late_transactions`,
//! `skipped_transactions`, `sched_lag_mean_ns` and `sched_lag_max_ns`,
//! `init_seconds` with its steps (`init_drop_s` …), `prewarm_tps`,
//! `history_rows`, and per statement `lat_mean_ns` labelled `statement`
//! with its number and first words (`05_begin`). Whether a rate-limited
//! run held its rate is judged here too.

use super::parse::{slug, InitStep, Progress, Summary};
use crate::measure::{Metric, RunOutput, Series};
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
    let counts = [
        (&m::LATE_TRANSACTIONS, s.late),
        (&m::SKIPPED_TRANSACTIONS, s.skipped),
    ];
    for (def, v) in counts {
        if let Some(v) = v {
            metrics.push(def.value(v as f64));
        }
    }
    let lag = [
        (&m::SCHED_LAG_MEAN_NS, s.lag_avg_ms),
        (&m::SCHED_LAG_MAX_NS, s.lag_max_ms),
    ];
    for (def, v) in lag {
        if let Some(v) = v {
            metrics.push(def.value(ms_to_ns(v)));
        }
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

/// A `pgbench -i` this run did: its wall time as storlab measured it and
/// pgbench's own time of each step.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Init {
    pub seconds: f64,
    pub steps: Vec<(InitStep, f64)>,
}

impl Init {
    fn metrics(&self) -> Vec<Metric> {
        let mut out = vec![m::INIT_SECONDS.value(self.seconds)];
        for (step, secs) in &self.steps {
            let def = match step {
                InitStep::Drop => &m::INIT_DROP_S,
                InitStep::Tables => &m::INIT_TABLES_S,
                InitStep::Generate => &m::INIT_GENERATE_S,
                InitStep::Vacuum => &m::INIT_VACUUM_S,
                InitStep::PrimaryKeys => &m::INIT_KEYS_S,
                InitStep::ForeignKeys => &m::INIT_FOREIGN_KEYS_S,
            };
            out.push(def.value(*secs));
        }
        out
    }
}

/// Figures measured around the run: the init (when this run initialised),
/// the prewarm's tps and the rows in pgbench_history.
pub fn extras(
    out: &mut RunOutput,
    init: Option<&Init>,
    prewarm_tps: Option<f64>,
    history_rows: Option<u64>,
) {
    if let Some(init) = init {
        out.metrics.extend(init.metrics());
    }
    if let Some(v) = prewarm_tps {
        out.metrics.push(m::PREWARM_TPS.value(v));
    }
    if let Some(v) = history_rows {
        out.metrics.push(m::HISTORY_ROWS.value(v as f64));
    }
}

/// Why a rate-limited run did not hold its rate, if it did not: it
/// committed (and skipped) fewer transactions than the schedule had for
/// its `elapsed_s`, beyond the Poisson schedule's own spread (three
/// standard deviations) and 2%.
pub fn rate_shortfall(rate: f64, s: &Summary, elapsed_s: f64) -> Option<String> {
    let expected = rate * elapsed_s;
    if expected < 1.0 {
        return None;
    }
    let tolerance = (0.02 * expected).max(3.0 * expected.sqrt());
    if s.tps >= rate * (1.0 - tolerance / expected) {
        return None;
    }
    let below = 100.0 * (1.0 - s.tps / rate);
    let lag = s
        .lag_max_ms
        .map(|l| format!(", schedule lag up to {l:.1} ms"))
        .unwrap_or_default();
    let skipped = match s.skipped {
        Some(n) if n > 0 => format!(", {n} transactions skipped"),
        _ => String::new(),
    };
    Some(format!(
        "pgbench did not hold rate {rate} tx/s: {:.1} tx/s, {below:.1}% below{lag}{skipped}; the system could not keep up at this rate — lower `rate` to measure latency at a load it sustains",
        s.tps
    ))
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

    #[test]
    fn an_open_loop_run_counts_late_and_skipped_and_its_lag() {
        let s = parse::summary(include_str!("testdata/pg15_rate_latency_limit.stdout")).unwrap();
        let out = output(&s, &[], 1, 4.0);
        assert_eq!(out.metric(&m::LATE_TRANSACTIONS), Some(190.0));
        assert_eq!(out.metric(&m::SKIPPED_TRANSACTIONS), Some(124.0));
        assert_eq!(out.metric(&m::SCHED_LAG_MEAN_NS), Some(1_940_000.0));
        assert_eq!(out.metric(&m::SCHED_LAG_MAX_NS), Some(19_305_000.0));
        // 200 tx/s asked, 167.9 done and 124 skipped in 4 s: not held.
        let why = rate_shortfall(200.0, &s, 4.0).unwrap();
        assert!(
            why.contains("did not hold rate 200") && why.contains("124 transactions skipped"),
            "{why}"
        );
        assert_eq!(
            rate_shortfall(168.0, &s, 4.0),
            None,
            "held within its spread"
        );
        let closed =
            parse::summary(include_str!("testdata/pg15_duration_prepared.stdout")).unwrap();
        let out = output(&closed, &[], 1, 3.0);
        assert_eq!(out.metric(&m::SKIPPED_TRANSACTIONS), None);
        assert_eq!(out.metric(&m::SCHED_LAG_MAX_NS), None);
    }

    #[test]
    fn init_steps_become_their_metrics() {
        let steps = parse::init_steps(include_str!("testdata/pg15_init_server_side.stderr"));
        let init = Init {
            seconds: 0.8,
            steps,
        };
        let mut out = RunOutput::default();
        extras(&mut out, Some(&init), None, None);
        assert_eq!(out.metric(&m::INIT_SECONDS), Some(0.8));
        assert_eq!(out.metric(&m::INIT_GENERATE_S), Some(0.39));
        assert_eq!(out.metric(&m::INIT_FOREIGN_KEYS_S), Some(0.03));
        assert_eq!(out.metrics.len(), 7);
    }
}
