//! NFS-Ganesha re-exporting a Gluster volume over NFS through its Gluster
//! backend (FSAL_GLUSTER, libgfapi), as a user who stacks NFS on Gluster
//! sets it up by hand: one daemon per export, with a configuration storlab
//! writes in a directory of its own (config, pid file, logs, NFSv4
//! recovery directory), bound to loopback and open to 127.0.0.1 only,
//! without a grace period. It is started with a pid file storlab chose and
//! stopped only by that pid, and only while the process there is the
//! ganesha.nfsd started with that pid file (its command line says so).
//! NFSv3 needs rpcbind ([`super::rpcbind`]): Ganesha registers NFS and
//! MNT there, and exits when it cannot.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};

use super::rpcbind;
use crate::provision::cmd;
use crate::provision::daemon::PidFiled;

/// The daemon's program (also its comm).
pub const PROGRAM: &str = "ganesha.nfsd";
/// Where Ganesha's Gluster backend (the Debian package
/// nfs-ganesha-gluster) is installed on this host: the multiarch
/// directory of any architecture (`/usr/lib/*-linux-gnu/ganesha`), else
/// `/usr/lib64` or `/usr/lib` (other distributions' layouts).
pub fn fsal_gluster() -> Option<PathBuf> {
    const FILE: &str = "ganesha/libfsalgluster.so";
    let multiarch = std::fs::read_dir("/usr/lib")
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.to_string_lossy().ends_with("-linux-gnu"));
    let mut dirs: Vec<PathBuf> = multiarch.collect();
    dirs.sort();
    dirs.extend(["/usr/lib64", "/usr/lib"].map(PathBuf::from));
    dirs.into_iter().map(|d| d.join(FILE)).find(|p| p.exists())
}
/// The NFS port Ganesha serves.
pub const NFS_PORT: u16 = 2049;

/// One Gluster volume exported over NFS by a Ganesha of its own.
#[derive(Debug, Clone)]
pub struct Export {
    /// storlab's directory for this export: config, pid file, logs.
    pub dir: PathBuf,
    /// The glusterd host the volume is reached through (libgfapi).
    pub host: String,
    pub volume: String,
    /// The NFS protocol major version served: 3 or 4.
    pub protocol: u8,
}

impl Export {
    pub fn config_path(&self) -> PathBuf {
        self.dir.join("ganesha.conf")
    }

    pub fn pidfile(&self) -> PathBuf {
        self.dir.join("ganesha.pid")
    }

    pub fn log_path(&self) -> PathBuf {
        self.dir.join("ganesha.log")
    }

    /// The path clients mount (NFSv3 too: `mount_path_pseudo`).
    pub fn pseudo(&self) -> String {
        format!("/{}", self.volume)
    }

    /// The configuration: NLM and RQUOTA off (they need rpc.statd and
    /// quotas), no grace period, recovery and logs in `dir`.
    pub fn config(&self) -> String {
        let dir = self.dir.display();
        let p = self.protocol;
        format!(
            "# Written by storlab: {volume} on {host} re-exported over NFSv{p}.\n\
             NFS_CORE_PARAM {{\n    Protocols = {p};\n    Bind_addr = 127.0.0.1;\n    NFS_Port = {NFS_PORT};\n    mount_path_pseudo = true;\n    Enable_NLM = false;\n    Enable_RQUOTA = false;\n}}\n\
             NFSV4 {{\n    Graceless = true;\n    RecoveryRoot = \"{dir}/recovery\";\n}}\n\
             EXPORT {{\n    Export_Id = 1;\n    Path = \"/\";\n    Pseudo = \"{pseudo}\";\n    Protocols = {p};\n    Transports = TCP;\n    SecType = sys;\n    Squash = No_root_squash;\n    Access_Type = None;\n    CLIENT {{\n        Clients = 127.0.0.1;\n        Access_Type = RW;\n    }}\n    FSAL {{\n        Name = GLUSTER;\n        Hostname = \"{host}\";\n        Volume = \"{volume}\";\n        glfs_log = \"{dir}/gfapi.log\";\n    }}\n}}\n",
            volume = self.volume,
            host = self.host,
            pseudo = self.pseudo(),
        )
    }

    pub fn args(&self) -> Vec<String> {
        vec![
            "-f".into(),
            self.config_path().display().to_string(),
            "-L".into(),
            self.log_path().display().to_string(),
            "-p".into(),
            self.pidfile().display().to_string(),
        ]
    }

    /// Writes the configuration into `dir` (which exists) and starts the
    /// daemon; returns its pid once it serves NFS and MNT (registered with
    /// rpcbind, the NFS port answering). On failure the daemon, if it
    /// started, is stopped, and the error quotes the end of its log.
    pub fn start(&self) -> Result<u32> {
        let conf = self.config_path();
        std::fs::write(&conf, self.config())
            .with_context(|| format!("writing {}", conf.display()))?;
        cmd::run(PROGRAM, &self.args()).with_context(|| {
            format!(
                "starting NFS-Ganesha to export Gluster volume {}",
                self.volume
            )
        })?;
        match self.wait_ready(Duration::from_secs(30)) {
            Ok(pid) => Ok(pid),
            Err(e) => {
                let _ = stop(&self.pidfile());
                Err(e.context(format!(
                    "NFS-Ganesha exporting {} did not come up; the end of {}:\n{}",
                    self.volume,
                    self.log_path().display(),
                    log_tail(&self.log_path(), 8)
                )))
            }
        }
    }

