//! Target `nfs`: an export mounted with the kernel NFS client on a mount
//! point storlab creates. Before anything is touched, the kernel is checked
//! for an NFS client (/proc/filesystems, or a loadable module): without
//! one the target is refused with a clear message.
//!
//! With `export_of = "gl"` storlab serves the export itself, as seed 002
//! stacks NFS on Gluster: the gluster target's volume re-exported by an
//! NFS-Ganesha of this target's own through its Gluster backend
//! ([`ganesha`]), on 127.0.0.1, registered with rpcbind
//! (the host's, or one storlab starts and claims as a shared daemon), and
//! mounted back from 127.0.0.1. Its directory
//! `<tmp>/storlab-<pid>-<target>/` holds Ganesha's configuration, pid
//! file and logs and the mount point; all of it is journaled before it is
//! made. An NFS server the host runs already is never touched: the target
//! is refused. Ganesha serves no NLM (it needs rpc.statd), so an NFSv3
//! mount is made with `nolock`. Between runs the mount and Ganesha are
//! stopped and started again with the volume's mount below them.

pub mod ganesha;
pub mod resources;
pub mod rpcbind;

use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use serde_json::{json, Value};

use self::ganesha::Export;
use crate::measure::telemetry::{Backing, Served};
use crate::params::{declare, Fault};
use crate::process::watch;
use crate::provision::client::ClientMount;
use crate::provision::daemon::{self, Claim};
use crate::provision::journal::{state_dir, Held, Journal, Resource};
use crate::provision::{cmd, mount, mountinfo, options, resource_name};
use crate::targets::{Reach, Target, TargetConfig};

pub const VERSIONS: &[&str] = &["3", "4", "4.0", "4.1", "4.2"];

declare! {
    /// The parameters of an `nfs` target.
    pub struct NfsParams {
        server: string => "NFS server: host name, IPv4 or IPv6 address",
        export: string => "exported path on the server, e.g. /srv/nfs",
        export_of: string => "a gluster target whose volume storlab re-exports over NFS itself (NFS-Ganesha with its Gluster backend, on 127.0.0.1) and mounts back, instead of `server` and `export` (seed 002's Gluster over NFSv3)",
        vers: one_of(VERSIONS) = "4.2" => "protocol version",
        mount_options: list => "client mount options, e.g. [\"rsize=1048576\", \"wsize=1048576\", \"hard\", \"noatime\"]",
    }
}

impl TargetConfig for NfsParams {
    fn validate(&self) -> Result<(), Fault> {
        if self.export_of.is_some() {
            return self.validate_export_of();
        }
        match (self.server.as_deref(), self.export.as_deref()) {
            (None, _) => Err((
                "server",
                "an nfs target needs `server` (or `export_of`, a gluster target storlab re-exports itself)".into(),
            )),
            (Some(s), _) if s.is_empty() || s.contains('/') => {
                Err(("server", format!("`{s}` is not a host name or address")))
            }
            (_, None) => Err((
                "export",
                "an nfs target needs `export`, e.g. /srv/nfs".into(),
            )),
            (_, Some(e)) if !e.starts_with('/') => Err((
                "export",
                format!("`{e}` is not an absolute path on the server"),
            )),
            _ => self.refuse_version_in_options(),
        }
    }

    fn build(&self, name: &str, journal: &Journal) -> Box<dyn Target> {
        Box::new(Nfs::new(name, self, journal))
    }
}

impl NfsParams {
    /// With `export_of`, storlab is the server: no `server` or `export`.
    fn validate_export_of(&self) -> Result<(), Fault> {
        let of = self.export_of.as_deref().unwrap_or_default();
        for (key, given) in [("server", &self.server), ("export", &self.export)] {
            if given.is_some() {
                return Err((
                    key,
                    format!("with `export_of = \"{of}\"` storlab serves the export itself on 127.0.0.1; remove `{key}`"),
                ));
            }
        }
        self.refuse_version_in_options()
    }

    fn refuse_version_in_options(&self) -> Result<(), Fault> {
        match self
            .mount_options
            .iter()
            .flatten()
            .find(|o| o.starts_with("vers=") || o.starts_with("nfsvers="))
        {
            Some(o) => Err((
                "mount_options",
                format!("`{o}`: set the version with `vers`, not in mount_options"),
            )),
            None => Ok(()),
        }
    }
}

