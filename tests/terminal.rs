//! What `storlab show` puts on a terminal, read through script(1)'s
//! pseudo-terminal on the quick campaign of a busy host
//! (tests/fixtures/quick-noisy): it fits 100 columns in 35 lines and 80 in
//! 50, no line wider than the terminal (COLUMNS or the tty's own size);
//! warnings a line per kind, every one with `--warnings`; the provenance
//! only with `-v`; colour on a terminal unless NO_COLOR or `--color never`,
//! none on a pipe unless CLICOLOR_FORCE or `--color always`.

use std::path::Path;

use crate::util::Lab;

/// A lab whose store is a fresh copy of the quick-noisy fixture.
fn lab_with_quick_noisy() -> Lab {
    let lab = Lab::new();
    let fixture =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/quick-noisy/quick-noisy.db");
    std::fs::copy(fixture, lab.db()).expect("copy the quick-noisy store");
    lab
}

/// What `storlab ARGS` writes on a pseudo-terminal (stdout and stderr, as
/// a person sees them), its size set with stty; `env` added (on the
/// command's line: bash sets COLUMNS anew after stty).
fn on_a_terminal(lab: &Lab, columns: usize, args: &str, env: &[(&str, &str)]) -> String {
    let env: Vec<String> = env.iter().map(|(k, v)| format!("{k}={v}")).collect();
    let line = format!(
        "stty cols {columns} rows 60; {} {} {args}",
        env.join(" "),
        env!("CARGO_BIN_EXE_storlab")
    );
    let storlab = lab.cmd();
    let out = std::process::Command::new("script")
        .args(["-qec", &line, "/dev/null"])
        .current_dir(lab.path())
        .envs(storlab.get_envs().filter_map(|(k, v)| Some((k, v?))))
        .env_remove("COLUMNS")
        .output()
        .expect("run script(1) (util-linux)");
    assert!(out.status.success(), "{args}: {out:?}");
    String::from_utf8(out.stdout)
        .expect("UTF-8")
        .replace("\r\n", "\n")
}

