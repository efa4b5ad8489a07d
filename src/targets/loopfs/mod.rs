//! Target `loop`: an image file (thin or preallocated) in a chosen
//! directory, attached to a loop device, formatted with ext4, xfs or btrfs
//! and mounted with the options asked for — which are then checked against
//! mountinfo. Everything is created under `<dir>/storlab-<pid>-<target>/`
//! and journaled before it is created. With `on`, the directory is inside
//! another target's working directory (a VM disk on a Gluster volume, as
//! seed 000): known only once that target is provisioned.

use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use serde_json::{json, Value};

use crate::params::{declare, Fault};
use crate::provision::journal::{Held, Journal, Resource};
use crate::provision::{cmd, loopdev, mount, options, resource_name};
use crate::targets::image::ImageParams;
use crate::targets::{Target, TargetConfig};

pub const FILESYSTEMS: &[&str] = &["ext4", "xfs", "btrfs"];

declare! {
    /// The parameters of a `loop` target.
    pub struct LoopParams {
        fs: one_of(FILESYSTEMS) = "ext4" => "filesystem made on the loop device",
        size: size = "512M" => "size of the image file (xfs needs at least 300M, btrfs 114M)",
        image: flatten(ImageParams),
        mkfs_options: list => "extra mkfs arguments, e.g. [\"-b\", \"4096\"]",
        mount_options: list => "mount options, checked against mountinfo after mounting, e.g. [\"noatime\", \"data=writeback\"]",
        on: string => "another target whose working directory holds the image (a VM disk on a Gluster volume), instead of `dir`",
    }
}

/// Smallest image each filesystem's mkfs accepts.
fn min_size(fs: &str) -> u64 {
    match fs {
        "xfs" => 300 << 20,
        "btrfs" => 114 << 20,
        _ => 16 << 20,
    }
}

impl TargetConfig for LoopParams {
    fn validate(&self) -> Result<(), Fault> {
        let fs = self.fs.as_str();
        if self.size < min_size(fs) {
            return Err((
                "size",
                format!(
                    "{fs} needs an image of at least {} MiB; raise `size`",
                    min_size(fs) >> 20
                ),
            ));
        }
        self.image.validate()
    }

    fn build(&self, name: &str, journal: &Journal) -> Box<dyn Target> {
        Box::new(LoopFs::new(name, self, journal))
    }
    fn footprint(&self) -> super::Footprint {
        super::Footprint {
            image: self
                .on
                .is_none()
                .then(|| (self.image.dir.clone().into(), self.size)),
            ..Default::default()
        }
    }
}

pub struct LoopFs {
    name: String,
    /// The target it stands on, if any: then `dir` is set by `stand_on`.
    on: Option<String>,
    fs: String,
    size: u64,
    preallocated: bool,
    dir: PathBuf,
    mkfs_options: Vec<String>,
    mount_options: Vec<String>,
    base: PathBuf,
    mnt: PathBuf,
    device: Option<PathBuf>,
    held: Held,
}

impl LoopFs {
    pub fn new(name: &str, p: &LoopParams, journal: &Journal) -> LoopFs {
        let dir = PathBuf::from(&p.image.dir);
        let list = |l: &Option<Vec<String>>| l.clone().unwrap_or_default();
        LoopFs {
            name: name.to_string(),
            on: p.on.clone(),
            fs: p.fs.clone(),
            size: p.size,
            preallocated: p.image.preallocated(),
            base: dir.join(resource_name('-', name)),
            mnt: dir.join(resource_name('-', name)).join("mnt"),
            dir,
            mkfs_options: list(&p.mkfs_options),
            mount_options: list(&p.mount_options),
            device: None,
            held: Held::new(journal),
        }
    }

    fn image(&self) -> PathBuf {
        self.base.join(format!("{}.img", self.fs))
    }

    fn mountpoint(&self) -> PathBuf {
        self.mnt.clone()
    }

    fn attach(&mut self) -> Result<()> {
        let dev = loopdev::attach(&self.image())?;
        self.device = Some(dev);
        Ok(())
    }

    fn mount(&self) -> Result<()> {
        let dev = self.device.as_ref().context("no loop device attached")?;
        let mnt = self.mountpoint();
        mount::mount(
            &self.fs,
            &dev.display().to_string(),
            &mnt,
            &self.mount_options,
        )?;
        mount::check_options(&self.fs, &mnt, &self.mount_options).map(|_| ())
    }
}

