//! What a job tells the kernel about its file's pages. fio's
//! `fadvise_hint`: the access pattern, when the file is opened. fio's
//! `invalidate`: a job's region of its file is dropped from the page
//! cache when the job opens it and, in a time-based run, each time the job
//! wraps over it (fio's `loop_cache_invalidate`), so that a buffered read
//! meets the device on every pass rather than the pages the pass before
//! left in memory. Dirty pages stay (the kernel drops only clean ones), as
//! with fio.

use std::fs::File;
use std::os::fd::AsRawFd;
use std::path::Path;

use anyhow::{anyhow, Result};

use super::job::Advice;

/// Drops the clean cached pages of `len` bytes from `off` of `file`
/// (`posix_fadvise(POSIX_FADV_DONTNEED)`, as fio does for files; on a block
/// device the range of its own page cache).
pub fn drop_cached(file: &File, off: u64, len: u64, path: &Path) -> Result<()> {
    let (off, len) = (off as libc::off_t, len as libc::off_t);
    // SAFETY: a plain system call on an open descriptor; it reads no memory.
    let rc = unsafe { libc::posix_fadvise(file.as_raw_fd(), off, len, libc::POSIX_FADV_DONTNEED) };
    if rc != 0 {
        return Err(anyhow!(
            "dropping the cached pages of {} ({}); set invalidate = false to keep them",
            path.display(),
            std::io::Error::from_raw_os_error(rc)
        ));
    }
    Ok(())
}

/// Tells the kernel how `len` bytes from `off` of `file` will be read
/// (fio's `fadvise_hint`, applied as fio does when it opens a file):
/// `POSIX_FADV_RANDOM` turns the file's read-ahead off, so that a buffered
/// random read of 4k reads 4k from the device, not a read-ahead window.
pub fn advise(file: &File, off: u64, len: u64, advice: Advice, path: &Path) -> Result<()> {
    let flag = match advice {
        Advice::None => return Ok(()),
        Advice::Random => libc::POSIX_FADV_RANDOM,
        Advice::Sequential => libc::POSIX_FADV_SEQUENTIAL,
    };
    let (off, len) = (off as libc::off_t, len as libc::off_t);
    // SAFETY: a plain system call on an open descriptor; it reads no memory.
    let rc = unsafe { libc::posix_fadvise(file.as_raw_fd(), off, len, flag) };
    if rc != 0 {
        return Err(anyhow!(
            "advising the kernel of {}'s access pattern ({}); set fadvise_hint = \"0\" to say nothing",
            path.display(),
            std::io::Error::from_raw_os_error(rc)
        ));
    }
    Ok(())
}
