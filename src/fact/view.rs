//! Typed views of stored facts, read once through the catalogue's
//! declarations: a target's ([`TargetFacts`]) and the host's
//! ([`Environment`]). A fact a store lacks (an older storlab's, another
//! kind's) is `None` or empty, never an error.

use std::collections::BTreeMap;

use serde_json::Value;

use super::catalogue as f;

/// A block device as a target's facts describe it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct BlockDevice {
    pub name: Option<String>,
    pub model: Option<String>,
    pub rotational: Option<bool>,
    pub scheduler: Option<String>,
}

impl BlockDevice {
    fn read(v: &Value) -> Option<BlockDevice> {
        v.is_object().then(|| BlockDevice {
            name: text(v.get("name")),
            model: text(v.get("model")),
            rotational: v.get("rotational").and_then(Value::as_bool),
            scheduler: text(v.get("scheduler")),
        })
    }
}

/// A ZFS property as `zfs get` reads it back.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ZfsProperty {
    pub value: Option<String>,
    /// `local`, `default`, `inherited from …`; `-` when it has none.
    pub source: Option<String>,
}

/// What was read back from a target once it was provisioned.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TargetFacts {
    pub fs_type: Option<String>,
    pub mount_point: Option<String>,
    pub mount_source: Option<String>,
    pub mount_options: Option<String>,
    pub super_options: Option<String>,
    pub block_device: Option<BlockDevice>,
    /// The disk under the directory holding the target's image or bricks.
    pub device_beneath: Option<BlockDevice>,
    pub size_bytes: Option<f64>,
    pub free_bytes: Option<f64>,
    pub allocation: Option<String>,
    pub image_size_bytes: Option<f64>,
    pub image_allocated_bytes: Option<f64>,
    /// Gluster's volume type (`Replicate`, `Disperse`, `Distribute`).
    pub volume_type: Option<String>,
    pub zfs_properties: BTreeMap<String, ZfsProperty>,
    pub effective_options: BTreeMap<String, String>,
    pub zfs_flavour: Option<String>,
    /// Every `*_version` fact, by program (`gluster`, `zfs`, `mkfs`).
    pub versions: BTreeMap<String, String>,
}

impl TargetFacts {
    /// The typed view of a target's stored facts.
    pub fn read(facts: &Value) -> TargetFacts {
        let beneath = [&f::IMAGE_DIR_FACTS, &f::BRICK_DIR_FACTS]
            .into_iter()
            .filter_map(|d| d.get(facts))
            .find_map(|under| f::BLOCK_DEVICE.get(under).and_then(BlockDevice::read));
        TargetFacts {
            fs_type: f::FS_TYPE.text(facts),
            mount_point: f::MOUNT_POINT.text(facts),
            mount_source: f::MOUNT_SOURCE.text(facts),
            mount_options: f::MOUNT_OPTIONS.text(facts),
            super_options: f::SUPER_OPTIONS.text(facts),
            block_device: f::BLOCK_DEVICE.get(facts).and_then(BlockDevice::read),
            device_beneath: beneath,
            size_bytes: f::SIZE_BYTES.number(facts),
            free_bytes: f::FREE_BYTES.number(facts),
            allocation: f::ALLOCATION.text(facts),
            image_size_bytes: f::IMAGE_SIZE_BYTES.number(facts),
            image_allocated_bytes: f::IMAGE_ALLOCATED_BYTES.number(facts),
            volume_type: f::VOLUME_INFO.get(facts).and_then(|v| text(v.get("Type"))),
            zfs_properties: table(facts, &f::ZFS_PROPERTIES, |v| ZfsProperty {
                value: text(v.get("value")),
                source: text(v.get("source")),
            }),
            effective_options: table(facts, &f::EFFECTIVE_OPTIONS, |v| {
                text(Some(v)).unwrap_or_else(|| v.to_string())
            }),
            zfs_flavour: f::ZFS_FLAVOUR.text(facts),
            versions: versions(facts),
        }
    }

