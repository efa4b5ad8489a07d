//! Building a Debian root for the cache: `debootstrap --variant=minbase
//! --include=PACKAGES SUITE DIR MIRROR` into a directory of this process's
//! (`storlab-PID-KEY`, journaled first as a [`Resource::RootBuild`], so that
//! `storlab cleanup` stops a build a killed campaign left, unmounts what
//! debootstrap mounted in it and removes it), the downloaded packages
//! dropped, the programs checked and their version read, the manifest
//! written, and only then renamed to its key: a root in the cache is
//! complete.

use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};

use super::cache::{disk_usage, write_manifest, Cache, Manifest};
use super::software::Software;
use super::{enter, mirror};
use crate::process::child::{self, ChildOptions};
use crate::process::StopFlag;
use crate::provision::journal::{Journal, Resource};

/// How long a build may take (a slow mirror, a loaded host) before it is
/// given up.
const BUILD_LIMIT: Duration = Duration::from_secs(45 * 60);

/// Builds the root of `suite` with `software`'s packages into the cache;
/// its manifest. The caller holds the key's lock exclusively.
pub fn build(
    cache: &Cache,
    suite: &str,
    software: Software,
    journal: &Journal,
    stop: &StopFlag,
) -> Result<Manifest> {
    let key = Cache::key(suite, software);
    let dir = cache.build_dir(&key);
    let resource = Resource::RootBuild { dir: dir.clone() };
    let id = journal.acquire(&resource)?;
    let built = build_in(&dir, suite, software, cache, &key, stop);
    let manifest = match built {
        Ok(m) => m,
        Err(e) => {
            if let Err(u) = resource.undo(crate::provision::resource::Kinds::NONE) {
                errln!(
                    "storlab: removing the unfinished root {}: {u:#}",
                    dir.display()
                );
                return Err(e);
            }
            journal.release(id)?;
            return Err(e);
        }
    };
    let done = cache.root_dir(&key);
    std::fs::rename(&dir, &done)
        .with_context(|| format!("moving {} to {}", dir.display(), done.display()))?;
    if let Ok(d) = std::fs::File::open(cache.dir()) {
        let _ = d.sync_all();
    }
    journal.release(id)?;
    Ok(manifest)
}

fn build_in(
    dir: &Path,
    suite: &str,
    software: Software,
    cache: &Cache,
    key: &str,
    stop: &StopFlag,
) -> Result<Manifest> {
    std::fs::create_dir(dir).with_context(|| format!("creating {}", dir.display()))?;
    let tree = dir.join("tree");
    let t0 = Instant::now();
    let log = cache.dir().join(format!("{key}.log"));
    debootstrap(suite, software, &tree, &log, stop)?;
    // The packages' files are in the tree; their archives are not needed.
    let mut clean = enter::isolated(&tree, Path::new("/usr/bin/apt-get"))?;
    clean.arg("clean");
    crate::provision::cmd::run_command(&mut clean)?;
    let version = super::check_tree(&tree, software)
        .with_context(|| format!("the root debootstrap built (its log: {})", log.display()))?;
    let manifest = Manifest {
        suite: suite.to_string(),
        software,
        packages: software.packages().iter().map(|p| p.to_string()).collect(),
        mirror: mirror(),
        built: crate::host::now_rfc3339(),
        build_seconds: t0.elapsed().as_secs_f64(),
        version,
        bytes: disk_usage(dir),
        storlab_version: crate::VERSION.to_string(),
    };
    write_manifest(dir, &manifest)?;
    Ok(manifest)
}

/// Runs debootstrap into `tree`, its output kept in `log`.
fn debootstrap(
    suite: &str,
    software: Software,
    tree: &Path,
    log: &Path,
    stop: &StopFlag,
) -> Result<()> {
    let mut cmd = Command::new(super::debootstrap());
    cmd.arg("--variant=minbase")
        .arg(format!("--include={}", software.packages().join(",")))
        .arg(suite)
        .arg(tree)
        .arg(mirror());
    // A killed storlab ends its build: debootstrap's own exit handler
    // unmounts what it mounted in the tree.
    // SAFETY: prctl is async-signal-safe.
    unsafe {
        cmd.pre_exec(|| {
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM);
            Ok(())
        });
    }
    let done = child::run(
        &mut cmd,
        ChildOptions {
            stdin: None,
            capture_stdout: true,
            stop,
            stop_signal: libc::SIGTERM,
            timeout: Some(BUILD_LIMIT),
        },
    )
    .context("starting debootstrap (apt-get install debootstrap)")?;
    let mut text = done.stdout.clone();
    text.extend_from_slice(&done.stderr);
    std::fs::write(log, &text).with_context(|| format!("writing {}", log.display()))?;
    if stop.is_raised() {
        bail!("interrupted while debootstrap built the root");
    }
    if done.timed_out {
        bail!(
            "debootstrap did not finish within {} minutes (its log: {})",
            BUILD_LIMIT.as_secs() / 60,
            log.display()
        );
    }
    if !done.status.success() {
        bail!(
            "debootstrap {suite} failed ({}): {} (its log: {})",
            child::describe_status(done.status),
            child::tail_lines(&String::from_utf8_lossy(&text), 4),
            log.display()
        );
    }
    Ok(())
}
