//! Real provisioning: loop-backed ext4/xfs/btrfs, thin and preallocated
//! images, a ZFS dataset (zfs-fuse here), a replica-2 Gluster volume; each
//! provisioned, run, remounted between runs and torn down, then checked for
//! leftovers by the names, paths and pids the campaign recorded. Also: a
//! SIGKILLed campaign followed by `storlab cleanup`, and dangerous specs
//! refused before anything is touched.

use std::path::Path;
use std::process::Command;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::util::Lab;

/// Tests that may start zfs-fuse or glusterd run one at a time: a daemon one
/// test started is stopped when that test ends.
static DAEMONS: Mutex<()> = Mutex::new(());

/// Undoes what a test's campaigns left even when the test fails: kills a
/// campaign still running, then runs `storlab cleanup` on the test's own
/// journals. Declared after the `Lab`, so it runs before the lab directory
/// is removed.
pub(crate) struct Guard<'a> {
    lab: &'a Lab,
    child: Option<std::process::Child>,
}

impl<'a> Guard<'a> {
    pub(crate) fn new(lab: &'a Lab) -> Guard<'a> {
        Guard { lab, child: None }
    }

    pub(crate) fn spawn(lab: &'a Lab, file: &Path) -> Guard<'a> {
        let child = lab
            .cmd()
            .args(["run", "--quiet", file.to_str().unwrap()])
            .stdout(std::process::Stdio::null())
            .spawn()
            .unwrap();
        Guard {
            lab,
            child: Some(child),
        }
    }

    /// [`Guard::spawn`], keeping what the campaign says on stderr for
    /// [`Guard::finish`].
    pub(crate) fn spawn_heard(lab: &'a Lab, file: &Path) -> Guard<'a> {
        let child = lab
            .cmd()
            .args(["run", "--quiet", file.to_str().unwrap()])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        Guard {
            lab,
            child: Some(child),
        }
    }

    /// Waits for the campaign to end: its status and what it said.
    pub(crate) fn finish(&mut self) -> (std::process::ExitStatus, String) {
        let mut said = String::new();
        if let Some(mut e) = self.child().stderr.take() {
            std::io::Read::read_to_string(&mut e, &mut said).unwrap();
        }
        (self.child().wait().unwrap(), said)
    }

    pub(crate) fn child(&mut self) -> &mut std::process::Child {
        self.child.as_mut().unwrap()
    }
}

impl Drop for Guard<'_> {
    fn drop(&mut self) {
        if let Some(c) = self.child.as_mut() {
            if c.try_wait().ok().flatten().is_none() {
                let _ = c.kill();
                let _ = c.wait();
            }
        }
        let left = std::fs::read_dir(self.lab.state_dir())
            .map(|d| d.count())
            .unwrap_or(0);
        if left > 0 {
            self.lab.try_cleanup();
        }
    }
}

pub(crate) fn daemons() -> std::sync::MutexGuard<'static, ()> {
    DAEMONS.lock().unwrap_or_else(|e| e.into_inner())
}

const WORKLOAD: &str = "[[workload]]\nname = \"w\"\nkind = \"io\"\nrw = \"write\"\nbs = \"64k\"\nsize = \"8M\"\n\n\
                        [[workload]]\nname = \"r\"\nkind = \"io\"\nrw = \"randread\"\nsize = \"8M\"\nruntime = \"200ms\"\n";

/// An experiment of `targets` (TOML) with a short io workload, remounting
/// between runs, images and bricks under the lab directory.
fn experiment(lab: &Lab, targets: &str, repetitions: u32) -> std::path::PathBuf {
    experiment_with(lab, targets, repetitions, "between-runs")
}

fn experiment_with(
    lab: &Lab,
    targets: &str,
    repetitions: u32,
    remount: &str,
) -> std::path::PathBuf {
    let text = format!(
        "name = \"provision\"\n[plan]\nrepetitions = {repetitions}\nremount = \"{remount}\"\n\n{}\n{WORKLOAD}",
        targets.replace("@DIR@", &lab.path().display().to_string())
    );
    lab.file("exp.toml", &text)
}

fn target_facts(export: &Value, name: &str) -> Value {
    export["targets"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == name)
        .unwrap_or_else(|| panic!("no target {name}"))["facts"]
        .clone()
}

pub(crate) fn mounted(path: &str) -> bool {
    let info = std::fs::read_to_string("/proc/self/mountinfo").unwrap();
    info.lines().any(|l| l.split(' ').nth(4) == Some(path))
}

pub(crate) fn loop_backing(image: &str) -> Vec<String> {
    let mut out = Vec::new();
    for e in std::fs::read_dir("/sys/block").unwrap().flatten() {
        if let Ok(b) = std::fs::read_to_string(e.path().join("loop/backing_file")) {
            if b.trim().trim_end_matches(" (deleted)") == image {
                out.push(e.file_name().to_string_lossy().into_owned());
            }
        }
    }
    out
}

/// Whether loop device `name` (as [`loop_backing`] lists it) is still
/// attached to `image`, or to a file no longer reachable ("/" in sysfs:
/// the filesystem under it went away, as a FUSE export whose daemon ended).
pub(crate) fn loop_still_on(name: &str, image: &str) -> bool {
    std::fs::read_to_string(format!("/sys/block/{name}/loop/backing_file")).is_ok_and(|b| {
        let b = b.trim().trim_end_matches(" (deleted)");
        b == image || b == "/"
    })
}

fn daemon_alive(pid: u64) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .map(|s| !s.rsplit_once(')').unwrap().1.trim_start().starts_with('Z'))
        .unwrap_or(false)
}

