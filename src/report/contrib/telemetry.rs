//! "What the system did": a workload's telemetry in the report
//! ([`crate::analysis::telemetry`]) — which devices and processes were
//! watched, the per-run telemetry figures of each target as mean ± 95% CI
//! with their difference from the baseline (device read ratio and write
//! amplification compared like any metric), and per target one measured
//! run over time: workload and device throughput on one chart, CPU by
//! process, dirty and writeback page cache, with the same numbers in a
//! table. Then the warnings of the validity checks for the workload's
//! runs. Nothing when no run of the workload recorded telemetry
//! (`[plan] telemetry = false`).
//!
//! A section under each workload's; the renderers lay it out (Markdown
//! without the charts: their numbers are in the table under them).

use std::collections::BTreeMap;

use super::{Context, Contributor};
use crate::analysis::course::{Course, Series, MIN_SAMPLES};
use crate::analysis::model::WorkloadReport;
use crate::analysis::telemetry::{Telemetry, DEVICE_COLUMNS};
use crate::metric::catalogue as m;
use crate::metric::labels::PROCESS;
use crate::metric::{Family, MetricDef, MetricKey};
use crate::report::document::{Chart, Section};
use crate::report::format::format_value;
use crate::report::sections::series::LOG_FROM_RATIO;
use crate::report::svg::{target_color, Line, LineChart};
use crate::report::table::Table;
use crate::report::text::{display_unit, shown_diff_text, shown_mean_ci_text};

/// The panel's title.
pub const TITLE: &str = "What the system did";

pub struct Telemetries;

impl Contributor for Telemetries {
    fn sections(&self, cx: Context, w: &WorkloadReport) -> Vec<Section> {
        (cx.analysis.telemetry_of(&w.name))
            .map(|t| section(t, w))
            .collect()
    }
}

/// The panel of workload `w`'s telemetry `t`.
pub fn section(t: &Telemetry, w: &WorkloadReport) -> Section {
    let mut p = Section::new(3, TITLE);
    p.text(
        "Sampled once a second during each measured run: the devices under each target, the host's CPU, the CPU of storlab and of the processes serving the target (each with its children, in % of one core), the host's page cache and pressure. Device figures without a device name are those of the devices at the bottom of the chain, the physical ones; a device the target shares with the rest of the host (the disk holding a loop image) also counts the other processes' I/O, as do the host's CPU and memory figures. Per-run figures are the mean ± 95% CI over the measured runs, and the difference from the baseline is computed like any metric's.",
    );
    p.table(watched_table(t));
    p.table(figures_table(t));
    let devices = devices_table(t);
    if !devices.rows.is_empty() {
        p.text("Each device, as iostat shows it: the mean per run over the measured runs.");
        p.table(devices);
    }
    for course in &t.courses {
        let over = over_time(w, course);
        if over.table.rows.is_empty() {
            continue;
        }
        p.text(format!(
            "{} over time, run {} (rep {}): {}",
            course.target,
            course.run,
            course.repetition,
            over.what.join("; ")
        ));
        for chart in over.charts {
            p.chart(Chart::Line(chart));
        }
        p.table(over.table);
    }
    if t.warnings.is_empty() {
        p.text("The validity checks found nothing to warn of: the reads reached the devices, the data did not fit a cache, the writes were flushed, no thread was CPU-bound and the host was quiet.");
    } else {
        p.text("What the validity checks warn of:");
        p.list(t.warnings.clone());
    }
    p
}

/// Per target: the devices and the serving processes its runs watched
/// (why each process was watched is among the facts the workload was
/// measured with).
fn watched_table(t: &Telemetry) -> Table {
    let mut table = Table::new(
        &["target", "devices (top → bottom)", "processes watched"],
        &[false, false, false],
    );
    for w in &t.watched {
        let devices = w
            .devices
            .clone()
            .unwrap_or_else(|| "none (no block device under the target)".into());
        let processes = if w.processes.is_empty() {
            "storlab".to_string()
        } else {
            format!("storlab, {}", w.processes.join(", "))
        };
        table.push(vec![w.target.clone(), devices, processes]);
    }
    table
}

