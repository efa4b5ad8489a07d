//! A matrix campaign read back from the store: the axes (tests, file sizes,
//! record sizes) read from the labels of the per-cell metrics, each cell's mean
//! throughput per target over the measured runs and, against the baseline,
//! its % difference with the significance rule every other verdict uses.
//! Pure: built from [`CampaignData`], no I/O. And what the matrix's verdict
//! concerns: the geometric mean of its `primary_test`, with each test's
//! beside it ([`primary_metric`], [`summary_metrics`]).

use std::collections::{BTreeSet, HashMap, HashSet};

use super::model::{call, LEVEL, MIN_RUNS};
use crate::metric::catalogue::{
    BW_BYTES_PER_S, DEV_READ_RATIO, GEOMEAN_BW_BYTES_PER_S, LAT_MEAN_NS,
};
use crate::metric::matrix::{cell_of, test_labels, Cell, Test};
use crate::metric::{Direction, MetricKey};
use crate::stats::summary::mean;
use crate::stats::{welch_log, Verdict};
use crate::store::{CampaignData, WorkloadRow};

/// The workload kind this module reads.
pub const KIND: &str = "matrix";
/// The geometric mean of `primary_test` when `w` is a matrix naming one
/// (its verdict metric, [`WorkloadRow::verdict_metric`], has a test's
/// labels).
pub fn primary_metric(w: &WorkloadRow) -> Option<MetricKey> {
    let key = w.verdict_metric();
    (!key.labels.is_empty()).then_some(key)
}

/// The geometric mean over all tests, then each test's, in iozone's
/// order; nothing for another kind.
pub fn summary_metrics(w: &WorkloadRow) -> Vec<MetricKey> {
    if w.kind != KIND {
        return Vec::new();
    }
    let mut keys = vec![MetricKey::plain(GEOMEAN_BW_BYTES_PER_S.name)];
    keys.extend(Test::ALL.iter().map(|&t| geomean(t)));
    keys
}

/// A test's geometric mean throughput.
fn geomean(t: Test) -> MetricKey {
    MetricKey::new(GEOMEAN_BW_BYTES_PER_S.name, test_labels(t))
}

/// The test and cell of a cell's throughput; `None` for any other metric.
fn throughput_cell(key: &MetricKey) -> Option<(Test, Cell)> {
    (key.name == BW_BYTES_PER_S.name)
        .then(|| cell_of(&key.labels))
        .flatten()
}

/// The test and cell of a cell's mean latency of one operation (the
/// engine's own timing of each `pread`/`pwrite` or stream call); `None`
/// for any other metric.
fn latency_cell(key: &MetricKey) -> Option<(Test, Cell)> {
    (key.name == LAT_MEAN_NS.name)
        .then(|| cell_of(&key.labels))
        .flatten()
}

/// The test and cell of a cell's device read ratio (a read cell measured
/// with telemetry on); `None` for any other metric.
fn device_cell(key: &MetricKey) -> Option<(Test, Cell)> {
    (key.name == DEV_READ_RATIO.name)
        .then(|| cell_of(&key.labels))
        .flatten()
}

