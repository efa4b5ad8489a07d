//! Equivalence within a margin: two one-sided tests (TOST).
//!
//! A comparison shows the targets *equivalent* within ±m % when its whole
//! interval lies inside (−m %, +m %): then any difference there is, is
//! smaller than the margin the user said does not matter. That is
//! Schuirmann's two one-sided tests (D. J. Schuirmann, "A comparison of
//! the two one-sided tests procedure and the power approach for assessing
//! the equivalence of average bioavailability", J. Pharmacokinet.
//! Biopharm. 15, 1987), the rule regulators use for bioequivalence
//! (ratio of geometric means within 80–125 %) and the one Lakens
//! recommends for "no meaningful effect" ("Equivalence tests", Soc.
//! Psychol. Personal. Sci. 8, 2017):
//!
//! ```text
//! H0 below: the difference is −m % or less   p_below = P(T ≥ (d̂ − lo) / se)
//! H0 above: the difference is +m % or more   p_above = P(T ≥ (hi − d̂) / se)
//! ```
//!
//! with `lo = ln(1 − m/100)`, `hi = ln(1 + m/100)` on the log scale of the
//! ratio methods ([`crate::stats::ratio`]): the margin is read in percent
//! of the baseline, −5 % to +5 %, as a reader reads the interval. The
//! interval at level `1 − α` lies inside the margin exactly when both
//! one-sided p-values are below `α / 2`, so [`Margin::p_value`] reports
//! `2 · max(p_below, p_above)`: "equivalent" at `p_value < α` is "the
//! `1 − α` interval inside ±m", the same convention as the difference's
//! two-sided p, so that a family of them is corrected the same way
//! ([`crate::stats::multiple`]). (The textbook TOST at α reads a `1 − 2α`
//! interval; reading the interval the report shows is stricter.)
//!
//! For Welch on the means the interval is Fieller's
//! ([`crate::stats::compare`]), and the one-sided tests are its pivot at
//! the margin's ratios: `z(R) = (mean_c − R · mean_b) / √(vc + R² · vb)`,
//! `p_below = P(T ≥ z(1 − m))`, `p_above = P(T ≤ z(1 + m))`; Fieller's
//! bounded interval lies inside the margin exactly when both are below
//! `α / 2`. A baseline mean at or below zero has no ratio to speak of: no
//! test. With no spread at all the difference is known: inside the margin
//! (p 0) or not (p 1).

use serde::Serialize;

use super::compare::{welch_df, Sample};
use super::interval::t_cdf;
use super::ratio::LogEstimate;

/// The default margin, in %: a difference within ±5 % is called
/// equivalent when the interval shows it.
pub const DEFAULT_MARGIN_PCT: f64 = 5.0;

/// The one-sided tests of a difference against the edges of ±`pct` %.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Margin {
    /// The margin, in % of the baseline.
    pub pct: f64,
    /// p-value of "the difference is −`pct` % or below".
    pub p_below: f64,
    /// p-value of "the difference is +`pct` % or above".
    pub p_above: f64,
}

impl Margin {
    /// `2 · max(p_below, p_above)`, at most 1: below α exactly when the
    /// `1 − α` interval lies inside the margin (module doc).
    pub fn p_value(&self) -> f64 {
        (2.0 * self.p_below.max(self.p_above)).min(1.0)
    }
}

/// True for a margin a test can use: strictly between 0 and 100 %.
pub fn valid_margin(pct: f64) -> bool {
    pct > 0.0 && pct < 100.0
}

/// The tests of a log-ratio estimate against ±`pct` %; `None` for a margin
/// outside (0, 100).
pub fn on_log_scale(e: &LogEstimate, pct: f64) -> Option<Margin> {
    if !valid_margin(pct) {
        return None;
    }
    let lo = (-pct / 100.0).ln_1p();
    let hi = (pct / 100.0).ln_1p();
    let beyond = |distance: f64| -> f64 {
        if e.se == 0.0 {
            return if distance > 0.0 { 0.0 } else { 1.0 };
        }
        t_cdf(-distance / e.se, e.df)
    };
    Some(Margin {
        pct,
        p_below: beyond(e.estimate - lo),
        p_above: beyond(hi - e.estimate),
    })
}

/// The tests of the ratio of means of `baseline` and `candidate` against
/// ±`pct` %, from Fieller's pivot (module doc); `None` with fewer than two
/// values a side, a value not finite, a baseline mean at or below zero, or
/// a margin outside (0, 100).
pub fn on_means(baseline: &[f64], candidate: &[f64], pct: f64) -> Option<Margin> {
    let b = Sample::new(baseline)?;
    let c = Sample::new(candidate)?;
    if !valid_margin(pct) || b.mean <= 0.0 {
        return None;
    }
    let (lo, hi) = (1.0 - pct / 100.0, 1.0 + pct / 100.0);
    if b.var_of_mean + c.var_of_mean == 0.0 {
        let ratio = c.mean / b.mean;
        let p = |inside: bool| if inside { 0.0 } else { 1.0 };
        return Some(Margin {
            pct,
            p_below: p(ratio > lo),
            p_above: p(ratio < hi),
        });
    }
    let df = welch_df(&b, &c);
    let pivot = |r: f64| (c.mean - r * b.mean) / (c.var_of_mean + r * r * b.var_of_mean).sqrt();
    let margin = Margin {
        pct,
        p_below: t_cdf(-pivot(lo), df),
        p_above: t_cdf(pivot(hi), df),
    };
    (!margin.p_below.is_nan() && !margin.p_above.is_nan()).then_some(margin)
}

