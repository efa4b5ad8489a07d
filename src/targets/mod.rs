//! Targets: the storage configurations under test.
//!
//! Each kind lives in its own module behind the [`Target`] trait
//! (preflight → provision → remount between runs → teardown). The closed
//! registry is one table, [`TARGETS`], as the workloads' `KINDS`: an entry
//! per kind with its name, help, parameter table, how its parameters become
//! a [`TargetConfig`] (which builds the target) and whether it can be
//! remounted; it drives `storlab targets`. [`TargetKind`] names a row.
//! Each kind lives in its own folder (`targets/KIND/`): its parameters,
//! provisioning, facts, health and daemons, its command lines (`zfs/cli`,
//! `gluster/cli`, `nfs/ganesha`, `vmdisk/qemu_img`…) and how it undoes what
//! it journaled ([`RESOURCES`]). What the kinds stand on — the journal and
//! its cleanup rules, commands, mounts, loop devices, daemons by pid — is
//! [`crate::provision`], which knows no kind.

pub mod block;
pub mod dir;
pub mod gluster;
pub mod health;
pub mod image;
pub mod loopfs;
pub mod nfs;
pub mod tmpfs;
pub mod vmdisk;
pub mod zfs;

use std::fmt::Debug;
use std::path::Path;
use std::sync::Arc;

use anyhow::Result;

use crate::measure::layers::Stack;
use crate::measure::telemetry::Backing;
use crate::params::{Declared, Fault, ParamSpec, Params};
use crate::provision::client::ClientMount;
use crate::provision::journal::Journal;
use crate::provision::resource::Kinds;

/// What the kinds undo for the journal that only they know how to (a
/// pool, a volume, a kind's daemon): every journal of a campaign is made
/// with it, and `storlab cleanup` undoes with it.
pub static RESOURCES: Kinds = Kinds(&[
    &zfs::resources::Resources,
    &gluster::resources::Resources,
    &nfs::resources::Resources,
    &vmdisk::resources::Resources,
]);

/// How ranks on the other hosts of an MPI job reach a target.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reach {
    /// Only from the host that provisioned it (a tmpfs, a loop device, a
    /// pool): a job with ranks on other hosts is refused.
    ThisHost,
    /// At the same path on every host, where the user mounted it (`dir`).
    SamePath,
    /// Mounted by the first rank on each other host, as this says.
    Mount(ClientMount),
}

/// One storage configuration's lifecycle.
pub trait Target: Send {
    /// Checks made before anything is touched on any target.
    fn preflight(&self) -> Result<()>;
    /// Creates or mounts what the target needs.
    fn provision(&mut self) -> Result<()>;
    /// The directory under which storlab makes its working directory.
    fn root(&self) -> &Path;
    /// The raw device the workloads run on, for a target without a
    /// filesystem (`block`).
    fn device(&self) -> Option<&Path> {
        None
    }
    /// Unmounts and mounts again (plan `remount = "between-runs"`).
    fn remount(&mut self) -> Result<()>;
    /// Undoes what provision did, also after a partial provision; safe to
    /// call twice.
    fn teardown(&mut self) -> Result<()>;
    /// Kind-specific facts (devices, properties, versions), merged into the
    /// target's recorded facts after provisioning.
    fn facts(&self) -> serde_json::Value {
        serde_json::json!({})
    }
    /// How ranks on other hosts reach it.
    fn reach(&self) -> Reach {
        Reach::ThisHost
    }
    /// What holds the target's data besides its mount point (images, brick
    /// directories) and the processes serving it, for the telemetry.
    fn backing(&self) -> Backing {
        Backing::default()
    }
    /// Readies the counters its layers are read from, once provisioned
    /// and only when they will be read (Gluster: starts the volume's
    /// profiling, which counts each brick's reads).
    fn watch_caches(&mut self) -> Result<()> {
        Ok(())
    }
    /// The layers of its stack that reads pass through, top to bottom,
    /// each with the counter of what it was asked; `below` is the stack
    /// of the target it stands on (`on`), if any. By default its mount's:
    /// the page cache over its device chain.
    fn layers(&self, _below: Option<&Stack>) -> Stack {
        Stack::of_mount(self.root())
    }
    /// Its state now (bricks online, pool health) and its daemons' pids,
    /// read before and after each run ([`health::degraded`]).
    fn health(&self) -> health::Health {
        health::Health::default()
    }
    /// For a target standing on another (`on = "gl"`): the directory inside
    /// that target's working directory where this one makes what it needs.
    /// Called once that target is provisioned, before [`Target::provision`].
    fn stand_on(&mut self, _dir: &Path) -> Result<()> {
        anyhow::bail!("this kind of target cannot stand on another")
    }
    /// Lets go of the target it stands on, so that one can be unmounted
    /// (a loop image: its filesystem unmounted, its device detached);
    /// [`Target::hold`] takes it again. How a stack is remounted.
    fn release(&mut self) -> Result<()> {
        anyhow::bail!("this kind of target does not stand on another")
    }
    /// Takes again what [`Target::release`] let go of.
    fn hold(&mut self) -> Result<()> {
        anyhow::bail!("this kind of target does not stand on another")
    }
}

