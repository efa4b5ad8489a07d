//! Running external programs (mkfs, losetup, mount, zpool, gluster…) with
//! argument vectors, never through a shell, and errors that name the
//! command and quote what it printed.
//!
//! Each command runs with a time limit ([`timeout`]) and is stopped by the
//! first SIGINT, SIGTERM or SIGHUP that arrives while it runs: a stuck
//! `gluster` call or a hard NFS mount then fails with an error naming it,
//! and the campaign's teardown follows — teardown's own commands, started
//! after the signal, run to their end; while a campaign provisions
//! ([`Provisioning`]), no new command starts once it is stopped. A command
//! dies with storlab, however storlab ends (`PR_SET_PDEATHSIG`). With `-v`
//! every command is echoed as a line to paste into a shell.

use std::ffi::OsStr;
use std::io::Read;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use anyhow::{anyhow, bail, Result};

use crate::process::child::{die_with_storlab, RUNNING_GROUP};
use crate::process::stop::{handlers_installed, running_is_stopped, signals_received};

/// How long a provisioning command may run when `STORLAB_COMMAND_TIMEOUT`
/// (seconds) does not say: ample for mkfs on a large image or a Gluster
/// volume start, short of a campaign hanging for good.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(300);

/// After SIGTERM, how long a command has to end before SIGKILL; after
/// SIGKILL, how long storlab waits for it before giving up on it (a process
/// in uninterruptible sleep, as on a dead NFS server, cannot be reaped).
const GRACE: Duration = Duration::from_secs(2);

/// Probes (`succeeds`, `version`) ask a quick question: a minute at most.
const PROBE_TIMEOUT: Duration = Duration::from_secs(60);

static PROVISIONING: AtomicBool = AtomicBool::new(false);

/// While it lives, the campaign is provisioning: once its stop flag is
/// raised no new command starts (a probe that a signal cut short must not
/// lead on to starting a daemon), so that teardown follows at once.
pub struct Provisioning(());

impl Provisioning {
    pub fn begin() -> Provisioning {
        PROVISIONING.store(true, Ordering::SeqCst);
        Provisioning(())
    }
}

impl Drop for Provisioning {
    fn drop(&mut self) {
        PROVISIONING.store(false, Ordering::SeqCst);
    }
}

/// Whether provisioning is to stop: it runs and the campaign is stopped.
pub fn provisioning_stopped() -> bool {
    PROVISIONING.load(Ordering::SeqCst) && running_is_stopped()
}

/// The time limit of one external command.
pub fn timeout() -> Duration {
    std::env::var("STORLAB_COMMAND_TIMEOUT")
        .ok()
        .and_then(|s| s.trim().parse::<f64>().ok())
        .filter(|s| s.is_finite() && *s > 0.0)
        .map(Duration::from_secs_f64)
        .unwrap_or(DEFAULT_TIMEOUT)
}

fn probe_timeout() -> Duration {
    timeout().min(PROBE_TIMEOUT)
}

/// What an external command left behind.
struct Output {
    status: ExitStatus,
    stdout: Vec<u8>,
    stderr: Vec<u8>,
}

/// Why a command did not end by itself.
enum Cut {
    Interrupted,
    TimedOut(Duration),
}

/// Runs `cmd` to its end, `limit`, or the first stop signal.
fn output(cmd: &mut Command, limit: Duration) -> Result<Output> {
    let shown = render(
        &cmd.get_program().to_string_lossy(),
        &cmd.get_args().collect::<Vec<_>>(),
    );
    if provisioning_stopped() {
        bail!("`{shown}` not started: the campaign is interrupted");
    }
    crate::console::echo(cmd);
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    // Under a campaign's handlers, storlab decides what a signal stops:
    // the command leads its own group, out of reach of the terminal's
    // Ctrl-C, and is signalled by storlab itself.
    let own_group = handlers_installed();
    if own_group {
        cmd.process_group(0);
    }
    // A killed storlab must not leave it running (`qemu-img create` with
    // full preallocation writing on into an image cleanup removed).
    die_with_storlab(cmd);
    let program = cmd.get_program().to_string_lossy().into_owned();
    let signals = signals_received();
    let mut child = cmd.spawn().map_err(|e| spawn_error(&program, e))?;
    let previous = own_group.then(|| RUNNING_GROUP.swap(child.id() as i32, Ordering::SeqCst));
    let stdout = drain(child.stdout.take());
    let stderr = drain(child.stderr.take());
    let ended = wait(&mut child, own_group, limit, signals);
    if let Some(previous) = previous {
        RUNNING_GROUP.store(previous, Ordering::SeqCst);
    }
    let (status, cut) = ended;
    let (stdout, stderr) = (stdout.finish(), stderr.finish());
    match cut {
        None => Ok(Output {
            status: status.expect("a command that was not cut short has ended"),
            stdout,
            stderr,
        }),
        Some(Cut::Interrupted) => Err(anyhow!(
            "`{shown}` was interrupted by a signal{}",
            stuck(status.as_ref(), &child)
        )),
        Some(Cut::TimedOut(d)) => Err(anyhow!(
            "`{shown}` did not finish within {} s and was killed{}; STORLAB_COMMAND_TIMEOUT (seconds) sets the limit",
            d.as_secs_f64(),
            stuck(status.as_ref(), &child)
        )),
    }
}

