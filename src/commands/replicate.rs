//! `storlab replicate [CAMPAIGN]`: a campaign's experiment, as the
//! campaign recorded it, run again into the same store as its next
//! replica, its rounds in another order (`Plan::replica`); its summary
//! then sets the replicas side by side.

use std::path::Path;
use std::process::ExitCode;

use anyhow::Result;

use super::run::{finish, ready_roots, tagged_team, warn_erasing};
use super::EXIT_INVALID;
use crate::cli::{Global, ReplicateArgs};
use crate::experiment::{self, Experiment};
use crate::process::StopFlag;
use crate::progress::Printer;
use crate::runner::{run_campaign, Session};
use crate::store::{Store, ToReplicate};

pub fn replicate(g: &Global, a: &ReplicateArgs) -> Result<ExitCode> {
    let (tags, mut team) = match tagged_team(&a.tag)? {
        Ok(started) => started,
        Err(code) => return Ok(code),
    };
    let (mut store, to, mut exp) = match replicable(&g.db, a.campaign.as_deref()) {
        Ok(Some(found)) => found,
        other => {
            team.abort();
            return other.map(|_| ExitCode::from(EXIT_INVALID));
        }
    };
    if !g.quiet {
        errln!(
            "replica {} of campaign `{}` ({}), into {}",
            to.replica.number,
            exp.name,
            exp.origin,
            g.db.display()
        );
    }
    warn_erasing(&exp);
    team.open(&exp)?;
    let _over = team.over_on_drop();
    let stop = StopFlag::new();
    stop.install_signal_handlers()?;
    let _roots = ready_roots(&mut exp, &stop)?;
    let mut printer = Printer::new(g.quiet);
    let outcome = run_campaign(Session {
        exp: &exp,
        store: &mut store,
        stop: &stop,
        printer: &mut printer,
        team: &team,
        tags: &tags,
        replica: Some(&to.replica),
    })?;
    finish(&g.db, &store, &outcome, g.quiet, a.fail_on_failure)
}

/// The store, what to replicate and its experiment in the replica's
/// order; `None` (after saying why) when the stored experiment no longer
/// validates.
fn replicable(
    db: &Path,
    campaign: Option<&str>,
) -> Result<Option<(Store, ToReplicate, Experiment)>> {
    let store = Store::open_existing(db)?;
    let id = store.resolve_campaign(campaign)?;
    let to = store.to_replicate(id)?;
    let mut exp = match experiment::parse_experiment(&to.origin, &to.source) {
        Ok(e) => e,
        Err(e) => {
            errln!("error: the stored experiment of campaign {id} no longer validates, so it cannot be replicated: {e}");
            return Ok(None);
        }
    };
    exp.plan.replica = to.replica.number;
    Ok(Some((store, to, exp)))
}
