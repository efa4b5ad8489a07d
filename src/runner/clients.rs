//! Rank 0's side of the clients on the other hosts of an MPI job. A target
//! that only rank 0's host reaches (a tmpfs, a loop device, a pool) is
//! refused before anything is provisioned when ranks run elsewhere. After
//! provisioning, the first rank of each other host mounts every target
//! that clients mount (a Gluster volume, an NFS export) as rank 0 did
//! ([`crate::ranks::host_mounts`]); at teardown they unmount before rank 0
//! tears the targets down.
//!
//! Rank 0 journals each of those mounts, and the directory made for it on
//! a host where the target made none, as a resource of that host, undone
//! there through the remote shell: `storlab cleanup` on rank 0's host
//! alone then undoes a crashed job on every host. When the clients
//! unmounted themselves, rank 0 lets go of those entries without running
//! anything on another host.

use anyhow::{bail, Result};

use crate::experiment::Experiment;
use crate::provision::client::ClientMount;
use crate::provision::journal::{Held, Journal, Resource};
use crate::provision::site::Site;
use crate::ranks::protocol::Instruction;
use crate::ranks::Team;
use crate::targets::{Reach, Target};

/// Fails when ranks run on hosts other than rank 0's and a target is
/// reachable from rank 0's host only.
pub(super) fn refuse_unreachable(
    exp: &Experiment,
    targets: &[Box<dyn Target>],
    team: &Team,
) -> Result<()> {
    let elsewhere = team.other_hosts();
    if elsewhere.is_empty() {
        return Ok(());
    }
    for (t, spec) in targets.iter().zip(&exp.targets) {
        if t.reach() == Reach::ThisHost {
            bail!(
                "target `{}` ({}) is reachable from rank 0's host ({}) only, but ranks run on {} too; use a target that every host reaches: `gluster` or `nfs` (storlab mounts it on every host), or a `dir` on a filesystem mounted at the same path everywhere",
                spec.name,
                spec.kind.name(),
                team.host(0),
                elsewhere.join(", ")
            );
        }
    }
    Ok(())
}

/// The client mounts on the other hosts, as rank 0 journals them.
pub(super) struct Clients {
    held: Held,
    mounted: bool,
}

impl Clients {
    pub fn new(journal: &Journal) -> Clients {
        Clients {
            held: Held::new(journal),
            mounted: false,
        }
    }

    /// Has the first rank of every other host mount each target that
    /// clients mount; fails naming each host that could not.
    pub fn mount(&mut self, targets: &[Box<dyn Target>], team: &Team) -> Result<()> {
        let hosts = team.other_hosts();
        let wanted: Vec<Option<ClientMount>> = targets
            .iter()
            .map(|t| match t.reach() {
                Reach::Mount(m) => Some(m),
                _ => None,
            })
            .collect();
        if hosts.is_empty() || wanted.iter().all(Option::is_none) {
            return Ok(());
        }
        for m in wanted.iter().flatten() {
            for host in &hosts {
                self.journal_remote(m, host)?;
            }
        }
        self.mounted = true;
        team.instruct(&Instruction::Mount(wanted));
        let failed = team.failures(None);
        if !failed.is_empty() {
            bail!(
                "not every host could mount the targets: {}",
                describe(team, &failed)
            );
        }
        Ok(())
    }

    /// What a host's client mount leaves there, recorded before it exists.
    fn journal_remote(&mut self, m: &ClientMount, host: &str) -> Result<()> {
        let site = Site::Remote(host.to_string());
        if !m.made_on.iter().any(|h| h == host) {
            let dir = Resource::Dir {
                path: m.top.clone(),
            };
            self.held.record(Resource::at(&site, dir))?;
        }
        let mount = Resource::Mount {
            path: m.path.clone(),
        };
        self.held.record(Resource::at(&site, mount))
    }

    /// Has the other hosts undo their client mounts; when every one did,
    /// lets go of what rank 0 journaled for them, else undoes it through
    /// the remote shell.
    pub fn unmount(&mut self, team: &Team) -> Result<()> {
        if !self.mounted {
            return Ok(());
        }
        self.mounted = false;
        team.instruct(&Instruction::Unmount);
        let failed = team.failures(None);
        if failed.is_empty() {
            return self.held.disown_all();
        }
        let why = describe(team, &failed);
        match self.held.undo_all() {
            Ok(()) => Ok(()),
            Err(e) => bail!("clients on other hosts could not unmount ({why}), nor could this host undo their mounts: {e:#}"),
        }
    }
}

fn describe(team: &Team, failed: &[(usize, String)]) -> String {
    failed
        .iter()
        .map(|(r, e)| format!("rank {r} on {}: {e}", team.host(*r)))
        .collect::<Vec<_>>()
        .join("; ")
}
