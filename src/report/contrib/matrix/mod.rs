//! The `matrix` workload (iozone's automatic mode) in reports. Its summary
//! is the geometric mean of throughput overall and per test; its hundreds
//! of per-cell metrics stay out of the per-metric verdict tables and are
//! shown the way iozone users read them: per test, a heat map of file size ×
//! record size for each target, a % difference heat map against the
//! baseline, and the same numbers as file-size × record-size tables; with
//! telemetry, for the reading tests, where each cell's reads came from.

pub mod charts;
pub mod tables;

use self::charts::Measure;
use self::tables::Unit;
use super::{Context, Contributor};
use crate::analysis::matrix::{MatrixReport, TestMatrix, KIND};
use crate::analysis::model::{WorkloadReport, MIN_EFFECT_PCT};
use crate::metric::Unit as StoredUnit;
use crate::report::document::{Chart, Section};
use crate::report::table::Table;
use crate::report::text::display_unit;

pub struct Matrix;

impl Contributor for Matrix {
    /// Tests as rows, targets as columns.
    fn values_table(&self, cx: Context, w: &WorkloadReport) -> Option<Table> {
        (w.kind == KIND).then(|| tables::geomeans_table(cx.analysis, w))
    }

    fn summary(&self, cx: Context, w: &WorkloadReport) -> Vec<Section> {
        let Some(t) = self.values_table(cx, w) else {
            return Vec::new();
        };
        let title = format!("{} ({KIND}): geometric mean throughput per test", w.name);
        let mut s = Section::new(3, title);
        s.table(t);
        let m = cx.analysis.matrix(&w.name);
        if let Some(line) =
            m.and_then(|m| memory_text(m, &cx.analysis.model.targets, &layer_cells(cx, w)))
        {
            s.text(line);
        }
        let mut out = vec![s];
        if let Some(m) = m {
            if let Some((record, t)) = tables::latency_summary(m) {
                let title = format!(
                    "{} ({KIND}): mean latency of one {} operation against file size",
                    w.name,
                    tables::size_text(record)
                );
                let mut s = Section::new(3, title);
                s.table(t);
                out.push(s);
            }
        }
        out
    }

    /// How many of the read cells came from memory, per target.
    fn headline(&self, cx: Context, w: &WorkloadReport) -> Vec<String> {
        cx.analysis
            .matrix(&w.name)
            .and_then(|m| memory_text(m, &cx.analysis.model.targets, &layer_cells(cx, w)))
            .map(|line| format!("{}: {line}", w.name))
            .into_iter()
            .collect()
    }

    /// Per test: heat maps, then tables.
    fn sections(&self, cx: Context, w: &WorkloadReport) -> Vec<Section> {
        let Some(m) = cx.analysis.matrix(&w.name) else {
            return Vec::new();
        };
        let unit = unit_of(m);
        let latency = latency_unit(m);
        let mut head = Section::new(3, "Matrix: file size × record size");
        head.text(reading(m, &unit, &latency));
        let mut out = vec![head];
        out.extend(m.tests.iter().map(|t| test_section(m, t, &unit, &latency)));
        out
    }
}

/// `43 of 45 read cells on disk and 40 of 45 on gluster came from memory
/// (…)`: per target with device read ratios, in `targets`' order; `None`
/// when no cell recorded where its reads came from.
fn memory_text(
    m: &MatrixReport,
    targets: &[String],
    layers: &dyn Fn(&str) -> Option<(usize, usize)>,
) -> Option<String> {
    let counts: Vec<(&String, usize, usize)> = targets
        .iter()
        .filter_map(|t| {
            layers(t)
                .or_else(|| m.memory_cells(t))
                .map(|(mem, of)| (t, mem, of))
        })
        .collect();
    let each: Vec<String> = counts
        .iter()
        .enumerate()
        .map(|(i, (t, mem, of))| match i {
            0 => format!("{mem} of {of} read cells on {t}"),
            _ => format!("{mem} of {of} on {t}"),
        })
        .collect();
    let (first, rest) = each.split_first()?;
    let list = match rest.split_last() {
        None => first.clone(),
        Some((last, [])) => format!("{first} and {last}"),
        Some((last, middle)) => format!("{first}, {} and {last}", middle.join(", ")),
    };
    let memory = counts.iter().any(|(_, mem, _)| *mem > 0);
    let why = match memory {
        true => ": those reads measured the page cache (or a cache of the storage), not the device",
        false => "",
    };
    let mark = if memory { "⚠ " } else { "" };
    Some(format!(
        "{mark}{list} came from memory (the device delivered under {:.0}% of their bytes){why}",
        100.0 * tables::MEMORY_BELOW
    ))
}