/// The `server:/export` source; IPv6 addresses are bracketed.
pub fn source(server: &str, export: &str) -> String {
    if server.contains(':') && !server.starts_with('[') {
        format!("[{server}]:{export}")
    } else {
        format!("{server}:{export}")
    }
}

/// Options for mount(8): the version first, then the user's.
pub fn options(vers: &str, extra: &[String]) -> Vec<String> {
    let mut opts = vec![format!("vers={vers}")];
    opts.extend(extra.iter().cloned());
    opts
}

/// Why this kernel cannot mount NFS, if it cannot: no `nfs` in
/// `filesystems` (the text of /proc/filesystems) and no module to load.
pub fn kernel_lacks_nfs(filesystems: &str, module_dir: &Path) -> Option<String> {
    let listed = filesystems
        .lines()
        .any(|l| matches!(l.split_whitespace().last(), Some("nfs" | "nfs4")));
    if listed || module_dir.join("kernel/fs/nfs").is_dir() {
        return None;
    }
    Some(format!(
        "this kernel has no NFS client: `nfs` is not in /proc/filesystems and {} has no nfs module; use a kernel built with CONFIG_NFS_FS, or test an existing NFS mount with a `dir` target",
        module_dir.display()
    ))
}

/// Whether the mount's options show the version asked for (`4` is any 4.x).
pub fn version_matches(vers: &str, super_options: &str) -> bool {
    super_options
        .split(',')
        .filter_map(|o| o.strip_prefix("vers="))
        .any(|v| v == vers || (vers == "4" && v.starts_with('4')))
}

pub struct Nfs {
    name: String,
    server: String,
    export: String,
    vers: String,
    mount_options: Vec<String>,
    mnt: PathBuf,
    /// The gluster target whose volume this one re-exports, if any.
    export_of: Option<String>,
    /// The export storlab serves, known once it stands on the volume.
    ganesha: Option<Export>,
    /// This campaign's claim on rpcbind, held while Ganesha is registered.
    rpcbind_claim: Option<Claim>,
    held: Held,
}

impl Nfs {
    pub fn new(name: &str, p: &NfsParams, journal: &Journal) -> Nfs {
        Nfs {
            name: name.to_string(),
            server: p.server.clone().unwrap_or_default(),
            export: p.export.clone().unwrap_or_default(),
            vers: p.vers.clone(),
            mount_options: p.mount_options.clone().unwrap_or_default(),
            mnt: std::env::temp_dir().join(resource_name('-', name)),
            export_of: p.export_of.clone(),
            ganesha: None,
            rpcbind_claim: None,
            held: Held::new(journal),
        }
    }

    /// The full mount(8) argument vector.
    pub fn mount_args(&self) -> Vec<String> {
        mount::mount_args(
            "nfs",
            &source(&self.server, &self.export),
            &self.mnt,
            &self.options(),
        )
    }

    /// The mount options: the version, `nolock` on an NFSv3 export storlab
    /// serves (Ganesha runs no NLM), then the user's.
    fn options(&self) -> Vec<String> {
        let mut opts = options(&self.vers, &self.mount_options);
        if self.export_of.is_some() && self.vers == "3" && !opts.iter().any(|o| o == "lock") {
            opts.insert(1, "nolock".into());
        }
        opts
    }

    /// The export storlab serves (after [`Target::stand_on`]).
    pub fn ganesha(&self) -> Option<&Export> {
        self.ganesha.as_ref()
    }

    fn mount(&self) -> Result<()> {
        cmd::run("mount", &self.mount_args()).with_context(|| {
            format!(
                "mounting {} on {}",
                source(&self.server, &self.export),
                self.mnt.display()
            )
        })?;
        let entry = mount::mounted_at(&self.mnt).context("the NFS mount is not in mountinfo")?;
        if !entry
            .super_options
            .split(',')
            .any(|o| o == format!("vers={}", self.vers))
        {
            bail!(
                "NFS mount on {} negotiated `{}`, not vers={}",
                self.mnt.display(),
                entry.super_options,
                self.vers
            );
        }
        Ok(())
    }

