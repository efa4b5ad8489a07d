//! The content of a report, as tables and sentences built from the model and
//! the stored campaign; Markdown and HTML render the same sections.

use serde_json::Value;

use super::format::format_value;
use super::model::{MetricReport, Report, TargetStats, WorkloadReport, LEVEL, MIN_EFFECT_PCT};
use super::table::Table;
use crate::metric::Unit;
use crate::stats::Verdict;
use crate::store::CampaignData;

/// `1.2 GiB/s ± 3.4 MiB/s`, or the bare mean with one run.
pub fn mean_ci_text(t: &TargetStats, unit: Unit) -> String {
    match (t.summary, t.ci) {
        (Some(s), Some(ci)) => format!(
            "{} ± {}",
            format_value(s.mean, unit),
            format_value(ci.half_width(), unit)
        ),
        (Some(s), None) => format_value(s.mean, unit),
        _ => "—".into(),
    }
}

/// `+12.3% [+8.1%, +16.5%]`.
pub fn diff_text(t: &TargetStats) -> String {
    match &t.comparison {
        Some(c) if c.diff_pct_ci.low.is_finite() && c.diff_pct_ci.high.is_finite() => {
            format!(
                "{:+.1}% [{:+.1}%, {:+.1}%]",
                c.diff_pct, c.diff_pct_ci.low, c.diff_pct_ci.high
            )
        }
        Some(c) => format!("{:+.1}% [unbounded: baseline too noisy]", c.diff_pct),
        None => "—".into(),
    }
}

pub fn verdict_text(t: &TargetStats, m: &MetricReport) -> String {
    match t.verdict {
        Some(v) => v.word(m.direction).to_string(),
        None => "—".into(),
    }
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
            t.push(vec![
                ts.target.clone(),
                m.name.clone(),
                diff_text(ts),
                p_text(ts),
                verdict_text(ts, m),
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

/// The methodology, written out from the plan and what the runs recorded.
pub fn methodology(c: &CampaignData) -> Vec<String> {
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
            "Intervals are {:.0}% Student-t intervals of the mean. Each target is compared with the baseline by Welch's t-test; the interval of the % difference follows Fieller's theorem. A difference is called faster or slower when p < 0.05 and it is at least {MIN_EFFECT_PCT}%.",
            LEVEL * 100.0
        ),
    ];
    lines.extend(super::steady::methodology_lines(c));
    lines
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
            let line = match t.verdict {
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
            out.push(line);
        }
    }
    out
}
