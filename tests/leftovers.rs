//! What storlab starts, mounts or registers outlives it only journaled
//! (#40 items 3, 4, 5, 7), each case as it broke: a child killed with
//! storlab, a daemon that dies or stops during a campaign, what a killed
//! campaign mounted or registered outside its journal, and a cleanup whose
//! reader goes away.

use std::path::Path;
use std::process::Stdio;

use crate::provision::{wait_for, Guard};
use crate::util::Lab;

/// The children of `pid` running `program` (by /proc/PID/stat).
fn children_named(pid: u32, program: &str) -> Vec<u32> {
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| {
            let child: u32 = e.file_name().to_str()?.parse().ok()?;
            let stat = std::fs::read_to_string(e.path().join("stat")).ok()?;
            let (left, right) = stat.rsplit_once(')')?;
            let comm = left.split_once('(')?.1;
            let ppid: u32 = right.split_whitespace().nth(1)?.parse().ok()?;
            (ppid == pid && comm == program).then_some(child)
        })
        .collect()
}

/// Whether `pid` runs (and is no zombie).
fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .map(|s| !s.rsplit_once(')').unwrap().1.trim_start().starts_with('Z'))
        .unwrap_or(false)
}

/// Processes holding a file open below `dir`.
fn holders_below(dir: &Path) -> Vec<(u32, String)> {
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|p| p.parse::<u32>().ok()) else {
            continue;
        };
        let Ok(fds) = std::fs::read_dir(e.path().join("fd")) else {
            continue;
        };
        for fd in fds.flatten() {
            if let Ok(target) = std::fs::read_link(fd.path()) {
                if target.starts_with(dir) {
                    out.push((pid, target.display().to_string()));
                }
            }
        }
    }
    out
}

/// A journal left by a campaign that is gone (pid 999997, never storlab),
/// holding `resources` (JSON objects), in `lab`'s state directory.
fn dead_campaign_journal(lab: &Lab, resources: &[String]) -> std::path::PathBuf {
    let mut text = "{\"op\":\"campaign\",\"pid\":999997,\"started\":\"2026-11-29T00:00:00Z\",\"owner\":{\"pid\":999997,\"start\":1}}\n".to_string();
    for (i, r) in resources.iter().enumerate() {
        text.push_str(&format!(
            "{{\"op\":\"acquire\",\"id\":{},\"resource\":{r}}}\n",
            i + 1
        ));
    }
    std::fs::create_dir_all(lab.state_dir()).unwrap();
    let path = lab.state_dir().join("campaign-999997.journal");
    std::fs::write(&path, text).unwrap();
    path
}

fn dir_resource(path: &Path) -> String {
    format!("{{\"type\":\"dir\",\"path\":\"{}\"}}", path.display())
}

