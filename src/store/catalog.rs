//! The store's own tables and their columns, as SQLite lists them: what
//! `import` copies and `forget` deletes row by row.

use anyhow::Result;
use rusqlite::Transaction;

/// The store's tables, `meta` and SQLite's own left out.
pub(super) fn tables(tx: &Transaction<'_>) -> Result<Vec<String>> {
    let mut st = tx.prepare(
        "SELECT name FROM main.sqlite_master WHERE type = 'table' AND name <> 'meta' AND name NOT LIKE 'sqlite_%' ORDER BY name",
    )?;
    let rows = st
        .query_map([], |r| r.get(0))?
        .collect::<rusqlite::Result<Vec<String>>>()?;
    Ok(rows)
}

/// A table's column names, in order.
pub(super) fn columns(tx: &Transaction<'_>, table: &str) -> Result<Vec<String>> {
    let mut st = tx.prepare(&format!("PRAGMA main.table_info(\"{table}\")"))?;
    let rows = st
        .query_map([], |r| r.get(1))?
        .collect::<rusqlite::Result<Vec<String>>>()?;
    Ok(rows)
}
