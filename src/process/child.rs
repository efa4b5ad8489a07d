//! Runs an external program as a measured child: wall time around spawn and
//! reap, user and system time and peak memory from `wait4`'s rusage (the
//! child and every descendant it waited for), stdout captured or discarded,
//! the tail of stderr kept. The child leads its own process group; the stop
//! flag or a timeout signals that whole group, and a child that ignores the
//! stop signal is killed after [`STOP_GRACE`]; a storlab that is killed
//! takes the child with it ([`die_with_storlab`]). Whatever the child left
//! running when it ended is killed and reaped ([`super::strays`]).

use std::io::{Read, Write};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::process::{Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::StopFlag;

/// Makes the child end with storlab, however storlab ends (SIGKILL
/// included): the kernel sends it SIGKILL when the thread that spawned it
/// exits — a thread that waits for it, so that happens only when storlab
/// itself is gone — and a child whose storlab died between fork and exec
/// does not run at all. Only the child itself: what it forks (a daemon
/// that detaches) does not inherit it; such a daemon is journaled by pid.
pub fn die_with_storlab(cmd: &mut Command) {
    // SAFETY: getpid has no preconditions.
    let storlab = unsafe { libc::getpid() };
    // SAFETY: prctl and getppid are async-signal-safe and touch no memory
    // of ours between fork and exec.
    unsafe {
        cmd.pre_exec(move || {
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            if libc::getppid() != storlab {
                return Err(std::io::Error::from_raw_os_error(libc::ESRCH));
            }
            Ok(())
        });
    }
}

/// The process group of the child running now (0: none). The signal
/// handler kills it before exiting on a second signal, so that no child
/// outlives storlab.
pub static RUNNING_GROUP: AtomicI32 = AtomicI32::new(0);

/// How much of stderr is kept: its last bytes.
pub const STDERR_TAIL_BYTES: usize = 16 * 1024;

/// How long to wait for the output pipes once the child is reaped: a
/// descendant left in the background may hold them open.
const PIPE_GRACE: Duration = Duration::from_secs(2);

/// How long a child may take to end after the stop signal before its
/// process group is killed: an interrupt never waits without bound.
pub const STOP_GRACE: Duration = Duration::from_secs(5);

/// What to do with the child's streams and when to signal it.
pub struct ChildOptions<'a> {
    /// Written to the child's stdin, which is then closed; none: /dev/null.
    pub stdin: Option<Vec<u8>>,
    /// Capture stdout whole; otherwise it goes to /dev/null.
    pub capture_stdout: bool,
    pub stop: &'a StopFlag,
    /// Sent to the child's process group when the stop flag is raised.
    pub stop_signal: libc::c_int,
    /// The process group is killed (SIGKILL) after this long.
    pub timeout: Option<Duration>,
}

/// A reaped child and what it cost.
#[derive(Debug)]
pub struct Finished {
    pub status: ExitStatus,
    pub wall: Duration,
    pub user_s: f64,
    pub sys_s: f64,
    pub max_rss_bytes: u64,
    pub stdout: Vec<u8>,
    /// The last [`STDERR_TAIL_BYTES`] of stderr.
    pub stderr: Vec<u8>,
    pub timed_out: bool,
    /// Processes the child left running when it ended, killed since.
    pub strays: usize,
}

impl Finished {
    /// The last `lines` non-empty lines of stderr, joined by " | ".
    pub fn stderr_tail(&self, lines: usize) -> String {
        tail_lines(&String::from_utf8_lossy(&self.stderr), lines)
    }
}

/// The last `n` non-empty lines of `text`, trimmed and joined by " | ".
pub fn tail_lines(text: &str, n: usize) -> String {
    let lines: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    lines[lines.len().saturating_sub(n)..].join(" | ")
}

/// storlab's own peak resident size (VmHWM). A child's `ru_maxrss` is never
/// below the resident size of the image it replaced at exec — storlab's,
/// since the child starts as a copy of it — so a child figure at or below
/// this tells only an upper bound.
pub fn own_peak_rss_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// "exit status 3", "killed by signal 9".
pub fn describe_status(status: ExitStatus) -> String {
    match (status.code(), status.signal()) {
        (Some(code), _) => format!("exit status {code}"),
        (None, Some(sig)) => format!("killed by signal {sig}"),
        _ => "ended abnormally".into(),
    }
}