/// Item 7: `storlab cleanup | head -1` ended at its first line, undoing
/// nothing, with status 0. Its stdout is a pipe whose reader is gone before
/// it writes: every directory is still removed, the journal with them, and
/// the status says the undoing succeeded.
#[test]
fn cleanup_finishes_its_undoing_when_its_reader_goes_away() {
    let lab = Lab::new();
    let dirs: Vec<_> = (0..3)
        .map(|i| lab.path().join(format!("storlab-999997-t{i}")))
        .collect();
    for d in &dirs {
        std::fs::create_dir(d).unwrap();
        std::fs::write(d.join("file"), b"x").unwrap();
    }
    let journal = dead_campaign_journal(
        &lab,
        &dirs.iter().map(|d| dir_resource(d)).collect::<Vec<_>>(),
    );
    let mut child = lab
        .cmd()
        .arg("cleanup")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The reader goes away before cleanup says anything.
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    let e = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{:?} {e}", out.status);
    for d in &dirs {
        assert!(!d.exists(), "{} is left: {e}", d.display());
    }
    assert!(!journal.exists(), "the journal is left: {e}");
    // A failure is still said by the status when nobody reads stdout.
    // (No zpool on its PATH: the pool cannot be destroyed.)
    let pool = r#"{"type":"pool","name":"storlab_999997_z"}"#.to_string();
    let journal = dead_campaign_journal(&lab, &[pool]);
    let mut child = lab
        .cmd()
        .arg("cleanup")
        .env("PATH", lab.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert!(journal.exists(), "kept for the next cleanup");
}

/// Item 3: SIGKILL during a vm-disk's `qemu-img create` (raw, full
/// preallocation) left qemu-img, re-parented to pid 1, writing on into the
/// image `storlab cleanup` then said it had removed. A child dies with the
/// storlab that started it: killed by its recorded pid, storlab takes
/// qemu-img with it, and cleanup leaves nothing holding a file of the lab.
#[test]
#[ignore = "needs root"]
fn a_provisioning_command_dies_with_a_killed_storlab() {
    require_root!();
    require_program!("qemu-img");
    let lab = Lab::new();
    let text = format!(
        "name = \"qemu-img-kill\"\n\
         [[target]]\nname = \"vm\"\nkind = \"vm-disk\"\ndir = \"{}\"\nsize = \"4G\"\nformat = \"raw\"\npreallocation = \"full\"\n\
         [[workload]]\nname = \"w\"\nkind = \"command\"\ncommand = [\"true\"]\n",
        lab.path().display()
    );
    let file = lab.file("vm.toml", &text);
    let mut guard = Guard::spawn(&lab, &file);
    let storlab = guard.child().id();
    let mut qemu_img = Vec::new();
    wait_for("qemu-img create under storlab", 120, || {
        qemu_img = children_named(storlab, "qemu-img");
        !qemu_img.is_empty()
    });
    // SIGKILL by the recorded pid: no teardown, no signal handler.
    unsafe { libc::kill(storlab as i32, libc::SIGKILL) };
    guard.child().wait().unwrap();
    wait_for("qemu-img to end with storlab", 10, || {
        qemu_img.iter().all(|p| !alive(*p))
    });
    let out = lab.run(&["cleanup"]);
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "{said}");
    let held = holders_below(lab.path());
    assert!(
        held.is_empty(),
        "still held after cleanup: {held:?}\n{said}"
    );
    let base = lab.path().join(format!("storlab-{storlab}-vm"));
    assert!(!base.exists(), "{} is left: {said}", base.display());
}

/// A mount and network namespace of the test's own, where a daemon
/// storlab shares host-wide (glusterd) can run beside the host's: its
/// own loopback, /var/lib/glusterd, /run/gluster and log directory, each
/// an empty tmpfs. The host's unmounts reach it (slave propagation), so it
/// pins no other campaign's mount. Dropped, it kills what it recorded.
struct Isolated {
    holder: std::process::Child,
    pids: Vec<u32>,
}

impl Isolated {
    /// The namespace, with an empty tmpfs on each of `dirs`, after the
    /// shell commands `first`.
    fn new(first: &str, dirs: &[&str]) -> Isolated {
        let script = format!(
            "{first} ip link set lo up && for d in \"$@\"; do \
             mkdir -p $d && mount -t tmpfs storlab-test $d || exit 1; done && exec sleep 600"
        );
        let holder = std::process::Command::new("unshare")
            .args([
                "--mount",
                "--net",
                "--propagation",
                "slave",
                "--",
                "sh",
                "-c",
            ])
            .arg(script)
            .arg("sh")
            .args(dirs)
            .spawn()
            .unwrap();
        let pid = holder.id();
        let iso = Isolated {
            holder,
            pids: Vec::new(),
        };
        let last = format!(" {} ", dirs.last().unwrap());
        wait_for("the namespace's tmpfs mounts", 10, || {
            std::fs::read_to_string(format!("/proc/{pid}/mountinfo"))
                .is_ok_and(|m| m.contains(&last))
        });
        iso
    }

    /// The namespace's mount table.
    fn mountinfo(&self) -> String {
        std::fs::read_to_string(format!("/proc/{}/mountinfo", self.holder.id())).unwrap()
    }

    /// `storlab args…` in the namespace, on the lab's store and state.
    fn storlab(&self, lab: &Lab) -> std::process::Command {
        let mut c = self.command(env!("CARGO_BIN_EXE_storlab"));
        c.current_dir(lab.path())
            .env("STORLAB_DB", lab.db())
            .env("STORLAB_STATE_DIR", lab.state_dir());
        c
    }

    /// `program args…` in the namespace.
    fn command(&self, program: &str) -> std::process::Command {
        let mut c = std::process::Command::new("nsenter");
        c.args([
            "-t",
            &self.holder.id().to_string(),
            "-m",
            "-n",
            "--",
            program,
        ]);
        c
    }
}

