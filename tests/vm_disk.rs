//! The `vm-disk` target for real: qcow2 images made by qemu-img, served
//! by qemu-storage-daemon as FUSE exports, a loop device and XFS on each,
//! standing on a tmpfs and on a Gluster volume (its FUSE mount, and QEMU's
//! own gluster driver). A thin image grows with what the guest writes, a
//! full one is allocated from the start; the daemon's CPU is counted; a
//! SIGKILLed campaign's daemon, export, loop device and image are undone
//! by `storlab cleanup`; nothing of QEMU is left after any test, checked
//! by the pid files and paths the campaign recorded. Bad input is refused
//! with its place in the file.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::provision::{assert_gone, daemons, loop_backing, mounted, wait_for, Guard};
use crate::util::{runs, Lab};

/// A command workload that writes 48 MiB into the guest's filesystem with
/// O_DIRECT, syncs, and leaves beside the lab, per target, the image's
/// `qemu-img info` and the daemon's pid as they are then (the image lies
/// in a directory above the working directory).
fn filler(lab: &Lab, image: &str) -> String {
    let script = format!(
        "set -e; dd if=/dev/urandom of=fill bs=1M count=48 oflag=direct status=none; sync; \
         d=$PWD; while [ ! -f \"$d/{image}\" ]; do d=$(dirname \"$d\"); done; t=$(basename \"$d\"); \
         qemu-img info -U --output=json \"$d/{image}\" > \"$1/info-$t.json\"; \
         cp \"$d/qemu-storage-daemon.pid\" \"$1/pid-$t\""
    );
    format!(
        "[[workload]]\nname = \"fill\"\nkind = \"command\"\ncommand = [\"sh\", \"-c\", {}, \"sh\", \"{}\"]\ntargets = [\"vm\"]\n",
        toml_string(&script),
        lab.path().display()
    )
}

fn toml_string(s: &str) -> String {
    format!("\"{}\"", s.replace('\\', "\\\\").replace('"', "\\\""))
}

/// What the filler left last for the target whose directory (named
/// `storlab-<pid>-<slug>`) holds the image.
fn left_by_filler(lab: &Lab, slug: &str) -> (Value, u32) {
    let find = |prefix: &str, suffix: &str| {
        let end = format!("-{slug}{suffix}");
        std::fs::read_dir(lab.path())
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .find(|n| n.starts_with(prefix) && n.ends_with(&end))
            .map(|n| std::fs::read_to_string(lab.path().join(n)).unwrap())
            .unwrap_or_else(|| panic!("the filler left no {prefix}…{end} in the lab"))
    };
    let info = find("info-storlab-", ".json");
    let pid = find("pid-storlab-", "").trim().parse().unwrap();
    (serde_json::from_str(&info).unwrap(), pid)
}

/// Whether a run failed only because a process outside the test (another
/// suite's tracer, a container) copied the disk's mount into a mount
/// namespace of its own, so that a remount could not let go of it: the
/// error names the process, and the stack is taken hold of again.
fn pinned_elsewhere(run: &Value) -> bool {
    run["error"]
        .as_str()
        .is_some_and(|e| e.contains("another mount namespace"))
}

fn facts<'e>(export: &'e Value, name: &str) -> &'e Value {
    &export["targets"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == name)
        .unwrap_or_else(|| panic!("no target {name}"))["facts"]
}

/// Processes whose command line names `path` (the lab directory: every
/// daemon a campaign of the test starts has its pid file there).
fn processes_naming(path: &Path) -> Vec<u32> {
    let want = path.as_os_str().as_encoded_bytes();
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| {
            let pid: u32 = e.file_name().to_str()?.parse().ok()?;
            let cmdline = std::fs::read(e.path().join("cmdline")).ok()?;
            let named = cmdline.windows(want.len()).any(|w| w == want);
            (named && pid != std::process::id()).then_some(pid)
        })
        .collect()
}

fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .map(|s| !s.rsplit_once(')').unwrap().1.trim_start().starts_with('Z'))
        .unwrap_or(false)
}

