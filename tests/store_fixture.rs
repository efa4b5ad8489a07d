//! The schema-v3 store written by an earlier storlab (tests/fixtures/v3):
//! the commands that only read leave it as it is, and `show`, `report` and
//! `export` give what that storlab gave, pinned by the files in `golden/`. The CSV
//! export changed by design with labels (schema v4): `written-by-v3/` keeps
//! what the v3 storlab exported, and every value of it must be in today's
//! export under its name and labels.
//!
//! When a change means to alter what a user sees, regenerate the golden
//! file it touches with `STORLAB_BLESS=1 cargo test store_fixture` and read
//! the diff before committing: a number that changes there is a bug unless
//! the change is about that number.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use storlab::metric::{compact_name, Labels};

use crate::util::Lab;

fn fixture_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/v3")
}

/// A lab whose store is a fresh copy of the v3 fixture.
fn lab_with_fixture() -> Lab {
    // The fixture stays a v3 store: `storlab run` or `import` pointed at it
    // by hand migrates it in place, and the tests would go on passing on v6.
    let fixture = rusqlite::Connection::open_with_flags(
        fixture_dir().join("all-kinds.db"),
        rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY,
    )
    .expect("open the fixture store");
    let version: String = fixture
        .query_row(
            "SELECT value FROM meta WHERE key = 'schema_version'",
            [],
            |r| r.get(0),
        )
        .expect("schema version");
    assert_eq!(
        version, "3",
        "tests/fixtures/v3/all-kinds.db was migrated: git checkout it"
    );
    let lab = Lab::new();
    std::fs::copy(fixture_dir().join("all-kinds.db"), lab.db()).expect("copy the fixture store");
    lab
}

/// Compares `actual` with `golden/NAME`, or rewrites it under STORLAB_BLESS.
fn assert_golden(name: &str, actual: &str) {
    let path = fixture_dir().join("golden").join(name);
    if std::env::var_os("STORLAB_BLESS").is_some() {
        std::fs::write(&path, actual).expect("bless golden file");
        return;
    }
    let expected = std::fs::read_to_string(&path).expect("golden file");
    if expected != actual {
        let first = expected
            .lines()
            .zip(actual.lines())
            .position(|(e, a)| e != a)
            .unwrap_or(expected.lines().count().min(actual.lines().count()));
        panic!(
            "{name} differs from its golden file from line {} on:\n  golden: {:?}\n  now:    {:?}\n(STORLAB_BLESS=1 rewrites it; read the diff first)",
            first + 1,
            expected.lines().nth(first),
            actual.lines().nth(first)
        );
    }
}

/// A digest of the store's file and the names of the files beside it.
fn store_state(lab: &Lab) -> (String, Vec<String>) {
    use sha1::{Digest, Sha1};
    let bytes = std::fs::read(lab.db()).expect("read the store");
    let digest = format!("{:x}", Sha1::digest(&bytes));
    let dir = lab
        .db()
        .parent()
        .expect("the store's directory")
        .to_path_buf();
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .expect("list the store's directory")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("results.db"))
        .collect();
    names.sort();
    (digest, names)
}

