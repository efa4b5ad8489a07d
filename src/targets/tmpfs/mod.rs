//! Target `tmpfs`: a tmpfs storlab mounts on a fresh directory and unmounts
//! at teardown. Mounting needs root; without it the error suggests a `dir`
//! target on /dev/shm, which is a tmpfs on most systems.

use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};

use crate::params::declare;
use crate::provision::cmd;
use crate::provision::journal::{Held, Journal, Resource};
use crate::provision::options;
use crate::targets::{Target, TargetConfig};

declare! {
    /// The parameters of a `tmpfs` target.
    pub struct TmpfsParams {
        size: size = "1G" => "size limit of the tmpfs",
        mount_options: list => "extra mount options, e.g. [\"noatime\", \"huge=always\"]",
    }
}

impl TargetConfig for TmpfsParams {
    fn build(&self, name: &str, journal: &Journal) -> Box<dyn Target> {
        Box::new(Tmpfs::new(name, self, journal))
    }
    fn footprint(&self) -> super::Footprint {
        super::Footprint {
            memory: Some(self.size),
            ..Default::default()
        }
    }
}

pub struct Tmpfs {
    size: u64,
    options: Vec<String>,
    mountpoint: PathBuf,
    held: Held,
}

impl Tmpfs {
    pub fn new(name: &str, p: &TmpfsParams, journal: &Journal) -> Tmpfs {
        let safe: String = name
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
            .collect();
        let mountpoint =
            std::env::temp_dir().join(format!("storlab-tmpfs-{safe}-{}", std::process::id()));
        Tmpfs {
            size: p.size,
            options: p.mount_options.clone().unwrap_or_default(),
            mountpoint,
            held: Held::new(journal),
        }
    }

    fn option_string(&self) -> String {
        let mut opts = vec![format!("size={}", self.size)];
        opts.extend(self.options.iter().cloned());
        opts.join(",")
    }
}

impl Target for Tmpfs {
    fn preflight(&self) -> Result<()> {
        options::refuse_paths("mount_options", &self.options)?;
        if !crate::host::is_root() {
            bail!(
                "mounting a tmpfs needs root; run storlab as root, or use a dir target on /dev/shm instead: kind = \"dir\", path = \"/dev/shm\""
            );
        }
        Ok(())
    }

    fn provision(&mut self) -> Result<()> {
        self.held.record(Resource::Dir {
            path: self.mountpoint.clone(),
        })?;
        std::fs::create_dir_all(&self.mountpoint)
            .with_context(|| format!("creating mount point {}", self.mountpoint.display()))?;
        self.held.record(Resource::Mount {
            path: self.mountpoint.clone(),
        })?;
        let args = crate::provision::mount::mount_args(
            "tmpfs",
            "storlab-tmpfs",
            &self.mountpoint,
            &[self.option_string()],
        );
        cmd::run("mount", &args).with_context(|| {
            format!(
                "mounting tmpfs on {} with -o {}",
                self.mountpoint.display(),
                self.option_string()
            )
        })?;
        Ok(())
    }

    fn root(&self) -> &Path {
        &self.mountpoint
    }

    fn remount(&mut self) -> Result<()> {
        bail!("a tmpfs cannot be remounted without losing its files")
    }

    fn teardown(&mut self) -> Result<()> {
        self.held.undo_all()
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = self.teardown();
    }
}
