//! Test helpers: an isolated directory per test and a command builder for
//! the real binary.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// A fresh directory for one test, removed when dropped.
pub struct Lab {
    pub dir: tempfile::TempDir,
}

impl Lab {
    pub fn new() -> Lab {
        Lab {
            dir: tempfile::Builder::new()
                .prefix("storlab-test-")
                .tempdir()
                .expect("temp dir"),
        }
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// Where this test's campaigns keep their provisioning journals.
    pub fn state_dir(&self) -> PathBuf {
        self.path().join("state")
    }

    pub fn db(&self) -> PathBuf {
        self.path().join("results.db")
    }

    /// Writes an experiment file and returns its path.
    pub fn file(&self, name: &str, text: &str) -> PathBuf {
        let p = self.path().join(name);
        std::fs::write(&p, text).expect("write experiment");
        p
    }

    /// A `storlab` command with the store in this lab and cwd set to it.
    pub fn cmd(&self) -> Command {
        let mut c = Command::new(env!("CARGO_BIN_EXE_storlab"));
        c.current_dir(self.path())
            .env("STORLAB_DB", self.db())
            .env("STORLAB_STATE_DIR", self.state_dir())
            .env_remove("RUST_BACKTRACE")
            // Output is fitted to COLUMNS when set; goldens are the full width.
            .env_remove("COLUMNS")
            // Colour only where a test asks for it.
            .env_remove("CLICOLOR_FORCE")
            .env_remove("CLICOLOR")
            .env_remove("NO_COLOR");
        c
    }

    /// Runs `file`, SIGKILLs the campaign each time the store holds
    /// `kill_after[i]` runs (waiting at most `wait`), resumes campaign
    /// `name` after each kill, and returns the last process's status.
    pub fn kill_and_resume(
        &self,
        file: &Path,
        name: &str,
        kill_after: &[i64],
        wait: std::time::Duration,
    ) -> std::process::ExitStatus {
        let first = ["run", "--quiet", file.to_str().unwrap()];
        self.kill_and_resume_command(&first, name, kill_after, wait)
    }

    /// [`Lab::kill_and_resume`] of the campaign that storlab `first` starts
    /// (`replicate 1`), counting the store's runs.
    pub fn kill_and_resume_command(
        &self,
        first: &[&str],
        name: &str,
        kill_after: &[i64],
        wait: std::time::Duration,
    ) -> std::process::ExitStatus {
        let spawn = |args: &[&str]| {
            self.cmd()
                .args(args)
                .stdout(std::process::Stdio::null())
                .spawn()
                .expect("spawn storlab")
        };
        let mut child = spawn(first);
        for &n in kill_after {
            let t0 = std::time::Instant::now();
            while runs_in_store(&self.db()) < n {
                assert!(t0.elapsed() < wait, "{n} runs not stored within {wait:?}");
                std::thread::sleep(std::time::Duration::from_millis(10));
            }
            child.kill().unwrap();
            child.wait().unwrap();
            child = spawn(&["run", "--quiet", "--resume", name]);
        }
        child.wait().unwrap()
    }

    /// `storlab --db DB ARGS…` as user nobody (setpriv), in this lab with
    /// its state directory; the lab's directory must be open to it.
    pub fn as_nobody(&self, args: &[&str]) -> Command {
        let mut c = Command::new("setpriv");
        c.args(["--reuid=65534", "--regid=65534", "--clear-groups"])
            .arg(env!("CARGO_BIN_EXE_storlab"))
            .args(["--db", self.db().to_str().unwrap()])
            .args(args)
            .current_dir(self.path())
            .env("STORLAB_STATE_DIR", self.state_dir());
        c
    }

    pub fn run(&self, args: &[&str]) -> Output {
        self.cmd().args(args).output().expect("run storlab")
    }

    /// Runs and asserts success, returning stdout.
    pub fn ok(&self, args: &[&str]) -> String {
        let out = self.run(args);
        assert!(
            out.status.success(),
            "storlab {args:?} failed ({:?}):\n{}\n{}",
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// The JSON export of the latest campaign.
    pub fn export_json(&self) -> serde_json::Value {
        serde_json::from_str(&self.ok(&["export", "--format", "json"])).expect("export is JSON")
    }

    /// The JSON export of the latest campaign, or `None` — for guards,
    /// which must never panic in `Drop`.
    pub fn try_export_json(&self) -> Option<serde_json::Value> {
        let out = self
            .cmd()
            .args(["export", "--format", "json"])
            .output()
            .ok()?;
        serde_json::from_slice(&out.stdout).ok()
    }

    /// Runs `storlab cleanup` on this lab's journals, ignoring every
    /// failure (for guards).
    /// `storlab cleanup`, again while it keeps a tracefs it mounted for
    /// bpftrace because another storlab (a test beside this one) attaches
    /// (at most 30 s): the outputs of every pass, joined.
    pub fn cleanup_until_no_tracefs_is_kept(&self) -> String {
        const KEPT: &str = "kept: tracefs on /sys/kernel/tracing";
        let mut out = self.ok(&["cleanup"]);
        let mut all = out.clone();
        for _ in 0..60 {
            if !out.contains(KEPT) {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(500));
            out = self.ok(&["cleanup"]);
            all.push_str(&out);
        }
        all
    }

    pub fn try_cleanup(&self) {
        let _ = self.cmd().arg("cleanup").output();
    }
}

/// The programs the tests run and the Debian package of each; scripts/test
/// installs them all (a test checks that it names each package).
pub const PROGRAMS: &[(&str, &str)] = &[
    ("fio", "fio"),
    ("mkfs.ext4", "e2fsprogs"),
    ("mkfs.xfs", "xfsprogs"),
    ("mkfs.btrfs", "btrfs-progs"),
    ("losetup", "mount"),
    ("zfs-fuse", "zfs-fuse"),
    ("zpool", "zfs-fuse"),
    ("zfs", "zfs-fuse"),
    ("glusterd", "glusterfs-server"),
    ("gluster", "glusterfs-server"),
    ("glusterfs", "glusterfs-client"),
    ("chromium", "chromium"),
    ("pg_config", "postgresql"),
    ("mpirun", "openmpi-bin"),
    ("qemu-img", "qemu-utils"),
    ("qemu-storage-daemon", "qemu-system-common"),
    ("bpftrace", "bpftrace"),
    ("ganesha.nfsd", "nfs-ganesha"),
    ("rpcbind", "rpcbind"),
    ("nfs-ls", "libnfs-utils"),
];

/// Whether `program` is on PATH or in the sbin directories root uses.
pub fn installed(program: &str) -> bool {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain(["/usr/sbin", "/sbin", "/usr/bin"].map(PathBuf::from))
        .any(|d| d.join(program).is_file())
}

/// Fails the test in one line naming the Debian package when a program it
/// needs is missing: `scripts/test` installs them all.
macro_rules! require_program {
    ($program:expr) => {
        crate::util::require_program($program)
    };
}

pub fn require_program(program: &str) {
    if installed(program) {
        return;
    }
    let package = PROGRAMS
        .iter()
        .find(|(p, _)| *p == program)
        .map(|(_, pkg)| *pkg)
        .unwrap_or("?");
    panic!("{program} is not installed: install the Debian package `{package}` (scripts/test installs every package the tests use)");
}

pub fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

/// The first line of a test that mounts, provisions or drops caches. Such a
/// test is also `#[ignore = "needs root"]`, so that a run without root
/// counts it among the ignored, with the reason, rather than as passed
/// (`tests/suite.rs` checks both go together); scripts/test runs them as
/// root with `--include-ignored`. Included without root, it fails saying so.
macro_rules! require_root {
    () => {
        assert!(
            crate::util::is_root(),
            "this test needs root (it mounts, provisions or drops caches): run it as root, as scripts/test does"
        );
    };
}

/// Value of `metric` (without labels) in every measured run of `workload`
/// on `target`.
pub fn metric(export: &serde_json::Value, workload: &str, target: &str, metric: &str) -> Vec<f64> {
    labelled(export, workload, target, metric, &[])
}

/// Value of `metric` with exactly `labels` in every measured run of
/// `workload` on `target`.
pub fn labelled(
    export: &serde_json::Value,
    workload: &str,
    target: &str,
    metric: &str,
    labels: &[(&str, &str)],
) -> Vec<f64> {
    export["runs"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["workload"] == workload && r["target"] == target && r["status"] == "ok")
        .map(|r| labelled_value(r, metric, labels).unwrap_or(f64::NAN))
        .collect()
}

/// The value of `name` without labels in one exported run.
pub fn value_of(run: &serde_json::Value, name: &str) -> Option<f64> {
    labelled_value(run, name, &[])
}

/// The value of `name` with exactly `labels` in one exported run.
pub fn labelled_value(run: &serde_json::Value, name: &str, labels: &[(&str, &str)]) -> Option<f64> {
    let want: serde_json::Map<String, serde_json::Value> = labels
        .iter()
        .map(|(k, v)| (k.to_string(), serde_json::Value::from(*v)))
        .collect();
    run["metrics"]
        .as_array()?
        .iter()
        .find(|m| m["name"] == name && m["labels"].as_object() == Some(&want))
        .and_then(|m| m["value"].as_f64())
}

/// The values of series `name` (without labels) of one exported run.
pub fn series_of(run: &serde_json::Value, name: &str) -> Vec<serde_json::Value> {
    run["series"]
        .as_array()
        .and_then(|s| {
            s.iter()
                .find(|x| x["name"] == name && x["labels"] == serde_json::json!({}))
        })
        .and_then(|x| x["values"].as_array().cloned())
        .unwrap_or_default()
}

static MEASURING: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Held by tests whose assertions depend on measured speed, so that the
/// suite's other tests (and their cache drops) do not run beside them.
pub fn measuring_alone() -> std::sync::MutexGuard<'static, ()> {
    MEASURING.lock().unwrap_or_else(|e| e.into_inner())
}

/// The block device mounted on `/`, from mountinfo.
pub fn root_device() -> String {
    let info = std::fs::read_to_string("/proc/self/mountinfo").unwrap();
    info.lines()
        .find(|l| l.split(' ').nth(4) == Some("/"))
        .and_then(|l| l.split(" - ").nth(1))
        .and_then(|r| r.split(' ').nth(1))
        .expect("a root mount")
        .to_string()
}

/// A tmpfs the test mounts itself, unmounted on drop even if the test fails.
pub struct TestMount(pub PathBuf);

impl TestMount {
    pub fn new(dir: PathBuf, size: &str) -> TestMount {
        std::fs::create_dir_all(&dir).unwrap();
        let st = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "storlab-test"])
            .arg(&dir)
            .status()
            .unwrap();
        assert!(st.success());
        TestMount(dir)
    }
}

