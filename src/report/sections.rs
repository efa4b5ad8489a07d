//! The content of a report, as tables and sentences built from the model and
//! the stored campaign; Markdown and HTML render the same sections.

use serde_json::Value;

use super::format::format_value;
use super::model::{
    plan_analysis, MetricReport, Report, TargetStats, WorkloadReport, LEVEL, MIN_EFFECT_PCT,
    RESOLUTION_PCT,
};
use super::table::Table;
use crate::metric::Unit;
use crate::stats::{Analysis, Method, Verdict};
use crate::store::CampaignData;

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
        super::model::runs_text(s.runs)
    ))
}

pub fn p_text(t: &TargetStats) -> String {
    match &t.comparison {
        Some(c) if c.p_value < 0.001 => "<0.001".into(),
        Some(c) => format!("{:.3}", c.p_value),
        None => "—".into(),
    }
}

/// Targets as rows, metrics as columns, mean ± CI.
pub fn values_table(w: &WorkloadReport, baseline: &str) -> Table {
    let mut header = vec!["target".to_string(), "n".to_string()];
    header.extend(w.metrics.iter().map(|m| format!("{} ({})", m.name, m.unit)));
    let mut right = vec![false, true];
    right.extend(w.metrics.iter().map(|_| true));
    let mut t = Table {
        header,
        rows: Vec::new(),
        right,
    };
    let Some(primary) = w.primary_metric() else {
        return t;
    };
    for (i, ts) in primary.targets.iter().enumerate() {
        let name = if ts.target == baseline {
            format!("{} (baseline)", ts.target)
        } else {
            ts.target.clone()
        };
        let mut row = vec![name, ts.values.len().to_string()];
        row.extend(w.metrics.iter().map(|m| {
            m.targets
                .get(i)
                .map(|x| mean_ci_text(x, m.unit))
                .unwrap_or_default()
        }));
        t.rows.push(row);
    }
    t
}

/// Per non-baseline target and metric: % difference with CI, p and verdict.
pub fn diff_table(w: &WorkloadReport) -> Table {
    let mut t = Table::new(
        &["target", "metric", "difference [95% CI]", "p", "verdict"],
        &[false, false, true, true, false],
    );
    for m in &w.metrics {
        for ts in m.targets.iter().filter(|x| x.comparison.is_some()) {
            let verdict = match settle_text(ts).filter(|_| !m.exploratory) {
                Some(more) => format!("{}; {more}", verdict_text(ts, m)),
                None => verdict_text(ts, m),
            };
            t.push(vec![
                ts.target.clone(),
                m.name.clone(),
                diff_text(ts),
                p_text(ts),
                verdict,
            ]);
        }
    }
    t
}

/// The environment as a spec table, as the seeds typed it by hand.
pub fn environment_table(env: &Value) -> Table {
    let mut t = Table::new(&["", ""], &[false, false]);
    let rows = [
        ("Host", env["hostname"].as_str().map(String::from)),
        (
            "CPU",
            env["cpu_model"]
                .as_str()
                .map(|m| format!("{m} ({} CPUs)", env["cpu_count"])),
        ),
        (
            "Memory",
            env["memory_bytes"]
                .as_f64()
                .map(|b| format_value(b, Unit::Bytes)),
        ),
        ("Kernel", env["kernel"].as_str().map(String::from)),
        (
            "Distribution",
            env["distribution"].as_str().map(String::from),
        ),
        ("storlab", env["storlab_version"].as_str().map(String::from)),
        ("Run as root", env["root"].as_bool().map(|b| b.to_string())),
    ];
    for (k, v) in rows {
        t.push(vec![k.into(), v.unwrap_or_else(|| "unknown".into())]);
    }
    t
}

/// Each target's recorded facts.
pub fn targets_table(c: &CampaignData, baseline: &str) -> Table {
    let mut t = Table::new(
        &[
            "target",
            "kind",
            "filesystem",
            "mount options",
            "device",
            "size",
            "free",
        ],
        &[false, false, false, false, false, true, true],
    );
    for tg in &c.targets {
        let f = &tg.facts;
        let dev = &f["block_device"];
        let device = if dev.is_object() {
            let rot = match dev["rotational"].as_bool() {
                Some(true) => "rotational",
                Some(false) => "non-rotational",
                None => "?",
            };
            format!(
                "{} {} ({rot}, scheduler {})",
                dev["name"].as_str().unwrap_or("?"),
                dev["model"].as_str().unwrap_or("?"),
                dev["scheduler"].as_str().unwrap_or("?")
            )
        } else {
            f["mount_source"].as_str().unwrap_or("none").to_string()
        };
        let name = if tg.name == baseline {
            format!("{} (baseline)", tg.name)
        } else {
            tg.name.clone()
        };
        t.push(vec![
            name,
            tg.kind.clone(),
            f["fs_type"].as_str().unwrap_or("?").into(),
            f["mount_options"].as_str().unwrap_or("?").into(),
            device,
            f["size_bytes"]
                .as_f64()
                .map(|b| format_value(b, Unit::Bytes))
                .unwrap_or_default(),
            f["free_bytes"]
                .as_f64()
                .map(|b| format_value(b, Unit::Bytes))
                .unwrap_or_default(),
        ]);
    }
    t
}

