//! "Where the latency went": per workload and target, the workload's
//! p50/p99/p99.9/max beside each traced device's request times, the
//! sentence [`crate::analysis::attribution`] decides, and per target one
//! measured run's p99 per second at the workload and at each device. Only
//! for workloads whose runs were block-traced; `storlab show` prints the
//! sentences under the summary.

use super::{Context, Contributor};
use crate::analysis::attribution::{Attribution, Percentiles};
use crate::analysis::course::{Course, Series};
use crate::analysis::model::WorkloadReport;
use crate::metric::catalogue as m;
use crate::metric::format::{format_ns, si};
use crate::metric::labels::{DEVICE, OP};
use crate::metric::MetricKey;
use crate::report::document::{Chart, Section};
use crate::report::svg::{target_color, Line, LineChart};
use crate::report::table::Table;
use crate::report::verdict::{words, Form};

/// The section's title.
pub const TITLE: &str = "Where the latency went";

pub struct Attributions;

impl Contributor for Attributions {
    fn summary(&self, cx: Context, w: &WorkloadReport) -> Vec<Section> {
        super::listed(TITLE, summary_lines(&of_workload(cx, w)))
    }

    fn sections(&self, cx: Context, w: &WorkloadReport) -> Vec<Section> {
        let found = of_workload(cx, w);
        if found.is_empty() {
            return Vec::new();
        }
        let mut s = Section::new(3, TITLE);
        s.text(format!(
            "The workload's latency beside the time each device of the target's chain took per request, from issue to completion (the kernel's block tracepoints), both merged over the measured runs. The sentence compares the p99 at the workload with the p99 of the data requests of the device nearest the workload that was sent any: from {:.0}% of the workload's, the device; below, above the device (the busiest process named from {:.0}% of a core); more than {:.1}× the workload's, requests the workload did not wait for (storlab's docs/methodology.md, “Where the latency went”).",
            100.0 * crate::analysis::attribution::DEVICE_SHARE,
            crate::analysis::attribution::BUSY_PCT,
            crate::analysis::attribution::OFF_PATH,
        ));
        s.list(sentences(&found));
        s.table(side_by_side(&found));
        for a in &found {
            let Some(run) = &a.course else {
                continue;
            };
            if let Some((chart, table)) = over_time(a, run) {
                s.text(format!(
                    "{} over time, run {} (rep {}): p99 per second at the workload and at each device",
                    a.target, run.run, run.repetition
                ));
                s.chart(Chart::Line(chart));
                s.table(table);
            }
        }
        vec![s]
    }
}

/// The attributions of `w` on every target that has one, in the
/// report's target order.
fn of_workload<'a>(cx: Context<'a>, w: &WorkloadReport) -> Vec<&'a Attribution> {
    cx.analysis.attributions_of(&w.name).collect()
}

fn sentences(found: &[&Attribution]) -> Vec<String> {
    found
        .iter()
        .map(|a| {
            format!(
                "{} on {}: {}",
                a.workload,
                a.target,
                words(*a, Form::Headline)
            )
        })
        .collect()
}

/// Targets of one workload above which the summary groups its sentences.
const GROUP_OVER: usize = 3;

/// The summary's lines: each pair's sentence; for a workload on more than
/// [`GROUP_OVER`] targets, one line per conclusion shared by several of
/// them, with the range of their p99 at the workload ("pgbench on 3 of 4
/// targets: above the device; p99 282.07–425.98 ms at the workload"), and
/// the sentence of a target whose conclusion is its own. The section in the
/// report keeps every sentence.
fn summary_lines(found: &[&Attribution]) -> Vec<String> {
    if found.len() <= GROUP_OVER {
        return sentences(found);
    }
    let mut groups: Vec<(String, Vec<&Attribution>)> = Vec::new();
    for &a in found {
        let c = words(a, Form::Bare);
        match groups.iter_mut().find(|(g, _)| *g == c) {
            Some((_, members)) => members.push(a),
            None => groups.push((c, vec![a])),
        }
    }
    groups
        .iter()
        .map(|(c, members)| match members.as_slice() {
            [a] => format!(
                "{} on {}: {}",
                a.workload,
                a.target,
                words(*a, Form::Headline)
            ),
            many => {
                let p99 = many.iter().map(|a| a.at_workload.p99);
                let lo = p99.clone().fold(f64::INFINITY, f64::min);
                let hi = p99.fold(0.0, f64::max);
                format!(
                    "{} on {} of {} targets: {c}; p99 {}–{} at the workload",
                    many[0].workload,
                    many.len(),
                    found.len(),
                    format_ns(lo),
                    format_ns(hi)
                )
            }
        })
        .collect()
}

/// Rows: the workload, then each device and operation; columns: the
/// requests and their percentiles.
fn side_by_side(found: &[&Attribution]) -> Table {
    let mut t = Table::new(
        &[
            "target", "at", "op", "requests", "p50", "p99", "p99.9", "max",
        ],
        &[false, false, false, true, true, true, true, true],
    );
    let cells = |p: Option<&Percentiles>| -> Vec<String> {
        match p {
            Some(p) => [p.p50, p.p99, p.p999, p.max]
                .into_iter()
                .map(format_ns)
                .collect(),
            None => vec!["—".into(); 4],
        }
    };
    for a in found {
        let mut row = vec![
            a.target.clone(),
            "workload".into(),
            "all".into(),
            si(a.at_workload.count as f64),
        ];
        row.extend(cells(Some(&a.at_workload)));
        t.push(row);
        for d in &a.devices {
            let mut row = vec![
                a.target.clone(),
                d.device.clone(),
                d.op.clone(),
                si(d.requests),
            ];
            row.extend(cells(d.latency.as_ref()));
            t.push(row);
        }
    }
    t
}

