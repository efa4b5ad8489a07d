//! `storlab init [FILE]`: a commented starter experiment to edit — the
//! built-in quick experiment, as `storlab run` without a file runs it.

use std::path::Path;
use std::process::ExitCode;

use anyhow::{Context, Result};

use super::EXIT_INVALID;
use crate::experiment::builtin::quick_source;
use crate::host::is_root;

pub fn init(file: &Path, force: bool) -> Result<ExitCode> {
    let text = quick_source(is_root());
    if file.as_os_str() == "-" {
        out!("{text}");
        return Ok(ExitCode::SUCCESS);
    }
    if file.exists() && !force {
        errln!(
            "error: {} exists; edit it, pick another name, or pass --force to replace it",
            file.display()
        );
        return Ok(ExitCode::from(EXIT_INVALID));
    }
    std::fs::write(file, text).with_context(|| format!("writing {}", file.display()))?;
    crate::console::wrote(file);
    if !crate::console::quiet() {
        // Without a file, check and run take ./experiment.toml.
        let named = if file == Path::new(super::experiment_file::DEFAULT) {
            String::new()
        } else {
            format!(" {}", file.display())
        };
        errln!("next: edit it, then `storlab check{named}` and `storlab run{named}`");
    }
    Ok(ExitCode::SUCCESS)
}
