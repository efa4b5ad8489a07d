//! Finding PostgreSQL's programs: a `bindir` setting, else `pg_config
//! --bindir`, else the newest /usr/lib/postgresql/*/bin, else PATH. Only
//! looks; runs nothing but pg_config.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{bail, Result};

use super::account::Account;
use crate::provision::root::enter::Within;
use crate::provision::root::{Jail, Software};
use std::sync::Arc;

/// The programs the pgbench workload runs, and where: on the host, or in
/// a root's jail (paths as the root sees them).
#[derive(Debug, Clone)]
pub struct Binaries {
    pub initdb: PathBuf,
    pub postgres: PathBuf,
    pub pgbench: PathBuf,
    pub psql: PathBuf,
    pub jail: Option<Arc<Jail>>,
}

impl Binaries {
    /// Finds the server and client programs; `server` is false for `dsn` runs.
    pub fn find(bindir: Option<&str>, server: bool) -> Result<Binaries> {
        let dirs = candidate_dirs(bindir);
        let mut missing = Vec::new();
        let mut found = |name: &str, needed: bool| match locate(name, &dirs) {
            Some(p) => p,
            None => {
                if needed {
                    missing.push(name.to_string());
                }
                PathBuf::from(name)
            }
        };
        let b = Binaries {
            initdb: found("initdb", server),
            postgres: found("postgres", server),
            pgbench: found("pgbench", true),
            psql: found("psql", true),
            jail: None,
        };
        if !missing.is_empty() {
            bail!(
                "PostgreSQL program(s) not found: {} (looked in {}); install PostgreSQL \
                 (Debian: apt-get install postgresql) or set `bindir` to the directory holding them",
                missing.join(", "),
                describe(&dirs)
            );
        }
        Ok(b)
    }
}

impl Binaries {
    /// The programs of the root at `tree`, run in `jail`.
    pub fn in_root(tree: &Path, jail: Arc<Jail>) -> Result<Binaries> {
        let found = Software::Postgres.programs_in(tree)?;
        let [initdb, postgres, pgbench, psql]: [PathBuf; 4] = found
            .try_into()
            .map_err(|_| anyhow::anyhow!("PostgreSQL's four programs were not all found"))?;
        Ok(Binaries {
            initdb,
            postgres,
            pgbench,
            psql,
            jail: Some(jail),
        })
    }

    /// A command running `program` (one of these) as `account`, in `cwd`:
    /// on the host, or chrooted in the jail.
    pub fn command(
        &self,
        program: &Path,
        account: Option<&Account>,
        cwd: Option<&Path>,
    ) -> Result<Command> {
        let Some(jail) = &self.jail else {
            let mut cmd = Command::new(program);
            if let Some(a) = account {
                a.apply(&mut cmd);
            }
            if let Some(d) = cwd {
                cmd.current_dir(d);
            }
            return Ok(cmd);
        };
        let within = Within {
            user: account.map(|a| (a.uid, a.gid)),
            cwd: cwd.map(Path::to_path_buf),
        };
        jail.command_within(program, &within)
    }
}

fn describe(dirs: &[PathBuf]) -> String {
    if dirs.is_empty() {
        return "nowhere: no bindir, no pg_config, no /usr/lib/postgresql, empty PATH".into();
    }
    dirs.iter()
        .map(|d| d.display().to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

fn locate(name: &str, dirs: &[PathBuf]) -> Option<PathBuf> {
    dirs.iter().map(|d| d.join(name)).find(|p| is_executable(p))
}

fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p)
        .map(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        .unwrap_or(false)
}

/// Where to look, in order. With an explicit `bindir`, only there.
fn candidate_dirs(bindir: Option<&str>) -> Vec<PathBuf> {
    if let Some(b) = bindir {
        return vec![PathBuf::from(b)];
    }
    let mut dirs = Vec::new();
    dirs.extend(pg_config_bindir());
    dirs.extend(debian_bindirs(Path::new("/usr/lib/postgresql")));
    if let Some(path) = std::env::var_os("PATH") {
        dirs.extend(std::env::split_paths(&path));
    }
    dirs
}

fn pg_config_bindir() -> Option<PathBuf> {
    let mut cmd = Command::new("pg_config");
    cmd.arg("--bindir");
    crate::console::echo(&cmd);
    let out = cmd.output().ok()?;
    if !out.status.success() {
        return None;
    }
    let dir = String::from_utf8_lossy(&out.stdout).trim().to_string();
    (!dir.is_empty()).then(|| PathBuf::from(dir))
}

/// `/usr/lib/postgresql/<major>/bin`, newest major first.
fn debian_bindirs(base: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(base) else {
        return Vec::new();
    };
    let mut versions: Vec<(u32, PathBuf)> = entries
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            let major: u32 = e.file_name().to_str()?.parse().ok()?;
            Some((major, e.path().join("bin")))
        })
        .filter(|(_, bin)| bin.is_dir())
        .collect();
    versions.sort_by_key(|v| std::cmp::Reverse(v.0));
    versions.into_iter().map(|(_, p)| p).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn newest_debian_major_comes_first() {
        let base = tempfile::tempdir().unwrap();
        for v in ["9.6", "13", "15", "notaversion"] {
            std::fs::create_dir_all(base.path().join(v).join("bin")).unwrap();
        }
        let dirs = debian_bindirs(base.path());
        assert_eq!(
            dirs,
            vec![base.path().join("15/bin"), base.path().join("13/bin")]
        );
    }

    #[test]
    fn a_wrong_bindir_names_what_is_missing() {
        let empty = tempfile::tempdir().unwrap();
        let err = Binaries::find(empty.path().to_str(), true).unwrap_err();
        let msg = format!("{err:#}");
        assert!(msg.contains("initdb, postgres, pgbench, psql"), "{msg}");
        assert!(msg.contains("set `bindir`"), "{msg}");
        let err = Binaries::find(empty.path().to_str(), false).unwrap_err();
        assert!(format!("{err:#}").contains("not found: pgbench, psql"));
    }
}
