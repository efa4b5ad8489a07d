//! Workload `matrix`: iozone's automatic mode (`iozone -a`) on storlab's
//! engine. For every file size × record size cell (powers of two) it runs
//! the selected tests in iozone's order on one file, `matrix.dat`, and
//! yields per cell `bw_bytes_per_s` and `lat_mean_ns` labelled with the
//! test, file size and record size, per test the geometric mean of its
//! cells (`geomean_bw_bytes_per_s` labelled with the test), and as primary
//! metric that geometric mean over every cell and test, without labels
//! (the report judges one test's instead when `primary_test` names it).

pub mod cell;
pub mod grid;

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::Result;

use self::cell::{run_test, CellResult, Timing};
use self::grid::{cell_labels, cells, test_labels, Cell, Test};
use super::io::buffer::AlignedBuf;
use super::io::rng::Rng;
use super::{Configure, RunContext, Workload, WorkloadConfig};
use crate::measure::layers::{figures, Snapshot, Stack};
use crate::measure::{Metric, RunOutput};
use crate::metric::catalogue as m;
use crate::metric::Labels;
use crate::params::units::saturating_secs;
use crate::params::{declare, Fault, Params};

declare! {
    /// The parameters of a `matrix` workload, as iozone's automatic mode.
    pub struct MatrixParams {
        min_file_size: size = "64k" => "smallest file size (a power of two), as iozone -n",
        max_file_size: size = "512M" => "largest file size (a power of two), as iozone -g",
        min_record_size: size = "4k" => "smallest record size (a power of two), as iozone -y",
        max_record_size: size = "16M" => "largest record size (a power of two), as iozone -q",
        tests: list = "write,rewrite,read,reread,randread,randwrite,bkwdread,recrewrite,strideread,fwrite,fread" => "tests to run on each cell, always in iozone's order",
        include_close: bool = "false" => "count close() in the timing, as iozone -c",
        direct: bool = "false" => "O_DIRECT for the pread/pwrite tests, bypassing the page cache, as iozone -I",
        include_flush: bool = "false" => "count fsync() of written data in the timing, as iozone -e",
        primary_test: string => "the test whose geometric mean is the workload's verdict and the regression gate's, e.g. reread [default: all tests]",
    }
}

fn power_of_two(key: &'static str, v: u64) -> Result<u64, Fault> {
    if v < 1024 || !v.is_power_of_two() {
        return Err((
            key,
            format!("{key} must be a power of two of at least 1k, like 4k or 64M (got {v} bytes)"),
        ));
    }
    Ok(v)
}

impl MatrixParams {
    /// Cross-parameter checks: the key at fault and why.
    fn validate(&self) -> Result<(), Fault> {
        let min_f = power_of_two("min_file_size", self.min_file_size)?;
        let max_f = power_of_two("max_file_size", self.max_file_size)?;
        let min_r = power_of_two("min_record_size", self.min_record_size)?;
        let max_r = power_of_two("max_record_size", self.max_record_size)?;
        if min_f > max_f {
            return Err((
                "min_file_size",
                "min_file_size is above max_file_size".into(),
            ));
        }
        if min_r > max_r {
            return Err((
                "min_record_size",
                "min_record_size is above max_record_size".into(),
            ));
        }
        if min_r > max_f {
            return Err((
                "min_record_size",
                "min_record_size is above max_file_size: the matrix would have no cell".into(),
            ));
        }
        let tests = &self.tests;
        if self.direct {
            if min_r < 4096 {
                return Err((
                    "min_record_size",
                    "with direct = true, records must be at least 4k".into(),
                ));
            }
            if let Some(t) = tests.iter().find(|t| *t == "fwrite" || *t == "fread") {
                return Err((
                    "tests",
                    format!("`{t}` goes through a stream buffer and cannot use direct = true; leave fwrite and fread out"),
                ));
            }
        }
        if tests.is_empty() {
            return Err(("tests", "name at least one test".into()));
        }
        for t in tests {
            if Test::parse(t).is_none() {
                return Err((
                    "tests",
                    format!("unknown test `{t}`; tests are {}", Test::NAMES.join(", ")),
                ));
            }
        }
        if let Some(p) = &self.primary_test {
            if !tests.contains(p) {
                return Err((
                    "primary_test",
                    format!(
                        "primary_test `{p}` is not among the tests run: {}",
                        tests.join(", ")
                    ),
                ));
            }
        }
        Ok(())
    }