/// Spawns `cmd`, feeds and drains it, and reaps it with `wait4`.
pub fn run(cmd: &mut Command, opts: ChildOptions<'_>) -> std::io::Result<Finished> {
    let ChildOptions {
        stdin,
        capture_stdout,
        stop,
        stop_signal,
        timeout,
    } = opts;
    cmd.stdin(if stdin.is_some() {
        Stdio::piped()
    } else {
        Stdio::null()
    })
    .stdout(if capture_stdout {
        Stdio::piped()
    } else {
        Stdio::null()
    })
    .stderr(Stdio::piped())
    .process_group(0);
    die_with_storlab(cmd);
    crate::console::echo(cmd);
    let adopter = super::strays::Adopter::start();
    let t0 = Instant::now();
    let mut child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) => {
            adopter.sweep(0);
            return Err(e);
        }
    };
    let pid = child.id() as libc::pid_t;
    RUNNING_GROUP.store(pid, Ordering::SeqCst);
    if let (Some(mut pipe), Some(bytes)) = (child.stdin.take(), stdin) {
        std::thread::spawn(move || {
            let _ = pipe.write_all(&bytes);
        });
    }
    let stdout = Drain::start(child.stdout.take(), usize::MAX);
    let stderr = Drain::start(child.stderr.take(), STDERR_TAIL_BYTES);
    let done = Arc::new(AtomicBool::new(false));
    let timed_out = Arc::new(AtomicBool::new(false));
    let watcher = watch(
        pid,
        stop.clone(),
        stop_signal,
        timeout,
        [done.clone(), timed_out.clone()],
    );
    let reaped = wait4(pid);
    let wall = t0.elapsed();
    done.store(true, Ordering::SeqCst);
    let _ = watcher.join();
    let strays = adopter.sweep(pid);
    RUNNING_GROUP.store(0, Ordering::SeqCst);
    let (status, ru) = reaped?;
    let secs = |tv: libc::timeval| tv.tv_sec as f64 + tv.tv_usec as f64 / 1e6;
    Ok(Finished {
        status,
        wall,
        user_s: secs(ru.ru_utime),
        sys_s: secs(ru.ru_stime),
        // Linux reports ru_maxrss in KiB.
        max_rss_bytes: (ru.ru_maxrss.max(0) as u64) * 1024,
        stdout: stdout.finish(),
        stderr: stderr.finish(),
        timed_out: timed_out.load(Ordering::SeqCst),
        strays,
    })
}

