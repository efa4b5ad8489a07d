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
