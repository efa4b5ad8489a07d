//! storlab's own working directory on a target: `storlab-work-<target>`
//! below the target's root (named per target, so that two targets may share
//! a directory). It belongs to one live campaign: its marker file names the
//! campaign process (host, pid and start time), and the campaign holds an
//! exclusive host-wide lock named after the directory's path for as long as
//! it runs (outside the target, which must stay unmountable). Another
//! campaign finding the directory leaves it alone while either says its
//! owner is alive (or the owner ran on another host), and removes it only
//! when its owner is gone (a killed campaign's leftovers). The directory is journaled before it is created, so that
//! `storlab cleanup` removes what a killed campaign left even if no
//! campaign runs there again.

use std::fs::File;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use serde::{Deserialize, Serialize};

use super::hostlock;
use super::journal::{Journal, Resource, Undone};
use super::naming::WORKDIR_PREFIX;
use super::owner::Owner;
use super::resource::remove_dir;

pub const PREFIX: &str = WORKDIR_PREFIX;
const MARKER: &str = ".storlab-workdir";

/// The working directory of a campaign on one target.
#[derive(Debug)]
pub struct Workdir {
    path: PathBuf,
    owner: Owner,
    journal: Journal,
    id: u64,
    /// The directory's host-wide lock, held while this campaign runs.
    _lock: File,
}

/// What a marker says: the owning campaign process and its host.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Marker {
    #[serde(flatten)]
    owner: Owner,
    host: String,
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
fn try_lock(dir: &Path) -> Result<Option<File>> {
    hostlock::try_exclusive(&lock_name(dir))
}

