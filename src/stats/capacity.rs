//! Capacity: the highest offered rate at which a latency target holds,
//! from probes (runs at set offered rates), with its interval; and two
//! capacities compared.
//!
//! # A run's margin
//!
//! `m = ln(latency / limit)` when the run achieved at least
//! [`ACHIEVED_SHARE`] of the offered rate, else the larger of that and
//! `ln(0.95 · offered / achieved)` (above 0): at most 0 when the run met
//! its target, otherwise how far past it, on the log scale. A rate the
//! system cannot even issue fails, whatever its latency. A run that failed has no
//! margin ([`f64::INFINITY`]). A probe passes when the mean of its runs'
//! margins is at most 0.
//!
//! # The knee
//!
//! `hi` is the lowest failing probe's rate, `lo` the highest passing one
//! below it: the grid's neighbours when the search resolved. The capacity
//! is where the probes' mean margin crosses 0, on the straight line
//! between `lo` and `hi` in ln(rate).
//!
//! Its interval inverts a confidence band: each probe's mean margin ± `t
//! · s/√n`, `s` the runs' spread about their probes' means pooled over
//! `lo` and `hi` (the runs nearest the knee, where the latency moves most
//! with the system's own variation), `t` the Student quantile for its
//! degrees of freedom. The low end is where the band's upper edge
//! crosses 0 below `lo`: the rate up to which the target held with
//! confidence; the high end where its lower edge crosses 0 above `hi`:
//! the rate from which it failed with confidence. Between neighbouring
//! probes the edges are straight lines in ln(rate), but never steeper
//! than the margin's slope across the bracket: a probe far from the knee
//! (where the latency has long left the target) says little of how fast
//! it is lost near it. So a probe that passed or failed by chance widens
//! the interval to the next probe that is clear; where no clear probe
//! lies beyond the bracket, the interval ends at the outermost one. With
//! one run per probe there is no spread to judge by: the interval is the
//! probes beside the bracket. The interval always holds the bracket
//! itself: where within one step the target is lost, the probes cannot
//! say.
//!
//! Every probe passing gives a capacity of at least the highest rate
//! probed; every probe failing, one below the lowest: neither has an
//! interval.
//!
//! # Two capacities compared
//!
//! On the log scale, as every ratio storlab judges: the difference of the
//! two log capacities, its standard error the two intervals' half-widths
//! (each over its t quantile) added in quadrature, a Student t interval
//! and p-value on their Welch–Satterthwaite degrees of freedom (normal
//! when a side had one run per probe) ([`compare`]).

use serde::Serialize;

use super::compare::{two_sided_p, Comparison, Method};
use super::interval::{t_critical, valid_level, Interval};

/// The share of the offered rate a run must achieve to pass.
pub const ACHIEVED_SHARE: f64 = 0.95;

/// How far past its target one run was (module doc): at most 0 when it
/// met it; `+∞` when a figure is missing or not positive. `served`: for
/// arrivals on a Poisson schedule (pgbench -R), how many were served —
/// their count varies by about its square root whatever the system does,
/// so the achieved rate is judged that much more leniently (two standard
/// deviations: short only below 95% × (1 − 2/√served) of the offered).
pub fn margin(latency: f64, limit: f64, achieved: f64, offered: f64, served: Option<f64>) -> f64 {
    let ok = |x: f64| x.is_finite() && x > 0.0;
    if !(ok(latency) && ok(limit) && ok(offered) && achieved.is_finite() && achieved >= 0.0) {
        return f64::INFINITY;
    }
    let late = (latency / limit).ln();
    let spread = served
        .filter(|n| *n >= 4.0)
        .map_or(0.0, |n| -(1.0 - 2.0 / n.sqrt()).ln());
    let short = (ACHIEVED_SHARE * offered / achieved).ln() - spread;
    if short > 0.0 {
        late.max(short)
    } else {
        late
    }
}

/// The runs at one offered rate.
#[derive(Debug, Clone, PartialEq)]
pub struct Probe {
    pub rate: f64,
    /// Each run's margin; `+∞` for a run that failed.
    pub margins: Vec<f64>,
}

impl Probe {
    /// The mean margin of its runs (`+∞` with a failed run, `None`
    /// without runs).
    pub fn mean(&self) -> Option<f64> {
        (!self.margins.is_empty())
            .then(|| self.margins.iter().sum::<f64>() / self.margins.len() as f64)
    }

    /// Whether the target held at this rate.
    pub fn passes(&self) -> Option<bool> {
        self.mean().map(|m| m <= 0.0)
    }
}

