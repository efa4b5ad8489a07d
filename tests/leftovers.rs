//! What storlab starts, mounts or registers outlives it only journaled
//! (#40 items 3, 4, 5, 7), each case as it broke: a child killed with
//! storlab, a daemon that dies or stops during a campaign, what a killed
//! campaign mounted or registered outside its journal, and a cleanup whose
//! reader goes away.

use std::path::Path;
use std::process::Stdio;

use crate::util::Lab;

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
