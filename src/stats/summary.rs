//! Descriptive statistics of one set of runs.
//!
//! * mean: arithmetic mean.
//! * median: middle value, the mean of the two middle values for an even
//!   count (NumPy's `np.median`).
//! * stddev: sample standard deviation with Bessel's correction (divisor
//!   n - 1, NumPy's `np.std(x, ddof=1)`), computed in two passes for
//!   accuracy; 0 for a single run.
//! * cv: coefficient of variation, stddev / |mean|; 0 for a single run and 0
//!   when the mean is 0 (never NaN or infinite).
//!
//! Any non-finite value (NaN, ±∞) makes the whole summary `None`: a broken
//! measurement must not silently become a number in a report.

use serde::Serialize;

/// Descriptive statistics of a non-empty set of finite measurements.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Summary {
    /// Number of measurements.
    pub n: usize,
    /// Arithmetic mean.
    pub mean: f64,
    /// Median (mean of the two middle values for an even count).
    pub median: f64,
    /// Sample standard deviation (divisor n - 1); 0 when n < 2.
    pub stddev: f64,
    /// Coefficient of variation, stddev / |mean|; 0 when n < 2 or mean == 0.
    pub cv: f64,
    /// Smallest measurement.
    pub min: f64,
    /// Largest measurement.
    pub max: f64,
}

/// Summarizes `xs`, or returns `None` when it is empty or holds any
/// non-finite value.
pub fn summarize(xs: &[f64]) -> Option<Summary> {
    if xs.is_empty() || !all_finite(xs) {
        return None;
    }
    let mean = mean(xs);
    let stddev = sample_stddev(xs, mean);
    let cv = if xs.len() < 2 || mean == 0.0 {
        0.0
    } else {
        stddev / mean.abs()
    };
    Some(Summary {
        n: xs.len(),
        mean,
        median: median(xs)?,
        stddev,
        cv,
        min: xs.iter().copied().fold(f64::INFINITY, f64::min),
        max: xs.iter().copied().fold(f64::NEG_INFINITY, f64::max),
    })
}

/// True when every value is finite (true for an empty slice).
pub(crate) fn all_finite(xs: &[f64]) -> bool {
    xs.iter().all(|x| x.is_finite())
}

/// Arithmetic mean; NaN for an empty slice.
///
/// When the plain sum overflows (values near `f64::MAX`) the mean is taken
/// of the values divided by n instead, which cannot overflow.
pub(crate) fn mean(xs: &[f64]) -> f64 {
    let n = xs.len() as f64;
    let sum: f64 = xs.iter().sum();
    if sum.is_finite() {
        sum / n
    } else {
        xs.iter().map(|x| x / n).sum()
    }
}

/// Sample standard deviation (divisor n - 1) around `mean`; 0 when n < 2.
pub(crate) fn sample_stddev(xs: &[f64], mean: f64) -> f64 {
    if xs.len() < 2 {
        return 0.0;
    }
    let squares: f64 = xs.iter().map(|x| (x - mean) * (x - mean)).sum();
    (squares / (xs.len() - 1) as f64).sqrt()
}

/// Median of `xs`, or `None` when it is empty. NaN values, which callers
/// reject beforehand, would be ordered last rather than cause a panic.
pub(crate) fn median(xs: &[f64]) -> Option<f64> {
    let mut scratch = xs.to_vec();
    median_in_place(&mut scratch)
}

