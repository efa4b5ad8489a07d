//! The resources storlab provisions, as written in the journal, and how to
//! undo each one. Every undo is idempotent (undoing what is already gone
//! succeeds), touches only the named resource, and refuses anything outside
//! storlab's naming scheme ([`super::naming`]): a journal line naming
//! `/home` removes nothing. A resource on another host (a brick on a
//! Gluster server, a client's mount) is undone there through the remote
//! shell ([`super::site`]). A peer of a Gluster trusted pool carries no
//! name storlab gives; it is journaled only when storlab added it, and
//! Gluster itself refuses to detach one that still holds a brick.
//! What only a target kind can undo (a ZFS pool, a Gluster volume or peer,
//! a qemu-storage-daemon, an NFS-Ganesha) is undone by that kind, through
//! its [`KindResources`]; so is the question whether a shared daemon a
//! kind starts is still used (zfs-fuse serves pools, glusterd volumes,
//! rpcbind registrations), and what a killed campaign broke that only its
//! kind can mend before its journal is undone (a pool outlives its
//! zfs-fuse). This module knows what the resources are called, not how a
//! kind removes them.

use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use serde::{Deserialize, Serialize};

use super::naming::{check_ours, check_ours_as_written, is_resource_name, WORKDIR_PREFIX};
use super::owner::Owner;
use super::site::{check_host, Site};
use super::undo::remove_dir;
pub use super::undo::{Said, Undone};
use super::{daemon, loopdev, mount, netns, ownership, site_fs, tracefs, unfinished};
use crate::process::holders;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Resource {
    /// A directory storlab created (mount point, brick, image directory,
    /// socket directory); removed with its contents, never across a mount.
    Dir { path: PathBuf },
    /// An image file storlab created.
    File { path: PathBuf },
    /// The loop devices backed by `image`; with `device`, journaled once
    /// it is attached, that device too even when `image` can no longer be
    /// reached (a FUSE export whose daemon ended and unmounted it: sysfs
    /// then names its backing file "/").
    Loop {
        image: PathBuf,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        device: Option<PathBuf>,
    },
    /// A mount storlab made on `path`.
    Mount { path: PathBuf },
    /// A ZFS pool storlab created.
    Pool { name: String },
    /// A Gluster volume storlab created.
    Volume { name: String },
    /// A daemon storlab started; its pid is in `pidfile`.
    Daemon { program: String, pidfile: PathBuf },
    /// A qemu-storage-daemon one target started, serving its image as a
    /// FUSE export on `export`: stopped by the pid in `pidfile` (only
    /// while that process is the daemon started with it), its export
    /// unmounted if a killed daemon left it.
    QemuDaemon { pidfile: PathBuf, export: PathBuf },
    /// An NFS-Ganesha one target started to re-export a Gluster volume:
    /// stopped by the pid in `pidfile` (only while that process is the
    /// ganesha.nfsd started with it); its configuration directory is a
    /// [`Resource::Dir`] of its own, journaled before it.
    Ganesha { pidfile: PathBuf },
    /// What the NFS server started with `pidfile` (an NFS-Ganesha)
    /// registers with rpcbind, NFS and MOUNT: removed by program number
    /// once that server is gone, where nothing listens on their ports any
    /// more (a server killed outright leaves them; the host's rpcbind then
    /// refuses every later re-export, and storlab's own never stops).
    RpcRegistrations { pidfile: PathBuf },
    /// A campaign's working directory on a target, removed only while its
    /// marker still names `owner` (another campaign may own that path now).
    Workdir { path: PathBuf, owner: Owner },
    /// A server storlab added to the Gluster trusted pool of the glusterd
    /// where it runs the gluster command line; detached again.
    Peer { name: String },
    /// A root being built in `dir` (debootstrap, [`super::root::build`]):
    /// its processes stopped, what it mounted in the tree unmounted, the
    /// directory removed. Released once the root is complete.
    RootBuild { dir: PathBuf },
    /// A network namespace storlab added (`ip netns add`) for a root's
    /// daemons: what still runs in it stopped, then deleted.
    Netns { name: String },
    /// The host's end of a veth pair storlab added for a root's daemons.
    Link { name: String },
    /// A daemon of another root, run chrooted in network namespace
    /// `netns`: stopped by the pid in `pidfile` (only while that process
    /// runs in the namespace), and with it whatever else runs there (what
    /// it started: brick processes, a FUSE client).
    RootDaemon {
        program: String,
        pidfile: PathBuf,
        netns: String,
    },
    /// The tracefs storlab mounted on /sys/kernel/tracing for bpftrace's
    /// attach (source `storlab-tracefs`): unmounted once no storlab is
    /// attaching ([`super::tracefs`]).
    Tracefs,
    /// `resource` on another host: a directory, a mount, a volume or a
    /// peer, undone there through the remote shell.
    Remote {
        host: String,
        resource: Box<Resource>,
    },
}

