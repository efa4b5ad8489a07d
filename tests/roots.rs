//! Software from another root: PostgreSQL and Gluster of another Debian
//! release (debootstrap roots, cached), side by side with the host's;
//! check's refusals; what SIGKILL during a build or a root's campaign
//! leaves, and `storlab cleanup` undoes.
//!
//! The roots the runs use are cached in [`CACHE`], shared by every test
//! (and every run of the suite): the first test that needs one builds it
//! (two to four minutes), the others find it.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::util::{runs, Lab};

/// The roots' cache the tests share.
const CACHE: &str = "/var/tmp/storlab-test-roots";

/// A storlab command of `lab` with the tests' shared roots.
fn cmd(lab: &Lab) -> std::process::Command {
    let mut c = lab.cmd();
    c.env("STORLAB_ROOTS", CACHE);
    c
}

/// What roots leave on the host that belongs to `lab`'s campaigns: network
/// namespaces and links named after a campaign, mounts under its state
/// directory (the jails) or its working directories, processes chrooted
/// under it.
fn left_behind(lab: &Lab, pids: &[u32]) -> Vec<String> {
    let mut left = Vec::new();
    for pid in pids {
        let ns = PathBuf::from("/run/netns");
        for e in std::fs::read_dir(&ns).into_iter().flatten().flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            if name.starts_with(&format!("storlab-{pid}-")) {
                left.push(format!("namespace {name}"));
            }
        }
        for e in std::fs::read_dir("/sys/class/net")
            .into_iter()
            .flatten()
            .flatten()
        {
            let name = e.file_name().to_string_lossy().into_owned();
            if name.starts_with(&format!("sl{pid}h")) {
                left.push(format!("link {name}"));
            }
        }
    }
    let under = lab.path().to_string_lossy().into_owned();
    let mounts = std::fs::read_to_string("/proc/self/mountinfo").unwrap();
    for m in mounts.lines() {
        let point = m.split(' ').nth(4).unwrap_or("");
        let ours = pids
            .iter()
            .any(|p| point.contains(&format!("/storlab-{p}-")));
        if point.starts_with(&under) || ours {
            left.push(format!("mount {point}"));
        }
    }
    for e in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        if let Ok(root) = std::fs::read_link(e.path().join("root")) {
            if root.starts_with(lab.path()) {
                left.push(format!("process {:?} in {}", e.file_name(), root.display()));
            }
        }
    }
    left
}

/// Runs `storlab cleanup` for `lab` when dropped: a failed test leaves
/// nothing either.
struct Cleanup<'a>(&'a Lab);

impl Drop for Cleanup<'_> {
    fn drop(&mut self) {
        let _ = cmd(self.0).arg("cleanup").output();
    }
}

/// `storlab run FILE` in `lab` with the shared roots: its pid (which names
/// its namespaces and links) and what it printed.
fn run_watched(lab: &Lab, file: &Path) -> (u32, std::process::Output) {
    let child = cmd(lab)
        .args(["run", file.to_str().unwrap()])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    (pid, child.wait_with_output().unwrap())
}

/// `storlab run --quiet FILE` started in the background, silent.
fn start_quiet(mut c: std::process::Command, file: &Path) -> std::process::Child {
    c.args(["run", "--quiet", file.to_str().unwrap()])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap()
}

fn pgbench_releases(lab: &Lab, duration: &str) -> PathBuf {
    lab.file(
        "pg.toml",
        &format!(
            "name = \"pg-releases\"\n\
             [plan]\nrepetitions = 2\ndrop_caches = false\n\
             [[target]]\nname = \"ram\"\nkind = \"tmpfs\"\nsize = \"1G\"\n\
             [[workload]]\nname = \"oltp\"\nkind = \"pgbench\"\nscale = 1\nclients = 2\n\
             duration = \"{duration}\"\nprogress = \"0s\"\n\
             sweep = {{ root = [\"host\", \"debian:trixie\"] }}\n"
        ),
    )
}

