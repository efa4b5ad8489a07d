use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::util::{metric, Lab};

/// The PostgreSQL bin directory; a missing PostgreSQL fails the test in
/// one line naming its package.
macro_rules! require_postgres {
    () => {
        crate::pgbench_runs::require_postgres()
    };
}

/// The PostgreSQL bin directory, or the test fails naming the package.
pub fn require_postgres() -> PathBuf {
    bindir().unwrap_or_else(|| panic!("PostgreSQL is not installed: install the Debian package `postgresql` (scripts/test installs every package the tests use)"))
}

pub fn bindir() -> Option<PathBuf> {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
        .ok()?
        .filter_map(|e| e.ok().map(|e| e.path().join("bin")))
        .filter(|b| b.join("initdb").exists() && b.join("pgbench").exists())
        .collect();
    dirs.sort();
    dirs.pop()
}

/// A lab whose directory the server's unprivileged user can reach.
pub fn reachable_lab() -> Lab {
    use std::os::unix::fs::PermissionsExt;
    let lab = Lab::new();
    std::fs::set_permissions(lab.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    lab
}

/// Pids of live processes one of whose arguments lies below `dir` (how a
/// postgres started by storlab is found: by its -D data directory).
fn processes_under(dir: &Path) -> Vec<(u32, String)> {
    let needle = dir.to_string_lossy().into_owned();
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        if pid == std::process::id() {
            continue;
        }
        let Ok(raw) = std::fs::read(entry.path().join("cmdline")) else {
            continue;
        };
        let args: Vec<String> = raw
            .split(|b| *b == 0)
            .map(|a| String::from_utf8_lossy(a).into_owned())
            .collect();
        if args.iter().skip(1).any(|a| a.starts_with(&needle)) {
            found.push((pid, args.join(" ")));
        }
    }
    found
}

/// Runs storlab, returning its pid (which names its tmpfs mount points) and output.
fn run_storlab(lab: &Lab, file: &Path) -> (u32, std::process::Output) {
    let child = lab
        .cmd()
        .args(["run", "--quiet", file.to_str().unwrap()])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    (pid, child.wait_with_output().unwrap())
}

fn assert_ok(out: &std::process::Output) {
    assert!(
        out.status.success(),
        "storlab failed ({:?}):\n{}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

fn runs<'a>(export: &'a serde_json::Value, workload: &str) -> Vec<&'a serde_json::Value> {
    export["runs"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["workload"] == workload)
        .collect()
}

fn value(run: &serde_json::Value, name: &str) -> Option<f64> {
    crate::util::value_of(run, name)
}

#[test]
#[ignore = "needs root"]
fn pgbench_on_tmpfs_and_on_a_disk_directory_leaves_no_server_and_no_cluster() {
    require_root!();
    let _ = require_postgres!();
    let lab = reachable_lab();
    let data = lab.path().join("data");
    std::fs::create_dir(&data).unwrap();
    let file = lab.file(
        "pg.toml",
        &format!(
            r#"name = "pg"
[plan]
repetitions = 2
[[target]]
name = "disk"
kind = "dir"
path = "{}"
[[target]]
name = "ram"
kind = "tmpfs"
size = "512M"
[[workload]]
name = "counted"
kind = "pgbench"
scale = 1
clients = 2
threads = 2
transactions = 150
[[workload]]
name = "timed"
kind = "pgbench"
scale = 1
clients = 2
duration = "3s"
reinit = "once"
mode = "prepared"
"#,
            data.display()
        ),
    );
    let (pid, out) = run_storlab(&lab, &file);
    assert_ok(&out);
    let export = lab.export_json();
    for target in ["disk", "ram"] {
        assert_eq!(
            metric(&export, "counted", target, "transactions"),
            vec![300.0; 2]
        );
    }
    for r in export["runs"].as_array().unwrap() {
        assert_eq!(r["status"], "ok", "{r}");
        assert_eq!(r["caches_dropped"], true, "dropped between prepare and run");
        assert!(value(r, "tps").unwrap() > 0.0, "{r}");
        assert_eq!(
            value(r, "history_rows"),
            value(r, "transactions"),
            "pgbench_history holds one row per reported transaction: {r}"
        );
    }
    // each-run initialises before every run, once only before the first.
    for r in runs(&export, "counted") {
        assert!(value(r, "init_seconds").unwrap() > 0.0);
    }
    let timed: Vec<bool> = runs(&export, "timed")
        .iter()
        .map(|r| value(r, "init_seconds").is_some())
        .collect();
    assert_eq!(timed.iter().filter(|x| **x).count(), 2, "{timed:?}");
    let tmpfs = std::env::temp_dir().join(format!("storlab-tmpfs-ram-{pid}"));
    for dir in [&data, &tmpfs] {
        assert_eq!(processes_under(dir), vec![], "nothing runs below {dir:?}");
    }
    assert!(
        !data.join("storlab-work").exists(),
        "the cluster is removed"
    );
    assert!(!tmpfs.exists(), "the tmpfs is unmounted and removed");
}