/// The daemons storlab may start.
const DAEMONS: &[&str] = &["glusterd", "zfs-fuse", "rpcbind"];

impl Resource {
    /// `resource` as it lives at `site`: itself on this host, wrapped in
    /// [`Resource::Remote`] on another.
    pub fn at(site: &Site, resource: Resource) -> Resource {
        match site {
            Site::Local => resource,
            Site::Remote(host) => Resource::Remote {
                host: host.clone(),
                resource: Box::new(resource),
            },
        }
    }

    pub fn describe(&self) -> String {
        match self {
            Resource::Dir { path } => format!("directory {}", path.display()),
            Resource::File { path } => format!("image {}", path.display()),
            Resource::Loop {
                image,
                device: Some(dev),
            } => format!("loop device {} of {}", dev.display(), image.display()),
            Resource::Loop { image, .. } => format!("loop device of {}", image.display()),
            Resource::Mount { path } => format!("mount on {}", path.display()),
            Resource::Pool { name } => format!("ZFS pool {name}"),
            Resource::Volume { name } => format!("Gluster volume {name}"),
            Resource::Daemon { program, pidfile } => {
                format!("{program} daemon (pid file {})", pidfile.display())
            }
            Resource::QemuDaemon { export, .. } => {
                format!("qemu-storage-daemon serving {}", export.display())
            }
            Resource::Ganesha { pidfile } => {
                format!("NFS-Ganesha (pid file {})", pidfile.display())
            }
            Resource::RpcRegistrations { pidfile } => format!(
                "rpcbind registrations of the NFS server with pid file {}",
                pidfile.display()
            ),
            Resource::Workdir { path, .. } => format!("working directory {}", path.display()),
            Resource::Peer { name } => format!("Gluster peer {name}"),
            Resource::RootBuild { dir } => format!("unfinished root {}", dir.display()),
            Resource::Netns { name } => format!("network namespace {name}"),
            Resource::Link { name } => format!("network link {name}"),
            Resource::RootDaemon { program, netns, .. } => {
                format!("{program} of another root in network namespace {netns}")
            }
            Resource::Tracefs => format!("tracefs on {}", tracefs::TRACEFS),
            Resource::Remote { host, resource } => format!("{} on {host}", resource.describe()),
        }
    }

    /// Fails unless the resource lies inside storlab's naming scheme; the
    /// journal refuses to record, and cleanup to undo, anything else.
    pub fn check_ours(&self) -> Result<()> {
        match self {
            Resource::Dir { path }
            | Resource::File { path }
            | Resource::Loop { image: path, .. }
            | Resource::Mount { path } => check_ours(path),
            Resource::Workdir { path, .. } => {
                check_ours(path)?;
                let last = path.file_name().map(|n| n.to_string_lossy().into_owned());
                if !last.is_some_and(|n| n.starts_with(WORKDIR_PREFIX)) {
                    bail!("{} is not a storlab working directory", path.display());
                }
                Ok(())
            }
            Resource::Pool { name } if is_resource_name(name, '_') => Ok(()),
            Resource::Volume { name } if is_resource_name(name, '-') => Ok(()),
            Resource::Pool { name } | Resource::Volume { name } => {
                bail!("`{name}` is not a name storlab gives (storlab-<pid>-<target>); storlab does not touch it")
            }
            Resource::Daemon { program, pidfile } => check_pidfile(program, pidfile),
            Resource::QemuDaemon { pidfile, export } => {
                check_ours(pidfile)?;
                check_ours(export)
            }
            Resource::Ganesha { pidfile } | Resource::RpcRegistrations { pidfile } => {
                check_ours(pidfile)
            }
            Resource::Peer { name } => check_host(name),
            // Only storlab's own (by its source name) is ever unmounted.
            Resource::Tracefs => Ok(()),
            Resource::RootBuild { dir } => check_ours(dir),
            Resource::Netns { name } => check_netns(name),
            Resource::Link { name } if netns::is_our_link(name) => Ok(()),
            Resource::Link { name } => {
                bail!("`{name}` is not a link storlab makes (slPIDhN); storlab does not touch it")
            }
            Resource::RootDaemon { pidfile, netns, .. } => {
                check_ours(pidfile)?;
                check_netns(netns)
            }
            Resource::Remote { host, resource } => {
                check_host(host)?;
                match &**resource {
                    // Checked as written: the path is on the other host.
                    Resource::Dir { path } | Resource::Mount { path } => {
                        check_ours_as_written(path)
                    }
                    r @ (Resource::Volume { .. } | Resource::Peer { .. }) => r.check_ours(),
                    r => bail!(
                        "{} is not undone on another host; storlab does not touch it",
                        r.describe()
                    ),
                }
            }
        }
    }

