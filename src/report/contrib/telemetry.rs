//! "What the system did": a workload's telemetry in the report, built from
//! the stored runs — which devices and processes were watched, the per-run
//! telemetry figures of each target as mean ± 95% CI with their difference
//! from the baseline (device read ratio and write amplification compared
//! like any metric), and per target one measured run over time: workload
//! and device throughput on one chart, CPU by process, dirty and writeback
//! page cache, with the same numbers in a table. Then the warnings of the
//! validity checks for the workload's runs. Nothing when no run of the
//! workload recorded telemetry (`[plan] telemetry = false`).
//!
//! A section under each workload's, from the stored runs like every other;
//! the renderers lay it out (Markdown without the charts: their numbers
//! are in the table under them).

use std::collections::{BTreeMap, BTreeSet, HashMap};

use anyhow::Result;

use super::{Context, Contributor};
use crate::analysis::model::{self, WorkloadReport};
use crate::fact::catalogue as f;
use crate::metric::catalogue as m;
use crate::metric::labels::{DEVICE, PROCESS};
use crate::metric::{Family, Labels, MetricDef, MetricKey};
use crate::report::document::{Chart, Section};
use crate::report::format::format_value;
use crate::report::sections::series::{LOG_FROM_RATIO, MIN_SAMPLES};
use crate::report::svg::{target_color, Line, LineChart};
use crate::report::table::Table;
use crate::report::text::{diff_text, display_unit, mean_ci_text};
use crate::stats::summary::mean;
use crate::store::keyed::{distinct_keys, SameKeys};
use crate::store::{CampaignData, RunData, SeriesData};

/// The panel's title.
pub const TITLE: &str = "What the system did";

/// The per-run telemetry figures, in the order of the table. A figure
/// appears once unlabelled (the devices at the bottom of the chain, the
/// host) and once per `device` or `process` label the runs recorded.
const FIGURES: &[&MetricDef] = &[
    &m::DEV_READ_RATIO,
    &m::WRITE_AMPLIFICATION,
    &m::DEV_WRITE_BYTES_PER_TX,
    &m::DEV_READ_BYTES,
    &m::DEV_WRITE_BYTES,
    &m::DEV_READ_BW_BYTES_PER_S,
    &m::DEV_WRITE_BW_BYTES_PER_S,
    &m::DEV_UTIL_PCT,
    &m::DEV_QUEUE_DEPTH,
    &m::DEV_AWAIT_NS,
    &m::CPU_BUSY_PCT,
    &m::CPU_IOWAIT_PCT,
    &m::CPU_STEAL_PCT,
    &m::CPU_OTHERS_PCT,
    &m::PROC_CPU_PCT,
    &m::PROC_BUSIEST_THREAD_PCT,
    &m::MEM_PAGE_CACHE_MAX_BYTES,
    &m::MEM_DIRTY_MAX_BYTES,
    &m::MEM_WRITEBACK_MAX_BYTES,
    &m::MEM_DIRTY_END_BYTES,
    &m::MEM_AVAILABLE_BYTES,
    &m::PSI_IO_SOME_AVG_PCT,
    &m::PSI_IO_FULL_AVG_PCT,
    &m::PSI_MEMORY_SOME_AVG_PCT,
    &m::PSI_CPU_SOME_AVG_PCT,
    &m::ARC_HITS,
    &m::ARC_MISSES,
    &m::TELEMETRY_CPU_PCT,
];

pub struct Telemetry;

impl Contributor for Telemetry {
    fn sections(&self, cx: Context, w: &WorkloadReport) -> Result<Vec<Section>> {
        let m = &cx.analysis.model;
        Ok(section(cx.campaign, w, &m.targets, &m.baseline)
            .into_iter()
            .collect())
    }
}

/// The measured runs of `w` that recorded telemetry.
pub(crate) fn watched<'a>(c: &'a CampaignData, w: &str) -> Vec<&'a RunData> {
    c.runs
        .iter()
        .filter(|r| r.workload == w && !r.warmup && r.status == "ok")
        .filter(|r| r.metric(&m::TELEMETRY_CPU_PCT).is_some())
        .collect()
}

