//! Lays out job files before a run, untimed, as fio does: a read phase needs
//! a file of the full size with real data blocks behind it.
//!
//! The file is written anew before every run, never reused: where its blocks
//! land (on disk, or which pages a tmpfs gets) changes its speed by several
//! percent, and a file reused across repetitions would make every repetition
//! measure the same placement — two identical tmpfs targets then differ
//! "significantly" by ±6–10% in a direction that changes per campaign.
//! Fresh files make repetitions independent samples of the configuration.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::Path;

use anyhow::{Context, Result};

use super::buffer::fill_random;

const CHUNK: usize = 1 << 20;

/// Ensures `path` holds `size` bytes of written data; an existing file of the
/// right size that storlab laid out before is reused.
pub fn ensure_laid_out(path: &Path, size: u64, seed: u64) -> Result<()> {
    if let Ok(meta) = std::fs::metadata(path) {
        if meta.len() == size && allocated(&meta) >= size {
            return Ok(());
        }
    }
    write_file(path, size, seed)
        .with_context(|| format!("laying out {} ({size} bytes)", path.display()))
}

fn allocated(meta: &std::fs::Metadata) -> u64 {
    use std::os::unix::fs::MetadataExt;
    meta.blocks() * 512
}

fn write_file(path: &Path, size: u64, seed: u64) -> Result<()> {
    let mut f: File = OpenOptions::new()
        .create(true)
        .write(true)
        .truncate(true)
        .open(path)?;
    let mut chunk = vec![0u8; CHUNK];
    fill_random(&mut chunk, seed);
    let mut left = size;
    while left > 0 {
        let n = left.min(CHUNK as u64) as usize;
        f.write_all(&chunk[..n])?;
        left -= n as u64;
    }
    f.sync_all()?;
    Ok(())
}
