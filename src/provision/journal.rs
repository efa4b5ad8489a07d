//! The provisioning journal: every resource a campaign creates (directory,
//! image, loop device, mount, pool, volume, daemon) is appended to a state
//! file and fsync'd *before* it is created, and marked released once it is
//! undone. Teardown undoes a target's resources in reverse order; `storlab
//! cleanup` replays what a killed campaign left ([`super::cleanup`]). One
//! file per campaign process, removed when everything in it was released.
//! A journal is made with the target kinds ([`Kinds`]) that undo what only
//! they know how to.

use std::collections::{BTreeMap, BTreeSet};
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use anyhow::{bail, Context, Result};
use serde::{Deserialize, Serialize};

use super::owner::Owner;
pub use super::resource::{Kinds, Resource};
use super::site::Site;
use super::site_fs;
pub use super::undo::Undone;

const SUFFIX: &str = ".journal";

#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
enum Line {
    Campaign {
        pid: u32,
        started: String,
        /// The campaign process (pid and start time); absent in journals
        /// of storlab before 0.1 kept it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        owner: Option<Owner>,
    },
    Acquire {
        id: u64,
        resource: Resource,
    },
    Release {
        id: u64,
    },
}

/// A campaign's journal; clones share one file.
#[derive(Clone)]
pub struct Journal {
    inner: Arc<Mutex<Inner>>,
    kinds: Kinds,
}

impl std::fmt::Debug for Journal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Journal({})", self.path().display())
    }
}

struct Inner {
    path: PathBuf,
    file: Option<File>,
    next: u64,
    open: BTreeMap<u64, Resource>,
    /// Held on purpose (see [`Undone::Kept`]): left to `storlab cleanup`.
    kept: BTreeSet<u64>,
}

/// Where journals live: `$STORLAB_STATE_DIR`, else /var/lib/storlab for root,
/// else `$XDG_STATE_HOME/storlab` (or ~/.local/state/storlab).
pub fn state_dir() -> PathBuf {
    if let Some(d) = std::env::var_os("STORLAB_STATE_DIR").filter(|d| !d.is_empty()) {
        return PathBuf::from(d);
    }
    if crate::host::is_root() {
        return PathBuf::from("/var/lib/storlab");
    }
    if let Some(d) = std::env::var_os("XDG_STATE_HOME").filter(|d| !d.is_empty()) {
        return PathBuf::from(d).join("storlab");
    }
    let home = std::env::var_os("HOME").unwrap_or_else(|| "/tmp".into());
    PathBuf::from(home).join(".local/state/storlab")
}

impl Journal {
    /// The journal of this process's campaign, created on first use.
    pub fn for_campaign(kinds: Kinds) -> Journal {
        let name = format!("campaign-{}{SUFFIX}", std::process::id());
        Journal::at(state_dir().join(name), kinds)
    }

    pub fn at(path: PathBuf, kinds: Kinds) -> Journal {
        let inner = Inner {
            path,
            file: None,
            next: 1,
            open: BTreeMap::new(),
            kept: BTreeSet::new(),
        };
        Journal {
            inner: Arc::new(Mutex::new(inner)),
            kinds,
        }
    }

    /// The target kinds that undo what only they know how to.
    pub fn kinds(&self) -> Kinds {
        self.kinds
    }