/// The telemetry figures of the host, the processes and the devices at
/// the bottom of each chain (unlabelled) as rows; each target's mean ± CI
/// and each other target's difference from the baseline as columns.
/// Figures of single devices are in [`devices_table`]: a target's loop
/// device has no counterpart on another target.
fn figures_table(t: &Telemetry) -> Table {
    let others: Vec<usize> = (0..t.present.len())
        .filter(|&i| t.compared && t.present[i] != t.baseline)
        .collect();
    let mut header = vec!["per run (mean ± 95% CI)".to_string()];
    header.extend(t.present.iter().cloned());
    header.extend(
        others
            .iter()
            .map(|&i| format!("{} vs {}", t.present[i], t.baseline)),
    );
    let mut right = vec![true; header.len()];
    right[0] = false;
    let mut table = Table {
        header,
        right,
        ..Table::default()
    };
    for f in &t.figures {
        let mut row = vec![figure_name(&f.key)];
        row.extend(f.stats.iter().map(|s| {
            s.as_ref()
                .map_or("—".into(), |s| shown_mean_ci_text(s, f.unit))
        }));
        row.extend(
            others
                .iter()
                .map(|&i| f.stats[i].as_ref().map_or("—".into(), shown_diff_text)),
        );
        table.push(row);
    }
    table
}

/// `proc_cpu_pct (glusterfsd)`: a figure's name and its label's value.
fn figure_name(key: &MetricKey) -> String {
    let values: Vec<&str> = key.labels.iter().map(|(_, v)| v).collect();
    if values.is_empty() {
        key.name.clone()
    } else {
        format!("{} ({})", key.name, values.join(", "))
    }
}

/// Each device of each target's chain, as `iostat -x` shows it.
pub(crate) fn devices_table(t: &Telemetry) -> Table {
    let mut header = vec!["target", "device"];
    header.extend(DEVICE_COLUMNS.iter().map(|c| c.1));
    let mut right = vec![true; header.len()];
    right[0] = false;
    right[1] = false;
    let mut table = Table::new(&header, &right);
    for d in &t.devices {
        let mut row = vec![d.target.clone(), d.device.clone()];
        row.extend(
            d.means
                .iter()
                .zip(DEVICE_COLUMNS)
                .map(|(v, (def, _))| v.map_or("—".into(), |v| format_value(v, def.unit))),
        );
        table.push(row);
    }
    table
}

/// One run's telemetry over time: its charts, what they show, and the
/// numbers of every line in one table (a row per interval).
struct OverTime {
    charts: Vec<LineChart>,
    what: Vec<String>,
    table: Table,
}

/// A line of a chart and the column of the table it comes from.
struct Column {
    label: String,
    series: Series,
}

