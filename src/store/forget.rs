//! `storlab forget CAMPAIGN`: a campaign removed from the store with every
//! row tied to it (runs, metrics, series, histograms, warnings, facts,
//! ranks), in one transaction; import uses the same to replace a campaign
//! that went on in another store.

use anyhow::{bail, Result};
use rusqlite::Transaction;

use super::catalog::{columns, tables};
use super::{lock, Store};

/// What `forget` removed.
#[derive(Debug, Clone)]
pub struct Forgotten {
    pub id: i64,
    pub name: String,
    pub runs: i64,
}

impl Store {
    /// Removes campaign `id` and everything recorded with it; refused
    /// while a process runs it.
    pub fn forget(&mut self, id: i64) -> Result<Forgotten> {
        let Some(_held) = lock::take(&self.path, id)? else {
            bail!("campaign {id} is running in another storlab process; stop it first (Ctrl-C, or kill -INT its pid), then forget it");
        };
        let tx = self
            .conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        tx.execute_batch("PRAGMA defer_foreign_keys = ON")?;
        let (name, runs): (String, i64) = tx.query_row(
            "SELECT name, (SELECT COUNT(*) FROM runs WHERE campaign_id = ?1) FROM campaigns WHERE id = ?1",
            [id],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )?;
        delete_campaign(&tx, id)?;
        tx.commit()?;
        Ok(Forgotten { id, name, runs })
    }
}

/// Every row of campaign `id` in this store (the caller's transaction
/// defers foreign keys: rows refer to each other across tables).
pub(super) fn delete_campaign(tx: &Transaction<'_>, id: i64) -> Result<()> {
    let tables = tables(tx)?;
    // Rows tied to a run first: they are found through the runs.
    for pass in ["run_id", "campaign_id", "id"] {
        for table in &tables {
            let cols = columns(tx, table)?;
            let has = |c: &str| cols.iter().any(|x| x == c);
            let sql = match pass {
                "run_id" if has("run_id") && !has("campaign_id") => format!(
                    "DELETE FROM main.\"{table}\" WHERE run_id IN (SELECT id FROM main.runs WHERE campaign_id = ?1)"
                ),
                "campaign_id" if has("campaign_id") => {
                    format!("DELETE FROM main.\"{table}\" WHERE campaign_id = ?1")
                }
                "id" if table == "campaigns" => "DELETE FROM main.campaigns WHERE id = ?1".into(),
                _ => continue,
            };
            tx.execute(&sql, [id])?;
        }
    }
    Ok(())
}
