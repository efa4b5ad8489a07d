//! The adversarial audit's findings (issue #16), each as the case that
//! broke: never harm the host, never mix two campaigns, never store a
//! wrong answer. One test (or a few) per numbered finding, named after it.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use crate::util::{runs_in_store, storlab_mounts, Lab, TestMount};

fn wait_for(what: &str, secs: u64, mut done: impl FnMut() -> bool) {
    let t0 = Instant::now();
    while !done() {
        assert!(
            t0.elapsed() < Duration::from_secs(secs),
            "timed out waiting for {what}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn signal(child: &Child, sig: libc::c_int) {
    // SAFETY: signalling our own child.
    unsafe { libc::kill(child.id() as libc::pid_t, sig) };
}

fn text(out: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// A campaign running in the background, killed (and its leftovers
/// cleaned up) if the test fails before it ends.
struct Running<'a> {
    lab: &'a Lab,
    child: Option<Child>,
}

impl<'a> Running<'a> {
    fn start(lab: &'a Lab, args: &[&str]) -> Running<'a> {
        let child = lab
            .cmd()
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        Running {
            lab,
            child: Some(child),
        }
    }

    fn child(&self) -> &Child {
        self.child.as_ref().unwrap()
    }

    fn wait(mut self) -> Output {
        self.child.take().unwrap().wait_with_output().unwrap()
    }

    /// Waits at most `secs` for the campaign to end.
    fn wait_at_most(mut self, secs: u64) -> Option<Output> {
        let t0 = Instant::now();
        while t0.elapsed() < Duration::from_secs(secs) {
            if self.child.as_mut().unwrap().try_wait().unwrap().is_some() {
                return Some(self.wait());
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        None
    }
}

impl Drop for Running<'_> {
    fn drop(&mut self) {
        if let Some(c) = self.child.as_mut() {
            let _ = c.kill();
            let _ = c.wait();
            self.lab.try_cleanup();
        }
    }
}

fn run_file(lab: &Lab, file: &Path) -> Output {
    lab.run(&["run", "--quiet", file.to_str().unwrap()])
}

fn exp_dir_target(lab: &Lab, name: &str, body: &str) -> PathBuf {
    let data = lab.path().join("data");
    std::fs::create_dir_all(&data).unwrap();
    lab.file(
        &format!("{name}.toml"),
        &format!(
            "name = \"{name}\"\n[[target]]\nname = \"d\"\nkind = \"dir\"\npath = \"{}\"\n{body}",
            data.display()
        ),
    )
}

fn statuses(lab: &Lab) -> Vec<String> {
    crate::util::runs(&lab.export_json())
        .iter()
        .map(|r| r["status"].as_str().unwrap().to_string())
        .collect()
}

// ---- 1. mkfs on a device storlab did not create ----

/// A loop device holding an ext4 filesystem storlab did not create,
/// detached and removed on drop.
struct Victim {
    image: PathBuf,
    dev: String,
}

impl Victim {
    fn new(dir: &Path) -> Victim {
        let image = dir.join("victim.img");
        std::fs::File::create(&image)
            .unwrap()
            .set_len(256 << 20) // large enough to be taken into a btrfs
            .unwrap();
        assert!(Command::new("mkfs.ext4")
            .args(["-q", "-F"])
            .arg(&image)
            .status()
            .unwrap()
            .success());
        let out = Command::new("losetup")
            .args(["--find", "--show"])
            .arg(&image)
            .output()
            .unwrap();
        let dev = String::from_utf8_lossy(&out.stdout).trim().to_string();
        assert!(dev.starts_with("/dev/loop"), "{dev}");
        Victim { image, dev }
    }

    fn fs_type(&self) -> String {
        let out = Command::new("blkid")
            .args(["-p", "-o", "value", "-s", "TYPE", &self.dev])
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    }
}

impl Drop for Victim {
    fn drop(&mut self) {
        let _ = Command::new("losetup").args(["-d", &self.dev]).status();
        let _ = std::fs::remove_file(&self.image);
    }
}

#[test]
#[ignore = "needs root"]
fn item1_mkfs_options_naming_another_device_are_refused_and_it_keeps_its_data() {
    require_root!();
    let lab = Lab::new();
    let victim = Victim::new(lab.path());
    assert_eq!(victim.fs_type(), "ext4");
    for (fs, key, value) in [
        ("btrfs", "mkfs_options", format!("[\"{}\"]", victim.dev)),
        (
            "ext4",
            "mkfs_options",
            format!("[\"-J\", \"device={}\"]", victim.dev),
        ),
        (
            "xfs",
            "mount_options",
            format!("[\"logdev={}\"]", victim.dev),
        ),
    ] {
        let file = lab.file(
            "mkfs.toml",
            &format!(
                "[[target]]\nname = \"b\"\nkind = \"loop\"\nfs = \"{fs}\"\nsize = \"320M\"\ndir = \"{}\"\n{key} = {value}\n\
                 [[workload]]\nname = \"w\"\nkind = \"mock\"\n",
                lab.path().display()
            ),
        );
        let out = run_file(&lab, &file);
        let (_, err) = text(&out);
        assert_eq!(out.status.code(), Some(1), "{key} = {value}: {err}");
        assert!(
            err.contains(&format!("`{key}`")) && err.contains(&victim.dev),
            "{err}"
        );
        assert_eq!(
            victim.fs_type(),
            "ext4",
            "{key} = {value} reached the device"
        );
    }
    assert_eq!(runs_in_store(&lab.db()), 0);
}

// ---- 2. two campaigns destroy each other's working directory ----

#[test]
fn item2_a_working_directory_another_running_campaign_owns_is_never_taken() {
    let lab = Lab::new();
    let file = exp_dir_target(
        &lab,
        "owner",
        "[plan]\nrepetitions = 6\n[[workload]]\nname = \"m\"\nkind = \"mock\"\nduration = \"500ms\"\n",
    );
    let marker = lab.path().join("data/storlab-work-d/.storlab-workdir");
    let first = Running::start(&lab, &["run", "--quiet", file.to_str().unwrap()]);
    wait_for("the first campaign's working directory", 60, || {
        marker.exists()
    });
    // Another store, the same directory and target name.
    let other_db = lab.path().join("other.db");
    let out = lab
        .cmd()
        .args(["--db", other_db.to_str().unwrap(), "run", "--quiet"])
        .arg(&file)
        .output()
        .unwrap();
    let (_, err) = text(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("still running"), "{err}");
    assert!(
        marker.exists(),
        "the first campaign's directory was removed"
    );
    let out = first.wait();
    assert!(out.status.success(), "{:?}", text(&out));
    assert_eq!(statuses(&lab), vec!["ok"; 6]);
}

#[test]
fn item2_target_names_that_become_one_name_are_refused() {
    let lab = Lab::new();
    for (a, b) in [("x-y", "x.y"), ("ram 1", "ram_1")] {
        let file = lab.file(
            "names.toml",
            &format!(
                "[[target]]\nname = \"{a}\"\nkind = \"tmpfs\"\nsize = \"16M\"\n\
                 [[target]]\nname = \"{b}\"\nkind = \"tmpfs\"\nsize = \"64M\"\n\
                 [[workload]]\nname = \"w\"\nkind = \"mock\"\n"
            ),
        );
        let out = lab.run(&["check", file.to_str().unwrap()]);
        let (_, err) = text(&out);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert!(err.contains(&format!("`{a}` and `{b}`")), "{err}");
        assert!(err.contains("names.toml:"), "located: {err}");
    }
}

// ---- 3. fio options that reach outside the working directory ----

#[test]
fn item3_fio_options_that_reach_outside_are_refused_before_anything_runs() {
    require_program!("fio");
    let lab = Lab::new();
    let victim = lab.path().join("pwned");
    let jobs = lab.path().join("jobs");
    std::fs::create_dir(&jobs).unwrap();
    let job = |name: &str, body: &str| {
        std::fs::write(jobs.join(name), body).unwrap();
        format!("job = \"jobs/{name}\"")
    };
    let cases = [
        (
            job(
                "pre.fio",
                &format!(
                    "[j]\nrw=read\nsize=1M\nexec_prerun=touch {}\n",
                    victim.display()
                ),
            ),
            "exec_prerun",
        ),
        (
            job(
                "post.fio",
                &format!(
                    "[j]\nrw=read\nsize=1M\nexec_postrun=touch {}\n",
                    victim.display()
                ),
            ),
            "exec_postrun",
        ),
        (
            format!(
                "options = {{ rw = \"read\", size = \"1M\", exec_prerun = \"touch {}\" }}",
                victim.display()
            ),
            "exec_prerun",
        ),
        (
            "options = { rw = \"read\", size = \"1M\", ioscheduler = \"none\" }".to_string(),
            "ioscheduler",
        ),
        (
            format!(
                "options = {{ rw = \"read\", size = \"1M\", mem = \"mmapshared:{}\" }}",
                victim.display()
            ),
            "mmapshared",
        ),
        (
            format!(
                "options = {{ rw = \"read\", size = \"1M\", iomem = \"mmap:{}\" }}",
                victim.display()
            ),
            "iomem",
        ),
        (
            job("shadow.fio", "include /etc/shadow\n[j]\nrw=read\nsize=1M\n"),
            "outside the experiment's directory",
        ),
        (
            "options = { rw = \"read\", size = \"1M\", ioengine = \"external:/tmp/x.so\" }"
                .to_string(),
            "external",
        ),
    ];
    for (workload, named) in cases {
        let file = exp_dir_target(
            &lab,
            "fio",
            &format!("[[workload]]\nname = \"f\"\nkind = \"fio\"\n{workload}\n"),
        );
        for cmd in ["check", "run"] {
            let out = lab.run(&[cmd, file.to_str().unwrap()]);
            let (_, err) = text(&out);
            assert_eq!(out.status.code(), Some(2), "{cmd} {workload}: {err}");
            assert!(err.contains(named), "{workload}: {err}");
            assert!(
                !err.contains("root:"),
                "no line of /etc/shadow is echoed: {err}"
            );
        }
        assert!(!victim.exists(), "{workload} ran");
    }
    assert_eq!(runs_in_store(&lab.db()), 0);
}

// ---- 4. a target unmounted behind storlab's back ----

#[test]
#[ignore = "needs root"]
fn item4_a_target_unmounted_behind_storlabs_back_is_not_measured() {
    require_root!();
    let lab = Lab::new();
    let count = lab.path().join("count");
    // The second run unmounts its own target (lazily, as `umount -l` does).
    let script = format!(
        "n=$(cat {c} 2>/dev/null || echo 0); echo $((n+1)) > {c}; \
         if [ $n -eq 1 ]; then umount -l \"$(findmnt -n -o TARGET -T .)\"; fi",
        c = count.display()
    );
    let file = lab.file(
        "lost.toml",
        &format!(
            "[plan]\nrepetitions = 4\n[[target]]\nname = \"lost\"\nkind = \"tmpfs\"\nsize = \"16M\"\n\
             [[workload]]\nname = \"c\"\nkind = \"command\"\ncommand = [\"sh\", \"-c\", {script:?}]\n"
        ),
    );
    let out = run_file(&lab, &file);
    assert!(out.status.success(), "{:?}", text(&out));
    let export = lab.export_json();
    let runs = crate::util::runs(&export);
    let st: Vec<&str> = runs.iter().map(|r| r["status"].as_str().unwrap()).collect();
    assert_eq!(st, ["ok", "failed", "failed", "failed"], "{runs:?}");
    for r in &runs[1..] {
        let e = r["error"].as_str().unwrap();
        assert!(
            e.contains("no longer the filesystem storlab provisioned"),
            "{e}"
        );
    }
    assert_eq!(
        std::fs::read_to_string(&count).unwrap().trim(),
        "2",
        "nothing ran on what lay underneath"
    );
    assert_eq!(storlab_mounts("lost"), 0);
}

// ---- 5. resume while running; #15: a campaign whose process is gone ----

#[test]
fn item5_resume_of_a_running_campaign_is_refused_and_a_gone_one_shows_interrupted() {
    let lab = Lab::new();
    let file = exp_dir_target(
        &lab,
        "long",
        "[plan]\nrepetitions = 4\n[[workload]]\nname = \"m\"\nkind = \"mock\"\nduration = \"700ms\"\n",
    );
    let first = Running::start(&lab, &["run", "--quiet", file.to_str().unwrap()]);
    wait_for("a first run", 60, || runs_in_store(&lab.db()) >= 1);
    assert!(lab.ok(&["list"]).contains("running"));
    let out = lab.run(&["run", "--quiet", "--resume", "1"]);
    let (_, err) = text(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("still running"), "{err}");
    signal(first.child(), libc::SIGKILL);
    first.wait();
    let listed = lab.ok(&["list"]);
    assert!(
        listed.contains("interrupted") && !listed.contains("running"),
        "{listed}"
    );
    assert!(lab.ok(&["show"]).contains("(interrupted)"));
    let out = lab.ok(&["run", "--quiet", "--resume", "1"]);
    assert!(out.contains("4 of 4 planned runs ok, 0 failed"), "{out}");
    assert_eq!(statuses(&lab), vec!["ok"; 4]);
}

// ---- 6. an interrupt during a run's preparation ----

/// A command line of a process running `needle` with an argument below `dir`.
fn runs_below(dir: &Path, needle: &str) -> bool {
    let dir = dir.to_string_lossy().into_owned();
    std::fs::read_dir("/proc").unwrap().flatten().any(|e| {
        let Ok(raw) = std::fs::read(e.path().join("cmdline")) else {
            return false;
        };
        let args: Vec<String> = raw
            .split(|b| *b == 0)
            .map(|a| String::from_utf8_lossy(a).into_owned())
            .collect();
        args.first().is_some_and(|a| a.ends_with(needle))
            && args.iter().any(|a| a.starts_with(&dir))
    })
}

#[test]
#[ignore = "needs root"]
fn item6_an_interrupt_while_preparing_is_interrupted_and_resume_runs_it_again() {
    require_root!();
    crate::pgbench_runs::require_postgres();
    let lab = crate::pgbench_runs::reachable_lab();
    let file = exp_dir_target(
        &lab,
        "prep",
        "[plan]\nrepetitions = 1\n[[workload]]\nname = \"p\"\nkind = \"pgbench\"\nscale = 30\nduration = \"1s\"\n",
    );
    let data = lab.path().join("data");
    let first = Running::start(&lab, &["run", "--quiet", file.to_str().unwrap()]);
    wait_for("pgbench -i", 120, || runs_below(&data, "pgbench"));
    signal(first.child(), libc::SIGINT);
    let out = first.wait();
    assert_eq!(out.status.code(), Some(130), "{:?}", text(&out));
    assert_eq!(statuses(&lab), vec!["interrupted"], "never a failure");
    let listed = lab.ok(&["list"]);
    let row = listed.lines().find(|l| l.contains("prep")).unwrap();
    let cells: Vec<&str> = row.split_whitespace().collect();
    assert_eq!(
        cells[cells.len() - 2],
        "0",
        "interrupted is not failed: {listed}"
    );
    let out = lab.ok(&["run", "--quiet", "--resume", "1"]);
    assert!(out.contains("1 of 1 planned runs ok, 0 failed"), "{out}");
    assert_eq!(statuses(&lab), vec!["ok"]);
}

// ---- 7. shared daemons ----

/// A process whose name is `glusterd` (a copy of sleep), killed on drop.
struct FakeDaemon(Child);

impl FakeDaemon {
    fn start(dir: &Path) -> FakeDaemon {
        let bin = dir.join("glusterd");
        std::fs::copy("/bin/sleep", &bin).unwrap();
        FakeDaemon(Command::new(&bin).arg("600").spawn().unwrap())
    }

    fn alive(&mut self) -> bool {
        self.0.try_wait().unwrap().is_none()
    }
}

impl Drop for FakeDaemon {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Runs `storlab cleanup` on the lab's journals when the test ends, so that
/// nothing a campaign kept (a daemon another campaign claimed) outlives the
/// lab's state directory unrecorded if it can be undone by then.
struct CleanupOnDrop<'a>(&'a Lab);

impl Drop for CleanupOnDrop<'_> {
    fn drop(&mut self) {
        self.0.try_cleanup();
    }
}

/// A directory of stand-ins put first on storlab's PATH.
fn fake_bin(lab: &Lab, name: &str, script: &str) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let bin = lab.path().join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let p = bin.join(name);
    std::fs::write(&p, format!("#!/bin/sh\n{script}\n")).unwrap();
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    bin
}

fn path_with(bin: &Path) -> String {
    format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    )
}

/// A journal left by a campaign that is gone, naming `resources`.
fn forged_journal(lab: &Lab, resources: &[serde_json::Value]) -> PathBuf {
    std::fs::create_dir_all(lab.state_dir()).unwrap();
    let path = lab.state_dir().join("campaign-999999.journal");
    let mut text = String::from("{\"op\":\"campaign\",\"pid\":999999,\"started\":\"t\"}\n");
    for (i, r) in resources.iter().enumerate() {
        let line = serde_json::json!({"op": "acquire", "id": i + 1, "resource": r});
        text.push_str(&format!("{line}\n"));
    }
    std::fs::write(&path, text).unwrap();
    path
}

#[test]
#[ignore = "needs root"]
fn item7_a_daemon_whose_users_cannot_be_listed_is_kept_running() {
    require_root!();
    let lab = Lab::new();
    let mut daemon = FakeDaemon::start(lab.path());
    let pidfile = lab
        .state_dir()
        .join(format!("glusterd-{}.pid", daemon.0.id()));
    std::fs::create_dir_all(lab.state_dir()).unwrap();
    std::fs::write(&pidfile, format!("{}\n", daemon.0.id())).unwrap();
    let journal = forged_journal(
        &lab,
        &[serde_json::json!({"type": "daemon", "program": "glusterd", "pidfile": pidfile})],
    );
    let bin = fake_bin(&lab, "gluster", "echo 'Connection failed.' >&2; exit 1");
    let out = lab
        .cmd()
        .env("PATH", path_with(&bin))
        .arg("cleanup")
        .output()
        .unwrap();
    let (stdout, stderr) = text(&out);
    assert!(stdout.contains("kept"), "{stdout}{stderr}");
    assert!(
        daemon.alive(),
        "stopped although nobody could tell it was unused"
    );
    assert!(journal.exists() && pidfile.exists(), "still journaled");
}

#[test]
#[ignore = "needs root"]
fn item7_a_campaign_holds_its_daemon_claim_until_its_volume_is_gone() {
    require_root!();
    let _d = crate::provision::daemons();
    let lab = Lab::new();
    let _cleanup = CleanupOnDrop(&lab);
    let log = lab.path().join("claims.log");
    // On `volume delete`, try the lock a campaign stopping glusterd takes.
    let bin = fake_bin(
        &lab,
        "gluster",
        &format!(
            "case \"$*\" in *'volume delete'*) if flock -n -x /run/lock/storlab-glusterd.lock true; \
             then echo free >> {l}; else echo held >> {l}; fi;; esac\nexec /usr/sbin/gluster \"$@\"",
            l = log.display()
        ),
    );
    let file = lab.file(
        "gl.toml",
        &format!(
            "[[target]]\nname = \"gl\"\nkind = \"gluster\"\nbricks = 1\ndir = \"{}\"\n\
             [[workload]]\nname = \"w\"\nkind = \"mock\"\n",
            lab.path().display()
        ),
    );
    let out = lab
        .cmd()
        .env("PATH", path_with(&bin))
        .args(["run", "--quiet", file.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(out.status.success(), "{:?}", text(&out));
    let said = std::fs::read_to_string(&log).unwrap_or_default();
    assert!(said.contains("held") && !said.contains("free"), "{said:?}");
}

#[test]
#[ignore = "needs root"]
fn item7_a_daemon_left_for_another_campaign_stays_journaled_until_cleanup_stops_it() {
    require_root!();
    let _d = crate::provision::daemons();
    if Command::new("gluster")
        .args(["--mode=script", "volume", "list"])
        .output()
        .is_ok_and(|o| o.status.success())
    {
        eprintln!("SKIPPED: glusterd already runs here, so this campaign would not start it");
        return;
    }
    let lab = Lab::new();
    // Another campaign's claim, held while this one ends.
    let claim = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open("/run/lock/storlab-glusterd.lock")
        .unwrap();
    {
        use std::os::fd::AsRawFd;
        // SAFETY: flock on a descriptor this File owns.
        assert_eq!(unsafe { libc::flock(claim.as_raw_fd(), libc::LOCK_SH) }, 0);
    }
    let file = lab.file(
        "gl.toml",
        &format!(
            "[[target]]\nname = \"gl\"\nkind = \"gluster\"\nbricks = 1\ndir = \"{}\"\n\
             [[workload]]\nname = \"w\"\nkind = \"mock\"\n",
            lab.path().display()
        ),
    );
    let out = run_file(&lab, &file);
    let pid = lab.export_json()["targets"][0]["facts"]["daemon_started_pid"].as_u64();
    let stop = StopGlusterd(pid);
    assert!(out.status.success(), "{:?}", text(&out));
    assert!(pid.is_some(), "this campaign started glusterd");
    assert!(stop.alive(), "left running for the other campaign");
    assert_eq!(
        journals(&lab),
        1,
        "the daemon stays in the journal of the campaign that started it"
    );
    drop(claim);
    let cleaned = cleanup_all(&lab);
    assert!(cleaned.contains("undone: glusterd daemon"), "{cleaned}");
    wait_for("glusterd to stop", 30, || !stop.alive());
    assert_eq!(journals(&lab), 0, "{cleaned}");
}

/// `storlab cleanup`, run again while it keeps a journal only because
/// another storlab (another test's campaign) is attaching bpftrace: a
/// campaign killed while it attached journaled the tracefs, and cleanup
/// leaves that to whoever attaches (see `provision::tracefs::undo`). What
/// every pass printed, joined.
fn cleanup_all(lab: &Lab) -> String {
    let t0 = Instant::now();
    let mut said = String::new();
    loop {
        let out = lab.ok(&["cleanup"]);
        said.push_str(&out);
        let attaching = out.contains("another storlab is attaching bpftrace");
        if journals(lab) == 0 || !attaching || t0.elapsed() > Duration::from_secs(120) {
            return said;
        }
        std::thread::sleep(Duration::from_millis(500));
    }
}

/// The journals in the lab's state directory (which also holds pid files).
fn journals(lab: &Lab) -> usize {
    std::fs::read_dir(lab.state_dir())
        .map(|d| {
            d.flatten()
                .filter(|e| e.file_name().to_string_lossy().ends_with(".journal"))
                .count()
        })
        .unwrap_or(0)
}

/// Stops a glusterd a test's campaign started, if the test fails first.
struct StopGlusterd(Option<u64>);

impl StopGlusterd {
    fn alive(&self) -> bool {
        self.0.is_some_and(|pid| {
            std::fs::read_to_string(format!("/proc/{pid}/stat"))
                .map(|s| s.contains("(glusterd)") && !s.contains(") Z"))
                .unwrap_or(false)
        })
    }
}

impl Drop for StopGlusterd {
    fn drop(&mut self) {
        if let (true, Some(pid)) = (self.alive(), self.0) {
            // SAFETY: kill on the glusterd this test's campaign started.
            unsafe { libc::kill(pid as libc::pid_t, libc::SIGTERM) };
        }
    }
}

// ---- 8. what `storlab cleanup` cannot find, and what it must not touch ----

#[test]
fn item8_cleanup_removes_the_working_directory_a_killed_campaign_left() {
    let lab = Lab::new();
    let file = exp_dir_target(
        &lab,
        "killed",
        "[plan]\nrepetitions = 20\n[[workload]]\nname = \"m\"\nkind = \"mock\"\nduration = \"500ms\"\n",
    );
    let work = lab.path().join("data/storlab-work-d");
    let first = Running::start(&lab, &["run", "--quiet", file.to_str().unwrap()]);
    wait_for("the working directory", 60, || work.exists());
    signal(first.child(), libc::SIGKILL);
    first.wait();
    assert!(work.exists());
    let out = cleanup_all(&lab);
    assert!(out.contains("undone: working directory"), "{out}");
    assert!(!work.exists(), "{} left", work.display());
    assert_eq!(journals(&lab), 0, "{out}");
}

#[test]
#[ignore = "needs root"]
fn item8_cleanup_removes_a_pgbench_socket_directory_outside_the_target() {
    require_root!();
    crate::pgbench_runs::require_postgres();
    let lab = crate::pgbench_runs::reachable_lab();
    // Deep enough that the socket cannot live inside the cluster.
    let deep = lab.path().join("d".repeat(100));
    std::fs::create_dir(&deep).unwrap();
    let file = lab.file(
        "sock.toml",
        &format!(
            "[[target]]\nname = \"d\"\nkind = \"dir\"\npath = \"{}\"\n\
             [[workload]]\nname = \"p\"\nkind = \"pgbench\"\nduration = \"120s\"\n",
            deep.display()
        ),
    );
    let conf = deep.join("storlab-work-d/p/pg/data/postgresql.conf");
    let first = Running::start(&lab, &["run", "--quiet", file.to_str().unwrap()]);
    wait_for("the server", 120, || {
        conf.exists() && runs_below(&deep, "postgres")
    });
    let socket = std::fs::read_to_string(&conf)
        .unwrap()
        .lines()
        .find_map(|l| l.strip_prefix("unix_socket_directories = '"))
        .map(|l| PathBuf::from(l.trim_end_matches('\'')))
        .unwrap();
    assert!(
        socket.to_string_lossy().starts_with("/tmp/storlab-pg-"),
        "{}",
        socket.display()
    );
    signal(first.child(), libc::SIGKILL);
    first.wait();
    wait_for("the server's end", 30, || !runs_below(&deep, "postgres"));
    assert!(socket.exists() && deep.join("storlab-work-d").exists());
    let out = lab.ok(&["cleanup"]);
    assert!(out.contains("undone: directory /tmp/storlab-pg-"), "{out}");
    assert!(!socket.exists(), "{} left", socket.display());
    assert!(
        !deep.join("storlab-work-d").exists(),
        "the cluster's directory left"
    );
}

#[test]
fn item8_cleanup_touches_nothing_outside_storlabs_names() {
    let lab = Lab::new();
    let victim = tempfile::Builder::new().prefix("victim").tempdir().unwrap();
    std::fs::write(victim.path().join("precious"), "data").unwrap();
    forged_journal(
        &lab,
        &[
            serde_json::json!({"type": "dir", "path": victim.path()}),
            serde_json::json!({"type": "file", "path": victim.path().join("precious")}),
        ],
    );
    let out = lab.run(&["cleanup"]);
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(1), "{stdout}{stderr}");
    assert!(stderr.contains("does not touch it"), "{stderr}");
    assert!(
        victim.path().join("precious").exists(),
        "cleanup removed a user's file"
    );
}

// ---- 10. the run the store could not take ----

#[test]
#[ignore = "needs root"]
fn item10_a_run_a_full_store_cannot_take_is_printed_spooled_and_committed_later() {
    require_root!();
    let lab = Lab::new();
    let store = TestMount::new(lab.path().join("store"), "16M");
    let db = store.0.join("s.db");
    let fill = store.0.join("fill");
    let file = exp_dir_target(
        &lab,
        "full",
        &format!(
            "[[workload]]\nname = \"c\"\nkind = \"command\"\ncommand = [\"sh\", \"-c\", \"dd if=/dev/zero of={} bs=64k 2>/dev/null; true\"]\n",
            fill.display()
        ),
    );
    let out = lab
        .cmd()
        .args(["--db", db.to_str().unwrap(), "run", "--quiet"])
        .arg(&file)
        .output()
        .unwrap();
    let (_, err) = text(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("the run, in full") && err.contains("wall_s"),
        "{err}"
    );
    let spool = store.0.join("s.db.spool-1");
    assert!(err.contains(spool.to_str().unwrap()), "{err}");
    std::fs::remove_file(&fill).unwrap();
    let listed = lab
        .cmd()
        .args(["--db", db.to_str().unwrap(), "list"])
        .output()
        .unwrap();
    let (stdout, stderr) = text(&listed);
    assert!(
        stderr.contains("committed 1 run(s) of campaign 1"),
        "{stderr}"
    );
    assert!(stdout.contains("interrupted"), "{stdout}");
    assert!(!spool.exists());
    let export = lab
        .cmd()
        .args(["--db", db.to_str().unwrap(), "export", "--format", "json"])
        .output()
        .unwrap();
    let export: serde_json::Value = serde_json::from_slice(&export.stdout).unwrap();
    let runs = crate::util::runs(&export);
    assert_eq!(runs.len(), 1);
    assert_eq!(runs[0]["status"], "ok");
    assert!(crate::util::value_of(&runs[0], "wall_s").unwrap() > 0.0);
    drop(store);
}

// ---- 11. a command's stray children ----

#[test]
#[ignore = "needs root"]
fn item11_what_a_command_leaves_running_does_not_keep_the_target_busy() {
    require_root!();
    let lab = Lab::new();
    let file = lab.file(
        "strays.toml",
        "[[target]]\nname = \"strays\"\nkind = \"tmpfs\"\nsize = \"16M\"\n\
         [[workload]]\nname = \"c\"\nkind = \"command\"\n\
         command = [\"sh\", \"-c\", \"sleep 317 & setsid sleep 318 & exit 0\"]\n",
    );
    let out = run_file(&lab, &file);
    assert!(out.status.success(), "{:?}", text(&out));
    assert_eq!(storlab_mounts("strays"), 0);
    let export = lab.export_json();
    let run = &crate::util::runs(&export)[0];
    assert_eq!(run["status"], "ok");
    let warnings = run["warnings"].to_string();
    assert!(
        warnings.contains("left 2 process(es) running"),
        "{warnings}"
    );
}

#[test]
fn item11_an_interrupt_does_not_wait_for_a_command_that_ignores_sigterm() {
    let lab = Lab::new();
    let started = lab.path().join("started");
    let file = exp_dir_target(
        &lab,
        "stubborn",
        &format!(
            "[[workload]]\nname = \"c\"\nkind = \"command\"\ncommand = [\"sh\", \"-c\", \"trap '' TERM; touch {}; while :; do sleep 0.2; done\"]\n",
            started.display()
        ),
    );
    let first = Running::start(&lab, &["run", "--quiet", file.to_str().unwrap()]);
    wait_for("the command", 60, || started.exists());
    let t0 = Instant::now();
    signal(first.child(), libc::SIGINT);
    let out = first
        .wait_at_most(30)
        .expect("storlab waited without bound for a command ignoring SIGTERM");
    assert_eq!(out.status.code(), Some(130));
    assert!(t0.elapsed() < Duration::from_secs(15), "{:?}", t0.elapsed());
    assert_eq!(statuses(&lab), vec!["interrupted"]);
}

// ---- 12. smaller findings ----

#[test]
fn item12_campaigns_starting_together_on_a_new_store_all_run() {
    for round in 0..3 {
        let lab = Lab::new();
        let files: Vec<PathBuf> = (0..4)
            .map(|i| {
                let data = lab.path().join(format!("data{i}"));
                std::fs::create_dir(&data).unwrap();
                lab.file(
                    &format!("t{i}.toml"),
                    &format!(
                        "[[target]]\nname = \"d\"\nkind = \"dir\"\npath = \"{}\"\n\
                         [[workload]]\nname = \"m\"\nkind = \"mock\"\nduration = \"10ms\"\n",
                        data.display()
                    ),
                )
            })
            .collect();
        let all: Vec<Running> = files
            .iter()
            .map(|f| Running::start(&lab, &["run", "--quiet", f.to_str().unwrap()]))
            .collect();
        for (i, c) in all.into_iter().enumerate() {
            let out = c.wait();
            assert!(
                out.status.success(),
                "round {round}, campaign {i}: {:?}",
                text(&out)
            );
        }
        assert_eq!(runs_in_store(&lab.db()), 4 * 3);
    }
}

#[test]
#[ignore = "needs root"]
fn item12_a_read_only_store_can_be_listed_shown_and_exported() {
    require_root!();
    let lab = Lab::new();
    let store = TestMount::new(lab.path().join("ro"), "16M");
    let db = store.0.join("s.db");
    let file = exp_dir_target(&lab, "ro", "[[workload]]\nname = \"m\"\nkind = \"mock\"\n");
    let with_db = |args: &[&str]| {
        lab.cmd()
            .args(["--db", db.to_str().unwrap()])
            .args(args)
            .output()
            .unwrap()
    };
    assert!(with_db(&["run", "--quiet", file.to_str().unwrap()])
        .status
        .success());
    assert!(Command::new("mount")
        .args(["-o", "remount,ro"])
        .arg(&store.0)
        .status()
        .unwrap()
        .success());
    for args in [&["list"][..], &["show"], &["export", "--format", "csv"]] {
        let out = with_db(args);
        assert!(out.status.success(), "{args:?}: {:?}", text(&out));
        assert!(text(&out).0.contains("ro") || args[0] == "export");
    }
    drop(store);
}

#[test]
#[ignore = "needs root"]
fn item12_a_store_path_that_is_no_file_is_refused_and_nothing_is_written_beside_it() {
    require_root!();
    let lab = Lab::new();
    let node = lab.path().join("null");
    assert!(Command::new("mknod")
        .arg(&node)
        .args(["c", "1", "3"])
        .status()
        .unwrap()
        .success());
    for args in [&["list"][..], &["show"]] {
        let out = lab
            .cmd()
            .args(["--db", node.to_str().unwrap()])
            .args(args)
            .output()
            .unwrap();
        let (_, err) = text(&out);
        assert_eq!(out.status.code(), Some(1), "{err}");
        assert!(err.contains("not a regular file"), "{err}");
    }
    let left: Vec<_> = std::fs::read_dir(lab.path())
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .filter(|n| n.to_string_lossy().starts_with("null-"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
}

#[test]
fn item12_names_with_control_characters_are_refused() {
    let lab = Lab::new();
    for name in ["a\\u001b[2Jb", "bell\\u0007"] {
        let file = lab.file(
            "ctl.toml",
            &format!(
                "name = \"{name}\"\n[[target]]\nname = \"d\"\nkind = \"dir\"\npath = \"/tmp\"\n\
                 [[workload]]\nname = \"m\"\nkind = \"mock\"\n"
            ),
        );
        let out = lab.run(&["check", file.to_str().unwrap()]);
        let (_, err) = text(&out);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert!(err.contains("control character"), "{err}");
        assert!(!err.contains('\u{1b}') && !err.contains('\u{7}'), "{err:?}");
    }
}

#[test]
fn item12_a_size_near_two_to_the_64_is_a_clear_error_not_a_panic() {
    let lab = Lab::new();
    let file = exp_dir_target(
        &lab,
        "huge",
        "[[workload]]\nname = \"w\"\nkind = \"io\"\nrw = \"write\"\nsize = \"16777215T\"\n",
    );
    let out = run_file(&lab, &file);
    let (_, err) = text(&out);
    assert!(
        matches!(out.status.code(), Some(1) | Some(2)),
        "{:?}: {err}",
        out.status
    );
    assert!(!err.contains("panicked"), "{err}");
    assert!(err.contains("is missing") || err.contains("size"), "{err}");
}

#[test]
#[ignore = "needs root"]
fn item12_a_full_filesystem_fails_an_io_run_with_enospc() {
    require_root!();
    let lab = Lab::new();
    let mnt = TestMount::new(lab.path().join("small"), "8M");
    let file = lab.file(
        "enospc.toml",
        &format!(
            "[plan]\norder = \"sequential\"\n[[target]]\nname = \"s\"\nkind = \"dir\"\npath = \"{}\"\n\
             [[workload]]\nname = \"fill\"\nkind = \"command\"\ncommand = [\"sh\", \"-c\", \"dd if=/dev/zero of=spare bs=16k count=1; dd if=/dev/zero of=fill bs=1M; rm spare\"]\n\
             [[workload]]\nname = \"w\"\nkind = \"io\"\nrw = \"write\"\nbs = \"64k\"\nsize = \"2M\"\n",
            mnt.0.display()
        ),
    );
    let out = run_file(&lab, &file);
    assert!(out.status.success(), "{:?}", text(&out));
    let export = lab.export_json();
    let w = crate::util::runs(&export)
        .iter()
        .find(|r| r["workload"] == "w")
        .unwrap()
        .clone();
    assert_eq!(w["status"], "failed");
    let e = w["error"].as_str().unwrap();
    // 16 KiB were left: the first 64 KiB write is short, and says why.
    assert!(e.contains("No space left on device"), "{e}");
}

#[test]
#[ignore = "needs root"]
fn item12_a_teardown_error_names_a_journal_that_exists() {
    require_root!();
    let lab = Lab::new();
    let file = exp_dir_target(
        &lab,
        "busy",
        "[plan]\nrepetitions = 1\n[[workload]]\nname = \"c\"\nkind = \"command\"\n\
         command = [\"sh\", \"-c\", \"mkdir -p sub && mount -t tmpfs storlab-test sub\"]\n",
    );
    let sub = lab.path().join("data/storlab-work-d/c/sub");
    let out = run_file(&lab, &file);
    while Command::new("umount")
        .arg(&sub)
        .status()
        .is_ok_and(|s| s.success())
    {}
    let (_, err) = text(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    let named: Vec<&str> = err
        .split_whitespace()
        .map(|w| w.trim_end_matches([';', ',', '.', ':']))
        .filter(|w| w.ends_with(".journal"))
        .collect();
    assert!(!named.is_empty(), "{err}");
    for j in named {
        assert!(
            Path::new(j).exists(),
            "names {j}, which does not exist: {err}"
        );
    }
    assert!(lab.ok(&["cleanup"]).contains("undone: working directory"));
}

#[test]
fn item12_a_name_never_becomes_a_link_in_the_markdown_report() {
    let lab = Lab::new();
    let file = lab.file(
        "md.toml",
        "[plan]\nrepetitions = 1\n[[target]]\nname = \"[x](javascript:alert(1))\"\nkind = \"dir\"\npath = \"/tmp\"\n\
         [[workload]]\nname = \"[y]: javascript:alert(2)\"\nkind = \"mock\"\n",
    );
    lab.ok(&["run", "--quiet", file.to_str().unwrap()]);
    let md = lab.ok(&["report", "--format", "md"]);
    assert!(md.contains("javascript"), "the names are there: {md}");
    assert!(
        !md.contains("](javascript") && !md.contains("]: javascript"),
        "{md}"
    );
}

#[test]
fn item12_with_a_shell_the_working_directory_stays_one_word() {
    let lab = Lab::new();
    let odd = lab.path().join("a dir;$(touch pwned)");
    std::fs::create_dir(&odd).unwrap();
    let out_file = lab.path().join("said");
    let file = lab.file(
        "shell.toml",
        &format!(
            "[plan]\nrepetitions = 1\n[[target]]\nname = \"d\"\nkind = \"dir\"\npath = {:?}\n\
             [[workload]]\nname = \"c\"\nkind = \"command\"\nshell = true\ncommand = \"printf %s {{dir}} > {}\"\n",
            odd.display().to_string(),
            out_file.display()
        ),
    );
    lab.ok(&["run", "--quiet", file.to_str().unwrap()]);
    let said = std::fs::read_to_string(&out_file).unwrap();
    assert_eq!(said, odd.join("storlab-work-d/c").display().to_string());
    assert!(!lab.path().join("pwned").exists() && !odd.join("pwned").exists());
    assert_eq!(statuses(&lab), vec!["ok"]);
}