    /// Undoes the resource (a kind's through `kinds`); succeeds when it is
    /// already gone.
    pub fn undo(&self, kinds: Kinds) -> Result<Undone> {
        self.check_ours()
            .with_context(|| format!("refusing to undo {}", self.describe()))?;
        let gone = |r: Result<()>| r.map(|()| Undone::Gone);
        match self {
            Resource::Dir { path } => gone(remove_dir(path)),
            Resource::File { path } => gone(remove_file(path)),
            Resource::Loop { image, device } => gone(loopdev::undo(image, device.as_deref())),
            Resource::Mount { path } => gone(mount::umount_if_mounted(path)),
            Resource::Daemon { program, pidfile } => {
                daemon::stop(program, pidfile, &|| kinds.daemon_users(program))
            }
            Resource::Workdir { path, owner } => ownership::remove_owned(path, owner),
            Resource::Tracefs => tracefs::undo(),
            Resource::RootBuild { dir } => gone(unfinished::undo_build(dir)),
            Resource::Netns { name } => gone(netns::delete(name)),
            Resource::Link { name } => gone(netns::delete_link(name)),
            Resource::RootDaemon {
                program,
                pidfile,
                netns,
            } => gone(netns::stop_root_daemon(program, pidfile, netns)),
            // On that host itself (`storlab cleanup` run there), as any
            // resource of this host's, with every local check.
            Resource::Remote { host, resource } => match Site::of(host) {
                Site::Local => resource.undo(kinds),
                there => undo_at(&there, resource, kinds),
            },
            Resource::Pool { .. }
            | Resource::Volume { .. }
            | Resource::QemuDaemon { .. }
            | Resource::Ganesha { .. }
            | Resource::RpcRegistrations { .. }
            | Resource::Peer { .. } => kinds.undo(&Site::Local, self),
        }
    }
}

/// Removes an image storlab created, unless a process still has it open
/// (a child of a storlab killed a moment ago, ending; anything else): the
/// file would vanish while that process writes on into it, and cleanup
/// must not say it is undone. Gone already is undone.
fn remove_file(path: &Path) -> Result<()> {
    let t0 = std::time::Instant::now();
    let mut held = holders::of_file(path);
    while !held.is_empty() && t0.elapsed() < std::time::Duration::from_secs(3) {
        std::thread::sleep(std::time::Duration::from_millis(100));
        held = holders::of_file(path);
    }
    if let Some((pid, program)) = held.first() {
        bail!(
            "{program} (pid {pid}) still has {} open; end it (`kill {pid}`), then run `storlab cleanup` again",
            path.display()
        );
    }
    match std::fs::remove_file(path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
            Err(e).with_context(|| format!("removing {}", path.display()))
        }
        _ => Ok(()),
    }
}

/// Undoes a resource of another host's, there.
fn undo_at(site: &Site, resource: &Resource, kinds: Kinds) -> Result<Undone> {
    let gone = |r: Result<()>| r.map(|()| Undone::Gone);
    match resource {
        Resource::Dir { path } => gone(site_fs::remove_dir(site, path)),
        Resource::Mount { path } => gone(site_fs::umount(site, path)),
        r @ (Resource::Volume { .. } | Resource::Peer { .. }) => kinds.undo(site, r),
        other => bail!("{} is not undone on another host", other.describe()),
    }
}

/// One target kind's part in undoing what it journaled. Every answer is
/// `None` for what is not this kind's.
pub trait KindResources: Sync {
    /// Undoes `resource`, which lives at `site`, if it is this kind's;
    /// idempotent, as every undo.
    fn undo(&self, _site: &Site, _resource: &Resource) -> Option<Result<Undone>> {
        None
    }

