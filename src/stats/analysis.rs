//! Which comparison the design and the data call for.
//!
//! * [`Analysis::Ratio`] (the default): positive metrics are compared on
//!   the log scale ([`crate::stats::ratio`]), paired by round when the
//!   plan ran every target once per round ([`Design::Rounds`]: interleaved
//!   and randomized orders) and at least two rounds hold a run of both
//!   sides; otherwise, and for runs of two campaigns, unpaired (Welch on
//!   logs).
//! * [`Analysis::Means`] (`[plan] analysis = "means"`), and any metric with
//!   a value at or below zero, where no log exists: Welch's t on the values
//!   with Fieller's interval for the ratio of the means
//!   ([`crate::stats::compare`]).
//!
//! Pairing needs each round at most once per side; a side that holds a
//! round twice (which a plan never produces) is compared unpaired rather
//! than paired by guesswork. Runs whose round the other side lacks (a
//! failed run, an adaptive plan that stopped one pair earlier) are left out
//! of a paired comparison; [`Comparison::n`] says how many pairs were used.

use std::collections::BTreeMap;

use serde::Serialize;

use super::compare::{welch, Comparison};
use super::equivalence::{self, Margin};
use super::ratio::{paired_estimate, welch_estimate, LogEstimate};

/// The analysis an experiment asks for (`[plan] analysis`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Analysis {
    Ratio,
    Means,
}

impl Analysis {
    /// The plan's word (`"ratio"` or `"means"`); anything else, or none (a
    /// store written before the choice existed), is the default, ratio.
    pub fn from_word(word: Option<&str>) -> Analysis {
        match word {
            Some("means") => Analysis::Means,
            _ => Analysis::Ratio,
        }
    }

    /// The plan's word for it.
    pub fn word(self) -> &'static str {
        match self {
            Analysis::Ratio => "ratio",
            Analysis::Means => "means",
        }
    }

    /// The analysis for a metric with these values: [`Analysis::Means`]
    /// when asked for, or when a value is not positive (no log exists).
    pub fn for_values<'a>(self, values: impl IntoIterator<Item = &'a f64>) -> Analysis {
        match self {
            Analysis::Ratio if values.into_iter().all(|v| *v > 0.0) => Analysis::Ratio,
            _ => Analysis::Means,
        }
    }
}

/// How the runs being compared were scheduled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Design {
    /// Every target ran once per round, rounds numbered alike for all.
    Rounds,
    /// No common rounds: a sequential order, or two campaigns.
    Unpaired,
}

/// One measured run: the round it ran in and its value.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RoundValue {
    pub round: u32,
    pub value: f64,
}

impl RoundValue {
    /// `values` as the runs of rounds 1, 2, 3…
    pub fn in_rounds(values: &[f64]) -> Vec<RoundValue> {
        values
            .iter()
            .enumerate()
            .map(|(i, &value)| RoundValue {
                round: i as u32 + 1,
                value,
            })
            .collect()
    }
}

/// Compares `candidate` with `baseline` as the module doc says; `None`
/// when the chosen method has no answer (fewer than two runs on a side,
/// non-finite values, a zero baseline mean for Welch on means).
pub fn compare_runs(
    baseline: &[RoundValue],
    candidate: &[RoundValue],
    design: Design,
    analysis: Analysis,
    level: f64,
) -> Option<Comparison> {
    match Prepared::of(baseline, candidate, design, analysis)? {
        Prepared::Log(e) => e.comparison(level),
        Prepared::Means(b, c) => {
            let cmp = welch(&b, &c, level)?;
            Some(match b.iter().chain(&c).all(|v| *v >= 0.0) {
                true => within_ratio_scale(cmp),
                false => cmp,
            })
        }
    }
}

/// The tests of equivalence within ±`margin_pct` % of the comparison
/// [`compare_runs`] makes of the same runs, by the same method
/// ([`crate::stats::equivalence`]); `None` where that comparison has no
/// answer, or no ratio exists (a baseline mean at or below zero).
pub fn equivalence_runs(
    baseline: &[RoundValue],
    candidate: &[RoundValue],
    design: Design,
    analysis: Analysis,
    margin_pct: f64,
) -> Option<Margin> {
    match Prepared::of(baseline, candidate, design, analysis)? {
        Prepared::Log(e) => equivalence::on_log_scale(&e, margin_pct),
        Prepared::Means(b, c) => equivalence::on_means(&b, &c, margin_pct),
    }
}

/// The runs as the chosen method reads them.
enum Prepared {
    /// A log ratio, paired by round or not.
    Log(LogEstimate),
    /// The values of each side, for Welch on the means.
    Means(Vec<f64>, Vec<f64>),
}

