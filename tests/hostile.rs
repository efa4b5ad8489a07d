//! Hostile input and faults, round 3 (issue #29), each as the case that
//! broke: the store overwritten by an output file, fio jobs escaping the
//! working directory, unbounded sweeps, imports of bad rows, foreign text
//! driving the terminal, cleanup stopping at a failure, daemons left
//! running, exit codes, symlinks followed.

use std::path::{Path, PathBuf};
use std::process::Output;

use crate::util::Lab;

pub fn text(out: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// A mock experiment of `runs` runs on a directory of the lab.
pub fn mock_experiment(lab: &Lab, runs: u32) -> PathBuf {
    let data = lab.path().join("data");
    std::fs::create_dir_all(&data).unwrap();
    lab.file(
        "mock.toml",
        &format!(
            "name = \"mock\"\n[plan]\nrepetitions = {runs}\ndrop_caches = false\n\
             [[target]]\nname = \"d\"\nkind = \"dir\"\npath = \"{}\"\n\
             [[workload]]\nname = \"m\"\nkind = \"mock\"\nduration = \"1ms\"\n",
            data.display()
        ),
    )
}

fn sha(path: &Path) -> Vec<u8> {
    std::fs::read(path).unwrap()
}

/// Item 1: No output file is the store: not by its name, a symlink to it, its
/// WAL, and an extension no format claims is no reason to write HTML.
#[test]
fn no_output_file_overwrites_the_store() {
    let lab = Lab::new();
    let file = mock_experiment(&lab, 2);
    lab.ok(&["run", "--quiet", file.to_str().unwrap()]);
    let db = lab.db();
    std::os::unix::fs::symlink(&db, lab.path().join("link.db")).unwrap();
    let before = sha(&db);
    let d = db.to_str().unwrap();
    let attempts: Vec<Vec<&str>> = vec![
        vec!["report", "-o", d],
        vec!["report", "--format", "html", "-o", d],
        vec!["report", "--format", "md", "-o", d],
        vec!["report", "1", "1", "--format", "html", "-o", d],
        vec!["export", "--format", "csv", "-o", d],
        vec!["export", "--format", "json", "-o", d],
        vec!["history", "-o", d],
        vec!["report", "--format", "html", "-o", "link.db"],
        vec!["export", "--format", "csv", "-o", "./results.db"],
        vec!["report", "--format", "html", "-o", "results.db-wal"],
    ];
    for args in &attempts {
        let out = lab.run(args);
        let (_, err) = text(&out);
        assert!(!out.status.success(), "{args:?} succeeded: {err}");
        assert!(
            (err.contains(" is the results store;")
                || err.contains(" is part of the results store ("))
                && !err.contains("wrote"),
            "{args:?}: {err}"
        );
        assert_eq!(sha(&db), before, "{args:?} changed the store");
    }
    // An unknown extension without --format is refused, naming a way out.
    let out = lab.run(&["report", "-o", "other.db"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out).1.contains("--format html"), "{out:?}");
    assert!(!lab.path().join("other.db").exists());
    // The store still answers.
    assert!(lab.ok(&["list"]).contains("mock"));
}

/// Item 10: `init --force` and `man DIR` replace a symlink at their file's name
/// instead of writing through it; `init` without --force counts a dangling
/// symlink as something there.
#[test]
fn init_and_man_do_not_write_through_symlinks() {
    let lab = Lab::new();
    let victim = lab.path().join("victim");
    std::fs::write(&victim, "precious").unwrap();
    let link = lab.path().join("experiment.toml");
    std::os::unix::fs::symlink(&victim, &link).unwrap();
    lab.ok(&["init", "--force"]);
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
    assert!(std::fs::read_to_string(&link)
        .unwrap()
        .contains("[[target]]"));
    // A dangling symlink is something there: refused without --force, and
    // its target is not created.
    let nowhere = lab.path().join("nowhere.toml");
    std::os::unix::fs::symlink(&nowhere, lab.path().join("e2.toml")).unwrap();
    let out = lab.run(&["init", "e2.toml"]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(!nowhere.exists());
    // man DIR: a page's name linked to another file.
    let dir = lab.path().join("man1");
    std::fs::create_dir(&dir).unwrap();
    std::os::unix::fs::symlink(&victim, dir.join("storlab-run.1")).unwrap();
    lab.ok(&["man", dir.to_str().unwrap()]);
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
    let page = dir.join("storlab-run.1");
    assert!(!std::fs::symlink_metadata(&page).unwrap().is_symlink());
    assert!(std::fs::read_to_string(&page).unwrap().contains("storlab"));
    let leftovers: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().starts_with('.'))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

/// Every file below `root` but the store's and the journals'.
fn files_below(root: &Path) -> std::collections::BTreeSet<PathBuf> {
    fn walk(dir: &Path, out: &mut std::collections::BTreeSet<PathBuf>) {
        for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            let p = e.path();
            let name = e.file_name().to_string_lossy().into_owned();
            if name.starts_with("results.db") || name == "state" {
                continue;
            }
            if p.is_dir() && !p.is_symlink() {
                walk(&p, out);
            }
            out.insert(p);
        }
    }
    let mut out = std::collections::BTreeSet::new();
    walk(root, &mut out);
    out
}

/// A fio experiment on a directory three levels below the lab, with the
/// job file `job`.
fn fio_experiment(lab: &Lab, job: &str) -> PathBuf {
    let data = lab.path().join("a/b/data");
    std::fs::create_dir_all(&data).unwrap();
    std::fs::write(lab.path().join("job.fio"), job).unwrap();
    lab.file(
        "fio.toml",
        &format!(
            "name = \"fio-names\"\n[plan]\nrepetitions = 1\ndrop_caches = false\n\
             [[target]]\nname = \"d\"\nkind = \"dir\"\npath = \"{}\"\n\
             [[workload]]\nname = \"f\"\nkind = \"fio\"\njob = \"job.fio\"\n",
            data.display()
        ),
    )
}

/// Item 2: A job's name becomes its default file name: `[../../x]`, `name=`
/// and `filename_format` that climb out are refused by check and run, and
/// nothing is created outside the working directory.
#[test]
fn fio_job_names_cannot_escape_the_working_directory() {
    crate::util::require_program("fio");
    for (job, line) in [
        ("[../../x]\nrw=write\nsize=1M\n", 1),
        ("[j]\nname=../../../y\nrw=write\nsize=1M\n", 2),
        (
            "[j]\nrw=write\nsize=1M\nfilename_format=../../z.$jobnum.$filenum\n",
            4,
        ),
        ("[global]\nrw=write\n[/tmp/storlab-escape]\nsize=1M\n", 3),
    ] {
        let lab = Lab::new();
        let file = fio_experiment(&lab, job);
        let before = files_below(lab.path());
        for cmd in ["check", "run"] {
            let out = lab.run(&[cmd, file.to_str().unwrap()]);
            let (_, err) = text(&out);
            assert_eq!(out.status.code(), Some(2), "{cmd} {job:?}: {err}");
            assert!(
                err.contains(&format!("job.fio:{line}:")),
                "{cmd} {job:?}: {err}"
            );
        }
        assert_eq!(files_below(lab.path()), before, "{job:?}");
        assert!(!Path::new("/tmp/storlab-escape.0.0").exists());
    }
}

/// Item 2: What fio accepts and stays inside runs: aliases of allowed options,
/// `threads`, `zonemode=strided`, `verify_dump`, `$jobnum`/`$filenum` in
/// `filename_format`; and the files land in the working directory only.
#[test]
fn fio_aliases_strided_zones_and_filename_tokens_run() {
    crate::util::require_program("fio");
    let lab = Lab::new();
    let job = "[global]\nioengine=psync\nbs=4k\nsize=1M\nthreads=1\ndisable_bw=1\n\
               [w]\nrw=write\nnr_files=2\nfileoffset=0\nfilename_format=$jobname.$jobnum.$filenum\n\
               verify=crc32c\nverify_dump=1\nratemin=1\nratecycle=1000\n\
               [r]\nwait_for_previous\nrw=randread\nzonemode=strided\nzonesize=64k\nzonerange=256k\n";
    let file = fio_experiment(&lab, job);
    let check = lab.ok(&["check", file.to_str().unwrap()]);
    assert!(check.contains("valid experiment"), "{check}");
    let before = files_below(lab.path());
    lab.ok(&["run", "--quiet", file.to_str().unwrap()]);
    let export = lab.export_json();
    let run = &crate::util::runs(&export)[0];
    assert_eq!(run["status"], "ok", "{}", run["error"]);
    // The working directory is removed after the run: nothing is left.
    assert_eq!(files_below(lab.path()), before);
}

/// Item 2: `fio --create_only` runs under a time limit: a fio that hangs
/// laying out its files fails the run instead of hanging the campaign.
/// (fio does not hang on demand, so the `fio` found first on PATH runs
/// the real one, but sleeps on --create_only.)
#[test]
fn a_hanging_fio_layout_is_killed_at_its_limit() {
    crate::util::require_program("fio");
    let lab = Lab::new();
    let bin = lab.path().join("bin");
    std::fs::create_dir(&bin).unwrap();
    let real = String::from_utf8(
        std::process::Command::new("sh")
            .args(["-c", "command -v fio"])
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap();
    let wrapper = bin.join("fio");
    std::fs::write(
        &wrapper,
        format!(
            "#!/bin/sh\nfor a in \"$@\"; do [ \"$a\" = --create_only=1 ] && exec sleep 600; done\nexec {} \"$@\"\n",
            real.trim()
        ),
    )
    .unwrap();
    std::fs::set_permissions(
        &wrapper,
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    let file = fio_experiment(&lab, "[j]\nrw=read\nsize=1M\n");
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut child = lab
        .cmd()
        .env("PATH", path)
        .env("STORLAB_COMMAND_TIMEOUT", "2")
        .args(["run", "--quiet", file.to_str().unwrap()])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // A watchdog, not a timing claim: without a limit the run never ends.
    let t0 = std::time::Instant::now();
    while child.try_wait().unwrap().is_none() {
        if t0.elapsed() > std::time::Duration::from_secs(120) {
            let _ = child.kill();
            let _ = child.wait();
            panic!("storlab run still waits for the hung fio --create_only after 120 s");
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    let out = child.wait_with_output().unwrap();
    let export = lab.export_json();
    let run = &crate::util::runs(&export)[0];
    assert_eq!(run["status"], "failed", "{out:?}");
    let error = run["error"].as_str().unwrap_or_default();
    assert!(
        error.contains("--create_only") && error.contains("STORLAB_COMMAND_TIMEOUT"),
        "{error}"
    );
}

/// An experiment whose mock workload sweeps `axes` parameters of ten
/// values each (10^axes variants), with `[plan] extra`.
fn swept_experiment(lab: &Lab, axes: usize, extra: &str) -> PathBuf {
    let data = lab.path().join("data");
    std::fs::create_dir_all(&data).unwrap();
    let lists = [
        ("value", (1..=10).map(|i| i.to_string()).collect::<Vec<_>>()),
        ("noise", (0..10).map(|i| format!("0.{i}")).collect()),
        ("drift", (0..10).map(|i| format!("0.0{i}")).collect()),
        ("seed", (0..10).map(|i| i.to_string()).collect()),
        ("duration", (0..10).map(|i| format!("\"{i}ms\"")).collect()),
        ("factor", (1..=10).map(|i| i.to_string()).collect()),
    ];
    let sweep: Vec<String> = lists[..axes]
        .iter()
        .map(|(k, v)| match *k {
            // A table parameter sweeps its entries.
            "factor" => format!("factor = {{ d = [{}] }}", v.join(", ")),
            k => format!("{k} = [{}]", v.join(", ")),
        })
        .collect();
    lab.file(
        "big.toml",
        &format!(
            "name = \"big\"\n[plan]\nrepetitions = 1\ndrop_caches = false\n{extra}\n\
             [[target]]\nname = \"d\"\nkind = \"dir\"\npath = \"{}\"\n\
             [[workload]]\nname = \"m\"\nkind = \"mock\"\nsweep = {{ {} }}\n",
            data.display(),
            sweep.join(", ")
        ),
    )
}

/// Item 3: a sweep of six parameters of ten values (10^6 variants) is
/// refused before any variant is made, naming the count, the limit and
/// `[plan] max_variants`; under a 1 GiB address-space limit it ends with
/// exit 2, not an abort. Raising the limit admits the study.
#[test]
fn sweeps_are_bounded_before_their_variants_are_made() {
    use std::os::unix::process::CommandExt;
    let lab = Lab::new();
    let file = swept_experiment(&lab, 6, "");
    let mut cmd = lab.cmd();
    cmd.args(["check", file.to_str().unwrap()]);
    // SAFETY: setrlimit is async-signal-safe; only the child is limited.
    unsafe {
        cmd.pre_exec(|| {
            let lim = libc::rlimit {
                rlim_cur: 1 << 30,
                rlim_max: 1 << 30,
            };
            libc::setrlimit(libc::RLIMIT_AS, &lim);
            Ok(())
        });
    }
    let out = cmd.output().unwrap();
    let (_, err) = text(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("1000000 target-workload pairs")
            && err.contains("max_variants = 10000")
            && err.contains("big.toml:13:"),
        "{err}"
    );
    let out = lab.run(&["run", file.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    // Targets count too: a target standing on a swept one is made once
    // per variant of it.
    let t = lab.file(
        "targets.toml",
        &format!(
            "[plan]\nmax_variants = 5\n[[target]]\nname = \"a\"\nkind = \"dir\"\nsweep = {{ path = [\"{0}\", \"{0}/.\", \"{0}/./.\"] }}\n\
             [[workload]]\nname = \"m\"\nkind = \"mock\"\n",
            lab.path().join("data").display()
        ),
    );
    let out = lab.run(&["check", t.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let t2 = std::fs::read_to_string(&t)
        .unwrap()
        .replace("max_variants = 5", "max_variants = 2");
    std::fs::write(&t, t2).unwrap();
    let out = lab.run(&["check", t.to_str().unwrap()]);
    assert!(text(&out).1.contains("3 target variants"), "{out:?}");
    // Raised, a study of 10^4 is checked.
    let file = swept_experiment(&lab, 4, "max_variants = 10000");
    let out = lab.ok(&["check", file.to_str().unwrap()]);
    assert!(out.contains("10000 variants"), "{out}");
}

/// A store of one real campaign (`src`: io on a directory, two runs with
/// metrics, series and latency histograms) in `lab`, and its path.
pub fn source_store(lab: &Lab) -> PathBuf {
    let data = lab.path().join("src-data");
    std::fs::create_dir_all(&data).unwrap();
    let exp = lab.file(
        "src.toml",
        &format!(
            "name = \"src\"\n[plan]\nrepetitions = 2\ndrop_caches = false\ntelemetry = false\n\
             [[target]]\nname = \"d\"\nkind = \"dir\"\npath = \"{}\"\n\
             [[workload]]\nname = \"r\"\nkind = \"io\"\nrw = \"randread\"\nbs = \"4k\"\nsize = \"1M\"\nruntime = \"100ms\"\n",
            data.display()
        ),
    );
    let db = lab.path().join("source.db");
    let out = lab
        .cmd()
        .env("STORLAB_DB", &db)
        .args(["run", "--quiet", exp.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let conn = rusqlite::Connection::open(&db).unwrap();
    conn.execute_batch(
        "INSERT INTO warning_texts (campaign_id, kind, message)
             SELECT campaign_id, 'note', 'a note' FROM runs ORDER BY id LIMIT 1;
         INSERT INTO run_warnings (run_id, text_id)
             SELECT MIN(id), (SELECT id FROM warning_texts WHERE message = 'a note') FROM runs;
         PRAGMA wal_checkpoint(TRUNCATE);",
    )
    .unwrap();
    db
}

/// `source` with `sql` applied, as `name` in `lab`.
pub fn crafted(lab: &Lab, source: &Path, name: &str, sql: &str) -> PathBuf {
    let path = lab.path().join(name);
    std::fs::copy(source, &path).unwrap();
    let conn = rusqlite::Connection::open(&path).unwrap();
    conn.execute_batch("PRAGMA foreign_keys = OFF").unwrap();
    conn.execute_batch(sql)
        .unwrap_or_else(|e| panic!("{sql}: {e}"));
    drop(conn);
    path
}

/// The destination's own commands all answer for its own campaigns.
fn destination_works(lab: &Lab) {
    for args in [
        vec!["list"],
        vec!["show", "1"],
        vec!["history", "mock"],
        vec!["compare", "1", "2"],
        vec!["export", "1", "--format", "json"],
        vec!["report", "2", "--format", "md"],
    ] {
        lab.ok(&args);
    }
}

/// Item 4: rows storlab would not read back as it writes them are refused
/// with the campaign, table, row and column named; the destination keeps
/// working. Raw SQL errors of damaged stores read as messages naming the
/// file.
#[test]
fn import_refuses_bad_rows_and_damaged_stores() {
    let lab = Lab::new();
    let file = mock_experiment(&lab, 3);
    lab.ok(&["run", "--quiet", file.to_str().unwrap()]);
    lab.ok(&["run", "--quiet", file.to_str().unwrap()]);
    let source = source_store(&lab);
    let cases: &[(&str, &str)] = &[
        (
            "UPDATE metric_values SET value = 'NaN' WHERE key_id IN (SELECT id FROM metric_keys WHERE name = 'iops')",
            "metric_values",
        ),
        (
            "UPDATE metric_values SET value = 'abc' WHERE key_id IN (SELECT id FROM metric_keys WHERE name = 'iops')",
            "text 'abc'",
        ),
        (
            "UPDATE metric_values SET value = 9e999 WHERE key_id IN (SELECT id FROM metric_keys WHERE name = 'iops')",
            "finite",
        ),
        (
            "UPDATE metric_values SET key_id = 99999 WHERE key_id IN (SELECT id FROM metric_keys WHERE name = 'iops')",
            "key_id",
        ),
        ("UPDATE histogram_values SET count = -1", "histogram_values"),
        (
            "UPDATE histogram_values SET count = 9223372036854775807",
            "holds",
        ),
        ("UPDATE runs SET repetition = -3", "repetition"),
        ("UPDATE metric_keys SET labels = 'not json'", "labels"),
        (
            "UPDATE metric_keys SET unit = '<script>' WHERE name = 'iops'",
            "unit text '<script>'",
        ),
        (
            "UPDATE metric_keys SET direction = '' WHERE name = 'iops'",
            "no direction",
        ),
        ("UPDATE histogram_values SET hdr_v2 = x'deadbeef'", "decode"),
        ("UPDATE series_values SET values_f64 = x'0102'", "values_f64"),
        ("UPDATE runs SET target_id = 999", "target_id"),
        ("UPDATE warning_texts SET kind = 'bogus'", "kind text 'bogus'"),
        ("UPDATE campaigns SET status = 'done'", "status"),
        ("UPDATE campaigns SET uuid = NULL", "uuid is nothing"),
    ];
    for (i, (sql, says)) in cases.iter().enumerate() {
        let bad = crafted(&lab, &source, &format!("bad{i}.db"), sql);
        let out = lab.run(&["import", bad.to_str().unwrap()]);
        let (_, err) = text(&out);
        assert_eq!(out.status.code(), Some(2), "{sql}: {err}");
        assert!(
            err.contains("campaign 1 `src")
                && err.contains("is not imported")
                && err.contains(says),
            "{sql}: {err}"
        );
        assert!(
            !err.contains('\x1b'),
            "{sql}: the name reached the terminal raw"
        );
        assert!(!lab.ok(&["list"]).contains("src"), "{sql}: imported");
        destination_works(&lab);
    }
    // Whole stores a storlab did not write: one message naming the file.
    let no_column = crafted(
        &lab,
        &source,
        "nocol.db",
        "ALTER TABLE runs DROP COLUMN error",
    );
    let bad_version = crafted(
        &lab,
        &source,
        "version.db",
        "UPDATE meta SET value = '-1' WHERE key = 'schema_version'",
    );
    for (store, says) in [
        (&no_column, "has no column `error`"),
        (&bad_version, "schema version -1"),
    ] {
        let out = lab.run(&["import", store.to_str().unwrap()]);
        let (_, err) = text(&out);
        assert!(!out.status.success());
        assert!(
            err.contains(store.to_str().unwrap()) && err.contains(says),
            "{err}"
        );
        assert!(
            !err.contains("SQLITE") && !err.contains("Invalid column"),
            "{err}"
        );
        destination_works(&lab);
    }
    // The good store is imported, with its campaign whole.
    let out = lab.run(&["import", source.to_str().unwrap()]);
    assert!(out.status.success(), "{out:?}");
    lab.ok(&["show", "src"]);
    lab.ok(&["history", "src"]);
    destination_works(&lab);
}

/// Item 4: `storlab forget` removes a campaign and every row tied to it,
/// asking first; without a terminal only with --yes.
#[test]
fn forget_removes_a_campaign_whole() {
    let lab = Lab::new();
    let file = mock_experiment(&lab, 3);
    for _ in 0..3 {
        lab.ok(&["run", "--quiet", file.to_str().unwrap()]);
    }
    let source = source_store(&lab);
    lab.ok(&["import", source.to_str().unwrap()]);
    let out = lab.run(&["forget", "src"]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(text(&out).1.contains("--yes"));
    assert!(lab.ok(&["list"]).contains("src"));
    let said = lab.ok(&["forget", "src", "--yes"]);
    assert!(
        said.contains("forgot campaign 4 `src` and its 2 runs"),
        "{said}"
    );
    lab.ok(&["forget", "2", "--yes"]);
    let conn = rusqlite::Connection::open(lab.db()).unwrap();
    let tables: Vec<String> = conn
        .prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT IN ('meta', 'campaigns')")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    let left: i64 = conn
        .query_row(
            "SELECT COUNT(*) FROM campaigns WHERE id IN (2, 4)",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(left, 0);
    for t in tables {
        let cols: Vec<String> = conn
            .prepare(&format!("PRAGMA table_info({t})"))
            .unwrap()
            .query_map([], |r| r.get(1))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        let sql = if cols.iter().any(|c| c == "campaign_id") {
            format!("SELECT COUNT(*) FROM {t} WHERE campaign_id NOT IN (SELECT id FROM campaigns)")
        } else {
            format!("SELECT COUNT(*) FROM {t} WHERE run_id NOT IN (SELECT id FROM runs)")
        };
        let n: i64 = conn.query_row(&sql, [], |r| r.get(0)).unwrap();
        assert_eq!(n, 0, "rows of a forgotten campaign left in {t}");
    }
    let fk: i64 = conn
        .query_row("SELECT COUNT(*) FROM pragma_foreign_key_check", [], |r| {
            r.get(0)
        })
        .unwrap();
    assert_eq!(fk, 0);
    lab.ok(&["compare", "1", "3"]);
    lab.ok(&["history", "mock"]);
    let out = lab.run(&["forget", "9", "--yes"]);
    assert!(!out.status.success());
}

/// Item 4: imports at once wait for each other instead of failing with
/// "database is locked", and a killed import's copy (nobody holds it) is
/// removed by the next import.
#[test]
fn imports_at_once_wait_and_a_killed_imports_copy_is_removed() {
    let lab = Lab::new();
    let file = mock_experiment(&lab, 2);
    lab.ok(&["run", "--quiet", file.to_str().unwrap()]);
    let source = source_store(&lab);
    let sources: Vec<PathBuf> = (0..4)
        .map(|i| {
            // Each its own campaign (another UUID), so each import writes.
            crafted(
                &lab,
                &source,
                &format!("s{i}.db"),
                &format!("UPDATE campaigns SET uuid = 'u{i}'"),
            )
        })
        .collect();
    // A killed import's copy beside the store: no process holds it.
    let stale = lab.path().join(".results.db.import-4242.tmp");
    std::fs::write(&stale, vec![0u8; 1 << 20]).unwrap();
    let children: Vec<_> = sources
        .iter()
        .map(|s| {
            lab.cmd()
                .args(["import", s.to_str().unwrap()])
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for c in children {
        let out = c.wait_with_output().unwrap();
        assert!(out.status.success(), "{}", text(&out).1);
    }
    assert_eq!(lab.ok(&["list"]).matches("src").count(), 4);
    assert!(!stale.exists(), "the killed import's copy is left");
    let leftovers: Vec<_> = std::fs::read_dir(lab.path())
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().contains(".import-"))
        .map(|e| e.file_name())
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

/// No raw escape, C1 control or bidirectional control in `out`.
pub fn assert_inert(what: &str, out: &Output) {
    let (o, e) = text(out);
    for (stream, s) in [("stdout", o), ("stderr", e)] {
        let bad: Vec<char> = s
            .chars()
            .filter(|&c| {
                (c.is_control() && c != '\n' && c != '\t')
                    || matches!(c, '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}')
            })
            .collect();
        assert!(bad.is_empty(), "{what}: {stream} holds {bad:?}:\n{s}");
    }
}

/// Item 5: a command's stderr, an imported campaign's name and a tag do
/// not drive the terminal: run, list, show, history and import print them
/// with the escapes made visible; names and tags holding them are refused.
#[test]
fn foreign_text_cannot_drive_the_terminal() {
    let lab = Lab::new();
    let data = lab.path().join("data");
    std::fs::create_dir_all(&data).unwrap();
    let exp = lab.file(
        "cmd.toml",
        &format!(
            "name = \"cmd\"\n[plan]\nrepetitions = 1\ndrop_caches = false\n\
             [[target]]\nname = \"d\"\nkind = \"dir\"\npath = \"{}\"\n\
             [[workload]]\nname = \"evil\"\nkind = \"command\"\n\
             command = [\"sh\", \"-c\", \"printf '\\\\033[2J\\\\033]0;owned\\\\007\\\\342\\\\200\\\\256gnp.exe' >&2; exit 3\"]\n",
            data.display()
        ),
    );
    let out = lab.run(&["run", exp.to_str().unwrap()]);
    assert_inert("run", &out);
    let (o, e) = text(&out);
    assert!(
        format!("{o}{e}").contains("\\x1b[2J"),
        "the stderr is shown, made visible: {o}{e}"
    );
    assert_inert("show", &lab.run(&["show"]));
    // An imported campaign's name.
    let source = source_store(&lab);
    let named = crafted(
        &lab,
        &source,
        "named.db",
        "UPDATE campaigns SET name = 'src' || char(27) || '[2J' || char(27) || ']0;owned' || char(7) || char(8238)",
    );
    let out = lab.run(&["import", named.to_str().unwrap()]);
    assert!(out.status.success(), "{out:?}");
    assert_inert("import", &out);
    assert!(text(&out).0.contains("src\\x1b[2J"), "{out:?}");
    for args in [
        vec!["list"],
        vec!["show", "2"],
        vec!["history", "2"],
        vec!["show"],
    ] {
        let out = lab.run(&args);
        assert_inert(&format!("{args:?}"), &out);
    }
    let out = lab.run(&["history"]);
    assert!(out.status.success(), "{out:?}");
    assert_inert("history", &out);
    // Tags and names a user types: refused, as control characters are.
    for tag in ["k=\u{1b}[2J", "k=a\u{202E}b", "k=a\u{2028}b", "k\u{2066}=v"] {
        let out = lab.run(&["run", "--tag", tag, exp.to_str().unwrap()]);
        assert!(!out.status.success(), "{tag:?} accepted");
        assert_inert(&format!("--tag {tag:?}"), &out);
    }
    for name in ["a\u{202E}b", "a\u{2029}b", "a\u{1b}b"] {
        let bad = lab.file(
            "bidi.toml",
            &format!(
                "[[target]]\nname = \"{name}\"\nkind = \"dir\"\npath = \"{}\"\n[[workload]]\nname = \"m\"\nkind = \"mock\"\n",
                data.display()
            ),
        );
        let out = lab.run(&["check", bad.to_str().unwrap()]);
        assert_eq!(out.status.code(), Some(2), "{name:?}");
        assert_inert(&format!("name {name:?}"), &out);
    }
}

/// Item 9: a campaign whose every run failed exits 3; some failed runs
/// exit 0 with their count said, and `--fail-on-failure` makes any
/// failure exit 3.
#[test]
fn run_exits_non_zero_when_its_runs_failed() {
    let lab = Lab::new();
    let data = lab.path().join("data");
    std::fs::create_dir_all(&data).unwrap();
    let exp = |name: &str, workloads: &str| {
        lab.file(
            &format!("{name}.toml"),
            &format!(
                "name = \"{name}\"\n[plan]\nrepetitions = 2\ndrop_caches = false\n\
                 [[target]]\nname = \"d\"\nkind = \"dir\"\npath = \"{}\"\n{workloads}",
                data.display()
            ),
        )
    };
    let fails = "[[workload]]\nname = \"no\"\nkind = \"command\"\ncommand = [\"false\"]\n";
    let works = "[[workload]]\nname = \"yes\"\nkind = \"command\"\ncommand = [\"true\"]\n";
    let all = exp("all-fail", fails);
    let out = lab.run(&["run", "--quiet", all.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(3), "{out:?}");
    assert!(
        text(&out).1.contains("every run failed (2 of 2)"),
        "{out:?}"
    );
    let some = exp("some-fail", &format!("{works}{fails}"));
    let out = lab.run(&["run", "--quiet", some.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert!(text(&out).1.contains("2 of 4 runs failed"), "{out:?}");
    let out = lab.run(&[
        "run",
        "--quiet",
        "--fail-on-failure",
        some.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(3), "{out:?}");
    let none = exp("none-fail", works);
    let out = lab.run(&[
        "run",
        "--quiet",
        "--fail-on-failure",
        none.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
}

/// Loop devices the test attached, detached (and their images removed)
/// when dropped, even when the test fails.
struct Loops(Vec<PathBuf>);

impl Drop for Loops {
    fn drop(&mut self) {
        for image in &self.0 {
            if let Ok(out) = std::process::Command::new("losetup")
                .args(["-j", &image.to_string_lossy()])
                .output()
            {
                for line in String::from_utf8_lossy(&out.stdout).lines() {
                    if let Some(dev) = line.split(':').next() {
                        let _ = std::process::Command::new("losetup")
                            .args(["-d", dev])
                            .status();
                    }
                }
            }
            let _ = std::fs::remove_file(image);
        }
    }
}

/// Whether a loop device is backed by `image`.
fn attached(image: &Path) -> Option<String> {
    let out = std::process::Command::new("losetup")
        .args(["-j", &image.to_string_lossy()])
        .output()
        .ok()?;
    let text = String::from_utf8_lossy(&out.stdout);
    text.lines()
        .next()
        .and_then(|l| l.split(':').next())
        .map(String::from)
}

/// Item 6: a loop device that cannot be detached (held open, as by a
/// mount in another namespace) does not stop cleanup: the resources that
/// do not stand on it are undone, what is left is said with why, the
/// status is 1 and the journal stays; the next cleanup finishes.
#[test]
#[ignore = "needs root"]
fn cleanup_goes_on_past_a_busy_loop_device() {
    require_root!();
    crate::util::require_program("losetup");
    let lab = Lab::new();
    let dir = lab.path().join("storlab-999999-cl");
    std::fs::create_dir(&dir).unwrap();
    let images: Vec<PathBuf> = ["a", "b", "c"]
        .iter()
        .map(|n| dir.join(format!("{n}.img")))
        .collect();
    let guard = Loops(images.clone());
    let mut journal = format!(
        "{{\"op\":\"campaign\",\"pid\":999999,\"started\":\"2026-11-26T00:00:00Z\",\"owner\":{{\"pid\":999999,\"start\":1}}}}\n\
         {{\"op\":\"acquire\",\"id\":1,\"resource\":{{\"type\":\"dir\",\"path\":\"{}\"}}}}\n",
        dir.display()
    );
    let mut id = 2;
    for image in &images {
        std::fs::write(image, vec![0u8; 1 << 20]).unwrap();
        let out = std::process::Command::new("losetup")
            .args(["-f", "--show", &image.to_string_lossy()])
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
        journal.push_str(&format!(
            "{{\"op\":\"acquire\",\"id\":{id},\"resource\":{{\"type\":\"file\",\"path\":\"{img}\"}}}}\n\
             {{\"op\":\"acquire\",\"id\":{next},\"resource\":{{\"type\":\"loop\",\"image\":\"{img}\"}}}}\n",
            img = image.display(),
            next = id + 1
        ));
        id += 2;
    }
    std::fs::create_dir_all(lab.state_dir()).unwrap();
    let path = lab.state_dir().join("campaign-999999.journal");
    std::fs::write(&path, journal).unwrap();
    // b is held open: `losetup -d` only marks it to go at the last close.
    let busy = std::fs::File::open(attached(&images[1]).unwrap()).unwrap();
    let out = lab.run(&["cleanup"]);
    let (o, e) = text(&out);
    assert_eq!(out.status.code(), Some(1), "{o}{e}");
    assert!(
        attached(&images[0]).is_none() && attached(&images[2]).is_none(),
        "{o}{e}"
    );
    assert!(!images[0].exists() && !images[2].exists(), "{o}{e}");
    assert!(
        attached(&images[1]).is_some() && images[1].exists(),
        "{o}{e}"
    );
    assert!(
        e.contains("FAILED: loop device of") && e.contains("b.img"),
        "{e}"
    );
    assert!(
        e.contains("left, with the journal") && e.contains("stands on it"),
        "{e}"
    );
    assert!(path.exists(), "the journal is kept");
    // Free again: the next cleanup finishes and removes the journal.
    drop(busy);
    let out = lab.run(&["cleanup"]);
    assert!(out.status.success(), "{out:?}");
    assert!(attached(&images[1]).is_none() && !dir.exists() && !path.exists());
    drop(guard);
}

/// A FUSE export whose daemon died (SIGKILL, a host restart) leaves a
/// mount every access to which fails with "Transport endpoint is not
/// connected", a loop device on it and the image beside it: cleanup
/// detaches the dead mount lazily and undoes all of it (a plain `umount`
/// failed with ENOTCONN and left everything).
#[test]
#[ignore = "needs root"]
fn cleanup_detaches_a_mount_whose_fuse_server_died() {
    require_root!();
    crate::util::require_program("qemu-storage-daemon");
    crate::util::require_program("losetup");
    let lab = Lab::new();
    let dir = lab.path().join("storlab-999998-vm");
    std::fs::create_dir(&dir).unwrap();
    let image = dir.join("disk.raw");
    let export = dir.join("export");
    let pidfile = dir.join("qemu-storage-daemon.pid");
    std::fs::write(&image, vec![0u8; 4 << 20]).unwrap();
    std::fs::write(&export, b"").unwrap();
    let mut guard = DeadExport {
        export: export.clone(),
        pidfile: pidfile.clone(),
        device: None,
    };
    let status = std::process::Command::new("qemu-storage-daemon")
        .arg("--blockdev")
        .arg(format!(
            "driver=file,node-name=image,filename={}",
            image.display()
        ))
        .arg("--export")
        .arg(format!(
            "type=fuse,id=export,node-name=image,mountpoint={},writable=on",
            export.display()
        ))
        .args(["--daemonize", "--pidfile"])
        .arg(&pidfile)
        .status()
        .unwrap();
    assert!(status.success());
    let out = std::process::Command::new("losetup")
        .args(["-f", "--show", &export.to_string_lossy()])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    guard.device = Some(String::from_utf8_lossy(&out.stdout).trim().to_string());
    let journal = format!(
        "{{\"op\":\"campaign\",\"pid\":999998,\"started\":\"2026-11-26T00:00:00Z\",\"owner\":{{\"pid\":999998,\"start\":1}}}}\n\
         {{\"op\":\"acquire\",\"id\":1,\"resource\":{{\"type\":\"dir\",\"path\":\"{d}\"}}}}\n\
         {{\"op\":\"acquire\",\"id\":2,\"resource\":{{\"type\":\"file\",\"path\":\"{i}\"}}}}\n\
         {{\"op\":\"acquire\",\"id\":3,\"resource\":{{\"type\":\"qemu_daemon\",\"pidfile\":\"{p}\",\"export\":\"{e}\"}}}}\n\
         {{\"op\":\"acquire\",\"id\":4,\"resource\":{{\"type\":\"loop\",\"image\":\"{e}\"}}}}\n",
        d = dir.display(),
        i = image.display(),
        p = pidfile.display(),
        e = export.display()
    );
    std::fs::create_dir_all(lab.state_dir()).unwrap();
    let path = lab.state_dir().join("campaign-999998.journal");
    std::fs::write(&path, journal).unwrap();
    // The daemon dies as in a host restart: the export stays mounted,
    // disconnected.
    let pid: i32 = std::fs::read_to_string(&pidfile)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    unsafe { libc::kill(pid, libc::SIGKILL) };
    crate::provision::wait_for("the daemon to die", 10, || {
        !Path::new(&format!("/proc/{pid}")).exists()
    });
    let err = std::fs::metadata(&export).unwrap_err();
    assert_eq!(err.raw_os_error(), Some(libc::ENOTCONN), "{err}");
    let out = lab.run(&["cleanup"]);
    let (o, e) = text(&out);
    assert!(out.status.success(), "{o}{e}");
    assert!(o.contains("detached: qemu-storage-daemon serving"), "{o}");
    assert!(attached(&export).is_none(), "{o}{e}");
    // Let go, not left holding the detached file (whose name reads `/`).
    let dev = guard.device.clone().unwrap();
    let backing = format!(
        "/sys/block/{}/loop/backing_file",
        dev.trim_start_matches("/dev/")
    );
    assert!(
        std::fs::read_to_string(backing).map_or(true, |b| b.trim() != "/"),
        "{dev} still attached to the detached export: {o}{e}"
    );
    assert!(!dir.exists() && !path.exists(), "{o}{e}");
    drop(guard);
}

/// Kills the test's qemu-storage-daemon (by its pid file), detaches its
/// export and the loop device on it (by its recorded name), if the test
/// did not get that far.
struct DeadExport {
    export: PathBuf,
    pidfile: PathBuf,
    device: Option<String>,
}

impl Drop for DeadExport {
    fn drop(&mut self) {
        if let Some(pid) = std::fs::read_to_string(&self.pidfile)
            .ok()
            .and_then(|t| t.trim().parse::<i32>().ok())
        {
            unsafe { libc::kill(pid, libc::SIGKILL) };
        }
        // The loop device first, by name, and only while it still holds
        // the export (the number may have gone to someone else since).
        if let Some(dev) = &self.device {
            let backing = format!(
                "/sys/block/{}/loop/backing_file",
                dev.trim_start_matches("/dev/")
            );
            if std::fs::read_to_string(backing).is_ok_and(|b| Path::new(b.trim()) == self.export) {
                let _ = std::process::Command::new("losetup")
                    .args(["-d", dev])
                    .status();
            }
        }
        let _ = std::process::Command::new("umount")
            .arg("-l")
            .arg(&self.export)
            .stderr(std::process::Stdio::null())
            .status();
    }
}

/// The pid in the zfs-fuse pid file a campaign of `lab` wrote, if any.
fn zfs_fuse_pid(lab: &Lab) -> Option<u32> {
    std::fs::read_dir(lab.state_dir())
        .ok()?
        .flatten()
        .find(|e| {
            let n = e.file_name().to_string_lossy().into_owned();
            n.starts_with("zfs-fuse-") && n.ends_with(".pid")
        })
        .and_then(|e| std::fs::read_to_string(e.path()).ok())
        .and_then(|t| t.trim().parse().ok())
}

fn zfs_fuse_running() -> bool {
    std::process::Command::new("pgrep")
        .args(["-x", "zfs-fuse"])
        .output()
        .is_ok_and(|o| o.status.success())
}

/// Item 7: the campaign that started zfs-fuse ends while another holds a
/// claim on it; the other, the last to leave, stops it.
#[test]
#[ignore = "needs root"]
fn the_last_campaign_to_leave_stops_the_daemon_storlab_started() {
    require_root!();
    crate::util::require_program("zfs-fuse");
    let _d = crate::provision::daemons();
    if zfs_fuse_running() {
        eprintln!("SKIPPED: zfs-fuse already runs (the host's, or another test's): this test must see storlab start it");
        return;
    }
    let lab = Lab::new();
    let _guard = crate::provision::Guard::new(&lab);
    let exp = |name: &str, ms: u32| {
        lab.file(
            &format!("{name}.toml"),
            &format!(
                "name = \"{name}\"\n[plan]\nrepetitions = 1\ndrop_caches = false\ntelemetry = false\n\
                 [[target]]\nname = \"{name}\"\nkind = \"zfs\"\nsize = \"200M\"\ndir = \"{}\"\n\
                 [[workload]]\nname = \"m\"\nkind = \"mock\"\nduration = \"{ms}ms\"\n",
                lab.path().display()
            ),
        )
    };
    let (first, second) = (exp("za", 8000), exp("zb", 16000));
    let spawn = |file: &Path, db: &str| {
        lab.cmd()
            .env("STORLAB_DB", lab.path().join(db))
            .args(["run", "--quiet", file.to_str().unwrap()])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap()
    };
    let mut a = spawn(&first, "a.db");
    let t0 = std::time::Instant::now();
    let pid = loop {
        if let Some(pid) = zfs_fuse_pid(&lab).filter(|_| zfs_fuse_running()) {
            break pid;
        }
        assert!(t0.elapsed().as_secs() < 120, "zfs-fuse never started");
        std::thread::sleep(std::time::Duration::from_millis(100));
    };
    // The second campaign claims the daemon while the first still runs.
    let b = spawn(&second, "b.db");
    let a_out = a.wait().unwrap();
    assert!(a_out.success());
    assert!(
        crate::util::installed("zfs-fuse")
            && std::path::Path::new(&format!("/proc/{pid}")).exists(),
        "the first campaign stopped zfs-fuse under the second"
    );
    let b_out = b.wait_with_output().unwrap();
    assert!(
        b_out.status.success(),
        "zfs-fuse pid {pid}\n{}\n{}",
        String::from_utf8_lossy(&b_out.stderr),
        String::from_utf8_lossy(
            &lab.cmd()
                .env("STORLAB_DB", lab.path().join("b.db"))
                .args(["export", "--format", "json"])
                .output()
                .unwrap()
                .stdout
        )
    );
    let t1 = std::time::Instant::now();
    while std::path::Path::new(&format!("/proc/{pid}/stat")).exists()
        && std::fs::read_to_string(format!("/proc/{pid}/comm"))
            .is_ok_and(|c| c.trim() == "zfs-fuse")
    {
        assert!(
            t1.elapsed().as_secs() < 30,
            "zfs-fuse (pid {pid}), started by the first campaign, outlived both"
        );
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    // The first campaign's journal, kept for the daemon, is cleaned up.
    lab.ok(&["cleanup"]);
}

/// Item 8: `check` refuses, located and saying what to do, what `run`
/// would refuse once it began provisioning: `..` in a directory, a name
/// too long for the paths made of it, images that cannot fit together in
/// the target under them, a variant that is not one; `run` refuses them
/// too, before anything is made.
#[test]
fn check_refuses_what_run_would_refuse() {
    let lab = Lab::new();
    let data = lab.path().join("data");
    std::fs::create_dir_all(&data).unwrap();
    let dots = format!("{}/../data", data.display());
    let long = "n".repeat(3000);
    let w = "[[workload]]\nname = \"w\"\nkind = \"io\"\nsize = \"1M\"\n";
    let tmpfs = "[[target]]\nname = \"t\"\nkind = \"tmpfs\"\nsize = \"512M\"\n";
    let swept =
        "[[target]]\nname = \"t\"\nkind = \"tmpfs\"\nsweep = { size = [\"128M\", \"256M\"] }\n";
    let image = "[[target]]\nname = \"img\"\nkind = \"loop\"\n";
    let cases: Vec<(String, &str, String)> = vec![
        (
            format!("[[target]]\nname = \"d\"\nkind = \"dir\"\npath = \"{dots}\"\n{w}"),
            "4:8",
            "climbs with `..`".into(),
        ),
        (
            format!("[[target]]\nname = \"l\"\nkind = \"loop\"\ndir = \"{dots}\"\n{w}"),
            "4:7",
            format!("write the directory it reaches, {}", data.display()),
        ),
        (
            format!("[[target]]\nname = \"{long}\"\nkind = \"tmpfs\"\n{w}"),
            "2:8",
            "target's name has 3000 characters, more than the 64 a name may have".into(),
        ),
        (
            format!("{tmpfs}[[workload]]\nname = \"{long}\"\nkind = \"io\"\n"),
            "6:8",
            "workload's name has 3000 characters".into(),
        ),
        (
            format!("{tmpfs}{image}size = \"2G\"\non = \"t\"\n{w}"),
            "8:8",
            "needs room for an image of 2.0 GiB, but `t` (tmpfs) holds only 512.0 MiB; raise"
                .into(),
        ),
        (
            format!(
                "{tmpfs}{image}size = \"300M\"\nallocation = \"preallocated\"\non = \"t\"\n\
                 sweep = {{ fs = [\"ext4\", \"xfs\"] }}\n{w}"
            ),
            "10:6",
            "need 600.0 MiB together, but it holds only 512.0 MiB; raise its `size`, lower theirs"
                .into(),
        ),
        (
            format!("{swept}{image}size = \"64M\"\non = \"t[size=512M]\"\n{w}"),
            "9:6",
            "not a variant of `t` (its variants, as `storlab check` lists them: \
             t[size=128M], t[size=256M]); name one of them exactly"
                .into(),
        ),
    ];
    for (i, (toml, at, phrase)) in cases.iter().enumerate() {
        let file = lab.file(&format!("e{i}.toml"), toml);
        let line: usize = at.split(':').next().unwrap().parse().unwrap();
        let source = toml.lines().nth(line - 1).unwrap();
        for cmd in ["check", "run"] {
            let out = lab.run(&[cmd, file.to_str().unwrap()]);
            let (_, err) = text(&out);
            assert_eq!(out.status.code(), Some(2), "{cmd} case {i}: {err}");
            assert!(
                err.contains(&format!("e{i}.toml:{at}: ")),
                "{cmd} {i}: {err}"
            );
            assert!(err.contains(phrase.as_str()), "{cmd} case {i}: {err}");
            // The source line, as the other errors show it (a long one cut).
            let shown = format!("{line} | {}", &source[..source.len().min(20)]);
            assert!(
                err.contains(&shown) || err.contains(&format!("{line} | ...")),
                "{cmd} case {i} shows its line: {err}"
            );
        }
    }
    let journals = std::fs::read_dir(lab.state_dir()).map_or(0, |d| d.count());
    assert_eq!(journals, 0, "run provisioned nothing");
}

/// A tmpfs of `size` the test mounts on `path`, unmounted on drop.
struct SmallTmpfs(PathBuf);

impl SmallTmpfs {
    fn mount(path: PathBuf, size: &str) -> SmallTmpfs {
        std::fs::create_dir_all(&path).unwrap();
        let ok = std::process::Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(&path)
            .status()
            .unwrap()
            .success();
        assert!(ok, "mounting a tmpfs on {}", path.display());
        SmallTmpfs(path)
    }
}

impl Drop for SmallTmpfs {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount").arg(&self.0).status();
    }
}

/// Item 8, while there: an export to a file that fails midway (here the
/// disk fills: 43 kB of CSV into a 16 kB tmpfs) leaves no partial file and
/// keeps what the file held; one that succeeds replaces it whole.
#[test]
#[ignore = "needs root"]
fn a_failed_export_leaves_no_partial_file() {
    require_root!();
    let lab = Lab::new();
    let file = mock_experiment(&lab, 5);
    lab.ok(&["run", "--quiet", file.to_str().unwrap()]);
    let full = SmallTmpfs::mount(lab.path().join("full"), "16k");
    let out_file = full.0.join("runs.csv");
    std::fs::write(&out_file, "keep\n").unwrap();
    let out = lab.run(&["export", "-o", out_file.to_str().unwrap()]);
    let (_, err) = text(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("No space left on device"), "{err}");
    assert_eq!(std::fs::read_to_string(&out_file).unwrap(), "keep\n");
    let left: Vec<_> = std::fs::read_dir(&full.0).unwrap().flatten().collect();
    assert_eq!(left.len(), 1, "nothing but the old file: {left:?}");
    // Where it fits, the export replaces the file whole.
    let fits = lab.path().join("runs.csv");
    std::fs::write(&fits, "keep\n").unwrap();
    lab.ok(&["export", "-o", fits.to_str().unwrap()]);
    let csv = std::fs::read_to_string(&fits).unwrap();
    assert!(
        csv.starts_with("campaign,") && csv.lines().count() > 5,
        "{csv}"
    );
}
