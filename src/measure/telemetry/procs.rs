//! The processes whose CPU a run's telemetry counts, and how each is found.
//! Never by a name alone, which could catch another user's processes: by
//! a pid storlab holds (a daemon it started, from the pid file it chose),
//! by the pid file of a server it runs (PostgreSQL's `postmaster.pid` in
//! the cluster it created), by what the serving software itself says
//! (`gluster volume status` lists each brick's glusterfsd), by the owner
//! of a socket only that daemon listens on (zfs-fuse's), or by a command
//! line that names a mount point storlab created (the FUSE client of a
//! Gluster volume it mounted).

use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

/// The label of storlab's own process.
pub const STORLAB: &str = "storlab";
/// The label of the processes serving the campaign's other targets.
pub const OTHER_TARGETS: &str = "other targets";
/// The label of the kernel threads working for the campaign's devices.
pub const KERNEL: &str = "kernel threads";
/// The label of storlab's children that ended between two samples.
pub const EXITED: &str = "exited children";

/// A process serving a target or a workload, and how to find it.
#[derive(Debug, Clone, PartialEq)]
pub struct Served {
    /// Its `process` label: `glusterfsd`, `glusterfs`, `zfs-fuse`, `postgres`.
    pub label: String,
    pub locate: Locate,
    /// How storlab knows it is this process, for the run's facts.
    pub why: String,
}

/// Where a serving process's pid comes from.
#[derive(Debug, Clone, PartialEq)]
pub enum Locate {
    Pid(u32),
    /// A pid file whose first line is the pid, read at every sample (a
    /// server may start during the run).
    PidFile(PathBuf),
    /// The FUSE client `program` of the mount point storlab created,
    /// looked up when a run starts (a remount starts a new client).
    FuseClient {
        mount: PathBuf,
        program: String,
    },
    /// The process listening on a Unix socket, looked up when a run starts.
    SocketOwner(PathBuf),
}

/// A serving process found at one instant.
#[derive(Debug, Clone, PartialEq)]
pub struct Located {
    pub label: String,
    pub pid: u32,
}

impl Served {
    pub fn pid(label: &str, pid: u32, why: impl Into<String>) -> Served {
        Served {
            label: label.into(),
            locate: Locate::Pid(pid),
            why: why.into(),
        }
    }

    pub fn pid_file(label: &str, path: PathBuf, why: impl Into<String>) -> Served {
        Served {
            label: label.into(),
            locate: Locate::PidFile(path),
            why: why.into(),
        }
    }

    /// This process with a lookup that scans /proc done now, once, so
    /// that sampling reads only what it must.
    pub fn resolved(&self) -> Served {
        let pid = match &self.locate {
            Locate::FuseClient { mount, program } => fuse_client_of(mount, program),
            Locate::SocketOwner(path) => unix_socket_owner(path),
            _ => return self.clone(),
        };
        Served {
            locate: Locate::Pid(pid.unwrap_or(0)),
            ..self.clone()
        }
    }

    /// The process now, if it runs.
    pub fn locate(&self) -> Option<Located> {
        let pid = match &self.locate {
            Locate::Pid(p) => Some(*p).filter(|p| *p > 0)?,
            Locate::PidFile(path) => first_line_pid(&std::fs::read_to_string(path).ok()?)?,
            Locate::FuseClient { .. } | Locate::SocketOwner(_) => {
                self.resolved().locate().map(|l| l.pid)?
            }
        };
        Path::new(&format!("/proc/{pid}"))
            .exists()
            .then(|| Located {
                label: self.label.clone(),
                pid,
            })
    }
}

fn first_line_pid(text: &str) -> Option<u32> {
    text.lines().next()?.trim().parse().ok().filter(|p| *p > 0)
}

/// The pids `gluster volume status VOLUME --xml` gives, as (what, pid):
/// a brick's path for each glusterfsd, or the daemon's name (`Self-heal
/// Daemon`) for the volume's helpers. A node without a running process
/// (pid -1 or 0) is left out.
pub fn gluster_status_pids(xml: &str) -> Vec<(String, u32)> {
    let mut out = Vec::new();
    for node in xml.split("<node>").skip(1) {
        let node = node.split("</node>").next().unwrap_or("");
        let (host, path, pid) = (tag(node, "hostname"), tag(node, "path"), tag(node, "pid"));
        let Some(pid) = pid.and_then(|p| p.parse::<i64>().ok()).filter(|p| *p > 0) else {
            continue;
        };
        let what = match (host, path) {
            (Some(h), _) if h.contains("Daemon") => h,
            (_, Some(p)) => p,
            (Some(h), None) => h,
            (None, None) => continue,
        };
        out.push((what.to_string(), pid as u32));
    }
    out
}

/// The text of the first `<name>…</name>` in `xml`.
pub fn tag<'a>(xml: &'a str, name: &str) -> Option<&'a str> {
    let open = format!("<{name}>");
    let start = xml.find(&open)? + open.len();
    let len = xml[start..].find(&format!("</{name}>"))?;
    Some(xml[start..start + len].trim())
}

