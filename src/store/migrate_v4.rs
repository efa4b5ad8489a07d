//! The move from schema v3 to v4: every metric, series, histogram and
//! per-rank metric row is copied into the v4 tables under its catalogue
//! name and labels, decoded from its v3 name by [`crate::metric::legacy`]
//! (with the workload's kind, since the kinds packed different labels into
//! their names). Units, directions and values are copied as they were.
//! One transaction: a migration that fails leaves the v3 store untouched.

use anyhow::{Context, Result};
use rusqlite::{params, Row, Transaction};

use crate::metric::{legacy, MetricKey};

/// Each v3 row's workload kind, joined in.
const KIND: &str = "COALESCE((SELECT w.kind FROM runs r JOIN workloads w ON w.id = r.workload_id WHERE r.id = x.run_id), '')";

/// Fills the v4 tables (`*_v4`, which the caller has created) from the v3
/// ones, then puts them in their place.
pub fn migrate(tx: &Transaction<'_>) -> Result<()> {
    metrics(tx).context("moving metrics to labels")?;
    rank_metrics(tx).context("moving per-rank metrics to labels")?;
    series(tx).context("moving series to labels")?;
    histograms(tx).context("moving histograms to labels")?;
    for table in ["metrics", "rank_metrics", "series", "histograms"] {
        tx.execute_batch(&format!(
            "DROP TABLE {table}; ALTER TABLE {table}_v4 RENAME TO {table};"
        ))?;
    }
    Ok(())
}

/// Runs `copy` on every row of `select` (whose last column is the kind).
fn each_row(
    tx: &Transaction<'_>,
    select: &str,
    mut copy: impl FnMut(&Row<'_>, &str) -> Result<()>,
) -> Result<()> {
    let mut st = tx.prepare(select)?;
    let mut rows = st.query([])?;
    while let Some(r) = rows.next()? {
        let kind: String = r.get(r.as_ref().column_count() - 1)?;
        copy(r, &kind)?;
    }
    Ok(())
}

fn metrics(tx: &Transaction<'_>) -> Result<()> {
    let select = format!("SELECT run_id, name, value, unit, direction, {KIND} FROM metrics x");
    let mut insert = tx.prepare(
        "INSERT INTO metrics_v4 (run_id, name, labels, value, unit, direction) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
    )?;
    each_row(tx, &select, |r, kind| {
        let (name, unit): (String, String) = (r.get(1)?, r.get(3)?);
        let key = legacy::decode(kind, &name, &unit);
        let (run, value, direction): (i64, f64, String) = (r.get(0)?, r.get(2)?, r.get(4)?);
        insert.execute(params![run, key.name, labels(&key), value, unit, direction])?;
        Ok(())
    })
}

fn rank_metrics(tx: &Transaction<'_>) -> Result<()> {
    let select =
        format!("SELECT run_id, rank, name, value, unit, direction, {KIND} FROM rank_metrics x");
    let mut insert = tx.prepare(
        "INSERT INTO rank_metrics_v4 (run_id, rank, name, labels, value, unit, direction) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
    )?;
    each_row(tx, &select, |r, kind| {
        let (name, unit): (String, String) = (r.get(2)?, r.get(4)?);
        let key = legacy::decode(kind, &name, &unit);
        let (run, rank, value, direction): (i64, i64, f64, String) =
            (r.get(0)?, r.get(1)?, r.get(3)?, r.get(5)?);
        insert.execute(params![
            run,
            rank,
            key.name,
            labels(&key),
            value,
            unit,
            direction
        ])?;
        Ok(())
    })
}

fn series(tx: &Transaction<'_>) -> Result<()> {
    let select =
        format!("SELECT run_id, name, unit, interval_s, values_json, {KIND} FROM series x");
    let mut insert = tx.prepare(
        "INSERT INTO series_v4 (run_id, name, labels, unit, interval_s, values_json) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
    )?;
    each_row(tx, &select, |r, kind| {
        let (name, unit): (String, String) = (r.get(1)?, r.get(2)?);
        let key = legacy::decode(kind, &name, &unit);
        let (run, interval, values): (i64, f64, String) = (r.get(0)?, r.get(3)?, r.get(4)?);
        insert.execute(params![run, key.name, labels(&key), unit, interval, values])?;
        Ok(())
    })
}

fn histograms(tx: &Transaction<'_>) -> Result<()> {
    let select = format!("SELECT run_id, name, unit, count, hdr_v2, {KIND} FROM histograms x");
    let mut insert = tx.prepare(
        "INSERT INTO histograms_v4 (run_id, name, labels, unit, count, hdr_v2) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
    )?;
    each_row(tx, &select, |r, kind| {
        let name: String = r.get(1)?;
        let key = legacy::decode_hist(kind, &name);
        let (run, unit, count, blob): (i64, String, i64, Vec<u8>) =
            (r.get(0)?, r.get(2)?, r.get(3)?, r.get(4)?);
        insert.execute(params![run, key.name, labels(&key), unit, count, blob])?;
        Ok(())
    })
}

fn labels(key: &MetricKey) -> String {
    key.labels.to_json_text()
}
