//! The resources storlab provisions, as written in the journal, and how to
//! undo each one. Every undo is idempotent (undoing what is already gone
//! succeeds) and touches only the named resource.

use std::path::PathBuf;

use anyhow::{bail, Context, Result};
use serde::{Deserialize, Serialize};

use super::{daemon, gluster_cli, loopdev, mount, zfs_cli};

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Resource {
    /// A directory storlab created (mount point, brick, image directory);
    /// removed with its contents, never across a mount.
    Dir { path: PathBuf },
    /// An image file storlab created.
    File { path: PathBuf },
    /// The loop devices backed by `image`.
    Loop { image: PathBuf },
    /// A mount storlab made on `path`.
    Mount { path: PathBuf },
    /// A ZFS pool storlab created.
    Pool { name: String },
    /// A Gluster volume storlab created.
    Volume { name: String },
    /// A daemon storlab started; its pid is in `pidfile`.
    Daemon { program: String, pidfile: PathBuf },
}

impl Resource {
    pub fn describe(&self) -> String {
        match self {
            Resource::Dir { path } => format!("directory {}", path.display()),
            Resource::File { path } => format!("image {}", path.display()),
            Resource::Loop { image } => format!("loop device of {}", image.display()),
            Resource::Mount { path } => format!("mount on {}", path.display()),
            Resource::Pool { name } => format!("ZFS pool {name}"),
            Resource::Volume { name } => format!("Gluster volume {name}"),
            Resource::Daemon { program, pidfile } => {
                format!("{program} daemon (pid file {})", pidfile.display())
            }
        }
    }

    /// Undoes the resource; succeeds when it is already gone.
    pub fn undo(&self) -> Result<()> {
        match self {
            Resource::Dir { path } => remove_dir(path),
            Resource::File { path } => match std::fs::remove_file(path) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                    Err(e).with_context(|| format!("removing {}", path.display()))
                }
                _ => Ok(()),
            },
            Resource::Loop { image } => loopdev::detach_all(image),
            Resource::Mount { path } => mount::umount_if_mounted(path),
            Resource::Pool { name } => zfs_cli::destroy_pool(name),
            Resource::Volume { name } => gluster_cli::delete_volume(name),
            Resource::Daemon { program, pidfile } => daemon::stop(program, pidfile),
        }
    }
}

fn remove_dir(path: &std::path::Path) -> Result<()> {
    if !path.exists() {
        return Ok(());
    }
    if let Some(m) = mount::mounts_under(path).first() {
        bail!(
            "not removing {}: {} is still mounted; unmount it first",
            path.display(),
            m
        );
    }
    std::fs::remove_dir_all(path).with_context(|| format!("removing {}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn undoing_what_is_gone_succeeds() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("img");
        std::fs::write(&p, b"x").unwrap();
        Resource::File { path: p.clone() }.undo().unwrap();
        Resource::File { path: p.clone() }.undo().unwrap();
        Resource::Dir { path: p.clone() }.undo().unwrap();
        Resource::Mount { path: p }.undo().unwrap();
    }
}
