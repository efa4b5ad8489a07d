//! Candidate against baseline on the ratio scale: the ratio of geometric
//! means with its confidence interval, estimated on the log scale.
//!
//! # Why ratios, and why logs
//!
//! Storage results are positive quantities (throughput, time, latency)
//! whose spread grows with their size, and the question a reviewer asks is
//! "how many times faster": a ratio. On the log scale a ratio is a
//! difference, `ln c - ln b`, and a t-interval of that difference maps back
//! through `exp` to an interval of the ratio that is always positive, so the
//! percent difference `100 · (ratio - 1)` never reaches -100 %. The interval
//! is asymmetric the way ratios are (×2 and ×½ are equally far from 1), and
//! it exists for any number of runs ≥ 2 on each side: unlike Fieller's
//! interval for a ratio of arithmetic means ([`crate::stats::compare`]),
//! which with two or three noisy runs runs below -100 % or is unbounded.
//! The point estimate is then the ratio of geometric means, the summary
//! J. E. Smith, "Characterizing computer performance with a single number",
//! CACM 31(10), 1988, and P. J. Fleming & J. J. Wallace, "How not to lie
//! with statistics: the correct way to summarize benchmark results", CACM
//! 29(3), 1986, recommend for ratios.
//!
//! # Paired by round, or not
//!
//! T. Kalibera & R. Jones, "Rigorous benchmarking in reasonable time",
//! ISMM 2013, show that benchmark results vary at several levels (build,
//! run, iteration) and that the comparison must be made at the level where
//! the repetitions happened, reporting the ratio of the two systems' times
//! with a confidence interval. storlab's plan repeats in rounds: in
//! `interleaved` and `randomized` orders every target runs once per round,
//! close together in time, so drift over the campaign (a neighbour's load,
//! writeback, a warming cache) shifts both runs of a round alike. The
//! per-round log ratio `d_r = ln c_r - ln b_r` cancels that shift, and
//! [`paired_log`] applies Student's one-sample t to the `d_r` (SciPy's
//! `stats.ttest_rel(log c, log b)`):
//!
//! ```text
//! d̄ = mean(d_r),  se = sd(d_r) / √n,  df = n - 1
//! t = d̄ / se,     ratio interval = exp(d̄ ± t_crit(df) · se)
//! ```
//!
//! Runs that do not share a round (sequential order, two campaigns) are
//! compared by [`welch_log`]: Welch's unequal-variances t on the logs
//! (SciPy's `stats.ttest_ind(log c, log b, equal_var=False)`), the same
//! interval built from `mean(ln c) - mean(ln b)` and the Welch standard
//! error and degrees of freedom.
//!
//! Within a round the order is fixed under `interleaved` (the baseline
//! first) and shuffled under `randomized`; a drift fast enough to move
//! results between two neighbouring runs therefore biases a fixed
//! interleaving, paired or not (the pairing only stops the drift from
//! hiding real differences behind a wide interval). Kalibera & Jones's
//! randomized orders avoid that bias; the calibration test
//! (`tests/calibration.rs`) measures both on simulated campaigns.
//!
//! # Agreement with benchstat
//!
//! Go's benchstat (golang.org/x/perf/cmd/benchstat) likewise reports a
//! change as a ratio of the two sides' centres, prints it only when its
//! test (Mann–Whitney U by default) gives p < 0.05 (`~` otherwise), sums up
//! several benchmarks by geometric means, and tells the user how many
//! samples a conclusion would need ("need >= 6 samples…"); storlab's
//! version of the last is [`crate::stats::resolve`]. storlab uses t on logs
//! rather than the U test because with 3 runs a side the U test cannot reach
//! p < 0.05 at all (its smallest p is 0.1), and 3 runs is what the seed
//! studies did.
//!
//! # Properties
//!
//! With `level = 1 - alpha` the interval excludes 0 % exactly when
//! `p < alpha` (the test and the interval use the same t and se). When the
//! log ratios (paired) or both sides' logs (Welch) have no spread, the
//! ratio is known exactly: t = ±∞ and p = 0, or t = 0 and p = 1 for equal
//! values; the interval has zero width.

