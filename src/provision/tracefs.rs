//! tracefs at /sys/kernel/tracing for bpftrace's attach (bpftrace reads
//! the tracepoints' formats there while it attaches, and only then): the
//! host's, used as it is and left alone, or one storlab mounts (source
//! `storlab-tracefs`) for the attach and unmounts right after.
//! Concurrent storlab processes hold a shared host-wide lock ([`LOCK`])
//! while they attach, and the last one unmounts. Whoever mounts or uses
//! storlab's journals it first ([`super::resource::Resource::Tracefs`]),
//! so that a storlab killed while it attaches leaves it to `storlab
//! cleanup`, which unmounts it once no storlab is attaching ([`undo`]).
//! (A private mount namespace for bpftrace would copy every mount of the
//! host into it, and hold other campaigns' target mounts busy for as long
//! as it runs.)

use std::ffi::CString;
use std::path::Path;
use std::time::Duration;

use anyhow::{Context, Result};

use super::hostlock;
use super::undo::Undone;

/// Where bpftrace looks for tracefs.
pub const TRACEFS: &str = "/sys/kernel/tracing";
/// The source name of the tracefs storlab mounts.
pub const SOURCE: &str = "storlab-tracefs";
/// The host-wide lock held (shared) while attaching ([`hostlock`]).
pub const LOCK: &str = "tracefs";

/// Mounts storlab's tracefs unless it is there already (another storlab
/// mounted it, a moment ago too).
pub fn mount() -> Result<(), String> {
    if Path::new(TRACEFS).join("events").is_dir() {
        return Ok(());
    }
    let (src, dir, fs) = (cstr(SOURCE), cstr(TRACEFS), cstr("tracefs"));
    // SAFETY: valid NUL-terminated strings; no data argument.
    let rc = unsafe { libc::mount(src.as_ptr(), dir.as_ptr(), fs.as_ptr(), 0, std::ptr::null()) };
    let err = std::io::Error::last_os_error();
    // EBUSY: another storlab mounted it a moment ago.
    if rc != 0 && err.raw_os_error() != Some(libc::EBUSY) {
        return Err(format!(
            "mounting tracefs on {TRACEFS}: {err} (the kernel needs CONFIG_FTRACE for the block tracepoints)"
        ));
    }
    Ok(())
}

/// Unmounts storlab's tracefs if it is mounted (bpftrace may hold a file
/// open there for a moment: tried for 5 s); whether it is gone.
pub fn unmount() -> bool {
    let dir = cstr(TRACEFS);
    for _ in 0..50 {
        if !storlab_tracefs_mounted() {
            return true;
        }
        // SAFETY: a valid NUL-terminated path.
        if unsafe { libc::umount2(dir.as_ptr(), 0) } == 0 {
            return true;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    !storlab_tracefs_mounted()
}

/// Undoes a journaled tracefs: unmounts storlab's unless a storlab is
/// attaching (it unmounts it after); gone when the mount there is not
/// storlab's, or none.
pub fn undo() -> Result<Undone> {
    if !storlab_tracefs_mounted() {
        return Ok(Undone::Gone);
    }
    let lock = hostlock::try_exclusive(LOCK)
        .with_context(|| format!("locking {}", hostlock::path(LOCK).display()))?;
    if lock.is_none() {
        return Ok(Undone::Kept(format!(
            "leaving the tracefs on {TRACEFS} mounted: another storlab is attaching bpftrace and unmounts it after"
        )));
    }
    if unmount() {
        Ok(Undone::Gone)
    } else {
        anyhow::bail!(
            "tracefs on {TRACEFS} is still busy after 5 s (`fuser -vm {TRACEFS}`); unmount it with `umount {TRACEFS}`"
        )
    }
}

/// Whether the tracefs at [`TRACEFS`] is storlab's.
fn storlab_tracefs_mounted() -> bool {
    super::mount::mounted_at(Path::new(TRACEFS))
        .is_some_and(|m| m.fs_type == "tracefs" && m.source == SOURCE)
}

/// Whether a tracefs other than storlab's is mounted at /sys/kernel/tracing
/// (the host's: used as it is).
pub fn host_has_tracefs() -> bool {
    super::mount::all()
        .into_iter()
        .any(|m| m.mount_point == TRACEFS && m.fs_type == "tracefs" && m.source != SOURCE)
}

fn cstr(s: &str) -> CString {
    CString::new(s).expect("no NUL")
}