impl Prepared {
    fn of(
        baseline: &[RoundValue],
        candidate: &[RoundValue],
        design: Design,
        analysis: Analysis,
    ) -> Option<Prepared> {
        let values = |xs: &[RoundValue]| xs.iter().map(|x| x.value).collect::<Vec<_>>();
        let (b, c) = (values(baseline), values(candidate));
        if analysis.for_values(b.iter().chain(&c)) == Analysis::Means {
            return Some(Prepared::Means(b, c));
        }
        if design == Design::Rounds {
            if let Some((pb, pc)) = pairs(baseline, candidate) {
                return paired_estimate(&pb, &pc).map(Prepared::Log);
            }
        }
        welch_estimate(&b, &c).map(Prepared::Log)
    }
}

/// A comparison of figures that cannot be negative (a byte count with a
/// zero in it, a share of the CPU), whose means' ratio cannot be either:
/// Fieller's confidence set, which knows no such bound, is cut at ratio 0
/// — a % difference of -100% — the parameter's own limit. The set cut to
/// the values the ratio can take keeps its coverage; the test, and so
/// the verdict, are unchanged.
fn within_ratio_scale(mut cmp: Comparison) -> Comparison {
    cmp.diff_pct_ci.low = cmp.diff_pct_ci.low.max(-100.0);
    if let Some(f) = cmp.fieller.as_mut() {
        f.floor = true;
    }
    cmp
}

