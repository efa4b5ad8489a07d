//! The results store: one SQLite file holding every campaign, run, metric,
//! series, histogram, warning and fact. Runs are committed the moment they
//! end, so a crash loses at most the run in progress. Reports and statistics
//! read only from here.

mod catalog;
mod columns;
pub mod files;
mod forget;
mod import;
pub mod keyed;
mod lock;
mod migrate_v4;
mod migrate_v6;
mod migrate_v7;
mod migrate_v8;
#[cfg(test)]
mod migrate_v8_tests;
mod pair_cache;
mod pairs;
mod parts;
mod provenance;
mod read;
mod replicas;
mod resume;
mod runs;
mod schema;
mod spool;
pub mod stored;
mod timings;
mod validate;
mod variants;
pub mod write;

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use rusqlite::Connection;

pub use columns::{Column, Columns};
pub use forget::Forgotten;
pub use import::Imported;
pub use keyed::{Keyed, RunFacts};
pub use parts::{Drawn, Parts};
pub use provenance::{CampaignFacts, Provenance};
pub use read::{
    CampaignData, CampaignRow, HistData, MetricValue, Metrics, PairStop, RankData, RunData,
    SeriesData, TargetRow, WorkloadRow,
};
pub use replicas::{Replica, ToReplicate};
pub use resume::{DoneRun, Resumable};
#[cfg(test)]
pub(crate) use schema::FIGURES_BY_KEY;
pub use spool::run_text;
pub use timings::{PastCampaign, PastRun, PastTarget, PastWorkload};
pub use write::{RankRow, RunRecord};

/// An open results store.
pub struct Store {
    conn: Connection,
    path: PathBuf,
    /// The campaigns this process runs (see [`lock`]), held until it ends.
    locks: Vec<lock::CampaignLock>,
    /// The space reserved for a run this campaign could not commit.
    spool: Option<(i64, std::fs::File)>,
}

impl Store {
    /// Opens (creating if needed) the store at `path` and migrates its
    /// schema; commits what an earlier campaign spooled beside it.
    pub fn open(path: &Path) -> Result<Store> {
        check_regular(path)?;
        let store = {
            // Two processes opening a new store at once would race to set
            // WAL mode and to create the tables: one sets it up, then the other.
            let _setup = lock::setup(path);
            Store::open_writable(path)?
        };
        Ok(store.commit_spooled())
    }

    fn open_writable(path: &Path) -> Result<Store> {
        let conn = Connection::open(path)
            .with_context(|| format!("opening results store {}", path.display()))?;
        conn.busy_timeout(std::time::Duration::from_secs(10))?;
        conn.pragma_update(None, "journal_mode", "WAL")
            .with_context(|| format!("setting WAL mode on {}", path.display()))?;
        conn.pragma_update(None, "foreign_keys", "ON")?;
        schema::migrate(&conn)
            .with_context(|| format!("preparing the schema of {}", path.display()))?;
        Ok(Store {
            conn,
            path: path.to_path_buf(),
            locks: Vec::new(),
            spool: None,
        })
    }

    /// Opens an existing store to run a campaign of it again (`run
    /// --resume`): a missing file is a clear error, an older schema is
    /// migrated, and a store storlab cannot write (a read-only mount, a
    /// file without write permission) is read as it is.
    pub fn open_existing(path: &Path) -> Result<Store> {
        check_exists(path)?;
        if !writable(path) {
            return Store::open_read_only(path);
        }
        Store::open(path)
    }

    /// Opens an existing store for the commands that only read it (`list`,
    /// `show`, `export`, `report`, `compare`, `history`). A store of an
    /// older schema is read through a copy migrated in memory and the file
    /// is left as it is, so that the storlab that wrote it can go on using
    /// it; `run` and `import` into it migrate the file itself.
    pub fn open_for_reading(path: &Path) -> Result<Store> {
        check_exists(path)?;
        if let Ok(conn) = reading_connection(path) {
            match schema::version(&conn) {
                Ok(v) if v > 0 && v < schema::SCHEMA_VERSION => {
                    return Store::migrated_copy(&conn, path, v)
                }
                _ => {}
            }
        }
        Store::open_existing(path)
    }

