//! The steady-state criteria as pure functions: parsing `steadystate`
//! values (`bw:20%`), the window's largest deviation from its mean and its
//! least-squares slope, and the test against the limit.

use crate::params::units::parse_size;

/// Which per-second figure is judged.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Measure {
    Iops,
    Bw,
}

/// How the window is judged.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Test {
    /// Every sample within the limit of the window mean.
    Range,
    /// The least-squares slope below the limit.
    Slope,
}

/// The threshold, as written.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Limit {
    /// A percentage of the window mean.
    Pct(f64),
    /// Operations/s (`iops`) or bytes/s (`bw`); per second for slopes.
    Abs(f64),
}

/// A parsed `steadystate` value, such as `bw:20%`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Criterion {
    pub measure: Measure,
    pub test: Test,
    pub limit: Limit,
}

/// fio's default criterion when only `ss_dur` is given.
pub use crate::metric::catalogue::DEFAULT_STEADY_CRITERION as DEFAULT_CRITERION;

const FORM: &str = "write CRITERION:LIMIT, where CRITERION is iops, iops_slope, bw or bw_slope and LIMIT a percentage of the window mean (\"20%\") or an absolute value (operations/s for iops, bytes/s as a size such as \"10M\" for bw)";

impl Criterion {
    pub fn parse(text: &str) -> Result<Criterion, String> {
        let bad = |why: &str| format!("steadystate `{text}` {why}: {FORM}");
        let (name, limit) = text.split_once(':').ok_or_else(|| bad("has no limit"))?;
        let (measure, test) = match name.trim() {
            "iops" => (Measure::Iops, Test::Range),
            "iops_slope" => (Measure::Iops, Test::Slope),
            "bw" => (Measure::Bw, Test::Range),
            "bw_slope" => (Measure::Bw, Test::Slope),
            _ => return Err(bad("has an unknown criterion")),
        };
        let limit = limit.trim();
        let parsed = match limit.strip_suffix('%') {
            Some(pct) => pct.trim().parse::<f64>().ok().map(Limit::Pct),
            None if measure == Measure::Iops => limit.parse::<f64>().ok().map(Limit::Abs),
            None => parse_size(limit).ok().map(|b| Limit::Abs(b as f64)),
        };
        match parsed {
            Some(Limit::Pct(x) | Limit::Abs(x)) if !(x.is_finite() && x > 0.0) => {
                Err(bad("needs a limit above 0"))
            }
            Some(l) => Ok(Criterion {
                measure,
                test,
                limit: l,
            }),
            None => Err(bad("has a limit that is not a number")),
        }
    }

    /// The criterion's name as fio writes it (`bw_slope`).
    pub fn name(&self) -> &'static str {
        match (self.measure, self.test) {
            (Measure::Iops, Test::Range) => "iops",
            (Measure::Iops, Test::Slope) => "iops_slope",
            (Measure::Bw, Test::Range) => "bw",
            (Measure::Bw, Test::Slope) => "bw_slope",
        }
    }
}

/// The largest deviation of a sample from the mean, and the mean.
pub fn max_deviation(ys: &[f64]) -> (f64, f64) {
    let mean = ys.iter().sum::<f64>() / ys.len() as f64;
    let dev = ys.iter().map(|y| (y - mean).abs()).fold(0.0, f64::max);
    (dev, mean)
}

/// The least-squares slope of `ys` over x = 0, 1, … (per second), and the mean.
pub fn slope(ys: &[f64]) -> (f64, f64) {
    let n = ys.len() as f64;
    let mean = ys.iter().sum::<f64>() / n;
    let x_mean = (n - 1.0) / 2.0;
    let (mut sxy, mut sxx) = (0.0, 0.0);
    for (i, y) in ys.iter().enumerate() {
        let dx = i as f64 - x_mean;
        sxy += dx * (y - mean);
        sxx += dx * dx;
    }
    let s = if sxx > 0.0 { sxy / sxx } else { 0.0 };
    (s, mean)
}

/// The criterion's value on one window, in the form of its limit (a % of
/// the mean, or absolute); infinite for a percentage of a zero mean.
pub fn criterion_value(window: &[f64], test: Test, limit: Limit) -> f64 {
    let (raw, mean) = match test {
        Test::Range => max_deviation(window),
        Test::Slope => slope(window),
    };
    match limit {
        Limit::Abs(_) => raw.abs(),
        Limit::Pct(_) if mean > 0.0 => 100.0 * raw.abs() / mean,
        Limit::Pct(_) => f64::INFINITY,
    }
}