/// Signals the child's process group on stop (once; SIGKILL after
/// [`STOP_GRACE`]) or timeout, until `done`.
fn watch(
    pid: libc::pid_t,
    stop: StopFlag,
    signal: libc::c_int,
    timeout: Option<Duration>,
    [done, timed_out]: [Arc<AtomicBool>; 2],
) -> std::thread::JoinHandle<()> {
    let deadline = timeout.map(|t| Instant::now() + t);
    std::thread::spawn(move || {
        let mut signalled: Option<Instant> = None;
        while !done.load(Ordering::SeqCst) {
            match signalled {
                None if stop.is_raised() => {
                    signalled = Some(Instant::now());
                    // SAFETY: kill has no memory-safety preconditions; the group is our child's.
                    unsafe { libc::kill(-pid, signal) };
                }
                Some(at) if at.elapsed() >= STOP_GRACE => {
                    // SAFETY: as above.
                    unsafe { libc::kill(-pid, libc::SIGKILL) };
                }
                _ => {}
            }
            if deadline.is_some_and(|d| Instant::now() >= d) && !timed_out.load(Ordering::SeqCst) {
                timed_out.store(true, Ordering::SeqCst);
                // SAFETY: as above.
                unsafe { libc::kill(-pid, libc::SIGKILL) };
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    })
}

/// Reaps `pid`, retrying on EINTR, with its resource usage.
fn wait4(pid: libc::pid_t) -> std::io::Result<(ExitStatus, libc::rusage)> {
    loop {
        let mut status: libc::c_int = 0;
        // SAFETY: a zeroed rusage is a valid value for wait4 to fill.
        let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
        // SAFETY: status and ru are valid for writes; pid is our unreaped child.
        let rc = unsafe { libc::wait4(pid, &mut status, 0, &mut ru) };
        if rc == pid {
            return Ok((ExitStatus::from_raw(status), ru));
        }
        let err = std::io::Error::last_os_error();
        if err.kind() != std::io::ErrorKind::Interrupted {
            return Err(err);
        }
    }
}

/// A pipe read to its end on a thread, keeping at most `limit` last bytes.
struct Drain {
    buf: Arc<Mutex<Vec<u8>>>,
    finished: Arc<AtomicBool>,
}

impl Drain {
    fn start(pipe: Option<impl Read + Send + 'static>, limit: usize) -> Drain {
        let buf = Arc::new(Mutex::new(Vec::new()));
        let finished = Arc::new(AtomicBool::new(pipe.is_none()));
        if let Some(mut pipe) = pipe {
            let (buf, finished) = (buf.clone(), finished.clone());
            std::thread::spawn(move || {
                let mut chunk = [0u8; 8192];
                while let Ok(n) = pipe.read(&mut chunk) {
                    if n == 0 {
                        break;
                    }
                    let mut b = buf.lock().unwrap_or_else(|e| e.into_inner());
                    b.extend_from_slice(&chunk[..n]);
                    if b.len() > limit {
                        let excess = b.len() - limit;
                        b.drain(..excess);
                    }
                }
                finished.store(true, Ordering::SeqCst);
            });
        }
        Drain { buf, finished }
    }

    /// What was read, after waiting a little for the writer's end to close.
    fn finish(self) -> Vec<u8> {
        let until = Instant::now() + PIPE_GRACE;
        while !self.finished.load(Ordering::SeqCst) && Instant::now() < until {
            std::thread::sleep(Duration::from_millis(2));
        }
        let mut b = self.buf.lock().unwrap_or_else(|e| e.into_inner());
        std::mem::take(&mut *b)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts(stop: &StopFlag) -> ChildOptions<'_> {
        ChildOptions {
            stdin: None,
            capture_stdout: true,
            stop,
            stop_signal: libc::SIGTERM,
            timeout: None,
        }
    }

    #[test]
    fn captures_output_status_and_time() {
        let stop = StopFlag::new();
        let mut o = opts(&stop);
        o.stdin = Some(b"hello".to_vec());
        let f = run(
            Command::new("sh").args(["-c", "cat; echo oops >&2; exit 3"]),
            o,
        )
        .unwrap();
        assert_eq!(f.stdout, b"hello");
        assert_eq!(f.stderr_tail(5), "oops");
        assert_eq!(describe_status(f.status), "exit status 3");
        assert!(f.wall > Duration::ZERO && f.max_rss_bytes > 0);
    }

    #[test]
    fn a_timeout_kills_the_whole_group() {
        let stop = StopFlag::new();
        let mut o = opts(&stop);
        o.timeout = Some(Duration::from_millis(200));
        let t0 = Instant::now();
        let f = run(Command::new("sh").args(["-c", "sleep 30 & sleep 30"]), o).unwrap();
        assert!(f.timed_out);
        assert!(t0.elapsed() < Duration::from_secs(10));
        assert_eq!(describe_status(f.status), "killed by signal 9");
    }

    #[test]
    fn what_a_child_leaves_running_is_killed_even_in_a_session_of_its_own() {
        let stop = StopFlag::new();
        let dir = tempfile::tempdir().unwrap();
        let pids = dir.path().join("pids");
        let script = format!(
            "sleep 300 & echo $! >> {p}; setsid sh -c 'echo $$ >> {p}; exec sleep 300' & sleep 0.2; exit 0",
            p = pids.display()
        );
        let f = run(Command::new("sh").args(["-c", &script]), opts(&stop)).unwrap();
        assert!(f.status.success());
        assert!(f.strays >= 2, "{} strays", f.strays);
        let text = std::fs::read_to_string(&pids).unwrap();
        for pid in text.split_whitespace() {
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat"));
            assert!(stat.is_err(), "stray {pid} still there: {stat:?}");
        }
    }

    #[test]
    fn a_child_ignoring_the_stop_signal_is_killed_after_the_grace() {
        let stop = StopFlag::new();
        let raiser = stop.clone();
        std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(200));
            raiser.raise();
        });
        let t0 = Instant::now();
        let f = run(
            Command::new("sh").args(["-c", "trap '' TERM; sleep 60"]),
            ChildOptions {
                stop_signal: libc::SIGTERM,
                ..opts(&stop)
            },
        )
        .unwrap();
        assert!(t0.elapsed() < STOP_GRACE + Duration::from_secs(3));
        assert_eq!(describe_status(f.status), "killed by signal 9");
    }

    #[test]
    fn tails_keep_the_last_lines() {
        assert_eq!(tail_lines("a\n\nb\nc\n", 2), "b | c");
    }
}
