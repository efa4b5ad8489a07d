//! Lays out job files before a run, untimed, as fio does: a read phase needs
//! a file of the full size with real data blocks behind it.
//!
//! The file is written anew before every run, never reused: where its blocks
//! land (on disk, or which pages a tmpfs gets) changes its speed by several
//! percent, and a file reused across repetitions would make every repetition
//! measure the same placement — two identical tmpfs targets then differ
//! "significantly" by ±6–10% in a direction that changes per campaign.
//! Fresh files make repetitions independent samples of the configuration.
//!
//! The job's region is written with the job's own write data (`fill.rs`),
//! so that reads of a compressing or deduplicating target meet the data
//! the experiment asked for, and with `verify` every unit is stamped so
//! that reads can check it; the bytes before `offset` are random. On a raw
//! device (a `block` target) only the job's region is written.

use std::fs::{File, OpenOptions};
use std::io::{Seek, SeekFrom, Write};
use std::path::Path;

use anyhow::{Context, Result};

use super::fill::{fill_random, FillSpec, Filler};
use super::job::JobSpec;
use super::verify;

const CHUNK: usize = 1 << 20;

/// What a laid-out file holds past its start.
struct Content {
    /// Bytes before this are random (the job's `offset`), or left alone on
    /// a raw device.
    start: u64,
    /// A raw device: write the region only, never create or truncate.
    raw: bool,
    unit: usize,
    max_bs: usize,
    fill: FillSpec,
    verify: bool,
}

/// Ensures `path` holds `size` bytes of written data (unique random sectors,
/// as the io engine's default writes); an existing file of the right size
/// that storlab laid out before is reused.
pub fn ensure_laid_out(path: &Path, size: u64, seed: u64) -> Result<()> {
    let content = Content {
        start: 0,
        raw: false,
        unit: 4096,
        max_bs: 4096,
        fill: FillSpec::default(),
        verify: false,
    };
    ensure(path, size, &content, seed)
}

/// Ensures `path` holds the io job's data over its whole length; a file
/// laid out before is reused, except with `verify`, whose stamps a reused
/// file may lack.
pub fn lay_out_job(path: &Path, spec: &JobSpec, seed: u64) -> Result<()> {
    let content = Content {
        start: spec.offset,
        raw: spec.raw,
        unit: spec.unit(),
        max_bs: spec.max_bs(),
        fill: spec.fill,
        verify: spec.verify.is_some(),
    };
    ensure(path, spec.file_len(), &content, seed)
}

fn ensure(path: &Path, size: u64, content: &Content, seed: u64) -> Result<()> {
    if let Ok(meta) = std::fs::metadata(path) {
        if !content.raw && meta.len() == size && allocated(&meta) >= size && !content.verify {
            return Ok(());
        }
    }
    write_file(path, size, content, seed)
        .with_context(|| format!("laying out {} ({size} bytes)", path.display()))
}

fn allocated(meta: &std::fs::Metadata) -> u64 {
    use std::os::unix::fs::MetadataExt;
    meta.blocks() * 512
}

fn write_file(path: &Path, size: u64, c: &Content, seed: u64) -> Result<()> {
    let mut f: File = OpenOptions::new()
        .create(!c.raw)
        .write(true)
        .truncate(!c.raw)
        .open(path)?;
    // Whole units per chunk, so that stamps fall on the job's unit grid.
    let chunk_len = (CHUNK / c.unit).max(1) * c.unit;
    let mut chunk = vec![0u8; chunk_len.max(CHUNK)];
    fill_random(&mut chunk, seed);
    let mut left = if c.raw { 0 } else { c.start.min(size) };
    if c.raw {
        f.seek(SeekFrom::Start(c.start))?;
    }
    while left > 0 {
        let n = left.min(chunk.len() as u64) as usize;
        f.write_all(&chunk[..n])?;
        left -= n as u64;
    }
    let mut filler = Filler::new(c.fill, c.unit, seed);
    filler.initial(&mut chunk);
    let mut off = c.start;
    while off < size {
        let n = (size - off).min(chunk_len as u64) as usize;
        let b = &mut chunk[..n];
        for (i, piece) in b.chunks_mut(c.max_bs).enumerate() {
            filler.for_write(piece, off + (i * c.max_bs) as u64);
        }
        if c.verify {
            verify::stamp(b, off, c.unit);
        }
        f.write_all(b)?;
        off += n as u64;
    }
    f.sync_all()?;
    Ok(())
}
