//! `storlab run [EXPERIMENT]`, alone or as the ranks of an MPI job
//! (`mpirun -n N storlab run …`): rank 0 loads, provisions, records and
//! prints; the other ranks follow it (see [`crate::ranks`]).

use std::path::Path;
use std::process::ExitCode;

use anyhow::Result;

use super::{EXIT_INTERRUPTED, EXIT_INVALID, EXIT_RUNS_FAILED};
use crate::experiment;
use crate::host::is_root;
use crate::process::StopFlag;
use crate::progress::Printer;
use crate::ranks::Team;
use crate::report::outline;
use crate::report::render::terminal;
use crate::runner::{resume_campaign, run_campaign, Outcome, Session};
use crate::store::{Parts, Replica, Store, ToReplicate};

pub fn run(
    db: &Path,
    file: Option<&Path>,
    tags: &[String],
    quiet: bool,
    strict: bool,
) -> Result<ExitCode> {
    let tags = match crate::provenance::parse_tags(tags) {
        Ok(t) => t,
        Err(e) => {
            errln!("error: --tag: {e}");
            return Ok(ExitCode::from(EXIT_INVALID));
        }
    };
    let mut team = Team::join()?;
    if !team.is_root() {
        return follow(&mut team);
    }
    let exp = match super::experiment_file::load(file, is_root()) {
        Ok(e) => e,
        Err(e) => {
            team.abort();
            super::experiment_file::refuse(&e);
            return Ok(ExitCode::from(EXIT_INVALID));
        }
    };
    let mut store = match Store::open(db) {
        Ok(s) => s,
        Err(e) => {
            team.abort();
            return Err(e);
        }
    };
    let new = New {
        tags: &tags,
        replica: None,
    };
    campaign(db, &mut store, &exp, &mut team, new, quiet, strict)
}

/// What a new campaign records beside its experiment.
struct New<'a> {
    tags: &'a [(String, String)],
    replica: Option<&'a Replica>,
}

/// Runs a new campaign of `exp` into `store` and prints its summary.
fn campaign(
    db: &Path,
    store: &mut Store,
    exp: &experiment::Experiment,
    team: &mut Team,
    new: New,
    quiet: bool,
    strict: bool,
) -> Result<ExitCode> {
    team.open(exp)?;
    let _over = team.over_on_drop();
    let stop = StopFlag::new();
    stop.install_signal_handlers()?;
    let mut printer = Printer::new(quiet);
    let outcome = run_campaign(Session {
        exp,
        store,
        stop: &stop,
        printer: &mut printer,
        team,
        tags: new.tags,
        replica: new.replica,
    })?;
    finish(db, store, &outcome, quiet, strict)
}

/// `storlab replicate [CAMPAIGN]`: the campaign's experiment, as it
/// recorded it, run again into the same store as its next replica, its
/// rounds in another order (`Plan::replica`).
pub fn replicate(
    db: &Path,
    campaign_name: Option<&str>,
    tags: &[String],
    quiet: bool,
    strict: bool,
) -> Result<ExitCode> {
    let tags = match crate::provenance::parse_tags(tags) {
        Ok(t) => t,
        Err(e) => {
            errln!("error: --tag: {e}");
            return Ok(ExitCode::from(EXIT_INVALID));
        }
    };
    let mut team = Team::join()?;
    if !team.is_root() {
        return follow(&mut team);
    }
    let (mut store, to, exp) = match replicable(db, campaign_name) {
        Ok(Some(found)) => found,
        other => {
            team.abort();
            return other.map(|_| ExitCode::from(EXIT_INVALID));
        }
    };
    if !quiet {
        errln!(
            "replica {} of campaign `{}` ({}), into {}",
            to.replica.number,
            exp.name,
            exp.origin,
            db.display()
        );
    }
    let new = New {
        tags: &tags,
        replica: Some(&to.replica),
    };
    campaign(db, &mut store, &exp, &mut team, new, quiet, strict)
}

