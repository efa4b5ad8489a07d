//! Schema and migrations. `meta.schema_version` says which migrations ran;
//! a store written by a newer storlab is refused rather than misread.

use anyhow::{bail, Result};
use rusqlite::{Connection, OptionalExtension};

pub const SCHEMA_VERSION: i64 = 9;

pub const V1: &str = r#"
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE campaigns (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    description TEXT NOT NULL,
    origin TEXT NOT NULL,
    status TEXT NOT NULL,
    started_at TEXT NOT NULL,
    finished_at TEXT,
    storlab_version TEXT NOT NULL,
    planned_runs INTEGER NOT NULL,
    experiment_source TEXT NOT NULL,
    experiment_json TEXT NOT NULL,
    environment_json TEXT NOT NULL
);
CREATE TABLE targets (
    id INTEGER PRIMARY KEY,
    campaign_id INTEGER NOT NULL REFERENCES campaigns(id),
    position INTEGER NOT NULL,
    name TEXT NOT NULL,
    kind TEXT NOT NULL,
    baseline INTEGER NOT NULL,
    params_json TEXT NOT NULL,
    facts_json TEXT NOT NULL DEFAULT '{}',
    UNIQUE (campaign_id, name)
);
CREATE TABLE workloads (
    id INTEGER PRIMARY KEY,
    campaign_id INTEGER NOT NULL REFERENCES campaigns(id),
    position INTEGER NOT NULL,
    name TEXT NOT NULL,
    kind TEXT NOT NULL,
    primary_metric TEXT NOT NULL,
    params_json TEXT NOT NULL,
    UNIQUE (campaign_id, name)
);
CREATE TABLE runs (
    id INTEGER PRIMARY KEY,
    campaign_id INTEGER NOT NULL REFERENCES campaigns(id),
    target_id INTEGER NOT NULL REFERENCES targets(id),
    workload_id INTEGER NOT NULL REFERENCES workloads(id),
    repetition INTEGER NOT NULL,
    round INTEGER NOT NULL,
    position INTEGER NOT NULL,
    warmup INTEGER NOT NULL,
    status TEXT NOT NULL,
    error TEXT,
    started_at TEXT NOT NULL,
    duration_s REAL NOT NULL,
    caches_dropped INTEGER NOT NULL,
    remounted INTEGER NOT NULL
);
CREATE INDEX runs_by_campaign ON runs (campaign_id);
CREATE TABLE metrics (
    run_id INTEGER NOT NULL REFERENCES runs(id),
    name TEXT NOT NULL,
    value REAL NOT NULL,
    unit TEXT NOT NULL,
    direction TEXT NOT NULL,
    PRIMARY KEY (run_id, name)
);
CREATE TABLE series (
    run_id INTEGER NOT NULL REFERENCES runs(id),
    name TEXT NOT NULL,
    unit TEXT NOT NULL,
    interval_s REAL NOT NULL,
    values_json TEXT NOT NULL,
    PRIMARY KEY (run_id, name)
);
CREATE TABLE histograms (
    run_id INTEGER NOT NULL REFERENCES runs(id),
    name TEXT NOT NULL,
    unit TEXT NOT NULL,
    count INTEGER NOT NULL,
    hdr_v2 BLOB NOT NULL,
    PRIMARY KEY (run_id, name)
);
CREATE TABLE warnings (
    run_id INTEGER NOT NULL REFERENCES runs(id),
    message TEXT NOT NULL
);
"#;

/// Version 2: why each target–workload pair stopped taking runs.
pub const V2: &str = r#"
CREATE TABLE pair_stops (
    campaign_id INTEGER NOT NULL REFERENCES campaigns(id),
    target_id INTEGER NOT NULL REFERENCES targets(id),
    workload_id INTEGER NOT NULL REFERENCES workloads(id),
    reason TEXT NOT NULL,
    measured_runs INTEGER NOT NULL,
    ci_pct REAL,
    PRIMARY KEY (campaign_id, target_id, workload_id)
);
"#;

