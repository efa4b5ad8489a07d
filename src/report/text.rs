//! Words and numbers every part of the report writes alike: a mean with
//! its interval, a % difference with its bounds, a p-value, a verdict, what
//! would settle an inconclusive comparison, and a unit to chart in.

use super::format::format_value;
use crate::analysis::model::{runs_text, MetricReport, TargetStats, MIN_RUNS};
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

/// Below the minimum n, the values themselves: `1.2 GiB/s, 1.3 GiB/s (2
/// runs, too few for an interval)`.
pub fn values_text(values: &[f64], unit: Unit) -> String {
    let each: Vec<String> = values.iter().map(|v| format_value(*v, unit)).collect();
    match values.len() {
        1 => format!("{} (1 run)", each[0]),
        n => format!("{} ({n} runs)", each.join(", ")),
    }
}

/// The caveats a verdict carries: `⚠ durability not measured on ext4 (3
/// of 3 runs); ⚠ page cache on disk (1 of 3 runs)`.
pub fn caveats_text(t: &TargetStats) -> Option<String> {
    let each: Vec<String> = t
        .caveats
        .iter()
        .map(|c| {
            format!(
                "⚠ {} on {} ({} of {} runs)",
                c.kind.label(),
                c.target,
                c.runs,
                c.of
            )
        })
        .collect();
    (!each.is_empty()).then(|| each.join("; "))
}

/// What stands in for a verdict below the minimum n.
pub fn too_few_text() -> String {
    format!("too few runs (at least {MIN_RUNS} for a verdict)")
}

