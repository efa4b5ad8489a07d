//! /proc/self/mountinfo: which mount a path lives on, with the options the
//! kernel reports (not the ones someone asked for).

use std::os::unix::fs::MetadataExt;
use std::path::Path;

pub use crate::fact::readback::MountEntry;

/// Parses mountinfo text (see proc(5)).
pub fn parse(text: &str) -> Vec<MountEntry> {
    text.lines().filter_map(parse_line).collect()
}

fn parse_line(line: &str) -> Option<MountEntry> {
    let (left, right) = line.split_once(" - ")?;
    let l: Vec<&str> = left.split(' ').collect();
    let r: Vec<&str> = right.split(' ').collect();
    let (major, minor) = l.get(2)?.split_once(':')?;
    Some(MountEntry {
        mount_id: l.first()?.parse().ok()?,
        major: major.parse().ok()?,
        minor: minor.parse().ok()?,
        mount_point: unescape(l.get(4)?),
        mount_options: l.get(5)?.to_string(),
        fs_type: r.first()?.to_string(),
        source: unescape(r.get(1)?),
        super_options: r.get(2).unwrap_or(&"").to_string(),
    })
}

/// mountinfo escapes space, tab, newline and backslash as octal `\ooo`.
fn unescape(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\\'
            && i + 3 < b.len()
            && b[i + 1..i + 4].iter().all(|c| (b'0'..=b'7').contains(c))
        {
            let v = (b[i + 1] - b'0') * 64 + (b[i + 2] - b'0') * 8 + (b[i + 3] - b'0');
            out.push(v);
            i += 4;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Mount points of this host that stat cannot reach because the server
/// behind them is gone (ENOTCONN: a FUSE daemon killed, a Gluster volume
/// stopped under its client).
pub fn disconnected_mounts() -> Vec<String> {
    let text = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
    parse(&text)
        .into_iter()
        .filter(|m| {
            std::fs::metadata(&m.mount_point)
                .err()
                .and_then(|e| e.raw_os_error())
                == Some(libc::ENOTCONN)
        })
        .map(|m| m.mount_point)
        .collect()
}

/// The mount a path lives on: same device, longest mount point prefix; or,
/// where stat's device differs from mountinfo's (btrfs subvolumes), the
/// longest mount point prefix alone.
pub fn mount_of(path: &Path) -> Option<MountEntry> {
    let canonical = path.canonicalize().ok()?;
    let dev = std::fs::metadata(&canonical).ok()?.dev();
    let (major, minor) = (libc::major(dev), libc::minor(dev));
    let text = std::fs::read_to_string("/proc/self/mountinfo").ok()?;
    let under: Vec<MountEntry> = parse(&text)
        .into_iter()
        .filter(|m| canonical.starts_with(&m.mount_point))
        .collect();
    let longest = |v: Vec<MountEntry>| v.into_iter().max_by_key(|m| m.mount_point.len());
    let same_dev: Vec<MountEntry> = under
        .iter()
        .filter(|m| m.major == major && m.minor == minor)
        .cloned()
        .collect();
    longest(same_dev).or_else(|| longest(under))
}

/// Mounts of the device `major:minor` that live on in other mount
/// namespaces, one line per namespace: `process PID (COMMAND) at
/// MOUNT_POINT`. A namespace created (by a container, a sandbox, `unshare
/// -m`) while a filesystem was mounted keeps its own copy of the mount,
/// which an unmount here does not reach: the filesystem stays alive and
/// its device busy. Read only to explain such a device.
pub fn mounts_elsewhere(major: u32, minor: u32) -> Vec<String> {
    let ours = std::fs::read_link("/proc/self/ns/mnt").ok();
    let mut seen = Vec::new();
    let mut out = Vec::new();
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let name = entry.file_name();
        let Some(pid) = name
            .to_str()
            .filter(|n| n.bytes().all(|b| b.is_ascii_digit()))
        else {
            continue;
        };
        let Ok(ns) = std::fs::read_link(entry.path().join("ns/mnt")) else {
            continue;
        };
        if Some(&ns) == ours.as_ref() || seen.contains(&ns) {
            continue;
        }
        let text = std::fs::read_to_string(entry.path().join("mountinfo")).unwrap_or_default();
        let Some(m) = parse(&text)
            .into_iter()
            .find(|m| m.major == major && m.minor == minor)
        else {
            continue;
        };
        seen.push(ns);
        let command = std::fs::read_to_string(entry.path().join("comm")).unwrap_or_default();
        out.push(format!(
            "process {pid} ({}) at {}",
            command.trim(),
            m.mount_point
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_a_line() {
        let t = "36 35 98:0 /mnt1 /mnt/with\\040space rw,noatime master:1 - ext4 /dev/root rw,errors=continue\n";
        let m = &parse(t)[0];
        assert_eq!((m.mount_id, m.major, m.minor), (36, 98, 0));
        assert_eq!(m.mount_point, "/mnt/with space");
        assert_eq!(m.mount_options, "rw,noatime");
        assert_eq!(m.fs_type, "ext4");
        assert_eq!(m.source, "/dev/root");
        assert_eq!(m.super_options, "rw,errors=continue");
    }

    #[test]
    fn finds_the_mount_of_proc() {
        let m = mount_of(Path::new("/proc/self")).unwrap();
        assert_eq!(m.fs_type, "proc");
    }
}
