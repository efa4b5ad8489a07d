//! Directories, mounts and path facts on a [`Site`]: here through the
//! local helpers, on another host as short fixed shell scripts run through
//! the remote shell, with the same rules — a directory is created only if
//! it did not exist, removed with its contents but never across a mount
//! nor through a symbolic link, and a mount is undone only where it is.

use std::path::Path;

use anyhow::{Context, Result};
use serde_json::{json, Value};

use super::site::Site;
use super::{facts, mount, undo};

/// Removes directory `$1` with its contents, unless it is reached through
/// a symbolic link or something is mounted at or below it.
const REMOVE_DIR: &str = r#"p=$1
[ -e "$p" ] || [ -L "$p" ] || exit 0
if [ "$(readlink -f -- "$p")" != "$p" ]; then
  echo "$p is reached through a symbolic link; storlab does not remove it" >&2; exit 3
fi
if awk -v p="$p" '{ m = $5; gsub(/\\040/, " ", m); if (m == p || index(m, p "/") == 1) f = 1 } END { exit !f }' /proc/self/mountinfo; then
  echo "not removing $p: something is mounted at or below it; unmount it first" >&2; exit 3
fi
rm -rf --one-file-system -- "$p""#;

/// Unmounts `$1` if something is mounted exactly there, retrying while busy.
const UMOUNT: &str = r#"p=$1
for i in 1 2 3 4 5 6 7 8 9 10; do
  awk -v p="$p" '{ m = $5; gsub(/\\040/, " ", m); if (m == p) f = 1 } END { exit !f }' /proc/self/mountinfo || exit 0
  umount -- "$p" && exit 0
  sleep 0.5
done
echo "cannot unmount $p; close what uses it (fuser -vm $p) and run umount $p" >&2; exit 3"#;

/// Creates directory `path` there; it must not exist yet.
pub fn make_dir(site: &Site, path: &Path) -> Result<()> {
    match site {
        Site::Local => {
            std::fs::create_dir(path).with_context(|| format!("creating {}", path.display()))
        }
        Site::Remote(_) => site
            .run("mkdir", &["--", &text(path)])
            .map(drop)
            .with_context(|| format!("creating {} on {site}", path.display())),
    }
}

/// Whether directory `path` exists there.
pub fn is_dir(site: &Site, path: &Path) -> bool {
    match site {
        Site::Local => path.is_dir(),
        Site::Remote(_) => site.succeeds("test", &["-d", &text(path)]),
    }
}

/// Removes `path` there with its contents; succeeds when it is gone.
/// Refuses while something is mounted at or below it, and a path reached
/// through a symbolic link (on another host, where storlab cannot
/// canonicalize it beforehand).
pub fn remove_dir(site: &Site, path: &Path) -> Result<()> {
    match site {
        Site::Local => undo::remove_dir(path),
        Site::Remote(_) => site
            .script(REMOVE_DIR, &[text(path)])
            .map(drop)
            .with_context(|| format!("removing {} on {site}", path.display())),
    }
}

/// Unmounts what is mounted on `path` there, if anything, retrying while
/// it is busy.
pub fn umount(site: &Site, path: &Path) -> Result<()> {
    match site {
        Site::Local => mount::umount_if_mounted(path),
        Site::Remote(_) => site
            .script(UMOUNT, &[text(path)])
            .map(drop)
            .with_context(|| format!("unmounting {} on {site}", path.display())),
    }
}

/// The facts of the filesystem holding `path` there: as
/// [`facts::path_facts`] here; on another host what `findmnt` and
/// `lsblk` say there (filesystem, mount, source, options, the disk).
pub fn path_facts(site: &Site, path: &Path) -> Value {
    if site.is_local() {
        return facts::path_facts(path);
    }
    let p = text(path);
    let mut out = json!({ "host": site.host(), "path": p });
    let found = site
        .run(
            "findmnt",
            &["-J", "-T", &p, "-o", "TARGET,SOURCE,FSTYPE,OPTIONS"],
        )
        .ok()
        .and_then(|t| serde_json::from_str::<Value>(&t).ok());
    let Some(fs) = found.as_ref().and_then(|v| v["filesystems"].get(0)) else {
        out["error"] = json!(format!("findmnt -T {p} gave nothing on {site}"));
        return out;
    };
    // A bind mount's source is `/dev/vda[/sub/dir]`.
    let source = fs["source"].as_str().unwrap_or_default();
    let source = source.split('[').next().unwrap_or_default().to_string();
    out["fs_type"] = fs["fstype"].clone();
    out["mount_point"] = fs["target"].clone();
    out["mount_source"] = json!(source);
    out["mount_options"] = fs["options"].clone();
    if source.starts_with("/dev/") {
        if let Some(dev) = remote_disk(site, &source) {
            out["block_device"] = dev;
        }
    }
    out
}

