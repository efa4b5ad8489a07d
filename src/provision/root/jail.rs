//! A root at work for one target (or one workload's server): the root's
//! tree seen through an overlay (its files read, never written: a cached
//! root serves many campaigns, a user's tree is only read), with the
//! kernel's /proc and /dev bound in, a /run and /dev/shm of its own (two
//! glusterd must not share a socket), in a network namespace of its own
//! with an address ([`crate::provision::netns`]). Host directories the daemons work
//! in (bricks, a database's directory) are bound in at the same path,
//! shared ([`Jail::share`]), so that what a program of the root mounts
//! there (the FUSE client's mount) is seen by the workload at the path it
//! knows.
//!
//! Every piece is journaled before it is made, in the order that undoes
//! it in reverse: the overlay and its mounts first, then the namespace and
//! link; a daemon, once started, is journaled with the namespace it runs
//! in, whose processes its undo stops — what glusterd started (bricks, the
//! self-heal daemon, the FUSE client) dies with it, before the
//! directories it worked in are removed.

use std::net::Ipv4Addr;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result};

use super::enter;
use super::Root;
use crate::provision::journal::{state_dir, Held, Resource};
use crate::provision::netns::{self, Link};
use crate::provision::{cmd, daemon, resource_name};

/// A root's tree made ready to run daemons, for one target.
#[derive(Debug)]
pub struct Jail {
    /// The namespace's name, also the name of the jail's directory.
    name: String,
    /// STATE/roots/run/NAME: upper, work and merged.
    dir: PathBuf,
    link: Link,
    root_text: String,
}

impl Jail {
    /// Makes the jail of `root` for target `target`, journaling each part
    /// in `held` (the target's own resources) before it is made.
    pub fn open(root: &Root, target: &str, held: &mut Held) -> Result<Jail> {
        let name = resource_name('-', target);
        let dir = state_dir().join("roots/run").join(&name);
        std::fs::create_dir_all(dir.parent().expect("a parent"))
            .with_context(|| format!("creating {}", dir.parent().expect("a parent").display()))?;
        held.make_dir(&dir)?;
        let merged = dir.join("merged");
        for d in ["upper", "work", "merged"] {
            std::fs::create_dir(dir.join(d))
                .with_context(|| format!("creating {}", dir.join(d).display()))?;
        }
        let overlay = format!(
            "lowerdir={},upperdir={},workdir={}",
            root.tree.display(),
            dir.join("upper").display(),
            dir.join("work").display()
        );
        mount(held, &merged, &["-t", "overlay", "-o", &overlay, "overlay"])?;
        // Private: on a host whose mounts are shared (systemd's), what is
        // mounted in the jail must not show elsewhere, nor a tmpfs on the
        // jail's /dev/shm on the host's.
        private(&merged)?;
        bind(held, Path::new("/proc"), &merged.join("proc"))?;
        private(&merged.join("proc"))?;
        bind(held, Path::new("/dev"), &merged.join("dev"))?;
        private(&merged.join("dev"))?;
        let shm = merged.join("dev/shm");
        mount(
            held,
            &shm,
            &["-t", "tmpfs", "-o", "mode=1777", "storlab-shm"],
        )?;
        let run = merged.join("run");
        mount(
            held,
            &run,
            &["-t", "tmpfs", "-o", "mode=755", "storlab-run"],
        )?;
        held.record(Resource::Netns { name: name.clone() })?;
        netns::add(&name)?;
        let link = netns::link(&name, |host_end| {
            held.record(Resource::Link {
                name: host_end.to_string(),
            })
        })?;
        Ok(Jail {
            name,
            dir,
            link,
            root_text: root.describe(),
        })
    }

    /// The name of its network namespace.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The address its daemons listen on.
    pub fn address(&self) -> Ipv4Addr {
        self.link.address
    }

    /// Where the root's `/` is, as the host sees it.
    pub fn merged(&self) -> PathBuf {
        self.dir.join("merged")
    }

    /// `path` inside the jail, as the host sees it.
    pub fn host_path(&self, path: &Path) -> PathBuf {
        super::software::inside(&self.merged(), path)
    }

