//! The parameters of a `vm-disk` target, declared once, and their
//! cross-checks: a preallocation the format has, qcow2's own options only
//! on qcow2, an aio engine the cache mode allows, and QEMU's gluster
//! driver only without a directory or `on`.

use super::qemu_daemon::CACHE_MODES;
use crate::params::{choices, declare, Fault};

use crate::targets::loopfs::FILESYSTEMS;

declare! {
    /// The parameters of a `vm-disk` target.
    pub struct VmDiskParams {
        format: choice(Format) = "qcow2" => "image format, made by qemu-img",
        preallocation: choice(Preallocation) = "off" => "qemu-img's preallocation: off (thin), metadata (qcow2 only), falloc, full",
        size: size = "1G" => "virtual size of the disk (xfs needs at least 300M)",
        cluster_size: size => "qcow2 cluster size, a power of two from 512 to 2M [default: QEMU's, 64k]",
        lazy_refcounts: bool => "qcow2 lazy refcounts: refcount updates deferred until the image is closed [default: QEMU's, off]",
        cache: one_of(CACHE_MODES) = "none" => "QEMU cache mode, as -drive cache= (none: O_DIRECT on the image, oVirt's default)",
        aio: choice(Aio) => "QEMU aio engine of the image file: threads, native (needs cache none or directsync) or io_uring [default: QEMU's, threads]",
        discard: bool = "false" => "guest discards (TRIM) reach the image and free its space (discard=unmap)",
        fs: one_of(FILESYSTEMS) = "ext4" => "the guest's filesystem, made on the disk",
        mkfs_options: list => "extra mkfs arguments, e.g. [\"-b\", \"4096\"]",
        mount_options: list => "mount options of the guest's filesystem, checked against mountinfo, e.g. [\"noatime\"]",
        dir: string = "/var/tmp" => "existing directory that holds the image (storlab makes its own subdirectory)",
        on: string => "another target whose working directory holds the image (a Gluster volume's FUSE mount, as oVirt's storage domain; or loop, zfs, dir, tmpfs), instead of `dir`",
        gluster: string => "a gluster target whose volume holds the image, reached through QEMU's own gluster driver (libgfapi) instead of the FUSE mount",
    }
}

choices! {
    /// The image formats.
    pub enum Format { Qcow2 = "qcow2", Raw = "raw" }
}

choices! {
    /// qemu-img's preallocation modes.
    pub enum Preallocation { Off = "off", Metadata = "metadata", Falloc = "falloc", Full = "full" }
}

choices! {
    /// The file driver's aio engines.
    pub enum Aio { Threads = "threads", Native = "native", IoUring = "io_uring" }
}

/// Smallest disk each guest filesystem's mkfs accepts.
pub fn min_size(fs: &str) -> u64 {
    match fs {
        "xfs" => 300 << 20,
        "btrfs" => 114 << 20,
        _ => 16 << 20,
    }
}

impl VmDiskParams {
    /// The most the image file can take: the disk's size, and for qcow2
    /// its metadata — an 8-byte L2 entry and a 2-byte refcount per
    /// cluster, and a few clusters of header, L1 and refcount table.
    pub fn image_bytes(&self) -> u64 {
        if self.format != Format::Qcow2 {
            return self.size;
        }
        let cluster = self.cluster_size.unwrap_or(64 << 10).max(512);
        let clusters = self.size.div_ceil(cluster);
        self.size
            .saturating_add(clusters.saturating_mul(10))
            .saturating_add(cluster.saturating_mul(4))
    }

