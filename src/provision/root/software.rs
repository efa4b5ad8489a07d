//! The software storlab can take from a root: for each, the Debian
//! packages a root needs, the programs that must be there, and how to read
//! the version the programs report (`glusterfs 11.1` → `11.1`). The same
//! questions asked of the host give the host's release, so that two
//! variants are named by what each one ran.

use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};

/// A program suite storlab runs and can take from another root.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "snake_case")]
pub enum Software {
    /// glusterd, the gluster command line and the FUSE client.
    Gluster,
    /// PostgreSQL's server (initdb, postgres) and clients (pgbench, psql).
    #[serde(rename = "postgresql")]
    Postgres,
}

impl Software {
    /// Every system a root can give.
    pub const ALL: &'static [Software] = &[Software::Gluster, Software::Postgres];

    /// The label of its `software_version` fact and of its cache key.
    pub fn label(self) -> &'static str {
        match self {
            Software::Gluster => "gluster",
            Software::Postgres => "postgresql",
        }
    }

    /// How people write its name: `Gluster 11.1`, `PostgreSQL 17.6`.
    pub fn display(self) -> &'static str {
        match self {
            Software::Gluster => "Gluster",
            Software::Postgres => "PostgreSQL",
        }
    }

    /// The packages a Debian root of it installs (with their dependencies).
    pub fn packages(self) -> &'static [&'static str] {
        match self {
            Software::Gluster => &["glusterfs-server", "glusterfs-client"],
            Software::Postgres => &["postgresql"],
        }
    }

    /// `Gluster 11.1`.
    pub fn named(self, version: &str) -> String {
        format!("{} {version}", self.display())
    }

    /// The programs that must be in a tree, found there: absolute paths as
    /// the tree sees them (`/usr/sbin/glusterd`). Names what is missing.
    pub fn programs_in(self, tree: &Path) -> Result<Vec<PathBuf>> {
        match self {
            Software::Gluster => {
                let names = ["glusterd", "gluster", "glusterfs", "mount.glusterfs"];
                let mut found = Vec::new();
                let mut missing = Vec::new();
                for n in names {
                    match find_in(tree, SBIN_AND_BIN, n) {
                        Some(p) => found.push(p),
                        None => missing.push(n),
                    }
                }
                if !missing.is_empty() {
                    bail!(
                        "{} has no {} (Gluster's server and client); install glusterfs-server and glusterfs-client in it",
                        tree.display(),
                        missing.join(", ")
                    );
                }
                Ok(found)
            }
            Software::Postgres => {
                let bin = postgres_bindir(tree)?;
                Ok(["initdb", "postgres", "pgbench", "psql"]
                    .iter()
                    .map(|n| bin.join(n))
                    .collect())
            }
        }
    }

    /// The program whose `--version` names the release, as the tree sees it.
    pub fn version_program(self, tree: &Path) -> Result<PathBuf> {
        match self {
            Software::Gluster => find_in(tree, SBIN_AND_BIN, "gluster")
                .with_context(|| format!("{} has no gluster program", tree.display())),
            Software::Postgres => Ok(postgres_bindir(tree)?.join("postgres")),
        }
    }

    /// The release in a program's `--version` line: `glusterfs 11.1` →
    /// `11.1`, `postgres (PostgreSQL) 17.6 (Debian 17.6-0+deb13u1)` →
    /// `17.6`.
    pub fn version_of(self, line: &str) -> Option<String> {
        let word = match self {
            Software::Gluster => line.strip_prefix("glusterfs ")?,
            Software::Postgres => line.split_once("(PostgreSQL)")?.1,
        };
        let v = word.split_whitespace().next()?;
        v.starts_with(|c: char| c.is_ascii_digit())
            .then(|| v.to_string())
    }
}

/// Where the programs of a Debian system live.
const SBIN_AND_BIN: &[&str] = &["usr/sbin", "sbin", "usr/bin", "bin"];

/// A program of a Debian system in `tree` (`/usr/bin/mount`), as the
/// tree sees it.
pub fn program_in(tree: &Path, name: &str) -> Result<PathBuf> {
    find_in(tree, SBIN_AND_BIN, name)
        .with_context(|| format!("{} has no {name} program", tree.display()))
}

/// `/DIR/name` for the first DIR of `dirs` where `tree` holds an executable
/// `name`.
fn find_in(tree: &Path, dirs: &[&str], name: &str) -> Option<PathBuf> {
    dirs.iter()
        .map(|d| Path::new("/").join(d).join(name))
        .find(|p| is_executable_in(tree, p))
}

/// `path` (as the tree sees it) as the host sees it.
pub fn inside(tree: &Path, path: &Path) -> PathBuf {
    tree.join(path.strip_prefix("/").unwrap_or(path))
}

/// Whether `path` (as the tree sees it) is an executable file of the tree.
fn is_executable_in(tree: &Path, path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    resolve_in(tree, path).is_some_and(|real| {
        std::fs::symlink_metadata(real)
            .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    })
}