    /// What still uses `program`, a shared daemon this kind starts (the
    /// volumes glusterd serves): an error when it cannot be asked, since an
    /// empty answer must mean "nothing", never "could not tell".
    fn daemon_users(&self, _program: &str) -> Option<Result<Vec<String>>> {
        None
    }

    /// Mends, before a killed campaign's journal is undone, what its death
    /// broke and only this kind can mend, saying what it did.
    fn before_cleanup(&self, _left: &[(u64, Resource)], _say: &mut dyn FnMut(Said)) {}
}

/// The target kinds, as the journal sees them: the journal is made with
/// them (`crate::targets::RESOURCES` for a campaign, [`Kinds::NONE`] where
/// only shared resources are journaled).
#[derive(Clone, Copy)]
pub struct Kinds(pub &'static [&'static dyn KindResources]);

impl std::fmt::Debug for Kinds {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Kinds({})", self.0.len())
    }
}

impl Kinds {
    /// No kind: a journal of shared resources only (directories, mounts).
    pub const NONE: Kinds = Kinds(&[]);

    /// Undoes a kind's resource at `site` through the kind that knows it.
    pub fn undo(&self, site: &Site, resource: &Resource) -> Result<Undone> {
        match self.0.iter().find_map(|k| k.undo(site, resource)) {
            Some(done) => done,
            None => bail!(
                "no target kind undoes {} here; run `storlab cleanup`",
                resource.describe()
            ),
        }
    }

    /// What still uses the shared daemon `program`; nothing known when no
    /// kind serves anything through it.
    pub fn daemon_users(&self, program: &str) -> Result<Vec<String>> {
        self.0
            .iter()
            .find_map(|k| k.daemon_users(program))
            .unwrap_or_else(|| Ok(Vec::new()))
    }

    /// Every kind mends what it must before `left`, what a killed
    /// campaign's journal still holds, is undone.
    pub fn before_cleanup(&self, left: &[(u64, Resource)], say: &mut dyn FnMut(Said)) {
        for k in self.0 {
            k.before_cleanup(left, say);
        }
    }
}

/// A network namespace's name is one storlab gives (`storlab-PID-TARGET`).
fn check_netns(name: &str) -> Result<()> {
    if netns::is_ours(name) {
        return Ok(());
    }
    bail!("network namespace `{name}` is not one storlab makes (storlab-<pid>-<target>); storlab does not touch it")
}

