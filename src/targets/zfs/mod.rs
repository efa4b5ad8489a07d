//! Target `zfs`: a pool on an image file (or on a named device when the
//! target says `allow_destroy = true` and the device is not mounted) and one
//! dataset with the `properties` asked for, read back with `zfs get` and
//! recorded as facts. Works with kernel ZFS or zfs-fuse; zfs-fuse is started
//! when it is not running and stopped at teardown only if storlab started it.
//! Remounting exports and imports the pool, which also empties its ARC.

pub mod cli;
pub mod resources;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use serde_json::{json, Value};

use self::cli::{create_args, get_properties, kernel_zfs, pool_exists, pool_names, zfs_reachable};
use self::resources::ZFS_FUSE;
use crate::measure::layers::sources::Delivered;
use crate::measure::layers::{below_cache, Asked, Level, Stack};
use crate::measure::telemetry::procs::unix_socket_owner;
use crate::measure::telemetry::procs::Locate;
use crate::measure::telemetry::{Backing, Chain, Served};
use crate::metric::layer::Layer;
use crate::params::{declare, Fault};
use crate::process::watch;
use crate::provision::journal::{state_dir, Held, Journal, Resource};
use crate::provision::{blockdev, cmd, daemon, loopdev, mount, options, resource_name};
use crate::targets::image::ImageParams;
use crate::targets::{Target, TargetConfig};

declare! {
    /// The parameters of a `zfs` target.
    pub struct ZfsParams {
        size: size = "512M" => "size of the pool's image file",
        image: flatten(ImageParams),
        device: string => "a block device for the pool instead of an image; DESTROYED, needs allow_destroy = true",
        allow_destroy: bool = "false" => "allow zpool create on `device`, erasing it (refused while it is mounted)",
        properties: map => "dataset properties, e.g. { recordsize = \"8k\", compression = \"on\", logbias = \"throughput\", atime = \"off\" }",
    }
}

/// Properties always recorded as facts, besides those asked for.
const REPORTED: &[&str] = &[
    "recordsize",
    "compression",
    "logbias",
    "atime",
    "primarycache",
    "secondarycache",
    "sync",
    "checksum",
    "dedup",
    "copies",
];

impl TargetConfig for ZfsParams {
    fn validate(&self) -> Result<(), Fault> {
        if self.device.is_some() && !self.allow_destroy {
            return Err((
                "device",
                "a zfs target on an existing `device` erases it: add allow_destroy = true if that is what you want, or leave `device` out to use an image file".into(),
            ));
        }
        if let Some(props) = &self.properties {
            if let Some(k) = props.keys().find(|k| k.contains('=') || k.contains(',')) {
                return Err(("properties", format!("property name `{k}` is malformed")));
            }
        }
        self.image.validate()
    }

    fn build(&self, name: &str, journal: &Journal) -> Box<dyn Target> {
        Box::new(Zfs::new(name, self, journal))
    }
    fn erases(&self) -> Option<&str> {
        self.device.as_deref()
    }
    fn footprint(&self) -> super::Footprint {
        super::Footprint {
            image: self
                .device
                .is_none()
                .then(|| (self.image.dir.clone().into(), self.size)),
            ..Default::default()
        }
    }
}

pub struct Zfs {
    /// The target's name, which its daemon serves.
    name: String,
    size: u64,
    preallocated: bool,
    dir: PathBuf,
    device: Option<PathBuf>,
    properties: BTreeMap<String, String>,
    base: PathBuf,
    mnt: PathBuf,
    pool: String,
    started_daemon: Option<u32>,
    /// This campaign relies on the daemon until teardown (see daemon::Claim).
    claim: Option<daemon::Claim>,
    held: Held,
}

impl Zfs {
    pub fn new(name: &str, p: &ZfsParams, journal: &Journal) -> Zfs {
        let dir = PathBuf::from(&p.image.dir);
        let base = dir.join(resource_name('-', name));
        Zfs {
            name: name.to_string(),
            size: p.size,
            preallocated: p.image.preallocated(),
            device: p.device.as_ref().map(PathBuf::from),
            properties: p.properties.clone().unwrap_or_default(),
            mnt: base.join("mnt"),
            base,
            dir,
            pool: resource_name('_', name),
            started_daemon: None,
            claim: None,
            held: Held::new(journal),
        }
    }

    fn dataset(&self) -> String {
        format!("{}/data", self.pool)
    }

    fn image(&self) -> PathBuf {
        self.base.join("pool.img")
    }

    fn ensure_daemon(&mut self) -> Result<()> {
        if zfs_reachable() {
            return Ok(());
        }
        if kernel_zfs() {
            bail!("the zfs module is loaded but `zpool list` fails; check the ZFS installation");
        }
        let pidfile = state_dir().join(format!("zfs-fuse-{}.pid", std::process::id()));
        self.held.record(Resource::Daemon {
            program: ZFS_FUSE.into(),
            pidfile: pidfile.clone(),
        })?;
        let args = vec!["--pidfile".to_string(), pidfile.display().to_string()];
        let pid = daemon::start(ZFS_FUSE, &args, &pidfile, zfs_reachable, &pool_names)?;
        self.started_daemon = Some(pid);
        Ok(())
    }