    /// Cross-parameter checks: the key at fault and why.
    pub fn check(&self) -> Result<(), Fault> {
        let qcow2 = self.format == Format::Qcow2;
        if !qcow2 && self.preallocation == Preallocation::Metadata {
            return Err((
                "preallocation",
                "a raw image has no metadata to preallocate; use off, falloc or full, or format = \"qcow2\"".into(),
            ));
        }
        if !qcow2 && self.cluster_size.is_some() {
            return Err((
                "cluster_size",
                "a raw image has no clusters; remove cluster_size or use format = \"qcow2\"".into(),
            ));
        }
        if !qcow2 && self.lazy_refcounts.is_some() {
            return Err((
                "lazy_refcounts",
                "a raw image has no refcounts; remove lazy_refcounts or use format = \"qcow2\""
                    .into(),
            ));
        }
        if let Some(c) = self.cluster_size {
            if !c.is_power_of_two() || !(512..=2 << 20).contains(&c) {
                return Err((
                    "cluster_size",
                    format!("qcow2 clusters are a power of two from 512 to 2M, not {c} bytes"),
                ));
            }
        }
        if self.aio == Some(Aio::Native) && !matches!(self.cache.as_str(), "none" | "directsync") {
            return Err((
                "aio",
                format!(
                    "aio = \"native\" needs O_DIRECT, which cache = \"{}\" does not use; use cache = \"none\" or \"directsync\", or aio = \"threads\"",
                    self.cache
                ),
            ));
        }
        if self.gluster.is_some() && self.aio.is_some() {
            return Err((
                "aio",
                "QEMU's gluster driver has no aio engine (it is the file driver's); remove aio, or stand on the volume's FUSE mount with `on`".into(),
            ));
        }
        if self.gluster.is_some() && self.on.is_some() {
            return Err((
                "gluster",
                "give either `on` (the image on the target's mount) or `gluster` (through QEMU's gluster driver), not both".into(),
            ));
        }
        let fs = self.fs.as_str();
        if self.size < min_size(fs) {
            return Err((
                "size",
                format!(
                    "{fs} needs a disk of at least {} MiB; raise `size`",
                    min_size(fs) >> 20
                ),
            ));
        }
        crate::targets::dir::validate_holder_dir("dir", &self.dir)
    }

    /// The target this one stands on, by either key.
    pub fn under(&self) -> Option<&str> {
        self.on.as_deref().or(self.gluster.as_deref())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::params::{Params, Value};

    fn check(extra: &[(&str, Value)]) -> Result<(), Fault> {
        let mut p = Params::defaults(VmDiskParams::PARAMS);
        for (k, v) in extra {
            p.set(k, v.clone());
        }
        VmDiskParams::from_params(&p)?.check()
    }

    fn s(v: &str) -> Value {
        Value::Str(v.into())
    }

    #[test]
    fn what_the_format_or_cache_mode_does_not_allow_points_at_its_key() {
        let raw = ("format", s("raw"));
        let bad = |e: &[(&str, Value)]| check(e).unwrap_err().0;
        assert_eq!(
            bad(&[raw.clone(), ("preallocation", s("metadata"))]),
            "preallocation"
        );
        assert_eq!(
            bad(&[raw.clone(), ("cluster_size", Value::Size(65536))]),
            "cluster_size"
        );
        assert_eq!(
            bad(&[raw.clone(), ("lazy_refcounts", Value::Bool(true))]),
            "lazy_refcounts"
        );
        assert_eq!(bad(&[("cluster_size", Value::Size(3000))]), "cluster_size");
        assert_eq!(
            bad(&[("cluster_size", Value::Size(4 << 20))]),
            "cluster_size"
        );
        assert_eq!(
            bad(&[("aio", s("native")), ("cache", s("writeback"))]),
            "aio"
        );
        assert_eq!(bad(&[("gluster", s("gl")), ("aio", s("threads"))]), "aio");
        assert_eq!(bad(&[("gluster", s("gl")), ("on", s("gl"))]), "gluster");
        assert_eq!(
            bad(&[("fs", s("xfs")), ("size", Value::Size(100 << 20))]),
            "size"
        );
        assert!(check(&[raw, ("preallocation", s("full"))]).is_ok());
        assert!(check(&[("aio", s("native")), ("cache", s("directsync"))]).is_ok());
        assert!(check(&[("cluster_size", Value::Size(2 << 20))]).is_ok());
    }
}