use super::compare::{is_sane, two_sided_p, welch_df, Comparison, Method, Sample};
use super::interval::{t_critical, valid_level, Interval};
use super::summary::{all_finite, mean, sample_stddev};

/// Runs paired by round: `baseline[i]` and `candidate[i]` come from the
/// same round. Student t on the per-round log ratios (module doc).
///
/// `None` when the slices differ in length, there are fewer than two
/// pairs, any value is not finite or not positive, `level` is not in
/// (0, 1), or the ratio overflows (values about e^709 apart).
pub fn paired_log(baseline: &[f64], candidate: &[f64], level: f64) -> Option<Comparison> {
    if !valid_level(level) {
        return None;
    }
    paired_estimate(baseline, candidate)?.comparison(level)
}

/// Unpaired runs: Welch's t on the logs of each side (module doc).
///
/// `None` when either side has fewer than two runs, any value is not
/// finite or not positive, `level` is not in (0, 1), or the ratio
/// overflows.
pub fn welch_log(baseline: &[f64], candidate: &[f64], level: f64) -> Option<Comparison> {
    if !valid_level(level) {
        return None;
    }
    welch_estimate(baseline, candidate)?.comparison(level)
}

/// A log ratio estimated from runs: the mean log ratio (paired) or the
/// difference of the mean logs (Welch), its standard error and degrees of
/// freedom, and how many runs (pairs) it rests on. What [`paired_log`]
/// and [`welch_log`] turn into a comparison, and
/// [`crate::stats::equivalence`] into tests at a margin.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LogEstimate {
    pub method: Method,
    pub estimate: f64,
    pub se: f64,
    pub df: f64,
    pub n: usize,
}

impl LogEstimate {
    /// The comparison at `level` (module doc).
    pub fn comparison(&self, level: f64) -> Option<Comparison> {
        on_log_scale(self.method, self.estimate, self.se, self.df, self.n, level)
    }
}

/// The paired estimate of [`paired_log`]; `None` as there.
pub fn paired_estimate(baseline: &[f64], candidate: &[f64]) -> Option<LogEstimate> {
    if baseline.len() != candidate.len() {
        return None;
    }
    let b = logs(baseline)?;
    let c = logs(candidate)?;
    let d: Vec<f64> = c.iter().zip(&b).map(|(c, b)| c - b).collect();
    if d.len() < 2 || !all_finite(&d) {
        return None;
    }
    let n = d.len() as f64;
    let mean_d = mean(&d);
    Some(LogEstimate {
        method: Method::PairedLog,
        estimate: mean_d,
        se: sample_stddev(&d, mean_d) / n.sqrt(),
        df: n - 1.0,
        n: d.len(),
    })
}

/// The unpaired estimate of [`welch_log`]; `None` as there.
pub fn welch_estimate(baseline: &[f64], candidate: &[f64]) -> Option<LogEstimate> {
    let b = Sample::new(&logs(baseline)?)?;
    let c = Sample::new(&logs(candidate)?)?;
    let var = b.var_of_mean + c.var_of_mean;
    // Two constant sides: Welch's df is 0/0; any df gives the same exact
    // answer, so use the pooled count as compare::welch does.
    let df = if var == 0.0 {
        b.n + c.n - 2.0
    } else {
        welch_df(&b, &c)
    };
    Some(LogEstimate {
        method: Method::WelchLog,
        estimate: c.mean - b.mean,
        se: var.sqrt(),
        df,
        n: b.n.min(c.n) as usize,
    })
}

/// Natural logs of `xs`, or `None` if any value is not finite and positive.
fn logs(xs: &[f64]) -> Option<Vec<f64>> {
    xs.iter()
        .all(|x| x.is_finite() && *x > 0.0)
        .then(|| xs.iter().map(|x| x.ln()).collect())
}