impl Workdir {
    /// Creates `<root>/storlab-work-<target>` for this campaign, first
    /// removing one that a campaign no longer running left. A directory
    /// that a running campaign owns, or that storlab did not make, is
    /// refused.
    pub fn create(root: &Path, target: &str, journal: &Journal) -> Result<Workdir> {
        let root =
            std::path::absolute(root).with_context(|| format!("resolving {}", root.display()))?;
        let path = root.join(format!("{PREFIX}{}", safe_name(target)));
        let lock = try_lock(&path)?;
        if path.exists() {
            take_over(&path, lock.is_some())?;
        }
        let Some(lock) = lock else {
            bail!(
                "{} is being set up by another campaign right now; wait for it, or give this target another name or path",
                path.display()
            );
        };
        let owner = Owner::me();
        let id = journal.acquire(&Resource::Workdir {
            path: path.clone(),
            owner,
        })?;
        if let Err(e) = std::fs::create_dir(&path) {
            // Not ours: nothing may undo it.
            journal.release(id)?;
            return Err(e).with_context(|| {
                format!(
                    "creating working directory {} (another campaign may have just created it)",
                    path.display()
                )
            });
        }
        let wd = Workdir {
            path,
            owner,
            journal: journal.clone(),
            id,
            _lock: lock,
        };
        let marker = wd.path.join(MARKER);
        let text = serde_json::to_string(&Marker {
            owner,
            host: crate::host::hostname(),
        })?;
        std::fs::write(&marker, format!("{text}\n"))
            .with_context(|| format!("writing marker {}", marker.display()))?;
        Ok(wd)
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// A subdirectory for one workload, created on first use.
    pub fn for_workload(&self, workload: &str) -> Result<PathBuf> {
        let dir = self.path.join(safe_name(workload));
        std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
        Ok(dir)
    }

    /// Removes the directory (unless another campaign owns it by now) and
    /// releases it from the journal.
    pub fn remove(self) -> Result<()> {
        // Still holding the lock: nobody takes the directory over meanwhile.
        match remove_marked(&self.path, &self.owner)? {
            Undone::Gone => self.journal.release(self.id),
            Undone::Kept(why) => {
                self.journal.keep(self.id);
                bail!("{why}")
            }
        }
    }
}

/// Removes a working directory a campaign no longer running left, or
/// refuses one in use or not made by storlab. `locked`: this process holds
/// the directory's lock (no campaign on this host does).
fn take_over(path: &Path, locked: bool) -> Result<()> {
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
    let Some(_lock) = try_lock(path)? else {
        return Ok(Undone::Kept(format!(
            "{} is locked by a running campaign; it is left alone",
            path.display()
        )));
    };
    remove_marked(path, owner)
}

/// Removes `path` if its marker names `owner` (see [`remove_owned`]).
fn remove_marked(path: &Path, owner: &Owner) -> Result<Undone> {
    if !path.exists() {
        return Ok(Undone::Gone);
    }
    match read_marker(path) {
        Some(Marked::Owner(o, host)) if o == *owner && host == crate::host::hostname() => {}
        Some(_) => return Ok(Undone::Gone),
        None => {
            return match std::fs::remove_dir(path) {
                Ok(()) => Ok(Undone::Gone),
                Err(_) => Ok(Undone::Kept(format!(
                    "{} has no storlab marker but is not empty; look at it and remove it by hand",
                    path.display()
                ))),
            }
        }
    }
    remove_dir(path)?;
    Ok(Undone::Gone)
}

/// A name reduced to characters safe in a path component.
pub fn safe_name(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn journal(dir: &Path) -> Journal {
        Journal::at(dir.join("campaign-test.journal"))
    }

    #[test]
    fn recreates_a_dead_campaigns_but_refuses_foreign_and_live_ones() {
        let root = tempfile::tempdir().unwrap();
        let state = tempfile::tempdir().unwrap();
        let j = journal(state.path());
        let w = Workdir::create(root.path(), "t", &j).unwrap();
        std::fs::write(w.path().join("leftover"), b"x").unwrap();
        // A live owner (this process, which holds the lock): refused.
        let e = Workdir::create(root.path(), "t", &j).unwrap_err();
        assert!(format!("{e:#}").contains("still running"), "{e:#}");
        assert!(w.path().join("leftover").exists());
        // A dead owner: taken over.
        let path = w.path().to_path_buf();
        drop(w);
        let dead = Owner {
            pid: std::process::id(),
            start: Owner::me().start + 1,
        };
        let marker = Marker {
            owner: dead,
            host: crate::host::hostname(),
        };
        std::fs::write(path.join(MARKER), serde_json::to_string(&marker).unwrap()).unwrap();
        let w = Workdir::create(root.path(), "t", &j).unwrap();
        assert!(!w.path().join("leftover").exists());
        w.remove().unwrap();
        assert!(!path.exists());
        std::fs::create_dir(root.path().join("storlab-work-t")).unwrap();
        assert!(Workdir::create(root.path(), "t", &j).is_err());
        assert!(root.path().join("storlab-work-t").exists());
    }

    #[test]
    fn a_pid_alone_that_runs_storlab_no_more_is_dead() {
        let root = tempfile::tempdir().unwrap();
        let path = root.path().join("storlab-work-t");
        std::fs::create_dir(&path).unwrap();
        // This test binary is not `storlab`: an old-style marker naming it is stale.
        std::fs::write(path.join(MARKER), format!("pid {}\n", std::process::id())).unwrap();
        let state = tempfile::tempdir().unwrap();
        let w = Workdir::create(root.path(), "t", &journal(state.path())).unwrap();
        w.remove().unwrap();
    }

    #[test]
    fn cleanup_leaves_a_directory_another_campaign_owns_now() {
        let root = tempfile::tempdir().unwrap();
        let state = tempfile::tempdir().unwrap();
        let w = Workdir::create(root.path(), "t", &journal(state.path())).unwrap();
        let earlier = Owner { pid: 1, start: 1 };
        // Locked by its running owner: left alone.
        assert!(matches!(
            remove_owned(w.path(), &earlier).unwrap(),
            Undone::Kept(_)
        ));
        // Its marker names another owner: not that owner's to remove.
        assert_eq!(remove_marked(w.path(), &earlier).unwrap(), Undone::Gone);
        assert!(w.path().exists(), "not removed: it is not that owner's");
        w.remove().unwrap();
    }
}
