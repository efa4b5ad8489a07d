//! The detector the sampler feeds once a second: it judges the latest
//! window, remembers when the run became steady, and turns the outcome into
//! the run's `ss_*` metrics and, when steady state was not reached, a
//! warning.

use std::time::Duration;

use super::criterion::{criterion_value, meets, Limit, Measure, Test};
use super::SteadySpec;
use crate::measure::Metric;
use crate::metric::catalogue as m;
use crate::metric::MetricDef;

/// Judges each new per-second sample; remembers when the run became steady.
#[derive(Debug, Clone)]
pub struct Detector {
    spec: SteadySpec,
    /// Block size: operations are bytes / bs.
    bs: f64,
    /// Every sample so far, in the judged measure.
    samples: Vec<f64>,
    /// The last judged window's criterion value.
    last_value: Option<f64>,
    /// Seconds after the start of measurement, and the steady window's mean.
    reached: Option<(usize, f64)>,
}

impl Detector {
    pub fn new(spec: SteadySpec, bs: usize) -> Detector {
        Detector {
            spec,
            bs: bs.max(1) as f64,
            samples: Vec::new(),
            last_value: None,
            reached: None,
        }
    }

    /// Takes one second's bytes; true when the run has just become steady.
    pub fn push(&mut self, bytes: f64) -> bool {
        if self.reached.is_some() {
            return false;
        }
        let y = match self.spec.criterion.measure {
            Measure::Iops => bytes / self.bs,
            Measure::Bw => bytes,
        };
        self.samples.push(y);
        let n = self.samples.len();
        if n < self.spec.skip + self.spec.window {
            return false;
        }
        let window = &self.samples[n - self.spec.window..];
        let c = self.spec.criterion;
        let value = criterion_value(window, c.test, c.limit);
        self.last_value = Some(value);
        if meets(value, c.limit) {
            let mean = window.iter().sum::<f64>() / window.len() as f64;
            self.reached = Some((n, mean));
            return true;
        }
        false
    }

    pub fn reached(&self) -> bool {
        self.reached.is_some()
    }

    /// `ss_reached`, `ss_time_s`, the steady window's mean throughput and
    /// the criterion's last value, named after its form.
    pub fn metrics(&self) -> Vec<Metric> {
        let mut out = vec![m::SS_REACHED.value(if self.reached() { 1.0 } else { 0.0 })];
        if let Some((secs, mean)) = self.reached {
            let bw = match self.spec.criterion.measure {
                Measure::Iops => mean * self.bs,
                Measure::Bw => mean,
            };
            out.push(m::SS_TIME_S.value(secs as f64));
            out.push(m::SS_BW_BYTES_PER_S.value(bw));
            out.push(m::SS_IOPS.value(bw / self.bs));
        }
        if let Some(v) = self.last_value.filter(|v| v.is_finite()) {
            out.push(self.value_def().value(v));
        }
        out
    }

