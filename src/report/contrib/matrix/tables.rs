//! The matrix as tables, the way iozone users lay it out in a spreadsheet:
//! per test and target, file sizes as rows and record sizes as columns, one
//! unit for the whole table; the same shape for % differences against the
//! baseline; and the per-test geometric means, one row per test.

use crate::analysis::matrix::{MatrixReport, Rows, TargetMatrix};
use crate::analysis::model::{MetricReport, WorkloadReport};
use crate::analysis::CampaignAnalysis;
use crate::metric::labels::{size_token, TEST};
use crate::metric::matrix::Test;
use crate::metric::Unit as StoredUnit;
use crate::report::format::pct_text;
use crate::report::table::Table;
use crate::report::text::{display_unit, mean_ci_text};
use crate::report::verdict::{words, Form};

/// A throughput unit for people: bytes/s per unit, and its name.
#[derive(Debug, Clone, PartialEq)]
pub struct Unit {
    pub scale: f64,
    pub name: String,
}

/// `64K`, `1M`, `2G`: a size as an axis label.
pub fn size_text(bytes: u64) -> String {
    size_token(bytes).to_uppercase()
}

/// Three significant digits, whole numbers from 100 up: `1234`, `56.7`, `0.0891`.
pub fn number_text(v: f64) -> String {
    if !v.is_finite() {
        return "n/a".into();
    }
    let a = v.abs();
    let decimals = if a >= 100.0 || a == 0.0 {
        0
    } else {
        (2 - a.log10().floor() as i32).clamp(0, 9) as usize
    };
    format!("{v:.decimals$}")
}

/// `+12.3%`, or `(+0.4%)` when the difference is not significant: short,
/// so that a 13-column matrix still fits a page.
pub fn diff_cell_text(diff_pct: f64, significant: bool) -> String {
    let text = pct_text(diff_pct);
    if significant {
        text
    } else {
        format!("({text})")
    }
}

/// The table's header: the corner, then one column per record size.
fn grid_table(m: &MatrixReport, corner: String) -> Table {
    let mut header = vec![corner];
    header.extend(m.axes.records.iter().map(|&r| size_text(r)));
    let mut right = vec![true; header.len()];
    right[0] = false;
    Table {
        header,
        rows: Vec::new(),
        right,
        ..Table::default()
    }
}

/// Fills `t` with one row per file size: `text` of each measured cell, `—`
/// where this target lacks a cell the matrix has, blank where no run has it
/// (a record larger than the file).
fn fill<T>(
    t: &mut Table,
    m: &MatrixReport,
    test: Test,
    rows: &Rows<T>,
    text: impl Fn(&T) -> String,
) {
    for (row, &file) in m.axes.files.iter().enumerate() {
        let mut cells = vec![size_text(file)];
        for (col, &record) in m.axes.records.iter().enumerate() {
            let value = rows
                .get(row)
                .and_then(|r| r.get(col))
                .and_then(Option::as_ref);
            cells.push(match value {
                Some(v) => text(v),
                None if m.axes.has(test, file, record) => "—".into(),
                None => String::new(),
            });
        }
        t.push(cells);
    }
}

/// Mean throughput of one test on one target, in `unit`.
pub fn values_table(m: &MatrixReport, test: Test, tm: &TargetMatrix, unit: &Unit) -> Table {
    let corner = format!("file ↓ record → ({})", unit.name);
    let mut t = grid_table(m, corner);
    fill(&mut t, m, test, &tm.means, |v| number_text(v / unit.scale));
    t
}

/// Mean latency of one operation of one test on one target, in `unit`
/// (nanoseconds per displayed unit); `None` when no cell recorded it.
pub fn latency_table(
    m: &MatrixReport,
    test: Test,
    tm: &TargetMatrix,
    unit: &Unit,
) -> Option<Table> {
    if !tm.latency.iter().flatten().any(Option::is_some) {
        return None;
    }
    let corner = format!("file ↓ record → ({})", unit.name);
    let mut t = grid_table(m, corner);
    fill(&mut t, m, test, &tm.latency, |v| {
        number_text(v / unit.scale)
    });
    Some(t)
}

