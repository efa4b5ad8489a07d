//! storlab's naming scheme for what it creates on the host, in one place:
//! names made safe for paths and volume names, the names given to pools,
//! volumes, directories and mount points, and the check that a path or
//! name belongs to the scheme. The journal records only resources inside
//! the scheme and `storlab cleanup` undoes nothing outside it, so that a
//! damaged or forged journal cannot make storlab remove a user's files.

use std::path::{Component, Path};

use anyhow::{bail, Result};

/// Prefix of the working directory on each target.
pub const WORKDIR_PREFIX: &str = "storlab-work-";
/// Prefix of a tmpfs target's mount point.
pub const TMPFS_PREFIX: &str = "storlab-tmpfs-";
/// Prefix of a PostgreSQL socket directory moved to /tmp.
pub const PG_SOCKET_PREFIX: &str = "storlab-pg-";

/// `name` with every character but ASCII letters and digits replaced by
/// `sep`. Two names that differ only in the replaced characters become
/// one: [`collision_key`] lets the experiment refuse such pairs.
pub fn safe_component(name: &str, sep: char) -> String {
    name.chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { sep })
        .collect()
}

/// What a name becomes in every file, mount, pool and volume name storlab
/// derives from it; two targets (or workloads) with the same key would
/// share them.
pub fn collision_key(name: &str) -> String {
    safe_component(name, '_')
}

/// A name unique to this campaign process and target, for pools, volumes
/// and directories: `storlab<sep><pid><sep><target>`.
pub fn resource_name(sep: char, target: &str) -> String {
    format!(
        "storlab{sep}{}{sep}{}",
        std::process::id(),
        safe_component(target, sep)
    )
}

/// Whether `name` is a pool or volume name [`resource_name`] makes.
pub fn is_resource_name(name: &str, sep: char) -> bool {
    let Some(rest) = name.strip_prefix(&format!("storlab{sep}")) else {
        return false;
    };
    match rest.split_once(sep) {
        Some((pid, target)) => {
            !pid.is_empty() && pid.bytes().all(|b| b.is_ascii_digit()) && !target.is_empty()
        }
        None => false,
    }
}

/// Whether one path component is a name storlab gives to what it creates.
fn is_storlab_component(c: &str) -> bool {
    [WORKDIR_PREFIX, TMPFS_PREFIX, PG_SOCKET_PREFIX]
        .iter()
        .any(|p| c.len() > p.len() && c.starts_with(p))
        || is_resource_name(c, '-')
}

/// Fails unless `path` lies at or below a directory storlab names: absolute,
/// without `..`, and (followed through symbolic links, when it exists)
/// with a component such as `storlab-4242-gl` or `storlab-work-t`.
pub fn check_ours(path: &Path) -> Result<()> {
    check_ours_as_written(path)?;
    match path.canonicalize() {
        Ok(real) => named(&real),
        Err(_) => Ok(()),
    }
}

/// [`check_ours`] of a path as it is written, without following it: a
/// path on another host, which that host checks for links when it undoes it.
pub fn check_ours_as_written(path: &Path) -> Result<()> {
    if !path.is_absolute() || path.components().any(|c| c == Component::ParentDir) {
        bail!(
            "{} is not an absolute path without `..`; storlab does not touch it",
            path.display()
        );
    }
    named(path)
}

fn named(path: &Path) -> Result<()> {
    let named = path.components().any(|c| match c {
        Component::Normal(s) => is_storlab_component(&s.to_string_lossy()),
        _ => false,
    });
    if !named {
        bail!(
            "{} is not inside a directory storlab names (storlab-<pid>-<target>, storlab-work-…, storlab-tmpfs-…, storlab-pg-…); storlab does not touch it — remove it by hand if it is yours",
            path.display()
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_differing_only_in_punctuation_collide() {
        assert_eq!(collision_key("x-y"), collision_key("x.y"));
        assert_ne!(collision_key("x-y"), collision_key("xy"));
        assert_eq!(safe_component("a b/c", '-'), "a-b-c");
    }

    #[test]
    fn only_storlab_names_are_ours() {
        let pid = std::process::id();
        assert!(is_resource_name(&resource_name('-', "gl"), '-'));
        assert!(is_resource_name(&resource_name('_', "z"), '_'));
        assert!(!is_resource_name("tank", '_'));
        assert!(!is_resource_name("storlab_x_y", '_'));
        for good in [
            format!("/var/tmp/storlab-{pid}-gl/mnt"),
            "/srv/test/storlab-work-a".to_string(),
            format!("/tmp/storlab-tmpfs-ram-{pid}"),
            "/tmp/storlab-pg-00ff".to_string(),
        ] {
            assert!(check_ours(Path::new(&good)).is_ok(), "{good}");
        }
        for bad in [
            "/",
            "/etc",
            "/home/me/data",
            "/var/tmp/storlab-work-",
            "relative/storlab-work-a",
            "/var/tmp/storlab-work-a/../../etc",
            "/tmp/storlab-test-x/file",
        ] {
            assert!(check_ours(Path::new(bad)).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_link_named_like_ours_pointing_elsewhere_is_not_ours() {
        let d = tempfile::tempdir().unwrap();
        let victim = d.path().join("victim");
        std::fs::create_dir(&victim).unwrap();
        let link = d.path().join("storlab-work-x");
        std::os::unix::fs::symlink(&victim, &link).unwrap();
        assert!(check_ours(&link).is_err());
    }
}
