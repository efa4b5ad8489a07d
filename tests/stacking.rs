//! Targets stacked on targets, for real: seed 000's VM disks, thin and
//! preallocated images with a filesystem, on a Gluster volume. The images
//! live inside the volume's working directory; the volume is provisioned
//! first, the stack is remounted as one between runs and torn down top
//! first; a SIGKILLed stack is undone by `storlab cleanup`; an image kept
//! busy by another mount namespace fails one remount, named, and the stack
//! is taken hold of again. And images on a swept tmpfs: on one variant
//! named as `check` prints it, or on each, labelled with their own values.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::provision::{assert_gone, daemons, loop_backing, mounted, succeeds, wait_for, Guard};
use crate::util::{failed_runs, Lab};

/// A Gluster volume and, on it, an ext4 image swept thin and preallocated.
fn stacked(lab: &Lab, repetitions: u32) -> PathBuf {
    stacked_with(
        lab,
        repetitions,
        "kind = \"io\"\nrw = \"write\"\nbs = \"64k\"\nsize = \"4M\"\nend_fsync = true",
    )
}

fn stacked_with(lab: &Lab, repetitions: u32, workload: &str) -> PathBuf {
    let text = format!(
        "name = \"stacked\"\n[plan]\nrepetitions = {repetitions}\nremount = \"between-runs\"\n\
         [[target]]\nname = \"vm\"\nkind = \"loop\"\nfs = \"ext4\"\nsize = \"64M\"\non = \"gl\"\n\
         sweep = {{ allocation = [\"thin\", \"preallocated\"] }}\n\
         [[target]]\nname = \"gl\"\nkind = \"gluster\"\nbricks = 1\ndir = \"{}\"\n\
         [[workload]]\nname = \"w\"\n{workload}\ntargets = [\"vm\"]\n",
        lab.path().display()
    );
    lab.file("stacked.toml", &text)
}

/// Where the campaign of `pid` puts the volume's working directory and
/// the N-th image.
fn paths(lab: &Lab, pid: u32, n: u32) -> (PathBuf, PathBuf) {
    let workdir = lab
        .path()
        .join(format!("storlab-{pid}-gl/mnt/storlab-work-gl"));
    let image = workdir.join(format!("storlab-{pid}-vm-{n}/ext4.img"));
    (workdir, image)
}

/// A process in a mount namespace of its own, made while the stack is
/// mounted: as a container or sandbox started on the host would, it keeps
/// a copy of every mount, which storlab's unmounts do not reach. Killed
/// on drop.
struct Pinner(std::process::Child);

