//! What the `zfs` kind undoes for the journal ([`KindResources`]): its
//! pools, and what still uses the zfs-fuse it starts; and, before a killed
//! campaign's journal is undone, the zfs-fuse that died with it started
//! again, since only a running zfs-fuse can destroy the pools it served.

use std::path::Path;

use anyhow::Result;

use super::cli::{destroy_pool, kernel_zfs, pool_names, zfs_reachable};
use crate::foreign::visible;
use crate::provision::daemon::{self, alive_as};
use crate::provision::mount;
use crate::provision::resource::Resource;
use crate::provision::resource::{KindResources, Said};
use crate::provision::site::Site;
use crate::provision::undo::Undone;

/// The daemon storlab starts when the host has no kernel ZFS.
pub const ZFS_FUSE: &str = "zfs-fuse";

pub struct Resources;

impl KindResources for Resources {
    fn undo(&self, site: &Site, resource: &Resource) -> Option<Result<Undone>> {
        match (site, resource) {
            (Site::Local, Resource::Pool { name }) => {
                Some(destroy_pool(name).map(|()| Undone::Gone))
            }
            _ => None,
        }
    }

    fn daemon_users(&self, program: &str) -> Option<Result<Vec<String>>> {
        (program == ZFS_FUSE).then(pool_names)
    }

    fn before_cleanup(&self, left: &[(u64, Resource)], say: &mut dyn FnMut(Said)) {
        revive_zfs_fuse(left, say);
    }
}

/// Starts again the zfs-fuse daemon a killed campaign started, when it
/// died too (killed with the campaign's process group, a host restart) and
/// the campaign's pools are left: zfs-fuse keeps every pool it served in
/// its cache (/var/lib/zfs/zpool.cache) and imports them when it starts,
/// so a pool outlives its daemon, and only a running daemon can destroy
/// it. Its datasets' FUSE mounts, disconnected since it died, are detached
/// first, so that nothing under them is out of reach. The main pass then
/// destroys the pools and stops the daemon, with the same pid file.
fn revive_zfs_fuse(left: &[(u64, Resource)], say: &mut dyn FnMut(Said)) {
    let pools: Vec<&str> = left
        .iter()
        .filter_map(|(_, r)| match r {
            Resource::Pool { name } => Some(name.as_str()),
            _ => None,
        })
        .collect();
    let pidfile = left.iter().find_map(|(_, r)| match r {
        Resource::Daemon { program, pidfile } if program == ZFS_FUSE => Some(pidfile),
        _ => None,
    });
    let Some(pidfile) = pidfile else { return };
    if pools.is_empty() || kernel_zfs() || zfs_reachable() {
        return;
    }
    // The daemon's own resource is checked as its undo would be.
    let daemon = Resource::Daemon {
        program: ZFS_FUSE.into(),
        pidfile: pidfile.clone(),
    };
    if daemon.check_ours().is_err() {
        return;
    }
    for m in mount::all() {
        let of_pool = pools.iter().any(|p| {
            m.source == *p || m.source.strip_prefix(p).is_some_and(|r| r.starts_with('/'))
        });
        if of_pool && m.fs_type.contains("zfs") {
            let path = Path::new(&m.mount_point);
            if let Ok(true) = mount::detach_if_disconnected(path) {
                say(Said::Did(format!(
                    "  detached: {} on {} (disconnected: zfs-fuse is gone)",
                    m.source,
                    path.display()
                )));
            }
        }
    }
    // A pid file left by the dead daemon would read as the new one's.
    if daemon::read_pid(pidfile).is_some_and(|pid| !alive_as(pid, ZFS_FUSE)) {
        let _ = std::fs::remove_file(pidfile);
    }
    let args = vec!["--pidfile".to_string(), pidfile.display().to_string()];
    match daemon::start(ZFS_FUSE, &args, pidfile, zfs_reachable, &pool_names) {
        Ok(pid) => say(Said::Did(format!(
            "  restarted: zfs-fuse (pid {pid}), which the campaign started and which died with it, to destroy {}",
            pools.join(", ")
        ))),
        Err(e) => say(Said::Failed(format!(
            "  FAILED: restarting zfs-fuse to destroy {}: {}",
            pools.join(", "),
            visible(&format!("{e:#}"))
        ))),
    }
}
