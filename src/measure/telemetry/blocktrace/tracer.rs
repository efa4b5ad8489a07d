//! bpftrace as a child of storlab for a whole campaign: started once,
//! after the targets are provisioned, with the program for every device
//! of their chains; waited for until its probes are attached; marked by
//! the sampler during each run; stopped with SIGINT at teardown. Its maps
//! count from the attach. A run opens a collection ([`Tracer::open`]):
//! the dumps of its own marks (numbered across the process,
//! [`super::mark`]), each cut to the run's devices, of which it keeps the
//! first and the last and the seconds between ([`Builder`]); subtracted,
//! they are the requests between the run's first sample and its last —
//! not preparation, cleanup, remounts or other targets' runs between
//! runs. Attaching takes bpftrace seconds (2.5 s here, compiling and
//! loading the programs); once per campaign, a campaign of many short
//! runs no longer pays it per run. It runs in a process group of its own
//! (a Ctrl-C reaches storlab, which stops it) and dies with storlab
//! (PR_SET_PDEATHSIG). If it ends early, the runs after say so.
//!
//! bpftrace reads the tracepoints' formats from tracefs while it attaches,
//! and only then: where the host has none at /sys/kernel/tracing, storlab
//! mounts one for the attach, journaled ([`crate::provision::tracefs`]).

use std::io::{BufRead, BufReader, Read};
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use super::dump::{Dump, Event, Reader};
use super::script;
use super::trace::{Builder, Trace};
use crate::process::child::die_with_storlab;
use crate::process::watch::{self, Daemon, Trouble};
use crate::provision::hostlock;
use crate::provision::journal::{state_dir, Journal, Kinds, Resource};
use crate::provision::tracefs;

/// The program run.
pub const BPFTRACE: &str = "bpftrace";

/// How long bpftrace may take to compile and attach (2.5 s here).
const ATTACH_PATIENCE: Duration = Duration::from_secs(60);
/// How long to wait for a run's last mark's dump, and for bpftrace to end.
const END_PATIENCE: Duration = Duration::from_secs(15);
/// How often a wait on bpftrace looks at how it is faring.
const CHECK: Duration = Duration::from_millis(100);
/// Keys a map may hold (bpftrace's default, 4096, is too few for the
/// latency buckets of several devices): 2^14, each preallocated.
const MAP_KEYS: &str = "16384";

/// A bpftrace attached to devices, shared by the runs that trace them.
pub struct Tracer {
    child: Mutex<Child>,
    /// bpftrace as it registered to be watched ([`watch`]).
    daemon: Option<Daemon>,
    shared: Arc<Shared>,
    reader: Mutex<Option<JoinHandle<()>>>,
    stderr: Mutex<Option<JoinHandle<String>>>,
    version: String,
    devices: Vec<(u32, u32)>,
}

/// What the reader thread and the runs share.
#[derive(Default)]
struct Shared {
    state: Mutex<State>,
    changed: Condvar,
}

#[derive(Default)]
struct State {
    /// The run collecting dumps, if one is.
    run: Option<Collection>,
    /// The last mark bpftrace printed.
    seen: Option<u64>,
    /// The last reset bpftrace carried out.
    reset: Option<u64>,
    /// bpftrace's output ended (it exited, or storlab dropped it).
    ended: bool,
    /// Why storlab dropped it (stopped, gone silent), if it did.
    dropped: Option<String>,
    /// Why storlab stopped it for a device's rate ([`Tracer::give_up`]).
    given_up: Option<String>,
}

/// One run's collection: the dumps from mark `from` on, of `devices`.
struct Collection {
    from: u64,
    devices: Vec<u64>,
    builder: Builder,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn dumped(&self, d: Dump) {
        let mut st = self.lock();
        st.seen = Some(d.seq);
        if let Some(c) = st.run.as_mut().filter(|c| d.seq >= c.from) {
            c.builder.add(d.only(&c.devices));
        }
        drop(st);
        self.changed.notify_all();
    }

    fn reset(&self, n: u64) {
        self.lock().reset = Some(n);
        self.changed.notify_all();
    }

    fn ended(&self) {
        self.lock().ended = true;
        self.changed.notify_all();
    }
}