/// The cells a campaign measured, and the axes they span.
#[derive(Debug, Clone, PartialEq)]
pub struct Axes {
    /// Tests in iozone's order.
    pub tests: Vec<Test>,
    /// File sizes in bytes, ascending (rows).
    pub files: Vec<u64>,
    /// Record sizes in bytes, ascending (columns).
    pub records: Vec<u64>,
    cells: HashSet<(&'static str, Cell)>,
}

impl Axes {
    /// The axes of the cells' throughput metrics among `keys`; other
    /// metrics are ignored. `None` when none is a cell's throughput.
    pub fn from_keys<'a>(keys: impl IntoIterator<Item = &'a MetricKey>) -> Option<Axes> {
        let cells: HashSet<(&'static str, Cell)> = keys
            .into_iter()
            .filter_map(throughput_cell)
            .map(|(t, c)| (t.name(), c))
            .collect();
        if cells.is_empty() {
            return None;
        }
        let files: BTreeSet<u64> = cells.iter().map(|(_, c)| c.file_size).collect();
        let records: BTreeSet<u64> = cells.iter().map(|(_, c)| c.record).collect();
        let tests = Test::ALL
            .iter()
            .copied()
            .filter(|t| cells.iter().any(|(n, _)| *n == t.name()))
            .collect();
        Some(Axes {
            tests,
            files: files.into_iter().collect(),
            records: records.into_iter().collect(),
            cells,
        })
    }

    /// The axes of `test` measured on each (file size, record size) cell.
    #[cfg(test)]
    pub fn of_cells(test: Test, cells: &[(u64, u64)]) -> Axes {
        use crate::metric::matrix::cell_labels;
        let keys: Vec<MetricKey> = cells
            .iter()
            .map(|&(file_size, record)| Cell { file_size, record })
            .map(|c| MetricKey::new(BW_BYTES_PER_S.name, cell_labels(test, c)))
            .collect();
        Axes::from_keys(&keys).expect("cells were given")
    }

    /// Whether any run measured `test` on this cell; the cells with a
    /// record above the file size never are.
    pub fn has(&self, test: Test, file: u64, record: u64) -> bool {
        let cell = Cell {
            file_size: file,
            record,
        };
        self.cells.contains(&(test.name(), cell))
    }

    /// Every cell of the file × record rectangle, row by row.
    fn rectangle(&self) -> impl Iterator<Item = (usize, usize, Cell)> + '_ {
        self.files.iter().enumerate().flat_map(move |(row, &f)| {
            self.records.iter().enumerate().map(move |(col, &r)| {
                let cell = Cell {
                    file_size: f,
                    record: r,
                };
                (row, col, cell)
            })
        })
    }
}

/// One cell of one target against the same cell of the baseline.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CellDiff {
    /// 100 · (ratio − 1), the ratio of the geometric means (of the means
    /// when a side has a single run or a zero).
    pub diff_pct: f64,
    /// Welch's two-sided p-value on the logs; `None` with fewer than two
    /// positive runs a side.
    pub p_value: Option<f64>,
    /// Faster or slower by the report's rule: p < 0.05 and at least 1%.
    pub significant: bool,
}

/// `candidate` against `baseline` (throughputs of one cell); `None` when a
/// side has no value or the baseline's mean is not positive.
pub fn cell_diff(baseline: &[f64], candidate: &[f64]) -> Option<CellDiff> {
    if baseline.is_empty() || candidate.is_empty() {
        return None;
    }
    let (mb, mc) = (mean(baseline), mean(candidate));
    if !(mb > 0.0 && mb.is_finite() && mc.is_finite()) {
        return None;
    }
    // Throughputs are positive: compared on the ratio scale like every
    // positive metric, unpaired (a cell's runs are few and exploratory).
    // Below the minimum n, no verdict (the means are shown).
    let enough = baseline.len() >= MIN_RUNS && candidate.len() >= MIN_RUNS;
    let Some(cmp) = welch_log(baseline, candidate, LEVEL).filter(|_| enough) else {
        return Some(CellDiff {
            diff_pct: 100.0 * (mc - mb) / mb,
            p_value: None,
            significant: false,
        });
    };
    let verdict = call(&cmp, Direction::HigherIsBetter);
    Some(CellDiff {
        diff_pct: cmp.diff_pct,
        p_value: Some(cmp.p_value),
        significant: verdict != Verdict::NoSignificantDifference,
    })
}

/// `rows[file][record]` of one test on one target.
pub type Rows<T> = Vec<Vec<Option<T>>>;

/// One test on one target.
#[derive(Debug, Clone, PartialEq)]
pub struct TargetMatrix {
    pub target: String,
    /// Measured runs of the workload on this target.
    pub runs: usize,
    /// Mean throughput in bytes/s; `None` where nothing was measured.
    pub means: Rows<f64>,
    /// Against the baseline; `None` for the baseline itself.
    pub diffs: Option<Rows<CellDiff>>,
    /// Mean share of the cell's reads the target's devices delivered
    /// (bytes the devices read ÷ bytes read); `None` where not recorded
    /// (a write test, telemetry off, no block device under the target).
    pub device_read: Rows<f64>,
    /// Mean latency of one operation (a record's read or write) in
    /// nanoseconds, the mean over the runs of each run's mean; `None` where
    /// not recorded.
    pub latency: Rows<f64>,
}

impl TargetMatrix {
    /// Whether any cell has a device read ratio.
    pub fn has_device_reads(&self) -> bool {
        self.device_read.iter().flatten().any(Option::is_some)
    }
}

