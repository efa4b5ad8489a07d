//! Target `tmpfs`: a tmpfs storlab mounts on a fresh directory and unmounts
//! at teardown. Mounting needs root; without it the error suggests a `dir`
//! target on /dev/shm, which is a tmpfs on most systems.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{bail, Context, Result};

use super::Target;
use crate::experiment::params::{ParamSpec, ParamType, Params};

pub const PARAMS: &[ParamSpec] = &[
    ParamSpec {
        name: "size",
        ty: ParamType::Size,
        default: Some("1G"),
        help: "size limit of the tmpfs",
    },
    ParamSpec {
        name: "mount_options",
        ty: ParamType::List,
        default: None,
        help: "extra mount options, e.g. [\"noatime\", \"huge=always\"]",
    },
];

pub struct Tmpfs {
    name: String,
    size: u64,
    options: Vec<String>,
    mountpoint: PathBuf,
    mounted: bool,
}

impl Tmpfs {
    pub fn new(name: &str, p: &Params) -> Tmpfs {
        let safe: String = name
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
            .collect();
        let mountpoint =
            std::env::temp_dir().join(format!("storlab-tmpfs-{safe}-{}", std::process::id()));
        Tmpfs {
            name: name.to_string(),
            size: p.size("size").unwrap_or(1 << 30),
            options: p
                .list("mount_options")
                .map(<[String]>::to_vec)
                .unwrap_or_default(),
            mountpoint,
            mounted: false,
        }
    }

    fn option_string(&self) -> String {
        let mut opts = vec![format!("size={}", self.size)];
        opts.extend(self.options.iter().cloned());
        opts.join(",")
    }
}

pub fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

impl Target for Tmpfs {
    fn preflight(&self) -> Result<()> {
        if !is_root() {
            bail!(
                "target `{}`: mounting a tmpfs needs root; run storlab as root, or use a dir target on /dev/shm instead: kind = \"dir\", path = \"/dev/shm\"",
                self.name
            );
        }
        Ok(())
    }

    fn provision(&mut self) -> Result<()> {
        std::fs::create_dir_all(&self.mountpoint)
            .with_context(|| format!("creating mount point {}", self.mountpoint.display()))?;
        let out = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &self.option_string(), "storlab-tmpfs"])
            .arg(&self.mountpoint)
            .output()
            .context("running mount(8); is util-linux installed?")?;
        if !out.status.success() {
            let _ = std::fs::remove_dir(&self.mountpoint);
            bail!(
                "mounting tmpfs on {} with -o {} failed: {}",
                self.mountpoint.display(),
                self.option_string(),
                String::from_utf8_lossy(&out.stderr).trim()
            );
        }
        self.mounted = true;
        Ok(())
    }

    fn root(&self) -> &Path {
        &self.mountpoint
    }

    fn remount(&mut self) -> Result<()> {
        bail!("a tmpfs cannot be remounted without losing its files")
    }

    fn teardown(&mut self) -> Result<()> {
        if self.mounted {
            let out = Command::new("umount")
                .arg(&self.mountpoint)
                .output()
                .context("running umount(8)")?;
            if !out.status.success() {
                bail!(
                    "unmounting {} failed: {}; run `umount {}` by hand",
                    self.mountpoint.display(),
                    String::from_utf8_lossy(&out.stderr).trim(),
                    self.mountpoint.display()
                );
            }
            self.mounted = false;
        }
        if self.mountpoint.exists() {
            std::fs::remove_dir(&self.mountpoint)
                .with_context(|| format!("removing mount point {}", self.mountpoint.display()))?;
        }
        Ok(())
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = self.teardown();
    }
}
