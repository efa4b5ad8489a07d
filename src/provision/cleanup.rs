//! Undoing what killed campaigns left provisioned, from their journals in
//! the state directory, newest resource first: the rules `storlab cleanup`
//! follows ([`crate::commands`] only prints what is said here). A journal
//! whose campaign is still running (the same process: pid and start time)
//! is left alone; a journal is removed once everything in it is undone.
//! Only resources inside storlab's naming scheme are undone. A daemon that
//! another campaign still uses is kept, with its journal, for a later
//! cleanup. A resource that cannot be undone (a loop device busy in another
//! mount namespace) does not stop the others: every resource that does not
//! stand on it ([`stands_on`]) is undone, what is left is said with why,
//! the journal is kept for the next cleanup, and the run fails. What
//! cleanup undid is marked released in the journal as it goes, so a kept
//! journal names only what is still there. A journal
//! that vanished since it was listed (its campaign just ended) is skipped.
//! Before a journal is undone, mounts whose FUSE server died are detached
//! and each kind mends what only it can ([`Kinds::before_cleanup`]).

use std::path::Path;

use super::daemon::alive_as;
use super::journal::{journals_in, read_pending, Pending, Undone};
use super::resource::{Kinds, Resource, Said};
use super::{loopdev, mount};
use crate::foreign::visible;

/// Undoes every journal in `dir` whose campaign is gone, saying what it
/// does through `say`. False when something could not be undone.
pub fn undo_journals(dir: &Path, kinds: Kinds, say: &mut dyn FnMut(Said)) -> bool {
    let journals = journals_in(dir);
    if journals.is_empty() {
        say(Said::Did(format!(
            "nothing to clean up: no journal in {}",
            dir.display()
        )));
        return true;
    }
    let mut failed = false;
    for path in journals {
        let pending = match read_pending(&path) {
            Ok(p) => p,
            // Its campaign ended and removed it since it was listed.
            Err(_) if !path.exists() => continue,
            Err(e) => {
                say(Said::Failed(format!("{e:#}")));
                failed = true;
                continue;
            }
        };
        if still_running(&pending) {
            say(Said::Did(format!(
                "{}: campaign pid {} is still running; stop it first (Ctrl-C tears it down)",
                path.display(),
                pending.pid.unwrap_or_default()
            )));
            continue;
        }
        failed |= !undo_journal(&pending, kinds, say);
    }
    !failed
}

/// Whether the journal's campaign still runs: its very process (pid and
/// start time), or for an older journal a storlab under its pid.
fn still_running(p: &Pending) -> bool {
    match (p.owner, p.pid) {
        (_, Some(pid)) if pid == std::process::id() => false,
        (Some(owner), _) => owner.is_alive(),
        (None, Some(pid)) => alive_as(pid, "storlab"),
        (None, None) => false,
    }
}

/// Undoes a journal's resources, newest first, going on past a failure:
/// what stands on a resource that could not be undone is left with it
/// ([`stands_on`]). Removes the journal when all are undone; a failure, or
/// a resource kept on purpose, keeps it. False when something failed.
fn undo_journal(pending: &Pending, kinds: Kinds, say: &mut dyn FnMut(Said)) -> bool {
    say(Said::Did(format!(
        "{}: {} resource(s) left by campaign pid {}",
        pending.path.display(),
        pending.resources.len(),
        pending
            .pid
            .map(|p| p.to_string())
            .unwrap_or_else(|| "?".into())
    )));
    detach_disconnected(pending, say);
    kinds.before_cleanup(&pending.resources, say);
    let mut kept = false;
    // What could not be undone, and why.
    let mut left: Vec<(&Resource, String)> = Vec::new();
    for (id, res) in pending.resources.iter().rev() {
        if let Some((above, _)) = left.iter().find(|(above, _)| stands_on(above, res)) {
            let why = format!("{} stands on it", above.describe());
            left.push((res, why));
            continue;
        }
        match res.undo(kinds) {
            Ok(Undone::Gone) => {
                say(Said::Did(format!("  undone: {}", res.describe())));
                // Should the journal be kept (a daemon still in use, a
                // failure), it no longer names what is gone.
                if let Err(e) = pending.release(*id) {
                    say(Said::Failed(format!("  {e:#}")));
                }
            }
            Ok(Undone::Kept(why)) => {
                say(Said::Did(format!("  kept: {}: {why}", res.describe())));
                kept = true;
            }
            Err(e) => {
                say(Said::Failed(format!(
                    "  FAILED: {}: {}",
                    res.describe(),
                    visible(&format!("{e:#}"))
                )));
                left.push((res, "it could not be undone (above)".into()));
            }
        }
    }
    if !left.is_empty() {
        say(Said::Failed(
            "  left, with the journal, for the next `storlab cleanup`:".into(),
        ));
        for (res, why) in &left {
            say(Said::Failed(format!("    {}: {why}", res.describe())));
        }
        return false;
    }
    if kept {
        say(Said::Did(
            "  the journal is kept for what is still in use".into(),
        ));
        return true;
    }
    match std::fs::remove_file(&pending.path) {
        Ok(()) => true,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => true,
        Err(e) => {
            say(Said::Failed(format!(
                "  removing {}: {e}",
                pending.path.display()
            )));
            false
        }
    }
}

