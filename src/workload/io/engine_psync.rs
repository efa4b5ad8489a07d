//! fio's psync engine: pread/pwrite on the job's file, one at a time.
//!
//! What a bare C loop of `pread` does not pay, the engine does not either:
//! - the calls are the system calls themselves (rustix's), not glibc's
//!   wrappers, which in a threaded process mark each call a cancellation
//!   point with two atomic operations (3% of a 4 KiB read from tmpfs);
//! - the job's thread has its own descriptor table ([`own_fd_table`]), as
//!   a single-threaded process (the loop, fio's forked jobs) has, so that
//!   the kernel looks the file up without taking and dropping a reference
//!   at each call (`fdget` in a shared table);
//! - the descriptor is kept as a number, borrowed at each call without a
//!   call into std (`File::as_fd` was not inlined).

use std::fs::File;
use std::os::fd::{AsRawFd, BorrowedFd, RawFd};
use std::os::unix::fs::FileExt;
use std::path::Path;

use anyhow::{bail, Context, Result};

use super::engine::SyncEngine;

pub struct Psync<'a> {
    file: File,
    /// `file`'s descriptor.
    fd: RawFd,
    path: &'a Path,
}

impl<'a> Psync<'a> {
    pub fn new(file: File, path: &'a Path) -> Psync<'a> {
        let fd = file.as_raw_fd();
        Psync { file, fd, path }
    }

    #[inline(always)]
    fn fd(&self) -> BorrowedFd<'_> {
        // SAFETY: `fd` is `file`'s, open for as long as `self` holds it.
        unsafe { BorrowedFd::borrow_raw(self.fd) }
    }
}

impl SyncEngine for Psync<'_> {
    #[inline]
    fn read(&mut self, buf: &mut [u8], off: u64) -> Result<()> {
        match rustix::io::pread(self.fd(), &mut *buf, off) {
            Ok(n) if n == buf.len() => Ok(()),
            Ok(n) => bail!(
                "short read of {n} bytes at offset {off} in {}: the file is shorter than `size`",
                self.path.display()
            ),
            Err(e) => Err(std::io::Error::from(e))
                .with_context(|| format!("reading {} at offset {off}", self.path.display())),
        }
    }

    #[inline]
    fn write(&mut self, buf: &[u8], off: u64) -> Result<()> {
        match rustix::io::pwrite(self.fd(), buf, off) {
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
            Err(e) => Err(std::io::Error::from(e))
                .with_context(|| format!("writing {} at offset {off}", self.path.display())),
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

/// Gives the calling thread a descriptor table of its own holding only
/// the standard streams (`close_range(3, ~0, CLOSE_RANGE_UNSHARE)`), so
/// that the files it opens afterwards are looked up without reference
/// counting. Call it on a job's thread before the job opens its file:
/// that file is then in the thread's table only, and closed with it. No
/// other descriptor of the process is copied (a copy would keep a pipe
/// another thread closes open for as long as the job runs), so the thread
/// must use no descriptor it did not open after this call but 0, 1 and 2.
/// If the kernel refuses (before Linux 5.9), the table stays shared: only
/// each call's cost differs.
pub fn own_fd_table() {
    // SAFETY: close_range with CLOSE_RANGE_UNSHARE closes descriptors in
    // the calling thread's new, private table only; the job's thread holds
    // no descriptor of 3 or above at this point (it opens its file after).
    let _ = unsafe { libc::close_range(3, u32::MAX, libc::CLOSE_RANGE_UNSHARE as i32) };
}