    fn wait_ready(&self, wait: Duration) -> Result<u32> {
        let t0 = Instant::now();
        let mut last = String::from("no pid file yet");
        while t0.elapsed() < wait {
            if cmd::provisioning_stopped() {
                bail!("interrupted while waiting for NFS-Ganesha");
            }
            match read_pid(&self.pidfile()) {
                Some(pid) if !is_ours(pid, &self.pidfile()) => {
                    bail!("{PROGRAM} (pid {pid}) exited")
                }
                Some(pid) => {
                    let progs = rpcbind::programs().unwrap_or_default();
                    let nfs = progs.contains(&rpcbind::NFS);
                    let mnt = self.protocol != 3 || progs.contains(&rpcbind::MOUNT);
                    if nfs && mnt && port_answers(NFS_PORT) {
                        return Ok(pid);
                    }
                    last = format!("pid {pid}, registered with rpcbind: {progs:?}");
                }
                None => {}
            }
            std::thread::sleep(Duration::from_millis(200));
        }
        bail!("not serving within {} s ({last})", wait.as_secs())
    }
}

/// Whether something accepts TCP connections on 127.0.0.1:`port`.
pub fn port_answers(port: u16) -> bool {
    let addr = std::net::SocketAddr::from(([127, 0, 0, 1], port));
    std::net::TcpStream::connect_timeout(&addr, Duration::from_millis(500)).is_ok()
}

/// Why an NFS server this host already runs (kernel nfsd, another Ganesha,
/// storlab's or not) stands in the way, if one does: storlab neither adds
/// exports to it nor touches its configuration.
pub fn server_in_the_way() -> Option<String> {
    if port_answers(NFS_PORT) {
        return Some(format!(
            "an NFS server already serves port {NFS_PORT} on this host; storlab does not add exports to it or touch its configuration: stop it, or re-export the volume with it yourself and use an `nfs` target with `server` and `export`"
        ));
    }
    let progs = rpcbind::programs().unwrap_or_default();
    let stale = rpcbind::stale(&[rpcbind::NFS, rpcbind::MOUNT]);
    if !stale.is_empty() {
        let remove: Vec<String> = stale
            .iter()
            .map(|(p, v)| format!("`rpcinfo -d {p} {v}`"))
            .collect();
        return Some(format!(
            "NFS or MNT is registered with this host's rpcbind, but nothing listens on its port: a server that died without unregistering left it; `storlab cleanup` removes what a killed campaign left, else remove it with {}",
            remove.join(" and ")
        ));
    }
    if progs.contains(&rpcbind::NFS) || progs.contains(&rpcbind::MOUNT) {
        return Some(format!(
            "NFS (program {}) or MNT (program {}) is registered with this host's rpcbind already (`rpcinfo -p` lists it); storlab does not touch another NFS server: stop it first",
            rpcbind::NFS,
            rpcbind::MOUNT
        ));
    }
    None
}

fn log_tail(path: &Path, lines: usize) -> String {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let all: Vec<&str> = text.lines().collect();
    all[all.len().saturating_sub(lines)..].join("\n")
}

/// The Ganesha started with `pidfile` (`ganesha.nfsd -p PIDFILE`).
fn started_with(pidfile: &Path) -> PidFiled<'_> {
    PidFiled {
        program: PROGRAM,
        flag: "-p",
        pidfile,
    }
}

pub fn read_pid(pidfile: &Path) -> Option<u32> {
    started_with(pidfile).pid()
}

/// Whether `pid` is a live ganesha.nfsd started with `-p pidfile`: a pid
/// reused since by another process, or the host's own Ganesha, is not.
pub fn is_ours(pid: u32, pidfile: &Path) -> bool {
    started_with(pidfile).is(pid)
}

/// Stops the Ganesha whose pid is in `pidfile` if it is still the one
/// started with it (SIGTERM: it unregisters from rpcbind and removes its
/// pid file; SIGKILL after 20 s); removes the pid file. Succeeds when it
/// is already gone.
pub fn stop(pidfile: &Path) -> Result<()> {
    started_with(pidfile).stop(Duration::from_secs(20))
}

/// NFS-Ganesha's version, from `ganesha.nfsd -v`.
pub fn version() -> Option<String> {
    cmd::version(PROGRAM, &["-v"])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn export() -> Export {
        Export {
            dir: "/tmp/storlab-7-glnfs".into(),
            host: "h1".into(),
            volume: "storlab-7-gl".into(),
            protocol: 3,
        }
    }

    #[test]
    fn the_config_exports_the_volume_to_loopback_only() {
        let c = export().config();
        for want in [
            "Protocols = 3;",
            "Bind_addr = 127.0.0.1;",
            "Pseudo = \"/storlab-7-gl\";",
            "Name = GLUSTER;",
            "Hostname = \"h1\";",
            "Volume = \"storlab-7-gl\";",
            "Clients = 127.0.0.1;",
            "Access_Type = None;",
            "Graceless = true;",
            "RecoveryRoot = \"/tmp/storlab-7-glnfs/recovery\";",
            "glfs_log = \"/tmp/storlab-7-glnfs/gfapi.log\";",
        ] {
            assert!(c.contains(want), "{want} not in\n{c}");
        }
        assert_eq!(
            export().args(),
            [
                "-f",
                "/tmp/storlab-7-glnfs/ganesha.conf",
                "-L",
                "/tmp/storlab-7-glnfs/ganesha.log",
                "-p",
                "/tmp/storlab-7-glnfs/ganesha.pid"
            ]
        );
    }

    #[test]
    fn only_the_ganesha_started_with_the_pid_file_is_ours() {
        let dir = tempfile::tempdir().unwrap();
        let pidfile = dir.path().join("ganesha.pid");
        std::fs::write(&pidfile, format!("{}\n", std::process::id())).unwrap();
        assert!(!is_ours(std::process::id(), &pidfile));
        stop(&pidfile).unwrap();
        assert!(!pidfile.exists(), "a stale pid file is removed");
        stop(&pidfile).unwrap();
    }
}
