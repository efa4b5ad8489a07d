//! Daemons storlab starts when the host's are not running (zfs-fuse,
//! glusterd, rpcbind): started with a pid file storlab chose, stopped only
//! by that pid, and only if the process there is still the program started
//! and nothing uses it any more (what uses it, its kind says: [`Users`]).
//!
//! Campaigns share such a daemon through claims ([`claim`]); the last
//! campaign to release its claim stops a daemon storlab started, whoever
//! started it: the starter records its pid file host-wide
//! (`storlab-PROGRAM.started` beside the lock), so that a campaign that
//! found it running can stop it when it is the last to leave
//! ([`release`]). A daemon the host runs has no such record and is never
//! stopped.

use std::os::unix::ffi::OsStringExt;
use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};

use super::undo::Undone;
use super::{cmd, hostlock};

/// Starts `program args…` (which daemonizes and writes `pidfile`) and waits
/// until `ready()` holds. Returns the daemon's pid.
pub fn start(
    program: &str,
    args: &[String],
    pidfile: &Path,
    ready: impl Fn() -> bool,
    users: Users,
) -> Result<u32> {
    make_parent(pidfile)?;
    cmd::run(program, args).with_context(|| format!("starting {program}"))?;
    await_ready(program, pidfile, ready, users)
}

/// Starts `program args…`, which stays in the foreground and writes no
/// pid file (rpcbind -f), in a process group of its own (a Ctrl-C of the
/// campaign does not reach it), writes its pid to `pidfile` and waits
/// until `ready()` holds. Returns the daemon's pid.
pub fn start_foreground(
    program: &str,
    args: &[String],
    pidfile: &Path,
    ready: impl Fn() -> bool,
    users: Users,
) -> Result<u32> {
    use std::os::unix::process::CommandExt;
    make_parent(pidfile)?;
    let path = cmd::which(program).with_context(|| format!("{program} is not installed"))?;
    let child = std::process::Command::new(path)
        .args(args)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .process_group(0)
        .spawn()
        .with_context(|| format!("starting {program}"))?;
    std::fs::write(pidfile, format!("{}\n", child.id()))
        .with_context(|| format!("writing {}", pidfile.display()))?;
    await_ready(program, pidfile, ready, users)
}