pub(crate) fn succeeds(program: &str, args: &[&str]) -> bool {
    Command::new(program)
        .args(args)
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false)
}

/// Asserts that nothing a target recorded in its facts is left.
pub(crate) fn assert_gone(lab: &Lab, facts: &Value) {
    if let Some(m) = facts["mount_point"].as_str() {
        assert!(!mounted(m), "{m} is still mounted");
        assert!(!Path::new(m).exists(), "{m} still exists");
    }
    if let Some(image) = facts["image"].as_str().or(facts["vdev"].as_str()) {
        assert!(!Path::new(image).exists(), "{image} still exists");
        assert!(
            loop_backing(image).is_empty(),
            "loop device left on {image}"
        );
    }
    if let Some(pool) = facts["pool"].as_str() {
        assert!(
            !succeeds("zpool", &["list", "-H", pool]),
            "pool {pool} left"
        );
    }
    if let Some(vol) = facts["volume"].as_str() {
        assert!(
            !succeeds("gluster", &["--mode=script", "volume", "info", vol]),
            "volume {vol} left"
        );
    }
    for b in facts["bricks"].as_array().into_iter().flatten() {
        assert!(!Path::new(b.as_str().unwrap()).exists(), "brick {b} left");
    }
    if let Some(pid) = facts["daemon_started_pid"].as_u64() {
        assert!(!daemon_alive(pid), "daemon pid {pid} still runs");
    }
    let journals: Vec<_> = std::fs::read_dir(lab.state_dir())
        .map(|d| d.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    assert!(journals.is_empty(), "journals left: {journals:?}");
}

/// Runs the experiment, checks every run succeeded after a remount, and
/// that nothing is left; returns the export.
fn provision_run_teardown(lab: &Lab, targets: &str) -> Value {
    let file = experiment(lab, targets, 2);
    let _guard = Guard::new(lab);
    lab.ok(&["run", "--quiet", file.to_str().unwrap()]);
    let export = lab.export_json();
    for r in export["runs"].as_array().unwrap() {
        assert_eq!(r["status"], "ok", "{r}");
        assert_eq!(r["remounted"], true, "{r}");
    }
    for t in export["targets"].as_array().unwrap() {
        assert_gone(lab, &t["facts"]);
    }
    export
}

#[test]
#[ignore = "needs root"]
fn ext4_with_noatime_and_data_writeback() {
    require_root!();
    require_program!("mkfs.ext4");
    require_program!("losetup");
    let lab = Lab::new();
    let export = provision_run_teardown(
        &lab,
        "[[target]]\nname = \"ext4\"\nkind = \"loop\"\nfs = \"ext4\"\nsize = \"300M\"\ndir = \"@DIR@\"\nmount_options = [\"noatime\", \"data=writeback\"]\n",
    );
    let f = target_facts(&export, "ext4");
    assert_eq!(f["fs_type"], "ext4");
    assert!(
        f["mount_options"].as_str().unwrap().contains("noatime"),
        "{f}"
    );
    assert!(
        f["super_options"]
            .as_str()
            .unwrap()
            .contains("data=writeback"),
        "{f}"
    );
    assert!(
        f["loop_device"].as_str().unwrap().starts_with("/dev/loop"),
        "{f}"
    );
    assert!(
        f["mkfs_version"].as_str().unwrap().contains("mke2fs"),
        "{f}"
    );
}

#[test]
#[ignore = "needs root"]
fn xfs_and_btrfs() {
    require_root!();
    require_program!("mkfs.xfs");
    require_program!("mkfs.btrfs");
    let lab = Lab::new();
    let export = provision_run_teardown(
        &lab,
        "[[target]]\nname = \"xfs\"\nkind = \"loop\"\nfs = \"xfs\"\nsize = \"300M\"\ndir = \"@DIR@\"\n\n\
         [[target]]\nname = \"btrfs\"\nkind = \"loop\"\nfs = \"btrfs\"\nsize = \"200M\"\ndir = \"@DIR@\"\n",
    );
    assert_eq!(target_facts(&export, "xfs")["fs_type"], "xfs");
    assert_eq!(target_facts(&export, "btrfs")["fs_type"], "btrfs");
}

#[test]
#[ignore = "needs root"]
fn thin_and_preallocated_images() {
    require_root!();
    require_program!("mkfs.ext4");
    require_program!("losetup");
    let lab = Lab::new();
    let export = provision_run_teardown(
        &lab,
        "[[target]]\nname = \"thin\"\nkind = \"loop\"\nsize = \"300M\"\ndir = \"@DIR@\"\nallocation = \"thin\"\n\n\
         [[target]]\nname = \"pre\"\nkind = \"loop\"\nsize = \"300M\"\ndir = \"@DIR@\"\nallocation = \"preallocated\"\n",
    );
    let size = 300u64 << 20;
    let thin = target_facts(&export, "thin")["image_allocated_bytes"]
        .as_u64()
        .unwrap();
    let pre = target_facts(&export, "pre")["image_allocated_bytes"]
        .as_u64()
        .unwrap();
    assert!(thin < size / 4, "thin image has {thin} bytes allocated");
    assert!(
        pre >= size,
        "preallocated image has only {pre} bytes allocated"
    );
}

#[test]
#[ignore = "needs root"]
fn zfs_dataset_with_recordsize_8k_and_compression() {
    require_root!();
    require_program!("zpool");
    require_program!("zfs-fuse");
    let _d = daemons();
    let lab = Lab::new();
    let export = provision_run_teardown(
        &lab,
        "[[target]]\nname = \"zfs\"\nkind = \"zfs\"\nsize = \"300M\"\ndir = \"@DIR@\"\nproperties = { recordsize = \"8k\", compression = \"on\" }\n",
    );
    let f = target_facts(&export, "zfs");
    let props = &f["zfs_properties"];
    assert_eq!(props["recordsize"]["value"], "8K", "{f}");
    assert_eq!(props["recordsize"]["source"], "local", "{f}");
    assert_eq!(props["compression"]["value"], "on", "{f}");
    assert!(f["fs_type"].as_str().unwrap().contains("zfs"), "{f}");
}

pub(crate) fn wait_for(what: &str, secs: u64, mut done: impl FnMut() -> bool) {
    let t0 = Instant::now();
    while !done() {
        assert!(
            t0.elapsed() < Duration::from_secs(secs),
            "timed out waiting for {what}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
#[ignore = "needs root"]
fn gluster_replica_2_with_write_behind_off() {
    require_root!();
    require_program!("glusterd");
    require_program!("gluster");
    require_program!("glusterfs");
    let _d = daemons();
    let lab = Lab::new();
    let file = experiment(
        &lab,
        "[[target]]\nname = \"gl\"\nkind = \"gluster\"\nbricks = 2\nreplica = 2\ndir = \"@DIR@\"\noptions = { \"performance.write-behind\" = \"off\" }\n",
        3,
    );
    let mut guard = Guard::spawn(&lab, &file);
    let child = guard.child();
    let base = lab.path().join(format!("storlab-{}-gl", child.id()));
    // The working directory's marker is written through the FUSE mount.
    let marker = |b: &str| base.join(b).join("storlab-work-gl/.storlab-workdir");
    wait_for("the marker in both bricks", 120, || {
        marker("brick0").exists() && marker("brick1").exists()
    });
    let vol = format!("storlab-{}-gl", child.id());
    let got = Command::new("gluster")
        .args([
            "--mode=script",
            "volume",
            "get",
            &vol,
            "performance.write-behind",
        ])
        .output()
        .unwrap();
    let got = String::from_utf8_lossy(&got.stdout);
    assert!(
        got.lines()
            .any(|l| l.starts_with("performance.write-behind") && l.contains("off")),
        "{got}"
    );
    assert!(child.wait().unwrap().success());
    let export = lab.export_json();
    let f = target_facts(&export, "gl");
    assert_eq!(f["volume_info"]["Type"], "Replicate", "{f}");
    assert_eq!(
        f["effective_options"]["performance.write-behind"], "off",
        "{f}"
    );
    for r in export["runs"].as_array().unwrap() {
        assert_eq!(r["status"], "ok", "{r}");
    }
    assert_gone(&lab, &f);
}

#[test]
#[ignore = "needs root"]
fn a_killed_campaign_is_undone_by_storlab_cleanup() {
    require_root!();
    require_program!("glusterd");
    require_program!("gluster");
    require_program!("glusterfs");
    let _d = daemons();
    let lab = Lab::new();
    let file = experiment(
        &lab,
        "[[target]]\nname = \"ext4\"\nkind = \"loop\"\nsize = \"300M\"\ndir = \"@DIR@\"\n\n\
         [[target]]\nname = \"zfs\"\nkind = \"zfs\"\nsize = \"300M\"\ndir = \"@DIR@\"\n\n\
         [[target]]\nname = \"gl\"\nkind = \"gluster\"\nbricks = 2\nreplica = 2\ndir = \"@DIR@\"\n",
        50,
    );
    let mut guard = Guard::spawn(&lab, &file);
    let child = guard.child();
    let pid = child.id();
    let gl_mnt = lab.path().join(format!("storlab-{pid}-gl/mnt"));
    wait_for("the gluster mount", 120, || {
        gl_mnt.join("storlab-work-gl").exists()
    });
    child.kill().unwrap(); // SIGKILL: no teardown
    child.wait().unwrap();
    let ext4_img = lab.path().join(format!("storlab-{pid}-ext4/ext4.img"));
    assert!(
        !loop_backing(ext4_img.to_str().unwrap()).is_empty(),
        "the kill left a loop device"
    );
    let pool = format!("storlab_{pid}_zfs");
    assert!(
        succeeds("zpool", &["list", "-H", &pool]),
        "the kill left the pool"
    );
    let daemon_pids: Vec<u64> = std::fs::read_dir(lab.state_dir())
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().ends_with(".pid"))
        .filter_map(|e| std::fs::read_to_string(e.path()).ok()?.trim().parse().ok())
        .collect();

    let out = lab.ok(&["cleanup"]);
    assert!(out.contains("undone"), "{out}");
    for t in ["ext4", "zfs", "gl"] {
        let base = lab.path().join(format!("storlab-{pid}-{t}"));
        assert!(!base.exists(), "{} left", base.display());
        assert!(!mounted(base.join("mnt").to_str().unwrap()));
    }
    assert!(loop_backing(ext4_img.to_str().unwrap()).is_empty());
    assert!(!succeeds("zpool", &["list", "-H", &pool]), "pool left");
    let vol = format!("storlab-{pid}-gl");
    assert!(
        !succeeds("gluster", &["--mode=script", "volume", "info", &vol]),
        "volume left"
    );
    for p in daemon_pids {
        assert!(!daemon_alive(p), "daemon {p} left");
    }
    let journals = std::fs::read_dir(lab.state_dir()).unwrap().count();
    assert_eq!(journals, 0, "cleanup removes the journal");
    assert!(lab.ok(&["cleanup"]).contains("nothing to clean up"));
}

/// A campaign killed with the zfs-fuse daemon it started (its process
/// group killed, a host restart): the pool lives on in zfs-fuse's cache
/// and its dataset's mount is disconnected. Cleanup starts that daemon
/// again to destroy the pool, then stops it. Before, every pool, image and
/// directory was left ("cannot reach ZFS").
#[test]
#[ignore = "needs root"]
fn a_killed_campaign_whose_zfs_fuse_died_too_is_undone_by_storlab_cleanup() {
    require_root!();
    require_program!("zfs-fuse");
    let _d = daemons();
    if succeeds("pgrep", &["-x", "zfs-fuse"]) {
        eprintln!("SKIPPED: zfs-fuse already runs (the host's, or another test's): this test must see storlab start it");
        return;
    }
    let lab = Lab::new();
    let file = experiment(
        &lab,
        "[[target]]\nname = \"zfs\"\nkind = \"zfs\"\nsize = \"200M\"\ndir = \"@DIR@\"\n",
        50,
    );
    let mut guard = Guard::spawn(&lab, &file);
    let child = guard.child();
    let pid = child.id();
    let base = lab.path().join(format!("storlab-{pid}-zfs"));
    wait_for("the zfs dataset", 120, || {
        base.join("mnt/storlab-work-zfs").exists()
    });
    let pidfile = lab.state_dir().join(format!("zfs-fuse-{pid}.pid"));
    let daemon: u64 = std::fs::read_to_string(&pidfile)
        .expect("storlab started zfs-fuse")
        .trim()
        .parse()
        .unwrap();
    child.kill().unwrap(); // SIGKILL: no teardown
    child.wait().unwrap();
    // The daemon storlab started, by its recorded pid, as a host restart would.
    unsafe { libc::kill(daemon as i32, libc::SIGKILL) };
    wait_for("zfs-fuse to die", 20, || !daemon_alive(daemon));
    let pool = format!("storlab_{pid}_zfs");

    let out = lab.run(&["cleanup"]);
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "{text}");
    assert!(text.contains("restarted: zfs-fuse"), "{text}");
    assert!(text.contains(&format!("undone: ZFS pool {pool}")), "{text}");
    assert!(!base.exists(), "{} left: {text}", base.display());
    assert!(!mounted(base.join("mnt").to_str().unwrap()), "{text}");
    // Not a zombie its reaper has yet to collect.
    assert!(
        !succeeds("pgrep", &["-x", "-r", "R,S,D,T", "zfs-fuse"]),
        "zfs-fuse left running: {text}"
    );
    let journals = std::fs::read_dir(lab.state_dir()).unwrap().count();
    assert_eq!(
        journals, 0,
        "cleanup removes the journal and the pid file: {text}"
    );
}

fn refused(lab: &Lab, targets: &str) -> (i32, String) {
    let file = experiment_with(lab, targets, 1, "never");
    let _guard = Guard::new(lab);
    let out = lab.run(&["run", "--quiet", file.to_str().unwrap()]);
    assert!(!out.status.success());
    let journals = std::fs::read_dir(lab.state_dir())
        .map(|d| d.count())
        .unwrap_or(0);
    assert_eq!(journals, 0, "nothing may be journaled for a refused spec");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn an_existing_device_without_allow_destroy_is_refused() {
    let lab = Lab::new();
    let (code, err) = refused(
        &lab,
        "[[target]]\nname = \"z\"\nkind = \"zfs\"\ndevice = \"/dev/vda\"\n",
    );
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("allow_destroy = true") && err.contains("exp.toml:"),
        "{err}"
    );
}

#[test]
#[ignore = "needs root"]
fn a_mounted_device_is_refused_even_with_allow_destroy() {
    require_root!();
    let root_dev = crate::util::root_device();
    let lab = Lab::new();
    let (code, err) = refused(
        &lab,
        &format!("[[target]]\nname = \"z\"\nkind = \"zfs\"\ndevice = \"{root_dev}\"\nallow_destroy = true\n"),
    );
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("is mounted on /"), "{err}");
}

#[test]
fn slash_and_files_are_refused_as_directories() {
    let lab = Lab::new();
    let (code, err) = refused(
        &lab,
        "[[target]]\nname = \"d\"\nkind = \"dir\"\npath = \"/\"\n",
    );
    assert_eq!(code, 2);
    assert!(err.contains("refusing `/`"), "{err}");
    let (code, err) = refused(
        &lab,
        "[[target]]\nname = \"l\"\nkind = \"loop\"\ndir = \"/.\"\n",
    );
    assert_eq!(code, 2);
    assert!(err.contains("refusing `/`"), "{err}");
    let f = lab.file("plain", "x");
    let (_, err) = refused(
        &lab,
        &format!(
            "[[target]]\nname = \"d\"\nkind = \"dir\"\npath = \"{}\"\n",
            f.display()
        ),
    );
    assert!(err.contains("is not a directory"), "{err}");
}

#[test]
#[ignore = "needs root"]
fn an_option_the_kernel_drops_is_an_error_and_everything_is_undone() {
    require_root!();
    let lab = Lab::new();
    // Kernel 5.x+ ext4 ignores `nobh` ("Ignoring removed nobh option").
    let file = experiment(
        &lab,
        "[[target]]\nname = \"e\"\nkind = \"loop\"\nsize = \"64M\"\ndir = \"@DIR@\"\nmount_options = [\"noatime\", \"nobh\"]\n",
        1,
    );
    let _guard = Guard::new(&lab);
    let out = lab.run(&["run", "--quiet", file.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("dropped mount option(s) nobh"), "{err}");
    let left: Vec<_> = std::fs::read_dir(lab.path())
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with("storlab-"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
    assert_eq!(
        std::fs::read_dir(lab.state_dir())
            .map(|d| d.count())
            .unwrap_or(0),
        0
    );
}

#[test]
#[ignore = "needs root"]
fn nfs_without_a_kernel_client_is_refused_clearly() {
    require_root!();
    let fs = std::fs::read_to_string("/proc/filesystems").unwrap();
    if fs
        .lines()
        .any(|l| l.ends_with("nfs") || l.ends_with("nfs4"))
    {
        eprintln!("SKIPPED: this kernel has an NFS client");
        return;
    }
    let lab = Lab::new();
    let (code, err) = refused(
        &lab,
        "[[target]]\nname = \"n\"\nkind = \"nfs\"\nserver = \"127.0.0.1\"\nexport = \"/srv/nfs\"\nvers = \"4.2\"\n",
    );
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("this kernel has no NFS client"), "{err}");
}

/// Starts a long loop-target campaign and waits until its first run began.
/// It never remounts, so that "still mounted" is not caught between an
/// unmount and a mount.
fn long_loop_campaign(lab: &Lab) -> (Guard<'_>, std::path::PathBuf) {
    let file = experiment_with(
        lab,
        "[[target]]\nname = \"e\"\nkind = \"loop\"\nsize = \"64M\"\ndir = \"@DIR@\"\n",
        100,
        "never",
    );
    let mut guard = Guard::spawn(lab, &file);
    let base = lab.path().join(format!("storlab-{}-e", guard.child().id()));
    let work = base.join("mnt/storlab-work-e");
    wait_for("the first run", 60, || work.exists());
    (guard, base)
}

/// The names of the files in the lab's state directory.
fn state_files(lab: &Lab) -> Vec<String> {
    std::fs::read_dir(lab.state_dir())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect()
}

fn interrupt(child: &std::process::Child) {
    // SAFETY: signalling our own child.
    unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGINT) };
}

