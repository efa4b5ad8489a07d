//! What glusterd makes on this host for a volume's bricks and leaves when
//! the volume is deleted: the bricks' pid files in `/run/gluster/vols/VOLUME/`
//! and each brick's socket (`/run/gluster/HASH.socket`, named on the
//! brick's command line by `-S`). Read from the running bricks' command
//! lines before the volume is stopped, removed once it is deleted — by its teardown and by
//! `storlab cleanup` alike, as part of undoing the journaled volume — so
//! that campaigns do not leave a directory and two sockets each. The same
//! command lines tell which processes serve the volume's bricks here
//! ([`bricks`]), watched during runs.

use std::path::{Path, PathBuf};

use crate::provision::undo::remove_dir;

/// What a volume's bricks on this host keep under /run.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Runtime {
    /// `/run/gluster/vols/VOLUME`, from a brick's `-p` pid file.
    pub dir: Option<PathBuf>,
    /// The bricks' sockets, from their `-S`.
    pub sockets: Vec<PathBuf>,
}

impl Runtime {
    /// Read from the running bricks of `volume` on this host (the
    /// glusterfsd processes whose `--volfile-id` names it, whether or not
    /// glusterd lists them online yet); nothing when none runs.
    pub fn of(volume: &str) -> Runtime {
        let mut rt = Runtime::default();
        for (_, args) in brick_processes(volume) {
            rt.read_args(volume, &args);
        }
        rt
    }

    /// Takes what a brick's arguments name, if they are those of a brick
    /// of `volume`.
    fn read_args(&mut self, volume: &str, args: &[String]) {
        if !is_brick_of(volume, args) {
            return;
        }
        for pair in args.windows(2) {
            let path = Path::new(&pair[1]);
            match pair[0].as_str() {
                "-S" if is_brick_socket(path) && !self.sockets.iter().any(|s| s == path) => {
                    self.sockets.push(path.to_path_buf())
                }
                "-p" => {
                    let dir = path
                        .parent()
                        .filter(|d| d.file_name() == Some(volume.as_ref()));
                    if let Some(d) = dir {
                        self.dir = Some(d.to_path_buf());
                    }
                }
                _ => {}
            }
        }
    }

    /// Removes them (the volume is deleted: no brick uses them any more);
    /// what cannot be removed is left, said in the error.
    pub fn remove(&self) -> anyhow::Result<()> {
        for s in &self.sockets {
            match std::fs::remove_file(s) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                    anyhow::bail!("removing brick socket {}: {e}", s.display())
                }
                _ => {}
            }
        }
        match &self.dir {
            Some(d) => remove_dir(d),
            None => Ok(()),
        }
    }
}

/// Whether `args` are the command line of a brick of `volume`: glusterfsd
/// with `--volfile-id VOLUME.…`.
fn is_brick_of(volume: &str, args: &[String]) -> bool {
    let glusterfsd = args
        .first()
        .is_some_and(|a| Path::new(a).file_name() == Some("glusterfsd".as_ref()));
    glusterfsd
        && args.windows(2).any(|w| {
            w[0] == "--volfile-id"
                && w[1]
                    .strip_prefix(volume)
                    .is_some_and(|r| r.starts_with('.'))
        })
}

/// The processes of this host running a brick of `volume` (by their
/// command lines, whether or not glusterd lists them online yet, from this
/// host's root or a jail's): pid and arguments.
fn brick_processes(volume: &str) -> Vec<(u32, Vec<String>)> {
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|p| p.parse::<u32>().ok()) else {
            continue;
        };
        if let Ok(cmdline) = std::fs::read(e.path().join("cmdline")) {
            let args: Vec<String> = cmdline
                .split(|&b| b == 0)
                .map(|a| String::from_utf8_lossy(a).into_owned())
                .collect();
            if is_brick_of(volume, &args) {
                out.push((pid, args));
            }
        }
    }
    out
}

/// The bricks of `volume` running on this host: pid and brick directory
/// (`--brick-name`).
pub fn bricks(volume: &str) -> Vec<(u32, String)> {
    brick_processes(volume)
        .into_iter()
        .map(|(pid, args)| {
            let name = args
                .windows(2)
                .find(|w| w[0] == "--brick-name")
                .map(|w| w[1].clone())
                .unwrap_or_default();
            (pid, name)
        })
        .collect()
}

/// A brick socket as glusterd names it: `/run/gluster/HEX.socket` (or
/// under /var/run), nothing else.
fn is_brick_socket(path: &Path) -> bool {
    let in_run = matches!(
        path.parent().and_then(Path::to_str),
        Some("/run/gluster" | "/var/run/gluster")
    );
    let hex = path
        .file_name()
        .and_then(|n| n.to_str())
        .and_then(|n| n.strip_suffix(".socket"))
        .is_some_and(|h| !h.is_empty() && h.bytes().all(|b| b.is_ascii_hexdigit()));
    in_run && hex
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bricks_socket_and_pid_directory_are_read_from_its_arguments() {
        let args: Vec<String> = [
            "/usr/sbin/glusterfsd",
            "-s",
            "vm",
            "--volfile-id",
            "storlab-7-gl.vm.b",
            "-p",
            "/var/run/gluster/vols/storlab-7-gl/vm-b-brick0.pid",
            "-S",
            "/var/run/gluster/09a14d20cea13153.socket",
            "--brick-name",
            "/b/brick0",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let mut rt = Runtime::default();
        rt.read_args("storlab-7-gl", &args);
        rt.read_args("storlab-7-gl", &args);
        assert_eq!(
            rt,
            Runtime {
                dir: Some("/var/run/gluster/vols/storlab-7-gl".into()),
                sockets: vec!["/var/run/gluster/09a14d20cea13153.socket".into()],
            }
        );
        let mut other = Runtime::default();
        other.read_args("storlab-8-gl", &args);
        other.read_args("storlab-7-gl", &args[1..]);
        assert_eq!(
            other,
            Runtime::default(),
            "another volume's brick, or no brick"
        );
        for bad in [
            "/etc/passwd",
            "/run/gluster/x.socket",
            "/run/gluster/../a.socket",
        ] {
            assert!(!is_brick_socket(Path::new(bad)), "{bad}");
        }
    }
}