#[cfg(test)]
mod tests {
    //! References: SciPy 1.17.1, the one-sided t tests of the module doc
    //! on the same data:
    //!
    //! ```text
    //! python3 - <<'EOF'
    //! import numpy as np, scipy.stats as st
    //! B = np.array([...]); C = np.array([...])
    //! d = np.log(C) - np.log(B)                      # paired
    //! lo, hi = np.log1p(-M / 100), np.log1p(M / 100)
    //! below = st.ttest_1samp(d, lo, alternative='greater').pvalue
    //! above = st.ttest_1samp(d, hi, alternative='less').pvalue
    //! print(repr(below), repr(above))
    //! EOF
    //! ```

    use super::*;
    use crate::stats::assert_close;
    use crate::stats::ratio::{paired_estimate, welch_estimate};
    use crate::stats::{paired_log, welch};

    const B: [f64; 8] = [101.2, 98.7, 102.5, 99.9, 100.4, 97.8, 101.9, 100.6];
    const C: [f64; 8] = [104.1, 106.3, 103.8, 105.2, 107.0, 104.9, 105.5, 103.2];

    // B and C (ratio's tests): +4.6% [+2.6%, +6.6%] paired. Against ±5% the
    // upper edge is not excluded; against ±10% both are.
    // M=5: 3.410661953763172e-06 0.33111672093706424
    // M=10: 1.6493976314227703e-07 0.0002253577556067434
    #[test]
    fn paired_tests_match_scipy() {
        let e = paired_estimate(&B, &C).unwrap();
        let five = on_log_scale(&e, 5.0).unwrap();
        assert_close(five.p_below, 3.410661953763172e-06);
        assert_close(five.p_above, 0.33111672093706424);
        assert_close(five.p_value(), 2.0 * 0.33111672093706424);
        let ten = on_log_scale(&e, 10.0).unwrap();
        assert_close(ten.p_below, 1.6493976314227703e-07);
        assert_close(ten.p_above, 0.0002253577556067434);
    }

    // Welch on the logs, M=10 (ttest_ind(log C, log B, equal_var=False)
    // against the shifted null: st.ttest_ind(np.log(C) - lo, np.log(B),
    // equal_var=False, alternative='greater') and likewise for hi, 'less'):
    // 6.056787139889475e-12 3.4104217499713473e-06
    #[test]
    fn welch_tests_match_scipy() {
        let e = welch_estimate(&B, &C).unwrap();
        let ten = on_log_scale(&e, 10.0).unwrap();
        assert_close(ten.p_below, 6.056787139889475e-12);
        assert_close(ten.p_above, 3.4104217499713473e-06);
    }

    // Reference: the definition. The interval at 1 − α lies inside ±m
    // exactly when p_value < α, for the log methods and for Fieller's.
    #[test]
    fn inside_the_margin_iff_p_below_alpha() {
        let mut uniform = crate::stats::uniform_stream(7u64);
        let mut inside = 0;
        for case in 0..3000 {
            let n = 3 + case % 6;
            let spread = 0.002 + 0.1 * uniform();
            let shift = 1.0 + 0.08 * (uniform() - 0.5);
            let b: Vec<f64> = (0..n)
                .map(|_| 100.0 * (1.0 + spread * (uniform() - 0.5)))
                .collect();
            let c: Vec<f64> = (0..n)
                .map(|_| 100.0 * shift * (1.0 + spread * (uniform() - 0.5)))
                .collect();
            let m = 1.0 + 9.0 * uniform();
            for level in [0.95, 0.99] {
                let alpha = 1.0 - level;
                let cmp = paired_log(&b, &c, level).unwrap();
                let p = on_log_scale(&paired_estimate(&b, &c).unwrap(), m)
                    .unwrap()
                    .p_value();
                let ci = cmp.diff_pct_ci;
                let within = ci.low > -m && ci.high < m;
                if (p - alpha).abs() > 1e-9 {
                    assert_eq!(within, p < alpha, "{cmp:?} {m} {p}");
                }
                inside += usize::from(within);
                let cmp = welch(&b, &c, level).unwrap();
                let p = on_means(&b, &c, m).unwrap().p_value();
                let ci = cmp.diff_pct_ci;
                if (p - alpha).abs() > 1e-9 {
                    assert_eq!(ci.low > -m && ci.high < m, p < alpha, "{cmp:?} {m} {p}");
                }
            }
        }
        assert!(inside > 500, "only {inside} cases inside: no test");
    }

    // Reference: the documented exact and undefined cases.
    #[test]
    fn no_spread_and_undefined_cases() {
        let e = paired_estimate(&[2.0, 2.0], &[2.04, 2.04]).unwrap();
        assert_eq!(on_log_scale(&e, 5.0).unwrap().p_value(), 0.0);
        assert_eq!(on_log_scale(&e, 1.0).unwrap().p_value(), 1.0);
        assert_eq!(on_log_scale(&e, 0.0), None);
        assert_eq!(on_log_scale(&e, 100.0), None);
        assert_eq!(on_means(&[2.0; 3], &[2.04; 3], 5.0).unwrap().p_value(), 0.0);
        assert_eq!(on_means(&[2.0; 3], &[2.2; 3], 5.0).unwrap().p_value(), 1.0);
        assert_eq!(on_means(&[-2.0, -1.0], &[1.0, 2.0], 5.0), None);
        assert_eq!(on_means(&[2.0], &[1.0, 2.0], 5.0), None);
    }
}
