//! Words and numbers every part of the report writes alike: a mean with
//! its interval, a % difference with its bounds, a p-value, a verdict, what
//! would settle an inconclusive comparison, and a unit to chart in.

use super::format::{effect, effect_text, format_value, Notation};
use crate::analysis::model::{runs_text, Caveat, MetricReport, TargetStats, MIN_RUNS};
use crate::metric::{Family, Unit};
use crate::warning::WarningKind;

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

/// `+12.3% [+8.1%, +16.5%]`, `×597 [×132, ×2706]`; an infinite bound is
/// written `unbounded`.
pub fn diff_text(t: &TargetStats) -> String {
    if t.too_few {
        return "too few runs".into();
    }
    match &t.comparison {
        Some(c) => effect_text(c.diff_pct, c.diff_pct_ci.low, c.diff_pct_ci.high),
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

/// How a difference of metric `name` (its human name) reads, the sign
/// with the quantity rather than with the verdict: `takes 20.2% less
/// time` (a time), `38.4% lower p99 latency` (a latency), `-64.0% TPS` (a
/// rate, an amount); in ratio notation the candidate's quantity as a
/// multiple of the baseline's, `÷3.3 total time`, `×597 throughput`. And
/// whether that names the metric.
pub fn change_text(diff_pct: f64, n: Notation, name: &str, unit: Unit) -> (String, bool) {
    let size = diff_pct.abs();
    let less = diff_pct < 0.0;
    match (n, unit.family()) {
        (Notation::Ratio, _) => (format!("{} {name}", effect(diff_pct, n)), true),
        (_, Family::Seconds) => {
            let how = if less { "less" } else { "more" };
            (format!("takes {size:.1}% {how} time"), false)
        }
        (_, Family::Nanoseconds) => {
            let how = if less { "lower" } else { "higher" };
            (format!("{size:.1}% {how} {name}"), true)
        }
        _ => (format!("{} {name}", effect(diff_pct, n)), true),
    }
}

/// A significant difference in a table cell beside its verdict word:
/// `+60.3% faster` for a rate, `24.6% less time, faster` for a time,
/// `38.4% lower, faster` for a latency; `×597 faster`, `÷3.3 time,
/// faster` from ×2.
pub fn versus_text(diff_pct: f64, n: Notation, unit: Unit, word: &str) -> String {
    let size = diff_pct.abs();
    let less = diff_pct < 0.0;
    match (n, unit.family()) {
        (Notation::Ratio, Family::Seconds) => format!("{} time, {word}", effect(diff_pct, n)),
        (Notation::Ratio, Family::Nanoseconds) => format!("{}, {word}", effect(diff_pct, n)),
        (_, Family::Seconds) => {
            let how = if less { "less" } else { "more" };
            format!("{size:.1}% {how} time, {word}")
        }
        (_, Family::Nanoseconds) => {
            let how = if less { "lower" } else { "higher" };
            format!("{size:.1}% {how}, {word}")
        }
        _ => format!("{} {word}", effect(diff_pct, n)),
    }
}

/// The marks of one target's verdict in a figure whose row names it:
/// a kind its own runs carry reads bare, one only others' runs carry
/// (the baseline's) names them — `⚠ working set in the ARC, durability
/// not measured (ext4-tuned)`.
pub fn caveat_marks_of(caveats: &[Caveat], own: &str) -> String {
    marks(caveats, |on, _| on.contains(&own))
}

/// `⚠ page cache (tmpfs), noisy host`: the caveats of a verdict, each kind
/// once with the target whose runs carry it (none named when every
/// target's do); empty without caveats. The one rendering of
/// [`crate::analysis::model::TargetStats::caveats`], in verdict lines and
/// the overview figure alike.
pub fn caveat_marks(caveats: &[Caveat]) -> String {
    marks(caveats, |on, all| on.len() == all && all > 1)
}

/// Each kind of `caveats` once, bare where `bare(targets carrying it,
/// how many targets carry any)` says so, else with those targets named.
fn marks(caveats: &[Caveat], bare: impl Fn(&[&str], usize) -> bool) -> String {
    if caveats.is_empty() {
        return String::new();
    }
    let mut kinds: Vec<WarningKind> = caveats.iter().map(|c| c.kind).collect();
    kinds.sort();
    kinds.dedup();
    let all: std::collections::BTreeSet<&str> = caveats.iter().map(|c| c.target.as_str()).collect();
    let each: Vec<String> = kinds
        .iter()
        .map(|k| {
            let mut on: Vec<&str> = caveats
                .iter()
                .filter(|c| c.kind == *k)
                .map(|c| c.target.as_str())
                .collect();
            on.sort();
            on.dedup();
            match bare(&on, all.len()) {
                true => k.label().to_string(),
                false => format!("{} ({})", k.label(), on.join(", ")),
            }
        })
        .collect();
    format!("⚠ {}", each.join(", "))
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
        crate::analysis::model::family::METHOD
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
    use super::{
        caveat_marks, caveat_marks_of, change_text, versus_text, Caveat, Notation, Unit,
        WarningKind,
    };

    #[test]
    fn caveats_are_marked_once_per_kind_with_the_side_that_carries_them() {
        let c = |kind, target: &str| Caveat {
            kind,
            target: target.into(),
            runs: 1,
            of: 3,
        };
        assert_eq!(caveat_marks(&[]), "");
        let marks = caveat_marks(&[
            c(WarningKind::NoisyHost, "cwd"),
            c(WarningKind::PageCache, "tmpfs"),
            c(WarningKind::NoisyHost, "tmpfs"),
        ]);
        assert_eq!(marks, "⚠ page cache (tmpfs), noisy host");
        // In a row that names tmpfs, its own caveats need no name; the
        // baseline's do.
        let row = [
            c(WarningKind::DurabilityNotMeasured, "ext4"),
            c(WarningKind::PageCache, "tmpfs"),
            c(WarningKind::NoisyHost, "ext4"),
            c(WarningKind::NoisyHost, "tmpfs"),
        ];
        assert_eq!(
            caveat_marks_of(&row, "tmpfs"),
            "⚠ page cache, durability not measured (ext4), noisy host"
        );
    }

    // The examples: a time that drops reads as less time, a rate
    // keeps its sign beside its name; from ×2 both read as ratios.
    #[test]
    fn changes_read_in_the_metric_s_direction() {
        let p = Notation::Percent;
        assert_eq!(
            change_text(-20.2, p, "total time", Unit::Seconds),
            ("takes 20.2% less time".to_string(), false)
        );
        assert_eq!(
            change_text(-64.0, Notation::Ratio, "TPS", Unit::TransactionsPerSec),
            ("÷2.8 TPS".to_string(), true)
        );
        assert_eq!(
            change_text(12.5, p, "p99 latency", Unit::Nanoseconds).0,
            "12.5% higher p99 latency"
        );
        assert_eq!(
            versus_text(-24.6, p, Unit::Seconds, "faster"),
            "24.6% less time, faster"
        );
        assert_eq!(
            versus_text(60.3, p, Unit::BytesPerSec, "faster"),
            "+60.3% faster"
        );
        assert_eq!(
            versus_text(59600.0, Notation::Ratio, Unit::BytesPerSec, "faster"),
            "×597 faster"
        );
    }
}
