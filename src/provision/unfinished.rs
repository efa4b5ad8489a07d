//! Undoing an unfinished build of a root (a killed debootstrap): the
//! processes still building in its directory, the mounts they made there
//! (/proc, /sys), the directory. Idempotent; touches only processes and
//! mounts tied to the recorded directory, which lies in storlab's naming
//! scheme.

use std::path::Path;
use std::time::Duration;

use anyhow::{bail, Result};

use super::{cmd, daemon, mount, undo};

/// Stops what builds in `dir` (any process whose root, working directory
/// or command line is in it), unmounts what is mounted under it, deepest
/// first, and removes it.
pub fn undo_build(dir: &Path) -> Result<()> {
    let left = daemon::end_all(|| building_in(dir), Duration::from_secs(5));
    if !left.is_empty() {
        bail!(
            "processes {left:?} still build in {} after SIGKILL; kill them by hand and run `storlab cleanup` again",
            dir.display()
        );
    }
    unmount_all_under(dir)?;
    undo::remove_dir(dir)
}

/// Unmounts every mount at or below `dir`, deepest first (lazily when a
/// plain unmount fails: a build's /proc in use by a dying process).
pub fn unmount_all_under(dir: &Path) -> Result<()> {
    let mut points = mount::mounts_under(dir);
    points.sort_by_key(|p| std::cmp::Reverse(p.len()));
    for p in points {
        if cmd::run("umount", &[&p]).is_err() {
            cmd::run("umount", &["-l", &p])?;
        }
    }
    Ok(())
}

/// The processes tied to `dir`: chrooted or working in it, or naming it
/// on their command line (debootstrap, the wget it runs).
fn building_in(dir: &Path) -> Vec<u32> {
    let me = std::process::id();
    let text = dir.to_string_lossy().into_owned();
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|s| s.parse::<u32>().ok()) else {
            continue;
        };
        if pid == me || daemon::zombie(pid) {
            continue;
        }
        let under =
            |link: &str| std::fs::read_link(e.path().join(link)).is_ok_and(|p| p.starts_with(dir));
        let named = std::fs::read(e.path().join("cmdline"))
            .is_ok_and(|c| String::from_utf8_lossy(&c).contains(&text));
        if under("root") || under("cwd") || named {
            out.push(pid);
        }
    }
    out
}
