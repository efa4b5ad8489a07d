//! What the image-backed targets (`loop`, `zfs`, and `gluster` for its
//! brick directory) share: the image parameters and the checks made before
//! an image or a brick directory is created.

use std::path::Path;

use anyhow::{bail, Result};

use crate::params::{choices, declare, Fault};

declare! {
    /// The image parameters of every image-backed target (loop, zfs).
    pub struct ImageParams {
        allocation: choice(Allocation) = "thin" => "thin: a sparse image; preallocated: every block reserved with fallocate",
        dir: string = "/var/tmp" => "existing directory that holds the image (storlab makes its own subdirectory)",
    }
}

choices! {
    /// How an image file's blocks are allocated.
    pub enum Allocation { Thin = "thin", Preallocated = "preallocated" }
}

impl ImageParams {
    pub fn validate(&self) -> Result<(), Fault> {
        super::dir::validate_holder_dir("dir", &self.dir)
    }

    pub fn preallocated(&self) -> bool {
        self.allocation == Allocation::Preallocated
    }
}

/// Checks shared by image-backed targets: root, and a usable directory.
pub fn preflight_image_dir(dir: &Path, base: &Path, image_bytes: u64) -> Result<()> {
    if !crate::host::is_root() {
        bail!("it needs root (losetup, mkfs, mount); run storlab as root");
    }
    super::dir::check_is_dir(dir)?;
    if base.exists() {
        bail!(
            "{} already exists; storlab creates it itself and never reuses one (run `storlab cleanup`, or remove it)",
            base.display()
        );
    }
    if let Some((_, free)) = crate::provision::facts::space(dir) {
        if image_bytes > free {
            bail!(
                "{} has {} MiB free, the image needs {} MiB; lower `size` or choose another `dir`",
                dir.display(),
                free >> 20,
                image_bytes >> 20
            );
        }
    }
    Ok(())
}