/// The section of workload `w`; `None` when none of its runs recorded
/// telemetry.
pub fn section(
    c: &CampaignData,
    w: &WorkloadReport,
    targets: &[String],
    baseline: &str,
) -> Option<Section> {
    let runs = watched(c, &w.name);
    if runs.is_empty() {
        return None;
    }
    let mut p = Section::new(3, TITLE);
    p.text(
        "Sampled once a second during each measured run: the devices under each target, the host's CPU, the CPU of storlab and of the processes serving the target (each with its children, in % of one core), the host's page cache and pressure. Device figures without a device name are those of the devices at the bottom of the chain, the physical ones; a device the target shares with the rest of the host (the disk holding a loop image) also counts the other processes' I/O, as do the host's CPU and memory figures. Per-run figures are the mean ± 95% CI over the measured runs, and the difference from the baseline is computed like any metric's.",
    );
    p.table(watched_table(&runs, targets));
    p.table(figures_table(c, w, &runs, targets, baseline));
    let devices = devices_table(&runs, targets);
    if !devices.rows.is_empty() {
        p.text("Each device, as iostat shows it: the mean per run over the measured runs.");
        p.table(devices);
    }
    for t in targets {
        let Some(r) = runs.iter().find(|r| &r.target == t) else {
            continue;
        };
        let over = over_time(w, r);
        if over.table.rows.is_empty() {
            continue;
        }
        p.text(format!(
            "{t} over time, run {} (rep {}): {}",
            r.id,
            r.repetition,
            over.what.join("; ")
        ));
        for chart in over.charts {
            p.chart(Chart::Line(chart));
        }
        p.table(over.table);
    }
    let warnings: Vec<String> = c
        .runs
        .iter()
        .filter(|r| r.workload == w.name && !r.warmup)
        .flat_map(|r| {
            r.warnings
                .iter()
                .map(move |x| format!("run {} ({}, rep {}): {x}", r.id, r.target, r.repetition))
        })
        .collect();
    if warnings.is_empty() {
        p.text("The validity checks found nothing to warn of: the reads reached the devices, the data did not fit a cache, the writes were flushed, no thread was CPU-bound and the host was quiet.");
    } else {
        p.text("What the validity checks warn of:");
        p.list(warnings);
    }
    Some(p)
}

/// Per target: the devices and the serving processes its runs watched
/// (why each process was watched is among the facts the workload was
/// measured with).
fn watched_table(runs: &[&RunData], targets: &[String]) -> Table {
    let mut t = Table::new(
        &["target", "devices (top → bottom)", "processes watched"],
        &[false, false, false],
    );
    for name in targets {
        let Some(r) = runs.iter().find(|r| &r.target == name) else {
            continue;
        };
        let devices = r
            .facts
            .get(f::TELEMETRY_DEVICES.name)
            .map(String::from)
            .unwrap_or_else(|| "none (no block device under the target)".into());
        let processes: Vec<String> = r
            .facts
            .keys()
            .filter_map(|k| k.strip_prefix(f::TELEMETRY_PROCESS.name))
            .map(String::from)
            .collect();
        let processes = if processes.is_empty() {
            "storlab".to_string()
        } else {
            format!("storlab, {}", processes.join(", "))
        };
        t.push(vec![name.clone(), devices, processes]);
    }
    t
}