/// Version 3: multi-client runs over MPI. Each run's rank count, and per
/// rank its host, status, end (seconds from the start barrier) and metrics.
pub const V3: &str = r#"
ALTER TABLE runs ADD COLUMN ranks INTEGER NOT NULL DEFAULT 1;
CREATE TABLE run_ranks (
    run_id INTEGER NOT NULL REFERENCES runs(id),
    rank INTEGER NOT NULL,
    host TEXT NOT NULL,
    status TEXT NOT NULL,
    error TEXT,
    done_s REAL,
    PRIMARY KEY (run_id, rank)
);
CREATE TABLE rank_metrics (
    run_id INTEGER NOT NULL,
    rank INTEGER NOT NULL,
    name TEXT NOT NULL,
    value REAL NOT NULL,
    unit TEXT NOT NULL,
    direction TEXT NOT NULL,
    PRIMARY KEY (run_id, rank, name),
    FOREIGN KEY (run_id, rank) REFERENCES run_ranks(run_id, rank)
);
"#;

/// The schema version a store says it has (0 for a new one).
pub fn version(conn: &Connection) -> Result<i64> {
    let v: Option<String> = conn
        .query_row(
            "SELECT value FROM meta WHERE key = 'schema_version'",
            [],
            |r| r.get(0),
        )
        .optional()?;
    Ok(v.and_then(|v| v.parse().ok()).unwrap_or(0))
}

/// Version 4: labels. Metrics, series, histograms and per-rank metrics are
/// keyed by catalogue name and labels (a JSON object of strings, `{}` for
/// none) instead of names with the labels packed in; [`super::migrate_v4`]
/// moves the v3 rows over.
pub const V4: &str = r#"
CREATE TABLE metrics_v4 (
    run_id INTEGER NOT NULL REFERENCES runs(id),
    name TEXT NOT NULL,
    labels TEXT NOT NULL DEFAULT '{}',
    value REAL NOT NULL,
    unit TEXT NOT NULL,
    direction TEXT NOT NULL,
    PRIMARY KEY (run_id, name, labels)
);
CREATE TABLE series_v4 (
    run_id INTEGER NOT NULL REFERENCES runs(id),
    name TEXT NOT NULL,
    labels TEXT NOT NULL DEFAULT '{}',
    unit TEXT NOT NULL,
    interval_s REAL NOT NULL,
    values_json TEXT NOT NULL,
    PRIMARY KEY (run_id, name, labels)
);
CREATE TABLE histograms_v4 (
    run_id INTEGER NOT NULL REFERENCES runs(id),
    name TEXT NOT NULL,
    labels TEXT NOT NULL DEFAULT '{}',
    unit TEXT NOT NULL,
    count INTEGER NOT NULL,
    hdr_v2 BLOB NOT NULL,
    PRIMARY KEY (run_id, name, labels)
);
CREATE TABLE rank_metrics_v4 (
    run_id INTEGER NOT NULL,
    rank INTEGER NOT NULL,
    name TEXT NOT NULL,
    labels TEXT NOT NULL DEFAULT '{}',
    value REAL NOT NULL,
    unit TEXT NOT NULL,
    direction TEXT NOT NULL,
    PRIMARY KEY (run_id, rank, name, labels),
    FOREIGN KEY (run_id, rank) REFERENCES run_ranks(run_id, rank)
);
"#;

/// Version 5: what each run was measured with, as text beside its metrics
/// (the PostgreSQL server's version and non-default settings).
pub const V5: &str = r#"
CREATE TABLE run_facts (
    run_id INTEGER NOT NULL REFERENCES runs(id),
    name TEXT NOT NULL,
    value TEXT NOT NULL,
    PRIMARY KEY (run_id, name)
);
"#;

/// Schema v9: replicas (`storlab replicate`): a campaign that runs another
/// one's experiment again, known by the UUID of its group's first campaign
/// and its number in the group ([`super::replicas`]).
pub const V9: &str = r#"
CREATE TABLE replicas (
    campaign_id INTEGER PRIMARY KEY REFERENCES campaigns(id),
    of_uuid TEXT NOT NULL,
    number INTEGER NOT NULL
);
"#;