#[test]
#[ignore = "needs root"]
fn sigint_tears_everything_down() {
    require_root!();
    require_program!("mkfs.ext4");
    require_program!("losetup");
    let lab = Lab::new();
    let (mut guard, base) = long_loop_campaign(&lab);
    let out = lab.ok(&["cleanup"]);
    assert!(out.contains("still running"), "{out}");
    assert!(
        mounted(base.join("mnt").to_str().unwrap()),
        "cleanup left a running campaign alone"
    );
    let child = guard.child();
    interrupt(child);
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130));
    assert!(!base.exists(), "{} left", base.display());
    assert_eq!(
        std::fs::read_dir(lab.state_dir()).unwrap().count(),
        0,
        "journal left"
    );
}

#[test]
#[ignore = "needs root"]
fn a_second_sigint_stops_at_once_and_keeps_the_journal_for_cleanup() {
    require_root!();
    require_program!("mkfs.ext4");
    require_program!("losetup");
    // An open directory keeps the mount busy, so teardown retries umount
    // for about five seconds: the second signal lands in the middle of it.
    // On a machine so loaded that this test's thread sleeps through those
    // seconds, teardown gives up first (status 1, journal kept) and the
    // second signal proved nothing: that attempt is tried again.
    let mut attempts = 0;
    loop {
        attempts += 1;
        let lab = Lab::new();
        let (mut guard, base) = long_loop_campaign(&lab);
        let child = guard.child();
        let busy = std::fs::File::open(base.join("mnt")).unwrap();
        interrupt(child);
        std::thread::sleep(Duration::from_millis(1500));
        assert!(
            child.try_wait().unwrap().is_none(),
            "teardown is still retrying"
        );
        interrupt(child);
        let code = child.wait().unwrap().code();
        if code == Some(1) && attempts < 3 {
            drop(busy);
            lab.ok(&["cleanup"]);
            continue;
        }
        assert_eq!(code, Some(130), "after {attempts} attempt(s)");
        // The campaign's journal, and the tracefs one if the signal found
        // bpftrace attached (it stops at once: nothing is let go).
        let left = state_files(&lab);
        let campaign: Vec<_> = left.iter().filter(|n| n.starts_with("campaign-")).collect();
        assert_eq!(campaign.len(), 1, "the journal is kept: {left:?}");
        assert!(
            left.iter()
                .all(|n| n.starts_with("campaign-") || n.starts_with("tracefs-")),
            "{left:?}"
        );
        assert!(mounted(base.join("mnt").to_str().unwrap()), "still mounted");
        drop(busy);
        let out = lab.cleanup_until_no_tracefs_is_kept();
        assert!(out.contains("undone: mount on"), "{out}");
        assert!(!base.exists(), "{} left after cleanup", base.display());
        assert!(!mounted(base.join("mnt").to_str().unwrap()));
        assert_eq!(state_files(&lab), Vec::<String>::new(), "{out}");
        return;
    }
}

