//! Is a target still the filesystem storlab provisioned? A mount can go
//! away behind storlab's back (`umount -l`, an automounter, another
//! administrator), and the target's path then resolves to whatever lies
//! underneath — the root disk, say — where runs would go on measuring the
//! wrong filesystem under the target's name. A target's identity is the
//! device its root lives on (stat's `st_dev`) and the id of the mount it
//! lives on (mountinfo's first field, new for every mount); each run
//! compares both with what they were after provisioning (or the last
//! remount).

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};

use super::mountinfo::mount_of;

/// What a target's root is, as far as telling it from another filesystem.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Identity {
    path: PathBuf,
    dev: u64,
    mount_id: Option<u32>,
    what: String,
}

impl Identity {
    /// The identity of the filesystem `path` lives on now.
    pub fn of(path: &Path) -> Result<Identity> {
        let meta = std::fs::metadata(path)
            .with_context(|| format!("the target's directory {} is gone", path.display()))?;
        let mount = mount_of(path);
        let what = match &mount {
            Some(m) => format!(
                "{} {} on {} (mount id {}, device {}:{})",
                m.fs_type, m.source, m.mount_point, m.mount_id, m.major, m.minor
            ),
            None => format!(
                "device {}:{}",
                libc::major(meta.dev()),
                libc::minor(meta.dev())
            ),
        };
        Ok(Identity {
            path: path.to_path_buf(),
            dev: meta.dev(),
            mount_id: mount.map(|m| m.mount_id),
            what,
        })
    }

    /// Fails, saying what changed, unless `path` still lives on the same
    /// filesystem, mounted by the same mount.
    pub fn check(&self) -> Result<()> {
        let now = Identity::of(&self.path)?;
        if now.dev != self.dev || now.mount_id != self.mount_id {
            bail!(
                "{} is no longer the filesystem storlab provisioned: it was {}, it is now {} (unmounted or remounted behind storlab's back)",
                self.path.display(),
                self.what,
                now.what
            );
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_directory_keeps_its_identity() {
        let d = tempfile::tempdir().unwrap();
        let id = Identity::of(d.path()).unwrap();
        id.check().unwrap();
        let gone = d.path().to_path_buf();
        drop(d);
        assert!(id.check().is_err());
        assert!(!gone.exists());
    }
}
