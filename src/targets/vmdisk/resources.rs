//! What the `vm-disk` kind undoes for the journal ([`KindResources`]): the
//! qemu-storage-daemon serving its image, and the export a killed daemon
//! left mounted.

use anyhow::Result;

use super::qemu_daemon;
use crate::provision::resource::KindResources;
use crate::provision::resource::Resource;
use crate::provision::site::Site;
use crate::provision::undo::Undone;

pub struct Resources;

impl KindResources for Resources {
    fn undo(&self, site: &Site, resource: &Resource) -> Option<Result<Undone>> {
        match (site, resource) {
            (Site::Local, Resource::QemuDaemon { pidfile, export }) => {
                Some(qemu_daemon::stop(pidfile, Some(export)).map(|()| Undone::Gone))
            }
            _ => None,
        }
    }
}