/// Stops a glusterd a test's campaign started and, by design, left running
/// (found through the campaign's facts), even when the test fails.
struct StopLeftDaemon<'a>(&'a Lab);

impl Drop for StopLeftDaemon<'_> {
    fn drop(&mut self) {
        // Never panics: a panic here, while a failed test unwinds, would
        // abort the whole test binary.
        let Some(export) = self.0.try_export_json() else {
            return;
        };
        let pid = export["targets"][0]["facts"]["daemon_started_pid"].as_u64();
        if let Some(pid) = pid.filter(|p| daemon_alive(*p)) {
            let comm = std::fs::read_to_string(format!("/proc/{pid}/comm")).unwrap_or_default();
            if comm.trim() == "glusterd" {
                // SAFETY: kill has no memory preconditions; the pid is the
                // glusterd this test's campaign recorded starting.
                unsafe { libc::kill(pid as libc::pid_t, libc::SIGTERM) };
            }
        }
    }
}

/// Campaign A starts glusterd; campaign B finds it running and builds its
/// volume on it; A ends first. A must not stop the daemon under B's volume:
/// B's runs all succeed, and the daemon is left running, said so.
#[test]
#[ignore = "needs root"]
fn a_daemon_another_campaign_still_uses_is_left_running() {
    require_root!();
    require_program!("glusterd");
    require_program!("gluster");
    require_program!("glusterfs");
    let _d = daemons();
    if succeeds("gluster", &["--mode=script", "volume", "list"]) {
        eprintln!(
            "SKIPPED: glusterd already runs here, so no campaign of this test would start it"
        );
        return;
    }
    let gl = "[[target]]\nname = \"gl\"\nkind = \"gluster\"\nbricks = 1\ndir = \"@DIR@\"\n";
    let (lab_a, lab_b) = (Lab::new(), Lab::new());
    let read_for = |lab: &Lab, secs: u32| {
        let text = format!("{gl}[[workload]]\nname = \"r\"\nkind = \"io\"\nrw = \"randread\"\nsize = \"4M\"\nruntime = \"{secs}s\"\n");
        lab.file(
            "exp.toml",
            &text.replace("@DIR@", &lab.path().display().to_string()),
        )
    };
    // A outlasts B's start-up, B outlasts A.
    let (file_a, file_b) = (read_for(&lab_a, 4), read_for(&lab_b, 10));
    let mut a = Guard::spawn(&lab_a, &file_a);
    let _stop = StopLeftDaemon(&lab_a);
    wait_for("campaign A's glusterd", 120, || {
        succeeds("gluster", &["--mode=script", "volume", "list"])
    });
    let mut b = Guard::spawn(&lab_b, &file_b);
    let b_pid = b.child().id();
    let b_mount = lab_b.path().join(format!("storlab-{b_pid}-gl/mnt"));
    wait_for("campaign B's mount", 120, || {
        let ended = b.child().try_wait().unwrap();
        assert!(ended.is_none(), "campaign B ended early: {ended:?}");
        mounted(b_mount.to_str().unwrap())
    });
    let out_a = a.child.take().unwrap().wait_with_output().unwrap();
    assert!(out_a.status.success(), "campaign A failed");
    assert!(b.child().try_wait().unwrap().is_none(), "B ended before A");
    let pid = target_facts(&lab_a.export_json(), "gl")["daemon_started_pid"]
        .as_u64()
        .expect("campaign A started glusterd");
    assert!(daemon_alive(pid), "A stopped glusterd under B's volume");
    assert!(b.child().wait().unwrap().success(), "campaign B failed");
    let export_b = lab_b.export_json();
    for r in export_b["runs"].as_array().unwrap() {
        assert_eq!(r["status"], "ok", "{r}");
    }
    let facts_b = target_facts(&export_b, "gl");
    assert!(facts_b["daemon_started_pid"].is_null(), "{facts_b}");
    assert_gone(&lab_b, &facts_b);
}