/// What a target takes from the host once provisioned.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Footprint {
    /// An image file it makes in an existing directory of the host (not
    /// on another target): the directory and the bytes it can take at
    /// most (its size, its format's metadata included).
    pub image: Option<(std::path::PathBuf, u64)>,
    /// Memory its filesystem keeps what is written to it in (a tmpfs):
    /// at most this many bytes.
    pub memory: Option<u64>,
}

/// A target kind's declared parameters ([`crate::params::declare!`]),
/// checked: what the rest of storlab builds a target from.
pub trait TargetConfig: Debug + Send + Sync {
    /// Cross-checks of the parameters: the key at fault and why.
    fn validate(&self) -> Result<(), Fault> {
        Ok(())
    }
    /// Builds a target whose resources go to `journal` before they exist.
    fn build(&self, name: &str, journal: &Journal) -> Box<dyn Target>;
    /// What the target takes from the host once provisioned, for `check`
    /// and `run` to sum before anything is made.
    fn footprint(&self) -> Footprint {
        Footprint::default()
    }
    /// The root its software comes from (`root`), for a kind whose
    /// software storlab runs; none for the others.
    fn root(&self) -> Option<crate::provision::root::RootNeed> {
        None
    }
    /// The device storlab did not create that this target overwrites
    /// (`allow_destroy = true`), named by `check` and `run` and refused
    /// from a file nobody named.
    fn erases(&self) -> Option<&str> {
        None
    }
}

type Configurer = fn(&Params) -> Result<Arc<dyn TargetConfig>, Fault>;

/// Reads a kind's typed parameters once and checks them.
fn configure<K: Declared + TargetConfig + 'static>(
    p: &Params,
) -> Result<Arc<dyn TargetConfig>, Fault> {
    let config = K::from_params(p)?;
    config.validate()?;
    Ok(Arc::new(config))
}

/// The closed registry of target kinds; each names one row of [`TARGETS`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TargetKind {
    Dir,
    Tmpfs,
    Loop,
    Zfs,
    Gluster,
    Nfs,
    Block,
    VmDisk,
}

/// Everything storlab asks of one target kind.
pub struct TargetEntry {
    pub kind: TargetKind,
    pub name: &'static str,
    pub about: &'static str,
    pub params: &'static [ParamSpec],
    /// Checks parameters into the kind's configuration.
    pub configure: Configurer,
    /// Why the kind cannot be remounted between runs, if it cannot.
    pub cannot_remount: Option<&'static str>,
    /// Its facts that take a new value with every campaign of the same
    /// configuration: the names storlab gives what it creates (after its
    /// process id), the daemons' pids, the space an image has taken.
    /// Dotted names as comparisons flatten the facts; a name covers what
    /// lies under it, and a trailing `*` any name it begins (`Brick*`).
    /// Beside the facts the catalogue says change with every campaign
    /// ([`crate::fact::catalogue::always_changing`]), which every kind has.
    pub volatile_facts: &'static [&'static str],
}

