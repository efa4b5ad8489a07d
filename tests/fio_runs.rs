use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::util::{labelled, metric, runs, runs_in_store, storlab_mounts, Lab, TestMount};

const MIB: f64 = 1024.0 * 1024.0;

/// Copies the test job files into `lab/exp/jobs/` and returns `lab/exp`:
/// experiments there say `job = "jobs/…"`, which resolves against the
/// experiment file's directory, not storlab's current directory (the lab).
fn exp_dir(lab: &Lab) -> PathBuf {
    let exp = lab.path().join("exp");
    std::fs::create_dir_all(exp.join("jobs")).unwrap();
    for name in ["randread.fio", "seqwrite-fsync.fio"] {
        let from = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fio")
            .join(name);
        std::fs::copy(&from, exp.join("jobs").join(name)).unwrap();
    }
    exp
}

const WORKLOADS: &str = r#"
[[workload]]
name = "randread"
kind = "fio"
job = "jobs/randread.fio"

[[workload]]
name = "seqwrite-fsync"
kind = "fio"
job = "jobs/seqwrite-fsync.fio"

[[workload]]
name = "inline"
kind = "fio"
options = { rw = "randread", bs = "4k", size = "4M", ioengine = "psync", runtime = "1s", time_based = true }
"#;

fn value(run: &Value, name: &str) -> f64 {
    crate::util::value_of(run, name)
        .unwrap_or_else(|| panic!("no metric {name} in {}", run["metrics"]))
}

/// The value of `name` of fio job `job` (its place in fio's jobs array).
fn of_job(run: &Value, name: &str, job: &str) -> f64 {
    crate::util::labelled_value(run, name, &[("job", job)])
        .unwrap_or_else(|| panic!("no metric {name} of job {job} in {}", run["metrics"]))
}

/// What every run of the three fio workloads on `target` must show.
fn assert_fio_figures(export: &Value, target: &str, reps: usize) {
    let on_target: Vec<&Value> = runs(export)
        .iter()
        .filter(|r| r["target"] == target)
        .collect();
    assert_eq!(on_target.len(), 3 * reps);
    for r in &on_target {
        assert_eq!(r["status"], "ok", "{}: {}", r["workload"], r["error"]);
    }
    // Two jobs, each reading its own 8 MiB in 4 KiB blocks.
    assert_eq!(
        metric(export, "randread", target, "bytes"),
        vec![16.0 * MIB; reps]
    );
    assert_eq!(
        metric(export, "randread", target, "ops"),
        vec![4096.0; reps]
    );
    for r in on_target.iter().filter(|r| r["workload"] == "randread") {
        assert_eq!(of_job(r, "bytes", "0"), 8.0 * MIB);
        assert_eq!(of_job(r, "bytes", "1"), 8.0 * MIB);
        // Percentiles of the merged buckets lie between the jobs' own (to a
        // bucket's width, 1/64); the mean is the jobs' means weighted by
        // their (equal) counts.
        let (a, b) = (of_job(r, "lat_p99_ns", "0"), of_job(r, "lat_p99_ns", "1"));
        let p99 = value(r, "lat_p99_ns");
        assert!(
            p99 >= 0.98 * a.min(b) && p99 <= 1.02 * a.max(b),
            "{p99} vs {a}, {b}"
        );
        let mean = (of_job(r, "lat_mean_ns", "0") + of_job(r, "lat_mean_ns", "1")) / 2.0;
        assert!((value(r, "lat_mean_ns") - mean).abs() < 1e-6 * mean);
        assert!(value(r, "lat_p50_ns") <= p99 && p99 <= value(r, "lat_max_ns"));
        assert!(value(r, "bw_bytes_per_s") > 0.0);
        let warnings = r["warnings"].to_string();
        assert!(
            warnings.contains("directory=/nonexistent/storlab-fio-test"),
            "{warnings}"
        );
    }
    // 64 writes of 64 KiB, an fsync after every 4 and at the end.
    for r in on_target
        .iter()
        .filter(|r| r["workload"] == "seqwrite-fsync")
    {
        assert_eq!(value(r, "bytes"), 4.0 * MIB);
        assert_eq!(value(r, "ops"), 64.0);
        assert!(value(r, "sync_lat_p50_ns") > 0.0);
        assert!(value(r, "sync_lat_p99_ns") <= value(r, "sync_lat_max_ns"));
    }
    for elapsed in metric(export, "inline", target, "elapsed_s") {
        assert!((0.95..1.5).contains(&elapsed), "elapsed {elapsed}");
    }
}

