//! Schema v8: a compact store. What every run of a campaign repeats — a
//! metric's name, labels, unit and direction; a warning's sentence; a
//! fact's text — is stored once per campaign in a dictionary
//! (`metric_keys`, `warning_texts`, `fact_texts`), and each run's rows hold
//! only its id beside the value: 5 KB of a mock run's telemetry became
//! well under 1 KB (docs/store.md). Series values are 8-byte little-endian
//! floats (NaN for a missing sample) instead of JSON text. Views under the
//! old names (`metrics`, `rank_metrics`, `histograms`, `warnings`,
//! `run_facts`) read the v7 columns back, for scripts and `sqlite3`.

use anyhow::{Context, Result};
use rusqlite::{params, Transaction};

/// The compact tables. `direction` is `''` for the keys of series and
/// histograms.
pub const TABLES: &str = r#"
CREATE TABLE metric_keys (
    id INTEGER PRIMARY KEY,
    campaign_id INTEGER NOT NULL REFERENCES campaigns(id),
    name TEXT NOT NULL,
    labels TEXT NOT NULL DEFAULT '{}',
    unit TEXT NOT NULL,
    direction TEXT NOT NULL DEFAULT '',
    UNIQUE (campaign_id, name, labels, unit, direction)
);
CREATE TABLE metric_values (
    run_id INTEGER NOT NULL REFERENCES runs(id),
    key_id INTEGER NOT NULL REFERENCES metric_keys(id),
    value REAL NOT NULL,
    PRIMARY KEY (run_id, key_id)
) WITHOUT ROWID;
CREATE TABLE series_values (
    run_id INTEGER NOT NULL REFERENCES runs(id),
    key_id INTEGER NOT NULL REFERENCES metric_keys(id),
    interval_s REAL NOT NULL,
    values_f64 BLOB NOT NULL,
    PRIMARY KEY (run_id, key_id)
) WITHOUT ROWID;
CREATE TABLE histogram_values (
    run_id INTEGER NOT NULL REFERENCES runs(id),
    key_id INTEGER NOT NULL REFERENCES metric_keys(id),
    count INTEGER NOT NULL,
    hdr_v2 BLOB NOT NULL,
    PRIMARY KEY (run_id, key_id)
);
CREATE TABLE rank_metric_values (
    run_id INTEGER NOT NULL,
    rank INTEGER NOT NULL,
    key_id INTEGER NOT NULL REFERENCES metric_keys(id),
    value REAL NOT NULL,
    PRIMARY KEY (run_id, rank, key_id),
    FOREIGN KEY (run_id, rank) REFERENCES run_ranks(run_id, rank)
) WITHOUT ROWID;
CREATE TABLE warning_texts (
    id INTEGER PRIMARY KEY,
    campaign_id INTEGER NOT NULL REFERENCES campaigns(id),
    kind TEXT NOT NULL,
    message TEXT NOT NULL,
    UNIQUE (campaign_id, kind, message)
);
CREATE TABLE run_warnings (
    run_id INTEGER NOT NULL REFERENCES runs(id),
    text_id INTEGER NOT NULL REFERENCES warning_texts(id)
);
CREATE INDEX run_warnings_by_run ON run_warnings (run_id);
CREATE TABLE fact_texts (
    id INTEGER PRIMARY KEY,
    campaign_id INTEGER NOT NULL REFERENCES campaigns(id),
    name TEXT NOT NULL,
    value TEXT NOT NULL,
    UNIQUE (campaign_id, name, value)
);
CREATE TABLE run_fact_values (
    run_id INTEGER NOT NULL REFERENCES runs(id),
    fact_id INTEGER NOT NULL REFERENCES fact_texts(id),
    PRIMARY KEY (run_id, fact_id)
) WITHOUT ROWID;
"#;

/// The v7 tables' columns, read from the compact ones.
pub const VIEWS: &str = r#"
CREATE VIEW metrics (run_id, name, labels, value, unit, direction) AS
    SELECT v.run_id, k.name, k.labels, v.value, k.unit, k.direction
    FROM metric_values v JOIN metric_keys k ON k.id = v.key_id;
CREATE VIEW rank_metrics (run_id, rank, name, labels, value, unit, direction) AS
    SELECT v.run_id, v.rank, k.name, k.labels, v.value, k.unit, k.direction
    FROM rank_metric_values v JOIN metric_keys k ON k.id = v.key_id;
CREATE VIEW histograms (run_id, name, labels, unit, count, hdr_v2) AS
    SELECT v.run_id, k.name, k.labels, k.unit, v.count, v.hdr_v2
    FROM histogram_values v JOIN metric_keys k ON k.id = v.key_id;
CREATE VIEW warnings (run_id, kind, message) AS
    SELECT w.run_id, t.kind, t.message
    FROM run_warnings w JOIN warning_texts t ON t.id = w.text_id;
CREATE VIEW run_facts (run_id, name, value) AS
    SELECT v.run_id, f.name, f.value
    FROM run_fact_values v JOIN fact_texts f ON f.id = v.fact_id;
"#;

/// The v7 tables schema 8 replaces (by views of the same names).
const REPLACED: [&str; 6] = [
    "metrics",
    "rank_metrics",
    "histograms",
    "series",
    "warnings",
    "run_facts",
];

