//! `storlab import OTHER.db…`: campaigns from other stores into this one.

use std::path::Path;
use std::process::ExitCode;

use anyhow::Result;

use crate::foreign::visible;
use crate::store::{Imported, Store};

pub fn import(g: &crate::cli::Global, a: &crate::cli::ImportArgs) -> Result<ExitCode> {
    let mut store = Store::open(&g.db)?;
    let mut refused = 0;
    for other in &a.stores {
        let done = store.import(other)?;
        refused += done.refused.len();
        say(&done, other);
    }
    if refused > 0 {
        errln!("{refused} campaign(s) refused; the others are imported");
        return Ok(ExitCode::from(super::EXIT_INVALID));
    }
    Ok(ExitCode::SUCCESS)
}

/// What importing `other` did, a line per campaign.
fn say(done: &Imported, other: &Path) {
    let from = other.display();
    for (theirs, name, why) in &done.refused {
        errln!(
            "error: campaign {theirs} `{}` of {from} is not imported: {why}",
            visible(name)
        );
    }
    for (theirs, ours, name) in &done.added {
        outln!(
            "imported campaign {theirs} `{}` from {from} as campaign {ours}",
            visible(name)
        );
    }
    for (theirs, ours, name) in &done.already {
        outln!(
            "campaign {theirs} `{}` of {from} is already here (campaign {ours}; same UUID)",
            visible(name)
        );
    }
    say_updated(done, other);
    for (theirs, name) in &done.running {
        errln!(
            "warning: campaign {theirs} `{}` is still running in {from}; import it again when it has ended",
            visible(name)
        );
    }
    let nothing = done.added.is_empty()
        && done.already.is_empty()
        && done.running.is_empty()
        && done.updated.is_empty()
        && done.diverged.is_empty()
        && done.refused.is_empty();
    if nothing {
        outln!("{from} holds no campaigns");
    }
}

/// Campaigns imported before that went on since, here or there.
fn say_updated(done: &Imported, other: &Path) {
    let from = other.display();
    for (theirs, ours, name, n) in &done.updated {
        let name = visible(name);
        match n {
            0 => outln!(
                "campaign {theirs} `{name}` of {from} has ended since it was imported (no new run); campaign {ours} here is finished too"
            ),
            n => outln!(
                "campaign {theirs} `{name}` of {from} went on since it was imported: {n} new run(s), campaign {ours} here now holds all its runs"
            ),
        }
    }
    for (theirs, ours, name) in &done.diverged {
        errln!(
            "warning: campaign {theirs} `{}` of {from} and campaign {ours} here (same UUID) each hold runs the other lacks (it went on in both stores, or is running here); campaign {ours} is left as it is",
            visible(name)
        );
    }
}
