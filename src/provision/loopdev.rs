//! Image files and loop devices: a thin (sparse) or preallocated
//! (fallocate) image, attached with losetup, formatted with mkfs. Loop
//! devices are found again by their backing file, so a crash between
//! losetup and the journal cannot orphan one.

use std::fs::OpenOptions;
use std::os::unix::fs::MetadataExt;
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};

use super::{cmd, mountinfo};

/// What to do about a failed fallocate: a full filesystem is ENOSPC, not
/// a filesystem without fallocate.
fn fallocate_hint(e: &std::io::Error) -> &'static str {
    match e.raw_os_error() {
        Some(libc::ENOSPC) => "ENOSPC: the filesystem is full; make room, lower `size` or choose another `dir` (`storlab check` sums the images a campaign makes)",
        Some(libc::EOPNOTSUPP) => "the directory's filesystem does not support fallocate; use allocation = \"thin\"",
        _ => "allocation = \"thin\" does without fallocate",
    }
}

/// Creates `path` (which must not exist) with `size` bytes.
pub fn create_image(path: &Path, size: u64, preallocated: bool) -> Result<()> {
    let file = OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)
        .with_context(|| format!("creating image {} (it must not exist yet)", path.display()))?;
    if preallocated {
        // SAFETY: a valid fd; fallocate reports failure through its return value.
        let rc = unsafe { libc::fallocate(file.as_raw_fd(), 0, 0, size as libc::off_t) };
        if rc != 0 {
            let e = std::io::Error::last_os_error();
            bail!(
                "preallocating {size} bytes for {}: {e}; {}",
                path.display(),
                fallocate_hint(&e)
            );
        }
    } else {
        file.set_len(size)
            .with_context(|| format!("sizing image {}", path.display()))?;
    }
    file.sync_all()
        .with_context(|| format!("syncing image {}", path.display()))
}

/// Bytes actually allocated to `path` (st_blocks × 512).
pub fn allocated_bytes(path: &Path) -> Option<u64> {
    std::fs::metadata(path).ok().map(|m| m.blocks() * 512)
}

/// Attaches `image` to a free loop device and returns the device.
pub fn attach(image: &Path) -> Result<PathBuf> {
    let out = cmd::run(
        "losetup",
        &["--find".as_ref(), "--show".as_ref(), image.as_os_str()],
    )
    .with_context(|| format!("attaching {} to a loop device", image.display()))?;
    Ok(PathBuf::from(out.trim()))
}

/// Loop devices whose backing file is `image`, from sysfs.
pub fn devices_backed_by(image: &Path) -> Vec<PathBuf> {
    let want = image.canonicalize().unwrap_or_else(|_| image.to_path_buf());
    let mut out = Vec::new();
    for entry in std::fs::read_dir("/sys/block")
        .into_iter()
        .flatten()
        .flatten()
    {
        let name = entry.file_name().to_string_lossy().into_owned();
        if !name.starts_with("loop") {
            continue;
        }
        let Ok(backing) = std::fs::read_to_string(entry.path().join("loop/backing_file")) else {
            continue;
        };
        let backing = backing.trim().trim_end_matches(" (deleted)");
        if Path::new(backing) == want || Path::new(backing) == image {
            out.push(PathBuf::from("/dev").join(name));
        }
    }
    out
}

/// Asks the kernel once to detach every loop device backed by `image`,
/// without waiting: a free device goes at once, a busy one (a filesystem
/// still mounted on it) is marked to go at its last close.
pub fn let_go(image: &Path) {
    for dev in devices_backed_by(image) {
        let _ = cmd::run("losetup", &["-d".as_ref(), dev.as_os_str()]);
    }
}

/// Detaches every loop device backed by `image`, and waits until the
/// kernel has let go of the file: `losetup -d` only marks a device for
/// detaching (its rundown runs later, from a work queue), and until then
/// the file keeps its filesystem busy — a Gluster volume holding the image
/// could not be unmounted.
pub fn detach_all(image: &Path) -> Result<()> {
    for dev in devices_backed_by(image) {
        cmd::retry(10, 300, || {
            cmd::run("losetup", &["-d".as_ref(), dev.as_os_str()])
        })
        .with_context(|| {
            format!(
                "detaching {}; run `losetup -d {}`",
                dev.display(),
                dev.display()
            )
        })?;
    }
    let result = cmd::retry(100, 100, || match devices_backed_by(image).first() {
        None => Ok(()),
        Some(dev) => bail!("{} still holds {}", dev.display(), image.display()),
    });
    result.map_err(|e| match devices_backed_by(image).first() {
        Some(dev) => e.context(still_held(dev)),
        None => e,
    })
}

