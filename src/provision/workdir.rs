//! storlab's own working directory on a target: `storlab-work-<target>`
//! below the target's root (named per target, so that two targets may share a
//! directory), marked as ours so that a later campaign may remove what a
//! killed one left, and nothing else.

use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};

pub const PREFIX: &str = "storlab-work-";
const MARKER: &str = ".storlab-workdir";

/// The working directory of a campaign on one target.
#[derive(Debug)]
pub struct Workdir {
    path: PathBuf,
}

impl Workdir {
    /// Creates `<root>/storlab-work-<target>`, first removing one that an
    /// earlier, killed campaign left (recognised by its marker file).
    pub fn create(root: &Path, target: &str) -> Result<Workdir> {
        let path = root.join(format!("{PREFIX}{}", safe_name(target)));
        if path.exists() {
            if !path.join(MARKER).exists() {
                bail!(
                    "{} exists but was not made by storlab; move it away or choose another target path",
                    path.display()
                );
            }
            std::fs::remove_dir_all(&path).with_context(|| {
                format!("removing {} left by an earlier campaign", path.display())
            })?;
        }
        std::fs::create_dir(&path)
            .with_context(|| format!("creating working directory {}", path.display()))?;
        std::fs::write(path.join(MARKER), format!("pid {}\n", std::process::id()))
            .with_context(|| format!("writing marker in {}", path.display()))?;
        Ok(Workdir { path })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// A subdirectory for one workload, created on first use.
    pub fn for_workload(&self, workload: &str) -> Result<PathBuf> {
        let safe: String = workload
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        let dir = self.path.join(safe);
        std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
        Ok(dir)
    }

    pub fn remove(self) -> Result<()> {
        std::fs::remove_dir_all(&self.path)
            .with_context(|| format!("removing {}", self.path.display()))
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

    #[test]
    fn recreates_its_own_but_refuses_foreign() {
        let root = tempfile::tempdir().unwrap();
        let w = Workdir::create(root.path(), "t").unwrap();
        std::fs::write(w.path().join("leftover"), b"x").unwrap();
        drop(w);
        let w = Workdir::create(root.path(), "t").unwrap();
        assert!(!w.path().join("leftover").exists());
        w.remove().unwrap();
        std::fs::create_dir(root.path().join("storlab-work-t")).unwrap();
        assert!(Workdir::create(root.path(), "t").is_err());
    }
}