impl Drop for Isolated {
    fn drop(&mut self) {
        for pid in &self.pids {
            unsafe { libc::kill(*pid as i32, libc::SIGKILL) };
        }
        let _ = self.holder.kill();
        let _ = self.holder.wait();
    }
}

/// Item 5: a campaign killed while it started Gluster left glusterd
/// running after `storlab cleanup`, its pid file in the state directory
/// and no journal claiming it: killed before glusterd wrote its pid file,
/// the journal's `glusterd` resource read no pid and was said undone. That
/// moment is made here for certain, with a real glusterd in a namespace of
/// the test's own: started with the pid file the journal names, which is
/// then removed, as not written yet. Cleanup finds the daemon by the pid
/// file its command line names and stops it.
#[test]
#[ignore = "needs root"]
fn glusterd_whose_pid_file_is_not_written_yet_is_stopped_by_cleanup() {
    require_root!();
    require_program!("glusterd");
    let lab = Lab::new();
    // Its own /run: the host's glusterd (another campaign's) holds /run/glusterd.socket.
    let mut iso = Isolated::new("", &["/var/lib/glusterd", "/run", "/var/log/glusterfs"]);
    std::fs::create_dir_all(lab.state_dir()).unwrap();
    let pidfile = lab.state_dir().join("glusterd-999997.pid");
    let started = iso
        .command("glusterd")
        .arg("-p")
        .arg(&pidfile)
        .status()
        .unwrap();
    assert!(started.success());
    let mut glusterd = 0;
    wait_for("glusterd's pid file", 30, || {
        glusterd = std::fs::read_to_string(&pidfile)
            .ok()
            .and_then(|t| t.trim().parse().ok())
            .unwrap_or(0);
        glusterd > 0
    });
    iso.pids.push(glusterd);
    std::fs::remove_file(&pidfile).unwrap();
    let daemon = format!(
        "{{\"type\":\"daemon\",\"program\":\"glusterd\",\"pidfile\":\"{}\"}}",
        pidfile.display()
    );
    let journal = dead_campaign_journal(&lab, &[daemon]);
    let out = iso.storlab(&lab).arg("cleanup").output().unwrap();
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "{said}");
    assert!(
        !alive(glusterd),
        "glusterd (pid {glusterd}) runs on: {said}"
    );
    assert!(!journal.exists(), "{said}");
}

/// The `-S` socket and `-p` pid file a running brick of `volume` names.
fn brick_runtime(volume: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(cmdline) = std::fs::read(e.path().join("cmdline")) else {
            continue;
        };
        let args: Vec<String> = cmdline
            .split(|&b| b == 0)
            .map(|a| String::from_utf8_lossy(a).into_owned())
            .collect();
        let arg = |flag: &str| args.windows(2).find(|w| w[0] == flag).map(|w| w[1].clone());
        let ours = arg("--volfile-id").is_some_and(|v| v.starts_with(&format!("{volume}.")));
        if let (true, Some(s), Some(p)) = (ours, arg("-S"), arg("-p")) {
            out.push((s, p));
        }
    }
    out
}

/// Item 5: every Gluster campaign left `/run/gluster/vols/storlab-…/` and
/// its bricks' sockets (10 campaigns: 10 directories, 20 sockets). A
/// campaign killed by its recorded pid while its volume serves: `storlab
/// cleanup` deletes the volume and removes both.
#[test]
#[ignore = "needs root"]
fn a_volumes_runtime_files_go_with_it() {
    require_root!();
    require_program!("glusterd");
    let _daemons = crate::provision::daemons();
    let lab = Lab::new();
    let text = format!(
        "name = \"gl-run\"\n[plan]\nrepetitions = 50\n\
         [[target]]\nname = \"gl\"\nkind = \"gluster\"\nbricks = 2\ndir = \"{}\"\n\
         [[workload]]\nname = \"w\"\nkind = \"command\"\ncommand = [\"sleep\", \"1\"]\n",
        lab.path().display()
    );
    let file = lab.file("gl.toml", &text);
    let mut guard = Guard::spawn(&lab, &file);
    let storlab = guard.child().id();
    let volume = format!("storlab-{storlab}-gl");
    let mut bricks = Vec::new();
    wait_for("the volume's two bricks", 120, || {
        bricks = brick_runtime(&volume);
        bricks.len() == 2
    });
    unsafe { libc::kill(storlab as i32, libc::SIGKILL) };
    guard.child().wait().unwrap();
    let out = lab.run(&["cleanup"]);
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "{said}");
    for (socket, pidfile) in &bricks {
        assert!(!Path::new(socket).exists(), "{socket} is left: {said}");
        let dir = Path::new(pidfile).parent().unwrap();
        assert!(dir.ends_with(&volume), "{pidfile}");
        assert!(!dir.exists(), "{} is left: {said}", dir.display());
    }
}

