//! A Gluster volume served from another root (`root = "debian:trixie"`):
//! glusterd, its brick processes, the command line and the FUSE client all
//! of that root, in a jail of this target's ([`Jail`]) — chrooted, in a
//! network namespace of its own, on an address of its own (glusterd
//! refuses loopback addresses for bricks, and is started once its address
//! exists). The bricks' directory is shared into the jail at the same
//! path, so that the bricks are on the disk `dir` names and the FUSE
//! mount the jail's client makes under it is the one the workloads see.
//!
//! The volume lives in the jail's glusterd state (its /var/lib/glusterd
//! in the overlay), so it is not journaled apart: stopping the daemon
//! (journaled with its namespace, whose processes its undo stops: bricks,
//! self-heal daemon, FUSE client) and removing the jail undoes it.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

use super::cli::SCRIPT;
use crate::process::StopFlag;
use crate::provision::client::ClientMount;
use crate::provision::journal::{Held, Journal};
use crate::provision::root::software::program_in;
use crate::provision::root::{Jail, Root, RootSpec, Software};

/// Where the jail's glusterd writes its pid, as the jail sees it.
const PIDFILE: &str = "/run/glusterd.pid";

/// A root's Gluster at work for one target.
pub struct Rooted {
    root: Root,
    jail: Jail,
    /// Its programs, as the root sees them.
    gluster: PathBuf,
    glusterd: PathBuf,
    mount: PathBuf,
}

impl Rooted {
    /// The root `spec` (from the cache: the campaign made it ready) and a
    /// jail of it for target `name`, journaled in `held`.
    pub fn open(spec: &RootSpec, name: &str, journal: &Journal, held: &mut Held) -> Result<Rooted> {
        let root = Root::obtain(spec, Software::Gluster, journal, &StopFlag::new())?;
        let program = |name: &str| program_in(&root.tree, name);
        let (gluster, glusterd, mount) =
            (program("gluster")?, program("glusterd")?, program("mount")?);
        let jail = Jail::open(&root, name, held)
            .with_context(|| format!("making a jail of {}", root.describe()))?;
        Ok(Rooted {
            root,
            jail,
            gluster,
            glusterd,
            mount,
        })
    }

    /// The address glusterd and the bricks are on.
    pub fn address(&self) -> String {
        self.jail.address().to_string()
    }

    pub fn version(&self) -> &str {
        &self.root.version
    }

    /// Shares the bricks' directory (made already) into the jail.
    pub fn share(&self, base: &Path, held: &mut Held) -> Result<()> {
        self.jail.share(base, held)
    }

    /// Starts the jail's glusterd, journaled first, and waits until it
    /// answers; its pid.
    pub fn start_glusterd(&self, held: &mut Held) -> Result<u32> {
        let args = vec!["-p".to_string(), PIDFILE.to_string()];
        self.jail
            .start_daemon(&self.glusterd, &args, Path::new(PIDFILE), held, || {
                self.jail
                    .succeeds(&self.gluster, &[SCRIPT, "volume", "list"])
            })
    }

    /// `gluster --mode=script args…` in the jail.
    pub fn gluster<S: AsRef<str>>(&self, args: &[S]) -> Result<String> {
        let mut all: Vec<&str> = vec![SCRIPT];
        all.extend(args.iter().map(|a| a.as_ref()).filter(|a| *a != SCRIPT));
        self.jail.run(&self.gluster, &all)
    }

    /// Mounts the volume with the root's FUSE client, from inside the
    /// jail: the mount is seen at the same path on the host.
    pub fn mount(&self, m: &ClientMount) -> Result<()> {
        let args = crate::provision::mount::mount_args(&m.fs_type, &m.source, &m.path, &m.options);
        crate::provision::options::refuse_paths("mount_options", &m.options)?;
        self.jail
            .run(&self.mount, &args)
            .with_context(|| format!("mounting {} on {}", m.source, m.path.display()))?;
        if crate::provision::mount::mounted_at(&m.path).is_none() {
            anyhow::bail!(
                "{} is not mounted on {} after the root's mount(8) succeeded",
                m.source,
                m.path.display()
            );
        }
        Ok(())
    }
}
