//! rpcbind, which NFSv3 needs (servers register NFS and MNT there, clients
//! ask it for their ports): whether it answers, what is registered with
//! it (`rpcinfo -p`), and how one is started when the host runs none. A running
//! rpcbind is used as it is — registering a program touches none of its
//! configuration; one storlab starts is a shared daemon ([`crate::provision::daemon`]):
//! claimed by each campaign that relies on it, stopped by its pid by the
//! last one to leave, and only once nothing else is registered with it.

use anyhow::Result;

use crate::provision::cmd;

pub const PROGRAM: &str = "rpcbind";
/// The RPC program numbers of NFS and its MOUNT protocol.
pub const NFS: u32 = 100003;
pub const MOUNT: u32 = 100005;
const PORTMAPPER: u32 = 100000;

/// The programs registered with this host's rpcbind, each once, in order;
/// an error when rpcbind does not answer.
pub fn programs() -> Result<Vec<u32>> {
    Ok(parse_programs(&cmd::run("rpcinfo", &["-p", "127.0.0.1"])?))
}

/// Whether this host's rpcbind answers.
pub fn reachable() -> bool {
    programs().is_ok()
}

/// What relies on rpcbind: every registered program but its own.
pub fn users() -> Result<Vec<String>> {
    Ok(programs()?
        .into_iter()
        .filter(|p| *p != PORTMAPPER)
        .map(|p| format!("RPC program {p}"))
        .collect())
}

/// The program numbers of `rpcinfo -p` output.
pub fn parse_programs(text: &str) -> Vec<u32> {
    let mut out: Vec<u32> = Vec::new();
    for n in text
        .lines()
        .filter_map(|l| l.split_whitespace().next()?.parse().ok())
    {
        if !out.contains(&n) {
            out.push(n);
        }
    }
    out
}

/// How storlab starts rpcbind ([`crate::provision::daemon::start_foreground`]): in
/// the foreground, so that storlab knows its pid and writes it down.
pub const ARGS: &[&str] = &["-f"];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rpcinfo_listings_name_the_registered_programs() {
        let text = "   program vers proto   port  service\n    100000    4   tcp    111  portmapper\n    100000    2   udp    111  portmapper\n    100003    3   tcp   2049  nfs\n    100005    3   tcp  43013  mountd\n";
        assert_eq!(parse_programs(text), [PORTMAPPER, NFS, MOUNT]);
        assert!(parse_programs("").is_empty());
    }
}