    /// The zfs-fuse serving the pool, watched during its runs: the one
    /// storlab started, or the one found listening on its socket (the
    /// host's: never ended by storlab); nothing for kernel ZFS.
    fn watch_daemon(&self) {
        let found = match self.started_daemon {
            Some(pid) => Some((pid, true)),
            None if kernel_zfs() => None,
            None => unix_socket_owner(Path::new(ZFS_FUSE_SOCKET)).map(|pid| (pid, false)),
        };
        if let Some((pid, ours)) = found {
            watch::register(pid, ZFS_FUSE, &self.name, ours);
        }
    }

    fn vdev(&mut self) -> Result<PathBuf> {
        if let Some(dev) = &self.device {
            return Ok(dev.clone());
        }
        let image = self.image();
        self.held.record(Resource::File {
            path: image.clone(),
        })?;
        loopdev::create_image(&image, self.size, self.preallocated)?;
        Ok(image)
    }

    /// Fails unless every property asked for reads back as set locally.
    fn check_properties(&self) -> Result<()> {
        let keys: Vec<&str> = self.properties.keys().map(String::as_str).collect();
        if keys.is_empty() {
            return Ok(());
        }
        let got = get_properties(&self.dataset(), &keys)?;
        for k in keys {
            match got.get(k) {
                Some((_, source)) if source == "local" => {}
                other => bail!(
                    "ZFS property {k}={} did not take effect on {} (zfs get says {other:?})",
                    self.properties[k],
                    self.dataset()
                ),
            }
        }
        Ok(())
    }

    fn import_dir(&self) -> PathBuf {
        match &self.device {
            Some(d) => d.parent().unwrap_or(Path::new("/dev")).to_path_buf(),
            None => self.base.clone(),
        }
    }
}

impl Target for Zfs {
    fn preflight(&self) -> Result<()> {
        options::refuse_paths_in_map("properties", &self.properties, true)?;
        if cmd::which("zpool").is_none() {
            bail!("zpool is not installed; install zfsutils-linux (kernel ZFS) or zfs-fuse");
        }
        if !kernel_zfs() && cmd::which("zfs-fuse").is_none() && !zfs_reachable() {
            bail!("neither kernel ZFS nor zfs-fuse is available; install one of them");
        }
        match &self.device {
            Some(dev) => {
                if !crate::host::is_root() {
                    bail!("it needs root (zpool on a device); run storlab as root");
                }
                blockdev::check_unused(dev)
            }
            None => crate::targets::image::preflight_image_dir(&self.dir, &self.base, self.size),
        }
    }

    fn provision(&mut self) -> Result<()> {
        self.claim = Some(daemon::claim(ZFS_FUSE)?);
        self.ensure_daemon()?;
        self.watch_daemon();
        if pool_exists(&self.pool)? {
            bail!(
                "a pool named {} already exists; storlab will not touch it",
                self.pool
            );
        }
        self.held.make_dir(&self.base)?;
        let vdev = self.vdev()?;
        self.held.record(Resource::Pool {
            name: self.pool.clone(),
        })?;
        let mut args = vec!["create".as_ref(), "-m".as_ref(), "none".as_ref()];
        if self.device.is_some() {
            args.push("-f".as_ref()); // allow_destroy = true was checked
        }
        args.extend([self.pool.as_ref(), vdev.as_os_str()]);
        cmd::run("zpool", &args).with_context(|| format!("creating pool {}", self.pool))?;
        let create = create_args(&self.dataset(), &self.mnt, &self.properties);
        cmd::run("zfs", &create).with_context(|| format!("creating dataset {}", self.dataset()))?;
        self.check_properties()?;
        if mount::mounted_at(&self.mnt).is_none() {
            bail!(
                "dataset {} is not mounted on {}",
                self.dataset(),
                self.mnt.display()
            );
        }
        Ok(())
    }

    fn root(&self) -> &Path {
        &self.mnt
    }

    fn remount(&mut self) -> Result<()> {
        cmd::retry(10, 500, || cmd::run("zpool", &["export", &self.pool]))
            .with_context(|| format!("exporting pool {}", self.pool))?;
        let dir = self.import_dir();
        cmd::run(
            "zpool",
            &[
                "import".as_ref(),
                "-d".as_ref(),
                dir.as_os_str(),
                self.pool.as_ref(),
            ],
        )
        .with_context(|| format!("importing pool {} again", self.pool))?;
        if mount::mounted_at(&self.mnt).is_none() {
            cmd::run("zfs", &["mount", &self.dataset()])?;
        }
        Ok(())
    }

    fn teardown(&mut self) -> Result<()> {
        watch::forget_all(&self.name);
        // The claim holds until the pool is gone: released earlier,
        // another campaign could stop the daemon under our teardown.
        self.held
            .undo_while(|r| !matches!(r, Resource::Daemon { .. }))?;
        // Our own claim must not keep the daemon running.
        let claimed = self.claim.take().is_some();
        self.held.undo_all()?;
        // The last campaign to leave stops a daemon storlab started, even
        // one another campaign started and had to leave running for this one.
        if claimed {
            daemon::stop_if_last(ZFS_FUSE, &pool_names)?;
        }
        Ok(())
    }

