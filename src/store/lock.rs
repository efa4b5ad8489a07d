//! Which campaigns of a store are running. The process running campaign N
//! holds a lock on byte N of `<store>.lock` for as long as it runs (an
//! open-file-description lock, fcntl `F_OFD_SETLK`: it belongs to the open
//! file, so nothing else in the process can drop it by closing another
//! descriptor, and the kernel drops it when the process ends, however it
//! ends). A campaign stored as `running` whose byte nobody locks has lost
//! its process — killed, crashed, or its machine rebooted — and is shown as
//! interrupted, ready for `storlab run --resume`. Resuming takes the same
//! lock, so a campaign never runs twice at once.

use std::fs::{File, OpenOptions};
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};

/// The lock file beside the store at `db`.
pub fn lock_path(db: &Path) -> PathBuf {
    let mut name = db.as_os_str().to_owned();
    name.push(".lock");
    PathBuf::from(name)
}

/// A held campaign lock, released when dropped (or when the process ends).
#[derive(Debug)]
pub struct CampaignLock {
    _file: File,
}

fn region(campaign: i64, kind: libc::c_int) -> libc::flock {
    // SAFETY: flock is plain data; zero is a valid value of every field.
    let mut fl: libc::flock = unsafe { std::mem::zeroed() };
    fl.l_type = kind as libc::c_short;
    fl.l_whence = libc::SEEK_SET as libc::c_short;
    fl.l_start = campaign as libc::off_t;
    fl.l_len = 1;
    fl
}

/// The store's lock file (beside it), opened for locking, made if missing.
fn open_lock_file(db: &Path) -> Result<std::fs::File> {
    let path = lock_path(db);
    OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(&path)
        .with_context(|| format!("opening the store's lock file {}", path.display()))
}

/// Locks campaign `campaign` of the store at `db` for this process: `None`
/// when another process holds it (the campaign is running there).
pub fn take(db: &Path, campaign: i64) -> Result<Option<CampaignLock>> {
    let file = open_lock_file(db)?;
    let mut fl = region(campaign, libc::F_WRLCK);
    // SAFETY: fcntl with a valid descriptor and a pointer to a live flock.
    if unsafe { libc::fcntl(file.as_raw_fd(), libc::F_OFD_SETLK, &mut fl) } == 0 {
        return Ok(Some(CampaignLock { _file: file }));
    }
    let e = std::io::Error::last_os_error();
    match e.raw_os_error() {
        Some(libc::EAGAIN) | Some(libc::EACCES) => Ok(None),
        _ => Err(e).with_context(|| {
            format!(
                "locking campaign {campaign} in {} (does its filesystem support file locks?)",
                lock_path(db).display()
            )
        }),
    }
}

/// Serializes the setting-up of a store (WAL mode, migrations) between
/// processes: byte 0 of the lock file, which no campaign uses, held while
/// the guard lives. `None` when no lock file can be made there (a store
/// that cannot be written is not set up anyway).
pub fn setup(db: &Path) -> Option<CampaignLock> {
    let file = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(lock_path(db))
        .ok()?;
    let mut fl = region(0, libc::F_WRLCK);
    loop {
        // SAFETY: as in `take`; F_OFD_SETLKW waits for the lock.
        if unsafe { libc::fcntl(file.as_raw_fd(), libc::F_OFD_SETLKW, &mut fl) } == 0 {
            return Some(CampaignLock { _file: file });
        }
        if std::io::Error::last_os_error().kind() != std::io::ErrorKind::Interrupted {
            return None;
        }
    }
}

/// Takes a lock on the first byte of `file` for as long as it is open,
/// without waiting: false when another open file holds it.
pub fn try_first_byte(file: &File) -> bool {
    let mut fl = region(0, libc::F_WRLCK);
    // SAFETY: as in `take`.
    unsafe { libc::fcntl(file.as_raw_fd(), libc::F_OFD_SETLK, &mut fl) == 0 }
}

/// The byte of the lock file that an import holds: far past any campaign id.
const IMPORT_BYTE: i64 = 1 << 62;

/// Serializes imports into the store at `db` between processes: waits
/// for an import running in another process to end (a second `storlab
/// import` waits its turn instead of failing with "database is locked").
pub fn importing(db: &Path) -> Result<CampaignLock> {
    let file = open_lock_file(db)?;
    let mut fl = region(IMPORT_BYTE, libc::F_WRLCK);
    loop {
        // SAFETY: as in `take`; F_OFD_SETLKW waits for the lock.
        if unsafe { libc::fcntl(file.as_raw_fd(), libc::F_OFD_SETLKW, &mut fl) } == 0 {
            return Ok(CampaignLock { _file: file });
        }
        let e = std::io::Error::last_os_error();
        if e.kind() != std::io::ErrorKind::Interrupted {
            return Err(e).with_context(|| {
                format!(
                    "waiting for another import into {} (does its filesystem support file locks?)",
                    db.display()
                )
            });
        }
    }
}

/// Whether some process holds the lock of `campaign` (this one included).
/// No lock file means no campaign of this store ever ran with a lock.
pub fn is_held(db: &Path, campaign: i64) -> bool {
    let Ok(file) = File::open(lock_path(db)) else {
        return false;
    };
    let mut fl = region(campaign, libc::F_WRLCK);
    // SAFETY: as in `take`; F_OFD_GETLK only fills `fl`.
    let rc = unsafe { libc::fcntl(file.as_raw_fd(), libc::F_OFD_GETLK, &mut fl) };
    rc == 0 && fl.l_type != libc::F_UNLCK as libc::c_short
}

/// Locks `campaign` or says that it is running elsewhere.
pub fn take_or_refuse(db: &Path, campaign: i64) -> Result<CampaignLock> {
    match take(db, campaign)? {
        Some(lock) => Ok(lock),
        None => bail!(
            "campaign {campaign} is still running in another storlab process; wait for it to end, or stop it (Ctrl-C, or kill -INT its pid) and then resume it"
        ),
    }
}

impl super::Store {
    /// Holds campaign `id` for this process (resuming it), or says that it
    /// is running elsewhere.
    pub fn lock_campaign(&mut self, id: i64) -> Result<()> {
        let lock = take_or_refuse(&self.path, id)?;
        self.locks.push(lock);
        Ok(())
    }

    /// Whether a process runs campaign `id` now (this one included).
    pub fn is_running(&self, id: i64) -> bool {
        is_held(&self.path, id)
    }

    /// The status to show: a campaign stored as running whose process is
    /// gone was interrupted (and can be resumed).
    pub(super) fn live_status(&self, id: i64, stored: String) -> String {
        if stored == "running" && !self.is_running(id) {
            "interrupted".into()
        } else {
            stored
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_held_campaign_cannot_be_taken_twice_and_is_free_once_dropped() {
        let d = tempfile::tempdir().unwrap();
        let db = d.path().join("s.db");
        assert!(!is_held(&db, 3), "no lock file yet");
        let lock = take(&db, 3).unwrap().expect("free");
        assert!(is_held(&db, 3));
        assert!(!is_held(&db, 4), "only its own byte");
        assert!(
            take(&db, 3).unwrap().is_none(),
            "taken, also from this process"
        );
        let other = take(&db, 4).unwrap().expect("another campaign is free");
        drop(lock);
        assert!(!is_held(&db, 3));
        assert!(take_or_refuse(&db, 3).is_ok());
        drop(other);
    }
}
