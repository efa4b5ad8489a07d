//! Numbers every part of the report writes alike: a mean with its
//! interval, a % difference with its bounds, a p-value, and a unit to
//! chart in. A verdict is put into words in [`super::verdict`] alone.

use super::format::{effect, effect_text_in, format_value, Notation};
use crate::analysis::model::{TargetStats, MIN_RUNS};
use crate::analysis::telemetry::Shown;
use crate::metric::{Family, Unit};
use crate::stats::{Interval, Summary};

/// `1.2 GiB/s ± 3.4 MiB/s`, or the bare mean with one run; an interval
/// clipped at zero is shown whole, `1.4 ms [0, 6.3 ms]`.
pub fn mean_ci_text(t: &TargetStats, unit: Unit) -> String {
    let few = (t.values.len() < MIN_RUNS).then_some(t.values.as_slice());
    mean_ci_of(t.summary, t.ci, t.ci_clipped, few, unit)
}

/// [`mean_ci_text`] of a telemetry figure as its table keeps it.
pub fn shown_mean_ci_text(s: &Shown, unit: Unit) -> String {
    mean_ci_of(s.summary, s.ci, s.ci_clipped, s.few.as_deref(), unit)
}

/// The mean and its interval; `few`: the values, when too few for one.
fn mean_ci_of(
    summary: Option<Summary>,
    ci: Option<Interval>,
    clipped: bool,
    few: Option<&[f64]>,
    unit: Unit,
) -> String {
    match (summary, ci, few) {
        (Some(s), Some(ci), _) if clipped => format!(
            "{} [0, {}]",
            format_value(s.mean, unit),
            format_value(ci.high, unit)
        ),
        (Some(s), Some(ci), _) => format!(
            "{} ± {}",
            format_value(s.mean, unit),
            format_value(ci.half_width(), unit)
        ),
        (Some(_), None, Some(values)) => values_text(values, unit),
        (Some(s), None, None) => format_value(s.mean, unit),
        _ => "—".into(),
    }
}

/// A figure with its interval, not a mean: `649 tx/s [225, 710]` (a
/// capacity, whose interval on the log scale is not symmetric, so no ±).
pub fn estimate_ci_text(t: &TargetStats, unit: Unit) -> String {
    let Some(s) = t.summary else {
        return "—".into();
    };
    let interval = t.ci.map_or(String::new(), |i| {
        format!(
            " [{}, {}]",
            bare_value(i.low, unit),
            bare_value(i.high, unit)
        )
    });
    format!("{}{interval}", format_value(s.mean, unit))
}

/// A value without its unit where the unit is a count per second
/// (`1.65k`), in full otherwise: an interval beside a figure that has it.
pub fn bare_value(value: f64, unit: Unit) -> String {
    match unit.family() {
        Family::Count => crate::metric::format::si(value),
        _ => format_value(value, unit),
    }
}

/// The notation of `t`'s comparison: its estimate and interval together
/// ([`super::format::Notation`]).
pub fn notation(t: &TargetStats) -> Notation {
    match &t.comparison {
        Some(c) => Notation::of(&[c.diff_pct, c.diff_pct_ci.low, c.diff_pct_ci.high]),
        None => Notation::Percent,
    }
}

/// Below the minimum n, the values themselves: `1.2 GiB/s, 1.3 GiB/s (2
/// runs, too few for an interval)`.
pub fn values_text(values: &[f64], unit: Unit) -> String {
    let each: Vec<String> = values.iter().map(|v| format_value(*v, unit)).collect();
    match values.len() {
        1 => format!("{} (1 run)", each[0]),
        n => format!("{} ({n} runs)", each.join(", ")),
    }
}

/// `+12.3% [+8.1%, +16.5%]`, `×597 [×132, ×2706]`; an infinite bound is
/// written `unbounded`.
pub fn diff_text(t: &TargetStats) -> String {
    diff_text_in(t, None)
}

/// [`diff_text`] in notation `n` (its own when `None`).
pub fn diff_text_in(t: &TargetStats, n: Option<Notation>) -> String {
    let diff = t.comparison.as_ref().map(|c| (c.diff_pct, c.diff_pct_ci));
    diff_of(t.too_few, diff, n)
}

