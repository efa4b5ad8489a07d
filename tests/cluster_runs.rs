//! storlab on a simulated cluster (`scripts/simcluster`): a Gluster
//! volume whose bricks are on two server hosts, provisioned and measured
//! by storlab on a client host, which reaches the servers through the
//! cluster's remote shell, with c1's link unshaped and shaped to 100
//! Mbit/s (replica 2 gets at most half of it) — and, built with MPI, by ranks on two client
//! hosts that `mpirun` launched through the cluster's agent, each host
//! mounting the volume itself. Afterwards, and after a campaign whose
//! rank 0 was killed with SIGKILL and `storlab cleanup`, no host keeps a
//! volume, a peer, a brick or a mount of storlab's.

#[cfg(feature = "mpi")]
use std::path::Path;
#[cfg(feature = "mpi")]
use std::process::Stdio;
use std::process::{Command, Output};
#[cfg(feature = "mpi")]
use std::time::{Duration, Instant};

use crate::simcluster::Sim;
use crate::util::Lab;

const BIN: &str = env!("CARGO_BIN_EXE_storlab");

/// `storlab ARGS…` on `host`, with the lab's store and journals.
#[cfg(not(feature = "mpi"))]
fn storlab(sim: &Sim, lab: &Lab, host: &str, args: &[&str]) -> Command {
    let db = format!("STORLAB_DB={}", lab.db().display());
    let state = format!("STORLAB_STATE_DIR={}", lab.state_dir().display());
    let mut all = vec!["env", &db, &state, BIN];
    all.extend_from_slice(args);
    sim.cmd(host, &all)
}