    /// An in-memory copy of the store behind `source` (of schema
    /// `version`), migrated to this storlab's schema.
    fn migrated_copy(source: &Connection, path: &Path, version: i64) -> Result<Store> {
        let mut conn = Connection::open_in_memory()?;
        copy_database(source, &mut conn)
            .with_context(|| format!("reading {} into memory", path.display()))?;
        conn.pragma_update(None, "foreign_keys", "ON")?;
        schema::migrate(&conn).with_context(|| {
            format!(
                "migrating an in-memory copy of {} (schema {version}) to this storlab's",
                path.display()
            )
        })?;
        Ok(Store {
            conn,
            path: path.to_path_buf(),
            locks: Vec::new(),
            spool: None,
        })
    }

    /// A store opened without writing anything: no migration, no WAL
    /// switch, no spool. Its schema must be this storlab's.
    fn open_read_only(path: &Path) -> Result<Store> {
        let conn = read_only_connection(path)?;
        let version = schema::version(&conn)
            .with_context(|| format!("reading the schema of {}", path.display()))?;
        if version != schema::SCHEMA_VERSION {
            anyhow::bail!(
                "{} is read-only and has schema version {version}, this storlab writes {}; copy it somewhere writable (`storlab import` into a new store does) and run there",
                path.display(),
                schema::SCHEMA_VERSION
            );
        }
        Ok(Store {
            conn,
            path: path.to_path_buf(),
            locks: Vec::new(),
            spool: None,
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// A clear error for a store that does not exist, instead of creating one.
fn check_exists(path: &Path) -> Result<()> {
    if !path.exists() {
        anyhow::bail!(
            "no results store at {}; run a campaign first (`storlab run`) or point --db / STORLAB_DB at one",
            path.display()
        );
    }
    check_regular(path)
}

/// A connection that only reads the store at `path`. Where the file can be
/// written it is opened read-write with writes refused (`query_only`): a
/// read-only connection to a store in WAL mode leaves an empty `-wal` and
/// `-shm` file beside it, which a read-write one removes when it closes.
pub(super) fn reading_connection(path: &Path) -> Result<Connection> {
    use rusqlite::OpenFlags;
    if !writable(path) {
        return read_only_connection(path);
    }
    let flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let conn = Connection::open_with_flags(path, flags)
        .with_context(|| format!("opening results store {}", path.display()))?;
    conn.busy_timeout(std::time::Duration::from_secs(10))?;
    conn.pragma_update(None, "query_only", true)?;
    Ok(conn)
}

/// Copies the whole database behind `source` into `dest` (SQLite's online
/// backup, which reads a consistent snapshot without writing the source).
pub(super) fn copy_database(source: &Connection, dest: &mut Connection) -> rusqlite::Result<()> {
    use rusqlite::backup::{Backup, StepResult};
    match Backup::new(source, dest)?.step(-1)? {
        StepResult::Done => Ok(()),
        _ => Err(rusqlite::Error::SqliteFailure(
            rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_BUSY),
            Some("the store was busy (a campaign writing to it); try again".into()),
        )),
    }
}

/// A connection that cannot write to the store at `path`; a store in WAL
/// mode without its index file on a read-only filesystem is opened as an
/// immutable file.
fn read_only_connection(path: &Path) -> Result<Connection> {
    use rusqlite::OpenFlags;
    let plain = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    Connection::open_with_flags(path, plain)
        .ok()
        .filter(|c| schema::version(c).is_ok())
        .map(Ok)
        .unwrap_or_else(|| {
            let uri = format!("file:{}?immutable=1", path.display());
            Connection::open_with_flags(uri, plain | OpenFlags::SQLITE_OPEN_URI)
        })
        .with_context(|| format!("opening results store {} read-only", path.display()))
}

/// Refuses a store path that is not a regular file (`/dev/null`, a
/// directory): SQLite would write its journal files beside it.
fn check_regular(path: &Path) -> Result<()> {
    match std::fs::metadata(path) {
        Ok(m) if !m.is_file() => anyhow::bail!(
            "{} is not a regular file, so it cannot hold a results store; point --db / STORLAB_DB at a file (e.g. storlab.db)",
            path.display()
        ),
        _ => Ok(()),
    }
}

/// Whether this process may write the file at `path` (and so its store).
fn writable(path: &Path) -> bool {
    let Ok(c) = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()) else {
        return false;
    };
    // SAFETY: access reads a NUL-terminated path and touches nothing else.
    unsafe { libc::access(c.as_ptr(), libc::W_OK) == 0 }
}

#[cfg(test)]
mod tests;