/// The registry, in the order `storlab targets` lists it.
pub static TARGETS: &[TargetEntry] = &[
    TargetEntry {
        kind: TargetKind::Dir,
        name: "dir",
        about: "an existing directory on any filesystem, local or network",
        params: dir::DirParams::PARAMS,
        configure: configure::<dir::DirParams>,
        cannot_remount: Some("storlab did not mount it"),
        volatile_facts: &[],
    },
    TargetEntry {
        kind: TargetKind::Tmpfs,
        name: "tmpfs",
        about: "a tmpfs that storlab mounts (needs root)",
        params: tmpfs::TmpfsParams::PARAMS,
        configure: configure::<tmpfs::TmpfsParams>,
        cannot_remount: Some("a tmpfs loses its files when unmounted"),
        volatile_facts: &["path", "mount_point"],
    },
    TargetEntry {
        kind: TargetKind::Loop,
        name: "loop",
        about: "an image file on a loop device with ext4, xfs or btrfs (needs root)",
        params: loopfs::LoopParams::PARAMS,
        configure: configure::<loopfs::LoopParams>,
        cannot_remount: None,
        volatile_facts: &[
            "path",
            "mount_point",
            "mount_source",
            "image",
            "loop_device",
            "block_device.name",
            "image_allocated_bytes",
        ],
    },
    TargetEntry {
        kind: TargetKind::Zfs,
        name: "zfs",
        about: "a ZFS pool and dataset with properties, kernel ZFS or zfs-fuse (needs root)",
        params: zfs::ZfsParams::PARAMS,
        configure: configure::<zfs::ZfsParams>,
        cannot_remount: None,
        volatile_facts: &[
            "path",
            "mount_point",
            "mount_source",
            "pool",
            "dataset",
            "vdev",
            "daemon_started_pid",
        ],
    },
    TargetEntry {
        kind: TargetKind::Gluster,
        name: "gluster",
        about: "a Gluster volume of bricks here or on named servers, FUSE-mounted (needs root)",
        params: gluster::GlusterParams::PARAMS,
        configure: configure::<gluster::GlusterParams>,
        cannot_remount: None,
        volatile_facts: &[
            "path",
            "mount_point",
            "mount_source",
            "volume",
            "bricks",
            "brick_specs",
            "daemon_started_pid",
            "volume_info.Volume ID",
            "volume_info.Volume Name",
            "volume_info.Brick*",
            // Another root's volume is served on an address chosen per
            // campaign (10.214.N.2), which names its bricks and devices.
            "host",
            "servers",
            "brick_devices",
        ],
    },
    TargetEntry {
        kind: TargetKind::Nfs,
        name: "nfs",
        about: "an NFS export mounted with the kernel client (needs root)",
        params: nfs::NfsParams::PARAMS,
        configure: configure::<nfs::NfsParams>,
        cannot_remount: None,
        volatile_facts: &[
            "path",
            "mount_point",
            "mount_source",
            "export",
            "served_by",
            "ganesha_pid",
            "ganesha_config",
        ],
    },
    TargetEntry {
        kind: TargetKind::Block,
        name: "block",
        about: "a whole raw device the io workload runs on, no filesystem; its data is destroyed (allow_destroy = true, needs root)",
        params: block::BlockParams::PARAMS,
        configure: configure::<block::BlockParams>,
        cannot_remount: Some("a raw device has no filesystem to remount"),
        volatile_facts: &[],
    },
    TargetEntry {
        kind: TargetKind::VmDisk,
        name: "vm-disk",
        about: "a virtual machine's disk through QEMU's block layer: a qcow2 or raw image served by qemu-storage-daemon, a loop device over its export, a filesystem inside (needs root)",
        params: vmdisk::VmDiskParams::PARAMS,
        configure: configure::<vmdisk::VmDiskParams>,
        cannot_remount: None,
        volatile_facts: &[
            "path",
            "mount_point",
            "mount_source",
            "image",
            "export",
            "daemon_pid",
            "loop_device",
            "block_device.name",
            "image_allocated_bytes",
        ],
    },
];

impl TargetKind {
    /// This kind's row of the registry.
    pub fn entry(self) -> &'static TargetEntry {
        TARGETS
            .iter()
            .find(|e| e.kind == self)
            .expect("every target kind has a row in TARGETS (tested)")
    }

    pub fn all() -> impl Iterator<Item = TargetKind> {
        TARGETS.iter().map(|e| e.kind)
    }

    pub fn names() -> Vec<&'static str> {
        TARGETS.iter().map(|e| e.name).collect()
    }

    pub fn parse(name: &str) -> Option<TargetKind> {
        TARGETS.iter().find(|e| e.name == name).map(|e| e.kind)
    }

    pub fn name(self) -> &'static str {
        self.entry().name
    }

    pub fn about(self) -> &'static str {
        self.entry().about
    }

    pub fn params(self) -> &'static [ParamSpec] {
        self.entry().params
    }

    /// Checks `p` into the kind's configuration. A sweep overrides values
    /// in `p` and configures each variant anew.
    pub fn configure(self, p: &Params) -> Result<Arc<dyn TargetConfig>, Fault> {
        (self.entry().configure)(p)
    }

    /// Whether the fact `name` (dotted, as comparisons flatten facts) of a
    /// target of this kind takes a new value with every campaign.
    pub fn volatile_fact(self, name: &str) -> bool {
        let leaf = name.rsplit('.').next().unwrap_or(name);
        crate::fact::catalogue::always_changing().any(|n| n == leaf)
            || self
                .entry()
                .volatile_facts
                .iter()
                .any(|v| match v.strip_suffix('*') {
                    Some(prefix) => name.starts_with(prefix),
                    None => name == *v || name.strip_prefix(v).is_some_and(|r| r.starts_with('.')),
                })
    }

    /// Why this kind cannot be remounted between runs, if it cannot.
    pub fn can_remount(self) -> Result<(), String> {
        match self.entry().cannot_remount {
            Some(why) => Err(why.into()),
            None => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests;
