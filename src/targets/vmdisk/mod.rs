//! Target `vm-disk`: a virtual machine's disk through QEMU's block layer,
//! without a VM. An image made by qemu-img (qcow2 or raw, thin or
//! preallocated) is served by a qemu-storage-daemon of its own with
//! QEMU's cache mode and aio engine as a FUSE export; a loop device over
//! the export stands for the guest's virtio disk, and the guest's
//! filesystem is made on it and mounted, as `loop` does. The loop device
//! is buffered: FUSE passes its writes straight to QEMU (no write-back
//! cache), but keeps what was read in the export file's page cache, which
//! a run's cache drop empties. (Direct I/O from the loop device into the
//! export corrupted XFS metadata on kernel 6.18 in 3 of 5 tries, so it is
//! not used.)
//!
//! Everything lives under `<dir>/storlab-<pid>-<target>/` — the image, the
//! export's mount point (a regular file), the daemon's pid file and the
//! guest's mount point — journaled before it is made. With `on` that
//! directory is in another target's working directory (a Gluster volume's
//! FUSE mount, as oVirt's storage domain); with `gluster` it is too, but
//! QEMU reaches the image through its own gluster driver (libgfapi).
//! Remounting stops the daemon and starts it again, as a VM's restart
//! would; teardown goes top down, the daemon stopped by its pid alone.

mod params;
pub mod qemu_daemon;
pub mod qemu_img;
pub mod resources;

use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use serde_json::{json, Value};

use self::qemu_daemon::Export;
use self::qemu_img::{ImageSpec, Location};
use crate::measure::layers::sources::{Delivered, Devices};
use crate::measure::layers::{below_cache, Level, Stack};
use crate::measure::telemetry::{Backing, Chain, Served};
use crate::metric::layer::Layer;
use crate::params::Fault;
use crate::process::watch;
use crate::provision::journal::{Held, Journal, Resource};
use crate::provision::{cmd, loopdev, mount, mountinfo, options, resource_name};
use crate::targets::{Target, TargetConfig};

pub use self::params::{Aio, Format, Preallocation, VmDiskParams};

impl TargetConfig for VmDiskParams {
    fn validate(&self) -> Result<(), Fault> {
        self.check()
    }

    fn build(&self, name: &str, journal: &Journal) -> Box<dyn Target> {
        Box::new(VmDisk::new(name, self, journal))
    }
    fn footprint(&self) -> super::Footprint {
        let on_host = self.on.is_none() && self.gluster.is_none();
        super::Footprint {
            image: on_host.then(|| (self.dir.clone().into(), self.image_bytes())),
            ..Default::default()
        }
    }
}

pub struct VmDisk {
    name: String,
    p: VmDiskParams,
    /// The directory that holds `base`: `dir`, or set by `stand_on`.
    dir: PathBuf,
    base: PathBuf,
    /// The guest's mount point, in `base`.
    mnt: PathBuf,
    /// The loop device over the export, while attached.
    device: Option<PathBuf>,
    /// How QEMU reaches the image (a gluster:// location is known once
    /// the volume below is mounted).
    location: Option<Location>,
    held: Held,
}

impl VmDisk {
    pub fn new(name: &str, p: &VmDiskParams, journal: &Journal) -> VmDisk {
        let dir = PathBuf::from(&p.dir);
        VmDisk {
            name: name.to_string(),
            p: p.clone(),
            base: dir.join(resource_name('-', name)),
            mnt: dir.join(resource_name('-', name)).join("mnt"),
            dir,
            device: None,
            location: None,
            held: Held::new(journal),
        }
    }

    /// The image file, as this host sees it (through the volume's FUSE
    /// mount when QEMU reaches it with libgfapi).
    fn image(&self) -> PathBuf {
        self.base.join(format!("disk.{}", self.p.format.name()))
    }

    /// The regular file the export is mounted on.
    fn export_path(&self) -> PathBuf {
        self.base.join("export")
    }

    fn pidfile(&self) -> PathBuf {
        self.base.join("qemu-storage-daemon.pid")
    }

    fn mountpoint(&self) -> PathBuf {
        self.mnt.clone()
    }

    fn spec(&self) -> ImageSpec {
        ImageSpec {
            format: self.p.format.name().into(),
            preallocation: self.p.preallocation.name().into(),
            size: self.p.size,
            cluster_size: self.p.cluster_size,
            lazy_refcounts: self.p.lazy_refcounts,
        }
    }

