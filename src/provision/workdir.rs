//! storlab's own working directory on a target: `storlab-work-<target>`
//! below the target's root (named per target, so that two targets may share
//! a directory). It belongs to one live campaign: its marker file names the
//! campaign process (pid and start time), and the campaign holds an
//! exclusive lock on the marker for as long as it runs. Another campaign
//! finding the directory leaves it alone while either says its owner is
//! alive, and removes it only when its owner is gone (a killed campaign's
//! leftovers). The directory is journaled before it is created, so that
//! `storlab cleanup` removes what a killed campaign left even if no
//! campaign runs there again.

use std::fs::File;
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};

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
    /// The marker, locked exclusively while this campaign runs.
    lock: Option<File>,
}

/// Who owns a working directory, as its marker says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Marked {
    /// A marker of this storlab: the owner's pid and start time.
    Owner(Owner),
    /// A marker of an older storlab: only a pid.
    Pid(u32),
}

impl Marked {
    fn is_alive(self) -> bool {
        match self {
            Marked::Owner(o) => o.is_alive(),
            Marked::Pid(pid) => super::daemon::alive_as(pid, "storlab"),
        }
    }

    fn pid(self) -> u32 {
        match self {
            Marked::Owner(o) => o.pid,
            Marked::Pid(p) => p,
        }
    }
}

fn read_marker(dir: &Path) -> Option<Marked> {
    let text = std::fs::read_to_string(dir.join(MARKER)).ok()?;
    if let Ok(o) = serde_json::from_str::<Owner>(text.trim()) {
        return Some(Marked::Owner(o));
    }
    let pid = text.trim().strip_prefix("pid ")?.trim().parse().ok()?;
    Some(Marked::Pid(pid))
}

/// Tries to lock the marker of `dir` exclusively: `Ok(None)` when another
/// process holds it.
fn try_lock(dir: &Path) -> Result<Option<File>> {
    let path = dir.join(MARKER);
    let f = File::open(&path).with_context(|| format!("opening {}", path.display()))?;
    // SAFETY: flock on a descriptor this File owns.
    if unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } == 0 {
        return Ok(Some(f));
    }
    let e = std::io::Error::last_os_error();
    if e.kind() == std::io::ErrorKind::WouldBlock {
        return Ok(None);
    }
    Err(e).with_context(|| format!("locking {}", path.display()))
}

impl Workdir {
    /// Creates `<root>/storlab-work-<target>` for this campaign, first
    /// removing one that a campaign no longer running left. A directory
    /// that a running campaign owns, or that storlab did not make, is
    /// refused.
    pub fn create(root: &Path, target: &str, journal: &Journal) -> Result<Workdir> {
        let path = root.join(format!("{PREFIX}{}", safe_name(target)));
        if path.exists() {
            take_over(&path)?;
        }
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
        let mut wd = Workdir {
            path,
            owner,
            journal: journal.clone(),
            id,
            lock: None,
        };
        let marker = wd.path.join(MARKER);
        std::fs::write(&marker, format!("{}\n", serde_json::to_string(&owner)?))
            .with_context(|| format!("writing marker {}", marker.display()))?;
        wd.lock = Some(try_lock(&wd.path)?.with_context(|| {
            format!(
                "{} was locked by another process as it was created",
                marker.display()
            )
        })?);
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
    pub fn remove(mut self) -> Result<()> {
        self.lock = None; // our own lock must not look like another owner's
        match remove_owned(&self.path, &self.owner)? {
            Undone::Gone => self.journal.release(self.id),
            Undone::Kept(why) => {
                self.journal.keep(self.id);
                bail!("{why}")
            }
        }
    }
}

/// Removes a working directory a campaign no longer running left, or
/// refuses one in use or not made by storlab.
fn take_over(path: &Path) -> Result<()> {
    let Some(marked) = read_marker(path) else {
        bail!(
            "{} exists but was not made by storlab; move it away or choose another target path",
            path.display()
        );
    };
    let lock = try_lock(path)?;
    if lock.is_none() || marked.is_alive() {
        bail!(
            "{} belongs to a campaign that is still running (pid {}); wait for it to end, or give this target another name or path",
            path.display(),
            marked.pid()
        );
    }
    remove_dir(path).with_context(|| {
        format!(
            "removing {} left by a campaign that is gone (pid {})",
            path.display(),
            marked.pid()
        )
    })
}

/// Undoes a journaled working directory: removes it while its marker still
/// names `owner`. One that another campaign owns by now is not ours to
/// remove (ours is gone); one without a marker is removed only if empty.
pub fn remove_owned(path: &Path, owner: &Owner) -> Result<Undone> {
    if !path.exists() {
        return Ok(Undone::Gone);
    }
    match read_marker(path) {
        Some(Marked::Owner(o)) if o == *owner => {}
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
    if try_lock(path)?.is_none() {
        return Ok(Undone::Kept(format!(
            "{} is locked by a running campaign; it is left alone",
            path.display()
        )));
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
        std::fs::write(path.join(MARKER), serde_json::to_string(&dead).unwrap()).unwrap();
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
        assert_eq!(remove_owned(w.path(), &earlier).unwrap(), Undone::Gone);
        assert!(w.path().exists(), "not removed: it is not that owner's");
        w.remove().unwrap();
    }
}
