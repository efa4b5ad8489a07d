//! Targets: the storage configurations under test.
//!
//! Each kind lives in its own module behind the [`Target`] trait
//! (preflight → provision → remount between runs → teardown); the closed
//! registry [`TargetKind`] maps names to parameter tables, validation and
//! constructors, and drives `storlab targets`. What the kinds stand on —
//! the journal, commands, mounts, loop devices, daemons and the zfs and
//! gluster command lines — is [`crate::provision`], which knows no kind.

pub mod dir;
pub mod gluster;
pub mod image;
pub mod loopfs;
pub mod nfs;
pub mod tmpfs;
pub mod zfs;

use std::path::Path;

use anyhow::Result;

use crate::experiment::params::{ParamSpec, Params};
use crate::provision::journal::Journal;

/// One storage configuration's lifecycle.
pub trait Target: Send {
    /// Checks made before anything is touched on any target.
    fn preflight(&self) -> Result<()>;
    /// Creates or mounts what the target needs.
    fn provision(&mut self) -> Result<()>;
    /// The directory under which storlab makes its working directory.
    fn root(&self) -> &Path;
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
}

/// The closed registry of target kinds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TargetKind {
    Dir,
    Tmpfs,
    Loop,
    Zfs,
    Gluster,
    Nfs,
}

impl TargetKind {
    pub const ALL: &'static [TargetKind] = &[
        TargetKind::Dir,
        TargetKind::Tmpfs,
        TargetKind::Loop,
        TargetKind::Zfs,
        TargetKind::Gluster,
        TargetKind::Nfs,
    ];

    pub fn names() -> &'static [&'static str] {
        &["dir", "tmpfs", "loop", "zfs", "gluster", "nfs"]
    }

    pub fn parse(name: &str) -> Option<TargetKind> {
        TargetKind::ALL.iter().copied().find(|k| k.name() == name)
    }

    pub fn name(self) -> &'static str {
        match self {
            TargetKind::Dir => "dir",
            TargetKind::Tmpfs => "tmpfs",
            TargetKind::Loop => "loop",
            TargetKind::Zfs => "zfs",
            TargetKind::Gluster => "gluster",
            TargetKind::Nfs => "nfs",
        }
    }

    pub fn about(self) -> &'static str {
        match self {
            TargetKind::Dir => "an existing directory on any filesystem, local or network",
            TargetKind::Tmpfs => "a tmpfs that storlab mounts (needs root)",
            TargetKind::Loop => {
                "an image file on a loop device with ext4, xfs or btrfs (needs root)"
            }
            TargetKind::Zfs => {
                "a ZFS pool and dataset with properties, kernel ZFS or zfs-fuse (needs root)"
            }
            TargetKind::Gluster => "a Gluster volume of local bricks, FUSE-mounted (needs root)",
            TargetKind::Nfs => "an NFS export mounted with the kernel client (needs root)",
        }
    }

    pub fn params(self) -> &'static [ParamSpec] {
        match self {
            TargetKind::Dir => dir::PARAMS,
            TargetKind::Tmpfs => tmpfs::PARAMS,
            TargetKind::Loop => loopfs::PARAMS,
            TargetKind::Zfs => zfs::PARAMS,
            TargetKind::Gluster => gluster::PARAMS,
            TargetKind::Nfs => nfs::PARAMS,
        }
    }

    pub fn validate(self, p: &Params) -> Result<(), (&'static str, String)> {
        match self {
            TargetKind::Dir => dir::validate(p),
            TargetKind::Tmpfs => Ok(()),
            TargetKind::Loop => loopfs::validate(p),
            TargetKind::Zfs => zfs::validate(p),
            TargetKind::Gluster => gluster::validate(p),
            TargetKind::Nfs => nfs::validate(p),
        }
    }

    /// Why this kind cannot be remounted between runs, if it cannot.
    pub fn can_remount(self) -> Result<(), String> {
        match self {
            TargetKind::Dir => Err("storlab did not mount it".into()),
            TargetKind::Tmpfs => Err("a tmpfs loses its files when unmounted".into()),
            TargetKind::Loop | TargetKind::Zfs | TargetKind::Gluster | TargetKind::Nfs => Ok(()),
        }
    }

    /// Builds a target whose resources go to `journal` before they exist.
    pub fn build(self, name: &str, p: &Params, journal: &Journal) -> Box<dyn Target> {
        match self {
            TargetKind::Dir => Box::new(dir::Dir::new(p)),
            TargetKind::Tmpfs => Box::new(tmpfs::Tmpfs::new(name, p, journal)),
            TargetKind::Loop => Box::new(loopfs::LoopFs::new(name, p, journal)),
            TargetKind::Zfs => Box::new(zfs::Zfs::new(name, p, journal)),
            TargetKind::Gluster => Box::new(gluster::Gluster::new(name, p, journal)),
            TargetKind::Nfs => Box::new(nfs::Nfs::new(name, p, journal)),
        }
    }
}
