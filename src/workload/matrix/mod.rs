//! Workload `matrix`: iozone's automatic mode (`iozone -a`) on storlab's
//! engine. For every file size × record size cell (powers of two) it runs
//! the selected tests in iozone's order on one file, `matrix.dat`, and
//! yields per cell `bw_bytes_per_s` and `lat_mean_ns` labelled with the
//! test, file size and record size, per test the geometric mean of its
//! cells (`geomean_bw_bytes_per_s` labelled with the test), and as primary
//! metric that geometric mean over every cell and test, without labels.

pub mod cell;
pub mod grid;

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::Result;

use self::cell::{run_test, CellResult, Timing};
use self::grid::{cell_labels, cells, test_labels, Cell, Test};
use super::io::buffer::AlignedBuf;
use super::io::rng::Rng;
use super::{RunContext, Workload};
use crate::experiment::params::{ParamSpec, ParamType, Params};
use crate::measure::RunOutput;
use crate::metric::catalogue as m;

pub const PARAMS: &[ParamSpec] = &[
    ParamSpec {
        name: "min_file_size",
        ty: ParamType::Size,
        default: Some("64k"),
        help: "smallest file size (a power of two), as iozone -n",
    },
    ParamSpec {
        name: "max_file_size",
        ty: ParamType::Size,
        default: Some("512M"),
        help: "largest file size (a power of two), as iozone -g",
    },
    ParamSpec {
        name: "min_record_size",
        ty: ParamType::Size,
        default: Some("4k"),
        help: "smallest record size (a power of two), as iozone -y",
    },
    ParamSpec {
        name: "max_record_size",
        ty: ParamType::Size,
        default: Some("16M"),
        help: "largest record size (a power of two), as iozone -q",
    },
    ParamSpec {
        name: "tests",
        ty: ParamType::List,
        default: Some(
            "write,rewrite,read,reread,randread,randwrite,bkwdread,recrewrite,strideread,fwrite,fread",
        ),
        help: "tests to run on each cell, always in iozone's order",
    },
    ParamSpec {
        name: "include_close",
        ty: ParamType::Bool,
        default: Some("false"),
        help: "count close() in the timing, as iozone -c",
    },
    ParamSpec {
        name: "direct",
        ty: ParamType::Bool,
        default: Some("false"),
        help: "O_DIRECT for the pread/pwrite tests, bypassing the page cache, as iozone -I",
    },
    ParamSpec {
        name: "include_flush",
        ty: ParamType::Bool,
        default: Some("false"),
        help: "count fsync() of written data in the timing, as iozone -e",
    },
];

fn power_of_two(p: &Params, key: &'static str) -> Result<u64, (&'static str, String)> {
    let v = p.size(key).unwrap_or(0);
    if v < 1024 || !v.is_power_of_two() {
        return Err((
            key,
            format!("{key} must be a power of two of at least 1k, like 4k or 64M (got {v} bytes)"),
        ));
    }
    Ok(v)
}

/// Cross-parameter checks: the key at fault and why.
pub fn validate(p: &Params) -> Result<(), (&'static str, String)> {
    let min_f = power_of_two(p, "min_file_size")?;
    let max_f = power_of_two(p, "max_file_size")?;
    let min_r = power_of_two(p, "min_record_size")?;
    let max_r = power_of_two(p, "max_record_size")?;
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
    let tests = p.list("tests").unwrap_or(&[]);
    if p.bool("direct") == Some(true) {
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
    Ok(())
}

fn settings(p: &Params) -> (Vec<Cell>, Vec<Test>) {
    let cells = cells(
        p.size("min_file_size").unwrap_or(64 << 10),
        p.size("max_file_size").unwrap_or(512 << 20),
        p.size("min_record_size").unwrap_or(4 << 10),
        p.size("max_record_size").unwrap_or(16 << 20),
    );
    let chosen = p.list("tests").unwrap_or(&[]);
    let tests = Test::ALL
        .iter()
        .copied()
        .filter(|t| chosen.iter().any(|c| c == t.name()))
        .collect();
    (cells, tests)
}

/// Rough run length: every byte moved at 1 GB/s, or 100 MB/s with O_DIRECT.
pub fn estimate(p: &Params) -> Duration {
    let (cells, tests) = settings(p);
    let bytes: u64 = cells.iter().map(|c| c.file_size).sum::<u64>() * tests.len() as u64;
    let rate = if p.bool("direct") == Some(true) {
        100e6
    } else {
        1e9
    };
    Duration::from_secs_f64(bytes as f64 / rate)
}

pub fn bytes_needed(p: &Params) -> u64 {
    p.size("max_file_size").unwrap_or(0)
}

pub struct Matrix {
    cells: Vec<Cell>,
    tests: Vec<Test>,
    include_close: bool,
    include_flush: bool,
    direct: bool,
}

impl Matrix {
    pub fn new(p: &Params) -> Matrix {
        let (cells, tests) = settings(p);
        Matrix {
            cells,
            tests,
            include_close: p.bool("include_close").unwrap_or(false),
            include_flush: p.bool("include_flush").unwrap_or(false),
            direct: p.bool("direct").unwrap_or(false),
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
        for &test in &self.tests {
            let timing = Timing {
                include_close: self.include_close,
                include_flush: self.include_flush,
                direct: self.direct,
                seed: rng.next_u64(),
            };
            let stop = cx.stop.as_atomic();
            out.push(run_test(
                test,
                cell,
                &path,
                timing,
                buf.as_mut_slice(),
                stop,
            )?);
            if cx.stop.is_raised() {
                break;
            }
        }
        Ok(out)
    }
}

impl Workload for Matrix {
    fn prepare(&mut self, _dir: &Path) -> Result<()> {
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

/// Per-cell metrics, per-test geometric means and the primary metric.
fn metrics(tests: &[Test], results: &[(Cell, Vec<CellResult>)]) -> RunOutput {
    let mut out = Vec::new();
    let mut all = Vec::new();
    let (mut bytes, mut elapsed) = (0u64, 0.0);
    for (ti, test) in tests.iter().enumerate() {
        let mut per_test = Vec::new();
        for (cell, rs) in results {
            let Some(r) = rs.get(ti) else { continue };
            let labels = cell_labels(*test, *cell);
            out.push(m::BW_BYTES_PER_S.labelled(labels.clone(), r.bw()));
            out.push(m::LAT_MEAN_NS.labelled(labels, r.lat_mean_ns()));
            per_test.push(r.bw());
            bytes += r.bytes;
            elapsed += r.elapsed_s;
        }
        let g = geomean(&per_test);
        out.push(m::GEOMEAN_BW_BYTES_PER_S.labelled(test_labels(*test), g));
        all.extend(per_test);
    }
    out.push(m::GEOMEAN_BW_BYTES_PER_S.value(geomean(&all)));
    out.push(m::CELLS.value(results.len() as f64));
    out.push(m::BYTES.value(bytes as f64));
    out.push(m::ELAPSED_S.value(elapsed));
    RunOutput {
        metrics: out,
        ..Default::default()
    }
}

#[cfg(test)]
mod tests;