impl Pinner {
    /// A process in a mount namespace of its own, copied from ours while
    /// `mnt` is mounted, for `secs` seconds; none when `mnt` was unmounted
    /// before the copy (`unshare` runs a moment after it is spawned, and a
    /// loaded host can make that moment long).
    fn pinning(secs: u32, mnt: &Path) -> Option<Pinner> {
        // The copy holds every mount of the host, other tests' too: it
        // lets go of every storlab mount but `mnt` and those under it
        // (lazily, in its own namespace: unshare makes it private), so
        // that only this test's image is pinned.
        let want = mnt.to_str().expect("a UTF-8 path");
        let child = std::process::Command::new("unshare")
            .args([
                "-m",
                "sh",
                "-c",
                r#"keep=$0; secs=$1
cut -d' ' -f5 /proc/self/mountinfo | sort -r | while read -r m; do
  case "$m" in *storlab*) case "$keep/" in "$m"/*) ;; *) umount -l "$m" 2>/dev/null ;; esac ;; esac
done
exec sleep "$secs""#,
                want,
                &secs.to_string(),
            ])
            .spawn()
            .expect("unshare (util-linux)");
        let pinner = Pinner(child);
        let proc = PathBuf::from(format!("/proc/{}", pinner.0.id()));
        let ours = std::fs::read_link("/proc/self/ns/mnt").ok();
        let deadline = Instant::now() + Duration::from_secs(30);
        // Its own namespace once `unshare` has run (and then exec'd sleep).
        while std::fs::read_link(proc.join("ns/mnt")).ok() == ours
            || std::fs::read_to_string(proc.join("comm")).ok().as_deref() != Some("sleep\n")
        {
            assert!(Instant::now() < deadline, "unshare never ran");
            std::thread::sleep(Duration::from_millis(20));
        }
        let mounts = std::fs::read_to_string(proc.join("mountinfo")).unwrap_or_default();
        mounts
            .lines()
            .any(|l| l.split(' ').nth(4) == Some(want))
            .then_some(pinner)
    }
}

impl Drop for Pinner {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The pid of the glusterfs FUSE client serving the mount on `path`.
fn fuse_client(path: &Path) -> Option<u32> {
    let want = path.to_str()?;
    std::fs::read_dir("/proc").ok()?.flatten().find_map(|e| {
        let pid: u32 = e.file_name().to_str()?.parse().ok()?;
        let cmdline = std::fs::read(e.path().join("cmdline")).ok()?;
        let args: Vec<&[u8]> = cmdline
            .split(|&b| b == 0)
            .filter(|a| !a.is_empty())
            .collect();
        let is_client = args.first()?.ends_with(b"glusterfs");
        (is_client && args.last()? == &want.as_bytes()).then_some(pid)
    })
}

fn journal(lab: &Lab) -> String {
    std::fs::read_dir(lab.state_dir())
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().ends_with(".journal"))
        .map(|e| std::fs::read_to_string(e.path()).unwrap_or_default())
        .collect()
}

#[test]
#[ignore = "needs root"]
fn a_loop_target_on_a_gluster_target_provisions_remounts_and_tears_down_in_order() {
    require_root!();
    let _d = daemons();
    let lab = Lab::new();
    let file = stacked(&lab, 2);
    let mut guard = Guard::spawn(&lab, &file);
    let pid = guard.child().id();
    let (workdir, image) = paths(&lab, pid, 2);
    let mnt = image.with_file_name("mnt");
    wait_for("the second image mounted on the volume", 180, || {
        mounted(mnt.to_str().unwrap())
    });
    assert!(
        image.exists(),
        "the image lives in the volume's working directory"
    );
    let brick_copy = lab.path().join(format!(
        "storlab-{pid}-gl/brick0/storlab-work-gl/storlab-{pid}-vm-2/ext4.img"
    ));
    assert!(brick_copy.exists(), "and so in the volume's brick");
    let text = journal(&lab);
    let at = |what: &str| {
        text.find(what)
            .unwrap_or_else(|| panic!("the journal lacks {what}:\n{text}"))
    };
    assert!(
        at("\"type\":\"volume\"") < at("\"type\":\"loop\""),
        "the volume is journaled before the image standing on it:\n{text}"
    );
    // Each remount of the stack mounts the volume anew, with a new FUSE
    // client process; the volume cannot be unmounted while an image on it
    // is attached, so the images were let go of and taken again too.
    let gl_mnt = lab.path().join(format!("storlab-{pid}-gl/mnt"));
    let mut clients = BTreeSet::new();
    let t0 = Instant::now();
    while guard.child().try_wait().unwrap().is_none() {
        assert!(
            t0.elapsed() < Duration::from_secs(300),
            "the campaign took too long"
        );
        clients.extend(fuse_client(&gl_mnt));
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(guard.child().wait().unwrap().success());
    assert!(
        clients.len() >= 3,
        "the volume was mounted anew before runs: clients {clients:?}"
    );

    let export = lab.export_json();
    let runs = export["runs"].as_array().unwrap();
    assert_eq!(
        runs.len(),
        4,
        "two images × two repetitions; none on the volume itself"
    );
    for r in runs {
        assert_eq!(r["status"], "ok", "{r}");
        assert_eq!(r["remounted"], true, "{r}");
        let labels = &r["metrics"][0]["labels"];
        let want = if r["target"] == "vm[allocation=thin]" {
            "thin"
        } else {
            "preallocated"
        };
        assert_eq!(labels["allocation"], want, "{r}");
    }
    let facts = |name: &str| -> Value {
        export["targets"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["name"] == name)
            .unwrap_or_else(|| panic!("no target {name}"))["facts"]
            .clone()
    };
    let pre = facts("vm[allocation=preallocated]");
    assert_eq!(pre["on"], "gl");
    assert_eq!(pre["image"], image.display().to_string());
    assert!(
        pre["image_allocated_bytes"].as_u64().unwrap() >= 64 << 20,
        "preallocated on the volume: {pre}"
    );
    assert_eq!(facts("vm[allocation=thin]")["allocation"], "thin");
    for name in ["vm[allocation=thin]", "vm[allocation=preallocated]", "gl"] {
        assert_gone(&lab, &facts(name));
    }
    assert!(!workdir.exists());
}

#[test]
#[ignore = "needs root"]
fn a_killed_stack_is_undone_by_storlab_cleanup() {
    require_root!();
    let _d = daemons();
    let lab = Lab::new();
    let file = stacked(&lab, 50);
    let mut guard = Guard::spawn(&lab, &file);
    let pid = guard.child().id();
    let (_, image) = paths(&lab, pid, 2);
    let vm_work = image.with_file_name("mnt").join("storlab-work-vm-2");
    wait_for("the second image's working directory", 180, || {
        vm_work.exists()
    });
    guard.child().kill().unwrap(); // SIGKILL: no teardown
    guard.child().wait().unwrap();
    // Seen through the brick: the volume's own mount is left as it was.
    let in_brick = lab.path().join(format!(
        "storlab-{pid}-gl/brick0/storlab-work-gl/storlab-{pid}-vm-2/ext4.img"
    ));
    assert!(in_brick.exists(), "the kill left the image");
    assert!(
        !loop_backing(image.to_str().unwrap()).is_empty(),
        "the kill left its loop device"
    );
    let vol = format!("storlab-{pid}-gl");
    assert!(succeeds(
        "gluster",
        &["--mode=script", "volume", "info", &vol]
    ));

    let out = lab.ok(&["cleanup"]);
    assert!(out.contains("undone"), "{out}");
    assert!(!in_brick.exists() && !image.exists(), "image left");
    assert!(
        loop_backing(image.to_str().unwrap()).is_empty(),
        "loop device left"
    );
    assert!(
        !succeeds("gluster", &["--mode=script", "volume", "info", &vol]),
        "volume left"
    );
    let base = lab.path().join(format!("storlab-{pid}-gl"));
    assert!(!mounted(base.join("mnt").to_str().unwrap()));
    assert!(!base.exists(), "{} left", base.display());
    assert!(!Path::new(&image).with_file_name("mnt").exists());
    assert_eq!(std::fs::read_dir(lab.state_dir()).unwrap().count(), 0);
}

#[test]
#[ignore = "needs root"]
fn an_image_pinned_by_another_mount_namespace_fails_one_remount_and_is_not_lost() {
    require_root!();
    let _d = daemons();
    let lab = Lab::new();
    let file = stacked_with(&lab, 2, "kind = \"command\"\ncommand = [\"sleep\", \"1\"]");
    let mut guard = Guard::spawn(&lab, &file);
    let pid = guard.child().id();
    let (_, image) = paths(&lab, pid, 2);
    let mnt = image.with_file_name("mnt");
    // Held until a remount has failed on it (longer than the 10 s storlab
    // waits for a loop device to let go; a fixed 20 s ran out before the
    // next remount on a loaded host), then let go for the last round.
    let pinner = loop {
        wait_for("the second image mounted on the volume", 180, || {
            mounted(mnt.to_str().unwrap())
        });
        if let Some(p) = Pinner::pinning(600, &mnt) {
            break p;
        }
        // Remounted between the check and the copy: at the next mount.
        assert!(
            guard.child().try_wait().unwrap().is_none(),
            "the campaign ended before a namespace could hold its image"
        );
    };
    let pinner_pid = pinner.0.id();
    wait_for("a remount to fail on the pinned image", 300, || {
        failed_runs(&lab.db()) > 0 || guard.child().try_wait().unwrap().is_some()
    });
    drop(pinner);
    assert!(guard.child().wait().unwrap().success());

    let export = lab.export_json();
    let runs = export["runs"].as_array().unwrap();
    let errors: Vec<&str> = runs.iter().filter_map(|r| r["error"].as_str()).collect();
    assert!(
        errors.iter().any(|e| e.contains("another mount namespace")
            && e.contains(&format!("process {pinner_pid} (sleep)"))),
        "a failed remount names the namespace that holds the image: {errors:?}"
    );
    assert!(
        errors.iter().all(|e| !e.contains("was lost")),
        "the stack was taken hold of again: {errors:?}"
    );
    let last_round: Vec<&Value> = runs.iter().filter(|r| r["repetition"] == 2).collect();
    assert_eq!(last_round.len(), 2);
    for r in last_round {
        assert_eq!(r["status"], "ok", "once the namespace is gone: {r}");
    }
    let facts = |name: &str| -> Value {
        export["targets"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["name"] == name)
            .unwrap_or_else(|| panic!("no target {name}"))["facts"]
            .clone()
    };
    for name in ["vm[allocation=thin]", "vm[allocation=preallocated]", "gl"] {
        assert_gone(&lab, &facts(name));
    }
    assert_eq!(std::fs::read_dir(lab.state_dir()).unwrap().count(), 0);
}

/// A tmpfs swept over two sizes; image `one` stands on the variant
/// `d[size=128M]` by the name `check` prints, image `each` on both, with
/// a `size` of its own that its variants' names and labels must not
/// confuse with the tmpfs's.
#[test]
#[ignore = "needs root"]
fn images_stand_on_one_variant_of_a_swept_tmpfs_or_on_each() {
    require_root!();
    let lab = Lab::new();
    let file = lab.file(
        "variants.toml",
        "name = \"variants\"\n[plan]\nrepetitions = 1\n\
         [[target]]\nname = \"d\"\nkind = \"tmpfs\"\nsweep = { size = [\"64M\", \"128M\"] }\n\
         [[target]]\nname = \"one\"\nkind = \"loop\"\nsize = \"80M\"\non = \"d[size=128M]\"\n\
         [[target]]\nname = \"each\"\nkind = \"loop\"\nsize = \"24M\"\non = \"d\"\n\
         [[workload]]\nname = \"w\"\nkind = \"io\"\nrw = \"write\"\nbs = \"64k\"\nsize = \"2M\"\n\
         targets = [\"one\", \"each\"]\n",
    );
    let check = lab.ok(&["check", file.to_str().unwrap()]);
    let targets = "targets: d[size=64M] (tmpfs), d[size=128M] (tmpfs), one (loop), \
                   each[d.size=64M] (loop), each[d.size=128M] (loop)";
    assert!(check.contains(targets), "{check}");
    let _guard = Guard::new(&lab);
    let out = lab.run(&["run", "--quiet", file.to_str().unwrap()]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    let export = lab.export_json();
    let target = |name: &str| -> Value {
        export["targets"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["name"] == name)
            .unwrap_or_else(|| panic!("no target {name}: {}", export["targets"]))
            .clone()
    };
    // `one` lives in the 128M tmpfs, not in the 64M one.
    let big = target("d[size=128M]")["facts"].clone();
    let one = target("one")["facts"].clone();
    assert_eq!(one["on"], "d[size=128M]", "{one}");
    let image = one["image"].as_str().unwrap();
    assert!(
        image.starts_with(big["mount_point"].as_str().unwrap()),
        "{image} is in the 128M tmpfs {big}"
    );
    assert_eq!(big["size_bytes"], 128u64 << 20, "{big}");
    assert_eq!(target("one")["factors"], serde_json::json!([]));
    let runs = export["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 3, "one, and each on both tmpfs variants");
    for r in runs {
        assert_eq!(r["status"], "ok", "{r}");
        let labels = &r["metrics"][0]["labels"];
        assert!(
            labels.get("size").is_none(),
            "no label says the image's size: {r}"
        );
        match r["target"].as_str().unwrap() {
            "one" => assert!(labels.get("d.size").is_none(), "{r}"),
            "each[d.size=64M]" => assert_eq!(labels["d.size"], (64u64 << 20).to_string(), "{r}"),
            "each[d.size=128M]" => {
                assert_eq!(labels["d.size"], (128u64 << 20).to_string(), "{r}")
            }
            other => panic!("a run on {other}"),
        }
    }
    for name in [
        "one",
        "each[d.size=64M]",
        "each[d.size=128M]",
        "d[size=64M]",
        "d[size=128M]",
    ] {
        assert_gone(&lab, &target(name)["facts"]);
    }
}
