//! How what was asked of a target reads back: the kernel's line for a
//! mount (mountinfo) and which requested mount options it must show, and
//! when a setting Gluster or ZFS reports is the value asked for. Provisioning
//! checks a mount with these rules and the analysis of a campaign judges the
//! stored read-back with the same ones (a requested difference that is
//! none).

/// One line of mountinfo.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MountEntry {
    /// The mount's unique id (a new one for every mount, even of the same
    /// filesystem on the same point).
    pub mount_id: u32,
    pub major: u32,
    pub minor: u32,
    pub mount_point: String,
    pub mount_options: String,
    pub fs_type: String,
    pub source: String,
    pub super_options: String,
}

/// Options that need not appear in mountinfo: generic flags, and per
/// filesystem the defaults the kernel does not echo.
fn implicit(fs: &str, opt: &str) -> bool {
    const GENERIC: &[&str] = &[
        "defaults", "rw", "async", "auto", "noauto", "dev", "exec", "suid", "nouser", "_netdev",
    ];
    const EXT4: &[&str] = &["barrier", "barrier=1", "data=ordered", "delalloc"];
    const XFS: &[&str] = &["barrier", "inode64", "logbufs=8"];
    GENERIC.contains(&opt)
        || (fs == "ext4" && EXT4.contains(&opt))
        || (fs == "xfs" && XFS.contains(&opt))
}

/// How the kernel spells an option in mountinfo.
fn kernel_spelling(opt: &str) -> &str {
    match opt {
        "barrier=0" => "nobarrier",
        "nodiratime" => "nodiratime",
        other => other,
    }
}

/// Whether mountinfo's `entry` (a filesystem of type `fs`) shows option
/// `opt`; `None` for one it need not show (a default it does not echo).
pub fn shows(fs: &str, opt: &str, entry: &MountEntry) -> Option<bool> {
    if implicit(fs, opt) {
        return None;
    }
    let spelt = kernel_spelling(opt);
    Some(
        entry
            .mount_options
            .split(',')
            .chain(entry.super_options.split(','))
            .any(|o| o == spelt),
    )
}

/// Whether `got` (as gluster reports it) is the value `want` asked for.
pub fn same_value(want: &str, got: &str) -> bool {
    let norm = |s: &str| {
        let s = s
            .trim()
            .trim_end_matches("(DEFAULT)")
            .trim()
            .to_ascii_lowercase();
        match s.as_str() {
            "on" | "true" | "yes" | "enable" | "1" => "on".to_string(),
            "off" | "false" | "no" | "disable" | "0" => "off".to_string(),
            _ => s,
        }
    };
    norm(want) == norm(got)
}