/// What a workload's runs were measured with (the PostgreSQL server's
/// version and settings): one row per fact, its value when every run
/// agrees, else each target's (`ext4: 15.18; zfs: 16.4`).
pub fn facts_table(c: &CampaignData, workload: &str) -> Table {
    let mut t = Table::new(&["fact", "value"], &[false, false]);
    let runs: Vec<_> = c.runs.iter().filter(|r| r.workload == workload).collect();
    let mut names: Vec<&str> = runs
        .iter()
        .flat_map(|r| r.facts.keys().map(String::as_str))
        .collect();
    names.sort_unstable();
    names.dedup();
    for name in names {
        let mut per_target: Vec<(&str, Vec<&str>)> = Vec::new();
        for r in &runs {
            let Some(v) = r.facts.get(name) else { continue };
            match per_target.iter_mut().find(|(t, _)| *t == r.target) {
                Some((_, vs)) if !vs.contains(&v.as_str()) => vs.push(v),
                Some(_) => {}
                None => per_target.push((&r.target, vec![v])),
            }
        }
        let first = &per_target[0].1;
        let value = if per_target.iter().all(|(_, vs)| vs == first) {
            first.join(" / ")
        } else {
            let each: Vec<String> = per_target
                .iter()
                .map(|(t, vs)| format!("{t}: {}", vs.join(" / ")))
                .collect();
            each.join("; ")
        };
        t.push(vec![name.to_string(), value]);
    }
    t
}

/// The methodology, written out from the plan, what the runs recorded and
/// how the report compared them.
pub fn methodology(c: &CampaignData, r: &Report) -> Vec<String> {
    let plan = &c.experiment["plan"];
    let runs = &c.runs;
    let measured = runs.iter().filter(|r| !r.warmup).count();
    let warmups = runs.len() - measured;
    let dropped = runs.iter().filter(|r| r.caches_dropped).count();
    let remounted = runs.iter().filter(|r| r.remounted).count();
    let order = plan["order"].as_str().unwrap_or("interleaved");
    let order_text = match order {
        "randomized" => format!(
            "in rounds, each round's order shuffled with seed {}",
            plan["seed"]
        ),
        "sequential" => "sequentially: all repetitions of a pair back to back".to_string(),
        _ => "in interleaved rounds: every target–workload pair once per round".to_string(),
    };
    let mut lines = vec![
        repetitions_text(&plan["repetitions"], &order_text),
        format!("{measured} measured runs and {warmups} warm-up runs (warm-ups are stored but left out of every statistic) were recorded."),
        format!("Page caches were synced and dropped before {dropped} of {} runs; targets were remounted before {remounted} runs.", runs.len()),
        format!(
            "Intervals are {:.0}% Student-t intervals of the mean; where such an interval of a metric that cannot be negative reaches below zero, it is clipped at zero and shown as [0, upper].",
            LEVEL * 100.0
        ),
    ];
    lines.extend(comparison_lines(c, r));
    lines.extend(super::steady::methodology_lines(c));
    lines
}

/// The methodology's sentences on how targets were compared: which
/// analysis each comparison used and why, and what the verdicts mean; none
/// when nothing was compared.
fn comparison_lines(c: &CampaignData, r: &Report) -> Vec<String> {
    let used = |method: Method| count(r, |m| m == method);
    let (paired, unpaired, means) = (
        used(Method::PairedLog),
        used(Method::WelchLog),
        used(Method::WelchMeans),
    );
    if paired + unpaired + means == 0 {
        return Vec::new();
    }
    let mut lines = Vec::new();
    if paired + unpaired > 0 {
        lines.push(RATIO.to_string());
    }
    let order = c.experiment["plan"]["order"]
        .as_str()
        .unwrap_or("interleaved");
    if paired > 0 {
        lines.push(paired_text(order));
    }
    if unpaired > 0 {
        lines.push(match order {
            "sequential" => "Runs are not paired (sequential order: each pair's repetitions ran back to back, not in shared rounds): the test is Welch's t on the logs.".to_string(),
            _ => format!("{unpaired} comparison(s) had fewer than two rounds with a run on both sides and use Welch's t on the logs instead of pairs."),
        });
    }
    if means > 0 {
        lines.push(means_text(c, r));
    }
    lines.push(format!(
        "A difference is called faster or slower when p < 0.05 and it is at least {MIN_EFFECT_PCT}%. A workload's verdict, and the regression gate of `storlab compare --fail-on-regression`, concern its primary metric; the differences of its other metrics are exploratory: they are not corrected for the number of metrics compared, and about one in twenty of them can pass p < 0.05 by chance."
    ));
    let open = r
        .workloads
        .iter()
        .filter_map(|w| w.primary_metric())
        .any(|m| m.targets.iter().any(|t| t.settle.is_some()));
    if open {
        lines.push(format!("For an inconclusive comparison the report estimates how many runs would measure the difference to ±{RESOLUTION_PCT}%, from the spread seen so far (the interval narrows as 1/√n); with two or three runs that spread is itself rough, so the count is a guide."));
    }
    lines
}

