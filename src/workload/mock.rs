//! Workload `mock`: synthetic, seeded metrics for testing storlab itself, as
//! fio's null engine exists to test fio. It touches no storage: a run sleeps
//! for `duration` (so that timing, signals and interruption can be tested)
//! and reports
//!
//! ```text
//! ops_per_s = value · factor[target] · (1 + drift · position) · (1 + noise · z)
//! ```
//!
//! with `z` a standard normal draw, `position` the run's 0-based place in
//! the campaign's order (a linear drift over time, such as a neighbour's
//! load building up) and `factor` a per-target multiplier (a true
//! difference between targets). The same seed and run always give the same
//! number, so campaigns with a known truth test the verdicts
//! (`tests/calibration.rs`).
//!
//! With `rate` (an open-loop run, as a capacity search sets it) the run
//! is an M/M/1 queue whose service rate μ is that number: arrivals at
//! λ = `rate`, response times exponential with rate μ − λ, so the q-th
//! percentile latency is −ln(1 − q)/(μ − λ) until it reaches the run's
//! length T (`duration`, at least ten seconds, as a measured run would
//! be); nearer μ and beyond the queue grows through the run instead, and
//! the percentile with it, by q·T per μ of excess rate. It reports the achieved
//! ops_per_s (min(λ, μ)) and the latency percentiles: a system whose
//! capacity within p99 ≤ L is known, μ − ln(100)/L.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::Result;

use super::{Configure, OpenLoop, RunContext, Workload, WorkloadConfig};
use crate::measure::RunOutput;
use crate::metric::catalogue as m;
use crate::params::{declare, Fault, Params};

declare! {
    /// The parameters of a `mock` workload.
    pub struct MockParams {
        value: float(0.0, 1e18) = "1000" => "mean of the reported ops_per_s",
        noise: float(0.0, 10.0) = "0" => "relative standard deviation of the noise",
        drift: float(-0.5, 0.5) = "0" => "relative change of the mean per run, linear in the run's position in the campaign",
        factor: map => "multiplier of the mean per target, e.g. { b = 1.05 }; 1 for targets not named",
        duration: duration = "0s" => "how long each run sleeps",
        seed: int(u64, 0, i64::MAX) = "1" => "seed of the noise",
        rate: float(0.0, 1e18) = "0" => "open loop: operations offered per second to an M/M/1 queue whose service rate is the drawn value (0: report the value itself)",
    }
}

/// A configured mock workload: its model, per-target factors and sleep.
#[derive(Debug, Clone)]
pub struct MockConfig {
    pub model: Model,
    /// Factor per target name; 1 for targets not named.
    pub factors: BTreeMap<String, f64>,
    pub duration: Duration,
    /// Offered operations per second (0: closed loop).
    pub rate: f64,
}

impl MockParams {
    /// What the runs report, these parameters' model.
    pub fn model(&self) -> Model {
        Model {
            value: self.value,
            noise: self.noise,
            drift: self.drift,
            seed: self.seed,
        }
    }
}

impl Configure for MockParams {
    type Config = MockConfig;

    fn configure(self, _: &Path, _: &mut Params) -> Result<MockConfig, Fault> {
        let mut factors = BTreeMap::new();
        for (target, text) in self.factor.iter().flatten() {
            match text.parse::<f64>() {
                Ok(f) if f.is_finite() && f >= 0.0 => factors.insert(target.clone(), f),
                _ => return Err(("factor", format!("the factor for target `{target}` is `{text}`; write a non-negative number such as 1.05"))),
            };
        }
        Ok(MockConfig {
            model: self.model(),
            factors,
            duration: self.duration,
            rate: self.rate,
        })
    }
}

impl WorkloadConfig for MockConfig {
    fn estimate(&self) -> Duration {
        self.duration
    }

    /// It sleeps: no target makes that longer.
    fn estimate_io(&self) -> Duration {
        Duration::ZERO
    }

    fn bytes_needed(&self) -> u64 {
        0
    }

    fn open_loop(&self) -> Result<OpenLoop, String> {
        Ok(OpenLoop {
            param: "rate",
            issuers: 1,
            value: self.rate,
            whole: false,
            achieved: &m::OPS_PER_S,
            served: None,
        })
    }

    fn build(&self) -> Box<dyn Workload> {
        Box::new(Mock {
            config: self.clone(),
        })
    }
}

pub struct Mock {
    config: MockConfig,
}

/// What a mock run reports, before the per-target factor: everything but
/// the sleeping, so that simulations can draw the same numbers in-process.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Model {
    pub value: f64,
    pub noise: f64,
    pub drift: f64,
    pub seed: u64,
}

impl Model {
    /// The reported value of the run at `position` with `run_seed`, on a
    /// target whose factor is `factor`; never negative.
    pub fn value(&self, factor: f64, position: u32, run_seed: u64) -> f64 {
        let z = gaussian(self.seed ^ run_seed.wrapping_mul(0x2545_F491_4F6C_DD1D));
        let drifted = 1.0 + self.drift * f64::from(position);
        (self.value * factor * drifted * (1.0 + self.noise * z)).max(0.0)
    }
}

