//! Sweeps through the real binary: the variants a sweep makes, their
//! labels on everything the store holds, zip, resuming a swept campaign,
//! and the located refusals of bad sweeps.

use std::collections::BTreeMap;
use std::time::Duration;

use crate::util::Lab;

/// Labels of every stored metric, series and histogram row, by run, with
/// the run's target and workload names.
fn stored_labels(lab: &Lab) -> Vec<(String, String, String, BTreeMap<String, String>)> {
    let conn = rusqlite::Connection::open(lab.db()).unwrap();
    let mut out = Vec::new();
    // Metrics and histograms through schema 7's names (views); series,
    // binary since schema 8, have no view: their keys are joined here.
    let series = "(SELECT v.run_id, k.name, k.labels FROM series_values v JOIN metric_keys k ON k.id = v.key_id)";
    for (table, from) in [
        ("metrics", "metrics"),
        ("series", series),
        ("histograms", "histograms"),
    ] {
        let sql = format!(
            "SELECT t.name, w.name, x.name, x.labels FROM {from} x JOIN runs r ON r.id = x.run_id
             JOIN targets t ON t.id = r.target_id JOIN workloads w ON w.id = r.workload_id"
        );
        let mut st = conn.prepare(&sql).unwrap();
        let rows = st
            .query_map([], |r| {
                Ok((
                    r.get::<_, String>(0)?,
                    r.get::<_, String>(1)?,
                    format!("{table}.{}", r.get::<_, String>(2)?),
                    r.get::<_, String>(3)?,
                ))
            })
            .unwrap();
        for row in rows {
            let (t, w, name, labels) = row.unwrap();
            out.push((t, w, name, serde_json::from_str(&labels).unwrap()));
        }
    }
    out
}

#[test]
fn a_sweep_of_two_parameters_makes_their_product_with_labels_on_every_stored_metric() {
    let lab = Lab::new();
    for d in ["one", "two"] {
        std::fs::create_dir(lab.path().join(d)).unwrap();
    }
    let file = lab.file(
        "sweep.toml",
        &format!(
            "name = \"swept\"\n[plan]\nrepetitions = 1\ndrop_caches = false\n\
             [[target]]\nname = \"d\"\nkind = \"dir\"\nsweep = {{ path = [\"{0}/one\", \"{0}/two\"] }}\n\
             [[workload]]\nname = \"io\"\nkind = \"io\"\nsize = \"1M\"\nsweep = {{ bs = [\"4k\", \"64k\"], rw = [\"read\", \"write\"] }}\n",
            lab.path().display()
        ),
    );
    let check = lab.ok(&["check", file.to_str().unwrap()]);
    for line in [
        "  target d (dir): 2 variants",
        "  workload io (io): 4 variants",
        "      io[bs=64k,rw=write]",
        "8 runs, estimated",
    ] {
        assert!(check.contains(line), "`{line}` not in\n{check}");
    }
    lab.ok(&["run", "--quiet", file.to_str().unwrap()]);

    let rows = stored_labels(&lab);
    let workloads: std::collections::BTreeSet<&str> = rows.iter().map(|r| r.1.as_str()).collect();
    assert_eq!(
        workloads.into_iter().collect::<Vec<_>>(),
        [
            "io[bs=4k,rw=read]",
            "io[bs=4k,rw=write]",
            "io[bs=64k,rw=read]",
            "io[bs=64k,rw=write]"
        ]
    );
    assert!(rows.iter().any(|r| r.2.starts_with("series.")));
    assert!(rows.iter().any(|r| r.2.starts_with("histograms.")));
    for (target, workload, name, labels) in &rows {
        let bs = if workload.contains("bs=4k") {
            "4096"
        } else {
            "65536"
        };
        let rw = if workload.contains("rw=read") {
            "read"
        } else {
            "write"
        };
        let path = format!(
            "{}/{}",
            lab.path().display(),
            if target.contains("/one") {
                "one"
            } else {
                "two"
            }
        );
        assert_eq!(
            labels.get("bs").map(String::as_str),
            Some(bs),
            "{name} of {workload}"
        );
        assert_eq!(
            labels.get("rw").map(String::as_str),
            Some(rw),
            "{name} of {workload}"
        );
        assert_eq!(labels.get("path"), Some(&path), "{name} on {target}");
    }

    // Reports read a variant's metrics as any run's; the CSV has a column
    // per swept parameter.
    let show = lab.ok(&["show"]);
    assert!(show.contains("io[bs=64k,rw=write]"), "{show}");
    let csv = lab.ok(&["export", "--format", "csv"]);
    let mut reader = csv::Reader::from_reader(csv.as_bytes());
    let header: Vec<String> = reader.headers().unwrap().iter().map(String::from).collect();
    let col = |k: &str| {
        header
            .iter()
            .position(|h| h == k)
            .unwrap_or_else(|| panic!("no column {k} in {header:?}"))
    };
    let (bs, rw, path, metric) = (col("bs"), col("rw"), col("path"), col("metric"));
    let mut primaries = 0;
    for rec in reader.records() {
        let rec = rec.unwrap();
        assert!(!rec[bs].is_empty() && !rec[rw].is_empty() && !rec[path].is_empty());
        primaries += usize::from(&rec[metric] == "bw_bytes_per_s");
    }
    assert_eq!(primaries, 8);
}

