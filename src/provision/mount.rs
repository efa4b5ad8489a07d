//! Shared mount helpers: mount with an argument vector, unmount what is
//! mounted, and check the options the kernel kept against those asked for
//! (an option the kernel dropped is an error, not a silent difference).

use std::path::Path;

use anyhow::{bail, Context, Result};

use super::cmd;
use super::mountinfo::{parse, MountEntry};
pub use crate::fact::readback::shows;

/// The mounts in this namespace.
pub fn all() -> Vec<MountEntry> {
    std::fs::read_to_string("/proc/self/mountinfo")
        .map(|t| parse(&t))
        .unwrap_or_default()
}

/// The mount whose mount point is exactly `path`, the topmost if stacked.
pub fn mounted_at(path: &Path) -> Option<MountEntry> {
    let want = path.canonicalize().unwrap_or_else(|_| path.to_path_buf());
    all()
        .into_iter()
        .rev()
        .find(|m| Path::new(&m.mount_point) == want)
}

/// Mount points at or below `path`.
pub fn mounts_under(path: &Path) -> Vec<String> {
    let want = path.canonicalize().unwrap_or_else(|_| path.to_path_buf());
    all()
        .into_iter()
        .filter(|m| Path::new(&m.mount_point).starts_with(&want))
        .map(|m| m.mount_point)
        .collect()
}

/// Where the block device `dev` (or a partition of it) is mounted, if it is.
pub fn device_mounted(dev: &Path) -> Option<String> {
    use std::os::unix::fs::MetadataExt;
    let rdev = std::fs::metadata(dev).ok()?.rdev();
    let (major, minor) = (libc::major(rdev), libc::minor(rdev));
    let canonical = dev.canonicalize().ok()?.to_string_lossy().into_owned();
    all()
        .into_iter()
        .find(|m| (m.major == major && m.minor == minor) || is_partition_of(&m.source, &canonical))
        .map(|m| m.mount_point)
}

/// `/dev/sda1` and `/dev/nvme0n1p2` are partitions of `/dev/sda` and
/// `/dev/nvme0n1`; `/dev/loop10` is not one of `/dev/loop1`.
fn is_partition_of(source: &str, disk: &str) -> bool {
    let Some(rest) = source.strip_prefix(disk) else {
        return false;
    };
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    let ends_in_digit = disk.bytes().last().is_some_and(|b| b.is_ascii_digit());
    if ends_in_digit {
        rest.strip_prefix('p').is_some_and(digits)
    } else {
        rest.is_empty() || digits(rest)
    }
}

/// The argument vector of mount(8).
pub fn mount_args(fs_type: &str, source: &str, dir: &Path, options: &[String]) -> Vec<String> {
    let mut args = vec!["-t".to_string(), fs_type.to_string()];
    if !options.is_empty() {
        args.push("-o".into());
        args.push(options.join(","));
    }
    args.push(source.to_string());
    args.push(dir.display().to_string());
    args
}

/// Mounts `source` on `dir`; options that name a path or device are
/// refused (see [`super::options`]).
pub fn mount(fs_type: &str, source: &str, dir: &Path, options: &[String]) -> Result<()> {
    super::options::refuse_paths("mount_options", options)?;
    cmd::run("mount", &mount_args(fs_type, source, dir, options))
        .with_context(|| format!("mounting {source} ({fs_type}) on {}", dir.display()))?;
    Ok(())
}

/// Unmounts `path` if something is mounted there, retrying while busy.
pub fn umount_if_mounted(path: &Path) -> Result<()> {
    // A FUSE mount whose server died refuses a plain umount (ENOTCONN)
    // for ever; nothing can use it, so it is detached lazily.
    if detach_if_disconnected(path)? {
        return Ok(());
    }
    cmd::retry(10, 500, || {
        if mounted_at(path).is_none() {
            return Ok(());
        }
        cmd::run("umount", &[path]).map(|_| ())
    })
    .with_context(|| {
        format!(
            "unmounting {}; close what uses it (fuser -vm {}) and run `umount {}`",
            path.display(),
            path.display(),
            path.display()
        )
    })
}

