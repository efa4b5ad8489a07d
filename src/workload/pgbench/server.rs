//! A running PostgreSQL server as a guard: `Server::start` spawns the
//! postmaster on the cluster (its own process group, the server account,
//! a parent-death signal so that even a SIGKILLed storlab leaves no server
//! behind) and waits until postmaster.pid says "ready"; `stop` — also
//! called by `Drop`, so errors and SIGINT stop it too — asks for a fast
//! shutdown and escalates to immediate, then SIGKILL.

use std::os::unix::process::CommandExt;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};

use super::binaries::Binaries;
use super::cluster::Cluster;
use super::exec::{signal, tail};
use crate::process::{watch, StopFlag};

/// What the server registers as to be watched: the postmaster.
const POSTGRES: &str = "postgres";

const START_TIMEOUT: Duration = Duration::from_secs(120);
const FAST_SHUTDOWN: Duration = Duration::from_secs(120);
const IMMEDIATE_SHUTDOWN: Duration = Duration::from_secs(10);

pub struct Server {
    child: Option<Child>,
    cluster: Cluster,
    /// What it serves, watched as such: the runs on its target
    /// ([`watch::runs_on`]).
    serves: String,
}

impl Server {
    /// Starts the server and waits until it accepts connections; it
    /// serves the runs on target `serves`, and is watched while they go
    /// ([`watch`]).
    pub fn start(
        cluster: &Cluster,
        bins: &Binaries,
        stop: &StopFlag,
        serves: &str,
    ) -> Result<Server> {
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(cluster.log())
            .with_context(|| format!("opening server log {}", cluster.log().display()))?;
        let log2 = log
            .try_clone()
            .context("duplicating the server log handle")?;
        let mut cmd = bins.command(
            &bins.postgres,
            cluster.account.as_ref(),
            Some(&cluster.root),
        )?;
        cmd.arg("-D")
            .arg(cluster.data())
            .stdin(Stdio::null())
            .stdout(log)
            .stderr(log2)
            .process_group(0);
        // SAFETY: prctl is async-signal-safe and touches no memory of ours.
        unsafe {
            cmd.pre_exec(|| {
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGINT);
                Ok(())
            });
        }
        crate::console::echo(&cmd);
        let child = cmd.spawn().with_context(|| {
            format!(
                "starting {} -D {}",
                bins.postgres.display(),
                cluster.data().display()
            )
        })?;
        let pid = child.id();
        let mut server = Server {
            child: Some(child),
            cluster: cluster.clone(),
            serves: watch::runs_on(serves),
        };
        server.wait_ready(stop)?;
        watch::register(pid, POSTGRES, &server.serves, true);
        Ok(server)
    }

    fn wait_ready(&mut self, stop: &StopFlag) -> Result<()> {
        let t0 = Instant::now();
        let pidfile = self.cluster.data().join("postmaster.pid");
        loop {
            let child = self.child.as_mut().context("the server was stopped")?;
            if let Some(status) = child.try_wait()? {
                self.child = None;
                bail!(
                    "the PostgreSQL server exited at start ({status}); its log {} says: {}",
                    self.cluster.log().display(),
                    self.log_tail()
                );
            }
            let ready = std::fs::read_to_string(&pidfile)
                .map(|t| t.lines().nth(7).is_some_and(|l| l.trim() == "ready"))
                .unwrap_or(false);
            if ready {
                return Ok(());
            }
            if stop.is_raised() {
                bail!("interrupted while the server was starting");
            }
            if t0.elapsed() > START_TIMEOUT {
                bail!(
                    "the PostgreSQL server was not ready after {}s; its log says: {}",
                    START_TIMEOUT.as_secs(),
                    self.log_tail()
                );
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Waits until no client backend of this server is left (they end
    /// after their client disconnects, and only then have they handed their
    /// last statistics to the server), at most `patience`; whether they all
    /// ended. With TCP off, every client backend is a `[local]` child of
    /// the postmaster; an exited one that is not yet reaped has no command
    /// line and no longer counts.
    pub fn wait_for_clients(&self, patience: Duration) -> bool {
        let Some(child) = &self.child else {
            return true;
        };
        let t0 = Instant::now();
        while local_clients(child.id()) > 0 {
            if t0.elapsed() > patience {
                return false;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        true
    }

    fn log_tail(&self) -> String {
        tail(
            &std::fs::read_to_string(self.cluster.log()).unwrap_or_default(),
            6,
        )
    }

    /// Stops the server: fast shutdown, then immediate, then SIGKILL.
    pub fn stop(&mut self) -> Result<()> {
        let Some(mut child) = self.child.take() else {
            return Ok(());
        };
        watch::forget(POSTGRES, &self.serves);
        let steps = [
            (libc::SIGINT, FAST_SHUTDOWN),
            (libc::SIGQUIT, IMMEDIATE_SHUTDOWN),
            (libc::SIGKILL, IMMEDIATE_SHUTDOWN),
        ];
        for (sig, patience) in steps {
            signal(child.id(), sig);
            let t0 = Instant::now();
            while t0.elapsed() < patience {
                if child.try_wait()?.is_some() {
                    return Ok(());
                }
                std::thread::sleep(Duration::from_millis(20));
            }
        }
        bail!(
            "the PostgreSQL server (pid {}) did not stop, even on SIGKILL",
            child.id()
        )
    }
}

/// Live children of `postmaster` whose process title says `[local]`.
fn local_clients(postmaster: u32) -> usize {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return 0;
    };
    entries
        .flatten()
        .filter(|e| {
            let path = e.path();
            let parent = std::fs::read_to_string(path.join("stat"))
                .ok()
                .and_then(|s| parent_pid(&s));
            parent == Some(postmaster)
                && std::fs::read(path.join("cmdline"))
                    .map(|c| String::from_utf8_lossy(&c).contains("[local]"))
                    .unwrap_or(false)
        })
        .count()
}

/// The parent pid in a /proc/PID/stat line (the field after the state,
/// which follows the command name in parentheses, which may hold spaces).
fn parent_pid(stat: &str) -> Option<u32> {
    let after = &stat[stat.rfind(')')? + 1..];
    after.split_whitespace().nth(1)?.parse().ok()
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Err(e) = self.stop() {
            errln!("storlab: stopping PostgreSQL: {e:#}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_parent_pid_follows_a_command_name_with_spaces() {
        assert_eq!(
            parent_pid("4242 (postgres: x (y)) S 4200 4200 4200 0 -1"),
            Some(4200)
        );
        assert_eq!(parent_pid("garbage"), None);
        let me = std::fs::read_to_string("/proc/self/stat").unwrap();
        assert_eq!(parent_pid(&me), Some(std::os::unix::process::parent_id()));
    }
}