/// The seed's latency charts as one table for the terminal: file sizes as
/// rows; per writing and reading test (iozone's `write` and `read`) and
/// target, the mean latency of one operation at the smallest record size
/// measured, in µs (ms from a millisecond). `None` when no such cell has
/// a latency.
pub fn latency_summary(m: &MatrixReport) -> Option<(u64, Table)> {
    let record = *m.axes.records.first()?;
    let col = 0;
    let columns: Vec<(String, &TargetMatrix)> = m
        .tests
        .iter()
        .filter(|t| matches!(t.test, Test::Write | Test::Read))
        .flat_map(|t| {
            t.targets
                .iter()
                .map(move |x| (format!("{} on {}", t.test.name(), x.target), x))
        })
        .filter(|(_, x)| {
            x.latency
                .iter()
                .any(|r| r.get(col).copied().flatten().is_some())
        })
        .collect();
    let cell = |x: &TargetMatrix, row: usize| {
        x.latency
            .get(row)
            .and_then(|r| r.get(col).copied().flatten())
    };
    let max = columns
        .iter()
        .flat_map(|(_, x)| (0..m.axes.files.len()).filter_map(|row| cell(x, row)))
        .reduce(f64::max)?;
    let (scale, name) = display_unit(StoredUnit::Nanoseconds, max);
    let unit = Unit { scale, name };
    let mut header = vec![format!("file ({})", unit.name)];
    header.extend(columns.iter().map(|(h, _)| h.clone()));
    let mut right = vec![true; header.len()];
    right[0] = false;
    let mut t = Table {
        header,
        rows: Vec::new(),
        right,
        ..Table::default()
    };
    for (row, &file) in m.axes.files.iter().enumerate() {
        let mut cells = vec![size_text(file)];
        cells.extend(
            columns
                .iter()
                .map(|(_, x)| cell(x, row).map_or("—".into(), |v| number_text(v / unit.scale))),
        );
        t.push(cells);
    }
    Some((record, t))
}

/// % difference of one test on one target against the baseline; `None` for
/// the baseline itself.
pub fn diff_table(m: &MatrixReport, test: Test, tm: &TargetMatrix) -> Option<Table> {
    let diffs = tm.diffs.as_ref()?;
    let mut t = grid_table(m, "file ↓ record → (%)".into());
    fill(&mut t, m, test, diffs, |d| {
        diff_cell_text(d.diff_pct, d.significant)
    });
    Some(t)
}

/// Below this share of a cell's reads from the device, they came from
/// memory (the threshold of telemetry's page-cache warning).
pub const MEMORY_BELOW: f64 = crate::warning::PAGE_CACHE_RATIO;
/// From this share up, they came from the device (the mirror of
/// [`MEMORY_BELOW`]); between the two, from both.
pub const DEVICE_FROM: f64 = 1.0 - MEMORY_BELOW;

/// `dev 98%`, `mem 0.0%`, `mix 45%`: where a cell's reads came from, by
/// the share the device delivered (short: a matrix has many columns).
pub fn source_text(ratio: f64) -> String {
    let word = if ratio < MEMORY_BELOW {
        "mem"
    } else if ratio >= DEVICE_FROM {
        "dev"
    } else {
        "mix"
    };
    // Under 10%, a decimal: "mem 10%" would contradict the threshold.
    let digits = usize::from(ratio < 0.1);
    format!("{word} {:.digits$}%", 100.0 * ratio)
}

/// Where the reads of one test on one target came from, per cell; `None`
/// when the runs recorded no device reads for it.
pub fn device_table(m: &MatrixReport, test: Test, tm: &TargetMatrix) -> Option<Table> {
    if test.writes() || !tm.has_device_reads() {
        return None;
    }
    let mut t = grid_table(m, "file ↓ record → (reads from)".into());
    fill(&mut t, m, test, &tm.device_read, |r| source_text(*r));
    Some(t)
}

