//! Target `block`: a whole raw device, the design's `block` kind. The io
//! workload runs on the device itself, with no filesystem (O_DIRECT
//! available); every job gets its own region of it, one after the other
//! from `offset`, as each job gets its own file elsewhere.
//!
//! Its data is destroyed, so the target needs `allow_destroy = true` and
//! refuses a device that it or a partition of it is mounted, is swap, has
//! holders or is claimed by the kernel (`provision::blockdev`), before the
//! campaign touches anything and again when provisioning. From then until
//! teardown storlab holds an exclusive claim on it, so that nothing can
//! mount it under the runs. Nothing is created on the device, so there is
//! nothing to undo there; storlab's working directory (which holds no data)
//! lives in a scratch directory of its own.

use std::fs::File;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};

use crate::params::{declare, Fault};
use crate::provision::blockdev;
use crate::provision::journal::{Held, Journal, Resource};
use crate::provision::resource_name;
use crate::targets::{Target, TargetConfig};

declare! {
    /// The parameters of a `block` target.
    pub struct BlockParams {
        device: string => "the whole block device to run on, e.g. /dev/nvme1n1: its data is DESTROYED",
        allow_destroy: bool = "false" => "must be true: the io workloads overwrite the device (refused while it or a partition is mounted or otherwise in use)",
    }
}

impl TargetConfig for BlockParams {
    fn validate(&self) -> Result<(), Fault> {
        let Some(dev) = &self.device else {
            return Err((
                "device",
                "a block target needs `device`, the whole device to run on (e.g. /dev/sdb)".into(),
            ));
        };
        if !dev.starts_with('/') {
            return Err((
                "device",
                format!("`{dev}`: name the device by its absolute path, e.g. /dev/sdb"),
            ));
        }
        if !self.allow_destroy {
            return Err((
                "allow_destroy",
                format!("a block target overwrites {dev}: add allow_destroy = true if that is what you want"),
            ));
        }
        Ok(())
    }

    fn build(&self, name: &str, journal: &Journal) -> Box<dyn Target> {
        Box::new(Block::new(name, self, journal))
    }
    fn erases(&self) -> Option<&str> {
        self.device.as_deref()
    }
}

pub struct Block {
    name: String,
    device: PathBuf,
    /// Scratch directory for storlab's working directory (no data).
    scratch: PathBuf,
    held: Held,
    /// The exclusive claim on the device, from provisioning to teardown.
    claim: Option<File>,
}

impl Block {
    pub fn new(name: &str, p: &BlockParams, journal: &Journal) -> Block {
        Block {
            name: name.to_string(),
            device: PathBuf::from(p.device.clone().unwrap_or_default()),
            scratch: std::env::temp_dir().join(resource_name('-', name)),
            held: Held::new(journal),
            claim: None,
        }
    }
}

impl Target for Block {
    fn preflight(&self) -> Result<()> {
        if !crate::host::is_root() {
            bail!(
                "writing the raw device {} needs root; run storlab as root",
                self.device.display()
            );
        }
        blockdev::check_unused(&self.device)
    }

    fn provision(&mut self) -> Result<()> {
        blockdev::check_unused(&self.device).with_context(|| format!("target `{}`", self.name))?;
        self.claim = Some(blockdev::claim(&self.device)?);
        self.held.record(Resource::Dir {
            path: self.scratch.clone(),
        })?;
        std::fs::create_dir_all(&self.scratch)
            .with_context(|| format!("creating {}", self.scratch.display()))
    }

    fn root(&self) -> &Path {
        &self.scratch
    }

    fn device(&self) -> Option<&Path> {
        Some(&self.device)
    }

    /// The device itself, for the telemetry: the workloads run on it.
    fn backing(&self) -> crate::measure::telemetry::Backing {
        crate::measure::telemetry::Backing {
            paths: vec![self.device.clone()],
            skip_root: true,
            ..Default::default()
        }
    }

    /// The raw device's own page cache (buffered reads of a block
    /// device go through it), then the device and what lies under it.
    fn layers(
        &self,
        _below: Option<&crate::measure::layers::Stack>,
    ) -> crate::measure::layers::Stack {
        let chain = crate::measure::telemetry::Chain::of_paths(std::slice::from_ref(&self.device));
        crate::measure::layers::Stack::of_chain(&chain)
    }

    fn remount(&mut self) -> Result<()> {
        Ok(())
    }

    fn teardown(&mut self) -> Result<()> {
        self.claim = None;
        self.held.undo_all()
    }

    fn facts(&self) -> serde_json::Value {
        serde_json::json!({ "block_device": blockdev::facts(&self.device) })
    }
}
