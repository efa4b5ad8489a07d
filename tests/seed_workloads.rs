use crate::util::{labelled, metric, Lab};

fn mean(v: &[f64]) -> f64 {
    v.iter().sum::<f64>() / v.len() as f64
}

/// An experiment on one dir target inside the lab, with these workloads.
fn on_dir(lab: &Lab, name: &str, reps: u32, workloads: &str) -> std::path::PathBuf {
    let data = lab.path().join("data");
    std::fs::create_dir_all(&data).unwrap();
    let text = format!(
        "name = \"{name}\"\n[plan]\nrepetitions = {reps}\ndrop_caches = false\n\n\
         [[target]]\nname = \"data\"\nkind = \"dir\"\npath = \"{}\"\n\n{workloads}",
        data.display()
    );
    lab.file(&format!("{name}.toml"), &text)
}

fn run(lab: &Lab, file: &std::path::Path) -> serde_json::Value {
    lab.ok(&["run", "--quiet", file.to_str().unwrap()]);
    lab.export_json()
}

#[test]
fn one_syscall_per_tiny_write_is_slower_than_buffered() {
    let lab = Lab::new();
    let w = r#"
[[workload]]
name = "syscall-each"
kind = "tinywrites"
write_size = 64
total_size = "8M"

[[workload]]
name = "buffered"
kind = "tinywrites"
write_size = 64
total_size = "8M"
buffered = true
"#;
    let export = run(&lab, &on_dir(&lab, "tiny", 3, w));
    let each = metric(&export, "syscall-each", "data", "total_s");
    let buffered = metric(&export, "buffered", "data", "total_s");
    assert_eq!(each.len(), 3);
    assert_eq!(
        metric(&export, "buffered", "data", "writes"),
        vec![131072.0; 3]
    );
    assert_eq!(
        metric(&export, "buffered", "data", "bytes_on_disk"),
        vec![8388608.0; 3]
    );
    assert!(
        mean(&each) > 1.5 * mean(&buffered),
        "one write(2) per write: {each:?} s; buffered: {buffered:?} s"
    );
}

#[test]
fn zeros_compress_better_than_random() {
    let lab = Lab::new();
    let mut w = String::new();
    for (data, compress) in [
        ("zeros", "gzip:6"),
        ("random", "gzip:6"),
        ("zeros", "zstd:3"),
        ("random", "zstd:3"),
    ] {
        let algo = &compress[..4];
        w.push_str(&format!(
            "[[workload]]\nname = \"{data}-{algo}\"\nkind = \"tinywrites\"\ntotal_size = \"4M\"\n\
             buffered = true\ndata = \"{data}\"\ncompress = \"{compress}\"\n\n"
        ));
    }
    let export = run(&lab, &on_dir(&lab, "ratio", 1, &w));
    for algo in ["gzip", "zstd"] {
        let zeros = metric(
            &export,
            &format!("zeros-{algo}"),
            "data",
            "compression_ratio",
        )[0];
        let random = metric(
            &export,
            &format!("random-{algo}"),
            "data",
            "compression_ratio",
        )[0];
        assert!(zeros > 100.0, "{algo}: zeros compress only {zeros}:1");
        assert!(random < 1.01, "{algo}: random data compressed {random}:1");
    }
}

#[test]
fn smallfiles_counts_every_operation_and_leaves_nothing() {
    let lab = Lab::new();
    let w = r#"
[[workload]]
name = "storm"
kind = "smallfiles"
threads = 2
files = 300
dirs = 7
file_size = "2k"
fsync = true
"#;
    let export = run(&lab, &on_dir(&lab, "storm", 2, w));
    for op in ["create", "stat", "read", "append", "rename", "delete"] {
        assert_eq!(
            labelled(&export, "storm", "data", "ops", &[("op", op)]),
            vec![600.0; 2],
            "{op}"
        );
    }
    assert_eq!(
        labelled(&export, "storm", "data", "ops", &[("op", "readdir")]),
        vec![14.0; 2]
    );
    assert_eq!(
        metric(&export, "storm", "data", "readdir_entries"),
        vec![600.0; 2]
    );
    assert_eq!(metric(&export, "storm", "data", "ops"), vec![3614.0; 2]);
    assert!(metric(&export, "storm", "data", "ops_per_s")[0] > 0.0);
    let left: Vec<_> = std::fs::read_dir(lab.path().join("data"))
        .unwrap()
        .collect();
    assert!(left.is_empty(), "left behind: {left:?}");
}

#[test]
fn matrix_reports_every_cell_with_stable_names() {
    let lab = Lab::new();
    let w = r#"
[[workload]]
name = "iozone"
kind = "matrix"
max_file_size = "512k"
max_record_size = "128k"
include_close = true
include_flush = true
"#;
    let export = run(&lab, &on_dir(&lab, "iozone", 1, w));
    let runs = export["runs"].as_array().unwrap();
    let metrics = runs[0]["metrics"].as_array().unwrap();
    let cell = |test: &str, file: &str, record: &str, name: &str| {
        metrics.iter().find(|m| {
            m["name"] == name
                && m["labels"]
                    == serde_json::json!({"test": test, "file_size": file, "record_size": record})
        })
    };
    // 64k: 5 records, 128k: 6, 256k: 6, 512k: 6 → 23 cells.
    assert_eq!(metric(&export, "iozone", "data", "cells"), vec![23.0]);
    for test in [
        "write",
        "rewrite",
        "read",
        "reread",
        "randread",
        "randwrite",
        "bkwdread",
        "recrewrite",
        "strideread",
        "fwrite",
        "fread",
    ] {
        for (file, record) in [("65536", "4096"), ("524288", "131072")] {
            for m in ["bw_bytes_per_s", "lat_mean_ns"] {
                let value = cell(test, file, record, m).map(|m| &m["value"]);
                assert!(
                    value.and_then(|v| v.as_f64()).unwrap() > 0.0,
                    "{test} {file} {record} {m}"
                );
            }
        }
        assert!(cell(test, "65536", "131072", "bw_bytes_per_s").is_none());
        let geomean = labelled(
            &export,
            "iozone",
            "data",
            "geomean_bw_bytes_per_s",
            &[("test", test)],
        );
        assert!(geomean[0] > 0.0, "{test}");
    }
    let write = cell("write", "65536", "4096", "bw_bytes_per_s").unwrap();
    assert_eq!(write["direction"], "higher");
    assert_eq!(write["unit"], "bytes/s");
    assert!(metric(&export, "iozone", "data", "geomean_bw_bytes_per_s")[0] > 0.0);
    let show = lab.ok(&["show"]);
    assert!(show.contains("geomean_bw_bytes_per_s"), "{show}");
}

#[test]
fn the_seed_examples_are_valid_experiments() {
    let lab = Lab::new();
    let examples = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("examples");
    let mut n = 0;
    for e in std::fs::read_dir(&examples).unwrap() {
        let path = e.unwrap().path();
        if path.extension().is_some_and(|x| x == "toml") {
            // Valid (never 2); a host without what it needs (simulated
            // servers' names, a kernel NFS client) gets 1 and the reasons.
            let out = lab.run(&["check", path.to_str().unwrap()]);
            let (o, e) = (
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr),
            );
            assert!(o.contains("valid experiment"), "{}: {o}{e}", path.display());
            match out.status.code() {
                Some(0) => {}
                Some(1) => assert!(
                    e.contains("would refuse this experiment on this host"),
                    "{e}"
                ),
                other => panic!("{}: check exited {other:?}: {e}", path.display()),
            }
            n += 1;
        }
    }
    assert!(n >= 3, "{n} examples");
}