/// One test over every target.
#[derive(Debug, Clone, PartialEq)]
pub struct TestMatrix {
    pub test: Test,
    pub targets: Vec<TargetMatrix>,
}

/// A matrix workload of a campaign, cell by cell.
#[derive(Debug, Clone, PartialEq)]
pub struct MatrixReport {
    pub workload: String,
    pub baseline: String,
    pub axes: Axes,
    pub tests: Vec<TestMatrix>,
}

impl MatrixReport {
    /// Of the reading tests' cells measured on `target` with a device read
    /// ratio, how many read from memory (the device delivered under
    /// [`PAGE_CACHE_RATIO`] of their bytes), and of how many; `None` when
    /// no cell recorded where its reads came from.
    ///
    /// [`PAGE_CACHE_RATIO`]: crate::warning::PAGE_CACHE_RATIO
    pub fn memory_cells(&self, target: &str) -> Option<(usize, usize)> {
        use crate::warning::PAGE_CACHE_RATIO;
        let ratios: Vec<f64> = self
            .tests
            .iter()
            .filter(|t| !t.test.writes())
            .flat_map(|t| t.targets.iter().filter(|x| x.target == target))
            .flat_map(|x| x.device_read.iter().flatten().flatten().copied())
            .collect();
        let memory = ratios.iter().filter(|&&r| r < PAGE_CACHE_RATIO).count();
        (!ratios.is_empty()).then_some((memory, ratios.len()))
    }

    /// Largest mean throughput of any cell, test and target.
    pub fn max_mean(&self) -> f64 {
        self.tests
            .iter()
            .flat_map(|t| &t.targets)
            .flat_map(|t| t.means.iter().flatten().flatten())
            .fold(0.0, |a, &b| f64::max(a, b))
    }
}

