//! The client mounts of one host other than rank 0's, made by its first
//! rank when rank 0 says so: each target that clients mount (a Gluster
//! volume, an NFS export), at the path rank 0 mounted it, journaled in
//! this host's journal. Before each run the mount is checked to be still
//! the one made (as rank 0 checks its targets), and remounted when the
//! plan remounts between runs; at the end it is undone.

use anyhow::{bail, Context, Result};

use crate::provision::client::ClientMount;
use crate::provision::identity::Identity;
use crate::provision::journal::{Held, Journal};

/// What this host mounted, per target.
pub struct HostMounts {
    held: Held,
    mounts: Vec<Option<(ClientMount, Identity)>>,
}

impl HostMounts {
    pub fn new(journal: &Journal) -> HostMounts {
        HostMounts {
            held: Held::new(journal),
            mounts: Vec::new(),
        }
    }

    /// Mounts every target that has a client mount.
    pub fn mount(&mut self, mounts: &[Option<ClientMount>]) -> Result<()> {
        self.mounts = vec![None; mounts.len()];
        for (i, m) in mounts.iter().enumerate() {
            let Some(m) = m else { continue };
            m.mount_here(&mut self.held)
                .with_context(|| format!("mounting {} on {}", m.source, m.path.display()))?;
            self.mounts[i] = Some((m.clone(), Identity::of(&m.path)?));
        }
        Ok(())
    }

    /// Before a run on `target`: fails unless its mount is still the one
    /// made; remounts it first when `remount`.
    pub fn before_run(&mut self, target: usize, remount: bool) -> Result<()> {
        let Some(Some((m, id))) = self.mounts.get_mut(target) else {
            return Ok(());
        };
        if let Err(e) = id.check() {
            bail!("this host's client mount was lost: {e:#}");
        }
        if remount {
            m.remount().context("remounting this host's client mount")?;
            *id = Identity::of(&m.path)?;
        }
        Ok(())
    }

    /// Unmounts and removes what [`HostMounts::mount`] made, newest first.
    pub fn unmount(&mut self) -> Result<()> {
        self.mounts.clear();
        self.held.undo_all()
    }
}
