//! The resources storlab provisions, as written in the journal, and how to
//! undo each one. Every undo is idempotent (undoing what is already gone
//! succeeds), touches only the named resource, and refuses anything outside
//! storlab's naming scheme ([`super::naming`]): a journal line naming
//! `/home` removes nothing.

use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use serde::{Deserialize, Serialize};

use super::naming::{check_ours, is_resource_name, WORKDIR_PREFIX};
use super::owner::Owner;
use super::undo::remove_dir;
pub use super::undo::Undone;
use super::{daemon, gluster_cli, loopdev, mount, ownership, zfs_cli};

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Resource {
    /// A directory storlab created (mount point, brick, image directory,
    /// socket directory); removed with its contents, never across a mount.
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
    /// A campaign's working directory on a target, removed only while its
    /// marker still names `owner` (another campaign may own that path now).
    Workdir { path: PathBuf, owner: Owner },
}

/// The daemons storlab may start.
const DAEMONS: &[&str] = &["glusterd", "zfs-fuse"];

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
            Resource::Workdir { path, .. } => format!("working directory {}", path.display()),
        }
    }

    /// Fails unless the resource lies inside storlab's naming scheme; the
    /// journal refuses to record, and cleanup to undo, anything else.
    pub fn check_ours(&self) -> Result<()> {
        match self {
            Resource::Dir { path }
            | Resource::File { path }
            | Resource::Loop { image: path }
            | Resource::Mount { path } => check_ours(path),
            Resource::Workdir { path, .. } => {
                check_ours(path)?;
                let last = path.file_name().map(|n| n.to_string_lossy().into_owned());
                if !last.is_some_and(|n| n.starts_with(WORKDIR_PREFIX)) {
                    bail!("{} is not a storlab working directory", path.display());
                }
                Ok(())
            }
            Resource::Pool { name } if is_resource_name(name, '_') => Ok(()),
            Resource::Volume { name } if is_resource_name(name, '-') => Ok(()),
            Resource::Pool { name } | Resource::Volume { name } => {
                bail!("`{name}` is not a name storlab gives (storlab-<pid>-<target>); storlab does not touch it")
            }
            Resource::Daemon { program, pidfile } => check_pidfile(program, pidfile),
        }
    }

    /// Undoes the resource; succeeds when it is already gone.
    pub fn undo(&self) -> Result<Undone> {
        self.check_ours()
            .with_context(|| format!("refusing to undo {}", self.describe()))?;
        let gone = |r: Result<()>| r.map(|()| Undone::Gone);
        match self {
            Resource::Dir { path } => gone(remove_dir(path)),
            Resource::File { path } => match std::fs::remove_file(path) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                    Err(e).with_context(|| format!("removing {}", path.display()))
                }
                _ => Ok(Undone::Gone),
            },
            Resource::Loop { image } => gone(loopdev::detach_all(image)),
            Resource::Mount { path } => gone(mount::umount_if_mounted(path)),
            Resource::Pool { name } => gone(zfs_cli::destroy_pool(name)),
            Resource::Volume { name } => gone(gluster_cli::delete_volume(name)),
            Resource::Daemon { program, pidfile } => daemon::stop(program, pidfile),
            Resource::Workdir { path, owner } => ownership::remove_owned(path, owner),
        }
    }
}

/// A daemon's pid file is `<program>-<pid>.pid`, for a daemon storlab starts.
fn check_pidfile(program: &str, pidfile: &Path) -> Result<()> {
    let name = pidfile
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let pid = name
        .strip_prefix(program)
        .and_then(|r| r.strip_prefix('-'))
        .and_then(|r| r.strip_suffix(".pid"));
    let digits = pid.is_some_and(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()));
    if !DAEMONS.contains(&program) || !digits || !pidfile.is_absolute() {
        bail!(
            "{program} with pid file {} is not a daemon storlab starts; storlab does not touch it",
            pidfile.display()
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn undoing_what_is_gone_succeeds() {
        let dir = tempfile::Builder::new()
            .prefix("storlab-work-t")
            .tempdir()
            .unwrap();
        let p = dir.path().join("img");
        std::fs::write(&p, b"x").unwrap();
        for r in [
            Resource::File { path: p.clone() },
            Resource::File { path: p.clone() },
            Resource::Dir { path: p.clone() },
            Resource::Mount { path: p },
        ] {
            assert_eq!(r.undo().unwrap(), Undone::Gone);
        }
    }

    #[test]
    fn nothing_outside_the_naming_scheme_is_undone() {
        let victim = tempfile::Builder::new().prefix("victim").tempdir().unwrap();
        let file = victim.path().join("precious");
        std::fs::write(&file, b"data").unwrap();
        for r in [
            Resource::Dir {
                path: victim.path().to_path_buf(),
            },
            Resource::File { path: file.clone() },
            Resource::Mount {
                path: "/home".into(),
            },
            Resource::Pool {
                name: "tank".into(),
            },
            Resource::Volume { name: "gv0".into() },
            Resource::Daemon {
                program: "sshd".into(),
                pidfile: "/run/sshd.pid".into(),
            },
            Resource::Daemon {
                program: "glusterd".into(),
                pidfile: file.clone(),
            },
            Resource::Workdir {
                path: victim.path().to_path_buf(),
                owner: Owner::me(),
            },
        ] {
            let e = r.undo().unwrap_err();
            assert!(format!("{e:#}").contains("does not touch"), "{e:#}");
        }
        assert!(file.exists(), "the victim's file is still there");
    }
}
