//! Candidate against baseline on the values themselves (`[plan] analysis =
//! "means"`, and metrics that can be zero or negative, which have no log):
//! Welch's t-test and the percent difference of the means with its
//! confidence interval. Positive metrics are compared on the ratio scale
//! instead ([`crate::stats::ratio`]), whose interval never reaches -100 %;
//! Fieller's can, with two or three noisy runs (see the tiny-writes case in
//! `ratio`'s tests).
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
//! * It agrees with the test: at `R = 1` the pivot *is* Welch's t, so with
//!   `level = 1 - alpha` a bounded interval excludes 0 % exactly when
//!   `p < alpha` (up to rounding at the boundary). A report never shows
//!   "significant" beside an interval that straddles zero, or the reverse.
//! * When the baseline mean is itself not distinguishable from zero
//!   (`g ≥ 1`) no finite interval exists: Fieller's confidence set is the
//!   whole line or two disjoint rays. It is returned as (-∞, +∞), where the
//!   delta method would print a misleadingly finite interval. Only in this
//!   case can the interval contain 0 % while `p < alpha`; benchmark
//!   baselines (positive, with a small CV) do not get there.
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

/// How a [`Comparison`] was computed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Method {
    /// Runs paired by round: Student t on the per-round log ratios
    /// ([`crate::stats::ratio::paired_log`]).
    PairedLog,
    /// Unpaired runs: Welch's t on the logs
    /// ([`crate::stats::ratio::welch_log`]).
    WelchLog,
    /// Welch's t on the values themselves, Fieller's interval for the ratio
    /// of the means ([`welch`]): for metrics that can be zero or negative.
    WelchMeans,
    /// Two capacities: the difference of their logs, its standard error
    /// from each one's interval ([`crate::stats::capacity::compare`]).
    Knees,
}

impl Method {
    /// True for the methods that work on the log scale, whose percent
    /// difference is a ratio of geometric means.
    pub fn is_log(self) -> bool {
        matches!(self, Method::PairedLog | Method::WelchLog | Method::Knees)
    }
}

/// Result of comparing a candidate's runs against a baseline's.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Comparison {
    pub method: Method,
    /// Percent difference: of the geometric means for the log methods,
    /// 100 · (exp(mean log ratio) - 1); of the arithmetic means for
    /// [`Method::WelchMeans`], 100 · (mean_c - mean_b) / mean_b.
    pub diff_pct: f64,
    /// Confidence interval of `diff_pct` (see each method).
    pub diff_pct_ci: Interval,
    /// The t statistic, positive when the candidate is larger.
    pub t: f64,
    /// Degrees of freedom of `t`.
    pub df: f64,
    /// Two-sided p-value.
    pub p_value: f64,
    /// Runs compared: the pairs for [`Method::PairedLog`], the smaller of
    /// the two sides otherwise.
    pub n: usize,
    /// Standard error of the estimated difference on the method's scale:
    /// in log units for the log methods, relative to |mean_b| for
    /// [`Method::WelchMeans`]. With `df` it says how the interval would
    /// narrow with more runs ([`crate::stats::resolve`]).
    pub se: f64,
    /// For [`Method::WelchMeans`]: what Fieller's interval needs beyond
    /// the fields above to be built at another level
    /// ([`Comparison::interval_at`]); `None` for the other methods.
    #[serde(skip)]
    pub fieller: Option<Fieller>,
}

/// The part of Fieller's interval that `diff_pct`, `se` and `df` do not
/// hold: how the variance of the difference splits between the sides.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Fieller {
    /// `vb / (vb + vc)`: the baseline's share of the variance.
    pub baseline_share: f64,
    /// The set is cut at a ratio of 0 (-100 %): figures that cannot be
    /// negative ([`crate::stats::analysis`]).
    pub floor: bool,
}

