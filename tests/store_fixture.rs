//! The schema-v3 store written by an earlier storlab (tests/fixtures/v3):
//! it opens (on a copy: opening migrates), and `show`, `report` and `export`
//! give what that storlab gave, pinned by the files in `golden/`.
//!
//! When a change means to alter what a user sees, regenerate the golden
//! file it touches with `STORLAB_BLESS=1 cargo test store_fixture` and read
//! the diff before committing: a number that changes there is a bug unless
//! the change is about that number.

use std::path::{Path, PathBuf};

use crate::util::Lab;

fn fixture_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/v3")
}

/// A lab whose store is a fresh copy of the v3 fixture.
fn lab_with_fixture() -> Lab {
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