/// `text` without its ANSI styles.
fn plain(text: &str) -> String {
    let mut out = String::new();
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c == '\x1b' {
            for d in chars.by_ref() {
                if d.is_ascii_alphabetic() {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

fn widest(text: &str) -> usize {
    text.lines().map(|l| l.chars().count()).max().unwrap_or(0)
}

#[test]
fn show_fits_100_columns_in_35_lines_and_80_in_50_with_colour() {
    let lab = lab_with_quick_noisy();
    for (columns, most) in [(100, 35), (80, 50)] {
        let shown = on_a_terminal(&lab, columns, "show", &[]);
        let text = plain(&shown);
        let lines = text.lines().count();
        assert!(lines <= most, "{lines} lines at {columns} columns:\n{text}");
        assert!(widest(&text) <= columns, "wider than {columns}:\n{text}");
        // Every row is there, each with its verdict, and none as a record.
        for w in ["seqwrite-1m", "randwrite-4k-fsync", "tinywrites-64b"] {
            assert_eq!(text.matches(&format!("{w} ")).count(), 2, "{w}:\n{text}");
        }
        assert_eq!(text.matches("  baseline\n").count(), 7, "{text}");
        assert!(text.contains("faster"), "{text}");
        // The warnings, a line per kind (a kind's line may wrap).
        assert!(text.contains("warnings, by kind"), "{text}");
        let kinds = ["noisy host", "page cache", "CPU-bound", "inconclusive"];
        for k in kinds {
            assert_eq!(
                text.matches(&format!("\n  {k} ")).count(),
                1,
                "{k}:\n{text}"
            );
        }
        assert!(text.contains("17 of 42 runs"), "{text}");
        assert!(!text.contains("warning: "), "{text}");
        // No provenance without -v.
        assert!(!text.contains("versions:"), "{text}");
        // Colour on a terminal: verdicts green, warnings' kinds yellow.
        assert!(shown.contains("\x1b[32m"), "no green: {shown:?}");
        assert!(shown.contains("\x1b[33m"), "no yellow: {shown:?}");
        // The same words without colour, by NO_COLOR or --color never.
        let no_colour = on_a_terminal(&lab, columns, "show", &[("NO_COLOR", "1")]);
        assert!(!no_colour.contains('\x1b'), "{no_colour:?}");
        assert_eq!(no_colour, text);
        let never = on_a_terminal(&lab, columns, "--color never show", &[]);
        assert_eq!(never, text);
    }
}

#[test]
fn columns_sets_the_width_even_on_a_wider_terminal() {
    let lab = lab_with_quick_noisy();
    let text = plain(&on_a_terminal(&lab, 200, "show", &[("COLUMNS", "80")]));
    assert!(widest(&text) <= 80, "{text}");
    assert!(text.contains("left out to fit 80 columns"), "{text}");
}

#[test]
fn every_warning_with_warnings_or_v_and_the_provenance_with_v() {
    let lab = lab_with_quick_noisy();
    let every = plain(&on_a_terminal(&lab, 100, "show --warnings", &[]));
    let listed = every.matches("warning: ").count();
    assert!(listed >= 16, "{listed} warnings:\n{every}");
    assert!(widest(&every) <= 100, "{every}");
    assert!(!every.contains("warnings, by kind"), "{every}");
    assert!(!every.contains("versions:"), "{every}");
    let verbose = plain(&on_a_terminal(&lab, 100, "-v show", &[]));
    assert_eq!(verbose.matches("warning: ").count(), listed);
    assert!(verbose.contains("versions: storlab"), "{verbose}");
    assert!(widest(&verbose) <= 100, "{verbose}");
}

#[test]
fn a_pipe_gets_no_colour_and_the_whole_table_unless_asked() {
    let lab = lab_with_quick_noisy();
    let out = lab.run(&["show"]);
    assert!(out.status.success());
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert!(!stdout.contains('\x1b') && !stderr.contains('\x1b'));
    // Every column, CV and p99 among them; the table to stdout, the
    // warnings to stderr.
    assert!(
        stdout.contains("CV") && stdout.contains("p99 latency"),
        "{stdout}"
    );
    assert!(stderr.contains("warnings, by kind") && !stdout.contains("warnings"));
    let mut forced = lab.cmd();
    let out = forced
        .arg("show")
        .env("CLICOLOR_FORCE", "1")
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&out.stdout).contains("\x1b[32m"));
    let out = lab.run(&["--color", "always", "show"]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("\x1b[33m"));
}

/// `show --format json`: the model and the warnings, with their kinds and
/// the count by kind, for scripts.
#[test]
fn show_as_json_holds_the_verdicts_and_the_warnings_by_kind() {
    let lab = lab_with_quick_noisy();
    let out = lab.run(&["show", "--format", "json"]);
    assert!(out.status.success());
    assert!(out.stderr.is_empty(), "{out:?}");
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(doc["campaign"]["name"], "quick");
    assert_eq!(doc["baseline"], "cwd");
    assert_eq!(doc["workloads"].as_array().map(Vec::len), Some(7));
    let kinds = doc["warnings_by_kind"].as_array().unwrap();
    let noisy = kinds
        .iter()
        .find(|k| k["kind"] == "noisy_host")
        .expect("noisy host");
    assert_eq!(noisy["runs"].as_array().map(Vec::len), Some(17));
    let others = &noisy["evidence"][0];
    assert_eq!(others["metric"], "cpu_others_pct");
    // Counted over the runs where the others passed the check's 10%: a
    // run warned for the hypervisor's steal alone does not put its 0% of
    // others at the low end.
    assert!(others["low"].as_f64().unwrap() > 10.0, "{noisy}");
    let total: u64 = kinds.iter().map(|k| k["warnings"].as_u64().unwrap()).sum();
    assert_eq!(total as usize, doc["warnings"].as_array().unwrap().len());
    assert!(
        doc["warnings"][0]["kind"].is_string(),
        "{}",
        doc["warnings"][0]
    );
}

/// `compare` colours its verdicts as `show` does, and fits the terminal.
#[test]
fn compare_colours_its_verdicts_and_fits() {
    let lab = lab_with_quick_noisy();
    let shown = on_a_terminal(&lab, 100, "compare", &[]);
    assert!(shown.contains("\x1b[32mfaster"), "{shown:?}");
    assert!(widest(&plain(&shown)) <= 100, "{}", plain(&shown));
    let piped = lab.ok(&["compare"]);
    assert!(
        piped.contains("faster") && !piped.contains('\x1b'),
        "{piped}"
    );
}