    /// What the setting `key` (a Gluster option, a ZFS property) reads back
    /// as on this target.
    pub fn setting(&self, key: &str) -> Option<&str> {
        self.effective_options
            .get(key)
            .map(String::as_str)
            .or_else(|| self.zfs_properties.get(key)?.value.as_deref())
    }
}

/// The host's facts, as a campaign stored them.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Environment {
    pub hostname: Option<String>,
    pub cpu_model: Option<String>,
    pub cpu_count: Option<u64>,
    pub memory_bytes: Option<f64>,
    pub kernel: Option<String>,
    pub distribution: Option<String>,
    pub storlab_version: Option<String>,
    pub root: Option<bool>,
}

impl Environment {
    pub fn read(env: &Value) -> Environment {
        Environment {
            hostname: f::HOSTNAME.text(env),
            cpu_model: f::CPU_MODEL.text(env),
            cpu_count: f::CPU_COUNT.get(env).and_then(Value::as_u64),
            memory_bytes: f::MEMORY_BYTES.number(env),
            kernel: f::KERNEL.text(env),
            distribution: f::DISTRIBUTION.text(env),
            storlab_version: f::STORLAB_VERSION.text(env),
            root: f::ROOT.flag(env),
        }
    }
}

fn text(v: Option<&Value>) -> Option<String> {
    v.and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .map(String::from)
}

/// A table fact, each value read by `read`.
fn table<T>(
    facts: &Value,
    def: &super::FactDef,
    read: impl Fn(&Value) -> T,
) -> BTreeMap<String, T> {
    def.get(facts)
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
        .map(|(k, v)| (k.clone(), read(v)))
        .collect()
}

/// Every `*_version` fact of a target, by program.
fn versions(facts: &Value) -> BTreeMap<String, String> {
    facts
        .as_object()
        .into_iter()
        .flatten()
        .filter_map(|(k, v)| {
            Some((
                k.strip_suffix(f::VERSION.name)?.to_string(),
                v.as_str()?.to_string(),
            ))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_loop_targets_facts_read_typed_and_absent_ones_are_none() {
        let facts = json!({
            "fs_type": "ext4",
            "mount_options": "rw,noatime",
            "super_options": "rw,data=writeback",
            "block_device": {"name": "loop0", "model": null, "rotational": false},
            "image_dir_facts": {"block_device": {"name": "vda", "model": "QEMU HARDDISK", "rotational": true, "scheduler": "mq-deadline"}},
            "image_size_bytes": 1073741824u64,
            "mkfs_version": "mke2fs 1.47.0",
            "zfs_properties": {"recordsize": {"value": "8K", "source": "local"}},
            "free_bytes": "not a number",
        });
        let t = TargetFacts::read(&facts);
        assert_eq!(t.fs_type.as_deref(), Some("ext4"));
        assert_eq!(
            t.block_device.as_ref().unwrap().name.as_deref(),
            Some("loop0")
        );
        assert_eq!(t.block_device.as_ref().unwrap().model, None);
        assert_eq!(t.device_beneath.as_ref().unwrap().rotational, Some(true));
        assert_eq!(t.image_size_bytes, Some(1073741824.0));
        assert_eq!(
            t.versions.get("mkfs").map(String::as_str),
            Some("mke2fs 1.47.0")
        );
        assert_eq!(t.setting("recordsize"), Some("8K"));
        assert_eq!(t.free_bytes, None, "a fact of the wrong type is absent");
        assert_eq!(t.volume_type, None);
        assert_eq!(TargetFacts::read(&json!(null)), TargetFacts::default());
    }

    #[test]
    fn the_environment_reads_typed() {
        let e = Environment::read(
            &json!({"hostname": "h", "cpu_count": 2, "root": true, "memory_bytes": 1024}),
        );
        assert_eq!(e.hostname.as_deref(), Some("h"));
        assert_eq!(
            (e.cpu_count, e.root, e.memory_bytes),
            (Some(2), Some(true), Some(1024.0))
        );
        assert_eq!(e.kernel, None);
    }
}
