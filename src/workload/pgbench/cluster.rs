//! A PostgreSQL cluster storlab owns inside a workload's directory on the
//! target: `pg/data` (initdb), `pg/sock` (its private unix socket
//! directory), `pg/server.log`, and a marker saying that `pgbench -i` has
//! completed. Creating, configuring and removing it; starting the server
//! is `server.rs`.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result};

use super::account::Account;
use super::binaries::Binaries;
use super::exec;
use crate::process::StopFlag;
use crate::provision::journal::{Journal, Resource};
use crate::provision::naming::PG_SOCKET_PREFIX;

/// The database superuser initdb creates; pgbench and psql connect as it.
pub const SUPERUSER: &str = "postgres";
/// The database pgbench's tables live in.
pub const DATABASE: &str = "postgres";
/// Longest unix socket path Linux accepts (sun_path less the NUL).
const MAX_SOCKET_PATH: usize = 107;

#[derive(Debug, Clone)]
pub struct Cluster {
    pub root: PathBuf,
    pub port: u16,
    pub account: Option<Account>,
    /// In a root's jail: the socket directory as the server and its
    /// clients see it (in the jail's own /run), and as the host does.
    pub jailed_socket: Option<(PathBuf, PathBuf)>,
}

impl Cluster {
    /// The cluster of the workload in `workload_dir`, made absolute: the
    /// programs run with the cluster directory as their working directory.
    pub fn new(workload_dir: &Path, port: u16, account: Option<Account>) -> Cluster {
        let dir = std::path::absolute(workload_dir).unwrap_or_else(|_| workload_dir.to_path_buf());
        Cluster {
            root: dir.join("pg"),
            port,
            account,
            jailed_socket: None,
        }
    }

    /// The same cluster served from a root's jail: its socket directory in
    /// the jail's /run (`inside`), `on_host` as the host sees it.
    pub fn in_jail(mut self, inside: PathBuf, on_host: PathBuf) -> Cluster {
        self.jailed_socket = Some((inside, on_host));
        self
    }

    pub fn data(&self) -> PathBuf {
        self.root.join("data")
    }

    /// `pg/sock` inside the cluster, unless the socket's path would be too
    /// long for Linux (deep target paths, long names): then a directory in
    /// /tmp named after the cluster, so every run of the workload finds it.
    pub fn socket_dir(&self) -> PathBuf {
        if let Some((inside, _)) = &self.jailed_socket {
            return inside.clone();
        }
        let inside = self.root.join("sock");
        if self.socket_file_in(&inside).as_os_str().len() <= MAX_SOCKET_PATH {
            return inside;
        }
        use std::hash::{Hash, Hasher};
        let mut h = std::collections::hash_map::DefaultHasher::new();
        self.root.hash(&mut h);
        PathBuf::from(format!("/tmp/{PG_SOCKET_PREFIX}{:016x}", h.finish()))
    }

    /// The socket directory as the host sees it.
    fn socket_dir_on_host(&self) -> PathBuf {
        match &self.jailed_socket {
            Some((_, on_host)) => on_host.clone(),
            None => self.socket_dir(),
        }
    }

    fn socket_file_in(&self, dir: &Path) -> PathBuf {
        dir.join(format!(".s.PGSQL.{}", self.port))
    }

    pub fn log(&self) -> PathBuf {
        self.root.join("server.log")
    }

    fn marker(&self) -> PathBuf {
        self.root.join("storlab-initialized")
    }

    /// Whether initdb and `pgbench -i` both completed earlier.
    pub fn is_initialized(&self) -> bool {
        self.marker().exists()
    }

    pub fn mark_initialized(&self) -> Result<()> {
        std::fs::write(self.marker(), b"pgbench -i completed\n")
            .with_context(|| format!("writing {}", self.marker().display()))
    }

    /// Removes the whole cluster directory and its socket directory, if present.
    pub fn remove(&self) -> Result<()> {
        for dir in [self.root.clone(), self.socket_dir_on_host()] {
            if dir.exists() {
                std::fs::remove_dir_all(&dir)
                    .with_context(|| format!("removing cluster {}", dir.display()))?;
            }
        }
        Ok(())
    }

