//! What every rank but 0 does for a whole campaign: take the experiment
//! rank 0 offers, then carry out each run it orders until it says the
//! campaign is over. These ranks provision nothing, record nothing and
//! print nothing but their own errors; the first rank on each host other
//! than rank 0's mounts there what rank 0 provisioned ([`HostMounts`]) and
//! drops that host's caches.

use anyhow::Result;

use super::host_mounts::HostMounts;
use super::protocol::Instruction;
use super::turn::{take_part, Member};
use super::Team;
use crate::experiment::Remount;
use crate::host::is_root;
use crate::process::StopFlag;
use crate::provision::journal::Journal;

/// Follows rank 0 to the end of the campaign. `false` when the job ended
/// before any run (rank 0 reports why).
pub fn follow(team: &mut Team) -> Result<bool> {
    let Some(exp) = team.accept()? else {
        return Ok(false);
    };
    let stop = StopFlag::new();
    stop.install_signal_handlers()?;
    let leads = team.leads_other_host();
    // Rank 0 drops its own host's cache; the first rank of every other host
    // drops that host's, so that clients on every host start cold.
    let drops = exp.plan.drop_caches && is_root() && leads;
    let remounts = exp.plan.remount == Remount::BetweenRuns;
    // What a workload journals here (a directory outside its own) and this
    // host's client mounts are undone when the campaign is over, or by
    // `storlab cleanup` on this host.
    let journal = Journal::for_campaign(crate::targets::RESOURCES);
    let mut mounts = HostMounts::new(&journal);
    let member = Member {
        team,
        exp: &exp,
        stop: &stop,
        journal: &journal,
        watch: None,
        layers: None,
    };
    let over = loop {
        match team.instruction() {
            Ok(Instruction::Over) => break Ok(true),
            Ok(Instruction::Run(order)) => {
                let mut between = || {
                    if leads {
                        mounts.before_run(order.target, remounts)?;
                    }
                    if drops {
                        // As on rank 0, a cache that could not be dropped
                        // does not stop the run.
                        let _ = crate::host::drop_caches();
                    }
                    Ok(())
                };
                take_part(&member, &order, &mut between);
            }
            Ok(Instruction::Mount(wanted)) => {
                let done = leads.then(|| mounts.mount(&wanted).err()).flatten();
                team.failures(done.map(|e| format!("{e:#}")));
            }
            Ok(Instruction::Unmount) => {
                let done = mounts.unmount().err();
                team.failures(done.map(|e| format!("{e:#}")));
            }
            Err(e) => break Err(e),
        }
    };
    let _ = mounts.unmount();
    for kept in journal.undo_open() {
        errln!("storlab: rank {}: {kept}", team.rank());
    }
    journal.finish()?;
    over
}
