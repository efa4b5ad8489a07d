//! `storlab cleanup`: undoes what killed campaigns left provisioned, from
//! their journals in the state directory, newest resource first. A journal
//! whose campaign is still running (the same process: pid and start time)
//! is left alone; a journal is removed once everything in it is undone.
//! Only resources inside storlab's naming scheme are undone. A daemon that
//! another campaign still uses is kept, with its journal, for a later
//! cleanup.

use std::process::ExitCode;

use anyhow::Result;

use crate::provision::daemon::alive_as;
use crate::provision::journal::{journals_in, read_pending, state_dir, Pending, Undone};

pub fn cleanup() -> Result<ExitCode> {
    let dir = state_dir();
    let journals = journals_in(&dir);
    if journals.is_empty() {
        outln!("nothing to clean up: no journal in {}", dir.display());
        return Ok(ExitCode::SUCCESS);
    }
    let mut failed = false;
    for path in journals {
        let pending = read_pending(&path)?;
        if still_running(&pending) {
            outln!(
                "{}: campaign pid {} is still running; stop it first (Ctrl-C tears it down)",
                path.display(),
                pending.pid.unwrap_or_default()
            );
            continue;
        }
        failed |= !undo_journal(&pending);
    }
    Ok(if failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}

/// Whether the journal's campaign still runs: its very process (pid and
/// start time), or for an older journal a storlab under its pid.
fn still_running(p: &Pending) -> bool {
    match (p.owner, p.pid) {
        (_, Some(pid)) if pid == std::process::id() => false,
        (Some(owner), _) => owner.is_alive(),
        (None, Some(pid)) => alive_as(pid, "storlab"),
        (None, None) => false,
    }
}

/// Undoes a journal's resources, newest first; removes the journal when all
/// are undone. Stops at the first failure, keeping the journal; a resource
/// kept on purpose keeps the journal too.
fn undo_journal(pending: &Pending) -> bool {
    outln!(
        "{}: {} resource(s) left by campaign pid {}",
        pending.path.display(),
        pending.resources.len(),
        pending
            .pid
            .map(|p| p.to_string())
            .unwrap_or_else(|| "?".into())
    );
    let mut kept = false;
    for (_, res) in pending.resources.iter().rev() {
        match res.undo() {
            Ok(Undone::Gone) => outln!("  undone: {}", res.describe()),
            Ok(Undone::Kept(why)) => {
                outln!("  kept: {}: {why}", res.describe());
                kept = true;
            }
            Err(e) => {
                errln!("  FAILED: {}: {e:#}", res.describe());
                errln!("  the journal is kept; fix the cause and run `storlab cleanup` again");
                return false;
            }
        }
    }
    if kept {
        outln!("  the journal is kept for what is still in use");
        return true;
    }
    match std::fs::remove_file(&pending.path) {
        Ok(()) => true,
        Err(e) => {
            errln!("  removing {}: {e}", pending.path.display());
            false
        }
    }
}
