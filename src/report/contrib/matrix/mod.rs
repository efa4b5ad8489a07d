//! The `matrix` workload (iozone's automatic mode) in reports. Its summary
//! is the geometric mean of throughput overall and per test; its hundreds
//! of per-cell metrics stay out of the per-metric verdict tables and are
//! shown the way iozone users read them: per test, a heat map of file size ×
//! record size for each target, a % difference heat map against the
//! baseline, and the same numbers as file-size × record-size tables; with
//! telemetry, for the reading tests, where each cell's reads came from.

pub mod charts;
pub mod tables;

use anyhow::Result;

use self::tables::Unit;
use super::{Context, Contributor};
use crate::analysis::matrix::{self as grid, MatrixReport, TestMatrix, KIND};
use crate::analysis::model::{WorkloadReport, MIN_EFFECT_PCT};
use crate::metric::Unit as StoredUnit;
use crate::report::document::{Chart, Section};
use crate::report::table::Table;
use crate::report::text::display_unit;

pub struct Matrix;

impl Contributor for Matrix {
    /// Tests as rows, targets as columns.
    fn values_table(&self, cx: Context, w: &WorkloadReport) -> Option<Table> {
        (w.kind == KIND).then(|| tables::geomeans_table(w, &cx.model.baseline))
    }

    fn summary(&self, cx: Context, w: &WorkloadReport) -> Result<Vec<Section>> {
        let Some(t) = self.values_table(cx, w) else {
            return Ok(Vec::new());
        };
        let title = format!("{} ({KIND}): geometric mean throughput per test", w.name);
        let mut s = Section::new(3, title);
        s.table(t);
        Ok(vec![s])
    }

    /// Per test: heat maps, then tables.
    fn sections(&self, cx: Context, w: &WorkloadReport) -> Result<Vec<Section>> {
        let Some(m) = matrix_of(cx, w) else {
            return Ok(Vec::new());
        };
        let unit = unit_of(&m);
        let mut head = Section::new(3, "Matrix: file size × record size");
        head.text(reading(&m, &unit));
        let mut out = vec![head];
        out.extend(m.tests.iter().map(|t| test_section(&m, t, &unit)));
        Ok(out)
    }
}

/// The cell-by-cell matrix of `w`, when it is a matrix workload whose runs
/// recorded cells.
fn matrix_of(cx: Context, w: &WorkloadReport) -> Option<MatrixReport> {
    if w.kind != KIND {
        return None;
    }
    grid::build(cx.campaign, &w.name, &cx.model.targets, &cx.model.baseline)
}

/// One unit for every number of the matrix, chosen from its largest mean.
fn unit_of(m: &MatrixReport) -> Unit {
    let (scale, name) = display_unit(StoredUnit::BytesPerSec, m.max_mean());
    Unit { scale, name }
}

/// How to read the maps and tables, once per workload.
fn reading(m: &MatrixReport, unit: &Unit) -> String {
    format!(
        "Per test: mean throughput over the measured runs in {}, file sizes as rows and record sizes as columns (empty where the record is larger than the file, — where a target has no measurement), then the % difference of each target's mean from the baseline {} (in the maps red is faster, blue slower). The throughput maps of a test share one colour scale unless its values span more than a decade; then each target has its own, logarithmic where its own values do, as the map's title says. A difference in parentheses (hatched in the maps) is not significant: p ≥ 0.05 (Welch's t on the logs of the cell's runs) or under {MIN_EFFECT_PCT}%, the rule of every verdict in this report. Mean latency per cell is in the CSV and JSON exports.{}",
        unit.name,
        m.baseline,
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
fn test_section(m: &MatrixReport, t: &TestMatrix, unit: &Unit) -> Section {
    let test = t.test.name();
    let mut s = Section::new(4, test).with_class("matrix");
    let maps = charts::throughput_maps(m, t, unit)
        .into_iter()
        .chain(charts::device_maps(m, t))
        .chain(charts::difference_maps(m, t));
    for map in maps {
        s.chart(Chart::Heat(map));
    }
    for x in &t.targets {
        s.text(format!(
            "{test} on {}: mean throughput ({})",
            x.target, unit.name
        ));
        s.table(tables::values_table(m, t.test, x, unit));
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
