//! What the target kinds stand on and `storlab cleanup` undoes: the
//! provisioning journal and its resources, external commands, mounts and
//! mountinfo, image files and loop devices, whole block devices (checks,
//! claims, facts), shared daemons (rpcbind among them), the zfs and gluster command lines, QEMU's images and
//! the qemu-storage-daemon serving one, NFS-Ganesha re-exporting a Gluster
//! volume, where
//! a command runs (this host or another, through the remote shell) and
//! directories and mounts there, a target's working directory and path
//! facts, storlab's naming scheme, the owner of what a campaign made, a
//! target's identity (is it still the filesystem provisioned?), and how
//! clients on other hosts mount what a target provisioned, and roots:
//! software from another release, built, cached and run chrooted.
//! Nothing here knows a target kind; the kinds in [`crate::targets`] are
//! built on it.

pub mod blockdev;
pub mod client;
pub mod cmd;
pub mod daemon;
pub mod facts;
pub mod ganesha;
pub mod gluster_cli;
pub mod hostlock;
pub mod identity;
pub mod journal;
pub mod loopdev;
pub mod mount;
pub mod mountinfo;
pub mod naming;
pub mod netns;
pub mod options;
pub mod owner;
pub mod ownership;
pub mod qemu_daemon;
pub mod qemu_img;
pub mod resource;
pub mod root;
pub mod rpcbind;
pub mod site;
pub mod site_fs;
pub mod undo;
pub mod unfinished;
pub mod workdir;
pub mod zfs_cli;

pub use naming::resource_name;