    /// A fresh cluster: directories handed to the server's account, initdb,
    /// then storlab's settings appended to postgresql.conf.
    pub fn create(
        &self,
        bins: &Binaries,
        settings: &BTreeMap<String, String>,
        stop: &StopFlag,
        journal: &Journal,
    ) -> Result<()> {
        self.remove()?;
        let sock = self.socket_dir_on_host();
        // A jail's /run goes with the jail.
        if !sock.starts_with(&self.root) && self.jailed_socket.is_none() {
            // Outside the working directory: journaled before it exists,
            // so that teardown or `storlab cleanup` removes it.
            journal.acquire_once(&Resource::Dir { path: sock.clone() })?;
        }
        for dir in [&self.root, &sock] {
            std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
            std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))
                .with_context(|| format!("setting the mode of {}", dir.display()))?;
            if let Some(a) = &self.account {
                a.chown(dir)?;
            }
        }
        if let Some(a) = &self.account {
            a.check_reachable(&self.root)?;
        }
        exec::run(self.initdb_command(bins)?, "initdb", stop)?;
        let conf = self.data().join("postgresql.conf");
        append_settings(&conf, &self.conf_block(settings))
    }

    fn initdb_command(&self, bins: &Binaries) -> Result<Command> {
        let mut cmd = bins.command(&bins.initdb, self.account.as_ref(), Some(&self.root))?;
        cmd.arg("--pgdata")
            .arg(self.data())
            .args(["--username", SUPERUSER, "--auth", "trust"])
            .args(["--encoding", "UTF8", "--no-sync"]);
        Ok(cmd)
    }

    /// What storlab appends to postgresql.conf; later lines win there, so
    /// the user's settings override initdb's and storlab's connection
    /// settings come last so they cannot be overridden.
    fn conf_block(&self, settings: &BTreeMap<String, String>) -> String {
        let mut block = String::from("\n# --- written by storlab ---\n");
        for (k, v) in settings {
            let _ = writeln!(block, "{k} = {}", quote(v));
        }
        let _ = writeln!(block, "listen_addresses = ''");
        let _ = writeln!(block, "port = {}", self.port);
        let _ = writeln!(
            block,
            "unix_socket_directories = {}",
            quote(&self.socket_dir().to_string_lossy())
        );
        block
    }
}

fn append_settings(conf: &Path, block: &str) -> Result<()> {
    use std::io::Write;
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(conf)
        .with_context(|| format!("opening {} to add settings", conf.display()))?;
    f.write_all(block.as_bytes())
        .with_context(|| format!("writing settings to {}", conf.display()))
}

/// A postgresql.conf string literal.
fn quote(v: &str) -> String {
    format!("'{}'", v.replace('\\', "\\\\").replace('\'', "''"))
}

/// Checks a `settings` key and value before anything runs.
pub fn check_setting(key: &str, value: &str) -> Result<(), String> {
    let valid_key = !key.is_empty()
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.');
    if !valid_key {
        return Err(format!(
            "`{key}` is not a PostgreSQL setting name (letters, digits, `_` and `.` only)"
        ));
    }
    if value.contains(['\n', '\r', '\0']) {
        return Err(format!("the value of `{key}` must be on one line"));
    }
    if ["port", "listen_addresses", "unix_socket_directories"].contains(&key) {
        return Err(format!(
            "`{key}` is set by storlab (a private unix socket, no TCP); leave it out"
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_are_quoted_and_connection_settings_come_last() {
        let c = Cluster::new(Path::new("/t/wl"), 5433, None);
        let mut s = BTreeMap::new();
        s.insert("fsync".to_string(), "off".to_string());
        s.insert("search_path".to_string(), "it's".to_string());
        let block = c.conf_block(&s);
        let relative = Cluster::new(Path::new("./wl"), 5432, None);
        assert!(relative.data().is_absolute(), "{:?}", relative.data());
        assert!(block.contains("fsync = 'off'\n"));
        assert!(block.contains("search_path = 'it''s'\n"));
        assert!(block.ends_with("port = 5433\nunix_socket_directories = '/t/wl/pg/sock'\n"));
        assert!(block.contains("listen_addresses = ''\n"));
    }

    #[test]
    fn a_socket_path_too_long_for_linux_moves_to_a_short_directory_in_tmp() {
        let short = Cluster::new(Path::new("/var/tmp/wl"), 5432, None);
        assert_eq!(short.socket_dir(), Path::new("/var/tmp/wl/pg/sock"));
        let deep = format!("/var/tmp/{}/oltp-prepared", "x".repeat(90));
        let long = Cluster::new(Path::new(&deep), 5432, None);
        let dir = long.socket_dir();
        assert!(
            dir.to_str().unwrap().starts_with("/tmp/storlab-pg-"),
            "{dir:?}"
        );
        let socket = long.socket_file_in(&dir);
        assert!(socket.as_os_str().len() <= MAX_SOCKET_PATH, "{socket:?}");
        // Stable for the same cluster (reinit = "once" finds it again),
        // different for another one.
        assert_eq!(Cluster::new(Path::new(&deep), 5432, None).socket_dir(), dir);
        let other = Cluster::new(Path::new(&format!("{deep}2")), 5432, None);
        assert_ne!(other.socket_dir(), dir);
    }

    #[test]
    fn setting_names_and_values_are_checked() {
        assert!(check_setting("shared_buffers", "256MB").is_ok());
        assert!(check_setting("fsync\nport", "1").is_err());
        assert!(check_setting("work_mem", "1\nport = 1").is_err());
        assert!(check_setting("port", "5432")
            .unwrap_err()
            .contains("set by storlab"));
    }
}