impl Comparison {
    /// The interval of `diff_pct` this comparison's method gives at
    /// `level` (its own `diff_pct_ci` at its own level): on the log scale
    /// `exp(estimate ± t · se)`, for Welch on the means Fieller's bounds.
    /// A family judged on adjusted p-values shows its verdicts' intervals
    /// at the level its adjusted p implies
    /// (`crate::analysis::model::family`). `None` when `level` has no
    /// critical value, or a Welch comparison lacks its [`Fieller`] parts.
    pub fn interval_at(&self, level: f64) -> Option<Interval> {
        if !valid_level(level) {
            return None;
        }
        if self.se == 0.0 {
            return Some(Interval {
                level,
                ..self.diff_pct_ci
            });
        }
        let t = t_critical(level, self.df);
        if t.is_nan() {
            return None;
        }
        let (low, high) = match self.method {
            Method::WelchMeans => self.fieller?.bounds(self.diff_pct, self.se, t),
            _ => {
                let estimate = (self.diff_pct / 100.0).ln_1p();
                let pct = |x: f64| 100.0 * x.exp_m1();
                (pct(estimate - t * self.se), pct(estimate + t * self.se))
            }
        };
        Some(Interval { low, high, level })
    }
}

impl Fieller {
    /// Fieller's bounds of the % difference at critical value `t`, from
    /// the ratio `1 + diff_pct / 100` and the relative variances
    /// `vb / mean_b²`, `vc / mean_b²` that `se²` splits into (module doc).
    fn bounds(self, diff_pct: f64, se: f64, t: f64) -> (f64, f64) {
        let b = self.baseline_share * se * se;
        let c = (1.0 - self.baseline_share) * se * se;
        let ratio = fieller_bounds(1.0 + diff_pct / 100.0, b, c, t);
        let low = 100.0 * (ratio.0 - 1.0);
        let low = if self.floor { low.max(-100.0) } else { low };
        (low, 100.0 * (ratio.1 - 1.0))
    }
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
pub(super) struct Sample {
    pub(super) n: f64,
    pub(super) mean: f64,
    pub(super) var_of_mean: f64,
}

impl Sample {
    pub(super) fn new(xs: &[f64]) -> Option<Sample> {
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
        method: Method::WelchMeans,
        diff_pct,
        diff_pct_ci: Interval {
            low: diff_pct,
            high: diff_pct,
            level,
        },
        t,
        df: b.n + c.n - 2.0,
        p_value,
        n: b.n.min(c.n) as usize,
        se: 0.0,
        fieller: None,
    })
}

fn welch_comparison(b: &Sample, c: &Sample, diff_pct: f64, level: f64) -> Option<Comparison> {
    let t = (c.mean - b.mean) / (b.var_of_mean + c.var_of_mean).sqrt();
    let df = welch_df(b, c);
    let ratio = fieller_ratio_bounds(b, c, t_critical(level, df));
    Some(Comparison {
        method: Method::WelchMeans,
        diff_pct,
        diff_pct_ci: Interval {
            low: 100.0 * (ratio.0 - 1.0),
            high: 100.0 * (ratio.1 - 1.0),
            level,
        },
        t,
        df,
        p_value: two_sided_p(t, df)?,
        n: b.n.min(c.n) as usize,
        se: (b.var_of_mean + c.var_of_mean).sqrt() / b.mean.abs(),
        fieller: Some(Fieller {
            baseline_share: b.var_of_mean / (b.var_of_mean + c.var_of_mean),
            floor: false,
        }),
    })
}

/// Welch–Satterthwaite df, computed on the variance shares (each over their
/// sum) so that tiny variances cannot underflow to 0/0.
pub(super) fn welch_df(b: &Sample, c: &Sample) -> f64 {
    let total = b.var_of_mean + c.var_of_mean;
    let (wb, wc) = (b.var_of_mean / total, c.var_of_mean / total);
    1.0 / (wb * wb / (b.n - 1.0) + wc * wc / (c.n - 1.0))
}

/// Fieller bounds `(low, high)` of mean_c / mean_b for critical value `t`;
/// `(-∞, +∞)` when the baseline mean is not significantly non-zero, or when
/// no critical value exists (`t` NaN, for a level beyond 1 - 2·10⁻¹²).
fn fieller_ratio_bounds(b: &Sample, c: &Sample, t: f64) -> (f64, f64) {
    let squared = b.mean * b.mean;
    fieller_bounds(
        c.mean / b.mean,
        b.var_of_mean / squared,
        c.var_of_mean / squared,
        t,
    )
}

