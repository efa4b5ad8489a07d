//! The Gluster command line as storlab uses it (`gluster --mode=script`),
//! on this host or on a server ([`Site`]): whether glusterd answers,
//! volumes deleted, peers probed and detached, `volume info`/`volume get`
//! and `peer status` parsed, `volume create` argument vectors. The
//! `gluster` target and the undoing of what it journaled
//! ([`super::resources`], `storlab cleanup`) both stand on it.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};

pub use crate::fact::readback::same_value;
use crate::provision::cmd;
use crate::provision::site::Site;
use crate::provision::undo::Undone;

pub const GLUSTER: &str = "gluster";
pub const SCRIPT: &str = "--mode=script";

/// Runs `gluster --mode=script args…` at `site`.
pub fn gluster(site: &Site, args: &[&str]) -> Result<String> {
    let mut all = vec![SCRIPT];
    all.extend_from_slice(args);
    site.run(GLUSTER, &all)
}

/// Whether the glusterd at `site` answers.
pub fn glusterd_reachable(site: &Site) -> bool {
    site.succeeds(GLUSTER, &[SCRIPT, "volume", "list"])
}

/// The volumes of this host's glusterd (what it still serves, before it is
/// stopped).
pub fn volume_names() -> Result<Vec<String>> {
    gluster(&Site::Local, &["volume", "list"])
        .map(|t| crate::provision::daemon::names_listed(&t, "No volumes present"))
}

/// Stops and deletes volume `name` if it exists, through the glusterd at
/// `site`.
pub fn delete_volume(site: &Site, name: &str) -> Result<()> {
    if !glusterd_reachable(site) {
        bail!("cannot reach glusterd on {site} to delete volume {name}; start glusterd there and run `storlab cleanup` again");
    }
    if gluster(site, &["volume", "info", name]).is_err() {
        return Ok(());
    }
    // Stopped again before each try: a stop that glusterd refused (a
    // transaction of a campaign killed a moment before still holds its
    // lock) left the volume started, and every delete failed on it. A
    // stop of a stopped volume fails, and is no matter.
    cmd::retry(10, 1000, || {
        let _ = gluster(site, &["volume", "stop", name, "force"]);
        gluster(site, &["volume", "delete", name]).map(|_| ())
    })
    .with_context(|| {
        format!(
            "deleting Gluster volume {name} on {site}; run `gluster volume delete {name}` there"
        )
    })
}

/// What probing a peer did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Probed {
    /// It joined the trusted pool now.
    Added,
    /// It was in the pool already (added by someone else).
    Already,
}

/// Probes `peer` into the trusted pool of the glusterd at `site` and waits
/// until it is a connected member (`Peer in Cluster`), at most `wait`.
pub fn probe_peer(site: &Site, peer: &str, wait: Duration) -> Result<Probed> {
    let out = gluster(site, &["peer", "probe", peer])
        .with_context(|| format!("adding {peer} to the trusted pool of {site}; is glusterd running on {peer}, and does {peer} resolve there?"))?;
    let probed = if out.contains("already in peer list") {
        Probed::Already
    } else {
        Probed::Added
    };
    let t0 = Instant::now();
    loop {
        let status = gluster(site, &["peer", "status"])?;
        if peer_state(&status, peer).is_some_and(|s| s.starts_with("Peer in Cluster (Connected)")) {
            return Ok(probed);
        }
        if t0.elapsed() > wait {
            bail!(
                "{peer} did not become a connected member of {site}'s trusted pool within {} s (peer status: {:?})",
                wait.as_secs(),
                peer_state(&status, peer)
            );
        }
        std::thread::sleep(Duration::from_millis(300));
    }
}

/// Whether `peer` is in the trusted pool of the glusterd at `site`.
pub fn is_peer(site: &Site, peer: &str) -> Result<bool> {
    Ok(peer_state(&gluster(site, &["peer", "status"])?, peer).is_some())
}

