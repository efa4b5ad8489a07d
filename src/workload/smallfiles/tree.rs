//! The tree one smallfiles thread works in, `t<T>/d<D>/f<N>` (renamed to
//! `r<N>` in the same directory), with every path built before the run so
//! that the measured loops build none; and directory listing through libc,
//! which allocates nothing per entry.

use std::ffi::{CStr, CString};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

/// One thread's directories and file names.
#[derive(Debug, Clone)]
pub struct Tree {
    pub dirs: Vec<PathBuf>,
    pub dirs_c: Vec<CString>,
    pub files: Vec<PathBuf>,
    pub renamed: Vec<PathBuf>,
}

impl Tree {
    /// The tree of thread `thread` under `base`: `files` spread round-robin
    /// over `dirs` directories.
    pub fn new(base: &Path, thread: usize, dirs: usize, files: usize) -> Tree {
        let root = base.join(format!("t{thread}"));
        let dir_paths: Vec<PathBuf> = (0..dirs).map(|d| root.join(format!("d{d}"))).collect();
        let dirs_c = dir_paths
            .iter()
            .map(|d| CString::new(d.as_os_str().as_bytes()).unwrap_or_default())
            .collect();
        let named = |prefix: &str| -> Vec<PathBuf> {
            (0..files)
                .map(|i| dir_paths[i % dirs].join(format!("{prefix}{i}")))
                .collect()
        };
        Tree {
            files: named("f"),
            renamed: named("r"),
            dirs: dir_paths,
            dirs_c,
        }
    }

    /// Creates the directories (untimed).
    pub fn make_dirs(&self) -> Result<()> {
        for d in &self.dirs {
            std::fs::create_dir_all(d)
                .with_context(|| format!("creating directory {}", d.display()))?;
        }
        Ok(())
    }
}

/// Number of entries in a directory, `.` and `..` excluded.
pub fn count_entries(dir: &CStr) -> std::io::Result<u64> {
    // SAFETY: dir is a valid NUL-terminated path; the stream is closed below.
    let d = unsafe { libc::opendir(dir.as_ptr()) };
    if d.is_null() {
        return Err(std::io::Error::last_os_error());
    }
    let mut n = 0;
    loop {
        // SAFETY: d is an open directory stream.
        let e = unsafe { libc::readdir(d) };
        if e.is_null() {
            break;
        }
        // SAFETY: readdir returns a valid entry whose name is NUL-terminated.
        let name = unsafe { CStr::from_ptr((*e).d_name.as_ptr()) }.to_bytes();
        if name != b"." && name != b".." {
            n += 1;
        }
    }
    // SAFETY: d is open and not used afterwards.
    unsafe { libc::closedir(d) };
    Ok(n)
}
