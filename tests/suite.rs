//! The test suite's own rules: a guard never panics in `Drop` (a panic
//! while a failed test unwinds aborts the whole binary and loses every
//! later test); a test that needs root is ignored, with the reason, where
//! there is none (never an "ok" that ran nothing); and scripts/test, the
//! test command, installs every package the tests name — only what is
//! missing, and as non-root it says how.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::util::PROGRAMS;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The body of every `impl Drop for …` in `text`: (type, body).
fn drop_impls(text: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for (at, _) in text.match_indices("impl Drop for ") {
        let name: String = text[at + 14..]
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        let Some(open) = text[at..].find('{').map(|i| at + i) else {
            continue;
        };
        let mut depth = 0;
        for (i, c) in text[open..].char_indices() {
            match c {
                '{' => depth += 1,
                '}' => {
                    depth -= 1;
                    if depth == 0 {
                        out.push((name.clone(), text[open..open + i + 1].to_string()));
                        break;
                    }
                }
                _ => {}
            }
        }
    }
    out
}

/// What panics: unwrap, expect, asserts, and the lab helpers that assert
/// (`ok`, `run`, `export_json`).
const PANICKING: &[&str] = &[
    ".unwrap()",
    ".expect(",
    "assert",
    "panic!",
    "unreachable!",
    ".ok(&",
    ".run(&",
    ".export_json()",
];

#[test]
fn no_guard_in_the_tests_can_panic_in_drop() {
    let mut found = Vec::new();
    let mut guards = 0;
    for entry in std::fs::read_dir(repo().join("tests")).unwrap() {
        let path = entry.unwrap().path();
        // This file names the pattern in its own test text.
        if path.extension().and_then(|e| e.to_str()) != Some("rs") || path.ends_with("suite.rs") {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        for (name, body) in drop_impls(&text) {
            guards += 1;
            for p in PANICKING.iter().filter(|p| body.contains(*p)) {
                found.push(format!(
                    "{}: Drop for {name} calls `{p}`",
                    path.file_name().unwrap().to_string_lossy()
                ));
            }
        }
    }
    assert!(
        guards >= 5,
        "found only {guards} Drop impls: is the scan broken?"
    );
    assert!(found.is_empty(), "{}", found.join("\n"));
}

#[test]
fn the_scan_finds_a_panicking_guard() {
    let text = "impl Drop for G<'_> {\n    fn drop(&mut self) {\n        let e = self.0.export_json();\n        if x { y() }\n    }\n}\n";
    let impls = drop_impls(text);
    assert_eq!(impls.len(), 1);
    assert_eq!(impls[0].0, "G");
    assert!(impls[0].1.contains(".export_json()"));
    assert!(impls[0].1.ends_with("}\n}"));
}

/// The package list of scripts/test.
fn script_packages() -> Vec<String> {
    let text = std::fs::read_to_string(repo().join("scripts/test")).unwrap();
    let start = text.find("packages=(").expect("a packages=( list") + "packages=(".len();
    let end = start + text[start..].find(')').unwrap();
    text[start..end]
        .split_whitespace()
        .map(String::from)
        .collect()
}

#[test]
fn scripts_test_installs_every_package_the_tests_name() {
    let listed = script_packages();
    for (program, package) in PROGRAMS {
        assert!(
            listed.iter().any(|p| p == package),
            "{program}'s package `{package}` is not in scripts/test's list {listed:?}"
        );
    }
}

fn script(args: &[&str], packages: &str) -> std::process::Output {
    Command::new(repo().join("scripts/test"))
        .args(args)
        .env("STORLAB_TEST_PACKAGES", packages)
        .output()
        .expect("run scripts/test")
}

/// A package installed on every Debian system.
const PRESENT: &str = "coreutils";
const ABSENT: &str = "storlab-no-such-package";

#[test]
#[ignore = "needs root"]
fn scripts_test_installs_only_what_is_missing() {
    require_root!();
    let out = script(
        &["--dry-run", "--setup-only"],
        &format!("{PRESENT} {ABSENT}"),
    );
    assert!(out.status.success(), "{out:?}");
    let said = String::from_utf8_lossy(&out.stdout);
    let install: Vec<&str> = said
        .lines()
        .filter(|l| l.contains("apt-get install"))
        .collect();
    assert_eq!(install.len(), 1, "{said}");
    assert!(
        install[0].ends_with(&format!("--no-install-recommends {ABSENT}")),
        "{said}"
    );
    // Nothing missing: no apt-get at all, and nothing said about packages.
    let out = script(&["--dry-run", "--setup-only"], PRESENT);
    assert!(out.status.success(), "{out:?}");
    let all = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        !all.contains("apt-get") && !all.contains("install"),
        "{all}"
    );
}

