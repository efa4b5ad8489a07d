//! `storlab cleanup`: prints what undoing the journals of killed campaigns
//! does ([`crate::provision::cleanup`] holds the rules); the status is 1
//! when something could not be undone. A reader that goes away (`storlab
//! cleanup | head -1`) stops the printing, never the undoing.

use std::process::ExitCode;

use anyhow::Result;

use crate::provision::cleanup::undo_journals;
use crate::provision::journal::state_dir;
use crate::provision::resource::Said;

pub fn cleanup() -> Result<ExitCode> {
    let ok = undo_journals(
        &state_dir(),
        crate::targets::RESOURCES,
        &mut |said| match said {
            Said::Did(line) => crate::console::to_stdout_while_working(&format!("{line}\n")),
            Said::Failed(line) => errln!("{line}"),
        },
    );
    Ok(if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}
