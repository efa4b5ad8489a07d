//! Facts a target records about itself: filesystem, mount source and
//! options from mountinfo, the backing block device (model, rotational,
//! scheduler) where there is one, and free space.

use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use super::mountinfo::mount_of;
use crate::fact::catalogue as f;

/// Facts about the filesystem holding `path`.
pub fn path_facts(path: &Path) -> Value {
    let canonical = path.canonicalize().unwrap_or_else(|_| path.to_path_buf());
    let mut facts = json!({ (f::PATH.name): canonical.display().to_string() });
    if let Some(m) = mount_of(path) {
        facts[f::FS_TYPE.name] = json!(m.fs_type);
        facts[f::MOUNT_POINT.name] = json!(m.mount_point);
        facts[f::MOUNT_SOURCE.name] = json!(m.source);
        facts[f::MOUNT_OPTIONS.name] = json!(m.mount_options);
        facts[f::SUPER_OPTIONS.name] = json!(m.super_options);
        if let Some(dev) = block_device(m.major, m.minor) {
            facts[f::BLOCK_DEVICE.name] = dev;
        }
    }
    if let Some((total, free)) = space(path) {
        facts[f::SIZE_BYTES.name] = json!(total);
        facts[f::FREE_BYTES.name] = json!(free);
    }
    facts
}

/// Total and available bytes of the filesystem holding `path` (statvfs).
pub fn space(path: &Path) -> Option<(u64, u64)> {
    let st = super::mount::statvfs(path).ok()?;
    let frsize = st.f_frsize as u64;
    Some((st.f_blocks as u64 * frsize, st.f_bavail as u64 * frsize))
}

/// The whole disk behind a device number, from sysfs.
fn block_device(major: u32, minor: u32) -> Option<Value> {
    if major == 0 {
        return None; // anonymous devices: tmpfs, overlay, FUSE…
    }
    let sys = std::fs::canonicalize(format!("/sys/dev/block/{major}:{minor}")).ok()?;
    let disk: PathBuf = if sys.join("partition").exists() {
        sys.parent()?.to_path_buf()
    } else {
        sys
    };
    let name = disk.file_name()?.to_string_lossy().into_owned();
    let read = |rel: &str| {
        std::fs::read_to_string(disk.join(rel))
            .ok()
            .map(|s| s.trim().to_string())
    };
    Some(json!({
        "name": name,
        "model": read("device/model").filter(|s| !s.is_empty()).unwrap_or_else(|| "unknown".into()),
        "rotational": read("queue/rotational").map(|s| s == "1"),
        "scheduler": read("queue/scheduler").map(|s| active_scheduler(&s)),
        "size_bytes": read("size").and_then(|s| s.parse::<u64>().ok()).map(|sectors| sectors * 512),
    }))
}

/// `mq-deadline kyber [none]` → `none`.
pub(crate) fn active_scheduler(s: &str) -> String {
    s.split_whitespace()
        .find(|w| w.starts_with('['))
        .map(|w| w.trim_matches(|c| c == '[' || c == ']').to_string())
        .unwrap_or_else(|| s.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scheduler_in_brackets_is_active() {
        assert_eq!(active_scheduler("mq-deadline kyber [none]"), "none");
        assert_eq!(active_scheduler("none"), "none");
    }

    #[test]
    fn facts_of_a_real_directory() {
        let f = path_facts(&std::env::temp_dir());
        assert!(f["fs_type"].is_string(), "{f}");
        assert!(f["free_bytes"].as_u64().is_some(), "{f}");
    }
}
