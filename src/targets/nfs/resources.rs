//! What the `nfs` kind undoes for the journal ([`KindResources`]): the
//! NFS-Ganesha it starts to re-export a volume, and what still uses the
//! rpcbind it starts.

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
            _ => None,
        }
    }

    fn daemon_users(&self, program: &str) -> Option<Result<Vec<String>>> {
        (program == rpcbind::PROGRAM).then(rpcbind::users)
    }
}