/// Whether a criterion value meets the limit: strictly below, as fio.
pub fn meets(value: f64, limit: Limit) -> bool {
    match limit {
        Limit::Pct(l) | Limit::Abs(l) => value < l,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-12 * b.abs().max(1.0)
    }

    #[test]
    fn a_flat_series_has_no_deviation_and_no_slope() {
        let flat = [100.0; 5];
        assert_eq!(max_deviation(&flat), (0.0, 100.0));
        assert_eq!(slope(&flat), (0.0, 100.0));
        let pct = Limit::Pct(0.0001);
        assert_eq!(criterion_value(&flat, Test::Range, pct), 0.0);
        assert!(meets(0.0, pct));
    }

    #[test]
    fn a_ramp_has_its_step_as_slope_and_half_its_span_as_deviation() {
        let ramp = [100.0, 110.0, 120.0, 130.0];
        assert_eq!(slope(&ramp), (10.0, 115.0));
        assert_eq!(max_deviation(&ramp), (15.0, 115.0));
        let slope_pct = criterion_value(&ramp, Test::Slope, Limit::Pct(5.0));
        assert!(close(slope_pct, 1000.0 / 115.0), "{slope_pct}");
        let range_pct = criterion_value(&ramp, Test::Range, Limit::Pct(5.0));
        assert!(close(range_pct, 1500.0 / 115.0), "{range_pct}");
        assert!(!meets(slope_pct, Limit::Pct(8.0)));
        assert!(meets(slope_pct, Limit::Pct(8.7)));
        // A falling ramp is judged by the slope's size.
        let falling = [130.0, 120.0, 110.0, 100.0];
        assert_eq!(slope(&falling), (-10.0, 115.0));
        assert_eq!(
            criterion_value(&falling, Test::Slope, Limit::Abs(1.0)),
            10.0
        );
    }

    #[test]
    fn noise_without_trend_has_a_small_slope_and_a_wide_range() {
        let noisy = [100.0, 90.0, 110.0, 100.0];
        // Σ(x−x̄)(y−ȳ) = 10, Σ(x−x̄)² = 5.
        assert_eq!(slope(&noisy), (2.0, 100.0));
        assert_eq!(max_deviation(&noisy), (10.0, 100.0));
        assert_eq!(criterion_value(&noisy, Test::Slope, Limit::Pct(1.0)), 2.0);
        assert_eq!(criterion_value(&noisy, Test::Range, Limit::Pct(1.0)), 10.0);
        assert_eq!(criterion_value(&noisy, Test::Range, Limit::Abs(1.0)), 10.0);
    }

    #[test]
    fn the_limit_is_strict_as_in_fio() {
        assert!(!meets(10.0, Limit::Pct(10.0)));
        assert!(meets(9.999, Limit::Pct(10.0)));
    }

    #[test]
    fn a_zero_mean_never_meets_a_percentage() {
        let idle = [0.0, 0.0, 0.0];
        assert_eq!(
            criterion_value(&idle, Test::Range, Limit::Pct(50.0)),
            f64::INFINITY
        );
        assert_eq!(criterion_value(&idle, Test::Range, Limit::Abs(1.0)), 0.0);
    }

    #[test]
    fn criteria_parse_as_fio_writes_them() {
        let c = Criterion::parse("bw:20%").unwrap();
        assert_eq!(
            c,
            Criterion {
                measure: Measure::Bw,
                test: Test::Range,
                limit: Limit::Pct(20.0)
            }
        );
        assert_eq!(c.name(), "bw");
        let c = Criterion::parse("iops_slope:0.01%").unwrap();
        assert_eq!((c.measure, c.test), (Measure::Iops, Test::Slope));
        assert_eq!(c.limit, Limit::Pct(0.01));
        assert_eq!(
            Criterion::parse("iops:500").unwrap().limit,
            Limit::Abs(500.0)
        );
        assert_eq!(
            Criterion::parse("bw_slope:10M").unwrap().limit,
            Limit::Abs(10.0 * 1024.0 * 1024.0)
        );
        assert_eq!(
            Criterion::parse(DEFAULT_CRITERION).unwrap().name(),
            "iops_slope"
        );
    }

    #[test]
    fn malformed_criteria_say_what_is_wrong() {
        for (text, why) in [
            ("bw", "has no limit"),
            ("bandwidth:20%", "unknown criterion"),
            ("bw:lots%", "not a number"),
            ("iops:fast", "not a number"),
            ("bw:10q", "not a number"),
            ("bw:0%", "above 0"),
            ("iops_slope:-1", "above 0"),
        ] {
            let e = Criterion::parse(text).unwrap_err();
            assert!(
                e.contains(why) && e.contains("CRITERION:LIMIT"),
                "{text}: {e}"
            );
        }
    }
}
