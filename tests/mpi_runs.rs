//! Multi-client runs: the real binary under `mpirun -n 3` against a tmpfs
//! and a Gluster replica volume, checked in the store (a run per
//! repetition, a row per rank, aggregates that add up); a failing rank, a
//! refused workload kind and a single rank that behaves as no MPI at all.

use std::path::Path;
use std::process::{Command, Output};

use rusqlite::Connection;

use crate::provision::Guard;
use crate::util::{storlab_mounts, Lab};

/// Kills an `mpirun` still running when a test fails.
struct Running(std::process::Child);

impl Drop for Running {
    fn drop(&mut self) {
        if self.0.try_wait().ok().flatten().is_none() {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
}

/// `mpirun --allow-run-as-root --oversubscribe -n N storlab ARGS…` in the
/// lab, killed after five minutes so that a hang fails instead of blocking.
fn mpirun(lab: &Lab, n: usize, args: &[&str]) -> Output {
    Command::new("timeout")
        .args(["--kill-after=10", "300", "mpirun", "--allow-run-as-root"])
        .args(["--oversubscribe", "-n", &n.to_string()])
        .arg(env!("CARGO_BIN_EXE_storlab"))
        .args(args)
        .current_dir(lab.path())
        .env("STORLAB_DB", lab.db())
        .env("STORLAB_STATE_DIR", lab.state_dir())
        .output()
        .expect("mpirun (Open MPI's openmpi-bin) is installed")
}

fn ok(lab: &Lab, n: usize, args: &[&str]) -> String {
    let out = mpirun(lab, n, args);
    assert!(
        out.status.success(),
        "mpirun -n {n} storlab {args:?} failed ({:?}):\n{}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn query_i64(db: &Path, sql: &str) -> Vec<i64> {
    let conn = Connection::open(db).unwrap();
    let mut st = conn.prepare(sql).unwrap();
    let rows = st.query_map([], |r| r.get(0)).unwrap();
    rows.map(Result::unwrap).collect()
}

fn query_f64(db: &Path, sql: &str, run: i64) -> f64 {
    let conn = Connection::open(db).unwrap();
    conn.query_row(sql, [run], |r| r.get(0))
        .unwrap_or_else(|e| panic!("{sql} for run {run}: {e}"))
}

/// What every multi-client run must hold in the store: `reps` runs per
/// workload, each ok on `ranks` ranks with one row per rank, the aggregate
/// bytes and operations equal to the sums over the ranks, and the merged
/// histograms counting exactly the operations.
pub(crate) fn assert_ranked_runs(db: &Path, workloads: &[&str], reps: i64, ranks: i64) {
    for w in workloads {
        let runs = query_i64(
            db,
            &format!("SELECT r.id FROM runs r JOIN workloads w ON w.id = r.workload_id WHERE w.name = '{w}' AND NOT r.warmup"),
        );
        assert_eq!(runs.len() as i64, reps, "{w}: one run per repetition");
        for run in runs {
            assert_ranked_run(db, run, ranks);
        }
    }
}

fn assert_ranked_run(db: &Path, run: i64, ranks: i64) {
    let status = |sql: &str| query_f64(db, sql, run);
    assert_eq!(
        status("SELECT (status = 'ok') * ranks FROM runs WHERE id = ?1"),
        ranks as f64,
        "run {run} is ok on {ranks} ranks"
    );
    let rows = query_i64(
        db,
        &format!("SELECT rank FROM run_ranks WHERE run_id = {run} AND status = 'ok' ORDER BY rank"),
    );
    assert_eq!(rows, (0..ranks).collect::<Vec<_>>(), "a row per rank");
    let agg = |m: &str| {
        status(&format!(
            "SELECT value FROM metrics WHERE run_id = ?1 AND name = '{m}' AND labels = '{{}}'"
        ))
    };
    let sum = |m: &str| {
        status(&format!(
            "SELECT SUM(value) FROM rank_metrics WHERE run_id = ?1 AND name = '{m}' AND labels = '{{}}'"
        ))
    };
    let ops = agg("ops");
    assert!(ops > 0.0, "run {run} did operations");
    assert_eq!(ops, sum("ops"), "run {run}: aggregate ops = sum over ranks");
    // The workload's histograms (the block tracer's dev_lat and
    // dev_queue_lat count device requests, not operations).
    let counted = status(
        "SELECT SUM(count) FROM histograms WHERE run_id = ?1 AND substr(name, 1, 4) != 'dev_'",
    );
    assert_eq!(counted, ops, "run {run}: merged histograms count every op");
    let has_bytes = status(
        "SELECT COUNT(*) FROM metrics WHERE run_id = ?1 AND name = 'bytes' AND labels = '{}'",
    );
    if has_bytes > 0.0 {
        assert_eq!(agg("bytes"), sum("bytes"), "run {run}: bytes add up");
    }
    let first = agg("first_done_s");
    let last = agg("last_done_s");
    assert!(0.0 < first && first <= last, "run {run}: {first} <= {last}");
}

const SMALL_WORKLOADS: &str = "[[workload]]\nname = \"seqwrite\"\nkind = \"io\"\nrw = \"write\"\nbs = \"64k\"\nsize = \"16M\"\n\n\
     [[workload]]\nname = \"meta\"\nkind = \"smallfiles\"\nfiles = 200\ndirs = 4\n";

#[test]
#[ignore = "needs root"]
fn three_ranks_on_tmpfs_add_up_and_leave_nothing() {
    require_root!();
    let lab = Lab::new();
    let _guard = Guard::new(&lab);
    let file = lab.file(
        "exp.toml",
        &format!("name = \"mpi-tmpfs\"\n[plan]\nrepetitions = 2\n\n[[target]]\nname = \"mpiram\"\nkind = \"tmpfs\"\nsize = \"256M\"\n\n{SMALL_WORKLOADS}"),
    );
    let out = ok(&lab, 3, &["run", file.to_str().unwrap()]);
    assert_ranked_runs(&lab.db(), &["seqwrite", "meta"], 2, 3);
    assert!(out.contains("seqwrite per rank:"), "{out}");
    assert!(out.contains("3 MPI ranks"), "{out}");
    assert_eq!(storlab_mounts("mpiram"), 0, "the tmpfs is unmounted");
    let journals = std::fs::read_dir(lab.state_dir())
        .map(|d| d.count())
        .unwrap_or(0);
    assert_eq!(journals, 0, "every journal is finished");
    let csv = lab.ok(&["export", "--format", "csv"]);
    // The label columns are those the runs' metrics carry: the operation,
    // the process, the layer (#42: the ranks share this host's page cache,
    // so its counters are read) and the rank.
    assert!(csv.starts_with("campaign,run,target,workload,repetition,round,warmup,status,metric,value,unit,direction,campaign_uuid,campaign_name,host,started_at,duration_s,caches_dropped,remounted,op,process,layer,rank,workload."), "{csv}");
    // Rank 2's own row of bytes written, on its own host.
    let mut reader = csv::Reader::from_reader(csv.as_bytes());
    let header = reader.headers().unwrap().clone();
    let col = |name: &str| header.iter().position(|h| h == name).unwrap();
    assert!(
        reader
            .records()
            .map(Result::unwrap)
            .any(|r| r[col("workload")] == *"seqwrite"
                && r[col("metric")] == *"bytes"
                && r[col("value")] == *"16777216"
                && r[col("rank")] == *"2"
                && !r[col("host")].is_empty()),
        "{csv}"
    );
    let json = lab.export_json();
    let run = &json["runs"][0];
    assert_eq!(run["ranks"], 3);
    assert_eq!(run["per_rank"].as_array().unwrap().len(), 3, "{run}");
    let md = lab.ok(&["report", "--format", "md"]);
    assert!(md.contains("### seqwrite: per rank"), "{md}");
}

/// One run's aggregate `metric` and the same metric of each rank.
fn aggregate_and_ranks(db: &Path, workload: &str, metric: &str) -> Vec<(f64, Vec<f64>)> {
    let runs = query_i64(
        db,
        &format!("SELECT r.id FROM runs r JOIN workloads w ON w.id = r.workload_id WHERE w.name = '{workload}' AND r.status = 'ok' AND r.ranks = 3"),
    );
    let conn = Connection::open(db).unwrap();
    runs.iter()
        .map(|run| {
            let agg = query_f64(
                db,
                &format!("SELECT value FROM metrics WHERE run_id = ?1 AND name = '{metric}' AND labels = '{{}}'"),
                *run,
            );
            let mut st = conn
                .prepare(
                    "SELECT value FROM rank_metrics WHERE run_id = ?1 AND name = ?2 AND labels = '{}' ORDER BY rank",
                )
                .unwrap();
            let each = st
                .query_map(rusqlite::params![run, metric], |r| r.get(0))
                .unwrap()
                .map(Result::unwrap)
                .collect();
            (agg, each)
        })
        .collect()
}

#[test]
#[ignore = "needs root"]
fn tiny_writes_matrix_and_commands_merge_into_meaningful_primaries() {
    require_root!();
    let lab = Lab::new();
    let _guard = Guard::new(&lab);
    let file = lab.file(
        "exp.toml",
        "name = \"mpi-kinds\"\n[plan]\nrepetitions = 1\n\n[[target]]\nname = \"mpikinds\"\nkind = \"tmpfs\"\nsize = \"256M\"\n\n\
         [[workload]]\nname = \"tiny\"\nkind = \"tinywrites\"\ntotal_size = \"4M\"\nwrite_size = \"100\"\n\n\
         [[workload]]\nname = \"grid\"\nkind = \"matrix\"\nmin_file_size = \"64k\"\nmax_file_size = \"256k\"\nmin_record_size = \"4k\"\nmax_record_size = \"64k\"\ntests = [\"write\", \"read\"]\n\n\
         [[workload]]\nname = \"cmd\"\nkind = \"command\"\ncommand = [\"sleep\", \"0.2\"]\n",
    );
    ok(&lab, 3, &["run", "--quiet", file.to_str().unwrap()]);
    let max = |v: &[f64]| v.iter().copied().fold(f64::MIN, f64::max);
    let sum = |v: &[f64]| v.iter().sum::<f64>();
    for (agg, each) in aggregate_and_ranks(&lab.db(), "tiny", "total_s") {
        assert_eq!(each.len(), 3);
        assert_eq!(agg, max(&each), "tinywrites: the slowest client's time");
    }
    for (agg, each) in aggregate_and_ranks(&lab.db(), "tiny", "bytes") {
        assert_eq!(agg, sum(&each));
        assert_eq!(agg, 3.0 * 4.0 * 1024.0 * 1024.0);
    }
    let grid = aggregate_and_ranks(&lab.db(), "grid", "geomean_bw_bytes_per_s");
    assert_eq!(grid.len(), 1, "the matrix run is ok");
    for (agg, each) in grid {
        assert!(
            (agg - sum(&each)).abs() <= 1e-9 * agg,
            "matrix: client bandwidths add"
        );
    }
    for (agg, each) in aggregate_and_ranks(&lab.db(), "cmd", "wall_s") {
        assert_eq!(agg, max(&each), "command: the last client's time");
        assert!(agg >= 0.2);
    }
    assert_eq!(storlab_mounts("mpikinds"), 0);
}

#[test]
#[ignore = "needs root"]
fn a_failing_rank_fails_the_run_without_a_hang() {
    require_root!();
    let lab = Lab::new();
    // Fails on rank 1 only, which Open MPI names in the environment.
    let file = lab.file(
        "exp.toml",
        "name = \"mpi-fail\"\n[plan]\nrepetitions = 2\n\n[[target]]\nname = \"here\"\nkind = \"dir\"\npath = \".\"\n\n\
         [[workload]]\nname = \"picky\"\nkind = \"command\"\nshell = true\ncommand = \"test \\\"$OMPI_COMM_WORLD_RANK\\\" != 1\"\n",
    );
    // Every run failed, so nothing was measured: exit 3 (docs/cli.md).
    let out = mpirun(&lab, 3, &["run", "--quiet", file.to_str().unwrap()]);
    assert_eq!(
        out.status.code(),
        Some(3),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let json = lab.export_json();
    let runs = json["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 2, "both repetitions ran: {json}");
    for r in runs {
        assert_eq!(r["status"], "failed", "{r}");
        let error = r["error"].as_str().unwrap();
        assert!(error.starts_with("rank 1 on "), "{error}");
        let statuses: Vec<&str> = r["per_rank"]
            .as_array()
            .unwrap()
            .iter()
            .map(|k| k["status"].as_str().unwrap())
            .collect();
        assert_eq!(statuses, ["ok", "failed", "ok"], "{r}");
    }
    assert!(!lab.path().join("storlab-work-here").exists());
}

#[test]
fn a_database_workload_is_refused_under_mpi() {
    let lab = Lab::new();
    let file = lab.file(
        "exp.toml",
        "name = \"mpi-oltp\"\n[[target]]\nname = \"here\"\nkind = \"dir\"\npath = \".\"\n\n\
         [[workload]]\nname = \"oltp\"\nkind = \"sqlite-oltp\"\n",
    );
    let out = mpirun(&lab, 2, &["run", file.to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    assert!(
        stderr.contains("workload `oltp` (sqlite-oltp) cannot run on several MPI ranks"),
        "{stderr}"
    );
    assert_eq!(crate::util::runs_in_store(&lab.db()), 0);
}

#[test]
fn one_rank_is_a_plain_run() {
    let lab = Lab::new();
    let file = lab.file(
        "exp.toml",
        "name = \"mpi-one\"\n[plan]\nrepetitions = 1\n[[target]]\nname = \"here\"\nkind = \"dir\"\npath = \".\"\n\n\
         [[workload]]\nname = \"w\"\nkind = \"io\"\nrw = \"write\"\nsize = \"1M\"\n",
    );
    let out = ok(&lab, 1, &["run", file.to_str().unwrap()]);
    assert!(!out.contains("per rank"), "{out}");
    let ranks = query_i64(&lab.db(), "SELECT ranks FROM runs");
    assert_eq!(ranks, vec![1]);
    assert!(query_i64(&lab.db(), "SELECT run_id FROM run_ranks").is_empty());
}

#[test]
#[ignore = "needs root"]
fn three_ranks_on_a_gluster_replica_volume() {
    require_root!();
    let _d = crate::provision::daemons();
    let lab = Lab::new();
    let dir = lab.path().display().to_string();
    let file = lab.file(
        "exp.toml",
        &format!("name = \"mpi-gluster\"\n[plan]\nrepetitions = 2\nremount = \"between-runs\"\n\n\
                  [[target]]\nname = \"gl\"\nkind = \"gluster\"\nbricks = 3\nreplica = 3\ndir = \"{dir}\"\n\n{SMALL_WORKLOADS}"),
    );
    let guard = Guard::new(&lab);
    ok(&lab, 3, &["run", "--quiet", file.to_str().unwrap()]);
    assert_ranked_runs(&lab.db(), &["seqwrite", "meta"], 2, 3);
    let json = lab.export_json();
    for r in json["runs"].as_array().unwrap() {
        assert_eq!(r["remounted"], true, "{r}");
    }
    let facts = &json["targets"][0]["facts"];
    assert_eq!(facts["volume_info"]["Type"], "Replicate", "{facts}");
    crate::provision::assert_gone(&lab, facts);
    drop(guard);
}

/// The pid of rank 0 among `mpirun`'s children, once it is there.
fn rank0_of(mpirun: u32) -> i32 {
    for _ in 0..300 {
        for e in std::fs::read_dir("/proc").unwrap().flatten() {
            let Ok(pid) = e.file_name().to_string_lossy().parse::<i32>() else {
                continue;
            };
            let status = std::fs::read_to_string(e.path().join("status")).unwrap_or_default();
            let child = status.lines().any(|l| l == format!("PPid:\t{mpirun}"));
            let environ = std::fs::read(e.path().join("environ")).unwrap_or_default();
            let rank0 = environ
                .split(|b| *b == 0)
                .any(|v| v == b"OMPI_COMM_WORLD_RANK=0");
            if child && rank0 {
                return pid;
            }
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    panic!("no rank 0 under mpirun {mpirun}");
}

#[test]
#[ignore = "needs root"]
fn sigint_on_rank_0_stops_every_rank_and_resume_finishes_under_mpi() {
    require_root!();
    let lab = Lab::new();
    let _guard = Guard::new(&lab);
    let file = lab.file(
        "exp.toml",
        "name = \"mpi-resume\"\n[plan]\nrepetitions = 2\n\n[[target]]\nname = \"mpiresume\"\nkind = \"tmpfs\"\nsize = \"128M\"\n\n\
         [[workload]]\nname = \"rr\"\nkind = \"io\"\nrw = \"randread\"\nsize = \"8M\"\nruntime = \"4s\"\n",
    );
    let child = Command::new("mpirun")
        .args(["--allow-run-as-root", "--oversubscribe", "-n", "3"])
        .arg(env!("CARGO_BIN_EXE_storlab"))
        .args(["run", "--quiet", file.to_str().unwrap()])
        .current_dir(lab.path())
        .env("STORLAB_DB", lab.db())
        .env("STORLAB_STATE_DIR", lab.state_dir())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut child = Running(child);
    let rank0 = rank0_of(child.0.id());
    // In the middle of the first run: the tmpfs is there, the run takes 4 s.
    for _ in 0..300 {
        if storlab_mounts("mpiresume") > 0 {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    std::thread::sleep(std::time::Duration::from_secs(1));
    // SAFETY: kill with the pid of rank 0 of the mpirun this test spawned.
    unsafe { libc::kill(rank0, libc::SIGINT) };
    let status = child.0.wait().unwrap();
    assert!(!status.success(), "an interrupted campaign exits non-zero");
    assert_eq!(storlab_mounts("mpiresume"), 0, "torn down on interrupt");
    let runs = query_i64(
        &lab.db(),
        "SELECT COUNT(*) FROM runs WHERE status = 'interrupted'",
    );
    assert_eq!(runs, vec![1], "the cut run is recorded as interrupted");
    let journals = std::fs::read_dir(lab.state_dir())
        .map(|d| d.count())
        .unwrap_or(0);
    assert_eq!(journals, 0, "nothing left for `storlab cleanup`");
    ok(&lab, 3, &["run", "--quiet", "--resume", "mpi-resume"]);
    assert_ranked_runs(&lab.db(), &["rr"], 2, 3);
    assert_eq!(storlab_mounts("mpiresume"), 0);
}

#[test]
fn a_shared_workload_runs_every_rank_in_one_directory() {
    let lab = Lab::new();
    // Rank 0 alone prepares before every rank runs, and cleans up after
    // every rank ran: the cleanup fails unless all three ranks left their
    // mark in the one directory.
    let file = lab.file(
        "exp.toml",
        "name = \"mpi-shared\"\n[plan]\nrepetitions = 2\n\n[[target]]\nname = \"here\"\nkind = \"dir\"\npath = \".\"\n\n\
         [[workload]]\nname = \"together\"\nkind = \"command\"\nshared = true\nshell = true\n\
         prepare = \"touch ready\"\n\
         command = \"test -f ready && touch rank$OMPI_COMM_WORLD_RANK\"\n\
         cleanup = \"test -f rank0 && test -f rank1 && test -f rank2 && rm ready rank0 rank1 rank2\"\n",
    );
    ok(&lab, 3, &["run", "--quiet", file.to_str().unwrap()]);
    let json = lab.export_json();
    for r in json["runs"].as_array().unwrap() {
        assert_eq!(r["status"], "ok", "{r}");
        assert_eq!(r["per_rank"].as_array().unwrap().len(), 3, "{r}");
    }
    assert!(!lab.path().join("storlab-work-here").exists());
}

#[test]
fn shared_is_refused_where_ranks_would_clobber_each_other() {
    let lab = Lab::new();
    let file = lab.file(
        "exp.toml",
        "name = \"x\"\n[[target]]\nname = \"here\"\nkind = \"dir\"\npath = \".\"\n\n\
         [[workload]]\nname = \"meta\"\nkind = \"smallfiles\"\nshared = true\n",
    );
    let out = lab.run(&["check", file.to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("`shared` is for io and command workloads"),
        "{stderr}"
    );
}