/// The process running `program` whose last argument is exactly `mount`:
/// the FUSE client of a mount point storlab created (the path holds
/// storlab's pid and the target's name, so no other process names it).
pub fn fuse_client_of(mount: &Path, program: &str) -> Option<u32> {
    let want = mount.as_os_str().as_bytes();
    for entry in std::fs::read_dir("/proc").ok()?.flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|s| s.parse::<u32>().ok())
        else {
            continue;
        };
        let Ok(cmdline) = std::fs::read(entry.path().join("cmdline")) else {
            continue;
        };
        if cmdline_matches(&cmdline, program, want) {
            return Some(pid);
        }
    }
    None
}

/// Whether a NUL-separated command line runs `program` with `last` as its
/// last argument.
fn cmdline_matches(cmdline: &[u8], program: &str, last: &[u8]) -> bool {
    let args: Vec<&[u8]> = cmdline
        .split(|b| *b == 0)
        .filter(|a| !a.is_empty())
        .collect();
    let (Some(first), Some(end)) = (args.first(), args.last()) else {
        return false;
    };
    let name = first.rsplit(|b| *b == b'/').next().unwrap_or(first);
    args.len() > 1 && name == program.as_bytes() && *end == last
}

/// The process listening on the Unix socket at `path` (zfs-fuse's
/// `/var/run/zfs/zfs_socket`): its inode from /proc/net/unix, then the
/// process holding that socket.
pub fn unix_socket_owner(path: &Path) -> Option<u32> {
    let table = std::fs::read_to_string("/proc/net/unix").ok()?;
    let inode = socket_inode(&table, path)?;
    let link = format!("socket:[{inode}]");
    // A daemon that forks to detach (zfs-fuse) leaves the socket with its
    // parent for a moment: the newest holder is the one that stays.
    crate::process::holders::holding(|l| l.as_os_str() == link.as_str())
        .into_iter()
        .map(|(pid, _)| pid)
        .max_by_key(|&pid| (crate::process::stat::of(pid).map(|s| s.start), pid))
}

/// The inode of the listening socket bound to `path` in /proc/net/unix
/// text (flags 00010000: __SO_ACCEPTCON, a listening socket).
fn socket_inode(table: &str, path: &Path) -> Option<u64> {
    let want = path.to_str()?;
    table.lines().skip(1).find_map(|l| {
        let f: Vec<&str> = l.split_whitespace().collect();
        (f.len() >= 8 && f[7] == want && f[3] == "00010000")
            .then(|| f[6].parse().ok())
            .flatten()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gluster_status_names_bricks_and_daemons() {
        let xml = "<cliOutput><volStatus><volumes><volume><volName>v</volName><nodeCount>3</nodeCount>\
            <node><hostname>h</hostname><path>/b/brick0</path><peerid>x</peerid><status>1</status><port>49152</port><pid>4242</pid></node>\
            <node><hostname>h</hostname><path>/b/brick1</path><status>0</status><port>N/A</port><pid>-1</pid></node>\
            <node><hostname>Self-heal Daemon</hostname><path>h</path><status>1</status><pid>77</pid></node>\
            </volume></volumes></volStatus></cliOutput>";
        assert_eq!(
            gluster_status_pids(xml),
            [
                ("/b/brick0".to_string(), 4242),
                ("Self-heal Daemon".to_string(), 77)
            ]
        );
        assert!(gluster_status_pids("<cliOutput/>").is_empty());
    }

    #[test]
    fn a_fuse_client_is_known_by_its_mount_point_alone() {
        let line = b"/usr/sbin/glusterfs\0--process-name\0fuse\0--volfile-id=/v\0/var/tmp/storlab-1-gl/mnt\0";
        assert!(cmdline_matches(
            line,
            "glusterfs",
            b"/var/tmp/storlab-1-gl/mnt"
        ));
        assert!(!cmdline_matches(
            line,
            "glusterfs",
            b"/var/tmp/storlab-2-gl/mnt"
        ));
        assert!(!cmdline_matches(
            line,
            "glusterfsd",
            b"/var/tmp/storlab-1-gl/mnt"
        ));
        assert!(!cmdline_matches(b"", "glusterfs", b"/x"));
    }

    #[test]
    fn a_listening_socket_is_found_by_its_path() {
        let table = "Num       RefCount Protocol Flags    Type St Inode Path\n\
            0000000067622e1e: 00000002 00000000 00010000 0001 01 2832044 /var/run/zfs/zfs_socket\n\
            0000000067622e1f: 00000003 00000000 00000000 0001 03 2832050 /var/run/zfs/zfs_socket\n";
        assert_eq!(
            socket_inode(table, Path::new("/var/run/zfs/zfs_socket")),
            Some(2832044)
        );
        assert_eq!(socket_inode(table, Path::new("/other")), None);
    }

    #[test]
    fn a_pid_file_is_read_when_asked() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("postmaster.pid");
        let s = Served::pid_file("postgres", f.clone(), "test");
        assert_eq!(s.locate(), None);
        std::fs::write(&f, format!("{}\n/data\n", std::process::id())).unwrap();
        assert_eq!(s.locate().unwrap().pid, std::process::id());
        assert_eq!(first_line_pid("0\n"), None);
    }
}