    pub fn path(&self) -> PathBuf {
        self.lock().path.clone()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Records `resource` durably; call before creating it. Refuses a
    /// resource outside storlab's naming scheme, which cleanup would refuse
    /// to undo.
    pub fn acquire(&self, resource: &Resource) -> Result<u64> {
        resource.check_ours()?;
        let mut inner = self.lock();
        let id = inner.next;
        inner.append(&Line::Acquire {
            id,
            resource: resource.clone(),
        })?;
        inner.next += 1;
        inner.open.insert(id, resource.clone());
        Ok(id)
    }

    /// As [`Journal::acquire`], unless the same resource is held already
    /// (a directory every run of a workload creates anew).
    pub fn acquire_once(&self, resource: &Resource) -> Result<u64> {
        let held = self
            .lock()
            .open
            .iter()
            .find(|(_, r)| *r == resource)
            .map(|(id, _)| *id);
        match held {
            Some(id) => Ok(id),
            None => self.acquire(resource),
        }
    }

    /// Undoes whatever is still held, newest first, releasing each: what a
    /// workload journaled and left (a socket directory), at the end of a
    /// campaign. Returns what could not be undone or was kept.
    pub fn undo_open(&self) -> Vec<String> {
        let open: Vec<(u64, Resource)> = {
            let inner = self.lock();
            inner
                .open
                .iter()
                .rev()
                .filter(|(i, _)| !inner.kept.contains(i))
                .map(|(i, r)| (*i, r.clone()))
                .collect()
        };
        let mut problems = Vec::new();
        for (id, res) in open {
            match res.undo(self.kinds) {
                Ok(Undone::Gone) => {
                    if let Err(e) = self.release(id) {
                        problems.push(format!("{e:#}"));
                    }
                }
                Ok(Undone::Kept(why)) => {
                    self.keep(id);
                    problems.push(why);
                }
                Err(e) => problems.push(format!("undoing {}: {e:#}", res.describe())),
            }
        }
        problems
    }

    /// Leaves a resource in the journal on purpose, for `storlab cleanup`.
    pub fn keep(&self, id: u64) {
        self.lock().kept.insert(id);
    }

    /// Whether the journal file exists (something was ever journaled).
    pub fn exists(&self) -> bool {
        self.lock().file.is_some()
    }

    /// Marks a resource undone.
    pub fn release(&self, id: u64) -> Result<()> {
        let mut inner = self.lock();
        inner.append(&Line::Release { id })?;
        inner.open.remove(&id);
        Ok(())
    }

    /// Removes the journal when nothing in it is still held.
    pub fn finish(&self) -> Result<()> {
        let mut inner = self.lock();
        if !inner.open.is_empty() || inner.file.is_none() {
            return Ok(());
        }
        inner.file = None;
        std::fs::remove_file(&inner.path)
            .with_context(|| format!("removing journal {}", inner.path.display()))
    }
}

impl Inner {
    fn append(&mut self, line: &Line) -> Result<()> {
        if self.file.is_none() {
            self.create()?;
        }
        let path = self.path.clone();
        let file = self.file.as_mut().expect("created above");
        let mut text = serde_json::to_string(line)?;
        text.push('\n');
        file.write_all(text.as_bytes())
            .and_then(|_| file.sync_data())
            .with_context(|| format!("writing journal {}", path.display()))
    }