#[test]
fn fsync_off_is_faster_than_fsync_on_on_the_same_disk() {
    let _ = require_postgres!();
    let lab = reachable_lab();
    let data = lab.path().join("data");
    std::fs::create_dir(&data).unwrap();
    // A relative target path (storlab's cwd is the lab): the cluster's
    // paths must not depend on the working directory of the programs.
    let file = lab.file(
        "fsync.toml",
        &format!(
            r#"name = "fsync"
[plan]
repetitions = 2
[[target]]
name = "disk"
kind = "dir"
path = "{}"
[[workload]]
name = "fsync-on"
kind = "pgbench"
clients = 1
duration = "4s"
settings = {{ fsync = "on", synchronous_commit = "on" }}
[[workload]]
name = "fsync-off"
kind = "pgbench"
clients = 1
duration = "4s"
settings = {{ fsync = "off", synchronous_commit = "on" }}
"#,
            "data"
        ),
    );
    lab.ok(&["run", "--quiet", file.to_str().unwrap()]);
    let export = lab.export_json();
    let mean = |w: &str| {
        let v = metric(&export, w, "disk", "tps");
        assert_eq!(v.len(), 2, "{w}: {v:?}");
        v.iter().sum::<f64>() / v.len() as f64
    };
    let (on, off) = (mean("fsync-on"), mean("fsync-off"));
    eprintln!("fsync on: {on:.0} tps, fsync off: {off:.0} tps");
    assert!(
        off > on,
        "fsync off ({off:.0} tps) should beat on ({on:.0} tps)"
    );
    assert_eq!(processes_under(&data), vec![]);
}

/// Starts a campaign of one 120 s pgbench run on a directory target and
/// returns once that measured run has begun (pgbench, a client, runs below
/// the directory): the child, the directory and when it was started.
fn long_campaign_in_its_measured_run(lab: &Lab) -> (std::process::Child, PathBuf, Instant) {
    let data = lab.path().join("data");
    std::fs::create_dir(&data).unwrap();
    let file = lab.file(
        "long.toml",
        &format!(
            "name = \"long\"\n[[target]]\nname = \"d\"\nkind = \"dir\"\npath = \"{}\"\n\
             [[workload]]\nname = \"long\"\nkind = \"pgbench\"\nduration = \"120s\"\n",
            data.display()
        ),
    );
    let child = lab
        .cmd()
        .args(["run", "--quiet", file.to_str().unwrap()])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let t0 = Instant::now();
    while !processes_under(&data)
        .iter()
        .any(|(_, cmd)| cmd.contains("pgbench") && cmd.contains(" -T "))
    {
        assert!(
            t0.elapsed() < Duration::from_secs(60),
            "pgbench never started"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    (child, data, t0)
}

#[test]
fn sigint_during_a_run_stops_the_server_and_removes_the_cluster() {
    let _ = require_postgres!();
    let lab = reachable_lab();
    let (mut child, data, t0) = long_campaign_in_its_measured_run(&lab);
    // SAFETY: kill on our own child's pid.
    unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGINT) };
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130));
    assert!(t0.elapsed() < Duration::from_secs(60), "stopped promptly");
    assert_eq!(processes_under(&data), vec![]);
    assert!(!data.join("storlab-work").exists());
}