/// Moves a v7 store's rows into the compact tables and replaces the old
/// tables by views of the same names.
pub fn migrate(tx: &Transaction<'_>) -> Result<()> {
    for old in REPLACED {
        tx.execute_batch(&format!("ALTER TABLE {old} RENAME TO {old}_v7"))?;
    }
    tx.execute_batch(TABLES)?;
    let campaign_of = "(SELECT r.campaign_id FROM runs r WHERE r.id = x.run_id)";
    tx.execute_batch(&format!(
        "INSERT OR IGNORE INTO metric_keys (campaign_id, name, labels, unit, direction)
             SELECT {campaign_of}, name, labels, unit, direction FROM metrics_v7 x
             UNION ALL SELECT {campaign_of}, name, labels, unit, direction FROM rank_metrics_v7 x
             UNION ALL SELECT {campaign_of}, name, labels, unit, '' FROM series_v7 x
             UNION ALL SELECT {campaign_of}, name, labels, unit, '' FROM histograms_v7 x;
         INSERT INTO metric_values (run_id, key_id, value)
             SELECT x.run_id, k.id, x.value FROM metrics_v7 x JOIN metric_keys k
             ON k.campaign_id = {campaign_of} AND k.name = x.name AND k.labels = x.labels
                AND k.unit = x.unit AND k.direction = x.direction;
         INSERT INTO rank_metric_values (run_id, rank, key_id, value)
             SELECT x.run_id, x.rank, k.id, x.value FROM rank_metrics_v7 x JOIN metric_keys k
             ON k.campaign_id = {campaign_of} AND k.name = x.name AND k.labels = x.labels
                AND k.unit = x.unit AND k.direction = x.direction;
         INSERT INTO histogram_values (run_id, key_id, count, hdr_v2)
             SELECT x.run_id, k.id, x.count, x.hdr_v2 FROM histograms_v7 x JOIN metric_keys k
             ON k.campaign_id = {campaign_of} AND k.name = x.name AND k.labels = x.labels
                AND k.unit = x.unit AND k.direction = '';
         INSERT OR IGNORE INTO warning_texts (campaign_id, kind, message)
             SELECT {campaign_of}, kind, message FROM warnings_v7 x ORDER BY x.rowid;
         INSERT INTO run_warnings (run_id, text_id)
             SELECT x.run_id, t.id FROM warnings_v7 x JOIN warning_texts t
             ON t.campaign_id = {campaign_of} AND t.kind = x.kind AND t.message = x.message
             ORDER BY x.rowid;
         INSERT OR IGNORE INTO fact_texts (campaign_id, name, value)
             SELECT {campaign_of}, name, value FROM run_facts_v7 x;
         INSERT INTO run_fact_values (run_id, fact_id)
             SELECT x.run_id, f.id FROM run_facts_v7 x JOIN fact_texts f
             ON f.campaign_id = {campaign_of} AND f.name = x.name AND f.value = x.value;"
    ))
    .context("moving metrics, histograms, warnings and facts to the compact tables")?;
    series(tx).context("moving series to the compact table")?;
    for old in REPLACED {
        tx.execute_batch(&format!("DROP TABLE {old}_v7"))?;
    }
    tx.execute_batch(VIEWS)?;
    Ok(())
}

/// Series from JSON text (`null` for a missing sample) to packed floats.
fn series(tx: &Transaction<'_>) -> Result<()> {
    let mut read = tx.prepare(
        "SELECT x.run_id, k.id, x.interval_s, x.values_json FROM series_v7 x JOIN runs r ON r.id = x.run_id
         JOIN metric_keys k ON k.campaign_id = r.campaign_id AND k.name = x.name AND k.labels = x.labels
            AND k.unit = x.unit AND k.direction = ''",
    )?;
    let mut write = tx.prepare(
        "INSERT INTO series_values (run_id, key_id, interval_s, values_f64) VALUES (?1, ?2, ?3, ?4)",
    )?;
    let mut rows = read.query([])?;
    while let Some(r) = rows.next()? {
        let (run, key, interval): (i64, i64, rusqlite::types::Value) =
            (r.get(0)?, r.get(1)?, r.get(2)?);
        // Never silently emptied: a store whose series are not what
        // storlab writes is refused here, naming the row (import says so
        // for the store it was given).
        let values = match r.get_ref(3)? {
            rusqlite::types::ValueRef::Text(t) => {
                serde_json::from_slice::<Vec<Option<f64>>>(t).ok()
            }
            _ => None,
        };
        let Some(values) = values else {
            anyhow::bail!(
                "the series of run {run} (key {key}) is not a JSON array of numbers; the store was damaged or written by another program"
            );
        };
        let values: Vec<f64> = values.into_iter().map(|v| v.unwrap_or(f64::NAN)).collect();
        write.execute(params![run, key, interval, pack(&values)])?;
    }
    Ok(())
}

/// Series values as stored: 8-byte little-endian floats.
pub fn pack(values: &[f64]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_le_bytes()).collect()
}

/// Series values from their stored bytes (a trailing partial float, which
/// storlab never writes, is dropped).
pub fn unpack(bytes: &[u8]) -> Vec<f64> {
    bytes
        .chunks_exact(8)
        .map(|c| f64::from_le_bytes(c.try_into().expect("chunks of 8")))
        .collect()
}
