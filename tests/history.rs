//! Across releases, hosts and stores (#20): provenance and tags recorded
//! with every campaign, `import` of other stores, comparisons across
//! campaigns that say what differs first (in the terminal and in the
//! report of two campaigns), and the history with its change-point test. Mock and command workloads on plain directories: no
//! root, a few seconds.

use std::path::{Path, PathBuf};

use serde_json::{json, Value};
use storlab::report::render::markdown::md_escape;

use crate::util::Lab;

/// An experiment with one directory target and a `mock` workload of `value`.
fn mock_file(lab: &Lab, file: &str, value: u32) -> PathBuf {
    let data = lab.path().join("data");
    std::fs::create_dir_all(&data).unwrap();
    lab.file(
        file,
        &format!(
            "name = \"release\"\n[plan]\nrepetitions = 3\n[[target]]\nname = \"d\"\nkind = \"dir\"\npath = \"{}\"\n\
             [[workload]]\nname = \"m\"\nkind = \"mock\"\nvalue = {value}\nnoise = 0.01\n",
            data.display()
        ),
    )
}

/// An experiment whose `command` workload sleeps for the seconds written
/// in `delay`: the same workload, a slower "system" when the file says so.
fn sleep_file(lab: &Lab, delay: &Path) -> PathBuf {
    let data = lab.path().join("data");
    std::fs::create_dir_all(&data).unwrap();
    lab.file(
        "sleep.toml",
        &format!(
            "name = \"nightly\"\n[plan]\nrepetitions = 3\n[[target]]\nname = \"d\"\nkind = \"dir\"\npath = \"{}\"\n\
             [[workload]]\nname = \"nap\"\nkind = \"command\"\ncommand = [\"sh\", \"-c\", \"sleep $(cat '{}')\"]\n",
            data.display(),
            delay.display()
        ),
    )
}

fn run_tagged(lab: &Lab, file: &Path, tags: &[&str]) {
    let mut args = vec!["run", "--quiet"];
    for t in tags {
        args.extend(["--tag", t]);
    }
    args.push(file.to_str().unwrap());
    lab.ok(&args);
}

/// Starts a tagged campaign in `lab` without waiting: two labs at once
/// write their stores as two hosts would.
fn spawn_tagged(lab: &Lab, file: &Path, tag: &str) -> std::process::Child {
    lab.cmd()
        .args(["run", "--quiet", "--tag", tag, file.to_str().unwrap()])
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap()
}