    fn create(&mut self) -> Result<()> {
        let dir = self.path.parent().unwrap_or(Path::new(".")).to_path_buf();
        std::fs::create_dir_all(&dir).with_context(|| {
            format!(
                "creating state directory {} (set STORLAB_STATE_DIR to use another)",
                dir.display()
            )
        })?;
        self.file = Some(self.create_new_file()?);
        let header = Line::Campaign {
            pid: std::process::id(),
            started: crate::host::now_rfc3339(),
            owner: Some(Owner::me()),
        };
        self.append(&header)?;
        if let Ok(d) = File::open(&dir) {
            let _ = d.sync_all(); // the new name itself must survive a crash
        }
        Ok(())
    }
}

impl Inner {
    /// Opens a journal file that did not exist: a killed campaign whose pid
    /// was reused may have left one under this name, and it must survive.
    fn create_new_file(&mut self) -> Result<File> {
        let stem = self
            .path
            .to_string_lossy()
            .trim_end_matches(SUFFIX)
            .to_string();
        for n in 0..1000 {
            let path = match n {
                0 => self.path.clone(),
                n => PathBuf::from(format!("{stem}-{n}{SUFFIX}")),
            };
            match OpenOptions::new().create_new(true).append(true).open(&path) {
                Ok(f) => {
                    self.path = path;
                    return Ok(f);
                }
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
                Err(e) => {
                    return Err(e).with_context(|| format!("creating journal {}", path.display()))
                }
            }
        }
        bail!("no free journal name next to {}", self.path.display())
    }
}

/// What a journal file still holds: the campaign's pid and the resources
/// acquired but not released, in acquisition order.
#[derive(Debug)]
pub struct Pending {
    pub path: PathBuf,
    pub pid: Option<u32>,
    pub owner: Option<Owner>,
    pub resources: Vec<(u64, Resource)>,
}

pub fn read_pending(path: &Path) -> Result<Pending> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("reading journal {}", path.display()))?;
    let mut pid = None;
    let mut owner = None;
    let mut resources: Vec<(u64, Resource)> = Vec::new();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        // A torn last line (killed mid-write) is skipped: its resource was
        // not created yet, since creation waits for the fsync.
        match serde_json::from_str::<Line>(line) {
            Ok(Line::Campaign {
                pid: p, owner: o, ..
            }) => {
                pid = Some(p);
                owner = o;
            }
            Ok(Line::Acquire { id, resource }) => resources.push((id, resource)),
            Ok(Line::Release { id }) => resources.retain(|(i, _)| *i != id),
            Err(_) => {}
        }
    }
    Ok(Pending {
        path: path.to_path_buf(),
        pid,
        owner,
        resources,
    })
}

impl Pending {
    /// Marks resource `id` undone in the journal file itself (another
    /// campaign's, killed): a journal `storlab cleanup` keeps then holds only
    /// what is still there, never what it already undid.
    pub fn release(&self, id: u64) -> Result<()> {
        let mut file = OpenOptions::new()
            .append(true)
            .open(&self.path)
            .with_context(|| format!("opening journal {}", self.path.display()))?;
        let mut text = serde_json::to_string(&Line::Release { id })?;
        text.push('\n');
        file.write_all(text.as_bytes())
            .and_then(|_| file.sync_data())
            .with_context(|| format!("writing journal {}", self.path.display()))
    }
}

/// Journal files in `dir`, oldest name first.
pub fn journals_in(dir: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.to_string_lossy().ends_with(SUFFIX))
        .collect();
    out.sort();
    out
}

/// A target's own resources, undone in reverse order at teardown.
pub struct Held {
    journal: Journal,
    items: Vec<(u64, Resource)>,
}

impl Held {
    pub fn new(journal: &Journal) -> Held {
        Held {
            journal: journal.clone(),
            items: Vec::new(),
        }
    }

    /// The journal it records in.
    pub fn journal(&self) -> &Journal {
        &self.journal
    }

    /// Journals `resource`; the caller creates it next.
    pub fn record(&mut self, resource: Resource) -> Result<()> {
        let id = self.journal.acquire(&resource)?;
        self.items.push((id, resource));
        Ok(())
    }

    /// Journals the directory `path`, then creates it; it must not exist
    /// yet, so that teardown never removes a directory it did not make.
    pub fn make_dir(&mut self, path: &Path) -> Result<()> {
        self.record(Resource::Dir {
            path: path.to_path_buf(),
        })?;
        std::fs::create_dir(path).with_context(|| format!("creating {}", path.display()))
    }

    /// Makes the mount point `path` (journaled, as [`Held::make_dir`]) and
    /// journals the mount the caller makes on it next.
    pub fn make_mount_point(&mut self, path: &Path) -> Result<()> {
        self.make_dir(path)?;
        self.record(Resource::Mount {
            path: path.to_path_buf(),
        })
    }

    /// Journals directory `path` at `site` — this host, or another through
    /// the remote shell — then creates it there; it must not exist yet.
    pub fn make_dir_at(&mut self, site: &Site, path: &Path) -> Result<()> {
        let dir = Resource::Dir {
            path: path.to_path_buf(),
        };
        self.record(Resource::at(site, dir))?;
        site_fs::make_dir(site, path)
    }