impl Drop for TestMount {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.0).status();
    }
}

/// How many tmpfs mounts storlab made for a target named `name` are left.
pub fn storlab_mounts(name: &str) -> usize {
    let text = std::fs::read_to_string("/proc/self/mountinfo").unwrap();
    text.lines()
        .filter(|l| l.contains(&format!("storlab-tmpfs-{name}-")))
        .count()
}

/// The runs of the latest campaign's JSON export.
pub fn runs(export: &serde_json::Value) -> &Vec<serde_json::Value> {
    export["runs"].as_array().expect("runs")
}

/// Runs recorded in the store so far (0 before it exists).
/// Runs stored as failed so far (a campaign may still be running).
pub fn failed_runs(db: &Path) -> i64 {
    let Ok(conn) = rusqlite::Connection::open(db) else {
        return 0;
    };
    conn.query_row(
        "SELECT COUNT(*) FROM runs WHERE status = 'failed'",
        [],
        |r| r.get(0),
    )
    .unwrap_or(0)
}

pub fn runs_in_store(db: &Path) -> i64 {
    let Ok(conn) = rusqlite::Connection::open(db) else {
        return 0;
    };
    conn.query_row("SELECT COUNT(*) FROM runs", [], |r| r.get(0))
        .unwrap_or(0)
}