/// Where the capacity lies.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Found {
    /// Between a passing and a failing probe.
    Between,
    /// Every probe passed: at least the highest.
    AtLeast,
    /// Every probe failed: below the lowest.
    Below,
}

/// The capacity found from a set of probes.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Knee {
    pub found: Found,
    /// The capacity (for `AtLeast` and `Below`, the bound).
    pub estimate: f64,
    /// Its interval; `None` unless `found` is `Between`.
    pub interval: Option<Interval>,
    /// The highest passing rate below the knee and the lowest failing one.
    pub lo: Option<f64>,
    pub hi: Option<f64>,
    /// Degrees of freedom of the runs' pooled spread (0: one run per
    /// probe, the interval is the probes beside the bracket).
    pub df: f64,
    /// The runs' margins' standard deviation about their probes' means.
    pub spread: f64,
}

impl Knee {
    /// Standard error of ln(capacity), from the interval's width on the
    /// log scale over its quantile; `None` without an interval.
    pub fn se_log(&self) -> Option<f64> {
        let i = self.interval?;
        let q = if self.df > 0.0 {
            t_critical(i.level, self.df)
        } else {
            // The probes beside the bracket, read as ±2 standard errors.
            2.0
        };
        (i.low > 0.0).then(|| (i.high.ln() - i.low.ln()) / (2.0 * q))
    }
}

/// The capacity the probes say (module doc), at confidence `level`;
/// `None` without a probe that has runs, or with `level` outside (0, 1).
pub fn knee(probes: &[Probe], level: f64) -> Option<Knee> {
    if !valid_level(level) {
        return None;
    }
    let mut judged: Vec<Judged> = probes
        .iter()
        .filter(|p| p.rate.is_finite() && p.rate > 0.0)
        .filter_map(|p| {
            Some(Judged {
                x: p.rate.ln(),
                mean: p.mean()?,
                n: p.margins.len(),
                probe: p,
            })
        })
        .collect();
    judged.sort_by(|a, b| a.x.total_cmp(&b.x));
    let bound = |found, estimate: f64| Knee {
        found,
        estimate,
        interval: None,
        lo: (found == Found::AtLeast).then_some(estimate),
        hi: (found == Found::Below).then_some(estimate),
        df: 0.0,
        spread: 0.0,
    };
    let Some(hi) = judged.iter().position(|j| j.mean > 0.0) else {
        return Some(bound(Found::AtLeast, judged.last()?.probe.rate));
    };
    if hi == 0 {
        return Some(bound(Found::Below, judged[0].probe.rate));
    }
    let lo = hi - 1;
    let estimate = crossing(&judged[lo], &judged[hi], |j| j.mean);
    let (spread, df) = pooled(&judged, lo, hi);
    // The margin's slope across the bracket: how fast the target is lost
    // near the knee, which the band's far side may not show (a probe far
    // above, where the latency has long left the target).
    let slope = (judged[hi].mean - judged[lo].mean) / (judged[hi].x - judged[lo].x);
    let slope = (slope.is_finite() && slope > 0.0).then_some(slope);
    let (low, high) = if df > 0.0 {
        let t = t_critical(level, df);
        let se = |j: &Judged| spread / (j.n as f64).sqrt();
        let upper = |j: &Judged| j.mean + t * se(j);
        let lower = |j: &Judged| j.mean - t * se(j);
        // Down from lo while even its upper bound is past the target.
        let mut i = lo;
        while i > 0 && upper(&judged[i]) > 0.0 {
            i -= 1;
        }
        let low = match upper(&judged[i]) <= 0.0 {
            true => {
                let (a, b) = (&judged[i], &judged[i + 1]);
                let chord = crossing(a, b, upper);
                let local = slope.map_or(chord, |s| b.x - upper(b) / s);
                chord.min(local).max(a.x)
            }
            false => judged[i].x,
        };
        // Up from hi while even its lower bound is within the target.
        let mut j = hi;
        while j + 1 < judged.len() && lower(&judged[j]) <= 0.0 {
            j += 1;
        }
        let high = match lower(&judged[j]) > 0.0 {
            true => {
                let (a, b) = (&judged[j - 1], &judged[j]);
                let chord = crossing(a, b, lower);
                let local = slope.map_or(chord, |s| a.x - lower(a) / s);
                chord.max(local).min(b.x)
            }
            false => judged[j].x,
        };
        (low, high)
    } else {
        // No spread to judge by: the probes beside the bracket.
        (
            judged[lo.saturating_sub(1)].x,
            judged[(hi + 1).min(judged.len() - 1)].x,
        )
    };
    Some(Knee {
        found: Found::Between,
        estimate: estimate.exp(),
        // At least the bracket: where within one grid step the target is
        // lost, the probes cannot say (a throttle's knee is a cliff the
        // straight line between them does not know).
        interval: Some(Interval {
            low: low.min(judged[lo].x).exp(),
            high: high.max(judged[hi].x).exp(),
            level,
        }),
        lo: Some(judged[lo].probe.rate),
        hi: Some(judged[hi].probe.rate),
        df,
        spread,
    })
}

