//! The options an experiment hands to mkfs, mount, `zfs create` and
//! `gluster volume set` may tune what storlab creates, never name another
//! file or device: `mkfs_options = ["/dev/vdb"]` would make mkfs.btrfs put
//! that device into the new filesystem, `-J device=/dev/vdb` give ext4 an
//! external journal on it, `logdev=/dev/vdb` make XFS write its log there,
//! `mountpoint=/etc` mount a dataset over /etc. storlab gives these
//! programs the one device or directory it created itself; so any option
//! (or part of one, between `,`, `=` and `:`) that names a path — an
//! absolute or home path, one with a `/`, or a name that exists relative to
//! the current directory — is refused, naming the option.

use std::path::Path;

use anyhow::{bail, Result};

/// ZFS properties that name a place on the host rather than tune the
/// dataset; storlab sets the dataset's mount point itself.
const ZFS_PLACE_PROPERTIES: &[&str] = &["mountpoint", "sharenfs", "sharesmb", "keylocation"];

/// Fails when an option in `values` (the parameter `param`) names a path.
pub fn refuse_paths(param: &str, values: &[String]) -> Result<()> {
    for value in values {
        if let Some(part) = path_in(value) {
            bail!(
                "`{param}`: `{value}` names a path or device (`{part}`); storlab gives mkfs and mount only what it created itself, so an option naming another file or device is refused — remove it"
            );
        }
    }
    Ok(())
}

/// Fails when a `key = value` option (ZFS properties, Gluster volume
/// options) names a path, or is a ZFS property that places the dataset.
pub fn refuse_paths_in_map<'a>(
    param: &str,
    pairs: impl IntoIterator<Item = (&'a String, &'a String)>,
    zfs: bool,
) -> Result<()> {
    for (k, v) in pairs {
        if zfs && ZFS_PLACE_PROPERTIES.contains(&k.to_ascii_lowercase().as_str()) {
            bail!("`{param}`: `{k}` places the dataset on the host; storlab mounts it in its own directory — remove it");
        }
        refuse_paths(param, &[format!("{k}={v}")])?;
    }
    Ok(())
}

/// The first part of `value` that names a path, if any.
fn path_in(value: &str) -> Option<&str> {
    value
        .split([',', '=', ':'])
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .find(|p| {
            (p.contains('/') && !is_cidr(p))
                || p.starts_with('~')
                || p.starts_with('.')
                || Path::new(p).exists()
        })
}

/// An IPv4 network such as `192.168.1.0/24` (Gluster's `auth.allow`).
fn is_cidr(p: &str) -> bool {
    let Some((addr, bits)) = p.split_once('/') else {
        return false;
    };
    addr.parse::<std::net::Ipv4Addr>().is_ok() && bits.parse::<u8>().is_ok_and(|b| b <= 32)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(items: &[&str]) -> Vec<String> {
        items.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn devices_and_paths_are_refused_wherever_they_hide() {
        for bad in [
            "/dev/loop0",
            "device=/dev/vdb",
            "logdev=/dev/sdb",
            "size=32m,device=../x",
            "~/file",
            "root_dir:/etc",
            "..",
        ] {
            let e = refuse_paths("mkfs_options", &v(&["-J", bad])).unwrap_err();
            assert!(e.to_string().contains("`mkfs_options`"), "{e}");
        }
        refuse_paths(
            "mkfs_options",
            &v(&[
                "-b",
                "4096",
                "-O",
                "^has_journal",
                "-E",
                "stride=16,stripe_width=64",
                "-L",
                "data",
            ]),
        )
        .unwrap();
        refuse_paths(
            "mount_options",
            &v(&["noatime", "data=writeback", "barrier=0"]),
        )
        .unwrap();
        refuse_paths("options", &v(&["auth.allow=10.0.0.0/8"])).unwrap();
    }

    #[test]
    fn zfs_properties_that_place_the_dataset_are_refused() {
        let mut m = std::collections::BTreeMap::new();
        m.insert("recordsize".to_string(), "8k".to_string());
        refuse_paths_in_map("properties", &m, true).unwrap();
        m.insert("mountpoint".to_string(), "/etc".to_string());
        assert!(refuse_paths_in_map("properties", &m, true).is_err());
        m.clear();
        m.insert("diagnostics.brick-log-file".into(), "/etc/passwd".into());
        assert!(refuse_paths_in_map("options", &m, false).is_err());
    }
}
