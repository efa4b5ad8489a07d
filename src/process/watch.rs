//! The daemons a campaign's runs rely on, and how each is faring. A daemon
//! registers itself where storlab starts it (or finds it serving): its pid
//! and start time (a pid reused since is not it), its program, what it
//! serves — a target, by name, or the campaign's instruments ([`INSTRUMENTS`]:
//! the block tracer, which watches its own [`Daemon`] without registering
//! it) — and whether storlab started it; it is forgotten
//! where storlab stops it on purpose (a remount restarts it and registers
//! it anew). While runs go, whoever runs them asks [`faults`] for the
//! daemons serving a run's targets: one that died, or that a signal
//! stopped (SIGSTOP: every request to it then waits), is a fault, said in
//! words. This module only watches; what a fault does to a run (it fails,
//! the target is degraded, a stopped daemon storlab started is ended so
//! that what waits on it returns) is the runner's, and an instrument's
//! fault is its owner's to act on (the tracer is dropped).

use std::sync::Mutex;

use super::stat;

/// What the campaign's instruments serve.
pub const INSTRUMENTS: &str = "";

/// What a workload's own server serves (PostgreSQL for pgbench, started
/// for each run): the runs on a target, one at a time ([`runs_on`]).
const RUNS_ON: &str = "runs on ";

/// What a workload's own server, started for a run on target `name`,
/// serves: a fault of it fails that run, not the target.
pub fn runs_on(name: &str) -> String {
    format!("{RUNS_ON}{name}")
}

/// A daemon as it registered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Daemon {
    pub pid: u32,
    /// Its start time when it registered ([`stat::Stat::start`]).
    pub start: u64,
    pub program: String,
    /// The target it serves, or [`INSTRUMENTS`].
    pub serves: String,
    /// Whether storlab started it (else it found it serving: the host's).
    pub started_by_storlab: bool,
}

impl Daemon {
    /// `pid`, running `program`, as it is now (its start time), serving
    /// `serves`; not registered (an instrument watches its own with
    /// [`trouble`]). Nothing when `pid` is gone.
    pub fn of(pid: u32, program: &str, serves: &str, started_by_storlab: bool) -> Option<Daemon> {
        Some(Daemon {
            pid,
            start: stat::of(pid)?.start,
            program: program.to_string(),
            serves: serves.to_string(),
            started_by_storlab,
        })
    }
}

/// What is wrong with a daemon.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Trouble {
    /// Gone, a zombie, or its pid now another process's.
    Dead,
    /// Stopped by a signal (SIGSTOP, SIGTSTP) or held by a tracer.
    Stopped,
}

/// A daemon in trouble.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fault {
    pub daemon: Daemon,
    pub trouble: Trouble,
}

impl Fault {
    /// Whether it is the fault of a server a workload started for the run
    /// ([`runs_on`]), not of one serving the target.
    pub fn of_a_runs_server(&self) -> bool {
        self.daemon.serves.starts_with(RUNS_ON)
    }

    /// `qemu-storage-daemon (pid 4242) serving vm died`.
    pub fn words(&self) -> String {
        let d = &self.daemon;
        let whose = match (d.serves.as_str(), d.serves.strip_prefix(RUNS_ON)) {
            (INSTRUMENTS, _) => String::new(),
            (_, Some(t)) => format!(" serving the run on `{t}`"),
            (t, None) => format!(" serving `{t}`"),
        };
        let what = match self.trouble {
            Trouble::Dead => "died (it is gone)",
            Trouble::Stopped => {
                "is stopped (a signal such as SIGSTOP halted it: every request to it waits)"
            }
        };
        format!("{} (pid {}){whose} {what}", d.program, d.pid)
    }
}

static REGISTERED: Mutex<Vec<Daemon>> = Mutex::new(Vec::new());

fn registered() -> std::sync::MutexGuard<'static, Vec<Daemon>> {
    REGISTERED.lock().unwrap_or_else(|e| e.into_inner())
}

/// Registers `pid`, running `program`, as serving `serves` (a target's
/// name, or [`INSTRUMENTS`]); it replaces what `program` registered for
/// `serves` before (a daemon started again). Returns it as registered;
/// nothing when `pid` is gone.
pub fn register(pid: u32, program: &str, serves: &str, started_by_storlab: bool) -> Option<Daemon> {
    let d = Daemon::of(pid, program, serves, started_by_storlab)?;
    let mut all = registered();
    all.retain(|d| !(d.serves == serves && d.program == program));
    all.push(d.clone());
    Some(d)
}

