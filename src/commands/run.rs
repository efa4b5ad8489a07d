//! `storlab run [EXPERIMENT]`, alone or as the ranks of an MPI job
//! (`mpirun -n N storlab run …`): rank 0 loads, provisions, records and
//! prints; the other ranks follow it (see [`crate::ranks`]).

use std::path::Path;
use std::process::ExitCode;

use anyhow::Result;

use super::{EXIT_INTERRUPTED, EXIT_INVALID, EXIT_RUNS_FAILED};
use crate::cli::{Global, RunArgs};
use crate::experiment;
use crate::host::is_root;
use crate::process::StopFlag;
use crate::progress::Printer;
use crate::ranks::Team;
use crate::report::outline;
use crate::report::render::terminal;
use crate::runner::roots::Roots;
use crate::runner::{resume_campaign, run_campaign, Outcome, Session};
use crate::store::Store;

/// `storlab run [EXPERIMENT]` and `storlab run --resume CAMPAIGN`.
pub fn run(g: &Global, a: &RunArgs) -> Result<ExitCode> {
    if let Some(campaign) = &a.resume {
        return resume(&g.db, campaign, g.quiet, a.fail_on_failure);
    }
    let (tags, mut team) = match tagged_team(&a.tag)? {
        Ok(started) => started,
        Err(code) => return Ok(code),
    };
    let mut exp = match chosen(a.experiment.as_deref()) {
        Ok(exp) => exp,
        Err(code) => {
            team.abort();
            return Ok(code);
        }
    };
    warn_erasing(&exp);
    team.open(&exp)?;
    let _over = team.over_on_drop();
    let stop = StopFlag::new();
    stop.install_signal_handlers()?;
    let _roots = ready_roots(&mut exp, &stop)?;
    let mut store = Store::open(&g.db)?;
    let mut printer = Printer::new(g.quiet);
    let outcome = run_campaign(Session {
        exp: &exp,
        store: &mut store,
        stop: &stop,
        printer: &mut printer,
        team: &team,
        tags: &tags,
        replica: None,
    })?;
    finish(&g.db, &store, &outcome, g.quiet, a.fail_on_failure)
}

/// The experiment to run, or the exit status once said why not: 2 for a
/// file that does not validate, 1 for a found file that may not run
/// without being named.
fn chosen(file: Option<&Path>) -> Result<experiment::Experiment, ExitCode> {
    let chosen = super::experiment_file::load(file, is_root()).map_err(|e| {
        super::experiment_file::refuse(&e);
        ExitCode::from(EXIT_INVALID)
    })?;
    match chosen.refusal() {
        Some(why) => {
            errln!("error: {why}");
            Err(ExitCode::FAILURE)
        }
        None => Ok(chosen.exp),
    }
}

/// The roots the experiment takes software from, made ready (built once
/// where needed) after everything `run` would refuse has been judged, and
/// the variants named by release; held until the campaign ends.
pub(super) fn ready_roots(exp: &mut experiment::Experiment, stop: &StopFlag) -> Result<Roots> {
    let roots = crate::runner::roots::needs(exp);
    if roots.iter().any(|n| !n.spec.is_host()) {
        crate::runner::refuse(crate::runner::refusals(exp))?;
    }
    crate::runner::roots::prepare(exp, stop)
}

/// Names each device the campaign erases, before anything is
/// provisioned, even with -q.
pub(super) fn warn_erasing(exp: &experiment::Experiment) {
    for e in super::experiment_file::erased(exp) {
        errln!("warning: this campaign will {e}: everything on it is destroyed");
    }
}

/// A new campaign's tags and the team rank 0 leads it with.
pub(super) type Started = (Vec<(String, String)>, Team);

/// A new campaign's `--tag`s and the team this process joins; `Err(code)`
/// when this process is done: a bad `--tag`, or a rank other than 0 that
/// followed rank 0's campaign.
pub(super) fn tagged_team(tag: &[String]) -> Result<std::result::Result<Started, ExitCode>> {
    let tags = match crate::provenance::parse_tags(tag) {
        Ok(t) => t,
        Err(e) => {
            errln!("error: --tag: {e}");
            return Ok(Err(ExitCode::from(EXIT_INVALID)));
        }
    };
    let mut team = Team::join()?;
    if !team.is_root() {
        return follow(&mut team).map(Err);
    }
    Ok(Ok((tags, team)))
}

/// The ranks other than 0, for a whole campaign.
pub(super) fn follow(team: &mut Team) -> Result<ExitCode> {
    match crate::ranks::follow::follow(team) {
        Ok(true) => Ok(ExitCode::SUCCESS),
        Ok(false) => Ok(ExitCode::from(EXIT_INVALID)),
        Err(e) => Err(e.context(format!("rank {}", team.rank()))),
    }
}

/// `storlab run --resume CAMPAIGN`.
fn resume(db: &Path, campaign: &str, quiet: bool, strict: bool) -> Result<ExitCode> {
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
    warn_erasing(&exp);
    team.open(&exp)?;
    let _over = team.over_on_drop();
    let stop = StopFlag::new();
    stop.install_signal_handlers()?;
    let mut exp = exp;
    let _roots = ready_roots(&mut exp, &stop)?;
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
    // Stored under the names of the releases they ran: the roots are in
    // the cache since.
    crate::runner::roots::name_ready(&mut exp);
    // A replica resumes in its own order.
    exp.plan.replica = store.replica(id)?.map_or(0, |r| r.number);
    let names_match = exp
        .targets
        .iter()
        .map(|t| &t.name)
        .eq(r.target_names.iter())
        // A capacity search's probes were added after the experiment's
        // own workloads, as the search ran: they are made again.
        && exp
            .workloads
            .iter()
            .map(|w| &w.name)
            .eq(r.workload_names.iter().take(exp.workloads.len()));
    if !names_match {
        anyhow::bail!("campaign {id}'s stored targets and workloads do not match its experiment; it cannot be resumed");
    }
    for (w, stored) in exp.workloads.iter().zip(&r.workload_params) {
        if &w.params.to_json() != stored {
            anyhow::bail!("workload `{}` of campaign {id} resolves differently now (a file it reads, such as a fio job file, changed); it cannot be resumed", w.name);
        }
    }
    Ok(Some((store, r, exp)))
}

pub(super) fn finish(
    db: &Path,
    store: &Store,
    outcome: &Outcome,
    quiet: bool,
    strict: bool,
) -> Result<ExitCode> {
    let summary = outline::Options {
        summary_only: true,
        ..Default::default()
    };
    let (data, analysis) = super::query::analysed(store, outcome.campaign, &summary)?;
    let doc = outline::terminal(&analysis);
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
