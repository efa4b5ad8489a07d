//! The verdict of a comparison: better, worse, or no significant
//! difference.
//!
//! A difference is significant when Welch's two-sided p-value is below the
//! significance level alpha, [`DEFAULT_ALPHA`] = 0.05 by convention (R. A.
//! Fisher, "Statistical Methods for Research Workers", 1925). Only then
//! does its sign count: for a [`Direction::HigherIsBetter`] metric
//! (throughput, IOPS) a larger candidate mean is better; for a
//! [`Direction::LowerIsBetter`] metric (latency) a smaller one is.
//!
//! The sign is read from Welch's t (the sign of mean_c - mean_b), not from
//! the percent difference, so that a negative baseline mean cannot flip it.
//! With `level = 1 - alpha` the verdict agrees with the percent-difference
//! interval of [`crate::stats::compare`]: significant exactly when the
//! interval excludes 0 %.

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

impl Verdict {
    /// The word a report prints: "faster" for better and "slower" for worse,
    /// whatever the direction (a lower latency and a higher throughput are
    /// both "faster"), or "no significant difference".
    pub fn word(self, direction: Direction) -> &'static str {
        match (self, direction) {
            (Verdict::Better, _) => "faster",
            (Verdict::Worse, _) => "slower",
            (Verdict::NoSignificantDifference, _) => "no significant difference",
        }
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
