//! Running PostgreSQL's client programs (pgbench, psql, initdb) with argument
//! vectors: output captured, the stop flag polled so that SIGINT/SIGTERM end
//! a long pgbench at once, and failures reported with the command and the
//! tail of its stderr.

use std::io::Read;
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::thread::JoinHandle;
use std::time::Duration;

use anyhow::{bail, Context, Result};

use crate::process::StopFlag;

/// What a finished program printed.
#[derive(Debug, Clone, Default)]
pub struct Captured {
    pub stdout: String,
    pub stderr: String,
}

/// Runs `cmd` to completion in its own process group (so a terminal's
/// Ctrl-C reaches storlab, which decides), polling `stop`: when raised the
/// program gets SIGINT and the call fails with "interrupted".
pub fn run(mut cmd: Command, what: &str, stop: &StopFlag) -> Result<Captured> {
    let shown = show(&cmd);
    crate::console::echo(&cmd);
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    // SIGINT is how a stop reaches the program; started from a script in
    // the background (`storlab run &`), storlab inherits it ignored, and so
    // would the program, which then runs on to its end (30 s of `sleep`
    // in the test, a whole pgbench run in a campaign).
    // SAFETY: only async-signal-safe calls between fork and exec.
    unsafe {
        cmd.pre_exec(|| {
            libc::signal(libc::SIGINT, libc::SIG_DFL);
            Ok(())
        });
    }
    crate::process::child::die_with_storlab(&mut cmd);
    let mut child = cmd
        .spawn()
        .with_context(|| format!("{what}: starting `{shown}`"))?;
    let out = reader(child.stdout.take());
    let err = reader(child.stderr.take());
    let status = wait_or_stop(&mut child, stop);
    // Stopped, the output is not waited for long: a process the program
    // left behind (or one forked meanwhile by another thread) may hold its
    // pipes open, and a campaign being stopped must not hang on them.
    let patience = match stop.is_raised() {
        true => Some(std::time::Duration::from_secs(2)),
        false => None,
    };
    let captured = Captured {
        stdout: collect(out, patience),
        stderr: collect(err, patience),
    };
    let status = status.with_context(|| format!("{what}: waiting for `{shown}`"))?;
    if stop.is_raised() {
        bail!("{what}: interrupted");
    }
    if !status.success() {
        bail!(
            "{what}: `{shown}` failed ({status}): {}",
            tail(&captured.stderr, 8)
        );
    }
    Ok(captured)
}

/// What a reader read: all of it, or with `patience`, what it has by
/// then (nothing if it is still reading; the thread is left to end).
fn collect(reader: JoinHandle<String>, patience: Option<std::time::Duration>) -> String {
    if let Some(p) = patience {
        let t0 = std::time::Instant::now();
        while !reader.is_finished() {
            if t0.elapsed() >= p {
                return String::new();
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
    }
    reader.join().unwrap_or_default()
}

fn reader<R: Read + Send + 'static>(pipe: Option<R>) -> JoinHandle<String> {
    std::thread::spawn(move || {
        let mut text = String::new();
        if let Some(mut p) = pipe {
            let mut bytes = Vec::new();
            let _ = p.read_to_end(&mut bytes);
            text = String::from_utf8_lossy(&bytes).into_owned();
        }
        text
    })
}

fn wait_or_stop(child: &mut Child, stop: &StopFlag) -> std::io::Result<ExitStatus> {
    let mut signalled = false;
    loop {
        if let Some(status) = child.try_wait()? {
            return Ok(status);
        }
        if stop.is_raised() && !signalled {
            signal(child.id(), libc::SIGINT);
            signalled = true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Sends `sig` to one process by pid (never by name).
pub fn signal(pid: u32, sig: libc::c_int) {
    // SAFETY: kill has no memory-safety preconditions; pid is our own child.
    unsafe {
        libc::kill(pid as libc::pid_t, sig);
    }
}

/// The command as a person would type it, for messages only.
pub fn show(cmd: &Command) -> String {
    let mut parts = vec![cmd.get_program().to_string_lossy().into_owned()];
    parts.extend(cmd.get_args().map(|a| a.to_string_lossy().into_owned()));
    parts.join(" ")
}

/// The last `n` non-empty lines of `text`, joined with " | ".
pub fn tail(text: &str, n: usize) -> String {
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    let start = lines.len().saturating_sub(n);
    let joined = lines[start..].join(" | ");
    if joined.is_empty() {
        "no output".into()
    } else {
        joined
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failures_name_the_command_and_its_stderr() {
        let mut cmd = Command::new("sh");
        cmd.args(["-c", "echo boom >&2; exit 3"]);
        let err = run(cmd, "testing", &StopFlag::new()).unwrap_err();
        let msg = format!("{err:#}");
        assert!(
            msg.contains("`sh -c echo boom >&2; exit 3` failed"),
            "{msg}"
        );
        assert!(msg.contains("boom"), "{msg}");
    }

    #[test]
    fn a_raised_stop_flag_ends_a_long_program() {
        let stop = StopFlag::new();
        let raiser = stop.clone();
        std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(200));
            raiser.raise();
        });
        let t0 = std::time::Instant::now();
        let mut cmd = Command::new("sleep");
        cmd.arg("30");
        let err = run(cmd, "sleeping", &stop).unwrap_err();
        assert!(err.to_string().contains("interrupted"));
        assert!(t0.elapsed() < Duration::from_secs(5));
    }
}