#[test]
fn fio_job_files_run_on_a_directory_target() {
    require_program!("fio");
    let lab = Lab::new();
    exp_dir(&lab);
    let data = lab.path().join("data");
    std::fs::create_dir(&data).unwrap();
    let file = lab.file(
        "exp/fio.toml",
        &format!(
            "[plan]\nrepetitions = 2\n[[target]]\nname = \"data\"\nkind = \"dir\"\npath = \"{}\"\n{WORKLOADS}",
            data.display()
        ),
    );
    assert!(file.starts_with(lab.path().join("exp")));
    let out = lab.run(&["run", "--quiet", "exp/fio.toml"]);
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert!(stdout.contains("6 of 6 planned runs ok"), "{stdout}");
    // Warnings go to stderr, never into the tables on stdout; the job
    // file's replaced `directory`, the same in every run, is said once.
    assert!(!stdout.contains("warning"), "{stdout}");
    // run counts them by kind; show --warnings lists each.
    assert!(stderr.contains("note "), "{stderr}");
    let listed = lab.run(&["show", "--warnings"]);
    let stderr = String::from_utf8_lossy(&listed.stderr);
    let replaced: Vec<&str> = stderr
        .lines()
        .filter(|l| l.contains("directory=/nonexistent/storlab-fio-test"))
        .collect();
    assert_eq!(replaced.len(), 1, "{stderr}");
    assert!(
        replaced[0].contains("(randread on data, 2 runs)"),
        "{stderr}"
    );
    let export = lab.export_json();
    assert_fio_figures(&export, "data", 2);
    for r in runs(&export) {
        // fio's version is kept with every run, and its disk figures name
        // their device.
        let version = r["facts"]["fio_version"].as_str().unwrap_or_default();
        assert!(version.starts_with("fio-"), "{}", r["facts"]);
        for m in r["metrics"].as_array().unwrap() {
            if m["name"].as_str().unwrap().starts_with("disk_") {
                assert!(m["labels"]["device"].is_string(), "{m}");
            }
        }
    }
    let job = &export["workloads"][0]["params"];
    assert_eq!(
        job["job"].as_str().unwrap(),
        lab.path()
            .join("exp/jobs/randread.fio")
            .canonicalize()
            .unwrap()
            .to_str()
            .unwrap()
    );
    assert!(job["job_text"].as_str().unwrap().contains("rw=randread"));
    assert_eq!(
        std::fs::read_dir(&data).unwrap().count(),
        0,
        "nothing is left in the target"
    );
}

#[test]
#[ignore = "needs root"]
fn fio_job_files_run_on_tmpfs() {
    require_root!();
    require_program!("fio");
    let lab = Lab::new();
    exp_dir(&lab);
    let name = format!("f{}", std::process::id());
    lab.file(
        "exp/fio.toml",
        &format!(
            "[plan]\nrepetitions = 1\n[[target]]\nname = \"{name}\"\nkind = \"tmpfs\"\nsize = \"128M\"\n{WORKLOADS}"
        ),
    );
    lab.ok(&["run", "--quiet", "exp/fio.toml"]);
    assert_eq!(storlab_mounts(&name), 0, "the tmpfs is unmounted");
    let export = lab.export_json();
    assert_fio_figures(&export, &name, 1);
    for bw in metric(&export, "randread", &name, "bw_bytes_per_s") {
        assert!(
            bw > 50e6,
            "tmpfs random reads at {bw} B/s are implausibly slow"
        );
    }
}