/// The comparison for a log ratio `estimate` with standard error `se` and
/// `df` degrees of freedom: t, p, and the interval mapped back through exp.
fn on_log_scale(
    method: Method,
    estimate: f64,
    se: f64,
    df: f64,
    n: usize,
    level: f64,
) -> Option<Comparison> {
    let (t, p_value, half) = if se == 0.0 {
        let t = if estimate == 0.0 {
            0.0
        } else {
            f64::INFINITY.copysign(estimate)
        };
        (t, if estimate == 0.0 { 1.0 } else { 0.0 }, 0.0)
    } else {
        let t = estimate / se;
        (t, two_sided_p(t, df)?, t_critical(level, df) * se)
    };
    let pct = |log_ratio: f64| 100.0 * log_ratio.exp_m1();
    let cmp = Comparison {
        method,
        diff_pct: pct(estimate),
        diff_pct_ci: Interval {
            low: pct(estimate - half),
            high: pct(estimate + half),
            level,
        },
        t,
        df,
        p_value,
        n,
        se,
        fieller: None,
    };
    is_sane(&cmp).then_some(cmp)
}

#[cfg(test)]
mod tests {
    //! References: SciPy 1.17.1 / NumPy 2.4.6, from the log values, with the
    //! candidate C first as storlab defines t:
    //!
    //! ```text
    //! python3 - <<'EOF'
    //! import numpy as np, scipy.stats as st
    //! B = np.array([...]); C = np.array([...])   # baseline, candidate
    //! r = st.ttest_rel(np.log(C), np.log(B))                   # paired
    //! r = st.ttest_ind(np.log(C), np.log(B), equal_var=False)  # Welch
    //! ci = r.confidence_interval(0.95)
    //! d = np.log(C) - np.log(B)   # paired: mean log ratio
    //! d = np.log(C).mean() - np.log(B).mean()   # Welch: difference of mean logs
    //! print(repr(r.statistic), repr(r.df), repr(r.pvalue),
    //!       repr(100 * np.expm1(np.mean(d))),
    //!       repr(100 * np.expm1(ci.low)), repr(100 * np.expm1(ci.high)))
    //! EOF
    //! ```

    use super::*;
    use crate::stats::{assert_close, verdict, Verdict};

    struct Reference {
        t: f64,
        df: f64,
        p: f64,
        diff_pct: f64,
        low: f64,
        high: f64,
    }

    #[track_caller]
    fn check(cmp: Comparison, r: Reference) {
        assert_close(cmp.t, r.t);
        assert_close(cmp.df, r.df);
        assert_close(cmp.p_value, r.p);
        assert_close(cmp.diff_pct, r.diff_pct);
        assert_close(cmp.diff_pct_ci.low, r.low);
        assert_close(cmp.diff_pct_ci.high, r.high);
        assert_eq!(cmp.diff_pct_ci.level, 0.95);
    }

    const B: [f64; 8] = [101.2, 98.7, 102.5, 99.9, 100.4, 97.8, 101.9, 100.6];
    const C: [f64; 8] = [104.1, 106.3, 103.8, 105.2, 107.0, 104.9, 105.5, 103.2];

    // B and C above (module-doc commands, Welch).
    #[test]
    fn welch_log_matches_scipy() {
        let cmp = welch_log(&B, &C, 0.95).unwrap();
        assert_eq!((cmp.method, cmp.n), (Method::WelchLog, 8));
        check(
            cmp,
            Reference {
                t: 6.423749860539813,
                df: 13.199128466481842,
                p: 2.101448107476224e-05,
                diff_pct: 4.612142057779784,
                low: 3.040162299840482,
                high: 6.208103924289335,
            },
        );
    }

    // B and C above, paired in order (module-doc commands, paired). Same
    // ratio of geometric means as Welch, another interval.
    #[test]
    fn paired_log_matches_scipy() {
        let cmp = paired_log(&B, &C, 0.95).unwrap();
        assert_eq!((cmp.method, cmp.n), (Method::PairedLog, 8));
        check(
            cmp,
            Reference {
                t: 5.555283993647802,
                df: 7.0,
                p: 0.0008551458023349435,
                diff_pct: 4.612142057779679,
                low: 2.6235216907352816,
                high: 6.639297556917296,
            },
        );
    }

