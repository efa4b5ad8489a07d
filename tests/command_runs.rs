use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use crate::util::{metric, runs, storlab_mounts, Lab};

const MIB: f64 = 1024.0 * 1024.0;
const FILES: usize = 200;

/// A tree of small files in ten directories, archived with tar in the lab.
fn make_archive(lab: &Lab) -> PathBuf {
    let src = lab.path().join("src");
    for i in 0..FILES {
        let d = src.join(format!("tree/d{}", i % 10));
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(d.join(format!("f{i}")), vec![i as u8; 4096]).unwrap();
    }
    let tar = lab.path().join("tree.tar");
    let st = Command::new("tar")
        .arg("-cf")
        .arg(&tar)
        .arg("-C")
        .arg(&src)
        .arg("tree")
        .status()
        .unwrap();
    assert!(st.success());
    tar
}

/// Extracting the archive, twice over: as an argument vector, and through
/// an explicit shell that also counts what was extracted.
fn untar_workloads(tar: &Path) -> String {
    let tar = tar.display();
    format!(
        r#"
[[workload]]
name = "untar"
kind = "command"
command = ["tar", "-xf", "{tar}", "-C", "{{dir}}"]
cleanup = ["rm", "-rf", "{{dir}}/tree"]

[[workload]]
name = "untar-counted"
kind = "command"
shell = true
command = "tar -xf '{tar}' && test $(find {{dir}}/tree -type f | wc -l) -eq {FILES}"
cleanup = "rm -rf tree"

[[workload]]
name = "hooks"
kind = "command"
prepare = ["touch", "{{dir}}/ready"]
command = ["test", "-f", "ready"]
cleanup = ["rm", "{{dir}}/ready"]
"#
    )
}

/// Commands that show what is measured and how failures are told.
const MEASURED: &str = r#"
[[workload]]
name = "no-shell"
kind = "command"
command = ["echo", "$(touch pwned)", ";", "touch", "pwned2"]
cleanup = ["sh", "-c", "test ! -e pwned && test ! -e pwned2"]

[[workload]]
name = "memory"
kind = "command"
command = ["dd", "if=/dev/zero", "of=/dev/null", "bs=64M", "count=2"]

[[workload]]
name = "busy"
kind = "command"
command = ["sh", "-c", "i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done"]

[[workload]]
name = "fails"
kind = "command"
command = ["sh", "-c", "echo first >&2; echo 'last words' >&2; exit 3"]

[[workload]]
name = "hangs"
kind = "command"
command = ["sleep", "30"]
timeout = "300ms"
"#;

fn value(run: &Value, name: &str) -> f64 {
    crate::util::value_of(run, name)
        .unwrap_or_else(|| panic!("no metric {name} in {}", run["metrics"]))
}

fn runs_of<'a>(export: &'a Value, workload: &str) -> Vec<&'a Value> {
    runs(export)
        .iter()
        .filter(|r| r["workload"] == workload)
        .collect()
}

fn assert_untar_ok(export: &Value, target: &str, reps: usize) {
    for w in ["untar", "untar-counted", "hooks"] {
        let walls = metric(export, w, target, "wall_s");
        assert_eq!(walls.len(), reps, "{w} on {target}: {export}");
        assert!(walls.iter().all(|&s| s > 0.0 && s < 30.0), "{walls:?}");
    }
}

#[test]
fn commands_run_timed_in_the_working_directory_of_a_directory_target() {
    let lab = Lab::new();
    let tar = make_archive(&lab);
    let data = lab.path().join("data");
    std::fs::create_dir(&data).unwrap();
    let file = lab.file(
        "cmd.toml",
        &format!(
            "[plan]\nrepetitions = 2\n[[target]]\nname = \"data\"\nkind = \"dir\"\npath = \"{}\"\n{}{MEASURED}",
            data.display(),
            untar_workloads(&tar)
        ),
    );
    let stdout = lab.ok(&["run", "--quiet", file.to_str().unwrap()]);
    assert!(
        stdout.contains("12 of 16 planned runs ok, 4 failed"),
        "{stdout}"
    );
    assert!(stdout.contains("wall_s"), "{stdout}");
    let export = lab.export_json();
    assert_untar_ok(&export, "data", 2);
    assert_eq!(metric(&export, "no-shell", "data", "wall_s").len(), 2);
    for r in runs_of(&export, "memory") {
        let rss = value(r, "max_rss_bytes");
        assert!((64.0 * MIB..1024.0 * MIB).contains(&rss), "peak {rss}");
    }
    for r in runs_of(&export, "busy") {
        let user = value(r, "cpu_user_s");
        assert!(user > 0.02, "user {user}");
        assert!(value(r, "wall_s") >= 0.9 * user);
    }
    for r in runs_of(&export, "fails") {
        assert_eq!(r["status"], "failed");
        let error = r["error"].as_str().unwrap();
        assert!(
            error.contains("exit status 3") && error.contains("first | last words"),
            "{error}"
        );
    }
    for r in runs_of(&export, "hangs") {
        assert_eq!(r["status"], "failed");
        assert!(r["error"].as_str().unwrap().contains("timed out"), "{r}");
        assert!(r["duration_s"].as_f64().unwrap() < 5.0);
    }
    assert_eq!(
        std::fs::read_dir(&data).unwrap().count(),
        0,
        "nothing is left in the target"
    );
}

#[test]
#[ignore = "needs root"]
fn commands_run_on_tmpfs() {
    require_root!();
    let lab = Lab::new();
    let tar = make_archive(&lab);
    let name = format!("c{}", std::process::id());
    let file = lab.file(
        "cmd.toml",
        &format!(
            "[plan]\nrepetitions = 2\n[[target]]\nname = \"{name}\"\nkind = \"tmpfs\"\nsize = \"64M\"\n{}",
            untar_workloads(&tar)
        ),
    );
    let stdout = lab.ok(&["run", "--quiet", file.to_str().unwrap()]);
    assert!(stdout.contains("6 of 6 planned runs ok"), "{stdout}");
    assert_eq!(storlab_mounts(&name), 0, "the tmpfs is unmounted");
    assert_untar_ok(&lab.export_json(), &name, 2);
}

#[test]
fn a_command_string_is_not_given_to_a_shell_unless_asked() {
    let lab = Lab::new();
    let file = lab.file(
        "s.toml",
        "[[target]]\nname = \"d\"\nkind = \"dir\"\npath = \"/tmp\"\n[[workload]]\nname = \"w\"\nkind = \"command\"\ncommand = \"tar -xf a.tar\"\n",
    );
    let out = lab.run(&["check", file.to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains(
            ":8:11: workload `w`: `command` is one string with spaces but is not run by a shell"
        ),
        "{stderr}"
    );
}