    /// Lets go of the newest resource without undoing it: it turned out
    /// not to be this campaign's (a peer already in the pool).
    pub fn disown_last(&mut self) -> Result<()> {
        match self.items.pop() {
            Some((id, _)) => self.journal.release(id),
            None => Ok(()),
        }
    }

    /// Lets go of every resource held without undoing it: something else
    /// undid them (a client host unmounted its own mount).
    pub fn disown_all(&mut self) -> Result<()> {
        while !self.items.is_empty() {
            self.disown_last()?;
        }
        Ok(())
    }

    pub fn holds(&self, resource: &Resource) -> bool {
        self.items.iter().any(|(_, r)| r == resource)
    }

    /// Undoes everything held, newest first; stops at the first failure so
    /// that nothing is removed from under a resource still in place. A
    /// resource deliberately kept (a daemon another campaign uses) stays in
    /// the journal, said on stderr, and the older ones are undone.
    pub fn undo_all(&mut self) -> Result<()> {
        self.undo_while(|_| true)
    }

    /// As [`Held::undo_all`], but stops (undoing nothing more) at the
    /// newest resource for which `go_on` is false: a target releases its
    /// claim on a shared daemon only once its volume or pool is gone.
    pub fn undo_while(&mut self, go_on: impl Fn(&Resource) -> bool) -> Result<()> {
        while let Some((id, res)) = self.items.last().cloned() {
            if !go_on(&res) {
                return Ok(());
            }
            let undone = res
                .undo(self.journal.kinds)
                .with_context(|| format!("undoing {}", res.describe()))?;
            match undone {
                Undone::Gone => self.journal.release(id)?,
                Undone::Kept(why) => {
                    self.journal.keep(id);
                    errln!("storlab: {why} (kept in {})", self.journal.path().display());
                }
            }
            self.items.pop();
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pending_is_what_was_acquired_and_not_released() {
        let dir = tempfile::tempdir().unwrap();
        let j = Journal::at(dir.path().join("campaign-1.journal"), Kinds::NONE);
        let a = j
            .acquire(&Resource::Pool {
                name: "storlab_1_p".into(),
            })
            .unwrap();
        j.acquire(&Resource::Volume {
            name: "storlab-1-v".into(),
        })
        .unwrap();
        j.release(a).unwrap();
        let p = read_pending(&j.path()).unwrap();
        assert_eq!(p.pid, Some(std::process::id()));
        assert_eq!(p.resources.len(), 1);
        assert_eq!(
            p.resources[0].1,
            Resource::Volume {
                name: "storlab-1-v".into()
            }
        );
        j.finish().unwrap();
        assert!(j.path().exists(), "kept while something is held");
        assert_eq!(journals_in(dir.path()), vec![j.path()]);
    }

    #[test]
    fn an_old_journal_under_the_same_name_is_kept() {
        let dir = tempfile::tempdir().unwrap();
        let old = dir.path().join("campaign-9.journal");
        std::fs::write(&old, "old").unwrap();
        let j = Journal::at(old.clone(), Kinds::NONE);
        j.acquire(&Resource::Pool {
            name: "storlab_1_p".into(),
        })
        .unwrap();
        assert_ne!(j.path(), old);
        assert_eq!(std::fs::read_to_string(&old).unwrap(), "old");
        assert_eq!(journals_in(dir.path()).len(), 2);
    }

    #[test]
    fn a_torn_line_is_ignored_and_nothing_written_means_no_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.journal");
        std::fs::write(
            &path,
            "{\"op\":\"campaign\",\"pid\":7,\"started\":\"t\"}\n{\"op\":\"acq",
        )
        .unwrap();
        let p = read_pending(&path).unwrap();
        assert_eq!((p.pid, p.resources.len()), (Some(7), 0));
        let j = Journal::at(dir.path().join("unused.journal"), Kinds::NONE);
        j.finish().unwrap();
        assert!(!j.path().exists());
    }
}
