//! `storlab completions SHELL` and `storlab man [DIR]`: shell completions
//! and man pages generated from the clap declarations in [`crate::cli`],
//! so that they list exactly the commands and options storlab has.

use std::path::Path;
use std::process::ExitCode;

use anyhow::{Context, Result};
use clap::CommandFactory;

use crate::cli::Cli;

pub fn completions(a: &crate::cli::CompletionsArgs) -> Result<ExitCode> {
    let shell = a.shell;
    let mut script = Vec::new();
    clap_complete::generate(shell, &mut Cli::command(), "storlab", &mut script);
    out!("{}", String::from_utf8_lossy(&script));
    Ok(ExitCode::SUCCESS)
}

/// The top page on stdout, or every page (`storlab.1`, `storlab-run.1`, …)
/// written into `dir`.
pub fn man(a: &crate::cli::ManArgs) -> Result<ExitCode> {
    let dir = a.dir.as_deref();
    let cmd = Cli::command();
    match dir {
        None => {
            let mut page = Vec::new();
            clap_mangen::Man::new(cmd).render(&mut page)?;
            out!("{}", String::from_utf8_lossy(&page));
        }
        Some(dir) => {
            std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
            write_pages(cmd, dir)?;
            crate::console::wrote(dir);
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// Writes every page into `dir`, each as a new file renamed into place:
/// a symlink at a page's name is replaced, never written through.
fn write_pages(cmd: clap::Command, dir: &Path) -> Result<()> {
    let staging = tempfile::Builder::new()
        .prefix(".storlab-man-")
        .tempdir_in(dir)
        .with_context(|| format!("writing man pages into {}", dir.display()))?;
    clap_mangen::generate_to(cmd, staging.path())
        .with_context(|| format!("writing man pages into {}", dir.display()))?;
    for entry in std::fs::read_dir(staging.path())? {
        let entry = entry?;
        let to = dir.join(entry.file_name());
        std::fs::rename(entry.path(), &to).with_context(|| format!("writing {}", to.display()))?;
    }
    Ok(())
}
