//! The cache of Debian roots storlab built, under its state directory:
//!
//! ```text
//! STATE/roots/KEY/tree/           a complete root (debootstrap, minbase)
//! STATE/roots/KEY/root.json       what it is: suite, packages, versions, size
//! STATE/roots/KEY.lock            shared while a campaign uses it, exclusive
//!                                 while it is built or removed
//! STATE/roots/storlab-PID-KEY/    a build in progress (journaled; renamed to
//!                                 KEY only once built and checked)
//! ```
//!
//! KEY names the suite, the software and a hash of the package set
//! (`debian-trixie-gluster-3f2a9c01`): another package set is another
//! root. A root is only ever used once its `root.json` is there, and that
//! is written inside the build directory before it is renamed into place,
//! so a half-built root (a killed build) is never reused: its directory
//! keeps its `storlab-PID-` name, which `storlab cleanup` removes. Nothing
//! but `storlab cleanup --roots --remove` deletes a complete root, and that
//! refuses one a campaign holds.

use std::fs::File;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use serde::{Deserialize, Serialize};
use sha1::{Digest, Sha1};

use super::software::Software;
use crate::provision::hostlock::flock;
use crate::provision::journal::state_dir;

/// What a complete root is, written last into its directory.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    pub suite: String,
    pub software: Software,
    pub packages: Vec<String>,
    pub mirror: String,
    /// When it was built (RFC 3339) and how long it took.
    pub built: String,
    pub build_seconds: f64,
    /// The release its programs report (`11.1`).
    pub version: String,
    /// Its size on disk when built, in bytes.
    pub bytes: u64,
    pub storlab_version: String,
}

/// The cache in a state directory.
#[derive(Debug, Clone)]
pub struct Cache {
    dir: PathBuf,
}

/// One complete root of the cache, as `storlab cleanup --roots` lists it.
#[derive(Debug, Clone)]
pub struct Entry {
    pub key: String,
    pub dir: PathBuf,
    pub manifest: Manifest,
    /// Its size now (du), in bytes.
    pub bytes: u64,
    /// Whether a campaign holds it.
    pub in_use: bool,
}

impl Cache {
    /// The cache: `$STORLAB_ROOTS` when set (one cache for several state
    /// directories), else `roots` in storlab's state directory.
    pub fn here() -> Cache {
        match std::env::var_os("STORLAB_ROOTS").filter(|d| !d.is_empty()) {
            Some(d) => Cache::at(PathBuf::from(d)),
            None => Cache::at(state_dir().join("roots")),
        }
    }

