//! What `check` and `run` refuse about a root before anything is made,
//! each naming what is missing and how to get it: not root; no
//! debootstrap; a suite debootstrap or the registry does not know; no
//! route to the registry; a tree without the programs; what the jail needs
//! (`ip`, overlayfs). A root already in the cache needs neither
//! debootstrap nor the registry.

use std::path::Path;

use anyhow::{bail, Result};

use super::cache::Cache;
use super::software::Software;
use super::spec::RootSpec;
use super::{check_tree, mirror};
use crate::provision::cmd;

/// Where debootstrap keeps the script of each suite it knows.
const DEBOOTSTRAP_SCRIPTS: &str = "/usr/share/debootstrap/scripts";

/// Fails with the first reason `spec` cannot give `software` here.
pub fn preflight(spec: &RootSpec, software: Software) -> Result<()> {
    if spec.is_host() {
        return Ok(());
    }
    if !crate::host::is_root() {
        bail!("root = \"{spec}\" needs root (a chroot, a network namespace, mounts); run storlab as root");
    }
    jail_tools()?;
    match spec {
        RootSpec::Host => Ok(()),
        RootSpec::Tree(tree) => check_tree(tree, software).map(|_| ()),
        RootSpec::Debian { suite } => {
            if Cache::here()
                .manifest(&Cache::key(suite, software))
                .is_some()
            {
                return Ok(());
            }
            buildable(suite)
        }
    }
}

/// What every jail needs: `ip` (iproute2) and overlayfs.
fn jail_tools() -> Result<()> {
    if cmd::which("ip").is_none() {
        bail!("`ip` is not installed; a root's daemons get a network namespace with it: apt-get install iproute2");
    }
    let overlay = std::fs::read_to_string("/proc/filesystems")
        .is_ok_and(|t| t.lines().any(|l| l.trim_end().ends_with("overlay")));
    if !overlay && !cmd::succeeds("modprobe", &["overlay"]) {
        bail!("the kernel has no overlay filesystem (modprobe overlay failed); a root is seen through one so that it is never written");
    }
    Ok(())
}

/// Whether a root of `suite` can be built here: debootstrap is there and
/// knows the suite, and the registry answers for it.
pub fn buildable(suite: &str) -> Result<()> {
    let program = super::debootstrap();
    let found = match program.contains('/') {
        true => Path::new(&program).is_file(),
        false => cmd::which(&program).is_some(),
    };
    if !found {
        bail!("debootstrap is not installed ({program} not found); it builds the root of debian:{suite}: apt-get install debootstrap (or give the path of a tree you made, see docs/targets.md)");
    }
    if !Path::new(DEBOOTSTRAP_SCRIPTS).join(suite).exists() {
        bail!(
            "debian:{suite}: debootstrap knows no suite `{suite}` (it knows {}); name a Debian suite such as trixie or bookworm, or upgrade debootstrap",
            known_suites()
        );
    }
    registry_has(suite)
}

/// The Debian suites debootstrap knows, for messages.
fn known_suites() -> String {
    let debian = [
        "buster", "bullseye", "bookworm", "trixie", "forky", "sid", "stable", "testing",
    ];
    let known: Vec<&str> = debian
        .into_iter()
        .filter(|s| Path::new(DEBOOTSTRAP_SCRIPTS).join(s).exists())
        .collect();
    known.join(", ")
}

/// Whether the mirror serves `dists/SUITE/Release`: an unknown suite
/// (another release of it answers) told apart from no route to it.
fn registry_has(suite: &str) -> Result<()> {
    let mirror = mirror();
    let release = |s: &str| format!("{}/dists/{s}/Release", mirror.trim_end_matches('/'));
    let answered = probe(&release(suite));
    if answered.is_ok() {
        return Ok(());
    }
    if probe(&release("stable")).is_ok() {
        bail!("debian:{suite}: the package registry {mirror} has no suite `{suite}`; name one it has (trixie, bookworm, sid)");
    }
    bail!(
        "no route to the package registry {mirror} ({}); building debian:{suite} needs it: set STORLAB_DEBIAN_MIRROR to a mirror this host reaches, or build the root by hand and give its path (docs/targets.md)",
        answered.unwrap_err()
    )
}

/// Asks for `url` without downloading it (wget, which debootstrap uses).
fn probe(url: &str) -> Result<(), String> {
    let out = std::process::Command::new("wget")
        .args(["--spider", "-q", "-T", "10", "-t", "1", url])
        .output()
        .map_err(|e| format!("running wget: {e}"))?;
    match out.status.code() {
        Some(0) => Ok(()),
        Some(4) => Err("network failure".into()),
        Some(8) => Err(format!("{url} answered with an error")),
        _ => Err(format!("wget {url} failed ({})", out.status)),
    }
}
