//! What every rank but 0 does for a whole campaign: take the experiment
//! rank 0 offers, then carry out each run it orders until it says the
//! campaign is over. These ranks provision nothing, record nothing and
//! print nothing but their own errors.

use anyhow::Result;

use super::protocol::Instruction;
use super::turn::{take_part, Member};
use super::Team;
use crate::host::is_root;
use crate::measure::StopFlag;
use crate::provision::journal::Journal;

/// Follows rank 0 to the end of the campaign. `false` when the job ended
/// before any run (rank 0 reports why).
pub fn follow(team: &mut Team) -> Result<bool> {
    let Some(exp) = team.accept()? else {
        return Ok(false);
    };
    let stop = StopFlag::new();
    stop.install_signal_handlers()?;
    // Rank 0 drops its own host's cache; the first rank of every other host
    // drops that host's, so that clients on every host start cold.
    let drops = exp.plan.drop_caches && is_root() && team.leads_host() && !same_host_as_0(team);
    let mut between = || {
        if drops {
            // As on rank 0, a cache that could not be dropped does not
            // stop the run.
            let _ = crate::host::drop_caches();
        }
        Ok(())
    };
    // What a workload journals here (a directory outside its own) is
    // undone when the campaign is over, or by `storlab cleanup` on this host.
    let journal = Journal::for_campaign();
    let member = Member {
        team,
        exp: &exp,
        stop: &stop,
        journal: &journal,
    };
    let over = loop {
        match team.instruction() {
            Ok(Instruction::Over) => break Ok(true),
            Ok(Instruction::Run(order)) => {
                take_part(&member, &order, &mut between);
            }
            Err(e) => break Err(e),
        }
    };
    for kept in journal.undo_open() {
        errln!("storlab: rank {}: {kept}", team.rank());
    }
    journal.finish()?;
    over
}

fn same_host_as_0(team: &Team) -> bool {
    team.host(0) == team.host(team.rank())
}