/// `path` (as the tree sees it) as the host sees it, every symbolic link
/// on the way followed inside the tree (an absolute link from the tree's
/// root, not the host's), as the programs chrooted there will find it.
pub fn resolve_in(tree: &Path, path: &Path) -> Option<PathBuf> {
    use std::path::Component;
    let mut todo: Vec<std::ffi::OsString> = path
        .components()
        .rev()
        .filter_map(|c| match c {
            Component::Normal(n) => Some(n.to_os_string()),
            Component::ParentDir => Some("..".into()),
            _ => None,
        })
        .collect();
    let mut done = PathBuf::from("/");
    let mut hops = 0;
    while let Some(part) = todo.pop() {
        if part == ".." {
            done.pop();
            continue;
        }
        let next = done.join(&part);
        match std::fs::read_link(inside(tree, &next)) {
            Ok(link) => {
                hops += 1;
                if hops > 40 {
                    return None;
                }
                if link.is_absolute() {
                    done = PathBuf::from("/");
                }
                for c in link.components().rev() {
                    match c {
                        Component::Normal(n) => todo.push(n.to_os_string()),
                        Component::ParentDir => todo.push("..".into()),
                        _ => {}
                    }
                }
            }
            Err(_) => done = next,
        }
    }
    Some(inside(tree, &done))
}

/// `/usr/lib/postgresql/N/bin` of the newest N in the tree, as it sees it.
fn postgres_bindir(tree: &Path) -> Result<PathBuf> {
    let base = inside(tree, Path::new("/usr/lib/postgresql"));
    let newest = std::fs::read_dir(&base)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let major: u32 = e.file_name().to_str()?.parse().ok()?;
            Some(major)
        })
        .filter(|m| {
            ["initdb", "postgres", "pgbench", "psql"].iter().all(|n| {
                is_executable_in(
                    tree,
                    &Path::new("/usr/lib/postgresql")
                        .join(m.to_string())
                        .join("bin")
                        .join(n),
                )
            })
        })
        .max();
    match newest {
        Some(m) => Ok(PathBuf::from(format!("/usr/lib/postgresql/{m}/bin"))),
        None => bail!(
            "{} has no PostgreSQL (initdb, postgres, pgbench and psql under /usr/lib/postgresql/N/bin); install postgresql in it",
            tree.display()
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_are_read_from_what_the_programs_print() {
        let g = Software::Gluster;
        assert_eq!(g.version_of("glusterfs 11.1").as_deref(), Some("11.1"));
        assert_eq!(g.version_of("glusterfs 10.3").as_deref(), Some("10.3"));
        assert_eq!(g.version_of("gluster x"), None);
        let p = Software::Postgres;
        assert_eq!(
            p.version_of("postgres (PostgreSQL) 17.6 (Debian 17.6-0+deb13u1)")
                .as_deref(),
            Some("17.6")
        );
        assert_eq!(
            p.version_of("postgres (PostgreSQL) 15.14").as_deref(),
            Some("15.14")
        );
        assert_eq!(g.named("11.1"), "Gluster 11.1");
    }

    #[test]
    fn a_tree_without_the_programs_says_what_to_install() {
        let t = tempfile::tempdir().unwrap();
        let e = Software::Gluster.programs_in(t.path()).unwrap_err();
        let msg = format!("{e:#}");
        assert!(
            msg.contains("glusterd, gluster, glusterfs, mount.glusterfs"),
            "{msg}"
        );
        assert!(msg.contains("install glusterfs-server"), "{msg}");
        let e = Software::Postgres.programs_in(t.path()).unwrap_err();
        assert!(format!("{e:#}").contains("install postgresql"));
    }

    #[test]
    fn programs_are_found_where_debian_puts_them() {
        use std::os::unix::fs::PermissionsExt;
        let t = tempfile::tempdir().unwrap();
        let exe = |p: &str| {
            let f = t.path().join(p);
            std::fs::create_dir_all(f.parent().unwrap()).unwrap();
            std::fs::write(&f, b"#!/bin/sh\n").unwrap();
            std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o755)).unwrap();
        };
        for p in [
            "usr/sbin/glusterd",
            "usr/sbin/gluster",
            "usr/sbin/glusterfs",
        ] {
            exe(p);
        }
        exe("sbin/mount.glusterfs");
        let found = Software::Gluster.programs_in(t.path()).unwrap();
        assert_eq!(found[3], Path::new("/sbin/mount.glusterfs"));
        for n in ["initdb", "postgres", "pgbench", "psql"] {
            exe(&format!("usr/lib/postgresql/15/bin/{n}"));
            exe(&format!("usr/lib/postgresql/17/bin/{n}"));
        }
        exe("usr/lib/postgresql/18/bin/psql"); // a client alone is no server
        assert_eq!(
            Software::Postgres.version_program(t.path()).unwrap(),
            Path::new("/usr/lib/postgresql/17/bin/postgres")
        );
    }

    #[test]
    fn links_are_followed_inside_the_tree() {
        let t = tempfile::tempdir().unwrap();
        let tree = t.path();
        std::fs::create_dir_all(tree.join("usr/sbin")).unwrap();
        std::fs::create_dir_all(tree.join("opt/gl")).unwrap();
        std::fs::write(tree.join("opt/gl/real"), b"x").unwrap();
        std::os::unix::fs::symlink("usr/sbin", tree.join("sbin")).unwrap();
        // Absolute: from the tree's root, never the host's.
        std::os::unix::fs::symlink("/opt/gl/real", tree.join("usr/sbin/abs")).unwrap();
        std::os::unix::fs::symlink("../../opt/gl/real", tree.join("usr/sbin/rel")).unwrap();
        for p in ["/sbin/abs", "/usr/sbin/rel", "/sbin/rel"] {
            assert_eq!(
                resolve_in(tree, Path::new(p)).unwrap(),
                tree.join("opt/gl/real"),
                "{p}"
            );
        }
        std::os::unix::fs::symlink("loop", tree.join("loop")).unwrap();
        assert_eq!(resolve_in(tree, Path::new("/loop")), None);
    }
}
