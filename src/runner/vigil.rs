//! What a run does with the daemons it relies on ([`crate::process::watch`]):
//! the daemons serving its target and every target beneath it are looked
//! at before it starts and every [`POLL`] while it goes. One that died
//! fails the run, in words, and the target takes no more runs (it is
//! degraded: what is measured on it now is not the configuration asked
//! for). One that a signal stopped is given [`STOPPED_GRACE`] to go on (a
//! debugger's moment); still stopped, it fails the run the same way, and
//! if storlab started it, storlab ends it: every request to it would wait
//! for good, and the workload with them.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::process::watch::{self, Fault, Trouble};

/// How often a running run's daemons are looked at.
pub const POLL: Duration = Duration::from_millis(200);

/// How long a daemon may stay stopped before it counts as a fault.
pub const STOPPED_GRACE: Duration = Duration::from_secs(5);

/// A fault that fails a run, in words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    pub words: String,
    /// A daemon of the target (not a server the workload started for the
    /// run): the target is degraded and takes no more runs.
    pub degrades: bool,
}

/// `f`, said in `words`.
fn found(f: &Fault, words: String) -> Found {
    Found {
        words,
        degrades: !f.of_a_runs_server(),
    }
}

/// Why the daemons serving `serving` (target names) fail a run now, if
/// they do: a dead one at once, a stopped one once it stayed stopped for
/// [`STOPPED_GRACE`] (waited for here).
pub fn fault_now(serving: &[String]) -> Option<Found> {
    let mut stopped_since: Option<Instant> = None;
    loop {
        let mut faults = watch::take_fallen(serving);
        faults.extend(watch::faults(serving));
        if let Some(dead) = faults.iter().find(|f| f.trouble == Trouble::Dead) {
            return Some(found(dead, dead.words()));
        }
        let stopped = faults.first()?;
        let since = *stopped_since.get_or_insert_with(Instant::now);
        if since.elapsed() >= STOPPED_GRACE {
            return Some(found(stopped, end_stopped(stopped)));
        }
        std::thread::sleep(POLL);
    }
}

/// Says a stopped daemon's fault, ending it first if storlab started it
/// (and it is still that process, still stopped).
fn end_stopped(f: &Fault) -> String {
    let d = &f.daemon;
    if !d.started_by_storlab {
        return format!(
            "{}, for {} s; it is not storlab's, so storlab leaves it (`kill -CONT {}` lets it go on)",
            f.words(),
            STOPPED_GRACE.as_secs(),
            d.pid
        );
    }
    if watch::trouble(d) == Some(Trouble::Stopped) {
        // SAFETY: kill has no memory preconditions; the pid was checked to
        // be the daemon storlab started (same start time).
        unsafe { libc::kill(d.pid as libc::pid_t, libc::SIGKILL) };
    }
    format!(
        "{}, for {} s: storlab ended it, so that what waited on it returns",
        f.words(),
        STOPPED_GRACE.as_secs()
    )
}

/// Watches a run's daemons while it goes, on a thread of its own.
pub struct Vigil {
    serving: Vec<String>,
    done: Arc<AtomicBool>,
    found: Arc<Mutex<Option<Found>>>,
    thread: Option<JoinHandle<()>>,
}

impl Vigil {
    /// Starts watching the daemons serving `serving` (target names).
    pub fn start(serving: Vec<String>) -> Vigil {
        let done = Arc::new(AtomicBool::new(false));
        let found = Arc::new(Mutex::new(None));
        let (d, f, watched) = (Arc::clone(&done), Arc::clone(&found), serving.clone());
        let thread = std::thread::Builder::new()
            .name("vigil".into())
            .spawn(move || {
                while !d.load(Ordering::SeqCst) {
                    if let Some(why) = fault_now(&watched) {
                        *f.lock().unwrap_or_else(|e| e.into_inner()) = Some(why);
                        return;
                    }
                    // Woken by `end` at once: a run does not wait out a poll.
                    std::thread::park_timeout(POLL);
                }
            })
            .ok();
        Vigil {
            serving,
            done,
            found,
            thread,
        }
    }

    /// Stops watching; the fault found, if any (also of a daemon found
    /// dead as the run stopped it, after the last look).
    pub fn end(mut self) -> Option<Found> {
        self.done.store(true, Ordering::SeqCst);
        if let Some(t) = self.thread.take() {
            t.thread().unpark();
            let _ = t.join();
        }
        let seen = self.found.lock().unwrap_or_else(|e| e.into_inner()).take();
        // Taken whether or not the watch saw it first: a run's server that
        // died during the run and was then stopped by the workload must not
        // fail the next run too ("not run: postgres … died").
        let fallen = watch::take_fallen(&self.serving);
        seen.or_else(|| {
            let dead = fallen.first()?;
            Some(found(dead, dead.words()))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A run's server killed during the run, seen by the watch, then
    /// stopped by the workload (which finds it dead): it fails that run
    /// and leaves nothing for the next run's look.
    #[test]
    fn a_runs_server_seen_dead_and_then_stopped_fails_that_run_only() {
        let mut child = std::process::Command::new("sleep")
            .arg("60")
            .spawn()
            .unwrap();
        let pid = child.id();
        let serves = watch::runs_on(&format!("vigil-test-{pid}"));
        watch::register(pid, "sleep", &serves, true);
        let vigil = Vigil::start(vec![serves.clone()]);
        child.kill().unwrap();
        child.wait().unwrap();
        let t0 = Instant::now();
        while vigil.found.lock().unwrap().is_none() && t0.elapsed() < Duration::from_secs(10) {
            std::thread::sleep(POLL);
        }
        watch::forget("sleep", &serves); // the workload stops its server
        let found = vigil.end().expect("the run's fault");
        assert!(!found.degrades, "{found:?}");
        assert!(
            fault_now(&[serves]).is_none(),
            "the next run is not failed by it"
        );
    }

    #[test]
    fn a_daemon_storlab_started_that_stays_stopped_is_ended_and_said() {
        let mut child = std::process::Command::new("sleep")
            .arg("60")
            .spawn()
            .unwrap();
        let pid = child.id();
        let serves = format!("vigil-test-{pid}");
        watch::register(pid, "sleep", &serves, true);
        let vigil = Vigil::start(vec![serves.clone()]);
        // SAFETY: a signal to our own child.
        unsafe { libc::kill(pid as i32, libc::SIGSTOP) };
        let t0 = Instant::now();
        let status = child.wait().unwrap();
        let waited = t0.elapsed();
        let found = vigil.end().expect("a fault");
        assert!(found.degrades);
        let why = found.words;
        watch::forget("sleep", &serves);
        assert!(
            why.contains(&format!("sleep (pid {pid}) serving `{serves}` is stopped")),
            "{why}"
        );
        assert!(why.contains("storlab ended it"), "{why}");
        assert!(
            waited >= STOPPED_GRACE - POLL && waited < STOPPED_GRACE * 3,
            "{waited:?}"
        );
        assert!(!status.success());
    }
}