/// The test a summary metric stands for (its `test` label): "all tests"
/// for the primary, which has none.
fn test_of(m: &MetricReport) -> String {
    m.key.labels.get(&TEST).unwrap_or("all tests").to_string()
}

/// The workload's summary metrics as rows (all tests, then each test's
/// geometric mean), targets as columns: mean ± 95% CI, then each
/// non-baseline target against the baseline.
pub fn geomeans_table(a: &CampaignAnalysis, w: &WorkloadReport) -> Table {
    let baseline = a.model.baseline.as_str();
    let Some(primary) = w.primary_metric() else {
        return Table::new(&["test"], &[false]);
    };
    let targets = &primary.targets;
    let mut header = vec!["test".to_string(), "metric".to_string()];
    header.extend(targets.iter().map(|t| {
        let role = if t.target == baseline {
            " (baseline)"
        } else {
            ""
        };
        format!("{}{role}, n={}", t.target, t.values.len())
    }));
    let compared: Vec<usize> = (0..targets.len())
        .filter(|&i| targets[i].comparison.is_some())
        .collect();
    header.extend(
        compared
            .iter()
            .map(|&i| format!("{} vs {baseline}", targets[i].target)),
    );
    let mut right = vec![true; header.len()];
    right[..2].fill(false);
    let mut t = Table {
        header,
        rows: Vec::new(),
        right,
        ..Table::default()
    };
    for (i, m) in w.metrics.iter().enumerate() {
        // A test named the verdict's (primary_test) says so.
        let test = match i == 0 && !m.key.labels.is_empty() {
            true => format!("{} (primary)", test_of(m)),
            false => test_of(m),
        };
        let mut row = vec![test, m.name.clone()];
        row.extend(m.targets.iter().map(|x| mean_ci_text(x, m.unit)));
        row.extend(compared.iter().map(|&i| {
            match a.verdict(&w.name, &m.name, &targets[i].target) {
                Some(v) => words(v, Form::Percent),
                None => "—".into(),
            }
        }));
        t.push(row);
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::matrix::{Axes, CellDiff, TestMatrix};

    fn report() -> MatrixReport {
        const K: u64 = 1024;
        let axes = Axes::of_cells(
            Test::Write,
            &[
                (64 * K, 4 * K),
                (64 * K, 64 * K),
                (128 * K, 4 * K),
                (128 * K, 64 * K),
                (128 * K, 128 * K),
            ],
        );
        let d = |diff_pct, significant| {
            Some(CellDiff {
                diff_pct,
                p_value: Some(0.5),
                significant,
            })
        };
        let target = TargetMatrix {
            target: "b".into(),
            runs: 3,
            // 128k × 64k was not measured on this target.
            means: vec![
                vec![Some(1048576.0 * 1500.0), Some(1048576.0 * 2.5), None],
                vec![Some(1048576.0 * 0.0891), None, Some(1048576.0)],
            ],
            device_read: Vec::new(),
            latency: Vec::new(),
            diffs: Some(vec![
                vec![d(12.34, true), d(-0.4, false), None],
                vec![d(-50.0, true), None, d(0.0, false)],
            ]),
        };
        MatrixReport {
            workload: "m".into(),
            baseline: "a".into(),
            axes,
            tests: vec![TestMatrix {
                test: Test::Write,
                targets: vec![target],
            }],
        }
    }

    #[test]
    fn file_sizes_are_rows_and_records_columns() {
        let m = report();
        let unit = Unit {
            scale: 1048576.0,
            name: "MiB/s".into(),
        };
        let t = values_table(&m, Test::Write, &m.tests[0].targets[0], &unit);
        assert_eq!(t.header, ["file ↓ record → (MiB/s)", "4K", "64K", "128K"]);
        assert_eq!(
            t.rows[0],
            ["64K", "1500", "2.50", ""],
            "record > file: blank"
        );
        assert_eq!(t.rows[1], ["128K", "0.0891", "—", "1.00"], "unmeasured: —");
        assert_eq!(t.right, [false, true, true, true]);
    }

    #[test]
    fn differences_say_which_are_not_significant() {
        let m = report();
        let t = diff_table(&m, Test::Write, &m.tests[0].targets[0]).unwrap();
        assert_eq!(t.rows[0], ["64K", "+12.3%", "(-0.4%)", ""]);
        assert_eq!(t.rows[1], ["128K", "÷2.0", "—", "(±0.0%)"], "half: ÷2");
        let mut base = m.tests[0].targets[0].clone();
        base.diffs = None;
        assert_eq!(diff_table(&m, Test::Write, &base), None);
    }

    #[test]
    fn each_read_cell_says_where_its_reads_came_from() {
        const K: u64 = 1024;
        let axes = Axes::of_cells(Test::Read, &[(64 * K, 4 * K), (1024 * K, 4 * K)]);
        let target = TargetMatrix {
            target: "a".into(),
            runs: 3,
            means: vec![vec![Some(1.0)], vec![Some(1.0)]],
            diffs: None,
            // Just under the page-cache threshold, then mixed.
            device_read: vec![vec![Some(0.099)], vec![Some(0.45)]],
            latency: Vec::new(),
        };
        let mut m = MatrixReport {
            workload: "m".into(),
            baseline: "a".into(),
            axes,
            tests: vec![TestMatrix {
                test: Test::Read,
                targets: vec![target.clone()],
            }],
        };
        let t = device_table(&m, Test::Read, &target).unwrap();
        assert_eq!(t.header, ["file ↓ record → (reads from)", "4K"]);
        assert_eq!(t.rows[0], ["64K", "mem 9.9%"]);
        assert_eq!(t.rows[1], ["1M", "mix 45%"]);
        assert_eq!(source_text(0.9), "dev 90%");
        assert_eq!(source_text(0.1), "mix 10%");
        let mut none = target.clone();
        none.device_read = vec![vec![None], vec![None]];
        assert_eq!(device_table(&m, Test::Read, &none), None, "telemetry off");
        m.tests[0].test = Test::Write;
        assert_eq!(
            device_table(&m, Test::Write, &target),
            None,
            "a writing test"
        );
    }

    #[test]
    fn numbers_keep_three_digits() {
        assert_eq!(number_text(12345.6), "12346");
        assert_eq!(number_text(56.78), "56.8");
        assert_eq!(number_text(0.0), "0");
        assert_eq!(number_text(f64::NAN), "n/a");
        assert_eq!(size_text(1 << 20), "1M");
        let geomean = |labels| MetricReport {
            name: String::new(),
            key: crate::metric::MetricKey::new("geomean_bw_bytes_per_s", labels),
            unit: crate::metric::Unit::BytesPerSec,
            direction: crate::metric::Direction::HigherIsBetter,
            analysis: crate::stats::Analysis::Ratio,
            exploratory: true,
            targets: Vec::new(),
        };
        let write = crate::metric::matrix::test_labels(Test::Write);
        assert_eq!(test_of(&geomean(write)), "write");
        assert_eq!(test_of(&geomean(Default::default())), "all tests");
    }

    #[test]
    fn the_terminal_gets_write_and_read_latency_at_the_smallest_record() {
        let mut m = report();
        let mut x = m.tests[0].targets[0].clone();
        x.latency = vec![
            vec![Some(1500.0), Some(40_000.0), None],
            vec![None, None, Some(250_000.0)],
        ];
        m.tests[0].targets = vec![x];
        let us = Unit {
            scale: 1e3,
            name: "µs".into(),
        };
        let (record, t) = latency_summary(&m).unwrap();
        assert_eq!(record, 4096);
        assert_eq!(t.header, ["file (µs)", "write on b"]);
        assert_eq!(t.rows, [vec!["64K", "1.50"], vec!["128K", "—"]]);
        let full = latency_table(&m, Test::Write, &m.tests[0].targets[0], &us).unwrap();
        assert_eq!(full.rows[1], ["128K", "—", "—", "250"]);
        m.tests[0].targets[0].latency = Vec::new();
        assert!(latency_summary(&m).is_none());
    }
}
