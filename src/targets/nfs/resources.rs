//! What the `nfs` kind undoes for the journal ([`KindResources`]): the
//! NFS-Ganesha it starts to re-export a volume, what that Ganesha
//! registered with rpcbind, and what still uses the rpcbind it starts.

use anyhow::Result;

use super::{ganesha, rpcbind};
use crate::provision::resource::KindResources;
use crate::provision::resource::Resource;
use crate::provision::site::Site;
use crate::provision::undo::Undone;

pub struct Resources;

impl KindResources for Resources {
    fn undo(&self, site: &Site, resource: &Resource) -> Option<Result<Undone>> {
        match (site, resource) {
            (Site::Local, Resource::Ganesha { pidfile }) => {
                Some(ganesha::stop(pidfile).map(|()| Undone::Gone))
            }
            (Site::Local, Resource::RpcRegistrations { pidfile }) => {
                Some(unregister(pidfile).map(|()| Undone::Gone))
            }
            _ => None,
        }
    }

    fn daemon_users(&self, program: &str) -> Option<Result<Vec<String>>> {
        (program == rpcbind::PROGRAM).then(rpcbind::users)
    }
}

/// Removes the NFS and MOUNT registrations the Ganesha started with
/// `pidfile` left, once it is gone: those no server listens behind.
fn unregister(pidfile: &std::path::Path) -> Result<()> {
    if let Some(pid) = ganesha::read_pid(pidfile).filter(|p| ganesha::is_ours(*p, pidfile)) {
        anyhow::bail!(
            "NFS-Ganesha (pid {pid}) still runs; its registrations go once it is stopped"
        );
    }
    rpcbind::remove_stale(&[rpcbind::NFS, rpcbind::MOUNT])
}