    /// Where QEMU finds the image: the file, or its path in the Gluster
    /// volume whose FUSE mount holds `base`.
    fn locate(&self) -> Result<Location> {
        if self.p.gluster.is_none() {
            return Ok(Location::File(self.image()));
        }
        let m = mountinfo::mount_of(&self.base)
            .filter(|m| m.fs_type == "fuse.glusterfs")
            .with_context(|| {
                format!(
                    "{} is not on a Gluster volume's mount; `gluster` must name a gluster target",
                    self.base.display()
                )
            })?;
        gluster_location(&m.source, Path::new(&m.mount_point), &self.image())
    }

    fn export(&self) -> Result<Export> {
        Ok(Export {
            image: self.location.clone().context("the image was not made")?,
            format: self.p.format.name().into(),
            cache: self.p.cache.clone(),
            aio: self.p.aio.map(|a| a.name().to_string()),
            discard: self.p.discard,
            mountpoint: self.export_path(),
            pidfile: self.pidfile(),
        })
    }

    /// Starts the daemon, attaches the loop device over its export and
    /// mounts the guest's filesystem (made first when `mkfs`).
    fn serve(&mut self, mkfs: bool) -> Result<()> {
        let pid = self.export()?.start()?;
        watch::register(pid, qemu_daemon::PROGRAM, &self.name, true);
        let dev = loopdev::attach(&self.export_path())?;
        self.device = Some(dev.clone());
        // By its device too: once the daemon ends, its export is unmounted
        // and the device no longer names the file it stands on.
        self.held.record(Resource::Loop {
            image: self.export_path(),
            device: Some(dev.clone()),
        })?;
        if mkfs {
            loopdev::mkfs(&self.p.fs, &dev, self.list(&self.p.mkfs_options))?;
        }
        self.mount()
    }

    fn list<'a>(&self, l: &'a Option<Vec<String>>) -> &'a [String] {
        l.as_deref().unwrap_or_default()
    }

    fn mount(&self) -> Result<()> {
        let dev = self.device.as_ref().context("no loop device attached")?;
        let opts = self.list(&self.p.mount_options);
        let mnt = self.mountpoint();
        mount::mount(&self.p.fs, &dev.display().to_string(), &mnt, opts)?;
        mount::check_options(&self.p.fs, &mnt, opts).map(|_| ())
    }

    /// Unmounts the guest's filesystem, detaches the loop device and stops
    /// the daemon, which lets go of the image.
    fn unserve(&mut self) -> Result<()> {
        watch::forget(qemu_daemon::PROGRAM, &self.name);
        mount::umount_if_mounted(&self.mountpoint())?;
        loopdev::detach_all(&self.export_path())?;
        self.device = None;
        qemu_daemon::stop(&self.pidfile(), Some(&self.export_path()))
    }

    /// The loop device's direct-I/O flag, from sysfs.
    fn loop_direct_io(&self) -> Option<bool> {
        let name = self
            .device
            .as_ref()?
            .file_name()?
            .to_string_lossy()
            .into_owned();
        let text = std::fs::read_to_string(format!("/sys/block/{name}/loop/dio")).ok()?;
        Some(text.trim() == "1")
    }
}

/// The gfapi location of `image` inside the volume mounted from `source`
/// (`host:/volume`) on `mount_point`.
fn gluster_location(source: &str, mount_point: &Path, image: &Path) -> Result<Location> {
    let Some((host, volume)) = source.split_once(":/") else {
        bail!("`{source}` is not a Gluster mount source (host:/volume)");
    };
    let rel = image
        .strip_prefix(mount_point)
        .with_context(|| format!("{} is not under {}", image.display(), mount_point.display()))?;
    Ok(Location::Gluster {
        host: host.to_string(),
        volume: volume.to_string(),
        path: rel.display().to_string(),
    })
}

