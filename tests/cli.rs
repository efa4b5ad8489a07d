//! The command line as a user meets it: `--version`, completions and man
//! pages, `init`, experiments on stdin, export formats, `-v` and `-q`,
//! closed output streams, SIGHUP, and external commands cut short by a
//! signal or their time limit.

use std::io::Read;
use std::os::fd::{FromRawFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use clap::CommandFactory;

use crate::util::{runs_in_store, storlab_mounts, Lab};

/// A mock experiment of `runs` runs of `ms` milliseconds on a directory.
fn mock_experiment(lab: &Lab, runs: u32, ms: u32) -> PathBuf {
    let data = lab.path().join("data");
    std::fs::create_dir_all(&data).unwrap();
    lab.file(
        "mock.toml",
        &format!(
            "name = \"mock\"\n[plan]\nrepetitions = {runs}\ndrop_caches = false\n\
             [[target]]\nname = \"d\"\nkind = \"dir\"\npath = \"{}\"\n\
             [[workload]]\nname = \"m\"\nkind = \"mock\"\nduration = \"{ms}ms\"\n",
            data.display()
        ),
    )
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// The status of the store's latest campaign and its runs.
fn latest_campaign(db: &Path) -> (String, i64) {
    let conn = rusqlite::Connection::open(db).unwrap();
    conn.query_row(
        "SELECT c.status, (SELECT COUNT(*) FROM runs r WHERE r.campaign_id = c.id)
         FROM campaigns c ORDER BY c.id DESC LIMIT 1",
        [],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )
    .unwrap()
}

fn wait_until(what: &str, secs: u64, mut done: impl FnMut() -> bool) {
    let t0 = Instant::now();
    while !done() {
        assert!(
            t0.elapsed() < Duration::from_secs(secs),
            "{what}: not within {secs} s"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A child killed (and reaped) on drop unless the test reaped it.
struct Running(Child);

impl Drop for Running {
    fn drop(&mut self) {
        if let Ok(None) = self.0.try_wait() {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
}

#[test]
fn version_names_the_commit_and_features_and_every_campaign_stores_it() {
    let lab = Lab::new();
    let version = lab.ok(&["--version"]);
    let version = version.trim();
    let rest = version.strip_prefix("storlab 0.1.0 (").expect(version);
    let (build, features) = rest
        .strip_suffix(')')
        .and_then(|r| r.split_once("; features: "))
        .expect(version);
    let commit = build.split([' ', '-']).next().unwrap();
    assert!(
        commit.len() >= 7 && commit.chars().all(|c| c.is_ascii_hexdigit()),
        "{version}"
    );
    let expected = if cfg!(feature = "mpi") { "mpi" } else { "none" };
    assert_eq!(features, expected, "{version}");
    let file = mock_experiment(&lab, 1, 0);
    lab.ok(&["run", "--quiet", file.to_str().unwrap()]);
    let export = lab.export_json();
    let stored = version.strip_prefix("storlab ").unwrap();
    assert_eq!(export["campaign"]["storlab_version"], stored);
    assert_eq!(export["environment"]["storlab_version"], stored);
}

fn subcommands() -> Vec<String> {
    storlab::cli::Cli::command()
        .get_subcommands()
        .map(|c| c.get_name().to_string())
        .collect()
}

#[test]
fn completions_and_man_pages_list_every_subcommand() {
    let lab = Lab::new();
    let names = subcommands();
    for expected in ["run", "init", "completions", "man", "export", "cleanup"] {
        assert!(names.iter().any(|n| n == expected), "{names:?}");
    }
    for shell in ["bash", "zsh", "fish"] {
        let script = lab.ok(&["completions", shell]);
        for name in &names {
            assert!(
                script.contains(name.as_str()),
                "{shell} completion lacks `{name}`"
            );
        }
    }
    let bash = lab.ok(&["completions", "bash"]);
    assert!(bash.contains("complete -F _storlab"), "{bash}");
    let page = lab.ok(&["man"]);
    assert!(
        page.starts_with(".ie") || page.contains(".TH storlab 1"),
        "{page}"
    );
    for name in &names {
        assert!(
            page.contains(&format!("storlab\\-{name}(1)")),
            "man page lacks `{name}`"
        );
    }
    let dir = lab.path().join("man1");
    lab.ok(&["man", dir.to_str().unwrap()]);
    assert!(dir.join("storlab.1").is_file());
    for name in &names {
        let sub = dir.join(format!("storlab-{name}.1"));
        assert!(sub.is_file(), "no {}", sub.display());
    }
}

#[test]
fn init_writes_a_starter_that_check_accepts_and_stdin_is_read_for_dash() {
    let lab = Lab::new();
    let out = lab.run(&["init"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let file = lab.path().join("experiment.toml");
    let written = std::fs::read_to_string(&file).unwrap();
    assert!(written.contains("# "), "commented");
    let check = lab.ok(&["check", "experiment.toml"]);
    assert!(check.contains("valid experiment `quick`"), "{check}");
    assert!(check.contains("targets: cwd (dir), tmpfs"), "{check}");
    // Never over a file the user has.
    let again = lab.run(&["init"]);
    assert_eq!(again.status.code(), Some(2));
    assert!(text(&again.stderr).contains("--force"), "{again:?}");
    lab.ok(&["init", "--force"]);
    assert_eq!(lab.ok(&["init", "-"]), written);
    // `-` reads the experiment from stdin, for check and run.
    let piped = |args: &[&str], input: &str| {
        let mut child = lab
            .cmd()
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        use std::io::Write;
        child
            .stdin
            .take()
            .unwrap()
            .write_all(input.as_bytes())
            .unwrap();
        child.wait_with_output().unwrap()
    };
    let out = piped(&["check", "-"], &written);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stdout).starts_with("<stdin>: valid experiment `quick`"));
    let mock = std::fs::read_to_string(mock_experiment(&lab, 2, 0)).unwrap();
    let out = piped(&["run", "--quiet", "-"], &mock);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("2 of 2 planned runs ok"));
    let bad = piped(
        &["check", "-"],
        "[[target]]\nname = \"a\"\nkind = \"tmpsf\"\n",
    );
    assert_eq!(bad.status.code(), Some(2));
    assert!(
        text(&bad.stderr).starts_with("error: <stdin>:3:8: "),
        "{}",
        text(&bad.stderr)
    );
}

/// The CSV as pandas and R read it, checked with Python's csv module:
/// each row says its campaign (id, uuid, name, host), its run's start,
/// duration and whether caches were dropped, and a `tag.NAME` column per
/// tag; `export --all` puts every campaign under one header; text that
/// looks like a formula is left as it is unless `--excel-safe`, and a
/// number never changes.
#[test]
fn the_csv_is_read_by_pythons_csv_module_with_campaign_run_and_tag_columns() {
    crate::util::require_program("python3");
    let lab = Lab::new();
    let file = mock_experiment(&lab, 2, 0);
    let file = file.to_str().unwrap();
    lab.ok(&[
        "run",
        "-q",
        "--tag",
        "fs=ext4",
        "--tag",
        "note=-x, \"y\"",
        file,
    ]);
    lab.ok(&[
        "run",
        "-q",
        "--tag",
        "fs=xfs",
        "--tag",
        "gluster=11.1",
        file,
    ]);
    let read = |args: &[&str]| -> serde_json::Value {
        let csv = lab.path().join("runs.csv");
        let mut all = args.to_vec();
        all.extend(["-o", csv.to_str().unwrap()]);
        lab.ok(&all);
        let script = "import csv, json, sys\n\
            rows = list(csv.DictReader(open(sys.argv[1], newline='')))\n\
            json.dump({'columns': list(rows[0].keys()), 'rows': rows,\n\
                       'durations': [float(r['duration_s']) for r in rows],\n\
                       'values': [float(r['value']) for r in rows if r['value']]}, sys.stdout)\n";
        let out = std::process::Command::new("python3")
            .args(["-c", script, csv.to_str().unwrap()])
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", text(&out.stderr));
        serde_json::from_slice(&out.stdout).unwrap()
    };
    let doc = read(&["export", "--all"]);
    let columns: Vec<&str> = doc["columns"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c.as_str().unwrap())
        .collect();
    for c in [
        "campaign",
        "campaign_uuid",
        "campaign_name",
        "host",
        "run",
        "started_at",
        "duration_s",
        "caches_dropped",
        "metric",
        "value",
        "unit",
        "tag.fs",
        "tag.gluster",
        "tag.note",
    ] {
        assert!(columns.contains(&c), "{c} not in {columns:?}");
    }
    let rows = doc["rows"].as_array().unwrap();
    let campaigns: std::collections::BTreeSet<&str> = rows
        .iter()
        .map(|r| r["campaign"].as_str().unwrap())
        .collect();
    assert_eq!(campaigns.into_iter().collect::<Vec<_>>(), ["1", "2"]);
    let hostname = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap();
    for r in rows {
        let first = r["campaign"] == "1";
        assert_eq!(r["campaign_name"], "mock");
        assert_eq!(r["campaign_uuid"].as_str().unwrap().len(), 36, "{r}");
        assert_eq!(r["host"], hostname.trim());
        assert_eq!(r["caches_dropped"], "false");
        assert!(r["started_at"].as_str().unwrap().starts_with("20"), "{r}");
        assert_eq!(r["tag.fs"], if first { "ext4" } else { "xfs" });
        assert_eq!(r["tag.gluster"], if first { "" } else { "11.1" });
        // Foreign text is written as it was given, quoted, not defused.
        assert_eq!(r["tag.note"], if first { "-x, \"y\"" } else { "" });
    }
    assert_eq!(doc["durations"].as_array().unwrap().len(), rows.len());
    let uuids: std::collections::BTreeSet<&str> = rows
        .iter()
        .map(|r| r["campaign_uuid"].as_str().unwrap())
        .collect();
    assert_eq!(uuids.len(), 2);
    // --excel-safe defuses the text, never a number; one campaign alone
    // has only its own tags.
    let safe = read(&["export", "1", "--excel-safe"]);
    let rows = safe["rows"].as_array().unwrap();
    assert!(rows.iter().all(|r| r["tag.note"] == "'-x, \"y\""), "{safe}");
    assert!(safe["columns"]
        .as_array()
        .unwrap()
        .iter()
        .all(|c| c != "tag.gluster"));
    assert_eq!(safe["values"], read(&["export", "1"])["values"]);
    let out = lab.run(&["export", "--excel-safe", "--format", "json"]);
    assert_eq!(out.status.code(), Some(2));
    // JSON of every campaign: an array of the one-campaign documents.
    let all: serde_json::Value =
        serde_json::from_str(&lab.ok(&["export", "--all", "--format", "json"])).unwrap();
    assert_eq!(all.as_array().map(Vec::len), Some(2));
    assert_eq!(all[1]["provenance"]["tags"]["gluster"], "11.1");
}

#[test]
fn export_writes_the_format_its_file_names_and_refuses_a_contradiction() {
    let lab = Lab::new();
    let file = mock_experiment(&lab, 2, 0);
    lab.ok(&["run", "--quiet", file.to_str().unwrap()]);
    let json = lab.path().join("x.json");
    let out = lab.run(&["export", "-o", json.to_str().unwrap()]);
    assert!(out.status.success());
    assert!(text(&out.stderr).contains("wrote"), "{out:?}");
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).expect("x.json is JSON");
    assert_eq!(doc["runs"].as_array().unwrap().len(), 2);
    let csv = lab.path().join("x.csv");
    lab.ok(&["export", "-o", csv.to_str().unwrap()]);
    assert!(std::fs::read_to_string(&csv)
        .unwrap()
        .starts_with("campaign,"));
    // --format against the extension is refused, and nothing is written.
    let clash = lab.path().join("y.json");
    let out = lab.run(&["export", "--format", "csv", "-o", clash.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    assert!(
        err.contains("--format csv contradicts") && err.contains("y.csv"),
        "{err}"
    );
    assert!(!clash.exists());
    let out = lab.run(&["report", "--format", "html", "-o", "r.md"]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    // -q silences "wrote FILE".
    let out = lab.run(&["-q", "report", "-o", "r.html"]);
    assert!(out.status.success());
    assert_eq!(text(&out.stderr), "");
    assert!(lab.path().join("r.html").is_file());
}

/// A pipe: (read end, write end).
fn pipe() -> (std::fs::File, OwnedFd) {
    let mut fds = [0; 2];
    // SAFETY: fds is valid for two descriptors; O_CLOEXEC keeps them out of
    // other tests' children.
    assert_eq!(unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) }, 0);
    // SAFETY: pipe2 just opened both; each is owned once.
    unsafe {
        (
            std::fs::File::from_raw_fd(fds[0]),
            OwnedFd::from_raw_fd(fds[1]),
        )
    }
}

/// `storlab ARGS 2>&1 | head -1` (or `| head -1` alone when `both` is
/// false): the first line and the exit status.
fn head_one(lab: &Lab, args: &[&str], both: bool) -> (String, std::process::ExitStatus) {
    let (mut reader, writer) = pipe();
    let mut cmd = lab.cmd();
    cmd.args(args)
        .stdout(Stdio::from(writer.try_clone().unwrap()));
    if both {
        cmd.stderr(Stdio::from(writer));
    } else {
        cmd.stderr(Stdio::null());
        drop(writer);
    }
    let child = Running(cmd.spawn().unwrap());
    drop(cmd);
    let mut line = Vec::new();
    let mut byte = [0u8];
    while reader.read(&mut byte).unwrap_or(0) == 1 && byte[0] != b'\n' {
        line.push(byte[0]);
    }
    drop(reader);
    let mut child = child;
    let status = child.0.wait().unwrap();
    (text(&line), status)
}

#[test]
fn a_closed_stdout_or_stderr_never_panics_and_the_campaign_is_recorded() {
    let lab = Lab::new();
    let file = mock_experiment(&lab, 4, 300);
    let file = file.to_str().unwrap();
    // stderr and stdout into `head -1`: the reader goes after the first
    // progress line; the campaign stops as interrupted, resumable.
    let (line, status) = head_one(&lab, &["run", file], true);
    assert!(line.starts_with("storlab: 4 runs planned"), "{line}");
    assert!(
        status.success() || status.code() == Some(130),
        "{status:?}: a panic exits 101"
    );
    let (state, runs) = latest_campaign(&lab.db());
    assert_eq!(state, "interrupted");
    assert!(runs < 4, "{runs} runs");
    let resumed = lab.ok(&["run", "--quiet", "--resume", "mock"]);
    assert!(resumed.contains("4 of 4 planned runs ok"), "{resumed}");
    // stdout alone into `head -1`: nothing reads progress, the campaign
    // finishes, and its summary meets the closed pipe quietly.
    let (line, status) = head_one(&lab, &["run", file], false);
    assert!(line.starts_with("campaign 2 `mock` (finished)"), "{line}");
    assert!(status.success(), "{status:?}");
    assert_eq!(latest_campaign(&lab.db()), ("finished".into(), 4));
    for args in [
        &["show"][..],
        &["list"],
        &["export"],
        &["completions", "bash"],
    ] {
        let (_, status) = head_one(&lab, args, true);
        assert!(status.success(), "{args:?}: {status:?}");
    }
}

#[test]
#[ignore = "needs root"]
fn sighup_tears_down_like_sigterm_and_the_campaign_resumes() {
    require_root!();
    let lab = Lab::new();
    let name = format!("hup{}", std::process::id());
    let file = lab.file(
        "hup.toml",
        &format!(
            "name = \"hup\"\n[plan]\nrepetitions = 5\n\
             [[target]]\nname = \"{name}\"\nkind = \"tmpfs\"\nsize = \"16M\"\n\
             [[workload]]\nname = \"m\"\nkind = \"mock\"\nduration = \"400ms\"\n"
        ),
    );
    let mut child = Running(
        lab.cmd()
            .args(["run", "--quiet", file.to_str().unwrap()])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    wait_until("the first run", 60, || runs_in_store(&lab.db()) >= 1);
    assert_eq!(storlab_mounts(&name), 1, "the tmpfs is mounted");
    // SAFETY: kill on the child this test started.
    unsafe { libc::kill(child.0.id() as libc::pid_t, libc::SIGHUP) };
    let status = child.0.wait().unwrap();
    assert_eq!(status.code(), Some(130), "{status:?}");
    assert_eq!(storlab_mounts(&name), 0, "the tmpfs is unmounted");
    let left = std::fs::read_dir(lab.state_dir())
        .map(|d| d.count())
        .unwrap_or(0);
    assert_eq!(left, 0, "the journal is finished");
    let (state, runs) = latest_campaign(&lab.db());
    assert_eq!(state, "interrupted");
    assert!(runs < 5);
    let resumed = lab.ok(&["run", "--quiet", "--resume", "hup"]);
    assert!(resumed.contains("5 of 5 planned runs ok"), "{resumed}");
    assert_eq!(storlab_mounts(&name), 0);
}

/// A directory holding a `mount` that hangs and ignores SIGINT and SIGTERM,
/// as mount(8) on a dead hard-mounted NFS server does; it writes its pid
/// to `mark` first.
fn stuck_mount(lab: &Lab) -> (PathBuf, PathBuf) {
    let bin = lab.path().join("fake-bin");
    std::fs::create_dir_all(&bin).unwrap();
    let mark = lab.path().join("mount.pid");
    let script = format!(
        "#!/bin/sh\ntrap '' INT TERM\necho $$ > {}\nexec sleep 600\n",
        mark.display()
    );
    let path = bin.join("mount");
    std::fs::write(&path, script).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    (bin, mark)
}

fn with_path_first(dir: &Path) -> String {
    format!(
        "{}:{}",
        dir.display(),
        std::env::var("PATH").unwrap_or_default()
    )
}

/// The tmpfs experiment the stuck-mount tests provision.
fn tmpfs_experiment(lab: &Lab, name: &str) -> PathBuf {
    lab.file(
        "stuck.toml",
        &format!(
            "name = \"stuck\"\n[[target]]\nname = \"{name}\"\nkind = \"tmpfs\"\nsize = \"16M\"\n\
             [[workload]]\nname = \"m\"\nkind = \"mock\"\n"
        ),
    )
}

fn alive(pid: &str) -> bool {
    Path::new("/proc").join(pid.trim()).exists()
}

#[test]
#[ignore = "needs root"]
fn a_stuck_external_command_is_interrupted_by_the_first_sigint_and_torn_down() {
    require_root!();
    let lab = Lab::new();
    let (bin, mark) = stuck_mount(&lab);
    let name = format!("stuck{}", std::process::id());
    let file = tmpfs_experiment(&lab, &name);
    let mut child = Running(
        lab.cmd()
            .args(["run", "-v", file.to_str().unwrap()])
            .env("PATH", with_path_first(&bin))
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap(),
    );
    wait_until("the stuck mount", 60, || mark.exists());
    let pid = child.0.id();
    let t0 = Instant::now();
    // SAFETY: kill on the child this test started.
    unsafe { libc::kill(pid as libc::pid_t, libc::SIGINT) };
    let mut err = String::new();
    child
        .0
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    let status = child.0.wait().unwrap();
    assert!(t0.elapsed() < Duration::from_secs(15), "{:?}", t0.elapsed());
    assert_eq!(status.code(), Some(130), "{status:?}: {err}");
    // -v echoed the command as a shell line; the error names it.
    assert!(err.contains("mount -t tmpfs -o"), "{err}");
    assert!(err.contains("was interrupted by a signal"), "{err}");
    assert!(
        !alive(&std::fs::read_to_string(&mark).unwrap()),
        "the stuck mount is gone"
    );
    assert_eq!(latest_campaign(&lab.db()), ("interrupted".into(), 0));
    let mountpoint = std::env::temp_dir().join(format!("storlab-tmpfs-{name}-{pid}"));
    assert!(
        !mountpoint.exists(),
        "teardown removed {}",
        mountpoint.display()
    );
    let left = std::fs::read_dir(lab.state_dir())
        .map(|d| d.count())
        .unwrap_or(0);
    assert_eq!(left, 0, "the journal is finished");
}

#[test]
#[ignore = "needs root"]
fn a_stuck_external_command_fails_at_its_time_limit_naming_it() {
    require_root!();
    let lab = Lab::new();
    let (bin, mark) = stuck_mount(&lab);
    let name = format!("slow{}", std::process::id());
    let file = tmpfs_experiment(&lab, &name);
    let t0 = Instant::now();
    let out = lab
        .cmd()
        .args(["run", file.to_str().unwrap()])
        .env("PATH", with_path_first(&bin))
        .env("STORLAB_COMMAND_TIMEOUT", "1")
        .output()
        .unwrap();
    assert!(t0.elapsed() < Duration::from_secs(20), "{:?}", t0.elapsed());
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let err = text(&out.stderr);
    assert!(
        err.contains("`mount -t tmpfs") && err.contains("did not finish within 1 s"),
        "{err}"
    );
    assert!(err.contains("STORLAB_COMMAND_TIMEOUT"), "{err}");
    assert!(!alive(&std::fs::read_to_string(&mark).unwrap()));
    assert_eq!(latest_campaign(&lab.db()), ("failed".into(), 0));
    let left = std::fs::read_dir(lab.state_dir())
        .map(|d| d.count())
        .unwrap_or(0);
    assert_eq!(left, 0, "the journal is finished");
}
