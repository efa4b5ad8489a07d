//! How many runs would settle an inconclusive result.
//!
//! An interval of half-width `h` (in the estimate's own scale) settles a
//! question of size `r` once `h ≤ r`: it then either excludes 0 (a
//! difference was found) or lies within ±r (no difference as large as r).
//! The half-width is `t_crit(df) · se`; with more runs the standard error
//! shrinks as `1 / √n` and the degrees of freedom grow as `n - 1`. Given
//! the spread observed over `n` runs, [`runs_for_half_width`] finds the
//! smallest `n'` at which
//!
//! ```text
//! t_crit(level, df · (n' - 1) / (n - 1)) · se · √(n / n') ≤ h
//! ```
//!
//! This is the planning rule of Kalibera & Jones ("Rigorous benchmarking
//! in reasonable time", ISMM 2013: choose the repetition counts that make
//! the interval as narrow as the question needs, from the variation an
//! initial experiment showed), and what benchstat's "need >= N samples"
//! message does for its own test. It assumes the spread seen so far is the
//! spread to come; with two or three runs that estimate is itself rough,
//! so the answer is a guide ("about 9 runs"), not a guarantee. It is the
//! half-width rule, not a power calculation: a true difference of exactly
//! `r` would be found about half the time at `n'` runs; 80 % power needs
//! about (z₀.₉₇₅ + z₀.₈)² / z₀.₉₇₅² ≈ 2 times as many.
//!
//! For a comparison ([`runs_to_resolve`]) a question of ±`pct` % is
//! `ln(1 + pct / 100)` on the log scale (the narrower side of ±pct %) and
//! `pct / 100` relative to the baseline's mean for Welch on means. Welch's
//! degrees of freedom with equal run counts scale like `n - 1` too, so the
//! rule applies to paired and unpaired comparisons alike (for unpaired ones
//! `n'` is per target).

use super::compare::Comparison;
use super::interval::t_critical;

/// Largest run count [`runs_for_half_width`] looks at: beyond, more
/// repetitions are not the way to settle the question.
pub const MAX_RUNS: usize = 10_000;