#[test]
fn zip_pairs_the_lists() {
    let lab = Lab::new();
    let file = lab.file(
        "zip.toml",
        &format!(
            "[plan]\nrepetitions = 1\ndrop_caches = false\n\
             [[target]]\nname = \"d\"\nkind = \"dir\"\npath = \"{}\"\n\
             [[workload]]\nname = \"m\"\nkind = \"mock\"\nsweep = {{ value = [10, 20, 30], seed = [1, 2, 3] }}\nsweep_mode = \"zip\"\n",
            lab.path().display()
        ),
    );
    lab.ok(&["run", "--quiet", file.to_str().unwrap()]);
    let rows = stored_labels(&lab);
    let mut seen: Vec<(String, String, String)> = rows
        .iter()
        .map(|r| (r.1.clone(), r.3["value"].clone(), r.3["seed"].clone()))
        .collect();
    // Every stored metric (the mock's and telemetry's) carries its
    // variant's values; three variants, paired, not nine.
    seen.sort();
    seen.dedup();
    assert_eq!(
        seen,
        [
            ("m[value=10,seed=1]".into(), "10".into(), "1".into()),
            ("m[value=20,seed=2]".into(), "20".into(), "2".into()),
            ("m[value=30,seed=3]".into(), "30".into(), "3".into()),
        ]
    );
}

