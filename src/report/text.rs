//! Words and numbers every part of the report writes alike: a mean with
//! its interval, a % difference with its bounds, a p-value, a verdict, what
//! would settle an inconclusive comparison, and a unit to chart in.

use super::format::format_value;
use super::model::{runs_text, MetricReport, TargetStats};
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
        (Some(s), None) => format_value(s.mean, unit),
        _ => "—".into(),
    }
}

/// `+12.3% [+8.1%, +16.5%]`; an infinite bound is written `unbounded`.
pub fn diff_text(t: &TargetStats) -> String {
    match &t.comparison {
        Some(c) if c.diff_pct_ci.low.is_infinite() && c.diff_pct_ci.high.is_infinite() => {
            format!("{:+.1}% [unbounded: baseline too noisy]", c.diff_pct)
        }
        Some(c) => format!(
            "{:+.1}% [{}, {}]",
            c.diff_pct,
            bound_text(c.diff_pct_ci.low),
            bound_text(c.diff_pct_ci.high)
        ),
        None => "—".into(),
    }
}

/// A bound of a % difference: one decimal, or as many (up to six) as keep a
/// bound above -100 % (a ratio above 0) from printing as -100.0 %.
pub fn bound_text(pct: f64) -> String {
    if pct.is_infinite() {
        return "unbounded".into();
    }
    let minus_100 = |d: usize| format!("{pct:.d$}") == format!("{:.d$}", -100.0);
    let digits = (1..=6)
        .find(|&d| pct <= -100.0 || !minus_100(d))
        .unwrap_or(6);
    format!("{pct:+.digits$}%")
}

/// The verdict's word, marked exploratory for a secondary metric.
pub fn verdict_text(t: &TargetStats, m: &MetricReport) -> String {
    match t.verdict {
        Some(v) if m.exploratory => format!("{} (exploratory)", v.word(m.direction)),
        Some(v) => v.word(m.direction).to_string(),
        None => "—".into(),
    }
}

/// `±5% needs about 9 runs per target`, for an inconclusive comparison.
pub fn settle_text(t: &TargetStats) -> Option<String> {
    let s = t.settle?;
    Some(format!(
        "±{}% needs {} runs per target",
        s.pct,
        runs_text(s.runs)
    ))
}

pub fn p_text(t: &TargetStats) -> String {
    match &t.comparison {
        Some(c) if c.p_value < 0.001 => "<0.001".into(),
        Some(c) => format!("{:.3}", c.p_value),
        None => "—".into(),
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
    use super::bound_text;

    // Reference: the rule on bound_text; a ratio above 0 never prints as
    // -100.0%.
    #[test]
    fn bounds_near_minus_100_keep_their_digits() {
        assert_eq!(bound_text(12.34), "+12.3%");
        assert_eq!(bound_text(-46.44), "-46.4%");
        assert_eq!(bound_text(-99.94), "-99.9%");
        assert_eq!(bound_text(-99.97), "-99.97%");
        assert_eq!(bound_text(-99.99994), "-99.9999%");
        assert_eq!(bound_text(-100.0 + 1e-9), "-100.000000%");
        assert_eq!(bound_text(-100.0), "-100.0%");
        assert_eq!(bound_text(f64::INFINITY), "unbounded");
    }
}