    /// The catalogue metric of the criterion's value, after its form.
    fn value_def(&self) -> &'static MetricDef {
        let c = self.spec.criterion;
        match (c.test, c.limit, c.measure) {
            (Test::Range, Limit::Pct(_), _) => &m::SS_RANGE_PCT,
            (Test::Slope, Limit::Pct(_), _) => &m::SS_SLOPE_PCT,
            (Test::Range, Limit::Abs(_), Measure::Bw) => &m::SS_RANGE_BYTES_PER_S,
            (Test::Range, Limit::Abs(_), Measure::Iops) => &m::SS_RANGE_IOPS,
            (Test::Slope, Limit::Abs(_), Measure::Bw) => &m::SS_SLOPE_BYTES_PER_S_PER_S,
            (Test::Slope, Limit::Abs(_), Measure::Iops) => &m::SS_SLOPE_IOPS_PER_S,
        }
    }

    /// The warning of a run that ended without reaching steady state.
    pub fn warning(&self, runtime: Option<Duration>) -> Option<String> {
        if self.reached() {
            return None;
        }
        let window = self.spec.window;
        let figure = match self.last_value {
            None => format!("no full {window} s window was sampled"),
            Some(v) if !v.is_finite() => format!("the last {window} s window moved no data"),
            Some(v) => format!("in the last {window} s window, {}", self.describe(v)),
        };
        let within = runtime
            .map(|r| format!("within runtime ({} s)", r.as_secs_f64()))
            .unwrap_or_else(|| "before the run ended".into());
        Some(format!(
            "steady state not reached {within}: {figure}; bw_bytes_per_s is over the whole run"
        ))
    }

    /// `bandwidth deviated from its mean by up to 27.300% (bw limit 20%)`.
    fn describe(&self, v: f64) -> String {
        let c = self.spec.criterion;
        let what = match c.measure {
            Measure::Iops => "IOPS",
            Measure::Bw => "bandwidth",
        };
        let (value, limit) = match c.limit {
            Limit::Pct(l) => (format!("{v:.3}%"), format!("{l}%")),
            Limit::Abs(l) => (format!("{v:.1} {}", self.value_def().unit), format!("{l}")),
        };
        match (c.test, c.limit) {
            (Test::Range, _) => format!(
                "{what} deviated from its mean by up to {value} ({} limit {limit})",
                c.name()
            ),
            (Test::Slope, Limit::Pct(_)) => format!(
                "{what} changed by {value} of its mean per second ({} limit {limit})",
                c.name()
            ),
            (Test::Slope, Limit::Abs(_)) => {
                format!("{what} changed by {value} ({} limit {limit})", c.name())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::Criterion;
    use super::*;

    fn detector(criterion: &str, window: usize, skip: usize) -> Detector {
        let spec = SteadySpec {
            criterion: Criterion::parse(criterion).unwrap(),
            window,
            skip,
        };
        Detector::new(spec, 4096)
    }

    fn metric(d: &Detector, name: &str) -> Option<f64> {
        d.metrics()
            .into_iter()
            .find(|m| m.name() == name)
            .map(|m| m.value)
    }

    #[test]
    fn a_ramp_that_levels_off_is_steady_once_the_window_is_flat() {
        let mut d = detector("bw:5%", 3, 0);
        let series = [10.0, 20.0, 40.0, 80.0, 100.0, 102.0, 98.0, 101.0];
        let steady_at: Vec<bool> = series.iter().map(|&b| d.push(b * 4096.0)).collect();
        // Windows end at 3…8 s; [100, 102, 98], ending at 7 s, is the first
        // within ±5% of its mean (the one before, [80, 100, 102], is ±14.9%).
        assert_eq!(
            steady_at,
            [false, false, false, false, false, false, true, false]
        );
        assert_eq!(metric(&d, "ss_reached"), Some(1.0));
        assert_eq!(metric(&d, "ss_time_s"), Some(7.0));
        assert_eq!(metric(&d, "ss_bw_bytes_per_s"), Some(100.0 * 4096.0));
        assert_eq!(metric(&d, "ss_iops"), Some(100.0));
        assert_eq!(metric(&d, "ss_range_pct"), Some(2.0));
        assert_eq!(d.warning(Some(Duration::from_secs(30))), None);
    }

    #[test]
    fn a_steady_ramp_never_is() {
        let mut d = detector("iops_slope:1%", 4, 0);
        for i in 0..30 {
            assert!(!d.push((1000.0 + 50.0 * i as f64) * 4096.0));
        }
        assert_eq!(metric(&d, "ss_reached"), Some(0.0));
        assert_eq!(metric(&d, "ss_time_s"), None);
        assert_eq!(metric(&d, "ss_iops"), None);
        // The last window, 2300…2450 IOPS: slope 50/s over a mean of 2375.
        let last = metric(&d, "ss_slope_pct").unwrap();
        assert!((last - 5000.0 / 2375.0).abs() < 1e-12, "{last}");
        let w = d.warning(Some(Duration::from_secs(30))).unwrap();
        assert!(
            w == "steady state not reached within runtime (30 s): in the last 4 s window, IOPS changed by 2.105% of its mean per second (iops_slope limit 1%); bw_bytes_per_s is over the whole run",
            "{w}"
        );
    }

    #[test]
    fn samples_inside_ss_ramp_are_not_judged() {
        let mut d = detector("bw:10%", 2, 3);
        let pushed: Vec<bool> = [50.0, 50.0, 50.0, 50.0, 50.0]
            .iter()
            .map(|&b| d.push(b))
            .collect();
        // Flat from the start, but judged only from second 3 on: the first
        // window is seconds 3 and 4.
        assert_eq!(pushed, [false, false, false, false, true]);
        assert_eq!(metric(&d, "ss_time_s"), Some(5.0));
    }

    #[test]
    fn absolute_limits_name_their_figure_in_its_unit() {
        let mut d = detector("bw:1k", 2, 0);
        d.push(10_000.0);
        d.push(14_000.0);
        assert_eq!(metric(&d, "ss_range_bytes_per_s"), Some(2000.0));
        let w = d.warning(None).unwrap();
        assert!(
            w.contains("before the run ended: in the last 2 s window, bandwidth deviated from its mean by up to 2000.0 bytes/s (bw limit 1024)"),
            "{w}"
        );
    }

    #[test]
    fn a_run_too_short_for_a_window_says_so() {
        let mut d = detector("bw:10%", 5, 0);
        d.push(1.0);
        assert_eq!(d.metrics().len(), 1, "only ss_reached");
        let w = d.warning(Some(Duration::from_secs(5))).unwrap();
        assert!(w.contains("no full 5 s window was sampled"), "{w}");
    }
}