/// Fieller bounds of the ratio `ratio` whose sides' variances of the mean,
/// relative to the baseline's squared mean, are `b` and `c`.
fn fieller_bounds(ratio: f64, b: f64, c: f64, t: f64) -> (f64, f64) {
    let g = t * t * b;
    if g.is_nan() || g >= 1.0 {
        return (f64::NEG_INFINITY, f64::INFINITY);
    }
    let radicand = c + ratio * ratio * b - g * c;
    let spread = t * radicand.max(0.0).sqrt();
    ((ratio - spread) / (1.0 - g), (ratio + spread) / (1.0 - g))
}

/// Two-sided p-value of `t` under Student t with `df` degrees of freedom.
pub(super) fn two_sided_p(t: f64, df: f64) -> Option<f64> {
    let p = 2.0 * t_cdf(-t.abs(), df);
    (!p.is_nan()).then_some(p.min(1.0))
}

/// Rejects results of overflowed arithmetic: nothing may be NaN, and only
/// the interval bounds may be infinite (an unbounded Fieller set).
pub(super) fn is_sane(cmp: &Comparison) -> bool {
    cmp.diff_pct.is_finite()
        && cmp.df.is_finite()
        && cmp.p_value.is_finite()
        && !cmp.t.is_nan()
        && !cmp.se.is_nan()
        && !cmp.diff_pct_ci.low.is_nan()
        && !cmp.diff_pct_ci.high.is_nan()
}

#[cfg(test)]
mod tests {
    //! Welch references: SciPy 1.17.1,
    //! `python3 -c "import scipy.stats as st; r = st.ttest_ind(C, B, equal_var=False); print(repr(r.statistic), repr(r.df), repr(r.pvalue))"`
    //! with the candidate C first, as `welch` defines t = (mean_c - mean_b) / se.
    //!
    //! Percent-difference interval references: an independent NumPy 2.4.6
    //! computation that solves Fieller's defining quadratic with `np.roots`
    //! instead of the closed form used here:
    //!
    //! ```text
    //! python3 - <<'EOF'
    //! import numpy as np, scipy.stats as st
    //! B = [...]; C = [...]   # baseline, candidate
    //! mb, mc = np.mean(B), np.mean(C)
    //! vb, vc = np.var(B, ddof=1) / len(B), np.var(C, ddof=1) / len(C)
    //! q = st.t.ppf(0.975, st.ttest_ind(C, B, equal_var=False).df)
    //! # the ratios R with (mc - R*mb)**2 == q**2 * (vc + R**2 * vb)
    //! R = np.sort(np.roots([mb**2 - q**2*vb, -2*mb*mc, mc**2 - q**2*vc]).real)
    //! print(100 * (R - 1), 100 * (mc - mb) / mb)
    //! EOF
    //! ```

    use super::*;
    use crate::stats::assert_close;

    struct Reference {
        t: f64,
        df: f64,
        p: f64,
        diff_pct: f64,
        low: f64,
        high: f64,
    }

    #[track_caller]
    fn check(baseline: &[f64], candidate: &[f64], r: Reference) {
        let cmp = welch(baseline, candidate, 0.95).unwrap();
        assert_close(cmp.t, r.t);
        assert_close(cmp.df, r.df);
        assert_close(cmp.p_value, r.p);
        assert_close(cmp.diff_pct, r.diff_pct);
        assert_close(cmp.diff_pct_ci.low, r.low);
        assert_close(cmp.diff_pct_ci.high, r.high);
        assert_eq!(cmp.diff_pct_ci.level, 0.95);
    }

    // B=[101.2,98.7,102.5,99.9,100.4,97.8,101.9,100.6];
    // C=[104.1,106.3,103.8,105.2,107.0,104.9,105.5] (module-doc commands).
    #[test]
    fn throughput_gain_matches_scipy() {
        check(
            &[101.2, 98.7, 102.5, 99.9, 100.4, 97.8, 101.9, 100.6],
            &[104.1, 106.3, 103.8, 105.2, 107.0, 104.9, 105.5],
            Reference {
                t: 6.953674648167519,
                df: 12.625209990082148,
                p: 1.1699966634799237e-05,
                diff_pct: 4.863903220067599,
                low: 3.31663455168949,
                high: 6.441258315796161,
            },
        );
    }

    // B=[250.3,248.1,255.7,251.2,249.9,253.4];
    // C=[231.8,229.4,235.1,233.0,230.7,232.2] (module-doc commands).
    #[test]
    fn latency_drop_matches_scipy() {
        check(
            &[250.3, 248.1, 255.7, 251.2, 249.9, 253.4],
            &[231.8, 229.4, 235.1, 233.0, 230.7, 232.2],
            Reference {
                t: -14.198500937687601,
                df: 9.088188422524166,
                p: 1.641336416232809e-07,
                diff_pct: -7.71576295903488,
                low: -8.872699821153873,
                high: -6.540515287504645,
            },
        );
    }

