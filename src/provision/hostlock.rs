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
    open_at(&path(name))
}

/// Opens (creating) the lock file at `path`, wherever it is.
pub fn open_at(path: &Path) -> Result<File> {
    std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .read(true)
        .write(true)
        .open(path)
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
/// holds it. A lock file may be removed by its holder ([`remove`]): a lock
/// taken on a file that is no longer the one at the path is let go and
/// taken again on the new file.
pub fn try_exclusive(name: &str) -> Result<Option<File>> {
    loop {
        let f = open(name)?;
        match flock(&f, libc::LOCK_EX | libc::LOCK_NB) {
            Ok(()) if still_at_path(&f, name) => return Ok(Some(f)),
            Ok(()) => continue,
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => return Ok(None),
            Err(e) => return Err(e).with_context(|| format!("locking {}", path(name).display())),
        }
    }
}

/// Whether `f` is still the file at the lock's path.
fn still_at_path(f: &File, name: &str) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (f.metadata(), std::fs::metadata(path(name))) {
        (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
        _ => false,
    }
}

/// Removes the lock file `name` while `held` (its exclusive lock) is still
/// held, so that no other process can hold a lock on it meanwhile; a
/// process that opened it before sees that it is gone ([`try_exclusive`]).
pub fn remove(name: &str, held: File) {
    if still_at_path(&held, name) {
        let _ = std::fs::remove_file(path(name));
    }
    drop(held);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_removed_lock_file_is_never_held_twice() {
        let name = format!("test-{}", std::process::id());
        let held = try_exclusive(&name).unwrap().expect("free");
        // Opened before the removal, as a competing process would.
        let early = open(&name).unwrap();
        assert!(try_exclusive(&name).unwrap().is_none(), "held");
        remove(&name, held);
        assert!(!path(&name).exists());
        assert!(flock(&early, libc::LOCK_EX | libc::LOCK_NB).is_ok());
        assert!(!still_at_path(&early, &name), "the early file is stale");
        let again = try_exclusive(&name).unwrap().expect("a fresh file");
        remove(&name, again);
        assert!(!path(&name).exists());
    }
}
