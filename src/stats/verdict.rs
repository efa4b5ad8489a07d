//! The verdict of a comparison: better, worse, or no significant
//! difference.
//!
//! A difference is significant when the comparison's two-sided p-value
//! (paired t or Welch's t, on logs or on the values: see
//! [`crate::stats::analysis`]) is below the
//! significance level alpha, [`DEFAULT_ALPHA`] = 0.05 by convention (R. A.
//! Fisher, "Statistical Methods for Research Workers", 1925). Only then
//! does its sign count: for a [`Direction::HigherIsBetter`] metric
//! (throughput, IOPS) a larger candidate mean is better; for a
//! [`Direction::LowerIsBetter`] metric (latency) a smaller one is.
//!
//! The sign is read from t (positive when the candidate is larger), not
//! from the percent difference, so that a negative baseline mean cannot
//! flip it. With `level = 1 - alpha` the verdict agrees with the
//! percent-difference interval: significant exactly when the interval
//! excludes 0 % (for Fieller's interval, when it is bounded).
//!
//! A comparison ends in one of three [`Outcome`]s: *different* (the test
//! above, with its direction), *equivalent* within a margin (its interval
//! inside ±margin: [`crate::stats::equivalence`]), or *inconclusive*,
//! neither yet. Equivalence is judged first: an interval inside ±5 % that
//! excludes 0 % says the targets differ by less than the margin the user
//! said does not matter, and is read as equivalent, with its effect shown.

use serde::Serialize;

use super::compare::Comparison;
use crate::metric::Direction;

/// Significance level used when the user sets none.
pub const DEFAULT_ALPHA: f64 = 0.05;

/// Whether the candidate is better than, worse than, or not significantly
/// different from the baseline.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    Better,
    Worse,
    NoSignificantDifference,
}

/// How a comparison ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// Its interval excludes no difference: better or worse.
    Different,
    /// Its interval lies inside the margin.
    Equivalent,
    /// Neither yet.
    Inconclusive,
}

impl Outcome {
    /// Whether the comparison is decided (different or equivalent).
    pub fn decided(self) -> bool {
        self != Outcome::Inconclusive
    }
}

/// The outcome of a comparison whose difference has p-value `p_different`
/// and whose equivalence within its margin `p_equivalent`, both as judged
/// (a family's adjusted ones): equivalent when `p_equivalent < alpha`, else
/// different when `p_different < alpha`, else inconclusive (module doc).
/// A NaN p-value decides nothing.
pub fn outcome(p_different: f64, p_equivalent: f64, alpha: f64) -> Outcome {
    if p_equivalent < alpha {
        Outcome::Equivalent
    } else if p_different < alpha {
        Outcome::Different
    } else {
        Outcome::Inconclusive
    }
}

