//! Statistics that turn repeated benchmark runs into verdicts.
//!
//! Everything here is pure: slices of measurements in, numbers out. No
//! function panics, whatever the input (empty slices, a single run, NaN,
//! identical values); where no sound answer exists the function returns
//! `None`, or an empty list for outlier detection.
//!
//! The pieces, in the order a report uses them:
//!
//! * [`summary`]: mean, median, sample standard deviation and coefficient of
//!   variation of one set of runs.
//! * [`interval`]: confidence intervals for the mean (Student t) and for the
//!   median (percentile bootstrap with a seeded, reproducible generator).
//! * [`compare`]: candidate against baseline with Welch's unequal-variances
//!   t-test, and a confidence interval for the percent difference of the
//!   means by Fieller's theorem.
//! * [`outliers`]: modified z-scores from the median absolute deviation
//!   (Iglewicz & Hoaglin), to flag disturbed runs.
//! * [`verdict`](mod@verdict): better, worse, or no significant difference
//!   at a given significance level, with respect to the metric's
//!   [`Direction`](crate::metric::Direction).
//!
//! Distribution functions (Student t, normal) come from the `statrs` crate;
//! none is written by hand here. statrs 0.18's Student t inverse CDF is
//! too coarse (and can fail to terminate) for large df, so [`t_quantile`]
//! refines it by Newton's method on statrs's own CDF: see [`interval`]. The unit tests compare every number with
//! reference values computed by SciPy/NumPy, and each test names the exact
//! Python expression that produced its references.

pub mod compare;
pub mod interval;
pub mod outliers;
pub mod summary;
pub mod verdict;

pub use compare::{welch, Comparison};
pub use interval::{mean_ci, median_ci_bootstrap, t_quantile, Interval};
pub use outliers::{mad, mad_outliers, DEFAULT_THRESHOLD};
pub use summary::{summarize, Summary};
pub use verdict::{verdict, Verdict, DEFAULT_ALPHA};

/// Tolerance of the unit tests against their SciPy/NumPy references.
#[cfg(test)]
const TEST_TOLERANCE: f64 = 1e-9;

/// Asserts `actual` is within [`TEST_TOLERANCE`] of `expected`, relative to
/// `expected` when its magnitude is above 1 and absolute below.
#[cfg(test)]
#[track_caller]
fn assert_close(actual: f64, expected: f64) {
    let tolerance = TEST_TOLERANCE * expected.abs().max(1.0);
    assert!(
        (actual - expected).abs() <= tolerance,
        "expected {expected:e}, got {actual:e} (off by {:e})",
        (actual - expected).abs()
    );
}