/// Detaches, oldest first (outermost), the journal's mounts whose FUSE
/// server is gone (a killed Gluster client, a qemu-storage-daemon export
/// after a restart): until they are, nothing under them can be removed or
/// unmounted ("Transport endpoint is not connected"). The journal's loop
/// devices on files below such a mount are let go first, while their
/// backing file still has its name (`losetup -d`: at once, or when what
/// holds them lets go); a lazy unmount then takes the mounts below with
/// it, and the main pass finds them gone.
fn detach_disconnected(pending: &Pending, say: &mut dyn FnMut(Said)) {
    for (_, res) in &pending.resources {
        let path = match res {
            Resource::Mount { path } => path,
            Resource::QemuDaemon { export, .. } => export,
            _ => continue,
        };
        if !mount::disconnected(path) {
            continue;
        }
        for (_, below) in &pending.resources {
            if let Resource::Loop { image, .. } = below {
                if image.starts_with(path) {
                    loopdev::let_go(image);
                }
            }
        }
        match mount::detach_if_disconnected(path) {
            Ok(true) => say(Said::Did(format!(
                "  detached: {} (disconnected: its FUSE server is gone)",
                res.describe()
            ))),
            Ok(false) => {}
            Err(e) => say(Said::Failed(format!(
                "  FAILED: {}: {}",
                res.describe(),
                visible(&format!("{e:#}"))
            ))),
        }
    }
}

/// Whether undoing `below` could pull the ground from under `above`, a
/// resource made after it that could not be undone: a file, directory or
/// mount holding `above`'s path (an image, a mount point, the filesystem
/// it lies in); for a pool, the images and directories it may be made of
/// and zfs-fuse; for a volume, the bricks, peers and glusterd; for a
/// mount, the pool or volume it may mount; for a Ganesha, its rpcbind
/// registrations and the volume it
/// exports, glusterd and rpcbind. On another host, only what is
/// on that host.
pub fn stands_on(above: &Resource, below: &Resource) -> bool {
    if let (
        Resource::Remote {
            host: a,
            resource: ra,
        },
        Resource::Remote {
            host: b,
            resource: rb,
        },
    ) = (above, below)
    {
        return a == b && stands_on(ra, rb);
    }
    // One on another host, one here: nothing in common.
    if matches!(above, Resource::Remote { .. }) != matches!(below, Resource::Remote { .. }) {
        return false;
    }
    if let (Some(a), Some(b)) = (place(above), place(below)) {
        if a.starts_with(b) {
            return true;
        }
    }
    match (above.clone(), below.clone()) {
        (Resource::Pool { .. }, Resource::File { .. } | Resource::Dir { .. }) => true,
        (Resource::Pool { .. }, Resource::Daemon { program, .. }) => program == "zfs-fuse",
        (Resource::Volume { .. }, Resource::Dir { .. } | Resource::Peer { .. }) => true,
        (Resource::Volume { .. }, Resource::Daemon { program, .. }) => program == "glusterd",
        (Resource::Mount { .. }, Resource::Pool { .. } | Resource::Volume { .. }) => true,
        // A Ganesha re-exporting a volume: the volume and the daemons it
        // reaches it through and registers with.
        (Resource::Ganesha { .. }, Resource::Volume { .. }) => true,
        (Resource::Ganesha { .. }, Resource::RpcRegistrations { .. }) => true,
        (Resource::RpcRegistrations { .. }, Resource::Daemon { program, .. }) => {
            program == "rpcbind"
        }
        (Resource::Ganesha { .. }, Resource::Daemon { program, .. }) => {
            program == "glusterd" || program == "rpcbind"
        }
        _ => false,
    }
}