    fn settings(&self) -> (Vec<Cell>, Vec<Test>) {
        let cells = cells(
            self.min_file_size,
            self.max_file_size,
            self.min_record_size,
            self.max_record_size,
        );
        let tests = Test::ALL
            .iter()
            .copied()
            .filter(|t| self.tests.iter().any(|c| c == t.name()))
            .collect();
        (cells, tests)
    }
}

impl Configure for MatrixParams {
    type Config = MatrixParams;

    fn configure(self, _: &Path, _: &mut Params) -> Result<MatrixParams, Fault> {
        self.validate()?;
        Ok(self)
    }
}

impl WorkloadConfig for MatrixParams {
    /// The geometric mean of `primary_test` when it names one.
    fn verdict_labels(&self) -> crate::metric::Labels {
        match self.primary_test.as_deref().and_then(Test::parse) {
            Some(t) => test_labels(t),
            None => crate::metric::Labels::new(),
        }
    }

    /// Rough run length: every byte moved at 1 GB/s, or 100 MB/s with O_DIRECT.
    fn estimate(&self) -> Duration {
        let (cells, tests) = self.settings();
        let bytes = cells
            .iter()
            .fold(0u64, |sum, c| sum.saturating_add(c.file_size))
            .saturating_mul(tests.len() as u64);
        let rate = if self.direct { 100e6 } else { 1e9 };
        saturating_secs(bytes as f64 / rate)
    }

    /// One call per record, per test and cell.
    fn estimate_calls(&self) -> u64 {
        let (cells, tests) = self.settings();
        cells
            .iter()
            .fold(0u64, |sum, c| sum.saturating_add(c.records()))
            .saturating_mul(tests.len() as u64)
    }

    fn bytes_needed(&self) -> u64 {
        self.max_file_size
    }

    fn build(&self) -> Box<dyn Workload> {
        Box::new(Matrix::new(self))
    }
}

pub struct Matrix {
    cells: Vec<Cell>,
    tests: Vec<Test>,
    include_close: bool,
    include_flush: bool,
    direct: bool,
}

impl Matrix {
    pub fn new(p: &MatrixParams) -> Matrix {
        let (cells, tests) = p.settings();
        Matrix {
            cells,
            tests,
            include_close: p.include_close,
            include_flush: p.include_flush,
            direct: p.direct,
        }
    }

    pub fn file(dir: &Path) -> PathBuf {
        dir.join("matrix.dat")
    }

    /// Runs every test of one cell; a cell whose first test reads gets its
    /// file laid out first, untimed.
    fn run_cell(
        &self,
        cell: Cell,
        dir: &Path,
        buf: &mut AlignedBuf,
        rng: &mut Rng,
        cx: &RunContext,
    ) -> Result<Vec<CellResult>> {
        let path = Self::file(dir);
        if !self.tests[0].truncates() {
            super::io::layout::ensure_laid_out(&path, cell.file_size, cx.run_seed)?;
        }
        let mut out = Vec::with_capacity(self.tests.len());
        // The layers' counters after the last read test, which are the
        // next one's before it.
        let mut last: Option<Snapshot> = None;
        // Read between the tests, which follow one another: only what
        // reads fast enough not to change what the next test finds.
        let stack = cx.layers.as_deref().map(Stack::between_tests);
        for &test in &self.tests {
            let timing = Timing {
                include_close: self.include_close,
                include_flush: self.include_flush,
                direct: self.direct,
                seed: rng.next_u64(),
            };
            let stop = cx.stop.as_atomic();
            let before = cx.devices.as_ref().map(|d| d.bytes().0);
            let layers = match (&stack, test.writes()) {
                (Some(stack), false) => {
                    Some((stack, last.take().unwrap_or_else(|| stack.snapshot())))
                }
                _ => None,
            };
            let mut r = run_test(test, cell, &path, timing, buf.as_mut_slice(), stop)?;
            if let (Some(probe), Some(before)) = (&cx.devices, before) {
                r.dev_read_bytes = Some(probe.bytes().0.saturating_sub(before));
            }
            last = None;
            if let Some((stack, before)) = layers {
                let after = stack.snapshot();
                r.layers = figures::phase(
                    stack,
                    &before,
                    &after,
                    r.bytes as f64,
                    &cell_labels(test, cell),
                );
                last = Some(after);
            }
            out.push(r);
            if cx.stop.is_raised() {
                break;
            }
        }
        Ok(out)
    }
}

