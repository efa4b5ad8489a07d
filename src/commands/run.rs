//! `storlab run [EXPERIMENT]`.

use std::path::Path;
use std::process::ExitCode;

use anyhow::Result;

use super::{EXIT_INTERRUPTED, EXIT_INVALID};
use crate::experiment::{self, builtin};
use crate::measure::StopFlag;
use crate::progress::Printer;
use crate::report::summary::{summary_header, summary_table};
use crate::runner::run_campaign;
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
    let data = store.load_campaign(outcome.campaign)?;
    print!("{}", summary_header(&data));
    print!("{}", summary_table(&data).render_text());
    if !quiet {
        eprintln!(
            "results stored in {} as campaign {}",
            db.display(),
            outcome.campaign
        );
    }
    if outcome.interrupted {
        eprintln!("interrupted: finished runs are stored");
        return Ok(ExitCode::from(EXIT_INTERRUPTED));
    }
    Ok(ExitCode::SUCCESS)
}