/// The store, what to replicate and its experiment with the replica's
/// order; `None` (after saying why) when the stored experiment no longer
/// validates.
fn replicable(
    db: &Path,
    campaign: Option<&str>,
) -> Result<Option<(Store, ToReplicate, experiment::Experiment)>> {
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

/// The ranks other than 0, for a whole campaign.
fn follow(team: &mut Team) -> Result<ExitCode> {
    match crate::ranks::follow::follow(team) {
        Ok(true) => Ok(ExitCode::SUCCESS),
        Ok(false) => Ok(ExitCode::from(EXIT_INVALID)),
        Err(e) => Err(e.context(format!("rank {}", team.rank()))),
    }
}

/// `storlab run --resume CAMPAIGN`.
pub fn resume(db: &Path, campaign: &str, quiet: bool, strict: bool) -> Result<ExitCode> {
    let mut team = Team::join()?;
    if !team.is_root() {
        return follow(&mut team);
    }
    let (mut store, r, exp) = match resumable(db, campaign) {
        Ok(Some(found)) => found,
        other => {
            team.abort();
            return other.map(|_| ExitCode::from(EXIT_INVALID));
        }
    };
    team.open(&exp)?;
    let _over = team.over_on_drop();
    let stop = StopFlag::new();
    stop.install_signal_handlers()?;
    let mut printer = Printer::new(quiet);
    let session = Session {
        exp: &exp,
        store: &mut store,
        stop: &stop,
        printer: &mut printer,
        team: &team,
        tags: &[],
        replica: None,
    };
    let outcome = resume_campaign(session, r.ids)?;
    finish(db, &store, &outcome, quiet, strict)
}

/// The store, the campaign to resume and its experiment; `None` (after
/// saying why) when the stored experiment no longer validates.
fn resumable(
    db: &Path,
    campaign: &str,
) -> Result<Option<(Store, crate::store::Resumable, experiment::Experiment)>> {
    let store = Store::open_existing(db)?;
    let id = store.resolve_campaign(Some(campaign))?;
    let r = store.resumable(id)?;
    let mut exp = match experiment::parse_experiment(&r.origin, &r.source) {
        Ok(e) => e,
        Err(e) => {
            errln!("error: the stored experiment of campaign {id} no longer validates: {e}");
            return Ok(None);
        }
    };
    let names_match = exp
        .targets
        .iter()
        .map(|t| &t.name)
        .eq(r.target_names.iter())
        && exp
            .workloads
            .iter()
            .map(|w| &w.name)
            .eq(r.workload_names.iter());
    if !names_match {
        anyhow::bail!("campaign {id}'s stored targets and workloads do not match its experiment; it cannot be resumed");
    }
    // A replica resumes in its own order.
    exp.plan.replica = store.replica(id)?.map_or(0, |r| r.number);
    for (w, stored) in exp.workloads.iter().zip(&r.workload_params) {
        if &w.params.to_json() != stored {
            anyhow::bail!("workload `{}` of campaign {id} resolves differently now (a file it reads, such as a fio job file, changed); it cannot be resumed", w.name);
        }
    }
    Ok(Some((store, r, exp)))
}

fn finish(
    db: &Path,
    store: &Store,
    outcome: &Outcome,
    quiet: bool,
    strict: bool,
) -> Result<ExitCode> {
    let data = store.load_campaign_with(outcome.campaign, &Parts::terminal())?;
    let data = store.with_replicas(data, &Parts::terminal())?;
    let doc = outline::terminal(&data, &outline::Options::default())?;
    let verbose = crate::console::level() == crate::console::Level::Verbose;
    let view = terminal::View {
        columns: crate::console::columns(),
        verbose,
        every_warning: verbose,
    };
    crate::console::to_stdout_styled(&terminal::summary_for(&doc, view));
    // Warnings are for the reader, not for the table a script parses.
    crate::console::to_stderr(&terminal::warnings_for(&doc, view));
    if !quiet {
        errln!(
            "results stored in {} as campaign {}",
            db.display(),
            outcome.campaign
        );
    }
    if outcome.interrupted {
        errln!(
            "interrupted: finished runs are stored; continue with `storlab run --resume {}`",
            outcome.campaign
        );
        return Ok(ExitCode::from(EXIT_INTERRUPTED));
    }
    let count = |status: &str| data.runs.iter().filter(|r| r.status == status).count();
    let (ok, failed) = (count("ok"), count("failed"));
    Ok(failed_runs_status(ok, failed, strict))
}

/// The exit status of a campaign that ran to its end with `ok` and
/// `failed` runs: 3 when every run failed (a campaign that measured
/// nothing is no success), or with `strict` when any did; otherwise 0,
/// with the failures counted on stderr.
fn failed_runs_status(ok: usize, failed: usize, strict: bool) -> ExitCode {
    if failed == 0 {
        return ExitCode::SUCCESS;
    }
    if ok == 0 {
        errln!("error: every run failed ({failed} of {failed}); nothing was measured");
        return ExitCode::from(EXIT_RUNS_FAILED);
    }
    if strict {
        errln!(
            "error: {failed} of {} runs failed (--fail-on-failure)",
            ok + failed
        );
        return ExitCode::from(EXIT_RUNS_FAILED);
    }
    errln!(
        "{failed} of {} runs failed; their errors are above and in `storlab show` (--fail-on-failure makes this exit 3)",
        ok + failed
    );
    ExitCode::SUCCESS
}