/// [`diff_text`] of a telemetry figure as its table keeps it.
pub fn shown_diff_text(s: &Shown) -> String {
    diff_of(s.too_few, s.diff, None)
}

/// A difference and its interval, or why there is none.
fn diff_of(too_few: bool, diff: Option<(f64, Interval)>, n: Option<Notation>) -> String {
    if too_few {
        return "too few runs".into();
    }
    match diff {
        Some((pct, ci)) => effect_text_in(pct, ci.low, ci.high, n),
        None => "—".into(),
    }
}

/// `[+8.1%, +16.5%]`: the interval of a difference alone, in the notation
/// of its estimate; `[unbounded]` when both bounds are.
pub fn interval_text(t: &TargetStats) -> String {
    match &t.comparison {
        Some(c) if c.diff_pct_ci.low.is_infinite() && c.diff_pct_ci.high.is_infinite() => {
            "[unbounded]".into()
        }
        Some(c) => {
            let n = notation(t);
            format!(
                "[{}, {}]",
                effect(c.diff_pct_ci.low, n),
                effect(c.diff_pct_ci.high, n)
            )
        }
        None => String::new(),
    }
}

/// The comparison's own p-value and, in a family of comparisons, the
/// adjusted one its verdict was judged on: `0.036; 0.288 adjusted over 8`.
pub fn p_text(t: &TargetStats) -> String {
    let one = |p: f64| match p {
        p if p < 0.001 => "<0.001".to_string(),
        p => format!("{p:.3}"),
    };
    match (&t.comparison, &t.correction) {
        (Some(c), Some(f)) => format!(
            "{}; {} adjusted over {}",
            one(c.p_value),
            one(f.p_adjusted),
            f.comparisons
        ),
        (Some(c), None) => one(c.p_value),
        _ => "—".into(),
    }
}

/// A scale and unit label for charting values of `unit` up to `max`.
pub fn display_unit(unit: Unit, max: f64) -> (f64, String) {
    const GIB: f64 = 1024.0 * 1024.0 * 1024.0;
    match unit.family() {
        Family::BytesPerSec if max >= GIB => (GIB, "GiB/s".into()),
        Family::BytesPerSec => (1024.0 * 1024.0, "MiB/s".into()),
        Family::Bytes => (1024.0 * 1024.0, "MiB".into()),
        Family::Nanoseconds if max >= 1e6 => (1e6, "ms".into()),
        Family::Nanoseconds => (1e3, "µs".into()),
        _ => (1.0, unit.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::model::target_stats;
    use crate::metric::Direction;
    use crate::stats::welch;

    // A telemetry figure keeps of its statistics what its table shows:
    // the table reads the same from either.
    #[test]
    fn a_telemetry_figure_reads_as_the_statistics_it_was_made_of() {
        let base = [10.0, 11.0, 12.0, 10.5, 11.5, 12.5];
        let wide = [0.5, 9.0, 0.2, 14.0, 0.1, 0.3];
        let cases = [
            target_stats("a", base.to_vec(), None, Direction::HigherIsBetter),
            target_stats("a", vec![3.0, 4.0], None, Direction::HigherIsBetter),
            target_stats("a", vec![], None, Direction::HigherIsBetter),
            // An interval reaching below zero, clipped there.
            target_stats("a", wide.to_vec(), None, Direction::LowerIsBetter),
            target_stats(
                "b",
                base.iter().map(|v| v * 1.3).collect(),
                welch(&base, &base.map(|v| v * 1.3), 0.95),
                Direction::HigherIsBetter,
            ),
            // Compared on too few runs.
            target_stats(
                "b",
                vec![13.0, 14.0],
                welch(&base, &[13.0, 14.0], 0.95),
                Direction::HigherIsBetter,
            ),
        ];
        assert!(cases[3].ci_clipped, "a case of a clipped interval");
        for t in &cases {
            let s = Shown::of(t);
            assert_eq!(
                shown_mean_ci_text(&s, Unit::Bytes),
                mean_ci_text(t, Unit::Bytes)
            );
            assert_eq!(shown_diff_text(&s), diff_text(t));
        }
    }
}