#[test]
fn a_missing_fio_is_a_clear_error_before_anything_runs() {
    let lab = Lab::new();
    exp_dir(&lab);
    lab.file(
        "exp/fio.toml",
        &format!(
            "[[target]]\nname = \"d\"\nkind = \"dir\"\npath = \"{}\"\n{WORKLOADS}",
            lab.path().display()
        ),
    );
    let out = lab
        .cmd()
        .args(["run", "exp/fio.toml"])
        .env("PATH", "/nonexistent")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("workload `randread`: fio is not installed"),
        "{stderr}"
    );
    let left: Vec<_> = std::fs::read_dir(lab.path())
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().starts_with("storlab-work"))
        .collect();
    assert!(left.is_empty(), "nothing was provisioned: {left:?}");
}

#[test]
fn a_failing_job_is_a_failed_run_with_fios_own_words() {
    require_program!("fio");
    let lab = Lab::new();
    let file = lab.file(
        "bad.toml",
        &format!(
            "[plan]\nrepetitions = 1\n[[target]]\nname = \"d\"\nkind = \"dir\"\npath = \"{}\"\n\
             [[workload]]\nname = \"engine\"\nkind = \"fio\"\noptions = {{ rw = \"read\", size = \"1M\", verify = \"crc32c\" }}\n\
             [[workload]]\nname = \"fine\"\nkind = \"fio\"\noptions = {{ rw = \"read\", size = \"1M\" }}\n",
            lab.path().display()
        ),
    );
    let out = lab.ok(&["run", "--quiet", file.to_str().unwrap()]);
    assert!(out.contains("1 of 2 planned runs ok, 1 failed"), "{out}");
    let export = lab.export_json();
    let failed = &runs(&export)[0];
    assert_eq!(failed["status"], "failed");
    let error = failed["error"].as_str().unwrap();
    assert!(error.contains("fio failed"), "{error}");
    // Reading files not written with verify headers: fio's own complaint.
    assert!(error.contains("bad magic header"), "{error}");
}

/// A command fills the filesystem after the space check, as something else
/// on a shared disk would: the fio run then fails with fio's own message.
#[test]
#[ignore = "needs root"]
fn a_full_filesystem_fails_the_fio_run_with_fios_message() {
    require_root!();
    require_program!("fio");
    let lab = Lab::new();
    let mnt = TestMount::new(lab.path().join("small"), "8M");
    let file = lab.file(
        "full.toml",
        &format!(
            "[plan]\nrepetitions = 1\n[[target]]\nname = \"a\"\nkind = \"dir\"\npath = \"{}\"\n\
             [[workload]]\nname = \"fill\"\nkind = \"command\"\ncommand = [\"dd\", \"if=/dev/zero\", \"of={{dir}}/filler\", \"bs=1M\", \"count=6\"]\n\
             [[workload]]\nname = \"w\"\nkind = \"fio\"\noptions = {{ rw = \"write\", bs = \"64k\", size = \"4M\" }}\n",
            mnt.0.display()
        ),
    );
    let out = lab.ok(&["run", "--quiet", file.to_str().unwrap()]);
    assert!(out.contains("1 of 2 planned runs ok, 1 failed"), "{out}");
    let export = lab.export_json();
    let failed = &runs(&export)[1];
    assert_eq!(failed["workload"], "w");
    let error = failed["error"].as_str().unwrap();
    assert!(
        error.contains("fio") && error.contains("No space left on device"),
        "{error}"
    );
}

