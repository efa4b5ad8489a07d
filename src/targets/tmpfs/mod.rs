//! Target `tmpfs`: a tmpfs storlab mounts on a fresh directory and unmounts
//! at teardown. Mounting needs root; without it the error suggests a `dir`
//! target on /dev/shm, which is a tmpfs on most systems.
//!
//! `huge` is tmpfs's own `huge=` mount option: with 2 MiB folios a 1 MiB
//! read is one page-cache lookup instead of 256, which on a default tmpfs
//! cost about half of a bare `pread` loop's time (1 MiB reads reached 0.5
//! of memcpy's bandwidth, 1.1–1.4× with `huge = "always"`:
//! docs/benchmarks.md, issue #45).

use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};

use crate::params::{choices, declare};
use crate::provision::cmd;
use crate::provision::journal::{Held, Journal, Resource};
use crate::provision::options;
use crate::targets::{Target, TargetConfig};

choices! {
    /// tmpfs's `huge=` mount option: when its files get huge pages.
    pub enum Huge {
        Never = "never",
        Always = "always",
        WithinSize = "within_size",
        Advise = "advise",
    }
}

declare! {
    /// The parameters of a `tmpfs` target.
    pub struct TmpfsParams {
        size: size = "1G" => "size limit of the tmpfs",
        huge: choice(Huge) = "never" => "huge pages for its files (tmpfs's huge= mount option): never, always, within_size (those that fit within the file's size), advise (where madvise asks)",
        mount_options: list => "extra mount options, e.g. [\"noatime\"]",
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
    huge: Huge,
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
            huge: p.huge,
            options: p.mount_options.clone().unwrap_or_default(),
            mountpoint,
            held: Held::new(journal),
        }
    }

    fn option_string(&self) -> String {
        let mut opts = vec![format!("size={}", self.size)];
        if self.huge != Huge::Never {
            opts.push(format!("huge={}", self.huge.name()));
        }
        opts.extend(self.options.iter().cloned());
        opts.join(",")
    }
}

/// Where the host forbids huge pages on every tmpfs (no transparent huge
/// pages in its kernel, or `deny` in shmem_enabled), why.
fn huge_pages_allowed() -> Result<()> {
    let knob = Path::new("/sys/kernel/mm/transparent_hugepage/shmem_enabled");
    match std::fs::read_to_string(knob) {
        Err(_) => bail!(
            "huge pages on a tmpfs need a kernel with transparent huge pages ({} is missing); remove `huge` from the target",
            knob.display()
        ),
        Ok(text) if text.contains("[deny]") => bail!(
            "{} says deny: the host forbids huge pages on every tmpfs; as root, `echo never > {}` lifts that (the mounts' own huge= then decide), or remove `huge` from the target",
            knob.display(),
            knob.display()
        ),
        Ok(_) => Ok(()),
    }
}

impl Target for Tmpfs {
    fn preflight(&self) -> Result<()> {
        options::refuse_paths("mount_options", &self.options)?;
        if let Some(o) = self.options.iter().find(|o| o.starts_with("huge=")) {
            bail!(
                "mount_options has \"{o}\": say it with the target's own parameter instead, huge = \"{}\"",
                o.trim_start_matches("huge=")
            );
        }
        if self.huge != Huge::Never {
            huge_pages_allowed()?;
        }
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