#[test]
fn reading_an_older_store_leaves_its_file_as_it_is_and_import_migrates_it() {
    let lab = lab_with_fixture();
    let before = store_state(&lab);
    let out = lab.path().join("r.html");
    for args in [
        vec!["list"],
        vec!["show"],
        vec!["show", "2"],
        vec!["export", "--format", "json"],
        vec!["export", "--format", "csv"],
        vec!["report", "1", "-o", out.to_str().unwrap()],
        vec!["report", "1", "2", "--allow-different", "-o", "/dev/null"],
        vec!["compare", "1"],
        vec!["history"],
    ] {
        let o = lab.run(&args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(
            o.status.code().is_some_and(|c| c <= 2) && !err.contains("panicked"),
            "{args:?}: {err}"
        );
        assert_eq!(
            store_state(&lab),
            before,
            "`storlab {args:?}` changed the store"
        );
    }
    assert!(lab.ok(&["list"]).contains("all-kinds"));
    // The campaigns read through the in-memory migration carry the UUIDs
    // the file gets when it is migrated for real.
    let uuid_read = lab.ok(&["export", "1", "--format", "json"]);
    let other = Lab::new();
    other.ok(&["import", lab.db().to_str().unwrap()]);
    assert_eq!(
        store_state(&lab),
        before,
        "import changed the store it read"
    );
    let version = |db: &Path| -> String {
        rusqlite::Connection::open(db)
            .unwrap()
            .query_row(
                "SELECT value FROM meta WHERE key = 'schema_version'",
                [],
                |r| r.get(0),
            )
            .unwrap()
    };
    assert_eq!(version(&lab.db()), "3");
    assert_eq!(version(&other.db()), "9");
    let uuid = |json: &str| -> String {
        let v: serde_json::Value = serde_json::from_str(json).expect("export JSON");
        v["provenance"]["uuid"]
            .as_str()
            .unwrap_or_default()
            .to_string()
    };
    let uuid_imported = other.ok(&["export", "1", "--format", "json"]);
    assert!(
        !uuid(&uuid_read).is_empty(),
        "{}",
        &uuid_read[..200.min(uuid_read.len())]
    );
    assert_eq!(uuid(&uuid_read), uuid(&uuid_imported));
}

/// `storlab report` on a terminal writes `report-N.html` (or
/// `report-A-vs-B.html`) and says so, rather than pages of HTML on the
/// screen; a pipe, `-o` and an asked-for format are as before.
#[test]
fn a_report_meant_for_a_terminal_goes_to_a_file() {
    let lab = lab_with_fixture();
    let on_a_terminal = |args: &str| -> String {
        // script(1) gives the command a pseudo-terminal for its output.
        let line = format!("{} {args}", env!("CARGO_BIN_EXE_storlab"));
        let storlab = lab.cmd();
        let out = std::process::Command::new("script")
            .args(["-qec", &line, "/dev/null"])
            .current_dir(lab.path())
            .envs(storlab.get_envs().filter_map(|(k, v)| Some((k, v?))))
            .env_remove("COLUMNS")
            .output()
            .expect("run script(1) (util-linux)");
        assert!(out.status.success(), "{args}: {out:?}");
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let said = on_a_terminal("report 1");
    assert!(
        said.contains("wrote report-1.html") && !said.contains("<html"),
        "{said}"
    );
    let page = std::fs::read_to_string(lab.path().join("report-1.html")).expect("report-1.html");
    assert!(page.starts_with("<!DOCTYPE html>"));
    let said = on_a_terminal("report 1 2 --allow-different");
    assert!(said.contains("wrote report-1-vs-2.html"), "{said}");
    assert!(lab.path().join("report-1-vs-2.html").exists());
    // Asked for Markdown, the terminal gets it.
    let said = on_a_terminal("report 1 --format md");
    assert!(
        said.contains("# all-kinds") && !said.contains("wrote"),
        "{said}"
    );
    // A pipe gets the HTML.
    assert!(lab.ok(&["report", "1"]).starts_with("<!DOCTYPE html>"));
}

#[test]
fn show_prints_what_the_v3_storlab_printed() {
    let lab = lab_with_fixture();
    for c in ["1", "2"] {
        let out = lab.run(&["show", c]);
        assert!(out.status.success(), "show {c}: {:?}", out.status);
        assert_golden(
            &format!("show-{c}.txt"),
            &String::from_utf8_lossy(&out.stdout),
        );
        // Warnings go to stderr, each said once.
        assert_golden(
            &format!("show-{c}.stderr.txt"),
            &String::from_utf8_lossy(&out.stderr),
        );
    }
    assert_golden("list.txt", &lab.ok(&["list"]));
    assert_golden("compare-1.txt", &lab.ok(&["compare", "1"]));
}

#[test]
fn show_fits_a_terminal_of_100_columns_and_keeps_every_verdict() {
    let lab = lab_with_fixture();
    for c in ["1", "2"] {
        let full = String::from_utf8_lossy(&lab.run(&["show", c]).stdout).into_owned();
        let out = lab
            .cmd()
            .args(["show", c])
            .env("COLUMNS", "100")
            .output()
            .unwrap();
        assert!(out.status.success(), "show {c}: {:?}", out.status);
        let text = String::from_utf8_lossy(&out.stdout);
        let long: Vec<&str> = text.lines().filter(|l| l.chars().count() > 100).collect();
        assert!(
            long.is_empty(),
            "show {c} at 100 columns:\n{}",
            long.join("\n")
        );
        // The summary table keeps each row's verdict and says what it left out.
        for verdict in [
            "×7.6 faster",
            "-0.2% (inconclusive; ±5% needs about 51 runs)",
            "24.6% less time",
        ] {
            assert_eq!(
                full.contains(verdict),
                text.contains(verdict),
                "show {c}: {verdict}\n{text}"
            );
            if c == "1" {
                assert!(full.contains(verdict), "show 1: {verdict}\n{full}");
            }
        }
        assert!(text.contains("left out to fit 100 columns)"), "{text}");
        // And each row's mean with its interval.
        for mean in [
            "2.5 GiB/s ± 745.4 MiB/s",
            "4.53k tx/s ± 341 tx/s",
            "1.9 GiB/s, 5.1 GiB/s (2 runs)",
        ] {
            assert_eq!(
                full.contains(mean),
                text.contains(mean),
                "show {c}: {mean}\n{text}"
            );
        }
    }
}

#[test]
fn markdown_report_is_what_the_v3_storlab_wrote() {
    let lab = lab_with_fixture();
    for c in ["1", "2"] {
        let out = lab.path().join(format!("report-{c}.md"));
        lab.ok(&["report", c, "--format", "md", "-o", out.to_str().unwrap()]);
        let text = std::fs::read_to_string(&out).unwrap();
        assert_golden(&format!("report-{c}.md"), &text);
    }
}

#[test]
fn csv_export_is_what_the_v3_storlab_wrote() {
    let lab = lab_with_fixture();
    for c in ["1", "2"] {
        assert_golden(&format!("export-{c}.csv"), &lab.ok(&["export", c]));
    }
}

/// A CSV's rows as maps of column → cell.
fn csv_rows(text: &str) -> Vec<BTreeMap<String, String>> {
    let mut reader = csv::Reader::from_reader(text.as_bytes());
    let header: Vec<String> = reader.headers().unwrap().iter().map(String::from).collect();
    reader
        .records()
        .map(|r| {
            let r = r.expect("a well-formed CSV row");
            header
                .iter()
                .cloned()
                .zip(r.iter().map(String::from))
                .collect()
        })
        .collect()
}

/// (run, rank, metric as v3 named it, value, unit, direction) of every
/// metric row; the name is composed from today's name and label columns,
/// never parsed.
type Figure = (String, String, String, String, String, String);

fn figures(rows: &[BTreeMap<String, String>], label_columns: &[String]) -> Vec<Figure> {
    let mut out: Vec<Figure> = rows
        .iter()
        .filter(|r| !r["metric"].is_empty())
        .map(|r| {
            let labels = label_columns
                .iter()
                .filter(|c| !r[*c].is_empty())
                .fold(Labels::new(), |l, c| l.with_key(c, &r[c]));
            let rank = r.get("rank").cloned().unwrap_or_default();
            let name = compact_name(&r["metric"], &labels);
            let cell = |c: &str| r[c].clone();
            (
                cell("run"),
                rank,
                name,
                cell("value"),
                cell("unit"),
                cell("direction"),
            )
        })
        .collect();
    out.sort();
    out
}

#[test]
fn every_v3_exported_value_is_in_the_new_csv_under_its_name_and_labels() {
    let lab = lab_with_fixture();
    for c in ["1", "2"] {
        let old =
            std::fs::read_to_string(fixture_dir().join(format!("written-by-v3/export-{c}.csv")))
                .expect("the v3 export");
        let old = csv_rows(&old);
        let new = csv_rows(&lab.ok(&["export", c]));
        let fixed = [
            "campaign",
            "run",
            "target",
            "workload",
            "repetition",
            "round",
            "warmup",
            "status",
            "metric",
            "value",
            "unit",
            "direction",
            "campaign_uuid",
            "campaign_name",
            "host",
            "started_at",
            "duration_s",
            "caches_dropped",
            "remounted",
            "rank",
        ];
        let label_columns: Vec<String> = new[0]
            .keys()
            .filter(|k| !fixed.contains(&k.as_str()) && !k.contains('.'))
            .cloned()
            .collect();
        assert!(
            label_columns.contains(&"op".to_string()),
            "{label_columns:?}"
        );
        let (want, got) = (figures(&old, &[]), figures(&new, &label_columns));
        assert_eq!(want.len(), got.len(), "campaign {c}: as many metric rows");
        for (w, g) in want.iter().zip(&got) {
            assert_eq!(w, g, "campaign {c}");
        }
        // The rows of runs without metrics (failed runs) are kept too.
        assert_eq!(old.len(), new.len(), "campaign {c}: as many rows");
        for r in new.iter().filter(|r| !r["metric"].is_empty()) {
            assert!(storlab::metric::lookup(&r["metric"]).is_some(), "{r:?}");
        }
    }
}

#[test]
fn the_v3_names_became_catalogue_names_with_labels() {
    let lab = lab_with_fixture();
    let rows = csv_rows(&lab.ok(&["export", "1"]));
    let has = |workload: &str, metric: &str, labels: &[(&str, &str)]| {
        rows.iter().any(|r| {
            r["workload"] == workload
                && r["metric"] == metric
                && labels.iter().all(|(k, v)| r[*k] == *v)
        })
    };
    let cell = [
        ("test", "write"),
        ("file_size", "65536"),
        ("record_size", "4096"),
    ];
    assert!(has("matrix", "bw_bytes_per_s", &cell));
    assert!(has(
        "matrix",
        "geomean_bw_bytes_per_s",
        &[("test", "fread")]
    ));
    assert!(has("smallfiles", "lat_p999_ns", &[("op", "read")]));
    assert!(has("smallfiles", "ops_per_s", &[("op", "create")]));
    assert!(has("pgbench", "lat_mean_ns", &[("statement", "05_begin")]));
    assert!(has("fio-randwrite", "iops", &[("job", "0")]));
    assert!(!has("smallfiles", "read_lat_p999_ns", &[]));
    let params = rows
        .iter()
        .find(|r| r["workload"] == "randread-4k")
        .unwrap();
    assert_eq!(params["workload.bs"], "4096");
    assert_eq!(params["target.path"], "/var/tmp/storlab-fixture");
}