    /// Serves the export (`export_of`): its directory, rpcbind (the host's,
    /// or one started and claimed), and an NFS-Ganesha of its own, each
    /// journaled before it is made. What `provision` does before the
    /// mount; an NFS server the host runs already is refused untouched.
    pub fn provision_export(&mut self) -> Result<()> {
        let export = self.ganesha.clone().with_context(|| {
            format!(
                "target `{}` re-exports `{}`, but does not stand on its volume yet",
                self.name,
                self.export_of.as_deref().unwrap_or_default()
            )
        })?;
        if let Some(why) = ganesha::server_in_the_way() {
            bail!("{why}");
        }
        self.held.make_dir(&export.dir)?;
        self.rpcbind_claim = Some(daemon::claim(rpcbind::PROGRAM)?);
        if !rpcbind::reachable() {
            let pidfile = state_dir().join(format!("rpcbind-{}.pid", std::process::id()));
            self.held.record(Resource::Daemon {
                program: rpcbind::PROGRAM.into(),
                pidfile: pidfile.clone(),
            })?;
            let args: Vec<String> = rpcbind::ARGS.iter().map(|a| a.to_string()).collect();
            let (ready, users) = (rpcbind::reachable, &rpcbind::users);
            daemon::start_foreground(rpcbind::PROGRAM, &args, &pidfile, ready, users)
                .context("starting rpcbind, which NFSv3 needs")?;
        }
        self.held.record(Resource::RpcRegistrations {
            pidfile: export.pidfile(),
        })?;
        self.held.record(Resource::Ganesha {
            pidfile: export.pidfile(),
        })?;
        let pid = export.start()?;
        watch::register(pid, ganesha::PROGRAM, &self.name, true);
        Ok(())
    }

    /// Stops what serves the mount: the mount, and Ganesha when storlab
    /// serves the export.
    fn unserve(&mut self) -> Result<()> {
        watch::forget(ganesha::PROGRAM, &self.name);
        mount::umount_if_mounted(&self.mnt)?;
        if let Some(e) = &self.ganesha {
            ganesha::stop(&e.pidfile())?;
        }
        Ok(())
    }

    /// Starts Ganesha again (when storlab serves the export), then mounts.
    fn serve(&mut self) -> Result<()> {
        if let Some(e) = &self.ganesha {
            let pid = e.start()?;
            watch::register(pid, ganesha::PROGRAM, &self.name, true);
        }
        self.mount()
    }

    /// The checks of a re-export: Ganesha, its Gluster backend and rpcbind
    /// installed, and no NFS server running here already.
    fn preflight_export(&self) -> Result<()> {
        for (program, package) in [
            (ganesha::PROGRAM, "nfs-ganesha"),
            ("rpcbind", "rpcbind"),
            ("rpcinfo", "rpcbind"),
        ] {
            if cmd::which(program).is_none() {
                bail!("it re-exports a Gluster volume with NFS-Ganesha, but {program} is not installed; install {package} (apt-get install nfs-ganesha nfs-ganesha-gluster rpcbind)");
            }
        }
        if ganesha::fsal_gluster().is_none() {
            bail!(
                "NFS-Ganesha's Gluster backend (ganesha/libfsalgluster.so under /usr/lib/<arch>-linux-gnu, /usr/lib64 or /usr/lib) is not installed; install nfs-ganesha-gluster"
            );
        }
        if let Some(why) = ganesha::server_in_the_way() {
            bail!("{why}");
        }
        Ok(())
    }
}

/// The glusterd host and volume of the Gluster FUSE mount holding `dir`.
fn volume_of(dir: &Path) -> Result<(String, String)> {
    let m = mountinfo::mount_of(dir)
        .filter(|m| m.fs_type == "fuse.glusterfs")
        .with_context(|| {
            format!(
                "{} is not on a Gluster volume's mount; `export_of` must name a gluster target",
                dir.display()
            )
        })?;
    match m.source.split_once(":/") {
        Some((host, volume)) => Ok((host.to_string(), volume.to_string())),
        None => bail!(
            "`{}` is not a Gluster mount source (host:/volume)",
            m.source
        ),
    }
}

impl Target for Nfs {
    fn preflight(&self) -> Result<()> {
        options::refuse_paths("mount_options", &self.mount_options)?;
        if !crate::host::is_root() {
            bail!("mounting NFS needs root; run storlab as root");
        }
        let fs = std::fs::read_to_string("/proc/filesystems").unwrap_or_default();
        let release = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default();
        let modules = Path::new("/lib/modules").join(release.trim());
        if let Some(why) = kernel_lacks_nfs(&fs, &modules) {
            bail!("{why}");
        }
        if self.export_of.is_some() {
            self.preflight_export()?;
        }
        Ok(())
    }

