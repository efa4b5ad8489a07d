//! Which experiment `run` and `check` take when no file is given, as cargo
//! finds Cargo.toml: `./experiment.toml` when there is one (what `storlab
//! init` writes), else the built-in quick experiment. Either way they say
//! which, so that nobody runs one believing it the other.
//!
//! A found file is a file nobody named, so it is trusted as git trusts a
//! repository (`safe.directory`): it is announced with its absolute path
//! and owner, even with `-q`, and refused when someone else could have
//! put it there — owned by neither the caller nor root, writable by
//! others, or in a directory others can write to (`/tmp`, sticky or not)
//! — or when it would erase a device. Named on the command line, it runs.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use crate::experiment::{self, builtin, Experiment, ExperimentError};

/// The file `run` and `check` look for in the current directory.
pub const DEFAULT: &str = "experiment.toml";

/// The experiment a command takes, and whether it was found rather than
/// named.
pub struct Chosen {
    pub exp: Experiment,
    /// Why a found file may not run (empty: it may, or it was named).
    pub distrust: Vec<String>,
    /// The found file's absolute path, for the command that runs it.
    pub found: Option<PathBuf>,
}

impl Chosen {
    /// The refusal of a found file that may not run: why, and how to run
    /// it anyway.
    pub fn refusal(&self) -> Option<String> {
        let path = self.found.as_ref()?;
        (!self.distrust.is_empty()).then(|| {
            format!(
                "the found ./{DEFAULT} is not run without being named: {}. Read it, then name it to run it: `storlab run {}`",
                self.distrust.join("; "),
                path.display()
            )
        })
    }
}

/// The experiment `file` names, else `./experiment.toml`, else the
/// built-in quick experiment; says on stderr which one when none was named.
pub fn load(file: Option<&Path>, root: bool) -> Result<Chosen, ExperimentError> {
    if let Some(f) = file {
        return Ok(Chosen {
            exp: experiment::load(f)?,
            distrust: Vec::new(),
            found: None,
        });
    }
    let here = Path::new(DEFAULT);
    if std::fs::symlink_metadata(here).is_ok() {
        return found(here);
    }
    if !crate::console::quiet() {
        errln!(
            "no ./{DEFAULT} here: the built-in quick experiment (`storlab init` writes it to edit)"
        );
    }
    Ok(Chosen {
        exp: builtin::quick(root)?,
        distrust: Vec::new(),
        found: None,
    })
}

/// `./experiment.toml`, announced (even with `-q`: nobody named it) and
/// judged.
fn found(here: &Path) -> Result<Chosen, ExperimentError> {
    let path = std::fs::canonicalize(here).unwrap_or_else(|_| absolute(here));
    let owner = std::fs::metadata(&path)
        .map(|m| user_name(m.uid()))
        .unwrap_or_else(|_| "?".into());
    errln!(
        "using {} (owned by {owner}): ./{DEFAULT} found here, no experiment file given",
        crate::foreign::visible(&path.display().to_string())
    );
    let exp = experiment::load(here)?;
    // The name found, then what it leads to if it is a symlink.
    let mut distrust = untrusted(&absolute(here));
    if std::fs::symlink_metadata(here).is_ok_and(|m| m.file_type().is_symlink()) {
        distrust.extend(untrusted(&path));
    }
    distrust.extend(erased(&exp).into_iter().map(|e| format!("it would {e}")));
    distrust.dedup();
    Ok(Chosen {
        exp,
        distrust,
        found: Some(path),
    })
}

fn absolute(p: &Path) -> PathBuf {
    std::env::current_dir()
        .map(|d| d.join(p))
        .unwrap_or_else(|_| p.to_path_buf())
}

/// What makes the file at `path` (not followed if a symlink) one someone
/// other than the caller or root could have written.
fn untrusted(path: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let shown = crate::foreign::visible(&path.display().to_string()).into_owned();
    let Ok(meta) = std::fs::symlink_metadata(path) else {
        return out;
    };
    // SAFETY: geteuid has no preconditions.
    let me = unsafe { libc::geteuid() };
    if meta.uid() != me && meta.uid() != 0 {
        out.push(format!(
            "{shown} is owned by {} (uid {}), neither you ({}) nor root",
            user_name(meta.uid()),
            meta.uid(),
            user_name(me)
        ));
    }
    if !meta.file_type().is_symlink() {
        if let Some(w) = writable_by_others(&meta) {
            out.push(format!("{shown} is writable by {w}"));
        }
    }
    out.extend(open_directory(path));
    out
}

