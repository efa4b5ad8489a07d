//! The results store: one SQLite file holding every campaign, run, metric,
//! series, histogram, warning and fact. Runs are committed the moment they
//! end, so a crash loses at most the run in progress. Reports and statistics
//! read only from here.

mod migrate_v4;
mod read;
mod resume;
mod schema;
mod variants;
pub mod write;

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use rusqlite::Connection;

pub use read::{
    CampaignData, CampaignRow, HistData, MetricValue, Metrics, PairStop, RankData, RunData,
    SeriesData, TargetRow, WorkloadRow,
};
pub use resume::{DoneRun, Resumable};
pub use write::{RankRow, RunRecord};

/// An open results store.
pub struct Store {
    conn: Connection,
    path: PathBuf,
}

impl Store {
    /// Opens (creating if needed) the store at `path` and migrates its schema.
    pub fn open(path: &Path) -> Result<Store> {
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
        })
    }

    /// Opens an existing store for reading; a missing file is a clear error.
    pub fn open_existing(path: &Path) -> Result<Store> {
        if !path.exists() {
            anyhow::bail!(
                "no results store at {}; run a campaign first (`storlab run`) or point --db / STORLAB_DB at one",
                path.display()
            );
        }
        Store::open(path)
    }

    pub fn path(&self) -> &Path {
        &self.path
    }
}

#[cfg(test)]
mod tests;