/// The disk under block device `source` on another host (lsblk's
/// inverse tree: a partition's parent disk).
fn remote_disk(site: &Site, source: &str) -> Option<Value> {
    let text = site
        .run(
            "lsblk",
            &[
                "-J",
                "-b",
                "-s",
                "-o",
                "NAME,TYPE,MODEL,ROTA,SCHED,SIZE",
                source,
            ],
        )
        .ok()?;
    disk_in(&serde_json::from_str(&text).ok()?)
}

/// The deepest `disk` in lsblk's inverse tree, as the local facts name it.
fn disk_in(tree: &Value) -> Option<Value> {
    let mut node = tree["blockdevices"].get(0)?;
    let mut disk = None;
    loop {
        if node["type"] == "disk" {
            disk = Some(node);
        }
        match node["children"].get(0) {
            Some(child) => node = child,
            None => break,
        }
    }
    let d = disk.unwrap_or(node);
    let rota = match &d["rota"] {
        Value::Bool(b) => Some(*b),
        Value::String(s) => Some(s == "1"),
        _ => None,
    };
    Some(json!({
        "name": d["name"],
        "model": d["model"].as_str().map(str::trim).filter(|m| !m.is_empty()).unwrap_or("unknown"),
        "rotational": rota,
        "scheduler": d["sched"],
        "size_bytes": d["size"],
    }))
}

fn text(path: &Path) -> String {
    path.display().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lsblk_inverse_trees_name_the_disk() {
        let tree = json!({"blockdevices": [{"name": "vda1", "type": "part", "rota": false, "size": 10,
            "children": [{"name": "vda", "type": "disk", "model": "QEMU HARDDISK  ", "rota": "1", "sched": "mq-deadline", "size": 100}]}]});
        let d = disk_in(&tree).unwrap();
        assert_eq!(d["name"], "vda");
        assert_eq!(d["model"], "QEMU HARDDISK");
        assert_eq!(d["rotational"], true);
        assert_eq!(d["size_bytes"], 100);
        let whole =
            json!({"blockdevices": [{"name": "vda", "type": "disk", "rota": false, "size": 5}]});
        assert_eq!(disk_in(&whole).unwrap()["model"], "unknown");
    }

    #[test]
    fn on_another_host_links_and_mounts_are_kept_and_the_rest_removed() {
        // "Another host" is this one, through a remote shell that runs the
        // line it is given here: the quoting and the scripts are the real ones.
        crate::provision::site::with_loopback_rsh(|| {
            let there = Site::Remote("h1".into());
            let d = tempfile::tempdir().unwrap();
            let real = d.path().canonicalize().unwrap();
            let victim = real.join("victim it's");
            std::fs::create_dir(&victim).unwrap();
            std::fs::write(victim.join("keep"), b"x").unwrap();
            let link = real.join("storlab-1-x");
            std::os::unix::fs::symlink(&victim, &link).unwrap();
            let e = remove_dir(&there, &link).unwrap_err();
            assert!(format!("{e:#}").contains("symbolic link"), "{e:#}");
            assert!(victim.join("keep").exists());
            let ours = real.join("storlab-2-x y");
            make_dir(&there, &ours).unwrap();
            assert!(make_dir(&there, &ours).is_err(), "it exists now");
            assert!(is_dir(&there, &ours));
            std::fs::create_dir(ours.join("brick0")).unwrap();
            remove_dir(&there, &ours).unwrap();
            assert!(!ours.exists());
            remove_dir(&there, &ours).unwrap();
            umount(&there, &ours).unwrap();
            let f = path_facts(&there, &real);
            assert_eq!(f["host"], "h1");
            assert!(f["fs_type"].is_string(), "{f}");
        });
    }
}