/// The directory holding `path`, if others can write to it (sticky or
/// not: anyone may add a file there).
fn open_directory(path: &Path) -> Option<String> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let dir = std::fs::canonicalize(&dir).unwrap_or(dir);
    let d = std::fs::metadata(&dir).ok()?;
    let w = writable_by_others(&d)?;
    let sticky = match d.mode() & libc::S_ISVTX != 0 {
        true => ", sticky",
        false => "",
    };
    Some(format!(
        "its directory {} is writable by {w} (mode {:04o}{sticky})",
        crate::foreign::visible(&dir.display().to_string()),
        d.mode() & 0o7777
    ))
}

/// Who besides the owner may write a file or directory: everyone, or a
/// group other than the owner's own (a user-private group, as Debian
/// makes, holds the owner alone).
fn writable_by_others(meta: &std::fs::Metadata) -> Option<String> {
    let mode = meta.mode();
    if mode & libc::S_IWOTH != 0 {
        return Some("everyone".into());
    }
    let group = group_name(meta.gid());
    let private = group.as_deref() == Some(user_name(meta.uid()).as_str());
    (mode & libc::S_IWGRP != 0 && !private).then(|| match group {
        Some(g) => format!("group {g}"),
        None => format!("group {}", meta.gid()),
    })
}

/// What running `exp` erases that storlab did not create: `erase
/// /dev/loop0 (target `fast`, block)`, one per target that names one.
pub fn erased(exp: &Experiment) -> Vec<String> {
    exp.targets
        .iter()
        .filter_map(|t| {
            let device = t.config.erases()?;
            Some(format!(
                "erase {} (target `{}`, {})",
                crate::foreign::visible(device),
                t.name,
                t.kind.name()
            ))
        })
        .collect()
}

/// A user's name from the password database, else the uid.
pub fn user_name(uid: u32) -> String {
    let mut pwd: libc::passwd = unsafe { std::mem::zeroed() };
    let mut buf = vec![0u8; 16384];
    let mut result: *mut libc::passwd = std::ptr::null_mut();
    // SAFETY: every pointer is valid for the call; buf outlives pw_name's use.
    let rc = unsafe {
        libc::getpwuid_r(
            uid,
            &mut pwd,
            buf.as_mut_ptr().cast(),
            buf.len(),
            &mut result,
        )
    };
    if rc != 0 || result.is_null() {
        return format!("uid {uid}");
    }
    // SAFETY: pw_name points into buf, NUL-terminated by getpwuid_r.
    unsafe { std::ffi::CStr::from_ptr(pwd.pw_name) }
        .to_string_lossy()
        .into_owned()
}

/// A group's name from the group database.
fn group_name(gid: u32) -> Option<String> {
    let mut grp: libc::group = unsafe { std::mem::zeroed() };
    let mut buf = vec![0u8; 16384];
    let mut result: *mut libc::group = std::ptr::null_mut();
    // SAFETY: every pointer is valid for the call; buf outlives gr_name's use.
    let rc = unsafe {
        libc::getgrgid_r(
            gid,
            &mut grp,
            buf.as_mut_ptr().cast(),
            buf.len(),
            &mut result,
        )
    };
    if rc != 0 || result.is_null() {
        return None;
    }
    // SAFETY: gr_name points into buf, NUL-terminated by getgrgid_r.
    Some(
        unsafe { std::ffi::CStr::from_ptr(grp.gr_name) }
            .to_string_lossy()
            .into_owned(),
    )
}

/// Prints an error with its line and caret; exit status [`super::EXIT_INVALID`].
pub fn refuse(e: &ExperimentError) {
    crate::console::to_stderr(&e.render());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn root_is_named() {
        assert_eq!(user_name(0), "root");
        assert_eq!(group_name(0).as_deref(), Some("root"));
        assert_eq!(user_name(4_000_000_000), "uid 4000000000");
    }
}
