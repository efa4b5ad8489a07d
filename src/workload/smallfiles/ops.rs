//! The seven smallfiles operations and one thread's pass over its tree for
//! one of them. Each file (or, for readdir, each directory) is one timed
//! operation recorded into that operation's histogram; paths and the data
//! buffer exist before the loop, which allocates nothing.

use std::fs::{File, OpenOptions};
use std::io::{Read, Write};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use anyhow::{Context, Result};
use hdrhistogram::Histogram;

use super::tree::{count_entries, Tree};

/// One operation, in the order the workload runs them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    Create,
    Stat,
    Read,
    Append,
    Rename,
    Readdir,
    Delete,
}

impl Op {
    pub const ALL: &'static [Op] = &[
        Op::Create,
        Op::Stat,
        Op::Read,
        Op::Append,
        Op::Rename,
        Op::Readdir,
        Op::Delete,
    ];
    pub const NAMES: &'static [&'static str] = &[
        "create", "stat", "read", "append", "rename", "readdir", "delete",
    ];

    pub fn name(self) -> &'static str {
        Op::NAMES[self as usize]
    }

    pub fn parse(s: &str) -> Option<Op> {
        Op::NAMES.iter().position(|n| *n == s).map(|i| Op::ALL[i])
    }
}

/// What a thread needs to run one pass.
pub struct Pass<'a> {
    pub tree: &'a Tree,
    pub data: &'a [u8],
    pub fsync: bool,
    pub stop: &'a AtomicBool,
}

/// A thread's state across passes: whether its files carry the renamed names.
#[derive(Debug, Default)]
pub struct ThreadState {
    pub renamed: bool,
    /// Entries seen by readdir.
    pub entries: u64,
}

impl Pass<'_> {
    fn names<'b>(&'b self, st: &ThreadState) -> &'b [std::path::PathBuf] {
        if st.renamed {
            &self.tree.renamed
        } else {
            &self.tree.files
        }
    }

    /// Runs `op` over the whole tree; returns the operations done.
    pub fn run(
        &self,
        op: Op,
        st: &mut ThreadState,
        buf: &mut [u8],
        h: &mut Histogram<u64>,
    ) -> Result<u64> {
        if op == Op::Readdir {
            return self.readdir(st, h);
        }
        let names = self.names(st);
        let mut n = 0;
        for (i, path) in names.iter().enumerate() {
            if self.stop.load(Ordering::Relaxed) {
                break;
            }
            let t = Instant::now();
            match op {
                Op::Create => self.create(path),
                Op::Stat => std::fs::symlink_metadata(path)
                    .map(drop)
                    .map_err(Into::into),
                Op::Read => read_all(path, buf),
                Op::Append => self.append(path),
                Op::Rename => std::fs::rename(path, &self.tree.renamed[i]).map_err(Into::into),
                Op::Delete => std::fs::remove_file(path).map_err(Into::into),
                Op::Readdir => unreachable!("handled above"),
            }
            .with_context(|| format!("{} of {}", op.name(), path.display()))?;
            h.saturating_record((t.elapsed().as_nanos() as u64).max(1));
            n += 1;
        }
        if op == Op::Rename {
            st.renamed = true;
        }
        Ok(n)
    }

    pub fn create(&self, path: &Path) -> Result<()> {
        let mut f = OpenOptions::new().write(true).create_new(true).open(path)?;
        f.write_all(self.data)?;
        if self.fsync {
            f.sync_all()?;
        }
        Ok(())
    }

    fn append(&self, path: &Path) -> Result<()> {
        let mut f = OpenOptions::new().append(true).open(path)?;
        f.write_all(self.data)?;
        Ok(())
    }

    fn readdir(&self, st: &mut ThreadState, h: &mut Histogram<u64>) -> Result<u64> {
        let mut n = 0;
        for (c, dir) in self.tree.dirs_c.iter().zip(&self.tree.dirs) {
            if self.stop.load(Ordering::Relaxed) {
                break;
            }
            let t = Instant::now();
            st.entries += count_entries(c).with_context(|| format!("listing {}", dir.display()))?;
            h.saturating_record((t.elapsed().as_nanos() as u64).max(1));
            n += 1;
        }
        Ok(n)
    }
}

/// Reads a whole file through `buf`.
fn read_all(path: &Path, buf: &mut [u8]) -> Result<()> {
    let mut f = File::open(path)?;
    while f.read(buf)? > 0 {}
    Ok(())
}
