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

/// One line of `rpcinfo -p`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Registration {
    pub program: u32,
    pub version: u32,
    pub proto: String,
    pub port: u16,
}

/// The registrations of `rpcinfo -p` output.
pub fn parse_registrations(text: &str) -> Vec<Registration> {
    text.lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            Some(Registration {
                program: f.first()?.parse().ok()?,
                version: f.get(1)?.parse().ok()?,
                proto: f.get(2)?.to_string(),
                port: f.get(3)?.parse().ok()?,
            })
        })
        .collect()
}

/// Removes (`rpcinfo -d PROGRAM VERSION`) every version of `programs`
/// registered with this host's rpcbind whose ports nothing listens on: a
/// server that died without unregistering left it. A version one of whose
/// ports is served stays, whoever serves it. Nothing to do when rpcbind
/// does not answer (it holds nothing then).
pub fn remove_stale(programs: &[u32]) -> Result<()> {
    for (program, version) in stale(programs) {
        let (p, v) = (program.to_string(), version.to_string());
        cmd::run("rpcinfo", &["-d", &p, &v])?;
    }
    Ok(())
}

/// The versions of `programs` registered with this host's rpcbind whose
/// ports nothing listens on (none when rpcbind does not answer).
pub fn stale(programs: &[u32]) -> Vec<(u32, u32)> {
    let Ok(text) = cmd::run("rpcinfo", &["-p", "127.0.0.1"]) else {
        return Vec::new();
    };
    let all = parse_registrations(&text);
    let mut versions: Vec<(u32, u32)> = all
        .iter()
        .filter(|r| programs.contains(&r.program))
        .map(|r| (r.program, r.version))
        .collect();
    versions.dedup();
    versions.retain(|&(program, version)| {
        !all.iter()
            .filter(|r| (r.program, r.version) == (program, version))
            .any(|r| listening(&r.proto, r.port))
    });
    versions
}

/// Whether a socket of `proto` (tcp, udp, tcp6, udp6) listens on `port`
/// in this network namespace (/proc/net).
fn listening(proto: &str, port: u16) -> bool {
    let (files, state): (&[&str], &str) = match proto.trim_end_matches('6') {
        "tcp" => (&["/proc/net/tcp", "/proc/net/tcp6"], "0A"),
        "udp" => (&["/proc/net/udp", "/proc/net/udp6"], "07"),
        _ => return true, // not told: treated as served, never removed
    };
    files.iter().any(|f| {
        let text = std::fs::read_to_string(f).unwrap_or_default();
        bound_ports(&text, state).contains(&port)
    })
}

/// The local ports of the sockets in state `state` in a /proc/net table.
fn bound_ports(table: &str, state: &str) -> Vec<u16> {
    table
        .lines()
        .skip(1)
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            let port = f.get(1)?.rsplit_once(':')?.1;
            (f.get(3)? == &state).then(|| u16::from_str_radix(port, 16).ok())?
        })
        .collect()
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
        let r = parse_registrations(text);
        assert_eq!(r.len(), 4);
        assert_eq!(
            r[3],
            Registration {
                program: MOUNT,
                version: 3,
                proto: "tcp".into(),
                port: 43013
            }
        );
    }

    #[test]
    fn a_proc_net_table_gives_the_listening_ports() {
        let tcp = "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 0100007F:0801 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 1 1 0 100 0 0 10 0
   1: 0100007F:A805 0100007F:0801 01 00000000:00000000 00:00000000 00000000     0        0 2 1 0 100 0 0 10 0
";
        assert_eq!(bound_ports(tcp, "0A"), [2049]);
    }
}