/// Detaches `peer` from the trusted pool of the glusterd at `site`;
/// gone when it is not (or no longer) a peer. A peer that still holds a
/// brick of some volume — another campaign's — is kept: Gluster refuses,
/// and so would storlab.
pub fn detach_peer(site: &Site, peer: &str) -> Result<Undone> {
    if !glusterd_reachable(site) {
        bail!("cannot reach glusterd on {site} to detach peer {peer}; start glusterd there and run `storlab cleanup` again");
    }
    if !is_peer(site, peer)? {
        return Ok(Undone::Gone);
    }
    match gluster(site, &["peer", "detach", peer]) {
        Ok(_) => Ok(Undone::Gone),
        Err(e) if format!("{e:#}").contains("bricks") => Ok(Undone::Kept(format!(
            "leaving {peer} in the trusted pool of {site}: a volume still has bricks there; `storlab cleanup` detaches it once none has"
        ))),
        Err(e) => Err(e).with_context(|| format!("detaching peer {peer} on {site}")),
    }
}

/// The state of `peer` in `gluster peer status` output, if it is listed
/// by its host name or one of its other names (which follow the state).
pub fn peer_state(status: &str, peer: &str) -> Option<String> {
    let mut peers: Vec<(Vec<&str>, &str)> = Vec::new();
    let mut other_names = false;
    for line in status.lines().map(str::trim) {
        if let Some(h) = line.strip_prefix("Hostname: ") {
            peers.push((vec![h.trim()], ""));
            other_names = false;
        } else if let (Some(state), Some(p)) = (line.strip_prefix("State: "), peers.last_mut()) {
            p.1 = state.trim();
        } else if line == "Other names:" {
            other_names = true;
        } else if let (true, false, Some(p)) = (other_names, line.is_empty(), peers.last_mut()) {
            p.0.push(line);
        }
    }
    peers
        .into_iter()
        .find(|(names, _)| names.contains(&peer))
        .map(|(_, state)| state.to_string())
}

/// `Key: value` lines of `gluster volume info`.
pub fn parse_info(text: &str) -> BTreeMap<String, String> {
    text.lines()
        .filter_map(|l| l.split_once(": "))
        .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
        .collect()
}

/// The table printed by `gluster volume get VOL OPTION|all`.
pub fn parse_get(text: &str) -> BTreeMap<String, String> {
    text.lines()
        .skip_while(|l| !l.starts_with("------"))
        .skip(1)
        .filter_map(|l| {
            let mut f = l.split_whitespace();
            Some((f.next()?.to_string(), f.collect::<Vec<_>>().join(" ")))
        })
        .collect()
}

/// The `gluster volume create` arguments.
pub fn create_args(volume: &str, layout: Option<(&str, i64)>, bricks: &[String]) -> Vec<String> {
    let mut args = vec![
        SCRIPT.to_string(),
        "volume".into(),
        "create".into(),
        volume.into(),
    ];
    if let Some((kind, n)) = layout {
        args.push(kind.to_string());
        args.push(n.to_string());
    }
    args.extend(bricks.iter().cloned());
    args.push("force".into());
    args
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn volume_get_and_info_are_parsed() {
        let get = "Option                                   Value\n------                                   -----\nperformance.write-behind                 off\nperformance.cache-size                   32MB\n";
        let g = parse_get(get);
        assert_eq!(g["performance.write-behind"], "off");
        assert_eq!(g.len(), 2);
        let info = parse_info("\nVolume Name: v\nType: Replicate\nNumber of Bricks: 1 x 2 = 2\n");
        assert_eq!(info["Type"], "Replicate");
        assert!(
            same_value("false", "off") && same_value("Enable", "on") && !same_value("on", "off")
        );
    }

    #[test]
    fn peers_are_found_by_any_of_their_names() {
        let status = "Number of Peers: 2\n\nHostname: s2\nUuid: 8d7e\nState: Peer in Cluster (Connected)\n\nHostname: 10.0.0.3\nUuid: 9a22\nState: Accepted peer request (Connected)\nOther names:\ns3\n";
        assert_eq!(
            peer_state(status, "s2").as_deref(),
            Some("Peer in Cluster (Connected)")
        );
        assert_eq!(
            peer_state(status, "s3").as_deref(),
            Some("Accepted peer request (Connected)")
        );
        assert!(peer_state(status, "s4").is_none());
        assert!(peer_state("Number of Peers: 0\n", "s2").is_none());
    }

    #[test]
    fn create_arguments_name_every_brick_and_force() {
        let a = create_args("v", Some(("replica", 2)), &["h:/b0".into(), "h:/b1".into()]);
        assert_eq!(
            a,
            vec![
                "--mode=script",
                "volume",
                "create",
                "v",
                "replica",
                "2",
                "h:/b0",
                "h:/b1",
                "force"
            ]
        );
    }
}
