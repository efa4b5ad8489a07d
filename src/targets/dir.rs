//! Target `dir`: an existing directory, on whatever filesystem it lives.
//! storlab only ever writes inside its own working directory below it.

use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};

use super::Target;
use crate::experiment::params::{ParamSpec, ParamType, Params};

pub const PARAMS: &[ParamSpec] = &[ParamSpec {
    name: "path",
    ty: ParamType::Str,
    default: None,
    help: "the existing directory to test (storlab works in a subdirectory it creates and removes)",
}];

pub fn validate(p: &Params) -> Result<(), (&'static str, String)> {
    match p.str("path") {
        None => Err((
            "path",
            "a dir target needs `path`, the directory to test".into(),
        )),
        Some(_) => validate_dir_param(p, "path"),
    }
}

/// Refuses `/` (however written) for a directory parameter.
pub fn validate_dir_param(p: &Params, key: &'static str) -> Result<(), (&'static str, String)> {
    match p.str(key) {
        Some(path) if is_slash(Path::new(path)) => Err((
            key,
            format!("refusing `/` as `{key}`; name a directory below it, e.g. /srv/test"),
        )),
        _ => Ok(()),
    }
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
    pub fn new(p: &Params) -> Dir {
        Dir {
            path: PathBuf::from(p.str("path").unwrap_or(".")),
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

    fn remount(&mut self) -> Result<()> {
        Ok(())
    }

    fn teardown(&mut self) -> Result<()> {
        Ok(())
    }
}