fn spawn_error(program: &str, e: std::io::Error) -> anyhow::Error {
    if e.kind() == std::io::ErrorKind::NotFound {
        anyhow!("running {program}: it is not installed (not found on PATH)")
    } else {
        anyhow!("running {program}: {e}")
    }
}

/// ` (pid N did not end and is left behind)` for a child that outlived SIGKILL.
fn stuck(status: Option<&ExitStatus>, child: &Child) -> String {
    match status {
        Some(_) => String::new(),
        None => format!(
            " (pid {} did not end, even killed, and is left behind)",
            child.id()
        ),
    }
}

/// Waits for `child`, cutting it short on a new stop signal or at `limit`.
fn wait(
    child: &mut Child,
    own_group: bool,
    limit: Duration,
    signals: usize,
) -> (Option<ExitStatus>, Option<Cut>) {
    let t0 = Instant::now();
    loop {
        if let Ok(Some(status)) = child.try_wait() {
            return (Some(status), None);
        }
        let cut = if signals_received() > signals {
            Some(Cut::Interrupted)
        } else if t0.elapsed() >= limit {
            Some(Cut::TimedOut(limit))
        } else {
            None
        };
        if let Some(cut) = cut {
            return (stop(child, own_group, &cut), Some(cut));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// SIGTERM (an interrupt) or SIGKILL (a timeout) to the command and its
/// group, SIGKILL after [`GRACE`]; its status if it ended.
fn stop(child: &mut Child, own_group: bool, cut: &Cut) -> Option<ExitStatus> {
    let pid = child.id() as libc::pid_t;
    let target = if own_group { -pid } else { pid };
    let first = match cut {
        Cut::Interrupted => libc::SIGTERM,
        Cut::TimedOut(_) => libc::SIGKILL,
    };
    for sig in [first, libc::SIGKILL] {
        // SAFETY: kill has no memory-safety preconditions; the pid (or group) is our child's.
        unsafe { libc::kill(target, sig) };
        let until = Instant::now() + GRACE;
        while Instant::now() < until {
            if let Ok(Some(status)) = child.try_wait() {
                return Some(status);
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
    None
}

/// A pipe read to its end on a thread.
struct Drain(mpsc::Receiver<Vec<u8>>);

fn drain(pipe: Option<impl Read + Send + 'static>) -> Drain {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut bytes = Vec::new();
        if let Some(mut p) = pipe {
            let _ = p.read_to_end(&mut bytes);
        }
        let _ = tx.send(bytes);
    });
    Drain(rx)
}

impl Drain {
    /// What was read; nothing if the pipe is still held open after
    /// [`GRACE`] (a daemon the command started keeps it).
    fn finish(self) -> Vec<u8> {
        self.0.recv_timeout(GRACE).unwrap_or_default()
    }
}

/// `exit status 3`, `killed by signal 9`.
fn describe(status: &ExitStatus) -> String {
    match (status.code(), status.signal()) {
        (Some(code), _) => format!("exit status {code}"),
        (None, Some(sig)) => format!("killed by signal {sig}"),
        _ => "ended abnormally".into(),
    }
}

/// Runs `program args…`; returns its stdout, or an error quoting stderr.
pub fn run<S: AsRef<OsStr>>(program: &str, args: &[S]) -> Result<String> {
    run_command(Command::new(program).args(args))
}

/// Runs a command built elsewhere (one entering another root, say) as
/// [`run`] runs a program: its stdout, or an error quoting stderr.
pub fn run_command(cmd: &mut Command) -> Result<String> {
    let program = cmd.get_program().to_string_lossy().into_owned();
    let args: Vec<std::ffi::OsString> = cmd.get_args().map(|a| a.to_os_string()).collect();
    let out = output(cmd, timeout())?;
    if !out.status.success() {
        bail!(
            "`{}` failed ({}): {}",
            render(&program, &args),
            describe(&out.status),
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// Whether `program args…` exits successfully (output discarded).
pub fn succeeds<S: AsRef<OsStr>>(program: &str, args: &[S]) -> bool {
    output(Command::new(program).args(args), probe_timeout()).is_ok_and(|o| o.status.success())
}

/// The first line a program prints for its version, stdout or stderr.
pub fn version<S: AsRef<OsStr>>(program: &str, args: &[S]) -> Option<String> {
    let out = output(Command::new(program).args(args), probe_timeout()).ok()?;
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
