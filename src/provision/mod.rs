//! What the target kinds share and `storlab cleanup` undoes: the
//! provisioning journal and its resources, the cleanup rules beside it
//! (what stands on what, undoing past a failure: [`cleanup`]), external
//! commands, mounts and mountinfo, image files and loop devices, whole
//! block devices (checks, claims, facts), daemons by pid and the daemons
//! campaigns share, where a command runs (this host or another, through
//! the remote shell) and directories and mounts there, a target's working
//! directory and path facts, storlab's naming scheme, the owner of what a
//! campaign made, a target's identity (is it still the filesystem
//! provisioned?), and how clients on other hosts mount what a target
//! provisioned, and roots: software from another release, built, cached
//! and run chrooted in a network namespace ([`root`], [`netns`],
//! [`unfinished`]).
//! Nothing here knows a target kind: each kind's own code (its command
//! lines and daemons) is in its folder under [`crate::targets`], and what
//! only a kind can undo the journal asks of it through
//! [`resource::KindResources`].

pub mod blockdev;
pub mod cleanup;
pub mod client;
pub mod cmd;
pub mod daemon;
pub mod facts;
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
pub mod resource;
pub mod root;
pub mod site;
pub mod site_fs;
pub mod tracefs;
pub mod undo;
pub mod unfinished;
pub mod workdir;

pub use naming::resource_name;