/// The verdict on `cmp` for a metric of `direction` at significance level
/// `alpha`: significant iff `p_value < alpha` (so never for a NaN p-value
/// or alpha), then better when the candidate moved the good way.
pub fn verdict(cmp: &Comparison, direction: Direction, alpha: f64) -> Verdict {
    let significant = cmp.p_value < alpha;
    if !significant || cmp.t == 0.0 || cmp.t.is_nan() {
        return Verdict::NoSignificantDifference;
    }
    let candidate_higher = cmp.t > 0.0;
    let good = match direction {
        Direction::HigherIsBetter => candidate_higher,
        Direction::LowerIsBetter => !candidate_higher,
    };
    if good {
        Verdict::Better
    } else {
        Verdict::Worse
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::compare::welch;
    use crate::stats::Interval;

    fn comparison(diff_pct: f64, t: f64, p_value: f64) -> Comparison {
        Comparison {
            method: crate::stats::Method::WelchMeans,
            n: 5,
            se: 0.01,
            diff_pct,
            diff_pct_ci: Interval {
                low: diff_pct - 1.0,
                high: diff_pct + 1.0,
                level: 0.95,
            },
            t,
            df: 10.0,
            p_value,
            fieller: None,
        }
    }

    // Data and p-values: the latency and throughput cases of compare's tests
    // (SciPy 1.17.1 ttest_ind references there: p = 1.64e-07 and 1.17e-05).
    #[test]
    fn lower_latency_is_better_and_faster() {
        let baseline = [250.3, 248.1, 255.7, 251.2, 249.9, 253.4];
        let candidate = [231.8, 229.4, 235.1, 233.0, 230.7, 232.2];
        let drop = welch(&baseline, &candidate, 0.95).unwrap();
        let v = verdict(&drop, Direction::LowerIsBetter, DEFAULT_ALPHA);
        assert_eq!(v, Verdict::Better);
        // The same drop in a throughput is worse.
        let v = verdict(&drop, Direction::HigherIsBetter, DEFAULT_ALPHA);
        assert_eq!(v, Verdict::Worse);
        // And a latency rise is worse.
        let rise = welch(&candidate, &baseline, 0.95).unwrap();
        assert_eq!(
            verdict(&rise, Direction::LowerIsBetter, DEFAULT_ALPHA),
            Verdict::Worse
        );
    }

    #[test]
    fn higher_throughput_is_better_and_faster() {
        let baseline = [101.2, 98.7, 102.5, 99.9, 100.4, 97.8, 101.9, 100.6];
        let candidate = [104.1, 106.3, 103.8, 105.2, 107.0, 104.9, 105.5];
        let gain = welch(&baseline, &candidate, 0.95).unwrap();
        let v = verdict(&gain, Direction::HigherIsBetter, DEFAULT_ALPHA);
        assert_eq!(v, Verdict::Better);
        assert_eq!(
            verdict(&gain, Direction::LowerIsBetter, DEFAULT_ALPHA),
            Verdict::Worse
        );
    }

    // Data: compare's no_difference case (SciPy p = 0.878).
    #[test]
    fn insignificant_difference_either_direction() {
        let cmp = welch(
            &[10.1, 9.8, 10.3, 10.0, 9.9],
            &[10.2, 9.7, 10.1, 10.0, 10.2],
            0.95,
        )
        .unwrap();
        for direction in [Direction::HigherIsBetter, Direction::LowerIsBetter] {
            let v = verdict(&cmp, direction, DEFAULT_ALPHA);
            assert_eq!(v, Verdict::NoSignificantDifference);
        }
    }

    // Reference: the rule "significant iff p < alpha" (strict), and NaN
    // never significant.
    #[test]
    fn alpha_boundary_and_nan() {
        let up = Direction::HigherIsBetter;
        assert_eq!(
            verdict(&comparison(3.0, 2.5, 0.05), up, 0.05),
            Verdict::NoSignificantDifference
        );
        assert_eq!(
            verdict(&comparison(3.0, 2.5, 0.049), up, 0.05),
            Verdict::Better
        );
        assert_eq!(
            verdict(&comparison(3.0, 2.5, 0.049), up, 0.01),
            Verdict::NoSignificantDifference
        );
        assert_eq!(
            verdict(&comparison(3.0, 2.5, f64::NAN), up, 0.05),
            Verdict::NoSignificantDifference
        );
        assert_eq!(
            verdict(&comparison(3.0, 2.5, 0.01), up, f64::NAN),
            Verdict::NoSignificantDifference
        );
        assert_eq!(
            verdict(&comparison(3.0, f64::NAN, 0.01), up, 0.05),
            Verdict::NoSignificantDifference
        );
    }

    // Reference: two constant samples (compare's exact case: t = ±inf, p = 0).
    #[test]
    fn exact_difference_is_significant() {
        let cmp = welch(&[2.0; 3], &[1.5; 3], 0.95).unwrap();
        assert_eq!(
            verdict(&cmp, Direction::LowerIsBetter, DEFAULT_ALPHA),
            Verdict::Better
        );
        let same = welch(&[2.0; 3], &[2.0; 3], 0.95).unwrap();
        assert_eq!(
            verdict(&same, Direction::LowerIsBetter, DEFAULT_ALPHA),
            Verdict::NoSignificantDifference
        );
    }

    // The sign is read from t: a negative baseline mean flips diff_pct's
    // sign but not the verdict (B mean -10, C mean -5: the candidate is
    // higher, diff_pct = -50 %).
    #[test]
    fn negative_baseline_uses_the_sign_of_t() {
        let cmp = welch(&[-10.1, -9.9, -10.0], &[-5.1, -4.9, -5.0], 0.95).unwrap();
        assert!(cmp.diff_pct < 0.0 && cmp.t > 0.0);
        assert_eq!(
            verdict(&cmp, Direction::HigherIsBetter, DEFAULT_ALPHA),
            Verdict::Better
        );
    }

    // Reference: the rule of the module doc, equivalence first.
    #[test]
    fn three_outcomes() {
        assert_eq!(outcome(0.001, 0.2, 0.05), Outcome::Different);
        assert_eq!(outcome(0.2, 0.001, 0.05), Outcome::Equivalent);
        assert_eq!(outcome(0.001, 0.001, 0.05), Outcome::Equivalent);
        assert_eq!(outcome(0.2, 0.2, 0.05), Outcome::Inconclusive);
        assert_eq!(outcome(0.05, 0.05, 0.05), Outcome::Inconclusive);
        assert_eq!(outcome(f64::NAN, f64::NAN, 0.05), Outcome::Inconclusive);
        assert!(Outcome::Equivalent.decided() && !Outcome::Inconclusive.decided());
        let json = serde_json::to_string(&[Outcome::Different, Outcome::Inconclusive]).unwrap();
        assert_eq!(json, r#"["different","inconclusive"]"#);
    }

    #[test]
    fn serializes_in_snake_case() {
        let json = serde_json::to_string(&[
            Verdict::Better,
            Verdict::Worse,
            Verdict::NoSignificantDifference,
        ])
        .unwrap();
        assert_eq!(json, r#"["better","worse","no_significant_difference"]"#);
        assert_eq!(DEFAULT_ALPHA, 0.05);
    }
}