/// Daemons found dead as storlab came to stop them ([`forget`]).
static FALLEN: Mutex<Vec<Fault>> = Mutex::new(Vec::new());

fn fallen() -> std::sync::MutexGuard<'static, Vec<Fault>> {
    FALLEN.lock().unwrap_or_else(|e| e.into_inner())
}

/// Forgets what `program` registered for `serves`: storlab stops it on
/// purpose. One already dead is kept as a fault ([`take_fallen`]): it died
/// before storlab came to stop it (a server whose client failed at once,
/// a daemon gone before a remount).
pub fn forget(program: &str, serves: &str) {
    let gone: Vec<Daemon> = {
        let mut all = registered();
        let (gone, kept) = all
            .drain(..)
            .partition(|d| d.serves == serves && d.program == program);
        *all = kept;
        gone
    };
    let dead = gone.into_iter().filter_map(|daemon| {
        (trouble(&daemon) == Some(Trouble::Dead)).then_some(Fault {
            daemon,
            trouble: Trouble::Dead,
        })
    });
    fallen().extend(dead);
}

/// The daemons serving any of `targets` found dead as storlab came to stop
/// them, each once.
pub fn take_fallen(targets: &[String]) -> Vec<Fault> {
    let mut all = fallen();
    let (mine, rest) = all
        .drain(..)
        .partition(|f: &Fault| targets.contains(&f.daemon.serves));
    *all = rest;
    mine
}

/// Forgets every daemon serving `serves` (its target is torn down).
pub fn forget_all(serves: &str) {
    registered().retain(|d| d.serves != serves);
}

/// How `d` is faring now; `None` while it runs.
pub fn trouble(d: &Daemon) -> Option<Trouble> {
    match stat::of(d.pid) {
        Some(s) if s.start == d.start && !s.zombie() => s.stopped().then_some(Trouble::Stopped),
        _ => Some(Trouble::Dead),
    }
}

/// The faults of the daemons serving any of `targets` (names).
pub fn faults(targets: &[String]) -> Vec<Fault> {
    let serving: Vec<Daemon> = registered()
        .iter()
        .filter(|d| targets.contains(&d.serves))
        .cloned()
        .collect();
    let faults: Vec<Fault> = serving
        .into_iter()
        .filter_map(|daemon| trouble(&daemon).map(|trouble| Fault { daemon, trouble }))
        .collect();
    // One storlab stopped on purpose meanwhile was forgotten first.
    let still = registered();
    faults
        .into_iter()
        .filter(|f| still.contains(&f.daemon))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sleeper() -> std::process::Child {
        std::process::Command::new("sleep")
            .arg("30")
            .spawn()
            .unwrap()
    }

    #[test]
    fn a_daemon_stopped_then_killed_is_a_fault_and_a_forgotten_one_is_not() {
        let mut child = sleeper();
        let pid = child.id();
        let serves = format!("watch-test-{pid}");
        register(pid, "sleep", &serves, true);
        let mine = [serves.clone()];
        assert!(faults(&mine).is_empty());
        // SAFETY: signals to our own child.
        unsafe { libc::kill(pid as i32, libc::SIGSTOP) };
        let t0 = std::time::Instant::now();
        while faults(&mine).is_empty() && t0.elapsed().as_secs() < 5 {
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        let f = faults(&mine);
        assert_eq!(f.len(), 1);
        assert_eq!(f[0].trouble, Trouble::Stopped);
        assert!(f[0]
            .words()
            .contains(&format!("sleep (pid {pid}) serving `{serves}` is stopped")));
        let _ = child.kill();
        let _ = child.wait();
        assert_eq!(faults(&mine)[0].trouble, Trouble::Dead);
        assert!(faults(&["another".to_string()]).is_empty());
        // Found dead as storlab comes to stop it: a fault, said once.
        forget("sleep", &serves);
        assert!(faults(&mine).is_empty());
        assert_eq!(take_fallen(&mine)[0].daemon.pid, pid);
        assert!(take_fallen(&mine).is_empty());
    }

    #[test]
    fn a_daemon_stopped_on_purpose_while_it_runs_is_no_fault() {
        let mut child = sleeper();
        let pid = child.id();
        let serves = format!("watch-test-{pid}");
        register(pid, "sleep", &serves, true);
        forget("sleep", &serves);
        let _ = child.kill();
        let _ = child.wait();
        let mine = [serves];
        assert!(faults(&mine).is_empty() && take_fallen(&mine).is_empty());
    }
}
