//! Numbers every part of the report writes alike: a mean with its
//! interval, a % difference with its bounds, a p-value, and a unit to
//! chart in. A verdict is put into words in [`super::verdict`] alone.

use super::format::{effect, effect_text_in, format_value, Notation};
use crate::analysis::model::{TargetStats, MIN_RUNS};
use crate::metric::{Family, Unit};

/// `1.2 GiB/s ± 3.4 MiB/s`, or the bare mean with one run; an interval
/// clipped at zero is shown whole, `1.4 ms [0, 6.3 ms]`.
pub fn mean_ci_text(t: &TargetStats, unit: Unit) -> String {
    match (t.summary, t.ci) {
        (Some(s), Some(ci)) if t.ci_clipped => format!(
            "{} [0, {}]",
            format_value(s.mean, unit),
            format_value(ci.high, unit)
        ),
        (Some(s), Some(ci)) => format!(
            "{} ± {}",
            format_value(s.mean, unit),
            format_value(ci.half_width(), unit)
        ),
        (Some(_), None) if t.values.len() < MIN_RUNS => values_text(&t.values, unit),
        (Some(s), None) => format_value(s.mean, unit),
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
    if t.too_few {
        return "too few runs".into();
    }
    match &t.comparison {
        Some(c) => effect_text_in(c.diff_pct, c.diff_pct_ci.low, c.diff_pct_ci.high, n),
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