/// Nothing of QEMU the test's campaigns started is left: no process named
/// with the lab's paths, no export mounted, no loop device on an export.
fn assert_no_qemu_left(lab: &Lab, exports: &[PathBuf]) {
    let left = processes_naming(lab.path());
    assert!(left.is_empty(), "processes left: {left:?}");
    for e in exports {
        let e = e.to_str().unwrap();
        assert!(!mounted(e), "export {e} still mounted");
        assert!(loop_backing(e).is_empty(), "loop device left on {e}");
    }
}

fn require_qemu() {
    require_program!("qemu-img");
    require_program!("qemu-storage-daemon");
    require_program!("mkfs.xfs");
}

/// Checks one thin and one full qcow2 of 512 MiB after the filler ran on
/// both: the thin one small when made and grown by what was written; the
/// full one allocated from the start; served by the daemon whose pid it
/// recorded, now gone; its CPU counted in the run.
fn check_thin_and_full(lab: &Lab, export: &Value, thin: (&str, &str), full: (&str, &str)) {
    for r in runs(export).iter().filter(|r| !pinned_elsewhere(r)) {
        assert_eq!(r["status"], "ok", "{r}");
        let qsd_cpu =
            r["metrics"].as_array().unwrap().iter().any(|m| {
                m["name"] == "proc_cpu_s" && m["labels"]["process"] == "qemu-storage-daemon"
            });
        assert!(qsd_cpu, "the daemon's CPU is counted: {r}");
    }
    let (thin_name, thin_slug) = thin;
    let (full_name, full_slug) = full;
    let t = facts(export, thin_name);
    let f = facts(export, full_name);
    for x in [t, f] {
        assert_eq!(x["format"], "qcow2");
        assert_eq!(x["image_format"], "qcow2");
        assert_eq!(x["image_virtual_bytes"], 512 << 20);
        assert!(
            x["qemu_version"].as_str().unwrap().contains("version"),
            "{x}"
        );
        assert_eq!(x["fs"], "xfs");
    }
    let made = t["image_allocated_bytes"].as_u64().unwrap();
    assert!(made < 16 << 20, "a thin image starts small: {made}");
    let full_made = f["image_allocated_bytes"].as_u64().unwrap();
    assert!(
        full_made >= 512 << 20,
        "a full image is allocated from the start: {full_made}"
    );
    let (thin_info, thin_pid) = left_by_filler(lab, thin_slug);
    let grown = thin_info["actual-size"].as_u64().unwrap();
    assert!(
        grown >= made + (48 << 20),
        "the thin image grew by the 48 MiB written: {made} → {grown}"
    );
    let (full_info, full_pid) = left_by_filler(lab, full_slug);
    let full_after = full_info["actual-size"].as_u64().unwrap();
    assert!(
        full_after < full_made + (8 << 20),
        "the full image did not grow: {full_made} → {full_after}"
    );
    assert_ne!(thin_pid, full_pid, "each disk has its own daemon");
    let first = t["daemon_pid"].as_u64().unwrap() as u32;
    for pid in [thin_pid, full_pid, first] {
        assert!(!alive(pid), "daemon {pid} still runs");
    }
}