/// A probe placed for the knee: ln(rate) and its mean margin.
struct Judged<'p> {
    x: f64,
    mean: f64,
    n: usize,
    probe: &'p Probe,
}

/// Where the straight line from `a` to `b` (in ln(rate), the figure
/// `y`) crosses 0; `a`'s figure at most 0, `b`'s above. A side without a
/// finite figure (a failed run) puts it halfway.
fn crossing(a: &Judged, b: &Judged, y: impl Fn(&Judged) -> f64) -> f64 {
    let (ya, yb) = (y(a), y(b));
    if !(ya.is_finite() && yb.is_finite()) || yb <= ya {
        return (a.x + b.x) / 2.0;
    }
    a.x + (0.0 - ya) / (yb - ya) * (b.x - a.x)
}

/// The margins' spread about their probes' means, pooled over the
/// bracket's two probes `lo` and `hi` (the runs nearest the knee, where
/// the latency moves most with the system's own variation), with its
/// degrees of freedom.
fn pooled(judged: &[Judged], lo: usize, hi: usize) -> (f64, f64) {
    let (mut ss, mut df) = (0.0, 0.0);
    for j in [&judged[lo], &judged[hi]] {
        if !j.mean.is_finite() || j.n < 2 {
            continue;
        }
        ss += j
            .probe
            .margins
            .iter()
            .map(|m| (m - j.mean).powi(2))
            .sum::<f64>();
        df += (j.n - 1) as f64;
    }
    if df > 0.0 {
        ((ss / df).sqrt(), df)
    } else {
        (0.0, 0.0)
    }
}

/// `candidate`'s capacity against `baseline`'s (module doc); `None`
/// unless both were found between probes with an interval.
pub fn compare(baseline: &Knee, candidate: &Knee, level: f64) -> Option<Comparison> {
    if baseline.found != Found::Between || candidate.found != Found::Between {
        return None;
    }
    let (sb, sc) = (baseline.se_log()?, candidate.se_log()?);
    let d = candidate.estimate.ln() - baseline.estimate.ln();
    let se = sb.hypot(sc);
    let df = shared_df(sb, baseline.df, sc, candidate.df);
    let q = match df.is_finite() {
        true => t_critical(level, df),
        false => normal_quantile(0.5 + level / 2.0),
    };
    let (t, p_value) = if se > 0.0 {
        let t = d / se;
        let p = match df.is_finite() {
            true => two_sided_p(t, df).unwrap_or(1.0),
            false => 2.0 * (1.0 - normal_cdf(t.abs())),
        };
        (t, p)
    } else if d == 0.0 {
        (0.0, 1.0)
    } else {
        (d.signum() * f64::INFINITY, 0.0)
    };
    let pct = |x: f64| 100.0 * x.exp_m1();
    Some(Comparison {
        method: Method::Knees,
        diff_pct: pct(d),
        diff_pct_ci: Interval {
            low: pct(d - q * se),
            high: pct(d + q * se),
            level,
        },
        t,
        df,
        p_value,
        n: 1,
        se,
        fieller: None,
    })
}

/// The Welch–Satterthwaite degrees of freedom of two standard errors'
/// sum, each with its own; infinite (normal) when either has none (one
/// run per probe: its interval is read as ±2 standard errors).
fn shared_df(sb: f64, dfb: f64, sc: f64, dfc: f64) -> f64 {
    if dfb <= 0.0 || dfc <= 0.0 {
        return f64::INFINITY;
    }
    let (vb, vc) = (sb * sb, sc * sc);
    let df = (vb + vc).powi(2) / (vb * vb / dfb + vc * vc / dfc);
    match df.is_finite() && df > 0.0 {
        true => df,
        false => f64::INFINITY,
    }
}

