//! What the target kinds stand on and `storlab cleanup` undoes: the
//! provisioning journal and its resources, external commands, mounts and
//! mountinfo, image files and loop devices, whole block devices (checks,
//! claims, facts), shared daemons, the zfs and
//! gluster command lines, a target's working directory and path facts.
//! Nothing here knows a target kind; the kinds in [`crate::targets`] are
//! built on it.

pub mod blockdev;
pub mod cmd;
pub mod daemon;
pub mod facts;
pub mod gluster_cli;
pub mod journal;
pub mod loopdev;
pub mod mount;
pub mod mountinfo;
pub mod resource;
pub mod workdir;
pub mod zfs_cli;

/// A name unique to this campaign process and target, for pools, volumes
/// and directories: `storlab<sep><pid><sep><target>`.
pub fn resource_name(sep: char, target: &str) -> String {
    let safe: String = target
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { sep })
        .collect();
    format!("storlab{sep}{}{sep}{safe}", std::process::id())
}