    /// Makes the host's directory `dir` visible inside at the same path:
    /// bound onto itself as a shared mount, then bound into the jail, so
    /// that a mount made under it on either side is seen on both.
    pub fn share(&self, dir: &Path, held: &mut Held) -> Result<()> {
        bind(held, dir, dir)?;
        cmd::run("mount", &["--make-shared".as_ref(), dir.as_os_str()])
            .with_context(|| format!("making {} a shared mount", dir.display()))?;
        let inside = self.host_path(dir);
        std::fs::create_dir_all(&inside)
            .with_context(|| format!("creating {}", inside.display()))?;
        bind(held, dir, &inside)
    }

    /// A command running `program` (a path as the root sees it) in the
    /// jail: chrooted, in its network namespace.
    pub fn command(&self, program: &Path) -> Result<Command> {
        self.command_within(program, &enter::Within::default())
    }

    /// As [`Jail::command`], as a user of the root's and in a directory.
    pub fn command_within(&self, program: &Path, within: &enter::Within) -> Result<Command> {
        enter::command_within(
            &self.merged(),
            Some(&netns::netns_path(&self.name)),
            program,
            within,
        )
    }

    /// Runs `program args…` in the jail; its stdout.
    pub fn run<S: AsRef<std::ffi::OsStr>>(&self, program: &Path, args: &[S]) -> Result<String> {
        let mut cmd = self.command(program)?;
        cmd.args(args);
        cmd::run_command(&mut cmd).with_context(|| format!("in {}", self.root_text))
    }

    /// Whether `program args…` succeeds in the jail.
    pub fn succeeds<S: AsRef<std::ffi::OsStr>>(&self, program: &Path, args: &[S]) -> bool {
        self.command(program)
            .map(|mut c| {
                c.args(args);
                cmd::run_command(&mut c).is_ok()
            })
            .unwrap_or(false)
    }

    /// Starts a daemon of the root (which daemonizes and writes its pid to
    /// `pidfile`, a path inside the jail), journaled before it starts, and
    /// waits until `ready()` holds. Its pid.
    pub fn start_daemon(
        &self,
        program: &Path,
        args: &[String],
        pidfile: &Path,
        held: &mut Held,
        ready: impl Fn() -> bool,
    ) -> Result<u32> {
        let name = program
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let on_host = self.host_path(pidfile);
        held.record(Resource::RootDaemon {
            program: name.clone(),
            pidfile: on_host.clone(),
            netns: self.name.clone(),
        })?;
        let mut cmd = self.command(program)?;
        cmd.args(args);
        cmd::run_command(&mut cmd)
            .with_context(|| format!("starting {name} in {}", self.root_text))?;
        await_pid(&name, &on_host, ready)
    }
}

/// Waits (60 s at most) until `pidfile` names a live process and
/// `ready()` holds; the pid.
fn await_pid(program: &str, pidfile: &Path, ready: impl Fn() -> bool) -> Result<u32> {
    let t0 = std::time::Instant::now();
    while t0.elapsed() < std::time::Duration::from_secs(60) {
        if cmd::provisioning_stopped() {
            anyhow::bail!("interrupted while waiting for {program} to become ready");
        }
        let pid = daemon::read_pid(pidfile).filter(|p| !daemon::zombie(*p));
        if let Some(pid) = pid.filter(|_| ready()) {
            return Ok(pid);
        }
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
    anyhow::bail!(
        "{program} did not become ready within 60 s (pid file {}); see its log in the jail",
        pidfile.display()
    )
}

/// Journals the mount on `dir`, then mounts (`mount ARGS… dir`).
fn mount(held: &mut Held, dir: &Path, args: &[&str]) -> Result<()> {
    held.record(Resource::Mount {
        path: dir.to_path_buf(),
    })?;
    let mut all: Vec<&std::ffi::OsStr> = args.iter().map(|a| a.as_ref()).collect();
    all.push(dir.as_os_str());
    cmd::run("mount", &all).map(|_| ())
}

/// Makes the mount on `dir` private: no mount event crosses it either way.
fn private(dir: &Path) -> Result<()> {
    cmd::run("mount", &["--make-private".as_ref(), dir.as_os_str()]).map(|_| ())
}

/// Journals the bind mount of `from` on `to`, then makes it.
fn bind(held: &mut Held, from: &Path, to: &Path) -> Result<()> {
    held.record(Resource::Mount {
        path: to.to_path_buf(),
    })?;
    cmd::run(
        "mount",
        &["--bind".as_ref(), from.as_os_str(), to.as_os_str()],
    )
    .map(|_| ())
}