/// The path a resource occupies on its host, if it has one.
fn place(r: &Resource) -> Option<&Path> {
    match r {
        Resource::Dir { path }
        | Resource::File { path }
        | Resource::Mount { path }
        | Resource::Workdir { path, .. } => Some(path),
        Resource::Loop { image, .. } => Some(image),
        Resource::RootBuild { dir } => Some(dir),
        Resource::Ganesha { pidfile } => Some(pidfile),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    /// A journal cleanup keeps (here: a volume no kind can undo) holds
    /// only what is still there: the directory it removed is released in
    /// the file, so neither a later cleanup nor a reader sees it as left.
    #[test]
    fn a_kept_journal_no_longer_names_what_cleanup_undid() {
        let state = tempfile::tempdir().unwrap();
        let j = super::super::journal::Journal::at(
            state.path().join("campaign-1.journal"),
            Kinds::NONE,
        );
        let volume = Resource::Volume {
            name: "storlab-1-v".into(),
        };
        j.acquire(&volume).unwrap();
        let dir = state.path().join("storlab-1-t");
        std::fs::create_dir(&dir).unwrap();
        j.acquire(&Resource::Dir { path: dir.clone() }).unwrap();
        let mut said = Vec::new();
        let ok = undo_journals(state.path(), Kinds::NONE, &mut |s| said.push(s));
        assert!(!ok, "the volume cannot be undone: {said:?}");
        assert!(!dir.exists());
        let left = read_pending(&j.path()).unwrap().resources;
        assert_eq!(
            left.into_iter().map(|(_, r)| r).collect::<Vec<_>>(),
            vec![volume]
        );
    }

    #[test]
    fn what_stands_on_a_failed_resource_is_left_and_nothing_else() {
        let p = |s: &str| PathBuf::from(s);
        let loop_b = Resource::Loop {
            image: p("/s/storlab-1-t/b.img"),
            device: None,
        };
        let image_b = Resource::File {
            path: p("/s/storlab-1-t/b.img"),
        };
        let image_c = Resource::File {
            path: p("/s/storlab-1-t/c.img"),
        };
        let dir = Resource::Dir {
            path: p("/s/storlab-1-t"),
        };
        let tmpfs = Resource::Mount { path: p("/s") };
        assert!(stands_on(&loop_b, &image_b));
        assert!(stands_on(&loop_b, &dir));
        assert!(stands_on(&loop_b, &tmpfs));
        assert!(!stands_on(&loop_b, &image_c));
        let pool = Resource::Pool {
            name: "storlab_1_z".into(),
        };
        let volume = Resource::Volume {
            name: "storlab-1-g".into(),
        };
        assert!(!stands_on(&loop_b, &pool) && !stands_on(&loop_b, &volume));
        let glusterd = Resource::Daemon {
            program: "glusterd".into(),
            pidfile: p("/r/glusterd-1.pid"),
        };
        assert!(stands_on(&volume, &glusterd) && !stands_on(&pool, &glusterd));
        let ganesha = Resource::Ganesha {
            pidfile: p("/tmp/storlab-1-n/ganesha.pid"),
        };
        let rpcbind = Resource::Daemon {
            program: "rpcbind".into(),
            pidfile: p("/r/rpcbind-1.pid"),
        };
        let config = Resource::Dir {
            path: p("/tmp/storlab-1-n"),
        };
        for below in [&volume, &glusterd, &rpcbind, &config] {
            assert!(stands_on(&ganesha, below), "{below:?}");
        }
        assert!(!stands_on(&ganesha, &pool) && !stands_on(&volume, &rpcbind));
        let remote = |r: Resource| Resource::Remote {
            host: "h".into(),
            resource: Box::new(r),
        };
        assert!(stands_on(&remote(volume.clone()), &remote(dir.clone())));
        assert!(!stands_on(&remote(volume), &dir));
    }
}