    fn provision(&mut self) -> Result<()> {
        if self.export_of.is_some() {
            self.provision_export()?;
        }
        self.held.make_mount_point(&self.mnt)?;
        self.mount()
    }

    fn root(&self) -> &Path {
        &self.mnt
    }

    /// A plain export is mounted by every host; one storlab serves listens
    /// on 127.0.0.1 only.
    fn reach(&self) -> Reach {
        if self.export_of.is_some() {
            return Reach::ThisHost;
        }
        Reach::Mount(ClientMount {
            fs_type: "nfs".into(),
            source: source(&self.server, &self.export),
            options: self.options(),
            path: self.mnt.clone(),
            top: self.mnt.clone(),
            made_on: Vec::new(),
        })
    }

    fn remount(&mut self) -> Result<()> {
        mount::umount_if_mounted(&self.mnt)?;
        self.mount()
    }

    fn teardown(&mut self) -> Result<()> {
        watch::forget_all(&self.name);
        // The claim on rpcbind holds until Ganesha is gone from it.
        self.held
            .undo_while(|r| !matches!(r, Resource::Daemon { .. }))?;
        let claimed = self.rpcbind_claim.take().is_some();
        self.held.undo_all()?;
        if claimed {
            daemon::stop_if_last(rpcbind::PROGRAM, &rpcbind::users)?;
        }
        Ok(())
    }

    /// The gluster target's working directory, inside its volume's mount:
    /// the volume to re-export is the one mounted there.
    fn stand_on(&mut self, dir: &Path) -> Result<()> {
        let Some(of) = self.export_of.clone() else {
            bail!("target `{}` stands on no other target", self.name);
        };
        let (host, volume) = volume_of(dir).with_context(|| format!("on target `{of}`"))?;
        let base = std::env::temp_dir().join(resource_name('-', &self.name));
        let export = Export {
            dir: base.clone(),
            host,
            volume,
            protocol: if self.vers == "3" { 3 } else { 4 },
        };
        self.server = "127.0.0.1".into();
        self.export = export.pseudo();
        self.mnt = base.join("mnt");
        self.ganesha = Some(export);
        Ok(())
    }

    fn release(&mut self) -> Result<()> {
        self.unserve()
    }

    fn hold(&mut self) -> Result<()> {
        self.unserve()
            .context("stopping what was left of the NFS export")?;
        self.serve().context("serving the NFS export again")
    }

    fn facts(&self) -> Value {
        let mut f = json!({
            "server": self.server,
            "export": self.export,
            "vers": self.vers,
            "mount_options_requested": self.mount_options,
        });
        if let Some(e) = &self.ganesha {
            f["served_by"] = json!(format!(
                "NFS-Ganesha (FSAL_GLUSTER) re-exporting Gluster volume {} of {}",
                e.volume, e.host
            ));
            f["export_of"] = json!(self.export_of);
            f["ganesha_version"] = json!(ganesha::version());
            f["ganesha_pid"] = json!(ganesha::read_pid(&e.pidfile()));
            f["ganesha_config"] = json!(e.config_path().display().to_string());
        }
        f
    }

    /// Ganesha storlab started, by its pid file: gone or restarted during
    /// a run is a degraded target.
    fn health(&self) -> crate::targets::health::Health {
        let mut h = crate::targets::health::Health::default();
        let Some(e) = &self.ganesha else {
            return h;
        };
        match ganesha::read_pid(&e.pidfile()) {
            Some(pid) if ganesha::is_ours(pid, &e.pidfile()) => {
                h.daemons.push((ganesha::PROGRAM.to_string(), pid))
            }
            Some(pid) => h
                .problems
                .push(format!("{} (pid {pid}) is not running", ganesha::PROGRAM)),
            None => h.problems.push(format!(
                "{} has no pid in {}",
                ganesha::PROGRAM,
                e.pidfile().display()
            )),
        }
        h
    }

