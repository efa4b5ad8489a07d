//! The ZFS command line as storlab uses it: whether ZFS is reachable, pools
//! listed, looked up and destroyed, properties read back, `zfs create`
//! argument vectors. The `zfs` target and the undoing of what it journaled
//! ([`super::resources`], `storlab cleanup`) both stand on it.

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::{bail, Context, Result};

use crate::provision::cmd;

/// Whether the host runs kernel ZFS (else zfs-fuse, when installed).
pub fn kernel_zfs() -> bool {
    Path::new("/sys/module/zfs").exists()
}

pub fn zfs_reachable() -> bool {
    cmd::succeeds("zpool", &["list", "-H"])
}

/// Whether pool `name` exists; an error when ZFS cannot be asked.
pub fn pool_exists(name: &str) -> Result<bool> {
    if !zfs_reachable() {
        bail!("cannot reach ZFS (is the zfs-fuse daemon or the zfs module running?); start it and run `storlab cleanup` again");
    }
    Ok(cmd::succeeds("zpool", &["list", "-H", "-o", "name", name]))
}

/// The pools ZFS serves (what zfs-fuse still serves, before it is stopped).
pub fn pool_names() -> Result<Vec<String>> {
    cmd::run("zpool", &["list", "-H", "-o", "name"])
        .map(|t| crate::provision::daemon::names_listed(&t, "no pools"))
}

/// Destroys pool `name` if it exists, retrying while it is busy.
pub fn destroy_pool(name: &str) -> Result<()> {
    if !pool_exists(name)? {
        return Ok(());
    }
    cmd::retry(15, 1000, || {
        cmd::run("zpool", &["destroy", "-f", name]).map(|_| ())
    })
    .with_context(|| format!("destroying pool {name}; run `zpool destroy -f {name}`"))
}

/// `zfs get all` on `dataset`, kept to `props`: property → (value, source).
/// (`all` because naming a property this ZFS lacks fails the whole call.)
pub fn get_properties(dataset: &str, props: &[&str]) -> Result<BTreeMap<String, (String, String)>> {
    let out = cmd::run(
        "zfs",
        &["get", "-H", "-o", "property,value,source", "all", dataset],
    )?;
    let mut all = parse_get(&out);
    all.retain(|k, _| props.contains(&k.as_str()));
    Ok(all)
}

fn parse_get(text: &str) -> BTreeMap<String, (String, String)> {
    text.lines()
        .filter_map(|l| {
            let mut f = l.split('\t');
            Some((
                f.next()?.to_string(),
                (f.next()?.to_string(), f.next().unwrap_or("").to_string()),
            ))
        })
        .collect()
}

/// The `zfs create` argument vector.
pub fn create_args(
    dataset: &str,
    mountpoint: &Path,
    props: &BTreeMap<String, String>,
) -> Vec<String> {
    let mut args = vec!["create".to_string(), "-o".into()];
    args.push(format!("mountpoint={}", mountpoint.display()));
    for (k, v) in props {
        args.push("-o".into());
        args.push(format!("{k}={v}"));
    }
    args.push(dataset.to_string());
    args
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zfs_get_output_is_parsed() {
        let g = parse_get("recordsize\t8K\tlocal\ncompression\ton\tlocal\natime\ton\tdefault\n");
        assert_eq!(g["recordsize"], ("8K".into(), "local".into()));
        assert_eq!(g["atime"].1, "default");
    }

    #[test]
    fn dataset_creation_is_an_argument_vector() {
        let mut props = BTreeMap::new();
        props.insert("recordsize".to_string(), "8k".to_string());
        let a = create_args("p/data", Path::new("/m"), &props);
        assert_eq!(
            a,
            vec![
                "create",
                "-o",
                "mountpoint=/m",
                "-o",
                "recordsize=8k",
                "p/data"
            ]
        );
    }
}
