//! Capacity searches in reports ([`crate::analysis::capacity`]): per
//! search, what each target sustains within the latency target, with its
//! interval, why the search ended and what limited the knee; the
//! throughput–latency curve; and a compact table of every probe (the
//! terminal's summary has the capacities and the table).

use super::color_of;
use crate::analysis::about::About;
use crate::analysis::capacity::{Limit, ProbeStats, Search, TargetCapacity};
use crate::analysis::CampaignAnalysis;
use crate::metric::format::format_value;
use crate::metric::{Family, Unit};
use crate::report::document::{Chart, Section};
use crate::report::svg::{CapacityChart, CapacityCurve, CapacityPoint};
use crate::report::table::Table;
use crate::stats::capacity::Found;

/// The report's section of each search.
pub fn report(a: &CampaignAnalysis) -> Vec<Section> {
    a.capacities
        .iter()
        .map(|s| {
            let mut out = Section::new(2, format!("Capacity: {}", s.workload));
            out.text(intro(s));
            out.list(s.targets.iter().map(|t| target_line(s, t)).collect());
            out.chart(Chart::Capacity(chart(&a.about, s)));
            out.text(legend_text(s));
            out.table(probe_table(s));
            out
        })
        .collect()
}

/// What the terminal shows of each search: the capacities and the probes.
pub fn summary(searches: &[Search]) -> Vec<Section> {
    searches
        .iter()
        .map(|s| {
            let mut out = Section::new(3, format!("Capacity: {} ({})", s.workload, target_text(s)));
            out.list(s.targets.iter().map(|t| target_line(s, t)).collect());
            out.table(probe_table(s));
            out
        })
        .collect()
}

/// `p99 ≤ 50.00 ms`.
fn target_text(s: &Search) -> String {
    format!(
        "{} ≤ {}",
        s.latency,
        format_value(s.max_ns, Unit::Nanoseconds)
    )
}

fn intro(s: &Search) -> String {
    format!(
        "The highest offered rate ({}) at which {} stays within {} and at least 95% of the offered rate is achieved, found per target by a search over the offered rate: coarse steps that at least double it until one probe holds and one does not, then bisection until the two are {}% apart. Each probe is a variant of the workload, run as the plan runs any pair (its latencies below are geometric means over its runs). The capacity is where the probes' margin past the target crosses zero between the last probe that held and the first that did not; its 95% interval reaches to the rates where the runs held, or failed, with confidence (docs/methodology.md, \"Capacity\").",
        s.param,
        s.latency,
        format_value(s.max_ns, Unit::Nanoseconds),
        s.resolution * 100.0
    )
}

/// `ext4: 2.30k tx/s [2.15k, 2.45k] (resolved; the knee is CPU-bound: a
/// thread of storlab at 99% of a core at 2.38k tx/s)`.
fn target_line(s: &Search, t: &TargetCapacity) -> String {
    let rate = |v: f64| format_value(v, s.unit);
    let figure = match &t.knee {
        None => "no probe ran".to_string(),
        Some(k) => match k.found {
            Found::Between => {
                let interval = k.interval.map_or(String::new(), |i| {
                    format!(" [{}, {}]", bare(i.low, s.unit), bare(i.high, s.unit))
                });
                format!("{}{interval}", rate(k.estimate))
            }
            Found::AtLeast => format!("at least {} (every probe held)", rate(k.estimate)),
            Found::Below => format!("below {} (no probe held)", rate(k.estimate)),
        },
    };
    let mut notes = Vec::new();
    if let Some(e) = &t.ended {
        notes.push(ended_text(e).to_string());
    }
    if let Some(l) = &t.limit {
        notes.push(limit_text(l, &rate(l.at)));
    }
    let mut kinds: Vec<&str> = Vec::new();
    for c in &t.caveats {
        if !kinds.contains(&c.kind.label()) {
            kinds.push(c.kind.label());
        }
    }
    if !kinds.is_empty() {
        notes.push(format!("⚠ {}", kinds.join(", ")));
    }
    let notes = match notes.is_empty() {
        true => String::new(),
        false => format!(" ({})", notes.join("; ")),
    };
    format!("{}: {figure}{notes}", t.target)
}

