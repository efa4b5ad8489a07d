//! Running external programs (mkfs, losetup, mount, zpool, gluster…) with
//! argument vectors, never through a shell, and errors that name the
//! command and quote what it printed.

use std::ffi::OsStr;
use std::process::Command;

use anyhow::{bail, Context, Result};

/// Runs `program args…`; returns its stdout, or an error quoting stderr.
pub fn run<S: AsRef<OsStr>>(program: &str, args: &[S]) -> Result<String> {
    let out = Command::new(program)
        .args(args)
        .output()
        .with_context(|| format!("running {program}; is it installed?"))?;
    if !out.status.success() {
        bail!(
            "`{}` failed ({}): {}",
            render(program, args),
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// Whether `program args…` exits successfully (output discarded).
pub fn succeeds<S: AsRef<OsStr>>(program: &str, args: &[S]) -> bool {
    Command::new(program)
        .args(args)
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false)
}

/// The first line a program prints for its version, stdout or stderr.
pub fn version<S: AsRef<OsStr>>(program: &str, args: &[S]) -> Option<String> {
    let out = Command::new(program).args(args).output().ok()?;
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    text.lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .map(String::from)
}

/// The path of `program` on $PATH (and the sbin directories root uses).
pub fn which(program: &str) -> Option<std::path::PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain(["/usr/sbin", "/sbin"].map(std::path::PathBuf::from))
        .map(|d| d.join(program))
        .find(|p| p.is_file())
}

/// A command line for messages, quoting arguments with spaces.
pub fn render<S: AsRef<OsStr>>(program: &str, args: &[S]) -> String {
    let mut s = program.to_string();
    for a in args {
        let a = a.as_ref().to_string_lossy();
        if a.contains(' ') || a.is_empty() {
            s.push_str(&format!(" '{a}'"));
        } else {
            s.push(' ');
            s.push_str(&a);
        }
    }
    s
}

/// Retries `f` up to `tries` times, `pause_ms` apart (busy devices, pools).
pub fn retry<T>(tries: u32, pause_ms: u64, mut f: impl FnMut() -> Result<T>) -> Result<T> {
    let mut last = None;
    for i in 0..tries.max(1) {
        match f() {
            Ok(v) => return Ok(v),
            Err(e) => last = Some(e),
        }
        if i + 1 < tries {
            std::thread::sleep(std::time::Duration::from_millis(pause_ms));
        }
    }
    Err(last.expect("at least one try"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_name_the_command_and_its_stderr() {
        let e = run("ls", &["/definitely/not/here"]).unwrap_err();
        let msg = format!("{e:#}");
        assert!(msg.contains("ls /definitely/not/here"), "{msg}");
        assert!(msg.contains("No such file"), "{msg}");
        assert!(run("storlab-no-such-program", &["x"]).is_err());
        assert_eq!(render("mount", &["-o", "a b"]), "mount -o 'a b'");
    }
}