/// Throughput values per (target, test, cell) over measured, successful runs.
type Samples = HashMap<(String, &'static str, Cell), Vec<f64>>;

/// The matrix of `workload`, for `targets` (in report order) against
/// `baseline`; `None` when its runs hold no per-cell metric.
pub fn build(
    c: &CampaignData,
    workload: &str,
    targets: &[String],
    baseline: &str,
) -> Option<MatrixReport> {
    let runs: Vec<_> = c
        .runs_of_workload(workload)
        .filter(|r| !r.warmup && r.status == "ok")
        .collect();
    let axes = Axes::from_keys(runs.iter().flat_map(|r| r.metrics.keys()))?;
    let (mut samples, mut device, mut latency) = (Samples::new(), Samples::new(), Samples::new());
    for r in &runs {
        for (key, m) in &r.metrics {
            if let Some((test, cell)) = throughput_cell(key) {
                let key = (r.target.clone(), test.name(), cell);
                samples.entry(key).or_default().push(m.value);
            }
            if let Some((test, cell)) = device_cell(key) {
                let key = (r.target.clone(), test.name(), cell);
                device.entry(key).or_default().push(m.value);
            }
            if let Some((test, cell)) = latency_cell(key) {
                let key = (r.target.clone(), test.name(), cell);
                latency.entry(key).or_default().push(m.value);
            }
        }
    }
    let present: Vec<&String> = targets
        .iter()
        .filter(|t| runs.iter().any(|r| &r.target == *t))
        .collect();
    let run_count = |t: &str| runs.iter().filter(|r| r.target == t).count();
    let tests = axes
        .tests
        .iter()
        .map(|&test| TestMatrix {
            test,
            targets: present
                .iter()
                .map(|t| {
                    let mut x = target_matrix(&axes, &samples, test, t, baseline, run_count(t));
                    x.device_read = cell_means(&axes, &device, test, t);
                    x.latency = cell_means(&axes, &latency, test, t);
                    x
                })
                .collect(),
        })
        .collect();
    Some(MatrixReport {
        workload: workload.into(),
        baseline: baseline.into(),
        axes,
        tests,
    })
}

fn target_matrix(
    axes: &Axes,
    samples: &Samples,
    test: Test,
    target: &str,
    baseline: &str,
    runs: usize,
) -> TargetMatrix {
    let (rows, cols) = (axes.files.len(), axes.records.len());
    let mut means: Rows<f64> = vec![vec![None; cols]; rows];
    let mut diffs: Rows<CellDiff> = vec![vec![None; cols]; rows];
    let values = |t: &str, cell: Cell| samples.get(&(t.to_string(), test.name(), cell));
    for (row, col, cell) in axes.rectangle() {
        let Some(mine) = values(target, cell) else {
            continue;
        };
        means[row][col] = Some(mean(mine));
        let base = values(baseline, cell).map_or(&[][..], Vec::as_slice);
        diffs[row][col] = cell_diff(base, mine);
    }
    TargetMatrix {
        target: target.into(),
        runs,
        means,
        diffs: (target != baseline).then_some(diffs),
        device_read: Vec::new(),
        latency: Vec::new(),
    }
}

/// The mean of each cell's `samples` of `test` on `target`.
fn cell_means(axes: &Axes, samples: &Samples, test: Test, target: &str) -> Rows<f64> {
    let mut rows: Rows<f64> = vec![vec![None; axes.records.len()]; axes.files.len()];
    for (row, col, cell) in axes.rectangle() {
        if let Some(v) = samples.get(&(target.to_string(), test.name(), cell)) {
            rows[row][col] = Some(mean(v));
        }
    }
    rows
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn axes_come_from_the_cells_throughput_only() {
        use crate::metric::matrix::{cell_labels, test_labels};
        let cell = |t: Test, f: u64, r: u64| {
            let c = Cell {
                file_size: f,
                record: r,
            };
            cell_labels(t, c)
        };
        let bw = |labels| MetricKey::new("bw_bytes_per_s", labels);
        let keys = [
            bw(cell(Test::Read, 128 << 10, 4 << 10)),
            bw(cell(Test::Write, 64 << 10, 4 << 10)),
            bw(cell(Test::Write, 128 << 10, 64 << 10)),
            MetricKey::new("lat_mean_ns", cell(Test::Write, 64 << 10, 4 << 10)),
            MetricKey::new("lat_mean_ns", cell(Test::Write, 1 << 20, 1 << 20)),
            MetricKey::new("geomean_bw_bytes_per_s", test_labels(Test::Write)),
            MetricKey::plain("geomean_bw_bytes_per_s"),
            MetricKey::plain("cells"),
        ];
        let a = Axes::from_keys(&keys).unwrap();
        assert_eq!(a.tests, [Test::Write, Test::Read], "iozone's order");
        assert_eq!(a.files, [64 << 10, 128 << 10]);
        assert_eq!(a.records, [4 << 10, 64 << 10]);
        assert!(a.has(Test::Write, 64 << 10, 4 << 10));
        assert!(!a.has(Test::Read, 64 << 10, 4 << 10));
        assert!(!a.has(Test::Write, 64 << 10, 64 << 10), "record > file");
        assert_eq!(a.rectangle().count(), 4);
        assert_eq!(Axes::from_keys(&keys[5..]), None);
    }

    #[test]
    fn a_cell_is_significant_by_the_report_rule() {
        let base = [100.0, 101.0, 99.0];
        let faster = cell_diff(&base, &[120.0, 121.0, 119.0]).unwrap();
        // The ratio of geometric means; NumPy: g = lambda x:
        // np.exp(np.mean(np.log(x))); 100 * (g(C) / g(B) - 1).
        assert!(
            (faster.diff_pct - 20.001222332005).abs() < 1e-9,
            "{faster:?}"
        );
        assert!(faster.significant && faster.p_value.unwrap() < 0.05);
        let slower = cell_diff(&base, &[80.0, 81.0, 79.0]).unwrap();
        assert!(slower.significant && slower.diff_pct < 0.0);
        // Noise: p well above 0.05.
        let noisy = cell_diff(&base, &[90.0, 115.0, 100.0]).unwrap();
        assert!(!noisy.significant && noisy.p_value.unwrap() > 0.05);
        // Significant but under the 1% margin: not called.
        let tiny = cell_diff(&[100.0, 100.01, 99.99], &[100.5, 100.51, 100.49]).unwrap();
        assert!(tiny.p_value.unwrap() < 0.05 && !tiny.significant);
        // One run a side: the difference of means, never significant.
        let single = cell_diff(&[100.0], &[150.0]).unwrap();
        assert_eq!(single.diff_pct, 50.0);
        assert_eq!((single.p_value, single.significant), (None, false));
        assert_eq!(cell_diff(&[], &[1.0]), None);
        assert_eq!(cell_diff(&[0.0, 0.0], &[1.0, 1.0]), None);
    }
}
