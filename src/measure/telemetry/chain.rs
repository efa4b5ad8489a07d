//! A target's device chain: the block devices its data passes through,
//! from the device its filesystem sits on down to the physical ones — a
//! loop device and the device holding its image file, the devices beneath
//! a device-mapper or md device, the device under a zfs-fuse image or a
//! Gluster brick. Found from mountinfo and sysfs, starting at paths the
//! target names (its mount point, images, bricks); a path on a filesystem
//! without a block device (tmpfs, NFS, FUSE) adds nothing by itself.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// One block device of a chain.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Device {
    /// The kernel's name (`loop3`, `vda1`, `dm-0`), as /proc/diskstats has it.
    pub name: String,
    pub major: u32,
    pub minor: u32,
    /// 0 for a device a target's filesystem sits on, one more per level below.
    pub depth: usize,
    /// The device it lies under, if any.
    pub under: Option<String>,
    /// Whether nothing lies under it (the physical end of the chain).
    pub bottom: bool,
    /// Whether it has a volatile write cache (sysfs `queue/write_cache`
    /// says "write back"): only then does durable data need a flush, and
    /// only then does the kernel count one (it completes the flushes of a
    /// write-through device at once, uncounted).
    pub volatile_cache: bool,
}

/// The devices of one target, top first.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Chain {
    pub devices: Vec<Device>,
}

impl Chain {
    /// The names of the devices at each depth, top level first (a level's
    /// devices together: a volume's bricks on two disks); no empty level.
    pub fn levels(&self) -> Vec<Vec<&str>> {
        let deepest = self.devices.iter().map(|d| d.depth).max();
        (0..=deepest.unwrap_or(0))
            .map(|depth| {
                self.devices
                    .iter()
                    .filter(|d| d.depth == depth)
                    .map(|d| d.name.as_str())
                    .collect::<Vec<_>>()
            })
            .filter(|names| !names.is_empty())
            .collect()
    }

    /// The chain under `paths` (a mount point, image files, brick
    /// directories).
    pub fn of_paths(paths: &[PathBuf]) -> Chain {
        let mut chain = Chain::default();
        for p in paths {
            if let Some((major, minor)) = device_of_path(p) {
                chain.add(major, minor, 0, None);
            }
        }
        chain
    }

    /// The chain of the devices numbered (major, minor) and what lies
    /// under them.
    pub fn of_devices(numbers: &[(u32, u32)]) -> Chain {
        let mut chain = Chain::default();
        for (major, minor) in numbers {
            chain.add(*major, *minor, 0, None);
        }
        chain
    }

    pub fn is_empty(&self) -> bool {
        self.devices.is_empty()
    }

    /// The devices with nothing beneath them.
    pub fn bottom(&self) -> impl Iterator<Item = &Device> {
        self.devices.iter().filter(|d| d.bottom)
    }

    pub fn numbers(&self) -> Vec<(u32, u32)> {
        self.devices.iter().map(|d| (d.major, d.minor)).collect()
    }

    /// `loop3 on vda` and the like, for the run's facts.
    pub fn describe(&self) -> String {
        self.devices
            .iter()
            .map(|d| match &d.under {
                Some(up) => format!("{} (under {up})", d.name),
                None => d.name.clone(),
            })
            .collect::<Vec<_>>()
            .join(", ")
    }

    fn add(&mut self, major: u32, minor: u32, depth: usize, under: Option<String>) {
        if depth > 8
            || self
                .devices
                .iter()
                .any(|d| (d.major, d.minor) == (major, minor))
        {
            return;
        }
        let Some(sys) = sysfs_dir(major, minor) else {
            return;
        };
        let name = sys
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let index = self.devices.len();
        self.devices.push(Device {
            name: name.clone(),
            major,
            minor,
            depth,
            under,
            bottom: true,
            volatile_cache: volatile_cache(&sys),
        });
        let beneath = beneath(&sys);
        for (maj, min) in &beneath {
            self.add(*maj, *min, depth + 1, Some(name.clone()));
        }
        self.devices[index].bottom = !self
            .devices
            .iter()
            .any(|d| d.under.as_deref() == Some(&name));
    }
}