/// One run's p99 per second, at the workload and at each device and
/// operation that has requests: a chart and its numbers (µs).
fn over_time(a: &Attribution, r: &Course) -> Option<(LineChart, Table)> {
    let series = |key: &MetricKey| r.series.iter().find(|(k, _)| k == key).map(|(_, s)| s);
    let mut columns: Vec<(String, &Series)> = Vec::new();
    if let Some(s) = series(&MetricKey::plain(m::LAT_P99_NS.name)) {
        columns.push(("workload".into(), s));
    }
    for d in a.devices.iter().filter(|d| d.latency.is_some()) {
        let key = MetricKey::new(
            m::DEV_LAT_P99_NS.name,
            crate::metric::Labels::new()
                .with(&DEVICE, &d.device)
                .with(&OP, &d.op),
        );
        if let Some(s) = series(&key) {
            if s.values.iter().any(|v| v.is_finite()) {
                columns.push((format!("{} {}", d.device, d.op), s));
            }
        }
    }
    if columns.len() < 2 {
        return None;
    }
    let points = |s: &Series| -> Vec<(f64, f64)> {
        s.values
            .iter()
            .enumerate()
            .filter(|(_, v)| v.is_finite())
            .map(|(i, v)| ((i + 1) as f64 * s.interval_s, v / 1e3))
            .collect()
    };
    let chart = LineChart {
        title: format!(
            "{} on {}, run {}: p99 per second",
            a.workload, a.target, r.run
        ),
        x_label: "time (s)".into(),
        y_label: "p99 (µs)".into(),
        lines: columns
            .iter()
            .enumerate()
            .map(|(i, (label, s))| Line {
                label: label.clone(),
                color: target_color(i),
                points: points(s),
            })
            .collect(),
        log_y: true,
        log_x: false,
        x_ticks: Vec::new(),
    };
    let mut header = vec!["t (s)".to_string()];
    header.extend(columns.iter().map(|(l, _)| format!("{l} p99 (µs)")));
    let right = vec![true; header.len()];
    let mut table = Table {
        header,
        right,
        ..Table::default()
    };
    let seconds = columns
        .iter()
        .map(|(_, s)| s.values.len())
        .max()
        .unwrap_or(0);
    for i in 0..seconds {
        let mut row = vec![format!("{}", i + 1)];
        row.extend(columns.iter().map(|(_, s)| {
            s.values
                .get(i)
                .filter(|v| v.is_finite())
                .map_or("—".into(), |v| format!("{:.1}", v / 1e3))
        }));
        table.push(row);
    }
    Some((chart, table))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::attribution::{Finding, Top, Why};

    fn ms(ms: f64) -> Percentiles {
        Percentiles {
            p50: 1e6,
            p99: ms * 1e6,
            p999: ms * 1e6,
            max: ms * 1e6,
            count: 100,
        }
    }

    fn pair(target: &str, p99_ms: f64, finding: Finding) -> Attribution {
        Attribution {
            workload: "pgbench[transactions=12]".into(),
            target: target.into(),
            at_workload: ms(p99_ms),
            devices: Vec::new(),
            finding,
            course: None,
        }
    }

    #[test]
    fn a_workload_on_many_targets_is_summed_up_by_conclusion() {
        // Seed 000's study: 4 disks per transaction count printed 16 lines.
        let top = |device: &str, p99_ms: f64| Top {
            device: device.into(),
            requests: 100.0,
            latency: ms(p99_ms),
        };
        let above = |t: &str, p99_ms: f64, pct: f64| {
            let why = Some(Why::OthersCpu { pct });
            let top = top("loop0", 94.31);
            pair(t, p99_ms, Finding::AboveDevice { top, why })
        };
        let found = [
            above("vm[a]", 282.07, 70.0),
            above("vm[b]", 425.98, 74.0),
            pair(
                "vm[c]",
                360.19,
                Finding::Device {
                    top: top("loop2", 216.40),
                },
            ),
            above("vm[d]", 346.55, 70.0),
        ];
        let found: Vec<&Attribution> = found.iter().collect();
        assert_eq!(
            summary_lines(&found),
            [
                "pgbench[transactions=12] on 3 of 4 targets: above the device; p99 282.07 ms–425.98 ms at the workload",
                "pgbench[transactions=12] on vm[c]: p99 360.19 ms at the workload, 216.40 ms at loop2: the device",
            ]
        );
        // Three targets or fewer: every sentence, as the section has them.
        assert_eq!(summary_lines(&found[..3]), sentences(&found[..3]));
        assert_eq!(
            sentences(&found[..1]),
            ["pgbench[transactions=12] on vm[a]: p99 282.07 ms at the workload, 94.31 ms at loop0: above the device (other processes used 70% of the host's CPU: the workload waited for a core)"]
        );
    }
}