#[test]
fn scripts_test_as_non_root_prints_the_apt_get_line_and_stops() {
    let mut cmd = if crate::util::is_root() {
        let mut c = Command::new("runuser");
        c.args(["-u", "nobody", "--"]);
        c.arg(repo().join("scripts/test"));
        c
    } else {
        Command::new(repo().join("scripts/test"))
    };
    if !Path::new("/usr/sbin/runuser").exists() && crate::util::is_root() {
        panic!("runuser is not installed: install the Debian package `util-linux`");
    }
    let out = cmd
        .arg("--setup-only")
        .env("STORLAB_TEST_PACKAGES", format!("{PRESENT} {ABSENT}"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    if err.contains("Permission denied") {
        eprintln!("SKIPPED: user nobody cannot read {}", repo().display());
        return;
    }
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains(&format!(
            "sudo apt-get update && sudo apt-get install -y -qq --no-install-recommends {ABSENT}\n"
        )),
        "{err}"
    );
}

/// What every `#[test]` fn in `text` says about root: (name, calls
/// `require_root!`, its `#[ignore = "…"]` reason if any, a bare `#[ignore]`).
fn root_marks(text: &str) -> Vec<(String, bool, Option<String>, bool)> {
    use syn::visit::Visit;
    struct Tests(Vec<(String, bool, Option<String>, bool)>);
    impl<'a> Visit<'a> for Tests {
        fn visit_item_fn(&mut self, f: &'a syn::ItemFn) {
            if f.attrs.iter().any(|a| a.path().is_ident("test")) {
                let ignore = f.attrs.iter().find(|a| a.path().is_ident("ignore"));
                let reason = ignore.and_then(|a| match &a.meta {
                    syn::Meta::NameValue(nv) => match &nv.value {
                        syn::Expr::Lit(syn::ExprLit {
                            lit: syn::Lit::Str(s),
                            ..
                        }) => Some(s.value()),
                        _ => None,
                    },
                    _ => None,
                });
                let body = macros_called(&f.block);
                self.0.push((
                    f.sig.ident.to_string(),
                    body.contains("require_root"),
                    reason.clone(),
                    ignore.is_some() && reason.is_none(),
                ));
            }
            syn::visit::visit_item_fn(self, f);
        }
    }
    let mut tests = Tests(Vec::new());
    tests.visit_file(&syn::parse_file(text).unwrap());
    tests.0
}

/// The macros a block calls, by name (syn keeps a macro's path).
fn macros_called(block: &syn::Block) -> String {
    use syn::visit::Visit;
    struct Macros(String);
    impl<'a> Visit<'a> for Macros {
        fn visit_macro(&mut self, m: &'a syn::Macro) {
            if let Some(last) = m.path.segments.last() {
                self.0.push_str(&last.ident.to_string());
                self.0.push(' ');
            }
        }
    }
    let mut macros = Macros(String::new());
    macros.visit_block(block);
    macros.0
}

/// A test that returns early without root would pass having run nothing:
/// each one is `#[ignore = "needs root"]` (counted as ignored, with the
/// reason, where there is no root; run as root by scripts/test's
/// `--include-ignored`), and no test is ignored without a reason.
#[test]
fn every_test_that_needs_root_is_ignored_with_the_reason() {
    let mut found = Vec::new();
    let mut needing = 0;
    for entry in std::fs::read_dir(repo().join("tests")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().and_then(|e| e.to_str()) != Some("rs") {
            continue;
        }
        let file = path.file_name().unwrap().to_string_lossy().to_string();
        let text = std::fs::read_to_string(&path).unwrap();
        for (name, needs_root, reason, bare) in root_marks(&text) {
            needing += usize::from(needs_root);
            if needs_root && reason.as_deref() != Some("needs root") {
                found.push(format!(
                    "{file}: {name} calls require_root! but is not #[ignore = \"needs root\"]"
                ));
            }
            if reason.as_deref() == Some("needs root") && !needs_root {
                found.push(format!(
                    "{file}: {name} is ignored as needing root but does not call require_root!"
                ));
            }
            if bare {
                found.push(format!("{file}: {name} is #[ignore]d without a reason"));
            }
        }
    }
    assert!(
        needing >= 98,
        "found only {needing} tests needing root: is the scan broken?"
    );
    assert!(found.is_empty(), "{}", found.join("\n"));
}

#[test]
fn the_root_scan_sees_a_test_that_would_pass_without_running() {
    let text = "#[test]\nfn a() { require_root!(); x(); }\n\
                #[test]\n#[ignore = \"needs root\"]\nfn b() { require_root!(); }\n\
                #[test]\n#[ignore]\nfn c() {}\n";
    let marks = root_marks(text);
    assert_eq!(
        marks,
        vec![
            ("a".to_string(), true, None, false),
            ("b".to_string(), true, Some("needs root".to_string()), false),
            ("c".to_string(), false, None, true),
        ]
    );
}