    // A latency drop: B=[250.3,248.1,255.7,251.2,249.9,253.4];
    // C=[231.8,229.4,235.1,233.0,230.7,232.2] (module-doc commands).
    #[test]
    fn latency_drop_matches_scipy_both_ways() {
        let b = [250.3, 248.1, 255.7, 251.2, 249.9, 253.4];
        let c = [231.8, 229.4, 235.1, 233.0, 230.7, 232.2];
        check(
            welch_log(&b, &c, 0.95).unwrap(),
            Reference {
                t: -14.377187353984791,
                df: 9.448575506152734,
                p: 9.741114966087261e-08,
                diff_pct: -7.7140203160883605,
                low: -8.86409643153765,
                high: -6.5494309844472385,
            },
        );
        check(
            paired_log(&b, &c, 0.95).unwrap(),
            Reference {
                t: -42.75703346064658,
                df: 5.0,
                p: 1.320456613448448e-07,
                diff_pct: -7.7140203160883605,
                low: -8.158353029111645,
                high: -7.267537907732136,
            },
        );
    }

    // Both targets drift up 5% a round and the candidate is 3% faster in
    // every round: pairing sees it (p 4e-6), Welch's pooled spread hides it
    // (p 0.57). B=[100.0,104.9,110.3,115.2,121.0,126.1];
    // C=[103.4,107.6,113.9,118.4,124.3,130.2] (module-doc commands).
    #[test]
    fn pairing_removes_a_drift_that_hides_the_difference() {
        let b = [100.0, 104.9, 110.3, 115.2, 121.0, 126.1];
        let c = [103.4, 107.6, 113.9, 118.4, 124.3, 130.2];
        check(
            welch_log(&b, &c, 0.95).unwrap(),
            Reference {
                t: 0.5878422794294447,
                df: 9.999832700024193,
                p: 0.5696743098563231,
                diff_pct: 2.9985400380095206,
                low: -7.913391241930522,
                high: 15.203495850658285,
            },
        );
        check(
            paired_log(&b, &c, 0.95).unwrap(),
            Reference {
                t: 21.549649305478827,
                df: 5.0,
                p: 3.991486855623833e-06,
                diff_pct: 2.998540038009582,
                low: 2.6361837876577665,
                high: 3.3621755842911902,
            },
        );
    }

    // The tiny-writes case of issue 17: every run about 60× slower (133 ms
    // against 7.9 s), 3 and 2 runs. Fieller's interval of the ratio of means
    // (crate::stats::compare::welch, the analysis before) calls it "no
    // significant difference" at p 0.078 with [-3794%, +46713%]; on the log
    // scale it is +5771% [+2677%, +12312%], p 0.0033. B=[0.118,0.133,0.149];
    // C=[6.9,8.8] (module-doc commands; the Fieller numbers from compare's).
    // Paired over the two rounds both sides ran, B=[0.118,0.133], C=[6.9,8.8].
    #[test]
    fn sixty_times_slower_is_significant_and_bounded() {
        let before = crate::stats::welch(&[0.118, 0.133, 0.149], &[6.9, 8.8], 0.95).unwrap();
        assert!(before.p_value > 0.05 && before.diff_pct_ci.low < -100.0);
        let cmp = welch_log(&[0.118, 0.133, 0.149], &[6.9, 8.8], 0.95).unwrap();
        // total_s: lower is better, so 60× the time is worse ("slower").
        let lower = crate::metric::Direction::LowerIsBetter;
        assert_eq!(verdict(&cmp, lower, 0.05), Verdict::Worse);
        check(
            cmp,
            Reference {
                t: 29.29560377432849,
                df: 1.6306438636991858,
                p: 0.0032593882639533655,
                diff_pct: 5770.736334841569,
                low: 2676.68632061356,
                high: 12312.473406651578,
            },
        );
        let cmp = paired_log(&[0.118, 0.133], &[6.9, 8.8], 0.95).unwrap();
        assert_eq!(verdict(&cmp, lower, 0.05), Verdict::Worse);
        check(
            cmp,
            Reference {
                t: 66.8530412856864,
                df: 1.0,
                p: 0.009521964683464213,
                diff_pct: 6120.124211138236,
                low: 2737.046824659768,
                high: 13537.400999409996,
            },
        );
    }