/// bpftrace's version (`bpftrace v0.17.0`), or why it cannot run.
pub fn version() -> Result<String, String> {
    if !crate::host::is_root() {
        return Err(
            "storlab is not running as root (the block tracepoints need CAP_BPF and CAP_PERFMON)"
                .into(),
        );
    }
    match Command::new(BPFTRACE).arg("--version").output() {
        Ok(o) if o.status.success() => Ok(String::from_utf8_lossy(&o.stdout).trim().to_string()),
        Ok(o) => Err(format!(
            "`bpftrace --version` failed: {}",
            String::from_utf8_lossy(&o.stderr).trim()
        )),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            Err("bpftrace is not installed (apt-get install bpftrace)".into())
        }
        Err(e) => Err(format!("starting bpftrace: {e}")),
    }
}

impl Tracer {
    /// Starts bpftrace on `devices` (major, minor) and waits until its
    /// probes are attached; why not when it cannot.
    pub fn start(devices: &[(u32, u32)]) -> Result<Tracer, String> {
        let version = version()?;
        super::probes_apart()?;
        let program = script::program(devices, std::process::id(), super::sampling::START);
        let mut cmd = Command::new(BPFTRACE);
        cmd.args(["-f", "json", "-e", &program])
            .env("BPFTRACE_MAP_KEYS_MAX", MAP_KEYS)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0);
        die_with_storlab(&mut cmd);
        let tracefs = Tracefs::mount()?;
        crate::console::echo(&cmd);
        let mut child = cmd.spawn().map_err(|e| format!("starting bpftrace: {e}"))?;
        let stdout = child.stdout.take().expect("piped");
        let mut err = child.stderr.take().expect("piped");
        let stderr = std::thread::spawn(move || {
            let mut s = String::new();
            let _ = err.read_to_string(&mut s);
            s
        });
        let (ready_tx, ready) = mpsc::channel();
        let shared = Arc::new(Shared::default());
        let to_runs = Arc::clone(&shared);
        let reader = std::thread::Builder::new()
            .name("blocktrace".into())
            .spawn(move || {
                let mut r = Reader::default();
                for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                    match r.line(&line) {
                        Some(Event::Ready) => {
                            let _ = ready_tx.send(());
                        }
                        Some(Event::Dump(d)) => to_runs.dumped(*d),
                        Some(Event::Reset(n)) => to_runs.reset(n),
                        None => {}
                    }
                }
                to_runs.ended();
            })
            .map_err(|e| format!("starting the bpftrace reader: {e}"))?;
        let daemon = Daemon::of(child.id(), BPFTRACE, watch::INSTRUMENTS, true);
        let t = Tracer {
            daemon,
            child: Mutex::new(child),
            shared,
            reader: Mutex::new(Some(reader)),
            stderr: Mutex::new(Some(stderr)),
            version,
            devices: devices.to_vec(),
        };
        let attached = ready.recv_timeout(ATTACH_PATIENCE);
        drop(tracefs);
        match attached {
            Ok(()) => {
                super::sampling::started(devices);
                Ok(t)
            }
            Err(e) => Err(t.end_with(&match e {
                RecvTimeoutError::Timeout => format!(
                    "bpftrace did not attach within {} s",
                    ATTACH_PATIENCE.as_secs()
                ),
                RecvTimeoutError::Disconnected => "bpftrace ended before attaching".into(),
            })),
        }
    }

    /// The devices it traces.
    pub fn devices(&self) -> &[(u32, u32)] {
        &self.devices
    }

    /// Starts a run's collection of `devices` from the next mark on;
    /// why not when bpftrace has ended. Returns the collection's first mark.
    pub fn open(&self, devices: &[(u32, u32)]) -> Result<u64, String> {
        // The counts start again for the run (and its preparation), so that
        // the maps, printed at every mark, hold one run's keys, not the
        // whole campaign's.
        let n = super::reset();
        let mut st = self.wait(|st| st.reset.is_some_and(|r| r >= n));
        if let Some(why) = st.dropped.clone() {
            return Err(why);
        }
        if st.ended {
            drop(st);
            return Err(self.end_with("bpftrace ended during the campaign"));
        }
        let from = super::next_mark();
        st.run = Some(Collection {
            from,
            devices: devices
                .iter()
                .map(|&(a, b)| script::kernel_dev(a, b))
                .collect(),
            builder: Builder::default(),
        });
        Ok(from)
    }

    /// Drops the collection that began at mark `from`, if it is still open.
    pub fn close(&self, from: u64) {
        self.shared.lock().run.take_if(|c| c.from == from);
    }

    /// Waits until bpftrace has printed the dump of mark `mark` (read its
    /// maps), it ended, or a while passed; the state then.
    fn wait_for(&self, mark: u64) -> MutexGuard<'_, State> {
        self.wait(|st| st.seen.is_some_and(|s| s >= mark))
    }

    /// Waits until `done`, bpftrace ended, or a while passed; the state
    /// then. A bpftrace found stopped (SIGSTOP) or gone, or that stays
    /// silent for [`END_PATIENCE`], is dropped for the rest of the campaign
    /// ([`Tracer::drop_stalled`]): no run waits on it again.
    fn wait(&self, done: impl Fn(&State) -> bool) -> MutexGuard<'_, State> {
        let deadline = Instant::now() + END_PATIENCE;
        let mut st = self.shared.lock();
        while !st.ended && !done(&st) {
            let trouble = self.daemon.as_ref().and_then(watch::trouble);
            let left = deadline.saturating_duration_since(Instant::now());
            let why = match trouble {
                Some(Trouble::Stopped) => {
                    Some("it is stopped (a signal such as SIGSTOP halted it)".to_string())
                }
                Some(Trouble::Dead) => Some("it is gone".to_string()),
                None if left.is_zero() => Some(format!(
                    "it printed nothing for {} s",
                    END_PATIENCE.as_secs()
                )),
                None => None,
            };
            if let Some(why) = why {
                drop(st);
                self.drop_stalled(&why);
                return self.shared.lock();
            }
            st = match self.shared.changed.wait_timeout(st, left.min(CHECK)) {
                Ok((g, _)) => g,
                Err(e) => e.into_inner().0,
            };
        }
        st
    }

    /// Drops bpftrace for the rest of the campaign: ended (SIGKILL when it
    /// is stopped and could not take SIGINT), and every run from now on
    /// says it is not traced, and why.
    fn drop_stalled(&self, why: &str) {
        let pid = self.child.lock().unwrap_or_else(|e| e.into_inner()).id();
        let said = format!("bpftrace (pid {pid}) stopped answering during the campaign: {why}; storlab dropped it, so this run and those after it are not traced");
        if self.dropping(said) {
            self.stop();
        }
    }

    /// Stops tracing for the rest of the campaign (a device too fast to
    /// trace within noise): every run from now on, the one going on
    /// included, says `why` in its block_trace fact. bpftrace is stopped
    /// on a thread of its own, so that the caller (the sampler) keeps its
    /// pace. Once; later calls do nothing.
    pub fn give_up(self: &Arc<Self>, why: String) {
        if self.dropping(why.clone()) {
            self.shared.lock().given_up = Some(why);
            let tracer = Arc::clone(self);
            std::thread::spawn(move || tracer.stop());
        }
    }

    /// Why tracing was stopped for a device's rate, if it was.
    pub fn given_up(&self) -> Option<String> {
        self.shared.lock().given_up.clone()
    }

    /// Marks bpftrace dropped, saying `why`, and wakes the runs waiting
    /// on it; false if it was dropped already.
    fn dropping(&self, why: String) -> bool {
        {
            let mut st = self.shared.lock();
            if st.dropped.is_some() {
                return false;
            }
            st.dropped = Some(why);
            st.ended = true;
        }
        self.shared.changed.notify_all();
        true
    }

    /// Waits until bpftrace has read its maps at mark `mark`: bpftrace
    /// reads them when its user space takes the mark, a moment after it
    /// was set (0.2 s on a loaded host), and a run's requests before that
    /// moment would count as before the run.
    pub fn settle(&self, mark: u64) {
        drop(self.wait_for(mark));
    }

    /// Waits for mark `last`'s dump and returns what the collection that
    /// began at mark `from` traced between its first mark and `last`.
    pub fn collect(&self, from: u64, last: u64) -> Result<Trace, String> {
        let mut st = self.wait_for(last);
        let done = st.seen.is_some_and(|s| s >= last);
        let run = st.run.take_if(|c| c.from == from);
        let ended = st.ended;
        let dropped = st.dropped.clone();
        drop(st);
        if let Some(why) = dropped.filter(|_| !done) {
            return Err(why);
        }
        if !done {
            let why = format!(
                "bpftrace printed no counts for mark {last} within {} s",
                END_PATIENCE.as_secs()
            );
            return Err(if ended {
                self.end_with(&format!("{why}: it ended"))
            } else {
                why
            });
        }
        match run {
            Some(c) => c.builder.build(&self.version),
            None => Err("bpftrace printed fewer than two marks' counts for the run".into()),
        }
    }

    /// Ends bpftrace and says `why`, with what bpftrace said last.
    fn end_with(&self, why: &str) -> String {
        self.stop();
        let said = self.join_stderr();
        let tail = crate::process::child::tail_lines(
            &said
                .lines()
                .filter(|l| !l.contains("RLIMIT_MEMLOCK"))
                .collect::<Vec<_>>()
                .join("\n"),
            3,
        );
        if tail.is_empty() {
            why.to_string()
        } else {
            format!("{why}: {tail}")
        }
    }

    fn join_stderr(&self) -> String {
        let handle = self.stderr.lock().unwrap_or_else(|e| e.into_inner()).take();
        handle.and_then(|h| h.join().ok()).unwrap_or_default()
    }

    /// Stops bpftrace (SIGINT, then SIGKILL if it has not ended after a
    /// while) and its reader; again, nothing.
    pub fn stop(&self) {
        {
            let mut child = self.child.lock().unwrap_or_else(|e| e.into_inner());
            let stopped = self.daemon.as_ref().and_then(watch::trouble) == Some(Trouble::Stopped);
            match child.try_wait() {
                // A stopped bpftrace cannot take SIGINT.
                Ok(None) if stopped => {
                    let _ = child.kill();
                    let _ = child.wait();
                }
                Ok(None) => interrupt(&mut child),
                _ => {}
            }
        }
        let reader = self.reader.lock().unwrap_or_else(|e| e.into_inner()).take();
        if let Some(h) = reader {
            let _ = h.join();
        }
    }
}