/// Whether `path` is the mount point of a FUSE filesystem whose server is
/// gone (its client was killed, the host restarted under it): every access
/// fails with "Transport endpoint is not connected" and a plain `umount`
/// fails the same way. `stat` alone can still succeed from the kernel's
/// attribute cache (a zfs-fuse mount right after its daemon was killed);
/// `statfs` always asks the server.
pub fn disconnected(path: &Path) -> bool {
    let enotconn = |e: std::io::Error| e.raw_os_error() == Some(libc::ENOTCONN);
    let unreachable = match std::fs::symlink_metadata(path) {
        Err(e) => enotconn(e),
        Ok(_) => statvfs(path).is_err_and(enotconn),
    };
    unreachable && mounted_at(path).is_some()
}

/// statvfs(3) of `path`.
pub fn statvfs(path: &Path) -> std::io::Result<libc::statvfs> {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(path.as_os_str().as_bytes())
        .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidInput, e))?;
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    // SAFETY: c is a valid NUL-terminated path and st a valid out-pointer.
    if unsafe { libc::statvfs(c.as_ptr(), &mut st) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(st)
}

/// Detaches a disconnected mount lazily (`umount -l`), with every mount
/// below it: nothing can be served from it any more, and until it is
/// detached nothing under it (images, loop devices, the mounts of those)
/// can be undone. True when it was detached; a mount that is connected is
/// left to [`umount_if_mounted`].
pub fn detach_if_disconnected(path: &Path) -> Result<bool> {
    if !disconnected(path) {
        return Ok(false);
    }
    cmd::run("umount", &[std::ffi::OsStr::new("-l"), path.as_os_str()]).with_context(|| {
        format!(
            "detaching the disconnected mount on {} (its FUSE server is gone); run `umount -l {}`",
            path.display(),
            path.display()
        )
    })?;
    Ok(true)
}

/// Requested options the kernel does not report for `entry`.
pub fn dropped_options(fs: &str, requested: &[String], entry: &MountEntry) -> Vec<String> {
    requested
        .iter()
        .filter(|o| shows(fs, o, entry) == Some(false))
        .cloned()
        .collect()
}

/// Fails when the mount at `dir` lacks a requested option.
pub fn check_options(fs: &str, dir: &Path, requested: &[String]) -> Result<MountEntry> {
    let Some(entry) = mounted_at(dir) else {
        bail!("{} is not mounted after mount(8) succeeded", dir.display());
    };
    let dropped = dropped_options(fs, requested, &entry);
    if !dropped.is_empty() {
        bail!(
            "the kernel dropped mount option(s) {} on {} ({fs}): mountinfo shows `{}` / `{}`; remove them from mount_options (see dmesg for why)",
            dropped.join(","),
            dir.display(),
            entry.mount_options,
            entry.super_options
        );
    }
    Ok(entry)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(opts: &str, sup: &str) -> MountEntry {
        MountEntry {
            mount_id: 40,
            major: 7,
            minor: 0,
            mount_point: "/m".into(),
            mount_options: opts.into(),
            fs_type: "ext4".into(),
            source: "/dev/loop0".into(),
            super_options: sup.into(),
        }
    }

    fn strings(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn ext4_writeback_nobarrier_is_kept_and_nobh_is_dropped() {
        // What kernel 6.18 reports for noatime,data=writeback,barrier=0.
        let e = entry("rw,noatime", "rw,nobarrier,data=writeback");
        let asked = strings(&["noatime", "data=writeback", "barrier=0", "data=ordered"]);
        assert!(dropped_options("ext4", &asked, &e).is_empty());
        let asked = strings(&["noatime", "nobh"]);
        assert_eq!(dropped_options("ext4", &asked, &e), vec!["nobh"]);
    }

    #[test]
    fn partitions_are_recognised() {
        assert!(is_partition_of("/dev/sda1", "/dev/sda"));
        assert!(is_partition_of("/dev/nvme0n1p2", "/dev/nvme0n1"));
        assert!(!is_partition_of("/dev/loop10", "/dev/loop1"));
        assert!(!is_partition_of("/dev/sdab", "/dev/sda"));
    }

    #[test]
    fn mount_arguments_are_a_vector() {
        let a = mount_args(
            "ext4",
            "/dev/loop0",
            Path::new("/m n"),
            &strings(&["a", "b"]),
        );
        assert_eq!(
            a,
            strings(&["-t", "ext4", "-o", "a,b", "/dev/loop0", "/m n"])
        );
        assert_eq!(mount_args("xfs", "d", Path::new("/m"), &[]).len(), 4);
    }
}
