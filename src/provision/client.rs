//! A filesystem that clients on other hosts mount as this host did: under
//! MPI, rank 0 provisions a Gluster volume (or mounts an NFS export) and
//! the first rank on each other host mounts it too — the same source, the
//! same options, at the same path — so that every rank writes into the
//! one filesystem under test. Each host journals what it creates for its
//! mount in its own journal.

use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use serde::{Deserialize, Serialize};

use super::journal::{Held, Resource};
use super::mount;

/// How a client mounts a target, and where.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClientMount {
    /// mount(8)'s `-t`: `glusterfs`, `nfs`.
    pub fs_type: String,
    /// mount(8)'s source: `server:/volume`, `server:/export`.
    pub source: String,
    pub options: Vec<String>,
    /// The mount point: the same path on every host.
    pub path: PathBuf,
    /// The topmost directory storlab makes for it on a host: the mount
    /// point or a parent of it, whose own parent must exist.
    pub top: PathBuf,
    /// Hosts where the target itself made `top` (a Gluster server holding
    /// a brick there), whose teardown removes it.
    pub made_on: Vec<String>,
}

impl ClientMount {
    /// Mounts it on this host: makes the directories from `top` down that
    /// do not exist (each journaled first), journals the mount, mounts.
    pub fn mount_here(&self, held: &mut Held) -> Result<()> {
        let parent = self.top.parent().unwrap_or(Path::new("/"));
        if !parent.is_dir() {
            bail!(
                "{} does not exist on {}; create it there (the target's `dir` must exist on every host of the job)",
                parent.display(),
                crate::host::hostname()
            );
        }
        for dir in self.dirs() {
            if !dir.exists() {
                held.make_dir(&dir)?;
            }
        }
        held.record(Resource::Mount {
            path: self.path.clone(),
        })?;
        self.mount()
    }

    /// Mounts it again after an unmount (a remount between runs).
    pub fn mount(&self) -> Result<()> {
        mount::mount(&self.fs_type, &self.source, &self.path, &self.options)?;
        if mount::mounted_at(&self.path).is_none() {
            bail!(
                "{} is not mounted on {} after mount(8) succeeded",
                self.source,
                self.path.display()
            );
        }
        Ok(())
    }

    /// Unmounts and mounts it again.
    pub fn remount(&self) -> Result<()> {
        mount::umount_if_mounted(&self.path)?;
        self.mount()
            .with_context(|| format!("mounting {} again", self.source))
    }

    /// `top`, then each directory below it down to the mount point.
    fn dirs(&self) -> Vec<PathBuf> {
        let mut dirs: Vec<PathBuf> = self
            .path
            .ancestors()
            .take_while(|a| a.starts_with(&self.top))
            .map(Path::to_path_buf)
            .collect();
        dirs.reverse();
        dirs
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_directories_run_from_top_to_the_mount_point() {
        let m = ClientMount {
            fs_type: "glusterfs".into(),
            source: "s1:/storlab-1-gl".into(),
            options: vec![],
            path: "/var/tmp/storlab-1-gl/mnt".into(),
            top: "/var/tmp/storlab-1-gl".into(),
            made_on: vec![],
        };
        assert_eq!(
            m.dirs(),
            [
                PathBuf::from("/var/tmp/storlab-1-gl"),
                PathBuf::from("/var/tmp/storlab-1-gl/mnt")
            ]
        );
        let flat = ClientMount {
            top: m.path.clone(),
            ..m
        };
        assert_eq!(flat.dirs(), [PathBuf::from("/var/tmp/storlab-1-gl/mnt")]);
    }

    #[test]
    fn a_missing_parent_is_named() {
        let d = tempfile::tempdir().unwrap();
        let j = super::super::journal::Journal::at(
            d.path().join("c.journal"),
            super::super::resource::Kinds::NONE,
        );
        let mut held = Held::new(&j);
        let m = ClientMount {
            fs_type: "glusterfs".into(),
            source: "s1:/v".into(),
            options: vec![],
            path: d.path().join("nowhere/storlab-1-gl/mnt"),
            top: d.path().join("nowhere/storlab-1-gl"),
            made_on: vec![],
        };
        let e = m.mount_here(&mut held).unwrap_err();
        assert!(
            format!("{e:#}").contains("nowhere does not exist on"),
            "{e:#}"
        );
        assert!(!j.exists(), "nothing was journaled");
    }
}
