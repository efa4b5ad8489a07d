//! `storlab run [EXPERIMENT]`.

use std::path::Path;
use std::process::ExitCode;

use anyhow::Result;

use super::{EXIT_INTERRUPTED, EXIT_INVALID};
use crate::experiment::{self, builtin};
use crate::measure::StopFlag;
use crate::progress::Printer;
use crate::report::summary::{summary_header, summary_table, warnings_text};
use crate::runner::{resume_campaign, run_campaign, Outcome};
use crate::store::Store;
use crate::target::tmpfs::is_root;

pub fn run(db: &Path, file: Option<&Path>, quiet: bool) -> Result<ExitCode> {
    let loaded = match file {
        Some(f) => experiment::load(f),
        None => builtin::quick(is_root()),
    };
    let exp = match loaded {
        Ok(e) => e,
        Err(e) => {
            eprintln!("error: {e}");
            return Ok(ExitCode::from(EXIT_INVALID));
        }
    };
    let stop = StopFlag::new();
    stop.install_signal_handlers()?;
    let mut store = Store::open(db)?;
    let mut printer = Printer::new(quiet);
    let outcome = run_campaign(&exp, &mut store, &stop, &mut printer)?;
    finish(db, &store, &outcome, quiet)
}

/// `storlab run --resume CAMPAIGN`.
pub fn resume(db: &Path, campaign: &str, quiet: bool) -> Result<ExitCode> {
    let mut store = Store::open_existing(db)?;
    let id = store.resolve_campaign(Some(campaign))?;
    let r = store.resumable(id)?;
    let exp = match experiment::parse_experiment(&r.origin, &r.source) {
        Ok(e) => e,
        Err(e) => {
            eprintln!("error: the stored experiment of campaign {id} no longer validates: {e}");
            return Ok(ExitCode::from(EXIT_INVALID));
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
    for (w, stored) in exp.workloads.iter().zip(&r.workload_params) {
        if &w.params.to_json() != stored {
            anyhow::bail!("workload `{}` of campaign {id} resolves differently now (a file it reads, such as a fio job file, changed); it cannot be resumed", w.name);
        }
    }
    let stop = StopFlag::new();
    stop.install_signal_handlers()?;
    let mut printer = Printer::new(quiet);
    let outcome = resume_campaign(&exp, &mut store, r.ids, &stop, &mut printer)?;
    finish(db, &store, &outcome, quiet)
}

fn finish(db: &Path, store: &Store, outcome: &Outcome, quiet: bool) -> Result<ExitCode> {
    let data = store.load_campaign(outcome.campaign)?;
    out!("{}", summary_header(&data));
    out!("{}", summary_table(&data).render_text());
    out!("{}", crate::report::matrix::summary_text(&data));
    out!("{}", warnings_text(&data));
    if !quiet {
        eprintln!(
            "results stored in {} as campaign {}",
            db.display(),
            outcome.campaign
        );
    }
    if outcome.interrupted {
        eprintln!(
            "interrupted: finished runs are stored; continue with `storlab run --resume {}`",
            outcome.campaign
        );
        return Ok(ExitCode::from(EXIT_INTERRUPTED));
    }
    Ok(ExitCode::SUCCESS)
}