fn ok(out: Output, what: &str) -> String {
    assert!(
        out.status.success(),
        "{what} failed ({:?}):\n{}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Asserts that no host has a volume, a peer, a brick directory or a
/// mount of storlab's.
fn assert_nothing_left(sim: &Sim, servers: &[&str], clients: &[&str]) {
    for s in servers {
        // "No volumes present" goes to stderr.
        let vols = sim.exec(s, &["gluster", "--mode=script", "volume", "list"]);
        assert!(vols.status.success());
        let listed = String::from_utf8_lossy(&vols.stdout);
        assert!(!listed.contains("storlab-"), "{s} keeps a volume: {listed}");
        let peers = sim.ok(s, &["gluster", "--mode=script", "peer", "status"]);
        assert!(peers.contains("Number of Peers: 0"), "{s}: {peers}");
    }
    for h in servers.iter().chain(clients) {
        let dirs = sim.ok(h, &["ls", "/var/tmp"]);
        assert!(!dirs.contains("storlab-"), "{h} keeps {dirs}");
        let mounts = sim.ok(h, &["awk", "{ print $5 }", "/proc/self/mountinfo"]);
        assert!(!mounts.contains("storlab-"), "{h} keeps a mount: {mounts}");
    }
}

#[cfg(feature = "mpi")]
fn wait_for(what: &str, secs: u64, mut f: impl FnMut() -> bool) {
    let t0 = Instant::now();
    while !f() {
        assert!(
            t0.elapsed() < Duration::from_secs(secs),
            "timed out waiting for {what}"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
}

const EXPERIMENT: &str = "name = \"cluster\"\n[plan]\nrepetitions = @REPS@\n\n\
    [[target]]\nname = \"gl\"\nkind = \"gluster\"\nservers = [\"s1\", \"s2\"]\nbricks = 2\nreplica = 2\n\n\
    [[workload]]\nname = \"w\"\nkind = \"io\"\nrw = \"write\"\nbs = \"1M\"\nsize = \"8M\"\n";

// Built with MPI, the test below covers this one's path (rank 0 is such
// a client), and SIGKILL with `storlab cleanup`; CI runs it instead.
#[cfg(not(feature = "mpi"))]
#[test]
#[ignore = "needs root"]
fn a_replica_volume_on_two_servers_measured_from_a_client() {
    require_root!();
    let lab = Lab::new();
    let sim = Sim::up(&["s1", "s2", "c1"], &["--glusterd", "s1,s2"]);
    let file = lab.file("exp.toml", &EXPERIMENT.replace("@REPS@", "2"));
    let out = storlab(
        &sim,
        &lab,
        "c1",
        &["run", "--quiet", file.to_str().unwrap()],
    )
    .output()
    .unwrap();
    ok(out, "storlab run on c1");
    let export = lab.export_json();
    let f = export["targets"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "gl")
        .expect("target gl")["facts"]
        .clone();
    assert_eq!(f["servers"], serde_json::json!(["s1", "s2"]), "{f}");
    assert_eq!(f["peers_added"], serde_json::json!(["s2"]), "{f}");
    assert_eq!(f["volume_info"]["Type"], "Replicate", "{f}");
    let specs = f["brick_specs"].as_array().unwrap();
    assert!(
        specs[0]
            .as_str()
            .unwrap()
            .starts_with("s1:/var/tmp/storlab-"),
        "{f}"
    );
    assert!(
        specs[1]
            .as_str()
            .unwrap()
            .starts_with("s2:/var/tmp/storlab-"),
        "{f}"
    );
    assert_eq!(f["brick_devices"]["s2"]["host"], "s2", "{f}");
    let runs = export["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 2);
    for r in runs {
        assert_eq!(r["status"], "ok", "{r}");
    }
    assert!(
        export.to_string().contains(r#""hostname":"c1""#),
        "measured on c1"
    );
    assert_nothing_left(&sim, &["s1", "s2"], &["c1"]);
    let free = crate::util::metric(&export, "w", "gl", "bw_bytes_per_s");

    // With c1's link shaped to 100 Mbit/s, replica 2 halves what a write
    // gets of it: the client sends every block to both servers.
    let link = 100e6 / 8.0;
    let st = Command::new(crate::simcluster::SIMCLUSTER)
        .args(["shape", &sim.name, "100mbit"])
        .status()
        .unwrap();
    assert!(st.success());
    let shaped_exp = EXPERIMENT
        .replace("@REPS@", "1")
        .replace("size = \"8M\"", "size = \"16M\"");
    let file = lab.file("exp.toml", &shaped_exp);
    let out = storlab(
        &sim,
        &lab,
        "c1",
        &["run", "--quiet", file.to_str().unwrap()],
    )
    .output()
    .unwrap();
    ok(out, "storlab run on c1, shaped");
    let shaped = crate::util::metric(&lab.export_json(), "w", "gl", "bw_bytes_per_s")[0];
    assert!(
        shaped < 0.6 * link && shaped > 0.1 * link,
        "replica 2 over a {link} B/s link: {shaped} B/s"
    );
    assert!(
        free.iter().all(|f| *f > 1.5 * shaped),
        "unshaped {free:?} B/s, shaped {shaped} B/s"
    );
    assert_nothing_left(&sim, &["s1", "s2"], &["c1"]);
}

/// The pid of the process on this machine whose command line is `BIN
/// run FILE` and whose environment says MPI rank 0.
#[cfg(feature = "mpi")]
fn rank0_running(file: &Path) -> Option<i32> {
    let want = file.to_string_lossy().into_owned();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        let cmdline = std::fs::read(e.path().join("cmdline")).unwrap_or_default();
        let args: Vec<&[u8]> = cmdline.split(|b| *b == 0).collect();
        if args.first() != Some(&BIN.as_bytes()) || !args.contains(&want.as_bytes()) {
            continue;
        }
        let environ = std::fs::read(e.path().join("environ")).unwrap_or_default();
        if environ
            .split(|b| *b == 0)
            .any(|v| v == b"OMPI_COMM_WORLD_RANK=0")
        {
            return Some(pid);
        }
    }
    None
}

/// `mpirun --host c1,c2 -n 2 storlab ARGS…` started on c1: Open MPI
/// reaches c2 through the cluster's agent (OMPI_MCA_plm_rsh_agent).
#[cfg(feature = "mpi")]
fn mpirun(sim: &Sim, lab: &Lab, args: &[&str]) -> Command {
    let db = format!("STORLAB_DB={}", lab.db().display());
    let mut all = vec![
        "timeout",
        "--kill-after=10",
        "300",
        "env",
        &db,
        "mpirun",
        "--allow-run-as-root",
        "--host",
        "c1,c2",
        "-n",
        "2",
        "-x",
        "STORLAB_DB",
        BIN,
    ];
    all.extend_from_slice(args);
    sim.cmd("c1", &all)
}

#[cfg(feature = "mpi")]
#[test]
#[ignore = "needs root"]
fn ranks_on_two_client_hosts_share_a_volume_on_two_servers() {
    require_root!();
    let lab = Lab::new();
    let sim = Sim::up(&["s1", "s2", "c1", "c2"], &["--glusterd", "s1,s2"]);
    let workloads = "[[workload]]\nname = \"seqwrite\"\nkind = \"io\"\nrw = \"write\"\nbs = \"64k\"\nsize = \"8M\"\n\n\
                     [[workload]]\nname = \"meta\"\nkind = \"smallfiles\"\nfiles = 40\ndirs = 2\n";
    let text = EXPERIMENT
        .replace("@REPS@", "1")
        .split("[[workload]]")
        .next()
        .unwrap()
        .to_string()
        + workloads;
    let file = lab.file("exp.toml", &text);
    let out = mpirun(&sim, &lab, &["run", file.to_str().unwrap()])
        .output()
        .unwrap();
    let printed = ok(out, "mpirun on c1 and c2");
    assert!(printed.contains("on 2 host(s) (c1, c2)"), "{printed}");
    crate::mpi_runs::assert_ranked_runs(&lab.db(), &["seqwrite", "meta"], 1, 2);
    let conn = rusqlite::Connection::open(lab.db()).unwrap();
    let hosts: Vec<String> = conn
        .prepare("SELECT DISTINCT host FROM run_ranks ORDER BY host")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(hosts, ["c1", "c2"], "a rank on each client host");
    let all = ["c1", "c2"];
    assert_nothing_left(&sim, &["s1", "s2"], &all);
    for h in all {
        assert_eq!(
            sim.ok(h, &["ls", "/var/lib/storlab"]),
            "",
            "{h} keeps a journal"
        );
    }

    // Rank 0 killed with SIGKILL while both hosts have the volume mounted
    // (mpirun then ends rank 1 as it can): `storlab cleanup` on c1 alone
    // removes c2's mount too, through the remote shell.
    let file = lab.file(
        "exp.toml",
        &text.replace("repetitions = 1", "repetitions = 1000"),
    );
    let mut child = mpirun(&sim, &lab, &["run", "--quiet", file.to_str().unwrap()])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    wait_for("the volume mounted on c2", 120, || {
        let m = sim.ok("c2", &["awk", "{ print $5 }", "/proc/self/mountinfo"]);
        m.contains("storlab-")
    });
    let rank0 = rank0_running(&file).expect("rank 0 runs");
    // SAFETY: kill with the pid of rank 0 of the campaign this test started.
    unsafe { libc::kill(rank0, libc::SIGKILL) };
    let _ = child.wait();
    // The ranks keep their journals in their hosts' state directories.
    let cleanup = |host: &str| sim.cmd(host, &[BIN, "cleanup"]).output().unwrap();
    let printed = ok(cleanup("c1"), "storlab cleanup on c1");
    assert!(printed.contains("on c2"), "{printed}");
    assert_nothing_left(&sim, &["s1", "s2"], &all);
    // What is left on c2 is the journal of its killed rank, whose
    // resources are gone already.
    ok(cleanup("c2"), "storlab cleanup on c2");
    for h in all {
        assert_eq!(
            sim.ok(h, &["ls", "/var/lib/storlab"]),
            "",
            "{h} keeps a journal"
        );
    }
}
