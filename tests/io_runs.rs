use crate::util::{failed_runs, metric, runs_in_store, storlab_mounts, Lab, TestMount};

const MIB: f64 = 1024.0 * 1024.0;

fn dir_experiment(data: &std::path::Path) -> String {
    format!(
        r#"name = "sizes"
[plan]
repetitions = 2

[[target]]
name = "data"
kind = "dir"
path = "{}"

[[workload]]
name = "write"
kind = "io"
rw = "write"
bs = "64k"
size = "8M"
numjobs = 2
end_fsync = true

[[workload]]
name = "read"
kind = "io"
rw = "read"
bs = "1M"
size = "8M"

[[workload]]
name = "randread"
kind = "io"
rw = "randread"
bs = "4k"
size = "4M"

[[workload]]
name = "randrw"
kind = "io"
rw = "randrw"
bs = "4k"
size = "4M"
rwmixread = 70
runtime = "1s"
"#,
        data.display()
    )
}

#[test]
fn bytes_moved_match_the_configured_sizes_and_every_run_is_stored() {
    let lab = Lab::new();
    let data = lab.path().join("data");
    std::fs::create_dir(&data).unwrap();
    let file = lab.file("sizes.toml", &dir_experiment(&data));
    let stdout = lab.ok(&["run", "--quiet", file.to_str().unwrap()]);
    assert!(stdout.contains("8 of 8 planned runs ok"), "{stdout}");
    let export = lab.export_json();
    assert_eq!(export["runs"].as_array().unwrap().len(), 8);
    assert_eq!(
        metric(&export, "write", "data", "bytes"),
        vec![16.0 * MIB; 2]
    );
    assert_eq!(metric(&export, "read", "data", "bytes"), vec![8.0 * MIB; 2]);
    assert_eq!(
        metric(&export, "randread", "data", "bytes"),
        vec![4.0 * MIB; 2]
    );
    assert_eq!(metric(&export, "randread", "data", "ops"), vec![1024.0; 2]);
    for run in export["runs"].as_array().unwrap() {
        let m = |name| crate::util::value_of(run, name).unwrap();
        assert!(m("lat_p50_ns") <= m("lat_p99_ns"));
        assert!(m("lat_p99_ns") <= m("lat_max_ns"));
        assert_eq!(run["caches_dropped"], crate::util::is_root());
    }
    // randrw: both directions, roughly in the configured mix.
    let reads = metric(&export, "randrw", "data", "read_bw_bytes_per_s");
    let writes = metric(&export, "randrw", "data", "write_bw_bytes_per_s");
    for (r, w) in reads.iter().zip(&writes) {
        let share = r / (r + w);
        assert!((0.6..0.8).contains(&share), "read share {share}");
    }
    assert!(
        !data.join("storlab-work-data").exists(),
        "the working directory is removed"
    );
    assert_eq!(
        std::fs::read_dir(&data).unwrap().count(),
        0,
        "nothing else is left in the target"
    );
    let csv = lab.ok(&["export", "--format", "csv"]);
    // Label columns (telemetry's device and process) come before the
    // parameters.
    assert!(csv.starts_with(
        "campaign,run,target,workload,repetition,round,warmup,status,metric,value,unit,direction,"
    ));
    assert!(csv.lines().next().unwrap().contains(",workload."));
    let header: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
    let size = header.iter().position(|c| *c == "workload.size").unwrap();
    let target_path = header.iter().position(|c| *c == "target.path").unwrap();
    let row = csv
        .lines()
        .find(|l| l.contains(",data,read,1,1,false,ok,bytes,8388608,bytes,higher,"))
        .unwrap_or_else(|| panic!("{csv}"));
    let cells: Vec<&str> = row.split(',').collect();
    assert_eq!(cells[size], "8388608", "the workload's size, in bytes");
    assert_eq!(cells[target_path], data.to_str().unwrap(), "{row}");
    let listed = lab.ok(&["list"]);
    assert!(
        listed.contains("sizes") && listed.contains("finished"),
        "{listed}"
    );
    let shown = lab.ok(&["show"]);
    assert!(
        shown.contains("randread") && shown.contains("± "),
        "{shown}"
    );
}