/// The values of the rounds both sides ran, in round order; `None` when
/// fewer than two rounds are shared or a side holds a round twice.
fn pairs(baseline: &[RoundValue], candidate: &[RoundValue]) -> Option<(Vec<f64>, Vec<f64>)> {
    let by_round = |xs: &[RoundValue]| -> Option<BTreeMap<u32, f64>> {
        let map: BTreeMap<u32, f64> = xs.iter().map(|x| (x.round, x.value)).collect();
        (map.len() == xs.len()).then_some(map)
    };
    let (b, c) = (by_round(baseline)?, by_round(candidate)?);
    let (pb, pc): (Vec<f64>, Vec<f64>) = b
        .iter()
        .filter_map(|(round, vb)| c.get(round).map(|vc| (*vb, *vc)))
        .unzip();
    (pb.len() >= 2).then_some((pb, pc))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::{assert_close, paired_log, Method};

    fn runs(values: &[(u32, f64)]) -> Vec<RoundValue> {
        values
            .iter()
            .map(|&(round, value)| RoundValue { round, value })
            .collect()
    }

    // The impossible bounds: a non-negative figure with zeros
    // (mem_writeback_max_bytes 0 in two runs) is compared by Welch on the
    // means, whose Fieller interval reached below -100%; cut at -100%,
    // the rest of the comparison is Welch's own.
    #[test]
    fn non_negative_figures_never_fall_below_minus_100_percent() {
        let (b, c) = ([100.0, 110.0, 90.0], [0.0, 0.0, 90.0]);
        let raw = welch(&b, &c, 0.95).unwrap();
        assert!(raw.diff_pct_ci.low < -100.0, "{raw:?}");
        let r = |xs: &[f64]| {
            runs(
                &xs.iter()
                    .enumerate()
                    .map(|(i, v)| (i as u32, *v))
                    .collect::<Vec<_>>(),
            )
        };
        let cmp = compare_runs(&r(&b), &r(&c), Design::Rounds, Analysis::Ratio, 0.95).unwrap();
        assert_eq!(cmp.method, Method::WelchMeans);
        assert_eq!(cmp.diff_pct_ci.low, -100.0);
        assert_eq!(cmp.diff_pct_ci.high, raw.diff_pct_ci.high);
        assert_eq!((cmp.p_value, cmp.diff_pct), (raw.p_value, raw.diff_pct));
        // Unbounded (the baseline's mean not told from zero): [-100%, +inf).
        let cmp = compare_runs(
            &r(&[10.0, 0.0, 0.0]),
            &r(&[40.0, 0.0, 8.0]),
            Design::Rounds,
            Analysis::Ratio,
            0.95,
        )
        .unwrap();
        assert_eq!(
            (cmp.diff_pct_ci.low, cmp.diff_pct_ci.high),
            (-100.0, f64::INFINITY)
        );
        // A figure that can be negative keeps Fieller's interval whole.
        let cmp = compare_runs(
            &r(&[100.0, 110.0, 90.0]),
            &r(&[-5.0, 0.0, 90.0]),
            Design::Rounds,
            Analysis::Ratio,
            0.95,
        )
        .unwrap();
        assert!(cmp.diff_pct_ci.low < -100.0);
    }

    // Reference: the rules of the module doc, checked against the methods
    // they name (whose own references are SciPy's).
    #[test]
    fn rounds_are_paired_when_the_design_has_them() {
        let b = runs(&[(1, 100.0), (2, 105.0), (3, 110.3), (4, 115.2)]);
        let c = runs(&[(3, 113.9), (1, 103.4), (2, 107.6), (5, 130.0)]);
        let cmp = compare_runs(&b, &c, Design::Rounds, Analysis::Ratio, 0.95).unwrap();
        assert_eq!((cmp.method, cmp.n), (Method::PairedLog, 3));
        let direct = paired_log(&[100.0, 105.0, 110.3], &[103.4, 107.6, 113.9], 0.95);
        assert_eq!(Some(cmp), direct);

        let cmp = compare_runs(&b, &c, Design::Unpaired, Analysis::Ratio, 0.95).unwrap();
        assert_eq!((cmp.method, cmp.n), (Method::WelchLog, 4));
    }

    #[test]
    fn too_few_shared_rounds_or_a_repeated_round_is_unpaired() {
        let b = runs(&[(1, 100.0), (2, 105.0), (3, 110.3)]);
        let c = runs(&[(3, 113.9), (4, 103.4), (5, 107.6)]);
        let cmp = compare_runs(&b, &c, Design::Rounds, Analysis::Ratio, 0.95).unwrap();
        assert_eq!(cmp.method, Method::WelchLog);
        let twice = runs(&[(1, 101.0), (1, 102.0), (2, 107.6), (3, 111.0)]);
        let cmp = compare_runs(&b, &twice, Design::Rounds, Analysis::Ratio, 0.95).unwrap();
        assert_eq!(cmp.method, Method::WelchLog);
    }

    #[test]
    fn means_when_asked_or_when_a_value_is_not_positive() {
        let b = runs(&[(1, 100.0), (2, 105.0), (3, 110.3)]);
        let c = runs(&[(1, 103.4), (2, 107.6), (3, 113.9)]);
        let cmp = compare_runs(&b, &c, Design::Rounds, Analysis::Means, 0.95).unwrap();
        assert_eq!(cmp.method, Method::WelchMeans);
        let zero = runs(&[(1, 0.0), (2, 2.0), (3, 1.0)]);
        let cmp = compare_runs(&zero, &c, Design::Rounds, Analysis::Ratio, 0.95).unwrap();
        assert_eq!(cmp.method, Method::WelchMeans);
        assert_eq!(Analysis::Ratio.for_values(&[1.0, -0.5]), Analysis::Means);
        assert_eq!(Analysis::Ratio.for_values(&[1.0, 0.5]), Analysis::Ratio);
        assert_eq!(Analysis::from_word(Some("means")), Analysis::Means);
        assert_eq!(Analysis::from_word(None), Analysis::Ratio);
    }

    // Reference: the definition. Each method's interval built again at its
    // own level is its own interval; at level 1 - p it touches no
    // difference (the duality the family's intervals rest on:
    // crate::analysis::model::family); at a lower level it narrows.
    #[test]
    fn an_interval_is_built_again_at_any_level() {
        let b = [101.2, 98.7, 102.5, 99.9, 100.4];
        let c = [104.1, 106.3, 103.8, 105.2, 107.0];
        let zeros = [0.0, 12.0, 0.5];
        let rounds = RoundValue::in_rounds;
        let cases = [
            paired_log(&b, &c, 0.95).unwrap(),
            crate::stats::welch_log(&b, &c, 0.95).unwrap(),
            crate::stats::welch(&b, &c, 0.95).unwrap(),
            // Fieller cut at -100 %: a noisy figure with zeros.
            compare_runs(
                &rounds(&[10.0, 10.5, 9.5]),
                &rounds(&zeros),
                Design::Unpaired,
                Analysis::Ratio,
                0.95,
            )
            .unwrap(),
        ];
        assert_eq!(cases[3].diff_pct_ci.low, -100.0);
        for cmp in cases {
            let own = cmp.interval_at(0.95).unwrap();
            assert_close(own.low, cmp.diff_pct_ci.low);
            assert_close(own.high, cmp.diff_pct_ci.high);
            let narrow = cmp.interval_at(0.8).unwrap();
            assert!(narrow.low >= own.low && narrow.high < own.high, "{cmp:?}");
            if cmp.p_value < 0.5 {
                let edge = cmp.interval_at(1.0 - cmp.p_value).unwrap();
                let nearer = edge.low.abs().min(edge.high.abs());
                assert!(nearer < 1e-6, "{cmp:?} {edge:?}");
            }
        }
        let exact = crate::stats::welch(&[2.0; 3], &[1.5; 3], 0.95).unwrap();
        assert_eq!(exact.interval_at(0.5).unwrap().low, -25.0);
        assert_eq!(cases[0].interval_at(1.0), None);
    }
}