/// The charts of run `r`: throughput (the workload's, when in bytes/s,
/// and each device's reads and writes), CPU by process, dirty and
/// writeback page cache. Lines that stay at zero are left out.
fn over_time(w: &WorkloadReport, r: &Course) -> OverTime {
    let pick = |def: &MetricDef| -> Vec<(&MetricKey, &Series)> {
        r.series
            .iter()
            .filter(|(k, s)| k.name == def.name && s.values.iter().any(|v| *v > 0.0))
            .map(|(k, s)| (k, s))
            .collect()
    };
    let label = |k: &MetricKey, what: &str, key: &str| -> String {
        match k.labels.value(key) {
            Some(v) => format!("{v} {what}"),
            None => what.to_string(),
        }
    };
    let mut throughput: Vec<Column> = Vec::new();
    let primary = MetricKey::plain(&w.primary);
    if let Some((_, s)) = r.series.iter().find(|(k, _)| *k == primary) {
        if s.unit.family() == Family::BytesPerSec {
            throughput.push(Column {
                label: "workload".into(),
                series: s.clone(),
            });
        }
    }
    for (def, what) in [
        (&m::DEV_READ_BW_BYTES_PER_S, "read"),
        (&m::DEV_WRITE_BW_BYTES_PER_S, "write"),
    ] {
        for (k, s) in pick(def) {
            throughput.push(Column {
                label: label(k, what, "device"),
                series: s.clone(),
            });
        }
    }
    let cpu: Vec<Column> = pick(&m::PROC_CPU_PCT)
        .into_iter()
        .map(|(k, s)| Column {
            label: k.labels.get(&PROCESS).unwrap_or("process").to_string(),
            series: s.clone(),
        })
        .collect();
    // One line has no legend: the title names the processes.
    let cpu_title = format!(
        "CPU of {}",
        cpu.iter()
            .map(|x| x.label.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    );
    let cpu_title = cpu_title.as_str();
    let memory: Vec<Column> = [
        (&m::MEM_DIRTY_BYTES, "dirty"),
        (&m::MEM_WRITEBACK_BYTES, "writeback"),
    ]
    .into_iter()
    .flat_map(|(def, what)| {
        pick(def).into_iter().map(move |(_, s)| Column {
            label: what.to_string(),
            series: s.clone(),
        })
    })
    .collect();
    let run = format!("{} on {}, run {}", w.name, r.target, r.run);
    let mut out = OverTime {
        charts: Vec::new(),
        what: Vec::new(),
        table: Table::default(),
    };
    let mut columns: Vec<(String, f64, Series)> = Vec::new();
    for (cols, title, y, what) in [
        (
            throughput,
            "throughput, workload and devices",
            "throughput",
            "throughput of the workload and of each device",
        ),
        (cpu, cpu_title, "CPU", "CPU by process in % of one core"),
        (
            memory,
            "the host's dirty and writeback page cache",
            "page cache",
            "the host's dirty and writeback page cache",
        ),
    ] {
        if cols.is_empty() {
            continue;
        }
        let unit = cols[0].series.unit;
        let max = cols
            .iter()
            .flat_map(|x| x.series.values.iter().copied())
            .filter(|v| v.is_finite())
            .fold(0.0, f64::max);
        let (scale, shown) = match unit.family() {
            Family::Percent => (1.0, "% of one core".to_string()),
            _ => display_unit(unit, max),
        };
        let positive = cols
            .iter()
            .flat_map(|x| x.series.values.iter().copied())
            .filter(|v| v.is_finite() && *v > 0.0)
            .fold(f64::INFINITY, f64::min);
        // Lines a hundred times apart: a log axis, or all but one flatten.
        let log_y = positive.is_finite() && max / positive > LOG_FROM_RATIO;
        // No course over time from one or two samples (a run of 0.1 s):
        // such a column stays in the table, out of the chart.
        let charted: Vec<&Column> = cols
            .iter()
            .filter(|x| points(&x.series, 1.0).len() >= MIN_SAMPLES)
            .collect();
        if !charted.is_empty() {
            out.what.push(what.to_string());
            out.charts.push(LineChart {
                title: format!("{run}: {title}"),
                x_label: "time (s)".into(),
                y_label: match log_y {
                    true => format!("{y} ({shown}, log scale)"),
                    false => format!("{y} ({shown})"),
                },
                lines: charted
                    .iter()
                    .enumerate()
                    .map(|(i, x)| Line {
                        label: x.label.clone(),
                        color: target_color(i),
                        points: points(&x.series, scale)
                            .into_iter()
                            .filter(|(_, v)| !log_y || *v > 0.0)
                            .collect(),
                    })
                    .collect(),
                log_y,
                log_x: false,
                x_ticks: Vec::new(),
            });
        }
        columns.extend(
            cols.into_iter()
                .map(|x| (format!("{} ({shown})", x.label), scale, x.series)),
        );
    }
    out.table = table_over_time(&columns);
    out
}

/// A series' points: the end of each interval, its value in `scale`.
fn points(s: &Series, scale: f64) -> Vec<(f64, f64)> {
    s.values
        .iter()
        .enumerate()
        .filter(|(_, v)| v.is_finite())
        .map(|(i, v)| ((i + 1) as f64 * s.interval_s, v / scale))
        .collect()
}

/// Every column's value at the end of each interval, one row per time
/// (to a tenth of a second: the workload's and telemetry's clocks differ
/// by a few milliseconds).
fn table_over_time(columns: &[(String, f64, Series)]) -> Table {
    if columns.is_empty() {
        return Table::default();
    }
    let tenth = |t: f64| (t * 10.0).round() as i64;
    let mut header = vec!["t (s)".to_string()];
    header.extend(columns.iter().map(|c| c.0.clone()));
    let right = vec![true; header.len()];
    let mut table = Table {
        header,
        right,
        ..Table::default()
    };
    let mut rows: BTreeMap<i64, Vec<String>> = BTreeMap::new();
    for (i, (_, scale, s)) in columns.iter().enumerate() {
        for (t, v) in points(s, *scale) {
            let row = rows
                .entry(tenth(t))
                .or_insert_with(|| vec![String::new(); columns.len()]);
            row[i] = format!("{v:.1}");
        }
    }
    for (t, values) in rows {
        let mut row = vec![format!("{:.1}", t as f64 / 10.0)];
        row.extend(values);
        table.push(row);
    }
    table
}

#[cfg(test)]
mod tests;