/// `+12.3% [+8.1%, +16.5%]`; an infinite bound is written `unbounded`.
pub fn diff_text(t: &TargetStats) -> String {
    if t.too_few {
        return "too few runs".into();
    }
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

/// `[+8.1%, +16.5%]`: the interval of a % difference alone; `[unbounded]`
/// when both bounds are.
pub fn interval_text(t: &TargetStats) -> String {
    match &t.comparison {
        Some(c) if c.diff_pct_ci.low.is_infinite() && c.diff_pct_ci.high.is_infinite() => {
            "[unbounded]".into()
        }
        Some(c) => format!(
            "[{}, {}]",
            bound_text(c.diff_pct_ci.low),
            bound_text(c.diff_pct_ci.high)
        ),
        None => String::new(),
    }
}

/// How a % difference of metric `name` reads, the sign with the quantity
/// rather than with the verdict: `takes 20.2% less time` (a time),
/// `38.4% lower lat_mean_ns` (a latency), `-64.0% tps` (a rate, an
/// amount); and whether that names the metric.
pub fn change_text(diff_pct: f64, name: &str, unit: Unit) -> (String, bool) {
    let size = diff_pct.abs();
    let less = diff_pct < 0.0;
    match unit.family() {
        Family::Seconds => {
            let how = if less { "less" } else { "more" };
            (format!("takes {size:.1}% {how} time"), false)
        }
        Family::Nanoseconds => {
            let how = if less { "lower" } else { "higher" };
            (format!("{size:.1}% {how} {name}"), true)
        }
        _ => (format!("{diff_pct:+.1}% {name}"), true),
    }
}

/// A significant difference in a table cell beside its verdict word:
/// `+60.3% faster` for a rate, `24.6% less time, faster` for a time,
/// `38.4% lower, faster` for a latency.
pub fn versus_text(diff_pct: f64, unit: Unit, word: &str) -> String {
    let size = diff_pct.abs();
    let less = diff_pct < 0.0;
    match unit.family() {
        Family::Seconds => {
            let how = if less { "less" } else { "more" };
            format!("{size:.1}% {how} time, {word}")
        }
        Family::Nanoseconds => {
            let how = if less { "lower" } else { "higher" };
            format!("{size:.1}% {how}, {word}")
        }
        _ => format!("{diff_pct:+.1}% {word}"),
    }
}

/// A bound of a % difference: one decimal, or as many (up to six) as keep a
/// bound above -100 % (a ratio above 0) from printing as -100.0 %.
///
/// A bound past a hundredfold (+9900 %) is written as the ratio it stands
/// for (`×4.6e14`, not `+46369457298932072.0%`): with two or three runs the
/// t quantile makes such bounds, and their digits would look like a
/// measurement.
pub fn bound_text(pct: f64) -> String {
    if pct.is_infinite() {
        return "unbounded".into();
    }
    if pct > 9900.0 {
        let ratio = 1.0 + pct / 100.0;
        return if ratio < 1e4 {
            format!("×{ratio:.0}")
        } else {
            format!("×{ratio:.1e}")
        };
    }
    let minus_100 = |d: usize| format!("{pct:.d$}") == format!("{:.d$}", -100.0);
    let digits = (1..=6)
        .find(|&d| pct <= -100.0 || !minus_100(d))
        .unwrap_or(6);
    format!("{pct:+.digits$}%")
}

/// The verdict's word, marked exploratory for a secondary metric.
pub fn verdict_text(t: &TargetStats, m: &MetricReport) -> String {
    if t.too_few {
        return too_few_text();
    }
    let word = match t.verdict {
        Some(v) if m.exploratory => format!("{} (exploratory)", v.word(m.direction)),
        Some(v) => v.word(m.direction).to_string(),
        None => return "—".into(),
    };
    let word = match chance_text(t) {
        Some(chance) => format!("{word} ({chance})"),
        None => word,
    };
    match caveats_text(t) {
        Some(caveats) => format!("{word} {caveats}"),
        None => word,
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

/// For a comparison its own p would have called and its family does not:
/// `significant alone, not among 100 comparisons (Benjamini–Hochberg):
/// chance could explain it`.
pub fn chance_text(t: &TargetStats) -> Option<String> {
    let f = t.correction.filter(|f| f.chance)?;
    Some(format!(
        "significant alone, not among {} comparisons ({}): chance could explain it",
        f.comparisons,
        crate::analysis::family::METHOD
    ))
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
    // The examples: a time that drops reads as less time, a rate
    // keeps its sign beside its name.
    #[test]
    fn changes_read_in_the_metric_s_direction() {
        use super::{change_text, versus_text, Unit};
        assert_eq!(
            change_text(-20.2, "total_s", Unit::Seconds),
            ("takes 20.2% less time".to_string(), false)
        );
        assert_eq!(
            change_text(-64.0, "tps", Unit::TransactionsPerSec),
            ("-64.0% tps".to_string(), true)
        );
        assert_eq!(
            change_text(12.5, "lat_p99_ns", Unit::Nanoseconds).0,
            "12.5% higher lat_p99_ns"
        );
        assert_eq!(
            versus_text(-24.6, Unit::Seconds, "faster"),
            "24.6% less time, faster"
        );
        assert_eq!(
            versus_text(60.3, Unit::BytesPerSec, "faster"),
            "+60.3% faster"
        );
    }

    #[test]
    fn bounds_near_minus_100_keep_their_digits() {
        assert_eq!(bound_text(12.34), "+12.3%");
        assert_eq!(bound_text(9800.0), "+9800.0%");
        assert_eq!(bound_text(15441.0), "×155");
        assert_eq!(bound_text(46369457298932072.0), "×4.6e14");
        assert_eq!(bound_text(-46.44), "-46.4%");
        assert_eq!(bound_text(-99.94), "-99.9%");
        assert_eq!(bound_text(-99.97), "-99.97%");
        assert_eq!(bound_text(-99.99994), "-99.9999%");
        assert_eq!(bound_text(-100.0 + 1e-9), "-100.000000%");
        assert_eq!(bound_text(-100.0), "-100.0%");
        assert_eq!(bound_text(f64::INFINITY), "unbounded");
    }
}