/// Undoes a journaled loop resource: the journaled `device` (see
/// [`detach_device`]), or every device backed by `image`.
pub fn undo(image: &Path, device: Option<&Path>) -> Result<()> {
    match device {
        Some(dev) => detach_device(dev, image),
        None => detach_all(image),
    }
}

/// Lets go of `dev` while it is still `image`'s: its backing file is
/// `image`, or a file this mount namespace can no longer reach (sysfs says
/// "/": the filesystem holding it went away under the device, as a FUSE
/// export whose daemon ended). A free device, or one now backed by another
/// file, is left alone. Does not wait: a device still mounted (it is
/// journaled after the mount on it, so undone before it) is detached by
/// the kernel at its last close, and the image's own journal line, undone
/// after the mount, waits for it ([`detach_all`]).
fn detach_device(dev: &Path, image: &Path) -> Result<()> {
    let name = dev
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .filter(|n| n.starts_with("loop") && dev.parent() == Some(Path::new("/dev")))
        .with_context(|| format!("{} is not a loop device", dev.display()))?;
    let canonical = image.canonicalize().ok();
    let still_ours = || {
        let Ok(backing) = std::fs::read_to_string(format!("/sys/block/{name}/loop/backing_file"))
        else {
            return false;
        };
        let backing = Path::new(backing.trim().trim_end_matches(" (deleted)"));
        backing == Path::new("/") || backing == image || canonical.as_deref() == Some(backing)
    };
    cmd::retry(10, 300, || {
        if !still_ours() {
            return Ok(());
        }
        cmd::run("losetup", &["-d".as_ref(), dev.as_os_str()]).map(|_| ())
    })
    .with_context(|| {
        format!(
            "detaching {}; run `losetup -d {}`",
            dev.display(),
            dev.display()
        )
    })
}

/// Why a loop device outlives `losetup -d`, and what to do.
fn still_held(dev: &Path) -> String {
    let elsewhere = std::fs::metadata(dev)
        .map(|m| mountinfo::mounts_elsewhere(libc::major(m.rdev()), libc::minor(m.rdev())))
        .unwrap_or_default();
    if elsewhere.is_empty() {
        format!(
            "{} is still attached 10 s after `losetup -d` (something holds it open: `fuser -v {}`); run `losetup -d {}` once it is free",
            dev.display(),
            dev.display(),
            dev.display()
        )
    } else {
        format!(
            "{} is still attached 10 s after `losetup -d`: its filesystem is still mounted in another mount namespace, copied there when that namespace was made (a container or sandbox started while it was mounted): {}; unmount it there (`nsenter -t PID -m umount MOUNT_POINT`) or end that process, then run `losetup -d {}`",
            dev.display(),
            elsewhere.join("; "),
            dev.display()
        )
    }
}

/// The argument vector of mkfs for `fs` on `dev`: quiet, forced (the
/// device is one storlab just attached) and without discard, which on a
/// loop device would punch holes into a preallocated image. ext4's inode
/// tables and journal are zeroed by mkfs itself (`lazy_itable_init=0`,
/// `lazy_journal_init=0`), not by the kernel's ext4lazyinit thread after
/// the mount: that thread writes to the device during the first runs (I/O
/// the workload did not ask for), and its zeroing reaches a loop device as
/// write-zeroes that may unmap, punching holes into a preallocated image
/// (a 300M one was found with 295,047,168 bytes allocated after a run).
pub fn mkfs_args(fs: &str, dev: &Path, options: &[String]) -> Vec<String> {
    let quiet_force: &[&str] = match fs {
        "ext4" => &[
            "-q",
            "-F",
            "-E",
            "nodiscard,lazy_itable_init=0,lazy_journal_init=0",
        ],
        "xfs" => &["-q", "-f", "-K"],
        "btrfs" => &["-q", "-f", "-K"],
        _ => &[],
    };
    let mut args: Vec<String> = quiet_force.iter().map(|s| s.to_string()).collect();
    args.extend(options.iter().cloned());
    args.push(dev.display().to_string());
    args
}