/// Median of `xs`, reordering it; `None` when it is empty. Runs in linear
/// time (selection, not a full sort).
pub(crate) fn median_in_place(xs: &mut [f64]) -> Option<f64> {
    if xs.is_empty() {
        return None;
    }
    let mid = xs.len() / 2;
    let odd = xs.len() % 2 == 1;
    let (lower, upper, _) = xs.select_nth_unstable_by(mid, f64::total_cmp);
    let upper = *upper;
    if odd {
        return Some(upper);
    }
    // Even count: the lower middle value is the largest of the lower half.
    // Halving each term first cannot overflow.
    let lower_middle = lower.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    Some(lower_middle / 2.0 + upper / 2.0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::assert_close;

    // Reference: NumPy 2.4.6,
    // python3 -c "import numpy as np; x=[12.5,11.8,13.1,12.9,12.2,14.0,12.7]; print(repr(np.mean(x)), repr(np.median(x)), repr(np.std(x,ddof=1)), repr(np.std(x,ddof=1)/abs(np.mean(x))), min(x), max(x))"
    #[test]
    fn matches_numpy_odd_count() {
        let s = summarize(&[12.5, 11.8, 13.1, 12.9, 12.2, 14.0, 12.7]).unwrap();
        assert_eq!(s.n, 7);
        assert_close(s.mean, 12.742857142857144);
        assert_close(s.median, 12.7);
        assert_close(s.stddev, 0.704407890494191);
        assert_close(s.cv, 0.05527864611501498);
        assert_eq!(s.min, 11.8);
        assert_eq!(s.max, 14.0);
    }

    // Reference: NumPy 2.4.6,
    // python3 -c "import numpy as np; y=[3.0,1.0,4.0,1.5,5.0,9.0]; print(repr(np.mean(y)), repr(np.median(y)), repr(np.std(y,ddof=1)), repr(np.std(y,ddof=1)/abs(np.mean(y))))"
    #[test]
    fn matches_numpy_even_count() {
        let s = summarize(&[3.0, 1.0, 4.0, 1.5, 5.0, 9.0]).unwrap();
        assert_eq!(s.n, 6);
        assert_close(s.mean, 3.9166666666666665);
        assert_close(s.median, 3.5);
        assert_close(s.stddev, 2.9054546402700328);
        assert_close(s.cv, 0.7418182060263914);
        assert_eq!((s.min, s.max), (1.0, 9.0));
    }

    // Reference: by definition (a single value is its own mean, median, min
    // and max; the sample stddev and the cv are defined as 0 for n = 1).
    #[test]
    fn single_value() {
        let s = summarize(&[42.0]).unwrap();
        assert_eq!(
            s,
            Summary {
                n: 1,
                mean: 42.0,
                median: 42.0,
                stddev: 0.0,
                cv: 0.0,
                min: 42.0,
                max: 42.0
            }
        );
    }

    // Reference: by definition (no spread, so stddev = cv = 0).
    #[test]
    fn identical_values_have_no_spread() {
        let s = summarize(&[7.25; 5]).unwrap();
        assert_eq!((s.mean, s.median, s.stddev, s.cv), (7.25, 7.25, 0.0, 0.0));
    }

    // Reference: NumPy, python3 -c "import numpy as np; print(np.mean([-1.0,1.0]), np.std([-1.0,1.0],ddof=1))"
    // gives 0.0 1.4142135623730951; the cv is defined as 0 for a zero mean.
    #[test]
    fn zero_mean_gives_zero_cv() {
        let s = summarize(&[-1.0, 1.0]).unwrap();
        assert_eq!(s.mean, 0.0);
        assert_close(s.stddev, std::f64::consts::SQRT_2);
        assert_eq!(s.cv, 0.0);
    }

    #[test]
    fn empty_or_non_finite_is_none() {
        assert_eq!(summarize(&[]), None);
        assert_eq!(summarize(&[1.0, f64::NAN]), None);
        assert_eq!(summarize(&[f64::INFINITY, 1.0]), None);
        assert_eq!(summarize(&[1.0, f64::NEG_INFINITY]), None);
    }

    // Reference: exact arithmetic (the mean of two f64::MAX is f64::MAX,
    // although their sum overflows).
    #[test]
    fn huge_values_do_not_overflow_the_mean() {
        let s = summarize(&[f64::MAX, f64::MAX]).unwrap();
        assert_eq!(s.mean, f64::MAX);
        assert_eq!(s.median, f64::MAX);
        assert_eq!(s.stddev, 0.0);
    }
}
