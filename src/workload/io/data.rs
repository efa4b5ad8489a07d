//! What happens to the bytes of each operation: write buffers are filled
//! (`fill.rs`) and, with `verify`, stamped; reads are checked. A job that
//! only writes checks what it wrote once it is done, untimed, as fio's
//! verify phase does.

use std::path::Path;

use anyhow::{bail, Result};

use super::fill::Filler;
use super::job::{JobSpec, Rw, VerifySpec};
use super::randmap::RandMap;
use super::verify::{self, Failures};

/// One job's data path: its write data, its checks and their failures.
pub struct Data<'a> {
    filler: Filler,
    unit: usize,
    verify: Option<VerifySpec>,
    failures: Failures,
    /// Units written, for the check of a write-only job.
    written: Option<RandMap>,
    start: u64,
    size: u64,
    path: &'a Path,
}

impl<'a> Data<'a> {
    pub fn new(spec: &JobSpec, path: &'a Path) -> Data<'a> {
        let unit = spec.unit();
        let check_after = spec.verify.is_some() && matches!(spec.rw, Rw::Write | Rw::RandWrite);
        Data {
            filler: Filler::new(spec.fill, unit, spec.seed),
            unit,
            verify: spec.verify,
            failures: Failures::default(),
            written: check_after.then(|| RandMap::new(spec.size / unit as u64)),
            start: spec.offset,
            size: spec.size,
            path,
        }
    }

    /// Contents of the job's buffers before the first write.
    pub fn initial(&mut self, buf: &mut [u8]) {
        self.filler.initial(buf);
    }

    /// Prepares the buffer of the write of `buf.len()` bytes at `off`.
    #[inline]
    pub fn before_write(&mut self, buf: &mut [u8], off: u64) {
        self.filler.for_write(buf, off);
        if self.verify.is_some() {
            verify::stamp(buf, off, self.unit);
            if let Some(w) = self.written.as_mut() {
                let first = (off - self.start) / self.unit as u64;
                for u in first..first + (buf.len() / self.unit) as u64 {
                    w.take(u);
                }
            }
        }
    }

    /// Checks the data a read brought back, with `verify`.
    #[inline(always)]
    pub fn after_read(&mut self, buf: &[u8], off: u64) -> Result<()> {
        match self.verify {
            None => Ok(()),
            Some(v) => self.check_read(v, buf, off),
        }
    }

    fn check_read(&mut self, v: VerifySpec, buf: &[u8], off: u64) -> Result<()> {
        if let Err(bad) = verify::check(buf, off, self.unit) {
            if v.fatal {
                self.failures.add(bad);
                return self.finish();
            }
            self.failures.add(bad);
        }
        Ok(())
    }

    /// The verify phase of a write-only job: reads back every unit it wrote
    /// with `read` (into `buf`, at least one unit long) and checks it.
    pub fn verify_written(
        &mut self,
        buf: &mut [u8],
        mut read: impl FnMut(&mut [u8], u64) -> Result<()>,
    ) -> Result<()> {
        let Some(written) = self.written.take() else {
            return Ok(());
        };
        let unit = self.unit as u64;
        let chunk = (buf.len() as u64 / unit).max(1);
        let units = self.size / unit;
        let mut u = 0;
        while u < units {
            let n = chunk.min(units - u);
            if (u..u + n).any(|x| written.is_taken(x)) {
                let b = &mut buf[..(n * unit) as usize];
                let off = self.start + u * unit;
                read(b, off)?;
                for (i, one) in b.chunks_exact(self.unit).enumerate() {
                    if written.is_taken(u + i as u64) {
                        let at = off + i as u64 * unit;
                        self.after_read(one, at)?;
                    }
                }
            }
            u += n;
        }
        Ok(())
    }

    /// Fails the job if any unit failed verification, naming the first.
    pub fn finish(&self) -> Result<()> {
        let Some((off, why)) = &self.failures.first else {
            return Ok(());
        };
        let more = match self.failures.count {
            1 => String::new(),
            n => format!(" ({} more units failed after it)", n - 1),
        };
        bail!(
            "verify: the block at offset {off} of {} failed crc32c verification: {why}{more}; the storage returned data other than what was written there",
            self.path.display()
        )
    }
}