/// A brick of a replica-2 volume killed during a run (by the pid gluster
/// reports for the volume this test's campaign created): the run fails,
/// naming the brick's glusterfsd and the target degraded.
#[test]
#[ignore = "needs root"]
fn a_gluster_brick_killed_during_a_run_marks_the_run_degraded() {
    require_root!();
    require_program!("glusterd");
    require_program!("gluster");
    require_program!("glusterfs");
    let _d = daemons();
    let lab = Lab::new();
    let text = format!(
        "name = \"degrade\"\n[plan]\nrepetitions = 1\n\n\
         [[target]]\nname = \"gl\"\nkind = \"gluster\"\nbricks = 2\nreplica = 2\ndir = \"{}\"\n\n\
         [[workload]]\nname = \"w\"\nkind = \"io\"\nrw = \"write\"\nbs = \"64k\"\nsize = \"4M\"\nruntime = \"8s\"\nrate = \"1M\"\n",
        lab.path().display()
    );
    let file = lab.file("exp.toml", &text);
    let mut guard = Guard::spawn(&lab, &file);
    let pid = guard.child().id();
    let vol = format!("storlab-{pid}-gl");
    let work = lab
        .path()
        .join(format!("storlab-{pid}-gl/mnt/storlab-work-gl/w"));
    wait_for("the run's directory on the volume", 180, || work.exists());
    std::thread::sleep(Duration::from_secs(2));
    let status = Command::new("gluster")
        .args(["--mode=script", "volume", "status", &vol, "--xml"])
        .output()
        .unwrap();
    let health = storlab::targets::health::gluster_status(&String::from_utf8_lossy(&status.stdout));
    let (brick, brick_pid) = health
        .daemons
        .iter()
        .find(|(what, _)| what.starts_with("brick "))
        .cloned()
        .expect("a brick of the test's volume with its pid");
    assert!(brick.contains(&format!("storlab-{pid}-gl")), "{brick}");
    // SAFETY: kill has no memory-safety preconditions; the pid is the
    // glusterfsd of a brick of the volume this test's campaign created.
    assert_eq!(unsafe { libc::kill(brick_pid as i32, libc::SIGKILL) }, 0);
    // The brick's glusterfsd is watched (#40 item 4): its death fails the
    // run in words and marks the target degraded, so the campaign, whose
    // only run failed, exits 3.
    let st = guard.child().wait().unwrap();
    assert_eq!(st.code(), Some(3), "{st}");
    let export = lab.export_json();
    let run = &export["runs"][0];
    assert_eq!(run["status"], "failed", "{run}");
    let error = run["error"].as_str().unwrap_or("");
    assert!(
        error.contains("glusterfsd for ")
            && error.contains("degraded")
            && error.contains(&format!("(pid {brick_pid})")),
        "{run}"
    );
}