fn stderr(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn tags_host_facts_and_a_uuid_are_recorded_shown_exported_and_filtered() {
    let lab = Lab::new();
    let file = mock_file(&lab, "exp.toml", 1000);
    run_tagged(&lab, &file, &["gluster=10.3", "host=node3"]);
    run_tagged(&lab, &file, &["gluster=11.1"]);
    let export = lab.export_json();
    let p = &export["provenance"];
    assert_eq!(p["tags"], serde_json::json!({ "gluster": "11.1" }));
    assert_eq!(p["uuid"].as_str().unwrap().len(), 36);
    for fact in [
        "kernel",
        "distribution",
        "hostname",
        "cpu_governor",
        "transparent_hugepage",
        "kernel_cmdline",
    ] {
        assert!(
            p["host"][fact].as_str().is_some_and(|v| !v.is_empty()),
            "{fact}: {p}"
        );
    }
    // The provenance is shown with -v.
    let show = lab.ok(&["-v", "show", "1"]);
    assert!(show.contains("tags: gluster=10.3 host=node3"), "{show}");
    assert!(
        show.contains(&format!("kernel {}", p["host"]["kernel"].as_str().unwrap())),
        "{show}"
    );
    let list = lab.ok(&["list", "--where", "gluster=10.3"]);
    let rows: Vec<&str> = list.lines().skip(2).collect();
    assert_eq!(rows.len(), 1, "campaign 1 only:\n{list}");
    assert!(
        rows[0].trim_start().starts_with('1')
            && rows[0].trim_end().ends_with("gluster=10.3 host=node3"),
        "{list}"
    );
    let kernel = format!("kernel={}", p["host"]["kernel"].as_str().unwrap());
    assert_eq!(
        lab.ok(&["list", "--where", &kernel])
            .lines()
            .skip(2)
            .count(),
        2
    );
    let bad = lab.run(&["run", "--tag", "gluster", file.to_str().unwrap()]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(stderr(&bad).contains("KEY=VALUE"), "{}", stderr(&bad));
}

/// The version facts of a campaign that uses loop (ext4), zfs, gluster,
/// pgbench and fio, checked against what it ran: every program `-v` shows
/// it running (version probes aside) has its version recorded, and no
/// program it did not run. Real targets and workloads, one short run each.
#[test]
#[ignore = "needs root"]
fn versions_are_recorded_for_every_program_a_real_campaign_ran() {
    require_root!();
    for p in [
        "mkfs.ext4",
        "zpool",
        "zfs-fuse",
        "glusterd",
        "gluster",
        "glusterfs",
        "fio",
    ] {
        require_program!(p);
    }
    crate::pgbench_runs::require_postgres();
    let _d = crate::provision::daemons();
    let lab = crate::pgbench_runs::reachable_lab();
    let _guard = crate::provision::Guard::new(&lab);
    let dir = lab.path().display().to_string();
    let file = lab.file(
        "all.toml",
        &format!(
            "name = \"versions\"\n[plan]\nrepetitions = 1\n\
             [[target]]\nname = \"ext4\"\nkind = \"loop\"\nfs = \"ext4\"\nsize = \"400M\"\ndir = \"{dir}\"\n\
             [[target]]\nname = \"zfs\"\nkind = \"zfs\"\nsize = \"400M\"\ndir = \"{dir}\"\n\
             [[target]]\nname = \"gl\"\nkind = \"gluster\"\nbricks = 1\ndir = \"{dir}\"\n\
             [[workload]]\nname = \"pg\"\nkind = \"pgbench\"\nscale = 1\nclients = 1\ntransactions = 50\n\
             [[workload]]\nname = \"f\"\nkind = \"fio\"\noptions = {{ rw = \"read\", size = \"1M\" }}\n"
        ),
    );
    let out = lab.run(&["-v", "run", file.to_str().unwrap()]);
    let err = stderr(&out);
    assert!(out.status.success(), "{err}");
    // The version fact that stands for each program storlab may run.
    let fact_of = |program: &str| -> Option<&'static str> {
        Some(match program {
            "mkfs.ext4" => "mkfs.ext4",
            "zpool" | "zfs" | "zfs-fuse" => "zfs",
            "gluster" | "glusterd" | "glusterfs" => "glusterfs",
            "pgbench" => "pgbench",
            "postgres" | "initdb" | "psql" => "postgres",
            "fio" => "fio",
            _ => return None,
        })
    };
    // `-v` prints each command as a shell line, some as `cd DIR && …`.
    let ran: std::collections::BTreeSet<&str> = err
        .lines()
        .map(|l| l.rsplit_once(" && ").map(|(_, c)| c).unwrap_or(l))
        .filter_map(|l| {
            let mut words = l.split_whitespace();
            let program = words.next()?.rsplit('/').next()?;
            let args: Vec<&str> = words.collect();
            let probe = matches!(args.as_slice(), ["-V"] | ["--version"]);
            (!probe).then_some(program)
        })
        .filter_map(fact_of)
        .collect();
    let expected = [
        "fio",
        "glusterfs",
        "mkfs.ext4",
        "pgbench",
        "postgres",
        "zfs",
    ];
    assert_eq!(ran.iter().copied().collect::<Vec<_>>(), expected, "{err}");
    let export = lab.export_json();
    let versions = export["provenance"]["versions"].as_object().unwrap();
    let names: Vec<&str> = versions.keys().map(String::as_str).collect();
    assert_eq!(names, expected, "exactly the programs it ran: {versions:?}");
    let v = |k: &str| versions[k].as_str().unwrap();
    assert!(
        v("mkfs.ext4").starts_with("mke2fs 1."),
        "{}",
        v("mkfs.ext4")
    );
    assert!(
        v("zfs").starts_with("zfs-fuse ") || v("zfs").starts_with("OpenZFS "),
        "{}",
        v("zfs")
    );
    assert!(
        v("glusterfs").starts_with("glusterfs "),
        "{}",
        v("glusterfs")
    );
    assert!(v("pgbench").contains("(PostgreSQL) "), "{}", v("pgbench"));
    assert!(v("postgres").contains("(PostgreSQL) "), "{}", v("postgres"));
    assert!(v("fio").starts_with("fio-"), "{}", v("fio"));
    // The same versions as the targets saw them while provisioned.
    let facts = |t: &str| {
        export["targets"]
            .as_array()
            .unwrap()
            .iter()
            .find(|x| x["name"] == t)
            .unwrap()["facts"]
            .clone()
    };
    assert_eq!(facts("ext4")["mkfs_version"], v("mkfs.ext4"));
    assert_eq!(facts("gl")["gluster_version"], v("glusterfs"));
    // Every run measured something: the programs did run.
    for r in export["runs"].as_array().unwrap() {
        assert_eq!(r["status"], "ok", "{r}");
    }
    let journals = std::fs::read_dir(lab.state_dir())
        .map(|d| d.count())
        .unwrap_or(0);
    assert_eq!(journals, 0, "the campaign tore down what it provisioned");
    let show = lab.ok(&["-v", "show"]);
    for k in expected {
        let line = show.lines().find(|l| l.starts_with("versions: ")).unwrap();
        let text = v(k).split_whitespace().next().unwrap();
        assert!(line.contains(text), "{k}: {line}");
    }
}

#[test]
fn two_hosts_stores_imported_into_a_third_once_and_compared() {
    let (a, b, hub) = (Lab::new(), Lab::new(), Lab::new());
    let fa = mock_file(&a, "exp.toml", 1000);
    let fb = mock_file(&b, "exp.toml", 1000);
    // Two processes at once, as two hosts would write their stores.
    let (mut pa, mut pb) = (
        spawn_tagged(&a, &fa, "host=a"),
        spawn_tagged(&b, &fb, "host=b"),
    );
    assert!(pa.wait().unwrap().success() && pb.wait().unwrap().success());
    let (da, db) = (a.db(), b.db());
    let first = hub.ok(&["import", da.to_str().unwrap(), db.to_str().unwrap()]);
    assert_eq!(first.matches("imported campaign 1").count(), 2, "{first}");
    let again = hub.ok(&["import", da.to_str().unwrap(), db.to_str().unwrap()]);
    assert!(!again.contains("imported"), "{again}");
    assert_eq!(again.matches("already here").count(), 2, "{again}");
    let list = hub.ok(&["list"]);
    assert_eq!(list.lines().skip(2).count(), 2, "{list}");
    // Everything came along: the runs, their metrics, the provenance.
    let ea: Value = serde_json::from_str(&a.ok(&["export", "--format", "json"])).unwrap();
    let eh: Value = serde_json::from_str(&hub.ok(&["export", "1", "--format", "json"])).unwrap();
    assert_eq!(ea["provenance"]["uuid"], eh["provenance"]["uuid"]);
    assert_eq!(eh["provenance"]["tags"]["host"], "a");
    assert_eq!(eh["provenance"]["imported"]["original_id"], "1");
    assert_eq!(
        crate::util::metric(&ea, "m", "d", "ops_per_s"),
        crate::util::metric(&eh, "m", "d", "ops_per_s")
    );
    let cmp = hub.ok(&["compare", "1", "2"]);
    let first_line = cmp.lines().next().unwrap();
    assert!(
        first_line.contains("host: a → b"),
        "the tags are the headline:\n{cmp}"
    );
    // The same runs in both: equivalent within ±5% (+0.0% [-2.3%, +2.3%]).
    assert!(cmp.contains("equivalent"), "{cmp}");
    // A terminal of 100 columns gets it all within them.
    let narrow = hub
        .cmd()
        .env("COLUMNS", "100")
        .args(["compare", "1", "2"])
        .output()
        .unwrap();
    let narrow = String::from_utf8_lossy(&narrow.stdout);
    assert!(narrow.lines().all(|l| l.chars().count() <= 100), "{narrow}");
    // The verdict (and its caveat marks) may wrap within its column: its
    // continuation lines hold nothing else.
    let words = narrow.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(words.contains("equivalent"), "{narrow}");
    // The source stores were only read.
    assert!(!a.ok(&["show"]).contains("imported"));
}

#[test]
fn an_old_store_imported_twice_is_recognised() {
    let (old, hub) = (Lab::new(), Lab::new());
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/v3/all-kinds.db");
    std::fs::copy(&fixture, old.db()).unwrap();
    let before = std::fs::read(old.db()).unwrap();
    let first = hub.ok(&["import", old.db().to_str().unwrap()]);
    assert_eq!(first.matches("imported campaign").count(), 2, "{first}");
    assert_eq!(
        std::fs::read(old.db()).unwrap(),
        before,
        "the v3 store was not written"
    );
    let again = hub.ok(&["import", old.db().to_str().unwrap()]);
    assert_eq!(again.matches("already here").count(), 2, "{again}");
    // The same store migrated on its own gives the same identities.
    let migrated: Value =
        serde_json::from_str(&old.ok(&["export", "1", "--format", "json"])).unwrap();
    let imported: Value =
        serde_json::from_str(&hub.ok(&["export", "1", "--format", "json"])).unwrap();
    assert_eq!(
        migrated["provenance"]["uuid"],
        imported["provenance"]["uuid"]
    );
    assert_eq!(
        migrated["runs"].as_array().unwrap().len(),
        imported["runs"].as_array().unwrap().len()
    );
    let itself = hub.run(&["import", hub.db().to_str().unwrap()]);
    assert!(!itself.status.success() && stderr(&itself).contains("this store itself"));
    let missing = hub.run(&["import", "/nonexistent/x.db"]);
    assert!(!missing.status.success() && stderr(&missing).contains("no results store at"));
}

/// A campaign interrupted, imported, then resumed in its own store:
/// importing it again brings the new runs under the same id, none twice; a
/// third import adds nothing; a copy that went on differently elsewhere is
/// left alone with a warning.
#[test]
fn a_campaign_resumed_after_its_import_brings_its_new_runs_once() {
    let (a, fork, hub) = (Lab::new(), Lab::new(), Lab::new());
    let data = a.path().join("data");
    std::fs::create_dir_all(&data).unwrap();
    let file = a.file(
        "nap.toml",
        &format!(
            "name = \"nap\"\n[plan]\nrepetitions = 6\n[[target]]\nname = \"d\"\nkind = \"dir\"\npath = \"{}\"\n\
             [[workload]]\nname = \"s\"\nkind = \"command\"\ncommand = [\"sleep\", \"0.3\"]\n",
            data.display()
        ),
    );
    let mut child = a
        .cmd()
        .args(["run", "--quiet", file.to_str().unwrap()])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let t0 = std::time::Instant::now();
    while crate::util::runs_in_store(&a.db()) < 2 && t0.elapsed().as_secs() < 60 {
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGINT) };
    child.wait().unwrap();
    let count = |lab: &Lab| -> usize {
        let e: Value = serde_json::from_str(&lab.ok(&["export", "1", "--format", "json"])).unwrap();
        e["runs"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|r| r["status"] == "ok")
            .count()
    };
    let first = hub.ok(&["import", a.db().to_str().unwrap()]);
    assert!(first.contains("imported campaign 1 `nap`"), "{first}");
    let before = count(&hub);
    assert!((2..6).contains(&before), "{before} runs before the resume");
    std::fs::copy(a.db(), fork.db()).unwrap();
    a.ok(&["run", "--quiet", "--resume", "1"]);
    let again = hub.ok(&["import", a.db().to_str().unwrap()]);
    assert!(
        again.contains(&format!(
            "went on since it was imported: {} new run(s), campaign 1 here now holds all its runs",
            6 - before
        )),
        "{again}"
    );
    assert_eq!(count(&hub), 6, "every run once");
    let runs: Vec<Value> =
        serde_json::from_str::<Value>(&hub.ok(&["export", "1", "--format", "json"])).unwrap()
            ["runs"]
            .as_array()
            .unwrap()
            .clone();
    let mut places: Vec<(i64, String)> = runs
        .iter()
        .map(|r| {
            (
                r["position"].as_i64().unwrap(),
                r["started_at"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    places.sort();
    places.dedup();
    assert_eq!(places.len(), runs.len(), "no run twice");
    let list = hub.ok(&["list"]);
    assert_eq!(list.lines().skip(2).count(), 1, "{list}");
    assert!(list.contains("finished"), "{list}");
    let third = hub.ok(&["import", a.db().to_str().unwrap()]);
    assert!(third.contains("already here"), "{third}");
    // Imported between its last run and its end (as if): the same runs,
    // but it has ended since.
    let conn = rusqlite::Connection::open(hub.db()).unwrap();
    conn.execute("UPDATE campaigns SET status = 'interrupted'", [])
        .unwrap();
    drop(conn);
    let ended = hub.ok(&["import", a.db().to_str().unwrap()]);
    assert!(
        ended.contains("has ended since it was imported (no new run)"),
        "{ended}"
    );
    assert!(hub.ok(&["list"]).contains("finished"));
    assert_eq!(count(&hub), 6);
    // The fork went on by itself: each side now has runs the other lacks.
    fork.ok(&["run", "--quiet", "--resume", "1"]);
    let forked = hub.run(&["import", fork.db().to_str().unwrap()]);
    assert!(forked.status.success());
    assert!(
        stderr(&forked).contains("each hold runs the other lacks"),
        "{}",
        stderr(&forked)
    );
    assert_eq!(count(&hub), 6);
}

#[test]
fn different_workload_parameters_refuse_unless_allowed_then_a_caveat() {
    let lab = Lab::new();
    run_tagged(&lab, &mock_file(&lab, "a.toml", 1000), &["v=1"]);
    run_tagged(&lab, &mock_file(&lab, "b.toml", 1100), &["v=2"]);
    let refused = lab.run(&["compare", "1", "2"]);
    assert_eq!(refused.status.code(), Some(2));
    let e = stderr(&refused);
    assert!(
        e.contains("workload `m` value: 1000 in campaign 1, 1100 in campaign 2"),
        "{e}"
    );
    assert!(e.contains("--allow-different"), "{e}");
    let allowed = lab.ok(&["compare", "1", "2", "--allow-different"]);
    assert!(
        allowed.contains("caveat: the workloads differ"),
        "{allowed}"
    );
    assert!(allowed.contains("faster"), "{allowed}");
    let json: Value = serde_json::from_str(&lab.ok(&[
        "compare",
        "1",
        "2",
        "--allow-different",
        "--format",
        "json",
        "--metric",
        "all",
    ]))
    .unwrap();
    assert_eq!(json["headline"], "v: 1 → 2");
    assert_eq!(json["differences"]["workload_params"][0]["name"], "value");
    let metrics: Vec<&str> = json["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["metric"].as_str().unwrap())
        .collect();
    // The mock measures one metric; telemetry adds the host's beside it.
    assert_eq!(metrics[0], "ops_per_s", "the primary first: {metrics:?}");
    assert!(
        metrics.iter().skip(1).all(|m| *m != "ops_per_s"),
        "{metrics:?}"
    );
    assert!(
        json["rows"][0]["candidate"]["comparison"]["diff_pct"]
            .as_f64()
            .unwrap()
            > 5.0
    );
}

#[test]
fn five_nightly_campaigns_step_at_the_fourth_and_the_tag_gate_fails_it() {
    let lab = Lab::new();
    let delay = lab.path().join("delay");
    let file = sleep_file(&lab, &delay);
    // A step far above what a loaded host adds to a short sleep (a fork and
    // exec can take most of a second at a load of 20): the test must not
    // depend on the machine being quiet.
    for (i, d) in ["0.05", "0.05", "0.05", "1.0", "1.0"].iter().enumerate() {
        std::fs::write(&delay, d).unwrap();
        run_tagged(&lab, &file, &[&format!("build={}", i + 1)]);
    }
    let text = lab.ok(&["history"]);
    eprintln!("{text}");
    assert!(text.contains("5 campaign(s)"), "{text}");
    assert!(
        text.contains("step: a regression began at campaign 4"),
        "{text}"
    );
    let json: Value =
        serde_json::from_str(&lab.ok(&["history", "nightly", "--format", "json"])).unwrap();
    let step = &json["series"][0]["step"];
    assert_eq!(step["kind"], "found");
    assert_eq!(step["campaign"], 4);
    assert_eq!(step["word"], "slower");
    // On a terminal of 100 columns the nine-column table fits, leaving
    // out what matters least (and no column no campaign fills).
    let out = lab
        .cmd()
        .env("COLUMNS", "100")
        .arg("history")
        .output()
        .unwrap();
    let fitted = String::from_utf8_lossy(&out.stdout);
    assert!(
        fitted.lines().all(|l| l.chars().count() <= 100) && fitted.contains("left out to fit"),
        "{fitted}"
    );
    assert!(!fitted.contains("changed"), "no version changed: {fitted}");
    let by_tag = lab.ok(&["history", "--by", "tag:build"]);
    assert!(by_tag.contains("began at campaign 4"), "{by_tag}");
    let html = lab.path().join("history.html");
    lab.ok(&["history", "-o", html.to_str().unwrap()]);
    history_page_renders(&html);
    // The gate: the latest campaign against the latest one tagged build=3.
    let gate = lab.run(&[
        "compare",
        "--baseline-tag",
        "build=3",
        "--fail-on-regression",
        "5",
    ]);
    assert_eq!(gate.status.code(), Some(1), "{}", stderr(&gate));
    assert!(
        stderr(&gate).contains("regression: nap"),
        "{}",
        stderr(&gate)
    );
    // Campaigns 4 and 5 slept alike; a loaded host may still tell them
    // apart by a few percent, never by half.
    let pass = lab.run(&[
        "compare",
        "--baseline-tag",
        "build=4",
        "--fail-on-regression",
        "50",
    ]);
    assert_eq!(pass.status.code(), Some(0), "{}", stderr(&pass));
    let none = lab.run(&["compare", "--baseline-tag", "build=9"]);
    assert!(
        stderr(&none).contains("carries build=9"),
        "{}",
        stderr(&none)
    );
}

/// Two hosts' stores, each a campaign of the same experiment tagged with
/// its Gluster release, the second's mock workload 10% faster (as if the
/// release were), imported into a third; `report 1 2` refuses them as
/// `compare` does, then with --allow-different writes HTML and Markdown
/// from one document: the headline first, the caveat, the differences
/// without the facts that change every campaign, the numbers compare's.
#[test]
fn the_report_of_two_campaigns_says_what_differs_before_its_numbers() {
    let (a, b, hub) = (Lab::new(), Lab::new(), Lab::new());
    let fa = mock_file(&a, "exp.toml", 1000);
    let fb = mock_file(&b, "exp.toml", 1100);
    let (mut pa, mut pb) = (
        spawn_tagged(&a, &fa, "gluster=10.3"),
        spawn_tagged(&b, &fb, "gluster=11.1"),
    );
    assert!(pa.wait().unwrap().success() && pb.wait().unwrap().success());
    hub.ok(&["import", a.db().to_str().unwrap(), b.db().to_str().unwrap()]);
    let html = hub.path().join("cmp.html");
    let md = hub.path().join("cmp.md");
    let refused = hub.run(&["report", "1", "2", "-o", html.to_str().unwrap()]);
    assert_eq!(refused.status.code(), Some(2));
    assert!(
        stderr(&refused).contains("workload `m` value: 1000 in campaign 1, 1100 in campaign 2"),
        "{}",
        stderr(&refused)
    );
    assert!(!html.exists(), "nothing written when refused");
    for out in [&html, &md] {
        let written = hub.run(&[
            "report",
            "1",
            "2",
            "--allow-different",
            "-o",
            out.to_str().unwrap(),
        ]);
        assert!(written.status.success(), "{}", stderr(&written));
        assert!(
            stderr(&written).contains("warning: the workloads differ"),
            "the caveat in the terminal too: {}",
            stderr(&written)
        );
    }
    let text = std::fs::read_to_string(&md).unwrap();
    eprintln!("{text}");
    // The headline is the first heading; the caveat follows it; both come
    // before any number.
    let order = [
        "# release — campaign 2 against campaign 1\n",
        "\n## gluster: 10.3 → 11.1\n",
        "\n## Caveats\n",
        "the workloads differ (workload \\`m\\` value: 1000 in campaign 1, 1100 in campaign 2)",
        "\n## The two campaigns\n",
        "| Tags | **gluster=10.3** | **gluster=11.1** |",
        "\n## What differs\n",
        "| tag |  | gluster | 10.3 | 11.1 |",
        "| workload parameter | m | value | 1000 | 1100 |",
        "\n## m (mock)\n",
    ];
    let mut at = 0;
    for part in order {
        let found = text[at..]
            .find(part)
            .unwrap_or_else(|| panic!("{part:?} after byte {at} in:\n{text}"));
        at += found + part.len();
    }
    assert!(
        !text[..text.find("## m (mock)").unwrap()].contains("ops/s"),
        "no number before the differences"
    );
    // Each host's directory is its own, said once (a parameter, not again
    // as the fact that repeats it); their free space, when it differs (both
    // labs share a filesystem), is set apart.
    assert_eq!(text.matches("| target parameter | d | path |").count(), 1);
    assert!(!text.contains("| target fact |"), "{text}");
    if let Some(left) = text.lines().find(|l| l.starts_with("Left out")) {
        assert!(
            left.ends_with("same configuration (1 target fact(s)): d free_bytes."),
            "{text}"
        );
    }
    // The numbers are compare's: the same rows as its JSON, each in the
    // report with its interval and verdict.
    let args = ["1", "2", "--allow-different", "--format", "json"];
    let from_report: Value =
        serde_json::from_str(&hub.ok(&[&["report"][..], &args].concat())).unwrap();
    let from_compare: Value =
        serde_json::from_str(&hub.ok(&[&["compare"][..], &args].concat())).unwrap();
    assert_eq!(from_report, from_compare);
    let row = &from_compare["rows"][0];
    let c = &row["candidate"]["comparison"];
    let (d, lo, hi) = (
        c["diff_pct"].as_f64().unwrap(),
        c["diff_pct_ci"]["low"].as_f64().unwrap(),
        c["diff_pct_ci"]["high"].as_f64().unwrap(),
    );
    assert!(lo > 5.0 && d > lo && hi > d && hi < 15.0, "{c}");
    // The verdict, then its caveat marks where the runs carry any (a
    // loaded host: "faster ⚠ noisy host").
    let cell = format!(" ops/s | {d:+.1}% [{lo:+.1}%, {hi:+.1}%] | \\<0.001 | faster");
    assert!(
        text.lines().any(|l| l.starts_with("| d | ops_per_s | ")
            && (l.ends_with(&format!("{cell} |")) || l.contains(&format!("{cell} ⚠")))),
        "{cell}\n{text}"
    );
    let sentence = format!("m on d: operations/s faster, {d:+.1}% [{lo:+.1}%, {hi:+.1}%]");
    assert!(text.contains(&format!("- {sentence}")), "{text}");
    // The JSON words it as the report's headline does (one function).
    let said = from_compare["verdicts"][0].as_str().unwrap();
    assert!(said.starts_with(&sentence), "{said}");
    assert!(
        text.contains(&format!("- {}\n", md_escape(said))),
        "{said}\n{text}"
    );
    comparison_page_renders(&html);
    // A CSV of two campaigns is refused with what to do instead.
    let csv = hub.run(&["report", "1", "2", "--format", "csv"]);
    assert_eq!(csv.status.code(), Some(2));
    assert!(stderr(&csv).contains("storlab export"), "{}", stderr(&csv));
}

/// The comparison page in a real headless Chromium: it loads without a
/// console error, no script and no request but the page; its first
/// heading after the title is the headline; one difference chart whose
/// whisker is the comparison's interval (tested where the chart is made).
fn comparison_page_renders(html: &Path) {
    let (mut b, url) = open_page(html);
    assert_eq!(
        b.eval("document.querySelector('h2').textContent"),
        "gluster: 10.3 → 11.1"
    );
    // The overview figure first (one row), then the workload's chart.
    assert_eq!(
        b.eval("document.querySelectorAll('.overview .chart svg').length"),
        json!(1)
    );
    let sizes = b.eval("Array.from(document.querySelectorAll('.chart svg')).filter(e => !e.closest('.overview')).map(e => { const r = e.getBoundingClientRect(); return [r.width, r.height]; })");
    let sizes = sizes.as_array().unwrap();
    assert_eq!(sizes.len(), 1, "one workload, one chart: {sizes:?}");
    assert!(
        sizes[0][0].as_f64().unwrap() > 100.0 && sizes[0][1].as_f64().unwrap() > 100.0,
        "{sizes:?}"
    );
    let svg = b.eval("document.querySelectorAll('.chart svg')[1].textContent");
    assert!(
        svg.as_str()
            .unwrap()
            .contains("campaign 2 against campaign 1"),
        "{svg}"
    );
    let differs =
        b.eval("Array.from(document.querySelectorAll('td.differs')).map(e => e.textContent)");
    assert_eq!(differs, serde_json::json!(["gluster=10.3", "gluster=11.1"]));
    page_is_quiet(&mut b, &url);
}

/// A page of `html` loaded in headless Chromium, with its URL.
fn open_page(html: &Path) -> (crate::cdp::Browser, String) {
    let binary = crate::browser::chromium_binary();
    let mut b = crate::cdp::Browser::launch(&binary);
    let url = format!("file://{}", html.display());
    b.call("Page.navigate", serde_json::json!({ "url": url }), true);
    b.wait_for("Page.loadEventFired");
    (b, url)
}

/// No script, no request but the page's own, no console error.
fn page_is_quiet(b: &mut crate::cdp::Browser, url: &str) {
    assert_eq!(
        b.eval("document.querySelectorAll('script').length"),
        serde_json::json!(0)
    );
    let requests: Vec<&str> = b
        .events
        .iter()
        .filter(|e| e["method"] == "Network.requestWillBeSent")
        .filter_map(|e| e["params"]["request"]["url"].as_str())
        .collect();
    assert!(requests.iter().all(|u| *u == url), "requests: {requests:?}");
    let errors: Vec<&Value> = b
        .events
        .iter()
        .filter(|e| {
            e["method"] == "Runtime.exceptionThrown"
                || (e["method"] == "Log.entryAdded" && e["params"]["entry"]["level"] == "error")
        })
        .collect();
    assert!(errors.is_empty(), "console errors: {errors:?}");
}

/// The history page in a real headless Chromium: one chart per series,
/// drawn larger than 100 × 100 px, with its five points, the step and the
/// campaigns' labels; no script, no request but the page, no console error.
fn history_page_renders(html: &Path) {
    let (mut b, url) = open_page(html);
    let sizes = b.eval("Array.from(document.querySelectorAll('.chart svg')).map(e => { const r = e.getBoundingClientRect(); return [r.width, r.height]; })");
    let sizes = sizes.as_array().unwrap();
    assert_eq!(sizes.len(), 1, "one series, one chart");
    assert!(
        sizes[0][0].as_f64().unwrap() > 100.0 && sizes[0][1].as_f64().unwrap() > 100.0,
        "{sizes:?}"
    );
    assert_eq!(
        b.eval("document.querySelectorAll('.chart svg circle').length"),
        serde_json::json!(5)
    );
    let text = b.eval("document.querySelector('.chart svg').textContent");
    assert!(text.as_str().unwrap().contains("step"), "{text}");
    assert_eq!(
        b.eval("document.querySelectorAll('tbody tr').length"),
        serde_json::json!(5)
    );
    // The answer first: the step, above the chart.
    let head = b.eval("document.querySelector('.headline li').textContent");
    assert!(
        head.as_str().unwrap().contains("began at campaign 4"),
        "{head}"
    );
    let first = b.eval(
        "Array.from(document.querySelectorAll('.headline, .chart')).map(e => e.className)[0]",
    );
    assert_eq!(first, serde_json::json!("headline"));
    let step = b.eval("document.querySelector('.step').textContent");
    assert!(
        step.as_str().unwrap().contains("began at campaign 4"),
        "{step}"
    );
    page_is_quiet(&mut b, &url);
}
