//! Target `nfs`: an export mounted with the kernel NFS client on a mount
//! point storlab creates. Before anything is touched, the kernel is checked
//! for an NFS client (/proc/filesystems, or a loadable module): without
//! one the target is refused with a clear message.

use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use serde_json::{json, Value};

use super::{Reach, Target, TargetConfig};
use crate::measure::telemetry::Backing;
use crate::params::{declare, Fault};
use crate::provision::client::ClientMount;
use crate::provision::journal::{Held, Journal, Resource};
use crate::provision::{cmd, mount, options, resource_name};

pub const VERSIONS: &[&str] = &["3", "4", "4.0", "4.1", "4.2"];

declare! {
    /// The parameters of an `nfs` target.
    pub struct NfsParams {
        server: string => "NFS server: host name, IPv4 or IPv6 address",
        export: string => "exported path on the server, e.g. /srv/nfs",
        vers: one_of(VERSIONS) = "4.2" => "protocol version",
        mount_options: list => "client mount options, e.g. [\"rsize=1048576\", \"wsize=1048576\", \"hard\", \"noatime\"]",
    }
}

impl TargetConfig for NfsParams {
    fn validate(&self) -> Result<(), Fault> {
        match (self.server.as_deref(), self.export.as_deref()) {
            (None, _) => Err(("server", "an nfs target needs `server`".into())),
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
            _ => match self
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
            },
        }
    }

    fn build(&self, name: &str, journal: &Journal) -> Box<dyn Target> {
        Box::new(Nfs::new(name, self, journal))
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
            held: Held::new(journal),
        }
    }

    /// The full mount(8) argument vector.
    pub fn mount_args(&self) -> Vec<String> {
        let opts = options(&self.vers, &self.mount_options);
        mount::mount_args("nfs", &source(&self.server, &self.export), &self.mnt, &opts)
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
}

impl Target for Nfs {
    fn preflight(&self) -> Result<()> {
        options::refuse_paths("mount_options", &self.mount_options)?;
        if !crate::host::is_root() {
            bail!("target `{}` needs root to mount NFS", self.name);
        }
        let fs = std::fs::read_to_string("/proc/filesystems").unwrap_or_default();
        let release = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default();
        let modules = Path::new("/lib/modules").join(release.trim());
        if let Some(why) = kernel_lacks_nfs(&fs, &modules) {
            bail!("target `{}`: {why}", self.name);
        }
        Ok(())
    }

    fn provision(&mut self) -> Result<()> {
        self.held.make_dir(&self.mnt)?;
        self.held.record(Resource::Mount {
            path: self.mnt.clone(),
        })?;
        self.mount()
    }

    fn root(&self) -> &Path {
        &self.mnt
    }

    fn reach(&self) -> Reach {
        Reach::Mount(ClientMount {
            fs_type: "nfs".into(),
            source: source(&self.server, &self.export),
            options: options(&self.vers, &self.mount_options),
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
        self.held.undo_all()
    }

    fn facts(&self) -> Value {
        json!({
            "server": self.server,
            "export": self.export,
            "vers": self.vers,
            "mount_options_requested": self.mount_options,
        })
    }

    /// An export on this host: the device under the exported directory.
    fn backing(&self) -> Backing {
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
        let j = Journal::at(std::env::temp_dir().join("never-written.journal"));
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