/// Adaptive repetitions need each done run's primary value when a campaign
/// resumes: for a variant it is the value labelled with its factors. With
/// no noise each pair's interval is zero after `min` runs; a resume that
/// lost those values would go on to `max`.
#[test]
fn a_resumed_sweep_campaign_ends_with_exactly_the_planned_runs() {
    let lab = Lab::new();
    let file = lab.file(
        "resume.toml",
        &format!(
            "name = \"swept-resume\"\n[plan]\nrepetitions = {{ min = 2, max = 5, until_ci = \"1%\" }}\norder = \"randomized\"\nwarmup = 1\ndrop_caches = false\n\
             [[target]]\nname = \"a\"\nkind = \"dir\"\npath = \"{0}\"\n[[target]]\nname = \"b\"\nkind = \"dir\"\npath = \"{0}\"\n\
             [[workload]]\nname = \"m\"\nkind = \"mock\"\nduration = \"150ms\"\nsweep = {{ value = [100, 200, 400] }}\n",
            lab.path().display()
        ),
    );
    assert!(lab
        .kill_and_resume(&file, "swept-resume", &[4, 9, 13], Duration::from_secs(90))
        .success());
    let export = lab.export_json();
    assert_eq!(export["campaign"]["status"], "finished");
    let runs = export["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 18, "6 pairs × (1 warm-up + 2 measured)");
    let mut keys: Vec<(String, String, bool, u64)> = runs
        .iter()
        .map(|r| {
            (
                r["target"].as_str().unwrap().into(),
                r["workload"].as_str().unwrap().into(),
                r["warmup"].as_bool().unwrap(),
                r["repetition"].as_u64().unwrap(),
            )
        })
        .collect();
    keys.sort();
    keys.dedup();
    assert_eq!(keys.len(), 18, "no run twice");
    for s in export["stops"].as_array().unwrap() {
        assert_eq!(
            (s["reason"].as_str(), s["measured_runs"].as_u64()),
            (Some("width"), Some(2)),
            "{s}"
        );
    }
    for r in runs {
        let value = r["workload"].as_str().unwrap();
        let want = &value[value.find('=').unwrap() + 1..value.len() - 1];
        assert_eq!(r["metrics"][0]["labels"]["value"], want, "{r}");
    }
}

#[test]
fn bad_sweeps_are_located_errors() {
    let lab = Lab::new();
    let head = "[[target]]\nname = \"a\"\nkind = \"dir\"\npath = \"/tmp\"\n[[workload]]\nname = \"w\"\nkind = \"io\"\n";
    let cases = [
        (
            "unknown",
            "sweep = { blocksize = [\"4k\"] }",
            "8:11",
            "unknown swept key `blocksize`",
        ),
        (
            "empty",
            "sweep = { bs = [] }",
            "8:16",
            "`sweep.bs` is an empty list",
        ),
        (
            "other_kind",
            "sweep = { clients = [1, 8] }",
            "8:11",
            "a parameter of pgbench, sqlite-oltp workloads that this kind does not have",
        ),
    ];
    for (name, sweep, at, phrase) in cases {
        let file = lab.file(&format!("{name}.toml"), &format!("{head}{sweep}\n"));
        let out = lab.run(&["check", file.to_str().unwrap()]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{name}: {stderr}");
        let expected = format!("error: {}:{at}: ", file.display());
        assert!(
            stderr.starts_with(&expected) && stderr.contains(phrase),
            "{name}: {stderr}"
        );
        // The message, then the line with a caret under the key or value.
        assert!(
            stderr.lines().nth(2).is_some_and(|l| l.starts_with("8 | ")),
            "{name}: {stderr}"
        );
        assert!(
            stderr.lines().nth(3).is_some_and(|l| l.contains('^')),
            "{name}: {stderr}"
        );
    }
}

/// `compare --fail-on-regression` judges every variant: two campaigns of
/// one swept experiment, the second 20% slower, name each variant.
#[test]
fn the_regression_gate_judges_every_variant() {
    let lab = Lab::new();
    let experiment = |value: u32| {
        format!(
            "name = \"gate\"\n[plan]\nrepetitions = 4\ndrop_caches = false\n\
             [[target]]\nname = \"d\"\nkind = \"dir\"\npath = \"{}\"\n\
             [[workload]]\nname = \"m\"\nkind = \"mock\"\nvalue = {value}\nnoise = 0.01\nsweep = {{ seed = [1, 2, 3] }}\n",
            lab.path().display()
        )
    };
    let first = lab.file("a.toml", &experiment(1000));
    lab.ok(&["run", "--quiet", first.to_str().unwrap()]);
    let second = lab.file("b.toml", &experiment(800));
    lab.ok(&["run", "--quiet", second.to_str().unwrap()]);
    // The two campaigns' workloads differ (value 1000 and 800): compare
    // refuses that unless told, then judges it with a caveat.
    let refused = lab.run(&["compare", "1", "2", "--fail-on-regression", "5"]);
    assert_eq!(refused.status.code(), Some(2));
    let out = lab.run(&[
        "compare",
        "1",
        "2",
        "--allow-different",
        "--fail-on-regression",
        "5",
    ]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    for seed in 1..=3 {
        assert!(
            stderr.contains(&format!(
                "regression: m[seed={seed}] ops_per_s on d @ campaign 2"
            )),
            "{stderr}"
        );
    }
}

// A sweep of more variants than a report lays out (100) gets the
// sections of 100 of them, evenly spaced with the first and the last, and
// says so before them; `--workload` lays out the variants asked for, and
// a name that is neither a variant nor a table is refused with the
// tables' names. The summary judges every variant whatever is laid out.
#[test]
fn a_report_lays_out_at_most_a_hundred_variants_of_a_table_or_those_asked() {
    let lab = Lab::new();
    let values: Vec<String> = (1..=101).map(|v| v.to_string()).collect();
    let path = lab.file(
        "e.toml",
        &format!(
            "name = \"wide\"\n[plan]\nrepetitions = 2\ndrop_caches = false\nblock_trace = false\nmax_variants = 1000\n\
             [[target]]\nname = \"d\"\nkind = \"dir\"\npath = \"{}\"\n\
             [[workload]]\nname = \"m\"\nkind = \"mock\"\nnoise = 0.01\nsweep = {{ seed = [{}] }}\n",
            lab.path().display(),
            values.join(", ")
        ),
    );
    lab.ok(&["run", "--quiet", path.to_str().unwrap()]);
    let section = |v: u32| format!("\n## m[seed={v}] (mock)\n");
    let md = lab.path().join("r.md");
    lab.ok(&["report", "-o", md.to_str().unwrap()]);
    let text = std::fs::read_to_string(&md).unwrap();
    let laid: Vec<u32> = (1..=101).filter(|&v| text.contains(&section(v))).collect();
    assert_eq!(laid.len(), 100, "{laid:?}");
    assert!(laid.contains(&1) && laid.contains(&101), "{laid:?}");
    assert!(
        text.contains("## m: 100 of its 101 variants laid out")
            && text.contains("evenly spaced along the sweep from m[seed=1] to m[seed=101]"),
        "{text}"
    );
    // Asked for: those only; the study still has every variant.
    lab.ok(&[
        "report",
        "--workload",
        "m[seed=7]",
        "--workload",
        "m[seed=60]",
        "-o",
        md.to_str().unwrap(),
    ]);
    let text = std::fs::read_to_string(&md).unwrap();
    let laid: Vec<u32> = (1..=101).filter(|&v| text.contains(&section(v))).collect();
    assert_eq!(laid, vec![7, 60]);
    assert!(
        text.contains("## m: 2 of its 101 variants laid out"),
        "{text}"
    );
    assert!(text.contains("those asked for (--workload)"), "{text}");
    lab.ok(&["report", "--workload", "m", "-o", md.to_str().unwrap()]);
    let text = std::fs::read_to_string(&md).unwrap();
    assert_eq!(
        (1..=101).filter(|&v| text.contains(&section(v))).count(),
        101
    );
    assert!(!text.contains("variants laid out"), "{text}");
    let refused = lab.run(&["report", "--workload", "n", "-o", md.to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(!refused.status.success(), "{stderr}");
    assert!(
        stderr.contains(
            "--workload n: campaign 1 has no workload or workload table `n` (its tables: m;"
        ),
        "{stderr}"
    );
    let json = lab.run(&["report", "--workload", "m", "--format", "json"]);
    assert_eq!(json.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&json.stderr).contains("--workload chooses the sections"));
}