#[test]
#[ignore = "needs root"]
fn thin_and_full_qcow2_disks_on_a_tmpfs() {
    require_root!();
    require_qemu();
    let lab = Lab::new();
    let text = format!(
        "name = \"vm-tmpfs\"\n[plan]\nrepetitions = 1\n\
         [[target]]\nname = \"t\"\nkind = \"tmpfs\"\nsize = \"1200M\"\n\
         [[target]]\nname = \"vm\"\nkind = \"vm-disk\"\non = \"t\"\nsize = \"512M\"\nfs = \"xfs\"\n\
         cache = \"writeback\"\naio = \"io_uring\"\nlazy_refcounts = true\n\
         sweep = {{ preallocation = [\"off\", \"full\"] }}\n{}",
        filler(&lab, "disk.qcow2")
    );
    let file = lab.file("vm.toml", &text);
    let _guard = Guard::new(&lab);
    lab.ok(&["run", "--quiet", file.to_str().unwrap()]);
    let export = lab.export_json();
    assert_eq!(runs(&export).len(), 2);
    check_thin_and_full(
        &lab,
        &export,
        ("vm[preallocation=off]", "vm-1"),
        ("vm[preallocation=full]", "vm-2"),
    );
    let t = facts(&export, "vm[preallocation=off]");
    assert_eq!(t["cache"], "writeback");
    assert_eq!(t["aio"], "io_uring");
    assert_eq!(t["image_lazy_refcounts"], true);
    assert_eq!(t["access"], "file");
    let mut exports = Vec::new();
    for name in ["vm[preallocation=off]", "vm[preallocation=full]", "t"] {
        let f = facts(&export, name);
        assert_gone(&lab, f);
        exports.extend(f["export"].as_str().map(PathBuf::from));
    }
    assert_eq!(exports.len(), 2);
    assert_no_qemu_left(&lab, &exports);
}

#[test]
#[ignore = "needs root"]
fn thin_and_full_qcow2_disks_on_a_gluster_volume_remounted_between_runs() {
    require_root!();
    require_qemu();
    require_program!("glusterd");
    let _d = daemons();
    let lab = Lab::new();
    // The thin disk on the volume's FUSE mount, the full one reached
    // through QEMU's gluster driver: both oVirt's ways to a storage domain.
    let text = format!(
        "name = \"vm-gluster\"\n[plan]\nrepetitions = 2\nremount = \"between-runs\"\n\
         [[target]]\nname = \"gl\"\nkind = \"gluster\"\nbricks = 1\ndir = \"{}\"\n\
         [[target]]\nname = \"vm\"\nkind = \"vm-disk\"\non = \"gl\"\nsize = \"512M\"\nfs = \"xfs\"\n\
         [[target]]\nname = \"vg\"\nkind = \"vm-disk\"\ngluster = \"gl\"\nsize = \"512M\"\nfs = \"xfs\"\npreallocation = \"full\"\n{}",
        lab.path().display(),
        filler(&lab, "disk.qcow2").replace("[\"vm\"]", "[\"vm\", \"vg\"]")
    );
    let file = lab.file("vm.toml", &text);
    let mut guard = Guard::spawn(&lab, &file);
    assert!(guard.child().wait().unwrap().success());
    let export = lab.export_json();
    let all = runs(&export);
    assert_eq!(all.len(), 4, "two disks × two repetitions");
    let ok: Vec<&Value> = all.iter().filter(|r| !pinned_elsewhere(r)).collect();
    assert!(ok.iter().all(|r| r["remounted"] == true), "{all:?}");
    for t in ["vm", "vg"] {
        assert!(
            ok.iter().any(|r| r["target"] == t),
            "no run on {t}: {all:?}"
        );
    }
    check_thin_and_full(&lab, &export, ("vm", "vm"), ("vg", "vg"));
    let vg = facts(&export, "vg");
    assert_eq!(vg["access"], "QEMU's gluster driver (libgfapi)");
    assert!(
        vg["image"].as_str().unwrap().starts_with("gluster://"),
        "{vg}"
    );
    assert_eq!(facts(&export, "vm")["on"], "gl");
    // The runs on a disk see the devices under the volume's bricks, and
    // the bricks' processes, beside the daemon.
    for r in ok {
        let procs: Vec<&str> = r["metrics"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|m| m["name"] == "proc_cpu_s")
            .filter_map(|m| m["labels"]["process"].as_str())
            .collect();
        assert!(procs.contains(&"glusterfsd"), "{procs:?}");
    }
    let mut exports = Vec::new();
    for name in ["vm", "vg", "gl"] {
        let f = facts(&export, name);
        assert_gone(&lab, f);
        exports.extend(f["export"].as_str().map(PathBuf::from));
    }
    assert_no_qemu_left(&lab, &exports);
}