/// Where the target's layers were read, its read cells that the device
/// served under [`tables::MEMORY_BELOW`] of, and how many read cells: a
/// reading of where the reads came from, which names the layer that did.
fn layer_cells<'a>(
    cx: Context<'a>,
    w: &WorkloadReport,
) -> impl Fn(&str) -> Option<(usize, usize)> + 'a {
    let name = w.name.clone();
    move |t: &str| {
        let cells: Vec<f64> = (cx.analysis.reads.cells_of(&name, t))
            .map(|c| c.share_of(crate::metric::layer::Layer::Device))
            .collect();
        let memory = cells.iter().filter(|&&d| d < tables::MEMORY_BELOW).count();
        (!cells.is_empty()).then_some((memory, cells.len()))
    }
}

/// One unit for every number of the matrix, chosen from its largest mean.
fn unit_of(m: &MatrixReport) -> Unit {
    let (scale, name) = display_unit(StoredUnit::BytesPerSec, m.max_mean());
    Unit { scale, name }
}

/// One unit for every latency of the matrix: µs, or ms from a millisecond.
fn latency_unit(m: &MatrixReport) -> Unit {
    let max = m
        .tests
        .iter()
        .flat_map(|t| &t.targets)
        .flat_map(|x| x.latency.iter().flatten().flatten())
        .fold(0.0, |a: f64, &b| a.max(b));
    let (scale, name) = display_unit(StoredUnit::Nanoseconds, max);
    Unit { scale, name }
}

/// How to read the maps and tables, once per workload.
fn reading(m: &MatrixReport, unit: &Unit, latency: &Unit) -> String {
    format!(
        "Per test: mean throughput over the measured runs in {}, file sizes as rows and record sizes as columns (empty where the record is larger than the file, — where a target has no measurement), then the % difference of each target's mean from the baseline {} (in the maps red is faster, blue slower). The throughput maps of a test are drawn together, one panel per target on one colour scale with one colour bar, so that a colour is one value on every target; the scale is logarithmic when the test's values span more than a decade, as the figure's title says. A difference in parentheses (hatched in the maps) is not significant: p ≥ 0.05 (Welch's t on the logs of the cell's runs) or under {MIN_EFFECT_PCT}%, the rule of every verdict in this report. Then, as iozone's 2-D charts, per target one line per record size against file size: the mean throughput, and the mean latency of one operation (one record's read or write, timed by storlab around each call) in {}, with its table.{}",
        unit.name,
        m.baseline,
        latency.name,
        if m.tests.iter().flat_map(|t| &t.targets).any(|x| x.has_device_reads()) {
            format!(
                " For the reading tests, a map and a table per target say where each cell's reads came from: the share of the bytes read that the target's devices delivered (telemetry's device read ratio), memory under {:.0}% (the page cache, or a cache of the storage), the device from {:.0}%. The devices at the bottom of a chain are often the host's (the disk holding an image or a brick): they count other processes' reads too, so over 100% says that others read from them during the cell, and on a busy host a cell read from memory can look mixed.",
                100.0 * tables::MEMORY_BELOW,
                100.0 * tables::DEVICE_FROM
            )
        } else {
            String::new()
        }
    )
}