    // Reference: the definition. exp maps every log bound to a positive
    // ratio, so no bound reaches -100 %, whatever the noise and the count;
    // and with level = 1 - alpha the interval excludes 0 % iff p < alpha.
    #[test]
    fn never_below_minus_100_and_agrees_with_the_test() {
        let mut uniform = crate::stats::uniform_stream(0x5eed_u64);
        for case in 0..2000 {
            let n = 2 + case % 4;
            // Runs spread from 1% to a factor e^2 of each other (beyond,
            // a bound's ratio can fall below 1e-16, where f64 rounds
            // 100 · (ratio - 1) to exactly -100).
            let spread = 10f64.powf(-2.0 + 2.3 * uniform());
            let mut draw = |scale: f64| -> Vec<f64> {
                (0..n)
                    .map(|_| scale * (spread * (uniform() - 0.5)).exp())
                    .collect()
            };
            let b = draw(1.0);
            let c = draw(1.5);
            for cmp in [welch_log(&b, &c, 0.95), paired_log(&b, &c, 0.95)] {
                let cmp = cmp.unwrap();
                let ci = cmp.diff_pct_ci;
                assert!(ci.low > -100.0 && ci.low <= cmp.diff_pct, "{cmp:?}");
                assert!(ci.high >= cmp.diff_pct, "{cmp:?}");
                if (cmp.p_value - 0.05).abs() > 1e-9 {
                    assert_eq!(ci.contains(0.0), cmp.p_value >= 0.05, "{cmp:?}");
                }
            }
        }
    }

    // Reference: the documented conventions for no spread.
    #[test]
    fn no_spread_is_exact() {
        let same = paired_log(&[2.0, 2.0], &[3.0, 3.0], 0.95).unwrap();
        assert_eq!((same.t, same.p_value, same.se), (f64::INFINITY, 0.0, 0.0));
        assert_close(same.diff_pct, 50.0);
        assert_eq!(same.diff_pct_ci.low, same.diff_pct_ci.high);
        let equal = welch_log(&[3.0; 3], &[3.0; 4], 0.95).unwrap();
        assert_eq!((equal.t, equal.p_value, equal.df), (0.0, 1.0, 5.0));
        assert_eq!(equal.diff_pct, 0.0);
        let down = welch_log(&[4.0; 3], &[2.0; 2], 0.95).unwrap();
        assert_eq!((down.t, down.p_value), (f64::NEG_INFINITY, 0.0));
        assert_close(down.diff_pct, -50.0);
    }

    // Reference: the documented `None` cases.
    #[test]
    fn undefined_comparisons_are_none() {
        let ok = [1.0, 2.0, 3.0];
        for f in [paired_log, welch_log] {
            assert_eq!(f(&ok, &[1.0, 2.0, 0.0], 0.95), None);
            assert_eq!(f(&[-1.0, 2.0, 3.0], &ok, 0.95), None);
            assert_eq!(f(&ok, &[1.0, f64::NAN, 2.0], 0.95), None);
            assert_eq!(f(&[1.0], &[2.0], 0.95), None);
            assert_eq!(f(&[1e-300, 1e-300], &[1e300, 2e300], 0.95), None);
            for level in [0.0, 1.0, f64::NAN] {
                assert_eq!(f(&ok, &ok, level), None);
            }
        }
        assert_eq!(paired_log(&ok, &[1.0, 2.0], 0.95), None);
        assert!(welch_log(&ok, &[1.0, 2.0], 0.95).is_some());
    }
}