#[test]
#[ignore = "needs root"]
fn a_campaign_killed_while_the_daemon_serves_is_undone_by_storlab_cleanup() {
    require_root!();
    require_qemu();
    let lab = Lab::new();
    let text = format!(
        "name = \"vm-kill\"\n[plan]\nrepetitions = 50\n\
         [[target]]\nname = \"vm\"\nkind = \"vm-disk\"\ndir = \"{}\"\nsize = \"64M\"\nformat = \"raw\"\npreallocation = \"falloc\"\n\
         [[workload]]\nname = \"w\"\nkind = \"command\"\ncommand = [\"sleep\", \"1\"]\n",
        lab.path().display()
    );
    let file = lab.file("vm.toml", &text);
    let mut guard = Guard::spawn(&lab, &file);
    let pid = guard.child().id();
    let base = lab.path().join(format!("storlab-{pid}-vm"));
    let work = base.join("mnt/storlab-work-vm");
    wait_for("the disk's working directory", 120, || work.exists());
    let pidfile = base.join("qemu-storage-daemon.pid");
    let daemon: u32 = std::fs::read_to_string(&pidfile)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let export = base.join("export");
    guard.child().kill().unwrap(); // SIGKILL: no teardown
    guard.child().wait().unwrap();
    assert!(alive(daemon), "the daemon outlives the killed campaign");
    assert!(mounted(export.to_str().unwrap()), "and still serves");
    assert!(!loop_backing(export.to_str().unwrap()).is_empty());

    // The tracefs it mounted for bpftrace is kept while another storlab
    // (a test beside this one) attaches, and goes at a later cleanup.
    let out = lab.cleanup_until_no_tracefs_is_kept();
    assert!(
        out.contains(&format!(
            "undone: qemu-storage-daemon serving {}",
            export.display()
        )),
        "{out}"
    );
    assert!(!alive(daemon), "cleanup stopped the daemon by its pid");
    assert!(!mounted(base.join("mnt").to_str().unwrap()));
    assert!(!base.exists(), "{} left", base.display());
    let left: Vec<_> = std::fs::read_dir(lab.state_dir())
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert!(
        left.is_empty(),
        "left in the state directory: {left:?}\n{out}"
    );
    assert_no_qemu_left(&lab, &[export]);
}

#[test]
fn a_disk_the_format_cache_or_carrier_cannot_have_is_refused_where_it_is_written() {
    let lab = Lab::new();
    let target = |extra: &str| {
        format!(
            "name = \"bad\"\n[[target]]\nname = \"t\"\nkind = \"tmpfs\"\nsize = \"2G\"\n\
             [[target]]\nname = \"vm\"\nkind = \"vm-disk\"\n{extra}\n\
             [[workload]]\nname = \"w\"\nkind = \"io\"\nsize = \"1M\"\n"
        )
    };
    for (extra, line, says) in [
        (
            "on = \"t\"\nformat = \"vmdk\"",
            10,
            "must be one of qcow2, raw",
        ),
        (
            "on = \"t\"\ncache = \"writeback2\"",
            10,
            "did you mean `writeback`",
        ),
        (
            "on = \"t\"\nformat = \"raw\"\npreallocation = \"metadata\"",
            11,
            "a raw image has no metadata to preallocate",
        ),
        (
            "on = \"t\"\naio = \"native\"\ncache = \"writeback\"",
            10,
            "aio = \"native\" needs O_DIRECT",
        ),
        ("on = \"t\"\nsize = \"3G\"", 10, "holds only 2.0 GiB"),
        (
            "gluster = \"t\"",
            9,
            "reaches `t` through QEMU's gluster driver, but `t` is a tmpfs target",
        ),
    ] {
        let file = lab.file("bad.toml", &target(extra));
        let out = lab.run(&["check", file.to_str().unwrap()]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{extra}: {err}");
        assert!(
            err.contains(&format!("bad.toml:{line}:")) && err.contains(says),
            "{extra}: {err}"
        );
    }
}