/// What an open-loop run at `rate` reports from an M/M/1 queue served at
/// `mu` per second for `duration` (module doc).
pub fn queue(mu: f64, rate: f64, duration: Duration) -> Vec<crate::measure::Metric> {
    let achieved = rate.min(mu);
    let t = duration.as_secs_f64().max(10.0);
    let quantile = |q: f64| -> f64 {
        let tail = -(1.0 - q).ln();
        // Where the steady state's percentile reaches the run's length:
        // nearer μ a run cannot settle, and its backlog grows instead.
        let settles = mu - tail / t;
        let seconds = if rate < settles {
            tail / (mu - rate)
        } else {
            t + q * (rate - settles) / mu.max(1e-9) * t
        };
        seconds * 1e9
    };
    vec![
        m::OPS_PER_S.value(achieved),
        m::LAT_P50_NS.value(quantile(0.5)),
        m::LAT_P90_NS.value(quantile(0.9)),
        m::LAT_P99_NS.value(quantile(0.99)),
        m::LAT_P999_NS.value(quantile(0.999)),
    ]
}

/// A standard normal draw from two splitmix64 outputs (Box–Muller).
fn gaussian(seed: u64) -> f64 {
    let mut s = seed;
    let mut next = || {
        s = s.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = s;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        ((z ^ (z >> 31)) >> 11) as f64 / (1u64 << 53) as f64
    };
    let (u1, u2) = (next().max(1e-300), next());
    (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos()
}

impl Workload for Mock {
    fn prepare(&mut self, _dir: &Path, _cx: &RunContext) -> Result<()> {
        Ok(())
    }

    fn run(&mut self, _dir: &Path, cx: &RunContext) -> Result<RunOutput> {
        let duration = self.config.duration;
        let t0 = Instant::now();
        while t0.elapsed() < duration && !cx.stop.is_raised() {
            std::thread::sleep(Duration::from_millis(5).min(duration));
        }
        let factor = self.config.factors.get(&cx.target).copied().unwrap_or(1.0);
        let v = self.config.model.value(factor, cx.position, cx.run_seed);
        let metrics = match self.config.rate {
            r if r > 0.0 => queue(v, r, duration),
            _ => vec![m::OPS_PER_S.value(v)],
        };
        Ok(RunOutput {
            metrics,
            ..Default::default()
        })
    }

    fn cleanup(&mut self, _dir: &Path) -> Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::params::Value;

    // Reference: the formula of the module doc, without noise.
    #[test]
    fn drift_and_factor_scale_the_mean() {
        let m = Model {
            value: 100.0,
            noise: 0.0,
            drift: 0.01,
            seed: 1,
        };
        assert_eq!(m.value(1.0, 0, 9), 100.0);
        assert!((m.value(1.05, 10, 9) - 115.5).abs() < 1e-9);
        let down = Model { drift: -0.2, ..m };
        assert_eq!(down.value(1.0, 10, 9), 0.0, "never negative");
    }

    // Reference: M/M/1 response-time quantiles, -ln(1 - q)/(μ - λ).
    #[test]
    fn an_open_loop_run_is_an_mm1_queue() {
        let get = |out: &[crate::measure::Metric], d: &crate::metric::MetricDef| {
            out.iter().find(|x| std::ptr::eq(x.def, d)).unwrap().value
        };
        let out = queue(1000.0, 900.0, Duration::from_secs(1));
        assert_eq!(get(&out, &m::OPS_PER_S), 900.0);
        let p99 = 100f64.ln() / 100.0 * 1e9;
        assert!((get(&out, &m::LAT_P99_NS) - p99).abs() < 1.0);
        assert!((get(&out, &m::LAT_P50_NS) - 2f64.ln() / 100.0 * 1e9).abs() < 1.0);
        // Past μ: only μ is achieved and the backlog grows; the
        // percentile rises with the rate, through μ without a jump.
        let over = queue(1000.0, 1100.0, Duration::ZERO);
        assert_eq!(get(&over, &m::OPS_PER_S), 1000.0);
        let mut last = 0.0;
        for rate in (900..1200).step_by(5) {
            let p = get(
                &queue(1000.0, f64::from(rate), Duration::ZERO),
                &m::LAT_P99_NS,
            );
            assert!(p > last, "{rate}: {p} after {last}");
            last = p;
        }
        // The capacity within p99 ≤ 50 ms: μ - ln(100)/0.05.
        let knee = 1000.0 - 100f64.ln() / 0.05;
        let at = |r: f64| get(&queue(1000.0, r, Duration::ZERO), &m::LAT_P99_NS);
        assert!(at(knee - 1.0) < 50e6 && at(knee + 1.0) > 50e6);
    }

    #[test]
    fn a_factor_must_be_a_number() {
        let configure = |text: &str| {
            let mut p = Params::defaults(MockParams::PARAMS);
            let factor = BTreeMap::from([("b".to_string(), text.to_string())]);
            p.set("factor", Value::Map(factor));
            MockParams::from_params(&p)
                .unwrap()
                .configure(Path::new("/"), &mut p)
        };
        assert_eq!(configure("1.05").unwrap().factors["b"], 1.05);
        let (key, why) = configure("fast").unwrap_err();
        assert_eq!(key, "factor");
        assert!(why.contains("`b` is `fast`"), "{why}");
    }

    #[test]
    fn gaussian_draws_have_unit_spread() {
        let xs: Vec<f64> = (0..20_000u64).map(|i| super::gaussian(i * 7919)).collect();
        let mean = xs.iter().sum::<f64>() / xs.len() as f64;
        let var = xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / xs.len() as f64;
        assert!(
            mean.abs() < 0.03 && (var - 1.0).abs() < 0.05,
            "{mean} {var}"
        );
    }
}