#[test]
fn a_job_file_writing_outside_the_working_directory_is_refused() {
    require_program!("fio");
    let lab = Lab::new();
    let exp = exp_dir(&lab);
    std::fs::write(
        exp.join("jobs/escape.fio"),
        "[global]\nrw=write\n[w]\nfilename=/dev/sdz\nsize=1M\n",
    )
    .unwrap();
    let file = lab.file(
        "exp/escape.toml",
        "[[target]]\nname = \"d\"\nkind = \"dir\"\npath = \"/tmp\"\n[[workload]]\nname = \"w\"\nkind = \"fio\"\njob = \"jobs/escape.fio\"\n",
    );
    for cmd in ["check", "run"] {
        let out = lab.run(&[cmd, file.to_str().unwrap()]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{stderr}");
        // One error: its line, then the file's line with a caret under it.
        assert_eq!(
            stderr.lines().filter(|l| l.starts_with("error")).count(),
            1,
            "{stderr}"
        );
        assert!(stderr.contains("8 | job = \"jobs/escape.fio\""), "{stderr}");
        assert!(
            stderr.contains(&format!("{}:8:7: workload `w`: ", file.display())),
            "{stderr}"
        );
        assert!(
            stderr.contains("escape.fio:4: `filename=/dev/sdz` is an absolute path"),
            "{stderr}"
        );
    }
}

/// A campaign stopped by SIGINT resumes only with the job it began with.
#[test]
fn a_changed_job_file_keeps_a_campaign_from_resuming() {
    require_program!("fio");
    let lab = Lab::new();
    let exp = exp_dir(&lab);
    lab.file(
        "exp/resume.toml",
        &format!(
            "name = \"r\"\n[plan]\nrepetitions = 3\n[[target]]\nname = \"d\"\nkind = \"dir\"\npath = \"{}\"\n\
             [[workload]]\nname = \"sw\"\nkind = \"fio\"\njob = \"jobs/seqwrite-fsync.fio\"\n\
             [[workload]]\nname = \"pause\"\nkind = \"command\"\ncommand = [\"sleep\", \"30\"]\n",
            lab.path().display()
        ),
    );
    let mut child = lab
        .cmd()
        .args(["run", "--quiet", "exp/resume.toml"])
        .spawn()
        .unwrap();
    let t0 = std::time::Instant::now();
    while runs_in_store(&lab.db()) < 1 {
        assert!(t0.elapsed().as_secs() < 60, "no run recorded in time");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    std::thread::sleep(std::time::Duration::from_millis(300));
    // SAFETY: kill has no memory-safety preconditions; the pid is our child's.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    assert_eq!(child.wait().unwrap().code(), Some(130));
    let job = exp.join("jobs/seqwrite-fsync.fio");
    let original = std::fs::read_to_string(&job).unwrap();
    std::fs::write(&job, original.replace("bs=64k", "bs=128k")).unwrap();
    let out = lab.run(&["run", "--quiet", "--resume", "r"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("workload `sw` of campaign 1 resolves differently now"),
        "{stderr}"
    );
}

/// fio's rates, through the real binary: a `group_reporting` group and two
/// concurrent groups rated over the second they ran (not over the sum of
/// their jobs' times), and a stonewalled write-then-read whose directions
/// are each rated over their own phase. The job files are the ones the fio
/// output fixtures were made from (tests/fixtures/fio).
#[test]
fn fio_groups_and_phases_are_rated_as_fio_rates_them() {
    require_program!("fio");
    let lab = Lab::new();
    let exp = lab.path().join("exp");
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/fio");
    let names = ["numjobs4-group", "concurrent-groups", "write-then-read"];
    let mut workloads = String::new();
    std::fs::create_dir_all(exp.join("jobs")).unwrap();
    for name in names {
        let job = format!("{name}.fio");
        std::fs::copy(fixtures.join(&job), exp.join("jobs").join(&job)).unwrap();
        workloads.push_str(&format!(
            "[[workload]]\nname = \"{name}\"\nkind = \"fio\"\njob = \"jobs/{job}\"\n"
        ));
    }
    let data = lab.path().join("data");
    std::fs::create_dir(&data).unwrap();
    lab.file(
        "exp/groups.toml",
        &format!(
            "[plan]\nrepetitions = 1\n[[target]]\nname = \"d\"\nkind = \"dir\"\npath = \"{}\"\n{workloads}",
            data.display()
        ),
    );
    lab.ok(&["run", "--quiet", "exp/groups.toml"]);
    let export = lab.export_json();
    let run = |name: &str| {
        runs(&export)
            .iter()
            .find(|r| r["workload"] == name)
            .unwrap_or_else(|| panic!("no run of {name}"))
            .clone()
    };
    let close = |a: f64, b: f64| (a - b).abs() <= 1e-9 * a.abs().max(b.abs());
    // Both time-based for 1 s: 4 jobs in one group (fio's job_runtime for
    // the group is their sum, about 4 s), and two groups side by side.
    for name in ["numjobs4-group", "concurrent-groups"] {
        let r = run(name);
        assert_eq!(r["status"], "ok", "{name}: {}", r["error"]);
        let elapsed = value(&r, "elapsed_s");
        assert!((0.95..1.5).contains(&elapsed), "{name}: elapsed {elapsed}");
        assert!(close(
            value(&r, "bw_bytes_per_s"),
            value(&r, "bytes") / elapsed
        ));
        let warnings = r["warnings"].to_string();
        assert!(!warnings.contains("could not tell"), "{warnings}");
    }
    // Job 0 writes, then job 1 reads: each direction at its job's own rate.
    let r = run("write-then-read");
    assert_eq!(r["status"], "ok", "{}", r["error"]);
    assert!(close(
        value(&r, "write_bw_bytes_per_s"),
        of_job(&r, "bw_bytes_per_s", "0")
    ));
    assert!(close(
        value(&r, "read_bw_bytes_per_s"),
        of_job(&r, "bw_bytes_per_s", "1")
    ));
}

/// `io` speaks fio's meaning: a buffered, time-based random read by fio and
/// by storlab's engine, same parameters, same ext4 loop device, reads the
/// same share of its bytes from the device (fio's default `invalidate = 1`
/// drops the file's cached pages at the start and on every wrap, and so
/// does `io`'s). With `invalidate = false`, `io` rereads the page cache.
#[test]
#[ignore = "needs root"]
fn fio_and_io_read_the_same_device_bytes_for_the_same_buffered_random_read() {
    require_root!();
    require_program!("fio");
    let lab = Lab::new();
    let (size, runtime) = ("2M", "4s");
    let file = lab.file(
        "same.toml",
        &format!(
            "[plan]\nrepetitions = 1\n\
             [[target]]\nname = \"ext4\"\nkind = \"loop\"\nfs = \"ext4\"\nsize = \"128M\"\ndir = \"{dir}\"\n\
             [[workload]]\nname = \"fio\"\nkind = \"fio\"\noptions = {{ rw = \"randread\", bs = \"4k\", size = \"{size}\", runtime = \"{runtime}\", time_based = true, ioengine = \"psync\" }}\n\
             [[workload]]\nname = \"io\"\nkind = \"io\"\nrw = \"randread\"\nbs = \"4k\"\nsize = \"{size}\"\nruntime = \"{runtime}\"\n\
             [[workload]]\nname = \"io-cached\"\nkind = \"io\"\nrw = \"randread\"\nbs = \"4k\"\nsize = \"{size}\"\nruntime = \"{runtime}\"\ninvalidate = false\n",
            dir = lab.path().display()
        ),
    );
    lab.ok(&["run", "--quiet", file.to_str().unwrap()]);
    let export = lab.export_json();
    let dev = export["targets"][0]["facts"]["loop_device"]
        .as_str()
        .expect("the loop device in the facts")
        .trim_start_matches("/dev/")
        .to_string();
    let ratio = |w: &str| {
        let r = labelled(&export, w, "ext4", "dev_read_ratio", &[("device", &dev)]);
        let read = metric(&export, w, "ext4", "read_bytes");
        // Passes over the 2 MiB file after the first, or the test tells
        // nothing.
        assert!(
            read[0] >= 2.0 * 2.0 * MIB,
            "{w} read only {} bytes",
            read[0]
        );
        r[0]
    };
    let (fio, io, cached) = (ratio("fio"), ratio("io"), ratio("io-cached"));
    eprintln!("device bytes per byte read: fio {fio:.3}, io {io:.3}, io with invalidate = false {cached:.3}");
    assert!(
        (io / fio - 1.0).abs() <= 0.10,
        "fio read {fio:.3} of its bytes from {dev}, io {io:.3}"
    );
    assert!(cached < 0.5 * fio, "invalidate = false: {cached:.3}");
    let facts = &runs(&export)
        .iter()
        .find(|r| r["workload"] == "io")
        .unwrap()["facts"];
    let differences = facts["fio_differences"].as_str().unwrap_or_default();
    assert!(differences.contains("time_based"), "{facts}");
}
