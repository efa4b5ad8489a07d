//! Numbers at and beyond the edge of their parameter's range, through the
//! real binary (issue #16, "panics on input"): a duration written as a
//! number that no `Duration` holds is a located error, not a panic, in
//! `check` and in `run`; an estimate built from the largest values a
//! parameter allows saturates instead of overflowing.

use crate::util::Lab;

const TARGET: &str = "[[target]]\nname = \"a\"\nkind = \"dir\"\npath = \"/tmp\"\n";

/// A workload table whose line 8 is `key = value` (the target is lines 1-4).
fn workload(kind: &str, extra: &str, key: &str, value: &str) -> String {
    format!("{TARGET}[[workload]]\nname = \"w\"\nkind = \"{kind}\"\n{key} = {value}\n{extra}")
}

/// Every duration parameter named in the issue, each as `inf`, a number
/// beyond what a `Duration` holds and `nan`: refused at its place.
#[test]
fn durations_written_as_huge_numbers_are_located_errors_not_panics() {
    let lab = Lab::new();
    let mut cases: Vec<(String, String)> = Vec::new();
    for value in ["inf", "1e300", "1.8e19", "nan", "-1.0"] {
        for (kind, extra, key) in [
            ("io", "", "runtime"),
            ("io", "runtime = \"10s\"\n", "ss_dur"),
            ("command", "command = [\"true\"]\n", "timeout"),
            ("sqlite-oltp", "", "busy_timeout"),
            ("sqlite-oltp", "", "duration"),
            ("pgbench", "", "prewarm"),
            ("mock", "", "duration"),
        ] {
            let text = workload(kind, extra, key, value);
            cases.push((format!("{kind}-{key}-{value}"), text));
        }
        // The plan's own: line 2.
        cases.push((
            format!("plan-max_time-{value}"),
            format!(
                "[plan]\nmax_time = {value}\n{TARGET}[[workload]]\nname = \"w\"\nkind = \"mock\"\n"
            ),
        ));
    }
    for (name, text) in &cases {
        let file = lab.file(&format!("{name}.toml"), text);
        let at = if name.starts_with("plan-") {
            "2:12"
        } else {
            "8:"
        };
        for cmd in ["check", "run"] {
            let out = lab.run(&[cmd, file.to_str().unwrap()]);
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert!(!stderr.contains("panicked"), "{name} ({cmd}): {stderr}");
            assert_eq!(out.status.code(), Some(2), "{name} ({cmd}): {stderr}");
            let expected = format!("error: {}:{at}", file.display());
            assert!(
                stderr.starts_with(&expected),
                "{name} ({cmd}): `{stderr}` does not start with `{expected}`"
            );
        }
    }
}

#[test]
fn the_longest_duration_is_accepted_and_one_beyond_it_is_refused() {
    let lab = Lab::new();
    let ok = lab.file("ok.toml", &workload("mock", "", "duration", "1e9"));
    lab.ok(&["check", ok.to_str().unwrap()]);
    let over = lab.file("over.toml", &workload("mock", "", "duration", "1.000001e9"));
    let out = lab.run(&["check", over.to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains(":8:12: ") && stderr.contains("out of range"),
        "{stderr}"
    );
}

/// pgbench `transactions = 9223372036854775807, clients = 10000` panicked
/// in the estimate; so did the largest sizes in io and matrix.
#[test]
fn estimates_from_the_largest_values_saturate() {
    let lab = Lab::new();
    for (name, text) in [
        (
            "pgbench",
            workload("pgbench", "clients = 10000\n", "transactions", "9223372036854775807"),
        ),
        (
            "io",
            workload("io", "numjobs = 1024\nrate = 1\nbs = 1\n", "size", "\"16777215T\""),
        ),
        (
            "matrix",
            workload(
                "matrix",
                "max_record_size = \"8388608T\"\nmin_record_size = \"8388608T\"\nmin_file_size = \"4194304T\"\n",
                "max_file_size",
                "\"8388608T\"",
            ),
        ),
    ] {
        let file = lab.file(&format!("{name}.toml"), &text);
        let out = lab.run(&["check", file.to_str().unwrap()]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{name}: {stderr}");
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(stdout.contains("runs, estimated"), "{name}: {stdout}");
    }
}
