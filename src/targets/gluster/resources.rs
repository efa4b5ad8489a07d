//! What the `gluster` kind undoes for the journal ([`KindResources`]): its
//! volumes (with what glusterd left for their bricks here) and the peers
//! it added, here or on a server through the remote shell, and what still
//! uses the glusterd it starts.

use anyhow::Result;

use super::cli::{delete_volume, detach_peer, volume_names};
use super::runtime::Runtime;
use crate::provision::resource::KindResources;
use crate::provision::resource::Resource;
use crate::provision::site::Site;
use crate::provision::undo::Undone;

/// The daemon storlab starts when this host's is not running.
pub const GLUSTERD: &str = "glusterd";

pub struct Resources;

impl KindResources for Resources {
    fn undo(&self, site: &Site, resource: &Resource) -> Option<Result<Undone>> {
        match resource {
            Resource::Volume { name } => Some(delete(site, name).map(|()| Undone::Gone)),
            Resource::Peer { name } => Some(detach_peer(site, name)),
            _ => None,
        }
    }

    fn daemon_users(&self, program: &str) -> Option<Result<Vec<String>>> {
        (program == GLUSTERD).then(volume_names)
    }
}

/// Deletes the volume, then what glusterd left on this host for its
/// bricks ([`Runtime`], read while they still run).
fn delete(site: &Site, name: &str) -> Result<()> {
    let runtime = match site {
        Site::Local => Runtime::of(name),
        Site::Remote(_) => Runtime::default(),
    };
    delete_volume(site, name)?;
    runtime.remove()
}