#[test]
fn a_killed_storlab_leaves_no_server_running() {
    let _ = require_postgres!();
    let lab = reachable_lab();
    let (mut child, data, _) = long_campaign_in_its_measured_run(&lab);
    child.kill().unwrap(); // SIGKILL: no handler, no guard runs
    child.wait().unwrap();
    // The server got its parent-death signal; pgbench loses its server.
    let t1 = Instant::now();
    while !processes_under(&data).is_empty() {
        assert!(
            t1.elapsed() < Duration::from_secs(30),
            "left running: {:?}",
            processes_under(&data)
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    // The next campaign removes the working directory the killed one left.
    let short = lab.file(
        "short.toml",
        &format!(
            "name = \"short\"\n[[target]]\nname = \"d\"\nkind = \"dir\"\npath = \"{}\"\n\
             [[workload]]\nname = \"s\"\nkind = \"sqlite-oltp\"\nduration = \"1s\"\n",
            data.display()
        ),
    );
    lab.ok(&["run", "--quiet", short.to_str().unwrap()]);
    assert!(!data.join("storlab-work").exists());
}

#[test]
fn a_wrong_bindir_is_refused_naming_the_missing_programs() {
    let lab = Lab::new();
    let data = lab.path().join("data");
    std::fs::create_dir(&data).unwrap();
    let file = lab.file(
        "bad.toml",
        &format!(
            "name = \"bad\"\n[[target]]\nname = \"d\"\nkind = \"dir\"\npath = \"{}\"\n\
             [[workload]]\nname = \"pg\"\nkind = \"pgbench\"\nbindir = \"{}\"\n",
            data.display(),
            lab.path().display()
        ),
    );
    // Refused before anything is provisioned (run's preflight), by check
    // too, naming the programs and where it looked.
    for cmd in ["run", "check"] {
        let out = lab.run(&[cmd, file.to_str().unwrap()]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{cmd}: {err}");
        assert!(
            err.contains("not found: initdb, postgres, pgbench, psql") && err.contains("bindir"),
            "{cmd}: {err}"
        );
    }
    // Nothing was recorded: no campaign of failed runs.
    let out = lab.run(&["list"]);
    assert!(
        !String::from_utf8_lossy(&out.stdout).contains("bad"),
        "{out:?}"
    );
}

#[test]
fn settings_that_storlab_owns_are_refused_with_their_position() {
    let lab = Lab::new();
    let file = lab.file(
        "port.toml",
        "name = \"x\"\n[[target]]\nname = \"d\"\nkind = \"dir\"\npath = \".\"\n\
         [[workload]]\nname = \"pg\"\nkind = \"pgbench\"\nsettings = { port = \"5433\" }\n",
    );
    let out = lab.run(&["check", file.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("port.toml:") && err.contains("set by storlab"),
        "{err}"
    );
}

/// A server the test starts itself, stopped and removed on drop.
struct OwnServer {
    child: std::process::Child,
    sock: PathBuf,
}

impl OwnServer {
    fn start(bin: &Path, dir: &Path) -> OwnServer {
        let as_pg = |program: &str| {
            let mut c = Command::new("runuser");
            c.args(["-u", "postgres", "--"]).arg(bin.join(program));
            c
        };
        let pgdir = dir.join("own");
        std::fs::create_dir(&pgdir).unwrap();
        let chown = Command::new("chown")
            .args(["postgres:postgres"])
            .arg(&pgdir)
            .status()
            .unwrap();
        assert!(chown.success());
        let st = as_pg("initdb")
            .args(["-U", "postgres", "-A", "trust", "--no-sync", "-D"])
            .arg(pgdir.join("data"))
            .stdout(Stdio::null())
            .status()
            .unwrap();
        assert!(st.success());
        let child = as_pg("postgres")
            .arg("-D")
            .arg(pgdir.join("data"))
            .args(["-c", "listen_addresses=", "-p", "55439", "-k"])
            .arg(&pgdir)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let server = OwnServer { child, sock: pgdir };
        let t0 = Instant::now();
        while !server.sock.join(".s.PGSQL.55439").exists() {
            assert!(
                t0.elapsed() < Duration::from_secs(30),
                "own server did not start"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        std::thread::sleep(Duration::from_millis(300));
        server
    }

    fn psql(&self, bin: &Path, sql: &str) -> String {
        let out = Command::new(bin.join("psql"))
            .args(["-X", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-h"])
            .arg(&self.sock)
            .args(["-p", "55439", "-U", "postgres", "-c", sql, "postgres"])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    }
}

impl Drop for OwnServer {
    fn drop(&mut self) {
        // runuser forwards SIGTERM; postgres then shuts down (smart) — ask
        // the postmaster itself for a fast shutdown through its pid file.
        if let Ok(pidfile) = std::fs::read_to_string(self.sock.join("data/postmaster.pid")) {
            if let Some(pid) = pidfile.lines().next().and_then(|l| l.parse::<i32>().ok()) {
                // SAFETY: kill on the postmaster this test started.
                unsafe { libc::kill(pid, libc::SIGINT) };
            }
        }
        let _ = self.child.wait();
    }
}

#[test]
#[ignore = "needs root"]
fn dsn_runs_against_an_existing_server_and_touches_only_pgbench_tables() {
    require_root!();
    let bin = require_postgres!();
    let lab = reachable_lab();
    let server = OwnServer::start(&bin, lab.path());
    server.psql(
        &bin,
        "CREATE TABLE mine (x int); INSERT INTO mine VALUES (42)",
    );
    let file = lab.file(
        "dsn.toml",
        &format!(
            "name = \"dsn\"\n[plan]\nrepetitions = 2\n[[target]]\nname = \"d\"\nkind = \"dir\"\npath = \"{}\"\n\
             [[workload]]\nname = \"pg\"\nkind = \"pgbench\"\nclients = 2\ntransactions = 100\n\
             dsn = \"host={} port=55439 user=postgres dbname=postgres\"\n",
            lab.path().display(),
            server.sock.display()
        ),
    );
    lab.ok(&["run", "--quiet", file.to_str().unwrap()]);
    let export = lab.export_json();
    assert_eq!(metric(&export, "pg", "d", "transactions"), vec![200.0; 2]);
    // Counted by the test itself: the last run's transactions are in the table.
    assert_eq!(
        server.psql(&bin, "SELECT count(*) FROM pgbench_history"),
        "200"
    );
    assert_eq!(server.psql(&bin, "SELECT x FROM mine"), "42");
}

/// A campaign of one pgbench workload on a tmpfs target, as `storlab run`
/// in the background: the child and the tmpfs directory it mounts.
fn tmpfs_campaign(lab: &Lab, name: &str, workload: &str) -> (std::process::Child, PathBuf) {
    tmpfs_campaign_of(lab, name, 1, workload)
}

/// [`tmpfs_campaign`] of `repetitions` runs.
fn tmpfs_campaign_of(
    lab: &Lab,
    name: &str,
    repetitions: u32,
    workload: &str,
) -> (std::process::Child, PathBuf) {
    let file = lab.file(
        &format!("{name}.toml"),
        &format!(
            "name = \"{name}\"\n[plan]\nrepetitions = {repetitions}\n\
             [[target]]\nname = \"ram\"\nkind = \"tmpfs\"\nsize = \"512M\"\n\
             [[workload]]\nname = \"{name}\"\nkind = \"pgbench\"\n{workload}"
        ),
    );
    let child = lab
        .cmd()
        .args(["run", "--quiet", file.to_str().unwrap()])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let dir = std::env::temp_dir().join(format!("storlab-tmpfs-ram-{}", child.id()));
    (child, dir)
}

/// Waits for the measured pgbench (`-T`) below `dir` and returns the
/// postmaster's pid (its own process group).
fn postmaster_in_measured_run(dir: &Path) -> u32 {
    let t0 = Instant::now();
    loop {
        let procs = processes_under(dir);
        let measuring = procs
            .iter()
            .any(|(_, cmd)| cmd.contains("pgbench") && cmd.contains(" -T "));
        let postmaster = procs.iter().find(|(_, cmd)| {
            cmd.split(' ')
                .next()
                .is_some_and(|p| p.ends_with("/postgres"))
                && cmd.contains(" -D ")
        });
        if let (true, Some((pid, _))) = (measuring, postmaster) {
            return *pid;
        }
        assert!(
            t0.elapsed() < Duration::from_secs(120),
            "pgbench never started"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Sends `sig` to a postmaster and each of its children (every backend is
/// a process group of its own: PostgreSQL calls setsid in each child).
fn signal_server(postmaster: u32, sig: libc::c_int) {
    let mut pids = vec![postmaster];
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        let ppid = stat
            .rfind(')')
            .and_then(|i| stat[i + 1..].split_whitespace().nth(1))
            .and_then(|p| p.parse::<u32>().ok());
        if ppid == Some(postmaster) {
            pids.extend(
                entry
                    .file_name()
                    .to_str()
                    .and_then(|p| p.parse::<u32>().ok()),
            );
        }
    }
    for pid in pids {
        // SAFETY: signals to the server this test's storlab started (found
        // by its data directory below the test's tmpfs) and its children.
        unsafe { libc::kill(pid as libc::pid_t, sig) };
    }
}

/// #40 item 4: the PostgreSQL server of a run killed (SIGKILL, by its
/// pid) while pgbench measures: that run fails saying the server died, in
/// words (not pgbench's lost connection alone), and the next run, with a
/// server of its own, is measured — the tmpfs under them is not degraded.
#[test]
#[ignore = "needs root"]
fn a_server_killed_during_a_run_fails_that_run_in_words_and_the_next_runs() {
    require_root!();
    let _ = require_postgres!();
    let lab = reachable_lab();
    let workload = "builtin = \"select-only\"\nclients = 2\nthreads = 2\nduration = \"5s\"\nprogress = \"0s\"\n";
    let (child, dir) = tmpfs_campaign_of(&lab, "killed", 2, workload);
    let postmaster = postmaster_in_measured_run(&dir);
    // SAFETY: a signal to the server this test's storlab started (found by
    // its data directory below the test's tmpfs).
    unsafe { libc::kill(postmaster as libc::pid_t, libc::SIGKILL) };
    let out = child.wait_with_output().unwrap();
    let said = String::from_utf8_lossy(&out.stderr);
    let export = lab.export_json();
    let runs = runs(&export, "killed");
    assert_eq!(runs.len(), 2, "{said}");
    let error = runs[0]["error"].as_str().unwrap_or("");
    assert_eq!(runs[0]["status"], "failed", "{said}");
    assert!(
        error.starts_with(&format!(
            "postgres (pid {postmaster}) serving the run on `ram` died (it is gone)"
        )),
        "{error}"
    );
    assert_eq!(runs[1]["status"], "ok", "{}\n{said}", runs[1]);
    assert!(processes_under(&dir).is_empty());
}

#[test]
#[ignore = "needs root"]
fn a_rate_run_holds_its_rate_and_a_stopped_server_shows_in_p999_and_max() {
    require_root!();
    let _ = require_postgres!();
    let _alone = crate::util::measuring_alone();
    let lab = reachable_lab();
    // 1000 tx/s for 30 s: the Poisson schedule's count varies by 0.6%, so
    // 2% is more than three of its standard deviations.
    let workload = "builtin = \"select-only\"\nclients = 2\nthreads = 2\nduration = \"30s\"\n\
                    rate = 1000\nlatency_limit = \"1s\"\nprogress = \"0s\"\n";
    let (steady, _) = tmpfs_campaign(&lab, "steady", workload);
    let out = steady.wait_with_output().unwrap();
    assert_ok(&out);
    let export = lab.export_json();
    let run = &export["runs"][0];
    let tps = value(run, "tps").unwrap();
    assert!(
        (tps / 1000.0 - 1.0).abs() < 0.02,
        "rate 1000 tx/s held within 2%: {tps:.1} tx/s ({run})"
    );
    // Telemetry's checks may warn of the host (a loaded machine) and of
    // the small database (it fits in shared_buffers); on a tmpfs, the
    // WAL's syncs reach no device, which must be said; pgbench itself
    // has nothing to warn of.
    let kinds: Vec<&str> = run["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|w| w["kind"].as_str())
        .collect();
    assert!(kinds.contains(&"durability_not_measured"), "{run}");
    let own: Vec<&&str> = kinds
        .iter()
        .filter(|k| {
            ![
                "noisy_host",
                "database_in_shared_buffers",
                "durability_not_measured",
            ]
            .contains(k)
        })
        .collect();
    assert!(own.is_empty(), "{own:?}: {run}");
    let steady_p999 = value(run, "lat_p999_ns").unwrap();
    assert!(value(run, "service_lat_p99_ns").unwrap() <= value(run, "lat_p99_ns").unwrap());
    assert!(
        value(run, "sched_lag_mean_ns").is_some() && value(run, "skipped_transactions").is_some()
    );

    // The same run, the server stopped for 200 ms in its middle.
    let (stalled, dir) = tmpfs_campaign(&lab, "stalled", workload);
    let postmaster = postmaster_in_measured_run(&dir);
    std::thread::sleep(Duration::from_secs(10));
    signal_server(postmaster, libc::SIGSTOP);
    std::thread::sleep(Duration::from_millis(200));
    signal_server(postmaster, libc::SIGCONT);
    let out = stalled.wait_with_output().unwrap();
    assert_ok(&out);
    let export = lab.export_json();
    let run = &export["runs"][0];
    let (p999, max) = (
        value(run, "lat_p999_ns").unwrap(),
        value(run, "lat_max_ns").unwrap(),
    );
    eprintln!(
        "p99.9 {:.1} ms without a stop, {:.1} ms with one; max {:.1} ms",
        steady_p999 / 1e6,
        p999 / 1e6,
        max / 1e6
    );
    // Latency counts from the schedule: the ~200 transactions scheduled
    // during the stop (0.7% of the run) waited up to 200 ms, so the top
    // 0.1% waited well over 100 ms. (Without a stop, p99.9 is a few ms on
    // a quiet machine, but can pass 100 ms on a loaded one: the steady
    // run's figure is printed, not compared.)
    assert!(max >= 190e6, "a 200 ms stop shows in max: {max}");
    assert!(
        p999 >= 100e6,
        "and in p99.9: {p999} (without a stop {steady_p999})"
    );
    // The stop (200 ms) is a fifth of the latency_limit (1 s): it made
    // nothing skip. A loaded host can (243 of ~6000 once at load 13), so
    // skips are bounded, not forbidden, and counted.
    let skipped = value(run, "skipped_transactions").expect("skipped_transactions");
    let done = value(run, "transactions").unwrap_or(0.0);
    assert!(
        skipped <= 0.1 * (done + skipped),
        "{skipped} skipped of {} scheduled: {run}",
        done + skipped
    );
}

#[test]
#[ignore = "needs root"]
fn wal_bytes_per_transaction_are_lower_without_full_page_writes() {
    require_root!();
    let _ = require_postgres!();
    let lab = reachable_lab();
    let file = lab.file(
        "fpw.toml",
        "name = \"fpw\"\n[plan]\nrepetitions = 1\n\
         [[target]]\nname = \"ram\"\nkind = \"tmpfs\"\nsize = \"512M\"\n\
         [[workload]]\nname = \"fpw-on\"\nkind = \"pgbench\"\nscale = 2\nclients = 2\nduration = \"5s\"\n\
         settings = { full_page_writes = \"on\" }\n\
         [[workload]]\nname = \"fpw-off\"\nkind = \"pgbench\"\nscale = 2\nclients = 2\nduration = \"5s\"\n\
         settings = { full_page_writes = \"off\" }\nsampling_rate = 0.5\n",
    );
    lab.ok(&["run", "--quiet", file.to_str().unwrap()]);
    let export = lab.export_json();
    let get = |w: &str, m: &str| metric(&export, w, "ram", m)[0];
    let (on, off) = (
        get("fpw-on", "wal_bytes_per_tx"),
        get("fpw-off", "wal_bytes_per_tx"),
    );
    eprintln!("WAL per transaction: {on:.0} bytes with full_page_writes, {off:.0} without");
    assert!(
        on > off,
        "full_page_writes = off writes less WAL: {on} vs {off}"
    );
    assert!(get("fpw-on", "wal_fpi") > 0.0);
    assert_eq!(get("fpw-off", "wal_fpi"), 0.0);
    // Percentiles from a sample: about half the transactions logged.
    let sampled = get("fpw-off", "logged_transactions") / get("fpw-off", "transactions");
    assert!(
        (0.4..0.6).contains(&sampled),
        "sampling_rate 0.5 logged {sampled}"
    );
    assert_eq!(
        get("fpw-on", "logged_transactions"),
        get("fpw-on", "transactions")
    );
    for w in ["fpw-on", "fpw-off"] {
        let wal = get(w, "wal_bytes");
        let tx = get(w, "transactions");
        assert!((wal / tx - get(w, "wal_bytes_per_tx")).abs() < 1e-6 * wal);
        assert!(
            get(w, "wal_records") >= 5.0 * tx,
            "tpcb-like: 5+ records a transaction"
        );
    }
}

#[test]
#[ignore = "needs root"]
fn init_steps_add_up_and_the_server_version_is_a_fact_and_in_the_report() {
    require_root!();
    let _ = require_postgres!();
    let lab = reachable_lab();
    let file = lab.file(
        "init.toml",
        "name = \"init\"\n[plan]\nrepetitions = 1\n\
         [[target]]\nname = \"ram\"\nkind = \"tmpfs\"\nsize = \"1G\"\n\
         [[workload]]\nname = \"client-side\"\nkind = \"pgbench\"\nscale = 10\nduration = \"1s\"\n\
         [[workload]]\nname = \"server-side\"\nkind = \"pgbench\"\nscale = 10\nduration = \"1s\"\n\
         init_steps = \"dtGvpf\"\nsettings = { shared_buffers = \"64MB\" }\n",
    );
    lab.ok(&["run", "--quiet", file.to_str().unwrap()]);
    let export = lab.export_json();
    let steps = [
        "init_drop_s",
        "init_tables_s",
        "init_generate_s",
        "init_vacuum_s",
        "init_keys_s",
    ];
    for (w, extra) in [
        ("client-side", None),
        ("server-side", Some("init_foreign_keys_s")),
    ] {
        let get = |m: &str| metric(&export, w, "ram", m)[0];
        let sum: f64 = steps.iter().chain(extra.iter()).map(|m| get(m)).sum();
        let total = get("init_seconds");
        eprintln!("{w}: steps {sum:.2} s of init_seconds {total:.2} s");
        // init_seconds also holds pgbench's start and its connection,
        // which pgbench's step timings do not: a fixed ~0.1 s on a loaded
        // host, which on a 1.6 s init is more than 5%.
        let gap = total - sum;
        assert!(
            gap >= -0.05 * total && gap < (0.05 * total).max(0.15),
            "{w}: the steps ({sum} s) make init_seconds ({total} s) within 5% (or 0.15 s)"
        );
    }
    assert!(metric(&export, "client-side", "ram", "init_foreign_keys_s")[0].is_nan());
    let version = std::process::Command::new(bindir().unwrap().join("postgres"))
        .arg("--version")
        .output()
        .unwrap();
    // `postgres (PostgreSQL) 15.18 (Debian 15.18-0+deb12u1)`
    let version = String::from_utf8_lossy(&version.stdout);
    let number = version.split_whitespace().nth(2).unwrap();
    for r in export["runs"].as_array().unwrap() {
        let fact = r["facts"]["pg_server_version"].as_str().unwrap_or_default();
        assert!(fact.starts_with(number), "{fact} is {version}");
    }
    let run = |w: &str| {
        export["runs"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["workload"] == w)
            .unwrap()
            .clone()
    };
    assert_eq!(
        run("server-side")["facts"]["pg_setting.shared_buffers"],
        "64MB"
    );
    assert_eq!(
        run("client-side")["facts"]["pg_setting.shared_buffers"],
        "128MB",
        "initdb writes its own shared_buffers into postgresql.conf"
    );
    let report = lab.ok(&["report", "--format", "md"]);
    assert!(
        report.contains(&format!("| pg_server_version | {number}")),
        "{report}"
    );
}

/// Clusters initialised once stay on the target until the campaign ends,
/// one per scale (and settings) of a sweep: four of scale 10–13 (about
/// 440–512 MiB of room each) do not fit in a 1 GiB tmpfs, though any one
/// does, and the campaign is refused before the first `pgbench -i` rather
/// than running out of space half-way (seed 000's example did, 24 runs
/// in). A sweep of transactions shares one cluster, and is not refused.
#[test]
#[ignore = "needs root"]
fn clusters_kept_from_run_to_run_must_fit_together() {
    require_root!();
    let _ = require_postgres!();
    let lab = reachable_lab();
    let file = lab.file(
        "kept.toml",
        "name = \"kept\"\n[[target]]\nname = \"ram\"\nkind = \"tmpfs\"\nsize = \"1G\"\n\
         [[workload]]\nname = \"tpcb\"\nkind = \"pgbench\"\nreinit = \"once\"\n\
         sweep = { scale = [10, 11, 12, 13], transactions = [1, 2] }\n",
    );
    let out = lab.run(&["run", "--quiet", file.to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    // 200 MiB + 24 MiB per scale unit each, the transaction counts of one
    // scale sharing theirs: 1904 MiB, not twice that.
    assert!(
        stderr.contains("a workload writes up to 1.9 GiB, 1.9 GiB of it kept from run to run"),
        "{stderr}"
    );
    assert!(
        processes_under(lab.path()).is_empty(),
        "no server was started"
    );
}
