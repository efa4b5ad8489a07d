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
//! * [`ratio`]: candidate against baseline on the ratio scale: the ratio
//!   of geometric means with a t-interval of the mean log ratio, paired by
//!   round or by Welch's t (Kalibera & Jones, "Rigorous benchmarking in
//!   reasonable time", ISMM 2013; benchstat's practice). Its bounds never
//!   reach -100 %.
//! * [`compare`]: candidate against baseline on the values themselves, for
//!   metrics that can be zero or negative: Welch's unequal-variances t-test
//!   and Fieller's interval for the percent difference of the means.
//! * [`analysis`]: which of those the plan's design and the data call for.
//! * [`equivalence`]: two one-sided tests of a difference against the
//!   edges of a margin (±5 % unless the workload says otherwise): the
//!   interval inside the margin is "equivalent".
//! * [`sequential`]: the same comparisons judged after every round of a
//!   sequential plan, with α spent over the looks it may take.
//! * [`resolve`]: how many runs an inconclusive interval would need to
//!   settle a difference of a given size.
//! * [`multiple`]: Benjamini–Hochberg adjusted p-values, so that a
//!   family of comparisons (a study's cells, a campaign's workloads) is
//!   judged as one.
//! * [`outliers`]: modified z-scores from the median absolute deviation
//!   (Iglewicz & Hoaglin), to flag disturbed runs.
//! * [`capacity`]: the highest offered rate that meets a latency target,
//!   from probes at set rates: each run's margin past the target, the
//!   knee where a line fitted near it crosses zero with Fieller's
//!   interval, and two capacities compared on the log scale.
//! * [`verdict`](mod@verdict): better, worse, equivalent within a margin, or inconclusive
//!   at a given significance level, with respect to the metric's
//!   [`Direction`](crate::metric::Direction); and the three outcomes a
//!   comparison ends in: different, equivalent, or inconclusive.
//!
//! Distribution functions (Student t, normal) come from the `statrs` crate;
//! none is written by hand here. statrs 0.18's Student t inverse CDF is
//! too coarse (and can fail to terminate) for large df, so [`t_quantile`]
//! refines it by Newton's method on statrs's own CDF: see [`interval`]. The unit tests compare every number with
//! reference values computed by SciPy/NumPy, and each test names the exact
//! Python expression that produced its references.

pub mod analysis;
pub mod capacity;
pub mod changepoint;
pub mod compare;
pub mod equivalence;
pub mod interval;
pub mod multiple;
pub mod outliers;
pub mod ratio;
pub mod resolve;
pub mod sequential;
pub mod summary;
pub mod verdict;

pub use analysis::{compare_runs, equivalence_runs, Analysis, Design, RoundValue};
pub use compare::{welch, Comparison, Method};
pub use equivalence::{Margin, DEFAULT_MARGIN_PCT};
pub use interval::{mean_ci, median_ci_bootstrap, t_quantile, Interval};
pub use multiple::{benjamini_hochberg, outcomes};
pub use outliers::{mad, mad_outliers, DEFAULT_THRESHOLD};
pub use ratio::{paired_log, welch_log};
pub use resolve::{runs_for_half_width, runs_to_decide, runs_to_resolve};
pub use sequential::{judge, Judged, Looks};
pub use summary::{summarize, Summary};
pub use verdict::{outcome, verdict, Outcome, Verdict, DEFAULT_ALPHA};

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

/// A reproducible stream of uniform draws in [0, 1) for the tests that
/// check a rule on thousands of random cases (splitmix64, as the
/// bootstrap's generator).
#[cfg(test)]
fn uniform_stream(mut seed: u64) -> impl FnMut() -> f64 {
    move || {
        seed = seed.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = seed;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        ((z ^ (z >> 31)) >> 11) as f64 / (1u64 << 53) as f64
    }
}
