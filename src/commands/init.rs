//! `storlab init [FILE]`: a commented starter experiment to edit — the
//! built-in quick experiment, as `storlab run` without a file runs it.

use std::path::Path;
use std::process::ExitCode;

use anyhow::Result;

use super::EXIT_INVALID;
use crate::experiment::builtin::quick_source;
use crate::host::is_root;

pub fn init(a: &crate::cli::InitArgs) -> Result<ExitCode> {
    let (file, force) = (a.file.as_path(), a.force);
    let text = quick_source(is_root());
    if file.as_os_str() == "-" {
        out!("{text}");
        return Ok(ExitCode::SUCCESS);
    }
    // symlink_metadata: a symlink, even a dangling one, is something there.
    if std::fs::symlink_metadata(file).is_ok() && !force {
        errln!(
            "error: {} exists; edit it, pick another name, or pass --force to replace it",
            file.display()
        );
        return Ok(ExitCode::from(EXIT_INVALID));
    }
    if file.is_dir() {
        errln!(
            "error: {} is a directory; name the experiment file to write (e.g. {})",
            file.display(),
            file.join("experiment.toml").display()
        );
        return Ok(ExitCode::from(EXIT_INVALID));
    }
    // --force replaces the file; a symlink there is replaced, not written through.
    super::destination::replace_file(file, text.as_bytes())?;
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