    /// An export on this host: the device under the exported directory;
    /// for a re-export, the Ganesha serving it.
    fn backing(&self) -> Backing {
        if let Some(e) = &self.ganesha {
            return Backing {
                serving: vec![Served::pid_file(
                    ganesha::PROGRAM,
                    e.pidfile(),
                    format!(
                        "{}: the pid in {}, started by storlab",
                        ganesha::PROGRAM,
                        e.pidfile().display()
                    ),
                )],
                ..Backing::default()
            };
        }
        let local = matches!(self.server.as_str(), "localhost" | "::1" | "[::1]")
            || self.server.starts_with("127.");
        Backing {
            paths: if local {
                vec![PathBuf::from(&self.export)]
            } else {
                Vec::new()
            },
            ..Backing::default()
        }
    }
}

impl Drop for Nfs {
    fn drop(&mut self) {
        let _ = self.teardown();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::params::{Params, Value as P};

    fn params(server: &str, export: &str, opts: &[&str]) -> NfsParams {
        let mut p = Params::defaults(NfsParams::PARAMS);
        p.set("server", P::Str(server.into()));
        p.set("export", P::Str(export.into()));
        p.set(
            "mount_options",
            P::List(opts.iter().map(|s| s.to_string()).collect()),
        );
        NfsParams::from_params(&p).unwrap()
    }

    #[test]
    fn mount_arguments() {
        let j = Journal::at(
            std::env::temp_dir().join("never-written.journal"),
            crate::targets::RESOURCES,
        );
        let n = Nfs::new(
            "n",
            &params("fileserver", "/srv/nfs", &["hard", "rsize=1048576"]),
            &j,
        );
        let a = n.mount_args();
        assert_eq!(&a[..4], &["-t", "nfs", "-o", "vers=4.2,hard,rsize=1048576"]);
        assert_eq!(a[4], "fileserver:/srv/nfs");
        assert!(a[5].contains("storlab-"), "{a:?}");
        assert_eq!(source("fd00::1", "/x"), "[fd00::1]:/x");
        assert_eq!(options("3", &[]), vec!["vers=3"]);
        assert!(version_matches("4", "rw,vers=4.2,rsize=1048576"));
        assert!(!version_matches("3", "rw,vers=4.2"));
    }

    #[test]
    fn bad_specs_are_refused() {
        assert!(params("h", "/e", &[]).validate().is_ok());
        assert_eq!(params("h", "e", &[]).validate().unwrap_err().0, "export");
        assert_eq!(
            params("h", "/e", &["vers=3"]).validate().unwrap_err().0,
            "mount_options"
        );
        let mut p = Params::defaults(NfsParams::PARAMS);
        p.set("export_of", P::Str("gl".into()));
        let of = NfsParams::from_params(&p).unwrap();
        assert!(of.validate().is_ok(), "no server or export with export_of");
        p.set("export", P::Str("/gl".into()));
        let both = NfsParams::from_params(&p).unwrap();
        assert_eq!(both.validate().unwrap_err().0, "export");
    }

    #[test]
    fn a_re_export_mounts_nfsv3_without_locks_and_stays_on_this_host() {
        let j = Journal::at(
            std::env::temp_dir().join("never-written.journal"),
            crate::targets::RESOURCES,
        );
        let mut p = Params::defaults(NfsParams::PARAMS);
        p.set("export_of", P::Str("gl".into()));
        p.set("vers", P::Str("3".into()));
        let mut n = Nfs::new("gl-nfs", &NfsParams::from_params(&p).unwrap(), &j);
        n.server = "127.0.0.1".into();
        n.export = "/storlab-7-gl".into();
        let a = n.mount_args();
        assert_eq!(&a[..4], &["-t", "nfs", "-o", "vers=3,nolock"]);
        assert_eq!(a[4], "127.0.0.1:/storlab-7-gl");
        assert_eq!(n.reach(), Reach::ThisHost);
        let e = n.stand_on(Path::new("/")).unwrap_err();
        assert!(
            format!("{e:#}").contains("not on a Gluster volume's mount"),
            "{e:#}"
        );
    }

    #[test]
    fn a_kernel_without_nfs_is_named() {
        let none = Path::new("/nonexistent-modules");
        let why = kernel_lacks_nfs("nodev\ttmpfs\n\text4\n", none).unwrap();
        assert!(why.contains("no NFS client"), "{why}");
        assert!(kernel_lacks_nfs("nodev\tnfs\n", none).is_none());
        assert!(kernel_lacks_nfs("nodev\tnfs4\n", none).is_none());
    }
}