#[test]
#[ignore = "needs root"]
fn pgbench_runs_the_postgresql_of_another_release_beside_the_host_s() {
    require_root!();
    require_program!("debootstrap");
    require_program!("pg_config");
    let lab = Lab::new();
    let _cleanup = Cleanup(&lab);
    let file = pgbench_releases(&lab, "2s");
    let (pid, out) = run_watched(&lab, &file);
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{err}");
    let export = lab.export_json();
    let mut versions: Vec<(String, String)> = runs(&export)
        .iter()
        .map(|r| {
            (
                r["workload"].as_str().unwrap().to_string(),
                r["facts"]["software_version.postgresql"]
                    .as_str()
                    .unwrap_or_else(|| panic!("no software_version in {r}"))
                    .to_string(),
            )
        })
        .collect();
    versions.sort();
    versions.dedup();
    assert_eq!(versions.len(), 2, "{versions:?}");
    let host = &versions.iter().find(|(_, v)| v.starts_with("15.")).unwrap();
    let trixie = &versions.iter().find(|(_, v)| v.starts_with("17.")).unwrap();
    // Each variant is named by the release it ran.
    assert_eq!(host.0, format!("oltp[PostgreSQL {}]", host.1));
    assert_eq!(trixie.0, format!("oltp[PostgreSQL {}]", trixie.1));
    let show = lab.ok(&["show"]);
    assert!(show.contains(&format!("PostgreSQL {}", trixie.1)), "{show}");
    assert_eq!(left_behind(&lab, &[pid]), Vec::<String>::new());
}

/// check's refusal of `file` (exit 1, the reason on stderr), and run's:
/// nothing provisioned, no journal left.
fn refused(lab: &Lab, file: &Path, env: &[(&str, &str)], reason: &str) {
    let mut c = cmd(lab);
    c.envs(env.iter().copied());
    let out = c.args(["check", file.to_str().unwrap()]).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "check: {err}");
    assert!(
        err.contains(reason),
        "check does not say `{reason}`:\n{err}"
    );
    let mut c = cmd(lab);
    c.envs(env.iter().copied());
    let out = c.args(["run", file.to_str().unwrap()]).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "run went ahead: {err}");
    assert!(err.contains(reason), "run does not say `{reason}`:\n{err}");
    let journals: Vec<_> = std::fs::read_dir(lab.state_dir())
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().ends_with(".journal"))
        .collect();
    assert!(
        journals.is_empty(),
        "run provisioned something: {journals:?}"
    );
}

fn pgbench_on(lab: &Lab, root: &str) -> PathBuf {
    lab.file(
        "r.toml",
        &format!(
            "[[target]]\nname = \"d\"\nkind = \"dir\"\npath = \"{}\"\n\
             [[workload]]\nname = \"oltp\"\nkind = \"pgbench\"\nroot = \"{root}\"\n",
            lab.path().display()
        ),
    )
}

#[test]
#[ignore = "needs root"]
fn check_and_run_refuse_a_root_they_cannot_have_before_provisioning() {
    require_root!();
    require_program!("debootstrap");
    let lab = Lab::new();
    // A suite debootstrap does not know.
    let f = pgbench_on(&lab, "debian:nosuchsuite");
    refused(&lab, &f, &[], "debootstrap knows no suite `nosuchsuite`");
    // No debootstrap.
    let f = pgbench_on(&lab, "debian:bookworm");
    let empty = lab.path().join("empty-roots");
    let roots = empty.to_str().unwrap();
    refused(
        &lab,
        &f,
        &[
            ("STORLAB_ROOTS", roots),
            ("STORLAB_DEBOOTSTRAP", "/nonexistent/debootstrap"),
        ],
        "debootstrap is not installed",
    );
    // No route to the registry.
    refused(
        &lab,
        &f,
        &[
            ("STORLAB_ROOTS", roots),
            ("STORLAB_DEBIAN_MIRROR", "http://127.0.0.1:9/debian"),
        ],
        "no route to the package registry http://127.0.0.1:9/debian",
    );
    assert!(!empty.exists(), "nothing was built");
    // A tree without the programs.
    let tree = lab.path().join("tree");
    std::fs::create_dir_all(tree.join("usr/bin")).unwrap();
    let f = pgbench_on(&lab, tree.to_str().unwrap());
    refused(&lab, &f, &[], "has no PostgreSQL");
    let f = lab.file(
        "g.toml",
        &format!(
            "[[target]]\nname = \"gl\"\nkind = \"gluster\"\ndir = \"{}\"\nroot = \"{}\"\n\
             [[workload]]\nname = \"w\"\nkind = \"mock\"\n",
            lab.path().display(),
            tree.display()
        ),
    );
    refused(
        &lab,
        &f,
        &[],
        "has no glusterd, gluster, glusterfs, mount.glusterfs",
    );
    // Not root: a root needs a chroot, a namespace and mounts.
    let f = pgbench_on(&lab, "debian:trixie");
    std::fs::set_permissions(
        lab.path(),
        std::os::unix::fs::PermissionsExt::from_mode(0o777),
    )
    .unwrap();
    let as_nobody = |what: &str| {
        let mut c = lab.as_nobody(&[what, f.to_str().unwrap()]);
        c.env("STORLAB_ROOTS", CACHE).output().unwrap()
    };
    for what in ["check", "run"] {
        let out = as_nobody(what);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{what}: {err}");
        assert!(err.contains("needs root (a chroot"), "{what}: {err}");
    }
    assert_eq!(as_nobody("check").status.code(), Some(1));
}