/// One test: a map per target and a difference map per other target, then
/// the tables of values per target and of differences.
fn test_section(m: &MatrixReport, t: &TestMatrix, unit: &Unit, latency: &Unit) -> Section {
    let test = t.test.name();
    let mut s = Section::new(4, test).with_class("matrix");
    s.chart(Chart::Heats(charts::throughput_maps(m, t, unit)));
    if let Some(g) = charts::device_maps(m, t) {
        s.chart(Chart::Heats(g));
    }
    for map in charts::difference_maps(m, t) {
        s.chart(Chart::Heat(map));
    }
    for measure in [Measure::Throughput, Measure::Latency] {
        for x in &t.targets {
            if let Some(c) = charts::file_size_lines(m, t, x, measure) {
                s.chart(Chart::Curve(c));
            }
        }
    }
    for x in &t.targets {
        s.text(format!(
            "{test} on {}: mean throughput ({})",
            x.target, unit.name
        ));
        s.table(tables::values_table(m, t.test, x, unit));
    }
    for x in &t.targets {
        if let Some(table) = tables::latency_table(m, t.test, x, latency) {
            s.text(format!(
                "{test} on {}: mean latency of one operation ({})",
                x.target, latency.name
            ));
            s.table(table);
        }
    }
    for x in &t.targets {
        if let Some(table) = tables::device_table(m, t.test, x) {
            s.text(format!(
                "{test} on {}: where the reads came from, % of the bytes read that the device read (mem: memory, under {:.0}%; dev: the device, from {:.0}%; mix: both)",
                x.target,
                100.0 * tables::MEMORY_BELOW,
                100.0 * tables::DEVICE_FROM
            ));
            s.table(table);
        }
    }
    for x in &t.targets {
        if let Some(table) = tables::diff_table(m, t.test, x) {
            s.text(format!(
                "{test} on {} against {}: % difference (in parentheses: not significant)",
                x.target, m.baseline
            ));
            s.table(table);
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::matrix::{Axes, TargetMatrix};
    use crate::metric::matrix::Test;

    /// A write and a read test on two targets; `disk`'s reads: three of
    /// four cells from memory, one from the device; `ram` recorded none.
    fn matrix() -> MatrixReport {
        const K: u64 = 1024;
        let cells = [(64 * K, 4 * K), (128 * K, 4 * K), (128 * K, 128 * K)];
        let axes = Axes::of_cells(Test::Read, &cells);
        let target = |name: &str, device_read| TargetMatrix {
            target: name.into(),
            runs: 3,
            means: vec![vec![Some(1.0), None], vec![Some(1.0), Some(1.0)]],
            diffs: None,
            device_read,
            latency: Vec::new(),
        };
        let test = |test, disk_reads| TestMatrix {
            test,
            targets: vec![target("disk", disk_reads), target("ram", Vec::new())],
        };
        MatrixReport {
            workload: "iozone".into(),
            baseline: "disk".into(),
            axes,
            tests: vec![
                // A writing test's ratios never count.
                test(Test::Write, vec![vec![Some(0.0), None]]),
                test(
                    Test::Read,
                    vec![vec![Some(0.02), None], vec![Some(0.099), Some(0.97)]],
                ),
                test(Test::Reread, vec![vec![Some(0.0), None]]),
            ],
        }
    }

    #[test]
    fn the_headline_says_how_many_read_cells_came_from_memory() {
        let m = matrix();
        assert_eq!(m.memory_cells("disk"), Some((3, 4)));
        assert_eq!(m.memory_cells("ram"), None, "no device read recorded");
        let targets = ["disk".to_string(), "ram".to_string()];
        let line = memory_text(&m, &targets, &|_| None).unwrap();
        assert!(
            line.starts_with("⚠ 3 of 4 read cells on disk came from memory (the device delivered under 10% of their bytes): those reads measured the page cache"),
            "{line}"
        );
        let mut device = m.clone();
        for t in device.tests.iter_mut() {
            for x in t.targets.iter_mut() {
                for v in x.device_read.iter_mut().flatten().flatten() {
                    *v = 1.0;
                }
            }
        }
        let line = memory_text(&device, &targets, &|_| None).unwrap();
        assert_eq!(
            line,
            "0 of 4 read cells on disk came from memory (the device delivered under 10% of their bytes)"
        );
        let mut two = m.clone();
        for t in two.tests.iter_mut() {
            t.targets[1].device_read = t.targets[0].device_read.clone();
        }
        let line = memory_text(&two, &targets, &|_| None).unwrap();
        assert!(
            line.starts_with("⚠ 3 of 4 read cells on disk and 3 of 4 on ram came from memory"),
            "{line}"
        );
        let mut none = m;
        for t in none.tests.iter_mut() {
            t.targets[0].device_read = Vec::new();
        }
        assert_eq!(memory_text(&none, &targets, &|_| None), None);
    }
}