impl Target for VmDisk {
    fn preflight(&self) -> Result<()> {
        options::refuse_paths("mkfs_options", self.list(&self.p.mkfs_options))?;
        options::refuse_paths("mount_options", self.list(&self.p.mount_options))?;
        if self.p.under().is_none() {
            crate::targets::image::preflight_image_dir(&self.dir, &self.base, self.p.size)?;
        } else if !crate::host::is_root() {
            bail!(
                "it needs root (qemu-storage-daemon's FUSE export, losetup, mkfs, mount); run storlab as root"
            );
        }
        for (program, package) in [
            ("qemu-img", "qemu-utils"),
            (qemu_daemon::PROGRAM, "qemu-system-common"),
        ] {
            if cmd::which(program).is_none() {
                bail!("{program} is not installed; install {package} (apt-get install {package})");
            }
        }
        if loopdev::mkfs_version(&self.p.fs).is_none() {
            bail!(
                "mkfs.{} is not installed; install the package that provides it (e.g. xfsprogs, btrfs-progs, e2fsprogs)",
                self.p.fs
            );
        }
        if !Path::new("/dev/fuse").exists() {
            bail!("/dev/fuse is missing: qemu-storage-daemon exports the disk through FUSE (modprobe fuse)");
        }
        Ok(())
    }

    fn provision(&mut self) -> Result<()> {
        if let Some(on) = self.p.under() {
            crate::targets::image::preflight_image_dir(&self.dir, &self.base, self.p.size)
                .with_context(|| format!("on target `{on}`"))?;
        }
        self.held.make_dir(&self.base)?;
        let location = self.locate()?;
        self.held.record(Resource::File { path: self.image() })?;
        qemu_img::create(&location, &self.spec())?;
        self.location = Some(location);
        let export = self.export_path();
        std::fs::File::create(&export)
            .with_context(|| format!("creating the export's mount point {}", export.display()))?;
        self.held.record(Resource::QemuDaemon {
            pidfile: self.pidfile(),
            export: export.clone(),
        })?;
        self.held.record(Resource::Loop {
            image: export,
            device: None,
        })?;
        let mnt = self.mountpoint();
        self.held.make_dir(&mnt)?;
        self.held.record(Resource::Mount { path: mnt })?;
        self.serve(true)
    }

    fn root(&self) -> &Path {
        &self.mnt
    }

    fn remount(&mut self) -> Result<()> {
        self.unserve().context("stopping the disk")?;
        self.serve(false).context("serving the disk again")
    }

    fn teardown(&mut self) -> Result<()> {
        watch::forget_all(&self.name);
        self.held.undo_all()
    }

    fn stand_on(&mut self, dir: &Path) -> Result<()> {
        self.dir = dir.to_path_buf();
        self.base = dir.join(resource_name('-', &self.name));
        self.mnt = self.base.join("mnt");
        Ok(())
    }

    fn release(&mut self) -> Result<()> {
        self.unserve()
    }

    /// Takes hold again after [`Target::release`], also after one that
    /// stopped half-way: what still runs is stopped first, so that one
    /// daemon serves the image and one loop device sits on its export.
    fn hold(&mut self) -> Result<()> {
        self.unserve()
            .context("stopping what was left of the disk")?;
        self.serve(false).context("serving the disk again")
    }

    fn facts(&self) -> Value {
        let mut f = json!({
            "fs": self.p.fs,
            "image": self.location.as_ref().map(Location::filename),
            "access": if self.p.gluster.is_some() { "QEMU's gluster driver (libgfapi)" } else { "file" },
            "format": self.p.format.name(),
            "preallocation": self.p.preallocation.name(),
            "image_size_bytes": self.p.size,
            "cluster_size_requested": self.p.cluster_size,
            "lazy_refcounts_requested": self.p.lazy_refcounts,
            "cache": self.p.cache,
            "aio": match (&self.p.aio, &self.p.gluster) {
                (Some(a), _) => a.name(),
                (None, None) => "threads",
                (None, Some(_)) => "none (gluster driver)",
            },
            "discard": self.p.discard,
            "export": self.export_path().display().to_string(),
            "daemon_pid": qemu_daemon::read_pid(&self.pidfile()),
            "qemu_version": qemu_daemon::version(),
            "loop_device": self.device.as_ref().map(|d| d.display().to_string()),
            "loop_direct_io": self.loop_direct_io(),
            "mkfs_options": self.p.mkfs_options,
            "mount_options_requested": self.p.mount_options,
            "mkfs_version": loopdev::mkfs_version(&self.p.fs),
            "image_dir_facts": crate::provision::facts::path_facts(&self.dir),
            "on": self.p.under(),
        });
        if let Some(loc) = &self.location {
            match qemu_img::info(loc, self.p.format.name()) {
                Ok(info) => {
                    if let (Value::Object(f), Value::Object(i)) =
                        (&mut f, qemu_img::facts_of(&info))
                    {
                        f.extend(i);
                    }
                }
                Err(e) => f["image_info_error"] = json!(format!("{e:#}")),
            }
        }
        f
    }

