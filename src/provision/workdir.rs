//! storlab's own working directory on a target: `storlab-work-<target>`
//! below the target's root (named per target, so that two targets may share
//! a directory). It belongs to one live campaign ([`super::ownership`]);
//! one left by a campaign that is gone is removed first. The directory is
//! journaled before it is created, so that `storlab cleanup` removes what a
//! killed campaign left even if no campaign runs there again.

use std::fs::File;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};

use super::journal::{Journal, Resource, Undone};
use super::naming::WORKDIR_PREFIX;
use super::owner::Owner;
use super::ownership::{mark, release, remove_marked, take_over, try_lock};

pub const PREFIX: &str = WORKDIR_PREFIX;

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
        mark(&wd.path, owner)?;
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
            Undone::Gone => {
                if !self.path.exists() {
                    release(&self.path, self._lock);
                }
                self.journal.release(self.id)
            }
            Undone::Kept(why) => {
                self.journal.keep(self.id);
                bail!("{why}")
            }
        }
    }
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
    use crate::provision::ownership::{remove_owned, Marker, MARKER};

    fn journal(dir: &Path) -> Journal {
        Journal::at(
            dir.join("campaign-test.journal"),
            crate::provision::resource::Kinds::NONE,
        )
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
