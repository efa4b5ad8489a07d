//! Disk images through QEMU's block layer: made with `qemu-img create`
//! (format, preallocation, qcow2's cluster size and lazy refcounts) and
//! read back with `qemu-img info` — what the image is and how much of it
//! is allocated. An image is a file, or a path in a Gluster volume that
//! QEMU reaches through its own gluster driver (libgfapi).

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use serde_json::{json, Value};

use crate::provision::cmd;

/// Where an image lives, as QEMU reaches it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Location {
    /// A file on a filesystem of this host (a Gluster volume's FUSE mount
    /// included).
    File(PathBuf),
    /// A path inside a Gluster volume, reached with libgfapi.
    Gluster {
        host: String,
        volume: String,
        /// Relative to the volume's root, without a leading `/`.
        path: String,
    },
}

impl Location {
    /// The filename qemu-img takes: the path, or `gluster://HOST/VOL/PATH`.
    pub fn filename(&self) -> String {
        match self {
            Location::File(p) => p.display().to_string(),
            Location::Gluster { host, volume, path } => {
                format!("gluster://{host}/{volume}/{path}")
            }
        }
    }
}

/// What `qemu-img create` makes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImageSpec {
    /// `qcow2` or `raw`.
    pub format: String,
    /// `off`, `metadata`, `falloc` or `full`.
    pub preallocation: String,
    /// The virtual size, in bytes.
    pub size: u64,
    /// qcow2 only.
    pub cluster_size: Option<u64>,
    /// qcow2 only.
    pub lazy_refcounts: Option<bool>,
}

/// The argument vector of `qemu-img create` for `spec` at `location`.
pub fn create_args(location: &Location, spec: &ImageSpec) -> Vec<String> {
    let mut opts = vec![format!("preallocation={}", spec.preallocation)];
    if let Some(c) = spec.cluster_size {
        opts.push(format!("cluster_size={c}"));
    }
    if let Some(l) = spec.lazy_refcounts {
        opts.push(format!("lazy_refcounts={}", if l { "on" } else { "off" }));
    }
    vec![
        "create".into(),
        "-q".into(),
        "-f".into(),
        spec.format.clone(),
        "-o".into(),
        opts.iter().map(|o| escape(o)).collect::<Vec<_>>().join(","),
        location.filename(),
        spec.size.to_string(),
    ]
}

/// Makes the image (which must not exist: a file is checked first).
pub fn create(location: &Location, spec: &ImageSpec) -> Result<()> {
    if let Location::File(p) = location {
        if p.exists() {
            anyhow::bail!(
                "{} exists already; storlab never writes over an image",
                p.display()
            );
        }
    }
    cmd::run("qemu-img", &create_args(location, spec)).with_context(|| {
        format!(
            "creating the {} image {} ({} preallocation)",
            spec.format,
            location.filename(),
            spec.preallocation
        )
    })?;
    Ok(())
}

/// `qemu-img info` of the image, as JSON, read while the image may be in
/// use (`-U`: no lock taken, so it never disturbs the daemon serving it).
pub fn info(location: &Location, format: &str) -> Result<Value> {
    let filename = location.filename();
    let out = cmd::run(
        "qemu-img",
        &[
            "info",
            "-U",
            "--output=json",
            "-f",
            format,
            filename.as_str(),
        ],
    )
    .with_context(|| format!("reading the image {filename}"))?;
    serde_json::from_str(&out).with_context(|| format!("qemu-img info of {filename}: {out}"))
}

/// The facts of an image from its `qemu-img info`: format, virtual size,
/// the bytes allocated to it where it lives, cluster size and the qcow2
/// header's own settings.
pub fn facts_of(info: &Value) -> Value {
    let specific = &info["format-specific"]["data"];
    json!({
        "image_format": info["format"],
        "image_virtual_bytes": info["virtual-size"],
        "image_allocated_bytes": info["actual-size"],
        "image_cluster_bytes": info["cluster-size"],
        "image_lazy_refcounts": specific["lazy-refcounts"],
        "image_compat": specific["compat"],
        "image_refcount_bits": specific["refcount-bits"],
    })
}

/// The bytes allocated to the image (qemu-img's `actual-size`).
pub fn allocated_bytes(location: &Location, format: &str) -> Option<u64> {
    info(location, format).ok()?["actual-size"].as_u64()
}

/// QEMU's version, from `qemu-img --version`'s first line.
pub fn version() -> Option<String> {
    cmd::version("qemu-img", &["--version"])
}

/// A value for QEMU's option syntax: commas doubled.
pub fn escape(value: &str) -> String {
    value.replace(',', ",,")
}

/// A path as one QEMU option value.
pub fn escape_path(path: &Path) -> String {
    escape(&path.display().to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn create_says_every_choice_and_escapes_commas() {
        let spec = ImageSpec {
            format: "qcow2".into(),
            preallocation: "off".into(),
            size: 1 << 30,
            cluster_size: Some(65536),
            lazy_refcounts: Some(true),
        };
        let a = create_args(&Location::File("/v/storlab-1-vm/disk.qcow2".into()), &spec);
        assert_eq!(
            a,
            [
                "create",
                "-q",
                "-f",
                "qcow2",
                "-o",
                "preallocation=off,cluster_size=65536,lazy_refcounts=on",
                "/v/storlab-1-vm/disk.qcow2",
                "1073741824"
            ]
        );
        let g = Location::Gluster {
            host: "h1".into(),
            volume: "storlab-1-gl".into(),
            path: "storlab-work-gl/storlab-1-vm/disk.raw".into(),
        };
        assert_eq!(
            g.filename(),
            "gluster://h1/storlab-1-gl/storlab-work-gl/storlab-1-vm/disk.raw"
        );
        assert_eq!(escape("a,b"), "a,,b");
    }

    #[test]
    fn facts_come_from_qemu_img_info() {
        let info: Value = serde_json::from_str(
            r#"{"virtual-size": 536870912, "filename": "thin.qcow2", "cluster-size": 65536,
                "format": "qcow2", "actual-size": 200704,
                "format-specific": {"type": "qcow2", "data": {"compat": "1.1",
                "lazy-refcounts": true, "refcount-bits": 16, "corrupt": false}},
                "dirty-flag": false}"#,
        )
        .unwrap();
        let f = facts_of(&info);
        assert_eq!(f["image_allocated_bytes"], 200704);
        assert_eq!(f["image_virtual_bytes"], 536870912);
        assert_eq!(f["image_cluster_bytes"], 65536);
        assert_eq!(f["image_lazy_refcounts"], true);
        assert_eq!(f["image_format"], "qcow2");
    }
}
