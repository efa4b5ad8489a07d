//! What undoing a provisioned resource yields and says, and the one way
//! storlab removes a directory it made: with its contents, but never
//! across a mount below it.

use std::path::Path;

use anyhow::{bail, Context, Result};

use super::mount;

/// What undoing a resource did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Undone {
    /// It is gone (or was already).
    Gone,
    /// It is deliberately left in place, for the reason given (a daemon
    /// another campaign still uses): it stays in the journal, so that a
    /// later teardown or `storlab cleanup` undoes it.
    Kept(String),
}

/// What `storlab cleanup` says as it goes: a thing done (stdout) or a
/// thing that failed or is left (stderr).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Said {
    Did(String),
    Failed(String),
}

/// Removes `path` and its contents, refusing while something is mounted
/// at or below it; succeeds when it is already gone.
pub fn remove_dir(path: &Path) -> Result<()> {
    if !path.exists() {
        return Ok(());
    }
    if let Some(m) = mount::mounts_under(path).first() {
        bail!(
            "not removing {}: {} is still mounted; unmount it first",
            path.display(),
            m
        );
    }
    std::fs::remove_dir_all(path).with_context(|| format!("removing {}", path.display()))
}
