//! Runs one iozone test on one cell: opens the file, issues one operation
//! per record (pread/pwrite, or a buffered stream for the f-tests), and
//! times it with iozone's -e (fsync) and -c (close) inside the timing when
//! asked. The loop allocates nothing: the buffer comes from the caller.

use std::fs::{File, OpenOptions};
use std::io::{BufReader, BufWriter, Read, Write};
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use anyhow::{bail, Context, Result};

use super::grid::{shuffled, Cell, Test};

/// stdio's BUFSIZ: the stream buffer of the f-tests, as iozone's fopen gives.
const STREAM_BUF: usize = 8192;

/// How a test is timed, and the seed of its random order.
#[derive(Debug, Clone, Copy)]
pub struct Timing {
    pub include_close: bool,
    pub include_flush: bool,
    /// O_DIRECT (iozone -I); the f-tests never use it.
    pub direct: bool,
    /// Seed of the shuffled record order of randread and randwrite.
    pub seed: u64,
}

/// What one test on one cell measured.
#[derive(Debug, Clone, Default)]
pub struct CellResult {
    pub elapsed_s: f64,
    pub ops: u64,
    pub bytes: u64,
    pub lat_sum_ns: u64,
    /// Bytes the target's physical devices read during the test, when the
    /// run's telemetry watches them.
    pub dev_read_bytes: Option<u64>,
    /// Where a read test's reads came from: each layer's figures, when the
    /// target's layers are read.
    pub layers: Vec<crate::measure::Metric>,
}

impl CellResult {
    pub fn bw(&self) -> f64 {
        self.bytes as f64 / self.elapsed_s.max(1e-9)
    }

    pub fn lat_mean_ns(&self) -> f64 {
        self.lat_sum_ns as f64 / self.ops.max(1) as f64
    }
}

fn open(test: Test, path: &Path, direct: bool) -> Result<File> {
    let mut o = OpenOptions::new();
    o.read(true).write(test.writes());
    if test.truncates() {
        o.create(true).truncate(true);
    }
    if direct && !test.buffered() {
        o.custom_flags(libc::O_DIRECT);
    }
    o.open(path).map_err(|e| {
        let hint = if direct && e.raw_os_error() == Some(libc::EINVAL) {
            ": the filesystem refuses O_DIRECT; set direct = false for this target"
        } else {
            ""
        };
        anyhow::Error::new(e).context(format!(
            "opening {} for {}{hint}",
            path.display(),
            test.name()
        ))
    })
}

/// Runs `test` on `cell` in the file at `path`; `buf` holds at least one record.
pub fn run_test(
    test: Test,
    cell: Cell,
    path: &Path,
    t: Timing,
    buf: &mut [u8],
    stop: &AtomicBool,
) -> Result<CellResult> {
    let file = open(test, path, t.direct)?;
    let buf = &mut buf[..cell.record as usize];
    let order = if test.random() {
        shuffled(cell.records(), t.seed)
    } else {
        Vec::new()
    };
    let t0 = Instant::now();
    let (file, mut r) = if test.buffered() {
        streamed(test, cell, file, buf, stop, path)?
    } else {
        let r = positional(test, cell, &file, &order, buf, stop, path)?;
        (file, r)
    };
    if t.include_flush && test.writes() {
        file.sync_all()
            .with_context(|| format!("fsync of {}", path.display()))?;
    }
    if t.include_close {
        drop(file);
        r.elapsed_s = t0.elapsed().as_secs_f64();
    } else {
        r.elapsed_s = t0.elapsed().as_secs_f64();
        drop(file);
    }
    Ok(r)
}

/// pread/pwrite, one per record, in the test's order (`order` for the
/// random tests, shuffled before the timing).
fn positional(
    test: Test,
    cell: Cell,
    file: &File,
    order: &[u32],
    buf: &mut [u8],
    stop: &AtomicBool,
    path: &Path,
) -> Result<CellResult> {
    let n = cell.records();
    let mut r = CellResult::default();
    for i in 0..n {
        if stop.load(Ordering::Relaxed) {
            break;
        }
        let idx = match order.get(i as usize) {
            Some(&o) => o as u64,
            None => test.record_index(i, n),
        };
        let off = idx * cell.record;
        let ts = Instant::now();
        if test.writes() {
            stamp(buf, test, idx);
            file.write_all_at(buf, off)
        } else {
            file.read_exact_at(buf, off)
        }
        .with_context(|| format!("{} of {} at offset {off}", test.name(), path.display()))?;
        r.lat_sum_ns += ts.elapsed().as_nanos() as u64;
        r.ops += 1;
        r.bytes += cell.record;
    }
    Ok(r)
}

/// fwrite/fread: sequential records through a stdio-sized stream buffer.
fn streamed(
    test: Test,
    cell: Cell,
    file: File,
    buf: &mut [u8],
    stop: &AtomicBool,
    path: &Path,
) -> Result<(File, CellResult)> {
    let n = cell.records();
    let mut r = CellResult::default();
    let ctx = || format!("{} of {}", test.name(), path.display());
    if test.writes() {
        let mut w = BufWriter::with_capacity(STREAM_BUF, file);
        for i in 0..n {
            if stop.load(Ordering::Relaxed) {
                break;
            }
            let ts = Instant::now();
            stamp(buf, test, i);
            w.write_all(buf).with_context(ctx)?;
            r.lat_sum_ns += ts.elapsed().as_nanos() as u64;
            r.ops += 1;
            r.bytes += cell.record;
        }
        let file = w
            .into_inner()
            .map_err(|e| e.into_error())
            .with_context(ctx)?;
        return Ok((file, r));
    }
    let mut rd = BufReader::with_capacity(STREAM_BUF, file);
    for _ in 0..n {
        if stop.load(Ordering::Relaxed) {
            break;
        }
        let ts = Instant::now();
        rd.read_exact(buf).with_context(ctx)?;
        r.lat_sum_ns += ts.elapsed().as_nanos() as u64;
        r.ops += 1;
        r.bytes += cell.record;
    }
    Ok((rd.into_inner(), r))
}

/// Marks a record with the writing test and its index (16 bytes), so that
/// the file's contents show which test last wrote each record.
#[inline]
pub fn stamp(buf: &mut [u8], test: Test, idx: u64) {
    if buf.len() >= 16 {
        buf[..8].copy_from_slice(&test.tag().to_le_bytes());
        buf[8..16].copy_from_slice(&idx.to_le_bytes());
    }
}

/// Reads the stamp of record `idx` from a file written by the matrix.
pub fn read_stamp(file: &File, record: u64, idx: u64) -> Result<(u64, u64)> {
    let mut b = [0u8; 16];
    file.read_exact_at(&mut b, idx * record)?;
    let tag = u64::from_le_bytes(b[..8].try_into()?);
    let i = u64::from_le_bytes(b[8..].try_into()?);
    if tag >> 8 != Test::Write.tag() >> 8 {
        bail!("record {idx} carries no matrix stamp");
    }
    Ok((tag, i))
}
