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
        Some(path) if Path::new(path) == Path::new("/") => Err((
            "path",
            "refusing `/` as a dir target; name a directory below it, e.g. /srv/test".into(),
        )),
        Some(_) => Ok(()),
    }
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
        let meta = std::fs::metadata(&self.path).with_context(|| {
            format!(
                "dir target {}: cannot use it; create it or fix `path`",
                self.path.display()
            )
        })?;
        if !meta.is_dir() {
            bail!(
                "dir target {} is not a directory; `path` must name a directory",
                self.path.display()
            );
        }
        let canonical = self
            .path
            .canonicalize()
            .unwrap_or_else(|_| self.path.clone());
        if canonical == Path::new("/") {
            bail!("refusing `/` as a dir target; name a directory below it");
        }
        Ok(())
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