/// The figures in key order: the summary reads the few figures its
/// sections declare ([`crate::analysis::figures`]) along this index
/// instead of stepping over every figure of every run (`sqlite3`, 10^5
/// runs of 39 figures: 7 keys' 350,000 rows in 0.026 s along it, 0.29 s
/// along the (run, key) key). It costs about half the figures' bytes
/// again. Not a schema version: a storlab without it writes a store with
/// it (SQLite keeps it), and reads one without it (every row).
pub const FIGURES_BY_KEY: &str = "metric_values_by_key";

/// Makes [`FIGURES_BY_KEY`] on a store that lacks it (once: seconds for
/// 10^5 runs). The store is left without it when another process holds
/// it (a storlab before this one running a campaign): it is read as it is.
fn index_figures_by_key(conn: &Connection) -> Result<()> {
    if has_index(conn, FIGURES_BY_KEY)? {
        return Ok(());
    }
    let made = conn.execute_batch(&format!(
        "CREATE INDEX IF NOT EXISTS {FIGURES_BY_KEY} ON metric_values (key_id, run_id, value)"
    ));
    match made {
        Err(rusqlite::Error::SqliteFailure(e, _))
            if matches!(
                e.code,
                rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked
            ) =>
        {
            Ok(())
        }
        other => Ok(other?),
    }
}

/// Whether the store has index `name`.
pub(super) fn has_index(conn: &Connection, name: &str) -> Result<bool> {
    Ok(conn.query_row(
        "SELECT EXISTS (SELECT 1 FROM sqlite_master WHERE type = 'index' AND name = ?1)",
        [name],
        |r| r.get(0),
    )?)
}

pub fn migrate(conn: &Connection) -> Result<()> {
    migrate_to(conn, SCHEMA_VERSION)?;
    index_figures_by_key(conn)
}

/// Migrates the store to schema `target` (at most [`SCHEMA_VERSION`]):
/// the tests of a migration stop at the schema before it.
pub(super) fn migrate_to(conn: &Connection, target: i64) -> Result<()> {
    conn.execute_batch(
        "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);",
    )?;
    let version = version(conn)?;
    if version > SCHEMA_VERSION {
        bail!("the store has schema version {version}, newer than this storlab understands ({SCHEMA_VERSION}); upgrade storlab");
    }
    for (v, sql) in [(1, V1), (2, V2), (3, V3)] {
        if version < v && v <= target {
            let tx = conn.unchecked_transaction()?;
            tx.execute_batch(sql)?;
            set_version(&tx, v)?;
            tx.commit()?;
        }
    }
    if version < 4 && target >= 4 {
        let tx = conn.unchecked_transaction()?;
        tx.execute_batch(V4)?;
        super::migrate_v4::migrate(&tx)?;
        set_version(&tx, 4)?;
        tx.commit()?;
    }
    if version < 5 && target >= 5 {
        let tx = conn.unchecked_transaction()?;
        tx.execute_batch(V5)?;
        set_version(&tx, 5)?;
        tx.commit()?;
    }
    if version < 6 && target >= 6 {
        let tx = conn.unchecked_transaction()?;
        super::migrate_v6::migrate(&tx)?;
        set_version(&tx, 6)?;
        tx.commit()?;
    }
    if version < 7 && target >= 7 {
        let tx = conn.unchecked_transaction()?;
        super::migrate_v7::migrate(&tx)?;
        set_version(&tx, 7)?;
        tx.commit()?;
    }
    if version < 8 && target >= 8 {
        let tx = conn.unchecked_transaction()?;
        super::migrate_v8::migrate(&tx)?;
        set_version(&tx, 8)?;
        tx.commit()?;
    }
    if version < 9 && target >= 9 {
        let tx = conn.unchecked_transaction()?;
        tx.execute_batch(V9)?;
        set_version(&tx, 9)?;
        tx.commit()?;
    }
    Ok(())
}

fn set_version(tx: &rusqlite::Transaction<'_>, v: i64) -> Result<()> {
    tx.execute(
        "INSERT OR REPLACE INTO meta (key, value) VALUES ('schema_version', ?1)",
        [v.to_string()],
    )?;
    Ok(())
}