impl Workload for Matrix {
    fn prepare(&mut self, _dir: &Path, _cx: &RunContext) -> Result<()> {
        Ok(())
    }

    fn run(&mut self, dir: &Path, cx: &RunContext) -> Result<RunOutput> {
        let max_rec = self.cells.iter().map(|c| c.record).max().unwrap_or(4096);
        let mut buf = AlignedBuf::new(max_rec as usize, cx.run_seed);
        let mut rng = Rng::new(cx.run_seed);
        let mut results = Vec::with_capacity(self.cells.len());
        for &cell in &self.cells {
            if cx.stop.is_raised() {
                break;
            }
            results.push((cell, self.run_cell(cell, dir, &mut buf, &mut rng, cx)?));
        }
        Ok(metrics(&self.tests, &results))
    }

    fn cleanup(&mut self, dir: &Path) -> Result<()> {
        let _ = std::fs::remove_file(Self::file(dir));
        Ok(())
    }
}

fn geomean(values: &[f64]) -> f64 {
    let logs: Vec<f64> = values
        .iter()
        .filter(|v| **v > 0.0)
        .map(|v| v.ln())
        .collect();
    if logs.is_empty() {
        return 0.0;
    }
    (logs.iter().sum::<f64>() / logs.len() as f64).exp()
}

/// A cell's bytes read or written and, for a read with the devices
/// watched, what the devices read: the share of the cell's reads that
/// came from the device rather than from memory.
fn direction_metrics(test: Test, r: &CellResult, labels: Labels) -> Vec<Metric> {
    if test.writes() {
        return vec![m::WRITE_BYTES.labelled(labels, r.bytes as f64)];
    }
    let mut out = vec![m::READ_BYTES.labelled(labels.clone(), r.bytes as f64)];
    out.extend(r.layers.iter().cloned());
    if let (Some(dev), true) = (r.dev_read_bytes, r.bytes > 0) {
        out.push(m::DEV_READ_BYTES.labelled(labels.clone(), dev as f64));
        out.push(m::DEV_READ_RATIO.labelled(labels, dev as f64 / r.bytes as f64));
    }
    out
}

/// Per-cell metrics, per-test geometric means and the primary metric.
fn metrics(tests: &[Test], results: &[(Cell, Vec<CellResult>)]) -> RunOutput {
    let mut out = Vec::new();
    let mut all = Vec::new();
    let (mut bytes, mut elapsed) = (0u64, 0.0);
    let (mut read, mut written) = (0u64, 0u64);
    for (ti, test) in tests.iter().enumerate() {
        let mut per_test = Vec::new();
        for (cell, rs) in results {
            let Some(r) = rs.get(ti) else { continue };
            let labels = cell_labels(*test, *cell);
            out.push(m::BW_BYTES_PER_S.labelled(labels.clone(), r.bw()));
            out.push(m::LAT_MEAN_NS.labelled(labels.clone(), r.lat_mean_ns()));
            out.extend(direction_metrics(*test, r, labels));
            per_test.push(r.bw());
            bytes += r.bytes;
            *if test.writes() {
                &mut written
            } else {
                &mut read
            } += r.bytes;
            elapsed += r.elapsed_s;
        }
        let g = geomean(&per_test);
        out.push(m::GEOMEAN_BW_BYTES_PER_S.labelled(test_labels(*test), g));
        all.extend(per_test);
    }
    out.push(m::GEOMEAN_BW_BYTES_PER_S.value(geomean(&all)));
    out.push(m::CELLS.value(results.len() as f64));
    out.push(m::BYTES.value(bytes as f64));
    out.push(m::READ_BYTES.value(read as f64));
    out.push(m::WRITE_BYTES.value(written as f64));
    out.push(m::ELAPSED_S.value(elapsed));
    RunOutput {
        metrics: out,
        ..Default::default()
    }
}

#[cfg(test)]
mod tests;
