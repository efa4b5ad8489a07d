//! Candidate against baseline: Welch's t-test and the percent difference of
//! the means with its confidence interval.
//!
//! # Test
//!
//! Welch's unequal-variances t-test (B. L. Welch, "The generalization of
//! 'Student's' problem when several different population variances are
//! involved", Biometrika 34, 1947), with the Welch–Satterthwaite degrees of
//! freedom (F. E. Satterthwaite, Biometrics Bulletin 2, 1946):
//!
//! ```text
//! vb = sb² / nb,  vc = sc² / nc
//! t  = (mean_c - mean_b) / √(vb + vc)
//! df = (vb + vc)² / (vb² / (nb - 1) + vc² / (nc - 1))
//! p  = 2 · P(T_df > |t|)                              (two-sided)
//! ```
//!
//! This is SciPy's `stats.ttest_ind(candidate, baseline, equal_var=False)`.
//! Benchmark runs of two configurations rarely share a variance, so the
//! pooled-variance Student test is not used.
//!
//! # Interval of the percent difference
//!
//! `diff_pct = 100 · (mean_c - mean_b) / mean_b = 100 · (R - 1)` with the
//! ratio of means `R = mean_c / mean_b`. Its interval comes from **Fieller's
//! theorem** (E. C. Fieller, "Some problems in interval estimation", JRSS B
//! 16, 1954) for the ratio of two independent means: the set of ratios `R`
//! for which the pivot `(mean_c - R · mean_b) / √(vc + R² · vb)` stays within
//! ±t, where t is the two-sided Student critical value at the Welch
//! degrees of freedom above. With `g = t² · vb / mean_b²` and `R̂ = mean_c /
//! mean_b` its bounds are
//!
//! ```text
//! R = (R̂ ± (t / |mean_b|) · √(vc + R̂² · vb - g · vc)) / (1 - g)
//! ```
//!
//! Why Fieller rather than the delta method (R̂ ± t · R̂ · √(vc / mean_c² +
//! vb / mean_b²)):
//!
//! * A ratio's sampling distribution is skewed; Fieller's interval is
//!   asymmetric accordingly, the delta method's is forced symmetric and
//!   under-covers when the baseline is noisy.
//! * It agrees exactly with the test: at `R = 1` the pivot *is* Welch's t, so
//!   with `level = 1 - alpha` the interval excludes 0 % exactly when
//!   `p < alpha`. A report never shows "significant" beside an interval
//!   that straddles zero, or the reverse.
//! * When the baseline mean is itself not distinguishable from zero
//!   (`g ≥ 1`) no finite interval exists; Fieller says so, and the interval
//!   is returned as (-∞, +∞), where the delta method would print a
//!   misleadingly finite one.
//!
//! Approximation: under unequal variances the pivot's degrees of freedom
//! depend on `R`; the Welch–Satterthwaite df of the difference (the value
//! at `R = 1`) is used throughout, which is what keeps the interval and the
//! test consistent.
//!
//! # Degenerate inputs
//!
//! When both samples have zero variance the means are known exactly: equal
//! means give t = 0, p = 1; different means give t = ±∞, p = 0. Either way
//! the interval has zero width at `diff_pct`, and `df` is reported as
//! `nb + nc - 2` (Welch's formula is 0/0 there).

use serde::Serialize;

use super::interval::{t_cdf, t_critical, valid_level, Interval};
use super::summary::{all_finite, mean, sample_stddev};

/// Result of comparing a candidate's runs against a baseline's.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Comparison {
    /// Percent difference of the means, 100 · (mean_c - mean_b) / mean_b.
    pub diff_pct: f64,
    /// Confidence interval of `diff_pct` by Fieller's theorem (module doc).
    pub diff_pct_ci: Interval,
    /// Welch's t statistic, positive when the candidate mean is larger.
    pub t: f64,
    /// Welch–Satterthwaite degrees of freedom.
    pub df: f64,
    /// Two-sided p-value.
    pub p_value: f64,
}

