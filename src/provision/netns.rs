//! Network namespaces storlab makes, and what runs in them: the network of
//! a root's daemons: a network namespace of their own
//! (`ip netns add storlab-PID-TARGET`, its file in /run/netns), a veth pair
//! with one end inside, and a /24 of 10.214.N.0 — the host's end .1, the
//! daemons' .2 — so that two releases' daemons never share a port or see
//! each other, and a daemon that refuses loopback addresses (glusterd's
//! bricks) has a real one. N is chosen free on this host under a host-wide
//! lock, and the host end's address is its claim. The processes in a
//! namespace are found by the namespace's inode, never by name; a root's
//! daemon is stopped by its pid, then whatever it started there.

use std::net::Ipv4Addr;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{bail, Result};

use super::{cmd, daemon, hostlock, naming};

/// Where `ip netns add` keeps a namespace's file.
pub const NETNS_DIR: &str = "/run/netns";

/// The first two octets of the subnets the roots' links use.
const PREFIX: [u8; 2] = [10, 214];

/// The file of network namespace `name`.
pub fn netns_path(name: &str) -> PathBuf {
    PathBuf::from(NETNS_DIR).join(name)
}

/// Whether `name` is a namespace name storlab gives (`storlab-PID-TARGET`).
pub fn is_ours(name: &str) -> bool {
    naming::is_resource_name(name, '-') && name.len() <= 200
}

/// Whether `name` is the host's end of a link storlab makes (`slPIDhN`).
pub fn is_our_link(name: &str) -> bool {
    let Some(rest) = name.strip_prefix("sl") else {
        return false;
    };
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    rest.split_once('h')
        .is_some_and(|(pid, n)| digits(pid) && digits(n))
}

/// A root's link: the host's end, the namespace's end and their addresses.
#[derive(Debug, Clone)]
pub struct Link {
    pub host_end: String,
    pub host_address: Ipv4Addr,
    pub address: Ipv4Addr,
}

/// Adds namespace `name` with its loopback up.
pub fn add(name: &str) -> Result<()> {
    cmd::run("ip", &["netns", "add", name])?;
    cmd::run("ip", &["-n", name, "link", "set", "lo", "up"])?;
    Ok(())
}

/// Chooses a free subnet and the host end's name; `record` journals that
/// link before it is made. Then adds the veth pair, moves one end into
/// namespace `name`, and addresses and raises both.
pub fn link(name: &str, record: impl FnOnce(&str) -> Result<()>) -> Result<Link> {
    let lock = hostlock::open("roots-net")?;
    hostlock::flock(&lock, libc::LOCK_EX)?;
    let n = free_subnet()?;
    let host_end = format!("sl{}h{n}", std::process::id());
    let inner = format!("sl{}j{n}", std::process::id());
    record(&host_end)?;
    let [a, b] = PREFIX;
    let link = Link {
        host_end: host_end.clone(),
        host_address: Ipv4Addr::new(a, b, n, 1),
        address: Ipv4Addr::new(a, b, n, 2),
    };
    cmd::run(
        "ip",
        &[
            "link", "add", &host_end, "type", "veth", "peer", "name", &inner,
        ],
    )?;
    cmd::run("ip", &["link", "set", &inner, "netns", name])?;
    let host_cidr = format!("{}/24", link.host_address);
    cmd::run("ip", &["addr", "add", &host_cidr, "dev", &host_end])?;
    cmd::run("ip", &["link", "set", &host_end, "up"])?;
    let cidr = format!("{}/24", link.address);
    cmd::run("ip", &["-n", name, "addr", "add", &cidr, "dev", &inner])?;
    cmd::run("ip", &["-n", name, "link", "set", &inner, "up"])?;
    Ok(link)
}

/// A third octet N whose 10.214.N.0/24 no address or route of this host
/// uses.
fn free_subnet() -> Result<u8> {
    let used = cmd::run("ip", &["-4", "-o", "addr", "show"])? + &cmd::run("ip", &["-4", "route"])?;
    let [a, b] = PREFIX;
    (1..=254u8)
        .find(|n| !used.contains(&format!("{a}.{b}.{n}.")))
        .ok_or_else(|| anyhow::anyhow!("no free subnet in {a}.{b}.0.0/16 for a root's daemons: 254 are in use; end some campaigns or run `storlab cleanup`"))
}

/// The pids of the processes in namespace `name` (none when it is gone).
pub fn processes_in(name: &str) -> Vec<u32> {
    let Ok(ns) = std::fs::metadata(netns_path(name)) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|s| s.parse::<u32>().ok()) else {
            continue;
        };
        let same = std::fs::metadata(e.path().join("ns/net"))
            .is_ok_and(|m| m.ino() == ns.ino() && m.dev() == ns.dev());
        if same && !daemon::zombie(pid) {
            out.push(pid);
        }
    }
    out
}

/// Stops every process in namespace `name`: SIGTERM, SIGKILL after
/// `grace`. Fails if one is still there after that.
pub fn stop_processes(name: &str, grace: Duration) -> Result<()> {
    let left = daemon::end_all(|| processes_in(name), grace);
    if !left.is_empty() {
        bail!(
            "processes {left:?} in network namespace {name} do not end, even killed; kill them by hand and run `storlab cleanup` again"
        );
    }
    Ok(())
}

/// Stops what runs in namespace `name` and deletes it; gone already is fine.
pub fn delete(name: &str) -> Result<()> {
    if !netns_path(name).exists() {
        return Ok(());
    }
    stop_processes(name, Duration::from_secs(10))?;
    cmd::run("ip", &["netns", "delete", name]).map(|_| ())
}

/// Deletes link `name` if it is still there (deleting the namespace
/// holding its peer takes it too).
pub fn delete_link(name: &str) -> Result<()> {
    if !PathBuf::from("/sys/class/net").join(name).exists() {
        return Ok(());
    }
    match cmd::run("ip", &["link", "delete", name]) {
        Ok(_) => Ok(()),
        Err(_) if !PathBuf::from("/sys/class/net").join(name).exists() => Ok(()),
        Err(e) => Err(e),
    }
}

/// Stops a root's daemon by its pid (only while that process runs in the
/// namespace `netns`), then everything else still running there.
pub fn stop_root_daemon(program: &str, pidfile: &Path, netns_name: &str) -> Result<()> {
    let inside = processes_in(netns_name);
    if let Some(pid) = daemon::read_pid(pidfile).filter(|p| inside.contains(p)) {
        let running = || [pid].into_iter().filter(|p| !daemon::zombie(*p)).collect();
        daemon::end_all(running, Duration::from_secs(10));
    }
    stop_processes(netns_name, Duration::from_secs(10))
        .map_err(|e| e.context(format!("stopping {program} and what it started")))?;
    let _ = std::fs::remove_file(pidfile);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_names_storlab_gives_are_ours() {
        assert!(is_ours("storlab-4242-gl"));
        assert!(!is_ours("cni-1234") && !is_ours("storlab-x-gl"));
        assert!(is_our_link("sl4242h7"));
        for bad in ["eth0", "sl4242", "slxh7", "sl42h", "sb1h1"] {
            assert!(!is_our_link(bad), "{bad}");
        }
    }

    #[test]
    fn a_namespace_that_is_gone_has_no_processes() {
        assert!(processes_in("storlab-1-no-such-namespace").is_empty());
        delete("storlab-1-no-such-namespace").unwrap();
        delete_link("sl1h254").unwrap();
    }
}
