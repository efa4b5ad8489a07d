//! fio's psync engine: pread/pwrite on the job's file, one at a time.

use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::Path;

use anyhow::{bail, Context, Result};

use super::engine::SyncEngine;

pub struct Psync<'a> {
    file: File,
    path: &'a Path,
}

impl<'a> Psync<'a> {
    pub fn new(file: File, path: &'a Path) -> Psync<'a> {
        Psync { file, path }
    }
}

impl SyncEngine for Psync<'_> {
    #[inline]
    fn read(&mut self, buf: &mut [u8], off: u64) -> Result<()> {
        match self.file.read_at(buf, off) {
            Ok(n) if n == buf.len() => Ok(()),
            Ok(n) => bail!(
                "short read of {n} bytes at offset {off} in {}: the file is shorter than `size`",
                self.path.display()
            ),
            Err(e) => {
                Err(e).with_context(|| format!("reading {} at offset {off}", self.path.display()))
            }
        }
    }

    #[inline]
    fn write(&mut self, buf: &[u8], off: u64) -> Result<()> {
        match self.file.write_at(buf, off) {
            Ok(n) if n == buf.len() => Ok(()),
            // A short write (the filesystem filling up): writing the rest
            // says why it cannot go on — ENOSPC, EDQUOT, EFBIG.
            Ok(n) => self
                .file
                .write_all_at(&buf[n..], off + n as u64)
                .with_context(|| {
                    format!(
                        "writing {} at offset {} (after a short write of {n} bytes)",
                        self.path.display(),
                        off + n as u64
                    )
                }),
            Err(e) => {
                Err(e).with_context(|| format!("writing {} at offset {off}", self.path.display()))
            }
        }
    }

    fn invalidate(&mut self, off: u64, len: u64) -> Result<()> {
        super::cache::drop_cached(&self.file, off, len, self.path)
    }

    fn sync(&mut self) -> Result<()> {
        self.file
            .sync_all()
            .with_context(|| format!("fsync of {}", self.path.display()))
    }
}