#[test]
fn time_based_runs_last_their_runtime_and_sample_every_second() {
    let _alone = crate::util::measuring_alone();
    let lab = Lab::new();
    let file = lab.file(
        "t.toml",
        &format!(
            "[plan]\nrepetitions = 1\n[[target]]\nname = \"d\"\nkind = \"dir\"\npath = \"{}\"\n\
             [[workload]]\nname = \"rr\"\nkind = \"io\"\nrw = \"randread\"\nsize = \"16M\"\nnumjobs = 2\nruntime = \"2s\"\nramp_time = \"500ms\"\n",
            lab.path().display()
        ),
    );
    lab.ok(&["run", "--quiet", file.to_str().unwrap()]);
    let export = lab.export_json();
    let run = &export["runs"][0];
    let m = |name| crate::util::value_of(run, name).unwrap();
    let elapsed = m("elapsed_s");
    assert!((1.9..2.5).contains(&elapsed), "elapsed {elapsed}");
    let series = crate::util::series_of(run, "bw_bytes_per_s");
    assert_eq!(series.len(), 2, "{series:?}");
    let total: f64 = series.iter().map(|v| v.as_f64().unwrap()).sum();
    let bytes = m("bytes");
    assert!(
        total <= bytes && total > 0.8 * bytes,
        "series {total} vs bytes {bytes}"
    );
    assert!(m("cpu_sys_s") > 0.0);
}

/// fio's `time_based = 0`: `runtime` caps a size-based job, which ends
/// once it has read its size.
#[test]
fn without_time_based_runtime_only_caps_a_size_based_job() {
    let lab = Lab::new();
    let file = lab.file(
        "t.toml",
        &format!(
            "[plan]\nrepetitions = 1\n[[target]]\nname = \"d\"\nkind = \"dir\"\npath = \"{}\"\n\
             [[workload]]\nname = \"r\"\nkind = \"io\"\nrw = \"read\"\nbs = \"64k\"\nsize = \"2M\"\nruntime = \"60s\"\ntime_based = false\n",
            lab.path().display()
        ),
    );
    lab.ok(&["run", "--quiet", file.to_str().unwrap()]);
    let export = lab.export_json();
    let run = &export["runs"][0];
    assert_eq!(crate::util::value_of(run, "bytes"), Some(2.0 * MIB));
    assert!(
        run["facts"]["fio_differences"].is_null(),
        "{}",
        run["facts"]
    );
}

fn tmpfs_name() -> String {
    format!("t{}", std::process::id())
}

#[test]
#[ignore = "needs root"]
fn tmpfs_is_mounted_measured_and_unmounted() {
    let _alone = crate::util::measuring_alone();
    require_root!();
    let lab = Lab::new();
    let name = tmpfs_name();
    let file = lab.file(
        "tmpfs.toml",
        &format!(
            "[plan]\nrepetitions = 2\n[[target]]\nname = \"{name}\"\nkind = \"tmpfs\"\nsize = \"256M\"\nmount_options = [\"noatime\"]\n\
             [[workload]]\nname = \"seqread\"\nkind = \"io\"\nrw = \"read\"\nbs = \"1M\"\nsize = \"128M\"\n"
        ),
    );
    lab.ok(&["run", "--quiet", file.to_str().unwrap()]);
    assert_eq!(storlab_mounts(&name), 0, "the tmpfs is unmounted");
    let export = lab.export_json();
    for bw in metric(&export, "seqread", &name, "bw_bytes_per_s") {
        assert!(
            bw > 100e6,
            "tmpfs sequential read at {bw} B/s is implausibly slow"
        );
    }
    assert_eq!(
        metric(&export, "seqread", &name, "bytes"),
        vec![128.0 * MIB; 2]
    );
    let facts = &export["targets"][0]["facts"];
    assert_eq!(facts["fs_type"], "tmpfs", "{facts}");
    assert!(
        facts["mount_options"].as_str().unwrap().contains("noatime"),
        "{facts}"
    );
    assert_eq!(facts["size_bytes"], 256 * 1024 * 1024, "{facts}");
}