    pub fn at(dir: PathBuf) -> Cache {
        Cache { dir }
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The key of a root of `suite` with `software`'s packages.
    pub fn key(suite: &str, software: Software) -> String {
        let mut packages: Vec<&str> = software.packages().to_vec();
        packages.sort();
        let mut h = Sha1::new();
        h.update(suite.as_bytes());
        for p in &packages {
            h.update(b"\0");
            h.update(p.as_bytes());
        }
        let hex: String = h.finalize()[..4]
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        format!("debian-{suite}-{}-{hex}", software.label())
    }

    /// Where the complete root `key` lives.
    pub fn root_dir(&self, key: &str) -> PathBuf {
        self.dir.join(key)
    }

    /// Where this process builds `key` before it is complete.
    pub fn build_dir(&self, key: &str) -> PathBuf {
        self.dir
            .join(format!("storlab-{}-{key}", std::process::id()))
    }

    /// The manifest of the complete root `key`, if there is one.
    pub fn manifest(&self, key: &str) -> Option<Manifest> {
        read_manifest(&self.root_dir(key))
    }

    /// The lock file of `key`, opened (created).
    pub fn lock_file(&self, key: &str) -> Result<File> {
        std::fs::create_dir_all(&self.dir).with_context(|| {
            format!(
                "creating the roots' cache {} (set STORLAB_STATE_DIR to put it elsewhere)",
                self.dir.display()
            )
        })?;
        crate::provision::hostlock::open_at(&self.dir.join(format!("{key}.lock")))
    }

    /// The complete roots, by key, with their size and whether one is in use.
    pub fn list(&self) -> Vec<Entry> {
        let mut out: Vec<Entry> = std::fs::read_dir(&self.dir)
            .into_iter()
            .flatten()
            .flatten()
            .filter(|e| e.path().is_dir())
            .filter_map(|e| {
                let key = e.file_name().to_str()?.to_string();
                let manifest = read_manifest(&e.path())?;
                Some(Entry {
                    in_use: self.in_use(&key),
                    bytes: disk_usage(&e.path()),
                    dir: e.path(),
                    key,
                    manifest,
                })
            })
            .collect();
        out.sort_by(|a, b| a.key.cmp(&b.key));
        out
    }

    /// Whether a campaign holds `key` (its lock cannot be had exclusively).
    fn in_use(&self, key: &str) -> bool {
        let Ok(f) = self.lock_file(key) else {
            return false;
        };
        flock(&f, libc::LOCK_EX | libc::LOCK_NB).is_err()
    }

    /// Removes the complete root `key`, unless a campaign holds it: renamed
    /// out of the way first, so that no campaign finds it half removed.
    pub fn remove(&self, key: &str) -> Result<u64> {
        let dir = self.root_dir(key);
        if read_manifest(&dir).is_none() {
            bail!(
                "no cached root `{key}` in {}; `storlab cleanup --roots` lists them",
                self.dir.display()
            );
        }
        let lock = self.lock_file(key)?;
        if flock(&lock, libc::LOCK_EX | libc::LOCK_NB).is_err() {
            bail!("root `{key}` is in use by a running campaign; remove it once that campaign has ended");
        }
        let bytes = disk_usage(&dir);
        let doomed = self.build_dir(&format!("removing-{key}"));
        std::fs::rename(&dir, &doomed)
            .with_context(|| format!("moving {} out of the cache", dir.display()))?;
        crate::provision::undo::remove_dir(&doomed)?;
        let _ = std::fs::remove_file(self.dir.join(format!("{key}.lock")));
        Ok(bytes)
    }
}

fn read_manifest(dir: &Path) -> Option<Manifest> {
    let text = std::fs::read_to_string(dir.join("root.json")).ok()?;
    serde_json::from_str(&text).ok()
}

/// Writes `manifest` into `dir` (the build directory, before its rename).
pub fn write_manifest(dir: &Path, manifest: &Manifest) -> Result<()> {
    let path = dir.join("root.json");
    let text = serde_json::to_string_pretty(manifest)?;
    std::fs::write(&path, text).with_context(|| format!("writing {}", path.display()))?;
    File::open(&path).and_then(|f| f.sync_all()).ok();
    Ok(())
}

/// The bytes the files under `dir` take on disk (hard links counted
/// once), without crossing into another filesystem.
pub fn disk_usage(dir: &Path) -> u64 {
    use std::collections::HashSet;
    use std::os::unix::fs::MetadataExt;
    let Ok(top) = std::fs::symlink_metadata(dir) else {
        return 0;
    };
    let mut seen = HashSet::new();
    let mut total = 0;
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let Ok(m) = e.metadata() else { continue };
            if m.dev() != top.dev() {
                continue;
            }
            if m.is_dir() {
                todo.push(e.path());
            }
            if m.nlink() > 1 && !m.is_dir() && !seen.insert(m.ino()) {
                continue;
            }
            total += m.blocks() * 512;
        }
    }
    total
}

#[cfg(test)]
mod tests {
    use super::*;

    fn manifest() -> Manifest {
        Manifest {
            suite: "trixie".into(),
            software: Software::Gluster,
            packages: vec!["glusterfs-server".into()],
            mirror: "http://deb.debian.org/debian".into(),
            built: "2026-01-01T00:00:00Z".into(),
            build_seconds: 70.0,
            version: "11.1".into(),
            bytes: 1,
            storlab_version: "t".into(),
        }
    }

    #[test]
    fn keys_name_the_suite_and_software_and_differ_by_package_set() {
        let g = Cache::key("trixie", Software::Gluster);
        assert!(g.starts_with("debian-trixie-gluster-"), "{g}");
        assert_eq!(g, Cache::key("trixie", Software::Gluster), "stable");
        assert_ne!(g, Cache::key("bookworm", Software::Gluster));
        assert!(Cache::key("trixie", Software::Postgres).starts_with("debian-trixie-postgresql-"));
    }

    #[test]
    fn only_complete_roots_are_listed_and_a_held_one_is_not_removed() {
        let t = tempfile::tempdir().unwrap();
        let cache = Cache::at(t.path().join("roots"));
        let key = Cache::key("trixie", Software::Gluster);
        // A half-built root: no manifest, another name.
        let half = cache.build_dir(&key);
        std::fs::create_dir_all(half.join("tree/usr")).unwrap();
        assert!(cache.list().is_empty());
        assert!(cache.manifest(&key).is_none());
        let done = cache.root_dir(&key);
        std::fs::create_dir_all(done.join("tree/usr")).unwrap();
        std::fs::write(done.join("tree/usr/x"), vec![7u8; 10_000]).unwrap();
        write_manifest(&done, &manifest()).unwrap();
        let list = cache.list();
        assert_eq!(list.len(), 1);
        assert_eq!(list[0].manifest, manifest());
        assert!(list[0].bytes >= 10_000 && !list[0].in_use);
        let held = cache.lock_file(&key).unwrap();
        flock(&held, libc::LOCK_SH).unwrap();
        assert!(cache.list()[0].in_use);
        let e = cache.remove(&key).unwrap_err();
        assert!(format!("{e:#}").contains("in use"), "{e:#}");
        drop(held);
        assert!(cache.remove(&key).unwrap() >= 10_000);
        assert!(!done.exists() && cache.list().is_empty());
        assert!(cache.remove(&key).is_err(), "gone");
    }
}
