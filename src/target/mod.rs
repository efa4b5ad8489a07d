//! Targets: the storage configurations under test.
//!
//! Each kind lives in its own module behind the [`Target`] trait
//! (preflight → provision → remount between runs → teardown); the closed
//! registry [`TargetKind`] maps names to parameter tables, validation and
//! constructors, and drives `storlab targets`.

pub mod dir;
pub mod facts;
pub mod mountinfo;
pub mod tmpfs;
pub mod workdir;

use std::path::Path;

use anyhow::Result;

use crate::experiment::params::{ParamSpec, Params};

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
    /// Undoes what provision did; safe to call twice.
    fn teardown(&mut self) -> Result<()>;
}

/// The closed registry of target kinds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TargetKind {
    Dir,
    Tmpfs,
}

impl TargetKind {
    pub const ALL: &'static [TargetKind] = &[TargetKind::Dir, TargetKind::Tmpfs];

    pub fn names() -> &'static [&'static str] {
        &["dir", "tmpfs"]
    }

    pub fn parse(name: &str) -> Option<TargetKind> {
        TargetKind::ALL.iter().copied().find(|k| k.name() == name)
    }

    pub fn name(self) -> &'static str {
        match self {
            TargetKind::Dir => "dir",
            TargetKind::Tmpfs => "tmpfs",
        }
    }

    pub fn about(self) -> &'static str {
        match self {
            TargetKind::Dir => "an existing directory on any filesystem, local or network",
            TargetKind::Tmpfs => "a tmpfs that storlab mounts (needs root)",
        }
    }

    pub fn params(self) -> &'static [ParamSpec] {
        match self {
            TargetKind::Dir => dir::PARAMS,
            TargetKind::Tmpfs => tmpfs::PARAMS,
        }
    }

    pub fn validate(self, p: &Params) -> Result<(), (&'static str, String)> {
        match self {
            TargetKind::Dir => dir::validate(p),
            TargetKind::Tmpfs => Ok(()),
        }
    }

    /// Why this kind cannot be remounted between runs, if it cannot.
    pub fn can_remount(self) -> Result<(), String> {
        match self {
            TargetKind::Dir => Err("storlab did not mount it".into()),
            TargetKind::Tmpfs => Err("a tmpfs loses its files when unmounted".into()),
        }
    }

    pub fn build(self, name: &str, p: &Params) -> Box<dyn Target> {
        match self {
            TargetKind::Dir => Box::new(dir::Dir::new(p)),
            TargetKind::Tmpfs => Box::new(tmpfs::Tmpfs::new(name, p)),
        }
    }
}
