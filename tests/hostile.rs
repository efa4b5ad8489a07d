//! Hostile input and faults, round 3 (issue #29), each as the case that
//! broke: the store overwritten by an output file, fio jobs escaping the
//! working directory, unbounded sweeps, imports of bad rows, foreign text
//! driving the terminal, cleanup stopping at a failure, daemons left
//! running, exit codes, symlinks followed.

use std::path::{Path, PathBuf};
use std::process::Output;

use crate::util::Lab;

fn text(out: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// A mock experiment of `runs` runs on a directory of the lab.
fn mock_experiment(lab: &Lab, runs: u32) -> PathBuf {
    let data = lab.path().join("data");
    std::fs::create_dir_all(&data).unwrap();
    lab.file(
        "mock.toml",
        &format!(
            "name = \"mock\"\n[plan]\nrepetitions = {runs}\ndrop_caches = false\n\
             [[target]]\nname = \"d\"\nkind = \"dir\"\npath = \"{}\"\n\
             [[workload]]\nname = \"m\"\nkind = \"mock\"\nduration = \"1ms\"\n",
            data.display()
        ),
    )
}

fn sha(path: &Path) -> Vec<u8> {
    std::fs::read(path).unwrap()
}

/// 1. No output file is the store: not by its name, a symlink to it, its
/// WAL, and an extension no format claims is no reason to write HTML.
#[test]
fn no_output_file_overwrites_the_store() {
    let lab = Lab::new();
    let file = mock_experiment(&lab, 2);
    lab.ok(&["run", "--quiet", file.to_str().unwrap()]);
    let db = lab.db();
    std::os::unix::fs::symlink(&db, lab.path().join("link.db")).unwrap();
    let before = sha(&db);
    let d = db.to_str().unwrap();
    let attempts: Vec<Vec<&str>> = vec![
        vec!["report", "-o", d],
        vec!["report", "--format", "html", "-o", d],
        vec!["report", "--format", "md", "-o", d],
        vec!["report", "1", "1", "--format", "html", "-o", d],
        vec!["export", "--format", "csv", "-o", d],
        vec!["export", "--format", "json", "-o", d],
        vec!["history", "-o", d],
        vec!["report", "--format", "html", "-o", "link.db"],
        vec!["export", "--format", "csv", "-o", "./results.db"],
        vec!["report", "--format", "html", "-o", "results.db-wal"],
    ];
    for args in &attempts {
        let out = lab.run(args);
        let (_, err) = text(&out);
        assert!(!out.status.success(), "{args:?} succeeded: {err}");
        assert!(
            err.contains("results store") && !err.contains("wrote"),
            "{args:?}: {err}"
        );
        assert_eq!(sha(&db), before, "{args:?} changed the store");
    }
    // An unknown extension without --format is refused, naming a way out.
    let out = lab.run(&["report", "-o", "other.db"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out).1.contains("--format html"), "{out:?}");
    assert!(!lab.path().join("other.db").exists());
    // The store still answers.
    assert!(lab.ok(&["list"]).contains("mock"));
}

/// 10. `init --force` and `man DIR` replace a symlink at their file's name
/// instead of writing through it; `init` without --force counts a dangling
/// symlink as something there.
#[test]
fn init_and_man_do_not_write_through_symlinks() {
    let lab = Lab::new();
    let victim = lab.path().join("victim");
    std::fs::write(&victim, "precious").unwrap();
    let link = lab.path().join("experiment.toml");
    std::os::unix::fs::symlink(&victim, &link).unwrap();
    lab.ok(&["init", "--force"]);
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
    assert!(std::fs::read_to_string(&link)
        .unwrap()
        .contains("[[target]]"));
    // A dangling symlink is something there: refused without --force, and
    // its target is not created.
    let nowhere = lab.path().join("nowhere.toml");
    std::os::unix::fs::symlink(&nowhere, lab.path().join("e2.toml")).unwrap();
    let out = lab.run(&["init", "e2.toml"]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(!nowhere.exists());
    // man DIR: a page's name linked to another file.
    let dir = lab.path().join("man1");
    std::fs::create_dir(&dir).unwrap();
    std::os::unix::fs::symlink(&victim, dir.join("storlab-run.1")).unwrap();
    lab.ok(&["man", dir.to_str().unwrap()]);
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
    let page = dir.join("storlab-run.1");
    assert!(!std::fs::symlink_metadata(&page).unwrap().is_symlink());
    assert!(std::fs::read_to_string(&page).unwrap().contains("storlab"));
    let leftovers: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().starts_with('.'))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}