/// The ids of the mounts of storlab's tracefs in a mount table.
fn storlab_tracefs(mountinfo: &str) -> Vec<String> {
    mountinfo
        .lines()
        .filter(|l| {
            l.contains(" /sys/kernel/tracing ") && l.contains(" - tracefs storlab-tracefs ")
        })
        .map(|l| l.split(' ').next().unwrap().to_string())
        .collect()
}

/// Item 5: SIGKILL while bpftrace attaches left `storlab-tracefs` mounted
/// on /sys/kernel/tracing. In a mount namespace of the test's own (no
/// tracefs, its own /run/lock: no other storlab's attach mounts or holds
/// them), the
/// campaign is killed by its pid while its tracefs is mounted: `storlab
/// cleanup` finds the mount in the journal and unmounts it.
#[test]
#[ignore = "needs root"]
fn a_tracefs_mounted_for_an_attach_is_unmounted_by_cleanup() {
    require_root!();
    require_program!("bpftrace");
    let lab = Lab::new();
    // No tracefs in it, and none the host mounts later (another storlab's
    // attach) reaches it: storlab mounts its own.
    let iso = Isolated::new(
        "mount --make-private /sys && while umount -l /sys/kernel/tracing 2>/dev/null; do :; done &&",
        &["/run/lock"],
    );
    let before = storlab_tracefs(&iso.mountinfo());
    let text = format!(
        "name = \"tracefs-kill\"\n[plan]\nrepetitions = 50\n\
         [[target]]\nname = \"lp\"\nkind = \"loop\"\nfs = \"ext4\"\nsize = \"64M\"\ndir = \"{}\"\n\
         [[workload]]\nname = \"w\"\nkind = \"io\"\nrw = \"write\"\nsize = \"1M\"\n",
        lab.path().display()
    );
    let file = lab.file("t.toml", &text);
    let mut storlab = iso
        .storlab(&lab)
        .args(["run", "--quiet", file.to_str().unwrap()])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let pid = storlab.id();
    let mut ours = Vec::new();
    let seen = std::time::Instant::now();
    while ours.is_empty() && seen.elapsed().as_secs() < 120 {
        ours = storlab_tracefs(&iso.mountinfo());
        ours.retain(|id| !before.contains(id));
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    unsafe { libc::kill(pid as i32, libc::SIGKILL) };
    storlab.wait().unwrap();
    assert!(!ours.is_empty(), "storlab never mounted its tracefs");
    let out = iso.storlab(&lab).arg("cleanup").output().unwrap();
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let left = storlab_tracefs(&iso.mountinfo());
    assert!(
        ours.iter().all(|id| !left.contains(id)),
        "tracefs (mount {ours:?}) left: {said}"
    );
    assert!(
        said.contains("undone: tracefs on /sys/kernel/tracing"),
        "{said}"
    );
    assert!(out.status.success(), "{said}");
}

/// A vm-disk campaign of three runs, each waiting `pause` then writing
/// 4 MiB with O_DIRECT through the guest's filesystem, on images in the
/// lab; returns it spawned (stderr kept), with the daemon's pid file.
fn vm_campaign<'a>(lab: &'a Lab, pause: &str) -> (Guard<'a>, std::path::PathBuf) {
    let text = format!(
        "name = \"vm-daemon\"\n[plan]\nrepetitions = 3\n\
         [[target]]\nname = \"vm\"\nkind = \"vm-disk\"\ndir = \"{}\"\nsize = \"64M\"\nformat = \"raw\"\npreallocation = \"falloc\"\n\
         [[workload]]\nname = \"w\"\nkind = \"command\"\n\
         command = [\"sh\", \"-c\", \"sleep {pause}; dd if=/dev/zero of=f bs=1M count=4 oflag=direct status=none\"]\n",
        lab.path().display()
    );
    let file = lab.file("vm.toml", &text);
    let mut guard = Guard::spawn_heard(lab, &file);
    let pidfile = lab.path().join(format!(
        "storlab-{}-vm/qemu-storage-daemon.pid",
        guard.child().id()
    ));
    (guard, pidfile)
}

