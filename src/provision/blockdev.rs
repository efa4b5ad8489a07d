//! Whole block devices that a target is about to write raw (`block`, or a
//! `zfs` pool on a device): the checks that refuse one in use, an
//! exclusive claim held while storlab uses it, and its facts from sysfs.
//!
//! A device is in use when it or one of its partitions is mounted, is
//! active swap, has holders (device-mapper, md, LVM, bcache) or is claimed
//! exclusively by the kernel (an open with `O_EXCL` fails with `EBUSY`:
//! filesystems, md members, kernel ZFS pools).

use std::fs::{File, OpenOptions};
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use serde_json::{json, Value};

use super::mount;

/// The device's sysfs directory and its partitions' names.
struct Sys {
    dir: PathBuf,
    partitions: Vec<String>,
}

fn sys_of(dev: &Path) -> Result<Sys> {
    let name = dev
        .canonicalize()
        .with_context(|| format!("resolving {}", dev.display()))?
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .with_context(|| format!("{} has no device name", dev.display()))?;
    let dir = Path::new("/sys/class/block").join(&name);
    let partitions = std::fs::read_dir(&dir)
        .map(|d| {
            d.flatten()
                .filter(|e| e.path().join("partition").exists())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    Ok(Sys { dir, partitions })
}

/// Refuses a device that is missing, not a block device, or in use.
pub fn check_unused(dev: &Path) -> Result<()> {
    let meta = std::fs::metadata(dev)
        .with_context(|| format!("device {}: cannot use it", dev.display()))?;
    if !meta.file_type().is_block_device() {
        bail!("{} is not a block device", dev.display());
    }
    let sys = sys_of(dev)?;
    let mut parts = vec![dev.to_path_buf()];
    parts.extend(sys.partitions.iter().map(|p| Path::new("/dev").join(p)));
    for part in &parts {
        if let Some(at) = mount::device_mounted(part) {
            bail!(
                "refusing {}: {} is mounted on {at}; unmount it first",
                dev.display(),
                part.display()
            );
        }
    }
    if let Some(swap) = swap_on(&parts) {
        bail!(
            "refusing {}: {swap} is active swap; swapoff it first",
            dev.display()
        );
    }
    let dirs =
        std::iter::once(sys.dir.clone()).chain(sys.partitions.iter().map(|p| sys.dir.join(p)));
    for d in dirs {
        let holders = d.join("holders");
        if std::fs::read_dir(&holders).is_ok_and(|mut h| h.next().is_some()) {
            bail!(
                "refusing {}: it is in use by another device (see {})",
                dev.display(),
                holders.display()
            );
        }
    }
    for part in &parts {
        drop(claim(part)?);
    }
    Ok(())
}

/// Which of `parts` is active swap, from /proc/swaps.
fn swap_on(parts: &[PathBuf]) -> Option<String> {
    let swaps = std::fs::read_to_string("/proc/swaps").ok()?;
    let canon: Vec<PathBuf> = parts.iter().filter_map(|p| p.canonicalize().ok()).collect();
    swaps
        .lines()
        .skip(1)
        .filter_map(|l| l.split_whitespace().next())
        .find(|s| {
            Path::new(s)
                .canonicalize()
                .is_ok_and(|c| canon.contains(&c))
        })
        .map(str::to_string)
}

/// Opens `dev` exclusively: while the file is open, the kernel refuses to
/// mount it or hand it to another exclusive user. Plain opens (the io
/// jobs') still succeed.
pub fn claim(dev: &Path) -> Result<File> {
    OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_EXCL)
        .open(dev)
        .map_err(|e| match e.raw_os_error() {
            Some(libc::EBUSY) => anyhow::anyhow!(
                "refusing {}: the kernel reports it busy (mounted, a RAID or pool member, or claimed by another program)",
                dev.display()
            ),
            _ => anyhow::Error::new(e).context(format!("opening {}", dev.display())),
        })
}

/// The device's size in bytes.
pub fn size(dev: &Path) -> Result<u64> {
    let sys = sys_of(dev)?;
    read(&sys.dir, "size")
        .and_then(|s| s.parse::<u64>().ok())
        .map(|sectors| sectors * 512)
        .with_context(|| format!("reading the size of {}", dev.display()))
}

fn read(dir: &Path, rel: &str) -> Option<String> {
    std::fs::read_to_string(dir.join(rel))
        .ok()
        .map(|s| s.trim().to_string())
}

/// Model, size, block sizes, rotational, scheduler and write cache, from
/// sysfs; what a file could not say is left out.
pub fn facts(dev: &Path) -> Value {
    let Ok(sys) = sys_of(dev) else {
        return json!({ "device": dev.display().to_string() });
    };
    let d = &sys.dir;
    let number = |rel: &str| read(d, rel).and_then(|s| s.parse::<u64>().ok());
    json!({
        "device": dev.display().to_string(),
        "name": d.file_name().map(|n| n.to_string_lossy().into_owned()),
        "model": read(d, "device/model").filter(|s| !s.is_empty()).unwrap_or_else(|| "unknown".into()),
        "size_bytes": number("size").map(|s| s * 512),
        "logical_block_size": number("queue/logical_block_size"),
        "physical_block_size": number("queue/physical_block_size"),
        "rotational": read(d, "queue/rotational").map(|s| s == "1"),
        "scheduler": read(d, "queue/scheduler").map(|s| super::facts::active_scheduler(&s)),
        "write_cache": read(d, "queue/write_cache"),
        "partitions": sys.partitions,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_regular_file_is_refused() {
        let f = tempfile::NamedTempFile::new().unwrap();
        let e = check_unused(f.path()).unwrap_err().to_string();
        assert!(e.contains("not a block device"), "{e}");
        let e = check_unused(Path::new("/dev/storlab-none")).unwrap_err();
        assert!(format!("{e:#}").contains("cannot use it"), "{e:#}");
    }
}