/// `the knee is CPU-bound: a thread of storlab ran or waited for a core
/// 99% of the run at 169k ops/s (it ran 32%: other processes had the
/// rest)`.
fn limit_text(l: &Limit, at: &str) -> String {
    let who = l.process.as_deref().unwrap_or("a process");
    let detail = match (l.busy_pct, l.wanted_pct) {
        (Some(b), Some(w)) if b + 10.0 < w => format!(
            ": a thread of {who} ran or waited for a core {w:.0}% of the run at {at} (it ran {b:.0}%: other processes had the rest)"
        ),
        (Some(b), _) => format!(": a thread of {who} at {b:.0}% of a core at {at}"),
        _ => format!(" at {at}"),
    };
    format!("the knee is {}{detail}", l.kind.label())
}

/// Why a search ended, as its line says.
fn ended_text(reason: &str) -> &str {
    match reason {
        "resolved" => "resolved",
        "max_rate" => "held up to max_rate",
        "foot" => "failed down to the lowest rate it may probe",
        "time" => "stopped by the plan's max_time before its resolution",
        other => other,
    }
}

/// A rate without its unit where the unit is a count per second.
fn bare(v: f64, unit: Unit) -> String {
    match unit.family() {
        Family::Count => crate::metric::format::si(v),
        _ => format_value(v, unit),
    }
}

/// Every probe of every target: offered, achieved, median and judged
/// latency, runs, and whether the target held.
fn probe_table(s: &Search) -> Table {
    let tail = format!("{} latency", s.latency);
    // Achieved: the runs' mean; latencies: their geometric mean.
    let mut t = Table::new(
        &[
            "target",
            "offered",
            "achieved",
            "p50 latency",
            &tail,
            "runs",
            "held",
        ],
        &[false, true, true, true, true, true, false],
    );
    t.may_drop(&["p50 latency", "runs"]);
    for target in &s.targets {
        for p in &target.probes {
            t.push(probe_row(s, &target.target, p));
        }
    }
    t
}

fn probe_row(s: &Search, target: &str, p: &ProbeStats) -> Vec<String> {
    let ns = |v: Option<f64>| v.map_or("—".into(), |x| format_value(x, Unit::Nanoseconds));
    let runs = match p.failed {
        0 => p.runs.to_string(),
        f => format!("{} ({f} failed)", p.runs),
    };
    vec![
        target.to_string(),
        format_value(p.offered, s.unit),
        p.achieved.map_or("—".into(), |a| format_value(a, s.unit)),
        ns(p.p50_ns),
        ns(p.latency_ns),
        runs,
        match p.passed {
            Some(true) => "yes".into(),
            Some(false) => "no".into(),
            None => "—".into(),
        },
    ]
}

/// The curve of every target, latencies in milliseconds.
fn chart(c: &About, s: &Search) -> CapacityChart {
    let ms = |ns: Option<f64>| ns.map(|v| v / 1e6);
    CapacityChart {
        title: format!("{}: latency against the offered rate", s.workload),
        x_label: format!("offered rate ({})", s.unit),
        y_label: "latency (ms)".into(),
        limit: s.max_ns / 1e6,
        limit_label: target_text(s),
        curves: s
            .targets
            .iter()
            .map(|t| CapacityCurve {
                label: t.target.clone(),
                color: color_of(c, &t.target),
                points: t
                    .probes
                    .iter()
                    .map(|p| CapacityPoint {
                        offered: p.offered,
                        achieved: p.achieved,
                        median: ms(p.p50_ns),
                        tail: ms(p.latency_ns),
                        passed: p.passed == Some(true),
                    })
                    .collect(),
                knee: t
                    .knee
                    .as_ref()
                    .filter(|k| k.found == Found::Between)
                    .map(|k| (k.estimate, k.interval.map(|i| (i.low, i.high)))),
            })
            .collect(),
    }
}

fn legend_text(s: &Search) -> String {
    format!(
        "Solid lines: {} latency against the offered rate; dashed: the median. Filled markers held the target, open ones did not; an open square is the rate a probe achieved where it fell short of what it offered. The dashed red line is the target, each vertical line a target's capacity, its band the interval.",
        s.latency
    )
}