/// Smallest run count `n' ≥ 2` whose interval would have half-width at most
/// `half_width`, given standard error `se` with `df` degrees of freedom from
/// `n` runs now (module doc). `None` when more than [`MAX_RUNS`] would be
/// needed, or when the inputs are not usable (n < 2, se or df not finite,
/// half_width not positive).
pub fn runs_for_half_width(
    se: f64,
    n: usize,
    df: f64,
    half_width: f64,
    level: f64,
) -> Option<usize> {
    let usable = n >= 2 && se >= 0.0 && se.is_finite() && df >= 1.0 && df.is_finite();
    if !usable || half_width.is_nan() || half_width <= 0.0 {
        return None;
    }
    let fits = |m: usize| -> bool {
        let df_m = df * (m - 1) as f64 / (n - 1) as f64;
        let se_m = se * (n as f64 / m as f64).sqrt();
        se_m == 0.0 || t_critical(level, df_m.max(1.0)) * se_m <= half_width
    };
    if !fits(MAX_RUNS) {
        return None;
    }
    // The half-width falls as runs are added: bisect for the first fit.
    let (mut lo, mut hi) = (2, MAX_RUNS);
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if fits(mid) {
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    Some(lo)
}

/// Runs per target (pairs of runs, for a paired comparison) at which the
/// interval of `cmp` would be ±`pct` % wide (module doc); `None` as for
/// [`runs_for_half_width`].
pub fn runs_to_resolve(cmp: &Comparison, pct: f64) -> Option<usize> {
    let half_width = if cmp.method.is_log() {
        (pct / 100.0).ln_1p()
    } else {
        pct / 100.0
    };
    runs_for_half_width(cmp.se, cmp.n, cmp.df, half_width, cmp.diff_pct_ci.level)
}

/// Runs per target (pairs, when paired) at which `cmp` could be decided:
/// when its interval, at its own level, is as narrow as its estimate's
/// distance from 0 (a difference that stays where it is would then be
/// found) or as the margin ±`margin_pct` % (an interval that narrow fits
/// inside the margin if the truth is no difference), whichever is wider,
/// with the spread at the 95% lower confidence bound of what the runs so
/// far show (`se · √(df / χ²₀.₉₅(df))`: 0.58 of it from 3 pairs, 0.65
/// from 5). That is the most favourable reading of the runs so far — an
/// estimate near the margin may yet move toward 0, and a spread seen over
/// three runs may be twice the true one — so that a plan stopping on it
/// gives up only on what the rounds left would not decide. `None` as for
/// [`runs_for_half_width`]. A sequential plan stops a workload whose
/// comparisons this puts beyond its `max` (`crate::rounds`).
pub fn runs_to_decide(cmp: &Comparison, margin_pct: f64) -> Option<usize> {
    let scale = |pct: f64| match cmp.method.is_log() {
        true => (pct / 100.0).ln_1p(),
        false => pct / 100.0,
    };
    let margin = scale(margin_pct).min(-scale(-margin_pct));
    let half_width = scale(cmp.diff_pct).abs().max(margin);
    let se = cmp.se * spread_lower_bound(cmp.df)?;
    runs_for_half_width(se, cmp.n, cmp.df, half_width, cmp.diff_pct_ci.level)
}

/// `√(df / χ²₀.₉₅(df))`: the 95% lower confidence bound of a standard
/// deviation, as a share of one estimated with `df` degrees of freedom.
fn spread_lower_bound(df: f64) -> Option<f64> {
    use statrs::distribution::{ChiSquared, ContinuousCDF};
    if df.is_infinite() {
        return Some(1.0);
    }
    let chi = ChiSquared::new(df).ok()?;
    Some((df / chi.inverse_cdf(0.95)).sqrt())
}

#[cfg(test)]
mod tests {
    //! References: SciPy 1.17.1, the rule of the module doc by brute force,
    //!
    //! ```text
    //! python3 -c "import numpy as np, scipy.stats as st
    //! def need(se, n, df, h): return next(m for m in range(2, 10001)
    //!     if st.t.ppf(0.975, max(1, df * (m - 1) / (n - 1))) * se * np.sqrt(n / m) <= h)
    //! print(need(SE, N, DF, H))"
    //! ```

    use super::*;
    use crate::stats::assert_close;
    use crate::stats::ratio::{paired_log, welch_log};

    // need(0.04, 3, 2, log(1.05)), need(0.04, 3, 3.7, log(1.05)),
    // need(0.1, 5, 4, 0.05), need(0.01, 10, 9, 0.05).
    #[test]
    fn matches_brute_force() {
        let h = 1.05f64.ln();
        assert_eq!(runs_for_half_width(0.04, 3, 2.0, h, 0.95), Some(11));
        assert_eq!(runs_for_half_width(0.04, 3, 3.7, h, 0.95), Some(10));
        assert_eq!(runs_for_half_width(0.1, 5, 4.0, 0.05, 0.95), Some(80));
        assert_eq!(runs_for_half_width(0.01, 10, 9.0, 0.05, 0.95), Some(5));
    }

    // Reference: the definition. A comparison asked about the half-width it
    // already has needs its own run count; the narrower the question, the
    // more runs.
    #[test]
    fn a_comparison_needs_its_own_count_for_its_own_width() {
        let b = [101.2, 98.7, 102.5, 99.9, 100.4];
        let c = [104.1, 106.3, 103.8, 105.2, 107.0];
        for cmp in [
            paired_log(&b, &c, 0.95).unwrap(),
            welch_log(&b, &c, 0.95).unwrap(),
        ] {
            let upper = cmp.diff_pct_ci.high;
            let own =
                100.0 * ((1.0 + upper / 100.0).ln() - (1.0 + cmp.diff_pct / 100.0).ln()).exp_m1();
            assert_eq!(runs_to_resolve(&cmp, own * 1.0001), Some(5), "{cmp:?}");
            let five = runs_to_resolve(&cmp, 5.0).unwrap();
            let one = runs_to_resolve(&cmp, 1.0).unwrap();
            assert!(five <= 5 && one > five, "{five} {one}");
        }
    }

    // Reference: the definition, by brute force as above at level
    // 1 - 0.05/8 = 0.99375 (8 looks) with se · sqrt(4 / st.chi2.ppf(0.95,
    // 4)) = se · 0.6493 for 5 pairs: a ×2.39 effect (log 0.8706) needs
    // need(0.2 * 0.6493, 5, 4, 0.8706) = 5 pairs, need(0.5 * 0.6493, 5,
    // 4, 0.8706) = 10. A +1% effect is judged on the margin's width:
    // ln(1.05), the narrower side of ±5%.
    #[test]
    fn runs_to_decide_read_the_runs_most_favourably() {
        assert_close(spread_lower_bound(4.0).unwrap(), 0.6493051673855675);
        assert_close(spread_lower_bound(2.0).unwrap(), 0.5777613700268773);
        let b = [101.2, 98.7, 102.5, 99.9, 100.4];
        let far = [240.0, 245.0, 230.0, 250.0, 236.0];
        let mut cmp = paired_log(&b, &far, 0.99375).unwrap();
        cmp.se = 0.2;
        assert_eq!(runs_to_decide(&cmp, 5.0), Some(5));
        cmp.se = 0.5;
        assert_eq!(runs_to_decide(&cmp, 5.0), Some(10));
        let near = [101.9, 99.5, 103.6, 100.9, 101.4];
        let cmp = paired_log(&b, &near, 0.95).unwrap();
        let se = cmp.se * spread_lower_bound(4.0).unwrap();
        let need = runs_for_half_width(se, 5, 4.0, 1.05f64.ln(), 0.95);
        assert_eq!(runs_to_decide(&cmp, 5.0), need);
    }

    // Reference: the documented `None` cases and the exact case.
    #[test]
    fn unusable_or_hopeless_is_none() {
        assert_eq!(runs_for_half_width(0.1, 1, 1.0, 0.05, 0.95), None);
        assert_eq!(runs_for_half_width(f64::NAN, 3, 2.0, 0.05, 0.95), None);
        assert_eq!(runs_for_half_width(0.1, 3, 2.0, 0.0, 0.95), None);
        assert_eq!(runs_for_half_width(100.0, 3, 2.0, 0.0001, 0.95), None);
        assert_eq!(runs_for_half_width(0.0, 3, 2.0, 0.05, 0.95), Some(2));
    }
}
