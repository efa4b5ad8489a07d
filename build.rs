//! Names the build for `storlab --version` and for every stored campaign:
//! the git commit it was built from (with `-dirty` when the work tree had
//! changes) and the enabled features, so that two builds are told apart.
//! Built outside a git checkout (a source tarball), the commit is "unknown".

use std::path::PathBuf;
use std::process::Command;

fn git(args: &[&str]) -> Option<String> {
    let out = Command::new("git").args(args).output().ok()?;
    if !out.status.success() {
        return None;
    }
    let text = String::from_utf8(out.stdout).ok()?;
    Some(text.trim().to_string()).filter(|t| !t.is_empty())
}

/// Reruns this script when HEAD moves, the branch it points to moves, or
/// the index changes (a commit, an add).
fn watch_git() {
    for what in ["HEAD", "index", "packed-refs"] {
        if let Some(p) = git(&["rev-parse", "--git-path", what]) {
            println!("cargo:rerun-if-changed={}", absolute(&p).display());
        }
    }
    if let Some(branch) = git(&["symbolic-ref", "-q", "HEAD"]) {
        if let Some(p) = git(&["rev-parse", "--git-path", &branch]) {
            println!("cargo:rerun-if-changed={}", absolute(&p).display());
        }
    }
}

fn absolute(p: &str) -> PathBuf {
    let p = PathBuf::from(p);
    if p.is_absolute() {
        p
    } else {
        std::env::current_dir().unwrap_or_default().join(p)
    }
}

fn main() {
    watch_git();
    // Edits to the sources change `-dirty`.
    println!("cargo:rerun-if-changed=src");
    println!("cargo:rerun-if-changed=Cargo.toml");
    let commit = git(&["rev-parse", "--short=10", "HEAD"]);
    let date = git(&["log", "-1", "--format=%cs", "HEAD"]);
    let dirty = git(&["status", "--porcelain", "--untracked-files=no"]).is_some();
    let build = match (commit, date) {
        (Some(c), Some(d)) => format!("{c}{} {d}", if dirty { "-dirty" } else { "" }),
        (Some(c), None) => c,
        _ => "commit unknown".to_string(),
    };
    let features: Vec<&str> = [("CARGO_FEATURE_MPI", "mpi")]
        .iter()
        .filter(|(var, _)| std::env::var_os(var).is_some())
        .map(|(_, name)| *name)
        .collect();
    let features = if features.is_empty() {
        "none".to_string()
    } else {
        features.join(", ")
    };
    let version = std::env::var("CARGO_PKG_VERSION").unwrap_or_default();
    println!("cargo:rustc-env=STORLAB_VERSION_LONG={version} ({build}; features: {features})");
}