fn make_parent(pidfile: &Path) -> Result<()> {
    if let Some(dir) = pidfile.parent() {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    Ok(())
}

/// Waits (30 s at most) until the daemon wrote its pid and `ready()`
/// holds, then records what it served from the start (`users`) and,
/// host-wide, that storlab started it.
fn await_ready(
    program: &str,
    pidfile: &Path,
    ready: impl Fn() -> bool,
    users: Users,
) -> Result<u32> {
    let t0 = Instant::now();
    while t0.elapsed() < Duration::from_secs(30) {
        if cmd::provisioning_stopped() {
            bail!("interrupted while waiting for {program} to become ready");
        }
        if let Some(pid) = read_pid(pidfile) {
            if ready() {
                // What the daemon serves from the start (zfs-fuse imports
                // the pools in its cache) depends on no campaign; what
                // appears later may belong to another one.
                let present = users().unwrap_or_default().join("\n");
                std::fs::write(present_file(pidfile), present)
                    .with_context(|| format!("writing {}", present_file(pidfile).display()))?;
                std::fs::write(
                    started_record(program),
                    pidfile.as_os_str().as_encoded_bytes(),
                )
                .with_context(|| format!("writing {}", started_record(program).display()))?;
                return Ok(pid);
            }
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    bail!(
        "{program} did not become ready within 30 s (pid file {}); see its log",
        pidfile.display()
    )
}

/// A campaign's claim on a daemon it relies on, whoever started it: a
/// shared flock on a host-wide lock file, taken before the campaign looks
/// for the daemon and held until its own volumes or pools are gone. The
/// campaign that started the daemon stops it only if it can then lock the
/// file exclusively — no other campaign holds a claim, not even one that
/// found the daemon running and has not created its volume yet.
pub struct Claim(#[allow(dead_code)] std::fs::File);

/// Claims `program` for this campaign (waits while another campaign is
/// stopping it).
pub fn claim(program: &str) -> Result<Claim> {
    let f = hostlock::open(program)?;
    hostlock::flock(&f, libc::LOCK_SH)
        .with_context(|| format!("locking {}", hostlock::path(program).display()))?;
    Ok(Claim(f))
}

/// The exclusive lock when no campaign claims `program`; `Err` names why not.
fn exclusive(program: &str) -> std::result::Result<std::fs::File, String> {
    match hostlock::try_exclusive(program) {
        Ok(Some(f)) => Ok(f),
        Ok(None) => Err("another campaign relies on it".into()),
        Err(e) => Err(format!("{e:#}")),
    }
}

/// Where `start` records, host-wide, the pid file of the `program` storlab
/// started, for whichever campaign is the last to release its claim.
fn started_record(program: &str) -> std::path::PathBuf {
    hostlock::path(program).with_extension("started")
}

/// After a campaign released its claim on `program` (its volumes or
/// pools are gone): when no campaign claims it any more, stops the daemon
/// if storlab started it — this campaign or another that has ended since,
/// whose own teardown had to leave it running for this one. Kept (another
/// claim, something still served) is no error: the last to leave stops it.
pub fn stop_if_last(program: &str, users: Users) -> Result<()> {
    let Ok(bytes) = std::fs::read(started_record(program)) else {
        return Ok(()); // the host's daemon, or already stopped
    };
    let pidfile = std::path::PathBuf::from(std::ffi::OsString::from_vec(bytes));
    stop(program, &pidfile, users).map(|_| ())
}

/// What still depends on a shared daemon (the volumes glusterd serves, the
/// pools of zfs-fuse, the programs registered with rpcbind), as its kind
/// lists them: an error when it cannot be asked, since an empty answer
/// must mean "nothing", never "could not tell".
pub type Users<'a> = &'a dyn Fn() -> Result<Vec<String>>;

/// Where `start` lists what the daemon served from the start.
fn present_file(pidfile: &Path) -> std::path::PathBuf {
    pidfile.with_extension("present")
}

/// The pid in `pidfile`; none for 0, which `kill` would take for the
/// caller's whole process group.
pub fn read_pid(pidfile: &Path) -> Option<u32> {
    std::fs::read_to_string(pidfile)
        .ok()?
        .trim()
        .parse()
        .ok()
        .filter(|p| *p > 0)
}

pub use crate::process::stat::alive_as;

/// The live `program` whose command line names `pidfile` as an argument
/// (`glusterd -p PIDFILE`, `zfs-fuse --pidfile PIDFILE`): the daemon
/// started with it, whether or not it has written it yet.
fn named_with(program: &str, pidfile: &Path) -> Option<u32> {
    let want = pidfile.as_os_str().as_encoded_bytes();
    std::fs::read_dir("/proc").ok()?.flatten().find_map(|e| {
        let pid: u32 = e.file_name().to_str()?.parse().ok()?;
        let cmdline = std::fs::read(e.path().join("cmdline")).ok()?;
        let named = cmdline.split(|&b| b == 0).any(|a| a == want);
        (named && alive_as(pid, program)).then_some(pid)
    })
}

/// A daemon known by the pid file it was started with (`flag pidfile` on
/// its command line: qemu-storage-daemon's `--pidfile`, ganesha.nfsd's
/// `-p`): found, told apart from a pid reused since, and stopped by that
/// pid only.
pub struct PidFiled<'a> {
    pub program: &'a str,
    pub flag: &'a str,
    pub pidfile: &'a Path,
}

impl PidFiled<'_> {
    /// The pid in the pid file, if it names one.
    pub fn pid(&self) -> Option<u32> {
        read_pid(self.pidfile)
    }

    /// Whether `pid` is a live `program` started with this pid file (its
    /// command line says so): a pid reused by another process since, or
    /// the host's own daemon, is not.
    pub fn is(&self, pid: u32) -> bool {
        let Ok(cmdline) = std::fs::read(format!("/proc/{pid}/cmdline")) else {
            return false;
        };
        let args: Vec<&[u8]> = cmdline.split(|&b| b == 0).collect();
        let named = args
            .first()
            .and_then(|a| Path::new(std::str::from_utf8(a).unwrap_or("")).file_name())
            .is_some_and(|n| n == self.program);
        let want = self.pidfile.as_os_str().as_encoded_bytes();
        let flag = self.flag.as_bytes();
        let with_pidfile = args.windows(2).any(|w| w[0] == flag && w[1] == want);
        named && with_pidfile && !zombie(pid)
    }

    /// Stops it if it still runs (SIGTERM; SIGKILL after `grace`), then
    /// removes the pid file. Succeeds when it is already gone.
    pub fn stop(&self, grace: Duration) -> Result<()> {
        if let Some(pid) = self.pid().filter(|p| self.is(*p)) {
            let wait = |limit: Duration| {
                let t0 = Instant::now();
                while self.is(pid) && t0.elapsed() < limit {
                    std::thread::sleep(Duration::from_millis(50));
                }
            };
            signal(pid, libc::SIGTERM);
            wait(grace);
            if self.is(pid) {
                signal(pid, libc::SIGKILL);
                wait(Duration::from_secs(5));
            }
            if self.is(pid) {
                bail!(
                    "{} (pid {pid}) does not stop; kill it by hand (`kill -9 {pid}`)",
                    self.program
                );
            }
        }
        match std::fs::remove_file(self.pidfile) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                Err(e).with_context(|| format!("removing {}", self.pidfile.display()))
            }
            _ => Ok(()),
        }
    }
}

/// Whether `pid` is a zombie, or gone.
pub fn zombie(pid: u32) -> bool {
    !crate::process::stat::of(pid).is_some_and(|s| !s.zombie())
}