    // B=[10.1,9.8,10.3,10.0,9.9]; C=[10.2,9.7,10.1,10.0,10.2] (module-doc
    // commands).
    #[test]
    fn no_difference_matches_scipy() {
        check(
            &[10.1, 9.8, 10.3, 10.0, 9.9],
            &[10.2, 9.7, 10.1, 10.0, 10.2],
            Reference {
                t: 0.15811388300842966,
                df: 7.955251709136108,
                p: 0.8783068839322968,
                diff_pct: 0.1996007984032071,
                low: -2.6784853794993957,
                high: 3.15641580141679,
            },
        );
    }

    // Unequal sizes and variances, where Welch's df and Fieller's asymmetry
    // show: B=[1.02,0.98,1.05,0.97,1.01];
    // C=[1.10,0.85,1.30,0.95,1.20,1.05,0.90,1.15,1.25] (module-doc commands).
    #[test]
    fn unequal_variances_match_scipy() {
        check(
            &[1.02, 0.98, 1.05, 0.97, 1.01],
            &[1.10, 0.85, 1.30, 0.95, 1.20, 1.05, 0.90, 1.15, 1.25],
            Reference {
                t: 1.4157399670941175,
                df: 9.130131573315008,
                p: 0.1900471202718604,
                diff_pct: 7.687210072895973,
                low: -4.531720485663138,
                high: 20.129742816932694,
            },
        );
    }

    // A constant baseline: Welch's df falls back to the candidate's n - 1.
    // B=[5.0,5.0,5.0,5.0]; C=[5.1,5.3,4.9,5.2,5.0] (module-doc commands).
    #[test]
    fn constant_baseline_matches_scipy() {
        check(
            &[5.0, 5.0, 5.0, 5.0],
            &[5.1, 5.3, 4.9, 5.2, 5.0],
            Reference {
                t: 1.4142135623730911,
                df: 4.0,
                p: 0.23019964108049984,
                diff_pct: 1.999999999999993,
                low: -1.9264863229553009,
                high: 5.9264863229553155,
            },
        );
    }

    // A baseline mean indistinguishable from zero: the quadratic's leading
    // coefficient mb**2 - q**2*vb is negative (module-doc command prints the
    // roots of an unbounded set), so the interval is (-inf, +inf); t, df and
    // p still match SciPy. B=[0.5,-0.4,0.3,-0.2]; C=[1.0,1.1,0.9,1.05].
    #[test]
    fn noisy_zero_baseline_gives_unbounded_interval() {
        let cmp = welch(&[0.5, -0.4, 0.3, -0.2], &[1.0, 1.1, 0.9, 1.05], 0.95).unwrap();
        assert_close(cmp.t, 4.488187591842574);
        assert_close(cmp.df, 3.2472203673599154);
        assert_close(cmp.p_value, 0.017404784406544364);
        assert_close(cmp.diff_pct, 1925.0000000000002);
        assert_eq!(cmp.diff_pct_ci.low, f64::NEG_INFINITY);
        assert_eq!(cmp.diff_pct_ci.high, f64::INFINITY);
    }