/// SIGKILLs the campaign `child` of `lab`, checks that it left something
/// of its roots (a build's directory or a jail), runs `cleanup` (`c`, with
/// the same roots' cache), which must say `says`, and checks that nothing
/// is left.
fn killed_then_cleaned(
    lab: &Lab,
    mut child: std::process::Child,
    mut c: std::process::Command,
    says: &str,
) {
    let pid = child.id();
    child.kill().unwrap();
    child.wait().unwrap();
    let state = std::fs::read_dir(lab.state_dir()).unwrap().count();
    assert!(state > 0, "the kill left its journal for cleanup");
    let out = c.arg("cleanup").output().unwrap();
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{said}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(said.contains(says), "{said}");
    assert_eq!(left_behind(lab, &[pid]), Vec::<String>::new());
}

/// Waits until `done()` holds, at most `limit`.
fn wait_for(what: &str, limit: Duration, done: impl Fn() -> bool) {
    let t0 = Instant::now();
    while !done() {
        assert!(
            t0.elapsed() < limit,
            "{what} did not happen within {limit:?}"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
}

#[test]
#[ignore = "needs root"]
fn a_root_build_killed_midway_is_undone_by_cleanup_and_never_reused() {
    require_root!();
    require_program!("debootstrap");
    let lab = Lab::new();
    let _cleanup = Cleanup(&lab);
    let roots = lab.path().join("roots");
    let f = pgbench_on(&lab, "debian:trixie");
    let mut with_roots = lab.cmd();
    with_roots.env("STORLAB_ROOTS", &roots);
    let child = start_quiet(with_roots, &f);
    let pid = child.id();
    let building = || {
        std::fs::read_dir(&roots)
            .into_iter()
            .flatten()
            .flatten()
            .find(|e| {
                e.file_name()
                    .to_string_lossy()
                    .starts_with(&format!("storlab-{pid}-"))
            })
            .map(|e| e.path())
    };
    // Killed once debootstrap has mounted /proc in the tree (its second
    // stage, packages being configured): the worst moment.
    wait_for("debootstrap's mounts", Duration::from_secs(600), || {
        building().is_some_and(|b| {
            std::fs::read_to_string("/proc/self/mountinfo")
                .unwrap()
                .contains(&format!("{}/tree/proc", b.display()))
        })
    });
    let dir = building().unwrap();
    let mut with_roots = lab.cmd();
    with_roots.env("STORLAB_ROOTS", &roots);
    killed_then_cleaned(&lab, child, with_roots, "undone: unfinished root");
    assert!(!dir.exists(), "the half-built root is removed");
    let listed = lab
        .cmd()
        .env("STORLAB_ROOTS", &roots)
        .args(["cleanup", "--roots"])
        .output()
        .unwrap();
    assert!(
        String::from_utf8_lossy(&listed.stdout).contains("no cached root"),
        "a half-built root is never listed, nor reused"
    );
}

#[test]
#[ignore = "needs root"]
fn a_campaign_killed_while_a_root_s_server_runs_is_undone_by_cleanup() {
    require_root!();
    require_program!("debootstrap");
    let lab = Lab::new();
    let _cleanup = Cleanup(&lab);
    let f = lab.file(
        "k.toml",
        "[plan]\nrepetitions = 1\ndrop_caches = false\n\
         [[target]]\nname = \"ram\"\nkind = \"tmpfs\"\nsize = \"512M\"\n\
         [[workload]]\nname = \"oltp\"\nkind = \"pgbench\"\nscale = 1\nclients = 2\n\
         duration = \"120s\"\nroot = \"debian:trixie\"\n",
    );
    let child = start_quiet(cmd(&lab), &f);
    let jails = lab.state_dir().join("roots/run");
    // pgbench runs inside the jail: a process chrooted there named pgbench.
    wait_for("pgbench in the jail", Duration::from_secs(900), || {
        std::fs::read_dir("/proc")
            .into_iter()
            .flatten()
            .flatten()
            .any(|e| {
                std::fs::read_link(e.path().join("root")).is_ok_and(|r| r.starts_with(&jails))
                    && std::fs::read_to_string(e.path().join("comm"))
                        .is_ok_and(|c| c.trim() == "pgbench")
            })
    });
    killed_then_cleaned(&lab, child, cmd(&lab), "undone: network namespace storlab-");
}

fn gluster_releases(lab: &Lab, size: &str, reps: u32) -> PathBuf {
    lab.file(
        "gl.toml",
        &format!(
            "name = \"gluster-releases\"\n\
             [plan]\nrepetitions = {reps}\ndrop_caches = false\n\
             [[target]]\nname = \"gl\"\nkind = \"gluster\"\nbricks = 2\nreplica = 2\n\
             dir = \"{}\"\n\
             sweep = {{ root = [\"host\", \"debian:trixie\"] }}\n\
             [[workload]]\nname = \"seqwrite\"\nkind = \"io\"\nrw = \"write\"\nbs = \"1M\"\n\
             size = \"{size}\"\n",
            lab.path().display()
        ),
    )
}

#[test]
#[ignore = "needs root"]
fn gluster_of_another_release_serves_a_replica_volume_beside_the_host_s() {
    require_root!();
    require_program!("debootstrap");
    require_program!("glusterd");
    let lab = Lab::new();
    let _cleanup = Cleanup(&lab);
    let file = gluster_releases(&lab, "16M", 3);
    let (pid, out) = run_watched(&lab, &file);
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{err}");
    let export = lab.export_json();
    let mut versions: Vec<(String, String)> = export["targets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            let v = t["facts"]["software_version"]["gluster"]
                .as_str()
                .unwrap_or_else(|| panic!("no software_version in {t}"));
            (t["name"].as_str().unwrap().to_string(), v.to_string())
        })
        .collect();
    versions.sort_by(|a, b| a.1.cmp(&b.1));
    let [(host_name, host), (trixie_name, trixie)] = versions.as_slice() else {
        panic!("two targets: {versions:?}");
    };
    assert!(
        host.starts_with("10.") && trixie.starts_with("11."),
        "{versions:?}"
    );
    assert_eq!(host_name, &format!("gl[Gluster {host}]"));
    assert_eq!(trixie_name, &format!("gl[Gluster {trixie}]"));
    // Every run measured, on both.
    assert_eq!(runs(&export).len(), 6);
    // The verdict names both releases.
    let report = lab.path().join("r.md");
    lab.ok(&["report", "-o", report.to_str().unwrap()]);
    let md = std::fs::read_to_string(&report).unwrap();
    let headline = md
        .lines()
        .find(|l| l.starts_with("- seqwrite: "))
        .unwrap_or_else(|| panic!("no headline in:\n{md}"));
    let named = [
        format!("Gluster {trixie} is faster than {host}"),
        format!("Gluster {trixie} is slower than {host}"),
        format!("between Gluster {trixie} and {host}"),
    ];
    assert!(
        named.iter().any(|n| headline.contains(n.as_str())),
        "{headline}"
    );
    assert_eq!(left_behind(&lab, &[pid]), Vec::<String>::new());
}

#[test]
#[ignore = "needs root"]
fn a_campaign_killed_while_a_root_s_glusterd_serves_is_undone_by_cleanup() {
    require_root!();
    require_program!("debootstrap");
    let lab = Lab::new();
    let _cleanup = Cleanup(&lab);
    let file = lab.file(
        "k.toml",
        &format!(
            "[plan]\nrepetitions = 50\ndrop_caches = false\n\
             [[target]]\nname = \"gl\"\nkind = \"gluster\"\nbricks = 2\nreplica = 2\n\
             dir = \"{}\"\nroot = \"debian:trixie\"\n\
             [[workload]]\nname = \"w\"\nkind = \"io\"\nrw = \"write\"\nbs = \"1M\"\nsize = \"32M\"\n",
            lab.path().display()
        ),
    );
    let child = start_quiet(cmd(&lab), &file);
    let pid = child.id();
    // The root's FUSE client has mounted the volume: glusterd and the
    // bricks run.
    wait_for("the root's Gluster mount", Duration::from_secs(600), || {
        std::fs::read_to_string("/proc/self/mountinfo")
            .unwrap()
            .lines()
            .any(|l| l.contains(&format!("/storlab-{pid}-gl/mnt")) && l.contains("fuse.glusterfs"))
    });
    std::thread::sleep(Duration::from_secs(2));
    killed_then_cleaned(&lab, child, cmd(&lab), "undone: glusterd of another root");
    let bricks = format!("storlab-{pid}-gl");
    assert!(!lab.path().join(bricks).exists(), "the bricks are removed");
}