/// `huge = "always"` mounts the tmpfs with tmpfs's huge= option (the
/// superblock's options the facts read back from mountinfo), and huge= in
/// mount_options is refused
/// naming the parameter.
#[test]
#[ignore = "needs root"]
fn a_huge_page_tmpfs_is_mounted_with_huge_pages() {
    require_root!();
    let lab = Lab::new();
    let name = format!("h{}", std::process::id());
    let experiment = |extra: &str| {
        format!(
            "[plan]\nrepetitions = 1\n[[target]]\nname = \"{name}\"\nkind = \"tmpfs\"\nsize = \"64M\"\n{extra}\n\
             [[workload]]\nname = \"r\"\nkind = \"io\"\nrw = \"read\"\nbs = \"1M\"\nsize = \"16M\"\n"
        )
    };
    let refused = lab.file(
        "refused.toml",
        &experiment("mount_options = [\"huge=always\"]"),
    );
    let out = lab.run(&["check", refused.to_str().unwrap()]);
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{said}");
    assert!(said.contains("huge = \"always\""), "{said}");
    let file = lab.file("huge.toml", &experiment("huge = \"always\""));
    lab.ok(&["run", "--quiet", file.to_str().unwrap()]);
    assert_eq!(storlab_mounts(&name), 0, "the tmpfs is unmounted");
    let export = lab.export_json();
    let facts = &export["targets"][0]["facts"];
    assert!(
        facts["super_options"]
            .as_str()
            .unwrap()
            .contains("huge=always"),
        "{facts}"
    );
    assert_eq!(metric(&export, "r", &name, "bytes"), vec![16.0 * MIB]);
}

fn wait_for_runs(db: &std::path::Path, n: i64) {
    let t0 = std::time::Instant::now();
    while runs_in_store(db) < n {
        assert!(
            t0.elapsed().as_secs() < 60,
            "fewer than {n} runs after a minute"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

#[test]
#[ignore = "needs root"]
fn a_full_filesystem_fails_runs_and_the_campaign_goes_on() {
    require_root!();
    let lab = Lab::new();
    let mnt = TestMount::new(lab.path().join("small"), "16M");
    let file = lab.file(
        "full.toml",
        &format!(
            "[plan]\nrepetitions = 12\n[[target]]\nname = \"a\"\nkind = \"dir\"\npath = \"{}\"\n\
             [[workload]]\nname = \"r\"\nkind = \"io\"\nrw = \"read\"\nbs = \"1M\"\nsize = \"8M\"\nruntime = \"300ms\"\n",
            mnt.0.display()
        ),
    );
    let child = lab
        .cmd()
        .args(["run", "--quiet", file.to_str().unwrap()])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    wait_for_runs(&lab.db(), 2);
    // Another program fills the filesystem while the campaign runs, taking
    // whatever space storlab frees between runs, until a run has failed.
    let filler = mnt.0.join("filler");
    let chunk = vec![0u8; 1 << 20];
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&filler)
        .unwrap();
    let t0 = std::time::Instant::now();
    while failed_runs(&lab.db()) == 0 {
        assert!(
            t0.elapsed().as_secs() < 30,
            "no run failed with the filesystem full"
        );
        use std::io::Write;
        if f.write_all(&chunk).is_err() {
            std::thread::sleep(std::time::Duration::from_millis(2));
        }
    }
    drop(f);
    std::fs::remove_file(&filler).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{:?}", out.status);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("of 12 planned runs ok"), "{stdout}");
    let export = lab.export_json();
    let runs = export["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 12, "the campaign went on after the failures");
    let failed: Vec<&serde_json::Value> = runs.iter().filter(|r| r["status"] == "failed").collect();
    assert!(
        !failed.is_empty(),
        "no run failed while the filesystem was full"
    );
    for r in &failed {
        assert!(
            r["error"]
                .as_str()
                .unwrap()
                .contains("No space left on device"),
            "{}",
            r["error"]
        );
    }
    let last = runs.last().unwrap();
    assert_eq!(
        last["status"], "ok",
        "runs succeed again once there is room"
    );
}

#[test]
#[ignore = "needs root"]
fn a_workload_larger_than_the_free_space_is_refused_before_anything_runs() {
    require_root!();
    let lab = Lab::new();
    let mnt = TestMount::new(lab.path().join("tiny"), "8M");
    let file = lab.file(
        "big.toml",
        &format!(
            "[[target]]\nname = \"a\"\nkind = \"dir\"\npath = \"{}\"\n[[workload]]\nname = \"r\"\nkind = \"io\"\nsize = \"64M\"\n",
            mnt.0.display()
        ),
    );
    let out = lab.run(&["run", "--quiet", file.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("target `a`: a workload writes up to 64.0 MiB")
            && stderr.contains("is missing"),
        "{stderr}"
    );
    assert_eq!(
        std::fs::read_dir(&mnt.0).unwrap().count(),
        0,
        "nothing was written"
    );
}