/// The telemetry figures of the host, the processes and the devices at
/// the bottom of each chain (unlabelled) as rows; each target's mean ± CI
/// and each other target's difference from the baseline as columns.
/// Figures of single devices are in [`devices_table`]: a target's loop
/// device has no counterpart on another target.
fn figures_table(
    c: &CampaignData,
    w: &WorkloadReport,
    runs: &[&RunData],
    targets: &[String],
    baseline: &str,
) -> Table {
    let present: Vec<&String> = targets
        .iter()
        .filter(|t| runs.iter().any(|r| &r.target == *t))
        .collect();
    let others: Vec<&&String> = present.iter().filter(|t| **t != baseline).collect();
    let compared = present.iter().any(|t| *t == baseline);
    let mut header = vec!["per run (mean ± 95% CI)".to_string()];
    header.extend(present.iter().map(|t| t.to_string()));
    if compared {
        header.extend(others.iter().map(|t| format!("{t} vs {baseline}")));
    }
    let mut right = vec![true; header.len()];
    right[0] = false;
    let mut table = Table {
        header,
        right,
        ..Table::default()
    };
    let keys: BTreeSet<&MetricKey> = distinct_keys(runs.iter().map(|r| &r.metrics))
        .into_iter()
        // Unlabelled or by process: a single device's figures are in the
        // devices table, a matrix cell's in the matrix.
        .filter(|k| k.labels.iter().all(|(l, _)| l == PROCESS.key))
        .collect();
    for def in FIGURES {
        for key in keys.iter().filter(|k| k.name == def.name) {
            let report = model::metric(c, &w.name, key, targets, baseline);
            let stats = |t: &str| report.targets.iter().find(|x| x.target == t);
            let mut row = vec![figure_name(key)];
            row.extend(
                present
                    .iter()
                    .map(|t| stats(t).map_or("—".into(), |s| mean_ci_text(s, report.unit))),
            );
            if compared {
                row.extend(
                    others
                        .iter()
                        .map(|t| stats(t).map_or("—".into(), diff_text)),
                );
            }
            table.push(row);
        }
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

/// The columns of [`devices_table`]: a device figure and its heading.
pub(crate) const DEVICE_COLUMNS: &[(&MetricDef, &str)] = &[
    (&m::DEV_READ_BYTES, "read"),
    (&m::DEV_WRITE_BYTES, "written"),
    (&m::DEV_READ_BW_BYTES_PER_S, "read/s"),
    (&m::DEV_WRITE_BW_BYTES_PER_S, "written/s"),
    (&m::DEV_UTIL_PCT, "util"),
    (&m::DEV_QUEUE_DEPTH, "queue depth"),
    (&m::DEV_AWAIT_NS, "await"),
];

/// Each device of each target's chain, as `iostat -x` shows it: per run,
/// the mean over the measured runs of what it read and wrote, how busy it
/// was, its mean queue and the mean time a request took.
pub(crate) fn devices_table(runs: &[&RunData], targets: &[String]) -> Table {
    let mut header = vec!["target", "device"];
    header.extend(DEVICE_COLUMNS.iter().map(|c| c.1));
    let mut right = vec![true; header.len()];
    right[0] = false;
    right[1] = false;
    let mut table = Table::new(&header, &right);
    for t in targets {
        let mine: Vec<&&RunData> = runs.iter().filter(|r| &r.target == t).collect();
        let devices: BTreeSet<&str> = distinct_keys(mine.iter().map(|r| &r.metrics))
            .into_iter()
            .filter_map(|k| k.labels.get(&DEVICE))
            .collect();
        let columns = device_columns(&mine, &devices);
        for (i, d) in devices.iter().enumerate() {
            let mut row = vec![t.clone(), d.to_string()];
            for (j, (def, _)) in DEVICE_COLUMNS.iter().enumerate() {
                let values = &columns[i * DEVICE_COLUMNS.len() + j];
                row.push(if values.is_empty() {
                    "—".into()
                } else {
                    format_value(mean(values), def.unit)
                });
            }
            table.push(row);
        }
    }
    table
}

/// The values of each device's [`DEVICE_COLUMNS`] over `runs`, in run
/// order (device `i`, column `j` at `i * DEVICE_COLUMNS.len() + j`), in one
/// pass over each run's figures: a key of the campaign is matched once,
/// and found again by its address; a run with the very keys of a run
/// before takes its figures to the same places, found for that run.
fn device_columns(runs: &[&&RunData], devices: &BTreeSet<&str>) -> Vec<Vec<f64>> {
    let devices: Vec<&str> = devices.iter().copied().collect();
    let mut columns = vec![Vec::new(); devices.len() * DEVICE_COLUMNS.len()];
    let mut place: HashMap<*const MetricKey, Option<usize>> = HashMap::new();
    let mut known = SameKeys::default();
    let mut places: Vec<Vec<Option<usize>>> = Vec::new();
    for r in runs {
        let (slot, new) = known.slot(&r.metrics);
        if places.len() <= slot {
            places.resize_with(slot + 1, Vec::new);
        }
        if new {
            places[slot].clear();
            for (key, _) in r.metrics.shared() {
                places[slot].push(
                    *place.entry(std::sync::Arc::as_ptr(key)).or_insert_with(|| {
                        let i = devices
                            .iter()
                            .position(|d| key.labels.get(&DEVICE) == Some(*d))?;
                        let j = DEVICE_COLUMNS.iter().position(|(def, _)| {
                            key.name == def.name
                                && **key
                                    == MetricKey::new(
                                        def.name,
                                        Labels::new().with(&DEVICE, devices[i]),
                                    )
                        })?;
                        Some(i * DEVICE_COLUMNS.len() + j)
                    }),
                );
            }
        }
        for ((_, v), at) in r.metrics.shared().zip(&places[slot]) {
            if let Some(at) = at {
                columns[*at].push(v.value);
            }
        }
    }
    columns
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
    series: SeriesData,
}

/// The charts of run `r`: throughput (the workload's, when in bytes/s,
/// and each device's reads and writes), CPU by process, dirty and
/// writeback page cache. Lines that stay at zero are left out.
fn over_time(w: &WorkloadReport, r: &RunData) -> OverTime {
    let pick = |def: &MetricDef| -> Vec<(&MetricKey, &SeriesData)> {
        r.series
            .iter()
            .filter(|(k, s)| k.name == def.name && s.values.iter().any(|v| *v > 0.0))
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
    if let Some(s) = r.series.get(&primary) {
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
    let run = format!("{} on {}, run {}", w.name, r.target, r.id);
    let mut out = OverTime {
        charts: Vec::new(),
        what: Vec::new(),
        table: Table::default(),
    };
    let mut columns: Vec<(String, f64, SeriesData)> = Vec::new();
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
fn points(s: &SeriesData, scale: f64) -> Vec<(f64, f64)> {
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
fn table_over_time(columns: &[(String, f64, SeriesData)]) -> Table {
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
