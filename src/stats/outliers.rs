//! Outlier detection with modified z-scores.
//!
//! A run is an outlier when its modified z-score exceeds a threshold:
//!
//! ```text
//! |x - median| / (1.4826 · MAD) > threshold
//! ```
//!
//! where MAD is the median absolute deviation from the median. 1.4826 ≈
//! 1 / Φ⁻¹(3/4) makes 1.4826 · MAD a consistent estimator of the standard
//! deviation for normal data, so the score reads like a z-score that a few
//! wild runs cannot inflate. This is the modified z-score of B. Iglewicz
//! and D. C. Hoaglin, "How to Detect and Handle Outliers", ASQC Basic
//! References in Quality Control vol. 16, 1993, who recommend flagging
//! scores above 3.5 ([`DEFAULT_THRESHOLD`]); hyperfine's
//! `src/outlier_detection.rs` uses the same rule.
//!
//! When more than half the runs share one value the MAD is 0 and every
//! score is 0/0 or ∞. Rather than call every other run an outlier, no run
//! is flagged: with that little spread there is nothing to reject. Inputs
//! that are empty or hold NaN or ±∞ are not judged either.

use super::summary::{all_finite, median, median_in_place};

/// Modified z-score above which a run is an outlier (Iglewicz & Hoaglin).
pub const DEFAULT_THRESHOLD: f64 = 3.5;

/// Scale from the MAD to a consistent estimate of the standard deviation
/// for normal data, 1 / Φ⁻¹(3/4).
const MAD_TO_STDDEV: f64 = 1.4826;

/// Raw median absolute deviation, median(|x - median(x)|), without the
/// 1.4826 scale (SciPy's `stats.median_abs_deviation(x)`).
///
/// NaN for an empty slice or when any value is not finite, as SciPy gives.
pub fn mad(xs: &[f64]) -> f64 {
    if !all_finite(xs) {
        return f64::NAN;
    }
    let Some(center) = median(xs) else {
        return f64::NAN;
    };
    let mut deviations: Vec<f64> = xs.iter().map(|x| (x - center).abs()).collect();
    median_in_place(&mut deviations).unwrap_or(f64::NAN)
}

/// Indices, in increasing order, of the values of `xs` whose modified
/// z-score `|x - median| / (1.4826 · MAD)` exceeds `threshold`.
///
/// Empty when the MAD is 0 (more than half the values are equal), when
/// `xs` is empty or holds a non-finite value, or when `threshold` is NaN.
pub fn mad_outliers(xs: &[f64], threshold: f64) -> Vec<usize> {
    let spread = mad(xs);
    if spread.is_nan() || spread == 0.0 {
        return Vec::new();
    }
    let Some(center) = median(xs) else {
        return Vec::new();
    };
    let scale = MAD_TO_STDDEV * spread;
    xs.iter()
        .enumerate()
        .filter(|(_, x)| (*x - center).abs() / scale > threshold)
        .map(|(i, _)| i)
        .collect()
}