    // Reference: the definition of Fieller's interval. At each bound R the
    // pivot (mc - R mb) / sqrt(vc + R^2 vb) equals the critical value, and
    // with level = 1 - alpha the interval excludes 0 % iff p < alpha.
    #[test]
    fn fieller_bounds_solve_the_pivot_and_agree_with_the_test() {
        let b = [101.2, 98.7, 102.5, 99.9, 100.4, 97.8, 101.9, 100.6];
        let c = [104.1, 106.3, 103.8, 105.2, 107.0, 104.9, 105.5];
        let cmp = welch(&b, &c, 0.95).unwrap();
        let (sb, sc) = (Sample::new(&b).unwrap(), Sample::new(&c).unwrap());
        let q = t_critical(0.95, cmp.df);
        for bound in [cmp.diff_pct_ci.low, cmp.diff_pct_ci.high] {
            let r = 1.0 + bound / 100.0;
            let pivot = (sc.mean - r * sb.mean) / (sc.var_of_mean + r * r * sb.var_of_mean).sqrt();
            assert_close(pivot.abs(), q);
        }
        let pairs: [(&[f64], &[f64]); 3] = [
            (&b, &c),
            (
                &[10.1, 9.8, 10.3, 10.0, 9.9],
                &[10.2, 9.7, 10.1, 10.0, 10.2],
            ),
            (
                &[1.02, 0.98, 1.05, 0.97, 1.01],
                &[1.10, 0.85, 1.30, 0.95, 1.20],
            ),
        ];
        for (b, c) in pairs {
            for level in [0.8, 0.9, 0.95, 0.99] {
                let cmp = welch(b, c, level).unwrap();
                assert_eq!(
                    cmp.diff_pct_ci.contains(0.0),
                    cmp.p_value >= 1.0 - level,
                    "level {level}: {cmp:?}"
                );
            }
        }
    }

    // Reference: the documented convention for two constant samples (the
    // means are exact; df = nb + nc - 2).
    #[test]
    fn both_variances_zero() {
        let same = welch(&[3.0; 4], &[3.0; 5], 0.95).unwrap();
        assert_eq!((same.t, same.p_value, same.df), (0.0, 1.0, 7.0));
        assert_eq!(same.diff_pct, 0.0);
        assert_eq!((same.diff_pct_ci.low, same.diff_pct_ci.high), (0.0, 0.0));

        let up = welch(&[2.0; 3], &[3.0; 3], 0.95).unwrap();
        assert_eq!((up.t, up.p_value, up.df), (f64::INFINITY, 0.0, 4.0));
        assert_eq!(up.diff_pct, 50.0);
        assert_eq!((up.diff_pct_ci.low, up.diff_pct_ci.high), (50.0, 50.0));

        let down = welch(&[4.0; 3], &[3.0; 2], 0.95).unwrap();
        assert_eq!((down.t, down.p_value), (f64::NEG_INFINITY, 0.0));
        assert_eq!(down.diff_pct, -25.0);
    }

    // Reference: the documented `None` cases.
    #[test]
    fn undefined_comparisons_are_none() {
        let ok = [1.0, 2.0, 3.0];
        assert_eq!(welch(&[], &ok, 0.95), None);
        assert_eq!(welch(&ok, &[], 0.95), None);
        assert_eq!(welch(&[1.0], &ok, 0.95), None);
        assert_eq!(welch(&ok, &[1.0], 0.95), None);
        assert_eq!(welch(&[-1.0, 1.0], &ok, 0.95), None);
        assert_eq!(welch(&[1.0, f64::NAN], &ok, 0.95), None);
        assert_eq!(welch(&ok, &[f64::INFINITY, 1.0], 0.95), None);
        for level in [0.0, 1.0, f64::NAN, 2.0] {
            assert_eq!(welch(&ok, &ok, level), None);
        }
        assert_eq!(welch(&[f64::MAX, -f64::MAX / 2.0], &ok, 0.95), None);
    }

    // Welch's t, df and p are scale-invariant, so data scaled by 1e-100 (whose
    // squared variances of the mean underflow to 0, making the textbook df
    // formula 0/0) must give the unscaled SciPy 1.17.1 reference,
    // python3 -c "import scipy.stats as st; r=st.ttest_ind([2.0,3.0,4.5],[1.0,2.0,3.0],equal_var=False); print(repr(r.statistic), repr(r.df), repr(r.pvalue))"
    // (SciPy itself reports df = 1.0 on the scaled data).
    #[test]
    fn tiny_spreads_do_not_underflow_the_df() {
        let b = [1e-100, 2e-100, 3e-100];
        let c = [2e-100, 3e-100, 4.5e-100];
        let cmp = welch(&b, &c, 0.95).unwrap();
        assert_close(cmp.t, 1.2572371141874241);
        assert_close(cmp.df, 3.8059405940594067);
        assert_close(cmp.p_value, 0.28028685711650725);
        let unscaled = welch(&[1.0, 2.0, 3.0], &[2.0, 3.0, 4.5], 0.95).unwrap();
        assert_close(cmp.diff_pct_ci.low, unscaled.diff_pct_ci.low);
        assert_close(cmp.diff_pct_ci.high, unscaled.diff_pct_ci.high);
    }
}
