//! `storlab import OTHER.db…`: campaigns from other stores into this one.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Result;

use crate::foreign::visible;
use crate::store::Store;

pub fn import(db: &Path, others: &[PathBuf]) -> Result<ExitCode> {
    let mut store = Store::open(db)?;
    let mut refused = 0;
    for other in others {
        let done = store.import(other)?;
        for (theirs, name, why) in &done.refused {
            errln!(
                "error: campaign {theirs} `{}` of {} is not imported: {why}",
                visible(name),
                other.display()
            );
        }
        refused += done.refused.len();
        for (theirs, ours, name) in &done.added {
            outln!(
                "imported campaign {theirs} `{}` from {} as campaign {ours}",
                visible(name),
                other.display()
            );
        }
        for (theirs, ours, name) in &done.already {
            let name = visible(name);
            outln!(
                "campaign {theirs} `{name}` of {} is already here (campaign {ours}; same UUID)",
                other.display()
            );
        }
        for (theirs, ours, name, n) in &done.updated {
            let name = visible(name);
            match n {
                0 => outln!(
                    "campaign {theirs} `{name}` of {} has ended since it was imported (no new run); campaign {ours} here is finished too",
                    other.display()
                ),
                n => outln!(
                    "campaign {theirs} `{name}` of {} went on since it was imported: {n} new run(s), campaign {ours} here now holds all its runs",
                    other.display()
                ),
            }
        }
        for (theirs, ours, name) in &done.diverged {
            let name = visible(name);
            errln!(
                "warning: campaign {theirs} `{name}` of {} and campaign {ours} here (same UUID) each hold runs the other lacks (it went on in both stores, or is running here); campaign {ours} is left as it is",
                other.display()
            );
        }
        for (theirs, name) in &done.running {
            let name = visible(name);
            errln!(
                "warning: campaign {theirs} `{name}` is still running in {}; import it again when it has ended",
                other.display()
            );
        }
        if done.added.is_empty()
            && done.already.is_empty()
            && done.running.is_empty()
            && done.updated.is_empty()
            && done.diverged.is_empty()
            && done.refused.is_empty()
        {
            outln!("{} holds no campaigns", other.display());
        }
    }
    if refused > 0 {
        errln!("{refused} campaign(s) refused; the others are imported");
        return Ok(ExitCode::from(super::EXIT_INVALID));
    }
    Ok(ExitCode::SUCCESS)
}