    fn facts(&self) -> Value {
        let mut keys: Vec<&str> = REPORTED.to_vec();
        keys.extend(
            self.properties
                .keys()
                .map(String::as_str)
                .filter(|k| !REPORTED.contains(k)),
        );
        let props: BTreeMap<String, Value> = get_properties(&self.dataset(), &keys)
            .unwrap_or_default()
            .into_iter()
            .map(|(k, (v, s))| (k, json!({ "value": v, "source": s })))
            .collect();
        json!({
            "zfs_flavour": if kernel_zfs() { "kernel" } else { "zfs-fuse" },
            "zfs_version": std::fs::read_to_string("/sys/module/zfs/version").ok().map(|s| s.trim().to_string())
                .or_else(|| cmd::version("zpool", &["upgrade", "-v"])),
            "pool": self.pool,
            "dataset": self.dataset(),
            "vdev": self.device.clone().unwrap_or_else(|| self.image()).display().to_string(),
            "allocation": if self.device.is_some() { "device" } else if self.preallocated { "preallocated" } else { "thin" },
            "properties_requested": self.properties,
            "zfs_properties": props,
            "daemon_started_pid": self.started_daemon,
            "image_dir_facts": self.device.is_none().then(|| crate::provision::facts::path_facts(&self.dir)),
        })
    }

    /// The pool's health (`zpool list -H -o health`: anything but ONLINE
    /// is a problem) and the zfs-fuse storlab started, if it did.
    fn health(&self) -> crate::targets::health::Health {
        let mut h = crate::targets::health::Health::default();
        match crate::provision::cmd::run("zpool", &["list", "-H", "-o", "health", &self.pool]) {
            Ok(state) if state.trim() == "ONLINE" => {}
            Ok(state) => h
                .problems
                .push(format!("pool {} is {}", self.pool, state.trim())),
            Err(e) => h.problems.push(format!(
                "zpool list {} failed ({})",
                self.pool,
                format!("{e:#}").lines().next().unwrap_or("")
            )),
        }
        if let Some(pid) = self.started_daemon {
            h.daemons.push(("zfs-fuse".into(), pid));
        }
        h
    }

    fn backing(&self) -> Backing {
        Backing {
            paths: vec![self.vdev_path()],
            // Kernel ZFS has no daemon: its CPU is the host's.
            serving: self.daemon().into_iter().collect(),
            zfs: true,
            skip_root: false,
        }
    }

    /// zfs-fuse: the page cache of its FUSE mount, the ARC (asked what the
    /// daemon delivered to FUSE), the page cache of the pool's image or
    /// device (its reads of the pool are not told apart from its reads of
    /// /dev/fuse), then the devices under the pool. Kernel ZFS reads
    /// through the ARC, not the page cache: the ARC, then the devices.
    fn layers(&self, _below: Option<&Stack>) -> Stack {
        let chain = Chain::of_paths(&[self.vdev_path()]);
        let Some(daemon) = self.daemon() else {
            return Stack {
                levels: vec![Level {
                    layer: Layer::ZfsArc,
                    asked: Asked::Above,
                }],
            }
            .then(below_cache(&chain));
        };
        let mut stack = Stack::of_chain(&Chain::default()).then([
            Level::counted(Layer::ZfsArc, Delivered { daemon }),
            Level::unknown(
                Layer::ImagePageCache,
                "zfs-fuse's reads of its pool are not told apart from its reads of /dev/fuse",
            ),
        ]);
        // The image's page cache is passed over where the pool's device
        // is its own (no image): the devices follow.
        let under = below_cache(&chain);
        stack
            .levels
            .extend(under.into_iter().filter(|l| l.layer == Layer::Device));
        stack
    }
}

impl Zfs {
    /// The pool's device, or its image file.
    fn vdev_path(&self) -> PathBuf {
        self.device.clone().unwrap_or_else(|| self.image())
    }

    /// The zfs-fuse daemon serving the pool; none with kernel ZFS.
    fn daemon(&self) -> Option<Served> {
        if kernel_zfs() {
            return None;
        }
        Some(match self.started_daemon {
            Some(pid) => Served::pid(
                "zfs-fuse",
                pid,
                format!("zfs-fuse: pid {pid}, started by storlab"),
            ),
            None => Served {
                label: "zfs-fuse".into(),
                locate: Locate::SocketOwner(ZFS_FUSE_SOCKET.into()),
                why: format!("zfs-fuse: the process listening on {ZFS_FUSE_SOCKET}"),
            },
        })
    }
}

/// The socket zfs-fuse listens on for zpool and zfs commands.
const ZFS_FUSE_SOCKET: &str = "/var/run/zfs/zfs_socket";

impl Drop for Zfs {
    fn drop(&mut self) {
        let _ = self.teardown();
    }
}