/// The device number of the filesystem holding `path`, if it is a block
/// device (major 0 is an anonymous device: tmpfs, NFS, FUSE, ZFS).
fn device_of_path(path: &Path) -> Option<(u32, u32)> {
    let meta = std::fs::metadata(path).ok()?;
    // A device node (a `block` target's device) is that device.
    if std::os::unix::fs::FileTypeExt::is_block_device(&meta.file_type()) {
        return Some((libc::major(meta.rdev()), libc::minor(meta.rdev())));
    }
    let dev = meta.dev();
    let (major, minor) = (libc::major(dev), libc::minor(dev));
    if major != 0 {
        return Some((major, minor));
    }
    // stat's device is anonymous on btrfs (a subvolume's), as on tmpfs,
    // NFS and FUSE: the mount the path lives on may still name a block
    // device (mountinfo through procfs, not provision's parser: measure
    // sits below provision).
    let canonical = path.canonicalize().ok()?;
    let mounts = procfs::process::Process::myself().ok()?.mountinfo().ok()?;
    let m = mounts
        .into_iter()
        .filter(|m| canonical.starts_with(&m.mount_point))
        .max_by_key(|m| m.mount_point.as_os_str().len())?;
    let (a, b) = m.majmin.split_once(':')?;
    let (a, b): (u32, u32) = (a.parse().ok()?, b.parse().ok()?);
    (a != 0).then_some((a, b))
}

/// The device's sysfs directory (/sys/devices/…/NAME).
fn sysfs_dir(major: u32, minor: u32) -> Option<PathBuf> {
    std::fs::canonicalize(format!("/sys/dev/block/{major}:{minor}")).ok()
}

/// Whether the device (or, for a partition, its disk) caches writes
/// volatilely; assumed so when sysfs does not say.
fn volatile_cache(sys: &Path) -> bool {
    let own = sys.join("queue/write_cache");
    let disk = sys.parent().map(|p| p.join("queue/write_cache"));
    [Some(own), disk]
        .into_iter()
        .flatten()
        .find_map(|p| std::fs::read_to_string(p).ok())
        .map_or(true, |t| t.trim() != "write through")
}

/// What lies under a device: a loop device's backing file's device, or
/// the slaves of a device-mapper or md device.
fn beneath(sys: &Path) -> Vec<(u32, u32)> {
    if let Ok(backing) = std::fs::read_to_string(sys.join("loop/backing_file")) {
        let file = backing.trim().trim_end_matches(" (deleted)");
        return device_of_path(Path::new(file)).into_iter().collect();
    }
    let mut out = Vec::new();
    for slave in std::fs::read_dir(sys.join("slaves"))
        .into_iter()
        .flatten()
        .flatten()
    {
        if let Some(n) = std::fs::read_to_string(slave.path().join("dev"))
            .ok()
            .and_then(|t| parse_dev(&t))
        {
            out.push(n);
        }
    }
    out
}

/// `254:0` → (254, 0).
pub(super) fn parse_dev(text: &str) -> Option<(u32, u32)> {
    let (a, b) = text.trim().split_once(':')?;
    Some((a.parse().ok()?, b.parse().ok()?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn device_numbers_parse() {
        assert_eq!(parse_dev("254:1\n"), Some((254, 1)));
        assert_eq!(parse_dev("x"), None);
    }

    #[test]
    fn a_tmpfs_has_no_chain_and_the_work_tree_has_one() {
        assert!(Chain::of_paths(&[PathBuf::from("/proc/self")]).is_empty());
        let here = Chain::of_paths(&[std::env::current_dir().unwrap()]);
        if let Some(top) = here.devices.first() {
            assert_eq!(top.depth, 0);
            assert!(here.bottom().count() >= 1, "{here:?}");
            assert!(here.describe().contains(&top.name));
        }
    }
}
