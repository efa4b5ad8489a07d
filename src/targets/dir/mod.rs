//! Target `dir`: an existing directory, on whatever filesystem it lives.
//! storlab only ever writes inside its own working directory below it.
//! Under MPI across hosts it must be the same filesystem at the same path
//! on every host: one the user mounted everywhere.

use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};

use crate::params::{declare, Fault};
use crate::provision::journal::Journal;
use crate::targets::{Reach, Target, TargetConfig};

declare! {
    /// The parameters of a `dir` target.
    pub struct DirParams {
        path: string => "the existing directory to test (storlab works in a subdirectory it creates and removes)",
    }
}

impl TargetConfig for DirParams {
    fn validate(&self) -> Result<(), Fault> {
        match &self.path {
            None => Err((
                "path",
                "a dir target needs `path`, the directory to test".into(),
            )),
            Some(path) => validate_dir_param("path", path),
        }
    }

    fn build(&self, _: &str, _: &Journal) -> Box<dyn Target> {
        Box::new(Dir::new(self))
    }
}

/// Refuses `/` (however written) for a directory parameter, and `..`:
/// storlab creates and removes only below paths written without it.
pub fn validate_dir_param(key: &'static str, path: &str) -> Result<(), Fault> {
    if is_slash(Path::new(path)) {
        return Err((
            key,
            format!("refusing `/` as `{key}`; name a directory below it, e.g. /srv/test"),
        ));
    }
    if Path::new(path)
        .components()
        .any(|c| c == std::path::Component::ParentDir)
    {
        let instead = match Path::new(path).canonicalize() {
            Ok(real) => format!("write the directory it reaches, {}", real.display()),
            Err(_) => "write the directory without it".to_string(),
        };
        return Err((
            key,
            format!("`{key}` = \"{path}\" climbs with `..`, and storlab creates and removes only below a path written without it; {instead}"),
        ));
    }
    Ok(())
}

/// [`validate_dir_param`] for a directory that holds what storlab makes
/// (images, bricks): also absolute, since what storlab makes there is
/// journaled by absolute path.
pub fn validate_holder_dir(key: &'static str, path: &str) -> Result<(), Fault> {
    validate_dir_param(key, path)?;
    if !Path::new(path).is_absolute() {
        return Err((
            key,
            format!(
                "`{key}` = \"{path}\" is a relative path; write it from the root, e.g. /var/tmp"
            ),
        ));
    }
    Ok(())
}

fn is_slash(path: &Path) -> bool {
    path.canonicalize().unwrap_or_else(|_| path.to_path_buf()) == Path::new("/")
        || path.components().all(|c| {
            matches!(
                c,
                std::path::Component::RootDir | std::path::Component::CurDir
            )
        }) && path.has_root()
}

/// An existing directory other than `/`, or a clear error.
pub fn check_is_dir(path: &Path) -> Result<()> {
    let meta = std::fs::metadata(path).with_context(|| {
        format!(
            "{}: cannot use it; create it or fix the path",
            path.display()
        )
    })?;
    if !meta.is_dir() {
        bail!(
            "{} is not a directory; the path must name a directory",
            path.display()
        );
    }
    if is_slash(path) {
        bail!(
            "refusing `/` ({}); name a directory below it",
            path.display()
        );
    }
    Ok(())
}

pub struct Dir {
    path: PathBuf,
}

impl Dir {
    pub fn new(p: &DirParams) -> Dir {
        Dir {
            path: PathBuf::from(p.path.as_deref().unwrap_or_default()),
        }
    }
}

impl Target for Dir {
    fn preflight(&self) -> Result<()> {
        check_is_dir(&self.path).context("dir target")
    }

    fn provision(&mut self) -> Result<()> {
        Ok(())
    }

    fn root(&self) -> &Path {
        &self.path
    }

    fn reach(&self) -> Reach {
        Reach::SamePath
    }

    fn remount(&mut self) -> Result<()> {
        Ok(())
    }

    fn teardown(&mut self) -> Result<()> {
        Ok(())
    }
}
