//! fio's `invalidate`: a job's region of its file is dropped from the page
//! cache when the job opens it and, in a time-based run, each time the job
//! wraps over it (fio's `loop_cache_invalidate`), so that a buffered read
//! meets the device on every pass rather than the pages the pass before
//! left in memory. Dirty pages stay (the kernel drops only clean ones), as
//! with fio.

use std::fs::File;
use std::os::fd::AsRawFd;
use std::path::Path;

use anyhow::{anyhow, Result};

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