/// Stops the daemon whose pid is in `pidfile`, if it still runs `program`
/// and nothing else depends on it: another campaign may have found it
/// running and built its volumes or pools on it, and stopping it under them
/// would break that campaign. It is then left running, and said so: the
/// resource stays in the journal of the campaign that started it (with its
/// pid file), so that `storlab cleanup` stops it once nothing uses it. What
/// the daemon served from its start (pools zfs-fuse imported from its
/// cache) does not count: it was there without the daemon before. When
/// what it serves cannot be listed, nobody can tell that it is unused, and
/// it is kept too.
pub fn stop(program: &str, pidfile: &Path, users: Users) -> Result<Undone> {
    // A daemon killed with its campaign before it wrote its pid file (or
    // whose pid file went with its directory) is found by the pid file its
    // command line names.
    let Some(pid) = read_pid(pidfile).or_else(|| named_with(program, pidfile)) else {
        let _ = std::fs::remove_file(present_file(pidfile));
        return Ok(Undone::Gone); // never started, or already stopped and cleaned
    };
    if alive_as(pid, program) {
        // Held until the daemon is stopped: a campaign starting meanwhile
        // waits, then finds it gone and starts its own.
        let _lock = match exclusive(program) {
            Ok(lock) => lock,
            Err(why) => return Ok(kept(program, pid, &why)),
        };
        let present = std::fs::read_to_string(present_file(pidfile)).unwrap_or_default();
        let users: Vec<String> = match users() {
            Ok(u) => u
                .into_iter()
                .filter(|u| !present.lines().any(|p| p == u))
                .collect(),
            Err(e) => {
                let why = format!("cannot tell whether anything still uses it ({e:#})");
                return Ok(kept(program, pid, &why));
            }
        };
        if !users.is_empty() {
            let why = format!("{} still use it", users.join(", "));
            return Ok(kept(program, pid, &why));
        }
        signal(pid, libc::SIGTERM);
        let t0 = Instant::now();
        while alive_as(pid, program) && t0.elapsed() < Duration::from_secs(20) {
            std::thread::sleep(Duration::from_millis(100));
        }
        if alive_as(pid, program) {
            signal(pid, libc::SIGKILL);
            std::thread::sleep(Duration::from_millis(300));
        }
        if alive_as(pid, program) {
            bail!("{program} (pid {pid}) does not stop; kill it by hand");
        }
    }
    let _ = std::fs::remove_file(present_file(pidfile));
    let _ = std::fs::remove_file(pidfile);
    // The record names this pid file: nothing is left to stop.
    if std::fs::read(started_record(program))
        .is_ok_and(|b| b == pidfile.as_os_str().as_encoded_bytes())
    {
        let _ = std::fs::remove_file(started_record(program));
    }
    Ok(Undone::Gone)
}

fn kept(program: &str, pid: u32, why: &str) -> Undone {
    Undone::Kept(format!(
        "leaving {program} (pid {pid}) running: {why}; `storlab cleanup` stops it once nothing uses it"
    ))
}

/// The names in a listing of what a daemon serves, one a line (`gluster
/// volume list`, `zpool list -H -o name`), without the line that says
/// there are none (it begins with `none`).
pub fn names_listed(listing: &str, none: &str) -> Vec<String> {
    listing
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with(none))
        .map(String::from)
        .collect()
}

/// Ends every process `find` names: SIGTERM, then, for those still
/// there after `grace`, SIGKILL and five seconds more. The pids `find`
/// still names after that (none, unless one cannot be killed).
pub fn end_all(find: impl Fn() -> Vec<u32>, grace: Duration) -> Vec<u32> {
    for (sig, patience) in [
        (libc::SIGTERM, grace),
        (libc::SIGKILL, Duration::from_secs(5)),
    ] {
        let pids = find();
        if pids.is_empty() {
            break;
        }
        for p in pids {
            signal(p, sig);
        }
        let t0 = Instant::now();
        while !find().is_empty() && t0.elapsed() < patience {
            std::thread::sleep(Duration::from_millis(100));
        }
    }
    find()
}

pub fn signal(pid: u32, sig: libc::c_int) {
    // SAFETY: kill has no memory preconditions; pid was checked to be ours.
    unsafe {
        libc::kill(pid as libc::pid_t, sig);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn volume_and_pool_listings_name_their_users() {
        let none = |t: &str| names_listed(t, "No volumes present").is_empty();
        assert!(none("No volumes present in cluster\n") && none(""));
        assert_eq!(
            names_listed("storlab-41-gl\nstorlab-42-gl\n", "No volumes present"),
            ["storlab-41-gl", "storlab-42-gl"]
        );
        assert_eq!(names_listed("tank\n", "no pools"), ["tank"]);
    }

    #[test]
    fn a_pid_running_something_else_is_not_stopped() {
        let dir = tempfile::tempdir().unwrap();
        let pidfile = dir.path().join("x.pid");
        std::fs::write(&pidfile, format!("{}\n", std::process::id())).unwrap();
        assert!(!alive_as(std::process::id(), "zfs-fuse"));
        // we are still alive
        let none = || Ok(Vec::new());
        assert_eq!(stop("zfs-fuse", &pidfile, &none).unwrap(), Undone::Gone);
        assert!(!pidfile.exists());
        assert_eq!(stop("zfs-fuse", &pidfile, &none).unwrap(), Undone::Gone);
    }
}