impl std::fmt::Debug for Tracer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tracer")
            .field("version", &self.version)
            .field("devices", &self.devices)
            .finish_non_exhaustive()
    }
}

/// SIGINT, then SIGKILL if bpftrace has not ended after a while.
fn interrupt(child: &mut Child) {
    let pid = child.id() as libc::pid_t;
    // SAFETY: kill has no memory-safety preconditions; pid is our child's.
    unsafe { libc::kill(pid, libc::SIGINT) };
    let deadline = Instant::now() + END_PATIENCE;
    while Instant::now() < deadline {
        if let Ok(Some(_)) = child.try_wait() {
            return;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = child.kill();
    let _ = child.wait();
}

impl Drop for Tracer {
    fn drop(&mut self) {
        self.stop();
        self.join_stderr();
    }
}

/// tracefs for one attach ([`tracefs`]): the host's, or storlab's, held
/// with the shared attach lock and journaled (a journal of its own in the
/// state directory) before it is mounted or used; unmounted on drop by the
/// last storlab attaching, then released.
struct Tracefs {
    lock: Option<std::fs::File>,
    journaled: Option<(Journal, u64)>,
}

impl Tracefs {
    fn mount() -> Result<Tracefs, String> {
        if tracefs::host_has_tracefs() {
            return Ok(Tracefs {
                lock: None,
                journaled: None,
            });
        }
        let lock = hostlock::open(tracefs::LOCK).map_err(|e| format!("{e:#}"))?;
        hostlock::flock(&lock, libc::LOCK_SH)
            .map_err(|e| format!("locking {}: {e}", hostlock::path(tracefs::LOCK).display()))?;
        let journal = Journal::at(
            state_dir().join(format!("tracefs-{}.journal", std::process::id())),
            Kinds::NONE,
        );
        let id = journal
            .acquire(&Resource::Tracefs)
            .map_err(|e| format!("journaling the tracefs mount: {e:#}"))?;
        let held = Tracefs {
            lock: Some(lock),
            journaled: Some((journal, id)),
        };
        tracefs::mount()?;
        Ok(held)
    }
}

impl Drop for Tracefs {
    fn drop(&mut self) {
        let Some(lock) = self.lock.take() else {
            return;
        };
        // Another storlab attaching (its own shared lock, its own journal
        // line) unmounts it after.
        let last = hostlock::flock(&lock, libc::LOCK_EX | libc::LOCK_NB).is_ok();
        if last && !tracefs::unmount() {
            return; // still mounted: left in the journal, for cleanup
        }
        if let Some((journal, id)) = self.journaled.take() {
            let _ = journal.release(id);
            let _ = journal.finish();
        }
    }
}
