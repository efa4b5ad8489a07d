//! `storlab forget CAMPAIGN [--yes]`: a campaign removed from the store,
//! after asking on a terminal; without one, only with `--yes`.

use std::io::{BufRead, IsTerminal, Write};
use std::process::ExitCode;

use anyhow::Result;

use crate::foreign::visible;
use crate::store::Store;

pub fn forget(g: &crate::cli::Global, a: &crate::cli::ForgetArgs) -> Result<ExitCode> {
    let (db, campaign, yes) = (g.db.as_path(), a.campaign.as_str(), a.yes);
    let mut store = Store::open_existing(db)?;
    let id = store.resolve_campaign(Some(campaign))?;
    let row = store
        .list_campaigns()?
        .into_iter()
        .find(|c| c.id == id)
        .expect("resolved above");
    let what = format!(
        "campaign {id} `{}` ({} runs, started {}) from {}",
        visible(&row.name),
        row.runs_ok + row.runs_failed,
        visible(&row.started_at),
        db.display()
    );
    if !yes {
        if !std::io::stdin().is_terminal() {
            errln!("error: forgetting {what} cannot be undone; pass --yes to confirm (there is no terminal to ask)");
            return Ok(ExitCode::from(super::EXIT_INVALID));
        }
        eprint!("forget {what}? This cannot be undone. [y/N] ");
        let _ = std::io::stderr().flush();
        let mut answer = String::new();
        std::io::stdin().lock().read_line(&mut answer)?;
        if !matches!(answer.trim().to_ascii_lowercase().as_str(), "y" | "yes") {
            errln!("nothing forgotten");
            return Ok(ExitCode::from(super::EXIT_INVALID));
        }
    }
    let gone = store.forget(id)?;
    outln!(
        "forgot campaign {} `{}` and its {} runs",
        gone.id,
        visible(&gone.name),
        gone.runs
    );
    Ok(ExitCode::SUCCESS)
}