/// The runs of the lab's store: (status, error).
fn run_outcomes(lab: &Lab) -> Vec<(String, String)> {
    crate::util::runs(&lab.export_json())
        .iter()
        .map(|r| {
            (
                r["status"].as_str().unwrap_or("").to_string(),
                r["error"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect()
}

/// Item 4: qemu-storage-daemon stopped with SIGTERM after run 1: runs 2–3
/// failed with a bare `Input/output error`, nothing said the daemon died,
/// the campaign ended "finished" with no teardown error, a loop device
/// was left and `cleanup` said `nothing to clean up`. Now the runs after
/// it fail saying the daemon died and the target is degraded, and nothing
/// is left once `storlab cleanup` has run.
#[test]
#[ignore = "needs root"]
fn a_daemon_that_dies_fails_the_runs_in_words_and_nothing_is_left() {
    require_root!();
    require_program!("qemu-storage-daemon");
    let lab = Lab::new();
    let (mut guard, pidfile) = vm_campaign(&lab, "2");
    let storlab = guard.child().id();
    wait_for("run 1 in the store", 120, || {
        crate::util::runs_in_store(&lab.db()) >= 1
    });
    let daemon: i32 = std::fs::read_to_string(&pidfile)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    // The disk's loop device, by name: once the daemon ends it unmounts
    // its export, and the device no longer names the file it stands on.
    let export = lab.path().join(format!("storlab-{storlab}-vm/export"));
    let devices = crate::provision::loop_backing(export.to_str().unwrap());
    assert!(
        !devices.is_empty(),
        "no loop device on {}",
        export.display()
    );
    // SAFETY: a signal to the daemon this campaign started, by its pid.
    unsafe { libc::kill(daemon, libc::SIGTERM) };
    let (_, said) = guard.finish();
    let runs = run_outcomes(&lab);
    assert_eq!(runs[0].0, "ok", "{runs:?}");
    for (status, error) in &runs[1..] {
        assert_eq!(status, "failed", "{runs:?}");
        assert!(
            error.contains("qemu-storage-daemon") && error.contains("degraded"),
            "{runs:?}"
        );
    }
    // The guest's filesystem may answer EIO once its daemon is gone (the
    // working directory cannot be read): the teardown then says what it
    // could not undo, and why the target failed. Otherwise it undid all.
    if said.contains("teardown failed") {
        assert!(
            said.contains("target `vm` was degraded: qemu-storage-daemon"),
            "{said}"
        );
    } else {
        assert!(
            crate::provision::loop_backing(export.to_str().unwrap()).is_empty(),
            "a loop device is left on {} and the teardown said nothing: {said}",
            export.display()
        );
        assert_eq!(
            std::fs::read_dir(lab.state_dir()).unwrap().count(),
            0,
            "{said}"
        );
    }
    let cleaned = lab.run(&["cleanup"]);
    let cleaned = format!(
        "{}{}",
        String::from_utf8_lossy(&cleaned.stdout),
        String::from_utf8_lossy(&cleaned.stderr)
    );
    assert!(
        crate::provision::loop_backing(export.to_str().unwrap()).is_empty(),
        "a loop device is left on {}: {said}\n{cleaned}",
        export.display()
    );
    for dev in &devices {
        assert!(
            !crate::provision::loop_still_on(dev, export.to_str().unwrap()),
            "/dev/{dev} is still attached to the ended daemon's export: {said}\n{cleaned}"
        );
    }
    let base = lab.path().join(format!("storlab-{storlab}-vm"));
    assert!(
        !base.exists(),
        "{} is left: {said}\n{cleaned}",
        base.display()
    );
}

/// Item 4: a bpftrace stopped with SIGSTOP stalled every later run 15–45 s
/// (a 4 × 1 s campaign took 126 s, and those durations then taught `check`
/// a 2-minute estimate) and was never dropped. Now the tracer is dropped
/// as soon as a run waits on it, the runs after it say they are not
/// traced and why, they take their usual time, and bpftrace is ended.
#[test]
#[ignore = "needs root"]
fn a_stopped_tracer_is_dropped_and_the_runs_say_they_are_not_traced() {
    require_root!();
    require_program!("bpftrace");
    let lab = Lab::new();
    let text = format!(
        "name = \"stalled\"\n[plan]\nrepetitions = 4\n\n{}\n[[workload]]\nname = \"r\"\nkind = \"io\"\nrw = \"randread\"\nbs = \"4k\"\nsize = \"16M\"\ndirect = true\nruntime = \"1s\"\n",
        crate::telemetry::loop_target().replace("@DIR@", &lab.path().display().to_string())
    );
    let file = lab.file("exp.toml", &text);
    let mut guard = Guard::spawn_heard(&lab, &file);
    let storlab = guard.child().id();
    wait_for("run 1 in the store", 180, || {
        crate::util::runs_in_store(&lab.db()) >= 1
    });
    let tracer = children_named(storlab, "bpftrace");
    assert_eq!(tracer.len(), 1, "{tracer:?}");
    let tracer = tracer[0];
    // SAFETY: a signal to the bpftrace this campaign started, by its pid.
    unsafe { libc::kill(tracer as i32, libc::SIGSTOP) };
    let (status, said) = guard.finish();
    assert!(status.success(), "{said}");
    assert!(!alive(tracer), "bpftrace {tracer} was left stopped");
    let export = lab.export_json();
    let runs = crate::util::runs(&export);
    assert_eq!(runs.len(), 4);
    let fact = |r: &serde_json::Value| r["facts"]["block_trace"].as_str().unwrap_or("").to_string();
    assert!(
        fact(&runs[0]).starts_with("bpftrace v"),
        "{}",
        fact(&runs[0])
    );
    let dropped = format!(
        "not traced: bpftrace (pid {tracer}) stopped answering during the campaign: it is stopped"
    );
    for run in &runs[1..] {
        assert_eq!(run["status"], "ok", "{run}");
        // Run 2 may have been traced whole before the signal arrived.
        let f = fact(run);
        assert!(
            f.starts_with(&dropped) || (run == &runs[1] && f.starts_with("bpftrace v")),
            "{f}"
        );
        // Each waited on bpftrace for 15 s or more before; under load a
        // 1 s run takes a few.
        let took = run["duration_s"].as_f64().unwrap();
        assert!(took < 12.0, "a run took {took} s: {f}");
    }
    assert!(fact(&runs[3]).starts_with(&dropped));
}

/// Item 4, for Gluster: one of a volume's bricks (glusterfsd) killed by
/// its pid after run 1: the runs after it fail naming the brick and the
/// target degraded, and nothing of the volume is left after cleanup.
#[test]
#[ignore = "needs root"]
fn a_brick_that_dies_fails_the_runs_in_words() {
    require_root!();
    require_program!("glusterd");
    let _daemons = crate::provision::daemons();
    let lab = Lab::new();
    let text = format!(
        "name = \"gl-brick\"\n[plan]\nrepetitions = 3\n\
         [[target]]\nname = \"gl\"\nkind = \"gluster\"\nbricks = 2\ndir = \"{}\"\n\
         [[workload]]\nname = \"w\"\nkind = \"command\"\ncommand = [\"sh\", \"-c\", \"sleep 2; echo x > f\"]\n",
        lab.path().display()
    );
    let file = lab.file("gl.toml", &text);
    let mut guard = Guard::spawn_heard(&lab, &file);
    let storlab = guard.child().id();
    let volume = format!("storlab-{storlab}-gl");
    wait_for("run 1 in the store", 180, || {
        crate::util::runs_in_store(&lab.db()) >= 1
    });
    let (_, pidfile) = brick_runtime(&volume).pop().expect("a brick");
    let brick: i32 = std::fs::read_to_string(&pidfile)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    // SAFETY: a signal to a brick of this campaign's volume, by its pid.
    unsafe { libc::kill(brick, libc::SIGKILL) };
    let (_, said) = guard.finish();
    let runs = run_outcomes(&lab);
    assert_eq!(runs.len(), 3, "{said}");
    for (status, error) in &runs[1..] {
        assert_eq!(status, "failed", "{runs:?}");
        assert!(
            error.contains("glusterfsd for ")
                && error.contains("degraded")
                && error.contains(&format!("(pid {brick})")),
            "{runs:?}"
        );
    }
    let out = lab.run(&["cleanup"]);
    assert!(out.status.success(), "{said}");
    assert!(brick_runtime(&volume).is_empty(), "{said}");
    assert_eq!(
        std::fs::read_dir(lab.state_dir()).unwrap().count(),
        0,
        "{said}"
    );
}