/// Compares `candidate` against `baseline` with Welch's t-test, and gives
/// the percent difference of the means with a Fieller interval at `level`.
///
/// `None` when either side has fewer than two runs, any value is not
/// finite, the baseline mean is 0, `level` is not in (0, 1), or the
/// arithmetic overflows (magnitudes near `f64::MAX`). Never NaN otherwise.
pub fn welch(baseline: &[f64], candidate: &[f64], level: f64) -> Option<Comparison> {
    let b = Sample::new(baseline)?;
    let c = Sample::new(candidate)?;
    if b.mean == 0.0 || !valid_level(level) {
        return None;
    }
    let diff_pct = 100.0 * (c.mean - b.mean) / b.mean;
    let comparison = if b.var_of_mean + c.var_of_mean == 0.0 {
        exact_comparison(&b, &c, diff_pct, level)
    } else {
        welch_comparison(&b, &c, diff_pct, level)
    };
    comparison.filter(is_sane)
}

/// Mean, variance of the mean (s² / n) and count of one side.
struct Sample {
    n: f64,
    mean: f64,
    var_of_mean: f64,
}

impl Sample {
    fn new(xs: &[f64]) -> Option<Sample> {
        if xs.len() < 2 || !all_finite(xs) {
            return None;
        }
        let n = xs.len() as f64;
        let m = mean(xs);
        let s = sample_stddev(xs, m);
        Some(Sample {
            n,
            mean: m,
            var_of_mean: s * s / n,
        })
    }
}

/// Both variances zero: the means are exact.
fn exact_comparison(b: &Sample, c: &Sample, diff_pct: f64, level: f64) -> Option<Comparison> {
    let (t, p_value) = if c.mean == b.mean {
        (0.0, 1.0)
    } else {
        (f64::INFINITY.copysign(c.mean - b.mean), 0.0)
    };
    Some(Comparison {
        diff_pct,
        diff_pct_ci: Interval {
            low: diff_pct,
            high: diff_pct,
            level,
        },
        t,
        df: b.n + c.n - 2.0,
        p_value,
    })
}

fn welch_comparison(b: &Sample, c: &Sample, diff_pct: f64, level: f64) -> Option<Comparison> {
    let t = (c.mean - b.mean) / (b.var_of_mean + c.var_of_mean).sqrt();
    let df = welch_df(b, c);
    let ratio = fieller_ratio_bounds(b, c, t_critical(level, df));
    Some(Comparison {
        diff_pct,
        diff_pct_ci: Interval {
            low: 100.0 * (ratio.0 - 1.0),
            high: 100.0 * (ratio.1 - 1.0),
            level,
        },
        t,
        df,
        p_value: two_sided_p(t, df)?,
    })
}

/// Welch–Satterthwaite df, computed on the variance shares (each over their
/// sum) so that tiny variances cannot underflow to 0/0.
fn welch_df(b: &Sample, c: &Sample) -> f64 {
    let total = b.var_of_mean + c.var_of_mean;
    let (wb, wc) = (b.var_of_mean / total, c.var_of_mean / total);
    1.0 / (wb * wb / (b.n - 1.0) + wc * wc / (c.n - 1.0))
}

/// Fieller bounds `(low, high)` of mean_c / mean_b for critical value `t`;
/// `(-∞, +∞)` when the baseline mean is not significantly non-zero.
fn fieller_ratio_bounds(b: &Sample, c: &Sample, t: f64) -> (f64, f64) {
    let g = t * t * b.var_of_mean / (b.mean * b.mean);
    if g.is_nan() || g >= 1.0 {
        return (f64::NEG_INFINITY, f64::INFINITY);
    }
    let ratio = c.mean / b.mean;
    let radicand = c.var_of_mean + ratio * ratio * b.var_of_mean - g * c.var_of_mean;
    let spread = t / b.mean.abs() * radicand.max(0.0).sqrt();
    ((ratio - spread) / (1.0 - g), (ratio + spread) / (1.0 - g))
}

/// Two-sided p-value of `t` under Student t with `df` degrees of freedom.
fn two_sided_p(t: f64, df: f64) -> Option<f64> {
    let p = 2.0 * t_cdf(-t.abs(), df);
    (!p.is_nan()).then_some(p.min(1.0))
}

/// Rejects results of overflowed arithmetic: nothing may be NaN, and only
/// the interval bounds may be infinite (an unbounded Fieller set).
fn is_sane(cmp: &Comparison) -> bool {
    cmp.diff_pct.is_finite()
        && cmp.df.is_finite()
        && cmp.p_value.is_finite()
        && !cmp.t.is_nan()
        && !cmp.diff_pct_ci.low.is_nan()
        && !cmp.diff_pct_ci.high.is_nan()
}