/// A `dir` target `name` on its own directory in the lab.
pub fn dir_target(lab: &Lab, name: &str) -> String {
    let p = lab.path().join(name);
    std::fs::create_dir_all(&p).unwrap();
    format!(
        "[[target]]\nname = \"{name}\"\nkind = \"dir\"\npath = \"{}\"\n",
        p.display()
    )
}

/// Why each pair of an export stopped: (workload, reason, measured runs).
pub fn stops(export: &serde_json::Value) -> Vec<(String, String, u64)> {
    export["stops"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["workload"].as_str().unwrap().to_string(),
                s["reason"].as_str().unwrap().to_string(),
                s["measured_runs"].as_u64().unwrap(),
            )
        })
        .collect()
}

/// The targets of an export's runs in the order they ran.
pub fn targets_in_order(export: &serde_json::Value) -> Vec<String> {
    let mut runs: Vec<(u64, String)> = export["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["position"].as_u64().unwrap(),
                r["target"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    runs.sort();
    runs.into_iter().map(|r| r.1).collect()
}

/// The mock model of simulated campaign `k`: mean 1000, `noise` and
/// `drift`, its own seed.
pub fn mock_model(k: u64, noise: f64, drift: f64) -> storlab::workload::mock::Model {
    storlab::workload::mock::Model {
        value: 1000.0,
        noise,
        drift,
        seed: 1 + k,
    }
}
