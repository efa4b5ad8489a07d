//! Who owns a campaign's working directory on a target. Its marker file
//! names the owning campaign process (host, pid and start time), and the
//! owner holds an exclusive host-wide lock named after the directory's
//! path for as long as it runs — outside the target, which must stay
//! unmountable. Another campaign leaves the directory alone while either
//! says its owner is alive (or the owner ran on another host, where storlab
//! cannot tell), and removes it only when its owner is gone.

use std::fs::File;
use std::path::Path;

use anyhow::{bail, Context, Result};
use serde::{Deserialize, Serialize};

use super::hostlock;
use super::owner::Owner;
use super::undo::{remove_dir, Undone};

/// The marker file in a working directory.
pub const MARKER: &str = ".storlab-workdir";

/// What a marker says: the owning campaign process and its host.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Marker {
    #[serde(flatten)]
    pub owner: Owner,
    pub host: String,
}

/// Who owns a working directory, as its marker says.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Marked {
    /// A marker of this storlab: the owner's host, pid and start time.
    Owner(Owner, String),
    /// A marker of an older storlab: only a pid.
    Pid(u32),
}

impl Marked {
    /// Alive, or on another host (where storlab cannot tell: cautious).
    fn may_be_alive(&self) -> bool {
        match self {
            Marked::Owner(o, host) => *host != crate::host::hostname() || o.is_alive(),
            Marked::Pid(pid) => super::daemon::alive_as(*pid, "storlab"),
        }
    }

    fn describe(&self) -> String {
        match self {
            Marked::Owner(o, host) => format!("pid {} on {host}", o.pid),
            Marked::Pid(p) => format!("pid {p}"),
        }
    }
}

fn read_marker(dir: &Path) -> Option<Marked> {
    let text = std::fs::read_to_string(dir.join(MARKER)).ok()?;
    if let Ok(m) = serde_json::from_str::<Marker>(text.trim()) {
        return Some(Marked::Owner(m.owner, m.host));
    }
    let pid = text.trim().strip_prefix("pid ")?.trim().parse().ok()?;
    Some(Marked::Pid(pid))
}

/// The host-wide lock of the working directory at `path` (FNV-1a of the
/// path, the same in every storlab build).
fn lock_name(path: &Path) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in path.as_os_str().as_encoded_bytes() {
        h = (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3);
    }
    format!("work-{h:016x}")
}

/// The lock of `dir` held exclusively: `Ok(None)` when another process
/// holds it.
pub fn try_lock(dir: &Path) -> Result<Option<File>> {
    hostlock::try_exclusive(&lock_name(dir))
}

/// Removes a working directory a campaign no longer running left, or
/// refuses one in use or not made by storlab. `locked`: this process holds
/// the directory's lock (no campaign on this host does).
pub fn take_over(path: &Path, locked: bool) -> Result<()> {
    let Some(marked) = read_marker(path) else {
        bail!(
            "{} exists but was not made by storlab; move it away or choose another target path",
            path.display()
        );
    };
    if !locked || marked.may_be_alive() {
        bail!(
            "{} belongs to a campaign that is still running ({}), or ran on another host; wait for it to end, or give this target another name or path (a directory a campaign on another host left must be removed by hand)",
            path.display(),
            marked.describe()
        );
    }
    remove_dir(path).with_context(|| {
        format!(
            "removing {} left by a campaign that is gone ({})",
            path.display(),
            marked.describe()
        )
    })
}

/// Undoes a journaled working directory: removes it while its marker still
/// names `owner`. One that another campaign owns by now is not ours to
/// remove (ours is gone); one without a marker is removed only if empty.
pub fn remove_owned(path: &Path, owner: &Owner) -> Result<Undone> {
    let Some(lock) = try_lock(path)? else {
        return Ok(Undone::Kept(format!(
            "{} is locked by a running campaign; it is left alone",
            path.display()
        )));
    };
    let undone = remove_marked(path, owner)?;
    if undone == Undone::Gone && !path.exists() {
        release(path, lock);
    }
    Ok(undone)
}

/// Lets go of the lock of `dir`, which is gone, and removes its lock file.
pub fn release(dir: &Path, held: File) {
    hostlock::remove(&lock_name(dir), held);
}

/// Removes `path` if its marker names `owner` (see [`remove_owned`]).
pub fn remove_marked(path: &Path, owner: &Owner) -> Result<Undone> {
    if !path.exists() {
        return Ok(Undone::Gone);
    }
    match read_marker(path) {
        Some(Marked::Owner(o, host)) if o == *owner && host == crate::host::hostname() => {}
        Some(_) => return Ok(Undone::Gone),
        None => {
            return match std::fs::remove_dir(path) {
                Ok(()) => Ok(Undone::Gone),
                Err(e) => Ok(Undone::Kept(match unreadable(path, e) {
                    None => format!(
                    "{} has no storlab marker but is not empty; look at it and remove it by hand",
                    path.display()
                ),
                    Some(e) => format!(
                        "{} cannot be read ({e}): the filesystem under it may have failed",
                        path.display()
                    ),
                })),
            }
        }
    }
    remove_dir(path)?;
    Ok(Undone::Gone)
}

/// Why `dir`, which could not be removed (`e`), cannot be read, if it
/// cannot: its marker unreadable, or an error other than "not empty" (a
/// filesystem whose daemon died answers EIO); `None` when it is only not
/// empty.
fn unreadable(dir: &Path, e: std::io::Error) -> Option<std::io::Error> {
    let marker = std::fs::read(dir.join(MARKER))
        .err()
        .filter(|m| m.kind() != std::io::ErrorKind::NotFound);
    marker.or((e.raw_os_error() != Some(libc::ENOTEMPTY)).then_some(e))
}

/// Writes the marker naming this process as the owner of `dir`.
pub fn mark(dir: &Path, owner: Owner) -> Result<()> {
    let marker = dir.join(MARKER);
    let text = serde_json::to_string(&Marker {
        owner,
        host: crate::host::hostname(),
    })?;
    std::fs::write(&marker, format!("{text}\n"))
        .with_context(|| format!("writing marker {}", marker.display()))
}