const RATIO: &str = "Each target is compared with the baseline on the ratio scale: the % difference is the ratio of the geometric means of their runs, and its interval is exp of a Student-t interval of the mean log ratio, so it never reaches -100% (T. Kalibera & R. Jones, \"Rigorous benchmarking in reasonable time\", ISMM 2013).";

fn paired_text(order: &str) -> String {
    let within = match order {
        "randomized" => "the order within each round was shuffled, so neither target systematically ran first",
        _ => "within a round the targets always ran in the same order (interleaved), so a drift fast enough to differ between neighbouring runs is not cancelled; order = \"randomized\" shuffles each round",
    };
    format!("Runs are paired by round: every target ran once per round, so a drift over the campaign (a neighbour's load, writeback, a warming cache) shifts both runs of a round alike and cancels in their ratio; the test is Student's paired t on the per-round log ratios. {}{}.", within[..1].to_uppercase(), &within[1..])
}

/// Why some comparisons used Welch's t on the means.
fn means_text(c: &CampaignData, r: &Report) -> String {
    const FIELLER: &str = "Welch's t-test on the arithmetic means, with Fieller's interval for the % difference (unbounded when the baseline's mean is not told apart from zero)";
    if plan_analysis(c) == Analysis::Means {
        return format!(
            "As the plan asks (analysis = \"means\"), targets are compared by {FIELLER}."
        );
    }
    let metrics: Vec<String> = r
        .workloads
        .iter()
        .flat_map(|w| {
            w.metrics
                .iter()
                .filter(|m| m.analysis == Analysis::Means)
                .map(move |m| format!("{} {}", w.name, m.name))
        })
        .collect();
    format!(
        "{} had values at or below zero, which have no logarithm: they are compared by {FIELLER}.",
        metrics.join(", ")
    )
}

/// How many comparisons in the report used a method `f` accepts.
fn count(r: &Report, f: impl Fn(Method) -> bool) -> usize {
    r.workloads
        .iter()
        .flat_map(|w| &w.metrics)
        .flat_map(|m| &m.targets)
        .filter_map(|t| t.comparison.as_ref())
        .filter(|c| f(c.method))
        .count()
}

fn repetitions_text(reps: &Value, order_text: &str) -> String {
    match reps {
        Value::Object(a) => format!(
            "Each target–workload pair ran at least {} and at most {} times, {order_text}, adding rounds while the 95% CI half-width of its primary metric was above {}% of the mean.",
            a["min"], a["max"], a["until_ci_pct"]
        ),
        n => format!("Each target–workload pair was planned {n} times, {order_text}."),
    }
}

/// Why each pair stopped, for adaptive plans and time limits.
pub fn stops_table(c: &CampaignData) -> Table {
    let mut t = Table::new(
        &[
            "workload",
            "target",
            "measured runs",
            "stopped on",
            "CI half-width",
        ],
        &[false, false, true, false, true],
    );
    for s in &c.stops {
        let why = match s.reason.as_str() {
            "width" => "interval narrow enough",
            "max" => "maximum repetitions",
            "time" => "max_time",
            _ => "fixed repetitions",
        };
        let ci = s
            .ci_pct
            .map(|p| format!("{p:.2}%"))
            .unwrap_or_else(|| "—".into());
        t.push(vec![
            s.workload.clone(),
            s.target.clone(),
            s.measured_runs.to_string(),
            why.into(),
            ci,
        ]);
    }
    t
}

/// A one-line verdict per non-baseline target on the primary metric.
pub fn headline(r: &Report) -> Vec<String> {
    let mut out = Vec::new();
    for w in &r.workloads {
        let Some(m) = w.primary_metric() else {
            continue;
        };
        for t in m.targets.iter().filter(|t| t.comparison.is_some()) {
            let mut line = match t.verdict {
                Some(v) if v != Verdict::NoSignificantDifference => format!(
                    "{}: {} is {} than {} by {} ({}, p {})",
                    w.name,
                    t.target,
                    v.word(m.direction),
                    r.baseline,
                    diff_text(t),
                    m.name,
                    p_text(t)
                ),
                _ => format!(
                    "{}: no significant difference between {} and {} ({} {}, p {})",
                    w.name,
                    t.target,
                    r.baseline,
                    m.name,
                    diff_text(t),
                    p_text(t)
                ),
            };
            if let Some(more) = settle_text(t) {
                line.push_str(&format!("; {more}"));
            }
            out.push(line);
        }
    }
    out
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
