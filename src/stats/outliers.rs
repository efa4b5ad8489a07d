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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::assert_close;

    // Reference: SciPy 1.17.1 / NumPy 2.4.6,
    // python3 -c "import numpy as np, scipy.stats as st; x=[12.5,11.8,13.1,12.9,12.2,14.0,12.7,30.0]; m=st.median_abs_deviation(x); print(repr(m), np.nonzero(np.abs(np.array(x)-np.median(x))/(1.4826*m) > 3.5)[0])"
    #[test]
    fn one_disturbed_run_matches_scipy() {
        let xs = [12.5, 11.8, 13.1, 12.9, 12.2, 14.0, 12.7, 30.0];
        assert_close(mad(&xs), 0.45000000000000107);
        assert_eq!(mad_outliers(&xs, DEFAULT_THRESHOLD), vec![7]);
    }

    // Reference: SciPy 1.17.1 / NumPy 2.4.6, outliers on both sides and a
    // higher threshold,
    // python3 -c "import numpy as np, scipy.stats as st; x=np.array([1.0,2.0,3.0,4.0,100.0,-50.0,2.5]); m=st.median_abs_deviation(x); z=np.abs(x-np.median(x))/(1.4826*m); print(repr(m), np.nonzero(z > 3.5)[0], np.nonzero(z > 30)[0])"
    #[test]
    fn both_sides_and_thresholds_match_numpy() {
        let xs = [1.0, 2.0, 3.0, 4.0, 100.0, -50.0, 2.5];
        assert_close(mad(&xs), 1.5);
        assert_eq!(mad_outliers(&xs, DEFAULT_THRESHOLD), vec![4, 5]);
        assert_eq!(mad_outliers(&xs, 30.0), vec![4]);
    }

    // Reference: SciPy 1.17.1 / NumPy 2.4.6, a quiet sample has none,
    // python3 -c "import numpy as np, scipy.stats as st; x=np.array([5.1,5.0,5.2,4.9,5.0,5.3]); m=st.median_abs_deviation(x); print(repr(m), np.nonzero(np.abs(x-np.median(x))/(1.4826*m) > 3.5)[0])"
    #[test]
    fn quiet_sample_has_no_outliers() {
        let xs = [5.1, 5.0, 5.2, 4.9, 5.0, 5.3];
        assert_close(mad(&xs), 0.09999999999999964);
        assert!(mad_outliers(&xs, DEFAULT_THRESHOLD).is_empty());
    }

    // Reference: SciPy 1.17.1,
    // python3 -c "import scipy.stats as st; print(st.median_abs_deviation([2.0,2.0,2.0,2.0,3.0,9.0]))"
    // gives 0.0; by the documented rule a zero MAD flags nothing (9.0 would
    // otherwise score infinity).
    #[test]
    fn zero_mad_flags_nothing() {
        let xs = [2.0, 2.0, 2.0, 2.0, 3.0, 9.0];
        assert_eq!(mad(&xs), 0.0);
        assert!(mad_outliers(&xs, DEFAULT_THRESHOLD).is_empty());
        assert!(mad_outliers(&[4.0; 5], DEFAULT_THRESHOLD).is_empty());
    }

    // Reference: SciPy 1.17.1, python3 -c "import scipy.stats as st; print(st.median_abs_deviation([]), st.median_abs_deviation([1.0, float('nan')]))"
    // gives nan nan; one value has a MAD of 0.
    #[test]
    fn degenerate_inputs() {
        assert!(mad(&[]).is_nan());
        assert!(mad(&[1.0, f64::NAN]).is_nan());
        assert!(mad(&[1.0, f64::INFINITY, 2.0]).is_nan());
        assert_eq!(mad(&[3.0]), 0.0);
        assert!(mad_outliers(&[], DEFAULT_THRESHOLD).is_empty());
        assert!(mad_outliers(&[1.0, 2.0, 3.0, f64::NAN], DEFAULT_THRESHOLD).is_empty());
        assert!(mad_outliers(&[1.0, 2.0, 3.0, 100.0], f64::NAN).is_empty());
    }

    #[test]
    fn default_threshold_is_iglewicz_hoaglin() {
        assert_eq!(DEFAULT_THRESHOLD, 3.5);
    }
}