/// A daemon's pid file is `<program>-<pid>.pid`, for a daemon storlab starts.
fn check_pidfile(program: &str, pidfile: &Path) -> Result<()> {
    let name = pidfile
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let pid = name
        .strip_prefix(program)
        .and_then(|r| r.strip_prefix('-'))
        .and_then(|r| r.strip_suffix(".pid"));
    let digits = pid.is_some_and(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()));
    if !DAEMONS.contains(&program) || !digits || !pidfile.is_absolute() {
        bail!(
            "{program} with pid file {} is not a daemon storlab starts; storlab does not touch it",
            pidfile.display()
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn undoing_what_is_gone_succeeds() {
        let dir = tempfile::Builder::new()
            .prefix("storlab-work-t")
            .tempdir()
            .unwrap();
        let p = dir.path().join("img");
        std::fs::write(&p, b"x").unwrap();
        for r in [
            Resource::File { path: p.clone() },
            Resource::File { path: p.clone() },
            Resource::Dir { path: p.clone() },
            Resource::Mount { path: p },
        ] {
            assert_eq!(r.undo(Kinds::NONE).unwrap(), Undone::Gone);
        }
    }

    #[test]
    fn an_image_a_process_still_has_open_is_not_said_undone() {
        let dir = tempfile::Builder::new()
            .prefix("storlab-work-t")
            .tempdir()
            .unwrap();
        let path = dir.path().join("disk.raw");
        std::fs::write(&path, b"x").unwrap();
        let mut writer = std::process::Command::new("sh")
            .arg("-c")
            .arg("exec 3>>\"$1\"; exec sleep 30")
            .arg("sh")
            .arg(&path)
            .spawn()
            .unwrap();
        while holders::of_file(&path).is_empty() {
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        let r = Resource::File { path: path.clone() };
        let e = format!("{:#}", r.undo(Kinds::NONE).unwrap_err());
        let _ = writer.kill();
        let _ = writer.wait();
        assert!(
            e.contains(&format!("sleep (pid {}) still has", writer.id())),
            "{e}"
        );
        assert!(path.exists());
        assert_eq!(r.undo(Kinds::NONE).unwrap(), Undone::Gone);
        assert!(!path.exists());
    }

    #[test]
    fn nothing_outside_the_naming_scheme_is_undone() {
        let victim = tempfile::Builder::new().prefix("victim").tempdir().unwrap();
        let file = victim.path().join("precious");
        std::fs::write(&file, b"data").unwrap();
        for r in [
            Resource::Dir {
                path: victim.path().to_path_buf(),
            },
            Resource::File { path: file.clone() },
            Resource::Mount {
                path: "/home".into(),
            },
            Resource::Pool {
                name: "tank".into(),
            },
            Resource::Volume { name: "gv0".into() },
            Resource::Daemon {
                program: "sshd".into(),
                pidfile: "/run/sshd.pid".into(),
            },
            Resource::Daemon {
                program: "glusterd".into(),
                pidfile: file.clone(),
            },
            Resource::Ganesha {
                pidfile: file.clone(),
            },
            Resource::Daemon {
                program: "rpcbind".into(),
                pidfile: "/run/rpcbind.pid".into(),
            },
            Resource::Workdir {
                path: victim.path().to_path_buf(),
                owner: Owner::me(),
            },
            Resource::Remote {
                host: "h1".into(),
                resource: Box::new(Resource::Dir {
                    path: "/home".into(),
                }),
            },
            Resource::Remote {
                host: "h1".into(),
                resource: Box::new(Resource::Volume { name: "gv0".into() }),
            },
            Resource::Remote {
                host: "h1".into(),
                resource: Box::new(Resource::Daemon {
                    program: "glusterd".into(),
                    pidfile: "/var/lib/storlab/glusterd-1.pid".into(),
                }),
            },
            Resource::RootBuild {
                dir: victim.path().to_path_buf(),
            },
            Resource::Netns {
                name: "cni-1234".into(),
            },
            Resource::Link {
                name: "eth0".into(),
            },
            Resource::RootDaemon {
                program: "glusterd".into(),
                pidfile: file.clone(),
                netns: "storlab-1-gl".into(),
            },
            Resource::RootDaemon {
                program: "glusterd".into(),
                pidfile: "/var/tmp/storlab-1-gl/glusterd.pid".into(),
                netns: "cni-1234".into(),
            },
        ] {
            let e = r.undo(Kinds::NONE).unwrap_err();
            assert!(format!("{e:#}").contains("does not touch"), "{e:#}");
        }
        assert!(file.exists(), "the victim's file is still there");
        for bad_host in ["-oProxyCommand=sh", "h;x"] {
            let r = Resource::Remote {
                host: bad_host.into(),
                resource: Box::new(Resource::Volume {
                    name: "storlab-1-v".into(),
                }),
            };
            assert!(r.undo(Kinds::NONE).is_err(), "{bad_host}");
            let p = Resource::Peer {
                name: bad_host.into(),
            };
            assert!(p.check_ours().is_err(), "{bad_host}");
        }
    }

    #[test]
    fn remote_resources_round_trip_through_the_journal_format() {
        let r = Resource::Remote {
            host: "s1".into(),
            resource: Box::new(Resource::Dir {
                path: "/var/tmp/storlab-7-gl/brick0".into(),
            }),
        };
        let text = serde_json::to_string(&r).unwrap();
        assert_eq!(
            text,
            r#"{"type":"remote","host":"s1","resource":{"type":"dir","path":"/var/tmp/storlab-7-gl/brick0"}}"#
        );
        assert_eq!(serde_json::from_str::<Resource>(&text).unwrap(), r);
        assert_eq!(r.describe(), "directory /var/tmp/storlab-7-gl/brick0 on s1");
        r.check_ours().unwrap();
    }

    #[test]
    fn a_remote_brick_is_removed_there() {
        crate::provision::site::with_loopback_rsh(|| {
            let d = tempfile::tempdir().unwrap();
            let base = d.path().canonicalize().unwrap().join("storlab-7-gl");
            std::fs::create_dir_all(base.join("brick0/.glusterfs")).unwrap();
            let r = Resource::Remote {
                host: "s1".into(),
                resource: Box::new(Resource::Dir { path: base.clone() }),
            };
            assert_eq!(r.undo(Kinds::NONE).unwrap(), Undone::Gone);
            assert!(!base.exists());
            assert_eq!(
                r.undo(Kinds::NONE).unwrap(),
                Undone::Gone,
                "undoing what is gone succeeds"
            );
        });
    }
}
