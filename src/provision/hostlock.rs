//! Host-wide locks between storlab processes, whatever their state
//! directories: files in /run/lock (or the temporary directory) locked
//! with flock. A campaign claims a shared daemon with one, and holds its
//! working directory on a target with another — outside the target, since
//! an open file inside would keep the target from being unmounted between
//! runs. The kernel drops a flock when its process ends, however it ends.

use std::fs::File;
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

/// The lock file `storlab-<name>.lock` in the host's lock directory.
pub fn path(name: &str) -> PathBuf {
    let dir = Path::new("/run/lock");
    let dir = if dir.is_dir() {
        dir.to_path_buf()
    } else {
        std::env::temp_dir()
    };
    dir.join(format!("storlab-{name}.lock"))
}

/// Opens (creating) the lock file `name`.
pub fn open(name: &str) -> Result<File> {
    let path = path(name);
    std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .read(true)
        .write(true)
        .open(&path)
        .with_context(|| format!("opening the lock file {}", path.display()))
}

/// flock(2), retried when a signal interrupts a waiting call.
pub fn flock(f: &File, op: libc::c_int) -> std::io::Result<()> {
    loop {
        // SAFETY: flock on a descriptor this File owns.
        if unsafe { libc::flock(f.as_raw_fd(), op) } == 0 {
            return Ok(());
        }
        let e = std::io::Error::last_os_error();
        if e.kind() != std::io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
}

/// The lock `name` held exclusively, or `None` while another process
/// holds it.
pub fn try_exclusive(name: &str) -> Result<Option<File>> {
    let f = open(name)?;
    match flock(&f, libc::LOCK_EX | libc::LOCK_NB) {
        Ok(()) => Ok(Some(f)),
        Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => Ok(None),
        Err(e) => Err(e).with_context(|| format!("locking {}", path(name).display())),
    }
}