    /// The qemu-storage-daemon serving the image, by its pid file: gone or
    /// restarted during a run is a degraded target.
    fn health(&self) -> crate::targets::health::Health {
        let mut h = crate::targets::health::Health::default();
        match qemu_daemon::read_pid(&self.pidfile()) {
            Some(pid) if Path::new(&format!("/proc/{pid}")).exists() => {
                h.daemons.push((qemu_daemon::PROGRAM.to_string(), pid))
            }
            Some(pid) => h.problems.push(format!(
                "{} (pid {pid}) is not running",
                qemu_daemon::PROGRAM
            )),
            None => h.problems.push(format!(
                "{} has no pid in {}",
                qemu_daemon::PROGRAM,
                self.pidfile().display()
            )),
        }
        h
    }

    /// The image's own filesystem (its device chain), beside the guest's
    /// loop device, and the daemon serving it, by its pid file (a remount
    /// starts a new one).
    fn backing(&self) -> Backing {
        Backing {
            skip_root: false,
            paths: vec![self.image()],
            serving: vec![self.daemon()],
            zfs: false,
        }
    }

    /// The guest's page cache, the export's page cache under the guest's
    /// loop device (asked what the loop device read), QEMU (asked what
    /// qemu-storage-daemon delivered to FUSE; with `cache.direct=off` the
    /// host's page cache of the image is part of it), then what holds the
    /// image: the devices under it, or the stack of the target it stands
    /// on — whose top is asked what QEMU read of the image, which is not
    /// told apart from its other I/O; through libgfapi QEMU is the
    /// volume's client itself, whose translators dump no io-stats.
    fn layers(&self, below: Option<&Stack>) -> Stack {
        let export = match &self.device {
            Some(dev) => {
                let chain = Chain::of_paths(std::slice::from_ref(dev));
                let names: Vec<&str> = chain.devices.iter().map(|d| d.name.as_str()).collect();
                Level::counted(Layer::ExportPageCache, Devices::of_names(&chain, &names))
            }
            None => Level::unknown(
                Layer::ExportPageCache,
                "the guest's loop device is not attached",
            ),
        };
        let stack = Stack::of_chain(&Chain::default()).then([
            export,
            Level::counted(
                Layer::Qemu,
                Delivered {
                    daemon: self.daemon(),
                },
            ),
        ]);
        let Some(below) = below else {
            return stack.then(below_cache(&Chain::of_paths(&[self.image()])));
        };
        let mut levels = below.levels.clone();
        if self.p.gluster.is_some() {
            levels.retain(|l| l.layer != Layer::PageCache);
            for l in levels
                .iter_mut()
                .filter(|l| l.layer == Layer::GlusterClient)
            {
                *l = Level::unknown(
                    Layer::GlusterClient,
                    "QEMU reaches the image through its own Gluster client (libgfapi), which dumps no io-stats",
                );
            }
        } else if let Some(top) = levels.first_mut() {
            *top = Level::unknown(
                top.layer,
                "qemu-storage-daemon's reads of its image are not told apart from its reads of /dev/fuse",
            );
        }
        stack.then(levels)
    }
}

impl VmDisk {
    /// The qemu-storage-daemon serving the image, by its pid file (a
    /// remount starts a new one).
    fn daemon(&self) -> Served {
        Served::pid_file(
            qemu_daemon::PROGRAM,
            self.pidfile(),
            format!(
                "{}: the pid in {}, started by storlab",
                qemu_daemon::PROGRAM,
                self.pidfile().display()
            ),
        )
    }
}

impl Drop for VmDisk {
    fn drop(&mut self) {
        let _ = self.teardown();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_image_on_a_gluster_mount_is_its_path_in_the_volume() {
        let loc = gluster_location(
            "h1:/storlab-7-gl",
            Path::new("/var/tmp/storlab-7-gl/mnt"),
            Path::new("/var/tmp/storlab-7-gl/mnt/storlab-work-gl/storlab-7-vm/disk.qcow2"),
        )
        .unwrap();
        assert_eq!(
            loc.filename(),
            "gluster://h1/storlab-7-gl/storlab-work-gl/storlab-7-vm/disk.qcow2"
        );
        assert!(gluster_location("tmpfs", Path::new("/a"), Path::new("/a/b")).is_err());
    }
}