fn normal_cdf(x: f64) -> f64 {
    use statrs::distribution::{ContinuousCDF, Normal};
    Normal::standard().cdf(x)
}

fn normal_quantile(p: f64) -> f64 {
    use statrs::distribution::{ContinuousCDF, Normal};
    Normal::standard().inverse_cdf(p)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn probe(rate: f64, margins: &[f64]) -> Probe {
        Probe {
            rate,
            margins: margins.to_vec(),
        }
    }

    #[test]
    fn a_margin_says_how_far_past_the_target() {
        // 8 ms within 10 ms, everything achieved: ln(0.8).
        assert!((margin(8e6, 10e6, 1000.0, 1000.0, None) - 0.8f64.ln()).abs() < 1e-12);
        // Late: 20 ms for 10 ms.
        assert!((margin(20e6, 10e6, 1000.0, 1000.0, None) - 2f64.ln()).abs() < 1e-12);
        // Quick but short of 95% of the offered rate: fails.
        let m = margin(1e6, 10e6, 900.0, 1000.0, None);
        assert!((m - (950.0f64 / 900.0).ln()).abs() < 1e-12 && m > 0.0);
        assert!((margin(1e6, 10e6, 950.0, 1000.0, None) - 0.1f64.ln()).abs() < 1e-12);
        assert_eq!(margin(f64::NAN, 10e6, 1.0, 1.0, None), f64::INFINITY);
        assert_eq!(margin(1e6, 10e6, 0.0, 1.0, None), f64::INFINITY);
        // 30 of a Poisson schedule's 40 arrivals served in a run (75%): its
        // count varies by √40 ≈ 6 by chance; 900 of 1000 does not.
        assert!(margin(1e6, 10e6, 3.0, 4.0, Some(30.0)) < 0.0);
        assert!(margin(1e6, 10e6, 900.0, 1000.0, Some(9000.0)) > 0.0);
    }

    // Margins 4·ln(rate/1000) + scatter: the knee is 1000; the band
    // holds it, and ends where probes are clear of the target.
    #[test]
    fn the_knee_is_where_the_mean_margin_crosses_zero() {
        let m = |r: f64, e: f64| 4.0 * (r / 1000.0f64).ln() + e;
        let probes = vec![
            probe(500.0, &[m(500.0, 0.02), m(500.0, -0.02)]),
            probe(800.0, &[m(800.0, 0.01), m(800.0, -0.01)]),
            probe(950.0, &[m(950.0, 0.02), m(950.0, -0.02)]),
            probe(1050.0, &[m(1050.0, 0.01), m(1050.0, -0.01)]),
            probe(1200.0, &[m(1200.0, 0.02), m(1200.0, -0.02)]),
            probe(4000.0, &[f64::INFINITY]),
        ];
        let k = knee(&probes, 0.95).unwrap();
        assert_eq!(k.found, Found::Between);
        assert_eq!((k.lo, k.hi), (Some(950.0), Some(1050.0)));
        assert!((k.estimate - 1000.0).abs() < 1.0, "{k:?}");
        let i = k.interval.unwrap();
        assert!(i.low < 1000.0 && i.high > 1000.0, "{i:?}");
        // The runs are clear of the target at 950 and 1050: the
        // interval is the bracket itself.
        assert!(
            (i.low - 950.0).abs() < 1e-6 && (i.high - 1050.0).abs() < 1e-6,
            "{i:?}"
        );
        // The spread of lo's and hi's runs: 2 degrees of freedom.
        assert_eq!(k.df, 2.0);
        assert!(k.se_log().unwrap() > 0.0);
    }

    // Scatter as large as the step: lo and hi are not clear, the interval
    // reaches to the probes that are.
    #[test]
    fn an_unclear_bracket_widens_to_the_clear_probes() {
        let probes = vec![
            probe(700.0, &[-1.2, -1.0, -0.8]),
            probe(900.0, &[-0.6, 0.3, 0.0]),
            probe(1000.0, &[0.4, -0.3, 0.2]),
            probe(1400.0, &[1.6, 1.9, 2.2]),
        ];
        let k = knee(&probes, 0.95).unwrap();
        let i = k.interval.unwrap();
        assert_eq!((k.lo, k.hi), (Some(900.0), Some(1000.0)));
        assert!(i.low < 900.0 && i.low > 699.9, "{i:?}");
        // Not 1113, the straight line to 1400: the margin's slope across
        // the bracket puts the crossing farther.
        assert!(i.high > 1300.0 && i.high < 1400.0, "{i:?}");
    }

    // One run per probe on each side: no spread; the interval is the
    // probes beside the bracket, the estimate on the line between it.
    #[test]
    fn without_a_degree_of_freedom_the_interval_is_the_probes_beside() {
        let probes = vec![
            probe(800.0, &[-1.0]),
            probe(900.0, &[-0.5]),
            probe(1100.0, &[0.5]),
            probe(1300.0, &[1.0]),
        ];
        let k = knee(&probes, 0.95).unwrap();
        assert_eq!(k.df, 0.0);
        let i = k.interval.unwrap();
        assert!(
            (i.low - 800.0).abs() < 1e-9 && (i.high - 1300.0).abs() < 1e-9,
            "{i:?}"
        );
        assert!((k.estimate - (900.0f64 * 1100.0).sqrt()).abs() < 1e-6);
    }

    #[test]
    fn all_passing_or_all_failing_bound_the_capacity() {
        let k = knee(&[probe(100.0, &[-1.0]), probe(200.0, &[-0.5])], 0.95).unwrap();
        assert_eq!(
            (k.found, k.estimate, k.interval),
            (Found::AtLeast, 200.0, None)
        );
        let k = knee(
            &[probe(100.0, &[1.0]), probe(200.0, &[f64::INFINITY])],
            0.95,
        )
        .unwrap();
        assert_eq!((k.found, k.estimate), (Found::Below, 100.0));
        assert!(knee(&[], 0.95).is_none());
        assert!(knee(&[probe(1.0, &[])], 0.95).is_none());
    }

    // A pass above a failure (noise) is left out: the knee is below the
    // lowest failure.
    #[test]
    fn a_pass_above_the_lowest_failure_is_not_the_knee() {
        let probes = vec![
            probe(100.0, &[-1.0]),
            probe(200.0, &[0.3]),
            probe(300.0, &[-0.1]),
            probe(400.0, &[2.0]),
        ];
        let k = knee(&probes, 0.95).unwrap();
        assert_eq!((k.lo, k.hi), (Some(100.0), Some(200.0)));
    }

    /// A knee found between probes at `estimate` [`low`, `high`] with
    /// `df` degrees of freedom.
    fn between(estimate: f64, low: f64, high: f64, df: f64) -> Knee {
        Knee {
            found: Found::Between,
            estimate,
            interval: Some(Interval {
                low,
                high,
                level: 0.95,
            }),
            lo: None,
            hi: None,
            df,
            spread: 0.1,
        }
    }

    #[test]
    fn capacities_compare_on_the_log_scale() {
        let at = |estimate: f64, low: f64, high: f64| between(estimate, low, high, 1e9);
        let b = at(1000.0, 1000.0 / 1.05, 1050.0);
        let c = at(1800.0, 1800.0 / 1.05, 1890.0);
        let cmp = compare(&b, &c, 0.95).unwrap();
        assert!((cmp.diff_pct - 80.0).abs() < 1e-9);
        assert!(cmp.p_value < 1e-6 && cmp.diff_pct_ci.low > 60.0);
        let same = compare(&b, &at(1010.0, 960.0, 1060.0), 0.95).unwrap();
        assert!(same.p_value > 0.5 && same.diff_pct_ci.contains(0.0));
        let bound = Knee {
            found: Found::AtLeast,
            ..b.clone()
        };
        assert!(compare(&bound, &c, 0.95).is_none());
    }

    // Two searches of 3 runs per probe (4 degrees of freedom each): the
    // difference is judged on Student t at their Welch–Satterthwaite df,
    // wider than a normal interval of the same standard error.
    #[test]
    fn few_runs_compare_on_student_t() {
        let at = between;
        let (b, c) = (at(266.0, 200.0, 429.0, 4.0), at(649.0, 225.0, 710.0, 4.0));
        let t = compare(&b, &c, 0.95).unwrap();
        assert!(t.df > 4.0 && t.df < 8.0, "{}", t.df);
        let normal = compare(&at(266.0, 200.0, 429.0, 0.0), &c, 0.95).unwrap();
        assert!(normal.df.is_infinite());
        // Its interval reaches further than 1.96 standard errors, its
        // p-value is larger than the normal one of the same t.
        let q = (t.diff_pct_ci.high / 100.0).ln_1p() - (t.diff_pct / 100.0).ln_1p();
        assert!(q / t.se > 2.3, "{}", q / t.se);
        assert!(t.p_value > 2.0 * (1.0 - normal_cdf(t.t.abs())));
    }
}