impl Target for LoopFs {
    fn preflight(&self) -> Result<()> {
        options::refuse_paths("mkfs_options", &self.mkfs_options)?;
        options::refuse_paths("mount_options", &self.mount_options)?;
        match &self.on {
            // The directory exists once the target below is provisioned.
            Some(_) if !crate::host::is_root() => {
                bail!("it needs root (losetup, mkfs, mount); run storlab as root")
            }
            Some(_) => {}
            None => crate::targets::image::preflight_image_dir(&self.dir, &self.base, self.size)?,
        }
        let mkfs = format!("mkfs.{}", self.fs);
        if loopdev::mkfs_version(&self.fs).is_none() {
            bail!("{mkfs} is not installed; install the package that provides it (e.g. xfsprogs, btrfs-progs, e2fsprogs)");
        }
        Ok(())
    }

    fn provision(&mut self) -> Result<()> {
        if let Some(on) = &self.on {
            crate::targets::image::preflight_image_dir(&self.dir, &self.base, self.size)
                .with_context(|| format!("on target `{on}`"))?;
        }
        self.held.make_dir(&self.base)?;
        let image = self.image();
        self.held.record(Resource::File {
            path: image.clone(),
        })?;
        loopdev::create_image(&image, self.size, self.preallocated)?;
        self.held.record(Resource::Loop {
            image: image.clone(),
            device: None,
        })?;
        self.attach()?;
        let dev = self.device.clone().context("no loop device attached")?;
        loopdev::mkfs(&self.fs, &dev, &self.mkfs_options)?;
        let mnt = self.mountpoint();
        std::fs::create_dir(&mnt).with_context(|| format!("creating {}", mnt.display()))?;
        self.held.record(Resource::Mount { path: mnt })?;
        self.mount()
    }

    fn root(&self) -> &Path {
        &self.mnt
    }

    fn remount(&mut self) -> Result<()> {
        mount::umount_if_mounted(&self.mountpoint())?;
        self.mount().context("mounting again")
    }

    fn teardown(&mut self) -> Result<()> {
        self.held.undo_all()
    }

    fn stand_on(&mut self, dir: &Path) -> Result<()> {
        self.dir = dir.to_path_buf();
        self.base = dir.join(resource_name('-', &self.name));
        self.mnt = self.base.join("mnt");
        Ok(())
    }

    fn release(&mut self) -> Result<()> {
        mount::umount_if_mounted(&self.mountpoint())?;
        loopdev::detach_all(&self.image())?;
        self.device = None;
        Ok(())
    }

    /// Takes hold again after [`Target::release`], also after one that
    /// stopped half-way: a filesystem still mounted stays as it is, and a
    /// loop device still attached (its filesystem kept alive by a mount
    /// elsewhere) is mounted again rather than a second device attached
    /// to the same image, which would put one filesystem under two
    /// superblocks. If that device was letting go after all, it is waited
    /// for and the image attached anew.
    fn hold(&mut self) -> Result<()> {
        if mount::mounted_at(&self.mountpoint()).is_some() {
            return Ok(());
        }
        if let Some(dev) = loopdev::devices_backed_by(&self.image()).first() {
            self.device = Some(dev.clone());
            if self.mount().is_ok() {
                return Ok(());
            }
            loopdev::detach_all(&self.image())?;
        }
        self.attach().context("attaching the image again")?;
        self.mount().context("mounting again")
    }

    fn facts(&self) -> Value {
        let image = self.image();
        json!({
            "fs": self.fs,
            "image": image.display().to_string(),
            "allocation": if self.preallocated { "preallocated" } else { "thin" },
            "image_size_bytes": self.size,
            "image_allocated_bytes": loopdev::allocated_bytes(&image),
            "loop_device": self.device.as_ref().map(|d| d.display().to_string()),
            "mkfs_options": self.mkfs_options,
            "mount_options_requested": self.mount_options,
            "mkfs_version": loopdev::mkfs_version(&self.fs),
            "image_dir_facts": crate::provision::facts::path_facts(&self.dir),
            "on": self.on,
            "losetup_version": cmd::version("losetup", &["--version"]),
        })
    }
}

impl Drop for LoopFs {
    fn drop(&mut self) {
        let _ = self.teardown();
    }
}
