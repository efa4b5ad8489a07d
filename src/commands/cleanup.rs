//! `storlab cleanup`: undoes what killed campaigns left provisioned, from
//! their journals in the state directory, newest resource first. A journal
//! whose campaign is still running is left alone; a journal is removed once
//! everything in it is undone.

use std::process::ExitCode;

use anyhow::Result;

use crate::provision::daemon::alive_as;
use crate::provision::journal::{journals_in, read_pending, state_dir, Pending};

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
        if let Some(pid) = pending.pid.filter(|&p| p != std::process::id()) {
            if alive_as(pid, "storlab") {
                outln!(
                    "{}: campaign pid {pid} is still running; stop it first (Ctrl-C tears it down)",
                    path.display()
                );
                continue;
            }
        }
        failed |= !undo_journal(&pending);
    }
    Ok(if failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}

/// Undoes a journal's resources, newest first; removes the journal when all
/// are undone. Stops at the first failure, keeping the journal.
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
    for (_, res) in pending.resources.iter().rev() {
        match res.undo() {
            Ok(()) => outln!("  undone: {}", res.describe()),
            Err(e) => {
                errln!("  FAILED: {}: {e:#}", res.describe());
                errln!("  the journal is kept; fix the cause and run `storlab cleanup` again");
                return false;
            }
        }
    }
    match std::fs::remove_file(&pending.path) {
        Ok(()) => true,
        Err(e) => {
            errln!("  removing {}: {e}", pending.path.display());
            false
        }
    }
}