/// Runs mkfs.`fs` on a device storlab attached itself; options that name
/// another path or device are refused (see [`super::options`]).
///
/// mkfs.btrfs checks every mount point of the host before it writes, and
/// fails when one of them is a FUSE mount whose daemon is gone or whose
/// bricks just stopped ("Transport endpoint is not connected"). That is
/// usually a moment in another campaign's teardown, so such a failure is
/// tried again for a while; if it lasts, the error names the mounts.
pub fn mkfs(fs: &str, dev: &Path, options: &[String]) -> Result<()> {
    super::options::refuse_paths("mkfs_options", options)?;
    let program = format!("mkfs.{fs}");
    let args = mkfs_args(fs, dev, options);
    let blocked = |e: &anyhow::Error| format!("{e:#}").contains(DISCONNECTED);
    let mut waited = 0;
    loop {
        match cmd::run(&program, &args) {
            Ok(_) => return Ok(()),
            Err(e) if blocked(&e) && waited < MOUNT_CHECK_PATIENCE_MS => {
                std::thread::sleep(std::time::Duration::from_millis(250));
                waited += 250;
            }
            Err(e) if blocked(&e) => {
                let dead = super::mountinfo::disconnected_mounts();
                return Err(e).with_context(|| {
                    format!(
                        "making {fs} on {}: {program} cannot check whether the device is mounted while a mount of this host is disconnected ({}); unmount it (`umount -l PATH`) and run again",
                        dev.display(),
                        if dead.is_empty() { "it reconnected or went away meanwhile".to_string() } else { dead.join(", ") }
                    )
                });
            }
            Err(e) => return Err(e).with_context(|| format!("making {fs} on {}", dev.display())),
        }
    }
}

/// What stat says of a FUSE mount whose server is gone (ENOTCONN).
const DISCONNECTED: &str = "Transport endpoint is not connected";

/// How long mkfs waits for a disconnected mount elsewhere on the host to
/// be unmounted by whoever is tearing it down.
const MOUNT_CHECK_PATIENCE_MS: u64 = 15_000;

/// The version line of mkfs.`fs`.
pub fn mkfs_version(fs: &str) -> Option<String> {
    cmd::version(&format!("mkfs.{fs}"), &["-V"])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn enospc_is_called_enospc() {
        let full = std::io::Error::from_raw_os_error(libc::ENOSPC);
        assert!(fallocate_hint(&full).starts_with("ENOSPC"));
        assert!(!fallocate_hint(&full).contains("support fallocate"));
        let unsupported = std::io::Error::from_raw_os_error(libc::EOPNOTSUPP);
        assert!(fallocate_hint(&unsupported).contains("does not support fallocate"));
    }

    #[test]
    fn thin_images_are_sparse_and_preallocated_ones_are_not() {
        let dir = tempfile::tempdir().unwrap();
        let thin = dir.path().join("thin.img");
        let full = dir.path().join("full.img");
        create_image(&thin, 64 << 20, false).unwrap();
        create_image(&full, 64 << 20, true).unwrap();
        assert!(allocated_bytes(&thin).unwrap() < 1 << 20);
        assert!(allocated_bytes(&full).unwrap() >= 64 << 20);
        assert!(create_image(&thin, 1, false).is_err(), "never clobbers");
    }

    #[test]
    fn mkfs_forces_only_what_storlab_attached() {
        let a = mkfs_args(
            "xfs",
            Path::new("/dev/loop3"),
            &["-m".into(), "crc=1".into()],
        );
        assert_eq!(a, vec!["-q", "-f", "-K", "-m", "crc=1", "/dev/loop3"]);
        // ext4 zeroes its inode tables and journal itself, and discards
        // nothing: no ext4lazyinit writing (and unmapping) after the mount.
        let e = mkfs_args("ext4", Path::new("/dev/loop3"), &[]);
        assert_eq!(
            e,
            vec![
                "-q",
                "-F",
                "-E",
                "nodiscard,lazy_itable_init=0,lazy_journal_init=0",
                "/dev/loop3"
            ]
        );
    }
}
